/*
 * series.c - creator analytics over bucket files (see series.h).
 *
 * Cells (period, value) live in an open-addressed table; values are
 * interned once.  Periods are enumerated up front (so an hour or day
 * without views is a row of zeros when not broken down) and a record is
 * placed by binary search of its bucket_start.
 */
#include "view/series.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "avro/json.h"
#include "base/text.h"
#include "count/estimate.h"
#include "count/hll.h"
#include "count/rollup.h"
#include "model/bucket.h"
#include "time/timefmt.h"
#include "time/tz.h"
#include "view/lines.h"

typedef struct cell {
	uint32_t period, value1;       /* value id + 1; 0: the total */
	int64_t views;
	cnt_hll *sketch;               /* NULL: none seen */
	cnt_i128 var;                  /* approx: the summed variance of views */
	uint8_t approx;                /* a record of an approx version was added */
	uint8_t prec;                  /* the union's sketch precision; 0: none */
} cell;

typedef struct strset {            /* sorted, for binary search */
	char **s;
	size_t *n;
	size_t len, cap;
} strset;

struct cnt_series {
	const cnt_series_query *q;
	const cnt_counter *ctr;
	cnt_tz *tz;
	int64_t from, to;
	int64_t *pstart, *pend;
	size_t nperiods;
	size_t by_n, tn, cn;
	/* values */
	cnt_buf vdata;
	size_t *voff, *vlen;
	size_t nvalues, cvalues, vhint;
	/* cells */
	cell *cells;
	size_t ncells, ccells;
	uint32_t *slots;               /* cell index + 1 */
	size_t smask;
	strset members, creators;      /* asked for; found by the creator pass */
	cnt_buf last;                  /* the member of the last record read */
	int last_ok, last_used;
	/* the file being read: its name, and whether its day records are read */
	const char *cur_name;
	int cur_days;
	cnt_rollup_days_seen seen;
	cnt_series_result res;
};

static int slice_eq(cnt_slice a, const char *s, size_t n)
{
	return a.n == n && (n == 0 || memcmp(a.p, s, n) == 0);
}

static int bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int d = n ? memcmp(a, b, n) : 0;

	return d ? d : an < bn ? -1 : an > bn;
}

/* ---- string sets ------------------------------------------------------ */

static int strset_add(strset *ss, const char *p, size_t n)
{
	if (ss->len == ss->cap) {
		size_t c = ss->cap ? ss->cap * 2 : 16;
		char **v = realloc(ss->s, c * sizeof(*v));
		size_t *l;

		if (v == NULL)
			return -1;
		ss->s = v;
		if ((l = realloc(ss->n, c * sizeof(*l))) == NULL)
			return -1;
		ss->n = l;
		ss->cap = c;
	}
	if ((ss->s[ss->len] = malloc(n + 1)) == NULL)
		return -1;
	if (n)
		memcpy(ss->s[ss->len], p, n);
	ss->s[ss->len][n] = 0;
	ss->n[ss->len++] = n;
	return 0;
}

static void strset_free(strset *ss)
{
	for (size_t i = 0; i < ss->len; i++)
		free(ss->s[i]);
	free(ss->s);
	free(ss->n);
}

/* Sorts and drops repeats. */
static void strset_sort(strset *ss)
{
	size_t i, j;

	/* insertion sort of an index would do; the sets are small enough
	 * for a simple shell sort over (s, n) pairs */
	for (size_t gap = ss->len / 2; gap > 0; gap /= 2)
		for (i = gap; i < ss->len; i++)
			for (j = i; j >= gap && bytes_cmp(ss->s[j - gap], ss->n[j - gap], ss->s[j], ss->n[j]) > 0; j -= gap) {
				char *t = ss->s[j];
				size_t tn = ss->n[j];

				ss->s[j] = ss->s[j - gap];
				ss->n[j] = ss->n[j - gap];
				ss->s[j - gap] = t;
				ss->n[j - gap] = tn;
			}
	for (i = j = 0; i < ss->len; i++) {
		if (j > 0 && bytes_cmp(ss->s[j - 1], ss->n[j - 1], ss->s[i], ss->n[i]) == 0) {
			free(ss->s[i]);
			continue;
		}
		ss->s[j] = ss->s[i];
		ss->n[j++] = ss->n[i];
	}
	ss->len = j;
}

static int strset_has(const strset *ss, const char *p, size_t n)
{
	size_t lo = 0, hi = ss->len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = bytes_cmp(ss->s[mid], ss->n[mid], p, n);

		if (d == 0)
			return 1;
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* ---- setting up ------------------------------------------------------- */

/* An instant, or a local date or date-time of the zone. */
static int parse_time(const cnt_series *s, const char *opt, const char *text, int64_t *out, cnt_err *err)
{
	cnt_civil c;

	if (cnt_time_parse_arg(text, out) == 0)
		return 0;
	if (cnt_time_parse_local(text, strlen(text), &c) == 0) {
		*out = cnt_tz_local_to_utc(s->tz, &c, 0);
		return 0;
	}
	cnt_err_set(err, "%s: '%s' is not a time (RFC 3339 with an offset, epoch milliseconds, "
		"or a local date or date-time of %s such as 2026-03-01 or 2026-03-01T10:00)",
		opt, text, cnt_tz_name(s->tz));
	return -1;
}

static int periods(cnt_series *s, cnt_err *err)
{
	size_t cap = 0;
	int64_t t;

	if (s->q->day) {
		cnt_tz_window w = cnt_tz_day(s->tz, s->from);

		t = w.start_ms;
	} else {
		t = cnt_tz_bucket_start(s->tz, s->from);
		if (t < s->from)
			t = cnt_tz_bucket_end(s->tz, s->from);
	}
	while (t < s->to) {
		int64_t e;

		if (s->q->day) {
			cnt_tz_window w = cnt_tz_day(s->tz, t);

			e = w.end_ms;
		} else {
			e = cnt_tz_bucket_end(s->tz, t);
		}
		if (e <= t)
			break;                 /* the end of time */
		if (s->nperiods == CNT_SERIES_MAX_PERIODS) {
			cnt_err_set(err, "the range holds more than %d %ss: ask for a shorter one",
				CNT_SERIES_MAX_PERIODS, s->q->day ? "day" : "hour");
					return -1;
		}
		if (s->nperiods == cap) {
			size_t c = cap ? cap * 2 : 64;
			int64_t *a = realloc(s->pstart, c * sizeof(*a)), *b;

			if (a == NULL)
				return cnt_err_nomem(err);
			s->pstart = a;
			if ((b = realloc(s->pend, c * sizeof(*b))) == NULL)
				return cnt_err_nomem(err);
			s->pend = b;
			cap = c;
		}
		s->pstart[s->nperiods] = t;
		s->pend[s->nperiods++] = e;
		t = e;
	}
	return 0;
}

static int has_dimension(const cnt_counter *c, const char *dim)
{
	for (size_t i = 0; i < c->nversions; i++)
		for (size_t j = 0; j < c->versions[i].ndimensions; j++)
			if (strcmp(c->versions[i].dimensions[j], dim) == 0)
				return 1;
	return 0;
}

cnt_series *cnt_series_new(const cnt_series_query *q, cnt_err *err)
{
	cnt_series *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		cnt_err_nomem(err);
		return NULL;
	}
	cnt_rollup_days_seen_init(&s->seen);
	s->q = q;
	s->ctr = cnt_defs_counter(q->defs, q->tenant, strlen(q->tenant), q->counter, strlen(q->counter));
	if (s->ctr == NULL) {
		cnt_err_set(err, "no counter '%s' of tenant '%s' in the definitions", q->counter, q->tenant);
		goto fail;
	}
	if (q->by && !has_dimension(s->ctr, q->by)) {
		cnt_err_set(err, "--by: '%s' is not a dimension of counter '%s' (see \"dimensions\" in cnt-definitions(5))",
			q->by, q->counter);
		goto fail;
	}
	if (q->creator && !has_dimension(s->ctr, "creator")) {
		cnt_err_set(err, "--creator: counter '%s' of tenant '%s' declares no \"creator\" dimension",
			q->counter, q->tenant);
		goto fail;
	}
	if ((s->tz = cnt_tz_load(s->ctr->tenant->timezone, err)) == NULL)
		goto fail;
	if (parse_time(s, "--from", q->from, &s->from, err) != 0 || parse_time(s, "--to", q->to, &s->to, err) != 0)
		goto fail;
	if (s->from >= s->to) {
		cnt_err_set(err, "--from %s is not before --to %s", q->from, q->to);
		goto fail;
	}
	if (periods(s, err) != 0)
		goto fail;
	for (size_t i = 0; i < q->nmembers; i++)
		if (strset_add(&s->members, q->members[i], strlen(q->members[i])) != 0) {
			cnt_err_nomem(err);
			goto fail;
		}
	if (q->members_file) {
		cnt_lines l;
		size_t len;
		int rc;

		if (cnt_lines_open(&l, q->members_file, "members file", err) != 0)
			goto fail;
		while ((rc = cnt_lines_next(&l, &len, err)) > 0)
			if (len > 0 && strset_add(&s->members, l.buf, len) != 0) {
				rc = cnt_err_nomem(err);
				break;
			}
		cnt_lines_close(&l);
		if (rc < 0)
			goto fail;
		if (s->members.len == 0) {
			cnt_err_set(err, "members file '%s' names no member", q->members_file);
			goto fail;
		}
	}
	strset_sort(&s->members);
	s->by_n = q->by ? strlen(q->by) : 0;
	s->tn = strlen(q->tenant);
	s->cn = strlen(q->counter);
	s->smask = 1023;
	if ((s->slots = calloc(s->smask + 1, sizeof(*s->slots))) == NULL) {
		cnt_err_nomem(err);
		goto fail;
	}
	return s;
fail:
	cnt_series_free(s);
	return NULL;
}

void cnt_series_free(cnt_series *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->ncells; i++)
		if (s->cells[i].sketch) {
			cnt_hll_release(s->cells[i].sketch);
			free(s->cells[i].sketch);
		}
	free(s->cells);
	free(s->slots);
	free(s->voff);
	free(s->vlen);
	cnt_buf_release(&s->vdata);
	cnt_buf_release(&s->last);
	strset_free(&s->members);
	strset_free(&s->creators);
	free(s->pstart);
	free(s->pend);
	free(s->res.rows);
	cnt_tz_free(s->tz);
	free(s);
}

/* ---- cells ------------------------------------------------------------ */

static int value_of(cnt_series *s, cnt_slice v, uint32_t *out)
{
	/* few values (countries, devices, sources): a linear search behind
	 * the last one found is enough */
	size_t hint = s->vhint;

	if (hint < s->nvalues && s->vlen[hint] == v.n && memcmp(s->vdata.p + s->voff[hint], v.p, v.n) == 0) {
		*out = (uint32_t)hint + 1;
		return 0;
	}
	for (size_t i = 0; i < s->nvalues; i++)
		if (s->vlen[i] == v.n && (v.n == 0 || memcmp(s->vdata.p + s->voff[i], v.p, v.n) == 0)) {
			s->vhint = i;
			*out = (uint32_t)i + 1;
			return 0;
		}
	if (s->nvalues == s->cvalues) {
		size_t c = s->cvalues ? s->cvalues * 2 : 32;
		size_t *o = realloc(s->voff, c * sizeof(*o)), *l;

		if (o == NULL)
			return -1;
		s->voff = o;
		if ((l = realloc(s->vlen, c * sizeof(*l))) == NULL)
			return -1;
		s->vlen = l;
		s->cvalues = c;
	}
	s->voff[s->nvalues] = s->vdata.len;
	s->vlen[s->nvalues] = v.n;
	if (cnt_buf_append(&s->vdata, v.p, v.n) != 0)
		return -1;
	s->vhint = s->nvalues;
	*out = (uint32_t)++s->nvalues;
	return 0;
}

static uint64_t cell_hash(uint32_t period, uint32_t value1)
{
	uint64_t k = (uint64_t)period << 32 | value1;

	return XXH3_64bits(&k, sizeof(k));
}

static cell *cell_of(cnt_series *s, uint32_t period, uint32_t value1)
{
	size_t i;
	cell *c;

	for (i = cell_hash(period, value1) & s->smask; s->slots[i]; i = (i + 1) & s->smask) {
		c = &s->cells[s->slots[i] - 1];
		if (c->period == period && c->value1 == value1)
			return c;
	}
	if (s->ncells == s->ccells) {
		size_t cap = s->ccells ? s->ccells * 2 : 256;
		cell *v = realloc(s->cells, cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		s->cells = v;
		s->ccells = cap;
	}
	c = &s->cells[s->ncells];
	memset(c, 0, sizeof(*c));
	c->period = period;
	c->value1 = value1;
	s->slots[i] = (uint32_t)++s->ncells;
	if (s->ncells * 2 > s->smask + 1) {
		size_t cap = (s->smask + 1) * 2;
		uint32_t *n = calloc(cap, sizeof(*n));

		if (n == NULL)
			return NULL;
		for (size_t k = 0; k < s->ncells; k++) {
			size_t j;

			for (j = cell_hash(s->cells[k].period, s->cells[k].value1) & (cap - 1); n[j]; j = (j + 1) & (cap - 1))
				;
			n[j] = (uint32_t)k + 1;
		}
		free(s->slots);
		s->slots = n;
		s->smask = cap - 1;
	}
	return &s->cells[s->ncells - 1];
}

static int merge_sketch(cell *c, cnt_slice bytes, const cnt_bucket *b, cnt_err *err)
{
	cnt_hll h;
	int rc;

	if (bytes.p == NULL)
		return 0;
	{
		int p = cnt_estimate_sketch_precision((const uint8_t *)bytes.p, bytes.n);

		if (c->prec == 0 || p < c->prec)
			c->prec = (uint8_t)p;   /* HLL++: a union folds to the lower */
	}
	if (cnt_hll_deserialize(&h, (const uint8_t *)bytes.p, bytes.n, err) != 0) {
		char shown[CNT_SHOWN_SIZE(64)];

		return cnt_err_prefix(err, "member '%s': sketch", cnt_shown(b->member_ref.p, b->member_ref.n, 64, shown));
	}
	if (c->sketch == NULL) {
		if ((c->sketch = malloc(sizeof(*c->sketch))) == NULL) {
			cnt_hll_release(&h);
			return cnt_err_nomem(err);
		}
		cnt_hll_init_p(c->sketch, cnt_hll_precision(&h));   /* unions fold to the lowest met */
	}
	rc = cnt_hll_merge(c->sketch, &h);
	cnt_hll_release(&h);
	return rc != 0 ? cnt_err_nomem(err) : 0;
}

/* The period holding t, or -1. */
static ssize_t period_of(const cnt_series *s, int64_t t)
{
	size_t lo = 0, hi = s->nperiods;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->pstart[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || t >= s->pend[lo - 1])
		return -1;
	return (ssize_t)lo - 1;
}

/* ---- reading ---------------------------------------------------------- */

/* Whether t is the start of a local day of the tenant's zone. */
static int day_edge(const cnt_series *s, int64_t t)
{
	return cnt_tz_day(s->tz, t).start_ms == t;
}

/* Opens one bucket file: the one place where files are opened (a check
 * that the file is the asking tenant's goes here).  A series of whole
 * local days reads the file's day roll-ups (count/rollup.h), the hourly
 * blocks skipped by their sizes: a day record is the exact union of its
 * day's hourly records, so every row is the same, at a cost that grows
 * with days, not hours.  A range that starts or ends inside a day, an
 * hourly series, --hours, or a file without roll-ups: the hours. */
static int series_open(cnt_series *s, cnt_bucket_in *in, int fd, const char *name, int again, cnt_err *err)
{
	int days = 0;

	if (again && lseek(fd, 0, SEEK_SET) != 0)
		return cnt_err_set(err, "'%s': --creator reads the bucket files twice: give files, not a pipe (%s)",
			name, strerror(errno));
	if (s->q->day && !s->q->hours && day_edge(s, s->from) && day_edge(s, s->to) &&
	    (days = cnt_rollup_seek_days(fd, name, err)) < 0)
		return -1;
	if (cnt_bucket_in_open(in, fd, name, NULL, err) != 0)
		return -1;
	in->days = days;
	s->cur_name = name;
	s->cur_days = days;
	s->res.used_days |= days;
	return 0;
}

/* Whether the member of b is selected (cached while records keep the
 * member: files are sorted by it). */
static int member_selected(cnt_series *s, const cnt_bucket *b, int *out, cnt_err *err)
{
	if (s->last_ok && s->last.len == b->member_ref.n &&
	    (b->member_ref.n == 0 || memcmp(s->last.p, b->member_ref.p, b->member_ref.n) == 0)) {
		*out = s->last_used;
		return 0;
	}
	s->last.len = 0;
	if (cnt_buf_append(&s->last, b->member_ref.p, b->member_ref.n) != 0)
		return cnt_err_nomem(err);
	s->last_ok = 1;
	if (s->q->creator)
		s->last_used = strset_has(&s->creators, b->member_ref.p, b->member_ref.n) &&
			(s->members.len == 0 || strset_has(&s->members, b->member_ref.p, b->member_ref.n));
	else
		s->last_used = s->members.len == 0 || strset_has(&s->members, b->member_ref.p, b->member_ref.n);
	*out = s->last_used;
	return 0;
}

static int add_record(cnt_series *s, const cnt_bucket *b, cnt_err *err)
{
	int sel = 0;
	ssize_t p;
	uint32_t v = 0;
	cell *c;

	if (!slice_eq(b->tenant_id, s->q->tenant, s->tn) || !slice_eq(b->counter_id, s->q->counter, s->cn))
		return 0;
	if (s->cur_days && cnt_rollup_check_day(&s->seen, s->tz, s->cur_name, b->bucket_start, b->bucket_end, err) != 0)
		return -1;
	if (cnt_bucket_is_total(b) && (!s->res.has_as_of || b->max_ingest_time > s->res.as_of)) {
		s->res.as_of = b->max_ingest_time;
		s->res.has_as_of = 1;
	}
	if (s->q->by ? !slice_eq(b->dim, s->q->by, s->by_n) : !cnt_bucket_is_total(b))
		return 0;
	if (b->bucket_start < s->from || b->bucket_start >= s->to || (p = period_of(s, b->bucket_start)) < 0)
		return 0;
	if (member_selected(s, b, &sel, err) != 0)
		return -1;
	if (!sel)
		return 0;
	if (s->q->by && value_of(s, b->dim_value, &v) != 0)
		return cnt_err_nomem(err);
	if ((c = cell_of(s, (uint32_t)p, v)) == NULL)
		return cnt_err_nomem(err);
	c->views += b->count + b->late_count;
	{
		const cnt_counter_version *cv = cnt_counter_version_get(s->ctr, b->counter_version);

		if (cv != NULL && cv->type == CNT_CTYPE_APPROX) {
			c->approx = 1;
			c->var = (cnt_i128)((unsigned __int128)c->var + (unsigned __int128)b->sum_var);
		}
	}
	s->res.records_used++;
	return merge_sketch(c, b->sketch, b, err) || merge_sketch(c, b->late_sketch, b, err) ? -1 : 0;
}

/* Pass 1 with a creator: the members with a creator breakdown record of
 * that value. */
static int find_creator(cnt_series *s, const cnt_bucket *b, cnt_err *err)
{
	if (!slice_eq(b->tenant_id, s->q->tenant, s->tn) || !slice_eq(b->counter_id, s->q->counter, s->cn) ||
	    !slice_eq(b->dim, "creator", 7) || !slice_eq(b->dim_value, s->q->creator, strlen(s->q->creator)))
		return 0;
	if (s->creators.len > 0 && slice_eq(b->member_ref, s->creators.s[s->creators.len - 1],
			s->creators.n[s->creators.len - 1]))
		return 0;
	return strset_add(&s->creators, b->member_ref.p, b->member_ref.n) != 0 ? cnt_err_nomem(err) : 0;
}

static int read_pass(cnt_series *s, int pass, const int *fds, const char *const *names, size_t n, cnt_err *err)
{
	for (size_t i = 0; i < n; i++) {
		cnt_bucket_in in;
		cnt_bucket b;
		int rc;

		if (series_open(s, &in, fds[i], names[i], pass == 1 && s->q->creator != NULL, err) != 0)
			return -1;
		while ((rc = cnt_bucket_in_next(&in, &b, err)) > 0) {
			s->res.records_read++;
			if ((pass == 0 ? find_creator(s, &b, err) : add_record(s, &b, err)) != 0) {
				rc = -1;
				break;
			}
		}
		cnt_bucket_in_release(&in);
		if (rc < 0)
			return -1;
		s->last_ok = 0;
	}
	return 0;
}

static int row_cmp(const void *x, const void *y)
{
	const cnt_series_row *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->value == NULL || b->value == NULL)
		return 0;
	return bytes_cmp(a->value, a->value_n, b->value, b->value_n);
}

int cnt_series_run(cnt_series *s, const int *fds, const char *const *names, size_t n,
	const cnt_series_result **res, cnt_err *err)
{
	size_t nrows;

	if (s->q->creator) {
		if (read_pass(s, 0, fds, names, n, err) != 0)
			return -1;
		strset_sort(&s->creators);
	}
	if (read_pass(s, 1, fds, names, n, err) != 0)
		return -1;
	/* Not broken down: every period is a row, zeros included. */
	nrows = s->q->by ? s->ncells : s->nperiods;
	if ((s->res.rows = calloc(nrows + 1, sizeof(*s->res.rows))) == NULL)
		return cnt_err_nomem(err);
	if (!s->q->by)
		for (size_t i = 0; i < s->nperiods; i++) {
			s->res.rows[i].start = s->pstart[i];
			s->res.rows[i].end = s->pend[i];
		}
	for (size_t i = 0; i < s->ncells; i++) {
		const cell *c = &s->cells[i];
		cnt_series_row *r = &s->res.rows[s->q->by ? i : c->period];

		r->start = s->pstart[c->period];
		r->end = s->pend[c->period];
		if (c->value1) {
			r->value = (const char *)s->vdata.p + s->voff[c->value1 - 1];
			r->value_n = s->vlen[c->value1 - 1];
		}
		r->views = c->views;
		if (c->approx) {
			r->views_est = cnt_estimate_approx_error(c->var, &r->views_error) == 0 ? 1 : 2;
		}
		if (c->sketch) {
			r->has_uniques = 1;
			r->uniques = cnt_hll_estimate(c->sketch);
			r->uniques_error = cnt_estimate_unique_error(r->uniques, c->prec ? c->prec : CNT_ESTIMATE_P_DEFAULT);
		}
	}
	s->res.nrows = nrows;
	qsort(s->res.rows, nrows, sizeof(*s->res.rows), row_cmp);
	s->res.creator_members = s->creators.len;
	*res = &s->res;
	return 0;
}

/* ---- output ----------------------------------------------------------- */

void cnt_series_label(const cnt_series *s, int64_t t, char *buf, size_t n)
{
	cnt_civil c;
	int32_t off = cnt_tz_offset_s(s->tz, t);
	int a = off < 0 ? -off : off;

	cnt_tz_to_civil(s->tz, t, &c);
	if (s->q->day)
		snprintf(buf, n, "%04lld-%02u-%02u", (long long)c.year, c.month, c.day);
	else
		snprintf(buf, n, "%04lld-%02u-%02uT%02u:%02u%c%02d:%02d", (long long)c.year, c.month, c.day,
			c.hour, c.minute, off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
}

static int put_str(cnt_buf *out, const char *p, size_t n)
{
	return cnt_json_string(out, (const uint8_t *)p, n, 0);
}

int cnt_series_format_json(const cnt_series *s, cnt_buf *out)
{
	char a[32], b[32], l[48], asof[32];
	int rc = 0;

	if (s->res.has_as_of)
		cnt_time_format_rfc3339(s->res.as_of, asof);
	for (size_t i = 0; i < s->res.nrows; i++) {
		const cnt_series_row *r = &s->res.rows[i];

		cnt_time_format_rfc3339(r->start, a);
		cnt_time_format_rfc3339(r->end, b);
		cnt_series_label(s, r->start, l, sizeof(l));
		rc |= cnt_buf_append(out, "{\"tenant_id\":", 13);
		rc |= put_str(out, s->q->tenant, s->tn);
		rc |= cnt_buf_append(out, ",\"counter_id\":", 14);
		rc |= put_str(out, s->q->counter, s->cn);
		rc |= cnt_buf_printf(out, ",\"period\":\"%s\",\"start\":\"%s\",\"end\":\"%s\",\"local\":\"%s\"",
			s->q->day ? "day" : "hour", a, b, l);
		if (s->q->by) {
			rc |= cnt_buf_append(out, ",\"dim\":", 7);
			rc |= put_str(out, s->q->by, s->by_n);
			rc |= cnt_buf_append(out, ",\"value\":", 9);
			rc |= put_str(out, r->value, r->value_n);
		}
		rc |= cnt_buf_printf(out, ",\"views\":%lld", (long long)r->views);
		if (r->views_est == 1)
			rc |= cnt_buf_printf(out, ",\"views_estimate\":true,\"views_error\":%lld", (long long)r->views_error);
		else if (r->views_est == 2)
			rc |= cnt_buf_printf(out, ",\"views_estimate\":true,\"views_error\":null");
		else
			rc |= cnt_buf_printf(out, ",\"views_estimate\":false");
		rc |= cnt_buf_printf(out, ",\"unique_viewers\":");
		rc |= r->has_uniques ? cnt_buf_printf(out, "%llu,\"unique_viewers_estimate\":true,\"unique_viewers_error\":%lld",
				(unsigned long long)r->uniques, (long long)r->uniques_error)
				     : cnt_buf_append(out, "null", 4);
		rc |= s->res.has_as_of ? cnt_buf_printf(out, ",\"as_of\":\"%s\"}\n", asof)
				       : cnt_buf_append(out, ",\"as_of\":null}\n", 15);
	}
	return rc ? -1 : 0;
}

/* Appends p[0..n) for a table cell: control characters as '?', so that
 * one row stays one line. */
static int put_plain(cnt_buf *out, const char *p, size_t n, size_t width)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n; i++)
		rc |= cnt_buf_putc(out, (unsigned char)p[i] < 0x20 || p[i] == 0x7f ? '?' : p[i]);
	for (; i < width; i++)
		rc |= cnt_buf_putc(out, ' ');
	return rc;
}

int cnt_series_format_table(const cnt_series *s, cnt_buf *out)
{
	char l[48], asof[32];
	size_t w = 5;                  /* "VALUE" */
	int rc = 0;

	if (s->res.has_as_of)
		cnt_time_format_rfc3339(s->res.as_of, asof);
	rc |= cnt_buf_append(out, "# ", 2);
	rc |= put_plain(out, s->q->tenant, s->tn, 0);
	rc |= cnt_buf_putc(out, '/');
	rc |= put_plain(out, s->q->counter, s->cn, 0);
	rc |= cnt_buf_printf(out, " per %s (%s)%s", s->q->day ? "day" : "hour", cnt_tz_name(s->tz),
		s->q->by ? " by " : "");
	if (s->q->by)
		rc |= put_plain(out, s->q->by, s->by_n, 0);
	rc |= cnt_buf_printf(out, ", as of %s\n", s->res.has_as_of ? asof : "(no data)");
	for (size_t i = 0; i < s->res.nrows; i++)
		if (s->res.rows[i].value_n > w)
			w = s->res.rows[i].value_n > 40 ? 40 : s->res.rows[i].value_n;
	rc |= cnt_buf_printf(out, "%-24s", s->q->day ? "DAY" : "HOUR");
	if (s->q->by)
		rc |= put_plain(out, "VALUE", 5, w + 2);
	rc |= cnt_buf_printf(out, "%12s %15s\n", "VIEWS", "UNIQUE_VIEWERS");
	for (size_t i = 0; i < s->res.nrows; i++) {
		const cnt_series_row *r = &s->res.rows[i];

		cnt_series_label(s, r->start, l, sizeof(l));
		rc |= cnt_buf_printf(out, "%-24s", l);
		if (s->q->by)
			rc |= put_plain(out, r->value, r->value_n > 40 ? 40 : r->value_n, w + 2);
		char vw[64], uq[64] = "-";

		if (r->views_est == 1)
			snprintf(vw, sizeof(vw), "~%lld +-%lld", (long long)r->views, (long long)r->views_error);
		else if (r->views_est == 2)
			snprintf(vw, sizeof(vw), "~%lld +-?", (long long)r->views);
		else
			snprintf(vw, sizeof(vw), "%lld", (long long)r->views);
		if (r->has_uniques)
			snprintf(uq, sizeof(uq), "~%llu +-%lld", (unsigned long long)r->uniques, (long long)r->uniques_error);
		rc |= cnt_buf_printf(out, "%12s %15s\n", vw, uq);
	}
	return rc ? -1 : 0;
}
