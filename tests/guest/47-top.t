#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 47-top.t - kmemtrace-top in a guest, in batch mode (stdout a file, INTERVAL 2 COUNT 3): reading
# the relay buffers itself (no kmemtraced), it must show the oracle's run, started right after
# interval 0 closed, in interval 1 and only there, with exactly the oracle's allocations and
# frees of its cache (from the oracle's "expected" file); while kmemtraced runs it must refuse
# the buffers in one line (exit 3). On the host, kmemtrace-top --replay and kmemtrace-report
# --interval must agree on the trace kmemtraced wrote meanwhile. By kernel stack (-cstack): refused
# in one line (exit 1) while the module records no stacks; with stack_depth=32, the oracle's stacks
# pattern, run right after interval 0 closed, in interval 1 only: its chain's three allocating
# operations a row each, named oracle_chain_c <- oracle_chain_b, their whole stacks the chain from
# the call site on, with the oracle's allocations and frees (the kmalloc's bytes its size class's),
# and one row per recursion depth, one allocation and one free each.
# Bounds: the guest's -T 390 and the test's 450 s are over 5x the 72 s it took in make check
# beside a busy loop and a fuzzer at nice 19 (and another guest test).
KMT_TEST_TIMEOUT=450
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

[ -f "$KMT_TOP/tests/kmod/kmemtrace_oracle.c" ] || skip_all "the oracle module is not written yet"
TOPB=$KMT_TOP/build/kmemtrace-top
REPORT=$KMT_TOP/build/kmemtrace-report
[ -x "$TOPB" ] && [ -x "$REPORT" ] || skip_all "build/kmemtrace-top not built (make tools)"
require_cmds python3

mkdir -p "$KMT_TEST_DIR"
guest=$KMT_TEST_DIR/top.sh
cat >"$guest" <<'EOS'
#!/bin/sh
OR=/sys/kernel/debug/kmemtrace_oracle
# top_around NAME OP EXPECTED COPY ARG...: kmemtrace-top ARG... into NAME.txt (NAME.err, NAME.rc),
# the oracle's OP run as soon as its interval 0 closed, its EXPECTED file copied to COPY.
top_around() {
	name=$1 op=$2 exp=$3 copy=$4
	shift 4
	kmemtrace-top "$@" >$KMT_OUT/$name.txt 2>$KMT_OUT/$name.err &
	pid=$!
	i=0
	while ! grep -q '^interval 0' $KMT_OUT/$name.txt 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.05; i=$((i + 1))
	done
	echo 1 > $OR/$op || exit 1
	cat $OR/$exp > $KMT_OUT/$copy
	wait $pid
	echo $? > $KMT_OUT/$name.rc
}
# In the guest, without kmemtraced: kmemtrace-top alone, the oracle run in its interval 1.
top_around top run expected oracle.expected -b 2 3
# Under kmemtraced: the buffers are its own.
kmemtraced -o $KMT_OUT/trace -- sh -c "kmemtrace-top -b 1 1 >/dev/null 2>$KMT_OUT/locked.err;
	echo \$? > $KMT_OUT/locked.rc; echo 1 > $OR/run" >$KMT_OUT/kmemtraced.log 2>&1
# Live mode over more records a refresh than the buffers hold (4096 a CPU): kmemtrace-top must
# drain them between refreshes, losing nothing, at a paced load: a buffer lasts ~250 ms of it, ten drains.
rmmod kmemtrace && insmod $KMT_MODDIR/kmemtrace.ko start_disabled=1 subbufs=16 subbuf_size=16384 || exit 1
kmemtrace-top -b 3 2 >$KMT_OUT/busy.txt 2>$KMT_OUT/busy.err &
pid=$!
i=0
while [ $i -lt 250 ]; do
	cat /proc/meminfo /proc/self/status >/dev/null; ls /sys/kernel/slab >/dev/null; usleep 10000
	i=$((i + 1))
done
wait $pid
echo $? > $KMT_OUT/busy.rc
cat $KMT_DEBUGFS/total_overruns > $KMT_OUT/busy.overruns
# By kernel stack: none recorded by this module, then the oracle's stacks pattern in interval 1
# (32 frames: the recursion's deepest stack, 24 levels, is whole, each depth a stack of its own).
kmemtrace-top -b -cstack 1 1 >$KMT_OUT/nostack.txt 2>$KMT_OUT/nostack.err
echo $? > $KMT_OUT/nostack.rc
rmmod kmemtrace && insmod $KMT_MODDIR/kmemtrace.ko start_disabled=1 stack_depth=32 || exit 1
top_around stacks stacks stacks_expected stacks.expected -b -cstack -r 500 2 3
EOS
chmod +x "$guest"

# The guest's own build (another arch's: static, made by kmemtrace-vm before it checks -a files).
vm_ok top --no-daemon -c 2 -T 390 -m kmemtrace_oracle -a "$(guest_tool kmemtrace-top)" -a "$guest" -- top.sh
o=$VM_OUT
is "$(command_status)" 0 "the script ran in the guest"
dmesg_clean
[ -s "$o/oracle.expected" ] || bail "no oracle.expected from the guest"
is "$(cat "$o/top.rc")" 0 "kmemtrace-top -b 2 3: exit 0" || note_file "$o/top.err"
is "$(grep -c '^interval ' "$o/top.txt")" 3 "three intervals"

done_of() { awk -v f="$1" '$1 == "done" && $2 == f { print $3 }' "$o/oracle.expected"; }
cache=$(awk '$1 == "cache_name" { print $2 }' "$o/oracle.expected")
want_allocs=$(( $(done_of oracle_cache_alloc) + $(done_of oracle_mismatch_alloc) ))
want_frees=$(( $(done_of oracle_cache_free) + $(done_of oracle_mismatch_kfree) ))
# "INTERVAL ALLOCS FREES" of the oracle's cache in every table.
got=$(awk -v c="$cache" '/^interval / { k = $2 } $1 == c { print k, $2, $4 }' "$o/top.txt")
is "$got" "1 $want_allocs $want_frees" \
	"$cache: in interval 1 only, $want_allocs allocations and $want_frees frees" ||
	note_file "$o/top.txt"

is "$(cat "$o/locked.rc")" 3 "under kmemtraced: exit 3"
like "$(cat "$o/locked.err")" "kmemtraced is draining" "... saying why and what to do instead"
is "$(wc -l <"$o/locked.err")" 1 "... in one line"

is "$(cat "$o/busy.rc")" 0 "small buffers, 3 s refresh under load: exit 0" || note_file "$o/busy.err"
busiest=$(awk '/^interval / { n = 0; for (i = 1; i < NF; i++) if ($i == "allocs" || $i == "frees") n += $(i + 1); print n }' \
	"$o/busy.txt" | sort -n | tail -1)
ok "an interval held more events than both CPUs' buffers together (${busiest:-none} > 2 x 4096)" \
	test "${busiest:-0}" -gt $((4096 * 2))
is "$(grep -c 'LOST' "$o/busy.txt")" 0 "... and kmemtrace-top reported no lost records" ||
	note_file "$o/busy.txt"
is "$(cat "$o/busy.overruns")" 0 "... nor did the module (total_overruns)"

"$TOPB" --replay -d "$o/trace" -r 100 0.5 2>/dev/null | grep -v 'loadavg:' >"$o/replay.txt"
"$REPORT" --interval 500ms -l 100 "$o/trace" 2>/dev/null >"$o/interval.txt"
diff "$o/replay.txt" "$o/interval.txt" >"$o/replay.diff"
is "$(wc -l <"$o/replay.diff")" 0 \
	"kmemtraced's trace: kmemtrace-top --replay agrees with kmemtrace-report --interval" ||
	note_file "$o/replay.diff"
like "$(cat "$o/interval.txt")" "$cache" "... and the oracle's cache is in it"

is "$("$REPORT" --interval 500ms -l 0 --csv "$o/trace" 2>/dev/null |
	awk -F, -v c="$cache" '$4 == c { a += $5; f += $8 } END { print a + 0, f + 0 }')" \
	"$want_allocs $want_frees" "--interval on that trace: the oracle's cache, exactly"

# ---- by kernel stack ----------------------------------------------------------------------------
is "$(cat "$o/nostack.rc")" 1 "-cstack, the module loaded without stack_depth: exit 1"
like "$(cat "$o/nostack.err")" "kmemtrace.ko records no kernel stacks to group by" "... saying so"
is "$(wc -l <"$o/nostack.err")" 1 "... in one line"
[ -s "$o/stacks.expected" ] || bail "no stacks_expected from the guest"
is "$(cat "$o/stacks.rc")" 0 "stack_depth=32: kmemtrace-top -b -cstack 2 3: exit 0" ||
	note_file "$o/stacks.err"
is "$(grep -c '^interval ' "$o/stacks.txt")" 3 "three intervals"
# The rows of the printed tables, "INTERVAL|LABEL|ALLOCS BYTES FREES NET|FRAME FUNCTIONS...", the
# frames' functions without offsets and modules, then what the oracle's stacks_expected makes of
# them: the chain's rows, and the recursion's.
python3 - "$o/stacks.txt" "$o/stacks.expected" >"$o/stacks.rows" <<'PY'
import sys
rows, k = [], None
for line in open(sys.argv[1]):
    w = line.split()
    if line.startswith("interval "):
        k = w[1]
    elif line.startswith("    ") and rows:
        rows[-1][3].append(w[0].split("+")[0])
    elif k is not None and w and w[0] != "STACK" and not line.startswith("  ") and \
            "loadavg:" not in line and len(w) >= 6:
        rows.append([k, " ".join(w[:-5]), w[-5:-1], []])
exp = {}
done = {}
for line in open(sys.argv[2]):
    w = line.split()
    if w[0] == "done":
        done[w[1]] = int(w[2])
    elif w[0] == "failed":
        exp.setdefault("failed", {})[w[1]] = int(w[2])
    else:
        exp[w[0]] = " ".join(w[1:])
chain = exp["chain"].split()
fail = exp["failed"]
size = int(exp["stack_size"])
cls = min(c for c in (8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096) if c >= size)
ours = [r for r in rows if r[3][:len(chain)] == chain]
print("chain_label", sorted({r[1] for r in ours}))
print("chain_intervals", sorted({r[0] for r in ours}))
got = sorted((int(r[2][0]), int(r[2][2]), r[2][3]) for r in ours)
want = sorted((done[a] + fail[a], done[f], "0") for a, f in
              (("chain_kmalloc", "chain_kfree"), ("chain_cache_alloc", "chain_cache_free"),
               ("chain_large_alloc", "chain_large_free")))
print("chain_rows", got == want, got, want)
km = [int(r[2][1]) for r in ours if int(r[2][0]) == done["chain_kmalloc"] + fail["chain_kmalloc"]]
print("chain_kmalloc_bytes", done["chain_kmalloc"] * cls in km, km, done["chain_kmalloc"] * cls)
leaf, rfn, m = exp["recurse_leaf"], exp["recurse_fn"], int(exp["recurse"])
rec = [r for r in rows if r[3] and r[3][0] == leaf]
print("recurse_label", sorted({r[1] for r in rec}), sorted({r[0] for r in rec}))
print("recurse_rows", sorted((r[2][0], r[2][1], r[2][2], r[2][3]) for r in rec) ==
      [("1", str(cls), "1", "0")] * m, len(rec), m)
# Depth k nests k + 1 frames of the recursion's function: one row for each k = 1..m.
print("recurse_depths", sorted(next((i for i, f in enumerate(r[3][1:]) if f != rfn), 0) - 1
                               for r in rec) == list(range(1, m + 1)))
PY
row() { awk -v k="$1" '$1 == k { $1 = ""; print substr($0, 2) }' "$o/stacks.rows"; }
chain=$(awk '$1 == "chain" { print $2 " <- " $3 }' "$o/stacks.expected")
is "$(row chain_label)" "['$chain']" "the chain's stacks named $chain" || note_file "$o/stacks.txt"
is "$(row chain_intervals)" "['1']" "... in interval 1 only"
like "$(row chain_rows)" "True" \
	"... a row for each allocating operation: the oracle's allocations and frees of its objects, net 0"
like "$(row chain_kmalloc_bytes)" "True" "... the kmalloc's bytes: its allocations times their size class"
leaf=$(awk '$1 == "recurse_leaf" { print $2 }' "$o/stacks.expected")
rfn=$(awk '$1 == "recurse_fn" { print $2 }' "$o/stacks.expected")
is "$(row recurse_label)" "['$leaf <- $rfn'] ['1']" "the recursion's stacks named $leaf <- $rfn, in interval 1 only"
like "$(row recurse_rows)" "True" "... one row per depth, one allocation and one free each"
like "$(row recurse_depths)" "True" "... their stacks 1 to $(awk '$1 == "recurse" { print $2 }' "$o/stacks.expected") levels deep"

done_testing
