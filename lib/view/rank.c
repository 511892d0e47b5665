/*
 * rank.c - answers from a ranked view (see rank.h).
 */
#include "view/rank.h"
#include "base/jsonload.h"

#include "count/estimate.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "avro/json.h"
#include "base/fpset.h"
#include "model/event.h"
#include "time/timefmt.h"
#include "view/lines.h"
#include "view/project.h"

/* ---- questions -------------------------------------------------------- */

static const char *const qnames[] = {"top", "rank", "around", "value", "verify"};

const char *cnt_rank_qname(cnt_rank_qkind k)
{
	return (unsigned)k < 5 ? qnames[k] : "?";
}

/* A whole decimal number in [1, max], nothing else. */
static int count_arg(const char *q, const char *s, uint64_t max, uint64_t *out, cnt_err *err)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; s[i] >= '0' && s[i] <= '9'; i++) {
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > max)
			break;
	}
	if (i == 0 || s[i] != 0 || v < 1 || v > max)
		return cnt_err_set(err, "%s: '%s' is not a count from 1 to %" PRIu64, q, s, max);
	*out = v;
	return 0;
}

int cnt_rank_parse_question(int argc, char *const *argv, cnt_rank_question *q, cnt_err *err)
{
	int k, used = 1;

	memset(q, 0, sizeof(*q));
	if (argc < 1)
		return cnt_err_set(err, "a question is required: top, rank, around, value or verify");
	for (k = 0; k < 5; k++)
		if (strcmp(argv[0], qnames[k]) == 0)
			break;
	if (k == 5)
		return cnt_err_set(err, "unknown question '%s': top, rank, around, value or verify", argv[0]);
	q->kind = (cnt_rank_qkind)k;
	switch (q->kind) {
	case CNT_RANK_Q_TOP:
		q->count = CNT_RANK_TOP_DEFAULT;
		if (argc > 1 && count_arg("top", argv[used++], CNT_RANK_TOP_MAX, &q->count, err) != 0)
			return -1;
		break;
	case CNT_RANK_Q_RANK:
	case CNT_RANK_Q_AROUND:
	case CNT_RANK_Q_VALUE:
		if (argc < 2)
			return cnt_err_set(err, "%s: which member?", argv[0]);
		q->member = argv[used++];
		q->count = CNT_RANK_AROUND_DEFAULT;
		if (q->kind == CNT_RANK_Q_AROUND && argc > 2 &&
		    count_arg("around", argv[used++], CNT_RANK_AROUND_MAX, &q->count, err) != 0)
			return -1;
		break;
	case CNT_RANK_Q_VERIFY:
		break;
	}
	if (argc > used)
		return cnt_err_set(err, "unexpected operand '%s' after the question", argv[used]);
	return 0;
}

/* ---- the member directory --------------------------------------------- */

typedef struct dir_entry {
	char *member, *name;
	size_t member_len;
	int opted_out;
	unsigned long long line;
} dir_entry;

struct cnt_rank_dir {
	dir_entry *e;
	size_t n;
};

static int key_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	int d = memcmp(a, b, an < bn ? an : bn);

	return d ? d : an < bn ? -1 : an > bn;
}

static int dir_cmp(const void *x, const void *y)
{
	const dir_entry *a = x, *b = y;
	int d = key_cmp(a->member, a->member_len, b->member, b->member_len);

	return d ? d : a->line < b->line ? -1 : a->line > b->line;
}

void cnt_rank_dir_free(cnt_rank_dir *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->e[i].member);
		free(d->e[i].name);
	}
	free(d->e);
	free(d);
}

cnt_rank_dir *cnt_rank_dir_load(const char *path, cnt_err *err)
{
	cnt_rank_dir *d = calloc(1, sizeof(*d));
	size_t cap = 0, len, w = 0;
	cnt_lines l;
	int rc;

	if (d == NULL) {
		cnt_err_nomem(err);
		return NULL;
	}
	if (cnt_lines_open(&l, path, "the member directory", err) != 0) {
		free(d);
		return NULL;
	}
	while ((rc = cnt_lines_next(&l, &len, err)) > 0) {
		json_error_t je;
		json_t *j;
		const char *m, *nm;
		dir_entry *e;

		if (len == 0)
			continue;
		j = cnt_json_loadb(l.buf, len, 0, &je);
		if (j == NULL && cnt_json_oom(&je)) {
			rc = cnt_err_oom(err, "reading '%s'", path);
			break;
		}
		m = json_string_value(json_object_get(j, "member_ref"));
		nm = json_string_value(json_object_get(j, "display_name"));
		if (j == NULL || m == NULL) {
			json_decref(j);
			rc = cnt_err_set(err, "'%s' line %llu: expected a JSON object with member_ref", path, l.no);
			break;
		}
		if (d->n == cap) {
			dir_entry *v = realloc(d->e, (cap = cap ? cap * 2 : 64) * sizeof(*v));

			if (v == NULL) {
				json_decref(j);
				rc = cnt_err_oom(err, "reading '%s'", path);
				break;
			}
			d->e = v;
		}
		e = &d->e[d->n];
		memset(e, 0, sizeof(*e));
		e->member = strdup(m);
		e->name = nm ? strdup(nm) : NULL;
		e->member_len = strlen(m);
		e->opted_out = json_is_true(json_object_get(j, "opted_out"));
		e->line = l.no;
		d->n++;
		json_decref(j);
		if (e->member == NULL || (nm && e->name == NULL)) {
			rc = cnt_err_oom(err, "reading '%s'", path);
			break;
		}
	}
	cnt_lines_close(&l);
	if (rc < 0) {
		cnt_rank_dir_free(d);
		return NULL;
	}
	/* Sorted by member, then line: the last line of each member is kept. */
	if (d->n > 1)
		qsort(d->e, d->n, sizeof(*d->e), dir_cmp);
	for (size_t i = 0; i < d->n; i++) {
		if (i + 1 < d->n && key_cmp(d->e[i].member, d->e[i].member_len, d->e[i + 1].member, d->e[i + 1].member_len) == 0) {
			free(d->e[i].member);
			free(d->e[i].name);
			continue;
		}
		d->e[w++] = d->e[i];
	}
	d->n = w;
	return d;
}

static const dir_entry *dir_find(const cnt_rank_dir *d, const char *m, size_t n)
{
	size_t lo = 0, hi = d ? d->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = key_cmp(d->e[mid].member, d->e[mid].member_len, m, n);

		if (c == 0)
			return &d->e[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---- ranks and bands -------------------------------------------------- */

/* The board's ranking rules, as the description gives them. */
static void rules(const cnt_viewdesc *d, cnt_leaderboard *lb)
{
	memset(lb, 0, sizeof(*lb));
	lb->order_asc = d->order_asc;
	lb->ntie_break = d->ntie_break;
	memcpy(lb->tie_break, d->tie_break, sizeof(lb->tie_break));
	lb->rank_numbering = d->rank_numbering;
}

/* Where value falls against the histogram, in rank direction: 0 in a bin
 * (*bin set), -1 beyond the best end (better than every member), +1 beyond
 * the worst end (worse than every member: only an overlaid value can lie
 * outside the edges). */
static int place(const cnt_view *v, int64_t value, size_t *bin)
{
	int below = value < v->edges[0], above = value > v->edges[v->nbins];

	*bin = cnt_view_bin(v, value);
	if (!below && !above)
		return 0;
	return below == v->desc.order_asc ? -1 : 1;
}

void cnt_rank_band(const cnt_view *v, int64_t value, int64_t self, uint64_t *lo, uint64_t *hi)
{
	size_t b, ob;
	int where = place(v, value, &b), asc = v->desc.order_asc;
	uint64_t better = 0, same = 0;

	if (where > 0) {
		better = v->n;
	} else if (where == 0) {
		if (asc)
			for (size_t i = 0; i < b; i++)
				better += v->counts[i];
		else
			for (size_t i = b + 1; i < v->nbins; i++)
				better += v->counts[i];
		same = v->counts[b];
	}
	if (self >= 0 && (uint64_t)self < v->n) {
		int owhere = place(v, v->entries[self].value, &ob);

		/* the old value is inside the edges (the view was built with it) */
		if (owhere == 0 && where == 0 && ob == b && same > 0)
			same--;
		else if (owhere == 0 && (where > 0 || (where == 0 && (asc ? ob < b : ob > b))) && better > 0)
			better--;
	}
	*lo = better + 1;
	*hi = better + same + 1;
}

int cnt_rank_in_head(const cnt_view *v, const cnt_view_entry *me, const char *mn, int64_t self, int64_t *rank,
	cnt_err *err)
{
	cnt_leaderboard lb;
	uint64_t above, lo = 0, hi = v->head;

	rules(&v->desc, &lb);
	/* Binary search: the first head position that ranks below me. */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const char *name;
		size_t len;

		if (cnt_view_name(v, mid, &name, &len, err) != 0)
			return -1;
		if (cnt_proj_cmp(&lb, &v->entries[mid], name, me, mn) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	above = lo;
	if (self >= 0 && (uint64_t)self < lo)
		above--;   /* my own old entry does not count */
	if (above >= v->head && v->head < v->n) {
		*rank = -1;
		return 0;
	}
	if (lb.rank_numbering == CNT_RANK_ORDINAL) {
		*rank = (int64_t)above + 1;
		return 0;
	}
	/* A tie with a neighbour shares its rank. */
	for (int64_t k = (int64_t)lo - 1; k <= (int64_t)lo; k++) {
		if (k < 0 || (uint64_t)k >= v->head || k == self)
			continue;
		if (cnt_proj_tied(&lb, &v->entries[k], me)) {
			*rank = v->entries[k].rank;
			return 0;
		}
	}
	if (lb.rank_numbering == CNT_RANK_DENSE) {
		int64_t k = (int64_t)lo - 1;

		if (k == self)
			k--;
		*rank = k >= 0 ? (int64_t)v->entries[k].rank + 1 : 1;
		return 0;
	}
	*rank = (int64_t)above + 1;
	return 0;
}

/* ---- the own-write overlay -------------------------------------------- */

static int slice_is(cnt_slice s, const char *z)
{
	size_t n = strlen(z);

	return s.n == n && (n == 0 || memcmp(s.p, z, n) == 0);
}

/* One of the member's overlay events, kept until the segment is read:
 * a compensation may come before or after the event it retracts. */
typedef struct ov_event {
	cnt_fp id, target;    /* target: the event a compensation retracts */
	int64_t delta, event_time;
	int comp, dead;
} ov_event;

/* Adds the member's events the view has not absorbed to *me (see rank.h);
 * have: the member had a value before.  0, or -1 with err set. */
static int overlay(const cnt_rank_source *src, const char *member, cnt_view_entry *me, int have,
	cnt_rank_answer *a, cnt_err *err)
{
	const cnt_viewdesc *d = &src->view->desc;
	int64_t as_of = d->has_as_of ? d->as_of : INT64_MIN;
	cnt_event_in *in;
	cnt_event e;
	cnt_fpset seen, orig;
	ov_event *v = NULL;
	size_t n = 0, cap = 0;
	int rc;

	if (d->counter_type == CNT_CTYPE_UNIQUE) {
		a->overlaid = 2;
		return 0;
	}
	a->overlaid = 1;
	in = cnt_event_in_open(src->overlay_fd, src->overlay_name, NULL, err);
	if (in == NULL)
		return -1;
	if (cnt_fpset_init(&seen, 1024) != 0) {
		cnt_event_in_free(in);
		return cnt_err_oom(err, "reading the overlay '%s'", src->overlay_name);
	}
	if (cnt_fpset_init(&orig, 64) != 0) {
		cnt_fpset_release(&seen);
		cnt_event_in_free(in);
		return cnt_err_oom(err, "reading the overlay '%s'", src->overlay_name);
	}
	while ((rc = cnt_event_in_next(in, &e, err)) > 0) {
		const void *part = e.event_id.p, *tpart = e.retracts.p;
		cnt_fp id;
		int added;

		a->overlay_read++;
		if (e.ingest_time <= as_of || e.event_time < d->from || e.event_time >= d->to ||
		    !slice_is(e.member_ref, member) || !slice_is(e.tenant_id, d->tenant_id) ||
		    !slice_is(e.counter_id, d->counter_id) ||
		    (d->counter_version && e.counter_version != d->counter_version))
			continue;
		id = cnt_fp_of(1, &part, &e.event_id.n);
		added = cnt_fpset_add(&seen, id, 0, NULL);
		if (added == 0)
			continue;   /* a redelivered copy */
		if (added > 0 && n == cap) {
			ov_event *nv = realloc(v, (cap ? 2 * cap : 16) * sizeof(*v));

			if (nv == NULL)
				added = -1;
			else {
				v = nv;
				cap = cap ? 2 * cap : 16;
			}
		}
		if (added < 0) {
			rc = cnt_err_oom(err, "reading the overlay '%s'", src->overlay_name);
			break;
		}
		memset(&v[n], 0, sizeof(v[n]));
		v[n].id = id;
		v[n].delta = e.delta;
		if (d->counter_type == CNT_CTYPE_APPROX) {
			/* a sample weighs 2^L */
			int l = cnt_event_sample_level(&e);

			if (l > 0 && __builtin_mul_overflow(e.delta, (int64_t)1 << l, &v[n].delta))
				v[n].delta = e.delta < 0 ? INT64_MIN : INT64_MAX;
		}
		v[n].event_time = e.event_time;
		if (e.retracts.p) {
			v[n].comp = 1;
			v[n].target = cnt_fp_of(1, &tpart, &e.retracts.n);
		} else if (cnt_fpset_add(&orig, id, n, NULL) < 0) {
			rc = cnt_err_oom(err, "reading the overlay '%s'", src->overlay_name);
			break;
		}
		n++;
	}
	/* A compensation takes out the event it retracts when that event is
	 * in the overlay too (same ingest time: both after the as-of); one
	 * whose event the view holds is, by the same rule, in the view. */
	for (size_t i = 0; rc == 0 && i < n; i++) {
		uint64_t k;
		int r;

		if (!v[i].comp)
			continue;
		v[i].dead = 1;
		r = cnt_fpset_add(&orig, v[i].target, UINT64_MAX, &k);
		if (r < 0)
			rc = cnt_err_oom(err, "reading the overlay '%s'", src->overlay_name);
		else if (r == 0 && k != UINT64_MAX && !v[k].dead) {
			v[k].dead = 1;
			a->overlay_retracted++;
		}
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (v[i].dead)
			continue;
		switch (d->counter_type) {
		case CNT_CTYPE_MIN:
			if (!have || v[i].delta < me->value)
				me->value = v[i].delta;
			break;
		case CNT_CTYPE_MAX:
			if (!have || v[i].delta > me->value)
				me->value = v[i].delta;
			break;
		default:
			/* wraps as the sum of int64 would; a view holds clamped sums */
			me->value = (int64_t)((uint64_t)me->value + (uint64_t)v[i].delta);
			break;
		}
		have = 1;
		a->overlay_delta = (int64_t)((uint64_t)a->overlay_delta + (uint64_t)v[i].delta);
		if (v[i].event_time > me->last_event_time)
			me->last_event_time = v[i].event_time;
		a->overlay_events++;
	}
	free(v);
	cnt_fpset_release(&orig);
	cnt_fpset_release(&seen);
	cnt_event_in_free(in);
	return rc < 0 ? -1 : 0;
}

/* ---- answers ---------------------------------------------------------- */

static int add_item(const cnt_rank_source *src, uint64_t i, cnt_rank_answer *a, cnt_err *err)
{
	const cnt_view *v = src->view;
	const cnt_view_entry *e = &v->entries[i];
	cnt_rank_item *it = &a->items[a->nitems];
	const dir_entry *de;

	if (cnt_view_name(v, i, &it->member, &it->member_len, err) != 0)
		return -1;
	de = dir_find(src->members, it->member, it->member_len);
	it->display_name = de ? de->name : NULL;
	it->has_rank = i < v->head;
	it->rank = e->rank;
	it->value = e->value;
	it->last_event_time = e->last_event_time;
	if ((it->est = cnt_view_error(v, i, &it->error, err)) < 0)
		return -1;
	a->nitems++;
	return 0;
}

/* Whether entry i is left out of others' neighbourhoods.  -1 on a damaged
 * name. */
static int opted_out(const cnt_rank_source *src, uint64_t i, cnt_err *err)
{
	const char *name;
	size_t len;
	const dir_entry *de;

	if (src->members == NULL)
		return 0;
	if (cnt_view_name(src->view, i, &name, &len, err) != 0)
		return -1;
	de = dir_find(src->members, name, len);
	return de && de->opted_out;
}

/* Up to k listed members on each side of center; opted-out members are
 * left out (the asking member is always shown). */
static int neighbourhood(const cnt_rank_source *src, uint64_t center, uint64_t k, cnt_rank_answer *a, cnt_err *err)
{
	const cnt_view *v = src->view;
	uint64_t lo = center, hi = center, got;
	int o;

	for (got = 0; got < k && lo > 0;) {
		if ((o = opted_out(src, --lo, err)) < 0)
			return -1;
		got += !o;
	}
	for (got = 0; got < k && hi + 1 < v->n;) {
		if ((o = opted_out(src, ++hi, err)) < 0)
			return -1;
		got += !o;
	}
	a->items = calloc(hi - lo + 1, sizeof(*a->items));
	if (a->items == NULL)
		return cnt_err_oom(err, "listing %llu members", (unsigned long long)(hi - lo + 1));
	for (uint64_t i = lo; i <= hi; i++) {
		if (i != center && (o = opted_out(src, i, err)) != 0) {
			if (o < 0)
				return -1;
			continue;
		}
		if (add_item(src, i, a, err) != 0)
			return -1;
	}
	return 0;
}

static int answer_member(const cnt_rank_source *src, const cnt_rank_question *q, cnt_rank_answer *a, cnt_err *err)
{
	const cnt_view *v = src->view;
	size_t mlen = strlen(q->member);
	int64_t pos = cnt_view_find(v, q->member, mlen), r;
	cnt_view_entry me, probe;

	a->member = q->member;
	if (pos >= 0) {
		me = v->entries[pos];
	} else {
		memset(&me, 0, sizeof(me));
		me.last_event_time = INT64_MIN;
	}
	if (src->overlay_fd >= 0 && overlay(src, q->member, &me, pos >= 0, a, err) != 0)
		return -1;
	if (pos < 0 && a->overlay_events == 0)
		return 0;   /* found: false */
	a->found = 1;
	a->value = me.value;
	if ((a->est = cnt_view_value_error(v, pos, me.value, &a->error, err)) < 0)
		return -1;
	if (q->kind == CNT_RANK_Q_VALUE)
		return 0;
	/* Compared under the member's own name, in the view or not. */
	probe = me;
	probe.name_len = (uint32_t)(mlen > UINT32_MAX ? UINT32_MAX : mlen);
	if (a->overlay_events == 0 && pos >= 0)
		r = (uint64_t)pos < v->head ? (int64_t)me.rank : -1;
	else if (cnt_rank_in_head(v, &probe, q->member, pos, &r, err) != 0)
		return -1;
	if (r > 0) {
		a->exact = 1;
		a->rank = r;
	} else {
		/* a member new to the view (overlay) is one more */
		double members = (double)(v->n + (pos < 0));

		cnt_rank_band(v, me.value, pos, &a->band_lo, &a->band_hi);
		a->pct_lo = 100.0 * (double)(a->band_lo - 1) / members;
		a->pct_hi = 100.0 * (double)a->band_hi / members;
	}
	if (q->kind != CNT_RANK_Q_AROUND)
		return 0;
	if (pos < 0)
		return cnt_err_set(err, "around: '%s' is not in the view; ask for its rank instead", q->member);
	return neighbourhood(src, (uint64_t)pos, q->count, a, err);
}

int cnt_rank_answer_question(const cnt_rank_source *src, const cnt_rank_question *q, cnt_rank_answer *a,
	cnt_err *err)
{
	const cnt_view *v = src->view;

	memset(a, 0, sizeof(*a));
	a->kind = q->kind;
	a->view = v;
	a->frozen = src->frozen;
	a->stale = cnt_viewdesc_stale(&v->desc, src->now);
	switch (q->kind) {
	case CNT_RANK_Q_TOP:
		/* positions offset + 1 .. offset + N of the head (paging) */
		a->offset = q->offset;
		a->top = q->offset >= v->head ? 0 : q->count < v->head - q->offset ? q->count : v->head - q->offset;
		a->items = calloc(a->top + 1, sizeof(*a->items));
		if (a->items == NULL)
			return cnt_err_oom(err, "listing %llu members", (unsigned long long)a->top);
		for (uint64_t i = 0; i < a->top; i++)
			if (add_item(src, q->offset + i, a, err) != 0)
				return -1;
		return 0;
	case CNT_RANK_Q_VERIFY:
		if (cnt_view_verify(v, src->dir, err) != 0)
			return -1;
		a->verified = 1;
		return 0;
	default:
		return answer_member(src, q, a, err);
	}
}

void cnt_rank_answer_release(cnt_rank_answer *a)
{
	free(a->items);
	a->items = NULL;
	a->nitems = 0;
}

/* ---- output ----------------------------------------------------------- */

static int json_str(cnt_buf *out, const char *key, const char *s, size_t n)
{
	return cnt_buf_printf(out, ",\"%s\":", key) || cnt_json_string(out, (const uint8_t *)s, n, 0);
}

/* ",\"estimate\":..." for a value of kind est with bound e. */
static int est_json(cnt_buf *out, int est, int64_t e)
{
	if (est == CNT_VIEW_EXACT)
		return cnt_buf_printf(out, ",\"estimate\":false");
	if (est == CNT_VIEW_UNKNOWN)
		return cnt_buf_printf(out, ",\"estimate\":true,\"error\":null");
	return cnt_buf_printf(out, ",\"estimate\":true,\"error\":%" PRId64, e);
}

/* A value for people: "1234", or "~1234 +-25" (ASCII, as every table),
 * "~1234 +-?" when the bound is unknown. */
static void est_text(char *buf, size_t n, int64_t value, int est, int64_t e)
{
	if (est == CNT_VIEW_EXACT)
		snprintf(buf, n, "%" PRId64, value);
	else if (est == CNT_VIEW_UNKNOWN)
		snprintf(buf, n, "~%" PRId64 " +-?", value);
	else
		snprintf(buf, n, "~%" PRId64 " +-%" PRId64, value, e);
}

static int item_json(cnt_buf *out, const cnt_rank_item *it)
{
	int rc = cnt_buf_append(out, "{\"member_ref\":", 14) ||
		cnt_json_string(out, (const uint8_t *)it->member, it->member_len, 0);

	if (it->display_name)
		rc = rc || json_str(out, "display_name", it->display_name, strlen(it->display_name));
	if (it->has_rank)
		rc = rc || cnt_buf_printf(out, ",\"rank\":%u", it->rank);
	return rc || cnt_buf_printf(out, ",\"value\":%" PRId64, it->value) || est_json(out, it->est, it->error) ||
		cnt_buf_printf(out, ",\"last_event_time\":%" PRId64 "}", it->last_event_time);
}

static int items_json(cnt_buf *out, const char *key, const cnt_rank_answer *a)
{
	int rc = cnt_buf_printf(out, ",\"%s\":[", key);

	for (size_t i = 0; rc == 0 && i < a->nitems; i++)
		rc = (i && cnt_buf_putc(out, ',')) || item_json(out, &a->items[i]);
	return rc || cnt_buf_putc(out, ']');
}

int cnt_rank_format_json(const cnt_rank_answer *a, cnt_buf *out)
{
	const cnt_viewdesc *d = &a->view->desc;
	char t[40];
	int rc;

	rc = cnt_buf_append(out, "{\"board\":", 9) ||
		cnt_json_string(out, (const uint8_t *)d->board, strlen(d->board), 0) ||
		json_str(out, "scope", d->scope, strlen(d->scope)) || cnt_buf_printf(out, ",\"version\":%d", d->version);
	if (a->token)
		rc = rc || json_str(out, "token", a->token, strlen(a->token));
	if (d->has_as_of) {
		cnt_time_format_rfc3339(d->as_of, t);
		rc = rc || cnt_buf_printf(out, ",\"as_of\":\"%s\",\"as_of_ms\":%" PRId64, t, d->as_of);
	} else {
		rc = rc || cnt_buf_printf(out, ",\"as_of\":null,\"as_of_ms\":null");
	}
	rc = rc || cnt_buf_printf(out, ",\"stale\":%s,\"frozen\":%s,\"verified\":%s", a->stale ? "true" : "false",
		a->frozen ? "true" : "false", d->verified ? "true" : "false");
	if (d->verified)
		rc = rc || json_str(out, "audit_id", d->audit_id, strlen(d->audit_id));
	switch (a->kind) {
	case CNT_RANK_Q_TOP:
		rc = rc || cnt_buf_printf(out, ",\"top\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"members\":%" PRIu64
			",\"estimate\":%s", a->top, a->offset, a->view->n, cnt_estimate_is(d->counter_type) ? "true" : "false") ||
			items_json(out, "entries", a);
		break;
	case CNT_RANK_Q_VERIFY:
		rc = rc || cnt_buf_printf(out, ",\"intact\":true,\"members\":%" PRIu64 ",\"bytes\":%zu",
			a->view->n, a->view->map_len);
		break;
	default:
		rc = rc || json_str(out, "member_ref", a->member, strlen(a->member));
		if (a->overlaid == 1)
			rc = rc || cnt_buf_printf(out, ",\"overlay\":{\"events\":%" PRIu64 ",\"delta\":%" PRId64
				",\"retracted\":%" PRIu64 "}", a->overlay_events, a->overlay_delta, a->overlay_retracted);
		else if (a->overlaid == 2)
			rc = rc || cnt_buf_printf(out, ",\"overlay\":{\"supported\":false}");
		if (a->guarded) {
			rc = rc || cnt_buf_printf(out, ",\"found\":%s,\"value\":%" PRId64, a->found ? "true" : "false", a->value) ||
				(a->found && est_json(out, a->est, a->error)) ||
				cnt_buf_printf(out, ",\"guard\":{\"clamped\":%s,\"reset\":%s,\"unguarded_value\":%" PRId64,
				a->guard_clamped ? "true" : "false", a->guard_reset ? "true" : "false", a->unguarded);
			rc = rc || (a->guard_had_floor ? cnt_buf_printf(out, ",\"floor\":%" PRId64 "}}\n", a->guard_floor) :
				cnt_buf_printf(out, ",\"floor\":null}}\n"));
			return rc ? -1 : 0;
		}
		if (!a->found) {
			rc = rc || cnt_buf_printf(out, ",\"found\":false");
			break;
		}
		rc = rc || cnt_buf_printf(out, ",\"found\":true,\"value\":%" PRId64, a->value) ||
			est_json(out, a->est, a->error);
		if (a->kind == CNT_RANK_Q_VALUE)
			break;
		if (a->exact)
			rc = rc || cnt_buf_printf(out, ",\"kind\":\"exact\",\"rank\":%" PRId64, a->rank);
		else
			rc = rc || cnt_buf_printf(out, ",\"kind\":\"band\",\"rank_band\":[%" PRIu64 ",%" PRIu64
				"],\"top_percent_band\":[%.3f,%.3f]", a->band_lo, a->band_hi, a->pct_lo, a->pct_hi);
		if (a->kind == CNT_RANK_Q_AROUND)
			rc = rc || items_json(out, "neighbourhood", a);
		break;
	}
	return rc || cnt_buf_append(out, "}\n", 2) ? -1 : 0;
}

int cnt_rank_format_table(const cnt_rank_answer *a, cnt_buf *out)
{
	const cnt_viewdesc *d = &a->view->desc;
	char t[40] = "(no data)", val[64];
	int rc;

	est_text(val, sizeof(val), a->value, a->est, a->error);
	if (d->has_as_of)
		cnt_time_format_rfc3339(d->as_of, t);
	rc = cnt_buf_printf(out, "board %s  scope %s  version %d  as of %s%s%s  %s count%s%s%s\n", d->board, d->scope,
		d->version, t, a->stale ? "  STALE" : "", a->frozen ? "  FROZEN" : "", d->verified ? "verified" : "fast",
		d->verified ? " (audit " : "", d->verified ? d->audit_id : "", d->verified ? ")" : "");
	if (a->guarded && a->guard_clamped)
		rc = rc || cnt_buf_printf(out, "%s: value %s (guard: the view's %" PRId64 " clamped to the last served)\n",
			a->member, val, a->unguarded);
	else if (a->guarded)
		rc = rc || cnt_buf_printf(out, "%s: value %s%s\n", a->member, val,
			a->guard_reset ? " (guard: verified, the floor reset to it)" : "");
	else if (a->kind == CNT_RANK_Q_VERIFY)
		rc = rc || cnt_buf_printf(out, "intact: %" PRIu64 " members, %zu bytes of index.bin and the head in view.avro\n",
			a->view->n, a->view->map_len);
	else if (a->kind != CNT_RANK_Q_TOP && !a->found)
		rc = rc || cnt_buf_printf(out, "%s: not in this view\n", a->member);
	else if (a->kind == CNT_RANK_Q_VALUE)
		rc = rc || cnt_buf_printf(out, "%s: value %s\n", a->member, val);
	else if (a->kind != CNT_RANK_Q_TOP && a->exact)
		rc = rc || cnt_buf_printf(out, "%s: value %s, rank %" PRId64 "\n", a->member, val, a->rank);
	else if (a->kind != CNT_RANK_Q_TOP)
		rc = rc || cnt_buf_printf(out, "%s: value %s, rank between %" PRIu64 " and %" PRIu64
			" (histogram band)\n", a->member, val, a->band_lo, a->band_hi);
	for (size_t i = 0; rc == 0 && i < a->nitems; i++) {
		const cnt_rank_item *it = &a->items[i];
		const char *name = it->display_name ? it->display_name : it->member;
		size_t n = it->display_name ? strlen(it->display_name) : it->member_len;
		char rk[16] = "-";

		if (it->has_rank)
			snprintf(rk, sizeof(rk), "%u", it->rank);
		est_text(val, sizeof(val), it->value, it->est, it->error);
		/* the name's bytes as they are, padded to 24 columns */
		rc = cnt_buf_printf(out, "%8s  ", rk) || cnt_buf_append(out, name, n) ||
			cnt_buf_printf(out, "%*s %20s\n", n < 24 ? (int)(24 - n) : 0, "", val);
	}
	if (a->token)
		rc = rc || cnt_buf_printf(out, "token %s\n", a->token);
	return rc ? -1 : 0;
}
