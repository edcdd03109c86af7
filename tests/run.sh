#!/bin/sh
# Runs every test of `make check`, in this order:
#   1. a short fuzz smoke run of every fuzz target,
#   2. the unit tests built with ASan + UBSan,
#   3. the unit tests of the port, the engine and the UMEM allocator, and
#      the port driven from two threads (root), built with ThreadSanitizer
#      (build/tsan/tests/unit-tsan; any report fails it),
#   4. the unit tests (build/tests/unit),
#   5. the integration tests (build/tests/integration),
# and ends with one summary line for 4 and 5 together, in Criterion's words.
# Exits non-zero if any step failed.
set -u
B=${B:-build}
FUZZ_SMOKE_SECONDS=${FUZZ_SMOKE_SECONDS:-10}
# Namespaces and veths made by integration tests carry this tag, so that
# anything a crashed test left behind is removed here (ours only).
GSO_TEST_RUN_ID=${GSO_TEST_RUN_ID:-$$}
export GSO_TEST_RUN_ID
status=0
# Each Criterion run also writes a JSON report here, for the summary line.
reports=$(mktemp -d)

cleanup() {
	rm -rf "$reports"
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^gsot${GSO_TEST_RUN_ID}-" || true); do
		ip netns del "$ns" 2>/dev/null || true
	done
}
trap cleanup EXIT INT TERM

for f in "$B"/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	name=$(basename "$f")
	corpus=$(mktemp -d)
	[ -d "tests/fuzz/corpus/$name" ] && cp "tests/fuzz/corpus/$name"/* "$corpus"/ 2>/dev/null
	if "$f" -max_total_time="$FUZZ_SMOKE_SECONDS" -seed=1 -print_final_stats=1 "$corpus" >"$corpus.log" 2>&1; then
		echo "fuzz: $name: ok ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$corpus.log" | awk '{print $2}') runs in ${FUZZ_SMOKE_SECONDS}s)"
	else
		echo "fuzz: $name: FAILED"; tail -40 "$corpus.log"; status=1
	fi
	rm -rf "$corpus" "$corpus.log"
done

echo "== unit tests under ASan+UBSan"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
	"$B/tests/unit-asan" --short-filename || status=1

echo "== threaded tests under TSan"
# The first report ends the run and fails the step (halt_on_error, exit
# 66).  setarch -R turns address randomisation off for it: gcc 12's TSan
# runtime aborts ("unexpected memory mapping") when a kernel randomises
# mmap with more bits than its memory layout allows (vm.mmap_rnd_bits 32,
# as on many 6.x kernels); a personality flag, no privilege needed.
TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:exitcode=66} \
	setarch "$(uname -m)" -R "$B/tsan/tests/unit-tsan" || status=1

echo "== unit tests"
"$B/tests/unit" --short-filename --json="$reports/unit.json" || status=1
echo "== integration tests"
"$B/tests/integration" --short-filename --json="$reports/integration.json" || status=1

# A count from a report's top level (its first lines, before the suites).
# As in Criterion's own line, "failed" includes the crashed ("errored") and
# what ran is what passed or failed.
count() {
	sed -n "/\"test_suites\"/q; s/^ *\"$2\": *\([0-9]*\).*/\1/p" "$reports/$1.json"
}
if [ -s "$reports/unit.json" ] && [ -s "$reports/integration.json" ]; then
	p=$(($(count unit passed) + $(count integration passed)))
	f=$(($(count unit failed) + $(count integration failed)))
	e=$(($(count unit errored) + $(count integration errored)))
	s=$(($(count unit skipped) + $(count integration skipped)))
	echo "== unit + integration: Tested: $((p + f)) | Passing: $p | Failing: $f | Crashing: $e | Skipped: $s"
else
	echo "== unit + integration: no summary (a test binary did not write its report)"
	status=1
fi
exit $status
