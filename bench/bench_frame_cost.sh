#!/bin/sh
# bench/bench_frame_cost.sh [BUILD_DIR] [--quick] [--json] [--rx-bed BED] -- run by `make bench`.
#
# What one frame (one MTU-sized TCP segment on the wire) costs the sender, in
# one run, for libgso's AF_XDP modes software, csum and multibuf and for the
# kernel's per-MTU TCP path (bench/kernel_sender, the sending veth's TSO and
# GSO off), on the demo's direct veth path (bench/testbed/common/demobed.sh) against
# the same bench/receiver with the same settings, CUBIC everywhere.
#
# Three passes per row:
#   timing   SECS s (4, 1 with --quick) under bench/cost_probe: the sender's
#            user and system CPU and its context switches (wait4 rusage), the
#            machine's softirq CPU (/proc/stat, all CPUs), NET_RX softirq
#            runs (/proc/softirqs); frames from the sender's JSON (tx_frames)
#            or, for kernel TCP, Tcp.OutSegs of the sender's namespace; ACKs
#            from the sender's JSON (acks) or Tcp.InSegs; kicks (sendto) and
#            event-loop sleeps and spins from the sender's JSON.
#   syscalls 1 s under `strace -c -f`: counts only (strace slows the sender;
#            its times are not used), per frame and per ACK.
#   callgrind --bytes 64M (4M with --quick) under valgrind --tool=callgrind:
#            user-space instructions (Ir) per frame, split into the bench
#            stream generator (bench/testbed/common/stream.c, fill_words), libgso
#            (libgso/), the AF_XDP backend (xdp/), libc (memcpy & co.) and the
#            rest of the bench program; the top functions are listed.  This is
#            the real sender over AF_XDP under valgrind, not a model of it.
# strace and valgrind are optional: without them those lines say "-".
# After the rows, bench_xsk_tx (its own test-bed) gives the AF_XDP copy-mode
# transmit alone per frame, to split the sender's CPU into that and the rest.
# The sender runs on CPU 0, the receiver on CPU 1 (taskset), for every row.
#
# --rx-bed BED: the receiving veth's bed (demobed.sh rx_bed_set, as
# bench_e2e.sh): napi-thread (the default with 2 CPUs: its stack work on
# the receiver's CPU, as a remote host's would be, so that the sender's
# CPU is the sender's own) or direct (that work in the sender's CPU's
# softirq, the bed before; what --quick uses, as bench_e2e --quick does).
#
# The printed table has a line per metric, a column per sender and columns
# of ratios to the kernel's; below it, what each cost is.  With --json one
# JSON line per sender (all of them are in
# BUILD_DIR/bench_frame_cost/results.json either way).  --report prints the
# last run's tables again from its files, without running anything.
#
# Needs root (namespaces, veths, AF_XDP); as non-root it says so and exits 0.
# Exit 1 when a timing row is not verified by the receiver.
set -u

B=build
case ${1:-} in
-*) ;; # options only: the default build folder
?*) B=$1; shift ;;
esac
SECS=4
STRACE_SECS=1
CG_BYTES=64M
JSON=0
REPORT=0
RXB=""
prev=""
for a in "$@"; do
	if [ "$prev" = --rx-bed ]; then
		RXB=$a prev=""
		continue
	fi
	case $a in
	--quick) SECS=1; CG_BYTES=4M; [ -n "$RXB" ] || RXB=direct ;;
	--rx-bed) prev=$a ;;
	--json) JSON=1 ;;
	--report) REPORT=1 ;; # print the tables of the last run again, from its files

	-h | --help) sed -n '2,/^set -u/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0 ;;
	*) printf 'bench_frame_cost: unknown option %s (--quick, --json, --rx-bed BED)\n' "$a" >&2; exit 2 ;;
	esac
done
[ -z "$prev" ] || { printf 'bench_frame_cost: --rx-bed needs a bed (direct, napi-thread)\n' >&2; exit 2; }
case ${RXB:-napi-thread} in direct | napi-thread) ;; *) printf "bench_frame_cost: --rx-bed: '%s' is not one of direct, napi-thread\n" "$RXB" >&2; exit 2 ;; esac
OUT="$B/bench_frame_cost"
ROWS="software csum multibuf kernel"
# shellcheck disable=SC2034 # TAG and SEED are for demobed.sh
TAG="gsofc$$"
# shellcheck disable=SC2034
SEED=20180601
# shellcheck source=bench/testbed/common/demobed.sh
. "$(dirname "$0")/testbed/common/demobed.sh"

if [ $REPORT = 1 ]; then
	[ -s "$OUT/runs.tsv" ] || die "no earlier run in $OUT"
elif [ "$(id -u)" != 0 ]; then
	say "bench_frame_cost: needs root (it creates network namespaces, veth pairs and AF_XDP sockets): skipped"
	exit 0
fi
if [ $REPORT = 0 ]; then
bed_check_root "make bench" || exit 1
for p in sender cost_probe; do
	[ -x "$B/bench/$p" ] || die "$B/bench/$p is missing: run 'make' first"
done
HAVE_STRACE=0; command -v strace >/dev/null 2>&1 && HAVE_STRACE=1
HAVE_CG=0; command -v valgrind >/dev/null 2>&1 && command -v callgrind_annotate >/dev/null 2>&1 && HAVE_CG=1
# Fixed placement, so that runs compare (unpinned, the kernel row moved
# between 0.3 and 1.7 us per frame with where the scheduler put the two):
# the sender on CPU 0; this shell, and so the receiver it starts, on CPU 1.
# On a veth the receiver's TCP input then runs in softirq on CPU 0, for
# every row alike.
PIN=""
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null 2>&1; then
	taskset -p -c 1 $$ >/dev/null 2>&1 && PIN="taskset -c 0"
fi
[ -n "$PIN" ] || RXB=direct # the receiver's own CPU needs two and taskset
RXB=${RXB:-napi-thread}
bed_setup
rx_bed_set "$RXB" dR 1 || die "could not set up the receiver bed $RXB on dR"
say "bench_frame_cost: receiver bed $RXB$([ "$RXB" = direct ] || echo " (its stack work on CPU 1)")"
rm -f "$OUT"/cost.* "$OUT"/strace.* "$OUT"/callgrind.* "$OUT"/cg_fns.tsv
# The kernel row's veth offloads; the libgso rows do not depend on them
# (they hand the veth finished frames), so every row runs with the same.
set_offload dS off off
OFFL="$(offload_text dS), rx bed $RXB"
printf '%s\n' "$OFFL" >"$OUT/offload.txt"
# row NAME PREFIX...: the program (and its options) for row NAME behind PREFIX.
# $XARGS (word-split) goes after the program's own options.
XARGS=""
row() {
	fc_n=$1; shift
	# shellcheck disable=SC2086 # PIN is a command and its options
	set -- $PIN "$@"
	# shellcheck disable=SC2086
	if [ "$fc_n" = kernel ]; then run_one "kernel per-MTU" direct "$OFFL" cubic "$@" "$B/bench/kernel_sender" $XARGS
	else run_one "libgso $fc_n" direct "$OFFL" cubic "$@" "$B/bench/sender" --mode "$fc_n" $XARGS; fi
}
: >"$OUT/runs.tsv"

say "bench_frame_cost: per-frame sender cost, direct veth path, $OFFL, receiver $(receiver_text dR)"
say "  $([ -n "$PIN" ] && echo "sender pinned to CPU 0, receiver to CPU 1" || echo "not pinned (one CPU or no taskset)")"
say "  timing ${SECS} s per row; strace $([ $HAVE_STRACE = 1 ] && echo "${STRACE_SECS} s" || echo "not installed: skipped");" \
	"callgrind $([ $HAVE_CG = 1 ] && echo "--bytes $CG_BYTES" || echo "not installed: skipped")"
for fc in $ROWS; do
	row "$fc" "$B/bench/cost_probe" --out "$OUT/cost.$fc.json"
	printf '%s\ttiming\t%s\n' "$RUN" "$fc" >>"$OUT/runs.tsv"
done
if [ $HAVE_STRACE = 1 ]; then
	fc_secs=$SECS; SECS=$STRACE_SECS
	for fc in $ROWS; do
		row "$fc" strace -c -f -o "$OUT/strace.$fc.txt"
		printf '%s\tstrace\t%s\n' "$RUN" "$fc" >>"$OUT/runs.tsv"
	done
	SECS=$fc_secs
fi
if [ $HAVE_CG = 1 ]; then
	fc_secs=$SECS; SECS=120
	for fc in $ROWS; do
		XARGS="--bytes $CG_BYTES"
		row "$fc" valgrind -q --tool=callgrind --callgrind-out-file="$OUT/callgrind.$fc.out"
		XARGS=""
		printf '%s\tcallgrind\t%s\n' "$RUN" "$fc" >>"$OUT/runs.tsv"
		[ -s "$OUT/callgrind.$fc.out" ] &&
			callgrind_annotate --auto=no --threshold=100 "$OUT/callgrind.$fc.out" >"$OUT/callgrind.$fc.txt" 2>/dev/null
	done
	SECS=$fc_secs
fi
bed_cleanup
[ -n "$PIN" ] && taskset -p -c "0-$(($(nproc) - 1))" $$ >/dev/null 2>&1
# The AF_XDP copy-mode transmit alone, for the split: the same kind of
# 46-frame super-segments through the same kernel path into a veth whose
# peer drops them at once (no TCP receiver, no ACKs, no engine).
if [ -x "$B/bench/bench_xsk_tx" ]; then
	if [ "$SECS" -le 1 ]; then XTX="--quick"; else XTX="--rounds 3 --seconds 0.5"; fi
	# shellcheck disable=SC2086
	"$B/bench/bench_xsk_tx" $XTX >"$OUT/xsk_tx.txt" 2>&1 || say "bench_frame_cost: bench_xsk_tx failed: $(tail -n 1 "$OUT/xsk_tx.txt")"
fi
fi

[ $REPORT = 1 ] && OFFL=$(cat "$OUT/offload.txt" 2>/dev/null)

# ---- collect: one "row<TAB>key<TAB>value" line per fact -------------------
FACTS="$OUT/facts.tsv"
: >"$FACTS"
rm -f "$OUT/cg_fns.tsv"
fact() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$FACTS"; }
# frames R ROW: MTU-sized segments the sender of run R put on the wire.
frames() {
	if [ "$2" = kernel ]; then jget "$OUT/run$1.sender.json" tcp_out_segs
	else jget "$OUT/run$1.sender.json" tx_frames; fi
}
# Self cost per function -> categories.  A function inlined from a system
# header (immintrin.h) takes the category its name has elsewhere in the file.
cg_split() {
	awk '
	/^ *[0-9,]+ +\([ 0-9.]+%\) +[^ ]+:[^ ]+/ && !/PROGRAM TOTALS/ {
		v = $1; gsub(/,/, "", v)
		i = index($0, "%)"); rest = substr($0, i + 2); sub(/^ +/, "", rest)
		obj = ""; if (match(rest, / \[[^]]*\]$/)) { obj = substr(rest, RSTART + 2, RLENGTH - 3); rest = substr(rest, 1, RSTART - 1) }
		c = index(rest, ":"); file = substr(rest, 1, c - 1); fn = substr(rest, c + 1)
		cat = ""
		if (file ~ /bench\/testbed\/common\/stream\.c$/) cat = "gen"
		else if (file ~ /(^|\/)libgso\//) cat = "libgso"
		else if (file ~ /(^|\/)xdp\//) cat = "xdp"
		else if (file ~ /(^|\/)bench\//) cat = "bench"
		else if (obj ~ /libc\.so/ || file ~ /sysdeps|string\//) cat = "libc"
		else if (obj ~ /ld-linux|libbpf|libelf|libz/ || file ~ /elf\/|dl-/) cat = "setup"
		if (cat != "") known[fn] = cat
		n++; V[n] = v; F[n] = fn; C[n] = cat; FL[n] = file
	}
	END {
		for (i = 1; i <= n; i++) {
			c = C[i]; if (c == "") c = (F[i] in known) ? known[F[i]] : "other"
			sum[c] += V[i]; fsum[F[i] "|" c] += V[i]
		}
		for (c in sum) printf "ir_%s\t%s\n", c, sum[c]
		for (k in fsum) { split(k, kk, "|"); printf "fn\t%s\t%s\t%s\n", fsum[k], kk[2], kk[1] }
	}' "$1"
}
# xsk_tx MODE: bench_xsk_tx's CPU ns per frame for MODE (CPU-s/GB x MSS).
xsk_tx() {
	[ -s "$OUT/xsk_tx.txt" ] || { printf '%s' "-"; return; }
	awk -v m="$1" '/MSS [0-9]+/ { match($0, /MSS [0-9]+/); mss = substr($0, RSTART + 4, RLENGTH - 4) }
		$1 == m && $4 ~ /^[0-9.]+$/ { v = $4 * mss } END { if (v != "") printf "%.1f", v; else printf "-" }' "$OUT/xsk_tx.txt"
}
while IFS="$(printf '\t')" read -r r pass fc; do
	sj="$OUT/run$r.sender.json"
	f=$(frames "$r" "$fc")
	fact "$fc" "${pass}_frames" "$f"
	case $pass in
	timing)
		cj="$OUT/cost.$fc.json"
		fact "$fc" gbps "$(jget "$OUT/run$r.receiver.json" goodput_gbps)"
		fact "$fc" verified "$(awk -F '\t' -v r="$r" '$1 == r { print $7 }' "$TSV")"
		for k in user_s sys_s nvcsw nivcsw machine_user_s machine_sys_s machine_softirq_s net_rx_softirqs wall_s; do
			fact "$fc" "$k" "$(jget "$cj" $k)"
		done
		case $fc in software) xm=copy+sw ;; csum) xm=copy+csum ;; multibuf) xm=sg+csum ;; *) xm="" ;; esac
		if [ -n "$xm" ]; then
			x=$(xsk_tx "$xm")
			fact "$fc" xtx_ns "$x"
			# What the sender spent beyond that transmit, in seconds for the run.
			fact "$fc" rest_s "$(awk -v u="$(jget "$cj" user_s)" -v s="$(jget "$cj" sys_s)" -v x="$x" -v f="$f" \
				'BEGIN { if (x ~ /^[0-9.]+$/ && f > 0) printf "%.6f", u + s - x * f * 1e-9; else printf "-" }')"
		fi
		if [ "$fc" = kernel ]; then
			fact "$fc" acks "$(jget "$cj" tcp_in_segs)"
			b=$(jget "$sj" bytes); w=$(jget "$sj" write_size)
			fact "$fc" kicks "$(awk -v b="$b" -v w="$w" 'BEGIN { if (w > 0) printf "%d", (b + w - 1) / w; else print "-" }')"
		else
			for k in acks tx_kicks evloop_sleeps evloop_spins gen_cpu_s; do fact "$fc" "$k" "$(jget "$sj" $k)"; done
			fact "$fc" kicks "$(jget "$sj" tx_kicks)"
		fi
		[ "$fc" = kernel ] && fact "$fc" gen_cpu_s "$(jget "$sj" gen_cpu_s)"
		;;
	strace)
		st="$OUT/strace.$fc.txt"
		[ -s "$st" ] || continue
		[ "$fc" = kernel ] || fact "$fc" strace_acks "$(jget "$sj" acks)"
		awk '$NF == "total" { print "sc_total\t" $4 }
		     /^ *[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9]+/ && $NF != "total" { print "sc_" $NF "\t" $4 }' "$st" |
			while IFS="$(printf '\t')" read -r k v; do fact "$fc" "$k" "$v"; done
		;;
	callgrind)
		ct="$OUT/callgrind.$fc.txt"
		[ -s "$ct" ] || continue
		[ "$fc" = kernel ] || fact "$fc" callgrind_acks "$(jget "$sj" acks)"
		fact "$fc" ir_total "$(sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' "$ct" | tr -d ,)"
		: >>"$OUT/cg_fns.tsv"
		cg_split "$ct" | while IFS="$(printf '\t')" read -r k v rest; do
			if [ "$k" = fn ]; then printf '%s\t%s\n' "$v" "$rest" | sed "s/^/$fc\t/" >>"$OUT/cg_fns.tsv"
			else fact "$fc" "$k" "$v"; fi
		done
		;;
	esac
done <"$OUT/runs.tsv"

# ---- report ---------------------------------------------------------------
# The table: one line per metric, "pass key scale|label|JSON key" (scale
# "raw": as measured; "sum": user + system; "ack": strace calls of the
# named syscalls per ACK), or "- -|section title".
TABLE='- -|-- timing run (sender: getrusage via wait4; machine: /proc/stat, all CPUs)
timing gbps raw|goodput Gbit/s (verified)|goodput_gbps
timing timing_frames raw|frames in the run|frames
timing user_s+sys_s sum|sender CPU ns/frame|cpu_ns
timing user_s 1e9|  user ns/frame|user_ns
timing gen_cpu_s 1e9|    of it bench stream generation|gen_ns
timing sys_s 1e9|  system ns/frame|sys_ns
timing xtx_ns raw|  AF_XDP transmit alone (bench_xsk_tx)|xsk_tx_ns
timing rest_s 1e9|  the rest (engine, rx TCP input, ACKs)|rest_ns
timing nvcsw 1e3|voluntary ctx switches /1k frames|nvcsw_per_kframe
timing nivcsw 1e3|involuntary ctx switches /1k frames|nivcsw_per_kframe
timing machine_softirq_s 1e9|machine softirq ns/frame|machine_softirq_ns
timing machine_sys_s 1e9|machine system ns/frame (w/o softirq)|machine_sys_ns
timing machine_user_s 1e9|machine user ns/frame (receiver, ...)|machine_user_ns
timing net_rx_softirqs 1|NET_RX softirq runs per frame|net_rx_per_frame
- -|-- transmit vs ACK path (sender JSON; kernel: Tcp.InSegs, write(2)s)
timing kicks 1e3|TX kicks (sendto; kernel write) /1k fr|kicks_per_kframe
timing acks 1e3|ACKs received /1k frames|acks_per_kframe
timing evloop_sleeps 1e3|event-loop sleeps (wake-ups) /1k fr|sleeps_per_kframe
timing evloop_spins 1e3|event-loop spins /1k frames|spins_per_kframe
- -|-- syscalls (strace -c -f, separate short run: counts only, setup included)
strace sc_total 1e3|syscalls /1k frames|syscalls_per_kframe
strace sc_sendto 1e3|  sendto /1k frames|sendto_per_kframe
strace sc_recvfrom 1e3|  recvfrom /1k frames|recvfrom_per_kframe
strace sc_io_uring_enter 1e3|  io_uring_enter /1k frames|io_uring_enter_per_kframe
strace sc_poll 1e3|  poll /1k frames|poll_per_kframe
strace sc_write 1e3|  write /1k frames|write_per_kframe
strace sc_clock_gettime 1e3|  clock_gettime /1k frames|clock_gettime_per_kframe
strace total ack|all syscalls per ACK|syscalls_per_ack
strace recvfrom+recvmsg+io_uring_enter+poll+ppoll+epoll_wait+epoll_pwait+select+pselect6 ack|receive/wait syscalls per ACK|rx_syscalls_per_ack
- -|-- user-space instructions (callgrind, the real sender, --bytes run)
callgrind ir_total 1|Ir/frame, whole program|ir_per_frame
callgrind ir_gen 1|  bench stream generator (fill_words)|ir_gen
callgrind ir_libgso 1|  libgso/ (segment, checksum, flowq, cc)|ir_libgso
callgrind ir_xdp 1|  xdp/ (engine, rings, UMEM)|ir_xdp
callgrind ir_libc 1|  libc (memcpy, memset, ...)|ir_libc
callgrind ir_bench 1|  rest of the bench program|ir_bench
callgrind ir_setup 1|  setup (ld.so, libbpf, libelf)|ir_setup
callgrind ir_other 1|  other|ir_other
callgrind callgrind_acks 1e3|ACKs /1k frames (this slow run)|callgrind_acks_per_kframe'
[ -e "$OUT/cg_fns.tsv" ] || : >"$OUT/cg_fns.tsv"
say ""
awk -F '\t' -v table="$TABLE" -v json="$JSON" -v jout="$OUT/results.json" -v rows="$ROWS" -v offl="$OFFL" '
	FILENAME == ARGV[1] { V[$1, $2] = $3; next }
	{ FN[$1, ++nf[$1]] = $2 "\t" $3 "\t" $4 }       # row, Ir, category, function
	function isnum(v) { return v ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/ }
	function per(r, k, fk, scale,   v, f) {      # V[r,k] * scale / frames of pass fk
		v = V[r, k]; f = V[r, fk "_frames"]
		return (isnum(v) && isnum(f) && f > 0) ? v * scale / f : "-"
	}
	function fmt(v) {
		if (!isnum(v)) return "-"
		if (v >= 100 || v == int(v)) return sprintf("%.0f", v)
		return v >= 10 ? sprintf("%.1f", v) : sprintf("%.2f", v)
	}
	function ratio(a, b) { return (isnum(a) && isnum(b) && b > 0) ? sprintf("%.2f", a / b) : "-" }
	# metric NAME: one table line: every row, then each libgso row / kernel.
	function metric(name, key,   i, line, v) {
		line = sprintf("%-40s", name)
		for (i = 1; i <= nr; i++) line = line sprintf(" %9s", fmt(M[R[i]]))
		for (i = 1; i < nr; i++) line = line sprintf(" %7s", ratio(M[R[i]], M["kernel"]))
		print line
		for (i = 1; i <= nr; i++) J[R[i]] = J[R[i]] sprintf(", \"%s\": %s", key, isnum(M[R[i]]) ? M[R[i]] + 0 : "null")
	}
	# per_ack NAMES: calls of these syscalls in the strace run, per ACK it received.
	function per_ack(names,   i, r, k, n, sx, KW) {
		n = split(names, KW, " ")
		for (i = 1; i <= nr; i++) {
			r = R[i]; sx = 0
			for (k = 1; k <= n; k++) if (isnum(V[r, "sc_" KW[k]])) sx += V[r, "sc_" KW[k]]
			M[r] = (isnum(V[r, "sc_total"]) && V[r, "strace_acks"] > 0) ? sx / V[r, "strace_acks"] : "-"
		}
	}
	function fill(k, fk, scale,   i) { for (i = 1; i <= nr; i++) M[R[i]] = per(R[i], k, fk, scale) }
	function raw(k,   i) { for (i = 1; i <= nr; i++) M[R[i]] = V[R[i], k] }
	function sum2(a, b, fk, scale,   i, r, x, y) {
		for (i = 1; i <= nr; i++) {
			r = R[i]; x = per(r, a, fk, scale); y = per(r, b, fk, scale)
			M[r] = (isnum(x) && isnum(y)) ? x + y : "-"
		}
	}
	END {
		nr = split(rows, R, " ")
		head = sprintf("%-40s", "per frame (1 frame = 1 MTU segment)")
		for (i = 1; i <= nr; i++) head = head sprintf(" %9s", R[i] == "kernel" ? "kernel" : R[i])
		for (i = 1; i < nr; i++) head = head sprintf(" %7s", substr(R[i], 1, 4) "/k")
		print head
		nt = split(table, T, "\n")
		for (t = 1; t <= nt; t++) {
			split(T[t], P, "|"); split(P[1], Q, " ")
			if (Q[1] == "-") { print P[2]; continue }
			if (Q[3] == "raw") raw(Q[2])
			else if (Q[3] == "sum") { split(Q[2], S2, "+"); sum2(S2[1], S2[2], Q[1], 1e9) }
			else if (Q[3] == "ack") { gsub(/\+/, " ", Q[2]); per_ack(Q[2]) }
			else fill(Q[2], Q[1], Q[3] + 0)
			metric(P[2], P[3])
		}
		print ""
		print "top functions by self Ir/frame (callgrind run):"
		for (i = 1; i <= nr; i++) {
			r = R[i]; n = nf[r]
			# selection of the 8 largest
			for (a = 1; a <= n; a++) { split(FN[r, a], x, "\t"); IR[a] = x[1]; CAT[a] = x[2]; NAME[a] = x[3]; used[a] = 0 }
			line = sprintf("  %-9s", r); f = V[r, "callgrind_frames"]
			for (t = 1; t <= 8 && t <= n; t++) {
				best = 0
				for (a = 1; a <= n; a++) if (!used[a] && (best == 0 || IR[a] + 0 > IR[best] + 0)) best = a
				used[best] = 1
				if (f > 0) line = line sprintf(" %s %.0f (%s);", NAME[best], IR[best] / f, CAT[best])
			}
			print line
		}
		print ""
		print "what each cost is:"
		print "  sender CPU    the sender process (rusage, all threads). The user/system split is tick-sampled"
		print "                (no precise per-mode accounting on this kernel config): trust the sum, and callgrind"
		print "                for user space. Its system time holds the AF_XDP transmit (sendto: skb per frame,"
		print "                copy, dev_direct_xmit, veth_xmit) and whatever softirq runs on its CPU when it"
		print "                re-enables bottom halves: on a veth that is the receiver'"'"'s TCP input and the"
		print "                XDP program + AF_XDP receive copy of our ACKs."
		print "  transmit alone  bench_xsk_tx after the run (UDP super-segments of 46 frames: the library'"'"'s"
		print "                segmentation and copy, then the same copy-mode kernel path: copy+sw, copy+csum,"
		print "                sg+csum for multibuf) into a veth whose peer drops every frame at once: what"
		print "                putting a frame on the wire costs, in user space and the kernel.  The rest is the"
		print "                sender CPU beyond it: the TCP engine, the receiver'"'"'s TCP input and our ACKs'"'"'"
		print "                XDP + AF_XDP receive, which run in softirq on the sender'"'"'s CPU."
		print "  gen           the bench stream generator (both senders fill the same stream: not the library)."
		print "  ctx switches  voluntary: the sender slept (event-loop sleeps, blocking write); involuntary: it was"
		print "                preempted (the receiver or ksoftirqd woken on its CPU)."
		print "  machine       /proc/stat over the sender'"'"'s life, all CPUs, so it includes the receiver and any"
		print "                other load on the machine: compare rows of one run only."
		print "  NET_RX runs   softirq invocations (/proc/softirqs) per frame: about 1 means every frame reaches"
		print "                the veth in a bottom-half section of its own (nothing to batch or merge for GRO)."
		print "  TX kicks      sendto(2) wake-ups of the AF_XDP TX ring (the kernel copies at most its budget,"
		print "                32 frames, per call); kernel row: write(2) calls of 128 KiB."
		print "  ACKs          ACK frames the sender processed (libgso: via XDP redirect + AF_XDP receive, each"
		print "                one copied into the UMEM; kernel: Tcp.InSegs, handled in softirq, no syscall)."
		print "  syscalls      counted by strace in a separate short run (timing there is not used)."
		print "  Ir            user-space instructions per frame of the same sender under callgrind, by source"
		print "                file of each function (inlined system-header code goes with its function)."
		print "                Under valgrind the receiver ACKs the slow sender more often than at speed, so"
		print "                per-ACK work (gsoi_engine_stream_input, gso_flowq__ack, gsoi_tcp_key_hash) weighs more here."
		printf "  here: sender CPU/frame"
		for (i = 1; i < nr; i++) printf " %s %sx", R[i], ratio(per(R[i], "user_s", "timing", 1) + per(R[i], "sys_s", "timing", 1), per("kernel", "user_s", "timing", 1) + per("kernel", "sys_s", "timing", 1))
		printf " the kernel'"'"'s; NET_RX runs/frame %s vs kernel %s; user Ir/frame without the generator:",
		       fmt(per(R[1], "net_rx_softirqs", "timing", 1)), fmt(per("kernel", "net_rx_softirqs", "timing", 1))
		for (i = 1; i <= nr; i++) {
			a = per(R[i], "ir_total", "callgrind", 1); b = per(R[i], "ir_gen", "callgrind", 1)
			printf " %s %s", R[i], (isnum(a) && isnum(b)) ? fmt(a - b) : "-"
		}
		print ""
		printf "" > jout
		for (i = 1; i <= nr; i++) {
			r = R[i]
			l = sprintf("{\"tool\": \"bench_frame_cost\", \"sender\": \"%s\", \"verified\": \"%s\", \"offload\": \"%s\"%s}",
				    r == "kernel" ? "kernel per-MTU" : "libgso " r, V[r, "verified"], offl, J[r])
			print l >> jout
			if (json) print l
			# "-": the mode is not available here (exit 77), not a failure.
			if (V[r, "verified"] != "yes" && V[r, "verified"] != "-") bad = 1
		}
		exit bad
	}' "$FACTS" "$OUT/cg_fns.tsv"
rc=$?
exit $rc
