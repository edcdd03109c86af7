#!/bin/sh
# bench/bench_httpd.sh [BUILD_DIR] [--quick] [--rounds N] [--mib N] [--json] -- run by `make bench`.
#
# HTTP file serving, stock nginx against tools/gsohttpd in each of its
# modes, like with like: the same 1 GiB file (16 MiB with --quick) to the
# same client, curl -o /dev/null, across one veth between two namespaces
# (server 10.80.0.1 on hS, client 10.80.0.2 on hC).  The server is pinned
# to CPU 0, curl to CPU 1.  Rounds are interleaved (every server, then
# every server again; 3 rounds, 1 with --quick), each with the client's
# GRO off and then on (ethtool -K hC gro), a fresh server per download.
#
# Per download: goodput (curl's %{speed_download}) and time (time_total);
# the server's CPU over the download, split into the server process's own
# (utime+stime of it and its children, /proc/PID/stat) and the softirq time
# of CPU 0 (the per-CPU softirq column of /proc/stat; the veth's receive
# side of the server's sends runs there too, and so does anything else of
# the machine's on CPU 0), each in CPU-seconds per 10^9 bytes served.
# Printed: a table of medians with [min-max] per server and GRO setting,
# each row labelled with its congestion control, the server veth's
# offloads (TSO/GSO) and the client's GRO; the per-download lines and the
# summary are in BUILD_DIR/bench/bench_httpd.json (one JSON object a line).
# Speed is never asserted.
#
# Environment: BENCH_HTTPD_MODES (gsohttpd modes, default "software csum
# multibuf offload-vnet auto"), BENCH_HTTPD_CC (reno, cubic, bbr: gsohttpd's
# --cc, and nginx's namespace's net.ipv4.tcp_congestion_control when the
# host allows it there; default: what kernel TCP has, for both).  Each
# row names the congestion control it ran.
#
# Needs root (namespaces, veths); as non-root it says so and exits 0, as it
# does without nginx or gsohttpd (their rows say "not installed"/"not
# built").  A gsohttpd mode that exits 77 is "not available here".  Exit 1
# when a download failed (wrong status or size) or a server did not exit 0
# on SIGTERM.
set -u

B=build
case ${1:-} in
-*) ;;
?*) B=$1; shift ;;
esac
ROUNDS=3
MIB=1024
JSON=0
while [ $# -gt 0 ]; do
	case $1 in
	--quick) ROUNDS=1; MIB=16 ;;
	--rounds) ROUNDS=${2:?}; shift ;;
	--mib) MIB=${2:?}; shift ;;
	--json) JSON=1 ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0 ;;
	*) printf 'bench_httpd: unknown option %s (--quick, --rounds N, --mib N, --json)\n' "$1" >&2; exit 2 ;;
	esac
	shift
done
MODES=${BENCH_HTTPD_MODES:-software csum multibuf offload-vnet auto}
CC=${BENCH_HTTPD_CC:-}
PORT=8080
TAG="gsoh$$"
NS_S="${TAG}s"
NS_C="${TAG}c"
JOUT="$B/bench/bench_httpd.json"
SRV_PID=""
WORK=""

say() { printf '%s\n' "$*"; }

if [ "$(id -u)" != 0 ]; then
	say "bench_httpd: needs root (it creates network namespaces and a veth pair): skipped"
	exit 0
fi
for t in ip ethtool curl taskset awk; do
	if ! command -v "$t" >/dev/null 2>&1; then
		say "bench_httpd: needs '$t' (make deps installs it): skipped"
		exit 0
	fi
done

# shellcheck source=bench/serve_lib.sh
. "$(dirname "$0")/serve_lib.sh"
trap serve_cleanup EXIT
trap 'serve_cleanup; exit 130' INT TERM HUP PIPE

WORK=$(mktemp -d /tmp/gso-bench-httpd-XXXXXX) || exit 1
chmod 755 "$WORK"
mkdir -p "$WORK/www" "$B/bench" || exit 1

if ! serve_bed hS hC 10.80.0 fd80; then
	say "bench_httpd: test-bed setup failed"
	exit 1
fi

# The file: httpprobe gen's pseudo-random bytes (what the tests serve), else /dev/urandom.
FILE="$WORK/www/file"
BYTES=$((MIB * 1048576))
if [ -x "$B/tests/httpprobe" ]; then
	"$B/tests/httpprobe" gen --size "$BYTES" "$FILE" >/dev/null || exit 1
else
	head -c "$BYTES" /dev/urandom >"$FILE" || exit 1
fi

# The congestion control: by default the one kernel TCP (nginx) has in a new
# namespace, for gsohttpd too; asked for, nginx's namespace gets it when the
# kernel lets it (a namespace may set only what the host allows).
KCC=$(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null)
if [ -z "$CC" ]; then
	case $KCC in reno | cubic | bbr) CC=$KCC ;; *) CC=cubic ;; esac
elif ip netns exec "$NS_S" sh -c "echo $CC > /proc/sys/net/ipv4/tcp_congestion_control" 2>/dev/null; then
	KCC=$CC
fi
KCC=$(ip netns exec "$NS_S" cat /proc/sys/net/ipv4/tcp_congestion_control)
OFFL=$(ip netns exec "$NS_S" ethtool -k hS 2>/dev/null |
	awk '/^tcp-segmentation-offload/{t=$2} /^generic-segmentation-offload/{g=$2} END{printf "tso %s, gso %s", t, g}')
HZ=$(getconf CLK_TCK)
if [ "$(nproc)" -ge 2 ]; then SCPU=0 CCPU=1; else SCPU=0 CCPU=0; fi

cat >"$WORK/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
user root;
pid $WORK/ready;
error_log $WORK/error.log info;
events { worker_connections 1024; }
http {
  access_log $WORK/access.log;
  sendfile on;
  tcp_nopush on;
  client_body_temp_path $WORK/body;
  default_type application/octet-stream;
  server {
    listen 10.80.0.1:$PORT;
    root $WORK/www;
  }
}
EOF

# start_server NAME: 0 ready, 77 not available (mode), 1 failed, 3 not installed.
start_server() {
	rm -f "$WORK/ready" "$WORK/srv.json"
	case $1 in
	nginx)
		command -v nginx >/dev/null 2>&1 || return 3
		ip netns exec "$NS_S" taskset -c "$SCPU" nginx -c "$WORK/nginx.conf" -p "$WORK" -e "$WORK/error.log" \
			>"$WORK/srv.out" 2>"$WORK/srv.err" &
		;;
	gsohttpd:*)
		[ -x "$B/tools/gsohttpd" ] || return 3
		ip netns exec "$NS_S" taskset -c "$SCPU" "$B/tools/gsohttpd" --ifname hS --listen 10.80.0.1 --port "$PORT" \
			--root "$WORK/www" --mode "${1#gsohttpd:}" --queues 1 --cc "$CC" --json "$WORK/srv.json" \
			--ready "$WORK/ready" >"$WORK/srv.out" 2>"$WORK/srv.err" &
		;;
	esac
	SRV_PID=$!
	serve_wait_ready "$1" 20
}

# stop_server: SIGTERM, wait; its exit status.
stop_server() {
	kill -TERM "$SRV_PID" 2>/dev/null
	wait "$SRV_PID"
	rc=$?
	SRV_PID=""
	return $rc
}

SERVERS="nginx"
for m in $MODES; do SERVERS="$SERVERS gsohttpd:$m"; done
RAW="$WORK/raw.tsv"
: >"$RAW"
: >"$JOUT"
status=0
say "bench_httpd: $SERVERS; $ROUNDS round(s) of $MIB MiB each to curl (server CPU $SCPU, curl CPU $CCPU),"
say "  client GRO off and on; cc $CC (nginx: kernel $KCC); server veth $OFFL"
for r in $(seq "$ROUNDS"); do
	for gro in off on; do
		ip netns exec "$NS_C" ethtool -K hC gro "$gro" >/dev/null 2>&1
		g=$(ip netns exec "$NS_C" ethtool -k hC 2>/dev/null | awk '/^generic-receive-offload/{print $2}')
		for s in $SERVERS; do
			start_server "$s"
			rc=$?
			case $rc in
			0) ;;
			77) printf '%s\t%s\t%s\tna\n' "$s" "$g" "$r" >>"$RAW"; continue ;;
			3) printf '%s\t%s\t%s\tmissing\n' "$s" "$g" "$r" >>"$RAW"; continue ;;
			*) printf '%s\t%s\t%s\tfailed\n' "$s" "$g" "$r" >>"$RAW"; status=1; continue ;;
			esac
			p0=$(proc_ticks "$SRV_PID"); s0=$(softirq_ticks)
			out=$(ip netns exec "$NS_C" taskset -c "$CCPU" curl -sS -o /dev/null --max-time 300 \
				-w '%{http_code} %{size_download} %{speed_download} %{time_total}' "http://10.80.0.1:$PORT/file" 2>&1)
			p1=$(proc_ticks "$SRV_PID"); s1=$(softirq_ticks)
			stop_server
			src=$?
			# shellcheck disable=SC2086
			set -- $out
			if [ "${1:-}" != 200 ] || [ "${2:-}" != "$BYTES" ]; then
				say "    $s gro $g round $r: download failed: $out"
				printf '%s\t%s\t%s\tfailed\n' "$s" "$g" "$r" >>"$RAW"
				status=1
				continue
			fi
			if [ "$src" != 0 ]; then
				say "    $s gro $g round $r: the server exited $src on SIGTERM"
				status=1
			fi
			cc=$KCC
			case $s in gsohttpd:*) cc=$CC ;; esac
			printf '%s\t%s\t%s\tok\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$g" "$r" "$3" "$4" \
				"$((p1 - p0))" "$((s1 - s0))" "$cc" "$src" >>"$RAW"
		done
	done
done

awk -F '\t' -v hz="$HZ" -v bytes="$BYTES" -v offl="$OFFL" -v jout="$JOUT" -v json="$JSON" -v mib="$MIB" \
	-v rounds="$ROUNDS" -v scpu="$SCPU" -v ccpu="$CCPU" '
	function q(s) { gsub(/"/, "\\\"", s); return "\"" s "\"" }
	# Median and range of the n values in a[1..n] (sorted here).
	function stats(a, n,   i, j, t, m) {
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		m = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		LO = a[1]; HI = a[n]; return m
	}
	{
		k = $1 SUBSEP $2
		if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
		if ($4 != "ok") { st[k] = $4; if ($4 == "failed") failed[k]++; next }
		n = ++cnt[k]
		gb = bytes / 1e9
		gp[k, n] = $5 * 8 / 1e9; tt[k, n] = $6
		pc[k, n] = $7 / hz / gb; sq[k, n] = $8 / hz / gb; cc[k] = $9
		printf "{\"tool\": \"bench_httpd\", \"server\": %s, \"round\": %d, \"cc\": %s, \"offload\": %s, \"rx_gro\": %s, " \
		       "\"bytes\": %d, \"goodput_gbps\": %.3f, \"time_total_s\": %.3f, \"server_cpu_s_per_gb\": %.3f, " \
		       "\"softirq_s_per_gb\": %.3f, \"server_cpu\": %d, \"server_exit\": %d}\n", q($1), $3, q($9), q(offl), q($2), bytes,
		       gp[k, n], tt[k, n], pc[k, n], sq[k, n], scpu, $10 >> jout
		if (json) printf "{\"tool\": \"bench_httpd\", \"server\": %s, \"round\": %d, \"rx_gro\": %s, \"goodput_gbps\": %.3f}\n",
			q($1), $3, q($2), gp[k, n]
	}
	END {
		fmt = "%-22s %-5s %-5s %-16s %-22s %-20s %-22s %-22s\n"
		printf fmt, "server", "cc", "rxgro", "offload", "Gbit/s med [min-max]", "s med [min-max]",
		       "proc CPU s/GB", "softirq CPU" scpu " s/GB"
		for (i = 1; i <= nk; i++) {
			k = keys[i]; split(k, kk, SUBSEP); n = cnt[k]
			if (!n) {
				why = st[k] == "na" ? "not available here (exit 77)" : st[k] == "missing" ? \
				      (kk[1] == "nginx" ? "not installed" : "not built") : "failed"
				printf "%-22s %-5s %-5s %s\n", kk[1], "-", kk[2], why
				continue
			}
			for (j = 1; j <= n; j++) a[j] = gp[k, j]; m1 = stats(a, n); l1 = LO; h1 = HI
			for (j = 1; j <= n; j++) a[j] = tt[k, j]; m2 = stats(a, n); l2 = LO; h2 = HI
			for (j = 1; j <= n; j++) a[j] = pc[k, j]; m3 = stats(a, n); l3 = LO; h3 = HI
			for (j = 1; j <= n; j++) a[j] = sq[k, j]; m4 = stats(a, n); l4 = LO; h4 = HI
			printf fmt, kk[1], cc[k], kk[2], offl, sprintf("%.2f [%.2f-%.2f]", m1, l1, h1),
			       sprintf("%.2f [%.2f-%.2f]", m2, l2, h2), sprintf("%.3f [%.3f-%.3f]", m3, l3, h3),
			       sprintf("%.3f [%.3f-%.3f]", m4, l4, h4)
			if (failed[k]) printf "    ^ %d download(s) failed\n", failed[k]
			line = sprintf("{\"tool\": \"bench_httpd\", \"summary\": true, \"server\": %s, \"cc\": %s, \"offload\": %s, " \
				       "\"rx_gro\": %s, \"mib\": %d, \"downloads\": %d, \"goodput_gbps_median\": %.3f, \"goodput_gbps_min\": %.3f, " \
				       "\"goodput_gbps_max\": %.3f, \"time_total_s_median\": %.3f, \"server_cpu_s_per_gb_median\": %.3f, " \
				       "\"server_cpu_s_per_gb_min\": %.3f, \"server_cpu_s_per_gb_max\": %.3f, \"softirq_s_per_gb_median\": %.3f, " \
				       "\"softirq_s_per_gb_min\": %.3f, \"softirq_s_per_gb_max\": %.3f, \"server_cpu\": %d, \"client_cpu\": %d}",
				       q(kk[1]), q(cc[k]), q(offl), q(kk[2]), mib, n, m1, l1, h1, m2, m3, l3, h3, m4, l4, h4, scpu, ccpu)
			print line >> jout
			if (json) print line
		}
		print ""
		printf "%d MiB per download, %d round(s), rounds interleaved; a fresh server per download.\n", mib, rounds
		print "Gbit/s: curl speed_download; s: curl time_total; proc CPU: the server process (and children) utime+stime"
		printf "over the download; softirq: /proc/stat softirq of CPU %d (the server'"'"'s), incl. the veth receive of its\n", scpu
		print "sends and anything else on that CPU; both per 10^9 bytes.  offload: the server veth hS; rxgro: client veth hC."
	}' "$RAW"
say "results: $JOUT"
exit $status
