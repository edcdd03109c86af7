#!/bin/sh
# bench/demo.sh [BUILD_DIR] -- what `make demo` runs after building.
#
# Builds nothing.  Creates a namespace test-bed of its own, runs every
# sender mode for a few seconds against bench/receiver (which verifies
# every byte), prints a side-by-side table and writes a plot.
#
#   sender ns  --veth--  receiver ns                      (direct path)
#   sender ns  --veth--  relay ns (bench/impair)  --veth--  receiver ns
#                                                          (only with DEMO_IMPAIR)
#
# Rows: the kernel TCP baseline (bench/kernel_sender) with the sending
# veth's TSO/GSO on, TSO off, and both off; then, when BUILD_DIR/bench/sender
# exists, every mode it lists with `sender --list-modes` (one per line; if
# that fails, the documented set).  A sender run exiting 77 means "mode not
# available here" and is shown as such.  The sender contract (options,
# JSON keys) is in bench/common/README.md.
#
# Environment:
#   DEMO_SECONDS=3        seconds per run
#   DEMO_IMPAIR="..."     also run every mode through the relay with these
#                         `impair relay` options, e.g. "--loss 1 --delay 5"
#   DEMO_MODES="..."      only these sender modes (default: all it lists)
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
NS_S="${TAG}s"
NS_R="${TAG}r"
NS_M="${TAG}m"
SEED=20040601
PIDS=""

say() { printf '%s\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }

if [ "$(id -u)" != 0 ]; then
	say "demo: needs root: it creates network namespaces and veth pairs (ip netns, ip link)," >&2
	say "      changes offloads on its own veths (ethtool) and may attach XDP programs there." >&2
	say "      Run: sudo make demo   (nothing of the host's own network is touched)" >&2
	exit 1
fi
for t in ip ethtool awk sed; do
	command -v "$t" >/dev/null 2>&1 || die "needs '$t' (make deps installs it)"
done
for p in receiver kernel_sender; do
	[ -x "$B/bench/$p" ] || die "$B/bench/$p is missing: run 'make' (or 'make B=$B') first"
done
mkdir -p "$OUT" || die "cannot create $OUT"

cleanup() {
	for p in $PIDS; do
		kill "$p" 2>/dev/null
	done
	for p in $PIDS; do
		wait "$p" 2>/dev/null
	done
	PIDS=""
	for ns in "$NS_S" "$NS_R" "$NS_M"; do
		[ -e "/run/netns/$ns" ] && ip netns del "$ns" 2>/dev/null
	done
	rm -f "$OUT"/.ready.* 2>/dev/null
}
trap cleanup EXIT
trap 'say "demo: interrupted, cleaning up" >&2; cleanup; trap - EXIT; exit 130' INT
trap 'cleanup; trap - EXIT; exit 143' TERM HUP

# ---- test-bed ---------------------------------------------------------------
bed() {
	for ns in "$NS_S" "$NS_R" "$NS_M"; do
		ip netns add "$ns" || return 1
		ip -n "$ns" link set lo up || return 1
	done
	# Direct path: dS (10.78.0.1) -- dR (10.78.0.2); two queues, as the
	# e1000 device model mode uses a queue of its own.
	ip link add dS netns "$NS_S" numtxqueues 2 numrxqueues 2 type veth peer name dR netns "$NS_R" numtxqueues 2 numrxqueues 2 || return 1
	# Relayed path: rS (10.79.0.1) -- mA | relay | mB -- rR (10.79.0.2).
	ip link add rS netns "$NS_S" numtxqueues 2 numrxqueues 2 type veth peer name mA netns "$NS_M" numtxqueues 2 numrxqueues 2 || return 1
	ip link add mB netns "$NS_M" type veth peer name rR netns "$NS_R" || return 1
	ip -n "$NS_S" addr add 10.78.0.1/24 dev dS && ip -n "$NS_R" addr add 10.78.0.2/24 dev dR &&
	ip -n "$NS_S" addr add 10.79.0.1/24 dev rS && ip -n "$NS_R" addr add 10.79.0.2/24 dev rR || return 1
	for i in mA mB; do
		ip netns exec "$NS_M" sh -c "echo 1 > /proc/sys/net/ipv6/conf/$i/disable_ipv6" 2>/dev/null
		ip -n "$NS_M" link set "$i" up || return 1
	done
	for i in dS rS; do ip -n "$NS_S" link set "$i" up || return 1; done
	for i in dR rR; do ip -n "$NS_R" link set "$i" up || return 1; done
	# The relayed path is for per-segment faults: segment before the relay.
	ip netns exec "$NS_S" ethtool -K rS tso off gso off >/dev/null 2>&1
	return 0
}
bed || die "could not create the namespace test-bed"

# jget FILE KEY: value of "KEY": in the last JSON line of FILE (strings unquoted).
jget() {
	[ -s "$1" ] || { printf '%s' "-"; return; }
	v=$(grep '^{' "$1" | tail -n 1 | sed -n "s/.*\"$2\": \(\"[^\"]*\"\|[^,}]*\).*/\1/p" | tr -d '"')
	[ -n "$v" ] && printf '%s' "$v" || printf '%s' "-"
}

wait_file() { # wait_file PATH PID
	n=0
	while [ ! -e "$1" ]; do
		kill -0 "$2" 2>/dev/null || return 1
		n=$((n + 1)); [ $n -gt 500 ] && return 1
		sleep 0.02
	done
	return 0
}

# ---- one run ----------------------------------------------------------------
RUN=0
TSV="$OUT/results.tsv"
JSONL="$OUT/results.jsonl"
printf '# index\tlabel\tgoodput_gbps\tcpu_s_per_gb\tburst\tretrans\tverified\tpath\toffload\tstatus\trx_segs_per_pkt\n' >"$TSV"
: >"$JSONL"

# run_one LABEL PATH(direct|relay) OFFLOAD_TEXT PROG ARGS...
run_one() {
	label=$1; path=$2; offl=$3; shift 3
	RUN=$((RUN + 1))
	port=$((5300 + RUN))
	if [ "$path" = direct ]; then dev=dS; dst=10.78.0.2; src=10.78.0.1
	else dev=rS; dst=10.79.0.2; src=10.79.0.1; fi
	rj="$OUT/run$RUN.receiver.json"; sj="$OUT/run$RUN.sender.json"; se="$OUT/run$RUN.sender.err"
	ready="$OUT/.ready.$RUN"
	rm -f "$ready"
	"$B/bench/receiver" --netns "$NS_R" --once --json --port "$port" --idle-timeout 15 \
		--accept-timeout 30 --ready-file "$ready" --label "$label" >"$rj" 2>"$OUT/run$RUN.receiver.err" &
	rpid=$!
	PIDS="$PIDS $rpid"
	if ! wait_file "$ready" "$rpid"; then
		say "demo: receiver did not start for $label: $(cat "$OUT/run$RUN.receiver.err")" >&2
		return 1
	fi
	# No --dst-mac: the libgso sender asks the kernel for the next hop, as kernel TCP does.
	timeout -k 5 $((SECS + 60)) ip netns exec "$NS_S" "$@" --dev "$dev" --src "$src" --dst "$dst" \
		--port "$port" --time "$SECS" --seed "$SEED" --json >"$sj" 2>"$se"
	src_rc=$?
	if [ $src_rc -ne 0 ]; then
		# A sender that failed or skipped never connected: stop the receiver.
		kill -0 "$rpid" 2>/dev/null && { sleep 1; kill "$rpid" 2>/dev/null; }
	fi
	wait "$rpid" 2>/dev/null
	PIDS=$(printf '%s' "$PIDS" | sed "s/ $rpid\$//; s/ $rpid / /")
	cat "$sj" "$rj" 2>/dev/null | grep '^{' >>"$JSONL"

	if [ $src_rc -eq 77 ]; then
		status="not available here"
		printf '%s\t%s\t-\t-\t-\t-\t-\t%s\t%s\t%s\t-\n' "$RUN" "$label" "$path" "$offl" "$status" >>"$TSV"
		return 0
	fi
	gp=$(jget "$rj" goodput_gbps)
	# A sender with a device model on its own thread reports the host's share apart.
	cpu=$(jget "$sj" host_cpu_s_per_gb)
	[ "$cpu" = "-" ] && cpu=$(jget "$sj" cpu_s_per_gb)
	bm=$(jget "$sj" burst_mean_segs); b99=$(jget "$sj" burst_p99_segs); bmax=$(jget "$sj" burst_max_segs)
	burst="-"
	[ "$bm" != "-" ] && burst=$(printf '%.1f' "$bm")
	[ "$b99" != "-" ] && burst="$burst/$b99"
	[ "$bmax" != "-" ] && burst="$burst/$bmax"
	rt=$(jget "$sj" retrans)
	rst=$(jget "$rj" status); rb=$(jget "$rj" bytes); rv=$(jget "$rj" bytes_verified)
	if [ "$rst" = ok ] && [ "$rb" = "$rv" ] && [ $src_rc -eq 0 ]; then
		ver="yes"
	else
		ver="NO"
	fi
	status="sender exit $src_rc, receiver $rst, $rv of $rb bytes verified"
	[ $src_rc -ne 0 ] && [ -s "$se" ] && status="$status; $(tail -n 1 "$se")"
	rsp=$(jget "$rj" segments_per_packet)
	[ "$rsp" != "-" ] && rsp=$(printf '%.1f' "$rsp")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$RUN" "$label" "$gp" "$cpu" "$burst" "$rt" \
		"$ver" "$path" "$offl" "$status" "$rsp" >>"$TSV"
}

set_offload() { # set_offload DEV tso gso
	ip netns exec "$NS_S" ethtool -K "$1" tso "$2" gso "$3" >/dev/null 2>&1
}

sender_modes() {
	if [ -n "${DEMO_MODES:-}" ]; then printf '%s\n' $DEMO_MODES; return; fi
	m=$("$B/bench/sender" --list-modes 2>/dev/null) && [ -n "$m" ] && { printf '%s\n' "$m"; return; }
	printf '%s\n' software csum multibuf offload-e1000 offload-vnet auto
}

run_all() { # run_all PATH
	p=$1
	d=dS; [ "$p" = relay ] && d=rS
	sfx=""; [ "$p" = relay ] && sfx=" (relay)"
	if [ "$p" = direct ]; then
		set_offload $d on on;   run_one "kernel tso+gso$sfx" "$p" "veth tso on, gso on" "$B/bench/kernel_sender"
		set_offload $d off on;  run_one "kernel gso$sfx" "$p" "veth tso off, gso on" "$B/bench/kernel_sender"
		set_offload $d off off; run_one "kernel no offload$sfx" "$p" "veth tso off, gso off" "$B/bench/kernel_sender"
		set_offload $d on on
	else
		run_one "kernel$sfx" "$p" "veth tso off, gso off" "$B/bench/kernel_sender"
	fi
	if [ -x "$B/bench/sender" ]; then
		for m in $(sender_modes); do
			run_one "libgso $m$sfx" "$p" "$(ip netns exec "$NS_S" ethtool -k $d 2>/dev/null |
				awk '/^tcp-segmentation-offload/{t=$2} /^generic-segmentation-offload/{g=$2}
				     END{printf "veth tso %s, gso %s", t, g}')" "$B/bench/sender" --mode "$m"
		done
	fi
}

say "demo: test-bed ${NS_S} -> ${NS_R} (veth), ${SECS} s per run, stream seed $SEED"
[ -x "$B/bench/sender" ] || say "demo: $B/bench/sender not built yet: kernel TCP baseline only"
run_all direct

RELAY_SETTINGS=""
if [ -n "${DEMO_IMPAIR:-}" ]; then
	iready="$OUT/.ready.relay"
	# shellcheck disable=SC2086
	"$B/bench/impair" relay --netns "$NS_M" --a mA --b mB --json --ready-file "$iready" \
		--seed 1 $DEMO_IMPAIR >"$OUT/relay.json" 2>"$OUT/relay.err" &
	ipid=$!
	PIDS="$PIDS $ipid"
	if wait_file "$iready" "$ipid"; then
		RELAY_SETTINGS=$(sed -n 's/^impair: //p' "$OUT/relay.err" | head -n 1)
		run_all relay
	else
		say "demo: relay did not start: $(cat "$OUT/relay.err")" >&2
	fi
	kill "$ipid" 2>/dev/null
	wait "$ipid" 2>/dev/null
	PIDS=$(printf '%s' "$PIDS" | sed "s/ $ipid\$//; s/ $ipid / /")
	grep '^{' "$OUT/relay.json" >>"$JSONL" 2>/dev/null
fi

# ---- table ------------------------------------------------------------------
say ""
awk -F '\t' -v relay="$RELAY_SETTINGS" '
	/^#/ { next }
	{ rows[++n] = $0 }
	END {
		hdr = sprintf("%-28s %-22s %9s %11s %14s %10s %8s  %s", "mode", "offload", "Gbit/s",
			      "CPU s/GB", "burst segs", "rx seg/pkt", "retrans", "verified")
		print hdr
		gsub(/./, "-", hdr); print hdr
		for (i = 1; i <= n; i++) {
			split(rows[i], f, "\t")
			if (f[8] == "relay" && !shown) {
				printf "through the relay: %s\n", relay
				shown = 1
			}
			if (f[10] == "not available here") {
				printf "%-28s %-22s %9s %11s %14s %10s %8s  %s\n", f[2], f[9], "-", "-", "-", "-", "-", "(not available here)"
				continue
			}
			printf "%-28s %-22s %9s %11s %14s %10s %8s  %s\n", f[2], f[9],
			       (f[3] == "-" ? "-" : sprintf("%.3f", f[3])),
			       (f[4] == "-" ? "-" : sprintf("%.3f", f[4])), f[5], f[11], f[6], f[7]
			if (f[7] != "yes") printf "    ^ %s\n", f[10]
		}
	}' "$TSV"
say ""
say "goodput: receiver's count of verified bytes / time; CPU s/GB: sender process user+sys"
say "(on veth part of the receiver's work runs on the sender's CPU: compare rows, not absolutes);"
say "burst segs: mean[/p99/max] segments per packet handed down (kernel: Tcp.OutSegs/Ip.OutRequests);"
say "rx seg/pkt: segments per packet the receiver's IP layer got (GSO/GRO merging, receiver's view)."
say "results: $TSV, $JSONL"

# ---- plot -------------------------------------------------------------------
if command -v gnuplot >/dev/null 2>&1; then
	terms=$(gnuplot -e 'set terminal' 2>&1 </dev/null)
	if printf '%s' "$terms" | grep -qw pngcairo; then term=pngcairo; ext=png
	elif printf '%s' "$terms" | grep -qw png; then term=png; ext=png
	else term=svg; ext=svg; fi
	plot="$OUT/demo.$ext"
	if gnuplot -e "datafile='$TSV'; outfile='$plot'; term='$term'" "$(dirname "$0")/plot.gp" 2>"$OUT/plot.err"; then
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
