#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 56-need-space.t - scripts/need-space, make check's first step: room enough passes silently,
# too little fails saying where and how much is free, a bad argument is a usage error.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
NS=$TOP/scripts/need-space
scratch_dir need-space

free=$(df -Pm "$T" | awk 'NR == 2 { print $4 }')
echo "# $T's filesystem has $free MB free"

run "$NS" 1 "$T/made/here" "a test"
is "$rc:$out$err" "0:" "room enough: exit 0, nothing said"
ok_cmd "  the directory is created" test -d "$T/made/here"

# A million MB more than is free: no disk frees that much while the test runs.
want=$((free + 1048576))
run "$NS" "$want" "$T" "a test"
is "$rc" 1 "too little room: exit 1"
like "$err" "a test needs about $want MB free in $T; its filesystem has " \
	"  naming what needs it, the directory and the room wanted"
got=$(printf '%s\n' "$err" | sed -n 's/.*its filesystem has \([0-9]*\) MB.*/\1/p')
ok_cmd "  the room it says is df's (now $got, at the start $free, within 1 GB)" \
	test "${got:-0}" -gt $((free - 1024)) -a "${got:-0}" -lt $((free + 1024))

run "$NS" 1 /proc/no-such/dir "a test"
is "$rc" 1 "a directory it cannot create: exit 1"
like "$err" "/proc/no-such/dir: cannot create it" "  and says so"

run "$NS" 12x "$T" "a test"
is "$rc" 2 "MB not a number: exit 2"
like "$err" "MB '12x' is not a whole number" "  and says which"
run "$NS" 1234567890 "$T" "a test"
is "$rc" 2 "MB of ten digits: exit 2"
run "$NS" 1 "$T"
is "$rc" 2 "two arguments: exit 2"
like "$err" "Usage: scripts/need-space MB DIR WHAT" "  with the usage"

done_testing
