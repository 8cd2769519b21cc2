// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_targets.c - the fuzz targets: each turns arbitrary bytes into the
 * files a kmemtrace tool reads, runs the tool's own code on them and
 * checks what must hold whatever the input (a clean verdict, records the
 * reader vouched for, a merge in time order, totals that add up, JSON any
 * parser reads). Built by clang for libFuzzer and by the normal compiler
 * for the replay tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_targets.h"
#include "kmt_ckpt.h"
#include "kmt_exit.h"
#include "kmt_reader.h"
#include "kmt_writer.h"
#include "core/report_core.h"
#include "core/report_gfp.h"
#include "core/report_meta.h"
#include "core/rpt_growth.h"
#include "writers/report_out.h"
#include "sym/sym_kallsyms.h"
#include "views/view_growth.h"
#include "views/view_pages.h"
#include "views/view_stacks.h"

/* kmemtrace_check.c's main(), renamed when compiled for the fuzz targets. */
int kmt_check_main(int argc, char **argv);

/* ---- harness plumbing --------------------------------------------------- */

static char tmpdir[512];

/* A broken invariant: say which, then crash so that the input is kept. */
static void __attribute__((noreturn, format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("fuzz invariant broken: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	/* libFuzzer keeps the input itself; our files would only be left behind. */
	fuzz_cleanup();
	abort();
}

/* The harness itself cannot work (no disk space...): not a finding. */
static void __attribute__((noreturn, format(printf, 1, 2))) harness_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("fuzz harness: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fuzz_cleanup();
	_exit(KMT_EXIT_IO);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void fuzz_cleanup(void)
{
	if (tmpdir[0])
		nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	tmpdir[0] = '\0';
}

const char *fuzz_tmpdir(void)
{
	const char *base = getenv("TMPDIR");

	if (tmpdir[0])
		return tmpdir;
	if (!base || !*base)
		base = "/tmp";
	snprintf(tmpdir, sizeof(tmpdir), "%s/kmt-fuzz.XXXXXX", base);
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "fuzz harness: mkdtemp %s: %s\n", tmpdir, strerror(errno));
		tmpdir[0] = '\0';
		return NULL;
	}
	atexit(fuzz_cleanup);
	return tmpdir;
}

/* tmpdir/name, made; sub-directories of name created as needed. */
static void tmp_path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void tmp_path(char *buf, size_t len, const char *fmt, ...)
{
	const char *dir = fuzz_tmpdir();
	va_list ap;
	size_t n;
	char *slash;

	if (!dir)
		harness_fail("no temporary directory");
	n = (size_t)snprintf(buf, len, "%s/", dir);
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
	for (slash = strchr(buf + n, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			harness_fail("mkdir %s: %s", buf, strerror(errno));
		*slash = '/';
	}
}

static void write_file(const char *path, const uint8_t *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t done = 0;

	if (fd < 0)
		harness_fail("open %s: %s", path, strerror(errno));
	while (done < len) {
		ssize_t n = write(fd, data + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			harness_fail("write %s: %s", path, n < 0 ? strerror(errno) : "short write");
		done += (size_t)n;
	}
	if (close(fd) < 0)
		harness_fail("close %s: %s", path, strerror(errno));
}

/* The CPU a file's header names, in the byte order its magic says (0 if too short). */
static unsigned int header_cpu(const uint8_t *data, size_t len)
{
	if (len < 14)
		return 0;
	if (memcmp(data, "RTMK", 4) == 0)	/* KMT_MAGIC written big-endian */
		return (unsigned int)data[12] << 8 | data[13];
	return data[12] | (unsigned int)data[13] << 8;
}

static void outcome_set(struct fuzz_outcome *out, int code, const char *msg)
{
	if (!out)
		return;
	out->exit_code = code;
	snprintf(out->msg, sizeof(out->msg), "%s", msg ? msg : "");
}

static FILE *devnull(void)
{
	static FILE *fp;

	if (!fp) {
		fp = fopen("/dev/null", "w");
		if (!fp)
			harness_fail("/dev/null: %s", strerror(errno));
	}
	return fp;
}

/* An error from the reader on a regular file we wrote can only be bad data. */
static void check_error(const struct kmt_error *e, const char *path, uint64_t size)
{
	if (e->cls != KMT_ERR_DATA)
		fail("%s: error class %d, not bad data: %s", path, (int)e->cls, e->msg);
	if (strncmp(e->msg, path, strlen(path)) != 0)
		fail("error message does not start with the path: %s", e->msg);
	if (strchr(e->msg, '\n'))
		fail("error message is not one line: %s", e->msg);
	if (e->offset != UINT64_MAX && e->offset >= size && !(e->offset == 0 && size == 0))
		fail("%s: error offset %" PRIu64 " beyond the %" PRIu64 "-byte file: %s", path,
		     e->offset, size, e->msg);
}

/* ---- reader --------------------------------------------------------------- */

struct read_result {
	int ok;			/* opened and read to a clean end */
	int opened;
	struct kmt_error err;
	uint64_t returned;	/* records kmt_file_next() returned */
	struct kmt_file_stats st;
};

/* Reads path to its end, checking every record the reader returns against the raw bytes. */
static void read_all(const char *path, const uint8_t *data, size_t size, unsigned int flags,
		     struct read_result *res)
{
	const struct kmt_file_header *h;
	struct kmt_file *f;
	union kmt_rec rec;
	uint64_t last_off = 0, last_ts = 0;
	uint8_t enc[KMT_RECORD_SIZE];
	int r;

	memset(res, 0, sizeof(*res));
	f = kmt_file_open(path, flags, &res->err);
	if (!f) {
		check_error(&res->err, path, size);
		if (res->err.offset != UINT64_MAX && res->err.offset >= KMT_RECORD_SIZE)
			fail("%s: header error at offset %" PRIu64, path, res->err.offset);
		return;
	}
	res->opened = 1;
	if (size < KMT_RECORD_SIZE)
		fail("%s: opened a %zu-byte file", path, size);
	h = kmt_file_header(f);
	if (h->magic != KMT_MAGIC || h->version_major != KMT_ABI_MAJOR ||
	    (h->word_bits != 32 && h->word_bits != 64) || !h->page_size ||
	    (h->page_size & (h->page_size - 1)))
		fail("%s: accepted a bad header", path);
	kmt_header_encode(enc, h, kmt_file_big_endian(f));
	if (memcmp(enc, data, KMT_RECORD_SIZE) != 0)
		fail("%s: header does not re-encode to its bytes", path);

	while ((r = kmt_file_next(f, &rec)) > 0) {
		uint64_t off = kmt_file_offset(f);

		res->returned++;
		if (rec.c.type < 1 || rec.c.type > KMT_REC_TYPE_MAX)
			fail("%s: returned a record of type %u", path, rec.c.type);
		if (rec.c.cpu != h->cpu)
			fail("%s: returned a record of CPU %u in a file of CPU %u", path,
			     rec.c.cpu, h->cpu);
		if (res->returned > 1 && rec.c.timestamp < last_ts)
			fail("%s: timestamps went backwards at %" PRIu64, path, off);
		if (off % KMT_RECORD_SIZE || off < KMT_RECORD_SIZE || off <= last_off ||
		    off > size - KMT_RECORD_SIZE)
			fail("%s: record offset %" PRIu64 " (previous %" PRIu64 ", size %zu)", path,
			     off, last_off, size);
		if (rec.c.type == KMT_REC_CACHE_DESC &&
		    !memchr(rec.cache.name, 0, sizeof(rec.cache.name)))
			fail("%s: cache name without NUL at %" PRIu64, path, off);
		if (h->word_bits == 32 &&
		    (rec.c.type == KMT_REC_CACHE_DESC ? rec.cache.cache_id >> 32 :
		     rec.c.type == KMT_REC_STACK ?
		     (rec.stack.frames[0] | rec.stack.frames[1] | rec.stack.frames[2] |
		      rec.stack.frames[3] | rec.stack.frames[4]) >> 32 :
		     rec.c.type == KMT_REC_SUM ? (rec.sum.call_site | rec.sum.cache_id) >> 32 :
		     rec.c.type != KMT_REC_LOST &&
		     (rec.ev.call_site | rec.ev.ptr | rec.ev.cache_id) >> 32))
			fail("%s: 64-bit address in a 32-bit trace at %" PRIu64, path, off);
		kmt_rec_encode(enc, &rec, kmt_file_big_endian(f));
		if (memcmp(enc, data + off, KMT_RECORD_SIZE) != 0)
			fail("%s: record at %" PRIu64 " does not re-encode to its bytes", path, off);
		last_off = off;
		last_ts = rec.c.timestamp;
	}
	res->st = *kmt_file_stats(f);
	if (r < 0) {
		res->err = *kmt_file_error(f);
		check_error(&res->err, path, size);
		if (res->err.offset % KMT_RECORD_SIZE || res->err.offset <= last_off ||
		    res->err.offset < KMT_RECORD_SIZE)
			fail("%s: record error at offset %" PRIu64 " (last good %" PRIu64 "): %s",
			     path, res->err.offset, last_off, res->err.msg);
		if (kmt_file_next(f, &rec) != -1)
			fail("%s: an error is not sticky", path);
	} else {
		uint64_t sum = 0;
		unsigned int t;

		res->ok = 1;
		if (res->st.file_bytes != size)
			fail("%s: clean end after %" PRIu64 " of %zu bytes", path,
			     res->st.file_bytes, size);
		if (res->st.truncated_bytes != (flags & KMT_OPEN_ALLOW_TRUNCATED ?
						size % KMT_RECORD_SIZE : 0))
			fail("%s: truncated_bytes %" PRIu64 " for a %zu-byte file", path,
			     res->st.truncated_bytes, size);
		for (t = 1; t <= KMT_REC_TYPE_MAX; t++)
			sum += res->st.by_type[t];
		if (sum != res->returned || res->st.records != res->returned + res->st.unknown ||
		    res->st.records_timed != res->returned ||
		    res->st.events + res->st.cache_descs + res->st.lost_markers +
		    res->st.stack_slots + res->st.sums != res->returned ||
		    res->st.stack_slots != res->st.by_type[KMT_REC_STACK])
			fail("%s: stats do not add up to the %" PRIu64 " records returned", path,
			     res->returned);
		if (kmt_file_next(f, &rec) != 0)
			fail("%s: no second clean end", path);
	}
	kmt_file_close(f);
}

/*
 * The format's rules (Documentation/trace-format.md) written again from
 * the text, straight on the bytes: the reader must accept exactly what
 * this accepts and fail at the same slot. Returns 1 (valid), 0 (bad
 * header) or -1 (bad record at *bad_off); *known counts the known-type
 * records before the end or the bad one.
 */
static uint64_t rd(const uint8_t *p, unsigned int len, int be)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < len; i++)
		v |= (uint64_t)p[be ? len - 1 - i : i] << (8 * i);
	return v;
}

/*
 * A stack slot (Documentation/trace-format.md) on its own and as the next of the
 * stack under way: *next frames of *depth of stack *id are in (0: none),
 * orphans_ok after the header or a LOST marker. 0 valid, -1 refused.
 */
static int model_stack(const uint8_t *r, int be, int bits, unsigned int minor, unsigned int *next,
		       unsigned int *depth, unsigned int *id, int *orphans_ok)
{
	unsigned int sid = (unsigned int)rd(r + 16, 2, be), dp = r[18], first = r[19], n = r[20];
	unsigned int i, want;

	if (!sid || !dp || dp > KMT_STACK_MAX_DEPTH || !n || n > KMT_STACK_SLOT_FRAMES ||
	    first % KMT_STACK_SLOT_FRAMES || first + n > dp)
		return -1;
	want = dp - first < KMT_STACK_SLOT_FRAMES ? dp - first : KMT_STACK_SLOT_FRAMES;
	if (n != want || (minor <= 2 && (r[21] | r[22] | r[23])))
		return -1;
	for (i = 0; i < KMT_STACK_SLOT_FRAMES; i++) {
		uint64_t fr = rd(r + 24 + 8 * i, 8, be);

		if ((i >= n && fr) || (bits == 32 && fr >> 32))
			return -1;
	}
	if (*next && (sid != *id || dp != *depth || first != *next))
		return -1;
	if (!*next && first && !*orphans_ok)
		return -1;
	*orphans_ok = 0;
	*next = first + n == dp ? 0 : first + n;
	*depth = dp;
	*id = sid;
	return 0;
}

static int model_verdict(const uint8_t *d, size_t size, long name_cpu, int allow_trunc,
			 uint64_t *bad_off, uint64_t *known)
{
	uint64_t off, last_ts = 0, ps, cut;
	uint32_t expected = 0, unknown_since = 0;
	int be, have_seq = 0, bits, any = 0, orphans_ok = 1, ckpt, in_sums = 0;
	unsigned int cpu, minor, stk_next = 0, stk_depth = 0, stk_id = 0;

	*known = 0;
	if (size < KMT_RECORD_SIZE)
		return 0;
	if (memcmp(d, "KMTR", 4) == 0)
		be = 0;
	else if (memcmp(d, "RTMK", 4) == 0)
		be = 1;
	else
		return 0;
	ps = rd(d + 20, 4, be);
	bits = d[15];
	cpu = (unsigned int)rd(d + 12, 2, be);
	minor = (unsigned int)rd(d + 6, 2, be);
	if (rd(d + 4, 2, be) != KMT_ABI_MAJOR || rd(d + 8, 2, be) != 64 || rd(d + 10, 2, be) != 64 ||
	    d[14] != (be ? KMT_BYTE_ORDER_BE : KMT_BYTE_ORDER_LE) || (bits != 32 && bits != 64) ||
	    d[16] != KMT_CLOCK_MONOTONIC || !ps || (ps & (ps - 1)) ||
	    (name_cpu >= 0 && (unsigned long)name_cpu != cpu))
		return 0;
	/* (1.3) kind at 17: records, or a checkpoint with a cut (40) and a segment (56). */
	ckpt = d[17] == KMT_FILE_CHECKPOINT;
	cut = rd(d + 40, 8, be);
	if (d[17] > KMT_FILE_CHECKPOINT ||
	    (ckpt && (minor < KMT_CKPT_MINOR || !cut || !rd(d + 56, 4, be))))
		return 0;
	for (off = KMT_RECORD_SIZE; off < size; off += KMT_RECORD_SIZE) {
		const uint8_t *r = d + off;
		unsigned int type;
		uint32_t seq;
		uint64_t ts;

		*bad_off = off;
		if (size - off < KMT_RECORD_SIZE)
			return allow_trunc ? 1 : -1;
		type = r[0];
		if (type == 0)
			return -1;
		if (type > KMT_REC_SUM) {
			unknown_since++;
			continue;
		}
		seq = (uint32_t)rd(r + 4, 4, be);
		ts = rd(r + 8, 8, be);
		if (rd(r + 2, 2, be) != cpu || (any && ts < last_ts))
			return -1;
		/* A checkpoint: any seq, records before the cut, SUM records last. */
		if (ckpt && ((in_sums && type != KMT_REC_SUM) || ts >= cut))
			return -1;
		if (type == KMT_REC_SUM) {
			uint32_t count = (uint32_t)rd(r + 48, 4, be);
			unsigned int sid = (unsigned int)rd(r + 60, 2, be), kind = r[63];

			if (!ckpt || (kind != KMT_SUM_FREED && kind != KMT_SUM_FAILED) ||
			    (r[62] != KMT_REC_KMALLOC && r[62] != KMT_REC_CACHE_ALLOC) || !count ||
			    seq || rd(r + 52, 4, be) > count || rd(r + 56, 4, be) > count ||
			    (kind == KMT_SUM_FAILED && rd(r + 52, 4, be)) || ts != cut - 1 ||
			    ((r[1] & KMT_F_NO_STACK) && sid) ||
			    (bits == 32 && (rd(r + 16, 8, be) | rd(r + 24, 8, be)) >> 32))
				return -1;
			in_sums = 1;
		} else if (ckpt) {
			/* No seq to check. */
		} else if (type == KMT_REC_LOST) {
			uint32_t want = expected + (uint32_t)rd(r + 16, 8, be);

			if (have_seq && (uint32_t)(seq - want) > unknown_since)
				return -1;
			expected = seq;
		} else {
			if (have_seq && (uint32_t)(seq - expected) > unknown_since)
				return -1;
			expected = seq + 1;
		}
		/* Only a LOST marker, or a checkpoint's SUM records, may cut a stack short. */
		if (type == KMT_REC_STACK) {
			if (model_stack(r, be, bits, minor, &stk_next, &stk_depth, &stk_id,
					&orphans_ok))
				return -1;
		} else if (type == KMT_REC_LOST || type == KMT_REC_SUM) {
			stk_next = 0;
			orphans_ok = type == KMT_REC_LOST;
		} else if (stk_next) {
			return -1;
		} else {
			orphans_ok = 0;
		}
		if (type == KMT_REC_CACHE_DESC) {
			if (!memchr(r + 32, 0, 32) || (bits == 32 && rd(r + 16, 8, be) >> 32))
				return -1;
		} else if (type <= KMT_REC_PAGE_FREE && bits == 32 &&
			   (rd(r + 16, 8, be) | rd(r + 24, 8, be) | rd(r + 32, 8, be)) >> 32) {
			return -1;
		}
		/* An event marked KMT_F_NO_STACK names no stack (stack_id at 62). */
		if (type <= KMT_REC_PAGE_FREE && (r[1] & KMT_F_NO_STACK) && rd(r + 62, 2, be))
			return -1;
		have_seq = 1;
		any = 1;
		unknown_since = 0;
		last_ts = ts;
		(*known)++;
	}
	return 1;
}

/* The reader's verdict against the model's. */
static void check_model(const uint8_t *data, size_t size, const char *path, unsigned int flags,
			const struct read_result *res)
{
	uint64_t bad = 0, known;
	long name_cpu = (long)header_cpu(data, size);
	int v = model_verdict(data, size, strncmp(strrchr(path, '/'), "/cpu", 4) ? -1 : name_cpu,
			      flags & KMT_OPEN_ALLOW_TRUNCATED, &bad, &known);

	if (v == 0 && res->opened)
		fail("%s: the reader accepted a header the format refuses", path);
	if (v != 0 && !res->opened)
		fail("%s: the reader refused a valid header: %s", path, res->err.msg);
	if (v == 1 && !res->ok)
		fail("%s: the reader refused a valid file: %s", path, res->err.msg);
	if (v == -1 && res->ok)
		fail("%s: the reader accepted a file the format refuses at offset %" PRIu64, path,
		     bad);
	if (v == -1 && res->opened && res->err.offset != bad)
		fail("%s: the reader failed at offset %" PRIu64 ", the format at %" PRIu64 ": %s",
		     path, res->err.offset, bad, res->err.msg);
	if (v != 0 && res->opened && res->returned != known)
		fail("%s: the reader returned %" PRIu64 " records, the format has %" PRIu64, path,
		     res->returned, known);
}

int fuzz_reader(const uint8_t *data, size_t size, struct fuzz_outcome *out)
{
	struct read_result strict, lax;
	char path[1024];

	tmp_path(path, sizeof(path), "r/cpu%u.out", header_cpu(data, size));
	write_file(path, data, size);
	read_all(path, data, size, 0, &strict);
	read_all(path, data, size, KMT_OPEN_ALLOW_TRUNCATED, &lax);
	unlink(path);
	check_model(data, size, path, 0, &strict);
	check_model(data, size, path, KMT_OPEN_ALLOW_TRUNCATED, &lax);

	if (strict.ok && (!lax.ok || lax.returned != strict.returned))
		fail("strict read ok, lenient not the same");
	if (!strict.ok && strict.opened && strstr(strict.err.msg, "truncated record") &&
	    strict.err.offset == size - size % KMT_RECORD_SIZE) {
		if (!lax.ok || lax.returned != strict.returned)
			fail("a truncated tail is not ignored with KMT_OPEN_ALLOW_TRUNCATED");
	} else if (!strict.ok && (lax.ok || strcmp(lax.err.msg, strict.err.msg) != 0)) {
		fail("strict and lenient reads differ: '%s' vs '%s'", strict.err.msg,
		     lax.ok ? "ok" : lax.err.msg);
	}
	if (strict.ok)
		outcome_set(out, KMT_EXIT_OK, NULL);
	else
		outcome_set(out, kmt_error_exit(&strict.err), strict.err.msg);
	return 0;
}

/* ---- report ------------------------------------------------------------------ */

/*
 * A kallsyms and modules snapshot covering the addresses kmemtrace-gen
 * uses (64-bit and 32-bit kernels), so that symbolization runs, with an
 * entry text next to them, so that stacks through it name the frame after
 * it exactly (ksyms_frame_exact()).
 */
static const char fixed_kallsyms[] =
	"00000000c1000000 T _stext\n"
	"00000000c1001000 t gen_site_a\n"
	"00000000c1001400 T gen_site_b\n"
	"00000000c1201000 W gen_free_path\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 t __pfx_startup_64\n"
	"ffffffff81001000 t kmem_site_one\n"
	"ffffffff81001000 T kmem_site_alias\n"
	"ffffffff81001800 T kmem_site_two\n"
	"ffffffff81002000 T __entry_text_start\n"
	"ffffffff81002000 T asm_exc_page_fault\n"
	"ffffffff81002100 T asm_sysvec_apic_timer_interrupt\n"
	"ffffffff81003000 T __entry_text_end\n"
	"ffffffff81101000 T kfree_path\n"
	"ffffffff81200000 d some_data\n"
	"ffffffff81201000 T \xe2\x82\xac_utf8_sym\n"
	"ffffffff81202000 T bad_\xff\xfe_bytes\n"
	"ffffffffc0001000 t mod_fn\t[oracle]\n"
	"ffffffffc0001100 t mod_fn2\t[oracle]\n"
	"ffffffffc0100000 T other_fn\t[other_mod]\n";

static const char fixed_modules[] =
	"oracle ffffffffc0001000 ffffffffc0000000 8192\n"
	"other_mod ffffffffc0100000 ffffffffc0100000 4096\n";

static const char fixed_meta[] =
	"# kmemtrace.meta\n"
	"meta_version 1\n"
	"kernel_release 6.1.0-fuzz\n"
	"machine x86_64\n"
	"hostname \"quoted\\host\"\n"
	"overruns_start 3\n"
	"overruns_end 10\n";

/* A gfp_flags table as 7.3 writes it: shifts, casts, a null name at the end. */
static const char fixed_formats[] =
	"event kmem/kmalloc\n"
	"print fmt: \"gfp_flags=%s\", (REC->gfp_flags) ? __print_flags(REC->gfp_flags, \"|\", "
	"{( unsigned long)((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | "
	"(( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7)))), \"GFP_KERNEL\"}, "
	"{( unsigned long)(( gfp_t)((((1UL))) << (8))), \"__GFP_ZERO\"}, "
	"{( unsigned long)(( gfp_t)((((1UL))) << (22))), \"__GFP_ACCOUNT\"}, "
	"{ 0, ((void *)0) } ) : \"none\"\n";

static const struct gfp_names *fixed_gfp(void)
{
	static struct gfp_names *g;
	char err[1024];

	if (g)
		return g;
	g = gfp_names_parse(fixed_formats, sizeof(fixed_formats) - 1, "fixed", err, sizeof(err));
	if (!g || !gfp_names_has_table(g))
		harness_fail("fixed tracepoint_formats: %s", g ? "no table" : err);
	return g;
}

static const struct ksyms *fixed_ksyms(void)
{
	static struct ksyms *ks;
	char kp[1024], mp[1024], err[1024];
	int missing;

	if (ks)
		return ks;
	tmp_path(kp, sizeof(kp), "fixed/kallsyms");
	tmp_path(mp, sizeof(mp), "fixed/modules");
	write_file(kp, (const uint8_t *)fixed_kallsyms, sizeof(fixed_kallsyms) - 1);
	write_file(mp, (const uint8_t *)fixed_modules, sizeof(fixed_modules) - 1);
	ks = ksyms_load(kp, mp, err, sizeof(err), &missing);
	if (!ks)
		harness_fail("fixed kallsyms: %s", err);
	return ks;
}

static const struct rpt_meta *fixed_meta_get(void)
{
	static struct rpt_meta *m;
	char p[1024], err[1024];
	int missing;

	if (m)
		return m;
	tmp_path(p, sizeof(p), "fixed/kmemtrace.meta");
	write_file(p, (const uint8_t *)fixed_meta, sizeof(fixed_meta) - 1);
	m = meta_load(p, err, sizeof(err), &missing);
	if (!m)
		harness_fail("fixed meta: %s", err);
	return m;
}

/* What the totals of any analysis satisfy, whatever the records and filters. */
static void check_totals(const struct rpt *r, uint64_t fed)
{
	const struct rpt_totals *t = rpt_totals(r);
	uint64_t hits = 0, failed = 0, req = 0, alloc = 0, frees = 0, xcpu = 0, out = 0;
	uint64_t out_bytes = 0, lost = 0;
	size_t i;

	for (i = 0; i < rpt_nsites(r); i++) {
		const struct rpt_site *s = rpt_site(r, i);

		hits += s->hits;
		failed += s->failed;
		req += s->bytes_req;
		alloc += s->bytes_alloc;
		frees += s->frees;
		xcpu += s->cross_cpu_frees;
		out += s->out_count;
		out_bytes += s->out_bytes;
		if (s->failed > s->hits || s->cross_cpu_frees > s->frees || s->out_count > s->hits)
			fail("call site 0x%" PRIx64 ": inconsistent tallies", s->addr);
		if (rpt_site_find(r, s->addr) != s)
			fail("call site 0x%" PRIx64 " not found by address", s->addr);
	}
	for (i = 0; i < rpt_lost_ncpus(r); i++)
		lost += rpt_lost_on_cpu(r, (unsigned int)i);
	if (t->records != fed)
		fail("%" PRIu64 " records fed, %" PRIu64 " counted", fed, t->records);
	if (hits != t->allocs || failed != t->failed_allocs || req != t->bytes_req ||
	    alloc != t->bytes_alloc || xcpu != t->cross_cpu_frees || out != t->outstanding ||
	    out_bytes != t->outstanding_bytes)
		fail("per call site tallies do not add up to the totals");
	if (frees + t->untracked_frees + t->double_frees != t->frees)
		fail("frees %" PRIu64 " != tracked %" PRIu64 " + untracked %" PRIu64
		     " + double %" PRIu64, t->frees, frees, t->untracked_frees, t->double_frees);
	if (t->outstanding > t->allocs - t->failed_allocs || t->bytes_freed > t->bytes_alloc)
		fail("more outstanding or freed than allocated");
	if (rpt_error_count(r, RPT_ERR_DOUBLE_FREE) != t->double_frees)
		fail("double-free errors %" PRIu64 " != double frees %" PRIu64,
		     rpt_error_count(r, RPT_ERR_DOUBLE_FREE), t->double_frees);
	if (lost != t->lost)
		fail("lost per CPU does not add up to the total");
	if (t->page_outstanding > t->page_allocs || t->page_failed > t->page_allocs)
		fail("page tallies inconsistent");
}

/* What the stack tallies satisfy, whatever the records and filters. */
static void check_stacks(const struct rpt *r)
{
	const struct rpt_totals *t = rpt_totals(r);
	uint64_t hits = 0, out = 0;
	size_t i;

	for (i = 0; i < rpt_nstacks(r); i++) {
		const struct rpt_stack *s = rpt_stack(r, i);
		unsigned int d = 0;
		const uint64_t *fr = kmt_stacks_frames(rpt_stacks(r), (uint32_t)i, &d);

		if (!s || !fr || !d || d > KMT_STACK_MAX_DEPTH)
			fail("stack %zu: no tallies or frames (depth %u)", i, d);
		if (s->failed > s->hits || s->frees + s->out_count > s->hits - s->failed ||
		    s->out_bytes > s->bytes_alloc)
			fail("stack %zu: inconsistent tallies", i);
		hits += s->hits;
		out += s->out_count;
	}
	if (hits != t->stack_allocs)
		fail("stacks' hits %" PRIu64 " != allocations with a stack %" PRIu64, hits,
		     t->stack_allocs);
	if (out > t->outstanding)
		fail("more outstanding by stack than in all");
	if (t->stack_allocs + t->no_stack_allocs + t->unknown_stack_allocs > t->allocs)
		fail("more allocations with and without stacks than allocations");
	if (t->stack_slots && !rpt_has_stacks(r))
		fail("stack records but no stacks said");
}

/* Whether the samples of call site (or stack) i fall short of, or exceed, its tallies. */
static bool samples_of(const struct rpt *r, bool site, size_t i, uint64_t hits, uint64_t bytes,
		       uint64_t out)
{
	size_t k;

	for (k = 0; k < rpt_nsamples(r); k++) {
		const struct rpt_sample *s = rpt_sample(r, k);

		if ((site ? s->site : s->stack) != i)
			continue;
		hits -= s->hits;
		bytes -= s->bytes_alloc;
		out -= s->out_count;
	}
	return hits || bytes || out;
}

/*
 * The tallies by call site, stack, cache and CPU (RPT_SAMPLES, what --pprof
 * writes) sum to each call site's, each stack's and the totals.
 */
static void check_samples(const struct rpt *r)
{
	const struct rpt_totals *t = rpt_totals(r);
	struct rpt_sample sum = { 0 };
	size_t i, j;

	for (i = 0; i < rpt_nsamples(r); i++) {
		const struct rpt_sample *s = rpt_sample(r, i);

		if (s->failed > s->hits || s->site >= rpt_nsites(r) ||
		    (s->cache != UINT32_MAX && s->cache >= rpt_ncaches(r)) ||
		    (s->stack != KMT_STACK_NONE && s->stack >= rpt_nstacks(r)))
			fail("sample %zu: inconsistent", i);
		sum.hits += s->hits;
		sum.failed += s->failed;
		sum.bytes_req += s->bytes_req;
		sum.bytes_alloc += s->bytes_alloc;
		sum.out_count += s->out_count;
		sum.out_bytes += s->out_bytes;
	}
	if (sum.hits != t->allocs || sum.failed != t->failed_allocs ||
	    sum.bytes_req != t->bytes_req || sum.bytes_alloc != t->bytes_alloc ||
	    sum.out_count != t->outstanding || sum.out_bytes != t->outstanding_bytes)
		fail("samples do not add up to the totals");
	for (j = 0; j < rpt_nsites(r); j++) {
		const struct rpt_site *site = rpt_site(r, j);

		if (samples_of(r, true, j, site->hits, site->bytes_alloc, site->out_count))
			fail("call site 0x%" PRIx64 ": its samples do not add up", site->addr);
	}
	for (j = 0; j < rpt_nstacks(r); j++) {
		const struct rpt_stack *st = rpt_stack(r, j);

		if (samples_of(r, false, j, st->hits, st->bytes_alloc, st->out_count))
			fail("stack %zu: its samples do not add up", j);
	}
}

/* --folded's lines: frames, a blank and a positive count each; they sum to the stacks'. */
static void check_folded(const struct rpt *r, const struct out_opts *o, const struct stacks_args *a)
{
	char *buf = NULL, *p, *nl;
	size_t len = 0;
	uint64_t sum = 0, want = 0;
	FILE *fp = open_memstream(&buf, &len);
	size_t i;

	if (!fp)
		harness_fail("open_memstream: %s", strerror(errno));
	if (stacks_folded(fp, r, o, a))
		harness_fail("stacks_folded: out of memory");
	if (fclose(fp))
		harness_fail("open_memstream: %s", strerror(errno));
	for (p = buf; p && *p; p = nl + 1) {
		char *sp, *end;
		unsigned long long v;

		nl = strchr(p, '\n');
		if (!nl)
			fail("folded output not ending in a newline");
		*nl = '\0';
		sp = strrchr(p, ' ');
		if (!sp || sp == p || strchr(p, ' ') != sp || strstr(p, ";;") || *p == ';' ||
		    sp[-1] == ';')
			fail("bad folded line: %s", p);
		v = strtoull(sp + 1, &end, 10);
		if (*end || !v)
			fail("bad folded count: %s", p);
		sum += v;
	}
	free(buf);
	if (a->min_count > 1 || a->nexclude)
		return;
	for (i = 0; i < rpt_nstacks(r); i++) {
		const struct rpt_stack *s = rpt_stack(r, i);

		want += a->weight == FOLD_BYTES ? s->bytes_alloc :
			a->weight == FOLD_REQ ? s->bytes_req : s->hits;
	}
	if (sum != want)
		fail("folded counts sum to %" PRIu64 ", the stacks to %" PRIu64, sum, want);
}

/*
 * Which format print_report() prints next: each input starts at a place
 * its bytes pick (print_turn_set()), and each call takes the next, so that
 * an input with three reports prints each format once and every format is
 * printed as often over a run. (Printing every report in every format was
 * most of the report and syms targets' time.)
 */
static unsigned int print_turn;

static void print_turn_set(const uint8_t *data, size_t size)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < size; i++)
		h = (h ^ data[i]) * 16777619u;
	print_turn = h;
}

/* Prints the report in the format whose turn it is; JSON must parse. */
static void print_report(const struct rpt *r, struct out_opts *o)
{
	static const enum out_fmt fmts[] = { FMT_TEXT, FMT_CSV, FMT_JSON };
	char *buf = NULL;
	size_t len = 0, off = 0;
	FILE *fp;

	o->fmt = fmts[print_turn++ % 3];
	if (o->fmt != FMT_JSON) {
		if (report_print(devnull(), r, o))
			harness_fail("report_print: out of memory");
		return;
	}
	fp = open_memstream(&buf, &len);
	if (!fp)
		harness_fail("open_memstream: %s", strerror(errno));
	if (report_print(fp, r, o))
		harness_fail("report_print json: out of memory");
	if (fclose(fp))
		harness_fail("open_memstream: %s", strerror(errno));
	if (!fuzz_json_valid(buf, len, &off))
		fail("invalid JSON at byte %zu of %zu: ...%.*s", off, len,
		     (int)(len - off < 60 ? len - off : 60), buf + off);
	free(buf);
}

/* The page size of this target's analyses: rpt_new()'s, which it keeps. */
#define TALLY_PAGE_SIZE 4096u

/* A CPU's last allocation event (of any kind), for the pairs below. */
struct tally_prev {
	bool used;
	uint16_t cpu;
	struct kmt_event ev;
};

/*
 * Totals counted straight from the merged records, for an analysis whose
 * only filter is the time window: every record of a kind must be counted
 * as one (a checkpoint's SUM as its count of allocations, and of frees
 * unless they failed), whatever the analysis makes of its object, but for the second
 * event of a large kmalloc traced twice (6.12, 7.3), which the analysis
 * counts once. Such pairs are counted here as what they may be: a CPU's
 * allocation event right after a kmalloc above two pages, a kmalloc with
 * the same sizes and either the same address or, both failed, the same
 * task, mask and node from another call site (trace-format.md 4.1). The
 * analysis may merge fewer (the first one freed between them, or outside
 * the window), never more.
 */
struct tally {
	bool has_time;
	uint64_t t_start, t_end, first, n;
	uint64_t allocs, failed, req, alloc, frees, lost, lost_markers, descs;
	uint64_t page_allocs, page_failed, page_bytes, page_frees;
	uint64_t pairs, failed_pairs, pair_req, pair_alloc;
	struct tally_prev prev[2];	/* a trace here has two files, so two CPUs */
};

/* Counts ev if it can be the second event of the large kmalloc before it on its CPU. */
static void tally_pair(struct tally *y, const struct kmt_event *ev)
{
	struct tally_prev *p = &y->prev[0];
	const struct kmt_event *a;

	if (p->used && p->cpu != ev->cpu)
		p = &y->prev[1];
	if (p->used && p->cpu != ev->cpu)
		harness_fail("a third CPU in a trace of two files");
	a = &p->ev;
	if (p->used && a->type == KMT_REC_KMALLOC && ev->type == KMT_REC_KMALLOC &&
	    a->bytes_req > 2 * TALLY_PAGE_SIZE && ev->bytes_req == a->bytes_req &&
	    ev->bytes_alloc == a->bytes_alloc) {
		if (a->ptr && ev->ptr == a->ptr) {
			y->pairs++;
			y->pair_req += a->bytes_req;
			y->pair_alloc += a->bytes_alloc;
		} else if (!a->ptr && !ev->ptr && ev->gfp_flags == a->gfp_flags &&
			   ev->node == a->node && ev->pid == a->pid &&
			   ev->call_site != a->call_site) {
			y->failed_pairs++;
		}
	}
	p->used = true;
	p->cpu = ev->cpu;
	p->ev = *ev;
}

static void tally_rec(struct tally *y, const union kmt_rec *rec)
{
	uint64_t ts = rec->c.timestamp, end;

	if (!y->n++)
		y->first = ts;
	if (rec->c.type == KMT_REC_KMALLOC || rec->c.type == KMT_REC_CACHE_ALLOC ||
	    rec->c.type == KMT_REC_PAGE_ALLOC)
		tally_pair(y, &rec->ev);
	if (rec->c.type == KMT_REC_CACHE_DESC) {
		y->descs++;
		return;
	}
	end = y->t_end > UINT64_MAX - y->first ? UINT64_MAX : y->first + y->t_end;
	if (y->has_time && (ts - y->first < y->t_start || ts > end))
		return;
	switch (rec->c.type) {
	case KMT_REC_KMALLOC:
	case KMT_REC_CACHE_ALLOC:
		y->allocs++;
		if (!rec->ev.ptr) {
			y->failed++;
		} else {
			y->req += rec->ev.bytes_req;
			y->alloc += rec->ev.bytes_alloc;
		}
		break;
	case KMT_REC_KFREE:
	case KMT_REC_CACHE_FREE:
		y->frees += rec->ev.ptr != 0;
		break;
	case KMT_REC_PAGE_ALLOC:
		y->page_allocs++;
		if (!rec->ev.ptr)
			y->page_failed++;
		else
			y->page_bytes += rec->ev.bytes_alloc;
		break;
	case KMT_REC_PAGE_FREE:
		y->page_frees++;
		break;
	case KMT_REC_LOST:
		y->lost += rec->lost.count;
		y->lost_markers++;
		break;
	case KMT_REC_SUM:
		/* A checkpoint's allocations of one key, each freed or each failed. */
		y->allocs += rec->sum.count;
		if (rec->sum.sum_kind == KMT_SUM_FAILED) {
			y->failed += rec->sum.count;
		} else {
			y->req += rec->sum.bytes_req;
			y->alloc += rec->sum.bytes_alloc;
			y->frees += rec->sum.count;
		}
		break;
	}
}

static void check_tally(const struct rpt *r, const struct tally *y)
{
	const struct rpt_totals *t = rpt_totals(r);
	uint64_t merged = t->kmalloc_dup_events - t->kmalloc_dup_failed;

	if (merged > y->pairs || t->kmalloc_dup_failed > y->failed_pairs)
		fail("%" PRIu64 " large kmallocs (%" PRIu64 " failed) counted once of two events, "
		     "where the records have %" PRIu64 " (%" PRIu64 ") such pairs",
		     t->kmalloc_dup_events, t->kmalloc_dup_failed, y->pairs + y->failed_pairs,
		     y->failed_pairs);
	/* Each merged pair counts one allocation fewer; its bytes once, exactly when all are. */
	if (t->allocs + t->kmalloc_dup_events != y->allocs ||
	    t->failed_allocs + t->kmalloc_dup_failed != y->failed ||
	    (merged == y->pairs && !y->has_time ?
	     t->bytes_req + y->pair_req != y->req || t->bytes_alloc + y->pair_alloc != y->alloc :
	     t->bytes_req > y->req || t->bytes_alloc > y->alloc))
		fail("allocations: %" PRIu64 " (%" PRIu64 " failed, %" PRIu64 "/%" PRIu64
		     " bytes) in the records, %" PRIu64 " (%" PRIu64 ", %" PRIu64 "/%" PRIu64
		     ") in the totals, %" PRIu64 " (%" PRIu64 ") counted once of two events",
		     y->allocs, y->failed, y->req, y->alloc, t->allocs, t->failed_allocs,
		     t->bytes_req, t->bytes_alloc, t->kmalloc_dup_events, t->kmalloc_dup_failed);
	if (t->frees != y->frees)
		fail("frees: %" PRIu64 " in the records, %" PRIu64 " in the totals", y->frees,
		     t->frees);
	if (t->page_allocs != y->page_allocs || t->page_failed != y->page_failed ||
	    t->page_bytes_alloc != y->page_bytes || t->page_frees != y->page_frees)
		fail("page events differ from the records");
	if (t->lost != y->lost || t->lost_markers != y->lost_markers ||
	    t->cache_descs != y->descs)
		fail("lost %" PRIu64 "/%" PRIu64 " markers, descs %" PRIu64 " in the records; %"
		     PRIu64 "/%" PRIu64 ", %" PRIu64 " in the totals", y->lost, y->lost_markers,
		     y->descs, t->lost, t->lost_markers, t->cache_descs);
}

/*
 * --at and --diff: r2 was fed the same records through g's snapshots.
 * What the last snapshot holds agrees with itself and, taken at the end,
 * with r2's own outstanding objects; then the view is printed.
 */
static void check_growth(struct growth *g, struct rpt *r2, struct out_opts *o)
{
	const struct grow_snap *s1 = growth_snap(g, 0), *s2 = growth_snap(g, 1);
	struct growth_args ga = { .t1 = s1->rel_ns, .t2 = s2->rel_ns, .diff = true, .g = g };
	struct grow_tally sum = { 0 };
	size_t i;

	if (growth_finish(g, r2) || rpt_finish(r2))
		harness_fail("growth: out of memory");
	if (!s1->taken || !s2->taken)
		fail("a snapshot was not taken");
	for (i = 0; i < s2->nsites; i++) {
		const struct grow_tally *t = &s2->sites[i];

		sum.live += t->live;
		if (t->live + t->frees + t->failed > t->allocs)
			fail("call site %zu: %" PRIu64 " live, %" PRIu64 " freed, %" PRIu64
			     " failed of %" PRIu64 " allocations", i, t->live, t->frees, t->failed,
			     t->allocs);
		if (growth_seen(g) && s2->rel_ns >= growth_duration(g) &&
		    t->live != rpt_site(r2, i)->out_count)
			fail("call site %zu: %" PRIu64 " live at the end's snapshot, %" PRIu64
			     " outstanding", i, t->live, rpt_site(r2, i)->out_count);
	}
	if (sum.live != s2->total.live)
		fail("the snapshot's total of %" PRIu64 " live is not its call sites' %" PRIu64,
		     s2->total.live, sum.live);
	for (i = 0; i < s2->nobjs; i++)
		if (s2->objs[i].ts <= s1->abs_ns ||
		    (i && (s2->objs[i].ts < s2->objs[i - 1].ts ||
			   (s2->objs[i].ts == s2->objs[i - 1].ts &&
			    s2->objs[i].ptr <= s2->objs[i - 1].ptr))))
			fail("survivor %zu allocated at %" PRIu64 ", T1 at %" PRIu64 ": not a survivor "
			     "or out of order", i, (uint64_t)s2->objs[i].ts, s1->abs_ns);
	o->xview = &view_growth;
	o->view_args = &ga;
	print_report(r2, o);
	o->xview = NULL;
	o->view_args = NULL;
}

int fuzz_report(const uint8_t *data, size_t size, struct fuzz_outcome *out)
{
	/* Keys that tie often first, so that each comparison gets its turn. */
	static const enum sort_key all_keys[] = {
		SK_AGE, SK_LIVE, SK_XNODE, SK_FAILED, SK_FREES, SK_PINGPONG, SK_REQ, SK_NAME,
	};
	static uint8_t cpus[4] = { 1, 0, 1, 0 };
	struct rpt_filter flt = { 0 };
	struct out_opts o = { 0 };
	struct kmt_error err, err2;
	struct kmt_merge *m, *m2;
	const union kmt_rec *refs[19];
	size_t nrefs = 0, iref = 0, bmax;
	int rc2 = 1;
	struct rpt *r, *r2;
	struct growth *gw;
	struct raw_ctx *raw;
	char path[2][1024], *paths[2] = { path[0], path[1] };
	uint8_t opt;
	size_t n, cut, nfiles, i, fi;
	uint64_t fed = 0, last_ts = 0;
	unsigned int flags;
	union kmt_rec batch[16];
	struct tally y = { 0 };
	size_t nb = 0;
	int rc;

	if (size < 3)
		return 0;
	print_turn_set(data, size);
	opt = data[0];
	cut = data[1] | (size_t)data[2] << 8;
	data += 3;
	n = size - 3;
	/* Bytes of the first file; 0: a single file. */
	nfiles = cut && cut < n ? 2 : 1;
	if (nfiles == 1)
		cut = n;
	tmp_path(path[0], sizeof(path[0]), "a/cpu%u.out", header_cpu(data, cut));
	write_file(path[0], data, cut);
	if (nfiles == 2) {
		tmp_path(path[1], sizeof(path[1]), "b/cpu%u.out",
			 header_cpu(data + cut, n - cut));
		write_file(path[1], data + cut, n - cut);
	}
	flags = opt & 1 ? KMT_OPEN_ALLOW_TRUNCATED : 0;

	switch (opt >> 1 & 3) {
	case 1:
		o.view = VIEW_ALLOC;
		break;
	case 2:
		o.view = VIEW_CACHE;
		break;
	case 3:
		memcpy(o.sort, all_keys, sizeof(all_keys));
		o.nsort = sizeof(all_keys) / sizeof(all_keys[0]);
		break;
	}
	o.raw_ip = opt & 8;
	if (opt & 0x10) {
		flt.cpus = cpus;
		flt.ncpus = sizeof(cpus);
		flt.min_size = 16;
	}
	if (opt & 0x20) {
		flt.cache_name = opt & 0x10 ? "kmalloc-64" : "fuzz_cache";
		flt.has_pid = opt & 0x40;
		flt.pid = 1;
	}
	if ((opt & 0x60) == 0x40) {
		flt.has_time = true;
		flt.t_start = 1000;
		flt.t_end = 1000000000;
	}
	y.has_time = flt.has_time;
	y.t_start = flt.t_start;
	y.t_end = flt.t_end;
	o.lines = opt & 0x80 ? 3 : -1;
	o.wide = (opt & 0x88) == 0x88;

	m = kmt_merge_open(paths, nfiles, flags, &err);
	if (!m) {
		for (i = 0; i < nfiles; i++) {
			if (strncmp(err.msg, paths[i], strlen(paths[i])) == 0) {
				check_error(&err, paths[i], i ? n - cut : cut);
				break;
			}
		}
		if (i == nfiles)
			fail("merge error naming no file: %s", err.msg);
		outcome_set(out, kmt_error_exit(&err), err.msg);
		goto out;
	}
	/*
	 * The same merge read in batches (of a size the input picks), and through mappings
	 * of the files, as kmemtrace-report reads them, must agree record by record.
	 */
	m2 = kmt_merge_open(paths, nfiles, flags | KMT_OPEN_MAP, &err2);
	if (!m2)
		fail("a second merge of the same files failed: %s", err2.msg);
	bmax = 1 + cut % (sizeof(refs) / sizeof(refs[0]));
	r = rpt_new(&flt, (o.view == VIEW_ALLOC ? RPT_PTR_VIEW : 0) | RPT_SAMPLES);
	/* The second merge's batches also feed --diff's snapshots, at times the input picks. */
	r2 = rpt_new(&flt, 0);
	gw = growth_new(cut * 7919 % 200000, cut * 7919 % 200000 + cut * 104729 % 4000000, true);
	raw = raw_ctx_new();
	if (!r || !r2 || !gw || !raw)
		harness_fail("rpt_new: out of memory");
	raw_print_legend(devnull());
	for (;;) {
		rc = kmt_merge_next(m, &batch[nb], &fi);
		if (iref == nrefs && rc2 == 1) {
			rc2 = kmt_merge_next_batch(m2, refs, bmax);
			if (rc2 > (int)bmax)
				fail("a batch of %d records, %zu asked for", rc2, bmax);
			nrefs = rc2 > 0 ? (size_t)rc2 : 0;
			rc2 = rc2 > 0 ? 1 : rc2;
			if (nrefs && growth_feed(gw, r2, refs, nrefs))
				harness_fail("growth_feed: out of memory");
			iref = 0;
		}
		if (rc == 1 && (iref == nrefs || memcmp(refs[iref++], &batch[nb], sizeof(batch[0]))))
			fail("kmt_merge_next_batch() differs from kmt_merge_next() at record %" PRIu64,
			     fed);
		if (rc != 1 && (iref != nrefs || rc2 != rc ||
				(rc < 0 && strcmp(kmt_merge_error(m)->msg, kmt_merge_error(m2)->msg))))
			fail("kmt_merge_next_batch() ends otherwise than kmt_merge_next() (%d, %d)",
			     rc2, rc);
		if (rc == 1) {
			const union kmt_rec *rec = &batch[nb];

			if (fi >= nfiles || rec->c.cpu != kmt_file_header(kmt_merge_file(m, fi))->cpu)
				fail("merged record of CPU %u from file %zu", rec->c.cpu, fi);
			if (fed && rec->c.timestamp < last_ts)
				fail("merge out of time order: %" PRIu64 " after %" PRIu64,
				     (uint64_t)rec->c.timestamp, last_ts);
			last_ts = rec->c.timestamp;
			tally_rec(&y, rec);
			raw_print(devnull(), raw, rec, 0, o.raw_ip ? NULL : fixed_ksyms(),
				  o.raw_ip ? NULL : fixed_gfp());
			fed++;
			nb++;
		}
		if (nb == sizeof(batch) / sizeof(batch[0]) || (rc != 1 && nb)) {
			if (rpt_feed_many(r, batch, nb))
				harness_fail("rpt_feed: out of memory");
			nb = 0;
		}
		if (rc != 1)
			break;
	}
	if (rc < 0) {
		const struct kmt_error *e = kmt_merge_error(m);

		for (i = 0; i < nfiles; i++)
			if (strncmp(e->msg, paths[i], strlen(paths[i])) == 0)
				check_error(e, paths[i], i ? n - cut : cut);
		outcome_set(out, kmt_error_exit(e), e->msg);
		if (kmt_merge_next(m, &batch[0], NULL) != -1)
			fail("a merge error is not sticky");
	} else {
		outcome_set(out, KMT_EXIT_OK, NULL);
	}
	/*
	 * The tool prints nothing after bad data, but whatever the reader
	 * passed must be analysable: report on it anyway.
	 */
	if (rpt_finish(r))
		harness_fail("rpt_finish: out of memory");
	check_totals(r, fed);
	if (!flt.cpus && !flt.cache_name && !flt.has_pid && !flt.min_size)
		check_tally(r, &y);
	for (i = 0; i < kmt_merge_nfiles(m); i++) {
		const struct kmt_file_stats *fs = kmt_file_stats(kmt_merge_file(m, i));

		o.unknown_records += fs->unknown;
		o.truncated_bytes += fs->truncated_bytes;
	}
	o.trace = path[0];
	o.nfiles = nfiles;
	o.word_bits = kmt_file_header(kmt_merge_file(m, 0))->word_bits;
	o.big_endian = kmt_file_big_endian(kmt_merge_file(m, 0));
	o.page_size = kmt_file_header(kmt_merge_file(m, 0))->page_size;
	o.lost_unmarked = opt & 0x40 ? 7 : 0;
	o.filters = flt.cpus || flt.cache_name || flt.has_time ? "fuzz \"filters\"" : NULL;
	o.meta = fixed_meta_get();
	o.ks = o.raw_ip ? NULL : fixed_ksyms();
	print_report(r, &o);
	/* The pages view names GFP masks (in hex with --raw-ip's runs). */
	o.gfp = o.raw_ip ? NULL : fixed_gfp();
	o.xview = &view_pages;
	print_report(r, &o);
	o.xview = NULL;
	check_stacks(r);
	check_samples(r);
	{
		static const char *const excl[] = { "kmem_site_two", "0xffffffff81001047" };
		struct stacks_args sa = { .min_count = cut % 3, .weight = (enum folded_weight)(cut % 3),
					  .exclude = excl, .nexclude = opt & 0x20 ? 2 : 0 };

		o.xview = &view_stacks;
		o.view_args = &sa;
		o.nsort = 1;
		o.sort[0] = opt & 2 ? SK_BYTES : SK_OUT;
		print_report(r, &o);
		check_folded(r, &o, &sa);
	}
	o.nsort = 0;
	check_growth(gw, r2, &o);
	growth_free(gw);
	raw_ctx_free(raw);
	rpt_free(r2);
	rpt_free(r);
	kmt_merge_close(m);
	kmt_merge_close(m2);
out:
	for (i = 0; i < nfiles; i++)
		unlink(path[i]);
	return 0;
}

/* ---- kallsyms, modules, kmemtrace.meta --------------------------------------- */

#define SYMS_SEP	"\n====\n"
#define MAX_ADDRS	64

static void add_addr(uint64_t *v, size_t *n, uint64_t a)
{
	if (*n < MAX_ADDRS)
		v[(*n)++] = a;
}

/* Addresses at the start of lines: where the symbols of a kallsyms file are. */
static void line_addrs(const uint8_t *p, size_t len, uint64_t *v, size_t *n)
{
	size_t i = 0;

	while (i < len && *n < MAX_ADDRS) {
		char tok[20];
		size_t k = 0;

		while (i < len && k < 16 && ((p[i] >= '0' && p[i] <= '9') ||
					     (p[i] >= 'a' && p[i] <= 'f') ||
					     (p[i] >= 'A' && p[i] <= 'F')))
			tok[k++] = (char)p[i++];
		tok[k] = '\0';
		if (k) {
			uint64_t a = strtoull(tok, NULL, 16);

			add_addr(v, n, a);
			add_addr(v, n, a + 1);
			add_addr(v, n, a - 1);
		}
		while (i < len && p[i] != '\n')
			i++;
		i++;
	}
}

static void check_lookup(const struct ksyms *ks, uint64_t a)
{
	const char *name, *mod, *name2, *mod2;
	uint64_t off, off2;
	char small[12], buf[512];

	ksyms_format(ks, a, small, sizeof(small));
	ksyms_format(ks, a, buf, sizeof(buf));
	if (!ksyms_lookup(ks, a, &name, &off, &mod))
		return;
	if (!name || !*name)
		fail("lookup of 0x%" PRIx64 " gave an empty name", a);
	if (off > a)
		fail("lookup of 0x%" PRIx64 ": offset 0x%" PRIx64 " beyond the address", a, off);
	if (mod && !ksyms_module(ks, mod))
		fail("lookup of 0x%" PRIx64 " names module '%s' that is not listed", a, mod);
	if (ksyms_lookup(ks, a - off, &name2, &off2, &mod2) &&
	    (off2 || strcmp(name, name2) || (!mod) != (!mod2) || (mod && strcmp(mod, mod2))))
		fail("0x%" PRIx64 " is %s+0x%" PRIx64 " but its start 0x%" PRIx64 " is %s+0x%" PRIx64,
		     a, name, off, a - off, name2, off2);
	if (!ksyms_addr_of(ks, name, mod))
		fail("symbol '%s' found by address, not by name", name);
}

/*
 * A tracepoint_formats: refused with its name and a line, or every mask
 * named within GFP_NAMES_LEN without being cut, 0 and all bits included.
 */
static struct gfp_names *check_gfp(const uint8_t *p, size_t len, const uint64_t *addrs,
				   size_t naddrs)
{
	static const char path[] = "s/" GFP_FORMATS_FILE;
	char err[1024], buf[GFP_NAMES_LEN];
	struct gfp_names *g = gfp_names_parse((const char *)p, len, path, err, sizeof(err));
	uint32_t masks[MAX_ADDRS + 3] = { 0, 0xffffffffu, 0xcc0 };
	size_t i, n = 3;

	if (!g) {
		if (strcmp(err, "out of memory") == 0)
			harness_fail("gfp_names_parse: out of memory");
		if (strncmp(err, path, strlen(path)) || err[strlen(path)] != ':')
			fail("tracepoint_formats error names no file and line: %s", err);
		return NULL;
	}
	for (i = 0; i < naddrs; i++)
		masks[n++] = (uint32_t)addrs[i];
	for (i = 0; i < n; i++) {
		gfp_names_format(g, masks[i], buf, sizeof(buf));
		if (!buf[0] || strlen(buf) >= sizeof(buf) - 1)
			fail("mask 0x%x named '%.40s...' (%zu bytes)", masks[i], buf, strlen(buf));
		if (!gfp_names_has_table(g) && strncmp(buf, "0x", 2))
			fail("mask 0x%x named '%s' without a table", masks[i], buf);
	}
	return g;
}

int fuzz_syms(const uint8_t *data, size_t size, struct fuzz_outcome *out)
{
	const uint8_t *part[5] = { data, NULL, NULL, NULL, NULL };
	size_t plen[5] = { size, 0, 0, 0, 0 }, i, naddrs = 0;
	char kp[1024], mp[1024], metap[1024], lp[1024], err[1024];
	uint64_t addrs[MAX_ADDRS], v;
	struct ksyms *ks;
	struct rpt_meta *meta = NULL;
	struct gfp_names *gfp = NULL;
	struct out_opts o = { 0 };
	struct rpt *r;
	int missing, np = 1;

	print_turn_set(data, size);
	/* Split at the first four separator lines ("====" first in a part: it is empty). */
	while (np < 5) {
		const uint8_t *p = part[np - 1], *s;
		size_t l = plen[np - 1], seplen = strlen(SYMS_SEP) - 1;

		if (l >= seplen && memcmp(p, &SYMS_SEP[1], seplen) == 0) {
			part[np] = p + seplen;
			plen[np - 1] = 0;
		} else {
			s = memmem(p, l, SYMS_SEP, strlen(SYMS_SEP));
			if (!s)
				break;
			part[np] = s + strlen(SYMS_SEP);
			plen[np - 1] = (size_t)(s - p) + 1;	/* keeps its last newline */
		}
		plen[np] = l - (size_t)(part[np] - p);
		np++;
	}
	tmp_path(kp, sizeof(kp), "s/kallsyms");
	tmp_path(mp, sizeof(mp), "s/modules");
	tmp_path(metap, sizeof(metap), "s/kmemtrace.meta");
	tmp_path(lp, sizeof(lp), "s/kallsyms.loaded");
	write_file(kp, part[0], plen[0]);
	if (np > 1)
		write_file(mp, part[1], plen[1]);
	if (np > 2)
		write_file(metap, part[2], plen[2]);

	/* A fifth part: kallsyms.loaded, the symbols of the modules' "+" lines. */
	if (np > 4)
		write_file(lp, part[4], plen[4]);
	ks = ksyms_load_all(kp, np > 1 ? mp : NULL, np > 4 ? lp : NULL, err, sizeof(err),
			    &missing);
	if (!ks) {
		if (missing)
			fail("ksyms_load says an existing file is missing: %s", err);
		if (strncmp(err, kp, strlen(kp)) && strncmp(err, mp, strlen(mp)) &&
		    strncmp(err, lp, strlen(lp)))
			fail("ksyms_load error names no file: %s", err);
		outcome_set(out, KMT_EXIT_DATA, err);
	} else {
		outcome_set(out, KMT_EXIT_OK, NULL);
	}
	if (np > 2) {
		meta = meta_load(metap, err, sizeof(err), &missing);
		if (!meta)
			fail("meta_load refused a readable file: %s", err);
		meta_get_u64(meta, "page_size", &v);
		meta_get_u64(meta, "overruns_end", &v);
		meta_get(meta, "cpu_node");
		meta_get(meta, "");
	}

	line_addrs(part[0], plen[0], addrs, &naddrs);
	for (i = 0; i < ksyms_nmodules(ks); i++) {
		const struct ksym_mod *md = ksyms_module_at(ks, i);

		if (ksyms_module(ks, md->name) == NULL)
			fail("module '%s' not found by name", md->name);
		add_addr(addrs, &naddrs, md->text_addr);
		add_addr(addrs, &naddrs, md->base);
		add_addr(addrs, &naddrs, md->base + md->size - 1);
		add_addr(addrs, &naddrs, md->base + md->size);
	}
	if (ks && !ksyms_count(ks))
		fail("loaded a kallsyms with no symbol");
	if (np > 3)
		gfp = check_gfp(part[3], plen[3], addrs, naddrs);
	for (i = 0; i < naddrs; i++)
		check_lookup(ks, addrs[i]);

	/* A small trace with call sites at those addresses, printed with these symbols. */
	r = rpt_new(NULL, RPT_PTR_VIEW);
	if (!r)
		harness_fail("rpt_new: out of memory");
	for (i = 0; i < naddrs; i++) {
		union kmt_rec rec;

		memset(&rec, 0, sizeof(rec));
		rec.ev.type = i % 3 ? KMT_REC_KMALLOC : KMT_REC_CACHE_ALLOC;
		rec.ev.cpu = (uint16_t)(i & 1);
		rec.ev.timestamp = 1000 * (i + 1);
		rec.ev.call_site = addrs[i];
		rec.ev.ptr = 0x10000 + 64 * i;
		rec.ev.cache_id = 0x5000;
		rec.ev.bytes_req = 24;
		rec.ev.bytes_alloc = i % 5 ? 32 : 16;
		rec.ev.node = KMT_NODE_ANY;
		rec.ev.gfp_flags = (uint32_t)addrs[i];
		raw_print(devnull(), NULL, &rec, 0, ks, gfp);
		if (rpt_feed(r, &rec))
			harness_fail("rpt_feed: out of memory");
		if (i % 2) {
			rec.ev.type = KMT_REC_KFREE;
			rec.ev.call_site = addrs[naddrs - 1 - i];
			rec.ev.timestamp += 500;
			raw_print(devnull(), NULL, &rec, 0, ks, gfp);
			if (rpt_feed(r, &rec) || rpt_feed(r, &rec))
				harness_fail("rpt_feed: out of memory");
		}
	}
	if (meta) {
		const char *name = meta_get(meta, "hostname");
		union kmt_rec rec;

		memset(&rec, 0, sizeof(rec));
		rec.cache.type = KMT_REC_CACHE_DESC;
		rec.cache.cache_id = 0x5000;
		if (name)
			snprintf(rec.cache.name, sizeof(rec.cache.name), "%s", name);
		raw_print(devnull(), NULL, &rec, 0, ks, gfp);
		if (rpt_feed(r, &rec))
			harness_fail("rpt_feed: out of memory");
	}
	if (rpt_finish(r))
		harness_fail("rpt_finish: out of memory");
	o.trace = kp;
	o.nfiles = 1;
	o.word_bits = 64;
	o.page_size = 4096;
	o.meta = meta;
	o.ks = ks;
	o.gfp = gfp;
	o.lines = 0;
	/*
	 * One report an input: the main view (whose JSON has every table), the
	 * pages view or the cache view (whose text fits names its own way),
	 * picked by the input's hash apart from the format print_report() picks.
	 * Printing all three was two thirds of this target's time.
	 */
	switch (print_turn / 3 % 3) {
	case 0:
		o.view = VIEW_ALLOC;
		break;
	case 1:
		o.view = VIEW_ALLOC;
		o.xview = &view_pages;
		break;
	default:
		o.view = VIEW_CACHE;
		break;
	}
	print_report(r, &o);
	rpt_free(r);
	meta_free(meta);
	gfp_names_free(gfp);
	ksyms_free(ks);
	unlink(kp);
	unlink(mp);
	unlink(metap);
	return 0;
}

/* ---- kmemtrace_check ------------------------------------------------------------ */

int fuzz_check(const uint8_t *data, size_t size, struct fuzz_outcome *out)
{
	char path[1024], dir[1024], outp[1024], line[1024] = "", a0[] = "kmemtrace_check";
	char as[] = "--strict", av[] = "-v", aq[] = "-q";
	char *argv[6];
	struct read_result rr;
	uint8_t opt;
	int argc = 0, saved, fd, code, want;
	FILE *fp;

	if (size < 1)
		return 0;
	opt = data[0];
	data++;
	size--;
	tmp_path(path, sizeof(path), "c/cpu%u.out", header_cpu(data, size));
	tmp_path(dir, sizeof(dir), "c/");
	dir[strlen(dir) - 1] = '\0';
	tmp_path(outp, sizeof(outp), "check.out");
	write_file(path, data, size);

	argv[argc++] = a0;
	if (opt & 1)
		argv[argc++] = as;
	if (opt & 2)
		argv[argc++] = av;
	if (opt & 4)
		argv[argc++] = aq;
	argv[argc++] = opt & 8 ? dir : path;
	argv[argc] = NULL;

	/* Its verdict goes to stdout: into a file, read back below. */
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (saved < 0 || fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
		harness_fail("redirecting stdout: %s", strerror(errno));
	close(fd);
	code = kmt_check_main(argc, argv);
	fflush(stdout);
	if (dup2(saved, STDOUT_FILENO) < 0)
		harness_fail("restoring stdout: %s", strerror(errno));
	close(saved);

	fp = fopen(outp, "r");
	if (!fp || (!fgets(line, sizeof(line), fp) && ferror(fp)))
		harness_fail("%s: %s", outp, strerror(errno));
	fclose(fp);
	line[strcspn(line, "\n")] = '\0';

	/* The same file through the library, as kmemtrace_check reads it. */
	read_all(path, data, size, opt & 1 ? 0 : KMT_OPEN_ALLOW_TRUNCATED, &rr);
	want = rr.ok ? KMT_EXIT_OK : kmt_error_exit(&rr.err);
	if (code != want)
		fail("kmemtrace_check exit %d, the reader says %d (%s)", code, want,
		     rr.ok ? "ok" : rr.err.msg);
	if (code == KMT_EXIT_OK && !(opt & 4) &&
	    (strncmp(line, path, strlen(path)) || !strstr(line, ": OK: ")))
		fail("verdict of a good file: '%s'", line);
	if (code != KMT_EXIT_OK && (strncmp(line, path, strlen(path)) || !strstr(line, ": FAIL: ")))
		fail("verdict of a bad file: '%s'", line);
	if (code == KMT_EXIT_OK && (opt & 4) && !(opt & 2) && line[0])
		fail("-q printed '%s' for a good file", line);
	outcome_set(out, code, code ? line : NULL);
	unlink(path);
	unlink(outp);
	return 0;
}

/* ---- the checkpoint's fold ------------------------------------------------------ */

/* One site's tallies in the two reports, which the fold must keep equal. */
static void same_site(const struct rpt_site *a, const struct rpt_site *b)
{
	if (!b)
		fail("call site 0x%" PRIx64 ": not in the checkpoint's report", a->addr);
#define SAME_SITE_FIELD(f)							\
	do {									\
		if (a->f != b->f)						\
			fail("call site 0x%" PRIx64 ": " #f " %" PRIu64 " in the trace's " \
			     "report, %" PRIu64 " in the checkpoint's", a->addr,	\
			     (uint64_t)a->f, (uint64_t)b->f);			\
	} while (0)
	SAME_SITE_FIELD(hits);
	SAME_SITE_FIELD(bytes_req);
	SAME_SITE_FIELD(bytes_alloc);
	SAME_SITE_FIELD(frees);
	SAME_SITE_FIELD(bytes_freed);
	SAME_SITE_FIELD(cross_cpu_frees);
	SAME_SITE_FIELD(failed);
	SAME_SITE_FIELD(cross_node);
	SAME_SITE_FIELD(out_count);
	SAME_SITE_FIELD(out_bytes);
	SAME_SITE_FIELD(out_oldest_ts);
#undef SAME_SITE_FIELD
}

/* Reads a merge into a new report; NULL when the merge fails. */
static struct rpt *report_of(char *const *paths, size_t n, uint64_t *last_ts,
			     struct kmt_error *err)
{
	struct kmt_merge *m = kmt_merge_open(paths, n, 0, err);
	union kmt_rec rec;
	struct rpt *r;
	int rc;

	if (!m)
		return NULL;
	r = rpt_new(NULL, 0);
	if (!r)
		harness_fail("rpt_new: out of memory");
	/* As kmemtrace-report does: a large kmalloc is one above two of its pages. */
	rpt_set_page_size(r, kmt_file_header(kmt_merge_file(m, 0))->page_size);
	while ((rc = kmt_merge_next(m, &rec, NULL)) == 1) {
		if (last_ts)
			*last_ts = rec.c.timestamp;
		if (rpt_feed(r, &rec))
			harness_fail("rpt_feed: out of memory");
	}
	if (rc < 0) {
		*err = *kmt_merge_error(m);
		rpt_free(r);
		r = NULL;
	} else if (rpt_finish(r)) {
		harness_fail("rpt_finish: out of memory");
	}
	kmt_merge_close(m);
	return r;
}

int fuzz_fold(const uint8_t *data, size_t size, struct fuzz_outcome *out)
{
	char in[1024], dir[1024], ck[1024], ckf[1100], *p = in, *q = ckf;
	const struct rpt_totals *a, *b;
	struct rpt *full, *win = NULL;
	struct kmt_ckpt *k;
	struct kmt_error err;
	uint64_t last = 0;
	unsigned int cpu = header_cpu(data, size);

	tmp_path(dir, sizeof(dir), "f");
	tmp_path(in, sizeof(in), "f/cpu%u.out", cpu);
	write_file(in, data, size);
	full = report_of(&p, 1, &last, &err);
	if (!full || last == UINT64_MAX) {
		/* Only what the reader takes is folded. */
		outcome_set(out, full ? KMT_EXIT_OK : kmt_error_exit(&err), full ? NULL : err.msg);
		rpt_free(full);
		unlink(in);
		return 0;
	}
	/* Everything before the cut: the checkpoint alone must report as the trace. */
	k = kmt_ckpt_new();
	if (!k)
		harness_fail("kmt_ckpt_new: out of memory");
	tmp_path(ck, sizeof(ck), "ckpt.000002");
	if (kmt_ckpt_fold_dir(k, dir, last + 1, &err))
		fail("the fold refused what the reader took: %s", err.msg);
	if (kmt_ckpt_write(k, ck, 2, last + 1, &err))
		harness_fail("kmt_ckpt_write: %s", err.msg);
	snprintf(ckf, sizeof(ckf), "%s/cpu%u.out", ck, cpu);
	win = report_of(&q, 1, NULL, &err);
	if (!win)
		fail("the checkpoint of a good trace is refused: %s", err.msg);
	for (size_t i = 0; i < rpt_nsites(full); i++)
		same_site(rpt_site(full, i), rpt_site_find(win, rpt_site(full, i)->addr));
	if (rpt_nsites(win) != rpt_nsites(full))
		fail("%zu call sites in the checkpoint's report, %zu in the trace's",
		     rpt_nsites(win), rpt_nsites(full));
	a = rpt_totals(full);
	b = rpt_totals(win);
	/*
	 * A free of an address the report saw freed twice before is a double
	 * free again to a report of the checkpoint, which sees fewer frees in
	 * between, where the trace's, past its window, calls it untracked
	 * (trace-format.md, section 10): only that may differ.
	 */
	if (a->allocs != b->allocs || a->frees != b->frees || a->failed_allocs != b->failed_allocs ||
	    a->bytes_req != b->bytes_req || a->bytes_alloc != b->bytes_alloc ||
	    a->bytes_freed != b->bytes_freed || a->cross_cpu_frees != b->cross_cpu_frees ||
	    a->cross_node_allocs != b->cross_node_allocs ||
	    a->untracked_frees + a->double_frees != b->untracked_frees + b->double_frees ||
	    a->double_frees > b->double_frees ||
	    a->implicit_frees != b->implicit_frees || a->outstanding != b->outstanding ||
	    a->outstanding_bytes != b->outstanding_bytes || a->lost != b->lost ||
	    a->probed_frees != b->probed_frees || a->kfree_cache_objects != b->kfree_cache_objects)
		fail("the checkpoint's totals differ from the trace's: allocs %" PRIu64 "/%" PRIu64
		     " frees %" PRIu64 "/%" PRIu64 " untracked %" PRIu64 "/%" PRIu64 " double %"
		     PRIu64 "/%" PRIu64 " implicit %" PRIu64 "/%" PRIu64 " outstanding %" PRIu64
		     "/%" PRIu64 " lost %" PRIu64 "/%" PRIu64 " probed frees %" PRIu64 "/%" PRIu64
		     " kfree of cache objects %" PRIu64 "/%" PRIu64, a->allocs, b->allocs,
		     a->frees, b->frees, a->untracked_frees, b->untracked_frees, a->double_frees,
		     b->double_frees, a->implicit_frees, b->implicit_frees, a->outstanding,
		     b->outstanding, a->lost, b->lost, a->probed_frees, b->probed_frees,
		     a->kfree_cache_objects, b->kfree_cache_objects);
	for (unsigned int e = 0; e < RPT_ERR_NKINDS; e++)
		if (e != RPT_ERR_DOUBLE_FREE && rpt_error_count(full, e) != rpt_error_count(win, e))
			fail("%s errors: %" PRIu64 " in the trace, %" PRIu64 " in its checkpoint",
			     rpt_err_name(e), rpt_error_count(full, e), rpt_error_count(win, e));
	outcome_set(out, KMT_EXIT_OK, NULL);
	rpt_free(win);
	rpt_free(full);
	kmt_ckpt_free(k);
	unlink(ckf);
	rmdir(ck);
	unlink(in);
	return 0;
}

const struct fuzz_target fuzz_targets[] = {
	{ "reader", fuzz_reader },
	{ "report", fuzz_report },
	{ "syms", fuzz_syms },
	{ "check", fuzz_check },
	{ "fold", fuzz_fold },
	{ NULL, NULL },
};

const struct fuzz_target *fuzz_target_find(const char *name)
{
	const struct fuzz_target *t;

	for (t = fuzz_targets; t->name; t++)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}
