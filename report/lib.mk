# SPDX-License-Identifier: GPL-2.0-only
# report/lib.mk - libkmemtrace.a, the trace reader/writer every tool and test links against.

LIBKMT_SRCS := report/lib/kmt_reader.c report/lib/kmt_map.c report/lib/kmt_merge.c report/lib/kmt_ahead.c \
	report/lib/kmt_writer.c report/lib/kmt_stacks.c report/lib/kmt_follow.c report/lib/kmt_ckpt.c
LIBKMT_OBJS := $(LIBKMT_SRCS:%.c=$(OBJDIR)/%.o)

$(LIBKMT): $(LIBKMT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^
