/*
 * buf.h - a growable byte buffer.
 *
 * Growth is geometric; cnt_buf_reserve() is the only place that allocates.
 * A buffer that fails to grow keeps its old contents and returns -1.
 */
#ifndef CNT_BUF_H
#define CNT_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct cnt_buf {
	uint8_t *p;
	size_t len;
	size_t cap;
} cnt_buf;

#define CNT_BUF_INIT {NULL, 0, 0}

/* Ensures room for len + extra bytes.  Returns 0, or -1 when out of memory. */
int cnt_buf_reserve(cnt_buf *b, size_t extra);
/* Appends n bytes.  Returns 0 or -1 (out of memory). */
int cnt_buf_append(cnt_buf *b, const void *p, size_t n);
/* Appends a printf-formatted string (without its NUL).  Returns 0 or -1. */
int cnt_buf_printf(cnt_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Frees the storage; the buffer is empty and reusable afterwards. */
void cnt_buf_release(cnt_buf *b);

static inline int cnt_buf_putc(cnt_buf *b, uint8_t c)
{
	if (b->len == b->cap && cnt_buf_reserve(b, 1) != 0)
		return -1;
	b->p[b->len++] = c;
	return 0;
}

#endif
