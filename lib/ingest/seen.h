/*
 * seen.h - the admission's duplicate table: the idempotency keys accepted
 * so far in a run, each with a 40-bit value (where its first copy was).
 *
 * It is the run's one large random-access table, so a slot is 16 bytes, a
 * quarter of a cache line, where base/fpset.h's is 24: a third less fresh
 * memory to fault in (10 M keys: 256 MiB, not 384), and a slot never
 * straddles two lines.  A slot keeps the fingerprint's 64 high bits and
 * the 24 top bits of its low half, so two distinct keys are taken for one
 * with probability about n^2 / 2^89 in a run of n keys: 2 * 10^-13 for
 * 10^7 keys, 2 * 10^-9 for 10^9.  The other 40 bits hold the value plus
 * one, so that no used slot is all zero (the mark of an empty one).
 *
 * Open addressing with linear probing from the high half's low bits, over
 * a power-of-two table kept at most load_pct percent full.
 */
#ifndef CNT_SEEN_H
#define CNT_SEEN_H

#include <stddef.h>
#include <stdint.h>

#include "base/fpset.h"

/* The largest value a key can carry. */
#define CNT_SEEN_VAL_MAX ((UINT64_C(1) << 40) - 2)

typedef struct cnt_seen_slot {
	uint64_t hi;
	uint64_t rest;        /* the low half's top 24 bits, then value + 1 */
} cnt_seen_slot;

typedef struct cnt_seen {
	cnt_seen_slot *slots;
	size_t mask;          /* capacity - 1 */
	size_t count;
	unsigned load_pct;
} cnt_seen;

/* An empty table for about expected keys, at most load_pct (1 to 90,
 * else 50) percent full before it doubles, its memory faulted in at
 * once (cnt_table_fault_in).  0, or -1 when out of memory. */
int cnt_seen_init(cnt_seen *s, size_t expected, unsigned load_pct);
void cnt_seen_release(cnt_seen *s);

/* Inserts fp with val (at most CNT_SEEN_VAL_MAX) unless present.  Returns
 * 1 when inserted, 0 when it was there (*old set to its value), -1 when
 * out of memory. */
int cnt_seen_add(cnt_seen *s, cnt_fp fp, uint64_t val, uint64_t *old);
/* 1 with *val set when fp is there, else 0. */
int cnt_seen_find(const cnt_seen *s, cnt_fp fp, uint64_t *val);

/* The value of position pos of a sequence whose position 0 is base:
 * base + pos into *val and 0, or -1 when that is past CNT_SEEN_VAL_MAX
 * (base itself may be past it: the sequence before used the last value). */
static inline int cnt_seen_val_at(uint64_t base, uint64_t pos, uint64_t *val)
{
	if (base > CNT_SEEN_VAL_MAX || pos > CNT_SEEN_VAL_MAX - base)
		return -1;
	*val = base + pos;
	return 0;
}

/* Starts fetching fp's slot, and the line after it (a key that is absent,
 * the common case, is looked for up to the next empty slot: 8.5 slots on
 * average at 75 % full), so that a lookup a little later does not wait.
 * The next line may be past the table's end: a prefetch never faults, and
 * the address is made as an integer so that no pointer points there. */
static inline void cnt_seen_prefetch(const cnt_seen *s, cnt_fp fp)
{
	const cnt_seen_slot *sl = &s->slots[fp.hi & s->mask];

	__builtin_prefetch(sl);
	__builtin_prefetch((const void *)((uintptr_t)sl + 64));
}

#endif
