#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# pprof-check.py - reads what go tool pprof makes of a kmemtrace-report --pprof profile and
# compares it with the report's own JSON (for tests/host/53-report-pprof.t and
# tests/guest/48-stacks.t). Each command prints "same", or what differs, on one line.
#
#   pprof-check.py stacks RAW STACKS_JSON   per stack (frame addresses): hits, failed, bytes
#                                           and outstanding, from `go tool pprof -raw`, equal
#                                           the --stacks JSON's; the samples labelled
#                                           stack=none are the JSON's events without a stack
#   pprof-check.py totals RAW JSON          the sums of all samples equal the JSON's totals
#   pprof-check.py label RAW KEY JSON...    per value of label KEY (cache, cpu), the sums equal
#                                           the JSON's (cache: --cache JSON; cpu: one --cpu N
#                                           JSON per CPU, named cpuN.json)
#   pprof-check.py sites RAW JSON           a trace without stacks: per call site, as the JSON
#   pprof-check.py top TOP INDEX STACKS_JSON [BASE_STACKS_JSON]
#                                           `go tool pprof -top -unit=B` (of INDEX, with
#                                           -tagignore=stack=none) per function: flat and cum
#                                           as computed from the --stacks JSON (minus the
#                                           BASE one's, for -diff_base)
import collections
import json
import re
import sys

# pprof sample type -> the --stacks JSON key it must equal.
STACK_KEYS = {"hits": None, "failed": "failed_allocs", "bytes_req": "requested_space",
              "bytes_alloc": "alloc_space", "outstanding": "inuse_objects",
              "outstanding_bytes": "inuse_space"}


def parse_raw(path):
    """(samples, locations) of `go tool pprof -raw`: samples as (values dict, [addresses],
    labels dict); locations id -> (address, function name)."""
    lines = open(path).read().split("\n")
    types, samples, locs = [], [], {}
    i = 0
    while i < len(lines) and lines[i] != "Samples:":
        i += 1
    i += 1
    types = [t.split("/")[0] for t in lines[i].split()]
    i += 1
    raw = []
    while i < len(lines) and lines[i] and not lines[i].startswith("Locations"):
        sample = re.match(r"^\s*((?:-?\d+\s+)*-?\d+):((?: \d+)*)\s*$", lines[i])
        # Text labels share a line ("cache:[kmalloc-64] stack:[none]"), numbers have their
        # unit after the value ("cpu:[0 count]").
        labels = re.findall(r"(\w+):\[([^\]]*)\]", lines[i])
        if sample:
            raw.append(([int(x) for x in sample.group(1).split()],
                        [int(x) for x in sample.group(2).split()], {}))
        elif labels and raw:
            for k, v in labels:
                raw[-1][2][k] = v.split(" ")[0]
        i += 1
    while i < len(lines) and not lines[i].startswith("Locations"):
        i += 1
    i += 1
    while i < len(lines) and lines[i] and not lines[i].startswith("Mappings"):
        m = re.match(r"^\s*(\d+): (0x[0-9a-f]+) M=\d+ (.*) \S*:\d+ s=\d+$", lines[i])
        if m:
            locs[int(m.group(1))] = (int(m.group(2), 16), m.group(3))
        i += 1
    for vals, ids, labels in raw:
        v = dict(zip(types, vals))
        samples.append((v, [locs[x][0] for x in ids], labels))
    return samples, locs


def tally(v):
    """A sample's values under the --stacks JSON's names."""
    return {"hits": v["alloc_objects"] + v["failed_allocs"], "failed": v["failed_allocs"],
            "bytes_req": v["requested_space"], "bytes_alloc": v["alloc_space"],
            "outstanding": v["inuse_objects"], "outstanding_bytes": v["inuse_space"]}


def add(acc, t):
    for k, x in t.items():
        acc[k] += x


def differ(got, want, what):
    if got == want:
        return "same"
    bad = sorted(set(got) | set(want), key=str)
    bad = [k for k in bad if got.get(k) != want.get(k)]
    return f"{len(bad)} {what} differ, e.g. {bad[0]}: pprof {got.get(bad[0])}, report {want.get(bad[0])}"


def cmd_stacks(raw, sj):
    samples, _ = parse_raw(raw)
    d = json.load(open(sj))
    got = collections.defaultdict(lambda: collections.Counter())
    none = collections.Counter()
    for v, addrs, labels in samples:
        if labels.get("stack") == "none":
            add(none, tally(v))
        else:
            add(got[tuple(addrs)], tally(v))
    want = collections.defaultdict(lambda: collections.Counter())
    for s in d["stacks"]:
        add(want[tuple(int(a, 16) for a in s["frame_addrs"])], {k: s[k] for k in STACK_KEYS})
    res = differ({k: dict(v) for k, v in got.items()}, {k: dict(v) for k, v in want.items()},
                 "stacks")
    if res != "same":
        return res
    if none["hits"] != d["totals"]["events_without_stack"]:
        return (f"stack=none samples hold {none['hits']} events, the report says "
                f"{d['totals']['events_without_stack']} without a stack")
    return "same"


def totals_of(samples):
    t = collections.Counter()
    for v, _, _ in samples:
        add(t, tally(v))
    return t


def cmd_totals(raw, js):
    t = totals_of(parse_raw(raw)[0])
    d = json.load(open(js))["totals"]
    want = {"hits": d["allocs"], "failed": d["failed_allocs"], "bytes_req": d["bytes_req"],
            "bytes_alloc": d["bytes_alloc"], "outstanding": d["outstanding"],
            "outstanding_bytes": d["outstanding_bytes"]}
    return differ({k: t[k] for k in want}, want, "totals")


def cmd_label(raw, key, files):
    samples, _ = parse_raw(raw)
    got = collections.defaultdict(lambda: collections.Counter())
    for v, _, labels in samples:
        add(got[labels.get(key)], tally(v))
    want = {}
    if key == "cache":
        for c in json.load(open(files[0]))["caches"]:
            want[c["name"]] = {"hits": c["allocs"], "failed": c["failed"],
                               "bytes_req": c["bytes_req"], "bytes_alloc": c["bytes_alloc"],
                               "outstanding": c["live"], "outstanding_bytes": c["live_bytes"]}
    else:
        for f in files:
            cpu = re.search(r"cpu(\d+)\.json$", f).group(1)
            d = json.load(open(f))["totals"]
            want[cpu] = {"hits": d["allocs"], "failed": d["failed_allocs"],
                         "bytes_req": d["bytes_req"], "bytes_alloc": d["bytes_alloc"],
                         "outstanding": d["outstanding"],
                         "outstanding_bytes": d["outstanding_bytes"]}
    want = {k: v for k, v in want.items() if v["hits"] or v["outstanding"]}
    return differ({k: dict(v) for k, v in got.items()}, want, f"{key} labels")


def cmd_sites(raw, js):
    samples, _ = parse_raw(raw)
    got = collections.defaultdict(lambda: collections.Counter())
    for v, addrs, _ in samples:
        if len(addrs) != 1:
            return f"a sample of {len(addrs)} frames in a trace without stacks"
        add(got[addrs[0]], tally(v))
    want = {}
    for s in json.load(open(js))["callsites"]:
        want[int(s["addr"], 16)] = {"hits": s["hits"], "failed": s["failed"],
                                         "bytes_req": s["bytes_req"],
                                         "bytes_alloc": s["bytes_alloc"],
                                         "outstanding": s["outstanding"],
                                         "outstanding_bytes": s["outstanding_bytes"]}
    want = {k: v for k, v in want.items() if v["hits"] or v["outstanding"]}
    return differ({k: dict(v) for k, v in got.items()}, want, "call sites")


def func_name(frame):
    """A --stacks frame ("fn+0xoff [mod] at file:line", "0x...") as pprof names its
    function ("fn [mod]", "0x...")."""
    frame = frame.split(" at ")[0]
    m = re.match(r"^(\S+?)\+0x[0-9a-f]+(?: \[(\S+)\])?$", frame)
    if not m:
        return frame
    return m.group(1) + (f" [{m.group(2)}]" if m.group(2) else "")


def flat_cum(sj, index):
    """Per function, flat and cum of the pprof sample type index, from a --stacks JSON."""
    key = {v: k for k, v in STACK_KEYS.items() if v}.get(index)
    flat, cum = collections.Counter(), collections.Counter()
    for s in json.load(open(sj))["stacks"]:
        w = s["hits"] - s["failed"] if index == "alloc_objects" else s[key]
        names = [func_name(f) for f in s["frames"]]
        flat[names[0]] += w
        for n in set(names):
            cum[n] += w
    return flat, cum


def cmd_top(top, index, sj, base=None):
    flat, cum = flat_cum(sj, index)
    if base:
        bf, bc = flat_cum(base, index)
        flat.subtract(bf)
        cum.subtract(bc)
    want = {n: (flat[n], cum[n]) for n in cum if flat[n] or cum[n]}
    got = {}
    rows = False
    for line in open(top):
        if re.match(r"^\s+flat\s+flat%", line):
            rows = True
            continue
        if not rows or not line.strip():
            continue
        w = line.split(None, 5)
        got[w[5].rstrip("\n")] = (int(w[0].rstrip("B")), int(w[3].rstrip("B")))
    return differ(got, want, "functions")


def main(argv):
    cmds = {"stacks": cmd_stacks, "totals": cmd_totals, "sites": cmd_sites}
    if len(argv) >= 3 and argv[0] in cmds:
        print(cmds[argv[0]](*argv[1:3]))
    elif len(argv) >= 4 and argv[0] == "label":
        print(cmd_label(argv[1], argv[2], argv[3:]))
    elif len(argv) in (4, 5) and argv[0] == "top":
        print(cmd_top(*argv[1:]))
    else:
        sys.exit("usage: pprof-check.py stacks|totals|sites|label|top ... (see the header)")


if __name__ == "__main__":
    main(sys.argv[1:])
