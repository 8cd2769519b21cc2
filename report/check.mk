# SPDX-License-Identifier: GPL-2.0-only
# report/check.mk - kmemtrace_check, the per-file trace verifier.

# Also set in report/lib.mk; repeated because this fragment is read first.
KMT_CHECK := $(BUILD)/kmemtrace_check
TOOLS += $(KMT_CHECK)

$(KMT_CHECK): $(OBJDIR)/report/kmemtrace_check.o $(LIBKMT)
	@mkdir -p $(dir $@)
	$(CC) $(KMT_LDFLAGS) -o $@ $^
