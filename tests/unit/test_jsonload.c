/*
 * test_jsonload.c - a load during which one of jansson's allocations
 * failed says "out of memory", never a syntax error or a document with
 * a string cut short (base/jsonload.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonload.h"
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
	char *want = ref ? json_dumps(ref, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
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
		got = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
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

int main(void)
{
	RUN(test_definitions);
	RUN(test_strings_and_escapes);
	RUN(test_flag_is_per_load);
	return unit_report("test_jsonload");
}
