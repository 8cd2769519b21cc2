/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rotate.h - a leaf of kmemtraced (see kmemtraced.h): --max-size's
 * segment directories and checkpoints (rotate.c).
 */
#ifndef KMTD_ROTATE_H
#define KMTD_ROTATE_H

#include <stddef.h>
#include <stdint.h>

#include "kmt_ckpt.h"
#include "kmtd_util.h"

/* SIZE with an optional k/M/G/T suffix (powers of 1024, "KiB" too): 0 or -1. */
int kmtd_parse_size(const char *arg, uint64_t *out);
/* DIR/ckpt.SSSSSS, the checkpoint written when segment SSSSSS - 1 was dropped. */
void kmtd_ckpt_dir(const char *outdir, unsigned int seg, char *buf, size_t size);
/* Creates DIR/seg.SSSSSS (mode 0700): 0, or -1 with a message. */
int kmtd_make_seg_dir(const char *outdir, unsigned int seg);
/* Removes a directory of files (a segment, a checkpoint); gone already is 0. */
int kmtd_remove_dir(const char *path);
/*
 * Folds segment seg (closed; its records all before cut_ns, the next
 * one's start) into k, writes DIR/ckpt.(seg+1) and removes ckpt.seg and
 * seg.seg (moved into keep_dir instead, when given). *ckpt_bytes: the new
 * checkpoint's size. 0, or -1 with a message: the segment is kept then.
 */
int kmtd_drop_segment(struct kmt_ckpt *k, const char *outdir, unsigned int seg, uint64_t cut_ns,
		      const char *keep_dir, uint64_t *ckpt_bytes);

#endif /* KMTD_ROTATE_H */
