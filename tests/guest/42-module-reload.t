#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 42-module-reload.t - frames named whatever was loaded before the trace: the oracle module is
# loaded after kmemtrace.ko, then kmemtrace.ko is unloaded and loaded again (with stacks), so that
# /proc/modules lists it first and, from Linux 6.4, its range (text base + a size that counts its
# data, allocated elsewhere) runs over the oracle's text. The oracle's pattern is then traced with
# kmemtraced, and every call site and stack frame that kallsyms puts in kmemtrace.ko or the oracle
# must be named in the report as kallsyms names it: the function before address - 1, in its
# module, never a bare 0x... [module]. The expected names come from the trace's kallsyms, not
# from the report's own lookup.
KMT_TEST_TIMEOUT=240
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
EOS
chmod +x "$guest"

vm_ok reload -c 2 -T 150 --no-daemon -m kmemtrace_oracle -a "$guest" -- reload.sh
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

t, rep = sys.argv[1], json.load(open(sys.argv[2]))
mods = ("kmemtrace", "kmemtrace_oracle")

def check(name, got, want):
    print("CHECK\t%s\t%s\t%s" % (name, got, want))

# Text symbols of the trace's kallsyms; where two share an address, a module's own and a
# function name win as the report prefers them (any one of them is accepted below).
syms = {}
for line in open(os.path.join(t, "kallsyms")):
    f = line.split()
    if len(f) < 3 or f[1] not in "tTwW" or int(f[0], 16) == 0:
        continue
    mod = f[3].strip("[]") if len(f) > 3 else None
    syms.setdefault(int(f[0], 16), []).append((f[2], mod))
addrs = sorted(syms)

# The modules file's ranges, only to say whether this kernel made them overlap.
ranges = sorted((int(b, 16), int(b, 16) + int(s), n) for n, _, b, s in
                (l.split() for l in open(os.path.join(t, "modules")) if l.strip()))
overlaps = [(a[2], b[2]) for a, b in zip(ranges, ranges[1:]) if a[1] > b[0]]
print("NOTE\tmodules whose base + size runs past the next base:\t%s\t" % (overlaps,))

def expected(addr):
    """The names kallsyms gives the return address addr: those of the symbol before addr - 1."""
    i = bisect.bisect_right(addrs, addr - 1) - 1
    if i < 0:
        return None, []
    names = syms[addrs[i]]
    mod = names[0][1]
    return mod, ["%s+0x%x [%s]" % (n, addr - addrs[i], m) if m else "%s+0x%x" % (n, addr - addrs[i])
                 for n, m in names]

seen = {m: 0 for m in mods}
bad = []
def judge(addr_text, symbol):
    addr = int(addr_text, 16)
    mod, names = expected(addr)
    if mod not in mods:
        return
    seen[mod] += 1
    if symbol not in names:
        bad.append("%s: %s, kallsyms: %s" % (addr_text, symbol, names))

for c in rep["callsites"]:
    judge(c["addr"], c["symbol"])
for key in ("stacks", "stacks_outstanding", "stacks_frees"):
    for s in rep.get(key, []):
        for a, sym in zip(s["frame_addrs"], s["frames"]):
            judge(a, sym)
check("every call site and frame in kmemtrace.ko or the oracle named as kallsyms names it",
      bad[:5], [])
check("no bare address anywhere in the report",
      sorted(set(re.findall(r'"0x[0-9a-f]+ \[[a-z_]+\]"', open(sys.argv[2]).read())))[:5], [])
check("the oracle's call sites and frames are there", seen["kmemtrace_oracle"] > 0, True)
check("kmemtrace.ko's own frames are there", seen["kmemtrace"] > 0, True)
PY
tap_checks python3 "$KMT_TEST_DIR/judge.py" "$t" "$o/report.json"

done_testing
