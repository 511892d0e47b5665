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
