#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 43-report-interval.t - kmemtrace-report --interval on a kmemtrace-gen --script trace whose
# per-interval, per-cache and per-call-site counts the test computes from the script it wrote
# (records 1000 ns apart): text, CSV and JSON agree with them and with each other, the totals
# agree with the whole-trace report, and every JSON key is in Documentation/report-json.md. A
# large kmalloc traced twice (6.12, 7.3) whose pair a boundary splits counts in the first
# event's interval, never as a count taken back (negative) in the next.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
REPORT=$BIN/kmemtrace-report
GEN=$BIN/kmemtrace-gen
DOC=$(dirname "$0")/../../Documentation/report-json.md

require_tools kmemtrace-report kmemtrace-gen
scratch_dir interval

# A script of 400 records, and what each 7 us interval must hold, per cache and per call site.
python3 - "$T" <<'PY'
import json, random, sys
t = sys.argv[1]
random.seed(13)
CACHES = {0xffff888003000000: ("kmt_a", 88, 96), 0xffff888003000100: ("kmt_b", 200, 256)}
lines, live, recs = [], [], []
for cid, (name, osz, sz) in CACHES.items():
    for cpu in (0, 1):
        lines.append(f"cache_desc {cpu} {cid:#x} {osz} {sz} {name}")
addr = 0xffff888100000000
while len(lines) < 400:
    cpu = random.randint(0, 1)
    if live and random.random() < 0.4:
        o = live.pop(random.randrange(len(live)))
        site = o["site"] + 0x80
        if o["cid"]:
            lines.append(f"cache_free {cpu} {site:#x} {o['ptr']:#x} {o['cid']:#x}")
        else:
            lines.append(f"kfree {cpu} {site:#x} {o['ptr']:#x}")
        recs.append(("free", len(lines) - 1, o))
        continue
    addr += 0x1000
    if random.random() < 0.5:
        cid = random.choice(list(CACHES))
        name, osz, sz = CACHES[cid]
        site = 0xffffffff81000100 + (cid & 0x100)
        o = {"ptr": addr, "cid": cid, "cache": name, "req": osz, "alloc": sz, "site": site}
        lines.append(f"cache_alloc {cpu} {site:#x} {addr:#x} {cid:#x} {osz} {sz}")
    else:
        req = random.choice([10, 30, 60, 100])
        al = {10: 16, 30: 32, 60: 64, 100: 128}[req]
        site = 0xffffffff81000300 + al
        o = {"ptr": addr, "cid": 0, "cache": f"kmalloc-{al}", "req": req, "alloc": al, "site": site}
        lines.append(f"kmalloc {cpu} {site:#x} {addr:#x} {req} {al}")
    live.append(o)
    recs.append(("alloc", len(lines) - 1, o))
open(f"{t}/script", "w").write("\n".join(lines) + "\n")
# Record i is at first + 1000 i ns: interval i * 1000 // 7000.
exp = {"cache": {}, "site": {}}
for kind, i, o in recs:
    k = i * 1000 // 7000
    for by, key in (("cache", o["cache"]), ("site", f"{o['site']:#x}")):
        e = exp[by].setdefault(f"{k} {key}", [0, 0, 0])
        if kind == "alloc":
            e[0] += 1
            e[1] += o["alloc"]
        else:
            e[2] += 1
for by in exp:
    with open(f"{t}/exp.{by}", "w") as f:
        for key in sorted(exp[by]):
            f.write(f"{key} {' '.join(map(str, exp[by][key]))}\n")
PY
ok $? "wrote the script and its expected intervals"
"$GEN" -o "$T/tr" --cpus 2 --script "$T/script" >/dev/null
ok $? "kmemtrace-gen --script wrote the trace"

# Text: every row of every interval, as "INTERVAL NAME ALLOCS BYTES FREES".
text_rows() {
	awk '/^interval / { k = $2; next } /^(CACHE|CALLSITE) / || /^  / || NF == 0 { next }
	     { print k, $1, $2, $3, $4 }' | sort
}
"$REPORT" --interval 7us -l 0 --raw-ip "$T/tr" 2>"$T/err" >"$T/cache.txt"
is "$?" 0 "--interval 7us: exit 0"
is "$(text_rows <"$T/cache.txt")" "$(sort "$T/exp.cache")" "text per cache: every interval's allocations, bytes and frees"
is "$(grep -c '^interval ' "$T/cache.txt")" "$(( (399 * 1000) / 7000 + 1 ))" "one table per interval up to the last record"
is "$(awk 'length > 80' "$T/cache.txt" | wc -l)" 0 "the cache tables fit 80 columns"
"$REPORT" --interval 7us --caller -l 0 --raw-ip "$T/tr" 2>/dev/null | text_rows >"$T/site.txt"
is "$(cat "$T/site.txt")" "$(sort "$T/exp.site")" "text per call site (--caller)"

"$REPORT" --interval 7us -l 0 --csv "$T/tr" 2>/dev/null >"$T/cache.csv"
is "$(head -1 "$T/cache.csv")" "interval,start_ns,end_ns,cache,allocs,bytes_req,bytes_alloc,frees,bytes_freed,net,frag_pct" "CSV header"
is "$(awk -F, 'NR > 1 { print $1, $4, $5, $7, $8 }' "$T/cache.csv" | sort)" "$(sort "$T/exp.cache")" "CSV agrees"

"$REPORT" --interval 7us -l 0 --json "$T/tr" 2>/dev/null >"$T/cache.json"
is "$?" 0 "--json: exit 0"
is "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for iv in d["intervals"]:
    for r in iv["rows"]:
        print(iv["index"], r["cache"], r["allocs"], r["bytes_alloc"], r["frees"])' "$T/cache.json" | sort)" \
	"$(sort "$T/exp.cache")" "JSON agrees"
is "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(i["total"]["allocs"] for i in d["intervals"]), sum(i["total"]["frees"] for i in d["intervals"]))' "$T/cache.json")" \
	"$("$REPORT" --json "$T/tr" 2>/dev/null | python3 -c 'import json,sys; t=json.load(sys.stdin)["totals"]; print(t["allocs"], t["frees"])')" \
	"the intervals add up to the whole-trace totals"

# Sort and rows.
"$REPORT" --interval 7us -l 1 -s allocs --csv "$T/tr" 2>/dev/null >"$T/top1.csv"
is "$(awk -F, 'NR > 1' "$T/top1.csv" | wc -l)" "$(grep -c '^interval ' "$T/cache.txt")" "-l 1: one row per interval"
want=$(awk '{ if (!($1 in b) || $3 > b[$1] || ($3 == b[$1] && $2 < n[$1])) { b[$1] = $3; n[$1] = $2 } }
	END { for (k in b) print k, n[k] }' "$T/exp.cache" | sort -n)
is "$(awk -F, 'NR > 1 { print $1, $4 }' "$T/top1.csv" | sort -n)" "$want" "-s allocs: the cache with most allocations (then by name) first"

# Large kmallocs traced twice (6.12, 7.3): a pair an interval boundary splits counts in the
# first event's interval, at the allocator's call site, and never as a negative count after.
python3 - "$T" <<'PY'
import collections, random, sys
t = sys.argv[1]
random.seed(5)
IN, CALLER, SMALL = 0xffffffff81003100, 0xffffffff81004000, 0xffffffff81005000
lines, exp, pairs = [], collections.Counter(), [0, 0]
addr = 0xffff888060000000
def iv(i):
    return i * 1000 // 2000   # records 1000 ns apart, 2 us intervals from the first
while len(lines) < 120:
    cpu = random.randint(0, 1)
    addr += 0x10000
    if random.random() < 0.5:
        lines.append(f"kmalloc {cpu} {SMALL:#x} {addr:#x} 64 64")
        exp[iv(len(lines) - 1), SMALL] += 1
        continue
    i = len(lines)
    lines.append(f"kmalloc {cpu} {IN:#x} {addr:#x} 20000 32768")
    lines.append(f"kmalloc {cpu} {CALLER:#x} {addr:#x} 20000 32768")
    split = iv(i) != iv(i + 1)
    exp[iv(i), IN if split else CALLER] += 1
    pairs[split] += 1
open(f"{t}/dup.script", "w").write("\n".join(lines) + "\n")
with open(f"{t}/dup.exp", "w") as f:
    for (k, site), n in sorted(exp.items()):
        f.write(f"{k} {site:#x} {n}\n")
open(f"{t}/dup.pairs", "w").write(f"{pairs[0]} {pairs[1]} {pairs[0] + pairs[1]}\n")
PY
"$GEN" -o "$T/dup" --cpus 2 --script "$T/dup.script" >/dev/null
read -r whole split pairs <"$T/dup.pairs"
[ "$whole" -gt 0 ] && [ "$split" -gt 0 ]
ok $? "large kmallocs traced twice: $whole pairs within an interval, $split split by a boundary"
"$REPORT" --interval 2us --caller -l 0 --json --raw-ip "$T/dup" 2>/dev/null >"$T/dup.json"
is "$(python3 -c '
import json, sys
for iv in json.load(open(sys.argv[1]))["intervals"]:
    for r in iv["rows"]:
        print(iv["index"], r["addr"], r["allocs"])' "$T/dup.json" | sort)" "$(sort "$T/dup.exp")" \
	"traced twice: each interval's allocations by call site, a split pair at the allocator's"
is "$(python3 -c '
import json, sys
print(sum(i["total"]["allocs"] for i in json.load(open(sys.argv[1]))["intervals"]))' "$T/dup.json")" \
	"$("$REPORT" --json "$T/dup" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["allocs"])')" \
	"traced twice: the intervals add up to the whole-trace allocations"
is "$("$REPORT" --json "$T/dup" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["kmalloc_duplicate_events"])')" \
	"$pairs" "traced twice: every pair found"

# Bad input: one line, the usage exit code.
"$REPORT" --interval 0 "$T/tr" >/dev/null 2>"$T/err"
is "$?" 1 "--interval 0: exit 1"
like "$(cat "$T/err")" "--interval: '0' is not a duration" "... naming the option"
"$REPORT" --interval 1s -s pingpong "$T/tr" >/dev/null 2>"$T/err"
is "$?" 1 "--interval with a sort key it has not: exit 1"
"$REPORT" --interval 1s --alloc "$T/tr" >/dev/null 2>"$T/err"
is "$?" 1 "--interval --alloc: exit 1"

# Every key of the interval document is documented.
"$REPORT" --interval 7us --caller --json "$T/tr" 2>/dev/null >"$T/site.json"
missing=$(python3 - "$DOC" "$T/cache.json" "$T/site.json" <<'PY'
import json, re, sys
doc = set(re.findall(r"`([a-z_]+)`", open(sys.argv[1]).read()))
keys = set()
def walk(v):
    if isinstance(v, dict):
        for k, x in v.items():
            keys.add(k)
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
for f in sys.argv[2:]:
    walk(json.load(open(f)))
print(" ".join(sorted(keys - doc)))
PY
)
is "$missing" "" "every key of the --interval JSON is in Documentation/report-json.md"

done_testing
