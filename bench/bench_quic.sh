#!/bin/sh
# bench/bench_quic.sh [BUILD_DIR] [--quick] [--rounds N] [--mib N] [--json] [--profile] -- run by `make bench`.
#
# HTTP/3 file serving, ngtcp2's own server (gtlsserver, package
# ngtcp2-server: sendmsg with UDP_SEGMENT on a kernel socket) against
# tools/gsoquicd (the same ngtcp2 and GnuTLS, every datagram through
# libgso) in each of its modes, like with like: the same 1 GiB file (16 MiB
# with --quick) to the same client, Debian's gtlsclient (package
# ngtcp2-client) with its output dropped, across one veth between two
# namespaces (server 10.81.0.1 on qS, client 10.81.0.2 on qC).  Server
# pinned to CPU 0, client to CPU 1.  Rounds are interleaved (every server,
# then every server again; 3 rounds, 1 with --quick), a fresh server per
# download.  Both servers use ngtcp2's CUBIC (its default) and the
# client's veth keeps its GRO setting (printed).
#
# Per download: goodput (file bytes over the client's wall time, the
# handshake included); the server's CPU over it, the process's own
# (utime+stime, /proc/PID/stat) and the softirq time of CPU 0 (/proc/stat:
# the veth's receive of the server's sends runs there, and anything else
# of CPU 0), in CPU-seconds per 10^9 bytes; the datagrams the client's
# namespace received (Udp InDatagrams) per server send: per super-segment
# for gsoquicd (its --json), per sendmsg for gtlsserver (one extra
# download under strace -c, when strace is installed); and, for gsoquicd,
# how far from ngtcp2's schedule its datagrams left, early or late (--json
# departure_error_ns, median and p99).  A table of medians [min-max] per server; the per-download
# lines and the summaries in BUILD_DIR/bench/bench_quic.json.  Speed is
# never asserted.
#
# --profile: one download per gsoquicd mode under valgrind --tool=callgrind
# (32 MiB), and the server's user-space instructions split by where they
# run: libgso, the program, ngtcp2, nghttp3, GnuTLS with its crypto
# (nettle, hogweed, gmp), libc, the loader.  The kernel's share of the
# server's CPU (stime over utime+stime) is the table's sys% column.
#
# Environment: BENCH_QUIC_MODES (default "kernel software csum multibuf
# offload-vnet auto"; kernel: gsoquicd on a kernel UDP socket, the same
# QUIC code without libgso; MODE/rate runs that mode with --pacing rate
# instead of the default edt, e.g. "auto auto/rate").  Needs root; as non-root, or without gtlsclient
# or gsoquicd, it says so and exits 0 (rows "not installed" / "not built").
# Exit 1 when a download failed or a server did not exit 0 on SIGTERM.
set -u

B=build
case ${1:-} in
-*) ;;
?*) B=$1; shift ;;
esac
ROUNDS=3
MIB=1024
JSON=0
PROFILE=0
while [ $# -gt 0 ]; do
	case $1 in
	--quick) ROUNDS=1; MIB=16 ;;
	--rounds) ROUNDS=${2:?}; shift ;;
	--mib) MIB=${2:?}; shift ;;
	--json) JSON=1 ;;
	--profile) PROFILE=1 ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0 ;;
	*) printf 'bench_quic: unknown option %s (--quick, --rounds N, --mib N, --json, --profile)\n' "$1" >&2; exit 2 ;;
	esac
	shift
done
MODES=${BENCH_QUIC_MODES:-kernel software csum multibuf offload-vnet auto}
PORT=4433
TAG="gsoq$$"
NS_S="${TAG}s"
NS_C="${TAG}c"
JOUT="$B/bench/bench_quic.json"
SRV_PID=""
SRV_SIG=TERM
WORK=""
QUICD="$B/tools/gsoquicd"

say() { printf '%s\n' "$*"; }

if [ "$(id -u)" != 0 ]; then
	say "bench_quic: needs root (it creates network namespaces and a veth pair): skipped"
	exit 0
fi
for t in ip ethtool taskset awk openssl gtlsclient; do
	if ! command -v "$t" >/dev/null 2>&1; then
		say "bench_quic: needs '$t' (make deps installs it): skipped"
		exit 0
	fi
done

# shellcheck source=bench/serve_lib.sh
. "$(dirname "$0")/serve_lib.sh"
trap serve_cleanup EXIT
trap 'serve_cleanup; exit 130' INT TERM HUP PIPE

WORK=$(mktemp -d /tmp/gso-bench-quic-XXXXXX) || exit 1
chmod 755 "$WORK"
mkdir -p "$WORK/www" "$B/bench" || exit 1

if ! serve_bed qS qC 10.81.0; then
	say "bench_quic: test-bed setup failed"
	exit 1
fi
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WORK/key.pem" \
	-out "$WORK/cert.pem" -days 2 -subj /CN=bench.quic >/dev/null 2>&1 || { say "bench_quic: openssl failed"; exit 1; }

FILE="$WORK/www/file"
BYTES=$((MIB * 1048576))
if [ -x "$B/tests/httpprobe" ]; then
	"$B/tests/httpprobe" gen --size "$BYTES" "$FILE" >/dev/null || exit 1
else
	head -c "$BYTES" /dev/urandom >"$FILE" || exit 1
fi
OFFL=$(ip netns exec "$NS_S" ethtool -k qS 2>/dev/null |
	awk '/^tx-udp-segmentation/{u=$2} /^generic-segmentation-offload/{g=$2} END{printf "udp-seg %s, gso %s", u, g}')
GRO=$(ip netns exec "$NS_C" ethtool -k qC 2>/dev/null | awk '/^generic-receive-offload/{print $2}')
HZ=$(getconf CLK_TCK)
if [ "$(nproc)" -ge 2 ]; then SCPU=0 CCPU=1; else SCPU=0 CCPU=0; fi

client_dgrams() {
	# shellcheck disable=SC2016 # awk's own $2
	ip netns exec "$NS_C" awk '/^Udp:/ {n++; if (n == 2) print $2}' /proc/net/snmp
}
# A number from gsoquicd's --json report.
jnum() {
	grep -o "\"$1\": *[-0-9.e+]*" "$2" 2>/dev/null | head -n 1 | sed 's/.*: *//'
}
# A number of the report's "departure_error_ns" object (|left - ngtcp2's schedule|), in us.
jdep_us() {
	tr -d '\n' <"$1" 2>/dev/null | sed -n 's/.*"departure_error_ns": *{\([^}]*\)}.*/\1/p' |
		grep -o "\"$2\": *[0-9]*" | sed 's/.*: *//' | awk '{printf "%.1f", $1 / 1000}'
}

# start_server NAME [WRAPPER...]: 0 ready, 77 not available (mode), 1 failed, 3 not installed.
start_server() {
	s=$1
	shift
	rm -f "$WORK/ready" "$WORK/srv.json"
	case $s in
	gtlsserver)
		command -v gtlsserver >/dev/null 2>&1 || return 3
		SRV_SIG=INT # it ends cleanly (exit 0) on SIGINT; SIGTERM kills it
		ip netns exec "$NS_S" taskset -c "$SCPU" "$@" gtlsserver -q -d "$WORK/www" 10.81.0.1 "$PORT" \
			"$WORK/key.pem" "$WORK/cert.pem" >"$WORK/srv.out" 2>"$WORK/srv.err" &
		SRV_PID=$!
		# It says nothing when ready: wait for its socket.
		i=0
		# shellcheck disable=SC2016 # awk's own $2
		until ip netns exec "$NS_S" awk -v p="$(printf ':%04X' "$PORT")" 'index($2, p) {f=1} END{exit !f}' \
			/proc/net/udp 2>/dev/null; do
			i=$((i + 1))
			if [ "$i" -gt 400 ] || ! kill -0 "$SRV_PID" 2>/dev/null; then
				sed 's/^/    server: /' "$WORK/srv.err" | tail -n 5
				return 1
			fi
			sleep 0.05
		done
		return 0
		;;
	gsoquicd:*)
		[ -x "$QUICD" ] || return 3
		SRV_SIG=TERM
		m=${s#gsoquicd:}
		case $m in */*) pacing=${m#*/} m=${m%/*} ;; *) pacing=edt ;; esac
		ip netns exec "$NS_S" taskset -c "$SCPU" "$@" "$QUICD" --ifname qS --listen 10.81.0.1 --port "$PORT" \
			--root "$WORK/www" --key "$WORK/key.pem" --cert "$WORK/cert.pem" --mode "$m" --pacing "$pacing" \
			--json "$WORK/srv.json" --ready "$WORK/ready" >"$WORK/srv.out" 2>"$WORK/srv.err" &
		;;
	esac
	SRV_PID=$!
	serve_wait_ready "$s" 60
}

stop_server() {
	# Under strace the server is strace's child: it gets the signal itself (strace would only detach).
	kids=$(cat "/proc/$SRV_PID/task/$SRV_PID/children" 2>/dev/null)
	if [ -n "$kids" ]; then
		# shellcheck disable=SC2086
		kill -"$SRV_SIG" $kids 2>/dev/null
		sleep 0.5
	fi
	kill -"$SRV_SIG" "$SRV_PID" 2>/dev/null
	wait "$SRV_PID"
	rc=$?
	SRV_PID=""
	return $rc
}

# One download; prints "seconds rc".
fetch() {
	t0=$(date +%s.%N)
	ip netns exec "$NS_C" taskset -c "$CCPU" timeout 600 gtlsclient -q --no-quic-dump --no-http-dump \
		--exit-on-all-streams-close 10.81.0.1 "$PORT" "https://10.81.0.1:$PORT/file" >"$WORK/cl.out" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	echo "$t0 $t1 $rc" | awk '{printf "%.6f %d\n", $2 - $1, $3}'
}

SERVERS="gtlsserver"
for m in $MODES; do SERVERS="$SERVERS gsoquicd:$m"; done
RAW="$WORK/raw.tsv"
: >"$RAW"
: >"$JOUT"
status=0
say "bench_quic: $SERVERS; $ROUNDS round(s) of $MIB MiB each to gtlsclient (server CPU $SCPU, client CPU $CCPU),"
say "  ngtcp2 cubic both; server veth $OFFL; client veth gro $GRO"

# gtlsserver's datagrams per sendmsg: once, under strace (not timed).
GT_PER_CALL=""
if command -v strace >/dev/null 2>&1 && command -v gtlsserver >/dev/null 2>&1; then
	if start_server gtlsserver strace -f -qq -c -o "$WORK/strace.out" -e trace=sendmsg,sendmmsg,sendto; then
		d0=$(client_dgrams)
		fetch >/dev/null
		d1=$(client_dgrams)
		stop_server
		calls=$(awk '$NF ~ /^send/ {c += $4} END{print c + 0}' "$WORK/strace.out")
		[ "${calls:-0}" -gt 0 ] && GT_PER_CALL=$(awk -v d=$((d1 - d0)) -v c="$calls" 'BEGIN{printf "%.1f", d / c}')
	fi
fi

for r in $(seq "$ROUNDS"); do
	for s in $SERVERS; do
		start_server "$s"
		rc=$?
		case $rc in
		0) ;;
		77) printf '%s\t%s\tna\n' "$s" "$r" >>"$RAW"; continue ;;
		3) printf '%s\t%s\tmissing\n' "$s" "$r" >>"$RAW"; continue ;;
		*) printf '%s\t%s\tfailed\n' "$s" "$r" >>"$RAW"; status=1; continue ;;
		esac
		p0=$(proc_ticks "$SRV_PID"); k0=$(proc_stime "$SRV_PID"); s0=$(softirq_ticks); d0=$(client_dgrams)
		# shellcheck disable=SC2046
		set -- $(fetch)
		secs=$1 crc=$2
		p1=$(proc_ticks "$SRV_PID"); k1=$(proc_stime "$SRV_PID"); s1=$(softirq_ticks); d1=$(client_dgrams)
		stop_server
		src=$?
		if [ "$crc" != 0 ]; then
			say "    $s round $r: gtlsclient exit $crc: $(tail -n 3 "$WORK/cl.out" | tr '\n' ' ')"
			printf '%s\t%s\tfailed\n' "$s" "$r" >>"$RAW"
			status=1
			continue
		fi
		if [ "$src" != 0 ]; then
			say "    $s round $r: the server exited $src on SIGTERM"
			status=1
		fi
		per=$GT_PER_CALL late50="" late99=""
		case $s in
		gsoquicd:*)
			sup=$(jnum supers_sent "$WORK/srv.json")
			per=$(awk -v d=$((d1 - d0)) -v s="${sup:-0}" 'BEGIN{if (s > 0) printf "%.1f", d / s}')
			late50=$(jdep_us "$WORK/srv.json" median)
			late99=$(jdep_us "$WORK/srv.json" p99)
			;;
		esac
		printf '%s\t%s\tok\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$r" "$secs" "$((p1 - p0))" "$((s1 - s0))" \
			"$((d1 - d0))" "${per:--}" "${late50:--}" "${late99:--}" "$src" "$((k1 - k0))" >>"$RAW"
	done
done

awk -F '\t' -v hz="$HZ" -v bytes="$BYTES" -v offl="$OFFL" -v gro="$GRO" -v jout="$JOUT" -v json="$JSON" \
	-v mib="$MIB" -v rounds="$ROUNDS" -v scpu="$SCPU" -v ccpu="$CCPU" '
	function q(s) { gsub(/"/, "\\\"", s); return "\"" s "\"" }
	function stats(a, n,   i, j, t, m) {
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		m = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		LO = a[1]; HI = a[n]; return m
	}
	function opt(v) { return v == "-" ? "null" : v }
	{
		k = $1
		if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
		if ($3 != "ok") { st[k] = $3; if ($3 == "failed") failed[k]++; next }
		n = ++cnt[k]
		gb = bytes / 1e9
		gp[k, n] = bytes * 8 / $4 / 1e9; pc[k, n] = $5 / hz / gb; sq[k, n] = $6 / hz / gb
		sy[k, n] = $5 ? 100 * $12 / $5 : 0
		per[k] = $8; l50[k, n] = $9; l99[k, n] = $10
		printf "{\"tool\": \"bench_quic\", \"server\": %s, \"round\": %d, \"cc\": \"cubic (ngtcp2)\", \"offload\": %s, " \
		       "\"rx_gro\": %s, \"bytes\": %d, \"goodput_gbps\": %.3f, \"time_s\": %.3f, \"server_cpu_s_per_gb\": %.3f, " \
		       "\"softirq_s_per_gb\": %.3f, \"client_datagrams\": %d, \"datagrams_per_send\": %s, " \
		       "\"depart_err_p50_us\": %s, \"depart_err_p99_us\": %s, \"server_sys_pct\": %.1f, \"server_exit\": %d}\n", q($1), $2,
		       q(offl), q(gro), bytes, gp[k, n], $4, pc[k, n], sq[k, n], $7, opt($8), opt($9), opt($10), sy[k, n], $11 >> jout
	}
	END {
		fmt = "%-22s %-20s %-22s %-6s %-22s %-10s %-16s\n"
		printf fmt, "server", "Gbit/s med [min-max]", "proc CPU s/GB", "sys%", "softirq CPU" scpu " s/GB", "dgram/send",
		       "dep.err p50/p99 us"
		for (i = 1; i <= nk; i++) {
			k = keys[i]; n = cnt[k]
			if (!n) {
				why = st[k] == "na" ? "not available here (exit 77)" : st[k] == "missing" ? \
				      (k == "gtlsserver" ? "not installed" : "not built") : "failed"
				printf "%-22s %s\n", k, why
				continue
			}
			for (j = 1; j <= n; j++) a[j] = gp[k, j]; m1 = stats(a, n); lo1 = LO; hi1 = HI
			for (j = 1; j <= n; j++) a[j] = pc[k, j]; m3 = stats(a, n); lo3 = LO; hi3 = HI
			for (j = 1; j <= n; j++) a[j] = sq[k, j]; m4 = stats(a, n); lo4 = LO; hi4 = HI
			for (j = 1; j <= n; j++) a[j] = sy[k, j]; m7 = stats(a, n)
			lt = "-"
			if (l50[k, 1] != "-") {
				for (j = 1; j <= n; j++) a[j] = l50[k, j]; m5 = stats(a, n)
				for (j = 1; j <= n; j++) a[j] = l99[k, j]; m6 = stats(a, n)
				lt = sprintf("%.1f/%.1f", m5, m6)
			}
			printf fmt, k, sprintf("%.2f [%.2f-%.2f]", m1, lo1, hi1), sprintf("%.3f [%.3f-%.3f]", m3, lo3, hi3),
			       sprintf("%.0f", m7), sprintf("%.3f [%.3f-%.3f]", m4, lo4, hi4), per[k], lt
			if (failed[k]) printf "    ^ %d download(s) failed\n", failed[k]
			line = sprintf("{\"tool\": \"bench_quic\", \"summary\": true, \"server\": %s, \"cc\": \"cubic (ngtcp2)\", " \
				       "\"offload\": %s, \"rx_gro\": %s, \"mib\": %d, \"downloads\": %d, \"goodput_gbps_median\": %.3f, " \
				       "\"goodput_gbps_min\": %.3f, \"goodput_gbps_max\": %.3f, \"server_cpu_s_per_gb_median\": %.3f, " \
				       "\"server_cpu_s_per_gb_min\": %.3f, \"server_cpu_s_per_gb_max\": %.3f, \"softirq_s_per_gb_median\": %.3f, " \
				       "\"server_sys_pct_median\": %.1f, \"datagrams_per_send\": %s, \"server_cpu\": %d, \"client_cpu\": %d}",
				       q(k), q(offl), q(gro), mib, n, m1, lo1, hi1, m3, lo3, hi3, m4, m7, opt(per[k]), scpu, ccpu)
			print line >> jout
			if (json) print line
		}
		print ""
		printf "%d MiB per download, %d round(s), rounds interleaved; a fresh server per download.\n", mib, rounds
		print "Gbit/s: file bytes over gtlsclient'"'"'s wall time; proc CPU: the server process utime+stime over the download"
		print "(sys%: its stime share: the kernel'"'"'s part of sending and receiving);"
		printf "softirq: /proc/stat softirq of CPU %d (the server'"'"'s: the veth receive of its sends runs there too);\n", scpu
		print "both per 10^9 bytes.  dgram/send: datagrams the client received per super-segment (gsoquicd) or per"
		print "sendmsg (gtlsserver, counted under strace in one extra download); dep.err: how far from ngtcp2'"'"'s"
		print "schedule gsoquicd'"'"'s datagrams left, early or late (median and p99 of its --json, medians over rounds)."
	}' "$RAW"

if [ "$PROFILE" = 1 ] && command -v valgrind >/dev/null 2>&1 && [ -x "$QUICD" ]; then
	say ""
	say "Where gsoquicd's user-space instructions go (callgrind, one 32 MiB download per mode, process start included):"
	"$B/tests/httpprobe" gen --size 33554432 "$FILE" >/dev/null 2>&1 || head -c 33554432 /dev/urandom >"$FILE"
	for m in $MODES; do
		start_server "gsoquicd:$m" valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$(echo "$m" | tr / _)" ||
			continue
		fetch >/dev/null
		stop_server
		# shellcheck disable=SC2016 # awk's own fields
		callgrind_annotate --inclusive=no --threshold=100 --auto=no "$WORK/cg.$(echo "$m" | tr / _)" 2>/dev/null |
			awk -v m="$m" '
			/^ *[0-9][0-9,]* \( *[0-9.]+%\) / && !/PROGRAM TOTALS/ {
				n = $1; gsub(/,/, "", n); o = "other"
				if ($0 ~ /\[.*libngtcp2/) o = "ngtcp2"
				else if ($0 ~ /\[.*libnghttp3/) o = "nghttp3"
				else if ($0 ~ /\[.*(libgnutls|libnettle|libhogweed|libgmp|libtasn1|libp11|libidn2|libunistring)/) o = "tls+crypto"
				else if ($0 ~ /\[.*ld-linux/) o = "loader"
				else if ($0 ~ /\[.*libc\.so/) o = "libc"
				else if ($0 ~ /\[.*(libbpf|libxdp|libelf|libz)/) o = "libbpf"
				else if ($0 ~ /  (xdp|libgso)\//) o = "libgso"
				else if ($0 ~ /  tools\//) o = "gsoquicd"
				s[o] += n; tot += n
			}
			END {
				if (!tot) { printf "  %-14s no profile\n", m; exit }
				printf "  %-14s", m
				split("libgso gsoquicd ngtcp2 nghttp3 tls+crypto libc loader libbpf other", ord, " ")
				for (i = 1; i in ord; i++) printf " %s %.1f%%", ord[i], 100 * s[ord[i]] / tot
				printf " (%.0f M)\n", tot / 1e6
			}'
	done
	say "  (the kernel's share of the process CPU is the sys% column above)"
fi
say "results: $JOUT"
exit $status
