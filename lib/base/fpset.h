/*
 * fpset.h - a set of 128-bit fingerprints, each with a 64-bit value.
 *
 * Open addressing with linear probing over a power-of-two table kept at
 * most 1/2 full (or the fill given to cnt_fpset_init_load()): 24 bytes a
 * slot, so 48 bytes per remembered key at the worst load and 24 at the
 * best.  A fingerprint is XXH3-128 of the key's
 * bytes; two distinct keys collide with probability about n^2 / 2^129,
 * which for 10^9 keys is below 10^-20.  The all-zero fingerprint marks an
 * empty slot, so a key hashing to it is stored as (0, 1) instead.
 */
#ifndef CNT_FPSET_H
#define CNT_FPSET_H

#include <stddef.h>
#include <stdint.h>

#include "base/table.h"

typedef struct cnt_fp {
	uint64_t hi, lo;
} cnt_fp;

typedef struct cnt_fpset_slot {
	uint64_t hi, lo, val;
} cnt_fpset_slot;

typedef struct cnt_fpset {
	cnt_fpset_slot *slots;
	size_t mask;          /* capacity - 1 */
	size_t count;
	unsigned load_pct;    /* the fill, in percent, beyond which it grows */
} cnt_fpset;

/* Hashes the concatenation of n parts, each followed by a 0 byte so that
 * ("ab","c") and ("a","bc") differ. */
cnt_fp cnt_fp_of(size_t n, const void *const *parts, const size_t *lens);
/* The same of parts already joined so (each followed by its 0 byte):
 * cnt_fp_of_joined(p, n) == cnt_fp_of(...) of the parts p holds. */
cnt_fp cnt_fp_of_joined(const void *p, size_t n);

/* Initialises an empty set.  Returns 0 or -1 (out of memory). */
int cnt_fpset_init(cnt_fpset *s, size_t expected);
/* The same, kept at most load_pct percent full (1 to 90) instead of 50:
 * less memory to touch for a large set, longer probes.  The set's
 * contents and answers do not depend on it. */
int cnt_fpset_init_load(cnt_fpset *s, size_t expected, unsigned load_pct);
void cnt_fpset_release(cnt_fpset *s);

/* Inserts fp with val unless present.  Returns 1 when inserted, 0 when it
 * was already there (*old set to its value), -1 when out of memory. */
int cnt_fpset_add(cnt_fpset *s, cnt_fp fp, uint64_t val, uint64_t *old);

/* Starts fetching fp's slot into the cache, so that a lookup made a little
 * later does not wait for memory. */
static inline void cnt_fpset_prefetch(const cnt_fpset *s, cnt_fp fp)
{
	const cnt_fpset_slot *sl = &s->slots[fp.lo & s->mask];

	/* and the next line: a 24-byte slot may end there, and a key that is
	 * absent (the common case) is looked for in the slots after it up
	 * to an empty one (3.6 slots on average at 60 % full).  That line
	 * may be past the table's end: a prefetch never faults, and the
	 * address is made as an integer so that no pointer points there. */
	__builtin_prefetch(sl);
	__builtin_prefetch((const void *)((uintptr_t)sl + 64));
}

/* Looks fp up.  Returns 1 with *val set when present, 0 when absent. */
int cnt_fpset_find(const cnt_fpset *s, cnt_fp fp, uint64_t *val);

#endif
