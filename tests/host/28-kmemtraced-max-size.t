#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 28-kmemtraced-max-size.t - kmemtraced --max-size against a fake debugfs
# (KMEMTRACED_TEST_FAKE_DEBUGFS=1): bad sizes and combinations refused; a trace bigger than
# --max-size written as segments, the first switched away from and folded into ckpt.000002
# (the fake's records are all stamped long before the cut), with the metadata's max_size,
# segment_size, segments and segments_dropped lines, every file mode 0600 and passing
# kmemtrace_check --strict, and the report of the rotated directory equal to the report of the
# records the fake module held (window_compare.py); --keep-dropped moving the dropped segment
# aside; an earlier rotated trace refused without -f and replaced with it.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
D=$BIN/kmemtraced
REPORT=$BIN/kmemtrace-report
CHECK=$BIN/kmemtrace_check
GEN=$BIN/kmemtrace-gen

require_tools kmemtraced kmemtrace-report kmemtrace_check kmemtrace-gen
scratch_dir maxsize
HERE=$(cd "$(dirname "$0")" && pwd)

# --- Options ---------------------------------------------------------------------------------
for bad in 10k 1X -5 "" 64kk 99999999999999999999G; do
	run "$D" -o "$T/u" --max-size "$bad"
	is "$rc" 1 "--max-size '$bad': exit 1"
done
like "$err" "--max-size" "a bad --max-size names the option"
run "$D" -o "$T/u" --segment-size 64k
is "$rc" 1 "--segment-size without --max-size: exit 1"
run "$D" -o "$T/u" --keep-dropped "$T/k"
is "$rc" 1 "--keep-dropped without --max-size: exit 1"
run "$D" -o "$T/u" --max-size 1M --segment-size 768k
is "$rc" 1 "--segment-size above half of --max-size: exit 1"
like "$err" "at most half" "says the segment's bound"

# --- A rotated trace from a fake module --------------------------------------------------------
export KMEMTRACED_TEST_FAKE_DEBUGFS=1
K=$T/fake/kmemtrace
fake_module "$K" 1.2
"$GEN" -o "$T/gen" --cpus 2 --events 4000 --seed 11 --stack-depth 6 >/dev/null
for c in 0 1; do
	tail -c +65 "$T/gen/cpu$c.out" >"$K/cpu$c"
done
printf '# cpu emitted written dropped\n0 1 1 0\n1 1 1 0\n' >"$K/stats"
rec_bytes=$(($(stat -c %s "$K/cpu0") + $(stat -c %s "$K/cpu1")))

O=$T/rot
run "$D" -q -r "$T/fake" -o "$O" -t 2 --max-size 64k --segment-size 16k --keep-dropped "$T/kept"
is "$rc" 0 "kmemtraced --max-size 64k: exit 0" "$err"
ok_cmd "the first segment was dropped into ckpt.000002" test -d "$O/ckpt.000002"
ok_cmd "and is gone from the trace" test ! -e "$O/seg.000001"
ok_cmd "the kept segment is there" test -d "$O/seg.000002"
ok_cmd "--keep-dropped holds the dropped segment" test -f "$T/kept/seg.000001/cpu1.out"
is "$(grep -E '^(max_size|segment_size|segments) ' "$O/kmemtrace.meta" | tr '\n' ' ')" \
	"max_size 65536 segment_size 16384 segments 2 2 " "the metadata's --max-size lines"
read -r _ ndrop bytes cut < <(grep '^segments_dropped ' "$O/kmemtrace.meta")
is "$ndrop $bytes" "1 $rec_bytes" "segments_dropped: one segment, every record the module held"
ok_cmd "segments_dropped's cut lies after the trace's start" \
	test "$cut" -gt "$(grep '^start_mono_ns ' "$O/kmemtrace.meta" | cut -d' ' -f2)"
is "$(find "$O" -type f ! -perm 0600 | wc -l)" 0 "every file is mode 0600"
bad=0
for f in "$O"/ckpt.000002/cpu*.out "$O"/seg.000002/cpu*.out; do
	"$CHECK" --strict -q "$f" >"$T/check.err" 2>&1 || { bad=1; cat "$T/check.err"; }
done
is "$bad" 0 "every checkpoint and segment file passes kmemtrace_check --strict"
# Without the metadata, as the generator's trace: this host's kallsyms would name the fake
# call sites, and the end time kmemtraced wrote down would age the objects.
mkdir -p "$T/bare" && cp -r "$O"/seg.* "$O"/ckpt.* "$T/bare/"
tap_checks python3 "$HERE/window_compare.py" "$REPORT" "$T/bare" "$T/gen" "fake module"

# --- An earlier rotated trace -----------------------------------------------------------------
run "$D" -q -r "$T/fake" -o "$O" -t 1
is "$rc" 1 "a rotated trace in DIR, without -f: exit 1"
like "$err" "already holds a trace" "says DIR holds a trace"
run "$D" -q -f -r "$T/fake" -o "$O" -t 1
is "$rc" 0 "with -f: exit 0" "$err"
ok_cmd "with -f the segments and checkpoint are gone" \
	sh -c "! ls -d '$O'/seg.* '$O'/ckpt.* 2>/dev/null | grep -q ."
ok_cmd "and the new trace is plain cpuN.out files" test -f "$O/cpu0.out"

# --- Drain threads that cannot run on their CPUs ------------------------------------------------
# nobind.so makes pthread_setaffinity_np() fail with EPERM (ASan would refuse a library loaded
# before its own runtime without verify_asan_link_order=0). Without --max-size a thread reads
# where it runs and its CPU's records once tracing stops: a warning. A segment's cut holds only
# for a thread on its CPU, so with --max-size the run fails, saying why.
NOBIND=$BIN/tests/nobind.so
if [ -f "$NOBIND" ]; then
	nobind() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		LD_PRELOAD=$NOBIND run "$@"; }
	nobind "$D" -r "$T/fake" -o "$T/nobind1" -t 1
	is "$rc" 0 "threads that cannot bind, without --max-size: exit 0" "$err"
	like "$err" "cpu1: cannot run on CPU 1 (Operation not permitted): its buffer is read only once tracing stops" \
		"without --max-size: a warning that names the CPU and the error"
	is "$(cat "$T"/nobind1/cpu*.out | wc -c)" "$((rec_bytes + 2 * 64))" \
		"without --max-size: every record the fake module held, after the two headers"
	nobind "$D" -r "$T/fake" -o "$T/nobind2" -t 1 --max-size 64k --segment-size 16k
	is "$rc" 3 "threads that cannot bind, with --max-size: exit 3"
	like "$err" "cpu0: cannot run the drain thread on CPU 0: Operation not permitted" \
		"with --max-size: the error names the CPU, the thread and the cause"
	ok_cmd "with --max-size: not said to be a read or write failure" \
		test "${err/read failed/}" = "$err" -a "${err/write failed/}" = "$err"
	like "$err" "every file in $T/nobind2 ends on a whole record" "and says the files are whole"
else
	for i in 1 2 3 4 5 6 7; do skip "$NOBIND not built"; done
fi

done_testing
