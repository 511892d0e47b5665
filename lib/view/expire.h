/*
 * expire.h - bucket expiry (cnt-expire(1)): which bucket records no
 * declared window can reach any more at an instant, and a bucket file
 * rewritten without them.
 *
 * A record of (tenant, counter, version) stays reachable at now when any
 * of these holds (windows as cnt-project(1) takes them, in the tenant's
 * zone):
 *   - the version declares all_time (its value since the first event can
 *     always be asked for);
 *   - the version declares a moving window (day, week, month, rolling_24h,
 *     last_30d) whose window taken at now or later can still include the
 *     record: bucket_end > the window's start at now (for week, the
 *     earliest start any week_start gives: the last 7 local days);
 *   - a board over the counter (any version, or this one when pinned) has
 *     a range window, or a season window with a season, whose span
 *     overlaps the record: a fixed span can be projected again at any
 *     time (a past season with cnt-project --season), so it never ends.
 * Windows move only forward, so a record unreachable at now stays so at
 * every later instant: expiring is safe to repeat and never needs undoing
 * (the archive keeps every event; cnt-accumulate rebuilds any record).
 * Breakdown records follow their total.  A record whose counter or
 * version the definitions do not declare is kept (and counted: unknown).
 */
#ifndef CNT_EXPIRE_H
#define CNT_EXPIRE_H

#include <stdint.h>

#include "avro/container.h"
#include "base/err.h"
#include "model/bucket.h"
#include "model/defs.h"
#include "time/tz.h"

typedef struct cnt_expire_stats {
	uint64_t in;        /* records read */
	uint64_t kept;      /* written (or that would be) */
	uint64_t expired;   /* left out */
	uint64_t unknown;   /* kept because their counter version is not declared */
	uint64_t days_kept, days_expired; /* of them, day records (cnt-bucket(5)) */
} cnt_expire_stats;

/* Called once per run of expired records of one (tenant, counter,
 * version): the number of records and the span of their buckets
 * [first_start, last_end).  A non-zero return stops the run with err as
 * set by the callback. */
typedef int (*cnt_expire_report)(void *ctx, cnt_slice tenant, cnt_slice counter, int32_t version,
	uint64_t records, int64_t first_start, int64_t last_end, cnt_err *err);

/* Whether bucket b is reachable at now (see above): 1 yes, 0 no, 2 kept
 * because its counter version is not declared, -1 with err set (a zone
 * that cannot be loaded). */
int cnt_expire_reachable(const cnt_defs *defs, cnt_tz_cache *tzc, const cnt_bucket *b, int64_t now, cnt_err *err);

/* Reads the bucket file on fd (name for messages), writes every reachable
 * record to w (NULL: writes nothing, a dry run) in the same order, and
 * the reachable day records (cnt-bucket(5), count/rollup.h; same rule, by
 * their span) to a day container after it (w is then finished; finishing
 * it again does nothing); day records are reported in runs of their own;
 * reports each run of expired records to report (NULL: none).  0, or -1
 * with err naming the file and record. */
int cnt_expire_run(const cnt_defs *defs, int64_t now, int fd, const char *name, cnt_writer *w,
	cnt_expire_report report, void *ctx, cnt_expire_stats *st, cnt_err *err);

#endif
