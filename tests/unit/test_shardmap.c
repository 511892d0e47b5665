/* shardmap: the hot-key shard map - parsing, canonical text, lookup,
 * derivation (splits, merges with hysteresis and hold time). */
#include <stdio.h>
#include <string.h>

#include "count/shardmap.h"
#include "time/timefmt.h"
#include "unit.h"

static cnt_slice S(const char *s) { cnt_slice x = {s, strlen(s)}; return x; }

static const char good[] =
	"{\"format\": \"cnt-shardmap/1\", \"updated\": \"2026-12-01T00:00:00.000Z\", \"events\": 1000, \"keys\": [\n"
	"  {\"tenant_id\": \"a\", \"counter_id\": \"c\", \"member_ref\": \"m1\", \"shards\": 4, \"share\": 0.030000, "
	"\"history\": [{\"at\": \"2026-11-30T00:00:00.000Z\", \"from\": 1, \"to\": 8, \"share\": 0.070000}, "
	"{\"at\": \"2026-12-01T00:00:00.000Z\", \"from\": 8, \"to\": 4, \"share\": 0.030000}]},\n"
	"  {\"tenant_id\": \"a\", \"counter_id\": \"c\", \"member_ref\": \"m2\", \"shards\": 1, \"share\": 0.000000, "
	"\"history\": [{\"at\": \"2026-11-29T00:00:00.000Z\", \"from\": 1, \"to\": 2, \"share\": 0.020000}, "
	"{\"at\": \"2026-11-30T00:00:00.000Z\", \"from\": 2, \"to\": 1, \"share\": 0.001000}]}\n"
	"]}\n";

static void test_parse_format_lookup(void)
{
	cnt_err err;
	cnt_buf b = CNT_BUF_INIT;
	cnt_shardmap *m = cnt_shardmap_parse(good, strlen(good), "g", &err);

	CHECK(m != NULL);
	if (m == NULL)
		return;
	CHECK_EQ_INT((int)cnt_shardmap_nkeys(m), 2);
	CHECK_EQ_INT((int)cnt_shardmap_shards(m, S("a"), S("c"), S("m1")), 4);
	CHECK_EQ_INT((int)cnt_shardmap_shards(m, S("a"), S("c"), S("m2")), 1);
	CHECK_EQ_INT((int)cnt_shardmap_shards(m, S("a"), S("c"), S("m3")), 1);
	CHECK_EQ_INT((int)cnt_shardmap_shards(m, S("a"), S("cm"), S("1")), 1);   /* parts are not run together */
	CHECK_EQ_INT((int)cnt_shardmap_max(m), 4);
	CHECK(cnt_shardmap_key_at(m, 0)->nhistory == 2 && cnt_shardmap_key_at(m, 0)->history[0].to == 8);
	/* the canonical text is the text parsed */
	CHECK_EQ_INT(cnt_shardmap_format(m, &b, &err), 0);
	CHECK(b.len == strlen(good) && memcmp(b.p, good, b.len) == 0);
	cnt_buf_release(&b);
	cnt_shardmap_free(m);
	CHECK_EQ_INT((int)cnt_shardmap_shards(NULL, S("a"), S("c"), S("m1")), 1);
}

/* each broken copy of good is refused, with the path and the reason */
static void test_bad(void)
{
	static const struct { const char *from, *to, *msg; } cases[] = {
		{"cnt-shardmap/1", "cnt-shardmap/2", "$.format"},
		{"\"shards\": 4", "\"shards\": 3", "$.keys[0]: \"shards\": 3 is not a power of two"},
		{"\"shards\": 4", "\"shards\": 8", "last change's \"to\" is 4"},
		{"\"from\": 1, \"to\": 8", "\"from\": 2, \"to\": 8", "every key starts with 1 shard"},
		{"\"from\": 8, \"to\": 4", "\"from\": 4, \"to\": 4", "\"from\" is 4, not 8"},
		{"\"member_ref\": \"m2\"", "\"member_ref\": \"m1\"", "$.keys[1]: not after the key before it"},
		{"\"member_ref\": \"m2\"", "\"member_ref\": \"m0\"", "$.keys[1]: not after"},
		{"\"member_ref\": \"m1\"", "\"member_ref\": \"\"", "1 to 1024 bytes"},
		{"\"share\": 0.030000, ", "\"share\": 1.5, ", "\"share\" is not from 0 to 1"},
		{"\"events\": 1000", "\"events\": 1000, \"extra\": 1", "$: unknown member \"extra\""},
		{"\"events\": 1000", "\"events\": 1000, \"events\": 1", "duplicate object key"},
		{"2026-11-30T00:00:00.000Z\", \"from\": 1", "2026-12-01T00:00:00.000Z\", \"from\": 1", "not after the previous"},
		{"\"updated\": \"2026-12-01T00:00:00.000Z\"", "\"updated\": \"2026-11-30T00:00:00.000Z\"", "after the map's \"updated\""},
		{"\"updated\": \"2026-12-01T00:00:00.000Z\"", "\"updated\": \"2026-12-01\"", "not an RFC 3339 time"},
		{"\"history\": [{\"at\": \"2026-11-29", "\"history\": [], \"x\": [{\"at\": \"2026-11-29", "unknown member \"x\""},
		{"\"keys\": [", "\"keys\": {", "line"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[4096];
		const char *at = strstr(good, cases[i].from);
		cnt_err err;
		cnt_shardmap *m;

		CHECK(at != NULL);
		snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - good), good, cases[i].to, at + strlen(cases[i].from));
		m = cnt_shardmap_parse(text, strlen(text), "bad", &err);
		CHECK(m == NULL);
		if (m != NULL) {
			cnt_shardmap_free(m);
			continue;
		}
		if (strstr(err.msg, cases[i].msg) == NULL || strncmp(err.msg, "shard map 'bad': ", 17) != 0)
			fprintf(stderr, "case %zu: %s\n", i, err.msg);
		CHECK(strstr(err.msg, cases[i].msg) != NULL);
	}
}

static void test_need(void)
{
	cnt_shardmap_policy p = CNT_SHARDMAP_POLICY_INIT;

	CHECK_EQ_INT((int)cnt_shardmap_need(0, &p), 1);
	CHECK_EQ_INT((int)cnt_shardmap_need(0.01, &p), 1);      /* at the target: still one */
	CHECK_EQ_INT((int)cnt_shardmap_need(0.0101, &p), 2);
	CHECK_EQ_INT((int)cnt_shardmap_need(0.0695, &p), 8);
	CHECK_EQ_INT((int)cnt_shardmap_need(1, &p), 64);        /* at most max_shards */
}

static char stats[1024];

static const char *st(unsigned out, unsigned m1, unsigned m2)
{
	snprintf(stats, sizeof(stats), "{\"tool\": \"cnt-window\", \"out\": %u, \"top_keys\": ["
		"{\"tenant_id\": \"a\", \"counter_id\": \"c\", \"member_ref\": \"m1\", \"events\": %u, \"share\": 0},"
		"{\"tenant_id\": \"a\", \"counter_id\": \"c\", \"member_ref\": \"m2\", \"events\": %u}]}", out, m1, m2);
	return stats;
}

static int obs(cnt_shardmap_obs *o, const char *text, cnt_err *err)
{
	return cnt_shardmap_obs_add(o, text, strlen(text), "s", err);
}

static int derive(cnt_shardmap *m, const char *text, int64_t now, cnt_shardmap_summary *sum)
{
	cnt_shardmap_policy p = CNT_SHARDMAP_POLICY_INIT;
	cnt_err err;
	cnt_shardmap_obs *o = cnt_shardmap_obs_new(&err);
	int rc = cnt_shardmap_obs_add(o, text, strlen(text), "s", &err);

	if (rc == 0)
		rc = cnt_shardmap_derive(m, o, &p, now, sum, &err);
	cnt_shardmap_obs_free(o);
	return rc;
}

static void test_derive(void)
{
	const int64_t day = CNT_MS_PER_DAY, t0 = 1764547200000;   /* 2025-12-01 */
	cnt_err err;
	cnt_shardmap *m = cnt_shardmap_new(&err);
	cnt_shardmap_summary sum;
	const cnt_shardmap_key *k;

	/* m1 7 %: 8 shards; m2 0.5 %: not added */
	CHECK_EQ_INT(derive(m, st(10000, 700, 50), t0, &sum), 0);
	CHECK(sum.splits == 1 && sum.merges == 0 && sum.keys == 1 && sum.hot == 1);
	k = cnt_shardmap_key_at(m, 0);
	CHECK(k->shards == 8 && k->nhistory == 1 && k->history[0].at_ms == t0 && k->history[0].from == 1);
	CHECK_EQ_INT((int)cnt_shardmap_shards(m, S("a"), S("c"), S("m1")), 8);
	/* not after the last update: refused, map unchanged */
	CHECK_EQ_INT(derive(m, st(10000, 100, 0), t0, &sum), -1);
	CHECK_EQ_INT((int)cnt_shardmap_key_at(m, 0)->shards, 8);
	/* 3 %: inside the band (2 % .. 8 %): no change */
	CHECK_EQ_INT(derive(m, st(10000, 300, 0), t0 + day, &sum), 0);
	CHECK(sum.splits == 0 && sum.merges == 0 && cnt_shardmap_key_at(m, 0)->shards == 8);
	CHECK(cnt_shardmap_key_at(m, 0)->share == 0.03);
	/* 1.5 %: below 8 * 1 % * 0.25, a day after: merged to 2 */
	CHECK_EQ_INT(derive(m, st(10000, 150, 0), t0 + 2 * day, &sum), 0);
	CHECK(sum.merges == 1 && cnt_shardmap_key_at(m, 0)->shards == 2);
	/* m2 rises to 5 %: split to 8, added in order after m1 */
	CHECK_EQ_INT(derive(m, st(10000, 150, 500), t0 + 2 * day + 1, &sum), 0);
	CHECK(sum.splits == 1 && sum.keys == 2 && cnt_shardmap_key_at(m, 1)->shards == 8);
	/* m2 falls to 0 the next hour: held (a day since its split) */
	CHECK_EQ_INT(derive(m, st(10000, 150, 0), t0 + 2 * day + 3600000, &sum), 0);
	CHECK(sum.merges == 0 && cnt_shardmap_key_at(m, 1)->shards == 8);
	/* a day later, not listed at all: merged to 1, kept with its history */
	CHECK_EQ_INT(derive(m, st(10000, 150, 0), t0 + 3 * day + 1, &sum), 0);
	k = cnt_shardmap_key_at(m, 1);
	CHECK(sum.merges == 1 && k->shards == 1 && k->nhistory == 2 && k->history[1].from == 8 &&
	      k->history[1].to == 1 && k->history[1].at_ms == t0 + 3 * day + 1);
	CHECK_EQ_INT((int)cnt_shardmap_shards(m, S("a"), S("c"), S("m2")), 1);
	cnt_shardmap_free(m);
}

/* A key that flaps every derivation (hold 0) keeps at most
 * CNT_SHARDMAP_MAX_HISTORY changes, still a chain from 1 that parses. */
static void test_history_cap(void)
{
	cnt_shardmap_policy p = {0.01, 0.5, 0, 64};
	cnt_err err;
	cnt_shardmap *m = cnt_shardmap_new(&err), *back;
	cnt_shardmap_summary sum;
	cnt_buf b = CNT_BUF_INIT;
	const cnt_shardmap_key *k;
	char hot[1024], cold[1024];
	int ok = 1;

	snprintf(hot, sizeof(hot), "%s", st(100, 7, 0));
	snprintf(cold, sizeof(cold), "%s", st(100, 0, 0));
	for (int i = 0; i < CNT_SHARDMAP_MAX_HISTORY + 3 && ok; i++) {
		cnt_shardmap_obs *o = cnt_shardmap_obs_new(&err);
		const char *t = i % 2 ? cold : hot;

		ok = cnt_shardmap_obs_add(o, t, strlen(t), "s", &err) == 0 &&
		     cnt_shardmap_derive(m, o, &p, 1000 * (int64_t)(i + 1), &sum, &err) == 0 && sum.splits + sum.merges == 1;
		cnt_shardmap_obs_free(o);
	}
	CHECK(ok);
	k = cnt_shardmap_key_at(m, 0);
	CHECK(k->nhistory <= CNT_SHARDMAP_MAX_HISTORY && k->nhistory >= CNT_SHARDMAP_MAX_HISTORY - 2);
	CHECK(k->history[0].from == 1 && k->history[0].to == 8 && k->history[k->nhistory - 1].to == k->shards);
	CHECK_EQ_INT(cnt_shardmap_format(m, &b, &err), 0);
	back = cnt_shardmap_parse((const char *)b.p, b.len, "cap", &err);
	CHECK(back != NULL);
	cnt_shardmap_free(back);
	cnt_buf_release(&b);
	cnt_shardmap_free(m);
}

static void test_obs(void)
{
	cnt_err err;
	cnt_shardmap_obs *o = cnt_shardmap_obs_new(&err);

	CHECK(cnt_shardmap_obs_add(o, "{\"out\": 5}", 10, "s", &err) == -1 && strstr(err.msg, "stats 's': $: \"top_keys\" is missing"));
	CHECK(cnt_shardmap_obs_add(o, "[]", 2, "s", &err) == -1 && strstr(err.msg, "not a JSON object"));
	CHECK(obs(o, st(10, 11, 0), &err) == -1 && strstr(err.msg, "\"events\" is not from 0"));
	CHECK(obs(o, st(10, 1, 2), &err) == 0);
	CHECK(obs(o, st(30, 1, 2), &err) == 0);
	CHECK(cnt_shardmap_obs_events(o) == 40);
	cnt_shardmap_obs_free(o);
}

int main(void)
{
	RUN(test_parse_format_lookup);
	RUN(test_bad);
	RUN(test_need);
	RUN(test_derive);
	RUN(test_obs);
	RUN(test_history_cap);
	return unit_report("test_shardmap");
}
