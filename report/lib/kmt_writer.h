/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt_writer.h - builds file headers and encodes headers and records into
 * either byte order, with the same swap code the reader decodes with.
 * Used by the test generator and by kmemtraced for its file header.
 */
#ifndef KMT_WRITER_H
#define KMT_WRITER_H

#include <stdint.h>

#include "kmt_reader.h"

/* Nonzero when this host is big-endian. */
int kmt_host_big_endian(void);

/*
 * Fills a version KMT_ABI_MAJOR.KMT_ABI_MINOR header in host byte order
 * with the host's byte_order, KMT_CLOCK_MONOTONIC and zero reserved bytes.
 */
void kmt_header_init(struct kmt_file_header *h, unsigned int cpu, unsigned int word_bits,
		     uint32_t page_size, uint64_t start_mono_ns, uint64_t start_real_ns);

/*
 * Encodes a host-order header into the 64 bytes at out, big-endian if
 * big_endian else little-endian. byte_order in the output is set to match
 * (whatever in->byte_order says); every other field is copied as is.
 */
void kmt_header_encode(void *out, const struct kmt_file_header *in, int big_endian);

/*
 * Encodes a host-order record into the 64 bytes at out in the chosen byte
 * order. Every field of the known types is swapped as needed, names are
 * copied untouched; a record of unknown type gets only its common 16-byte
 * prefix swapped.
 */
void kmt_rec_encode(void *out, const union kmt_rec *in, int big_endian);

/*
 * Byte-swaps every integer field of a record in place according to its
 * type (the inverse of itself): the reader's path for files of the other
 * byte order.
 */
void kmt_rec_swap(union kmt_rec *r);
void kmt_header_swap(struct kmt_file_header *h);

#endif /* KMT_WRITER_H */
