/*
 * windowed.h - cnt.WindowedEvent, what cnt-window writes and
 * cnt-accumulate reads: an event with the event-time bucket it belongs
 * to, whether it arrived late, and its shard.
 *
 *   {"type": "record", "name": "WindowedEvent", "namespace": "cnt",
 *    "fields": [
 *      {"name": "bucket_start", "type": {"type": "long", "logicalType": "timestamp-millis"}},
 *      {"name": "bucket_end",   "type": {"type": "long", "logicalType": "timestamp-millis"}},
 *      {"name": "late",  "type": "boolean"},
 *      {"name": "shard", "type": "int"},
 *      {"name": "exact", "type": "boolean", "default": false},
 *      {"name": "dimensions", "type": {"type": "array", "items": "string"}, "default": []},
 *      {"name": "sample", "type": "int", "default": -1},
 *      {"name": "hll_precision", "type": "int", "default": 14},
 *      {"name": "event", "type": <cnt.CountingEvent, lib/model/schemas/counting_event.avsc>}]}
 *
 * exact is set when the event's counter version is of type exact or
 * approx (whose value is a sum too): the
 * accumulator then keeps no min, max or sketch for it (they are not the
 * counter's value, and a compensation could not take an event out of
 * them); a writer without the field (older files) reads as false.
 *
 * dimensions are the event's counter version's (cnt-definitions(5)):
 * cnt-accumulate, which has no definitions, adds the event to one
 * breakdown record per dimension besides the total (cnt-bucket(5)); a
 * writer without the field reads as none.
 *
 * sample is -1 unless the event's counter version is of type approx;
 * then it is the event's sampling level L (attrs cnt.sample, 0 when
 * absent; lib/ingest/sample.h): cnt-accumulate counts the event with
 * weight 2^L (cnt-bucket(5)).  Carried in the head so that the
 * accumulator does not scan attrs; a writer without it reads as -1.
 * hll_precision is the event's counter version's (cnt-definitions(5),
 * tolerated_error): cnt-accumulate builds the event's sketches at it; a
 * writer without the field reads as 14.
 *
 * The event is nested whole, so its Avro bytes follow the seven leading
 * fields unchanged: cnt-window copies them instead of re-encoding.  The
 * schema text is built from counting_event.avsc, so the two cannot drift.
 */
#ifndef CNT_WINDOWED_H
#define CNT_WINDOWED_H

#include "model/event.h"
#include "avro/records.h"

#define CNT_WINDOWED_DIMS_MAX 4       /* = CNT_DIMS_MAX (model/defs.h) */

typedef struct cnt_windowed {
	int64_t bucket_start, bucket_end;  /* epoch ms UTC, [start, end) */
	int late;
	int32_t shard;
	int exact;                         /* the counter version is of type exact or approx */
	int sample;                        /* approx: the level L (weight 2^L); else -1 */
	size_t ndims;                      /* 0 .. CNT_WINDOWED_DIMS_MAX */
	cnt_slice dims[4];                 /* the version's dimensions (attrs keys) */
	cnt_slice dim_vals[4];             /* ev's value of each, CNT_DIM_NONE when
	                                    * absent (cnt_windowed_dim_values) */
	int hll_precision;                 /* 4..18; 0 (unset) is written as 14 */
	cnt_event ev;
} cnt_windowed;

/* The schema as compact JSON; the caller frees it.  NULL when out of
 * memory (err set). */
char *cnt_windowed_schema_json(cnt_err *err);

/* Appends the seven leading fields; the event's bytes must follow. */
int cnt_windowed_encode_head(const cnt_windowed *w, cnt_buf *b);

/* Sets w->dim_vals from w->dims and w->ev's attrs: the value of each
 * dimension's key, "(none)" (CNT_DIM_NONE, model/bucket.h) when the event
 * has no such key.  The slices point where the attrs' do, so they stay
 * valid when the attrs buffer is reused for the next record. */
void cnt_windowed_dim_values(cnt_windowed *w);

/* Decodes the dimensions field at c into w->dims (slices into c's
 * bytes): an Avro array of strings, at most CNT_WINDOWED_DIMS_MAX in
 * all.  0, or -1 when malformed. */
int cnt_windowed_decode_dims(cnt_cur *c, cnt_windowed *w);

typedef struct cnt_windowed_in cnt_windowed_in;

/* Reads windowed events from an input already open (cnt-accumulate looks
 * at the writer's schema first), resolving any other writer schema to
 * ours; takes rin over, also on failure.  NULL with err set on failure. */
cnt_windowed_in *cnt_windowed_in_adopt(cnt_records *rin, const cnt_limits *lim, cnt_err *err);
/* Reads the next one.  1, 0 at the end, -1 with err naming the place. */
int cnt_windowed_in_next(cnt_windowed_in *in, cnt_windowed *w, cnt_err *err);
void cnt_windowed_in_free(cnt_windowed_in *in);
/* Records left in the current block: while it is not 0, the next call
 * does not invalidate the strings of the events read before (they point
 * into the block). */
int64_t cnt_windowed_in_left(const cnt_windowed_in *in);

#endif
