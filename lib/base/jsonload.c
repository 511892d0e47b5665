/*
 * jsonload.c - jansson's loads, with a failed allocation told apart from
 * bad input (see jsonload.h).
 */
#include "base/jsonload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tools are linked with --wrap=malloc (base/failalloc.c), which makes
 * __real_malloc the C library's; elsewhere it is not defined. */
extern void *__real_malloc(size_t n) __attribute__((weak));

static _Thread_local int failed;   /* one of jansson's allocations failed on this thread */
static long fail_at;               /* cnt_json_fail_at's countdown */

static void *json_alloc(size_t n)
{
	void *p;

	if (__atomic_load_n(&fail_at, __ATOMIC_RELAXED) > 0 &&
	    __atomic_sub_fetch(&fail_at, 1, __ATOMIC_RELAXED) == 0)
		p = NULL;
	else
		p = __real_malloc ? __real_malloc(n) : malloc(n);
	if (p == NULL)
		failed = 1;
	return p;
}

static void json_release(void *p)
{
	free(p);
}

/* Before main, so before any thread or any object of jansson's. */
__attribute__((constructor)) static void json_alloc_init(void)
{
	const char *e = getenv("CNT_FAIL_JSON_ALLOC");

	if (e != NULL && *e != 0)
		fail_at = strtol(e, NULL, 10);
	json_set_alloc_funcs(json_alloc, json_release);
}

void cnt_json_fail_at(long k)
{
	__atomic_store_n(&fail_at, k, __ATOMIC_RELAXED);
}

static json_t *checked(json_t *j, json_error_t *je)
{
	if (!failed)
		return j;
	json_decref(j);
	memset(je, 0, sizeof(*je));
	je->line = je->column = je->position = -1;
	snprintf(je->text, sizeof(je->text) - 1, "out of memory");
	je->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)json_error_out_of_memory;
	return NULL;
}

json_t *cnt_json_loadb(const char *text, size_t n, size_t flags, json_error_t *je)
{
	failed = 0;
	return checked(json_loadb(text, n, flags, je), je);
}

json_t *cnt_json_loads(const char *text, size_t flags, json_error_t *je)
{
	failed = 0;
	return checked(json_loads(text, flags, je), je);
}

json_t *cnt_json_load_file(const char *path, size_t flags, json_error_t *je)
{
	failed = 0;
	return checked(json_load_file(path, flags, je), je);
}

char *cnt_json_dumps(const json_t *j, size_t flags)
{
	char *text;

	failed = 0;
	text = json_dumps(j, flags);
	if (failed) {
		free(text);
		return NULL;
	}
	return text;
}

int cnt_json_oom(const json_error_t *je)
{
	return json_error_code(je) == json_error_out_of_memory;
}
