/*
 * diff.c - one merge-join pass over two bucket files (see diff.h).
 */
#include "count/diff.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "avro/json.h"
#include "base/outfile.h"
#include "count/estimate.h"
#include "model/bucket.h"

/* One side: its reader, its current record, and a copy of the previous
 * key, to check the order. */
typedef struct side {
	cnt_bucket_in in;
	cnt_bucket b;
	const char *name;
	uint64_t done;
	int rc;              /* of the last read: 1 a record, 0 the end */
	int day;             /* the current record is a day record */
	cnt_buf strings;
	cnt_bucket prev;
	int have_prev, prev_day;
} side;

static int advance(side *s, cnt_err *err)
{
	if (s->done > 0) {
		const cnt_bucket *b = &s->b;

		s->strings.len = 0;
		if (cnt_buf_append(&s->strings, b->tenant_id.p, b->tenant_id.n) != 0 ||
		    cnt_buf_append(&s->strings, b->counter_id.p, b->counter_id.n) != 0 ||
		    cnt_buf_append(&s->strings, b->member_ref.p, b->member_ref.n) != 0)
			return cnt_err_nomem(err);
		s->prev = *b;
		s->prev.tenant_id.p = (const char *)s->strings.p;
		s->prev.counter_id.p = (const char *)s->strings.p + b->tenant_id.n;
		s->prev.member_ref.p = (const char *)s->strings.p + b->tenant_id.n + b->counter_id.n;
		s->have_prev = 1;
		s->prev_day = s->day;
	}
	s->rc = cnt_bucket_in_next(&s->in, &s->b, err);
	if (s->rc < 0)
		return -1;
	s->day = s->rc > 0 && s->in.is_day;
	/* the hourly records, then the day records, each in key order; a
	 * day container met (read or skipped, with records or without)
	 * means no hourly record follows */
	if (s->rc > 0 && !s->day && s->in.saw_days)
		return cnt_err_set(err, "'%s' record %llu: an hourly record after the day roll-ups, so this is not one bucket file as cnt-accumulate writes it (two files joined? merge them with 'cnt-accumulate -d DEFS FILE...')",
			s->name, (unsigned long long)s->done + 1);
	if (s->rc == 0 || !s->have_prev || s->day > s->prev_day)
		return 0;
	if (cnt_bucket_key_cmp(&s->prev, &s->b) >= 0)
		return cnt_err_set(err, "'%s' record %llu%s: keys are not in ascending order, so this is not a bucket file as cnt-accumulate writes it (re-sort it with 'cnt-accumulate %s%s'%s)",
			s->name, (unsigned long long)s->done + 1, s->day ? " (a day record)" : "", s->day ? "-d DEFS " : "", s->name,
			s->day ? "" : ", and -d DEFS to keep its day roll-ups");
	return 0;
}

static int line(cnt_buf *out, const cnt_bucket *l, const cnt_bucket *r, int day)
{
	const cnt_bucket *b = l ? l : r;
	int rc = 0;

	rc |= cnt_buf_append(out, "{\"key\":{\"tenant_id\":", 20);
	rc |= cnt_json_string(out, (const uint8_t *)b->tenant_id.p, b->tenant_id.n, 0);
	rc |= cnt_buf_append(out, ",\"counter_id\":", 14);
	rc |= cnt_json_string(out, (const uint8_t *)b->counter_id.p, b->counter_id.n, 0);
	rc |= cnt_buf_printf(out, ",\"counter_version\":%d,\"member_ref\":", (int)b->counter_version);
	rc |= cnt_json_string(out, (const uint8_t *)b->member_ref.p, b->member_ref.n, 0);
	if (b->dim.n > 0) {   /* a breakdown record: its dimension and value (none in a total) */
		rc |= cnt_buf_append(out, ",\"dim\":", 7);
		rc |= cnt_json_string(out, (const uint8_t *)b->dim.p, b->dim.n, 0);
		rc |= cnt_buf_append(out, ",\"dim_value\":", 13);
		rc |= cnt_json_string(out, (const uint8_t *)b->dim_value.p, b->dim_value.n, 0);
	}
	rc |= cnt_buf_printf(out, ",\"bucket_start\":%lld,\"shard\":%d%s}", (long long)b->bucket_start, (int)b->shard,
		day ? ",\"rollup\":\"day\"" : "");
	rc |= cnt_buf_append(out, ",\"left\":", 8);
	rc |= l ? cnt_bucket_to_json(l, out) : cnt_buf_append(out, "null", 4);
	rc |= cnt_buf_append(out, ",\"right\":", 9);
	rc |= r ? cnt_bucket_to_json(r, out) : cnt_buf_append(out, "null", 4);
	rc |= cnt_buf_append(out, "}\n", 2);
	return rc;
}

static int flush(int fd, cnt_buf *out, size_t at_least, cnt_err *err)
{
	if (out->len == 0 || out->len < at_least)
		return 0;
	if (cnt_write_all(fd, out->p, out->len) != 0)
		return cnt_err_write(err, errno, "cannot write standard output");
	out->len = 0;
	return 0;
}

const char *cnt_diff_tol_name(cnt_diff_tol_from f)
{
	static const char *const names[] = {"exact", "--tolerance", "declared", "precision"};

	return (unsigned)f < 4 ? names[f] : "?";
}

void cnt_diff_stats_release(cnt_diff_stats *st)
{
	for (size_t i = 0; i < st->ncounters; i++) {
		free(st->counters[i].tenant_id);
		free(st->counters[i].counter_id);
	}
	free(st->counters);
	st->counters = NULL;
	st->ncounters = 0;
}

static int slice_is(cnt_slice a, const char *z)
{
	return a.n == strlen(z) && memcmp(a.p, z, a.n) == 0;
}

/* The tolerance of b's counter version (diff.h), from st->counters or
 * worked out and added there.  NULL when out of memory. */
static const cnt_diff_counter *tolerance_of(const cnt_bucket *b, const cnt_diff_opts *o, cnt_diff_stats *st)
{
	const cnt_counter *ctr;
	const cnt_counter_version *cv = NULL;
	cnt_diff_counter *c;

	/* Files are sorted by counter: the last one is nearly always it. */
	for (size_t i = st->ncounters; i-- > 0;) {
		c = &st->counters[i];
		if (c->counter_version == b->counter_version && slice_is(b->tenant_id, c->tenant_id) &&
		    slice_is(b->counter_id, c->counter_id))
			return c;
	}
	c = realloc(st->counters, (st->ncounters + 1) * sizeof(*c));
	if (c == NULL)
		return NULL;
	st->counters = c;
	c = &st->counters[st->ncounters];
	memset(c, 0, sizeof(*c));
	c->tenant_id = strndup(b->tenant_id.p, b->tenant_id.n);
	c->counter_id = strndup(b->counter_id.p, b->counter_id.n);
	if (c->tenant_id == NULL || c->counter_id == NULL) {
		free(c->tenant_id);
		free(c->counter_id);
		return NULL;
	}
	st->ncounters++;
	c->counter_version = b->counter_version;
	ctr = cnt_defs_counter(o->defs, b->tenant_id.p, b->tenant_id.n, b->counter_id.p, b->counter_id.n);
	if (ctr != NULL)
		cv = cnt_counter_version_get(ctr, b->counter_version);
	c->declared = cv != NULL;
	c->type = cv ? cv->type : CNT_CTYPE_EXACT;
	c->from = CNT_DIFF_TOL_EXACT;
	if (!cnt_estimate_is(c->type))
		return c;
	if (o->tolerance_given) {
		c->tolerance = o->tolerance;
		c->from = CNT_DIFF_TOL_OPTION;
	} else if (cnt_estimate_declared(cv) > 0) {
		c->tolerance = cnt_estimate_declared(cv);
		c->from = CNT_DIFF_TOL_DECLARED;
	} else if (c->type == CNT_CTYPE_UNIQUE) {
		int p = b->sketch.p ? cnt_estimate_sketch_precision((const uint8_t *)b->sketch.p, b->sketch.n) :
			CNT_ESTIMATE_P_DEFAULT;

		c->tolerance = cnt_estimate_unique_rel(p);
		c->from = CNT_DIFF_TOL_PRECISION;
	}
	if (c->tolerance <= 0)
		c->from = CNT_DIFF_TOL_EXACT;
	return c;
}

/* Whether a and b differ by more than tol relative to the larger. */
static int rel_differ(double a, double b, double tol)
{
	double d = a > b ? a - b : b - a, m = (a < 0 ? -a : a) > (b < 0 ? -b : b) ? (a < 0 ? -a : a) : (b < 0 ? -b : b);

	return d > tol * m;
}

/* An approx counter's records: the scaled figures within tol (diff.h). */
static int approx_differ(const cnt_bucket *a, const cnt_bucket *b, double tol)
{
	return a->bucket_end != b->bucket_end || rel_differ((double)a->count, (double)b->count, tol) ||
		rel_differ((double)a->sum, (double)b->sum, tol) ||
		rel_differ((double)a->late_count, (double)b->late_count, tol) ||
		rel_differ((double)a->late_sum, (double)b->late_sum, tol);
}

/* Whether the records of one key differ under the options: 1, 0, or -1
 * when out of memory. */
static int values_differ(const cnt_bucket *a, const cnt_bucket *b, const cnt_diff_opts *o, cnt_diff_stats *st)
{
	const cnt_diff_counter *c;

	if (o->defs == NULL)
		return cnt_bucket_values_differ(a, b, o->tolerance);
	if ((c = tolerance_of(a, o, st)) == NULL)
		return -1;
	if (c->type == CNT_CTYPE_APPROX && c->from != CNT_DIFF_TOL_EXACT)
		return approx_differ(a, b, c->tolerance);
	return cnt_bucket_values_differ(a, b, c->type == CNT_CTYPE_UNIQUE ? c->tolerance : 0);
}

static int compare(side *L, side *R, const cnt_diff_opts *o, cnt_diff_stats *st, cnt_buf *out, cnt_err *err)
{
	if (advance(L, err) != 0 || advance(R, err) != 0)
		return -1;
	while (L->rc > 0 || R->rc > 0) {
		const cnt_bucket *pl = NULL, *pr = NULL;
		/* hourly records before day records, each kind in key order */
		int d = L->rc == 0 ? 1 : R->rc == 0 ? -1 : L->day != R->day ? L->day - R->day :
			cnt_bucket_key_cmp(&L->b, &R->b);
		int day = d <= 0 ? L->day : R->day;
		cnt_diff_counts *dc = day ? &st->days : NULL;

		/* Every counter met is named in the statistics. */
		if (o->defs != NULL && tolerance_of(d <= 0 ? &L->b : &R->b, o, st) == NULL)
			return cnt_err_oom(err, "comparing");
		if (d < 0) {
			pl = &L->b;
			st->only_left++;
			if (dc)
				dc->only_left++;
		} else if (d > 0) {
			pr = &R->b;
			st->only_right++;
			if (dc)
				dc->only_right++;
		} else {
			int v = values_differ(&L->b, &R->b, o, st);

			if (v < 0)
				return cnt_err_oom(err, "comparing sketches");
			if (v > 0) {
				pl = &L->b;
				pr = &R->b;
				st->changed++;
				if (dc)
					dc->changed++;
			}
		}
		if ((pl || pr) && !o->quiet && (o->max_shown < 0 || st->shown < (uint64_t)o->max_shown)) {
			if (line(out, pl, pr, day) != 0)
				return cnt_err_nomem(err);
			st->shown++;
			if (flush(o->fd, out, 1u << 16, err) != 0)
				return -1;
		}
		if (o->tick)
			o->tick(d == 0 ? 2 : 1);
		if (d <= 0) {
			L->done++;
			if (dc)
				dc->left++;
			if (advance(L, err) != 0)
				return -1;
		}
		if (d >= 0) {
			R->done++;
			if (dc)
				dc->right++;
			if (advance(R, err) != 0)
				return -1;
		}
	}
	st->left = L->done;
	st->right = R->done;
	st->days_left = L->in.saw_days;
	st->days_right = R->in.saw_days;
	return flush(o->fd, out, 1, err);
}

int cnt_diff_buckets(int lfd, const char *lname, int rfd, const char *rname,
	const cnt_diff_opts *o, cnt_diff_stats *st, cnt_err *err)
{
	side L, R;
	cnt_buf out = CNT_BUF_INIT;
	int rc = -1;

	memset(st, 0, sizeof(*st));
	memset(&L, 0, sizeof(L));
	memset(&R, 0, sizeof(R));
	L.name = lname;
	R.name = rname;
	if (cnt_bucket_in_open(&L.in, lfd, lname, NULL, err) != 0)
		return -1;
	L.in.days = o->no_days ? 0 : -1;
	if (cnt_bucket_in_open(&R.in, rfd, rname, NULL, err) == 0) {
		R.in.days = L.in.days;
		rc = compare(&L, &R, o, st, &out, err);
		cnt_bucket_in_release(&R.in);
	}
	cnt_bucket_in_release(&L.in);
	cnt_buf_release(&out);
	cnt_buf_release(&L.strings);
	cnt_buf_release(&R.strings);
	return rc;
}
