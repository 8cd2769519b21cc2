#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 42-module-reload.t - frames named whatever was loaded before the trace: the oracle module is
# loaded after kmemtrace.ko, then kmemtrace.ko is unloaded and loaded again (with stacks), so that
# /proc/modules lists it first and, from Linux 6.4, its range (text base + a size that counts its
# data, allocated elsewhere) runs over the oracle's text. The oracle's pattern is then traced with
# kmemtraced, and every call site and stack frame that kallsyms puts in kmemtrace.ko or the oracle
# must be named in the report as kallsyms names it: the function before address - 1, in its
# module, never a bare 0x... [module] (but for a frame right after the kernel's exception entry
# code, the instruction an interrupt stopped: the function holding the address itself, as an
# interrupt at oracle_init's first byte once showed). Then a second trace during which the oracle is unloaded,
# the bench module loaded and the oracle loaded again: kmemtraced's modules file must record
# each load and unload and kallsyms.loaded the new loads' symbols, and every call site and frame
# in the three modules must again be named (as the start's kallsyms or, for the new loads,
# kallsyms.loaded names it). The expected names come from the trace's files, not from the
# report's own lookup. The loads' stacks have frames in the modules' init code (do_one_initcall()
# calling bench_init or oracle_init), an allocation of its own outside their /proc/modules
# range, which /proc/kallsyms names only while the init runs: kallsyms.loaded must have those
# symbols too (kmemtrace.ko keeps them for kmemtraced in its init_kallsyms), and the report name
# those frames by them. Without them a frame there is bare, and this judge, naming an address by
# the nearest symbol below it, takes it for whatever module lies below (on arm64, kmemtrace.ko).
# Bounds: the guest's -T 210 and the test's 270 s are over 5x the slowest, 7.3 rt's 41 s (the
# whole test 49 s), in make check beside a busy loop and a fuzzer at nice 19 (and another guest
# test).
KMT_TEST_TIMEOUT=270
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

require_cmds python3
[ -f "$KMT_TOP/tests/kmod/kmemtrace_oracle.c" ] || skip_all "the oracle module is not written yet"

REPORT=$(host_tool kmemtrace-report)
mkdir -p "$KMT_TEST_DIR"
guest=$KMT_TEST_DIR/reload.sh
cat >"$guest" <<'EOS'
#!/bin/sh
# kmemtrace.ko was loaded first, the oracle after it: load kmemtrace.ko again, now newest.
O=$KMT_OUT
cat /proc/modules > "$O/modules.before"
rmmod kmemtrace || exit 1
insmod "$KMT_MODDIR/kmemtrace.ko" stack_depth=16 stack_frees=1 || exit 1
cat /proc/modules > "$O/modules.after"
kmemtraced -o "$O/trace" -- sh -c 'echo 1 > /sys/kernel/debug/kmemtrace_oracle/run'
# During a trace: the oracle runs, is unloaded, the bench module takes its place, the oracle is
# loaded again (elsewhere) and runs again. kmemtraced scans /proc/modules every 500 ms and
# appends each change to its modules file as it sees it: each step waits for the one before to
# be there, so that a scan sees each (a pause of a second did not, once, beside a CPU hog: a
# scan that reads /proc/kallsyms for a new module takes seconds then). The wait's bound, 60 s,
# is only against a hang.
ls "$KMT_MODDIR" > "$O/moddir"
kmemtraced -o "$O/during" -- sh -c '
	R=/sys/kernel/debug/kmemtrace_oracle/run
	seen() {
		i=0
		until grep -q "^$1 " "$KMT_OUT/during/modules"; do
			i=$((i + 1))
			[ $i -le 600 ] || { echo "kmemtraced did not record $1 in 60 s"; return 1; }
			sleep 0.1
		done
	}
	echo 1 > $R && rmmod kmemtrace_oracle && seen -kmemtrace_oracle &&
	insmod "$KMT_MODDIR/kmemtrace_bench.ko" && seen +kmemtrace_bench &&
	insmod "$KMT_MODDIR/kmemtrace_oracle.ko" && seen +kmemtrace_oracle &&
	echo 1 > $R && rmmod kmemtrace_bench'
EOS
chmod +x "$guest"

vm_ok reload -c 2 -T 210 --no-daemon -m kmemtrace_oracle -a "$guest" -- reload.sh
o=$VM_OUT
t=$o/trace
is "$(command_status)" 0 "kmemtrace.ko reloaded after the oracle, the oracle traced"
dmesg_clean
is "$(awk 'NR == 1 { print $1 }' "$o/modules.after" 2>/dev/null)" kmemtrace \
	"/proc/modules lists the reloaded kmemtrace.ko first (newest)"
ok "every cpu file passes kmemtrace_check --strict" all_strict "$t"

"$REPORT" --json --stacks -l 0 "$t" >"$o/report.json" 2>"$o/report.err"
is "$?" 0 "kmemtrace-report --json --stacks: exit 0" || note_file "$o/report.err"

# Prints "CHECK<TAB>name<TAB>got<TAB>want" lines.
cat >"$KMT_TEST_DIR/judge.py" <<'PY'
import bisect, json, os, re, sys

# Modules to judge; "?NAME": judged, but it need not have call sites in the trace.
t, rep = sys.argv[1], json.load(open(sys.argv[2]))
mods = [m.lstrip("?") for m in sys.argv[3:]]
required = [m for m in sys.argv[3:] if not m.startswith("?")]

def check(name, got, want):
    print("CHECK\t%s\t%s\t%s" % (name, got, want))

def read_syms(paths, drop=()):
    """Text symbols by address (several may share one: any of them is accepted below)."""
    syms = {}
    for path in paths:
        if not os.path.exists(path):
            continue
        for line in open(path):
            f = line.split()
            if len(f) < 3 or f[1] not in "tTwW" or int(f[0], 16) == 0:
                continue
            mod = f[3].strip("[]") if len(f) > 3 else None
            if mod not in drop:
                syms.setdefault(int(f[0], 16), []).append((f[2], mod))
    return syms, sorted(syms)

# The start's symbols, and those after the trace's changes (the modules loaded during it, in
# kallsyms.loaded, instead of those unloaded): an address must be named as one of them names it.
changed = [l[1:].split()[0] for l in open(os.path.join(t, "modules")) if l[:1] in "+-"]
tables = [read_syms([os.path.join(t, "kallsyms")])]
if changed:
    syms, _ = read_syms([os.path.join(t, "kallsyms")], drop=changed)
    for a, names in read_syms([os.path.join(t, "kallsyms.loaded")])[0].items():
        syms.setdefault(a, []).extend(names)
    tables.append((syms, sorted(syms)))

# The modules file's ranges, only to say whether this kernel made them overlap.
ranges = sorted((int(b, 16), int(b, 16) + int(s), n) for n, _, b, s in
                (l.split() for l in open(os.path.join(t, "modules"))
                 if l.strip() and l[0] not in "#+-"))
overlaps = [(a[2], b[2]) for a, b in zip(ranges, ranges[1:]) if a[1] > b[0]]
print("NOTE\tmodules whose base + size runs past the next base:\t%s\t" % (overlaps,))

# The kernel's exception entry code (Documentation/report-json.md, "frames"): the entry text,
# else the irqentry text, and s390x's program and machine check handlers.
core = {}
for line in open(os.path.join(t, "kallsyms")):
    f = line.split()
    if len(f) == 3:
        core.setdefault(f[2], int(f[0], 16))
entry = []
for lo, hi in (("__entry_text_start", "__entry_text_end"),
               ("__irqentry_text_start", "__irqentry_text_end")):
    if core.get(lo) and core.get(hi, 0) > core[lo]:
        entry.append((core[lo], core[hi]))
        break
core_addrs = sorted(set(core.values()))
for name in ("pgm_check_handler", "mcck_int_handler"):
    if name in core:
        j = bisect.bisect_right(core_addrs, core[name])
        entry.append((core[name], core_addrs[j] if j < len(core_addrs) else core[name] + 1))

def after_entry(prev):
    return prev is not None and any(lo <= prev - 1 < hi for lo, hi in entry)

def expected(addr, syms, addrs, exact=False):
    """The names a table gives the return address addr: those of the symbol before addr - 1;
    with exact (an interrupted instruction), of the symbol at or before addr."""
    i = bisect.bisect_right(addrs, addr if exact else addr - 1) - 1
    if i < 0:
        return []
    return [(m, "%s+0x%x [%s]" % (n, addr - addrs[i], m) if m else "%s+0x%x" % (n, addr - addrs[i]))
            for n, m in syms[addrs[i]]]

seen = {m: 0 for m in mods}
bad = []
def judge(addr_text, symbol, prev=None):
    addr = int(addr_text, 16)
    names = [e for table in tables for e in expected(addr, *table, exact=after_entry(prev))]
    ours = set(m for m, _ in names if m in mods)
    if not ours:
        return
    for m in ours:
        seen[m] += 1
    if symbol not in [n for _, n in names]:
        bad.append("%s: %s, kallsyms: %s" % (addr_text, symbol, [n for _, n in names]))

for c in rep["callsites"]:
    judge(c["addr"], c["symbol"])
for key in ("stacks", "stacks_outstanding", "stacks_frees"):
    for s in rep.get(key, []):
        prev = None
        for a, sym in zip(s["frame_addrs"], s["frames"]):
            judge(a, sym, prev)
            prev = int(a, 16)
check("%s: every call site and frame in %s named as the trace's kallsyms names it"
      % (os.path.basename(t), " or ".join(mods)), bad[:5], [])
check("%s: no bare address anywhere in the report" % os.path.basename(t),
      sorted(set(re.findall(r'"0x[0-9a-f]+ \[[a-z_]+\]"', open(sys.argv[2]).read())))[:5], [])
for m in required:
    check("%s: %s's call sites or frames are there" % (os.path.basename(t), m), seen[m] > 0, True)
PY
tap_checks python3 "$KMT_TEST_DIR/judge.py" "$t" "$o/report.json" kmemtrace kmemtrace_oracle

# The second trace: loads and unloads recorded, and every frame named again.
t2=$o/during
ok "during: every cpu file passes kmemtrace_check --strict" all_strict "$t2"
m=$(cat "$t2/modules" 2>/dev/null)
is "$(grep -E '^[-+]kmemtrace_(oracle|bench) ' <<<"$m" | cut -d' ' -f1 | tr '\n' ' ')" \
	"-kmemtrace_oracle +kmemtrace_bench +kmemtrace_oracle -kmemtrace_bench " \
	"during: the oracle's unload, the bench module's load, the oracle's load, the bench's unload"
is "$(cut -f2 "$t2/kallsyms.loaded" 2>/dev/null | sort -u | tr '\n' ' ')" \
	"[kmemtrace_bench] [kmemtrace_oracle] " "during: kallsyms.loaded has both new loads' symbols"
is "$(grep -oE '\b(bench|oracle)_init\b' "$t2/kallsyms.loaded" 2>/dev/null | sort -u | tr '\n' ' ')" \
	"bench_init oracle_init " "during: kallsyms.loaded has both new loads' init symbols"
"$REPORT" --json --stacks -l 0 "$t2" >"$o/during.json" 2>"$o/during.err"
is "$?" 0 "during: kmemtrace-report --json --stacks: exit 0" || note_file "$o/during.err"
tap_checks python3 "$KMT_TEST_DIR/judge.py" "$t2" "$o/during.json" kmemtrace kmemtrace_oracle \
	'?kmemtrace_bench'
# The oracle's init allocates (kmem_cache_create(), debugfs): frames there, named by its function
# rather than by an alias at its address (arm64's mapping symbol $x, which 6.1 lists).
ok "during: a frame in the oracle's init code is named oracle_init+0x..." \
	grep -qE '"oracle_init\+0x[0-9a-f]+ \[kmemtrace_oracle\]"' "$o/during.json"

done_testing
