#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 31-check-mutate.t - kmemtrace_check (sanitizer build) on randomly damaged traces: every
# run ends in a verdict and exit 0 or 2, never a crash, a sanitizer report or a hang.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
CHECK=$BIN/kmemtrace_check
GEN=$BIN/kmemtrace-gen
ROUNDS=${KMT_MUTATE_ROUNDS:-150}

require_built kmemtrace_check kmemtrace-gen
scratch_dir mutate
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:exitcode=99}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:exitcode=99}

"$GEN" -o "$T/le" --cpus 1 --events 300 --lost-every 40 --pages >/dev/null &&
	"$GEN" -o "$T/be" --cpus 1 --events 300 --lost-every 40 --big-endian --word-bits 32 \
		--first-seq 4294967200 >/dev/null
ok $? "seed traces written"

RANDOM=4242	# the same damage every run
bad=0
verdicts=0
copies=0
copy_fails=0
for ((i = 0; i < ROUNDS; i++)); do
	if ((i % 2)); then src=$T/be/cpu0.out; else src=$T/le/cpu0.out; fi
	f=$T/cpu0.out
	cp "$src" "$f"
	copied=0
	size=$(stat -c %s "$f")
	case $((RANDOM % 4)) in
	0)	# a few random bytes anywhere
		for ((k = 0; k < 1 + RANDOM % 4; k++)); do
			printf "\\x$(printf %02x $((RANDOM % 256)))" |
				dd of="$f" bs=1 seek=$(( (RANDOM * 32768 + RANDOM) % size )) \
				conv=notrunc status=none
		done ;;
	1)	# cut anywhere
		truncate -s $(( (RANDOM * 32768 + RANDOM) % size )) "$f" ;;
	2)	# a record slot copied over another: its seq cannot fit, always detected
		from=$((1 + RANDOM % (size / 64 - 1)))
		to=$((1 + RANDOM % (size / 64 - 1)))
		[ $from -ne $to ] && copies=$((copies + 1)) && copied=1
		dd if="$src" of="$f" bs=64 skip=$from seek=$to count=1 conv=notrunc status=none ;;
	3)	# a type byte changed
		printf "\\x$(printf %02x $((RANDOM % 12)))" |
			dd of="$f" bs=1 seek=$((64 * (1 + RANDOM % (size / 64 - 1)))) conv=notrunc \
			status=none ;;
	esac
	out=$(timeout 20 "$CHECK" "$f" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 2 ]; then
		bad=$((bad + 1))
		echo "# round $i: exit $rc: $(printf '%s' "$out" | head -5)"
	fi
	if printf '%s\n' "$out" | grep -qE "^$f: (OK|FAIL): "; then
		verdicts=$((verdicts + 1))
	fi
	[ $copied -eq 1 ] && [ $rc -eq 2 ] && copy_fails=$((copy_fails + 1))
done
[ $bad -eq 0 ]
ok $? "$ROUNDS damaged files: exit 0 or 2 every time" \
	"$bad of $ROUNDS damaged files crashed, hung or exited otherwise"
[ $verdicts -eq "$ROUNDS" ]
ok $? "a verdict line every time" "verdict lines in $verdicts of $ROUNDS runs"

# Damaged payload bytes cannot be told from real values, but a misplaced slot always can.
[ $copies -gt 0 ] && [ $copy_fails -eq $copies ]
ok $? "all $copies misplaced record slots detected" \
	"$copy_fails of $copies misplaced record slots detected"

done_testing
