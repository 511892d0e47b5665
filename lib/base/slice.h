/*
 * slice.h - a byte string that is not NUL-terminated, pointing into
 * someone else's storage.
 */
#ifndef CNT_SLICE_H
#define CNT_SLICE_H

#include <stddef.h>

/* p == NULL means the field was absent (a JSON null, or an empty CSV cell,
 * counts as absent); a present empty string has p != NULL and n == 0. */
typedef struct cnt_slice {
	const char *p;
	size_t n;
} cnt_slice;

#endif
