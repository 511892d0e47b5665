/*
 * test_hll_prec.c - HyperLogLog++ at every precision 4..18: the layout and
 * round trip of each, folding to a lower precision (exact: equal to the
 * sketch built at the lower precision, sparse and dense), unions of mixed
 * precisions at the lower one whatever the order of the inputs, corrupt
 * precision bytes, the realised error at 95 % against 1.96 * 1.04 /
 * sqrt(2^p) for several p (and not far below it: a sketch that ignored
 * its precision would be far more accurate at low p), and the choice of p
 * from a tolerated error.
 *
 * Deterministic: items are (seed, i) pairs hashed with the library's hash.
 * Under AddressSanitizer or with CNT_TEST_QUICK set, fewer trials.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count/hll.h"
#include "unit.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static int quick(void)
{
	return SANITIZED || getenv("CNT_TEST_QUICK") != NULL;
}

static uint64_t item_hash(uint64_t seed, uint64_t i)
{
	uint64_t k[2] = {seed, i};

	return cnt_hll_hash(k, sizeof k);
}

static cnt_buf ser(const cnt_hll *h)
{
	cnt_buf b = CNT_BUF_INIT;

	if (cnt_hll_serialize(h, &b) != 0)
		fprintf(stderr, "serialize failed\n");
	return b;
}

static int same_bytes(const cnt_hll *a, const cnt_hll *b)
{
	cnt_buf x = ser(a), y = ser(b);
	int eq = x.len == y.len && memcmp(x.p, y.p, x.len) == 0;

	cnt_buf_release(&x);
	cnt_buf_release(&y);
	return eq;
}

/* The sketch at precision p of items (seed, lo..hi-1). */
static void build(cnt_hll *h, int p, uint64_t seed, uint64_t lo, uint64_t hi)
{
	cnt_hll_init_p(h, p);
	for (uint64_t i = lo; i < hi; i++)
		CHECK_EQ_INT(cnt_hll_add_hash(h, item_hash(seed, i)), 0);
}

static void test_layout_each_p(void)
{
	for (int p = CNT_HLL_P_MIN; p <= CNT_HLL_P_MAX; p++) {
		cnt_hll h, g;
		cnt_buf b;
		cnt_err err;
		uint64_t n = (uint64_t)cnt_hll_sparse_max(p) * 4;

		cnt_hll_init_p(&h, p);
		CHECK_EQ_INT(cnt_hll_precision(&h), p);
		b = ser(&h);
		CHECK_EQ_INT(b.len, 4);
		CHECK(b.p[0] == 1 && b.p[1] == 1 && b.p[2] == p && b.p[3] == 0);
		cnt_buf_release(&b);
		cnt_hll_release(&h);
		CHECK_EQ_INT(cnt_hll_precision(&h), p);   /* release keeps p */

		/* sparse up to the limit, dense past it, round trips keep p */
		build(&h, p, 7, 0, 2);
		CHECK(cnt_hll_is_sparse(&h));
		CHECK_EQ_INT(cnt_hll_estimate(&h), 2);
		b = ser(&h);
		CHECK_EQ_INT(b.p[2], p);
		CHECK_EQ_INT(cnt_hll_deserialize(&g, b.p, b.len, &err), 0);
		CHECK_EQ_INT(cnt_hll_precision(&g), p);
		CHECK(cnt_hll_equal(&g, &h));
		cnt_hll_release(&g);
		cnt_buf_release(&b);
		cnt_hll_release(&h);

		build(&h, p, 7, 0, n);
		CHECK(!cnt_hll_is_sparse(&h));
		CHECK_EQ_INT(cnt_hll_heap_bytes(&h), 1u << p);
		b = ser(&h);
		CHECK_EQ_INT(b.len, cnt_hll_dense_bytes(p));
		CHECK_EQ_INT(b.len, 3 + (1u << p) * 6 / 8);
		CHECK(b.p[0] == 1 && b.p[1] == 2 && b.p[2] == p);
		CHECK_EQ_INT(cnt_hll_deserialize(&g, b.p, b.len, &err), 0);
		CHECK_EQ_INT(cnt_hll_precision(&g), p);
		CHECK(cnt_hll_equal(&g, &h));
		CHECK(same_bytes(&g, &h));
		cnt_hll_release(&g);
		/* the same dense bytes under another precision byte are refused */
		if (p < CNT_HLL_P_MAX) {
			b.p[2] = (uint8_t)(p + 1);
			CHECK(cnt_hll_deserialize(&g, b.p, b.len, &err) == -1);
			CHECK_EQ_INT(cnt_hll_precision(&g), CNT_HLL_P);
		}
		cnt_buf_release(&b);
		cnt_hll_release(&h);
	}
	/* the default is 14, bit for bit as cnt_hll_init */
	{
		cnt_hll a, b;

		build(&a, 14, 3, 0, 5000);
		cnt_hll_init(&b);
		for (uint64_t i = 0; i < 5000; i++)
			cnt_hll_add_hash(&b, item_hash(3, i));
		CHECK(same_bytes(&a, &b));
		CHECK_EQ_INT(cnt_hll_precision(&b), 14);
		cnt_hll_release(&a);
		cnt_hll_release(&b);
	}
}

static void test_sparse_limit_each_p(void)
{
	for (int p = CNT_HLL_P_MIN; p <= CNT_HLL_P_MAX; p += 2) {
		cnt_hll h;
		uint32_t max = cnt_hll_sparse_max(p);
		uint64_t i = 0;

		CHECK_EQ_INT(max, 3u << (p - 4));
		cnt_hll_init_p(&h, p);
		/* add distinct items until the sketch turns dense: the sparse
		 * list then held max keys; a few items may share one of the
		 * 2^25 keys, so it took at least max + 1 items, hardly more */
		while (cnt_hll_is_sparse(&h))
			cnt_hll_add_hash(&h, item_hash(99, i++));
		CHECK(i >= (uint64_t)max + 1 && i <= (uint64_t)max + 1 + max / 256);
		cnt_hll_release(&h);
	}
	CHECK_EQ_INT(cnt_hll_sparse_max(14), CNT_HLL_SPARSE_MAX);
}

/* Folding p to q equals building at q, for n items of seed. */
static void fold_case(int p, int q, uint64_t seed, uint64_t n)
{
	cnt_hll hp, hq;

	build(&hp, p, seed, 0, n);
	build(&hq, q, seed, 0, n);
	CHECK_EQ_INT(cnt_hll_fold(&hp, q), 0);
	CHECK_EQ_INT(cnt_hll_precision(&hp), q);
	if (!same_bytes(&hp, &hq))
		fprintf(stderr, "fold %d -> %d of %llu items differs\n", p, q, (unsigned long long)n);
	CHECK(same_bytes(&hp, &hq));
	CHECK(cnt_hll_equal(&hp, &hq));
	CHECK_EQ_INT(cnt_hll_estimate(&hp), cnt_hll_estimate(&hq));
	cnt_hll_release(&hp);
	cnt_hll_release(&hq);
}

static void test_fold_exact(void)
{
	for (int p = CNT_HLL_P_MIN + 1; p <= CNT_HLL_P_MAX; p++) {
		for (int q = CNT_HLL_P_MIN; q < p; q++) {
			/* sparse to sparse, sparse to dense, dense to dense */
			fold_case(p, q, (uint64_t)(p * 100 + q), 2);
			fold_case(p, q, (uint64_t)(p * 100 + q), cnt_hll_sparse_max(q));
			fold_case(p, q, (uint64_t)(p * 100 + q), (uint64_t)cnt_hll_sparse_max(q) + 1);
			if (!quick() || p - q <= 2)
				fold_case(p, q, (uint64_t)(p * 100 + q), (uint64_t)cnt_hll_sparse_max(p) * 3);
		}
	}
	/* folding to the same or a higher precision does nothing */
	{
		cnt_hll a, b;

		build(&a, 10, 1, 0, 500);
		build(&b, 10, 1, 0, 500);
		CHECK_EQ_INT(cnt_hll_fold(&a, 10), 0);
		CHECK_EQ_INT(cnt_hll_fold(&a, 12), 0);
		CHECK(same_bytes(&a, &b));
		CHECK_EQ_INT(cnt_hll_precision(&a), 10);
		cnt_hll_release(&a);
		cnt_hll_release(&b);
	}
}

/* Three overlapping sets at three precisions: every order and grouping of
 * the unions gives the bytes of the whole set built at the lowest. */
static void mixed_case(int pa, int pb, int pc, uint64_t n)
{
	int lo = pa < pb ? pa : pb;
	cnt_hll a, b, c, whole, x, y, z;

	lo = lo < pc ? lo : pc;
	build(&a, pa, 5, 0, n / 2);
	build(&b, pb, 5, n / 3, n);
	build(&c, pc, 5, n / 4, n / 2 + 7);
	build(&whole, lo, 5, 0, n > n / 2 + 7 ? n : n / 2 + 7);
	/* (a + b) + c */
	cnt_hll_copy(&x, &a);
	CHECK_EQ_INT(cnt_hll_merge(&x, &b), 0);
	CHECK_EQ_INT(cnt_hll_merge(&x, &c), 0);
	/* c + (b + a) */
	cnt_hll_copy(&y, &b);
	CHECK_EQ_INT(cnt_hll_merge(&y, &a), 0);
	cnt_hll_copy(&z, &c);
	CHECK_EQ_INT(cnt_hll_merge(&z, &y), 0);
	CHECK_EQ_INT(cnt_hll_precision(&x), lo);
	CHECK_EQ_INT(cnt_hll_precision(&z), lo);
	CHECK(same_bytes(&x, &z));
	CHECK(same_bytes(&x, &whole));
	/* an empty default sketch merged with the lot takes the lowest too */
	cnt_hll_release(&y);
	cnt_hll_init(&y);
	CHECK_EQ_INT(cnt_hll_merge(&y, &x), 0);
	CHECK_EQ_INT(cnt_hll_precision(&y), lo < 14 ? lo : 14);
	if (lo <= 14)
		CHECK(same_bytes(&y, &whole));
	cnt_hll_release(&a);
	cnt_hll_release(&b);
	cnt_hll_release(&c);
	cnt_hll_release(&whole);
	cnt_hll_release(&x);
	cnt_hll_release(&y);
	cnt_hll_release(&z);
}

static void test_mixed_unions(void)
{
	static const int ps[][3] = {
		{14, 12, 16}, {4, 18, 10}, {18, 17, 16}, {11, 11, 14}, {6, 9, 5},
	};
	static const uint64_t ns[] = {10, 500, 5000, 100000};

	for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
		for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++)
			mixed_case(ps[i][0], ps[i][1], ps[i][2], ns[j]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The realised relative error at 95 % (nearest rank over the trials) of
 * sketches at p of n items, n spread geometrically over [m, 8m]. */
static void test_error_each_p(void)
{
	static const struct {
		int p, trials, quick_trials;
	} cases[] = {
		{4, 1000, 200}, {5, 1000, 200}, {6, 1000, 200}, {8, 600, 100},
		{10, 400, 60}, {12, 200, 30}, {16, 40, 8}, {18, 20, 4},
	};

	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		int p = cases[c].p, trials = quick() ? cases[c].quick_trials : cases[c].trials;
		double m = (double)(1u << p), bound = cnt_hll_error95(p), p95;
		double *err = malloc((size_t)trials * sizeof *err);

		for (int t = 0; t < trials; t++) {
			uint64_t n = (uint64_t)(m * pow(8.0, (double)t / trials));
			cnt_hll h;

			build(&h, p, 0x5eed0000u + (uint64_t)(p * 10000 + t), 0, n);
			err[t] = fabs(((double)cnt_hll_estimate(&h) - (double)n) / (double)n);
			cnt_hll_release(&h);
		}
		qsort(err, (size_t)trials, sizeof *err, cmp_double);
		p95 = err[(size_t)ceil(0.95 * trials) - 1];
		if (getenv("CNT_HLL_TABLE"))
			printf("p=%d trials=%d p95=%.4f bound=%.4f\n", p, trials, p95, bound);
		if (p95 > bound || p95 < bound / 4)
			fprintf(stderr, "p=%d: realised p95 %.4f, bound %.4f\n", p, p95, bound);
		CHECK(p95 <= bound);
		/* not far below it either: a sketch that ignored p and stayed at
		 * 14 would be off by under 1.6 % */
		if (p <= 10)
			CHECK(p95 >= bound / 4);
		free(err);
	}
}

static void test_precision_for(void)
{
	/* the table of cnt-definitions(5) */
	CHECK_EQ_INT(cnt_hll_precision_for(0.5), 5);
	CHECK_EQ_INT(cnt_hll_precision_for(0.1), 9);
	CHECK_EQ_INT(cnt_hll_precision_for(0.05), 11);
	CHECK_EQ_INT(cnt_hll_precision_for(0.02), 14);
	CHECK_EQ_INT(cnt_hll_precision_for(0.016), 14);
	CHECK_EQ_INT(cnt_hll_precision_for(0.0159), 15);
	CHECK_EQ_INT(cnt_hll_precision_for(0.01), 16);
	CHECK_EQ_INT(cnt_hll_precision_for(0.004), 18);
	CHECK_EQ_INT(cnt_hll_precision_for(0.0039), 19);
	CHECK_EQ_INT(cnt_hll_precision_for(0.001), 22);
	for (int p = CNT_HLL_P_MIN + 1; p <= CNT_HLL_P_MAX; p++) {
		CHECK_EQ_INT(cnt_hll_precision_for(cnt_hll_error95(p)), p);
		CHECK(cnt_hll_error95(p) < cnt_hll_error95(p - 1));
	}
	CHECK(fabs(cnt_hll_error95(14) - 0.015925) < 1e-6);
}

static void test_corrupt_precision(void)
{
	static const uint8_t ok[] = {1, 1, 10, 0};
	uint8_t b[4];
	cnt_hll h;
	cnt_err err;

	memcpy(b, ok, 4);
	CHECK_EQ_INT(cnt_hll_deserialize(&h, b, 4, &err), 0);
	CHECK_EQ_INT(cnt_hll_precision(&h), 10);
	cnt_hll_release(&h);
	for (int v = 0; v < 256; v++) {
		int rc;

		b[2] = (uint8_t)v;
		err.msg[0] = 0;
		rc = cnt_hll_deserialize(&h, b, 4, &err);
		CHECK_EQ_INT(rc, v >= 4 && v <= 18 ? 0 : -1);
		if (rc != 0)
			CHECK(strstr(err.msg, "precision") != NULL);
		cnt_hll_release(&h);
	}
	/* a dense register over 65 - p */
	{
		cnt_hll d;
		cnt_buf s;

		build(&d, 4, 1, 0, 100);
		s = ser(&d);
		CHECK_EQ_INT(s.len, 15);
		s.p[3] = (uint8_t)((s.p[3] & 0xc0) | 61);
		CHECK_EQ_INT(cnt_hll_deserialize(&h, s.p, s.len, &err), 0);
		cnt_hll_release(&h);
		s.p[3] = (uint8_t)((s.p[3] & 0xc0) | 62);
		CHECK_EQ_INT(cnt_hll_deserialize(&h, s.p, s.len, &err), -1);
		cnt_buf_release(&s);
		cnt_hll_release(&d);
	}
}

int main(void)
{
	RUN(test_layout_each_p);
	RUN(test_sparse_limit_each_p);
	RUN(test_precision_for);
	RUN(test_corrupt_precision);
	RUN(test_fold_exact);
	RUN(test_mixed_unions);
	RUN(test_error_each_p);
	return unit_report("test_hll_prec");
}
