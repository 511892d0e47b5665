/*
 * fpset.c - fingerprint set (see fpset.h).
 */
#include "base/fpset.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

cnt_fp cnt_fp_of(size_t n, const void *const *parts, const size_t *lens)
{
	unsigned char small[1024];
	size_t total = 0;
	XXH128_hash_t h;
	cnt_fp fp;

	for (size_t i = 0; i < n; i++)
		total += lens[i] + 1;
	if (total <= sizeof(small)) {
		/* The common case: one-shot hashing of a stack copy is several
		 * times faster than the streaming state for short keys. */
		size_t o = 0;

		for (size_t i = 0; i < n; i++) {
			if (lens[i])
				memcpy(small + o, parts[i], lens[i]);
			o += lens[i];
			small[o++] = 0;
		}
		h = XXH3_128bits(small, o);
	} else {
		XXH3_state_t st;
		static const char zero = 0;

		XXH3_128bits_reset(&st);
		for (size_t i = 0; i < n; i++) {
			XXH3_128bits_update(&st, parts[i], lens[i]);
			XXH3_128bits_update(&st, &zero, 1);
		}
		h = XXH3_128bits_digest(&st);
	}
	fp.hi = h.high64;
	fp.lo = h.low64;
	if (fp.hi == 0 && fp.lo == 0)
		fp.lo = 1;
	return fp;
}

cnt_fp cnt_fp_of_joined(const void *p, size_t n)
{
	XXH128_hash_t h = XXH3_128bits(p, n);
	cnt_fp fp;

	fp.hi = h.high64;
	fp.lo = h.low64;
	if (fp.hi == 0 && fp.lo == 0)
		fp.lo = 1;
	return fp;
}

static cnt_fpset_slot *slots_new(size_t cap)
{
	return cnt_table_alloc(cap * sizeof(cnt_fpset_slot));
}

static void slots_free(cnt_fpset_slot *p, size_t cap)
{
	cnt_table_free(p, cap * sizeof(cnt_fpset_slot));
}

int cnt_fpset_init_load(cnt_fpset *s, size_t expected, unsigned load_pct)
{
	size_t cap = 1024;

	if (load_pct < 1 || load_pct > 90)
		load_pct = 50;
	while (cap / 100 * load_pct + cap % 100 * load_pct / 100 < expected)
		cap *= 2;
	s->slots = slots_new(cap);
	s->mask = cap - 1;
	s->count = 0;
	s->load_pct = load_pct;
	return s->slots ? 0 : -1;
}

int cnt_fpset_init(cnt_fpset *s, size_t expected)
{
	return cnt_fpset_init_load(s, expected, 50);
}

void cnt_fpset_release(cnt_fpset *s)
{
	slots_free(s->slots, s->mask + 1);
	s->slots = NULL;
	s->mask = 0;
	s->count = 0;
}

static uint64_t slot_hash(const void *slot, void *ctx)
{
	(void)ctx;
	return ((const cnt_fpset_slot *)slot)->lo;
}

/* Doubled in place (base/table.h): only the new half is fresh memory. */
static int grow(cnt_fpset *s)
{
	cnt_fpset_slot *n = cnt_table_double(s->slots, s->mask + 1, sizeof(*n), slot_hash, NULL);

	if (n == NULL)
		return -1;
	s->slots = n;
	s->mask = s->mask * 2 + 1;
	return 0;
}

int cnt_fpset_add(cnt_fpset *s, cnt_fp fp, uint64_t val, uint64_t *old)
{
	size_t i;

	if (s->count + 1 > (s->mask + 1) / 100 * s->load_pct + (s->mask + 1) % 100 * s->load_pct / 100 &&
	    grow(s) != 0)
		return -1;
	for (i = fp.lo & s->mask;; i = (i + 1) & s->mask) {
		cnt_fpset_slot *sl = &s->slots[i];

		if (sl->hi == fp.hi && sl->lo == fp.lo) {
			if (old)
				*old = sl->val;
			return 0;
		}
		if ((sl->hi | sl->lo) == 0) {
			sl->hi = fp.hi;
			sl->lo = fp.lo;
			sl->val = val;
			s->count++;
			return 1;
		}
	}
}

int cnt_fpset_find(const cnt_fpset *s, cnt_fp fp, uint64_t *val)
{
	for (size_t i = fp.lo & s->mask;; i = (i + 1) & s->mask) {
		const cnt_fpset_slot *sl = &s->slots[i];

		if (sl->hi == fp.hi && sl->lo == fp.lo) {
			if (val)
				*val = sl->val;
			return 1;
		}
		if ((sl->hi | sl->lo) == 0)
			return 0;
	}
}
