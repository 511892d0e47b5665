/*
 * value.h - decoded Avro values, and schema resolution.
 *
 * A cnt_plan is compiled once per (writer schema, reader schema) pair by the
 * rules of the Avro specification, "Schema Resolution": record fields are
 * matched by name (or reader alias) in any order, writer fields the reader
 * lacks are skipped, reader fields the writer lacks take their defaults,
 * int/long/float promote to long/float/double, string and bytes convert,
 * a writer union picks its branch per datum, a non-union writer matches
 * the first reader branch that fits (an exact type before a promotion),
 * and an enum symbol the reader lacks takes the reader's enum default.
 * A pair that cannot resolve fails at compile time with the field named;
 * a writer union branch or enum symbol that cannot resolve fails only when
 * a datum actually uses it, as the specification says.  The top-level
 * record's name is not compared (producers name their records as they
 * like); the names of nested named types must match by unqualified name
 * or alias.
 *
 * Decoding produces a tree of cnt_val in a cnt_arena, typed by the READER
 * schema.  Strings and bytes are slices into the block being decoded: a
 * value is valid until the block buffer or the arena is reused.
 */
#ifndef CNT_VALUE_H
#define CNT_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "avro/encoding.h"
#include "base/err.h"
#include "base/limits.h"
#include "avro/schema.h"

typedef struct cnt_val cnt_val;
struct cnt_val {
	uint8_t type;        /* cnt_type of the reader schema */
	uint32_t n;          /* length (bytes, string, fixed), count (array,
	                      * map: pairs, record: fields), enum symbol, or
	                      * union branch */
	union {
		int64_t i;       /* boolean, int, long */
		double d;        /* float, double */
		const uint8_t *s; /* bytes, string, fixed */
		cnt_val *v;      /* record fields; array items; map key,value
		                  * pairs (2n values); the union's one value */
	} u;
};

/* A bump allocator for values: cnt_arena_reset() makes all of it reusable
 * without freeing, so decoding a record allocates nothing in steady state. */
typedef struct cnt_arena {
	struct cnt_arena_chunk *head;
	size_t used_total;
	size_t limit;        /* bytes; 0 = unlimited */
} cnt_arena;

void cnt_arena_init(cnt_arena *a, size_t limit);
void cnt_arena_reset(cnt_arena *a);
void cnt_arena_release(cnt_arena *a);
/* Returns n bytes aligned for cnt_val, or NULL when out of memory or past
 * the arena's limit. */
void *cnt_arena_alloc(cnt_arena *a, size_t n);

typedef struct cnt_plan cnt_plan;

/* Compiles the resolution of writer schema w against reader schema r.
 * Returns a plan the caller frees with cnt_plan_free(), or NULL with err
 * naming the field that cannot resolve.  The plan points into both schemas:
 * they must outlive it. */
cnt_plan *cnt_plan_new(const cnt_schema *w, const cnt_schema *r, cnt_err *err);
void cnt_plan_free(cnt_plan *p);

/* Decodes one datum at c into out, allocating from a.  Returns 0, or -1
 * with err saying what is wrong (the caller adds the position). */
int cnt_plan_decode(const cnt_plan *p, cnt_cur *c, cnt_arena *a,
	const cnt_limits *lim, cnt_val *out, cnt_err *err);

/* Skips one datum of writer schema w.  Returns 0 or -1 with err set. */
int cnt_skip(const cnt_schema *w, cnt_cur *c, const cnt_limits *lim, int depth, cnt_err *err);

#endif
