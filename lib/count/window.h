/*
 * window.h - the window stage (cnt-window(1)): which bucket an event is
 * counted in, whether it arrived late, and which shard of its key it is
 * counted in.
 *
 * Bucket.  One local hour of the tenant's timezone, cut where the zone's
 * UTC offset changes (time/tz.h states the rule exactly): the bucket of an
 * instant is the set of instants in the same constant-offset interval and
 * the same local hour, named by its UTC start; its end is the next
 * bucket's start.  Attribution is in milliseconds and half-open: an event
 * exactly at a bucket's end belongs to the next bucket.
 *
 * Late.  An event is late when
 *	ingest_time > bucket_end + lateness_horizon_s * 1000
 * with the horizon of the event's counter version: one ingested exactly at
 * the horizon is on time, one millisecond later it is late.  Only the
 * times stored in the event are used, never the wall clock, so the same
 * input always gives the same output.  Late events are kept and marked.
 *
 * Shard.  With shards > 1, XXH3-64 of the event_id modulo shards, so a
 * hot key's events spread evenly and a retry lands where the original
 * did; with 1 shard every event is in shard 0.  With a shard map
 * (cnt_window_set_map, count/shardmap.h) instead, an event of a key the
 * map gives k shards is in shard XXH3-64(event_id) mod k and every other
 * event in shard 0: only the hot keys are split.
 *
 * Per counter the module keeps what cnt-window --stats reports: events,
 * late events, the largest ingest lag and how often (and how far) a
 * client clock ran ahead of the server's.
 */
#ifndef CNT_COUNT_WINDOW_H
#define CNT_COUNT_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "avro/container.h"
#include "count/stage.h"
#include "model/defs.h"
#include "model/windowed.h"

#define CNT_WINDOW_MAX_SHARDS 65536

/* What one counter saw (definitions order). */
typedef struct cnt_window_counter {
	uint64_t in;              /* events windowed (rejects not included) */
	uint64_t late;
	int64_t max_lag_ms;       /* largest ingest_time - event_time, 0 when none lags */
	uint64_t clock_ahead;     /* events whose event_time is after their ingest_time */
	int64_t max_clock_ahead_ms;
} cnt_window_counter;

typedef struct cnt_window_totals {
	uint64_t in, out, late, rejected;
	uint64_t unknown_tenant, unknown_counter;   /* rejected, by reason */
	uint64_t not_monotonic;                    /* rejected: stage.h */
} cnt_window_totals;

typedef struct cnt_window cnt_window;

/* A window stage over defs (defs_name names the file in reject messages)
 * with 1 to CNT_WINDOW_MAX_SHARDS shards, writing to out (NULL when only
 * cnt_window_attribute is used).  defs and out must outlive it and are
 * not owned.  Timezones are loaded when first needed.  NULL with err set
 * (out of memory, or shards out of range). */
cnt_window *cnt_window_new(const cnt_defs *defs, const char *defs_name, uint32_t shards, cnt_writer *out,
	cnt_err *err);
void cnt_window_free(cnt_window *w);

/* Shards by map m (count/shardmap.h) from now on, instead of the shard
 * count given to cnt_window_new (which must then be 1); m must outlive w
 * and is not owned.  NULL goes back to the shard count. */
struct cnt_shardmap;
void cnt_window_set_map(cnt_window *w, const struct cnt_shardmap *m);

/* Attributes e: sets out's bucket_start, bucket_end, late, shard and exact, and
 * out->ev = *e.  Counts nothing and writes nothing.  Returns 0; 1 when e
 * names no declared counter version (*rej says why); -1 with err set when
 * the tenant's timezone cannot be loaded or memory runs out. */
int cnt_window_attribute(cnt_window *w, const cnt_event *e, cnt_windowed *out,
	cnt_count_reject *rej, cnt_err *err);
/* The same for e already looked up as t (cnt_count_lookup() over the
 * definitions w was made with): no second lookup.  e may be &out->ev.
 * 0, or -1 with err set. */
int cnt_window_attribute_as(cnt_window *w, const cnt_event *e, const cnt_count_target *t, cnt_windowed *out,
	cnt_err *err);

/* What cnt_window_attribute_as() could fail on, checked without
 * attributing: loads t's tenant's timezone (when first needed) and checks
 * an approx event's sampling level, given as sample (its
 * cnt_event_sample_level(), found where e was decoded; anything for
 * another type).  e is read only to name it in the error.  The reader of
 * count/fused.h calls it in log order, so that the first failing event
 * stops the run whatever the threads.  0, or -1 with err set as _as()
 * sets it. */
int cnt_window_check(cnt_window *w, const cnt_event *e, const cnt_count_target *t, int sample, cnt_err *err);

/* A window with w's definitions, shards and map and no writer, for
 * another thread to attribute and count with (count/fused.h): a tenant's
 * timezone is taken from w when cnt_window_check() loaded it there (w's
 * cursor of that tenant is then only read), else loaded.  So w's check of
 * a tenant must happen before a sibling attributes an event of it (in
 * count/fused.h, the batch's hand-over under a mutex orders them), and w
 * is not used to attribute while siblings run.  Its counts go back into
 * w with cnt_window_absorb().  NULL with err set. */
cnt_window *cnt_window_sibling(const cnt_window *w, cnt_err *err);
/* Adds src's counts (totals and counters) into dst, both over the same
 * definitions: sums, and the larger of each maximum, so the result does
 * not depend on how the events were split between them. */
void cnt_window_absorb(cnt_window *dst, const cnt_window *src);

/* The stage for one event: attributes it, counts it, and appends the
 * cnt.WindowedEvent to the writer.  raw/rawn are e's Avro bytes when the
 * reader has them (cnt_event_in_raw: copied as they are), else raw is
 * NULL and e is encoded.  Returns 0 (written), 1 (rejected: counted, *rej
 * says why, nothing written) or -1 with err set (a timezone, memory, a
 * write). */
int cnt_window_event(cnt_window *w, const cnt_event *e, const uint8_t *raw, size_t rawn,
	cnt_count_reject *rej, cnt_err *err);
/* cnt_window_event with w as a void pointer, for cnt_count_input(). */
int cnt_window_stage(void *w, const cnt_event *e, const uint8_t *raw, size_t rawn,
	cnt_count_reject *rej, cnt_err *err);

/* Counts e, attributed by cnt_window_attribute() or _as() as wv, of the counter
 * of definitions index counter_index, as cnt_window_event() counts what
 * it writes, without writing it (count/fused.h). */
void cnt_window_take(cnt_window *w, const cnt_event *e, const cnt_windowed *wv, size_t counter_index);

/* Ends the stage: checks that every event was written or rejected
 * (in = out + rejected; an internal error otherwise) and finishes the
 * writer (cnt_writer_finish) when there is one.  0 or -1 with err set. */
int cnt_window_finish(cnt_window *w, cnt_err *err);

/* Counts so far; the counter of definitions index i (i < the number of
 * counters). */
const cnt_window_totals *cnt_window_get_totals(const cnt_window *w);
const cnt_window_counter *cnt_window_get_counter(const cnt_window *w, size_t i);

/* The lateness rule: 1 when ingest_ms is after bucket_end_ms plus
 * horizon_s seconds (no overflow for any values). */
int cnt_window_is_late(int64_t ingest_ms, int64_t bucket_end_ms, int64_t horizon_s);

/* The shard of an event_id of n bytes among shards (>= 1). */
int32_t cnt_window_shard(const void *event_id, size_t n, uint32_t shards);

#endif
