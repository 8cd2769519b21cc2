# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=dash  # busybox ash: POSIX sh plus local, as dash
# guest-lib.sh - sh functions for the guest half of the tests (busybox sh, no bash): a test copies
# it in with `-a "$KMT_TOP/tests/guest/guest-lib.sh"` and its guest script runs
# `. "$KMT_FILES/guest-lib.sh"`.
#
#   wait_enabled                up to 60 s for kmemtraced to switch tracing on
#   dropped                     how many records the module has dropped so far, all CPUs (the
#                               dropped column of its stats)
#   wait_dropped N              up to 60 s until the module has dropped more than N records: a
#                               test that needs lost records waits for them, not a set time
#   wait_full                   up to 60 s until a CPU has dropped records since the call and
#                               every CPU that emitted records since (the stats list possible
#                               CPUs, some maybe offline) has too: its buffer is full
#   toggle_enabled N ERRFILE    N pairs of writes 0 then 1 to kmemtrace's enabled file; a failed
#                               write appends a line to ERRFILE
#
# Holding tracepoints on before our modules load is kmemtrace-vm's --hold-events (guest-init).

wait_enabled() {
	local i=0

	while [ "$(cat "$KMT_DEBUGFS/enabled" 2> /dev/null)" != 1 ] && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

dropped() {
	awk '!/^#/ { d += $4 } END { print d + 0 }' "$KMT_DEBUGFS/stats"
}

wait_dropped() {
	local i=0

	while [ "$(dropped)" -le "$1" ] && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

wait_full() {
	local i=0

	awk '!/^#/' "$KMT_DEBUGFS/stats" > /tmp/kmt-full.before
	while [ $i -lt 600 ]; do
		awk 'NR == FNR { e[$1] = $2; d[$1] = $4; next } /^#/ { next }
			$4 > d[$1] { full = 1 } $2 > e[$1] && $4 <= d[$1] { short = 1 }
			END { exit short || !full }' \
			/tmp/kmt-full.before "$KMT_DEBUGFS/stats" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

toggle_enabled() {
	local j=0

	while [ $j -lt "$1" ]; do
		echo 0 > "$KMT_DEBUGFS/enabled" || echo "write 0 failed" >> "$2"
		echo 1 > "$KMT_DEBUGFS/enabled" || echo "write 1 failed" >> "$2"
		j=$((j + 1))
	done
}
