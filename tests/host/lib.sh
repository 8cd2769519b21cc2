# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# lib.sh - TAP helpers shared by the host CLI tests (tests/host/30-check.t, 40-report-cli.t,
# 41-report-dwarf.t), which run the tools of ${KMT_BIN:-build/san} (the sanitizer build).
#
#   ok STATUS DESC           pass when STATUS (usually $?) is 0
#   is GOT WANT DESC         pass when the strings are equal
#   like TEXT FIXED DESC     pass when TEXT contains the fixed string FIXED
#   summary KEY FILE         a tally from a kmemtrace-gen summary file
#   run CMD...               run CMD: out (stdout), err (stderr), rc; needs the test's $T
#   jget EXPR FILE           a value of a JSON document (a Python expression on d)
#   done_testing             print the plan (1..n); return non-zero if any test failed
#   require_tools TOOL...    skip the whole test (plan 1..0) unless each TOOL is built in
#                            $BIN and python3 is installed
#   scratch_dir TAG          set T to a new temporary directory, removed when the test exits
#
# Sets BIN (the tool directory), n (tests run) and failed (tests failed).

# shellcheck disable=SC2034 # the tests name their tools with it
BIN=${KMT_BIN:-build/san}
n=0
failed=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

is() {
	n=$((n + 1))
	if [ "$1" = "$2" ]; then
		echo "ok $n - $3"
	else
		echo "not ok $n - $3"
		echo "#   got '$1', want '$2'"
		failed=$((failed + 1))
	fi
}

# The text in a failure is cut to 400 bytes: a report can be pages long.
like() {
	n=$((n + 1))
	# A substring test, not grep -F: a pattern with a newline must match as a whole.
	if [[ $1 == *"$2"* ]]; then
		echo "ok $n - $3"
	else
		echo "not ok $n - $3"
		echo "#   '$(printf '%s' "$1" | head -c 400)' does not contain '$2'"
		failed=$((failed + 1))
	fi
}

summary() {
	awk -v k="$1" '$1 == k { print $2 }' "$2"
}

done_testing() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
}

run() {
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
}

jget() {
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$2"
}

require_tools() {
	local tool
	for tool in "$@"; do
		if [ ! -x "$BIN/$tool" ]; then
			echo "1..0 # SKIP $BIN/$tool not built (make SAN=1 tools unit-tests)"
			exit 0
		fi
	done
	command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }
}

scratch_dir() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/kmt-$1.XXXXXX")
	# shellcheck disable=SC2064 # T is set now, and stays
	trap "rm -rf '$T'" EXIT
}
