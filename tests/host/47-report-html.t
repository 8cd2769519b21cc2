#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 47-report-html.t - kmemtrace-report --html: the page is self-contained (no script, nothing
# fetched), the same size for a trace ten times longer, and, rendered by headless Chromium, its
# DOM holds every section with the numbers the JSON report of the same trace gives (totals,
# call sites, lifetimes, size classes, pages, metadata); a screenshot is left in
# build/tests/html/report.png for people to look at.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
REPORT=$BIN/kmemtrace-report
GEN=$BIN/kmemtrace-gen

require_tools kmemtrace-report kmemtrace-gen
scratch_dir html
SHOTS=build/tests/html
mkdir -p "$SHOTS"

"$GEN" -o "$T/tr" --cpus 3 --nodes 2 --events 20000 --pages --lost-every 4000 --seed 47 >/dev/null
printf 'meta_version 1\nkernel_release 6.1.0-kmt-html-test\nmachine x86_64\n' >"$T/tr/kmemtrace.meta"
run "$REPORT" --html "$T/r.html" --json "$T/tr"
is "$rc" 0 "--html with --json exits 0"
echo "$out" >"$T/r.json"
ok "$([ -s "$T/r.html" ]; echo $?)" "the page was written"
# The lifetime and page figures the page must show, from the same trace's JSON views.
"$REPORT" --lifetimes --json "$T/tr" >"$T/life.json" 2>/dev/null
ok $? "--lifetimes --json of the same trace"
"$REPORT" --pages --json "$T/tr" >"$T/pages.json" 2>/dev/null
ok $? "--pages --json of the same trace"

# Self-contained: no script, no external reference of any kind.
ext=$(grep -oiE '<script|<link|<img|<iframe|src=|@import|url\(|(href|xlink:href)="[a-z]+:' "$T/r.html" | sort -u | tr '\n' ' ')
is "$ext" "" "no script, link, image or external URL in the page"

# A trace ten times longer: the page holds aggregates, not points.
"$GEN" -o "$T/big" --cpus 3 --nodes 2 --events 200000 --pages --seed 47 >/dev/null
run "$REPORT" --html "$T/big.html" "$T/big"
is "$rc" 0 "--html on 10x the events exits 0"
s1=$(stat -c %s "$T/r.html")
s2=$(stat -c %s "$T/big.html")
ok "$([ "$s2" -lt $((s1 * 3 / 2)) ]; echo $?)" "the page stays the same size: $s1 bytes for 20k events, $s2 for 200k"

# Names from the trace are text, never markup.
printf '%s\n' 'cache_desc 0 0xffff888003000000 88 96 kmt<i>evil</i>&"q' \
	'cache_alloc 0 0xffffffff81000100 0xffff888100000000 0xffff888003000000 88 96' >"$T/evil.script"
"$GEN" -o "$T/evil" --cpus 1 --script "$T/evil.script" >/dev/null &&
	"$REPORT" --html "$T/evil.html" "$T/evil" >/dev/null 2>&1
ok $? "--html of a trace whose cache name holds markup"
is "$(grep -c '<i>evil' "$T/evil.html")" 0 "the name is not markup in the page"
like "$(cat "$T/evil.html")" 'kmt&lt;i&gt;evil&lt;/i&gt;&amp;&quot;q' "... but escaped text"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	echo "# no chromium (scripts/install-deps installs it): the DOM is not checked"
	done_testing
	exit
fi
# 60 s: over 5x the slowest run seen beside two nice -n 19 busy loops (the screenshot, 7.9 s).
chrome() {
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$T/profile" "$@" 2>>"$T/chromium.err"
}
chrome --dump-dom "file://$T/r.html" >"$T/dom.html"
ok $? "Chromium rendered the page"

check=$(python3 - "$T/dom.html" "$T/r.json" <<'PY'
import html.parser, json, sys
dom, d = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.stack, self.tables, self.kv, self.groups = set(), [], {}, {}, []
        self.cur, self.row, self.cell, self.kvkey, self.text = None, None, None, None, ""
        self.series = []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a: self.ids.add(a["id"])
        if tag == "table" and a.get("data-key"):
            self.cur = self.tables.setdefault(a["data-key"], [])
        if tag == "tr" and "data-key" in a: self.kvkey = a["data-key"]
        if tag == "tr" and self.cur is not None: self.row = []
        if tag == "td":
            if self.kvkey: self.kv[self.kvkey] = a.get("data-v")
            if self.row is not None: self.row.append(a.get("data-v"))
        if tag == "g" and a.get("class") == "class": self.groups.append(a)
        if tag == "polyline": self.series.append(a.get("data-series"))
    def handle_endtag(self, tag):
        if tag == "tr":
            if self.row: self.cur.append(self.row)
            self.row, self.kvkey = None, None
        if tag == "table": self.cur = None
p = P(); p.feed(dom)
bad = []
for s in ("summary", "callsites", "caches", "sizes", "lifetimes", "lifetime-charts", "rates",
          "cross", "pages", "problems", "metadata", "svg-sizes", "svg-rates", "t-errors",
          "t-outstanding", "t-lifetimes", "t-short_lived", "t-long_lived", "t-cache_lifetimes",
          "t-memory_totals", "t-pages_by_order"):
    if s not in p.ids: bad.append(f"no #{s}")
t = d["totals"]
if not t["lost"] or "every number is a lower bound" not in dom: bad.append("no lost records, or not said")
for k in ("allocs", "frees", "bytes_req", "bytes_alloc", "outstanding", "page_allocs", "cross_cpu_frees", "lost"):
    if p.kv.get(k) != str(t[k]): bad.append(f"summary {k} {p.kv.get(k)} != {t[k]}")
if p.kv.get("kernel_release") != "6.1.0-kmt-html-test": bad.append(f"kernel {p.kv.get('kernel_release')}")
lost = ", ".join(f"cpu{c}: {n}" for c, n in sorted((int(c), n) for c, n in d["totals"]["lost_by_cpu"].items()) if n) \
    if isinstance(d["totals"].get("lost_by_cpu"), dict) else None
if lost is not None and p.kv.get("lost_by_cpu") != lost: bad.append(f"lost by CPU {p.kv.get('lost_by_cpu')} != {lost}")
# The call sites table: the report's first rows (-s frag,hit,bytes), hits as in JSON.
hits = {c["addr"]: c["hits"] for c in d["callsites"]}
rows = p.tables.get("callers", [])
if len(rows) != 20 + 10 + 10: bad.append(f"{len(rows)} call site rows (the top 20, 10 cross-CPU, 10 cross-node)")
for r in rows:
    if hits.get(r[0]) is None or str(hits[r[0]]) != r[1]: bad.append(f"call site row {r[:2]}")
# Size classes: each kmalloc-N bar's requested and allocated bytes as the JSON caches say.
caches = {c["name"]: c for c in d["caches"]}
if not p.groups: bad.append("no size class bars")
for g in p.groups:
    c = caches.get(g["data-cache"])
    if not c or str(c["bytes_req"]) != g["data-req"] or str(c["bytes_alloc"]) != g["data-alloc"]:
        bad.append(f"size class {g['data-cache']}")
# Lifetimes: the JSON --lifetimes document of the same trace, row for row (freed, p50).
life = json.load(open(sys.argv[2].replace("r.json", "life.json")))
lt = p.tables.get("lifetimes", [])
if len(lt) != min(20, len(life["lifetimes"])): bad.append(f"{len(lt)} lifetime rows")
for r, j in zip(lt, life["lifetimes"]):
    if r[1] != str(j["freed"]) or r[2] != ("" if j["p50_ns"] is None else str(j["p50_ns"])): bad.append(f"lifetime row {r[:4]} != {j['freed']} {j['p50_ns']}")
# Rates: all sites' allocations and frees, and each top site's allocations and its objects' frees.
sites = [x for x in p.series if x and x.startswith("0x") and not x.endswith("_frees")]
if "all_allocs" not in p.series or "all_frees" not in p.series: bad.append("no all-sites rate lines")
if len(sites) != min(5, len(d["callsites"])): bad.append(f"{len(sites)} call sites' rate lines")
for x in sites:
    if x + "_frees" not in p.series: bad.append(f"no frees line for {x}")
po = {r[0]: r for r in p.tables.get("pages_by_order", [])}
for j in json.load(open(sys.argv[2].replace("r.json", "pages.json")))["pages_by_order"]:
    r = po.get(str(j["order"]))
    if not r or r[1] != str(j["allocs"]): bad.append(f"pages order {j['order']}")
print("; ".join(bad) or "all as expected")
PY
)
is "$check" "all as expected" "the DOM: every section, and the numbers of the JSON reports"

chrome --screenshot="$SHOTS/report.png" --window-size=1280,6000 "file://$T/r.html" >/dev/null
ok "$([ "$(head -c 4 "$SHOTS/report.png" | od -An -c | tr -d ' ')" = '211PNG' ]; echo $?)" \
	"a screenshot in $SHOTS/report.png"

done_testing
