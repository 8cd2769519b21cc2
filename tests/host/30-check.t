#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 30-check.t - kmemtrace_check's command line: verdicts, messages and exit codes on good,
# corrupt, truncated, misnamed, empty and non-trace files (traces from kmemtrace-gen).
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
CHECK=$BIN/kmemtrace_check
GEN=$BIN/kmemtrace-gen

require_built kmemtrace_check kmemtrace-gen
scratch_dir check

# run CMD...: sets out (stdout+stderr) and rc.
run_merged() {	# run_merged CMD...: out = stdout and stderr together, rc
	out=$("$@" 2>&1)
	rc=$?
}

# u32le FILE OFFSET: the little-endian u32 at OFFSET.
u32le() {
	od -An -t u4 -j "$2" -N 4 --endian=little "$1" | tr -d ' '
}

# patch FILE OFFSET HEXBYTES: overwrite bytes in place.
patch() {
	# shellcheck disable=SC2059 # the format is the escaped bytes themselves
	printf "$(printf '%s' "$3" | sed 's/\(..\)/\\x\1/g')" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# --- a good trace: one OK line per file, counts that add up to what was written
"$GEN" -o "$T/good" --cpus 3 --events 20000 --lost-every 3000 --seed 7 --pages >"$T/good.sum"
ok $? "kmemtrace-gen wrote a trace"
run_merged "$CHECK" "$T"/good/cpu*.out
is "$rc" 0 "good trace: exit 0"
is "$(printf '%s\n' "$out" | grep -c ': OK: ')" 3 "good trace: three OK verdicts"
recs=$(printf '%s\n' "$out" | sed -n 's/.*: OK: \([0-9]*\) records.*/\1/p' | awk '{ s += $1 } END { print s }')
is "$recs" "$(summary records "$T/good.sum")" "good trace: records add up to what was written"
evs=$(printf '%s\n' "$out" | sed -n 's/.*records (\([0-9]*\) events.*/\1/p' | awk '{ s += $1 } END { print s }')
is "$evs" "$(summary events "$T/good.sum")" "good trace: events add up"
lost=$(printf '%s\n' "$out" | sed -n 's/.*covering \([0-9]*\) records.*/\1/p' | awk '{ s += $1 } END { print s }')
is "$lost" "$(summary lost "$T/good.sum")" "good trace: lost records add up"
like "$out" "$T/good/cpu0.out: OK: " "good trace: verdict names the file"

run_merged "$CHECK" "$T/good"
is "$rc" 0 "directory argument: exit 0"
is "$(printf '%s\n' "$out" | grep -c ': OK: ')" 3 "directory argument: its three files"

run_merged "$CHECK" -v "$T/good/cpu1.out"
# The generator writes this build's minor: the one the header holds (bytes 6-7).
minor=$(od -An -t u2 -j 6 -N 2 --endian=little "$T/good/cpu1.out" | tr -d ' ')
like "$out" "header: format 1.$minor, CPU 1, little-endian, 64-bit, page size 4096" "-v: header"
like "$out" "kmalloc" "-v: per-type counts"
run_merged "$CHECK" -q "$T/good/cpu1.out"
is "$out" "" "-q: nothing for a good file"

# --- big-endian 32-bit origin, seq wrap
"$GEN" -o "$T/be" --cpus 2 --events 5000 --big-endian --word-bits 32 --first-seq 4294966000 \
	--lost-every 700 >"$T/be.sum"
run_merged "$CHECK" "$T/be"
is "$rc" 0 "big-endian 32-bit trace with seq wrap: exit 0"
recs=$(printf '%s\n' "$out" | sed -n 's/.*: OK: \([0-9]*\) records.*/\1/p' | awk '{ s += $1 } END { print s }')
is "$recs" "$(summary records "$T/be.sum")" "big-endian trace: records add up"
run_merged "$CHECK" -v "$T/be/cpu0.out"
like "$out" "big-endian, 32-bit" "-v: big-endian 32-bit header"

# --- corruption at a known slot
cp "$T/good/cpu0.out" "$T/zero.out"
off=$((64 * 101))	# slot 100
dd if=/dev/zero of="$T/zero.out" bs=64 seek=101 count=1 conv=notrunc status=none
run_merged "$CHECK" "$T/zero.out"
is "$rc" 2 "zeroed slot: exit 2"
is "$out" "$T/zero.out: FAIL: offset $off: zeroed record slot (type 0)" "zeroed slot: message"

mkdir -p "$T/seq"
cp "$T/good/cpu0.out" "$T/seq/cpu0.out"
off=$((64 * 201))
type=$(od -An -t u1 -j "$off" -N 1 "$T/seq/cpu0.out" | tr -d ' ')
prev_type=$(od -An -t u1 -j $((off - 64)) -N 1 "$T/seq/cpu0.out" | tr -d ' ')
want=$(( $(u32le "$T/seq/cpu0.out" $((off + 4))) ))
patch "$T/seq/cpu0.out" $((off + 4)) ffffff7f
run_merged "$CHECK" "$T/seq/cpu0.out"
is "$rc" 2 "forged seq: exit 2"
if [ "$type" != 8 ] && [ "$prev_type" != 8 ]; then
	is "$out" "$T/seq/cpu0.out: FAIL: offset $off: seq 2147483647 where $want expected and no lost-records marker" \
		"forged seq: message with offset and expected seq"
else
	like "$out" "FAIL: offset $off: " "forged seq (next to a lost marker): offset"
fi

cp "$T/good/cpu0.out" "$T/cpu.out"
patch "$T/cpu.out" $((64 * 51 + 2)) 0900
run_merged "$CHECK" "$T/cpu.out"
is "$rc" 2 "record of another CPU: exit 2"
like "$out" "$T/cpu.out: FAIL: offset $((64 * 51)): " "record of another CPU: offset"
like "$out" "record of CPU 9 in a file of CPU 0" "record of another CPU: message"

# --- a truncated tail (a killed kmemtraced): accepted and reported, refused with --strict
cp "$T/good/cpu2.out" "$T/trunc.out"
size=$(stat -c %s "$T/trunc.out")
truncate -s $((size - 10)) "$T/trunc.out"
run_merged "$CHECK" "$T/trunc.out"
is "$rc" 0 "truncated tail: accepted by default"
like "$out" "truncated: 54-byte partial record at offset $((size - 64)) ignored" \
	"truncated tail: reported with its size and offset"
whole=$(( (size - 64) / 64 - 1 ))
like "$out" ": OK: $whole records" "truncated tail: every whole record counted"
run_merged "$CHECK" --strict "$T/trunc.out"
is "$rc" 2 "truncated tail with --strict: exit 2"
is "$out" "$T/trunc.out: FAIL: offset $((size - 64)): truncated record: 54 of 64 bytes at the end of the file" \
	"truncated tail with --strict: message"

# --- wrong name, empty, not a trace, header only, missing
mkdir -p "$T/name"
cp "$T/good/cpu0.out" "$T/name/cpu7.out"
run_merged "$CHECK" "$T/name/cpu7.out"
is "$rc" 2 "wrong name: exit 2"
is "$out" "$T/name/cpu7.out: FAIL: offset 12: file name says CPU 7, header says CPU 0" \
	"wrong name: message"

: >"$T/empty.out"
run_merged "$CHECK" "$T/empty.out"
is "$rc" 2 "empty file: exit 2"
is "$out" "$T/empty.out: FAIL: offset 0: empty file, not a kmemtrace file" "empty file: message"

head -c 64 "$T/good/cpu0.out" >"$T/hdr.out"
run_merged "$CHECK" "$T/hdr.out"
is "$rc" 0 "header only: exit 0"
like "$out" "OK: 0 records" "header only: zero records"

head -c 40 "$T/good/cpu0.out" >"$T/short.out"
run_merged "$CHECK" "$T/short.out"
is "$rc" 2 "short header: exit 2"
like "$out" "offset 0: file too short for a kmemtrace header (40 bytes, need 64)" \
	"short header: message"

printf 'root:x:0:0:root:/root:/bin/bash\n%.0s' 1 2 3 >"$T/passwd"
run_merged "$CHECK" "$T/passwd"
is "$rc" 2 "not a trace: exit 2"
like "$out" "$T/passwd: FAIL: offset 0: not a kmemtrace file (magic bytes 72 6f 6f 74" \
	"not a trace: message"

cp "$T/good/cpu0.out" "$T/major.out"
patch "$T/major.out" 4 02000000
run_merged "$CHECK" "$T/major.out"
is "$rc" 2 "ABI 2.0: exit 2"
like "$out" "offset 4: ABI version 2.0 not supported (this reader: 1.x)" "ABI 2.0: message"

run_merged "$CHECK" "$T/missing.out"
is "$rc" 3 "missing file: exit 3"
is "$out" "$T/missing.out: FAIL: cannot open: No such file or directory" "missing file: message"

mkdir -p "$T/nocpu"
run_merged "$CHECK" "$T/nocpu"
is "$rc" 2 "directory without cpu*.out: exit 2"
like "$out" "$T/nocpu: FAIL: no cpu*.out files" "directory without cpu*.out: message"

# --- several files: every verdict printed, the worst exit code wins
run_merged "$CHECK" "$T/good/cpu0.out" "$T/zero.out" "$T/good/cpu1.out"
is "$rc" 2 "good, bad, good: exit 2"
is "$(printf '%s\n' "$out" | wc -l)" 3 "good, bad, good: three verdicts"
run_merged "$CHECK" "$T/zero.out" "$T/missing.out"
is "$rc" 3 "bad and unreadable: exit 3"

# --- usage
run_merged "$CHECK"
is "$rc" 1 "no arguments: exit 1"
like "$out" "Usage:" "no arguments: usage"
run_merged "$CHECK" --no-such-option "$T/hdr.out"
is "$rc" 1 "unknown option: exit 1"
run_merged "$CHECK" --help
is "$rc" 0 "--help: exit 0"
like "$out" "EXAMPLES:" "--help: examples"
like "$out" "Exit status:" "--help: exit codes"
run_merged "$CHECK" --version
like "$out" "kmemtrace_check 1." "--version"

done_testing
