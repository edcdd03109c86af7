#!/bin/sh
# bench/bench_relay.sh [BUILD_DIR] [--quick] [--json] -- run by `make bench`.
#
# libgso's TCP sender against kernel TCP through the impairment relay, like
# with like: in one run, with the same faults for every sender, libgso BBR,
# kernel BBR, libgso CUBIC and kernel CUBIC (in that order, per fault
# setting), 8 s each (2 s with --quick), at
#     0 % loss, 20 ms one-way delay            (impair relay --delay 20)
#     1 % loss, 20 ms +- 5 ms one-way delay    (--loss 1 --delay 20 --jitter 5)
# Every byte of every row is verified by bench/receiver (stock Linux TCP).
# Printed: a row per sender (goodput, retransmitted segments per MB
# delivered, congestion control, offloads, receiver), then libgso/kernel
# ratios side by side; with --json also one JSON line per row and a summary
# line (all of them are in BUILD_DIR/bench_relay/results.json either way).
#
# The test-bed, the runs and the relay are the demo's (bench/testbed/common/demobed.sh):
# the sending veth rS has tso off, gso off (so the relay's faults hit single
# segments, as on a real path); kernel TCP builds its packets as usual and
# the stack segments them before the veth; libgso (sender --mode software,
# AF_XDP) segments and checksums them itself.  Both meet the same relay and
# the same receiver on rR.  Kernel TCP's send buffer may grow to the
# receiver's tcp_rmem max (the 4 MiB default held it back at 20 ms); each
# kernel row says how long its send buffer still limited it.
#
# The libgso sender's timeline (every 0.5 s: goodput, cwnd, pacing rate,
# BBR's mode, bw and min RTT) is in BUILD_DIR/bench_relay/run*.sender.err.
#
# Needs root (namespaces, veths); as non-root it says so and exits 0.
# Exit 1 when a row is not verified.
set -u

B=build
case ${1:-} in
-*) ;; # options only: the default build folder
?*) B=$1; shift ;;
esac
SECS=8
JSON=0
for a in "$@"; do
	case $a in
	--quick) SECS=2 ;;
	--json) JSON=1 ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0 ;;
	*) printf 'bench_relay: unknown option %s (--quick, --json)\n' "$a" >&2; exit 2 ;;
	esac
done
OUT="$B/bench_relay"
TAG="gsob$$"
SEED=20180601
# shellcheck source=bench/testbed/common/demobed.sh
. "$(dirname "$0")/testbed/common/demobed.sh"

bed_bench_root bench_relay
if [ ! -x "$B/bench/sender" ] || [ ! -x "$B/bench/impair" ]; then
	die "$B/bench/sender or impair missing: run 'make' first"
fi
bed_setup
SCEN="$OUT/scenarios.tsv"
: >"$SCEN"

say "bench_relay: libgso vs kernel TCP through bench/impair relay, ${SECS} s per sender, stream seed $SEED"
for s in "0 % loss, 20 ms|--delay 20" "1 % loss, 20 ms +- 5 ms|--loss 1 --delay 20 --jitter 5"; do
	name=${s%%|*}
	# shellcheck disable=SC2086
	relay_start ${s#*|} || exit 1
	say "  $name: $RELAY_SETTINGS"
	offl=$(offload_text rS)
	for cc in bbr cubic; do
		run_one "libgso software" relay "$offl" "$cc" "$B/bench/sender" --mode software --progress
		printf '%s\t%s\tlibgso\n' "$RUN" "$name" >>"$SCEN"
		run_one "kernel" relay "$offl" "$cc" "$B/bench/kernel_sender"
		printf '%s\t%s\tkernel\n' "$RUN" "$name" >>"$SCEN"
	done
	relay_stop
	# The relay's own count of what it did to this setting's traffic.
	rj=$(grep '^{' "$OUT/relay.json" | tail -n 1)
	printf '%s\t%s\trelay\t%s\n' "-" "$name" "$rj" >>"$SCEN"
done

# Per row: the libgso sender's model (BBR) and window at the end, for whoever tunes it.
: >"$OUT/extra.tsv"
while IFS="$(printf '\t')" read -r run name who _; do
	sj="$OUT/run$run.sender.json"
	if [ "$who" = kernel ]; then
		printf '%s\tkernel\t%s\t%s\n' "$run" "$(jget "$sj" ti_sndbuf_limited_us)" "$(jget "$sj" ti_snd_cwnd)" >>"$OUT/extra.tsv"
		continue
	fi
	[ "$who" = libgso ] || continue
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$run" "$(jobj "$sj" bbr mode)" "$(jobj "$sj" bbr bw_gbps)" \
		"$(jobj "$sj" bbr min_rtt_us)" "$(jget "$sj" cwnd_end)" "$(jget "$sj" pacing_rate_gbps_end)" \
		"$(jget "$sj" rto)" "$(jget "$sj" delivery_rate_gbps_end)" >>"$OUT/extra.tsv"
done <"$SCEN"

say ""
awk -F '\t' -v json="$JSON" -v secs="$SECS" -v jout="$OUT/results.json" -v snd="$(sender_text)" '
	FILENAME == ARGV[1] { if ($1 != "-") { scen[$1] = $2; who[$1] = $3 } else relay[$2] = $4; next }
	FILENAME == ARGV[2] { ex[$1] = $0; next }
	/^#/ { next }
	{
		r = $1; n++; row[n] = r
		lab[r] = $2; gp[r] = $3; rt[r] = $6; ver[r] = $7; offl[r] = $9; st[r] = $10; cc[r] = $12
		by[r] = $13; rx[r] = $14
		mb = (by[r] ~ /^[0-9]+$/ && by[r] > 0) ? by[r] / 1e6 : 0
		rpm[r] = (mb > 0 && rt[r] ~ /^[0-9]+$/) ? rt[r] / mb : -1
		key = scen[r] SUBSEP cc[r]
		if (!(key in seenk)) { seenk[key] = 1; keys[++nk] = key }
		if (who[r] == "libgso") L[key] = r; else K[key] = r
	}
	function q(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
	function num(v) { return v ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/ ? v + 0 : "null" }
	function ratio(a, b) { return (a ~ /^[0-9.e+-]+$/ && b ~ /^[0-9.e+-]+$/ && b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }
	END {
		fmt = "%-26s %-16s %-6s %9s %9s %8s  %-8s %s\n"
		printf fmt, "setting", "sender", "cc", "Gbit/s", "retrans", "retr/MB", "verified", "libgso end state"
		for (i = 1; i <= n; i++) {
			r = row[i]
			split(ex[r], e, "\t")
			state = ""
			if (who[r] == "kernel" && e[2] == "kernel")
				state = sprintf("cwnd %s, send buffer limited %.1f s", e[4], e[3] / 1e6)
			if (who[r] == "libgso")
				state = sprintf("cwnd %s, pacing %s Gbit/s, rto %s%s", e[5], e[6] == "-" ? "-" : sprintf("%.3f", e[6]), e[7],
						e[2] == "-" ? "" : sprintf("; bbr %s, bw %.3f Gbit/s, min_rtt %.0f us", e[2], e[3], e[4]))
			printf fmt, scen[r], lab[r], cc[r], gp[r] == "-" ? "-" : sprintf("%.3f", gp[r]), rt[r],
			       rpm[r] < 0 ? "-" : sprintf("%.2f", rpm[r]), ver[r], state
			if (ver[r] != "yes") { printf "    ^ %s\n", st[r]; bad = 1 }
		}
		print ""
		fmt2 = "%-26s %-6s %11s %11s %8s   %11s %11s %8s\n"
		printf fmt2, "setting", "cc", "libgso Gb/s", "kernel Gb/s", "ratio", "libgso r/MB", "kernel r/MB", "ratio"
		for (k = 1; k <= nk; k++) {
			key = keys[k]; l = L[key]; kk = K[key]
			split(key, sk, SUBSEP)
			printf fmt2, sk[1], sk[2], sprintf("%.3f", gp[l]), sprintf("%.3f", gp[kk]), ratio(gp[l], gp[kk]),
			       rpm[l] < 0 ? "-" : sprintf("%.2f", rpm[l]), rpm[kk] < 0 ? "-" : sprintf("%.2f", rpm[kk]),
			       (rpm[l] >= 0 && rpm[kk] > 0) ? ratio(rpm[l], rpm[kk]) : "-"
		}
		print ""
		print "offloads: " offl[row[1]] " on the sending veth rS, for every row (libgso: AF_XDP software mode,"
		print "          it segments and checksums itself; kernel TCP: the stack segments before the veth)"
		print "receiver: " rx[row[1]]
		print snd "; kernel end state: time its send buffer limited it"
		print "goodput: verified bytes at the receiver / time; retr/MB: retransmitted segments per 10^6 bytes"
		print "delivered (kernel: Tcp.RetransSegs of the sender namespace); ratio: libgso / kernel, same run."
		printf "" > jout
		for (i = 1; i <= n; i++) {
			r = row[i]
			split(ex[r], e, "\t")
			line = sprintf("{\"tool\": \"bench_relay\", \"setting\": %s, \"sender\": %s, \"cc\": %s, \"seconds\": %d, " \
				       "\"goodput_gbps\": %s, \"retrans\": %s, \"retrans_per_mb\": %s, \"bytes_verified\": %s, " \
				       "\"verified\": %s, \"offload\": %s, \"receiver\": %s, \"kernel_sndbuf\": %s", q(scen[r]), q(who[r]), q(cc[r]), secs,
				       num(gp[r]), num(rt[r]), rpm[r] < 0 ? "null" : sprintf("%.4f", rpm[r]), num(by[r]),
				       ver[r] == "yes" ? "true" : "false", q(offl[r]), q(rx[r]), q(snd))
			if (who[r] == "kernel" && e[2] == "kernel")
				line = line sprintf(", \"cwnd_end\": %s, \"sndbuf_limited_s\": %s", num(e[4]),
						    e[3] ~ /^[0-9]+$/ ? sprintf("%.3f", e[3] / 1e6) : "null")
			if (who[r] == "libgso")
				line = line sprintf(", \"cwnd_end\": %s, \"pacing_rate_gbps_end\": %s, \"rto\": %s, " \
						    "\"delivery_rate_gbps_end\": %s, \"bbr_mode\": %s, \"bbr_bw_gbps\": %s, \"bbr_min_rtt_us\": %s",
						    num(e[5]), num(e[6]), num(e[7]), num(e[8]), e[2] == "-" ? "null" : q(e[2]), num(e[3]), num(e[4]))
			line = line "}"
			print line >> jout
			if (json) print line
		}
		line = "{\"tool\": \"bench_relay\", \"summary\": ["
		for (k = 1; k <= nk; k++) {
			key = keys[k]; l = L[key]; kk = K[key]
			split(key, sk, SUBSEP)
			line = line sprintf("%s{\"setting\": %s, \"cc\": %s, \"libgso_gbps\": %s, \"kernel_gbps\": %s, " \
					    "\"goodput_ratio\": %s, \"libgso_retrans_per_mb\": %s, \"kernel_retrans_per_mb\": %s, " \
					    "\"relay\": %s}", k > 1 ? ", " : "", q(sk[1]), q(sk[2]), num(gp[l]), num(gp[kk]),
					    num(ratio(gp[l], gp[kk])), rpm[l] < 0 ? "null" : sprintf("%.4f", rpm[l]),
					    rpm[kk] < 0 ? "null" : sprintf("%.4f", rpm[kk]), relay[sk[1]] == "" ? "null" : relay[sk[1]])
		}
		line = line "]}"
		print line >> jout
		if (json) print line
		exit bad
	}' "$SCEN" "$OUT/extra.tsv" "$TSV"
rc=$?
say "results: $OUT/results.json, $TSV (per run: $OUT/run*.json; libgso timelines: run*.sender.err)"
exit $rc
