#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 40-report-cli.t - kmemtrace-report's command line on traces from kmemtrace-gen: totals
# against the generator's own tallies (JSON), every byte order and word size alike, CSV
# shape, filters that partition the trace, --raw, 80-column text, usage errors, and the
# exit code and message for each kind of bad input.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
REPORT=$BIN/kmemtrace-report
GEN=$BIN/kmemtrace-gen

require_tools kmemtrace-report kmemtrace-gen
scratch_dir report


# ---- a workload, in all four formats --------------------------------------------------
for f in le64 be64 le32 be32; do
	opts=""
	case $f in be*) opts="$opts --big-endian" ;; esac
	case $f in *32) opts="$opts --word-bits 32" ;; esac
	# shellcheck disable=SC2086
	"$GEN" -o "$T/$f" --cpus 3 --events 30000 --nodes 2 --lost-every 7000 --seed 7 \
		$opts >"$T/$f.sum" || { echo "Bail out! kmemtrace-gen failed"; exit 1; }
done

run "$REPORT" --json "$T/le64"
is "$rc" 0 "--json: exit 0"
echo "$out" >"$T/le64.json"
python3 -m json.tool "$T/le64.json" >/dev/null
ok $? "--json: parses with python3 -m json.tool"
for k in allocs frees failed_allocs bytes_req bytes_alloc bytes_freed untracked_frees \
	cross_cpu_frees cross_node_allocs outstanding outstanding_bytes lost; do
	is "$(jget "d['totals']['$k']" "$T/le64.json")" "$(summary "$k" "$T/le64.sum")" \
		"--json: totals.$k as the generator counted"
done
is "$(jget "len(d['callsites'])" "$T/le64.json")" "$(summary callsites "$T/le64.sum")" \
	"--json: one entry per allocating call site"
is "$(jget "sum(c['hits'] for c in d['callsites'])" "$T/le64.json")" \
	"$(summary allocs "$T/le64.sum")" "--json: call site hits add up to allocs"
is "$(jget "sum(c['count'] for c in d['outstanding'])" "$T/le64.json")" \
	"$(summary outstanding "$T/le64.sum")" "--json: outstanding list adds up"
is "$(jget "sorted(d.keys())" "$T/le64.json")" \
	"['caches', 'callsites', 'errors', 'outstanding', 'schema_version', 'totals', 'trace']" \
	"--json: the documented top-level keys"
is "$(jget "d['trace']['lower_bounds']" "$T/le64.json")" "True" \
	"--json: lost records make the numbers lower bounds"
like "$err" "lower bound" "--json: the loss said on stderr too"
like "$err" "$T/le64 has no kmemtrace.meta, kallsyms, modules: call sites are shown as raw" \
	"missing metadata: a note on stderr"
is "$(grep -c kallsyms "$T/err")" 1 "missing metadata: said once"

strip() {	# the totals and call sites, without what names the format
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
print(json.dumps([d['totals'], d['callsites'], d['caches'], d['outstanding']], sort_keys=True))" "$1"
}
for f in be64 le32 be32; do
	run "$REPORT" --json "$T/$f"
	echo "$out" >"$T/$f.json"
	is "$rc" 0 "$f: exit 0"
	is "$(jget "(d['trace']['byte_order'], d['trace']['word_bits'])" "$T/$f.json")" \
		"$(case $f in be*) printf "('big', " ;; *) printf "('little', " ;; esac; \
		   case $f in *32) echo "32)" ;; *) echo "64)" ;; esac)" "$f: format recognized"
	if [ "$f" = be64 ]; then
		is "$(strip "$T/$f.json")" "$(strip "$T/le64.json")" \
			"$f: the same report as little-endian"
	fi
	is "$(jget "d['totals']['allocs']" "$T/$f.json")" "$(summary allocs "$T/$f.sum")" \
		"$f: allocs as the generator counted"
	is "$(jget "d['totals']['outstanding_bytes']" "$T/$f.json")" \
		"$(summary outstanding_bytes "$T/$f.sum")" "$f: outstanding bytes as generated"
done
is "$(strip "$T/be32.json")" "$(strip "$T/le32.json")" "be32: the same report as le32"

# ---- text --------------------------------------------------------------------------
run "$REPORT" "$T/le64"
is "$rc" 0 "text: exit 0"
like "$(echo "$out" | head -1)" "WARNING: $(summary lost "$T/le64.sum") records were lost" \
	"text: the loss comes first, with the generator's count"
like "$(echo "$out" | head -1)" "lower bound" "text: ... and says the numbers are lower bounds"
like "$out" "Call sites ($(summary callsites "$T/le64.sum")):" "text: call site table"
like "$out" "SUMMARY" "text: summary"
is "$(echo "$out" | awk 'length > 80' | wc -l)" 0 "text: fits 80 columns"
is "$(echo "$out" | awk '/^Call sites/{f=1; next} /^  \.\.\. /{exit} f && /^0x/' | wc -l)" 20 \
	"text: 20 call sites by default"
run "$REPORT" -l 5 "$T/le64"
is "$(echo "$out" | awk '/^Call sites/{f=1; next} /^  \.\.\. /{exit} f && /^0x/' | wc -l)" 5 \
	"-l 5: five rows"
run "$REPORT" -l 0 --sort bytes "$T/le64"
is "$(echo "$out" | awk '/^Call sites/{f=1; next} /^$/{f=0} f && /^0x/' | wc -l)" \
	"$(summary callsites "$T/le64.sum")" "-l 0: every call site"
echo "$out" | awk '/^Call sites/{f=1; next} /^$/{f=0} f && /^0x/ { split($2, a, "/"); print a[1] }' \
	>"$T/bytes"
sort -nr "$T/bytes" | cmp -s - "$T/bytes"
ok $? "--sort bytes: most bytes first"
run "$REPORT" --cache "$T/le64"
is "$rc" 0 "--cache: exit 0"
like "$out" "Caches (" "--cache: cache table"
run "$REPORT" --alloc -l 3 "$T/le64"
like "$out" "Objects by address" "--alloc: per-address table"

run "$REPORT" --json --alloc "$T/le64"
echo "$out" >"$T/alloc.json"
is "$(jget "sum(a['hits'] for a in d['allocs'])" "$T/alloc.json")" \
	"$(( $(summary allocs "$T/le64.sum") - $(summary failed_allocs "$T/le64.sum") ))" \
	"--json --alloc: per-address hits add up to the successful allocations"
is "$(jget "sum(a['frees'] for a in d['allocs'])" "$T/alloc.json")" \
	"$(summary tracked_frees "$T/le64.sum")" "--json --alloc: ... and frees to the tracked frees"

# ---- CSV -------------------------------------------------------------------------------
for view in caller alloc cache; do
	run "$REPORT" --csv --"$view" "$T/le64"
	is "$rc" 0 "--csv --$view: exit 0"
	echo "$out" >"$T/$view.csv"
	shape=$(python3 -c "import csv,sys; r=list(csv.reader(open(sys.argv[1]))); \
print(len(set(len(x) for x in r)), len(r) > 1)" "$T/$view.csv")
	is "$shape" "1 True" "--csv --$view: a header and rows, all of the same width"
done
is "$(($(wc -l <"$T/caller.csv") - 1))" "$(summary callsites "$T/le64.sum")" \
	"--csv: one row per call site"
is "$(python3 -c "import csv,sys; print(sum(int(r['hits']) for r in \
csv.DictReader(open(sys.argv[1]))))" "$T/caller.csv")" "$(summary allocs "$T/le64.sum")" \
	"--csv: hits add up to allocs"

# ---- filters: partitions of the trace add up to the whole ------------------------------
total=$(summary allocs "$T/le64.sum")
sum=0
for c in 0 1 2; do
	run "$REPORT" --json --cpu "$c" "$T/le64"
	echo "$out" >"$T/cpu$c.json"
	sum=$((sum + $(jget "d['totals']['allocs']" "$T/cpu$c.json")))
done
is "$sum" "$total" "--cpu 0, 1, 2: allocations add up to all"
run "$REPORT" --json --cpu 0-2 "$T/le64"
echo "$out" >"$T/cpuall.json"
is "$(jget "d['totals']['allocs']" "$T/cpuall.json")" "$total" "--cpu 0-2: all"
raw_cpu0=$("$REPORT" --raw --raw-ip "$T/le64" 2>/dev/null |
	awk '$3 == 0 && ($5 == "kmalloc" || $5 == "cache_alloc")' | wc -l)
is "$(jget "d['totals']['allocs']" "$T/cpu0.json")" "$raw_cpu0" \
	"--cpu 0: the allocation records of CPU 0 in --raw"
dur=$(jget "d['trace']['duration_ns']" "$T/le64.json")
half=$((dur / 2))
run "$REPORT" --json --time "0,${half}ns" "$T/le64"
echo "$out" >"$T/t1.json"
run "$REPORT" --json --time "$((half + 1))ns," "$T/le64"
echo "$out" >"$T/t2.json"
is "$(($(jget "d['totals']['allocs']" "$T/t1.json") + $(jget "d['totals']['allocs']" "$T/t2.json")))" \
	"$total" "--time: two halves add up to all allocations"
is "$(($(jget "d['totals']['lost']" "$T/t1.json") + $(jget "d['totals']['lost']" "$T/t2.json")))" \
	"$(summary lost "$T/le64.sum")" "--time: ... and all lost records"
# Digits finer than 1 ns once overflowed and moved the window's start back into the trace.
past=$((dur / 1000000000))
run "$REPORT" --json --time "${past}.999999999999s," "$T/le64"
echo "$out" >"$T/t3.json"
is "$(jget "d['totals']['allocs']" "$T/t3.json")" 0 \
	"--time ${past}.999999999999s, (after the trace's ${dur} ns): no allocation"
run "$REPORT" --json --time "99999999999999999999s," "$T/le64"
is "$rc" 1 "--time with a start beyond 2^64 ns: usage error, not a wrapped window"
run "$REPORT" --json --min-size 1000000000 "$T/le64"
echo "$out" >"$T/big.json"
is "$(jget "d['totals']['allocs']" "$T/big.json")" 0 "--min-size huge: nothing"
run "$REPORT" --json --cache-name no-such-cache "$T/le64"
echo "$out" >"$T/none.json"
is "$(jget "d['totals']['allocs']" "$T/none.json")" 0 "--cache-name unknown: nothing"
name=$(jget "[c['name'] for c in d['caches'] if c['kind'] == 'cache'][0]" "$T/le64.json")
want=$(jget "[c['allocs'] for c in d['caches'] if c['name'] == '$name'][0]" "$T/le64.json")
run "$REPORT" --json --cache-name "$name" "$T/le64"
echo "$out" >"$T/one.json"
is "$(jget "d['totals']['allocs']" "$T/one.json")" "$want" "--cache-name $name: its allocations"

# ---- --raw -----------------------------------------------------------------------------
run "$REPORT" --raw "$T/le64"
is "$rc" 0 "--raw: exit 0"
is "$(echo "$out" | grep -vc '^#')" "$(summary records "$T/le64.sum")" "--raw: one line per record"
is "$(echo "$out" | grep -c ' lost count=')" "$(summary lost_markers "$T/le64.sum")" \
	"--raw: LOST records included"
is "$(echo "$out" | grep -c ' cache_desc ')" "$(summary cache_descs "$T/le64.sum")" \
	"--raw: CACHE_DESC records included"
echo "$out" | grep -v '^#' | awk '{print $2}' | sort -n -c 2>/dev/null
ok $? "--raw: in time order"

# ---- strings: a cache name with quotes, backslashes, control and non-UTF-8 bytes --------
mkdir -p "$T/names"
python3 - "$T/names" <<'PY'
import struct, sys
d = sys.argv[1]
hdr = struct.pack("<IHHHHHBBB3sIQQ24s", 0x52544d4b, 1, 0, 64, 64, 0, 1, 64, 1, b"", 4096, 0, 0, b"")
name = b'a"b\\c\x01d\xff,e'
desc = struct.pack("<BBHIQQII32s", 7, 0, 0, 0, 100, 0xffff888000a00000, 24, 32, name)
ev = struct.pack("<BBHIQQQQIIIiIhH", 2, 0, 0, 1, 200, 0xffffffff81000010, 0xffff888000100000,
                 0xffff888000a00000, 24, 32, 0xcc0, -1, 1, 0, 0)
open(d + "/cpu0.out", "wb").write(hdr + desc + ev)
PY
run "$REPORT" --json "$T/names"
is "$rc" 0 "odd cache name: exit 0"
echo "$out" >"$T/names.json"
is "$(jget "[c['name'] for c in d['caches']] == ['a\"b\\\\c\\x01d\\ufffd,e']" "$T/names.json")" True \
	"odd cache name: escaped in valid JSON, the invalid byte as U+FFFD"
run "$REPORT" --csv --cache "$T/names"
is "$(python3 -c "import csv,sys; r=list(csv.reader(open(sys.argv[1]))); print(len(r), len(r[0]) == len(r[1]))" \
	<(echo "$out"))" "2 True" "odd cache name: one quoted CSV field"

# ---- usage errors: exit 1 with a message naming the option -----------------------------
for args in "--sort nosuchkey" "-l abc" "--time 5" "--time 2s,1s" "--cpu 1-x" "--pid -3" \
	"--json --csv" "--raw --json" "--caller --cache" "--resolver foo" "--min-size 1e3" \
	"--no-such-option"; do
	# shellcheck disable=SC2086
	run "$REPORT" $args "$T/le64"
	is "$rc" 1 "usage: $args: exit 1"
done
like "$err" "no-such-option" "usage: the bad option named"
run "$REPORT" --sort nosuchkey "$T/le64"
like "$err" "nosuchkey" "usage: the bad sort key named"
run "$REPORT" --help
is "$rc" 0 "--help: exit 0"
like "$out" "EXAMPLES" "--help: examples"
run "$REPORT" --version
like "$out" "kmemtrace-report" "--version"

# ---- bad input: exit 2 (data) or 3 (I/O), the file and offset named -------------------
mkdir "$T/empty"
run "$REPORT" "$T/empty"
is "$rc" 2 "empty directory: exit 2"
like "$err" "no cpu" "empty directory: said"
run "$REPORT" "$T/nonexistent"
is "$rc" 3 "missing input: exit 3"
like "$err" "$T/nonexistent" "missing input: named"

cp -r "$T/le64" "$T/trunc"
size=$(stat -c %s "$T/trunc/cpu1.out")
truncate -s $((size - 10)) "$T/trunc/cpu1.out"
run "$REPORT" "$T/trunc"
is "$rc" 2 "truncated: exit 2"
like "$err" "cpu1.out: offset $(( (size - 10) / 64 * 64 ))" "truncated: file and offset"
is "$out" "" "truncated: no partial report on stdout"
run "$REPORT" --allow-truncated "$T/trunc"
is "$rc" 0 "truncated with --allow-truncated: exit 0"
like "$err" "partial record" "--allow-truncated: said on stderr"

cp -r "$T/le64" "$T/zero"
dd if=/dev/zero of="$T/zero/cpu0.out" bs=64 seek=100 count=1 conv=notrunc 2>/dev/null
run "$REPORT" --json "$T/zero"
is "$rc" 2 "zeroed record: exit 2"
like "$err" "cpu0.out: offset 6400" "zeroed record: file and offset"
is "$out" "" "zeroed record: no JSON on stdout"

cp -r "$T/le64" "$T/seq"
# The seq field (offset 4) of record 200 of cpu2.out.
printf '\xff\xff\xff\x7f' | dd of="$T/seq/cpu2.out" bs=1 seek=$((200 * 64 + 4)) conv=notrunc \
	2>/dev/null
run "$REPORT" "$T/seq"
is "$rc" 2 "sequence gap: exit 2"
like "$err" "cpu2.out: offset 12800" "sequence gap: file and offset"

cp -r "$T/le64" "$T/abi"
printf '\x02\x00' | dd of="$T/abi/cpu1.out" bs=1 seek=4 conv=notrunc 2>/dev/null
run "$REPORT" "$T/abi"
is "$rc" 2 "another ABI major in one file: exit 2"
like "$err" "cpu1.out" "another ABI major: the file named"

mkdir "$T/mixed"
cp "$T/le64/cpu0.out" "$T/mixed/cpu0.out"
cp "$T/be64/cpu1.out" "$T/mixed/cpu1.out"
run "$REPORT" "$T/mixed"
is "$rc" 2 "files of two traces (byte orders): exit 2"

mkdir "$T/junk"
head -c 4096 /dev/urandom >"$T/junk/cpu0.out"
run "$REPORT" "$T/junk"
is "$rc" 2 "not a trace: exit 2"
like "$err" "cpu0.out" "not a trace: named"

mkdir "$T/misnamed"
cp "$T/le64/cpu1.out" "$T/misnamed/cpu0.out"
run "$REPORT" "$T/misnamed"
is "$rc" 2 "cpu1's file named cpu0.out: exit 2"
like "$err" "cpu0.out" "misnamed: named"

run "$REPORT" "$T/le64/cpu0.out" "$T/le64/cpu1.out"
is "$rc" 0 "files given one by one: exit 0"
run "$REPORT" "$T/le64/cpu0.out" "$T/le64"
is "$rc" 1 "a directory among files: exit 1"

if [ -w /dev/full ]; then
	run "$REPORT" "$T/le64" >/dev/full
	"$REPORT" "$T/le64" >/dev/full 2>"$T/err"
	is "$?" 3 "stdout full: exit 3"
	like "$(cat "$T/err")" "writing the report" "stdout full: said"
fi

done_testing
