/*
 * test_rawevent.c - the JSON-lines and CSV readers of raw events.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/rawevent.h"
#include "unit.h"

static cnt_jsonl *jp;
static cnt_raw_event ev;
static cnt_raw_problem pb;

static cnt_raw_status J(const char *line)
{
	return cnt_jsonl_parse(jp, line, strlen(line), &ev, &pb);
}

static int slice_is(cnt_slice s, const char *want)
{
	return s.p != NULL && s.n == strlen(want) && memcmp(s.p, want, s.n) == 0;
}

#define CHECK_SLICE(s, want) do { \
	if (!slice_is((s), (want))) { \
		fprintf(stderr, "%s:%d: %s is \"%.*s\", expected \"%s\"\n", __FILE__, __LINE__, #s, \
			(s).p ? (int)(s).n : 6, (s).p ? (s).p : "(null)", (want)); \
		unit_failed_checks++; \
	} \
} while (0)

/* A BAD_FIELD naming field, with a message that mentions it. */
static int bad(const char *line, const char *field)
{
	cnt_raw_status st = J(line);
	char want[64];

	snprintf(want, sizeof(want), "field '%s'", field);
	if (st != CNT_RAW_BAD_FIELD || pb.status != st || pb.field == NULL ||
	    strcmp(pb.field, field) != 0 || strstr(pb.msg, want) != pb.msg) {
		fprintf(stderr, "line %s: status %d field %s msg '%s', expected BAD_FIELD %s\n", line,
			(int)st, pb.field ? pb.field : "(null)", pb.msg, field);
		return 0;
	}
	return 1;
}

static int malformed(const char *line)
{
	cnt_raw_status st = J(line);

	if (st != CNT_RAW_MALFORMED || pb.status != st || pb.field != NULL || pb.msg[0] == '\0') {
		fprintf(stderr, "line %s: status %d msg '%s', expected MALFORMED\n", line, (int)st, pb.msg);
		return 0;
	}
	return 1;
}

static int ok(const char *line)
{
	cnt_raw_status st = J(line);

	if (st != CNT_RAW_OK) {
		fprintf(stderr, "line %s: status %d msg '%s', expected OK\n", line, (int)st, pb.msg);
		return 0;
	}
	return 1;
}

static void test_json_full_event(void)
{
	const char *line = "{\"idempotency_key\":\"k-1\",\"tenant_id\":\"acme\",\"counter_id\":\"steps\","
		"\"member_ref\":\"m42\",\"delta\":-17,\"item\":\"v9\",\"event_time\":\"2026-11-30T05:26:10.123+05:30\","
		"\"origin\":\"CLIENT\",\"subject\":\"m42\",\"signature\":\"c2ln\","
		"\"attrs\":{\"region\":\"eu\",\"device\":\"ios\"}}";

	CHECK(ok(line));
	CHECK_SLICE(ev.idempotency_key, "k-1");
	CHECK_SLICE(ev.tenant_id, "acme");
	CHECK_SLICE(ev.counter_id, "steps");
	CHECK_SLICE(ev.member_ref, "m42");
	CHECK_SLICE(ev.item, "v9");
	CHECK_SLICE(ev.subject, "m42");
	CHECK_SLICE(ev.signature, "c2ln");
	CHECK(ev.has_delta && ev.delta == -17);
	CHECK(ev.has_event_time);
	CHECK_EQ_INT(ev.event_time_ms, INT64_C(1795996570123));
	CHECK(ev.has_origin && ev.origin == CNT_ORIGIN_CLIENT);
	CHECK_EQ_INT(ev.nattrs, 2);
	CHECK_SLICE(ev.attr_keys[0], "region");
	CHECK_SLICE(ev.attr_vals[0], "eu");
	CHECK_SLICE(ev.attr_keys[1], "device");
	CHECK_SLICE(ev.attr_vals[1], "ios");
	/* strings without escapes are slices of the line */
	CHECK(ev.tenant_id.p > line && ev.tenant_id.p < line + strlen(line));
	CHECK_EQ_INT(pb.status, CNT_RAW_OK);
}

static void test_json_absent_and_null(void)
{
	CHECK(ok("{}"));
	CHECK(ev.idempotency_key.p == NULL && ev.item.p == NULL && !ev.has_delta &&
		!ev.has_event_time && !ev.has_origin && ev.nattrs == 0);
	CHECK(ok("{\"tenant_id\":null,\"delta\":null,\"event_time\":null,\"origin\":null,\"attrs\":null,\"item\":null}"));
	CHECK(ev.tenant_id.p == NULL && !ev.has_delta && !ev.has_event_time && !ev.has_origin &&
		ev.nattrs == 0 && ev.item.p == NULL);
	/* an empty string is present */
	CHECK(ok("{\"item\":\"\"}"));
	CHECK(ev.item.p != NULL && ev.item.n == 0);
	CHECK(ok("{\"attrs\":{}}"));
	CHECK_EQ_INT(ev.nattrs, 0);
	CHECK(ok("{\"origin\":\"Backend\"}"));
	CHECK(ev.has_origin && ev.origin == CNT_ORIGIN_BACKEND);
	CHECK(ok("{\"origin\":\"client\"}"));
	CHECK(ev.origin == CNT_ORIGIN_CLIENT);
}

static void test_json_whitespace(void)
{
	CHECK(ok(" \t{ \"delta\" :\t5 , \"item\" : \"x\" }  \r"));
	CHECK(ev.delta == 5);
	CHECK_SLICE(ev.item, "x");
	CHECK(ok("{\"delta\":5}\r"));
	CHECK(malformed(""));
	CHECK_EQ_STR(pb.msg, "empty line");
	CHECK(malformed("  \t "));
	CHECK_EQ_STR(pb.msg, "empty line");
	CHECK(malformed("\r"));
	CHECK_EQ_STR(pb.msg, "empty line");
}

static void test_json_types(void)
{
	CHECK(bad("{\"tenant_id\":5}", "tenant_id"));
	CHECK(strstr(pb.msg, "expected a string, got a number") != NULL);
	CHECK(bad("{\"idempotency_key\":[\"a\"]}", "idempotency_key"));
	CHECK(bad("{\"counter_id\":{}}", "counter_id"));
	CHECK(bad("{\"member_ref\":true}", "member_ref"));
	CHECK(bad("{\"item\":false}", "item"));
	CHECK(bad("{\"subject\":1.5}", "subject"));
	CHECK(bad("{\"signature\":[]}", "signature"));
	CHECK(bad("{\"delta\":\"5\"}", "delta"));
	CHECK(strstr(pb.msg, "got a string") != NULL);
	CHECK(bad("{\"delta\":1.0}", "delta"));
	CHECK(bad("{\"delta\":1e3}", "delta"));
	CHECK(bad("{\"delta\":-2E+1}", "delta"));
	CHECK(bad("{\"delta\":true}", "delta"));
	CHECK(bad("{\"event_time\":true}", "event_time"));
	CHECK(bad("{\"event_time\":\"2026-02-29T00:00:00Z\"}", "event_time"));
	CHECK(strstr(pb.msg, "2026-02-29T00:00:00Z") != NULL);
	CHECK(bad("{\"event_time\":\"2026-11-30T05:26:10\"}", "event_time"));
	CHECK(bad("{\"event_time\":1.5}", "event_time"));
	CHECK(bad("{\"event_time\":{}}", "event_time"));
	CHECK(bad("{\"origin\":\"server\"}", "origin"));
	CHECK(bad("{\"origin\":1}", "origin"));
	CHECK(bad("{\"attrs\":[]}", "attrs"));
	CHECK(bad("{\"attrs\":\"region=eu\"}", "attrs"));
	CHECK(bad("{\"attrs\":{\"region\":5}}", "attrs"));
	CHECK(strstr(pb.msg, "region") != NULL);
	CHECK(bad("{\"attrs\":{\"region\":null}}", "attrs"));
	CHECK(bad("{\"attrs\":{\"a\":\"1\",\"b\":{\"c\":\"d\"}}}", "attrs"));
	/* the first bad field is reported */
	CHECK(bad("{\"delta\":\"x\",\"tenant_id\":1}", "delta"));
}

static void test_json_integers(void)
{
	CHECK(ok("{\"delta\":9223372036854775807}"));
	CHECK(ev.delta == INT64_MAX);
	CHECK(ok("{\"delta\":-9223372036854775808}"));
	CHECK(ev.delta == INT64_MIN);
	CHECK(bad("{\"delta\":9223372036854775808}", "delta"));
	CHECK(strstr(pb.msg, "64-bit") != NULL);
	CHECK(bad("{\"delta\":-9223372036854775809}", "delta"));
	CHECK(bad("{\"delta\":100000000000000000000000}", "delta"));
	CHECK(ok("{\"delta\":0}"));
	CHECK(ev.has_delta && ev.delta == 0);
	CHECK(ok("{\"delta\":-0}"));
	CHECK(ev.delta == 0);
	CHECK(malformed("{\"delta\":01}"));
	CHECK(malformed("{\"delta\":+1}"));
	CHECK(malformed("{\"delta\":-}"));
	CHECK(malformed("{\"delta\":1.}"));
	CHECK(malformed("{\"delta\":.5}"));
	CHECK(malformed("{\"delta\":1e}"));
	CHECK(malformed("{\"delta\":0x10}"));
	CHECK(ok("{\"event_time\":1795996570123}"));
	CHECK(ev.has_event_time && ev.event_time_ms == INT64_C(1795996570123));
	CHECK(ok("{\"event_time\":-86400000}"));
	CHECK(ev.event_time_ms == -86400000);
	CHECK(ok("{\"event_time\":\"1969-12-31T23:59:59.999Z\"}"));
	CHECK(ev.event_time_ms == -1);
}

static void test_json_escapes(void)
{
	CHECK(ok("{\"item\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\te\"}"));
	CHECK_SLICE(ev.item, "a\"b\\c/d\b\f\n\r\te");
	CHECK(ok("{\"item\":\"caf\\u00e9 \\u20AC \\ud83d\\ude00\"}"));
	CHECK_SLICE(ev.item, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	CHECK(ok("{\"item\":\"\\u0000\"}"));
	CHECK(ev.item.n == 1 && ev.item.p[0] == '\0');
	/* several escaped strings in one line do not overwrite each other */
	CHECK(ok("{\"tenant_id\":\"t\\u0031\",\"counter_id\":\"c\\n\",\"attrs\":{\"k\\t\":\"v\\\\\"}}"));
	CHECK_SLICE(ev.tenant_id, "t1");
	CHECK_SLICE(ev.counter_id, "c\n");
	CHECK_SLICE(ev.attr_keys[0], "k\t");
	CHECK_SLICE(ev.attr_vals[0], "v\\");
	/* an escaped key is the same key */
	CHECK(ok("{\"\\u0064elta\":7}"));
	CHECK(ev.has_delta && ev.delta == 7);
	CHECK(malformed("{\"item\":\"\\ud83d\"}"));
	CHECK(strstr(pb.msg, "surrogate") != NULL);
	CHECK(malformed("{\"item\":\"\\ude00\"}"));
	CHECK(malformed("{\"item\":\"\\ud83d\\u0041\"}"));
	CHECK(malformed("{\"item\":\"\\ud83dx\"}"));
	CHECK(malformed("{\"item\":\"\\x41\"}"));
	CHECK(malformed("{\"item\":\"\\u12\"}"));
	CHECK(malformed("{\"item\":\"\\u12g4\"}"));
	CHECK(malformed("{\"item\":\"abc\\"));
	CHECK(malformed("{\"item\":\"abc"));
	CHECK(malformed("{\"item\":\"a\tb\"}"));
	CHECK(strstr(pb.msg, "control character") != NULL);
	CHECK(malformed("{\"item\":\"a\\n\x01\"}"));
	/* escapes in unknown keys are validated too */
	CHECK(malformed("{\"zzz\":\"\\q\"}"));
}

static void test_json_utf8(void)
{
	CHECK(ok("{\"item\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\"}"));
	CHECK_SLICE(ev.item, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf");
	static const char *const badseq[] = {
		"\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xed\xa0\x80", "\xf0\x80\x80\x80",
		"\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff", "\x80", "\xe2\x82", "\xc3(",
		"\xe2\x82\xac\xe2",
	};
	for (size_t i = 0; i < sizeof(badseq) / sizeof(badseq[0]); i++) {
		char line[64];
		snprintf(line, sizeof(line), "{\"item\":\"x%sy\"}", badseq[i]);
		CHECK(malformed(line));
		CHECK(strstr(pb.msg, "UTF-8") != NULL);
		snprintf(line, sizeof(line), "{\"item\":\"\\n%s\"}", badseq[i]);
		CHECK(malformed(line));
	}
}

/* Parses line[0..n) from a heap copy of exactly n bytes, so that a read
 * past the line is an error under AddressSanitizer.  The copy is kept
 * until the next call: ev's slices may point into it. */
static char *jn_copy;

static cnt_raw_status Jn(const char *line, size_t n)
{
	free(jn_copy);
	if ((jn_copy = malloc(n ? n : 1)) == NULL)
		abort();
	memcpy(jn_copy, line, n);
	return cnt_jsonl_parse(jp, jn_copy, n, &ev, &pb);
}

/* The scan for a string's end finds the first byte that needs a look at
 * every offset, in 16- and 8-byte steps and the tail, wherever the line
 * ends: one special byte at each position of a 40-byte string. */
static void test_json_string_positions(void)
{
	static const char *const tails[] = {"}", ",\"delta\":1,\"origin\":\"backend\"}"};

	for (size_t t = 0; t < 2; t++)
		for (size_t p = 0; p < 40; p++) {
			char line[160], want[64];
			size_t n, k;

			memset(want, 'a', 41);
			/* the closing quote at p: the string is p bytes */
			n = (size_t)snprintf(line, sizeof(line), "{\"item\":\"%.*s\"%s", (int)p, want, tails[t]);
			CHECK_EQ_INT(Jn(line, n), CNT_RAW_OK);
			CHECK(ev.item.n == p && memcmp(ev.item.p, want, p) == 0);
			/* an escape at p */
			n = (size_t)snprintf(line, sizeof(line), "{\"item\":\"%.*s\\n%.*s\"%s", (int)p, want,
				(int)(40 - p), want, tails[t]);
			CHECK_EQ_INT(Jn(line, n), CNT_RAW_OK);
			want[p] = '\n';
			CHECK(ev.item.n == 41 && memcmp(ev.item.p, want, 41) == 0);
			want[p] = 'a';
			/* DEL is plain; é is UTF-8; a control byte, a lone
			 * continuation byte and NUL are refused */
			k = 9 + p;
			n = (size_t)snprintf(line, sizeof(line), "{\"item\":\"%.*s\"%s", 40, want, tails[t]);
			line[k] = 0x7f;
			CHECK_EQ_INT(Jn(line, n), CNT_RAW_OK);
			CHECK(ev.item.n == 40 && (unsigned char)ev.item.p[p] == 0x7f);
			line[k] = (char)0x1f;
			CHECK_EQ_INT(Jn(line, n), CNT_RAW_MALFORMED);
			CHECK(strstr(pb.msg, "control character") != NULL);
			line[k] = 0;
			CHECK_EQ_INT(Jn(line, n), CNT_RAW_MALFORMED);
			CHECK(strstr(pb.msg, "control character") != NULL);
			line[k] = (char)0x80;
			CHECK_EQ_INT(Jn(line, n), CNT_RAW_MALFORMED);
			CHECK(strstr(pb.msg, "UTF-8") != NULL);
			line[k] = (char)0xc3;
			line[k + 1] = (char)(p + 1 < 40 ? 0xa9 : '"');   /* the last: é closes it */
			CHECK_EQ_INT(Jn(line, n), p + 1 < 40 ? CNT_RAW_OK : CNT_RAW_MALFORMED);
			CHECK(p + 1 == 40 || (ev.item.n == 40 && memcmp(ev.item.p + p, "\xc3\xa9", 2) == 0));
			/* unterminated: the line ends inside the string */
			CHECK_EQ_INT(Jn(line, 9 + p), CNT_RAW_MALFORMED);
			CHECK(strstr(pb.msg, "unterminated") != NULL);
		}
}

/* Short strings, whose end the parser looks for in the next 32 bytes at
 * once: a byte that needs a look before the closing quote is never
 * skipped. */
static void test_json_short_strings(void)
{
	static const char tail[] = ",\"delta\":1,\"origin\":\"backend\",\"attrs\":{}}";

	for (size_t len = 1; len < 34; len++)
		for (size_t p = 0; p < len; p++) {
			char line[160], want[64];
			size_t n;

			memset(want, 'b', sizeof(want));
			n = (size_t)snprintf(line, sizeof(line), "{\"item\":\"%.*s\\\"%.*s\"%s", (int)p, want,
				(int)(len - p - 1), want, tail);
			CHECK_EQ_INT(Jn(line, n), CNT_RAW_OK);
			want[p] = '"';
			CHECK(ev.item.n == len && memcmp(ev.item.p, want, len) == 0);
			want[p] = 'b';
			n = (size_t)snprintf(line, sizeof(line), "{\"item\":\"%.*s\"%s", (int)len, want, tail);
			line[9 + p] = '\t';
			CHECK_EQ_INT(Jn(line, n), CNT_RAW_MALFORMED);
			line[9 + p] = (char)0xfe;
			CHECK_EQ_INT(Jn(line, n), CNT_RAW_MALFORMED);
			line[9 + p] = (char)0xc3;   /* a lead byte whose next is 'b' or the quote */
			CHECK_EQ_INT(Jn(line, n), CNT_RAW_MALFORMED);
		}
}

static void test_json_duplicates(void)
{
	CHECK(bad("{\"delta\":1,\"delta\":2}", "delta"));
	CHECK_EQ_STR(pb.msg, "field 'delta' appears twice");
	CHECK(bad("{\"item\":null,\"item\":\"x\"}", "item"));
	CHECK(bad("{\"delta\":1,\"\\u0064elta\":2}", "delta"));
	CHECK(bad("{\"attrs\":{\"a\":\"1\",\"b\":\"2\",\"a\":\"3\"}}", "attrs"));
	CHECK(strstr(pb.msg, "'a'") != NULL);
	/* unknown keys may repeat: they are not ours */
	CHECK(ok("{\"x\":1,\"x\":2}"));
}

static void test_json_many_attrs(void)
{
	char line[4096];
	size_t k = 0;

	k += (size_t)snprintf(line + k, sizeof(line) - k, "{\"attrs\":{");
	for (int i = 0; i < 100; i++)
		k += (size_t)snprintf(line + k, sizeof(line) - k, "%s\"k%d\":\"v%d\"", i ? "," : "", i, i);
	snprintf(line + k, sizeof(line) - k, "}}");
	CHECK(ok(line));
	CHECK_EQ_INT(ev.nattrs, 100);
	CHECK_SLICE(ev.attr_keys[99], "k99");
	CHECK_SLICE(ev.attr_vals[57], "v57");
	/* a duplicate among many (the sorted check) */
	snprintf(line + k, sizeof(line) - k, ",\"k57\":\"again\"}}");
	CHECK(bad(line, "attrs"));
	CHECK(strstr(pb.msg, "'k57'") != NULL);
}

static void test_json_unknown_keys(void)
{
	CHECK(ok("{\"x\":{\"a\":[1,-2.5e-3,{\"b\":null,\"c\":[true,false,\"\\u00e9\"]}],\"d\":\"e\"},\"delta\":5,\"y\":[]}"));
	CHECK(ev.has_delta && ev.delta == 5);
	CHECK(malformed("{\"x\":[1,],\"delta\":5}"));
	CHECK(malformed("{\"x\":{\"a\"},\"delta\":5}"));
	CHECK(malformed("{\"x\":{\"a\":1,},\"delta\":5}"));
	CHECK(malformed("{\"x\":tru,\"delta\":5}"));
	CHECK(malformed("{\"x\":nul}"));
	CHECK(malformed("{\"x\":01}"));
	CHECK(malformed("{\"x\":'a'}"));
	CHECK(malformed("{\"x\":[1 2]}"));

	/* nesting: 64 levels in all (the line's object is the first) pass, 65 do not */
	char line[512];
	size_t k = 0;
	k += (size_t)snprintf(line + k, sizeof(line) - k, "{\"x\":");
	for (int i = 0; i < 63; i++)
		line[k++] = '[';
	for (int i = 0; i < 63; i++)
		line[k++] = ']';
	snprintf(line + k, sizeof(line) - k, "}");
	CHECK(ok(line));
	k = 0;
	k += (size_t)snprintf(line + k, sizeof(line) - k, "{\"x\":");
	for (int i = 0; i < 64; i++)
		line[k++] = '[';
	for (int i = 0; i < 64; i++)
		line[k++] = ']';
	snprintf(line + k, sizeof(line) - k, "}");
	CHECK(malformed(line));
	CHECK(strstr(pb.msg, "nesting") != NULL);
}

static void test_json_structure(void)
{
	CHECK(malformed("{\"delta\":5}x"));
	CHECK(strstr(pb.msg, "trailing") != NULL);
	CHECK(strstr(pb.msg, "column 12") != NULL);
	CHECK(malformed("{\"delta\":5} {}"));
	CHECK(malformed("{\"delta\":5}\n{\"delta\":6}"));
	CHECK(malformed("[]"));
	CHECK(malformed("\"x\""));
	CHECK(malformed("5"));
	CHECK(malformed("null"));
	CHECK(malformed("{"));
	CHECK(malformed("{\"delta\""));
	CHECK(malformed("{\"delta\":"));
	CHECK(malformed("{\"delta\":5"));
	CHECK(malformed("{\"delta\":5,}"));
	CHECK(malformed("{,}"));
	CHECK(malformed("{\"delta\" 5}"));
	CHECK(malformed("{delta:5}"));
	CHECK(malformed("{\"delta\":5 \"item\":\"x\"}"));
	CHECK(strstr(pb.msg, "column 12") != NULL);
	CHECK(malformed("{\"attrs\":{\"a\":\"b\"}"));
	CHECK_EQ_INT(cnt_jsonl_parse(jp, "{\"a\":1}\0", 8, &ev, &pb), CNT_RAW_MALFORMED);
	/* MALFORMED wins over an earlier bad field */
	CHECK(malformed("{\"delta\":\"x\",\"item\":}"));
	CHECK(malformed("{\"delta\":1,\"delta\":2,"));
	/* the line length is honoured, not a NUL */
	CHECK_EQ_INT(cnt_jsonl_parse(jp, "{\"delta\":5}garbage", 11, &ev, &pb), CNT_RAW_OK);
	CHECK(ev.delta == 5);
}

static void test_json_reuse(void)
{
	/* a long line with escapes grows the scratch buffer; later lines still work */
	char big[20000];
	size_t k = 0;
	k += (size_t)snprintf(big, sizeof(big), "{\"item\":\"");
	for (int i = 0; i < 3000; i++) {
		memcpy(big + k, "\\u00e9", 6);
		k += 6;
	}
	snprintf(big + k, sizeof(big) - k, "\",\"delta\":3}");
	CHECK(ok(big));
	CHECK_EQ_INT(ev.item.n, 6000);
	CHECK(ok("{\"item\":\"\\n\"}"));
	CHECK_SLICE(ev.item, "\n");
	CHECK(!ev.has_delta);
}

/* cnt_jsonl_parse_into(): strings with escapes are decoded into the
 * caller's scratch, exactly the line's length, so they outlive the next
 * line parsed by the same parser; without escapes they are the line's.
 * What it makes of a line is what cnt_jsonl_parse() makes of it. */
static void test_json_parse_into(void)
{
	static const char l1[] = "{\"idempotency_key\":\"a\\u00e9\",\"tenant_id\":\"t\",\"item\":\"\\n\\\"x\","
		"\"attrs\":{\"k\":\"v\\t\"}}";
	static const char l2[] = "{\"idempotency_key\":\"\\u0062\\u0062\",\"item\":\"\\r\\r\\r\"}";
	char *s1 = malloc(sizeof(l1) - 1), *s2 = malloc(sizeof(l2) - 1);
	cnt_raw_event e1, e2;
	cnt_raw_problem p1, p2;

	if (s1 == NULL || s2 == NULL) {
		CHECK(0);
		return;
	}
	CHECK_EQ_INT(cnt_jsonl_parse_into(jp, l1, sizeof(l1) - 1, s1, &e1, &p1), CNT_RAW_OK);
	CHECK_SLICE(e1.idempotency_key, "a\xc3\xa9");
	CHECK(e1.idempotency_key.p >= s1 && e1.idempotency_key.p < s1 + sizeof(l1) - 1);
	CHECK(e1.tenant_id.p > l1 && e1.tenant_id.p < l1 + sizeof(l1));   /* no escape: the line's */
	CHECK_EQ_INT(e1.nattrs, 1);
	CHECK_SLICE(e1.attr_vals[0], "v\t");
	CHECK(e1.attr_vals[0].p >= s1 && e1.attr_vals[0].p < s1 + sizeof(l1) - 1);
	CHECK_EQ_INT(cnt_jsonl_parse_into(jp, l2, sizeof(l2) - 1, s2, &e2, &p2), CNT_RAW_OK);
	CHECK_SLICE(e2.idempotency_key, "bb");
	CHECK_SLICE(e2.item, "\r\r\r");
	/* the first line's strings are still its own */
	CHECK_SLICE(e1.idempotency_key, "a\xc3\xa9");
	CHECK_SLICE(e1.item, "\n\"x");
	/* and the same as cnt_jsonl_parse() */
	CHECK(ok(l1));
	CHECK_SLICE(ev.idempotency_key, "a\xc3\xa9");
	CHECK_SLICE(ev.item, "\n\"x");
	CHECK_EQ_INT(ev.nattrs, 1);
	CHECK_SLICE(ev.attr_vals[0], "v\t");
	/* a problem is the same too */
	CHECK_EQ_INT(cnt_jsonl_parse_into(jp, "{\"delta\":\"\\q\"}", 14, s1, &e1, &p1), CNT_RAW_MALFORMED);
	CHECK_EQ_INT(cnt_jsonl_parse(jp, "{\"delta\":\"\\q\"}", 14, &ev, &pb), CNT_RAW_MALFORMED);
	CHECK_EQ_STR(p1.msg, pb.msg);
	free(s1);
	free(s2);
}

/* ---- CSV ---------------------------------------------------------------- */

struct row {
	uint64_t line;
	cnt_raw_status st;
	char field[32];
	char msg[256];
	char raw[256];
	char key[64], tenant[64], item[64];
	int has_item, has_delta, has_time, has_origin, origin;
	int64_t delta, time;
	size_t nattrs;
	char attrs[128];	/* "k=v;k=v" */
};

struct rows {
	struct row r[64];
	int n;
	int stop_after;
};

static void copy_slice(char *dst, size_t cap, cnt_slice s)
{
	size_t n = s.p == NULL ? 0 : s.n < cap - 1 ? s.n : cap - 1;

	if (n)
		memcpy(dst, s.p, n);
	dst[n] = '\0';
}

static int collect(void *ctx, uint64_t line, const cnt_raw_event *e, const cnt_raw_problem *p,
	const char *raw, size_t rawn)
{
	struct rows *rs = ctx;
	struct row *r;

	if (rs->n == 64)
		return 99;
	r = &rs->r[rs->n++];
	memset(r, 0, sizeof(*r));
	r->line = line;
	r->st = p->status;
	snprintf(r->field, sizeof(r->field), "%s", p->field ? p->field : "");
	snprintf(r->msg, sizeof(r->msg), "%s", p->msg);
	snprintf(r->raw, sizeof(r->raw), "%.*s", (int)rawn, raw);
	if (p->status == CNT_RAW_OK) {
		copy_slice(r->key, sizeof(r->key), e->idempotency_key);
		copy_slice(r->tenant, sizeof(r->tenant), e->tenant_id);
		copy_slice(r->item, sizeof(r->item), e->item);
		r->has_item = e->item.p != NULL;
		r->has_delta = e->has_delta;
		r->delta = e->delta;
		r->has_time = e->has_event_time;
		r->time = e->event_time_ms;
		r->has_origin = e->has_origin;
		r->origin = e->origin;
		r->nattrs = e->nattrs;
		for (size_t i = 0; i < e->nattrs; i++) {
			size_t k = strlen(r->attrs);
			snprintf(r->attrs + k, sizeof(r->attrs) - k, "%s%.*s=%.*s", i ? ";" : "",
				(int)e->attr_keys[i].n, e->attr_keys[i].p, (int)e->attr_vals[i].n, e->attr_vals[i].p);
		}
	}
	if (rs->stop_after && rs->n == rs->stop_after)
		return 7;
	return 0;
}

/* Reads text through a fresh reader, in chunks of chunk bytes (0: all at once). */
static int csv_read(const char *text, size_t chunk, struct rows *rs, cnt_err *err)
{
	cnt_csvin *r = cnt_csvin_new();
	size_t n = strlen(text);
	int rc = 0;

	if (r == NULL)
		return -1;
	if (chunk == 0)
		chunk = n ? n : 1;
	for (size_t i = 0; i < n && rc == 0; i += chunk)
		rc = cnt_csvin_feed(r, text + i, n - i < chunk ? n - i : chunk, collect, rs, err);
	if (rc == 0)
		rc = cnt_csvin_finish(r, collect, rs, err);
	cnt_csvin_free(r);
	return rc;
}

/* The rows read another way are the same: lines, problems, text, fields. */
static void check_same_rows(const struct rows *got, const struct rows *want)
{
	CHECK_EQ_INT(got->n, want->n);
	for (int i = 0; i < want->n && i < got->n; i++) {
		CHECK_EQ_INT(got->r[i].line, want->r[i].line);
		CHECK_EQ_INT(got->r[i].st, want->r[i].st);
		CHECK_EQ_STR(got->r[i].msg, want->r[i].msg);
		CHECK_EQ_STR(got->r[i].raw, want->r[i].raw);
		CHECK_EQ_STR(got->r[i].key, want->r[i].key);
		CHECK_EQ_STR(got->r[i].item, want->r[i].item);
		CHECK_EQ_STR(got->r[i].attrs, want->r[i].attrs);
		CHECK(got->r[i].delta == want->r[i].delta);
	}
}

static void test_csv_basic(void)
{
	const char *text =
		"idempotency_key,tenant_id,counter_id,member_ref,delta,event_time,origin,attrs.region,extra,item\n"
		"k1,acme,steps,m1,5,2026-11-30T05:26:10.123+05:30,client,eu,zzz,\n"
		"k2,acme,steps,m2,-9223372036854775808,1795996570123,BACKEND,,,v1\n";
	struct rows rs = {0};
	cnt_err err;

	CHECK_EQ_INT(csv_read(text, 0, &rs, &err), 0);
	CHECK_EQ_INT(rs.n, 2);
	CHECK_EQ_INT(rs.r[0].line, 2);
	CHECK_EQ_INT(rs.r[0].st, CNT_RAW_OK);
	CHECK_EQ_STR(rs.r[0].key, "k1");
	CHECK_EQ_STR(rs.r[0].tenant, "acme");
	CHECK(rs.r[0].has_delta && rs.r[0].delta == 5);
	CHECK(rs.r[0].has_time && rs.r[0].time == INT64_C(1795996570123));
	CHECK(rs.r[0].has_origin && rs.r[0].origin == CNT_ORIGIN_CLIENT);
	CHECK_EQ_INT(rs.r[0].nattrs, 1);
	CHECK_EQ_STR(rs.r[0].attrs, "region=eu");
	CHECK(!rs.r[0].has_item);
	CHECK_EQ_STR(rs.r[0].raw, "k1,acme,steps,m1,5,2026-11-30T05:26:10.123+05:30,client,eu,zzz,");
	CHECK_EQ_INT(rs.r[1].line, 3);
	CHECK_EQ_INT(rs.r[1].st, CNT_RAW_OK);
	CHECK(rs.r[1].delta == INT64_MIN);
	CHECK(rs.r[1].time == INT64_C(1795996570123));
	CHECK(rs.r[1].origin == CNT_ORIGIN_BACKEND);
	CHECK_EQ_INT(rs.r[1].nattrs, 0);	/* empty cell: absent */
	CHECK(rs.r[1].has_item);
	CHECK_EQ_STR(rs.r[1].item, "v1");
}

static void test_csv_quoting(void)
{
	const char *text =
		"idempotency_key,item,delta\r\n"
		"\"k,1\",\"two\nlines\",1\r\n"
		"\"say \"\"hi\"\"\",\"three\n\nlines\",2\r\n"
		"\r\n"
		"k4,  spaced  ,3\r\n"
		"k5,\" kept \",4";	/* no final newline */
	struct rows rs = {0};
	cnt_err err;

	CHECK_EQ_INT(csv_read(text, 0, &rs, &err), 0);
	CHECK_EQ_INT(rs.n, 4);
	CHECK_EQ_INT(rs.r[0].line, 2);
	CHECK_EQ_STR(rs.r[0].key, "k,1");
	CHECK_EQ_STR(rs.r[0].item, "two\nlines");
	CHECK_EQ_STR(rs.r[0].raw, "\"k,1\",\"two\nlines\",1");
	CHECK_EQ_INT(rs.r[1].line, 4);
	CHECK_EQ_STR(rs.r[1].key, "say \"hi\"");
	CHECK_EQ_STR(rs.r[1].raw, "\"say \"\"hi\"\"\",\"three\n\nlines\",2");
	CHECK_EQ_INT(rs.r[2].line, 8);	/* line 7 is blank */
	CHECK_EQ_STR(rs.r[2].item, "spaced");
	CHECK_EQ_INT(rs.r[3].line, 9);
	CHECK_EQ_STR(rs.r[3].item, " kept ");
	CHECK_EQ_STR(rs.r[3].raw, "k5,\" kept \",4");
	CHECK(rs.r[3].delta == 4);
}

static void test_csv_row_text(void)
{
	/* A row's text for the streams is its cells written back: a cell is
	 * quoted when it holds a comma, a quote, CR or LF anywhere, or a
	 * space or tab at either end, and written as it is otherwise. */
	const char *text =
		"idempotency_key,item,delta,attrs.a,attrs.b\n"
		"\"k\r1\",\"c,d\",1,\"\ttab\",\"sp \"\n"
		"k2,\"\xc3\xa9 in\"\"q\",2,mid\tdle,\n"
		"\"k3\",\"plain\",3,\"a\nb\",x\n"
		"\" k4\",\"\",4,\"t\t\",\"\r\"\n";
	struct rows rs = {0};
	cnt_err err;

	CHECK_EQ_INT(csv_read(text, 0, &rs, &err), 0);
	CHECK_EQ_INT(rs.n, 4);
	CHECK_EQ_STR(rs.r[0].raw, "\"k\r1\",\"c,d\",1,\"\ttab\",\"sp \"");
	CHECK_EQ_STR(rs.r[1].raw, "k2,\"\xc3\xa9 in\"\"q\",2,mid\tdle,");
	CHECK_EQ_STR(rs.r[2].raw, "k3,plain,3,\"a\nb\",x");
	CHECK_EQ_STR(rs.r[3].raw, "\" k4\",,4,\"t\t\",\"\r\"");
	for (int i = 0; i < 4; i++)
		CHECK_EQ_INT(rs.r[i].st, CNT_RAW_OK);
}

static void test_csv_unquoted_rows(void)
{
	/* A whole line without quotes is split without libcsv; fed a byte
	 * at a time, every row goes through libcsv (no piece is a whole row
	 * but a blank line's end), and the rows must be the same.  Spaces
	 * and tabs at a cell's ends go, a line of nothing else is no row. */
	const char *text =
		"idempotency_key,item,delta,attrs.a\n"
		"  k1 ,\t it em\t, 5 ,x\n"
		" \t \n"
		"k2,,7,\r"
		"\n"
		",,,\n"
		" , \n"
		"k3,a,1,b,c\n"
		"\t,\t,\t,\t\r\n"
		"k4, ,-1, y \r"
		"k5,\xff,2,z\n"
		"k6,last,3,w";
	struct rows whole = {0}, bytes = {0};
	cnt_err err;

	CHECK_EQ_INT(csv_read(text, 0, &whole, &err), 0);
	CHECK_EQ_INT(csv_read(text, 1, &bytes, &err), 0);
	CHECK_EQ_INT(whole.n, 9);
	check_same_rows(&bytes, &whole);
	CHECK_EQ_INT(whole.r[0].line, 2);
	CHECK_EQ_STR(whole.r[0].key, "k1");
	CHECK_EQ_STR(whole.r[0].item, "it em");
	CHECK(whole.r[0].delta == 5);
	CHECK_EQ_STR(whole.r[0].raw, "k1,it em,5,x");
	CHECK_EQ_INT(whole.r[1].line, 4);	/* line 3 is blank */
	CHECK_EQ_STR(whole.r[1].raw, "k2,,7,");
	CHECK_EQ_INT(whole.r[2].line, 5);	/* "\r\n" is one line end */
	CHECK_EQ_STR(whole.r[2].raw, ",,,");
	CHECK_EQ_INT(whole.r[3].line, 6);
	CHECK_EQ_INT(whole.r[3].st, CNT_RAW_MALFORMED);	/* two cells */
	CHECK_EQ_STR(whole.r[3].raw, ",");
	CHECK_EQ_INT(whole.r[4].st, CNT_RAW_MALFORMED);	/* five cells */
	CHECK_EQ_INT(whole.r[5].line, 8);
	CHECK_EQ_STR(whole.r[5].raw, ",,,");
	CHECK_EQ_INT(whole.r[6].line, 9);
	CHECK_EQ_STR(whole.r[6].raw, "k4,,-1,y");
	CHECK_EQ_INT(whole.r[7].line, 10);	/* a lone '\r' ends line 9 */
	CHECK_EQ_INT(whole.r[7].st, CNT_RAW_BAD_FIELD);
	CHECK_EQ_INT(whole.r[8].line, 11);
	CHECK_EQ_STR(whole.r[8].raw, "k6,last,3,w");
}

static void test_csv_chunking(void)
{
	/* Any split of the input gives the same rows, lines and raw text. */
	const char *text =
		"\xef\xbb\xbfidempotency_key,item,delta\n"
		"a,\"x\ny\",1\n"
		"b,c\n"
		"c,\"bad\"q,2\n"
		"d,\"\"\"\",3\n"
		"\n"
		"e,f,4\n";
	struct rows whole = {0};
	cnt_err err;

	CHECK_EQ_INT(csv_read(text, 0, &whole, &err), 0);
	CHECK_EQ_INT(whole.n, 5);
	CHECK_EQ_STR(whole.r[0].key, "a");	/* the BOM is not part of the name */
	CHECK_EQ_INT(whole.r[0].line, 2);
	CHECK_EQ_INT(whole.r[1].line, 4);
	CHECK_EQ_INT(whole.r[1].st, CNT_RAW_MALFORMED);
	CHECK_EQ_INT(whole.r[2].line, 5);
	CHECK_EQ_INT(whole.r[2].st, CNT_RAW_MALFORMED);
	CHECK(strstr(whole.r[2].msg, "quot") != NULL);
	CHECK(strstr(whole.r[2].msg, "line 5 column 8") != NULL);
	CHECK_EQ_STR(whole.r[2].raw, "c,\"bad\"q,2");
	CHECK_EQ_INT(whole.r[3].line, 6);
	CHECK_EQ_STR(whole.r[3].key, "d");
	CHECK_EQ_STR(whole.r[3].item, "\"");
	CHECK_EQ_INT(whole.r[4].line, 8);
	CHECK_EQ_STR(whole.r[4].key, "e");
	for (size_t chunk = 1; chunk <= 7; chunk++) {
		struct rows part = {0};
		CHECK_EQ_INT(csv_read(text, chunk, &part, &err), 0);
		check_same_rows(&part, &whole);
	}
}

static void test_csv_errors(void)
{
	struct rows rs = {0};
	cnt_err err;

	/* wrong cell counts: reported, and the next rows still read */
	CHECK_EQ_INT(csv_read("idempotency_key,delta\na\nb,1,2\nc,3\n", 0, &rs, &err), 0);
	CHECK_EQ_INT(rs.n, 3);
	CHECK_EQ_INT(rs.r[0].st, CNT_RAW_MALFORMED);
	CHECK_EQ_STR(rs.r[0].msg, "row has 1 cells, the header has 2");
	CHECK_EQ_STR(rs.r[0].raw, "a");
	CHECK_EQ_INT(rs.r[1].st, CNT_RAW_MALFORMED);
	CHECK_EQ_INT(rs.r[2].st, CNT_RAW_OK);
	CHECK_EQ_INT(rs.r[2].line, 4);

	/* bad field text */
	memset(&rs, 0, sizeof(rs));
	CHECK_EQ_INT(csv_read("delta,event_time,origin,item\n1.5,,,\n,2026-02-29T00:00:00Z,,\n,,server,\n"
		"007,,,\n,,,\"\xff\"\n+1,,,\n", 0, &rs, &err), 0);
	CHECK_EQ_INT(rs.n, 6);
	CHECK_EQ_INT(rs.r[0].st, CNT_RAW_BAD_FIELD);
	CHECK_EQ_STR(rs.r[0].field, "delta");
	CHECK(strstr(rs.r[0].msg, "field 'delta'") == rs.r[0].msg);
	CHECK_EQ_STR(rs.r[1].field, "event_time");
	CHECK_EQ_STR(rs.r[2].field, "origin");
	CHECK_EQ_STR(rs.r[3].field, "delta");
	CHECK_EQ_STR(rs.r[4].field, "item");
	CHECK_EQ_STR(rs.r[5].field, "delta");

	/* unterminated quote at the end */
	memset(&rs, 0, sizeof(rs));
	CHECK_EQ_INT(csv_read("item,delta\nx,1\n\"open,2\nmore\n", 0, &rs, &err), 0);
	CHECK_EQ_INT(rs.n, 2);
	CHECK_EQ_INT(rs.r[1].st, CNT_RAW_MALFORMED);
	CHECK_EQ_INT(rs.r[1].line, 3);
	CHECK(strstr(rs.r[1].msg, "unterminated") != NULL);

	/* a duplicated header column stops the input, naming it */
	memset(&rs, 0, sizeof(rs));
	CHECK_EQ_INT(csv_read("delta,item,delta\n1,2,3\n", 0, &rs, &err), -1);
	CHECK(strstr(err.msg, "'delta'") != NULL);
	CHECK_EQ_INT(rs.n, 0);
	memset(&rs, 0, sizeof(rs));
	CHECK_EQ_INT(csv_read("attrs.a,attrs.a\n1,2\n", 0, &rs, &err), -1);
	CHECK(strstr(err.msg, "'attrs.a'") != NULL);
	/* a header with bad quoting too */
	CHECK_EQ_INT(csv_read("del\"ta,item\n1,2\n", 0, &rs, &err), -1);
	CHECK(strstr(err.msg, "header") != NULL);

	/* a header missing required columns is fine row-wise */
	memset(&rs, 0, sizeof(rs));
	CHECK_EQ_INT(csv_read("foo,attrs,attrs.\n1,2,3\n", 0, &rs, &err), 0);
	CHECK_EQ_INT(rs.n, 1);
	CHECK_EQ_INT(rs.r[0].st, CNT_RAW_OK);
	CHECK_EQ_INT(rs.r[0].nattrs, 0);

	/* empty input, header only */
	memset(&rs, 0, sizeof(rs));
	CHECK_EQ_INT(csv_read("", 0, &rs, &err), 0);
	CHECK_EQ_INT(csv_read("delta,item", 0, &rs, &err), 0);
	CHECK_EQ_INT(rs.n, 0);
}

static void test_csv_stop(void)
{
	struct rows rs = {0};
	cnt_err err;

	rs.stop_after = 2;
	CHECK_EQ_INT(csv_read("item\na\nb\nc\nd\n", 0, &rs, &err), 7);
	CHECK_EQ_INT(rs.n, 2);
	memset(&rs, 0, sizeof(rs));
	rs.stop_after = 1;
	CHECK_EQ_INT(csv_read("item\na\nb", 0, &rs, &err), 7);
	CHECK_EQ_INT(rs.n, 1);
}

static void test_csv_attrs(void)
{
	struct rows rs = {0};
	cnt_err err;

	CHECK_EQ_INT(csv_read("attrs.region,tenant_id,attrs.device\neu,t,ios\n,t,web\nus,t,\n", 0, &rs, &err), 0);
	CHECK_EQ_INT(rs.n, 3);
	CHECK_EQ_STR(rs.r[0].attrs, "region=eu;device=ios");
	CHECK_EQ_STR(rs.r[1].attrs, "device=web");
	CHECK_EQ_STR(rs.r[2].attrs, "region=us");
}

static void test_csv_line_ends(void)
{
	struct rows rs = {0};
	cnt_err err;

	/* a lone '\r' ends a line as '\n' and "\r\n" do */
	CHECK_EQ_INT(csv_read("item\ra\r\rb\r", 0, &rs, &err), 0);
	CHECK_EQ_INT(rs.n, 2);
	CHECK_EQ_INT(rs.r[0].line, 2);
	CHECK_EQ_INT(rs.r[1].line, 4);
	memset(&rs, 0, sizeof(rs));
	CHECK_EQ_INT(csv_read("item\r\na\r\n\r\nb\nc", 1, &rs, &err), 0);
	CHECK_EQ_INT(rs.n, 3);
	CHECK_EQ_INT(rs.r[0].line, 2);
	CHECK_EQ_INT(rs.r[1].line, 4);
	CHECK_EQ_INT(rs.r[2].line, 5);
	CHECK_EQ_STR(rs.r[2].item, "c");
}

/* Regression: a header of empty names (",") left the name buffer
 * unallocated, and comparing two empty names passed NULL to memcmp
 * (UBSan; `printf ',\n1,2\n' | cnt-ingest -f csv`). */
static void test_csv_empty_header_names(void)
{
	struct rows rs = {0};
	cnt_err err;

	CHECK_EQ_INT(csv_read(",\n1,2\n", 0, &rs, &err), -1);
	CHECK_EQ_STR(err.msg, "line 1: CSV header: column '' appears twice");
	CHECK_EQ_INT(rs.n, 0);
	/* one empty name is an ignored column; its rows still read */
	memset(&rs, 0, sizeof(rs));
	CHECK_EQ_INT(csv_read(",item\n1,2\n,\n", 0, &rs, &err), 0);
	CHECK_EQ_INT(rs.n, 2);
	CHECK_EQ_INT(rs.r[0].st, CNT_RAW_OK);
	CHECK_EQ_STR(rs.r[0].item, "2");
	CHECK_EQ_INT(rs.r[1].st, CNT_RAW_OK);
	CHECK_EQ_INT(rs.r[1].has_item, 0);
	CHECK_EQ_STR(rs.r[1].raw, ",");
	/* empty names and an attrs column of an empty name */
	memset(&rs, 0, sizeof(rs));
	CHECK_EQ_INT(csv_read("attrs.,\n,\n", 1, &rs, &err), 0);
	CHECK_EQ_INT(rs.n, 1);
}

/* Feeds a row of n bytes of 'x' after text, in chunks of chunk bytes,
 * then tail; never a whole row at once. */
static int csv_long(const char *head, size_t n, const char *tail, size_t chunk, struct rows *rs, cnt_err *err)
{
	cnt_csvin *r = cnt_csvin_new();
	char *x = malloc(chunk);
	int rc;

	if (r == NULL || x == NULL)
		return -2;
	memset(x, 'x', chunk);
	rc = cnt_csvin_feed(r, head, strlen(head), collect, rs, err);
	for (size_t i = 0; i < n && rc == 0; i += chunk)
		rc = cnt_csvin_feed(r, x, n - i < chunk ? n - i : chunk, collect, rs, err);
	if (rc == 0)
		rc = cnt_csvin_feed(r, tail, strlen(tail), collect, rs, err);
	if (rc == 0)
		rc = cnt_csvin_finish(r, collect, rs, err);
	cnt_csvin_free(r);
	free(x);
	return rc;
}

static void test_csv_overlong_rows(void)
{
	static const size_t chunks[] = {1000, 65536, 100000, 3u << 20};
	struct rows rs;
	cnt_err err;

	/* A row over 1 MiB is one MALFORMED row with its first 256 bytes,
	 * the next rows read normally, however the input is split. */
	for (size_t k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		memset(&rs, 0, sizeof(rs));
		CHECK_EQ_INT(csv_long("item,delta\na,1\n", 3u << 20, "\nb,2\n", chunks[k], &rs, &err), 0);
		CHECK_EQ_INT(rs.n, 3);
		CHECK_EQ_INT(rs.r[1].st, CNT_RAW_MALFORMED);
		CHECK_EQ_INT(rs.r[1].line, 3);
		CHECK_EQ_STR(rs.r[1].msg, "row longer than 1048576 bytes");
		CHECK_EQ_INT(strlen(rs.r[1].raw), 255);   /* struct row keeps 255 */
		CHECK_EQ_INT(rs.r[2].st, CNT_RAW_OK);
		CHECK_EQ_INT(rs.r[2].line, 4);
		CHECK_EQ_STR(rs.r[2].item, "b");
	}
	/* reported as soon as the limit is passed, long before the row's
	 * end: a row that never ends is reported once, then skipped */
	{
		cnt_csvin *r = cnt_csvin_new();
		char x[4096];
		size_t fed = 0;

		memset(&rs, 0, sizeof(rs));
		memset(x, 'x', sizeof(x));
		CHECK_EQ_INT(cnt_csvin_feed(r, "item\na\n", 7, collect, &rs, &err), 0);
		while (rs.n < 2 && fed < (8u << 20)) {
			CHECK_EQ_INT(cnt_csvin_feed(r, x, sizeof(x), collect, &rs, &err), 0);
			fed += sizeof(x);
		}
		CHECK_EQ_INT(rs.n, 2);
		CHECK_EQ_INT(fed, (1u << 20) + 4096);
		CHECK_EQ_STR(rs.r[1].msg, "row longer than 1048576 bytes");
		for (int i = 0; i < 1000; i++)
			CHECK_EQ_INT(cnt_csvin_feed(r, x, sizeof(x), collect, &rs, &err), 0);
		CHECK_EQ_INT(rs.n, 2);
		cnt_csvin_free(r);
	}
	/* exactly 1 MiB is not too long */
	memset(&rs, 0, sizeof(rs));
	CHECK_EQ_INT(csv_long("item\n", 1u << 20, "\n", 65536, &rs, &err), 0);
	CHECK_EQ_INT(rs.n, 1);
	CHECK_EQ_INT(rs.r[0].st, CNT_RAW_OK);
	memset(&rs, 0, sizeof(rs));
	CHECK_EQ_INT(csv_long("item\n", (1u << 20) + 1, "\n", 1u << 20, &rs, &err), 0);
	CHECK_EQ_INT(rs.n, 1);
	CHECK_EQ_INT(rs.r[0].st, CNT_RAW_MALFORMED);
	/* an overlong header stops the input at once */
	memset(&rs, 0, sizeof(rs));
	CHECK_EQ_INT(csv_long("", 2u << 20, "\n", 65536, &rs, &err), -1);
	CHECK_EQ_STR(err.msg, "line 1: CSV header: row longer than 1048576 bytes");
}

int main(void)
{
	jp = cnt_jsonl_new();
	if (jp == NULL)
		return 2;
	RUN(test_json_full_event);
	RUN(test_json_absent_and_null);
	RUN(test_json_whitespace);
	RUN(test_json_types);
	RUN(test_json_integers);
	RUN(test_json_escapes);
	RUN(test_json_utf8);
	RUN(test_json_string_positions);
	RUN(test_json_short_strings);
	RUN(test_json_duplicates);
	RUN(test_json_many_attrs);
	RUN(test_json_unknown_keys);
	RUN(test_json_structure);
	RUN(test_json_reuse);
	RUN(test_json_parse_into);
	RUN(test_csv_basic);
	RUN(test_csv_quoting);
	RUN(test_csv_row_text);
	RUN(test_csv_unquoted_rows);
	RUN(test_csv_chunking);
	RUN(test_csv_errors);
	RUN(test_csv_stop);
	RUN(test_csv_attrs);
	RUN(test_csv_line_ends);
	RUN(test_csv_empty_header_names);
	RUN(test_csv_overlong_rows);
	cnt_jsonl_free(jp);
	free(jn_copy);
	return unit_report("test_rawevent");
}
