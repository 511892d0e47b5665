/*
 * test_pin.c - session tokens (lib/view/pin.h): the one spelling of a
 * token, keys escaped and decoded, every malformed form refused, the
 * board/scope/count check, --if-newer's argument and the not-modified
 * rule.
 */
#include <stdint.h>
#include <string.h>

#include "view/pin.h"
#include "unit.h"

static const char *enc(int verified, const char *b, const char *s, int v, uint64_t c, cnt_buf *out)
{
	out->len = 0;
	CHECK(cnt_pin_encode(verified, b, s, v, c, out) == 0);
	CHECK(cnt_buf_putc(out, 0) == 0);
	return (const char *)out->p;
}

static void test_encode(void)
{
	cnt_buf b = CNT_BUF_INIT;

	CHECK_EQ_STR(enc(0, "acme-30d", "global", 1, 0x1234abcdULL, &b), "cnt1:acme-30d:global:1:000000001234abcd");
	CHECK_EQ_STR(enc(1, "b", "eu", 999999, UINT64_MAX, &b), "cnt1v:b:eu:999999:ffffffffffffffff");
	/* everything outside [A-Za-z0-9._-] escaped, upper-case hex */
	CHECK_EQ_STR(enc(0, "a:b c%", "\xc3\xa9/x", 12, 0, &b), "cnt1:a%3Ab%20c%25:%C3%A9%2Fx:12:0000000000000000");
	cnt_buf_release(&b);
}

static void test_round_trip(void)
{
	cnt_buf b = CNT_BUF_INIT;
	cnt_pin_token t;
	cnt_err err;
	const char *s = enc(1, "w:\xc3\xa9 1%", "sc.o_pe-", 42, 0xfedcba9876543210ULL, &b);

	CHECK(cnt_pin_parse(s, &t, &err) == 0);
	CHECK(t.verified == 1);
	CHECK_EQ_STR(t.board, "w:\xc3\xa9 1%");
	CHECK_EQ_INT(t.board_len, 7);
	CHECK_EQ_STR(t.scope, "sc.o_pe-");
	CHECK_EQ_INT(t.version, 42);
	CHECK(t.content == 0xfedcba9876543210ULL);
	CHECK(cnt_pin_check(&t, "w:\xc3\xa9 1%", "sc.o_pe-", 1, &err) == 0);
	CHECK(cnt_pin_check(&t, "w:\xc3\xa9 1%", "sc.o_pe-", 0, &err) == -1);
	CHECK_EQ_STR(err.msg, "the token pins the verified count: add --verified");
	CHECK(cnt_pin_check(&t, "w", "sc.o_pe-", 1, &err) == -1);
	CHECK(cnt_pin_check(&t, "w:\xc3\xa9 1%", "sc", 1, &err) == -1);
	CHECK(strstr(err.msg, "not board") != NULL);
	cnt_buf_release(&b);
}

static void test_malformed(void)
{
	static const char *const bad[] = {
		"", "cnt1", "cnt1:", "cnt2:b:s:1:0000000000000000", "CNT1:b:s:1:0000000000000000",
		"cnt1::s:1:0000000000000000",          /* empty board */
		"cnt1:b::1:0000000000000000",          /* empty scope */
		"cnt1:b:s:0:0000000000000000",         /* version 0 */
		"cnt1:b:s:01:0000000000000000",        /* leading zero: not the one spelling */
		"cnt1:b:s:1000000:0000000000000000",   /* too large */
		"cnt1:b:s:-1:0000000000000000",
		"cnt1:b:s:1:000000000000000",          /* 15 digits */
		"cnt1:b:s:1:00000000000000000",        /* 17 */
		"cnt1:b:s:1:000000000000000A",         /* upper-case content */
		"cnt1:b:s:1:000000000000000g",
		"cnt1:b:s:x:s:1:0000000000000000",     /* an unescaped ':' in the scope */
		"cnt1:b c:s:1:0000000000000000",       /* an unescaped space */
		"cnt1:%62:s:1:0000000000000000",       /* 'b' escaped: not the one spelling */
		"cnt1:b%3a:s:1:0000000000000000",      /* lower-case escape */
		"cnt1:b%3:s:1:0000000000000000",
		"cnt1:b%00:s:1:0000000000000000",      /* NUL */
		"cnt1:b:s:1:0000000000000000:",
		"cnt1:b:s:1",
	};
	cnt_pin_token t;
	cnt_err err;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err.msg[0] = 0;
		if (cnt_pin_parse(bad[i], &t, &err) != -1)
			fprintf(stderr, "accepted: '%s'\n", bad[i]);
		CHECK(cnt_pin_parse(bad[i], &t, &err) == -1);
		CHECK(strstr(err.msg, "is not a cnt-rank token") != NULL);
		CHECK(err.kind == CNT_ERR_DATA);
	}
	/* a key longer than CNT_PIN_KEY_MAX */
	{
		char s[3000] = "cnt1:";

		memset(s + 5, 'b', CNT_PIN_KEY_MAX + 1);
		strcpy(s + 5 + CNT_PIN_KEY_MAX + 1, ":s:1:0000000000000000");
		CHECK(cnt_pin_parse(s, &t, &err) == -1);
		s[5 + CNT_PIN_KEY_MAX] = ':';
		memcpy(s + 5 + CNT_PIN_KEY_MAX + 1, "s:1:0000000000000000", 21);
		CHECK(cnt_pin_parse(s, &t, &err) == 0);
		CHECK_EQ_INT(t.board_len, CNT_PIN_KEY_MAX);
	}
}

static void test_if_newer(void)
{
	cnt_pin_token t;
	int v = 0, tok = 1;
	cnt_err err;

	CHECK(cnt_pin_parse_if_newer("7", &v, &t, &tok, &err) == 0);
	CHECK(v == 7 && tok == 0);
	CHECK(cnt_pin_parse_if_newer("999999", &v, &t, &tok, &err) == 0 && v == 999999);
	CHECK(cnt_pin_parse_if_newer("cnt1:b:s:3:00000000000000ff", &v, &t, &tok, &err) == 0);
	CHECK(v == 3 && tok == 1 && t.content == 0xff);
	CHECK(cnt_pin_parse_if_newer("0", &v, &t, &tok, &err) == -1);
	CHECK(cnt_pin_parse_if_newer("07", &v, &t, &tok, &err) == -1);
	CHECK(cnt_pin_parse_if_newer("1000000", &v, &t, &tok, &err) == -1);
	CHECK(cnt_pin_parse_if_newer("2x", &v, &t, &tok, &err) == -1);
	CHECK(cnt_pin_parse_if_newer("x", &v, &t, &tok, &err) == -1);
	CHECK(strncmp(err.msg, "--if-newer: ", 12) == 0);
}

static void test_not_modified(void)
{
	uint8_t file[32] = {0};
	cnt_view v;
	cnt_pin_token t;

	memset(&v, 0, sizeof(v));
	/* header checksum 0x...01 at 8, data checksum 0x...10 at 24 */
	file[8] = 0x01;
	file[24] = 0x10;
	file[31] = 0x80;
	v.map = file;
	v.map_len = sizeof(file);
	v.desc.version = 4;
	CHECK(cnt_pin_content(&v) == (0x11ULL | 0x8000000000000000ULL));
	memset(&t, 0, sizeof(t));
	t.content = cnt_pin_content(&v);
	CHECK(cnt_pin_not_modified(&v, 4, NULL));
	CHECK(cnt_pin_not_modified(&v, 4, &t));
	CHECK(!cnt_pin_not_modified(&v, 3, NULL));   /* a later version */
	CHECK(!cnt_pin_not_modified(&v, 5, NULL));   /* a rollback */
	t.content ^= 1;
	CHECK(!cnt_pin_not_modified(&v, 4, &t));     /* same number, other view */
}

int main(void)
{
	RUN(test_encode);
	RUN(test_round_trip);
	RUN(test_malformed);
	RUN(test_if_newer);
	RUN(test_not_modified);
	return unit_report("test_pin");
}
