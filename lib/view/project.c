/*
 * project.c - window composition and ranking (see project.h).
 */
#include "view/project.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "avro/json.h"
#include "base/table.h"
#include "base/text.h"
#include "count/estimate.h"
#include "model/fingerprint.h"

/* 64 bytes: ten million of them are the bulk of a big build. */
typedef struct pmember {
	cnt_i128 sum;
	int64_t min, max;
	int64_t last;         /* latest on-time event; INT64_MIN: no bucket yet */
	uint64_t name_off;
	cnt_hll *sketch;
	uint32_t name_len;
	uint32_t scope;       /* scope index + 1; 0: none */
} pmember;

#define SEEN(m) ((m)->last != INT64_MIN)

typedef struct pscope {
	char *key;
	cnt_buf pool;         /* the scope's member names, in rank order */
	size_t n;             /* members */
	cnt_view_entry *entries;
	int64_t *edges;
	uint64_t *counts;
	size_t nbins;
	int64_t *errors;      /* an approx or unique counter's: each entry's error bound */
} pscope;

struct cnt_proj {
	const cnt_leaderboard *b;
	int64_t from, to;
	cnt_buf pool;         /* member names */
	pmember *m;
	size_t nm, cm;
	uint32_t *slots;
	size_t mask;
	int64_t *stime;       /* --scopes-from: the event that set each member's scope */
	uint64_t *stie;
	size_t scap;
	int hashed;           /* 0: members appended in strictly ascending name order, no table yet */
	pscope *scopes;
	size_t ns, cs;
	cnt_proj_stats st;
	cnt_fp_set *versions; /* of the buckets counted */
	/* Beside the members, only for the counters that need them (so an
	 * exact build's memory stays 64 bytes a member): an approx counter's
	 * summed variance, a unique counter's union precision (the smallest
	 * of its sketches'). */
	cnt_i128 *var;
	uint8_t *prec;
	size_t caux;
	int precision;        /* the smallest of every member's, 0 before any */
	size_t sketches;      /* members with a sketch (none: no pass to free them) */
};

cnt_proj *cnt_proj_new(const cnt_leaderboard *board, int64_t from, int64_t to, cnt_err *err)
{
	cnt_proj *p = calloc(1, sizeof(*p));

	if (p == NULL || (p->slots = calloc(1024, sizeof(uint32_t))) == NULL ||
	    (p->versions = cnt_fp_set_new(err)) == NULL) {
		if (p != NULL)
			free(p->slots);
		free(p);
		cnt_err_nomem(err);
		return NULL;
	}
	p->mask = 1023;
	p->b = board;
	p->from = from;
	p->to = to;
	p->st.as_of = INT64_MIN;
	if (board->scope_kind == CNT_SCOPE_GLOBAL) {
		p->scopes = calloc(1, sizeof(pscope));
		if (p->scopes == NULL || (p->scopes[0].key = strdup("global")) == NULL) {
			cnt_proj_free(p);
			cnt_err_nomem(err);
			return NULL;
		}
		p->ns = p->cs = 1;
	}
	return p;
}

void cnt_proj_free(cnt_proj *p)
{
	if (p == NULL)
		return;
	cnt_fp_set_free(p->versions);
	for (size_t i = 0; p->sketches && i < p->nm; i++)
		if (p->m[i].sketch) {
			cnt_hll_release(p->m[i].sketch);
			free(p->m[i].sketch);
		}
	for (size_t i = 0; i < p->ns; i++) {
		free(p->scopes[i].key);
		free(p->scopes[i].entries);
		free(p->scopes[i].edges);
		free(p->scopes[i].counts);
		cnt_buf_release(&p->scopes[i].pool);
	}
	for (size_t i = 0; i < p->ns; i++)
		free(p->scopes[i].errors);
	free(p->scopes);
	free(p->var);
	free(p->prec);
	cnt_table_free(p->m, p->cm * sizeof(*p->m));
	free(p->slots);
	free(p->stime);
	free(p->stie);
	cnt_buf_release(&p->pool);
	free(p);
}

/* Rebuilds the table with at least cap slots, for every member so far. */
static int rebuild(cnt_proj *p, size_t cap)
{
	uint32_t *s;

	while (cap < 2 * (p->nm + 1))
		cap *= 2;
	s = calloc(cap, sizeof(uint32_t));
	if (s == NULL)
		return -1;
	cnt_mem_huge(s, cap * sizeof(uint32_t));
	for (size_t i = 0; i < p->nm; i++) {
		size_t k;

		for (k = XXH3_64bits(p->pool.p + p->m[i].name_off, p->m[i].name_len) & (cap - 1); s[k]; k = (k + 1) & (cap - 1))
			;
		s[k] = (uint32_t)i + 1;
	}
	free(p->slots);
	p->slots = s;
	p->mask = cap - 1;
	return 0;
}

static int grow(cnt_proj *p)
{
	return rebuild(p, (p->mask + 1) * 2);
}

static int name_cmp(const cnt_proj *p, const pmember *m, const char *name, size_t n)
{
	size_t k = m->name_len < n ? m->name_len : n;
	int d = k ? memcmp(p->pool.p + m->name_off, name, k) : 0;

	if (d)
		return d;
	return m->name_len < n ? -1 : m->name_len > n;
}

static pmember *member(cnt_proj *p, const char *name, size_t n)
{
	uint64_t h = XXH3_64bits(name, n);
	size_t k = 0;
	pmember *m;

	/* Bucket files are sorted by member within a counter version: while
	 * the names only ascend, a larger name is certainly new and the same
	 * name is the last member, so no table is needed.  The first name out
	 * of order (another version, another file, scopes given first) builds
	 * the table, and lookups go through it from then on. */
	if (!p->hashed) {
		int d = p->nm ? name_cmp(p, &p->m[p->nm - 1], name, n) : -1;

		if (d == 0)
			return &p->m[p->nm - 1];
		if (d > 0) {
			if (rebuild(p, p->mask + 1) != 0)
				return NULL;
			p->hashed = 1;
		}
	}
	for (k = h & p->mask; p->hashed && p->slots[k]; k = (k + 1) & p->mask) {
		m = &p->m[p->slots[k] - 1];
		if (m->name_len == n && memcmp(p->pool.p + m->name_off, name, n) == 0)
			return m;
	}
	if (p->nm == p->cm) {
		size_t c = p->cm ? p->cm * 2 : 1024;
		/* remapped on 2 MiB boundaries: read at random to rank */
		pmember *v = cnt_table_grow(p->m, p->cm * sizeof(*v), c * sizeof(*v));

		if (v == NULL)
			return NULL;
		p->m = v;
		p->cm = c;
	}
	m = &p->m[p->nm];
	memset(m, 0, sizeof(*m));
	m->last = INT64_MIN;
	m->name_off = p->pool.len;
	m->name_len = (uint32_t)n;
	if (cnt_buf_append(&p->pool, name, n) != 0)
		return NULL;
	++p->nm;
	if (p->hashed) {
		p->slots[k] = (uint32_t)p->nm;
		if (p->nm * 2 > p->mask + 1 && grow(p) != 0)
			return NULL;
	}
	return &p->m[p->nm - 1];
}

static int scope_index(cnt_proj *p, const char *scope, size_t sn, size_t *out);

void cnt_proj_cut(cnt_proj *p, int64_t to)
{
	if (to >= p->from && to < p->to)
		p->to = to;
}

int cnt_proj_set_scope(cnt_proj *p, const char *name, size_t mn, const char *scope, size_t sn)
{
	pmember *m = member(p, name, mn);
	size_t i;

	if (m == NULL || scope_index(p, scope, sn, &i) != 0)
		return -1;
	m->scope = (uint32_t)i + 1;
	return 0;
}

int cnt_proj_scope_from_event(cnt_proj *p, const cnt_event *e, cnt_err *err)
{
	const char *attr = p->b->scope_attr;
	size_t an, i;
	pmember *m;
	uint64_t tie;
	char shown[CNT_SHOWN_SIZE(64)];

	if (attr == NULL || !(e->tenant_id.n == strlen(p->b->tenant_id) &&
	    memcmp(e->tenant_id.p, p->b->tenant_id, e->tenant_id.n) == 0))
		return 0;
	an = strlen(attr);
	for (i = 0; i < e->nattrs; i++)
		if (e->attr_keys[i].n == an && memcmp(e->attr_keys[i].p, attr, an) == 0)
			break;
	if (i == e->nattrs || e->attr_vals[i].n == 0)
		return 0;
	if (!cnt_json_text_ok(e->attr_vals[i].p, e->attr_vals[i].n))
		return cnt_err_set(err, "event '%s': attrs '%s' is not UTF-8 text, so it cannot name a scope "
			"(cnt-ingest admits only text: was this log written by another tool?)",
			cnt_shown(e->event_id.p, e->event_id.n, 64, shown), attr);
	m = member(p, e->member_ref.p, e->member_ref.n);
	if (m == NULL)
		return cnt_err_nomem(err);
	tie = XXH3_64bits(e->event_id.p, e->event_id.n);
	if (p->scap < p->nm) {
		size_t c = p->scap ? p->scap : 1024;
		int64_t *t;
		uint64_t *u;

		while (c < p->nm)
			c *= 2;
		t = realloc(p->stime, c * sizeof(*t));
		if (t == NULL)
			return cnt_err_nomem(err);
		p->stime = t;
		u = realloc(p->stie, c * sizeof(*u));
		if (u == NULL)
			return cnt_err_nomem(err);
		p->stie = u;
		p->scap = c;
	}
	{
		size_t mi = (size_t)(m - p->m), si;

		if (m->scope && (e->event_time < p->stime[mi] || (e->event_time == p->stime[mi] && tie <= p->stie[mi])))
			return 0;
		if (scope_index(p, e->attr_vals[i].p, e->attr_vals[i].n, &si) != 0)
			return cnt_err_nomem(err);
		m->scope = (uint32_t)si + 1;
		p->stime[mi] = e->event_time;
		p->stie[mi] = tie;
	}
	return 0;
}

static int scope_index(cnt_proj *p, const char *scope, size_t sn, size_t *out)
{
	size_t i;

	for (i = 0; i < p->ns; i++)
		if (strlen(p->scopes[i].key) == sn && memcmp(p->scopes[i].key, scope, sn) == 0)
			break;
	if (i == p->ns) {
		if (p->ns == p->cs) {
			size_t c = p->cs ? p->cs * 2 : 8;
			pscope *v = realloc(p->scopes, c * sizeof(*v));

			if (v == NULL)
				return -1;
			p->scopes = v;
			p->cs = c;
		}
		memset(&p->scopes[i], 0, sizeof(pscope));
		p->scopes[i].key = strndup(scope, sn);
		if (p->scopes[i].key == NULL)
			return -1;
		p->ns++;
	}
	*out = i;
	return 0;
}

static int slice_eq(cnt_slice s, const char *z)
{
	return s.n == strlen(z) && memcmp(s.p, z, s.n) == 0;
}

static cnt_counter_type ctype(const cnt_proj *p);
static int aux_grow(cnt_proj *p);

int cnt_proj_add_bucket(cnt_proj *p, const cnt_bucket *bk, cnt_err *err)
{
	const cnt_leaderboard *b = p->b;
	pmember *m;

	/* A breakdown by a dimension holds the total's events again. */
	if (!cnt_bucket_is_total(bk))
		return 0;
	p->st.buckets_read++;
	if (!slice_eq(bk->tenant_id, b->tenant_id) || !slice_eq(bk->counter_id, b->counter_id))
		return 0;
	if (b->counter_version && bk->counter_version != b->counter_version)
		return 0;
	if (!b->counter_version) {
		/* Each bucket means what its own version says: a board over every
		 * version cannot add buckets of versions of different types. */
		const cnt_counter_version *own = cnt_counter_version_get(b->counter, bk->counter_version);
		const cnt_counter_version *cur = cnt_counter_version_latest(b->counter);

		if (own != NULL && cur != NULL && own->type != cur->type)
			return cnt_err_set(err, "board '%s' reads every version of %s/%s, but version %d "
				"counts %s and version %d %s: pin the board's counter_version",
				b->board_id, b->tenant_id, b->counter_id, own->version,
				cnt_defs_ctype_name(own->type), cur->version, cnt_defs_ctype_name(cur->type));
	}
	if (bk->max_ingest_time > p->st.as_of)
		p->st.as_of = bk->max_ingest_time;
	/* Buckets never straddle a window boundary: both are bucket
	 * boundaries of the tenant's zone. */
	if (bk->bucket_start < p->from || bk->bucket_end > p->to || bk->count == 0)
		return 0;
	if (cnt_fp_set_add(p->versions, bk->tenant_id.p, bk->tenant_id.n, bk->counter_id.p, bk->counter_id.n,
		bk->counter_version, err) != 0)
		return -1;
	m = member(p, bk->member_ref.p, bk->member_ref.n);
	if (m == NULL)
		return cnt_err_nomem(err);
	p->st.buckets_used++;
	m->sum += bk->sum;
	if (cnt_estimate_is(ctype(p))) {
		size_t mi = (size_t)(m - p->m);

		if (aux_grow(p) != 0)
			return cnt_err_nomem(err);
		/* Variances of independent samples add (wrapping, as the buckets'
		 * sum_var does: a forged one can only make the bound unknown). */
		p->var[mi] = (cnt_i128)((unsigned __int128)p->var[mi] + (unsigned __int128)bk->sum_var);
		if (bk->sketch.p) {
			int sp = cnt_estimate_sketch_precision((const uint8_t *)bk->sketch.p, bk->sketch.n);

			/* HLL++: a union folds to the lower precision. */
			if (p->prec[mi] == 0 || sp < p->prec[mi])
				p->prec[mi] = (uint8_t)sp;
			if (p->precision == 0 || sp < p->precision)
				p->precision = sp;
		}
	}
	if (bk->has_min && (!SEEN(m) || bk->min < m->min))
		m->min = bk->min;
	if (bk->has_max && (!SEEN(m) || bk->max > m->max))
		m->max = bk->max;
	/* An on-time event always has a time; a record without one (not
	 * written by us) still marks the member as seen. */
	if (bk->has_last && (!SEEN(m) || bk->last_event_time > m->last))
		m->last = bk->last_event_time;
	else if (!SEEN(m))
		m->last = bk->bucket_start > INT64_MIN ? bk->bucket_start : INT64_MIN + 1;
	if (bk->sketch.p) {
		cnt_hll h;
		int rc;

		if (cnt_hll_deserialize(&h, (const uint8_t *)bk->sketch.p, bk->sketch.n, err) != 0) {
			char shown[CNT_SHOWN_SIZE(64)];

			return cnt_err_prefix(err, "member '%s': sketch",
				cnt_shown(bk->member_ref.p, bk->member_ref.n, 64, shown));
		}
		if (m->sketch == NULL) {
			m->sketch = malloc(sizeof(cnt_hll));
			if (m->sketch == NULL) {
				cnt_hll_release(&h);
				return cnt_err_nomem(err);
			}
			cnt_hll_init_p(m->sketch, cnt_hll_precision(&h));   /* unions fold to the lowest met */
			p->sketches++;
		}
		rc = cnt_hll_merge(m->sketch, &h);
		cnt_hll_release(&h);
		if (rc != 0)
			return cnt_err_nomem(err);
	}
	return 0;
}

/* The type the board's values have: its pinned version's, else the
 * newest version's. */
static cnt_counter_type ctype(const cnt_proj *p)
{
	const cnt_counter_version *cv = cnt_counter_version_latest(p->b->counter);
	cnt_counter_type t = cv ? cv->type : CNT_CTYPE_EXACT;

	if (p->b->counter_version) {
		const cnt_counter_version *pin = cnt_counter_version_get(p->b->counter, p->b->counter_version);

		if (pin)
			t = pin->type;
	}
	return t;
}

/* Makes var and prec hold every member (new ones zeroed).  0 or -1. */
static int aux_grow(cnt_proj *p)
{
	size_t c = p->caux ? p->caux : 1024;
	cnt_i128 *v;
	uint8_t *q;

	if (p->nm <= p->caux)
		return 0;
	while (c < p->nm)
		c *= 2;
	v = realloc(p->var, c * sizeof(*v));
	if (v == NULL)
		return -1;
	cnt_mem_huge(v, c * sizeof(*v));
	p->var = v;
	q = realloc(p->prec, c);
	if (q == NULL)
		return -1;
	p->prec = q;
	memset(v + p->caux, 0, (c - p->caux) * sizeof(*v));
	memset(q + p->caux, 0, c - p->caux);
	p->caux = c;
	return 0;
}

static int64_t value_of(cnt_proj *p, const pmember *m)
{
	switch (ctype(p)) {
	case CNT_CTYPE_MIN:
		return m->min;
	case CNT_CTYPE_MAX:
		return m->max;
	case CNT_CTYPE_UNIQUE:
		return m->sketch ? (int64_t)cnt_hll_estimate(m->sketch) : 0;
	default:
		if (!cnt_i128_fits64(m->sum)) {
			p->st.clamped++;
			return m->sum < 0 ? INT64_MIN : INT64_MAX;
		}
		return (int64_t)m->sum;
	}
}

int cnt_proj_tied(const cnt_leaderboard *b, const cnt_view_entry *x, const cnt_view_entry *y)
{
	if (x->value != y->value)
		return 0;
	for (size_t i = 0; i < b->ntie_break; i++)
		if ((b->tie_break[i] == CNT_TIE_EARLIEST_ACHIEVER || b->tie_break[i] == CNT_TIE_LATEST_ACHIEVER) &&
		    x->last_event_time != y->last_event_time)
			return 0;
	return 1;
}

int cnt_proj_cmp(const cnt_leaderboard *b, const cnt_view_entry *x, const char *xn,
	const cnt_view_entry *y, const char *yn)
{
	if (x->value != y->value)
		return (x->value > y->value) == !b->order_asc ? -1 : 1;
	for (size_t i = 0; i < b->ntie_break; i++) {
		switch (b->tie_break[i]) {
		case CNT_TIE_EARLIEST_ACHIEVER:
			if (x->last_event_time != y->last_event_time)
				return x->last_event_time < y->last_event_time ? -1 : 1;
			break;
		case CNT_TIE_LATEST_ACHIEVER:
			if (x->last_event_time != y->last_event_time)
				return x->last_event_time > y->last_event_time ? -1 : 1;
			break;
		case CNT_TIE_MEMBER_REF_ASC: {
			size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
			int d = n ? memcmp(xn, yn, n) : 0;

			if (d)
				return d;
			if (x->name_len != y->name_len)
				return x->name_len < y->name_len ? -1 : 1;
			break;
		}
		}
	}
	return 0;
}

/* Sort keys for the radix pass: the value in rank direction, then the
 * achiever time in its direction; member order is settled afterwards
 * within runs of equal keys. */
typedef struct skey {
	uint64_t k1, k2;
	uint32_t idx;
} skey;

static int cmp_entries(const void *x, const void *y, void *ctx)
{
	const cnt_proj *p = ctx;
	const cnt_view_entry *a = x, *b = y;

	return cnt_proj_cmp(p->b, a, (const char *)p->pool.p + a->name_off, b, (const char *)p->pool.p + b->name_off);
}

/* Sorts v[0..n) by (k1, k2), stably: one pass over the keys counts every
 * byte, then each byte that is not the same in every key is a scatter
 * between v and a second array (no copy back between passes).  Returns
 * the sorted array (v or the second one) and sets *spare to the other,
 * which the caller frees, also when NULL is returned (out of memory). */
static skey *radix(skey *v, size_t n, skey **spare)
{
	skey *tmp = malloc(n * sizeof(*tmp) + 1), *src = v, *dst = tmp;
	size_t (*count)[256];

	*spare = tmp;
	if (tmp == NULL || (count = calloc(16, sizeof(*count))) == NULL)
		return NULL;
	cnt_mem_huge(tmp, n * sizeof(*tmp));
	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 8; b++) {
			count[b][v[i].k2 >> 8 * b & 0xff]++;
			count[8 + b][v[i].k1 >> 8 * b & 0xff]++;
		}
	for (int pass = 0; pass < 16; pass++) {
		size_t *c = count[pass], at = 0;
		int shift = 8 * (pass % 8);

		if (c[(pass >= 8 ? v[0].k1 : v[0].k2) >> shift & 0xff] == n)
			continue;
		for (int b = 0; b < 256; b++) {
			size_t k = c[b];

			c[b] = at;
			at += k;
		}
		if (pass >= 8)
			for (size_t i = 0; i < n; i++)
				dst[c[src[i].k1 >> shift & 0xff]++] = src[i];
		else
			for (size_t i = 0; i < n; i++)
				dst[c[src[i].k2 >> shift & 0xff]++] = src[i];
		*spare = src;
		src = dst;
		dst = *spare;
	}
	free(count);
	return src;
}

/* Histogram over the scope's values: ascending edges, as view.h says. */
static int histogram(const cnt_leaderboard *b, pscope *s)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	size_t want = b->hist_buckets > 0 ? (size_t)b->hist_buckets : 512, n = 0;
	int64_t *e = malloc((want + 3) * sizeof(int64_t));

	if (e == NULL)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		if (s->entries[i].value < lo)
			lo = s->entries[i].value;
		if (s->entries[i].value > hi)
			hi = s->entries[i].value;
	}
	if (s->n == 0)
		lo = hi = 0;
	e[n++] = lo;
	if (b->hist_scale == CNT_HIST_LINEAR) {
		long double width = b->hist_width > 0 ? (long double)b->hist_width :
			((long double)hi - (long double)lo + 1) / (long double)want;

		if (width < 1)
			width = 1;
		for (size_t i = 1; i < want; i++) {
			long double x = (long double)lo + width * (long double)i;

			if (x > (long double)hi)
				break;
			if ((int64_t)x > e[n - 1])
				e[n++] = (int64_t)x;
		}
	} else {
		/* Geometric edges over the positive values; everything <= 0
		 * shares the first bin. */
		double l = lo > 1 ? (double)lo : 1.0, h = hi > 1 ? (double)hi : 1.0;

		if (lo < 1 && hi >= 1)
			e[n++] = 1;
		for (size_t i = 1; i < want && h > l; i++) {
			double x = l * pow(h / l, (double)i / (double)want);
			int64_t xi = (int64_t)x;

			if (xi > e[n - 1] && xi <= hi)
				e[n++] = xi;
		}
	}
	/* The end: one past the largest value (the last bin includes it). */
	e[n] = hi == INT64_MAX ? hi : hi + 1;
	if (e[n] <= e[n - 1])
		e[n] = e[n - 1];
	s->edges = e;
	s->nbins = n;
	s->counts = calloc(n, sizeof(uint64_t));
	if (s->counts == NULL)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		size_t a = 0, z = n;
		int64_t v = s->entries[i].value;

		while (z - a > 1) {
			size_t mid = (a + z) / 2;

			if (e[mid] <= v)
				a = mid;
			else
				z = mid;
		}
		s->counts[a]++;
	}
	return 0;
}

/* The member whose name is at name_off of the projection's pool: members
 * are appended with their names, so name offsets ascend with the index
 * (a binary search; an empty name shares its offset with the next). */
static size_t member_at(const cnt_proj *p, uint64_t name_off, uint32_t name_len)
{
	size_t lo = 0, hi = p->nm;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->m[mid].name_off < name_off)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo + 1 < p->nm && p->m[lo].name_len != name_len && p->m[lo + 1].name_off == name_off)
		lo++;
	return lo;
}

/* Each ranked entry's error bound (count/estimate.h), while the entries
 * still name the members by their offsets in p->pool.  0 or -1 (out of
 * memory). */
static int scope_errors(cnt_proj *p, pscope *sc)
{
	int unique = ctype(p) == CNT_CTYPE_UNIQUE;

	sc->errors = malloc((sc->n + 1) * sizeof(int64_t));
	if (sc->errors == NULL || aux_grow(p) != 0)
		return -1;
	for (size_t i = 0; i < sc->n; i++) {
		const cnt_view_entry *e = &sc->entries[i];
		size_t mi = member_at(p, e->name_off, e->name_len);
		int64_t x;

		if (unique)
			x = cnt_estimate_unique_error(e->value > 0 ? (uint64_t)e->value : 0,
				p->prec[mi] ? p->prec[mi] : CNT_ESTIMATE_P_DEFAULT);
		else if (cnt_estimate_approx_error(p->var[mi], &x) != 0)
			x = -1;   /* unknown: a negative variance (view.h) */
		sc->errors[i] = x;
	}
	return 0;
}

/* The sort key of member m of p->m: its value in the board's order, then
 * its achiever time in the tie-break's direction (0 without one). */
static void key_of(cnt_proj *p, int achiever, size_t i, skey *k)
{
	const pmember *m = &p->m[i];
	uint64_t v = (uint64_t)value_of(p, m) ^ (UINT64_C(1) << 63);
	uint64_t t = (uint64_t)m->last ^ (UINT64_C(1) << 63);

	k->k1 = p->b->order_asc ? v : ~v;
	k->k2 = achiever > 0 ? t : achiever < 0 ? ~t : 0;
	k->idx = (uint32_t)i;
}

/* The entry of key k (its value is in the key: value_of runs once). */
static void entry_of(const cnt_proj *p, const skey *k, cnt_view_entry *e)
{
	const pmember *m = &p->m[k->idx];

	e->value = (int64_t)((p->b->order_asc ? k->k1 : ~k->k1) ^ (UINT64_C(1) << 63));
	e->last_event_time = m->last;
	e->name_off = m->name_off;
	e->name_len = m->name_len;
	e->rank = 0;
}

int cnt_proj_finish(cnt_proj *p, cnt_err *err)
{
	const cnt_leaderboard *b = p->b;
	size_t *fill = calloc(p->ns + 1, sizeof(size_t));
	skey **keys = calloc(p->ns + 1, sizeof(skey *));
	int achiever = 0;

	if (fill == NULL || keys == NULL)
		goto oom;
	for (size_t t = 0; t < b->ntie_break; t++)
		if (b->tie_break[t] == CNT_TIE_EARLIEST_ACHIEVER)
			achiever = 1;
		else if (b->tie_break[t] == CNT_TIE_LATEST_ACHIEVER)
			achiever = -1;
	/* Each scope's sort keys straight from the members, which are read
	 * once more only for the ranked entries: ten million members are
	 * 640 MB.  A global board's keys are at most the members; a scoped
	 * board's are counted first. */
	if (b->scope_kind == CNT_SCOPE_GLOBAL)
		fill[0] = p->nm;
	for (size_t i = 0; b->scope_kind != CNT_SCOPE_GLOBAL && i < p->nm; i++) {
		const pmember *m = &p->m[i];

		if (!SEEN(m))
			continue;
		if (m->scope)
			fill[m->scope - 1]++;
		else
			p->st.unscoped++;
	}
	for (size_t s = 0; s < p->ns; s++) {
		if ((keys[s] = malloc((fill[s] + 1) * sizeof(skey))) == NULL)
			goto oom;
		cnt_mem_huge(keys[s], (fill[s] + 1) * sizeof(skey));
	}
	for (size_t i = 0; i < p->nm; i++) {
		const pmember *m = &p->m[i];
		size_t s = b->scope_kind == CNT_SCOPE_GLOBAL ? 0 : m->scope ? m->scope - 1 : SIZE_MAX;

		if (!SEEN(m) || s == SIZE_MAX)
			continue;
		key_of(p, achiever, i, &keys[s][p->scopes[s].n++]);
		p->st.members++;
	}
	for (size_t s = 0; s < p->ns; s++) {
		pscope *sc = &p->scopes[s];
		cnt_view_entry *sorted;
		skey *k = keys[s];

		if (sc->n > 1) {
			skey *spare, *in_order = radix(k, sc->n, &spare);

			free(spare);
			if (in_order == NULL)
				goto oom;
			keys[s] = k = in_order;
		}
		if ((sorted = malloc((sc->n + 1) * sizeof(*sorted))) == NULL)
			goto oom;
		cnt_mem_huge(sorted, (sc->n + 1) * sizeof(*sorted));
		sc->entries = sorted;
		for (size_t i = 0; i < sc->n; i++) {
			if (i + 16 < sc->n)
				__builtin_prefetch(&p->m[k[i + 16].idx]);
			entry_of(p, &k[i], &sorted[i]);
		}
		/* Runs of equal keys are settled by the full comparison (the
		 * member_ref rule); they are short but for mass ties. */
		for (size_t i = 0; i < sc->n;) {
			size_t j = i + 1;

			while (j < sc->n && k[j].k1 == k[i].k1 && k[j].k2 == k[i].k2)
				j++;
			if (j - i > 1)
				qsort_r(sorted + i, j - i, sizeof(*sorted), cmp_entries, p);
			i = j;
		}
		free(k);
		keys[s] = NULL;
		/* Numbering. */
		for (size_t i = 0; i < sc->n; i++) {
			if (b->rank_numbering == CNT_RANK_ORDINAL || i == 0)
				sorted[i].rank = (uint32_t)i + 1;
			else if (cnt_proj_tied(b, &sorted[i - 1], &sorted[i]))
				sorted[i].rank = sorted[i - 1].rank;
			else if (b->rank_numbering == CNT_RANK_DENSE)
				sorted[i].rank = sorted[i - 1].rank + 1;
			else
				sorted[i].rank = (uint32_t)i + 1;
		}
		if (cnt_estimate_is(ctype(p)) && scope_errors(p, sc) != 0)
			goto oom;
		/* The scope's own names, in rank order: the view's bytes then
		 * depend on the ranking alone, not on the order in which
		 * members were first seen (input order, other scopes). */
		for (size_t i = 0; i < sc->n; i++) {
			uint64_t off = sc->pool.len;

			if (i + 16 < sc->n)
				__builtin_prefetch(p->pool.p + sorted[i + 16].name_off);
			if (cnt_buf_append(&sc->pool, p->pool.p + sorted[i].name_off, sorted[i].name_len) != 0)
				goto oom;
			sorted[i].name_off = off;
		}
		if (histogram(b, sc) != 0)
			goto oom;
	}
	free(fill);
	free(keys);
	return 0;
oom:
	for (size_t s = 0; keys != NULL && s < p->ns; s++)
		free(keys[s]);
	free(fill);
	free(keys);
	return cnt_err_oom(err, "ranking %zu members", p->nm);
}

size_t cnt_proj_nscopes(const cnt_proj *p)
{
	return p->ns;
}

const char *cnt_proj_scope(const cnt_proj *p, size_t i)
{
	return p->scopes[i].key;
}

int cnt_proj_view(cnt_proj *p, size_t i, cnt_view_build *out, cnt_err *err)
{
	const pscope *s = &p->scopes[i];

	(void)err;
	memset(out, 0, sizeof(*out));
	out->n = s->n;
	out->head = p->b->materialised_cap > 0 && (size_t)p->b->materialised_cap < s->n ? (size_t)p->b->materialised_cap : s->n;
	out->entries = s->entries;
	out->pool = (const char *)s->pool.p;
	out->pool_len = s->pool.len;
	out->nbins = s->nbins;
	out->edges = s->edges;
	out->counts = s->counts;
	out->errors = s->errors;
	if (s->errors != NULL && ctype(p) == CNT_CTYPE_UNIQUE)
		out->precision = p->precision ? p->precision : CNT_ESTIMATE_P_DEFAULT;
	return 0;
}

const cnt_fp_set *cnt_proj_versions(const cnt_proj *p)
{
	return p->versions;
}

const cnt_proj_stats *cnt_proj_get_stats(const cnt_proj *p)
{
	return &p->st;
}
