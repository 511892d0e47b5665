/*
 * sample.c - deterministic sampling of approximate counters (see sample.h).
 */
#include "ingest/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "base/fpset.h"
#include "ingest/admit.h"
#include "time/tz.h"

int64_t cnt_sample_k(double eps)
{
	double k = ceil(1.96 * 1.96 * 0.375 / (eps * eps));

	return k < 1 ? 1 : (int64_t)k;
}

int cnt_sample_level(uint64_t i, int64_t k)
{
	uint64_t q = i / (uint64_t)(k < 1 ? 1 : k);   /* L = floor(log2(q + 1)) */

	if (q >= ((uint64_t)2 << CNT_SAMPLE_LEVEL_MAX) - 1)
		return CNT_SAMPLE_LEVEL_MAX;
	return 63 - __builtin_clzll(q + 1);
}

uint64_t cnt_sample_hash(const cnt_event *e, int dedup_key)
{
	char buf[2 * CNT_REF_MAX + 1];
	size_t in = e->item.p ? e->item.n : 0, mn = e->member_ref.n;

	if (dedup_key != CNT_DEDUP_ITEM_MEMBER)
		return XXH3_64bits(e->idempotency_key.p, e->idempotency_key.n);
	if (in > CNT_REF_MAX)
		in = CNT_REF_MAX;   /* admission refuses longer ones */
	if (mn > CNT_REF_MAX)
		mn = CNT_REF_MAX;
	if (in)
		memcpy(buf, e->item.p, in);
	buf[in] = 0;
	memcpy(buf + in + 1, e->member_ref.p, mn);
	return XXH3_64bits(buf, in + 1 + mn);
}

/* Counts per key: open addressing over fingerprints, at most half full. */
typedef struct slot {
	cnt_fp fp;
	uint64_t n;
} slot;

struct cnt_sampler {
	const cnt_defs *defs;
	slot *slots;
	size_t mask, count;
	uint64_t *out_by_counter, out;
	cnt_tz_cache *zones;
	cnt_tz_cursor *cursor;       /* per tenant */
	unsigned char *cursor_ok;
	cnt_slice keys[CNT_ATTRS_MAX + 1], vals[CNT_ATTRS_MAX + 1];
	char level[4];
};

cnt_sampler *cnt_sampler_new(const cnt_defs *defs, cnt_err *err)
{
	cnt_sampler *s = calloc(1, sizeof(*s));
	size_t nt = cnt_defs_ntenants(defs);

	if (s == NULL || (s->slots = calloc(1024, sizeof(slot))) == NULL ||
	    (s->out_by_counter = calloc(cnt_defs_ncounters(defs) + 1, sizeof(uint64_t))) == NULL ||
	    (s->zones = cnt_tz_cache_new()) == NULL ||
	    (s->cursor = calloc(nt + 1, sizeof(cnt_tz_cursor))) == NULL ||
	    (s->cursor_ok = calloc(nt + 1, 1)) == NULL) {
		cnt_sampler_free(s);
		cnt_err_nomem(err);
		return NULL;
	}
	s->defs = defs;
	s->mask = 1023;
	return s;
}

void cnt_sampler_free(cnt_sampler *s)
{
	if (s == NULL)
		return;
	free(s->slots);
	free(s->out_by_counter);
	cnt_tz_cache_free(s->zones);
	free(s->cursor);
	free(s->cursor_ok);
	free(s);
}

static int grow(cnt_sampler *s)
{
	size_t cap = (s->mask + 1) * 2;
	slot *ns = calloc(cap, sizeof(slot));

	if (ns == NULL)
		return -1;
	for (size_t i = 0; i <= s->mask; i++) {
		size_t j;

		if (s->slots[i].n == 0)
			continue;
		for (j = s->slots[i].fp.lo & (cap - 1); ns[j].n != 0; j = (j + 1) & (cap - 1))
			;
		ns[j] = s->slots[i];
	}
	free(s->slots);
	s->slots = ns;
	s->mask = cap - 1;
	return 0;
}

/* The number of events of key fp offered before this one, counting this
 * one in; UINT64_MAX when out of memory. */
static uint64_t offered(cnt_sampler *s, cnt_fp fp)
{
	size_t j;

	if (2 * (s->count + 1) > s->mask + 1 && grow(s) != 0)
		return UINT64_MAX;
	for (j = fp.lo & s->mask; s->slots[j].n != 0; j = (j + 1) & s->mask)
		if (s->slots[j].fp.hi == fp.hi && s->slots[j].fp.lo == fp.lo)
			return s->slots[j].n++;
	s->slots[j].fp = fp;
	s->slots[j].n = 1;
	s->count++;
	return 0;
}

int cnt_sampler_decide(cnt_sampler *s, const cnt_counter *c, const cnt_counter_version *cv,
	cnt_event *e, cnt_err *err)
{
	size_t ti;
	int64_t hour;
	uint64_t i;
	int l;

	if (cv->type != CNT_CTYPE_APPROX)
		return 1;
	ti = (size_t)(c->tenant - cnt_defs_tenant_at(s->defs, 0));
	if (!s->cursor_ok[ti]) {
		const cnt_tz *tz = cnt_tz_cache_get(s->zones, c->tenant->timezone, err);

		if (tz == NULL)
			return cnt_err_prefix(err, "tenant '%s'", c->tenant->tenant_id);
		cnt_tz_cursor_init(&s->cursor[ti], tz);
		s->cursor_ok[ti] = 1;
	}
	hour = cnt_tz_cursor_bucket_start(&s->cursor[ti], e->event_time);
	{
		const void *parts[4] = {c->tenant_id, c->counter_id, e->member_ref.p, &hour};
		size_t lens[4] = {strlen(c->tenant_id), strlen(c->counter_id), e->member_ref.n, sizeof(hour)};

		i = offered(s, cnt_fp_of(4, parts, lens));
	}
	if (i == UINT64_MAX)
		return cnt_err_nomem(err);
	l = cnt_sample_level(i, cnt_sample_k(cv->tolerated_error));
	if (l == 0)
		return 1;
	if ((cnt_sample_hash(e, cv->dedup_key) & ((UINT64_C(1) << l) - 1)) != 0) {
		s->out++;
		s->out_by_counter[cnt_defs_counter_index(s->defs, c)]++;
		return 0;
	}
	/* admission has checked there are at most CNT_ATTRS_MAX */
	if (e->nattrs > 0) {
		memcpy(s->keys, e->attr_keys, e->nattrs * sizeof(cnt_slice));
		memcpy(s->vals, e->attr_vals, e->nattrs * sizeof(cnt_slice));
	}
	snprintf(s->level, sizeof(s->level), "%d", l);
	s->keys[e->nattrs].p = CNT_SAMPLE_ATTR;
	s->keys[e->nattrs].n = sizeof(CNT_SAMPLE_ATTR) - 1;
	s->vals[e->nattrs].p = s->level;
	s->vals[e->nattrs].n = strlen(s->level);
	e->attr_keys = s->keys;
	e->attr_vals = s->vals;
	e->nattrs++;
	return 1;
}

uint64_t cnt_sampler_counter_out(const cnt_sampler *s, const cnt_counter *c)
{
	return s->out_by_counter[cnt_defs_counter_index(s->defs, c)];
}

uint64_t cnt_sampler_out(const cnt_sampler *s)
{
	return s->out;
}
