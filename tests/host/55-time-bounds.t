#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 55-time-bounds.t - tests/guest/time-bounds on times the test writes: the slowest of several
# runs of one guest, its bound over it, worst first; only the rows below the ratio unless -a;
# exit 1 when a bound is below it, 0 when none is; a malformed line is an error naming the file
# and the line. No guest.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
TB=$TOP/tests/guest/time-bounds
scratch_dir time-bounds

# Two runs of one guest (the slowest, 48.5 s, against -T 240: 4.9, below 5), a whole test well
# within its bound, and a failed run.
slow=48.5
printf '%s\t%s\t%s\t%s\t%s\t%s\n' \
	6.1.0-50-s390x 48-stacks stacks 20.25 240 0 \
	6.1.0-50-s390x 48-stacks stacks "$slow" 240 0 \
	6.1.0-50-s390x 48-stacks - 60.0 600 0 \
	default 10-module module 12.0 240 4 >"$T/times.tsv"
want_ratio=$(awk -v s="$slow" 'BEGIN { printf "%.1f", 240 / s }')

run "$TB" "$T/times.tsv"
is "$rc" 1 "a bound below 5 times its slowest run: exit 1"
is "$(grep -c '^6.1.0-50-s390x' "$T/out")" 1 "  only the row below the ratio is printed"
is "$(awk '$3 == "stacks" { print $4, $5, $6, $7, $8 }' "$T/out")" "2 $slow 240 $want_ratio 0" \
	"  its runs, slowest, bound, ratio and failures"
like "$(tail -n 1 "$T/out")" "1 of 3 bounds below 5 times" "  and the count of such bounds"

run "$TB" -a "$T/times.tsv"
is "$(sed -n 2p "$T/out" | awk '{ print $2, $3 }')" "48-stacks stacks" "-a: worst first"
is "$(awk '$2 == "10-module" { print $4, $8 }' "$T/out")" "1 1" "  every row, with its failed runs"
is "$(grep -c '^' "$T/out")" 5 "  a header, three rows and the count"

run "$TB" -r 4 "$T/times.tsv"
is "$rc" 0 "-r 4: every bound passes, exit 0"

printf 'default\t10-module\tmodule\tslow\t240\t0\n' >>"$T/times.tsv"
run "$TB" "$T/times.tsv"
is "$rc" 2 "a malformed line: exit 2"
like "$err" "$T/times.tsv:5: not a time line" "  the error names the file and the line"
run "$TB" "$T/none.tsv"
is "$rc" 2 "no times file: exit 2"
like "$err" "$T/none.tsv: cannot read it" "  and says so"

done_testing
