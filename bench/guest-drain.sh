#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# guest-drain.sh - part 2 of make bench, run in the kmemtrace-vm guest: the event rates that
# kmemtraced drains without an overrun, for several buffer sizes.
#
# Usage (in the guest, kmemtrace_bench.ko loaded): guest-drain.sh SECONDS START FACTOR MAX SERIES...
#   SECONDS  length of each step (guest seconds)
#   START    first rate, slab events per second per CPU
#   FACTOR   each step multiplies the rate by FACTOR/10 (15: by 1.5)
#   MAX      no step above this rate
#   SERIES   SUBBUFS or SUBBUFS:NICE: kmemtrace.ko's subbufs parameter (64 is the default)
#            and the nice value kmemtraced runs at (default 0); a starved daemon (nice 19
#            beside a nice 0 load) shows how much delay each buffer size absorbs
# For each series, kmemtrace.ko is reloaded with SUBBUFS, then the rate rises step by step while
# kmemtraced drains into tmpfs, until a step overruns or the load cannot reach its target;
# two bisection steps then narrow the gap between the last clean rate and the first bad one.
# Writes $KMT_OUT/drain.tsv, one line per step:
#   subbufs nice subbuf_size target achieved events written dropped daemon_ticks ticks_per_s seconds
# target and achieved are per CPU; events: what the load did on all CPUs; written, dropped:
# what kmemtrace.ko wrote and dropped meanwhile (all CPUs, the daemon's own allocations too).

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
say "done"
