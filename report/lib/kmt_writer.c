// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_writer.c - byte-swapping of headers and records, shared by the
 * reader (decoding) and the writers (encoding), and header construction.
 */
#include <string.h>

#include "kmt_writer.h"

int kmt_host_big_endian(void)
{
	const uint16_t probe = 0x0102;
	uint8_t first;

	memcpy(&first, &probe, 1);
	return first == 0x01;
}

static inline void sw16(__u16 *v)
{
	*v = __builtin_bswap16(*v);
}

static inline void sw32(__u32 *v)
{
	*v = __builtin_bswap32(*v);
}

static inline void sw64(__u64 *v)
{
	*v = __builtin_bswap64(*v);
}

void kmt_header_swap(struct kmt_file_header *h)
{
	sw32(&h->magic);
	sw16(&h->version_major);
	sw16(&h->version_minor);
	sw16(&h->header_size);
	sw16(&h->record_size);
	sw16(&h->cpu);
	sw32(&h->page_size);
	sw64(&h->start_mono_ns);
	sw64(&h->start_real_ns);
	sw64(&h->cut_ns);
	sw64(&h->dropped_records);
	sw32(&h->segment);
	sw32(&h->reserved1);
}

void kmt_rec_swap(union kmt_rec *r)
{
	sw16(&r->c.cpu);
	sw32(&r->c.seq);
	sw64(&r->c.timestamp);

	switch (r->c.type) {
	case KMT_REC_KMALLOC:
	case KMT_REC_CACHE_ALLOC:
	case KMT_REC_PAGE_ALLOC:
	case KMT_REC_KFREE:
	case KMT_REC_CACHE_FREE:
	case KMT_REC_PAGE_FREE:
		sw64(&r->ev.call_site);
		sw64(&r->ev.ptr);
		sw64(&r->ev.cache_id);
		sw32(&r->ev.bytes_req);
		sw32(&r->ev.bytes_alloc);
		sw32(&r->ev.gfp_flags);
		sw32((__u32 *)&r->ev.node);
		sw32(&r->ev.pid);
		sw16((__u16 *)&r->ev.cpu_node);
		sw16(&r->ev.stack_id);
		break;
	case KMT_REC_CACHE_DESC:
		sw64(&r->cache.cache_id);
		sw32(&r->cache.object_size);
		sw32(&r->cache.size);
		break;
	case KMT_REC_LOST:
		sw64(&r->lost.count);
		sw64(&r->lost.first_lost_ns);
		sw64(&r->lost.total_dropped);
		break;
	case KMT_REC_SUM:
		sw64(&r->sum.call_site);
		sw64(&r->sum.cache_id);
		sw64(&r->sum.bytes_req);
		sw64(&r->sum.bytes_alloc);
		sw32(&r->sum.count);
		sw32(&r->sum.cross_cpu);
		sw32(&r->sum.cross_node);
		sw16(&r->sum.stack_id);
		break;
	case KMT_REC_STACK: {
		unsigned int i;

		sw16(&r->stack.stack_id);
		for (i = 0; i < KMT_STACK_SLOT_FRAMES; i++)
			sw64(&r->stack.frames[i]);
		break;
	}
	default:
		/* Unknown layout: only the common prefix is known to be integers. */
		break;
	}
}

void kmt_header_init(struct kmt_file_header *h, unsigned int cpu, unsigned int word_bits,
		     uint32_t page_size, uint64_t start_mono_ns, uint64_t start_real_ns)
{
	memset(h, 0, sizeof(*h));
	h->magic = KMT_MAGIC;
	h->version_major = KMT_ABI_MAJOR;
	h->version_minor = KMT_ABI_MINOR;
	h->header_size = KMT_RECORD_SIZE;
	h->record_size = KMT_RECORD_SIZE;
	h->cpu = (__u16)cpu;
	h->byte_order = kmt_host_big_endian() ? KMT_BYTE_ORDER_BE : KMT_BYTE_ORDER_LE;
	h->word_bits = (__u8)word_bits;
	h->clock_id = KMT_CLOCK_MONOTONIC;
	h->page_size = page_size;
	h->start_mono_ns = start_mono_ns;
	h->start_real_ns = start_real_ns;
}

void kmt_header_encode(void *out, const struct kmt_file_header *in, int big_endian)
{
	struct kmt_file_header h = *in;

	h.byte_order = big_endian ? KMT_BYTE_ORDER_BE : KMT_BYTE_ORDER_LE;
	if (!big_endian != !kmt_host_big_endian())
		kmt_header_swap(&h);
	memcpy(out, &h, sizeof(h));
}

void kmt_rec_encode(void *out, const union kmt_rec *in, int big_endian)
{
	union kmt_rec r = *in;

	if (!big_endian != !kmt_host_big_endian())
		kmt_rec_swap(&r);
	memcpy(out, &r, sizeof(r));
}
