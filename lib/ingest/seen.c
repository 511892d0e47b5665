/*
 * seen.c - the admission's duplicate table (see seen.h).
 */
#include "ingest/seen.h"

#include "base/table.h"

#define VAL_BITS 40
#define VAL_MASK ((UINT64_C(1) << VAL_BITS) - 1)

static size_t limit(size_t cap, unsigned pct)
{
	return cap / 100 * pct + cap % 100 * pct / 100;
}

int cnt_seen_init(cnt_seen *s, size_t expected, unsigned load_pct)
{
	size_t cap = 1024;

	if (load_pct < 1 || load_pct > 90)
		load_pct = 50;
	/* more than a table of 2^64 bytes could hold: out of memory, never a
	 * wrapped size (cap * 2 and cap * 16 stay in range below this) */
	if (expected > SIZE_MAX / 64) {
		s->slots = NULL;
		s->mask = 0;
		s->count = 0;
		return -1;
	}
	while (limit(cap, load_pct) < expected)
		cap *= 2;
	s->slots = cnt_table_alloc(cap * sizeof(cnt_seen_slot));
	/* sized from the input up front: all of it is used at once */
	cnt_table_fault_in(s->slots, cap * sizeof(cnt_seen_slot));
	s->mask = cap - 1;
	s->count = 0;
	s->load_pct = load_pct;
	return s->slots ? 0 : -1;
}

void cnt_seen_release(cnt_seen *s)
{
	if (s->slots)
		cnt_table_free(s->slots, (s->mask + 1) * sizeof(cnt_seen_slot));
	s->slots = NULL;
	s->mask = 0;
	s->count = 0;
}

static uint64_t slot_hash(const void *slot, void *ctx)
{
	(void)ctx;
	return ((const cnt_seen_slot *)slot)->hi;
}

/* Doubled in place (base/table.h): only the new half is fresh memory. */
static int grow(cnt_seen *s)
{
	cnt_seen_slot *n = cnt_table_double(s->slots, s->mask + 1, sizeof(*n), slot_hash, NULL);

	if (n == NULL)
		return -1;
	s->slots = n;
	s->mask = s->mask * 2 + 1;
	return 0;
}

static inline uint64_t top(cnt_fp fp)
{
	return fp.lo & ~VAL_MASK;
}

int cnt_seen_add(cnt_seen *s, cnt_fp fp, uint64_t val, uint64_t *old)
{
	uint64_t t = top(fp);

	if (s->count + 1 > limit(s->mask + 1, s->load_pct) && grow(s) != 0)
		return -1;
	for (size_t i = fp.hi & s->mask;; i = (i + 1) & s->mask) {
		cnt_seen_slot *sl = &s->slots[i];

		if (sl->rest == 0) {
			sl->hi = fp.hi;
			sl->rest = t | ((val + 1) & VAL_MASK);
			s->count++;
			return 1;
		}
		if (sl->hi == fp.hi && (sl->rest & ~VAL_MASK) == t) {
			if (old)
				*old = (sl->rest & VAL_MASK) - 1;
			return 0;
		}
	}
}

int cnt_seen_find(const cnt_seen *s, cnt_fp fp, uint64_t *val)
{
	uint64_t t = top(fp);

	for (size_t i = fp.hi & s->mask;; i = (i + 1) & s->mask) {
		const cnt_seen_slot *sl = &s->slots[i];

		if (sl->rest == 0)
			return 0;
		if (sl->hi == fp.hi && (sl->rest & ~VAL_MASK) == t) {
			if (val)
				*val = (sl->rest & VAL_MASK) - 1;
			return 1;
		}
	}
}
