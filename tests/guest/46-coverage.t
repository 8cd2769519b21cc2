#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 46-coverage.t - every slab object seen: the paths the slab tracepoints miss (the bulk API,
# kfree_bulk, and on 6.18+ the lock-free API and kfree_rcu's sheaves) are recorded with
# KMT_F_PROBED, exactly as the oracle's bulk pattern did them; the coverage file says how each
# path is recorded; and a trace of the oracle's bulk pattern, a maple-tree workload (mmap,
# mprotect, munmap loops) and make demo's workload has no error in its report.
KMT_TEST_TIMEOUT=300
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

[ -f "$KMT_TOP/tests/kmod/Kbuild" ] || skip_all "the oracle module (tests/kmod) not written yet"
require_cmds python3
mkdir -p "$KMT_TEST_DIR"
REPORT=$KMT_TOP/build/kmemtrace-report
script=$KMT_TEST_DIR/coverage.sh
judge=$KMT_TEST_DIR/judge.py
loop=$KMT_TEST_DIR/mmaploop
guest_cc -static -O2 -Wall -Wextra -Werror -o "$loop" "$KMT_TOP/tests/guest/mmaploop.c" ||
	bail "cannot build a static mmaploop (libc6-dev)"
ROUNDS=40

cat >"$script" <<EOS
#!/bin/sh
ROUNDS=$ROUNDS
EOS
cat >>"$script" <<'EOS'
D=$KMT_DEBUGFS
OR=/sys/kernel/debug/kmemtrace_oracle
O=$KMT_OUT
cat $D/coverage > $O/coverage
kmemtraced -o $O/t -- sh -c "echo 1 > $OR/bulk; mmaploop $ROUNDS; find / -xdev > /dev/null; ls -lR /sys/kernel/slab > /dev/null 2>&1" \
	> $O/t.err 2>&1
echo $? > $O/t.status
cat $OR/bulk_expected > $O/bulk_expected
cat $D/coverage > $O/coverage.end
cat $D/stats > $O/stats
uname -r > $O/uname
exit 0
EOS
chmod +x "$script"

# The judge: each oracle bulk function's records, by kind and KMT_F_PROBED, against its counts.
cat >"$judge" <<'EOF'
import bisect, collections, os, struct, sys
# The traced kernel's byte order (tests/guest/lib.sh exports it: ">" for s390x).
E = os.environ.get("KMT_GUEST_ENDIAN", "<")

KMALLOC, CACHE_ALLOC, KFREE, CACHE_FREE = 1, 2, 4, 5
PROBED = 0x10
# function -> (record type, probed?) that its calls leave in the trace
KINDS = {
    "oracle_bulk_alloc": (CACHE_ALLOC, True),
    "oracle_bulk_free": (CACHE_FREE, True),
    "oracle_bulk_single_free": (CACHE_FREE, False),
    "oracle_single_alloc": (CACHE_ALLOC, False),
    "oracle_single_bulk_free": (CACHE_FREE, True),
    "oracle_kbulk_alloc": (KMALLOC, False),
    "oracle_kfree_bulk": (KFREE, True),
    "oracle_merged_alloc": (CACHE_ALLOC, False),
    "oracle_merged_free": (CACHE_FREE, False),
}

def check(name, got, want):
    print("CHECK\t%s\t%s\t%s" % (name, got, want))

def main(expected, kallsyms, *paths):
    done = {}
    for line in open(expected):
        k, _, v = line.strip().partition(" ")
        if k == "done":
            f, c = v.split()
            done[f] = int(c)
    syms = sorted((int(f[0], 16), f[2]) for f in (l.split() for l in open(kallsyms))
                  if len(f) >= 3 and f[1] in "tT")
    addrs = [a for a, _ in syms]
    got = collections.Counter()
    events = []
    for p in paths:
        data = open(p, "rb").read()[64:]
        data = data[:len(data) - len(data) % 64]
        for t, fl, _, _, ts, cs, ptr in struct.iter_unpack(E + "BBHIQQQ32x", data):
            if t not in (KMALLOC, CACHE_ALLOC, KFREE, CACHE_FREE):
                continue
            i = bisect.bisect_right(addrs, cs) - 1
            s = syms[i][1] if i >= 0 else "?"
            if s not in KINDS:
                continue
            got[(s, t, bool(fl & PROBED))] += 1
            events.append((ts, t in (KMALLOC, CACHE_ALLOC), ptr))
    # Addresses come back: each free must follow an allocation of the same object.
    live, orphans, frees = set(), 0, 0
    for _, is_alloc, ptr in sorted(events):
        if is_alloc:
            live.add(ptr)
        else:
            frees += 1
            orphans += ptr not in live
            live.discard(ptr)
    check("the bulk pattern ran once", done and "ok", "ok")
    for f, (t, probed) in sorted(KINDS.items()):
        how = "probed" if probed else "tracepoint"
        check("%s: %s records == done" % (f, how), got[(f, t, probed)], done.get(f))
        wrong = sum(c for (g, gt, gp), c in got.items() if g == f and (gt, gp) != (t, probed))
        check("%s: no record of another kind" % f, wrong, 0)
    check("each of the pattern's %d frees follows its object's allocation by the pattern" % frees,
          orphans, 0)

main(*sys.argv[1:])
EOF

vm_ok coverage -c 2 -T 240 -p start_disabled=1 -m kmemtrace_oracle --no-daemon \
	-a "$script" -a "$loop" -- coverage.sh || true
R=$VM_OUT
is "$(command_status)" 0 "guest script ran to the end"
is "$(cat "$R/t.status" 2>/dev/null)" 0 "kmemtraced traced the workloads" || note_file "$R/t.err"
dmesg_clean

# The coverage file: the four tracepoints, and each other path hooked or absent, never unseen.
cov=$R/coverage
for p in kmalloc kmem_cache_alloc kfree kmem_cache_free; do
	is "$(awk -v p="$p" '$1 == p { print $2 }' "$cov" 2>/dev/null)" tracepoint "coverage: $p by its tracepoint"
done
is "$(awk '$1 == "kmem_cache_alloc_bulk" { print $2 }' "$cov" 2>/dev/null)" kretprobe \
	"coverage: kmem_cache_alloc_bulk by a kretprobe"
is "$(awk '$1 == "kmem_cache_free_bulk" { print $2 }' "$cov" 2>/dev/null)" kprobe \
	"coverage: kmem_cache_free_bulk by a kprobe"
# The lock-free API and kfree_rcu's sheaves came with 6.18.
series=$(sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p' "$R/uname" 2>/dev/null)
if printf '%s\n6.18\n' "$series" | sort -V -C; then
	want_nolock=absent want_sheaf=absent
else
	want_nolock=kprobe want_sheaf=kretprobe
fi
is "$(awk '$1 == "kfree_nolock" { print $2 }' "$cov" 2>/dev/null)" "$want_nolock" \
	"coverage ($series): kfree_nolock $want_nolock"
is "$(awk '$1 == "kfree_rcu_sheaf" { print $2 }' "$cov" 2>/dev/null)" "$want_sheaf" \
	"coverage ($series): kfree_rcu_sheaf $want_sheaf"
is "$(grep -c ' unseen ' "$cov" 2>/dev/null)" 0 "coverage: no path left unseen"
# Cache names and slot sizes: struct kmem_cache is public before 6.8, read through BTF after.
if printf '%s\n6.8\n' "$series" | sort -V -C; then want_layout='<linux/slub_def.h>'; else want_layout='vmlinux BTF'; fi
ok "cache layout ($series) from $want_layout" grep -qF "cache layout from $want_layout" "$R/dmesg.txt"
is "$(grep -c 'missed' "$R/coverage.end" 2>/dev/null)" 0 "coverage: no probe call missed"

ok "every file passes kmemtrace_check --strict" all_strict "$R/t"
is "$(awk '!/^#/ { d += $4 } END { print d + 0 }' "$R/stats" 2>/dev/null)" 0 "nothing dropped"
tap_checks python3 "$judge" "$R/bulk_expected" "$R/t/kallsyms" "$R"/t/cpu*.out

# No false alarm: the report of all of it names no error, certain or not.
"$REPORT" --json "$R/t" >"$R/report.json" 2>"$R/report.err"
is "$?" 0 "kmemtrace-report --json: exit 0" || note_file "$R/report.err"
errors=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(len(r["errors"]))' \
	"$R/report.json" 2>/dev/null)
is "$errors" 0 "the report lists no error (bulk pattern, maple tree loop, demo workload)" ||
	diag "$("$REPORT" "$R/t" 2>&1 | sed -n '/^Errors/,$p' | head -n 20)"

# The oracle's mergeable cache, found by the name it was created with whatever SLUB merged it into.
"$REPORT" --json --cache --cache-name kmt_oracle_merged "$R/t" >"$R/merged.json" 2>"$R/merged.err"
is "$?" 0 "kmemtrace-report --cache-name kmt_oracle_merged: exit 0" || note_file "$R/merged.err"
cat >"$KMT_TEST_DIR/merged.py" <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1]))
done = {}
for line in open(sys.argv[2]):
    k, _, v = line.strip().partition(" ")
    if k == "done":
        f, c = v.split()
        done[f] = int(c)
caches = rep["caches"]
print("INFO\tselected: %s" % ["%s %s" % (c["name"], c.get("aliases")) for c in caches])
print("CHECK\tone cache selected by the name kmt_oracle_merged\t%d\t1" % len(caches))
named = [c for c in caches if c["name"] == "kmt_oracle_merged" or "kmt_oracle_merged" in c["aliases"]]
print("CHECK\tit carries the name, as its own or an alias\t%d\t1" % len(named))
sites = [s for s in rep["callsites"] if (s.get("symbol") or "").startswith("oracle_merged_alloc+")]
print("CHECK\toracle_merged_alloc's allocations are in it\t%d\t%d" %
      (sum(s["hits"] for s in sites), done.get("oracle_merged_alloc", -1)))
EOF
tap_checks python3 "$KMT_TEST_DIR/merged.py" "$R/merged.json" "$R/bulk_expected"

[ "$_tap_failed" = 0 ] && rm -f "$R"/t/cpu*.out
done_testing
