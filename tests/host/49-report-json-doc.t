#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 49-report-json-doc.t - Documentation/report-json.md is the JSON document's contract: on
# generated traces (the golden test's, and a scripted one with errors and a kmemtrace.meta with
# coverage), every view's JSON is checked against it table by table (json-doc-check.py): each
# key a table has is documented in that table's section, and each documented key appears. The
# check is shown to fail on a key the page drops and on a key a document adds.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
REPORT=$BIN/kmemtrace-report
GEN=$BIN/kmemtrace-gen
DOC=$(dirname "$0")/../../Documentation/report-json.md
CHECK=$(dirname "$0")/json-doc-check.py

require_tools kmemtrace-report kmemtrace-gen
scratch_dir jsondoc

# The golden test's traces (tests/golden/traces), and one with errors and coverage.
"$GEN" -o "$T/basic" --cpus 2 --events 600 --callsites 12 --seed 7 --nodes 2 --lost-every 250 \
	--pages --live 64 >/dev/null &&
	"$GEN" -o "$T/stacks" --cpus 2 --events 500 --callsites 10 --seed 11 --stack-depth 6 \
		--stacks 24 --stack-table 16 --stack-frees --large-every 40 --twice --live 48 \
		--pages >/dev/null &&
	"$GEN" -o "$T/be32" --cpus 3 --events 400 --callsites 8 --seed 5 --big-endian \
		--word-bits 32 --pages --probed-every 9 --live 32 >/dev/null
ok $? "kmemtrace-gen wrote the traces"
CACHE=0xffff888003000000
"$GEN" -o "$T/errs" --cpus 2 --script - >/dev/null <<EOF
cache_desc 0 $CACHE 88 96 kmt_merged_a
cache_alloc 0 0xffffffff81000100 0xffff888100000100 $CACHE 88 96 probed
cache_desc 1 $CACHE 88 96 kmt_merged_a
cache_free 1 0xffffffff81000180 0xffff888100000100 $CACHE probed
cache_free 1 0xffffffff81000180 0xffff888100000100 $CACHE
kmalloc 0 0xffffffff81000300 0xffff888100000400 90 96
kfree 0 0xffffffff81000380 0xffff888100000400
kfree 1 0xffffffff81000380 0xffff888100000400
cache_alloc 0 0xffffffff81000100 0xffff888100000200 $CACHE 88 96
kfree 0 0xffffffff81000380 0xffff888100000200
EOF
printf 'meta_version 1\n%s\n' 'coverage kmalloc tracepoint
coverage kmem_cache_alloc tracepoint
coverage kfree tracepoint
coverage kmem_cache_free tracepoint
coverage kmem_cache_alloc_bulk unseen kprobes disabled' >"$T/errs/kmemtrace.meta"
ok $? "kmemtrace-gen --script wrote a trace with errors and coverage"

# Every view's JSON of every trace (a view a trace cannot give fails: --stacks without stacks,
# --at and --diff past the end of the short one with errors).
docs=()
i=0
for tr in basic stacks be32 errs; do
	for view in "" --alloc --cache --stacks --lifetimes --pages "--interval 100us" \
		"--interval 100us --caller" "--interval 100us --stacks" "--at 200us" "--diff 100us,300us"; do
		i=$((i + 1))
		# shellcheck disable=SC2086 # the view's options are words
		if "$REPORT" --json $view "$T/$tr" >"$T/d$i.json" 2>/dev/null; then
			docs+=("$T/d$i.json")
		fi
	done
done
ok $((${#docs[@]} < 20)) "rendered ${#docs[@]} JSON documents"

run python3 "$CHECK" "$DOC" "${docs[@]}"
is "$out" "" "every table's keys and its section of Documentation/report-json.md agree"
is "$rc" 0 "... json-doc-check.py says so"

# It can fail: a key the page no longer documents, a key a document has and the page does not.
# shellcheck disable=SC2016 # the backquotes are the page's, not a command
grep -v '^| `hits` |' "$DOC" >"$T/doc-less.md"
run python3 "$CHECK" "$T/doc-less.md" "${docs[@]}"
is "$rc" 1 "a key dropped from the page fails the check"
like "$out" "callsites: key 'hits' is not in section" "... naming the table and the key"
python3 - "${docs[0]}" "$T/extra.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["callsites"][0]["new_key"] = 1
json.dump(d, open(sys.argv[2], "w"))
PY
run python3 "$CHECK" "$DOC" "$T/extra.json" "${docs[@]:1}"
is "$rc" 1 "a key the page does not document fails the check"
like "$out" "callsites: key 'new_key' is not in section" "... naming the table and the key"

done_testing
