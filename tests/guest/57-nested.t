#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 57-nested.t - events that arrive while the CPU is writing another, as an NMI's do: the oracle's
# nested pattern puts a kprobe on ktime_get_mono_fast_ns(), the clock kmemtrace's write path
# reads while the CPU is marked busy, and its handler (on x86 in NMI context, an int3) fires the
# kfree tracepoint itself, NESTED times, while kmemtraced traces the oracle's own kmalloc/kfree
# pairs. kmemtrace must drop and count every one of those events (the module's dropped count is
# exactly the handler's), write none of them, and keep each CPU's file in seq and timestamp
# order: every file passes kmemtrace_check --strict and holds exactly the records written, each
# seq handed out in the file or in a LOST count. The write path that read the clock before it
# marked the CPU busy (until 2026-12-06) wrote the events that came during that read (100 of the
# 200 here) where it should drop them; and an NMI just after that read wrote its event, stamped
# later, before the one it interrupted: a timestamp going backwards, a file kmemtrace_check
# rejects (no kprobe can land there: the handler runs at the clock's entry).
# Bounds: like 54-growth.t, one short boot: -T 150 and 240 s.
KMT_TEST_TIMEOUT=240
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

[ -f "$KMT_TOP/tests/kmod/kmemtrace_oracle.c" ] || skip_all "the oracle module is not written yet"
require_cmds python3

NESTED=200
mkdir -p "$KMT_TEST_DIR"
guest=$KMT_TEST_DIR/nested.sh
cat >"$guest" <<EOS
#!/bin/sh
NESTED=$NESTED
EOS
cat >>"$guest" <<'EOS'
# In the guest, the module loaded with tracing off: the nested pattern under kmemtraced, then
# the module's counts (from that load) and the handler's.
OR=/sys/kernel/debug/kmemtrace_oracle
kmemtraced -o $KMT_OUT/t -- sh -c "echo $NESTED > $OR/nested" > $KMT_OUT/err 2>&1
echo $? > $KMT_OUT/status
cat $KMT_DEBUGFS/stats > $KMT_OUT/stats
cat $OR/nested > $KMT_OUT/nested
EOS
chmod +x "$guest"

vm_ok nested -c 2 -T 150 -p start_disabled=1 --no-daemon -m kmemtrace_oracle -a "$guest" -- \
	nested.sh
o=$VM_OUT
is "$(command_status)" 0 "the guest script ran"
dmesg_clean
is "$(cat "$o/status" 2>/dev/null)" 0 "kmemtraced exit 0" || note_file "$o/err"
calls=$(awk '$1 == "calls" { print $2 }' "$o/nested" 2>/dev/null)
is "$calls" "$NESTED" "the handler fired the kfree tracepoint $NESTED times"
dropped=$(awk '$1 != "#" { s += $4 } END { print s + 0 }' "$o/stats" 2>/dev/null)
is "$dropped" "$calls" "each of those events was dropped and counted, none else"
ok "every file passes kmemtrace_check --strict (seq and timestamp order)" all_strict "$o/t"
exact "$o/t" "$o/stats" nested
done_testing
