#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 44-top-tmux.t - kmemtrace-top following a trace directory that grows while it runs (the test
# appends a kmemtrace-gen trace's records in chunks, as kmemtraced would): plain tables when
# stdout is not a terminal, adding up to exactly what the generator wrote; the screen under
# tmux (header, columns, -r rows, sort, resize, q); replay agreeing with kmemtrace-report
# --interval; by kernel stack (-cstack), a growing trace with stacks adding up to each stack's
# allocations, bytes and frees as the generator wrote them, and the screen naming stacks in one
# line each; and bad input (no debugfs, no module, corrupt trace, bad arguments) in one line.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
TOP=$BIN/kmemtrace-top
REPORT=$BIN/kmemtrace-report
GEN=$BIN/kmemtrace-gen

require_tools kmemtrace-top kmemtrace-gen kmemtrace-report
scratch_dir top
S=kmt-top-$$
S2=kmt-top-stack-$$
# shellcheck disable=SC2016 # expanded when the test exits
at_exit 'tmux kill-session -t "$S" 2>/dev/null; tmux kill-session -t "$S2" 2>/dev/null'

"$GEN" -o "$T/full" --cpus 2 --events 20000 >"$T/full.sum"
ok $? "kmemtrace-gen wrote the trace"

# grow DIR PART [PARTS [FULL]]: the first PART of PARTS (4) parts of every cpuN.out of the full
# trace (FULL, default $T/full) in DIR.
grow() {
	local f n per from to parts=${3:-4}
	mkdir -p "$1"
	for f in "${4:-$T/full}"/cpu*.out; do
		n=$(( $(stat -c %s "$f") / 64 - 1 ))
		per=$(( (n + parts - 1) / parts ))
		from=$(( 1 + (${2} - 1) * per )); to=$(( 1 + ${2} * per ))
		[ "$2" = 1 ] && from=0
		[ "$to" -gt $((n + 1)) ] && to=$((n + 1))
		[ "$to" -gt "$from" ] && dd if="$f" of="$1/${f##*/}" bs=64 skip="$from" \
			count=$((to - from)) oflag=append conv=notrunc status=none
	done
}

# ---- plain output while the directory grows: every allocation counted once ----------------
grow "$T/g1" 1
# 8 intervals of 0.5 s. Part P comes once table P-1 is out (kmemtrace-top flushes each table),
# so the directory grows while it follows it however slowly it starts; the last part comes
# after table 3, with five intervals (2.5 s) left to read it: over 5x the slowest look and
# grow seen beside two nice -n 19 busy loops (0.1 s + 0.22 s). With set sleeps instead, a slow
# start had all 4 parts there before the first table, and a slow machine could have had the
# last come after the last table.
tables() { [ "$(grep -c '^interval ' "${2:-$T/plain.txt}" 2>/dev/null)" -ge "$1" ]; }
"$TOP" -d "$T/g1" 0.5 8 >"$T/plain.txt" 2>"$T/plain.err" &
pid=$!
for p in 2 3 4; do
	wait_for 600 tables $((p - 1))
	grow "$T/g1" "$p"
done
wait "$pid"
is "$?" 0 "not a terminal, count 8: exit 0"
is "$(grep -c '^interval ' "$T/plain.txt")" 8 "eight tables"
like "$(head -2 "$T/plain.txt")" "loadavg:" "each table after a time and load average line"
is "$(awk '/^interval / { s += $7 } END { print s }' "$T/plain.txt")" \
	"$("$REPORT" --json "$T/full" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["allocs"])')" \
	"following: the intervals' allocations add up to the trace's, none twice, none lost"
! grep -q $'\033' "$T/plain.txt"
ok $? "no escape sequences when stdout is not a terminal"

# ---- replay agrees with kmemtrace-report --interval -----------------------------------------
diff <("$TOP" --replay -d "$T/full" -r 50 0.002 | grep -v 'loadavg:') \
	<("$REPORT" --interval 2ms -l 50 "$T/full" 2>/dev/null) >"$T/diff"
ok $? "--replay: the same tables as kmemtrace-report --interval"

# ---- by kernel stack, following a growing trace with stacks ----------------------------------
# A stack's records (two slots for 6 to 10 frames) may be cut between two parts: what the
# follower reads of them waits for the rest.
"$GEN" -o "$T/sfull" --cpus 2 --events 20000 --callsites 12 --stack-depth 10 --stacks 30 \
	--seed 17 >"$T/sfull.sum"
ok $? "kmemtrace-gen wrote a trace with stacks"
grow "$T/s1" 1 4 "$T/sfull"
"$TOP" -d "$T/s1" -cstack -r 1000 0.5 8 >"$T/stk.txt" 2>"$T/stk.err" &
pid=$!
for p in 2 3 4; do
	wait_for 600 tables $((p - 1)) "$T/stk.txt"
	grow "$T/s1" "$p" 4 "$T/sfull"
done
wait "$pid"
is "$?" 0 "-cstack following: exit 0"
# Each stack's allocations and bytes over every interval ("FRAMES ALLOCS BYTES", the frames raw,
# with no kallsyms), and the generator's per-stack lines grouped by frames. Not the frees: the
# parts are cut by records, not by time, so a free may come in before its allocation on another
# CPU, as when kmemtraced writes a busy CPU's sub-buffer before a quiet one's.
got=$(awk '/^interval / || /^STACK / || /loadavg:/ || /^  [(.]/ || NF == 0 { next }
	   /^    / { fr[n] = fr[n] (fr[n] == "" ? "" : ",") $1; next }
	   { n++; a[n] = $(NF - 4); b[n] = $(NF - 3) }
	   END { for (i = 1; i <= n; i++) { k = fr[i]; A[k] += a[i]; B[k] += b[i] }
		 for (k in A) print k, A[k], B[k] }' "$T/stk.txt" | sort)
want=$(awk '$1 == "stack" { for (i = 3; i < NF; i += 2) v[$i] = $(i + 1)
	    k = v["frames"]; A[k] += v["hits"]; B[k] += v["bytes_alloc"] }
	    END { for (k in A) print k, A[k], B[k] }' "$T/sfull.sum" | sort)
is "$got" "$want" "following by stack: each stack's allocations and bytes over the intervals as generated"
is "$(awk '/^interval / { for (i = 1; i < NF; i++) if ($i == "stack") s += $(i + 1) } END { print s + 0 }' "$T/stk.txt")" \
	"$(summary no_stack_allocs "$T/sfull.sum")" "... and the allocations without a stack, in the headings"

# ---- the screen, under tmux ------------------------------------------------------------------
if ! command -v tmux >/dev/null; then
	echo "# tmux not installed (scripts/install-deps): the screen tests are skipped"
	done_testing
	exit
fi
# The trace grows in 40 parts, one more at each look at the screen: every interval has
# allocations, so every screen drawn has rows, however slowly a loaded machine takes the looks
# (with 4 parts, the rows of an interval showed for 0.3 s only, and a slow look could miss them).
grow "$T/g2" 1 40
tmux new-session -d -s "$S" -x 100 -y 30 \
	"$TOP -d $T/g2 -r 5 -s allocs 0.3; echo \$? >$T/rc; sleep 30"
# Its first screen (the heading) before the trace grows: a start slower than the 40 looks
# (~11 s) would leave nothing to draw rows from. Up to 60 s, the bound of every wait below:
# over 5x the slowest seen beside two nice -n 19 busy loops (0.46 s), and only a failure
# waits that long.
drawn() { tmux capture-pane -p -t "$S" | grep -qF "following $T/g2"; }
wait_for 600 drawn
# A capture of the screen; one whose table has rows is tallied (the rows are checked on those)
# and kept in full.
maxrows=0 minrows=99 sorted=0 full=
sample_screen() {
	local rows c
	screen=$(tmux capture-pane -p -t "$S")
	rows=$(awk '/^CACHE / { on = 1; next } on && NF >= 6' <<<"$screen")
	c=$(grep -c . <<<"$rows")
	[ "$c" -gt 0 ] || return 0
	[ "$c" -gt "$maxrows" ] && maxrows=$c
	[ "$c" -lt "$minrows" ] && minrows=$c
	sort -k2,2nr -c <<<"$rows" 2>/dev/null || sorted=1
	full=$screen
}
for p in 2 3 4; do
	grow "$T/g2" "$p" 40
	sleep 0.4
	sample_screen
done
# A slow start may have drawn nothing yet: wait for a table with rows, the trace still growing.
for p in $(seq 5 40); do
	[ -n "$full" ] && break
	grow "$T/g2" "$p" 40
	sleep 0.3
	sample_screen
done
screen=${full:-$screen}
like "$screen" "loadavg:" "screen: the time and load average"
like "$screen" "following $T/g2" "screen: what it reads"
like "$(tr -s ' ' <<<"$screen")" "CACHE ALLOCS BYTES FREES NET FRAG%" "screen: the columns"
[ "$maxrows" -ge 1 ] && [ "$maxrows" -le 5 ] && [ "$minrows" -ge 1 ]
ok $? "screen: -r 5 shows 1 to 5 rows (got $minrows to $maxrows)"
is "$sorted" 0 "screen: -s allocs sorts by allocations"
is "$(awk 'length > 100' <<<"$screen" | wc -l)" 0 "screen: fits 100 columns"
tmux resize-window -t "$S" -x 60 -y 30 2>/dev/null || tmux resize-pane -t "$S" -x 60
resized() {
	screen=$(tmux capture-pane -p -t "$S")
	[ "$(awk 'length > 60' <<<"$screen" | wc -l)" = 0 ] &&
		tr -s ' ' <<<"$screen" | grep -q "ALLOCS BYTES FREES NET FRAG%"
}
wait_for 600 resized
is "$(awk 'length > 60' <<<"$screen" | wc -l)" 0 "resized to 60 columns: the screen follows"
like "$(tr -s ' ' <<<"$screen")" "ALLOCS BYTES FREES NET FRAG%" "resized: the columns are still there"
tmux send-keys -t "$S" q
wait_for 600 test -s "$T/rc"
is "$(cat "$T/rc" 2>/dev/null)" 0 "q quits, exit 0"

# By stack on the screen: a line a stack, its whole stack left to the printed tables (the trace
# has no kallsyms: a stack is named by its two innermost frames' addresses). A session of its
# own, made before the first one goes: killing a server's last session stops the server, and a
# new session asked for meanwhile found none ("no server running", seen once under load).
tmux new-session -d -s "$S2" -x 100 -y 30 "$TOP --replay -d $T/sfull -cstack -r 5 1; sleep 30"
tmux kill-session -t "$S" 2>/dev/null
stack_screen() {
	screen=$(tmux capture-pane -p -t "$S2")
	grep -q '^0x[0-9a-f]* <- 0x' <<<"$screen"
}
wait_for 600 stack_screen
ok $? "-cstack screen: rows named by call site <- caller" "$screen"
like "$(tr -s ' ' <<<"$screen")" "STACK ALLOCS BYTES FREES NET FRAG%" "-cstack screen: the columns"
is "$(grep -c '^    ' <<<"$screen")" 0 "-cstack screen: no frame lines under the rows"
rows=$(awk '/^STACK / { on = 1; next } on && NF >= 6' <<<"$screen" | wc -l)
[ "$rows" -ge 1 ] && [ "$rows" -le 5 ]
ok $? "-cstack screen: -r 5 rows, one line each (got $rows)"
tmux kill-session -t "$S2" 2>/dev/null

# ---- bad input: one line and its exit code --------------------------------------------------
"$TOP" -D "$T" 1 1 >/dev/null 2>"$T/err"
is "$?" 3 "no debugfs there: exit 3"
is "$(wc -l <"$T/err")" 1 "... one line"
like "$(cat "$T/err")" "debugfs is not mounted at $T" "... saying so"
if [ -d /sys/kernel/debug ] && [ ! -d /sys/kernel/debug/kmemtrace ] &&
   [ "$(stat -f -c %T /sys/kernel/debug 2>/dev/null)" = debugfs ]; then
	"$TOP" 1 1 >/dev/null 2>"$T/err"
	is "$?" 3 "no module: exit 3"
	like "$(cat "$T/err")" "kmemtrace.ko is not loaded" "... saying so"
fi
mkdir "$T/bad"
cp "$T/full/cpu0.out" "$T/bad/"
dd if=/dev/zero of="$T/bad/cpu0.out" bs=64 seek=5 count=1 conv=notrunc status=none
"$TOP" --replay -d "$T/bad" 1 >/dev/null 2>"$T/err"
is "$?" 2 "corrupt trace (replay): exit 2"
is "$(wc -l <"$T/err")" 1 "... one line"
"$TOP" -d "$T/bad" 0.1 2 >/dev/null 2>"$T/err"
is "$?" 2 "corrupt trace (follow): exit 2"
like "$(cat "$T/err")" "cpu0.out: offset 320" "... at its offset"
"$TOP" -r 0 >/dev/null 2>"$T/err"
is "$?" 1 "-r 0: exit 1"
"$TOP" -s pingpong >/dev/null 2>"$T/err"
is "$?" 1 "unknown sort key: exit 1"
"$TOP" 1 0 >/dev/null 2>"$T/err"
is "$?" 1 "COUNT 0: exit 1"

done_testing
