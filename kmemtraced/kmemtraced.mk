# SPDX-License-Identifier: GPL-2.0-only
# kmemtraced/kmemtraced.mk - builds the daemon that drains kmemtrace.ko's buffers.

KMTD_SRCS := kmemtraced/kmemtraced.c kmemtraced/env.c kmemtraced/meta.c kmemtraced/drain.c \
	kmemtraced/formats.c kmemtraced/filter.c kmemtraced/rotate.c kmemtraced/kmtd_util.c
KMTD_OBJS := $(KMTD_SRCS:%.c=$(OBJDIR)/%.o)

$(BUILD)/kmemtraced: $(KMTD_OBJS) $(LIBKMT)
	@mkdir -p $(dir $@)
	$(CC) $(KMT_LDFLAGS) -o $@ $(KMTD_OBJS) $(LIBKMT) -pthread

TOOLS += $(BUILD)/kmemtraced
