// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_stacks.c - joins stack slots into whole stacks per CPU and keeps
 * each distinct stack once, so that memory follows the number of
 * different stacks, never the length of the trace.
 */
#include <stdlib.h>
#include <string.h>

#include "kmt_reader_int.h"
#include "kmt_stacks.h"

/* The stack being joined on one CPU. */
struct pend {
	uint16_t id;
	uint8_t depth;
	uint8_t next;		/* frames in; 0: none under way */
	uint64_t frames[KMT_STACK_MAX_DEPTH];
};

struct stk {
	uint64_t hash;
	uint32_t off;		/* into frames */
	uint8_t depth;
};

/* (cpu << 16 | id) -> stack index; a key is never 0 (ids start at 1). */
struct idslot {
	uint32_t key;
	uint32_t val;
};

struct kmt_stacks {
	struct pend **pend;	/* by CPU, allocated at its first slot */
	size_t npend;

	uint64_t *frames;	/* every distinct stack's frames, end to end */
	size_t nframes, frames_cap;
	struct stk *stk;
	size_t n, cap;
	uint32_t *byhash;	/* index + 1 of a stack by content; 0: empty */
	unsigned int hbits;

	struct idslot *ids;
	unsigned int ibits;
	size_t nids;

	uint64_t joined;
};

static uint64_t frames_hash(const uint64_t *f, unsigned int depth)
{
	uint64_t h = depth;
	unsigned int i;

	/* Rotate and multiply per frame: order matters, as it does in a stack. */
	for (i = 0; i < depth; i++)
		h = ((h << 23 | h >> 41) ^ f[i]) * 0xbf58476d1ce4e5b9ULL;
	return h ^ h >> 31;
}

struct kmt_stacks *kmt_stacks_new(void)
{
	return calloc(1, sizeof(struct kmt_stacks));
}

void kmt_stacks_free(struct kmt_stacks *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->npend; i++)
		free(s->pend[i]);
	free(s->pend);
	free(s->frames);
	free(s->stk);
	free(s->byhash);
	free(s->ids);
	free(s);
}

static int hash_grow(struct kmt_stacks *s)
{
	unsigned int nb = s->hbits ? s->hbits + 1 : 8;
	size_t cap = (size_t)1 << nb, mask = cap - 1, i, j;
	uint32_t *nt = calloc(cap, sizeof(*nt));

	if (!nt)
		return -1;
	for (i = 0; i < s->n; i++) {
		for (j = kmt_hash_slot(s->stk[i].hash, nb); nt[j]; j = (j + 1) & mask)
			;
		nt[j] = (uint32_t)i + 1;
	}
	free(s->byhash);
	s->byhash = nt;
	s->hbits = nb;
	return 0;
}

/* The index of a stack of these frames, kept now if it is new. 0, or -1 (memory). */
static int intern(struct kmt_stacks *s, const uint64_t *f, unsigned int depth, uint32_t *idx)
{
	uint64_t h = frames_hash(f, depth);
	size_t mask, i;
	struct stk *k;

	if (!s->hbits || (s->n + 1) * 2 > ((size_t)1 << s->hbits)) {
		if (hash_grow(s))
			return -1;
	}
	mask = ((size_t)1 << s->hbits) - 1;
	for (i = kmt_hash_slot(h, s->hbits); s->byhash[i]; i = (i + 1) & mask) {
		k = &s->stk[s->byhash[i] - 1];
		if (k->hash == h && k->depth == depth &&
		    memcmp(&s->frames[k->off], f, depth * sizeof(*f)) == 0) {
			*idx = s->byhash[i] - 1;
			return 0;
		}
	}
	if (s->n >= UINT32_MAX - 1 || s->nframes + depth > UINT32_MAX)
		return -1;
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		struct stk *p = realloc(s->stk, ncap * sizeof(*p));

		if (!p)
			return -1;
		s->stk = p;
		s->cap = ncap;
	}
	if (s->nframes + depth > s->frames_cap) {
		size_t ncap = s->frames_cap ? s->frames_cap * 2 : 1024;
		uint64_t *p;

		while (ncap < s->nframes + depth)
			ncap *= 2;
		p = realloc(s->frames, ncap * sizeof(*p));
		if (!p)
			return -1;
		s->frames = p;
		s->frames_cap = ncap;
	}
	memcpy(&s->frames[s->nframes], f, depth * sizeof(*f));
	k = &s->stk[s->n];
	k->hash = h;
	k->off = (uint32_t)s->nframes;
	k->depth = (uint8_t)depth;
	s->nframes += depth;
	*idx = (uint32_t)s->n++;
	s->byhash[i] = *idx + 1;
	return 0;
}

static struct idslot *id_slot(const struct kmt_stacks *s, uint32_t key)
{
	size_t mask, i;

	if (!s->ibits)
		return NULL;
	mask = ((size_t)1 << s->ibits) - 1;
	for (i = kmt_hash_slot(key, s->ibits); s->ids[i].key; i = (i + 1) & mask)
		if (s->ids[i].key == key)
			return &s->ids[i];
	return &s->ids[i];
}

/* Sets what (cpu, id) names. 0, or -1 (memory). */
static int id_set(struct kmt_stacks *s, uint32_t key, uint32_t val)
{
	struct idslot *e;

	if (!s->ibits || (s->nids + 1) * 2 > ((size_t)1 << s->ibits)) {
		unsigned int nb = s->ibits ? s->ibits + 1 : 8;
		size_t cap = (size_t)1 << nb, mask = cap - 1, i, j, old = s->ibits ?
			(size_t)1 << s->ibits : 0;
		struct idslot *nt = calloc(cap, sizeof(*nt));

		if (!nt)
			return -1;
		for (i = 0; i < old; i++) {
			if (!s->ids[i].key)
				continue;
			for (j = kmt_hash_slot(s->ids[i].key, nb); nt[j].key; j = (j + 1) & mask)
				;
			nt[j] = s->ids[i];
		}
		free(s->ids);
		s->ids = nt;
		s->ibits = nb;
	}
	e = id_slot(s, key);
	if (!e->key) {
		e->key = key;
		s->nids++;
	}
	e->val = val;
	return 0;
}

int kmt_stacks_feed(struct kmt_stacks *s, const struct kmt_stack *slot)
{
	uint32_t key = (uint32_t)slot->cpu << 16 | slot->stack_id, idx;
	struct idslot *e;
	struct pend *p;
	unsigned int n = slot->nframes, i;

	if (!slot->stack_id || !slot->depth || slot->depth > KMT_STACK_MAX_DEPTH || !n ||
	    n > KMT_STACK_SLOT_FRAMES || slot->first + n > slot->depth)
		return 0;
	if (slot->cpu >= s->npend) {
		size_t nn = (size_t)slot->cpu + 1;
		struct pend **np = realloc(s->pend, nn * sizeof(*np));

		if (!np)
			return -1;
		memset(np + s->npend, 0, (nn - s->npend) * sizeof(*np));
		s->pend = np;
		s->npend = nn;
	}
	p = s->pend[slot->cpu];
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -1;
		s->pend[slot->cpu] = p;
	}
	if (slot->first == 0) {
		/* A new stack for this id: the old one is no longer what it names. */
		e = id_slot(s, key);
		if (e && e->key)
			e->val = KMT_STACK_NONE;
		p->id = slot->stack_id;
		p->depth = slot->depth;
		p->next = 0;
	} else if (!p->next || p->id != slot->stack_id || p->depth != slot->depth ||
		   p->next != slot->first) {
		p->next = 0;
		return 0;
	}
	for (i = 0; i < n; i++)
		p->frames[slot->first + i] = slot->frames[i];
	p->next = (uint8_t)(slot->first + n);
	if (p->next < p->depth)
		return 0;
	p->next = 0;
	s->joined++;
	if (intern(s, p->frames, p->depth, &idx))
		return -1;
	return id_set(s, key, idx);
}

uint32_t kmt_stacks_lookup(const struct kmt_stacks *s, uint16_t cpu, uint16_t id)
{
	const struct idslot *e = id ? id_slot(s, (uint32_t)cpu << 16 | id) : NULL;

	return e && e->key ? e->val : KMT_STACK_NONE;
}

size_t kmt_stacks_count(const struct kmt_stacks *s)
{
	return s->n;
}

const uint64_t *kmt_stacks_frames(const struct kmt_stacks *s, uint32_t i, unsigned int *depth)
{
	if (i >= s->n)
		return NULL;
	*depth = s->stk[i].depth;
	return &s->frames[s->stk[i].off];
}

uint64_t kmt_stacks_joined(const struct kmt_stacks *s)
{
	return s->joined;
}

size_t kmt_stacks_memory(const struct kmt_stacks *s)
{
	return sizeof(*s) + s->npend * (sizeof(*s->pend) + sizeof(struct pend)) +
	       s->frames_cap * sizeof(*s->frames) + s->cap * sizeof(*s->stk) +
	       (s->hbits ? ((size_t)1 << s->hbits) * sizeof(*s->byhash) : 0) +
	       (s->ibits ? ((size_t)1 << s->ibits) * sizeof(*s->ids) : 0);
}

int kmt_stacks_verify_file(struct kmt_file *f, struct kmt_stack_use *su)
{
	struct kmt_stacks *stk = kmt_stacks_new();
	union kmt_rec rec;
	int r;

	memset(su, 0, sizeof(*su));
	if (!stk)
		return -2;
	while ((r = kmt_file_next(f, &rec)) > 0) {
		if (rec.c.type == KMT_REC_STACK) {
			if (kmt_stacks_feed(stk, &rec.stack)) {
				r = -2;
				break;
			}
		} else if (rec.c.type <= KMT_REC_PAGE_FREE && rec.ev.stack_id) {
			if (kmt_stacks_lookup(stk, rec.c.cpu, rec.ev.stack_id) == KMT_STACK_NONE &&
			    !su->unknown++)
				su->first_off = kmt_file_offset(f);
		}
	}
	kmt_stacks_free(stk);
	return r;
}
