#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# guest-overhead.sh - parts 1, 4, 6 and 8 of make bench, run in the kmemtrace-vm guest: the same
# allocation workloads timed untraced, under kmemtrace, ftrace and perf record, with the size
# of what each tracer kept.
#
# Usage (in the guest, as the kmemtrace-vm COMMAND, with kmemtrace.ko loaded start_disabled=1
# and kmemtrace_bench.ko loaded):
#   guest-overhead.sh [--workloads LIST] [--batch B] PAIRS ITERATIONS ROUNDS [METHOD...]
#   LIST        space-separated workloads, in this order each round (default "module user
#               messaging"):
#               module      kmemtrace_bench run: kmalloc/kfree pairs (slab tracepoints)
#               cache       kmemtrace_bench run: kmem_cache_alloc/free pairs on its own cache
#                           (tracepoints)
#               bulk        kmemtrace_bench run: kmem_cache_alloc_bulk + kmem_cache_free_bulk
#                           of B objects at a time (kmemtrace's kprobes and kretprobes)
#               kfree_bulk  the same, freed with kfree_bulk
#               bulk1       bulk with one object a call: the probes' cost per call, undivided
#               nolock      kmemtrace_bench run: kmalloc_nolock/kfree_nolock pairs (kprobes;
#                           left out, with a note, where the kernel has no such calls)
#               user        kmt-alloc-load, one copy pinned to each CPU
#               messaging   perf bench sched messaging (-g 1 -l LOOPS): a workload nobody
#                           here wrote, processes passing messages over socket pairs (left
#                           out, with a note, where the guest has no perf)
#   B           objects per bulk call (default 16)
#   PAIRS       objects allocated and freed per CPU by the module workloads
#   ITERATIONS  iterations of kmt-alloc-load per CPU (one copy pinned to each CPU)
#   ROUNDS      every method runs every workload once per round, methods taking turns, after
#               one warm-up round (a kernel's first runs fill its slab caches, and more):
#               the warm-up's lines go to $KMT_OUT/warmup.tsv instead, round 0
#   METHOD      none: untraced
#               kmemtrace: kmemtraced -- WORKLOAD, draining to a file in tmpfs
#               kmemtrace-base: kmemtrace as above with an earlier commit's module and
#                 kmemtraced ($KMT_FILES/kmemtrace-base.ko and kmemtraced-base, which
#                 bench-guest builds from KMT_BENCH_BASE), ours reloaded after each run
#               kmemtrace-probe: tracing on, no daemon: the probes' cost alone (the buffers
#                 must hold the whole run: check that lost is 0)
#               kmemtrace-probe-base: the same with the earlier commit's module
#                 ($KMT_FILES/kmemtrace-base.ko), ours reloaded after each run
#               kmemtrace-filter-out: the same with a filter at the source that no event
#                 matches (tgid=2147483647, a process no kernel has): what an event the
#                 filter leaves out costs (an allocation's check, a free's table lookup)
#               kmemtrace-filter-in: the same with a filter every event matches (size=0-):
#                 recorded, plus the tracking table's insert and remove
#               write-floor: no tracing: write(2) of as many bytes as the kmemtrace method's
#                 run of this round and workload wrote (it must come before), to a file in
#                 the same tmpfs, in sub-buffer-sized calls, once that run's trace is
#                 removed (as kmemtrace's run found the one before it removed): what the
#                 kernel takes for the writes of that drain alone (kmt-alloc-load --write),
#                 timed by itself
#               ftrace: the kernel's kmem events into the ftrace ring buffer, no reader
#               perf: perf record -a of the same four kmem events
#               perf-all: perf record -a -e 'kmem:*' (page events and more)
#               kmemtrace-stacksN: kmemtrace as above with kernel stacks, kmemtrace.ko
#                 reloaded with stack_depth=N stack_frees=1 for the run (and back after)
#               kmemtrace-unwindN: the same with the walk cache off (stack_cache=0): every
#                 stack unwound
#               perf-g: perf record -a -g of the same four kmem events (callchains)
#               (default: all of them)
# Writes $KMT_OUT/overhead.tsv, one line per run:
#   round method workload ns events recorded lost bytes status ctxt
# ns: CPU time the workload took, summed over CPUs (each CPU's loop times itself);
# events: slab events the workload itself caused (module workloads: 2 * PAIRS * CPUs; user and
# messaging: what kmemtrace recorded in its run of the same round, filled in on the host); recorded/lost:
# what the tracer kept and dropped or overwrote; bytes: the tracer's output size; status: the
# exit status of kmemtraced or perf record (0 for the other methods; 99 when a bulk
# allocation of the workload failed); ctxt: the guest's context switches during the messaging
# workload ("-" for the others, whose loops do not block). Also writes $KMT_OUT/kernel.txt (uname -r),
# $KMT_OUT/coverage.txt (kmemtrace's coverage file: which paths its probes hook),
# $KMT_OUT/batch.txt (B) and, for
# perf, the first round's perf.data and its messages.

set -u
# Under kmemtraced and perf the workload is their COMMAND: this script again, as
# guest-overhead.sh --batch B --workload WORKLOAD PAIRS ITERATIONS.
workload=
workloads="module user messaging"
batch=16
while :; do
	case ${1:-} in
	--workload) workload=$2; shift 2 ;;
	--workloads) workloads=$2; shift 2 ;;
	--batch) batch=$2; shift 2 ;;
	*) break ;;
	esac
done
pairs=$1
iters=$2
rounds=${3:-1}
[ "$#" -ge 3 ] && shift 3
methods=${*:-none kmemtrace kmemtrace-probe write-floor ftrace perf perf-all}
KO=${KMT_MODDIR:-/lib/modules}/kmemtrace.ko

B=/sys/kernel/debug/kmemtrace_bench
K=${KMT_DEBUGFS:-/sys/kernel/debug/kmemtrace}
T=/sys/kernel/debug/tracing
out=${KMT_OUT:-/tmp}
tsv=$out/overhead.tsv
work=/tmp/bench
ncpus=$(nproc)
slab_events="kmalloc kfree kmem_cache_alloc kmem_cache_free"
perf_slab="-e kmem:kmalloc -e kmem:kfree -e kmem:kmem_cache_alloc -e kmem:kmem_cache_free"

say() {
	echo "guest-overhead: $*" >&2
}

# The workloads write their CPU-ns into $work/ns (and the module's failed bulk allocations
# into $work/failed).
wl_bench() {
	echo "$1" >"$B/workload" || return 1
	echo "$pairs" >"$B/run" || return 1
	awk '$1 == "total_ns" { print $2 }' "$B/result" >"$work/ns"
	awk '$1 == "failed" { print $2 }' "$B/result" >"$work/failed"
}

wl_module() {
	wl_bench kmalloc
}

wl_cache() {
	wl_bench cache
}

wl_bulk() {
	wl_bench "bulk $batch"
}

wl_kfree_bulk() {
	wl_bench "kfree_bulk $batch"
}

wl_bulk1() {
	wl_bench "bulk 1"
}

wl_nolock() {
	wl_bench nolock
}

wl_user() {
	rm -f "$work"/u*.out
	c=0
	while [ "$c" -lt "$ncpus" ]; do
		mkdir -p "$work/u$c"
		taskset -c "$c" kmt-alloc-load "$iters" "$work/u$c" >"$work/u$c.out" &
		c=$((c + 1))
	done
	wait
	cat "$work"/u*.out | awk '$1 == "ns" { s += $2; n++ } END { if (n) print s }' >"$work/ns"
}

# The guest's context switches so far (/proc/stat).
ctxt_now() {
	awk '$1 == "ctxt" { print $2 }' /proc/stat
}

# Its loops: as many messages as kmt-alloc-load's iterations make slab events, about. Its
# time follows its count of context switches (about 10,000 instructions each, whatever the
# method; Documentation/architecture.md), which a tracer shifts: written to $work/ctxt.
wl_messaging() {
	c0=$(ctxt_now)
	kmt-alloc-load --run perf bench sched messaging -g 1 -l "$((iters / 10 + 1))" \
		>"$work/msg.out" 2>&1 || { say "messaging: $(tail -n 2 "$work/msg.out")"; return 1; }
	echo "$(($(ctxt_now) - c0))" >"$work/ctxt"
	awk '$1 == "ns" { print $2 }' "$work/msg.out" >"$work/ns"
}

if [ -n "$workload" ]; then
	"wl_$workload"
	exit
fi

[ -d "$B" ] || { say "kmemtrace_bench.ko is not loaded"; exit 3; }
[ -d "$K" ] || { say "kmemtrace.ko is not loaded"; exit 3; }
[ -d "$T/events/kmem" ] || mount -t tracefs tracefs "$T" 2>/dev/null
[ -d "$T/events/kmem" ] || { say "no tracefs kmem events at $T"; exit 3; }
mkdir -p "$work"
# A module workload the kernel cannot run (kmalloc_nolock before 6.18) is left out.
keep=
for w in $workloads; do
	case $w in
	messaging)
		if ! perf bench sched messaging -g 1 -l 1 >/dev/null 2>&1; then
			say "no perf bench in this guest: workload messaging left out"
			echo "$w" >>"$out/workloads-absent.txt"
			continue
		fi
		;;
	nolock)
		if ! echo nolock >"$B/workload" 2>/dev/null; then
			say "no kmalloc_nolock in this kernel: workload nolock left out"
			echo "$w" >>"$out/workloads-absent.txt"
			continue
		fi
		echo kmalloc >"$B/workload"
		;;
	esac
	keep="$keep $w"
done
workloads=$keep
: >"$tsv"
: >"$out/warmup.tsv"
uname -r >"$out/kernel.txt"
cat "$K/coverage" >"$out/coverage.txt" 2>/dev/null
echo "$batch" >"$out/batch.txt"

# Sum of a column of kmemtrace's stats file.
kmt_stat() {
	awk -v col="$1" '$1 != "#" { s += $col } END { print s + 0 }' "$K/stats"
}

ftrace_set() {
	for e in $slab_events; do
		echo "$1" >"$T/events/kmem/$e/enable"
	done
}

# Every load of either module (ours, the base's) has sub-buffers that hold a whole run of the
# probes-only methods: the messaging workload's 130,000 events a CPU are 8 MiB, where the
# default 16 sub-buffers of 256 KiB hold 4 MiB, and once they are full every event takes the
# drop path (relay's sub-buffer switch, refused), about 95 instructions more, which is not the
# probes' cost. 64 of them take 16 MiB a CPU, within mem_share of the guest's memory.
bench_subbufs=subbufs=64

# kmt_reload_from FILE PARAMS: kmemtrace.ko replaced by FILE (a build of it) with PARAMS,
# tracing off until kmemtraced starts it.
kmt_reload_from() {
	f=$1
	shift
	if ! rmmod kmemtrace || ! insmod "$f" start_disabled=1 "$bench_subbufs" "$@"; then
		say "reloading kmemtrace.ko from $f ($*) failed"
		return 1
	fi
}

# kmemtrace.ko again with PARAMS.
kmt_reload() {
	kmt_reload_from "$KO" "$@"
}

# kmt_traced WORKLOAD ROUND NAME [DAEMON]: the workload under kmemtraced (or DAEMON); sets rec,
# lost, bytes, st.
kmt_traced() {
	rm -rf "$work/kt"
	w0=$(kmt_stat 3)
	d0=$(kmt_stat 4)
	"${4:-kmemtraced}" -q -f -o "$work/kt" -- \
		sh -c "$(command -v "$0") --batch $batch --workload $1 $pairs $iters" ||
		{ st=$?; say "${4:-kmemtraced} failed (status $st)"; }
	rec=$(($(kmt_stat 3) - w0))
	lost=$(($(kmt_stat 4) - d0))
	bytes=$(cat "$work"/kt/cpu*.out | wc -c)
	# What else a trace directory holds (metadata, kallsyms, modules): a fixed cost.
	echo "$1 $(($(cat "$work"/kt/* | wc -c) - bytes))" >>"$out/kmt-meta.txt"
	# The first round's trace goes home, to be checked and counted there.
	[ "$2" = 1 ] && cp -r "$work/kt" "$out/$3-$1"
	# What the write-floor method writes after this run.
	[ "$3" = kmt ] && echo "$bytes" >"$work/kmt-bytes"
	return 0
}

# The sub-buffer size of kmemtrace.ko's buffers, kmemtraced's usual write (stats' first line).
subbuf_size() {
	awk '$1 == "#" && $2 == "buffers" { for (i = 3; i < NF; i++) if ($i == "subbuf_size") print $(i + 1); exit }' "$K/stats"
}

# kmemtrace-vm loaded it with the defaults.
kmt_reload || exit 3

# run_method METHOD WORKLOAD ROUND: one timed run; appends its line to the TSV.
run_method() {
	m=$1 w=$2 r=$3
	rec=0 lost=0 bytes=0 st=0
	rm -f "$work/ns" "$work/failed" "$work/ctxt"
	case $m in
	none)
		"wl_$w"
		;;
	kmemtrace)
		kmt_traced "$w" "$r" kmt
		;;
	kmemtrace-base)
		if kmt_reload_from "$KMT_FILES/kmemtrace-base.ko"; then
			kmt_traced "$w" "$r" kmt-base kmemtraced-base
			kmt_reload || st=3
		else
			st=3
		fi
		;;
	kmemtrace-stacks[0-9]* | kmemtrace-unwind[0-9]*)
		set -- stack_depth="${m##*[a-z]}" stack_frees=1
		case $m in kmemtrace-unwind*) set -- "$@" stack_cache=0 ;; esac
		if kmt_reload "$@"; then
			kmt_traced "$w" "$r" "kmt-$m"
			kmt_reload
		else
			st=3
		fi
		;;
	kmemtrace-probe | kmemtrace-probe-base | kmemtrace-filter-out | kmemtrace-filter-in)
		case $m in
		kmemtrace-probe-base)
			if ! kmt_reload_from "$KMT_FILES/kmemtrace-base.ko"; then
				st=3
				kmt_reload
			fi
			;;
		kmemtrace-filter-out) echo tgid=2147483647 >"$K/filter" ;;
		kmemtrace-filter-in) echo size=0- >"$K/filter" ;;
		esac
		w0=$(kmt_stat 3)
		d0=$(kmt_stat 4)
		echo 1 >"$K/enabled"
		"wl_$w"
		echo 0 >"$K/enabled"
		rec=$(($(kmt_stat 3) - w0))
		lost=$(($(kmt_stat 4) - d0))
		# Empty the buffers for the next run: read them to the end.
		for f in "$K"/cpu[0-9]*; do
			cat "$f" >/dev/null
		done
		case $m in
		kmemtrace-probe-base) [ "$st" = 3 ] || kmt_reload || st=3 ;;
		kmemtrace-filter-*) echo none >"$K/filter" ;;
		esac
		;;
	write-floor)
		b=$(cat "$work/kmt-bytes" 2>/dev/null)
		rm -f "$work/kmt-bytes"
		if [ -z "$b" ] || [ "$b" = 0 ]; then
			say "write-floor $w: no kmemtrace run before it in this round"
			st=3
		elif rm -rf "$work/kt" &&
			kmt-alloc-load --write "$b" "$(subbuf_size)" "$work/floor" >"$work/floor.out"; then
			awk '$1 == "ns" { print $2 }' "$work/floor.out" >"$work/ns"
			bytes=$b
		else
			st=3
		fi
		;;
	ftrace)
		echo 0 >"$T/tracing_on"
		echo >"$T/trace"
		ftrace_set 1
		echo 1 >"$T/tracing_on"
		"wl_$w"
		echo 0 >"$T/tracing_on"
		ftrace_set 0
		rec=$(cat "$T"/per_cpu/cpu*/stats | awk '$1 == "entries:" { s += $2 } END { print s + 0 }')
		lost=$(cat "$T"/per_cpu/cpu*/stats | awk '$1 == "overrun:" { s += $2 } END { print s + 0 }')
		bytes=$(cat "$T"/per_cpu/cpu*/stats | awk '$1 == "bytes:" { s += $2 } END { print s + 0 }')
		echo >"$T/trace"
		;;
	perf | perf-all | perf-g)
		rm -f "$work/perf.data"
		case $m in
		perf) ev=$perf_slab ;;
		perf-g) ev="-g $perf_slab" ;;
		*) ev="-e kmem:*" ;;
		esac
		# -B: no build-id pass after the run (minutes under TCG, and not part of the
		# workload's time); -a: every CPU, like the others.
		# shellcheck disable=SC2086
		perf record -B -a $ev -o "$work/perf.data" -- \
			sh -c "$(command -v "$0") --batch $batch --workload $w $pairs $iters" >"$work/perf.out" 2>&1 ||
			{ st=$?; say "perf record failed (status $st): $(tail -n 3 "$work/perf.out")"; }
		bytes=$(wc -c <"$work/perf.data" 2>/dev/null || echo 0)
		[ "$r" = 1 ] && cp "$work/perf.out" "$out/$m-$w.out"
		# perf report --stats counts its samples on the host.
		if [ "$r" = 1 ] && [ -e "$work/perf.data" ]; then
			mv "$work/perf.data" "$out/$m-$w.data"
		else
			rm -f "$work/perf.data"
		fi
		;;
	esac
	ns=$(cat "$work/ns" 2>/dev/null)
	[ -n "$ns" ] || { say "$m $w: the workload did not report its time"; ns=0; }
	failed=$(cat "$work/failed" 2>/dev/null)
	if [ "${failed:-0}" != 0 ]; then
		say "$m $w: $failed bulk allocations failed"
		st=99
	fi
	case $w in user | messaging) ev=0 ;; *) ev=$((2 * pairs * ncpus)) ;; esac
	ctxt=$(cat "$work/ctxt" 2>/dev/null)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$m" "$w" "$ns" "$ev" "${rec:-0}" \
		"${lost:-0}" "${bytes:-0}" "$st" "${ctxt:--}" >>"$tsv"
	say "round $r $m $w: ns $ns recorded ${rec:-0} lost ${lost:-0} bytes ${bytes:-0} status $st"
}

timed=$tsv
r=0
while [ "$r" -le "$rounds" ]; do
	if [ "$r" = 0 ]; then tsv=$out/warmup.tsv; else tsv=$timed; fi
	for w in $workloads; do
		for m in $methods; do
			run_method "$m" "$w" "$r"
		done
	done
	r=$((r + 1))
done
rm -rf "$work/kt"
say "done"
