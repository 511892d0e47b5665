/*
 * test_audit.c - the batch audit heuristics (lib/correct/audit.h): each
 * heuristic at and around its bounds, deduplication before judging, the
 * same findings whatever the order events come in, the inflation ratio,
 * the retraction id, the report, and the "audit" array of the definitions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "avro/json.h"
#include "correct/audit.h"
#include "unit.h"

#define T0 INT64_C(1780876800000) /* 2026-06-08T00:00:00Z */
#define S INT64_C(1000)

static const char defs_text[] =
	"{\"format\":\"cnt-definitions/1\",\"tenants\":[{\"tenant_id\":\"t\",\"timezone\":\"UTC\"}],"
	"\"counters\":[{\"tenant_id\":\"t\",\"counter_id\":\"views\","
	"\"versions\":[{\"version\":1,\"type\":\"unique\",\"dedup_key\":\"item_member\",\"dedup_horizon_s\":3600}],"
	"\"audit\":[{\"heuristic\":\"lockstep\",\"span_s\":60,\"videos\":3},"
	"{\"heuristic\":\"burst\",\"attr\":\"ip\",\"span_s\":10,\"max_events\":3},"
	"{\"heuristic\":\"watch_time\",\"views\":3,\"share\":0.75},"
	"{\"heuristic\":\"inflation\",\"baseline\":1.5}]},"
	"{\"tenant_id\":\"t\",\"counter_id\":\"other\",\"versions\":[{\"version\":1,\"type\":\"exact\"}]}]}";

typedef struct spec {
	const char *id, *member, *item;
	int64_t t, ingest;
	const char *ms, *ip;
} spec;

static cnt_defs *defs(void)
{
	cnt_err err;
	cnt_defs *d = cnt_defs_parse(defs_text, strlen(defs_text), "test", &err);

	if (d == NULL)
		fprintf(stderr, "%s\n", err.msg);
	return d;
}

static void add(cnt_audit *a, const spec *s, const char *counter)
{
	cnt_event e;
	cnt_slice k[2], v[2];
	size_t n = 0;
	cnt_err err;

	memset(&e, 0, sizeof(e));
	e.event_id.p = s->id, e.event_id.n = strlen(s->id);
	e.idempotency_key = e.event_id;
	e.tenant_id.p = "t", e.tenant_id.n = 1;
	e.counter_id.p = counter, e.counter_id.n = strlen(counter);
	e.counter_version = 1;
	e.member_ref.p = s->member, e.member_ref.n = strlen(s->member);
	if (s->item)
		e.item.p = s->item, e.item.n = strlen(s->item);
	e.delta = 1;
	e.event_time = s->t;
	e.ingest_time = s->ingest ? s->ingest : s->t;
	if (s->ms) {
		k[n].p = "ms_watched", k[n].n = 10;
		v[n].p = s->ms, v[n++].n = strlen(s->ms);
	}
	if (s->ip) {
		k[n].p = "ip", k[n].n = 2;
		v[n].p = s->ip, v[n++].n = strlen(s->ip);
	}
	e.nattrs = n;
	e.attr_keys = k;
	e.attr_vals = v;
	CHECK(cnt_audit_add(a, &e, &err) == 0);
}

/* The audit of specs[0..n) in the order given by perm (NULL: as listed). */
static cnt_audit *audit(const cnt_defs *d, const spec *specs, size_t n, const size_t *perm)
{
	const cnt_counter *k = cnt_defs_counter(d, "t", 1, "views", 5);
	cnt_err err;
	cnt_audit *a = cnt_audit_new(k, T0 + 86400 * S, -1, &err);

	for (size_t i = 0; i < n; i++)
		add(a, &specs[perm ? perm[i] : i], "views");
	CHECK(cnt_audit_run(a, &err) == 0);
	return a;
}

/* "kind:key:views" of every finding, space-separated, into out. */
static const char *findings(const cnt_audit *a, char *out, size_t cap)
{
	size_t o = 0;

	out[0] = 0;
	for (size_t i = 0; i < cnt_audit_nfindings(a); i++) {
		const cnt_audit_finding *f = cnt_audit_finding_at(a, i);

		o += (size_t)snprintf(out + o, cap - o, "%s%s:%s:%llu", i ? " " : "", cnt_defs_audit_name(f->kind), f->key,
			(unsigned long long)f->views);
	}
	return out;
}

static void test_lockstep_bounds(void)
{
	cnt_defs *d = defs();
	/* L: 3 videos within exactly 60 s (ends included): flagged, all 3.
	 * M: 3 videos over 61 s: not.  N: 2 videos many times: not. */
	spec s[] = {
		{"l1", "a", "L", T0, 0, "1", NULL}, {"l2", "b", "L", T0 + 30 * S, 0, "2", NULL},
		{"l3", "c", "L", T0 + 60 * S, 0, "3", NULL},
		{"m1", "a", "M", T0, 0, "1", NULL}, {"m2", "b", "M", T0 + 30 * S, 0, "2", NULL},
		{"m3", "c", "M", T0 + 61 * S, 0, "3", NULL},
		{"n1", "a", "N", T0, 0, "1", NULL}, {"n2", "b", "N", T0 + 1 * S, 0, "2", NULL},
		{"n3", "a", "N", T0 + 7200 * S, 0, "3", NULL},
	};
	cnt_audit *a = audit(d, s, sizeof(s) / sizeof(s[0]), NULL);
	char buf[512];

	CHECK_EQ_STR(findings(a, buf, sizeof(buf)), "lockstep:L:3");
	CHECK_EQ_INT(cnt_audit_nflagged(a), 3);
	CHECK_EQ_STR(cnt_audit_flagged(a)[0], "l1");
	CHECK_EQ_STR(cnt_audit_flagged(a)[2], "l3");
	CHECK_EQ_INT(cnt_audit_finding_at(a, 0)->measure, 3);
	CHECK_EQ_INT(cnt_audit_finding_at(a, 0)->from_ms, T0);
	CHECK_EQ_INT(cnt_audit_totals_of(a)->examined, 9);
	cnt_audit_free(a);
	cnt_defs_free(d);
}

static void test_burst_bounds(void)
{
	cnt_defs *d = defs();
	/* net1: 4 views within 10 s (more than 3): flagged; net2: 3: not;
	 * net3: 4 views over 11 s: not. */
	spec s[] = {
		{"a1", "v", "u1", T0, 0, "1", "net1"}, {"a2", "v", "u2", T0 + 3 * S, 0, "2", "net1"},
		{"a3", "v", "u3", T0 + 6 * S, 0, "3", "net1"}, {"a4", "v", "u4", T0 + 10 * S, 0, "4", "net1"},
		{"b1", "v", "w1", T0, 0, "1", "net2"}, {"b2", "v", "w2", T0 + 1 * S, 0, "2", "net2"},
		{"b3", "v", "w3", T0 + 2 * S, 0, "3", "net2"},
		{"c1", "v", "x1", T0, 0, "1", "net3"}, {"c2", "v", "x2", T0 + 1 * S, 0, "2", "net3"},
		{"c3", "v", "x3", T0 + 2 * S, 0, "3", "net3"}, {"c4", "v", "x4", T0 + 11 * S, 0, "4", "net3"},
	};
	cnt_audit *a = audit(d, s, sizeof(s) / sizeof(s[0]), NULL);
	char buf[512];

	CHECK_EQ_STR(findings(a, buf, sizeof(buf)), "burst:net1:4");
	CHECK_EQ_INT(cnt_audit_finding_at(a, 0)->measure, 4);
	cnt_audit_free(a);
	cnt_defs_free(d);
}

static void test_watch_time_share(void)
{
	cnt_defs *d = defs();
	/* W: 3 of 4 views at 30000 (share 0.75 reached): the 3 flagged;
	 * X: 3 of 5 (0.6): not; Y: 2 of 2: not (views 3). */
	spec s[] = {
		{"w1", "a", "W", T0, 0, "30000", NULL}, {"w2", "b", "W", T0 + 7200 * S, 0, "30000", NULL},
		{"w3", "c", "W", T0 + 14400 * S, 0, "30000", NULL}, {"w4", "d", "W", T0 + 21600 * S, 0, "999", NULL},
		{"x1", "a", "X", T0, 0, "5", NULL}, {"x2", "b", "X", T0 + 7200 * S, 0, "5", NULL},
		{"x3", "c", "X", T0 + 14400 * S, 0, "5", NULL}, {"x4", "d", "X", T0 + 21600 * S, 0, "6", NULL},
		{"x5", "e", "X", T0 + 28800 * S, 0, "7", NULL},
		{"y1", "a", "Y", T0, 0, "8", NULL}, {"y2", "b", "Y", T0 + 7200 * S, 0, "8", NULL},
	};
	cnt_audit *a = audit(d, s, sizeof(s) / sizeof(s[0]), NULL);
	char buf[512];
	const cnt_audit_finding *f;

	CHECK_EQ_STR(findings(a, buf, sizeof(buf)), "watch_time:W:3");
	f = cnt_audit_finding_at(a, 0);
	CHECK(f != NULL && f->value && strcmp(f->value, "30000") == 0 && f->measure == 3 && f->total == 4);
	cnt_audit_free(a);
	cnt_defs_free(d);
}

static void test_dedup_before_judging(void)
{
	cnt_defs *d = defs();
	/* L sends each of 3 videos twice within the horizon: 3 views, 6
	 * beacons; flagged once each.  A resend after the horizon (1 h) is a
	 * view again.  Other counters and events at the watermark are skipped. */
	spec s[] = {
		{"l1", "a", "L", T0, 0, "1", NULL}, {"l1b", "a", "L", T0 + 1 * S, 0, "1", NULL},
		{"l2", "b", "L", T0 + 2 * S, 0, "2", NULL}, {"l2b", "b", "L", T0 + 3 * S, 0, "2", NULL},
		{"l3", "c", "L", T0 + 4 * S, 0, "3", NULL}, {"l3b", "c", "L", T0 + 5 * S, 0, "3", NULL},
		{"l1c", "a", "L", T0 + 3600 * S, 0, "9", NULL},
		{"late", "a", "Z", T0 + 86400 * S, 0, "1", NULL},
	};
	cnt_audit *a = audit(d, s, sizeof(s) / sizeof(s[0]), NULL);
	const cnt_counter *k = cnt_defs_counter(d, "t", 1, "views", 5);
	const cnt_audit_totals *t = cnt_audit_totals_of(a);
	char buf[512];

	(void)k;
	CHECK_EQ_STR(findings(a, buf, sizeof(buf)), "lockstep:L:3");
	CHECK_EQ_INT(t->examined, 4);
	CHECK_EQ_INT(t->duplicates, 3);
	CHECK_EQ_INT(t->skipped, 1);
	CHECK_EQ_INT(t->flagged, 3);
	CHECK_EQ_STR(cnt_audit_flagged(a)[0], "l1");
	CHECK_EQ_STR(cnt_audit_flagged(a)[1], "l2");
	CHECK_EQ_STR(cnt_audit_flagged(a)[2], "l3");
	/* video a: 3 beacons (l1, l1b, l1c) of one viewer: ratio 3 > 1.5 */
	CHECK_EQ_STR(cnt_audit_video_at(a, 0)->member, "a");
	CHECK_EQ_INT(cnt_audit_video_at(a, 0)->beacons, 3);
	CHECK_EQ_INT(cnt_audit_video_at(a, 0)->views, 2);
	CHECK_EQ_INT(cnt_audit_video_at(a, 0)->viewers, 1);
	CHECK(cnt_audit_video_at(a, 0)->inflated);
	CHECK(!cnt_audit_video_at(a, 1)->inflated || cnt_audit_video_at(a, 1)->ratio > 1.5);
	CHECK_EQ_INT(cnt_audit_totals_of(a)->inflated, 3);
	cnt_audit_free(a);
	cnt_defs_free(d);
}

static void test_order_independent(void)
{
	cnt_defs *d = defs();
	spec s[] = {
		{"e1", "a", "L", T0, 0, "30000", "n"}, {"e2", "b", "L", T0 + 2 * S, 0, "30000", "n"},
		{"e3", "c", "L", T0 + 4 * S, 0, "30000", "n"}, {"e4", "a", "L", T0 + 4 * S, 0, "30000", "n"},
		{"e5", "d", "h", T0 + 4 * S, 0, "1", "n"}, {"e6", "a", "h", T0 + 9000 * S, 0, "2", "m"},
	};
	size_t fwd[] = {0, 1, 2, 3, 4, 5}, rev[] = {5, 4, 3, 2, 1, 0}, mix[] = {3, 0, 5, 1, 4, 2};
	const size_t *perms[] = {fwd, rev, mix};
	char first[512] = "", buf[512], rid0[40] = "", rid[40];
	cnt_buf r0 = CNT_BUF_INIT;

	for (int p = 0; p < 3; p++) {
		cnt_audit *a = audit(d, s, 6, perms[p]);
		cnt_audit_summary sum = {0};
		cnt_buf r = CNT_BUF_INIT;

		findings(a, buf, sizeof(buf));
		CHECK(cnt_audit_retraction_id(a, "req", "auth", rid) == 0);
		CHECK(cnt_audit_report(a, &sum, 1, &r) == 0);
		if (p == 0) {
			strcpy(first, buf);
			strcpy(rid0, rid);
			r0 = r;
		} else {
			CHECK_EQ_STR(buf, first);
			CHECK_EQ_STR(rid, rid0);
			CHECK(r.len == r0.len && memcmp(r.p, r0.p, r.len) == 0);
			cnt_buf_release(&r);
		}
		cnt_audit_free(a);
	}
	/* e4 repeats (L, a) within the horizon: a duplicate, never flagged */
	CHECK_EQ_STR(first, "lockstep:L:3 burst:n:4 watch_time:L:3");
	CHECK(strncmp(rid0, "r-", 2) == 0 && strlen(rid0) == 34);
	cnt_buf_release(&r0);
	cnt_defs_free(d);
}

static void test_report(void)
{
	cnt_defs *d = defs();
	spec s[] = {
		{"q1", "v\"1", "b\\\x01", T0, 0, "7", NULL}, {"q2", "v2", "b\\\x01", T0 + 1 * S, 0, "7", NULL},
		{"q3", "v3", "b\\\x01", T0 + 2 * S, 0, "7", NULL},
	};
	cnt_audit *a = audit(d, s, 3, NULL);
	cnt_audit_summary sum = {.dry_run = 1};
	cnt_buf j = CNT_BUF_INIT, t = CNT_BUF_INIT;

	CHECK(cnt_audit_report(a, &sum, 1, &j) == 0 && cnt_buf_putc(&j, 0) == 0);
	CHECK(strstr((char *)j.p, "\"item\":\"b\\\\\\u0001\"") != NULL);
	CHECK(strstr((char *)j.p, "\"member_ref\":\"v\\\"1\"") != NULL);
	CHECK(strstr((char *)j.p, "{\"kind\":\"audit\",\"tenant_id\":\"t\",\"counter_id\":\"views\"") != NULL);
	CHECK(strstr((char *)j.p, "\"retraction_id\":null,\"audit_id\":null}\n") != NULL);
	CHECK(cnt_audit_report(a, &sum, 0, &t) == 0 && cnt_buf_putc(&t, 0) == 0);
	CHECK(strstr((char *)t.p, "lockstep    b\\x5c\\x01") != NULL);
	CHECK(strstr((char *)t.p, "3 of 3 views with ms_watched=7\n") != NULL);
	CHECK(strstr((char *)t.p, ", dry run\n") != NULL);
	cnt_buf_release(&j);
	cnt_buf_release(&t);
	cnt_audit_free(a);
	cnt_defs_free(d);
}

static void test_baseline_and_utf8(void)
{
	cnt_defs *d = defs();
	const cnt_counter *k = cnt_defs_counter(d, "t", 1, "views", 5);
	const cnt_counter *o = cnt_defs_counter(d, "t", 1, "other", 5);
	cnt_err err;
	cnt_audit *a = cnt_audit_new(k, T0, -1, &err), *b = cnt_audit_new(k, T0, 4, &err),
		  *c = cnt_audit_new(o, T0, -1, &err);

	CHECK(cnt_audit_baseline(a) == 1.5 && cnt_audit_baseline(b) == 4 && cnt_audit_baseline(c) == CNT_AUDIT_BASELINE);
	CHECK_EQ_INT(k->naudit, 4);
	CHECK_EQ_INT(o->naudit, 0);
	CHECK_EQ_STR(k->audit[2].attr, "ms_watched");
	CHECK(k->audit[2].share == 0.75);
	cnt_audit_free(a);
	cnt_audit_free(b);
	cnt_audit_free(c);
	CHECK(cnt_audit_utf8_ok("ivt-audit v1 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
	CHECK(!cnt_audit_utf8_ok("bad\xff"));
	CHECK(!cnt_audit_utf8_ok("\xc0\xaf"));         /* overlong */
	CHECK(!cnt_audit_utf8_ok("\xed\xa0\x80"));     /* a surrogate */
	CHECK(!cnt_audit_utf8_ok("\xe2\x82"));         /* truncated */
	cnt_defs_free(d);
}

static void test_defs_refusals(void)
{
	static const struct {
		const char *audit, *msg;
	} bad[] = {
		{"[{\"heuristic\":\"lockstep\",\"span_s\":1}]", "$.counters[0].audit[0].videos: required key is missing"},
		{"[{\"heuristic\":\"nope\"}]", "unknown value 'nope'"},
		{"[{\"heuristic\":\"burst\",\"attr\":\"\",\"span_s\":1,\"max_events\":1}]", "attr: must be 1 to 64 bytes"},
		{"[{\"heuristic\":\"watch_time\",\"views\":2,\"span_s\":1}]", "audit[0].span_s: unknown key"},
		{"[{\"heuristic\":\"watch_time\",\"views\":2,\"share\":\"x\"}]", "share: expected a number, got string"},
		{"[{\"heuristic\":\"inflation\",\"baseline\":0.5}]", "baseline: 0.5 is out of range [1, 1e+09]"},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[1024];
		cnt_err err;
		cnt_defs *d;

		snprintf(text, sizeof(text),
			"{\"format\":\"cnt-definitions/1\",\"tenants\":[{\"tenant_id\":\"t\",\"timezone\":\"UTC\"}],"
			"\"counters\":[{\"tenant_id\":\"t\",\"counter_id\":\"c\",\"versions\":[{\"version\":1,\"type\":\"exact\"}],"
			"\"audit\":%s}]}", bad[i].audit);
		d = cnt_defs_parse(text, strlen(text), "x", &err);
		CHECK(d == NULL);
		if (d == NULL && strstr(err.msg, bad[i].msg) == NULL) {
			fprintf(stderr, "got: %s\nwant: %s\n", err.msg, bad[i].msg);
			CHECK(0);
		}
		cnt_defs_free(d);
	}
}

/* cnt_json_text_ok, which the ledgers' writers ask before naming a string
 * (the audit, retraction, erasure and decision ledgers, the sealed
 * standings and corrections), against jansson's own check: 200,000
 * strings of the bytes that matter (ASCII, NUL, continuation bytes, every
 * lead byte class and its edges). */
static void test_json_text_oracle(void)
{
	static const unsigned char alpha[] = {
		'a', 0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf,
		0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff,
	};
	unsigned long long x = 88172645463325252ull;
	unsigned ok = 0;

	for (int t = 0; t < 200000; t++) {
		unsigned char b[8];
		size_t n;
		json_t *j;
		int want;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		n = (size_t)(x % 9);
		for (size_t i = 0; i < n; i++)
			b[i] = alpha[(x >> (8 + 5 * i)) % sizeof(alpha)];
		j = json_stringn((const char *)b, n);
		want = j != NULL && memchr(b, 0, n) == NULL;
		json_decref(j);
		CHECK_EQ_INT(cnt_json_text_ok(b, n), want);
		ok += (unsigned)want;
	}
	CHECK(ok > 1000 && ok < 199000);   /* both answers were asked */
	CHECK(cnt_json_text_ok("", 0));
	CHECK(!cnt_json_text_ok("a\0b", 3));
}

int main(void)
{
	RUN(test_lockstep_bounds);
	RUN(test_burst_bounds);
	RUN(test_watch_time_share);
	RUN(test_dedup_before_judging);
	RUN(test_order_independent);
	RUN(test_report);
	RUN(test_baseline_and_utf8);
	RUN(test_defs_refusals);
	RUN(test_json_text_oracle);
	return unit_report("test_audit");
}
