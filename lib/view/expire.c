/*
 * expire.c - bucket expiry (see expire.h).
 */
#include "view/expire.h"

#include <stdlib.h>
#include <string.h>

#include "count/rollup.h"
#include "model/fingerprint.h"
#include "view/board.h"

/* What reaches the records of one (tenant, counter, version). */
typedef struct reach {
	int unknown;          /* counter version not declared: keep */
	int all;              /* all_time: keep */
	int64_t moving_from;  /* keep when bucket_end > this; INT64_MAX: no moving window */
	size_t nspans, cap;
	int64_t *spans;       /* [from, to) pairs of ranges and seasons */
} reach;

static int add_span(reach *r, int64_t from, int64_t to, cnt_err *err)
{
	if (r->nspans == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 8;
		int64_t *p = realloc(r->spans, cap * 2 * sizeof(*p));

		if (p == NULL)
			return cnt_err_nomem(err);
		r->spans = p;
		r->cap = cap;
	}
	r->spans[2 * r->nspans] = from;
	r->spans[2 * r->nspans + 1] = to;
	r->nspans++;
	return 0;
}

/* The earliest start of a moving window of kind k taken at now (the
 * window only moves forward after now). */
static int64_t moving_start(const cnt_tz *tz, cnt_window_kind k, int64_t now)
{
	switch (k) {
	case CNT_WIN_DAY: return cnt_tz_day(tz, now).start_ms;
	/* every week_start's week starts within the last 7 local days */
	case CNT_WIN_WEEK: return cnt_tz_last_days(tz, now, 7).start_ms;
	case CNT_WIN_MONTH: return cnt_tz_month(tz, now).start_ms;
	case CNT_WIN_ROLLING_24H: return cnt_tz_rolling(tz, now, 24 * 3600 * INT64_C(1000)).start_ms;
	case CNT_WIN_LAST_30D: return cnt_tz_last_days(tz, now, 30).start_ms;
	default: return INT64_MAX;
	}
}

static void add_windows(reach *r, const cnt_tz *tz, unsigned windows, int64_t now)
{
	for (int k = 0; k < CNT_WIN_COUNT; k++) {
		int64_t s;

		if (!(windows & CNT_WIN_BIT(k)))
			continue;
		if (k == CNT_WIN_ALL_TIME) {
			r->all = 1;
			continue;
		}
		s = moving_start(tz, (cnt_window_kind)k, now);
		if (s < r->moving_from)
			r->moving_from = s;
	}
}

static int compute(reach *r, const cnt_defs *defs, cnt_tz_cache *tzc, const cnt_bucket *b, int64_t now, cnt_err *err)
{
	const cnt_counter *c = cnt_defs_counter(defs, b->tenant_id.p, b->tenant_id.n, b->counter_id.p, b->counter_id.n);
	const cnt_counter_version *cv = c ? cnt_counter_version_get(c, b->counter_version) : NULL;
	const cnt_tz *tz;

	r->unknown = cv == NULL;
	r->all = 0;
	r->moving_from = INT64_MAX;
	r->nspans = 0;
	if (cv == NULL)
		return 0;
	if ((tz = cnt_tz_cache_get(tzc, c->tenant->timezone, err)) == NULL)
		return cnt_err_prefix(err, "tenant '%s'", c->tenant_id);
	add_windows(r, tz, cv->windows, now);
	for (size_t i = 0; i < cnt_defs_nboards(defs); i++) {
		const cnt_leaderboard *bd = cnt_defs_board_at(defs, i);
		int64_t from, to;
		const char *label;

		if (bd->counter != c || (bd->counter_version != 0 && bd->counter_version != b->counter_version))
			continue;
		if (bd->window == CNT_WIN_RANGE) {
			if (cnt_board_window(defs, bd, tzc, now, NULL, &from, &to, &label, err) != 0 ||
			    add_span(r, from, to, err) != 0)
				return -1;
		} else if (bd->window == CNT_WIN_SEASON) {
			for (size_t j = 0; j < cnt_defs_nseasons(defs); j++) {
				const cnt_season *s = cnt_defs_season_at(defs, j);

				if (s->board != bd)
					continue;
				if (cnt_board_window(defs, bd, tzc, now, s->season_id, &from, &to, &label, err) != 0 ||
				    add_span(r, from, to, err) != 0)
					return -1;
			}
		} else {
			add_windows(r, tz, CNT_WIN_BIT(bd->window), now);
		}
	}
	return 0;
}

static int reachable(const reach *r, const cnt_bucket *b)
{
	if (r->unknown)
		return 2;
	if (r->all || b->bucket_end > r->moving_from)
		return 1;
	for (size_t i = 0; i < r->nspans; i++)
		if (b->bucket_start < r->spans[2 * i + 1] && b->bucket_end > r->spans[2 * i])
			return 1;
	return 0;
}

int cnt_expire_reachable(const cnt_defs *defs, cnt_tz_cache *tzc, const cnt_bucket *b, int64_t now, cnt_err *err)
{
	reach r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = compute(&r, defs, tzc, b, now, err) != 0 ? -1 : reachable(&r, b);
	free(r.spans);
	return rc;
}

/* The stream being read: its key (copied) and its expired records. */
typedef struct cur_stream {
	cnt_buf tenant, counter;
	int32_t version;
	int open;
	uint64_t expired;
	int64_t first, last;
} cur_stream;

static int same_stream(const cur_stream *s, const cnt_bucket *b)
{
	return s->open && s->version == b->counter_version && s->tenant.len == b->tenant_id.n &&
	       s->counter.len == b->counter_id.n && memcmp(s->tenant.p, b->tenant_id.p, b->tenant_id.n) == 0 &&
	       memcmp(s->counter.p, b->counter_id.p, b->counter_id.n) == 0;
}

static int close_stream(cur_stream *s, cnt_expire_report report, void *ctx, cnt_err *err)
{
	cnt_slice t = {(const char *)s->tenant.p, s->tenant.len}, c = {(const char *)s->counter.p, s->counter.len};

	if (s->open && s->expired && report && report(ctx, t, c, s->version, s->expired, s->first, s->last, err) != 0)
		return -1;
	s->open = 0;
	return 0;
}

int cnt_expire_run(const cnt_defs *defs, int64_t now, int fd, const char *name, cnt_writer *w,
	cnt_expire_report report, void *ctx, cnt_expire_stats *st, cnt_err *err)
{
	cnt_limits lim = cnt_limits_default();
	cnt_tz_cache *tzc = cnt_tz_cache_new();
	cur_stream s;
	reach r;
	cnt_bucket b;
	cnt_bucket_in in;
	cnt_writer *dw = NULL;   /* the day container's, after the hourly one */
	int rc = -1, got, opened = 0, in_days = 0;

	memset(st, 0, sizeof(*st));
	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	if (tzc == NULL)
		return cnt_err_nomem(err);
	if (cnt_bucket_in_open(&in, fd, name, &lim, err) != 0)
		goto out;
	opened = 1;
	in.days = -1;   /* hourly records, then day records */
	while ((got = cnt_bucket_in_next(&in, &b, err)) == 1) {
		int keep;

		st->in++;
		if (in.is_day && !in_days) {
			/* Day records: reachable as hours are, by their span (a day
			 * a window only partly covers is kept); written to a day
			 * container of their own, reported in runs of their own. */
			if (close_stream(&s, report, ctx, err) != 0)
				goto out;
			in_days = 1;
			if (w && (dw = cnt_rollup_day_writer(w, err)) == NULL)
				goto out;
		}
		if (!same_stream(&s, &b)) {
			if (close_stream(&s, report, ctx, err) != 0)
				goto out;
			s.tenant.len = s.counter.len = 0;
			if (cnt_buf_append(&s.tenant, b.tenant_id.p, b.tenant_id.n) != 0 ||
			    cnt_buf_append(&s.counter, b.counter_id.p, b.counter_id.n) != 0) {
				cnt_err_nomem(err);
				goto out;
			}
			s.version = b.counter_version;
			s.open = 1;
			s.expired = 0;
			if (compute(&r, defs, tzc, &b, now, err) != 0)
				goto out;
		}
		keep = reachable(&r, &b);
		if (keep == 0) {
			if (s.expired == 0 || b.bucket_start < s.first)
				s.first = b.bucket_start;
			if (s.expired == 0 || b.bucket_end > s.last)
				s.last = b.bucket_end;
			s.expired++;
			st->expired++;
			st->days_expired += (uint64_t)in_days;
			continue;
		}
		if (keep == 2)
			st->unknown++;
		st->kept++;
		st->days_kept += (uint64_t)in_days;
		if (w && (cnt_bucket_encode(&b, cnt_writer_buf(dw ? dw : w)) != 0 ? cnt_err_nomem(err) :
			cnt_writer_commit(dw ? dw : w, err)) != 0)
			goto out;
	}
	if (got < 0 || close_stream(&s, report, ctx, err) != 0)
		goto out;
	/* a day container holding no record is written the same */
	if (w && in.saw_days && dw == NULL && (dw = cnt_rollup_day_writer(w, err)) == NULL)
		goto out;
	if (dw && cnt_writer_finish(dw, err) != 0)
		goto out;
	rc = 0;
out:
	cnt_writer_free(dw);
	if (opened)
		cnt_bucket_in_release(&in);
	cnt_tz_cache_free(tzc);
	cnt_buf_release(&s.tenant);
	cnt_buf_release(&s.counter);
	free(r.spans);
	return rc;
}
