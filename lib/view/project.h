/*
 * project.h - composing a board's window from bucket files and ranking
 * its members (cnt-project(1)).
 *
 * Buckets of the board's counter (and pinned version, when the board pins
 * one) whose [bucket_start, bucket_end) lies inside the window are added
 * per member across buckets and shards: sums for exact counters, minima
 * and maxima for min and max counters, the union of sketches for unique
 * counters (the value is then the HyperLogLog++ estimate).  Late columns
 * are not part of a standing.  Members are split by scope, sorted by the
 * board's order and tie-break, and numbered.
 *
 * Ties: two members are tied when they have the same value and are equal
 * under every tie-break rule but the last, member_ref_asc, which only makes
 * the order total.  Competition numbering gives tied members the same rank
 * and skips (1, 2, 2, 4), dense does not skip (1, 2, 2, 3), ordinal numbers
 * every position (1, 2, 3, 4).
 */
#ifndef CNT_PROJECT_H
#define CNT_PROJECT_H

#include "model/bucket.h"
#include "model/defs.h"
#include "model/event.h"
#include "view/view.h"

typedef struct cnt_proj cnt_proj;

/* A projection of board over the UTC window [from, to). */
cnt_proj *cnt_proj_new(const cnt_leaderboard *board, int64_t from, int64_t to, cnt_err *err);
void cnt_proj_free(cnt_proj *p);

/* Moves the window's end to to (from <= to <= the end given to
 * cnt_proj_new), before any bucket is added: a verified view's window
 * ends at its audit's watermark (view/verified.h). */
void cnt_proj_cut(cnt_proj *p, int64_t to);

/* Assigns a member to a scope (before cnt_proj_finish).  A member given
 * twice keeps the last.  0 or -1 (out of memory). */
int cnt_proj_set_scope(cnt_proj *p, const char *member, size_t mn, const char *scope, size_t sn);

/* Region scopes from the log: the member's scope becomes the value of the
 * board's scope_attr in the member's latest event of the board's tenant
 * (by event_time; equal times are settled by a hash of event_id, so the
 * answer is the same whatever the order of the events).  Events without the
 * attribute, or with it empty, are ignored.  A value that is not UTF-8
 * text (a NUL, or bytes that are not UTF-8: only a log no cnt tool wrote
 * holds one) cannot name a scope: -1 with err naming the event.  0, or -1
 * with err set (kind CNT_ERR_NOMEM when out of memory). */
int cnt_proj_scope_from_event(cnt_proj *p, const cnt_event *e, cnt_err *err);

/* Adds a bucket record; records of other counters or outside the window
 * are skipped (but their max_ingest_time counts toward the as-of when
 * they belong to the board's counter).  A board that reads every version
 * (counter_version 0) refuses a bucket of a version whose type differs
 * from the newest version's.  0 or -1 with err set. */
int cnt_proj_add_bucket(cnt_proj *p, const cnt_bucket *b, cnt_err *err);

/* Computes values, splits by scope and ranks.  Members without a scope
 * when the board is scoped are left out (counted in unscoped).  0 or -1. */
int cnt_proj_finish(cnt_proj *p, cnt_err *err);

size_t cnt_proj_nscopes(const cnt_proj *p);
/* The scope's key ("global" for a global board). */
const char *cnt_proj_scope(const cnt_proj *p, size_t i);
/* The view of scope i: entries in rank order, names, histogram.  The
 * pointers stay valid until cnt_proj_free(); desc is left NULL. */
int cnt_proj_view(cnt_proj *p, size_t i, cnt_view_build *out, cnt_err *err);

typedef struct cnt_proj_stats {
	uint64_t buckets_read, buckets_used, members, unscoped, clamped;
	int64_t as_of;          /* largest max_ingest_time of the counter's buckets */
} cnt_proj_stats;
const cnt_proj_stats *cnt_proj_get_stats(const cnt_proj *p);

/* The counter versions of the buckets counted so far, for the view's
 * fingerprint table (model/fingerprint.h). */
struct cnt_fp_set;
const struct cnt_fp_set *cnt_proj_versions(const cnt_proj *p);

/* Orders two entries as the board ranks them: <0 when a ranks above b. */
int cnt_proj_cmp(const cnt_leaderboard *board, const cnt_view_entry *a, const char *an,
	const cnt_view_entry *b, const char *bn);
/* Whether a and b are tied (same value, equal under all rules but the
 * member_ref one). */
int cnt_proj_tied(const cnt_leaderboard *board, const cnt_view_entry *a, const cnt_view_entry *b);

#endif
