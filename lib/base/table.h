/*
 * table.h - zeroed memory for large hash tables.
 *
 * Above 4 MiB the memory is mapped directly, on a 2 MiB boundary, with
 * huge pages asked for: a lookup is one random access, and with 4 KiB
 * pages most of them would also miss the TLB.  Grown, a mapping is
 * remapped in place or moved to another 2 MiB boundary, so its huge
 * pages stay whole (the allocator's realloc moves a block anywhere, and
 * the kernel splits every huge page it moves off its boundary).  Below
 * 4 MiB, the memory comes from the heap.  Either way it is
 * 64-byte aligned, so entries of a multiple of 64 bytes are whole cache
 * lines.
 */
#ifndef CNT_TABLE_H
#define CNT_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* Zeroed memory of bytes, or NULL when out of memory.  Free with
 * cnt_table_free and the same size. */
void *cnt_table_alloc(size_t bytes);
void cnt_table_free(void *p, size_t bytes);

/* Faults in the memory of a table from cnt_table_alloc now, on two
 * threads where there are two processors.  A hash table's first entries
 * land all over it, so its first use faults in all its pages at once
 * anyway, one after the other on the one thread, while the others may
 * wait on it: where fresh memory is dear (in a virtual machine whose
 * host hands it out only when touched, about 1 s a GiB on the machines
 * cnt is measured on), cnt-ingest's first half second went to its
 * duplicate table on one processor and the other idled.  0, or -1 when
 * the kernel cannot (MADV_POPULATE_WRITE came with Linux 5.14; a part
 * it cannot fault in is faulted in when used, as before). */
int cnt_table_fault_in(void *p, size_t bytes);
/* p (of old_bytes, or NULL) grown or shrunk to bytes, its contents kept
 * (mapped memory is remapped, not copied); the new part is zero.  NULL
 * when out of memory, p then untouched. */
void *cnt_table_grow(void *p, size_t old_bytes, size_t bytes);
/* Asks for huge pages under p's bytes when they are at least 4 MiB (a
 * block of malloc or realloc; pages touched before are left as they are,
 * so ask before filling it): for big arrays.  A page fault costs several
 * microseconds on a virtual machine, and a 4 KiB page is faulted in 512
 * times as often as a 2 MiB one.  Only advice: nothing changes when it
 * is refused. */
void cnt_mem_huge(void *p, size_t bytes);

/*
 * Doubles an open-addressed hash table in place: nslots slots (a power of
 * two) of size bytes each at t, probed linearly from hash & (nslots - 1)
 * with wrap-around, a slot of all zero bytes empty and no slot ever
 * deleted.  The table is grown as cnt_table_grow does, so only the new
 * half is fresh memory, and every entry is put again under the new mask.
 * hash(slot, ctx) gives an entry's hash.  Returns the table of 2 * nslots
 * slots, or NULL when out of memory (t then untouched) or when t has no
 * empty slot.
 */
void *cnt_table_double(void *t, size_t nslots, size_t size, uint64_t (*hash)(const void *slot, void *ctx), void *ctx);

#endif
