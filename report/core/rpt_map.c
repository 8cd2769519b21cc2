// SPDX-License-Identifier: GPL-2.0-only
/*
 * rpt_map.c - the analysis's containers: a u64 -> u32 map (call sites,
 * caches, per-address tallies), whose lookup is inline in
 * report_core_int.h, and dense arrays that grow.
 */
#include <stdlib.h>
#include <string.h>

#include "core/report_core_int.h"

static void map_place(struct u64slot *e, unsigned int bits, uint64_t k, uint32_t v)
{
	size_t mask = ((size_t)1 << bits) - 1, i;

	for (i = hash64(k, bits); e[i].key && e[i].key != k; i = (i + 1) & mask)
		;
	e[i].key = k;
	e[i].val = v;
}

int rpt_map_put(struct u64map *m, uint64_t k, uint32_t v)
{
	uint32_t old;

	if (k == 0) {
		m->has_zero = true;
		m->zero_val = v;
		return 0;
	}
	if (map_get(m, k, &old)) {
		map_place(m->e, m->bits, k, v);
		return 0;
	}
	/* Keep the load under one half: probes stay short. */
	if (!m->bits || (m->n + 1) * 2 > ((size_t)1 << m->bits)) {
		unsigned int nb = m->bits ? m->bits + 1 : 6;
		size_t oldcap = m->bits ? (size_t)1 << m->bits : 0, i;
		struct u64slot *ne = calloc((size_t)1 << nb, sizeof(*ne));

		if (!ne)
			return -1;
		for (i = 0; i < oldcap; i++)
			if (m->e[i].key)
				map_place(ne, nb, m->e[i].key, m->e[i].val);
		free(m->e);
		m->e = ne;
		m->bits = nb;
		m->shift = 64 - nb;
		m->mask = ((size_t)1 << nb) - 1;
	}
	map_place(m->e, m->bits, k, v);
	m->n++;
	return 0;
}

void rpt_map_free(struct u64map *m)
{
	free(m->e);
	memset(m, 0, sizeof(*m));
}

size_t rpt_map_memory(const struct u64map *m)
{
	return m->bits ? ((size_t)1 << m->bits) * sizeof(struct u64slot) : 0;
}

int rpt_grow(void **arr, size_t *cap, size_t n, size_t elsize)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	if (ncap > SIZE_MAX / elsize)
		return -1;
	p = aligned_alloc(64, ncap * elsize);
	if (!p)
		return -1;
	if (*cap)
		memcpy(p, *arr, *cap * elsize);
	memset((char *)p + *cap * elsize, 0, (ncap - *cap) * elsize);
	free(*arr);
	*arr = p;
	*cap = ncap;
	return 0;
}
