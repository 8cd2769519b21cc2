# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# lib.sh - TAP helpers and kmemtrace-vm wrappers for the guest tests (tests/guest/*.t).
#
# Source it from a bash test after optionally setting KMT_TEST_TIMEOUT (seconds, default 300):
# the whole test re-executes itself under timeout(1) so that no guest test can hang prove.
#
#   plan N | done_testing      TAP plan up front, or at the end
#   ok DESC CMD [ARG]...       pass when CMD succeeds
#   is GOT WANT DESC           pass when the strings are equal
#   like GOT ERE DESC          pass when GOT matches the extended regex ERE
#   diag MSG... / note_file F  comments on stderr / a file's last lines as comments
#   skip_all REASON            plan nothing and exit (prove counts a skip)
#   require_cmds CMD...        skip_all unless each CMD is installed (on $PATH)
#   host_tool NAME             the host build of tool NAME: build/san/NAME (the sanitizer build)
#                              when it is built, else build/NAME
#   bail REASON                Bail out! (stops prove)
#   vm NAME [kmemtrace-vm OPTION]... -- CMD...
#                              run the guest into a fresh $VM_OUT (build/guest-tests/TEST/NAME),
#                              set VM_STATUS (kmemtrace-vm's exit status) and VM_ERR (its
#                              stderr); never fails by itself. Its time and -T go to
#                              $KMT_GUEST_TIMES (tests/guest/time-bounds) unless
#                              KMT_VM_EXPECT_TIMEOUT is set (a run meant to outlast -T)
#   vm_ok NAME ...             vm, then ok "NAME: kmemtrace-vm exit 0" (stderr as diag if not)
#   command_status             COMMAND's exit status in the guest ("" if it did not run)
#   dmesg_clean [DESC]         ok when $VM_OUT/dmesg.txt has no BUG/WARNING/Oops/... line
#   guest_kernel               the guest kernel release (for building test modules)
#   guest_arch                 its Debian architecture (amd64, arm64, s390x, i386)
#   guest_config OPTION        OPTION's value in its config (y, m, a number; empty when unset)
#   guest_cc ARG...            the C compiler for programs the guest runs (cc for amd64, the
#                              arch's cross compiler otherwise), with ARGs; pass -static for a
#                              program that must run without the guest's having a C library
#   guest_tool NAME            the build of tool NAME the guest runs: build/NAME for amd64,
#                              build/ARCH/NAME (static, cross-built by kmemtrace-vm) otherwise
#   guest_endian               the guest's byte order as python's struct writes it: < or >
#   raw_to_out OUT CPU RAW     OUT: RAW (records as a cpuN debugfs file gives them) behind the
#                              64-byte file header kmemtraced writes, in the guest's byte order
#                              and word size, ABI 1.0, 4 KiB pages: a file kmemtrace_check reads
#   guest_has_numa             true when kmemtrace-vm --numa gives this guest two nodes: its
#                              kernel has NUMA (686-pae has not) and qemu's machine does
#                              (s390x's has none)
#   rounded_subbuf_size N SIZE the subbuf_size kmemtrace.ko uses for subbufs=N subbuf_size=SIZE
#   stat_of FILE CPU FIELD     column FIELD of CPU's line in a saved debugfs `stats` file
#                              (2 emitted, 3 written, 4 dropped); empty if there is none
#   all_strict DIR             true when DIR has cpu*.out files and kmemtrace_check --strict
#                              ($CHECK, default build/kmemtrace_check) passes every one
#   KMT_ACCOUNT                tests/guest/account.py: per-CPU record accounting of cpuN.out files
#   exact DIR STATS NAME       tests: each DIR/cpuN.out against STATS (the module's stats since a
#                              fresh load): exactly the written records, seq from 0 without a
#                              gap, every seq handed out in the file or in a LOST count
#   tap_checks CMD...          run a checker (CMD); each "CHECK<tab>DESC<tab>GOT<tab>WANT" line it
#                              prints becomes `is GOT WANT DESC`, any other line a diag; CMD
#                              failing is one more failed test
#   flavour_installed FLAVOUR  true when the guest kernel FLAVOUR (amd64, rt-amd64) is installed;
#                              if not, one failed test naming the install command
#   build_runas PATH           build tests/guest/runas.c static at PATH (for -a): `runas UID CMD...`
#                              in the guest drops to UID (bails out if it cannot be built)

KMT_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Multi-threaded TCG has crashed guests on a stray int3 while the kernel patched tracepoint
# call sites (seen with no kmemtrace code loaded): tests flip tracepoints hundreds of times,
# so they run every guest CPU in one host thread unless told otherwise.
export KMT_TCG_THREAD=${KMT_TCG_THREAD:-single}
KMT_VM=$KMT_TOP/scripts/kmemtrace-vm
# The kernel matrix and the other architectures (guest_arch, guest_config, guest_cc).
# shellcheck source=scripts/kernels.sh
. "$KMT_TOP/scripts/kernels.sh"
KMT_TEST=$(basename "$0" .t)
# A run on another kernel than the default (KMT_KVER, which kmemtrace-vm follows) keeps its own.
KMT_TEST_DIR=$KMT_TOP/build/guest-tests/${KMT_KVER:+$KMT_KVER/}$KMT_TEST
# shellcheck disable=SC2034 # used by the tests that source this
KMT_ACCOUNT=$KMT_TOP/tests/guest/account.py

# Each guest run's time and bound, and each test's, as tab-separated lines: what
# tests/guest/time-bounds reads to show how close a run came to its bound (kernel, test, run
# or "-" for the whole test, seconds, bound, exit status).
KMT_GUEST_TIMES=${KMT_GUEST_TIMES:-$KMT_TOP/build/guest-times.tsv}
export KMT_GUEST_TIMES
guest_time_record() {
	local ms=$(((${EPOCHREALTIME/[.,]/} - $2) / 1000))
	mkdir -p "$(dirname "$KMT_GUEST_TIMES")"
	printf '%s\t%s\t%s\t%d.%03d\t%s\t%s\n' "${KMT_KVER:-default}" "$KMT_TEST" "$1" \
		$((ms / 1000)) $((ms % 1000)) "$3" "$4" >>"$KMT_GUEST_TIMES"
}

if [ -z "${KMT_UNDER_TIMEOUT:-}" ]; then
	export KMT_UNDER_TIMEOUT=1
	t0=${EPOCHREALTIME/[.,]/}
	timeout -k 10 "${KMT_TEST_TIMEOUT:-300}" "$0" "$@"
	st=$?
	guest_time_record - "$t0" "${KMT_TEST_TIMEOUT:-300}" "$st"
	if [ "$st" = 124 ] || [ "$st" = 137 ]; then
		echo "not ok - $KMT_TEST timed out after ${KMT_TEST_TIMEOUT:-300}s"
		echo "Bail out! $KMT_TEST timed out"
	fi
	exit "$st"
fi

_tap_n=0
_tap_failed=0
_tap_planned=

plan() {
	_tap_planned=$1
	echo "1..$1"
}

diag() {
	local l
	while IFS= read -r l; do
		echo "# $l" >&2
	done <<<"$*"
}

note_file() {
	[ -f "$1" ] || { diag "($1 missing)"; return 0; }
	diag "--- last lines of $1:"
	diag "$(tail -n "${2:-20}" "$1")"
}

_tap_result() {
	local pass=$1 desc=$2
	_tap_n=$((_tap_n + 1))
	if [ "$pass" = 1 ]; then
		echo "ok $_tap_n - $desc"
	else
		_tap_failed=$((_tap_failed + 1))
		echo "not ok $_tap_n - $desc"
		local caller=("${BASH_SOURCE[2]:-?}" "${BASH_LINENO[1]:-?}")
		diag "  failed at ${caller[0]##*/} line ${caller[1]}"
	fi
	[ "$pass" = 1 ]
}

ok() {
	local desc=$1
	shift
	if "$@"; then _tap_result 1 "$desc"; else _tap_result 0 "$desc"; fi
}

is() {
	if [ "$1" = "$2" ]; then
		_tap_result 1 "$3"
	else
		_tap_result 0 "$3"
		diag "  got:      '$1'"
		diag "  expected: '$2'"
		return 1
	fi
}

like() {
	if [[ $1 =~ $2 ]]; then
		_tap_result 1 "$3"
	else
		_tap_result 0 "$3"
		diag "  got:      '$1'"
		diag "  expected to match: $2"
		return 1
	fi
}

skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

require_cmds() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || skip_all "$c not installed (scripts/install-deps)"
	done
}

host_tool() {
	if [ -x "$KMT_TOP/build/san/$1" ]; then
		echo "$KMT_TOP/build/san/$1"
	else
		echo "$KMT_TOP/build/$1"
	fi
}

bail() {
	echo "Bail out! $*"
	exit 255
}

done_testing() {
	[ -n "$_tap_planned" ] || echo "1..$_tap_n"
	if [ -n "$_tap_planned" ] && [ "$_tap_planned" != "$_tap_n" ]; then
		diag "planned $_tap_planned tests but ran $_tap_n"
		exit 255
	fi
	[ "$_tap_failed" = 0 ] || exit 1
	exit 0
}

vm() {
	local name=$1 bound=300 t0 a prev=
	shift
	for a in "$@"; do
		[ "$a" = -- ] && break
		[ "$prev" = -T ] && bound=$a
		prev=$a
	done
	VM_OUT=$KMT_TEST_DIR/$name
	rm -rf "$VM_OUT"
	mkdir -p "$KMT_TEST_DIR"
	VM_STATUS=0
	t0=${EPOCHREALTIME/[.,]/}
	"$KMT_VM" -o "$VM_OUT" "$@" 2>"$VM_OUT.err" || VM_STATUS=$?
	# A run meant to outlast its bound (KMT_VM_EXPECT_TIMEOUT) says nothing of the bound.
	[ -n "${KMT_VM_EXPECT_TIMEOUT:-}" ] || guest_time_record "$name" "$t0" "$bound" "$VM_STATUS"
	VM_ERR=$(cat "$VM_OUT.err")
}

vm_ok() {
	local name=$1
	vm "$@"
	if ! is "$VM_STATUS" 0 "$name: kmemtrace-vm exit 0"; then
		diag "$VM_ERR"
		note_file "$VM_OUT/console.log"
		return 1
	fi
}

command_status() {
	cat "$VM_OUT/command.status" 2>/dev/null || true
}

dmesg_clean() {
	local bad st=0
	bad=$("$KMT_VM" --check-dmesg "$VM_OUT/dmesg.txt") || st=$?
	if [ "$st" = 0 ]; then
		_tap_result 1 "${1:-guest dmesg is clean}"
	else
		_tap_result 0 "${1:-guest dmesg is clean}"
		diag "$bad"
		return 1
	fi
}

guest_kernel() {
	"$KMT_VM" --print-kernel
}

# The guest kernel's arch, found once when lib.sh is sourced (below): each lookup of the guest
# kernel runs kmemtrace-vm.
guest_arch() {
	[ -n "$KMT_GUEST_ARCH" ] && echo "$KMT_GUEST_ARCH"
}

guest_config() {
	local kver d f
	kver=$(guest_kernel) || return 1
	kmt_locate "$kver" || return 1
	# Beside the modules (the trixie root), or in the /boot above them (the host, install-cross).
	d=$(dirname "$(dirname "$(dirname "$KMT_MODDIR")")")
	for f in "$KMT_MODDIR/config" "${d%/}/boot/config-$kver"; do
		if [ -r "$f" ]; then
			sed -n "s/^$1=//p" "$f"
			return 0
		fi
	done
	return 1
}

guest_cc() {
	local arch
	arch=$(guest_arch) || return 1
	if [ "$arch" = amd64 ]; then
		cc "$@"
	else
		kmt_cross "$arch" || return 1
		"$KMT_CROSS_TRIPLET-gcc" "$@"
	fi
}

guest_tool() {
	local arch
	arch=$(guest_arch) || return 1
	if [ "$arch" = amd64 ]; then
		echo "$KMT_TOP/build/$1"
	else
		echo "$KMT_TOP/build/$arch/$1"
	fi
}

guest_endian() {
	echo "$KMT_GUEST_ENDIAN"
}

raw_to_out() {
	python3 - "$@" <<'EOF'
import os, struct, sys
out, cpu, raw = sys.argv[1], int(sys.argv[2]), sys.argv[3]
e = os.environ.get("KMT_GUEST_ENDIAN", "<")
# abi/kmemtrace_abi.h: struct kmt_file_header (byte order 1 LE, 2 BE; clock 1 monotonic).
hdr = struct.pack(e + "IHHHHHBBB3xIQQ24x", 0x52544D4B, 1, 0, 64, 64, cpu, 2 if e == ">" else 1,
                  int(os.environ.get("KMT_GUEST_WORD_BITS", "64")), 1, 4096, 0, 0)
with open(out, "wb") as f:
    f.write(hdr + open(raw, "rb").read())
EOF
}

guest_has_numa() {
	[ "$(guest_arch)" != s390x ] && [ "$(guest_config CONFIG_NUMA)" = y ]
}

build_runas() {
	guest_cc -static -O2 -o "$1" "$KMT_TOP/tests/guest/runas.c" ||
		bail "cannot build a static helper (libc6-dev)"
}

stat_of() {
	awk -v c="$2" -v f="$3" '$1 == c { print $f }' "$1" 2>/dev/null
}

all_strict() {
	local f bad=0 n=0
	for f in "$1"/cpu*.out; do
		[ -e "$f" ] || return 1
		n=$((n + 1))
		"${CHECK:-$KMT_TOP/build/kmemtrace_check}" --strict -q "$f" >&2 || bad=1
	done
	[ "$bad" = 0 ] && [ "$n" -gt 0 ]
}

# exact DIR STATS NAME: each CPU's file against the module's final stats, which count from a
# fresh load with tracing off until kmemtraced switched it on: the file holds exactly the
# written records, seq runs from 0 without a gap, and every seq handed out is either in the file
# or covered by a LOST record (written, or still pending in the module when tracing stopped).
exact() {
	local dir=$1 st=$2 name=$3 cpu ndata lsum gaps first endseq e w d out
	out=$(python3 "$KMT_ACCOUNT" "$dir"/cpu*.out) || out=
	ok "$name: the record reader read every file" test -n "$out"
	while read -r cpu ndata lsum _ gaps first endseq; do
		e=$(stat_of "$st" "$cpu" 2)
		w=$(stat_of "$st" "$cpu" 3)
		d=$(stat_of "$st" "$cpu" 4)
		if ! [[ $e$w$d =~ ^[0-9]+$ && $ndata =~ ^[0-9]+$ ]]; then
			ok "$name: cpu$cpu: the module's stats list this CPU" false
			continue
		fi
		is "$e" "$((w + d))" "$name: cpu$cpu: emitted == written + dropped"
		is "$ndata" "$w" "$name: cpu$cpu: data records in cpu$cpu.out == written ($w)"
		is "$gaps.$first" "0.0" "$name: cpu$cpu: seq runs from 0 without a gap"
		ok "$name: cpu$cpu: LOST records cover no more than dropped ($lsum <= $d)" \
			test "$lsum" -le "$d"
		is "$(((endseq + d - lsum) % 4294967296))" "$((e % 4294967296))" \
			"$name: cpu$cpu: every seq handed out is in the file or in a LOST count"
	done <<<"$out"
}

tap_checks() {
	local tag name got want
	while IFS=$'\t' read -r tag name got want; do
		case $tag in
		CHECK) is "$got" "$want" "$name" ;;
		*) diag "$name $got $want" ;;
		esac
	done < <("$@" || printf 'CHECK\tthe checker ran without error\tfailed\tok\n')
}

flavour_installed() {
	"$KMT_VM" --flavour "$1" --print-kernel >/dev/null 2>&1 && return 0
	ok "$1: kernel installed (KMT_FLAVOUR=$1 scripts/install-deps)" false
	return 1
}

# rounded_subbuf_size SUBBUFS SIZE: the subbuf_size kmemtrace.ko settles on, a multiple of the
# 64-byte record that makes SUBBUFS sub-buffers whole pages: of lcm(64, PAGE / gcd(SUBBUFS, PAGE)).
rounded_subbuf_size() {
	local page per unit
	page=$(getconf PAGESIZE)
	per=$((page / $(_gcd "$1" "$page")))
	unit=$((64 * per / $(_gcd 64 "$per")))
	echo $(( ($2 + unit - 1) / unit * unit ))
}
_gcd() { local a=$1 b=$2 t; while [ "$b" -ne 0 ]; do t=$((a % b)); a=$b; b=$t; done; echo "$a"; }

# The guest's arch (empty when its kernel cannot be told), and for the python readers of raw
# records and the file headers they write (tests/guest/*.py): its byte order and pointer width,
# and whether its kernel has the stack walk cache.
if [ -z "${KMT_GUEST_ENDIAN:-}" ]; then
	KMT_GUEST_ARCH=
	if kmt_parse "$(guest_kernel 2>/dev/null)"; then
		KMT_GUEST_ARCH=$(kmt_flavour_arch "$KMT_FLAV")
	fi
	KMT_GUEST_ENDIAN='<'
	[ "$KMT_GUEST_ARCH" = s390x ] && KMT_GUEST_ENDIAN='>'
	KMT_GUEST_WORD_BITS=64
	[ "$KMT_GUEST_ARCH" = i386 ] && KMT_GUEST_WORD_BITS=32
	# The stack walk cache needs x86-64's ORC unwinder (kmod/kmt_compat.h).
	KMT_GUEST_WALK_CACHE=0
	[ "$KMT_GUEST_ARCH" = amd64 ] && KMT_GUEST_WALK_CACHE=1
	export KMT_GUEST_ARCH KMT_GUEST_ENDIAN KMT_GUEST_WORD_BITS KMT_GUEST_WALK_CACHE
fi
