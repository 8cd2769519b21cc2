#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 26-report-rotated.t - a rotated trace (kmemtraced --max-size: a checkpoint and segments,
# Documentation/trace-format.md section 10) reports what the same trace unsplit reports: a
# script trace is split by hand at a cut into ckpt.000002 (the records a fold keeps, with their
# times and sequence numbers, and the SUM records it writes) and seg.000002, seg.000003; call
# sites, caches, totals, outstanding objects with ages (--at, --diff after the cut), stacks,
# --cpu and --cache-name agree, in either byte order and word size. Then what must fail: a
# missing segment, a sequence gap or a SUM record in a segment, a checkpoint corrupted or cut
# short (file and offset), timestamps going back from a checkpoint to its segment (both files
# named), times before the cut, and the filters a sum cannot answer. --interval and
# kmemtrace-top --replay give the kept window's intervals.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
REPORT=$BIN/kmemtrace-report
CHECK=$BIN/kmemtrace_check
GEN=$BIN/kmemtrace-gen

require_tools kmemtrace-report kmemtrace_check kmemtrace-gen
scratch_dir rotated

C=0xffff888010000000
S1=0xffffffff81000100 S2=0xffffffff81000200 S3=0xffffffff81000300 S4=0xffffffff81000400
F1=0xffffffff81000150 F2=0xffffffff81000250
STK="$S1,0xffffffff81200000,0xffffffff81300000"

# The whole trace. Before the cut (1020000 ns): on CPU 0 two kmallocs of S1 freed, one live
# at the cut, a cache allocation freed on CPU 1, a failed kmalloc, a free of an object from
# before the trace, 5 records lost; on CPU 1 a kmalloc freed and one live to the end.
cat >"$T/full.txt" <<EOF
at 1001000
cache_desc 0 $C 192 192 foo_cache
at 1001500
cache_desc 1 $C 192 192 foo_cache
at 1002000
stack 0 1 $STK
at 1003000
kmalloc 0 $S1 0xffff888000001000 24 32 stack=1
at 1004000
cache_alloc 0 $S2 0xffff888010000040 $C 100 192
at 1004500
cache_free 1 $F2 0xffff888010000040 $C
at 1005000
kmalloc 0 $S1 0xffff888000002000 24 32 stack=1
at 1006000
kmalloc 0 $S3 0 5000 0
at 1006500
kmalloc 1 $S4 0xffff888000004000 100 128
at 1007000
kfree 0 $F1 0xffff888000001000
at 1008000
kmalloc 0 $S1 0xffff888000003000 24 32 stack=1
at 1008500
kmalloc 1 $S4 0xffff888000005000 100 128
at 1009000
kfree 0 $F1 0xffff888000003000
at 1009200
kfree 1 $F1 0xffff888000005000
at 1009500
kfree 0 $F1 0xffff888000009000
at 1010000
lost 0 5
at 1021000
kfree 0 $F1 0xffff888000002000
at 1022000
kmalloc 0 $S1 0xffff888000006000 24 32 stack=1
at 1023000
kmalloc 1 $S4 0xffff888000007000 100 128
at 1041000
cache_alloc 0 $S2 0xffff888010000080 $C 100 192
at 1042000
kmalloc 0 $S3 0 5000 0
at 1043000
kfree 1 $F1 0xffff888000007000
at 1044000
kfree 1 $F1 0xffff888000006000
EOF
# What a fold at 1020000 keeps: cache descriptions, the stack, the allocations live at the
# cut, the unpaired free and the LOST record, as they were (sequence gaps and all), then the
# sums of what was freed or failed before the cut, at the cut - 1. Its first six lines are
# the whole trace's: the cache descriptions and the stack.
{
	head -n 6 "$T/full.txt"
	cat <<EOF
seq 0 4
at 1005000
kmalloc 0 $S1 0xffff888000002000 24 32 stack=1
seq 1 2
at 1006500
kmalloc 1 $S4 0xffff888000004000 100 128
seq 0 9
at 1009500
kfree 0 $F1 0xffff888000009000
seq 0 10
at 1010000
lost 0 5
at 1019999
sum 0 1 1 $S1 0 2 48 64 0 0 stack=1
at 1019999
sum 0 1 2 $S2 $C 1 100 192 1 0
at 1019999
sum 0 2 1 $S3 0 1 5000 0 0 0
at 1019999
sum 1 1 1 $S4 0 1 100 128 0 0
EOF
} >"$T/ckpt.txt"
cat >"$T/seg2.txt" <<EOF
seq 0 15
at 1021000
kfree 0 $F1 0xffff888000002000
at 1022000
kmalloc 0 $S1 0xffff888000006000 24 32 stack=1
seq 1 5
at 1023000
kmalloc 1 $S4 0xffff888000007000 100 128
EOF
cat >"$T/seg3.txt" <<EOF
seq 0 17
at 1041000
cache_alloc 0 $S2 0xffff888010000080 $C 100 192
at 1042000
kmalloc 0 $S3 0 5000 0
seq 1 6
at 1043000
kfree 1 $F1 0xffff888000007000
at 1044000
kfree 1 $F1 0xffff888000006000
EOF

# Script SRC (full, ckpt, seg2, seg3) into DIR with the generator's options OPTS...
gen() {
	local src=$1 dir=$2
	shift 2
	mkdir -p "$(dirname "$dir")" && "$GEN" -o "$dir" --cpus 2 "$@" --script "$T/$src.txt" >/dev/null
}

# A rotated directory DIR of the scripts, with OPTS... (byte order, word size).
rotated() {
	local dir=$1
	shift
	gen ckpt "$dir/ckpt.000002" --checkpoint 1020000,2,11 "$@" &&
		gen seg2 "$dir/seg.000002" "$@" && gen seg3 "$dir/seg.000003" "$@"
}

gen full "$T/full" && rotated "$T/rot"
ok $? "kmemtrace-gen wrote the trace, its checkpoint and its segments"
# Leftovers of a drop: an older segment and its checkpoint, which the window starts after.
mkdir -p "$T/rot/seg.000001" "$T/rot/ckpt.000001" &&
	printf 'not a trace' >"$T/rot/seg.000001/cpu0.out" &&
	cp "$T/rot/ckpt.000002/cpu0.out" "$T/rot/ckpt.000001/cpu0.out"
ok $? "leftovers seg.000001 and ckpt.000001 written"

# The report without what only says which trace it read: its name, files, records read and
# the rotated trace's lines.
body() {
	grep -v -e '^Trace: ' -e ' files\?, ' -e '^Records read' -e '^Rotated: ' \
		-e '^  [0-9]* records of dropped segments' -e '^  Call sites, caches, totals' \
		-e '^  after the cut of an object' -e '^  timelines, the per-address' \
		-e '^  window only\.$' "$1"
}

# The same report, unsplit and rotated, for each of these options.
same() {
	local a=$1 b=$2 opt
	shift 2
	for opt in "" --cache "--stacks --lines 0" "--at 25us" "--at 42500ns" \
		"--diff 21us,43us" "--cpu 1" "--cpu 0 --stacks" "--cache-name foo_cache" \
		"--cache-name kmalloc-32" "--alloc --lines 0" "--time 21us,"; do
		# shellcheck disable=SC2086 # the options are words
		"$REPORT" --raw-ip --lines 0 $opt "$a" >"$T/a.out" 2>/dev/null
		local ra=$?
		# shellcheck disable=SC2086
		"$REPORT" --raw-ip --lines 0 $opt "$b" >"$T/b.out" 2>/dev/null
		local rb=$?
		if [ "$opt" = "--alloc --lines 0" ]; then
			# Per address only the kept window: the folded objects' addresses are gone.
			is "$rb" 0 "$*: --alloc reads the rotated trace"
			continue
		fi
		is "$ra/$rb" 0/0 "$*: ${opt:-the default view}: both read"
		is "$(body "$T/b.out")" "$(body "$T/a.out")" "$*: ${opt:-the default view}: the same"
	done
}
same "$T/full" "$T/rot" "little-endian 64-bit"

run "$REPORT" --raw-ip "$T/rot"
is "$rc" 0 "the rotated trace: exit 0"
like "$out" "Rotated: records before +0.000019s (cut) were folded into a checkpoint:" \
	"... its header says where the cut is"
like "$out" "22 records of dropped segments, folded, not lost (segments 2-3 kept)" \
	"... and how many records were folded, not lost"
like "$out" "timelines, the per-address view (--alloc) and intervals are of the kept" \
	"... and which views cover only the kept window"
like "$out" "Records lost           : 5" "... its lost records are the LOST records, kept"

"$REPORT" --json "$T/rot" >"$T/rot.json" 2>/dev/null && "$REPORT" --json "$T/full" >"$T/full.json" 2>/dev/null
ok $? "--json of both"
is "$(jget 'd["trace"]["rotated"], d["trace"]["cut_ns"], d["trace"]["folded_records"], d["trace"]["first_segment"], d["trace"]["last_segment"]' "$T/rot.json")" \
	"True 1020000 22 2 3" "JSON: rotated, cut_ns, folded_records, first and last segment"
is "$(jget 'd["trace"]["window_only"]' "$T/rot.json")" "['lifetimes', 'timelines', 'alloc', 'intervals']" \
	"JSON: window_only"
is "$(jget 'd["trace"]["rotated"], d["trace"]["cut_ns"], d["trace"]["window_only"]' "$T/full.json")" \
	"False None None" "JSON of a plain trace: not rotated, nulls"
for key in totals callsites caches outstanding; do
	is "$(jget "d['$key']" "$T/rot.json")" "$(jget "d['$key']" "$T/full.json")" "JSON $key: the same"
done

# --interval: the rotated trace's intervals begin at its first record after the cut, 1021000,
# which is the start of the unsplit trace's third (10 us from 1001000): the same tables on.
for by in "" --caller --stacks; do
	# shellcheck disable=SC2086
	"$REPORT" --json --interval 10us $by "$T/full" >"$T/if.json" 2>/dev/null &&
		# shellcheck disable=SC2086
		"$REPORT" --json --interval 10us $by "$T/rot" >"$T/ir.json" 2>"$T/err"
	ok $? "--interval 10us $by: both read"
	is "$(python3 -c 'import json, sys
f, r = (json.load(open(p))["intervals"] for p in sys.argv[1:])
strip = lambda v: [(i["total"], i["rows"]) for i in v]
print(len(r), strip(f[2:]) == strip(r))' "$T/if.json" "$T/ir.json")" "3 True" \
		"--interval 10us $by: the rotated trace's intervals are the unsplit one's from the cut"
done
like "$(cat "$T/err")" "is a rotated trace: its intervals begin at its first record after the cut" \
	"... saying so"

# --pprof: the profile's samples add up to the unsplit trace's totals and stacks.
if command -v go >/dev/null && command -v gzip >/dev/null; then
	"$REPORT" --pprof "$T/r.pb.gz" "$T/rot" >/dev/null 2>&1 &&
		"$REPORT" --json --stacks "$T/full" >"$T/fs.json" 2>/dev/null &&
		HOME=$T go tool pprof -raw "$T/r.pb.gz" >"$T/r.raw" 2>/dev/null
	ok $? "--pprof of the rotated trace, read by go tool pprof"
	is "$(python3 "$(dirname "$0")/pprof-check.py" totals "$T/r.raw" "$T/full.json")" same \
		"... its samples add up to the unsplit trace's totals"
	is "$(python3 "$(dirname "$0")/pprof-check.py" stacks "$T/r.raw" "$T/fs.json")" same \
		"... and to its stacks"
	like "$(cat "$T/r.raw")" "rotated: records before 1020000 ns (the cut) were folded" \
		"... and its comments say the trace is rotated"
else
	for i in 1 2 3 4; do skip "go or gzip not installed"; done
fi

run "$REPORT" --html "$T/r.html" "$T/rot"
is "$rc" 0 "--html of the rotated trace: exit 0"
like "$(cat "$T/r.html")" "Rotated: the records before 1020000 ns (the cut) were folded into a checkpoint: 22 records" \
	"... the page says the trace is rotated"
run "$REPORT" --csv "$T/rot"
like "$err" "is a rotated trace: the records before its cut were folded into a checkpoint (22 records" \
	"--csv: a note says so on standard error"

run "$REPORT" --raw "$T/rot"
like "$out" "sum kind=freed alloc_type=kmalloc call_site=0xffffffff81000100 cache_id=0x0 count=2 bytes_req=48 bytes_alloc=64" \
	"--raw prints SUM records"

run "$CHECK" "$T/rot"
is "$rc" 0 "kmemtrace_check of the rotated directory: exit 0"
like "$out" "ckpt.000002/cpu0.out: OK: " "... checks its checkpoint"
like "$out" "checkpoint cut at 1020000 ns of seg.000002: 2 events kept (live at the cut, or unpaired), 3 sums, of 11 records dropped" \
	"... and says what it holds"
like "$out" "seg.000003/cpu1.out: OK" "... and its segments"

if [ -x "$BIN/kmemtrace-top" ]; then
	run "$BIN/kmemtrace-top" -csite --raw-ip --replay -d "$T/rot" 0.001 1 </dev/null
	is "$rc" 0 "kmemtrace-top --replay of the rotated trace: exit 0"
	like "$out" "allocs 4  bytes 352  frees 3" "... its one interval is the kept window's"
else
	skip "kmemtrace-top not built"
	skip "kmemtrace-top not built"
fi
[[ $out != *seg.000001* ]]
ok $? "... not the leftover segment"

# A kmalloc sum of two sizes (32, 32 and 64 bytes): its call site counts it, no kmalloc-N can
# (kmemtraced keys its sums by size class too; a sum that divides evenly is taken as of one).
{ cat "$T/ckpt.txt"; printf 'at 1019999\nsum 1 1 1 0xffffffff81000500 0 3 60 128 0 0\n'; } >"$T/mixed.txt"
cp -r "$T/rot" "$T/mixed" && rm -r "$T/mixed/ckpt.000002" &&
	gen mixed "$T/mixed/ckpt.000002" --checkpoint 1020000,2,11
ok $? "a checkpoint with a kmalloc sum of two sizes written"
run "$REPORT" --raw-ip --caller "$T/mixed"
like "$out" "3 folded kmallocs of several sizes in one sum are in no kmalloc-N cache." \
	"... the header says they are in no cache"
like "$out" "0xffffffff81000500                128/42          60/20        3" \
	"... its call site counts them"
"$REPORT" --json "$T/mixed" >"$T/mixed.json" 2>/dev/null
is "$(jget 'd["trace"]["folded_no_cache"], sum(c["allocs"] for c in d["caches"]), d["totals"]["allocs"]' "$T/mixed.json")" \
	"3 9 14" "... JSON: folded_no_cache 3; the caches have neither them nor the 2 failed kmallocs"

# Either byte order, either word size: the same reports.
gen full "$T/be64" --big-endian && rotated "$T/rbe64" --big-endian
ok $? "big-endian 64-bit: written"
for opt in "" --cache "--stacks --lines 0" "--at 25us"; do
	# shellcheck disable=SC2086
	"$REPORT" --raw-ip $opt "$T/rot" >"$T/a.out" 2>/dev/null
	# shellcheck disable=SC2086
	"$REPORT" --raw-ip $opt "$T/rbe64" >"$T/b.out" 2>/dev/null
	is "$(body "$T/b.out" | sed 's/big-endian/little-endian/')" "$(body "$T/a.out")" \
		"big-endian rotated as little-endian rotated: ${opt:-the default view}"
done
for f in full ckpt seg2 seg3; do
	sed -e 's/0xffffffff/0x/g' -e 's/0xffff88800000/0xd000/g' -e 's/0xffff88801000/0xd100/g' \
		"$T/$f.txt" >"$T/$f-32.txt"
done
gen full-32 "$T/be32" --big-endian --word-bits 32 &&
	mkdir -p "$T/rbe32" && gen ckpt-32 "$T/rbe32/ckpt.000002" --checkpoint 1020000,2,11 \
		--big-endian --word-bits 32 &&
	gen seg2-32 "$T/rbe32/seg.000002" --big-endian --word-bits 32 &&
	gen seg3-32 "$T/rbe32/seg.000003" --big-endian --word-bits 32
ok $? "big-endian 32-bit: written"
same "$T/be32" "$T/rbe32" "big-endian 32-bit"

# ---- what must fail ------------------------------------------------------------------------

# A segment missing inside the window.
cp -r "$T/rot" "$T/gap" && mv "$T/gap/seg.000003" "$T/gap/seg.000004" &&
	mkdir "$T/gap/seg.000005" && cp "$T/rot/seg.000003/cpu0.out" "$T/gap/seg.000005/"
run "$REPORT" "$T/gap"
is "$rc" 2 "a missing segment: exit 2"
like "$err" "$T/gap: segment seg.000003 is missing: the trace's window runs from ckpt.000002 to seg.000005" \
	"... naming it and the window"
run "$CHECK" "$T/gap"
is "$rc" 2 "kmemtrace_check of it: exit 2"

# A segment with a sequence gap: an error there, as in any records file.
sed 's/^seq 0 17$/seq 0 19/' "$T/seg3.txt" >"$T/seg3gap.txt" && cp -r "$T/rot" "$T/seqgap" &&
	rm -r "$T/seqgap/seg.000003" && gen seg3gap "$T/seqgap/seg.000003"
ok $? "a segment with a sequence gap written"
run "$REPORT" "$T/seqgap"
is "$rc" 2 "a sequence gap in a segment: exit 2"
like "$err" "$T/seqgap/seg.000003/cpu0.out: offset 64: seq 19 where 17 expected" \
	"... at its file and offset, after the segment before"

# A SUM record in a segment.
printf 'at 1045000\nsum 0 1 1 %s 0 1 24 32 0 0\n' "$S1" >>"$T/seg3.txt"
cp -r "$T/rot" "$T/sumseg" && rm -r "$T/sumseg/seg.000003" && gen seg3 "$T/sumseg/seg.000003"
ok $? "a segment with a SUM record written"
run "$REPORT" "$T/sumseg"
is "$rc" 2 "a SUM record in a records file: exit 2"
like "$err" "$T/sumseg/seg.000003/cpu0.out: offset 192: sum record in a file that is not a checkpoint (kind 0)" \
	"... at its file and offset"

# A corrupted SUM record (kind 7) and a checkpoint cut short, in the report and the checker.
CK=$T/bad/ckpt.000002/cpu0.out
cp -r "$T/rot" "$T/bad" && printf '\007' | dd of="$CK" bs=1 seek=$((64 * 7 + 63)) conv=notrunc 2>/dev/null
ok $? "a checkpoint with a SUM record of kind 7 written"
run "$REPORT" "$T/bad"
is "$rc" 2 "a corrupted checkpoint: exit 2"
like "$err" "$CK: offset 448: sum record of kind 7, expected 1 (freed) or 2 (failed)" \
	"... its file and offset"
run "$CHECK" "$CK"
is "$rc" 2 "kmemtrace_check of it: exit 2"
like "$out" "$CK: FAIL: offset 448: sum record of kind 7" "... the same"
cp "$T/rot/ckpt.000002/cpu0.out" "$CK" && truncate -s $((64 * 8 + 20)) "$CK"
run "$REPORT" "$T/bad"
is "$rc" 2 "a checkpoint cut short: exit 2"
like "$err" "$CK: offset 512: truncated record: 20 of 64 bytes at the end of the file" \
	"... its file and offset"
run "$CHECK" --strict "$CK"
is "$rc" 2 "kmemtrace_check --strict of it: exit 2"
# An unknown file kind.
cp "$T/rot/ckpt.000002/cpu0.out" "$CK" && printf '\002' | dd of="$CK" bs=1 seek=17 conv=notrunc 2>/dev/null
run "$CHECK" "$CK"
is "$rc" 2 "a header of kind 2: exit 2"
like "$out" "$CK: FAIL: offset 17: unknown file kind 2" "... at the kind's offset"

# A segment's record before its checkpoint's last: both files named.
printf 'seq 1 5\nat 1018000\nkmalloc 1 %s 0xffff888000007000 100 128\n' "$S4" >"$T/seg2back.txt" &&
	cp -r "$T/rot" "$T/back" && rm -r "$T/back/seg.000002" && gen seg2back "$T/back/seg.000002"
ok $? "a segment going back before its checkpoint written"
run "$REPORT" "$T/back"
is "$rc" 2 "timestamps going back from the checkpoint to its segment: exit 2"
like "$err" "$T/back/seg.000002/cpu1.out: offset 64: timestamp 1018000 goes back before the last record of $T/back/ckpt.000002/cpu1.out (1019999)" \
	"... naming both files"

# Times before the cut, and filters the sums cannot answer.
for opt in "--at 10us" "--diff 5us,25us" "--time 5us,30us" "--time ,30us"; do
	# shellcheck disable=SC2086
	run "$REPORT" $opt "$T/rot"
	is "$rc" 1 "$opt before the cut: exit 1"
	like "$err" "before the trace's cut at +0.000019s" "... saying where the cut is"
done
for opt in "--pid 1" "--min-size 8"; do
	# shellcheck disable=SC2086
	run "$REPORT" $opt "$T/rot"
	is "$rc" 1 "$opt of a rotated trace: exit 1"
	like "$err" "${opt%% *}: a rotated trace's records before its cut were folded into sums" \
		"... saying why"
done

done_testing
