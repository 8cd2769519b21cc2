# SPDX-License-Identifier: GPL-2.0-only
# Makefile - builds kmemtrace (module, daemon, report tools), runs its tests, installs it.
#
# Userspace is built non-recursively into $(BUILD); each directory adds its programs in
# *.mk fragments. The module goes through Kbuild in kmod/ for the kernel in $(KDIR).

PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man

# The running kernel when its headers exist, else the newest Debian kernel with headers
# (on a build host whose own kernel cannot load modules). See scripts/kernel-version.
KVER ?= $(shell scripts/kernel-version)
KDIR ?= /lib/modules/$(KVER)/build

SAN ?= 0
ifeq ($(SAN),1)
BUILD ?= build/san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
BUILD ?= build
SAN_FLAGS :=
endif

CC      ?= cc
AR      ?= ar
CFLAGS  ?= -O2 -g
KMT_CFLAGS := -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Wall -Wextra -Werror \
	-Wshadow -Wformat=2 -Wvla -Iabi -Ireport/lib $(SAN_FLAGS) $(CFLAGS)
KMT_LDFLAGS := $(SAN_FLAGS) $(LDFLAGS)
OBJDIR := $(BUILD)/obj

# Fragments append to these. LIBKMT is the one reader library (report/lib.mk builds it);
# it is defined here so that fragments read before report/lib.mk can link it.
TOOLS :=
UNIT_TESTS :=
LIBKMT := $(BUILD)/libkmemtrace.a

.PHONY: all tools module test-modules unit-tests check check-rt demo install clean deps bench stress fuzz
all: tools module

# Every *.mk in these directories adds programs (TOOLS) or unit tests (UNIT_TESTS);
# tests/fuzz/*.mk also defines the fuzz target.
include $(sort $(wildcard report/*.mk kmemtraced/*.mk tests/*/*.mk))

tools: $(TOOLS)
unit-tests: $(UNIT_TESTS)

$(OBJDIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(KMT_CFLAGS) -MMD -MP -c $< -o $@

-include $(shell find $(OBJDIR) -name '*.d' 2>/dev/null)

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod W=1 modules

test-modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod W=1 modules

deps:
	scripts/install-deps

# The README's test command: installs what it needs, builds everything (also under
# ASan/UBSan), then runs every test through one prove so CI sees one summary.
# The globs are the shell's, expanded when prove starts, after the builds made the tests.
check: deps
	$(MAKE) all test-modules unit-tests
	$(MAKE) SAN=1 tools unit-tests
	prove --exec '' --timer build/tests/*.t build/san/tests/*.t tests/host/*.t tests/guest/*.t

# Trace a small workload in the qemu guest and print the report.
demo: deps
	$(MAKE) all
	scripts/kmemtrace-vm -o out/demo -- sh -c 'find / -xdev >/dev/null; ls -lR /sys/kernel/slab >/dev/null 2>&1'
	$(BUILD)/kmemtrace-report out/demo

# The whole guest suite again on the PREEMPT_RT kernel (check itself runs 51-rt.t there).
check-rt: deps
	$(MAKE) all test-modules
	KMT_FLAVOUR=rt-amd64 prove --exec '' --timer tests/guest/*.t

# Not part of check: benchmarks (BENCHMARKS.md) and long fault/load runs.
bench: deps
	$(MAKE) all test-modules unit-tests
	scripts/bench

stress: deps
	$(MAKE) all test-modules unit-tests
	prove --exec '' --timer tests/stress/*.t

# kmemtrace-vm stays in the source tree (it builds the module for its guest): not installed.
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(TOOLS) $(DESTDIR)$(BINDIR)
	$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=extra modules_install
	for t in $(notdir $(TOOLS)); do for m in Documentation/$$t.[18]; do \
		if [ -e "$$m" ]; then install -m 0644 "$$m" $(DESTDIR)$(MANDIR)/man$${m##*.}/; fi; done; done

clean:
	rm -rf build out
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod clean
