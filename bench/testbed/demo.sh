#!/bin/sh
# bench/testbed/demo.sh [BUILD_DIR] -- what `make demo` runs after building.
#
# Builds nothing.  Creates a namespace test-bed of its own, runs every
# sender mode for a few seconds against bench/receiver (which verifies
# every byte), prints a side-by-side table and writes a plot.  One run per
# row: the figures to quote (interleaved rounds, medians) are
# bench/bench_e2e.sh's, in `make bench`.
#
#   sender ns  --veth--  receiver ns                      (direct path)
#   sender ns  --veth--  relay ns (bench/impair)  --veth--  receiver ns
#                                                          (only with DEMO_IMPAIR)
#
# Rows: the kernel TCP baseline (bench/kernel_sender) with the sending
# veth's TSO/GSO on, TSO off, and both off; then, when BUILD_DIR/bench/sender
# exists, every mode it lists with `sender --list-modes` (one per line; if
# that fails, the documented set).  A sender run exiting 77 means "mode not
# available here" and is shown as such.
#
# Receiver realism: the direct path's rows run once per DEMO_GRO setting of
# the receiving veth's GRO.  Off, every segment goes up the receiver's stack
# on its own; on, the veth gets a NAPI context and merges them as a real
# NIC's driver does (GRO), which is what a receiver usually does.  Each set
# of rows is headed by the receiver's settings in the table; the TSV has
# them per row (receiver, rx_gro), the JSON lines' labels end in "rx gro X".  The sender contract (options,
# JSON keys) is in bench/testbed/README.md.
#
# Like with like: every row runs with the congestion control DEMO_CC names,
# the libgso rows with `sender --cc` and the kernel baselines beside them
# with `kernel_sender --cc` (TCP_CONGESTION), on both paths; the table, the
# TSV and the JSON lines say which.  Several names give a set of rows each.
#
# Environment:
#   DEMO_SECONDS=3        seconds per run
#   DEMO_GRO="off on"     the receiving veth's GRO for the direct path's
#                         rows: one set of rows per word (off, on)
#   DEMO_CC=cubic         congestion control of every row: cubic, bbr or reno,
#                         or a list ("cubic bbr": all rows once per name)
#   DEMO_IMPAIR="..."     also run every mode through the relay with these
#                         `impair relay` options, e.g. "--loss 1 --delay 5"
#   DEMO_MODES="..."      only these sender modes (default: all it lists)
#   DEMO_VM=1             also rows from a QEMU guest over emulated NICs
#                         (bench/testbed/demo_vm.sh; DEMO_VM_NICS="e1000 virtio"),
#                         labelled "(emulated)": emulation figures
#
# Output: BUILD_DIR/demo/results.tsv, results.jsonl, demo.png (or .svg).
# Needs root (namespaces, veth, ethtool).  Never touches host interfaces:
# everything is created inside namespaces named gsod<pid>*, removed on
# exit, Ctrl-C and SIGTERM.
set -u

B=${1:-build}
SECS=${DEMO_SECONDS:-3}
OUT="$B/demo"
TAG="gsod$$"
SEED=20040601
CCS=${DEMO_CC:-cubic}
GROS=${DEMO_GRO:-off on}
# shellcheck source=bench/testbed/common/demobed.sh
. "$(dirname "$0")/common/demobed.sh"

for c in $CCS; do
	case $c in
	cubic | bbr | reno) ;;
	*) die "DEMO_CC: '$c' is not one of cubic, bbr, reno" ;;
	esac
done
[ -n "$GROS" ] || die "DEMO_GRO: empty (give off, on or \"off on\")"
for g in $GROS; do
	case $g in
	off | on) ;;
	*) die "DEMO_GRO: '$g' is not one of off, on" ;;
	esac
done
bed_check_root "make demo" || exit 1
# (TCP_CONGESTION loads a module as root; a missing one fails its kernel rows, which say so.)
bed_setup

sender_modes() {
	if [ -n "${DEMO_MODES:-}" ]; then printf '%s\n' $DEMO_MODES; return; fi
	m=$("$B/bench/sender" --list-modes 2>/dev/null) && [ -n "$m" ] && { printf '%s\n' "$m"; return; }
	printf '%s\n' software csum multibuf offload-e1000 offload-vnet auto
}

run_all() { # run_all PATH CC
	p=$1; cc=$2
	d=dS; [ "$p" = relay ] && d=rS
	sfx=""; [ "$p" = relay ] && sfx=" (relay)"
	if [ "$p" = direct ]; then
		set_offload $d on on;   run_one "kernel tso+gso$sfx" "$p" "veth tso on, gso on" "$cc" "$B/bench/kernel_sender"
		set_offload $d off on;  run_one "kernel gso$sfx" "$p" "veth tso off, gso on" "$cc" "$B/bench/kernel_sender"
		set_offload $d off off; run_one "kernel no offload$sfx" "$p" "veth tso off, gso off" "$cc" "$B/bench/kernel_sender"
		set_offload $d on on
	else
		run_one "kernel$sfx" "$p" "$(offload_text $d)" "$cc" "$B/bench/kernel_sender"
	fi
	if [ -x "$B/bench/sender" ]; then
		for m in $(sender_modes); do
			run_one "libgso $m$sfx" "$p" "$(offload_text $d)" "$cc" "$B/bench/sender" --mode "$m"
		done
	fi
}

say "demo: test-bed ${NS_S} -> ${NS_R} (veth), ${SECS} s per run, stream seed $SEED, congestion control: $CCS, receiver GRO: $GROS"
[ -x "$B/bench/sender" ] || say "demo: $B/bench/sender not built yet: kernel TCP baseline only"
for g in $GROS; do
	set_gro dR "$g" || die "could not turn the receiving veth's GRO $g (ethtool -K dR gro $g)"
	RX_TAG=", rx gro $g"
	for c in $CCS; do
		run_all direct "$c"
	done
done
RX_TAG=""

if [ -n "${DEMO_IMPAIR:-}" ]; then
	# shellcheck disable=SC2086
	if relay_start $DEMO_IMPAIR; then
		for c in $CCS; do
			run_all relay "$c"
		done
		relay_stop
	fi
fi

if [ "${DEMO_VM:-0}" = 1 ]; then
	for c in $CCS; do
		RUN=$(awk -F '\t' '!/^#/ { n = $1 } END { print n + 0 }' "$TSV")
		sh "$(dirname "$0")/demo_vm.sh" "$B" "$SECS" "$c" "$OUT" "$RUN"
		vrc=$?
		[ "$vrc" = 77 ] && { say "demo: DEMO_VM=1: QEMU cannot run here (above): no emulated rows"; break; }
		[ "$vrc" = 0 ] || say "demo: the emulated rows failed (exit $vrc)" >&2
	done
fi

# ---- table ------------------------------------------------------------------
say ""
# A set of rows is headed by its receiver's settings (when they change).
awk -F '\t' -v relay="$RELAY_SETTINGS" '
	/^#/ { next }
	{ rows[++n] = $0 }
	END {
		hdr = sprintf("%-28s %-6s %-22s %9s %11s %14s %10s %8s  %s", "mode", "cc", "offload", "Gbit/s",
			      "CPU s/GB", "burst segs", "rx seg/pkt", "retrans", "verified")
		print hdr
		gsub(/./, "-", hdr); print hdr
		for (i = 1; i <= n; i++) {
			split(rows[i], f, "\t")
			if (f[8] == "relay" && !shown) {
				printf "through the relay: %s\n", relay
				shown = 1
			}
			if (f[14] != rx) {
				printf "receiver: %s\n", f[14]
				rx = f[14]
			}
			if (f[10] == "not available here") {
				printf "%-28s %-6s %-22s %9s %11s %14s %10s %8s  %s\n", f[2], f[12], f[9], "-", "-", "-", "-", "-", "(not available here)"
				continue
			}
			printf "%-28s %-6s %-22s %9s %11s %14s %10s %8s  %s\n", f[2], f[12], f[9],
			       (f[3] == "-" ? "-" : sprintf("%.3f", f[3])),
			       (f[4] == "-" ? "-" : sprintf("%.3f", f[4])), f[5], f[11], f[6], f[7]
			if (f[7] != "yes") printf "    ^ %s\n", f[10]
		}
	}' "$TSV"
say ""
say "cc: the row's congestion control (DEMO_CC), libgso's own or the kernel's TCP_CONGESTION, the same for both;"
say "receiver: each set of rows runs against these settings; gro: the receiving veth's GRO (on: NAPI"
say "and GRO merging, as a NIC's driver does; off: every segment up the stack on its own);"
say "$(sender_text)"
say "goodput: receiver's count of verified bytes / time; CPU s/GB: sender process user+sys"
say "(on veth part of the receiver's work runs on the sender's CPU: compare rows, not absolutes);"
say "burst segs: mean[/p99/max] segments per packet handed down (kernel: Tcp.OutSegs/Ip.OutRequests);"
say "rx seg/pkt: segments per packet the receiver's IP layer got (GSO/GRO merging, receiver's view)."
[ "${DEMO_VM:-0}" = 1 ] && say "vm rows (DEMO_VM=1): a Linux 6.1 guest under QEMU TCG over an emulated NIC; their Gbit/s and CPU s/GB are
emulation figures (every guest instruction emulated, QEMU's own segmentation native): compare modes on one NIC, not with the veth rows."
say "results: $TSV, $JSONL"
say "Each row ran once for ${SECS} s, and one row's goodput moves by 2x between runs here: a quick look, not"
say "figures to quote.  Those come from \`make bench\` (bench/bench_e2e.sh: interleaved rounds, medians with"
say "min-max, the sender's CPU split into process and softirq, each mode's ratios to its kernel row)."

# ---- plot -------------------------------------------------------------------
if command -v gnuplot >/dev/null 2>&1; then
	terms=$(gnuplot -e 'set terminal' 2>&1 </dev/null)
	if printf '%s' "$terms" | grep -qw pngcairo; then term=pngcairo; ext=png
	elif printf '%s' "$terms" | grep -qw png; then term=png; ext=png
	else term=svg; ext=svg; fi
	plot="$OUT/demo.$ext"
	if gnuplot -e "datafile='$TSV'; outfile='$plot'; term='$term'; ccol=12; gcol=15" "$(dirname "$0")/../plot.gp" 2>"$OUT/plot.err"; then
		say "plot: $plot"
	else
		say "demo: gnuplot failed: $(cat "$OUT/plot.err")" >&2
	fi
else
	say "demo: gnuplot not installed (Debian package gnuplot-nox): no plot" >&2
fi

fail=0
awk -F '\t' '!/^#/ && $7 == "NO" { bad = 1 } END { exit bad }' "$TSV" || fail=1
exit $fail
