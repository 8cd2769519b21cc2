#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 21-kmemtraced-meta.t - what kmemtraced writes into kmemtrace.meta for trace format 1.1, against
# a fake debugfs (KMEMTRACED_TEST_FAKE_DEBUGFS=1) and a fake /sys/kernel/slab
# (KMEMTRACED_TEST_SLAB_DIR, honoured only with the fake debugfs): the module's coverage file
# copied line by line, nothing for a module without one; one slab_alias line per cache and merged
# name, blanks escaped, names made or removed during the trace kept; no /sys/kernel/slab is no
# error; kmemtrace-report naming the merged cache by those names; and (1.2) the module's stacks
# file copied as stacks_config, stacks_start and stacks_end lines.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
D=$BIN/kmemtraced
GEN=$BIN/kmemtrace-gen
REPORT=$BIN/kmemtrace-report

require_tools kmemtraced kmemtrace-gen kmemtrace-report
scratch_dir meta

# A fake module of trace format 1.1 with one CPU whose buffer holds a generated trace.
export KMEMTRACED_TEST_FAKE_DEBUGFS=1
K=$T/fake/kmemtrace
fake_module "$K" 1.1
"$GEN" -o "$T/gen" --cpus 1 --events 2000 --seed 11 --probed-every 5 >/dev/null ||
	{ echo "Bail out! kmemtrace-gen failed"; exit 1; }
# With -- COMMAND the daemon drops what was buffered before: the command writes the records.
tail -c +65 "$T/gen/cpu0.out" >"$T/records"
# As the module writes it, with a CR and a blank line a careless writer might add.
printf '%s\n' '# path how detail' 'kmalloc tracepoint' 'kmem_cache_alloc tracepoint' \
	'kfree tracepoint' 'kmem_cache_free tracepoint' \
	'kmem_cache_alloc_bulk kretprobe kmem_cache_alloc_bulk_noprof' \
	$'kmem_cache_free_bulk unseen kprobes disabled\r' '' \
	'kmalloc_nolock absent no such function in this kernel' 'kfree_nolock absent' \
	>"$K/coverage"

# A cache of the generated trace, to be the one SLUB merged others into.
CNAME=$("$REPORT" --json "$T/gen" 2>/dev/null | python3 -c "import json,sys
print([c['name'] for c in json.load(sys.stdin)['caches'] if c['kind'] == 'cache'][0])")

# A fake /sys/kernel/slab: caches are directories, merged names symlinks to them.
S=$T/slab
mkdir -p "$S/:0000128" "$S/:A-0000064" "$S/dentry" "$S/odd name"
ln -s :0000128 "$S/$CNAME"			# the name the merged cache was created with
ln -s ../slab/:0000128 "$S/kmt_merged_b"		# the other form of link sysfs makes
ln -s :0000128 "$S/zz_merged"
ln -s dentry "$S/dentry_too"
ln -s ':A-0000064' "$S/back\\slash"
touch "$S/not-a-cache"
export KMEMTRACED_TEST_SLAB_DIR=$S

O=$T/t1
# The command sees the start-of-run metadata; meanwhile a cache is created and one destroyed,
# and a probe misses calls, which the module's coverage file then says.
cp "$K/coverage" "$T/coverage.start"
run "$D" -q -r "$T/fake" -o "$O" -- sh -c "cp '$O/kmemtrace.meta' '$T/start.meta' &&
	ln -s :0000128 '$S/made_during' && rm '$S/zz_merged' && cat '$T/records' >>'$K/cpu0' &&
	sed -i 's/^kmem_cache_alloc_bulk .*/& (2 calls missed)/' '$K/coverage'"
is "$rc" 0 "kmemtraced with coverage and slab names: exit 0"
is "$err" "" "... nothing on stderr"

want_cov=$(sed 's/\r$//; /^#/d; /^$/d; s/^/coverage /' "$T/coverage.start")
is "$(grep '^coverage ' "$T/start.meta")" "$want_cov" \
	"meta at start: the coverage file line by line, in its order, comments and blank lines left out"
want_cov=$(sed 's/\r$//; /^#/d; /^$/d; s/^/coverage /' "$K/coverage")
like "$want_cov" "kmem_cache_alloc_bulk_noprof (2 calls missed)" "(the module's file changed)"
is "$(grep '^coverage ' "$O/kmemtrace.meta")" "$want_cov" \
	"meta at the end: the coverage file as it was at the end, with the calls missed"
is "$(grep -c $'\r' "$O/kmemtrace.meta")" 0 "meta: no CR copied"

# What the directory held at the start, as the documented lines (names sorted, blanks escaped).
slab_lines() {	# slab_lines DIR: the expected slab_alias lines for it
	(cd "$1" && for n in * :*; do
		[ -e "$n" ] || [ -L "$n" ] || continue
		if [ -L "$n" ]; then t=$(basename "$(readlink "$n")")
		elif [ -d "$n" ]; then t=$n
		else continue; fi
		printf '%s\t%s\n' "$n" "$t"
	done) | LC_ALL=C sort -u | python3 -c '
import sys
def esc(w):
    return "".join("\\x%02x" % ord(c) if ord(c) <= 0x20 or c in "\x7f\\" else c for c in w)
for l in sys.stdin.read().splitlines():
    n, t = l.split("\t")
    print("slab_alias %s %s" % (esc(n), esc(t)))'
}
# The start's directory: made_during is not there yet, zz_merged still is.
rm "$S/made_during"
ln -s :0000128 "$S/zz_merged"
want_start=$(slab_lines "$S")
is "$(grep '^slab_alias ' "$T/start.meta")" "$want_start" \
	"meta at start: one slab_alias line per cache and merged name, sorted, escaped"
ln -s :0000128 "$S/made_during"
want_end=$(slab_lines "$S")
is "$(grep '^slab_alias ' "$O/kmemtrace.meta")" "$want_end" \
	"meta at the end: also the cache made during the trace, and still the one removed"
like "$(cat "$O/kmemtrace.meta")" $'\nslab_alias odd\\x20name odd\\x20name\n' \
	"meta: a blank in a name written \\x20"
like "$(cat "$O/kmemtrace.meta")" $'\nslab_alias back\\x5cslash :A-0000064\n' \
	"meta: a backslash written \\x5c"
like "$(cat "$O/kmemtrace.meta")" $'\nslab_alias kmt_merged_b :0000128\n' \
	"meta: a ../slab/ link gives the directory's name"
! grep -q 'not-a-cache' "$O/kmemtrace.meta"
ok $? "meta: a plain file is no cache"

# kmemtrace-report on it: the generator's $CNAME is shown with the names merged into it.
is "$(stat -c %s "$O/cpu0.out")" "$(($(stat -c %s "$T/records") + 64))" \
	"the trace holds the records the command wrote"
run "$REPORT" --json "$O"
is "$rc" 0 "report of the trace: exit 0"
echo "$out" >"$T/r.json"
is "$(python3 -c "import json,sys; d=json.load(open(sys.argv[1]))
print(','.join([c['aliases'] for c in d['caches'] if c['name'] == '$CNAME'][0]))" "$T/r.json")" \
	"kmt_merged_b,made_during,zz_merged" "report: $CNAME's aliases from the metadata"
is "$(python3 -c "import json,sys; d=json.load(open(sys.argv[1]))
print([c['path'] for c in d['coverage'] if c['how'] == 'unseen'])" "$T/r.json")" \
	"['kmem_cache_free_bulk']" "report: the unseen path from the metadata"
run "$REPORT" "$O"
like "$(printf '%s' "$out" | tr '\n' ' ' | tr -s ' ')" \
	"kmem_cache_alloc_bulk (its kretprobe missed 2 calls since the module was loaded); some objects it hands out look allocated before the trace" \
	"report: the calls a probe missed are said in the header"

# A 1.2 module's stacks file: its configuration and its counters at the start and at the end
# (the command changes them as tracing would), comments left out.
printf '1.2\n' >"$K/abi_version"
printf '%s\n' '# stacks depth 32 frees 1 entries 4096 bytes_per_cpu 1116160' \
	'# cpu with_stack no_stack_full no_stack_unwind stacks_written stacks_dropped entries_used' \
	'0 10 1 2 3 0 3' >"$K/stacks"
run "$D" -q -r "$T/fake" -o "$T/t3" -- sh -c "cp '$T/t3/kmemtrace.meta' '$T/t3.start' &&
	sed -i 's/^0 .*/0 25 4 2 7 1 6/' '$K/stacks'"
is "$rc" 0 "kmemtraced with a stacks file: exit 0"
is "$(grep '^stacks_' "$T/t3.start")" \
	"$(printf 'stacks_config depth 32 frees 1 entries 4096 bytes_per_cpu 1116160\nstacks_start 0 10 1 2 3 0 3')" \
	"meta at start: stacks_config and stacks_start from the module's stacks file"
is "$(grep '^stacks_' "$T/t3/kmemtrace.meta")" \
	"$(printf 'stacks_config depth 32 frees 1 entries 4096 bytes_per_cpu 1116160\nstacks_start 0 10 1 2 3 0 3\nstacks_end 0 25 4 2 7 1 6')" \
	"meta at the end: stacks_end too, as the file was at the end"
rm "$K/stacks"

# A module without a coverage file (before 1.1) and a kernel without /sys/kernel/slab.
rm "$K/coverage"
printf '1.0\n' >"$K/abi_version"
run env KMEMTRACED_TEST_SLAB_DIR="$T/no-such-dir" "$D" -q -r "$T/fake" -o "$T/t2" -- true
is "$rc" 0 "old module, no /sys/kernel/slab: exit 0"
is "$err" "" "... nothing on stderr: neither is an error"
! grep -q '^coverage\|^slab_alias\|^stacks_' "$T/t2/kmemtrace.meta"
ok $? "meta: no coverage line, no slab_alias line, no stacks line"
run "$REPORT" "$T/t2"
like "$(printf '%s' "$out" | tr '\n' ' ' | tr -s ' ')" "Not covered by this trace: the bulk and lock-free paths" \
	"report: the header says the bulk and lock-free paths were not covered"

done_testing
