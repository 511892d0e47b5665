/*
 * test_estimate.c - the 95 % error bounds of count/estimate.h, against
 * values computed by hand.
 */
#include <math.h>

#include "count/estimate.h"
#include "unit.h"

static int64_t approx(cnt_i128 v)
{
	int64_t e = -7;

	CHECK_EQ_INT(cnt_estimate_approx_error(v, &e), 0);
	return e;
}

static void test_approx(void)
{
	int64_t e = -7;

	CHECK_EQ_INT(approx(0), 0);
	CHECK_EQ_INT(approx(1), 2);          /* 1.96 */
	CHECK_EQ_INT(approx(3), 4);          /* 1.96 * 1.732 = 3.39 */
	CHECK_EQ_INT(approx(100), 20);       /* 19.6 */
	CHECK_EQ_INT(approx(2500), 98);      /* exactly 1.96 * 50: not 99 */
	CHECK_EQ_INT(approx(10000), 196);    /* exactly */
	CHECK_EQ_INT(approx(10001), 197);    /* just above */
	CHECK_EQ_INT(approx((cnt_i128)1 << 62), 4209067951L); /* 1.96 * 2^31 = 4209067950.08 */
	/* Past INT64_MAX: saturated. */
	CHECK_EQ_INT(approx((cnt_i128)1 << 126), INT64_MAX);
	/* A negative variance is corrupt: unknown. */
	CHECK_EQ_INT(cnt_estimate_approx_error(-1, &e), -1);
	CHECK_EQ_INT(e, 0);
}

static void test_unique(void)
{
	/* p = 14: E = ceil(2.0384 * U / 128). */
	CHECK_EQ_INT(cnt_estimate_unique_error(0, 14), 0);
	CHECK_EQ_INT(cnt_estimate_unique_error(1, 14), 1);        /* 0.0159 */
	CHECK_EQ_INT(cnt_estimate_unique_error(1000, 14), 16);    /* 15.925 */
	CHECK_EQ_INT(cnt_estimate_unique_error(6250, 14), 100);   /* 99.53 */
	CHECK_EQ_INT(cnt_estimate_unique_error(80000, 14), 1274); /* exactly 1274 */
	CHECK_EQ_INT(cnt_estimate_unique_error(80001, 14), 1275);
	/* Other precisions: p = 16 (sqrt 256), p = 15 (sqrt 181.02), p = 4. */
	CHECK_EQ_INT(cnt_estimate_unique_error(1000, 16), 8);     /* 7.9625 */
	CHECK_EQ_INT(cnt_estimate_unique_error(1000, 15), 12);    /* 11.26 */
	CHECK_EQ_INT(cnt_estimate_unique_error(100, 4), 51);      /* 50.96 */
	CHECK_EQ_INT(cnt_estimate_unique_error(100, 3), 51);      /* clamped to 4 */
	CHECK_EQ_INT(cnt_estimate_unique_error(1000, 18), 4);     /* 3.98 */
	/* Beyond the exact range: floating point, still rounded up. */
	CHECK_EQ_INT(cnt_estimate_unique_error((uint64_t)1 << 50, 14), 17929956016469L); /* 2^50 * 2.0384 / 128 = 17929956016468.79 */
}

static void test_rel_and_types(void)
{
	CHECK(fabs(cnt_estimate_unique_rel(14) - 0.015925) < 1e-9);
	CHECK(fabs(cnt_estimate_unique_rel(16) - 0.0079625) < 1e-9);
	CHECK(cnt_estimate_is(CNT_CTYPE_UNIQUE));
	CHECK(cnt_estimate_is(CNT_CTYPE_APPROX));
	CHECK(!cnt_estimate_is(CNT_CTYPE_EXACT));
	CHECK(!cnt_estimate_is(CNT_CTYPE_MIN));
	CHECK(!cnt_estimate_is(CNT_CTYPE_MAX));
	CHECK_EQ_STR(cnt_defs_ctype_name(CNT_CTYPE_APPROX), "approx");
}

int main(void)
{
	RUN(test_approx);
	RUN(test_unique);
	RUN(test_rel_and_types);
	return unit_report("estimate");
}
