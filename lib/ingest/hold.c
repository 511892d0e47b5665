/*
 * hold.c - the hold signals, judged over one run's candidates (see hold.h).
 *
 * Each signal is a sort and a sweep: the counter's candidates are sorted
 * by the signal's group key (member, delta or attribute value), then event
 * time, then the order added (so equal keys sort the same every run), and
 * two pointers walk each group's windows.  Rate sums deltas in 128 bits,
 * so no sum of 64-bit deltas overflows.
 */
#include "ingest/hold.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fpset.h"
#include "count/topkey.h"
#include "model/held.h"

typedef struct item {
	size_t off;
	uint32_t len;
	int32_t counter;        /* index in defs, or -1: its counter declares no signal */
	int64_t t, delta;
	cnt_fp member;
	uint32_t mid;           /* dense member number within the counter */
	int32_t sig;            /* -1 admitted, else the signal's index */
	int64_t metric;         /* what the signal measured */
} item;

typedef struct skey {
	uint64_t a, b;
	int64_t t;
	size_t i;
} skey;

struct cnt_hold {
	const cnt_defs *defs;
	cnt_buf enc;
	item *v;
	size_t n, cap;
	int decided;
	uint64_t *per_counter;
	cnt_hold_stats st;
	cnt_attrs_buf ab;
};

const cnt_counter *cnt_hold_first_counter(const cnt_defs *d)
{
	for (size_t i = 0; i < cnt_defs_ncounters(d); i++)
		if (cnt_defs_counter_at(d, i)->nholds)
			return cnt_defs_counter_at(d, i);
	return NULL;
}

cnt_hold *cnt_hold_new(const cnt_defs *defs, cnt_err *err)
{
	cnt_hold *h = calloc(1, sizeof(*h));

	if (h == NULL || (h->per_counter = calloc(cnt_defs_ncounters(defs) + 1, sizeof(uint64_t))) == NULL) {
		free(h);
		cnt_err_nomem(err);
		return NULL;
	}
	h->defs = defs;
	return h;
}

void cnt_hold_free(cnt_hold *h)
{
	if (h == NULL)
		return;
	cnt_buf_release(&h->enc);
	cnt_attrs_buf_release(&h->ab);
	free(h->v);
	free(h->per_counter);
	free(h);
}

static cnt_fp fp_slice(cnt_slice s)
{
	const void *parts[1] = {s.p ? s.p : ""};
	size_t lens[1] = {s.n};

	return cnt_fp_of(1, parts, lens);
}

int cnt_hold_add(cnt_hold *h, const cnt_event *e, cnt_err *err)
{
	const cnt_counter *c = cnt_defs_counter(h->defs, e->tenant_id.p, e->tenant_id.n, e->counter_id.p,
		e->counter_id.n);
	item *it;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 256;
		item *v = realloc(h->v, cap * sizeof(*v));

		if (v == NULL)
			return cnt_err_nomem(err);
		h->v = v;
		h->cap = cap;
	}
	it = &h->v[h->n];
	memset(it, 0, sizeof(*it));
	it->off = h->enc.len;
	if (cnt_event_encode(e, &h->enc) != 0)
		return cnt_err_nomem(err);
	it->len = (uint32_t)(h->enc.len - it->off);
	it->counter = c && c->nholds ? (int32_t)cnt_defs_counter_index(h->defs, c) : -1;
	it->t = e->event_time;
	it->delta = e->delta;
	it->member = fp_slice(e->member_ref);
	it->sig = -1;
	h->n++;
	h->st.added++;
	return 0;
}

static int cmp_skey(const void *x, const void *y)
{
	const skey *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static void mark(item *it, int sig, int64_t metric)
{
	if (it->sig < 0) {
		it->sig = sig;
		it->metric = metric;
	}
}

/* rate: k sorted by (member, time). */
static void sweep_rate(cnt_hold *h, const skey *k, size_t n, const cnt_hold_signal *s, int sig)
{
	int64_t w = s->window_s * 1000;

	for (size_t g = 0; g < n;) {
		size_t e = g, l = g;
		__int128 sum = 0;   /* deltas of [l, r) */
		size_t r = g;

		while (e < n && k[e].a == k[g].a)
			e++;
		for (size_t a = g; a < e; a++) {
			while (r < e && k[r].t <= k[a].t)
				sum += h->v[k[r++].i].delta;
			while (l < r && (__int128)k[a].t - k[l].t >= w)
				sum -= h->v[k[l++].i].delta;
			if (sum > s->ceiling)
				mark(&h->v[k[a].i], sig, sum > INT64_MAX ? INT64_MAX : (int64_t)sum);
		}
		g = e;
	}
}

/* lockstep (distinct members, counts[] by member number) or device
 * (events; counts NULL): k sorted by (group, time); a window [t_l, t_l +
 * span] at or over need marks its events. */
static void sweep_burst(cnt_hold *h, const skey *k, size_t n, const cnt_hold_signal *s, int sig,
	uint32_t *counts, int64_t need)
{
	int64_t span = s->window_s * 1000;

	for (size_t g = 0; g < n;) {
		size_t e = g, r = g, covered = g;
		int64_t in = 0;

		while (e < n && k[e].a == k[g].a && k[e].b == k[g].b)
			e++;
		for (size_t l = g; l < e; l++) {
			while (r < e && (__int128)k[r].t - k[l].t <= span) {
				if (counts == NULL || counts[h->v[k[r].i].mid]++ == 0)
					in++;
				r++;
			}
			if (in >= need) {
				for (size_t j = covered > l ? covered : l; j < r; j++)
					mark(&h->v[k[j].i], sig, in);
				covered = r;
			}
			if (counts == NULL || --counts[h->v[k[l].i].mid] == 0)
				in--;
		}
		g = e;
	}
}

static const cnt_slice *attr_of(const cnt_event *e, const char *key)
{
	size_t n = strlen(key);

	for (size_t j = 0; j < e->nattrs; j++)
		if (e->attr_keys[j].n == n && memcmp(e->attr_keys[j].p, key, n) == 0)
			return &e->attr_vals[j];
	return NULL;
}

static int decode_at(cnt_hold *h, size_t i, cnt_event *e, cnt_err *err)
{
	cnt_cur c = {h->enc.p + h->v[i].off, h->enc.p + h->v[i].off + h->v[i].len};
	cnt_limits lim = cnt_limits_default();

	return cnt_event_decode(&c, e, &h->ab, &lim, err);
}

/* One counter's signals over its candidates idx[0..n). */
static int judge_counter(cnt_hold *h, const cnt_counter *c, const size_t *idx, size_t n, cnt_err *err)
{
	skey *k = malloc((n ? n : 1) * sizeof(*k));
	uint32_t *counts = calloc(n ? n : 1, sizeof(*counts));
	cnt_fpset members;
	int rc = -1;

	if (cnt_fpset_init(&members, n) != 0) {
		free(k);
		free(counts);
		return cnt_err_nomem(err);
	}
	if (k == NULL || counts == NULL)
		goto nomem;
	for (size_t j = 0; j < n; j++) {
		uint64_t old;
		int a = cnt_fpset_add(&members, h->v[idx[j]].member, members.count, &old);

		if (a < 0)
			goto nomem;
		h->v[idx[j]].mid = (uint32_t)(a ? members.count - 1 : old);
	}
	for (size_t si = 0; si < c->nholds; si++) {
		const cnt_hold_signal *s = &c->holds[si];
		size_t m = 0;

		for (size_t j = 0; j < n; j++) {
			item *it = &h->v[idx[j]];
			skey sk = {0, 0, it->t, idx[j]};

			if (s->kind == CNT_HOLD_RATE)
				sk.a = it->mid;
			else if (s->kind == CNT_HOLD_LOCKSTEP)
				sk.a = (uint64_t)it->delta ^ (UINT64_C(1) << 63);
			else {
				cnt_event e;
				const cnt_slice *v;

				if (decode_at(h, idx[j], &e, err) != 0)
					goto out;
				if ((v = attr_of(&e, s->attr)) == NULL)
					continue;
				cnt_fp fp = fp_slice(*v);
				sk.a = fp.hi;
				sk.b = fp.lo;
			}
			k[m++] = sk;
		}
		qsort(k, m, sizeof(*k), cmp_skey);
		if (s->kind == CNT_HOLD_RATE)
			sweep_rate(h, k, m, s, (int)si);
		else if (s->kind == CNT_HOLD_LOCKSTEP)
			sweep_burst(h, k, m, s, (int)si, counts, s->members);
		else
			sweep_burst(h, k, m, s, (int)si, NULL, s->max_events + 1);
	}
	rc = 0;
	goto out;
nomem:
	cnt_err_nomem(err);
out:
	cnt_fpset_release(&members);
	free(k);
	free(counts);
	return rc;
}

int cnt_hold_decide(cnt_hold *h, cnt_err *err)
{
	size_t nc = cnt_defs_ncounters(h->defs), *idx;

	if (h->decided)
		return 0;
	if ((idx = malloc((h->n ? h->n : 1) * sizeof(*idx))) == NULL)
		return cnt_err_nomem(err);
	for (size_t ci = 0; ci < nc; ci++) {
		const cnt_counter *c = cnt_defs_counter_at(h->defs, ci);
		size_t n = 0;

		if (c->nholds == 0)
			continue;
		for (size_t i = 0; i < h->n; i++)
			if (h->v[i].counter == (int32_t)ci)
				idx[n++] = i;
		if (n && judge_counter(h, c, idx, n, err) != 0) {
			free(idx);
			return -1;
		}
	}
	free(idx);
	h->decided = 1;
	return 0;
}

int cnt_hold_verdict(const cnt_hold *h, size_t i)
{
	return i < h->n ? h->v[i].sig : -1;
}

static void detail(const cnt_hold_signal *s, const item *it, char *out, size_t n)
{
	if (s->kind == CNT_HOLD_RATE)
		snprintf(out, n, "member's deltas over %" PRId64 "s up to its event_time sum to %" PRId64
			", above the ceiling %" PRId64, s->window_s, it->metric, s->ceiling);
	else if (s->kind == CNT_HOLD_LOCKSTEP)
		snprintf(out, n, "%" PRId64 " members gained delta %" PRId64 " within %" PRId64
			"s (lockstep at %" PRId64 ")", it->metric, it->delta, s->window_s, s->members);
	else
		snprintf(out, n, "%" PRId64 " events with one value of attrs.%s within %" PRId64
			"s (more than %" PRId64 ")", it->metric, s->attr, s->window_s, s->max_events);
}

int cnt_hold_finish(cnt_hold *h, cnt_writer *log, cnt_writer *held, cnt_topkey *hot, cnt_err *err)
{
	if (cnt_hold_decide(h, err) != 0)
		return -1;
	for (size_t i = 0; i < h->n; i++) {
		const item *it = &h->v[i];
		const cnt_hold_signal *s;
		cnt_event e;
		char hid[35], why[256];
		cnt_buf *b;

		if (it->sig < 0) {
			if (hot != NULL && (decode_at(h, i, &e, err) != 0 ||
			    cnt_topkey_add(hot, e.tenant_id, e.counter_id, e.member_ref, err) != 0))
				return -1;
			if (cnt_buf_append(cnt_writer_buf(log), h->enc.p + it->off, it->len) != 0)
				return cnt_err_nomem(err);
			if (cnt_writer_commit(log, err) != 0)
				return -1;
			h->st.admitted++;
			continue;
		}
		s = &cnt_defs_counter_at(h->defs, (size_t)it->counter)->holds[it->sig];
		if (decode_at(h, i, &e, err) != 0)
			return -1;
		cnt_held_id(e.event_id, hid);
		detail(s, it, why, sizeof(why));
		b = cnt_writer_buf(held);
		if (cnt_buf_append(b, h->enc.p + it->off, it->len) != 0 ||
		    cnt_held_encode_tail(b, hid, s->kind, why, e.ingest_time) != 0)
			return cnt_err_nomem(err);
		if (cnt_writer_commit(held, err) != 0)
			return -1;
		h->st.held++;
		h->st.by_signal[s->kind]++;
		h->per_counter[it->counter]++;
	}
	return 0;
}

const cnt_hold_stats *cnt_hold_get_stats(const cnt_hold *h)
{
	return &h->st;
}

uint64_t cnt_hold_counter_held(const cnt_hold *h, const cnt_counter *c)
{
	return h->per_counter[cnt_defs_counter_index(h->defs, c)];
}
