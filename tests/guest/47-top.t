#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 47-top.t - kmemtrace-top in a guest, in batch mode (stdout a file, INTERVAL 2 COUNT 3): reading
# the relay buffers itself (no kmemtraced), it must show the oracle's run, started right after
# interval 0 closed, in interval 1 and only there, with exactly the oracle's allocations and
# frees of its cache (from the oracle's "expected" file); while kmemtraced runs it must refuse
# the buffers in one line (exit 3). On the host, kmemtrace-top --replay and kmemtrace-report
# --interval must agree on the trace kmemtraced wrote meanwhile.
KMT_TEST_TIMEOUT=240
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

[ -f "$KMT_TOP/tests/kmod/kmemtrace_oracle.c" ] || skip_all "the oracle module is not written yet"
TOPB=$KMT_TOP/build/kmemtrace-top
REPORT=$KMT_TOP/build/kmemtrace-report
[ -x "$TOPB" ] && [ -x "$REPORT" ] || skip_all "build/kmemtrace-top not built (make tools)"

mkdir -p "$KMT_TEST_DIR"
guest=$KMT_TEST_DIR/top.sh
cat >"$guest" <<'EOS'
#!/bin/sh
# In the guest, without kmemtraced: kmemtrace-top alone, the oracle run in its interval 1.
OR=/sys/kernel/debug/kmemtrace_oracle
kmemtrace-top -b 2 3 >$KMT_OUT/top.txt 2>$KMT_OUT/top.err &
pid=$!
i=0
while ! grep -q '^interval 0' $KMT_OUT/top.txt 2>/dev/null && [ $i -lt 300 ]; do
	sleep 0.05; i=$((i + 1))
done
echo 1 > $OR/run || exit 1
cat $OR/expected > $KMT_OUT/oracle.expected
wait $pid
echo $? > $KMT_OUT/top.rc
# Under kmemtraced: the buffers are its own.
kmemtraced -o $KMT_OUT/trace -- sh -c "kmemtrace-top -b 1 1 >/dev/null 2>$KMT_OUT/locked.err;
	echo \$? > $KMT_OUT/locked.rc; echo 1 > $OR/run" >$KMT_OUT/kmemtraced.log 2>&1
# Live mode over more records a refresh than the buffers hold (4096 a CPU): kmemtrace-top must
# drain them between refreshes, losing nothing, at a paced load: a buffer lasts ~250 ms of it, ten drains.
rmmod kmemtrace && insmod $KMT_MODDIR/kmemtrace.ko start_disabled=1 subbufs=16 subbuf_size=16384 || exit 1
kmemtrace-top -b 3 2 >$KMT_OUT/busy.txt 2>$KMT_OUT/busy.err &
pid=$!
i=0
while [ $i -lt 250 ]; do
	cat /proc/meminfo /proc/self/status >/dev/null; ls /sys/kernel/slab >/dev/null; usleep 10000
	i=$((i + 1))
done
wait $pid
echo $? > $KMT_OUT/busy.rc
cat $KMT_DEBUGFS/total_overruns > $KMT_OUT/busy.overruns
EOS
chmod +x "$guest"

# The guest's own build (another arch's: static, made by kmemtrace-vm before it checks -a files).
vm_ok top --no-daemon -c 2 -T 150 -m kmemtrace_oracle -a "$(guest_tool kmemtrace-top)" -a "$guest" -- top.sh
o=$VM_OUT
is "$(command_status)" 0 "the script ran in the guest"
dmesg_clean
[ -s "$o/oracle.expected" ] || bail "no oracle.expected from the guest"
is "$(cat "$o/top.rc")" 0 "kmemtrace-top -b 2 3: exit 0" || note_file "$o/top.err"
is "$(grep -c '^interval ' "$o/top.txt")" 3 "three intervals"

done_of() { awk -v f="$1" '$1 == "done" && $2 == f { print $3 }' "$o/oracle.expected"; }
cache=$(awk '$1 == "cache_name" { print $2 }' "$o/oracle.expected")
want_allocs=$(( $(done_of oracle_cache_alloc) + $(done_of oracle_mismatch_alloc) ))
want_frees=$(( $(done_of oracle_cache_free) + $(done_of oracle_mismatch_kfree) ))
# "INTERVAL ALLOCS FREES" of the oracle's cache in every table.
got=$(awk -v c="$cache" '/^interval / { k = $2 } $1 == c { print k, $2, $4 }' "$o/top.txt")
is "$got" "1 $want_allocs $want_frees" \
	"$cache: in interval 1 only, $want_allocs allocations and $want_frees frees" ||
	note_file "$o/top.txt"

is "$(cat "$o/locked.rc")" 3 "under kmemtraced: exit 3"
like "$(cat "$o/locked.err")" "kmemtraced is draining" "... saying why and what to do instead"
is "$(wc -l <"$o/locked.err")" 1 "... in one line"

is "$(cat "$o/busy.rc")" 0 "small buffers, 3 s refresh under load: exit 0" || note_file "$o/busy.err"
busiest=$(awk '/^interval / { n = 0; for (i = 1; i < NF; i++) if ($i == "allocs" || $i == "frees") n += $(i + 1); print n }' \
	"$o/busy.txt" | sort -n | tail -1)
ok "an interval held more events than both CPUs' buffers together (${busiest:-none} > 2 x 4096)" \
	test "${busiest:-0}" -gt $((4096 * 2))
is "$(grep -c 'LOST' "$o/busy.txt")" 0 "... and kmemtrace-top reported no lost records" ||
	note_file "$o/busy.txt"
is "$(cat "$o/busy.overruns")" 0 "... nor did the module (total_overruns)"

"$TOPB" --replay -d "$o/trace" -r 100 0.5 2>/dev/null | grep -v 'loadavg:' >"$o/replay.txt"
"$REPORT" --interval 500ms -l 100 "$o/trace" 2>/dev/null >"$o/interval.txt"
diff "$o/replay.txt" "$o/interval.txt" >"$o/replay.diff"
is "$(wc -l <"$o/replay.diff")" 0 \
	"kmemtraced's trace: kmemtrace-top --replay agrees with kmemtrace-report --interval" ||
	note_file "$o/replay.diff"
like "$(cat "$o/interval.txt")" "$cache" "... and the oracle's cache is in it"
is "$("$REPORT" --interval 500ms -l 0 --csv "$o/trace" 2>/dev/null |
	awk -F, -v c="$cache" '$4 == c { a += $5; f += $8 } END { print a + 0, f + 0 }')" \
	"$want_allocs $want_frees" "--interval on that trace: the oracle's cache, exactly"

done_testing
