# SPDX-License-Identifier: GPL-2.0-only
# drain.gp - bench/drain.svg: events dropped and kmemtraced's CPU use as the load rises.
# Variables (gnuplot -e): datadir, out, series (data file names, space-separated, written
# by scripts/bench-render: target achieved dropped% daemon_cpu% per line), titles (same
# order, space-separated, no spaces inside a title).
set terminal svg size 900,440 dynamic font "sans,12"
set output out
set multiplot layout 1,2 title "kmemtraced draining kmemtrace\\_bench.ko's paced load (one CPU, qemu -icount)"
set logscale x
set format x "%.0s%c"
set xlabel "target slab events / s per CPU"
set grid
set key top left font ",10"
set ylabel "records dropped (%)"
set yrange [0:100]
plot for [i=1:words(series)] datadir."/".word(series, i) using 1:3 with linespoints title word(titles, i)
set ylabel "kmemtraced CPU (%)"
set yrange [0:*]
plot for [i=1:words(series)] datadir."/".word(series, i) using 1:4 with linespoints title word(titles, i)
unset multiplot
