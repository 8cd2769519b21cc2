/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt_reader_int.h - helpers shared by the library's own files, not part
 * of its API.
 */
#ifndef KMT_READER_INT_H
#define KMT_READER_INT_H

#include "kmt_reader.h"

/* Fills *err; offset UINT64_MAX for a message without one. */
void kmt_err_set(struct kmt_error *err, enum kmt_err_class cls, const char *path,
		 uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int kmt_header_decode(const void *raw, struct kmt_file_header *h, int *big_endian);
long kmt_cpu_of_name(const char *path);
/*
 * kmt_file_next() without the copy: *rec points into f's read buffer and
 * stays valid until the next call on f. For the merge.
 */
int kmt_file_next_ref(struct kmt_file *f, const union kmt_rec **rec);

#endif /* KMT_READER_INT_H */
