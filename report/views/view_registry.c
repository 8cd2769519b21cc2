// SPDX-License-Identifier: GPL-2.0-only
/*
 * view_registry.c - the registry of kmemtrace-report's views beyond the
 * main tables: a new view is one views/view_*.c file and one line here.
 * Apart from view.c, so that the objects the unit tests link (sort keys,
 * labels) need none of the views.
 */
#include <string.h>

#include "views/view.h"
#include "views/view_growth.h"
#include "views/view_life.h"
#include "views/view_pages.h"
#include "views/view_stacks.h"

const struct report_view *const report_views[] = {
	&view_stacks,
	&view_life,
	&view_pages,
	&view_growth,
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
