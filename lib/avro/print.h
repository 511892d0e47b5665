/*
 * print.h - Avro container inputs printed for people and scripts
 * (cnt-cat): records as JSON lines or CSV, the record count, each
 * container's writer schema or header.
 *
 * Output is gathered in a buffer and written to a descriptor in pieces of
 * whole records, so that when an input turns out damaged part way, every
 * record before the damage has been written and nothing after it.
 */
#ifndef CNT_PRINT_H
#define CNT_PRINT_H

#include <stdint.h>

#include "avro/schema.h"
#include "base/buf.h"

typedef enum cnt_print_mode {
	CNT_PRINT_RECORDS,   /* every record, JSON lines or CSV */
	CNT_PRINT_COUNT,     /* one number: the records of all inputs */
	CNT_PRINT_SCHEMA,    /* each container's writer schema, one per line */
	CNT_PRINT_META       /* each container's header as a JSON object */
} cnt_print_mode;

typedef struct cnt_printer {
	/* Set by the caller before the first input: */
	cnt_print_mode mode;
	int csv;                          /* CSV instead of JSON lines */
	int flags;                        /* CNT_JSON_ISO_TIME */
	int64_t head;                     /* stop after this many records; -1: all */
	const cnt_avro_schema *reader;    /* resolve to this schema, or NULL */
	int fd;                           /* where the text goes */
	void (*tick)(uint64_t);           /* records read, for progress; may be NULL */
	/* Kept by the printer: */
	cnt_buf out;
	uint64_t total;
	int header_done;
} cnt_printer;

/* Prints one input (a stream of containers on fd, not closed); *records
 * gets the number it produced.  0, or -1 with err set: bad input (what was
 * printed before the damage has been written), out of memory, or a write
 * that failed (kind CNT_ERR_IO or CNT_ERR_PIPE). */
int cnt_print_input(cnt_printer *p, int fd, const char *name, uint64_t *records, cnt_err *err);
/* Whether --head is reached, so no further input need be opened. */
int cnt_print_full(const cnt_printer *p);
/* Writes what remains (the count, in CNT_PRINT_COUNT).  0 or -1. */
int cnt_print_finish(cnt_printer *p, cnt_err *err);
/* Frees the buffer. */
void cnt_print_release(cnt_printer *p);

/* The reader schema for --as event|raw (as_name) or --reader-schema FILE
 * (path), whichever is not NULL (one must be).  Returns it (the caller
 * frees it with cnt_avro_schema_free()), or NULL with err set. */
cnt_avro_schema *cnt_print_reader_schema(const char *as_name, const char *path, cnt_err *err);

#endif
