/*
 * table.h - zeroed memory for large hash tables.
 *
 * Above 4 MiB the memory is mapped directly, with huge pages asked for: a
 * lookup is one random access, and with 4 KiB pages most of them would
 * also miss the TLB.  Below, it is calloc'd.
 */
#ifndef CNT_TABLE_H
#define CNT_TABLE_H

#include <stddef.h>

/* Zeroed memory of bytes, or NULL when out of memory.  Free with
 * cnt_table_free and the same size. */
void *cnt_table_alloc(size_t bytes);
void cnt_table_free(void *p, size_t bytes);

#endif
