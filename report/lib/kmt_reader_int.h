/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt_reader_int.h - helpers shared by the library's own files, not part
 * of its API.
 */
#ifndef KMT_READER_INT_H
#define KMT_READER_INT_H

#include "kmt_reader.h"

#define kmt_likely(x)	__builtin_expect(!!(x), 1)

/* Multiplicative hashing into 2^bits slots: the top bits of the product are well spread. */
static inline size_t kmt_hash_slot(uint64_t h, unsigned int bits)
{
	return (size_t)((h * 0x9e3779b97f4a7c15ULL) >> (64 - bits));
}

/* What the checks of a file's next known record depend on, besides the header. */
struct kmt_track {
	uint64_t last_ts;	/* of the last known record; 0 before the first */
	uint32_t expected;	/* seq the next data record must carry */
	/*
	 * Seqs the next known record may skip: unknown slots since the last
	 * known record, or UINT32_MAX (any seq) before the first one.
	 */
	uint32_t unknown_since;
	uint32_t last_seq;	/* of the last known record */
	uint16_t cpu;		/* hdr.cpu */
	uint8_t word_bits;	/* hdr.word_bits */
	/*
	 * A stack whose next slot must come next: stk_next frames of
	 * stk_depth are in; 0 when none is under way.
	 */
	uint8_t stk_next;
	uint8_t stk_depth;
	uint16_t stk_id;
	/* Continuation slots need no beginning (file start, after a LOST). */
	uint8_t stk_orphans_ok;
	uint8_t stk_orphan;	/* the stack under way began before the file or a drop */
};

struct kmt_file {
	/*
	 * The window of the file being read: rbuf, filled by read(2), or
	 * with KMT_OPEN_MAP a mapping of the file (map_len bytes at buf).
	 */
	uint8_t *buf;
	size_t len, pos;	/* bytes in buf, the next slot to examine or hand out */
	/*
	 * The slots from pos up to vet are known records, validated and in host
	 * byte order: the reader validates ahead of what it hands out (see
	 * kmt_file_vet()), so that the checks run in a loop of their own.
	 */
	size_t vet;
	struct kmt_track tr;
	int swap;		/* file byte order differs from the host's */
	int big_endian;
	int failed;		/* sticky: an error was reported */
	int at_eof;		/* read(2) returned 0 */
	int have_first;		/* a known record was read: st.first_* are set */
	int fd;
	int mapped;		/* buf is a mapping of the file, not rbuf */
	size_t map_len;
	uint8_t *rbuf;		/* the read buffer, KMT_READ_BUF bytes */
	unsigned int flags;
	uint64_t buf_off;	/* file offset of buf[0] */
	uint64_t rec_off;	/* offset of the last slot examined (see kmt_file_offset) */
	struct kmt_file_stats st;
	struct kmt_file_header hdr;
	struct kmt_error err;
	char *path;
	/*
	 * (1.3) The file being read is a checkpoint: its records take the
	 * slow path (examine_slow()), where its seq gaps are let through and
	 * its own rules checked, so that the loop of plain events never asks.
	 */
	uint8_t ckpt;
	uint8_t in_sums;	/* a SUM record was read: only SUM records may follow */
	int has_ckpt;		/* the stream began with a checkpoint, ckpt_hdr */
	struct kmt_file_header ckpt_hdr;
	/*
	 * The files of the stream still to read (kmt_merge_open_inputs()),
	 * each opened when the one before ends; prev_path names the one
	 * before until the new file's first record passed its checks.
	 */
	char **chain;
	size_t chain_n, chain_i;
	char *prev_path;
};

/* Fills *err; offset UINT64_MAX for a message without one. */
void kmt_err_set(struct kmt_error *err, enum kmt_err_class cls, const char *path,
		 uint64_t offset, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int kmt_header_decode(const void *raw, struct kmt_file_header *h, int *big_endian);
/* Makes f read the n files of paths (copied) after its own, as one stream. 0, or -1 (memory). */
int kmt_file_chain(struct kmt_file *f, char *const *paths, size_t n);
long kmt_cpu_of_name(const char *path);

/* kmt_file_vet() with may_fill 0 when the buffer ends before the file does. */
#define KMT_NEED_FILL	2

/*
 * Makes the slot at f->pos a validated head when it is not one yet (pos
 * == vet): skips unknown types up to the next known record and validates
 * it, and what follows it in the buffer up to ahead bytes from pos while
 * the records are plain events (anything else is left for a later call,
 * so that an error is reported only when its slot is reached). Returns 1
 * with a head at f->buf + f->pos, 0 at the clean end of the file, -1 on
 * error (f->err). With may_fill 0 the buffer is never moved or refilled,
 * so records already handed out stay put: where it would have to be,
 * KMT_NEED_FILL is returned instead (call again with may_fill 1).
 */
int kmt_file_vet(struct kmt_file *f, int may_fill, size_t ahead);

/* kmt_file_vet() as far as the buffer goes, if the head is not validated yet. */
static inline int kmt_file_examine(struct kmt_file *f, int may_fill)
{
	if (kmt_likely(f->pos < f->vet))
		return 1;
	return kmt_file_vet(f, may_fill, SIZE_MAX);
}

#endif /* KMT_READER_INT_H */
