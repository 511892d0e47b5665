/*
 * test_encoding.c - the binary readers of avro/encoding.h: the varint
 * reader's three paths (one byte; ten bytes at hand, read without a bound
 * check per byte; near the end of the data, checked byte by byte) give the
 * same value and the same cursor for every length, and refuse the same
 * inputs (an 11-byte varint, a varint cut by the end).
 */
#include <stdint.h>
#include <string.h>

#include "avro/encoding.h"
#include "unit.h"

/* Reads a long at data[0..n) placed so that exactly `room` bytes are at
 * hand (room >= n).  Returns the reader's result; *v, *used set on 0. */
static int read_at(const uint8_t *data, size_t n, size_t room, int64_t *v, size_t *used)
{
	uint8_t buf[32];
	cnt_cur c;
	int rc;

	memset(buf, 0x80, sizeof(buf));   /* continuation bytes after the data */
	memcpy(buf, data, n);
	c.p = buf;
	c.end = buf + room;
	rc = cnt_bin_read_long(&c, v);
	*used = (size_t)(c.p - buf);
	return rc;
}

static void test_every_length_the_same_with_and_without_room(void)
{
	static const int64_t vals[] = {0, -1, 1, 63, -64, 64, 8191, -8192, 1772359200000LL,
		-1772359200000LL, (int64_t)1 << 48, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		uint8_t enc[16];
		size_t n = cnt_bin_put_long(enc, vals[i]), used;
		int64_t v;

		for (size_t room = n; room <= 20; room++) {
			v = 12345;
			CHECK_EQ_INT(read_at(enc, n, room, &v, &used), 0);
			CHECK_EQ_INT(v, vals[i]);
			CHECK_EQ_INT(used, n);
		}
		/* cut by the end of the data: refused, cursor not moved */
		for (size_t room = 0; room < n; room++) {
			CHECK_EQ_INT(read_at(enc, n, room, &v, &used), -1);
			CHECK_EQ_INT(used, 0);
		}
	}
}

static void test_eleven_bytes_refused_on_both_paths(void)
{
	uint8_t enc[11];
	int64_t v;
	size_t used;

	memset(enc, 0x81, 10);
	enc[10] = 0x01;
	CHECK_EQ_INT(read_at(enc, 11, 11, &v, &used), -1);   /* ten at hand: fast path */
	CHECK_EQ_INT(read_at(enc, 11, 20, &v, &used), -1);
	CHECK_EQ_INT(used, 0);
	/* ten bytes, the last without continuation: accepted on both paths,
	 * the same value (bits past 64 dropped, as always) */
	{
		int64_t a, b;
		size_t ua, ub;

		enc[9] = 0x01;
		CHECK_EQ_INT(read_at(enc, 10, 10, &a, &ua), 0);
		CHECK_EQ_INT(read_at(enc, 10, 20, &b, &ub), 0);
		CHECK_EQ_INT(a, b);
		CHECK_EQ_INT(ua, 10);
		CHECK_EQ_INT(ub, 10);
	}
}

static void test_bytes_and_int(void)
{
	uint8_t buf[8] = {6, 'a', 'b', 'c', 0x80, 0x80, 0x80, 0x80};
	const uint8_t *p;
	size_t n;
	int32_t i;
	cnt_cur c = {buf, buf + 4};

	CHECK_EQ_INT(cnt_bin_read_bytes(&c, &p, &n), 0);
	CHECK_EQ_INT(n, 3);
	CHECK(p == buf + 1 && c.p == buf + 4);
	c.p = buf;
	c.end = buf + 3;   /* "abc" cut: refused, cursor at the length */
	CHECK_EQ_INT(cnt_bin_read_bytes(&c, &p, &n), -1);
	CHECK(c.p == buf);
	{
		uint8_t big[16];
		size_t k = cnt_bin_put_long(big, (int64_t)INT32_MAX + 1);
		cnt_cur d = {big, big + k};

		CHECK_EQ_INT(cnt_bin_read_int(&d, &i), -1);
	}
}

int main(void)
{
	RUN(test_every_length_the_same_with_and_without_room);
	RUN(test_eleven_bytes_refused_on_both_paths);
	RUN(test_bytes_and_int);
	return unit_report("test_encoding");
}
