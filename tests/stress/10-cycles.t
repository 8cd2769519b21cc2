#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 10-cycles.t - stress (make stress): 50 load/unload cycles of kmemtrace.ko while the oracle's
# load generator allocates on every CPU, on the amd64 and the PREEMPT_RT kernel. The cycles vary
# the parameters (tiny buffers, page events, starting disabled), read the buffers while records
# keep coming, and every fifth cycle runs kmemtraced and verifies its files. Each cycle's stats
# must satisfy emitted == written + dropped on every CPU; every insmod and rmmod must succeed;
# the guest's dmesg must stay clean.
#
# The tracepoints are really patched on every load and unload here (no tracefs probes hold them),
# so the guests run single-threaded TCG (see tests/guest/lib.sh), which QEMU 7.2's
# multi-threaded TCG cannot be trusted with.
KMT_TEST_TIMEOUT=${KMT_STRESS_TIMEOUT:-1800}
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/../guest/lib.sh"

CYCLES=${KMT_STRESS_CYCLES:-50}
FLAVOURS=${KMT_STRESS_FLAVOURS:-amd64 rt-amd64}
[ -f "$KMT_TOP/kmod/Kbuild" ] || skip_all "kmod/ not written yet"
[ -f "$KMT_TOP/tests/kmod/Kbuild" ] || skip_all "the oracle module (tests/kmod) not written yet"

mkdir -p "$KMT_TEST_DIR"
script=$KMT_TEST_DIR/cycles.sh
cat >"$script" <<EOS
#!/bin/sh
CYCLES=$CYCLES
EOS
cat >>"$script" <<'EOS'
D=$KMT_DEBUGFS
OR=/sys/kernel/debug/kmemtrace_oracle
O=$KMT_OUT
KO=$KMT_MODDIR/kmemtrace.ko
rmmod kmemtrace
echo 4 > $OR/load
cat $OR/load > $O/load
i=1
while [ $i -le $CYCLES ]; do
	case $((i % 5)) in
	0) p="subbufs=4 subbuf_size=8192" ;;
	1) p="pages=1 subbufs=8 subbuf_size=16384" ;;
	2) p="subbufs=2 subbuf_size=256" ;;
	3) p="start_disabled=1" ;;
	*) p="subbufs=16 subbuf_size=4096" ;;
	esac
	# shellcheck disable=SC2086
	if insmod $KO $p; then r=ok; else r=failed; fi
	echo "$i insmod $r $p" >> $O/cycles
	if [ $r = ok ]; then
		[ $((i % 5)) = 3 ] && echo 1 > $D/enabled
		if [ $((i % 5)) = 0 ]; then
			kmemtraced -q -o /tmp/c$i -t 1 > $O/daemon_$i 2>&1
			echo "$i daemon $?" >> $O/cycles
			kmemtrace_check --strict -q /tmp/c$i >> $O/daemon_$i 2>&1
			echo "$i check $?" >> $O/cycles
			rm -rf /tmp/c$i
		else
			sleep 0.3
			dd if=$D/cpu0 of=/dev/null bs=4096 count=2 2> /dev/null
		fi
		cat $D/stats > $O/stats_$i
		if rmmod kmemtrace; then r=ok; else r=failed; fi
		echo "$i rmmod $r" >> $O/cycles
	fi
	i=$((i + 1))
done
cat $OR/load >> $O/load
echo 0 > $OR/load
# The bench unloads what is left; give it kmemtrace.ko back.
insmod $KO
exit 0
EOS
chmod +x "$script"

for flavour in $FLAVOURS; do
	flavour_installed "$flavour" || continue
	start=$SECONDS
	vm_ok "$flavour" --flavour "$flavour" -T $((KMT_TEST_TIMEOUT - 60)) -c 2 -p start_disabled=1 \
		-m kmemtrace_oracle --no-daemon -a "$script" -- cycles.sh || true
	diag "$flavour: guest run took $((SECONDS - start)) s; load generator: $(tr '\n' ' ' <"$VM_OUT/load" 2>/dev/null)"
	C=$VM_OUT/cycles
	is "$(command_status)" 0 "$flavour: guest script ran to the end"
	dmesg_clean "$flavour: guest dmesg is clean after $CYCLES cycles"
	is "$(grep -c ' insmod ok ' "$C" 2>/dev/null)" "$CYCLES" "$flavour: all $CYCLES insmods succeeded"
	is "$(grep -c ' rmmod ok$' "$C" 2>/dev/null)" "$CYCLES" "$flavour: all $CYCLES rmmods succeeded"
	nd=$((CYCLES / 5))
	is "$(grep -c ' daemon 0$' "$C" 2>/dev/null)" "$nd" "$flavour: kmemtraced exit 0 in all $nd cycles it ran"
	is "$(grep -c ' check 0$' "$C" 2>/dev/null)" "$nd" "$flavour: kmemtrace_check --strict accepted all $nd traces"
	bad=0 n=0 emitted=0
	for f in "$VM_OUT"/stats_*; do
		[ -e "$f" ] || continue
		n=$((n + 1))
		while read -r cpu e w d; do
			[ "$cpu" = "#" ] && continue
			emitted=$((emitted + e))
			[ "$e" = "$((w + d))" ] || { bad=$((bad + 1)); diag "${f##*/} cpu$cpu: $e != $w + $d"; }
		done <"$f"
	done
	is "$n" "$CYCLES" "$flavour: stats read in every cycle"
	is "$bad" 0 "$flavour: emitted == written + dropped on every CPU in every cycle"
	ok "$flavour: the cycles recorded events ($emitted)" test "$emitted" -gt 0
done
done_testing
