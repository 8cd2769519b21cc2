#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 01-boot.t - the guest boots, kmemtrace.ko loads and unloads cleanly, results come back intact.
KMT_TEST_TIMEOUT=120
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

# The module is built and loaded as soon as its Kbuild exists; before that, the bench itself.
with_module=0
[ -f "$KMT_TOP/kmod/Kbuild" ] && with_module=1

mkdir -p "$KMT_TEST_DIR"
blob=$KMT_TEST_DIR/blob
head -c 100000 /dev/urandom >"$blob"
ncpus=2
want_status=$((RANDOM % 100 + 1))

# In the guest: copy the -a file back, report the CPU count, the ABI version and the module
# list, then exit with a status the host chose.
script=$KMT_TEST_DIR/boot-check.sh
cat >"$script" <<EOS
#!/bin/sh
cp "\$KMT_FILES/blob" "\$KMT_OUT/blob"
grep -c '^processor' /proc/cpuinfo > "\$KMT_OUT/ncpus"
cat /proc/modules > "\$KMT_OUT/modules-during"
if [ -e "\$KMT_DEBUGFS/abi_version" ]; then
	cat "\$KMT_DEBUGFS/abi_version" > "\$KMT_OUT/abi_version"
fi
echo "stdout line"
echo "stderr line" >&2
exit $want_status
EOS
chmod +x "$script"

vm_args=(-T 90 -c "$ncpus" --no-daemon -a "$blob" -a "$script")
[ "$with_module" = 1 ] || vm_args+=(--no-module)

plan $((with_module ? 12 : 9))
vm_ok boot "${vm_args[@]}" -- boot-check.sh
is "$(command_status)" "$want_status" "command.status holds the command's exit status"
ok "a file written to KMT_OUT comes back byte-exact" cmp -s "$blob" "$VM_OUT/blob"
is "$(cat "$VM_OUT/ncpus" 2>/dev/null)" "$ncpus" "guest has the $ncpus CPUs asked for"
ok "command.out has the command's stdout" grep -qx 'stdout line' "$VM_OUT/command.out"
ok "command.out has the command's stderr" grep -qx 'stderr line' "$VM_OUT/command.out"
ok "dmesg.txt was collected" grep -q 'Linux version' "$VM_OUT/dmesg.txt"
ok "console.log was written" test -s "$VM_OUT/console.log"
dmesg_clean "guest dmesg is clean after boot and command"

if [ "$with_module" = 1 ]; then
	major=$(sed -n 's/^#define KMT_ABI_MAJOR[[:space:]]*\([0-9]*\).*/\1/p' "$KMT_TOP/abi/kmemtrace_abi.h")
	minor=$(sed -n 's/^#define KMT_ABI_MINOR[[:space:]]*\([0-9]*\).*/\1/p' "$KMT_TOP/abi/kmemtrace_abi.h")
	ok "kmemtrace was loaded while the command ran" \
		grep -q '^kmemtrace ' "$VM_OUT/modules-during"
	is "$(cat "$VM_OUT/abi_version" 2>/dev/null)" "$major.$minor" \
		"debugfs abi_version reads the header's version"
	ok "kmemtrace.ko unloaded cleanly" grep -qx 'rmmod kmemtrace: ok' "$VM_OUT/guest.log"
fi
done_testing
