/*
 * audit.c - the batch invalid-traffic audit (see audit.h).
 *
 * Every string the audit keeps (event id, item, member, attrs values) is
 * interned once into an arena and named by a dense number; the events
 * are fixed-size rows.  Each heuristic is a sort and a sweep, as the hold
 * signals are (lib/ingest/hold.c): rows sorted by the heuristic's group
 * (by the fingerprint of its bytes, never by the dense number, which
 * depends on arrival), then time, then event id; two pointers walk each
 * group's windows.
 */
#include "correct/audit.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <xxhash.h>

#include "avro/json.h"
#include "base/fpset.h"
#include "base/text.h"
#include "correct/ledger.h"
#include "count/hll.h"
#include "time/timefmt.h"
#include "time/tz.h"

#define NONE UINT32_MAX

typedef struct str {
	size_t off, len;
	cnt_fp fp;
} str;

typedef struct row {
	uint32_t id, item, member;   /* interned; item NONE: null */
	uint32_t flagged;            /* bit r: rule r flagged it */
	int64_t t, ingest_s, horizon_s;
	cnt_fp dkey;                 /* the dedup key */
	int counted;
} row;

struct cnt_audit {
	const cnt_counter *k;
	int64_t through;
	double baseline;
	cnt_buf arena;
	str *strs;
	size_t nstrs, cstrs;
	cnt_fpset intern, ids;
	row *rows;
	uint32_t *vals[CNT_AUDIT_MAX];   /* per rule with an attr: interned value or NONE */
	size_t nrows, crows;
	cnt_audit_totals tot;
	cnt_audit_finding *findings;
	size_t nfindings, cfindings;
	cnt_audit_video *videos;
	size_t nvideos;
	const char **flagged;
	size_t nflagged;
};

/* ---- interning ---- */

static int intern(cnt_audit *a, int ns, const void *p, size_t n, uint32_t *out)
{
	unsigned char tag = (unsigned char)ns;
	const void *parts[2] = {&tag, p};
	size_t lens[2] = {1, n};
	cnt_fp fp = cnt_fp_of(2, parts, lens);
	uint64_t old;
	int rc = cnt_fpset_add(&a->intern, fp, a->nstrs, &old);

	if (rc < 0)
		return -1;
	if (rc == 0) {
		*out = (uint32_t)old;
		return 0;
	}
	if (a->nstrs == a->cstrs) {
		size_t c = a->cstrs ? a->cstrs * 2 : 256;
		str *v = realloc(a->strs, c * sizeof(*v));

		if (v == NULL)
			return -1;
		a->strs = v;
		a->cstrs = c;
	}
	a->strs[a->nstrs].off = a->arena.len;
	a->strs[a->nstrs].len = n;
	parts[0] = p;
	lens[0] = n;
	a->strs[a->nstrs].fp = cnt_fp_of(1, parts, lens);
	if (cnt_buf_append(&a->arena, p, n) != 0 || cnt_buf_putc(&a->arena, 0) != 0)
		return -1;
	*out = (uint32_t)a->nstrs++;
	return 0;
}

static const char *S(const cnt_audit *a, uint32_t i)
{
	return (const char *)a->arena.p + a->strs[i].off;
}

static int scmp(const cnt_audit *a, uint32_t x, uint32_t y)
{
	const str *p = &a->strs[x], *q = &a->strs[y];
	size_t n = p->len < q->len ? p->len : q->len;
	int c;

	if (x == y)
		return 0;
	c = memcmp(a->arena.p + p->off, a->arena.p + q->off, n);
	return c ? c : p->len < q->len ? -1 : p->len > q->len;
}

static int fpcmp(cnt_fp x, cnt_fp y)
{
	if (x.hi != y.hi)
		return x.hi < y.hi ? -1 : 1;
	return x.lo < y.lo ? -1 : x.lo > y.lo;
}

/* ---- life ---- */

int cnt_audit_check_through(const cnt_counter *k, int64_t through_ms, cnt_err *err)
{
	const char *zone = k->tenant != NULL ? k->tenant->timezone : NULL;
	cnt_tz *tz;
	int64_t start;
	char t[32], s[32];

	if (zone == NULL)
		return 0;
	if ((tz = cnt_tz_load(zone, err)) == NULL)
		return -1;
	start = cnt_tz_bucket_start(tz, through_ms);
	cnt_tz_free(tz);
	if (start == through_ms)
		return 0;
	cnt_time_format_rfc3339(through_ms, t);
	cnt_time_format_rfc3339(start, s);
	return cnt_err_set(err, "--through %s is not a bucket boundary in %s (the bucket it falls in began at "
		"%s): a verified count is made of whole buckets, so audit through a boundary", t, zone, s);
}

cnt_audit *cnt_audit_new(const cnt_counter *k, int64_t through_ms, double baseline, cnt_err *err)
{
	cnt_audit *a;

	if (cnt_audit_check_through(k, through_ms, err) != 0)
		return NULL;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		goto nomem;
	if (cnt_fpset_init(&a->intern, 1024) != 0) {
		free(a);
		goto nomem;
	}
	if (cnt_fpset_init(&a->ids, 1024) != 0) {
		cnt_fpset_release(&a->intern);
		free(a);
		goto nomem;
	}
	a->k = k;
	a->through = through_ms;
	a->baseline = CNT_AUDIT_BASELINE;
	for (size_t r = 0; r < k->naudit; r++)
		if (k->audit[r].kind == CNT_AUDIT_INFLATION)
			a->baseline = k->audit[r].baseline;
	if (baseline >= 0)
		a->baseline = baseline;
	return a;
nomem:
	cnt_err_nomem(err);
	return NULL;
}

void cnt_audit_free(cnt_audit *a)
{
	if (a == NULL)
		return;
	cnt_buf_release(&a->arena);
	cnt_fpset_release(&a->intern);
	cnt_fpset_release(&a->ids);
	free(a->strs);
	free(a->rows);
	for (size_t r = 0; r < CNT_AUDIT_MAX; r++)
		free(a->vals[r]);
	free(a->findings);
	free(a->videos);
	free(a->flagged);
	free(a);
}

static int is(cnt_slice s, const char *z)
{
	return strlen(z) == s.n && memcmp(s.p, z, s.n) == 0;
}

static int has_attr(const cnt_audit_rule *r)
{
	return r->kind == CNT_AUDIT_BURST || r->kind == CNT_AUDIT_WATCH_TIME;
}

int cnt_audit_add(cnt_audit *a, const cnt_event *e, cnt_err *err)
{
	const cnt_counter_version *cv;
	cnt_fp idfp;
	uint64_t old;
	row *w;
	int rc;

	a->tot.in++;
	if (e->retracts.p) {
		a->tot.compensations++;
		return 0;
	}
	if (!is(e->tenant_id, a->k->tenant_id) || !is(e->counter_id, a->k->counter_id) ||
	    e->event_time >= a->through) {
		a->tot.skipped++;
		return 0;
	}
	{
		const void *parts[1] = {e->event_id.p};
		size_t lens[1] = {e->event_id.n};

		idfp = cnt_fp_of(1, parts, lens);
	}
	if ((rc = cnt_fpset_add(&a->ids, idfp, 1, &old)) < 0)
		return cnt_err_nomem(err);
	if (rc == 0) {
		a->tot.duplicates++;   /* the same event twice in the archive */
		return 0;
	}
	if (a->nrows == a->crows) {
		size_t c = a->crows ? a->crows * 2 : 256;
		row *v = realloc(a->rows, c * sizeof(*v));

		if (v == NULL)
			return cnt_err_nomem(err);
		a->rows = v;
		for (size_t r = 0; r < a->k->naudit; r++) {
			uint32_t *x;

			if (!has_attr(&a->k->audit[r]))
				continue;
			if ((x = realloc(a->vals[r], c * sizeof(*x))) == NULL)
				return cnt_err_nomem(err);
			a->vals[r] = x;
		}
		a->crows = c;
	}
	w = &a->rows[a->nrows];
	memset(w, 0, sizeof(*w));
	w->item = NONE;
	if (intern(a, 'e', e->event_id.p, e->event_id.n, &w->id) != 0 ||
	    intern(a, 'm', e->member_ref.p, e->member_ref.n, &w->member) != 0 ||
	    (e->item.p && intern(a, 'i', e->item.p, e->item.n, &w->item) != 0))
		return cnt_err_nomem(err);
	for (size_t r = 0; r < a->k->naudit; r++) {
		if (!has_attr(&a->k->audit[r]))
			continue;
		a->vals[r][a->nrows] = NONE;
		for (size_t j = 0; j < e->nattrs; j++)
			if (is(e->attr_keys[j], a->k->audit[r].attr)) {
				if (intern(a, 'v', e->attr_vals[j].p, e->attr_vals[j].n, &a->vals[r][a->nrows]) != 0)
					return cnt_err_nomem(err);
				break;
			}
	}
	w->t = e->event_time;
	w->ingest_s = e->ingest_time >= 0 ? e->ingest_time / 1000 : 0;
	/* the dedup key and horizon of the event's version, as cnt-dedup */
	cv = cnt_counter_version_get(a->k, e->counter_version);
	if (cv == NULL)
		cv = cnt_counter_version_latest(a->k);
	w->horizon_s = cv->dedup_horizon_s > 0 ? cv->dedup_horizon_s : 0;
	if (cv->dedup_key == CNT_DEDUP_ITEM_MEMBER && e->item.p != NULL) {
		const void *parts[3] = {"m", e->member_ref.p, e->item.p};
		size_t lens[3] = {1, e->member_ref.n, e->item.n};

		w->dkey = cnt_fp_of(3, parts, lens);
	} else {
		const void *parts[2] = {"k", e->idempotency_key.p};
		size_t lens[2] = {1, e->idempotency_key.n};

		w->dkey = cnt_fp_of(2, parts, lens);
	}
	a->nrows++;
	return 0;
}

int cnt_audit_read(cnt_audit *a, const int *fds, const char *const *names, size_t n, size_t *order,
	cnt_err *err)
{
	cnt_limits lim = cnt_limits_default();
	cnt_fp *fps = calloc(n ? n : 1, sizeof(*fps));

	if (fps == NULL)
		return cnt_err_nomem(err);
	for (size_t i = 0; i < n; i++) {
		cnt_event_in *in = cnt_event_in_open(fds[i], names[i], &lim, err);
		XXH3_state_t *hs = XXH3_createState();
		XXH128_hash_t h;
		cnt_event e;
		int got;

		if (in == NULL || hs == NULL) {
			if (in)
				cnt_err_nomem(err);
			cnt_event_in_free(in);
			XXH3_freeState(hs);
			free(fps);
			return -1;
		}
		XXH3_128bits_reset(hs);
		while ((got = cnt_event_in_next(in, &e, err)) > 0) {
			XXH3_128bits_update(hs, e.event_id.p, e.event_id.n);
			XXH3_128bits_update(hs, "", 1);
			if (cnt_audit_add(a, &e, err) != 0) {
				got = -1;
				break;
			}
		}
		h = XXH3_128bits_digest(hs);
		fps[i].hi = h.high64;
		fps[i].lo = h.low64;
		XXH3_freeState(hs);
		cnt_event_in_free(in);
		if (got < 0) {
			free(fps);
			return -1;
		}
		order[i] = i;
	}
	/* insertion sort: a handful of inputs */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && fpcmp(fps[order[j]], fps[order[j - 1]]) < 0; j--) {
			size_t x = order[j];

			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	free(fps);
	return 0;
}

/* ---- sorting ---- */

static const cnt_audit *sort_a;
static int sort_rule;

static int by_dedup(const void *x, const void *y)
{
	const row *p = &sort_a->rows[*(const size_t *)x], *q = &sort_a->rows[*(const size_t *)y];
	int c = fpcmp(p->dkey, q->dkey);

	if (c)
		return c;
	if (p->ingest_s != q->ingest_s)
		return p->ingest_s < q->ingest_s ? -1 : 1;
	return scmp(sort_a, p->id, q->id);
}

/* group fingerprint g, then time, then event id */
static int by_group(const cnt_audit *a, cnt_fp g1, cnt_fp g2, const row *p, const row *q)
{
	int c = fpcmp(g1, g2);

	if (c)
		return c;
	if (p->t != q->t)
		return p->t < q->t ? -1 : 1;
	return scmp(a, p->id, q->id);
}

static int by_item(const void *x, const void *y)
{
	const row *p = &sort_a->rows[*(const size_t *)x], *q = &sort_a->rows[*(const size_t *)y];

	return by_group(sort_a, sort_a->strs[p->item].fp, sort_a->strs[q->item].fp, p, q);
}

static int by_value(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	const uint32_t *v = sort_a->vals[sort_rule];

	return by_group(sort_a, sort_a->strs[v[i]].fp, sort_a->strs[v[j]].fp, &sort_a->rows[i], &sort_a->rows[j]);
}

/* ---- findings ---- */

static cnt_audit_finding *finding(cnt_audit *a, size_t rule, uint32_t key)
{
	cnt_audit_finding *f;

	if (a->nfindings == a->cfindings) {
		size_t c = a->cfindings ? a->cfindings * 2 : 16;
		cnt_audit_finding *v = realloc(a->findings, c * sizeof(*v));

		if (v == NULL)
			return NULL;
		a->findings = v;
		a->cfindings = c;
	}
	f = &a->findings[a->nfindings++];
	memset(f, 0, sizeof(*f));
	f->rule = rule;
	f->kind = a->k->audit[rule].kind;
	f->key = S(a, key);
	return f;
}

/* The sliding windows of one group idx[g0, g1) (sorted by time): for
 * lockstep, distinct members per window (cnt is a zeroed per-member
 * array, left zeroed); for burst, events per window.  Flags the rows of
 * every window that matches, fills f (allocated on the first match). */
static int sweep(cnt_audit *a, size_t rule, const size_t *idx, size_t g0, size_t g1, uint32_t key,
	uint32_t *cnt)
{
	const cnt_audit_rule *r = &a->k->audit[rule];
	int64_t span = r->span_s * 1000;
	size_t j = g0, marked = g0;
	int64_t distinct = 0;
	cnt_audit_finding *f = NULL;

	for (size_t i = g0; i < g1; i++) {
		int64_t m;

		while (j < g1 && a->rows[idx[j]].t - a->rows[idx[i]].t <= span) {
			if (cnt && cnt[a->rows[idx[j]].member]++ == 0)
				distinct++;
			j++;
		}
		m = cnt ? distinct : (int64_t)(j - i);
		if (cnt ? m >= r->videos : m > r->max_events) {
			if (f == NULL) {
				if ((f = finding(a, rule, key)) == NULL)
					goto nomem;
				f->from_ms = a->rows[idx[i]].t;
			}
			if (m > f->measure)
				f->measure = m;
			for (size_t x = marked > i ? marked : i; x < j; x++) {
				a->rows[idx[x]].flagged |= 1u << rule;
				f->views++;
			}
			marked = j;
		}
		if (cnt && --cnt[a->rows[idx[i]].member] == 0)
			distinct--;
	}
	return 0;
nomem:
	/* leave cnt zeroed for the caller's release */
	for (size_t x = g0; cnt && x < g1; x++)
		cnt[a->rows[idx[x]].member] = 0;
	return -1;
}

static int u32cmp(const void *x, const void *y)
{
	uint32_t p = *(const uint32_t *)x, q = *(const uint32_t *)y;

	return p < q ? -1 : p > q;
}

static int watch_time(cnt_audit *a, size_t rule, const size_t *idx, size_t g0, size_t g1)
{
	const cnt_audit_rule *r = &a->k->audit[rule];
	const uint32_t *v = a->vals[rule];
	uint32_t best = NONE;
	int64_t bestn = 0, total = (int64_t)(g1 - g0);
	cnt_audit_finding *f;

	/* the viewer's values sorted, counted by runs: n log n in the views of
	 * one viewer, so a bot with a million distinct values does not stall
	 * the audit */
	uint32_t *sv = malloc((size_t)total * sizeof(*sv));

	if (sv == NULL)
		return -1;
	for (size_t i = g0; i < g1; i++)
		sv[i - g0] = v[idx[i]];
	qsort(sv, (size_t)total, sizeof(*sv), u32cmp);
	for (size_t i = 0, j; i < (size_t)total; i = j) {
		for (j = i + 1; j < (size_t)total && sv[j] == sv[i]; j++)
			;
		int64_t n = (int64_t)(j - i);

		if (n > bestn || (n == bestn && scmp(a, sv[i], best) < 0)) {
			best = sv[i];
			bestn = n;
		}
	}
	free(sv);
	if (bestn < r->views || (double)bestn < r->share * (double)total)
		return 0;
	if ((f = finding(a, rule, a->rows[idx[g0]].item)) == NULL)
		return -1;
	f->measure = bestn;
	f->total = total;
	f->value = S(a, best);
	f->from_ms = INT64_MAX;
	for (size_t i = g0; i < g1; i++)
		if (v[idx[i]] == best) {
			a->rows[idx[i]].flagged |= 1u << rule;
			f->views++;
			if (a->rows[idx[i]].t < f->from_ms)
				f->from_ms = a->rows[idx[i]].t;
		}
	return 0;
}

static int finding_cmp(const void *x, const void *y)
{
	const cnt_audit_finding *p = x, *q = y;
	int c;

	if (p->rule != q->rule)
		return p->rule < q->rule ? -1 : 1;
	c = strcmp(p->key, q->key);
	return c;
}

static int id_cmp(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static int video_cmp(const void *x, const void *y)
{
	return strcmp(((const cnt_audit_video *)x)->member, ((const cnt_audit_video *)y)->member);
}

/* The heuristics over the counted rows idx[0, n). */
static int heuristics(cnt_audit *a, size_t *idx, size_t n)
{
	uint32_t *cnt = calloc(a->nstrs ? a->nstrs : 1, sizeof(*cnt));
	size_t *sub = malloc((n ? n : 1) * sizeof(*sub));
	int rc = -1;

	if (cnt == NULL || sub == NULL)
		goto out;
	sort_a = a;
	for (size_t rule = 0; rule < a->k->naudit; rule++) {
		const cnt_audit_rule *r = &a->k->audit[rule];
		size_t m = 0;

		if (r->kind == CNT_AUDIT_INFLATION)
			continue;
		for (size_t i = 0; i < n; i++) {
			const row *w = &a->rows[idx[i]];

			if ((r->kind != CNT_AUDIT_BURST && w->item == NONE) ||
			    (has_attr(r) && a->vals[rule][idx[i]] == NONE))
				continue;
			sub[m++] = idx[i];
		}
		sort_rule = (int)rule;
		qsort(sub, m, sizeof(*sub), r->kind == CNT_AUDIT_BURST ? by_value : by_item);
		for (size_t g0 = 0, g1; g0 < m; g0 = g1) {
			uint32_t key = r->kind == CNT_AUDIT_BURST ? a->vals[rule][sub[g0]] : a->rows[sub[g0]].item;

			for (g1 = g0 + 1; g1 < m; g1++)
				if ((r->kind == CNT_AUDIT_BURST ? a->vals[rule][sub[g1]] : a->rows[sub[g1]].item) != key)
					break;
			if (r->kind == CNT_AUDIT_WATCH_TIME ? watch_time(a, rule, sub, g0, g1) :
			    sweep(a, rule, sub, g0, g1, key, r->kind == CNT_AUDIT_LOCKSTEP ? cnt : NULL))
				goto out;
		}
	}
	rc = 0;
out:
	free(cnt);
	free(sub);
	return rc;
}

int cnt_audit_run(cnt_audit *a, cnt_err *err)
{
	size_t *idx = malloc((a->nrows ? a->nrows : 1) * sizeof(*idx)), n = 0, nv = 0;
	int64_t expire = 0;
	uint32_t *vid = NULL;
	cnt_hll *hll = NULL;

	if (idx == NULL)
		goto nomem;
	/* deduplicate as cnt-dedup does */
	for (size_t i = 0; i < a->nrows; i++)
		idx[i] = i;
	sort_a = a;
	qsort(idx, a->nrows, sizeof(*idx), by_dedup);
	for (size_t i = 0; i < a->nrows; i++) {
		row *w = &a->rows[idx[i]];

		if (i == 0 || fpcmp(w->dkey, a->rows[idx[i - 1]].dkey) != 0 || w->ingest_s >= expire) {
			w->counted = 1;
			expire = w->ingest_s + w->horizon_s;
			a->tot.examined++;
		} else
			a->tot.duplicates++;
	}
	for (size_t i = 0; i < a->nrows; i++)
		if (a->rows[idx[i]].counted)
			idx[n++] = idx[i];
	if (heuristics(a, idx, n) != 0)
		goto nomem;

	/* members: dense number of each interned member, then the table */
	if ((vid = malloc((a->nstrs ? a->nstrs : 1) * sizeof(*vid))) == NULL)
		goto nomem;
	for (size_t i = 0; i < a->nstrs; i++)
		vid[i] = NONE;
	for (size_t i = 0; i < a->nrows; i++)
		if (vid[a->rows[i].member] == NONE)
			vid[a->rows[i].member] = (uint32_t)nv++;
	if ((a->videos = calloc(nv ? nv : 1, sizeof(*a->videos))) == NULL ||
	    (hll = calloc(nv ? nv : 1, sizeof(*hll))) == NULL)
		goto nomem;
	a->nvideos = nv;
	for (size_t i = 0; i < a->nrows; i++) {
		const row *w = &a->rows[i];
		cnt_audit_video *v = &a->videos[vid[w->member]];

		v->member = S(a, w->member);
		v->beacons++;
		v->views += (uint64_t)w->counted;
		if (w->flagged) {
			v->flagged++;
			a->tot.flagged++;
		}
		if (w->item != NONE && cnt_hll_add(&hll[vid[w->member]], S(a, w->item), a->strs[w->item].len) != 0)
			goto nomem;
	}
	for (size_t i = 0; i < nv; i++) {
		cnt_audit_video *v = &a->videos[i];

		v->viewers = cnt_hll_estimate(&hll[i]);
		v->ratio = v->viewers ? (double)v->beacons / (double)v->viewers : 0;
		v->inflated = v->viewers && v->ratio > a->baseline;
		a->tot.inflated += (uint64_t)v->inflated;
	}
	qsort(a->videos, nv, sizeof(*a->videos), video_cmp);
	if (a->nfindings)
		qsort(a->findings, a->nfindings, sizeof(*a->findings), finding_cmp);
	if ((a->flagged = malloc((a->tot.flagged ? a->tot.flagged : 1) * sizeof(*a->flagged))) == NULL)
		goto nomem;
	for (size_t i = 0; i < a->nrows; i++)
		if (a->rows[i].flagged)
			a->flagged[a->nflagged++] = S(a, a->rows[i].id);
	qsort(a->flagged, a->nflagged, sizeof(*a->flagged), id_cmp);
	for (size_t i = 0; i < nv; i++)
		cnt_hll_release(&hll[i]);
	free(hll);
	free(vid);
	free(idx);
	return 0;
nomem:
	if (hll)
		for (size_t i = 0; i < nv; i++)
			cnt_hll_release(&hll[i]);
	free(hll);
	free(vid);
	free(idx);
	return cnt_err_nomem(err);
}

/* ---- results ---- */

size_t cnt_audit_nfindings(const cnt_audit *a) { return a->nfindings; }
const cnt_audit_finding *cnt_audit_finding_at(const cnt_audit *a, size_t i)
{
	return i < a->nfindings ? &a->findings[i] : NULL;
}
size_t cnt_audit_nvideos(const cnt_audit *a) { return a->nvideos; }
const cnt_audit_video *cnt_audit_video_at(const cnt_audit *a, size_t i)
{
	return i < a->nvideos ? &a->videos[i] : NULL;
}
size_t cnt_audit_nflagged(const cnt_audit *a) { return a->nflagged; }
const char *const *cnt_audit_flagged(const cnt_audit *a) { return a->flagged; }
const cnt_audit_totals *cnt_audit_totals_of(const cnt_audit *a) { return &a->tot; }
double cnt_audit_baseline(const cnt_audit *a) { return a->baseline; }

int cnt_audit_retraction_id(const cnt_audit *a, const char *requester, const char *authority,
	char out[40])
{
	XXH3_state_t *hs = XXH3_createState();
	XXH128_hash_t h;
	cnt_fp fp;
	char hx[33];

	if (hs == NULL)
		return -1;
	XXH3_128bits_reset(hs);
	XXH3_128bits_update(hs, "cnt-audit", 10);
	XXH3_128bits_update(hs, a->k->tenant_id, strlen(a->k->tenant_id) + 1);
	XXH3_128bits_update(hs, a->k->counter_id, strlen(a->k->counter_id) + 1);
	XXH3_128bits_update(hs, &a->through, sizeof(a->through));
	XXH3_128bits_update(hs, requester, strlen(requester) + 1);
	XXH3_128bits_update(hs, authority, strlen(authority) + 1);
	for (size_t i = 0; i < a->nflagged; i++)
		XXH3_128bits_update(hs, a->flagged[i], strlen(a->flagged[i]) + 1);
	h = XXH3_128bits_digest(hs);
	XXH3_freeState(hs);
	fp.hi = h.high64;
	fp.lo = h.low64;
	cnt_ledger_hex(fp, hx);
	snprintf(out, 40, "r-%s", hx);
	return 0;
}

int cnt_audit_utf8_ok(const char *s)
{
	return cnt_json_text_ok(s, strlen(s));
}

typedef struct has_ctx {
	const char *rid;
	int has;
} has_ctx;

static int has_fn(void *ctx, json_t *rec, size_t lineno, const char *line, size_t len, cnt_err *err)
{
	has_ctx *h = ctx;
	json_t *v = json_object_get(rec, "retraction_id");

	(void)lineno, (void)line, (void)len, (void)err;
	if (json_is_string(v) && strcmp(json_string_value(v), h->rid) == 0)
		h->has = 1;
	return 0;
}

int cnt_audit_ledger_has(int fd, const char *name, const char *rid, int *has, cnt_err *err)
{
	cnt_buf all = CNT_BUF_INIT;
	has_ctx h = {rid, 0};
	cnt_fp last;
	size_t lines;
	int rc;

	if (cnt_ledger_slurp(fd, name, &all, err) != 0)
		return -1;
	rc = cnt_ledger_walk(all.p, all.len, "ledger", name, has_fn, &h, &last, &lines, err);
	cnt_buf_release(&all);
	*has = h.has;
	return rc;
}

int cnt_audit_retract(const cnt_audit *a, const int *fds, const char *const *names, size_t n,
	const size_t *order, const cnt_retract_req *req, int ledger_fd, const char *ledger_name,
	cnt_writer *out, void (*note)(void *ctx, cnt_slice key, const char *why), void *ctx,
	cnt_retract_result *res, char rid[40], int *named, cnt_err *err)
{
	cnt_retract_sel sel = {.scope = CNT_SCOPE_EVENT, .keys = a->flagged, .nkeys = a->nflagged,
		.tenant = a->k->tenant_id, .counter = a->k->counter_id};
	cnt_retract_req r = *req;
	int *ofd = calloc(n ? n : 1, sizeof(*ofd)), has = 0, rc = -1;
	const char **onames = calloc(n ? n : 1, sizeof(*onames));

	memset(res, 0, sizeof(*res));
	if (ofd == NULL || onames == NULL || cnt_audit_retraction_id(a, req->requester, req->authority, rid) != 0) {
		cnt_err_nomem(err);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		ofd[i] = fds[order[i]];
		onames[i] = names[order[i]];
		if (lseek(ofd[i], 0, SEEK_SET) != 0) {
			cnt_err_set(err, "cannot read '%s' again: %s", onames[i], strerror(errno));
			goto out;
		}
	}
	if (cnt_audit_ledger_has(ledger_fd, ledger_name, rid, &has, err) != 0)
		goto out;
	if (lseek(ledger_fd, 0, SEEK_SET) != 0) {
		cnt_err_set(err, "cannot read ledger '%s' again: %s", ledger_name, strerror(errno));
		goto out;
	}
	r.retraction_id = rid;
	r.cause = "fraud";
	if (sel.nkeys ? cnt_retract_run(ofd, onames, n, &sel, &r, ledger_fd, ledger_name, out, note, ctx, res,
			    err) : cnt_writer_finish(out, err))
		goto out;
	*named = res->ledger_records || has;
	rc = 0;
out:
	free(ofd);
	free(onames);
	return rc;
}

/* ---- the report ---- */

static int jstr(cnt_buf *b, const char *key, const char *s)
{
	if (cnt_buf_printf(b, ",\"%s\":", key) != 0)
		return -1;
	if (s == NULL)
		return cnt_buf_printf(b, "null");
	return cnt_json_string(b, (const uint8_t *)s, strlen(s), 0);
}

static int jtime(cnt_buf *b, const char *key, int64_t ms)
{
	char t[32];

	cnt_time_format_rfc3339(ms, t);
	return cnt_buf_printf(b, ",\"%s\":\"%s\"", key, t);
}

/* s for a terminal, by cnt_buf_shown's rule; width >= 0: padded to it and
 * one space after */
static int shown(cnt_buf *b, const char *s, int width)
{
	long n = cnt_buf_shown(b, s, strlen(s), SIZE_MAX);

	if (n < 0)
		return -1;
	if (width < 0)
		return 0;
	for (; n < width; n++)
		if (cnt_buf_putc(b, ' '))
			return -1;
	return cnt_buf_putc(b, ' ');
}

static int evidence(cnt_buf *b, const cnt_audit *a, const cnt_audit_finding *f)
{
	const cnt_audit_rule *r = &a->k->audit[f->rule];
	char t[32];

	cnt_time_format_rfc3339(f->from_ms, t);
	switch (f->kind) {
	case CNT_AUDIT_LOCKSTEP:
		return cnt_buf_printf(b, "%lld videos within %lld s from %s", (long long)f->measure,
			(long long)r->span_s, t);
	case CNT_AUDIT_BURST:
		return cnt_buf_printf(b, "%lld events within %lld s from %s (limit %lld)", (long long)f->measure,
			(long long)r->span_s, t, (long long)r->max_events);
	default:
		if (cnt_buf_printf(b, "%lld of %lld views with %s=", (long long)f->measure, (long long)f->total,
			r->attr) != 0)
			return -1;
		return shown(b, f->value, -1);
	}
}

static int report_json(const cnt_audit *a, const cnt_audit_summary *s, cnt_buf *b)
{
	char t[32];

	for (size_t i = 0; i < a->nfindings; i++) {
		const cnt_audit_finding *f = &a->findings[i];
		const cnt_audit_rule *r = &a->k->audit[f->rule];

		if (cnt_buf_printf(b, "{\"kind\":\"finding\",\"heuristic\":\"%s\",\"rule\":%zu",
			    cnt_defs_audit_name(f->kind), f->rule) ||
		    jstr(b, f->kind == CNT_AUDIT_BURST ? "value" : "item", f->key) ||
		    (has_attr(r) && jstr(b, "attr", r->attr)) ||
		    jtime(b, "from", f->from_ms) ||
		    (r->kind != CNT_AUDIT_WATCH_TIME && cnt_buf_printf(b, ",\"span_s\":%lld", (long long)r->span_s)) ||
		    (r->kind == CNT_AUDIT_LOCKSTEP && cnt_buf_printf(b, ",\"videos\":%lld,\"threshold\":%lld",
			    (long long)f->measure, (long long)r->videos)) ||
		    (r->kind == CNT_AUDIT_BURST && cnt_buf_printf(b, ",\"events\":%lld,\"max_events\":%lld",
			    (long long)f->measure, (long long)r->max_events)) ||
		    (r->kind == CNT_AUDIT_WATCH_TIME && (jstr(b, "watch_value", f->value) ||
			    cnt_buf_printf(b, ",\"same\":%lld,\"of\":%lld,\"threshold\":%lld", (long long)f->measure,
				    (long long)f->total, (long long)r->views))) ||
		    cnt_buf_printf(b, ",\"views\":%llu}\n", (unsigned long long)f->views))
			return -1;
	}
	for (size_t i = 0; i < a->nvideos; i++) {
		const cnt_audit_video *v = &a->videos[i];

		if (cnt_buf_printf(b, "{\"kind\":\"video\"") || jstr(b, "member_ref", v->member) ||
		    cnt_buf_printf(b, ",\"beacons\":%llu,\"views\":%llu,\"unique_viewers\":%llu,"
			    "\"inflation\":%.4f,\"baseline\":%g,\"inflated\":%s,\"flagged\":%llu}\n",
			    (unsigned long long)v->beacons, (unsigned long long)v->views,
			    (unsigned long long)v->viewers, v->ratio, a->baseline, v->inflated ? "true" : "false",
			    (unsigned long long)v->flagged))
			return -1;
	}
	cnt_time_format_rfc3339(a->through, t);
	if (cnt_buf_printf(b, "{\"kind\":\"audit\"") || jstr(b, "tenant_id", a->k->tenant_id) ||
	    jstr(b, "counter_id", a->k->counter_id) ||
	    cnt_buf_printf(b, ",\"through\":\"%s\",\"through_ms\":%lld,\"examined\":%llu,\"duplicates\":%llu,"
		    "\"flagged\":%llu,\"findings\":%zu,\"inflated\":%llu,\"retracted\":%llu,\"already_retracted\":%llu,"
		    "\"dry_run\":%s", t, (long long)a->through, (unsigned long long)a->tot.examined,
		    (unsigned long long)a->tot.duplicates, (unsigned long long)a->tot.flagged, a->nfindings,
		    (unsigned long long)a->tot.inflated, (unsigned long long)s->retracted,
		    (unsigned long long)s->already, s->dry_run ? "true" : "false") ||
	    jstr(b, "retraction_id", s->retraction_id) || jstr(b, "audit_id", s->audit_id) ||
	    cnt_buf_printf(b, "}\n"))
		return -1;
	return 0;
}

static int report_table(const cnt_audit *a, const cnt_audit_summary *s, cnt_buf *b)
{
	char t[32];

	cnt_time_format_rfc3339(a->through, t);
	if (cnt_buf_printf(b, "audit ") || shown(b, a->k->tenant_id, 0) || shown(b, a->k->counter_id, 0) ||
	    cnt_buf_printf(b, "through %s: %llu examined, %llu flagged, %llu retracted (%llu already)%s\n", t,
		    (unsigned long long)a->tot.examined, (unsigned long long)a->tot.flagged,
		    (unsigned long long)s->retracted, (unsigned long long)s->already, s->dry_run ? ", dry run" : ""))
		return -1;
	if (s->retraction_id && cnt_buf_printf(b, "retraction %s\n", s->retraction_id))
		return -1;
	if (s->audit_id && cnt_buf_printf(b, "audit %s\n", s->audit_id))
		return -1;
	if (cnt_buf_printf(b, "\n%-11s %-20s %5s  %s\n", "heuristic", "key", "views", "evidence"))
		return -1;
	for (size_t i = 0; i < a->nfindings; i++) {
		const cnt_audit_finding *f = &a->findings[i];

		if (cnt_buf_printf(b, "%-11s ", cnt_defs_audit_name(f->kind)) || shown(b, f->key, 20) ||
		    cnt_buf_printf(b, "%5llu  ", (unsigned long long)f->views) || evidence(b, a, f) ||
		    cnt_buf_putc(b, '\n'))
			return -1;
	}
	if (cnt_buf_printf(b, "\n%-20s %8s %8s %8s %9s %8s\n", "video", "beacons", "views", "viewers", "inflation",
		    "flagged"))
		return -1;
	for (size_t i = 0; i < a->nvideos; i++) {
		const cnt_audit_video *v = &a->videos[i];

		if (shown(b, v->member, 20) ||
		    cnt_buf_printf(b, "%8llu %8llu %8llu %9.2f %8llu%s\n", (unsigned long long)v->beacons,
			    (unsigned long long)v->views, (unsigned long long)v->viewers, v->ratio,
			    (unsigned long long)v->flagged, v->inflated ? "  inflated" : ""))
			return -1;
	}
	return cnt_buf_printf(b, "(inflation = beacons / unique viewers; baseline %g)\n", a->baseline);
}

int cnt_audit_report(const cnt_audit *a, const cnt_audit_summary *s, int json, cnt_buf *out)
{
	return json ? report_json(a, s, out) : report_table(a, s, out);
}
