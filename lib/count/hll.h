/*
 * hll.h - HyperLogLog++ distinct counts (Heule, Nunkesser, Hall 2013) at a
 * precision p in 4..18 (m = 2^p dense registers; 14 unless a counter
 * version's tolerated_error asks otherwise); the format and its invariants
 * are described at the top of hll.c.
 *
 * A sketch is an embedded struct: cnt_hll_init() (p = 14) or
 * cnt_hll_init_p() it, feed it hashes, merge others into it, estimate,
 * serialize; cnt_hll_release() frees it.  The struct is 32 bytes; a zeroed
 * struct is an empty sketch at p = 14.  An empty sketch holds no heap
 * memory; a sparse one 4 bytes per distinct 25-bit index (at most
 * cnt_hll_sparse_max(p) = 3 * 2^(p-4): 3072 at p = 14) after
 * cnt_hll_compact(), and before it up to twice that plus 512 bytes (growth
 * slack and up to 128 pending adds); a dense one 2^p bytes (16 KiB at
 * p = 14).  Two sketches of the same set of hashes at the same precision
 * serialize to the same bytes whatever the order of adds and merges that
 * built them.  A union of sketches of different precisions is at the
 * lower one (fold to the lower, as HLL++ and DataSketches do): the higher
 * one is folded first, which is exact - the folded sketch is the one the
 * same hashes give when added at the lower precision - so the union's bytes
 * still depend only on the set of hashes and the lowest precision met.
 */
#ifndef CNT_HLL_H
#define CNT_HLL_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

#define CNT_HLL_P 14                       /* default dense precision */
#define CNT_HLL_P_MIN 4
#define CNT_HLL_P_MAX 18
#define CNT_HLL_M (1u << CNT_HLL_P)        /* 16384 registers at p = 14 */
#define CNT_HLL_SP 25                      /* sparse precision p' */
#define CNT_HLL_SPARSE_MAX 3072            /* sparse entries at most, p = 14 */
#define CNT_HLL_TAIL_MAX 128               /* unsorted adds before a sort */

#define CNT_HLL_VERSION 1
#define CNT_HLL_SPARSE 1                   /* encoding byte values */
#define CNT_HLL_DENSE 2
#define CNT_HLL_HEADER 3                   /* version, encoding, precision */
#define CNT_HLL_DENSE_BYTES (CNT_HLL_HEADER + CNT_HLL_M * 6 / 8) /* 12291, p = 14 */

typedef struct cnt_hll {
	/* Sparse: [0, nsorted) sorted with one entry per index, [nsorted, n)
	 * an unsorted tail of recent adds.  NULL while empty or dense. */
	uint32_t *sparse;
	uint8_t *regs;      /* dense: 2^p registers, one byte each */
	uint32_t n, nsorted, cap;
	uint8_t p;          /* precision; 0 means CNT_HLL_P (14) */
} cnt_hll;

/* The 64-bit hash of an item's bytes (XXH3_64bits, unseeded). */
uint64_t cnt_hll_hash(const void *p, size_t n);

/* Makes h an empty (sparse) sketch at p = 14; allocates nothing. */
void cnt_hll_init(cnt_hll *h);
/* Makes h an empty sketch at precision p (4..18; anything else means 14). */
void cnt_hll_init_p(cnt_hll *h, int p);
/* Frees what h holds; h is empty, at the same precision, and reusable
 * afterwards. */
void cnt_hll_release(cnt_hll *h);

/* The precision of h (4..18). */
int cnt_hll_precision(const cnt_hll *h);
/* The sparse limit at precision p: 3 * 2^(p-4) distinct keys. */
uint32_t cnt_hll_sparse_max(int p);
/* Bytes of a dense serialization at precision p: 3 + 2^p * 6 / 8. */
size_t cnt_hll_dense_bytes(int p);
/* The relative error at 95 % of precision p: 1.96 * 1.04 / sqrt(2^p). */
double cnt_hll_error95(int p);
/* The smallest precision p >= 4 with cnt_hll_error95(p) <= tolerated_error
 * (may be above 18: the caller refuses such a declaration). */
int cnt_hll_precision_for(double tolerated_error);
/* Folds h down to precision q (q < its precision; otherwise nothing
 * happens): dense register i goes to i >> (p - q) with its rank raised by
 * the leading zeros of the p - q index bits moved out (by their count plus
 * the old rank when they are all zero); a sparse entry keeps its 25-bit key.
 * Exact: the result is the sketch the same hashes give at q.  Returns 0 or
 * -1 (out of memory; h unchanged). */
int cnt_hll_fold(cnt_hll *h, int q);

/* Adds one hashed item.  Returns 0, or -1 when out of memory (h then still
 * holds everything added before). */
int cnt_hll_add_hash(cnt_hll *h, uint64_t hash);
/* Asks the cache for the memory that cnt_hll_add_hash(h, hash) will
 * change (adding many items to many sketches, with the sketches
 * themselves fetched first). */
static inline void cnt_hll_prefetch(const cnt_hll *h, uint64_t hash)
{
	int p = h->p ? h->p : CNT_HLL_P;

	if (h->regs)
		__builtin_prefetch(&h->regs[hash >> (64 - p)]);
	else if (h->sparse)
		__builtin_prefetch(&h->sparse[h->n]);
}
/* cnt_hll_add_hash(h, cnt_hll_hash(p, n)). */
int cnt_hll_add(cnt_hll *h, const void *p, size_t n);

/* Sketches of one or two items, held by the caller.  A table of millions
 * of groups has a sketch in most, and most of them hold one or two
 * distinct items: a caller can keep those as their sparse entries (one
 * 32-bit word each, never 0) and make a cnt_hll only for a third.  An
 * entry depends on the hash and the precision alone; two entries of one
 * key (cnt_hll_entry_key) are one, the larger word. */
uint32_t cnt_hll_entry(uint64_t hash, int p);
static inline uint32_t cnt_hll_entry_key(uint32_t e)
{
	return e >> 7;
}
/* Adds an entry made by cnt_hll_entry at h's precision: h is then what
 * cnt_hll_add_hash of that hash makes it.  0, or -1 (out of memory). */
int cnt_hll_add_entry(cnt_hll *h, uint32_t e);
/* Makes h a sketch at precision p of the n (1 or 2) entries at e, of
 * distinct keys, in any order, held in buf: what adding their items makes,
 * to serialize, estimate or merge from.  It must not be changed, released
 * or used once buf is gone.  0, or -1 (n or the keys not as said). */
int cnt_hll_entries_view(cnt_hll *h, uint32_t buf[2], const uint32_t *e, size_t n, int p);

/* dst becomes the union of dst and src (src unchanged; dst == src is
 * allowed), at the lower of their two precisions (the higher one folded
 * first).  Commutative, associative and idempotent, down to the bytes of
 * the serialization.  Returns 0, or -1 when out of memory (dst then holds
 * what it held, possibly folded to src's lower precision). */
int cnt_hll_merge(cnt_hll *dst, const cnt_hll *src);
/* The same into a sketch of the heap: *hp is made (at src's precision)
 * when NULL, so a sketch takes the precision of the first it merges and
 * a later one of another precision folds the union to the lower
 * (cnt-bucket(5)).  0, or -1 when out of memory. */
int cnt_hll_merge_into(cnt_hll **hp, const cnt_hll *src);
/* Frees h (of the heap, as cnt_hll_merge_into makes it) and what it
 * holds; NULL is a no-op. */
void cnt_hll_free(cnt_hll *h);
/* dst (initialised or not; not released) becomes a copy of src.  Returns 0
 * or -1 (out of memory; dst then empty). */
int cnt_hll_copy(cnt_hll *dst, const cnt_hll *src);

/* The estimated number of distinct items: linear counting at p' = 25 while
 * sparse (exact in practice below a few hundred), then HLL++ with empirical
 * bias correction and linear counting below its threshold. */
uint64_t cnt_hll_estimate(const cnt_hll *h);

/* 1 when a and b hold the same canonical state (equal serializations),
 * else 0. */
int cnt_hll_equal(const cnt_hll *a, const cnt_hll *b);
/* 1 while h is in the sparse encoding (an empty sketch is sparse). */
int cnt_hll_is_sparse(const cnt_hll *h);

/* Sorts the pending adds and gives back unused capacity, for a sketch that
 * will be kept a while (millions of them in a group table).  Returns 0 or
 * -1 (out of memory; h unchanged and still valid). */
int cnt_hll_compact(cnt_hll *h);
/* Heap bytes h holds now (for memory accounting; excludes the struct). */
size_t cnt_hll_heap_bytes(const cnt_hll *h);

/* Appends the canonical serialization (layout in hll.c) to out.  Returns 0
 * or -1 (out of memory; out may hold a partial append - truncate it back). */
int cnt_hll_serialize(const cnt_hll *h, cnt_buf *out);
/* Initialises h from the n bytes at p, which must be exactly one canonical
 * serialization: anything else (truncated, trailing bytes, unknown version
 * or encoding, a precision outside 4..18, out-of-range or unsorted entries,
 * an overlong varint, a sparse list past the limit) returns -1 with err set
 * and h empty (p = 14).  h takes the precision of the bytes.  Allocates at
 * most 2^p bytes (16 KiB at p = 14, 256 KiB at 18) whatever the input.  On
 * success the caller releases h. */
int cnt_hll_deserialize(cnt_hll *h, const uint8_t *p, size_t n, cnt_err *err);

#endif
