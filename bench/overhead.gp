# SPDX-License-Identifier: GPL-2.0-only
# overhead.gp - bench/overhead.svg: added cost per slab event of each tracing method.
# Variables (gnuplot -e): datadir (holds overhead.dat, written by scripts/bench-render), out.
set terminal svg size 760,420 dynamic font "sans,12"
set output out
set title "Added cost per slab event (guest instructions, qemu -icount)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel "instructions per event"
set grid ytics
set key top left
set yrange [0:*]
set xtics nomirror
plot for [c=2:3] datadir."/overhead.dat" using c:xtic(1) title columnheader(c)
