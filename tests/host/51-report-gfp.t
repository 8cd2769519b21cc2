#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 51-report-gfp.t - the --pages tables' JSON keys hold what they are named for: migratetype_id is
# the migrate type's number in pages_by_migratetype and null in pages_by_order and pages_by_gfp
# (it held the order and the GFP mask there), on a scripted trace of page allocations of three
# orders, migrate types and masks.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
GEN=$BIN/kmemtrace-gen
REPORT=$BIN/kmemtrace-report

require_tools kmemtrace-gen kmemtrace-report
scratch_dir gfp

# Order, migrate type and mask differ by row: order n with migrate type n and mask n.
for i in 1 2 3; do
	printf 'page_alloc 0 %d %d %d 0x%x\n' $((4096 + 8 * i)) $((i % 3)) $((i % 3)) $((0xcc0 + i))
done >"$T/script"
"$GEN" -o "$T/tr" --cpus 1 --script "$T/script" >/dev/null
ok $? "kmemtrace-gen wrote the scripted trace"

run "$REPORT" --pages --json "$T/tr"
is "$rc" 0 "--pages --json: exit 0"
echo "$out" >"$T/pages.json"
is "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
mt = ["Unmovable", "Movable", "Reclaimable"]
print(sorted(set(r["migratetype_id"] for r in d["pages_by_order"])),
      sorted(set(r["migratetype_id"] for r in d["pages_by_gfp"])),
      all(mt[r["migratetype_id"]] == r["migratetype"] for r in d["pages_by_migratetype"]),
      len(d["pages_by_migratetype"]))' "$T/pages.json")" "[None] [None] True 3" \
	"JSON: migratetype_id null by order and by GFP mask, the number of its migratetype by migrate type"
run "$REPORT" --pages --csv "$T/tr"
is "$(awk -F, '/^order,/ { h = 1; next } h && NF < 2 { h = 0 } h { print $NF }' <<<"$out" |
	sort -u | tr '\n' ' ')" " " "CSV: migratetype_id empty by order"

done_testing
