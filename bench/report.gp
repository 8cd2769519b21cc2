# SPDX-License-Identifier: GPL-2.0-only
# report.gp - bench/report.svg: events per CPU second of the readers, per trace size.
# Variables (gnuplot -e): datadir (holds report.dat, written by scripts/bench-render), out,
# nsizes (number of trace sizes: report.dat's columns after the first).
set terminal svg size 760,420 dynamic font "sans,12"
set output out
set title "Trace readers: million events per CPU second (one thread)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel "M events / s"
set grid ytics
set key top right
set yrange [0:*]
plot for [c=2:int(nsizes)+1] datadir."/report.dat" using c:xtic(1) title columnheader(c), \
	20 with lines dashtype 2 lw 2 lc rgb "red" title "target 20 M/s"
