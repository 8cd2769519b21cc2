#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 50-faults.t - faults during a trace, in one three-CPU guest boot under the oracle's allocation
# load with kmemtraced draining: CPUs going offline and online (one new, one with a buffer, the
# trace ending while it is offline), `enabled` toggled 200 times by two concurrent writers, and
# rmmod attempted while kmemtraced reads and while it starts. Every file must pass
# kmemtrace_check --strict and hold exactly the records the module's stats say were written.
#
# QEMU before 8.1 can run a stale int3 on one vCPU thread while another patches kernel text
# (multi-threaded TCG; it crashes guests with no kmemtrace code loaded). The guest therefore
# keeps the four slab tracepoints switched on all along with two tracefs event probes each (in
# two tracing instances, both with tracing_on=0), so that attaching and detaching kmemtrace's
# probes never patches a call site: tracing_on/enabled then only edit the probe arrays. That
# makes multi-threaded TCG safe for this test, and three CPUs run at a usable speed.
# Bounds: the guest run took 45 s beside two nice -n 19 busy loops and 62 s on another busy
# host, the whole test 67 s; the per-kernel suites beside the busy loops saw a 7.3 guest of 91 s
# (2026-11-28, other work beside them too) and a whole test of 74 s; on 2026-12-01 make
# check-kernels saw s390x's guest take 101.7 s on an idle machine: -T 520 is over 5x the guest
# run, 600 s over 5x the test and over -T (tests/guest/time-bounds).
KMT_TEST_TIMEOUT=600
export KMT_TCG_THREAD=${KMT_TCG_THREAD:-multi}
# The guest holds these tracepoints on before our modules load (scripts/guest-init).
export KMT_HOLD_EVENTS="kmalloc kfree kmem_cache_alloc kmem_cache_free"
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

[ -f "$KMT_TOP/kmod/Kbuild" ] || skip_all "kmod/ not written yet"
[ -f "$KMT_TOP/tests/kmod/Kbuild" ] || skip_all "the oracle module (tests/kmod) not written yet"
require_cmds python3

mkdir -p "$KMT_TEST_DIR"
CHECK=$KMT_TOP/build/kmemtrace_check
script=$KMT_TEST_DIR/faults.sh
TOGGLES=200

# --- In the guest ------------------------------------------------------------------------------
# Each scenario leaves its trace, kmemtraced's exit status and output, and the module's stats in
# $KMT_OUT/NAME; the host judges them.
cat >"$script" <<EOS
#!/bin/sh
TOGGLES=$TOGGLES
EOS
cat >>"$script" <<'EOS'
D=$KMT_DEBUGFS
OR=/sys/kernel/debug/kmemtrace_oracle
O=$KMT_OUT
KO=$KMT_MODDIR/kmemtrace.ko
CPU=/sys/devices/system/cpu

stamp() {	# when each step happened, for the host's diagnostics (and the console)
	echo "$1 $(cut -d' ' -f1 /proc/uptime)" >> $O/times
	echo "50-faults: $1" > /dev/console
}
fresh_module() {	# PARAMS...: reload kmemtrace.ko, tracing off until kmemtraced starts it
	rmmod kmemtrace 2> /dev/null
	insmod $KO start_disabled=1 "$@"
}

# Two probes stay on each slab tracepoint (see the top of the test): no text patching below.
. "$KMT_FILES/guest-lib.sh"

# 1. Hotplug. CPU 2 is offline when the module loads (no buffer), comes online under load
# (relay creates cpu2, kmemtraced must find it); CPU 1 goes offline and back online under load,
# then offline again and the trace ends with it offline: what it wrote must all be in cpu1.out.
stamp hotplug
mkdir -p $O/h
echo 0 > $CPU/cpu2/online
fresh_module
ls $D > $O/h/files.load
echo 4 > $OR/load
kmemtraced -v -o $O/h/t > $O/h/err 2>&1 &
pid=$!
wait_enabled
sleep 1
stamp cpu2-online
echo 1 > $CPU/cpu2/online
echo $? > $O/h/online2
# kmemtraced looks for new CPUs every 0.5 s: wait for its cpu2.out (up to 60 s) rather than a
# set second, or a slow host could end the trace before it looked.
i=0
while [ ! -e $O/h/t/cpu2.out ] && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
echo 0 > $OR/load
echo 4 > $OR/load
cat $OR/load > $O/h/load3
sleep 1
stamp cpu1-offline
echo 0 > $CPU/cpu1/online
echo $? > $O/h/offline1
cat $D/stats > $O/h/stats.off1
sleep 1
cat $D/stats > $O/h/stats.off2
stamp cpu1-online
echo 1 > $CPU/cpu1/online
echo $? > $O/h/online1
sleep 1
stamp cpu1-offline
echo 0 > $CPU/cpu1/online
echo $? > $O/h/offline1b
sleep 0.5
cat $CPU/online > $O/h/online.end
kill -INT $pid
wait $pid
echo $? > $O/h/status
echo 0 > $OR/load
cat $D/stats > $O/h/stats
cat $D/total_overruns > $O/h/overruns
echo 1 > $CPU/cpu1/online
stamp hotplug-end

# 2. enabled toggled by two writers at once under load while kmemtraced drains; both loops end
# on 1, so tracing is on when kmemtraced stops it.
mkdir -p $O/tg
fresh_module
echo 4 > $OR/load
kmemtraced -o $O/tg/t > $O/tg/err 2>&1 &
pid=$!
wait_enabled
stamp toggle
toggle_enabled $((TOGGLES / 2)) $O/tg/toggle.err &
tpid=$!
toggle_enabled $((TOGGLES / 2)) $O/tg/toggle.err
wait $tpid
stamp toggle-end
cat $D/enabled > $O/tg/enabled.after
sleep 0.5
kill -INT $pid
wait $pid
echo $? > $O/tg/status
echo 0 > $OR/load
cat $D/stats > $O/tg/stats
cat $D/total_overruns > $O/tg/overruns

# 3. rmmod while kmemtraced reads under load: refused (its open cpu files hold the module) or,
# if the module allowed it, safe. Then rmmod once kmemtraced is gone.
mkdir -p $O/rm
fresh_module
echo 4 > $OR/load
kmemtraced -o $O/rm/t > $O/rm/err 2>&1 &
pid=$!
wait_enabled
sleep 0.5
stamp rmmod
for i in 1 2 3 4 5; do
	if rmmod kmemtrace 2>> $O/rm/rmmod.err; then
		echo unloaded >> $O/rm/rmmod
	else
		echo refused >> $O/rm/rmmod
	fi
done
grep -c '^kmemtrace ' /proc/modules > $O/rm/loaded
kill -INT $pid
wait $pid
echo $? > $O/rm/status
echo 0 > $OR/load
cat $D/stats > $O/rm/stats 2> /dev/null
cat $D/total_overruns > $O/rm/overruns 2> /dev/null
if rmmod kmemtrace 2>> $O/rm/rmmod.err; then r=unloaded; else r=refused; fi
echo $r > $O/rm/rmmod.after

# 4. rmmod racing kmemtraced's start: whichever wins, the daemon either traces normally or
# exits with an error, and the kernel stays clean.
for n in 1 2 3; do
	mkdir -p $O/race$n
	insmod $KO start_disabled=1
	kmemtraced -o $O/race$n/t -t 2 > $O/race$n/err 2>&1 &
	pid=$!
	sleep 0.$((n * 2))
	if rmmod kmemtrace 2> /dev/null; then r=unloaded; else r=refused; fi
	echo $r > $O/race$n/rmmod
	wait $pid
	echo $? > $O/race$n/status
	rmmod kmemtrace 2> /dev/null
done

# 5. A ring that is not a whole number of pages (subbufs=2 subbuf_size=256: 512 bytes in a
# 4096-byte allocation) under load, drained with splice by kmemtraced. The module must refuse
# such a geometry or give exact files.
mkdir -p $O/ring
stamp ring
if insmod $KO subbufs=2 subbuf_size=256 start_disabled=1 2> $O/ring/insmod.err; then
	echo loaded > $O/ring/insmod
	kmemtraced -o $O/ring/t -- sh -c "echo 4 > $OR/load; sleep 2; echo 0 > $OR/load" \
		> $O/ring/err 2>&1
	echo $? > $O/ring/status
	cat $D/stats > $O/ring/stats
	rmmod kmemtrace
else
	echo refused > $O/ring/insmod
fi
stamp end

# The bench reloads nothing: leave the module loaded for its final rmmod check.
insmod $KO start_disabled=1
EOS
chmod +x "$script"

vm_ok faults -T 520 -c 3 --mem 2048 --disk 1024 -p start_disabled=1 -m kmemtrace_oracle \
	--no-daemon -a "$script" -a "$KMT_TOP/tests/guest/guest-lib.sh" -- faults.sh || true
R=$VM_OUT
diag "$(cat "$R/times" 2>/dev/null)"
is "$(command_status)" 0 "guest script ran to the end"
is "$(tr -d '\n' <"$R/held" 2>/dev/null)" 11111111 "the slab tracepoints were held on by tracefs probes"
dmesg_clean "guest dmesg is clean after every scenario"

cpus_of() {
	local f
	for f in "$1"/cpu*.out; do
		[ -e "$f" ] || continue
		f=${f##*/cpu}
		printf '%s ' "${f%.out}"
	done
}

# --- 1. hotplug --------------------------------------------------------------------------------
S=$R/h
ok "hotplug: cpu2 had no buffer when the module loaded" sh -c "! grep -qx cpu2 '$S/files.load'"
is "$(cat "$S/online2" "$S/offline1" "$S/online1" "$S/offline1b" 2>/dev/null | tr '\n' ' ')" \
	"0 0 0 0 " "hotplug: every online/offline write succeeded"
like "$(cat "$S/load3" 2>/dev/null)" "^threads 3 " "hotplug: the load ran on all three CPUs once cpu2 was up"
is "$(cat "$S/online.end" 2>/dev/null)" "0,2" "hotplug: the trace ended with cpu1 offline"
is "$(cat "$S/status" 2>/dev/null)" 0 "hotplug: kmemtraced exit 0"
note_file "$S/err" 12
ok "hotplug: kmemtraced noticed cpu2 come online" grep -q "cpu2 came online" "$S/err"
is "$(cpus_of "$S/t")" "0 1 2 " "hotplug: one file per CPU, cpu2 included"
ok "hotplug: every file passes kmemtrace_check --strict" all_strict "$S/t"
exact "$S/t" "$S/stats" hotplug
is "$(stat_of "$S/stats.off2" 1 2)" "$(stat_of "$S/stats.off1" 1 2)" \
	"hotplug: nothing is emitted on cpu1 while it is offline"
ok "hotplug: cpu1 wrote records before it went offline" test "$(stat_of "$S/stats" 1 3)" -gt 0
ok "hotplug: cpu2 wrote records after it came online" test "$(stat_of "$S/stats" 2 3)" -gt 0

# --- 2. enabled toggles ------------------------------------------------------------------------
S=$R/tg
ok "toggle: all $TOGGLES writes to enabled succeeded" test ! -s "$S/toggle.err"
is "$(cat "$S/enabled.after" 2>/dev/null)" 1 "toggle: tracing on after both writers ended on 1"
is "$(cat "$S/status" 2>/dev/null)" 0 "toggle: kmemtraced exit 0"
note_file "$S/err" 8
is "$(cpus_of "$S/t")" "0 1 2 " "toggle: one file per CPU"
ok "toggle: every file passes kmemtrace_check --strict" all_strict "$S/t"
exact "$S/t" "$S/stats" toggle

# --- 3. rmmod while kmemtraced reads -----------------------------------------------------------
S=$R/rm
outcome=$(sort -u "$S/rmmod" 2>/dev/null | tr '\n' ' ')
diag "rmmod while reading: $outcome; $(head -n 1 "$S/rmmod.err" 2>/dev/null)"
like "$outcome" "^(refused |unloaded )$" "rmmod while reading: refused every time, or unloaded"
if [ "$outcome" = "refused " ]; then
	is "$(cat "$S/loaded" 2>/dev/null)" 1 "rmmod while reading: the module stayed loaded"
	like "$(head -n 1 "$S/rmmod.err" 2>/dev/null)" "(in use|busy|temporarily unavailable)" \
		"rmmod while reading: refused as in use"
	is "$(cat "$S/status" 2>/dev/null)" 0 "rmmod while reading: kmemtraced carried on, exit 0"
	ok "rmmod while reading: every file passes kmemtrace_check --strict" all_strict "$S/t"
	exact "$S/t" "$S/stats" rmmod
	is "$(cat "$S/rmmod.after" 2>/dev/null)" unloaded "rmmod works once kmemtraced has exited"
else
	# Unloaded under the reader: all that counts is a clean kernel and readable files.
	ok "rmmod while reading: kmemtraced failed cleanly" test "$(cat "$S/status" 2>/dev/null)" = 3
	for f in "$S"/t/cpu*.out; do
		ok "rmmod while reading: ${f##*/} reads up to its last whole record" "$CHECK" -q "$f"
	done
fi

# --- 4. rmmod racing kmemtraced's start --------------------------------------------------------
for n in 1 2 3; do
	S=$R/race$n
	r=$(cat "$S/rmmod" 2>/dev/null)
	st=$(cat "$S/status" 2>/dev/null)
	diag "race $n: rmmod $r, kmemtraced status $st: $(head -n 2 "$S/err" 2>/dev/null)"
	case $r in
	refused)
		is "$st" 0 "race $n: rmmod refused, kmemtraced traced normally"
		ok "race $n: every file passes kmemtrace_check --strict" all_strict "$S/t" ;;
	unloaded)
		is "$st" 3 "race $n: module gone before kmemtraced opened it: exit 3"
		ok "race $n: with a one-line reason" test "$(grep -c 'kmemtraced: ' "$S/err")" -ge 1
		is "$(find "$S/t" -mindepth 1 2>/dev/null | wc -l)" 0 "race $n: and no partial trace left behind" ;;
	*)
		ok "race $n: rmmod ran" false ;;
	esac
done

# --- 5. a ring that is not a whole number of pages -----------------------------------------------
# relay's splice_read wraps its position at PAGE_ALIGN(subbufs * subbuf_size), its writer at
# subbufs * subbuf_size: a ring ending mid-page once made splice hand out zeroed slots and records
# twice. kmemtrace.ko now rounds subbuf_size so the ring is whole pages; this proves the files.
S=$R/ring
ring=$(cat "$S/insmod" 2>/dev/null)
diag "subbufs=2 subbuf_size=256: $ring $(cat "$S/insmod.err" 2>/dev/null)"
like "$ring" "^(loaded|refused)$" "sub-page ring: insmod either loaded or refused the geometry"
if [ "$ring" = loaded ]; then
	is "$(cat "$S/status" 2>/dev/null)" 0 "sub-page ring: kmemtraced exit 0"
	ok "sub-page ring: every file passes kmemtrace_check --strict" all_strict "$S/t"
	out=$(python3 "$KMT_ACCOUNT" "$S"/t/cpu*.out 2>/dev/null) || out=
	bad=0
	while read -r cpu ndata _ _ _ _ _; do
		[ "$ndata" = "$(stat_of "$S/stats" "$cpu" 3)" ] || bad=$((bad + 1))
	done <<<"$out"
	ok "sub-page ring: every file holds exactly the written records" test -n "$out" -a "$bad" = 0
else
	ok "sub-page ring: refused with a reason in dmesg" grep -q 'kmemtrace: .*subbuf' "$R/dmesg.txt"
fi

# The traces are large; keep them only when something failed.
[ "$_tap_failed" = 0 ] && rm -f "$R"/*/t/cpu*.out
done_testing
