#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 20-kmemtraced.t - kmemtraced against the real module in one guest boot: a -- COMMAND trace
# checked against the module's stats, kill -9 mid-run, a full tmpfs, overruns with tiny
# buffers, a CPU coming online during a trace, a second signal while draining, lockdown.
# Files are verified here on the host with kmemtrace_check; every expected number comes from
# the guest's own stats and meta.
# Bounds: the guest run took 51 s beside two nice -n 19 busy loops (29 s on a quieter host; up to
# 64.3 s on 7.3 in the per-kernel proof of 2026-11-28, other work beside), the whole test 111 s
# with a first build of the module; -T 330 and 600 s are over 5x those.
KMT_TEST_TIMEOUT=600
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

[ -f "$KMT_TOP/kmod/Kbuild" ] || skip_all "kmod/ not written yet"
[ -f "$KMT_TOP/tests/kmod/Kbuild" ] || skip_all "the oracle module (tests/kmod) not written yet"

mkdir -p "$KMT_TEST_DIR"
script=$KMT_TEST_DIR/daemon-scenarios.sh
cat >"$script" <<'EOS'
#!/bin/sh
# In the guest: each scenario leaves its files, exit status and kmemtraced's output in $KMT_OUT/sN.
D=$KMT_DEBUGFS
OR=/sys/kernel/debug/kmemtrace_oracle
O=$KMT_OUT
# dropped, wait_dropped: the module's dropped records, and a wait for more of them.
. "$KMT_FILES/guest-lib.sh"

# wait_for FILE: up to 60 s for FILE to appear (a kmemtraced start under TCG on a loaded host
# takes seconds; the waits below are for what the host then checks, never a set time).
wait_for() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
# saved DIR: up to 60 s for a record in one of DIR's cpuN.out files (after its 64-byte header).
saved() {
	i=0
	while [ $i -lt 600 ]; do
		for f in "$1"/cpu*.out; do
			[ -e "$f" ] && [ "$(stat -c %s "$f")" -gt 64 ] && return 0
		done
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# 1. -- COMMAND after records were left buffered: they are discarded, the command's status
# comes back, the files match the module's stats.
mkdir -p $O/s1
echo 1 > $D/enabled
find /proc/sys > /dev/null 2>&1
echo 0 > $D/enabled
cat $D/stats > $O/s1/stats.before
kmemtraced -v -o $O/s1/t -- sh -c "echo 1 > $OR/run; find /sys/kernel/slab > /dev/null 2>&1; exit 3" \
	> $O/s1/out 2> $O/s1/err
echo $? > $O/s1/status
cat $D/stats > $O/s1/stats.after
cat $D/enabled > $O/s1/enabled

# 2. kill -9 in the middle of a run under load; then a new run while tracing is still on.
mkdir -p $O/s2
kmemtraced -o $O/s2/t > $O/s2/err 2>&1 &
pid=$!
wait_for $O/s2/t/kmemtrace.meta
# The oracle's cache is described on CPU 0 while the buffers are empty (so it is written, not
# dropped); the load that follows fills sub-buffers, which hands it to this first reader.
taskset 1 sh -c "echo 1 > $OR/run"
echo 64 > $OR/load
# Killed once it saved records (the host checks it did), not after a set second.
saved $O/s2/t
kill -9 $pid
wait $pid
echo $? > $O/s2/status
echo 0 > $OR/load
cat $D/enabled > $O/s2/enabled
# Tracing stays on (no -- COMMAND, so no disable/enable): the cache is used again while the
# new reader runs, and only the new reader's open can make the module describe it again.
# Stopped by SIGINT once the run is done (its final drain reads every record): with -t 2, a
# loaded host could take the two seconds between the meta and the run.
kmemtraced -o $O/s2/t2 > $O/s2/err2 2>&1 &
pid=$!
wait_for $O/s2/t2/kmemtrace.meta
taskset 1 sh -c "echo 1 > $OR/run"
kill -INT $pid
wait $pid
echo $? > $O/s2/status2

# 3. A tmpfs with room for kallsyms and the metadata plus 256 KiB: the disk fills up.
mkdir -p $O/s3 /mnt/tiny
ks=$(wc -c < /proc/kallsyms)
mount -t tmpfs -o size=$((ks / 1024 + 16 + 256))k tmpfs /mnt/tiny
echo 64 > $OR/load
kmemtraced -o /mnt/tiny/t -t 40 > $O/s3/err 2>&1
echo $? > $O/s3/status
echo 0 > $OR/load
cat $D/enabled > $O/s3/enabled
rm -f /mnt/tiny/t/kallsyms
cp -a /mnt/tiny/t $O/s3/t
umount /mnt/tiny

# 4. Tiny buffers: records are dropped; the summary must say so and name subbufs. The load
# runs until the module has dropped some, however slow the host (it was 2 s).
mkdir -p $O/s4
rmmod kmemtrace
insmod $KMT_MODDIR/kmemtrace.ko subbufs=2 subbuf_size=4096 start_disabled=1
cat /sys/module/kmemtrace/parameters/subbufs > $O/s4/subbufs
cat $D/stats > $O/s4/stats.before
kmemtraced -o $O/s4/t -- sh -c ". $KMT_FILES/guest-lib.sh; n=\$(dropped); echo 64 > $OR/load;
	wait_dropped \$n; echo 0 > $OR/load" \
	> $O/s4/out 2> $O/s4/err
echo $? > $O/s4/status
cat $D/stats > $O/s4/stats.after

# 5. CPU 1 offline when the module loads, online during the trace: relay gives it a new
# buffer file and kmemtraced must pick it up (it looks every 0.5 s). The command waits for
# kmemtraced's cpu1.out rather than a set 2 s, then runs the oracle on CPU 1 so that cpu1.out
# has records whatever else ran there.
mkdir -p $O/s5
rmmod kmemtrace
echo 0 > /sys/devices/system/cpu/cpu1/online
insmod $KMT_MODDIR/kmemtrace.ko start_disabled=1
ls $D > $O/s5/files.before
cat $D/stats > $O/s5/stats.before
kmemtraced -v -o $O/s5/t -- sh -c \
	"sleep 1; echo 1 > /sys/devices/system/cpu/cpu1/online; i=0;
	while [ ! -e $O/s5/t/cpu1.out ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done;
	taskset 2 sh -c 'echo 1 > $OR/run'" \
	> $O/s5/out 2> $O/s5/err
echo $? > $O/s5/status
cat $D/stats > $O/s5/stats.after

# 6. SIGINT, then SIGTERM while it drains a loaded system: the files still end whole.
mkdir -p $O/s6
echo 64 > $OR/load
kmemtraced -o $O/s6/t > $O/s6/err 2>&1 &
pid=$!
wait_for $O/s6/t/kmemtrace.meta
sleep 1
# Stopped, both signals are pending together: sent one after the other, the first could
# finish a quick drain before the second arrives. They reach the wait together, or the
# second finds the first being handled; both count as while draining.
kill -STOP $pid
kill -INT $pid
kill -TERM $pid
kill -CONT $pid
wait $pid
echo $? > $O/s6/status
echo 0 > $OR/load

# 7. Kernel lockdown (it can be raised at run time, never lowered: this goes last).
mkdir -p $O/s7
mount -t securityfs securityfs /sys/kernel/security 2> /dev/null
if echo integrity > /sys/kernel/security/lockdown; then
	kmemtraced -o $O/s7/t -t 1 > $O/s7/out 2> $O/s7/err
	echo $? > $O/s7/status
	ls -A $O/s7/t > $O/s7/files 2>&1
fi
exit 0
EOS
chmod +x "$script"

# The traces grow with the speed of the host (the load runs for set times), and the guest keeps
# them in RAM until they go to the results disk: room for several times what a fast host makes.
# The sanitizer build of the tools where there is one (amd64; another arch's are static).
san=()
[ "$(guest_arch)" = amd64 ] && san=(--san)
vm_ok scenarios -T 330 -c 2 "${san[@]}" --mem 2048 --disk 1024 -p start_disabled=1 -m kmemtrace_oracle --no-daemon \
	-a "$script" -a "$KMT_TOP/tests/guest/guest-lib.sh" -- daemon-scenarios.sh || true
CHECK=$KMT_TOP/build/kmemtrace_check
R=$VM_OUT

# counts FILE: "RECORDS LOST_MARKERS LOST_COVERED FIRST_TS LAST_TS" from kmemtrace_check -v
# (timestamps empty when the file has no record), or nothing when the check fails.
counts() {
	"$CHECK" -v "$1" 2>/dev/null | awk '
		/: OK: / { for (i = 1; i <= NF; i++) {
				if ($i == "records") r = $(i - 1)
				if ($i == "lost" && $(i + 1) == "markers") { m = $(i - 1); c = $(i + 3) } }
			ok = 1 }
		/^  seq / { split($4, t, /\.\./); f = t[1]; l = t[2] }
		END { if (ok) print r, m, c, f, l }'
}
meta_of() {
	sed -n "s/^$2 //p" "$1"
}
# summary_of ERRFILE CPU: "RECORDS BYTES DROPPED" of a CPU's line of the summary.
summary_of() {
	awk -v c="$2" '$1 == c && NF == 4 && $2 ~ /^[0-9]+$/ { print $2, $3, $4 }' "$1"
}
# has FILE TEXT DESC: FILE contains the fixed string TEXT.
has() {
	if grep -qF -- "$2" "$1" 2>/dev/null; then
		_tap_result 1 "$3"
	else
		_tap_result 0 "$3"
		diag "  '$2' not found in $1"
		return 1
	fi
}
cpus_of() {
	local f
	for f in "$1"/cpu*.out; do
		[ -e "$f" ] || continue
		f=${f##*/cpu}
		echo "${f%.out}"
	done
}

# --- 1. -- COMMAND ----------------------------------------------------------------------------
S=$R/s1
is "$(cat "$S/status" 2>/dev/null)" 3 "s1: kmemtraced -- COMMAND exits with the command's status" ||
	note_file "$S/err" 30
ok "s1: every cpu file passes kmemtrace_check --strict" all_strict "$S/t"
is "$(cpus_of "$S/t" | tr '\n' ' ')" "0 1 " "s1: one file per CPU"
start=$(meta_of "$S/t/kmemtrace.meta" start_mono_ns)
end=$(meta_of "$S/t/kmemtrace.meta" end_mono_ns)
before_total=0
for c in 0 1; do
	read -r rec lm lc first last <<<"$(counts "$S/t/cpu$c.out")"
	wb=$(stat_of "$S/stats.before" "$c" 3)
	wa=$(stat_of "$S/stats.after" "$c" 3)
	db=$(stat_of "$S/stats.before" "$c" 4)
	da=$(stat_of "$S/stats.after" "$c" 4)
	before_total=$((before_total + wb))
	is "$((${rec:--1} - ${lm:-0}))" "$((wa - wb))" "s1: cpu$c: data records in the file == the module's written delta"
	is "$(summary_of "$S/err" "$c")" "$rec $((rec * 64)) $((da - db))" \
		"s1: cpu$c: summary records, bytes, dropped agree with the file and the module"
	ok "s1: cpu$c: every timestamp within the meta's [start_mono_ns, end_mono_ns]" \
		test -n "$first" -a -n "$start" -a -n "$end" -a "${first:-0}" -ge "${start:-1}" -a "${last:-0}" -le "${end:-0}"
done
has "$S/err" "discarded $((before_total * 64)) bytes ($before_total records) buffered before COMMAND" \
	"s1: the records buffered before the command (its stats before) were discarded"
ok "s1: the command's own allocations are in the trace (oracle cache described)" \
	grep -qa kmt_oracle_cache "$S/t/cpu0.out" "$S/t/cpu1.out"
ob=$(meta_of "$S/t/kmemtrace.meta" overruns_start)
oe=$(meta_of "$S/t/kmemtrace.meta" overruns_end)
has "$S/err" "total_overruns: $((oe - ob)) during this trace ($oe since" "s1: summary total_overruns from the meta's overruns"
is "$(meta_of "$S/t/kmemtrace.meta" command_status)" 3 "s1: meta command_status"
is "$(cat "$S/enabled" 2>/dev/null)" 0 "s1: tracing is off after the run"

# --- 2. kill -9 -------------------------------------------------------------------------------
S=$R/s2
is "$(cat "$S/status" 2>/dev/null)" 137 "s2: kmemtraced was killed by SIGKILL"
is "$(cat "$S/enabled" 2>/dev/null)" 1 "s2: it was killed while tracing"
ok "s2: killed mid-run: the meta has no end (never finished)" \
	sh -c "! grep -q '^end_mono_ns' '$S/t/kmemtrace.meta'"
total=0
for c in $(cpus_of "$S/t"); do
	read -r rec _ <<<"$(counts "$S/t/cpu$c.out")"
	ok "s2: cpu$c.out reads correctly up to its last whole record" test -n "$rec" ||
		diag "s2: cpu$c.out: $("$CHECK" "$S/t/cpu$c.out" 2>&1)"
	total=$((total + ${rec:-0}))
done
ok "s2: the killed run had saved records" test "$total" -gt 0
is "$(cat "$S/status2" 2>/dev/null)" 0 "s2: a new kmemtraced while tracing is still on: exit 0" ||
	note_file "$S/err2" 8
ok "s2: its files (read from where the killed one stopped) pass --strict" all_strict "$S/t2"
# The JSON names a cache "described" only when a CACHE_DESC for it is in this trace.
"$KMT_TOP/build/kmemtrace-report" --json --cache "$S/t2" > "$S/t2.json" 2> "$S/t2.json.err"
ok "s2: the new reader's trace describes the oracle's cache again (the module re-describes for a new reader)" \
	python3 -c 'import json,sys
c=[x for x in json.load(open(sys.argv[1]))["caches"] if x["name"]=="kmt_oracle_cache"]
sys.exit(0 if c and all(x.get("described") for x in c) else 1)' "$S/t2.json" ||
	note_file "$S/t2.json.err" 4

# --- 3. full tmpfs ----------------------------------------------------------------------------
S=$R/s3
is "$(cat "$S/status" 2>/dev/null)" 3 "s3: disk full: exit 3" ||
	note_file "$S/err" 12
like "$(cat "$S/err")" "kmemtraced: /mnt/tiny/t/cpu[0-9]+\.out: write failed: No space left on device" \
	"s3: disk full: says which file and why"
has "$S/err" "every file in /mnt/tiny/t ends on a whole record" "s3: disk full: says the files are whole"
ok "s3: every file passes kmemtrace_check --strict (whole records)" all_strict "$S/t"
total=0
for c in $(cpus_of "$S/t"); do
	read -r rec _ <<<"$(counts "$S/t/cpu$c.out")"
	total=$((total + ${rec:-0}))
done
ok "s3: what fitted was kept" test "$total" -gt 1000
ok "s3: the meta was completed in place" grep -q '^end_mono_ns' "$S/t/kmemtrace.meta"
ok "s3: the meta records the error" grep -q '^error .*No space left on device' "$S/t/kmemtrace.meta"
is "$(cat "$S/enabled" 2>/dev/null)" 0 "s3: tracing is off after the failure"
dropped=$(summary_of "$S/err" total | cut -d' ' -f3)
if [ -n "$dropped" ] && [ "$dropped" != 0 ]; then
	ok "s3: records dropped after draining stopped bring no subbufs hint" \
		sh -c "! grep -q 'records were lost' '$S/err'"
fi

# --- 4. overruns ------------------------------------------------------------------------------
S=$R/s4
is "$(cat "$S/status" 2>/dev/null)" 0 "s4: exit 0" ||
	note_file "$S/err" 8
ok "s4: every file passes kmemtrace_check --strict" all_strict "$S/t"
dropped=0
for c in 0 1; do
	read -r rec lm lc _ <<<"$(counts "$S/t/cpu$c.out")"
	wb=$(stat_of "$S/stats.before" "$c" 3)
	wa=$(stat_of "$S/stats.after" "$c" 3)
	db=$(stat_of "$S/stats.before" "$c" 4)
	da=$(stat_of "$S/stats.after" "$c" 4)
	dropped=$((dropped + da - db))
	is "$((${rec:--1} - ${lm:-0}))" "$((wa - wb))" "s4: cpu$c: data records in the file == the module's written delta"
	is "$(summary_of "$S/err" "$c")" "$rec $((rec * 64)) $((da - db))" \
		"s4: cpu$c: summary agrees with the file and the module"
	ok "s4: cpu$c: LOST markers cover no more than the module dropped" test "${lc:-x}" -le $((da - db))
done
ok "s4: tiny buffers dropped records" test "$dropped" -gt 0
has "$S/err" "total_overruns: $dropped during this trace" "s4: summary total_overruns == dropped delta"
sb=$(cat "$S/subbufs" 2>/dev/null)
has "$S/err" "records were lost because a buffer was full" "s4: the summary says records were lost"
has "$S/err" "(subbufs=$sb)" "s4: the hint names the current subbufs"
has "$S/err" "modprobe kmemtrace subbufs=$((sb * 4))" "s4: the hint says how to reload with more"

# --- 5. CPU coming online ---------------------------------------------------------------------
S=$R/s5
ok "s5: cpu1 had no buffer file when the module loaded" sh -c "! grep -qx cpu1 '$S/files.before'"
is "$(cat "$S/status" 2>/dev/null)" 0 "s5: exit 0" ||
	note_file "$S/err" 10
has "$S/err" "cpu1 came online" "s5: kmemtraced noticed cpu1"
ok "s5: every file passes kmemtrace_check --strict" all_strict "$S/t"
read -r rec lm _ <<<"$(counts "$S/t/cpu1.out")"
wb=$(stat_of "$S/stats.before" 1 3)
wa=$(stat_of "$S/stats.after" 1 3)
ok "s5: cpu1.out holds records" test "${rec:-0}" -gt 0
is "$((${rec:-0} - ${lm:-0}))" "$((${wa:-0} - ${wb:-0}))" "s5: cpu1: records in the file == the module's written delta"

# --- 6. a second signal while draining ---------------------------------------------------------
S=$R/s6
is "$(cat "$S/status" 2>/dev/null)" 0 "s6: SIGINT then SIGTERM: exit 0" ||
	note_file "$S/err" 8
has "$S/err" "signal received while draining: finishing the files first" "s6: the second signal is noted"
ok "s6: every file passes kmemtrace_check --strict" all_strict "$S/t"
ok "s6: the meta is complete" grep -q '^end_mono_ns ' "$S/t/kmemtrace.meta"
for c in $(cpus_of "$S/t"); do
	read -r rec _ <<<"$(counts "$S/t/cpu$c.out")"
	is "$(summary_of "$S/err" "$c" | cut -d' ' -f1)" "$rec" "s6: cpu$c: the summary counts what is in the file"
done

# --- 7. lockdown ----------------------------------------------------------------------------------
S=$R/s7
if [ -e "$S/status" ]; then
	is "$(cat "$S/status")" 3 "s7: kernel in lockdown: exit 3"
	has "$S/err" "the kernel is in lockdown mode 'integrity', which closes debugfs" \
		"s7: lockdown: says so (not 'module missing')"
	is "$(cat "$S/files" 2>/dev/null)" "" "s7: lockdown: no files left behind"
else
	_tap_result 0 "s7: the guest kernel could not enter lockdown mode"
fi

dmesg_clean
done_testing
