/*
 * codec.h - the block codecs of the Avro object container file.
 *
 * Each data block of a container is compressed with the codec named by the
 * header metadata key "avro.codec" (Avro 1.11 specification, "Required
 * Codecs" and "Optional Codecs"); lib/avro/codec.c describes the byte format of
 * each one.  This module only turns one block payload into another; the
 * container framing lives elsewhere.
 */
#ifndef CNT_CODEC_H
#define CNT_CODEC_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

typedef enum cnt_codec_id {
	CNT_CODEC_NULL,
	CNT_CODEC_DEFLATE,
	CNT_CODEC_SNAPPY,
	CNT_CODEC_XZ,
	CNT_CODEC_ZSTD,
	CNT_CODEC_BZIP2
} cnt_codec_id;

#define CNT_CODEC_COUNT 6

/* Looks up an avro.codec value: exactly one of "null", "deflate", "snappy",
 * "xz", "zstandard", "bzip2" (case-sensitive); name need not be
 * NUL-terminated, n is its length.  Returns 0 and sets *out, or -1 when the
 * name is unknown (*out untouched). */
int cnt_codec_lookup(const char *name, size_t n, cnt_codec_id *out);

/* Returns the avro.codec spelling of id (a static string), or NULL when id
 * is not a codec. */
const char *cnt_codec_name(cnt_codec_id id);

/* Reusable (de)compression state: one zstd context per direction, a zlib
 * stream per direction, an xz decoder, each created on first use.  Not
 * thread-safe; use one per thread. */
typedef struct cnt_codec cnt_codec;

/* Returns a new, empty codec state, or NULL when out of memory.  The caller
 * frees it with cnt_codec_free(). */
cnt_codec *cnt_codec_new(void);

/* Frees c and every context it holds.  c may be NULL. */
void cnt_codec_free(cnt_codec *c);

/* Decompresses one block payload in[0..n) with codec id into out (out->len
 * is set to 0 first; out keeps its storage between calls, so a reader that
 * reuses one buffer allocates only while blocks grow).  Returns 0, or -1 with
 * err set (and out->len 0) when the result would exceed max_out bytes
 * ("decompressed block exceeds the N-byte bound"), when the data is corrupt,
 * truncated or followed by trailing bytes, or on a snappy CRC32 mismatch.
 * An empty payload is an error for every codec but null (a zero-record block
 * still holds a compressed empty stream; skip decompression for it if a
 * writer stores nothing).  Messages start with the codec's name.
 * However hostile the input, out never grows beyond max_out + 1 bytes: sizes
 * claimed in frame headers are trusted only when they are within the bound.
 * Codec-internal memory is bounded separately (xz decoder memory limit
 * CNT_CODEC_XZ_MEMLIMIT; zstd window at most 2^27 bytes). */
int cnt_codec_decompress(cnt_codec *c, cnt_codec_id id, const uint8_t *in,
	size_t n, cnt_buf *out, size_t max_out, cnt_err *err);

/* The xz decoder's memory limit: enough for every preset (0..9 and 9e). */
#define CNT_CODEC_XZ_MEMLIMIT ((uint64_t)128 << 20)

/* The level that selects a codec's default (cnt_codec_compress); every
 * other int is a level the codec is asked for, negative ones included
 * (zstandard's fast levels). */
#define CNT_LEVEL_DEFAULT INT_MIN

/* Compresses in[0..n) with codec id into out (out->len is set to 0 first).
 * level CNT_LEVEL_DEFAULT selects the codec's default (zstandard 3,
 * deflate 6, xz 6, bzip2 9); any other must lie in the codec's range
 * (zstandard ZSTD_minCLevel()..-1, its fast levels, or 1..max; deflate
 * 0..9, xz 0..9, bzip2 1..9) and is ignored by null and snappy.
 * The output is deterministic: the same input, codec and level give the
 * same bytes (zstandard frames carry their content size and a checksum).
 * Returns 0, or -1 with err set (bad level, out of memory, library error). */
int cnt_codec_compress(cnt_codec *c, cnt_codec_id id, int level,
	const uint8_t *in, size_t n, cnt_buf *out, cnt_err *err);

#endif
