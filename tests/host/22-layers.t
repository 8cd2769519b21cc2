#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 22-layers.t - kmemtraced's files call each other one way only (kmemtraced.h), and report/'s
# rooms use only their own room and those below (Documentation/architecture.md):
# scripts/check-layers passes on the built objects, and fails, naming the culprit, on copies of
# them with a call sideways between leaves, a call up from the bottom layer, a leaf including the
# top's header, an object the layer list does not place, or a room using one above it.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
OBJ=$BIN/obj
CHECK=scripts/check-layers

if [ ! -f "$OBJ/kmemtraced/kmemtraced.o" ] || [ ! -f "$OBJ/report/kmemtrace-report.o" ] || ! command -v nm >/dev/null ||
	! command -v "${CC:-cc}" >/dev/null; then
	echo "1..0 # SKIP $OBJ/kmemtraced or $OBJ/report not built (make SAN=1 tools), or no nm or cc"
	exit 0
fi
scratch_dir layers

run "$CHECK" -o "$OBJ" kmemtraced
ok "$rc" "the built objects of kmemtraced keep to their layers"
is "$err" "" "and nothing is said"

run "$CHECK" -o "$OBJ" report
ok "$rc" "the built objects of report/ keep to their rooms"
is "$err" "" "and nothing is said"

# bad NAME [DIR]: a copy of the objects of DIR (kmemtraced) in $T/NAME, to be spoilt.
bad() {
	mkdir -p "$T/$1"
	cp -r "$OBJ/${2:-kmemtraced}" "$T/$1/"
}
# object NAME OBJECT C [DIR]: OBJECT of the copy NAME replaced by one compiled from C.
object() {
	printf '%s\n' "$3" >"$T/$1.c"
	"${CC:-cc}" -c "$T/$1.c" -o "$T/$1/${4:-kmemtraced}/$2.o"
}

bad sideways
object sideways env 'void kmtd_cpu_start(void); int kmtd_check_root(void) { kmtd_cpu_start(); return 0; }'
run "$CHECK" -o "$T/sideways" kmemtraced
is "$rc" 1 "a leaf calling another leaf fails"
like "$err" "kmemtraced/env.o (layer 1) uses kmtd_cpu_start of drain.o (layer 1)" "and says who calls what"

bad up
object up kmtd_util 'void kmtd_write_meta(void); void kmtd_err(void) { kmtd_write_meta(); }'
run "$CHECK" -o "$T/up" kmemtraced
is "$rc" 1 "the bottom layer calling up fails"
like "$err" "kmemtraced/kmtd_util.o (layer 0) uses kmtd_write_meta of meta.o (layer 1)" "and says who calls what"

bad include
sed -i 's|kmemtraced/meta\.h|& kmemtraced/kmemtraced.h|' "$T/include/kmemtraced/meta.d"
run "$CHECK" -o "$T/include" kmemtraced
is "$rc" 1 "a leaf including the top's header (struct kmtd) fails"
like "$err" "kmemtraced/meta.c (layer 1) includes kmemtraced/kmemtraced.h of kmemtraced.o (layer 2)" \
	"and says which header"

bad unlisted
object unlisted extra 'int kmtd_extra;'
run "$CHECK" -o "$T/unlisted" kmemtraced
is "$rc" 1 "an object the layers do not place fails"
like "$err" "kmemtraced/extra.o: not in the layers of kmemtraced" "and is named"

bad room report
object room views/view_life 'void view_rows(void); void life_x(void) { view_rows(); }' report
run "$CHECK" -o "$T/room" report
is "$rc" 0 "report/: files of one room may use each other"

bad roomup report
object roomup core/report_life 'void out_text_table(void); void life_x(void) { out_text_table(); }' report
run "$CHECK" -o "$T/roomup" report
is "$rc" 1 "report/: the analysis calling a writer fails"
like "$err" "report/core/report_life.o (layer 2) uses out_text_table of writers/" "and says who calls what"

run "$CHECK" -o "$OBJ" nosuchdir
is "$rc" 2 "a directory without layers is a usage error"

done_testing
