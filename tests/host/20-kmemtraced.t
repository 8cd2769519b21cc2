#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 20-kmemtraced.t - kmemtraced on the build host: its command line, the checks it makes before
# tracing, and its drain loop, header, metadata and failure handling against a fake debugfs
# directory (KMEMTRACED_TEST_FAKE_DEBUGFS=1 lets -r name a plain directory; its cpuN files are
# regular files holding records made by kmemtrace-gen).
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
D=$BIN/kmemtraced
GEN=$BIN/kmemtrace-gen
CHECK=$BIN/kmemtrace_check

require_built kmemtraced

scratch_dir daemon

# --- Command line --------------------------------------------------------------------------
run "$D" --help
is "$rc" 0 "--help exits 0"
like "$out" "Usage: kmemtraced [OPTION...] [-- COMMAND [ARG]...]" "--help has the usage line"
like "$out" "EXAMPLES:" "--help has an EXAMPLES block"
like "$out" "kmemtraced -o /tmp/t -- make -j4" "--help shows a -- COMMAND example"
like "$out" "Exit status:" "--help documents the exit status"

run "$D" --version
is "$rc" 0 "--version exits 0"
like "$out" "kmemtraced 1.0" "--version names the tool and its version"

for bad in abc 0 -5 10x 31536001 99999999999999999999 ''; do
	run "$D" -t "$bad" -o "$T/never"
	is "$rc" 1 "-t '$bad' is a usage error (exit 1)"
	like "$err" "-t: '$bad' is not a number of seconds" "-t '$bad': the message names the option and value"
done
ok_cmd "a rejected -t creates nothing" test ! -e "$T/never"

run "$D" -x
is "$rc" 1 "an unknown option is a usage error (exit 1)"
run "$D" -o ''
is "$rc" 1 "-o '' is a usage error (exit 1)"
like "$err" "-o: the directory name is empty" "-o '': the message names the option"

# --- Checks before tracing -----------------------------------------------------------------
nobody_run() {	# nobody_run ARGS...: runs as an unprivileged user if we can
	if [ "$(id -u)" != 0 ]; then
		run "$@"
	elif command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
		run setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	else
		return 1
	fi
}
if nobody_run "$D" -o "$T/nonroot"; then
	is "$rc" 3 "not root: exit 3"
	like "$err" "must run as root" "not root: the message says root is needed"
	like "$err" "debugfs" "not root: the message says what needs root"
	ok_cmd "not root: no output directory made" test ! -e "$T/nonroot"
else
	for i in 1 2 3 4; do skip "cannot run as an unprivileged user (no setpriv)"; done
fi

if [ "$(id -u)" = 0 ]; then
	mkdir -p "$T/notdebugfs"
	run "$D" -r "$T/notdebugfs" -o "$T/o1"
	is "$rc" 3 "-r DIR that is not debugfs: exit 3"
	like "$err" "$T/notdebugfs is not a debugfs mount" "-r DIR not debugfs: says so"
	like "$err" "mount -t debugfs none $T/notdebugfs" "-r DIR not debugfs: says how to mount it"
	ok_cmd "-r DIR not debugfs: nothing mounted over it" \
		sh -c "! grep -qF ' $T/notdebugfs ' /proc/mounts"
	run "$D" -r "$T/does-not-exist" -o "$T/o1"
	is "$rc" 3 "-r PATH that does not exist: exit 3"
	like "$err" "$T/does-not-exist: No such file or directory" "-r missing PATH: names it"
else
	for i in 1 2 3 4 5 6; do skip "the debugfs check comes after the root check (not root)"; done
fi

export KMEMTRACED_TEST_FAKE_DEBUGFS=1
FAKE=$T/fake
mkdir -p "$FAKE"
if [ ! -e /sys/module/kmemtrace ]; then
	run "$D" -r "$FAKE" -o "$T/o2"
	is "$rc" 3 "module not loaded: exit 3"
	like "$err" "kmemtrace.ko is not loaded" "module not loaded: says so"
	like "$err" "modprobe kmemtrace" "module not loaded: names modprobe"
	like "$err" "insmod kmod/kmemtrace.ko" "module not loaded: names insmod"
else
	for i in 1 2 3 4; do skip "kmemtrace.ko is loaded on this host"; done
fi

K=$FAKE/kmemtrace
mkdir -p "$K"
printf '2.1\n' >"$K/abi_version"
run "$D" -r "$FAKE" -o "$T/o3"
is "$rc" 3 "module of ABI major 2: exit 3"
like "$err" "trace ABI 2.1" "ABI mismatch: names the module's version"
like "$err" "supports 1.x" "ABI mismatch: names the supported version"
printf 'one\n' >"$K/abi_version"
run "$D" -r "$FAKE" -o "$T/o3"
is "$rc" 3 "unreadable abi_version: exit 3"
like "$err" "abi_version: unexpected content 'one'" "unreadable abi_version: shows it"

# --- Draining a fake debugfs ---------------------------------------------------------------
# started DIR DESC: one test, passing once kmemtraced started in the background has written
# DIR/kmemtrace.meta, which it does after its signal handlers are set and before it reads the
# buffers. Within 60 s, far above 5x the slowest start seen beside two nice -n 19 busy loops
# (0.64 s); only a failure waits that long. (It was 5 s, unchecked: a slower start got a
# signal before the handlers were set.)
started() {
	wait_for 600 test -e "$1/kmemtrace.meta"
	ok $? "$2"
}

if [ ! -x "$GEN" ] || [ ! -x "$CHECK" ]; then
	echo "# $GEN or $CHECK not built: skipping the drain tests"
	echo "1..$n"
	[ "$failed" = 0 ]
	exit
fi

# A fake module: trace ABI 1.3 (a newer minor than the daemon's), tracing off, 2 CPUs whose
# relay files hold whole records without a file header.
"$GEN" -o "$T/gen" --cpus 2 --events 3000 --seed 7 >/dev/null
printf '1.3\n' >"$K/abi_version"
printf '0\n' >"$K/enabled"
printf '5\n' >"$K/total_overruns"
printf '# cpu emitted written dropped\n0 10 10 0\n1 20 18 2\n' >"$K/stats"
for c in 0 1; do
	tail -c +65 "$T/gen/cpu$c.out" >"$K/cpu$c"
done
bytes0=$(stat -c %s "$K/cpu0")
bytes1=$(stat -c %s "$K/cpu1")

O=$T/trace/sub
run "$D" -r "$FAKE" -o "$O" -t 1
is "$rc" 0 "drain of a fake debugfs for 1 s: exit 0"
ok_cmd "the output directory was created with its parents" test -d "$O"
for c in 0 1; do
	f=$O/cpu$c.out
	eval "want=\$bytes$c"
	is "$(stat -c %s "$f" 2>/dev/null)" "$((want + 64))" "cpu$c.out is the header plus every byte of cpu$c"
	ok_cmd "cpu$c.out holds the records unchanged" cmp -s <(tail -c +65 "$f") "$K/cpu$c"
	ok_cmd "cpu$c.out passes kmemtrace_check --strict" "$CHECK" --strict -q "$f"
	v=$("$CHECK" -v "$f")
	like "$v" "format 1.3, CPU $c, little-endian, 64-bit, page size $(getconf PAGESIZE), clock monotonic" \
		"cpu$c.out header: module's ABI 1.3, its CPU, host order, word size, page size, clock"
	is "$(stat -c %a "$f")" 600 "cpu$c.out is mode 0600"
done
for f in kmemtrace.meta kallsyms modules; do
	is "$(stat -c %a "$O/$f" 2>/dev/null)" 600 "$f is mode 0600"
done
is "$(stat -c %a "$T/trace")" 700 "a directory kmemtraced creates is mode 0700"
ok_cmd "kallsyms is a copy of /proc/kallsyms" test "$(wc -l <"$O/kallsyms")" -gt 100
meta=$(cat "$O/kmemtrace.meta")
like "$meta" $'\nmeta_version 1\n' "meta: meta_version 1"
like "$meta" $'\nabi_version 1.3\n' "meta: the module's ABI version"
like "$meta" $'\nkernel_release '"$(uname -r)"$'\n' "meta: kernel_release"
like "$meta" $'\nmachine '"$(uname -m)"$'\n' "meta: machine"
like "$meta" $'\npage_size '"$(getconf PAGESIZE)"$'\n' "meta: page_size"
like "$meta" $'\nclock monotonic\n' "meta: clock"
like "$meta" $'\ncpu_node 0 ' "meta: cpu_node of CPU 0"
like "$meta" $'\noverruns_start 5\n' "meta: overruns_start"
like "$meta" $'\noverruns_end 5\n' "meta: overruns_end"
like "$meta" $'\ncpu_records 0 '"$((bytes0 / 64))"$'\n' "meta: records of cpu0"
like "$meta" $'\nstop_reason time limit (-t)\n' "meta: why it stopped"
start=$(sed -n 's/^start_mono_ns //p' "$O/kmemtrace.meta")
end=$(sed -n 's/^end_mono_ns //p' "$O/kmemtrace.meta")
# At least the 1 s asked for (a monotonic clock); under 10 s, over 5x the slowest seen beside two
# nice -n 19 busy loops (1.15 s, start to end with the setup and the final drain).
ok_cmd "meta: end_mono_ns - start_mono_ns is about the 1 s asked for" \
	test -n "$start" -a -n "$end" -a $((end - start)) -ge 1000000000 -a $((end - start)) -lt 10000000000
ok_cmd "meta: no temporary file left" test ! -e "$O/.kmemtrace.meta.tmp"
is "$(cat "$K/enabled")" 0 "tracing is switched off at the end"
like "$err" "traced 2 CPUs for" "summary: first line"
ok_cmd "summary: cpu0 records and bytes" grep -Eq "^ +0 +$((bytes0 / 64)) +$bytes0 +0$" "$T/err"
ok_cmd "summary: cpu1 records, bytes and the module's dropped delta" \
	grep -Eq "^ +1 +$((bytes1 / 64)) +$bytes1 +0$" "$T/err"
ok_cmd "summary: total" grep -Eq "^ +total +$(((bytes0 + bytes1) / 64)) +$((bytes0 + bytes1)) +0$" "$T/err"
like "$err" "total_overruns: 0 during this trace (5 since kmemtrace.ko was loaded)" "summary: total_overruns"

# total_overruns grows from 5 to 9 between kmemtraced's two reads of it: after its meta (written
# after the first read) exists, and before the SIGINT that ends the trace (the second read comes
# after that). A 1 s trace (-t 1) with the write after a set delay, or in a background loop, made
# the verdict depend on the write landing inside that second on a loaded machine.
# The overrun hint: from the module's "# buffers" stats line, four times the sub-buffers, and the
# mem_share they would need when that is more than the module allows now.
hint_run() {	# SUBBUFS TOTAL AVAILABLE ALLOWED
	printf '# buffers given: subbufs %s subbuf_size 65536 bytes_per_cpu %s possible_cpus 2 total %s mem_share 10 available %s allowed %s\n# cpu emitted written dropped\n0 10 10 0\n1 20 18 2\n' \
		"$1" "$(($2 / 2))" "$2" "$3" "$4" >"$K/stats"
	hint_trace
}
hint_trace() {	# a trace into $T/hint during which total_overruns grows by 4; its stderr in $err
	local pid
	printf '5\n' >"$K/total_overruns"
	rm -rf "$T/hint"
	"$D" -f -r "$FAKE" -o "$T/hint" >/dev/null 2>"$T/err" &
	pid=$!
	started "$T/hint" "overrun hint: kmemtraced started"
	printf '9\n' >"$K/total_overruns"
	kill -INT "$pid"
	wait "$pid"
	err=$(cat "$T/err")
}
hint_run 512 67117056 1000000000 100000000
like "$err" "4 records were lost because a buffer was full: reload the module with more sub-buffers than now (subbufs=512), e.g. rmmod kmemtrace; modprobe kmemtrace subbufs=2048 mem_share=$((67117056 / 512 * 2048 * 100 / 1000000000 + 1))" \
	"overrun hint: four times the sub-buffers, with the mem_share they need"
hint_run 64 8437760 1000000000 100000000
like "$err" "modprobe kmemtrace subbufs=256" "overrun hint: four times the sub-buffers"
ok_cmd "overrun hint: no mem_share when the share allows it" bash -c '! grep -q "mem_share=" "$1"' _ "$T/err"
hint_run 2048 4295000000 1000000000 100000000
like "$err" "modprobe kmemtrace subbufs=4096 (more than this machine's memory allows)" \
	"overrun hint: at most 4096 sub-buffers, and says when no share allows them"
printf '# cpu emitted written dropped\n0 10 10 0\n1 20 18 2\n' >"$K/stats"
hint_trace
like "$err" "reload the module with a bigger subbufs= parameter" "overrun hint: a module without a buffers line"
printf '5\n' >"$K/total_overruns"

# Its memory bound holds only without transparent huge pages: off for kmemtraced, as the system
# has them for COMMAND.
if grep -q '^THP_enabled:' /proc/self/status; then
	"$D" -q -f -r "$FAKE" -o "$T/thp" -- sh -c \
		"grep '^THP_enabled:' /proc/\$PPID/status > '$T/thp.daemon'; grep '^THP_enabled:' /proc/self/status > '$T/thp.cmd'"
	like "$(cat "$T/thp.daemon" 2>/dev/null)" "THP_enabled:	0" "kmemtraced runs without transparent huge pages"
	is "$(cat "$T/thp.cmd" 2>/dev/null)" "$(grep '^THP_enabled:' /proc/self/status)" \
		"COMMAND gets transparent huge pages as the system has them"
fi

run "$D" -r "$FAKE" -o "$O" -t 1
is "$rc" 1 "an existing trace without -f: exit 1"
like "$err" "already holds a trace (cpu0.out): use -f" "an existing trace: says to use -f"
: >"$O/cpu9.out"
run "$D" -q -f -r "$FAKE" -o "$O" -t 1
is "$rc" 0 "-f overwrites the trace: exit 0"
is "$err" "" "-q prints nothing"
ok_cmd "-f removes a stale cpu file of another CPU" test ! -e "$O/cpu9.out"
is "$(stat -c %s "$O/cpu0.out")" "$((bytes0 + 64))" "-f: cpu0.out rewritten, not appended"

# -- COMMAND: what was buffered is thrown away, the status comes back.
run "$D" -v -r "$FAKE" -o "$T/cmd" -- sh -c 'exit 7'
is "$rc" 7 "-- COMMAND: exits with the command's status"
like "$err" "discarded $((bytes0 + bytes1)) bytes ($(((bytes0 + bytes1) / 64)) records) buffered before COMMAND" \
	"-- COMMAND: -v says how much old data was discarded"
is "$(stat -c %s "$T/cmd/cpu0.out")" 64 "-- COMMAND: the old records are not in the trace"
like "$(cat "$T/cmd/kmemtrace.meta")" $'\ncommand sh -c \'exit 7\'\n' "meta: the command line"
like "$(cat "$T/cmd/kmemtrace.meta")" $'\ncommand_status 7\n' "meta: command_status"
is "$(cat "$K/enabled")" 0 "-- COMMAND: tracing is switched off at the end"
run "$D" -r "$FAKE" -o "$T/cmd2" -- sh -c 'kill -TERM $$'
is "$rc" 143 "-- COMMAND killed by SIGTERM: exit 128+15"
run "$D" -r "$FAKE" -o "$T/cmd3" -- "$T/no-such-command"
is "$rc" 127 "-- COMMAND that does not exist: exit 127"
like "$err" "cannot run $T/no-such-command: No such file or directory" "-- missing COMMAND: says so"
run "$D" -r "$FAKE" -o "$T/cmd4" ls -l /
is "$rc" 0 "COMMAND without --: its options stay its own"
t0=$(date +%s)
run "$D" -r "$FAKE" -o "$T/cmd5" -t 1 -- sleep 60
is "$rc" 143 "-t ending before COMMAND: the command gets SIGTERM, its status comes back"
# Under 20 s, over 5x the slowest seen under load (about 1.2 s); COMMAND would take 60 s.
ok_cmd "-t ending before COMMAND: no wait for the command's end" test $(($(date +%s) - t0)) -lt 20
like "$(cat "$T/cmd5/kmemtrace.meta")" $'\nstop_reason time limit (-t)\n' "-t before COMMAND: meta says why"
: >"$T/afile"
run "$D" -r "$FAKE" -o "$T/afile"
is "$rc" 3 "-o naming a file: exit 3"
like "$err" "-o $T/afile: not a directory" "-o naming a file: says so"

# SIGINT stops a trace like -t does, and exits 0.
"$D" -q -r "$FAKE" -o "$T/sig" >/dev/null 2>"$T/err" &
pid=$!
started "$T/sig" "SIGINT: kmemtraced started"
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
is "$rc" 0 "SIGINT: exit 0"
like "$(cat "$T/sig/kmemtrace.meta")" $'\nstop_reason SIGINT\n' "SIGINT: meta says why it stopped"
is "$(stat -c %s "$T/sig/cpu1.out")" "$((bytes1 + 64))" "SIGINT: every record drained"

# One reader at a time; a second signal while draining only gets a note.
"$D" -q -r "$FAKE" -o "$T/sig2" >/dev/null 2>"$T/stderr2" &
pid=$!
started "$T/sig2" "SIGINT then SIGTERM: kmemtraced started"
run "$D" -r "$FAKE" -o "$T/second"
is "$rc" 3 "a second kmemtraced on the same module: exit 3"
like "$err" "another kmemtraced is already draining $K" "a second kmemtraced: says why"
ok_cmd "a second kmemtraced: leaves no files" test ! -e "$T/second/kmemtrace.meta"
# Stopped, so both signals are pending together however slow this machine:
# sent one after the other, the first could finish the drain before the second.
kill -STOP "$pid"
kill -INT "$pid"
kill -TERM "$pid"
kill -CONT "$pid"
rc=0
wait "$pid" || rc=$?
is "$rc" 0 "SIGINT then SIGTERM: exit 0"
like "$(cat "$T/stderr2")" "signal received while draining: finishing the files first" \
	"SIGINT then SIGTERM: the second signal is noted"
is "$(stat -c %s "$T/sig2/cpu0.out")" "$((bytes0 + 64))" "SIGINT then SIGTERM: cpu0.out complete"
ok_cmd "SIGINT then SIGTERM: the meta is complete" grep -q '^end_mono_ns ' "$T/sig2/kmemtrace.meta"

# A file size limit that falls inside a record: the write fails as on a full disk. The limit
# is per file and kallsyms (a copy of /proc/kallsyms) must fit, so cpu0 gets a bigger trace.
ks=$(wc -c </proc/kallsyms)
limit=$((ks + 4096 + 64 * 10 + 30))
FAKE2=$T/fake2
mkdir -p "$FAKE2/kmemtrace"
cp "$K/abi_version" "$K/enabled" "$K/total_overruns" "$K/stats" "$FAKE2/kmemtrace/"
"$GEN" -o "$T/gen2" --cpus 1 --events $((limit / 64 + 10000)) --seed 3 >/dev/null
tail -c +65 "$T/gen2/cpu0.out" >"$FAKE2/kmemtrace/cpu0"
if [ "$(stat -c %s "$FAKE2/kmemtrace/cpu0")" -gt "$limit" ] && command -v prlimit >/dev/null; then
	run prlimit --fsize="$limit" "$D" -r "$FAKE2" -o "$T/full" -t 2
	is "$rc" 3 "write failure (file size limit): exit 3"
	like "$err" "$T/full/cpu0.out: write failed: File too large" "write failure: names the file and the error"
	like "$err" "every file in $T/full ends on a whole record" "write failure: says the files are whole"
	s=$(stat -c %s "$T/full/cpu0.out")
	is "$((s % 64))" 0 "write failure: cpu0.out cut back to a whole record"
	ok_cmd "write failure: cpu0.out kept every whole record that fit" test "$s" -ge $((limit - 63))
	ok_cmd "write failure: cpu0.out passes kmemtrace_check --strict" "$CHECK" --strict -q "$T/full/cpu0.out"
	ok_cmd "write failure: cpu0.out holds the first records unchanged" \
		cmp -s <(tail -c +65 "$T/full/cpu0.out") <(head -c $((s - 64)) "$FAKE2/kmemtrace/cpu0")
	like "$(cat "$T/full/kmemtrace.meta")" $'\nerror '"$T/full/cpu0.out: write failed" "write failure: meta records the error"
	is "$(cat "$FAKE2/kmemtrace/enabled")" 0 "write failure: tracing switched off"
else
	for i in 1 2 3 4 5 6 7 8 9; do skip "no prlimit, or the generated trace is too small"; done
fi

# A CPU that comes online during the trace: its relay file appears, it gets a file.
rm -f "$K/cpu1"
"$D" -q -r "$FAKE" -o "$T/hot" >/dev/null 2>"$T/err" &
pid=$!
started "$T/hot" "hotplug: kmemtraced started"
ok_cmd "hotplug: no cpu1.out before cpu1 exists" test ! -e "$T/hot/cpu1.out"
tail -c +65 "$T/gen/cpu1.out" >"$T/cpu1.tmp"
mv "$T/cpu1.tmp" "$K/cpu1"
# kmemtraced looks for new CPUs every 0.5 s (RESCAN_MS): wait for the whole of cpu1 (a SIGTERM
# before its scan would leave no cpu1.out), however long a loaded machine takes; the check below
# still fails if it never comes.
cpu1_whole() { [ "$(stat -c %s "$T/hot/cpu1.out" 2>/dev/null)" = "$((bytes1 + 64))" ]; }
wait_for 600 cpu1_whole
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
is "$rc" 0 "hotplug: exit 0 on SIGTERM"
is "$(stat -c %s "$T/hot/cpu1.out" 2>/dev/null)" "$((bytes1 + 64))" "hotplug: cpu1.out has all of cpu1"
ok_cmd "hotplug: cpu1.out passes kmemtrace_check --strict" "$CHECK" --strict -q "$T/hot/cpu1.out"

done_testing
