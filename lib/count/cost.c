/*
 * cost.c - the cost of traffic per counter version (see cost.h).
 */
#include "count/cost.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "base/text.h"

struct cnt_cost {
	const cnt_defs *d;
	size_t *first;        /* per counter: its first row */
	size_t nrows;
	cnt_cost_row *rows;   /* per counter version, in defs order */
	size_t *order;        /* rows sorted by tenant, counter, version */
};

static int by_name(const void *x, const void *y, void *ctx)
{
	const cnt_cost_row *rows = ctx, *a = &rows[*(const size_t *)x], *b = &rows[*(const size_t *)y];
	int d = strcmp(a->counter->tenant_id, b->counter->tenant_id);

	if (d == 0)
		d = strcmp(a->counter->counter_id, b->counter->counter_id);
	return d ? d : (a->version->version > b->version->version) -
		       (a->version->version < b->version->version);
}

cnt_cost *cnt_cost_new(const cnt_defs *d, cnt_err *err)
{
	cnt_cost *c = calloc(1, sizeof(*c));
	size_t nc = cnt_defs_ncounters(d), k = 0;

	if (c == NULL || (c->first = calloc(nc + 1, sizeof(size_t))) == NULL)
		goto oom;
	c->d = d;
	for (size_t i = 0; i < nc; i++) {
		c->first[i] = c->nrows;
		c->nrows += cnt_defs_counter_at(d, i)->nversions;
	}
	if ((c->rows = calloc(c->nrows + 1, sizeof(*c->rows))) == NULL ||
	    (c->order = calloc(c->nrows + 1, sizeof(size_t))) == NULL)
		goto oom;
	for (size_t i = 0; i < nc; i++) {
		const cnt_counter *ct = cnt_defs_counter_at(d, i);

		for (size_t j = 0; j < ct->nversions; j++, k++) {
			c->rows[k].counter = ct;
			c->rows[k].version = &ct->versions[j];
			c->order[k] = k;
		}
	}
	qsort_r(c->order, c->nrows, sizeof(size_t), by_name, c->rows);
	return c;
oom:
	cnt_cost_free(c);
	cnt_err_nomem(err);
	return NULL;
}

void cnt_cost_free(cnt_cost *c)
{
	if (c == NULL)
		return;
	free(c->first);
	free(c->rows);
	free(c->order);
	free(c);
}

#define SHOW(s) CNT_CUT(s, 64)   /* a name from the input, cut whole */

int cnt_cost_weight(const cnt_event *e, uint64_t *w, char *why, size_t n)
{
	*w = 1;
	for (size_t i = 0; i < e->nattrs; i++) {
		cnt_slice k = e->attr_keys[i], v = e->attr_vals[i];
		unsigned l = 0;

		if (k.n != 10 || memcmp(k.p, "cnt.sample", 10) != 0)
			continue;
		/* 1 to 20: one or two digits, no leading zero. */
		if (v.n >= 1 && v.n <= 2 && v.p[0] >= '1' && v.p[0] <= '9' &&
		    (v.n == 1 || (v.p[1] >= '0' && v.p[1] <= '9')))
			l = v.n == 1 ? (unsigned)(v.p[0] - '0')
				     : (unsigned)(v.p[0] - '0') * 10 + (unsigned)(v.p[1] - '0');
		if (l < 1 || l > 20) {
			snprintf(why, n, "attrs 'cnt.sample' '%.*s%s' is not a sampling level (1 to 20)",
				 SHOW(v));
			return 0;
		}
		*w = (uint64_t)1 << l;
	}
	return 1;
}

int cnt_cost_add(cnt_cost *c, const cnt_event *e, const char **reason, char *why, size_t n)
{
	const cnt_counter *ct = cnt_defs_counter(c->d, e->tenant_id.p, e->tenant_id.n,
						 e->counter_id.p, e->counter_id.n);
	cnt_cost_row *r;
	uint64_t w;
	size_t j;

	if (ct == NULL) {
		*reason = "unknown_counter";
		snprintf(why, n, "counter '%.*s%s/%.*s%s' is not declared", SHOW(e->tenant_id),
			 SHOW(e->counter_id));
		return 1;
	}
	for (j = 0; j < ct->nversions && ct->versions[j].version != e->counter_version; j++)
		;
	if (j == ct->nversions) {
		*reason = "unknown_counter";
		snprintf(why, n, "counter '%s/%s' has no version %" PRId32, ct->tenant_id,
			 ct->counter_id, e->counter_version);
		return 1;
	}
	r = &c->rows[c->first[cnt_defs_counter_index(c->d, ct)] + j];
	if (e->retracts.p != NULL) {
		r->compensations++;
		return 0;
	}
	if (!cnt_cost_weight(e, &w, why, n)) {
		*reason = "bad_sample";
		return 1;
	}
	r->archived++;
	r->represented += w;
	return 0;
}

int cnt_cost_read_fd(cnt_cost *c, int fd, const char *name,
	void (*rej)(void *ctx, const char *name, uint64_t record, const char *reason, const char *msg),
	void *ctx, uint64_t *rejected, cnt_err *err)
{
	cnt_limits lim = cnt_limits_default();
	cnt_event_in *in = cnt_event_in_open(fd, name, &lim, err);
	uint64_t k = 0;
	cnt_event e;
	int got;

	if (in == NULL)
		return -1;
	while ((got = cnt_event_in_next(in, &e, err)) > 0) {
		const char *reason;
		char why[320];

		k++;
		if (cnt_cost_add(c, &e, &reason, why, sizeof(why)) != 0) {
			(*rejected)++;
			if (rej != NULL)
				rej(ctx, name, k, reason, why);
		}
	}
	cnt_event_in_free(in);
	return got < 0 ? -1 : 0;
}

/* Fills the costs of r from its counts. */
static void price(const cnt_cost *c, cnt_cost_row *r)
{
	double m = (double)r->represented / 1e6;

	r->cost = m * r->version->unit_cost_per_m;
	for (int t = 0; t < cnt_defs_ntypes() && t < CNT_COST_TYPES; t++) {
		double p;

		r->priced[t] = cnt_defs_unit_cost(c->d, (cnt_counter_type)t, &p);
		r->at[t] = m * p;
	}
}

size_t cnt_cost_each(const cnt_cost *c, const char *tenant,
	void (*fn)(void *ctx, const cnt_cost_row *r), void *ctx)
{
	size_t k = 0;

	for (size_t i = 0; i < c->nrows; i++) {
		cnt_cost_row r = c->rows[c->order[i]];

		if ((r.archived == 0 && r.compensations == 0) ||
		    (tenant != NULL && strcmp(tenant, r.counter->tenant_id) != 0))
			continue;
		price(c, &r);
		fn(ctx, &r);
		k++;
	}
	return k;
}

void cnt_cost_total(const cnt_cost *c, const char *tenant, cnt_cost_row *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (size_t i = 0; i < c->nrows; i++) {
		cnt_cost_row r = c->rows[c->order[i]];

		if (tenant != NULL && strcmp(tenant, r.counter->tenant_id) != 0)
			continue;
		price(c, &r);
		sum->archived += r.archived;
		sum->represented += r.represented;
		sum->compensations += r.compensations;
		sum->cost += r.cost;
	}
}
