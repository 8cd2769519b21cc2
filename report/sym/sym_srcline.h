/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sym_srcline.h - call site -> file:line from the DWARF of vmlinux and of
 * module .ko files, through libdw (elfutils) or libbfd (binutils).
 */
#ifndef SYM_SRCLINE_H
#define SYM_SRCLINE_H

#include <stddef.h>
#include <stdint.h>

#include "sym/sym_kallsyms.h"

enum srcline_resolver {
	SRCLINE_DW,		/* libdw, the default */
	SRCLINE_BFD,		/* libbfd, when built with HAVE_LIBBFD */
};

/* What one backend does for one ELF file; the front end maps addresses. */
struct srcline_ops {
	const char *name;
	/* NULL with a message in err if the file is unusable. */
	void *(*open)(const char *path, char *err, size_t errlen);
	/* file:line of the instruction at offset off into function name: 1, 0, -1. */
	int (*at_symbol)(void *h, const char *name, uint64_t off, char *file, size_t flen,
			 unsigned int *line);
	/* ... at offset off into the .text section. */
	int (*at_text)(void *h, uint64_t off, char *file, size_t flen, unsigned int *line);
	/* ... at a link-time address (vmlinux). */
	int (*at_addr)(void *h, uint64_t addr, char *file, size_t flen, unsigned int *line);
	/* Link-time value of a symbol: 1 found, 0 not. */
	int (*sym_value)(void *h, const char *name, uint64_t *value);
	void (*close)(void *h);
};

extern const struct srcline_ops srcline_dw_ops;
#ifdef HAVE_LIBBFD
extern const struct srcline_ops srcline_bfd_ops;
#endif

/* Nonzero when the libbfd resolver was compiled in. */
int srcline_have_bfd(void);

struct srcline;

/*
 * vmlinux may be NULL; kos lists .ko files (module name = file name
 * without .ko, '-' read as '_'); moddir, if not NULL, is searched
 * recursively for NAME.ko of modules not given in kos. ks (may be NULL)
 * maps addresses to symbol+offset and modules. NULL with err on failure.
 */
struct srcline *srcline_open(enum srcline_resolver which, const char *vmlinux,
			     char *const *kos, size_t nkos, const char *moddir,
			     const struct ksyms *ks, char *err, size_t errlen);

/*
 * file:line of the call that returned to addr (a call site is a return
 * address: the line of addr - 1), or with exact of addr itself (an
 * interrupted instruction, ksyms_frame_exact()), in the function kallsyms
 * names, that is, through inlined code to the outermost caller. 1 found,
 * 0 not.
 */
int srcline_lookup(struct srcline *s, uint64_t addr, bool exact, char *file, size_t flen,
		   unsigned int *line);

/* Warnings gathered while resolving (files without DWARF...), one per line, or "". */
const char *srcline_warnings(const struct srcline *s);

void srcline_close(struct srcline *s);

/* Lexically simplifies a path in place: "//", "/./", "dir/../". */
void srcline_clean_path(char *path);

#endif /* SYM_SRCLINE_H */
