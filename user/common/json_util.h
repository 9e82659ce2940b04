/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* the few json-c shorthands every JSON writer here uses */
#ifndef GMT_JSON_UTIL_H
#define GMT_JSON_UTIL_H

#include <json-c/json.h>
#include <linux/types.h>

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

static inline struct json_object *str(const char *s)
{
	return json_object_new_string(s ? s : "");
}

#endif
