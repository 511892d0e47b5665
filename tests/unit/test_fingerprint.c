/*
 * test_fingerprint.c - counter-version and leaderboard fingerprints: the
 * same definitions give the same fingerprint however the file is written,
 * every meaning field changes it, compatible fields do not, and a recorded
 * table refuses definitions that changed, naming the field.
 */
#include "model/fingerprint.h"
#include "base/jsonload.h"
#include "model/bucket.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

static const char base[] =
	"{\"format\": \"cnt-definitions/1\",\n"
	" \"tenants\": [{\"tenant_id\": \"acme\", \"timezone\": \"Europe/Berlin\"},\n"
	"              {\"tenant_id\": \"k\", \"timezone\": \"UTC\"}],\n"
	" \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"distance_m\", \"versions\": [\n"
	"   {\"version\": 1, \"type\": \"exact\", \"bounds_lo\": 0, \"bounds_hi\": 1000,\n"
	"    \"lateness_horizon_s\": 3600, \"dedup_horizon_s\": 86400, \"dedup_key\": \"idempotency_key\",\n"
	"    \"client_writable\": false, \"windows\": [\"all_time\", \"week\"], \"unit_cost_per_m\": 0.5}]}],\n"
	" \"leaderboards\": [{\"board_id\": \"b1\", \"tenant_id\": \"acme\", \"counter_id\": \"distance_m\",\n"
	"   \"window\": \"week\", \"week_start\": \"monday\", \"scope_kind\": \"global\",\n"
	"   \"tie_break\": [\"earliest_achiever\"], \"rank_numbering\": \"competition\",\n"
	"   \"materialised_cap\": 100, \"freshness_budget_s\": 60}]}\n";

/* base with the first occurrence of from replaced by to (malloc'd). */
static char *edit(const char *from, const char *to)
{
	const char *at = strstr(base, from);
	size_t n = strlen(base) - strlen(from) + strlen(to) + 1;
	char *s = malloc(n);

	if (at == NULL || s == NULL) {
		fprintf(stderr, "edit: '%s' not in base\n", from);
		abort();
	}
	memcpy(s, base, (size_t)(at - base));
	strcpy(s + (at - base), to);
	strcat(s, at + strlen(from));
	return s;
}

static cnt_defs *load(const char *text)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_defs *d = cnt_defs_parse(text, strlen(text), "t.json", &err);
	if (d == NULL)
		fprintf(stderr, "load: %s\n", err.msg);
	return d;
}

/* Fingerprints of counter 0 version 0 and board 0. */
static void fps(const cnt_defs *d, char c[CNT_FP_HEX], char b[CNT_FP_HEX])
{
	cnt_err err = {"", CNT_ERR_DATA};
	const cnt_counter *ct = cnt_defs_counter_at(d, 0);
	json_t *cd = cnt_fp_counter_def(ct, &ct->versions[0]);
	json_t *bd = cnt_fp_board_def(cnt_defs_board_at(d, 0));

	CHECK(cnt_fp_hex(cd, c, &err) == 0);
	CHECK(cnt_fp_hex(bd, b, &err) == 0);
	json_decref(cd);
	json_decref(bd);
}

static int count_fn(void *ctx, const cnt_fp_change *ch)
{
	int *n = ctx;
	(void)ch;
	(*n)++;
	return 0;
}

/* Compares base with base edited; returns refused count, *changes set. */
static int classify(const char *from, const char *to, int *changes, int *fp_same)
{
	cnt_err err = {"", CNT_ERR_DATA};
	char *t = edit(from, to);
	cnt_defs *a = load(base), *b = load(t);
	char c1[CNT_FP_HEX], b1[CNT_FP_HEX], c2[CNT_FP_HEX], b2[CNT_FP_HEX];
	int r = -1;

	*changes = 0;
	if (a != NULL && b != NULL) {
		fps(a, c1, b1);
		fps(b, c2, b2);
		*fp_same = strcmp(c1, c2) == 0 && strcmp(b1, b2) == 0;
		r = cnt_fp_compare_defs(a, b, count_fn, changes, &err);
	}
	cnt_defs_free(a);
	cnt_defs_free(b);
	free(t);
	return r;
}

static void test_canonical(void)
{
	static const char reordered[] =
		"{\"leaderboards\":[{\"freshness_budget_s\":60,\"materialised_cap\":100,"
		"\"rank_numbering\":\"competition\",\"tie_break\":[\"earliest_achiever\",\"member_ref_asc\"],"
		"\"counter_id\":\"distance_m\",\"tenant_id\":\"acme\",\"board_id\":\"b1\",\"window\":\"week\"}],"
		"\"counters\":[{\"versions\":[{\"unit_cost_per_m\":0.5,\"windows\":[\"week\",\"all_time\"],"
		"\"dedup_horizon_s\":86400,\"lateness_horizon_s\":3600,\"bounds_hi\":1000,\"bounds_lo\":0,"
		"\"type\":\"exact\",\"version\":1}],\"counter_id\":\"distance_m\",\"tenant_id\":\"acme\"}],"
		"\"tenants\":[{\"timezone\":\"Europe/Berlin\",\"tenant_id\":\"acme\"},"
		"{\"timezone\":\"UTC\",\"tenant_id\":\"k\"}],\"format\":\"cnt-definitions/1\"}";
	cnt_defs *a = load(base), *b = load(reordered);
	char c1[CNT_FP_HEX], b1[CNT_FP_HEX], c2[CNT_FP_HEX], b2[CNT_FP_HEX];

	CHECK(a != NULL && b != NULL);
	if (a == NULL || b == NULL)
		return;
	fps(a, c1, b1);
	fps(b, c2, b2);
	CHECK_EQ_STR(c1, c2);
	CHECK_EQ_STR(b1, b2);
	CHECK_EQ_INT(strlen(c1), 32);
	CHECK(strcmp(c1, b1) != 0);
	cnt_defs_free(a);
	cnt_defs_free(b);
}

static void test_meaning_fields(void)
{
	static const char *const cases[][2] = {
		{"\"type\": \"exact\"", "\"type\": \"max\""},
		{"\"bounds_lo\": 0", "\"bounds_lo\": 1"},
		{"\"bounds_hi\": 1000", "\"bounds_hi\": 2000"},
		{"\"lateness_horizon_s\": 3600", "\"lateness_horizon_s\": 7200"},
		{"\"dedup_horizon_s\": 86400", "\"dedup_horizon_s\": 3600"},
		{"\"dedup_key\": \"idempotency_key\"", "\"dedup_key\": \"item_member\""},
		{"\"client_writable\": false", "\"client_writable\": true"},
		{"\"version\": 1,", "\"version\": 1, \"effective_from\": \"2026-01-01T00:00:00Z\","},
		{"\"timezone\": \"Europe/Berlin\"", "\"timezone\": \"UTC\""},
		{"\"tie_break\": [\"earliest_achiever\"]", "\"tie_break\": [\"latest_achiever\"]"},
		{"\"rank_numbering\": \"competition\"", "\"rank_numbering\": \"dense\""},
		{"\"week_start\": \"monday\"", "\"week_start\": \"sunday\""},
		{"\"scope_kind\": \"global\"", "\"scope_kind\": \"region\""},
		{"\"window\": \"week\"", "\"window\": \"all_time\""},
		{"\"freshness_budget_s\": 60}", "\"freshness_budget_s\": 60, \"order\": \"asc\"}"},
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int changes, same = 1, r = classify(cases[i][0], cases[i][1], &changes, &same);
		if (r < 1 || same)
			fprintf(stderr, "case %zu: %s -> %s\n", i, cases[i][0], cases[i][1]);
		CHECK(r >= 1);
		CHECK(!same);
	}
}

static void test_compatible_fields(void)
{
	static const char *const cases[][2] = {
		{"\"unit_cost_per_m\": 0.5", "\"unit_cost_per_m\": 2"},
		{"[\"all_time\", \"week\"]", "[\"all_time\", \"week\", \"day\"]"},
		{"\"materialised_cap\": 100", "\"materialised_cap\": 500"},
		{"\"freshness_budget_s\": 60", "\"freshness_budget_s\": 5"},
		{"\"freshness_budget_s\": 60}", "\"freshness_budget_s\": 60, \"histogram\": {\"buckets\": 64}}"},
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int changes, same = 0, r = classify(cases[i][0], cases[i][1], &changes, &same);
		if (r != 0 || !same || changes != 1)
			fprintf(stderr, "case %zu: %s -> %s\n", i, cases[i][0], cases[i][1]);
		CHECK_EQ_INT(r, 0);
		CHECK_EQ_INT(changes, 1);
		CHECK(same);
	}
}

static void test_one_way_fields(void)
{
	int changes, same = 0;

	/* a window removed, a cap lowered: same fingerprint, still refused */
	CHECK_EQ_INT(classify("[\"all_time\", \"week\"]", "[\"week\"]", &changes, &same), 1);
	CHECK(same);
	CHECK_EQ_INT(classify("\"materialised_cap\": 100", "\"materialised_cap\": 50", &changes, &same), 1);
	/* a version or board removed, one added */
	CHECK_EQ_INT(classify("\"leaderboards\": [{\"board_id\": \"b1\"", "\"leaderboards\": [{\"board_id\": \"b2\"",
			      &changes, &same), 1);
	CHECK_EQ_INT(changes, 2);
	CHECK_EQ_INT(classify("\"version\": 1,", "\"version\": 2,", &changes, &same), 1);
	CHECK_EQ_INT(changes, 2);
}

/* The table of one counter version, as a file records it. */
static char *table_of(const cnt_defs *d)
{
	cnt_err err = {"", CNT_ERR_DATA};
	const cnt_counter *ct = cnt_defs_counter_at(d, 0);
	cnt_fp_set *s;
	char *text = NULL;

	CHECK_EQ_INT(cnt_fp_policy(d, &err), 0);
	s = cnt_fp_set_new(&err);
	CHECK(s != NULL);
	CHECK_EQ_INT(cnt_fp_set_add(s, ct->tenant_id, strlen(ct->tenant_id), ct->counter_id,
			     strlen(ct->counter_id), 1, &err), 0);
	/* again (the cache), a version nobody defines, a name with NUL */
	CHECK_EQ_INT(cnt_fp_set_add(s, ct->tenant_id, strlen(ct->tenant_id), ct->counter_id,
			     strlen(ct->counter_id), 1, &err), 0);
	CHECK_EQ_INT(cnt_fp_set_add(s, "acme", 4, "distance_m", 10, 7, &err), 0);
	CHECK_EQ_INT(cnt_fp_set_add(s, "ac\0me", 5, "x", 1, 1, &err), 0);
	CHECK_EQ_INT(cnt_fp_set_dump(s, NULL, &text, &err), 0);
	cnt_fp_set_free(s);
	cnt_fp_policy_end();
	return text;
}

/* The set remembers its last few adds: a defined version added after
 * more distinct ones than it remembers, and again after them, is recorded
 * once, as when added alone. */
static void test_recent(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_defs *d = load(base);
	const cnt_counter *ct = cnt_defs_counter_at(d, 0);
	char *alone = table_of(d), *text = NULL;
	cnt_fp_set *s;

	CHECK_EQ_INT(cnt_fp_policy(d, &err), 0);
	s = cnt_fp_set_new(&err);
	CHECK(s != NULL);
	for (int round = 0; round < 3; round++)
		for (int32_t v = 1; v <= 20; v++) {
			CHECK_EQ_INT(cnt_fp_set_add(s, "acme", 4, "distance_m", 10, v + 100, &err), 0);
			if (v % 7 == 0)
				CHECK_EQ_INT(cnt_fp_set_add(s, ct->tenant_id, strlen(ct->tenant_id), ct->counter_id,
						     strlen(ct->counter_id), 1, &err), 0);
		}
	CHECK_EQ_INT(cnt_fp_set_add(s, "ac\0me", 5, "x", 1, 1, &err), 0);
	CHECK_EQ_INT(cnt_fp_set_dump(s, NULL, &text, &err), 0);
	CHECK(text != NULL && alone != NULL);
	CHECK_EQ_STR(text, alone);
	cnt_fp_set_free(s);
	cnt_fp_policy_end();
	free(text);
	free(alone);
	cnt_defs_free(d);
}

/* A tracked bucket writer records every version its records name: runs
 * of one version, a version after it whose bytes only extend it, a
 * counter whose name extends another's, the first again. */
static void test_track_runs(void)
{
	static const struct { const char *c; int32_t v; int times; } recs[] = {
		{"distance_m", 1, 3}, {"distance_m", 300, 2}, {"distance_mx", 1, 1}, {"distance_m", 1, 1},
		{"distance_m", 7, 1}};
	static const char defs[] =
		"{\"format\": \"cnt-definitions/1\", \"tenants\": [{\"tenant_id\": \"acme\", \"timezone\": \"UTC\"}],"
		" \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"distance_m\", \"versions\": ["
		"   {\"version\": 1, \"type\": \"exact\"}, {\"version\": 7, \"type\": \"max\","
		"    \"effective_from\": \"2026-01-01T00:00:00Z\"},"
		"   {\"version\": 300, \"type\": \"min\", \"effective_from\": \"2026-02-01T00:00:00Z\"}]},"
		"  {\"tenant_id\": \"acme\", \"counter_id\": \"distance_mx\", \"versions\": ["
		"   {\"version\": 1, \"type\": \"exact\"}]}]}";
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_defs *d = load(defs);
	FILE *f = tmpfile();
	cnt_writer *w;
	cnt_reader *r;
	const cnt_meta_kv *kv;
	size_t nkv;
	json_t *t = NULL;

	CHECK(d != NULL && f != NULL);
	CHECK_EQ_INT(cnt_fp_policy(d, &err), 0);
	w = cnt_bucket_writer_new(fileno(f), "t.avro", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	CHECK(w != NULL && cnt_fp_track(w, CNT_FP_BUCKETS, &err) == 0);
	for (size_t i = 0; w && i < sizeof(recs) / sizeof(recs[0]); i++)
		for (int k = 0; k < recs[i].times; k++) {
			cnt_bucket b;
			char m[32];

			memset(&b, 0, sizeof(b));
			snprintf(m, sizeof(m), "m%zu%d", i, k);
			b.tenant_id = (cnt_slice){"acme", 4};
			b.counter_id = (cnt_slice){recs[i].c, strlen(recs[i].c)};
			b.counter_version = recs[i].v;
			b.member_ref = (cnt_slice){m, strlen(m)};
			b.bucket_end = 3600000;
			b.count = 1;
			b.last_count = b.ingest_count = 1;
			CHECK(cnt_bucket_encode(&b, cnt_writer_buf(w)) == 0);
			CHECK(cnt_writer_commit(w, &err) == 0);
		}
	CHECK(w && cnt_writer_finish(w, &err) == 0);
	cnt_writer_free(w);
	rewind(f);
	r = cnt_reader_open(fileno(f), "t.avro", NULL, &err);
	CHECK(r != NULL);
	nkv = r ? cnt_reader_meta(r, &kv) : 0;
	for (size_t i = 0; i < nkv; i++)
		if (strcmp(kv[i].key, CNT_FP_META) == 0)
			t = cnt_fp_table_parse((const char *)kv[i].val, kv[i].vlen, &err);
	CHECK(t != NULL && json_object_size(t) == 4);
	CHECK(json_object_get(t, "acme/distance_m v1") != NULL && json_object_get(t, "acme/distance_m v300") != NULL &&
		json_object_get(t, "acme/distance_mx v1") != NULL && json_object_get(t, "acme/distance_m v7") != NULL);
	json_decref(t);
	cnt_reader_free(r);
	fclose(f);
	cnt_fp_policy_end();
	cnt_defs_free(d);
}

static void test_table(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	char *t2 = edit("\"type\": \"exact\"", "\"type\": \"max\"");
	char *t3 = edit("[\"all_time\", \"week\"]", "[\"week\"]");
	char *t4 = edit("\"unit_cost_per_m\": 0.5", "\"unit_cost_per_m\": 9");
	char *t5 = edit("\"bounds_hi\": 1000", "\"bounds_hi\": 5");
	cnt_defs *a = load(base), *b = load(t2), *c = load(t3), *e = load(t4), *f = load(t5);
	char *text = table_of(a), *text_e = table_of(e);
	json_t *back;
	cnt_fp_set *s;
	char *vt = NULL;

	CHECK(text != NULL && text_e != NULL);
	/* one entry; only the meaning is recorded, so a compatible edit
	 * records the same bytes */
	CHECK(strstr(text, "\"acme/distance_m v1\":{\"def\":{\"bounds_hi\":1000,") != NULL);
	CHECK(strstr(text, "unit_cost") == NULL && strstr(text, "windows") == NULL);
	CHECK(strstr(text, "v7") == NULL);
	CHECK_EQ_STR(text, text_e);
	back = cnt_fp_table_parse(text, strlen(text), &err);
	CHECK(back != NULL && json_object_size(back) == 1);

	CHECK_EQ_INT(cnt_fp_table_check(back, a, &err), 0);
	CHECK_EQ_INT(cnt_fp_table_check(back, e, &err), 0);
	CHECK_EQ_INT(cnt_fp_table_check(back, c, &err), 0); /* windows: cnt-defs check's business */
	CHECK_EQ_INT(cnt_fp_table_check(back, b, &err), -1);
	CHECK_EQ_STR(err.msg, "acme/distance_m v1: type exact \u2192 max; a change that reinterprets "
			      "counted events needs a new version");
	CHECK_EQ_INT(cnt_fp_table_check(back, f, &err), -1);
	CHECK_EQ_STR(err.msg, "acme/distance_m v1: bounds_hi 1000 \u2192 5; a change that reinterprets "
			      "counted events needs a new version");

	/* inputs through the policy: checked against the definitions, and two
	 * inputs recording one version differently refused */
	{
		char key[] = CNT_FP_META;
		cnt_meta_kv kv = {key, (uint8_t *)text, strlen(text)};
		char *tb = table_of(b);
		cnt_meta_kv kb = {key, (uint8_t *)tb, strlen(tb)};

		CHECK_EQ_INT(cnt_fp_input(&kv, 1, "a.avro", &err), 0); /* no policy: nothing */
		CHECK_EQ_INT(cnt_fp_policy(b, &err), 0);
		CHECK_EQ_INT(cnt_fp_input(&kv, 1, "a.avro", &err), -1);
		CHECK_EQ_STR(err.msg, "'a.avro': acme/distance_m v1: type exact \u2192 max; a change that "
				      "reinterprets counted events needs a new version");
		CHECK_EQ_INT(cnt_fp_policy(NULL, &err), 0);
		CHECK_EQ_INT(cnt_fp_input(&kv, 1, "a.avro", &err), 0);
		CHECK_EQ_INT(cnt_fp_input(&kv, 1, "a2.avro", &err), 0);
		CHECK_EQ_INT(cnt_fp_input(&kb, 1, "b.avro", &err), -1);
		CHECK_EQ_STR(err.msg, "'b.avro': acme/distance_m v1: type max here, exact in 'a.avro'; inputs "
				      "counted under two definitions of one version cannot be combined");
		/* without definitions, an output takes what the inputs recorded */
		s = cnt_fp_set_new(&err);
		CHECK_EQ_INT(cnt_fp_set_add(s, "acme", 4, "distance_m", 10, 1, &err), 0);
		CHECK_EQ_INT(cnt_fp_set_dump(s, NULL, &vt, &err), 0);
		CHECK(vt != NULL && strcmp(vt, text) == 0);
		free(vt);
		/* a view: the board too */
		CHECK_EQ_INT(cnt_fp_set_dump(s, cnt_defs_board_at(a, 0), &vt, &err), 0);
		CHECK(vt != NULL && strstr(vt, "\"board b1\":{\"def\":{\"board_id\":\"b1\"") != NULL);
		CHECK(vt != NULL && strstr(vt, "materialised_cap") == NULL);
		free(vt);
		cnt_fp_set_free(s);
		cnt_fp_policy_end();
		/* an empty set records nothing */
		s = cnt_fp_set_new(&err);
		CHECK_EQ_INT(cnt_fp_set_dump(s, NULL, &vt, &err), 0);
		CHECK(vt == NULL);
		cnt_fp_set_free(s);
		free(tb);
	}
	/* a board edited in place */
	{
		char *t6 = edit("\"tie_break\": [\"earliest_achiever\"]", "\"tie_break\": [\"latest_achiever\"]");
		cnt_defs *g = load(t6);
		json_t *bt;

		s = cnt_fp_set_new(&err);
		CHECK_EQ_INT(cnt_fp_set_dump(s, cnt_defs_board_at(a, 0), &vt, &err), 0);
		bt = cnt_fp_table_parse(vt, strlen(vt), &err);
		CHECK_EQ_INT(cnt_fp_table_check(bt, g, &err), -1);
		CHECK_EQ_STR(err.msg, "board b1: tie_break earliest_achiever,member_ref_asc \u2192 "
				      "latest_achiever,member_ref_asc; a change that reinterprets standings needs a new board");
		json_decref(bt);
		free(vt);
		cnt_fp_set_free(s);
		cnt_defs_free(g);
		free(t6);
	}
	/* a tampered entry */
	{
		const char *bad = "{\"acme/distance_m v1\":{\"fp\":\"00\",\"def\":{\"tenant_id\":\"acme\","
				  "\"counter_id\":\"distance_m\",\"version\":1}}}";
		CHECK(cnt_fp_table_parse(bad, strlen(bad), &err) == NULL);
		CHECK_EQ_STR(err.msg, "fingerprints: entry 'acme/distance_m v1' does not match its definition");
		CHECK(cnt_fp_table_parse("[1]", 3, &err) == NULL);
	}
	free(text);
	free(text_e);
	json_decref(back);
	cnt_defs_free(a);
	cnt_defs_free(b);
	cnt_defs_free(c);
	cnt_defs_free(e);
	cnt_defs_free(f);
	free(t2);
	free(t3);
	free(t4);
	free(t5);
}

/* Seasons: dates move while open, never once closing or closed; the state
 * only moves forward. */
static const char seasons_tail[] =
	" \"seasons\": [{\"season_id\": \"s1\", \"board_id\": \"b1\", \"opens_at\": \"2026-03-02T00:00:00\","
	" \"closes_at\": \"2026-03-09T00:00:00\", \"state\": \"STATE\"}]}\n";

static char *with_season(const char *state, const char *closes)
{
	char *s = malloc(strlen(base) + strlen(seasons_tail) + 64), *at;
	const char *end = strrchr(base, '}');

	memcpy(s, base, (size_t)(end - base));
	s[end - base] = 0;
	strcat(s, ",");
	strcat(s, seasons_tail);
	at = strstr(s, "STATE");
	memmove(at + strlen(state), at + 5, strlen(at + 5) + 1);
	memcpy(at, state, strlen(state));
	if (closes != NULL)
		memcpy(strstr(s, "2026-03-09"), closes, 10);
	return s;
}

static int season_change(const char *s1, const char *c1, const char *s2, const char *c2, int *changes)
{
	cnt_err err = {"", CNT_ERR_DATA};
	char *x = with_season(s1, c1), *y = with_season(s2, c2);
	cnt_defs *a = load(x), *b = load(y);
	int r = -2;

	*changes = 0;
	if (a != NULL && b != NULL)
		r = cnt_fp_compare_defs(a, b, count_fn, changes, &err);
	cnt_defs_free(a);
	cnt_defs_free(b);
	free(x);
	free(y);
	return r;
}

/* An input's table taken under every failed allocation of jansson's: out
 * of memory, and nothing kept that the policy's end does not free (a
 * leak is LeakSanitizer's to find, in make check-san: the input's name
 * was lost when recording its entry failed). */
static void test_input_out_of_memory(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_defs *a = load(base);
	char *text = a ? table_of(a) : NULL;
	char key[] = CNT_FP_META;
	long k, failed = 0;

	CHECK(text != NULL);
	if (text == NULL) {
		cnt_defs_free(a);
		return;
	}
	for (k = 1; k < 100000; k++) {
		cnt_meta_kv kv = {key, (uint8_t *)text, strlen(text)};
		int rc;

		CHECK_EQ_INT(cnt_fp_policy(a, &err), 0);
		cnt_json_fail_at(k);
		rc = cnt_fp_input(&kv, 1, "a.avro", &err);
		cnt_json_fail_at(0);
		if (rc == 0) {
			/* recorded: the same table again agrees with it */
			CHECK_EQ_INT(cnt_fp_input(&kv, 1, "a2.avro", &err), 0);
			cnt_fp_policy_end();
			break;
		}
		CHECK_EQ_INT(err.kind, CNT_ERR_NOMEM);
		cnt_fp_policy_end();
		failed++;
	}
	CHECK(failed > 5);
	CHECK(k < 100000);
	/* the input named as it was, in bytes that are not UTF-8 too */
	{
		char *t2 = edit("\"type\": \"exact\"", "\"type\": \"max\"");
		cnt_defs *b = load(t2);
		char *tb = b ? table_of(b) : NULL;
		cnt_meta_kv kv = {key, (uint8_t *)text, strlen(text)};

		CHECK(tb != NULL);
		if (tb != NULL) {
			cnt_meta_kv kb = {key, (uint8_t *)tb, strlen(tb)};

			CHECK_EQ_INT(cnt_fp_policy(NULL, &err), 0);
			CHECK_EQ_INT(cnt_fp_input(&kv, 1, "day-\xff.avro", &err), 0);
			CHECK_EQ_INT(cnt_fp_input(&kb, 1, "b.avro", &err), -1);
			CHECK(strstr(err.msg, "exact in 'day-\xff.avro'") != NULL);
			cnt_fp_policy_end();
		}
		free(tb);
		cnt_defs_free(b);
		free(t2);
	}
	free(text);
	cnt_defs_free(a);
}

static void test_seasons(void)
{
	int n;

	CHECK_EQ_INT(season_change("open", NULL, "closing", NULL, &n), 0);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_INT(season_change("closing", NULL, "closed", NULL, &n), 0);
	CHECK_EQ_INT(season_change("open", NULL, "closed", NULL, &n), 0);
	CHECK_EQ_INT(season_change("closed", NULL, "open", NULL, &n), 1);
	CHECK_EQ_INT(season_change("closed", NULL, "closing", NULL, &n), 1);
	CHECK_EQ_INT(season_change("closing", NULL, "open", NULL, &n), 1);
	CHECK_EQ_INT(season_change("open", NULL, "open", "2026-03-10", &n), 0);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_INT(season_change("closing", NULL, "closing", "2026-03-10", &n), 1);
	CHECK_EQ_INT(season_change("closed", NULL, "closed", "2026-03-10", &n), 1);
	/* dates and state together on a closed season: two refusals */
	CHECK_EQ_INT(season_change("closed", NULL, "open", "2026-03-10", &n), 2);
	CHECK_EQ_INT(season_change("closed", NULL, "closed", NULL, &n), 0);
	CHECK_EQ_INT(n, 0);
}

/* More distinct versions than the set's cache of recent adds, interleaved
 * (entries evicted and added again): the same table as each added once. */
static void test_set_many_interleaved(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_defs *a = load(base);
	cnt_fp_set *s, *once;
	char *t1 = NULL, *t2 = NULL;
	char c[8];

	CHECK_EQ_INT(cnt_fp_policy(a, &err), 0);
	s = cnt_fp_set_new(&err);
	once = cnt_fp_set_new(&err);
	CHECK(s != NULL && once != NULL);
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 20; i++) {
			int k = (i * 7 + round) % 20;

			snprintf(c, sizeof(c), "c%d", k);
			CHECK_EQ_INT(cnt_fp_set_add(s, "acme", 4, c, strlen(c), k % 3, &err), 0);
			CHECK_EQ_INT(cnt_fp_set_add(s, "acme", 4, "distance_m", 10, 1, &err), 0);
		}
	CHECK_EQ_INT(cnt_fp_set_add(once, "acme", 4, "distance_m", 10, 1, &err), 0);
	CHECK_EQ_INT(cnt_fp_set_dump(s, NULL, &t1, &err), 0);
	CHECK_EQ_INT(cnt_fp_set_dump(once, NULL, &t2, &err), 0);
	CHECK(t1 != NULL && t2 != NULL);
	CHECK_EQ_STR(t1, t2);
	free(t1);
	free(t2);
	cnt_fp_set_free(s);
	cnt_fp_set_free(once);
	cnt_fp_policy_end();
	cnt_defs_free(a);
}

int main(void)
{
	RUN(test_set_many_interleaved);
	RUN(test_canonical);
	RUN(test_meaning_fields);
	RUN(test_compatible_fields);
	RUN(test_one_way_fields);
	RUN(test_table);
	RUN(test_input_out_of_memory);
	RUN(test_recent);
	RUN(test_track_runs);
	RUN(test_seasons);
	return unit_report("fingerprint");
}
