/*
 * table.c - memory for large hash tables (see table.h).
 */
#include "base/table.h"

#include <stdlib.h>
#include <sys/mman.h>

void *cnt_table_alloc(size_t bytes)
{
	void *p;

	if (bytes < (4u << 20))
		return calloc(1, bytes);
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

void cnt_table_free(void *p, size_t bytes)
{
	if (p == NULL)
		return;
	if (bytes < (4u << 20))
		free(p);
	else
		munmap(p, bytes);
}
