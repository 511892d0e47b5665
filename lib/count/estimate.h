/*
 * estimate.h - the error bounds of estimated answers (issue 11, part 3).
 *
 * Two kinds of counter give estimates, not counts: approx counters (their
 * events are sampled and the kept ones scaled, cnt-definitions(5)) and
 * unique counters (HyperLogLog++ sketches, count/hll.h).  Every answer for
 * one of them says that it is an estimate and gives E, an absolute error
 * bound at 95 % confidence: the true value lies in [value - E, value + E]
 * in about 95 answers out of 100 (the normal approximation: 1.96 standard
 * errors; a two-sided interval).  E is a whole number, rounded up, so the
 * stated interval is never narrower than the one computed.
 *
 *   approx:  E = ceil(1.96 * sqrt(V)), V the summed Horvitz-Thompson
 *            variance estimate of the value (the buckets' sum_var, added
 *            over the buckets and shards that make the value: the events
 *            are sampled independently, so variances add).
 *   unique:  E = ceil(1.96 * 1.04 / sqrt(2^p) * U), U the estimate and p
 *            the sketch's precision (1.04 / sqrt(m) is HyperLogLog's
 *            relative standard error with m = 2^p registers; about 0.81 %
 *            at p = 14, so E is about 1.6 % of U).
 *
 * Both are computed exactly where the integers allow (E is the smallest
 * integer with E^2 >= 3.8416 V, resp. E^2 * 2^p >= 2.0384^2 * U^2,
 * decided in 128-bit integers), so a bound never depends on the rounding
 * of a floating-point product: V = 2500 gives 98, not 99.  Beyond the
 * exact range (V > 2^100, U > 2^40) the long double result is used.
 */
#ifndef CNT_ESTIMATE_H
#define CNT_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

#include "model/bucket.h"
#include "model/defs.h"

#define CNT_ESTIMATE_Z 1.96          /* 95 %, two-sided */
#define CNT_ESTIMATE_HLL_RSE 1.04    /* HyperLogLog: rse = 1.04 / sqrt(2^p) */
#define CNT_ESTIMATE_P_MIN 4         /* the precisions a sketch may have */
#define CNT_ESTIMATE_P_MAX 18
#define CNT_ESTIMATE_P_DEFAULT 14    /* every sketch before issue 11 part 2 */

/* Whether answers of a counter of type t are estimates (approx, unique). */
int cnt_estimate_is(cnt_counter_type t);

/* The approx bound for summed variance var into *e: 0; or -1 when var is
 * negative, which only a corrupt or forged bucket can make (the variance
 * is a sum of non-negative terms, minus those of compensations that took
 * out events added before): the bound is then unknown, and *e is 0.  A
 * bound past INT64_MAX (var beyond about 2^125) is given as INT64_MAX. */
int cnt_estimate_approx_error(cnt_i128 var, int64_t *e);

/* The unique bound for estimate u at precision p (CNT_ESTIMATE_P_MIN to
 * CNT_ESTIMATE_P_MAX; another p is taken as the nearest of the two). */
int64_t cnt_estimate_unique_error(uint64_t u, int p);

/* The relative bound 1.96 * 1.04 / sqrt(2^p) of precision p (0.0159... at
 * 14): cnt-diff's tolerance for a unique counter with no declared error. */
double cnt_estimate_unique_rel(int p);

/* The relative error a counter version declares it tolerates at 95 %
 * (cnt-definitions(5) tolerated_error), 0 when it declares none.  Parts 1
 * and 2 of issue 11 add the key: this is the one place that reads it. */
double cnt_estimate_declared(const cnt_counter_version *cv);

/* The precision of a serialized sketch (count/hll.h: its third byte),
 * CNT_ESTIMATE_P_DEFAULT for anything too short or out of range (the
 * sketch's own deserialization refuses those).  Part 2 of issue 11:
 * hll.h exposes the precision; this is the one place that reads it. */
int cnt_estimate_sketch_precision(const uint8_t *p, size_t n);

#endif
