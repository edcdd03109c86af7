# Plot of a bench/testbed/demo.sh run (and of bench/tso_plot.sh): goodput and sender CPU per GB per mode.
#
#   gnuplot -e "datafile='results.tsv'; outfile='demo.png'; term='pngcairo'" bench/plot.gp
#
# datafile: tab-separated, '#' comment lines skipped; columns
#   1 index  2 label  3 goodput Gbit/s  4 sender CPU-s/GB  (5.. ignored here)
# ccol: a column to append to each bar's label (demo.sh: 12, the congestion control)
# gcol: another, shown as "gro X" (demo.sh: 15, the receiving veth's GRO)
# term: pngcairo (default), png or svg -- demo.sh picks what this gnuplot has.

if (!exists("ccol")) ccol = 0
if (!exists("gcol")) gcol = 0
ccname(x) = ccol > 0 ? stringcolumn(2)." ".stringcolumn(ccol) : stringcolumn(2)
barname(x) = gcol > 0 ? ccname(0)." gro ".stringcolumn(gcol) : ccname(0)
if (!exists("term")) term = "pngcairo"
if (!exists("outfile")) outfile = "demo.png"
if (!exists("title")) title = "libgso bench: all modes in one run, side by side"
if (!exists("gtitle")) gtitle = "goodput (receiver's count, every byte verified)"

if (term eq "svg") {
	set terminal svg size 1400,620 dynamic font "sans,11"
} else {
	if (term eq "png") {
		set terminal png size 1400,620
	} else {
		set terminal pngcairo size 1400,620 font "sans,10"
	}
}
set output outfile
# Mode names carry underscores (af_xdp): print them as they are.
set termoption noenhanced
set datafile separator "\t"
set datafile missing "-"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.8
set grid ytics
set xtics rotate by -60 nomirror font ",8"
set yrange [0:*]
set bmargin 12

set multiplot layout 1,2 title title
set title gtitle
set ylabel "Gbit/s"
plot datafile using 3:xtic(barname(0)) notitle linecolor rgb "#4477aa"
set title "sender CPU per GB sent (lower is better)"
set ylabel "CPU-seconds / GB"
plot datafile using 4:xtic(barname(0)) notitle linecolor rgb "#cc6677"
unset multiplot
