#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 51-report-gfp.t - kmemtrace-report names GFP masks with the traced kernel's own table (the
# trace's tracepoint_formats): a scripted trace whose page allocations carry every mask ftrace
# named in the guest on 6.12 (tests/gfp/RELEASE/pairs) must show ftrace's names in --raw and in
# --pages in text, CSV, JSON and HTML alike, with the mask itself in CSV and JSON; a trace without
# the file shows hex; a bad file stops the report (exit 2) naming its path, line and column.
# And the pages tables' JSON keys hold what they are named for: migratetype_id is the migrate
# type's number in pages_by_migratetype and null in pages_by_order and pages_by_gfp (it held
# the order and the GFP mask there).
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
GEN=$BIN/kmemtrace-gen
REPORT=$BIN/kmemtrace-report
DATA=$(cd "$(dirname "$0")/../gfp" && pwd)
REL=6.12.117+deb12-amd64

require_tools kmemtrace-gen kmemtrace-report
scratch_dir gfp

# One page allocation per mask of the pairs, 1 + its line number times (so that each row of
# the table by GFP mask is told apart by its count), on order 0..2 and migrate types 0..2.
PAIRS=$DATA/$REL/pairs
awk '{ for (i = 0; i <= NR; i++) printf "page_alloc 0 %d %d %d %s\n", 4096 + 16 * NR + i, NR % 3,
	NR % 3, $1 }' "$PAIRS" >"$T/script"
printf 'kmalloc 0 0xffffffff81000100 0xffff888000001000 24 32\n' >>"$T/script"
"$GEN" -o "$T/tr" --cpus 1 --script "$T/script" >/dev/null
ok $? "kmemtrace-gen wrote the scripted trace"
cp -r "$T/tr" "$T/hex"
cp "$DATA/$REL/tracepoint_formats" "$T/tr/"

# --raw: each page allocation's mask as ftrace printed it.
run "$REPORT" --raw --raw-ip "$T/tr"
is "$rc" 0 "--raw: exit 0"
awk '{ for (i = 0; i <= NR; i++) print $2 }' "$PAIRS" >"$T/want"
grep ' page_alloc ' "$T/out" | grep -o ' gfp=[^ ]*' | cut -c6- >"$T/got"
ok_cmd "--raw: every page allocation's mask named as ftrace named it on $REL" \
	cmp "$T/got" "$T/want"
like "$out" " kmalloc call_site=0xffffffff81000100 ptr=0xffff888000001000 cache_id=0x0 bytes_req=24 bytes_alloc=32 gfp=$(awk '$1 == "0xcc0" { print $2 }' "$PAIRS") node=" \
	"--raw: the kmalloc's 0xcc0 too"

# --pages in each format: the same names, and in CSV and JSON the mask beside them.
run "$REPORT" --pages --json "$T/tr"
is "$rc" 0 "--pages --json: exit 0"
echo "$out" >"$T/pages.json"
is "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for r in sorted(d["pages_by_gfp"], key=lambda r: int(r["gfp_flags"], 16)):
    print(r["gfp_flags"], r["gfp_names"])' "$T/pages.json")" "$(cat "$PAIRS")" \
	"--pages --json: pages_by_gfp has each mask (gfp_flags) with ftrace's names (gfp_names)"
run "$REPORT" --pages --csv "$T/tr"
is "$(awk -F, '/^gfp_names,/ { h = 1; for (i = 1; i <= NF; i++) c[$i] = i; next }
	h && NF < 2 { h = 0 } h { print $c["gfp_flags"], $c["gfp_names"] }' <<<"$out" |
	sort -t' ' -k1,1)" "$(sort -t' ' -k1,1 "$PAIRS")" "--pages --csv: the same masks and names"
run "$REPORT" --pages -w "$T/tr"
got=$(awk '/^Page allocations by GFP flags/ { s = 1; next } s && /^-+$/ { r = 1; next }
	r && NF == 0 { exit } r { print $1, $2 }' <<<"$out" | sort)
want=$(awk '{ print $2, NR + 1 }' "$PAIRS" | sort)
is "$got" "$want" "--pages text: each row named as ftrace named its mask, with its count"
like "$out" "GFP flags as the traced kernel's tracepoints name them" "... and the note says whose"
run "$REPORT" --pages --html "$T/page.html" "$T/tr"
is "$rc" 0 "--pages --html: exit 0"
is "$(grep -c "data-key=\"pages_by_gfp\"" "$T/page.html")" 1 "--html: the table by GFP mask"
html_bad=$(cut -d' ' -f2 "$PAIRS" | while read -r names; do
	grep -qF ">$names<" "$T/page.html" || echo "$names"; done)
is "$html_bad" "" "--html: every name in it"

# The tables' keys: migratetype_id only where it is one.
is "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
mt = ["Unmovable", "Movable", "Reclaimable"]
print(sorted(set(r["migratetype_id"] for r in d["pages_by_order"])),
      sorted(set(r["migratetype_id"] for r in d["pages_by_gfp"])),
      all(mt[r["migratetype_id"]] == r["migratetype"] for r in d["pages_by_migratetype"]),
      len(d["pages_by_migratetype"]))' "$T/pages.json")" "[None] [None] True 3" \
	"JSON: migratetype_id null by order and by GFP mask, the number of its migratetype by migrate type"

# No tracepoint_formats: hex everywhere.
run "$REPORT" --raw --raw-ip "$T/hex"
grep ' page_alloc ' "$T/out" | grep -o ' gfp=[^ ]*' | cut -c6- >"$T/got"
awk '{ for (i = 0; i <= NR; i++) print $1 }' "$PAIRS" >"$T/want"
ok_cmd "no tracepoint_formats: --raw prints the masks in hex" cmp "$T/got" "$T/want"
run "$REPORT" --pages --json "$T/hex"
is "$(jget 'all(r["gfp_names"] == r["gfp_flags"] for r in d["pages_by_gfp"])' "$T/out")" True \
	"... and --pages names each mask by its hex"

# A bad file: exit 2, naming the file, line and column, whatever the view.
cp -r "$T/tr" "$T/bad"
sed -i 's/((((1UL))) << (6))/((((1UL))) << (___GFP_IO_BIT))/' "$T/bad/tracepoint_formats"
line=$(grep -n '^print fmt:.*___GFP_IO_BIT' "$T/bad/tracepoint_formats" | head -1 | cut -d: -f1)
for view in --raw --pages ""; do
	# shellcheck disable=SC2086 # no view is no word
	run "$REPORT" $view "$T/bad"
	is "$rc" 2 "a name in a mask (${view:-summary}): exit 2"
	like "$err" "kmemtrace-report: $T/bad/tracepoint_formats:$line: column " \
		"... naming the file and line"
	like "$err" "unknown name '___GFP_IO_BIT' in a mask" "... and what is wrong"
done
is "$out" "" "... and nothing on stdout"
printf 'name: kmalloc\n' >"$T/bad/tracepoint_formats"
run "$REPORT" --raw "$T/bad"
is "$rc" 2 "a format before any event line: exit 2"
like "$err" "tracepoint_formats:1: column 1: expected 'event kmem/NAME'" "... naming line 1"
rm "$T/bad/tracepoint_formats" && mkdir "$T/bad/tracepoint_formats"
run "$REPORT" --raw "$T/bad"
is "$rc" 3 "a tracepoint_formats that cannot be read: exit 3"
like "$err" "tracepoint_formats: " "... naming it"

done_testing
