# SPDX-License-Identifier: GPL-2.0-only
# Makefile - builds kmemtrace (module, daemon, report tools), runs its tests, installs it.
#
# Userspace is built non-recursively into $(BUILD); each directory adds its programs in
# *.mk fragments. The module goes through Kbuild in kmod/ for the kernel $(KVER), by way of
# scripts/kbuild (or directly in $(KDIR) when KDIR is given).

PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man

# Where install-deps makes, and the scripts find, the Debian 13 (trixie) root in which the 7.x
# kernels of the test matrix are built (scripts/kernels.sh).
TRIXIE_ROOT ?= $(or $(KMT_TRIXIE_ROOT),/var/lib/kmemtrace/trixie-root)
export KMT_TRIXIE_ROOT := $(TRIXIE_ROOT)

# The kernel release to build for: $KMT_KVER when set, else the running kernel when its headers
# exist, else the newest Debian 6.1 kernel with headers (on a build host whose own kernel cannot
# load modules). Any release of `scripts/kernel-version --list` works, e.g.
# make module KVER=7.3.4+deb13-amd64. See scripts/kernel-version.
# (make 4.3 does not export variables to $(shell): the root is passed by hand.)
KVER ?= $(shell KMT_TRIXIE_ROOT='$(TRIXIE_ROOT)' scripts/kernel-version)
# scripts/kbuild runs the kernel's make on the host, or in the trixie root for its kernels.
# KDIR=DIR (a kernel tree, or /lib/modules/RELEASE/build) builds there directly instead.
ifdef KDIR
KMAKE = $(MAKE) -C $(KDIR)
else
KMAKE = scripts/kbuild $(KVER)
endif
# make demo KVER=... boots that kernel; otherwise kmemtrace-vm picks ($KMT_KVER, or 6.1).
VM_KVER = $(if $(filter command line environment environment override,$(origin KVER)),-k $(KVER))

SAN ?= 0
ifeq ($(SAN),1)
BUILD ?= build/san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else ifeq ($(SAN),thread)
# ThreadSanitizer, for the code that shares memory between threads (check builds the tests of
# the merge read ahead on a thread and kmemtrace-report with it: tests/host/57-tsan.t runs them).
BUILD ?= build/tsan
SAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
else
BUILD ?= build
SAN_FLAGS :=
endif

CC      ?= cc
AR      ?= ar
CFLAGS  ?= -O2 -g
# The one version (VERSION) reaches the tools' --version as KMT_VERSION (kmod/Kbuild: modinfo).
KMT_VERSION := $(shell cat VERSION)
KMT_VERSION_FLAG := -DKMT_VERSION='"$(KMT_VERSION)"'
KMT_CFLAGS := -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Wall -Wextra -Werror \
	-Wshadow -Wformat=2 -Wvla -Iabi -Ireport/lib -Ireport $(KMT_VERSION_FLAG) $(SAN_FLAGS) $(CFLAGS)
KMT_LDFLAGS := $(SAN_FLAGS) $(LDFLAGS)
# The tools for a guest of another architecture (scripts/kernels.sh, kmt_tools_args gives CC,
# BUILD and these two): linked statically, so the guest needs no C library, against the arch's
# libdw and libelf extracted by scripts/install-cross, with what libdw.a needs after them.
ifdef TOOLS_SYSROOT
KMT_CFLAGS += -isystem $(TOOLS_SYSROOT)/usr/include -isystem $(TOOLS_SYSROOT)/usr/include/$(TOOLS_MULTIARCH)
KMT_LDFLAGS += -static -L$(TOOLS_SYSROOT)/usr/lib/$(TOOLS_MULTIARCH)
KMT_STATIC_LIBS := -lz -llzma -lbz2 -lzstd -pthread
endif
OBJDIR := $(BUILD)/obj

# Fragments append to these. LIBKMT is the one reader library (report/lib.mk builds it);
# it is defined here so that fragments read before report/lib.mk can link it.
TOOLS :=
UNIT_TESTS :=
LIBKMT := $(BUILD)/libkmemtrace.a

.PHONY: all tools module test-modules unit-tests check check-rt check-kernels check-fresh demo install clean deps bench stress soak fuzz
all: tools module

# Every *.mk in these directories adds programs (TOOLS) or unit tests (UNIT_TESTS);
# tests/fuzz/*.mk also defines the fuzz target.
include $(sort $(wildcard report/*.mk kmemtraced/*.mk tests/*/*.mk))
# The files that print the version are rebuilt when it changes; the fuzz build gets it too.
$(addprefix $(OBJDIR)/,kmemtraced/kmemtraced.o report/kmemtrace-report.o report/kmemtrace_check.o \
	tests/unit/kmemtrace-gen.o): VERSION
FUZZ_CFLAGS += $(KMT_VERSION_FLAG)

tools: $(TOOLS)
unit-tests: $(UNIT_TESTS)

$(OBJDIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(KMT_CFLAGS) -MMD -MP -c $< -o $@

-include $(shell find $(OBJDIR) -name '*.d' 2>/dev/null)

# The builds of demo and check use every core unless the caller's make already runs jobs
# (its jobserver is then in MAKEFLAGS, which is complete only inside a recipe).
KMT_JOBS = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(shell nproc))

# "+": scripts/kbuild runs make, which takes part in this make's jobserver.
module:
	+$(KMAKE) M=$(CURDIR)/kmod W=1 modules

test-modules:
	+$(KMAKE) M=$(CURDIR)/tests/kmod W=1 modules

deps:
	scripts/install-deps

# Room for check's builds (a clean clone's build/ ends near 2.2 GB, check-kernels' outputs of
# nine kernels near 3 GB) and its guests' work directories and results disks (kmemtrace-vm,
# two at a time, near 350 MB each), said at the start rather than in a compiler or a guest
# half-way through.
.PHONY: check-space
check-space:
	@scripts/need-space 3072 $(BUILD) "make check (its builds and the guests' results)"
	@scripts/need-space 1024 "$${TMPDIR:-/tmp}" "make check's guests (kmemtrace-vm's work directories)"

# The tests start python3 hundreds of times. A version manager's shim first on PATH (pyenv's)
# takes 0.6 s a start where Debian's /usr/bin/python3 (install-deps installs it) takes 0.06 s, so
# the targets that run tests put a directory holding only a link to it first on PATH.
TEST_BIN := $(CURDIR)/build/test-bin
TEST_PATH = PATH="$(TEST_BIN):$$PATH"
.PHONY: test-bin
test-bin:
	@mkdir -p $(TEST_BIN) && if [ -x /usr/bin/python3 ]; then ln -sfn /usr/bin/python3 $(TEST_BIN)/python3; fi

# The README's test command: installs what it needs, builds everything (also under
# ASan/UBSan, and the merge read ahead on a thread under TSan: tests/host/57-tsan.t), then runs
# every test through one prove so CI sees one summary: the whole guest suite on the default
# kernel and, through tests/guest/matrix-tests, one smoke boot (load, drain, the oracle's report,
# dmesg clean) on every other kernel and arch of the matrix; check-kernels runs the whole suite on
# each. Two at a time: a guest keeps one core busy and the machine has two. KMT_QUICK: the
# stress loops of 11-cycles.t and 55-filters.t run 8 rounds instead of 20 and 40, and
# 02-dmesg-check.t leaves out its instruction-counted boot (check-kernels runs them whole), to
# keep make check within 12 minutes on an idle 2-core machine.
# Longest first, so that both slots finish together: the W=1 builds of every kernel and the
# packages (60-packaging.t, 85 s: last among the host tests it ran alone for a minute at the
# end), the guests, then the other host tests, then the unit tests of a second or less.
# The globs are the shell's, expanded when prove starts, after the builds made the tests.
CHECK_FIRST := tests/host/05-checkpatch.t tests/host/60-packaging.t
check: check-space deps test-bin
	$(MAKE) $(KMT_JOBS) all test-modules unit-tests
	$(MAKE) $(KMT_JOBS) SAN=1 tools unit-tests
	$(MAKE) $(KMT_JOBS) SAN=thread build/tsan/tests/test_merge.t build/tsan/kmemtrace-report
	tests/guest/matrix-tests >$(BUILD)/matrix-tests.list
	$(TEST_PATH) KMT_QUICK=1 prove -j2 --exec '' --timer $(CHECK_FIRST) tests/guest/*.t \
		$$(cat $(BUILD)/matrix-tests.list) \
		$$(ls tests/host/*.t | grep -vxF $(foreach t,$(CHECK_FIRST),-e $(t))) \
		build/tests/*.t build/san/tests/*.t

# Trace a small workload in the qemu guest and print the report. It installs only what it needs
# (install-deps --demo: no kernel matrix, no test tools); KVER= another kernel needs make deps.
# ARCH=arm64 (s390x, i386): that arch's guest (kmemtrace-vm --arch builds the module and the
# tools for it), reported here on the host. ARCH is kbuild's name too: the host's own build is
# made with it emptied.
DEMO_ARCH = $(if $(filter command line,$(origin ARCH)),$(filter-out amd64 x86_64,$(ARCH)))
demo:
	scripts/install-deps --demo $(if $(DEMO_ARCH),--arch $(DEMO_ARCH))
	$(MAKE) $(KMT_JOBS) $(if $(DEMO_ARCH),tools ARCH=,all)
	scripts/kmemtrace-vm $(VM_KVER) $(if $(DEMO_ARCH),--arch $(DEMO_ARCH)) -o out/demo -- \
		sh -c 'find / -xdev >/dev/null; ls -lR /sys/kernel/slab >/dev/null 2>&1'
	$(BUILD)/kmemtrace-report out/demo

# The README's two commands on a fresh Debian 12 root (debootstrap) with a clean clone of HEAD,
# each timed: catches an install step a developer's machine hides. Not part of check.
# CHECK_FRESH=--demo-only runs make demo alone.
check-fresh:
	scripts/check-fresh $(CHECK_FRESH)

# The whole guest suite again on the PREEMPT_RT kernel (check itself runs 51-rt.t there).
check-rt: deps test-bin
	$(MAKE) all test-modules
	$(TEST_PATH) KMT_FLAVOUR=rt-amd64 prove --exec '' --timer tests/guest/*.t

# The whole guest suite once per kernel of the matrix (scripts/kernels.sh: 6.1, 6.12 and 7.3, each
# amd64 and rt-amd64, and 6.1 for arm64, s390x and i386): KMT_KVER makes every kmemtrace-vm run
# boot that kernel (60-dkms and 51-rt skip another arch's). Every kernel runs
# even when one fails; the summary names those that failed or are missing. Two guests at a
# time, as in check.
# CHECK_KERNELS="6.12 7.3.4+deb13-rt-amd64" (series or releases) runs only those.
CHECK_KERNELS ?=
check-kernels: check-space deps test-bin
	$(MAKE) tools
	@scripts/kernel-version --matrix >$(BUILD)/check-kernels.matrix
	@failed=; \
	while read -r series flavour source kver; do \
		if [ -n "$(CHECK_KERNELS)" ]; then \
			case " $(CHECK_KERNELS) " in *" $$series "* | *" $$kver "*) ;; *) continue ;; esac; \
		fi; \
		if [ "$$kver" = - ]; then \
			echo "check-kernels: no $$series $$flavour kernel installed (scripts/install-deps)"; \
			failed="$$failed $$series-$$flavour(missing)"; continue; \
		fi; \
		echo "check-kernels: === $$kver ($$series $$flavour, from $$source)"; \
		$(TEST_PATH) KMT_KVER=$$kver KMT_FLAVOUR=$$flavour prove -j2 --exec '' --timer \
			tests/guest/*.t </dev/null || \
			failed="$$failed $$kver"; \
	done <$(BUILD)/check-kernels.matrix; \
	echo "check-kernels: the guest time bounds closest to the runs seen on this machine:"; \
	tests/guest/time-bounds || echo "check-kernels: (a warning: such a bound may fail on a busier machine)"; \
	if [ -n "$$failed" ]; then echo "check-kernels: FAILED:$$failed"; exit 1; fi; \
	echo "check-kernels: all kernels passed"

# Not part of check: benchmarks (BENCHMARKS.md) and long fault/load runs.
bench: deps test-bin
	$(MAKE) all test-modules unit-tests
	$(TEST_PATH) scripts/bench

stress: deps test-bin
	$(MAKE) all test-modules unit-tests
	$(TEST_PATH) prove --exec '' --timer tests/stress/*.t

# kmemtraced --max-size for half an hour of guest time at a steady load (KMT_SOAK_SECONDS,
# KMT_SOAK_RATE, KMT_SOAK_MAX, KMT_SOAK_SEGMENT): disk bounded, memory flat, nothing lost, the
# kept window's report exact. Its figures are in BENCHMARKS.md.
soak: deps test-bin
	$(MAKE) all test-modules unit-tests
	$(TEST_PATH) prove --exec '' --timer -v tests/soak/*.t
	scripts/bench-render --update build/bench-soak

# --- Installing (README.md, "Installing"); PREFIX and DESTDIR as usual --------------------------
# install         install-tools and install-module
# install-tools   the tools, their man pages (with VERSION in .TH) and bash completion
# install-module  kmemtrace.ko for $(KVER) in /lib/modules/KVER/extra, then depmod (no DESTDIR)
# install-dkms    the module's sources and dkms.conf in $(DKMSDIR), for dkms (kmemtrace-dkms)
# uninstall       removes what they installed: the module from every kernel's extra/, and the
#                 DKMS tree once dkms no longer holds it (dkms remove kmemtrace/VERSION --all)
# kmemtrace-vm stays in the source tree (it builds the module for its guest): not installed.
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DKMSDIR     ?= /usr/src/kmemtrace-$(KMT_VERSION)
KMT_TOOLNAMES = $(notdir $(TOOLS))
KMT_DKMS_FILES = VERSION abi/kmemtrace_abi.h kmod/Kbuild kmod/kmt-slab-layout.sh \
	$(filter-out %.mod.c kmod/kmt_slab_layout.h,$(wildcard kmod/*.c kmod/*.h))
.PHONY: install-tools install-module install-dkms uninstall deb deb-cross check-packaging

install: install-tools install-module

# One completion file for all tools: the first tool's name, the others link to it.
install-tools: tools
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(BASHCOMPDIR)
	install -m 0755 $(TOOLS) $(DESTDIR)$(BINDIR)
	for t in $(KMT_TOOLNAMES); do for m in Documentation/$$t.[18]; do [ -e "$$m" ] || continue; \
		d=$(DESTDIR)$(MANDIR)/man$${m##*.}/$$t.$${m##*.}; \
		sed '/^\.TH /s/"kmemtrace [^"]*"/"kmemtrace $(KMT_VERSION)"/' "$$m" >"$$d"; \
		chmod 0644 "$$d"; done; done
	set -- $(KMT_TOOLNAMES); first=$$1; shift; \
	install -m 0644 scripts/kmemtrace.bash-completion $(DESTDIR)$(BASHCOMPDIR)/$$first; \
	for t; do ln -sfn $$first $(DESTDIR)$(BASHCOMPDIR)/$$t; done

install-module: module
	+$(KMAKE) M=$(CURDIR)/kmod INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=extra modules_install
	if [ -z "$(DESTDIR)" ] && [ -d /lib/modules/$(KVER)/kernel ]; then depmod -a $(KVER); fi

install-dkms:
	install -d $(DESTDIR)$(DKMSDIR)/abi $(DESTDIR)$(DKMSDIR)/kmod
	for f in $(KMT_DKMS_FILES); do install -m 0644 $$f $(DESTDIR)$(DKMSDIR)/$$f; done
	sed 's/#MODULE_VERSION#/$(KMT_VERSION)/' dkms.conf >$(DESTDIR)$(DKMSDIR)/dkms.conf

uninstall:
	@if [ -z "$(DESTDIR)" ] && [ -d /var/lib/dkms/kmemtrace/$(KMT_VERSION) ]; then \
		echo "uninstall: dkms still builds kmemtrace $(KMT_VERSION): run" \
			"dkms remove kmemtrace/$(KMT_VERSION) --all first" >&2; exit 1; fi
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(KMT_TOOLNAMES)) \
		$(addprefix $(DESTDIR)$(BASHCOMPDIR)/,$(KMT_TOOLNAMES)) \
		$(foreach t,$(KMT_TOOLNAMES),$(DESTDIR)$(MANDIR)/man1/$(t).1 $(DESTDIR)$(MANDIR)/man8/$(t).8)
	rm -rf $(DESTDIR)$(DKMSDIR)
	for f in $(DESTDIR)/lib/modules/*/extra/kmemtrace.ko*; do \
		[ -e "$$f" ] || continue; rm -f "$$f"; rmdir "$${f%/*}" 2>/dev/null; \
		k=$${f#$(DESTDIR)/lib/modules/}; \
		if [ -z "$(DESTDIR)" ]; then depmod -a "$${k%%/*}"; fi; done

# Debian packages (debian/): dpkg-buildpackage -us -uc in a copy of the source tree, of the files
# git knows (committed or not; all but build/ and out/ outside git), in $(DEB_OUT)/kmemtrace-VERSION.
# The .debs, .dsc and .changes land in $(DEB_OUT). DEB_BUILD_OPTIONS=nocheck skips the unit tests;
# DEB_FLAGS adds options to dpkg-buildpackage (-b: no source package).
DEB_OUT ?= $(BUILD)/deb
# $(call deb_tree,DIR): DIR emptied, then the copy of the tree in DIR/kmemtrace-VERSION.
define deb_tree
rm -rf $(1)
mkdir -p $(1)/kmemtrace-$(KMT_VERSION)
{ git ls-files -z -co --exclude-standard 2>/dev/null || find . \( -path ./build -o -path ./out \
	-o -path ./.git \) -prune -o ! -type d -print0; } | grep -zv '__pycache__/' | \
	tar --null -T - --ignore-failed-read -cf - 2>/dev/null | \
	tar -xf - -C $(1)/kmemtrace-$(KMT_VERSION)
endef
deb:
	$(call deb_tree,$(DEB_OUT))
	cd $(DEB_OUT)/kmemtrace-$(KMT_VERSION) && dpkg-buildpackage -us -uc $(DEB_FLAGS)

# kmemtrace-tools for another architecture (DEB_ARCH: arm64, or any Debian has): cross-built
# by scripts/deb-cross, dpkg-buildpackage --host-arch $(DEB_ARCH) -Pcross -B in a Debian 12
# root of its own ($(CROSS_ROOT), made on first use: about 2 min), never with a foreign
# architecture in the host's dpkg. The .deb, .changes and .buildinfo land in $(DEB_CROSS_OUT).
# Needs root (through sudo otherwise).
DEB_ARCH ?= arm64
DEB_CROSS_OUT ?= $(BUILD)/deb-$(DEB_ARCH)
CROSS_ROOT ?= $(or $(KMT_CROSS_ROOT),/var/lib/kmemtrace/cross-root)
deb-cross:
	$(call deb_tree,$(DEB_CROSS_OUT))
	KMT_CROSS_ROOT='$(CROSS_ROOT)' scripts/deb-cross --arch $(DEB_ARCH) \
		$(DEB_CROSS_OUT)/kmemtrace-$(KMT_VERSION)

# The packaging in full (make check runs the faster part of the same tests): the package built
# with its unit tests, lintian, kmemtrace-tools installed and used, DKMS for every installed
# kernel of the matrix (7.3 in the trixie root), the DKMS-built module loaded by modprobe
# in the guest, and kmemtrace-tools cross-built for arm64 (make deb-cross, from 60-packaging.t).
check-packaging: deps test-bin
	$(MAKE) tools
	$(TEST_PATH) KMT_PACKAGING_FULL=1 prove --exec '' --timer tests/host/60-packaging.t tests/guest/60-dkms.t

clean:
	rm -rf build out
	-+$(KMAKE) M=$(CURDIR)/kmod clean
	-+$(KMAKE) M=$(CURDIR)/tests/kmod clean
