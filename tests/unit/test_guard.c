/*
 * test_guard.c - the display-count guard (lib/view/guard.h): the fast and
 * verified sequence, an older verified value, keys holding any byte, the
 * file written and read back byte for byte, and damaged files refused.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "view/guard.h"
#include "unit.h"

#define W1 INT64_C(1780963200000)   /* an audit watermark */

static int64_t serve(cnt_guard *g, const char *m, int64_t v, int verified, int64_t as_of, cnt_guard_step *st)
{
	cnt_err err;

	CHECK(cnt_guard_serve(g, "b", "global", m, strlen(m), v, verified, as_of, st, &err) == 0);
	return st->served;
}

static void test_sequence(void)
{
	cnt_guard *g = cnt_guard_new();
	cnt_guard_step st;

	/* fast up */
	CHECK_EQ_INT(serve(g, "v1", 8, 0, 0, &st), 8);
	CHECK(!st.clamped && !st.had_floor);
	CHECK_EQ_INT(serve(g, "v1", 10, 0, 0, &st), 10);
	CHECK(!st.clamped && st.had_floor && st.floor == 8);
	/* fast down: clamped */
	CHECK_EQ_INT(serve(g, "v1", 8, 0, 0, &st), 10);
	CHECK(st.clamped && st.floor == 10);
	/* verified down: served, the floor reset */
	CHECK_EQ_INT(serve(g, "v1", 5, 1, W1, &st), 5);
	CHECK(st.reset && !st.clamped);
	/* fast below the verified floor: clamped to it, not to 10 */
	CHECK_EQ_INT(serve(g, "v1", 3, 0, 0, &st), 5);
	CHECK(st.clamped && st.floor == 5);
	/* fast up again: served */
	CHECK_EQ_INT(serve(g, "v1", 7, 0, 0, &st), 7);
	CHECK(!st.clamped);
	/* fast down below the verified floor: clamped to the last served */
	CHECK_EQ_INT(serve(g, "v1", 3, 0, 0, &st), 7);
	CHECK(st.clamped);
	/* a verified value may also raise the floor */
	CHECK_EQ_INT(serve(g, "v1", 9, 1, W1 + 3600000, &st), 9);
	CHECK(st.reset);
	/* an older audit is answered but leaves the floor */
	CHECK_EQ_INT(serve(g, "v1", 2, 1, W1, &st), 2);
	CHECK(st.old_verified && !st.reset);
	CHECK_EQ_INT(serve(g, "v1", 4, 0, 0, &st), 9);
	CHECK(st.clamped);
	/* other members, boards and scopes are their own */
	CHECK_EQ_INT(serve(g, "v2", 1, 0, 0, &st), 1);
	CHECK_EQ_INT(cnt_guard_count(g), 2);
	cnt_guard_free(g);
}

static void test_round_trip(void)
{
	cnt_guard *g = cnt_guard_new(), *h;
	cnt_buf a = CNT_BUF_INIT, b = CNT_BUF_INIT;
	cnt_guard_step st;
	cnt_err err;
	const char odd[] = "a b%c\n\"\\\x01\xff";

	CHECK(cnt_guard_serve(g, "b o", "s\t1", odd, sizeof(odd) - 1, -7, 0, 0, &st, &err) == 0);
	serve(g, "z", 3, 1, W1, &st);
	serve(g, "a", INT64_MAX, 0, 0, &st);
	serve(g, "a", 0, 0, 0, &st);
	CHECK(cnt_guard_write(g, &a) == 0);
	h = cnt_guard_parse((const char *)a.p, a.len, "t", &err);
	CHECK(h != NULL);
	if (h) {
		CHECK(cnt_guard_write(h, &b) == 0);
		CHECK(a.len == b.len && memcmp(a.p, b.p, a.len) == 0);
		/* the state came back: the odd key's floor, the clamp of a */
		CHECK(cnt_guard_serve(h, "b o", "s\t1", odd, sizeof(odd) - 1, -9, 0, 0, &st, &err) == 0);
		CHECK(st.clamped && st.served == -7);
		CHECK_EQ_INT(serve(h, "a", 1, 0, 0, &st), INT64_MAX);
		CHECK_EQ_INT(serve(h, "z", 1, 1, W1 - 1, &st), 1);
		CHECK(st.old_verified);
		cnt_guard_free(h);
	}
	{
		static const char line[] = "b%20o s%091 a%20b%25c%0A\"\\%01%FF -7 - 0\n";

		CHECK(memmem(a.p, a.len, line, sizeof(line) - 1) != NULL);
	}
	/* an empty guard */
	cnt_guard_free(g);
	g = cnt_guard_new();
	b.len = 0;
	CHECK(cnt_guard_write(g, &b) == 0);
	CHECK(b.len == 12 + 23 && memcmp(b.p, "cnt-guard 1\nend 0 ", 18) == 0);
	cnt_guard_free(g);
	cnt_buf_release(&a);
	cnt_buf_release(&b);
}

static void refused(const char *text, size_t n, const char *want)
{
	cnt_err err;
	cnt_guard *g = cnt_guard_parse(text, n, "g.txt", &err);

	CHECK(g == NULL);
	if (g == NULL && strstr(err.msg, want) == NULL) {
		fprintf(stderr, "message \"%s\" lacks \"%s\"\n", err.msg, want);
		CHECK(0);
	}
	cnt_guard_free(g);
}

static void test_damaged(void)
{
	cnt_guard *g = cnt_guard_new();
	cnt_buf a = CNT_BUF_INIT;
	cnt_guard_step st;
	char *c;

	serve(g, "v1", 10, 0, 0, &st);
	serve(g, "v2", 5, 0, 0, &st);
	CHECK(cnt_guard_write(g, &a) == 0);
	c = malloc(a.len);
	memcpy(c, a.p, a.len);
	/* one digit changed: the checksum */
	c[strstr(c, " 10 ") - c + 1] = '9';
	refused(c, a.len, "checksum does not match");
	memcpy(c, a.p, a.len);
	refused(c, a.len - 1, "cut short");
	refused(c, a.len - 10, "damaged");
	refused("", 0, "empty");
	refused("hello\n", 6, "not a guard file");
	refused("cnt-guard 1\nend 1 0000000000000000\n", 35, "checksum");
	free(c);
	cnt_buf_release(&a);
	cnt_guard_free(g);
}

/* Lines that pass the checksum (written here with it) but not the checks. */
static void bad_body(const char *body, const char *want)
{
	cnt_guard *g = cnt_guard_new();
	cnt_buf a = CNT_BUF_INIT, t = CNT_BUF_INIT;

	CHECK(cnt_guard_write(g, &a) == 0);
	/* the header, the body, and a last line summing both as the writer does */
	cnt_buf_append(&t, a.p, 12);
	cnt_buf_append(&t, body, strlen(body));
	{
		size_t nl = 0;

		for (const char *p = body; *p; p++)
			nl += *p == '\n';
		cnt_buf_printf(&t, "end %zu %016llx\n", nl, (unsigned long long)XXH3_64bits(t.p, t.len));
	}
	refused((const char *)t.p, t.len, want);
	cnt_buf_release(&a);
	cnt_buf_release(&t);
	cnt_guard_free(g);
}

static void test_checked_fields(void)
{
	bad_body("b s m 1 - 0 extra\n", "expected board scope member");
	bad_body("b s m 01 - 0\n", "malformed");
	bad_body("b s m 1 x 0\n", "malformed");
	bad_body("b s m 1 - -1\n", "malformed");
	bad_body("b s m 99999999999999999999 - 0\n", "malformed");
	bad_body("b s %41 1 - 0\n", "encoded key");
	bad_body("b s %4 1 - 0\n", "encoded key");
	bad_body("b s m 1 - 0\nb s a 1 - 0\n", "out of order");
	bad_body("b s m 1 - 0\nb s m 2 - 0\n", "out of order");
}

static void test_window(void)
{
	CHECK(cnt_guard_window_ok(CNT_WIN_ALL_TIME));
	CHECK(cnt_guard_window_ok(CNT_WIN_SEASON));
	CHECK(cnt_guard_window_ok(CNT_WIN_RANGE));
	CHECK(!cnt_guard_window_ok(CNT_WIN_DAY));
	CHECK(!cnt_guard_window_ok(CNT_WIN_ROLLING_24H));
	CHECK(!cnt_guard_window_ok(CNT_WIN_LAST_30D));
}

int main(void)
{
	RUN(test_sequence);
	RUN(test_round_trip);
	RUN(test_damaged);
	RUN(test_checked_fields);
	RUN(test_window);
	return unit_report("test_guard");
}
