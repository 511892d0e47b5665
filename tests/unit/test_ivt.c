/*
 * test_ivt.c - the inline invalid-traffic filters (lib/ingest/ivt.h) and
 * the definitions keys that declare them and the watch-time gate.
 *
 * The list matchers are checked against their definitions computed the
 * slow way (every pattern searched with a case-folding strstr; every range
 * compared bit by bit) over many random inputs; the rate rule against a
 * hand-worked sequence; the definitions refusals by their messages.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/ivt.h"
#include "model/fingerprint.h"
#include "unit.h"

static int contains_ci(const char *h, const char *n)
{
	size_t hn = strlen(h), nn = strlen(n);

	for (size_t i = 0; i + nn <= hn; i++) {
		size_t k = 0;

		while (k < nn && (h[i + k] | (h[i + k] >= 'A' && h[i + k] <= 'Z' ? 32 : 0)) ==
		       (n[k] | (n[k] >= 'A' && n[k] <= 'Z' ? 32 : 0)))
			k++;
		if (k == nn)
			return 1;
	}
	return 0;
}

static int ua(const cnt_ualist *l, const char *s)
{
	return cnt_ualist_match(l, s, strlen(s));
}

static void test_ua_basic(void)
{
	static const char list[] = "# known bots\n\nGooglebot\n  HeadlessChrome \r\n=curl/8.0\nbc\nabcd\n";
	cnt_err err;
	cnt_ualist *l = cnt_ualist_parse(list, sizeof(list) - 1, "bots.txt", &err);

	CHECK(l != NULL);
	if (l == NULL)
		return;
	CHECK_EQ_INT(cnt_ualist_size(l), 5);
	CHECK_EQ_INT(ua(l, "Mozilla/5.0 (compatible; googlebot/2.1)"), 1);
	CHECK_EQ_INT(ua(l, "Mozilla/5.0 HEADLESSCHROME/120"), 1);
	CHECK_EQ_INT(ua(l, "curl/8.0"), 1);
	CHECK_EQ_INT(ua(l, "curl/8.0 extra"), 0);   /* exact means the whole value */
	CHECK_EQ_INT(ua(l, "CURL/8.0"), 0);         /* and its case */
	CHECK_EQ_INT(ua(l, "Mozilla/5.0 (X11; Linux)"), 0);
	CHECK_EQ_INT(ua(l, "xabcx"), 1);            /* "bc" found through abcd's failure link */
	CHECK_EQ_INT(ua(l, "ab"), 0);
	CHECK_EQ_INT(ua(l, ""), 0);
	CHECK_EQ_INT(ua(l, "Headless Chrome"), 0);
	cnt_ualist_free(l);
}

static void test_ua_random(void)
{
	/* patterns and agents over a small alphabet, so that overlaps abound */
	static const char alpha[] = "abAB c/";
	char pats[12][8], text[200], agent[40];
	unsigned seed = 7;

	for (int round = 0; round < 300; round++) {
		size_t k = 0, np = 1 + (size_t)(rand_r(&seed) % 12);
		cnt_err err;
		cnt_ualist *l;

		for (size_t i = 0; i < np; i++) {
			size_t n = 1 + (size_t)(rand_r(&seed) % 5);

			for (size_t j = 0; j < n; j++)
				pats[i][j] = "abABc/"[rand_r(&seed) % 6]; /* no blank: trimmed */
			pats[i][n] = '\0';
			k += (size_t)snprintf(text + k, sizeof(text) - k, "%s\n", pats[i]);
		}
		l = cnt_ualist_parse(text, k, "r", &err);
		CHECK(l != NULL);
		if (l == NULL)
			return;
		for (int t = 0; t < 40; t++) {
			size_t n = (size_t)(rand_r(&seed) % 30);
			int want = 0;

			for (size_t j = 0; j < n; j++)
				agent[j] = alpha[rand_r(&seed) % 7];
			agent[n] = '\0';
			for (size_t i = 0; i < np; i++)
				want |= contains_ci(agent, pats[i]);
			if (ua(l, agent) != want) {
				fprintf(stderr, "agent '%s' list:\n%s", agent, text);
				CHECK_EQ_INT(ua(l, agent), want);
				round = 1000;
				break;
			}
		}
		cnt_ualist_free(l);
	}
}

static void ua_refused(const char *text, const char *want)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_ualist *l = cnt_ualist_parse(text, strlen(text), "bots.txt", &err);

	CHECK(l == NULL);
	cnt_ualist_free(l);
	CHECK_EQ_STR(err.msg, want);
}

static void test_ua_refused(void)
{
	char long_line[400];

	ua_refused("ok\n=\n", "list 'bots.txt': line 2: a pattern must be 1 to 256 bytes");
	ua_refused("# c\nbad\x01one\n", "list 'bots.txt': line 2: 'bad?one' holds a control character");
	memset(long_line, 'x', 300);
	long_line[300] = '\0';
	ua_refused(long_line, "list 'bots.txt': line 1: a pattern must be 1 to 256 bytes");
}

static int am(const cnt_addrlist *l, const char *s)
{
	return cnt_addrlist_match(l, s, strlen(s));
}

static void test_addr_basic(void)
{
	static const char list[] = "# ranges\n203.0.113.0/24\n198.51.100.7\n2001:db8::/32\n"
				   "::ffff:192.0.2.128/121\n10.0.0.0/8\n  \n";
	cnt_err err;
	cnt_addrlist *l = cnt_addrlist_parse(list, sizeof(list) - 1, "ranges.txt", &err);

	CHECK(l != NULL);
	if (l == NULL)
		return;
	CHECK_EQ_INT(cnt_addrlist_size(l), 5);
	CHECK_EQ_INT(am(l, "203.0.113.9"), 1);
	CHECK_EQ_INT(am(l, "203.0.113.0/24"), 1);
	CHECK_EQ_INT(am(l, "203.0.113.0/25"), 1);
	CHECK_EQ_INT(am(l, "203.0.112.0/23"), 0);  /* wider than the listed range */
	CHECK_EQ_INT(am(l, "203.0.114.1"), 0);
	CHECK_EQ_INT(am(l, "198.51.100.7"), 1);
	CHECK_EQ_INT(am(l, "198.51.100.7/32"), 1);
	CHECK_EQ_INT(am(l, "198.51.100.0/24"), 0);
	CHECK_EQ_INT(am(l, "198.51.100.8"), 0);
	CHECK_EQ_INT(am(l, "2001:db8:ffff::1"), 1);
	CHECK_EQ_INT(am(l, "2001:db9::1"), 0);
	CHECK_EQ_INT(am(l, "192.0.2.130"), 1);     /* listed as IPv4-mapped /121 = /25 */
	CHECK_EQ_INT(am(l, "192.0.2.1"), 0);
	CHECK_EQ_INT(am(l, "::ffff:10.1.2.3"), 1); /* a mapped value is its IPv4 address */
	CHECK_EQ_INT(am(l, "10.255.0.1"), 1);
	CHECK_EQ_INT(am(l, "not an address"), -1);
	CHECK_EQ_INT(am(l, "10.0.0.1/33"), -1);
	CHECK_EQ_INT(am(l, ""), -1);
	CHECK_EQ_INT(am(l, "10.0.0.1/"), -1);
	cnt_addrlist_free(l);
}

static int in_range(uint32_t a, int alen, uint32_t r, int rlen)
{
	uint32_t m = rlen ? 0xffffffffu << (32 - rlen) : 0;

	return alen >= rlen && (a & m) == (r & m);
}

static void test_addr_random(void)
{
	unsigned seed = 11;

	for (int round = 0; round < 100; round++) {
		uint32_t r[20];
		int rl[20], n = 1 + rand_r(&seed) % 20;
		char text[1024], a[40];
		size_t k = 0;
		cnt_err err;
		cnt_addrlist *l;

		for (int i = 0; i < n; i++) {
			rl[i] = rand_r(&seed) % 33;
			/* addresses near each other so that ranges nest */
			r[i] = (0xc0a80000u | (uint32_t)(rand_r(&seed) & 0xffff)) &
			       (rl[i] ? 0xffffffffu << (32 - rl[i]) : 0);
			k += (size_t)snprintf(text + k, sizeof(text) - k, "%u.%u.%u.%u/%d\n", r[i] >> 24,
					      (r[i] >> 16) & 255, (r[i] >> 8) & 255, r[i] & 255, rl[i]);
		}
		l = cnt_addrlist_parse(text, k, "r", &err);
		CHECK(l != NULL);
		if (l == NULL)
			return;
		for (int t = 0; t < 50; t++) {
			uint32_t x = 0xc0a80000u | (uint32_t)(rand_r(&seed) & 0xffff);
			int xl = 16 + rand_r(&seed) % 17, want = 0;

			x &= 0xffffffffu << (32 - xl);
			for (int i = 0; i < n; i++)
				want |= in_range(x, xl, r[i], rl[i]);
			snprintf(a, sizeof(a), "%u.%u.%u.%u/%d", x >> 24, (x >> 16) & 255, (x >> 8) & 255,
				 x & 255, xl);
			if (am(l, a) != want) {
				fprintf(stderr, "value %s list:\n%s", a, text);
				CHECK_EQ_INT(am(l, a), want);
				round = 1000;
				break;
			}
		}
		cnt_addrlist_free(l);
	}
}

static void addr_refused(const char *text, const char *want)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_addrlist *l = cnt_addrlist_parse(text, strlen(text), "ranges.txt", &err);

	CHECK(l == NULL);
	cnt_addrlist_free(l);
	CHECK_EQ_STR(err.msg, want);
}

static void test_addr_refused(void)
{
	addr_refused("10.0.0.0/8\n# x\n10.0.0.300\n",
		     "list 'ranges.txt': line 3: '10.0.0.300' is not an IPv4 or IPv6 address or CIDR range");
	addr_refused("10.0.0.1/8\n", "list 'ranges.txt': line 1: '10.0.0.1/8' has bits set beyond its /8 prefix");
	addr_refused("10.0.0.0/33\n",
		     "list 'ranges.txt': line 1: '10.0.0.0/33' is not an IPv4 or IPv6 address or CIDR range");
	addr_refused("10.0.0.0/08\n",
		     "list 'ranges.txt': line 1: '10.0.0.0/08' is not an IPv4 or IPv6 address or CIDR range");
	addr_refused("2001:db8::1/129\n",
		     "list 'ranges.txt': line 1: '2001:db8::1/129' is not an IPv4 or IPv6 address or CIDR range");
	addr_refused("host.example\n",
		     "list 'ranges.txt': line 1: 'host.example' is not an IPv4 or IPv6 address or CIDR range");
}

/* ---- definitions and the run's filters ------------------------------------ */

static char dir[] = "/tmp/test_ivt.XXXXXX";

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

static cnt_defs *defs_with(const char *counter_extra, const char *version_extra, cnt_err *err)
{
	char text[2048], name[256];

	snprintf(text, sizeof(text),
		 "{\"format\": \"cnt-definitions/1\","
		 " \"tenants\": [{\"tenant_id\": \"tube\", \"timezone\": \"UTC\"}],"
		 " \"counters\": [{\"tenant_id\": \"tube\", \"counter_id\": \"views\"%s,"
		 "   \"versions\": [{\"version\": 1, \"type\": \"unique\"%s}]}]}",
		 counter_extra, version_extra);
	snprintf(name, sizeof(name), "%s/defs.json", dir);
	return cnt_defs_parse(text, strlen(text), name, err);
}

static void defs_refused(const char *cx, const char *vx, const char *want)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_defs *d = defs_with(cx, vx, &err);

	CHECK(d == NULL);
	cnt_defs_free(d);
	if (strstr(err.msg, want) == NULL) {
		fprintf(stderr, "got: %s\nwant: ...%s\n", err.msg, want);
		CHECK(0);
	}
}

static void test_defs_keys(void)
{
	cnt_err err;
	cnt_defs *d = defs_with(", \"filters\": [{\"rule\": \"user_agent\", \"list\": \"bots.txt\"},"
				"{\"rule\": \"address\", \"list\": \"/abs/ranges.txt\", \"attr\": \"ip\"},"
				"{\"rule\": \"rate\", \"max_events\": 3, \"span_s\": 60}]",
				", \"min_watch_ms\": 3000", &err);
	char want[300];

	CHECK(d != NULL);
	if (d != NULL) {
		const cnt_counter *c = cnt_defs_counter_at(d, 0);

		CHECK_EQ_INT(c->nfilters, 3);
		CHECK_EQ_STR(c->filters[0].attr, "user_agent");
		snprintf(want, sizeof(want), "%s/bots.txt", dir);
		CHECK_EQ_STR(c->filters[0].list_path, want);
		CHECK_EQ_STR(c->filters[0].list, "bots.txt");
		CHECK_EQ_STR(c->filters[1].attr, "ip");
		CHECK_EQ_STR(c->filters[1].list_path, "/abs/ranges.txt");
		CHECK(c->filters[2].attr == NULL);
		CHECK_EQ_INT(c->filters[2].max_events, 3);
		CHECK_EQ_INT(c->versions[0].min_watch_ms, 3000);
		CHECK_EQ_STR(c->versions[0].watch_attr, "ms_watched");
		CHECK_EQ_STR(cnt_defs_filter_name(c->filters[1].kind), "address");
	}
	cnt_defs_free(d);
	defs_refused("", ", \"min_watch_ms\": 0", "versions[0].min_watch_ms: 0 is out of range");
	defs_refused("", ", \"min_watch_ms\": \"3s\"", "min_watch_ms: expected an integer, got string");
	defs_refused("", ", \"watch_attr\": \"w\"", "versions[0].watch_attr: only allowed with min_watch_ms");
	defs_refused("", ", \"min_watch_ms\": 1, \"watch_attr\": \"\"", "watch_attr: must be 1 to 64 bytes");
	defs_refused(", \"filters\": [{\"rule\": \"bots\", \"list\": \"x\"}]", "",
		     "filters[0].rule: unknown value 'bots' (expected one of user_agent, address, rate)");
	defs_refused(", \"filters\": [{\"rule\": \"user_agent\", \"lists\": \"x\"}]", "",
		     "filters[0].lists: unknown key (did you mean 'list'?)");
	defs_refused(", \"filters\": [{\"rule\": \"user_agent\"}]", "", "filters[0].list: required key is missing");
	defs_refused(", \"filters\": [{\"rule\": \"address\", \"list\": \"\"}]", "", "filters[0].list: must not be empty");
	defs_refused(", \"filters\": [{\"rule\": \"rate\", \"span_s\": 5}]", "",
		     "filters[0].max_events: required key is missing");
	defs_refused(", \"filters\": [{\"rule\": \"rate\", \"max_events\": 0, \"span_s\": 5}]", "",
		     "filters[0].max_events: 0 is out of range");
	defs_refused(", \"filters\": [{\"rule\": \"rate\", \"max_events\": 2, \"span_s\": 5, \"list\": \"x\"}]",
		     "", "filters[0].list: unknown key");
	defs_refused(", \"filters\": {}", "", "filters: expected an array, got object");
}

static void test_fingerprint(void)
{
	cnt_err err;
	cnt_defs *plain = defs_with("", "", &err), *gated = defs_with("", ", \"min_watch_ms\": 3000", &err),
		 *other = defs_with("", ", \"min_watch_ms\": 5000, \"watch_attr\": \"w\"", &err);
	json_t *a, *b, *c;

	CHECK(plain && gated && other);
	if (!plain || !gated || !other)
		return;
	a = cnt_fp_counter_def(cnt_defs_counter_at(plain, 0), &cnt_defs_counter_at(plain, 0)->versions[0]);
	b = cnt_fp_counter_def(cnt_defs_counter_at(gated, 0), &cnt_defs_counter_at(gated, 0)->versions[0]);
	c = cnt_fp_counter_def(cnt_defs_counter_at(other, 0), &cnt_defs_counter_at(other, 0)->versions[0]);
	/* no gate: no key, so fingerprints from before the gate stay */
	CHECK(json_object_get(a, "min_watch_ms") == NULL && json_object_get(a, "watch_attr") == NULL);
	CHECK_EQ_INT(json_integer_value(json_object_get(b, "min_watch_ms")), 3000);
	CHECK_EQ_STR(json_string_value(json_object_get(b, "watch_attr")), "ms_watched");
	CHECK_EQ_INT(cnt_fp_diff(a, b, NULL, NULL, &err), 2);   /* a gate added reinterprets */
	CHECK_EQ_INT(cnt_fp_diff(b, c, NULL, NULL, &err), 2);   /* and so does a changed one */
	CHECK_EQ_INT(cnt_fp_diff(b, b, NULL, NULL, &err), 0);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	cnt_defs_free(plain);
	cnt_defs_free(gated);
	cnt_defs_free(other);
}

static cnt_ivt_event ev(const char *item, int64_t t, size_t n, const cnt_slice *k, const cnt_slice *v)
{
	cnt_ivt_event e = {{item, item ? strlen(item) : 0}, n, k, v, t};

	return e;
}

static void test_run(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_defs *d;
	cnt_ivt *v;
	const cnt_counter *c;
	cnt_slice k[2] = {{"user_agent", 10}, {"ip_prefix", 9}}, val[2];
	cnt_ivt_event e;
	char msg[320];
	/* a viewer's event times (s) and whether each passes: at most 2 per
	 * 10 s, each event against the last 2 let through (|t' - t| < 10 s):
	 * 10 is 10 s after 0, 11 after 1; the late 5 is far from 30 */
	static const int64_t ts[] = {0, 1, 2, 9, 10, 11, 12, 30, 31, 32, 5};
	static const int pass[] = {1, 1, 0, 0, 1, 1, 0, 1, 1, 0, 1};

	put("bots.txt", "Googlebot\n");
	put("ranges.txt", "203.0.113.0/24\n");
	d = defs_with(", \"filters\": [{\"rule\": \"user_agent\", \"list\": \"bots.txt\"},"
		      "{\"rule\": \"address\", \"list\": \"ranges.txt\"},"
		      "{\"rule\": \"rate\", \"max_events\": 2, \"span_s\": 10}]", "", &err);
	CHECK(d != NULL);
	if (d == NULL)
		return;
	c = cnt_defs_counter_at(d, 0);
	v = cnt_ivt_new(d, &err);
	CHECK(v != NULL);
	if (v == NULL) {
		fprintf(stderr, "%s\n", err.msg);
		cnt_defs_free(d);
		return;
	}
	CHECK(cnt_ivt_any(v, c));
	val[0] = (cnt_slice){"x googlebot", 11};
	val[1] = (cnt_slice){"203.0.113.5", 11};
	e = ev("u", 0, 2, k, val);
	CHECK_EQ_INT(cnt_ivt_lists(v, c, &e, msg, sizeof(msg)), 0); /* the first that matches */
	CHECK_EQ_STR(msg, "attrs 'user_agent' 'x googlebot' matches the user-agent list 'bots.txt'");
	val[0] = (cnt_slice){"Mozilla", 7};
	CHECK_EQ_INT(cnt_ivt_lists(v, c, &e, msg, sizeof(msg)), 1);
	CHECK_EQ_STR(msg, "attrs 'ip_prefix' '203.0.113.5' is in the address list 'ranges.txt'");
	val[1] = (cnt_slice){"garbage", 7};
	CHECK_EQ_INT(cnt_ivt_lists(v, c, &e, msg, sizeof(msg)), -1);
	e = ev("u", 0, 0, NULL, NULL);
	CHECK_EQ_INT(cnt_ivt_lists(v, c, &e, msg, sizeof(msg)), -1);  /* no attrs: no match */
	for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
		int r;

		e = ev("u", ts[i] * 1000, 0, NULL, NULL);
		r = cnt_ivt_rate(v, c, &e, msg, sizeof(msg));
		if ((r < 0) != pass[i])
			fprintf(stderr, "event %zu at %lld s\n", i, (long long)ts[i]);
		CHECK_EQ_INT(r < 0, pass[i]);
		if (r < 0)
			CHECK_EQ_INT(cnt_ivt_rate_commit(v, c, &e), 0);
		else
			CHECK_EQ_STR(msg, "item 'u' already has 2 events within 10 s of this one "
				     "(at most 2 per 10 s)");
	}
	e = ev("other", 0, 0, NULL, NULL);           /* another viewer has its own rate */
	CHECK_EQ_INT(cnt_ivt_rate(v, c, &e, msg, sizeof(msg)), -1);
	e = ev(NULL, 0, 0, NULL, NULL);              /* no viewer: never judged */
	CHECK_EQ_INT(cnt_ivt_rate_commit(v, c, &e), 0);
	CHECK_EQ_INT(cnt_ivt_rate(v, c, &e, msg, sizeof(msg)), -1);
	cnt_ivt_free(v);
	cnt_defs_free(d);
}

static void test_run_refused(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_defs *d = defs_with(", \"filters\": [{\"rule\": \"rate\", \"max_events\": 2, \"span_s\": 10},"
				"{\"rule\": \"address\", \"list\": \"missing.txt\"}]", "", &err);
	char want[512];

	CHECK(d != NULL);
	if (d == NULL)
		return;
	CHECK(cnt_ivt_new(d, &err) == NULL);
	snprintf(want, sizeof(want), "list '%s/missing.txt': No such file or directory "
		 "(filters[1] of counter 'tube/views')", dir);
	CHECK_EQ_STR(err.msg, want);
	put("missing.txt", "1.2.3.4\nfoo\n");
	CHECK(cnt_ivt_new(d, &err) == NULL);
	snprintf(want, sizeof(want), "list '%s/missing.txt': line 2: 'foo' is not an IPv4 or IPv6 "
		 "address or CIDR range (filters[1] of counter 'tube/views')", dir);
	CHECK_EQ_STR(err.msg, want);
	cnt_defs_free(d);
}

int main(void)
{
	char cmd[300];

	if (mkdtemp(dir) == NULL)
		return 2;
	RUN(test_ua_basic);
	RUN(test_ua_random);
	RUN(test_ua_refused);
	RUN(test_addr_basic);
	RUN(test_addr_random);
	RUN(test_addr_refused);
	RUN(test_defs_keys);
	RUN(test_fingerprint);
	RUN(test_run);
	RUN(test_run_refused);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 2;
	return unit_report("test_ivt");
}
