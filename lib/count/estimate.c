/*
 * estimate.c - the error bounds of estimated answers (see estimate.h).
 */
#include "count/estimate.h"

#include <math.h>

typedef unsigned __int128 u128;

int cnt_estimate_is(cnt_counter_type t)
{
	return t == CNT_CTYPE_APPROX || t == CNT_CTYPE_UNIQUE;
}

/* 1 when e^2 * a >= b * c (e, a, b, c small enough not to overflow). */
static int covers(u128 e, u128 a, u128 b, u128 c)
{
	return e * e * a >= b * c;
}

int cnt_estimate_approx_error(cnt_i128 var, int64_t *e)
{
	long double f;
	u128 v, k;

	*e = 0;
	if (var < 0)
		return -1;
	f = ceill(1.96L * sqrtl((long double)var));
	if (f >= (long double)INT64_MAX) {
		*e = INT64_MAX;
		return 0;
	}
	v = (u128)var;
	k = (u128)f;
	if (v <= (u128)1 << 100) {
		/* The smallest k with k^2 * 10000 >= 38416 v. */
		while (k > 0 && covers(k - 1, 10000, 38416, v))
			k--;
		while (!covers(k, 10000, 38416, v))
			k++;
	}
	*e = (int64_t)k;
	return 0;
}

int64_t cnt_estimate_unique_error(uint64_t u, int p)
{
	long double f;
	u128 k;

	if (p < CNT_ESTIMATE_P_MIN)
		p = CNT_ESTIMATE_P_MIN;
	if (p > CNT_ESTIMATE_P_MAX)
		p = CNT_ESTIMATE_P_MAX;
	f = ceill(2.0384L * (long double)u / sqrtl((long double)((uint64_t)1 << p)));
	if (f >= (long double)INT64_MAX)
		return INT64_MAX;
	k = (u128)f;
	if (u <= (uint64_t)1 << 40) {
		/* The smallest k with k^2 * 2^p * 10^8 >= 20384^2 u^2. */
		u128 a = (u128)100000000 << p, b = (u128)20384 * 20384, c = (u128)u * u;

		while (k > 0 && covers(k - 1, a, b, c))
			k--;
		while (!covers(k, a, b, c))
			k++;
	}
	return (int64_t)k;
}

double cnt_estimate_unique_rel(int p)
{
	if (p < CNT_ESTIMATE_P_MIN)
		p = CNT_ESTIMATE_P_MIN;
	if (p > CNT_ESTIMATE_P_MAX)
		p = CNT_ESTIMATE_P_MAX;
	return CNT_ESTIMATE_Z * CNT_ESTIMATE_HLL_RSE / sqrt((double)((uint64_t)1 << p));
}

int cnt_estimate_sketch_precision(const uint8_t *p, size_t n)
{
	/* Byte 2 of a serialized sketch is its precision (cnt-bucket(5),
	 * "Sketches": version, encoding, precision); read here without
	 * deserializing the registers. */
	if (n < 3 || p[2] < CNT_ESTIMATE_P_MIN || p[2] > CNT_ESTIMATE_P_MAX)
		return CNT_ESTIMATE_P_DEFAULT;
	return p[2];
}

double cnt_estimate_declared(const cnt_counter_version *cv)
{
	return cv ? cv->tolerated_error : 0;
}
