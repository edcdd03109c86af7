# Plot of a bench/bench_e2e.sh run: per row and receiver GRO setting, the
# median goodput with its min-max over rounds, and the median sender CPU per
# GB split into the process's own time and its CPU's softirq time.
#
#   gnuplot -e "datafile='summary.tsv'; outfile='bench_e2e.png'; term='pngcairo'" bench/bench_e2e.gp
#
# datafile: tab-separated, as bench_e2e.sh writes it:
#   1 index  2 label  3-5 goodput Gbit/s median, min, max
#   6 process CPU-s/GB median  7 softirq CPU-s/GB median  8-10 sum median, min, max
# term: pngcairo (default), png or svg; subtitle: appended to the title.

if (!exists("term")) term = "pngcairo"
if (!exists("outfile")) outfile = "bench_e2e.png"
if (!exists("subtitle")) subtitle = ""

if (term eq "svg") {
	set terminal svg size 1400,640 dynamic font "sans,11"
} else {
	if (term eq "png") {
		set terminal png size 1400,640
	} else {
		set terminal pngcairo size 1400,640 font "sans,10"
	}
}
set output outfile
set termoption noenhanced
set datafile separator "\t"
set style fill solid 0.8 border -1
set boxwidth 0.8
set grid ytics
set xtics rotate by -60 nomirror font ",8"
set yrange [0:*]
set bmargin 13
set key top left

set multiplot layout 1,2 title "bench_e2e: medians of interleaved rounds (".subtitle.")"
set title "goodput, median and min-max (receiver's count, every byte verified)"
set ylabel "Gbit/s"
set style data histograms
set style histogram errorbars gap 1 lw 1
plot datafile using 3:4:5:xtic(2) notitle linecolor rgb "#4477aa"
set title "sender CPU per GB (lower is better), medians"
set ylabel "CPU-seconds / GB"
set style histogram rowstacked
plot datafile using 6:xtic(2) title "process (user+sys)" linecolor rgb "#cc6677", \
     '' using 7 title "softirq of the sender's CPU" linecolor rgb "#ddcc77"
unset multiplot
