#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 46-report-life.t - kmemtrace-report --lifetimes and --pages on a kmemtrace-gen --script trace
# whose lifetimes (records 1000 ns apart), ages and page counts the test computes from the
# script it wrote: counts, max, mean and ages exact, quantiles within the stated 12.5%, the
# short-lived and long-lived lists by the thresholds given, text and CSV agreeing with JSON,
# a large kmalloc counted once, and bad options refused.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
REPORT=$BIN/kmemtrace-report
GEN=$BIN/kmemtrace-gen

require_tools kmemtrace-report kmemtrace-gen
scratch_dir life

# The script, and what it holds: per call site the lifetimes of its freed objects and the
# ages of those live at the end (in ns: lines apart x 1000), per order the page counts.
python3 - "$T" <<'PY'
import json, random, sys
t = sys.argv[1]
random.seed(46)
SHORT, LONG, LIVE, FREER = 0xffffffff81000100, 0xffffffff81000200, 0xffffffff81000300, 0xffffffff81000900
lines, alloc_at, exp = [], {}, {}
addr = [0xffff888100000000]
def new_ptr():
    addr[0] += 64
    return addr[0]
def alloc(site, ptr, req=40, size=64):
    alloc_at[ptr] = (site, len(lines))
    lines.append(f"kmalloc 0 {site:#x} {ptr:#x} {req} {size}")
def free(ptr):
    site, at = alloc_at.pop(ptr)
    exp.setdefault(site, {"life": [], "ages": []})["life"].append((len(lines) - at) * 1000)
    lines.append(f"kfree {random.randint(0, 1)} {FREER:#x} {ptr:#x}")
longs = [new_ptr() for _ in range(40)]
lives = [new_ptr() for _ in range(10)]
for p in longs[:20]:
    alloc(LONG, p)
for p in lives:
    alloc(LIVE, p)
for p in longs[20:]:
    alloc(LONG, p)
pending = []
pages = {}   # order -> [allocs, frees, live]
pfn = [1000]
live_pfns = []
for i in range(300):
    p = new_ptr()
    alloc(SHORT, p)
    pending.append(p)
    while pending and (len(pending) > 3 or random.random() < 0.5):
        free(pending.pop(0))
    if i % 10 == 0:
        order = i % 4
        pfn[0] += 16
        lines.append(f"page_alloc 1 {pfn[0]} {order} {1 if order else 0} 0x{0x100cca if order else 0xcc0:x}")
        pages.setdefault(order, [0, 0, 0])[0] += 1
        live_pfns.append((pfn[0], order))
    if i % 25 == 0 and live_pfns:
        f, o = live_pfns.pop(0)
        lines.append(f"page_free 1 {f} {o}")
        pages[o][1] += 1
while pending:
    free(pending.pop(0))
# A large kmalloc: its pages (order 2), then the kmalloc at the direct map's address.
pfn[0] += 16
lines.append(f"page_alloc 0 {pfn[0]} 2 0 0xcc0")
pages[2][0] += 1
live_pfns.append((pfn[0], 2))
big = 0xffff888000000000 + (pfn[0] << 12)
alloc(0xffffffff81000400, big, 10000, 16384)
for p in longs:
    free(p)
end = len(lines) - 1
for ptr, (site, at) in alloc_at.items():
    exp.setdefault(site, {"life": [], "ages": []})["ages"].append((end - at) * 1000)
for f, o in live_pfns:
    pages[o][2] += 1
open(f"{t}/script", "w").write("\n".join(lines) + "\n")
json.dump({"sites": {f"{s:#x}": v for s, v in exp.items()},
           "pages": {str(k): v for k, v in pages.items()}}, open(f"{t}/expect.json", "w"))
PY
"$GEN" -o "$T/tr" --cpus 2 --script "$T/script" >/dev/null
ok $? "kmemtrace-gen wrote the script's trace"

run "$REPORT" --lifetimes --raw-ip --json -l 0 --short-lived 5us --long-lived 100us "$T/tr"
is "$rc" 0 "--lifetimes --json exits 0"
echo "$out" >"$T/life.json"

# Every figure against the script's.
check=$(python3 - "$T/life.json" "$T/expect.json" <<'PY'
import json, math, sys
d, e = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rows = {r["callsite_addr"]: r for r in d["lifetimes"]}
bad = []
for site, x in e["sites"].items():
    r = rows.get(site)
    if not r:
        bad.append(f"{site} missing"); continue
    life, ages = sorted(x["life"]), x["ages"]
    if r["freed"] != len(life): bad.append(f"{site} freed {r['freed']} != {len(life)}")
    if r["live"] != len(ages): bad.append(f"{site} live {r['live']} != {len(ages)}")
    if sum(r["log2_hist"]) != len(life): bad.append(f"{site} log2_hist sum")
    if sum(r["live_log2_hist"]) != len(ages): bad.append(f"{site} live_log2_hist sum")
    if ages and r["live_oldest_ns"] != max(ages): bad.append(f"{site} oldest {r['live_oldest_ns']} != {max(ages)}")
    if not life:
        if r["p50_ns"] is not None: bad.append(f"{site} p50 of nothing")
        continue
    if r["max_ns"] != life[-1]: bad.append(f"{site} max {r['max_ns']} != {life[-1]}")
    if r["mean_ns"] != sum(life) // len(life): bad.append(f"{site} mean")
    for q, k in ((0.5, "p50_ns"), (0.9, "p90_ns"), (0.99, "p99_ns")):
        want = life[max(0, math.ceil(q * len(life)) - 1)]
        if not (want <= r[k] <= want * 1.125): bad.append(f"{site} {k} {r[k]} not within 12.5% above {want}")
short = [r["callsite_addr"] for r in d["short_lived"]]
long_ = sorted(r["callsite_addr"] for r in d["long_lived"])
if short != ["0xffffffff81000100"]: bad.append(f"short_lived {short}")
# The large kmalloc is 40 records (40 us) old at the end: not long-lived.
if long_ != ["0xffffffff81000200", "0xffffffff81000300"]: bad.append(f"long_lived {long_}")
c = {r["cache"]: r for r in d["cache_lifetimes"]}
nfreed = sum(len(x["life"]) for s, x in e["sites"].items() if s != "0xffffffff81000400")
if c.get("kmalloc-64", {}).get("freed") != nfreed: bad.append("kmalloc-64 freed")
print("; ".join(bad) or "all as expected")
PY
)
is "$check" "all as expected" "lifetimes, ages, short-lived and long-lived lists as the script made them"

# CSV: the same rows and values as JSON.
run "$REPORT" --lifetimes --raw-ip --csv -l 0 --short-lived 5us --long-lived 100us "$T/tr"
is "$rc" 0 "--lifetimes --csv exits 0"
echo "$out" >"$T/life.csv"
check=$(python3 - "$T/life.json" "$T/life.csv" <<'PY'
import csv, io, json, sys
d = json.load(open(sys.argv[1]))
blocks = open(sys.argv[2]).read().strip().split("\n\n")
bad = []
keys = ["lifetimes", "short_lived", "long_lived", "cache_lifetimes"]
if len(blocks) != len(keys): bad.append(f"{len(blocks)} CSV tables")
for k, b in zip(keys, blocks):
    rows = list(csv.DictReader(io.StringIO(b)))
    if len(rows) != len(d[k]): bad.append(f"{k}: {len(rows)} rows != {len(d[k])}")
    for r, j in zip(rows, d[k]):
        for col in ("freed", "p50_ns", "live_oldest_ns"):
            if col in r and r[col] != ("" if j[col] is None else str(j[col])):
                bad.append(f"{k} {col} {r[col]} != {j[col]}")
print("; ".join(bad) or "all as expected")
PY
)
is "$check" "all as expected" "CSV: every table, row and value as in JSON"

run "$REPORT" --lifetimes --raw-ip --short-lived 5us --long-lived 100us "$T/tr"
is "$rc" 0 "--lifetimes (text) exits 0"
like "$out" "Short-lived objects (1):" "text: one short-lived call site"
like "$out" "Long-lived objects (2):" "text: two long-lived ones"
like "$out" "Object lifetimes by cache (" "text: lifetimes by cache"
is "$(sed '/^Errors/,$d' <<<"$out" | awk 'length > 80' | wc -l)" 0 "text: the lifetime tables fit 80 columns"

# Pages: counts per order from the script, the large kmalloc once in all.
run "$REPORT" --pages --json "$T/tr"
is "$rc" 0 "--pages --json exits 0"
echo "$out" >"$T/pages.json"
check=$(python3 - "$T/pages.json" "$T/expect.json" <<'PY'
import json, sys
d, e = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
bad = []
rows = {str(r["order"]): r for r in d["pages_by_order"]}
for o, (a, f, l) in e["pages"].items():
    r = rows.get(o, {})
    if (r.get("allocs"), r.get("frees"), r.get("live")) != (a, f, l):
        bad.append(f"order {o}: {r} != {(a, f, l)}")
t = {r["allocator"]: r for r in d["memory_totals"]}
if t["large_kmalloc"]["allocs"] != 1 or t["large_kmalloc"]["bytes"] != 16384: bad.append("large_kmalloc")
for k in ("allocs", "bytes", "live", "live_bytes"):
    if t["all"][k] != t["slab"][k] + t["page"][k] - t["large_kmalloc"][k]: bad.append(f"all {k}")
if d["totals"]["page_allocs"] != sum(v[0] for v in e["pages"].values()): bad.append("totals.page_allocs")
mt = {r["migratetype"]: r["allocs"] for r in d["pages_by_migratetype"]}
if mt.get("Unmovable", 0) + mt.get("Movable", 0) != d["totals"]["page_allocs"]: bad.append(f"migratetypes {mt}")
print("; ".join(bad) or "all as expected")
PY
)
is "$check" "all as expected" "--pages: per order as the script made them; large kmalloc once in all"

# Bad options: a clear message, exit 1.
run "$REPORT" --lifetimes --short-lived 5parsecs "$T/tr"
is "$rc" 1 "--short-lived with a bad duration: exit 1"
like "$err" "--short-lived: '5parsecs' is not a duration" "... and says why"
run "$REPORT" --lifetimes --long-lived 99999999999999999999 "$T/tr"
is "$rc" 1 "--long-lived out of range: exit 1"
run "$REPORT" --short-lived 1ms "$T/tr"
is "$rc" 1 "--short-lived without --lifetimes or --html: exit 1"
run "$REPORT" --lifetimes --pages "$T/tr"
is "$rc" 1 "--lifetimes with --pages: exit 1"
run "$REPORT" --lifetimes --stacks "$T/tr"
is "$rc" 1 "--lifetimes with --stacks: exit 1"
run "$REPORT" --html "$T/no/such/dir/r.html" "$T/tr"
is "$rc" 3 "--html into a missing directory: exit 3"
like "$err" "$T/no/such/dir/r.html" "... naming the file"

done_testing
