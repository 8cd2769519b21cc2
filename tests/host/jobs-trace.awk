# SPDX-License-Identifier: GPL-2.0-only
# jobs-trace.awk - a kmemtrace-gen --script of N iterations on 3 CPUs whose answers depend on the
# records' order (29-report-jobs.t): frees 40 allocations later, some on another CPU, a double
# free every 97th, a free of an unseen object every 101st, an address allocated again while live
# every 211th, cache objects freed by kfree and the reverse, lost records, uneven gaps.
# Usage: awk -v N=ITERATIONS -f jobs-trace.awk
BEGIN {
	n = N + 0; k = 40
	print "cache_desc 0 0x7000 96 96 jobs_cache"
	for (i = 0; i < n; i++) {
		cpu = i % 3
		site = sprintf("0xffffffff81%06x", 4096 + (i % 8) * 64)
		addr = sprintf("0xffff888000%06x", 4096 + (i % 4000) * 64)
		if (i % 5 == 0)
			printf "cache_alloc %d %s %s 0x7000 80 96\n", cpu, site, addr
		else
			printf "kmalloc %d %s %s %d %d\n", cpu, site, addr, 8 + i % 200, 256
		if (i % 211 == 0)	# allocated again while live: its free was not traced
			printf "kmalloc %d %s %s 16 16\n", (cpu + 1) % 3, site, addr
		if (i >= k) {
			j = i - k
			fa = sprintf("0xffff888000%06x", 4096 + (j % 4000) * 64)
			fs = sprintf("0xffffffff82%06x", 4096 + (j % 6) * 64)
			fc = (j + (j % 7 == 0)) % 3	# some freed on another CPU
			if (j % 5 == 0)
				printf "cache_free %d %s %s 0x7000\n", fc, fs, fa
			else
				printf "kfree %d %s %s\n", fc, fs, fa
			if (j % 97 == 0)	# a double free
				printf "kfree %d %s %s\n", (fc + 1) % 3, fs, fa
		}
		if (i % 101 == 0)	# a free of an object never seen
			printf "kfree %d 0xffffffff82000040 0xffff889000%06x\n", cpu, i
		if (i % 1000 == 999)
			printf "lost %d 7\n", cpu
		if (i % 50 == 0)
			printf "wait %d\n", (i * 7919) % 100000
	}
}
