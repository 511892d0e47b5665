/*
 * test_fpset.c - lib/base/fpset.h: the fingerprint set, at its default
 * fill and at a higher one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/fpset.h"
#include "unit.h"

static cnt_fp fp_of_int(uint64_t i)
{
	const void *parts[1] = {&i};
	size_t lens[1] = {sizeof(i)};

	return cnt_fp_of(1, parts, lens);
}

/* n keys in, then every one found with its value, none of n more found;
 * returns the table's capacity at the end. */
static size_t fill(unsigned load, size_t expected, size_t n)
{
	cnt_fpset s;
	uint64_t v;
	size_t cap;

	CHECK(cnt_fpset_init_load(&s, expected, load) == 0);
	/* (adding a key already there may grow a full table, as a new one) */
	for (uint64_t i = 0; i < n; i++) {
		CHECK(cnt_fpset_add(&s, fp_of_int(i), i * 3, NULL) == 1);
		if (i < n / 2)
			CHECK(cnt_fpset_add(&s, fp_of_int(i), 7, &v) == 0 && v == i * 3);
	}
	CHECK(s.count == n);
	for (uint64_t i = 0; i < n; i++)
		CHECK(cnt_fpset_find(&s, fp_of_int(i), &v) == 1 && v == i * 3);
	for (uint64_t i = n; i < 2 * n; i++)
		CHECK(cnt_fpset_find(&s, fp_of_int(i), &v) == 0);
	CHECK(s.count * 100 <= (s.mask + 1) * (load >= 1 && load <= 90 ? load : 50));
	cap = s.mask + 1;
	cnt_fpset_release(&s);
	return cap;
}

static void test_default_fill(void)
{
	cnt_fpset s;

	/* at most half full: 1024 slots hold 512 keys, 2048 are needed for 513 */
	CHECK(cnt_fpset_init(&s, 512) == 0 && s.mask + 1 == 1024);
	cnt_fpset_release(&s);
	CHECK(cnt_fpset_init(&s, 513) == 0 && s.mask + 1 == 2048);
	cnt_fpset_release(&s);
	CHECK_EQ_INT((int)fill(50, 512, 512), 1024);
	CHECK_EQ_INT((int)fill(50, 512, 513), 2048);   /* grows */
	CHECK_EQ_INT((int)fill(0, 10, 5000), 16384);   /* out of range: 50 */
}

static void test_higher_fill(void)
{
	/* at most 3/4 full: 1024 slots hold 768 keys */
	CHECK_EQ_INT((int)fill(75, 768, 768), 1024);
	CHECK_EQ_INT((int)fill(75, 769, 769), 2048);
	CHECK_EQ_INT((int)fill(75, 768, 769), 2048);   /* grows */
	CHECK_EQ_INT((int)fill(75, 1, 98304), 131072);
	CHECK_EQ_INT((int)fill(75, 1, 98305), 262144);
	CHECK_EQ_INT((int)fill(90, 1, 100000), 131072);
}

/* cnt_fp_of_joined() of the joined parts is cnt_fp_of() of the parts, on
 * both sides of cnt_fp_of's 1,024-byte stack copy (one-shot, streaming). */
static void test_joined(void)
{
	static const size_t sizes[][3] = {
		{0, 0, 0}, {1, 0, 2}, {4, 8, 18}, {2, 0, 0}, {340, 340, 340}, {340, 340, 341}, {1021, 0, 0},
		{1022, 0, 0}, {1023, 0, 0}, {1, 5000, 7}, {1, 1, 1},
	};
	unsigned char *src = malloc(6000), *joined = malloc(7000);

	if (src == NULL || joined == NULL)
		abort();
	for (size_t i = 0; i < 6000; i++)
		src[i] = (unsigned char)(i * 7 + 1);
	for (size_t t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
		const void *parts[3] = {src, src + 100, src + 200};
		size_t o = 0;
		cnt_fp a, b;

		for (int k = 0; k < 3; k++) {
			memcpy(joined + o, parts[k], sizes[t][k]);
			o += sizes[t][k];
			joined[o++] = 0;
		}
		a = cnt_fp_of(3, parts, sizes[t]);
		b = cnt_fp_of_joined(joined, o);
		CHECK(a.hi == b.hi && a.lo == b.lo);
		/* and another split of the same bytes is another key */
		if (sizes[t][0] > 0) {
			size_t other[3] = {sizes[t][0] - 1, sizes[t][1], sizes[t][2]};

			b = cnt_fp_of(3, parts, other);
			CHECK(a.hi != b.hi || a.lo != b.lo);
		}
	}
	free(src);
	free(joined);
}

int main(void)
{
	RUN(test_default_fill);
	RUN(test_higher_fill);
	RUN(test_joined);
	return unit_report("fpset");
}
