/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sym_kallsyms.h - call site -> "function+0xoff [module]" from the traced
 * machine's kallsyms and modules snapshots, so that symbols resolve on any
 * machine the trace directory is copied to.
 */
#ifndef SYM_KALLSYMS_H
#define SYM_KALLSYMS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksym_mod {
	char *name;
	uint64_t text_addr;	/* load address of .text, 0 if unknown */
	uint64_t base, size;	/* core layout, from /proc/modules; size 0 if unknown */
	int listed;		/* the modules file has its line (else only kallsyms names it) */
	unsigned int gen;	/* 0: loaded at start; N: its Nth "+" line (loaded during the trace) */
	int unloaded;		/* a "-" line says it was unloaded during the trace */
};

struct ksyms;

/*
 * Loads a kallsyms copy (text symbols only) and, if modules_path is not
 * NULL, a modules file. Returns NULL with a one-line message in err (like
 * "PATH: line N: bad address") on failure; a file that cannot be opened
 * sets *missing to 1 so the caller can tell absence from corruption.
 */
struct ksyms *ksyms_load(const char *kallsyms_path, const char *modules_path, char *err,
			 size_t errlen, int *missing);
/*
 * The same with loaded_path (may be NULL): the kallsyms lines of the
 * modules loaded during the trace (kallsyms.loaded), each the symbol of
 * that module's "+" line in the modules file.
 */
struct ksyms *ksyms_load_all(const char *kallsyms_path, const char *modules_path,
			     const char *loaded_path, char *err, size_t errlen, int *missing);
/*
 * The same for a trace directory: DIR/kallsyms, with DIR/modules and
 * DIR/kallsyms.loaded when the directory has them.
 */
struct ksyms *ksyms_load_dir(const char *dir, char *err, size_t errlen, int *missing);
void ksyms_free(struct ksyms *k);

/* Number of text symbols with a nonzero address. */
size_t ksyms_count(const struct ksyms *k);

/*
 * Finds the function containing addr. Returns 1 with *name, *off and *mod
 * (NULL for the core kernel), or 0 if no symbol covers addr.
 */
int ksyms_lookup(const struct ksyms *k, uint64_t addr, const char **name, uint64_t *off,
		 const char **mod);

/*
 * The same for a return address (a call site, a stack frame): the function
 * holding the call, that of addr - 1, so that a call ending its function
 * (to a noreturn callee) does not name the next one; *off is still addr's
 * offset into it, as the kernel's %pB prints it.
 */
int ksyms_lookup_ret(const struct ksyms *k, uint64_t addr, const char **name, uint64_t *off,
		     const char **mod);

/*
 * Whether frames[i] of a stack (innermost first) is the instruction an
 * exception or interrupt stopped, not a return address: the frame after
 * the kernel's entry code, as the unwinder gives the registers it saved.
 */
bool ksyms_frame_exact(const struct ksyms *k, const uint64_t *frames, unsigned int i);
/* ksyms_lookup() for an exact frame, else ksyms_lookup_ret(). */
int ksyms_lookup_frame(const struct ksyms *k, uint64_t addr, bool exact, const char **name,
		       uint64_t *off, const char **mod);
/* The same for frames[i] of a stack, exact as ksyms_frame_exact() says. */
int ksyms_lookup_stack(const struct ksyms *k, const uint64_t *frames, unsigned int i,
		       const char **name, uint64_t *off, const char **mod);

/* Address of a symbol by exact name (first one, core kernel first); 0 if none. */
uint64_t ksyms_addr_of(const struct ksyms *k, const char *name, const char *mod);

/* Module by name (as loaded at start, else its first load during the trace), or NULL. */
const struct ksym_mod *ksyms_module(const struct ksyms *k, const char *name);
/* The module (the load of it) whose range holds addr, or NULL. */
const struct ksym_mod *ksyms_module_of(const struct ksyms *k, uint64_t addr);
/*
 * What the modules file made the reader assume ("" if nothing): one line
 * per module whose addresses are named as a later one's.
 */
const char *ksyms_warnings(const struct ksyms *k);
size_t ksyms_nmodules(const struct ksyms *k);
const struct ksym_mod *ksyms_module_at(const struct ksyms *k, size_t i);

/*
 * Formats addr as "function+0xoff" or "function+0xoff [module]", or as
 * "0x..." when k is NULL or no symbol covers it. Returns buf.
 */
char *ksyms_format(const struct ksyms *k, uint64_t addr, char *buf, size_t len);
/* The same for a return address (ksyms_lookup_ret()): every address the report names. */
char *ksyms_format_ret(const struct ksyms *k, uint64_t addr, char *buf, size_t len);
/* ksyms_format() for an exact frame (ksyms_frame_exact()), else ksyms_format_ret(). */
char *ksyms_format_frame(const struct ksyms *k, uint64_t addr, bool exact, char *buf, size_t len);
/* The same for frames[i] of a stack, exact as ksyms_frame_exact() says. */
char *ksyms_format_stack(const struct ksyms *k, const uint64_t *frames, unsigned int i, char *buf,
			 size_t len);

/* Appends one formatted line to a warning list (*buf, *len bytes; sym_path.c). */
void sym_vwarn(char **buf, size_t *len, const char *fmt, va_list ap);

#endif /* SYM_KALLSYMS_H */
