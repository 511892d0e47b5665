/*
 * event.h - the log record cnt.CountingEvent (lib/model/schemas/counting_event.avsc,
 * cnt-event(5)): a C struct, its Avro encoding, and a reader of event files.
 *
 * Files written with exactly our schema (the same Parsing Canonical Form)
 * are decoded by a hand-written decoder straight into the struct; any
 * other writer schema goes through schema resolution (value.h) and is
 * copied in, so old files and files from other Avro implementations read
 * the same way, only slower.
 */
#ifndef CNT_EVENT_H
#define CNT_EVENT_H

#include <stdint.h>

#include "base/limits.h"
#include "avro/container.h"
#include "avro/encoding.h"
#include "ingest/rawevent.h"
#include "avro/value.h"

typedef struct cnt_event {
	cnt_slice event_id, idempotency_key, tenant_id, counter_id;
	int32_t counter_version;
	cnt_slice member_ref;
	cnt_slice item;            /* p == NULL: null */
	int64_t delta;
	int64_t event_time;        /* epoch ms UTC */
	int64_t ingest_time;       /* epoch ms UTC */
	int origin;                /* CNT_ORIGIN_BACKEND / CNT_ORIGIN_CLIENT */
	cnt_slice subject, signature, retracts, retraction_id; /* NULL p: null */
	size_t nattrs;
	const cnt_slice *attr_keys, *attr_vals;
} cnt_event;

/* Storage for decoded attrs, reused from record to record. */
typedef struct cnt_attrs_buf {
	cnt_slice *keys, *vals;
	size_t cap;
} cnt_attrs_buf;

void cnt_attrs_buf_release(cnt_attrs_buf *ab);

/* Decodes one event written with exactly our schema at c.  Slices point
 * into the data at c and into ab.  ab NULL: attrs are checked but not kept
 * (e->nattrs 0).  Returns 0, or -1 with err (may be NULL) saying what is
 * wrong (the caller adds the position). */
int cnt_event_decode(cnt_cur *c, cnt_event *e, cnt_attrs_buf *ab, const cnt_limits *lim, cnt_err *err);

/* Fills e from a record value resolved to our schema (value.h). */
int cnt_event_from_val(const cnt_val *rec, cnt_event *e, cnt_attrs_buf *ab, cnt_err *err);

/* Appends e in Avro binary encoding to b.  Returns 0 or -1 (out of memory). */
int cnt_event_encode(const cnt_event *e, cnt_buf *b);

/* A writer of event containers, with the schema written compactly.
 * Arguments and result as cnt_writer_new(). */
cnt_writer *cnt_event_writer_new(int fd, const char *name, cnt_codec_id codec,
	int level, cnt_err *err);

/* Checks one record of our schema at c without keeping it (a
 * cnt_skipper for cnt_records_set_skipper): cnt_event_decode() with its
 * attrs not kept, so every field is decoded and checked as a reader
 * does.  Returns 0 or -1. */
int cnt_event_skip(cnt_cur *c, const cnt_limits *lim);

/* Our schema's Parsing Canonical Form, NUL-terminated; the caller frees
 * it.  NULL when out of memory. */
char *cnt_event_canonical(void);

typedef struct cnt_event_in cnt_event_in;

/* Opens an event input on fd (not closed by it).  NULL with err set when
 * it is not a container or its schema does not resolve to ours. */
cnt_event_in *cnt_event_in_open(int fd, const char *name, const cnt_limits *lim, cnt_err *err);
/* Reads the next event into *e; its slices are valid until the next call.
 * Returns 1, 0 at the end, -1 with err naming input, record and field. */
int cnt_event_in_next(cnt_event_in *in, cnt_event *e, cnt_err *err);
/* The Avro bytes of the last event returned, when it was read by the
 * fast path (our own schema): then they are exactly cnt_event_encode()'s
 * output and can be copied instead of re-encoded.  Returns 1 with *p, *n
 * set (valid until the next call), or 0. */
int cnt_event_in_raw(const cnt_event_in *in, const uint8_t **p, size_t *n);

/* 1-based number of the last event returned, within this input. */
uint64_t cnt_event_in_record_no(const cnt_event_in *in);
/* Whether the current container is read by the fast path (for tests). */
int cnt_event_in_fast(const cnt_event_in *in);
void cnt_event_in_free(cnt_event_in *in);

/* Approximate counters (cnt-definitions(5), type approx): cnt-ingest
 * writes attrs "cnt.sample" = the sampling level L of a kept event at
 * L > 0 (weight 2^L; lib/ingest/sample.h). */
#define CNT_EVENT_SAMPLE_ATTR "cnt.sample"

/* The level written in attrs value p, n (1 to CNT_APPROX_LEVEL_MAX,
 * decimal, no sign or leading zero): 0 with *level set, or -1. */
int cnt_event_sample_parse(const char *p, size_t n, int *level);

/* e's level from its attrs: 0 without a cnt.sample entry, -1 when the
 * entry is not a level. */
int cnt_event_sample_level(const cnt_event *e);

#endif
