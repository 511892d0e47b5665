/*
 * topkey.h - the hottest key of a stream, in bounded memory: the share of
 * events going to the single hottest (tenant, counter, member) key, the
 * "top-key write share" of the observability matrix (seed 000: a hot key
 * takes a thousand times the median write rate; seed 002: one row absorbs
 * about 1,000 writes/s).  cnt-window --stats reports it as top_key_share.
 *
 * Misra-Gries frequent items with k counters: a key's count is never
 * above its true count and at most n / (k + 1) below it (n the events
 * added), so the reported share is a lower bound within 1 / (k + 1); as
 * long as no more than k distinct keys have been seen the counts are
 * exact (exact is then 1).  Work is amortised O(1) per event (a round
 * that decrements every counter removes k + 1 events' worth of counts),
 * memory O(k) plus the longest keys seen.
 */
#ifndef CNT_COUNT_TOPKEY_H
#define CNT_COUNT_TOPKEY_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/slice.h"

#define CNT_TOPKEY_SLOTS 1024

typedef struct cnt_topkey cnt_topkey;

/* A tracker with k counters (1 to 1 << 20).  NULL with err set (out of
 * memory, or k out of range). */
cnt_topkey *cnt_topkey_new(size_t k, cnt_err *err);
void cnt_topkey_free(cnt_topkey *t);

/* Counts one event of key (tenant, counter, member); the bytes are
 * copied.  0, or -1 with err set (out of memory). */
int cnt_topkey_add(cnt_topkey *t, cnt_slice tenant, cnt_slice counter, cnt_slice member, cnt_err *err);

/* The hottest key so far.  Its slices point into t (valid until the next
 * add or free); all empty and count 0 when nothing was added. */
typedef struct cnt_topkey_top {
	uint64_t n;           /* events added */
	uint64_t count;       /* the top key's count (a lower bound unless exact) */
	int exact;            /* 1: every count is exact (at most k distinct keys) */
	cnt_slice tenant, counter, member;
} cnt_topkey_top;

void cnt_topkey_get(const cnt_topkey *t, cnt_topkey_top *out);

/* The hottest keys so far, at most max of them (max at most
 * CNT_TOPKEY_SLOTS; more is read as that), hottest first (ties in
 * byte order of tenant, counter, member, so the list does not depend on
 * the order keys were first seen): fills out[0..r) and returns r (0 when
 * nothing was added).  Each entry's n and exact are those of the tracker;
 * slices point into t as above.  Counts are lower bounds within
 * n / (k + 1) unless exact, so a key whose true share is above
 * 1 / (k + 1) is never missing from a long enough list (shardmap.h reads
 * the list that cnt-window --stats writes as top_keys). */
size_t cnt_topkey_list(const cnt_topkey *t, cnt_topkey_top *out, size_t max);

/* The number of keys cnt-window --stats lists under top_keys. */
#define CNT_TOPKEY_LIST 32

#endif
