#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 10-max-size.t - soak (make soak, not make check): kmemtraced --max-size for half an hour of
# guest time (KMT_SOAK_SECONDS) at a steady load, the bench module's paced kmalloc/kfree pairs
# (KMT_SOAK_RATE events a second on each CPU), after the oracle's pattern left its leak. Every
# 10 s the guest samples kmemtraced's resident memory, the record bytes on disk and the module's
# overruns. Held to: the disk within --max-size and one segment at every sample; kmemtraced's
# memory flat (the second half's peak within 10% and 1 MiB of the first half's); nothing lost;
# and the report of the kept window, at the end, exact: the paced load's allocations and frees
# at its call site are the events the bench module counted (all but the first segments folded
# into the checkpoint), and the oracle's leak, allocated half an hour before, is outstanding
# with its count and an age of the whole run. Prints the figures for BENCHMARKS.md.
SECONDS_WANTED=${KMT_SOAK_SECONDS:-1800}
RATE=${KMT_SOAK_RATE:-10000}
MAX=${KMT_SOAK_MAX:-32M}
SEGMENT=${KMT_SOAK_SEGMENT:-8M}
KMT_TEST_TIMEOUT=$((SECONDS_WANTED + 900))
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/../guest/lib.sh"

require_cmds python3
REPORT=$(host_tool kmemtrace-report)

mkdir -p "$KMT_TEST_DIR"
guest=$KMT_TEST_DIR/soak.sh
cat >"$guest" <<EOS
#!/bin/sh
SECS=$SECONDS_WANTED
RATE=$RATE
MAX=$MAX
SEGMENT=$SEGMENT
EOS
cat >>"$guest" <<'EOS'
. "$KMT_FILES/guest-lib.sh"
OR=/sys/kernel/debug/kmemtrace_oracle
B=/sys/kernel/debug/kmemtrace_bench
kmemtraced -q -o $KMT_OUT/rot --max-size $MAX --segment-size $SEGMENT 2> $KMT_OUT/kmemtraced.err &
K=$!
wait_enabled || exit 1
echo 1 > $OR/run || exit 1
cat $OR/expected > $KMT_OUT/oracle.expected
echo $RATE > $B/rate || exit 1
# One line each 10 s: seconds, kmemtraced's VmRSS kB, record bytes on disk, overruns.
t=0
while [ $t -lt $SECS ]; do
	rss=$(awk '/^VmRSS/ {print $2}' /proc/$K/status 2>/dev/null)
	bytes=$(find $KMT_OUT/rot -name 'cpu*.out' -type f -exec stat -c %s {} + 2>/dev/null |
		awk '{s += $1 - 64} END {print s + 0}')
	echo "$t ${rss:-0} $bytes $(cat $KMT_DEBUGFS/total_overruns)" >> $KMT_OUT/samples
	sleep 10
	t=$((t + 10))
done
echo 0 > $B/rate
sleep 1
kill -INT $K
wait $K
echo $? > $KMT_OUT/kmemtraced.status
cat $B/rate > $KMT_OUT/rate.after
EOS
chmod +x "$guest"

RESULTS=${KMT_SOAK_RESULTS:-$KMT_TOP/build/bench-soak}
rm -rf "$RESULTS" && mkdir -p "$RESULTS/soak"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# The commit the tools are built from, before the half hour in which the tree may move on.
commit=$(git -C "$KMT_TOP" rev-parse --short HEAD 2>/dev/null || echo '?')
start=$(date +%s)
vm_ok soak -c 2 -T $((SECONDS_WANTED + 600)) --disk 1024 --no-daemon -m kmemtrace_oracle \
	-m kmemtrace_bench -a "$KMT_TOP/tests/guest/guest-lib.sh" -a "$guest" -- soak.sh
o=$VM_OUT
is "$(command_status)" 0 "the soak ran in the guest"
is "$(cat "$o/kmemtraced.status" 2>/dev/null)" 0 "kmemtraced --max-size: exit 0" ||
	note_file "$o/kmemtraced.err"
dmesg_clean
wall=$(($(date +%s) - start))
diag "soak: $wall s of wall time for $SECONDS_WANTED s of guest time"
{
	echo "parts soak"
	echo "commit $commit"
	echo "date $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "load_before $load_before"
	echo "load_after $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$RESULTS/run.txt"

cat >"$KMT_TEST_DIR/judge-soak.py" <<'EOF'
import json, os, subprocess, sys

report, o, secs, max_s, seg_s, res = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], \
    sys.argv[5], sys.argv[6]
fig = {"seconds": secs, "max": max_s, "segment": seg_s, "rate": sys.argv[7],
       "wall": sys.argv[8], "kernel": sys.argv[9], "exact": 0}


def save():
    with open(os.path.join(res, "figures.kv"), "w") as f:
        for k, v in fig.items():
            f.write("%s %s\n" % (k, v))

size = lambda s: int(s[:-1]) << {"k": 10, "K": 10, "M": 20, "G": 30}[s[-1]] if s[-1].isalpha() else int(s)
MAX, SEG = size(max_s), size(seg_s)


def check(name, got, want):
    print("CHECK\t%s\t%s\t%s" % (name, got, want))


samples = [list(map(int, l.split())) for l in open(os.path.join(o, "samples"))]
with open(os.path.join(res, "samples"), "w") as f:
    f.writelines(" ".join(map(str, s)) + "\n" for s in samples)
fig.update(max_bytes=MAX, segment_bytes=SEG)
check(f"samples over the whole run ({len(samples)})", len(samples) >= secs // 10, True)
rss = [s[1] for s in samples]
disk = [s[2] for s in samples]
over = [s[3] for s in samples]
half = len(samples) // 2
check(f"disk within --max-size and one segment at every sample (max {max(disk)})",
      max(disk) <= MAX + SEG, True)
early, late = max(rss[1:half]), max(rss[half:])
check(f"kmemtraced's memory flat: {late} kB late, {early} kB early",
      late <= early * 1.1 + 1024, True)
check("no overruns during the soak", over[-1] - over[0], 0)

rate = dict(zip(*[iter(open(os.path.join(o, "rate.after")).read().split())] * 2))
events = int(rate["events"])
fig["events"] = events
p = subprocess.run([report, "--json", "-l", "0", os.path.join(o, "rot")], capture_output=True,
                   text=True)
check("kmemtrace-report of the kept window: exit 0", p.returncode, 0)
if p.returncode:
    print("NOTE\t%s\t\t" % p.stderr.strip())
    sys.exit(0)
d = json.loads(p.stdout)
check("nothing lost", d["totals"]["lost"], 0)
rows = [r for r in d["callsites"] if (r.get("symbol") or "").startswith("bench_pairs_loop+")]
check("the paced load's call sites are there", len(rows) > 0, True)
check("their allocations: the bench module's pairs", sum(r["hits"] for r in rows), events // 2)
check("their frees: as many", sum(r["frees"] for r in rows), events // 2)
check("none outstanding", sum(r["outstanding"] for r in rows), 0)
fig.update(hits=sum(r["hits"] for r in rows), frees=sum(r["frees"] for r in rows),
           lost=d["totals"]["lost"])
exp = dict(l.split(None, 1) for l in open(os.path.join(o, "oracle.expected")) if " " in l)
meta = dict(l.split(None, 1) for l in open(os.path.join(o, "rot", "kmemtrace.meta")) if " " in l)
meta_get = lambda k: meta.get(k, "0").strip()
leak = [r for r in d["outstanding"] if (r.get("symbol") or "").startswith("oracle_leak_alloc+")]
check("the oracle's leak outstanding at the end", sum(r["count"] for r in leak),
      int(exp["leak_outstanding"]))
check("its age: the whole soak", min((r["max_age_ns"] for r in leak), default=0) >= secs * 10**9,
      True)
check("rotation dropped segments", int(meta_get("segments_dropped").split()[0]) > 0, True)
fig.update(leak=sum(r["count"] for r in leak),
           leak_age_ns=min((r["max_age_ns"] for r in leak), default=0),
           last_segment=meta_get("segments").split()[-1],
           dropped=meta_get("segments_dropped").split()[0])
import glob
fig["live"] = sum(1 for f in glob.glob(os.path.join(o, "rot", "ckpt.*", "cpu*.out"))
                  for d_ in [open(f, "rb").read()] for off in range(64, len(d_), 64)
                  if d_[off] in (1, 2))
fig["exact"] = int(fig["hits"] == events // 2 and fig["frees"] == events // 2 and
                   fig["leak"] == int(exp["leak_outstanding"]) and fig["lost"] == 0)
save()
print("NOTE\tsoak figures: samples %d, disk max %d (max-size %d, segment %d), rss %d..%d kB, "
      "events %d, segments %s, dropped %s\t\t" % (len(samples), max(disk), MAX, SEG, min(rss),
      max(rss), events, meta.get("segments", "").strip(), meta.get("segments_dropped", "").strip()))
EOF
tap_checks python3 "$KMT_TEST_DIR/judge-soak.py" "$REPORT" "$o" "$SECONDS_WANTED" "$MAX" "$SEGMENT" \
	"$RESULTS/soak" "$RATE" "$wall" "$(guest_kernel)"
done_testing
