#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 41-report-dwarf.t - kmemtrace-report's symbolization on a fake machine built here: a
# relocatable "module" (fakemod.ko) and a static "vmlinux" loaded at a KASLR-like offset,
# a kallsyms/modules snapshot naming them, and a trace whose call sites are the return
# addresses of calls objdump finds in them. Checks function+0xoff [module], --raw-ip, and
# file:line (through inlining, to the calling function's line) with libdw and libbfd,
# which must agree (also through two levels of inlining); --ko, --module-dir and --vmlinux.
# A call to a noreturn function that ends its function returns to the next function's first
# byte: it is named, and its line found, in the function holding the call (address - 1).
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
REPORT=$BIN/kmemtrace-report

require_built kmemtrace-report
require_cmds cc objdump nm python3
scratch_dir dwarf
mkdir -p "$T/src" "$T/trace" "$T/mods/sub"

# An inline allocator wrapper in a header, as kmalloc() is in slab.h: the call site's
# line must be the caller's, not the header's.
cat >"$T/src/alloc.h" <<'EOF'
void *kmalloc_stub(unsigned long n);
static inline __attribute__((always_inline)) void *my_kmalloc(unsigned long n)
{
	return kmalloc_stub(n + 1);
}
EOF
cat >"$T/src/fakemod.c" <<'EOF'
#include "alloc.h"
int counter;
__attribute__((noreturn)) void kmalloc_stub_noret(unsigned long n);
/* Its call is its last instruction: the return address is fm_direct's first byte. */
__attribute__((noinline)) void fm_noret(unsigned long n)
{
	counter++;
	kmalloc_stub_noret(n); /* CALL fm_noret */
}
__attribute__((noinline)) void *fm_direct(unsigned long n)
{
	void *p = kmalloc_stub(n); /* CALL fm_direct */
	counter++;
	return p;
}
__attribute__((noinline)) void *fm_inline(unsigned long n)
{
	void *p = my_kmalloc(n); /* CALL fm_inline */
	counter += 2;
	return p;
}
/* Two levels of inlining: the line is still the one in fm_nested. */
static inline __attribute__((always_inline)) void *fm_wrap(unsigned long n)
{
	return my_kmalloc(n * 2);
}
__attribute__((noinline)) void *fm_nested(unsigned long n)
{
	void *p = fm_wrap(n); /* CALL fm_nested */
	counter += 3;
	return p;
}
EOF
cat >"$T/src/vmlinux.c" <<'EOF'
#include "alloc.h"
int vcount;
void _text(void)
{
}
__attribute__((noinline)) void *kmalloc_stub(unsigned long n)
{
	vcount++;
	return (void *)n;
}
__attribute__((noinline)) void *vm_alloc(unsigned long n)
{
	void *p = my_kmalloc(n); /* CALL vm_alloc */
	vcount++;
	return p;
}
void _start(void)
{
	vm_alloc(1);
	for (;;)
		;
}
EOF
CFLAGS=(-g -O2 -fno-optimize-sibling-calls -fno-pie -fcf-protection=none)
# Functions unaligned, so that nothing pads fm_noret's last call from fm_direct.
if ! (cd "$T/src" && cc "${CFLAGS[@]}" -falign-functions=1 -c fakemod.c -o fakemod.ko &&
	cc "${CFLAGS[@]}" -static -nostdlib -no-pie -Wl,-e,_start vmlinux.c -o vmlinux); then
	echo "1..0 # SKIP cannot build the test ELF files"
	exit 0
fi
cp "$T/src/fakemod.ko" "$T/mods/sub/fakemod.ko"

# Lays out the fake machine and writes the trace; prints "ADDR SYMBOL FILE LINE" per call
# site, where the line is the one marked /* CALL fn */ in the source.
python3 - "$T" <<'EOF' >"$T/expect" || { echo "Bail out! cannot build the fake trace"; exit 1; }
import re, struct, subprocess, sys
T = sys.argv[1]
MOD_TEXT = 0xffffffffc0a01000          # where fakemod's .text "was loaded"
MOD_BASE = MOD_TEXT - 0x1000
SHIFT = 0xffffffff80000000            # runtime - link address of the "vmlinux"

def calls(path, absolute):
    """Return addresses after each call to kmalloc_stub, per function."""
    out = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", path],
                         capture_output=True, text=True, check=True).stdout
    res, fn, pending = {}, None, False
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <([^>]+)>:", line)
        if m:
            fn = m.group(2)
            continue
        if "R_X86_64" in line:
            # The relocation of a call in a relocatable file names its target.
            if isinstance(pending, tuple):
                pending = pending[1] if "kmalloc_stub" in line else False
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)", line)
        if m:
            addr = int(m.group(1), 16)
            if pending and not isinstance(pending, tuple):
                res[pending] = addr
            pending = False
            if m.group(2) == "call" and "kmalloc_stub" in line and absolute:
                pending = fn
            if m.group(2) == "call" and not absolute:
                pending = ("?", fn)
    return res

def marker(src, fn):
    for i, l in enumerate(open(src), 1):
        if "/* CALL %s */" % fn in l:
            return i
    raise SystemExit("no marker for " + fn)

def syms(path):
    out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    return [(int(a, 16), t, n) for a, t, n in (l.split() for l in out.splitlines()
            if len(l.split()) == 3) if t in "tT"]

ks = []
sites = []
for fn, ret in calls(T + "/src/fakemod.ko", False).items():
    sites.append((MOD_TEXT + ret, "%s+0x%x [fakemod]" % (fn, ret - dict((n, a) for a, t, n in syms(T + "/src/fakemod.ko"))[fn]),
                  T + "/src/fakemod.c", marker(T + "/src/fakemod.c", fn)))
for a, t, name in syms(T + "/src/fakemod.ko"):
    ks.append("%016x %s %s\t[fakemod]" % (MOD_TEXT + a, t, name))
vsyms = dict((n, a) for a, t, n in syms(T + "/src/vmlinux"))
for fn, ret in calls(T + "/src/vmlinux", True).items():
    sites.append((SHIFT + ret, "%s+0x%x" % (fn, ret - vsyms[fn]),
                  T + "/src/vmlinux.c", marker(T + "/src/vmlinux.c", fn)))
for a, t, name in syms(T + "/src/vmlinux"):
    ks.append("%016x %s %s" % (SHIFT + a, t, name))
open(T + "/trace/kallsyms", "w").write("\n".join(ks) + "\n")
open(T + "/trace/modules", "w").write("fakemod 0x%x 0x%x %d\n" % (MOD_TEXT, MOD_BASE, 0x4000))

hdr = struct.pack("<IHHHHHBBB3sIQQ24s", 0x52544d4b, 1, 0, 64, 64, 0, 1, 64, 1, b"",
                  4096, 0, 0, b"")
recs = []
seq = 0
for i, (addr, sym, f, l) in enumerate(sites):
    for j in range(i + 1):                 # site i gets i + 1 hits
        recs.append(struct.pack("<BBHIQQQQIIIiIhH", 1, 0, 0, seq, 1000 + seq, addr,
                                0xffff888000100000 + 64 * seq, 0, 24, 32, 0xcc0, -1, 1, 0, 0))
        seq += 1
open(T + "/trace/cpu0.out", "wb").write(hdr + b"".join(recs))
for addr, sym, f, l in sites:
    print("0x%x %s\t%s %d" % (addr, sym, f, l))
EOF
is "$(wc -l <"$T/expect")" 5 "five call sites found by objdump (4 in the module, 1 in vmlinux)"
noret=$(awk '/fm_noret/ { print $1 }' "$T/expect")
like "$(grep -i "^${noret#0x} " "$T/trace/kallsyms")" "fm_direct" \
	"the noreturn call's return address ($noret) is the next function's first byte"

jsites() {	# jsites FILE: "ADDR SYMBOL<TAB>FILE LINE" per call site, sorted
	python3 -c "import json,sys; d=json.load(open(sys.argv[1]))
for c in sorted(d['callsites'], key=lambda c: c['addr']):
    print('%s %s\t%s %s' % (c['addr'], c['symbol'], c.get('file', '-'), c.get('line', '-')))" "$1"
}
symbols_only() { cut -f1 "$1"; }

"$REPORT" --json "$T/trace" >"$T/plain.json" 2>"$T/err"
is "$?" 0 "kallsyms only: exit 0"
jsites "$T/plain.json" >"$T/plain"
is "$(symbols_only "$T/plain" | sort)" "$(symbols_only "$T/expect" | sort)" \
	"kallsyms only: function+0xoff [module] for every call site"
is "$(cut -f2 "$T/plain" | sort -u)" "- -" "kallsyms only: no file:line without DWARF"

"$REPORT" --json --raw-ip "$T/trace" >"$T/rawip.json" 2>/dev/null
is "$(python3 -c "import json,sys; d=json.load(open(sys.argv[1]))
print(all(c['symbol'] == c['addr'] for c in d['callsites']))" "$T/rawip.json")" True \
	"--raw-ip: raw addresses as symbols"

sort "$T/expect" >"$T/expect.sorted"
for res in dw bfd; do
	"$REPORT" --json --resolver=$res --ko "$T/src/fakemod.ko" --vmlinux "$T/src/vmlinux" \
		"$T/trace" >"$T/$res.json" 2>"$T/err.$res"
	rc=$?
	if [ $res = bfd ] && [ $rc = 1 ] && grep -q 'no libbfd' "$T/err.$res"; then
		echo "ok $((n += 1)) # SKIP built without libbfd"
		continue
	fi
	is "$rc" 0 "--resolver=$res: exit 0"
	jsites "$T/$res.json" | sort >"$T/$res"
	if ! cmp -s "$T/$res" "$T/expect.sorted"; then
		diff "$T/$res" "$T/expect.sorted" | sed 's/^/# /'
	fi
	is "$(cat "$T/$res")" "$(cat "$T/expect.sorted")" \
		"--resolver=$res: file:line of each call, in the calling function, through inlines"
done
if [ -s "$T/bfd" ]; then
	is "$(cat "$T/bfd")" "$(cat "$T/dw")" "libdw and libbfd agree on every call site"
fi

"$REPORT" --json --module-dir "$T/mods" "$T/trace" >"$T/moddir.json" 2>/dev/null
jsites "$T/moddir.json" | grep fakemod | sed "s|$T/mods/sub/|$T/src/|" | sort >"$T/moddir"
is "$(cat "$T/moddir")" "$(grep fakemod "$T/expect.sorted")" \
	"--module-dir: the module's .ko found by name"

"$REPORT" --ko "$T/src/fakemod.ko" "$T/trace" >"$T/text" 2>/dev/null
line=$(awk -F'\t' '/fm_inline/ {print $2}' "$T/expect" | tr ' ' ':')
grep -qF "at $line" "$T/text"
ok $? "text: file:line under the call site ($line)"

# A kernel stack (trace format 1.2) through the five call sites: every frame resolved alike.
mkdir -p "$T/stk"
cp "$T/trace/kallsyms" "$T/trace/modules" "$T/stk/"
python3 - "$T/expect" "$T/stk/cpu0.out" <<'EOF'
import struct, sys
frames = [int(l.split()[0], 16) for l in open(sys.argv[1])]
hdr = struct.pack("<IHHHHHBBB3sIQQ24s", 0x52544d4b, 1, 2, 64, 64, 0, 1, 64, 1, b"",
                  4096, 0, 0, b"")
slot = struct.pack("<BBHIQHBBB3s5Q", 9, 0, 0, 0, 1000, 1, len(frames), 0, len(frames), b"",
                   *(frames + [0] * (5 - len(frames))))
ev = struct.pack("<BBHIQQQQIIIiIhH", 1, 0, 0, 1, 1001, frames[0], 0xffff888000100000, 0, 24,
                 32, 0xcc0, -1, 1, 0, 1)
open(sys.argv[2], "wb").write(hdr + slot + ev)
EOF
"$REPORT" --stacks --json --ko "$T/src/fakemod.ko" --vmlinux "$T/src/vmlinux" "$T/stk" \
	>"$T/stk.json" 2>"$T/err"
is "$?" 0 "--stacks with --ko and --vmlinux: exit 0"
is "$(python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['stacks'][0]
print('\n'.join('%s %s\t%s' % (a, f.split(' at ')[0], l.replace(':', ' '))
                for a, f, l in zip(s['frame_addrs'], s['frames'], s['frame_lines'])))" "$T/stk.json")" \
	"$(cat "$T/expect")" "--stacks: every frame's symbol and file:line, as for call sites"
is "$(python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['stacks'][0]
print(all(f == f.split(' at ')[0] + ' at ' + l for f, l in zip(s['frames'], s['frame_lines'])))" \
	"$T/stk.json")" True "--stacks: each frame's text ends in 'at FILE:LINE'"

# The same stack in a pprof profile: each location's function named as the report names the
# frame ("fn [module]"), with the frame's file and line.
if command -v go >/dev/null; then
	"$REPORT" --pprof "$T/stk.pb.gz" --ko "$T/src/fakemod.ko" --vmlinux "$T/src/vmlinux" \
		"$T/stk" >/dev/null 2>"$T/err"
	is "$?" 0 "--pprof with --ko and --vmlinux: exit 0"
	HOME=$T go tool pprof -raw "$T/stk.pb.gz" 2>/dev/null | python3 -c "
import re, sys
for l in sys.stdin:
    m = re.match(r'^ *\d+: (0x[0-9a-f]+) M=\d+ (.*) (\S+):(\d+) s=\d+$', l)
    if m:
        print('%s %s\t%s %s' % m.groups())" | sort >"$T/pprof.locs"
	sed -E 's/^(0x[0-9a-f]+) ([^+ ]+)\+0x[0-9a-f]+/\1 \2/' "$T/expect" | sort >"$T/expect.locs"
	is "$(cat "$T/pprof.locs")" "$(cat "$T/expect.locs")" \
		"--pprof: every location's function and file:line, as --stacks gives the frame's"
else
	ok 1 "go tool pprof (golang-go) is installed (scripts/install-deps)"
fi

"$REPORT" --ko "$T/nonexistent.ko" "$T/trace" >/dev/null 2>"$T/err"
is "$?" 3 "--ko of a missing file: exit 3"
"$REPORT" --vmlinux "$T/trace/kallsyms" "$T/trace" >/dev/null 2>"$T/err"
is "$?" 2 "--vmlinux of a non-ELF file: exit 2"
grep -qF "$T/trace/kallsyms" "$T/err"
ok $? "--vmlinux of a non-ELF file: named"

done_testing
