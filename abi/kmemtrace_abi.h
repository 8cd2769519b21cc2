/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * kmemtrace_abi.h - the trace format and debugfs interface shared by
 * kmemtrace.ko, kmemtraced and the readers. Documented byte by byte in
 * Documentation/trace-format.md; change both together.
 */
#ifndef KMEMTRACE_ABI_H
#define KMEMTRACE_ABI_H

#if defined(__KERNEL__) || defined(__linux__)
#include <linux/ioctl.h>
#include <linux/types.h>
#else
/* Readers on non-Linux hosts (the report may run anywhere). */
#include <stdint.h>
typedef uint8_t __u8;
typedef uint16_t __u16;
typedef uint32_t __u32;
typedef uint64_t __u64;
typedef int16_t __s16;
typedef int32_t __s32;
#endif

/*
 * Version of the record layout. A reader refuses a file whose major it
 * does not know and accepts any minor: a minor bump only adds record
 * types or gives meaning to bytes that were reserved (zero) before.
 */
#define KMT_ABI_MAJOR		1
#define KMT_ABI_MINOR		2	/* 1.1: KMT_F_PROBED; 1.2: kernel stacks */

/* "KMTR" when read as a little-endian u32; its byte-swap marks a BE file. */
#define KMT_MAGIC		0x52544d4bU

/* Every record, and the file header, is exactly this many bytes. */
#define KMT_RECORD_SIZE		64

/* Byte order of the writer, stored in kmt_file_header.byte_order. */
#define KMT_BYTE_ORDER_LE	1
#define KMT_BYTE_ORDER_BE	2

/* Clock of every timestamp: CLOCK_MONOTONIC, ktime_get_mono_fast_ns(). */
#define KMT_CLOCK_MONOTONIC	1

/*
 * A cpuN.out file is one kmt_file_header followed by whole kmt_record
 * slots. kmemtraced writes the header; the records come verbatim from
 * the module's relay buffer for that CPU, in the traced kernel's byte
 * order.
 */
struct kmt_file_header {
	__u32 magic;		/* KMT_MAGIC in the writer's byte order */
	__u16 version_major;	/* KMT_ABI_MAJOR of the records that follow */
	__u16 version_minor;	/* KMT_ABI_MINOR of the records that follow */
	__u16 header_size;	/* bytes, KMT_RECORD_SIZE */
	__u16 record_size;	/* bytes, KMT_RECORD_SIZE */
	__u16 cpu;		/* the CPU whose buffer this file holds */
	__u8 byte_order;	/* KMT_BYTE_ORDER_LE or _BE */
	__u8 word_bits;		/* traced kernel's pointer width: 32 or 64 */
	__u8 clock_id;		/* KMT_CLOCK_MONOTONIC */
	__u8 kind;		/* (1.3) KMT_FILE_RECORDS (0) or KMT_FILE_CHECKPOINT */
	__u8 reserved0[2];	/* zero */
	__u32 page_size;	/* bytes, traced kernel's PAGE_SIZE */
	__u64 start_mono_ns;	/* CLOCK_MONOTONIC when kmemtraced began */
	__u64 start_real_ns;	/* CLOCK_REALTIME at the same moment */
	/* (1.3) A checkpoint's (KMT_FILE_CHECKPOINT); zero in any other file. */
	__u64 cut_ns;		/* its records are before this; the kept ones at or after */
	__u64 dropped_records;	/* this CPU's records in the segments it replaced */
	__u32 segment;		/* the first kept segment: seg.NNNNNN */
	__u32 reserved1;	/* zero */
};

/*
 * (1.3) What a file holds (kmt_file_header.kind). A checkpoint is written
 * by kmemtraced --max-size, never by the module: the records of the
 * segments it dropped that a report of the kept ones still needs (live
 * objects' allocations, cache descriptions, stacks, LOST records,
 * anything it could not pair), verbatim, their sequence numbers with gaps,
 * and KMT_REC_SUM records for what it folded. Documented in
 * Documentation/trace-format.md, section 10.
 */
#define KMT_FILE_RECORDS	0
#define KMT_FILE_CHECKPOINT	1
/* The format minor that added checkpoints: their version_minor is at least this. */
#define KMT_CKPT_MINOR		3

/* Record types: the first byte of every record slot. */
enum kmt_record_type {
	KMT_REC_KMALLOC		= 1,	/* kmalloc(), kmalloc_node(), ... */
	KMT_REC_CACHE_ALLOC	= 2,	/* kmem_cache_alloc*() */
	KMT_REC_PAGE_ALLOC	= 3,	/* mm_page_alloc (opt-in) */
	KMT_REC_KFREE		= 4,	/* kfree() */
	KMT_REC_CACHE_FREE	= 5,	/* kmem_cache_free() */
	KMT_REC_PAGE_FREE	= 6,	/* mm_page_free (opt-in) */
	KMT_REC_CACHE_DESC	= 7,	/* cache identity -> name and sizes */
	KMT_REC_LOST		= 8,	/* records dropped before this point */
	KMT_REC_STACK		= 9,	/* (1.2) part of a kernel stack */
	KMT_REC_SUM		= 10,	/* (1.3) folded events, in checkpoints only */
	/*
	 * Readers skip (and count) types they do not know, so new kinds
	 * never break an older reader; a kind needing more than one slot
	 * uses several consecutive slots of its own types.
	 */
};

/* kmt_record.flags */
#define KMT_F_HARDIRQ		0x01	/* emitted in hard interrupt context */
#define KMT_F_SOFTIRQ		0x02	/* emitted in softirq context */
#define KMT_F_CLAMPED		0x04	/* a byte count exceeded U32_MAX */
#define KMT_F_NAME_TRUNC	0x08	/* cache name longer than the field */
/*
 * (1.1) Seen by a kprobe on an entry point the slab tracepoints miss:
 * kmem_cache_alloc_bulk, kmem_cache_free_bulk (kfree_bulk, kfree_rcu's
 * batches), kmalloc_nolock, kfree_nolock. <debugfs>/kmemtrace/coverage
 * says which paths a kernel has and how each is recorded.
 */
#define KMT_F_PROBED		0x10
/*
 * (1.2) Stacks were asked for (module parameter stack_depth) but this
 * event has none: the CPU's stack table was full, the unwinder found no
 * frame, or the stack's record did not fit the buffer. stack_id is 0.
 */
#define KMT_F_NO_STACK		0x20

/* Node value meaning "no node requested". */
#define KMT_NODE_ANY		(-1)

/*
 * Allocation and free events (types 1..6). Fields a type does not use
 * are zero. For page events ptr is the page frame number and
 * bytes_alloc is PAGE_SIZE << order.
 */
struct kmt_event {
	__u8 type;		/* enum kmt_record_type */
	__u8 flags;		/* KMT_F_* */
	__u16 cpu;		/* CPU that emitted the record */
	__u32 seq;		/* per-CPU sequence number, wraps at 2^32 */
	__u64 timestamp;	/* ns, clock of kmt_file_header.clock_id */
	__u64 call_site;	/* return address into the caller */
	__u64 ptr;		/* object address; 0 for a failed allocation */
	__u64 cache_id;		/* kmem_cache identity, 0 for kmalloc/page */
	__u32 bytes_req;	/* bytes, requested (allocations) */
	__u32 bytes_alloc;	/* bytes, actually reserved (allocations) */
	__u32 gfp_flags;	/* gfp_t of the allocation */
	__s32 node;		/* NUMA node requested, KMT_NODE_ANY if none */
	__u32 pid;		/* current task's pid (the interrupted one in IRQ) */
	__s16 cpu_node;		/* NUMA node of the emitting CPU */
	/*
	 * (1.2) The KMT_REC_STACK records of this id, earlier in the same
	 * CPU's stream, hold the kernel stack of this event; 0: none.
	 */
	__u16 stack_id;
};

/*
 * (1.2) Page allocations: cache_id is KMT_PAGE_MT_VALID | migratetype
 * (the tracepoint's migratetype field); 0 from older modules.
 */
#define KMT_PAGE_MT_VALID	0x100

#define KMT_CACHE_NAME_LEN	32

/*
 * Cache description: the module emits one into a CPU's stream before the
 * first event on that CPU that names the cache.
 */
struct kmt_cache_desc {
	__u8 type;		/* KMT_REC_CACHE_DESC */
	__u8 flags;		/* KMT_F_NAME_TRUNC */
	__u16 cpu;
	__u32 seq;
	__u64 timestamp;	/* ns */
	__u64 cache_id;		/* identity used by kmt_event.cache_id */
	__u32 object_size;	/* bytes a user of the cache asks for */
	__u32 size;		/* bytes each object occupies in the slab */
	char name[KMT_CACHE_NAME_LEN];	/* NUL-padded, NUL-terminated */
};

/*
 * Lost records: written as soon as the buffer has room again after one
 * or more records were dropped because it was full. Its seq is the seq
 * the next data record will carry; it does not consume one.
 */
struct kmt_lost {
	__u8 type;		/* KMT_REC_LOST */
	__u8 flags;
	__u16 cpu;
	__u32 seq;		/* seq of the next data record */
	__u64 timestamp;	/* ns, when room was found again */
	__u64 count;		/* records dropped since the last written one */
	__u64 first_lost_ns;	/* timestamp of the first dropped record */
	__u64 total_dropped;	/* dropped on this CPU since the module loaded */
	__u8 reserved[24];	/* zero */
};

/* Frames a KMT_REC_STACK slot holds. */
#define KMT_STACK_SLOT_FRAMES	5
/* Most frames a stack may have (module parameter stack_depth). */
#define KMT_STACK_MAX_DEPTH	64

/*
 * (1.2) A kernel stack, written into a CPU's stream once, before the
 * first event there that carries its id. A stack of depth frames takes
 * ceil(depth / KMT_STACK_SLOT_FRAMES) consecutive slots of this type,
 * first = 0, 5, 10, ...; each slot takes a seq. Frames are return
 * addresses, innermost first: frames[0] of the first slot is the event's
 * call site, and the tracer's own frames are never included. Ids are per
 * CPU stream (1..65535); a later stack record with the same id on the
 * same CPU (after the module's table was reset) replaces the earlier one.
 */
struct kmt_stack {
	__u8 type;		/* KMT_REC_STACK */
	__u8 flags;		/* zero */
	__u16 cpu;
	__u32 seq;
	__u64 timestamp;	/* ns */
	__u16 stack_id;		/* 1..65535, the id events carry */
	__u8 depth;		/* frames in the whole stack, 1..KMT_STACK_MAX_DEPTH */
	__u8 first;		/* index in the stack of frames[0] */
	__u8 nframes;		/* frames used in this slot, 1..KMT_STACK_SLOT_FRAMES */
	__u8 reserved[3];	/* zero */
	__u64 frames[KMT_STACK_SLOT_FRAMES];	/* unused ones zero */
};

/* kmt_sum.flags: beside the allocations' KMT_F_* flags, their frees were probed ones. */
#define KMT_SUM_F_FREE_PROBED	0x80

/* kmt_sum.sum_kind */
#define KMT_SUM_FREED		1	/* allocations, each freed (count frees too) */
#define KMT_SUM_FAILED		2	/* failed allocations (ptr 0) */

/*
 * (1.3) Events a checkpoint folded: count allocations of one key (CPU,
 * call site, cache, stack, allocation type and flags), each freed by
 * the matching free (KMT_SUM_FREED), or failed (KMT_SUM_FAILED). Never
 * written by the module; a key with more than U32_MAX allocations takes
 * several records.
 */
struct kmt_sum {
	__u8 type;		/* KMT_REC_SUM */
	__u8 flags;		/* the allocations' KMT_F_*, KMT_SUM_F_FREE_PROBED */
	__u16 cpu;		/* CPU that allocated; the file's */
	__u32 seq;		/* zero */
	__u64 timestamp;	/* ns, the file's cut_ns - 1: SUM records come last */
	__u64 call_site;
	__u64 cache_id;
	__u64 bytes_req;	/* sum over the allocations */
	__u64 bytes_alloc;	/* sum over the allocations */
	__u32 count;		/* allocations */
	__u32 cross_cpu;	/* of which freed on another CPU than the allocating one */
	__u32 cross_node;	/* of which asked for a node other than the CPU's */
	__u16 stack_id;		/* the allocations' stack in this CPU's stream, 0 none */
	__u8 alloc_type;	/* KMT_REC_KMALLOC or KMT_REC_CACHE_ALLOC */
	__u8 sum_kind;		/* KMT_SUM_FREED or KMT_SUM_FAILED */
};

/* Any slot: the first 16 bytes are common to every record type. */
struct kmt_record_common {
	__u8 type;
	__u8 flags;
	__u16 cpu;
	__u32 seq;
	__u64 timestamp;
};

_Static_assert(sizeof(struct kmt_file_header) == KMT_RECORD_SIZE,
	       "kmt_file_header must fill one slot");
_Static_assert(sizeof(struct kmt_event) == KMT_RECORD_SIZE,
	       "kmt_event must fill one slot");
_Static_assert(sizeof(struct kmt_cache_desc) == KMT_RECORD_SIZE,
	       "kmt_cache_desc must fill one slot");
_Static_assert(sizeof(struct kmt_lost) == KMT_RECORD_SIZE,
	       "kmt_lost must fill one slot");
_Static_assert(sizeof(struct kmt_stack) == KMT_RECORD_SIZE,
	       "kmt_stack must fill one slot");
_Static_assert(sizeof(struct kmt_sum) == KMT_RECORD_SIZE,
	       "kmt_sum must fill one slot");
_Static_assert(sizeof(struct kmt_record_common) == 16,
	       "kmt_record_common is the shared 16-byte prefix");

/*
 * debugfs interface, below <debugfs>/KMT_DEBUGFS_DIR:
 *   cpuN            relay buffer of CPU N (read, poll, mmap; splice before 6.8)
 *   abi_version     "MAJOR.MINOR\n"
 *   enabled         "0\n" or "1\n"; writing 0 stops tracing and flushes
 *                   the partial sub-buffers so a reader can drain them
 *   total_overruns  records dropped because a buffer was full, all CPUs
 *   coverage        "PATH HOW [DETAIL]\n" per allocation path (1.1)
 *   stats           "# buffers ...\n" (how the buffers were sized at
 *                   load: Documentation/trace-format.md), then
 *                   "# cpu emitted written dropped\n", then a line a CPU
 *   stacks          (1.2) "# stacks depth D frees F entries E
 *                   bytes_per_cpu B cache W check K\n", "# cpu with_stack
 *                   no_stack_full no_stack_unwind stacks_written
 *                   stacks_dropped entries_used walked cached
 *                   check_failed\n", then a line a CPU; fields are read
 *                   by position, later ones ignored
 *   filter          (1.2, mode 0600) the filter in force on the first
 *                   line, "none" or the words a write sets it with
 *                   ("tgid=N pid=N cgroup=ID size=MIN-MAX
 *                   site=START-END cache=NAME"), "# track slots S used U\n",
 *                   "# cpu filtered_allocs filtered_frees untracked\n",
 *                   then a line a CPU; writing words sets a filter,
 *                   "none" removes it (Documentation/trace-format.md)
 *   init_kallsyms   the /proc/kallsyms lines ("ADDR TYPE NAME\t[MODULE]\n")
 *                   of the init text of each module loaded after
 *                   kmemtrace.ko and not unloaded since, copied before its
 *                   init ran: /proc/kallsyms drops them once the init
 *                   returns. No ABI minor: older modules lack the file
 * All files are mode 0400 or 0600 (root only).
 */
#define KMT_DEBUGFS_DIR		"kmemtrace"
#define KMT_DEBUGFS_CPU_FMT	"cpu%u"
#define KMT_DEBUGFS_ABI		"abi_version"
#define KMT_DEBUGFS_ENABLED	"enabled"
#define KMT_DEBUGFS_OVERRUNS	"total_overruns"
#define KMT_DEBUGFS_STATS	"stats"
#define KMT_DEBUGFS_COVERAGE	"coverage"
#define KMT_DEBUGFS_STACKS	"stacks"
#define KMT_DEBUGFS_FILTER	"filter"
#define KMT_DEBUGFS_INIT_KALLSYMS	"init_kallsyms"

/*
 * Reading a cpuN file through mmap(2) (of its whole ring, subbufs x
 * subbuf_size bytes, PROT_READ, MAP_SHARED) instead of read(2): each
 * KMT_IOC_RING_NEXT gives back the bytes of the previous extent (done)
 * and returns the next one, whole records within one sub-buffer. The
 * rules are read()'s: while tracing is on, only a reader bound to the
 * buffer's CPU is answered (EAGAIN otherwise); read() and this share
 * one read position. Modules without it answer ENOTTY (no ABI minor).
 */
struct kmt_ring_extent {
	__u64 done;		/* in: bytes of the last extent taken (0 at first) */
	__u64 offset;		/* out: where the next extent starts in the ring */
	__u64 len;		/* out: its bytes; 0 when nothing is there now */
	__u64 ring_size;	/* out: the ring's size, what to map */
};

#define KMT_IOC_RING_NEXT	_IOWR('k', 0x80, struct kmt_ring_extent)

/*
 * Limits of the module parameters subbufs and mem_share (percent of the
 * memory available at load), for tools that suggest new values.
 */
#define KMT_PARAM_SUBBUFS_MAX	4096
#define KMT_PARAM_MEM_SHARE_MAX	90

#endif /* KMEMTRACE_ABI_H */
