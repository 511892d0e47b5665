/*
 * bucket.h - bucket aggregates (cnt.BucketAggregate,
 * lib/model/schemas/bucket_aggregate.avsc; cnt-bucket(5)): the struct, its
 * encoding, the canonical key order, and a reader.
 *
 * A bucket file holds one record per key (tenant_id, counter_id,
 * counter_version, member_ref, dim, dim_value, bucket_start, shard),
 * sorted by that key:
 * strings by their bytes (memcmp, shorter first on a tie), numbers as
 * signed integers.  Every aggregate in a record is commutative and
 * associative (sums are exact 128-bit integers, min, max, latest times,
 * HyperLogLog++ unions in canonical form), so the same events give the
 * same bytes however they were ordered, split and merged.
 *
 * dim is empty in a member's total record.  A counter version that
 * declares dimensions (cnt-definitions(5)) also has, for each dimension
 * and each value of it, a breakdown record (dim = the attrs key,
 * dim_value = the events' value, CNT_DIM_NONE when they have none): the
 * same events again, so a reader computing a member's value must skip
 * them (cnt_bucket_is_total).
 */
#ifndef CNT_BUCKET_H
#define CNT_BUCKET_H

#include <stdint.h>

#include "avro/container.h"
#include "count/hll.h"
#include "ingest/rawevent.h"
#include "model/record_reader.h"

typedef __int128 cnt_i128;

typedef struct cnt_bucket {
	cnt_slice tenant_id, counter_id;
	int32_t counter_version;
	cnt_slice member_ref;
	cnt_slice dim, dim_value;     /* both empty in a total record */
	int64_t bucket_start, bucket_end;
	int32_t shard;
	int64_t count;
	cnt_i128 sum;                 /* exact */
	int has_min, has_max, has_last;
	int64_t min, max, last_event_time;
	int64_t max_ingest_time;
	int64_t late_count;
	cnt_i128 late_sum;
	cnt_slice sketch, late_sketch; /* serialized HLL++, p == NULL: none */
	/* Multiplicities, so that a compensation merged in can be told to
	 * leave the latest times as a rebuild would: on-time events at
	 * last_event_time, and events at max_ingest_time, each less the
	 * compensations at that time (negative in a file of compensations
	 * alone; 0 where the time is not known, see cnt_bucket_stale). */
	int64_t last_count, ingest_count;
	/* Approximate counters (cnt-definitions(5), type approx): the
	 * on-time events actually read (count and sum are scaled by each
	 * event's weight 2^L), and the Horvitz-Thompson variance estimate of
	 * sum, the 128-bit wrapping sum of d*d*w*(w-1) (compensations
	 * subtract theirs).  Both 0 for every other type. */
	int64_t sampled;
	cnt_i128 sum_var;
} cnt_bucket;

/* The dimension value of events whose attrs lack the dimension's key. */
#define CNT_DIM_NONE "(none)"

/* Whether b is a member's total (not a breakdown by a dimension). */
static inline int cnt_bucket_is_total(const cnt_bucket *b)
{
	return b->dim.n == 0;
}

/* Whether a record with events (count and late_count not negative, not
 * both 0) has a latest time that compensations made unknown: its
 * last_event_count (when count > 0) or max_ingest_count is not positive.
 * Such a record differs from a rebuild without the retracted events
 * (cnt-retract --rebuild recounts it).  Returns a bit set: 1 for
 * last_event_time, 2 for max_ingest_time; 0 when neither. */
int cnt_bucket_stale(const cnt_bucket *b);

/* Appends b's Avro encoding.  Returns 0 or -1 (out of memory). */
int cnt_bucket_encode(const cnt_bucket *b, cnt_buf *out);

/* Bucket files are compressed at zstandard's level 1 unless a level is
 * given: they are projections, rebuilt from the archive, read back in
 * full, and written by the counting chain's last step, where level 3
 * took about a tenth of cnt-count's time for 1.2 % fewer bytes (the
 * archive, the system of record, keeps level 3: cnt-ingest(1)). */
#define CNT_BUCKET_ZSTD_LEVEL 1

/* A writer of bucket files (the schema written compactly); level
 * CNT_LEVEL_DEFAULT with zstandard is CNT_BUCKET_ZSTD_LEVEL, else the
 * codec's default. */
cnt_writer *cnt_bucket_writer_new(int fd, const char *name, cnt_codec_id codec, int level, cnt_err *err);

/* Compares keys in the canonical order: <0, 0, >0. */
int cnt_bucket_key_cmp(const cnt_bucket *a, const cnt_bucket *b);
/* Reads only the key fields of an encoded record into k (its slices point
 * into p): 0, or -1 when the record is too short for its key. */
int cnt_bucket_rec_key(const uint8_t *p, size_t n, cnt_bucket *k);

/* A source of encoded records in key order: next() sets *rec and *n (valid
 * until its next call) and returns 1, or 0 at the end, or -1 when the
 * source failed (its error is its own to report). */
typedef struct cnt_bucket_src {
	int (*next)(void *ctx, const uint8_t **rec, size_t *n);
	void *ctx;
} cnt_bucket_src;
/* Writes the records of the n sources (n <= 8), whose keys are disjoint,
 * to w in key order, each key read once.  0 when every source ended;
 * 1 with *failed set when source *failed returned -1 (the merge stops
 * there); -1 with err set when writing to w failed. */
int cnt_bucket_merge(const cnt_bucket_src *src, size_t n, cnt_writer *w, size_t *failed, cnt_err *err);
/* cnt_bucket_merge of sources split by member: no (tenant, counter,
 * version, member) has records in two of them (cnt-count's halves).  A
 * source's records of the member just written are written after it
 * without reading their keys or comparing (a byte comparison of the
 * prefix those fields encode to): on the 10 M benchmark, reading keys and
 * tracking versions fell from 2.7 % of cnt-count's CPU samples to 1.2 %. */
int cnt_bucket_merge_members(const cnt_bucket_src *src, size_t n, cnt_writer *w, size_t *failed, cnt_err *err);

/* Whether an exact sum fits a signed 64-bit long. */
static inline int cnt_i128_fits64(cnt_i128 v)
{
	return v >= INT64_MIN && v <= INT64_MAX;
}

/* Appends b as a compact JSON object: its fields as cnt-cat prints them,
 * except sketches, which are given as their estimates ("sketch_estimate",
 * "late_sketch_estimate"; null when absent or unreadable) and a 128-bit
 * sum, which is a decimal number.  Returns 0 or -1 (out of memory). */
int cnt_bucket_to_json(const cnt_bucket *b, cnt_buf *out);

/* Compares everything but the key: 0 when equal, 1 when not, -1 when out
 * of memory (reading sketches to compare their estimates).  tolerance > 0
 * compares sketches by their estimates, equal within that relative
 * difference; 0 compares their bytes. */
int cnt_bucket_values_differ(const cnt_bucket *a, const cnt_bucket *b, double tolerance);

/* A reader sees one kind of record: hourly records (days = 0, the
 * default: containers of day roll-ups, cnt-bucket(5), are skipped, so
 * that no reader counts an event twice) or day records (days = 1, set
 * after opening: hourly containers are skipped); days = -1 sees both,
 * is_day telling which the last record is.  saw_days: a day container
 * was met (skipped or not). */
typedef struct cnt_bucket_in {
	cnt_typed_in t;
	int days;
	int is_day, saw_days;
	unsigned cont;
} cnt_bucket_in;

/* Opens a bucket file on fd (not closed).  0, or -1 with err set. */
int cnt_bucket_in_open(cnt_bucket_in *in, int fd, const char *name, const cnt_limits *lim, cnt_err *err);
/* The same for an input already open: takes rin over, also on failure. */
int cnt_bucket_in_adopt(cnt_bucket_in *in, cnt_records *rin, const cnt_limits *lim, cnt_err *err);
/* Reads the next record (slices valid until the next call): 1, 0 at the
 * end, -1 with err naming the place. */
int cnt_bucket_in_next(cnt_bucket_in *in, cnt_bucket *b, cnt_err *err);
void cnt_bucket_in_release(cnt_bucket_in *in);

#endif
