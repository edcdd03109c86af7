# bench/testbed/common/demobed.sh -- sourced (not run) by bench/testbed/demo.sh,
# demo_vm.sh, bench/bench_relay.sh, bench_frame_cost.sh, bench_e2e.sh and tests/vm/modes.sh: the demo's namespace test-bed, one verified run
# against bench/receiver, the receiving veth's GRO, and the impairment relay.
#
#   sender ns  --veth dS--dR--  receiver ns                  (direct path)
#   sender ns  --veth rS--mA--  relay ns (bench/impair)  --mB--rR--  receiver ns
#
# The caller sets B (build dir), OUT (output dir), TAG (namespace prefix,
# unique to the process), SECS (seconds per run), SEED, then calls
# bed_check_root WHAT, bed_setup, and run_one per row.  RX_TAG, if the
# caller sets it, is appended to every row's JSON label (the demo: which
# receiver set the row belongs to).  Namespaces,
# children and ready files go on exit, Ctrl-C and SIGTERM (bed_cleanup).
#
# run_one writes one row to $TSV and the sender's and receiver's JSON lines
# to $JSONL; $OUT/run$RUN.{sender,receiver}.json hold the last run's.
# TSV columns (bench/plot.gp reads 2-4, 12):
#   1 index  2 label  3 goodput_gbps  4 cpu_s_per_gb  5 burst  6 retrans
#   7 verified  8 path  9 offload  10 status  11 rx_segs_per_pkt  12 cc
#   13 bytes_verified  14 receiver (its settings)  15 rx_gro (on, off: the
#   receiving veth's GRO when the row ran)

NS_S="${TAG}s"
NS_R="${TAG}r"
NS_M="${TAG}m"
PIDS=""
RUN=0
TSV="$OUT/results.tsv"
JSONL="$OUT/results.jsonl"
RELAY_PID=""
RELAY_SETTINGS=""

say() { printf '%s\n' "$*"; }
die() { printf '%s: %s\n' "${0##*/}" "$*" >&2; exit 1; }

# bed_check_root CMD: exit with advice unless root; check the tools and programs.
bed_check_root() {
	if [ "$(id -u)" != 0 ]; then
		say "${0##*/}: needs root: it creates network namespaces and veth pairs (ip netns, ip link)," >&2
		say "      changes offloads on its own veths (ethtool) and may attach XDP programs there." >&2
		say "      Run: sudo $1   (nothing of the host's own network is touched)" >&2
		return 1
	fi
	for t in ip ethtool awk sed; do
		command -v "$t" >/dev/null 2>&1 || die "needs '$t' (make deps installs it)"
	done
	for p in receiver kernel_sender; do
		[ -x "$B/bench/$p" ] || die "$B/bench/$p is missing: run 'make' (or 'make B=$B') first"
	done
	mkdir -p "$OUT" || die "cannot create $OUT"
	return 0
}

# bed_bench_root NAME: for a benchmark of `make bench`: as non-root, say
# that NAME is skipped and exit 0 (the scripts' way), then bed_check_root.
bed_bench_root() {
	if [ "$(id -u)" != 0 ]; then
		say "$1: needs root (it creates network namespaces, veth pairs and AF_XDP sockets): skipped"
		exit 0
	fi
	bed_check_root "make bench" || exit 1
}

bed_cleanup() {
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

bed_create() {
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
	# Kernel TCP may keep as much unacknowledged as the receiver may buffer
	# (its tcp_rmem max), as the libgso sender may: the default 4 MiB send
	# buffer limit held kernel BBR back for most of an 8 s run at 20 ms.
	rmax=$(ip netns exec "$NS_R" cat /proc/sys/net/ipv4/tcp_rmem | awk '{print $3}')
	[ -n "$rmax" ] && ip netns exec "$NS_S" sh -c "echo '4096 16384 $rmax' > /proc/sys/net/ipv4/tcp_wmem"
	return 0
}

# sender_text: the kernel sender's socket buffer limits (what it may keep in flight).
sender_text() {
	printf 'kernel_sender: tcp_wmem %s (autotuned)' \
		"$(ip netns exec "$NS_S" cat /proc/sys/net/ipv4/tcp_wmem 2>/dev/null | tr -s ' \t' ' ')"
}

bed_setup() {
	trap bed_cleanup EXIT
	trap 'say "${0##*/}: interrupted, cleaning up" >&2; bed_cleanup; trap - EXIT; exit 130' INT
	trap 'bed_cleanup; trap - EXIT; exit 143' TERM HUP
	bed_create || die "could not create the namespace test-bed"
	printf '# index\tlabel\tgoodput_gbps\tcpu_s_per_gb\tburst\tretrans\tverified\tpath\toffload\tstatus\trx_segs_per_pkt\tcc\tbytes_verified\treceiver\trx_gro\n' >"$TSV"
	: >"$JSONL"
}

# jget FILE KEY: value of "KEY": in the last JSON line of FILE (strings
# unquoted).  Top-level keys only: the line is cut at its first nested
# object ("bbr": {...} in the sender's), whose keys repeat top-level names.
jget() {
	[ -s "$1" ] || { printf '%s' "-"; return; }
	v=$(grep '^{' "$1" | tail -n 1 | sed 's/, "[a-z_0-9]*": {[^}]*}//g' |
		sed -n "s/.*\"$2\": \(\"[^\"]*\"\|[^,}]*\).*/\1/p" | tr -d '"')
	[ -n "$v" ] && printf '%s' "$v" || printf '%s' "-"
}

# jobj FILE OBJ KEY: value of "KEY": inside the nested object "OBJ": {...}.
jobj() {
	[ -s "$1" ] || { printf '%s' "-"; return; }
	v=$(grep '^{' "$1" | tail -n 1 | sed -n "s/.*\"$2\": {\([^}]*\)}.*/\1/p" |
		sed -n "s/.*\"$3\": \(\"[^\"]*\"\|[^,}]*\).*/\1/p" | tr -d '"')
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

set_offload() { # set_offload DEV tso gso
	ip netns exec "$NS_S" ethtool -K "$1" tso "$2" gso "$3" >/dev/null 2>&1
}

# offload_text DEV: the sending veth's offloads as they are now.
offload_text() {
	ip netns exec "$NS_S" ethtool -k "$1" 2>/dev/null |
		awk '/^tcp-segmentation-offload/{t=$2} /^generic-segmentation-offload/{g=$2} /^tx-checksumming/{c=$2}
		     END{printf "veth tso %s, gso %s", t, g; if (c == "off") printf ", csum off"}'
}

# set_gro DEV on|off: the receiving veth's GRO; 1 if it did not take.  On a
# veth, GRO on also gives it a NAPI context of its own: frames from the peer
# are queued and merged there, as a NIC's driver does, instead of going
# straight up the stack one by one.
set_gro() {
	ip netns exec "$NS_R" ethtool -K "$1" gro "$2" >/dev/null 2>&1
	[ "$(rx_gro "$1")" = "$2" ]
}

# rx_gro DEV: the receiving veth's GRO as it is now (on, off; ? if unknown).
rx_gro() {
	g=$(ip netns exec "$NS_R" ethtool -k "$1" 2>/dev/null | awk '/^generic-receive-offload/{print $2}')
	printf '%s' "${g:-?}"
}

# Receiver beds (bench_e2e --rx-bed): where the receiving veth's stack work
# runs.  On a plain veth pair (direct) the peer's receive runs on the
# sender's CPU: veth_xmit hands the frame to netif_rx (backlog) or to the
# veth's NAPI, both raised on the CPU that sent, so the sender's CPU is
# charged for the receiver.  The other beds put it on CPU RX_CPU, batched,
# as a NIC's interrupt on another core would:
#   napi-thread  bench/testbed/rxbed's XDP_PASS program on the receiving
#                veth (with an XDP program, veth_xmit queues every frame to
#                the veth's NAPI, whatever the sender's TSO: without one it
#                has NAPI only with GRO on, and then only for frames from a
#                device without TSO or with destructor sock_wfree, i.e. not
#                kernel TCP's, AF_XDP's nor the TX ring's), NAPI threaded
#                (/sys/class/net/DEV/threaded) and its kthreads
#                (napi/DEV-ID) pinned to RX_CPU.  The sender's CPU enqueues
#                to the veth's ring and wakes the kthread once per batch.
#   cpumap       rxbed's program redirecting every frame to a cpumap entry
#                for RX_CPU: the sender's CPU runs the veth's NAPI poll and
#                the program, the cpumap kthread builds the skbs in batches
#                and runs GRO and the stack on RX_CPU.  An xdp_frame keeps
#                no checksum state: the skb the cpumap builds is
#                CHECKSUM_NONE, so a frame sent checksum-partial (kernel
#                TCP on a veth with tx-checksumming, AF_PACKET's vnet
#                NEEDS_CSUM) arrives with only its pseudo-header sum and is
#                dropped (TcpInCsumErrors; the SYN already).  This bed turns
#                the sending veth's tx-checksumming off (and with it SG,
#                GSO: `ethtool -K dS tx off`): every row then computes its
#                checksums in software, as for a NIC without offloads.
# With an XDP program on the receiving veth the kernel turns the sending
# veth's TSO off (veth_xdp_set: peer->hw_features &= ~NETIF_F_GSO_SOFTWARE;
# `ethtool -K dS tso on` no longer takes): "kernel tso+gso" is then kernel
# GSO (the 64 KB skb is cut on the sender's CPU in dev_queue_xmit), and
# offload_text says so in every row.
RX_BED=direct
RX_BED_CPU=""

# rx_bed_set BED DEV CPU: make DEV (in the receiver's namespace) the
# receiving veth of bed BED (direct, napi-thread, cpumap) with its work on
# CPU; 1 if it did not take.  Call again after set_gro (a GRO change may
# re-create the veth's NAPI and its kthreads).
rx_bed_set() {
	ip netns exec "$NS_R" "$B/bench/rxbed" --dev "$2" off 2>/dev/null
	ip netns exec "$NS_R" sh -c "echo 0 > /sys/class/net/$2/threaded" 2>/dev/null
	rb_tx=on
	[ "$1" = cpumap ] && rb_tx=off
	# The sending veth is the receiving one's peer in the sender's namespace.
	case $2 in dR) rb_peer=dS ;; *) rb_peer="" ;; esac
	[ -n "$rb_peer" ] && ip netns exec "$NS_S" ethtool -K "$rb_peer" tx "$rb_tx" sg "$rb_tx" >/dev/null 2>&1
	case $1 in
	direct) ;;
	napi-thread)
		ip netns exec "$NS_R" "$B/bench/rxbed" --dev "$2" pass || return 1
		ip netns exec "$NS_R" sh -c "echo 1 > /sys/class/net/$2/threaded" || return 1
		rb_pids=$(ps -e -o pid= -o comm= | awk -v d="napi/$2-" 'index($2, d) == 1 { print $1 }')
		[ -n "$rb_pids" ] || return 1
		for p in $rb_pids; do taskset -p -c "$3" "$p" >/dev/null || return 1; done ;;
	cpumap)
		ip netns exec "$NS_R" "$B/bench/rxbed" --dev "$2" cpumap --cpu "$3" || return 1 ;;
	*) return 1 ;;
	esac
	# Not threaded, once more now that the NAPI the program brings is there:
	# with no NAPI (GRO off, no program) the write above does not take, and
	# a NAPI made later would inherit the device's threaded setting.
	if [ "$1" != napi-thread ]; then
		ip netns exec "$NS_R" sh -c "echo 0 > /sys/class/net/$2/threaded" 2>/dev/null
	fi
	RX_BED=$1 RX_BED_CPU=$3
	return 0
}

# receiver_text DEV: what the receiving side runs with (its veth's GRO, its socket buffers).
receiver_text() {
	gro=$(rx_gro "$1")
	rmem=$(ip netns exec "$NS_R" cat /proc/sys/net/ipv4/tcp_rmem 2>/dev/null | tr -s ' \t' ' ')
	printf 'bench/receiver, %s gro %s, tcp_rmem %s' "$1" "${gro:-?}" "${rmem:-?}"
	[ "$RX_BED" = direct ] || printf ', rx bed %s on CPU %s' "$RX_BED" "$RX_BED_CPU"
}

# run_one LABEL PATH(direct|relay) OFFLOAD_TEXT CC PROG ARGS...
# CC (reno|cubic|bbr) goes to PROG as --cc: TCP_CONGESTION for kernel_sender.
run_one() {
	label=$1; path=$2; offl=$3; cc=$4; shift 4
	RUN=$((RUN + 1))
	port=$((5300 + RUN))
	if [ "$path" = direct ]; then dev=dS; rdev=dR; dst=10.78.0.2; src=10.78.0.1
	else dev=rS; rdev=rR; dst=10.79.0.2; src=10.79.0.1; fi
	rj="$OUT/run$RUN.receiver.json"; sj="$OUT/run$RUN.sender.json"; se="$OUT/run$RUN.sender.err"
	ready="$OUT/.ready.$RUN"
	rx=$(receiver_text "$rdev"); rgro=$(rx_gro "$rdev")
	rm -f "$ready"
	"$B/bench/receiver" --netns "$NS_R" --once --json --port "$port" --idle-timeout 15 \
		--accept-timeout 30 --ready-file "$ready" --label "$label, $cc${RX_TAG:-}" >"$rj" 2>"$OUT/run$RUN.receiver.err" &
	rpid=$!
	PIDS="$PIDS $rpid"
	if ! wait_file "$ready" "$rpid"; then
		say "${0##*/}: receiver did not start for $label: $(cat "$OUT/run$RUN.receiver.err")" >&2
		return 1
	fi
	# No --dst-mac: the libgso sender asks the kernel for the next hop, as kernel TCP does.
	timeout -k 5 $((SECS + 60)) ip netns exec "$NS_S" "$@" --dev "$dev" --src "$src" --dst "$dst" \
		--port "$port" --time "$SECS" --seed "$SEED" --cc "$cc" --label "$label, $cc${RX_TAG:-}" --json >"$sj" 2>"$se"
	src_rc=$?
	if [ $src_rc -ne 0 ]; then
		# A sender that failed or skipped never connected: stop the receiver.
		kill -0 "$rpid" 2>/dev/null && { sleep 1; kill "$rpid" 2>/dev/null; }
	fi
	wait "$rpid" 2>/dev/null
	PIDS=$(printf '%s' "$PIDS" | sed "s/ $rpid\$//; s/ $rpid / /")
	bed_row "$label" "$path" "$offl" "$cc" "$rx" "$rgro" "$sj" "$rj" "$se" "$src_rc"
}

# bed_row LABEL PATH OFFLOAD CC RECEIVER RX_GRO SENDER_JSON RECEIVER_JSON
# SENDER_ERR SENDER_EXIT: row $RUN of $TSV from one run's results, and their
# JSON lines to $JSONL (run_one's, and bench/testbed/demo_vm.sh's from a guest).
bed_row() {
	label=$1 path=$2 offl=$3 cc=$4 rx=$5 rgro=$6 sj=$7 rj=$8 se=$9 src_rc=${10}
	cat "$sj" "$rj" 2>/dev/null | grep '^{' >>"$JSONL"

	if [ "$src_rc" = 77 ]; then
		status="not available here"
		printf '%s\t%s\t-\t-\t-\t-\t-\t%s\t%s\t%s\t-\t%s\t-\t%s\t%s\n' "$RUN" "$label" "$path" "$offl" \
			"$status" "$cc" "$rx" "$rgro" >>"$TSV"
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
	# The sender says which congestion control it ran; a mismatch would be a bench bug.
	scc=$(jget "$sj" cc)
	rst=$(jget "$rj" status); rb=$(jget "$rj" bytes); rv=$(jget "$rj" bytes_verified)
	if [ "$rst" = ok ] && [ "$rb" = "$rv" ] && [ "$src_rc" = 0 ] && [ "$scc" = "$cc" ]; then
		ver="yes"
	else
		ver="NO"
	fi
	status="sender exit $src_rc, cc $scc, receiver $rst, $rv of $rb bytes verified"
	[ "$src_rc" != 0 ] && [ -s "$se" ] && status="$status; $(tail -n 1 "$se")"
	rsp=$(jget "$rj" segments_per_packet)
	[ "$rsp" != "-" ] && rsp=$(printf '%.1f' "$rsp")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$RUN" "$label" "$gp" "$cpu" "$burst" \
		"$rt" "$ver" "$path" "$offl" "$status" "$rsp" "$cc" "$rv" "$rx" "$rgro" >>"$TSV"
}

# relay_start ARGS...: bench/impair relay between mA and mB with these
# faults; sets RELAY_SETTINGS (its own description of them).  1 if it failed.
relay_start() {
	iready="$OUT/.ready.relay"
	rm -f "$iready"
	"$B/bench/impair" relay --netns "$NS_M" --a mA --b mB --json --ready-file "$iready" \
		--seed 1 "$@" >"$OUT/relay.json" 2>"$OUT/relay.err" &
	RELAY_PID=$!
	PIDS="$PIDS $RELAY_PID"
	if wait_file "$iready" "$RELAY_PID"; then
		RELAY_SETTINGS=$(sed -n 's/^impair: //p' "$OUT/relay.err" | head -n 1)
		return 0
	fi
	say "${0##*/}: relay did not start: $(cat "$OUT/relay.err")" >&2
	relay_stop
	return 1
}

# relay_stop: stop the relay; its JSON report goes to $JSONL.
relay_stop() {
	[ -n "$RELAY_PID" ] || return 0
	kill "$RELAY_PID" 2>/dev/null
	wait "$RELAY_PID" 2>/dev/null
	PIDS=$(printf '%s' "$PIDS" | sed "s/ $RELAY_PID\$//; s/ $RELAY_PID / /")
	RELAY_PID=""
	grep '^{' "$OUT/relay.json" >>"$JSONL" 2>/dev/null
}
