/*
 * test_table.c - lib/base/table.h: zeroed, 64-byte aligned memory for
 * large tables, grown from the heap into a mapping and then remapped,
 * its contents kept and the new part zero each time; shrunk too.
 */
#include <stdint.h>
#include <string.h>

#include "base/table.h"
#include "unit.h"

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static int pattern_kept(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)(i * 7 + 1))
			return 0;
	return 1;
}

static void test_grow_keeps_contents(void)
{
	/* heap, heap -> mapped (a copy), mapped -> mapped (mremap), down */
	size_t sizes[] = {1000, 3u << 20, 5u << 20, 16u << 20, 6u << 20, 2000};
	size_t have = 0;
	uint8_t *p = NULL;

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k], kept = have < n ? have : n;
		uint8_t *q = cnt_table_grow(p, have, n);

		CHECK(q != NULL);
		if (q == NULL)
			break;
		CHECK_EQ_INT((uintptr_t)q % 64, 0);
		CHECK(pattern_kept(q, kept));
		CHECK(all_zero(q + kept, n - kept));
		for (size_t i = kept; i < n; i++)
			q[i] = (uint8_t)(i * 7 + 1);
		p = q;
		have = n;
	}
	cnt_table_free(p, have);
}

static void test_alloc(void)
{
	size_t sizes[] = {0, 64, 100, 4u << 20, (4u << 20) + 1};

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint8_t *p = cnt_table_alloc(sizes[k]);

		CHECK(p != NULL);
		CHECK_EQ_INT((uintptr_t)p % 64, 0);
		CHECK(p && all_zero(p, sizes[k]));
		cnt_table_free(p, sizes[k]);
	}
	cnt_table_free(NULL, 100);
}

int main(void)
{
	RUN(test_grow_keeps_contents);
	RUN(test_alloc);
	return unit_report("test_table");
}
