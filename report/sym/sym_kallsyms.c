// SPDX-License-Identifier: GPL-2.0-only
/*
 * sym_kallsyms.c - symbolizes call sites from a kallsyms snapshot: text
 * symbols sorted by address, a binary search per lookup, module ranges
 * from the modules snapshot to keep a module's address out of its
 * neighbour's symbols.
 *
 * A module's range is CORE_BASE + CORE_SIZE from /proc/modules, cut at the
 * next module's CORE_BASE: from Linux 6.4 the size counts the module's data
 * too, which is allocated apart from its text, so the range runs on into
 * whatever module's text follows (Documentation/trace-format.md, section 6).
 * Modules loaded during the trace ("+" lines, their symbols in
 * kallsyms.loaded) are loads of their own beside those of the start; where
 * a later load's code lies over the base of one unloaded before it, the
 * later one wins, and the report says so.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sym/sym_kallsyms.h"

/* [start, end) */
struct addr_range {
	uint64_t start, end;
};

struct ksym {
	uint64_t addr;
	uint32_t name;		/* offset into strs */
	uint16_t mod;		/* index + 1 into mods; 0: core kernel */
	uint8_t rank;		/* preference among symbols at one address */
	uint8_t loaded;		/* from kallsyms.loaded: of a module loaded during the trace */
	uint32_t order;		/* line number: keeps the sort stable */
};

struct ksyms {
	struct ksym *syms;
	size_t nsyms, cap;
	char *strs;
	size_t slen, scap;
	struct ksym_mod *mods;
	size_t nmods, mcap;
	uint32_t *mod_tab;	/* index + 1 into mods by name hash; 0: empty */
	unsigned int mod_bits;	/* mod_tab has 1 << mod_bits slots, at most half full */
	struct mod_range *ranges;	/* modules with a range, by base */
	size_t nranges;
	char *warn;		/* ksyms_warnings() */
	size_t wlen;
	unsigned long lines;	/* of the kallsyms file */
	struct addr_range entry[4];	/* the kernel's exception entry code (find_entry_code()) */
	unsigned int nentry;
};

/* Where a module's code may be: [base, end), end already cut at the next base. */
struct mod_range {
	uint64_t base, end;
	size_t mod;		/* index + 1 into mods */
};

static int add_str(struct ksyms *k, const char *s, uint32_t *off)
{
	size_t n = strlen(s) + 1;

	if (k->slen + n > k->scap) {
		size_t ncap = k->scap ? k->scap * 2 : 1 << 12;
		char *p;

		while (ncap < k->slen + n)
			ncap *= 2;
		if (ncap > UINT32_MAX)
			return -1;
		p = realloc(k->strs, ncap);
		if (!p)
			return -1;
		k->strs = p;
		k->scap = ncap;
	}
	memcpy(k->strs + k->slen, s, n);
	*off = (uint32_t)k->slen;
	k->slen += n;
	return 0;
}

/* FNV-1a: module names are short, and a snapshot may name thousands. */
static size_t mod_hash(const char *name, unsigned int bits)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ULL;
	return (size_t)(h >> (64 - bits));
}

/* The slot of a load of name in mod_tab: its entry, or the empty slot where it would go. */
static size_t mod_slot(const struct ksyms *k, const char *name, unsigned int gen)
{
	size_t mask = ((size_t)1 << k->mod_bits) - 1, i;

	for (i = mod_hash(name, k->mod_bits); k->mod_tab[i]; i = (i + 1) & mask)
		if (k->mods[k->mod_tab[i] - 1].gen == gen &&
		    strcmp(k->mods[k->mod_tab[i] - 1].name, name) == 0)
			break;
	return i;
}

/* Index + 1 of a load of name, 0 if none. */
static size_t mod_find(const struct ksyms *k, const char *name, unsigned int gen)
{
	return k->mod_tab ? k->mod_tab[mod_slot(k, name, gen)] : 0;
}

/* Room in mod_tab for one more module. 0, or -1 when out of memory. */
static int mod_tab_reserve(struct ksyms *k)
{
	unsigned int nb = k->mod_bits ? k->mod_bits : 6;
	uint32_t *old = k->mod_tab;
	size_t i;

	if (old && (k->nmods + 1) * 2 <= ((size_t)1 << k->mod_bits))
		return 0;
	while ((k->nmods + 1) * 2 > ((size_t)1 << nb))
		nb++;
	k->mod_tab = calloc((size_t)1 << nb, sizeof(*k->mod_tab));
	if (!k->mod_tab) {
		k->mod_tab = old;
		return -1;
	}
	k->mod_bits = nb;
	for (i = 0; i < k->nmods; i++)
		k->mod_tab[mod_slot(k, k->mods[i].name, k->mods[i].gen)] = (uint32_t)(i + 1);
	free(old);
	return 0;
}

/* Index + 1 of a load of a module, adding it if new; 0 when out of memory. */
static size_t mod_intern(struct ksyms *k, const char *name, unsigned int gen)
{
	size_t slot;

	if (mod_tab_reserve(k))
		return 0;
	slot = mod_slot(k, name, gen);
	if (k->mod_tab[slot])
		return k->mod_tab[slot];
	if (k->nmods >= UINT16_MAX - 1)
		return 0;
	if (k->nmods == k->mcap) {
		size_t ncap = k->mcap ? k->mcap * 2 : 32;
		struct ksym_mod *p = realloc(k->mods, ncap * sizeof(*p));

		if (!p)
			return 0;
		k->mods = p;
		k->mcap = ncap;
	}
	memset(&k->mods[k->nmods], 0, sizeof(k->mods[0]));
	k->mods[k->nmods].name = strdup(name);
	if (!k->mods[k->nmods].name)
		return 0;
	k->mods[k->nmods].gen = gen;
	k->mod_tab[slot] = (uint32_t)(k->nmods + 1);
	return ++k->nmods;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/*
	 * At one address, a later load's symbol over an earlier one's: init
	 * code is freed after the load and its place reused by the next.
	 */
	if (x->loaded != y->loaded)
		return x->loaded < y->loaded ? -1 : 1;
	if (x->loaded && x->mod != y->mod)
		return x->mod < y->mod ? -1 : 1;
	/* The preferred name goes last: the lookup takes the last <= addr; then file order. */
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->order < y->order ? 1 : x->order > y->order ? -1 : 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct mod_range *x = a, *y = b;

	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	/* At one base, the later load last: it is the one kept. */
	return x->mod < y->mod ? -1 : x->mod > y->mod;
}

static void warnf(struct ksyms *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warnf(struct ksyms *k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sym_vwarn(&k->warn, &k->wlen, fmt, ap);
	va_end(ap);
}

/*
 * Whether module load u, unloaded during the trace, gives way to a later
 * load: one at its base, or one with code (a kallsyms symbol) at or above
 * its base from a base below it. The later load's code was there when its
 * call sites were recorded; u's only before, and a trace's addresses carry
 * no load to tell them apart, so the newest wins. Only code in the later
 * load's own range counts: its init code, elsewhere and freed once it ran,
 * may land in u's old place (seen on 6.12: the bench module's init over
 * the unloaded oracle's text), and dropping u's range for it would leave
 * u's own call sites unnamed.
 */
static size_t overlaid_by(const struct ksyms *k, size_t u)
{
	const struct ksym_mod *m = &k->mods[u];
	size_t i;

	for (i = u + 1; i < k->nmods; i++)
		if (k->mods[i].size && k->mods[i].base == m->base)
			return i + 1;
	for (i = 0; i < k->nsyms; i++) {
		const struct ksym *s = &k->syms[i];
		const struct ksym_mod *n = s->mod ? &k->mods[s->mod - 1] : NULL;

		if (n && (size_t)s->mod - 1 > u && n->size && n->base < m->base &&
		    s->addr >= m->base && s->addr - m->base < m->size &&
		    s->addr - n->base < n->size)
			return s->mod;
	}
	return 0;
}

/*
 * The modules' ranges sorted by base, each cut at the next one's base:
 * a module's text starts at its base, so nothing at or past another
 * module's base is its own. Two loads at one base cannot come from one
 * snapshot of /proc/modules: that is an error, not a guess, unless the
 * first was unloaded during the trace (then the later wins, see above).
 */
static int build_ranges(struct ksyms *k, const char *path, char *err, size_t errlen)
{
	size_t i, n = 0;

	k->ranges = calloc(k->nmods ? k->nmods : 1, sizeof(*k->ranges));
	if (!k->ranges) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	for (i = 0; i < k->nmods; i++) {
		const struct ksym_mod *m = &k->mods[i];
		size_t by;

		/* Base 0: copied without root, which hides addresses; no range is known. */
		if (!m->size || !m->base)
			continue;
		by = m->unloaded ? overlaid_by(k, i) : 0;
		if (by) {
			/* Even a reload of the same module: its functions moved. */
			warnf(k, "%s: %s, unloaded during the trace, was at 0x%llx, where %s was loaded later (at 0x%llx): addresses there are named as the later load's, also those recorded before the unload",
			      path, m->name, (unsigned long long)m->base, k->mods[by - 1].name,
			      (unsigned long long)k->mods[by - 1].base);
			continue;
		}
		k->ranges[n].base = m->base;
		k->ranges[n].end = m->base + m->size;
		k->ranges[n].mod = i + 1;
		n++;
	}
	qsort(k->ranges, n, sizeof(*k->ranges), range_cmp);
	for (i = 0; i + 1 < n; i++) {
		if (k->ranges[i].base == k->ranges[i + 1].base) {
			snprintf(err, errlen, "%s: modules %s and %s both at 0x%llx", path,
				 k->mods[k->ranges[i].mod - 1].name,
				 k->mods[k->ranges[i + 1].mod - 1].name,
				 (unsigned long long)k->ranges[i].base);
			return -1;
		}
		if (k->ranges[i].end > k->ranges[i + 1].base)
			k->ranges[i].end = k->ranges[i + 1].base;
	}
	k->nranges = n;
	return 0;
}

/* Index + 1 of the newest load of name that is still loaded at base, 0 if none. */
static size_t loaded_at(const struct ksyms *k, const char *name, uint64_t base)
{
	size_t best = 0, i;

	for (i = 0; i < k->nmods; i++)
		if (!k->mods[i].unloaded && k->mods[i].listed && k->mods[i].base == base &&
		    strcmp(k->mods[i].name, name) == 0)
			best = i + 1;
	return best;
}

static int load_modules(struct ksyms *k, const char *path, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned long lineno = 0;
	int ret = -1;

	if (!fp) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, fp) > 0) {
		char name[256], kind = line[0];
		unsigned long long text, base, size;
		unsigned int gen = 0;
		struct ksym_mod *m;
		size_t mi;

		lineno++;
		if (kind == '#' || kind == '\n')
			continue;
		/* Module names are [A-Za-z0-9_-]; "+" and "-" say when (section 6). */
		if (kind != '+' && kind != '-' && kind != '_' && !isalnum((unsigned char)kind)) {
			snprintf(err, errlen,
				 "%s: line %lu: unknown kind of line '%c' (from a newer kmemtraced?)",
				 path, lineno, isprint((unsigned char)kind) ? kind : '?');
			goto out;
		}
		if (sscanf(line + (kind == '+' || kind == '-'), "%255s %llx %llx %llu", name, &text,
			   &base, &size) != 4) {
			snprintf(err, errlen, "%s: line %lu: expected NAME TEXT_ADDR BASE SIZE",
				 path, lineno);
			goto out;
		}
		if (base + size < base) {
			snprintf(err, errlen, "%s: line %lu: %s: BASE + SIZE past the address space",
				 path, lineno, name);
			goto out;
		}
		if (kind == '-') {
			mi = loaded_at(k, name, base);
			if (!mi) {
				snprintf(err, errlen, "%s: line %lu: -%s: no %s loaded at 0x%llx before",
					 path, lineno, name, name, base);
				goto out;
			}
			k->mods[mi - 1].unloaded = 1;
			continue;
		}
		/* Each "+" line is a load of its own: the Nth of that name. */
		if (kind == '+')
			while (mod_find(k, name, ++gen))
				;
		mi = mod_intern(k, name, gen);
		if (!mi) {
			snprintf(err, errlen, "%s: out of memory", path);
			goto out;
		}
		m = &k->mods[mi - 1];
		/* Once a line set it, a second line would leave one of two ranges unsaid. */
		if (m->listed) {
			snprintf(err, errlen, "%s: line %lu: module %s listed twice", path, lineno,
				 name);
			goto out;
		}
		m->listed = 1;
		m->text_addr = text;
		m->base = base;
		m->size = size;
	}
	if (ferror(fp)) {
		snprintf(err, errlen, "%s: read error", path);
		goto out;
	}
	ret = 0;
out:
	free(line);
	fclose(fp);
	return ret;
}

/*
 * The load a symbol of kallsyms.loaded belongs to: of the "+" loads of its
 * module, the one with the highest base at or below it, else the first.
 */
static size_t loaded_mod(const struct ksyms *k, const char *name, uint64_t addr)
{
	size_t best = 0, mi;
	unsigned int gen;

	for (gen = 1; (mi = mod_find(k, name, gen)); gen++)
		if (!best || (k->mods[mi - 1].base <= addr &&
			      (k->mods[best - 1].base > addr ||
			       k->mods[mi - 1].base > k->mods[best - 1].base)))
			best = mi;
	return best;
}

/*
 * Adds the text symbols of a kallsyms file. loaded: kallsyms.loaded, whose
 * every symbol is a module's, of a load the modules file has a "+" line for.
 */
static int load_kallsyms(struct ksyms *k, const char *path, bool loaded, char *err,
			 size_t errlen, int *missing)
{
	FILE *fp = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned long lineno = 0;
	int ret = -1;

	if (!fp) {
		*missing = errno == ENOENT;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, fp) > 0) {
		char *p = line, *end, *name, *mod = NULL;
		unsigned long long addr;
		char type;
		struct ksym *s;
		size_t mi = 0;

		lineno++;
		errno = 0;
		addr = strtoull(p, &end, 16);
		if (errno || end == p || (*end != ' ' && *end != '\t')) {
			snprintf(err, errlen, "%s: line %lu: not ADDRESS TYPE NAME", path, lineno);
			goto out;
		}
		p = end + strspn(end, " \t");
		type = *p;
		if (!type || (p[1] != ' ' && p[1] != '\t')) {
			snprintf(err, errlen, "%s: line %lu: not ADDRESS TYPE NAME", path, lineno);
			goto out;
		}
		p += 1 + strspn(p + 1, " \t");
		name = p;
		p += strcspn(p, " \t\r\n");
		if (*p) {
			*p++ = '\0';
			p += strspn(p, " \t");
			if (*p == '[') {
				mod = ++p;
				p += strcspn(p, "]\r\n");
				*p = '\0';
			}
		}
		if (loaded && (!mod || !(mi = loaded_mod(k, mod, addr)))) {
			snprintf(err, errlen, "%s: line %lu: %s%s has no \"+\" line in the modules file",
				 path, lineno, mod ? "module " : "a symbol of no module",
				 mod ? mod : "");
			goto out;
		}
		/* Call sites are code: data symbols would only shadow them. */
		if (!addr || (type != 't' && type != 'T' && type != 'w' && type != 'W'))
			continue;
		if (!*name)
			continue;
		if (k->nsyms == k->cap) {
			size_t ncap = k->cap ? k->cap * 2 : 1 << 8;
			struct ksym *ns = realloc(k->syms, ncap * sizeof(*ns));

			if (!ns)
				goto nomem;
			k->syms = ns;
			k->cap = ncap;
		}
		s = &k->syms[k->nsyms];
		memset(s, 0, sizeof(*s));
		s->addr = addr;
		s->loaded = loaded;
		/* Line numbers keep the sort stable; kallsyms.loaded's come after kallsyms'. */
		s->order = (uint32_t)(lineno + (loaded ? k->lines : 0));
		/* Among aliases: global over weak over local, and a plain name over _names. */
		s->rank = (uint8_t)(2 * (type == 'T' ? 3 : type == 'W' ? 2 : type == 't' ? 1 : 0) +
				    (name[0] != '_'));
		/*
		 * Names like __pi_foo or __pfx_foo are aliases or padding, not functions;
		 * nor are ARM mapping symbols ($x, $d, ...: where code or data starts),
		 * which 6.1's kallsyms lists at the first function of a module's sections.
		 */
		if (strncmp(name, "__pfx_", 6) == 0 || strncmp(name, "__pi_", 5) == 0 ||
		    strncmp(name, "__cfi_", 6) == 0 || name[0] == '$')
			s->rank = 0;
		if (add_str(k, name, &s->name))
			goto nomem;
		if (mod && !mi)
			mi = mod_intern(k, mod, 0);
		if (mod && !mi)
			goto nomem;
		s->mod = (uint16_t)mi;
		k->nsyms++;
	}
	if (ferror(fp)) {
		snprintf(err, errlen, "%s: read error", path);
		goto out;
	}
	if (!loaded)
		k->lines = lineno;
	ret = 0;
	goto out;
nomem:
	snprintf(err, errlen, "%s: out of memory", path);
out:
	free(line);
	fclose(fp);
	return ret;
}

/* The end of the core kernel's function starting at syms[i]: the next symbol's address. */
static uint64_t function_end(const struct ksyms *k, size_t i)
{
	uint64_t start = k->syms[i].addr;

	while (i < k->nsyms && k->syms[i].addr == start)
		i++;
	return i < k->nsyms ? k->syms[i].addr : start + 1;
}

/*
 * Where the kernel enters from an exception or an interrupt, so that
 * ksyms_frame_exact() knows the frame after it for the instruction it
 * stopped: x86 (both widths) and arm64 keep their exception and interrupt
 * vectors in the entry text, which holds nothing else that a stack passes
 * through but the syscall entry and ret_from_fork, bottoms of a kernel stack.
 * s390x has no entry text: its interrupt handlers are the irqentry text,
 * its program and machine checks two functions beside them. (arm64's
 * irqentry text is the irqchip's handler, called from C: not an entry.)
 */
static void find_entry_code(struct ksyms *k)
{
	static const char *const bounds[][2] = {
		{ "__entry_text_start", "__entry_text_end" },
		{ "__irqentry_text_start", "__irqentry_text_end" },
	};
	static const char *const s390_checks[] = { "pgm_check_handler", "mcck_int_handler" };
	uint64_t at[2][2] = { { 0 } };
	size_t i, b, e;

	for (i = 0; i < k->nsyms; i++) {
		const struct ksym *s = &k->syms[i];
		const char *name = k->strs + s->name;

		if (s->mod)
			continue;
		for (b = 0; b < 2; b++)
			for (e = 0; e < 2; e++)
				if (!at[b][e] && strcmp(name, bounds[b][e]) == 0)
					at[b][e] = s->addr;
		for (e = 0; e < 2 && k->nentry < 4; e++)
			if (strcmp(name, s390_checks[e]) == 0)
				k->entry[k->nentry++] = (struct addr_range){ s->addr,
									     function_end(k, i) };
	}
	/* The entry text if the kernel has one, else the irqentry text. */
	for (b = 0; b < 2 && k->nentry < 4; b++) {
		if (at[b][0] && at[b][1] > at[b][0]) {
			k->entry[k->nentry++] = (struct addr_range){ at[b][0], at[b][1] };
			break;
		}
	}
}

struct ksyms *ksyms_load_all(const char *kallsyms_path, const char *modules_path,
			     const char *loaded_path, char *err, size_t errlen, int *missing)
{
	struct ksyms *k = calloc(1, sizeof(*k));
	int dummy;

	*missing = 0;
	if (!k) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (load_kallsyms(k, kallsyms_path, false, err, errlen, missing))
		goto fail;
	if (!k->nsyms) {
		snprintf(err, errlen,
			 "%s: no text symbol with an address (copied without root?)",
			 kallsyms_path);
		goto fail;
	}
	if (modules_path && load_modules(k, modules_path, err, errlen))
		goto fail;
	/* Without the modules file its "+" lines are unknown: the symbols cannot be placed. */
	if (modules_path && loaded_path &&
	    load_kallsyms(k, loaded_path, true, err, errlen, &dummy))
		goto fail;
	qsort(k->syms, k->nsyms, sizeof(*k->syms), sym_cmp);
	if (modules_path && build_ranges(k, modules_path, err, errlen))
		goto fail;
	find_entry_code(k);
	return k;
fail:
	ksyms_free(k);
	return NULL;
}

struct ksyms *ksyms_load(const char *kallsyms_path, const char *modules_path, char *err,
			 size_t errlen, int *missing)
{
	return ksyms_load_all(kallsyms_path, modules_path, NULL, err, errlen, missing);
}

struct ksyms *ksyms_load_dir(const char *dir, char *err, size_t errlen, int *missing)
{
	size_t n = strlen(dir) + sizeof("/kallsyms.loaded");
	char *kp = malloc(n), *mp = malloc(n), *lp = malloc(n);
	struct ksyms *k = NULL;
	struct stat st;

	*missing = 0;
	if (!kp || !mp || !lp) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	snprintf(kp, n, "%s/kallsyms", dir);
	snprintf(mp, n, "%s/modules", dir);
	snprintf(lp, n, "%s/kallsyms.loaded", dir);
	k = ksyms_load_all(kp, stat(mp, &st) == 0 ? mp : NULL, stat(lp, &st) == 0 ? lp : NULL,
			   err, errlen, missing);
out:
	free(kp);
	free(mp);
	free(lp);
	return k;
}

void ksyms_free(struct ksyms *k)
{
	size_t i;

	if (!k)
		return;
	for (i = 0; i < k->nmods; i++)
		free(k->mods[i].name);
	free(k->mods);
	free(k->mod_tab);
	free(k->ranges);
	free(k->warn);
	free(k->syms);
	free(k->strs);
	free(k);
}

size_t ksyms_count(const struct ksyms *k)
{
	return k ? k->nsyms : 0;
}

/* Index + 1 of the module whose range (cut at the next base) holds addr, 0 if none. */
static size_t mod_of_addr(const struct ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->nranges;

	/* The last range with base <= addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->ranges[mid].base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= k->ranges[lo - 1].end)
		return 0;
	return k->ranges[lo - 1].mod;
}

/*
 * The symbol that names addr, in load in_mod's range but below its first
 * symbol, where in_mod has no name (on s390x a module's first bytes,
 * before .text, have none) and an older load's code was before in_mod
 * took the place: code of a load unloaded during the trace whose range
 * held addr until in_mod's base cut it, or init code of a load made
 * during the trace (kallsyms.loaded), freed once it ran. Their frames,
 * recorded before, lie there. The highest such symbol at or below
 * syms[top]; NULL if none.
 */
static const struct ksym *older_load_sym(const struct ksyms *k, size_t top, uint64_t addr,
					 size_t in_mod)
{
	uint64_t base = k->mods[in_mod - 1].base, span = addr - base + 1;
	size_t i;

	for (i = 0; i + 1 < in_mod; i++)
		if (k->mods[i].unloaded && k->mods[i].size > span)
			span = k->mods[i].size;
	/* A symbol span or more below addr is in no range that holds addr, nor at base. */
	for (i = top + 1; i-- > 0 && addr - k->syms[i].addr < span;) {
		const struct ksym *s = &k->syms[i];
		const struct ksym_mod *m = s->mod ? &k->mods[s->mod - 1] : NULL;

		if (!m || (size_t)s->mod >= in_mod)
			continue;
		if (m->unloaded && m->size && s->addr >= m->base && addr - m->base < m->size)
			return s;
		if (s->loaded && s->addr >= base && mod_of_addr(k, s->addr) != s->mod)
			return s;
	}
	return NULL;
}

/*
 * Init code of a module loaded during the trace (kallsyms.loaded: freed
 * after its init, so outside its own range), lying where in_mod's range
 * is (0: none) and loaded after it: it names what follows it, even
 * inside an older load's range, which on 6.4+ spans memory not its text.
 * Init symbols of the start's kallsyms do not: their code ran before the
 * trace and its place may be another's now.
 */
static bool later_init_sym(const struct ksyms *k, const struct ksym *s, size_t in_mod)
{
	return s->loaded && s->mod != in_mod && mod_of_addr(k, s->addr) != s->mod &&
	       (!in_mod || (s->mod > in_mod && s->addr >= k->mods[in_mod - 1].base));
}

int ksyms_lookup(const struct ksyms *k, uint64_t addr, const char **name, uint64_t *off,
		 const char **mod)
{
	size_t lo = 0, hi, in_mod;
	const struct ksym *s;

	if (!k || !k->nsyms || addr < k->syms[0].addr)
		return 0;
	hi = k->nsyms;
	/* Last symbol with address <= addr. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	s = &k->syms[lo];
	in_mod = mod_of_addr(k, addr);
	if (later_init_sym(k, s, in_mod))
		goto found;
	/*
	 * Inside a module's range, only that module's symbols may name it:
	 * the last of them at or below addr (an unloaded module's may lie
	 * between, where a later load took its place), unless a later load's
	 * init code comes first, which names its start and so what follows.
	 */
	if (in_mod) {
		uint64_t base = k->mods[in_mod - 1].base;
		size_t top = lo;

		while (s->mod != in_mod && lo > 0 && s->addr > base) {
			s = &k->syms[--lo];
			if (later_init_sym(k, s, in_mod))
				goto found;
		}
		/* A symbol of its own below its base is no name for its range either. */
		if (s->mod != in_mod || s->addr < base) {
			s = older_load_sym(k, top, addr, in_mod);
			if (!s)
				return 0;
		}
	}
	/*
	 * Past a module's end: the gap after it, not its last function. Nor
	 * the last of whatever symbols lie in a module's range, such as those
	 * of a module the modules file does not list (loaded between the two
	 * snapshots): below the range's end, they could not name its start.
	 */
	if (!in_mod && ((s->mod && k->mods[s->mod - 1].size) || mod_of_addr(k, s->addr)))
		return 0;
found:
	*name = k->strs + s->name;
	*off = addr - s->addr;
	*mod = s->mod ? k->mods[s->mod - 1].name : NULL;
	return 1;
}

uint64_t ksyms_addr_of(const struct ksyms *k, const char *name, const char *mod)
{
	size_t i;

	if (!k)
		return 0;
	for (i = 0; i < k->nsyms; i++) {
		const struct ksym *s = &k->syms[i];
		const char *m = s->mod ? k->mods[s->mod - 1].name : NULL;

		if (strcmp(k->strs + s->name, name))
			continue;
		if ((!mod && !m) || (mod && m && strcmp(mod, m) == 0))
			return s->addr;
	}
	return 0;
}

const struct ksym_mod *ksyms_module(const struct ksyms *k, const char *name)
{
	size_t slot;

	if (!k || !k->mod_tab)
		return NULL;
	slot = mod_find(k, name, 0);
	if (!slot)
		slot = mod_find(k, name, 1);
	return slot ? &k->mods[slot - 1] : NULL;
}

const struct ksym_mod *ksyms_module_of(const struct ksyms *k, uint64_t addr)
{
	size_t mi = k ? mod_of_addr(k, addr) : 0;

	return mi ? &k->mods[mi - 1] : NULL;
}

const char *ksyms_warnings(const struct ksyms *k)
{
	return k && k->warn ? k->warn : "";
}

size_t ksyms_nmodules(const struct ksyms *k)
{
	return k ? k->nmods : 0;
}

const struct ksym_mod *ksyms_module_at(const struct ksyms *k, size_t i)
{
	return k && i < k->nmods ? &k->mods[i] : NULL;
}

int ksyms_lookup_ret(const struct ksyms *k, uint64_t addr, const char **name, uint64_t *off,
		     const char **mod)
{
	/* The call is the byte before: a call that ends its function returns to the next one. */
	if (!addr || !ksyms_lookup(k, addr - 1, name, off, mod))
		return 0;
	++*off;
	return 1;
}

bool ksyms_frame_exact(const struct ksyms *k, const uint64_t *frames, unsigned int i)
{
	uint64_t call;
	unsigned int e;

	if (!k || !i || !frames[i - 1])
		return false;
	call = frames[i - 1] - 1;
	for (e = 0; e < k->nentry; e++)
		if (call >= k->entry[e].start && call < k->entry[e].end)
			return true;
	return false;
}

int ksyms_lookup_frame(const struct ksyms *k, uint64_t addr, bool exact, const char **name,
		       uint64_t *off, const char **mod)
{
	return exact ? ksyms_lookup(k, addr, name, off, mod) :
		       ksyms_lookup_ret(k, addr, name, off, mod);
}

int ksyms_lookup_stack(const struct ksyms *k, const uint64_t *frames, unsigned int i,
		       const char **name, uint64_t *off, const char **mod)
{
	return ksyms_lookup_frame(k, frames[i], ksyms_frame_exact(k, frames, i), name, off, mod);
}

static char *format(const struct ksyms *k, uint64_t addr, bool ret, char *buf, size_t len)
{
	const char *name, *mod;
	uint64_t off;
	size_t mi = k ? mod_of_addr(k, ret && addr ? addr - 1 : addr) : 0;

	if (ret ? ksyms_lookup_ret(k, addr, &name, &off, &mod) :
		  ksyms_lookup(k, addr, &name, &off, &mod)) {
		if (mod)
			snprintf(buf, len, "%s+0x%llx [%s]", name, (unsigned long long)off, mod);
		else
			snprintf(buf, len, "%s+0x%llx", name, (unsigned long long)off);
	} else if (mi) {
		snprintf(buf, len, "0x%llx [%s]", (unsigned long long)addr, k->mods[mi - 1].name);
	} else {
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	}
	return buf;
}

char *ksyms_format(const struct ksyms *k, uint64_t addr, char *buf, size_t len)
{
	return format(k, addr, false, buf, len);
}

char *ksyms_format_ret(const struct ksyms *k, uint64_t addr, char *buf, size_t len)
{
	return format(k, addr, true, buf, len);
}

char *ksyms_format_frame(const struct ksyms *k, uint64_t addr, bool exact, char *buf, size_t len)
{
	return format(k, addr, !exact, buf, len);
}

char *ksyms_format_stack(const struct ksyms *k, const uint64_t *frames, unsigned int i, char *buf,
			 size_t len)
{
	return ksyms_format_frame(k, frames[i], ksyms_frame_exact(k, frames, i), buf, len);
}
