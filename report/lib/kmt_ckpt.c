// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_ckpt.c - the fold behind a rotated trace's checkpoint: the records
 * of dropped segments a report of the kept ones still needs, verbatim, and
 * sums of what it does not (trace-format.md, section 10).
 *
 * Only what can be summed without changing a report is summed: an
 * allocation and the free that ends it, where the report would find
 * nothing odd in the pair, and failed allocations. A pair is summed only
 * once as many frees followed it as the report remembers a freed object
 * for (its FREED_WINDOW, counted over every free of an address): a
 * second free of the address before then is a double free to the
 * report, so the pair and that free stay verbatim. Everything else stays
 * verbatim: cache descriptions, stacks, LOST records, page events, frees
 * of objects never seen allocated, and every record of an address once it
 * did something the report calls an error (allocated twice, freed by the
 * wrong kind of free or cache, a short allocation). So a report over the
 * checkpoint and the kept segments sees the same live objects, with the
 * records that made them, and the same per call site, cache and stack
 * totals as over the whole run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmt_ckpt.h"
#include "kmt_reader_int.h"
#include "kmt_writer.h"

#define ST_EMPTY	0
#define ST_LIVE		1	/* r is the allocation, waiting for its free */
#define ST_ODD		2	/* every record of the address is kept */
#define ST_FREED	3	/* freed by the pair in ring slot serial, not yet summed */

/*
 * The report's FREED_WINDOW (report/core/report_core_int.h): a free of an
 * address freed fewer than this many slab frees ago (of any address,
 * whatever they were) is a double free, one later a free of an object
 * never seen. Fuzz builds
 * shrink both alike.
 */
#ifndef FREED_BITS
#define FREED_BITS	16
#endif
#define FREED_WINDOW	(1u << FREED_BITS)

/* 80 bytes: an address, its state and its allocation as recorded. */
struct live {
	uint64_t ptr;
	uint64_t serial;	/* order fed, to write the kept records in order */
	union kmt_rec r;
};

/* A record kept verbatim. */
struct kept {
	uint64_t serial;
	union kmt_rec r;
};

struct sum_key {
	uint64_t call_site, cache_id;
	uint32_t size;		/* a kmalloc's bytes_alloc: its kmalloc-N, which a report needs */
	uint16_t cpu, stack_id;
	uint8_t alloc_type, flags, sum_kind, pad;
};

struct sum {
	struct sum_key k;
	uint64_t count, bytes_req, bytes_alloc, cross_cpu, cross_node;
	bool used;		/* a slot of the table (count may be 0 for a while) */
};

/* A pair freed among the last FREED_WINDOW frees, not summed yet. */
struct pair {
	union kmt_rec a, f;
	uint64_t sa, sf;	/* their serials */
	bool used;
};

struct kmt_ckpt {
	struct live *live;	/* open addressing, linear probing, by ptr */
	uint8_t *state;		/* ST_* of each slot */
	size_t live_cap, live_used, nlive;

	struct kept *kept;
	size_t nkept, kept_cap;

	struct sum *sums;	/* open addressing by sum_key */
	size_t sums_cap, nsums;

	struct pair *ring;	/* [FREED_WINDOW], by free number; allocated at the first pair */
	uint64_t frees;		/* frees of an address so far, as the report numbers them */

	uint64_t serial, folded;
	uint64_t *dropped;	/* records fed, by CPU (65536 entries once a record came) */
	uint8_t *cpus;		/* CPUs whose files were folded */
	struct kmt_file_header hdr;	/* of the first file folded, host order */
	int have_hdr, big_endian;
};

/* The home slot of key in a table of cap (a power of two, at least 2) slots. */
static size_t home_of(uint64_t key, size_t cap)
{
	return kmt_hash_slot(key, (unsigned int)__builtin_ctzll(cap));
}

struct kmt_ckpt *kmt_ckpt_new(void)
{
	struct kmt_ckpt *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->live_cap = 1024;
	k->sums_cap = 256;
	k->live = calloc(k->live_cap, sizeof(*k->live));
	k->state = calloc(k->live_cap, 1);
	k->sums = calloc(k->sums_cap, sizeof(*k->sums));
	k->dropped = calloc(65536, sizeof(*k->dropped));
	k->cpus = calloc(65536, 1);
	if (!k->live || !k->state || !k->sums || !k->dropped || !k->cpus) {
		kmt_ckpt_free(k);
		return NULL;
	}
	return k;
}

void kmt_ckpt_free(struct kmt_ckpt *k)
{
	if (!k)
		return;
	free(k->live);
	free(k->state);
	free(k->kept);
	free(k->sums);
	free(k->ring);
	free(k->dropped);
	free(k->cpus);
	free(k);
}

/* ---- the address table */

static size_t slot_of(const struct kmt_ckpt *k, uint64_t ptr)
{
	size_t mask = k->live_cap - 1, i;

	for (i = home_of(ptr, k->live_cap); k->state[i] != ST_EMPTY; i = (i + 1) & mask)
		if (k->live[i].ptr == ptr)
			return i;
	return i;
}

static int live_grow(struct kmt_ckpt *k)
{
	size_t oldcap = k->live_cap, cap = oldcap * 2, i;
	struct live *ol = k->live;
	uint8_t *os = k->state;

	k->live = calloc(cap, sizeof(*k->live));
	k->state = calloc(cap, 1);
	if (!k->live || !k->state) {
		free(k->live);
		free(k->state);
		k->live = ol;
		k->state = os;
		return -1;
	}
	k->live_cap = cap;
	for (i = 0; i < oldcap; i++) {
		size_t j;

		if (os[i] == ST_EMPTY)
			continue;
		j = slot_of(k, ol[i].ptr);
		k->live[j] = ol[i];
		k->state[j] = os[i];
	}
	free(ol);
	free(os);
	return 0;
}

/* Empties slot i, moving later slots of its probe run back (no tombstones). */
static void live_delete(struct kmt_ckpt *k, size_t i)
{
	size_t mask = k->live_cap - 1, j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (k->state[j] == ST_EMPTY)
			break;
		home = home_of(k->live[j].ptr, k->live_cap);
		/* j may move to i if its home is not in (i, j] cyclically. */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			k->live[i] = k->live[j];
			k->state[i] = k->state[j];
			i = j;
		}
	}
	k->state[i] = ST_EMPTY;
	k->live_used--;
}

/* ---- kept records and sums */

static int keep(struct kmt_ckpt *k, const union kmt_rec *r, uint64_t serial)
{
	if (k->nkept == k->kept_cap) {
		size_t cap = k->kept_cap ? k->kept_cap * 2 : 1024;
		struct kept *n = realloc(k->kept, cap * sizeof(*n));

		if (!n)
			return -1;
		k->kept = n;
		k->kept_cap = cap;
	}
	k->kept[k->nkept].serial = serial;
	k->kept[k->nkept].r = *r;
	k->nkept++;
	return 0;
}

/* The key's fields in one word, for home_of(). */
static uint64_t key_word(const struct sum_key *x)
{
	uint64_t small = (uint64_t)x->size << 32 | (uint64_t)x->cpu << 16 | x->stack_id;

	return (x->call_site * 31 + x->cache_id) * 31 +
	       (small ^ (uint64_t)x->alloc_type << 56 ^ (uint64_t)x->flags << 48 ^
		(uint64_t)x->sum_kind << 62);
}

static size_t sum_slot(const struct kmt_ckpt *k, const struct sum_key *x)
{
	size_t mask = k->sums_cap - 1, i;

	for (i = home_of(key_word(x), k->sums_cap); k->sums[i].used; i = (i + 1) & mask)
		if (!memcmp(&k->sums[i].k, x, sizeof(*x)))
			return i;
	return i;
}

static struct sum *sum_get(struct kmt_ckpt *k, const struct sum_key *x)
{
	size_t i;

	if ((k->nsums + 1) * 2 > k->sums_cap) {
		size_t oldcap = k->sums_cap, j;
		struct sum *old = k->sums;

		k->sums = calloc(oldcap * 2, sizeof(*k->sums));
		if (!k->sums) {
			k->sums = old;
			return NULL;
		}
		k->sums_cap = oldcap * 2;
		for (j = 0; j < oldcap; j++)
			if (old[j].used)
				k->sums[sum_slot(k, &old[j].k)] = old[j];
		free(old);
	}
	i = sum_slot(k, x);
	if (!k->sums[i].used) {
		k->sums[i].k = *x;
		k->sums[i].used = true;
		k->nsums++;
	}
	return &k->sums[i];
}

static bool cross_node(const struct kmt_event *a)
{
	return a->node != KMT_NODE_ANY && a->node != a->cpu_node;
}

/*
 * Adds an allocation (and its free, for KMT_SUM_FREED) to its key's sum,
 * or with sign -1 takes it back out.
 */
static int sum_change(struct kmt_ckpt *k, const struct kmt_event *a, const struct kmt_event *f,
		      uint8_t kind, int sign)
{
	struct sum_key x;
	struct sum *s;

	memset(&x, 0, sizeof(x));
	x.call_site = a->call_site;
	x.cache_id = a->cache_id;
	x.size = a->type == KMT_REC_KMALLOC ? a->bytes_alloc : 0;
	x.cpu = a->cpu;
	x.stack_id = a->stack_id;
	x.alloc_type = a->type;
	/* The flags of this format's events: a newer minor's bits would not be summed right. */
	x.flags = (a->flags & (KMT_F_HARDIRQ | KMT_F_SOFTIRQ | KMT_F_CLAMPED | KMT_F_NAME_TRUNC |
			       KMT_F_PROBED | KMT_F_NO_STACK)) |
		  (f && (f->flags & KMT_F_PROBED) ? KMT_SUM_F_FREE_PROBED : 0);
	x.sum_kind = kind;
	s = sum_get(k, &x);
	if (!s)
		return -1;
	s->count += (uint64_t)(int64_t)sign;
	s->bytes_req += (uint64_t)((int64_t)sign * a->bytes_req);
	s->bytes_alloc += (uint64_t)((int64_t)sign * a->bytes_alloc);
	s->cross_node += (uint64_t)(int64_t)(sign * cross_node(a));
	s->cross_cpu += (uint64_t)(int64_t)(sign * (f && f->cpu != a->cpu));
	return 0;
}

static int sum_add(struct kmt_ckpt *k, const struct kmt_event *a, const struct kmt_event *f,
		   uint8_t kind)
{
	if (sum_change(k, a, f, kind, 1) < 0)
		return -1;
	k->folded += f ? 2 : 1;
	return 0;
}

/*
 * The next free of an address: its number's ring slot is emptied, the
 * pair there (freed FREED_WINDOW frees ago) summed and its address
 * forgotten. Returns the slot, or -1 (out of memory).
 */
static long next_free(struct kmt_ckpt *k)
{
	size_t slot = (size_t)(++k->frees % FREED_WINDOW);
	struct pair *p;

	if (!k->ring) {
		k->ring = calloc(FREED_WINDOW, sizeof(*k->ring));
		if (!k->ring)
			return -1;
	}
	p = &k->ring[slot];
	if (p->used) {
		size_t j = slot_of(k, p->a.ev.ptr);

		if (sum_add(k, &p->a.ev, &p->f.ev, KMT_SUM_FREED) < 0)
			return -1;
		p->used = false;
		if (k->state[j] == ST_FREED && k->live[j].serial == slot)
			live_delete(k, j);
	}
	return (long)slot;
}

/*
 * Whether the report would find nothing odd in free f of allocation a
 * (rpt_free_errors()): the free of the allocation's kind and cache, or one
 * of the probed frees that take objects of any kind.
 */
static bool clean_pair(const struct kmt_event *a, const struct kmt_event *f)
{
	if ((f->flags & KMT_F_PROBED) &&
	    (a->type == KMT_REC_CACHE_ALLOC) != (f->type == KMT_REC_CACHE_FREE))
		return true;
	if (a->type == KMT_REC_KMALLOC)
		return f->type == KMT_REC_KFREE;
	return f->type == KMT_REC_CACHE_FREE && f->cache_id == a->cache_id;
}

/* From here every record of the address at slot i is kept. */
static void set_odd(struct kmt_ckpt *k, size_t i)
{
	k->state[i] = ST_ODD;
}

/* Both records of a pair the report finds odd (r the later), and all later ones of the address. */
static int make_odd(struct kmt_ckpt *k, size_t i, const union kmt_rec *r, uint64_t serial)
{
	if (keep(k, &k->live[i].r, k->live[i].serial) < 0 || keep(k, r, serial) < 0)
		return -1;
	set_odd(k, i);
	k->nlive--;
	return 0;
}

static int feed_alloc(struct kmt_ckpt *k, const union kmt_rec *r, uint64_t serial)
{
	const struct kmt_event *e = &r->ev;
	size_t i;

	if (!e->ptr) {
		/*
		 * A failed large kmalloc (above two pages) may be the first of the
		 * two events 6.12 and 7.3 trace for it, which the report takes
		 * back when the CPU's next allocation is the second: both stay.
		 */
		if (e->type == KMT_REC_KMALLOC && e->bytes_req > 2ull * k->hdr.page_size)
			return keep(k, r, serial);
		return sum_add(k, e, NULL, KMT_SUM_FAILED);
	}
	if ((k->live_used + 1) * 2 > k->live_cap && live_grow(k) < 0)
		return -1;
	i = slot_of(k, e->ptr);
	if (k->state[i] == ST_ODD) {
		set_odd(k, i);
		return keep(k, r, serial);
	}
	if (k->state[i] == ST_FREED) {
		/* Allocated again: no longer a freed object; its pair waits in the ring. */
		k->state[i] = ST_EMPTY;
		k->live_used--;
	}
	if (k->state[i] == ST_LIVE) {
		const struct kmt_event *o = &k->live[i].r.ev;

		/*
		 * A large kmalloc that 6.12 and 7.3 trace twice, at one time:
		 * the report counts the second event only (rpt_large.c).
		 */
		if (e->type == KMT_REC_KMALLOC && o->type == KMT_REC_KMALLOC &&
		    e->timestamp == o->timestamp && e->bytes_req == o->bytes_req &&
		    e->bytes_alloc >= e->bytes_req) {
			k->live[i].r = *r;
			k->live[i].serial = serial;
			return 0;
		}
		return make_odd(k, i, r, serial);
	}
	k->live[i].ptr = e->ptr;
	k->live_used++;
	if (e->bytes_alloc < e->bytes_req) {
		/* The report's short_allocation error: the address is odd from here. */
		set_odd(k, i);
		return keep(k, r, serial);
	}
	k->state[i] = ST_LIVE;
	k->live[i].r = *r;
	k->live[i].serial = serial;
	k->nlive++;
	return 0;
}

/*
 * The report numbers every free of an address (its window of remembered
 * frees), after deciding what the free is: next_free() comes once a free
 * is judged, and may sum, and move, other slots.
 */
static int feed_free(struct kmt_ckpt *k, const union kmt_rec *r, uint64_t serial)
{
	size_t i = slot_of(k, r->ev.ptr);
	long slot;

	if (!r->ev.ptr)
		return keep(k, r, serial);
	if (k->state[i] == ST_FREED) {
		/* A double free: the pair it frees again, and it, stay. */
		struct pair *p = &k->ring[k->live[i].serial];

		if (keep(k, &p->a, p->sa) < 0 || keep(k, &p->f, p->sf) < 0)
			return -1;
		p->used = false;
		set_odd(k, i);
		if (keep(k, r, serial) < 0)
			return -1;
		return next_free(k) < 0 ? -1 : 0;
	}
	if (k->state[i] != ST_LIVE) {
		/* An odd address, or an object allocated before the trace. */
		if (keep(k, r, serial) < 0)
			return -1;
		return next_free(k) < 0 ? -1 : 0;
	}
	slot = next_free(k);
	if (slot < 0)
		return -1;
	i = slot_of(k, r->ev.ptr);
	if (!clean_pair(&k->live[i].r.ev, &r->ev))
		return make_odd(k, i, r, serial);
	k->nlive--;
	/*
	 * A free with a stack of its own (stack_frees=1) counts in its
	 * stack's tallies, which a sum has no room for: the pair stays.
	 */
	if (r->ev.stack_id || (r->ev.flags & KMT_F_NO_STACK)) {
		if (keep(k, &k->live[i].r, k->live[i].serial) < 0 || keep(k, r, serial) < 0)
			return -1;
		live_delete(k, i);
		return 0;
	}
	k->ring[slot] = (struct pair){ .a = k->live[i].r, .f = *r, .sa = k->live[i].serial,
				       .sf = serial, .used = true };
	k->state[i] = ST_FREED;
	k->live[i].serial = (uint64_t)slot;
	return 0;
}

int kmt_ckpt_feed(struct kmt_ckpt *k, const union kmt_rec *r)
{
	uint64_t serial = k->serial++;

	k->dropped[r->c.cpu]++;
	if (!serial && (r->c.type == KMT_REC_KMALLOC || r->c.type == KMT_REC_CACHE_ALLOC)) {
		/* The trace's first record stays: a report counts its times from it. */
		if (r->ev.ptr) {
			size_t i = slot_of(k, r->ev.ptr);

			k->live[i].ptr = r->ev.ptr;
			set_odd(k, i);
			k->live_used++;
		}
		return keep(k, r, serial);
	}
	switch (r->c.type) {
	case KMT_REC_KMALLOC:
	case KMT_REC_CACHE_ALLOC:
		return feed_alloc(k, r, serial);
	case KMT_REC_KFREE:
	case KMT_REC_CACHE_FREE:
		return feed_free(k, r, serial);
	default:
		/* Descriptions, stacks, LOST, pages, sums of an older checkpoint. */
		return keep(k, r, serial);
	}
}

/* The file of the merge that holds cpu's records, for a message. */
static const char *path_of_cpu(struct kmt_merge *m, unsigned int cpu, const char *dflt)
{
	for (size_t i = 0; i < kmt_merge_nfiles(m); i++) {
		struct kmt_file *f = kmt_merge_file(m, i);

		if (kmt_file_header(f)->cpu == cpu)
			return kmt_file_path(f);
	}
	return dflt;
}

int kmt_ckpt_fold_dir(struct kmt_ckpt *k, const char *segdir, uint64_t cut_ns,
		      struct kmt_error *err)
{
	const union kmt_rec *recs[256];
	struct kmt_merge *m;
	size_t i;
	int n;

	m = kmt_merge_open_dir(segdir, 0, err);
	if (!m)
		return -1;
	for (i = 0; i < kmt_merge_nfiles(m); i++) {
		struct kmt_file *f = kmt_merge_file(m, i);
		const struct kmt_file_header *h = kmt_file_header(f);

		if (!k->have_hdr) {
			k->hdr = *h;
			k->big_endian = kmt_file_big_endian(f);
			k->have_hdr = 1;
		}
		k->cpus[h->cpu] = 1;
	}
	while ((n = kmt_merge_next_batch(m, recs, 256)) > 0) {
		for (int j = 0; j < n; j++) {
			const union kmt_rec *r = recs[j];

			if (r->c.timestamp >= cut_ns) {
				kmt_err_set(err, KMT_ERR_DATA, path_of_cpu(m, r->c.cpu, segdir),
					    UINT64_MAX,
					    "a record of %llu ns is not before the segment's end (%llu ns)",
					    (unsigned long long)r->c.timestamp,
					    (unsigned long long)cut_ns);
				goto fail;
			}
			if (kmt_ckpt_feed(k, r) < 0) {
				kmt_err_set(err, KMT_ERR_NOMEM, segdir, UINT64_MAX,
					    "out of memory");
				goto fail;
			}
		}
	}
	if (n < 0) {
		*err = *kmt_merge_error(m);
		goto fail;
	}
	kmt_merge_close(m);
	return 0;
fail:
	kmt_merge_close(m);
	return -1;
}

/* ---- writing */

static int by_cpu_serial(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	if (x->r.c.cpu != y->r.c.cpu)
		return x->r.c.cpu < y->r.c.cpu ? -1 : 1;
	return (x->serial > y->serial) - (x->serial < y->serial);
}

static int sum_order(const void *a, const void *b)
{
	const struct sum *x = a, *y = b;

	if (x->k.cpu != y->k.cpu)
		return x->k.cpu < y->k.cpu ? -1 : 1;
	return memcmp(&x->k, &y->k, sizeof(x->k));
}

static int put(FILE *fp, const union kmt_rec *r, int big_endian)
{
	uint8_t out[KMT_RECORD_SIZE];

	kmt_rec_encode(out, r, big_endian);
	return fwrite(out, sizeof(out), 1, fp) == 1 ? 0 : -1;
}

/* The SUM records of s, as many as its counts need to fit 32 bits. */
static int put_sums(FILE *fp, const struct sum *s, uint64_t ts, int big_endian)
{
	uint64_t left = s->count, cross_cpu = s->cross_cpu, cross_node = s->cross_node;
	uint64_t req = s->bytes_req, alloc = s->bytes_alloc;

	while (left) {
		uint64_t n = left < UINT32_MAX ? left : UINT32_MAX;
		uint64_t c = cross_cpu < n ? cross_cpu : n, d = cross_node < n ? cross_node : n;
		union kmt_rec r;

		memset(&r, 0, sizeof(r));
		r.sum.type = KMT_REC_SUM;
		r.sum.flags = s->k.flags;
		r.sum.cpu = s->k.cpu;
		r.sum.timestamp = ts;
		r.sum.call_site = s->k.call_site;
		r.sum.cache_id = s->k.cache_id;
		/* The byte sums go whole into the last record of a key. */
		r.sum.bytes_req = n == left ? req : 0;
		r.sum.bytes_alloc = n == left ? alloc : 0;
		r.sum.count = (uint32_t)n;
		r.sum.cross_cpu = (uint32_t)c;
		r.sum.cross_node = (uint32_t)d;
		r.sum.stack_id = s->k.stack_id;
		r.sum.alloc_type = s->k.alloc_type;
		r.sum.sum_kind = s->k.sum_kind;
		if (put(fp, &r, big_endian) < 0)
			return -1;
		left -= n;
		cross_cpu -= c;
		cross_node -= d;
	}
	return 0;
}

static int write_cpu(struct kmt_ckpt *k, const char *dir, unsigned int cpu,
		     const struct kept *rec, size_t nrec, const struct sum *sums, size_t nsums,
		     uint32_t segment, uint64_t cut_ns, struct kmt_error *err)
{
	char path[4096];
	uint8_t raw[KMT_RECORD_SIZE];
	struct kmt_file_header h = k->hdr;
	FILE *fp = NULL;
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "%s/cpu%u.out", dir, cpu);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0)
		fp = fdopen(fd, "w");
	if (!fp)
		goto io;
	h.cpu = (__u16)cpu;
	h.kind = KMT_FILE_CHECKPOINT;
	if (h.version_minor < KMT_CKPT_MINOR)
		h.version_minor = KMT_CKPT_MINOR;
	h.cut_ns = cut_ns;
	h.dropped_records = k->dropped[cpu];
	h.segment = segment;
	kmt_header_encode(raw, &h, k->big_endian);
	if (fwrite(raw, sizeof(raw), 1, fp) != 1)
		goto io;
	for (i = 0; i < nrec; i++)
		if (put(fp, &rec[i].r, k->big_endian) < 0)
			goto io;
	for (i = 0; i < nsums; i++)
		if (put_sums(fp, &sums[i], cut_ns - 1, k->big_endian) < 0)
			goto io;
	if (fflush(fp) || fsync(fileno(fp)) < 0)
		goto io;
	if (fclose(fp)) {
		fp = NULL;
		goto io;
	}
	return 0;
io:
	kmt_err_set(err, KMT_ERR_IO, path, UINT64_MAX, "cannot write: %s", strerror(errno));
	if (fp)
		fclose(fp);
	else if (fd >= 0)
		close(fd);
	return -1;
}

/*
 * Adds the pairs of ring slots below end to the sums (sign 1), or takes
 * them back out (-1, which needs no memory: their keys are in the table).
 * Returns end, or the slot where memory ran out.
 */
static size_t ring_sums(struct kmt_ckpt *k, int sign, size_t end)
{
	size_t i;

	if (!k->ring)
		return end;
	for (i = 0; i < end; i++) {
		const struct pair *p = &k->ring[i];

		if (p->used && sum_change(k, &p->a.ev, &p->f.ev, KMT_SUM_FREED, sign) < 0)
			break;
	}
	return i;
}

int kmt_ckpt_write(struct kmt_ckpt *k, const char *dir, uint32_t segment, uint64_t cut_ns,
		   struct kmt_error *err)
{
	size_t nrec = k->nkept + k->nlive, nsum = 0, i, r0 = 0, s0 = 0;
	struct kept *rec = malloc((nrec ? nrec : 1) * sizeof(*rec));
	struct sum *sums = NULL;
	size_t added;
	int ret = -1;

	memset(err, 0, sizeof(*err));
	if (!rec) {
		kmt_err_set(err, KMT_ERR_NOMEM, dir, UINT64_MAX, "out of memory");
		goto out;
	}
	if (!k->have_hdr) {
		kmt_err_set(err, KMT_ERR_USAGE, dir, UINT64_MAX, "nothing was folded");
		goto out;
	}
	if (k->nkept)
		memcpy(rec, k->kept, k->nkept * sizeof(*rec));
	nrec = k->nkept;
	for (i = 0; i < k->live_cap; i++) {
		if (k->state[i] != ST_LIVE)
			continue;
		rec[nrec].serial = k->live[i].serial;
		rec[nrec++].r = k->live[i].r;
	}
	qsort(rec, nrec, sizeof(*rec), by_cpu_serial);
	/* The pairs still in the ring go into this checkpoint's sums, not the fold's. */
	added = ring_sums(k, 1, FREED_WINDOW);
	if (added == FREED_WINDOW)
		sums = malloc((k->nsums ? k->nsums : 1) * sizeof(*sums));
	for (i = 0; sums && i < k->sums_cap; i++)
		if (k->sums[i].used && k->sums[i].count)
			sums[nsum++] = k->sums[i];
	ring_sums(k, -1, added);
	if (!sums) {
		kmt_err_set(err, KMT_ERR_NOMEM, dir, UINT64_MAX, "out of memory");
		goto out;
	}
	qsort(sums, nsum, sizeof(*sums), sum_order);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		kmt_err_set(err, KMT_ERR_IO, dir, UINT64_MAX, "cannot create: %s", strerror(errno));
		goto out;
	}
	for (unsigned int cpu = 0; cpu < 65536; cpu++) {
		size_t r1 = r0, s1 = s0;

		while (r1 < nrec && rec[r1].r.c.cpu == cpu)
			r1++;
		while (s1 < nsum && sums[s1].k.cpu == cpu)
			s1++;
		if ((k->cpus[cpu] || r1 > r0 || s1 > s0) &&
		    write_cpu(k, dir, cpu, rec + r0, r1 - r0, sums + s0, s1 - s0, segment, cut_ns,
			      err) < 0)
			goto out;
		r0 = r1;
		s0 = s1;
	}
	ret = 0;
out:
	free(rec);
	free(sums);
	return ret;
}

void kmt_ckpt_get_stats(const struct kmt_ckpt *k, struct kmt_ckpt_stats *st)
{
	st->live = k->nlive;
	st->kept = k->nkept;
	st->sums = k->nsums;
	st->folded = k->folded;
	st->fed = k->serial;
	st->memory = k->live_cap * (sizeof(*k->live) + 1) + k->kept_cap * sizeof(*k->kept) +
		     k->sums_cap * sizeof(*k->sums) + 65536 * (sizeof(*k->dropped) + 1) +
		     (k->ring ? FREED_WINDOW * sizeof(*k->ring) : 0);
}
