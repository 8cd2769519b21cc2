#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 23-kmemtraced-formats.t - kmemtraced copies the traced kernel's tracepoint formats of the kmem
# events into the trace (tracepoint_formats, Documentation/trace-format.md section 6), against a
# fake debugfs (KMEMTRACED_TEST_FAKE_DEBUGFS=1) and a fake tracefs (KMEMTRACED_TEST_TRACEFS,
# honoured only with the fake debugfs) made of the format files 7.3 gave in the guest: the file
# is byte for byte what kmemtraced wrote there from the real tracefs (tests/gfp/), events it does
# not record left out; <debugfs>/tracing is read when there is no other tracefs; without one the
# trace is taken all the same, kmemtrace.meta says so and no file is left, not even an earlier
# trace's with -f; a format file it cannot use is a warning. kmemtrace-report then names the
# trace's masks with that kernel's names.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
D=$BIN/kmemtraced
GEN=$BIN/kmemtrace-gen
REPORT=$BIN/kmemtrace-report
DATA=$(cd "$(dirname "$0")/../gfp" && pwd)
REL=7.3.4+deb13-amd64

require_tools kmemtraced kmemtrace-gen kmemtrace-report
scratch_dir formats

# A fake module of trace format 1.2 with one CPU; the command appends the records.
export KMEMTRACED_TEST_FAKE_DEBUGFS=1
FAKE=$T/fake
K=$FAKE/kmemtrace
fake_module "$K" 1.2
"$GEN" -o "$T/gen" --cpus 1 --events 200 --seed 3 >/dev/null ||
	{ echo "Bail out! kmemtrace-gen failed"; exit 1; }
tail -c +65 "$T/gen/cpu0.out" >"$T/records"
feed="cat '$T/records' >>'$K/cpu0'"

# tracefs as the guest's was: events/kmem/EVENT/format, split from the file kmemtraced wrote
# there, plus an event kmemtrace does not record.
split_formats() {	# split_formats FILE DIR
	awk -v d="$2" '/^event kmem\// { e = substr($0, 12); f = d "/events/kmem/" e "/format";
		system("mkdir -p \"" d "/events/kmem/" e "\""); printf "" > f; next }
		f { print > f }' "$1"
}
TF=$T/tracefs
split_formats "$DATA/$REL/tracepoint_formats" "$TF"
mkdir -p "$TF/events/kmem/rss_stat"
printf 'name: rss_stat\nprint fmt: "x"\n' >"$TF/events/kmem/rss_stat/format"
export KMEMTRACED_TEST_TRACEFS=$TF

O=$T/t1
run "$D" -q -r "$FAKE" -o "$O" -- sh -c "$feed"
is "$rc" 0 "kmemtraced with a tracefs: exit 0"
is "$err" "" "... nothing on stderr"
ok_cmd "tracepoint_formats is $REL's, byte for byte as kmemtraced wrote it in the guest" \
	cmp "$O/tracepoint_formats" "$DATA/$REL/tracepoint_formats"
is "$(grep -c '^event ' "$O/tracepoint_formats")" 6 "... six events, rss_stat left out"
is "$(stat -c %a "$O/tracepoint_formats")" 600 "... mode 0600"
is "$(grep '^tracepoint_formats ' "$O/kmemtrace.meta")" "tracepoint_formats $TF/events/kmem" \
	"kmemtrace.meta: where it came from"

# The report names the generated trace's masks (0xcc0) as ftrace named that mask on 7.3.
want=$(awk '$1 == "0xcc0" { print $2 }' "$DATA/$REL/pairs")
run "$REPORT" --raw --raw-ip "$O"
is "$rc" 0 "kmemtrace-report --raw: exit 0"
is "$(grep -o ' gfp=[^ ]*' "$T/out" | sort -u | tr '\n' ' ')" " gfp=$want  gfp=none " \
	"... allocations' 0xcc0 as ftrace printed it ($want), frees' 0 as the kernel's \"none\""

# No tracefs at all: traced all the same, and the metadata says why there is no file.
unset KMEMTRACED_TEST_TRACEFS
: >"$K/cpu0"
run "$D" -q -f -r "$FAKE" -o "$O" -- sh -c "$feed"
is "$rc" 0 "no tracefs: exit 0 (with -f over the first trace)"
is "$err" "" "... nothing on stderr"
ok_cmd "... the earlier trace's tracepoint_formats is gone" test ! -e "$O/tracepoint_formats"
like "$(grep '^tracepoint_formats ' "$O/kmemtrace.meta")" "tracepoint_formats none: no tracefs" \
	"... kmemtrace.meta says there was none"
run "$REPORT" --raw --raw-ip "$O"
is "$(grep -o ' gfp=[^ ]*' "$T/out" | sort -u | tr '\n' ' ')" " gfp=0x0  gfp=0xcc0 " \
	"... and the report prints the masks in hex"

# <debugfs>/tracing, where tracefs mounts itself when nothing else mounted it.
split_formats "$DATA/$REL/tracepoint_formats" "$FAKE/tracing"
: >"$FAKE/tracing/events/kmem/kfree/format"
: >"$K/cpu0"
O=$T/t2
run "$D" -q -r "$FAKE" -o "$O" -- sh -c "$feed"
is "$rc" 0 "tracefs under debugfs: exit 0"
is "$(grep '^tracepoint_formats ' "$O/kmemtrace.meta")" \
	"tracepoint_formats $FAKE/tracing/events/kmem" "... read from <debugfs>/tracing"
like "$err" "kfree/format: empty; GFP masks of this event will be shown in hex" \
	"an empty format file: a warning naming it"
is "$(grep -c '^event ' "$O/tracepoint_formats")" 5 "... and the other five events copied"

# Format files, none usable: no file, and the metadata says why.
for f in "$FAKE"/tracing/events/kmem/*/format; do : >"$f"; done
: >"$K/cpu0"
O=$T/t3
run "$D" -q -r "$FAKE" -o "$O" -- sh -c "$feed"
is "$rc" 0 "no usable format file: exit 0"
ok_cmd "... no tracepoint_formats" test ! -e "$O/tracepoint_formats"
like "$(grep '^tracepoint_formats ' "$O/kmemtrace.meta")" \
	"tracepoint_formats none: no readable format file in $FAKE/tracing/events/kmem" \
	"... kmemtrace.meta says why"

done_testing
