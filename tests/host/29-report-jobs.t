#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 29-report-jobs.t - kmemtrace-report -j: the report is the same, byte for byte (standard output,
# standard error, exit status, the --html and --pprof files), with one thread, with the files
# read and merged ahead on another (-j 2), and with the analysis divided by address over two or
# three threads besides (-j 3, -j 4), for every view of tests/golden/views in every format. The traces: a script whose answers depend on the records' order (jobs-trace.awk: double
# frees, frees on other CPUs and of unseen objects, an address allocated again while live, lost
# records, lifetimes), several read-ahead batches long; a generated one with stacks and pages; and
# the script's trace with its third file broken in the middle (the same error and exit status).
# Also: -j refuses what is not a number of threads.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
require_tools kmemtrace-report kmemtrace-gen
# Absolute: the reports run in the traces' directory.
REPORT=$(cd "$BIN" && pwd)/kmemtrace-report
GEN=$BIN/kmemtrace-gen
VIEWS=$(dirname "$0")/../golden/views
scratch_dir jobs

# 20000 iterations: about 40,000 records, ten batches of the read-ahead's 4096, so that its
# ring of eight fills and its slots are used again.
awk -v N=20000 -f "$(dirname "$0")/jobs-trace.awk" >"$T/script"
"$GEN" -o "$T/order" --cpus 3 --script "$T/script" >"$T/order.summary"
ok $? "the scripted trace written"
records=$(summary records "$T/order.summary")
ok "$((records > 8 * 4096 ? 0 : 1))" "it is longer than the read-ahead's ring of eight batches ($records records)"
"$GEN" -o "$T/stacks" --cpus 4 --events 30000 --stack-depth 8 --stacks 40 --stack-frees \
	--pages --nodes 2 --large-every 50 --twice --seed 29 >/dev/null
ok $? "the generated trace with stacks and pages written"
# The window of remembered frees across shards: A freed, 65535 frees of other addresses (a
# third of objects never seen, the rest of objects allocated just before, on all three CPUs,
# so of every shard), A freed again: a double free; B likewise after 65536: an untracked free.
awk 'BEGIN {
	print "kmalloc 0 0xffffffff81000100 0xffff888100000000 64 64"
	print "kfree 1 0xffffffff82000100 0xffff888100000000"
	for (i = 0; i < 65535; i++) {
		a = sprintf("0xffff888200%06x", (i % 30000) * 64)
		if (i % 3 == 2)
			printf "kfree %d 0xffffffff82000200 0xffff888900%06x\n", i % 3, i * 64
		else
			printf "kmalloc %d 0xffffffff81000200 %s 32 32\nkfree %d 0xffffffff82000200 %s\n", i % 3, a, (i + 1) % 3, a
	}
	print "kfree 2 0xffffffff82000300 0xffff888100000000"
	print "kmalloc 0 0xffffffff81000400 0xffff888100001000 64 64"
	print "kfree 1 0xffffffff82000400 0xffff888100001000"
	for (i = 0; i < 65536; i++) {
		a = sprintf("0xffff888300%06x", (i % 30000) * 64)
		printf "kmalloc %d 0xffffffff81000200 %s 32 32\nkfree %d 0xffffffff82000200 %s\n", i % 3, a, (i + 1) % 3, a
	}
	print "kfree 2 0xffffffff82000500 0xffff888100001000"
}' >"$T/window.script"
"$GEN" -o "$T/window" --cpus 3 --script "$T/window.script" >/dev/null
ok $? "the trace of the window's two sides written"
# The frees of objects never seen, and B's second.
untracked=$(($(grep -c '^kfree .* 0xffff888900' "$T/window.script") + 1))

# The broken one: CPU 2's file zeroed from its 5000th record on.
cp -r "$T/order" "$T/broken"
dd if=/dev/zero of="$T/broken/cpu2.out" bs=64 seek=5001 count=10 conv=notrunc status=none

# same NAME ARGS...: the report of ARGS with -j 1, then -j 2, 3 and 4, in $T/work; sets rc1,
# the exit status with -j 1 (one that says the report did not run fails the test).
same() {
	local name=$1 j ref got st
	shift
	for j in 1 2 3 4; do
		got=$T/got.$j
		rm -f "$T"/work/page.html "$T"/work/p.pb.gz
		(cd "$T/work" && "$REPORT" --no-progress -j "$j" "$@") >"$got" 2>"$T/err.$j"
		st=$?
		[ "$j" != 1 ] || rc1=$st
		echo "--- exit $st" >>"$got"
		cat "$T/err.$j" >>"$got"
		for f in page.html p.pb.gz; do
			[ -f "$T/work/$f" ] && { echo "--- $f"; cat "$T/work/$f"; } >>"$got"
		done
	done
	ref=$T/got.1
	if [ "$rc1" -gt 4 ]; then
		ok 1 "$name: kmemtrace-report ran (exit status $rc1)" "$(head -n 5 "$T/err.1")"
		return
	fi
	for j in 2 3 4; do
		if cmp -s "$ref" "$T/got.$j"; then
			ok 0 "$name: -j $j as -j 1"
		else
			ok 1 "$name: -j $j as -j 1" "$(diff "$ref" "$T/got.$j" | head -n 10)"
		fi
	done
}

mkdir -p "$T/work"
mv "$T/order" "$T/stacks" "$T/broken" "$T/window" "$T/work/"
for trace in order stacks; do
	while read -r view; do
		case $view in "" | "#"* | "@guest "*) continue ;; esac
		view=${view#@gen }
		fmts=("" -w --json --csv)
		case $view in *" :text") view=${view% :text}; fmts=("") ;; esac
		[ "$view" = - ] && view=
		for f in "${fmts[@]}"; do
			# shellcheck disable=SC2086 # options
			same "$trace: '${view:-default}${f:+ $f}'" $view $f "$trace"
		done
	done <"$VIEWS"
	same "$trace: default, -l 0" -l 0 "$trace"
	is "$rc1" 0 "$trace: the default view's report ends well"
	same "$trace: --html" --html page.html "$trace"
	same "$trace: --pprof" --pprof p.pb.gz "$trace"
	same "$trace: --pprof --at" --pprof p.pb.gz --at 3ms "$trace"
done
same "window: default" window
same "window: --json" --json window
json=$(sed -n '/^--- exit/q;p' "$T/got.1")
like "$json" '"double_frees":1,' "window: A's second free, 65535 frees on, is a double free"
like "$json" '"untracked_frees":'"$untracked"',' \
	"window: B's second free, 65536 frees on, is untracked ($untracked untracked frees)"
like "$json" '"free_addr":"0xffffffff82000300"' "window: the double free is A's"
same "broken: default" broken
same "broken: --json" --json broken
same "broken: --raw" --raw broken
like "$(cat "$T/got.1")" "broken/cpu2.out: offset" "broken: the error names the file and offset"
like "$(cat "$T/got.1")" "--- exit 2" "broken: bad trace data, exit status 2"

# On one CPU neither side of the read-ahead spins (kmt_ahead.c: with fewer CPUs than threads a
# spinning side takes the CPU from the one it waits for); the same answer, by the sleeping path.
if command -v taskset >/dev/null 2>&1; then
	for f in "" --json; do
		"$REPORT" --no-progress -j 1 ${f:+"$f"} "$T/work/order" >"$T/one.1" 2>&1
		taskset -c 0 "$REPORT" --no-progress -j 2 ${f:+"$f"} "$T/work/order" >"$T/one.2" 2>&1
		ok_cmd "order: -j 2 on one CPU${f:+ $f} as -j 1" cmp -s "$T/one.1" "$T/one.2"
	done
else
	skip "no taskset"; skip "no taskset"
fi

# Threads the report starts: -j 2 the reading one; -j 3 and 4 it and one shard of the analysis
# fewer than -j (the caller's thread is shard 0); --pprof keeps one analysis (-j 2's way).
# Counted against -j 1's: a sanitizer's runtime may start threads of its own.
clones() {
	strace -f -qq -e trace=clone,clone3 "$REPORT" --no-progress "$@" 2>&1 >/dev/null |
		grep -c 'clone'
}
threads() {
	echo $(($(clones "$@") - $(clones -j 1 "$T/work/order")))
}
if command -v strace >/dev/null 2>&1; then
	is "$(threads -j 2 "$T/work/order")" 1 "-j 2: one thread besides the caller's"
	is "$(threads -j 3 "$T/work/order")" 2 "-j 3: the reading thread and a second shard's"
	is "$(threads -j 4 --lifetimes "$T/work/stacks")" 3 "-j 4 --lifetimes: the reading thread and two shards'"
	is "$(threads -j 4 --pprof "$T/work/p.pb.gz" "$T/work/order")" 1 "-j 4 --pprof: the reading thread only"
	is "$(threads -j 16 "$T/work/order")" 3 "-j 16: three shards at most, as -j 4"
else
	for _ in 1 2 3 4 5; do skip "no strace to count the threads"; done
fi

for bad in 0 -1 x 1025 ''; do
	run "$REPORT" --no-progress -j "$bad" "$T/work/order"
	is "$rc" 1 "-j '$bad': a usage error"
	like "$err" "-j: '$bad' is not a number of threads from 1 to 1024" "-j '$bad': said so"
done

done_testing
