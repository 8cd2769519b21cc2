# SPDX-License-Identifier: GPL-2.0-only
# tests/unit/report.mk - unit tests of kmemtrace-report's analysis and symbolizer
# (tests/unit/test_report*.c -> $(BUILD)/tests/test_report*.t).

REPORT_UNIT_SRCS := $(wildcard tests/unit/test_report*.c)
REPORT_UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%.t,$(REPORT_UNIT_SRCS))

$(OBJDIR)/tests/unit/test_report%.o: KMT_CFLAGS += -Itests -Itests/unit

# tests/unit/lib.mk links every test_*.c with the generator, the test library and the reader
# library; these also need the analysis objects and test_analyse() (tests/unit/testlib_report.c).
# Should lib.mk stop listing them, link them here.
TESTLIB_REPORT_OBJS := $(OBJDIR)/tests/unit/testlib_report.o
ifeq ($(filter $(REPORT_UNIT_TESTS),$(KMT_UNIT_TESTS)),)
UNIT_TESTS += $(REPORT_UNIT_TESTS)
$(REPORT_UNIT_TESTS): $(BUILD)/tests/%.t: $(OBJDIR)/tests/unit/%.o $(REPORT_CORE_OBJS) \
		$(TESTLIB_REPORT_OBJS) $(TESTLIB_OBJS) $(OBJDIR)/tests/unit/gen.o $(LIBKMT)
	@mkdir -p $(dir $@)
	$(CC) $(KMT_LDFLAGS) -o $@ $^
else
$(REPORT_UNIT_TESTS): $(REPORT_CORE_OBJS) $(TESTLIB_REPORT_OBJS)
endif

# The GFP names' test reads the kernels' tracepoint formats under tests/gfp.
$(OBJDIR)/tests/unit/test_report_gfp.o: KMT_CFLAGS += -DKMT_SRCDIR='"$(CURDIR)"'
