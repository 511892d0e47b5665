/*
 * table.c - memory for large hash tables (see table.h).
 */
#include "base/table.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAPPED ((size_t)4 << 20)

#define HUGE ((size_t)2 << 20)

/* Huge pages asked for under the mapping at p: only advice. */
static void advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE);
#else
	(void)p;
	(void)bytes;
#endif
}

/*
 * A mapping of bytes (NULL when out of memory) at a 2 MiB boundary, huge
 * pages asked for.  On the boundary, a huge page can back every 2 MiB of
 * it, and mremap can move the mapping to another boundary with its huge
 * pages whole: moved elsewhere, the kernel splits each into 512 small
 * ones, and a table read at random then misses the TLB at every access
 * again (on a virtual machine with shadowed page tables each miss costs
 * microseconds).
 */
static void *map(size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), keep = (bytes + page - 1) & ~(page - 1), len = keep + HUGE;
	uint8_t *p, *a;

	if (bytes > SIZE_MAX / 2)
		return NULL;
	if ((p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
		return NULL;
	a = (uint8_t *)(((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (p + len > a + keep)
		munmap(a + keep, (size_t)(p + len - (a + keep)));
	advise_huge(a, keep);
	return a;
}

void cnt_mem_huge(void *p, size_t bytes)
{
	/* Whole pages, not only the 2 MiB-aligned part: advice on part of a
	 * mapping splits it, and the allocator's realloc can then no longer
	 * remap a block it mapped whole, but copies it. */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t a, z;

	if (p == NULL || bytes < MAPPED)
		return;
	a = (uintptr_t)p & ~(uintptr_t)(page - 1);
	z = ((uintptr_t)p + bytes + page - 1) & ~(uintptr_t)(page - 1);
	advise_huge((void *)a, z - a);
}

void *cnt_table_alloc(size_t bytes)
{
	void *p;

	if (bytes >= MAPPED)
		return map(bytes);
	if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0)
		return NULL;
	memset(p, 0, bytes);
	return p;
}

/* The part of a table one thread faults in. */
typedef struct {
	uint8_t *p;
	size_t n;
	int rc;
} part;

static void *fault_part(void *arg)
{
	part *f = arg;

#ifdef MADV_POPULATE_WRITE
	f->rc = f->n == 0 || madvise(f->p, f->n, MADV_POPULATE_WRITE) == 0 ? 0 : -1;
#else
	f->rc = -1;
#endif
	return NULL;
}

int cnt_table_fault_in(void *p, size_t bytes)
{
	/* halves on a huge page's boundary, so that no huge page is
	 * faulted in by both threads */
	size_t half = (bytes / 2) & ~(HUGE - 1);
	part f[2] = {{(uint8_t *)p, half, 0}, {(uint8_t *)p + half, bytes - half, 0}};
	pthread_t t;
	int started;

	if (p == NULL || bytes < MAPPED)
		return 0;   /* zeroed by cnt_table_alloc: in already */
#ifndef MADV_POPULATE_WRITE
	return -1;
#endif
	started = sysconf(_SC_NPROCESSORS_ONLN) > 1 && pthread_create(&t, NULL, fault_part, &f[1]) == 0;
	fault_part(&f[0]);
	if (started)
		pthread_join(t, NULL);
	else
		fault_part(&f[1]);
	return f[0].rc == 0 && f[1].rc == 0 ? 0 : -1;
}

void *cnt_table_grow(void *p, size_t old_bytes, size_t bytes)
{
	void *n;

	if (old_bytes >= MAPPED && bytes >= MAPPED) {
		/* In place when it can be (shrinking always can); else moved
		 * and grown at once onto a new 2 MiB boundary (map's, which
		 * the move replaces), its pages neither copied nor split, and
		 * one mapping still, so that the next growth can be in place
		 * (a move of a range of several mappings fails before Linux
		 * 6.17). */
		if (mremap(p, old_bytes, bytes, 0) != MAP_FAILED) {
			advise_huge(p, bytes);
			return p;
		}
		if ((n = map(bytes)) == NULL)
			return NULL;
		if (mremap(p, old_bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, n) == MAP_FAILED) {
			munmap(n, bytes);
			return NULL;
		}
		advise_huge(n, bytes);
		return n;
	}
	if ((n = cnt_table_alloc(bytes)) == NULL)
		return NULL;
	if (p != NULL)
		memcpy(n, p, old_bytes < bytes ? old_bytes : bytes);
	cnt_table_free(p, old_bytes);
	return n;
}

void cnt_table_free(void *p, size_t bytes)
{
	if (p == NULL)
		return;
	if (bytes >= MAPPED)
		munmap(p, bytes);
	else
		free(p);
}

static int empty(const unsigned char *s, size_t size)
{
	if (size % 8 == 0) {
		for (size_t i = 0; i < size; i += 8) {
			uint64_t w;

			memcpy(&w, s + i, 8);
			if (w)
				return 0;
		}
		return 1;
	}
	for (size_t i = 0; i < size; i++)
		if (s[i])
			return 0;
	return 1;
}

/* Puts the entry e at its home under mask m or the first empty slot after. */
static void put(unsigned char *t, size_t m, size_t size, const void *e, uint64_t h)
{
	size_t j;

	for (j = h & m; !empty(t + j * size, size); j = (j + 1) & m)
		;
	memcpy(t + j * size, e, size);
}

/*
 * Each entry's home under the new mask is its old home h or h + S (S the
 * old number of slots).  First the entries before the table's first empty
 * slot are set aside: that is where a cluster wrapping from the end of
 * the table to its start lies, so every entry left sits at or after its
 * home.  Then the slots are taken in order, each emptied and its entry
 * put again.  An entry put again lands at or before its own emptied slot,
 * or in the upper half, which holds only entries put again; so it never
 * probes past an entry not yet moved, whose removal would later cut its
 * probe chain.  The entries set aside go in last, as ordinary inserts.
 */
void *cnt_table_double(void *t, size_t nslots, size_t size, uint64_t (*hash)(const void *slot, void *ctx), void *ctx)
{
	size_t e, m = 2 * nslots - 1, nw = 0;
	unsigned char *p = t, *wrap, *one;

	for (e = 0; e < nslots && !empty(p + e * size, size); e++)
		;
	if (e == nslots)
		return NULL;
	if ((wrap = malloc((e + 1) * size)) == NULL)
		return NULL;
	one = wrap + e * size;     /* scratch for the entry being moved */
	if ((p = cnt_table_grow(t, nslots * size, 2 * nslots * size)) == NULL) {
		free(wrap);
		return NULL;
	}
	for (size_t i = 0; i < e; i++) {
		memcpy(wrap + nw++ * size, p + i * size, size);
		memset(p + i * size, 0, size);
	}
	for (size_t i = e + 1; i < nslots; i++) {
		unsigned char *s = p + i * size;

		if (empty(s, size))
			continue;
		memcpy(one, s, size);
		memset(s, 0, size);
		put(p, m, size, one, hash(one, ctx));
	}
	for (size_t i = 0; i < nw; i++)
		put(p, m, size, wrap + i * size, hash(wrap + i * size, ctx));
	free(wrap);
	return p;
}
