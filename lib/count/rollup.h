/*
 * rollup.h - local-day roll-ups of bucket files (cnt-bucket(5), "Day
 * roll-ups").
 *
 * A day record has the key of an hourly record except that bucket_start
 * and bucket_end are the UTC start and end of a local day of the tenant's
 * zone (23 or 25 hours long on a DST day); its values are the exact union
 * of that day's hourly records of the same (tenant, counter, version,
 * member, dim, dim_value, shard): sums and counts added, min, max and the
 * latest times with their multiplicities combined, sketches merged.
 *
 * Day records are always derived from the final hourly records, at output
 * time, never read back: so they are the same bytes however the input was
 * ordered, split, spilled or merged.  They are written as a second Avro
 * container on the same stream, after the hourly one, whose header has
 * cnt.rollup = "day" (CNT_ROLLUP_META).
 *
 * Memory: the encoded day records are kept until the end (about 1/24 of
 * the hourly records' bytes, uncompressed; 75 bytes a day record in the
 * benchmark): first in memory the caller lends (cnt_rollup_lend), if
 * any, then in memory of their own, on the heap and copied as it grows
 * below 4 MiB, mapped and grown by remapping above (base/table.h).
 */
#ifndef CNT_ROLLUP_H
#define CNT_ROLLUP_H

#include <stdint.h>

#include "model/bucket.h"
#include "time/tz.h"

#define CNT_ROLLUP_META "cnt.rollup"

typedef struct cnt_rollup cnt_rollup;

/* The zone of tenant t: NULL with err set when it is not known. */
typedef const cnt_tz *(*cnt_rollup_zone_fn)(void *ctx, cnt_slice tenant, cnt_err *err);

/* A zone function for cnt_rollup_new(): ctx is a cnt_rollup_zones; a
 * tenant not declared in defs is an error. */
typedef struct cnt_rollup_zones {
	const struct cnt_defs *defs;
	cnt_tz_cache *tzc;
	const char *defs_name;
} cnt_rollup_zones;
const cnt_tz *cnt_rollup_defs_zone(void *ctx, cnt_slice tenant, cnt_err *err);

/* A roll-up builder asking zone(ctx, tenant) for zones.  NULL when out of
 * memory. */
cnt_rollup *cnt_rollup_new(cnt_rollup_zone_fn zone, void *ctx);
void cnt_rollup_free(cnt_rollup *r);

/* Lends r bytes of memory at mem (any contents; the caller's, never
 * freed by r, and not to be touched until r is freed) to keep its day
 * records in, before r has kept any: memory already faulted in costs
 * nothing more, where fresh memory costs its zeroing (cnt-count lends
 * its dead dedup table).  Records that outgrow it move to r's own
 * memory.  Ignored once r keeps records. */
void cnt_rollup_lend(cnt_rollup *r, void *mem, size_t bytes);

/* Adds one hourly record, whose sketches are sketch and late_sketch (in
 * memory, as the accumulator writing the record has them; NULL: none;
 * b's sketch bytes are not read); records must come in canonical key
 * order (as written to the hourly container).  0, or -1 with err set
 * (unknown zone, an hour not within one local day, out of memory). */
struct cnt_hll;
int cnt_rollup_add(cnt_rollup *r, const cnt_bucket *b, const struct cnt_hll *sketch,
	const struct cnt_hll *late_sketch, cnt_err *err);

/* Finishes hours, the writer of the hourly container (cnt_writer_finish,
 * which does nothing when called again), and makes the writer of the day
 * container that follows it on the same descriptor, with its codec and
 * level.  NULL with err set. */
cnt_writer *cnt_rollup_day_writer(cnt_writer *hours, cnt_err *err);

/* Ends the input and writes the day container (even an empty one) after
 * the hourly container written with hours (cnt_rollup_day_writer).  0,
 * or -1 with err set. */
int cnt_rollup_write(cnt_rollup *r, cnt_writer *hours, cnt_err *err);
/* The same for n builders fed records of disjoint members (each in
 * canonical order; cnt-count's halves): their day records are merged into
 * the one day container (n <= 8, cnt_bucket_merge_members). */
int cnt_rollup_write_merged(cnt_rollup *const *rs, size_t n, cnt_writer *hours, cnt_err *err);

/* Day records made so far (all of them after cnt_rollup_write). */
uint64_t cnt_rollup_records(const cnt_rollup *r);

/* Whether a container's metadata marks day records: 1 day, 0 hourly
 * (no cnt.rollup key), -1 with err set for an unknown roll-up kind. */
int cnt_rollup_kind(const cnt_meta_kv *kv, size_t n, const char *name, cnt_err *err);

/* Positions fd, a regular file open at its start, at the start of its
 * day container, skipping the hourly containers' blocks by their sizes
 * without reading them.  Returns 1 when positioned, 0 when the file has
 * no day container (fd is back at its start; also for anything that is
 * not a regular file, which is left untouched), -1 with err set when the
 * container framing is corrupt. */
int cnt_rollup_seek_days(int fd, const char *name, cnt_err *err);

/* Whether [start, end) is exactly the local day of tz starting at start. */
int cnt_rollup_is_day(const cnt_tz *tz, int64_t start, int64_t end);

/* A reader's check that the day records of a tenant are local days of
 * its zone (a file written under another timezone is refused rather
 * than summed into the wrong days), each distinct day checked once: a
 * direct-mapped cache, set up with cnt_rollup_days_seen_init. */
typedef struct cnt_rollup_days_seen {
	int64_t v[256][2];
} cnt_rollup_days_seen;
void cnt_rollup_days_seen_init(cnt_rollup_days_seen *c);
/* 0 when [start, end) is a local day of tz, else -1 with err naming the
 * file. */
int cnt_rollup_check_day(cnt_rollup_days_seen *c, const cnt_tz *tz, const char *name,
	int64_t start, int64_t end, cnt_err *err);

#endif
