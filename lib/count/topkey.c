/*
 * topkey.c - Misra-Gries frequent items over (tenant, counter, member)
 * keys (topkey.h).  Slots hold a key and its count; an open-addressing
 * index of twice the slots (a power of two) finds a key's slot and is
 * rebuilt after every decrement round, which compacts the slots.  A
 * slot's key buffer is kept when the slot is emptied and reused.
 */
#include "count/topkey.h"

#include <stdlib.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

typedef struct slot {
	uint64_t hash, count;
	char *key;            /* tenant, counter, member bytes */
	size_t cap;
	size_t tl, cl, ml;
} slot;

struct cnt_topkey {
	slot *slots;
	size_t k, used;
	uint32_t *index;      /* slot + 1; 0 empty */
	size_t mask;
	uint64_t n;
	int exact;
};

cnt_topkey *cnt_topkey_new(size_t k, cnt_err *err)
{
	cnt_topkey *t;
	size_t m = 2;

	if (k < 1 || k > (1u << 20)) {
		cnt_err_set(err, "top-key counters: %zu is out of range [1, 1048576]", k);
		return NULL;
	}
	while (m < 2 * k)
		m <<= 1;
	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (t->slots = calloc(k, sizeof(slot))) == NULL ||
	    (t->index = calloc(m, sizeof(uint32_t))) == NULL) {
		cnt_topkey_free(t);
		cnt_err_nomem(err);
		return NULL;
	}
	t->k = k;
	t->mask = m - 1;
	t->exact = 1;
	return t;
}

void cnt_topkey_free(cnt_topkey *t)
{
	if (t == NULL)
		return;
	if (t->slots)
		for (size_t i = 0; i < t->k; i++)
			free(t->slots[i].key);
	free(t->slots);
	free(t->index);
	free(t);
}

static uint64_t key_hash(cnt_slice a, cnt_slice b, cnt_slice c)
{
	XXH3_state_t st;
	uint64_t lens[3] = {a.n, b.n, c.n};

	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, lens, sizeof(lens));
	XXH3_64bits_update(&st, a.p ? a.p : "", a.n);
	XXH3_64bits_update(&st, b.p ? b.p : "", b.n);
	XXH3_64bits_update(&st, c.p ? c.p : "", c.n);
	return XXH3_64bits_digest(&st);
}

static int same(const slot *s, uint64_t h, cnt_slice a, cnt_slice b, cnt_slice c)
{
	return s->hash == h && s->tl == a.n && s->cl == b.n && s->ml == c.n &&
	       (a.n == 0 || memcmp(s->key, a.p, a.n) == 0) &&
	       (b.n == 0 || memcmp(s->key + a.n, b.p, b.n) == 0) &&
	       (c.n == 0 || memcmp(s->key + a.n + b.n, c.p, c.n) == 0);
}

static void index_put(cnt_topkey *t, uint64_t h, size_t si)
{
	size_t i = (size_t)h & t->mask;

	while (t->index[i] != 0)
		i = (i + 1) & t->mask;
	t->index[i] = (uint32_t)(si + 1);
}

/* Every count down by one; emptied slots go to the end (their buffers
 * kept), the index is rebuilt. */
static void decrement(cnt_topkey *t)
{
	size_t j = 0;

	for (size_t i = 0; i < t->used; i++) {
		if (--t->slots[i].count == 0)
			continue;
		if (i != j) {
			slot tmp = t->slots[j];

			t->slots[j] = t->slots[i];
			t->slots[i] = tmp;
		}
		j++;
	}
	t->used = j;
	memset(t->index, 0, (t->mask + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < t->used; i++)
		index_put(t, t->slots[i].hash, i);
	t->exact = 0;
}

int cnt_topkey_add(cnt_topkey *t, cnt_slice tenant, cnt_slice counter, cnt_slice member, cnt_err *err)
{
	uint64_t h = key_hash(tenant, counter, member);
	size_t i = (size_t)h & t->mask, need = tenant.n + counter.n + member.n;
	slot *s;

	for (; t->index[i] != 0; i = (i + 1) & t->mask) {
		s = &t->slots[t->index[i] - 1];
		if (same(s, h, tenant, counter, member)) {
			s->count++;
			t->n++;
			return 0;
		}
	}
	if (t->used == t->k) {
		/* the new key's one event and one of every counter cancel out */
		t->n++;
		decrement(t);
		return 0;
	}
	s = &t->slots[t->used];
	if (s->cap < need || s->key == NULL) {
		char *p = realloc(s->key, need ? need : 1);

		if (p == NULL)
			return cnt_err_nomem(err);
		s->key = p;
		s->cap = need ? need : 1;
	}
	if (tenant.n)
		memcpy(s->key, tenant.p, tenant.n);
	if (counter.n)
		memcpy(s->key + tenant.n, counter.p, counter.n);
	if (member.n)
		memcpy(s->key + tenant.n + counter.n, member.p, member.n);
	s->hash = h;
	s->count = 1;
	s->tl = tenant.n;
	s->cl = counter.n;
	s->ml = member.n;
	t->index[i] = (uint32_t)(t->used + 1);
	t->used++;
	t->n++;
	return 0;
}

void cnt_topkey_get(const cnt_topkey *t, cnt_topkey_top *out)
{
	const slot *best = NULL;

	memset(out, 0, sizeof(*out));
	out->n = t->n;
	out->exact = t->exact;
	for (size_t i = 0; i < t->used; i++)
		if (best == NULL || t->slots[i].count > best->count)
			best = &t->slots[i];
	out->tenant.p = out->counter.p = out->member.p = "";
	if (best == NULL)
		return;
	out->count = best->count;
	out->tenant.p = best->key;
	out->tenant.n = best->tl;
	out->counter.p = best->key + best->tl;
	out->counter.n = best->cl;
	out->member.p = best->key + best->tl + best->cl;
	out->member.n = best->ml;
}

static int slice_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int c = n ? memcmp(a, b, n) : 0;

	return c ? c : (an > bn) - (an < bn);
}

/* hotter first, then tenant, counter, member in byte order */
static int hotter(const slot *a, const slot *b)
{
	int c;

	if (a->count != b->count)
		return a->count > b->count;
	if ((c = slice_cmp(a->key, a->tl, b->key, b->tl)) != 0)
		return c < 0;
	if ((c = slice_cmp(a->key + a->tl, a->cl, b->key + b->tl, b->cl)) != 0)
		return c < 0;
	return slice_cmp(a->key + a->tl + a->cl, a->ml, b->key + b->tl + b->cl, b->ml) < 0;
}

size_t cnt_topkey_list(const cnt_topkey *t, cnt_topkey_top *out, size_t max)
{
	size_t r = 0;

	if (max > CNT_TOPKEY_SLOTS)
		max = CNT_TOPKEY_SLOTS;
	/* insertion into a sorted list of at most max entries: O(used * max) */
	const slot *best[CNT_TOPKEY_SLOTS];

	for (size_t i = 0; i < t->used && max > 0; i++) {
		const slot *s = &t->slots[i];
		size_t j;

		if (r == max && !hotter(s, best[r - 1]))
			continue;
		j = r < max ? r++ : r - 1;
		while (j > 0 && hotter(s, best[j - 1])) {
			best[j] = best[j - 1];
			j--;
		}
		best[j] = s;
	}
	for (size_t i = 0; i < r; i++) {
		const slot *b = best[i];

		out[i].n = t->n;
		out[i].exact = t->exact;
		out[i].count = b->count;
		out[i].tenant.p = b->key;
		out[i].tenant.n = b->tl;
		out[i].counter.p = b->key + b->tl;
		out[i].counter.n = b->cl;
		out[i].member.p = b->key + b->tl + b->cl;
		out[i].member.n = b->ml;
	}
	return r;
}
