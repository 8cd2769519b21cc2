/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt_ckpt.h - folds the oldest segments of a rotated trace into a
 * checkpoint (Documentation/trace-format.md, section 10): what a report of
 * the kept segments still needs of the dropped ones, in memory that grows
 * with the live objects, not with time.
 */
#ifndef KMT_CKPT_H
#define KMT_CKPT_H

#include <stdint.h>

#include "kmt_reader.h"

struct kmt_ckpt;

struct kmt_ckpt_stats {
	uint64_t live;		/* allocations live at the cut, kept verbatim */
	uint64_t kept;		/* other records kept verbatim */
	uint64_t sums;		/* SUM keys */
	uint64_t folded;	/* events folded into sums */
	uint64_t fed;		/* records fed since kmt_ckpt_new() */
	uint64_t memory;	/* bytes the fold holds */
};

struct kmt_ckpt *kmt_ckpt_new(void);
void kmt_ckpt_free(struct kmt_ckpt *k);

/*
 * Folds every record of the segment directory segdir (its cpuN.out files,
 * merged in time order), all of which must be before cut_ns. Segments are
 * folded oldest first. 0, or -1 with *err (the file and offset at fault).
 */
int kmt_ckpt_fold_dir(struct kmt_ckpt *k, const char *segdir, uint64_t cut_ns,
		      struct kmt_error *err);

/* Folds one record (host byte order), in merged time order. 0 or -1 (out of memory). */
int kmt_ckpt_feed(struct kmt_ckpt *k, const union kmt_rec *r);

/*
 * Writes the checkpoint of everything folded so far into dir (created,
 * mode 0700; its cpuN.out files mode 0600, fsync()ed): one file per CPU
 * of the folded files, header as theirs with kind KMT_FILE_CHECKPOINT,
 * cut_ns, segment and the CPU's dropped records. 0, or -1 with *err.
 */
int kmt_ckpt_write(struct kmt_ckpt *k, const char *dir, uint32_t segment, uint64_t cut_ns,
		   struct kmt_error *err);

void kmt_ckpt_get_stats(const struct kmt_ckpt *k, struct kmt_ckpt_stats *st);

#endif /* KMT_CKPT_H */
