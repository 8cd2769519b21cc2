#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# guest-memory.sh - part 5 of make bench, run in the kmemtrace-vm guest: kmemtraced's peak
# resident memory for traces of different lengths.
#
# Usage (in the guest, kmemtrace.ko loaded start_disabled=1, kmemtrace_bench.ko loaded,
# kmt-peakrss on PATH): guest-memory.sh THP REPS PAIRS...
#   THP    comma-separated transparent hugepage modes to run every PAIRS under, in turn
#          (never, always, madvise; "default" leaves the kernel's as it booted)
#   REPS   runs of each PAIRS in each mode, one after the other
#   PAIRS  kmalloc/kfree pairs per CPU of one traced run of kmemtrace_bench (run); 0 traces
#          a second of an idle guest instead
# Each run is kmemtraced -- (the workload), draining to tmpfs, under kmt-peakrss, which reads
# kmemtraced's VmHWM (the kernel's high-water mark of its resident set) as it exits.
# Writes $KMT_OUT/memory.tsv, one line per run (REPS lines for each THP and PAIRS):
#   cpus thp pairs written dropped bytes vmhwm_kb rss_exit_kb rss_anon_kb rss_file_kb status
# thp: the transparent hugepage mode of the run (the bracketed word of
# /sys/kernel/mm/transparent_hugepage/enabled, empty without THP);
# written/dropped: records kmemtrace.ko wrote and dropped meanwhile (all CPUs); bytes: the
# cpuN.out files' size; the kB figures come from /proc/PID/status at kmemtraced's exit;
# status: kmemtraced's (the script exits 3 when one is not 0).

set -u
B=/sys/kernel/debug/kmemtrace_bench
K=${KMT_DEBUGFS:-/sys/kernel/debug/kmemtrace}
out=${KMT_OUT:-/tmp}
tsv=$out/memory.tsv
work=/tmp/memory
ncpus=$(nproc)

say() {
	echo "guest-memory: $*" >&2
}

[ -d "$B" ] || { say "kmemtrace_bench.ko is not loaded"; exit 3; }
[ -d "$K" ] || { say "kmemtrace.ko is not loaded"; exit 3; }
thp_modes=$1
reps=$2
shift 2
mkdir -p "$work"
: >"$tsv"
thp_file=/sys/kernel/mm/transparent_hugepage/enabled

kmt_stat() {
	awk -v col="$1" '$1 != "#" { s += $col } END { print s + 0 }' "$K/stats"
}

# The value in kB of one line of the status copy.
field() {
	awk -v k="$1:" '$1 == k { print $2; exit }' "$work/status"
}

# one_run PAIRS: one traced run under kmt-peakrss; appends its line to the TSV.
one_run() {
	pairs=$1
	rm -rf "$work/t" "$work/status"
	if [ "$pairs" = 0 ]; then cmd="sleep 1"; else cmd="echo $pairs > $B/run"; fi
	w0=$(kmt_stat 3)
	d0=$(kmt_stat 4)
	kmt-peakrss "$work/status" kmemtraced -q -f -o "$work/t" -- sh -c "$cmd"
	st=$?
	written=$(($(kmt_stat 3) - w0))
	dropped=$(($(kmt_stat 4) - d0))
	bytes=$(cat "$work"/t/cpu*.out | wc -c)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$ncpus" "$thp" "$pairs" "$written" \
		"$dropped" "$bytes" "$(field VmHWM)" "$(field VmRSS)" "$(field RssAnon)" \
		"$(field RssFile)" "$st" >>"$tsv"
	say "cpus $ncpus thp $thp pairs $pairs: written $written dropped $dropped bytes $bytes" \
		"VmHWM $(field VmHWM) kB, status $st"
	[ "$st" = 0 ] || failed=1
}
failed=0

for thp in $(echo "$thp_modes" | tr , ' '); do
	if [ "$thp" != default ] && ! echo "$thp" >"$thp_file"; then
		say "cannot set transparent hugepages to $thp"
		exit 3
	fi
	thp=$(sed 's/.*\[\(.*\)\].*/\1/' "$thp_file" 2>/dev/null)
	for pairs in "$@"; do
		i=0
		while [ "$i" -lt "$reps" ]; do
			one_run "$pairs"
			i=$((i + 1))
		done
	done
done
rm -rf "$work"
[ "$failed" = 0 ] || { say "a run failed"; exit 3; }
say "done"
