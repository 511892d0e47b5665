/*
 * accum.h - grouping events (and bucket records) into bucket aggregates,
 * within a memory limit (cnt-accumulate).
 *
 * Groups live in a hash table keyed by (stream, member, bucket_start,
 * shard), where a stream is an interned (tenant, counter, version) and a
 * member an interned member_ref.  When the estimated memory passes the
 * limit, the groups are sorted into canonical key order and written to a
 * temporary run file (a bucket file, null codec) and the table starts
 * empty; at the end the runs and what is left in memory are merged, equal
 * keys combined, as sort(1) does.  Because every aggregate is commutative
 * and associative, the output bytes are the same with or without spills.
 *
 * Memory: about 150 bytes per group plus 40 per distinct member plus the
 * sketches (a sparse HLL++ takes 4 bytes per distinct item, a dense one 16
 * KiB), plus 1 MiB of buffers per run while merging.
 */
#ifndef CNT_ACCUM_H
#define CNT_ACCUM_H

#include <stdint.h>

#include "model/bucket.h"
#include "model/windowed.h"
#include "count/rollup.h"

typedef struct cnt_accum cnt_accum;

typedef struct cnt_accum_stats {
	uint64_t events, late_events, buckets_in;
	uint64_t groups_out, runs;
	uint64_t compensations;        /* events with `retracts` set (of events) */
	uint64_t emptied;              /* keys left with no event, not written */
	uint64_t stale;                /* records written whose latest times
	                                * compensations made unknown
	                                * (cnt_bucket_stale) */
	uint64_t sum_overflows;        /* output records whose sum needs 128 bits */
	uint64_t dim_records;          /* breakdown records written (dim not empty;
	                                * counted in groups_out too) */
	uint64_t events_in_buckets;    /* count + late_count of the bucket records read */
	uint64_t events_out;           /* count + late_count of the records written:
	                                * events + events_in_buckets when balanced */
	uint64_t scaled_extra;         /* approx: what sampling weights add to
	                                * count beyond one per event, sum of
	                                * 2^L - 1 (compensations subtract theirs;
	                                * modulo 2^64) */
	uint64_t day_records;          /* day roll-ups written (cnt_accum_days) */
	size_t peak_bytes;             /* largest memory estimate reached */
} cnt_accum_stats;

/* Makes an accumulator that spills above memory_limit bytes into
 * temporary files in tmpdir.  NULL with err set on failure. */
cnt_accum *cnt_accum_new(size_t memory_limit, const char *tmpdir, cnt_err *err);
void cnt_accum_free(cnt_accum *a);

/* Adds one windowed event, to its member's total record and, for each
 * of w->dims, to the breakdown record of (dimension, attrs[dimension] or
 * CNT_DIM_NONE) (cnt-bucket(5)); statistics count it once.  An event of
 * an exact counter (w->exact)
 * sets no min, max or sketch.  An event with `retracts` set is a
 * compensation (cnt-retract(1)): it subtracts one from count (late_count
 * when late) and adds its delta to sum (late_sum), subtracts one from the
 * multiplicity of its times (last_event_count when on time,
 * max_ingest_count), touching nothing else, so a record may hold negative
 * counts until merged with the record of the events it retracts.  In the
 * output, a key whose count, late_count, sum and late_sum are all 0 is
 * left out, and one whose count is 0 and last_event_count 0 has no
 * last_event_time.  0, or -1 with err set (out of memory, or a
 * spill that could not be written). */
int cnt_accum_add_event(cnt_accum *a, const cnt_windowed *w, cnt_err *err);
/* Adds n windowed events (n <= CNT_ACCUM_BATCH) whose strings are all
 * valid during the call; faster than one at a time.  0 or -1. */
#define CNT_ACCUM_BATCH 32
int cnt_accum_add_events(cnt_accum *a, const cnt_windowed *w, size_t n, cnt_err *err);
/* The same, given pointers to the events (n <= CNT_ACCUM_BATCH). */
int cnt_accum_add_refs(cnt_accum *a, const cnt_windowed *const *w, size_t n, cnt_err *err);
/* What cnt-count's reader already knows of an event, so that the
 * accumulator does not find it again: its counter's index in the
 * definitions (an index names one tenant and counter for the
 * accumulator's whole life; the version is still the event's) and
 * XXH3_64bits() of its member_ref. */
typedef struct cnt_accum_hint {
	uint32_t counter;
	uint64_t member_hash;
} cnt_accum_hint;
/* cnt_accum_add_refs() with a hint for each event (hint NULL: none). */
int cnt_accum_add_hinted(cnt_accum *a, const cnt_windowed *const *w, const cnt_accum_hint *hint, size_t n,
	cnt_err *err);
/* Adds one bucket record (merging bucket files).  0 or -1. */
int cnt_accum_add_bucket(cnt_accum *a, const cnt_bucket *b, cnt_err *err);
/* Moves everything b holds (groups, spilled runs, statistics) into a,
 * whose groups must have no key in common with b's (cnt-count gives
 * each of two accumulators the members of one half of the hash space);
 * b is left empty, to be freed.  0, or -1 with err set (out of memory, a
 * spill, an internal error when a key is shared). */
int cnt_accum_absorb(cnt_accum *a, cnt_accum *b, cnt_err *err);

/* Writes every group, in canonical order, one record per key, to w.
 * Returns 0 or -1 with err set.  The accumulator is spent afterwards. */
int cnt_accum_finish(cnt_accum *a, cnt_writer *w, cnt_err *err);

/* cnt_accum_finish() of two accumulators with no key in common (as
 * cnt_accum_absorb() wants them), writing the same bytes as absorbing b
 * into a and finishing a would: each half is sorted and encoded on a
 * thread of its own while the calling thread merges their records into
 * w (and then their day roll-ups, when cnt_accum_days() was called on
 * a).  With spilled runs or a stale callback it does just that, absorb
 * and finish.  Statistics end in a; both are spent.  0 or -1 with err
 * set. */
int cnt_accum_finish_halves(cnt_accum *a, cnt_accum *b, cnt_writer *w, cnt_err *err);

/* Makes cnt_accum_finish() also write day roll-ups (count/rollup.h):
 * after the hourly records it finishes w (cnt_writer_finish, which then
 * does nothing when called again) and writes the day container to w's
 * descriptor with w's codec and level; zone gives each tenant's zone.
 * Call before cnt_accum_finish().  0 or -1 (out of memory). */
int cnt_accum_days(cnt_accum *a, cnt_rollup_zone_fn zone, void *ctx, cnt_err *err);

/* Lends bytes of memory at mem (any contents; the caller's, not to be
 * touched or freed until a is freed, and with it the other half's
 * accumulator of cnt_accum_finish_halves(), which takes half of the loan)
 * to the day roll-ups of a's output: see cnt_rollup_lend().
 * cnt-count lends its dedup table, dead once the state is saved. */
void cnt_accum_lend(cnt_accum *a, void *mem, size_t bytes);

const cnt_accum_stats *cnt_accum_get_stats(const cnt_accum *a);

/* Has cb called, while the output is written, for each record written
 * that is stale (cnt_bucket_stale), with which of its times is unknown
 * (the bit set cnt_bucket_stale returns).  The record's strings are valid
 * during the call only. */
void cnt_accum_on_stale(cnt_accum *a, void (*cb)(void *ctx, const cnt_bucket *b, int which), void *ctx);

/* ---- whole inputs (accum_read.c) ---- */

/* The default memory limit: like sort(1), a quarter of physical memory,
 * at least 256 MiB. */
size_t cnt_accum_default_memory(void);

/* Reads one input, a stream of Avro containers holding cnt.WindowedEvent
 * (from cnt-window) or cnt.BucketAggregate (bucket files, merged in)
 * records, into a.  fd is not closed; name is used in messages.  tick,
 * when not NULL, is called with the number of records read from time to
 * time (for progress).  0, or -1 with err set (bad input, out of memory,
 * a spill that could not be written). */
int cnt_accum_read(cnt_accum *a, int fd, const char *name, void (*tick)(uint64_t), cnt_err *err);

/* Reads a bucket file (cnt.BucketAggregate records only) into a, or with
 * b set into two accumulators that split the members as cnt-count's two
 * counting threads do (the top bit of XXH3-64 of member_ref: 0 into a, 1
 * into b), so that the halves still hold no key in common.  Arguments and
 * result as cnt_accum_read(). */
int cnt_accum_read_buckets(cnt_accum *a, cnt_accum *b, int fd, const char *name, void (*tick)(uint64_t),
	cnt_err *err);

/* After cnt_accum_finish(): 0 when every event read, directly or inside
 * a bucket record, is counted in exactly one output record (on time or
 * late); -1 with err saying how they differ otherwise. */
int cnt_accum_check_balance(const cnt_accum *a, cnt_err *err);

#endif
