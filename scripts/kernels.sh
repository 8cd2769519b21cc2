# SPDX-License-Identifier: GPL-2.0-only
# kernels.sh - the kernel matrix kmemtrace is tested on, and where to find those kernels; sourced.
# shellcheck shell=bash disable=SC2034  # the variables are for the scripts that source this
#
# Sourced by install-deps (which installs the matrix), kernel-version (which picks from it),
# kbuild (which builds against it), kmemtrace-vm (which boots it), check-fresh and deb-cross;
# debian_mirror finds the Debian mirror they all fetch from, kmt_debootstrap and kmt_in_root make
# and enter the Debian roots of install-deps (trixie) and deb-cross (bookworm with a foreign
# architecture). No command runs when this file is sourced, so it costs nothing to the scripts
# that run on every make.

# The matrix: one line per series, "SERIES SOURCE FLAVOUR...". SOURCE says where it comes from:
#   bookworm          Debian 12's own kernel, the meta packages linux-image-FLAVOUR and
#                     linux-headers-FLAVOUR, installed on the host
#   bookworm-newest   the newest linux-image-SERIES.N+deb12-FLAVOUR (with its linux-headers) in
#                     the host's apt sources (bookworm-security; else bookworm-backports, which
#                     install-deps then adds), installed on the host
#   trixie-backports  Debian 13's backports: headers installed in the trixie build root
#                     ($KMT_TRIXIE_ROOT), image and modules extracted there without installing
#   cross             the other architectures (KMT_CROSS below, one flavour each): Debian 12's
#                     newest kernel of each, extracted by scripts/install-cross and cross-built
# KMT_DEFAULT_SERIES is what the guest boots unless told otherwise (-k, KMT_KVER, --series).
KMT_MATRIX='
6.1   bookworm          amd64 rt-amd64
6.12  bookworm-newest   amd64 rt-amd64
7.3   trixie-backports  amd64 rt-amd64
6.1   cross             arm64 s390x 686-pae
'
KMT_DEFAULT_SERIES=6.1

# The Debian 13 root in which trixie's kernels are built (its gcc-14 and glibc run their kbuild
# programs). The Makefile's TRIXIE_ROOT sets it. Only releases named in its marker file, which
# install-deps writes last, count as installed.
KMT_TRIXIE_ROOT=${KMT_TRIXIE_ROOT:-/var/lib/kmemtrace/trixie-root}
KMT_ROOT_MARKER=.kmemtrace-kernels

# The other architectures (scripts/install-cross), "ARCH FLAVOUR TRIPLET QEMU-PACKAGE": Debian
# 6.1's newest kernel of each, its headers extracted into $KMT_HEADERS_ROOT/usr/src, its image and
# modules into $KMT_HEADERS_ROOT/{boot,lib/modules}, its busybox-static and the -dev libraries the
# tools link statically into $KMT_HEADERS_ROOT/sysroot/ARCH; cross-compiled with TRIPLET-gcc and
# booted by kmemtrace-vm under qemu-system-ARCH from QEMU-PACKAGE. The 32-bit kernel is i386's
# 686-pae: qemu-system-x86, already installed for the amd64 guests, boots it, and the mirror
# here has no armhf security index. Every amd64 6.1 point release still in the archive is
# extracted too, to be built for (not booted). The releases ready are listed in the marker,
# "RELEASE ARCH" a line.
KMT_CROSS='
arm64  arm64    aarch64-linux-gnu  qemu-system-arm
s390x  s390x    s390x-linux-gnu    qemu-system-misc
i386   686-pae  i686-linux-gnu     qemu-system-x86
'
KMT_HEADERS_ROOT=${KMT_HEADERS_ROOT:-/var/lib/kmemtrace/headers}
KMT_HEADERS_MARKER=.kmemtrace-headers

# kmt_headers [ARCH]: print "RELEASE ARCH" for every extracted release (of ARCH).
kmt_headers() {
	[ -r "$KMT_HEADERS_ROOT/$KMT_HEADERS_MARKER" ] || return 0
	awk -v a="${1:-}" 'a == "" || $2 == a' "$KMT_HEADERS_ROOT/$KMT_HEADERS_MARKER"
}

# kmt_cross ARCH: set KMT_CROSS_FLAV, KMT_CROSS_TRIPLET and KMT_CROSS_QEMU for an arch of
# KMT_CROSS; fails for any other.
kmt_cross() {
	local a f t q
	while read -r a f t q; do
		[ -n "$a" ] && [ "$a" = "$1" ] || continue
		KMT_CROSS_FLAV=$f KMT_CROSS_TRIPLET=$t KMT_CROSS_QEMU=$q
		return 0
	done <<<"$KMT_CROSS"
	return 1
}

# kmt_flavour_arch FLAVOUR: the Debian architecture of a kernel flavour (amd64 for the matrix's).
kmt_flavour_arch() {
	local a f t q
	while read -r a f t q; do
		[ -n "$a" ] && [ "$f" = "$1" ] && { echo "$a"; return 0; }
	done <<<"$KMT_CROSS"
	echo amd64
}

# kmt_kbuild_arch ARCH: the kernel's ARCH= for a Debian architecture.
kmt_kbuild_arch() {
	case $1 in
	arm64) echo arm64 ;;
	s390x) echo s390 ;;
	*) echo x86 ;;
	esac
}

# kmt_cross_make RELEASE: for an extracted release, set KMT_KDIR (its headers) and KMT_CROSS_ARGS
# (make's ARCH= and CROSS_COMPILE=, none for amd64). Fails for any other release.
kmt_cross_make() {
	local r a
	while read -r r a; do
		[ "$r" = "$1" ] || continue
		KMT_KDIR=$KMT_HEADERS_ROOT/usr/src/linux-headers-$r
		KMT_CROSS_ARGS=()
		if [ "$a" != amd64 ]; then
			kmt_cross "$a" || return 1
			KMT_CROSS_ARGS=("ARCH=$(kmt_kbuild_arch "$a")" "CROSS_COMPILE=$KMT_CROSS_TRIPLET-")
		fi
		[ -e "$KMT_KDIR/Makefile" ]
		return
	done < <(kmt_headers)
	return 1
}

# kmt_tools_args ARCH: make's arguments that build the tools for a guest of ARCH (empty for
# amd64): statically linked, with TRIPLET-gcc, against the arch's libraries in its sysroot (in
# Debian's multiarch directories: i386-linux-gnu for i686-linux-gnu-gcc), into build/ARCH.
kmt_tools_args() {
	KMT_TOOLS_ARGS=()
	[ "$1" = amd64 ] && return 0
	kmt_cross "$1" || return 1
	KMT_TOOLS_ARGS=("BUILD=build/$1" "CC=$KMT_CROSS_TRIPLET-gcc" "AR=$KMT_CROSS_TRIPLET-ar"
		"TOOLS_SYSROOT=$KMT_HEADERS_ROOT/sysroot/$1"
		"TOOLS_MULTIARCH=$(dpkg-architecture -a "$1" -qDEB_HOST_MULTIARCH 2>/dev/null)")
}

# kmt_parse RELEASE: is RELEASE a Debian kernel release? Sets KMT_SERIES (6.12) and KMT_FLAV
# (rt-amd64). Both styles: VERSION-ABI-FLAVOUR (6.1.0-56-amd64) and VERSION+debNN-FLAVOUR
# (6.12.117+deb12-amd64). The ABI is the one number after the version, so the flavour is all
# that follows it (686-pae starts with a digit) and holds a letter.
kmt_parse() {
	[[ $1 =~ ^([0-9]+\.[0-9]+)(\.[0-9]+)*(-[0-9]+|\+deb[0-9]+)-([a-z0-9]+(-[a-z0-9]+)*)$ ]] &&
		[[ ${BASH_REMATCH[4]} == *[a-z]* ]] || return 1
	KMT_SERIES=${BASH_REMATCH[1]}
	KMT_FLAV=${BASH_REMATCH[4]}
}

# kmt_installed: print "RELEASE FLAVOUR SERIES ROOT" for every Debian kernel that can be booted
# and built for: an image, its modules and its headers (ROOT is / for the host's kernels, the
# trixie root for its, $KMT_HEADERS_ROOT for the other architectures': see kmt_locate).
kmt_installed() {
	local d r a
	for d in /lib/modules/*; do
		r=${d##*/}
		kmt_parse "$r" || continue
		if [ -d "$d/kernel" ] && [ -e "$d/build" ] &&
			{ [ -e "/boot/vmlinuz-$r" ] || [ -e "$d/vmlinuz" ]; }; then
			echo "$r $KMT_FLAV $KMT_SERIES /"
		fi
	done
	if [ -r "$KMT_TRIXIE_ROOT/$KMT_ROOT_MARKER" ]; then
		while read -r r; do
			d=$KMT_TRIXIE_ROOT/usr/lib/modules/$r
			kmt_parse "$r" || continue
			if [ -d "$d/kernel" ] && [ -e "$d/build" ] && [ -e "$d/vmlinuz" ]; then
				echo "$r $KMT_FLAV $KMT_SERIES $KMT_TRIXIE_ROOT"
			fi
		done <"$KMT_TRIXIE_ROOT/$KMT_ROOT_MARKER"
	fi
	# The other architectures' (scripts/install-cross), all extracted under $KMT_HEADERS_ROOT.
	while read -r r a; do
		[ "$a" != amd64 ] && kmt_parse "$r" || continue
		d=$KMT_HEADERS_ROOT/lib/modules/$r
		if [ -d "$d/kernel" ] && [ -e "$KMT_HEADERS_ROOT/boot/vmlinuz-$r" ] &&
			[ -e "$KMT_HEADERS_ROOT/usr/src/linux-headers-$r/Makefile" ]; then
			echo "$r $KMT_FLAV $KMT_SERIES $KMT_HEADERS_ROOT"
		fi
	done < <(kmt_headers)
}

# kmt_newest SERIES FLAVOUR: the newest installed release of SERIES (any, if empty) and FLAVOUR.
kmt_newest() {
	local r f s root
	kmt_installed | while read -r r f s root; do
		if [ "$f" = "$2" ] && { [ -z "$1" ] || [ "$s" = "$1" ]; }; then
			echo "$r"
		fi
	done | sort -V | tail -n 1
}

# kmt_locate RELEASE: find an installed kernel. Sets KMT_ROOT (the build root: empty for the
# host and for the other architectures, which are cross-built on the host), KMT_MODDIR (its
# modules directory as the host sees it), KMT_IMAGE (its vmlinuz) and KMT_ARCH (its Debian
# architecture). Fails if RELEASE is not installed with image, modules and headers.
kmt_locate() {
	local r f s root
	while read -r r f s root; do
		[ "$r" = "$1" ] || continue
		KMT_ARCH=$(kmt_flavour_arch "$f")
		if [ "$KMT_ARCH" != amd64 ]; then
			KMT_ROOT=
			KMT_MODDIR=$root/lib/modules/$r
			KMT_IMAGE=$root/boot/vmlinuz-$r
		elif [ "$root" = / ]; then
			KMT_ROOT=
			KMT_MODDIR=/lib/modules/$r
			KMT_IMAGE=/boot/vmlinuz-$r
			[ -e "$KMT_IMAGE" ] || KMT_IMAGE=$KMT_MODDIR/vmlinuz
		else
			KMT_ROOT=$root
			KMT_MODDIR=$root/usr/lib/modules/$r
			KMT_IMAGE=$KMT_MODDIR/vmlinuz
		fi
		return 0
	done < <(kmt_installed)
	return 1
}

# kmt_matrix: print "SERIES SOURCE FLAVOUR" for each kernel of the matrix, plus KMT_FLAVOUR
# (one more flavour for every series) when it is set and not in the matrix.
kmt_matrix() {
	local s src f extra
	while read -r s src extra; do
		[ -n "$s" ] || continue
		for f in $extra; do
			echo "$s $src $f"
		done
		if [ -n "${KMT_FLAVOUR:-}" ] && [ "$src" != cross ] && [[ " $extra " != *" $KMT_FLAVOUR "* ]]; then
			echo "$s $src $KMT_FLAVOUR"
		fi
	done <<<"$KMT_MATRIX"
}

# kmt_unshare COMMAND...: run COMMAND in a private mount namespace, so that what it mounts
# disappears with it. Private propagation needs / to be a mount point: inside a chroot it is
# not, and the namespace then keeps the propagation it has (so COMMAND unmounts what it
# mounted itself before it ends).
kmt_unshare() {
	if unshare -m --propagation private true 2>/dev/null; then
		unshare -m --propagation private "$@"
	else
		unshare -m --propagation unchanged "$@"
	fi
}

# kmt_in_root ROOT COMMAND...: run COMMAND chrooted in ROOT (a debootstrapped Debian), in a
# private mount namespace (its mounts of /proc and /dev go away with it; unmounted anyway when
# the namespace cannot be private), with a clean environment but for a proxy.
kmt_in_root() {
	local root=$1 envv=(PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
		DEBIAN_FRONTEND=noninteractive) v
	shift
	for v in http_proxy https_proxy ftp_proxy no_proxy; do
		[ -z "${!v:-}" ] || envv+=("$v=${!v}")
	done
	# shellcheck disable=SC2016 # $1 and $@ are the inner shell's
	kmt_unshare sh -c 'mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" || exit
		chroot "$@"; st=$?; umount -R "$1/dev"; umount "$1/proc"; exit $st' \
		sh "$root" env -i "${envv[@]}" "$@"
}

# kmt_mounted_under DIR: is anything mounted at or below DIR (left by a killed debootstrap)?
kmt_mounted_under() {
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 { found = 1 } END { exit !found }' \
		/proc/self/mountinfo
}

# kmt_debootstrap SUITE ROOT PACKAGES [NOTE]: make ROOT a minbase Debian SUITE with PACKAGES
# (debootstrap's --include, comma-separated) from this machine's mirror, unless it already is one
# (a directory with etc/debian_version; an empty one counts as absent). debootstrap works in
# ROOT.partial, renamed to ROOT when it succeeded: an interrupted run leaves only ROOT.partial,
# which the next run removes and starts again. Says how long it took (NOTE: how long it usually
# takes). The caller holds a lock on the root.
kmt_debootstrap() {
	local suite=$1 root=$2 include=$3 note=${4:+; $4} mirror part start p=${prog:-kmemtrace}
	if [ -d "$root" ]; then rmdir "$root" 2>/dev/null || true; fi
	if [ -e "$root" ]; then
		[ -e "$root/etc/debian_version" ] && return 0
		echo "$p: $root exists and is not a Debian root: remove it, or choose another" >&2
		return 1
	fi
	mirror=$(debian_mirror) ||
		{ echo "$p: cannot find this machine's Debian mirror in /etc/apt (set KMT_DEBIAN_MIRROR)" >&2; return 1; }
	part=$root.partial
	if [ -e "$part" ]; then
		if kmt_mounted_under "$part"; then
			echo "$p: $part has file systems mounted under it: unmount them first" >&2
			return 1
		fi
		echo "$p: removing $part, left by an interrupted run" >&2
		rm -rf --one-file-system "$part"
	fi
	mkdir -p "$(dirname "$root")"
	echo "$p: creating the $suite root $root (debootstrap from $mirror$note)" >&2
	start=$SECONDS
	# In its own mount namespace: what debootstrap mounts in the root cannot outlive it.
	kmt_unshare debootstrap --variant=minbase --include="$include" "$suite" "$part" "$mirror" \
		>"$root.debootstrap.log" 2>&1 || {
		tail -n 20 "$root.debootstrap.log" >&2
		echo "$p: debootstrap failed (log: $root.debootstrap.log)" >&2
		return 1
	}
	mv "$part" "$root"
	rm -f "$root.debootstrap.log"
	echo "$p: debootstrap done in $((SECONDS - start)) s" >&2
}

# kmt_copy_sources ROOT: give ROOT this machine's apt sources (its security updates, say) and
# name servers, as a fresh machine of it would have; kmemtrace's own additions stay out.
kmt_copy_sources() {
	local f
	# debootstrap's sources.list repeats what the host's deb822 sources say, when it has only
	# those: apt then warns about every index at every update.
	cp -L /etc/apt/sources.list "$1/etc/apt/sources.list" 2>/dev/null ||
		echo "# kmemtrace: this machine's sources are in sources.list.d" >"$1/etc/apt/sources.list"
	for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		case $f in */kmemtrace-*) continue ;; esac
		cp -L "$f" "$1/etc/apt/sources.list.d/"
	done
	cp -L /etc/resolv.conf "$1/etc/resolv.conf"
}

# debian_mirror: the Debian archive URI that this machine's apt uses for its own release.
debian_mirror() {
	local codename f type rest uri suite
	if [ -n "${KMT_DEBIAN_MIRROR:-}" ]; then
		echo "$KMT_DEBIAN_MIRROR"
		return 0
	fi
	# shellcheck disable=SC1091
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		# "deb [OPTIONS] URI SUITE COMPONENT..."
		while read -r type rest; do
			[ "$type" = deb ] || continue
			[[ $rest == \[* ]] && rest=${rest#*]}
			read -r uri suite _ <<<"$rest"
			if [ "$suite" = "$codename" ] && [[ $uri =~ ^(https?|ftp|file): ]]; then
				echo "${uri%/}"
				return 0
			fi
		done <"$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		# deb822 stanzas: the first URI of an enabled "deb" stanza whose Suites has the codename.
		uri=$(awk -v want="$codename" '
			function flush() {
				if (types ~ / deb / && enabled !~ /no/ && (" " suites " ") ~ (" " want " ") &&
				    split(uris, u, " ") > 0 && u[1] ~ /^(https?|ftp|file):/) { print u[1]; found = 1; exit }
				types = " "; uris = ""; suites = ""; enabled = "yes"; key = ""
			}
			BEGIN { types = " "; enabled = "yes" }
			/^[ \t]*$/ { flush(); next }
			/^#/ { next }
			/^[A-Za-z-]+:/ { key = tolower(substr($0, 1, index($0, ":") - 1)); $0 = substr($0, index($0, ":") + 1) }
			key == "types" { types = types $0 " " }
			key == "uris" { uris = uris " " $0 }
			key == "suites" { suites = suites " " $0 }
			key == "enabled" { enabled = tolower($0) }
			END { if (!found) flush() }' "$f")
		if [ -n "$uri" ]; then
			echo "${uri%/}"
			return 0
		fi
	done
	return 1
}
