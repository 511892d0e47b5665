/*
 * test_codec.c - the Avro block codecs: round trips, determinism, the
 * decompression bound, corrupt and truncated input, snappy's CRC, zstd
 * frames without a content size, and vectors from independent encoders.
 */
#include "avro/codec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "unit.h"

static const cnt_codec_id all_codecs[] = {
	CNT_CODEC_NULL, CNT_CODEC_DEFLATE, CNT_CODEC_SNAPPY,
	CNT_CODEC_XZ, CNT_CODEC_ZSTD, CNT_CODEC_BZIP2
};
#define NCODECS (sizeof(all_codecs) / sizeof(all_codecs[0]))
#define MIB ((size_t)1 << 20)

/* splitmix64: a fixed-seed generator for incompressible test data. */
static uint64_t prng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void fill_random(uint8_t *p, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(prng_next(&seed) >> 56);
}

/* Repetitive but not trivially so: lines of a small log. */
static void fill_repetitive(uint8_t *p, size_t n)
{
	static const char line[] = "{\"tenant_id\":\"acme\",\"counter_id\":\"views\",\"delta\":1}\n";
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(line[i % (sizeof(line) - 1)] + (i / 4096) % 3);
}

/*
 * Independent vectors: compressed by /usr/bin/python3 with
 *   deflate  zlib.compressobj(9, zlib.DEFLATED, -15)
 *   snappy   snappy.compress(p) + struct.pack('>I', zlib.crc32(p))
 *   xz       lzma.compress(p, format=lzma.FORMAT_XZ)
 *   bzip2    bz2.compress(p)
 *   zstd     zstandard.ZstdCompressor(write_content_size=False).compress(p),
 *            and two frames: p[:113] without a content size, p[113:] with
 *            one and a checksum
 * where p = b"cnt: the event log is the record; projections are
 * rebuildable. " * 3 + bytes(range(0, 256, 7)).
 */
static const uint8_t vec_plain[226] = {
	0x63, 0x6e, 0x74, 0x3a, 0x20, 0x74, 0x68, 0x65, 0x20, 0x65, 0x76, 0x65,
	0x6e, 0x74, 0x20, 0x6c, 0x6f, 0x67, 0x20, 0x69, 0x73, 0x20, 0x74, 0x68,
	0x65, 0x20, 0x72, 0x65, 0x63, 0x6f, 0x72, 0x64, 0x3b, 0x20, 0x70, 0x72,
	0x6f, 0x6a, 0x65, 0x63, 0x74, 0x69, 0x6f, 0x6e, 0x73, 0x20, 0x61, 0x72,
	0x65, 0x20, 0x72, 0x65, 0x62, 0x75, 0x69, 0x6c, 0x64, 0x61, 0x62, 0x6c,
	0x65, 0x2e, 0x20, 0x63, 0x6e, 0x74, 0x3a, 0x20, 0x74, 0x68, 0x65, 0x20,
	0x65, 0x76, 0x65, 0x6e, 0x74, 0x20, 0x6c, 0x6f, 0x67, 0x20, 0x69, 0x73,
	0x20, 0x74, 0x68, 0x65, 0x20, 0x72, 0x65, 0x63, 0x6f, 0x72, 0x64, 0x3b,
	0x20, 0x70, 0x72, 0x6f, 0x6a, 0x65, 0x63, 0x74, 0x69, 0x6f, 0x6e, 0x73,
	0x20, 0x61, 0x72, 0x65, 0x20, 0x72, 0x65, 0x62, 0x75, 0x69, 0x6c, 0x64,
	0x61, 0x62, 0x6c, 0x65, 0x2e, 0x20, 0x63, 0x6e, 0x74, 0x3a, 0x20, 0x74,
	0x68, 0x65, 0x20, 0x65, 0x76, 0x65, 0x6e, 0x74, 0x20, 0x6c, 0x6f, 0x67,
	0x20, 0x69, 0x73, 0x20, 0x74, 0x68, 0x65, 0x20, 0x72, 0x65, 0x63, 0x6f,
	0x72, 0x64, 0x3b, 0x20, 0x70, 0x72, 0x6f, 0x6a, 0x65, 0x63, 0x74, 0x69,
	0x6f, 0x6e, 0x73, 0x20, 0x61, 0x72, 0x65, 0x20, 0x72, 0x65, 0x62, 0x75,
	0x69, 0x6c, 0x64, 0x61, 0x62, 0x6c, 0x65, 0x2e, 0x20, 0x00, 0x07, 0x0e,
	0x15, 0x1c, 0x23, 0x2a, 0x31, 0x38, 0x3f, 0x46, 0x4d, 0x54, 0x5b, 0x62,
	0x69, 0x70, 0x77, 0x7e, 0x85, 0x8c, 0x93, 0x9a, 0xa1, 0xa8, 0xaf, 0xb6,
	0xbd, 0xc4, 0xcb, 0xd2, 0xd9, 0xe0, 0xe7, 0xee, 0xf5, 0xfc
};
static const uint8_t vec_deflate[102] = {
	0x4b, 0xce, 0x2b, 0xb1, 0x52, 0x28, 0xc9, 0x48, 0x55, 0x48, 0x2d, 0x4b,
	0xcd, 0x2b, 0x51, 0xc8, 0xc9, 0x4f, 0x57, 0xc8, 0x2c, 0x06, 0x0b, 0x14,
	0xa5, 0x26, 0xe7, 0x17, 0xa5, 0x58, 0x2b, 0x14, 0x14, 0xe5, 0x67, 0xa5,
	0x26, 0x97, 0x64, 0xe6, 0xe7, 0x15, 0x2b, 0x24, 0x16, 0x81, 0xc4, 0x93,
	0x4a, 0x33, 0x73, 0x52, 0x12, 0x93, 0x72, 0x52, 0xf5, 0x14, 0x92, 0x07,
	0x54, 0x3b, 0x03, 0x3b, 0x9f, 0xa8, 0x8c, 0xb2, 0x96, 0xa1, 0x85, 0xbd,
	0x9b, 0x6f, 0x48, 0x74, 0x52, 0x66, 0x41, 0x79, 0x5d, 0x6b, 0xcf, 0xe4,
	0x59, 0x0b, 0x57, 0xac, 0xdf, 0xb6, 0xf7, 0xc8, 0xe9, 0x4b, 0x37, 0x1f,
	0x3c, 0x7f, 0xf7, 0xf5, 0x0f, 0x00
};
static const uint8_t vec_snappy[112] = {
	0xe2, 0x01, 0x50, 0x63, 0x6e, 0x74, 0x3a, 0x20, 0x74, 0x68, 0x65, 0x20,
	0x65, 0x76, 0x65, 0x6e, 0x74, 0x20, 0x6c, 0x6f, 0x67, 0x20, 0x69, 0x73,
	0x05, 0x11, 0x90, 0x72, 0x65, 0x63, 0x6f, 0x72, 0x64, 0x3b, 0x20, 0x70,
	0x72, 0x6f, 0x6a, 0x65, 0x63, 0x74, 0x69, 0x6f, 0x6e, 0x73, 0x20, 0x61,
	0x72, 0x65, 0x20, 0x72, 0x65, 0x62, 0x75, 0x69, 0x6c, 0x64, 0x61, 0x62,
	0x6c, 0x65, 0x2e, 0x20, 0xfe, 0x3f, 0x00, 0xf6, 0x3f, 0x00, 0x90, 0x00,
	0x07, 0x0e, 0x15, 0x1c, 0x23, 0x2a, 0x31, 0x38, 0x3f, 0x46, 0x4d, 0x54,
	0x5b, 0x62, 0x69, 0x70, 0x77, 0x7e, 0x85, 0x8c, 0x93, 0x9a, 0xa1, 0xa8,
	0xaf, 0xb6, 0xbd, 0xc4, 0xcb, 0xd2, 0xd9, 0xe0, 0xe7, 0xee, 0xf5, 0xfc,
	0x96, 0x57, 0xa6, 0x68
};
static const uint8_t vec_xz[168] = {
	0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04, 0xe6, 0xd6, 0xb4, 0x46,
	0x02, 0x00, 0x21, 0x01, 0x16, 0x00, 0x00, 0x00, 0x74, 0x2f, 0xe5, 0xa3,
	0xe0, 0x00, 0xe1, 0x00, 0x65, 0x5d, 0x00, 0x31, 0x9b, 0x8a, 0xeb, 0xdb,
	0x5c, 0x85, 0x5c, 0x03, 0x98, 0xb9, 0x97, 0x83, 0xa5, 0xfe, 0x4f, 0x3a,
	0xe5, 0x8b, 0x70, 0xd7, 0x07, 0xb6, 0xde, 0xbd, 0x3b, 0x9d, 0x56, 0x74,
	0x13, 0x9d, 0x3e, 0xfe, 0x52, 0x76, 0x7a, 0xeb, 0x3d, 0x58, 0x3f, 0x07,
	0x16, 0xcb, 0x4b, 0x09, 0x40, 0xcc, 0xc9, 0xe4, 0x79, 0x0e, 0x5d, 0x77,
	0x78, 0xc3, 0x9b, 0x98, 0xae, 0xad, 0x65, 0x5a, 0x77, 0xf8, 0xb1, 0x98,
	0x2b, 0x87, 0xd5, 0x3e, 0x68, 0xe3, 0xd8, 0x5e, 0xb9, 0x83, 0x0b, 0x9c,
	0xb5, 0x85, 0xc2, 0x8d, 0xb3, 0xc8, 0xeb, 0x70, 0x4b, 0x9f, 0xdb, 0x9a,
	0xda, 0xe5, 0xe0, 0x35, 0x0c, 0x14, 0x73, 0xc2, 0x3d, 0x89, 0x75, 0x60,
	0x00, 0x00, 0x00, 0x00, 0xbd, 0x14, 0x80, 0xe0, 0xbd, 0x1e, 0xd6, 0xfe,
	0x00, 0x01, 0x81, 0x01, 0xe2, 0x01, 0x00, 0x00, 0x94, 0xd9, 0x6d, 0x56,
	0xb1, 0xc4, 0x67, 0xfb, 0x02, 0x00, 0x00, 0x00, 0x00, 0x04, 0x59, 0x5a
};
static const uint8_t vec_bzip2[188] = {
	0x42, 0x5a, 0x68, 0x39, 0x31, 0x41, 0x59, 0x26, 0x53, 0x59, 0x18, 0x5b,
	0x62, 0x6f, 0x00, 0x00, 0x22, 0x7f, 0xff, 0xc0, 0x81, 0x02, 0x04, 0x48,
	0x11, 0x20, 0x58, 0x81, 0x02, 0x04, 0x08, 0x3e, 0xf5, 0xdf, 0x81, 0x02,
	0x04, 0x08, 0x10, 0x20, 0x40, 0x81, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40,
	0x81, 0x02, 0x04, 0x20, 0x00, 0x8a, 0x88, 0xf5, 0x49, 0xea, 0x6d, 0x53,
	0x4c, 0x4d, 0x34, 0x1a, 0x68, 0x1a, 0x03, 0x40, 0x00, 0x00, 0x57, 0xea,
	0xa6, 0x42, 0x32, 0x64, 0x34, 0x64, 0x34, 0xd0, 0xd3, 0x6a, 0x68, 0xc0,
	0x46, 0x86, 0x4d, 0x1e, 0xe8, 0x16, 0x18, 0xb4, 0x0e, 0x4a, 0x4c, 0x26,
	0x92, 0x71, 0x50, 0x9c, 0x62, 0x5b, 0x50, 0x93, 0x5b, 0x88, 0xc4, 0x5c,
	0xbb, 0x7a, 0xfd, 0x0f, 0x28, 0x30, 0x52, 0x4a, 0x2a, 0x32, 0x4a, 0x05,
	0x92, 0x9c, 0xc4, 0x8c, 0x09, 0x12, 0x82, 0x52, 0x73, 0x30, 0xb2, 0x04,
	0x13, 0x8c, 0x1d, 0x59, 0x19, 0x16, 0x28, 0x50, 0xa3, 0x41, 0xa8, 0x90,
	0x90, 0xb0, 0x28, 0xc4, 0x0c, 0x4c, 0x2a, 0x15, 0x95, 0x8f, 0x1c, 0x82,
	0xa0, 0xc4, 0x64, 0x63, 0x6c, 0xdb, 0xbb, 0x7f, 0x0e, 0x3c, 0xb9, 0xf4,
	0xeb, 0xda, 0xff, 0x7f, 0x3e, 0xe1, 0x8f, 0xec, 0xbf, 0x8b, 0xb9, 0x22,
	0x9c, 0x28, 0x48, 0x0c, 0x2d, 0xb1, 0x37, 0x80
};
static const uint8_t vec_zstd_nosize[115] = {
	0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00, 0x55, 0x03, 0x00, 0xf4, 0x05, 0x63,
	0x6e, 0x74, 0x3a, 0x20, 0x74, 0x68, 0x65, 0x20, 0x65, 0x76, 0x65, 0x6e,
	0x74, 0x20, 0x6c, 0x6f, 0x67, 0x20, 0x69, 0x73, 0x72, 0x65, 0x63, 0x6f,
	0x72, 0x64, 0x3b, 0x20, 0x70, 0x72, 0x6f, 0x6a, 0x65, 0x63, 0x74, 0x69,
	0x6f, 0x6e, 0x73, 0x20, 0x61, 0x72, 0x65, 0x20, 0x72, 0x65, 0x62, 0x75,
	0x69, 0x6c, 0x64, 0x61, 0x62, 0x6c, 0x65, 0x2e, 0x20, 0x00, 0x07, 0x0e,
	0x15, 0x1c, 0x23, 0x2a, 0x31, 0x38, 0x3f, 0x46, 0x4d, 0x54, 0x5b, 0x62,
	0x69, 0x70, 0x77, 0x7e, 0x85, 0x8c, 0x93, 0x9a, 0xa1, 0xa8, 0xaf, 0xb6,
	0xbd, 0xc4, 0xcb, 0xd2, 0xd9, 0xe0, 0xe7, 0xee, 0xf5, 0xfc, 0x02, 0x00,
	0xdd, 0x42, 0x48, 0x2f, 0x09, 0x93, 0x09
};
static const uint8_t vec_zstd_two_frames[195] = {
	0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00, 0x25, 0x02, 0x00, 0xa4, 0x03, 0x63,
	0x6e, 0x74, 0x3a, 0x20, 0x74, 0x68, 0x65, 0x20, 0x65, 0x76, 0x65, 0x6e,
	0x74, 0x20, 0x6c, 0x6f, 0x67, 0x20, 0x69, 0x73, 0x72, 0x65, 0x63, 0x6f,
	0x72, 0x64, 0x3b, 0x20, 0x70, 0x72, 0x6f, 0x6a, 0x65, 0x63, 0x74, 0x69,
	0x6f, 0x6e, 0x73, 0x20, 0x61, 0x72, 0x65, 0x20, 0x72, 0x65, 0x62, 0x75,
	0x69, 0x6c, 0x64, 0x61, 0x62, 0x6c, 0x65, 0x2e, 0x20, 0x02, 0x00, 0x5d,
	0x08, 0xf1, 0x52, 0x3b, 0x99, 0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x71, 0x4d,
	0x03, 0x00, 0xf4, 0x05, 0x72, 0x65, 0x62, 0x75, 0x69, 0x6c, 0x64, 0x61,
	0x62, 0x6c, 0x65, 0x2e, 0x20, 0x63, 0x6e, 0x74, 0x3a, 0x20, 0x74, 0x68,
	0x65, 0x20, 0x65, 0x76, 0x65, 0x6e, 0x74, 0x20, 0x6c, 0x6f, 0x67, 0x20,
	0x69, 0x73, 0x72, 0x65, 0x63, 0x6f, 0x72, 0x64, 0x3b, 0x20, 0x70, 0x72,
	0x6f, 0x6a, 0x65, 0x63, 0x74, 0x69, 0x6f, 0x6e, 0x73, 0x20, 0x61, 0x72,
	0x65, 0x20, 0x00, 0x07, 0x0e, 0x15, 0x1c, 0x23, 0x2a, 0x31, 0x38, 0x3f,
	0x46, 0x4d, 0x54, 0x5b, 0x62, 0x69, 0x70, 0x77, 0x7e, 0x85, 0x8c, 0x93,
	0x9a, 0xa1, 0xa8, 0xaf, 0xb6, 0xbd, 0xc4, 0xcb, 0xd2, 0xd9, 0xe0, 0xe7,
	0xee, 0xf5, 0xfc, 0x02, 0x00, 0x08, 0xe1, 0x86, 0xe8, 0x9a, 0x64, 0x37,
	0x4e, 0x96, 0xd2
};


static void check_plain_prefix(void)
{
	static const char head[] = "cnt: the event log is the record; projections are rebuildable. ";

	CHECK_EQ_INT(sizeof(vec_plain), 3 * (sizeof(head) - 1) + 37);
	CHECK(memcmp(vec_plain, head, sizeof(head) - 1) == 0);
	CHECK_EQ_INT(vec_plain[sizeof(vec_plain) - 1], 252);
}

static void test_lookup(void)
{
	static const char *const good[] = {
		"null", "deflate", "snappy", "xz", "zstandard", "bzip2"
	};
	static const char *const bad[] = {
		"lzma", "zstd", "", "Null", "deflate ", "snap", "bzip", "gzip", "xz2"
	};
	size_t i;
	cnt_codec_id id;

	for (i = 0; i < NCODECS; i++) {
		id = (cnt_codec_id)99;
		CHECK_EQ_INT(cnt_codec_lookup(good[i], strlen(good[i]), &id), 0);
		CHECK_EQ_INT(id, all_codecs[i]);
		CHECK_EQ_STR(cnt_codec_name(id), good[i]);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ_INT(cnt_codec_lookup(bad[i], strlen(bad[i]), &id), -1);
	/* The length, not a NUL, ends the name. */
	CHECK_EQ_INT(cnt_codec_lookup("xzz", 2, &id), 0);
	CHECK_EQ_INT(id, CNT_CODEC_XZ);
	CHECK_EQ_INT(cnt_codec_lookup("null", 3, &id), -1);
	CHECK(cnt_codec_name((cnt_codec_id)6) == NULL);
	check_plain_prefix();
}

static int round_trip(cnt_codec *c, cnt_codec_id id, int level,
	const uint8_t *p, size_t n)
{
	cnt_buf z = CNT_BUF_INIT, z2 = CNT_BUF_INIT, d = CNT_BUF_INIT;
	cnt_err err = {"", CNT_ERR_DATA};
	int ok = 1;

	if (cnt_codec_compress(c, id, level, p, n, &z, &err) != 0) {
		fprintf(stderr, "compress %s: %s\n", cnt_codec_name(id), err.msg);
		ok = 0;
	} else if (cnt_codec_decompress(c, id, z.p, z.len, &d, n, &err) != 0) {
		fprintf(stderr, "decompress %s (%zu bytes): %s\n", cnt_codec_name(id), n, err.msg);
		ok = 0;
	} else if (d.len != n || (n > 0 && memcmp(d.p, p, n) != 0)) {
		fprintf(stderr, "%s: round trip of %zu bytes differs\n", cnt_codec_name(id), n);
		ok = 0;
	} else if (cnt_codec_compress(c, id, level, p, n, &z2, &err) != 0 ||
	    z2.len != z.len || (z.len > 0 && memcmp(z.p, z2.p, z.len) != 0)) {
		fprintf(stderr, "%s: compression of %zu bytes is not deterministic\n",
			cnt_codec_name(id), n);
		ok = 0;
	}
	cnt_buf_release(&z);
	cnt_buf_release(&z2);
	cnt_buf_release(&d);
	return ok;
}

static void test_round_trip(void)
{
	size_t sizes[] = { 0, 1, 4096, 100000, MIB };
	uint8_t *rnd = malloc(MIB), *rep = malloc(MIB);
	cnt_codec *c = cnt_codec_new();
	size_t i, k;

	CHECK(c != NULL && rnd != NULL && rep != NULL);
	if (c == NULL || rnd == NULL || rep == NULL)
		goto out;
	fill_random(rnd, MIB, 42);
	fill_repetitive(rep, MIB);
	for (i = 0; i < NCODECS; i++) {
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			CHECK(round_trip(c, all_codecs[i], CNT_LEVEL_DEFAULT, rnd, sizes[k]));
			CHECK(round_trip(c, all_codecs[i], CNT_LEVEL_DEFAULT, rep, sizes[k]));
		}
		CHECK(round_trip(c, all_codecs[i], 1, rep, MIB));
		CHECK(round_trip(c, all_codecs[i], 1, vec_plain, sizeof(vec_plain)));
	}
out:
	cnt_codec_free(c);
	free(rnd);
	free(rep);
}

/* Repetitive data must actually shrink, or "compression" is a copy. */
static void test_compresses(void)
{
	uint8_t *rep = malloc(MIB);
	cnt_codec *c = cnt_codec_new();
	cnt_buf z = CNT_BUF_INIT;
	cnt_err err = {"", CNT_ERR_DATA};
	size_t i;

	fill_repetitive(rep, MIB);
	for (i = 1; i < NCODECS; i++) {
		CHECK_EQ_INT(cnt_codec_compress(c, all_codecs[i], CNT_LEVEL_DEFAULT, rep, MIB, &z, &err), 0);
		CHECK(z.len < MIB / 10);
	}
	/* Levels outside a codec's range are refused, and say so. */
	CHECK_EQ_INT(cnt_codec_compress(c, CNT_CODEC_DEFLATE, 10, rep, 10, &z, &err), -1);
	CHECK(strstr(err.msg, "level 10") != NULL);
	CHECK_EQ_INT(cnt_codec_compress(c, CNT_CODEC_BZIP2, 0, rep, 10, &z, &err), -1);
	CHECK_EQ_INT(cnt_codec_compress(c, CNT_CODEC_ZSTD, ZSTD_maxCLevel() + 1, rep, 10, &z, &err), -1);
	/* A negative level is a level, never the default in disguise: zstandard's
	 * fast levels are used as asked, every other codec refuses one, and
	 * zstandard's 0 (its default under another name) is refused. */
	CHECK_EQ_INT(cnt_codec_compress(c, CNT_CODEC_DEFLATE, -1, rep, 10, &z, &err), -1);
	CHECK(strstr(err.msg, "deflate: compression level -1 is outside 0..9") != NULL);
	CHECK_EQ_INT(cnt_codec_compress(c, CNT_CODEC_BZIP2, -3, rep, 10, &z, &err), -1);
	CHECK_EQ_INT(cnt_codec_compress(c, CNT_CODEC_XZ, -1, rep, 10, &z, &err), -1);
	CHECK_EQ_INT(cnt_codec_compress(c, CNT_CODEC_ZSTD, 0, rep, 10, &z, &err), -1);
	CHECK(strstr(err.msg, "zstandard: compression level 0 is not one of") != NULL);
	CHECK(strstr(err.msg, "(its fast levels) or 1..") != NULL);
	CHECK_EQ_INT(cnt_codec_compress(c, CNT_CODEC_ZSTD, ZSTD_minCLevel() - 1, rep, 10, &z, &err), -1);
	CHECK_EQ_INT(cnt_codec_compress(c, CNT_CODEC_ZSTD, ZSTD_minCLevel(), rep, 10, &z, &err), 0);
	{
		cnt_buf zf = CNT_BUF_INIT, zd = CNT_BUF_INIT, back = CNT_BUF_INIT;
		ZSTD_CCtx *cc = ZSTD_createCCtx();
		size_t n;

		/* -5: zstd's own bytes at -5 (with the frame options we set), not
		 * the default's; and they decompress to the input */
		CHECK_EQ_INT(cnt_codec_compress(c, CNT_CODEC_ZSTD, -5, rep, MIB, &zf, &err), 0);
		CHECK_EQ_INT(cnt_codec_compress(c, CNT_CODEC_ZSTD, CNT_LEVEL_DEFAULT, rep, MIB, &zd, &err), 0);
		CHECK(zf.len != zd.len || memcmp(zf.p, zd.p, zd.len) != 0);
		CHECK_EQ_INT(cnt_buf_reserve(&back, ZSTD_compressBound(MIB)), 0);
		ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, -5);
		ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
		ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 1);
		n = ZSTD_compress2(cc, back.p, ZSTD_compressBound(MIB), rep, MIB);
		CHECK(!ZSTD_isError(n) && n == zf.len && memcmp(back.p, zf.p, n) == 0);
		CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_ZSTD, zf.p, zf.len, &back, MIB, &err), 0);
		CHECK(back.len == MIB && memcmp(back.p, rep, MIB) == 0);
		ZSTD_freeCCtx(cc);
		cnt_buf_release(&zf);
		cnt_buf_release(&zd);
		cnt_buf_release(&back);
	}
	/* Different levels give (for this input) different deflate bytes. */
	{
		cnt_buf z1 = CNT_BUF_INIT;

		CHECK_EQ_INT(cnt_codec_compress(c, CNT_CODEC_DEFLATE, 1, rep, MIB, &z1, &err), 0);
		CHECK_EQ_INT(cnt_codec_compress(c, CNT_CODEC_DEFLATE, 9, rep, MIB, &z, &err), 0);
		CHECK(z1.len != z.len || memcmp(z1.p, z.p, z.len) != 0);
		cnt_buf_release(&z1);
	}
	cnt_buf_release(&z);
	cnt_codec_free(c);
	free(rep);
}

static void test_bound(void)
{
	uint8_t *rep = malloc(MIB);
	cnt_codec *c = cnt_codec_new();
	cnt_buf z = CNT_BUF_INIT;
	cnt_err err = {"", CNT_ERR_DATA};
	size_t i;

	fill_repetitive(rep, MIB);
	for (i = 0; i < NCODECS; i++) {
		cnt_buf d = CNT_BUF_INIT;
		size_t bounds[] = { 0, 1000, MIB - 1 };
		size_t k;

		CHECK_EQ_INT(cnt_codec_compress(c, all_codecs[i], CNT_LEVEL_DEFAULT, rep, MIB, &z, &err), 0);
		for (k = 0; k < sizeof(bounds) / sizeof(bounds[0]); k++) {
			cnt_buf_release(&d);
			err.msg[0] = '\0';
			CHECK_EQ_INT(cnt_codec_decompress(c, all_codecs[i], z.p, z.len, &d,
				bounds[k], &err), -1);
			CHECK(strstr(err.msg, "exceeds the") != NULL);
			CHECK_EQ_INT(d.len, 0);
			CHECK(d.cap <= bounds[k] + 1);
		}
		/* Exactly at the bound is fine. */
		CHECK_EQ_INT(cnt_codec_decompress(c, all_codecs[i], z.p, z.len, &d, MIB, &err), 0);
		CHECK_EQ_INT(d.len, MIB);
		CHECK(d.cap <= MIB + 1);
		/* A buffer reused from a bigger block still enforces a smaller bound. */
		CHECK_EQ_INT(cnt_codec_decompress(c, all_codecs[i], z.p, z.len, &d, 4096, &err), -1);
		CHECK(strstr(err.msg, "4096-byte bound") != NULL);
		cnt_buf_release(&d);
	}
	cnt_buf_release(&z);
	cnt_codec_free(c);
	free(rep);
}

static void test_corrupt(void)
{
	uint8_t *src = malloc(200000);
	cnt_codec *c = cnt_codec_new();
	cnt_buf z = CNT_BUF_INIT, d = CNT_BUF_INIT, bad = CNT_BUF_INIT;
	cnt_err err = {"", CNT_ERR_DATA};
	uint64_t seed = 7;
	size_t i, k;

	fill_repetitive(src, 200000);
	fill_random(src + 100000, 5000, 3);
	for (i = 1; i < NCODECS; i++) {	/* null has nothing to check */
		cnt_codec_id id = all_codecs[i];
		size_t cuts[4];

		CHECK_EQ_INT(cnt_codec_compress(c, id, CNT_LEVEL_DEFAULT, src, 200000, &z, &err), 0);
		cuts[0] = 0;
		cuts[1] = 1;
		cuts[2] = z.len / 2;
		cuts[3] = z.len - 1;
		for (k = 0; k < 4; k++) {
			err.msg[0] = '\0';
			CHECK_EQ_INT(cnt_codec_decompress(c, id, z.p, cuts[k], &d, MIB, &err), -1);
			CHECK(err.msg[0] != '\0');
			CHECK_EQ_INT(d.len, 0);
		}
		/* Trailing garbage is corruption, not ignored - except after a
		 * deflate stream, where python-avro leaves three bytes of a zlib
		 * trailer in every block (regression: events.deflate.avro). */
		bad.len = 0;
		CHECK_EQ_INT(cnt_buf_append(&bad, z.p, z.len), 0);
		CHECK_EQ_INT(cnt_buf_append(&bad, "garbage!", 8), 0);
		CHECK_EQ_INT(cnt_codec_decompress(c, id, bad.p, bad.len, &d, MIB, &err), id == CNT_CODEC_DEFLATE ? 0 : -1);
		if (id == CNT_CODEC_DEFLATE)
			CHECK_EQ_INT(d.len, 200000);
		/* Flipped bytes: an error or some output within the bound, never a
		 * crash (the sanitizer build checks the "never"). */
		for (k = 0; k < 300; k++) {
			size_t at = (size_t)(prng_next(&seed) % z.len);

			bad.len = 0;
			CHECK_EQ_INT(cnt_buf_append(&bad, z.p, z.len), 0);
			bad.p[at] ^= (uint8_t)(1u << (prng_next(&seed) % 8));
			if (cnt_codec_decompress(c, id, bad.p, bad.len, &d, MIB, &err) == 0)
				CHECK(d.len <= MIB);
		}
		/* Random bytes, too. */
		for (k = 0; k < 100; k++) {
			bad.len = 0;
			CHECK_EQ_INT(cnt_buf_reserve(&bad, 64), 0);
			fill_random(bad.p, 64, k);
			bad.len = 64;
			if (cnt_codec_decompress(c, id, bad.p, bad.len, &d, MIB, &err) == 0)
				CHECK(d.len <= MIB);
		}
	}
	/* Codecs with a checksum (xz, zstandard as we write it, bzip2, and
	 * snappy's CRC) must catch a flipped byte in the middle. */
	for (i = 2; i < NCODECS; i++) {
		CHECK_EQ_INT(cnt_codec_compress(c, all_codecs[i], CNT_LEVEL_DEFAULT, src, 200000, &z, &err), 0);
		z.p[z.len / 2] ^= 0x10;
		CHECK_EQ_INT(cnt_codec_decompress(c, all_codecs[i], z.p, z.len, &d, MIB, &err), -1);
	}
	cnt_buf_release(&z);
	cnt_buf_release(&d);
	cnt_buf_release(&bad);
	cnt_codec_free(c);
	free(src);
}

/* xz and bzip2 define concatenated streams as the concatenated data. */
static void test_concatenated_streams(void)
{
	static const cnt_codec_id ids[] = { CNT_CODEC_XZ, CNT_CODEC_BZIP2 };
	uint8_t *rnd = malloc(30000);
	cnt_codec *c = cnt_codec_new();
	cnt_buf z = CNT_BUF_INIT, two = CNT_BUF_INIT, d = CNT_BUF_INIT;
	cnt_err err = {"", CNT_ERR_DATA};
	size_t i;

	fill_random(rnd, 30000, 11);
	for (i = 0; i < 2; i++) {
		two.len = 0;
		CHECK_EQ_INT(cnt_codec_compress(c, ids[i], 1, rnd, 10000, &z, &err), 0);
		CHECK_EQ_INT(cnt_buf_append(&two, z.p, z.len), 0);
		CHECK_EQ_INT(cnt_codec_compress(c, ids[i], 1, rnd + 10000, 20000, &z, &err), 0);
		CHECK_EQ_INT(cnt_buf_append(&two, z.p, z.len), 0);
		CHECK_EQ_INT(cnt_codec_decompress(c, ids[i], two.p, two.len, &d, 30000, &err), 0);
		CHECK(d.len == 30000 && memcmp(d.p, rnd, 30000) == 0);
		CHECK_EQ_INT(cnt_codec_decompress(c, ids[i], two.p, two.len, &d, 29999, &err), -1);
		CHECK_EQ_INT(cnt_codec_decompress(c, ids[i], two.p, two.len - 1, &d, 30000, &err), -1);
	}
	cnt_buf_release(&z);
	cnt_buf_release(&two);
	cnt_buf_release(&d);
	cnt_codec_free(c);
	free(rnd);
}

static void test_snappy_crc(void)
{
	cnt_codec *c = cnt_codec_new();
	cnt_buf d = CNT_BUF_INIT;
	cnt_err err = {"", CNT_ERR_DATA};
	uint8_t v[sizeof(vec_snappy)];

	memcpy(v, vec_snappy, sizeof(v));
	CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_SNAPPY, v, sizeof(v), &d, MIB, &err), 0);
	v[sizeof(v) - 1] ^= 1;	/* the CRC itself */
	CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_SNAPPY, v, sizeof(v), &d, MIB, &err), -1);
	CHECK(strstr(err.msg, "CRC32 mismatch") != NULL);
	v[sizeof(v) - 1] ^= 1;
	/* A literal byte of the data: valid snappy, wrong content. */
	v[10] ^= 0x20;
	CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_SNAPPY, v, sizeof(v), &d, MIB, &err), -1);
	CHECK(strstr(err.msg, "CRC32 mismatch") != NULL);
	/* No room for the CRC at all. */
	CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_SNAPPY, v, 3, &d, MIB, &err), -1);
	cnt_buf_release(&d);
	cnt_codec_free(c);
}

/* Streams p as zstd frames without a content size, as zstd-jni does. */
static size_t zstd_no_size(const uint8_t *p, size_t n, uint8_t *dst, size_t cap)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_inBuffer ib = { p, n, 0 };
	ZSTD_outBuffer ob = { dst, cap, 0 };
	size_t r;

	ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 3);
	do {
		r = ZSTD_compressStream2(cc, &ob, &ib, ZSTD_e_end);
	} while (!ZSTD_isError(r) && r != 0);
	ZSTD_freeCCtx(cc);
	return ZSTD_isError(r) ? 0 : ob.pos;
}

static void test_zstd_frames(void)
{
	uint8_t *rep = malloc(MIB), *rnd = malloc(100000);
	size_t cap = ZSTD_compressBound(MIB) + ZSTD_compressBound(100000);
	uint8_t *z = malloc(cap);
	cnt_codec *c = cnt_codec_new();
	cnt_buf d = CNT_BUF_INIT;
	cnt_err err = {"", CNT_ERR_DATA};
	size_t n1, n2;

	fill_repetitive(rep, MIB);
	fill_random(rnd, 100000, 9);
	n1 = zstd_no_size(rep, MIB, z, cap);
	CHECK(n1 > 0);
	CHECK(ZSTD_getFrameContentSize(z, n1) == ZSTD_CONTENTSIZE_UNKNOWN);
	CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_ZSTD, z, n1, &d, MIB, &err), 0);
	CHECK(d.len == MIB && memcmp(d.p, rep, MIB) == 0);
	/* The streaming path enforces the bound without allocating past it. */
	cnt_buf_release(&d);
	CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_ZSTD, z, n1, &d, MIB / 2, &err), -1);
	CHECK(strstr(err.msg, "exceeds the 524288-byte bound") != NULL);
	CHECK(d.cap <= MIB / 2 + 1);
	/* Two frames: the second one of random data, also without a size. */
	n2 = zstd_no_size(rnd, 100000, z + n1, cap - n1);
	CHECK(n2 > 0);
	CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_ZSTD, z, n1 + n2, &d, 2 * MIB, &err), 0);
	CHECK(d.len == MIB + 100000);
	CHECK(d.len == MIB + 100000 && memcmp(d.p, rep, MIB) == 0 &&
		memcmp(d.p + MIB, rnd, 100000) == 0);
	/* The bound counts both frames together. */
	CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_ZSTD, z, n1 + n2, &d, MIB + 99999, &err), -1);
	/* A frame with a content size after one without. */
	n2 = ZSTD_compress(z + n1, cap - n1, rnd, 100000, 1);
	CHECK(!ZSTD_isError(n2));
	CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_ZSTD, z, n1 + n2, &d, 2 * MIB, &err), 0);
	CHECK(d.len == MIB + 100000 && memcmp(d.p + MIB, rnd, 100000) == 0);
	CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_ZSTD, z, n1 + n2, &d, MIB + 99999, &err), -1);
	/* Truncated in the middle of the second frame. */
	CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_ZSTD, z, n1 + n2 / 2, &d, 2 * MIB, &err), -1);
	cnt_buf_release(&d);
	cnt_codec_free(c);
	free(z);
	free(rnd);
	free(rep);
}

/* A frame whose header claims 2^40 bytes of content must fail on the claim,
 * before anything is allocated for it. */
static void test_zstd_huge_claim(void)
{
	static const uint8_t frame[] = {
		0x28, 0xb5, 0x2f, 0xfd,	/* magic */
		0xe0,			/* 8-byte content size, single segment */
		0, 0, 0, 0, 0, 1, 0, 0,	/* content size 2^40, little-endian */
		0x19, 0x00, 0x00,	/* last block, raw, 3 bytes */
		'a', 'b', 'c'
	};
	cnt_codec *c = cnt_codec_new();
	cnt_buf d = CNT_BUF_INIT;
	cnt_err err = {"", CNT_ERR_DATA};
	uint8_t lie[sizeof(frame)];

	CHECK(ZSTD_getFrameContentSize(frame, sizeof(frame)) == (1ULL << 40));
	CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_ZSTD, frame, sizeof(frame), &d, MIB, &err), -1);
	CHECK(strstr(err.msg, "exceeds the 1048576-byte bound") != NULL);
	CHECK_EQ_INT(d.cap, 0);
	/* With a bound that admits the claim, the lie is still caught, and
	 * still without allocating for it. */
	CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_ZSTD, frame, sizeof(frame), &d,
		(size_t)1 << 41, &err), -1);
	CHECK(strstr(err.msg, "claims 1099511627776 bytes") != NULL);
	CHECK_EQ_INT(d.cap, 0);
	/* A plausible claim that the blocks do not fill. */
	memcpy(lie, frame, sizeof(frame));
	lie[10] = 0;	/* content size 1000 */
	lie[5] = 0xe8;
	lie[6] = 0x03;
	CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_ZSTD, lie, sizeof(lie), &d, MIB, &err), -1);
	CHECK(err.msg[0] != '\0');
	lie[5] = 3;	/* content size 3: the truth */
	lie[6] = 0;
	CHECK_EQ_INT(cnt_codec_decompress(c, CNT_CODEC_ZSTD, lie, sizeof(lie), &d, MIB, &err), 0);
	CHECK(d.len == 3 && memcmp(d.p, "abc", 3) == 0);
	cnt_buf_release(&d);
	cnt_codec_free(c);
}

static void check_vector(cnt_codec *c, cnt_codec_id id, const uint8_t *v, size_t n)
{
	cnt_buf d = CNT_BUF_INIT;
	cnt_err err = {"", CNT_ERR_DATA};

	if (cnt_codec_decompress(c, id, v, n, &d, MIB, &err) != 0) {
		fprintf(stderr, "vector %s: %s\n", cnt_codec_name(id), err.msg);
		CHECK(0);
	} else {
		CHECK_EQ_INT(d.len, sizeof(vec_plain));
		CHECK(d.len == sizeof(vec_plain) && memcmp(d.p, vec_plain, d.len) == 0);
	}
	/* One byte short is never the whole message. */
	CHECK_EQ_INT(cnt_codec_decompress(c, id, v, n - 1, &d, MIB, &err), -1);
	cnt_buf_release(&d);
}

static void test_vectors(void)
{
	cnt_codec *c = cnt_codec_new();

	check_vector(c, CNT_CODEC_DEFLATE, vec_deflate, sizeof(vec_deflate));
	check_vector(c, CNT_CODEC_SNAPPY, vec_snappy, sizeof(vec_snappy));
	check_vector(c, CNT_CODEC_XZ, vec_xz, sizeof(vec_xz));
	check_vector(c, CNT_CODEC_BZIP2, vec_bzip2, sizeof(vec_bzip2));
	check_vector(c, CNT_CODEC_ZSTD, vec_zstd_nosize, sizeof(vec_zstd_nosize));
	check_vector(c, CNT_CODEC_ZSTD, vec_zstd_two_frames, sizeof(vec_zstd_two_frames));
	CHECK(ZSTD_getFrameContentSize(vec_zstd_nosize, sizeof(vec_zstd_nosize)) ==
		ZSTD_CONTENTSIZE_UNKNOWN);
	cnt_codec_free(c);
}

int main(void)
{
	RUN(test_lookup);
	RUN(test_round_trip);
	RUN(test_compresses);
	RUN(test_bound);
	RUN(test_corrupt);
	RUN(test_concatenated_streams);
	RUN(test_snappy_crc);
	RUN(test_zstd_frames);
	RUN(test_zstd_huge_claim);
	RUN(test_vectors);
	return unit_report("test_codec");
}
