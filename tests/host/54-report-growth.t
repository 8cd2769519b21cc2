#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 54-report-growth.t - kmemtrace-report --at and --diff on a kmemtrace-gen --script trace of
# 10 s: a kmalloc leak at 10 objects a second (on two CPUs, each with its own kernel stack)
# and a kmem_cache leak at 2 a second beside churn (objects freed 1 to 3 ms after their
# allocation, every 10 ms), whose figures the test computes from the script it wrote: at
# several T (some exactly on a record's time, which counts), objects and bytes outstanding,
# oldest ages and allocations and frees so far per call site and cache; for windows, growth,
# allocations and frees in the window and the survivors (count, bytes, oldest age, and one by
# one) per call site, cache and stack, and the ranking; the same with --cpu, --cache-name and
# --time; CSV and text agreeing with JSON; the --html section; and bad values refused with
# the option and value named.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
REPORT=$BIN/kmemtrace-report
GEN=$BIN/kmemtrace-gen

require_tools kmemtrace-report kmemtrace-gen
scratch_dir growth

# The script, and every object it made: [site, cache, bytes, cpu, stack, alloc_ns, free_ns].
# Times are ns after the first record: each line 1000 ns after the one before, plus its waits.
python3 - "$T" <<'PY'
import json, sys
t = sys.argv[1]
LEAK, SLOW, CHURN = 0xffffffff81000100, 0xffffffff81000200, 0xffffffff81000300
CACHE = 0xffff888003000000
lines, objs, now, last = [], [], [0], [0]
ptr = [0xffff888100000000]
def rec(line):
    lines.append(line)
    now[0] += 1000
    last[0] = now[0]
def wait(ns):
    lines.append(f"wait {ns}")
    now[0] += ns
def new_ptr():
    ptr[0] += 256
    return ptr[0]
live = {}
def alloc(site, cpu, stack=None):
    p = new_ptr()
    if site == SLOW:
        rec(f"cache_alloc {cpu} {site:#x} {p:#x} {CACHE:#x} 88 96")
        o = [site, "leaky_cache", 96, cpu, stack, now[0], None]
    else:
        req, size = (100, 128) if site == LEAK else (50, 64)
        rec(f"kmalloc {cpu} {site:#x} {p:#x} {req} {size}" + (f" stack={stack}" if stack else ""))
        o = [site, f"kmalloc-{size}", size, cpu, stack, now[0], None]
    objs.append(o)
    live[p] = o
    return p
def free(p, cpu):
    o = live.pop(p)
    rec(f"{'cache_free' if o[0] == SLOW else 'kfree'} {cpu} 0xffffffff81000900 {p:#x}" +
        (f" {CACHE:#x}" if o[0] == SLOW else ""))
    o[6] = now[0]
# The first record is at 0: the cache's name and the two stacks (one per CPU: ids are per CPU).
rec(f"cache_desc 0 {CACHE:#x} 88 96 leaky_cache")
rec(f"stack 0 1 {LEAK:#x},0xffffffff81400010,0xffffffff81500000")
rec(f"stack 1 1 {LEAK:#x},0xffffffff81400020,0xffffffff81500000")
pending = []
n = 0
# 10 ms steps over 10 s: churn every step, the kmalloc leak every 10th step, the cache leak every 50th.
for step in range(1000):
    cpu = step % 2
    pending.append((alloc(CHURN, cpu), now[0] + 1000000 * (1 + step % 3)))
    if step % 10 == 5:
        alloc(LEAK, n % 2, stack=1)
        n += 1
    if step % 50 == 25:
        alloc(SLOW, 1)
    for _ in range(10):
        due = [x for x in pending if x[1] <= now[0] + 1000000]
        for x in due:
            pending.remove(x)
            wait(max(0, x[1] - now[0] - 1000))
            free(x[0], 1 - cpu)
        if now[0] >= (step + 1) * 10000000:
            break
    wait(max(0, (step + 1) * 10000000 - now[0] - 1000))
for p, _ in pending:
    free(p, 0)
# The times the records are at: the first line is at 1000 above, make it 0.
for o in objs:
    o[5] -= 1000
    if o[6] is not None:
        o[6] -= 1000
open(f"{t}/script", "w").write("\n".join(lines) + "\n")
json.dump({"objs": objs, "end": last[0] - 1000}, open(f"{t}/objs.json", "w"))
PY
"$GEN" -o "$T/tr" --cpus 2 --script "$T/script" >/dev/null
ok $? "kmemtrace-gen wrote the script's trace"

# The checker: a report's JSON (--at or --diff, its filters) against the objects.
cat >"$T/check.py" <<'PY'
import json, sys
objs, end = (lambda e: (e["objs"], e["end"]))(json.load(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
mode, t1, t2 = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
cpu = None if sys.argv[6] == "-" else int(sys.argv[6])
cache = None if sys.argv[7] == "-" else sys.argv[7]
tlo = int(sys.argv[8])
SITE = {0xffffffff81000100: "0xffffffff81000100", 0xffffffff81000200: "0xffffffff81000200",
        0xffffffff81000300: "0xffffffff81000300"}
bad = []
# What the filters and --time's start leave: a free counts with its allocation.
sel = [o for o in objs if (cpu is None or o[3] == cpu) and (cache is None or o[1] == cache)
       and o[5] >= tlo]
def live(o, t):
    return o[5] <= t and (o[6] is None or o[6] > t)
def figures(group, key):
    out = {}
    for o in group:
        out.setdefault(key(o), []).append(o)
    return out
def at_row(os_, t):
    lv = [o for o in os_ if live(o, t)]
    return {"live": len(lv), "live_bytes": sum(o[2] for o in lv),
            "oldest_ns": t - min(o[5] for o in lv) if lv else None,
            "allocs": sum(o[5] <= t for o in os_), "frees": sum(o[6] is not None and o[6] <= t for o in os_),
            "bytes_alloc": sum(o[2] for o in os_ if o[5] <= t),
            "bytes_freed": sum(o[2] for o in os_ if o[6] is not None and o[6] <= t)}
def diff_row(os_):
    a, b = [o for o in os_ if live(o, t1)], [o for o in os_ if live(o, t2)]
    sv = [o for o in b if o[5] > t1]
    return {"live_from": len(a), "live_to": len(b), "growth": len(b) - len(a),
            "live_bytes_from": sum(o[2] for o in a), "live_bytes_to": sum(o[2] for o in b),
            "growth_bytes": sum(o[2] for o in b) - sum(o[2] for o in a),
            "allocs": sum(t1 < o[5] <= t2 for o in os_),
            "frees": sum(o[6] is not None and t1 < o[6] <= t2 for o in os_),
            "bytes_alloc": sum(o[2] for o in os_ if t1 < o[5] <= t2),
            "bytes_freed": sum(o[2] for o in os_ if o[6] is not None and t1 < o[6] <= t2),
            "survivors": len(sv), "survivor_bytes": sum(o[2] for o in sv),
            "oldest_survivor_ns": t2 - min(o[5] for o in sv) if sv else None}
def compare(name, got, want):
    for k, v in want.items():
        if got.get(k) != v:
            bad.append(f"{name}: {k} {got.get(k)} != {v}")
if mode == "at":
    rows, want_fn, keep = "at", lambda g: at_row(g, t1), lambda w: w["live"] > 0
else:
    rows, want_fn, keep = "growth", diff_row, lambda w: w["allocs"] or w["frees"] or w["growth"] or w["live_from"] != w["live_to"]
compare(rows, d[rows][0], want_fn(sel))
for table, key, col in ((f"{rows}_callsites", lambda o: SITE[o[0]], "callsite"),
                        (f"{rows}_caches", lambda o: o[1], "cache"),
                        (f"{rows}_stacks", lambda o: o[4], None)):
    want = {k: want_fn(g) for k, g in figures(sel, key).items()}
    want = {k: w for k, w in want.items() if k is not None and keep(w)}
    got = d.get(table, [])
    if col is None:
        # The two leak stacks: by their second frame, which tells the CPU.
        got = {r["frame_addrs"][1]: r for r in got}
        want = {k: w for k, w in want.items()}
        wk = {}
        for o in sel:
            if o[4] is not None and o[3] is not None:
                wk.setdefault(["0xffffffff81400010", "0xffffffff81400020"][o[3]], []).append(o)
        want = {k: want_fn(g) for k, g in wk.items()}
        want = {k: w for k, w in want.items() if keep(w)}
    else:
        got = {r[col]: r for r in got}
    if sorted(got) != sorted(want):
        bad.append(f"{table}: rows {sorted(got)} != {sorted(want)}")
    for k in want:
        if k in got:
            compare(f"{table} {k}", got[k], want[k])
# Ranking: most bytes grown (or outstanding) first.
cs = d[f"{rows}_callsites"]
if mode == "at":
    order = sorted(cs, key=lambda r: (-r["live_bytes"], -r["live"], -(r["oldest_ns"] or 0)))
else:
    order = sorted(cs, key=lambda r: (-r["growth_bytes"], -r["growth"], -r["survivors"], -r["allocs"], r["callsite_addr"]))
if [r["callsite"] for r in cs] != [r["callsite"] for r in order]:
    bad.append("callsites not ranked: " + ", ".join(r["callsite"] for r in cs))
# The objects: outstanding at T (--at) or survivors (--diff), oldest first, one by one.
ptrs = {}
base = 0xffff888100000000
for i, o in enumerate(objs):
    ptrs[id(o)] = f"{base + 256 * (i + 1):#x}"
if mode == "at":
    want = [o for o in sel if live(o, t1)]
    got = d["at_objects"]
    tend = t1
else:
    want = [o for o in sel if live(o, t2) and o[5] > t1]
    got = d["growth_survivors"]
    tend = t2
want.sort(key=lambda o: (o[5], ptrs[id(o)]))
wl = [(ptrs[id(o)], o[2], o[5], tend - o[5], o[1], SITE[o[0]]) for o in want]
gl = [(r["ptr"], r["bytes"], r["alloc_ns"], r["age_ns"], r["cache"], r["callsite"]) for r in got]
if wl != gl:
    bad.append(f"objects: {len(gl)} listed, {len(wl)} expected; first differing: "
               + str(next(((a, b) for a, b in zip(gl, wl) if a != b), None)))
print("; ".join(bad) or "all as expected")
PY

LEAK_T=$(python3 -c "
import json; e = json.load(open('$T/objs.json'))
print(next(o[5] for o in e['objs'] if o[0] == 0xffffffff81000100 and o[5] > 3000000000))")
END=$(python3 -c "import json; print(json.load(open('$T/objs.json'))['end'])")
[ "$END" -gt 9000000000 ]
ok $? "the trace spans 10 s (its last record $END ns after its first)"

# check MODE T1 T2 CPU CACHE TSTART LABEL [report options...]
check() {
	local mode=$1 t1=$2 t2=$3 cpu=$4 cache=$5 tlo=$6 label=$7
	shift 7
	run "$REPORT" --raw-ip --json -l 0 "$@" "$T/tr"
	is "$rc" 0 "$label: exit 0"
	echo "$out" >"$T/d.json"
	is "$(python3 "$T/check.py" "$T/objs.json" "$T/d.json" "$mode" "$t1" "$t2" "$cpu" "$cache" \
		"$tlo")" "all as expected" "$label: every figure as the script made it"
}

check at 0 0 - - 0 "--at=0" --at=0
check at 2500000000 0 - - 0 "--at=2.5s" --at=2.5s
check at "$LEAK_T" 0 - - 0 "--at on a leaked object's own time (it counts)" --at="${LEAK_T}ns"
check at "$END" 0 - - 0 "--at the last record's time" --at="${END}ns"
check diff 2000000000 7000000000 - - 0 "--diff=2s,7s" --diff=2s,7s
check diff 1000000000 1000000000 - - 0 "--diff=1s,1s (an empty window)" --diff=1s,1s
check diff "$LEAK_T" 9000000000 - - 0 "--diff from a leaked object's own time (not a survivor)" \
	--diff="${LEAK_T}ns,9s"
check diff 0 "$END" - - 0 "--diff over the whole trace" --diff="0,${END}ns"
check diff 3000000000 6000000000 1 - 0 "--diff=3s,6s --cpu 1" --diff=3s,6s --cpu 1
check diff 3000000000 6000000000 - leaky_cache 0 "--diff=3s,6s --cache-name leaky_cache" \
	--diff=3s,6s --cache-name leaky_cache
check diff 3000000000 6000000000 - - 2000000000 "--diff=3s,6s --time 2s,8s (nothing before 2s)" \
	--diff=3s,6s --time 2s,8s
check at 4000000000 0 0 kmalloc-128 0 "--at=4s --cpu 0 --cache-name kmalloc-128" \
	--at=4s --cpu 0 --cache-name kmalloc-128

# The leaks' rates: 10 and 2 objects a second, so 50 and 10 over 5 s.
run "$REPORT" --raw-ip --json --diff=2s,7s "$T/tr"
echo "$out" >"$T/d.json"
is "$(jget '[(r["callsite"], r["growth"]) for r in d["growth_callsites"]]' "$T/d.json")" \
	"[('0xffffffff81000100', 50), ('0xffffffff81000200', 10), ('0xffffffff81000300', 0)]" \
	"--diff=2s,7s: the kmalloc leak (+50) first, the cache leak (+10), the churn (0) last"

# CSV: the same tables, rows and values as JSON.
run "$REPORT" --raw-ip --csv -l 0 --diff=2s,7s "$T/tr"
is "$rc" 0 "--diff --csv exits 0"
echo "$out" >"$T/d.csv"
"$REPORT" --raw-ip --json -l 0 --diff=2s,7s "$T/tr" >"$T/d.json"
is "$(python3 - "$T/d.json" "$T/d.csv" <<'PY'
import csv, io, json, sys
d = json.load(open(sys.argv[1]))
blocks = open(sys.argv[2]).read().strip().split("\n\n")
keys = ["growth", "growth_callsites", "growth_caches", "growth_stacks", "growth_survivors"]
bad = [] if len(blocks) == len(keys) else [f"{len(blocks)} CSV tables"]
for k, b in zip(keys, blocks):
    rows = list(csv.DictReader(io.StringIO(b)))
    if len(rows) != len(d[k]): bad.append(f"{k}: {len(rows)} rows != {len(d[k])}")
    for r, j in zip(rows, d[k]):
        for col, v in r.items():
            want = "" if j[col] is None else ";".join(j[col]) if isinstance(j[col], list) else str(j[col])
            if v != want: bad.append(f"{k} {col} {v} != {want}")
print("; ".join(bad[:5]) or "all as expected")
PY
)" "all as expected" "CSV: every table, row and value as in JSON"

# Text: the tables, ranked, within 80 columns; the survivors oldest first.
run "$REPORT" --raw-ip --diff=2s,7s "$T/tr"
is "$rc" 0 "--diff (text) exits 0"
like "$out" "Growth by call site, from 2.000000s to 7.000000s (3):" "text: growth by call site"
# The kmalloc leak's row and the survivors' count, from the objects.
want=$(python3 - "$T/objs.json" <<'PY'
import json, sys
objs = json.load(open(sys.argv[1]))["objs"]
t1, t2 = 2000000000, 7000000000
mine = [o for o in objs if o[0] == 0xffffffff81000100]
live = lambda o, t: o[5] <= t and (o[6] is None or o[6] > t)
a, b = sum(live(o, t1) for o in mine), sum(live(o, t2) for o in mine)
sv = [o for o in mine if live(o, t2) and o[5] > t1]
print(f"{b} +{b - a} +{128 * (b - a)} {len(sv)} {(t2 - min(o[5] for o in sv)) / 1e9:.3f}s "
      f"{sum(t1 < o[5] <= t2 for o in mine)} 0 {sum(live(o, t2) and o[5] > t1 for o in objs)}")
PY
)
is "$(sed -n '/^Growth by call site/,/^$/p' <<<"$out" | awk '$1 == "0xffffffff81000100" {
	$1 = ""; print substr($0, 2) }') ${want##* }" "$want" \
	"text: the kmalloc leak's row (live at T2, growth, bytes, survivors, oldest, allocs, frees)"
like "$out" "Survivors, allocated after 2.000000s and live at 7.000000s, oldest first (${want##* }):" \
	"text: the survivors' count"
is "$(sed '/^Errors/,$d' <<<"$out" | awk 'length > 80' | wc -l)" 0 "text: the growth tables fit 80 columns"
run "$REPORT" --raw-ip --at=2.5s "$T/tr"
like "$out" "Outstanding by call site, at 2.500000s (" "--at (text): outstanding by call site"

# HTML: a Growth section first.
run "$REPORT" --diff=2s,7s --html "$T/g.html" "$T/tr"
is "$rc" 0 "--diff --html exits 0"
like "$(grep -o '<section id="[a-z]*"' "$T/g.html" | head -2 | tr '\n' ' ')" \
	'<section id="summary" <section id="growth"' "--html: the Growth section follows the summary"
like "$(cat "$T/g.html")" 'id="t-growth_survivors"' "--html: with the survivors"

# Bad values: the option and value named, exit 1.
bad() {
	local label=$1 want=$2
	shift 2
	run "$REPORT" "$@" "${TRACE:-$T/tr}"
	is "$rc" 1 "$label: exit 1"
	like "$err" "$want" "$label: says so"
}
bad "--at=1parsec" "--at: '1parsec' is not a time" --at=1parsec
bad "--at=-1s" "--at: '-1s' is not a time" --at=-1s
bad "--at with two times" "--at: '1s,2s' is not a time" --at=1s,2s
bad "--diff=1s" "--diff: '1s' is not T1,T2" --diff=1s
bad "--diff=1s,x" "--diff: '1s,x' is not T1,T2" --diff=1s,x
bad "--diff=5s,2s" "--diff: '5s,2s': T1 is after T2" --diff=5s,2s
bad "--at past the end" "--at=11s: T is past the trace's end" --at=11s
bad "--diff past the end" "--diff=1s,20s: T2 is past the trace's end" --diff=1s,20s
bad "--at outside --time" "--at=1s: T is outside --time's window" --at=1s --time 2s,8s
bad "--diff outside --time" "--diff=3s,9s: T2 is outside --time's window" --diff=3s,9s --time 2s,8s
bad "--at and --diff" "--at and --diff are exclusive" --at=1s --diff=1s,2s
bad "--at with --stacks" "--at is a view of its own" --at=1s --stacks
bad "--diff with --cache" "--diff is a view of its own" --diff=1s,2s --cache
bad "--diff with --sort" "--diff ranks by growth" --diff=1s,2s -s bytes
mkdir -p "$T/empty"
"$GEN" -o "$T/empty" --cpus 1 --script /dev/null >/dev/null
TRACE=$T/empty bad "--at on an empty trace" "--at=0: the trace holds no records" --at=0

done_testing
