/*
 * binary.h - Avro binary encoding primitives (Avro 1.11 specification,
 * "Binary Encoding"): int and long are zig-zag varints, float and double
 * little-endian IEEE 754, bytes and string a long length then the bytes.
 *
 * A cursor never reads past its end: every reader returns 0, or -1 when
 * the data ends early or a varint runs past 10 bytes.  Callers turn -1
 * into a positioned error message.
 */
#ifndef CNT_ENCODING_H
#define CNT_ENCODING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/buf.h"

typedef struct cnt_cur {
	const uint8_t *p;
	const uint8_t *end;
} cnt_cur;

/* The readers are forced inline: they are the inner loop of every
 * decoder, and a call per field costs more than the field. */
#define CNT_BIN_INLINE static inline __attribute__((always_inline))

CNT_BIN_INLINE int cnt_bin_read_long(cnt_cur *c, int64_t *out)
{
	const uint8_t *p = c->p;
	uint64_t v = 0;
	unsigned shift = 0;

	/* Fast path: one-byte varints dominate (lengths, small deltas). */
	if (p < c->end && *p < 0x80) {
		v = *p;
		c->p = p + 1;
		*out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
		return 0;
	}
	if (c->end - p >= 10) {
		/* Ten bytes at hand: no bound to check per byte. */
		for (unsigned i = 0; i < 10; i++) {
			uint8_t b = p[i];

			v |= (uint64_t)(b & 0x7f) << (7 * i);
			if (!(b & 0x80)) {
				c->p = p + i + 1;
				*out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
				return 0;
			}
		}
		return -1;
	}
	for (;;) {
		uint8_t b;

		if (p >= c->end || shift > 63)
			return -1;
		b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		shift += 7;
	}
	c->p = p;
	*out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
	return 0;
}

CNT_BIN_INLINE int cnt_bin_read_int(cnt_cur *c, int32_t *out)
{
	int64_t v;

	if (cnt_bin_read_long(c, &v) != 0 || v < INT32_MIN || v > INT32_MAX)
		return -1;
	*out = (int32_t)v;
	return 0;
}

/* Reads a length-prefixed byte string as a slice into the cursor's data.
 * On failure the cursor is left where it was (at the length), so a caller
 * can re-read the claimed length for its message. */
CNT_BIN_INLINE int cnt_bin_read_bytes(cnt_cur *c, const uint8_t **p, size_t *n)
{
	cnt_cur t = *c;
	int64_t len;

	if (cnt_bin_read_long(&t, &len) != 0 || len < 0 || (uint64_t)len > (uint64_t)(t.end - t.p))
		return -1;
	*p = t.p;
	*n = (size_t)len;
	c->p = t.p + len;
	return 0;
}

static inline int cnt_bin_read_double(cnt_cur *c, double *out)
{
	if (c->end - c->p < 8)
		return -1;
	memcpy(out, c->p, 8);
	c->p += 8;
	return 0;
}

static inline int cnt_bin_read_float(cnt_cur *c, float *out)
{
	if (c->end - c->p < 4)
		return -1;
	memcpy(out, c->p, 4);
	c->p += 4;
	return 0;
}

/* Writes a zig-zag varint into dst (room for 10 bytes); returns its length. */
static inline size_t cnt_bin_put_long(uint8_t *dst, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;

	while (z >= 0x80) {
		dst[n++] = (uint8_t)(z | 0x80);
		z >>= 7;
	}
	dst[n++] = (uint8_t)z;
	return n;
}

static inline int cnt_bin_write_long(cnt_buf *b, int64_t v)
{
	if (b->cap - b->len < 10 && cnt_buf_reserve(b, 10) != 0)
		return -1;
	b->len += cnt_bin_put_long(b->p + b->len, v);
	return 0;
}

static inline int cnt_bin_write_bytes(cnt_buf *b, const void *p, size_t n)
{
	if (cnt_buf_reserve(b, n + 10) != 0)
		return -1;
	b->len += cnt_bin_put_long(b->p + b->len, (int64_t)n);
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

#endif
