#!/bin/sh
# `make bench`: run every micro-benchmark once, each printing its own
# side-by-side table (bench_aggregation among them: issue 28's policies
# against an aggregating sender device, in virtual time), then bench/bench_relay.sh (libgso vs kernel TCP, BBR
# and CUBIC, through the impairment relay), bench/bench_frame_cost.sh
# (what one frame costs each sender: CPU, syscalls, context switches,
# instructions) and bench/bench_httpd.sh (HTTP file serving, nginx vs
# tools/gsohttpd in each mode: goodput and server CPU per GB) and
# bench/bench_quic.sh (HTTP/3 file serving, ngtcp2's gtlsserver vs
# tools/gsoquicd in each mode) and bench/bench_e2e.sh (the demo's rows,
# libgso in every mode and kernel TCP, in interleaved rounds: medians with
# min-max, the sender's CPU split into process and softirq, ratios to the
# kernel).  BENCH_ARGS is passed to each
# (e.g. BENCH_ARGS=--quick).  A benchmark that cannot run here (one that
# needs root, as non-root) says why and exits 77: a skip, except under
# CI=true, where it is a failure as for the tests.
set -u
B=${1:-build}
status=0

# The verdict on one benchmark from its exit status.
verdict() {
	case "$2" in
	0) ;;
	77) if [ "${CI:-}" = true ]; then
		echo "==== $1 skipped (exit 77), and CI=true makes a skip a failure"; status=1
	    else
		echo "==== $1 skipped (exit 77: it says why above)"
	    fi ;;
	*) echo "==== $1 failed (exit $2)"; status=1 ;;
	esac
}
for b in "$B"/bench/bench_*; do
	[ -x "$b" ] || continue
	echo "==== $(basename "$b") ${BENCH_ARGS:-}"
	# shellcheck disable=SC2086
	case "$(basename "$b")" in
	bench_tso) sh bench/tso_plot.sh "$B" ${BENCH_ARGS:-} ;; # table and plot
	*) "$b" ${BENCH_ARGS:-} ;;
	esac
	verdict "$(basename "$b")" $?
	echo
done
echo "==== bench_relay ${BENCH_ARGS:-}"
# shellcheck disable=SC2086
sh bench/bench_relay.sh "$B" ${BENCH_ARGS:-}
verdict bench_relay $?
echo
echo "==== bench_frame_cost ${BENCH_ARGS:-}"
# shellcheck disable=SC2086
sh bench/bench_frame_cost.sh "$B" ${BENCH_ARGS:-}
verdict bench_frame_cost $?
echo
echo "==== bench_httpd ${BENCH_ARGS:-}"
# shellcheck disable=SC2086
sh bench/bench_httpd.sh "$B" ${BENCH_ARGS:-}
verdict bench_httpd $?
echo
echo "==== bench_quic ${BENCH_ARGS:-}"
# shellcheck disable=SC2086
sh bench/bench_quic.sh "$B" ${BENCH_ARGS:-}
verdict bench_quic $?
echo
echo "==== bench_e2e ${BENCH_ARGS:-}"
# shellcheck disable=SC2086
sh bench/bench_e2e.sh "$B" ${BENCH_ARGS:-}
verdict bench_e2e $?
exit $status
