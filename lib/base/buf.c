#include "base/buf.h"
#include "base/table.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int cnt_buf_reserve(cnt_buf *b, size_t extra)
{
	size_t need, cap;
	uint8_t *p;

	if (extra > SIZE_MAX - b->len)
		return -1;
	need = b->len + extra;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = realloc(b->p, cap);
	if (p == NULL)
		return -1;
	b->p = p;
	b->cap = cap;
	cnt_mem_huge(p, cap); /* a big pool's fresh pages faulted in 2 MiB at a time */
	return 0;
}

int cnt_buf_append(cnt_buf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	if (cnt_buf_reserve(b, n) != 0)
		return -1;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

int cnt_buf_printf(cnt_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || cnt_buf_reserve(b, (size_t)n + 1) != 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf((char *)b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void cnt_buf_release(cnt_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}
