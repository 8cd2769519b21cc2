#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# guest-drain.sh - part 2 of make bench, run in the kmemtrace-vm guest: the event rates that
# kmemtraced drains without an overrun, for several buffer sizes; then kmemtrace-top's own
# cost at some of those rates.
#
# Usage (in the guest, kmemtrace_bench.ko loaded):
#   guest-drain.sh [--top RATES:SECS:REPS] SECONDS START FACTOR MAX SERIES...
#   SECONDS  length of each step (guest seconds)
#   START    first rate, slab events per second per CPU
#   FACTOR   each step multiplies the rate by FACTOR/10 (15: by 1.5)
#   MAX      no step above this rate
#   SERIES   SUBBUFS or SUBBUFS:NICE: kmemtrace.ko's subbufs parameter (16 is the default)
#            and the nice value kmemtraced runs at (default 0); a starved daemon (nice 19
#            beside a nice 0 load) shows how much delay each buffer size absorbs
# For each series, kmemtrace.ko is reloaded with SUBBUFS, then the rate rises step by step while
# kmemtraced drains into tmpfs, until a step overruns or the load cannot reach its target;
# two bisection steps then narrow the gap between the last clean rate and the first bad one.
# Writes $KMT_OUT/drain.tsv, one line per step:
#   subbufs nice subbuf_size target achieved events written dropped daemon_ticks ticks_per_s seconds
# target and achieved are per CPU; events: what the load did on all CPUs; written, dropped:
# what kmemtrace.ko wrote and dropped meanwhile (all CPUs, the daemon's own allocations too).
#
# --top: afterwards, with kmemtrace.ko's default buffers, the same paced load runs SECS seconds
# at each per-CPU rate of RATES (comma-separated; "auto": the lowest and highest clean rates
# of the 64-subbuf nice-0 series above and the clean rate nearest their geometric mean;
# "none": skip), REPS times, in each of these setups in turn:
#   untraced     kmemtrace off, no reader
#   kmemtraced   kmemtraced -- the load, draining into tmpfs (as above)
#   follow       kmemtraced -- the load, and kmemtrace-top -b -d on kmemtraced's directory
#   live         kmemtrace-top -b alone, reading the relay buffers itself (no kmemtraced)
#   live-0.1     the same, refreshing every 0.1 s: it reads the buffers at each refresh only
#   live-locked  (first rate, first run only) kmemtrace-top -b live beside kmemtraced: it must
#                refuse (exit 3), the buffers being kmemtraced's
# kmemtrace-top refreshes every second (its default) but in live-0.1, its tables going to a
# file in tmpfs.
# Writes $KMT_OUT/top.tsv, one line per run:
#   rate rep setup target achieved events load_ns top_ns top_ticks top_start_ns kmtd_ns
#   busy_ticks hz secs top_status top_events written dropped
# load_ns: CPU time of the load's kthreads (the traced workload: the probes run in them);
# top_ns, kmtd_ns: CPU time of kmemtrace-top and of kmemtraced (all their threads,
# /proc/PID/task/*/schedstat) during the load; top_ticks: kmemtrace-top's utime + stime
# (/proc/PID/stat, clock ticks of hz) during the load; top_start_ns: its CPU before the load
# (start-up); busy_ticks: the guest's non-idle time during the load (its elapsed time less
# the idle time of /proc/stat, clock ticks); top_status:
# kmemtrace-top's exit status after SIGTERM (0 expected; - when not run); top_events: the
# allocations and frees in its tables' interval lines.

set -u

B=/sys/kernel/debug/kmemtrace_bench
K=${KMT_DEBUGFS:-/sys/kernel/debug/kmemtrace}
out=${KMT_OUT:-/tmp}
tsv=$out/drain.tsv
work=/tmp/drain
ncpus=$(nproc)
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)

say() {
	echo "guest-drain: $*" >&2
}

# The CPU time in ns of every thread of process $1 (0 when it is gone).
proc_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }'
}

# The guest's idle clock ticks so far (idle + iowait): measured, not sampled, with NO_HZ,
# unlike the busy fields.
idle_ticks() {
	awk '$1 == "cpu" { print $5 + $6; exit }' /proc/stat
}

# The CPU time in ns of the paced load's kthreads.
load_ns() {
	for p in /proc/[0-9]*; do
		case $(cat "$p/comm" 2>/dev/null) in
		kmt_bench_rate*) cat "$p/schedstat" ;;
		esac
	done | awk '{ s += $1 } END { printf "%.0f", s }'
}

# One kmemtrace-top run beside the paced load; under kmemtraced ($PPID) when SETUP is follow
# or live-locked. guest-drain.sh --top-step SETUP RATE SECONDS; writes $work/top.vals.
if [ "${1:-}" = --top-step ]; then
	setup=$2
	rate=$3
	secs=$4
	kmtd=
	topst=-
	tpid=
	case $setup in
	kmemtraced | follow | live-locked) kmtd=$PPID ;;
	esac
	rm -f "$work/top.out" "$work/top.err"
	case $setup in
	follow)
		kmemtrace-top -b -r 1000 --follow -d "$work/trace" >"$work/top.out" 2>"$work/top.err" &
		tpid=$!
		;;
	live | live-locked)
		kmemtrace-top -b -r 1000 >"$work/top.out" 2>"$work/top.err" &
		tpid=$!
		;;
	live-0.1)
		kmemtrace-top -b -r 1000 0.1 >"$work/top.out" 2>"$work/top.err" &
		tpid=$!
		;;
	esac
	if [ -n "$tpid" ]; then
		# Started: live has switched tracing on, or the refusal has ended it; follow has
		# had time to open the directory (idle guest time costs nothing under icount).
		i=0
		while [ "$i" -lt 100 ] && kill -0 "$tpid" 2>/dev/null; do
			if [ "$setup" != follow ]; then
				[ "$(cat "$K/enabled")" = 1 ] && break
			elif [ "$i" -ge 5 ]; then
				break
			fi
			sleep 0.1
			i=$((i + 1))
		done
	fi
	tstart=0
	tt0=0
	if [ -n "$tpid" ]; then
		tstart=$(proc_ns "$tpid")
		tt0=$(awk '{ print $14 + $15 }' "/proc/$tpid/stat" 2>/dev/null || echo 0)
	fi
	k0=0
	[ -n "$kmtd" ] && k0=$(proc_ns "$kmtd")
	b0=$(idle_ticks)
	echo "$rate" >"$B/rate"
	sleep "$secs"
	cat "$B/rate" >"$work/rate.out"
	lns=$(load_ns)
	b1=$(idle_ticks)
	k1=0
	[ -n "$kmtd" ] && k1=$(proc_ns "$kmtd")
	tns=0
	tt1=$tt0
	if [ -n "$tpid" ]; then
		tns=$(($(proc_ns "$tpid") - tstart))
		tt1=$(awk '{ print $14 + $15 }' "/proc/$tpid/stat" 2>/dev/null || echo "$tt0")
		[ "$tns" -lt 0 ] && tns=0
	fi
	echo 0 >"$B/rate"
	if [ -n "$tpid" ]; then
		kill -TERM "$tpid" 2>/dev/null
		wait "$tpid"
		topst=$?
	fi
	tev=$(awk '$1 == "interval" { for (i = 2; i < NF; i++) if ($i == "allocs" || $i == "frees") s += $(i + 1) }
		END { printf "%.0f", s }' "$work/top.out" 2>/dev/null)
	# Busy: the load's elapsed time (the rate file's ns) less the idle time meanwhile.
	# shellcheck disable=SC2046  # the words are the fields
	set -- $(cat "$work/rate.out")
	busy=$(awk -v ns="${6:-0}" -v hz="$hz" -v idle=$((b1 - b0)) 'BEGIN { printf "%.0f", ns / 1e9 * hz - idle }')
	echo "$lns $tns $((tt1 - tt0)) $tstart $((k1 - k0)) $busy $topst ${tev:-0}" >"$work/top.vals"
	exit 0
fi

# Inside kmemtraced, as its COMMAND: run the paced load for SECONDS and note the daemon's
# CPU ticks (user + system, all its threads) around it. $PPID is kmemtraced.
# guest-drain.sh --step RATE SECONDS NICE
if [ "${1:-}" = --step ]; then
	rate=$2
	secs=$3
	# busybox has no nice(1); renice every thread of the daemon (its drain threads too).
	if [ "$4" != 0 ]; then
		for t in /proc/"$PPID"/task/*; do
			renice -n "$4" -p "${t##*/}" >/dev/null
		done
	fi
	t0=$(awk '{ print $14 + $15 }' "/proc/$PPID/stat")
	echo "$rate" >"$B/rate"
	sleep "$secs"
	cat "$B/rate" >"$work/rate.out"
	echo 0 >"$B/rate"
	t1=$(awk '{ print $14 + $15 }' "/proc/$PPID/stat")
	echo $((t1 - t0)) >"$work/ticks"
	exit 0
fi

top=none:3:1
if [ "${1:-}" = --top ]; then
	top=$2
	shift 2
fi
secs=$1
start=$2
factor=$3
max=$4
shift 4
[ -d "$B" ] || { say "kmemtrace_bench.ko is not loaded"; exit 3; }
mkdir -p "$work"
: >"$tsv"
self=$(command -v "$0")

kmt_stat() {
	awk -v col="$1" '$1 != "#" { s += $col } END { print s + 0 }' "$K/stats"
}

# step SUBBUFS RATE: one step; sets ok=1 when it ran clean and reached its rate.
step() {
	sb=$1 rate=$2
	rm -rf "$work/trace" "$work/rate.out" "$work/ticks"
	w0=$(kmt_stat 3)
	d0=$(kmt_stat 4)
	kmemtraced -q -f -o "$work/trace" -- "$self" --step "$rate" "$secs" "$nice" ||
		say "kmemtraced failed"
	written=$(($(kmt_stat 3) - w0))
	dropped=$(($(kmt_stat 4) - d0))
	rm -rf "$work/trace"
	# "target R events E ns T": events on all CPUs in T ns.
	# shellcheck disable=SC2046  # the words are the fields
	set -- $(cat "$work/rate.out" 2>/dev/null)
	events=${4:-0}
	ns=${6:-1}
	achieved=$(awk -v e="$events" -v ns="$ns" -v c="$ncpus" 'BEGIN { printf "%d", e / c / (ns / 1e9) }')
	ticks=$(cat "$work/ticks" 2>/dev/null || echo 0)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$sb" "$nice" "$(cat /sys/module/kmemtrace/parameters/subbuf_size)" \
		"$rate" "$achieved" "$events" "$written" "$dropped" "$ticks" "$hz" "$secs" >>"$tsv"
	say "subbufs $sb nice $nice rate $rate: achieved $achieved, written $written, dropped $dropped, daemon ticks $ticks"
	ok=0
	# Within 5% of the target: a load that cannot keep up would show no overrun for that reason.
	if [ "$dropped" = 0 ] && [ "$((achieved * 100))" -ge "$((rate * 95))" ]; then
		ok=1
	fi
}

for series in "$@"; do
	sb=${series%%:*}
	nice=0
	[ "$sb" != "$series" ] && nice=${series#*:}
	rmmod kmemtrace 2>/dev/null
	if ! insmod "$KMT_MODDIR/kmemtrace.ko" start_disabled=1 "subbufs=$sb"; then
		say "insmod kmemtrace.ko subbufs=$sb failed"
		continue
	fi
	good=0
	bad=0
	rate=$start
	while [ "$rate" -le "$max" ]; do
		step "$sb" "$rate"
		if [ "$ok" = 1 ]; then
			good=$rate
		else
			bad=$rate
			break
		fi
		rate=$((rate * factor / 10))
	done
	# Narrow down between the last clean rate and the first bad one.
	i=0
	while [ "$good" -gt 0 ] && [ "$bad" -gt 0 ] && [ "$i" -lt 2 ]; do
		rate=$(((good + bad) / 2))
		step "$sb" "$rate"
		if [ "$ok" = 1 ]; then good=$rate; else bad=$rate; fi
		i=$((i + 1))
	done
	say "subbufs $sb nice $nice: highest clean rate $good, first bad rate $bad"
done
rmmod kmemtrace 2>/dev/null

# ---- kmemtrace-top beside the same load ----------------------------------------------------
top_rates=${top%%:*}
top_rest=${top#*:}
top_secs=${top_rest%%:*}
top_reps=${top_rest#*:}
: >"$out/top.tsv"
if [ "$top_rates" = auto ]; then
	# The clean steps of the default buffers' nice-0 series: lowest, highest and the one
	# nearest their geometric mean.
	top_rates=$(awk -F'\t' '$1 == 16 && $2 == 0 && $8 == 0 && $5 * 100 >= $4 * 95 { print $4 }' "$tsv" |
		sort -n | uniq | awk '
			# busybox awk has no sqrt(): the nearest r to sqrt(lo * hi) has r * r nearest.
			function dist(r) { d = r * r - lo * hi; return d < 0 ? -d : d }
			{ r[NR] = $1 }
			END {
				if (!NR) exit
				lo = r[1]; hi = r[NR]; m = lo
				for (i = 1; i <= NR; i++) if (dist(r[i]) < dist(m)) m = r[i]
				out = lo
				if (m != lo && m != hi) out = out "," m
				if (hi != lo) out = out "," hi
				print out
			}')
	[ -n "$top_rates" ] || top_rates=$start
fi
if [ "$top_rates" != none ] && ! command -v kmemtrace-top >/dev/null; then
	say "kmemtrace-top is not in the guest: its steps skipped"
	top_rates=none
fi
if [ "$top_rates" != none ]; then
	if ! insmod "$KMT_MODDIR/kmemtrace.ko" start_disabled=1; then
		say "insmod kmemtrace.ko failed: kmemtrace-top's steps skipped"
		top_rates=none
	fi
fi
# top_run RATE REP SETUP: one run; appends its line to top.tsv.
top_run() {
	rate=$1 rep=$2 setup=$3
	rm -rf "$work/trace" "$work/rate.out" "$work/top.vals"
	w0=$(kmt_stat 3)
	d0=$(kmt_stat 4)
	case $setup in
	untraced | live | live-0.1)
		"$self" --top-step "$setup" "$rate" "$top_secs"
		;;
	*)
		kmemtraced -q -f -o "$work/trace" -- "$self" --top-step "$setup" "$rate" "$top_secs" ||
			say "kmemtraced failed"
		;;
	esac
	written=$(($(kmt_stat 3) - w0))
	dropped=$(($(kmt_stat 4) - d0))
	# live-locked: kmemtrace-top's words, to show it refused.
	[ "$setup" = live-locked ] && cp "$work/top.err" "$out/top-live-locked.err"
	[ "$setup" = follow ] && [ "$rep" = 1 ] && cp "$work/top.out" "$out/top-follow-$rate.txt"
	[ "$setup" = live ] && [ "$rep" = 1 ] && cp "$work/top.out" "$out/top-live-$rate.txt"
	rm -rf "$work/trace"
	# shellcheck disable=SC2046  # the words are the fields
	set -- $(cat "$work/rate.out" 2>/dev/null)
	events=${4:-0}
	ns=${6:-1}
	achieved=$(awk -v e="$events" -v ns="$ns" -v c="$ncpus" 'BEGIN { printf "%d", e / c / (ns / 1e9) }')
	# shellcheck disable=SC2046
	set -- $(cat "$work/top.vals" 2>/dev/null || echo 0 0 0 0 0 0 - 0)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$rate" "$rep" "$setup" "$rate" "$achieved" "$events" "$1" "$2" "$3" "$4" "$5" "$6" \
		"$hz" "$top_secs" "$7" "$8" "$written" "$dropped" >>"$out/top.tsv"
	say "top: rate $rate run $rep $setup: achieved $achieved, load ${1}ns, kmemtrace-top ${2}ns (status $7, saw $8 events), kmemtraced ${5}ns, written $written, dropped $dropped"
}
if [ "$top_rates" != none ]; then
	first=1
	for rate in $(echo "$top_rates" | tr ',' ' '); do
		rep=1
		while [ "$rep" -le "$top_reps" ]; do
			for setup in untraced kmemtraced follow live live-0.1; do
				top_run "$rate" "$rep" "$setup"
			done
			if [ "$first" = 1 ]; then
				top_run "$rate" "$rep" live-locked
				first=0
			fi
			rep=$((rep + 1))
		done
	done
	rmmod kmemtrace 2>/dev/null
fi
say "done"
