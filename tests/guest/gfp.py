# SPDX-License-Identifier: GPL-2.0-only
# gfp.py - compares the GFP flag names kmemtrace-report printed with those ftrace printed for the
# same events (tests/guest/53-gfp-names.t), and writes the masks with ftrace's names for them.
#
# Usage: python3 gfp.py FTRACE RAW_NAMES RAW_HEX [PAIRS]
#   FTRACE     tracefs's trace file, events kmem:kmalloc, kmem_cache_alloc and mm_page_alloc,
#              taken with no_hash_pointers (real addresses)
#   RAW_NAMES  kmemtrace-report --raw --raw-ip of the trace (masks by name)
#   RAW_HEX    the same of the trace without its tracepoint_formats (masks in hex), line for line
#   PAIRS      if given, written: "MASK NAMES" per distinct mask, NAMES as ftrace printed them
# An event is the same in both when its kind, address (the page frame number for pages) and
# sizes are; an address the window saw allocated as often in both is compared, every time.
# Prints "CHECK<tab>DESC<tab>GOT<tab>WANT" lines for tap_checks (tests/guest/lib.sh).
import collections
import re
import sys

FT = re.compile(r"\s(kmalloc|kmem_cache_alloc|mm_page_alloc):\s(.*)$")
FIELD = re.compile(r"(\w+)=(\S*)")
KIND = {"kmalloc": "kmalloc", "cache_alloc": "kmem_cache_alloc", "page_alloc": "mm_page_alloc"}


def key_of(kind, f, addr):
    if kind == "mm_page_alloc":
        return (kind, int(f["pfn"], 16))
    return (kind, int(addr, 16), int(f["bytes_req"]), int(f["bytes_alloc"]))


def check(desc, got, want):
    print("CHECK\t%s\t%s\t%s" % (desc, got, want))


def main():
    ftrace, raw_names, raw_hex = sys.argv[1:4]
    pairs_out = sys.argv[4] if len(sys.argv) > 4 else None
    ft = collections.defaultdict(list)
    with open(ftrace) as f:
        for line in f:
            m = FT.search(line)
            if not m:
                continue
            fields = dict(FIELD.findall(m.group(2)))
            addr = fields.get("ptr", "0")
            if m.group(1) != "mm_page_alloc" and int(addr, 16) == 0:
                continue
            ft[key_of(m.group(1), fields, addr)].append(fields["gfp_flags"])
    km = collections.defaultdict(list)
    hexes = {}
    with open(raw_names) as fn, open(raw_hex) as fh:
        for ln, lh in zip(fn, fh):
            w = ln.split()
            if len(w) < 6 or w[4] not in KIND:
                continue
            fields = dict(FIELD.findall(ln))
            hfields = dict(FIELD.findall(lh))
            if w[4] == "page_alloc":
                fields["pfn"] = fields["ptr"]
            elif int(fields["ptr"], 16) == 0:
                continue
            k = key_of(KIND[w[4]], fields, fields["ptr"])
            km[k].append(fields["gfp"])
            hexes.setdefault(k, []).append(hfields["gfp"])
    matched = mismatched = 0
    pairs = collections.defaultdict(set)
    shown = 0
    for k, names in km.items():
        want = ft.get(k)
        if not want or len(want) != len(names):
            continue
        matched += len(names)
        if sorted(names) != sorted(want):
            mismatched += 1
            if shown < 5:
                print("DIAG\t%s: kmemtrace-report %s, ftrace %s" % (k, names, want))
                shown += 1
            continue
        # The same names in both: each mask's names are ftrace's (one mask, one naming).
        for h, n in zip(hexes[k], names):
            pairs[h].add(n)
    print("DIAG\t%d events compared, %d distinct masks" % (matched, len(pairs)))
    check("events ftrace and kmemtrace both saw: at least 100", matched >= 100, True)
    check("distinct GFP masks among them: at least 3", len(pairs) >= 3, True)
    check("addresses whose masks are named otherwise than ftrace names them", mismatched, 0)
    check("masks named more than one way", sum(len(v) > 1 for v in pairs.values()), 0)
    check("masks the report left in hex though the kernel names them",
          sum(1 for h, v in pairs.items() for n in v if n == h and not n.startswith("0x0")), 0)
    if pairs_out:
        with open(pairs_out, "w") as f:
            for h in sorted(pairs, key=lambda x: int(x, 16)):
                f.write("%s %s\n" % (h, sorted(pairs[h])[0]))


main()
