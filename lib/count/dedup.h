/*
 * dedup.h - remembered idempotency keys over a declared horizon (cnt-dedup).
 *
 * A key is a 96-bit fingerprint: XXH3-128 of (tenant_id, counter_id, the
 * dedup key's parts), keeping the low 64 bits and 32 more of the high
 * half.  Two distinct keys collide with probability about n^2 / 2^97:
 * for 10^9 remembered keys, below 10^-11.  Beside it the slot keeps the
 * second (epoch seconds, as an unsigned 32-bit count, good until 2106) at
 * which the key stops being remembered: the first occurrence's ingest
 * time plus its counter's dedup horizon.
 *
 * So one slot is 16 bytes.  The table is open addressing with linear
 * probing, grown to keep at most 3/4 of its slots used and presized from
 * the expected key count, so memory is 16 to 32 bytes per remembered key
 * (21 at the usual load).  A key's home slot is the top bits of its lo
 * half, so the table in slot order is nearly sorted: saving finishes the
 * order by insertion, in linear time.  Lookups are batched: cnt_dedup_prefetch() for a
 * batch, then cnt_dedup_check() for each, so cache misses overlap.
 *
 * The state file (cnt-dedup(1), STATE FILE):
 *   bytes 0..7    "CNTDDUP1"
 *   bytes 8..15   clock: the largest ingest second seen (little-endian u64)
 *   bytes 16..23  n: the number of keys (u64)
 *   then n slots of 16 bytes, sorted by fingerprint (lo, then hi32):
 *                 fp_lo u64, fp_hi32 u32, expire_s u32 (little-endian)
 *   then an 8-byte XXH64 of everything before it.
 * Keys whose expiry is not after the clock are dropped when saving, so
 * the file holds only what the horizon still needs: its size is bounded by
 * the keys seen within one horizon, not by history.
 */
#ifndef CNT_DEDUP_H
#define CNT_DEDUP_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

typedef struct cnt_dkey {
	uint64_t lo;
	uint32_t hi;
} cnt_dkey;

typedef struct cnt_dslot {
	uint64_t lo;
	uint32_t hi;
	uint32_t expire_s;
} cnt_dslot;

typedef struct cnt_dedup {
	cnt_dslot *slots;
	size_t mask;
	size_t count;
	uint64_t clock_s;   /* largest ingest second seen */
} cnt_dedup;

/* Fingerprints n key parts (each followed by a NUL byte). */
cnt_dkey cnt_dedup_key(size_t n, const void *const *parts, const size_t *lens);

/* Makes an empty table for about `expected` keys.  0 or -1 (no memory,
 * or an expected count no table could hold). */
int cnt_dedup_init(cnt_dedup *d, size_t expected);
void cnt_dedup_release(cnt_dedup *d);

/* Loads a state file into d (initialised with room for `extra` more keys
 * beyond the file's).  A missing file is an empty state when missing_ok,
 * and so is a NULL path.  The state is read and then rewritten in place,
 * so it is a regular file: "" and "-", anything that is not a regular file
 * (not opened, so a FIFO is not waited for) and a link under /dev (such as
 * /dev/stdout) are refused.  Returns
 * 0, or -1 with err naming the file and the problem. */
int cnt_dedup_load(cnt_dedup *d, const char *path, size_t extra, int missing_ok, cnt_err *err);

/* The same from the size bytes of a state file at p (name for messages):
 * every count and offset is checked against size before use, so a
 * corrupt or hostile file is an error, never a large allocation or a read
 * out of bounds.  d needs no initialising; on failure it holds nothing. */
int cnt_dedup_load_mem(cnt_dedup *d, const uint8_t *p, size_t size, const char *name, size_t extra, cnt_err *err);

/* Writes the state (keys not yet expired at the clock) to fd, sorted.
 * Returns 0 or -1 with err set.  *kept is the number of keys written. */
int cnt_dedup_save(cnt_dedup *d, int fd, const char *name, size_t *kept, cnt_err *err);

/* The home slot of a key in a table of mask + 1 (a power of two, at
 * least 2) slots: the top bits of lo, so that slot order is nearly key
 * order and the state is saved without a full sort. */
static inline size_t cnt_dedup_home(uint64_t lo, size_t mask)
{
	return (size_t)(lo >> (64 - __builtin_ctzll((unsigned long long)mask + 1)));
}

static inline void cnt_dedup_prefetch(const cnt_dedup *d, cnt_dkey k)
{
	__builtin_prefetch(&d->slots[cnt_dedup_home(k.lo, d->mask)]);
}

/* Judges a key seen at ingest second t with a horizon of h seconds:
 * returns 1 when it is a duplicate (remembered and not expired at t),
 * 0 when it is new or its memory had expired (it is then remembered until
 * t + h), -1 when out of memory. */
int cnt_dedup_check(cnt_dedup *d, cnt_dkey k, uint64_t t, uint64_t h);

#endif
