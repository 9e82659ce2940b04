/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* the few json-c shorthands every JSON writer here uses */
#ifndef GMT_JSON_UTIL_H
#define GMT_JSON_UTIL_H

#include <json-c/json.h>
#include <linux/types.h>
#include <stdlib.h>
#include <string.h>
#include "fmt.h"

#define add(o, k, v) json_object_object_add(o, k, v)

static inline struct json_object *i64(__s64 v)
{
	return json_object_new_int64(v);
}

static inline struct json_object *u64(__u64 v)
{
	return json_object_new_uint64(v);
}

static inline struct json_object *num(double v)
{
	return json_object_new_double(v);
}

/* strings as printable UTF-8 (fmt_clean): the model's are already, the
 * raw events' of --events are not */
static inline struct json_object *str(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	char buf[512], *c = n * 3 < sizeof(buf) ? buf : malloc(n * 3 + 1);
	struct json_object *o;

	if (!c)
		return json_object_new_string("");
	fmt_clean(c, n * 3 + 1, s ? s : "", n);
	o = json_object_new_string(c);
	if (c != buf)
		free(c);
	return o;
}

#endif
