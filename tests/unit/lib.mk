# SPDX-License-Identifier: GPL-2.0-only
# tests/unit/lib.mk - the trace generator (library and CLI) and the format's unit tests.

GEN_OBJS := $(OBJDIR)/tests/unit/gen.o
# What the tests share besides the generator (tests/unit/testlib.h).
TESTLIB_OBJS := $(OBJDIR)/tests/unit/testlib.o
KMT_GEN := $(BUILD)/kmemtrace-gen
KMT_ROTATE := $(BUILD)/kmemtrace-rotate

# Test binaries: tests/unit/test_NAME.c -> $(BUILD)/tests/test_NAME.t, linked with the generator
# and the test library.
KMT_UNIT_SRCS := $(filter-out tests/unit/test_map.c,$(wildcard tests/unit/test_*.c))
KMT_UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%.t,$(KMT_UNIT_SRCS))
# test_map.t reads through a reader of its own that maps windows of 16 KiB (four pages, so that
# one can shrink under its mapping) and checks 4 KiB ahead: a trace of a few hundred KiB crosses
# a window every 256 records.
KMT_MAP_TEST := $(BUILD)/tests/test_map.t
KMT_READER_SMALL := $(OBJDIR)/tests/unit/kmt_reader_small.o
# The host tests' LD_PRELOAD shim that keeps kmemtraced's threads off their CPUs: built
# without the sanitizers, which a preloaded library need not carry.
KMT_NOBIND := $(BUILD)/tests/nobind.so
UNIT_TESTS += $(KMT_UNIT_TESTS) $(KMT_MAP_TEST) $(KMT_GEN) $(KMT_ROTATE) $(KMT_NOBIND)

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

$(KMT_READER_SMALL): report/lib/kmt_reader.c
	@mkdir -p $(dir $@)
	$(CC) $(KMT_CFLAGS) -DKMT_MAP_WINDOW=16384 -DKMT_READ_BUF=4096 -MMD -MP -c $< -o $@

# The small reader first: the library's own kmt_reader.o is then never taken from it.
$(KMT_MAP_TEST): $(OBJDIR)/tests/unit/test_map.o $(KMT_READER_SMALL) $(TESTLIB_OBJS) $(GEN_OBJS) \
		$(LIBKMT)
	@mkdir -p $(dir $@)
	$(CC) $(KMT_LDFLAGS) -o $@ $^

$(KMT_NOBIND): tests/unit/nobind.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror $(CFLAGS) -shared -fPIC -o $@ $<
