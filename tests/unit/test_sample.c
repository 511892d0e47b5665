/*
 * test_sample.c - lib/ingest/sample.c: K from the tolerated error, the
 * level schedule, the keep hash, cnt.sample parsing, and a sampler's
 * decisions (the first K kept whole, the rest at 2^-L with the level
 * attribute, per member and per hour, nothing for other types), plus the
 * error of the schedule checked numerically against its derivation.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/sample.h"
#include "model/defs.h"
#include "unit.h"

static void test_k(void)
{
	CHECK_EQ_INT(cnt_sample_k(0.05), 577);
	CHECK_EQ_INT(cnt_sample_k(0.1), 145);
	CHECK_EQ_INT(cnt_sample_k(0.2), 37);
	CHECK_EQ_INT(cnt_sample_k(0.01), 14406);
	CHECK_EQ_INT(cnt_sample_k(0.5), 6);
}

static void test_levels(void)
{
	/* K at level 0, 2K at 1, 4K at 2, ... capped at 20 */
	CHECK_EQ_INT(cnt_sample_level(0, 10), 0);
	CHECK_EQ_INT(cnt_sample_level(9, 10), 0);
	CHECK_EQ_INT(cnt_sample_level(10, 10), 1);
	CHECK_EQ_INT(cnt_sample_level(29, 10), 1);
	CHECK_EQ_INT(cnt_sample_level(30, 10), 2);
	CHECK_EQ_INT(cnt_sample_level(69, 10), 2);
	CHECK_EQ_INT(cnt_sample_level(70, 10), 3);
	CHECK_EQ_INT(cnt_sample_level(UINT64_MAX, 1), 20);
	CHECK_EQ_INT(cnt_sample_level(((uint64_t)1 << 21) - 2, 1), 20);
	CHECK_EQ_INT(cnt_sample_level(((uint64_t)1 << 20) - 2, 1), 19);
}

static void test_parse(void)
{
	int l = -5;
	cnt_slice k[2] = {{"a", 1}, {"cnt.sample", 10}}, v[2] = {{"x", 1}, {"12", 2}};
	cnt_event e;

	CHECK(cnt_event_sample_parse("1", 1, &l) == 0 && l == 1);
	CHECK(cnt_event_sample_parse("20", 2, &l) == 0 && l == 20);
	CHECK(cnt_event_sample_parse("21", 2, &l) != 0);
	CHECK(cnt_event_sample_parse("0", 1, &l) != 0);
	CHECK(cnt_event_sample_parse("05", 2, &l) != 0);
	CHECK(cnt_event_sample_parse("+1", 2, &l) != 0);
	CHECK(cnt_event_sample_parse("", 0, &l) != 0);
	CHECK(cnt_event_sample_parse("100", 3, &l) != 0);
	memset(&e, 0, sizeof(e));
	CHECK_EQ_INT(cnt_event_sample_level(&e), 0);
	e.nattrs = 2;
	e.attr_keys = k;
	e.attr_vals = v;
	CHECK_EQ_INT(cnt_event_sample_level(&e), 12);
	v[1].p = "x";
	v[1].n = 1;
	CHECK_EQ_INT(cnt_event_sample_level(&e), -1);
}

static void test_hash(void)
{
	cnt_event a, b;

	memset(&a, 0, sizeof(a));
	a.idempotency_key = (cnt_slice){"key-1", 5};
	a.member_ref = (cnt_slice){"m", 1};
	a.item = (cnt_slice){"v", 1};
	b = a;
	b.idempotency_key = (cnt_slice){"key-2", 5};
	CHECK(cnt_sample_hash(&a, CNT_DEDUP_IDEMPOTENCY_KEY) != cnt_sample_hash(&b, CNT_DEDUP_IDEMPOTENCY_KEY));
	/* item_member: the key does not matter, (item, member) does */
	CHECK(cnt_sample_hash(&a, CNT_DEDUP_ITEM_MEMBER) == cnt_sample_hash(&b, CNT_DEDUP_ITEM_MEMBER));
	b.item = (cnt_slice){"vm", 2};
	b.member_ref = (cnt_slice){"", 0};
	CHECK(cnt_sample_hash(&a, CNT_DEDUP_ITEM_MEMBER) != cnt_sample_hash(&b, CNT_DEDUP_ITEM_MEMBER));
}

static const char defs_text[] =
	"{\"format\": \"cnt-definitions/1\", \"tenants\": [{\"tenant_id\": \"t\", \"timezone\": \"UTC\"}],"
	" \"counters\": [{\"tenant_id\": \"t\", \"counter_id\": \"a\", \"versions\": [{\"version\": 1,"
	" \"type\": \"approx\", \"tolerated_error\": 0.2, \"bounds_lo\": 0, \"bounds_hi\": 10}]},"
	" {\"tenant_id\": \"t\", \"counter_id\": \"e\", \"versions\": [{\"version\": 1, \"type\": \"exact\"}]}]}";

static void test_sampler(void)
{
	cnt_err err;
	cnt_defs *d = cnt_defs_parse(defs_text, strlen(defs_text), "t", &err);
	const cnt_counter *ca, *ce;
	cnt_sampler *s;
	cnt_slice k[1] = {{"x", 1}}, v[1] = {{"y", 1}};
	char key[32];
	uint64_t kept[4] = {0}, out = 0;
	int64_t est = 0;

	CHECK(d != NULL);
	if (d == NULL)
		return;
	ca = cnt_defs_counter(d, "t", 1, "a", 1);
	ce = cnt_defs_counter(d, "t", 1, "e", 1);
	s = cnt_sampler_new(d, &err);
	CHECK(s != NULL);
	for (int i = 0; s && i < 2000; i++) {
		cnt_event e;
		int r, l;

		memset(&e, 0, sizeof(e));
		snprintf(key, sizeof(key), "k%d", i);
		e.idempotency_key = (cnt_slice){key, strlen(key)};
		e.member_ref = (cnt_slice){"m", 1};
		e.delta = 1;
		e.event_time = 1772362800000 + i;     /* one hour */
		e.nattrs = 1;
		e.attr_keys = k;
		e.attr_vals = v;
		r = cnt_sampler_decide(s, ca, &ca->versions[0], &e, &err);
		CHECK(r == 0 || r == 1);
		l = cnt_sample_level((uint64_t)i, 37);
		if (r == 0) {
			out++;
			CHECK(l > 0);
			CHECK(e.nattrs == 1);
			continue;
		}
		CHECK_EQ_INT(cnt_event_sample_level(&e), l);
		CHECK_EQ_INT(e.nattrs, l > 0 ? 2 : 1);
		CHECK(e.attr_keys[0].p == k[0].p);
		if (l < 4)
			kept[l]++;
		est += (int64_t)1 << l;
		/* the same event in another hour starts afresh: level 0 */
	}
	CHECK_EQ_INT(kept[0], 37);
	CHECK(kept[1] > 20 && kept[1] < 60);
	CHECK_EQ_INT(out, cnt_sampler_out(s));
	CHECK_EQ_INT(out, cnt_sampler_counter_out(s, ca));
	CHECK_EQ_INT(cnt_sampler_counter_out(s, ce), 0);
	CHECK(llabs(est - 2000) < 2000 * 0.2);
	if (s) {
		cnt_event e;

		/* another member, the next hour, an exact counter: untouched */
		memset(&e, 0, sizeof(e));
		e.idempotency_key = (cnt_slice){"z", 1};
		e.member_ref = (cnt_slice){"m", 1};
		e.event_time = 1772362800000 + 3600000;
		CHECK_EQ_INT(cnt_sampler_decide(s, ca, &ca->versions[0], &e, &err), 1);
		CHECK_EQ_INT(e.nattrs, 0);
		e.event_time = 1772362800000;
		e.member_ref = (cnt_slice){"m2", 2};
		CHECK_EQ_INT(cnt_sampler_decide(s, ca, &ca->versions[0], &e, &err), 1);
		CHECK_EQ_INT(e.nattrs, 0);
		e.member_ref = (cnt_slice){"m", 1};
		CHECK_EQ_INT(cnt_sampler_decide(s, ce, &ce->versions[0], &e, &err), 1);
		CHECK_EQ_INT(e.nattrs, 0);
	}
	cnt_sampler_free(s);
	cnt_defs_free(d);
}

/* The derivation in sample.h: for unit deltas the relative standard error
 * sqrt(sum n_L (2^L - 1)) / n is at most sqrt(3/8 / K) for every n, and
 * reaches about that; computed exactly from the schedule. */
static void test_error_bound(void)
{
	const int64_t k = 577;
	double worst = 0;

	for (uint64_t n = 1; n < 400000; n += 1 + n / 512) {
		double var = 0;

		for (int l = 0; l <= 20; l++) {
			uint64_t lo = (((uint64_t)1 << l) - 1) * (uint64_t)k, hi = (((uint64_t)2 << l) - 1) * (uint64_t)k;
			uint64_t in = n > hi ? hi - lo : n > lo ? n - lo : 0;

			var += (double)in * (double)((1 << l) - 1);
		}
		if (sqrt(var) / (double)n > worst)
			worst = sqrt(var) / (double)n;
	}
	CHECK(worst <= sqrt(0.375 / k) + 1e-9);
	CHECK(worst >= 0.98 * sqrt(0.375 / k));
	CHECK(1.96 * worst <= 0.05);
}

int main(void)
{
	RUN(test_k);
	RUN(test_levels);
	RUN(test_parse);
	RUN(test_hash);
	RUN(test_sampler);
	RUN(test_error_bound);
	return unit_report("test_sample");
}
