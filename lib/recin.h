/*
 * recin.h - records from Avro container inputs, resolved against a reader
 * schema (or read as written), one cnt_val tree at a time.
 *
 * This is the generic path every tool can use for any schema; the event
 * reader (event.h) adds a fast path for files written with exactly our
 * schema.  A new container on the same stream (concatenated files) gets
 * its own resolution plan, so containers with different writer schemas can
 * follow each other.
 */
#ifndef CNT_RECIN_H
#define CNT_RECIN_H

#include <stdint.h>

#include "container.h"
#include "value.h"

typedef struct cnt_recin cnt_recin;

/* Opens fd (not closed by it) as named input.  reader is the schema to
 * resolve to, or NULL to read each container with its own writer schema;
 * it must outlive the cnt_recin.  Returns NULL with err set when the input
 * is not a container or its schema cannot be resolved. */
cnt_recin *cnt_recin_open(int fd, const char *name, const cnt_avro_schema *reader,
	const cnt_limits *lim, cnt_err *err);
/* The same, when the first n bytes were already read from fd. */
cnt_recin *cnt_recin_open_prefixed(int fd, const char *name, const void *prefix, size_t n,
	const cnt_avro_schema *reader, const cnt_limits *lim, cnt_err *err);
void cnt_recin_free(cnt_recin *in);

/* Decodes the next record into *v (valid until the next call).  Returns 1,
 * 0 at the end of the input, or -1 with err naming the input, record
 * number, block and field. */
int cnt_recin_next(cnt_recin *in, cnt_val *v, cnt_err *err);

/* Checks the next record against its writer schema without building its
 * value (faster; for counting).  Returns like cnt_recin_next(). */
int cnt_recin_skip(cnt_recin *in, cnt_err *err);

/* A skipper checks one record of a known schema faster than the generic
 * walk (it returns 0, or -1 when the record is malformed).  Containers
 * whose writer schema has the Parsing Canonical Form canon (copied) use
 * it in cnt_recin_skip().  Returns 0 or -1 (out of memory). */
typedef int (*cnt_skipper)(cnt_cur *c, const cnt_limits *lim);
int cnt_recin_set_skipper(cnt_recin *in, const char *canon, cnt_skipper fn);

/* Switches the schema to resolve to (NULL: each container's own).  0, or
 * -1 with err set when the current container does not resolve to it. */
int cnt_recin_set_reader(cnt_recin *in, const cnt_avro_schema *reader, cnt_err *err);

/* The schema the current record is typed by (the reader's, or the
 * current container's writer schema). */
const cnt_schema *cnt_recin_schema(const cnt_recin *in);
/* The 1-based number of the last record returned, within this input. */
uint64_t cnt_recin_record_no(const cnt_recin *in);
cnt_reader *cnt_recin_reader(cnt_recin *in);

/* Low-level: fetches the next non-empty block and makes sure the plan
 * fits the current container.  Used by readers with their own decoders.
 * Returns 1, 0 at the end, -1 on error. */
int cnt_recin_next_block(cnt_recin *in, cnt_block *b, cnt_err *err);

/* Low-level: decodes one record at c with the current container's plan
 * (after cnt_recin_next_block).  Returns 0 or -1 with err set (without the
 * position, which the caller knows). */
int cnt_recin_decode(cnt_recin *in, cnt_cur *c, cnt_val *v, cnt_err *err);

#endif
