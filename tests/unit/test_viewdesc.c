/*
 * test_viewdesc.c - the view description (view/viewdesc.h): written in the
 * documented order and read back the same, byte for byte; every field of
 * a bad description refused with its path; the writer refuses what the
 * reader would; staleness at the ends of the range.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "view_fixture.h"

static const char golden[] =
	"{\"board\":\"b\",\"tenant_id\":\"t\",\"counter_id\":\"pts\",\"counter_version\":null,"
	"\"counter_type\":\"exact\",\"scope_kind\":\"global\",\"scope\":\"global\",\"version\":1,"
	"\"window\":{\"kind\":\"all_time\",\"label\":\"all_time\",\"from\":-4611686018427387904,"
	"\"to\":4611686018427387904,\"timezone\":\"UTC\"},\"as_of\":1772366400000,"
	"\"log_position\":{\"max_ingest_time\":1772366400000},\"built_at\":1772370000000,"
	"\"order\":\"desc\",\"tie_break\":[\"earliest_achiever\",\"member_ref_asc\"],"
	"\"rank_numbering\":\"competition\",\"materialised_cap\":3,\"freshness_budget_s\":600,"
	"\"histogram\":{\"scale\":\"linear\",\"bins\":10},\"members\":7,\"head\":3}";

static cnt_viewdesc base(void)
{
	cnt_viewdesc d = fx_desc(0, CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, 3);

	d.members = 7;
	d.head = 3;
	d.bins = 10;
	return d;
}

static void test_write_golden_and_round_trip(void)
{
	cnt_viewdesc d = base(), r;
	cnt_buf b = CNT_BUF_INIT, b2 = CNT_BUF_INIT;
	cnt_err err;

	CHECK_EQ_INT(cnt_viewdesc_write(&d, &b, &err), 0);
	CHECK(b.len == sizeof(golden) - 1 && memcmp(b.p, golden, b.len) == 0);
	if (b.len != sizeof(golden) - 1 || memcmp(b.p, golden, b.len) != 0)
		fprintf(stderr, "wrote %.*s\n", (int)b.len, (const char *)b.p);
	CHECK_EQ_INT(cnt_viewdesc_parse(&r, (const char *)b.p, b.len, &err), 0);
	CHECK_EQ_STR(r.board, "b");
	CHECK_EQ_STR(r.timezone, "UTC");
	CHECK_EQ_INT(r.counter_version, 0);
	CHECK_EQ_INT(r.as_of, 1772366400000);
	CHECK_EQ_INT(r.ntie_break, 2);
	CHECK_EQ_INT(r.tie_break[0], CNT_TIE_EARLIEST_ACHIEVER);
	CHECK_EQ_INT(r.from, CNT_TZ_MIN_MS);
	/* written again from what was read: the same bytes */
	CHECK_EQ_INT(cnt_viewdesc_write(&r, &b2, &err), 0);
	CHECK(b2.len == b.len && memcmp(b2.p, b.p, b.len) == 0);
	cnt_viewdesc_release(&r);
	cnt_viewdesc_release(&r);   /* twice is harmless */
	cnt_buf_release(&b);
	cnt_buf_release(&b2);
}

/* Every combination of the enumerations, a pinned version, no as-of, a
 * season label, strings needing escapes: read back as written. */
static void test_round_trip_variants(void)
{
	static const char *const scopes[] = {"global", "eu/w\"est\\\x01", "d\xc3\xa9j\xe2\x82\xac \xf0\x9f\x8f\x83"};
	int ok = 1, cases = 0;

	for (int ct = 0; ct < 4; ct++)
		for (int sk = 0; sk < 3; sk++)
			for (int w = 0; w < CNT_WIN_COUNT; w++)
				for (int num = 0; num < 3; num++)
					for (int rule = 0; rule < 3; rule++) {
						cnt_viewdesc d = base(), r;
						cnt_buf b = CNT_BUF_INIT, b2 = CNT_BUF_INIT;
						cnt_err err;

						d.counter_type = (cnt_counter_type)ct;
						d.scope_kind = (cnt_scope_kind)sk;
						d.scope = scopes[sk];
						d.window_kind = (cnt_window_kind)w;
						d.window_label = w == CNT_WIN_SEASON ? "spring-\xe2\x98\x80" : cnt_defs_window_name(d.window_kind);
						d.rank_numbering = (cnt_rank_numbering)num;
						d.ntie_break = rule == 2 ? 1 : 2;
						d.tie_break[0] = rule == 2 ? CNT_TIE_MEMBER_REF_ASC : (cnt_tie_break)rule;
						d.tie_break[1] = CNT_TIE_MEMBER_REF_ASC;
						d.counter_version = ct;
						d.has_as_of = num != 1;
						d.order_asc = rule == 1;
						d.hist_scale = (cnt_hist_scale)(num & 1);
						d.from = d.to = INT64_MIN + ct;
						cases++;
						if (cnt_viewdesc_write(&d, &b, &err) != 0 ||
						    cnt_viewdesc_parse(&r, (const char *)b.p, b.len, &err) != 0) {
							fprintf(stderr, "case %d: %s\n", cases, err.msg);
							ok = 0;
							cnt_buf_release(&b);
							continue;
						}
						if (cnt_viewdesc_write(&r, &b2, &err) != 0 || b2.len != b.len ||
						    memcmp(b.p, b2.p, b.len) != 0 || strcmp(r.scope, d.scope) != 0 ||
						    r.counter_type != d.counter_type || r.window_kind != d.window_kind ||
						    r.has_as_of != d.has_as_of || r.order_asc != d.order_asc)
							ok = 0;
						cnt_viewdesc_release(&r);
						cnt_buf_release(&b);
						cnt_buf_release(&b2);
					}
	CHECK(ok);
	CHECK_EQ_INT(cases, 4 * 3 * CNT_WIN_COUNT * 3 * 3);
}

/* golden with from..to replaced by edit, parsed: refused naming want. */
static int rejects(const char *from, const char *to, const char *want)
{
	char buf[4096];
	const char *at = strstr(golden, from);
	cnt_viewdesc d;
	cnt_err err;
	size_t pre;

	if (at == NULL) {
		fprintf(stderr, "'%s' is not in the golden description\n", from);
		return 0;
	}
	pre = (size_t)(at - golden);
	snprintf(buf, sizeof(buf), "%.*s%s%s", (int)pre, golden, to, at + strlen(from));
	if (cnt_viewdesc_parse(&d, buf, strlen(buf), &err) == 0) {
		cnt_viewdesc_release(&d);
		fprintf(stderr, "accepted %s\n", buf);
		return 0;
	}
	if (strstr(err.msg, want) == NULL) {
		fprintf(stderr, "'%s' said '%s', expected '%s'\n", to, err.msg, want);
		return 0;
	}
	return 1;
}

static void test_bad_descriptions(void)
{
	cnt_viewdesc d;
	cnt_err err;

	CHECK(rejects("\"board\":\"b\"", "\"board\":1", "$.board: expected a string"));
	CHECK(rejects("\"board\":\"b\"", "\"boards\":\"b\"", "$.board: missing"));
	CHECK(rejects("\"board\":\"b\"", "\"board\":\"\"", "$.board: expected a non-empty string"));
	CHECK(rejects("\"board\":\"b\"", "\"board\":\"b\\u0000c\"", "not JSON"));
	CHECK(rejects("\"board\":\"b\",", "\"board\":\"b\",\"board\":\"c\",", "not JSON"));
	CHECK(rejects("\"tenant_id\":\"t\"", "\"tenant_id\":null", "$.tenant_id: expected a string"));
	CHECK(rejects("\"counter_version\":null", "\"counter_version\":0", "$.counter_version: 0 is out of range"));
	CHECK(rejects("\"counter_version\":null", "\"counter_version\":\"1\"", "$.counter_version: expected an integer or null"));
	CHECK(rejects("\"counter_type\":\"exact\"", "\"counter_type\":\"sum\"", "$.counter_type: unknown value"));
	CHECK(rejects("\"scope_kind\":\"global\"", "\"scope_kind\":\"planet\"", "$.scope_kind: unknown value"));
	CHECK(rejects("\"scope\":\"global\"", "\"scope\":\"eu\"", "$.scope: a global board's scope is \"global\""));
	CHECK(rejects("\"version\":1", "\"version\":0", "$.version: 0 is out of range"));
	CHECK(rejects("\"version\":1", "\"version\":1000000", "$.version: 1000000 is out of range"));
	CHECK(rejects("\"version\":1", "\"version\":1.0", "$.version: expected an integer"));
	CHECK(rejects("\"version\":1", "\"version\":99999999999999999999999", "not JSON"));
	CHECK(rejects("\"window\":{", "\"window\":[],\"x\":{", "$.window: expected an object"));
	CHECK(rejects("\"kind\":\"all_time\"", "\"kind\":\"decade\"", "$.window.kind: unknown value"));
	CHECK(rejects("\"label\":\"all_time\"", "\"label\":\"day\"", "$.window.label: expected \"all_time\""));
	CHECK(rejects("\"from\":-4611686018427387904", "\"from\":4611686018427387905", "$.window: from is after to"));
	CHECK(rejects("\"timezone\":\"UTC\"", "\"tz\":\"UTC\"", "$.window.timezone: missing"));
	CHECK(rejects("\"as_of\":1772366400000", "\"as_of\":null", "$.log_position.max_ingest_time: differs from $.as_of"));
	CHECK(rejects("\"max_ingest_time\":1772366400000", "\"max_ingest_time\":1", "differs from $.as_of"));
	CHECK(rejects("\"log_position\":{\"max_ingest_time\":1772366400000}", "\"log_position\":1772366400000",
		"$.log_position: expected an object"));
	CHECK(rejects("\"order\":\"desc\"", "\"order\":\"down\"", "$.order: unknown value"));
	CHECK(rejects("[\"earliest_achiever\",\"member_ref_asc\"]", "[]", "$.tie_break: expected an array of 1 to 3"));
	CHECK(rejects("[\"earliest_achiever\",\"member_ref_asc\"]", "[\"earliest_achiever\"]",
		"$.tie_break: the last rule must be \"member_ref_asc\""));
	CHECK(rejects("[\"earliest_achiever\",\"member_ref_asc\"]", "[\"member_ref_asc\",\"member_ref_asc\"]",
		"$.tie_break[1]: \"member_ref_asc\" given twice"));
	CHECK(rejects("[\"earliest_achiever\",\"member_ref_asc\"]",
		"[\"earliest_achiever\",\"latest_achiever\",\"member_ref_asc\",\"member_ref_asc\"]", "expected an array of 1 to 3"));
	CHECK(rejects("[\"earliest_achiever\",\"member_ref_asc\"]", "[\"first\",\"member_ref_asc\"]", "$.tie_break[0]: unknown rule"));
	CHECK(rejects("[\"earliest_achiever\",\"member_ref_asc\"]", "[7,\"member_ref_asc\"]", "$.tie_break[0]: unknown rule"));
	CHECK(rejects("\"rank_numbering\":\"competition\"", "\"rank_numbering\":\"olympic\"", "$.rank_numbering: unknown value"));
	CHECK(rejects("\"materialised_cap\":3", "\"materialised_cap\":0", "$.materialised_cap: 0 is out of range"));
	CHECK(rejects("\"freshness_budget_s\":600", "\"freshness_budget_s\":-1", "$.freshness_budget_s: -1 is out of range"));
	CHECK(rejects("\"scale\":\"linear\"", "\"scale\":\"cubic\"", "$.histogram.scale: unknown value"));
	CHECK(rejects("\"bins\":10", "\"bins\":0", "$.histogram.bins: 0 is out of range"));
	CHECK(rejects("\"bins\":10", "\"bins\":131073", "$.histogram.bins: 131073 is out of range"));
	CHECK(rejects("\"members\":7", "\"members\":-7", "$.members: -7 is out of range"));
	CHECK(rejects("\"members\":7", "\"members\":4294967295", "$.members: 4294967295 is out of range"));
	CHECK(rejects("\"head\":3", "\"head\":4", "$.head: expected the smaller of members and materialised_cap"));
	CHECK(rejects("\"head\":3", "\"head\":2", "$.head: expected the smaller"));
	CHECK(rejects("{\"board\"", "[{\"board\"", "not JSON"));
	CHECK(rejects("\"head\":3}", "\"head\":3} x", "not JSON"));
	/* not an object at all; nothing; too long */
	CHECK_EQ_INT(cnt_viewdesc_parse(&d, "[]", 2, &err), -1);
	CHECK_EQ_STR(err.msg, "$: expected an object");
	CHECK_EQ_INT(cnt_viewdesc_parse(&d, "", 0, &err), -1);
	CHECK_EQ_INT(cnt_viewdesc_parse(&d, golden, CNT_VIEWDESC_MAX + 1, &err), -1);
	CHECK(strstr(err.msg, "more than the 1048576 a description may have") != NULL);
	/* the text need not end in a NUL: only n bytes are read */
	CHECK_EQ_INT(cnt_viewdesc_parse(&d, golden, sizeof(golden) - 2, &err), -1);
	/* unknown keys are ignored */
	{
		char buf[4096];

		snprintf(buf, sizeof(buf), "{\"future\":[1,{\"x\":2}],%s", golden + 1);
		CHECK_EQ_INT(cnt_viewdesc_parse(&d, buf, strlen(buf), &err), 0);
		cnt_viewdesc_release(&d);
	}
}

static void test_writer_refuses(void)
{
	cnt_buf b = CNT_BUF_INIT;
	cnt_err err;
	cnt_viewdesc d;

#define REFUSED(edit, want) do { \
		d = base(); \
		edit; \
		b.len = 0; \
		CHECK_EQ_INT(cnt_viewdesc_write(&d, &b, &err), -1); \
		CHECK(strstr(err.msg, want) != NULL); \
		CHECK_EQ_INT(b.len, 0); \
	} while (0)
	REFUSED(d.scope_kind = CNT_SCOPE_REGION; d.scope = "eu\xff", "$.scope: not valid UTF-8");
	REFUSED(d.scope_kind = CNT_SCOPE_REGION; d.scope = "\xc0\xaf", "$.scope: not valid UTF-8");       /* overlong */
	REFUSED(d.scope_kind = CNT_SCOPE_REGION; d.scope = "\xed\xa0\x80", "$.scope: not valid UTF-8");   /* surrogate */
	REFUSED(d.scope_kind = CNT_SCOPE_REGION; d.scope = "\xf4\x90\x80\x80", "$.scope: not valid UTF-8"); /* > U+10FFFF */
	REFUSED(d.scope_kind = CNT_SCOPE_REGION; d.scope = "\xe2\x82", "$.scope: not valid UTF-8");       /* cut short */
	REFUSED(d.board = NULL, "$.board");
	REFUSED(d.version = 0, "$.version");
	REFUSED(d.head = 7, "$.head");
	REFUSED(d.bins = 0, "$.histogram.bins");
	REFUSED(d.ntie_break = 1, "$.tie_break: the last rule");
	REFUSED(d.from = 10; d.to = 9, "$.window: from is after to");
	REFUSED(d.freshness_budget_s = -1, "$.freshness_budget_s");
	REFUSED(d.window_label = "season", "$.window.label");
	REFUSED(d.counter_version = -1, "$.counter_version");
	/* a valid multi-byte scope is written as it is */
	d = base();
	d.scope_kind = CNT_SCOPE_REGION;
	d.scope = "\xe2\x82\xac";
	b.len = 0;
	CHECK_EQ_INT(cnt_viewdesc_write(&d, &b, &err), 0);
	CHECK(memmem(b.p, b.len, "\"scope\":\"\xe2\x82\xac\"", 11) != NULL);
	cnt_buf_release(&b);
#undef REFUSED
}

/* A verified view's two keys: written last, read back; refused when
 * malformed or alone (view/verified.h). */
static void test_verified_keys(void)
{
	cnt_viewdesc d = base(), r;
	cnt_buf b = CNT_BUF_INIT, b2 = CNT_BUF_INIT;
	cnt_err err;
	static const char tail[] = "\"members\":7,\"head\":3,\"verified\":true,\"audit_id\":\"a-1\"}";

	d.verified = 1;
	d.audit_id = "a-1";
	CHECK_EQ_INT(cnt_viewdesc_write(&d, &b, &err), 0);
	CHECK(b.len > sizeof(tail) && memcmp(b.p + b.len - (sizeof(tail) - 1), tail, sizeof(tail) - 1) == 0);
	CHECK_EQ_INT(cnt_viewdesc_parse(&r, (const char *)b.p, b.len, &err), 0);
	CHECK(r.verified == 1);
	CHECK_EQ_STR(r.audit_id, "a-1");
	CHECK_EQ_INT(cnt_viewdesc_write(&r, &b2, &err), 0);
	CHECK(b2.len == b.len && memcmp(b2.p, b.p, b.len) == 0);
	cnt_viewdesc_release(&r);
	/* a fast view reads as not verified */
	CHECK_EQ_INT(cnt_viewdesc_parse(&r, golden, sizeof(golden) - 1, &err), 0);
	CHECK(r.verified == 0 && r.audit_id == NULL);
	cnt_viewdesc_release(&r);
	CHECK(rejects("\"head\":3}", "\"head\":3,\"verified\":false}", "$.verified: expected true"));
	CHECK(rejects("\"head\":3}", "\"head\":3,\"verified\":true}", "$.audit_id: missing"));
	CHECK(rejects("\"head\":3}", "\"head\":3,\"verified\":true,\"audit_id\":\"\"}", "$.audit_id: expected a non-empty"));
	CHECK(rejects("\"head\":3}", "\"head\":3,\"audit_id\":\"a-1\"}", "$.audit_id: only a verified view"));
	/* the writer refuses what the reader would */
	d.audit_id = NULL;
	b.len = 0;
	CHECK(cnt_viewdesc_write(&d, &b, &err) != 0);
	d.audit_id = "a-1";
	d.has_as_of = 0;
	CHECK(cnt_viewdesc_write(&d, &b, &err) != 0);
	cnt_buf_release(&b);
	cnt_buf_release(&b2);
}

static void test_stale(void)
{
	cnt_viewdesc d = base();

	CHECK(!cnt_viewdesc_stale(&d, d.as_of + 600000));
	CHECK(cnt_viewdesc_stale(&d, d.as_of + 600001));
	d.freshness_budget_s = 0;
	CHECK(!cnt_viewdesc_stale(&d, INT64_MAX));
	d.freshness_budget_s = INT64_MAX;
	CHECK(!cnt_viewdesc_stale(&d, INT64_MAX));
	d.freshness_budget_s = 1;
	d.as_of = INT64_MAX - 10;
	CHECK(!cnt_viewdesc_stale(&d, INT64_MAX));
	d.has_as_of = 0;
	CHECK(cnt_viewdesc_stale(&d, INT64_MIN));
}

static void test_names(void)
{
	CHECK_EQ_STR(cnt_viewdesc_tie_name(CNT_TIE_LATEST_ACHIEVER), "latest_achiever");
	CHECK_EQ_STR(cnt_viewdesc_numbering_name(CNT_RANK_DENSE), "dense");
	CHECK_EQ_STR(cnt_viewdesc_scope_kind_name(CNT_SCOPE_COHORT), "cohort");
	CHECK_EQ_STR(cnt_viewdesc_tie_name((cnt_tie_break)9), "?");
}

int main(void)
{
	RUN(test_write_golden_and_round_trip);
	RUN(test_round_trip_variants);
	RUN(test_bad_descriptions);
	RUN(test_writer_refuses);
	RUN(test_verified_keys);
	RUN(test_stale);
	RUN(test_names);
	return unit_report("test_viewdesc");
}
