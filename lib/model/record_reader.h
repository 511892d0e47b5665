/*
 * typedin.h - reading files of one of our own record types (events,
 * windowed events, buckets) with a decoder written for that type, and
 * falling back to schema resolution for anything else.
 *
 * Per container, the writer's schema is compared with ours by Parsing
 * Canonical Form: equal means the hand-written decoder may read the bytes
 * at t->cur directly (t->fast); otherwise cnt_typed_in_resolve() gives the
 * record resolved to our schema as a cnt_val.  Either way the caller turns
 * the record into its struct; this module does the blocks, the checks
 * between them and the positions in messages.
 *
 * At each container's header the tool's fingerprint policy sees its
 * metadata (cnt_fp_input, model/fingerprint.h): a container counted under
 * definitions that have since been edited fails the read, before any of
 * its records.
 */
#ifndef CNT_RECORD_READER_H
#define CNT_RECORD_READER_H

#include "avro/records.h"

typedef struct cnt_typed_in {
	cnt_records *rin;
	cnt_avro_schema *ours;
	char *canon;
	unsigned checked;
	int fast;             /* the current container is written with our schema */
	cnt_block blk;
	cnt_cur cur;          /* at the current record when fast */
	int64_t left;
	uint64_t record_no;   /* 1-based, of the current record */
	const char *name;
	cnt_limits lim;
} cnt_typed_in;

/* Opens fd (not closed) as a file of the schema in schema_json.  Returns
 * 0, or -1 with err set (not a container, or a schema that does not
 * resolve to ours). */
int cnt_typed_in_open(cnt_typed_in *t, int fd, const char *name, const char *schema_json,
	const cnt_limits *lim, cnt_err *err);
/* The same for an input already open (read with its writer's schema, to
 * look at it first): t takes rin over, also when it fails. */
int cnt_typed_in_adopt(cnt_typed_in *t, cnt_records *rin, const char *schema_json, const cnt_limits *lim, cnt_err *err);
void cnt_typed_in_release(cnt_typed_in *t);

/* Moves to the next record: returns 1 (decode it: at t->cur when t->fast,
 * else with cnt_typed_in_resolve()), 0 at the end, -1 with err set. */
int cnt_typed_in_step(cnt_typed_in *t, cnt_err *err);

/* The current record through resolution (t->fast == 0).  0 or -1. */
int cnt_typed_in_resolve(cnt_typed_in *t, cnt_val *v, cnt_err *err);

/* Prefixes err with the input name, record and block.  Returns -1. */
int cnt_typed_in_where(const cnt_typed_in *t, cnt_err *err);

#endif
