# SPDX-License-Identifier: GPL-2.0-only
"""window_compare.py - holds the report of a rotated trace's kept window (a checkpoint and the
kept segments) to the report of the whole run: what a checkpoint promises (trace-format.md,
section 10) is the same call sites (every column), caches, errors, outstanding objects with their
ages, stacks, totals, and --at/--diff at times in the window. Prints CHECK lines for tap_checks
(tests/host/lib.sh, tests/guest/lib.sh). Used by 27-rotate-fold.t and the guest's 56-rotation.t.

    python3 window_compare.py REPORT WINDOW FULL LABEL [TIME_NS...]

TIME_NS: times in ns from the trace's start, in the window, for --at and --diff (pairs).
"""
import json
import subprocess
import sys

TOTALS = ("allocs", "frees", "failed_allocs", "bytes_req", "bytes_alloc", "bytes_freed",
          "cross_cpu_frees", "cross_node_allocs", "untracked_frees", "double_frees",
          "implicit_frees", "kfree_cache_objects", "outstanding", "outstanding_bytes", "lost",
          "lost_markers", "probed_frees", "clamped_allocs")
SECTIONS = ("callsites", "caches", "outstanding", "errors")
TIMED = ("at", "at_callsites", "at_caches", "at_stacks", "at_objects", "growth_callsites",
         "growth_caches", "growth_stacks", "growth_survivors", "growth")


def check(name, got, want):
    print("CHECK\t%s\t%s\t%s" % (name, got, want))


def report(exe, d, *args):
    p = subprocess.run([exe, "--json", "-l", "0", *args, d], capture_output=True, text=True)
    if p.returncode:
        print("NOTE\t%s: %s\t\t" % (d, p.stderr.strip().replace("\n", " | ")))
        return None
    return json.loads(p.stdout)


def canon(rows):
    if isinstance(rows, dict):
        rows = [rows]
    return sorted(json.dumps(r, sort_keys=True) for r in rows or [])


def same_rows(label, what, a, b):
    ca, cb = canon(a), canon(b)
    check(f"{label}: {what} as the whole run's ({len(cb)} rows)", ca == cb, True)
    if ca != cb:
        extra, missing = set(ca) - set(cb), set(cb) - set(ca)
        print("NOTE\twindow only: %s\t\t" % sorted(extra)[:2])
        print("NOTE\twhole run only: %s\t\t" % sorted(missing)[:2])


def compare(exe, window, full, label, times=()):
    """Returns the window's default JSON document, or None when a report failed."""
    W, F = report(exe, window), report(exe, full)
    check(f"{label}: both reports ran", W is not None and F is not None, True)
    if W is None or F is None:
        return None
    for sect in SECTIONS:
        same_rows(label, sect, W.get(sect), F.get(sect))
    for k in TOTALS:
        check(f"{label}: totals.{k}", W["totals"].get(k), F["totals"].get(k))
    Ws, Fs = report(exe, window, "--stacks"), report(exe, full, "--stacks")
    if Ws is not None and Fs is not None and Fs.get("stacks") is not None:
        for sect in ("stacks", "stacks_outstanding", "stack_callers"):
            same_rows(label, f"--stacks {sect}", Ws.get(sect), Fs.get(sect))
    args = [(f"--at={t}ns",) for t in times]
    args += [(f"--diff={a}ns,{b}ns",) for a, b in zip(times, times[1:])]
    for a in args:
        Wa, Fa = report(exe, window, *a), report(exe, full, *a)
        check(f"{label}: {a[0]} ran on both", Wa is not None and Fa is not None, True)
        if Wa is None or Fa is None:
            continue
        for sect in TIMED:
            if sect in Fa:
                same_rows(label, f"{a[0]} {sect}", Wa.get(sect), Fa[sect])
    return W


if __name__ == "__main__":
    exe, window, full, label = sys.argv[1:5]
    compare(exe, window, full, label, [int(t) for t in sys.argv[5:]])
