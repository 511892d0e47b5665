/*
 * sample.h - deterministic sampling of approximate counters at admission
 * (cnt-ingest(1), cnt-definitions(5) "APPROXIMATE COUNTERS").
 *
 * An approx counter's accepted events are counted per (tenant, counter,
 * member, tenant-local hour of event_time) within the run, in input
 * order.  The i-th event of such a key (i from 0) gets the level
 *
 *     L(i) = min(floor(log2(i / K + 1)), CNT_SAMPLE_LEVEL_MAX)
 *
 * so the first K are at level 0, the next 2K at level 1, the next 4K at
 * level 2, ...: about K events are kept per level.  An event at level L
 * is kept when the low L bits of cnt_sample_hash() of its dedup key are
 * zero (probability 2^-L, the same answer for a retried duplicate that
 * gets the same level) and then weighs w = 2^L: the Horvitz-Thompson
 * estimate of a sum is the sum of d*w over kept events, unbiased, with
 * variance estimate sum of d*d*w*(w-1).
 *
 * K: for unit deltas the relative standard error of the estimate of a
 * key's count n is at most sqrt(3/8)/sqrt(K) whatever n (the worst case
 * is a level one third filled; at level boundaries it is sqrt(1/3)/sqrt(K)),
 * so K = ceil(1.96^2 * 3/8 / eps^2) keeps the error within eps at 95 %
 * (eps = tolerated_error; 577 for 0.05).
 */
#ifndef CNT_SAMPLE_H
#define CNT_SAMPLE_H

#include <stdint.h>

#include "base/err.h"
#include "model/defs.h"
#include "model/event.h"

#define CNT_SAMPLE_LEVEL_MAX CNT_APPROX_LEVEL_MAX
#define CNT_SAMPLE_ATTR CNT_EVENT_SAMPLE_ATTR

/* K for tolerated error eps in (0, 0.5]: ceil(1.96^2 * 3/8 / eps^2). */
int64_t cnt_sample_k(double eps);

/* The level of the i-th (from 0) event of a key, for K = k >= 1. */
int cnt_sample_level(uint64_t i, int64_t k);

/* The keep hash of e's dedup key: XXH3-64 (seed 0) of idempotency_key for
 * dedup_key idempotency_key; of item, a 0 byte and member_ref for
 * item_member (an absent item reads as empty). */
uint64_t cnt_sample_hash(const cnt_event *e, int dedup_key);

typedef struct cnt_sampler cnt_sampler;

/* A sampler for one run over defs (which must outlive it); NULL with err
 * set when out of memory. */
cnt_sampler *cnt_sampler_new(const cnt_defs *defs, cnt_err *err);
void cnt_sampler_free(cnt_sampler *s);

/* Decides accepted event e of counter c at version cv.  Not an approx
 * version: returns 1, e untouched.  Kept: returns 1; at level L > 0, e's
 * attrs are replaced by a copy ending with (cnt.sample, L), valid until
 * the next call.  Sampled out: returns 0 (counted in
 * cnt_sampler_counter_out).  -1 with err set: out of memory, or the
 * tenant's timezone cannot be loaded. */
int cnt_sampler_decide(cnt_sampler *s, const cnt_counter *c, const cnt_counter_version *cv,
	cnt_event *e, cnt_err *err);

/* Events sampled out: of counter c, and in all. */
uint64_t cnt_sampler_counter_out(const cnt_sampler *s, const cnt_counter *c);
uint64_t cnt_sampler_out(const cnt_sampler *s);

#endif
