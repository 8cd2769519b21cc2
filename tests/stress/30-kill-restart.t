#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 30-kill-restart.t - stress (make stress): kmemtraced killed with SIGKILL again and again while
# the oracle's load allocates on every CPU (some kills land in the middle of the final drain,
# after SIGINT), each time restarted into a new directory, on the amd64 and the PREEMPT_RT
# kernel. Every killed run's files must read correctly up to their last whole record; per CPU the
# runs' sequence numbers must only go forward (a record is never seen twice); a last, normal run
# must pass kmemtrace_check --strict; the module must unload afterwards (no reference leaked by
# the killed daemons) and the guest's dmesg stay clean.
#
# As in tests/guest/50-faults.t, tracefs probes hold the slab tracepoints on so that nothing is
# patched under load, which makes multi-threaded TCG safe.
KMT_TEST_TIMEOUT=${KMT_STRESS_TIMEOUT:-1800}
export KMT_TCG_THREAD=${KMT_TCG_THREAD:-multi}
# The guest holds these tracepoints on before our modules load (scripts/guest-init).
export KMT_HOLD_EVENTS="kmalloc kfree kmem_cache_alloc kmem_cache_free"
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/../guest/lib.sh"

FLAVOURS=${KMT_STRESS_FLAVOURS:-amd64 rt-amd64}
KILLS=${KMT_STRESS_KILLS:-30}
[ -f "$KMT_TOP/kmod/Kbuild" ] || skip_all "kmod/ not written yet"
[ -f "$KMT_TOP/tests/kmod/Kbuild" ] || skip_all "the oracle module (tests/kmod) not written yet"

mkdir -p "$KMT_TEST_DIR"
script=$KMT_TEST_DIR/kill.sh
cat >"$script" <<EOS
#!/bin/sh
KILLS=$KILLS
EOS
cat >>"$script" <<'EOS'
D=$KMT_DEBUGFS
OR=/sys/kernel/debug/kmemtrace_oracle
O=$KMT_OUT
. "$KMT_FILES/guest-lib.sh"

# verify RUN DIR: one line per cpu file, "RUN CPU STATUS FIRSTSEQ LASTSEQ RECORDS PARTIAL".
verify() {
	for f in $2/cpu*.out; do
		c=${f##*/cpu}
		kmemtrace_check -v $f > /tmp/v 2>&1
		st=$?
		seq=$(sed -n 's/^  seq \([0-9]*\)\.\.\([0-9]*\),.*/\1 \2/p' /tmp/v)
		rec=$(sed -n 's/.*: OK: \([0-9]*\) records.*/\1/p' /tmp/v)
		part=$(grep -ci 'partial' /tmp/v)
		echo "$1 ${c%.out} $st ${seq:-- -} ${rec:--} $part" >> $O/runs
		[ $st = 0 ] || cat /tmp/v >> $O/failures
	done
}

echo 4 > $OR/load
i=1
while [ $i -le $KILLS ]; do
	kmemtraced -o /tmp/k$i > $O/err_$i 2>&1 &
	pid=$!
	t=0
	while [ ! -e /tmp/k$i/kmemtrace.meta ] && [ $t -lt 300 ]; do
		sleep 0.1
		t=$((t + 1))
	done
	sleep 0.$((i % 9 + 1))
	if [ $((i % 4)) = 0 ]; then
		# In the final drain: SIGINT switched tracing off, SIGKILL lands while it empties.
		kill -INT $pid
		sleep 0.05
		echo "$i int+kill" >> $O/how
	fi
	kill -KILL $pid
	wait $pid
	echo "$i $?" >> $O/status
	[ $((i % 4)) = 0 ] && echo 1 > $D/enabled
	verify $i /tmp/k$i
	rm -rf /tmp/k$i
	i=$((i + 1))
done
cat $D/enabled > $O/enabled_after_kills
kmemtraced -o /tmp/final -t 2 > $O/err_final 2>&1
echo $? > $O/final_status
kmemtrace_check --strict -q /tmp/final > $O/final_check 2>&1
echo $? >> $O/final_check
verify final /tmp/final
echo 0 > $OR/load
exit 0
EOS
chmod +x "$script"

for flavour in $FLAVOURS; do
	flavour_installed "$flavour" || continue
	start=$SECONDS
	vm_ok "$flavour" --flavour "$flavour" -T $((KMT_TEST_TIMEOUT - 60)) -c 3 --mem 2048 \
		-m kmemtrace_oracle --no-daemon -a "$script" -a "$KMT_TOP/tests/guest/guest-lib.sh" \
		-- kill.sh || true
	diag "$flavour: guest run took $((SECONDS - start)) s"
	R=$VM_OUT
	is "$(command_status)" 0 "$flavour: guest script ran to the end"
	is "$(tr -d '\n' <"$R/held" 2>/dev/null)" 11111111 "$flavour: slab tracepoints held on by tracefs probes"
	dmesg_clean "$flavour: guest dmesg is clean"
	ok "$flavour: kmemtrace.ko unloaded after all the kills" grep -q '^rmmod kmemtrace: ok' "$R/guest.log"
	# A SIGKILL after SIGINT may find the drain already finished: exit 0 is right then.
	is "$(awk 'NR == FNR { late[$1] = 1; next } !($2 == 137 || ($1 in late) && $2 == 0)' \
		"$R/how" "$R/status" 2>/dev/null)" "" "$flavour: every run died of SIGKILL (or had finished after SIGINT)"
	is "$(wc -l <"$R/status" 2>/dev/null)" "$KILLS" "$flavour: $KILLS runs"
	diag "$flavour: $(wc -l <"$R/how" 2>/dev/null) kills sent 50 ms after SIGINT, of which" \
		"$(awk 'NR == FNR { late[$1] = 1; next } ($1 in late) && $2 == 0' "$R/how" "$R/status" | wc -l)" \
		"found the drain finished"
	is "$(awk '$3 != 0' "$R/runs" 2>/dev/null | wc -l)" 0 \
		"$flavour: every file of every killed run reads correctly up to its last whole record"
	[ -s "$R/failures" ] && note_file "$R/failures" 20
	diag "$flavour: files with a partial last record: $(awk '$7 > 0' "$R/runs" | wc -l)"
	saved=$(awk '$1 != "final" && $6 ~ /^[0-9]+$/ { n++ } END { print n + 0 }' "$R/runs")
	ok "$flavour: killed runs saved records ($saved files with records)" test "$saved" -gt "$KILLS"
	# Per CPU, in run order: each run's first seq comes after the previous run's last one.
	back=$(awk '$4 ~ /^[0-9]+$/ {
			if (($2 in last) && $4 <= last[$2]) { print "run " $1 " cpu" $2 ": " $4 " <= " last[$2] }
			last[$2] = $5 }' "$R/runs")
	is "$back" "" "$flavour: per CPU, no run repeats or precedes a record of an earlier run"
	is "$(cat "$R/enabled_after_kills" 2>/dev/null)" 1 "$flavour: tracing still on after the kills"
	is "$(cat "$R/final_status" 2>/dev/null)" 0 "$flavour: a normal run afterwards: exit 0"
	is "$(tail -n 1 "$R/final_check" 2>/dev/null)" 0 "$flavour: its files pass kmemtrace_check --strict"
done
done_testing
