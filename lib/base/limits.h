/*
 * bounds.h - bounds on what a hostile or corrupt file can make a reader
 * allocate or loop over.  Every reader takes one; cnt_limits_default()
 * gives the documented defaults (cnt-event(5), "Bounds").  An error that a
 * bound causes names the bound, so an operator can tell a hostile or corrupt
 * file from a legitimately large one; the bounds are far above anything cnt
 * writes (its blocks are 256 KiB), so no option changes them.
 */
#ifndef CNT_LIMITS_H
#define CNT_LIMITS_H

#include <stddef.h>

typedef struct cnt_limits {
	size_t max_block_bytes;   /* a block as stored (compressed): 64 MiB */
	size_t max_block_decoded; /* a block after decompression: 256 MiB */
	size_t max_string;        /* one string or bytes value: 16 MiB */
	size_t max_collection;    /* items in one array or map: 1 Mi */
	size_t max_header;        /* header metadata, all entries: 16 MiB */
	int max_depth;            /* nesting of values: 64 */
} cnt_limits;

static inline cnt_limits cnt_limits_default(void)
{
	cnt_limits l = {64u << 20, 256u << 20, 16u << 20, 1u << 20, 16u << 20, 64};

	return l;
}

#endif
