/* topkey: the hottest (tenant, counter, member) key in bounded memory. */
#include <stdio.h>
#include <string.h>

#include "count/topkey.h"
#include "unit.h"

static cnt_slice S(const char *s) { cnt_slice x = {s, strlen(s)}; return x; }

static int add(cnt_topkey *t, const char *a, const char *b, const char *c)
{
	cnt_err err;

	return cnt_topkey_add(t, S(a), S(b), S(c), &err);
}

static int is(cnt_slice s, const char *v) { return s.n == strlen(v) && memcmp(s.p, v, s.n) == 0; }

static void test_exact_few_keys(void)
{
	cnt_err err;
	cnt_topkey *t = cnt_topkey_new(4, &err);
	cnt_topkey_top top;

	CHECK(t != NULL);
	cnt_topkey_get(t, &top);
	CHECK(top.n == 0 && top.count == 0 && top.exact == 1 && top.member.n == 0);
	for (int i = 0; i < 5; i++)
		CHECK_EQ_INT(add(t, "acme", "views", "v1"), 0);
	for (int i = 0; i < 7; i++)
		CHECK_EQ_INT(add(t, "acme", "views", "v2"), 0);
	/* the same member under another counter, and split differently, is another key */
	CHECK_EQ_INT(add(t, "acme", "view", "sv2"), 0);
	CHECK_EQ_INT(add(t, "acme", "likes", "v2"), 0);
	cnt_topkey_get(t, &top);
	CHECK(top.n == 14 && top.count == 7 && top.exact == 1);
	CHECK(is(top.tenant, "acme") && is(top.counter, "views") && is(top.member, "v2"));
	cnt_topkey_free(t);
}

/* A heavy hitter among many distinct keys, k = 8: its count is at most
 * n / (k + 1) low, never high; the flag says the counts are bounds. */
static void test_heavy_hitter_bound(void)
{
	cnt_err err;
	cnt_topkey *t = cnt_topkey_new(8, &err);
	cnt_topkey_top top;
	char m[32];
	uint64_t hot = 0;

	CHECK(t != NULL);
	for (int i = 0; i < 9000; i++) {
		if (i % 3 == 0) {
			CHECK_EQ_INT(add(t, "t", "c", "hot"), 0);
			hot++;
		} else {
			snprintf(m, sizeof(m), "m-%d", i);
			CHECK_EQ_INT(add(t, "t", "c", m), 0);
		}
	}
	cnt_topkey_get(t, &top);
	CHECK(top.n == 9000 && top.exact == 0);
	CHECK(is(top.member, "hot"));
	CHECK(top.count <= hot && top.count + 9000 / 9 >= hot);
	cnt_topkey_free(t);
}

/* Keys holding NUL bytes, quotes and empty parts are compared whole. */
static void test_odd_bytes(void)
{
	cnt_err err;
	cnt_topkey *t = cnt_topkey_new(2, &err);
	cnt_topkey_top top;
	cnt_slice a = {"a\0b", 3}, e = {"", 0}, q = {"\"\\\n", 3};

	CHECK(t != NULL);
	CHECK_EQ_INT(cnt_topkey_add(t, a, e, q, &err), 0);
	CHECK_EQ_INT(cnt_topkey_add(t, a, e, q, &err), 0);
	CHECK_EQ_INT(cnt_topkey_add(t, e, a, q, &err), 0);
	cnt_topkey_get(t, &top);
	CHECK(top.count == 2 && top.exact == 1 && top.tenant.n == 3 && memcmp(top.tenant.p, "a\0b", 3) == 0 &&
	      top.counter.n == 0 && top.member.n == 3);
	cnt_topkey_free(t);
	CHECK(cnt_topkey_new(0, &err) == NULL && strstr(err.msg, "out of range") != NULL);
}

static void test_list(void)
{
	cnt_err err;
	cnt_topkey *t = cnt_topkey_new(8, &err);
	cnt_topkey_top l[4];

	CHECK(t != NULL);
	CHECK_EQ_INT((int)cnt_topkey_list(t, l, 4), 0);
	/* c:3, then a and b tie at 2 (listed in byte order, whatever came first), d:1 */
	add(t, "x", "v", "b"); add(t, "x", "v", "c"); add(t, "x", "v", "b"); add(t, "x", "v", "c");
	add(t, "x", "v", "a"); add(t, "x", "v", "d"); add(t, "x", "v", "c"); add(t, "x", "v", "a");
	CHECK_EQ_INT((int)cnt_topkey_list(t, l, 4), 4);
	CHECK(is(l[0].member, "c") && l[0].count == 3 && l[0].n == 8 && l[0].exact == 1);
	CHECK(is(l[1].member, "a") && l[1].count == 2 && is(l[2].member, "b") && l[2].count == 2);
	CHECK(is(l[3].member, "d") && l[3].count == 1 && is(l[3].tenant, "x") && is(l[3].counter, "v"));
	/* a shorter list keeps the hottest */
	CHECK_EQ_INT((int)cnt_topkey_list(t, l, 2), 2);
	CHECK(is(l[0].member, "c") && is(l[1].member, "a"));
	CHECK_EQ_INT((int)cnt_topkey_list(t, l, 0), 0);
	cnt_topkey_free(t);
}

int main(void)
{
	RUN(test_list);
	RUN(test_exact_few_keys);
	RUN(test_heavy_hitter_bound);
	RUN(test_odd_bytes);
	return unit_report("test_topkey");
}
