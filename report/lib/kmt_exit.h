/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt_exit.h - exit codes shared by every kmemtrace tool (documented in
 * each man page).
 */
#ifndef KMT_EXIT_H
#define KMT_EXIT_H

#define KMT_EXIT_OK		0	/* success, every file verified */
#define KMT_EXIT_USAGE		1	/* bad command line */
#define KMT_EXIT_DATA		2	/* bad trace data, verification failure */
#define KMT_EXIT_IO		3	/* I/O or system error: open, read, write */
#define KMT_EXIT_INTERNAL	4	/* out of memory, internal error */

#endif /* KMT_EXIT_H */
