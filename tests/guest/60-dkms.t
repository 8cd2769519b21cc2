#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 60-dkms.t - kmemtrace installed the way users install it: the Debian packages built, DKMS
# building kmemtrace.ko from kmemtrace-dkms for the guest's kernel (for every kernel of the
# matrix under make check-packaging, KMT_PACKAGING_FULL=1), the guest loading its own with
# modprobe (parameters given to modprobe and on the kernel command line), the packaged kmemtraced
# tracing there, and the packaged report tools, installed with dpkg -i on this machine, reading
# that trace.
#
# DKMS runs with throwaway source, DKMS and install trees and a tmpfs on /var/lib/dkms, so the
# machine's own DKMS state is untouched; kmemtrace-tools is purged again at the end (left alone,
# and that part skipped, when the machine had it installed before). The 7.x kernels are built by
# the dkms of the trixie root, where this test installs dkms when it needs it (for its guest
# kernel, or under make check-packaging) and skips those kernels otherwise. The other
# architectures' kernels are not built by dkms here (it would need their compiler and headers
# installed as Debian packages): the whole test skips on their guests.
# Bound: 540 s, over 5x the 106 s it took in make check beside a busy loop and a fuzzer at nice 19
# (and another guest test).
KMT_TEST_TIMEOUT=540
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/kernels.sh
. "$KMT_TOP/scripts/kernels.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (dkms, unshare, dpkg -i)"
require_cmds dpkg-buildpackage dh dh_dkms dkms depmod

V=$(cat "$KMT_TOP/VERSION")
# contains TEXT FIXED DESC: like(), for a fixed string (a version or a release may hold a "+").
contains() {
	if [[ $1 == *"$2"* ]]; then
		_tap_result 1 "$3"
	else
		_tap_result 0 "$3"
		diag "  got:      '$1'"
		diag "  expected to contain: $2"
		return 1
	fi
}
W=$KMT_TEST_DIR/work
rm -rf "$W"
mkdir -p "$W"
stage=$W/stage/lib/modules
G=$(guest_kernel) || bail "no guest kernel: $G"
[ "$(guest_arch)" = amd64 ] ||
	skip_all "DKMS builds for the build machine's architecture: $G is $(guest_arch)'s (cross-built by kmemtrace-vm)"
full=${KMT_PACKAGING_FULL:-0}

# --- The packages -------------------------------------------------------------------------
# make check builds and runs the unit tests already: the package build here skips them.
st=0
DEB_BUILD_OPTIONS=nocheck make -C "$KMT_TOP" --no-print-directory deb DEB_OUT="$W/deb" \
	>"$W/deb.log" 2>&1 || st=$?
is "$st" 0 "dpkg-buildpackage -us -uc builds the packages (make deb)" || note_file "$W/deb.log" 30
dkms_deb=$W/deb/kmemtrace-dkms_${V}_all.deb
tools_deb=$(ls "$W"/deb/kmemtrace-tools_"${V}"_*.deb 2>/dev/null | head -n 1)
[ -f "$dkms_deb" ] && [ -f "$tools_deb" ] || bail "the packages were not built (see $W/deb.log)"
dpkg-deb -x "$dkms_deb" "$W/dkms-pkg"
dpkg-deb -x "$tools_deb" "$W/tools-pkg"
src=$W/dkms-pkg/usr/src
contains "$(cat "$src/kmemtrace-$V/dkms.conf" 2>/dev/null)" "PACKAGE_VERSION=\"$V\"" \
	"kmemtrace-dkms: /usr/src/kmemtrace-$V/dkms.conf is for version $V"

# --- DKMS, for every kernel of the matrix ----------------------------------------------------
# in_ns ROOT COMMAND...: COMMAND in a private mount namespace, chrooted into ROOT (with /proc
# and /dev) unless ROOT is /. With KMT_DKMS_TMPFS=1 a tmpfs covers /var/lib/dkms, where dkms
# makes its signing key, so that the machine's (or the root's) keeps none.
in_ns() {
	local root=$1
	shift
	# shellcheck disable=SC2016 # the inner shell's $1 and $@
	kmt_unshare sh -c 'r=$1; shift; t=${r%/}/var/lib/dkms
		if [ "$KMT_DKMS_TMPFS" = 1 ]; then mkdir -p "$t" && mount -t tmpfs tmpfs "$t" || exit 1; fi
		[ "$r" = / ] && exec "$@"
		mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" || exit 1
		chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
			DEBIAN_FRONTEND=noninteractive "$@"
		st=$?
		[ "$KMT_DKMS_TMPFS" = 1 ] && umount "$t"
		umount -R "$r/dev" 2>/dev/null; umount "$r/proc"
		exit $st' sh "$root" "$@"
}

# Host kernels: dkms here, its trees in $W. Kernels of a build root: that root's dkms, its trees
# in ROOT/tmp (copied out afterwards).
declare -A rootdir=()
while read -r series flavour _ rel; do
	if [ "$rel" = - ]; then
		ok "kernel $series $flavour of the matrix installed (scripts/install-deps)" false
		continue
	fi
	# dkms builds with the build machine's compiler: another arch's kernel is cross-built by
	# 05-checkpatch.t and kmemtrace-vm instead.
	[ "$(kmt_flavour_arch "$flavour")" = amd64 ] || continue
	r=$("$KMT_TOP/scripts/kernel-version" --root "$rel") || continue
	rootdir[$rel]=${r:-/}
done < <("$KMT_TOP/scripts/kernel-version" --matrix)

# dkms_install ROOT TREE RELEASE: dkms add (once per tree) and install for RELEASE, into
# TREE/stage/lib/modules/RELEASE/updates/dkms; TREE as seen inside ROOT.
dkms_install() {
	local root=$1 t=$2 rel=$3 d log=$W/dkms-$3.log
	d=(--sourcetree "$t/src" --dkmstree "$t/tree" --installtree "$t/stage/lib/modules")
	local r=${root%/}
	mkdir -p "$r$t/tree" "$r$t/stage/lib/modules/$rel"
	[ -d "$r$t/tree/kmemtrace/$V" ] ||
		KMT_DKMS_TMPFS=1 in_ns "$root" dkms add "${d[@]}" -m kmemtrace -v "$V" >>"$log" 2>&1
	KMT_DKMS_TMPFS=1 in_ns "$root" dkms install "${d[@]}" --no-depmod -m kmemtrace -v "$V" -k "$rel" \
		--kernelsourcedir "/lib/modules/$rel/build" >>"$log" 2>&1
}

root_tmp=
cleanup() {
	[ -z "$root_tmp" ] || rm -rf "$root_tmp"
}
trap cleanup EXIT

need_root_dkms=$full
[ "${rootdir[$G]:-/}" != / ] && need_root_dkms=1
for rel in $(printf '%s\n' "${!rootdir[@]}" | sort -V); do
	# make check: DKMS builds for the guest's kernel, the one it boots; check-packaging: for all.
	[ "$full" = 1 ] || [ "$rel" = "$G" ] || continue
	root=${rootdir[$rel]}
	if [ "$root" = / ]; then
		t=$W/host-dkms
		[ -d "$t/src" ] || { mkdir -p "$t" && cp -a "$src" "$t/src"; }
		st=0
		dkms_install / "$t" "$rel" || st=$?
		out=$t/stage/lib/modules/$rel
	else
		if [ ! -x "$root/usr/sbin/dkms" ]; then
			if [ "$need_root_dkms" != 1 ]; then
				ok "dkms builds kmemtrace.ko for $rel # SKIP no dkms in $root (make check-packaging installs it)" true
				continue
			fi
			st=0
			KMT_DKMS_TMPFS=0 in_ns "$root" apt-get install -y -q --no-install-recommends dkms \
				>"$W/root-dkms.log" 2>&1 || st=$?
			if ! is "$st" 0 "apt-get install dkms in $root"; then
				note_file "$W/root-dkms.log"
				need_root_dkms=0	# the other kernels of the root: skipped
				continue
			fi
		fi
		if [ -z "$root_tmp" ]; then
			root_tmp=$(mktemp -d "$root/tmp/kmt-dkms.XXXXXX")
			cp -a "$src" "$root_tmp/src"
		fi
		st=0
		dkms_install "$root" "${root_tmp#"$root"}" "$rel" || st=$?
		out=$root_tmp/stage/lib/modules/$rel
	fi
	if ! is "$st" 0 "dkms add + install: kmemtrace.ko for $rel"; then
		note_file "$W/dkms-$rel.log" 30
		continue
	fi
	ko=$(ls "$out"/updates/dkms/kmemtrace.ko* 2>/dev/null | head -n 1)
	is "$(modinfo -F version "$ko" 2>/dev/null)" "$V" "$rel: the module DKMS built is version $V"
	is "$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)" "$rel" "$rel: and built for $rel"
	if [ "$out" != "$stage/$rel" ]; then
		mkdir -p "$stage"
		cp -a "$out" "$stage/"
	fi
done

# --- The guest's /lib/modules: what DKMS installed, and depmod's modules.dep ---------------------
# busybox's modprobe reads modules.dep, and no compressed module.
[ -d "$stage/$G/updates/dkms" ] || bail "no DKMS build for the guest kernel $G"
for f in "$stage/$G"/updates/dkms/*.ko.*; do
	case $f in
	*.ko.xz) xz -d "$f" ;;
	*.ko.zst) zstd -q -d --rm "$f" ;;
	*.ko.gz) gzip -d "$f" ;;
	esac
done
depmod -b "$W/stage" "$G" 2>"$W/depmod.log"
is "$(cat "$stage/$G/modules.dep" 2>/dev/null)" "updates/dkms/kmemtrace.ko:" \
	"depmod: modules.dep of $G names the DKMS module"
tar -C "$stage" -cf "$W/modules.tar" "$G"

# --- In the guest ------------------------------------------------------------------------------
guest=$W/dkms-guest.sh
cat >"$guest" <<'EOS'
#!/bin/sh
OUT=$KMT_OUT
P=/sys/module/kmemtrace/parameters
mkdir -p /lib/modules
tar -xf "$KMT_FILES/modules.tar" -C /lib/modules
modinfo -F version kmemtrace > "$OUT/modinfo_version" 2>&1
modinfo -F filename kmemtrace > "$OUT/modinfo_filename" 2>&1
# The kernel command line says kmemtrace.subbufs=24.
modprobe kmemtrace > "$OUT/modprobe1.out" 2>&1
echo $? > "$OUT/modprobe1.status"
cat $P/subbufs > "$OUT/subbufs_cmdline" 2>&1
cat /sys/module/kmemtrace/version > "$OUT/sys_version" 2>&1
modprobe -r kmemtrace
echo $? > "$OUT/remove1.status"
# A parameter given to modprobe comes after the command line's, and wins.
modprobe kmemtrace subbufs=16 > "$OUT/modprobe2.out" 2>&1
echo $? > "$OUT/modprobe2.status"
cat $P/subbufs > "$OUT/subbufs_arg" 2>&1
"$KMT_FILES/kmemtraced" --version > "$OUT/kmemtraced_version" 2>&1
"$KMT_FILES/kmemtraced" -o "$OUT/trace" -- sh -c 'find / -xdev > /dev/null; ls -lR /sys/kernel/slab > /dev/null 2>&1' \
	> "$OUT/kmemtraced.out" 2>&1
echo $? > "$OUT/kmemtraced.status"
modprobe -r kmemtrace
echo $? > "$OUT/remove2.status"
grep -c '^kmemtrace ' /proc/modules > "$OUT/loaded_at_end"
exit 0
EOS
chmod +x "$guest"
vm_ok boot --no-build --no-tools --no-module --no-daemon --append 'kmemtrace.subbufs=24' \
	-a "$W/modules.tar" -a "$W/tools-pkg/usr/bin/kmemtraced" -a "$guest" -- dkms-guest.sh
O=$VM_OUT
is "$(cat "$O/modinfo_version" 2>/dev/null)" "$V" "guest: modinfo kmemtrace says version $V"
is "$(cat "$O/modinfo_filename" 2>/dev/null)" "/lib/modules/$G/updates/dkms/kmemtrace.ko" \
	"guest: modprobe finds the module DKMS installed"
is "$(cat "$O/modprobe1.status" 2>/dev/null)" 0 "guest: modprobe kmemtrace loads it" ||
	note_file "$O/modprobe1.out"
is "$(cat "$O/subbufs_cmdline" 2>/dev/null)" 24 "guest: kmemtrace.subbufs=24 on the kernel command line reaches it"
is "$(cat "$O/sys_version" 2>/dev/null)" "$V" "guest: /sys/module/kmemtrace/version is $V"
is "$(cat "$O/remove1.status" 2>/dev/null)" 0 "guest: modprobe -r kmemtrace"
is "$(cat "$O/modprobe2.status" 2>/dev/null)" 0 "guest: modprobe kmemtrace subbufs=16 loads it" ||
	note_file "$O/modprobe2.out"
is "$(cat "$O/subbufs_arg" 2>/dev/null)" 16 "guest: modprobe's subbufs=16 wins over the command line's"
contains "$(cat "$O/kmemtraced_version" 2>/dev/null)" "kmemtraced $V " "guest: the packaged kmemtraced is version $V"
is "$(cat "$O/kmemtraced.status" 2>/dev/null)" 0 "guest: the packaged kmemtraced traced a command" ||
	note_file "$O/kmemtraced.out"
is "$(cat "$O/remove2.status" 2>/dev/null)" 0 "guest: modprobe -r kmemtrace after the trace"
is "$(cat "$O/loaded_at_end" 2>/dev/null)" 0 "guest: kmemtrace no longer loaded"
dmesg_clean

# dpkg -i waits for no lock: try again while apt or dpkg runs elsewhere.
dpkg_retry() {
	local n
	for ((n = 0; n < 30; n++)); do
		"$@" >>"$W/dpkg.log" 2>&1 && return 0
		grep -q 'lock' "$W/dpkg.log" || return 1
		sleep 2
	done
	return 1
}

# --- kmemtrace-tools installed on this machine, on the guest's trace -----------------------------
T=$O/trace
ncpu=$(ls "$T"/cpu*.out 2>/dev/null | wc -l)
ok "the trace has a cpuN.out per guest CPU ($ncpu)" [ "$ncpu" -ge 1 ]
installed() {
	dpkg-query -W -f '${Status}' "$1" 2>/dev/null | grep -q 'ok installed'
}
if installed kmemtrace-tools; then
	ok "kmemtrace-tools installed and used # SKIP this machine has kmemtrace-tools installed: not replacing it" true
else
	trap 'cleanup; dpkg -P kmemtrace-tools >/dev/null 2>&1' EXIT
	st=0
	dpkg_retry dpkg -i "$tools_deb" || st=$?
	is "$st" 0 "dpkg -i kmemtrace-tools" || note_file "$W/dpkg.log"
	is "$(dpkg-query -W -f '${Version}' kmemtrace-tools 2>/dev/null)" "$V" "kmemtrace-tools $V is installed"
	for t in kmemtraced kmemtrace-report kmemtrace_check; do
		contains "$("/usr/bin/$t" --version 2>&1)" "$t $V " "/usr/bin/$t --version says $V"
	done
	check=$(/usr/bin/kmemtrace_check --strict "$T" 2>&1)
	is "$?" 0 "the installed kmemtrace_check --strict passes the guest's trace" || diag "$check"
	is "$(grep -c ': OK' <<<"$check")" "$ncpu" "kmemtrace_check: one OK per cpu file"
	st=0
	/usr/bin/kmemtrace-report "$T" >"$W/report.installed" 2>"$W/report.err" || st=$?
	is "$st" 0 "the installed kmemtrace-report reads the guest's trace" || note_file "$W/report.err"
	[ -x "$KMT_TOP/build/kmemtrace-report" ] ||
		flock "$KMT_TOP/build/.kmemtrace-vm.lock" make -C "$KMT_TOP" -s tools >/dev/null 2>&1
	"$KMT_TOP/build/kmemtrace-report" "$T" >"$W/report.tree" 2>/dev/null
	ok "its report is the one the tree's kmemtrace-report gives" cmp -s "$W/report.installed" "$W/report.tree"
	ok "the report is not empty" [ -s "$W/report.installed" ]
	if command -v man >/dev/null; then
		is "$(man -w kmemtrace-report 2>/dev/null)" /usr/share/man/man1/kmemtrace-report.1.gz "man kmemtrace-report"
		is "$(man -w 8 kmemtraced 2>/dev/null)" /usr/share/man/man8/kmemtraced.8.gz "man 8 kmemtraced"
	fi
	st=0
	dpkg_retry dpkg -P kmemtrace-tools || st=$?
	is "$st" 0 "dpkg -P kmemtrace-tools" || note_file "$W/dpkg.log"
	ok "and its programs are gone" [ ! -e /usr/bin/kmemtraced ] && [ ! -e /usr/bin/kmemtrace-report ]
fi

# --- make check-packaging: kmemtrace-dkms installed with dpkg -i, its maintainer scripts running
# dkms on this machine for its kernels, then purged. The signing key dkms makes on first use is
# removed again when it was not there before.
if [ "$full" = 1 ]; then
	if installed kmemtrace-dkms || [ -e /var/lib/dkms/kmemtrace ] || [ -e "/usr/src/kmemtrace-$V" ]; then
		ok "dpkg -i kmemtrace-dkms # SKIP this machine has kmemtrace in dkms already: not touching it" true
	else
		key=0
		[ -e /var/lib/dkms/mok.key ] && key=1
		trap 'cleanup; dpkg -P kmemtrace-dkms kmemtrace-tools >/dev/null 2>&1
			[ "$key" = 1 ] || rm -f /var/lib/dkms/mok.key /var/lib/dkms/mok.pub' EXIT
		st=0
		dpkg_retry dpkg -i "$dkms_deb" || st=$?
		is "$st" 0 "dpkg -i kmemtrace-dkms: its postinst runs dkms" || note_file "$W/dpkg.log" 30
		status=$(dkms status kmemtrace 2>&1)
		diag "$status"
		# Debian's dkms builds for the running kernel and the newest; on a machine whose running
		# kernel is none of those installed (this build host), for every installed kernel.
		for rel in "${!rootdir[@]}"; do
			[ "${rootdir[$rel]}" = / ] || continue
			[ -d "/lib/modules/$(uname -r)" ] && [ "$rel" != "$(uname -r)" ] && continue
			contains "$status" "kmemtrace/$V, $rel, $(uname -m): installed" \
				"dkms status: kmemtrace/$V installed for $rel"
			ko=$(ls "/lib/modules/$rel/updates/dkms/"kmemtrace.ko* 2>/dev/null | head -n 1)
			is "$(modinfo -F version "$ko" 2>/dev/null)" "$V" "/lib/modules/$rel/updates/dkms/kmemtrace.ko, version $V"
			is "$(modinfo -k "$rel" -F filename kmemtrace 2>/dev/null)" "$ko" "depmod: modprobe -S $rel would load it"
		done
		st=0
		dpkg_retry dpkg -P kmemtrace-dkms || st=$?
		is "$st" 0 "dpkg -P kmemtrace-dkms: its prerm removes it from dkms" || note_file "$W/dpkg.log" 30
		is "$(dkms status kmemtrace 2>&1)" "" "dkms no longer knows kmemtrace"
		is "$(ls /lib/modules/*/updates/dkms/kmemtrace.ko* 2>/dev/null)" "" "no module left"
		ok "nor /usr/src/kmemtrace-$V" [ ! -e "/usr/src/kmemtrace-$V" ]
		[ "$key" = 1 ] || rm -f /var/lib/dkms/mok.key /var/lib/dkms/mok.pub
	fi
fi

done_testing
