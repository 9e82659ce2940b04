// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libFuzzer over the timings scanner that bpf/req.bpf.c runs on every body
 * byte a traced server writes (bpf/timings_parse.bpf.h), which a client
 * steers through what the server echoes and generates. Each input is fed
 * raw (any bytes: memory safety, under ASan), then put in a JSON answer
 * the way llama-server writes one, escaped by json-c: as a string value, as
 * a key, and as both, before a real timings object whose figures the input
 * picks. Whatever the input, exactly that object must be read, with its
 * figures: no text in a string, however it is escaped, reads as one.
 * Built by `make .output/tests/fuzz-timings`; see bench/results.md. */
#include <json-c/json.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#include "timings_parse.bpf.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

struct seen {
	int n;
	struct tm_scan last;
};

static struct seen scan(const char *b, size_t n)
{
	struct seen r = { 0 };
	struct tm_scan s;
	size_t i;

	memset(&s, 0, sizeof(s));
	tm__reset(&s);
	for (i = 0; i < n; i++)
		if (tm__byte(&s, (__u8)b[i])) {
			r.n++;
			r.last = s;
		}
	return r;
}

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "timings fuzz: %s (%s:%d), doc %s\n", #cond, __FILE__, \
				__LINE__, doc);                                            \
			abort();                                                           \
		}                                                                          \
	} while (0)

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	unsigned prompt = size ? data[0] * 7u : 3, gen = size > 1 ? data[1] * 13u : 5;
	const char *text, *doc = "";
	struct json_object *s;
	struct seen r;
	char *buf;
	size_t len;
	int how;

	scan((const char *)data, size);
	/* the input, escaped as json-c escapes a string (as nlohmann does) */
	s = json_object_new_string_len((const char *)data, size);
	text = json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN |
							 JSON_C_TO_STRING_NOSLASHESCAPE);
	len = strlen(text) * 2 + 256;
	buf = malloc(len);
	for (how = 0; how < 3; how++) {
		static const char tail[] = "\"index\":4,\"timings\":{\"prompt_n\":%u,"
					   "\"predicted_n\":%u,\"predicted_ms\":12.5}}";
		char fmt[256];

		/* as a string value; as a key whose object says 9999; as both,
		 * in an event */
		snprintf(fmt, sizeof(fmt), "%s%s",
			 how == 0 ? "{\"content\":%s," :
			 how == 1 ? "{%s:{\"prompt_n\":9999}," :
				    "data: {\"choices\":[{%s:%s}],",
			 tail);
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wformat-nonliteral"
		if (how < 2)
			snprintf(buf, len, fmt, text, prompt, gen);
		else
			snprintf(buf, len, fmt, text, text, prompt, gen);
#pragma clang diagnostic pop
		doc = buf;
		r = scan(buf, strlen(buf));
		CHECK(r.n == 1);
		CHECK(r.last.prompt_n == prompt && r.last.predicted_n == gen);
		CHECK(r.last.predicted_us == 12500);
		CHECK((r.last.have & TM_INDEX) && r.last.index == 4);
	}
	free(buf);
	json_object_put(s);
	return 0;
}
