#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 48-stacks.t - kernel stacks (trace format 1.2, module parameter stack_depth), in one guest:
#  1. stack_depth=32 stack_frees=1 pages=1: the oracle's stacks pattern and its bulk pattern
#     (the kprobe paths) under kmemtraced. Every chain operation's events carry one stack whose
#     frames, symbolized with the guest's kallsyms, are oracle_chain_c <- _b <- _a <-
#     oracle_stacks_run from the call site on, exactly as many as the oracle made; the page
#     allocations and frees of its large objects carry the chain beyond the page allocator's
#     frames, with migratetype MIGRATE_UNMOVABLE; the recursion gives one stack per depth. Every
#     tracepoint has more than one probe here (tracefs holds them), so the tracepoint iterators'
#     frames are there to be cut.
#     Then the oracle's nostack pattern: allocations naming a call site that is on no stack
#     (home's, under which the walk cache keeps home's walk; it was in use then) alternate
#     with home's own, and allocations naming a call site 96 frames out (beyond what is
#     walked) with ones naming it one frame out: exactly as many as the oracle made carry
#     KMT_F_NO_STACK and stack id 0, the module's no_stack_unwind grew by them, the others
#     have stacks from their call site on, and the report (JSON and text) counts them.
#  2. stack_entries=8: the table overflows on every CPU; per CPU, events with a stack, events
#     with KMT_F_NO_STACK and whole stacks written equal the module's counters (kmemtraced copies
#     them into kmemtrace.meta at start and end) exactly, and the stacks written are the table's
#     8 entries.
#  3. Two 4 KiB sub-buffers under load, stack_depth=64 with frees: records and stacks dropped;
#     a stack is only ever cut short by a LOST record, and the counters still match exactly.
#  4. stack_depth=64 with frees and pages, under the allocation load: enabled toggled, a CPU
#     unplugged and plugged back while kmemtraced drains, then unloaded with tracing on; with
#     stack_check=1, the walk cache never disagrees with the unwinder through all of it.
#  5. stack_check=1, stack_depth=16 with frees and pages: the oracle's chain and recursion, its nostack
#     pattern, its allocation load (kernel threads) and user space (find, ls -lR, fork and exec,
#     a pipe, files created and removed) traced; every stack the walk cache knew was unwound too
#     and was the same, and the accounting is exact.
#  Phases 1 and 5 have the walk cache on (the default): stacks unwound plus stacks it knew are
#  the stacks asked for; phase 2 has it off (stack_cache=0).
#  kmemtrace-report --stacks --json and --folded give the chain's stacks and the recursion's
#  with the oracle's counts (6.12 and 7.3 trace a large kmalloc twice: counted once); on the tiny
#  table, the report's "N events without a stack" is the module's count, less the uncounted
#  duplicate events without one, said apart. --html's flame graphs (bytes, allocations, frees)
#  hold --folded's stacks of the same trace.
# In every trace: stack records well formed and written before the events that use them, an
# allocation (and a free when asked) has a stack or KMT_F_NO_STACK, no stack holds a frame of
# the tracer, a slab event's stack starts at its call site. Expected numbers come from the
# oracle's stacks_expected file and the module's counters, never from the trace itself.
# Bounds: the guest's -T 360 and the test's 510 s are over 5x the slowest guest, 6.1 686-pae's
# 70 s, and whole test, arm64's 100 s (its cross-built tools waited for another test's build), in
# make check beside a busy loop and a fuzzer at nice 19 (and another guest test).
KMT_TEST_TIMEOUT=510
# The tracepoints stay held by tracefs (KMT_HOLD_EVENTS): no text patching, so multi-threaded TCG
# is safe.
export KMT_TCG_THREAD=${KMT_TCG_THREAD:-multi}
# The guest holds these tracepoints on before our modules load (scripts/guest-init): the page
# events too, so kmemtrace's probe is called through the tracepoint's iterator, whose frame a
# page event's stack must not keep.
export KMT_HOLD_EVENTS="kmalloc kfree kmem_cache_alloc kmem_cache_free mm_page_alloc mm_page_free"
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

[ -f "$KMT_TOP/kmod/Kbuild" ] || skip_all "kmod/ not written yet"
[ -f "$KMT_TOP/tests/kmod/Kbuild" ] || skip_all "the oracle module (tests/kmod) not written yet"
require_cmds python3

JUDGE=$KMT_TOP/tests/guest/stacks.py
REPORT=$(host_tool kmemtrace-report)
TINY=8
TOGGLES=20
mkdir -p "$KMT_TEST_DIR"
script=$KMT_TEST_DIR/stacks.sh
cat >"$script" <<EOS
#!/bin/sh
TINY=$TINY
TOGGLES=$TOGGLES
EOS
cat >>"$script" <<'EOS'
D=$KMT_DEBUGFS
OR=/sys/kernel/debug/kmemtrace_oracle
O=$KMT_OUT
KO=$KMT_MODDIR/kmemtrace.ko
. "$KMT_FILES/guest-lib.sh"

# 1. The chain, the recursion and the bulk paths, each stack asked for (kmemtrace-vm loaded
# kmemtrace.ko so, before the oracle, as a user would).
kmemtraced -o $O/chain -- sh -c "echo 1 > $OR/stacks && echo 1 > $OR/bulk &&
	cat $D/stacks > $O/nostack.before && echo 1 > $OR/nostack &&
	cat $D/stacks > $O/nostack.after" > $O/chain.err 2>&1
echo $? > $O/chain.status
cat $OR/stacks_expected > $O/stacks.expected
cat $OR/bulk_expected > $O/bulk.expected
cat $OR/nostack_expected > $O/nostack.expected

# 2. A tiny table: the pattern on each CPU in turn overflows it there.
rmmod kmemtrace
insmod $KO start_disabled=1 stack_depth=32 stack_entries=$TINY stack_cache=0
kmemtraced -o $O/tiny -- sh -c \
	"for c in \$(seq 0 \$((KMT_NCPUS - 1))); do taskset -c \$c sh -c 'echo 1 > $OR/stacks' || exit 1; done" \
	> $O/tiny.err 2>&1
echo $? > $O/tiny.status

# 3. Tiny buffers under load: stacks dropped with the records, the accounting still exact.
# kmemtraced (the command's parent) is stopped while the oracle's stacks are first taken, once
# every CPU's buffer is full (wait_full: the module dropped records on each since the stop; a
# set 0.3 s assumed the load filled them in that time), so their stack records are dropped
# whatever the machine's speed.
rmmod kmemtrace
insmod $KO start_disabled=1 subbufs=2 subbuf_size=4096 stack_depth=64 stack_frees=1
kmemtraced -o $O/lossy -- sh -c ". $KMT_FILES/guest-lib.sh; echo 4 > $OR/load; sleep 1;
	kill -STOP \$PPID; wait_full; echo 1 > $OR/stacks; kill -CONT \$PPID; echo 1 > $OR/stacks;
	sleep 1; echo 0 > $OR/load" \
	> $O/lossy.err 2>&1
echo $? > $O/lossy.status

# 4. The deepest stacks, with frees and pages, under load: toggles, hotplug, unload.
rmmod kmemtrace
insmod $KO start_disabled=1 stack_depth=64 stack_frees=1 pages=1 stack_check=1
echo 4 > $OR/load
kmemtraced -o $O/faults > $O/faults.err 2>&1 &
pid=$!
wait_enabled
toggle_enabled $TOGGLES $O/faults.toggle
echo 0 > /sys/devices/system/cpu/cpu1/online || echo "offline failed" >> $O/faults.toggle
sleep 1
echo 1 > /sys/devices/system/cpu/cpu1/online || echo "online failed" >> $O/faults.toggle
sleep 1
kill -INT $pid
wait $pid
echo $? > $O/faults.status
echo 1 > $D/enabled
sleep 1
echo 0 > $OR/load
cat $D/stacks > $O/faults.stacks
if rmmod kmemtrace; then echo unloaded > $O/faults.rmmod; fi

# 5. The walk cache checked against the unwinder, from kernel threads and user space.
insmod $KO start_disabled=1 stack_depth=16 stack_frees=1 stack_check=1 pages=1
kmemtraced -o $O/check -- sh -c "echo 2 > $OR/load; echo 1 > $OR/stacks; echo 1 > $OR/nostack;
	find / -xdev > /dev/null 2>&1; ls -lR /usr /etc > /dev/null 2>&1;
	for i in 1 2 3 4; do echo 1 > $OR/stacks; cat /proc/self/maps > /dev/null; done;
	for i in \$(seq 40); do /bin/true; sh -c 'exit 0'; done;
	dd if=/dev/zero bs=4k count=2000 2> /dev/null | cat > /dev/null;
	mkdir -p /tmp/kmt48; for i in \$(seq 200); do echo \$i > /tmp/kmt48/f\$i; done; rm -rf /tmp/kmt48;
	echo 0 > $OR/load" > $O/check.err 2>&1
echo $? > $O/check.status
cat $D/stacks > $O/check.stacks
cat $OR/nostack_expected > $O/check.nostack.expected
rmmod kmemtrace
# Back for kmemtrace-vm, which unloads it at the end.
insmod $KO start_disabled=1
exit 0
EOS
chmod +x "$script"

vm_ok stacks -T 360 -c 2 -p 'start_disabled=1 stack_depth=32 stack_frees=1 pages=1' \
	-m kmemtrace_oracle --no-daemon \
	-a "$script" -a "$KMT_TOP/tests/guest/guest-lib.sh" -- stacks.sh
R=$VM_OUT
is "$(command_status)" 0 "guest script ran to the end"
dmesg_clean
is "$(tr -d '\n' <"$R/held" 2>/dev/null)" 111111111111 "tracefs held the slab and page tracepoints"

# 1. The chain.
is "$(cat "$R/chain.status" 2>/dev/null)" 0 "chain: kmemtraced -- COMMAND exit 0" ||
	note_file "$R/chain.err"
like "$(grep '^abi_version' "$R/chain/kmemtrace.meta" 2>/dev/null)" '^abi_version 1\.2$' \
	"chain: the trace is ABI 1.2"
walk_cache=512
[ "$KMT_GUEST_WALK_CACHE" = 1 ] || walk_cache=0
like "$(grep '^stacks_config' "$R/chain/kmemtrace.meta" 2>/dev/null)" \
	"^stacks_config depth 32 frees 1 entries 4096 bytes_per_cpu [1-9][0-9]* cache $walk_cache check 0\$" \
	"chain: kmemtrace.meta says how stacks were taken"
ok "chain: every file passes kmemtrace_check --strict" \
	all_strict "$R/chain"
tap_checks python3 "$JUDGE" chain "$R/chain" "$R/stacks.expected"
tap_checks python3 "$JUDGE" stream "$R/chain" 1
tap_checks python3 "$JUDGE" account "$R/chain" cached
# The bulk paths (kprobes): their events have stacks from the call site on like the others.
tap_checks python3 "$JUDGE" bulk "$R/chain" "$R/bulk.expected"
# kmemtrace-report's views of the same stacks.
"$REPORT" --stacks --json "$R/chain" >"$R/chain.json" 2>"$R/chain.json.err"
is "$?" 0 "kmemtrace-report --stacks --json: exit 0" || note_file "$R/chain.json.err"
"$REPORT" --folded "$R/chain" >"$R/chain.folded" 2>"$R/chain.folded.err"
is "$?" 0 "kmemtrace-report --folded: exit 0" || note_file "$R/chain.folded.err"
tap_checks python3 "$JUDGE" report "$R/stacks.expected" "$R/chain.json" "$R/chain.folded" \
	"$R/nostack.expected"
# The page's flame graphs: each frame's weight is what --folded sums through it.
"$REPORT" --html "$R/chain.html" "$R/chain" >/dev/null 2>"$R/chain.html.err"
is "$?" 0 "kmemtrace-report --html: exit 0" || note_file "$R/chain.html.err"
for gw in flame-bytes:bytes flame-allocs:hits flame-frees:frees; do
	g=${gw%:*} w=${gw#*:}
	"$REPORT" --folded="$w" "$R/chain" >"$R/chain.folded.$w" 2>/dev/null
	res=$(python3 "$KMT_TOP/tests/host/flame-check.py" "$R/chain.html" "$g" "$R/chain.folded.$w")
	is "${res%%$'\n'*}" same "kmemtrace-report --html: $g holds --folded=$w's stacks"
	diag "${res#*$'\n'# }"
done
# The same stacks as a pprof profile, read by go tool pprof: per stack as --stacks counts them,
# and per function (the kernel's and the oracle's names from kallsyms) -top's flat and cum what
# those stacks sum to; the events without a stack are the samples labelled stack=none.
ok "go tool pprof is installed (scripts/install-deps)" command -v go
if command -v go >/dev/null; then
	"$REPORT" --pprof "$R/chain.pb.gz" "$R/chain" >/dev/null 2>"$R/chain.pprof.err"
	is "$?" 0 "kmemtrace-report --pprof: exit 0" || note_file "$R/chain.pprof.err"
	HOME=$R go tool pprof -raw "$R/chain.pb.gz" >"$R/chain.pprof.raw" 2>"$R/chain.pprof.err"
	is "$?" 0 "go tool pprof -raw reads it" || note_file "$R/chain.pprof.err"
	"$REPORT" --stacks --json -l 0 "$R/chain" >"$R/chain.all.json" 2>/dev/null
	is "$(python3 "$KMT_TOP/tests/host/pprof-check.py" stacks "$R/chain.pprof.raw" \
		"$R/chain.all.json")" same "--pprof: per stack as --stacks"
	for ix in alloc_objects inuse_space; do
		HOME=$R go tool pprof -top -unit=B -nodefraction=0 -edgefraction=0 -nodecount=1000000 \
			-sample_index=$ix -tagignore=stack=none "$R/chain.pb.gz" >"$R/chain.top.$ix" \
			2>/dev/null
		is "$(python3 "$KMT_TOP/tests/host/pprof-check.py" top "$R/chain.top.$ix" $ix \
			"$R/chain.all.json")" same "pprof -top -sample_index=$ix: per function as the stacks sum"
	done
	for fn in oracle_chain_c oracle_chain_b oracle_chain_a oracle_stacks_run; do
		like "$(cat "$R/chain.top.alloc_objects")" " $fn \\[kmemtrace_oracle\\]" \
			"pprof -top names $fn in its module"
	done
fi
# The nostack pattern: a call site on no stack gives no stack, however often the cache saw it.
"$REPORT" "$R/chain" >"$R/chain.txt" 2>&1
is "$?" 0 "kmemtrace-report: exit 0" || note_file "$R/chain.txt"
tap_checks python3 "$JUDGE" foreign "$R/chain" "$R/nostack.expected" "$R/chain.txt"
tap_checks python3 "$JUDGE" knew "$R/nostack.before" "$R/nostack.after" "$R/nostack.expected"

# 2. The tiny table.
is "$(cat "$R/tiny.status" 2>/dev/null)" 0 "tiny table: kmemtraced -- COMMAND exit 0" ||
	note_file "$R/tiny.err"
tap_checks python3 "$JUDGE" stream "$R/tiny" 0
tap_checks python3 "$JUDGE" account "$R/tiny" "$TINY"
"$REPORT" --json "$R/tiny" >"$R/tiny.json" 2>"$R/tiny.json.err"
is "$?" 0 "tiny table: kmemtrace-report --json: exit 0" || note_file "$R/tiny.json.err"
"$REPORT" "$R/tiny" >"$R/tiny.txt" 2>&1
is "$?" 0 "tiny table: kmemtrace-report: exit 0"
tap_checks python3 "$JUDGE" nostack "$R/tiny" "$R/tiny.json" "$R/tiny.txt"

# 3. Tiny buffers.
is "$(cat "$R/lossy.status" 2>/dev/null)" 0 "tiny buffers: kmemtraced -- COMMAND exit 0" ||
	note_file "$R/lossy.err"
ok "tiny buffers: every file passes kmemtrace_check --strict" all_strict "$R/lossy"
tap_checks python3 "$JUDGE" stream "$R/lossy" 1
tap_checks python3 "$JUDGE" account "$R/lossy" lossy

# 4. Toggles, hotplug, unload with tracing on.
is "$(cat "$R/faults.status" 2>/dev/null)" 0 "faults: kmemtraced exit 0" ||
	note_file "$R/faults.err"
is "$(cat "$R/faults.toggle" 2>/dev/null)" "" "faults: every toggle and hotplug write succeeded"
tap_checks python3 "$JUDGE" stream "$R/faults" 1
like "$(sed -n 1p "$R/faults.stacks" 2>/dev/null)" '^# stacks depth 64 frees 1 entries 4096 ' \
	"faults: the stacks file states depth, frees and entries"
tap_checks python3 "$JUDGE" cache "$R/faults.stacks" 1
is "$(cat "$R/faults.rmmod" 2>/dev/null)" unloaded "faults: rmmod with tracing on"

# 5. stack_check.
is "$(cat "$R/check.status" 2>/dev/null)" 0 "stack_check: kmemtraced -- COMMAND exit 0" ||
	note_file "$R/check.err"
ok "stack_check: every file passes kmemtrace_check --strict" all_strict "$R/check"
tap_checks python3 "$JUDGE" stream "$R/check" 1
tap_checks python3 "$JUDGE" account "$R/check"
tap_checks python3 "$JUDGE" foreign "$R/check" "$R/check.nostack.expected"
tap_checks python3 "$JUDGE" cache "$R/check.stacks" 1
ok "kmemtrace.ko unloaded at the end" grep -q '^rmmod kmemtrace: ok' "$R/guest.log"

done_testing
