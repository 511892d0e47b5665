/*
 * test_series.c - creator analytics (lib/view/series.h).
 *
 * - periods are the tenant's local days and hours: 23 hours on the
 *   spring-forward day, two 02:00 hours at the fall-back, labels with the
 *   offset;
 * - totals read the total records only, a breakdown the records of its
 *   dimension; unique viewers are the union of the sketches (a viewer of
 *   two videos is one); late columns count;
 * - member selection by list and by creator; the as-of; a range that
 *   cuts a period; refusals of a query that makes no sense.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "count/hll.h"
#include "model/bucket.h"
#include "view/series.h"
#include "unit.h"

static const char defs_json[] =
	"{\"format\": \"cnt-definitions/1\","
	" \"tenants\": [{\"tenant_id\": \"tube\", \"timezone\": \"Europe/Berlin\"}],"
	" \"counters\": [{\"tenant_id\": \"tube\", \"counter_id\": \"views\","
	"   \"versions\": [{\"version\": 1, \"type\": \"unique\", \"dimensions\": [\"country\", \"creator\"]}]},"
	"  {\"tenant_id\": \"tube\", \"counter_id\": \"plain\", \"versions\": [{\"version\": 1, \"type\": \"exact\"}]}]}";

#define H INT64_C(3600000)
/* 2026-03-29T00:00+01:00, the spring-forward day of Europe/Berlin */
#define D29 INT64_C(1774738800000)

static cnt_slice S(const char *s)
{
	cnt_slice x = {s, strlen(s)};

	return x;
}

static cnt_defs *defs(void)
{
	cnt_err err;
	cnt_defs *d = cnt_defs_parse(defs_json, strlen(defs_json), "t.json", &err);

	CHECK(d != NULL);
	return d;
}

/* Sketch bytes of items "u<lo>" .. "u<hi-1>", in bufs[k]. */
static cnt_buf bufs[16];

static cnt_slice sketch(int k, int lo, int hi)
{
	cnt_hll h;
	char item[16];
	cnt_slice s;

	cnt_hll_init(&h);
	for (int i = lo; i < hi; i++) {
		snprintf(item, sizeof(item), "u%d", i);
		CHECK_EQ_INT(cnt_hll_add(&h, item, strlen(item)), 0);
	}
	bufs[k].len = 0;
	CHECK_EQ_INT(cnt_hll_serialize(&h, &bufs[k]), 0);
	cnt_hll_release(&h);
	s.p = (const char *)bufs[k].p;
	s.n = bufs[k].len;
	return s;
}

static cnt_bucket rec(const char *member, const char *dim, const char *val, int64_t start, int64_t count)
{
	cnt_bucket b;

	memset(&b, 0, sizeof(b));
	b.tenant_id = S("tube");
	b.counter_id = S("views");
	b.counter_version = 1;
	b.member_ref = S(member);
	b.dim = S(dim);
	b.dim_value = S(val);
	b.bucket_start = start;
	b.bucket_end = start + H;
	b.count = count;
	b.max_ingest_time = start + H;
	return b;
}

/* A bucket file of v[0..n), sorted first; its descriptor. */
static int write_file(cnt_bucket *v, size_t n)
{
	FILE *f = tmpfile();
	cnt_err err;
	cnt_writer *w;

	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && cnt_bucket_key_cmp(&v[j - 1], &v[j]) > 0; j--) {
			cnt_bucket t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	CHECK(f != NULL);
	if (f == NULL)
		return -1;
	w = cnt_bucket_writer_new(dup(fileno(f)), "t", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	CHECK(w != NULL);
	for (size_t i = 0; w && i < n; i++) {
		CHECK_EQ_INT(cnt_bucket_encode(&v[i], cnt_writer_buf(w)), 0);
		CHECK_EQ_INT(cnt_writer_commit(w, &err), 0);
	}
	CHECK(w && cnt_writer_finish(w, &err) == 0);
	cnt_writer_free(w);
	{
		int fd = dup(fileno(f));

		fclose(f);
		lseek(fd, 0, SEEK_SET);
		return fd;
	}
}

static const cnt_series_result *run(cnt_series **sp, const cnt_series_query *q, int fd)
{
	cnt_err err;
	const cnt_series_result *r = NULL;
	const char *name = "t.avro";

	*sp = cnt_series_new(q, &err);
	CHECK(*sp != NULL);
	if (*sp == NULL) {
		fprintf(stderr, "%s\n", err.msg);
		return NULL;
	}
	lseek(fd, 0, SEEK_SET);
	if (cnt_series_run(*sp, &fd, &name, 1, &r, &err) != 0) {
		fprintf(stderr, "%s\n", err.msg);
		CHECK(0);
	}
	return r;
}

static void test_periods_dst(void)
{
	cnt_defs *d = defs();
	cnt_series_query q = {.defs = d, .tenant = "tube", .counter = "views",
		.from = "2026-03-28", .to = "2026-03-31", .day = 1};
	int fd = write_file(NULL, 0);
	cnt_series *s;
	const cnt_series_result *r = run(&s, &q, fd);
	char l[48];

	CHECK(r != NULL);
	if (r) {
		CHECK_EQ_INT((int)r->nrows, 3);
		CHECK(r->rows[1].start == D29);
		CHECK(r->rows[1].end - r->rows[1].start == 23 * H);
		CHECK(r->rows[0].end - r->rows[0].start == 24 * H);
		CHECK_EQ_INT(r->rows[0].has_uniques, 0);
		CHECK_EQ_INT(r->has_as_of, 0);
		cnt_series_label(s, r->rows[1].start, l, sizeof(l));
		CHECK_EQ_STR(l, "2026-03-29");
	}
	cnt_series_free(s);

	/* the fall-back night: 00, 01, 02 (+02), 02 (+01), 03 */
	q.from = "2026-10-25T00:00";
	q.to = "2026-10-25T04:00";
	q.day = 0;
	r = run(&s, &q, fd);
	if (r) {
		CHECK_EQ_INT((int)r->nrows, 5);
		cnt_series_label(s, r->rows[2].start, l, sizeof(l));
		CHECK_EQ_STR(l, "2026-10-25T02:00+02:00");
		cnt_series_label(s, r->rows[3].start, l, sizeof(l));
		CHECK_EQ_STR(l, "2026-10-25T02:00+01:00");
		for (size_t i = 0; i < r->nrows; i++)
			CHECK(r->rows[i].end - r->rows[i].start == H);
	}
	cnt_series_free(s);
	/* an instant that cuts an hour: the hour starting before it is out */
	q.from = "2026-10-24T22:30:00Z";
	q.to = "1792886400000";        /* 2026-10-25T00:00:00Z */
	r = run(&s, &q, fd);
	if (r)
		CHECK_EQ_INT((int)r->nrows, 1);
	cnt_series_free(s);
	close(fd);
	cnt_defs_free(d);
}

static void test_breakdown(void)
{
	cnt_defs *d = defs();
	cnt_bucket v[12];
	size_t n = 0;
	int fd;
	cnt_series *s;
	const cnt_series_result *r;
	cnt_series_query q = {.defs = d, .tenant = "tube", .counter = "views",
		.from = "2026-03-29", .to = "2026-03-30", .day = 1};
	const char *only_v2[] = {"v2"};

	/* v1 at 10:00: 3 events, viewers u0..u2 (DE: u0, u1; FR: u2); late:
	 * 1 more, viewer u9, FR */
	v[n] = rec("v1", "", "", D29 + 9 * H, 3);
	v[n].sketch = sketch(0, 0, 3);
	v[n].late_count = 1;
	v[n++].late_sketch = sketch(1, 9, 10);
	v[n] = rec("v1", "country", "DE", D29 + 9 * H, 2);
	v[n++].sketch = sketch(2, 0, 2);
	v[n] = rec("v1", "country", "FR", D29 + 9 * H, 1);
	v[n].sketch = sketch(3, 2, 3);
	v[n].late_count = 1;
	v[n++].late_sketch = sketch(4, 9, 10);
	v[n] = rec("v1", "creator", "ana", D29 + 9 * H, 3);
	v[n++].late_count = 1;
	/* v2 at 20:00: 2 events, viewers u1, u5, DE; later ingested */
	v[n] = rec("v2", "", "", D29 + 19 * H, 2);
	v[n].sketch = sketch(5, 1, 2);
	v[n].max_ingest_time = D29 + 40 * H;
	v[n++].sketch = sketch(6, 1, 6);
	bufs[6].len = 0;
	v[n - 1].sketch = sketch(6, 4, 6);   /* u4, u5 */
	v[n] = rec("v2", "country", "DE", D29 + 19 * H, 2);
	v[n++].sketch = sketch(7, 4, 6);
	v[n++] = rec("v2", "creator", "ben", D29 + 19 * H, 2);
	/* v3 of ana, outside the range */
	v[n++] = rec("v3", "", "", D29 + 30 * H, 7);
	v[n++] = rec("v3", "creator", "ana", D29 + 30 * H, 7);
	/* another counter's record: not read */
	v[n] = rec("v1", "", "", D29 + 9 * H, 100);
	v[n++].counter_id = S("plain");
	fd = write_file(v, n);

	r = run(&s, &q, fd);
	if (r) {
		CHECK_EQ_INT((int)r->nrows, 1);
		CHECK(r->rows[0].views == 3 + 1 + 2);
		CHECK_EQ_INT(r->rows[0].has_uniques, 1);
		CHECK(r->rows[0].uniques == 6);  /* u0 u1 u2 u9 u4 u5 */
		CHECK(r->has_as_of && r->as_of == D29 + 40 * H);
		CHECK(r->rows[0].value == NULL);
		CHECK(r->records_used == 2);
	}
	cnt_series_free(s);

	q.by = "country";
	r = run(&s, &q, fd);
	if (r) {
		CHECK_EQ_INT((int)r->nrows, 2);
		CHECK(r->rows[0].value_n == 2 && memcmp(r->rows[0].value, "DE", 2) == 0);
		CHECK(r->rows[0].views == 4);
		CHECK(r->rows[0].uniques == 4);  /* u0 u1 u4 u5 */
		CHECK(r->rows[1].value_n == 2 && memcmp(r->rows[1].value, "FR", 2) == 0);
		CHECK(r->rows[1].views == 2);
		CHECK(r->rows[1].uniques == 2);
	}
	cnt_series_free(s);

	q.members = only_v2;
	q.nmembers = 1;
	r = run(&s, &q, fd);
	if (r) {
		CHECK_EQ_INT((int)r->nrows, 1);
		CHECK(r->rows[0].views == 2);
	}
	cnt_series_free(s);

	q.members = NULL;
	q.nmembers = 0;
	q.by = NULL;
	q.creator = "ana";
	q.day = 0;
	r = run(&s, &q, fd);
	if (r) {
		CHECK_EQ_INT((int)r->nrows, 23);
		CHECK_EQ_INT((int)r->creator_members, 2);
		CHECK(r->rows[9].start == D29 + 9 * H);   /* 10:00+02:00: 02:00 never was */
		CHECK(r->rows[9].views == 4);
		for (size_t i = 0; i < r->nrows; i++)
			if (i != 9)
				CHECK(r->rows[i].views == 0);
	}
	cnt_series_free(s);
	close(fd);
	cnt_defs_free(d);
}

static void test_refusals(void)
{
	cnt_defs *d = defs();
	cnt_err err;
	cnt_series_query q = {.defs = d, .tenant = "tube", .counter = "views",
		.from = "2026-03-29", .to = "2026-03-30", .day = 1};
	cnt_series *s;

	q.by = "device";
	CHECK((s = cnt_series_new(&q, &err)) == NULL);
	CHECK(strstr(err.msg, "'device' is not a dimension") != NULL);
	q.by = NULL;
	q.counter = "plain";
	q.creator = "ana";
	CHECK((s = cnt_series_new(&q, &err)) == NULL);
	CHECK(strstr(err.msg, "no \"creator\" dimension") != NULL);
	q.counter = "nope";
	CHECK((s = cnt_series_new(&q, &err)) == NULL);
	CHECK(strstr(err.msg, "no counter 'nope'") != NULL);
	q.counter = "views";
	q.creator = NULL;
	q.from = "2026-03-30";
	CHECK((s = cnt_series_new(&q, &err)) == NULL);
	CHECK(strstr(err.msg, "is not before") != NULL);
	q.from = "1900-01-01";
	q.to = "2100-01-01";
	q.day = 0;
	CHECK((s = cnt_series_new(&q, &err)) == NULL);
	CHECK(strstr(err.msg, "more than 1000000 hours") != NULL);
	q.from = "soon";
	CHECK((s = cnt_series_new(&q, &err)) == NULL);
	CHECK(strstr(err.msg, "--from: 'soon' is not a time") != NULL);
	cnt_defs_free(d);
}

int main(void)
{
	RUN(test_periods_dst);
	RUN(test_breakdown);
	RUN(test_refusals);
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		cnt_buf_release(&bufs[i]);
	return unit_report("test_series");
}
