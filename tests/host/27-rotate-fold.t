#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 27-rotate-fold.t - the checkpoint kmemtraced --max-size writes, made by the same fold
# (report/lib/kmt_ckpt.c) through kmemtrace-rotate from traces whose every record the test
# knows: kmemtrace-gen's random traces (4 CPUs with stacks, large kmallocs traced twice,
# probed events, two NUMA nodes; big-endian 32-bit with LOST records; fresh addresses with free
# stacks) cut into segments at three times, and a scripted trace of every case the fold must
# keep verbatim (an address allocated twice, a kfree of a cache object, a cache mismatch, a
# short allocation, a free of an object never seen, a double free, LOST records), with what
# they lead to after the cut, beside plain pairs, failed allocations, cross-CPU frees, probed
# frees and stacks whose ids are used after the cut. The report over the checkpoint and the
# kept segments must equal the report over the whole trace (window_compare.py: call sites,
# caches, errors, outstanding objects and ages, stacks, totals, --at and --diff in the window),
# for one, two and three folded segments; every checkpoint passes kmemtrace_check --strict and
# holds only what it must (the live allocations, the odd records, descriptions, stacks, LOST,
# and SUM records).
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
REPORT=$BIN/kmemtrace-report
CHECK=$BIN/kmemtrace_check
GEN=$BIN/kmemtrace-gen
ROTATE=$BIN/kmemtrace-rotate

require_tools kmemtrace-report kmemtrace_check kmemtrace-gen kmemtrace-rotate
scratch_dir rotfold
HERE=$(cd "$(dirname "$0")" && pwd)

# Times (ns) at 1/4, 1/2 and 3/4 of a trace's records, and the trace's first record.
cuts_of() {
	python3 - "$1" <<'PY'
import glob, struct, sys
ts = []
for f in glob.glob(sys.argv[1] + "/cpu*.out"):
    d = open(f, "rb").read()
    fmt = ">Q" if d[:4] == b"RTMK" else "<Q"
    ts += [struct.unpack_from(fmt, d, o + 8)[0] for o in range(64, len(d), 64)]
ts.sort()
n = len(ts)
print(*(ts[n * i // 4] + 1 for i in (1, 2, 3)), ts[0])
PY
}

# rotate NAME: fold 1, 2 and 3 of the segments cut at the quartiles, and compare each.
rotate_and_compare() {
	local name=$1 full=$T/$1 c1 c2 c3 start k
	read -r c1 c2 c3 start < <(cuts_of "$full")
	for k in 1 2 3; do
		local rot=$T/$name.rot$k cut
		cut=$(eval echo "\$c$k")
		"$ROTATE" --fold $k "$full" "$rot" "$c1" "$c2" "$c3" 2>"$T/rotate.err"
		ok $? "$name: kmemtrace-rotate --fold $k" "$(cat "$T/rotate.err")"
		local bad=0 f
		for f in "$rot"/ckpt.*/cpu*.out; do
			"$CHECK" --strict -q "$f" >"$T/check.err" 2>&1 || { bad=1; cat "$T/check.err"; }
		done
		is "$bad" 0 "$name --fold $k: every checkpoint file passes kmemtrace_check --strict"
		tap_checks python3 "$HERE/window_compare.py" "$REPORT" "$rot" "$full" "$name --fold $k" \
			$((cut - start + 500)) $((cut - start + 500 + (c3 - c1) / 16)) \
			$((cut - start + 500 + (c3 - c1) / 8))
	done
}

"$GEN" -o "$T/rich" --cpus 4 --events 60000 --stack-depth 8 --stacks 40 --twice \
	--large-every 30 --probed-every 17 --nodes 2 --seed 5 >/dev/null
rotate_and_compare rich
"$GEN" -o "$T/be32" --cpus 2 --events 30000 --big-endian --word-bits 32 --lost-every 3000 \
	--seed 7 >/dev/null
rotate_and_compare be32
"$GEN" -o "$T/fresh" --cpus 3 --events 30000 --fresh-addresses --stack-depth 4 --stack-frees \
	--seed 9 >/dev/null
rotate_and_compare fresh

# The odd cases, each before the cut (a 1 ms wait) with what follows from it after.
cat >"$T/odd.script" <<'EOF'
cache_desc 0 0xffff888003000000 96 128 odd_cache
cache_desc 0 0xffff888003100000 96 128 other_cache
stack 0 1 0xffffffff81000100,0xffffffff81200000,0xffffffff81300000
stack 1 1 0xffffffff81000200,0xffffffff81200000
# plain pairs, with stacks; a cross-CPU free; a probed free of a cache object
kmalloc 0 0xffffffff81000100 0xffff888100000000 24 32 stack=1
kfree 0 0xffffffff81000900 0xffff888100000000
kmalloc 1 0xffffffff81000200 0xffff888100000100 40 64 stack=1
kfree 0 0xffffffff81000900 0xffff888100000100
cache_alloc 1 0xffffffff81000300 0xffff888100000200 0xffff888003000000 96 128
kfree 1 0xffffffff81000900 0xffff888100000200 probed
kmalloc 0 0xffffffff81000100 0 5000 8192
# an address allocated twice, freed after the cut
kmalloc 0 0xffffffff81000400 0xffff888100001000 24 32
kmalloc 1 0xffffffff81000400 0xffff888100001000 24 32
# a kfree of a cache object; a cache mismatch; a short allocation freed after the cut
cache_alloc 0 0xffffffff81000300 0xffff888100002000 0xffff888003000000 96 128
kfree 0 0xffffffff81000900 0xffff888100002000
cache_alloc 0 0xffffffff81000300 0xffff888100003000 0xffff888003000000 96 128
cache_free 0 0xffffffff81000a00 0xffff888100003000 0xffff888003100000
kmalloc 1 0xffffffff81000500 0xffff888100004000 100 64
# a free of an object never seen allocated, and its address reused cleanly
kfree 1 0xffffffff81000900 0xffff888100005000
kmalloc 1 0xffffffff81000500 0xffff888100005000 16 16
kfree 1 0xffffffff81000900 0xffff888100005000
# a double free before the cut
kmalloc 0 0xffffffff81000600 0xffff888100006000 64 64
kfree 0 0xffffffff81000900 0xffff888100006000
kfree 1 0xffffffff81000900 0xffff888100006000
lost 1 5
# live across the cut: one freed after it, one never; a cache object freed after it
kmalloc 0 0xffffffff81000100 0xffff888100007000 24 32 stack=1
kmalloc 1 0xffffffff81000200 0xffff888100008000 24 32 stack=1
cache_alloc 1 0xffffffff81000300 0xffff888100009000 0xffff888003000000 96 128
wait 1000000
kfree 0 0xffffffff81000900 0xffff888100001000
kfree 0 0xffffffff81000900 0xffff888100004000
kfree 1 0xffffffff81000900 0xffff888100007000
cache_free 0 0xffffffff81000a00 0xffff888100009000 0xffff888003000000
cache_alloc 0 0xffffffff81000300 0xffff88810000a000 0xffff888003100000 96 128
kmalloc 0 0xffffffff81000100 0xffff88810000b000 24 32 stack=1
kmalloc 1 0xffffffff81000200 0xffff88810000c000 24 32 stack=1
kfree 1 0xffffffff81000900 0xffff88810000b000
EOF
"$GEN" -o "$T/odd" --cpus 2 --script "$T/odd.script" >/dev/null
ok $? "the odd cases' trace is written"
read -r _ _ _ start < <(cuts_of "$T/odd")
cut=$(python3 - "$T/odd" <<'PY'
import glob, struct, sys
ts = sorted(struct.unpack_from("<Q", d, o + 8)[0]
            for f in glob.glob(sys.argv[1] + "/cpu*.out") for d in [open(f, "rb").read()]
            for o in range(64, len(d), 64))
gap = max(range(1, len(ts)), key=lambda i: ts[i] - ts[i - 1])
print((ts[gap - 1] + ts[gap]) // 2)
PY
)
"$ROTATE" "$T/odd" "$T/odd.rot" "$cut" 2>"$T/rotate.err"
ok $? "odd: kmemtrace-rotate at the 1 ms gap" "$(cat "$T/rotate.err")"
for f in "$T"/odd.rot/ckpt.000002/cpu*.out; do
	ok_cmd "odd: $(basename "$f") passes kmemtrace_check --strict" "$CHECK" --strict -q "$f"
done
tap_checks python3 "$HERE/window_compare.py" "$REPORT" "$T/odd.rot" "$T/odd" "odd" \
	$((cut - start + 100)) $((cut - start + 3000))
# What the checkpoint holds: by type, from its files.
got=$(python3 - "$T/odd.rot/ckpt.000002" <<'PY'
import collections, glob, sys
c = collections.Counter()
for f in glob.glob(sys.argv[1] + "/cpu*.out"):
    d = open(f, "rb").read()
    c.update(d[o] for o in range(64, len(d), 64))
print(" ".join(f"{t}:{c[t]}" for t in sorted(c)))
PY
)
# Kept: 6 kmallocs (the twice-allocated address's two, the short one, the double free's, the
# two live across the cut), 3 cache allocations (the kfree'd and the mismatched objects, the one
# live across the cut), 4 kfrees (of the cache object, of the object never seen, both of the
# double free: a pair freed again within the report's window of remembered frees stays
# whole), 1 cache_free (the mismatch), 2 descriptions, 2 stack slots, 1 LOST; and 5 SUM
# records: 4 keys of pairs (two with stacks, the cross-CPU one among them, the probed free, the
# reused address) and the failed one.
is "$got" "1:6 2:3 4:4 5:1 7:2 8:1 9:2 10:5" "odd: the checkpoint holds what it must, by record type"

done_testing
