# SPDX-License-Identifier: GPL-2.0-only
# tests/unit/lib.mk - the trace generator (library and CLI) and the format's unit tests.

GEN_OBJS := $(OBJDIR)/tests/unit/gen.o
# What the tests share besides the generator (tests/unit/testlib.h).
TESTLIB_OBJS := $(OBJDIR)/tests/unit/testlib.o
KMT_GEN := $(BUILD)/kmemtrace-gen
KMT_ROTATE := $(BUILD)/kmemtrace-rotate

# Test binaries: tests/unit/test_NAME.c -> $(BUILD)/tests/test_NAME.t, linked with the generator
# and the test library.
KMT_UNIT_SRCS := $(wildcard tests/unit/test_*.c)
KMT_UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%.t,$(KMT_UNIT_SRCS))
# The host tests' LD_PRELOAD shim that keeps kmemtraced's threads off their CPUs: built
# without the sanitizers, which a preloaded library need not carry.
KMT_NOBIND := $(BUILD)/tests/nobind.so
UNIT_TESTS += $(KMT_UNIT_TESTS) $(KMT_GEN) $(KMT_ROTATE) $(KMT_NOBIND)

$(OBJDIR)/tests/unit/%.o: KMT_CFLAGS += -Itests -Itests/unit

$(KMT_GEN): $(OBJDIR)/tests/unit/kmemtrace-gen.o $(GEN_OBJS) $(LIBKMT)
	@mkdir -p $(dir $@)
	$(CC) $(KMT_LDFLAGS) -o $@ $^

$(KMT_ROTATE): $(OBJDIR)/tests/unit/kmemtrace-rotate.o $(LIBKMT)
	@mkdir -p $(dir $@)
	$(CC) $(KMT_LDFLAGS) -o $@ $^

# The library again at the end: report/*.o added to some tests' prerequisites use it too.
$(KMT_UNIT_TESTS): $(BUILD)/tests/%.t: $(OBJDIR)/tests/unit/%.o $(TESTLIB_OBJS) $(GEN_OBJS) \
		$(LIBKMT)
	@mkdir -p $(dir $@)
	$(CC) $(KMT_LDFLAGS) -o $@ $^ $(LIBKMT)

$(KMT_NOBIND): tests/unit/nobind.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror $(CFLAGS) -shared -fPIC -o $@ $<
