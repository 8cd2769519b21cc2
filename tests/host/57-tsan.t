#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 57-tsan.t - the merge read ahead on a thread (report/lib/kmt_ahead.c: a ring between a thread
# and one or more readers, atomic counters, a spin and then a sleep on each side) and the analysis
# divided over threads (kmemtrace-report -j 4) under ThreadSanitizer:
# test_merge.t, built by make check with SAN=thread, reads merges ahead whole, in batches and
# stopped early, and compares every record with the merge read on one thread; a data race, a
# lock misused or a leak fails it (exit status 66), as a wrong record does.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
TSAN_TEST=${KMT_TSAN_BIN:-build/tsan}/tests/test_merge.t
if [ ! -x "$TSAN_TEST" ]; then
	echo "1..0 # SKIP $TSAN_TEST not built (make SAN=thread $TSAN_TEST)"
	exit 0
fi
scratch_dir tsan

# ThreadSanitizer's runtime maps its shadow at fixed addresses, which a kernel that randomizes
# mmap over more bits can collide with: run it with the address space not randomized.
norandom=()
if setarch "$(uname -m)" -R true 2>/dev/null; then
	norandom=(setarch "$(uname -m)" -R)
fi
TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}" "${norandom[@]}" "$TSAN_TEST" \
	>"$T/out" 2>"$T/err"
rc=$?
is "$rc" 0 "test_merge.t under ThreadSanitizer: exit 0"
ok_cmd "  it reported no race" sh -c "! grep -q 'WARNING: ThreadSanitizer' '$T/err'"
sed -n '/ThreadSanitizer/,+12s/^/# /p' "$T/err" | head -40
# Its own tests, counted here: each has passed.
passed=$(grep -c '^ok ' "$T/out")
notok=$(grep -c '^not ok ' "$T/out")
ok_cmd "  its $passed tests of the read ahead and the merge passed" \
	test "$passed" -gt 0 -a "$notok" -eq 0
grep '^not ok ' "$T/out" | sed 's/^/# /' | head -20

# The analysis divided over threads (report/core/rpt_shards.c: -j 4, a reading thread and three
# shards reading one ring), on a trace with stacks, pages and large kmallocs traced twice: no
# race, and the report one thread gives.
TSAN_REPORT=${KMT_TSAN_BIN:-build/tsan}/kmemtrace-report
if [ -x "$TSAN_REPORT" ] && [ -x "$BIN/kmemtrace-gen" ] && [ -x "$BIN/kmemtrace-report" ]; then
	"$BIN/kmemtrace-gen" -o "$T/trace" --cpus 4 --events 20000 --stack-depth 8 --stacks 40 \
		--stack-frees --pages --nodes 2 --large-every 50 --twice --seed 57 >/dev/null
	for view in "" --lifetimes --alloc; do
		"$BIN/kmemtrace-report" --no-progress -j 1 ${view:+"$view"} "$T/trace" >"$T/want" 2>/dev/null
		TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}" "${norandom[@]}" \
			"$TSAN_REPORT" --no-progress -j 4 ${view:+"$view"} "$T/trace" >"$T/got" 2>"$T/err"
		is "$?" 0 "kmemtrace-report -j 4 ${view:-(default view)} under ThreadSanitizer: exit 0"
		ok_cmd "  it reported no race" sh -c "! grep -q 'WARNING: ThreadSanitizer' '$T/err'"
		sed -n '/ThreadSanitizer/,+12s/^/# /p' "$T/err" | head -40
		ok_cmd "  the report -j 1 gives" cmp -s "$T/want" "$T/got"
	done
else
	for _ in 1 2 3 4 5 6 7 8 9; do skip "$TSAN_REPORT or $BIN's tools not built"; done
fi
done_testing
