/*
 * jsonload.h - jansson's loads and dumps, with a failed allocation told
 * apart from bad input.
 *
 * jansson 2.14 does not always say that it ran out of memory: a failed
 * allocation inside its parser may come out as a syntax error ("invalid
 * token", "string or '}' expected") or as a document with a string cut
 * short ('cnt-definition/1' for 'cnt-definitions/1').  A tool that
 * trusted it would call a good file corrupt (exit 2, "rebuild it") when
 * memory ran out.  Worse, its lexer goes on past a failed allocation
 * and reads and writes beyond a buffer (load.c, lex_save).  So jansson
 * allocates through a function of ours (set before main with
 * json_set_alloc_funcs): during a load, a failed allocation leaves
 * jansson at once (longjmp back to the load, which frees every block
 * the load had allocated), and the load gives NULL with
 * json_error_code(je) == json_error_out_of_memory.  Test it with
 * cnt_json_oom().  Every jansson block has a small header for this, so
 * memory that jansson allocated is freed by jansson (json_decref), never
 * by free(); cnt_json_dumps's text is the exception.
 *
 * Its dumps have the same flaw: json_dumps 2.14 does not check the
 * writing of an object's keys, so an allocation failing there gives a
 * text with a key cut short or missing, and no error.  cnt_json_dumps
 * gives NULL instead.  (Building a value needs no wrapper: every
 * json_object_set_new, json_array_append_new and constructor that fails
 * to allocate says so.  Remember that the _new functions take the value
 * even when they fail.)
 *
 * jansson's allocations are the C library's own, never the tools'
 * injected failures (base/failalloc.c); cnt_json_fail_at() makes them
 * fail, and CNT_FAIL_JSON_ALLOC=N in the environment makes the N-th of a
 * tool's fail, as CNT_FAIL_ALLOC does for cnt's own.
 */
#ifndef CNT_JSONLOAD_H
#define CNT_JSONLOAD_H

#include <jansson.h>
#include <stddef.h>

json_t *cnt_json_loadb(const char *text, size_t n, size_t flags, json_error_t *je);
json_t *cnt_json_loads(const char *text, size_t flags, json_error_t *je);
json_t *cnt_json_load_file(const char *path, size_t flags, json_error_t *je);

/* json_dumps(j, flags), or NULL when an allocation failed while it
 * wrote (free the text with free()). */
char *cnt_json_dumps(const json_t *j, size_t flags);

/* Whether a load that gave NULL did so because memory ran out. */
int cnt_json_oom(const json_error_t *je);

/* For tests: the k-th of jansson's allocations from now, on any thread,
 * fails (k = 1 the next one); k = 0 none. */
void cnt_json_fail_at(long k);

/* For tests: how many allocations jansson has asked for, on any thread. */
long cnt_json_allocs(void);

#endif
