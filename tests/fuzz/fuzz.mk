# SPDX-License-Identifier: GPL-2.0-only
# tests/fuzz/fuzz.mk - fuzzing of every trace, symbol and metadata parser.
#
# make fuzz                    builds the libFuzzer targets with clang into build/fuzz and runs
#                              each for FUZZ_SECONDS (default 60), seeded from tests/fuzz/corpus;
#                              fails when one finds a crash, leak, timeout or broken invariant
#                              and leaves the reproducer in build/fuzz/artifacts.
# make fuzz FUZZ_TARGETS=syms FUZZ_SECONDS=300
# make fuzz FUZZ_RUNS=10000000 each target for ten million executions, however long it takes
# make fuzz-seeds              rewrites tests/fuzz/corpus with tests/fuzz/mkseeds.
# make check                   replays corpus/ and regressions/ through the same targets,
#                              built with $(CC), as $(BUILD)/tests/fuzz_replay_TARGET.t.
# Documentation/fuzzing.md says more, and what the last runs found.

FUZZ_ALL_TARGETS := reader report syms check fold
FUZZ_TARGETS ?= $(FUZZ_ALL_TARGETS)
# Empty: run-fuzz's defaults (60 s each, or FUZZ_RUNS executions with no time limit).
FUZZ_SECONDS ?=
FUZZ_RUNS ?=

# The report's analysis, output and symbolizer objects (kmemtrace-report.c holds only its
# command line; its pipeline, report_run.o, comes along unused).
# The analysis is built again with tiny tables, so that inputs of a few hundred records
# already grow and shrink the object tables and wrap the window of recent frees: all its files
# (REPORT_ANALYSIS_OBJS, report/report.mk), as the table's inline code in the header they share
# reads the sizes too, and a file built with others would disagree with the rest.
FUZZ_SMALL_TABLES := -DOBJ_MIN_BITS=3 -DFREED_BITS=3
# The checkpoint's fold (report/lib/kmt_ckpt.c) remembers freed pairs for the report's window
# of frees: it is built small with it, and linked before the library, whose copy it replaces.
FUZZ_SMALL_OBJS := $(REPORT_ANALYSIS_OBJS:$(OBJDIR)/report/core/%.o=$(OBJDIR)/tests/fuzz/%_small.o) \
	$(OBJDIR)/tests/fuzz/kmt_ckpt_small.o
FUZZ_REPORT_OBJS := $(filter-out $(OBJDIR)/report/kmemtrace-report.o $(REPORT_ANALYSIS_OBJS),\
	$(REPORT_OBJS)) $(FUZZ_SMALL_OBJS)

# ---- replay in make check (any compiler, no libFuzzer) --------------------------------------

FUZZ_REPLAY_TESTS := $(FUZZ_ALL_TARGETS:%=$(BUILD)/tests/fuzz_replay_%.t)
UNIT_TESTS += $(FUZZ_REPLAY_TESTS)

FUZZ_COMMON_OBJS := $(OBJDIR)/tests/fuzz/fuzz_targets.o $(OBJDIR)/tests/fuzz/json_check.o \
	$(OBJDIR)/tests/fuzz/kmemtrace_check_main.o

$(OBJDIR)/tests/fuzz/%.o: KMT_CFLAGS += -Itests -Itests/fuzz

$(filter-out %/kmt_ckpt_small.o,$(FUZZ_SMALL_OBJS)): $(OBJDIR)/tests/fuzz/%_small.o: report/core/%.c
	@mkdir -p $(dir $@)
	$(CC) $(KMT_CFLAGS) $(FUZZ_SMALL_TABLES) -MMD -MP -c $< -o $@

$(OBJDIR)/tests/fuzz/kmt_ckpt_small.o: report/lib/kmt_ckpt.c
	@mkdir -p $(dir $@)
	$(CC) $(KMT_CFLAGS) $(FUZZ_SMALL_TABLES) -MMD -MP -c $< -o $@

# kmemtrace_check's main() becomes a function the check target calls.
$(OBJDIR)/tests/fuzz/kmemtrace_check_main.o: report/kmemtrace_check.c
	@mkdir -p $(dir $@)
	$(CC) $(KMT_CFLAGS) -Dmain=kmt_check_main -MMD -MP -c $< -o $@

# Static patterns: a plain pattern rule would also offer to make replay_X.d (from
# replay_X.d.o), and the .d files are included, so make would try to.
FUZZ_REPLAY_OBJS := $(FUZZ_ALL_TARGETS:%=$(OBJDIR)/tests/fuzz/replay_%.o)
$(FUZZ_REPLAY_OBJS): $(OBJDIR)/tests/fuzz/replay_%.o: tests/fuzz/replay.c
	@mkdir -p $(dir $@)
	$(CC) $(KMT_CFLAGS) -DREPLAY_TARGET='"$*"' -DFUZZ_SRCDIR='"$(CURDIR)/tests/fuzz"' \
		-MMD -MP -c $< -o $@

$(FUZZ_REPLAY_TESTS): $(BUILD)/tests/fuzz_replay_%.t: $(OBJDIR)/tests/fuzz/replay_%.o \
		$(FUZZ_COMMON_OBJS) $(FUZZ_REPORT_OBJS) $(LIBKMT)
	@mkdir -p $(dir $@)
	$(CC) $(KMT_LDFLAGS) -o $@ $^ $(REPORT_LIBS)

# ---- seeds ---------------------------------------------------------------------------------

FUZZ_MKSEEDS := $(BUILD)/tests/fuzz/mkseeds

$(FUZZ_MKSEEDS): $(OBJDIR)/tests/fuzz/mkseeds.o $(OBJDIR)/tests/unit/gen.o $(LIBKMT)
	@mkdir -p $(dir $@)
	$(CC) $(KMT_LDFLAGS) -o $@ $^

$(OBJDIR)/tests/fuzz/mkseeds.o: KMT_CFLAGS += -Itests/unit

# Real traces to take seeds from: trace directories (with cpu0.out) under out/, whose
# seeds are named guest-DIRNAME (make-seeds keeps guest-* seeds when their trace is gone).
FUZZ_SEED_DIRS ?= $(foreach d,$(patsubst %/cpu0.out,%,$(wildcard out/*/cpu0.out)),\
	guest-$(notdir $(d))=$(d))

.PHONY: fuzz-seeds fuzz-build
fuzz-seeds: $(FUZZ_MKSEEDS) $(BUILD)/kmemtrace-gen
	tests/fuzz/make-seeds $(FUZZ_MKSEEDS) $(BUILD)/kmemtrace-gen $(FUZZ_SEED_DIRS)

# ---- libFuzzer (clang) -------------------------------------------------------------------------

FUZZ_CC ?= clang
FUZZ_OUT := build/fuzz
FUZZ_OBJDIR := $(FUZZ_OUT)/obj
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -Wall -Wextra -Werror -Wshadow \
	-Wvla -Iabi -Ireport/lib -Ireport -Itests -Itests/fuzz -g -O1 $(FUZZ_SAN) \
	-fsanitize=fuzzer-no-link
ifeq ($(HAVE_LIBBFD),1)
FUZZ_CFLAGS += -DHAVE_LIBBFD
endif

FUZZ_SRCS := $(LIBKMT_SRCS) $(patsubst $(OBJDIR)/%.o,%.c,$(filter-out $(PPROF_PB_OBJ),\
	$(filter $(OBJDIR)/report/%,$(FUZZ_REPORT_OBJS)))) $(REPORT_ANALYSIS_OBJS:$(OBJDIR)/%.o=%.c) \
	tests/fuzz/fuzz_targets.c tests/fuzz/json_check.c
# protoc-c's generated code comes as the normal build makes it: generated, not fuzzed.
FUZZ_OBJS := $(FUZZ_SRCS:%.c=$(FUZZ_OBJDIR)/%.o) $(FUZZ_OBJDIR)/kmemtrace_check_main.o \
	$(PPROF_PB_OBJ)
$(FUZZ_OBJDIR)/report/writers/out_pprof.o: FUZZ_CFLAGS += -I$(PPROF_GEN)
$(FUZZ_OBJDIR)/report/writers/out_pprof.o: $(PPROF_GEN)/pprof.pb-c.h
FUZZ_BINS := $(FUZZ_ALL_TARGETS:%=$(FUZZ_OUT)/fuzz_%)

$(FUZZ_OBJDIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(REPORT_ANALYSIS_OBJS:$(OBJDIR)/%=$(FUZZ_OBJDIR)/%) $(FUZZ_OBJDIR)/report/lib/kmt_ckpt.o: \
	FUZZ_CFLAGS += $(FUZZ_SMALL_TABLES)

# A 256-slot read buffer instead of 4096: inputs of a few KiB then refill it mid-record, and
# each open costs a small allocation instead of a fresh 256 KiB mapping from ASan (which
# took most of the reader target's time). Mapped windows (KMT_OPEN_MAP) of four pages, for
# inputs to cross them too.
$(FUZZ_OBJDIR)/report/lib/kmt_reader.o: FUZZ_CFLAGS += -DKMT_READ_BUF=4096 -DKMT_MAP_WINDOW=16384

# The JSON validator is the harness's oracle, not code under test: without coverage
# instrumentation it neither slows the runs nor steers the fuzzer toward JSON shapes.
$(FUZZ_OBJDIR)/tests/fuzz/json_check.o: tests/fuzz/json_check.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(filter-out -fsanitize=fuzzer-no-link,$(FUZZ_CFLAGS)) -MMD -MP -c $< -o $@

$(FUZZ_OBJDIR)/kmemtrace_check_main.o: report/kmemtrace_check.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Dmain=kmt_check_main -MMD -MP -c $< -o $@

FUZZ_MAIN_OBJS := $(FUZZ_ALL_TARGETS:%=$(FUZZ_OBJDIR)/fuzz_main_%.o)
$(FUZZ_MAIN_OBJS): $(FUZZ_OBJDIR)/fuzz_main_%.o: tests/fuzz/fuzz_main.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_TARGET=fuzz_$* -MMD -MP -c $< -o $@

$(FUZZ_BINS): $(FUZZ_OUT)/fuzz_%: $(FUZZ_OBJDIR)/fuzz_main_%.o $(FUZZ_OBJS)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(REPORT_LIBS)

-include $(shell find $(FUZZ_OBJDIR) -name '*.d' 2>/dev/null)

fuzz-build: $(FUZZ_BINS)

# One target at a time (the machine is shared); see tests/fuzz/run-fuzz for the options.
fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) tests/fuzz/run-fuzz $(FUZZ_OUT) $(FUZZ_TARGETS)
