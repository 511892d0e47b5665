/*
 * fuzz_hll.c - libFuzzer target for the HyperLogLog++ deserializer, merge
 * and estimate.
 *
 * The input is read three ways:
 *   - whole, as one serialized sketch;
 *   - as [2-byte little-endian length L][blob A: L bytes][blob B: the rest]
 *     (the seeds in tests/fuzz/corpus/fuzz_hll/ have this shape: pairs of
 *     real sketches, sparse and dense, written by cnt_hll_serialize);
 *   - as a stream of 8-byte hashes added to a fresh sketch C, at the
 *     precision 4 + (last byte mod 15).
 * Whatever the bytes: no crash, no leak, no allocation past 2^p bytes per
 * sketch (256 KiB at p = 18).  Beyond that, every accepted blob must
 * serialize back to exactly its own bytes (the format is canonical), and
 * for accepted A and B (of any precisions 4..18, the byte in the header)
 * the union must be at the lower precision, commutative, associative (with
 * C) and idempotent down to the serialized bytes, and while the union is
 * sparse its estimate is no smaller than A's (same precisions); folding
 * commutes with union: fold(A + B, q) = fold(A, q) + fold(B, q) for q
 * below both, chosen by the first byte.  A broken property aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "count/hll.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same(const cnt_hll *a, const cnt_hll *b)
{
	cnt_buf x = CNT_BUF_INIT, y = CNT_BUF_INIT;
	int eq;

	if (cnt_hll_serialize(a, &x) != 0 || cnt_hll_serialize(b, &y) != 0)
		abort();
	eq = x.len == y.len && memcmp(x.p, y.p, x.len) == 0;
	if (eq != cnt_hll_equal(a, b))
		abort();
	cnt_buf_release(&x);
	cnt_buf_release(&y);
	return eq;
}

/* Deserializes p[0..n); on success checks the round trip.  Returns 0/-1. */
static int load(cnt_hll *h, const uint8_t *p, size_t n)
{
	cnt_err err;
	cnt_buf b = CNT_BUF_INIT;

	if (cnt_hll_deserialize(h, p, n, &err) != 0) {
		if (err.msg[0] == 0)
			abort();
		return -1;
	}
	if (cnt_hll_serialize(h, &b) != 0 || b.len != n || memcmp(b.p, p, n) != 0)
		abort();
	cnt_buf_release(&b);
	(void)cnt_hll_estimate(h);
	return 0;
}

static void merged(cnt_hll *out, const cnt_hll *x, const cnt_hll *y)
{
	if (cnt_hll_copy(out, x) != 0 || cnt_hll_merge(out, y) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cnt_hll whole, a, b, c;

	if (load(&whole, data, size) == 0)
		cnt_hll_release(&whole);

	cnt_hll_init_p(&c, size > 0 ? 4 + data[size - 1] % 15 : 14);
	for (size_t i = 0; i + 8 <= size; i += 8) {
		uint64_t x;

		memcpy(&x, data + i, 8);
		if (cnt_hll_add_hash(&c, x) != 0)
			abort();
	}

	if (size >= 2) {
		size_t len = (size_t)data[0] | (size_t)data[1] << 8;
		const uint8_t *p = data + 2;
		size_t rest = size - 2;

		if (len > rest)
			len = rest;
		if (load(&a, p, len) == 0) {
			if (load(&b, p + len, rest - len) == 0) {
				cnt_hll ab, ba, ab_c, bc, a_bc, aa;

				int pa = cnt_hll_precision(&a), pb = cnt_hll_precision(&b);
				int lo = pa < pb ? pa : pb;

				merged(&ab, &a, &b);
				merged(&ba, &b, &a);
				if (!same(&ab, &ba) || cnt_hll_precision(&ab) != lo)
					abort();
				if (lo > CNT_HLL_P_MIN) {
					int q = CNT_HLL_P_MIN + data[0] % (lo - CNT_HLL_P_MIN);
					cnt_hll fab, fa, fb, fa_fb;

					if (cnt_hll_copy(&fab, &ab) != 0 || cnt_hll_fold(&fab, q) != 0 ||
					    cnt_hll_copy(&fa, &a) != 0 || cnt_hll_fold(&fa, q) != 0 ||
					    cnt_hll_copy(&fb, &b) != 0 || cnt_hll_fold(&fb, q) != 0)
						abort();
					merged(&fa_fb, &fa, &fb);
					if (!same(&fab, &fa_fb) || cnt_hll_precision(&fab) != q)
						abort();
					cnt_hll_release(&fab);
					cnt_hll_release(&fa);
					cnt_hll_release(&fb);
					cnt_hll_release(&fa_fb);
				}
				merged(&ab_c, &ab, &c);
				merged(&bc, &b, &c);
				merged(&a_bc, &a, &bc);
				if (!same(&ab_c, &a_bc))
					abort();
				merged(&aa, &a, &a);
				if (!same(&aa, &a))
					abort();
				if (cnt_hll_is_sparse(&ab) && pa == pb &&
				    cnt_hll_estimate(&ab) < cnt_hll_estimate(&a))
					abort();
				(void)cnt_hll_estimate(&ab_c);
				cnt_hll_release(&ab);
				cnt_hll_release(&ba);
				cnt_hll_release(&ab_c);
				cnt_hll_release(&bc);
				cnt_hll_release(&a_bc);
				cnt_hll_release(&aa);
				cnt_hll_release(&b);
			}
			cnt_hll_release(&a);
		}
	}
	cnt_hll_release(&c);
	return 0;
}
