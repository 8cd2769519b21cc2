# SPDX-License-Identifier: GPL-2.0-only
# report/report.mk - kmemtrace-report, the offline analysis, with its libdw and (optional) libbfd
# file:line resolvers.

KMT_REPORT := $(BUILD)/kmemtrace-report
TOOLS += $(KMT_REPORT)

# The analysis and symbolizer objects the unit tests link too (no libdw/libbfd in these).
REPORT_CORE_OBJS := $(OBJDIR)/report/report_core.o $(OBJDIR)/report/report_life.o $(OBJDIR)/report/sym_kallsyms.o \
	$(OBJDIR)/report/sym_path.o \
	$(OBJDIR)/report/report_meta.o $(OBJDIR)/report/report_slab.o \
	$(OBJDIR)/report/out_table.o
# What kmemtrace-report and kmemtrace-top share beyond the core: output, views, file:line.
REPORT_VIEW_OBJS := $(REPORT_CORE_OBJS) $(OBJDIR)/report/report_out.o \
	$(OBJDIR)/report/symtab.o $(OBJDIR)/report/report_views.o $(OBJDIR)/report/view_main.o \
	$(OBJDIR)/report/view_stacks.o $(OBJDIR)/report/view_life.o $(OBJDIR)/report/view_pages.o \
	$(OBJDIR)/report/out_html.o \
	$(OBJDIR)/report/view_interval.o $(OBJDIR)/report/sym_srcline.o \
	$(OBJDIR)/report/sym_dw.o
REPORT_OBJS := $(OBJDIR)/report/kmemtrace-report.o $(REPORT_VIEW_OBJS)

# libbfd (binutils-dev) is optional: without <bfd.h> the build leaves --resolver=bfd out.
HAVE_LIBBFD := $(shell printf '\#define PACKAGE "x"\n\#include <bfd.h>\n' | \
	$(CC) -E -x c - >/dev/null 2>&1 && echo 1)
REPORT_LIBS := -ldw -lelf
ifeq ($(HAVE_LIBBFD),1)
REPORT_VIEW_OBJS += $(OBJDIR)/report/sym_bfd.o
REPORT_OBJS += $(OBJDIR)/report/sym_bfd.o
$(REPORT_VIEW_OBJS) $(OBJDIR)/report/kmemtrace-report.o: KMT_CFLAGS += -DHAVE_LIBBFD
REPORT_LIBS += -lbfd
endif

$(KMT_REPORT): $(REPORT_OBJS) $(LIBKMT)
	@mkdir -p $(dir $@)
	$(CC) $(KMT_LDFLAGS) -o $@ $^ $(REPORT_LIBS)

# kmemtrace-top: the live screen over the same views.
KMT_TOP := $(BUILD)/kmemtrace-top
TOOLS += $(KMT_TOP)
TOP_OBJS := $(OBJDIR)/report/kmemtrace-top.o $(REPORT_VIEW_OBJS)

$(KMT_TOP): $(TOP_OBJS) $(LIBKMT)
	@mkdir -p $(dir $@)
	$(CC) $(KMT_LDFLAGS) -o $@ $^ $(REPORT_LIBS)
