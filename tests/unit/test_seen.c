/*
 * test_seen.c - lib/ingest/seen.h: the admission's duplicate table, against
 * base/fpset.h as the oracle, at its fills, through growth, at the edges of
 * its 40-bit values and of the fingerprint bits it keeps.
 */
#include <stdint.h>
#include <stdlib.h>

#include "base/fpset.h"
#include "ingest/seen.h"
#include "unit.h"

static cnt_fp fp_of_int(uint64_t i)
{
	const void *parts[1] = {&i};
	size_t lens[1] = {sizeof(i)};

	return cnt_fp_of(1, parts, lens);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* n random adds, a quarter of them keys added before, with random values;
 * every answer and value as fpset's; then n finds of present and absent
 * keys alike.  Returns the capacity at the end. */
static size_t against_fpset(unsigned load, size_t expected, size_t n, uint64_t seed)
{
	cnt_seen s;
	cnt_fpset o;
	uint64_t x = seed, v1, v2;
	size_t cap, init_cap, pct;

	CHECK(cnt_seen_init(&s, expected, load) == 0);
	CHECK(cnt_fpset_init(&o, expected) == 0);
	init_cap = s.mask + 1;
	for (size_t i = 0; i < n; i++) {
		uint64_t k = rnd(&x) % (n + n / 3), val = rnd(&x) % (CNT_SEEN_VAL_MAX + 1);
		int a, b;

		v1 = v2 = 12345;
		a = cnt_seen_add(&s, fp_of_int(k), val, &v1);
		b = cnt_fpset_add(&o, fp_of_int(k), val, &v2);
		CHECK(a == b && v1 == v2);
	}
	CHECK(s.count == o.count);
	for (size_t i = 0; i < 2 * n; i++) {
		uint64_t k = rnd(&x) % (2 * n);
		int a = cnt_seen_find(&s, fp_of_int(k), &v1), b = cnt_fpset_find(&o, fp_of_int(k), &v2);

		CHECK(a == b && (!a || v1 == v2));
	}
	/* grown only as far as needed: the count fits, and would not at half */
	pct = load >= 1 && load <= 90 ? load : 50;
	cap = s.mask + 1;
	CHECK(s.count * 100 <= cap * pct);
	CHECK(cap == init_cap || s.count * 100 > cap / 2 * pct);
	cnt_seen_release(&s);
	cnt_fpset_release(&o);
	return cap;
}

static void test_fills_and_growth(void)
{
	/* 1024 slots hold 768 keys at 3/4 */
	CHECK_EQ_INT((int)against_fpset(75, 768, 700, 1), 1024);
	CHECK_EQ_INT((int)against_fpset(75, 769, 700, 1), 2048);
	/* about 21,000 distinct keys: grown from 1024 five times */
	CHECK_EQ_INT((int)against_fpset(75, 1, 30000, 2), 32768);
	CHECK_EQ_INT((int)against_fpset(50, 100000, 90000, 3), 262144);
	CHECK_EQ_INT((int)against_fpset(0, 10, 5000, 4), 8192);      /* out of range: 50 */
	CHECK_EQ_INT((int)against_fpset(90, 1, 100000, 5), 131072);
}

/* Values 0 and CNT_SEEN_VAL_MAX come back as given, and a fingerprint whose
 * kept bits are all zero (its slot then holds only the value) is stored. */
static void test_value_edges(void)
{
	cnt_seen s;
	cnt_fp zero = {0, 0}, one = {0, 1}, top = {UINT64_MAX, UINT64_MAX};
	uint64_t v = 7;

	CHECK(cnt_seen_init(&s, 16, 75) == 0);
	CHECK(cnt_seen_find(&s, zero, &v) == 0 && v == 7);
	CHECK(cnt_seen_add(&s, zero, 0, NULL) == 1);
	CHECK(cnt_seen_add(&s, top, CNT_SEEN_VAL_MAX, NULL) == 1);
	CHECK(cnt_seen_find(&s, zero, &v) == 1 && v == 0);
	CHECK(cnt_seen_find(&s, top, &v) == 1 && v == CNT_SEEN_VAL_MAX);
	/* one's kept bits are zero's: it is the same key (seen.h's 88 bits) */
	CHECK(cnt_seen_add(&s, one, 5, &v) == 0 && v == 0);
	CHECK(s.count == 2);
	cnt_seen_release(&s);
}

/* Keys that differ only in one kept bit are distinct, and keys that share
 * a home slot (the high half's low bits) are all found past each other. */
static void test_kept_bits(void)
{
	cnt_seen s;
	uint64_t v;
	int b;

	CHECK(cnt_seen_init(&s, 100, 75) == 0);
	for (b = 0; b < 64; b++) {
		cnt_fp f = {UINT64_C(1) << b, 0};

		CHECK(cnt_seen_add(&s, f, (uint64_t)b, NULL) == 1);
	}
	for (b = 40; b < 64; b++) {
		cnt_fp f = {0, UINT64_C(1) << b};

		CHECK(cnt_seen_add(&s, f, 100 + (uint64_t)b, NULL) == 1);
	}
	for (b = 0; b < 64; b++) {
		cnt_fp f = {UINT64_C(1) << b, 0};

		CHECK(cnt_seen_find(&s, f, &v) == 1 && v == (uint64_t)b);
	}
	for (b = 40; b < 64; b++) {
		cnt_fp f = {0, UINT64_C(1) << b};

		CHECK(cnt_seen_find(&s, f, &v) == 1 && v == 100 + (uint64_t)b);
	}
	CHECK(s.count == 88);
	cnt_seen_release(&s);
}

/* Positions of one input after another: every value up to
 * CNT_SEEN_VAL_MAX, none past it, whatever the sum would wrap to.  The
 * input after one that used the last value starts at CNT_SEEN_VAL_MAX + 1
 * and has no position at all (its 0 would be stored as 2^40, whose 40
 * bits are those of an empty slot). */
static void test_val_at(void)
{
	const uint64_t max = CNT_SEEN_VAL_MAX;
	uint64_t v = 7;

	CHECK(cnt_seen_val_at(0, 0, &v) == 0 && v == 0);
	CHECK(cnt_seen_val_at(0, max, &v) == 0 && v == max);
	CHECK(cnt_seen_val_at(5, max - 5, &v) == 0 && v == max);
	CHECK(cnt_seen_val_at(max, 0, &v) == 0 && v == max);
	v = 7;
	CHECK(cnt_seen_val_at(0, max + 1, &v) == -1 && v == 7);
	CHECK(cnt_seen_val_at(5, max - 4, &v) == -1 && v == 7);
	CHECK(cnt_seen_val_at(max, 1, &v) == -1 && v == 7);
	CHECK(cnt_seen_val_at(max + 1, 0, &v) == -1 && v == 7);
	CHECK(cnt_seen_val_at(UINT64_MAX, 1, &v) == -1 && v == 7);
	CHECK(cnt_seen_val_at(1, UINT64_MAX, &v) == -1 && v == 7);
	CHECK(cnt_seen_val_at(max + 1, UINT64_MAX - max, &v) == -1 && v == 7);
}

/* An expectation no table could hold is out of memory, never a size
 * that wraps (2^60 slots of 16 bytes is 0 bytes in 64 bits) or a loop
 * that doubles a wrapped capacity forever. */
static void test_expected_too_many(void)
{
	cnt_seen s;

	CHECK(cnt_seen_init(&s, SIZE_MAX, 75) == -1);
	CHECK(s.slots == NULL);
	CHECK(cnt_seen_init(&s, SIZE_MAX / 64 + 1, 75) == -1);
	CHECK(s.slots == NULL);
	cnt_seen_release(&s);
}

int main(void)
{
	RUN(test_fills_and_growth);
	RUN(test_value_edges);
	RUN(test_kept_bits);
	RUN(test_val_at);
	RUN(test_expected_too_many);
	return unit_report("seen");
}
