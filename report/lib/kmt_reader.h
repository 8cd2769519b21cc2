/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt_reader.h - the one trace reader: opens cpuN.out files, validates
 * them as it streams their records (in host byte order) and merges several
 * files in time order. Every tool that parses traces goes through here.
 */
#ifndef KMT_READER_H
#define KMT_READER_H

#include <stddef.h>
#include <stdint.h>

#include "kmemtrace_abi.h"

/* One record slot, decoded into host byte order. Select a member by c.type. */
union kmt_rec {
	struct kmt_record_common c;	/* any type: type, flags, cpu, seq, timestamp */
	struct kmt_event ev;		/* KMT_REC_KMALLOC .. KMT_REC_PAGE_FREE */
	struct kmt_cache_desc cache;	/* KMT_REC_CACHE_DESC */
	struct kmt_lost lost;		/* KMT_REC_LOST */
	struct kmt_stack stack;		/* KMT_REC_STACK (1.2) */
	struct kmt_sum sum;		/* KMT_REC_SUM (1.3), in checkpoints only */
	uint8_t raw[KMT_RECORD_SIZE];
};

/* Highest record type this reader knows; index bound of kmt_file_stats.by_type. */
#define KMT_REC_TYPE_MAX	KMT_REC_SUM

/* What went wrong, which decides the exit code (kmt_error_exit()). */
enum kmt_err_class {
	KMT_ERR_NONE = 0,
	KMT_ERR_DATA,		/* not a trace, corrupt, inconsistent: exit 2 */
	KMT_ERR_IO,		/* open/read/readdir failed: exit 3 */
	KMT_ERR_NOMEM,		/* out of memory: exit 4 */
	KMT_ERR_USAGE,		/* caller error, e.g. no files given: exit 1 */
};

#define KMT_ERROR_MSG_LEN	768

/*
 * A failure, ready to print: msg is one line without a newline, of the form
 * "PATH: offset N: what is wrong" for bad data at a known byte offset,
 * "PATH: what is wrong" otherwise (e.g. "PATH: cannot open: No such file or
 * directory"). offset is the byte offset in the file of the header field or
 * record slot at fault, or UINT64_MAX when there is none.
 */
struct kmt_error {
	enum kmt_err_class cls;
	uint64_t offset;
	char msg[KMT_ERROR_MSG_LEN];
};

/* KMT_EXIT_* (kmt_exit.h) for an error class; KMT_EXIT_OK for KMT_ERR_NONE. */
int kmt_error_exit(const struct kmt_error *err);

/*
 * Flags for kmt_file_open() and kmt_merge_open().
 *
 * KMT_OPEN_ALLOW_TRUNCATED: a partial record slot at the end of the file
 * (a killed kmemtraced, a full disk) is not an error: reading stops cleanly
 * before it and kmt_file_stats().truncated_bytes says how long it was.
 * Without the flag it is a KMT_ERR_DATA error at its offset.
 *
 * KMT_OPEN_NO_NAME_CHECK: do not compare the header's CPU with N of a file
 * named cpuN.out (files with other names are never checked).
 *
 * KMT_OPEN_MAP: a regular file in host byte order is read through a
 * mapping rather than copied by read(2), which was a fifth of a report's
 * time. For a tool that only reads finished files: should one shrink
 * while mapped (a kmemtraced still writing it cuts a partial record),
 * the mapping's pages past its end fault, and the process ends with a
 * message that names the file and exit code KMT_EXIT_IO
 * (kmt_map_guard()). Other files are read as without the flag.
 */
#define KMT_OPEN_ALLOW_TRUNCATED	0x1u
#define KMT_OPEN_NO_NAME_CHECK		0x2u
#define KMT_OPEN_MAP			0x4u

/*
 * Counts of what a file held, from the records read so far (the whole
 * file once kmt_file_next() returned 0; up to the bad record after -1).
 * Only validated records are counted. A merge validates each file's
 * records ahead of the merged stream, as far as the file's read buffer
 * goes, and counts them then: its files' counts are the whole files' once
 * the merge returned 0, the failing file's up to its bad record after -1.
 */
struct kmt_file_stats {
	uint64_t records;		/* slots read after the header, unknown types included */
	uint64_t events;		/* types KMT_REC_KMALLOC .. KMT_REC_PAGE_FREE */
	uint64_t by_type[KMT_REC_TYPE_MAX + 1];	/* per known type; [0] unused */
	uint64_t unknown;		/* slots of unknown type, skipped */
	uint64_t cache_descs;		/* KMT_REC_CACHE_DESC */
	uint64_t lost_markers;		/* KMT_REC_LOST records */
	uint64_t lost_records;		/* sum of their count fields */
	uint64_t last_total_dropped;	/* total_dropped of the last LOST record */
	uint64_t stack_slots;		/* KMT_REC_STACK records */
	uint64_t sums;			/* KMT_REC_SUM records (checkpoints) */
	uint64_t stacks;		/* whole stacks: their last slot was read */
	/*
	 * Stacks begun but not finished: cut by a LOST marker, by the end of
	 * the file, or begun before the file did (continuation slots first).
	 */
	uint64_t stacks_incomplete;
	uint64_t first_ts, last_ts;	/* ns, of known records; valid if records_timed */
	uint64_t records_timed;		/* known-type records (those with checked timestamps) */
	uint32_t first_seq, last_seq;	/* of known records; valid if records_timed */
	uint64_t truncated_bytes;	/* partial slot at the end (KMT_OPEN_ALLOW_TRUNCATED) */
	uint64_t file_bytes;		/* bytes consumed: header + slots (+ truncated tail) */
	/* Files read one after another as this CPU's stream (kmt_merge_open_inputs()). */
	uint64_t files;
};

struct kmt_file;

/*
 * Opens and validates the header of a trace file. Returns NULL with *err
 * filled (err may not be NULL). Header checks, each with its own message:
 * file shorter than a header, magic (either byte order), unknown major
 * (a newer minor is accepted), header_size and record_size of 64,
 * byte_order agreeing with the magic, word_bits 32 or 64, known clock,
 * page_size a power of two, and the header's CPU equal to N of a file
 * named cpuN.out, kind KMT_FILE_RECORDS or KMT_FILE_CHECKPOINT (1.3; a
 * checkpoint of minor KMT_CKPT_MINOR or later, with a cut_ns and a
 * segment). Reserved header bytes are not checked: a newer minor may use
 * them.
 *
 * A checkpoint (kmemtraced --max-size, trace-format.md section 10) is read
 * with every check of a records file but the sequence numbers, whose gaps
 * are by design: its records are before cut_ns, and its KMT_REC_SUM
 * records come after all the others, each checked (sum_kind, alloc_type,
 * count, seq 0, cross_cpu and cross_node within count, none cross-CPU
 * when failed, a stack id of a whole stack earlier in the file,
 * timestamp cut_ns - 1). A SUM record in any other file is an error.
 */
struct kmt_file *kmt_file_open(const char *path, unsigned int flags, struct kmt_error *err);

/*
 * Reads the next record into *rec in host byte order, skipping (and
 * counting) unknown record types. Returns 1 for a record, 0 at the clean
 * end of the file, -1 on error (kmt_file_error(); every later call returns
 * -1 again). Checks on every known record: its cpu equals the header's;
 * type 0 (a zeroed slot) is corruption; timestamps never decrease; seq
 * continuity (a gap must be explained by a LOST record; an unknown-type
 * slot may consume one seq); a cache name is NUL-terminated; on a 32-bit
 * trace, addresses fit in 32 bits; an event marked KMT_F_NO_STACK names no
 * stack id. A stack's slots (KMT_REC_STACK) are
 * checked one by one and as a sequence: stack id not 0, depth
 * 1..KMT_STACK_MAX_DEPTH, first a multiple of KMT_STACK_SLOT_FRAMES,
 * every slot but the last full, unused frames zero (and the reserved
 * bytes, in a file of a minor that has no use for them), and the slots
 * of one stack consecutive and in order: only a LOST marker may cut a
 * stack short. Continuation slots with no beginning are accepted at the
 * start of a file and after a LOST marker (a file may start mid-stream).
 */
int kmt_file_next(struct kmt_file *f, union kmt_rec *rec);

/* The header in host byte order (magic reads as KMT_MAGIC). */
const struct kmt_file_header *kmt_file_header(const struct kmt_file *f);
/*
 * The header of the checkpoint the file (or its stream) began with, in
 * host byte order; NULL when it began with a records file.
 */
const struct kmt_file_header *kmt_file_checkpoint(const struct kmt_file *f);
const struct kmt_file_stats *kmt_file_stats(const struct kmt_file *f);
/* The error after kmt_file_next() returned -1 (cls KMT_ERR_NONE before). */
const struct kmt_error *kmt_file_error(const struct kmt_file *f);
const char *kmt_file_path(const struct kmt_file *f);
/* Byte offset in the file of the record kmt_file_next() last returned. */
uint64_t kmt_file_offset(const struct kmt_file *f);
/* Nonzero if the file is big-endian (whatever the host is). */
int kmt_file_big_endian(const struct kmt_file *f);
void kmt_file_close(struct kmt_file *f);

/* "kmalloc", "cache_alloc", "page_alloc", "kfree", "cache_free", "page_free",
 * "cache_desc", "lost", "stack", "sum"; "unknown" otherwise. */
const char *kmt_rec_type_name(unsigned int type);

/*
 * Lists DIR/cpuN.out (N decimal, nothing else matches) sorted by N into a
 * malloc'ed array of malloc'ed "DIR/cpuN.out" strings. Returns 0, or -1
 * with *err: the directory cannot be read (KMT_ERR_IO) or holds no such
 * file ("DIR: no cpu*.out files", KMT_ERR_DATA). Free with kmt_free_paths().
 *
 * A rotated trace (kmemtraced --max-size: no cpuN.out in DIR, seg.NNNNNN
 * directories) stands for the files of its window, in the order they are
 * read: those of the checkpoint ckpt.C of the highest C for which seg.C
 * exists, if any, then those of seg.C, seg.C+1, ... (each sorted by N);
 * older segments are left over from a drop and ignored. A missing segment
 * in the window is a KMT_ERR_DATA error naming it.
 */
int kmt_find_cpu_files(const char *dir, char ***paths, size_t *n, struct kmt_error *err);
void kmt_free_paths(char **paths, size_t n);

/*
 * A trace as a command line names it: one directory (none: the current
 * one), standing for its cpuN.out files, or the files themselves, whose
 * metadata (kmemtrace.meta, kallsyms, modules) is in the first one's
 * directory. A directory among several arguments is refused.
 */
struct kmt_inputs {
	char **paths;		/* the cpuN.out files, malloc'ed */
	size_t n;
	char *dir;		/* where the metadata is */
	const char *name;	/* the trace as named: the directory, or the first file */
	/*
	 * A rotated directory: paths holds each CPU's files one after another
	 * in reading order (checkpoint first), stream_len[i] of them for the
	 * i-th of nstreams CPUs. NULL and 0 otherwise: one file a stream.
	 */
	size_t *stream_len;
	size_t nstreams;
	uint32_t ckpt_segment;	/* rotated: C of the ckpt.C read, 0 for none */
	uint32_t first_segment, last_segment;	/* rotated: the seg.K read */
};

/*
 * Fills *in from the n arguments args. 0, or -1 with *err: the directory
 * cannot be read or holds no cpuN.out (as kmt_find_cpu_files()), a
 * directory among files (KMT_ERR_USAGE), out of memory. Free with
 * kmt_inputs_free(), also after an error.
 */
int kmt_inputs_resolve(char *const *args, size_t n, struct kmt_inputs *in,
		       struct kmt_error *err);
void kmt_inputs_free(struct kmt_inputs *in);

/*
 * Streaming k-way merge of several files (one per CPU) in order of
 * (timestamp, cpu, seq): memory is O(number of files), never of the
 * trace's length. Every file is opened with flags and validated as by
 * kmt_file_next(). Refused at open, with a clear error:
 * n == 0, files of different ABI majors ("mixed ABI versions"), two files
 * of the same CPU, files disagreeing on byte order, word size or page size
 * (not one trace).
 */
struct kmt_merge;

struct kmt_merge *kmt_merge_open(char *const *paths, size_t n, unsigned int flags,
				 struct kmt_error *err);
/*
 * kmt_merge_open() of resolved inputs: a rotated trace's files of one CPU
 * are read one after another as one stream (the merge's file index i is
 * then the i-th stream, kmt_merge_file(i) its file being read), each
 * opened when the one before ends: the stream's timestamps must not go
 * back from one file to the next (an error naming both), its files agree
 * on their header's CPU, byte order, word size and page size, and only
 * the first may be a checkpoint.
 */
struct kmt_merge *kmt_merge_open_inputs(const struct kmt_inputs *in, unsigned int flags,
					struct kmt_error *err);
/* kmt_inputs_resolve(dir) + kmt_merge_open_inputs(). */
struct kmt_merge *kmt_merge_open_dir(const char *dir, unsigned int flags, struct kmt_error *err);
/*
 * Next record in merged order: 1 with *rec (host order) and *file_index
 * (index into the paths given to kmt_merge_open, may be NULL), 0 when
 * every file is exhausted, -1 on error (kmt_merge_error(), which is the
 * failing file's error).
 */
int kmt_merge_next(struct kmt_merge *m, union kmt_rec *rec, size_t *file_index);
/*
 * Up to max records in merged order, as pointers into the files' read
 * buffers (host byte order, validated): valid until the next
 * kmt_merge_next_batch(), kmt_merge_next() or kmt_merge_close() on m.
 * Returns the count (> 0), 0 when every file is exhausted, -1 on error
 * (kmt_merge_error()). Records before a bad one are returned first; the
 * error is the answer of the call after, as with kmt_merge_next(). The
 * records are the ones kmt_merge_next() would return, in the same order.
 * Fewer than max does not mean the end: a batch also stops where a file's
 * buffer must be refilled (about every 4096 records of a file), and at
 * INT_MAX. max 0 is refused: -1 with a KMT_ERR_USAGE error (not sticky).
 */
int kmt_merge_next_batch(struct kmt_merge *m, const union kmt_rec **recs, size_t max);
const struct kmt_error *kmt_merge_error(const struct kmt_merge *m);
/*
 * A rotated trace's checkpoint (1.3): 1 with the cut its files began with
 * (one for all) and the sum of their dropped_records, 0 when no stream
 * began with a checkpoint (*cut_ns and *dropped 0), -1 with *err when two
 * checkpoints disagree on the cut (the path of the file read, when a
 * stream has gone on to its segments).
 */
int kmt_merge_checkpoint(const struct kmt_merge *m, uint64_t *cut_ns, uint64_t *dropped,
			 struct kmt_error *err);
size_t kmt_merge_nfiles(const struct kmt_merge *m);
/* The i-th file (its header, stats, path) while the merge is open. */
struct kmt_file *kmt_merge_file(const struct kmt_merge *m, size_t i);
void kmt_merge_close(struct kmt_merge *m);

#endif /* KMT_READER_H */
