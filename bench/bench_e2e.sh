#!/bin/sh
# bench/bench_e2e.sh [BUILD_DIR] [--quick] [--rounds N] [--seconds S] [--modes "..."] [--cc CC] [--rx-bed "BED..."] -- run by `make bench`.
#
# End-to-end figures to quote: the demo's rows (`make demo` runs each once)
# in interleaved rounds, medians with their min-max.  On the demo's direct
# veth path (bench/testbed/common/demobed.sh: its namespaces, run_one, the
# receiver's GRO switch), for each receiver bed (--rx-bed, below: by default
# napi-thread, the receiver's work on its own CPU, then direct), one
# verified transfer per row and round from
#   kernel tso+gso   bench/kernel_sender, the sending veth's TSO and GSO on
#   kernel per-MTU   bench/kernel_sender, the sending veth's TSO and GSO off
#   libgso MODE      bench/sender --mode MODE, for every mode it lists
# to bench/receiver (every byte verified), each with the same congestion
# control (--cc, default cubic; the kernel rows' TCP_CONGESTION).
# A libgso mode is compared with the kernel row of its kind, and runs with
# that row's veth offloads, like with like: offload-e1000, offload-vnet
# and auto (super-packets to a TSO device) with "kernel tso+gso",
# software, csum and multibuf (MTU-sized frames) with "kernel per-MTU".
# Every round runs, for each bed, each row with the receiving veth's GRO
# off, then each with it on (rows interleaved: A B C ... A B C ...; GRO
# off and on, and the beds, too).  Ratios compare rows of the same bed.
#
# The sender is pinned to CPU 0 and this script, and with it the receiver,
# to CPU 1 (taskset).  Per run: goodput (the receiver's count of verified
# bytes over time), the sender's process CPU (its JSON cpu_s =
# cpu_user_s + cpu_sys_s) and the softirq time of the sender's CPU
# (/proc/stat, read before and after the run: on a veth the receiver's
# stack work for the sender's frames runs there), each per 10^9 verified
# bytes, and their sum; and the softirq and busy time (all but idle: a
# bed's kthreads count as system) of the receiver's CPU, per GB.  For each libgso mode, its goodput and CPU-s/GB
# (the sum) over its kernel row's, per round (the same round and GRO
# setting), then the median and min-max of those ratios.
#
# Output: a table per receiver setting (medians [min-max]) and the ratios;
# BUILD_DIR/bench/bench_e2e.json (a JSON line per run, "round": N, and one
# per row, "summary": true, with vs, goodput_ratio_median/_min/_max and
# cpu_ratio_median/_min/_max for libgso modes), BUILD_DIR/bench/bench_e2e.tsv
# (a line per run) and BUILD_DIR/bench/bench_e2e.png (gnuplot; svg without
# its png terminals; none without gnuplot).  Each run's own files are in
# BUILD_DIR/bench_e2e/.  Speed is never asserted.
#
#   --quick       2 rounds of 1 s, the direct bed only (for CI)
#   --rounds N    rounds (default 5)
#   --seconds S   seconds per run, a whole number (default 3)
#   --modes "..." only these libgso modes (default: all `sender --list-modes` gives)
#   --cc CC       congestion control of every row: cubic, bbr or reno (default cubic)
#   --rx-bed "BED..."  receiver beds, each in every round (default "napi-thread
#                 direct"; --quick: direct): direct, napi-thread, cpumap
#
# Receiver beds (demobed.sh's rx_bed_set; the JSON's rx_bed, the tables'
# "rx bed"):
#   direct       the plain veth pair: the receiver's stack work for the
#                sender's frames runs on the sender's CPU (veth_xmit ->
#                netif_rx or the veth's NAPI, raised where the frame was
#                sent) and is charged to it: the "softirq CPU0" column.
#   napi-thread  the default, the bed closest to a remote host's NIC: an
#                XDP_PASS program on the receiving veth (bench/testbed/rxbed)
#                gives it NAPI for every frame, NAPI threaded, its kthreads
#                pinned to the receiver's CPU.  The sender's CPU only
#                queues to the veth's ring and wakes the kthread once per
#                batch; the receive, GRO and the stack run on CPU 1.  The
#                kernel turns the sending veth's TSO off while its peer has
#                an XDP program, so "kernel tso+gso" is kernel GSO there
#                (the sending veth column says so): the TSO comparison of
#                offload-vnet and auto is the direct bed's.
#   cpumap       an XDP program redirecting every frame to a cpumap entry
#                for CPU 1 (its kthread builds skbs in batches).  An
#                xdp_frame carries no checksum state: frames sent
#                checksum-partial (kernel TCP, AF_PACKET vnet) arrive with a
#                bad checksum (TcpInCsumErrors), so this bed turns the
#                sending veth's tx-checksumming (and SG, GSO) off.
# Measured (3 interleaved rounds of 2 s, cubic, 2026-12-07, all three beds
# in one run, medians [min-max]; Gbit/s, sender CPU-s/GB process+softirq
# of CPU 0, CPU 1 busy s/GB), receiver GRO off:
#   kernel per-MTU   direct 11.50 [11.37-12.65], 0.687+0.320, 0.40;
#                    napi-thread 7.98 [7.69-8.25], 0.239+0.000, 1.05;
#                    cpumap 6.75 [6.58-8.15], 0.488+0.189, 1.23
#   libgso software  direct 7.23 [7.20-7.60], 1.099+0.528, 0.89;
#                    napi-thread 7.01 [6.68-7.89], 0.771+0.000, 1.09;
#                    cpumap 6.13 [6.05-6.46], 1.291+0.847, 1.07
# (GRO on: napi-thread 9.32 at 0.253+0.000 and 9.00 at 0.651+0.000; cpumap
# 8.31 at 0.910+0.681 and 5.98 at 1.326+0.970.)  On napi-thread CPU 1 is
# busy all the run: the receiver is the limit, as a one-core remote host
# is.  napi-thread takes all of the receiver's work off the sender's CPU
# (softirq CPU0 0.000-0.005 in every row, GRO off and on), batched,
# without an IPI per frame (RPS sends about one per transmit kick here),
# and keeps checksum offload.  cpumap does not: the veth's NAPI poll, which
# turns each skb into an xdp_frame (veth_xdp_rcv_skb: 55 % of CPU 0's
# samples, kernel per-MTU, GRO on), still runs on the sender's CPU; it loses
# checksum offload.  direct stays for TSO, and
# for --quick: on napi-thread, libgso multibuf stalls in about one run of
# three (the veth's XDP path drops a frame, RX dropped 1, and the
# completions of 180-390 descriptors stop coming until more traffic flows;
# the sender waited on its device-queue limit for ever, RTOs included).
# The engine now gives such completions up after a second without one
# (gso_engine_stats.tx_lost_completions, GSO_ENGINE_DEV_STALL_NS) and the
# run completes, verified, but that second shows in its goodput.
#
# Needs root (namespaces, veths, AF_XDP); as non-root it says so and exits 0.
# Exit 1 when a run is not verified by the receiver; a mode the sender
# cannot run here (exit 77) is shown as not available, not a failure.
set -u

B=build
ROUNDS=5
SECS=3
MODES=""
CC=cubic
BEDS=""
QUICK=""
usage() { printf 'bench_e2e: %s (--quick, --rounds N, --seconds S, --modes "...", --cc CC, --rx-bed "BED...", --help)\n' "$1" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--quick) ROUNDS=2; SECS=1; QUICK=1 ;;
	--rounds) [ $# -ge 2 ] || usage "--rounds needs a number"; ROUNDS=$2; shift ;;
	--seconds) [ $# -ge 2 ] || usage "--seconds needs a number"; SECS=$2; shift ;;
	--modes) [ $# -ge 2 ] || usage "--modes needs a list"; MODES=$2; shift ;;
	--cc) [ $# -ge 2 ] || usage "--cc needs a name"; CC=$2; shift ;;
	--rx-bed) [ $# -ge 2 ] || usage "--rx-bed needs a bed (direct, napi-thread, cpumap)"; BEDS=$2; shift ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0 ;;
	-*) usage "unknown option $1" ;;
	*) B=$1 ;; # the build folder
	esac
	shift
done
case $ROUNDS in '' | *[!0-9]* | 0) usage "--rounds: '$ROUNDS' is not a positive whole number" ;; esac
case $SECS in '' | *[!0-9]* | 0) usage "--seconds: '$SECS' is not a positive whole number" ;; esac
case $CC in cubic | bbr | reno) ;; *) usage "--cc: '$CC' is not one of cubic, bbr, reno" ;; esac
BEDS_SET=$BEDS
if [ -z "$BEDS" ]; then
	BEDS="napi-thread direct"
	[ -n "$QUICK" ] && BEDS=direct
fi
for b in $BEDS; do
	case $b in direct | napi-thread | cpumap) ;; *) usage "--rx-bed: '$b' is not one of direct, napi-thread, cpumap" ;; esac
done

OUT="$B/bench_e2e"
# shellcheck disable=SC2034 # TAG and SEED are for demobed.sh
TAG="gsoe$$"
# shellcheck disable=SC2034
SEED=20261207
# shellcheck source=bench/testbed/common/demobed.sh
. "$(dirname "$0")/testbed/common/demobed.sh"

bed_bench_root bench_e2e
[ -x "$B/bench/sender" ] || die "$B/bench/sender is missing: run 'make' first"
if [ -z "$MODES" ]; then
	MODES=$("$B/bench/sender" --list-modes) || die "$B/bench/sender --list-modes failed"
fi
mkdir -p "$B/bench" || die "cannot create $B/bench"
JOUT="$B/bench/bench_e2e.json"
RAW="$B/bench/bench_e2e.tsv"
HZ=$(getconf CLK_TCK)

# The sender on CPU 0; this shell, and so the receiver it starts, on CPU 1.
# Unpinned (one CPU, no taskset) the softirq column is the whole machine's.
PIN="" SCPU="" RCPU=""
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null 2>&1 && taskset -p -c 1 $$ >/dev/null 2>&1; then
	PIN="taskset -c 0" SCPU=0 RCPU=1
fi
# softirq_ticks [CPU]: the softirq column of /proc/stat for CPU (all CPUs without one).
softirq_ticks() {
	awk -v c="cpu$1" '$1 == c { print $8 }' /proc/stat
}
# busy_ticks CPU: the time CPU was not idle (user, nice, system, irq, softirq,
# steal): a receiver bed's kthreads (threaded NAPI, cpumap) count as system.
busy_ticks() {
	awk -v c="cpu$1" '$1 == c { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}

case $BEDS in direct) ;; *)
	if [ -z "$RCPU" ] && [ -z "$BEDS_SET" ]; then
		say "bench_e2e: one CPU (or no taskset): the receiver beds that need a CPU of their own are left out; --rx-bed direct"
		BEDS=direct
	fi
	[ -n "$RCPU" ] || [ "$BEDS" = direct ] || die "--rx-bed $BEDS puts the receiver's work on CPU 1: needs 2 CPUs and taskset (use --rx-bed direct)"
	[ "$BEDS" = direct ] || [ -x "$B/bench/rxbed" ] || die "$B/bench/rxbed is missing: run 'make' first" ;;
esac
bed_setup
printf '# round\trx_gro\trow\tmode\tvs\toffload\tcc\tstatus\tgoodput_gbps\tbytes_verified\tcpu_s\tcpu_user_s\tcpu_sys_s\tsoftirq_s\tsoftirq_rx_cpu_s\trun\treceiver\trx_bed\tbusy_s\tbusy_rx_cpu_s\n' >"$RAW"

# e2e_run ROUND KEY: one run of row KEY (kernel-tso, kernel-mtu or a libgso
# mode) with the receiver as it is now; a line of $RAW.  Names start with
# e_: run_one and bed_row set plain ones.
e_fail=0
e2e_run() {
	e_round=$1 e_key=$2
	case $e_key in
	kernel-tso) e_row="kernel tso+gso" e_tso=on e_vs=- e_mode=kernel ;;
	kernel-mtu) e_row="kernel per-MTU" e_tso=off e_vs=- e_mode=kernel ;;
	offload-* | auto) e_row="libgso $e_key" e_tso=on e_vs="kernel tso+gso" e_mode=$e_key ;;
	*) e_row="libgso $e_key" e_tso=off e_vs="kernel per-MTU" e_mode=$e_key ;;
	esac
	if [ "$e_mode" = kernel ]; then set -- "$B/bench/kernel_sender"
	else set -- "$B/bench/sender" --mode "$e_mode"; fi
	set_offload dS "$e_tso" "$e_tso"
	e_offl=$(offload_text dS)
	e_rx=$(receiver_text dR)
	e_gro=$(rx_gro dR)
	e_s0=$(softirq_ticks $SCPU) e_r0=- e_b0=$(busy_ticks "$SCPU") e_c0=-
	[ -n "$RCPU" ] && e_r0=$(softirq_ticks "$RCPU") && e_c0=$(busy_ticks "$RCPU")
	# shellcheck disable=SC2086 # PIN is a command and its options
	run_one "$e_row" direct "$e_offl" "$CC" $PIN "$@"
	e_s1=$(softirq_ticks $SCPU) e_r1=- e_b1=$(busy_ticks "$SCPU") e_c1=-
	[ -n "$RCPU" ] && e_r1=$(softirq_ticks "$RCPU") && e_c1=$(busy_ticks "$RCPU")
	e_tsv=$(awk -F '\t' -v r="$RUN" '$1 == r' "$TSV")
	e_sj="$OUT/run$RUN.sender.json" e_rj="$OUT/run$RUN.receiver.json"
	case $e_tsv in
	*"not available here"*) e_st=na ;;
	'') e_st=failed ;;
	*) if [ "$(printf '%s' "$e_tsv" | cut -f 7)" = yes ]; then e_st=ok; else e_st=failed; fi ;;
	esac
	if [ "$e_st" = failed ]; then
		e_fail=1
		say "  round $e_round, $e_row, rx gro $e_gro: not verified: $(printf '%s' "$e_tsv" | cut -f 10)"
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$e_round" "$e_gro" "$e_row" \
		"$e_mode" "$e_vs" "$e_offl" "$CC" "$e_st" "$(jget "$e_rj" goodput_gbps)" "$(jget "$e_rj" bytes_verified)" \
		"$(jget "$e_sj" cpu_s)" "$(jget "$e_sj" cpu_user_s)" "$(jget "$e_sj" cpu_sys_s)" \
		"$(awk -v a="$e_s0" -v b="$e_s1" -v hz="$HZ" 'BEGIN { printf "%.2f", (b - a) / hz }')" \
		"$(awk -v a="$e_r0" -v b="$e_r1" -v hz="$HZ" 'BEGIN { if (a != "-") printf "%.2f", (b - a) / hz; else printf "-" }')" \
		"$RUN" "$e_rx" "$RX_BED" \
		"$(awk -v a="$e_b0" -v b="$e_b1" -v hz="$HZ" 'BEGIN { printf "%.2f", (b - a) / hz }')" \
		"$(awk -v a="$e_c0" -v b="$e_c1" -v hz="$HZ" 'BEGIN { if (a != "-") printf "%.2f", (b - a) / hz; else printf "-" }')" >>"$RAW"
}

# shellcheck disable=SC2086 # MODES is a list
set -- kernel-tso kernel-mtu $MODES
say "bench_e2e: ${ROUNDS} round(s), ${SECS} s per run, $CC for every row, receiver GRO off and on, receiver bed(s) $BEDS; rows: $*"
say "  $([ -n "$PIN" ] && echo "sender pinned to CPU $SCPU, receiver to CPU $RCPU" || echo "not pinned (one CPU or no taskset): softirq of all CPUs")"
t0=$(date +%s)
for r in $(seq "$ROUNDS"); do
	for bed in $BEDS; do
		for g in off on; do
			set_gro dR "$g" || die "could not turn the receiving veth's GRO $g (ethtool -K dR gro $g)"
			rx_bed_set "$bed" dR "$RCPU" || die "could not set up the receiver bed $bed on dR (CPU $RCPU)"
			# shellcheck disable=SC2034 # for run_one: the runs' JSON labels end in it
			RX_TAG=", rx gro $g, rx bed $bed"
			for k in "$@"; do e2e_run "$r" "$k"; done
		done
	done
	say "  round $r of $ROUNDS done ($(($(date +%s) - t0)) s)"
done
SND_TEXT=$(sender_text)
bed_cleanup

# ---- summary: per row and GRO setting, medians [min-max] over rounds -------
SUMT="$OUT/summary.tsv"
: >"$JOUT"
awk -F '\t' -v jout="$JOUT" -v sumt="$SUMT" -v secs="$SECS" -v scpu="${SCPU:--}" -v rcpu="${RCPU:--}" '
	function q(s) { gsub(/"/, "\\\"", s); return "\"" s "\"" }
	# stats(a, n): the median of a[1..n] (sorted in place); LO, HI its min and max.
	function stats(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		LO = a[1]; HI = a[n]
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	# put(key, m, lo, hi): key_median, key_min, key_max as JSON members.
	function put(key, m, lo, hi) {
		return sprintf(", \"%s_median\": %.3f, \"%s_min\": %.3f, \"%s_max\": %.3f", key, m, key, lo, key, hi)
	}
	# mmm(v, n, fmt): "median [min-max]" of v[1..n], each as fmt; M, LO, HI the numbers.
	function mmm(v, n, fmt) { M = stats(v, n); return sprintf(fmt " [" fmt "-" fmt "]", M, LO, HI) }
	/^#/ { next }
	{
		k = $3 SUBSEP $2 SUBSEP $18
		if (!(k in seen)) { seen[k] = 1; keys[++nk] = k; row[k] = $3; gro[k] = $2; mode[k] = $4; vs[k] = $5
			offl[k] = $6; cc[k] = $7; rx[k] = $17; bed[k] = $18 }
		st[k] = $8
		if ($8 != "ok") { if ($8 == "failed") nfail[k]++; next }
		gb = $10 / 1e9
		n = ++cnt[k]
		gp[k, n] = $9; pr[k, n] = $11 / gb; sq[k, n] = $14 / gb; rnd[k, n] = $1
		sm[k, n] = pr[k, n] + sq[k, n]
		rq[k, n] = ($15 == "-" ? "null" : sprintf("%.3f", $15 / gb))
		rb[k, n] = ($20 == "-" ? "null" : sprintf("%.3f", $20 / gb))
		byround[k, $1] = n
		printf "{\"tool\": \"bench_e2e\", \"round\": %d, \"row\": %s, \"mode\": %s, \"cc\": %s, \"offload\": %s, " \
		       "\"rx_gro\": %s, \"receiver\": %s, \"goodput_gbps\": %.3f, \"bytes_verified\": %.0f, " \
		       "\"cpu_s\": %.3f, \"cpu_user_s\": %.3f, \"cpu_sys_s\": %.3f, \"softirq_s\": %.2f, \"softirq_rx_cpu_s\": %s, " \
		       "\"cpu_process_s_per_gb\": %.3f, \"cpu_softirq_s_per_gb\": %.3f, \"cpu_s_per_gb\": %.3f, " \
		       "\"sender_cpu\": %s, \"receiver_cpu\": %s, \"rx_bed\": %s, " \
		       "\"busy_s\": %s, \"busy_rx_cpu_s\": %s, \"softirq_rx_cpu_s_per_gb\": %s, \"busy_rx_cpu_s_per_gb\": %s}\n", $1, q($3), q($4), q($7), q($6), q($2), q($17), $9, $10,
		       $11, $12, $13, $14, ($15 == "-" ? "null" : $15), pr[k, n], sq[k, n], sm[k, n],
		       (scpu == "-" ? "null" : scpu), (rcpu == "-" ? "null" : rcpu), q($18),
		       $19, ($20 == "-" ? "null" : $20), rq[k, n], rb[k, n] >> jout
	}
	END {
		hfmt = "%-22s %-20s %-21s %-21s %-21s %-21s %-21s %-21s\n"
		rfmt = "%-22s %-16s %6s %-21s %-21s\n"
		for (i = 1; i <= nk; i++) {
			k = keys[i]; n = cnt[k]
			if (gro[k] SUBSEP bed[k] != lastgro) {
				lastgro = gro[k] SUBSEP bed[k]
				printf "\nreceiver: %s\n", rx[k]
				printf hfmt, "row (" cc[k] ")", "sending veth", "Gbit/s", "CPU-s/GB process", "softirq CPU" scpu, "sum",
				       "CPU" rcpu " softirq/GB", "CPU" rcpu " busy/GB"
			}
			if (!n) {
				why = st[k] == "na" ? "not available here" : "failed every round"
				printf "%-22s %-20s (%s)\n", row[k], offl[k], why
				printf "{\"tool\": \"bench_e2e\", \"summary\": true, \"row\": %s, \"mode\": %s, \"cc\": %s, " \
				       "\"offload\": %s, \"rx_gro\": %s, \"rx_bed\": %s, \"rounds\": 0, \"status\": %s}\n", q(row[k]),
				       q(mode[k]), q(cc[k]), q(offl[k]), q(gro[k]), q(bed[k]), q(why) >> jout
				continue
			}
			for (j = 1; j <= n; j++) { a[j] = gp[k, j]; b[j] = pr[k, j]; c[j] = sq[k, j]; d[j] = sm[k, j]
				e[j] = (rq[k, j] == "null" ? 0 : rq[k, j]); f[j] = (rb[k, j] == "null" ? 0 : rb[k, j]) }
			gs = mmm(a, n, "%.2f"); gm = M; glo = LO; ghi = HI
			ps = mmm(b, n, "%.3f"); pm = M; plo = LO; phi = HI
			qs = mmm(c, n, "%.3f"); qm = M; qlo = LO; qhi = HI
			ss = mmm(d, n, "%.3f"); sm_ = M; slo = LO; shi = HI
			es = mmm(e, n, "%.3f"); fs = mmm(f, n, "%.3f")
			o = offl[k]; sub(/^veth /, "", o)
			printf hfmt, row[k], o, gs, ps, qs, ss, es, fs
			if (nfail[k]) printf "    ^ %d run(s) not verified\n", nfail[k]
			line = sprintf("{\"tool\": \"bench_e2e\", \"summary\": true, \"row\": %s, \"mode\": %s, \"cc\": %s, " \
				       "\"offload\": %s, \"rx_gro\": %s, \"rx_bed\": %s, \"receiver\": %s, \"rounds\": %d, " \
				       "\"seconds\": %d, \"sender_cpu\": %s, \"receiver_cpu\": %s", q(row[k]), q(mode[k]), q(cc[k]),
				       q(offl[k]), q(gro[k]), q(bed[k]), q(rx[k]), n, secs, (scpu == "-" ? "null" : scpu),
				       (rcpu == "-" ? "null" : rcpu))
			line = line put("goodput_gbps", gm, glo, ghi) put("cpu_process_s_per_gb", pm, plo, phi)
			line = line put("cpu_softirq_s_per_gb", qm, qlo, qhi) put("cpu_s_per_gb", sm_, slo, shi)
			# For the plot: index, label, goodput median/min/max, process and softirq medians, sum median/min/max.
			printf "%d\t%s gro %s%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", i, row[k], gro[k], (bed[k] == "direct" ? "" : " " bed[k]),
			       gm, glo, ghi, pm, qm, sm_, slo, shi > sumt
			# Ratios to the kernel row of its kind, round by round.
			if (vs[k] != "-") {
				kk = vs[k] SUBSEP gro[k] SUBSEP bed[k]; nr = 0
				for (j = 1; j <= n; j++) {
					if (!((kk, rnd[k, j]) in byround)) continue
					x = byround[kk, rnd[k, j]]
					if (gp[kk, x] <= 0 || sm[kk, x] <= 0) continue
					nr++; rg[nr] = gp[k, j] / gp[kk, x]; rc[nr] = sm[k, j] / sm[kk, x]
				}
				line = line sprintf(", \"vs\": %s, \"ratio_rounds\": %d", q(vs[k]), nr)
				if (nr) {
					rgs = mmm(rg, nr, "%.2f"); line = line put("goodput_ratio", M, LO, HI)
					rcs = mmm(rc, nr, "%.2f"); line = line put("cpu_ratio", M, LO, HI)
					ratio[k] = sprintf(rfmt, row[k], vs[k], nr, rgs, rcs)
				} else
					ratio[k] = sprintf(rfmt, row[k], vs[k], 0, "-", "-")
			}
			print line "}" >> jout
		}
		# The ratios, per receiver setting.
		for (i = 1; i <= nk; i++) {
			k = keys[i]
			if (!(k in ratio)) continue
			if (gro[k] SUBSEP bed[k] != rgro) {
				rgro = gro[k] SUBSEP bed[k]
				printf "\nratios to the kernel row, per round, then median [min-max]: receiver gro %s, bed %s\n", gro[k], bed[k]
				printf rfmt, "libgso mode", "vs", "rounds", "goodput x", "CPU-s/GB (sum) x"
			}
			printf "%s", ratio[k]
		}
	}' "$RAW"

say ""
say "Gbit/s: the receiver's verified bytes over time; CPU-s/GB per 10^9 verified bytes: process, the"
say "sender's own user+sys (its JSON cpu_s; offload-e1000's includes its device model's thread);"
say "softirq, /proc/stat of the sender's CPU over the run (the veth's receive of its frames runs there,"
say "and anything else of that CPU); sum, both.  Not in the sum: the receiver's CPU (its softirq, where the"
say "ACKs come back: kernel TCP's ACK processing, libgso's XDP redirect of them; and its busy time, with a"
say "bed's kthreads and bench/receiver), the last two columns.  Ratios: per round against the same round's"
say "kernel row (same receiver GRO and bed), then median [min-max] over rounds.  $SND_TEXT"
say "results: $JOUT, $RAW; each run's files in $OUT/"

# ---- plot -------------------------------------------------------------------
if command -v gnuplot >/dev/null 2>&1; then
	term=svg ext=svg
	gnuplot -e "set terminal png" >/dev/null 2>&1 && term=png ext=png
	gnuplot -e "set terminal pngcairo" >/dev/null 2>&1 && term=pngcairo ext=png
	plot="$B/bench/bench_e2e.$ext"
	if gnuplot -e "datafile='$SUMT'; outfile='$plot'; term='$term'; subtitle='$CC, $ROUNDS round(s) of $SECS s'" \
		"$(dirname "$0")/bench_e2e.gp" 2>"$OUT/plot.err"; then
		say "plot: $plot"
	else
		say "bench_e2e: gnuplot failed: $(cat "$OUT/plot.err")"
	fi
else
	say "bench_e2e: gnuplot not installed (Debian package gnuplot-nox; make deps installs it): no plot"
fi
exit $e_fail
