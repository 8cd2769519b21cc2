# SPDX-License-Identifier: GPL-2.0-only
# tests/unit/lib.mk - the trace generator (library and CLI) and the format's unit tests.

GEN_OBJS := $(OBJDIR)/tests/unit/gen.o
KMT_GEN := $(BUILD)/kmemtrace-gen

# Test binaries: tests/unit/test_NAME.c -> $(BUILD)/tests/test_NAME.t, linked with the generator.
KMT_UNIT_SRCS := $(wildcard tests/unit/test_*.c)
KMT_UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%.t,$(KMT_UNIT_SRCS))
UNIT_TESTS += $(KMT_UNIT_TESTS) $(KMT_GEN)

$(OBJDIR)/tests/unit/%.o: KMT_CFLAGS += -Itests -Itests/unit

$(KMT_GEN): $(OBJDIR)/tests/unit/kmemtrace-gen.o $(GEN_OBJS) $(LIBKMT)
	@mkdir -p $(dir $@)
	$(CC) $(KMT_LDFLAGS) -o $@ $^

# The library again at the end: report/*.o added to some tests' prerequisites use it too.
$(KMT_UNIT_TESTS): $(BUILD)/tests/%.t: $(OBJDIR)/tests/unit/%.o $(GEN_OBJS) $(LIBKMT)
	@mkdir -p $(dir $@)
	$(CC) $(KMT_LDFLAGS) -o $@ $^ $(LIBKMT)
