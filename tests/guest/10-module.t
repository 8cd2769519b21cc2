#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 10-module.t - kmemtrace.ko in a two-node guest (one node where there is no NUMA): debugfs files, root only, rmmod refused while a
# buffer is open, the oracle's records in the cpu files, exact accounting with tiny buffers under
# load (emitted == written + dropped, LOST markers), parameter checks, page events.
# Bounds: the guest's -T 330 and the test's 360 s are over 5x the slowest, 6.1 686-pae's 65 s, in
# make check beside a busy loop and a fuzzer at nice 19 (and another guest test).
KMT_TEST_TIMEOUT=360
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p "$KMT_TEST_DIR"
check=$KMT_TOP/build/kmemtrace_check
py=$KMT_TEST_DIR/records.py
guest=$KMT_TEST_DIR/module-check.sh
runas=$KMT_TEST_DIR/runas
ringread=$KMT_TEST_DIR/ringread

require_cmds python3

# A static helper that drops to an unprivileged uid (tests/guest/runas.c).
build_runas "$runas"
# kmemtraced's way of reading a buffer, mapped (tests/guest/ringread.c).
guest_cc -static -O2 -Wall -Wextra -Werror -I"$KMT_TOP/abi" -o "$ringread" "$KMT_TOP/tests/guest/ringread.c" ||
	bail "cannot build a static ringread (libc6-dev)"

# --- In the guest ------------------------------------------------------------------------------
# Everything it finds goes to $KMT_OUT as small files; the host judges them below.
cat >"$guest" <<'EOS'
#!/bin/sh
D=$KMT_DEBUGFS
O=/sys/kernel/debug/kmemtrace_oracle
OUT=$KMT_OUT
KO=$KMT_MODDIR/kmemtrace.ko
P=/sys/module/kmemtrace/parameters

save_buffers() {	# PREFIX: every cpuN file of the channel to OUT/PREFIX_cpuN
	for f in "$D"/cpu*; do cat "$f" > "$OUT/$1_${f##*/}"; done
}

# Files, modes and owners, as loaded by the bench with default parameters.
for f in "$D"/*; do stat -c '%n %a %u %g' "$f"; done > "$OUT/modes"
cat "$D/abi_version" > "$OUT/abi_version"
# The oracle was loaded after kmemtrace.ko: its init symbols, kept past its init.
cat "$D/init_kallsyms" > "$OUT/init_kallsyms"
cat "$D/enabled" > "$OUT/enabled_at_load"
for f in "$P"/*; do echo "${f##*/} $(cat "$f")"; done > "$OUT/params_default"
ls /sys/kernel/slab | grep -E '^kmalloc-[0-9]+k?$' > "$OUT/kmalloc_classes"

# Root only: open debugfs itself to everyone, so only the files' own modes stand in the way.
mount -o remount,mode=0755 /sys/kernel/debug
for f in "$D"/*; do
	if runas 1000 cat "$f" > /dev/null 2>&1; then r=readable; else r=denied; fi
	echo "${f##*/} $r"
done > "$OUT/nonroot"
if runas 1000 sh -c "echo 0 > $D/enabled" 2> /dev/null; then r=writable; else r=denied; fi
echo "enabled-write $r" >> "$OUT/nonroot"
if runas 1000 sh -c "echo tgid=1 > $D/filter" 2> /dev/null; then r=writable; else r=denied; fi
echo "filter-write $r" >> "$OUT/nonroot"
head -n 1 "$D/filter" > "$OUT/filter_after_nonroot"
cat "$D/enabled" > "$OUT/enabled_after_nonroot"
mount -o remount,mode=0700 /sys/kernel/debug

# The oracle's pattern, traced with the default buffers; writing 0 flushes.
echo 1 > "$O/run"
cat "$O/expected" > "$OUT/expected"
echo 0 > "$D/enabled"
# Through read() and the mapped ring in turn, which share one read position: cpu0's first
# 100 records read(), the rest mapped; cpu1 mapped whole (judged with the rest below).
dd if="$D/cpu0" of="$OUT/oracle_cpu0.1read" bs=6400 count=1 2> /dev/null
ringread "$D/cpu0" "$OUT/oracle_cpu0.2ring" > "$OUT/ring_oracle0"
ringread "$D/cpu1" "$OUT/oracle_cpu1.ring" > "$OUT/ring_oracle1"
cat "$D/stats" > "$OUT/oracle_stats"
cat "$D/total_overruns" > "$OUT/oracle_overruns"
cat /proc/kallsyms > "$OUT/kallsyms"

# rmmod while a buffer file is open must be refused, and must work once it is closed.
exec 3< "$D/cpu0"
if rmmod kmemtrace 2> "$OUT/rmmod_busy.err"; then r=unloaded; else r=refused; fi
echo "$r" > "$OUT/rmmod_busy"
grep -c '^kmemtrace ' /proc/modules > "$OUT/loaded_while_open"
exec 3<&-
if rmmod kmemtrace; then r=unloaded; else r=refused; fi
echo "$r" > "$OUT/rmmod_closed"

# Parameters: out of range refused, subbuf_size rounded to whole records, start_disabled.
if insmod "$KO" subbufs=1 2> /dev/null; then r=loaded; rmmod kmemtrace; else r=refused; fi
echo "$r" > "$OUT/param_subbufs1"
if insmod "$KO" stack_depth=8 stack_cache=65537 2> /dev/null; then r=loaded; rmmod kmemtrace; else r=refused; fi
echo "$r" > "$OUT/param_stack_cache_big"
if insmod "$KO" stack_depth=8 stack_cache=1 start_disabled=1; then
	sed -n 1p "$D/stacks" > "$OUT/param_stack_cache_small"
	rmmod kmemtrace
fi
if insmod "$KO" subbuf_size=4000 subbufs=4 start_disabled=1; then
	cat "$P/subbuf_size" > "$OUT/param_rounded"
	cat "$D/enabled" > "$OUT/enabled_start_disabled"
	cat "$D/stats" > "$OUT/stats_start_disabled"
	ls "$D"/cpu* | wc -l > "$OUT/ncpufiles"
	rmmod kmemtrace
fi

# Tiny buffers under the load generator: most records are dropped. Phase 1 stops tracing with
# the buffers full and reads them out; phase 2 restarts and stops, which writes the pending LOST
# records now that there is room, and reads the rest.
insmod "$KO" subbufs=2 subbuf_size=4096
echo 4 > "$O/load"
sleep 2
echo 0 > "$D/enabled"
cat "$O/load" > "$OUT/tiny_load"
echo 0 > "$O/load"
save_buffers tiny1
echo 1 > "$D/enabled"
echo 0 > "$D/enabled"
save_buffers tiny2
cat "$D/stats" > "$OUT/tiny_stats"
cat "$D/total_overruns" > "$OUT/tiny_overruns"
rmmod kmemtrace

# Page allocator events on request (read out in two phases too, in case a buffer filled).
insmod "$KO" pages=1 subbufs=16 subbuf_size=65536
echo 1 > "$O/run"
echo 0 > "$D/enabled"
save_buffers pages1
echo 1 > "$D/enabled"
echo 0 > "$D/enabled"
save_buffers pages2
cat "$D/stats" > "$OUT/pages_stats"
cat "$D/total_overruns" > "$OUT/pages_overruns"
rmmod kmemtrace

# Who may read a buffer while tracing: a task bound to its CPU alone; after, anyone.
insmod "$KO" subbufs=16 subbuf_size=65536
echo 1 > "$O/run"
if cat "$D/cpu0" > /dev/null 2> "$OUT/read_unbound.err"; then r=read; else r=refused; fi
echo "$r" > "$OUT/read_unbound"
taskset -c 0 cat "$D/cpu0" > "$OUT/read_bound.bin" 2> "$OUT/read_bound.err" && r=read || r=refused
echo "$r" > "$OUT/read_bound"
# The mapped ring keeps the same rule.
ringread "$D/cpu0" "$OUT/ring_unbound.bin" > "$OUT/ring_unbound" 2>&1
taskset -c 0 ringread "$D/cpu0" "$OUT/ring_bound.bin" > "$OUT/ring_bound" 2>&1
echo 0 > "$D/enabled"
if cat "$D/cpu1" > "$OUT/read_after.bin" 2> "$OUT/read_after.err"; then r=read; else r=refused; fi
echo "$r" > "$OUT/read_after"
rmmod kmemtrace
dmesg > "$OUT/dmesg_guest"
EOS
chmod +x "$guest"

# --- Record reader for the checks ----------------------------------------------------------
# Prints "CHECK<TAB>name<TAB>got<TAB>want" lines; the expectations come from the oracle's
# "expected" file, the guest's stats and the kmalloc size classes, never from an earlier run.
cat >"$py" <<'EOF'
import bisect, collections, os, struct, sys
# The traced kernel's byte order (tests/guest/lib.sh exports it: ">" for s390x).
E = os.environ.get("KMT_GUEST_ENDIAN", "<")
# And its file-header fields (abi/kmemtrace_abi.h: KMT_BYTE_ORDER_LE 1, _BE 2; pointer bits).
BYTE_ORDER = 2 if E == ">" else 1
WORD_BITS = int(os.environ.get("KMT_GUEST_WORD_BITS", "64"))

KMALLOC, CACHE_ALLOC, PAGE_ALLOC, KFREE, CACHE_FREE, PAGE_FREE, DESC, LOST = range(1, 9)
# SLUB's kmalloc size classes: the guest's own (kmalloc_classes: its /sys/kernel/slab names;
# arm64's start at 128), 4 KiB pages.
def class_size(name):
    n = name[len("kmalloc-"):]
    return int(n[:-1]) * 1024 if n.endswith("k") else int(n)
CLASSES = sorted(class_size(l.strip()) for l in open(os.environ["KMT_CLASSES"])
                 if l.strip()) if "KMT_CLASSES" in os.environ else []
PAGE = 4096

def check(name, got, want):
    print("CHECK\t%s\t%s\t%s" % (name, got, want))

def records(path):
    data = open(path, "rb").read()
    out = []
    for off in range(0, len(data) - len(data) % 64, 64):
        r = data[off:off + 64]
        t, fl, cpu, seq, ts = struct.unpack_from(E + "BBHIQ", r)
        d = dict(type=t, flags=fl, cpu=cpu, seq=seq, ts=ts)
        if t == DESC:
            d["cache"], d["osz"], d["size"] = struct.unpack_from(E + "QII", r, 16)
            d["name"] = r[32:64].split(b"\0")[0].decode()
        elif t == LOST:
            d["count"], d["first"], d["total"] = struct.unpack_from(E + "QQQ", r, 16)
        else:
            (d["cs"], d["ptr"], d["cache"], d["req"], d["alloc"], d["gfp"], d["node"],
             d["pid"], d["cpu_node"], _) = struct.unpack_from(E + "QQQIIIiIhH", r, 16)
        out.append(d)
    return out, len(data) % 64

def cpu_of(path):
    return int(path.rsplit("cpu", 1)[1].split(".")[0])

def kmalloc_class(size):
    for c in CLASSES:
        if size <= c:
            return c
    order = 0
    while PAGE << order < size:
        order += 1
    return PAGE << order

def header(cpu):
    return struct.pack(E + "IHHHHHBBB3sIQQ24s", 0x52544D4B, 1, 0, 64, 64, cpu, BYTE_ORDER, WORD_BITS, 1,
                       b"\0" * 3, PAGE, 0, 0, b"\0" * 24)

def cmd_mkout(outdir, *paths):
    """Concatenate each CPU's pieces behind a file header: DIR/cpuN.out for kmemtrace_check."""
    os.makedirs(outdir, exist_ok=True)
    pieces = collections.defaultdict(list)
    for p in paths:
        pieces[cpu_of(p)].append(p)
    for cpu, ps in pieces.items():
        with open(os.path.join(outdir, "cpu%d.out" % cpu), "wb") as f:
            f.write(header(cpu))
            for p in ps:
                f.write(open(p, "rb").read())

def read_stats(path):
    stats = {}
    for line in open(path):
        if not line.startswith("#"):
            cpu, e, w, d = map(int, line.split())
            stats[cpu] = (e, w, d)
    return stats

def cmd_account(stats_path, overruns_path, *paths):
    """Per CPU: the files hold exactly the written records, LOST markers account for every
    dropped one, seq runs from 0 without a gap, and emitted == written + dropped."""
    stats = read_stats(stats_path)
    streams = collections.defaultdict(list)
    for p in paths:
        recs, tail = records(p)
        check("%s: whole records" % os.path.basename(p), tail, 0)
        streams[cpu_of(p)] += recs
    total_dropped = 0
    for cpu in sorted(stats):
        e, w, d = stats[cpu]
        total_dropped += d
        recs = streams.get(cpu, [])
        data = [r for r in recs if r["type"] != LOST]
        lost = [r for r in recs if r["type"] == LOST]
        check("cpu%d: emitted == written + dropped" % cpu, e, w + d)
        check("cpu%d: data records in the file == written" % cpu, len(data), w)
        check("cpu%d: LOST counts sum to dropped" % cpu, sum(r["count"] for r in lost), d)
        expect, gaps = 0, 0
        for r in recs:
            if r["type"] == LOST:
                gaps += r["seq"] != (expect + r["count"]) % 2**32
                expect = r["seq"]
            else:
                gaps += r["seq"] != expect
                expect = (r["seq"] + 1) % 2**32
        check("cpu%d: seq continuous from 0 across LOST markers" % cpu, gaps, 0)
        check("cpu%d: every seq handed out is accounted for" % cpu, expect, e % 2**32)
        if lost:
            check("cpu%d: last LOST total_dropped == dropped" % cpu, lost[-1]["total"], d)
    check("total_overruns == sum of dropped", int(open(overruns_path).read()), total_dropped)
    print("INFO\tdropped %d lost-markers %d" % (total_dropped,
          sum(1 for rs in streams.values() for r in rs if r["type"] == LOST)))

def cmd_types(*paths):
    """Counts of each record type over the files, one "TYPE N" line each."""
    c = collections.Counter()
    for p in paths:
        for r in records(p)[0]:
            c[r["type"]] += 1
            if r["type"] == PAGE_ALLOC:
                c["page_alloc_bad"] += r["alloc"] % PAGE != 0 or r["alloc"] < PAGE
    for k in (PAGE_ALLOC, PAGE_FREE, "page_alloc_bad", LOST):
        print("TYPE\t%s\t%d" % (k, c[k]))

def cmd_descfirst(label, *paths):
    """In each file alone, every cache event comes after its cache's description."""
    late = events = 0
    for p in paths:
        seen = set()
        for r in records(p)[0]:
            if r["type"] == DESC:
                seen.add(r["cache"])
            elif r["type"] in (CACHE_ALLOC, CACHE_FREE):
                events += 1
                late += r["cache"] not in seen
    check("%s: cache events seen" % label, events > 0, True)
    check("%s: each cache described before its first event in the file" % label, late, 0)

def cmd_oracle(expected_path, kallsyms_path, *paths):
    exp, done, failed = {}, {}, {}
    for line in open(expected_path):
        k, _, v = line.rstrip("\n").partition(" ")
        if k == "done":
            f, n = v.split(); done[f] = int(n)
        elif k == "failed":
            f, n = v.split(); failed[f] = int(n)
        else:
            exp[k] = v
    n = int(exp["n"])
    sizes = [int(s) for s in exp["sizes"].split(",")]
    gfp_kernel, gfp_nowarn = int(exp["gfp_kernel"], 16), int(exp["gfp_nowarn"], 16)

    syms = []
    for line in open(kallsyms_path):
        f = line.split()
        if len(f) >= 3 and f[1] in "tTwW":
            syms.append((int(f[0], 16), f[2]))
    syms.sort()
    addrs = [a for a, _ in syms]
    def sym(a):
        i = bisect.bisect_right(addrs, a) - 1
        return syms[i][1] if i >= 0 else "?"

    by_func = collections.defaultdict(list)
    desc_of = {}
    late_desc = 0
    seen_on = collections.defaultdict(set)
    for p in paths:
        # A CPU's stream may come in pieces (read() then the mapped ring): in order, one stream.
        seen = seen_on[cpu_of(p)]
        for r in records(p)[0]:
            if r["type"] == DESC:
                desc_of[r["cache"]] = r
                seen.add(r["cache"])
            elif r["type"] in (CACHE_ALLOC, CACHE_FREE) and r["cache"] not in seen:
                late_desc += 1
            if r["type"] in (KMALLOC, CACHE_ALLOC, KFREE, CACHE_FREE):
                s = sym(r["cs"])
                if s.startswith("oracle_"):
                    by_func[s].append(r)
    check("every cache event follows its cache's description on that CPU", late_desc, 0)

    def recs(func, type_):
        return [r for r in by_func[func] if r["type"] == type_]
    def ptrs(rs):
        return sorted(r["ptr"] for r in rs)

    # Sizes between classes: bytes_alloc is the next class, exactly.
    check("oracle_kmalloc_sizes: done == n * sizes", done["oracle_kmalloc_sizes"], n * len(sizes))
    ka = recs("oracle_kmalloc_sizes", KMALLOC)
    check("oracle_kmalloc_sizes: kmalloc records", len(ka), done["oracle_kmalloc_sizes"])
    for s in sizes:
        got = [r for r in ka if r["req"] == s]
        check("kmalloc(%d): n records" % s, len(got), n)
        check("kmalloc(%d): bytes_alloc is the %d class" % (s, kmalloc_class(s)),
              sorted(set(r["alloc"] for r in got)), [kmalloc_class(s)])
    check("oracle_kmalloc_sizes: gfp GFP_KERNEL, node -1, flags 0",
          sorted(set((r["gfp"], r["node"], r["flags"]) for r in ka)), [(gfp_kernel, -1, 0)])
    kf = recs("oracle_kfree_sizes", KFREE)
    check("oracle_kfree_sizes: kfree records", len(kf), done["oracle_kfree_sizes"])
    check("oracle_kfree_sizes frees what oracle_kmalloc_sizes allocated", ptrs(kf), ptrs(ka))

    ca = recs("oracle_cache_alloc", CACHE_ALLOC)
    cf = recs("oracle_cache_free", CACHE_FREE)
    check("oracle_cache_alloc: records", len(ca), done["oracle_cache_alloc"])
    check("oracle_cache_alloc: n done", done["oracle_cache_alloc"], n)
    cids = sorted(set(r["cache"] for r in ca))
    check("oracle_cache_alloc: one cache", len(cids), 1)
    d = desc_of.get(cids[0] if cids else 0, {})
    check("private cache described by name", d.get("name"), exp["cache_name"])
    check("private cache object_size", d.get("osz"), int(exp["cache_object_size"]))
    check("private cache size >= object_size", d.get("size", 0) >= int(exp["cache_object_size"]), True)
    check("cache alloc: bytes_req/bytes_alloc are the cache's sizes",
          sorted(set((r["req"], r["alloc"]) for r in ca)), [(d.get("osz"), d.get("size"))])
    check("oracle_cache_free: records", len(cf), done["oracle_cache_free"])
    check("oracle_cache_free: same cache", sorted(set(r["cache"] for r in cf)), cids)
    check("oracle_cache_free frees what oracle_cache_alloc allocated", ptrs(cf), ptrs(ca))

    if exp["xcpu_alloc_cpu"] != "none":
        xa = recs("oracle_xcpu_alloc", KMALLOC)
        xf = recs("oracle_xcpu_free", KFREE)
        check("oracle_xcpu_alloc: n records", len(xa), n)
        check("oracle_xcpu_alloc: on its CPU", sorted(set(r["cpu"] for r in xa)), [int(exp["xcpu_alloc_cpu"])])
        check("oracle_xcpu_alloc: size class", sorted(set((r["req"], r["alloc"]) for r in xa)),
              [(int(exp["xcpu_size"]), kmalloc_class(int(exp["xcpu_size"])))])
        check("oracle_xcpu_free: n records", len(xf), n)
        check("oracle_xcpu_free: on the other CPU", sorted(set(r["cpu"] for r in xf)), [int(exp["xcpu_free_cpu"])])
        check("oracle_xcpu_free frees what oracle_xcpu_alloc allocated", ptrs(xf), ptrs(xa))
        check("cross-CPU: two different CPUs", exp["xcpu_alloc_cpu"] != exp["xcpu_free_cpu"], True)
    else:
        check("xcpu skipped only with one CPU", len(recs("oracle_xcpu_alloc", KMALLOC)), 0)

    ma = recs("oracle_mismatch_alloc", CACHE_ALLOC)
    mf = recs("oracle_mismatch_kfree", KFREE)
    check("oracle_mismatch_alloc: n cache allocs", len(ma), n)
    check("oracle_mismatch_alloc: from the private cache", sorted(set(r["cache"] for r in ma)), cids)
    check("oracle_mismatch_kfree: n kfree records", len(mf), n)
    check("oracle_mismatch_kfree kfree()s the cache objects", ptrs(mf), ptrs(ma))

    la = recs("oracle_leak_alloc", KMALLOC)
    check("oracle_leak_alloc: leak_outstanding records", len(la), int(exp["leak_outstanding"]))
    check("oracle_leak_alloc: n outstanding", int(exp["leak_outstanding"]), n)
    check("oracle_leak_alloc: size class", sorted(set((r["req"], r["alloc"]) for r in la)),
          [(int(exp["leak_size"]), kmalloc_class(int(exp["leak_size"])))])
    # Addresses are reused, so only a free after the allocation counts (one clock for all CPUs).
    born = dict((r["ptr"], r["ts"]) for r in la)
    late = [r for p in paths for r in records(p)[0] if r["type"] in (KFREE, CACHE_FREE)
            and r["ptr"] in born and r["ts"] >= born[r["ptr"]]]
    check("leaked objects are never freed after their allocation", len(late), 0)

    if exp["node_target"] != "none":
        tgt = int(exp["node_target"])
        na = recs("oracle_node_alloc", KMALLOC)
        nf = recs("oracle_node_free", KFREE)
        check("oracle_node_alloc: n records", len(na), n)
        check("oracle_node_alloc: node asked is the target", sorted(set(r["node"] for r in na)), [tgt])
        check("oracle_node_alloc: on its CPU", sorted(set(r["cpu"] for r in na)), [int(exp["node_alloc_cpu"])])
        check("oracle_node_alloc: CPU's own node is not the target", tgt in set(r["cpu_node"] for r in na), False)
        check("oracle_node_alloc: memory landed on the target node", int(exp["node_on_target"]), n)
        check("oracle_node_alloc: size class", sorted(set((r["req"], r["alloc"]) for r in na)),
              [(int(exp["node_size"]), kmalloc_class(int(exp["node_size"])))])
        check("oracle_node_free frees what oracle_node_alloc allocated", ptrs(nf), ptrs(na))
    else:
        print("INFO\tnode checks skipped: %s" % exp.get("note", "one node"))

    fa = recs("oracle_fail_alloc", KMALLOC)
    fs = int(exp["fail_size"])
    check("oracle_fail_alloc: returned NULL", exp["fail_null"], "1")
    check("oracle_fail_alloc: one record, ptr 0, sizes, gfp with __GFP_NOWARN",
          [(r["ptr"], r["req"], r["alloc"], r["gfp"]) for r in fa],
          [(0, fs, kmalloc_class(fs), gfp_nowarn)])

    hs = int(exp["huge_size"])
    if hs:
        check("oracle_huge_alloc: returned NULL", exp["huge_null"], "1")
        check("oracle_huge_alloc: byte counts saturate at U32_MAX with KMT_F_CLAMPED",
              [(r["ptr"], r["req"], r["alloc"], r["flags"]) for r in recs("oracle_huge_alloc", KMALLOC)],
              [(0, 2**32 - 1, 2**32 - 1, 0x04)])
    check("oracle_kfree_null: the function exists", "oracle_kfree_null" in set(n for _, n in syms), True)
    check("oracle_kfree_null: 2n calls", done["oracle_kfree_null"], 2 * n)
    check("kfree(NULL) and kfree(ZERO_SIZE_PTR) are not recorded", len(by_func["oracle_kfree_null"]), 0)

    # Interrupt context: the records carry the flag of the context the oracle saw itself in,
    # and on a non-RT kernel that is a hard interrupt and a softirq.
    irq_size = int(exp["irq_size"])
    for ctx, fn, bit in (("hardirq_context", "oracle_hardirq_work", 0x01),
                         ("softirq_context", "oracle_softirq_timer", 0x02)):
        if os.environ.get("KMT_RT") != "1":
            check("%s: ran in that context" % fn, exp[ctx], "1")
        al, fr = recs(fn, KMALLOC), recs(fn, KFREE)
        check("%s: n allocations recorded" % fn, (len(al), done[fn + "/alloc"]), (n, n))
        check("%s: size class and GFP_ATOMIC" % fn, sorted(set((r["req"], r["alloc"], r["gfp"]) for r in al)),
              [(irq_size, kmalloc_class(irq_size), int(exp["gfp_atomic"], 16))])
        check("%s: frees what it allocated" % fn, ptrs(fr), ptrs(al))
        want = bit if exp[ctx] == "1" else 0
        check("%s: every record flagged for its context" % fn,
              sorted(set(r["flags"] & 0x03 for r in al + fr)), [want])

if __name__ == "__main__":
    globals()["cmd_" + sys.argv[1]](*sys.argv[2:])
EOF

# Turn the reader's CHECK lines into TAP.
judge() {
	tap_checks env KMT_RT="$rt" KMT_CLASSES="$o/kmalloc_classes" python3 "$py" "$@"
}

# --- Run ----------------------------------------------------------------------------------
rt=0
[[ $(guest_kernel) == *-rt-* ]] && rt=1
numa=()
guest_has_numa && numa=(--numa)
vm_ok module "${numa[@]}" -c 2 --no-daemon -T 330 -m kmemtrace_oracle -a "$guest" -a "$runas" -a "$ringread" -- module-check.sh
o=$VM_OUT
is "$(command_status)" 0 "guest script ran to the end"
dmesg_clean

# Files and modes.
for f in abi_version total_overruns stats coverage stacks init_kallsyms cpu0 cpu1; do
	is "$(awk -v f="/sys/kernel/debug/kmemtrace/$f" '$1 == f { print $2, $3, $4 }' "$o/modes")" \
		"400 0 0" "$f is mode 0400, owned by root"
done
is "$(awk '$1 ~ /\/enabled$/ { print $2, $3, $4 }' "$o/modes")" "600 0 0" "enabled is mode 0600, owned by root"
is "$(awk '$1 ~ /\/filter$/ { print $2, $3, $4 }' "$o/modes")" "600 0 0" "filter is mode 0600, owned by root"
is "$(wc -l <"$o/modes")" 10 "debugfs dir holds exactly the 8 control files and 2 cpu files"
major=$(sed -n 's/^#define KMT_ABI_MAJOR[[:space:]]*\([0-9]*\).*/\1/p' "$KMT_TOP/abi/kmemtrace_abi.h")
minor=$(sed -n 's/^#define KMT_ABI_MINOR[[:space:]]*\([0-9]*\).*/\1/p' "$KMT_TOP/abi/kmemtrace_abi.h")
is "$(cat "$o/abi_version")" "$major.$minor" "abi_version matches the header"
is "$(cat "$o/enabled_at_load")" 1 "tracing is on at load by default"
# init_kallsyms: the oracle's init text symbols as /proc/kallsyms printed them during its init,
# which it no longer lists (the init code is freed).
init=$(grep -P '^[0-9a-f]+ [tT] oracle_init\t\[kmemtrace_oracle\]$' "$o/init_kallsyms")
ok "init_kallsyms has the oracle's init function, in /proc/kallsyms's format" test -n "$init"
is "$(grep -vc '\[kmemtrace_oracle\]$' "$o/init_kallsyms")" 0 "init_kallsyms: the oracle's lines only"
ok "  which /proc/kallsyms no longer lists" test -n "$init" -a -s "$o/kallsyms" \
	-a "$(grep -cF "$init" "$o/kallsyms")" = 0
for p in subbufs subbuf_size mem_share start_disabled pages stack_depth stack_frees stack_entries \
	stack_cache stack_check filter track_slots; do
	ok "parameter $p is visible in /sys/module" grep -q "^$p " "$o/params_default"
done

# Reading while tracing: bound to the buffer's CPU, or not at all (a stale lap otherwise).
is "$(cat "$o/read_unbound" 2>/dev/null)" refused "while tracing, a reader not bound to the CPU is refused"
ok "  with EAGAIN" grep -q 'Resource temporarily unavailable' "$o/read_unbound.err"
is "$(cat "$o/read_bound" 2>/dev/null)" read "while tracing, a reader bound to the CPU (taskset) reads"
ok "  whole records" test "$(( $(stat -c %s "$o/read_bound.bin" 2>/dev/null || echo 1) % 64 ))" = 0
is "$(cat "$o/ring_unbound" 2>/dev/null)" refused "while tracing, the mapped ring refuses a reader not bound to the CPU (EAGAIN)"
like "$(cat "$o/ring_bound" 2>/dev/null)" '^read [0-9]+$' "while tracing, a reader bound to the CPU reads the mapped ring"
ok "  whole records" test "$(( $(stat -c %s "$o/ring_bound.bin" 2>/dev/null || echo 1) % 64 ))" = 0
like "$(cat "$o/ring_oracle0" 2>/dev/null) $(cat "$o/ring_oracle1" 2>/dev/null)" '^read [0-9]+ read [0-9]+$' \
	"with tracing off, both buffers read through the mapped ring (cpu0 after 100 records read())"
is "$(stat -c %s "$o/oracle_cpu0.1read" 2>/dev/null)" 6400 "  cpu0's first 100 records through read()"
is "$(cat "$o/read_after" 2>/dev/null)" read "with tracing off, any reader reads"
ok "  and gets records" test -s "$o/read_after.bin"

# Root only.
is "$(grep -c ' denied$' "$o/nonroot")" "$(wc -l <"$o/nonroot")" "uid 1000 can neither read nor write any kmemtrace file"
ok "the non-root check saw every file" test "$(wc -l <"$o/nonroot")" -eq 12
is "$(cat "$o/enabled_after_nonroot")" 1 "a refused non-root write changed nothing"
is "$(cat "$o/filter_after_nonroot")" none "a refused non-root filter changed nothing"

# rmmod while a buffer is open.
is "$(cat "$o/rmmod_busy")" refused "rmmod refused while cpu0 is open"
is "$(cat "$o/loaded_while_open")" 1 "module still loaded while cpu0 is open"
is "$(cat "$o/rmmod_closed")" unloaded "rmmod works once cpu0 is closed"

# The oracle's records, and the accounting of that run (no drop expected with the default 16 x 256 KiB).
judge oracle "$o/expected" "$o/kallsyms" "$o"/oracle_cpu*
judge account "$o/oracle_stats" "$o/oracle_overruns" "$o"/oracle_cpu*
is "$(awk '!/^#/ { d += $4 } END { print d + 0 }' "$o/oracle_stats")" 0 "no record dropped with the default buffers"
if [ -x "$check" ]; then
	python3 "$py" mkout "$KMT_TEST_DIR/oracle.out" "$o"/oracle_cpu*
	ok "kmemtrace_check accepts the oracle run's files" "$check" -q "$KMT_TEST_DIR/oracle.out"
fi

# Parameters.
is "$(cat "$o/param_subbufs1")" refused "subbufs=1 is refused"
ok "dmesg says why subbufs=1 was refused" grep -q 'kmemtrace: subbufs=1 is outside' "$o/dmesg.txt"
is "$(cat "$o/param_stack_cache_big")" refused "stack_cache=65537 is refused"
ok "dmesg says why stack_cache=65537 was refused" \
	grep -q 'kmemtrace: stack_cache=65537 is outside 0..65536' "$o/dmesg.txt"
if [ "$(guest_arch)" = amd64 ]; then
	like "$(cat "$o/param_stack_cache_small" 2>/dev/null)" ' cache 16 check 0$' \
		"stack_cache=1 is rounded up to 16 (two sets of eight)"
else
	# The walk cache keys on x86-64's ORC unwinder: elsewhere every stack is unwound.
	like "$(cat "$o/param_stack_cache_small" 2>/dev/null)" ' cache 0 check 0$' \
		"stack_cache=1 on $(guest_arch): no walk cache"
	ok "  and dmesg says why" grep -q 'stack_cache: needs the x86-64 ORC unwinder' "$o/dmesg.txt"
fi
want_rounded=$(rounded_subbuf_size 4 4000)
is "$(cat "$o/param_rounded" 2>/dev/null)" "$want_rounded" "subbuf_size=4000 with subbufs=4 is rounded up to $want_rounded"
ok "dmesg says subbuf_size was rounded" grep -q "kmemtrace: subbuf_size=4000 rounded up to $want_rounded" "$o/dmesg.txt"
is "$(cat "$o/enabled_start_disabled" 2>/dev/null)" 0 "start_disabled=1 loads with tracing off"
is "$(awk '!/^#/ { e += $2 } END { print e + 0 }' "$o/stats_start_disabled")" 0 \
	"nothing emitted while tracing is off"
is "$(cat "$o/ncpufiles" 2>/dev/null)" 2 "one cpu file per online CPU"

# Tiny buffers under load: exact accounting and LOST markers.
diag "load generator: $(cat "$o/tiny_load")"
judge account "$o/tiny_stats" "$o/tiny_overruns" "$o"/tiny1_cpu* "$o"/tiny2_cpu*
# A new session (enable) describes its caches again: phase 2 stands on its own.
judge descfirst "after re-enable" "$o"/tiny2_cpu* "$o"/pages2_cpu*
ok "tiny buffers dropped records (total_overruns > 0)" test "$(cat "$o/tiny_overruns")" -gt 0
lost=$(python3 "$py" types "$o"/tiny1_cpu* "$o"/tiny2_cpu* | awk '$2 == 8 { print $3 }')
ok "LOST markers are in the files ($lost)" test "$lost" -gt 0
if [ -x "$check" ]; then
	python3 "$py" mkout "$KMT_TEST_DIR/tiny.out" "$o"/tiny1_cpu* "$o"/tiny2_cpu*
	ok "kmemtrace_check accepts the tiny-buffer files (seq across LOST markers)" \
		"$check" -q "$KMT_TEST_DIR/tiny.out"
fi

# Page events.
read -r pa pf pbad < <(python3 "$py" types "$o"/pages1_cpu* "$o"/pages2_cpu* |
	awk '{ v[NR] = $3 } END { print v[1], v[2], v[3] }')
ok "pages=1 records page allocations ($pa)" test "$pa" -gt 0
ok "pages=1 records page frees ($pf)" test "$pf" -gt 0
is "$pbad" 0 "page allocation sizes are whole pages"
judge account "$o/pages_stats" "$o/pages_overruns" "$o"/pages1_cpu* "$o"/pages2_cpu*

done_testing
