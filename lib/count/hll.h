/*
 * hll.h - HyperLogLog++ distinct counts (Heule, Nunkesser, Hall 2013) at the
 * one precision cnt uses, p = 14; the format and its invariants are
 * described at the top of hll.c.
 *
 * A sketch is an embedded struct: cnt_hll_init() it, feed it hashes, merge
 * others into it, estimate, serialize; cnt_hll_release() frees it.  The
 * struct is 32 bytes.  An empty sketch holds no heap memory; a sparse one
 * 4 bytes per distinct 25-bit index (at most 3072) after cnt_hll_compact(),
 * and before it up to twice that plus 512 bytes (growth slack and up to 128
 * pending adds); a dense one 16 KiB.  Two sketches of the same set of
 * hashes serialize to the same bytes whatever the order of adds and merges
 * that built them.
 */
#ifndef CNT_HLL_H
#define CNT_HLL_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

#define CNT_HLL_P 14                       /* dense precision */
#define CNT_HLL_M (1u << CNT_HLL_P)        /* 16384 registers */
#define CNT_HLL_SP 25                      /* sparse precision p' */
#define CNT_HLL_SPARSE_MAX 3072            /* distinct sparse entries, at most */
#define CNT_HLL_TAIL_MAX 128               /* unsorted adds before a sort */

#define CNT_HLL_VERSION 1
#define CNT_HLL_SPARSE 1                   /* encoding byte values */
#define CNT_HLL_DENSE 2
#define CNT_HLL_HEADER 3                   /* version, encoding, precision */
#define CNT_HLL_DENSE_BYTES (CNT_HLL_HEADER + CNT_HLL_M * 6 / 8) /* 12291 */

typedef struct cnt_hll {
	/* Sparse: [0, nsorted) sorted with one entry per index, [nsorted, n)
	 * an unsorted tail of recent adds.  NULL while empty or dense. */
	uint32_t *sparse;
	uint8_t *regs;      /* dense: CNT_HLL_M registers, one byte each */
	uint32_t n, nsorted, cap;
} cnt_hll;

/* The 64-bit hash of an item's bytes (XXH3_64bits, unseeded). */
uint64_t cnt_hll_hash(const void *p, size_t n);

/* Makes h an empty (sparse) sketch; allocates nothing. */
void cnt_hll_init(cnt_hll *h);
/* Frees what h holds; h is empty and reusable afterwards. */
void cnt_hll_release(cnt_hll *h);

/* Adds one hashed item.  Returns 0, or -1 when out of memory (h then still
 * holds everything added before). */
int cnt_hll_add_hash(cnt_hll *h, uint64_t hash);
/* cnt_hll_add_hash(h, cnt_hll_hash(p, n)). */
int cnt_hll_add(cnt_hll *h, const void *p, size_t n);

/* dst becomes the union of dst and src (src unchanged; dst == src is
 * allowed).  Commutative, associative and idempotent, down to the bytes of
 * the serialization.  Returns 0, or -1 when out of memory (dst unchanged). */
int cnt_hll_merge(cnt_hll *dst, const cnt_hll *src);
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
 * or encoding, another precision, out-of-range or unsorted entries, an
 * overlong varint, a sparse list past the limit) returns -1 with err set and
 * h empty.  Allocates at most 16 KiB whatever the input.  On success the
 * caller releases h. */
int cnt_hll_deserialize(cnt_hll *h, const uint8_t *p, size_t n, cnt_err *err);

#endif
