#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 52-interval-stacks.t - kmemtrace-report --interval --stacks and kmemtrace-top -cstack on a
# kmemtrace-gen --script trace with kernel stacks whose per-interval, per-stack figures the test
# computes from the script it wrote (records 1000 ns apart; each stack given its own id on each
# CPU, as the module does): every interval's allocations, bytes, frees and net change of every
# stack in text, CSV and JSON, each stack named by its call site's function and its caller's with
# its whole stack under it, two stacks through the same two functions kept apart, allocations
# without a stack counted beside the rows; kmemtrace-top's replay the same; sort and rows; a
# trace without stacks refused with its name (exit 1), before any table when its kmemtrace.meta
# says so.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
REPORT=$BIN/kmemtrace-report
TOP=$BIN/kmemtrace-top
GEN=$BIN/kmemtrace-gen

require_tools kmemtrace-report kmemtrace-top kmemtrace-gen
scratch_dir ivstacks

# A script of 9000 records on 2 CPUs, and what each 1.5 ms interval holds, per stack: JSON rows
# ("INTERVAL FRAME_ADDRS LABEL ALLOCS BYTES_REQ BYTES_ALLOC FREES BYTES_FREED NET"), the text
# rows ("INTERVAL LABEL ALLOCS BYTES FREES NET | FRAMES"), and the allocations without a stack.
python3 - "$T" <<'PY'
import collections, random, sys
t = sys.argv[1]
random.seed(29)
SYMS = [(0xffffffff81000000, "_stext"), (0xffffffff81100000, "alloc_a"),
        (0xffffffff81100200, "kmalloc_user"), (0xffffffff81100400, "lone_site"),
        (0xffffffff81200000, "caller_b"), (0xffffffff81200400, "d_caller"),
        (0xffffffff81300000, "outer_fn"), (0xffffffff81300100, "outer_two"),
        (0xffffffff81400000, "_etext")]
open(f"{t}/kallsyms", "w").write("".join(f"{a:x} T {n}\n" for a, n in SYMS))
def name(a):
    # A frame is a return address: the function holding a - 1, as the report names it.
    base, fn = max((s for s in SYMS if s[0] <= a - 1), key=lambda s: s[0])
    return fn, f"{fn}+{a - base:#x}"
A, B, C, D, E, O, O2 = (0xffffffff81100010, 0xffffffff81200020, 0xffffffff81100244,
                        0xffffffff81200404, 0xffffffff81100418, 0xffffffff81300030,
                        0xffffffff81300108)
# Innermost (the call site) first. 0 and 1 run through the same two functions.
STACKS = [(A, B, O), (A, B + 8, O2), (C, D, O), (E,), (A, D, O, O2)]
WEIGHT = [5, 3, 4, 2, 2]
CACHE = 0xffff888003000000
IVL = 1500000
lines = [f"cache_desc {c} {CACHE:#x} 200 256 kmt_s" for c in (0, 1)]
ids = {}                      # (cpu, stack) -> id: each CPU numbers its stacks its own way
live, addr = [], 0xffff888100000000
exp = collections.defaultdict(lambda: [0, 0, 0, 0, 0, 0])  # (ivl, stack) -> figures
unstacked = collections.Counter()
def iv():
    return len(lines) * 1000 // IVL   # the interval of the line about to be written
while len(lines) < 9000:
    cpu = random.randint(0, 1)
    if live and random.random() < 0.4:
        o = live.pop(random.randrange(len(live)))
        if o["cache"]:
            lines.append(f"cache_free {cpu} 0xffffffff81100800 {o['ptr']:#x} {CACHE:#x}")
        else:
            lines.append(f"kfree {cpu} 0xffffffff81100800 {o['ptr']:#x}")
        continue
    if random.random() < 0.06:
        unstacked[iv()] += 1
        addr += 0x100
        lines.append(f"kmalloc {cpu} {A:#x} {addr:#x} 24 32 nostack")
        continue
    k = random.choices(range(len(STACKS)), WEIGHT)[0]
    if (cpu, k) not in ids:
        ids[cpu, k] = 1 + k + 7 * cpu
        lines.append(f"stack {cpu} {ids[cpu, k]} {','.join(f'{a:#x}' for a in STACKS[k])}")
    e = exp[iv(), k]
    fail = random.random() < 0.03
    cache = random.random() < 0.3
    req, size = (200, 256) if cache else random.choice([(10, 16), (50, 64), (100, 128)])
    addr += 0x100
    ptr = 0 if fail else addr
    if cache:
        lines.append(f"cache_alloc {cpu} {STACKS[k][0]:#x} {ptr:#x} {CACHE:#x} {req} {size} stack={ids[cpu, k]}")
    else:
        lines.append(f"kmalloc {cpu} {STACKS[k][0]:#x} {ptr:#x} {req} {size} stack={ids[cpu, k]}")
    e[0] += 1
    if fail:
        continue
    e[1] += req
    e[2] += size
    e[5] += 1
    live.append({"ptr": ptr, "cache": cache, "k": k, "size": size})
open(f"{t}/script", "w").write("\n".join(lines) + "\n")
# Frees: in the interval of the free, for the stack its object was allocated through.
owner = {}
for i, line in enumerate(lines):
    w = line.split()
    if w[0] in ("kmalloc", "cache_alloc") and w[-1].startswith("stack="):
        p = int(w[3], 16)
        if p:
            cpu = int(w[1])
            k = next(k for (c, k), v in ids.items() if c == cpu and v == int(w[-1][6:]))
            owner[p] = (k, int(w[5] if w[0] == "kmalloc" else w[6]))
    elif w[0] in ("kfree", "cache_free"):
        p = int(w[3], 16)
        if p in owner:
            k, size = owner.pop(p)
            e = exp[i * 1000 // IVL, k]
            e[3] += 1
            e[4] += size
            e[5] -= 1
with open(f"{t}/exp.json", "w") as f:
    for (k_iv, k), e in sorted(exp.items()):
        if e[0] or e[3]:
            fr = ";".join(f"{a:#x}" for a in STACKS[k])
            f.write(f"{k_iv} {fr} {' '.join(map(str, e))}\n")
with open(f"{t}/exp.text", "w") as f:
    for (k_iv, k), e in sorted(exp.items()):
        if e[0] or e[3]:
            label = " <- ".join(name(a)[0] for a in STACKS[k][:2])
            frames = ";".join(name(a)[1] for a in STACKS[k])
            net = f"{e[5]:+d}" if e[5] else "0"   # a change: signed, as the screen has it
            f.write(f"{k_iv} {label} {e[0]} {e[2]} {e[3]} {net} | {frames}\n")
with open(f"{t}/exp.unstacked", "w") as f:
    for k_iv in range((len(lines) - 1) * 1000 // IVL + 1):
        f.write(f"{k_iv} {unstacked[k_iv]}\n")
open(f"{t}/nint", "w").write(f"{(len(lines) - 1) * 1000 // IVL + 1}\n")
PY
ok $? "wrote the script and each interval's figures by stack"
"$GEN" -o "$T/tr" --cpus 2 --script "$T/script" >"$T/tr.sum" && cp "$T/kallsyms" "$T/tr/"
ok $? "kmemtrace-gen --script wrote the trace with its stacks"
is "$(summary stacks_written "$T/tr.sum")" 10 "each of the 5 stacks written once on each CPU"

# Text: "INTERVAL LABEL ALLOCS BYTES FREES NET | FRAME;FRAME..." for each row (a label has blanks:
# the figures are the last five words of a row, the frames the indented lines under it).
text_rows() {
	awk 'function flush() { if (row != "") print row " | " fr; row = fr = "" }
	     /^interval / { flush(); k = $2; next }
	     /^STACK / || /loadavg:/ || /^  [(.]/ || NF == 0 { next }
	     /^    / { fr = fr (fr == "" ? "" : ";") $1; next }
	     { flush(); row = k; for (i = 1; i < NF; i++) row = row " " $i }
	     END { flush() }' | sort
}
"$REPORT" --interval 1500us --stacks -l 0 "$T/tr" 2>"$T/err" >"$T/ivl.txt"
is "$?" 0 "--interval 1500us --stacks: exit 0"
is "$(text_rows <"$T/ivl.txt")" "$(sort "$T/exp.text")" \
	"text: every interval's stacks, named by call site <- caller, allocations, bytes, frees, net and whole stack"
is "$(grep -c '^interval ' "$T/ivl.txt")" "$(cat "$T/nint")" "one table per interval up to the last record"
is "$(awk '/^interval / { n = 0; for (i = 1; i < NF; i++) if ($i == "stack") n = $(i + 1); print $2, n + 0 }' "$T/ivl.txt")" \
	"$(cat "$T/exp.unstacked")" "each heading counts the allocations without a stack"
is "$(grep -c '^alloc_a <- caller_b ' "$T/ivl.txt")" \
	"$(awk '$2 == "alloc_a" && $4 == "caller_b" { n++ } END { print n + 0 }' "$T/exp.text")" \
	"two stacks through alloc_a <- caller_b: a row each"

"$REPORT" --interval 1500us --stacks -l 0 --json "$T/tr" 2>/dev/null >"$T/ivl.json"
is "$?" 0 "--json: exit 0"
is "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["by"] == "stack"
for iv in d["intervals"]:
    for r in iv["rows"]:
        print(iv["index"], ";".join(r["frame_addrs"]), r["allocs"], r["bytes_req"], r["bytes_alloc"],
              r["frees"], r["bytes_freed"], r["net"])' "$T/ivl.json" | sort)" "$(sort "$T/exp.json")" \
	"JSON: every interval's stacks, allocations, bytes requested and reserved, frees, bytes freed, net"
is "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(i["total"]["allocs"] + i["allocs_without_stack"] for i in d["intervals"]))' "$T/ivl.json")" \
	"$("$REPORT" --json "$T/tr" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["allocs"])')" \
	"JSON: the rows and the allocations without a stack add up to the whole trace's allocations"
is "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ids = {}
for iv in d["intervals"]:
    for r in iv["rows"]:
        ids.setdefault(tuple(r["frame_addrs"]), set()).add(r["stack"])
print(len(ids), all(len(v) == 1 for v in ids.values()), len({min(v) for v in ids.values()}))' "$T/ivl.json")" \
	"5 True 5" "JSON: a stack has one number in every interval, whichever CPU wrote it"

"$REPORT" --interval 1500us --stacks -l 0 --csv "$T/tr" 2>/dev/null >"$T/ivl.csv"
is "$(head -1 "$T/ivl.csv")" \
	"interval,start_ns,end_ns,stack,callsite,label,allocs,bytes_req,bytes_alloc,frees,bytes_freed,net,frag_pct,frames,frame_addrs" \
	"CSV header"
is "$(python3 -c '
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["interval"], r["frame_addrs"], r["allocs"], r["bytes_req"], r["bytes_alloc"], r["frees"],
          r["bytes_freed"], r["net"])' "$T/ivl.csv" | sort)" "$(sort "$T/exp.json")" "CSV agrees"

# Sort and rows.
"$REPORT" --interval 1500us --stacks -l 2 -s allocs --json "$T/tr" 2>/dev/null >"$T/top2.json"
want=$(python3 - "$T/exp.json" <<'PY'
import collections, sys
by = collections.defaultdict(list)
for line in open(sys.argv[1]):
    w = line.split()
    by[int(w[0])].append(int(w[2]))
for k in sorted(by):
    print(k, sorted(by[k], reverse=True)[:2])
PY
)
is "$(python3 -c '
import json, sys
for iv in json.load(open(sys.argv[1]))["intervals"]:
    if iv["rows"]:
        print(iv["index"], [r["allocs"] for r in iv["rows"]])' "$T/top2.json")" "$want" \
	"-l 2 -s allocs: the two stacks with the most allocations of each interval, most first"

# ---- kmemtrace-top replays the same -------------------------------------------------------------
"$TOP" -b -cstack -r 100 --replay -d "$T/tr" 0.0015 >"$T/top.txt" 2>"$T/top.err"
is "$?" 0 "kmemtrace-top -b -cstack --replay: exit 0"
is "$(text_rows <"$T/top.txt")" "$(sort "$T/exp.text")" "kmemtrace-top -cstack: the same stacks and figures"
diff <(grep -v 'loadavg:' "$T/top.txt") <("$REPORT" --interval 1500us --stacks -l 100 "$T/tr" 2>/dev/null) \
	>"$T/diff"
ok $? "kmemtrace-top -cstack --replay: the tables of kmemtrace-report --interval --stacks" "$(head -20 "$T/diff")"
"$TOP" -b --caller=stack -r 100 --replay -d "$T/tr" 0.0015 2>/dev/null | grep -v 'loadavg:' >"$T/top2.txt"
"$TOP" -b --stacks -r 100 --replay -d "$T/tr" 0.0015 2>/dev/null | grep -v 'loadavg:' >"$T/top3.txt"
cmp -s "$T/top2.txt" "$T/top3.txt" && cmp -s "$T/top2.txt" <(grep -v 'loadavg:' "$T/top.txt")
ok $? "-cstack, --caller=stack and --stacks: one choice"
"$TOP" -b -cstack --raw-ip --replay -d "$T/tr" 0.0015 2>/dev/null >"$T/raw.txt"
is "$(awk '/^    / { print $1 }' "$T/raw.txt" | grep -cv '^0xffffffff8')" 0 "--raw-ip: frames as addresses"

# ---- a trace without stacks ---------------------------------------------------------------------
"$GEN" -o "$T/plain" --cpus 2 --events 3000 >/dev/null
"$TOP" -b -cstack --replay -d "$T/plain" 0.001 >"$T/out" 2>"$T/err"
is "$?" 1 "kmemtrace-top -cstack on a trace without stacks: exit 1"
is "$(wc -l <"$T/err")" 1 "... one line"
like "$(cat "$T/err")" "$T/plain: the trace has no kernel stacks to group by" "... naming the trace"
"$REPORT" --interval 1ms --stacks "$T/plain" >/dev/null 2>"$T/err"
is "$?" 1 "kmemtrace-report --interval --stacks on it: exit 1"
like "$(cat "$T/err")" "$T/plain: the trace has no kernel stacks to group by" "... naming the trace"
# Its metadata says so: refused before reading, no table written.
printf 'stacks_config depth 0 frees 0 entries 0 bytes_per_cpu 0 cache 0 check 0\n' \
	>"$T/plain/kmemtrace.meta"
"$TOP" -b -cstack --replay -d "$T/plain" 0.001 >"$T/out" 2>"$T/err"
is "$?" 1 "kmemtrace.meta says depth 0: exit 1"
is "$(wc -c <"$T/out")" 0 "... before any table"
like "$(cat "$T/err")" "$T/plain: the trace has no kernel stacks" "... naming the trace"
"$REPORT" --interval 1ms --stacks --csv "$T/plain" >"$T/out" 2>"$T/err"
is "$?:$(wc -c <"$T/out")" "1:0" "kmemtrace-report too, before its CSV header"
"$TOP" -b -c stack -d "$T/tr" >/dev/null 2>"$T/err"
is "$?" 1 "-c stack (a blank before the optional argument): exit 1"
like "$(cat "$T/err")" "write -cstack or --caller=stack" "... saying how to write it"
"$TOP" -b --caller=frames -d "$T/tr" >/dev/null 2>"$T/err"
is "$?" 1 "--caller=frames: exit 1"

done_testing
