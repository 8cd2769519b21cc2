#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 01-boot.t - the guest boots, kmemtrace.ko loads and unloads cleanly, results come back intact.
# 300 s: over 5x the 54 s it took in make check beside a busy loop and a fuzzer at nice 19. -T 210
# for the first guest: over 5x the 40 s it took there; -T 120 for the NUMA guests, over 5x their
# slowest (tests/guest/time-bounds).
KMT_TEST_TIMEOUT=300
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

# The module is built and loaded as soon as its Kbuild exists; before that, the bench itself.
with_module=0
[ -f "$KMT_TOP/kmod/Kbuild" ] && with_module=1
mod_args=(--no-module)
[ "$with_module" = 1 ] && mod_args=()

mkdir -p "$KMT_TEST_DIR"
blob=$KMT_TEST_DIR/blob
head -c 100000 /dev/urandom >"$blob"
want_status=$((RANDOM % 100 + 1))

# A dynamically linked sanitizer build, like the tools' build/san: it runs only if the bench
# copied its libraries (libasan, libc, the loader) into the guest. Another arch's guest gets a
# static program of its arch, as its tools are (no sanitizer build there).
hello=$KMT_TEST_DIR/kmt-hello
token=$RANDOM$RANDOM
printf '#include <stdio.h>\nint main(void) { puts("hello %s"); return 0; }\n' "$token" >"$hello.c"
hello_flags=(-fsanitize=address,undefined)
hello_what="a dynamically linked ASan program"
if [ "$(guest_arch)" != amd64 ]; then
	hello_flags=(-static)
	hello_what="a static program built for $(guest_arch)"
fi
if ! guest_cc "${hello_flags[@]}" -o "$hello" "$hello.c" 2>"$hello.err"; then
	note_file "$hello.err"
	bail "cannot compile $hello.c"
fi

# In the guest: copy the -a file back, report CPUs, nodes, ABI version and modules, run the
# sanitizer build, then exit with a status the host chose.
script=$KMT_TEST_DIR/boot-check.sh
cat >"$script" <<EOS
#!/bin/sh
cp "\$KMT_FILES/blob" "\$KMT_OUT/blob"
grep -c '^processor' /proc/cpuinfo > "\$KMT_OUT/ncpus"
ls -d /sys/devices/system/node/node[0-9]* | wc -l > "\$KMT_OUT/nnodes"
cat /proc/modules > "\$KMT_OUT/modules-during"
if [ -e "\$KMT_DEBUGFS/abi_version" ]; then
	cat "\$KMT_DEBUGFS/abi_version" > "\$KMT_OUT/abi_version"
fi
kmt-hello > "\$KMT_OUT/hello" 2>&1
echo "stdout line"
echo "stderr line" >&2
exit $want_status
EOS
chmod +x "$script"

major=$(sed -n 's/^#define KMT_ABI_MAJOR[[:space:]]*\([0-9]*\).*/\1/p' "$KMT_TOP/abi/kmemtrace_abi.h")
minor=$(sed -n 's/^#define KMT_ABI_MINOR[[:space:]]*\([0-9]*\).*/\1/p' "$KMT_TOP/abi/kmemtrace_abi.h")

# Checks of the module, after each boot that loaded it.
module_checks() {
	ok "  kmemtrace was loaded while the command ran" \
		grep -q '^kmemtrace ' "$VM_OUT/modules-during"
	is "$(cat "$VM_OUT/abi_version" 2>/dev/null)" "$major.$minor" \
		"  debugfs abi_version reads the header's version"
	ok "  kmemtrace.ko unloaded cleanly" grep -qx 'rmmod kmemtrace: ok' "$VM_OUT/guest.log"
}

# The plan comes at the end (done_testing): an s390x guest has no --numa run.

vm_ok boot -T 210 -c 2 --no-daemon "${mod_args[@]}" -a "$blob" -a "$script" -a "$hello" -- boot-check.sh
is "$(command_status)" "$want_status" "  command.status holds the command's exit status"
ok "  a file written to KMT_OUT comes back byte-exact" cmp -s "$blob" "$VM_OUT/blob"
is "$(cat "$VM_OUT/ncpus" 2>/dev/null)" 2 "  guest has the 2 CPUs asked for"
ok "  command.out has the command's stdout" grep -qx 'stdout line' "$VM_OUT/command.out"
ok "  command.out has the command's stderr" grep -qx 'stderr line' "$VM_OUT/command.out"
is "$(cat "$VM_OUT/hello" 2>/dev/null)" "hello $token" "  $hello_what runs in the guest"
ok "  dmesg.txt was collected" grep -q 'Linux version' "$VM_OUT/dmesg.txt"
ok "  console.log was written" test -s "$VM_OUT/console.log"
dmesg_clean "  guest dmesg is clean after boot and command"
[ "$with_module" = 1 ] && module_checks

if [ "$(guest_arch)" = s390x ]; then
	# qemu's s390x machine has no NUMA: refused up front, not a guest that quietly has one node.
	vm numa -T 120 --numa -c 2 --no-daemon "${mod_args[@]}" -- true
	is "$VM_STATUS" 1 "--numa on s390x: kmemtrace-vm exits 1"
	like "$VM_ERR" "s390x machine has no NUMA" "  and says why"
	done_testing
fi
vm_ok numa -T 120 --numa -c 2 --no-daemon "${mod_args[@]}" -a "$blob" -a "$script" -a "$hello" -- boot-check.sh
# A kernel without NUMA (686-pae) has no /sys/devices/system/node/nodeN at all.
nodes=0
guest_has_numa && nodes=2
is "$(cat "$VM_OUT/nnodes" 2>/dev/null):$(cat "$VM_OUT/ncpus" 2>/dev/null)" $nodes:2 \
	"  --numa guest has $nodes node directories and 2 CPUs (CONFIG_NUMA=$(guest_config CONFIG_NUMA))"
dmesg_clean "  --numa guest dmesg is clean (one socket per node)"
[ "$with_module" = 1 ] && module_checks
done_testing
