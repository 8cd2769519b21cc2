# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# lib.sh - TAP helpers and the shared preamble of every host test (tests/host/*.t), which run
# the tools of ${KMT_BIN:-build/san} (the sanitizer build). Source it first:
#   . "$(dirname "$0")/lib.sh"
#
#   ok STATUS DESC [OUTPUT]  pass when STATUS (usually $?) is 0; OUTPUT, if given, is shown as
#                            comments when it fails
#   ok_cmd DESC CMD [ARG]... pass when CMD succeeds
#   is GOT WANT DESC         pass when the strings are equal
#   like TEXT FIXED DESC     pass when TEXT contains the fixed string FIXED
#   skip REASON              one skipped test
#   summary KEY FILE         a tally from a kmemtrace-gen summary file
#   run CMD...               run CMD: out (stdout), err (stderr), rc; needs the test's $T
#                            (CMD's output stays in $T/out and $T/err)
#   jget EXPR FILE           a value of a JSON document (a Python expression on d)
#   tap_checks CMD...        run a checker (CMD); each "CHECK<tab>DESC<tab>GOT<tab>WANT" line it
#                            prints becomes `is GOT WANT DESC`, any other line a comment; CMD
#                            failing is one more failed test
#   done_testing             print the plan (1..n); return non-zero if any test failed
#   require_built TOOL...    skip the whole test (plan 1..0) unless each TOOL is built in $BIN
#   require_cmds CMD...      skip the whole test unless each CMD is installed (on $PATH)
#   require_tools TOOL...    require_built TOOL... and require_cmds python3
#   scratch_dir TAG [PARENT] set T to a new directory kmt-TAG.XXXXXX in PARENT (default
#                            ${TMPDIR:-/tmp}), removed when the test exits (kept if KEEP is set)
#   at_exit CMD              run the shell command CMD when the test exits, before T goes
#   wait_for TENTHS CMD...   run CMD every 0.1 s until it succeeds, at most TENTHS times;
#                            fails if it never did
#   fake_module DIR ABI      make DIR a fake <debugfs>/kmemtrace (for KMEMTRACED_TEST_FAKE_DEBUGFS=1)
#                            of trace format ABI: one CPU whose buffer cpu0 is empty, tracing
#                            off, no overruns
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
		[ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/#   /'
		failed=$((failed + 1))
	fi
}

ok_cmd() {
	local desc=$1
	shift
	"$@"
	ok $? "$desc"
}

skip() {
	n=$((n + 1))
	echo "ok $n # SKIP $1"
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

tap_checks() {
	local tag desc got want
	while IFS=$'\t' read -r tag desc got want; do
		case $tag in
		CHECK) is "$got" "$want" "$desc" ;;
		*) echo "# $tag $desc $got" ;;
		esac
	done < <("$@" || printf 'CHECK\tthe checker ran without error\tfailed\tok\n')
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

require_built() {
	local tool
	for tool in "$@"; do
		if [ ! -x "$BIN/$tool" ]; then
			echo "1..0 # SKIP $BIN/$tool not built (make SAN=1 tools unit-tests)"
			exit 0
		fi
	done
}

require_cmds() {
	local c
	for c in "$@"; do
		if ! command -v "$c" >/dev/null; then
			echo "1..0 # SKIP $c not installed (scripts/install-deps)"
			exit 0
		fi
	done
}

require_tools() {
	require_built "$@"
	require_cmds python3
}

wait_for() {
	local i
	for ((i = 0; i < $1; i++)); do
		"${@:2}" && return 0
		sleep 0.1
	done
	return 1
}

_at_exit=
at_exit() {
	_at_exit+="$1"$'\n'
}

scratch_dir() {
	T=$(mktemp -d "${2:-${TMPDIR:-/tmp}}/kmt-$1.XXXXXX")
	trap _scratch_exit EXIT
}

_scratch_exit() {
	eval "$_at_exit"
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}

fake_module() {
	mkdir -p "$1" &&
		: >"$1/cpu0" &&
		printf '%s\n' "$2" >"$1/abi_version" &&
		printf '0\n' >"$1/enabled" &&
		printf '0\n' >"$1/total_overruns" &&
		printf '# cpu emitted written dropped\n0 1 1 0\n' >"$1/stats"
}
