/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report_gfp.h - GFP masks by the traced kernel's own names: the
 * __print_flags() table of its kmem tracepoints' print fmt, from the
 * trace's tracepoint_formats file, decoded as ftrace decodes it.
 */
#ifndef REPORT_GFP_H
#define REPORT_GFP_H

#include <stddef.h>
#include <stdint.h>

#define GFP_FORMATS_FILE	"tracepoint_formats"
/*
 * Room for any decoded mask: a table has at most GFP_TABLE_MAX entries,
 * names of at most GFP_NAME_MAX bytes between delimiters of at most
 * GFP_DELIM_MAX (the kernel's are 40-odd, 20-odd bytes and "|").
 */
#define GFP_NAME_MAX		63
#define GFP_DELIM_MAX		8
#define GFP_TABLE_MAX		128
#define GFP_NAMES_LEN		((GFP_NAME_MAX + GFP_DELIM_MAX) * GFP_TABLE_MAX + 32)

struct gfp_names;

/*
 * Parses TEXT (LEN bytes, the contents of a tracepoint_formats file that
 * PATH names in messages). NULL with err "PATH:LINE: what is wrong" on bad
 * input or "out of memory"; a file with no gfp_flags table is no error
 * (gfp_names_has_table() then says 0).
 */
struct gfp_names *gfp_names_parse(const char *text, size_t len, const char *path, char *err,
				  size_t errlen);
/*
 * DIR/tracepoint_formats. NULL with err on failure, and errno EINVAL for
 * bad content, ENOMEM, or the error reading it; *missing is set (and err
 * says why) when the file does not exist, which is no error: masks are
 * then shown in hex.
 */
struct gfp_names *gfp_names_load_dir(const char *dir, char *err, size_t errlen, int *missing);
void gfp_names_free(struct gfp_names *g);

/* 1 when g has a table to name masks with (g may be NULL: 0). */
int gfp_names_has_table(const struct gfp_names *g);
/* The event whose table is used ("kmalloc"), or NULL. */
const char *gfp_names_event(const struct gfp_names *g);

/*
 * MASK as ftrace prints it for the traced kernel (GFP_KERNEL|__GFP_ZERO,
 * leftover bits as 0x..., 0 as the print fmt's own word for it, "none"),
 * into buf (GFP_NAMES_LEN bytes suffice); "0x..." when g has no table.
 * Returns buf.
 */
const char *gfp_names_format(const struct gfp_names *g, uint32_t mask, char *buf, size_t len);

#endif /* REPORT_GFP_H */
