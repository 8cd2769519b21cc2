#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 42-report-coverage.t - kmemtrace-report and the metadata of trace format 1.1 on traces from
# kmemtrace-gen --script with hand-written kmemtrace.meta lines: the header's word on the paths
# the trace did not see (once, text and JSON), double frees certain or not by that coverage,
# caches shown and selected by the names SLUB merged into them, events of the module's probes
# (KMT_F_PROBED) counted and accepted by kmemtrace_check, and every key the JSON writer emits
# documented in Documentation/report-json.md.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
REPORT=$BIN/kmemtrace-report
GEN=$BIN/kmemtrace-gen
CHECK=$BIN/kmemtrace_check
DOC=$(dirname "$0")/../../Documentation/report-json.md

require_tools kmemtrace-report kmemtrace-gen kmemtrace_check
scratch_dir coverage

flat() {	# the text with its lines joined: the header wraps at 78 columns
	printf '%s' "$1" | tr '\n' ' ' | tr -s ' '
}

kind_at() {	# kind_at TEXT SITE: the kind of the text report's error allocated at SITE
	awk -v site="$2" '/^[a-z_]+\??  / { k = $1 } $1 == "allocated" && $3 "" == site "" { print k }' <<<"$1"
}

# ---- a trace: a cache object and a kmalloc object each freed twice, the cache SLUB's -----
CACHE=0xffff888003000000
cat >"$T/script" <<EOF
# kmt_merged_a is the name the cache was created with first: SLUB keeps it as s->name.
cache_desc 0 $CACHE 88 96 kmt_merged_a
cache_alloc 0 0xffffffff81000100 0xffff888100000100 $CACHE 88 96 probed
cache_alloc 1 0xffffffff81000100 0xffff888100000200 $CACHE 88 96
cache_desc 1 $CACHE 88 96 kmt_merged_a
cache_free 1 0xffffffff81000180 0xffff888100000100 $CACHE probed
cache_free 1 0xffffffff81000180 0xffff888100000100 $CACHE
kmalloc 0 0xffffffff81000300 0xffff888100000400 90 96
kfree 0 0xffffffff81000380 0xffff888100000400
kfree 1 0xffffffff81000380 0xffff888100000400 probed
kmalloc 1 0xffffffff81000500 0xffff888100000800 30 32 probed
EOF
"$GEN" -o "$T/tr" --cpus 2 --script "$T/script" >"$T/tr.sum"
ok $? "kmemtrace-gen --script wrote the trace"
n_cache_allocs=$(grep -c '^cache_alloc' "$T/script")
n_probed_allocs=$(grep -E -c '^(kmalloc|cache_alloc) .* probed$' "$T/script")
n_probed_frees=$(grep -E -c '^(kfree|cache_free) .* probed$' "$T/script")
is "$(summary probed_allocs "$T/tr.sum")" "$n_probed_allocs" "the generator counts the probed allocations the script has"
is "$(summary probed_frees "$T/tr.sum")" "$n_probed_frees" "... and the probed frees"

# trace_with NAME META-LINES: the trace with this kmemtrace.meta (none when META is empty).
trace_with() {
	mkdir -p "$T/$1"
	cp "$T/tr"/cpu*.out "$T/$1/"
	if [ -n "$2" ]; then printf 'meta_version 1\n%s\n' "$2" >"$T/$1/kmemtrace.meta"; fi
}

# ---- no coverage lines (a module before 1.1, or no metadata) ------------------------------
trace_with old ""
run "$REPORT" "$T/old"
is "$rc" 0 "no coverage: exit 0"
like "$(flat "$out")" "Not covered by this trace: the bulk and lock-free paths" \
	"no coverage: the header says the bulk and lock-free paths were not covered"
is "$(grep -c "^Not covered by this trace" <<<"$out")" 1 "no coverage: said once"
is "$(kind_at "$out" 0xffffffff81000100)" "double_free?" \
	"no coverage: the cache object's double free stays uncertain"
is "$(kind_at "$out" 0xffffffff81000300)" "double_free" "no coverage: the kmalloc object's is certain"
like "$(flat "$out")" "? of kmem_cache objects: the trace does not say it recorded kmem_cache_alloc_bulk()" \
	"no coverage: the footnote says why"
is "$(awk 'length > 80' <<<"$out" | wc -l)" 0 "no coverage: fits 80 columns"
run "$REPORT" --json "$T/old"
echo "$out" >"$T/old.json"
is "$(jget "'coverage' in d" "$T/old.json")" False "no coverage: no \"coverage\" in the JSON"
is "$(jget "sorted((e['free_addr'], e['uncertain']) for e in d['errors'] if e['kind'] == 'double_free')" "$T/old.json")" \
	"[('0xffffffff81000180', True), ('0xffffffff81000380', False)]" \
	"no coverage: JSON uncertain for the cache object only"

# ---- coverage with kmem_cache_alloc_bulk unseen ------------------------------------------
cov_unseen='coverage kmalloc tracepoint
coverage kmem_cache_alloc tracepoint
coverage kfree tracepoint
coverage kmem_cache_free tracepoint
coverage kmem_cache_alloc_bulk unseen kprobes disabled
coverage kmem_cache_free_bulk kprobe kmem_cache_free_bulk
coverage kmalloc_nolock absent no such function in this kernel
coverage kfree_nolock absent'
trace_with unseen "$cov_unseen"
run "$REPORT" "$T/unseen"
is "$rc" 0 "bulk unseen: exit 0"
like "$(flat "$out")" "Not seen by this trace: kmem_cache_alloc_bulk (kprobes disabled); objects it hands out look allocated before the trace." \
	"bulk unseen: the header names the path, why, and what it does to the numbers"
is "$(grep -o "Not seen by this trace" <<<"$out" | wc -l)" 1 "bulk unseen: said once"
! grep -q "kmem_cache_free_bulk\|kmalloc_nolock\|Not covered" <<<"$out"
ok $? "bulk unseen: the paths that were seen or are absent are not named"
is "$(kind_at "$out" 0xffffffff81000100)" "double_free?" \
	"bulk unseen: the cache object's double free is uncertain"
like "$(flat "$out")" "? the trace misses kmem_cache_alloc_bulk() (see above)" \
	"bulk unseen: the footnote names the unseen path"
is "$(awk 'length > 80' <<<"$out" | wc -l)" 0 "bulk unseen: fits 80 columns"
run "$REPORT" --json "$T/unseen"
echo "$out" >"$T/unseen.json"
want=$(printf '%s\n' "$cov_unseen" | python3 -c "import sys
print([dict(zip(('path', 'how', 'detail'), (l.split(None, 3)[1:] + [''])[:3])) for l in sys.stdin.read().splitlines()])")
is "$(jget "d['coverage']" "$T/unseen.json")" "$want" \
	"bulk unseen: JSON \"coverage\" holds every line of the metadata, in order"
is "$(jget "[e['uncertain'] for e in d['errors'] if e['free_addr'] == '0xffffffff81000180']" "$T/unseen.json")" \
	"[True]" "bulk unseen: JSON uncertain"
run "$REPORT" --csv --cache "$T/unseen"
like "$err" "note: not seen by this trace: kmem_cache_alloc_bulk" "bulk unseen: CSV says it on stderr"

# ---- every path covered: a double free is a double free -----------------------------------
cov_full=${cov_unseen/kmem_cache_alloc_bulk unseen kprobes disabled/kmem_cache_alloc_bulk kretprobe kmem_cache_alloc_bulk_noprof}
trace_with full "$cov_full"
run "$REPORT" "$T/full"
is "$rc" 0 "full coverage: exit 0"
! grep -q "Not seen\|Not covered" <<<"$out"
ok $? "full coverage: nothing said in the header"
is "$(kind_at "$out" 0xffffffff81000100)" "double_free" \
	"full coverage: the cache object's double free is certain"
! grep -q '?' <<<"$out"
ok $? "full coverage: no uncertain mark, no footnote"
run "$REPORT" --json "$T/full"
echo "$out" >"$T/full.json"
is "$(jget "[e['uncertain'] for e in d['errors'] if e['kind'] == 'double_free']" "$T/full.json")" \
	"[False, False]" "full coverage: JSON: both double frees certain"
is "$(jget "d['totals']['double_frees']" "$T/full.json")" 2 "full coverage: two double frees"

# kmalloc_nolock unseen: now the kmalloc object's double free is the uncertain one.
trace_with nolock "${cov_full/kmalloc_nolock absent no such function in this kernel/kmalloc_nolock unseen kprobes disabled}"
run "$REPORT" --json "$T/nolock"
echo "$out" >"$T/nolock.json"
is "$(jget "sorted((e['free_addr'], e['uncertain']) for e in d['errors'] if e['kind'] == 'double_free')" "$T/nolock.json")" \
	"[('0xffffffff81000180', False), ('0xffffffff81000380', True)]" \
	"kmalloc_nolock unseen: the kmalloc object's double free is uncertain, the cache's certain"

# ---- probed events: counted, and a 1.1 file with them passes kmemtrace_check ------------
is "$(jget "(d['totals']['probed_allocs'], d['totals']['probed_frees'])" "$T/full.json")" \
	"($n_probed_allocs, $n_probed_frees)" "probed: JSON totals as the script wrote them"
run "$REPORT" "$T/full"
like "$out" "Seen by probes         : $n_probed_allocs allocations, $n_probed_frees frees" \
	"probed: the text summary says how many"
"$GEN" -o "$T/p11" --cpus 2 --events 20000 --probed-every 7 --abi-minor 1 --seed 5 >"$T/p11.sum"
run "$CHECK" --strict "$T/p11"
is "$rc" 0 "kmemtrace_check --strict accepts an ABI 1.1 trace with KMT_F_PROBED events"
run "$CHECK" -v "$T/p11/cpu0.out"
like "$out" "header: format 1.1," "kmemtrace_check -v: format 1.1"
run "$REPORT" --json "$T/p11"
echo "$out" >"$T/p11.json"
for k in probed_allocs probed_frees allocs frees; do
	is "$(jget "d['totals']['$k']" "$T/p11.json")" "$(summary "$k" "$T/p11.sum")" \
		"probed every 7th: totals.$k as the generator counted"
done
[ "$(summary probed_allocs "$T/p11.sum")" -gt 0 ]
ok $? "probed every 7th: some were probed"
"$GEN" -o "$T/p10" --cpus 1 --events 500 --abi-minor 0 --seed 5 >/dev/null
run "$CHECK" -v "$T/p10/cpu0.out"
like "$out" "header: format 1.0," "an ABI 1.0 trace is still read"

# ---- caches merged by SLUB: shown and selected by every name -----------------------------
aliases='slab_alias :0000096 :0000096
slab_alias kmalloc-cg-96 kmalloc-cg-96
slab_alias kmt_merged_a :0000096
slab_alias kmt_oracle_merged :0000096
slab_alias zz_merged_too :0000096
slab_alias other_cache kmalloc-cg-96'
trace_with merged "$cov_full
$aliases"
# The names of the cache's group, but its own and SLUB's ":" name, as the test wrote them.
want_al=$(printf '%s\n' "$aliases" | awk '$3 == ":0000096" && $2 != "kmt_merged_a" && $2 !~ /^:/ { print $2 }' | sort | paste -sd, -)
run "$REPORT" --cache "$T/merged"
is "$rc" 0 "aliases: --cache exit 0"
like "$out" "kmt_merged_a (also ${want_al//,/, })" "aliases: --cache shows the merged names"
is "$(awk 'length > 80' <<<"$out" | wc -l)" 0 "aliases: fits 80 columns"
run "$REPORT" --json "$T/merged"
echo "$out" >"$T/merged.json"
is "$(jget "','.join([c['aliases'] for c in d['caches'] if c['name'] == 'kmt_merged_a'][0])" "$T/merged.json")" \
	"$want_al" "aliases: JSON \"aliases\" of the cache"
is "$(jget "sorted(set(len(c['aliases']) for c in d['caches'] if c['kind'] == 'kmalloc'))" "$T/merged.json")" \
	"[0]" "aliases: the kmalloc-N size classes have none"
for name in kmt_merged_a kmt_oracle_merged zz_merged_too :0000096; do
	run "$REPORT" --json --cache-name "$name" "$T/merged"
	echo "$out" >"$T/sel.json"
	is "$(jget "d['totals']['allocs']" "$T/sel.json")" "$n_cache_allocs" \
		"--cache-name $name: the cache's $n_cache_allocs allocations"
done
run "$REPORT" --json --cache-name other_cache "$T/merged"
echo "$out" >"$T/sel.json"
is "$(jget "d['totals']['allocs']" "$T/sel.json")" 0 "--cache-name of another cache's alias: nothing"
run "$REPORT" --csv --cache "$T/merged"
is "$(python3 -c "import csv,sys; print([r['aliases'] for r in csv.DictReader(open(sys.argv[1])) if r['name'] == 'kmt_merged_a'])" "$T/out")" \
	"['${want_al//,/ }']" "aliases: CSV column, space-separated"

# Many names merged: the text line is cut with "+N more" to fit; --wide has them all.
many=$aliases
for i in $(seq 1 30); do many="$many
slab_alias merged_name_number_$i :0000096"; done
trace_with many "$cov_full
$many"
nmany=$(printf '%s\n' "$many" | awk '$3 == ":0000096" && $2 != "kmt_merged_a" && $2 !~ /^:/' | wc -l)
run "$REPORT" --cache "$T/many"
is "$(awk 'length > 80' <<<"$out" | wc -l)" 0 "many aliases: fits 80 columns"
line=$(grep '^kmt_merged_a (also' <<<"$out")
shown=$(sed 's/^kmt_merged_a (also //; s/, +[0-9]* more)$//' <<<"$line" | tr ',' '\n' | wc -l)
more=$(sed -n 's/.*, +\([0-9]*\) more)$/\1/p' <<<"$line")
is "$((shown + more))" "$nmany" "many aliases: names shown plus \"+N more\" are all $nmany"
run "$REPORT" --cache --wide "$T/many"
is "$(grep '^kmt_merged_a (also' <<<"$out" | tr ',' '\n' | wc -l)" "$nmany" "--wide: every alias"

# ---- the JSON schema document names every key the writer emits ---------------------------
run "$REPORT" --json --alloc "$T/merged"
echo "$out" >"$T/alloc.json"
# A trace with kernel stacks, for the --stacks tables' keys.
"$GEN" -o "$T/stk" --cpus 2 --events 2000 --stack-depth 7 --stacks 9 --stack-table 6 \
	--stack-frees >/dev/null
run "$REPORT" --json --stacks "$T/stk"
echo "$out" >"$T/stacks.json"
is "$(jget "len(d['stacks']) > 0 and len(d['stack_callers']) > 0 and len(d['stacks_frees']) > 0" "$T/stacks.json")" True \
	"--stacks JSON has stacks, callers and frees by stack"
# Page events and lifetimes, for --lifetimes' and --pages' tables.
"$GEN" -o "$T/pg" --cpus 2 --events 4000 --pages >/dev/null
run "$REPORT" --json --lifetimes "$T/pg"
echo "$out" >"$T/life.json"
is "$(jget "len(d['lifetimes']) > 0 and len(d['cache_lifetimes']) > 0" "$T/life.json")" True \
	"--lifetimes JSON has call sites and caches"
run "$REPORT" --json --pages "$T/pg"
echo "$out" >"$T/pages.json"
is "$(jget "len(d['memory_totals']) == 4 and len(d['pages_by_order']) > 0" "$T/pages.json")" True \
	"--pages JSON has the totals and orders"
missing=$(python3 - "$DOC" "$T/merged.json" "$T/alloc.json" "$T/p11.json" "$T/stacks.json" \
	"$T/life.json" "$T/pages.json" <<'PY'
import json, re, sys
doc = set(re.findall(r"`([a-z][a-z0-9_]*)`", open(sys.argv[1]).read()))
keys = set()
def walk(v, parent=None):
    if isinstance(v, dict):
        for k, x in v.items():
            if parent != "lost_by_cpu":
                keys.add(k)
            walk(x, k)
    elif isinstance(v, list):
        for x in v:
            walk(x, parent)
for f in sys.argv[2:]:
    walk(json.load(open(f)))
print(" ".join(sorted(keys - doc)))
PY
)
is "$missing" "" "every key of the JSON documents is in Documentation/report-json.md"

done_testing
