#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 53-gfp-names.t - GFP flags by the traced kernel's names: in a guest, kmemtraced traces a small
# workload while ftrace records the same kmem events (kmalloc, kmem_cache_alloc, mm_page_alloc,
# booted with no_hash_pointers so that both show real addresses). kmemtraced must have copied
# the kmem events' tracepoint formats into the trace, and kmemtrace-report --raw must name every
# event's mask as ftrace named it (tests/guest/gfp.py matches the events by address and sizes);
# without tracepoint_formats it prints the masks in hex. --pages names the page table's masks the
# same way. KMT_GFP_CAPTURE=DIR also saves the trace's tracepoint_formats and each mask with
# ftrace's names for it into DIR/RELEASE/, the inputs of tests/unit/test_report_gfp.c
# (tests/gfp/). On another kernel: KMT_KVER=RELEASE prove tests/guest/53-gfp-names.t
KMT_TEST_TIMEOUT=240
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

REPORT=$(host_tool kmemtrace-report)
[ -x "$REPORT" ] || skip_all "kmemtrace-report not built (make tools)"
require_cmds python3

mkdir -p "$KMT_TEST_DIR"
guest=$KMT_TEST_DIR/gfp.sh
cat >"$guest" <<'EOS'
#!/bin/sh
# In the guest, under kmemtraced: ftrace records the same kmem events meanwhile.
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T 2>/dev/null
[ -d $T/events ] || T=$KMT_DEBUGFS/../tracing
echo 0 > $T/tracing_on
echo 4096 > $T/buffer_size_kb
echo > $T/trace
for e in kmalloc kmem_cache_alloc mm_page_alloc; do echo 1 > $T/events/kmem/$e/enable; done
echo 1 > $T/tracing_on
i=0
while [ $i -lt 5 ]; do
	ls -l /sys/kernel/slab > /dev/null
	cat /proc/meminfo /proc/self/status > /dev/null
	dd if=/dev/zero of=/tmp/f bs=64k count=4 2>/dev/null
	rm -f /tmp/f
	i=$((i + 1))
done
echo 0 > $T/tracing_on
echo 0 > $T/events/kmem/enable
cat $T/trace > $KMT_OUT/ftrace.txt
cat $T/per_cpu/cpu*/stats > $KMT_OUT/ftrace.stats
EOS
chmod +x "$guest"

vm_ok gfp -c 2 -T 150 -p 'pages=1' --append no_hash_pointers -a "$guest" -- gfp.sh
o=$VM_OUT
is "$(command_status)" 0 "the script ran in the guest"
dmesg_clean
[ -s "$o/ftrace.txt" ] || bail "no ftrace output from the guest"
[ -s "$o/tracepoint_formats" ] || bail "kmemtraced wrote no tracepoint_formats"
like "$(grep '^tracepoint_formats ' "$o/kmemtrace.meta")" '^tracepoint_formats /.*/events/kmem$' \
	"kmemtrace.meta says where tracepoint_formats came from"
for e in kmalloc kmem_cache_alloc kfree kmem_cache_free mm_page_alloc mm_page_free; do
	ok "tracepoint_formats has kmem/$e" grep -qx "event kmem/$e" "$o/tracepoint_formats"
done

# The same trace without its formats: masks in hex, line for line.
hx=$KMT_TEST_DIR/hex
rm -rf "$hx" && mkdir -p "$hx"
ln -s "$o"/cpu*.out "$o/kmemtrace.meta" "$hx/"
"$REPORT" --raw --raw-ip "$o" >"$KMT_TEST_DIR/raw.names" 2>"$KMT_TEST_DIR/raw.err"
is "$?" 0 "kmemtrace-report --raw: exit 0" || note_file "$KMT_TEST_DIR/raw.err"
"$REPORT" --raw --raw-ip "$hx" >"$KMT_TEST_DIR/raw.hex" 2>/dev/null
is "$(grep -c ' kmalloc .* gfp=0x' "$KMT_TEST_DIR/raw.hex")" \
	"$(grep -c ' kmalloc ' "$KMT_TEST_DIR/raw.hex")" "without tracepoint_formats: every mask in hex"

pairs=$KMT_TEST_DIR/pairs
tap_checks python3 "$KMT_TOP/tests/guest/gfp.py" "$o/ftrace.txt" "$KMT_TEST_DIR/raw.names" \
	"$KMT_TEST_DIR/raw.hex" "$pairs"

# --pages: each mask's row named as --raw names that mask.
"$REPORT" --pages --json "$o" 2>/dev/null | python3 -c '
import json, sys
rows = json.load(sys.stdin)["pages_by_gfp"]
for r in rows:
    print(r["gfp_flags"], r["gfp_names"])' | sort >"$KMT_TEST_DIR/pages.pairs"
awk '$5 == "page_alloc" { for (i = 6; i <= NF; i++) if ($i ~ /^gfp=/) print substr($i, 5) }' \
	"$KMT_TEST_DIR/raw.names" | sort -u >"$KMT_TEST_DIR/raw.pagenames"
ok "--pages --json: the table by GFP mask has rows" test -s "$KMT_TEST_DIR/pages.pairs"
is "$(cut -d' ' -f2 "$KMT_TEST_DIR/pages.pairs" | sort -u)" "$(cat "$KMT_TEST_DIR/raw.pagenames")" \
	"--pages --json: the page allocations' masks named as --raw names them"
is "$(awk 'NR == FNR { n[$1] = $2; next } ($1 in n) && n[$1] != $2' "$pairs" \
	"$KMT_TEST_DIR/pages.pairs")" "" "--pages --json: named as ftrace named them"

if [ -n "${KMT_GFP_CAPTURE:-}" ]; then
	d=$KMT_GFP_CAPTURE/$(guest_kernel)
	mkdir -p "$d" && cp "$o/tracepoint_formats" "$pairs" "$d/" && diag "saved in $d"
fi

done_testing
