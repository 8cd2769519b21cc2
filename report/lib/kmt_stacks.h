/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt_stacks.h - kernel stacks of a trace: joins the KMT_REC_STACK slots
 * of each CPU's stream into whole stacks, keeps each distinct stack once
 * (whatever CPU or id carried it) and answers which stack an event's
 * (cpu, stack_id) names.
 */
#ifndef KMT_STACKS_H
#define KMT_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "kmt_reader.h"

/* kmt_stacks_lookup(): the event names no stack known at this point. */
#define KMT_STACK_NONE	UINT32_MAX

struct kmt_stacks;

/* NULL when out of memory. */
struct kmt_stacks *kmt_stacks_new(void);
void kmt_stacks_free(struct kmt_stacks *s);

/*
 * Takes one stack slot, in its CPU's stream order (a merge keeps it).
 * When the slot ends its stack, the stack is kept (once per distinct
 * content) and (cpu, stack_id) names it from then on; the first slot of
 * a stack with the same (cpu, id) forgets the earlier one (the module's
 * table was reset). Slots that do not continue the stack under way on
 * their CPU (the reader refuses those; a stack cut short by a LOST
 * marker) are dropped with it. 0, or -1 when out of memory.
 */
int kmt_stacks_feed(struct kmt_stacks *s, const struct kmt_stack *slot);

/* The stack (cpu, id) names now: an index below kmt_stacks_count(), or KMT_STACK_NONE. */
uint32_t kmt_stacks_lookup(const struct kmt_stacks *s, uint16_t cpu, uint16_t id);

/* Distinct stacks kept so far; their indexes are 0..count-1, in order of first completion. */
size_t kmt_stacks_count(const struct kmt_stacks *s);

/* The frames of stack i, innermost (the call site) first; *depth of them. NULL if no such. */
const uint64_t *kmt_stacks_frames(const struct kmt_stacks *s, uint32_t i, unsigned int *depth);

/* Whole stacks joined (the same content counted each time it was written). */
uint64_t kmt_stacks_joined(const struct kmt_stacks *s);

/* Bytes held: grows with distinct stacks and (cpu, id) pairs, not with the trace. */
size_t kmt_stacks_memory(const struct kmt_stacks *s);

/* What a file's events made of its stacks (kmt_stacks_verify_file()). */
struct kmt_stack_use {
	uint64_t unknown;	/* events naming an id no whole stack of the file had before them */
	uint64_t first_off;	/* the offset of the first of them */
};

/*
 * Reads f to its end, as kmt_file_next() checks it, joining its stacks
 * as the report does: an event naming a stack the file did not give
 * before it is counted in *su, not a failure (a file begun by a restarted
 * kmemtraced, or lost records, may hold it). 0 at the end, -1 on the
 * file's error (kmt_file_error()), -2 out of memory.
 */
int kmt_stacks_verify_file(struct kmt_file *f, struct kmt_stack_use *su);

#endif /* KMT_STACKS_H */
