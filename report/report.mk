# SPDX-License-Identifier: GPL-2.0-only
# report/report.mk - kmemtrace-report, the offline analysis, with its libdw and (optional) libbfd
# file:line resolvers.

KMT_REPORT := $(BUILD)/kmemtrace-report
TOOLS += $(KMT_REPORT)

# The rooms of report/ (Documentation/architecture.md): lib/ the trace format library
# (report/lib.mk), core/ the analysis, sym/ the symbolizers, views/ the tables, writers/ the
# output formats; the programs' mains at the top.
# The analysis proper: the files that share core/report_core_int.h, and with it the object
# table's sizes (tests/fuzz/fuzz.mk builds them all again with small tables).
REPORT_ANALYSIS_OBJS := $(addprefix $(OBJDIR)/report/core/,report_core.o rpt_errors.o \
	rpt_growth.o rpt_large.o rpt_map.o rpt_objects.o rpt_pages.o rpt_results.o rpt_samples.o \
	rpt_shards.o rpt_sites.o)
# The analysis and symbolizer objects the unit tests link too (no libdw/libbfd in these).
REPORT_CORE_OBJS := $(REPORT_ANALYSIS_OBJS) $(addprefix $(OBJDIR)/report/,core/report_gfp.o \
	core/report_life.o core/report_meta.o core/report_slab.o sym/sym_kallsyms.o sym/sym_path.o \
	views/view.o writers/out_common.o writers/out_text.o writers/out_csv.o \
	writers/out_json.o)
# What kmemtrace-report and kmemtrace-top share beyond the core: views, writers, file:line.
REPORT_VIEW_OBJS := $(REPORT_CORE_OBJS) $(addprefix $(OBJDIR)/report/,writers/report_out.o \
	writers/out_html.o views/symtab.o views/view_main.o views/view_stacks.o views/view_life.o \
	views/view_pages.o views/view_growth.o views/view_interval.o views/view_registry.o writers/out_interval.o \
	sym/sym_srcline.o sym/sym_dw.o)
# --pprof: its writer, and the messages protoc-c generates from report/writers/pprof.proto
# (protobuf-c-compiler) into the build tree.
PPROF_GEN := $(OBJDIR)/report/writers/gen
PPROF_PB_OBJ := $(OBJDIR)/report/writers/pprof.pb-c.o
REPORT_OBJS := $(addprefix $(OBJDIR)/report/,kmemtrace-report.o report_run.o \
	writers/out_pprof.o) $(PPROF_PB_OBJ) $(REPORT_VIEW_OBJS)

# libbfd (binutils-dev) is optional: without <bfd.h> the build leaves --resolver=bfd out.
# (-include, not a '#include' line: make 4.3 keeps the backslash of '\#' in $(shell), which
# made the probe a line the preprocessor ignores, so that it passed without <bfd.h>.)
# A cross build for a guest (TOOLS_SYSROOT) leaves it out: the arch's libbfd is not in its sysroot.
# The header alone is not enough: a cross compiler also finds the build machine's /usr/include/bfd.h
# (binutils-dev cannot be installed for two architectures), so the compiler must find libbfd.so
# for its own target too (-print-file-name prints a bare name when it does not). The pattern's
# "(" keeps make's parentheses balanced.
HAVE_LIBBFD := $(if $(TOOLS_SYSROOT),,$(shell $(CC) -E -DPACKAGE='"x"' -include bfd.h -x c /dev/null >/dev/null 2>&1 && \
	case "$$($(CC) -print-file-name=libbfd.so)" in (/*) echo 1 ;; esac))
REPORT_LIBS := -ldw -lelf -lprotobuf-c -lz $(KMT_STATIC_LIBS)
ifeq ($(HAVE_LIBBFD),1)
REPORT_VIEW_OBJS += $(OBJDIR)/report/sym/sym_bfd.o
REPORT_OBJS += $(OBJDIR)/report/sym/sym_bfd.o
$(REPORT_VIEW_OBJS) $(OBJDIR)/report/kmemtrace-report.o $(OBJDIR)/report/report_run.o: \
	KMT_CFLAGS += -DHAVE_LIBBFD
REPORT_LIBS += -lbfd
endif

# The generated file is not ours to make warning-free: it is built without our extra warnings.
$(PPROF_GEN)/pprof.pb-c.c $(PPROF_GEN)/pprof.pb-c.h: report/writers/pprof.proto
	@mkdir -p $(PPROF_GEN)
	protoc-c --c_out=$(PPROF_GEN) -Ireport/writers $<
$(PPROF_PB_OBJ): $(PPROF_GEN)/pprof.pb-c.c
	$(CC) $(filter-out -Wshadow -Wformat=2 -Wvla,$(KMT_CFLAGS)) -I$(PPROF_GEN) -MMD -MP -c $< -o $@
$(OBJDIR)/report/writers/out_pprof.o: $(PPROF_GEN)/pprof.pb-c.h
$(OBJDIR)/report/writers/out_pprof.o: KMT_CFLAGS += -I$(PPROF_GEN)

$(KMT_REPORT): $(REPORT_OBJS) $(LIBKMT)
	@mkdir -p $(dir $@)
	$(CC) $(KMT_LDFLAGS) -o $@ $^ $(REPORT_LIBS)

# kmemtrace-top: the live screen over the same views.
KMT_TOP := $(BUILD)/kmemtrace-top
TOOLS += $(KMT_TOP)
TOP_OBJS := $(addprefix $(OBJDIR)/report/,kmemtrace-top.o top_live.o) $(REPORT_VIEW_OBJS)

$(KMT_TOP): $(TOP_OBJS) $(LIBKMT)
	@mkdir -p $(dir $@)
	$(CC) $(KMT_LDFLAGS) -o $@ $^ $(REPORT_LIBS)
