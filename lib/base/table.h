/*
 * table.h - zeroed memory for large hash tables.
 *
 * Above 4 MiB the memory is mapped directly, with huge pages asked for: a
 * lookup is one random access, and with 4 KiB pages most of them would
 * also miss the TLB.  Below, it comes from the heap.  Either way it is
 * 64-byte aligned, so entries of a multiple of 64 bytes are whole cache
 * lines.
 */
#ifndef CNT_TABLE_H
#define CNT_TABLE_H

#include <stddef.h>

/* Zeroed memory of bytes, or NULL when out of memory.  Free with
 * cnt_table_free and the same size. */
void *cnt_table_alloc(size_t bytes);
void cnt_table_free(void *p, size_t bytes);
/* p (of old_bytes, or NULL) grown or shrunk to bytes, its contents kept
 * (mapped memory is remapped, not copied); the new part is zero.  NULL
 * when out of memory, p then untouched. */
void *cnt_table_grow(void *p, size_t old_bytes, size_t bytes);

#endif
