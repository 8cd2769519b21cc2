#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 45-truth.t - kmemtrace against the kernel's own record (ftrace) of the same tracepoints.
#
# On the kernel the guest boots, so that a changed tracepoint field or a missed event on a new
# kernel fails here rather than in a user's report. In one boot:
# 1. each hooked event's tracefs format holds the fields a kmemtrace record carries, with types
#    it can record, and its full field list is the one expected for the kernel series (the
#    table below; a series with no entry fails, printing what it observed);
# 2. a tracefs instance (trace_clock mono, the clock of kmemtrace's timestamps; a buffer that
#    loses nothing) records the four slab events and the two page events around kmemtrace
#    (pages=1): ftrace on, kmemtrace on, the oracle's run and a few ls/find, kmemtrace off,
#    ftrace off. tests/guest/truth.py then pairs, per CPU, every kmemtrace event with ftrace's
#    record of it and compares every field, checks that ftrace has nothing kmemtrace missed
#    while it was on, that neither side lost anything, and the oracle's counts on both sides;
# 3. dmesg is clean and every cpuN file passes kmemtrace_check --strict (truth.py wrap puts the
#    file header of Documentation/trace-format.md in front of the records cat read).
# Runs without kmemtraced (the cpuN files are read with cat once tracing is off), and boots
# kmemtrace-vm's default kernel: KMT_KVER=RELEASE picks another one.
# Bounds: the guest's -T 180 and the test's 210 s are over 5x the slowest, 6.1 686-pae's 34 s (the
# whole test 36 s), in make check beside a busy loop and a fuzzer at nice 19 (and another guest
# test).
KMT_TEST_TIMEOUT=210
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

[ -f "$KMT_TOP/kmod/Kbuild" ] || skip_all "kmod/ not written yet"
[ -f "$KMT_TOP/tests/kmod/kmemtrace_oracle.c" ] || skip_all "the oracle module is not written yet"
require_cmds python3

mkdir -p "$KMT_TEST_DIR"
TRUTH=$KMT_TOP/tests/guest/truth.py
PAGE_SIZE=$(getconf PAGESIZE)
drain=$KMT_TEST_DIR/rawdrain
guest_cc -static -O2 -o "$drain" "$KMT_TOP/tests/guest/rawdrain.c" ||
	bail "cannot build a static helper (libc6-dev)"

# The full field list of each event kmemtrace hooks, per kernel series: MAJOR.MINOR of the
# guest's release, "-rt" added for PREEMPT_RT. As truth.py prints it: "SERIES EVENT", then one
# indented line per field, "TYPE NAME:OFFSET:SIZE:u|s"; "common" is ftrace's entry header;
# "S1,S2 EVENT" gives two series one list. A series with no entry fails. To add one: boot it
# (KMT_KVER=RELEASE prove -v tests/guest/45-truth.t), read the observed list the test prints
# (also left in truth/observed-formats in the test's directory under build/guest-tests), check
# it against that kernel's include/trace/events/kmem.h and kmod/kmt_compat.h, then add it.
expected=$KMT_TEST_DIR/expected-formats
cat >"$expected" <<'EOF'
# Linux 6.1 (Debian 6.1.0-56-amd64); the same on arm64 and s390x (6.1.0-56-arm64, 6.1.0-50-s390x)
# but for kmem_cache_free's name, since char is unsigned there
6.1,6.1-aarch64,6.1-s390x common
	unsigned short common_type:0:2:u
	unsigned char common_flags:2:1:u
	unsigned char common_preempt_count:3:1:u
	int common_pid:4:4:s
6.1,6.1-aarch64,6.1-s390x kmalloc
	unsigned long call_site:8:8:u
	const void * ptr:16:8:u
	size_t bytes_req:24:8:u
	size_t bytes_alloc:32:8:u
	unsigned long gfp_flags:40:8:u
	int node:48:4:s
6.1,6.1-aarch64,6.1-s390x kmem_cache_alloc
	unsigned long call_site:8:8:u
	const void * ptr:16:8:u
	size_t bytes_req:24:8:u
	size_t bytes_alloc:32:8:u
	unsigned long gfp_flags:40:8:u
	int node:48:4:s
	bool accounted:52:1:u
6.1,6.1-aarch64,6.1-s390x kfree
	unsigned long call_site:8:8:u
	const void * ptr:16:8:u
6.1 kmem_cache_free
	unsigned long call_site:8:8:u
	const void * ptr:16:8:u
	__data_loc char[] name:24:4:s
6.1,6.1-aarch64,6.1-s390x mm_page_alloc
	unsigned long pfn:8:8:u
	unsigned int order:16:4:u
	unsigned long gfp_flags:24:8:u
	int migratetype:32:4:s
6.1,6.1-aarch64,6.1-s390x mm_page_free
	unsigned long pfn:8:8:u
	unsigned int order:16:4:u
6.1-aarch64,6.1-s390x kmem_cache_free
	unsigned long call_site:8:8:u
	const void * ptr:16:8:u
	__data_loc char[] name:24:4:u
# Linux 6.1 on i386 (Debian 6.1.0-50-686-pae): longs, size_t and pointers are 4 bytes
6.1-i686 common
	unsigned short common_type:0:2:u
	unsigned char common_flags:2:1:u
	unsigned char common_preempt_count:3:1:u
	int common_pid:4:4:s
6.1-i686 kmalloc
	unsigned long call_site:8:4:u
	const void * ptr:12:4:u
	size_t bytes_req:16:4:u
	size_t bytes_alloc:20:4:u
	unsigned long gfp_flags:24:4:u
	int node:28:4:s
6.1-i686 kmem_cache_alloc
	unsigned long call_site:8:4:u
	const void * ptr:12:4:u
	size_t bytes_req:16:4:u
	size_t bytes_alloc:20:4:u
	unsigned long gfp_flags:24:4:u
	int node:28:4:s
	bool accounted:32:1:u
6.1-i686 kfree
	unsigned long call_site:8:4:u
	const void * ptr:12:4:u
6.1-i686 kmem_cache_free
	unsigned long call_site:8:4:u
	const void * ptr:12:4:u
	__data_loc char[] name:16:4:s
6.1-i686 mm_page_alloc
	unsigned long pfn:8:4:u
	unsigned int order:12:4:u
	unsigned long gfp_flags:16:4:u
	int migratetype:20:4:s
6.1-i686 mm_page_free
	unsigned long pfn:8:4:u
	unsigned int order:12:4:u
# Linux 6.1 PREEMPT_RT (Debian 6.1.0-56-rt-amd64): the entry header has one more field,
# which moves the others
6.1-rt common
	unsigned short common_type:0:2:u
	unsigned char common_flags:2:1:u
	unsigned char common_preempt_count:3:1:u
	int common_pid:4:4:s
	unsigned char common_preempt_lazy_count:8:1:u
6.1-rt kmalloc
	unsigned long call_site:16:8:u
	const void * ptr:24:8:u
	size_t bytes_req:32:8:u
	size_t bytes_alloc:40:8:u
	unsigned long gfp_flags:48:8:u
	int node:56:4:s
6.1-rt kmem_cache_alloc
	unsigned long call_site:16:8:u
	const void * ptr:24:8:u
	size_t bytes_req:32:8:u
	size_t bytes_alloc:40:8:u
	unsigned long gfp_flags:48:8:u
	int node:56:4:s
	bool accounted:60:1:u
6.1-rt kfree
	unsigned long call_site:16:8:u
	const void * ptr:24:8:u
6.1-rt kmem_cache_free
	unsigned long call_site:16:8:u
	const void * ptr:24:8:u
	__data_loc char[] name:32:4:s
6.1-rt mm_page_alloc
	unsigned long pfn:16:8:u
	unsigned int order:24:4:u
	unsigned long gfp_flags:32:8:u
	int migratetype:40:4:s
6.1-rt mm_page_free
	unsigned long pfn:16:8:u
	unsigned int order:24:4:u
# Linux 6.12 (Debian 6.12.117+deb12-amd64 and -rt-amd64): 6.1's fields, but the
# __data_loc of kmem_cache_free's name is unsigned
6.12,6.12-rt common
	unsigned short common_type:0:2:u
	unsigned char common_flags:2:1:u
	unsigned char common_preempt_count:3:1:u
	int common_pid:4:4:s
6.12,6.12-rt kmalloc
	unsigned long call_site:8:8:u
	const void * ptr:16:8:u
	size_t bytes_req:24:8:u
	size_t bytes_alloc:32:8:u
	unsigned long gfp_flags:40:8:u
	int node:48:4:s
6.12,6.12-rt kmem_cache_alloc
	unsigned long call_site:8:8:u
	const void * ptr:16:8:u
	size_t bytes_req:24:8:u
	size_t bytes_alloc:32:8:u
	unsigned long gfp_flags:40:8:u
	int node:48:4:s
	bool accounted:52:1:u
6.12,6.12-rt kfree
	unsigned long call_site:8:8:u
	const void * ptr:16:8:u
6.12,6.12-rt kmem_cache_free
	unsigned long call_site:8:8:u
	const void * ptr:16:8:u
	__data_loc char[] name:24:4:u
6.12,6.12-rt mm_page_alloc
	unsigned long pfn:8:8:u
	unsigned int order:16:4:u
	unsigned long gfp_flags:24:8:u
	int migratetype:32:4:s
6.12,6.12-rt mm_page_free
	unsigned long pfn:8:8:u
	unsigned int order:16:4:u
# Linux 7.3 (Debian 7.3.4+deb13-amd64 and -rt-amd64): kmem_cache_alloc gained the cache's
# name (as in include/trace/events/kmem.h of 7.3), which moves its later fields
7.3,7.3-rt common
	unsigned short common_type:0:2:u
	unsigned char common_flags:2:1:u
	unsigned char common_preempt_count:3:1:u
	int common_pid:4:4:s
7.3,7.3-rt kmalloc
	unsigned long call_site:8:8:u
	const void * ptr:16:8:u
	size_t bytes_req:24:8:u
	size_t bytes_alloc:32:8:u
	unsigned long gfp_flags:40:8:u
	int node:48:4:s
7.3,7.3-rt kmem_cache_alloc
	unsigned long call_site:8:8:u
	const void * ptr:16:8:u
	__data_loc char[] name:24:4:u
	size_t bytes_req:32:8:u
	size_t bytes_alloc:40:8:u
	unsigned long gfp_flags:48:8:u
	int node:56:4:s
	bool accounted:60:1:u
7.3,7.3-rt kfree
	unsigned long call_site:8:8:u
	const void * ptr:16:8:u
7.3,7.3-rt kmem_cache_free
	unsigned long call_site:8:8:u
	const void * ptr:16:8:u
	__data_loc char[] name:24:4:u
7.3,7.3-rt mm_page_alloc
	unsigned long pfn:8:8:u
	unsigned int order:16:4:u
	unsigned long gfp_flags:24:8:u
	int migratetype:32:4:s
7.3,7.3-rt mm_page_free
	unsigned long pfn:8:8:u
	unsigned int order:16:4:u
EOF

guest=$KMT_TEST_DIR/truth.sh
cat >"$guest" <<'EOS'
#!/bin/sh
# In the guest: ftrace (a tracefs instance) around kmemtrace, one small workload, then both
# sides' raw records and what the host needs to read them.
T=/sys/kernel/tracing
I=$T/instances/kmt45
D=$KMT_DEBUGFS
OR=/sys/kernel/debug/kmemtrace_oracle
O=$KMT_OUT
EVENTS="kmalloc kmem_cache_alloc kfree kmem_cache_free mm_page_alloc mm_page_free"
step() { echo "$*" >> $O/steps; }

uname -r > $O/uname
uname -v > $O/uname-v
uname -m > $O/uname-m
[ -d $T/events ] || mount -t tracefs tracefs $T || step "cannot mount tracefs"
mkdir -p $O/format $O/ft $O/kmt
for e in $EVENTS; do
	cat $T/events/kmem/$e/format > $O/format/$e || step "no format for $e"
done
cat $T/events/ftrace/print/format > $O/format/print
cat $T/events/header_page > $O/format/header_page

# The instance: off, on kmemtrace's clock, 4 MiB a CPU (the run makes a few hundred KiB).
mkdir $I || step "cannot create a tracefs instance"
echo 0 > $I/tracing_on
echo mono > $I/trace_clock || step "trace_clock mono refused"
echo 4096 > $I/buffer_size_kb || step "buffer_size_kb refused"
cat $I/trace_clock > $O/ft/trace_clock
for e in $EVENTS; do
	echo 1 > $I/events/kmem/$e/enable || step "cannot enable $e"
done
# ftrace's probes attach before kmemtrace's (so they run first), and its window holds
# kmemtrace's. The markers bound the time kmemtrace was surely on.
echo 1 > $I/tracing_on
echo 1 > $D/enabled || step "cannot enable kmemtrace"
echo kmt45-on > $I/trace_marker
echo 1 > $OR/run || step "the oracle's run failed"
ls /sys/kernel/slab > /dev/null
ls -l /sys/module/kmemtrace_oracle > /dev/null
find /sys/kernel/debug/kmemtrace > /dev/null
echo kmt45-off > $I/trace_marker
echo 0 > $D/enabled || step "cannot disable kmemtrace"
echo 0 > $I/tracing_on
for e in $EVENTS; do
	echo 0 > $I/events/kmem/$e/enable
done

cat $D/stats > $O/kmt/stats
cat $D/total_overruns > $O/kmt/total_overruns
cat $D/abi_version > $O/kmt/abi_version
for f in $I/per_cpu/cpu*; do
	c=${f##*/cpu}
	cat $f/stats > $O/ft/cpu$c.stats
	rawdrain $f/trace_pipe_raw $O/ft/cpu$c.raw > /dev/null || step "cannot read cpu$c trace_pipe_raw"
done
# Tracing is off and flushed: cat gives each CPU's records (no file header) and stops.
for f in $D/cpu*; do
	cat $f > $O/kmt/${f##*/}.raw || step "cannot read $f"
done
cat $OR/expected > $O/expected
cat /proc/kallsyms > $O/kallsyms
rmdir $I || step "cannot remove the tracefs instance"
step done
EOS
chmod +x "$guest"

numa=()
guest_has_numa && numa=(--numa)
vm_ok truth "${numa[@]}" -c 2 -T 180 -p 'start_disabled=1 pages=1' -m kmemtrace_oracle --no-daemon \
	-a "$guest" -a "$drain" -- truth.sh || true
R=$VM_OUT
is "$(command_status)" 0 "the guest script ran"
is "$(cat "$R/steps" 2>/dev/null)" "done" "every step of the guest script succeeded"
dmesg_clean "guest dmesg is clean (ftrace and kmemtrace side by side)"
[ -s "$R/uname" ] || bail "no results from the guest"

# 1. The formats.
tap_checks python3 "$TRUTH" formats "$expected" "$R"
# 2. The records, side by side.
tap_checks python3 "$TRUTH" compare "$R" "$PAGE_SIZE"
# 3. The files themselves.
python3 "$TRUTH" wrap "$R" "$PAGE_SIZE"
ok "every kmemtrace cpuN file passes kmemtrace_check --strict" all_strict "$R/kmt"

done_testing
