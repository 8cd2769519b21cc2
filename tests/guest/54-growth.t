#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 54-growth.t - kmemtrace-report --at and --diff against the oracle module's growth pattern,
# traced with stacks in a guest: rounds apart by a sleep, each leaking a known number of
# objects at one call site beside churn (objects allocated and freed at once) at another. The
# times given to the report lie between rounds, picked from the oracle's own timestamps of each
# round on the trace's clock (never from how fast the guest ran), so every figure is exact:
# --diff between two of them recovers exactly the objects leaked in the rounds between (growth,
# allocations, no frees, the survivors one by one with their allocation times inside their
# rounds and the oldest one's age within the bounds the oracle measured), the churn's
# allocations and frees and no growth, the leak ranked above the churn, the same growth by
# kernel stack, the same with --cache-name; --at between rounds holds the rounds before it;
# go tool pprof -diff_base of two --pprof profiles (--at T1, --at T2) shows the same growth;
# a time past the trace's end is refused.
# 300 s: the guest's pattern sleeps 20 ms x 11; booting and tracing take the rest.
KMT_TEST_TIMEOUT=300
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

require_cmds python3

REPORT=$(host_tool kmemtrace-report)

mkdir -p "$KMT_TEST_DIR"
guest=$KMT_TEST_DIR/oracle-growth.sh
cat >"$guest" <<'EOS'
#!/bin/sh
# In the guest, under kmemtraced: the growth pattern, then what it did.
OR=/sys/kernel/debug/kmemtrace_oracle
echo 1 > $OR/growth || exit 1
cat $OR/growth_expected > $KMT_OUT/growth.expected
EOS
chmod +x "$guest"

vm_ok growth -c 2 -T 150 -p 'stack_depth=16' -m kmemtrace_oracle -a "$guest" -- oracle-growth.sh
o=$VM_OUT
is "$(command_status)" 0 "the oracle's growth pattern ran in the guest"
dmesg_clean
[ -s "$o/growth.expected" ] || bail "no growth.expected from the guest"
ok "every file of the trace is sound" all_strict "$o"

cat >"$KMT_TEST_DIR/judge-growth.py" <<'EOF'
import json, os, subprocess, sys

report, out = sys.argv[1], sys.argv[2]
mod = " [kmemtrace_oracle]"
LEAK, CHURN = "oracle_growth_leak", "oracle_growth_churn"


def check(name, got, want):
    print("CHECK\t%s\t%s\t%s" % (name, got, want))


def run(*args):
    p = subprocess.run([report, *args, out], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def doc(*args):
    rc, so, se = run("--json", "-l", "0", *args)
    check(f"kmemtrace-report {' '.join(args)} --json: exit 0", rc, 0)
    if rc:
        print("NOTE\t%s\t\t" % se.strip().replace("\n", " | "))
        sys.exit(0)
    return json.loads(so)


def ours(rows, func):
    return [r for r in rows if (r.get("callsite") or "").startswith(func + "+")
            and r["callsite"].endswith(mod)]


exp, rounds = {}, []
for line in open(os.path.join(out, "growth.expected")):
    w = line.split()
    if w[0] == "round":
        rounds.append({w[i]: int(w[i + 1]) for i in range(2, len(w), 2)})
    else:
        exp[w[0]] = int(w[1])
check("the oracle ran every round", len(rounds), exp["rounds"])
check("a first run: nothing of an earlier one dropped", exp["dropped_first"], 0)

# The trace's own start and end (the first and last record), from any report of it.
d0 = doc("--at", "0")
first, last = d0["trace"]["first_ns"], d0["trace"]["last_ns"]
check("no records lost (exact numbers need every record)", d0["totals"]["lost"], 0)
# A time between rounds k and k+1 (k = -1: before the first), on the trace's clock.
def gap(k):
    lo = rounds[k]["end_ns"] if k >= 0 else rounds[0]["start_ns"] - 10**7
    hi = rounds[k + 1]["start_ns"] if k + 1 < len(rounds) else rounds[-1]["end_ns"] + 10**7
    return (lo + hi) // 2
i, j, k = 2, 7, 4
t1, t2, tk = gap(i) - first, gap(j) - first, gap(k) - first
check("the times picked lie in the trace", 0 < t1 < t2 < last - first and tk < last - first,
      True)

def span(a, b, key):
    return sum(r[key] for r in rounds[a:b])

# --diff: the rounds i+1..j exactly.
d = doc(f"--diff={t1}ns,{t2}ns")
g = d["growth_callsites"]
leak, churn = ours(g, LEAK), ours(g, CHURN)
check(f"{LEAK}: one call site", len(leak), 1)
check(f"{CHURN}: one call site", len(churn), 1)
if len(leak) != 1 or len(churn) != 1:
    sys.exit(0)
L, C = leak[0], churn[0]
grown = span(i + 1, j + 1, "leaked")
check(f"{LEAK}: live at T1 (rounds 0..{i})", L["live_from"], span(0, i + 1, "leaked"))
check(f"{LEAK}: live at T2 (rounds 0..{j})", L["live_to"], span(0, j + 1, "leaked"))
check(f"{LEAK}: growth (rounds {i + 1}..{j})", L["growth"], grown)
check(f"{LEAK}: allocations in the window", L["allocs"],
      grown + span(i + 1, j + 1, "leak_failed"))
check(f"{LEAK}: no frees in the window", L["frees"], 0)
check(f"{LEAK}: survivors are the objects leaked in the window", L["survivors"], grown)
surv = ours(d["growth_survivors"], LEAK)
check(f"{LEAK}: survivors listed one by one", len(surv), grown)
sizes = sorted({s["bytes"] for s in surv})
check(f"{LEAK}: each survivor kmalloc-256 ({exp['leak_size']} bytes asked)", sizes, [256])
check(f"{LEAK}: growth in bytes", L["growth_bytes"], 256 * grown)
check(f"{LEAK}: survivor bytes", L["survivor_bytes"], 256 * grown)
per_round = [0] * len(rounds)
outside = 0
for s in surv:
    at = s["alloc_ns"] + first
    hit = [n for n, r in enumerate(rounds) if r["start_ns"] <= at <= r["end_ns"]]
    if hit:
        per_round[hit[0]] += 1
    else:
        outside += 1
check(f"{LEAK}: every survivor allocated inside a round", outside, 0)
check(f"{LEAK}: survivors by round as leaked", per_round[i + 1:j + 1],
      [r["leaked"] for r in rounds[i + 1:j + 1]])
check(f"{LEAK}: none from before T1 or after T2", sum(per_round[:i + 1]) + sum(per_round[j + 1:]), 0)
r1 = rounds[i + 1]
end2 = gap(j)
check(f"{LEAK}: the oldest survivor's age within [{end2 - r1['end_ns']}, {end2 - r1['start_ns']}] ns",
      end2 - r1["end_ns"] <= (L["oldest_survivor_ns"] or -1) <= end2 - r1["start_ns"], True)
check(f"{CHURN}: no growth", (C["growth"], C["growth_bytes"], C["survivors"]), (0, 0, 0))
check(f"{CHURN}: allocations in the window", C["allocs"],
      span(i + 1, j + 1, "churned") + span(i + 1, j + 1, "churn_failed"))
check(f"{CHURN}: frees in the window", C["frees"], span(i + 1, j + 1, "churned"))
rank = [r["callsite"] for r in g]
check("the leak ranks above the churn", rank.index(L["callsite"]) < rank.index(C["callsite"]), True)
# By kernel stack: the stacks whose innermost frame is the leak's call site.
st = [r for r in d.get("growth_stacks", []) if r["frames"] and r["frames"][0].startswith(LEAK + "+")]
check(f"{LEAK}: by stack, the same growth", sum(r["growth"] for r in st), grown)
check(f"{LEAK}: by stack, the same survivors", sum(r["survivors"] for r in st), grown)
# The window's totals hold the leak's survivors (other kernel objects may be among them too).
check("the window's survivors include the leak's", d["growth"][0]["survivors"] >= grown, True)

# The same with a cache filter: the leak's row does not change.
df = doc(f"--diff={t1}ns,{t2}ns", "--cache-name", "kmalloc-256")
lf = ours(df["growth_callsites"], LEAK)
check(f"--cache-name kmalloc-256: {LEAK} as without it",
      [(x["growth"], x["allocs"], x["frees"], x["survivors"]) for x in lf],
      [(L["growth"], L["allocs"], L["frees"], L["survivors"])])
check(f"--cache-name kmalloc-256: {CHURN} (kmalloc-96) left out", ours(df["growth_callsites"], CHURN), [])

# --at between rounds k and k+1: what the first k+1 rounds leaked, nothing of the churn.
a = doc(f"--at={tk}ns")
la = ours(a["at_callsites"], LEAK)
check(f"--at: {LEAK} live (rounds 0..{k})", [x["live"] for x in la], [span(0, k + 1, "leaked")])
check(f"--at: {LEAK} allocations by then", [x["allocs"] for x in la],
      [span(0, k + 1, "leaked") + span(0, k + 1, "leak_failed")])
check(f"--at: {CHURN} holds nothing then", ours(a["at_callsites"], CHURN), [])
oldest = [x["oldest_ns"] for x in la]
at_abs = gap(k)
check(f"--at: {LEAK}'s oldest object from round 0",
      bool(oldest) and at_abs - rounds[0]["end_ns"] <= oldest[0] <= at_abs - rounds[0]["start_ns"], True)

# The same growth through pprof: a profile --at T1 and one --at T2, and go tool pprof
# -diff_base of the two shows the leak's function grown by exactly what the rounds leaked.
import shutil, tempfile
check("go tool pprof is installed (scripts/install-deps)", bool(shutil.which("go")), True)
if shutil.which("go"):
    tmp = tempfile.mkdtemp(dir=os.path.dirname(out))
    for name, t in (("a", t1), ("b", t2)):
        rc, so, se = run(f"--at={t}ns", "--pprof", os.path.join(tmp, name + ".pb.gz"))
        check(f"--at={t}ns --pprof: exit 0", rc, 0)
    for index, unit in (("inuse_objects", 1), ("inuse_space", 256)):
        p = subprocess.run(["go", "tool", "pprof", "-top", "-unit=B", "-nodefraction=0",
                            "-nodecount=100000", "-sample_index=" + index,
                            "-diff_base=" + os.path.join(tmp, "a.pb.gz"),
                            os.path.join(tmp, "b.pb.gz")], capture_output=True, text=True,
                           env=dict(os.environ, HOME=tmp))
        flat = {}
        for line in p.stdout.splitlines():
            w = line.split(None, 5)
            if len(w) == 6 and w[5].endswith(mod):
                flat[w[5]] = int(w[0].rstrip("B"))
        check(f"pprof -diff_base ({index}): {LEAK} grew by what the rounds leaked",
              flat.get(LEAK + mod), unit * grown)
        check(f"pprof -diff_base ({index}): {CHURN} did not grow", flat.get(CHURN + mod, 0), 0)

# Past the end: refused, naming the option and the value.
past = f"{last - first + 10**9}ns"
rc, so, se = run(f"--at={past}")
check("--at past the trace's end: exit 1", rc, 1)
check("... the message names --at and its value", f"--at={past}" in se, True)
EOF
tap_checks python3 "$KMT_TEST_DIR/judge-growth.py" "$REPORT" "$o"

done_testing
