// SPDX-License-Identifier: GPL-2.0-only
/*
 * report_views.c - the registry of kmemtrace-report's views beyond the main
 * tables: one line per view (out_table.h).
 */
#include <string.h>

#include "out_table.h"
#include "view_life.h"
#include "view_pages.h"
#include "view_stacks.h"

const struct report_view *const report_views[] = {
	&view_stacks,
	&view_life,
	&view_pages,
	NULL
};

const struct report_view *report_view_find(const char *name)
{
	size_t i;

	for (i = 0; report_views[i]; i++)
		if (!strcmp(report_views[i]->name, name))
			return report_views[i];
	return NULL;
}
