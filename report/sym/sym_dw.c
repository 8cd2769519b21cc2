// SPDX-License-Identifier: GPL-2.0-only
/*
 * sym_dw.c - the libdw (elfutils) file:line backend: one offline Dwfl per
 * ELF file; relocatable modules get section addresses from libdwfl, which
 * also relocates their DWARF.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/sym_srcline.h"

struct dwh {
	Dwfl *dwfl;
	Dwfl_Module *mod;
};

static char *debuginfo_path;

static const Dwfl_Callbacks offline_cb = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static void dw_close(void *p)
{
	struct dwh *h = p;

	if (!h)
		return;
	if (h->dwfl)
		dwfl_end(h->dwfl);
	free(h);
}

static void *dw_open(const char *path, char *err, size_t errlen)
{
	struct dwh *h = calloc(1, sizeof(*h));
	Dwarf_Addr bias;

	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	h->dwfl = dwfl_begin(&offline_cb);
	if (!h->dwfl)
		goto dwfl_err;
	dwfl_report_begin(h->dwfl);
	h->mod = dwfl_report_offline(h->dwfl, path, path, -1);
	if (!h->mod)
		goto dwfl_err;
	if (dwfl_report_end(h->dwfl, NULL, NULL) != 0)
		goto dwfl_err;
	if (!dwfl_module_getdwarf(h->mod, &bias)) {
		snprintf(err, errlen, "%s: no DWARF debug information (libdw: %s)", path,
			 dwfl_errmsg(-1));
		dw_close(h);
		return NULL;
	}
	return h;
dwfl_err:
	snprintf(err, errlen, "%s: %s", path, dwfl_errmsg(-1));
	dw_close(h);
	return NULL;
}

/*
 * The outermost inlined_subroutine instance at pc under a concrete scope,
 * looking through lexical blocks but not into other inlined instances.
 * (dwarf_getscopes() cannot serve: past the first inlined instance it
 * follows the abstract definition's scopes, not the concrete chain.)
 */
static int outer_inline(Dwarf_Die *scope, Dwarf_Addr pc, Dwarf_Die *found)
{
	Dwarf_Die child;

	if (dwarf_child(scope, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_inlined_subroutine && dwarf_haspc(&child, pc) == 1) {
			*found = child;
			return 1;
		}
		/* A block without addresses of its own may still hold the instance. */
		if (tag == DW_TAG_lexical_block &&
		    (dwarf_haspc(&child, pc) == 1 ||
		     (!dwarf_hasattr(&child, DW_AT_low_pc) && !dwarf_hasattr(&child, DW_AT_ranges))) &&
		    outer_inline(&child, pc, found))
			return 1;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The concrete function (not an abstract inline definition) holding pc. */
static int concrete_func(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *func)
{
	Dwarf_Die child;

	if (dwarf_child(cu, &child) != 0)
		return 0;
	do {
		if (dwarf_tag(&child) == DW_TAG_subprogram && dwarf_haspc(&child, pc) == 1) {
			*func = child;
			return 1;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* file:line at addr (module address space), through inlines to the outermost caller. */
static int dw_line(struct dwh *h, Dwarf_Addr addr, char *file, size_t flen, unsigned int *line)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(h->mod, addr, &bias);
	Dwfl_Line *l = dwfl_module_getsrc(h->mod, addr);
	Dwarf_Die func, inl;
	const char *src = NULL;
	int lineno = 0;

	if (!cu || !l)
		return 0;
	src = dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL);
	/*
	 * The line table names the innermost inlined code (say, kmalloc() in
	 * slab.h); the call site belongs to the function kallsyms names, at the
	 * line where its outermost inlined call was made.
	 */
	if (concrete_func(cu, addr - bias, &func) && outer_inline(&func, addr - bias, &inl)) {
		Dwarf_Attribute fa, la;
		Dwarf_Word fidx, ln;
		Dwarf_Files *files;
		size_t nfiles;

		if (dwarf_formudata(dwarf_attr(&inl, DW_AT_call_file, &fa), &fidx) == 0 &&
		    dwarf_formudata(dwarf_attr(&inl, DW_AT_call_line, &la), &ln) == 0 &&
		    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && fidx < nfiles) {
			const char *f = dwarf_filesrc(files, fidx, NULL, NULL);

			if (f) {
				src = f;
				lineno = (int)ln;
			}
		}
	}
	if (!src || lineno <= 0)
		return 0;
	if (src[0] != '/') {
		/* Relative to the compilation directory. */
		Dwarf_Attribute ca;
		const char *dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &ca));

		if (dir)
			snprintf(file, flen, "%s/%s", dir, src);
		else
			snprintf(file, flen, "%s", src);
	} else {
		snprintf(file, flen, "%s", src);
	}
	*line = (unsigned int)lineno;
	return 1;
}

static int find_sym(struct dwh *h, const char *name, bool func_only, GElf_Addr *value)
{
	int n = dwfl_module_getsymtab(h->mod), i;

	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *s = dwfl_module_getsym_info(h->mod, i, &sym, &addr, &shndx, NULL, NULL);

		if (!s || strcmp(s, name) || sym.st_shndx == SHN_UNDEF)
			continue;
		if (func_only && GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		*value = addr;
		return 1;
	}
	return 0;
}

static int dw_at_symbol(void *p, const char *name, uint64_t off, char *file, size_t flen,
			unsigned int *line)
{
	struct dwh *h = p;
	GElf_Addr a;

	if (!find_sym(h, name, true, &a))
		return 0;
	return dw_line(h, a + off, file, flen, line);
}

static int dw_at_text(void *p, uint64_t off, char *file, size_t flen, unsigned int *line)
{
	struct dwh *h = p;
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(h->mod, &bias);
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *nm;

		if (!gelf_getshdr(scn, &sh))
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		/* libdwfl stored the address it gave the section in sh_addr. */
		if (nm && strcmp(nm, ".text") == 0)
			return dw_line(h, sh.sh_addr + bias + off, file, flen, line);
	}
	return 0;
}

static int dw_at_addr(void *p, uint64_t addr, char *file, size_t flen, unsigned int *line)
{
	return dw_line(p, addr, file, flen, line);
}

static int dw_sym_value(void *p, const char *name, uint64_t *value)
{
	GElf_Addr a;

	if (!find_sym(p, name, false, &a))
		return 0;
	*value = a;
	return 1;
}

const struct srcline_ops srcline_dw_ops = {
	.name = "dw",
	.open = dw_open,
	.at_symbol = dw_at_symbol,
	.at_text = dw_at_text,
	.at_addr = dw_at_addr,
	.sym_value = dw_sym_value,
	.close = dw_close,
};
