/*
 * partition.c - routing events to parts (see partition.h).
 */
#include "count/partition.h"
#include "count/shardmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

struct cnt_partition {
	const cnt_defs *defs;
	uint32_t n;
	cnt_writer *const *parts;
	const cnt_shardmap *map;
	uint64_t *count;
	cnt_partition_totals totals;
};

int cnt_partition_by_member(const cnt_counter_version *cv, const cnt_event *e)
{
	if (cv == NULL)
		return 1;
	return cv->dedup_key == CNT_DEDUP_ITEM_MEMBER && e->item.p != NULL && e->retracts.p == NULL;
}

static void feed(XXH3_state_t *st, cnt_slice s)
{
	static const char nul = 0;

	if (s.n > 0)
		XXH3_64bits_update(st, s.p, s.n);
	XXH3_64bits_update(st, &nul, 1);
}

/* The route shard of e under map (0: none, route by three strings). */
static uint32_t route_shards(const cnt_shardmap *map, const cnt_event *e)
{
	return map ? cnt_shardmap_shards(map, e->tenant_id, e->counter_id, e->member_ref) : 1;
}

uint32_t cnt_partition_of_mapped(const cnt_counter_version *cv, const cnt_event *e, uint32_t n,
	const cnt_shardmap *map)
{
	XXH3_state_t st;
	int by_member = cnt_partition_by_member(cv, e);
	uint32_t k;

	if (n <= 1)
		return 0;
	XXH3_64bits_reset(&st);
	feed(&st, e->tenant_id);
	feed(&st, e->counter_id);
	feed(&st, by_member ? e->member_ref : e->idempotency_key);
	/* an event routed by member has an item (cnt_partition_by_member) */
	if (by_member && e->item.p != NULL && (k = route_shards(map, e)) > 1) {
		char d[16];
		int dn = snprintf(d, sizeof(d), "%u", (unsigned)(XXH3_64bits(e->item.p, e->item.n) % k));
		cnt_slice s = {d, (size_t)dn};

		feed(&st, s);
	}
	return (uint32_t)(XXH3_64bits_digest(&st) % n);
}

uint32_t cnt_partition_of(const cnt_counter_version *cv, const cnt_event *e, uint32_t n)
{
	return cnt_partition_of_mapped(cv, e, n, NULL);
}

void cnt_partition_set_map(cnt_partition *p, const cnt_shardmap *m)
{
	p->map = m;
}

cnt_partition *cnt_partition_new(const cnt_defs *defs, uint32_t n, cnt_writer *const *parts, cnt_err *err)
{
	cnt_partition *p;

	if (n < 1 || n > CNT_PARTITION_MAX) {
		cnt_err_set(err, "parts: %u is not from 1 to %u", n, CNT_PARTITION_MAX);
		return NULL;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL || (p->count = calloc(n, sizeof(*p->count))) == NULL) {
		free(p);
		cnt_err_nomem(err);
		return NULL;
	}
	p->defs = defs;
	p->n = n;
	p->parts = parts;
	return p;
}

void cnt_partition_free(cnt_partition *p)
{
	if (p == NULL)
		return;
	free(p->count);
	free(p);
}

int cnt_partition_stage(void *ctx, const cnt_event *e, const uint8_t *raw, size_t rawn,
	cnt_count_reject *rej, cnt_err *err)
{
	cnt_partition *p = ctx;
	const cnt_counter_version *cv = NULL;
	cnt_count_target t;
	cnt_writer *w;
	uint32_t i;
	int rc;

	p->totals.in++;
	if (cnt_count_lookup(p->defs, "", e, &t, rej) == 0)
		cv = t.version;
	else
		p->totals.undeclared++;
	if (cnt_partition_by_member(cv, e)) {
		p->totals.by_member++;
		if (e->item.p != NULL && route_shards(p->map, e) > 1)
			p->totals.by_shard++;
	} else {
		p->totals.by_key++;
	}
	i = cnt_partition_of_mapped(cv, e, p->n, p->map);
	w = p->parts[i];
	rc = raw ? cnt_buf_append(cnt_writer_buf(w), raw, rawn) : cnt_event_encode(e, cnt_writer_buf(w));
	if (rc != 0)
		return cnt_err_oom(err, "writing an event");
	if (cnt_writer_commit(w, err) != 0)
		return -1;
	p->count[i]++;
	p->totals.out++;
	return 0;
}

int cnt_partition_finish(cnt_partition *p, cnt_err *err)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < p->n; i++)
		sum += p->count[i];
	if (p->totals.in != p->totals.out || sum != p->totals.out)
		return cnt_err_set(err, "internal: records do not balance: in %llu, out %llu, in the parts %llu",
			(unsigned long long)p->totals.in, (unsigned long long)p->totals.out, (unsigned long long)sum);
	for (uint32_t i = 0; i < p->n; i++)
		if (cnt_writer_finish(p->parts[i], err) != 0)
			return -1;
	return 0;
}

const cnt_partition_totals *cnt_partition_get_totals(const cnt_partition *p)
{
	return &p->totals;
}

uint64_t cnt_partition_part_count(const cnt_partition *p, uint32_t i)
{
	return i < p->n ? p->count[i] : 0;
}
