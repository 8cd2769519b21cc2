#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 60-packaging.t - the Debian packages (dpkg-buildpackage -us -uc through make deb) and lintian on
# them, one version everywhere, make install / uninstall with PREFIX and DESTDIR, the packages
# holding what make install-tools and install-dkms install, and the bash completion.
# (tests/guest/60-dkms.t installs the packages and uses them.) kmemtrace-tools is cross-built for
# arm64 (make deb-cross) and checked: architecture, contents, aarch64 programs that run under
# qemu-user, lintian. Under make check-packaging (KMT_PACKAGING_FULL=1) the package build also
# runs the unit tests.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
top=$PWD

require_cmds dpkg-buildpackage dh dh_dkms lintian

V=$(cat VERSION)
W=$top/build/packaging-test
rm -rf "$W"
mkdir -p "$W"
# make runs that touch build/ wait for kmemtrace-vm's builds (and it for them).
lock=$top/build/.kmemtrace-vm.lock
lmake() {
	flock "$lock" make -C "$top" --no-print-directory "$@"
}

# --- The packages ----------------------------------------------------------------------------
opts=nocheck
[ "${KMT_PACKAGING_FULL:-0}" = 1 ] && opts=
rc=0
DEB_BUILD_OPTIONS=$opts make --no-print-directory deb DEB_OUT="$W/deb" >"$W/deb.log" 2>&1 || rc=$?
ok $rc "dpkg-buildpackage -us -uc (make deb${opts:+, DEB_BUILD_OPTIONS=$opts})"
[ $rc = 0 ] || tail -n 30 "$W/deb.log" | sed 's/^/# /'
arch=$(dpkg --print-architecture)
for f in kmemtrace_$V.dsc kmemtrace_$V.tar.xz kmemtrace_${V}_$arch.changes \
	kmemtrace-dkms_${V}_all.deb kmemtrace-tools_${V}_$arch.deb; do
	ok "$([ -s "$W/deb/$f" ]; echo $?)" "built $f"
done
dkms_deb=$W/deb/kmemtrace-dkms_${V}_all.deb
tools_deb=$W/deb/kmemtrace-tools_${V}_$arch.deb
if [ "$opts" = "" ]; then
	like "$(cat "$W/deb.log")" "All tests successful." "the package build ran the unit tests"
fi

rc=0
lint=$(lintian --fail-on error,warning,info,pedantic -I --pedantic "$W/deb/kmemtrace_${V}_$arch.changes" 2>&1) ||
	rc=$?
ok $rc "lintian: no error, warning, info or pedantic tag (overrides give their reasons)"
printf '%s\n' "$lint" | grep -v 'root privileges' | sed 's/^/# /'

# --- kmemtrace-tools for arm64, cross-built -----------------------------------------------------
# The libbfd probe asks the compiler of the build: a cross compiler finds the host's bfd.h (in
# /usr/include) but no libbfd.so of its target, and the build must leave bfd out, not fail to link.
if command -v aarch64-linux-gnu-gcc >/dev/null; then
	probe() {
		make -s --no-print-directory --eval 'kmt-probe-bfd: ; @echo "bfd=$(HAVE_LIBBFD)"' \
			kmt-probe-bfd "$@" 2>/dev/null
	}
	is "$(probe CC=aarch64-linux-gnu-gcc)" "bfd=" \
		"the libbfd probe with aarch64-linux-gnu-gcc: no libbfd for arm64 here, bfd left out"
	[ -e /usr/include/bfd.h ] && is "$(probe)" "bfd=1" "and with the host's compiler: libbfd found"
fi
# make deb-cross (scripts/deb-cross): dpkg-buildpackage --host-arch arm64 in a Debian 12 root of
# its own, which scripts/install-deps makes (about 2 min and the network, once); each build then
# takes about 30 s, offline. Under make check when that root is there, and always under make
# check-packaging.
cross_root=${KMT_CROSS_ROOT:-/var/lib/kmemtrace/cross-root}
if [ "${KMT_PACKAGING_FULL:-0}" = 1 ] || [ -e "$cross_root/etc/debian_version" ]; then
	X=$W/deb-arm64
	xdeb=$X/kmemtrace-tools_${V}_arm64.deb
	rc=0
	make --no-print-directory deb-cross DEB_ARCH=arm64 DEB_CROSS_OUT="$X" >"$W/deb-cross.log" 2>&1 ||
		rc=$?
	ok $rc "make deb-cross DEB_ARCH=arm64 (dpkg-buildpackage --host-arch arm64 -Pcross in the cross root)"
	[ $rc = 0 ] || tail -n 30 "$W/deb-cross.log" | sed 's/^/# /'
	ok "$(dpkg --print-foreign-architectures | grep -qx arm64; [ $? = 1 ]; echo $?)" \
		"the host's dpkg has no foreign architecture arm64 (only the cross root's has)"
	like "$(dpkg-deb -I "$xdeb" 2>&1)" " Architecture: arm64
" "dpkg-deb -I: kmemtrace-tools_${V}_arm64.deb is Architecture: arm64"
	like "$(dpkg-deb -f "$xdeb" Depends 2>&1)" "libdw1 (" \
		"its Depends come from arm64's libraries (dpkg-shlibdeps)"
	listing=$(dpkg-deb -c "$xdeb" 2>&1)$'\n'
	rm -rf "$W/arm64-pkg"
	dpkg-deb -x "$xdeb" "$W/arm64-pkg" 2>/dev/null
	log=$(cat "$W/deb-cross.log")
	for t in kmemtraced kmemtrace-report kmemtrace_check kmemtrace-top; do
		like "$listing" " ./usr/bin/$t
" "dpkg-deb -c: the arm64 package holds /usr/bin/$t"
		like "$(file -b "$W/arm64-pkg/usr/bin/$t" 2>&1)" "ARM aarch64" \
			"file: the packaged $t is an ARM aarch64 program"
		# scripts/deb-cross installs the package in the root and runs each tool under qemu-user.
		like "$log" "deb-cross: arm64 $t --version under qemu-aarch64-static: $t $V " \
			"the arm64 $t, installed in the cross root, says its version under qemu-aarch64-static"
	done
	rc=0
	lint=$(lintian --fail-on error,warning,info,pedantic -I --pedantic "$X/kmemtrace_${V}_arm64.changes" 2>&1) ||
		rc=$?
	ok $rc "lintian on the arm64 build: no error, warning, info or pedantic tag"
	printf '%s\n' "$lint" | grep -v 'root privileges' | sed 's/^/# /'
fi

# --- One version -------------------------------------------------------------------------------
is "$(dpkg-parsechangelog -l debian/changelog -S Version)" "$V" "debian/changelog's version is VERSION's"
# The package build refuses a VERSION that debian/changelog does not repeat (in make deb's copy).
copy=$W/deb/kmemtrace-$V
echo "$V.1" >"$copy/VERSION"
out=$(cd "$copy" && debian/rules clean 2>&1)
like "$out" "debian/changelog says $V but VERSION says $V.1" "debian/rules refuses a VERSION debian/changelog does not have"
echo "$V" >"$copy/VERSION"
is "$(dpkg-deb -f "$tools_deb" Version)" "$V" "kmemtrace-tools is version $V"
is "$(dpkg-deb -f "$dkms_deb" Version)" "$V" "kmemtrace-dkms is version $V"
dpkg-deb -x "$tools_deb" "$W/tools-pkg"
dpkg-deb -x "$dkms_deb" "$W/dkms-pkg"
for t in kmemtraced kmemtrace-report kmemtrace_check; do
	like "$("$W/tools-pkg/usr/bin/$t" --version 2>&1)" "$t $V " "packaged $t --version says $V"
done
for m in man1/kmemtrace-report.1 man1/kmemtrace_check.1 man8/kmemtraced.8; do
	like "$(zcat "$W/tools-pkg/usr/share/man/$m.gz" 2>/dev/null | grep '^\.TH ')" "\"kmemtrace $V\"" \
		"packaged ${m#*/}: its .TH says kmemtrace $V"
done
like "$(cat "$W/dkms-pkg/usr/src/kmemtrace-$V/dkms.conf")" "PACKAGE_VERSION=\"$V\"" \
	"packaged dkms.conf: PACKAGE_VERSION=\"$V\""
like "$(dpkg-deb -f "$dkms_deb" Depends)" "dkms" "kmemtrace-dkms depends on dkms"
like "$(dpkg-deb -I "$dkms_deb" postinst)" "common.postinst" "kmemtrace-dkms's postinst runs dkms (dh_dkms)"
like "$(dpkg-deb -I "$dkms_deb" prerm)" "dkms remove" "and its prerm removes it from dkms"

# --- make install / uninstall -------------------------------------------------------------------
# files DIR: the files and symbolic links under DIR, sorted, relative to it.
files() {
	(cd "$1" && find . ! -type d | sed 's|^\./||' | sort)
}

D=$W/destdir
rc=0
lmake install-tools install-dkms DESTDIR="$D" PREFIX=/opt/kmt DKMSDIR=/opt/kmt/src/kmemtrace \
	>"$W/install.log" 2>&1 || rc=$?
ok $rc "make install-tools install-dkms DESTDIR=... PREFIX=/opt/kmt"
want="opt/kmt/bin/kmemtrace-report
opt/kmt/bin/kmemtrace-top
opt/kmt/bin/kmemtrace_check
opt/kmt/bin/kmemtraced
opt/kmt/share/bash-completion/completions/kmemtrace-report
opt/kmt/share/bash-completion/completions/kmemtrace-top
opt/kmt/share/bash-completion/completions/kmemtrace_check
opt/kmt/share/bash-completion/completions/kmemtraced
opt/kmt/share/man/man1/kmemtrace-report.1
opt/kmt/share/man/man1/kmemtrace-top.1
opt/kmt/share/man/man1/kmemtrace_check.1
opt/kmt/share/man/man8/kmemtraced.8"
is "$(files "$D" | grep -v '^opt/kmt/src/')" "$want" "the tools, man pages and completions under DESTDIR/PREFIX"
like "$(files "$D/opt/kmt/src/kmemtrace")" "abi/kmemtrace_abi.h
dkms.conf
kmod/Kbuild" "install-dkms: abi/, kmod/ and dkms.conf in DKMSDIR"
ok "$([ "$(readlink "$D/opt/kmt/share/bash-completion/completions/kmemtrace_check")" = kmemtraced ]; echo $?)" \
	"one completion file; the other tools' names link to it"

# The packages hold what make installs in /usr and /usr/src.
lmake install-tools DESTDIR="$W/usr-tools" PREFIX=/usr >>"$W/install.log" 2>&1
lmake install-dkms DESTDIR="$W/usr-dkms" >>"$W/install.log" 2>&1
is "$(files "$W/tools-pkg" | grep -v '^usr/share/doc/' | sed 's/\.gz$//')" "$(files "$W/usr-tools")" \
	"kmemtrace-tools holds what make install-tools PREFIX=/usr installs (man pages compressed)"
rc=0
diff -r "$W/dkms-pkg/usr/src" "$W/usr-dkms/usr/src" >"$W/dkms.diff" 2>&1 || rc=$?
ok $rc "kmemtrace-dkms's /usr/src/kmemtrace-$V is make install-dkms's"
if [ $rc != 0 ]; then sed 's/^/# /' "$W/dkms.diff"; fi
# The module is several files (kmod/Kbuild): every one of them, and nothing generated.
is "$(files "$W/usr-dkms/usr/src/kmemtrace-$V/kmod")" \
	"$(files kmod | grep -E '^(Kbuild|kmt-slab-layout\.sh|[^/]*\.[ch])$' |
		grep -v -E '\.mod\.c$|^kmt_slab_layout\.h$')" \
	"make install-dkms puts the module's sources in /usr/src/kmemtrace-$V/kmod"

# make install with the module, for the guest's default kernel; then uninstall all of it.
kver=$(scripts/kernel-version 2>/dev/null)	# what make builds the module for
rc=0
lmake install DESTDIR="$D" PREFIX=/opt/kmt KVER="$kver" >>"$W/install.log" 2>&1 || rc=$?
ok $rc "make install DESTDIR=... PREFIX=/opt/kmt KVER=$kver"
ko=$(ls "$D/lib/modules/$kver/extra/"kmemtrace.ko* 2>/dev/null | head -n 1)
is "$(modinfo -F version "$ko" 2>/dev/null)" "$V" "make install: DESTDIR/lib/modules/$kver/extra/kmemtrace.ko, version $V"
rc=0
lmake uninstall DESTDIR="$D" PREFIX=/opt/kmt DKMSDIR=/opt/kmt/src/kmemtrace >>"$W/install.log" 2>&1 || rc=$?
ok $rc "make uninstall DESTDIR=... PREFIX=/opt/kmt"
is "$(files "$D")" "" "make uninstall leaves no file behind"
[ -z "$(files "$D")" ] || tail -n 20 "$W/install.log" | sed 's/^/# /'

# --- Bash completion, as bash-completion loads it from the packaged files --------------------------
comp=$(PATH="$W/tools-pkg/usr/bin:$PATH" \
	BASH_COMPLETION_USER_DIR="$W/tools-pkg/usr/share/bash-completion" bash -c '
	. /usr/share/bash-completion/bash_completion
	for c in kmemtraced kmemtrace-report kmemtrace_check; do
		_completion_loader "$c"; complete -p "$c"
	done
	c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		COMPREPLY=(); _kmemtrace "$1" "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"
		echo "$*: ${COMPREPLY[*]}"; }
	c kmemtrace-report --so
	c kmemtrace-report --sort=frag,xn
	c kmemtrace-report --resolver ""
	c kmemtrace-report --folded=b
	c kmemtraced --ou
	c kmemtrace_check --st' 2>/dev/null)
for c in kmemtraced kmemtrace-report kmemtrace_check; do
	like "$comp" "complete -F _kmemtrace $c
" "bash-completion loads the completion of $c"
done
like "$comp" "kmemtrace-report --so: --sort=" "completes kmemtrace-report's long options from its --help"
like "$comp" "--sort=frag,xn: frag,xnode" "completes the sort keys after a comma"
like "$comp" "--resolver : dw bfd" "completes an option's choices"
like "$comp" "--folded=b: bytes" "completes the choices of an option whose argument is optional"
like "$comp" "kmemtraced --ou: --output=" "completes kmemtraced's options"
like "$comp" "kmemtrace_check --st: --strict" "completes kmemtrace_check's options"

done_testing
