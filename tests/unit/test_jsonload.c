/*
 * test_jsonload.c - a load or a dump during which one of jansson's
 * allocations failed says "out of memory", never a syntax error, a
 * document with a string cut short or a text with a key missing
 * (base/jsonload.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonload.h"
#include "model/fingerprint.h"
#include "unit.h"

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	long len;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (p = malloc((size_t)len + 1)) != NULL && fread(p, 1, (size_t)len, f) == (size_t)len) {
		p[len] = 0;
		*n = (size_t)len;
	} else {
		free(p);
		p = NULL;
	}
	fclose(f);
	return p;
}

/* Fails jansson's k-th allocation for k = 1, 2, ... until a load makes
 * fewer: each load is NULL with cnt_json_oom(), or the whole document. */
static void walk(const char *text, size_t n, size_t flags)
{
	json_error_t je;
	json_t *ref = cnt_json_loadb(text, n, flags, &je);
	char *want = ref ? cnt_json_dumps(ref, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	long k, failed = 0;

	CHECK(ref != NULL && want != NULL);
	if (want == NULL) {
		json_decref(ref);
		return;
	}
	for (k = 1; k < 100000; k++) {
		json_t *j;
		char *got;

		cnt_json_fail_at(k);
		j = cnt_json_loadb(text, n, flags, &je);
		cnt_json_fail_at(0);
		if (j == NULL) {
			CHECK(cnt_json_oom(&je));
			CHECK_EQ_STR(je.text, "out of memory");
			failed++;
			continue;
		}
		got = cnt_json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
		json_decref(j);
		CHECK(got != NULL && strcmp(got, want) == 0);
		free(got);
		break;   /* the load made fewer than k allocations */
	}
	CHECK(failed > 10);
	CHECK(k < 100000);
	free(want);
	json_decref(ref);
}

static void test_definitions(void)
{
	size_t n = 0;
	char *text = slurp("examples/definitions.json", &n);

	CHECK(text != NULL);
	if (text != NULL)
		walk(text, n, JSON_REJECT_DUPLICATES);
	free(text);
}

static void test_strings_and_escapes(void)
{
	static const char text[] = "{\"format\": \"cnt-definitions/1\", \"a\\u00e9\": [\"x\\ny\", 12, -3.5, true, null],"
		" \"long\": \"0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz\"}";

	walk(text, sizeof(text) - 1, JSON_REJECT_DUPLICATES);
}

/* jansson's lexer goes on past a failed allocation and then reads and
 * writes beyond a buffer (2.14, load.c lex_save): a load ends at its
 * first failed allocation, and frees what it had allocated (a leak is
 * LeakSanitizer's to find, in make check-san). */
static void test_load_stops_at_failure(void)
{
	static const char text[] = "{\"format\": \"cnt-shardmap/1\", \"keys\": [{\"tenant_id\": \"acme\","
		" \"member_ref\": \"a-member-whose-name-is-longer-than-sixteen-bytes\", \"shards\": 4},"
		" {\"tenant_id\": \"kahani\", \"member_ref\": \"video-0123456789-0123456789-0123456789\"}]}";
	json_error_t je;
	long k, failed = 0;

	for (k = 1; k < 100000; k++) {
		long before = cnt_json_allocs();
		json_t *j;

		cnt_json_fail_at(k);
		j = cnt_json_loadb(text, sizeof(text) - 1, 0, &je);
		cnt_json_fail_at(0);
		if (j != NULL) {
			json_decref(j);
			break;
		}
		CHECK(cnt_json_oom(&je));
		CHECK_EQ_INT(cnt_json_allocs() - before, k);
		failed++;
	}
	CHECK(failed > 10);
	CHECK(k < 100000);
}

/* A failure outside a load does not leak into the next one, and bad
 * input is still bad input. */
static void test_flag_is_per_load(void)
{
	json_error_t je;
	json_t *j;

	cnt_json_fail_at(1);
	CHECK(json_string("x") == NULL);   /* a builder's allocation fails */
	cnt_json_fail_at(0);
	j = cnt_json_loadb("{\"a\": 1}", 8, 0, &je);
	CHECK(j != NULL);
	json_decref(j);
	j = cnt_json_loadb("{\"a\": ", 6, 0, &je);
	CHECK(j == NULL);
	CHECK(!cnt_json_oom(&je));
	j = cnt_json_loads("[1, 2", 0, &je);
	CHECK(j == NULL);
	CHECK(!cnt_json_oom(&je));
	j = cnt_json_load_file("/nonexistent/cnt-jsonload-test.json", 0, &je);
	CHECK(j == NULL);
	CHECK(!cnt_json_oom(&je));
	CHECK(json_error_code(&je) == json_error_cannot_open_file);
}

/* Frees what jansson allocated (its own json_dumps's text). */
static void jfree(void *p)
{
	json_malloc_t m;
	json_free_t f;

	json_get_alloc_funcs(&m, &f);
	f(p);
}

/* Fails jansson's k-th allocation for k = 1, 2, ... until a dump of j
 * makes fewer: each cnt_json_dumps is NULL or the whole text.  Returns
 * how many plain json_dumps gave a wrong text instead of NULL. */
static long walk_dump(const json_t *j, size_t flags)
{
	char *want = cnt_json_dumps(j, flags);
	long k, failed = 0, wrong = 0;

	CHECK(want != NULL);
	if (want == NULL)
		return 0;
	for (k = 1; k < 100000; k++) {
		char *got, *plain;

		cnt_json_fail_at(k);
		got = cnt_json_dumps(j, flags);
		cnt_json_fail_at(k);
		plain = json_dumps(j, flags);
		cnt_json_fail_at(0);
		if (plain != NULL && strcmp(plain, want) != 0)
			wrong++;
		jfree(plain);
		if (got == NULL) {
			failed++;
			continue;
		}
		CHECK_EQ_STR(got, want);
		free(got);
		if (plain != NULL)
			break;   /* the dump made fewer than k allocations */
	}
	CHECK(failed > 2);
	CHECK(k < 100000);
	free(want);
	return wrong;
}

/* json_dumps 2.14 writes an object's keys without checking, so a failed
 * allocation there gives a wrong text (a key without its quotes, or
 * missing); cnt_json_dumps gives NULL.  The documents are built to make
 * the text's buffer grow while a key is written. */
static void test_dumps(void)
{
	size_t n = 0;
	char *text = slurp("examples/definitions.json", &n);
	json_error_t je;
	json_t *defs = text ? cnt_json_loadb(text, n, 0, &je) : NULL;
	json_t *keys = json_object();
	long wrong = 0;

	CHECK(defs != NULL && keys != NULL);
	for (int i = 0; keys != NULL && i < 40; i++) {
		char k[64];

		snprintf(k, sizeof(k), "key-%02d-%.*s", i, i, "abcdefghijklmnopqrstuvwxyzabcdefghijklmn");
		CHECK(json_object_set_new(keys, k, json_integer(i)) == 0);
	}
	if (defs != NULL && keys != NULL) {
		wrong += walk_dump(defs, JSON_COMPACT | JSON_SORT_KEYS);
		wrong += walk_dump(defs, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
		wrong += walk_dump(keys, JSON_COMPACT | JSON_SORT_KEYS);
		wrong += walk_dump(keys, JSON_COMPACT | JSON_PRESERVE_ORDER);
	}
	/* The reason for the wrapper: should this fail, jansson checks its
	 * keys now (see lib/base/jsonload.h). */
	CHECK(wrong > 0);
	json_decref(keys);
	json_decref(defs);
	free(text);
}

/* A definition's fingerprint is its text's hash: under any failed
 * allocation it is out of memory, or the fingerprint. */
static void test_fingerprint(void)
{
	static const char text[] = "{\"tenant_id\": \"acme\", \"counter_id\": \"distance_m\", \"version\": 1,"
		" \"type\": \"exact\", \"bounds_lo\": 0, \"bounds_hi\": 1000000, \"lateness_horizon_s\": 172800,"
		" \"dedup_key\": \"idempotency_key\", \"dedup_horizon_s\": 86400, \"client_writable\": false,"
		" \"windows\": [\"all_time\", \"day\"], \"timezone\": \"Europe/Berlin\", \"unit_cost_per_m\": 0.4}";
	json_error_t je;
	json_t *def = cnt_json_loads(text, 0, &je);
	char want[CNT_FP_HEX], got[CNT_FP_HEX];
	cnt_err err;
	long k, failed = 0;

	CHECK(def != NULL);
	if (def == NULL)
		return;
	CHECK(cnt_fp_hex(def, want, &err) == 0);
	for (k = 1; k < 100000; k++) {
		int rc;

		cnt_json_fail_at(k);
		rc = cnt_fp_hex(def, got, &err);
		cnt_json_fail_at(0);
		if (rc != 0) {
			CHECK(err.kind == CNT_ERR_NOMEM);
			failed++;
			continue;
		}
		CHECK_EQ_STR(got, want);
		break;
	}
	CHECK(failed > 2);
	CHECK(k < 100000);
	json_decref(def);
}

int main(void)
{
	RUN(test_definitions);
	RUN(test_strings_and_escapes);
	RUN(test_flag_is_per_load);
	RUN(test_load_stops_at_failure);
	RUN(test_dumps);
	RUN(test_fingerprint);
	return unit_report("test_jsonload");
}
