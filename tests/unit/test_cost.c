/*
 * test_cost.c - lib/count/cost.h: weights, prices, rows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "count/cost.h"
#include "unit.h"

static const char defs_text[] =
	"{\"format\":\"cnt-definitions/1\",\"unit_costs\":{\"exact\":4,\"unique\":10},"
	"\"tenants\":[{\"tenant_id\":\"a\",\"timezone\":\"UTC\"},{\"tenant_id\":\"b\",\"timezone\":\"UTC\"}],"
	"\"counters\":[{\"tenant_id\":\"b\",\"counter_id\":\"x\",\"versions\":[{\"version\":1,\"type\":\"exact\"}]},"
	"{\"tenant_id\":\"a\",\"counter_id\":\"y\",\"versions\":[{\"version\":1,\"type\":\"min\"},"
	"{\"version\":2,\"effective_from\":\"2026-01-01T00:00:00Z\",\"type\":\"exact\",\"unit_cost_per_m\":1}]}]}";

static cnt_event event(const char *t, const char *c, int v, const char *sample)
{
	static cnt_slice k[1], val[1];
	cnt_event e;

	memset(&e, 0, sizeof(e));
	e.tenant_id = (cnt_slice){t, strlen(t)};
	e.counter_id = (cnt_slice){c, strlen(c)};
	e.counter_version = v;
	if (sample != NULL) {
		k[0] = (cnt_slice){"cnt.sample", 10};
		val[0] = (cnt_slice){sample, strlen(sample)};
		e.nattrs = 1;
		e.attr_keys = k;
		e.attr_vals = val;
	}
	return e;
}

static void test_weight(void)
{
	static const char *const good[] = {"1", "2", "9", "10", "19", "20"};
	static const char *const bad[] = {"0", "21", "01", "-1", "+1", "", "1x", "100", " 1", "99"};
	char why[200];
	uint64_t w;
	cnt_event e;

	e = event("a", "y", 1, NULL);
	CHECK(cnt_cost_weight(&e, &w, why, sizeof(why)) == 1 && w == 1);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		e = event("a", "y", 1, good[i]);
		CHECK(cnt_cost_weight(&e, &w, why, sizeof(why)) == 1);
		CHECK(w == (uint64_t)1 << atoi(good[i]));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e = event("a", "y", 1, bad[i]);
		CHECK(cnt_cost_weight(&e, &w, why, sizeof(why)) == 0);
		CHECK(strstr(why, "is not a sampling level (1 to 20)") != NULL);
	}
}

static int nrows;
static cnt_cost_row rows[8];

static void collect(void *ctx, const cnt_cost_row *r)
{
	(void)ctx;
	if (nrows < 8)
		rows[nrows++] = *r;
}

static void test_rows(void)
{
	cnt_err err;
	cnt_defs *d = cnt_defs_parse(defs_text, strlen(defs_text), "t", &err);
	cnt_cost *c;
	cnt_cost_row sum;
	const char *reason;
	char why[200];
	cnt_event e;

	CHECK(d != NULL);
	if (d == NULL)
		return;
	c = cnt_cost_new(d, &err);
	e = event("b", "x", 1, "3");
	CHECK(cnt_cost_add(c, &e, &reason, why, sizeof(why)) == 0);
	e = event("a", "y", 2, NULL);
	CHECK(cnt_cost_add(c, &e, &reason, why, sizeof(why)) == 0);
	e = event("a", "y", 1, NULL);
	CHECK(cnt_cost_add(c, &e, &reason, why, sizeof(why)) == 0);
	e = event("a", "y", 3, NULL);
	CHECK(cnt_cost_add(c, &e, &reason, why, sizeof(why)) == 1);
	CHECK_EQ_STR(reason, "unknown_counter");
	e = event("a", "z", 1, NULL);
	CHECK(cnt_cost_add(c, &e, &reason, why, sizeof(why)) == 1);
	e = event("b", "x", 1, "0");
	CHECK(cnt_cost_add(c, &e, &reason, why, sizeof(why)) == 1);
	CHECK_EQ_STR(reason, "bad_sample");
	e = event("b", "x", 1, NULL);
	e.retracts = (cnt_slice){"abc", 3};
	CHECK(cnt_cost_add(c, &e, &reason, why, sizeof(why)) == 0);

	nrows = 0;
	CHECK_EQ_INT(cnt_cost_each(c, NULL, collect, NULL), 3);
	/* sorted: a/y v1, a/y v2, b/x v1 */
	CHECK_EQ_STR(rows[0].counter->counter_id, "y");
	CHECK_EQ_INT(rows[0].version->version, 1);
	CHECK(rows[0].version->unit_cost_per_m == 0);        /* min: no published price */
	CHECK_EQ_INT(rows[1].version->version, 2);
	CHECK(fabs(rows[1].cost - 1e-6) < 1e-15);            /* its own price 1 */
	CHECK(rows[1].priced[CNT_CTYPE_UNIQUE] && fabs(rows[1].at[CNT_CTYPE_UNIQUE] - 1e-5) < 1e-15);
	CHECK(!rows[1].priced[CNT_CTYPE_MAX]);
	CHECK_EQ_STR(rows[2].counter->tenant_id, "b");
	CHECK(rows[2].archived == 1 && rows[2].represented == 8 && rows[2].compensations == 1);
	CHECK(fabs(rows[2].cost - 8 * 4e-6) < 1e-15);       /* type's price 4 */
	nrows = 0;
	CHECK_EQ_INT(cnt_cost_each(c, "b", collect, NULL), 1);
	cnt_cost_total(c, NULL, &sum);
	CHECK(sum.archived == 3 && sum.represented == 10 && sum.compensations == 1);
	cnt_cost_free(c);
	cnt_defs_free(d);
}

int main(void)
{
	RUN(test_weight);
	RUN(test_rows);
	return unit_report("test_cost");
}
