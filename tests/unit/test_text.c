/*
 * test_text.c - lib/base/text.h: distrusted bytes shown to a person.
 */
#include <jansson.h>
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "base/slice.h"
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
	/* valid UTF-8 as it is, in the columns a terminal gives it: one a
	 * letter, two an emoji or a CJK character, none a combining mark */
	one("d\xc3\xa9j\xe2\x82\xac \xf0\x9f\x8f\x83", 12, SIZE_MAX, "d\xc3\xa9j\xe2\x82\xac \xf0\x9f\x8f\x83", 7);
	one("\xe4\xb8\xad\xe6\x96\x87", 6, SIZE_MAX, "\xe4\xb8\xad\xe6\x96\x87", 4);
	one("e\xcc\x81!", 4, SIZE_MAX, "e\xcc\x81!", 2);
	/* what is not UTF-8, byte by byte: a stray byte, a cut sequence, an
	 * overlong '/', a surrogate, a code point past U+10FFFF */
	one("m-\xff", 3, SIZE_MAX, "m-\\xff", 6);
	one("x\xc3", 2, SIZE_MAX, "x\\xc3", 5);
	one("\xc0\xaf", 2, SIZE_MAX, "\\xc0\\xaf", 8);
	one("\xed\xa0\x80", 3, SIZE_MAX, "\\xed\\xa0\\x80", 12);
	one("\xf4\x90\x80\x80", 4, SIZE_MAX, "\\xf4\\x90\\x80\\x80", 16);
	one("\xe2\x82", 2, SIZE_MAX, "\\xe2\\x82", 8);
	/* valid, but escaped: C1 controls (an 8-bit CSI, NEL), the line
	 * separator, bidirectional controls; the characters around stay */
	one("a\xc2\x9b" "31mX\xc2\x85Y", 10, SIZE_MAX, "a\\xc2\\x9b31mX\\xc2\\x85Y", 22);
	one("\xc2\x80\xc2\x9f\xc2\xa0", 6, SIZE_MAX, "\\xc2\\x80\\xc2\\x9f\xc2\xa0", 17);
	one("x\xe2\x80\xa8y\xe2\x80\xaez\xe2\x81\xa9\xd8\x9c\xe2\x80\x8f", 17, SIZE_MAX,
		"x\\xe2\\x80\\xa8y\\xe2\\x80\\xaez\\xe2\\x81\\xa9\\xd8\\x9c\\xe2\\x80\\x8f", 3 + 14 * 4);
	/* their neighbours are shown: U+2027, U+202F, U+2065, U+206A (a
	 * format character, no column), U+061B */
	one("\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xd8\x9b", 14, SIZE_MAX,
		"\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xd8\x9b", 4);
	/* an escaped character is cut like bytes, within max */
	one("a\xe2\x80\xae", 4, 2, "a\\xe2...", 8);
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

/* Whether the UTF-8 text s[0..n) (valid: jansson took it) holds a code
 * point the rule escapes although valid, by decoding each one. */
static int holds_hidden(const char *s, size_t n)
{
	const uint8_t *p = (const uint8_t *)s;

	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t l = p[i] < 0x80 ? 1 : p[i] < 0xe0 ? 2 : p[i] < 0xf0 ? 3 : 4;

		cp = l == 1 ? p[i] : (uint32_t)(p[i] & (0x7f >> l));
		for (size_t k = 1; k < l; k++)
			cp = cp << 6 | (p[i + k] & 0x3f);
		if ((cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || cp == 0x200e || cp == 0x200f ||
		    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
			return 1;
		i += l;
	}
	return 0;
}

/* Random bytes, weighted to UTF-8's lead and continuation bytes and to
 * the characters escaped although valid: what is shown is always text
 * jansson takes as a JSON string, holds no control character (C0, DEL,
 * C1), separator or bidirectional control, reads back as the input, and
 * text jansson takes that holds none of them (nor a backslash) is shown
 * unchanged. */
/* The columns of text s[0..n) as the C library decodes it (mbrtowc, not
 * our decoder) and measures it (wcwidth; 1 where it has no answer). */
static long columns_of(const char *s, size_t n)
{
	locale_t l = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0), old;
	mbstate_t st;
	long c = 0;

	CHECK(l != (locale_t)0);
	old = uselocale(l);
	memset(&st, 0, sizeof(st));
	for (size_t i = 0; i < n;) {
		wchar_t w;
		size_t k = mbrtowc(&w, s + i, n - i, &st);
		int x;

		CHECK(k != 0 && k != (size_t)-1 && k != (size_t)-2);
		if (k == 0 || k > n - i)
			break;
		x = wcwidth(w);
		c += x < 0 ? 1 : x;
		i += k;
	}
	uselocale(old);
	freelocale(l);
	return c;
}

/* cnt_line_shown(in) is cnt_shown(in), got, with every \x5c a backslash
 * again; and got, already shown, passes through it unchanged.  Into less
 * room, it is the whole when that fits, else a prefix of the whole that
 * ends where a character or an escape does, cut only when the next one
 * and "..." would not fit, then "...". */
static void line_against_shown(const char *in, size_t n, const char *got, size_t len)
{
	char want[CNT_SHOWN_SIZE(12)], line[CNT_SHOWN_SIZE(12)], again[CNT_SHOWN_SIZE(4 * 12)];
	size_t unit[CNT_SHOWN_SIZE(12)];   /* at a unit's start, its length, else 0 */
	size_t w = 0;

	for (size_t i = 0; i < len; i++) {
		if (got[i] == '\\') {
			size_t u = strncmp(got + i, "\\x5c", 4) == 0 ? 1 : 4;

			memcpy(want + w, u == 1 ? "\\" : got + i, u);
			unit[w] = u;
			for (size_t k = 1; k < u; k++)
				unit[w + k] = 0;
			w += u;
			i += 3;
		} else {
			unit[w] = ((uint8_t)got[i] & 0xc0) == 0x80 ? 0 : cnt_utf8_len((const uint8_t *)got + i, len - i);
			want[w++] = got[i];
		}
	}
	want[w] = 0;
	CHECK_EQ_STR(cnt_line_shown(in, n, line, sizeof(line)), want);
	CHECK_EQ_STR(cnt_line_shown(got, len, again, sizeof(again)), got);
	for (size_t size = 4; size <= w + 1; size++) {
		size_t m = strlen(cnt_line_shown(in, n, line, size)), cut;

		if (size > w) {
			CHECK_EQ_STR(line, want);
			continue;
		}
		CHECK(m < size && m >= 3 && strcmp(line + m - 3, "...") == 0);
		cut = m - 3;
		CHECK(memcmp(line, want, cut) == 0 && unit[cut] > 0);
		CHECK(cut + unit[cut] + 3 > size - 1);
	}
}

static void test_random(void)
{
	static const uint8_t pick[] = {'a', 'z', ' ', '\'', '\\', 0, 0x1b, 0x7f, 0x80, 0xbf, 0xc2, 0xc3,
		0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0xa0, 0x9f, 0x90, 0x8f,
		0x80, 0x81, 0xa8, 0xa9, 0xaa, 0xae, 0xaf, 0x8e, 0xa6, 0xa5, 0xd8, 0x9c};
	uint64_t x = 88172645463325252ull;
	size_t kept = 0, hidden = 0;

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
		CHECK_EQ_INT(chars, columns_of(got, len));
		CHECK(chars <= 2 * cps);
		CHECK(!holds_hidden(got, len));
		CHECK(unshow(got, back) == n && memcmp(back, in, n) == 0);
		line_against_shown(in, n, got, len);
		j = json_stringn(in, n);
		hidden += j != NULL && holds_hidden(in, n);
		if (j != NULL && memchr(in, '\\', n) == NULL && memchr(in, 0x1b, n) == NULL &&
		    memchr(in, 0x7f, n) == NULL && memchr(in, 0, n) == NULL && !holds_hidden(in, n)) {
			CHECK(len == n && memcmp(got, in, n) == 0);
			kept++;
		}
		json_decref(j);
		free(got);
	}
	CHECK(kept > 1000);   /* the oracle's side was reached */
	CHECK(hidden > 100);  /* and the escaped characters' */
}

/* A message line: the rule, but the backslash as it is. */
static void test_line_examples(void)
{
	char out[CNT_SHOWN_SIZE(64)];
	const char *shown = "cnt-x: name 'a\\x0ab\\x5c' is not declared";

	CHECK_EQ_STR(cnt_line_shown("", 0, out, sizeof(out)), "");
	CHECK_EQ_STR(cnt_line_shown("cnt-x: 'C:\\tmp'", 15, out, sizeof(out)), "cnt-x: 'C:\\tmp'");
	CHECK_EQ_STR(cnt_line_shown("a\nb\r\tc", 6, out, sizeof(out)), "a\\x0ab\\x0d\\x09c");
	CHECK_EQ_STR(cnt_line_shown("\x1b[31mred\x7f", 9, out, sizeof(out)), "\\x1b[31mred\\x7f");
	/* C1 NEL, a bidirectional override, a line separator, a byte that is
	 * not UTF-8, a NUL: escaped a byte at a time */
	CHECK_EQ_STR(cnt_line_shown("\xc2\x85|\xe2\x80\xae|\xe2\x80\xa8|\xff|", 13, out, sizeof(out)),
		"\\xc2\\x85|\\xe2\\x80\\xae|\\xe2\\x80\\xa8|\\xff|");
	CHECK_EQ_STR(cnt_line_shown("a\0b", 3, out, sizeof(out)), "a\\x00b");
	/* valid UTF-8 as it is; a message already shown passes unchanged */
	CHECK_EQ_STR(cnt_line_shown("d\xc3\xa9j\xf0\x9f\x8f\x83", 8, out, sizeof(out)), "d\xc3\xa9j\xf0\x9f\x8f\x83");
	CHECK_EQ_STR(cnt_line_shown(shown, strlen(shown), out, sizeof(out)), shown);
	/* too long for out: cut after a whole character or escape, "..." */
	CHECK_EQ_STR(cnt_line_shown("abcdefghijklmnop", 16, out, 12), "abcdefgh...");
	CHECK_EQ_STR(cnt_line_shown("ab\x01\x02\x03", 5, out, 12), "ab\\x01...");
	CHECK_EQ_STR(cnt_line_shown("ab\xc3\xa9\xc3\xa9\xc3\xa9z", 9, out, 10), "ab\xc3\xa9\xc3\xa9\xc3\xa9z");
	CHECK_EQ_STR(cnt_line_shown("ab\xc3\xa9\xc3\xa9\xc3\xa9z", 9, out, 9), "ab\xc3\xa9...");
	CHECK_EQ_STR(cnt_line_shown("abcdefgh", 8, out, 9), "abcdefgh");
	CHECK_EQ_STR(cnt_line_shown("abcdefghi", 9, out, 9), "abcde...");
}

/* Worked examples of cnt_utf8_cut and CNT_CUT. */
static void test_cut_examples(void)
{
	static const char euro[] = "a\xe2\x82\xac", emoji[] = "\xf0\x9f\x98\x80z", stray[] = "ab\x80\x80\x80\x80";
	cnt_slice s = { "ab\xc3\xa9", 4 }, none = { NULL, 0 };
	char m[64];

	CHECK_EQ_INT(cnt_utf8_cut("abc", 3, 3), 3);
	CHECK_EQ_INT(cnt_utf8_cut("abc", 3, 2), 2);
	CHECK_EQ_INT(cnt_utf8_cut("abc", 3, 0), 0);
	CHECK_EQ_INT(cnt_utf8_cut(euro, 4, 4), 4);
	CHECK_EQ_INT(cnt_utf8_cut(euro, 4, 3), 1);   /* not into the euro sign */
	CHECK_EQ_INT(cnt_utf8_cut(euro, 4, 2), 1);
	CHECK_EQ_INT(cnt_utf8_cut(euro, 4, 1), 1);
	CHECK_EQ_INT(cnt_utf8_cut(emoji, 5, 3), 0);
	CHECK_EQ_INT(cnt_utf8_cut(emoji, 5, 4), 4);
	CHECK_EQ_INT(cnt_utf8_cut(stray, 6, 4), 4);  /* stray continuation bytes: cut where they fall */
	CHECK_EQ_INT(cnt_utf8_cut("\xc3\xa9", 2, 1), 0);
	CHECK_EQ_INT(cnt_utf8_cut("\xc3\xc3", 2, 1), 1);  /* a lead byte alone is no character */
	CHECK_EQ_INT(cnt_utf8_cut("a\0bbbb", 6, 64), 1);  /* a NUL ends it, as it ends %.*s */
	snprintf(m, sizeof(m), "'%.*s%s'", CNT_CUT(s, 3));
	CHECK_EQ_STR(m, "'ab...'");
	snprintf(m, sizeof(m), "'%.*s%s'", CNT_CUT(s, 4));
	CHECK_EQ_STR(m, "'ab\xc3\xa9'");
	snprintf(m, sizeof(m), "'%.*s%s'", CNT_CUT(none, 4));
	CHECK_EQ_STR(m, "''");
	s = (cnt_slice){ "a\0bbbb", 6 };   /* shorter than max, but cut: it says so */
	snprintf(m, sizeof(m), "'%.*s%s'", CNT_CUT(s, 64));
	CHECK_EQ_STR(m, "'a...'");
}

/* On random bytes: a NUL before max ends the cut; else the cut is at most
 * max and at most three bytes short of it, and of text jansson accepts, it
 * keeps the longest prefix that is still text (jansson the judge). */
static void test_cut_random(void)
{
	static const uint8_t pick[] = {'a', 0, 0x80, 0x9f, 0xbf, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f,
		0x98, 0xed, 0xa0, 0xf4, 0x90, 0xff};
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t text = 0;

	for (int t = 0; t < 50000; t++) {
		char in[10];
		size_t n;
		json_t *j;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		n = x % 10;
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			in[i] = (char)pick[x % sizeof(pick)];
		}
		j = json_stringn(in, n);
		text += j != NULL;
		for (size_t max = 0; max <= n + 1; max++) {
			size_t k = cnt_utf8_cut(in, n, max);
			const char *nul = memchr(in, 0, n < max ? n : max);

			if (nul != NULL) {   /* a NUL within the cut ends it */
				CHECK_EQ_INT(k, nul - in);
				continue;
			}
			if (n <= max) {
				CHECK_EQ_INT(k, n);
				continue;
			}
			CHECK(k <= max && k + 3 >= max);
			if (j != NULL) {
				json_t *pre = json_stringn(in, k);

				CHECK(pre != NULL);
				json_decref(pre);
				for (size_t l = k + 1; l <= max; l++) {
					pre = json_stringn(in, l);
					CHECK(pre == NULL);
					json_decref(pre);
				}
			}
		}
		json_decref(j);
	}
	CHECK(text > 1000);
}

int main(void)
{
	RUN(test_examples);
	RUN(test_random);
	RUN(test_line_examples);
	RUN(test_cut_examples);
	RUN(test_cut_random);
	return unit_report("text");
}
