#!/bin/sh
# `make bench`: run every micro-benchmark once, each printing its own
# side-by-side table, then bench/bench_relay.sh (libgso vs kernel TCP, BBR
# and CUBIC, through the impairment relay) and bench/bench_frame_cost.sh
# (what one frame costs each sender: CPU, syscalls, context switches,
# instructions).  BENCH_ARGS is passed to each
# (e.g. BENCH_ARGS=--quick).  Benchmarks that need root (namespaces,
# AF_XDP) say so and are skipped as non-root.
set -u
B=${1:-build}
status=0
for b in "$B"/bench/bench_*; do
	[ -x "$b" ] || continue
	echo "==== $(basename "$b") ${BENCH_ARGS:-}"
	# shellcheck disable=SC2086
	case "$(basename "$b")" in
	bench_tso) sh bench/tso_plot.sh "$B" ${BENCH_ARGS:-} ;; # table and plot
	*) "$b" ${BENCH_ARGS:-} ;;
	esac || { echo "==== $(basename "$b") failed (exit $?)"; status=1; }
	echo
done
echo "==== bench_relay ${BENCH_ARGS:-}"
# shellcheck disable=SC2086
sh bench/bench_relay.sh "$B" ${BENCH_ARGS:-} || { echo "==== bench_relay failed (exit $?)"; status=1; }
echo
echo "==== bench_frame_cost ${BENCH_ARGS:-}"
# shellcheck disable=SC2086
sh bench/bench_frame_cost.sh "$B" ${BENCH_ARGS:-} || { echo "==== bench_frame_cost failed (exit $?)"; status=1; }
exit $status
