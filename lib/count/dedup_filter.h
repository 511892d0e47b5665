/*
 * dedup_filter.h - the dedup stage (cnt-dedup(1)): which key an event is
 * deduplicated on, and the judging of a stream of events against the
 * remembered keys (count/dedup.h), first occurrences to one writer and
 * duplicates to another.
 *
 * The key rule, by the dedup_key of the event's counter version
 * (cnt-definitions(5)):
 *   idempotency_key  (tenant_id, counter_id, idempotency_key): one event
 *                    per idempotency key (the default);
 *   item_member      (tenant_id, counter_id, member_ref, item): one event
 *                    per (viewer, video) - the view-count key; an event of
 *                    such a counter without an item, and a compensation
 *                    (`retracts` set, cnt-retract(1)), falls back to the
 *                    idempotency key.
 * The counter version is not part of the key (an event and its retry are
 * the same event across a version change), but the horizon is that of
 * the version the event carries.  Parts of different arity never share a
 * key: each part is followed by a NUL byte in the fingerprint, and the
 * view-count key has four parts where the other has three.
 *
 * Time is the event's ingest second (ingest_time / 1000, rounded down; a
 * time before 1970 counts as 0), never the wall clock, so a run repeated
 * with the same state gives the same output.
 *
 * Events are judged in batches of CNT_DEDUP_BATCH, in log order: each
 * event's key is computed when it is queued, and when the batch is full
 * (or flushed) the table slots of all its keys are prefetched together,
 * then judged, so the table's cache and TLB misses overlap.  The events'
 * Avro bytes are copied into the batch, so the reader may move on.
 */
#ifndef CNT_COUNT_DEDUP_FILTER_H
#define CNT_COUNT_DEDUP_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "avro/container.h"
#include "count/dedup.h"
#include "count/stage.h"
#include "model/defs.h"
#include "model/event.h"

#define CNT_DEDUP_BATCH 16

/* The key e is deduplicated on under counter version cv (the rule above). */
cnt_dkey cnt_dedup_event_key(const cnt_counter_version *cv, const cnt_event *e);

/* The ingest second of e, as the table takes it. */
uint64_t cnt_dedup_event_second(const cnt_event *e);

/* What one counter saw (definitions order). */
typedef struct cnt_dedup_counter {
	uint64_t in;           /* events judged (rejects not included) */
	uint64_t duplicates;
} cnt_dedup_counter;

typedef struct cnt_dedup_totals {
	uint64_t in, out, duplicates, rejected;
	uint64_t unknown_tenant, unknown_counter;   /* rejected, by reason */
	uint64_t not_monotonic;                    /* rejected: stage.h */
	/* The smallest and largest event and ingest times (epoch ms) of every
	 * event read, rejected ones included; 0 when none was read. */
	int64_t event_time_min, event_time_max, ingest_time_min, ingest_time_max;
} cnt_dedup_totals;

typedef struct cnt_dedup_filter cnt_dedup_filter;

/* A dedup stage over defs (defs_name names the file in reject messages)
 * judging against table, writing first occurrences to out and duplicates
 * to dups (NULL: only counted).  defs, table and the writers must outlive
 * it and are not owned.  NULL with err set when out of memory. */
cnt_dedup_filter *cnt_dedup_filter_new(const cnt_defs *defs, const char *defs_name, cnt_dedup *table,
	cnt_writer *out, cnt_writer *dups, cnt_err *err);
void cnt_dedup_filter_free(cnt_dedup_filter *f);

/* Queues e for judging (raw/rawn: its Avro bytes when the reader has
 * them, else raw NULL and e is encoded).  Returns 0 (queued; written to
 * out or dups by this or a later call or by cnt_dedup_filter_flush), 1
 * (rejected: counted, *rej says why) or -1 with err set (memory, a
 * write). */
int cnt_dedup_filter_event(cnt_dedup_filter *f, const cnt_event *e, const uint8_t *raw, size_t rawn,
	cnt_count_reject *rej, cnt_err *err);
/* cnt_dedup_filter_event with f as a void pointer, for cnt_count_input(). */
int cnt_dedup_filter_stage(void *f, const cnt_event *e, const uint8_t *raw, size_t rawn,
	cnt_count_reject *rej, cnt_err *err);
/* Judges and writes every queued event.  0 or -1 with err set. */
int cnt_dedup_filter_flush(cnt_dedup_filter *f, cnt_err *err);
/* Ends the stage: flushes, checks that every event ended in exactly one
 * place (in = out + duplicates + rejected; an internal error otherwise)
 * and finishes the writers (cnt_writer_finish).  0 or -1 with err set. */
int cnt_dedup_filter_finish(cnt_dedup_filter *f, cnt_err *err);

/* The two halves of cnt_dedup_filter_event, for a stage that keeps the
 * events itself (count/fused.h).  admit: counts e's times and looks up
 * its counter version; 0 with *t filled (e counted in `in` and its
 * counter's in), or 1 rejected (counted, *rej says why).  judge: judges a
 * key as the batch does (t its ingest second, h its horizon, counter its
 * definitions index) and counts it; 0 first occurrence, 1 duplicate
 * (raw/rawn, its Avro bytes, appended to the duplicates writer when
 * there is one), -1 with err set (memory, a write).  Calls to judge
 * must come in log order; admit and judge touch different counts, so
 * they may run on two threads (one thread each). */
int cnt_dedup_filter_admit(cnt_dedup_filter *f, const cnt_event *e, cnt_count_target *t,
	cnt_count_reject *rej);
int cnt_dedup_filter_judge(cnt_dedup_filter *f, cnt_dkey key, uint64_t t, uint64_t h, size_t counter,
	const uint8_t *raw, size_t rawn, cnt_err *err);
/* Prefetches key's slot of the table, some judgements ahead. */
void cnt_dedup_filter_prefetch(const cnt_dedup_filter *f, cnt_dkey key);

/* Counts so far (queued events are in `in` but not yet in out or
 * duplicates); the counter of definitions index i. */
const cnt_dedup_totals *cnt_dedup_filter_totals(const cnt_dedup_filter *f);
const cnt_dedup_counter *cnt_dedup_filter_counter(const cnt_dedup_filter *f, size_t i);

/* How many keys n named inputs are likely to bring, so the table can be
 * sized once: each regular file among them by its first block's records
 * per byte (cnt_container_guess_records), or at one per 48 bytes (a
 * zstandard archive) when that block cannot be read; at most one per 32
 * bytes it stores (cnt_files_guess, base/filehead.h).  Standard input and
 * anything not a regular file add nothing; the sum stops at SIZE_MAX. */
size_t cnt_dedup_expected_keys(char *const *names, int n);

#endif
