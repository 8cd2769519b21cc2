#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 45-report-stacks.t - kmemtrace-report --stacks and --folded on kmemtrace-gen traces with
# kernel stacks: every per-stack count and byte total, the outstanding objects by stack and
# each call site's callers are what the generator wrote (its summary, grouped here by frames);
# --min-count, --exclude and -l filter as computed here; --folded parses back to the same
# counts (and bytes); a tiny per-CPU stack table gives exactly the generator's number of
# events without a stack; big-endian and 32-bit traces give the same report; corrupt stack
# records fail with the file and offset (exit 2); bad options exit 1. Large kmallocs traced
# twice (6.12, 7.3; kmemtrace-gen --twice, the first event with a stack of its own, or
# none) count once, by stack, call site and in the totals, as the generator wrote them.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
REPORT=$BIN/kmemtrace-report
GEN=$BIN/kmemtrace-gen
FLAME_CHECK=$(dirname "$0")/flame-check.py
CHECK=$BIN/kmemtrace_check

require_tools kmemtrace-report kmemtrace-gen kmemtrace_check
scratch_dir stacks

# The generator's per-stack lines, grouped by frames (two stacks may be the same frames).
cat >"$T/expect.py" <<'PY'
import collections, sys
KEYS = ("hits", "failed", "bytes_req", "bytes_alloc", "frees", "outstanding", "outstanding_bytes")
FKEYS = ("frees", "bytes_freed", "frees_no_alloc")
# The generator's "stack" (allocation) or "free_stack" lines, their keys summed by frames.
def grouped(path, tag, keys):
    g = collections.defaultdict(lambda: dict.fromkeys(keys, 0))
    for line in open(path):
        w = line.split()
        if not w or w[0] != tag:
            continue
        kv = dict(zip(w[2::2], w[3::2]))
        fr = tuple(int(x, 16) for x in kv["frames"].split(","))
        for k in keys:
            g[fr][k] += int(kv[k])
    return g
def expected(path):
    return grouped(path, "stack", KEYS)
def expected_frees(path):
    return grouped(path, "free_stack", FKEYS)
def compare(want, rows, keys):
    """"same", or what differs between the generator's stacks and the report's rows."""
    got = {tuple(int(a, 16) for a in s["frame_addrs"]): {k: s[k] for k in keys} for s in rows}
    if len(rows) != len(got):
        return "a stack listed twice"
    if got != want:
        bad = [f for f in set(got) | set(want) if got.get(f) != want.get(f)]
        return f"{len(bad)} stacks differ, e.g. {bad[0]}: report {got.get(bad[0])}, generator {want.get(bad[0])}"
    return "same"
PY

gen() {
	local dir=$1
	shift
	"$GEN" -o "$T/$dir" "$@" >"$T/$dir.sum" || echo "# kmemtrace-gen $* failed"
}

# 40 stacks, 25 ids a CPU: some events have no stack.
COMMON=(--cpus 3 --events 20000 --callsites 10 --stack-depth 12 --stacks 40 --stack-table 25 \
	--seed 7)
gen le "${COMMON[@]}"
gen be "${COMMON[@]}" --big-endian
gen le32 "${COMMON[@]}" --word-bits 32
gen be32 "${COMMON[@]}" --word-bits 32 --big-endian
gen tiny --cpus 2 --events 5000 --callsites 8 --stack-depth 6 --stacks 30 --stack-table 3 --seed 3
gen plain --cpus 2 --events 2000
gen frees --cpus 2 --events 6000 --callsites 6 --stack-depth 8 --stacks 12 --stack-table 10 \
	--stack-frees --seed 11
# Every 7th kmalloc above two pages: traced once (6.1), and twice (6.12, 7.3).
gen once "${COMMON[@]}" --large-every 7 --per-site
gen twice "${COMMON[@]}" --large-every 7 --twice --per-site
# Room for every stack: frees of objects allocated before the trace carry theirs.
gen fs --cpus 2 --events 30000 --callsites 6 --stack-depth 8 --stacks 12 --stack-table 40 \
	--stack-frees --seed 5

# ---- every stack's figures, exactly ---------------------------------------------------------
for v in le le32 once twice; do
	run "$REPORT" --stacks --json -l 0 "$T/$v"
	is "$rc" 0 "$v: --stacks --json exits 0"
	echo "$out" >"$T/$v.json"
	res=$(python3 - "$T/$v.sum" "$T/$v.json" "$T/expect.py" <<'PY'
import json, sys
exec(open(sys.argv[3]).read())
print(compare(expected(sys.argv[1]), json.load(open(sys.argv[2]))["stacks"], KEYS))
PY
)
	is "$res" "same" "$v: every stack's hits, failed, bytes, frees and outstanding as generated"
	is "$(jget "d['totals']['stack_allocs']" "$T/$v.json")" "$(summary stack_allocs "$T/$v.sum")" \
		"$v: allocations with a stack as generated"
	is "$(jget "d['totals']['events_without_stack']" "$T/$v.json")" \
		"$(summary no_stack_allocs "$T/$v.sum")" "$v: events without a stack as generated"
	is "$(jget "sum(s['hits'] for s in d['stacks']) + d['totals']['events_without_stack'] == d['totals']['allocs']" "$T/$v.json")" \
		True "$v: stacks plus events without one are all allocations"
done

# ---- stacks on frees too (stack_frees=1): counted apart ---------------------------------------
run "$REPORT" --stacks --json -l 0 "$T/frees"
echo "$out" >"$T/frees.json"
res=$(python3 - "$T/frees.sum" "$T/frees.json" "$T/expect.py" <<'PY'
import json, sys
exec(open(sys.argv[3]).read())
want = expected(sys.argv[1])
d = json.load(open(sys.argv[2]))
got = {tuple(int(a, 16) for a in s["frame_addrs"]): {k: s[k] for k in KEYS} for s in d["stacks"]}
print("same" if got == want else "differ")
PY
)
is "$res" "same" "frees with stacks: the allocation stacks' figures as generated"
is "$(jget "(d['totals']['events_without_stack'], d['totals']['other_events_without_stack'])" "$T/frees.json")" \
	"($(summary no_stack_allocs "$T/frees.sum"), $(summary no_stack_frees "$T/frees.sum"))" \
	"frees with stacks: allocations and frees without a stack counted apart, as generated"
run "$REPORT" "$T/frees"
like "$out" "and $(summary no_stack_frees "$T/frees.sum") frees or page events without one" \
	"frees with stacks: the summary says how many frees have none"
run "$REPORT" --stacks -l 0 "$T/frees"
like "$(tr -s ' \n' '  ' <<<"$out")" "with a stack, in $(jget "len(d['stacks'])" "$T/frees.json") distinct stacks" \
	"frees with stacks: the note counts the allocations' stacks, not the frees'"

# ---- frees by stack: who frees, through which path -----------------------------------------------
run "$REPORT" --stacks --json -l 0 "$T/fs"
is "$rc" 0 "frees by stack: --stacks --json exits 0"
echo "$out" >"$T/fs.json"
res=$(python3 - "$T/fs.sum" "$T/fs.json" "$T/expect.py" <<'PY'
import json, sys
exec(open(sys.argv[3]).read())
want = expected_frees(sys.argv[1])
res = compare(want, json.load(open(sys.argv[2]))["stacks_frees"], FKEYS)
if not want:
    print("the generator wrote no free stacks")
elif res == "same" and not any(v["frees_no_alloc"] for v in want.values()):
    print("no free of an object allocated before the trace has a stack")
else:
    print(res)
PY
)
is "$res" "same" "frees by stack: every stack's frees, bytes freed and frees without an allocation as generated"
is "$(jget "(d['totals']['has_free_stacks'], d['totals']['stack_frees'], d['totals']['no_stack_frees'])" "$T/fs.json")" \
	"(True, $(grep '^free_stack ' "$T/fs.sum" | awk '{ s += $4 } END { print s }'), $(summary no_stack_frees "$T/fs.sum"))" \
	"frees by stack: totals of frees with and without a stack as generated"
is "$(jget "d['totals']['stack_frees'] + d['totals']['no_stack_frees'] + d['totals']['unknown_stack_frees'] == d['totals']['frees']" "$T/fs.json")" \
	True "frees by stack: frees with a stack plus those without are all frees"
is "$(jget "d['stacks_frees'] == sorted(d['stacks_frees'], key=lambda s: (-s['frees'], -s['bytes_freed']))" "$T/fs.json")" \
	True "frees by stack: most frees first"
res=$(python3 - "$T/fs.sum" "$T/fs.json" "$T/expect.py" <<'PY'
import collections, json, sys
exec(open(sys.argv[3]).read())
calls = collections.defaultdict(lambda: [0, 0])
for f, v in expected_frees(sys.argv[1]).items():
    c = calls[(f[0], f[1] if len(f) > 1 else None)]
    c[0] += v["frees"]
    c[1] += v["bytes_freed"]
rows = json.load(open(sys.argv[2]))["stack_free_callers"]
got = {(int(c["callsite_addr"], 16), int(c["caller_addr"], 16) if c["caller_addr"] else None):
       [c["frees"], c["bytes_freed"]] for c in rows}
share = collections.defaultdict(float)
for c in rows:
    share[c["callsite_addr"]] += c["share_pct"]
firsts = [c["callsite_addr"] for c in rows]
print("callers", "same" if got == dict(calls) and len(rows) == len(got) else "differ",
      "shares", "100" if all(abs(s - 100) < 0.01 * len(rows) for s in share.values()) else "off",
      "grouped" if len(set(firsts)) == len([a for i, a in enumerate(firsts) if not i or firsts[i - 1] != a]) else "scattered",
      "no_alloc_keys" if not any("bytes_req" in c or "outstanding" in c for c in rows) else "alloc_keys")
PY
)
is "$res" "callers same shares 100 grouped no_alloc_keys" \
	"frees by stack: each free site's callers, frees and bytes freed as generated"
run "$REPORT" --stacks -l 0 "$T/fs"
like "$out" "Frees by kernel stack" "frees by stack: the text table"
like "$out" "Callers of each free site" "frees by stack: the free sites' callers in the text"
like "$(tr -s ' \n' '  ' <<<"$out")" "$(jget "d['totals']['stack_frees']" "$T/fs.json") frees with a stack, in $(jget "len(d['stacks_frees'])" "$T/fs.json") distinct stacks; $(grep '^free_stack ' "$T/fs.sum" | awk '{ s += $8 } END { print s }') of them freed an object whose allocation is not in the trace" \
	"frees by stack: the note counts frees with a stack and those without an allocation"
is "$(awk 'length > 80' <<<"$out" | wc -l)" 0 "frees by stack: text fits 80 columns"
run "$REPORT" "$T/fs"
like "$out" "$(jget "d['totals']['stack_frees']" "$T/fs.json") frees with a stack (--stacks: frees by stack)" \
	"frees by stack: the summary says how many frees have a stack"
run "$REPORT" --stacks --json -l 0 "$T/frees"
echo "$out" >"$T/frees.json"
is "$(jget "(d['totals']['stack_frees'], d['totals']['no_stack_frees'], sum(s['frees'] for s in d['stacks_frees']))" "$T/frees.json")" \
	"($(grep '^free_stack ' "$T/frees.sum" | awk '{ s += $4 } END { print s }'), $(summary no_stack_frees "$T/frees.sum"), $(grep '^free_stack ' "$T/frees.sum" | awk '{ s += $4 } END { print s }'))" \
	"frees by stack, a full table: frees with a stack and marked without one as generated"
# Filters, as the other stack tables have them.
fmin=$(jget "sorted(s['frees'] for s in d['stacks_frees'])[len(d['stacks_frees']) // 2]" "$T/fs.json")
run "$REPORT" --stacks --json -l 0 --min-count "$fmin" "$T/fs"
echo "$out" >"$T/fsmin.json"
is "$(jget "sorted(s['frame_addrs'][0] for s in d['stacks_frees'])" "$T/fsmin.json")" \
	"$(jget "sorted(s['frame_addrs'][0] for s in d['stacks_frees'] if s['frees'] >= $fmin)" "$T/fs.json")" \
	"frees by stack, --min-count $fmin: exactly the stacks freeing that often"
fex=$(jget "sorted({s['frame_addrs'][1] for s in d['stacks_frees'] if s['depth'] > 1})[0]" "$T/fs.json")
run "$REPORT" --stacks --json -l 0 --exclude "$fex" "$T/fs"
echo "$out" >"$T/fsex.json"
is "$(jget "sorted(s['frame_addrs'][0] for s in d['stacks_frees'])" "$T/fsex.json")" \
	"$(jget "sorted(s['frame_addrs'][0] for s in d['stacks_frees'] if '$fex' not in s['frame_addrs'])" "$T/fs.json")" \
	"frees by stack, --exclude $fex: exactly the stacks not through it"
run "$REPORT" --stacks --json -l 2 "$T/fs"
echo "$out" >"$T/fstop.json"
is "$(jget "[s['frees'] for s in d['stacks_frees']]" "$T/fstop.json")" \
	"$(jget "sorted((s['frees'] for s in d['stacks_frees']), reverse=True)[:2]" "$T/fs.json")" \
	"frees by stack, -l 2: the two stacks freeing most"
run "$REPORT" --stacks --json -l 0 -s bytes "$T/fs"
echo "$out" >"$T/fsbytes.json"
is "$(jget "[s['bytes_freed'] for s in d['stacks_frees']] == sorted((s['bytes_freed'] for s in d['stacks_frees']), reverse=True)" "$T/fsbytes.json")" \
	True "frees by stack, -s bytes: most bytes freed first"
run "$REPORT" --stacks --csv "$T/fs"
like "$out" "frees,bytes_freed,frees_no_alloc,depth,frames" "frees by stack: in CSV too"
# --folded=frees: the free stacks by count, root first.
run "$REPORT" --folded=frees "$T/fs"
is "$rc" 0 "--folded=frees: exit 0"
printf '%s\n' "$out" >"$T/folded.frees"
res=$(python3 - "$T/fs.sum" "$T/folded.frees" "$T/expect.py" <<'PY'
import collections, re, sys
exec(open(sys.argv[3]).read())
want = collections.Counter()
for f, v in expected_frees(sys.argv[1]).items():
    want[tuple("0x%x" % a for a in reversed(f))] += v["frees"]
got = collections.Counter()
for line in open(sys.argv[2]):
    m = re.fullmatch(r"(\S+) (\d+)\n", line)
    if not m:
        print("bad line", line.strip())
        sys.exit()
    got[tuple(m.group(1).split(";"))] += int(m.group(2))
print("same" if want and got == want else f"differ: {len(set(got) ^ set(want))} stacks")
PY
)
is "$res" "same" "--folded=frees: parses back to the generator's free counts, root first"
run "$REPORT" --folded=frees --min-count "$fmin" "$T/fs"
is "$(wc -l <<<"$out")" "$(jget "len(d['stacks_frees'])" "$T/fsmin.json")" \
	"--folded=frees --min-count: the same stacks as --stacks"
run "$REPORT" --folded=frees "$T/frees"
like "$err" "$(summary no_stack_frees "$T/frees.sum") frees without a stack are not in the folded stacks" \
	"--folded=frees: stderr says how many frees are not in it"
# Without stacks of frees: no table, and the JSON says so.
run "$REPORT" --stacks --json -l 0 "$T/le"
is "$(jget "(d['totals']['has_free_stacks'], 'stacks_frees' in d)" <(echo "$out"))" "(False, False)" \
	"no free stacks: has_free_stacks false, no stacks_frees"
run "$REPORT" --stacks "$T/le"
is "$(grep -c 'Frees by kernel stack' <<<"$out")" 0 "no free stacks: no table in the text"
run "$REPORT" --folded=frees "$T/le"
is "$rc:$out" "0:" "no free stacks: --folded=frees writes nothing"
like "$err" "no stacks of frees" "no free stacks: --folded=frees says why"

# ---- big-endian and 32-bit traces read the same ------------------------------------------------
for p in "le be" "le32 be32"; do
	# shellcheck disable=SC2086 # split into the two names on purpose
	set -- $p
	run "$REPORT" --stacks --json -l 0 "$T/$2"
	echo "$out" >"$T/$2.json"
	res=$(python3 - "$T/$1.json" "$T/$2.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for d in (a, b):
    del d["trace"]
print("same" if a == b else "differ")
PY
)
	is "$res" "same" "$2: the same document as $1 (trace section aside)"
done
run "$REPORT" --stacks -l 0 "$T/le"
le_text=$out
run "$REPORT" --stacks -l 0 "$T/be"
is "$(sed 1,2d <<<"$out")" "$(sed 1,2d <<<"$le_text")" "be: the same text report as le"

# ---- the text: one frame a line under each stack, the events without a stack said -----------------
run "$REPORT" --stacks -l 3 "$T/le"
like "$out" "Allocations by kernel stack" "text: the stacks table"
like "$(tr -s ' \n' '  ' <<<"$out")" "$(summary no_stack_allocs "$T/le.sum") events without a stack" \
	"text: the note says how many events have no stack"
top=$(jget "d['stacks'][0]['frame_addrs'][0] + ' ' + d['stacks'][0]['frame_addrs'][-1]" "$T/le.json")
like "$out" "    ${top%% *}" "text: the top stack's innermost frame on a line of its own"
like "$out" "    ${top##* }" "text: and its outermost frame"
is "$(awk 'length > 80' <<<"$out" | wc -l)" 0 "text: fits 80 columns"
like "$out" "Outstanding objects by kernel stack" "text: the outstanding-by-stack table"
like "$out" "Callers of each call site" "text: the callers table"
run "$REPORT" "$T/le"
like "$out" "Kernel stacks          : $(jget "d['totals']['distinct_stacks']" "$T/le.json") distinct; $(summary no_stack_allocs "$T/le.sum") events without a stack" \
	"summary without --stacks: distinct stacks and events without a stack"

# ---- a tiny per-CPU table: exact accounting -----------------------------------------------------
run "$REPORT" --stacks --json -l 0 "$T/tiny"
echo "$out" >"$T/tiny.json"
nostk=$(summary no_stack_allocs "$T/tiny.sum")
[ "${nostk:-0}" -gt 0 ]
ok $? "tiny: the table overflowed ($nostk events without a stack)"
is "$(jget "d['totals']['events_without_stack']" "$T/tiny.json")" "$nostk" \
	"tiny: events without a stack exactly the generator's"
is "$(jget "d['totals']['no_stack_allocs']" "$T/tiny.json")" "$nostk" "tiny: all marked KMT_F_NO_STACK"
is "$(jget "d['totals']['stack_records']" "$T/tiny.json")" "$(summary type_stack "$T/tiny.sum")" \
	"tiny: stack records as written"
is "$(jget "d['totals']['distinct_stacks'] <= 2 * 3" "$T/tiny.json")" True "tiny: at most 3 stacks per CPU"
run "$REPORT" --stacks "$T/tiny"
like "$(tr -s ' \n' '  ' <<<"$out")" "$nostk events without a stack ($nostk marked" "tiny: text note"
run "$CHECK" "$T/tiny"
is "$rc" 0 "tiny: kmemtrace_check accepts it"
like "$out" "stacks in" "tiny: kmemtrace_check counts the stacks"

# ---- large kmallocs traced twice: the allocator's first event counts nowhere ---------------------
# (the stacks, callers, outstanding and --folded above cover "twice" and "once" too)
for k in dup_pairs_both_stacks dup_pairs_first_only dup_pairs_second_only dup_pairs_neither; do
	[ "$(summary "$k" "$T/twice.sum")" -gt 0 ]
	ok $? "twice: the trace has such pairs ($k $(summary "$k" "$T/twice.sum"))"
done
[ "$(summary large_kmallocs "$T/once.sum")" -gt 0 ]
ok $? "once: the trace has large kmallocs, each traced once"
for v in once twice; do
	res=$(python3 - "$T/$v.sum" "$T/$v.json" <<'PY'
import json, sys
KEYS = ("hits", "failed", "bytes_req", "bytes_alloc", "frees", "outstanding", "outstanding_bytes")
want = {}
for line in open(sys.argv[1]):
    w = line.split()
    if w and w[0] == "site":
        kv = dict(zip(w[2::2], w[3::2]))
        want[int(w[1], 16)] = {k: int(kv[k]) for k in KEYS}
d = json.load(open(sys.argv[2]))
got = {int(c["addr"], 16): {k: c[k] for k in KEYS} for c in d["callsites"]}
bad = [a for a in set(got) | set(want) if got.get(a) != want.get(a)]
print("same" if not bad else f"{len(bad)} differ, e.g. {bad[0]:#x}: report {got.get(bad[0])}, generator {want.get(bad[0])}")
PY
)
	is "$res" "same" "$v: every call site's figures as generated (none at the allocator's)"
	is "$(jget "[d['totals'][k] for k in ('allocs', 'bytes_req', 'bytes_alloc', 'outstanding', 'outstanding_bytes', 'no_stack_allocs', 'kmalloc_duplicate_events', 'kmalloc_duplicates_without_stack')]" "$T/$v.json")" \
		"[$(for k in allocs bytes_req bytes_alloc outstanding outstanding_bytes no_stack_allocs \
			dup_events dup_no_stack_events; do printf '%s, ' "$(summary $k "$T/$v.sum")"; done |
			sed 's/, $//')]" \
		"$v: totals, allocations without a stack and duplicates (with none) as generated"
done
# The module's way of counting: allocation events marked KMT_F_NO_STACK (0x20), as recorded.
run "$REPORT" --raw "$T/twice"
is "$(python3 -c 'import re, sys
print(sum(1 for l in sys.stdin if l.split()[4:5] in (["kmalloc"], ["cache_alloc"]) and
          int(re.search(r" flags=(\S+)", l).group(1), 16) & 0x20))' <<<"$out")" \
	"$(jget "d['totals']['no_stack_allocs'] + d['totals']['kmalloc_duplicates_without_stack']" "$T/twice.json")" \
	"twice: marked allocation events as recorded = no_stack_allocs + kmalloc_duplicates_without_stack"
run "$REPORT" --pages --json "$T/twice"
echo "$out" >"$T/twice-pages.json"
is "$(jget "[r['duplicate_events'] for r in d['memory_totals'] if r['allocator'] == 'large_kmalloc']" "$T/twice-pages.json")" \
	"[$(summary dup_events "$T/twice.sum")]" "twice: --pages: duplicate_events as generated"
run "$REPORT" "$T/twice"
like "$out" "Traced twice           : $(summary dup_events "$T/twice.sum") large kmallocs" \
	"twice: the summary says how many large kmallocs were traced twice"
like "$out" "and $(summary dup_no_stack_events "$T/twice.sum") duplicate kmalloc events without one" \
	"twice: and how many of their uncounted events had no stack"
run "$REPORT" --stacks -l 1 "$T/twice"
like "$(tr -s ' \n' '  ' <<<"$out")" "$(summary dup_events "$T/twice.sum") large kmallocs traced twice, counted once ($(summary dup_no_stack_events "$T/twice.sum") of the duplicate events marked" \
	"twice: the stacks note says so"
run "$REPORT" "$T/once"
is "$(grep -c 'Traced twice' <<<"$out")" 0 "once: nothing said of large kmallocs traced twice"

# ---- filters: --min-count, --exclude, -l and --sort -------------------------------------------
min=$(jget "sorted(s['hits'] for s in d['stacks'])[len(d['stacks']) // 2]" "$T/le.json")
run "$REPORT" --stacks --json -l 0 --min-count "$min" "$T/le"
echo "$out" >"$T/min.json"
is "$(jget "len(d['stacks'])" "$T/min.json")" \
	"$(jget "len([s for s in d['stacks'] if s['hits'] >= $min])" "$T/le.json")" \
	"--min-count $min: exactly the stacks seen that often"
is "$(jget "min(s['hits'] for s in d['stacks']) >= $min" "$T/min.json")" True \
	"--min-count $min: none seen less"
ex=$(jget "sorted({s['frame_addrs'][1] for s in d['stacks'] if s['depth'] > 1})[0]" "$T/le.json")
run "$REPORT" --stacks --json -l 0 --exclude "$ex" "$T/le"
echo "$out" >"$T/ex.json"
is "$(jget "len(d['stacks'])" "$T/ex.json")" \
	"$(jget "len([s for s in d['stacks'] if '$ex' not in s['frame_addrs']])" "$T/le.json")" \
	"--exclude $ex: exactly the stacks not through it"
# By function name, with a kallsyms naming the generator's callers.
cp -r "$T/le" "$T/sym"
python3 - "$T/sym/kallsyms" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("ffffffff81000000 T _stext\n")
    f.write("ffffffff81001000 T gen_site\n")
    f.write("ffffffff81400000 T caller_a\n")
    f.write("ffffffff81400100 T caller_b\n")
    f.write("ffffffff81400200 T caller_end\n")
    f.write("ffffffff81500000 T outer_fn\n")
    f.write("ffffffff81600000 T outer_end\n")
PY
run "$REPORT" --stacks --json -l 0 --exclude caller_a,nothing_such "$T/sym"
echo "$out" >"$T/exa.json"
is "$(jget "len(d['stacks'])" "$T/exa.json")" \
	"$(jget "len([s for s in d['stacks'] if not any(0xffffffff81400000 <= int(a, 16) < 0xffffffff81400100 for a in s['frame_addrs'])])" "$T/le.json")" \
	"--exclude caller_a: exactly the stacks not through caller_a"
like "$(jget "d['stacks'][0]['frames'][0]" "$T/exa.json")" "gen_site+0x" "frames are symbolized"
run "$REPORT" --stacks --json -l 5 "$T/le"
echo "$out" >"$T/top.json"
is "$(jget "[s['hits'] for s in d['stacks']]" "$T/top.json")" \
	"$(jget "sorted((s['hits'] for s in d['stacks']), reverse=True)[:5]" "$T/le.json")" \
	"-l 5: the 5 commonest stacks, most first"
run "$REPORT" --stacks --json -l 0 -s bytes "$T/le"
echo "$out" >"$T/bytes.json"
is "$(jget "[s['bytes_alloc'] for s in d['stacks']] == sorted((s['bytes_alloc'] for s in d['stacks']), reverse=True)" "$T/bytes.json")" \
	True "-s bytes: most bytes first"

# ---- outstanding by stack and callers by call site ---------------------------------------------
for v in le twice; do
	res=$(python3 - "$T/$v.sum" "$T/$v.json" "$T/expect.py" <<'PY'
import collections, json, sys
exec(open(sys.argv[3]).read())
want = expected(sys.argv[1])
d = json.load(open(sys.argv[2]))
out = {tuple(int(a, 16) for a in s["frame_addrs"]): (s["outstanding"], s["outstanding_bytes"])
       for s in d["stacks_outstanding"]}
wout = {f: (v["outstanding"], v["outstanding_bytes"]) for f, v in want.items() if v["outstanding"]}
order = [s["outstanding_bytes"] for s in d["stacks_outstanding"]]
calls = collections.defaultdict(lambda: [0, 0])
for f, v in want.items():
    c = calls[(f[0], f[1] if len(f) > 1 else None)]
    c[0] += v["hits"]
    c[1] += v["bytes_alloc"]
got = {(int(c["callsite_addr"], 16), int(c["caller_addr"], 16) if c["caller_addr"] else None):
       [c["hits"], c["bytes_alloc"]] for c in d["stack_callers"]}
share = collections.defaultdict(float)
for c in d["stack_callers"]:
    share[c["callsite_addr"]] += c["share_pct"]
print("outstanding", "same" if out == wout else "differ",
      "sorted" if order == sorted(order, reverse=True) else "unsorted",
      "callers", "same" if got == dict(calls) else "differ",
      "shares", "100" if all(abs(s - 100) < 0.01 * len(d["stack_callers"]) for s in share.values()) else "off")
PY
)
	is "$res" "outstanding same sorted callers same shares 100" \
		"$v: outstanding by stack and callers per call site as generated"
done

# ---- --folded ------------------------------------------------------------------------------------
for vw in le:hits le:bytes twice:hits; do
	v=${vw%:*} w=${vw#*:}
	if [ "$w" = hits ]; then run "$REPORT" --folded "$T/$v"; else run "$REPORT" --folded=bytes "$T/$v"; fi
	is "$rc" 0 "$v: --folded ($w): exit 0"
	printf '%s\n' "$out" >"$T/folded.$w"
	like "$err" "$(summary no_stack_allocs "$T/$v.sum") events without a stack" \
		"$v: --folded ($w): stderr says how many events are not in it"
	res=$(python3 - "$T/$v.sum" "$T/folded.$w" "$T/expect.py" "$w" <<'PY'
import collections, re, sys
exec(open(sys.argv[3]).read())
key = "hits" if sys.argv[4] == "hits" else "bytes_alloc"
want = collections.Counter()
for f, v in expected(sys.argv[1]).items():
    if v[key]:
        want[tuple("0x%x" % a for a in reversed(f))] += v[key]
got = collections.Counter()
for line in open(sys.argv[2]):
    m = re.fullmatch(r"(\S+) (\d+)\n", line)
    if not m:
        print("bad line", line.strip())
        sys.exit()
    got[tuple(m.group(1).split(";"))] += int(m.group(2))
print("same" if got == want else f"differ: {len(set(got) ^ set(want))} stacks")
PY
)
	is "$res" "same" "$v: --folded ($w): parses back to the generator's counts, root first"
done
run "$REPORT" --folded "$T/sym"
like "$out" "outer_fn;" "--folded with symbols: function names"
is "$(awk '{ s += $NF } END { print s }' <<<"$out")" "$(summary stack_allocs "$T/le.sum")" \
	"--folded with symbols: the counts still add up to every allocation with a stack"
is "$(cut -d' ' -f1 <<<"$out" | sort | uniq -d | wc -l)" 0 \
	"--folded with symbols: stacks differing in offsets only are merged"
run "$REPORT" --folded --min-count "$min" "$T/le"
is "$(wc -l <<<"$out")" "$(jget "len([s for s in d['stacks'] if s['hits'] >= $min])" "$T/le.json")" \
	"--folded --min-count: the same stacks as --stacks"

# ---- CSV and --raw ------------------------------------------------------------------------------
run "$REPORT" --stacks --csv "$T/le"
is "$rc" 0 "--stacks --csv: exit 0"
like "$out" "hits,failed,bytes_req" "--stacks --csv: the stacks table's header"
run "$REPORT" --raw "$T/le"
is "$(grep -c ' stack stack_id=' <<<"$out")" "$(summary type_stack "$T/le.sum")" \
	"--raw: a line per stack record"

# ---- a trace without stacks -----------------------------------------------------------------------
run "$REPORT" --stacks "$T/plain"
like "$(tr -s ' \n' '  ' <<<"$out")" "The trace has no stacks" "no stacks: --stacks says so"
run "$REPORT" --json "$T/plain"
echo "$out" >"$T/plain.json"
is "$(jget "(d['totals']['has_stacks'], d['totals']['events_without_stack'])" "$T/plain.json")" \
	"(False, 0)" "no stacks: JSON has_stacks false"
run "$REPORT" "$T/plain"
is "$(grep -c 'Kernel stacks' <<<"$out")" 0 "no stacks: nothing about stacks in the summary"
run "$REPORT" --folded "$T/plain"
is "$rc:$out" "0:" "no stacks: --folded writes nothing"
like "$err" "the trace has no stacks" "no stacks: --folded says why"

# ---- an event naming a stack id no stack had ----------------------------------------------------
cp -r "$T/le" "$T/unk"
off=$(python3 - "$T/unk/cpu0.out" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
for o in range(64, len(b), 64):
    if b[o] in (1, 2) and struct.unpack_from("<H", b, o + 62)[0]:
        struct.pack_into("<H", b, o + 62, 65000)
        open(sys.argv[1], "wb").write(b)
        print(o)
        break
PY
)
run "$REPORT" --json "$T/unk"
echo "$out" >"$T/unk.json"
is "$(jget "d['totals']['unknown_stack_allocs']" "$T/unk.json")" 1 "unknown id: counted"
is "$(jget "d['totals']['events_without_stack']" "$T/unk.json")" \
	"$(($(summary no_stack_allocs "$T/le.sum") + 1))" "unknown id: one more event without a stack"
run "$CHECK" "$T/unk/cpu0.out"
is "$rc" 0 "unknown id: kmemtrace_check warns, does not fail"
like "$out" "warning: 1 events name a stack id not in the file before them (first at offset $off)" \
	"unknown id: kmemtrace_check names the offset"

# ---- corrupt stack records --------------------------------------------------------------------
first_stack() {
	python3 - "$1" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
print(next(o for o in range(64, len(b), 64) if b[o] == 9))
PY
}
for bad in "18 0 depth 0, expected 1..64" "20 7 7 frames in a slot, expected 1..5" \
	"16 0 stack record with stack id 0"; do
	# shellcheck disable=SC2086 # split into field, value and message on purpose
	set -- $bad
	field=$1 val=$2
	shift 2
	rm -rf "$T/bad"
	cp -r "$T/le" "$T/bad"
	off=$(first_stack "$T/bad/cpu1.out")
	python3 - "$T/bad/cpu1.out" "$((off + field))" "$val" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
o, v = int(sys.argv[2]), int(sys.argv[3])
b[o] = v
if o % 64 == 16:
    b[o + 1] = 0
open(sys.argv[1], "wb").write(b)
PY
	run "$REPORT" --stacks "$T/bad"
	is "$rc" 2 "corrupt ($*): exit 2"
	like "$err" "$T/bad/cpu1.out: offset $off: " "corrupt ($*): names the file and offset"
	like "$err" "$*" "corrupt ($*): says what is wrong"
	run "$CHECK" "$T/bad/cpu1.out"
	is "$rc" 2 "corrupt ($*): kmemtrace_check exit 2"
done

# ---- --html: flame graphs of the same stacks as --folded ------------------------------------------
# Each frame of a graph is a path from the root; its weight must be the sum of the folded lines
# through that path (--folded is checked against the generator above), it sits inside its
# caller, and only frames narrower than the page's 0.3 px are left out, counted in the caption.
# many: 800 stacks, so some frames are narrower than the limit.
gen many --cpus 2 --events 20000 --callsites 10 --stack-depth 12 --stacks 800 --stack-table 1024 \
	--seed 9
for vg in sym:flame-bytes:bytes sym:flame-allocs:hits fs:flame-frees:frees many:flame-bytes:bytes; do
	IFS=: read -r v g w <<<"$vg"
	run "$REPORT" --folded="$w" "$T/$v"
	printf '%s\n' "$out" >"$T/flame.$w"
	run "$REPORT" --html "$T/$v.html" "$T/$v"
	is "$rc" 0 "$v: --html: exit 0"
	res=$(python3 "$FLAME_CHECK" "$T/$v.html" "$g" "$T/flame.$w")
	is "${res%%$'\n'*}" same \
		"$v: --html $g: every frame's weight is its folded stacks' sum, inside its caller"
	printf '%s\n' "$res" | grep '^#'
done
like "$(cat "$T/many.html")" "frames narrower than 0.3 px are not drawn" \
	"many: frames too narrow to see are left out, and the caption says how many"
# --min-count and --exclude filter the page's stacks as they do --folded's.
fmin=$(jget "sorted(s['hits'] for s in d['stacks'])[len(d['stacks']) // 2]" "$T/le.json")
run "$REPORT" --folded --min-count "$fmin" --exclude caller_a "$T/sym"
printf '%s\n' "$out" >"$T/flame.filtered"
run "$REPORT" --html "$T/symf.html" --min-count "$fmin" --exclude caller_a "$T/sym"
is "$rc" 0 "--html --min-count --exclude: exit 0"
res=$(python3 "$FLAME_CHECK" "$T/symf.html" flame-allocs "$T/flame.filtered")
is "${res%%$'\n'*}" same "--html --min-count $fmin --exclude caller_a: the graph of --folded's filtered stacks"
ok "$(grep -q 'caller_a' "$T/flame.filtered"; [ $? = 1 ]; echo $?)" "... none through caller_a"
like "$(cat "$T/symf.html")" "stacks seen at least $fmin times, through none of caller_a" \
	"--html: the page says how its stacks were filtered"
ok "$(grep -q 'id="t-stacks"' "$T/sym.html"; echo $?)" "--html: the --stacks tables are on the page"
ok "$(grep -q 'id="flame-frees"' "$T/sym.html"; [ $? = 1 ]; echo $?)" \
	"--html: no graph of frees for a trace without their stacks"
run "$REPORT" --html "$T/plain.html" "$T/plain"
like "$(cat "$T/plain.html")" "No kernel stacks: trace with the module parameter stack_depth=N" \
	"--html of a trace without stacks says how to get them"

# ---- a frame after the kernel's exception entry code ----------------------------------------
# A free in the softirq of a timer interrupt that arrived at oracle_init's first byte: the frame
# after asm_sysvec_apic_timer_interrupt (in the entry text) is the interrupted instruction, named
# by the function holding it; the same address as a return address elsewhere (a call ending
# oracle_exit) names oracle_exit. Every view that names frames does so.
mkdir -p "$T/irq"
cat >"$T/irq.script" <<'SC'
stack 0 1 0xffffffff81010040,0xffffffff81020030,0xffffffff81c00f0a,0xffffffffc027c000,0xffffffff81030059
stack 0 2 0xffffffff81010040,0xffffffffc027c000,0xffffffff81030059
kmalloc 0 0xffffffff81010040 0xffff888100000100 8 8 stack=1
kmalloc 0 0xffffffff81010040 0xffff888100000200 8 8 stack=2
SC
"$GEN" -o "$T/irq" --cpus 1 --script "$T/irq.script" >/dev/null ||
	echo "# kmemtrace-gen --script failed"
cat >"$T/irq/kallsyms" <<'KS'
ffffffff81000000 T _stext
ffffffff81010000 T handle_softirqs
ffffffff81020000 T sysvec_apic_timer_interrupt
ffffffff81030000 T do_one_initcall
ffffffff81c00010 T __entry_text_start
ffffffff81c00ef0 T asm_sysvec_apic_timer_interrupt
ffffffff81c01b17 T __entry_text_end
ffffffffc0270000 t oracle_exit	[oracle]
ffffffffc027c000 t oracle_init	[oracle]
KS
echo "oracle 0xffffffffc0270000 0xffffffffc0270000 65536" >"$T/irq/modules"
run "$REPORT" --stacks --json "$T/irq"
printf '%s\n' "$out" >"$T/irq.json"
is "$rc" 0 "interrupted frame: --stacks --json: exit 0"
is "$(jget "sorted(' <- '.join(s['frames']) for s in d['stacks'])" "$T/irq.json")" \
	"['handle_softirqs+0x40 <- oracle_exit+0xc000 [oracle] <- do_one_initcall+0x59', 'handle_softirqs+0x40 <- sysvec_apic_timer_interrupt+0x30 <- asm_sysvec_apic_timer_interrupt+0x1a <- oracle_init+0x0 [oracle] <- do_one_initcall+0x59']" \
	"interrupted frame: --json names the frame after the entry code exactly, a return address by its call"
run "$REPORT" --stacks "$T/irq"
like "$out" "    asm_sysvec_apic_timer_interrupt+0x1a
    oracle_init+0x0 [oracle]
    do_one_initcall+0x59" "interrupted frame: the text view too"
run "$REPORT" --folded "$T/irq"
is "$(printf '%s\n' "$out" | sort)" \
	"do_one_initcall;oracle_exit_[oracle];handle_softirqs 1
do_one_initcall;oracle_init_[oracle];asm_sysvec_apic_timer_interrupt;sysvec_apic_timer_interrupt;handle_softirqs 1" \
	"interrupted frame: --folded"
run "$REPORT" --raw "$T/irq"
like "$out" "asm_sysvec_apic_timer_interrupt+0x1a oracle_init+0x0 [oracle] do_one_initcall" \
	"interrupted frame: --raw, within a stack record's slot"
# The entry code as the last frame of a stack record's first slot (five frames a slot), the
# interrupted instruction as the first of its second: --raw names it from the slot before.
mkdir -p "$T/irq2"
printf '%s\n' \
	"stack 0 1 0xffffffff81010040,0xffffffff81020030,0xffffffff81010040,0xffffffff81020030,0xffffffff81c00f0a,0xffffffffc027c000,0xffffffff81030059" \
	"kmalloc 0 0xffffffff81010040 0xffff888100000100 8 8 stack=1" >"$T/irq2.script"
"$GEN" -o "$T/irq2" --cpus 1 --script "$T/irq2.script" >/dev/null ||
	echo "# kmemtrace-gen --script failed"
cp "$T/irq/kallsyms" "$T/irq/modules" "$T/irq2/"
run "$REPORT" --raw "$T/irq2"
is "$(printf '%s\n' "$out" | awk '/ stack / && / first=5 / { print $(NF - 2), $(NF - 1), $NF }')" \
	"oracle_init+0x0 [oracle] do_one_initcall+0x59" \
	"interrupted frame: --raw, the first frame of a stack's second slot, after the entry code in its first"
run "$REPORT" --pprof "$T/irq.pb.gz" "$T/irq"
is "$rc" 0 "interrupted frame: --pprof: exit 0"
is "$(gzip -dc "$T/irq.pb.gz" | grep -a -o -e 'oracle_init \[oracle\]' -e 'oracle_exit \[oracle\]' | sort -u | tr '\n' ' ')" \
	"oracle_exit [oracle] oracle_init [oracle] " "interrupted frame: --pprof has a location of each"

# ---- bad options --------------------------------------------------------------------------------
for args in "--stacks --min-count abc" "--stacks --min-count -1" "--stacks --exclude ," \
	"--folded=weight" "--stacks --alloc" "--stacks --folded" "--min-count 3" \
	"--folded --json" "--stacks --interval 1s --caller" "--stacks --interval 1s --min-count 2" \
	"--stacks --exclude 0xzz" \
	"--folded --exclude f,0x1ffffffffffffffff"; do
	# shellcheck disable=SC2086 # the options are split on purpose
	run "$REPORT" $args "$T/le"
	is "$rc" 1 "$args: usage error (exit 1)"
	[ -n "$err" ]
	ok $? "$args: a message"
done

done_testing
