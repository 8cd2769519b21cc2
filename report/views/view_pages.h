/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * view_pages.h - kmemtrace-report --pages: page allocations by order,
 * migrate type and GFP mask, and slab and page memory together.
 */
#ifndef VIEW_PAGES_H
#define VIEW_PAGES_H

#include "views/view.h"

extern const struct report_view view_pages;

/* The name of a migrate type (rpt_page_tally.key of RPT_PG_MT). */
const char *pages_mt_name(unsigned int mt);

#endif /* VIEW_PAGES_H */
