#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 20-tiny-buffers.t - stress (make stress): tiny relay buffers under the heaviest load the oracle
# makes (64-object batches on every one of four CPUs, plus its pattern) while kmemtraced drains,
# on the amd64 and the PREEMPT_RT kernel, for several buffer geometries down to the smallest the
# module accepts. Per CPU the files hold exactly the records the module counts as written, seq
# runs without a gap across LOST records, every seq handed out is in a file or a LOST count, and
# emitted == written + dropped with total_overruns == the sum of dropped.
#
# As in tests/guest/50-faults.t, tracefs probes hold the slab tracepoints on so that nothing is
# patched under load, which makes four truly parallel (multi-threaded TCG) CPUs safe.
KMT_TEST_TIMEOUT=${KMT_STRESS_TIMEOUT:-1800}
export KMT_TCG_THREAD=${KMT_TCG_THREAD:-multi}
# The guest holds these tracepoints on before our modules load (scripts/guest-init).
export KMT_HOLD_EVENTS="kmalloc kfree kmem_cache_alloc kmem_cache_free"
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/../guest/lib.sh"

FLAVOURS=${KMT_STRESS_FLAVOURS:-amd64 rt-amd64}
SECONDS_EACH=${KMT_STRESS_SECONDS:-6}
GEOMETRIES=${KMT_STRESS_GEOMETRIES:-2x256 3x4096 2x65536 8x1024}
[ -f "$KMT_TOP/kmod/Kbuild" ] || skip_all "kmod/ not written yet"
[ -f "$KMT_TOP/tests/kmod/Kbuild" ] || skip_all "the oracle module (tests/kmod) not written yet"
command -v python3 >/dev/null || skip_all "python3 not installed (scripts/install-deps)"

mkdir -p "$KMT_TEST_DIR"
CHECK=$KMT_TOP/build/kmemtrace_check
script=$KMT_TEST_DIR/tiny.sh

cat >"$script" <<EOS
#!/bin/sh
GEOMETRIES="$GEOMETRIES"
SECONDS_EACH=$SECONDS_EACH
EOS
cat >>"$script" <<'EOS'
D=$KMT_DEBUGFS
OR=/sys/kernel/debug/kmemtrace_oracle
O=$KMT_OUT
KO=$KMT_MODDIR/kmemtrace.ko
. "$KMT_FILES/guest-lib.sh"
for g in $GEOMETRIES; do
	rmmod kmemtrace
	insmod $KO subbufs=${g%x*} subbuf_size=${g#*x} start_disabled=1
	mkdir -p $O/$g
	cat /sys/module/kmemtrace/parameters/subbufs /sys/module/kmemtrace/parameters/subbuf_size \
		> $O/$g/params
	kmemtraced -o $O/$g/t -- sh -c "echo 64 > $OR/load; sleep 1; echo 1 > $OR/run;
		sleep $SECONDS_EACH; cat $OR/load > $O/$g/load; echo 0 > $OR/load" > $O/$g/err 2>&1
	echo $? > $O/$g/status
	cat $D/stats > $O/$g/stats
	cat $D/total_overruns > $O/$g/overruns
done
exit 0
EOS
chmod +x "$script"

for flavour in $FLAVOURS; do
	flavour_installed "$flavour" || continue
	start=$SECONDS
	vm_ok "$flavour" --flavour "$flavour" -T $((KMT_TEST_TIMEOUT - 60)) -c 4 --mem 2048 --disk 2048 \
		-p start_disabled=1 -m kmemtrace_oracle --no-daemon -a "$script" -a "$KMT_TOP/tests/guest/guest-lib.sh" \
		-- tiny.sh || true
	diag "$flavour: guest run took $((SECONDS - start)) s"
	R=$VM_OUT
	is "$(command_status)" 0 "$flavour: guest script ran to the end"
	is "$(tr -d '\n' <"$R/held" 2>/dev/null)" 11111111 "$flavour: slab tracepoints held on by tracefs probes"
	dmesg_clean "$flavour: guest dmesg is clean"
	for g in $GEOMETRIES; do
		S=$R/$g
		name="$flavour $g"
		is "$(tr '\n' x <"$S/params" 2>/dev/null)" "${g%x*}x$(rounded_subbuf_size "${g%x*}" "${g#*x}")x" \
			"$name: loaded with subbufs=${g%x*} and subbuf_size=${g#*x} rounded to whole pages"
		is "$(cat "$S/status" 2>/dev/null)" 0 "$name: kmemtraced exit 0"
		diag "$name: load $(cat "$S/load" 2>/dev/null); $(grep -E '^ *total|overruns' "$S/err" | tr '\n' ' ')"
		ok "$name: every file passes kmemtrace_check --strict" all_strict "$S/t"
		out=$(python3 "$KMT_ACCOUNT" "$S"/t/cpu*.out) || out=
		is "$(wc -l <<<"$out")" 4 "$name: a file for each of the 4 CPUs"
		tot_d=0
		while read -r cpu ndata lsum _ gaps first endseq; do
			[ "$first" != - ] || first=0 endseq=0	# a file without records
			e=$(stat_of "$S/stats" "$cpu" 2) w=$(stat_of "$S/stats" "$cpu" 3) d=$(stat_of "$S/stats" "$cpu" 4)
			if ! [[ $e$w$d =~ ^[0-9]+$ && $ndata =~ ^[0-9]+$ ]]; then
				ok "$name: cpu$cpu: the module's stats list this CPU" false
				continue
			fi
			tot_d=$((tot_d + d))
			is "$e" "$((w + d))" "$name: cpu$cpu: emitted == written + dropped ($e == $w + $d)"
			is "$ndata" "$w" "$name: cpu$cpu: data records in the file == written"
			is "$gaps.$first" "0.0" "$name: cpu$cpu: seq from 0 without a gap across LOST records"
			# A corrupt file can hold LOST counts beyond what the shell's arithmetic takes.
			ok "$name: cpu$cpu: LOST records cover no more than dropped ($lsum <= $d)" \
				test "${#lsum}" -le 18 -a "$lsum" -le "$d"
			is "$(((endseq + d - lsum) % 4294967296))" "$((e % 4294967296))" \
				"$name: cpu$cpu: every seq handed out is in the file or in a LOST count"
		done <<<"$out"
		is "$(cat "$S/overruns" 2>/dev/null)" "$tot_d" "$name: total_overruns == sum of dropped"
		ok "$name: records were dropped ($tot_d)" test "$tot_d" -gt 0
	done
	[ "$_tap_failed" = 0 ] && rm -f "$R"/*/t/cpu*.out
done
done_testing
