#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 05-checkpatch.t - the kernel code is checkpatch --strict clean and builds W=1 without a warning.
#
# Every .c and .h under kmod/ and tests/kmod/ goes through scripts/checkpatch (the kernel's
# checkpatch.pl --strict). kmod/kmt_compat.h alone may use LINUX_VERSION_CODE: it is the one
# place the design keeps kernel-version differences. Then both modules are compiled from a
# fresh copy (so nothing is skipped as up to date) with W=1, and the build log must hold no
# warning.
set -u
cd "$(dirname "$0")/../.." || exit 1

n=0
failed=0
ok() {	# ok STATUS DESCRIPTION [OUTPUT]
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/#   /'
		failed=$((failed + 1))
	fi
}

sources=$(find kmod tests/kmod -maxdepth 1 \( -name '*.c' -o -name '*.h' \) ! -name '*.mod.c' | sort)
if [ -z "$sources" ]; then
	echo "1..0 # SKIP no kernel sources yet"
	exit 0
fi

# First use extracts checkpatch.pl from linux-source-6.1 (installing it if needed).
if ! scripts/checkpatch /dev/null >/dev/null 2>&1 && [ ! -x build/checkpatch/checkpatch.pl ]; then
	echo "1..0 # SKIP checkpatch.pl unavailable (scripts/checkpatch could not set it up)"
	exit 0
fi

for f in $sources; do
	extra=()
	[ "$f" = kmod/kmt_compat.h ] && extra=(--ignore LINUX_VERSION_CODE)
	out=$(scripts/checkpatch "${extra[@]}" "$f" 2>&1)
	ok $? "checkpatch --strict: $f" "$out"
done

# The kernel "make module" builds for, and the guest's kernel when that differs (e.g. the
# PREEMPT_RT flavour next to the standard one).
kvers=$( (scripts/kernel-version; scripts/kmemtrace-vm --print-kernel) 2>/dev/null | sort -u)
if [ -n "${KDIR:-}" ]; then
	kdirs=$KDIR
else
	kdirs=$(for k in $kvers; do echo "/lib/modules/$k/build"; done)
fi
[ -n "$kdirs" ] || ok 1 "kernel headers for the module build found (scripts/install-deps)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for kdir in $kdirs; do
	rm -rf "${tmp:?}"/*
	mkdir -p "$tmp/tests"
	cp -r abi kmod "$tmp/"
	cp -r tests/kmod "$tmp/tests/"
	find "$tmp" \( -name '*.o' -o -name '*.ko' -o -name '*.mod*' -o -name '.*.cmd' \
		-o -name 'modules.order' -o -name 'Module.symvers' \) -delete
	for m in kmod tests/kmod; do
		log=$(make -C "$kdir" M="$tmp/$m" W=1 modules 2>&1)
		st=$?
		ok $st "W=1 build of $m against $kdir succeeds" "$(printf '%s\n' "$log" | tail -n 20)"
		warn=$(printf '%s\n' "$log" | grep -i -E 'warning|error' |
			grep -v 'Skipping BTF generation')
		ok "$([ -z "$warn" ]; echo $?)" "W=1 build of $m against $kdir has no warning" "$warn"
	done
done

echo "1..$n"
[ "$failed" -eq 0 ]
