#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 53-report-pprof.t - kmemtrace-report --pprof on kmemtrace-gen traces, read back by go tool
# pprof (Debian's golang-go): the profile parses; per stack, per cache label, per CPU label
# and in total its six sample types are the report's own figures (its --stacks, --cache,
# --cpu N and summary JSON, which 45-report-stacks.t holds to the generator), large kmallocs
# traced twice counted once; events without a stack are the samples labelled stack=none;
# `pprof -top` per function (flat and cum) is what the --stacks JSON sums to, and
# `-diff_base` of two --time windows is the growth between them; a trace without stacks gives
# one sample per call site as the summary counts them; big-endian and 32-bit traces give the
# same profile; a failed write keeps what was at the path, and bad options exit 1.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
REPORT=$BIN/kmemtrace-report
GEN=$BIN/kmemtrace-gen
CHECK_PY=$(dirname "$0")/pprof-check.py

require_tools kmemtrace-report kmemtrace-gen
require_cmds go gzip
scratch_dir pprof
# pprof keeps nothing of its own for local files; a HOME it may write to all the same.
export HOME=$T

gen() {
	local dir=$1
	shift
	"$GEN" -o "$T/$dir" "$@" >"$T/$dir.sum" || echo "# kmemtrace-gen $* failed"
}
pprof() {
	go tool pprof "$@" 2>>"$T/pprof.err"
}
check() {
	python3 "$CHECK_PY" "$@"
}
# -top with every node shown, exact units (B: bytes and counts unscaled).
top() {
	pprof -top -unit=B -nodefraction=0 -edgefraction=0 -nodecount=1000000 "$@"
}

# 40 stacks, 25 ids a CPU (some events without a stack), every 7th kmalloc a large one traced
# twice (6.12, 7.3): its first event's counts are taken back from its sample.
COMMON=(--cpus 3 --events 20000 --callsites 10 --stack-depth 12 --stacks 40 --stack-table 25 \
	--large-every 7 --twice --seed 7)
gen le "${COMMON[@]}"
gen be "${COMMON[@]}" --big-endian
gen le32 "${COMMON[@]}" --word-bits 32
gen plain --cpus 2 --events 4000 --callsites 12 --seed 9

# ---- the profile parses, and its figures are the report's ----------------------------------
run "$REPORT" --pprof "$T/le.pb.gz" "$T/le"
is "$rc" 0 "--pprof: exit 0"
ok_cmd "--pprof: a gzip file" gzip -t "$T/le.pb.gz"
pprof -raw "$T/le.pb.gz" >"$T/le.raw"
is "$?" 0 "go tool pprof -raw reads the profile"
like "$(head -c 200000 "$T/le.raw")" "alloc_objects/count alloc_space/bytes[dflt] inuse_objects/count inuse_space/bytes requested_space/bytes failed_allocs/count" \
	"the six sample types, alloc_space the default"
"$REPORT" --stacks --json -l 0 "$T/le" >"$T/le.stacks.json" 2>/dev/null
"$REPORT" --json -l 0 "$T/le" >"$T/le.json" 2>/dev/null
"$REPORT" --cache --json -l 0 "$T/le" >"$T/le.cache.json" 2>/dev/null
cpus=()
for c in 0 1 2; do
	"$REPORT" --cpu "$c" --json -l 0 "$T/le" >"$T/cpu$c.json" 2>/dev/null
	cpus+=("$T/cpu$c.json")
done
is "$(check stacks "$T/le.raw" "$T/le.stacks.json")" same \
	"per stack: hits, failed, bytes and outstanding as --stacks; stack=none as its events without one"
is "$(check totals "$T/le.raw" "$T/le.json")" same "in total: as the summary"
is "$(check label "$T/le.raw" cache "$T/le.cache.json")" same "per cache label: as --cache"
is "$(check label "$T/le.raw" cpu "${cpus[@]}")" same "per cpu label: as --cpu N"
is "$(jget "d['totals']['kmalloc_duplicate_events'] > 0" "$T/le.json")" True \
	"the trace has large kmallocs traced twice (counted once above)"

for ix in alloc_objects alloc_space inuse_objects inuse_space requested_space; do
	top -sample_index=$ix -tagignore=stack=none "$T/le.pb.gz" >"$T/top.$ix"
	is "$(check top "$T/top.$ix" $ix "$T/le.stacks.json")" same \
		"pprof -top -sample_index=$ix: every function's flat and cum as the stacks sum"
done
n_fn=$(awk 'rows { n++ } /^ +flat +flat%/ { rows = 1 } END { print n + 0 }' "$T/top.alloc_space")
ok "$([ "$n_fn" -gt 40 ]; echo $?)" "pprof -top lists the trace's functions ($n_fn)"

# ---- every filter: the profile holds what the filtered report counts ----------------------------
for f in "--cpu 1-2" "--cache-name kmalloc-64" "--min-size 300" "--time 5ms,12ms" "--pid 120" \
	"--cpu 0 --min-size 100"; do
	tag=$(tr -c 'a-z0-9' _ <<<"$f")
	# shellcheck disable=SC2086 # the filter's words
	"$REPORT" $f --pprof "$T/f$tag.pb.gz" "$T/le" >/dev/null 2>&1
	# shellcheck disable=SC2086
	"$REPORT" $f --json -l 0 "$T/le" >"$T/f$tag.json" 2>/dev/null
	pprof -raw "$T/f$tag.pb.gz" >"$T/f$tag.raw"
	is "$(check totals "$T/f$tag.raw" "$T/f$tag.json")" same "$f: the profile's totals as the report's"
done
is "$(jget "d['totals']['allocs'] > 0" "$T/f__cache_name_kmalloc_64_.json")" True \
	"the kmalloc-64 filter selects something"

# ---- growth between two --time windows: -diff_base ------------------------------------------
"$REPORT" --time ,8ms --pprof "$T/a.pb.gz" "$T/le" >/dev/null 2>&1
"$REPORT" --time ,16ms --pprof "$T/b.pb.gz" "$T/le" >/dev/null 2>&1
"$REPORT" --time ,8ms --stacks --json -l 0 "$T/le" >"$T/a.json" 2>/dev/null
"$REPORT" --time ,16ms --stacks --json -l 0 "$T/le" >"$T/b.json" 2>/dev/null
for ix in inuse_objects inuse_space; do
	top -sample_index=$ix -tagignore=stack=none -diff_base="$T/a.pb.gz" "$T/b.pb.gz" >"$T/diff.$ix"
	is "$(check top "$T/diff.$ix" $ix "$T/b.json" "$T/a.json")" same \
		"-diff_base of --time ,8ms and ,16ms ($ix): per function, outstanding at 16 ms less at 8 ms"
done
like "$(pprof -comments "$T/b.pb.gz")" "filters: time ,16ms" "the profile's comments name the filter"
# --at T: the profile ends at T (the --at view on stdout unchanged by it).
run "$REPORT" --at 8ms --pprof "$T/at.pb.gz" "$T/le"
is "$rc" 0 "--at 8ms --pprof: exit 0"
"$REPORT" --at 8ms "$T/le" >"$T/at.txt" 2>/dev/null
is "$out" "$(cat "$T/at.txt")" "--at's report is the same with --pprof"
cmp -s <(pprof -raw "$T/at.pb.gz" | grep -v '^Comment:') <(pprof -raw "$T/a.pb.gz" | grep -v '^Comment:')
ok $? "--at 8ms --pprof: the profile of --time ,8ms"
like "$(pprof -comments "$T/at.pb.gz")" "--at 8ms" "its comments say where it ends"
run "$REPORT" --diff 8ms,16ms --pprof "$T/x.pb.gz" "$T/le"
is "$rc" 1 "--diff with --pprof: exit 1 (one profile --at each time instead)"

# ---- other byte orders and word sizes, and no stacks ----------------------------------------
for v in be le32; do
	"$REPORT" --pprof "$T/$v.pb.gz" "$T/$v" >/dev/null 2>&1
	pprof -raw "$T/$v.pb.gz" | grep -v '^Comment:' >"$T/$v.raw"
	grep -v '^Comment:' "$T/le.raw" >"$T/le.nocomment"
	if [ "$v" = le32 ]; then
		# 32-bit addresses: the same figures per stack as its own --stacks.
		"$REPORT" --stacks --json -l 0 "$T/$v" >"$T/$v.stacks.json" 2>/dev/null
		is "$(check stacks "$T/$v.raw" "$T/$v.stacks.json")" same "$v: per stack as --stacks"
	else
		ok_cmd "$v: the same profile as little-endian" cmp -s "$T/le.nocomment" "$T/$v.raw"
	fi
done
"$REPORT" --pprof "$T/plain.pb.gz" "$T/plain" >/dev/null 2>&1
pprof -raw "$T/plain.pb.gz" >"$T/plain.raw"
"$REPORT" --json -l 0 "$T/plain" >"$T/plain.json" 2>/dev/null
is "$(check sites "$T/plain.raw" "$T/plain.json")" same \
	"no stacks: one frame a sample, per call site as the summary"
ok "$(grep -q 'stack:\[none\]' "$T/plain.raw"; echo $((!$?)))" "no stacks: no stack=none labels"

# ---- errors ---------------------------------------------------------------------------------
echo keep >"$T/kept"
mkdir "$T/dir.pb.gz"
run "$REPORT" --pprof "$T/dir.pb.gz" "$T/le"
is "$rc" 3 "--pprof onto a directory: exit 3 (I/O)"
like "$err" "$T/dir.pb.gz" "the message names the path"
is "$(find "$T" -maxdepth 1 -name 'dir.pb.gz.*' | wc -l)" 0 "no temporary file left behind"
run "$REPORT" --pprof "$T/nodir/x.pb.gz" "$T/le"
is "$rc" 3 "--pprof into a missing directory: exit 3"
cp "$T/kept" "$T/kept.pb.gz"
run "$REPORT" --pprof "$T/kept.pb.gz" "$T/nonexistent"
ok "$([ "$rc" -ne 0 ]; echo $?)" "a report that fails (no trace): non-zero exit"
is "$(cat "$T/kept.pb.gz")" keep "and the file at the path is as it was"
run "$REPORT" --pprof "" "$T/le"
is "$rc" 1 "--pprof '': exit 1"
run "$REPORT" --pprof "$T/x.pb.gz" --raw "$T/le"
is "$rc" 1 "--pprof with --raw: exit 1"
like "$err" "--pprof" "the message names --pprof"
run "$REPORT" --pprof "$T/x.pb.gz" --interval 1ms "$T/le"
is "$rc" 1 "--pprof with --interval: exit 1"

done_testing
