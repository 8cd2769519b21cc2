/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt_map.h - windows of trace files mapped for reading, guarded against
 * the file shrinking under them (kmt_map.c).
 */
#ifndef KMT_MAP_H
#define KMT_MAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * Installs, once, the SIGBUS handler that ends the process with a message
 * "PROGNAME: PATH: the file shrank while it was read" and KMT_EXIT_IO when
 * a mapped window faults. kmt_map_window() installs it too, named
 * "kmemtrace" unless this was called first.
 */
void kmt_map_guard(const char *progname);

/*
 * len bytes of fd from off (a multiple of the page size) mapped private
 * and writable, registered for the guard under path (kept, not copied:
 * it must live until kmt_map_release()). NULL when it cannot be mapped.
 */
void *kmt_map_window(int fd, uint64_t off, size_t len, const char *path);

/* Unregisters and unmaps a window of kmt_map_window(); NULL is ignored. */
void kmt_map_release(void *p, size_t len);

#endif /* KMT_MAP_H */
