/*
 * hll.c - HyperLogLog++ sketches for distinct counts.
 *
 * Reference
 * ---------
 * S. Heule, M. Nunkesser, A. Hall, "HyperLogLog in Practice: Algorithmic
 * Engineering of a State of The Art Cardinality Estimation Algorithm",
 * EDBT 2013.  What is taken from it: a 64-bit hash (no large-range
 * correction needed), the empirical bias correction for raw estimates up to
 * 5m with k = 6 nearest neighbours (section 5.2, tables for p = 4..18 in
 * hll_bias.h), linear counting below the appendix's threshold for p (11500
 * for p = 14, its Figure 6), and the sparse representation at precision
 * p' = 25 (section 5.3) with its encoding of a hash as one 32-bit word.
 *
 * Precision
 * ---------
 * A sketch has a precision p in 4..18 (m = 2^p registers, standard error
 * 1.04 / sqrt(m), 1.96 times that at 95 %).  A unique counter version that
 * declares tolerated_error gets the smallest p meeting it (cnt-definitions
 * (5)); every other one gets the default, p = 14, and everything below
 * about the layout is written for it: at p, read p for 14, 25 - p for the
 * 11 low key bits, 65 - p for the register limit 51, 2^p for 16384, and
 * cnt_hll_sparse_max(p) = 3 * 2^(p-4) for the sparse limit 3072.
 *
 * Sketches of different precisions merge at the lower one (fold to the
 * lower; HLL++ section 5.3 and DataSketches' HLL union do the same).
 * Folding p to q < p is exact: dense register i goes to i >> (p - q), its
 * rank raised to 1 + the leading zeros of the d = p - q index bits moved
 * out (b = i mod 2^d) when b != 0, or to d + rank when b = 0 (the moved-out
 * bits were all zero and lead the bits the old rank counted); a sparse
 * entry keeps its 25-bit key and drops its rho' unless its low 25 - q bits
 * are zero.  So a folded sketch is, byte for byte, the sketch the same
 * hashes give when added at q, and a union's bytes depend only on the set
 * of hashes and the lowest precision among the inputs, whatever their order.
 *
 * The default, p = 14: m = 16384 registers, standard error
 * 1.04 / sqrt(m) = 0.81 %.  The counting spec asks for at most 2 % relative
 * error at p95 and 5 % at p99 after unions.  A union of sketches is exactly
 * the sketch of the union, so its error is that of one sketch: at p = 14,
 * p95 is about 1.96 * 0.81 = 1.6 % and p99 about 2.6 * 0.81 = 2.1 %.  At
 * p = 12 (1.625 %) p95 would be about 3.2 % - over the bound - and p99
 * about 4.2 %, too close to it.
 *
 * Hash and the two representations
 * ---------------------------------
 * An item is hashed with XXH3_64bits.  For a hash x (bit 63 first):
 *
 *   x = [ idx : 14 ][ low : 11 ][ rest : 39 ]
 *         \_______ key : 25 ______/
 *
 * Dense: register idx (the top 14 bits) holds the largest rho seen, where
 * rho = 1 + the number of leading zero bits in the 50 bits after idx
 * (51 when they are all zero).  Registers hold 1..51, 0 meaning untouched.
 * In memory a register is one byte (16 KiB; adds and merges are plain byte
 * stores and byte-wise max, no shifting and masking); serialized, six bits
 * (12 KiB).  The 25 % saved on disk matters because a bucket file holds one
 * sketch per (member, hour); the in-memory byte costs 4 KiB per dense
 * sketch, and dense sketches are the rare big ones.
 *
 * Sparse: a sorted list of 32-bit entries, one per distinct key (the top 25
 * bits).  As in the paper, rho is only kept where the dense conversion
 * needs it: when low != 0 the dense rho is determined by low itself
 * (1 + leading zeros of the 11-bit low), so the entry is just key << 7;
 * when low == 0 it is key << 7 | rho' << 1 | 1 with rho' = 1 + leading
 * zeros of the 39-bit rest (40 when zero), and the dense rho is 11 + rho'.
 * Two entries with the same key keep the larger word, which is the larger
 * rho'.  So the dense registers made from a sparse list are exactly those
 * that adding the same hashes to a dense sketch would give.  While sparse,
 * the estimate is linear counting over m' = 2^25 buckets, which is exact in
 * practice for small n (two of 300 distinct items share a key with
 * probability 300^2 / 2^26 = 0.13 %).
 *
 * Adds append to an unsorted tail (the paper's tmp_set); every
 * CNT_HLL_TAIL_MAX adds the tail is sorted and merged into the sorted
 * prefix in place.  Readers (estimate, serialize, equal, merge's source)
 * never change the sketch: they sort a stack copy of the tail and walk it
 * beside the prefix, so they always see the canonical list.
 *
 * Canonical form and the sparse limit
 * -----------------------------------
 * A sketch is sparse while its canonical list has at most CNT_HLL_SPARSE_MAX
 * (3072) distinct keys, and dense from the moment it would have more.  The
 * count of distinct keys can only grow under adds and unions, and is a
 * function of the set of hashes, so whether a sketch is sparse or dense - and
 * its bytes - depends only on the set of hashes it summarises, never on the
 * order of adds or the grouping of merges.  3072 entries take 12 KiB in
 * memory (less than the dense 16 KiB) and about 3 bytes each serialized
 * (about 9 KiB, less than the dense 12 KiB).
 *
 * Serialization (all of it canonical: equal sketches give equal bytes)
 * --------------------------------------------------------------------
 *   byte 0   version, 1
 *   byte 1   encoding: 1 sparse, 2 dense
 *   byte 2   precision p, 4..18 (14 by default: a precision-14 sketch has
 *            had these very bytes since the format began)
 *
 *   sparse:  varint count (0..3072), then count entries in increasing key
 *            order, each: varint (key - previous key - 1) - the first key
 *            itself - followed, only when the key's low 11 bits are zero,
 *            by one byte rho' (1..40).
 *   dense:   16384 registers of 6 bits (values 0..51) in one little-endian
 *            bit stream: register j is bits 6j..6j+5, bit 0 being the least
 *            significant bit of the first byte (Redis's dense layout).
 *            12288 bytes, 12291 with the header.
 *
 * A varint is unsigned LEB128: 7 bits a byte, least significant first, the
 * high bit set on every byte but the last; at most 5 bytes, and minimal
 * (no final 0x00 byte after the first).  The reader rejects anything not
 * exactly canonical: another version or encoding, a precision outside
 * 4..18, a count over
 * the limit or larger than the bytes could hold, a key at or past 2^25, a
 * rho' out of range, a dense register over 51, a dense sketch with fewer
 * than 2 non-zero registers (3073 keys span at least 2 registers; at p,
 * ceil((sparse_max + 1) / 2^(25-p))), or trailing bytes.  So deserialize-then-serialize gives back the same bytes,
 * and the allocation is bounded by the limit (16 KiB) whatever the input.
 * An empty sketch is 4 bytes: 01 01 0e 00.
 */
#include "count/hll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "count/hll_bias.h"

#define KEY_LIMIT (1u << CNT_HLL_SP)
#define RHO_SPARSE_MAX (64 - CNT_HLL_SP + 1)    /* 40 */
#define BIAS_K 6

/* The precision of h: 0 in the struct (a zeroed or cnt_hll_init'ed
 * sketch) means the default, 14. */
static inline int prec(const cnt_hll *h)
{
	return h->p ? h->p : CNT_HLL_P;
}

static inline uint32_t regs_of(int p)
{
	return 1u << p;
}

static inline uint32_t low_bits(int p)       /* 25 - p: 11 at p = 14 */
{
	return (uint32_t)(CNT_HLL_SP - p);
}

static inline uint32_t low_mask(int p)
{
	return (1u << low_bits(p)) - 1;
}

static inline uint32_t rho_dense_max(int p)  /* 51 at p = 14 */
{
	return (uint32_t)(64 - p + 1);
}

uint32_t cnt_hll_sparse_max(int p)
{
	return 3u << (p - 4);
}

size_t cnt_hll_dense_bytes(int p)
{
	return CNT_HLL_HEADER + (size_t)regs_of(p) * 6 / 8;
}

int cnt_hll_precision(const cnt_hll *h)
{
	return prec(h);
}

double cnt_hll_error95(int p)
{
	return 1.96 * 1.04 / sqrt((double)(UINT64_C(1) << p));
}

int cnt_hll_precision_for(double tolerated_error)
{
	int p = CNT_HLL_P_MIN;

	while (p < 62 && cnt_hll_error95(p) > tolerated_error)
		p++;
	return p;
}

uint64_t cnt_hll_hash(const void *p, size_t n)
{
	return XXH3_64bits(p, n);
}

static inline uint32_t entry_key(uint32_t e)
{
	return e >> 7;
}

static uint32_t entry_of(uint64_t x, int p)
{
	uint32_t key = (uint32_t)(x >> (64 - CNT_HLL_SP));
	uint64_t rest = x << CNT_HLL_SP;
	uint32_t rho;

	if (key & low_mask(p))
		return key << 7;
	rho = rest ? (uint32_t)__builtin_clzll(rest) + 1 : RHO_SPARSE_MAX;
	return key << 7 | rho << 1 | 1;
}

static void entry_to_dense(uint8_t *regs, uint32_t e, int p)
{
	uint32_t lb = low_bits(p), key = entry_key(e), low = key & low_mask(p);
	uint32_t idx = key >> lb;
	uint8_t rho;

	if (low)
		rho = (uint8_t)(__builtin_clz(low) - (32 - lb) + 1);
	else
		rho = (uint8_t)(lb + ((e >> 1) & 0x3f));
	if (regs[idx] < rho)
		regs[idx] = rho;
}

void cnt_hll_init(cnt_hll *h)
{
	memset(h, 0, sizeof *h);
}

void cnt_hll_init_p(cnt_hll *h, int p)
{
	memset(h, 0, sizeof *h);
	if (p >= CNT_HLL_P_MIN && p <= CNT_HLL_P_MAX && p != CNT_HLL_P)
		h->p = (uint8_t)p;
}

void cnt_hll_release(cnt_hll *h)
{
	uint8_t p = h->p;

	free(h->sparse);
	free(h->regs);
	cnt_hll_init(h);
	h->p = p;
}

void cnt_hll_free(cnt_hll *h)
{
	if (h == NULL)
		return;
	cnt_hll_release(h);
	free(h);
}

int cnt_hll_merge_into(cnt_hll **hp, const cnt_hll *src)
{
	if (*hp == NULL) {
		if ((*hp = malloc(sizeof(cnt_hll))) == NULL)
			return -1;
		cnt_hll_init_p(*hp, cnt_hll_precision(src));
	}
	return cnt_hll_merge(*hp, src);
}

int cnt_hll_is_sparse(const cnt_hll *h)
{
	return h->regs == NULL;
}

size_t cnt_hll_heap_bytes(const cnt_hll *h)
{
	return h->regs ? regs_of(prec(h)) : (size_t)h->cap * sizeof(uint32_t);
}

/* ---- sorting and walking sparse lists ---- */

/* Sorts v[0..n) and keeps one entry per key, the largest word.  Insertion
 * sort: n is at most CNT_HLL_TAIL_MAX and usually tiny. */
static uint32_t sort_unique(uint32_t *v, uint32_t n)
{
	uint32_t i, k = 0;

	for (i = 1; i < n; i++) {
		uint32_t x = v[i], j = i;

		while (j > 0 && v[j - 1] > x) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
	for (i = 0; i < n; i++) {
		if (k > 0 && entry_key(v[k - 1]) == entry_key(v[i]))
			v[k - 1] = v[i];   /* sorted: v[i] is the larger word */
		else
			v[k++] = v[i];
	}
	return k;
}

/* Merges the unsorted tail into the sorted prefix, in place; never
 * allocates, never fails.  Afterwards n == nsorted <= the old n. */
static void sort_in(cnt_hll *h)
{
	uint32_t t[CNT_HLL_TAIL_MAX];
	uint32_t *a = h->sparse;
	uint32_t nt = h->n - h->nsorted, i = h->nsorted, j, end, w;

	if (nt == 0)
		return;
	memcpy(t, a + h->nsorted, nt * sizeof *t);
	j = sort_unique(t, nt);
	end = w = h->nsorted + j;
	/* Backwards, largest key first: the write position never falls
	 * below the read position in the prefix. */
	while (j > 0) {
		if (i > 0 && entry_key(a[i - 1]) > entry_key(t[j - 1])) {
			a[--w] = a[--i];
		} else if (i > 0 && entry_key(a[i - 1]) == entry_key(t[j - 1])) {
			uint32_t x = a[i - 1] > t[j - 1] ? a[i - 1] : t[j - 1];

			i--;
			j--;
			a[--w] = x;
		} else {
			a[--w] = t[--j];
		}
	}
	/* a[0..i) is untouched and below everything in a[w..end). */
	if (w > i)
		memmove(a + i, a + w, (end - w) * sizeof *a);
	h->n = h->nsorted = i + (end - w);
}

typedef struct walk {
	const uint32_t *a, *b;
	uint32_t na, nb, i, j;
} walk;

/* Walks the canonical list of a sparse h: its prefix beside a sorted copy
 * of its tail kept in t (room for CNT_HLL_TAIL_MAX). */
static void walk_start(walk *w, const cnt_hll *h, uint32_t *t)
{
	uint32_t nt = h->n - h->nsorted;

	if (nt > 0)
		memcpy(t, h->sparse + h->nsorted, nt * sizeof *t);
	w->a = h->sparse;
	w->na = h->nsorted;
	w->b = t;
	w->nb = sort_unique(t, nt);
	w->i = w->j = 0;
}

static int walk_next(walk *w, uint32_t *e)
{
	if (w->i < w->na && w->j < w->nb) {
		uint32_t x = w->a[w->i], y = w->b[w->j];

		if (entry_key(x) < entry_key(y)) {
			w->i++;
			*e = x;
		} else if (entry_key(x) > entry_key(y)) {
			w->j++;
			*e = y;
		} else {
			w->i++;
			w->j++;
			*e = x > y ? x : y;
		}
		return 1;
	}
	if (w->i < w->na) {
		*e = w->a[w->i++];
		return 1;
	}
	if (w->j < w->nb) {
		*e = w->b[w->j++];
		return 1;
	}
	return 0;
}

static uint32_t canonical_count(const cnt_hll *h)
{
	uint32_t t[CNT_HLL_TAIL_MAX], e, c = 0;
	walk w;

	walk_start(&w, h, t);
	while (walk_next(&w, &e))
		c++;
	return c;
}

/* Replaces the sparse list of h by dense registers holding its entries and
 * the nextra entries at extra.  Returns 0, or -1 (out of memory; h unchanged). */
static int to_dense(cnt_hll *h, const uint32_t *extra, uint32_t nextra)
{
	int p = prec(h);
	uint8_t *regs = calloc(regs_of(p), 1);
	uint32_t i;

	if (regs == NULL)
		return -1;
	/* max is order-independent: the unsorted tail needs no sorting */
	for (i = 0; i < h->n; i++)
		entry_to_dense(regs, h->sparse[i], p);
	for (i = 0; i < nextra; i++)
		entry_to_dense(regs, extra[i], p);
	free(h->sparse);
	h->sparse = NULL;
	h->n = h->nsorted = h->cap = 0;
	h->regs = regs;
	return 0;
}

/* ---- adding ---- */

static int grow(cnt_hll *h)
{
	uint32_t cap = h->cap ? h->cap * 2 : 4, max = cnt_hll_sparse_max(prec(h));
	uint32_t *p;

	if (cap > max)
		cap = max;
	p = realloc(h->sparse, (size_t)cap * sizeof *p);
	if (p == NULL)
		return -1;
	h->sparse = p;
	h->cap = cap;
	return 0;
}

/* Adds the sparse entry e (entry_of at h's precision) to a sparse h. */
static int add_sparse(cnt_hll *h, uint32_t e)
{
	uint32_t max = cnt_hll_sparse_max(prec(h));

	if (h->n >= max) {
		sort_in(h);
		if (h->n >= max) {
			/* Full: either the key is there already, or this
			 * add makes the sketch dense. */
			uint32_t lo = 0, hi = h->n, k = entry_key(e);

			while (lo < hi) {
				uint32_t mid = lo + (hi - lo) / 2;

				if (entry_key(h->sparse[mid]) < k)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < h->n && entry_key(h->sparse[lo]) == k) {
				if (h->sparse[lo] < e)
					h->sparse[lo] = e;
				return 0;
			}
			return to_dense(h, &e, 1);
		}
	}
	if (h->n == h->cap && grow(h) != 0)
		return -1;
	h->sparse[h->n++] = e;
	if (h->n - h->nsorted >= CNT_HLL_TAIL_MAX)
		sort_in(h);
	return 0;
}

int cnt_hll_add_hash(cnt_hll *h, uint64_t x)
{
	int p = prec(h);

	if (h->regs) {
		uint32_t idx = (uint32_t)(x >> (64 - p));
		uint64_t rest = x << p;
		uint8_t rho = rest ? (uint8_t)(__builtin_clzll(rest) + 1) : (uint8_t)rho_dense_max(p);

		if (h->regs[idx] < rho)
			h->regs[idx] = rho;
		return 0;
	}
	return add_sparse(h, entry_of(x, p));
}

/* ---- entries held by the caller ---- */

static int valid_p(int p)
{
	return p >= CNT_HLL_P_MIN && p <= CNT_HLL_P_MAX ? p : CNT_HLL_P;
}

uint32_t cnt_hll_entry(uint64_t hash, int p)
{
	/* never 0: a key with a nonzero low part is nonzero, and an entry
	 * of the other keys has its low bit set */
	return entry_of(hash, valid_p(p));
}

int cnt_hll_add_entry(cnt_hll *h, uint32_t e)
{
	if (h->regs) {
		entry_to_dense(h->regs, e, prec(h));
		return 0;
	}
	return add_sparse(h, e);
}

int cnt_hll_entries_view(cnt_hll *h, uint32_t buf[2], const uint32_t *e, size_t n, int p)
{
	if (n == 0 || n > 2 || (n == 2 && entry_key(e[0]) == entry_key(e[1])))
		return -1;
	buf[0] = e[0];
	if (n == 2) {
		buf[0] = entry_key(e[0]) < entry_key(e[1]) ? e[0] : e[1];
		buf[1] = entry_key(e[0]) < entry_key(e[1]) ? e[1] : e[0];
	}
	/* sorted, and sparse: the sparse limit is 3 at the lowest precision */
	cnt_hll_init_p(h, valid_p(p));
	h->sparse = buf;
	h->n = h->nsorted = h->cap = (uint32_t)n;
	return 0;
}

int cnt_hll_add(cnt_hll *h, const void *p, size_t n)
{
	return cnt_hll_add_hash(h, cnt_hll_hash(p, n));
}

/* ---- merging ---- */

/* Merges the sorted unique a[0..na) with the walk b into out (room for
 * na plus b's length), one entry per key, the larger word.  Returns the
 * count written. */
static uint32_t merge_walk(uint32_t *out, const uint32_t *a, uint32_t na, walk *b)
{
	uint32_t i = 0, c = 0, y;
	int have_y = walk_next(b, &y);

	while (i < na || have_y) {
		if (i < na && (!have_y || entry_key(a[i]) < entry_key(y))) {
			out[c++] = a[i++];
		} else if (i == na || entry_key(y) < entry_key(a[i])) {
			out[c++] = y;
			have_y = walk_next(b, &y);
		} else {
			out[c++] = a[i] > y ? a[i] : y;
			i++;
			have_y = walk_next(b, &y);
		}
	}
	return c;
}

/* ---- folding to a lower precision ---- */

int cnt_hll_fold(cnt_hll *h, int q)
{
	int p = prec(h);
	uint32_t i, d, m;
	uint8_t *regs;

	if (q >= p || q < CNT_HLL_P_MIN)
		return 0;
	d = (uint32_t)(p - q);
	if (h->regs == NULL) {
		/* The 25-bit keys stay; an entry keeps its rho' only while
		 * its key's low 25 - q bits are zero. */
		sort_in(h);
		if (h->n > cnt_hll_sparse_max(q)) {
			/* to_dense at q reads an entry's rho' only where
			 * the key's low 25 - q bits are zero */
			uint8_t old = h->p;

			h->p = (uint8_t)(q == CNT_HLL_P ? 0 : q);
			if (to_dense(h, NULL, 0) != 0) {
				h->p = old;
				return -1;
			}
			return 0;
		}
		for (i = 0; i < h->n; i++)
			if (entry_key(h->sparse[i]) & low_mask(q))
				h->sparse[i] = entry_key(h->sparse[i]) << 7;
		h->p = (uint8_t)(q == CNT_HLL_P ? 0 : q);
		return 0;
	}
	regs = calloc(regs_of(q), 1);
	if (regs == NULL)
		return -1;
	m = regs_of(p);
	for (i = 0; i < m; i++) {
		uint32_t r = h->regs[i], b = i & ((1u << d) - 1);
		uint8_t rho;

		if (r == 0)
			continue;
		/* The d index bits that move out lead the bits rho counts. */
		if (b)
			rho = (uint8_t)(d - (32 - (uint32_t)__builtin_clz(b)) + 1);
		else
			rho = (uint8_t)(d + r);
		if (regs[i >> d] < rho)
			regs[i >> d] = rho;
	}
	free(h->regs);
	h->regs = regs;
	h->p = (uint8_t)(q == CNT_HLL_P ? 0 : q);
	return 0;
}

/* dst (precision p) becomes dst union src, src of precision p too. */
static int merge_same(cnt_hll *dst, const cnt_hll *src)
{
	int p = prec(dst);
	uint32_t t[CNT_HLL_TAIL_MAX], c, i, cap, m = regs_of(p);
	uint32_t *out;
	walk ws;

	if (src->regs) {
		if (dst->regs == NULL && to_dense(dst, NULL, 0) != 0)
			return -1;
		for (i = 0; i < m; i++)
			if (dst->regs[i] < src->regs[i])
				dst->regs[i] = src->regs[i];
		return 0;
	}
	if (dst->regs) {
		for (i = 0; i < src->n; i++)
			entry_to_dense(dst->regs, src->sparse[i], p);
		return 0;
	}
	if (src->n == 0)
		return 0;
	sort_in(dst);   /* dst's list is canonical now */
	cap = dst->n + src->n;
	out = malloc((size_t)cap * sizeof *out);
	if (out == NULL)
		return -1;
	walk_start(&ws, src, t);
	c = merge_walk(out, dst->sparse, dst->n, &ws);
	if (c > cnt_hll_sparse_max(p)) {
		uint8_t *regs = calloc(m, 1);

		if (regs == NULL) {
			free(out);
			return -1;
		}
		for (i = 0; i < c; i++)
			entry_to_dense(regs, out[i], p);
		free(out);
		free(dst->sparse);
		dst->sparse = NULL;
		dst->n = dst->nsorted = dst->cap = 0;
		dst->regs = regs;
		return 0;
	}
	free(dst->sparse);
	dst->sparse = out;
	dst->n = dst->nsorted = c;
	dst->cap = cap;
	return 0;
}

int cnt_hll_merge(cnt_hll *dst, const cnt_hll *src)
{
	cnt_hll tmp;
	int rc;

	if (dst == src)
		return 0;
	if (prec(src) < prec(dst) && cnt_hll_fold(dst, prec(src)) != 0)
		return -1;
	if (prec(src) == prec(dst))
		return merge_same(dst, src);
	if (cnt_hll_copy(&tmp, src) != 0 || cnt_hll_fold(&tmp, prec(dst)) != 0) {
		cnt_hll_release(&tmp);
		return -1;
	}
	rc = merge_same(dst, &tmp);
	cnt_hll_release(&tmp);
	return rc;
}

int cnt_hll_copy(cnt_hll *dst, const cnt_hll *src)
{
	cnt_hll_init(dst);
	dst->p = src->p;
	if (src->regs) {
		size_t m = regs_of(prec(src));

		dst->regs = malloc(m);
		if (dst->regs == NULL)
			return -1;
		memcpy(dst->regs, src->regs, m);
	} else if (src->n > 0) {
		dst->sparse = malloc((size_t)src->n * sizeof *dst->sparse);
		if (dst->sparse == NULL)
			return -1;
		memcpy(dst->sparse, src->sparse, (size_t)src->n * sizeof *dst->sparse);
		dst->n = dst->cap = src->n;
		dst->nsorted = src->nsorted;
	}
	return 0;
}

int cnt_hll_compact(cnt_hll *h)
{
	uint32_t *p;

	if (h->regs)
		return 0;
	sort_in(h);
	if (h->n == h->cap)
		return 0;
	if (h->n == 0) {
		free(h->sparse);
		h->sparse = NULL;
		h->cap = 0;
		return 0;
	}
	p = realloc(h->sparse, (size_t)h->n * sizeof *p);
	if (p == NULL)
		return -1;
	h->sparse = p;
	h->cap = h->n;
	return 0;
}

/* ---- comparing ---- */

int cnt_hll_equal(const cnt_hll *a, const cnt_hll *b)
{
	uint32_t ta[CNT_HLL_TAIL_MAX], tb[CNT_HLL_TAIL_MAX], x, y;
	walk wa, wb;

	if ((a->regs == NULL) != (b->regs == NULL) || prec(a) != prec(b))
		return 0;
	if (a->regs)
		return memcmp(a->regs, b->regs, regs_of(prec(a))) == 0;
	walk_start(&wa, a, ta);
	walk_start(&wb, b, tb);
	for (;;) {
		int ha = walk_next(&wa, &x), hb = walk_next(&wb, &y);

		if (ha != hb)
			return 0;
		if (!ha)
			return 1;
		if (x != y)
			return 0;
	}
}

/* ---- estimating ---- */

/* The bias of a raw estimate e at precision p: the mean bias of the k = 6
 * measured raw estimates nearest to e (ties go to the lower index), summed
 * in index order.  By distance, not bisection: the rows of p = 5 and 6 are
 * not monotone.  On a monotone row (p = 14) it picks the same six as the
 * bisect-and-widen search did, so the estimates there are unchanged. */
static double estimate_bias(double e, int p)
{
	const cnt_hll_bias_row *row = &cnt_hll_bias_rows[p - CNT_HLL_P_MIN];
	unsigned char chosen[256] = {0};
	size_t i, k;
	double sum = 0;

	for (k = 0; k < BIAS_K; k++) {
		size_t best = row->n;
		double bd = 0;

		for (i = 0; i < row->n; i++) {
			double dd = fabs(row->raw[i] - e);

			if (!chosen[i] && (best == row->n || dd < bd)) {
				best = i;
				bd = dd;
			}
		}
		chosen[best] = 1;
	}
	for (i = 0; i < row->n; i++)
		if (chosen[i])
			sum += row->bias[i];
	return sum / BIAS_K;
}

static uint64_t round_estimate(double x)
{
	if (!(x > 0))
		return 0;
	if (x >= 18446744073709549568.0)   /* the largest double below 2^64 */
		return UINT64_MAX;
	return (uint64_t)floor(x + 0.5);
}

uint64_t cnt_hll_estimate(const cnt_hll *h)
{
	const int p = prec(h);
	const uint32_t nreg = regs_of(p);
	const double m = nreg;
	double sum = 0, e, h_lc, alpha;
	uint32_t zeros = 0, i;

	if (h->regs == NULL) {
		const double mp = KEY_LIMIT;
		uint32_t c = canonical_count(h);

		return round_estimate(mp * log(mp / (mp - c)));
	}
	for (i = 0; i < nreg; i++) {
		sum += 1.0 / (double)(UINT64_C(1) << h->regs[i]);
		zeros += h->regs[i] == 0;
	}
	/* Flajolet et al.'s alpha_m, as the bias tables were measured */
	alpha = p == 4 ? 0.673 : p == 5 ? 0.697 : p == 6 ? 0.709 : 0.7213 / (1.0 + 1.079 / m);
	e = alpha * m * m / sum;
	if (e <= 5 * m)
		e -= estimate_bias(e, p);
	h_lc = zeros ? m * log(m / zeros) : e;
	return round_estimate(h_lc <= cnt_hll_lc_threshold[p - CNT_HLL_P_MIN] ? h_lc : e);
}

/* ---- serializing ---- */

static int put_varint(cnt_buf *out, uint32_t v)
{
	while (v >= 0x80) {
		if (cnt_buf_putc(out, (uint8_t)(v | 0x80)) != 0)
			return -1;
		v >>= 7;
	}
	return cnt_buf_putc(out, (uint8_t)v);
}

int cnt_hll_serialize(const cnt_hll *h, cnt_buf *out)
{
	const int pr = prec(h);
	const uint32_t m = regs_of(pr), lm = low_mask(pr);
	const size_t dense_bytes = cnt_hll_dense_bytes(pr);
	uint8_t head[CNT_HLL_HEADER] = {CNT_HLL_VERSION, CNT_HLL_SPARSE, (uint8_t)pr};
	uint32_t t[CNT_HLL_TAIL_MAX], e, prev = 0, first = 1, i;
	walk w;

	if (h->regs) {
		uint8_t *p;

		head[1] = CNT_HLL_DENSE;
		if (cnt_buf_reserve(out, dense_bytes) != 0)
			return -1;
		memcpy(out->p + out->len, head, sizeof head);
		p = out->p + out->len + sizeof head;
		for (i = 0; i < m; i += 4, p += 3) {
			const uint8_t *r = h->regs + i;

			p[0] = (uint8_t)(r[0] | r[1] << 6);
			p[1] = (uint8_t)(r[1] >> 2 | r[2] << 4);
			p[2] = (uint8_t)(r[2] >> 4 | r[3] << 2);
		}
		out->len += dense_bytes;
		return 0;
	}
	if (cnt_buf_append(out, head, sizeof head) != 0 ||
	    put_varint(out, canonical_count(h)) != 0)
		return -1;
	walk_start(&w, h, t);
	while (walk_next(&w, &e)) {
		uint32_t key = entry_key(e);

		if (put_varint(out, first ? key : key - prev - 1) != 0)
			return -1;
		if ((key & lm) == 0 && cnt_buf_putc(out, (uint8_t)((e >> 1) & 0x3f)) != 0)
			return -1;
		prev = key;
		first = 0;
	}
	return 0;
}

/* Reads a canonical varint of at most 32 bits at *off. */
static int get_varint(const uint8_t *p, size_t n, size_t *off, uint32_t *v,
		      const char *what, cnt_err *err)
{
	uint64_t x = 0;
	size_t start = *off;
	int i;

	for (i = 0; i < 5; i++) {
		uint8_t b;

		if (*off >= n)
			return cnt_err_set(err, "hll: offset %zu: %s: truncated varint", start, what);
		b = p[(*off)++];
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if ((b & 0x80) == 0) {
			if (b == 0 && i > 0)
				return cnt_err_set(err, "hll: offset %zu: %s: overlong varint", start, what);
			if (x > UINT32_MAX)
				return cnt_err_set(err, "hll: offset %zu: %s: varint over 32 bits", start, what);
			*v = (uint32_t)x;
			return 0;
		}
	}
	return cnt_err_set(err, "hll: offset %zu: %s: varint longer than 5 bytes", start, what);
}

static int read_sparse(cnt_hll *h, const uint8_t *p, size_t n, cnt_err *err)
{
	size_t off = CNT_HLL_HEADER;
	uint32_t count, i, key = 0, lm = low_mask(prec(h)), max = cnt_hll_sparse_max(prec(h));

	if (get_varint(p, n, &off, &count, "entry count", err) != 0)
		return -1;
	if (count > max)
		return cnt_err_set(err, "hll: sparse entry count %u exceeds %u", count, max);
	if (count > n - off)
		return cnt_err_set(err, "hll: sparse entry count %u needs more than the %zu bytes left",
				   count, n - off);
	if (count == 0)
		goto done;
	h->sparse = malloc((size_t)count * sizeof *h->sparse);
	if (h->sparse == NULL)
		return cnt_err_set(err, "hll: out of memory");
	h->cap = count;
	for (i = 0; i < count; i++) {
		size_t at = off;
		uint32_t d, e;
		uint64_t k;

		if (get_varint(p, n, &off, &d, "entry", err) != 0)
			return -1;
		k = i == 0 ? (uint64_t)d : (uint64_t)key + 1 + d;
		if (k >= KEY_LIMIT)
			return cnt_err_set(err, "hll: offset %zu: entry %u: index %llu out of range (< 2^%d)",
					   at, i, (unsigned long long)k, CNT_HLL_SP);
		key = (uint32_t)k;
		e = key << 7;
		if ((key & lm) == 0) {
			uint8_t rho;

			if (off >= n)
				return cnt_err_set(err, "hll: offset %zu: entry %u: truncated rho", off, i);
			rho = p[off];
			if (rho < 1 || rho > RHO_SPARSE_MAX)
				return cnt_err_set(err, "hll: offset %zu: entry %u: rho %u out of range 1..%d",
						   off, i, rho, RHO_SPARSE_MAX);
			off++;
			e |= (uint32_t)rho << 1 | 1;
		}
		h->sparse[h->n++] = e;
	}
	h->nsorted = h->n;
done:
	if (off != n)
		return cnt_err_set(err, "hll: offset %zu: %zu trailing bytes", off, n - off);
	return 0;
}

static int read_dense(cnt_hll *h, const uint8_t *p, size_t n, cnt_err *err)
{
	const int pr = prec(h);
	const uint32_t m = regs_of(pr), rmax = rho_dense_max(pr);
	/* sparse_max + 1 keys span at least this many registers */
	const uint32_t min_nonzero = (cnt_hll_sparse_max(pr) + 1 + low_mask(pr)) >> low_bits(pr);
	uint32_t i, nonzero = 0;
	const uint8_t *q = p + CNT_HLL_HEADER;

	if (n != cnt_hll_dense_bytes(pr))
		return cnt_err_set(err, "hll: dense sketch is %zu bytes, expected %zu", n, cnt_hll_dense_bytes(pr));
	h->regs = malloc(m);
	if (h->regs == NULL)
		return cnt_err_set(err, "hll: out of memory");
	for (i = 0; i < m; i += 4, q += 3) {
		uint8_t *r = h->regs + i;
		uint32_t j;

		r[0] = q[0] & 0x3f;
		r[1] = (uint8_t)((q[0] >> 6 | q[1] << 2) & 0x3f);
		r[2] = (uint8_t)((q[1] >> 4 | q[2] << 4) & 0x3f);
		r[3] = q[2] >> 2;
		for (j = 0; j < 4; j++) {
			if (r[j] > rmax)
				return cnt_err_set(err, "hll: dense register %u is %u, over %u",
						   i + j, r[j], rmax);
			nonzero += r[j] != 0;
		}
	}
	if (nonzero < min_nonzero)
		return cnt_err_set(err, "hll: dense sketch with %u non-zero registers is not canonical", nonzero);
	return 0;
}

int cnt_hll_deserialize(cnt_hll *h, const uint8_t *p, size_t n, cnt_err *err)
{
	int rc;

	cnt_hll_init(h);
	if (n < CNT_HLL_HEADER)
		return cnt_err_set(err, "hll: truncated header (%zu bytes)", n);
	if (p[0] != CNT_HLL_VERSION)
		return cnt_err_set(err, "hll: unknown version %u", p[0]);
	if (p[2] < CNT_HLL_P_MIN || p[2] > CNT_HLL_P_MAX)
		return cnt_err_set(err, "hll: precision %u out of range %d..%d", p[2],
				   CNT_HLL_P_MIN, CNT_HLL_P_MAX);
	if (p[2] != CNT_HLL_P)
		h->p = p[2];
	if (p[1] == CNT_HLL_SPARSE)
		rc = read_sparse(h, p, n, err);
	else if (p[1] == CNT_HLL_DENSE)
		rc = read_dense(h, p, n, err);
	else
		return cnt_err_set(err, "hll: unknown encoding %u", p[1]);
	if (rc != 0) {
		cnt_hll_release(h);
		h->p = 0;
	}
	return rc;
}
