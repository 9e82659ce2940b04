/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* llama-server's own figures for a response, read from its body as it goes
 * out: the `timings` object every completion carries (a streamed one in
 * its last event) - prompt_n, predicted_n, cache_n, prompt_ms,
 * predicted_ms - and the task's `index` before it. Plain C over __u8..__u64,
 * compiled into bpf/req.bpf.c and into the user-space fuzzer, as
 * http_parse.bpf.h is; it is fed the body's bytes only (no chunk framing).
 *
 * Only the digits of those keys' values leave the kernel. A key is a
 * string outside any string, followed by ':': the scanner follows JSON's
 * strings (an unescaped quote opens or closes one; a backslash escapes the
 * next byte), so text in a string - a model's output, a client's prompt
 * echoed back - that spells "timings":{...} is never read as one. A body
 * that does not start as JSON or an event stream ('{', '[', "data:",
 * "event:", ':') is not looked at past its first byte. */
#ifndef GMT_TIMINGS_PARSE_BPF_H
#define GMT_TIMINGS_PARSE_BPF_H

enum tm_state {
	TM_START = 0, /* the body's first byte decides */
	TM_OUT,	      /* outside strings */
	TM_STR,	      /* in a string: its first TM_KEY_MAX bytes kept */
	TM_COLON,     /* a string ended: a ':' makes it a key */
	TM_OBJ,	      /* "timings": its '{' */
	TM_VALUE,     /* a key of ours: its value's first byte */
	TM_NUM,	      /* its digits */
	TM_OFF,	      /* not JSON, or lost: nothing until the next message */
};

/* the values read (bits of have) */
#define TM_PROMPT_N 1
#define TM_PREDICTED_N 2
#define TM_CACHE_N 4
#define TM_PROMPT_MS 8
#define TM_PREDICTED_MS 16
#define TM_INDEX 32 /* a task index came before */
#define TM_NEEDED (TM_PROMPT_N | TM_PREDICTED_N)

#define TM_KEY_MAX 12
#define TM_NUM_MAX (1ull << 40) /* larger values are not llama-server's */

/* what a key's value is for */
enum tm_field {
	TF_NONE = 0,
	TF_INDEX,
	TF_PROMPT_N,
	TF_PREDICTED_N,
	TF_CACHE_N,
	TF_PROMPT_MS,
	TF_PREDICTED_MS,
};

struct tm_scan {
	__u8 state;
	__u8 klen;  /* bytes of the string kept; TM_KEY_MAX + 1: too long */
	__u8 esc;   /* the last byte was an escaping backslash */
	__u8 in;    /* inside the timings object */
	__u8 field; /* enum tm_field of the value being read */
	__u8 dot;   /* 1: a '.' seen; 2: not a number we take */
	__u8 fdig;  /* fraction digits kept (up to 3: microseconds of a ms) */
	__u8 pad;
	__u32 have;
	__u32 index;
	__u64 num, frac;
	char key[TM_KEY_MAX];
	__u32 prompt_n, predicted_n, cache_n;
	__u64 prompt_us, predicted_us;
};

/* a new message's body is next */
static __always_inline void tm__reset(struct tm_scan *s)
{
	s->state = TM_START;
	s->klen = s->esc = s->in = s->field = 0;
	s->have = 0;
	s->index = 0;
}

static __always_inline bool tm__key_is(const struct tm_scan *s, const char *k, __u8 n)
{
	__u8 i;

	if (s->klen != n)
		return false;
	for (i = 0; i < TM_KEY_MAX && i < n; i++)
		if (s->key[i] != k[i])
			return false;
	return true;
}

/* the key just read, by where it stands */
static __always_inline __u8 tm__field(const struct tm_scan *s)
{
	if (!s->in)
		return tm__key_is(s, "index", 5) ? TF_INDEX : TF_NONE;
	if (tm__key_is(s, "prompt_n", 8))
		return TF_PROMPT_N;
	if (tm__key_is(s, "predicted_n", 11))
		return TF_PREDICTED_N;
	if (tm__key_is(s, "cache_n", 7))
		return TF_CACHE_N;
	if (tm__key_is(s, "prompt_ms", 9))
		return TF_PROMPT_MS;
	if (tm__key_is(s, "predicted_ms", 12))
		return TF_PREDICTED_MS;
	return TF_NONE;
}

/* a number ended: kept where its key says */
static __always_inline void tm__store(struct tm_scan *s)
{
	/* milliseconds to the microsecond: three digits of the fraction */
	__u64 us = s->num * 1000 + (s->fdig == 0 ? 0 :
				    s->fdig == 1 ? s->frac * 100 :
				    s->fdig == 2 ? s->frac * 10 :
						   s->frac);

	if (s->dot > 1)
		return;
	switch (s->field) {
	case TF_INDEX:
		if (!s->dot && s->num < TM_NUM_MAX) {
			s->index = s->num;
			s->have |= TM_INDEX;
		}
		break;
	case TF_PROMPT_N:
		if (!s->dot) {
			s->prompt_n = s->num;
			s->have |= TM_PROMPT_N;
		}
		break;
	case TF_PREDICTED_N:
		if (!s->dot) {
			s->predicted_n = s->num;
			s->have |= TM_PREDICTED_N;
		}
		break;
	case TF_CACHE_N:
		if (!s->dot) {
			s->cache_n = s->num;
			s->have |= TM_CACHE_N;
		}
		break;
	case TF_PROMPT_MS:
		s->prompt_us = us;
		s->have |= TM_PROMPT_MS;
		break;
	case TF_PREDICTED_MS:
		s->predicted_us = us;
		s->have |= TM_PREDICTED_MS;
		break;
	}
}

/* a byte outside strings: 1 when it closed a timings object with the
 * figures needed (the caller sends them) */
static __always_inline int tm__out(struct tm_scan *s, __u8 c)
{
	if (c == '"') {
		s->state = TM_STR;
		s->klen = 0;
		s->esc = 0;
		return 0;
	}
	if (!s->in)
		return 0;
	if (c == '}') {
		s->in = 0;
		return (s->have & TM_NEEDED) == TM_NEEDED;
	}
	if (c == '{' || c == '[')
		s->in = 0; /* not the flat object llama-server writes */
	return 0;
}

static __always_inline bool tm__space(__u8 c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* the next byte of a body: 1 when a timings object is complete */
static __always_inline int tm__byte(struct tm_scan *s, __u8 c)
{
	__u8 f;

	switch (s->state) {
	case TM_START:
		if (c != '{' && c != '[' && c != 'd' && c != 'e' && c != ':') {
			s->state = TM_OFF;
			return 0;
		}
		s->state = TM_OUT;
		return tm__out(s, c);
	case TM_OUT:
		return tm__out(s, c);
	case TM_STR:
		if (s->esc) {
			s->esc = 0;
			return 0;
		}
		if (c == '\\') {
			s->esc = 1;
			s->klen = TM_KEY_MAX + 1; /* no key of ours has one */
			return 0;
		}
		if (c == '"') {
			s->state = TM_COLON;
			return 0;
		}
		if (s->klen < TM_KEY_MAX)
			s->key[s->klen] = c;
		if (s->klen <= TM_KEY_MAX)
			s->klen++;
		return 0;
	case TM_COLON:
		if (tm__space(c))
			return 0;
		if (c != ':') {
			s->state = TM_OUT;
			return tm__out(s, c);
		}
		f = tm__field(s);
		if (!s->in && tm__key_is(s, "timings", 7)) {
			s->state = TM_OBJ;
			return 0;
		}
		s->field = f;
		s->state = f ? TM_VALUE : TM_OUT;
		return 0;
	case TM_OBJ:
		if (tm__space(c))
			return 0;
		s->state = TM_OUT;
		if (c != '{')
			return tm__out(s, c);
		s->in = 1;
		s->have &= TM_INDEX;
		return 0;
	case TM_VALUE:
		if (tm__space(c))
			return 0;
		if (c < '0' || c > '9') {
			s->state = TM_OUT;
			return tm__out(s, c);
		}
		s->num = c - '0';
		s->frac = 0;
		s->dot = s->fdig = 0;
		s->state = TM_NUM;
		return 0;
	case TM_NUM:
		if (c >= '0' && c <= '9') {
			if (s->dot == 1) {
				if (s->fdig < 3) {
					s->frac = s->frac * 10 + (c - '0');
					s->fdig++;
				}
			} else if (!s->dot) {
				if (s->num >= TM_NUM_MAX)
					s->dot = 2;
				else
					s->num = s->num * 10 + (c - '0');
			}
			return 0;
		}
		if (c == '.') {
			s->dot = s->dot ? 2 : 1;
			return 0;
		}
		if (c == 'e' || c == 'E' || c == '-' || c == '+') {
			s->dot = 2;
			return 0;
		}
		tm__store(s);
		s->state = TM_OUT;
		return tm__out(s, c);
	default: /* TM_OFF */
		return 0;
	}
}

#endif
