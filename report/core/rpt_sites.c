// SPDX-License-Identifier: GPL-2.0-only
/*
 * rpt_sites.c - the entries of call sites, caches and addresses, made the
 * first time an event names them; caches named (CACHE_DESC records, or
 * their kmalloc-N and address names) and selected by --cache-name.
 */
#include <stdio.h>
#include <string.h>

#include "core/report_core_int.h"

struct rpt_site *rpt_site_new(struct rpt *r, uint64_t addr)
{
	uint32_t i;

	if (r->nsites >= UINT32_MAX - 1 ||
	    rpt_grow((void **)&r->sites, &r->sites_cap, r->nsites, sizeof(*r->sites)))
		return NULL;
	i = (uint32_t)r->nsites;
	if (rpt_map_put(&r->site_map, addr, i))
		return NULL;
	r->nsites++;
	memset(&r->sites[i], 0, sizeof(r->sites[i]));
	r->sites[i].addr = addr;
	r->sites[i].first = r->pos;
	return &r->sites[i];
}

static struct rpt_cache *cache_new(struct rpt *r, uint32_t *idx)
{
	if (r->ncaches >= UINT32_MAX - 1 ||
	    rpt_grow((void **)&r->caches, &r->caches_cap, r->ncaches, sizeof(*r->caches)))
		return NULL;
	*idx = (uint32_t)r->ncaches;
	memset(&r->caches[r->ncaches], 0, sizeof(r->caches[0]));
	r->caches[r->ncaches].first = r->pos;
	return &r->caches[r->ncaches++];
}

/*
 * Names a cache and decides whether --cache-name selects it: by its name,
 * and a cache a CACHE_DESC named also by the names SLUB merged into it.
 */
static void cache_name_set(struct rpt *r, struct rpt_cache *c, const char *name, bool described)
{
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->selected = !r->f.cache_name || strcmp(r->f.cache_name, c->name) == 0 ||
		      (described && r->f.slab &&
		       slab_names_cache(r->f.slab, r->f.cache_name, c->name));
}

struct rpt_cache *rpt_cache_new_undescribed(struct rpt *r, uint64_t id)
{
	struct rpt_cache *c;
	char name[sizeof(c->name)];
	uint32_t i;

	c = cache_new(r, &i);
	if (!c || rpt_map_put(&r->cache_map, id, i))
		return NULL;
	c->id = id;
	snprintf(name, sizeof(name), "cache@0x%llx", (unsigned long long)id);
	cache_name_set(r, c, name, false);
	return c;
}

struct rpt_cache *rpt_cache_get(struct rpt *r, uint64_t id)
{
	uint32_t i;

	if (map_get(&r->cache_map, id, &i))
		return &r->caches[i];
	return rpt_cache_new_undescribed(r, id);
}

struct rpt_cache *rpt_kmalloc_cache_new(struct rpt *r, uint32_t bytes)
{
	struct rpt_cache *c;
	char name[sizeof(c->name)];
	uint32_t i;

	c = cache_new(r, &i);
	if (!c || rpt_map_put(&r->kmalloc_map, bytes, i))
		return NULL;
	c->id = bytes;
	c->pseudo = true;
	c->object_size = c->size = bytes;
	/* The kernel's own names: kmalloc-96, kmalloc-1k, kmalloc-8k. */
	if (bytes >= 1024 && bytes % 1024 == 0)
		snprintf(name, sizeof(name), "kmalloc-%uk", bytes / 1024);
	else
		snprintf(name, sizeof(name), "kmalloc-%u", bytes);
	cache_name_set(r, c, name, false);
	return c;
}

int rpt_cache_desc(struct rpt *r, const struct kmt_cache_desc *d)
{
	char name[KMT_CACHE_NAME_LEN + 1];
	struct rpt_cache *c;
	uint32_t i, gen = 0;

	memcpy(name, d->name, KMT_CACHE_NAME_LEN);
	name[KMT_CACHE_NAME_LEN] = '\0';
	r->t.cache_descs++;
	if (map_get(&r->cache_map, d->cache_id, &i)) {
		c = &r->caches[i];
		if (!c->described)
			goto fill;
		if (strcmp(c->name, name) == 0 && c->object_size == d->object_size &&
		    c->size == d->size)
			return 0;
		/* Destroyed and another cache created at the same address. */
		gen = c->gen + 1;
	}
	c = cache_new(r, &i);
	if (!c || rpt_map_put(&r->cache_map, d->cache_id, i))
		return -1;
	c->id = d->cache_id;
	c->gen = gen;
fill:
	c->described = true;
	c->object_size = d->object_size;
	c->size = d->size;
	cache_name_set(r, c, name, true);
	return 0;
}

struct rpt_ptr *rpt_ptr_new(struct rpt *r, uint64_t ptr)
{
	uint32_t i;

	if (r->nptrs >= UINT32_MAX - 1 ||
	    rpt_grow((void **)&r->ptrs, &r->ptrs_cap, r->nptrs, sizeof(*r->ptrs)))
		return NULL;
	i = (uint32_t)r->nptrs;
	if (rpt_map_put(&r->ptr_map, ptr, i))
		return NULL;
	r->nptrs++;
	memset(&r->ptrs[i], 0, sizeof(r->ptrs[i]));
	r->ptrs[i].ptr = ptr;
	r->ptrs[i].first = r->pos;
	return &r->ptrs[i];
}
