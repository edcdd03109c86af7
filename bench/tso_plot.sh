#!/bin/sh
# bench/tso_plot.sh BUILD_DIR [bench_tso options...]
#
# Runs bench_tso (offload vs software GSO, issue 5's experiment), keeps its
# table in BUILD_DIR/bench/tso.txt and plots each table (paced 940 Mbit/s,
# and unpaced maximum) with bench/plot.gp: goodput and sender-core CPU
# seconds per GB per mode, side by side.  Writes BUILD_DIR/bench/tso-paced.png
# and tso-max.png (svg where gnuplot has no png terminal); without gnuplot
# it prints the table only.
set -u
B=${1:-build}
[ $# -gt 0 ] && shift
out="$B/bench"
"$B/bench/bench_tso" "$@" | tee "$out/tso.txt"
st=$?
command -v gnuplot >/dev/null 2>&1 || { echo "tso_plot: no gnuplot, no plot"; exit $st; }
term=pngcairo ext=png
gnuplot -e "set terminal pngcairo" >/dev/null 2>&1 || { term=png; gnuplot -e "set terminal png" >/dev/null 2>&1 || { term=svg; ext=svg; }; }
for target in paced max; do
	# Rows: "<target> <mode words...> Gbit/s snd_s/GB vs_sw core0 dev loss".
	awk -v t="$target" 'BEGIN { OFS = "\t" }
		$1 == t && NF >= 8 && $(NF-5) ~ /^[0-9.]+$/ {
			mode = $2; for (i = 3; i <= NF - 6; i++) mode = mode " " $i
			print ++n, mode, $(NF-5), $(NF-4)
		}' "$out/tso.txt" > "$out/tso-$target.tsv"
	[ -s "$out/tso-$target.tsv" ] || continue
	gnuplot -e "datafile='$out/tso-$target.tsv'; outfile='$out/tso-$target.$ext'; term='$term'; title='bench_tso ($target): offload vs software GSO, sender core'; gtitle='payload delivered to the receiving socket'" bench/plot.gp &&
		echo "plot: $out/tso-$target.$ext"
done
exit $st
