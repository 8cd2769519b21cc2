// SPDX-License-Identifier: GPL-2.0-only
/*
 * gen.c - synthetic trace generator for tests: numbers records per CPU as
 * the module does, encodes them with the library's writer and keeps the
 * tallies tests use as expected values.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gen.h"
#include "kmt_writer.h"

#define GEN_FILE_BUF	(1u << 20)

struct gen_cpu {
	FILE *fp;
	char *path;
	char *iobuf;
	uint32_t seq;
	uint64_t offset;
	uint64_t total_dropped;
	int16_t node;
	uint8_t flags;
	uint16_t stack_id;
};

/* A live object: open addressing, linear probing, backward-shift deletion. */
struct live {
	uint64_t ptr;
	uint32_t site;		/* index into sites + 1; 0 = empty slot */
	uint32_t bytes_alloc;
	uint16_t cpu;
	uint8_t page;
};

struct site_slot {
	uint64_t addr;
	uint32_t idx;		/* index + 1; 0 = empty */
};

struct gen {
	unsigned int ncpus;
	struct gen_opts opts;
	struct gen_cpu *cpu;
	struct gen_totals tot;

	struct live *live;
	size_t live_cap, live_len;

	struct gen_callsite *sites;
	size_t nsites, sites_cap;
	struct site_slot *site_tab;
	size_t site_tab_cap;
	int failed;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static int oom(struct gen *g)
{
	fprintf(stderr, "gen: out of memory\n");
	g->failed = 1;
	return -1;
}

struct gen *gen_open(const char *dir, unsigned int ncpus, const struct gen_opts *opts)
{
	struct gen *g;
	unsigned int i;

	g = calloc(1, sizeof(*g));
	if (!g)
		goto err_nomem;
	if (opts)
		g->opts = *opts;
	if (!g->opts.word_bits)
		g->opts.word_bits = 64;
	if (!g->opts.page_size)
		g->opts.page_size = 4096;
	g->ncpus = ncpus;
	g->cpu = calloc(ncpus ? ncpus : 1, sizeof(*g->cpu));
	if (!g->cpu)
		goto err_nomem;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "gen: cannot create %s: %s\n", dir, strerror(errno));
		goto err_free;
	}
	for (i = 0; i < ncpus; i++) {
		struct gen_cpu *c = &g->cpu[i];
		struct kmt_file_header h;
		uint8_t raw[KMT_RECORD_SIZE];
		size_t sz = strlen(dir) + 32;

		c->path = malloc(sz);
		c->iobuf = malloc(GEN_FILE_BUF);
		if (!c->path || !c->iobuf)
			goto err_nomem;
		snprintf(c->path, sz, "%s/cpu%u.out", dir, i);
		c->fp = fopen(c->path, "wb");
		if (!c->fp) {
			fprintf(stderr, "gen: cannot create %s: %s\n", c->path, strerror(errno));
			goto err_free;
		}
		setvbuf(c->fp, c->iobuf, _IOFBF, GEN_FILE_BUF);
		c->seq = g->opts.first_seq;
		kmt_header_init(&h, i, g->opts.word_bits, g->opts.page_size,
				g->opts.start_mono_ns, g->opts.start_real_ns);
		if (g->opts.cut_ns) {
			h.kind = KMT_FILE_CHECKPOINT;
			h.cut_ns = g->opts.cut_ns;
			h.segment = g->opts.segment;
			h.dropped_records = g->opts.dropped_records;
			if (h.version_minor < KMT_CKPT_MINOR)
				h.version_minor = KMT_CKPT_MINOR;
		}
		if (g->opts.set_minor)
			h.version_minor = g->opts.abi_minor;
		kmt_header_encode(raw, &h, g->opts.big_endian);
		if (fwrite(raw, sizeof(raw), 1, c->fp) != 1) {
			fprintf(stderr, "gen: cannot write %s: %s\n", c->path, strerror(errno));
			goto err_free;
		}
		c->offset = sizeof(raw);
	}
	return g;

err_nomem:
	fprintf(stderr, "gen: out of memory\n");
err_free:
	gen_close(g);
	return NULL;
}

int gen_flush(struct gen *g)
{
	unsigned int i;
	int ret = g->failed ? -1 : 0;

	for (i = 0; i < g->ncpus; i++) {
		if (g->cpu[i].fp && fflush(g->cpu[i].fp) != 0) {
			fprintf(stderr, "gen: cannot write %s: %s\n", g->cpu[i].path,
				strerror(errno));
			ret = -1;
		}
	}
	return ret;
}

int gen_close(struct gen *g)
{
	unsigned int i;
	int ret = 0;

	if (!g)
		return 0;
	if (g->failed)
		ret = -1;
	for (i = 0; g->cpu && i < g->ncpus; i++) {
		struct gen_cpu *c = &g->cpu[i];

		if (c->fp && fclose(c->fp) != 0) {
			fprintf(stderr, "gen: cannot write %s: %s\n", c->path, strerror(errno));
			ret = -1;
		}
		free(c->iobuf);
		free(c->path);
	}
	free(g->cpu);
	free(g->live);
	free(g->sites);
	free(g->site_tab);
	free(g);
	return ret;
}

const char *gen_path(const struct gen *g, unsigned int cpu)
{
	return cpu < g->ncpus ? g->cpu[cpu].path : NULL;
}

void gen_set_cpu_node(struct gen *g, unsigned int cpu, int node)
{
	if (cpu < g->ncpus)
		g->cpu[cpu].node = (int16_t)node;
}

void gen_set_flags(struct gen *g, unsigned int cpu, unsigned int flags)
{
	if (cpu < g->ncpus)
		g->cpu[cpu].flags = (uint8_t)flags;
}

void gen_set_stack(struct gen *g, unsigned int cpu, uint16_t id)
{
	if (cpu < g->ncpus)
		g->cpu[cpu].stack_id = id;
}

uint32_t gen_next_seq(const struct gen *g, unsigned int cpu)
{
	return cpu < g->ncpus ? g->cpu[cpu].seq : 0;
}

void gen_set_seq(struct gen *g, unsigned int cpu, uint32_t seq)
{
	if (cpu < g->ncpus)
		g->cpu[cpu].seq = seq;
}

uint64_t gen_offset(const struct gen *g, unsigned int cpu)
{
	return cpu < g->ncpus ? g->cpu[cpu].offset : 0;
}

int gen_raw_bytes(struct gen *g, unsigned int cpu, const void *buf, size_t len)
{
	struct gen_cpu *c;

	if (cpu >= g->ncpus) {
		fprintf(stderr, "gen: no CPU %u (%u CPUs)\n", cpu, g->ncpus);
		g->failed = 1;
		return -1;
	}
	c = &g->cpu[cpu];
	if (len && fwrite(buf, len, 1, c->fp) != 1) {
		fprintf(stderr, "gen: cannot write %s: %s\n", c->path, strerror(errno));
		g->failed = 1;
		return -1;
	}
	c->offset += len;
	if (len == KMT_RECORD_SIZE)
		g->tot.records++;
	return 0;
}

int gen_raw(struct gen *g, unsigned int cpu, const union kmt_rec *r)
{
	uint8_t raw[KMT_RECORD_SIZE];

	kmt_rec_encode(raw, r, g->opts.big_endian);
	return gen_raw_bytes(g, cpu, raw, sizeof(raw));
}

/* Writes a record of this CPU with the next seq (data) or the current one (LOST). */
static int put(struct gen *g, unsigned int cpu, union kmt_rec *r)
{
	struct gen_cpu *c;

	if (cpu >= g->ncpus) {
		fprintf(stderr, "gen: no CPU %u (%u CPUs)\n", cpu, g->ncpus);
		g->failed = 1;
		return -1;
	}
	c = &g->cpu[cpu];
	r->c.cpu = (uint16_t)cpu;
	r->c.seq = c->seq;
	if (r->c.type != KMT_REC_LOST)
		c->seq++;
	if (gen_raw(g, cpu, r) < 0)
		return -1;
	g->tot.by_type[r->c.type]++;
	return 0;
}

static struct gen_callsite *site_get(struct gen *g, uint64_t addr)
{
	size_t i, mask;

	if ((g->nsites + 1) * 2 > g->site_tab_cap) {
		size_t ncap = g->site_tab_cap ? 2 * g->site_tab_cap : 64;
		struct site_slot *nt = calloc(ncap, sizeof(*nt));

		if (!nt)
			return NULL;
		for (i = 0; i < g->site_tab_cap; i++) {
			size_t j;

			if (!g->site_tab[i].idx)
				continue;
			for (j = mix(g->site_tab[i].addr) & (ncap - 1); nt[j].idx;
			     j = (j + 1) & (ncap - 1))
				;
			nt[j] = g->site_tab[i];
		}
		free(g->site_tab);
		g->site_tab = nt;
		g->site_tab_cap = ncap;
	}
	mask = g->site_tab_cap - 1;
	for (i = mix(addr) & mask; g->site_tab[i].idx; i = (i + 1) & mask)
		if (g->site_tab[i].addr == addr)
			return &g->sites[g->site_tab[i].idx - 1];
	if (g->nsites == g->sites_cap) {
		size_t ncap = g->sites_cap ? 2 * g->sites_cap : 64;
		struct gen_callsite *ns = realloc(g->sites, ncap * sizeof(*ns));

		if (!ns)
			return NULL;
		g->sites = ns;
		g->sites_cap = ncap;
	}
	memset(&g->sites[g->nsites], 0, sizeof(g->sites[0]));
	g->sites[g->nsites].addr = addr;
	g->site_tab[i].addr = addr;
	g->site_tab[i].idx = (uint32_t)++g->nsites;
	return &g->sites[g->nsites - 1];
}

static uint64_t live_hash(uint64_t ptr, int page)
{
	return mix(ptr ^ (page ? 0x9e3779b97f4a7c15ULL : 0));
}

static struct live *live_find(struct gen *g, uint64_t ptr, int page)
{
	size_t i, mask = g->live_cap - 1;

	if (!g->live_cap)
		return NULL;
	for (i = live_hash(ptr, page) & mask; g->live[i].site; i = (i + 1) & mask)
		if (g->live[i].ptr == ptr && g->live[i].page == page)
			return &g->live[i];
	return NULL;
}

static int live_grow(struct gen *g)
{
	size_t ncap = g->live_cap ? 2 * g->live_cap : 1024, i;
	struct live *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -1;
	for (i = 0; i < g->live_cap; i++) {
		size_t j;

		if (!g->live[i].site)
			continue;
		for (j = live_hash(g->live[i].ptr, g->live[i].page) & (ncap - 1); nt[j].site;
		     j = (j + 1) & (ncap - 1))
			;
		nt[j] = g->live[i];
	}
	free(g->live);
	g->live = nt;
	g->live_cap = ncap;
	return 0;
}

/* Removes a slot and closes the gap so probing still finds every entry. */
static void live_remove(struct gen *g, struct live *e)
{
	size_t mask = g->live_cap - 1, i = (size_t)(e - g->live), j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!g->live[j].site)
			break;
		home = live_hash(g->live[j].ptr, g->live[j].page) & mask;
		/* Move j back into the hole i unless its home lies in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			g->live[i] = g->live[j];
			i = j;
		}
	}
	memset(&g->live[i], 0, sizeof(g->live[i]));
	g->live_len--;
}

static void forget(struct gen *g, struct live *e)
{
	struct gen_callsite *s = &g->sites[e->site - 1];

	s->outstanding--;
	s->outstanding_bytes -= e->bytes_alloc;
	g->tot.outstanding--;
	g->tot.outstanding_bytes -= e->bytes_alloc;
	live_remove(g, e);
}

static int tally_alloc(struct gen *g, unsigned int cpu, const struct kmt_event *ev, int page)
{
	struct gen_callsite *s = site_get(g, ev->call_site);
	struct live *e;
	size_t i, mask;

	if (!s)
		return oom(g);
	g->tot.allocs++;
	if (!page && (ev->flags & KMT_F_PROBED))
		g->tot.probed_allocs++;
	if (!page && ev->stack_id)
		g->tot.stack_allocs++;
	if (ev->flags & KMT_F_NO_STACK) {
		if (page)
			g->tot.no_stack_frees++;
		else
			g->tot.no_stack_allocs++;
	}
	s->hits++;
	if (ev->node != KMT_NODE_ANY && ev->node != ev->cpu_node)
		g->tot.cross_node_allocs++;
	if (!ev->ptr) {
		g->tot.failed_allocs++;
		s->failed++;
		return 0;
	}
	g->tot.bytes_req += ev->bytes_req;
	g->tot.bytes_alloc += ev->bytes_alloc;
	s->bytes_req += ev->bytes_req;
	s->bytes_alloc += ev->bytes_alloc;

	/* Reallocated without a free we saw: the old object is gone. */
	e = live_find(g, ev->ptr, page);
	if (e)
		forget(g, e);
	if ((g->live_len + 1) * 2 > g->live_cap && live_grow(g) < 0)
		return oom(g);
	mask = g->live_cap - 1;
	for (i = live_hash(ev->ptr, page) & mask; g->live[i].site; i = (i + 1) & mask)
		;
	g->live[i].ptr = ev->ptr;
	g->live[i].page = (uint8_t)page;
	g->live[i].cpu = (uint16_t)cpu;
	g->live[i].bytes_alloc = ev->bytes_alloc;
	g->live[i].site = (uint32_t)(s - g->sites) + 1;
	g->live_len++;
	s->outstanding++;
	s->outstanding_bytes += ev->bytes_alloc;
	g->tot.outstanding++;
	g->tot.outstanding_bytes += ev->bytes_alloc;
	return 0;
}

static void tally_free(struct gen *g, unsigned int cpu, const struct kmt_event *ev, int page)
{
	struct live *e = live_find(g, ev->ptr, page);
	struct gen_callsite *s;

	g->tot.frees++;
	if (!page && (ev->flags & KMT_F_PROBED))
		g->tot.probed_frees++;
	if (ev->flags & KMT_F_NO_STACK)
		g->tot.no_stack_frees++;
	if (!e) {
		g->tot.untracked_frees++;
		return;
	}
	s = &g->sites[e->site - 1];
	g->tot.tracked_frees++;
	g->tot.bytes_freed += e->bytes_alloc;
	s->frees++;
	if (e->cpu != cpu) {
		g->tot.cross_cpu_frees++;
		s->cross_cpu_frees++;
	}
	forget(g, e);
}

/* Writes an event (filling cpu, seq, cpu_node, flags), not tallied. 0 or -1. */
static int put_event(struct gen *g, unsigned int cpu, struct kmt_event *ev)
{
	union kmt_rec r;

	if (ev->type < KMT_REC_KMALLOC || ev->type > KMT_REC_PAGE_FREE) {
		fprintf(stderr, "gen: gen_event() of type %u\n", ev->type);
		g->failed = 1;
		return -1;
	}
	if (cpu >= g->ncpus) {
		fprintf(stderr, "gen: no CPU %u (%u CPUs)\n", cpu, g->ncpus);
		g->failed = 1;
		return -1;
	}
	ev->cpu_node = g->cpu[cpu].node;
	ev->flags |= g->cpu[cpu].flags;
	if (!ev->stack_id)
		ev->stack_id = g->cpu[cpu].stack_id;
	memcpy(&r, ev, sizeof(r));
	if (put(g, cpu, &r) < 0)
		return -1;
	ev->cpu = r.c.cpu;
	ev->seq = r.c.seq;
	return 0;
}

int gen_event(struct gen *g, unsigned int cpu, struct kmt_event *ev)
{
	int page = ev->type == KMT_REC_PAGE_ALLOC || ev->type == KMT_REC_PAGE_FREE;

	if (put_event(g, cpu, ev) < 0)
		return -1;
	if (ev->type <= KMT_REC_PAGE_ALLOC)
		return tally_alloc(g, cpu, ev, page);
	tally_free(g, cpu, ev, page);
	return 0;
}

int gen_dup_event(struct gen *g, unsigned int cpu, struct kmt_event *ev)
{
	if (ev->type != KMT_REC_KMALLOC) {
		fprintf(stderr, "gen: gen_dup_event() of type %u\n", ev->type);
		g->failed = 1;
		return -1;
	}
	if (put_event(g, cpu, ev) < 0)
		return -1;
	g->tot.dup_events++;
	if (ev->flags & KMT_F_NO_STACK)
		g->tot.dup_no_stack_events++;
	return 0;
}

static int event(struct gen *g, unsigned int cpu, unsigned int type, uint64_t ts,
		 uint64_t call_site, uint64_t ptr, uint64_t cache_id, uint32_t req, uint32_t alloc,
		 int32_t node, uint32_t pid)
{
	struct kmt_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = (uint8_t)type;
	ev.timestamp = ts;
	ev.call_site = call_site;
	ev.ptr = ptr;
	ev.cache_id = cache_id;
	ev.bytes_req = req;
	ev.bytes_alloc = alloc;
	/* GFP_KERNEL on 6.1, so allocations carry a plausible mask. */
	ev.gfp_flags = type <= KMT_REC_PAGE_ALLOC ? 0xcc0 : 0;
	ev.node = node;
	ev.pid = pid;
	return gen_event(g, cpu, &ev);
}

int gen_kmalloc(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t call_site, uint64_t ptr,
		uint32_t req, uint32_t alloc, int32_t node, uint32_t pid)
{
	return event(g, cpu, KMT_REC_KMALLOC, ts, call_site, ptr, 0, req, alloc, node, pid);
}

int gen_kfree(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t call_site, uint64_t ptr,
	      uint32_t pid)
{
	return event(g, cpu, KMT_REC_KFREE, ts, call_site, ptr, 0, 0, 0, KMT_NODE_ANY, pid);
}

int gen_cache_alloc(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t call_site,
		    uint64_t ptr, uint64_t cache_id, uint32_t req, uint32_t alloc, int32_t node,
		    uint32_t pid)
{
	return event(g, cpu, KMT_REC_CACHE_ALLOC, ts, call_site, ptr, cache_id, req, alloc, node,
		     pid);
}

int gen_cache_free(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t call_site,
		   uint64_t ptr, uint64_t cache_id, uint32_t pid)
{
	return event(g, cpu, KMT_REC_CACHE_FREE, ts, call_site, ptr, cache_id, 0, 0, KMT_NODE_ANY,
		     pid);
}

int gen_page_alloc(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t call_site,
		   uint64_t pfn, unsigned int order, int32_t node, uint32_t pid)
{
	uint32_t bytes = g->opts.page_size << order;

	return event(g, cpu, KMT_REC_PAGE_ALLOC, ts, call_site, pfn, 0, bytes, bytes, node, pid);
}

int gen_page_free(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t call_site,
		  uint64_t pfn, unsigned int order, uint32_t pid)
{
	return event(g, cpu, KMT_REC_PAGE_FREE, ts, call_site, pfn, 0, 0,
		     g->opts.page_size << order, KMT_NODE_ANY, pid);
}

int gen_cache_desc(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t cache_id,
		   uint32_t object_size, uint32_t size, const char *name)
{
	union kmt_rec r;
	size_t len = strlen(name);

	memset(&r, 0, sizeof(r));
	r.cache.type = KMT_REC_CACHE_DESC;
	r.cache.timestamp = ts;
	r.cache.cache_id = cache_id;
	r.cache.object_size = object_size;
	r.cache.size = size;
	if (len >= KMT_CACHE_NAME_LEN) {
		len = KMT_CACHE_NAME_LEN - 1;
		r.cache.flags |= KMT_F_NAME_TRUNC;
	}
	memcpy(r.cache.name, name, len);
	if (put(g, cpu, &r) < 0)
		return -1;
	g->tot.cache_descs++;
	return 0;
}

int gen_stack(struct gen *g, unsigned int cpu, uint64_t ts, uint16_t id, const uint64_t *frames,
	      unsigned int depth)
{
	unsigned int first, i;
	union kmt_rec r;

	if (!depth || depth > KMT_STACK_MAX_DEPTH) {
		fprintf(stderr, "gen: stack of depth %u\n", depth);
		g->failed = 1;
		return -1;
	}
	for (first = 0; first < depth; first += KMT_STACK_SLOT_FRAMES) {
		memset(&r, 0, sizeof(r));
		r.stack.type = KMT_REC_STACK;
		r.stack.timestamp = ts;
		r.stack.stack_id = id;
		r.stack.depth = (uint8_t)depth;
		r.stack.first = (uint8_t)first;
		r.stack.nframes = (uint8_t)(depth - first < KMT_STACK_SLOT_FRAMES ? depth - first :
					    KMT_STACK_SLOT_FRAMES);
		for (i = 0; i < r.stack.nframes; i++)
			r.stack.frames[i] = frames[first + i];
		if (put(g, cpu, &r) < 0)
			return -1;
	}
	g->tot.stacks++;
	return 0;
}

int gen_lost(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t count)
{
	union kmt_rec r;

	if (cpu >= g->ncpus) {
		fprintf(stderr, "gen: no CPU %u (%u CPUs)\n", cpu, g->ncpus);
		g->failed = 1;
		return -1;
	}
	g->cpu[cpu].seq += (uint32_t)count;
	g->cpu[cpu].total_dropped += count;
	memset(&r, 0, sizeof(r));
	r.lost.type = KMT_REC_LOST;
	r.lost.timestamp = ts;
	r.lost.count = count;
	r.lost.first_lost_ns = ts;
	r.lost.total_dropped = g->cpu[cpu].total_dropped;
	if (put(g, cpu, &r) < 0)
		return -1;
	g->tot.lost_markers++;
	g->tot.lost += count;
	return 0;
}

const struct gen_totals *gen_totals(const struct gen *g)
{
	return &g->tot;
}

size_t gen_ncallsites(const struct gen *g)
{
	return g->nsites;
}

const struct gen_callsite *gen_callsite_at(const struct gen *g, size_t i)
{
	return i < g->nsites ? &g->sites[i] : NULL;
}

const struct gen_callsite *gen_callsite_find(const struct gen *g, uint64_t addr)
{
	size_t i, mask = g->site_tab_cap - 1;

	if (!g->site_tab_cap)
		return NULL;
	for (i = mix(addr) & mask; g->site_tab[i].idx; i = (i + 1) & mask)
		if (g->site_tab[i].addr == addr)
			return &g->sites[g->site_tab[i].idx - 1];
	return NULL;
}

int gen_write_file(const char *path, const void *buf, size_t len)
{
	FILE *fp = fopen(path, "wb");
	int ret = 0;

	if (!fp)
		return -1;
	if (len && fwrite(buf, len, 1, fp) != 1)
		ret = -1;
	if (fclose(fp) != 0)
		ret = -1;
	return ret;
}

int gen_patch_file(const char *path, uint64_t offset, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pwrite(fd, buf, len, (off_t)offset);
	if (close(fd) != 0 || n != (ssize_t)len)
		return -1;
	return 0;
}

uint64_t gen_xorshift(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

char *gen_mkdtemp(const char *tag)
{
	const char *tmp = getenv("TMPDIR");
	size_t sz;
	char *p;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	sz = strlen(tmp) + strlen(tag) + 32;
	p = malloc(sz);
	if (!p)
		return NULL;
	snprintf(p, sz, "%s/kmt-%s.XXXXXX", tmp, tag);
	if (!mkdtemp(p)) {
		fprintf(stderr, "gen: mkdtemp %s: %s\n", p, strerror(errno));
		free(p);
		return NULL;
	}
	return p;
}

int gen_rm_rf(const char *dir)
{
	struct dirent *de;
	int ret = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno == EISDIR) {
			size_t sz = strlen(dir) + strlen(de->d_name) + 2;
			char *sub = malloc(sz);

			if (!sub) {
				ret = -1;
				continue;
			}
			snprintf(sub, sz, "%s/%s", dir, de->d_name);
			if (gen_rm_rf(sub) < 0)
				ret = -1;
			free(sub);
		}
	}
	closedir(d);
	if (rmdir(dir) < 0)
		ret = -1;
	return ret;
}
