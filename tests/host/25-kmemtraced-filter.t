#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 25-kmemtraced-filter.t - kmemtraced's filters at the source against a fake debugfs
# (KMEMTRACED_TEST_FAKE_DEBUGFS=1) and a fake /proc (KMEMTRACED_TEST_PROC_DIR): --tgid, --pid,
# --cgroup (a path resolved to its id, or an id), --size and --call-site (resolved from kallsyms
# to [the function, the next symbol)) written to the module's filter file as its words; the
# filter file's lines in kmemtrace.meta (filter, filter_track_slots, filtered_start at the
# start; filter_end, filtered_end at the end); the filter found put back at the end; bad
# values refused; a module without a filter file refused; --cache of a name SLUB merged into
# another cache given to the module as that cache's name (from a fake /sys/kernel/slab and
# /proc/slabinfo); and kmemtrace-report's header (text and JSON) naming the filter and the
# counts it left out.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
D=$BIN/kmemtraced
REPORT=$BIN/kmemtrace-report
GEN=$BIN/kmemtrace-gen

require_tools kmemtraced kmemtrace-report kmemtrace-gen
scratch_dir filter

export KMEMTRACED_TEST_FAKE_DEBUGFS=1
K=$T/fake/kmemtrace
fake_module "$K" 1.2
P=$T/proc
mkdir -p "$P"
export KMEMTRACED_TEST_PROC_DIR=$P
: >"$P/modules"
cat >"$P/kallsyms" <<'KS'
ffffffff81000000 T _stext
ffffffff81001000 T kmt_target_fn
ffffffff81001000 T kmt_target_alias
ffffffff810010a0 t kmt_after_fn
ffffffff81002000 t kmt_twice
ffffffff81003000 t kmt_twice
ffffffff81004000 T kmt_last
ffffffffc0000000 t kmt_mod_fn	[kmt_mod]
ffffffffc0000200 t kmt_mod_next	[kmt_mod]
KS
# The module's file as it reads with no filter: the counters since load.
filter_file() {	# filter_file SPEC A0 F0 U0 A1 F1 U1
	printf '%s\n# track slots 1024 used 0\n# cpu filtered_allocs filtered_frees untracked\n0 %s %s %s\n1 %s %s %s\n' \
		"$@" >"$K/filter"
}
filter_file none 5 6 0 7 8 1
CG=$T/cgroup
mkdir -p "$CG"
# What kmemtraced will find for the path: the id of its file handle, else its inode number.
CGID=$(python3 - "$CG" <<'EOF'
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(8 + 64)
struct.pack_into("I", buf, 0, 64)
mid = ctypes.c_int()
if libc.name_to_handle_at(-100, sys.argv[1].encode(), buf, ctypes.byref(mid), 0) == 0 and \
   struct.unpack_from("I", buf, 0)[0] >= 8:
    print(struct.unpack_from("Q", buf, 8)[0])
else:
    print(os.stat(sys.argv[1]).st_ino)
EOF
)

O=$T/t1
# kmemtraced writes the words; the plain file then holds them alone.
run "$D" -q -r "$T/fake" -o "$O" --tgid 4242 --pid 4243 --cgroup "$CG" --size 8-64 \
	--call-site kmt_target_fn --call-site kmt_mod_fn --cache kmalloc-8k -- sh -c "cp '$O/kmemtrace.meta' '$T/start.meta' &&
	cp '$K/filter' '$T/written'"
is "$rc" 0 "kmemtraced with every filter option: exit 0"
is "$err" "" "... nothing on stderr"
spec="tgid=4242 pid=4243 cgroup=$CGID size=8-64 site=0xffffffff81001000-0xffffffff810010a0 site=0xffffffffc0000000-0xffffffffc0000200 cache=kmalloc-8k"
is "$(cat "$T/written")" "$spec" \
	"the module's filter file got the words: the cgroup's id, each function up to the next symbol"
is "$(grep '^filter ' "$T/start.meta")" "filter $spec" "meta at start: the filter in force (the file's first line)"
is "$(grep -c '^filter_end\|^filtered_end' "$T/start.meta")" 0 "meta at start: no end lines yet"
is "$(grep '^filter_end ' "$O/kmemtrace.meta")" "filter_end $spec" "meta at the end: the filter in force then"
is "$(head -n 1 "$K/filter")" "none" "the filter found (none) is put back at the end"

# --cache of a name SLUB merged into another cache: the module's name for the cache is the
# one /proc/slabinfo lists whose /sys/kernel/slab entry is the same directory.
S=$T/slab
mkdir -p "$S/:0000096" "$S/kmalloc-96" "$S/dentry"
ln -s :0000096 "$S/kmt_oracle_merged"
ln -s ../slab/:0000096 "$S/ext4_groupinfo_1k"
ln -s kmalloc-96 "$S/kmt_into_kmalloc"
ln -s dentry "$S/kmt_into_dentry"
printf 'slabinfo - version: 2.1\n# name <active_objs> ...\next4_groupinfo_1k 10 10 96 42 1 : tunables 0 0 0\ndentry 5 5 192 21 1 : tunables 0 0 0\nkmalloc-96 3 3 96 42 1 : tunables 0 0 0\n' >"$P/slabinfo"
export KMEMTRACED_TEST_SLAB_DIR=$S
for c in "kmt_oracle_merged ext4_groupinfo_1k" "kmt_into_dentry dentry" "dentry dentry" \
	"kmt_unknown kmt_unknown" "kmalloc-96 kmalloc-96" "kmt_into_kmalloc kmalloc-96"; do
	set -- $c
	run "$D" -f -r "$T/fake" -o "$T/alias" --cache "$1" -- sh -c "cp '$K/filter' '$T/written'"
	is "$rc" 0 "--cache $1: exit 0"
	is "$(cat "$T/written")" "cache=$2" "--cache $1: the module is given cache=$2"
	if [ "$1" != "$2" ]; then
		like "$err" "--cache $1: SLUB merged it into the cache $2" "--cache $1: says which cache it is"
	else
		ok_cmd "--cache $1: nothing said of a merge" sh -c "! grep -q 'SLUB merged' '$T/err'"
	fi
done
unset KMEMTRACED_TEST_SLAB_DIR
printf 'none\n' >"$K/filter"

# A filter set through debugfs, changed during the trace: kmemtraced leaves it alone and
# writes down the file as it was at the start and at the end, counters included.
filter_file "tgid=7" 5 6 0 7 8 1
O=$T/t2
run "$D" -q -f -r "$T/fake" -o "$O" -- sh -c "cp '$O/kmemtrace.meta' '$T/start.meta' &&
	printf 'tgid=8\n# track slots 1024 used 3\n# cpu filtered_allocs filtered_frees untracked\n0 15 16 2\n1 27 28 1\n' >'$K/filter'"
is "$rc" 0 "kmemtraced with a filter in force: exit 0"
is "$(grep '^filter ' "$T/start.meta")" "filter tgid=7" "meta at start: the filter in force"
is "$(grep '^filter_track_slots ' "$T/start.meta")" "filter_track_slots 1024" "meta at start: the table's size"
is "$(grep '^filtered_start ' "$T/start.meta")" $'filtered_start 0 5 6 0\nfiltered_start 1 7 8 1' \
	"meta at start: the per-CPU counters"
is "$(grep '^filter ' "$O/kmemtrace.meta")" "filter tgid=7" "meta at the end: the start's filter kept"
is "$(grep '^filter_end ' "$O/kmemtrace.meta")" "filter_end tgid=8" "meta at the end: the filter changed during the trace"
is "$(grep '^filtered_end ' "$O/kmemtrace.meta")" $'filtered_end 0 15 16 2\nfiltered_end 1 27 28 1' \
	"meta at the end: the per-CPU counters at the end"
is "$(head -n 1 "$K/filter")" "tgid=8" "no filter option: the module's filter is left as it is"
# The summary says what the filter left out during the trace, apart from what was lost.
filter_file "tgid=7" 5 6 0 7 8 1
run "$D" -f -r "$T/fake" -o "$O" -- sh -c "printf 'tgid=8\n# track slots 1024 used 3\n# cpu filtered_allocs filtered_frees untracked\n0 15 16 2\n1 27 28 1\n' >'$K/filter'"
is "$rc" 0 "the same, with the summary: exit 0"
like "$err" "filter at the source: tgid=7; left out 30 allocations and 30 frees (not lost); 2 allocations recorded untracked" \
	"the summary: what the filter left out, summed over the CPUs (end - start)"

# The report: a trace of its own with this metadata.
"$GEN" -o "$T/gen" --cpus 2 --events 500 --seed 5 >/dev/null || { echo "Bail out! kmemtrace-gen failed"; exit 1; }
cp "$O/kmemtrace.meta" "$T/gen/kmemtrace.meta"
run "$REPORT" "$T/gen"
is "$rc" 0 "kmemtrace-report of a filtered trace: exit 0"
flat=$(printf '%s' "$out" | tr -s ' \n' '  ')
like "$flat" "Recorded at the source only: tgid=7 (at the end: tgid=8)." "text header: the filter in force"
# Left out during the trace: the end's counters less the start's, summed over the CPUs.
like "$flat" "not recorded: 30 allocations and 30 frees; 2 allocations recorded without their free" \
	"text header: what the filter left out and the untracked allocations (end - start)"
run "$REPORT" --json "$T/gen"
is "$rc" 0 "kmemtrace-report --json: exit 0"
is "$(jget 'd["trace"]["source_filter"]' "$T/out")" "tgid=7" "JSON: trace.source_filter"
is "$(jget 'd["trace"]["source_filter_end"]' "$T/out")" "tgid=8" "JSON: trace.source_filter_end"
is "$(jget '(d["trace"]["filtered_allocs"], d["trace"]["filtered_frees"], d["trace"]["untracked_allocs"])' "$T/out")" \
	"(30, 30, 2)" "JSON: filtered_allocs, filtered_frees, untracked_allocs"
# A trace without a filter: nulls, and nothing in the text header.
sed -i '/^filter/d' "$T/gen/kmemtrace.meta"
run "$REPORT" --json "$T/gen"
is "$(jget '(d["trace"]["source_filter"], d["trace"]["filtered_allocs"])' "$T/out")" "(None, None)" \
	"JSON without a filter in the metadata: null"
run "$REPORT" "$T/gen"
is "$(grep -c 'at the source' <<<"$out")" 0 "text without a filter: no filter line"

# A filter already in force (set through debugfs) comes back after the run's own.
filter_file "size=1-2" 0 0 0 0 0 0
run "$D" -q -f -r "$T/fake" -o "$O" --size 100 -- true
is "$rc" 0 "--size N: exit 0"
is "$(grep '^filter ' "$O/kmemtrace.meta")" "filter size=100-100" "--size N is N to N bytes"
is "$(head -n 1 "$K/filter")" "size=1-2" "the filter found is put back"
run "$D" -q -f -r "$T/fake" -o "$O" --size 4096- --cgroup 77 -- true
is "$(grep '^filter ' "$O/kmemtrace.meta")" "filter cgroup=77 size=4096-" "--size MIN- and --cgroup ID"
# No filter option: the filter in force is left alone, and written down.
run "$D" -q -f -r "$T/fake" -o "$O" -- true
is "$(grep '^filter ' "$O/kmemtrace.meta")" "filter size=1-2" "no option: the filter in force is recorded as it is"

# Refused before anything is traced.
for bad in "--size 9-3" "--size x" "--tgid 0" "--tgid -5" "--pid abc" "--cache a,b" \
	"--cache $(printf 'c%.0s' {1..64})"; do
	# shellcheck disable=SC2086 # the words are the options
	run "$D" -q -f -r "$T/fake" -o "$T/bad" $bad -- true
	is "$rc" 1 "$bad: usage error (exit 1)"
done
run "$D" -q -f -r "$T/fake" -o "$T/bad" --call-site no_such_fn -- true
is "$rc" 3 "--call-site of an unknown function: exit 3"
like "$err" "no_such_fn: no such function in kallsyms" "... naming it"
run "$D" -q -f -r "$T/fake" -o "$T/bad" --call-site kmt_twice -- true
is "$rc" 3 "--call-site of a name two functions have: exit 3"
like "$err" "several functions have this name" "... saying so"
run "$D" -q -f -r "$T/fake" -o "$T/bad" --call-site kmt_mod_next -- true
like "$err" "its end is unknown" "--call-site of the last symbol: its end is unknown"
run "$D" -q -f -r "$T/fake" -o "$T/bad2" --cgroup "$T/nonesuch" -- true
is "$rc" 3 "--cgroup of a missing path: exit 3"
left=$(find "$T/bad" "$T/bad2" \( -name 'cpu*' -o -name '*meta*' \) 2>/dev/null | wc -l)
is "$left" 0 "... and no trace was written by any refused run"
is "$(head -n 1 "$K/filter")" "size=1-2" "... and the module's filter untouched"
rm "$K/filter"
run "$D" -q -f -r "$T/fake" -o "$T/bad" --tgid 5 -- true
is "$rc" 3 "a module without a filter file: exit 3"
like "$err" "cannot filter at the source" "... saying the module cannot filter"
run "$D" -q -f -r "$T/fake" -o "$O" -- true
is "$rc" 0 "a module without a filter file, no filter asked: exit 0"
is "$(grep -c '^filter' "$O/kmemtrace.meta")" 0 "... and no filter line in the metadata"

done_testing
