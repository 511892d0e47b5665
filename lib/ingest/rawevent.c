/*
 * rawevent.c - reading raw counting events from JSON lines and CSV.
 *
 * The event contract (cnt-event(5)) names eleven fields:
 *
 *   idempotency_key, tenant_id, counter_id, member_ref   strings
 *   delta                 a signed 64-bit integer
 *   item, subject, signature                            strings
 *   event_time            RFC 3339 with offset, or integer epoch milliseconds
 *   origin                "backend" or "client", in any case
 *   attrs                 an object (map) of string to string
 *
 * JSON lines.  Each line is exactly one JSON object (RFC 8259), with optional
 * whitespace around it and an optional trailing '\r'.  The parser below is
 * written for this one shape, because it is the hot path of admission (the
 * target is a million events a second per core for all of cnt-ingest):
 *
 *   - One pass, no allocation per line.  Strings without a backslash are
 *     returned as slices of the line itself; strings with escapes are decoded
 *     into a scratch buffer that is reserved once per line to the line's
 *     length (decoding never makes a string longer: "\n" is 2 bytes for 1,
 *     "\uXXXX" 6 bytes for at most 3, a surrogate pair 12 for 4), so the
 *     scratch never moves while slices into it are being handed out.
 *   - Strict: string escapes are fully checked (a \u high surrogate must be
 *     followed by a \u low one; a lone surrogate is an error), raw bytes in
 *     strings must be well-formed UTF-8 (no overlongs, no surrogates, nothing
 *     above U+10FFFF) and not control characters; numbers follow the JSON
 *     grammar (no leading zeros, no '+', no bare '.'); nothing may follow the
 *     object.  Any of these is MALFORMED, with the byte column (1-based).
 *   - Keys are matched against the eleven field names after unescaping, so
 *     "\u0064elta" is delta.  A key given twice is BAD_FIELD, even when one
 *     of the values is null.  Unknown keys are skipped, but their values must
 *     still be valid JSON (nested up to 64 deep).
 *   - A known key with a value of the wrong JSON type is BAD_FIELD naming the
 *     field; null is "absent" for every field.  delta must be an integer
 *     literal in int64 range (1.0, 1e3, "5" and 9223372036854775808 are
 *     refused); event_time a string holding RFC 3339 with offset, or an
 *     integer; attrs an object whose values are all strings, no key twice.
 *   - The first problem is reported, except that a line that is not valid
 *     JSON is MALFORMED even when an earlier field was already found bad: the
 *     rest of the line is still parsed to find that out.
 *
 * CSV (RFC 4180, parsed by libcsv in strict mode).  The first row is a
 * header; its cells name the columns.  A column named like a field above
 * fills that field; a column "attrs.NAME" sets attrs[NAME]; other columns
 * (including a bare "attrs") are ignored.  The same column twice is an error
 * for the whole input.  A UTF-8 byte-order mark before the header is
 * skipped.  Data rows:
 *
 *   - An empty cell is an absent field.  libcsv trims spaces and tabs around
 *     unquoted cells; quote a cell to keep them.
 *   - delta and event_time are parsed from the text with the JSON rules:
 *     an integer literal, or (event_time only) RFC 3339 with offset.
 *     origin is "backend"/"client" in any case.  String cells must be UTF-8.
 *   - A row with another number of cells than the header is MALFORMED, and
 *     so is a quote inside an unquoted cell, text after a closing quote, an
 *     unterminated quoted cell at the end of the input, and a row longer
 *     than 1 MiB.  After such an error reading resumes at the next line.
 *     A row longer than 1 MiB is reported as soon as that much of it has
 *     been fed, with its first 256 bytes, so a line that never ends (an
 *     endless stream of bytes without a newline) is reported all the same
 *     and costs no more than 1 MiB of memory.
 *   - Rows are numbered by the physical line on which they start ('\n',
 *     "\r\n" and a lone '\r' end a line), so a quoted cell holding newlines
 *     advances the count as an editor would.  Blank lines are skipped (and
 *     counted).
 */
#include "ingest/rawevent.h"

#include <csv.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "time/timefmt.h"

enum {
	F_IDEMPOTENCY_KEY, F_TENANT_ID, F_COUNTER_ID, F_MEMBER_REF, F_DELTA, F_ITEM,
	F_EVENT_TIME, F_ORIGIN, F_SUBJECT, F_SIGNATURE, F_ATTRS, F_COUNT
};

#define F_IGNORED (-1)
#define F_ATTR_COLUMN (-2)	/* CSV only: an "attrs.NAME" column */
#define MAX_DEPTH 64
#define CSV_MAX_ROW ((size_t)1 << 20)
#define CSV_OVERLONG_KEEP ((size_t)256)   /* bytes of an overlong row reported */
#define CSV_PIECE ((size_t)64 << 10)
#define CSV_MAX_COLUMNS 4096

static const char *const field_names[F_COUNT] = {
	"idempotency_key", "tenant_id", "counter_id", "member_ref", "delta", "item",
	"event_time", "origin", "subject", "signature", "attrs",
};

static int field_lookup(const char *s, size_t n)
{
#define IS(name) (memcmp(s, name, n) == 0)
	switch (n) {
	case 4: if (IS("item")) return F_ITEM; break;
	case 5: if (IS("delta")) return F_DELTA; if (IS("attrs")) return F_ATTRS; break;
	case 6: if (IS("origin")) return F_ORIGIN; break;
	case 7: if (IS("subject")) return F_SUBJECT; break;
	case 9: if (IS("tenant_id")) return F_TENANT_ID; if (IS("signature")) return F_SIGNATURE; break;
	case 10:
		if (IS("counter_id")) return F_COUNTER_ID;
		if (IS("member_ref")) return F_MEMBER_REF;
		if (IS("event_time")) return F_EVENT_TIME;
		break;
	case 15: if (IS("idempotency_key")) return F_IDEMPOTENCY_KEY; break;
	default: break;
	}
	return F_IGNORED;
#undef IS
}

static cnt_slice *string_slot(cnt_raw_event *ev, int f)
{
	switch (f) {
	case F_IDEMPOTENCY_KEY: return &ev->idempotency_key;
	case F_TENANT_ID: return &ev->tenant_id;
	case F_COUNTER_ID: return &ev->counter_id;
	case F_MEMBER_REF: return &ev->member_ref;
	case F_ITEM: return &ev->item;
	case F_SUBJECT: return &ev->subject;
	case F_SIGNATURE: return &ev->signature;
	default: return NULL;
	}
}

static void problem(cnt_raw_problem *pb, cnt_raw_status st, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void problem(cnt_raw_problem *pb, cnt_raw_status st, const char *field, const char *fmt, ...)
{
	va_list ap;

	pb->status = st;
	pb->field = field;
	va_start(ap, fmt);
	vsnprintf(pb->msg, sizeof(pb->msg), fmt, ap);
	va_end(ap);
}

/* Writes at most 40 bytes of s into out (cap >= 48) for a message: printable
 * ASCII as is, anything else as '?', "..." when cut. */
static const char *snippet(char *out, size_t cap, const char *s, size_t n)
{
	size_t k = 0, lim = n < 40 ? n : 40;

	for (size_t i = 0; i < lim && k + 4 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		out[k++] = (c >= 0x20 && c < 0x7f && c != '"') ? (char)c : '?';
	}
	if (lim < n && k + 4 < cap) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
	return out;
}

/* Length of the well-formed UTF-8 sequence at s (s[0] >= 0x80), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];

	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		return n >= 3 && s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		return n >= 4 && s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 &&
			(s[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

static int utf8_valid(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		if (u[i] < 0x80) {
			i++;
		} else {
			size_t k = utf8_seq(u + i, n - i);
			if (k == 0)
				return 0;
			i += k;
		}
	}
	return 1;
}

/* ---- text forms shared by JSON, CSV and Avro ---------------------------- */

int cnt_raw_parse_int64(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	uint64_t mag = 0, lim;
	int neg = 0;

	if (n > 0 && s[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (i >= n || s[i] < '0' || s[i] > '9' || (s[i] == '0' && n - i > 1))
		return -1;
	lim = neg ? UINT64_C(9223372036854775808) : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9 || mag > (lim - d) / 10)
			return -1;
		mag = mag * 10 + d;
	}
	*out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	return 0;
}

int cnt_raw_parse_event_time(const char *s, size_t n, int64_t *ms_out)
{
	if (n > 0 && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) &&
	    cnt_raw_parse_int64(s, n, ms_out) == 0)
		return 0;
	return cnt_time_parse_rfc3339(s, n, ms_out);
}

int cnt_raw_parse_origin(const char *s, size_t n, int *origin)
{
	if (n == 7 && strncasecmp(s, "backend", 7) == 0) {
		*origin = CNT_ORIGIN_BACKEND;
		return 0;
	}
	if (n == 6 && strncasecmp(s, "client", 6) == 0) {
		*origin = CNT_ORIGIN_CLIENT;
		return 0;
	}
	return -1;
}

/* ---- JSON lines ---------------------------------------------------------- */

struct cnt_jsonl {
	char *scratch;
	size_t scap;
	cnt_slice *keys, *vals, *sorted;
	size_t acap;
};

/* Byte classes inside a JSON string: 0 ordinary, 1 '"', 2 '\\', 3 control,
 * 4 non-ASCII. */
static const unsigned char str_class[256] = {
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
	4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
};

struct jp {
	const unsigned char *s;
	size_t n, i;
	cnt_jsonl *p;
	cnt_raw_problem *pb;
	char *scratch;		/* where escaped strings are decoded: at least n bytes */
	size_t scr;		/* bytes of it in use */
	size_t nattrs;
};

cnt_jsonl *cnt_jsonl_new(void)
{
	return calloc(1, sizeof(cnt_jsonl));
}

size_t cnt_jsonl_held(const cnt_jsonl *p)
{
	return sizeof(*p) + p->scap + 3 * p->acap * sizeof(cnt_slice);
}

void cnt_jsonl_free(cnt_jsonl *p)
{
	if (p == NULL)
		return;
	free(p->scratch);
	free(p->keys);
	free(p->vals);
	free(p->sorted);
	free(p);
}

static int jp_fail(struct jp *j, size_t at, const char *what)
{
	char found[32];

	if (at >= j->n)
		snprintf(found, sizeof(found), "end of line");
	else if (j->s[at] >= 0x20 && j->s[at] < 0x7f)
		snprintf(found, sizeof(found), "'%c'", j->s[at]);
	else
		snprintf(found, sizeof(found), "byte 0x%02x", j->s[at]);
	problem(j->pb, CNT_RAW_MALFORMED, NULL, "%s at column %zu, found %s", what, at + 1, found);
	return -1;
}

/* Records a BAD_FIELD problem unless one is already recorded. */
static void jp_bad(struct jp *j, int f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void jp_bad(struct jp *j, int f, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	if (j->pb->status != CNT_RAW_OK)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	problem(j->pb, CNT_RAW_BAD_FIELD, field_names[f], "field '%s': %s", field_names[f], what);
}

static inline void jp_ws(struct jp *j)
{
	if (j->i < j->n && j->s[j->i] > ' ')
		return;
	while (j->i < j->n) {
		unsigned char c = j->s[j->i];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		j->i++;
	}
}

static int hex4(const unsigned char *s, unsigned *v)
{
	unsigned r = 0;

	for (int k = 0; k < 4; k++) {
		unsigned c = s[k], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			return -1;
		r = r << 4 | d;
	}
	*v = r;
	return 0;
}

/* The string whose opening quote is at j->i, decoded from position i where
 * the first backslash is; start is the first content byte. */
static int jp_string_slow(struct jp *j, size_t start, size_t i, cnt_slice *out)
{
	const unsigned char *s = j->s;
	size_t n = j->n;
	char *dst = j->scratch + j->scr;
	size_t o = i - start;

	memcpy(dst, s + start, o);
	for (;;) {
		unsigned char c;

		if (i >= n)
			return jp_fail(j, start - 1, "unterminated string starting");
		c = s[i];
		if (c == '"')
			break;
		if (c == '\\') {
			unsigned cp, lo;

			if (i + 1 >= n)
				return jp_fail(j, i + 1, "unterminated escape");
			switch (s[i + 1]) {
			case '"': dst[o++] = '"'; i += 2; continue;
			case '\\': dst[o++] = '\\'; i += 2; continue;
			case '/': dst[o++] = '/'; i += 2; continue;
			case 'b': dst[o++] = '\b'; i += 2; continue;
			case 'f': dst[o++] = '\f'; i += 2; continue;
			case 'n': dst[o++] = '\n'; i += 2; continue;
			case 'r': dst[o++] = '\r'; i += 2; continue;
			case 't': dst[o++] = '\t'; i += 2; continue;
			case 'u': break;
			default: return jp_fail(j, i + 1, "invalid escape");
			}
			if (n - i < 6 || hex4(s + i + 2, &cp) != 0)
				return jp_fail(j, i, "invalid \\u escape");
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return jp_fail(j, i, "lone low surrogate in \\u escape");
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (n - i < 12 || s[i + 6] != '\\' || s[i + 7] != 'u' ||
				    hex4(s + i + 8, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
					return jp_fail(j, i, "high surrogate not followed by a low surrogate");
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				i += 12;
			} else {
				i += 6;
			}
			if (cp < 0x80) {
				dst[o++] = (char)cp;
			} else if (cp < 0x800) {
				dst[o++] = (char)(0xc0 | cp >> 6);
				dst[o++] = (char)(0x80 | (cp & 0x3f));
			} else if (cp < 0x10000) {
				dst[o++] = (char)(0xe0 | cp >> 12);
				dst[o++] = (char)(0x80 | (cp >> 6 & 0x3f));
				dst[o++] = (char)(0x80 | (cp & 0x3f));
			} else {
				dst[o++] = (char)(0xf0 | cp >> 18);
				dst[o++] = (char)(0x80 | (cp >> 12 & 0x3f));
				dst[o++] = (char)(0x80 | (cp >> 6 & 0x3f));
				dst[o++] = (char)(0x80 | (cp & 0x3f));
			}
		} else if (c < 0x20) {
			return jp_fail(j, i, "control character in string");
		} else if (c >= 0x80) {
			size_t k = utf8_seq(s + i, n - i);
			if (k == 0)
				return jp_fail(j, i, "invalid UTF-8 in string");
			memcpy(dst + o, s + i, k);
			o += k;
			i += k;
		} else {
			dst[o++] = (char)c;
			i++;
		}
	}
	out->p = dst;
	out->n = o;
	j->scr += o;
	j->i = i + 1;
	return 0;
}

#define SWAR(b) (UINT64_C(0x0101010101010101) * (b))

/* The first byte from i on that is '"', '\\', a control character or
 * non-ASCII (str_class not 0), or n. */
static size_t plain_run(const unsigned char *s, size_t i, size_t n)
{
#ifdef __SSE2__
	/* Sixteen bytes at a time: a signed byte below 0x20 is a control
	 * character or non-ASCII. */
	while (n - i >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
			_mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))), _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)));
		unsigned bits = (unsigned)_mm_movemask_epi8(m);

		if (bits != 0)
			return i + (size_t)__builtin_ctz(bits);
		i += 16;
	}
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* Eight bytes at a time (the lowest flagged byte is exact). */
	while (n - i >= 8) {
		uint64_t x, m;
		memcpy(&x, s + i, 8);
		m = ((x ^ SWAR(0x22)) - SWAR(0x01)) & ~(x ^ SWAR(0x22));
		m |= ((x ^ SWAR(0x5c)) - SWAR(0x01)) & ~(x ^ SWAR(0x5c));
		m |= (x - SWAR(0x20)) & ~x;
		m = (m | x) & SWAR(0x80);
		if (m != 0)
			return i + (size_t)__builtin_ctzll(m) / 8;
		i += 8;
	}
#endif
	while (i < n && str_class[s[i]] == 0)
		i++;
	return i;
}

/* jp_string() where its look at the first 32 bytes did not find the
 * string: the whole string again, from its first byte. */
static int jp_string_scan(struct jp *j, cnt_slice *out)
{
	const unsigned char *s = j->s;
	size_t n = j->n, start = j->i + 1, i = start;

	for (;;) {
		unsigned char cls;

		i = plain_run(s, i, n);
		if (i >= n)
			return jp_fail(j, start - 1, "unterminated string starting");
		cls = str_class[s[i]];
		if (cls == 1) {
			out->p = (const char *)s + start;
			out->n = i - start;
			j->i = i + 1;
			return 0;
		}
		if (cls == 2)
			return jp_string_slow(j, start, i, out);
		if (cls == 3)
			return jp_fail(j, i, "control character in string");
		{
			size_t k = utf8_seq(s + i, n - i);
			if (k == 0)
				return jp_fail(j, i, "invalid UTF-8 in string");
			i += k;
		}
	}
}

/* The string whose opening quote is at j->i.  Most strings of an event
 * are short and plain: when the first of the next 32 bytes that needs a
 * look is the closing quote, that is the whole string, found without a
 * call, a loop or a table (a third of parsing went to the call). */
static inline int jp_string(struct jp *j, cnt_slice *out)
{
#ifdef __SSE2__
	const unsigned char *s = j->s;
	size_t start = j->i + 1;

	if (j->n - start >= 32) {
		const __m128i quote = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), sp = _mm_set1_epi8(0x20);
		__m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)(s + start));
		__m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(s + start + 16));
		__m128i q0 = _mm_cmpeq_epi8(x0, quote), q1 = _mm_cmpeq_epi8(x1, quote);
		uint32_t q = (uint32_t)_mm_movemask_epi8(q0) | (uint32_t)_mm_movemask_epi8(q1) << 16;
		uint32_t f = q |
			(uint32_t)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x0, bs), _mm_cmplt_epi8(x0, sp))) |
			(uint32_t)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x1, bs), _mm_cmplt_epi8(x1, sp))) << 16;

		if ((f & (0u - f) & q) != 0) {   /* the lowest flagged byte is a quote */
			size_t len = (size_t)__builtin_ctz(f);

			out->p = (const char *)s + start;
			out->n = len;
			j->i = start + len + 1;
			return 0;
		}
	}
#endif
	return jp_string_scan(j, out);
}

/* A JSON number at j->i.  *isint: no fraction or exponent; *ovf: an integer
 * outside int64. */
static int jp_number(struct jp *j, int64_t *v, int *isint, int *ovf)
{
	const unsigned char *s = j->s;
	size_t n = j->n, i = j->i;
	uint64_t mag = 0, lim = (uint64_t)INT64_MAX;
	int neg = 0;

	*ovf = 0;
	*isint = 1;
	if (s[i] == '-') {
		neg = 1;
		lim = UINT64_C(9223372036854775808);
		i++;
	}
	if (i >= n || s[i] < '0' || s[i] > '9')
		return jp_fail(j, i, "invalid number: expected a digit");
	if (s[i] == '0') {
		i++;
		if (i < n && s[i] >= '0' && s[i] <= '9')
			return jp_fail(j, i, "invalid number: leading zero");
	} else {
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			unsigned d = s[i] - '0';
			if (mag > (lim - d) / 10)
				*ovf = 1;
			else
				mag = mag * 10 + d;
			i++;
		}
	}
	if (i < n && s[i] == '.') {
		*isint = 0;
		i++;
		if (i >= n || s[i] < '0' || s[i] > '9')
			return jp_fail(j, i, "invalid number: expected a digit after '.'");
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		*isint = 0;
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n || s[i] < '0' || s[i] > '9')
			return jp_fail(j, i, "invalid number: expected a digit in the exponent");
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	*v = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	j->i = i;
	return 0;
}

static int jp_literal(struct jp *j)
{
	static const char *const lits[3] = {"true", "false", "null"};
	const char *lit = j->s[j->i] == 't' ? lits[0] : j->s[j->i] == 'f' ? lits[1] : lits[2];
	size_t k = strlen(lit);

	if (j->n - j->i < k || memcmp(j->s + j->i, lit, k) != 0)
		return jp_fail(j, j->i, "invalid literal");
	j->i += k;
	return 0;
}

static const char *json_type(unsigned char c)
{
	switch (c) {
	case '"': return "a string";
	case '{': return "an object";
	case '[': return "an array";
	case 't': case 'f': return "a boolean";
	case 'n': return "null";
	default: return "a number";
	}
}

/* Skips any JSON value at j->i (whitespace already skipped); depth is the
 * number of containers around it. */
static int jp_skip(struct jp *j, int depth)
{
	cnt_slice tmp;
	int64_t v;
	int isint, ovf;

	if (j->i >= j->n)
		return jp_fail(j, j->i, "expected a value");
	switch (j->s[j->i]) {
	case '"':
		return jp_string(j, &tmp);
	case 't': case 'f': case 'n':
		return jp_literal(j);
	case '-': case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		return jp_number(j, &v, &isint, &ovf);
	case '{': case '[': {
		unsigned char close = j->s[j->i] == '{' ? '}' : ']';

		if (depth >= MAX_DEPTH)
			return jp_fail(j, j->i, "nesting deeper than 64 levels");
		j->i++;
		jp_ws(j);
		if (j->i < j->n && j->s[j->i] == close) {
			j->i++;
			return 0;
		}
		for (;;) {
			if (close == '}') {
				if (j->i >= j->n || j->s[j->i] != '"')
					return jp_fail(j, j->i, "expected a string key");
				if (jp_string(j, &tmp) != 0)
					return -1;
				jp_ws(j);
				if (j->i >= j->n || j->s[j->i] != ':')
					return jp_fail(j, j->i, "expected ':'");
				j->i++;
				jp_ws(j);
			}
			if (jp_skip(j, depth + 1) != 0)
				return -1;
			jp_ws(j);
			if (j->i < j->n && j->s[j->i] == ',') {
				j->i++;
				jp_ws(j);
				continue;
			}
			if (j->i < j->n && j->s[j->i] == close) {
				j->i++;
				return 0;
			}
			return jp_fail(j, j->i, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
		}
	}
	default:
		return jp_fail(j, j->i, "expected a value");
	}
}

static int slice_cmp(const void *a, const void *b)
{
	const cnt_slice *x = a, *y = b;
	size_t k = x->n < y->n ? x->n : y->n;
	int c = memcmp(x->p, y->p, k);

	if (c != 0)
		return c;
	return x->n < y->n ? -1 : x->n > y->n;
}

/* Returns a key that appears twice among keys[0..n), or NULL. */
static const cnt_slice *dup_key(const cnt_slice *keys, size_t n, cnt_slice *sorted)
{
	if (n <= 16) {
		for (size_t a = 1; a < n; a++)
			for (size_t b = 0; b < a; b++)
				if (keys[a].n == keys[b].n && memcmp(keys[a].p, keys[b].p, keys[a].n) == 0)
					return &keys[a];
		return NULL;
	}
	memcpy(sorted, keys, n * sizeof(*keys));
	qsort(sorted, n, sizeof(*sorted), slice_cmp);
	for (size_t a = 1; a < n; a++)
		if (slice_cmp(&sorted[a - 1], &sorted[a]) == 0)
			return &sorted[a];
	return NULL;
}

static int attrs_grow(cnt_jsonl *p, size_t need)
{
	size_t cap = p->acap ? p->acap : 16;
	cnt_slice *k, *v, *s;

	while (cap < need)
		cap *= 2;
	if (cap == p->acap)
		return 0;
	k = realloc(p->keys, cap * sizeof(*k));
	if (k == NULL)
		return -1;
	p->keys = k;
	v = realloc(p->vals, cap * sizeof(*v));
	if (v == NULL)
		return -1;
	p->vals = v;
	s = realloc(p->sorted, cap * sizeof(*s));
	if (s == NULL)
		return -1;
	p->sorted = s;
	p->acap = cap;
	return 0;
}

/* attrs: an object of strings, at j->i == '{'. */
static int jp_attrs(struct jp *j)
{
	cnt_jsonl *p = j->p;
	const cnt_slice *dup;
	char sn[48];

	j->i++;
	jp_ws(j);
	if (j->i < j->n && j->s[j->i] == '}') {
		j->i++;
		return 0;
	}
	for (;;) {
		cnt_slice *key;

		if (j->nattrs == p->acap && attrs_grow(p, j->nattrs + 1) != 0) {
			problem(j->pb, CNT_RAW_NOMEM, NULL, "out of memory");
			return -1;
		}
		/* decoded straight into the arrays: no copy through the stack */
		key = &p->keys[j->nattrs];
		if (j->i >= j->n || j->s[j->i] != '"')
			return jp_fail(j, j->i, "expected a string key");
		if (jp_string(j, key) != 0)
			return -1;
		jp_ws(j);
		if (j->i >= j->n || j->s[j->i] != ':')
			return jp_fail(j, j->i, "expected ':'");
		j->i++;
		jp_ws(j);
		if (j->i < j->n && j->s[j->i] == '"') {
			if (jp_string(j, &p->vals[j->nattrs]) != 0)
				return -1;
			j->nattrs++;
		} else {
			if (j->i < j->n)
				jp_bad(j, F_ATTRS, "value of '%s' is %s, expected a string",
					snippet(sn, sizeof(sn), key->p, key->n), json_type(j->s[j->i]));
			if (jp_skip(j, 2) != 0)
				return -1;
		}
		jp_ws(j);
		if (j->i < j->n && j->s[j->i] == ',') {
			j->i++;
			jp_ws(j);
			continue;
		}
		if (j->i < j->n && j->s[j->i] == '}') {
			j->i++;
			break;
		}
		return jp_fail(j, j->i, "expected ',' or '}'");
	}
	dup = dup_key(p->keys, j->nattrs, p->sorted);
	if (dup != NULL)
		jp_bad(j, F_ATTRS, "key '%s' appears twice", snippet(sn, sizeof(sn), dup->p, dup->n));
	return 0;
}

/* The value of known field f at j->i (whitespace skipped, not at the end). */
static int jp_field(struct jp *j, int f, cnt_raw_event *ev)
{
	unsigned char c = j->s[j->i];
	cnt_slice str, *slot;
	int64_t v;
	int isint, ovf;
	char sn[48];

	if (c == 'n')	/* null, or something malformed starting with n */
		return jp_literal(j);
	switch (f) {
	case F_DELTA:
		if (c != '-' && (c < '0' || c > '9'))
			break;
		if (jp_number(j, &v, &isint, &ovf) != 0)
			return -1;
		if (!isint)
			jp_bad(j, f, "expected an integer, got a number with a fraction or exponent");
		else if (ovf)
			jp_bad(j, f, "integer out of the signed 64-bit range");
		ev->has_delta = 1;
		ev->delta = v;
		return 0;
	case F_EVENT_TIME:
		if (c == '"') {
			if (jp_string(j, &str) != 0)
				return -1;
			if (cnt_time_parse_rfc3339(str.p, str.n, &ev->event_time_ms) != 0)
				jp_bad(j, f, "expected an RFC 3339 timestamp with offset or epoch milliseconds, got \"%s\"",
					snippet(sn, sizeof(sn), str.p, str.n));
			ev->has_event_time = 1;
			return 0;
		}
		if (c != '-' && (c < '0' || c > '9'))
			break;
		if (jp_number(j, &v, &isint, &ovf) != 0)
			return -1;
		if (!isint)
			jp_bad(j, f, "expected integer epoch milliseconds, got a number with a fraction or exponent");
		else if (ovf)
			jp_bad(j, f, "integer out of the signed 64-bit range");
		ev->has_event_time = 1;
		ev->event_time_ms = v;
		return 0;
	case F_ORIGIN:
		if (c != '"')
			break;
		if (jp_string(j, &str) != 0)
			return -1;
		if (cnt_raw_parse_origin(str.p, str.n, &ev->origin) != 0)
			jp_bad(j, f, "expected \"backend\" or \"client\", got \"%s\"",
				snippet(sn, sizeof(sn), str.p, str.n));
		ev->has_origin = 1;
		return 0;
	case F_ATTRS:
		if (c != '{')
			break;
		return jp_attrs(j);
	default:
		if (c != '"')
			break;
		slot = string_slot(ev, f);
		return jp_string(j, slot);
	}
	jp_bad(j, f, "expected %s, got %s",
		f == F_DELTA ? "an integer" : f == F_EVENT_TIME ? "a timestamp string or epoch milliseconds" :
		f == F_ATTRS ? "an object of strings" : "a string", json_type(c));
	return jp_skip(j, 1);
}

static cnt_raw_status jp_object(struct jp *j, cnt_raw_event *ev)
{
	unsigned seen = 0;

	jp_ws(j);
	if (j->i >= j->n) {
		problem(j->pb, CNT_RAW_MALFORMED, NULL, "empty line");
		return CNT_RAW_MALFORMED;
	}
	if (j->s[j->i] != '{') {
		jp_fail(j, j->i, "expected '{'");
		return CNT_RAW_MALFORMED;
	}
	j->i++;
	jp_ws(j);
	if (j->i < j->n && j->s[j->i] == '}') {
		j->i++;
	} else {
		for (;;) {
			cnt_slice key;
			int f;

			if (j->i >= j->n || j->s[j->i] != '"')
				goto malformed_at;
			if (jp_string(j, &key) != 0)
				return CNT_RAW_MALFORMED;
			jp_ws(j);
			if (j->i >= j->n || j->s[j->i] != ':') {
				jp_fail(j, j->i, "expected ':'");
				return CNT_RAW_MALFORMED;
			}
			j->i++;
			jp_ws(j);
			if (j->i >= j->n) {
				jp_fail(j, j->i, "expected a value");
				return CNT_RAW_MALFORMED;
			}
			f = field_lookup(key.p, key.n);
			if (f == F_IGNORED) {
				if (jp_skip(j, 1) != 0)
					return CNT_RAW_MALFORMED;
			} else if (seen & (1u << f)) {
				if (j->pb->status == CNT_RAW_OK)
					problem(j->pb, CNT_RAW_BAD_FIELD, field_names[f],
						"field '%s' appears twice", field_names[f]);
				if (jp_skip(j, 1) != 0)
					return CNT_RAW_MALFORMED;
			} else {
				seen |= 1u << f;
				if (jp_field(j, f, ev) != 0)
					return CNT_RAW_MALFORMED;
			}
			jp_ws(j);
			if (j->i < j->n && j->s[j->i] == ',') {
				j->i++;
				jp_ws(j);
				continue;
			}
			if (j->i < j->n && j->s[j->i] == '}') {
				j->i++;
				break;
			}
			jp_fail(j, j->i, "expected ',' or '}'");
			return CNT_RAW_MALFORMED;
		}
	}
	jp_ws(j);
	if (j->i < j->n) {
		jp_fail(j, j->i, "trailing characters after the object");
		return CNT_RAW_MALFORMED;
	}
	return j->pb->status;

malformed_at:
	jp_fail(j, j->i, "expected a string key");
	return CNT_RAW_MALFORMED;
}

static cnt_raw_status parse(cnt_jsonl *p, const char *line, size_t n, char *scratch,
	cnt_raw_event *ev, cnt_raw_problem *pb)
{
	struct jp j;
	cnt_raw_status st;

	memset(ev, 0, sizeof(*ev));
	pb->status = CNT_RAW_OK;
	pb->field = NULL;
	pb->msg[0] = '\0';
	if (n > 0 && line[n - 1] == '\r')
		n--;
	if (scratch == NULL) {
		if (n > p->scap) {
			size_t cap = p->scap ? p->scap : 256;
			char *s;
			while (cap < n)
				cap *= 2;
			s = realloc(p->scratch, cap);
			if (s == NULL) {
				problem(pb, CNT_RAW_NOMEM, NULL, "out of memory");
				return CNT_RAW_NOMEM;
			}
			p->scratch = s;
			p->scap = cap;
		}
		scratch = p->scratch;
	}
	j.s = (const unsigned char *)line;
	j.n = n;
	j.i = 0;
	j.p = p;
	j.pb = pb;
	j.scratch = scratch;
	j.scr = 0;
	j.nattrs = 0;
	st = jp_object(&j, ev);
	if (pb->status == CNT_RAW_NOMEM)
		st = CNT_RAW_NOMEM;   /* jp_object() ended as on a malformed line */
	ev->nattrs = j.nattrs;
	ev->attr_keys = p->keys;
	ev->attr_vals = p->vals;
	return st;
}

cnt_raw_status cnt_jsonl_parse(cnt_jsonl *p, const char *line, size_t n,
	cnt_raw_event *ev, cnt_raw_problem *pb)
{
	return parse(p, line, n, NULL, ev, pb);
}

cnt_raw_status cnt_jsonl_parse_into(cnt_jsonl *p, const char *line, size_t n, char *scratch,
	cnt_raw_event *ev, cnt_raw_problem *pb)
{
	return parse(p, line, n, scratch, ev, pb);
}

/* ---- CSV ---------------------------------------------------------------- */

struct cnt_csvin {
	struct csv_parser csv;
	uint64_t line;		/* physical line of the next byte */
	size_t col;		/* its 0-based byte column */
	uint64_t row_line;	/* line on which the current row started */
	int skip_line;		/* after a row error: discard up to the next line end */
	int pending_cr;		/* the last byte was '\r': a line end unless '\n' follows */
	int bol;		/* the next byte begins a line */
	int pending;		/* a row error waits for the rest of its line */
	char pending_msg[200];
	int have_header;
	size_t ncols;
	int *colmap;		/* per column: F_*, F_IGNORED or F_ATTR_COLUMN */
	cnt_buf names;		/* header cells, back to back */
	size_t *name_off, *name_len;
	cnt_buf cells;		/* current row's cells, back to back */
	const char *inl;	/* or, split by split_row, the line they are in */
	size_t inlen;
	size_t *cell_off, *cell_len;
	size_t ncells, cellcap;
	cnt_buf raw;		/* current row's text as read */
	cnt_buf enc;		/* current row re-encoded */
	const char *same;	/* or its line, when that is the same text */
	size_t samen;
	cnt_slice *akeys, *avals;
	/* during one feed/finish call */
	cnt_csvin_cb cb;
	void *ctx;
	cnt_err *err;
	int stop;		/* nonzero: stop and return this */
};

#define CSV_OPTS (CSV_STRICT | CSV_STRICT_FINI)

cnt_csvin *cnt_csvin_new(void)
{
	cnt_csvin *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	csv_init(&r->csv, CSV_OPTS);
	csv_set_blk_size(&r->csv, 16384);
	r->line = 1;
	r->row_line = 1;
	r->bol = 1;
	return r;
}

void cnt_csvin_free(cnt_csvin *r)
{
	if (r == NULL)
		return;
	csv_free(&r->csv);
	free(r->colmap);
	cnt_buf_release(&r->names);
	free(r->name_off);
	free(r->name_len);
	cnt_buf_release(&r->cells);
	free(r->cell_off);
	free(r->cell_len);
	cnt_buf_release(&r->raw);
	cnt_buf_release(&r->enc);
	free(r->akeys);
	free(r->avals);
	free(r);
}

uint64_t cnt_csvin_line(const cnt_csvin *r)
{
	return r->line;
}

static void csv_oom(cnt_csvin *r)
{
	if (r->stop == 0)
		r->stop = cnt_err_oom(r->err, "reading CSV at line %llu", (unsigned long long)r->row_line);
}

/* Room for one more cell; 0, or -1 after csv_oom(). */
static int cell_room(cnt_csvin *r)
{
	if (r->ncells == r->cellcap) {
		size_t cap = r->cellcap ? r->cellcap * 2 : 32;
		size_t *o = realloc(r->cell_off, cap * sizeof(*o)), *l;
		if (o == NULL)
			return csv_oom(r), -1;
		r->cell_off = o;
		l = realloc(r->cell_len, cap * sizeof(*l));
		if (l == NULL)
			return csv_oom(r), -1;
		r->cell_len = l;
		r->cellcap = cap;
	}
	return 0;
}

static void on_cell(void *cell, size_t len, void *data)
{
	cnt_csvin *r = data;

	if (r->stop || cell_room(r) != 0)
		return;
	r->cell_off[r->ncells] = r->cells.len;
	r->cell_len[r->ncells] = len;
	r->ncells++;
	if (len > 0 && cnt_buf_append(&r->cells, cell, len) != 0)
		csv_oom(r);
}

/* A buffer's bytes; "" while it has none, so that offsets and zero-length
 * comparisons never meet a NULL pointer (a header of empty names, ",",
 * leaves both buffers unallocated). */
static const char *buf_text(const cnt_buf *b)
{
	return b->p ? (const char *)b->p : "";
}

/* What the current row's cell offsets count from, and its length. */
static const char *cells_text(const cnt_csvin *r, size_t *len)
{
	if (r->inl != NULL) {
		*len = r->inlen;
		return r->inl;
	}
	*len = r->cells.len;
	return buf_text(&r->cells);
}

static void row_reset(cnt_csvin *r)
{
	r->ncells = 0;
	r->cells.len = 0;
}

static void header_row(cnt_csvin *r)
{
	const char *base, *text;
	size_t textlen;

	if (r->ncells > CSV_MAX_COLUMNS) {
		r->stop = cnt_err_set(r->err, "line %llu: CSV header has %zu columns, more than %d",
			(unsigned long long)r->row_line, r->ncells, CSV_MAX_COLUMNS);
		return;
	}
	r->ncols = r->ncells;
	r->colmap = calloc(r->ncols ? r->ncols : 1, sizeof(*r->colmap));
	r->name_off = calloc(r->ncols ? r->ncols : 1, sizeof(*r->name_off));
	r->name_len = calloc(r->ncols ? r->ncols : 1, sizeof(*r->name_len));
	r->akeys = calloc(r->ncols ? r->ncols : 1, sizeof(*r->akeys));
	r->avals = calloc(r->ncols ? r->ncols : 1, sizeof(*r->avals));
	if (!r->colmap || !r->name_off || !r->name_len || !r->akeys || !r->avals ||
	    (text = cells_text(r, &textlen), cnt_buf_append(&r->names, text, textlen) != 0))
		return csv_oom(r);
	base = buf_text(&r->names);
	for (size_t c = 0; c < r->ncols; c++) {
		size_t off = r->cell_off[c], len = r->cell_len[c];
		const char *name = base + off;

		if (c == 0 && len >= 3 && memcmp(name, "\xef\xbb\xbf", 3) == 0) {
			off += 3;
			len -= 3;
			name += 3;
		}
		r->name_off[c] = off;
		r->name_len[c] = len;
		for (size_t d = 0; d < c; d++) {
			if (r->name_len[d] == len && memcmp(base + r->name_off[d], name, len) == 0) {
				char sn[48];
				r->stop = cnt_err_set(r->err, "line %llu: CSV header: column '%s' appears twice",
					(unsigned long long)r->row_line, snippet(sn, sizeof(sn), name, len));
				return;
			}
		}
		if (len > 6 && memcmp(name, "attrs.", 6) == 0) {
			r->colmap[c] = F_ATTR_COLUMN;
		} else {
			int f = field_lookup(name, len);
			r->colmap[c] = f == F_ATTRS ? F_IGNORED : f;
		}
	}
	r->have_header = 1;
}

/* Bytes that make a cell quoted anywhere in it */
static const unsigned char csv_special[256] = {['\n'] = 1, ['\r'] = 1, ['"'] = 1, [','] = 1};

/* Re-encodes the current row as one CSV record into r->enc. */
static int encode_row(cnt_csvin *r)
{
	size_t need = r->ncells + 1, textlen;
	const char *base = cells_text(r, &textlen);
	unsigned char *o;

	for (size_t c = 0; c < r->ncells; c++)
		need += 2 * r->cell_len[c] + 2;
	r->enc.len = 0;
	if (cnt_buf_reserve(&r->enc, need) != 0)
		return -1;
	o = r->enc.p;
	for (size_t c = 0; c < r->ncells; c++) {
		const char *s = base + r->cell_off[c];
		size_t len = r->cell_len[c];
		int quote = len > 0 && (s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' || s[len - 1] == '\t');

		for (size_t k = 0; k < len && !quote; k++)
			quote = csv_special[(unsigned char)s[k]];
		if (c > 0)
			*o++ = ',';
		if (!quote) {
			if (len > 0)
				memcpy(o, s, len);
			o += len;
			continue;
		}
		o += csv_write(o, 2 * len + 2, s, len);
	}
	*o = '\0';
	r->enc.len = (size_t)(o - r->enc.p);
	return 0;
}

static void csv_bad(cnt_raw_problem *pb, int f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void csv_bad(cnt_raw_problem *pb, int f, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	if (pb->status != CNT_RAW_OK)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	problem(pb, CNT_RAW_BAD_FIELD, field_names[f], "field '%s': %s", field_names[f], what);
}

static void data_row(cnt_csvin *r)
{
	cnt_raw_event ev;
	cnt_raw_problem pb;
	char sn[48];
	size_t textlen;
	const char *base = cells_text(r, &textlen);
	int rc;

	memset(&ev, 0, sizeof(ev));
	pb.status = CNT_RAW_OK;
	pb.field = NULL;
	pb.msg[0] = '\0';
	ev.attr_keys = r->akeys;
	ev.attr_vals = r->avals;
	if (r->ncells != r->ncols) {
		problem(&pb, CNT_RAW_MALFORMED, NULL, "row has %zu cells, the header has %zu",
			r->ncells, r->ncols);
	} else {
		for (size_t c = 0; c < r->ncells; c++) {
			const char *s = base + r->cell_off[c];
			size_t len = r->cell_len[c];
			int f = r->colmap[c];

			if (len == 0 || f == F_IGNORED)
				continue;
			switch (f) {
			case F_DELTA:
				if (cnt_raw_parse_int64(s, len, &ev.delta) != 0)
					csv_bad(&pb, f, "expected an integer, got \"%s\"", snippet(sn, sizeof(sn), s, len));
				ev.has_delta = 1;
				break;
			case F_EVENT_TIME:
				if (cnt_raw_parse_event_time(s, len, &ev.event_time_ms) != 0)
					csv_bad(&pb, f, "expected an RFC 3339 timestamp with offset or epoch milliseconds, got \"%s\"",
						snippet(sn, sizeof(sn), s, len));
				ev.has_event_time = 1;
				break;
			case F_ORIGIN:
				if (cnt_raw_parse_origin(s, len, &ev.origin) != 0)
					csv_bad(&pb, f, "expected \"backend\" or \"client\", got \"%s\"",
						snippet(sn, sizeof(sn), s, len));
				ev.has_origin = 1;
				break;
			case F_ATTR_COLUMN: {
				const char *key = buf_text(&r->names) + r->name_off[c] + 6;
				size_t klen = r->name_len[c] - 6;
				if (!utf8_valid(key, klen) || !utf8_valid(s, len))
					csv_bad(&pb, F_ATTRS, "attrs.%s: invalid UTF-8", snippet(sn, sizeof(sn), key, klen));
				r->akeys[ev.nattrs].p = key;
				r->akeys[ev.nattrs].n = klen;
				r->avals[ev.nattrs].p = s;
				r->avals[ev.nattrs].n = len;
				ev.nattrs++;
				break;
			}
			default: {
				cnt_slice *slot = string_slot(&ev, f);
				if (!utf8_valid(s, len))
					csv_bad(&pb, f, "invalid UTF-8");
				slot->p = s;
				slot->n = len;
				break;
			}
			}
		}
	}
	if (r->same != NULL)
		rc = r->cb(r->ctx, r->row_line, &ev, &pb, r->same, r->samen);
	else if (encode_row(r) != 0)
		return csv_oom(r);
	else
		rc = r->cb(r->ctx, r->row_line, &ev, &pb, (const char *)r->enc.p, r->enc.len);
	if (rc != 0)
		r->stop = rc;
}

static void on_row(int term, void *data)
{
	cnt_csvin *r = data;

	(void)term;
	if (r->stop)
		return;
	if (!r->have_header)
		header_row(r);
	else
		data_row(r);
	row_reset(r);
}

static int csv_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* A line of n bytes (its end not counted) without a quote, read from a
 * row's start, split into cells and delivered as libcsv would do it with
 * CSV_STRICT: cells end at commas and lose the spaces and tabs at their
 * ends, and a line of nothing else is no row.  The same rows, a byte at
 * a time through libcsv, are what fuzz_csv.c and test_rawevent check it
 * against; libcsv's state stays "row not begun", as it would. */
static void split_row(cnt_csvin *r, const char *p, size_t n)
{
	size_t i = 0;
	int same;

	while (i < n && csv_blank(p[i]))
		i++;
	if (i == n)
		return;
	same = i == 0;
	for (;;) {
		const char *comma = memchr(p + i, ',', n - i);
		size_t end = comma ? (size_t)(comma - p) : n, b = i, e = end;

		while (b < e && csv_blank(p[b]))
			b++;
		while (e > b && csv_blank(p[e - 1]))
			e--;
		same &= b == i && e == end;
		if (cell_room(r) != 0)
			return;
		r->cell_off[r->ncells] = b;
		r->cell_len[r->ncells] = e - b;
		r->ncells++;
		if (comma == NULL)
			break;
		i = end + 1;
	}
	/* Its cells need no quotes (no quote, comma, CR or LF in them, no
	 * space or tab at their ends): written back, they are the line
	 * itself when nothing was cut from them. */
	if (same) {
		r->same = p;
		r->samen = n;
	}
	r->inl = p;
	r->inlen = n;
	on_row((unsigned char)p[n], r);
	r->same = NULL;
	r->inl = NULL;
}

/* Reports the current row, which could not be split into cells, as
 * MALFORMED with its text as read. */
static void report_unsplit(cnt_csvin *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void report_unsplit(cnt_csvin *r, const char *fmt, ...)
{
	cnt_raw_event ev;
	cnt_raw_problem pb;
	size_t n = r->raw.len;
	va_list ap;
	int rc;

	memset(&ev, 0, sizeof(ev));
	pb.status = CNT_RAW_MALFORMED;
	pb.field = NULL;
	va_start(ap, fmt);
	vsnprintf(pb.msg, sizeof(pb.msg), fmt, ap);
	va_end(ap);
	if (!r->have_header) {
		r->stop = cnt_err_set(r->err, "line %llu: CSV header: %s", (unsigned long long)r->row_line, pb.msg);
		return;
	}
	if (n > CSV_MAX_ROW)
		n = CSV_MAX_ROW;
	while (n > 0 && (r->raw.p[n - 1] == '\n' || r->raw.p[n - 1] == '\r'))
		n--;
	rc = r->cb(r->ctx, r->row_line, &ev, &pb, r->raw.p ? (const char *)r->raw.p : "", n);
	if (rc != 0)
		r->stop = rc;
}

/* Restarts libcsv after an error; the current row's raw text is kept for
 * the report. */
static void csv_restart(cnt_csvin *r)
{
	csv_free(&r->csv);
	csv_init(&r->csv, CSV_OPTS);
	csv_set_blk_size(&r->csv, 16384);
	row_reset(r);
}

/* Reports the row error in r->pending_msg once its line is complete. */
static int report_pending(cnt_csvin *r)
{
	if (r->pending) {
		r->pending = 0;
		report_unsplit(r, "%s", r->pending_msg);
		r->raw.len = 0;
	}
	return r->stop;
}

/* A row could not be split: restart the parser and skip to the end of the
 * line (eol: the current piece already ends it).  Returns r->stop. */
static int row_error(cnt_csvin *r, int eol)
{
	csv_restart(r);
	r->pending = 1;
	if (eol)
		return report_pending(r);
	r->skip_line = 1;
	return 0;
}

/* The current row, with the piece p[0..len) about to be added, is longer
 * than CSV_MAX_ROW: reports it as MALFORMED with its first
 * CSV_OVERLONG_KEEP bytes, restarts the parser and skips to the end of
 * the line (eol: this piece ends it).  Returns r->stop. */
static int overlong_row(cnt_csvin *r, const char *p, size_t len, int eol)
{
	if (r->raw.len < CSV_OVERLONG_KEEP) {
		size_t more = CSV_OVERLONG_KEEP - r->raw.len;

		if (cnt_buf_append(&r->raw, p, len < more ? len : more) != 0) {
			csv_oom(r);
			return r->stop;
		}
	}
	if (r->raw.len > CSV_OVERLONG_KEEP)
		r->raw.len = CSV_OVERLONG_KEEP;
	report_unsplit(r, "row longer than %zu bytes", CSV_MAX_ROW);
	csv_restart(r);
	r->raw.len = 0;
	r->skip_line = !eol;
	return r->stop;
}

int cnt_csvin_feed(cnt_csvin *r, const void *data, size_t n, cnt_csvin_cb cb, void *ctx,
	cnt_err *err)
{
	const char *s = data;
	size_t pos = 0;

	if (r->stop)
		return r->stop;
	r->cb = cb;
	r->ctx = ctx;
	r->err = err;
	while (pos < n) {
		const char *nl = NULL;
		size_t len, done, lim;
		int eol = 0;

		/* Pieces end after a '\n' or '\r', so a row can only end at the
		 * end of a piece and the row's start line and raw text are exact
		 * however the caller splits its input. */
		if (r->pending_cr) {
			r->pending_cr = 0;
			if (s[pos] != '\n') {
				r->line++;
				r->col = 0;
			}
		}
		lim = n - pos < CSV_PIECE ? n - pos : CSV_PIECE;
		len = lim;
		{
			const char *lf = memchr(s + pos, '\n', lim);
			const char *cr = memchr(s + pos, '\r', lf ? (size_t)(lf - (s + pos)) : lim);

			if (cr != NULL || lf != NULL) {
				eol = 1;
				if (cr == NULL)
					nl = lf;
				len = (size_t)((cr ? cr : lf) - (s + pos)) + 1;
			}
		}
		if (r->skip_line) {
			if (r->pending && r->raw.len < CSV_MAX_ROW && cnt_buf_append(&r->raw, s + pos, len) != 0) {
				csv_oom(r);
				return r->stop;
			}
			if (eol) {
				r->skip_line = 0;
				if (report_pending(r) != 0)
					return r->stop;
			}
			goto advance;
		}
		if (r->bol && r->csv.pstate == 0) {	/* libcsv's ROW_NOT_BEGUN */
			r->row_line = r->line;
			r->raw.len = 0;
		}
		if (r->raw.len + len - (size_t)eol > CSV_MAX_ROW) {
			/* Too long, whether or not its end ever comes: rejected
			 * now, with its first bytes, and skipped to the end of the
			 * line.  (A line end that closes this piece is not counted,
			 * so the verdict does not depend on how the input is split.) */
			if (overlong_row(r, s + pos, len, eol) != 0)
				return r->stop;
			goto advance;
		}
		if (eol && r->csv.pstate == 0 && memchr(s + pos, '"', len) == NULL) {
			/* a whole row without quotes: no parse error can come of
			 * it, so its text is not kept for a report */
			split_row(r, s + pos, len - 1);
			if (r->stop)
				return r->stop;
			goto advance;
		}
		if (cnt_buf_append(&r->raw, s + pos, len) != 0) {
			csv_oom(r);
			return r->stop;
		}
		done = csv_parse(&r->csv, s + pos, len, on_cell, on_row, r);
		if (r->stop)
			return r->stop;
		if (done < len) {
			if (csv_error(&r->csv) != CSV_EPARSE) {
				csv_oom(r);
				return r->stop;
			}
			snprintf(r->pending_msg, sizeof(r->pending_msg),
				"bad quoting at line %llu column %zu: a quote inside an unquoted cell, or text after a closing quote",
				(unsigned long long)r->line, r->col + done + 1);
			if (row_error(r, eol) != 0)
				return r->stop;
		}
	advance:
		pos += len;
		r->bol = eol;
		if (nl != NULL) {
			r->line++;
			r->col = 0;
		} else {
			r->col += len;
			r->pending_cr = eol;
		}
	}
	return 0;
}

int cnt_csvin_finish(cnt_csvin *r, cnt_csvin_cb cb, void *ctx, cnt_err *err)
{
	if (r->stop)
		return r->stop;
	r->cb = cb;
	r->ctx = ctx;
	r->err = err;
	if (report_pending(r) != 0)
		return r->stop;
	if (csv_fini(&r->csv, on_cell, on_row, r) != 0 && r->stop == 0) {
		report_unsplit(r, "unterminated quoted cell at the end of the input");
		csv_restart(r);
	}
	return r->stop;
}
