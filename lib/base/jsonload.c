/*
 * jsonload.c - jansson's loads and dumps, with a failed allocation told
 * apart from bad input (see jsonload.h).
 */
#include "base/jsonload.h"

#include <errno.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tools are linked with --wrap=malloc (base/failalloc.c), which makes
 * __real_malloc the C library's; elsewhere it is not defined. */
extern void *__real_malloc(size_t n) __attribute__((weak));

/* Every block jansson allocates has this header.  During a load the
 * blocks are linked into that load's list, so that a load left by
 * longjmp can free what it had allocated.  16-byte aligned, as malloc's. */
typedef struct blk {
	struct blk *prev, *next;
	void *owner;   /* the load (struct load) it belongs to, or NULL */
	void *pad;
} blk;
_Static_assert(sizeof(blk) % 16 == 0, "blk keeps malloc's alignment");

struct load {
	jmp_buf back;
	blk head;      /* circular list of the load's live blocks */
};

static _Thread_local struct load *cur;   /* the load running on this thread */
static _Thread_local int failed;   /* one of jansson's allocations failed on this thread */
static long fail_at;               /* cnt_json_fail_at's countdown */
static long allocs;                /* cnt_json_allocs */

static void *json_alloc(size_t n)
{
	blk *b = NULL;

	__atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&fail_at, __ATOMIC_RELAXED) > 0 &&
	    __atomic_sub_fetch(&fail_at, 1, __ATOMIC_RELAXED) == 0)
		b = NULL;
	else if (n <= SIZE_MAX - sizeof(blk))
		b = __real_malloc ? __real_malloc(sizeof(blk) + n) : malloc(sizeof(blk) + n);
	if (b == NULL) {
		failed = 1;
		/* jansson's lexer would go on past a failed allocation and
		 * read and write beyond a buffer (2.14, load.c lex_save):
		 * a load ends here. */
		if (cur != NULL)
			longjmp(cur->back, 1);
		return NULL;
	}
	b->owner = cur;
	if (cur != NULL) {
		b->prev = &cur->head;
		b->next = cur->head.next;
		b->next->prev = b;
		cur->head.next = b;
	}
	return b + 1;
}

static void json_release(void *p)
{
	blk *b;

	if (p == NULL)
		return;
	b = (blk *)p - 1;
	if (b->owner != NULL && b->owner == cur) {
		b->prev->next = b->next;
		b->next->prev = b->prev;
	}
	free(b);
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

long cnt_json_allocs(void)
{
	return __atomic_load_n(&allocs, __ATOMIC_RELAXED);
}

static void set_oom(json_error_t *je)
{
	memset(je, 0, sizeof(*je));
	je->line = je->column = je->position = -1;
	snprintf(je->text, sizeof(je->text) - 1, "out of memory");
	je->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)json_error_out_of_memory;
}

/* json_loads(text) (n == SIZE_MAX) or json_loadb(text, n), left at the
 * first failed allocation with everything it had allocated freed. */
static json_t *load(const char *text, size_t n, size_t flags, json_error_t *je)
{
	/* Not automatic: the list changes between setjmp and longjmp, and an
	 * automatic object's value would then be indeterminate after the jump
	 * (C11 7.13.2.1).  A thread runs one load at a time. */
	static _Thread_local struct load l;
	json_t *j = NULL;

	l.head.prev = l.head.next = &l.head;
	failed = 0;
	if (setjmp(l.back) == 0) {
		cur = &l;
		j = n == SIZE_MAX ? json_loads(text, flags, je) : json_loadb(text, n, flags, je);
		cur = NULL;
		/* the document's blocks are the caller's now */
		for (blk *b = l.head.next; b != &l.head; b = b->next)
			b->owner = NULL;
	} else {
		cur = NULL;
		for (blk *b = l.head.next, *next; b != &l.head; b = next) {
			next = b->next;
			free(b);
		}
		j = NULL;
	}
	if (!failed)
		return j;
	json_decref(j);
	set_oom(je);
	return NULL;
}

json_t *cnt_json_loadb(const char *text, size_t n, size_t flags, json_error_t *je)
{
	return load(text, n == SIZE_MAX ? n - 1 : n, flags, je);
}

json_t *cnt_json_loads(const char *text, size_t flags, json_error_t *je)
{
	return load(text, SIZE_MAX, flags, je);
}

/* NULL, with je as json_load_file sets it when it cannot open or read
 * path (errno e). */
static json_t *file_error(json_error_t *je, const char *verb, const char *path, int e)
{
	memset(je, 0, sizeof(*je));
	je->line = je->column = -1;
	snprintf(je->source, sizeof(je->source), "%s", path);
	snprintf(je->text, sizeof(je->text) - 1, "unable to %s %s: %s", verb, path, strerror(e));
	je->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)json_error_cannot_open_file;
	return NULL;
}

/* Read whole, then loaded as a buffer: json_load_file's FILE would be
 * lost by a load left at a failed allocation. */
json_t *cnt_json_load_file(const char *path, size_t flags, json_error_t *je)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	size_t n = 0, cap = 0;
	json_t *j;

	if (f == NULL)
		return file_error(je, "open", path, errno);
	for (;;) {
		size_t got;

		if (n == cap) {
			char *p = cap > SIZE_MAX / 4 ? NULL : realloc(text, cap ? 2 * cap : 4096);

			if (p == NULL) {
				free(text);
				fclose(f);
				set_oom(je);
				return NULL;
			}
			text = p;
			cap = cap ? 2 * cap : 4096;
		}
		got = fread(text + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		int e = errno;

		free(text);
		fclose(f);
		return file_error(je, "read", path, e);
	}
	fclose(f);
	j = cnt_json_loadb(text, n, flags, je);
	free(text);
	return j;
}

char *cnt_json_dumps(const json_t *j, size_t flags)
{
	char *text;

	blk *b;

	failed = 0;
	text = json_dumps(j, flags);
	if (text == NULL)
		return NULL;
	if (failed) {
		json_release(text);
		return NULL;
	}
	/* moved to its block's start, so that free() takes it */
	b = (blk *)(void *)text - 1;
	memmove(b, text, strlen(text) + 1);
	return (char *)b;
}

int cnt_json_oom(const json_error_t *je)
{
	return json_error_code(je) == json_error_out_of_memory;
}
