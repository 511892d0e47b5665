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
#ifndef CNT_RECORDS_H
#define CNT_RECORDS_H

#include <stdint.h>

#include "avro/container.h"
#include "avro/value.h"

typedef struct cnt_records cnt_records;

/* Opens fd (not closed by it) as named input.  reader is the schema to
 * resolve to, or NULL to read each container with its own writer schema;
 * it must outlive the cnt_records.  Returns NULL with err set when the input
 * is not a container or its schema cannot be resolved. */
cnt_records *cnt_records_open(int fd, const char *name, const cnt_avro_schema *reader,
	const cnt_limits *lim, cnt_err *err);
/* The same, when the first n bytes were already read from fd. */
cnt_records *cnt_records_open_prefixed(int fd, const char *name, const void *prefix, size_t n,
	const cnt_avro_schema *reader, const cnt_limits *lim, cnt_err *err);
void cnt_records_free(cnt_records *in);

/* Decodes the next record into *v (valid until the next call).  Returns 1,
 * 0 at the end of the input, or -1 with err naming the input, record
 * number, block and field. */
int cnt_records_next(cnt_records *in, cnt_val *v, cnt_err *err);

/* Checks the next record against its writer schema without building its
 * value (faster; for counting).  Returns like cnt_records_next(). */
int cnt_records_skip(cnt_records *in, cnt_err *err);

/* A skipper checks one record of a known schema faster than the generic
 * walk (it returns 0, or -1 when the record is malformed). */
typedef int (*cnt_skipper)(cnt_cur *c, const cnt_limits *lim);
/* Opens fd for counting: each container is read with its writer schema,
 * and every record is checked, with skipper for containers whose writer
 * schema has the Parsing Canonical Form canon (copied), with the generic
 * walk for others.  The records are checked on the read-ahead threads,
 * block by block, as they are decompressed; cnt_records_skip() then
 * returns them one by one, and a bad record fails at the same record,
 * with the same message, as checking it in the caller would.  Only
 * cnt_records_skip() may be used on it. */
cnt_records *cnt_records_open_counting(int fd, const char *name, const char *canon, cnt_skipper skipper,
	const cnt_limits *lim, cnt_err *err);

/* Switches the schema to resolve to (NULL: each container's own).  0, or
 * -1 with err set when the current container does not resolve to it. */
int cnt_records_set_reader(cnt_records *in, const cnt_avro_schema *reader, cnt_err *err);

/* The schema the current record is typed by (the reader's, or the
 * current container's writer schema). */
const cnt_schema *cnt_records_schema(const cnt_records *in);
/* The 1-based number of the last record returned, within this input. */
uint64_t cnt_records_record_no(const cnt_records *in);
cnt_reader *cnt_records_reader(cnt_records *in);

/* Low-level: fetches the next non-empty block and makes sure the plan
 * fits the current container.  Used by readers with their own decoders.
 * Returns 1, 0 at the end, -1 on error. */
int cnt_records_next_block(cnt_records *in, cnt_block *b, cnt_err *err);

/* Low-level: decodes one record at c with the current container's plan
 * (after cnt_records_next_block).  Returns 0 or -1 with err set (without the
 * position, which the caller knows). */
int cnt_records_decode(cnt_records *in, cnt_cur *c, cnt_val *v, cnt_err *err);

#endif
