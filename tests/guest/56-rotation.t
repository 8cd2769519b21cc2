#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 56-rotation.t - kmemtraced --max-size in a guest: the oracle's pattern (a leak, a cross-CPU
# free, a kfree of a cache object, a failed allocation), then its allocation load for a second
# and its growth pattern, traced with stacks under a small bound so that many segments are cut
# and dropped. --keep-dropped moves the dropped segments aside instead of removing them, so the
# same run is also at hand whole: the report over the kept window (the checkpoint and the kept
# segments) must equal the report over every segment, per call site (every column), per cache,
# per stack, in the totals and errors, in the outstanding objects with their ages, and in --at
# and --diff at times in the window; the oracle's leak, allocated in a dropped segment, is there
# with its count. The bound holds (the checkpoint and the closed kept segments within
# --max-size), every file passes kmemtrace_check --strict, the metadata says what was dropped, a
# truncated or corrupted checkpoint is refused naming the file and offset, and a time before the
# window is refused.
KMT_TEST_TIMEOUT=300
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

require_cmds python3

REPORT=$(host_tool kmemtrace-report)
CHECKER=$(host_tool kmemtrace_check)

mkdir -p "$KMT_TEST_DIR"
guest=$KMT_TEST_DIR/rotation.sh
cat >"$guest" <<'EOS'
#!/bin/sh
# In the guest: kmemtraced bounded to 1 MiB in 256 KiB segments over the oracle's work.
OR=/sys/kernel/debug/kmemtrace_oracle
cat > /tmp/work.sh <<EOW
#!/bin/sh
echo 1 > $OR/run || exit 1
cat $OR/expected > $KMT_OUT/oracle.expected
echo 4 > $OR/load || exit 1
sleep 1
echo 0 > $OR/load
echo 1 > $OR/growth || exit 1
EOW
chmod +x /tmp/work.sh
kmemtraced -v -o "$KMT_OUT/rot" --max-size 1M --segment-size 256k \
	--keep-dropped "$KMT_OUT/dropped" -- /tmp/work.sh 2> "$KMT_OUT/kmemtraced.err"
echo $? > "$KMT_OUT/kmemtraced.status"
EOS
chmod +x "$guest"

vm_ok rotation -c 2 -T 200 --no-daemon -p 'stack_depth=16' -m kmemtrace_oracle -a "$guest" -- \
	rotation.sh
o=$VM_OUT
is "$(command_status)" 0 "the guest script ran"
is "$(cat "$o/kmemtraced.status" 2>/dev/null)" 0 "kmemtraced --max-size: exit 0" ||
	note_file "$o/kmemtraced.err"
dmesg_clean
[ -d "$o/rot" ] && [ -d "$o/dropped" ] || bail "no rotated trace from the guest"

# The whole run: the dropped segments and the kept ones, with the metadata, no checkpoint.
full=$KMT_TEST_DIR/full
rm -rf "$full" && mkdir -p "$full"
for f in "$o/rot"/*; do [ -f "$f" ] && cp "$f" "$full/"; done
cp -r "$o/dropped"/seg.* "$o/rot"/seg.* "$full/"

bad=0
for f in "$o"/rot/*/cpu*.out "$o"/dropped/*/cpu*.out; do
	"$CHECKER" --strict -q "$f" >&2 || { bad=1; diag "kmemtrace_check --strict: $f"; }
done
is "$bad" 0 "every segment and checkpoint file passes kmemtrace_check --strict"

cat >"$KMT_TEST_DIR/judge-rotation.py" <<'EOF'
import glob, os, shutil, struct, subprocess, sys

report, rot, full, tmp, top = sys.argv[1:6]
MAX, SEG = 1 << 20, 256 << 10
sys.path.insert(0, top + "/tests/host")
import window_compare
check = window_compare.check


def run(d, *args):
    p = subprocess.run([report, *args, d], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


meta = {}
for line in open(os.path.join(rot, "kmemtrace.meta")):
    w = line.split()
    if w and not w[0].startswith("#"):
        meta[w[0]] = w[1:]
first, last = map(int, meta["segments"])
ndrop, dbytes, cut = map(int, meta["segments_dropped"])
check("max_size in the metadata", meta["max_size"], [str(MAX)])
check("segment_size in the metadata", meta["segment_size"], [str(SEG)])
check("segments were dropped (at least 3)", ndrop >= 3, True)
check("the kept segments follow the dropped ones", first, ndrop + 1)
kept = sorted(os.path.basename(p) for p in glob.glob(os.path.join(rot, "seg.*")))
check("the kept segments on disk", kept, ["seg.%06u" % s for s in range(first, last + 1)])
check("one checkpoint, of the oldest kept segment",
      sorted(os.path.basename(p) for p in glob.glob(os.path.join(rot, "ckpt.*"))),
      ["ckpt.%06u" % first])
gone = sorted(os.path.basename(p) for p in glob.glob(os.path.join(os.path.dirname(rot), "dropped", "seg.*")))
check("--keep-dropped holds every dropped segment", gone, ["seg.%06u" % s for s in range(1, first)])


def records(path):
    return (os.path.getsize(path) - 64) // 64


def seg_bytes(d):
    return sum(os.path.getsize(f) - 64 for f in glob.glob(os.path.join(d, "cpu*.out")))


dropped_dir = os.path.join(os.path.dirname(rot), "dropped")
check("segments_dropped's bytes are the dropped segments'",
      sum(seg_bytes(d) for d in glob.glob(os.path.join(dropped_dir, "seg.*"))), dbytes)
ck = os.path.join(rot, "ckpt.%06u" % first)
closed = sum(seg_bytes(os.path.join(rot, "seg.%06u" % s)) for s in range(first, last))
ckb = sum(os.path.getsize(f) for f in glob.glob(os.path.join(ck, "cpu*.out")))
check(f"on disk: checkpoint ({ckb}) + closed kept segments ({closed}) within --max-size",
      ckb + closed <= MAX, True)
# The checkpoint's headers: kind, cut, segment, and every dropped record counted.
dropped_recs = {}
for d in glob.glob(os.path.join(dropped_dir, "seg.*")):
    for f in glob.glob(os.path.join(d, "cpu*.out")):
        c = int(os.path.basename(f)[3:-4])
        dropped_recs[c] = dropped_recs.get(c, 0) + records(f)
for f in sorted(glob.glob(os.path.join(ck, "cpu*.out"))):
    h = open(f, "rb").read(64)
    c = int(os.path.basename(f)[3:-4])
    E = ">" if h[:4] == b"RTMK" else "<"
    kind, = struct.unpack_from(E + "B", h, 17)
    hcut, hdropped, hseg = struct.unpack_from(E + "QQI", h, 40)
    check(f"{os.path.basename(f)}: kind checkpoint", kind, 1)
    check(f"{os.path.basename(f)}: cut as the metadata's", hcut, cut)
    check(f"{os.path.basename(f)}: segment", hseg, first)
    check(f"{os.path.basename(f)}: dropped records", hdropped, dropped_recs.get(c, 0))

# The window's report against the whole run's, also --stacks, --at and --diff at times in the
# window (ns from the trace's start).
F = window_compare.report(report, full)
start, end = F["trace"]["first_ns"], F["trace"]["last_ns"]
times = [cut - start + 1000, (cut + end) // 2 - start, end - start - 1000]
W = window_compare.compare(report, rot, full, "window", times)
if W is None:
    sys.exit(0)
check("nothing lost (rotation is not loss)", W["totals"]["lost"], 0)

exp = {}
for line in open(os.path.join(os.path.dirname(rot), "oracle.expected")):
    w = line.split(None, 1)
    if len(w) == 2:
        exp[w[0]] = w[1].strip()
leak = [r for r in W["outstanding"] if (r.get("symbol") or "").startswith("oracle_leak_alloc+")]
check("the oracle's leak, allocated in a dropped segment, is outstanding in the window",
      sum(r["count"] for r in leak), int(exp["leak_outstanding"]))
rc, so, se = run(rot, "--at=1000ns")
check("--at before the window: exit 1", rc, 1)

# A truncated and a corrupted checkpoint: refused, naming the file and the offset.
ckf = sorted(glob.glob(os.path.join(ck, "cpu*.out")))[0]
name = os.path.relpath(ckf, rot)
for what in ("truncated", "corrupted"):
    bad = os.path.join(tmp, what)
    shutil.rmtree(bad, ignore_errors=True)
    shutil.copytree(rot, bad)
    f = os.path.join(bad, name)
    data = bytearray(open(f, "rb").read())
    if what == "truncated":
        data = data[:-10]
        where = len(data) - len(data) % 64 if len(data) % 64 else len(data) - 64
    else:
        where = 64 * (len(data) // 64 // 2)
        data[where] = 0
    open(f, "wb").write(bytes(data))
    rc, so, se = run(bad)
    check(f"a {what} checkpoint: exit 2", rc, 2)
    check(f"a {what} checkpoint: the message names the file", name in se, True)
    check(f"a {what} checkpoint: and the offset", "offset" in se, True)
EOF
tap_checks python3 "$KMT_TEST_DIR/judge-rotation.py" "$REPORT" "$o/rot" "$full" "$KMT_TEST_DIR" \
	"$KMT_TOP"
done_testing
