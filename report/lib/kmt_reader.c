// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_reader.c - opens one cpuN.out, validates its header and streams its
 * records in host byte order, checking each as it goes. This is the only
 * code that decides what a valid trace is; kmemtrace_check and the report
 * both rely on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmt_exit.h"
#include "kmt_map.h"
#include "kmt_reader_int.h"
#include "kmt_writer.h"

/*
 * Reads of 32 KiB keep a read()'s own cost to a few nanoseconds a record;
 * a multiple of the slot size keeps slots from straddling refills in the
 * common case of a whole file. Not larger: a merge holds every file's
 * buffer, and the analysis' tables (call sites, their map, the object
 * table) share the core's L2 cache with them. At 256 KiB four CPUs'
 * buffers took half of a 2 MiB L2, and the report of 20 M events took 11%
 * longer than with 32 KiB (64 KiB: 3%; 16 KiB, more read() calls: 3%).
 * The fuzz build makes it small, so that short inputs refill it too.
 */
#ifndef KMT_READ_BUF
#define KMT_READ_BUF	(1u << 15)
#endif
_Static_assert(KMT_READ_BUF % KMT_RECORD_SIZE == 0 && KMT_READ_BUF >= KMT_RECORD_SIZE,
	       "the read buffer holds whole slots");

/*
 * A mapped file (KMT_OPEN_MAP) is read in windows of KMT_MAP_WINDOW
 * bytes (rounded up to a multiple of the page size): a window's pages
 * count in the report's RSS once read, and windows of 256 MiB took it
 * from 12 MiB to 1 GiB for four files; 4 MiB ones are as fast (1 MiB: 3%
 * slower), for 26 MiB. Each is validated KMT_READ_BUF bytes at a time
 * ahead of the merge, as a read buffer would be: the records checked are
 * still in the L2 cache when the merge takes them. Checking them is then what waits
 * for memory, so the loop asks for the slot VET_PREFETCH slots (8 KiB)
 * ahead: with it, 20 M events took 10-15% less time than read(2)'s copy,
 * without it as long (4 KiB ahead: 5% more than 8; 16 KiB: no better).
 * A file in the other byte order is read, not mapped: swapped in place,
 * its mapped pages would each become a private copy. A unit test makes
 * the window small.
 */
#ifndef KMT_MAP_WINDOW
#define KMT_MAP_WINDOW	((size_t)4 << 20)
#endif
#define VET_PREFETCH	128

static size_t map_window(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t page = pg > 0 ? (size_t)pg : 4096;

	/* A multiple of the page size is one of the slot size: no slot straddles two. */
	return (KMT_MAP_WINDOW + page - 1) / page * page;
}

int kmt_error_exit(const struct kmt_error *err)
{
	switch (err->cls) {
	case KMT_ERR_NONE:
		return KMT_EXIT_OK;
	case KMT_ERR_DATA:
		return KMT_EXIT_DATA;
	case KMT_ERR_IO:
		return KMT_EXIT_IO;
	case KMT_ERR_USAGE:
		return KMT_EXIT_USAGE;
	case KMT_ERR_NOMEM:
	default:
		return KMT_EXIT_INTERNAL;
	}
}

void kmt_err_set(struct kmt_error *err, enum kmt_err_class cls, const char *path,
		 uint64_t offset, const char *fmt, ...)
{
	char what[KMT_ERROR_MSG_LEN];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	err->cls = cls;
	err->offset = offset;
	if (offset == UINT64_MAX)
		n = snprintf(err->msg, sizeof(err->msg), "%s: %s", path, what);
	else
		n = snprintf(err->msg, sizeof(err->msg), "%s: offset %" PRIu64 ": %s", path,
			     offset, what);
	/* A path too long for the line: keep what fits, marked as cut. */
	if (n >= (int)sizeof(err->msg))
		memcpy(err->msg + sizeof(err->msg) - 4, "...", 4);
}

static const char *const type_names[] = {
	[KMT_REC_KMALLOC] = "kmalloc",
	[KMT_REC_CACHE_ALLOC] = "cache_alloc",
	[KMT_REC_PAGE_ALLOC] = "page_alloc",
	[KMT_REC_KFREE] = "kfree",
	[KMT_REC_CACHE_FREE] = "cache_free",
	[KMT_REC_PAGE_FREE] = "page_free",
	[KMT_REC_CACHE_DESC] = "cache_desc",
	[KMT_REC_LOST] = "lost",
	[KMT_REC_STACK] = "stack",
	[KMT_REC_SUM] = "sum",
};

/*
 * Stack slots were added by 1.2: a file of that minor or older has no use
 * for their reserved bytes, which must then be zero; a newer minor may
 * give them meaning.
 */
#define KMT_STACK_MINOR		2

const char *kmt_rec_type_name(unsigned int type)
{
	if (type >= 1 && type <= KMT_REC_TYPE_MAX)
		return type_names[type];
	return "unknown";
}

/*
 * f is read with read(2) from its next slot on, no longer mapped: 0, or
 * -1 when it cannot seek there. What a mapped window held past that slot
 * (a partial slot) is read again.
 */
static int map_stop(struct kmt_file *f)
{
	uint64_t at = f->buf_off + f->pos;

	f->flags &= ~KMT_OPEN_MAP;
	if (!f->mapped)
		return 0;
	kmt_map_release(f->buf, f->map_len);
	f->mapped = 0;
	f->buf = f->rbuf;
	f->buf_off = at;
	f->vet -= f->pos;
	f->pos = f->len = 0;
	f->at_eof = 0;
	return lseek(f->fd, (off_t)at, SEEK_SET) < 0 ? -1 : 0;
}

/*
 * Maps the window of the file that holds the next slot (f->buf_off +
 * f->pos), up to the file's end, in place of the one before: 0. When the
 * file cannot be mapped (not a regular file, no address space), it is
 * read with read(2) from that slot on (map_stop()): 1, or -1 when it
 * cannot seek there.
 */
static int map_fill(struct kmt_file *f)
{
	size_t rest = f->len - f->pos, window = map_window(), len;
	uint64_t at = f->buf_off + f->pos, start = at - at % window;
	struct stat sb;
	uint8_t *p;

	if (fstat(f->fd, &sb) < 0 || !S_ISREG(sb.st_mode))
		goto unmapped;
	if ((uint64_t)sb.st_size <= at + rest) {
		f->at_eof = 1;
		return 0;
	}
	len = (uint64_t)sb.st_size - start < window ? (size_t)(sb.st_size - start) : window;
	p = kmt_map_window(f->fd, start, len, f->path);
	if (!p)
		goto unmapped;
	if (f->mapped)
		kmt_map_release(f->buf, f->map_len);
	f->buf = p;
	f->map_len = len;
	f->mapped = 1;
	f->vet = f->vet - f->pos + (size_t)(at - start);
	f->pos = (size_t)(at - start);
	f->buf_off = start;
	f->len = len;
	f->at_eof = start + len == (uint64_t)sb.st_size;
	return 0;

unmapped:
	return map_stop(f) < 0 ? -1 : 1;
}

/*
 * Reads until the buffer holds at least want unread bytes or the file
 * ends. Returns 0, or -1 with f->err set on a read error.
 */
static int fill(struct kmt_file *f, size_t want)
{
	if (f->flags & KMT_OPEN_MAP) {
		int rc = map_fill(f);

		if (rc == 0)
			return 0;
		if (rc < 0) {
			kmt_err_set(&f->err, KMT_ERR_IO, f->path, f->buf_off + f->len,
				    "seek error: %s", strerror(errno));
			f->failed = 1;
			return -1;
		}
	}
	if (f->pos) {
		size_t rest = f->len - f->pos;

		memmove(f->buf, f->buf + f->pos, rest);
		f->buf_off += f->pos;
		f->len = rest;
		f->vet -= f->pos;
		f->pos = 0;
	}
	while (f->len < want && !f->at_eof) {
		ssize_t n = read(f->fd, f->buf + f->len, KMT_READ_BUF - f->len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			kmt_err_set(&f->err, KMT_ERR_IO, f->path, f->buf_off + f->len,
				    "read error: %s", strerror(errno));
			f->failed = 1;
			return -1;
		}
		if (n == 0)
			f->at_eof = 1;
		f->len += (size_t)n;
	}
	return 0;
}

/* N of a base name "cpuN.out", or -1 for any other name. */
static long cpu_of_name(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *p;
	char *end;
	unsigned long n;

	base = base ? base + 1 : path;
	if (strncmp(base, "cpu", 3) != 0)
		return -1;
	p = base + 3;
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	n = strtoul(p, &end, 10);
	if (errno || strcmp(end, ".out") != 0 || n > 0x7fffffffUL)
		return -1;
	return (long)n;
}

long kmt_cpu_of_name(const char *path)
{
	return cpu_of_name(path);
}

/*
 * Checks a header (already in host order) of a file whose magic said
 * big_endian. One message per failure, at the offset of the field.
 */
static int check_header(const struct kmt_file_header *h, int big_endian, const char *path,
			unsigned int flags, struct kmt_error *err)
{
	unsigned int want_order = big_endian ? KMT_BYTE_ORDER_BE : KMT_BYTE_ORDER_LE;
	long name_cpu;

	if (h->version_major != KMT_ABI_MAJOR) {
		kmt_err_set(err, KMT_ERR_DATA, path, 4,
			    "ABI version %u.%u not supported (this reader: %u.x)",
			    h->version_major, h->version_minor, KMT_ABI_MAJOR);
		return -1;
	}
	if (h->header_size != KMT_RECORD_SIZE) {
		kmt_err_set(err, KMT_ERR_DATA, path, 8, "header size %u, expected %u",
			    h->header_size, KMT_RECORD_SIZE);
		return -1;
	}
	if (h->record_size != KMT_RECORD_SIZE) {
		kmt_err_set(err, KMT_ERR_DATA, path, 10, "record size %u, expected %u",
			    h->record_size, KMT_RECORD_SIZE);
		return -1;
	}
	if (h->byte_order != want_order) {
		kmt_err_set(err, KMT_ERR_DATA, path, 14,
			    "byte order field is %u but the magic is %s-endian (expected %u)",
			    h->byte_order, big_endian ? "big" : "little", want_order);
		return -1;
	}
	if (h->word_bits != 32 && h->word_bits != 64) {
		kmt_err_set(err, KMT_ERR_DATA, path, 15, "word size %u bits, expected 32 or 64",
			    h->word_bits);
		return -1;
	}
	if (h->clock_id != KMT_CLOCK_MONOTONIC) {
		kmt_err_set(err, KMT_ERR_DATA, path, 16,
			    "unknown clock id %u (this reader knows %u, CLOCK_MONOTONIC)",
			    h->clock_id, KMT_CLOCK_MONOTONIC);
		return -1;
	}
	if (h->page_size == 0 || (h->page_size & (h->page_size - 1))) {
		kmt_err_set(err, KMT_ERR_DATA, path, 20, "page size %" PRIu32
			    " is not a power of two", h->page_size);
		return -1;
	}
	if (h->kind != KMT_FILE_RECORDS && h->kind != KMT_FILE_CHECKPOINT) {
		kmt_err_set(err, KMT_ERR_DATA, path, 17, "unknown file kind %u (this reader knows "
			    "%u, records, and %u, checkpoint)", h->kind, KMT_FILE_RECORDS,
			    KMT_FILE_CHECKPOINT);
		return -1;
	}
	if (h->kind == KMT_FILE_CHECKPOINT && h->version_minor < KMT_CKPT_MINOR) {
		kmt_err_set(err, KMT_ERR_DATA, path, 6, "checkpoint of format %u.%u: checkpoints "
			    "came with %u.%u", h->version_major, h->version_minor, KMT_ABI_MAJOR,
			    KMT_CKPT_MINOR);
		return -1;
	}
	if (h->kind == KMT_FILE_CHECKPOINT && !h->cut_ns) {
		kmt_err_set(err, KMT_ERR_DATA, path, 40, "checkpoint with a cut at 0 ns");
		return -1;
	}
	if (h->kind == KMT_FILE_CHECKPOINT && !h->segment) {
		kmt_err_set(err, KMT_ERR_DATA, path, 56, "checkpoint of segment 0 (segments "
			    "count from 1)");
		return -1;
	}
	name_cpu = (flags & KMT_OPEN_NO_NAME_CHECK) ? -1 : cpu_of_name(path);
	if (name_cpu >= 0 && name_cpu != h->cpu) {
		kmt_err_set(err, KMT_ERR_DATA, path, 12, "file name says CPU %ld, header says CPU %u",
			    name_cpu, h->cpu);
		return -1;
	}
	return 0;
}

/*
 * Decodes a raw 64-byte header: 0 with *h in host order and *big_endian,
 * or -1 if the magic matches in neither byte order.
 */
int kmt_header_decode(const void *raw, struct kmt_file_header *h, int *big_endian)
{
	memcpy(h, raw, sizeof(*h));
	if (h->magic == KMT_MAGIC) {
		*big_endian = kmt_host_big_endian();
		return 0;
	}
	if (h->magic == __builtin_bswap32(KMT_MAGIC)) {
		kmt_header_swap(h);
		*big_endian = !kmt_host_big_endian();
		return 0;
	}
	return -1;
}

static int not_a_trace(const uint8_t *raw, const char *path, struct kmt_error *err)
{
	kmt_err_set(err, KMT_ERR_DATA, path, 0,
		    "not a kmemtrace file (magic bytes %02x %02x %02x %02x, expected 4b 4d 54 52 or 52 54 4d 4b)",
		    raw[0], raw[1], raw[2], raw[3]);
	return -1;
}

struct kmt_file *kmt_file_open(const char *path, unsigned int flags, struct kmt_error *err)
{
	struct kmt_file *f;
	struct stat sb;

	memset(err, 0, sizeof(*err));
	f = calloc(1, sizeof(*f));
	if (!f)
		goto err_nomem;
	f->fd = -1;
	f->flags = flags;
	f->path = strdup(path);
	f->rbuf = malloc(KMT_READ_BUF);
	f->buf = f->rbuf;
	if (!f->path || !f->buf)
		goto err_nomem;

	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		kmt_err_set(err, KMT_ERR_IO, path, UINT64_MAX, "cannot open: %s", strerror(errno));
		goto err_free;
	}
	if (fstat(f->fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		kmt_err_set(err, KMT_ERR_IO, path, UINT64_MAX, "is a directory, not a trace file");
		goto err_free;
	}
#ifdef POSIX_FADV_SEQUENTIAL
	posix_fadvise(f->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
	if (fill(f, KMT_RECORD_SIZE) < 0) {
		*err = f->err;
		goto err_free;
	}
	if (f->len == 0) {
		kmt_err_set(err, KMT_ERR_DATA, path, 0, "empty file, not a kmemtrace file");
		goto err_free;
	}
	if (f->len < KMT_RECORD_SIZE) {
		if (f->len >= 4) {
			uint8_t raw[KMT_RECORD_SIZE] = { 0 };
			struct kmt_file_header tmp;
			int be;

			memcpy(raw, f->buf, f->len);
			if (kmt_header_decode(raw, &tmp, &be) < 0) {
				not_a_trace(f->buf, path, err);
				goto err_free;
			}
		}
		kmt_err_set(err, KMT_ERR_DATA, path, 0,
			    "file too short for a kmemtrace header (%zu bytes, need %u)", f->len,
			    KMT_RECORD_SIZE);
		goto err_free;
	}
	if (kmt_header_decode(f->buf, &f->hdr, &f->big_endian) < 0) {
		not_a_trace(f->buf, path, err);
		goto err_free;
	}
	if (check_header(&f->hdr, f->big_endian, path, flags, err) < 0)
		goto err_free;
	f->swap = f->big_endian != kmt_host_big_endian();
	f->tr.cpu = f->hdr.cpu;
	f->tr.word_bits = f->hdr.word_bits;
	f->pos = KMT_RECORD_SIZE;
	f->vet = f->pos;
	if (f->swap && map_stop(f) < 0) {
		kmt_err_set(err, KMT_ERR_IO, path, KMT_RECORD_SIZE, "seek error: %s",
			    strerror(errno));
		goto err_free;
	}
	f->tr.unknown_since = UINT32_MAX;
	f->tr.stk_orphans_ok = 1;
	f->st.files = 1;
	if (f->hdr.kind == KMT_FILE_CHECKPOINT) {
		f->ckpt = 1;
		f->has_ckpt = 1;
		f->ckpt_hdr = f->hdr;
	}
	return f;

err_nomem:
	kmt_err_set(err, KMT_ERR_NOMEM, path, UINT64_MAX, "out of memory");
err_free:
	kmt_file_close(f);
	return NULL;
}

/* Records an error at the slot just taken; kmt_file_next() returns its -1. */
static int __attribute__((format(printf, 2, 3))) rec_fail(struct kmt_file *f, const char *fmt, ...)
{
	char what[KMT_ERROR_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	kmt_err_set(&f->err, KMT_ERR_DATA, f->path, f->rec_off, "%s", what);
	f->failed = 1;
	return -1;
}

/* One slot of a stack, on its own and as the next of its stack. */
static int check_stack(struct kmt_file *f, const struct kmt_stack *s)
{
	struct kmt_track *t = &f->tr;
	unsigned int id = s->stack_id, want, next, i;

	if (!id)
		return rec_fail(f, "stack record with stack id 0");
	if (!s->depth || s->depth > KMT_STACK_MAX_DEPTH)
		return rec_fail(f, "stack id %u: depth %u, expected 1..%u", id, s->depth,
				KMT_STACK_MAX_DEPTH);
	if (!s->nframes || s->nframes > KMT_STACK_SLOT_FRAMES)
		return rec_fail(f, "stack id %u: %u frames in a slot, expected 1..%u", id,
				s->nframes, KMT_STACK_SLOT_FRAMES);
	if (s->first % KMT_STACK_SLOT_FRAMES)
		return rec_fail(f, "stack id %u: slot starts at frame %u, not a multiple of %u", id,
				s->first, KMT_STACK_SLOT_FRAMES);
	if (s->first + s->nframes > s->depth)
		return rec_fail(f, "stack id %u: slot holds frames %u..%u, beyond the depth %u", id,
				s->first, s->first + s->nframes - 1, s->depth);
	want = s->depth - s->first < KMT_STACK_SLOT_FRAMES ? s->depth - s->first :
							     KMT_STACK_SLOT_FRAMES;
	if (s->nframes != want)
		return rec_fail(f, "stack id %u: slot at frame %u holds %u frames where %u expected "
				"(depth %u): only the last slot may be partly used", id, s->first,
				s->nframes, want, s->depth);
	for (i = s->nframes; i < KMT_STACK_SLOT_FRAMES; i++)
		if (s->frames[i])
			return rec_fail(f, "stack id %u: unused frame slot %u is not zero", id, i);
	if (f->hdr.version_minor <= KMT_STACK_MINOR &&
	    (s->reserved[0] | s->reserved[1] | s->reserved[2]))
		return rec_fail(f, "stack id %u: reserved bytes are not zero", id);
	for (i = 0; t->word_bits == 32 && i < s->nframes; i++)
		if (s->frames[i] >> 32)
			return rec_fail(f, "stack id %u: frame %u (0x%" PRIx64
					") above 32 bits in a 32-bit trace", id, s->first + i,
					(uint64_t)s->frames[i]);
	if (t->stk_next) {
		if (id != t->stk_id || s->depth != t->stk_depth || s->first != t->stk_next)
			return rec_fail(f, "stack id %u slot at frame %u (depth %u) where stack id %u's "
					"frames from %u (depth %u) were expected: the slots of a "
					"stack must be consecutive and in order", id, s->first,
					s->depth, t->stk_id, t->stk_next, t->stk_depth);
	} else if (s->first) {
		if (!t->stk_orphans_ok)
			return rec_fail(f, "stack id %u: slot at frame %u without the stack's first "
					"slot before it", id, s->first);
		/* Begun before the file or the drop: never whole. */
		f->st.stacks_incomplete++;
		t->stk_orphan = 1;
	} else {
		f->st.stacks_incomplete++;
		t->stk_orphan = 0;
	}
	t->stk_orphans_ok = 0;
	next = s->first + s->nframes;
	if (next == s->depth) {
		if (!t->stk_orphan) {
			f->st.stacks_incomplete--;
			f->st.stacks++;
		}
		t->stk_next = 0;
	} else {
		t->stk_next = (uint8_t)next;
		t->stk_depth = s->depth;
		t->stk_id = (uint16_t)id;
	}
	return 0;
}

/*
 * A record that is not a stack slot: it may not cut a stack short, but a
 * LOST marker (the stack's remaining slots were dropped) does, and so do a
 * checkpoint's SUM records, which follow its last kept record: a stack cut
 * short at the end of the dropped segments (its LOST marker came after
 * the cut) ends there.
 */
static int stack_cut(struct kmt_file *f, const union kmt_rec *r)
{
	struct kmt_track *t = &f->tr;

	if (r->c.type == KMT_REC_LOST || (r->c.type == KMT_REC_SUM && f->ckpt)) {
		t->stk_next = 0;
		t->stk_orphans_ok = r->c.type == KMT_REC_LOST;
		return 0;
	}
	if (!t->stk_next) {
		t->stk_orphans_ok = 0;
		return 0;
	}
	return rec_fail(f, "%s record inside stack id %u: its frames from %u (of %u) must come "
			"first", kmt_rec_type_name(r->c.type), t->stk_id, t->stk_next,
			t->stk_depth);
}

/* A SUM record of a checkpoint, on its own (check_ckpt() placed it). */
static int check_sum(struct kmt_file *f, const struct kmt_sum *s)
{
	if (!f->ckpt)
		return rec_fail(f, "sum record in a file that is not a checkpoint (kind %u)",
				f->hdr.kind);
	if (s->sum_kind != KMT_SUM_FREED && s->sum_kind != KMT_SUM_FAILED)
		return rec_fail(f, "sum record of kind %u, expected %u (freed) or %u (failed)",
				s->sum_kind, KMT_SUM_FREED, KMT_SUM_FAILED);
	if (s->alloc_type != KMT_REC_KMALLOC && s->alloc_type != KMT_REC_CACHE_ALLOC)
		return rec_fail(f, "sum record of allocation type %u, expected %u (kmalloc) or "
				"%u (cache_alloc)", s->alloc_type, KMT_REC_KMALLOC,
				KMT_REC_CACHE_ALLOC);
	if (!s->count)
		return rec_fail(f, "sum record of no allocations (count 0)");
	if (s->seq)
		return rec_fail(f, "sum record with seq %" PRIu32 ", expected 0", s->seq);
	if (s->cross_cpu > s->count || s->cross_node > s->count)
		return rec_fail(f, "sum record of %" PRIu32 " allocations with %" PRIu32
				" freed on another CPU and %" PRIu32 " on another node: more than "
				"it holds", s->count, s->cross_cpu, s->cross_node);
	if (s->sum_kind == KMT_SUM_FAILED && s->cross_cpu)
		return rec_fail(f, "sum record of failed allocations with %" PRIu32
				" freed on another CPU", s->cross_cpu);
	if (s->timestamp != f->hdr.cut_ns - 1)
		return rec_fail(f, "sum record at %" PRIu64 " ns, expected the cut %" PRIu64
				" ns - 1", (uint64_t)s->timestamp, (uint64_t)f->hdr.cut_ns);
	if ((s->flags & KMT_F_NO_STACK) && s->stack_id)
		return rec_fail(f, "sum record marked as having no stack names stack id %u",
				s->stack_id);
	if (f->hdr.word_bits == 32 && ((s->call_site | s->cache_id) >> 32))
		return rec_fail(f, "sum address above 32 bits in a 32-bit trace (call_site 0x%"
				PRIx64 ", cache 0x%" PRIx64 ")", (uint64_t)s->call_site,
				(uint64_t)s->cache_id);
	f->in_sums = 1;
	return 0;
}

/* The rarer checks and counts of cache descriptions and lost-records markers. */
static int check_rare(struct kmt_file *f, const union kmt_rec *r)
{
	if (r->c.type == KMT_REC_STACK)
		return check_stack(f, &r->stack);
	if (r->c.type == KMT_REC_SUM)
		return check_sum(f, &r->sum);
	if (r->c.type == KMT_REC_LOST) {
		uint32_t want = f->tr.expected + (uint32_t)r->lost.count;

		/* An unknown slot in between may have taken a seq of its own. */
		if ((uint32_t)(r->c.seq - want) > f->tr.unknown_since)
			return rec_fail(f, "lost-records marker with seq %" PRIu32 " where %"
					PRIu32 " expected (%" PRIu32 " + count %" PRIu64 ")",
					r->c.seq, want, f->tr.expected, (uint64_t)r->lost.count);
		f->st.lost_records += r->lost.count;
		f->st.last_total_dropped = r->lost.total_dropped;
		return 0;
	}
	if (!memchr(r->cache.name, 0, sizeof(r->cache.name)))
		return rec_fail(f, "cache name not NUL-terminated");
	if (f->hdr.word_bits == 32 && (r->cache.cache_id >> 32))
		return rec_fail(f, "cache id 0x%" PRIx64 " does not fit a 32-bit trace",
				(uint64_t)r->cache.cache_id);
	return 0;
}

enum rec_fault { FAULT_NONE, FAULT_CPU, FAULT_TS, FAULT_SEQ, FAULT_ADDR, FAULT_NO_STACK };

/*
 * The first of the checks every known record passes that r fails (a cache
 * description or a LOST marker has its own checks too, in check_rare()),
 * in a file of word_bits (t->word_bits, or the same as a constant).
 */
static inline enum rec_fault rec_fault_bits(const struct kmt_track *t, const union kmt_rec *r,
					    unsigned int word_bits)
{
	unsigned int type = r->c.type;

	if (r->c.cpu != t->cpu)
		return FAULT_CPU;
	if (r->c.timestamp < t->last_ts)
		return FAULT_TS;
	/* A LOST marker carries the next seq, not its own: check_rare() checks it. */
	if (type != KMT_REC_LOST && (uint32_t)(r->c.seq - t->expected) > t->unknown_since)
		return FAULT_SEQ;
	if (type <= KMT_REC_PAGE_FREE && word_bits == 32 &&
	    ((r->ev.call_site | r->ev.ptr | r->ev.cache_id) >> 32))
		return FAULT_ADDR;
	/* Marked as having no stack, an event names none. */
	if (type <= KMT_REC_PAGE_FREE && (r->ev.flags & KMT_F_NO_STACK) && r->ev.stack_id)
		return FAULT_NO_STACK;
	return FAULT_NONE;
}

static inline enum rec_fault rec_fault(const struct kmt_track *t, const union kmt_rec *r)
{
	return rec_fault_bits(t, r, t->word_bits);
}

/*
 * Takes in a known record that passed its checks. Only what the reader
 * needs to go on is updated; kmt_file_stats() derives the rest.
 */
static inline void rec_accept(struct kmt_track *t, uint64_t *by_type, const union kmt_rec *r)
{
	unsigned int type = r->c.type;

	t->expected = r->c.seq + (type != KMT_REC_LOST);
	t->unknown_since = 0;
	t->last_ts = r->c.timestamp;
	t->last_seq = r->c.seq;
	by_type[type]++;
}

/* The message of a fault (rec_fault()). */
static int report_fault(struct kmt_file *f, const union kmt_rec *r, enum rec_fault fault)
{
	const char *name = kmt_rec_type_name(r->c.type);

	if (fault == FAULT_CPU)
		return rec_fail(f, "%s record of CPU %u in a file of CPU %u", name, r->c.cpu,
				f->tr.cpu);
	if (fault == FAULT_TS && f->prev_path)
		return rec_fail(f, "timestamp %" PRIu64 " goes back before the last record of %s"
				" (%" PRIu64 "), the file before it of CPU %u", (uint64_t)r->c.timestamp,
				f->prev_path, f->tr.last_ts, f->tr.cpu);
	if (fault == FAULT_TS)
		return rec_fail(f, "timestamp %" PRIu64 " goes backwards (previous record: %"
				PRIu64 ")", (uint64_t)r->c.timestamp, f->tr.last_ts);
	if (fault == FAULT_SEQ)
		return rec_fail(f, "seq %" PRIu32 " where %" PRIu32
				" expected and no lost-records marker", r->c.seq, f->tr.expected);
	if (fault == FAULT_NO_STACK)
		return rec_fail(f, "%s record marked as having no stack names stack id %u", name,
				r->ev.stack_id);
	return rec_fail(f, "%s address above 32 bits in a 32-bit trace (call_site 0x%" PRIx64
			", ptr 0x%" PRIx64 ", cache 0x%" PRIx64 ")", name,
			(uint64_t)r->ev.call_site, (uint64_t)r->ev.ptr, (uint64_t)r->ev.cache_id);
}

/* A checkpoint's own rules: records before the cut, SUM records last. */
static int check_ckpt(struct kmt_file *f, const union kmt_rec *r)
{
	if (f->in_sums && r->c.type != KMT_REC_SUM)
		return rec_fail(f, "%s record after the checkpoint's sum records: they come last",
				kmt_rec_type_name(r->c.type));
	if (r->c.timestamp >= f->hdr.cut_ns)
		return rec_fail(f, "%s record at %" PRIu64 " ns in a checkpoint cut at %" PRIu64
				" ns: its records are before the cut", kmt_rec_type_name(r->c.type),
				(uint64_t)r->c.timestamp, (uint64_t)f->hdr.cut_ns);
	return 0;
}

/* Every check of a known record, then its counting. */
static int check_rec(struct kmt_file *f, const union kmt_rec *r)
{
	enum rec_fault fault;

	/* Said as what it is, before its seq 0 looks like a gap. */
	if (r->c.type == KMT_REC_SUM && !f->ckpt)
		return check_sum(f, &r->sum);
	/* A checkpoint's seq gaps are by design: any seq may come next. */
	if (f->ckpt)
		f->tr.unknown_since = UINT32_MAX;
	fault = rec_fault(&f->tr, r);
	if (fault != FAULT_NONE)
		return report_fault(f, r, fault);
	if (f->ckpt && check_ckpt(f, r) < 0)
		return -1;
	/* A LOST marker always goes there: the slots after it may continue a stack. */
	if (r->c.type != KMT_REC_STACK &&
	    ((f->tr.stk_next | f->tr.stk_orphans_ok) || r->c.type == KMT_REC_LOST) &&
	    stack_cut(f, r) < 0)
		return -1;
	if (r->c.type > KMT_REC_PAGE_FREE && check_rare(f, r) < 0)
		return -1;
	if (!f->have_first) {
		f->have_first = 1;
		f->st.first_ts = r->c.timestamp;
		f->st.first_seq = r->c.seq;
	}
	rec_accept(&f->tr, f->st.by_type, r);
	if (f->prev_path) {
		free(f->prev_path);
		f->prev_path = NULL;
	}
	return 0;
}

/*
 * Opens the next file of the stream in place of the one that ended. Its
 * header must be one of the same CPU's stream; a checkpoint only comes
 * first. The sequence numbers go on from a segment to the next, not from
 * a checkpoint, whose kept records end anywhere. 0, or -1 with f->err.
 */
static int chain_next(struct kmt_file *f)
{
	const char *path = f->chain[f->chain_i];
	struct kmt_file_header h;
	int be, was_ckpt = f->ckpt;

	close(f->fd);
	/* The next file is mapped anew, if it can be. */
	if (f->mapped) {
		kmt_map_release(f->buf, f->map_len);
		f->mapped = 0;
		f->buf = f->rbuf;
	}
	free(f->prev_path);
	f->prev_path = f->path;
	f->path = NULL;
	f->chain_i++;
	f->pos = f->len = f->vet = 0;
	f->buf_off = 0;
	f->at_eof = 0;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	f->path = strdup(path);
	if (!f->path) {
		kmt_err_set(&f->err, KMT_ERR_NOMEM, path, UINT64_MAX, "out of memory");
		goto fail;
	}
	if (f->fd < 0) {
		kmt_err_set(&f->err, KMT_ERR_IO, path, UINT64_MAX, "cannot open: %s",
			    strerror(errno));
		goto fail;
	}
	if (fill(f, KMT_RECORD_SIZE) < 0)
		return -1;
	if (f->len < KMT_RECORD_SIZE) {
		kmt_err_set(&f->err, KMT_ERR_DATA, path, 0, "file too short for a kmemtrace "
			    "header (%zu bytes, need %u)", f->len, KMT_RECORD_SIZE);
		goto fail;
	}
	if (kmt_header_decode(f->buf, &h, &be) < 0) {
		not_a_trace(f->buf, path, &f->err);
		goto fail;
	}
	if (check_header(&h, be, path, f->flags, &f->err) < 0)
		goto fail;
	if (h.cpu != f->hdr.cpu || be != f->big_endian || h.word_bits != f->hdr.word_bits ||
	    h.page_size != f->hdr.page_size || h.version_major != f->hdr.version_major) {
		kmt_err_set(&f->err, KMT_ERR_DATA, path, 12, "not the next file of %s's stream "
			    "(CPU %u/%u, %s/%s-endian, word bits %u/%u, page size %u/%u, format "
			    "%u/%u)", f->prev_path, h.cpu, f->hdr.cpu, be ? "big" : "little",
			    f->big_endian ? "big" : "little", h.word_bits, f->hdr.word_bits,
			    h.page_size, f->hdr.page_size, h.version_major, f->hdr.version_major);
		goto fail;
	}
	if (h.kind == KMT_FILE_CHECKPOINT) {
		kmt_err_set(&f->err, KMT_ERR_DATA, path, 17, "a checkpoint after %s: a CPU's "
			    "stream may only begin with one", f->prev_path);
		goto fail;
	}
	f->hdr = h;
	f->ckpt = 0;
	f->in_sums = 0;
	f->pos = f->vet = KMT_RECORD_SIZE;
	f->st.files++;
	if (was_ckpt) {
		f->tr.unknown_since = UINT32_MAX;
		f->tr.stk_next = 0;
		f->tr.stk_orphans_ok = 1;
	}
	return 0;

fail:
	f->failed = 1;
	return -1;
}

/* At the end of a file: 1 when the stream goes on in another (opened), 0, or -1. */
static int stream_on(struct kmt_file *f)
{
	if (f->chain_i >= f->chain_n)
		return 0;
	return chain_next(f) < 0 ? -1 : 1;
}

/*
 * The slot at pos, which is not validated yet, and any unknown ones before
 * the next known record, one by one: 1 with that record validated, 0, -1
 * or KMT_NEED_FILL as kmt_file_vet().
 */
static int examine_slow(struct kmt_file *f, int may_fill)
{
	for (;;) {
		union kmt_rec *r;
		unsigned int type;

		if (f->failed)
			return -1;
		if (f->len - f->pos < KMT_RECORD_SIZE) {
			size_t rest;

			if (!f->at_eof) {
				if (!may_fill)
					return KMT_NEED_FILL;
				if (fill(f, KMT_RECORD_SIZE) < 0)
					return -1;
			}
			rest = f->len - f->pos;
			/* Records handed out stay put: the next file waits for a fill. */
			if (rest < KMT_RECORD_SIZE && f->chain_i < f->chain_n && !may_fill)
				return KMT_NEED_FILL;
			if (rest == 0) {
				int on = stream_on(f);

				if (on == 1)
					continue;
				return on;
			}
			if (rest < KMT_RECORD_SIZE) {
				f->rec_off = f->buf_off + f->pos;
				if (f->flags & KMT_OPEN_ALLOW_TRUNCATED) {
					int on;

					f->st.truncated_bytes += rest;
					f->pos = f->len;
					f->vet = f->pos;
					on = stream_on(f);
					if (on == 1)
						continue;
					return on;
				}
				return rec_fail(f, "truncated record: %zu of %u bytes at the end of the file",
						rest, KMT_RECORD_SIZE);
			}
		}
		f->rec_off = f->buf_off + f->pos;
		/* Slots start at multiples of 64 from an aligned buffer: aligned. */
		r = (union kmt_rec *)(void *)(f->buf + f->pos);
		type = r->c.type;
		if (type == 0)
			return rec_fail(f, "zeroed record slot (type 0)");
		if (type > KMT_REC_TYPE_MAX) {
			/* A newer minor's record: skip it, whatever its layout. */
			f->pos += KMT_RECORD_SIZE;
			f->vet = f->pos;
			f->st.unknown++;
			if (f->tr.unknown_since != UINT32_MAX)
				f->tr.unknown_since++;
			continue;
		}
		/* The buffer is ours: swapping in place saves a copy. */
		if (f->swap)
			kmt_rec_swap(r);
		if (check_rec(f, r) < 0)
			return -1;
		f->vet = f->pos + KMT_RECORD_SIZE;
		return 1;
	}
}

/*
 * Validates the whole slots from f->vet on, up to ahead bytes from pos,
 * while they are plain events: the common case, checked here in a loop
 * whose state stays in registers. Stops at anything else, which
 * examine_slow() takes when the merge or kmt_file_next() gets there. Only
 * a file read in host order whose first known record is known goes here.
 */
static inline __attribute__((always_inline)) const union kmt_rec *
vet_run(struct kmt_track *tr, uint64_t *by_type, const union kmt_rec *r,
	const union kmt_rec *stop, const unsigned int word_bits)
{
	struct kmt_track t = *tr;

	for (; r < stop; r++) {
		__builtin_prefetch(r + VET_PREFETCH);
		if (r->c.type - 1u >= KMT_REC_PAGE_FREE ||
		    rec_fault_bits(&t, r, word_bits) != FAULT_NONE)
			break;
		rec_accept(&t, by_type, r);
	}
	*tr = t;
	return r;
}

static void vet_events(struct kmt_file *f, size_t ahead)
{
	const union kmt_rec *r, *stop;
	size_t end;

	/* Inside a stack every record is checked for cutting it short. */
	if (!f->have_first || f->swap || f->failed || f->tr.stk_next || f->tr.stk_orphans_ok ||
	    f->ckpt || f->prev_path)
		return;
	if (f->mapped && ahead > KMT_READ_BUF)
		ahead = KMT_READ_BUF;
	end = f->len - f->pos < ahead ? f->len : f->pos + ahead;
	/* Aligned as in examine_slow(): vet is a slot boundary. */
	r = (const union kmt_rec *)(const void *)(f->buf + f->vet);
	stop = r + (end > f->vet ? (end - f->vet) / KMT_RECORD_SIZE : 0);
	/* A loop for each word size: the 32-bit check is asked of none in a 64-bit trace. */
	if (f->tr.word_bits == 32)
		r = vet_run(&f->tr, f->st.by_type, r, stop, 32);
	else
		r = vet_run(&f->tr, f->st.by_type, r, stop, 64);
	f->vet = (size_t)((const uint8_t *)r - f->buf);
}

int kmt_file_vet(struct kmt_file *f, int may_fill, size_t ahead)
{
	int rc;

	vet_events(f, ahead);
	if (f->pos < f->vet)
		return 1;
	rc = examine_slow(f, may_fill);
	if (rc == 1)
		vet_events(f, ahead);
	return rc;
}

int kmt_file_next(struct kmt_file *f, union kmt_rec *rec)
{
	/* One record validated at a time: the stats count exactly what was returned. */
	int ret = f->pos < f->vet ? 1 : kmt_file_vet(f, 1, KMT_RECORD_SIZE);

	if (ret == 1) {
		f->rec_off = f->buf_off + f->pos;
		memcpy(rec, f->buf + f->pos, sizeof(*rec));
		f->pos += KMT_RECORD_SIZE;
	}
	return ret;
}

const struct kmt_file_header *kmt_file_header(const struct kmt_file *f)
{
	return &f->hdr;
}

const struct kmt_file_header *kmt_file_checkpoint(const struct kmt_file *f)
{
	return f->has_ckpt ? &f->ckpt_hdr : NULL;
}

int kmt_file_chain(struct kmt_file *f, char *const *paths, size_t n)
{
	size_t i;

	f->chain = calloc(n ? n : 1, sizeof(*f->chain));
	if (!f->chain)
		return -1;
	for (i = 0; i < n; i++) {
		f->chain[i] = strdup(paths[i]);
		if (!f->chain[i])
			return -1;
		f->chain_n++;
	}
	return 0;
}

const struct kmt_file_stats *kmt_file_stats(const struct kmt_file *f)
{
	/* Derived here rather than counted per record; f itself is never const. */
	struct kmt_file_stats *st = (struct kmt_file_stats *)&f->st;
	const uint64_t *bt = st->by_type;
	unsigned int t;

	st->events = 0;
	for (t = KMT_REC_KMALLOC; t <= KMT_REC_PAGE_FREE; t++)
		st->events += bt[t];
	st->cache_descs = bt[KMT_REC_CACHE_DESC];
	st->lost_markers = bt[KMT_REC_LOST];
	st->stack_slots = bt[KMT_REC_STACK];
	st->sums = bt[KMT_REC_SUM];
	st->records_timed = st->events + st->cache_descs + st->lost_markers + st->stack_slots +
			    st->sums;
	st->records = st->records_timed + st->unknown;
	st->last_ts = f->tr.last_ts;
	st->last_seq = f->tr.last_seq;
	st->file_bytes = KMT_RECORD_SIZE * (st->files + st->records) + st->truncated_bytes;
	return st;
}

const struct kmt_error *kmt_file_error(const struct kmt_file *f)
{
	return &f->err;
}

const char *kmt_file_path(const struct kmt_file *f)
{
	return f->path;
}

uint64_t kmt_file_offset(const struct kmt_file *f)
{
	return f->rec_off;
}

int kmt_file_big_endian(const struct kmt_file *f)
{
	return f->big_endian;
}

void kmt_file_close(struct kmt_file *f)
{
	size_t i;

	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	for (i = 0; i < f->chain_n; i++)
		free(f->chain[i]);
	free(f->chain);
	free(f->prev_path);
	if (f->mapped)
		kmt_map_release(f->buf, f->map_len);
	free(f->rbuf);
	free(f->path);
	free(f);
}
