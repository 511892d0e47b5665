/*
 * test_table.c - lib/base/table.h: zeroed, 64-byte aligned memory for
 * large tables, grown from the heap into a mapping and then remapped,
 * its contents kept and the new part zero each time; shrunk too; mapped
 * on 2 MiB boundaries, and moved to another when it cannot grow in place;
 * faulted in at once on asking.  And
 * cnt_table_double, the in-place doubling of a linear-probing hash table:
 * a cluster that wraps from the table's end to its start, tables full but
 * for one slot, random tables small and large (mapped), each checked by
 * finding every entry again under the new mask.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
		if (n >= 4u << 20) /* mapped: on a huge page's boundary */
			CHECK_EQ_INT((uintptr_t)q % (2u << 20), 0);
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

/* Pages of [p, p + n) the process has in memory (mincore). */
static size_t resident(void *p, size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = (n + page - 1) / page, in = 0;
	unsigned char *v = malloc(pages);

	if (v == NULL || mincore(p, n, v) != 0) {
		free(v);
		return 0;
	}
	for (size_t i = 0; i < pages; i++)
		in += v[i] & 1;
	free(v);
	return in;
}

/* cnt_table_fault_in: a mapped table's pages all in memory at once,
 * still zero, and usable; odd sizes (its halves are cut on a huge
 * page's boundary) and a heap table (in already) too. */
static void test_fault_in(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t sizes[] = {4u << 20, (6u << 20) + 4096, (32u << 20) + 12345, 1000};

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k], pages = (n + page - 1) / page;
		uint8_t *p = cnt_table_alloc(n);
		int rc;

		CHECK(p != NULL);
		if (p == NULL)
			continue;
		/* a mapping, not touched yet; the heap's was zeroed.  A kernel
		 * before Linux 5.14 cannot: -1, and the table as it was */
		if (n >= 4u << 20)
			CHECK(resident(p, n) < pages);
		rc = cnt_table_fault_in(p, n);
		CHECK(rc == 0 || (rc == -1 && n >= 4u << 20));
		if (rc == 0 && n >= 4u << 20)
			CHECK_EQ_INT(resident(p, n), pages);
		CHECK(all_zero(p, n));
		p[0] = p[n - 1] = 1;
		cnt_table_free(p, n);
	}
	CHECK_EQ_INT(cnt_table_fault_in(NULL, 0), 0);
}

/* Whether [p, p + n) lies in one mapping of /proc/self/maps. */
static int one_mapping(const void *p, size_t n)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char line[512];
	int found = 0;

	if (f == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= (uintptr_t)p && (uintptr_t)p + n <= hi)
			found = 1;
	fclose(f);
	return found;
}

/* A mapping that cannot grow where it is (a page mapped right after it)
 * is moved whole to a new 2 MiB boundary: its bytes kept, the rest zero,
 * one mapping still, so it grows in place next time.  Sizes that are not
 * multiples of 2 MiB: the kernel aligns those of whole huge pages itself. */
static void test_grow_moved(void)
{
	size_t first = (6u << 20) + 12288, second = (12u << 20) + 20480, third = (14u << 20) + 4096;
	uint8_t *p = cnt_table_alloc(first), *q = NULL, *r = NULL;
	void *block = MAP_FAILED;

	CHECK(p != NULL);
	if (p == NULL)
		return;
	CHECK_EQ_INT((uintptr_t)p % (2u << 20), 0);
	for (size_t i = 0; i < first; i++)
		p[i] = (uint8_t)(i * 7 + 1);
	/* first is a whole number of pages: the block is the next page */
	block = mmap(p + first, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	CHECK(block == p + first);
	q = cnt_table_grow(p, first, second);
	CHECK(q != NULL && q != p);
	if (q == NULL) {
		cnt_table_free(p, first);
		goto out;
	}
	CHECK_EQ_INT((uintptr_t)q % (2u << 20), 0);
	CHECK(one_mapping(q, second));
	CHECK(pattern_kept(q, first));
	CHECK(all_zero(q + first, second - first));
	for (size_t i = first; i < second; i++)
		q[i] = (uint8_t)(i * 7 + 1);
	r = cnt_table_grow(q, second, third);
	CHECK(r != NULL);
	if (r == NULL) {
		cnt_table_free(q, second);
		goto out;
	}
	CHECK(one_mapping(r, third));
	CHECK(pattern_kept(r, second));
	CHECK(all_zero(r + second, third - second));
	cnt_table_free(r, third);
out:
	if (block != MAP_FAILED)
		munmap(block, 4096);
}

/* A slot of the test tables: key (its hash is the key itself, so that
 * homes can be chosen) and a value, never 0 in a used slot. */
typedef struct tslot {
	uint64_t key, val;
} tslot;

static uint64_t key_hash(const void *slot, void *ctx)
{
	(void)ctx;
	return ((const tslot *)slot)->key;
}

static void tput(tslot *t, size_t m, uint64_t key)
{
	size_t j;

	for (j = key & m; t[j].val; j = (j + 1) & m)
		;
	t[j].key = key;
	t[j].val = key * 2 + 1;
}

/* Entries of t (mask m) found by a lookup from their home; all must be. */
static size_t found(const tslot *t, size_t m, const uint64_t *keys, size_t n)
{
	size_t hits = 0;

	for (size_t k = 0; k < n; k++)
		for (size_t j = keys[k] & m; t[j].val; j = (j + 1) & m)
			if (t[j].key == keys[k] && t[j].val == keys[k] * 2 + 1) {
				hits++;
				break;
			}
	return hits;
}

static size_t used(const tslot *t, size_t n)
{
	size_t u = 0;

	for (size_t i = 0; i < n; i++)
		u += t[i].val != 0;
	return u;
}

/* keys[0..n) into a table of size slots, doubled; every key found again. */
static void double_and_check(size_t size, const uint64_t *keys, size_t n)
{
	tslot *t = cnt_table_alloc(size * sizeof(*t)), *d;

	CHECK(t != NULL);
	if (t == NULL)
		return;
	for (size_t k = 0; k < n; k++)
		tput(t, size - 1, keys[k]);
	CHECK_EQ_INT(found(t, size - 1, keys, n), n);
	d = cnt_table_double(t, size, sizeof(*t), key_hash, NULL);
	CHECK(d != NULL);
	if (d == NULL) {
		cnt_table_free(t, size * sizeof(*t));
		return;
	}
	CHECK_EQ_INT(used(d, 2 * size), n);
	CHECK_EQ_INT(found(d, 2 * size - 1, keys, n), n);
	cnt_table_free(d, 2 * size * sizeof(*d));
}

static void test_double_wrapping_cluster(void)
{
	/* 8 slots: 15 lands at 7, 7 wraps to 0 behind it, 23 to 1, and 6 sits
	 * at home.  Doubled, 15 moves to the upper half and 7 must still be
	 * found from its home 7: putting 7 again before 15 had moved would
	 * put it past 15 (at 8), and 15's move would then cut it off. */
	uint64_t keys[] = {6, 15, 7, 23};

	double_and_check(8, keys, 4);
	/* the same with the cluster running further round */
	{
		uint64_t more[] = {13, 5, 21, 29, 14, 6, 30};

		double_and_check(8, more, 7);
	}
}

static void test_double_random(void)
{
	uint64_t x = 0x9e3779b97f4a7c15u;
	static uint64_t keys[1 << 16];

	for (int round = 0; round < 400; round++) {
		size_t size = (size_t)8 << (round % 10), n;

		/* half full (the tables' own limit) up to full but one slot */
		n = round % 3 == 0 ? size - 1 : round % 3 == 1 ? size / 2 : size * 3 / 4;
		for (size_t k = 0; k < n; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* homes crowded into the last quarter in some rounds */
			keys[k] = round % 4 == 0 ? (x & ~(uint64_t)(size - 1)) | (size - 1 - x % (size / 4)) : x;
		}
		double_and_check(size, keys, n);
	}
	/* large: the table is mapped and remapped (4 MiB and up) */
	for (size_t k = 0; k < 1 << 16; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		keys[k] = x;
	}
	double_and_check((size_t)1 << 18, keys, 1 << 16);
}

static void test_double_full(void)
{
	tslot *t = cnt_table_alloc(8 * sizeof(*t));

	CHECK(t != NULL);
	for (uint64_t k = 0; t && k < 8; k++)
		tput(t, 7, k * 3);
	/* no empty slot: refused, the table as it was */
	CHECK(cnt_table_double(t, 8, sizeof(*t), key_hash, NULL) == NULL);
	CHECK_EQ_INT(used(t, 8), 8);
	cnt_table_free(t, 8 * sizeof(*t));
}

int main(void)
{
	RUN(test_grow_keeps_contents);
	RUN(test_alloc);
	RUN(test_fault_in);
	RUN(test_grow_moved);
	RUN(test_double_wrapping_cluster);
	RUN(test_double_random);
	RUN(test_double_full);
	return unit_report("test_table");
}
