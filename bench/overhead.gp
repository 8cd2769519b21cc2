# SPDX-License-Identifier: GPL-2.0-only
# overhead.gp - bench/overhead.svg: added cost per slab event of each tracing method, per kernel.
# Variables (gnuplot -e): datadir (holds overhead-module.dat and overhead-user.dat, written by
# scripts/bench-render: a method a line, a kernel a column), out, nkernels (columns after the
# first).
set terminal svg size 980,440 dynamic font "sans,12"
set output out
set multiplot layout 1,2 title "Added cost per slab event, by kernel (guest instructions, qemu -icount)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel "instructions per event"
set grid ytics
set key top left font ",10"
set yrange [0:*]
set xtics nomirror rotate by -20 font ",10"
set title "kmemtrace\\_bench.ko (kmalloc/kfree loop)"
plot for [c=2:int(nkernels)+1] datadir."/overhead-module.dat" using c:xtic(1) title columnheader(c)
set title "kmt-alloc-load (files, sockets, pipes)"
plot for [c=2:int(nkernels)+1] datadir."/overhead-user.dat" using c:xtic(1) title columnheader(c)
unset multiplot
