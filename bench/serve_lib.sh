# bench/serve_lib.sh -- sourced by bench/bench_httpd.sh and bench/bench_quic.sh:
# what a file-serving benchmark needs around its server.  The caller sets
# NS_S and NS_C (the namespaces), WORK (its scratch directory), SRV_PID
# (the server, "" when none) and SCPU (the server's CPU).
# shellcheck shell=sh

# Kill the server and its children (nginx's workers, strace's tracee),
# remove the namespaces and the scratch directory.  For the EXIT and
# signal traps.
# shellcheck disable=SC2317 # called by the traps
serve_cleanup() {
	if [ -n "$SRV_PID" ]; then
		# shellcheck disable=SC2013 # one line of PIDs
		for c in $(cat "/proc/$SRV_PID/task/$SRV_PID/children" 2>/dev/null); do
			kill -9 "$c" 2>/dev/null
		done
		kill -9 "$SRV_PID" 2>/dev/null
		wait "$SRV_PID" 2>/dev/null
		SRV_PID=""
	fi
	for ns in "$NS_S" "$NS_C"; do
		[ -e "/run/netns/$ns" ] && ip netns del "$ns" 2>/dev/null
	done
	[ -n "$WORK" ] && rm -rf "$WORK"
	WORK=""
}

# serve_bed IF_S IF_C PREFIX4 [PREFIX6]: namespaces NS_S and NS_C joined by
# a veth IF_S--IF_C, PREFIX4.1/24 and .2 (and PREFIX6::1/64 and ::2).
serve_bed() {
	ip netns add "$NS_S" && ip netns add "$NS_C" &&
		ip -n "$NS_S" link set lo up && ip -n "$NS_C" link set lo up &&
		ip link add "$1" netns "$NS_S" type veth peer name "$2" netns "$NS_C" &&
		ip -n "$NS_S" addr add "$3.1/24" dev "$1" && ip -n "$NS_C" addr add "$3.2/24" dev "$2" &&
		{ [ -z "${4:-}" ] || { ip -n "$NS_S" addr add "$4::1/64" dev "$1" nodad &&
			ip -n "$NS_C" addr add "$4::2/64" dev "$2" nodad; }; } &&
		ip -n "$NS_S" link set "$1" up && ip -n "$NS_C" link set "$2" up
}

# CPU ticks (utime+stime) of a process and its children.
proc_ticks() {
	t=0
	for p in "$1" $(cat "/proc/$1/task/$1/children" 2>/dev/null); do
		# Fields after the ")" of comm: state is 1, utime 12, stime 13.
		v=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{print $12 + $13}')
		t=$((t + ${v:-0}))
	done
	echo "$t"
}

# System-time ticks (stime) of a process.
proc_stime() {
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $13}'
}

# Softirq ticks of the server's CPU.
softirq_ticks() {
	awk -v c="cpu$SCPU" '$1 == c {print $8}' /proc/stat
}

# serve_wait_ready NAME SECONDS: wait for $WORK/ready while SRV_PID lives.
# 0 ready; 77 the server exited 77 (mode not available); 1 it exited
# otherwise (its last stderr lines shown) or was not ready in time.
serve_wait_ready() {
	i=0
	while [ ! -e "$WORK/ready" ]; do
		if ! kill -0 "$SRV_PID" 2>/dev/null; then
			wait "$SRV_PID"
			rc=$?
			SRV_PID=""
			[ "$rc" = 77 ] && return 77
			sed 's/^/    server: /' "$WORK/srv.err" | tail -n 5
			return 1
		fi
		i=$((i + 1))
		if [ "$i" -gt $(($2 * 20)) ]; then
			printf '    %s: not ready in %s s\n' "$1" "$2"
			return 1
		fi
		sleep 0.05
	done
	return 0
}
