/*
 * codec.c - the Avro container block codecs.
 *
 * The Avro 1.11 specification ("Object Container Files", "Required Codecs",
 * "Optional Codecs") compresses every data block on its own, with the codec
 * named by the header metadata "avro.codec".  What each codec puts in the
 * block payload:
 *
 *   null       the serialized records, unchanged.
 *   deflate    a RAW deflate stream (RFC 1951): no zlib header, no Adler-32
 *              trailer (zlib with windowBits -15; Java's Deflater(nowrap)).
 *   snappy     a raw snappy block (not the framed format) followed by 4
 *              bytes: the CRC-32 (ISO 3309, zlib's crc32) of the
 *              UNCOMPRESSED data, big-endian.  We verify it on read.
 *   xz         a complete .xz stream (liblzma; Java's XZOutputStream).  We
 *              write check CRC64 like Java does, and read any check.
 *   zstandard  one or more zstd frames.  Java (zstd-jni's ZstdOutputStream)
 *              writes frames WITHOUT a content size in the header, so a
 *              frame's size is known only by decoding it; we write frames
 *              with the content size and a checksum.
 *   bzip2      a bzip2 stream (libbz2; Java's commons-compress).
 *
 * A payload is read whole: trailing bytes after the last stream or frame
 * are corruption, not something to skip - except for deflate, where
 * Python's avro leaves three bytes of a zlib trailer after every stream
 * (see deflate_decompress).  Concatenated xz and bzip2 streams
 * and concatenated zstd frames are accepted, since each format defines the
 * concatenation as the concatenated data.
 *
 * Bounding what a hostile block can make us allocate: the caller passes
 * max_out, the largest decompressed block it accepts.  The output buffer is
 * grown here (decomp_grow) to at most max_out + 1 bytes - the one byte more
 * is how a streaming decoder shows that the data does not end at the bound.
 * Sizes stated inside the data (snappy's preamble, a zstd frame's content
 * size) are used to size the buffer in one step, but only once checked
 * against the bound, so a frame claiming 2^40 bytes fails before any
 * allocation.  Codec-internal state is bounded by the libraries' limits
 * (xz: CNT_CODEC_XZ_MEMLIMIT; zstd: the default 2^27-byte window limit).
 *
 * Speed: zstandard is the codec of the hot path.  One ZSTD_DCtx is kept for
 * the life of the cnt_codec; a frame that states its content size is
 * decompressed in one call straight into the output storage, and only
 * frames without one go through the streaming decoder.
 */
#include "avro/codec.h"

#include <bzlib.h>
#include <lzma.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

/* zlib's and libbz2's lengths are unsigned int. */
#define UINT_MAXV ((unsigned)-1)

struct cnt_codec {
	ZSTD_DCtx *zdctx;
	ZSTD_CCtx *zcctx;
	z_stream inflater;
	int inflater_ready;
	z_stream deflater;
	int deflater_level;	/* level the deflater was made for; -1: none */
	lzma_stream xz;
	int xz_ready;
};

static const char *const codec_names[CNT_CODEC_COUNT] = {
	[CNT_CODEC_NULL] = "null",
	[CNT_CODEC_DEFLATE] = "deflate",
	[CNT_CODEC_SNAPPY] = "snappy",
	[CNT_CODEC_XZ] = "xz",
	[CNT_CODEC_ZSTD] = "zstandard",
	[CNT_CODEC_BZIP2] = "bzip2",
};

int cnt_codec_lookup(const char *name, size_t n, cnt_codec_id *out)
{
	int i;

	if (name == NULL)
		return -1;
	for (i = 0; i < CNT_CODEC_COUNT; i++) {
		if (strlen(codec_names[i]) == n &&
		    memcmp(codec_names[i], name, n) == 0) {
			*out = (cnt_codec_id)i;
			return 0;
		}
	}
	return -1;
}

const char *cnt_codec_name(cnt_codec_id id)
{
	if ((unsigned)id >= CNT_CODEC_COUNT)
		return NULL;
	return codec_names[id];
}

cnt_codec *cnt_codec_new(void)
{
	cnt_codec *c = calloc(1, sizeof(*c));
	lzma_stream init = LZMA_STREAM_INIT;

	if (c == NULL)
		return NULL;
	c->deflater_level = -1;
	c->xz = init;
	return c;
}

void cnt_codec_free(cnt_codec *c)
{
	if (c == NULL)
		return;
	ZSTD_freeDCtx(c->zdctx);
	ZSTD_freeCCtx(c->zcctx);
	if (c->inflater_ready)
		inflateEnd(&c->inflater);
	if (c->deflater_level >= 0)
		deflateEnd(&c->deflater);
	if (c->xz_ready)
		lzma_end(&c->xz);
	free(c);
}

/* ---- decompression ---------------------------------------------------- */

/* A first guess at the output size: have + 4 * n, saturating. */
/* "<codec>: out of memory", of the kind that exits 4. */
static int codec_oom(cnt_err *err, const char *codec)
{
	cnt_err_nomem(err);
	return cnt_err_prefix(err, "%s", codec);
}

static size_t guess(size_t have, size_t n)
{
	if (n > (SIZE_MAX - have) / 4)
		return SIZE_MAX;
	return have + 4 * n;
}

static int bound_error(cnt_err *err, const char *codec, size_t max_out)
{
	return cnt_err_set(err, "%s: decompressed block exceeds the %zu-byte bound (max_block_decoded)",
		codec, max_out);
}

/* The most output storage a decompression may hold: max_out + 1. */
static size_t decomp_limit(size_t max_out)
{
	return max_out == SIZE_MAX ? SIZE_MAX : max_out + 1;
}

/*
 * Makes the capacity of out at least want (clamped to the limit), growing
 * geometrically otherwise.  Allocates exactly, unlike cnt_buf_reserve(),
 * which rounds up to a power of two and could double the bound; realloc
 * keeps the storage compatible with cnt_buf_release().  Fails with the
 * bound message when out is already full at the limit, i.e. holds more
 * than max_out bytes.
 */
static int decomp_grow(cnt_buf *out, size_t want, size_t max_out,
	const char *codec, cnt_err *err)
{
	size_t limit = decomp_limit(max_out), cap;
	uint8_t *p;

	if (out->len > max_out)
		return bound_error(err, codec, max_out);
	if (want <= out->cap && out->len < out->cap)
		return 0;
	cap = out->cap < 4096 ? 4096 : out->cap;
	if (cap <= SIZE_MAX / 2)
		cap *= 2;
	if (cap < want)
		cap = want;
	if (cap > limit)
		cap = limit;
	if (cap <= out->cap)
		return out->len < out->cap ? 0 : bound_error(err, codec, max_out);
	p = realloc(out->p, cap);
	if (p == NULL)
		return cnt_err_oom(err, "for a %zu-byte %s block", cap, codec);
	out->p = p;
	out->cap = cap;
	return 0;
}

static int decompress_null(const uint8_t *in, size_t n, cnt_buf *out,
	size_t max_out, cnt_err *err)
{
	if (n > max_out)
		return bound_error(err, "null", max_out);
	if (decomp_grow(out, n, max_out, "null", err) != 0)
		return -1;
	if (n > 0)
		memcpy(out->p, in, n);
	out->len = n;
	return 0;
}

static int decompress_deflate(cnt_codec *c, const uint8_t *in, size_t n,
	cnt_buf *out, size_t max_out, cnt_err *err)
{
	z_stream *z = &c->inflater;
	int ret;

	if (n > UINT_MAXV)
		return cnt_err_set(err, "deflate: %zu-byte block is too large", n);
	if (!c->inflater_ready) {
		memset(z, 0, sizeof(*z));
		if (inflateInit2(z, -15) != Z_OK)
			return cnt_err_set(err, "deflate: cannot initialise zlib");
		c->inflater_ready = 1;
	} else if (inflateReset(z) != Z_OK) {
		return cnt_err_set(err, "deflate: cannot reset zlib");
	}
	/* zlib's next_in is not const-qualified, although it never writes. */
	z->next_in = (Bytef *)(uintptr_t)in;
	z->avail_in = (uInt)n;
	for (;;) {
		size_t room;

		if (decomp_grow(out, guess(0, n), max_out, "deflate", err) != 0)
			return -1;
		room = out->cap - out->len;
		z->next_out = out->p + out->len;
		z->avail_out = room > UINT_MAXV ? UINT_MAXV : (uInt)room;
		room = z->avail_out;
		ret = inflate(z, Z_NO_FLUSH);
		out->len += room - z->avail_out;
		if (ret == Z_STREAM_END)
			break;
		if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT)
			return cnt_err_set(err, "deflate: corrupt data at input byte %zu: %s",
				n - z->avail_in, z->msg ? z->msg : "invalid stream");
		if (ret == Z_MEM_ERROR)
			return codec_oom(err, "deflate");
		if (ret != Z_OK && ret != Z_BUF_ERROR)
			return cnt_err_set(err, "deflate: zlib error %d", ret);
		if (z->avail_in == 0 && z->avail_out > 0)
			return cnt_err_set(err, "deflate: truncated data (%zu bytes, "
				"stream does not end)", n);
	}
	if (out->len > max_out)
		return bound_error(err, "deflate", max_out);
	/* Bytes after the end of the deflate stream are ignored, as Java's
	 * Inflater does: Python's avro writes zlib.compress(data)[2:-1], which
	 * leaves three bytes of the Adler-32 trailer behind every block. */
	return 0;
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
	return (uint32_t)crc32_z(crc32_z(0, Z_NULL, 0), p, n);
}

static int decompress_snappy(const uint8_t *in, size_t n, cnt_buf *out,
	size_t max_out, cnt_err *err)
{
	size_t ulen, got;
	uint32_t stored, computed;

	if (n < 4)
		return cnt_err_set(err, "snappy: truncated block (%zu bytes, "
			"no room for the CRC32)", n);
	n -= 4;
	if (snappy_uncompressed_length((const char *)in, n, &ulen) != SNAPPY_OK)
		return cnt_err_set(err, "snappy: corrupt length preamble");
	if (ulen > max_out)
		return bound_error(err, "snappy", max_out);
	if (decomp_grow(out, ulen > 0 ? ulen : 1, max_out, "snappy", err) != 0)
		return -1;
	got = out->cap;
	if (snappy_uncompress((const char *)in, n, (char *)out->p, &got) != SNAPPY_OK ||
	    got != ulen)
		return cnt_err_set(err, "snappy: corrupt or truncated data");
	out->len = got;
	stored = (uint32_t)in[n] << 24 | (uint32_t)in[n + 1] << 16 |
		(uint32_t)in[n + 2] << 8 | (uint32_t)in[n + 3];
	computed = crc32_of(out->p, got);
	if (stored != computed)
		return cnt_err_set(err, "snappy: CRC32 mismatch: block says %08x, "
			"data has %08x", stored, computed);
	return 0;
}

static int decompress_xz(cnt_codec *c, const uint8_t *in, size_t n,
	cnt_buf *out, size_t max_out, cnt_err *err)
{
	lzma_stream *s = &c->xz;
	lzma_ret ret;

	/* Re-initialising the same lzma_stream reuses the decoder's memory. */
	ret = lzma_stream_decoder(s, CNT_CODEC_XZ_MEMLIMIT, LZMA_CONCATENATED);
	if (ret != LZMA_OK)
		return cnt_err_set(err, "xz: cannot initialise liblzma (error %d)",
			(int)ret);
	c->xz_ready = 1;
	s->next_in = in;
	s->avail_in = n;
	for (;;) {
		size_t room;

		if (decomp_grow(out, guess(0, n), max_out, "xz", err) != 0)
			return -1;
		room = out->cap - out->len;
		s->next_out = out->p + out->len;
		s->avail_out = room;
		ret = lzma_code(s, LZMA_FINISH);
		out->len += room - s->avail_out;
		if (ret == LZMA_STREAM_END)
			break;
		switch (ret) {
		case LZMA_OK:
			continue;
		case LZMA_BUF_ERROR:
			if (s->avail_out == 0)
				continue;
			return cnt_err_set(err, "xz: truncated data (%zu bytes)", n);
		case LZMA_MEMLIMIT_ERROR:
			return cnt_err_set(err, "xz: stream needs more than the "
				"%llu-byte decoder memory limit",
				(unsigned long long)CNT_CODEC_XZ_MEMLIMIT);
		case LZMA_MEM_ERROR:
			return codec_oom(err, "xz");
		case LZMA_FORMAT_ERROR:
			return cnt_err_set(err, "xz: not an xz stream at input byte %zu",
				n - s->avail_in);
		case LZMA_OPTIONS_ERROR:
			return cnt_err_set(err, "xz: unsupported stream options");
		default:
			return cnt_err_set(err, "xz: corrupt data at input byte %zu "
				"(liblzma error %d)", n - s->avail_in, (int)ret);
		}
	}
	if (out->len > max_out)
		return bound_error(err, "xz", max_out);
	if (s->avail_in != 0)
		return cnt_err_set(err, "xz: %zu trailing bytes after the stream",
			s->avail_in);
	return 0;
}

static int decompress_bzip2(const uint8_t *in, size_t n, cnt_buf *out,
	size_t max_out, cnt_err *err)
{
	size_t pos = 0;

	if (n > UINT_MAXV)
		return cnt_err_set(err, "bzip2: %zu-byte block is too large", n);
	if (n == 0)
		return cnt_err_set(err, "bzip2: empty block (no stream)");
	while (pos < n) {	/* one bzip2 stream per turn */
		bz_stream s;
		int ret;

		memset(&s, 0, sizeof(s));
		if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK)
			return cnt_err_set(err, "bzip2: cannot initialise libbz2");
		s.next_in = (char *)(uintptr_t)(in + pos);
		s.avail_in = (unsigned)(n - pos);
		for (;;) {
			size_t room;

			if (decomp_grow(out, guess(0, n), max_out, "bzip2", err) != 0) {
				BZ2_bzDecompressEnd(&s);
				return -1;
			}
			room = out->cap - out->len;
			s.next_out = (char *)out->p + out->len;
			s.avail_out = room > UINT_MAXV ? UINT_MAXV : (unsigned)room;
			room = s.avail_out;
			ret = BZ2_bzDecompress(&s);
			out->len += room - s.avail_out;
			if (ret == BZ_STREAM_END)
				break;
			if (ret != BZ_OK) {
				size_t at = n - s.avail_in;

				BZ2_bzDecompressEnd(&s);
				if (ret == BZ_MEM_ERROR)
					return codec_oom(err, "bzip2");
				if (ret == BZ_DATA_ERROR_MAGIC && pos > 0)
					return cnt_err_set(err, "bzip2: %zu trailing bytes after the stream",
						n - pos);
				return cnt_err_set(err, "bzip2: corrupt data at input byte %zu "
					"(libbz2 error %d)", at, ret);
			}
			if (s.avail_in == 0 && s.avail_out > 0) {
				BZ2_bzDecompressEnd(&s);
				return cnt_err_set(err, "bzip2: truncated data (%zu bytes)", n);
			}
		}
		pos = n - s.avail_in;
		BZ2_bzDecompressEnd(&s);
		if (out->len > max_out)
			return bound_error(err, "bzip2", max_out);
	}
	return 0;
}

/*
 * The most content a frame of fsize bytes can hold: every block has a
 * 3-byte header and at least 1 byte of payload and holds at most 128 KiB
 * (RFC 8878, 3.1.1.2.3).  A header claiming more is lying, and we would
 * rather not allocate for the lie, even within the bound.
 */
static unsigned long long zstd_most(size_t fsize)
{
	return ((unsigned long long)fsize / 4 + 1) * (128u << 10);
}

/* One frame of unknown content size, through the streaming decoder. */
static int zstd_stream_frame(ZSTD_DCtx *d, const uint8_t *in, size_t n,
	size_t at, cnt_buf *out, size_t max_out, cnt_err *err)
{
	ZSTD_inBuffer ib = { in, n, 0 };

	ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
	for (;;) {
		ZSTD_outBuffer ob;
		size_t ret;

		if (decomp_grow(out, guess(out->len, n), max_out, "zstandard", err) != 0)
			return -1;
		ob.dst = out->p;
		ob.size = out->cap;
		ob.pos = out->len;
		ret = ZSTD_decompressStream(d, &ob, &ib);
		out->len = ob.pos;
		if (ZSTD_isError(ret))
			return cnt_err_set(err, "zstandard: corrupt frame at input byte %zu: %s",
				at, ZSTD_getErrorName(ret));
		if (ret == 0)
			break;
		if (ib.pos == ib.size && ob.pos < ob.size)
			return cnt_err_set(err, "zstandard: truncated frame at input byte %zu",
				at);
	}
	if (out->len > max_out)
		return bound_error(err, "zstandard", max_out);
	return 0;
}

static int decompress_zstd(cnt_codec *c, const uint8_t *in, size_t n,
	cnt_buf *out, size_t max_out, cnt_err *err)
{
	size_t pos = 0;

	if (n == 0)
		return cnt_err_set(err, "zstandard: empty block (no frame)");
	if (c->zdctx == NULL && (c->zdctx = ZSTD_createDCtx()) == NULL)
		return codec_oom(err, "zstandard");
	while (pos < n) {	/* one frame per turn */
		const uint8_t *f = in + pos;
		size_t fsize = ZSTD_findFrameCompressedSize(f, n - pos);
		unsigned long long csize;

		if (ZSTD_isError(fsize))
			return cnt_err_set(err, "zstandard: %s frame at input byte %zu: %s",
				pos > 0 ? "corrupt or trailing" : "corrupt or truncated", pos,
				ZSTD_getErrorName(fsize));
		csize = ZSTD_getFrameContentSize(f, fsize);
		if (csize == ZSTD_CONTENTSIZE_ERROR)
			return cnt_err_set(err, "zstandard: corrupt frame header at input byte %zu",
				pos);
		if (csize == ZSTD_CONTENTSIZE_UNKNOWN) {
			if (zstd_stream_frame(c->zdctx, f, fsize, pos, out, max_out, err) != 0)
				return -1;
		} else {
			size_t got;

			if (csize > max_out - out->len)
				return bound_error(err, "zstandard", max_out);
			if (csize > zstd_most(fsize))
				return cnt_err_set(err, "zstandard: frame at input byte %zu "
					"claims %llu bytes, more than its %zu bytes can hold",
					pos, csize, fsize);
			if (decomp_grow(out, out->len + (size_t)csize + 1, max_out,
			    "zstandard", err) != 0)
				return -1;
			got = ZSTD_decompressDCtx(c->zdctx, out->p + out->len,
				out->cap - out->len, f, fsize);
			if (ZSTD_isError(got))
				return cnt_err_set(err, "zstandard: corrupt frame at input byte %zu: %s",
					pos, ZSTD_getErrorName(got));
			if (got != csize)
				return cnt_err_set(err, "zstandard: frame at input byte %zu "
					"holds %zu bytes, its header says %llu", pos, got, csize);
			out->len += got;
		}
		pos += fsize;
	}
	return 0;
}

int cnt_codec_decompress(cnt_codec *c, cnt_codec_id id, const uint8_t *in,
	size_t n, cnt_buf *out, size_t max_out, cnt_err *err)
{
	int ret;

	out->len = 0;
	switch (id) {
	case CNT_CODEC_NULL:
		ret = decompress_null(in, n, out, max_out, err);
		break;
	case CNT_CODEC_DEFLATE:
		ret = decompress_deflate(c, in, n, out, max_out, err);
		break;
	case CNT_CODEC_SNAPPY:
		ret = decompress_snappy(in, n, out, max_out, err);
		break;
	case CNT_CODEC_XZ:
		ret = decompress_xz(c, in, n, out, max_out, err);
		break;
	case CNT_CODEC_ZSTD:
		ret = decompress_zstd(c, in, n, out, max_out, err);
		break;
	case CNT_CODEC_BZIP2:
		ret = decompress_bzip2(in, n, out, max_out, err);
		break;
	default:
		ret = cnt_err_set(err, "unknown codec %d", (int)id);
		break;
	}
	if (ret != 0)
		out->len = 0;
	return ret;
}

/* ---- compression ------------------------------------------------------ */

static int compress_deflate(cnt_codec *c, int level, const uint8_t *in,
	size_t n, cnt_buf *out, cnt_err *err)
{
	z_stream *z = &c->deflater;
	uLong bound;
	int ret;

	if (n > UINT_MAXV / 2)
		return cnt_err_set(err, "deflate: %zu-byte block is too large", n);
	if (c->deflater_level != level) {
		if (c->deflater_level >= 0)
			deflateEnd(z);
		c->deflater_level = -1;
		memset(z, 0, sizeof(*z));
		if (deflateInit2(z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return cnt_err_set(err, "deflate: cannot initialise zlib");
		c->deflater_level = level;
	} else if (deflateReset(z) != Z_OK) {
		return cnt_err_set(err, "deflate: cannot reset zlib");
	}
	bound = deflateBound(z, (uLong)n);
	if (cnt_buf_reserve(out, bound) != 0)
		return codec_oom(err, "deflate");
	z->next_in = (Bytef *)(uintptr_t)in;
	z->avail_in = (uInt)n;
	z->next_out = out->p;
	z->avail_out = (uInt)bound;
	ret = deflate(z, Z_FINISH);
	if (ret != Z_STREAM_END)
		return cnt_err_set(err, "deflate: zlib error %d", ret);
	out->len = bound - z->avail_out;
	return 0;
}

static int compress_snappy(const uint8_t *in, size_t n, cnt_buf *out,
	cnt_err *err)
{
	size_t len = snappy_max_compressed_length(n);
	uint32_t crc;

	if (cnt_buf_reserve(out, len + 4) != 0)
		return codec_oom(err, "snappy");
	if (snappy_compress((const char *)in, n, (char *)out->p, &len) != SNAPPY_OK)
		return cnt_err_set(err, "snappy: compression failed");
	crc = crc32_of(in, n);
	out->p[len] = (uint8_t)(crc >> 24);
	out->p[len + 1] = (uint8_t)(crc >> 16);
	out->p[len + 2] = (uint8_t)(crc >> 8);
	out->p[len + 3] = (uint8_t)crc;
	out->len = len + 4;
	return 0;
}

static int compress_xz(int level, const uint8_t *in, size_t n, cnt_buf *out,
	cnt_err *err)
{
	size_t bound = lzma_stream_buffer_bound(n), pos = 0;
	lzma_ret ret;

	if (bound == 0 || cnt_buf_reserve(out, bound) != 0)
		return codec_oom(err, "xz");
	ret = lzma_easy_buffer_encode((uint32_t)level, LZMA_CHECK_CRC64, NULL,
		in, n, out->p, &pos, bound);
	if (ret != LZMA_OK)
		return cnt_err_set(err, "xz: compression failed (liblzma error %d)",
			(int)ret);
	out->len = pos;
	return 0;
}

static int compress_zstd(cnt_codec *c, int level, const uint8_t *in, size_t n,
	cnt_buf *out, cnt_err *err)
{
	size_t bound = ZSTD_compressBound(n), got;

	if (c->zcctx == NULL && (c->zcctx = ZSTD_createCCtx()) == NULL)
		return codec_oom(err, "zstandard");
	ZSTD_CCtx_reset(c->zcctx, ZSTD_reset_session_and_parameters);
	if (ZSTD_isError(ZSTD_CCtx_setParameter(c->zcctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->zcctx, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->zcctx, ZSTD_c_contentSizeFlag, 1)))
		return cnt_err_set(err, "zstandard: cannot set level %d", level);
	if (ZSTD_isError(bound) || cnt_buf_reserve(out, bound) != 0)
		return codec_oom(err, "zstandard");
	got = ZSTD_compress2(c->zcctx, out->p, bound, in, n);
	if (ZSTD_isError(got))
		return cnt_err_set(err, "zstandard: %s", ZSTD_getErrorName(got));
	out->len = got;
	return 0;
}

static int compress_bzip2(int level, const uint8_t *in, size_t n,
	cnt_buf *out, cnt_err *err)
{
	size_t bound;
	unsigned got;
	int ret;

	if (n > UINT_MAXV / 2)
		return cnt_err_set(err, "bzip2: %zu-byte block is too large", n);
	bound = n + n / 100 + 600;	/* libbz2's documented worst case */
	if (cnt_buf_reserve(out, bound) != 0)
		return codec_oom(err, "bzip2");
	got = (unsigned)bound;
	ret = BZ2_bzBuffToBuffCompress((char *)out->p, &got,
		(char *)(uintptr_t)in, (unsigned)n, level, 0, 0);
	if (ret != BZ_OK)
		return cnt_err_set(err, "bzip2: compression failed (libbz2 error %d)", ret);
	out->len = got;
	return 0;
}

/* Checks level against the codec's range, or maps CNT_LEVEL_DEFAULT to
 * the codec's default.  Returns 0 or -1. */
static int pick_level(cnt_codec_id id, int level, int *out, cnt_err *err)
{
	int def, lo, hi;

	switch (id) {
	case CNT_CODEC_DEFLATE: def = 6; lo = 0; hi = 9; break;
	case CNT_CODEC_XZ: def = 6; lo = 0; hi = 9; break;
	case CNT_CODEC_ZSTD: def = 3; lo = ZSTD_minCLevel(); hi = ZSTD_maxCLevel(); break;
	case CNT_CODEC_BZIP2: def = 9; lo = 1; hi = 9; break;
	default: *out = 0; return 0;
	}
	if (level == CNT_LEVEL_DEFAULT) {
		*out = def;
		return 0;
	}
	/* zstandard's level 0 would be its default under another name */
	if (id == CNT_CODEC_ZSTD && (level < lo || level == 0 || level > hi))
		return cnt_err_set(err, "%s: compression level %d is not one of %d..-1 (its fast levels) or 1..%d",
			codec_names[id], level, lo, hi);
	if (level < lo || level > hi)
		return cnt_err_set(err, "%s: compression level %d is outside %d..%d",
			codec_names[id], level, lo, hi);
	*out = level;
	return 0;
}

int cnt_codec_compress(cnt_codec *c, cnt_codec_id id, int level,
	const uint8_t *in, size_t n, cnt_buf *out, cnt_err *err)
{
	int ret;

	out->len = 0;
	if ((unsigned)id >= CNT_CODEC_COUNT)
		return cnt_err_set(err, "unknown codec %d", (int)id);
	if (pick_level(id, level, &level, err) != 0)
		return -1;
	switch (id) {
	case CNT_CODEC_NULL:
		ret = cnt_buf_append(out, in, n) == 0 ? 0 :
			codec_oom(err, "null");
		break;
	case CNT_CODEC_DEFLATE:
		ret = compress_deflate(c, level, in, n, out, err);
		break;
	case CNT_CODEC_SNAPPY:
		ret = compress_snappy(in, n, out, err);
		break;
	case CNT_CODEC_XZ:
		ret = compress_xz(level, in, n, out, err);
		break;
	case CNT_CODEC_ZSTD:
		ret = compress_zstd(c, level, in, n, out, err);
		break;
	default:
		ret = compress_bzip2(level, in, n, out, err);
		break;
	}
	if (ret != 0)
		out->len = 0;
	return ret;
}
