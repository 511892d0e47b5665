/*
 * test_text.c - lib/base/text.h: distrusted bytes shown to a person.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "unit.h"

/* shown by cnt_buf_shown, as a string; *chars its return */
static char *buf_shown(const char *p, size_t n, size_t max, long *chars)
{
	cnt_buf b = CNT_BUF_INIT;

	*chars = cnt_buf_shown(&b, p, n, max);
	CHECK(*chars >= 0 && cnt_buf_putc(&b, 0) == 0);
	return (char *)b.p;
}

static void one(const char *in, size_t n, size_t max, const char *want, long want_chars)
{
	long chars;
	char *got = buf_shown(in, n, max, &chars);

	CHECK_EQ_STR(got, want);
	CHECK_EQ_INT(chars, want_chars);
	/* cnt_shown writes the same, into exactly the room it promises */
	if (max <= n) {
		char *fixed = malloc(CNT_SHOWN_SIZE(max));

		CHECK_EQ_STR(cnt_shown(in, n, max, fixed), want);
		free(fixed);
	}
	free(got);
}

static void test_examples(void)
{
	one("abc", 3, SIZE_MAX, "abc", 3);
	one("", 0, SIZE_MAX, "", 0);
	/* the backslash is escaped, so a \xNN seen is always an escape */
	one("a\\x41", 5, SIZE_MAX, "a\\x5cx41", 8);
	one("\0\x1b[2J\x7f\n", 7, SIZE_MAX, "\\x00\\x1b[2J\\x7f\\x0a", 19);
	/* quotes stay: messages put names between them, and stay readable */
	one("O'Brien \"x\"", 11, SIZE_MAX, "O'Brien \"x\"", 11);
	/* valid UTF-8 as it is, one character each */
	one("d\xc3\xa9j\xe2\x82\xac \xf0\x9f\x8f\x83", 12, SIZE_MAX, "d\xc3\xa9j\xe2\x82\xac \xf0\x9f\x8f\x83", 6);
	/* what is not UTF-8, byte by byte: a stray byte, a cut sequence, an
	 * overlong '/', a surrogate, a code point past U+10FFFF */
	one("m-\xff", 3, SIZE_MAX, "m-\\xff", 6);
	one("x\xc3", 2, SIZE_MAX, "x\\xc3", 5);
	one("\xc0\xaf", 2, SIZE_MAX, "\\xc0\\xaf", 8);
	one("\xed\xa0\x80", 3, SIZE_MAX, "\\xed\\xa0\\x80", 12);
	one("\xf4\x90\x80\x80", 4, SIZE_MAX, "\\xf4\\x90\\x80\\x80", 16);
	one("\xe2\x82", 2, SIZE_MAX, "\\xe2\\x82", 8);
	/* cut after max bytes; a character begun before the cut is whole */
	one("abcdef", 6, 3, "abc...", 6);
	one("abc", 3, 3, "abc", 3);
	one("ab\xe2\x82\xac", 5, 3, "ab\xe2\x82\xac", 3);
	one("ab\xe2\x82\xacx", 6, 3, "ab\xe2\x82\xac...", 6);
	one("\x01\x02\x03\x04", 4, 2, "\\x01\\x02...", 11);
}

/* \xNN undone: the bytes that were shown */
static size_t unshow(const char *s, char *out)
{
	size_t n = 0;

	while (*s) {
		if (s[0] == '\\') {
			CHECK(s[1] == 'x');
			out[n++] = (char)strtol((char[]){s[2], s[3], 0}, NULL, 16);
			s += 4;
		} else {
			out[n++] = *s++;
		}
	}
	return n;
}

/* Random bytes, weighted to UTF-8's lead and continuation bytes: what is
 * shown is always text jansson takes as a JSON string, holds no control
 * byte, reads back as the input, and text jansson takes (without control
 * bytes or backslashes) is shown unchanged. */
static void test_random(void)
{
	static const uint8_t pick[] = {'a', 'z', ' ', '\'', '\\', 0, 0x1b, 0x7f, 0x80, 0xbf, 0xc2, 0xc3,
		0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0xa0, 0x9f, 0x90, 0x8f};
	uint64_t x = 88172645463325252ull;
	size_t kept = 0;

	for (int t = 0; t < 100000; t++) {
		char in[12], back[12];
		size_t n = 0;
		long chars;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		n = x % 12;
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			in[i] = (char)pick[x % sizeof(pick)];
		}
		char *got = buf_shown(in, n, SIZE_MAX, &chars);
		size_t len = strlen(got);
		json_t *j = json_stringn(got, len);
		long cps = 0;

		CHECK(j != NULL);
		json_decref(j);
		for (size_t i = 0; i < len; i++) {
			CHECK((uint8_t)got[i] >= 0x20 && (uint8_t)got[i] != 0x7f);
			cps += ((uint8_t)got[i] & 0xc0) != 0x80;
		}
		CHECK_EQ_INT(chars, cps);
		CHECK(unshow(got, back) == n && memcmp(back, in, n) == 0);
		j = json_stringn(in, n);
		if (j != NULL && memchr(in, '\\', n) == NULL && memchr(in, 0x1b, n) == NULL &&
		    memchr(in, 0x7f, n) == NULL && memchr(in, 0, n) == NULL) {
			CHECK(len == n && memcmp(got, in, n) == 0);
			kept++;
		}
		json_decref(j);
		free(got);
	}
	CHECK(kept > 1000);   /* the oracle's side was reached */
}

int main(void)
{
	RUN(test_examples);
	RUN(test_random);
	return unit_report("text");
}
