/*
 * table.c - memory for large hash tables (see table.h).
 */
#include "base/table.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAPPED ((size_t)4 << 20)

/* A mapping (or MAP_FAILED) of bytes, huge pages asked for. */
static void *huge(void *p, size_t bytes)
{
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

static void *map(size_t bytes)
{
	return huge(mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), bytes);
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

void *cnt_table_grow(void *p, size_t old_bytes, size_t bytes)
{
	void *n;

	if (old_bytes >= MAPPED && bytes >= MAPPED)
		return huge(mremap(p, old_bytes, bytes, MREMAP_MAYMOVE), bytes);
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
