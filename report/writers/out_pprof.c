// SPDX-License-Identifier: GPL-2.0-only
/*
 * out_pprof.c - kmemtrace-report --pprof: the selected slab allocations as
 * a pprof profile, encoded by libprotobuf-c from report/writers/pprof.proto
 * and gzipped by zlib, as go tool pprof, Pyroscope and Parca read it.
 *
 * One sample per call site, stack, cache and CPU (rpt_sample): its frames
 * the stack's (innermost first), or the call site alone for an event
 * without one; labels "cache" and "cpu" for pprof's -tagfocus and
 * -tagshow. The sample types are the names Go's heap profiles use, so that
 * pprof's -alloc_space, -inuse_objects... and the profilers' memory views
 * know them.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "pprof.pb-c.h"
#include "core/report_meta.h"
#include "sym/sym_kallsyms.h"
#include "views/symtab.h"
#include "writers/out_pprof.h"

/* The sample types, in the order of each sample's values. */
enum { PV_ALLOC_OBJECTS, PV_ALLOC_SPACE, PV_INUSE_OBJECTS, PV_INUSE_SPACE,
	PV_REQUESTED_SPACE, PV_FAILED, PV_N };

static const char *const value_names[PV_N][2] = {
	[PV_ALLOC_OBJECTS] = { "alloc_objects", "count" },
	[PV_ALLOC_SPACE] = { "alloc_space", "bytes" },
	[PV_INUSE_OBJECTS] = { "inuse_objects", "count" },	/* outstanding at the end */
	[PV_INUSE_SPACE] = { "inuse_space", "bytes" },
	[PV_REQUESTED_SPACE] = { "requested_space", "bytes" },	/* bytes_req */
	[PV_FAILED] = { "failed_allocs", "count" },
};

/* What pprof shows unless told otherwise: the bytes allocated. */
#define PV_DEFAULT	PV_ALLOC_SPACE

/*
 * Three labels a sample at most: its cache (when it has one), its CPU, and
 * "stack: none" for an event without one in a trace with stacks.
 */
#define NLABELS		3

struct pmap {
	int64_t file;		/* string id: "[kernel.kallsyms]", "[module]", "[unknown]" */
	uint64_t lo, hi;	/* the lowest and highest frame address in it */
};

struct pfunc {
	uint64_t key;		/* name id << 32 | file id */
	size_t loc;		/* a location of it */
};

struct pp {
	const struct rpt *r;
	const struct out_opts *o;
	struct symtab st;	/* the frame addresses, sorted: location i + 1 is st.v[i] */
	/* The string table, and an open-addressing index of it (slot: id + 1, 0 empty). */
	char **strs;
	size_t nstr, strcap;
	uint32_t *slots;
	unsigned int sbits;

	KmtPprof__ValueType vt[PV_N + 1], *vtp[PV_N];
	KmtPprof__Mapping *maps, **mapp;
	struct pmap *pm;
	size_t nmaps;
	KmtPprof__Location *locs, **locp;
	KmtPprof__Line *lines, **linep;
	KmtPprof__Function *funcs, **funcp;
	size_t nfuncs;
	KmtPprof__Sample *smp, **smpp;
	size_t nsmp, nframes;	/* samples written, and their frames in all */
	int64_t *values;
	uint64_t *lids;
	KmtPprof__Label *labels, **labelp;
	int64_t *comments;
	size_t ncomments;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static void str_place(uint32_t *slots, unsigned int bits, char *const *strs, uint32_t id)
{
	size_t mask = ((size_t)1 << bits) - 1, i;

	for (i = str_hash(strs[id]) & mask; slots[i]; i = (i + 1) & mask)
		;
	slots[i] = id + 1;
}

/* The string table index of s, added the first time; -1 out of memory. */
static int64_t str_id(struct pp *p, const char *s)
{
	size_t mask, i;

	if (p->sbits) {
		mask = ((size_t)1 << p->sbits) - 1;
		for (i = str_hash(s) & mask; p->slots[i]; i = (i + 1) & mask)
			if (!strcmp(p->strs[p->slots[i] - 1], s))
				return p->slots[i] - 1;
	}
	if (p->nstr == p->strcap) {
		size_t ncap = p->strcap ? 2 * p->strcap : 256;
		char **n = realloc(p->strs, ncap * sizeof(*n));

		if (!n)
			return -1;
		p->strs = n;
		p->strcap = ncap;
	}
	/* Under half full, so that probes stay short. */
	if (2 * (p->nstr + 1) > ((size_t)1 << p->sbits)) {
		unsigned int nb = p->sbits ? p->sbits + 1 : 9;
		uint32_t *ns = calloc((size_t)1 << nb, sizeof(*ns));

		if (!ns)
			return -1;
		for (i = 0; i < p->nstr; i++)
			str_place(ns, nb, p->strs, (uint32_t)i);
		free(p->slots);
		p->slots = ns;
		p->sbits = nb;
	}
	p->strs[p->nstr] = strdup(s);
	if (!p->strs[p->nstr])
		return -1;
	str_place(p->slots, p->sbits, p->strs, (uint32_t)p->nstr);
	return (int64_t)p->nstr++;
}

/* The frames of sample s, innermost first: its stack's, or its call site alone. */
static const uint64_t *sample_frames(const struct rpt *r, const struct rpt_sample *s,
				     unsigned int *depth)
{
	const uint64_t *fr = NULL;

	if (s->stack != KMT_STACK_NONE)
		fr = kmt_stacks_frames(rpt_stacks(r), s->stack, depth);
	if (!fr || !*depth) {
		*depth = 1;
		fr = &rpt_site(r, s->site)->addr;
	}
	return fr;
}

static bool sample_counts(const struct rpt_sample *s)
{
	return s->hits || s->out_count;
}

/* Every frame address, resolved once (symtab: sorted, file:line from --vmlinux/--ko). */
static int add_frames(struct pp *p)
{
	size_t i, nsamples = rpt_nsamples(p->r);
	unsigned int d;

	for (i = 0; i < nsamples; i++) {
		const struct rpt_sample *s = rpt_sample(p->r, i);
		const uint64_t *fr;

		if (!sample_counts(s))
			continue;
		fr = sample_frames(p->r, s, &d);
		if (symtab_add_stack(&p->st, p->o->ks, fr, d))
			return -1;
		p->nsmp++;
		p->nframes += d;
	}
	return symtab_resolve(&p->st, p->o);
}

/* The mapping a location of module mod (NULL: the kernel; "": unknown) belongs to. */
static int mapping_of(struct pp *p, const char *mod, uint64_t addr, uint64_t *id)
{
	char name[256];
	int64_t file;
	size_t i;

	if (!mod)
		snprintf(name, sizeof(name), "[kernel.kallsyms]");
	else
		snprintf(name, sizeof(name), "[%s]", *mod ? mod : "unknown");
	file = str_id(p, name);
	if (file < 0)
		return -1;
	for (i = 0; i < p->nmaps && p->pm[i].file != file; i++)
		;
	if (i == p->nmaps) {
		p->pm[i] = (struct pmap){ .file = file, .lo = addr, .hi = addr };
		p->nmaps++;
	}
	if (addr < p->pm[i].lo)
		p->pm[i].lo = addr;
	if (addr > p->pm[i].hi)
		p->pm[i].hi = addr;
	*id = i + 1;
	return 0;
}

static int func_cmp(const void *pa, const void *pb)
{
	const struct pfunc *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->loc < b->loc ? -1 : a->loc > b->loc;
}

/*
 * A location per frame address, each with one line: the function holding
 * the call (a frame is a return address, named as the report names it),
 * "fn [module]" for a module's, "0x..." when nothing names it. Functions
 * are made once per name and source file.
 */
static int build_locations(struct pp *p)
{
	size_t n = p->st.n, i, f;
	struct pfunc *pf = calloc(n ? n : 1, sizeof(*pf));
	int ret = -1;

	p->locs = calloc(n ? n : 1, sizeof(*p->locs));
	p->locp = calloc(n ? n : 1, sizeof(*p->locp));
	p->lines = calloc(n ? n : 1, sizeof(*p->lines));
	p->linep = calloc(n ? n : 1, sizeof(*p->linep));
	p->pm = calloc(n + 1, sizeof(*p->pm));
	if (!pf || !p->locs || !p->locp || !p->lines || !p->linep || !p->pm)
		goto out;
	for (i = 0; i < n; i++) {
		const struct symres *sr = &p->st.v[i];
		const char *fn = NULL, *mod = "";
		char name[600];
		uint64_t off;
		int64_t nid, fid = 0;

		if (!p->o->raw_ip && p->o->ks &&
		    ksyms_lookup_frame(p->o->ks, sr->addr, sr->exact, &fn, &off, &mod))
			snprintf(name, sizeof(name), mod ? "%s [%s]" : "%s", fn, mod);
		else
			snprintf(name, sizeof(name), "0x%" PRIx64, sr->addr);
		nid = str_id(p, name);
		if (sr->file)
			fid = str_id(p, sr->file);
		if (nid < 0 || fid < 0)
			goto out;
		kmt_pprof__location__init(&p->locs[i]);
		kmt_pprof__line__init(&p->lines[i]);
		p->locs[i].id = i + 1;
		p->locs[i].address = sr->addr;
		if (mapping_of(p, mod, sr->addr, &p->locs[i].mapping_id))
			goto out;
		p->lines[i].line = sr->file ? sr->line : 0;
		p->linep[i] = &p->lines[i];
		p->locs[i].n_line = 1;
		p->locs[i].line = &p->linep[i];
		p->locp[i] = &p->locs[i];
		pf[i] = (struct pfunc){ .key = (uint64_t)nid << 32 | (uint64_t)fid, .loc = i };
	}
	if (n)
		qsort(pf, n, sizeof(*pf), func_cmp);
	p->funcs = calloc(n ? n : 1, sizeof(*p->funcs));
	p->funcp = calloc(n ? n : 1, sizeof(*p->funcp));
	if (!p->funcs || !p->funcp)
		goto out;
	for (i = 0; i < n; i++) {
		if (!i || pf[i].key != pf[i - 1].key) {
			f = p->nfuncs++;
			kmt_pprof__function__init(&p->funcs[f]);
			p->funcs[f].id = f + 1;
			p->funcs[f].name = (int64_t)(pf[i].key >> 32);
			p->funcs[f].system_name = p->funcs[f].name;
			p->funcs[f].filename = (int64_t)(pf[i].key & UINT32_MAX);
			p->funcp[f] = &p->funcs[f];
		}
		p->lines[pf[i].loc].function_id = p->nfuncs;
	}
	ret = 0;
out:
	free(pf);
	return ret;
}

static int build_mappings(struct pp *p)
{
	size_t i;

	p->maps = calloc(p->nmaps ? p->nmaps : 1, sizeof(*p->maps));
	p->mapp = calloc(p->nmaps ? p->nmaps : 1, sizeof(*p->mapp));
	if (!p->maps || !p->mapp)
		return -1;
	for (i = 0; i < p->nmaps; i++) {
		KmtPprof__Mapping *m = &p->maps[i];

		kmt_pprof__mapping__init(m);
		m->id = i + 1;
		m->memory_start = p->pm[i].lo;
		m->memory_limit = p->pm[i].hi + 1;
		m->filename = p->pm[i].file;
		/* Named here: readers need not (and, without the kernel's files, could not). */
		m->has_functions = 1;
		m->has_filenames = m->has_line_numbers = p->o->sl != NULL;
		p->mapp[i] = m;
	}
	return 0;
}

static int build_samples(struct pp *p)
{
	size_t n = p->nsmp, i, j = 0, nf = 0, nsamples = rpt_nsamples(p->r);
	int64_t cache_key = str_id(p, "cache"), cpu_key = str_id(p, "cpu");
	int64_t count_unit = str_id(p, "count");
	int64_t stack_key = str_id(p, "stack"), none_str = str_id(p, "none");
	unsigned int k, d;

	if (cache_key < 0 || cpu_key < 0 || count_unit < 0 || stack_key < 0 || none_str < 0)
		return -1;
	p->smp = calloc(n ? n : 1, sizeof(*p->smp));
	p->smpp = calloc(n ? n : 1, sizeof(*p->smpp));
	p->values = calloc(n * PV_N + 1, sizeof(*p->values));
	p->labels = calloc(n * NLABELS + 1, sizeof(*p->labels));
	p->labelp = calloc(n * NLABELS + 1, sizeof(*p->labelp));
	p->lids = calloc(p->nframes + 1, sizeof(*p->lids));
	if (!p->smp || !p->smpp || !p->values || !p->labels || !p->labelp || !p->lids)
		return -1;
	for (i = 0; i < nsamples; i++) {
		const struct rpt_sample *s = rpt_sample(p->r, i);
		KmtPprof__Sample *ps = &p->smp[j];
		int64_t *v = &p->values[j * PV_N];
		KmtPprof__Label *l = &p->labels[j * NLABELS];
		const uint64_t *fr;

		if (!sample_counts(s))
			continue;
		kmt_pprof__sample__init(ps);
		fr = sample_frames(p->r, s, &d);
		ps->location_id = &p->lids[nf];
		for (k = 0; k < d; k++)
			p->lids[nf++] = (uint64_t)(symtab_get_stack(&p->st, p->o->ks, fr, k) -
						   p->st.v) + 1;
		ps->n_location_id = d;
		v[PV_ALLOC_OBJECTS] = (int64_t)(s->hits - s->failed);
		v[PV_ALLOC_SPACE] = (int64_t)s->bytes_alloc;
		v[PV_INUSE_OBJECTS] = (int64_t)s->out_count;
		v[PV_INUSE_SPACE] = (int64_t)s->out_bytes;
		v[PV_REQUESTED_SPACE] = (int64_t)s->bytes_req;
		v[PV_FAILED] = (int64_t)s->failed;
		ps->value = v;
		ps->n_value = PV_N;
		ps->label = &p->labelp[j * NLABELS];
		/* pprof -tagignore=stack=none: the stacks alone, as --stacks counts them. */
		if (s->stack == KMT_STACK_NONE && rpt_has_stacks(p->r)) {
			kmt_pprof__label__init(l);
			l->key = stack_key;
			l->str = none_str;
			ps->label[ps->n_label++] = l++;
		}
		if (s->cache != UINT32_MAX) {
			kmt_pprof__label__init(l);
			l->key = cache_key;
			l->str = str_id(p, rpt_cache(p->r, s->cache)->name);
			if (l->str < 0)
				return -1;
			ps->label[ps->n_label++] = l++;
		}
		kmt_pprof__label__init(l);
		l->key = cpu_key;
		l->num = s->cpu;
		/* A unit keeps CPU 0, whose num is the default readers take for "not numeric". */
		l->num_unit = count_unit;
		ps->label[ps->n_label++] = l;
		p->smpp[j++] = ps;
	}
	return 0;
}

/* A line of the profile's comments (pprof -comments prints them). */
static int comment(struct pp *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int comment(struct pp *p, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int64_t id;
	int64_t *n;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	id = str_id(p, buf);
	n = realloc(p->comments, (p->ncomments + 1) * sizeof(*n));
	if (id < 0 || !n)
		return -1;
	p->comments = n;
	p->comments[p->ncomments++] = id;
	return 0;
}

/* What the profile holds, for pprof -comments: the trace, its kernel, the filters, losses. */
static int build_comments(struct pp *p)
{
	const struct out_opts *o = p->o;
	const struct rpt_totals *t = rpt_totals(p->r);
	const char *rel = o->meta ? meta_get(o->meta, "kernel_release") : NULL;
	const char *mach = o->meta ? meta_get(o->meta, "machine") : NULL;

	if (comment(p, "kmemtrace-report %s: slab allocations of %s (%zu file%s)", KMT_VERSION,
		    o->trace ? o->trace : "?", o->nfiles, o->nfiles == 1 ? "" : "s") ||
	    comment(p, "kernel %s%s%s", rel ? rel : "unknown", mach ? " " : "", mach ? mach : "") ||
	    comment(p, "inuse_*: outstanding at the end (of the --time window); alloc_objects: "
		    "successful allocations; failed_allocs: those that returned NULL"))
		return -1;
	if (o->filters && comment(p, "filters: %s", o->filters))
		return -1;
	if (o->rotated &&
	    comment(p, "rotated: records before %" PRIu64 " ns (the cut) were folded into a "
		    "checkpoint: %" PRIu64 " records of dropped segments, folded, not lost; "
		    "counted here as their events", o->cut_ns, o->folded_records))
		return -1;
	if (t->lost + o->lost_unmarked &&
	    comment(p, "%" PRIu64 " records were lost: every number is a lower bound",
		    t->lost + o->lost_unmarked))
		return -1;
	if (rpt_has_stacks(p->r) && t->allocs > t->stack_allocs &&
	    comment(p, "%" PRIu64 " allocation events without a stack: their call site alone, "
		    "labelled stack=none",
		    t->allocs - t->stack_allocs))
		return -1;
	return 0;
}

static int build(struct pp *p, KmtPprof__Profile *pr)
{
	const struct rpt_totals *t = rpt_totals(p->r);
	size_t i;

	kmt_pprof__profile__init(pr);
	if (str_id(p, "") != 0)		/* string 0 is "" */
		return -1;
	for (i = 0; i <= PV_N; i++)
		kmt_pprof__value_type__init(&p->vt[i]);
	for (i = 0; i < PV_N; i++) {
		p->vt[i].type = str_id(p, value_names[i][0]);
		p->vt[i].unit = str_id(p, value_names[i][1]);
		if (p->vt[i].type < 0 || p->vt[i].unit < 0)
			return -1;
		p->vtp[i] = &p->vt[i];
	}
	if (add_frames(p) || build_locations(p) || build_mappings(p) || build_samples(p) ||
	    build_comments(p))
		return -1;
	pr->n_sample_type = PV_N;
	pr->sample_type = p->vtp;
	pr->default_sample_type = p->vt[PV_DEFAULT].type;
	/* Not sampled: each allocation is one event of the profile. */
	p->vt[PV_N] = p->vt[PV_ALLOC_OBJECTS];
	pr->period_type = &p->vt[PV_N];
	pr->period = 1;
	pr->n_sample = p->nsmp;
	pr->sample = p->smpp;
	pr->n_mapping = p->nmaps;
	pr->mapping = p->mapp;
	pr->n_location = p->st.n;
	pr->location = p->locp;
	pr->n_function = p->nfuncs;
	pr->function = p->funcp;
	pr->n_comment = p->ncomments;
	pr->comment = p->comments;
	if (t->seen_any) {
		/* The header maps the monotonic timestamps to wall time. */
		if (p->o->start_real_ns && t->first_ts >= p->o->start_mono_ns)
			pr->time_nanos = (int64_t)(p->o->start_real_ns +
						   (t->first_ts - p->o->start_mono_ns));
		pr->duration_nanos = (int64_t)(t->last_ts - t->first_ts);
	}
	/* Last: every string is in by now. */
	pr->n_string_table = p->nstr;
	pr->string_table = p->strs;
	return 0;
}

static void pp_free(struct pp *p)
{
	size_t i;

	symtab_free(&p->st);
	for (i = 0; i < p->nstr; i++)
		free(p->strs[i]);
	free(p->strs);
	free(p->slots);
	free(p->maps);
	free(p->mapp);
	free(p->pm);
	free(p->locs);
	free(p->locp);
	free(p->lines);
	free(p->linep);
	free(p->funcs);
	free(p->funcp);
	free(p->smp);
	free(p->smpp);
	free(p->values);
	free(p->lids);
	free(p->labels);
	free(p->labelp);
	free(p->comments);
}

/* buf gzipped into fd. 0, or an errno value. */
static int write_gzip(int fd, const uint8_t *buf, size_t len)
{
	unsigned char out[65536];
	z_stream z = { 0 };
	int zr, ret = 0;

	/* 15 + 16: a gzip header and trailer around the deflate stream, as pprof expects. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return ENOMEM;
	z.next_in = (unsigned char *)buf;
	z.avail_in = (uInt)len;	/* the caller keeps len below 4 GiB */
	do {
		size_t have, off = 0;

		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			ret = EIO;
			break;
		}
		have = sizeof(out) - z.avail_out;
		while (off < have) {
			ssize_t w = write(fd, out + off, have - off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				ret = errno;
				goto out;
			}
			off += (size_t)w;
		}
	} while (zr != Z_STREAM_END);
out:
	deflateEnd(&z);
	return ret;
}

/* The encoded profile to path, by way of a temporary file beside it. 0, or an errno value. */
static int write_atomic(const char *path, const uint8_t *buf, size_t len)
{
	char *tmp = NULL;
	mode_t mask;
	int fd, ret;

	if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return ENOMEM;
	fd = mkstemp(tmp);
	if (fd < 0) {
		ret = errno;
		free(tmp);
		return ret;
	}
	/* mkstemp() makes it 0600: give it what a plain fopen() would. */
	mask = umask(0);
	umask(mask);
	ret = write_gzip(fd, buf, len);
	if (!ret && fchmod(fd, 0666 & ~mask))
		ret = errno;
	if (!ret && fsync(fd))
		ret = errno;
	if (close(fd) && !ret)
		ret = errno;
	if (!ret && rename(tmp, path))
		ret = errno;
	if (ret)
		unlink(tmp);
	free(tmp);
	return ret;
}

int pprof_write_file(const char *path, const struct rpt *r, const struct out_opts *o)
{
	struct pp p = { .r = r, .o = o };
	KmtPprof__Profile pr;
	uint8_t *buf = NULL;
	size_t len;
	int ret = -1;

	if (build(&p, &pr))
		goto out;
	len = kmt_pprof__profile__get_packed_size(&pr);
	if (len > UINT32_MAX) {
		ret = EFBIG;
		goto out;
	}
	buf = malloc(len ? len : 1);
	if (!buf)
		goto out;
	kmt_pprof__profile__pack(&pr, buf);
	ret = write_atomic(path, buf, len);
	if (ret == ENOMEM)
		ret = -1;
out:
	free(buf);
	pp_free(&p);
	return ret;
}
