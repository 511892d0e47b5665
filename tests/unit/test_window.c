/*
 * test_window.c - the window stage (lib/count/window.h) and what it shares
 * with cnt-dedup (lib/count/stage.h).
 *
 * Attribution at the edges of buckets, where an off-by-one would move an
 * event to the neighbouring hour: x:59:59.999 and x+1:00:00.000 in UTC, in
 * a half-hour zone (Asia/Kolkata) and across Lord Howe's 30-minute
 * fall-back, worked out by hand from the rule in time/tz.h.  Lateness
 * exactly at the horizon, one millisecond past it, and with times at the
 * ends of the 64-bit range (no overflow).  Shards: 0 with one shard, the
 * documented hash otherwise, every shard used.  Rejects: reason, field
 * and message.  And the whole stage into a real writer: what it writes
 * reads back, the per-counter counts (lag, clock ahead) and the balance.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xxhash.h>

#include "avro/records.h"
#include "count/window.h"
#include "unit.h"

static const char defs_json[] =
	"{\"format\": \"cnt-definitions/1\","
	" \"tenants\": [{\"tenant_id\": \"utc\", \"timezone\": \"UTC\"},"
	"              {\"tenant_id\": \"kol\", \"timezone\": \"Asia/Kolkata\"},"
	"              {\"tenant_id\": \"lhi\", \"timezone\": \"Australia/Lord_Howe\"}],"
	" \"counters\": ["
	"  {\"tenant_id\": \"utc\", \"counter_id\": \"dist\", \"versions\": [{\"version\": 1, \"type\": \"exact\", \"lateness_horizon_s\": 600}]},"
	"  {\"tenant_id\": \"kol\", \"counter_id\": \"dist\", \"versions\": [{\"version\": 1, \"type\": \"exact\"}]},"
	"  {\"tenant_id\": \"lhi\", \"counter_id\": \"dist\", \"versions\": [{\"version\": 1, \"type\": \"exact\", \"lateness_horizon_s\": 0}]}]}";

/* 2026-03-01T10:00:00Z */
#define T0 INT64_C(1772359200000)
#define H INT64_C(3600000)
#define M INT64_C(60000)

static cnt_defs *defs(void)
{
	cnt_err err;
	cnt_defs *d = cnt_defs_parse(defs_json, strlen(defs_json), "defs.json", &err);

	if (d == NULL) {
		fprintf(stderr, "defs: %s\n", err.msg);
		exit(1);
	}
	return d;
}

static cnt_slice sl(const char *s)
{
	cnt_slice x = {s, s ? strlen(s) : 0};

	return x;
}

static cnt_event event(const char *tenant, const char *id, int64_t event_time, int64_t ingest_time)
{
	cnt_event e;

	memset(&e, 0, sizeof(e));
	e.event_id = sl(id);
	e.idempotency_key = sl(id);
	e.tenant_id = sl(tenant);
	e.counter_id = sl("dist");
	e.counter_version = 1;
	e.member_ref = sl("m1");
	e.delta = 1;
	e.event_time = event_time;
	e.ingest_time = ingest_time;
	return e;
}

/* The bucket of an event of tenant at t, attributed by a fresh stage. */
static void bucket_of(cnt_window *w, const char *tenant, int64_t t, int64_t *start, int64_t *end)
{
	cnt_event e = event(tenant, "x", t, t);
	cnt_windowed wv;
	cnt_count_reject rej;
	cnt_err err;

	*start = *end = -1;
	CHECK_EQ_INT(cnt_window_attribute(w, &e, &wv, &rej, &err), 0);
	*start = wv.bucket_start;
	*end = wv.bucket_end;
}

static void test_bucket_edges(void)
{
	cnt_defs *d = defs();
	cnt_err err;
	cnt_window *w = cnt_window_new(d, "defs.json", 1, NULL, &err);
	int64_t s, e;
	/* 2026-04-04T15:00Z: Lord Howe falls back from +11 to +10:30. */
	int64_t fb = INT64_C(1775314800000);

	/* UTC: the last millisecond of 10:00 and the first of 11:00. */
	bucket_of(w, "utc", T0 + H - 1, &s, &e);
	CHECK_EQ_INT(s, T0);
	CHECK_EQ_INT(e, T0 + H);
	bucket_of(w, "utc", T0 + H, &s, &e);
	CHECK_EQ_INT(s, T0 + H);
	CHECK_EQ_INT(e, T0 + 2 * H);
	/* Kolkata (+05:30): 10:29:59.999Z is local 15:59:59.999, in 09:30Z-10:30Z;
	 * 10:30Z is local 16:00. */
	bucket_of(w, "kol", T0 + 30 * M - 1, &s, &e);
	CHECK_EQ_INT(s, T0 - 30 * M);
	CHECK_EQ_INT(e, T0 + 30 * M);
	bucket_of(w, "kol", T0 + 30 * M, &s, &e);
	CHECK_EQ_INT(s, T0 + 30 * M);
	CHECK_EQ_INT(e, T0 + 90 * M);
	/* Going back in time on the same cursor still finds the right bucket. */
	bucket_of(w, "utc", T0 - 1, &s, &e);
	CHECK_EQ_INT(s, T0 - H);
	/* Lord Howe: 14:59:59.999Z is in 14:00Z-15:00Z (local 01:00-02:00
	 * +11); from 15:00Z the local hour 01:00-02:00 +10:30 is cut at the
	 * change, a bucket of 30 minutes. */
	bucket_of(w, "lhi", fb - 1, &s, &e);
	CHECK_EQ_INT(s, fb - H);
	CHECK_EQ_INT(e, fb);
	bucket_of(w, "lhi", fb, &s, &e);
	CHECK_EQ_INT(s, fb);
	CHECK_EQ_INT(e, fb + 30 * M);
	bucket_of(w, "lhi", fb + 30 * M, &s, &e);
	CHECK_EQ_INT(s, fb + 30 * M);
	CHECK_EQ_INT(e, fb + 90 * M);
	/* The ends of time: clamped, no overflow (UBSan would say). */
	bucket_of(w, "kol", INT64_MIN, &s, &e);
	CHECK(s <= e);
	bucket_of(w, "kol", INT64_MAX, &s, &e);
	CHECK(s <= e);
	cnt_window_free(w);
	cnt_defs_free(d);
}

static void test_lateness_at_the_horizon(void)
{
	cnt_defs *d = defs();
	cnt_err err;
	cnt_window *w = cnt_window_new(d, "defs.json", 1, NULL, &err);
	cnt_count_reject rej;
	cnt_windowed wv;
	cnt_event e;

	/* The rule itself. */
	CHECK_EQ_INT(cnt_window_is_late(T0 + H + 600000, T0 + H, 600), 0);
	CHECK_EQ_INT(cnt_window_is_late(T0 + H + 600001, T0 + H, 600), 1);
	CHECK_EQ_INT(cnt_window_is_late(T0 + H, T0 + H, 0), 0);
	CHECK_EQ_INT(cnt_window_is_late(T0 + H + 1, T0 + H, 0), 1);
	/* No overflow: a closing time past the range is never reached, one
	 * before it always passed. */
	CHECK_EQ_INT(cnt_window_is_late(INT64_MAX, INT64_MAX, 1), 0);
	CHECK_EQ_INT(cnt_window_is_late(INT64_MAX, INT64_MAX - 1000, INT64_MAX), 0);
	CHECK_EQ_INT(cnt_window_is_late(INT64_MIN, INT64_MIN, -1), 1);
	CHECK_EQ_INT(cnt_window_is_late(INT64_MIN, INT64_MIN + 5, INT64_MIN), 1);
	CHECK_EQ_INT(cnt_window_is_late(0, 0, INT64_MAX / 1000 + 1), 0);

	/* Through the stage, with each counter's horizon: utc/dist 600 s. */
	e = event("utc", "a", T0, T0 + H + 600000);
	CHECK_EQ_INT(cnt_window_attribute(w, &e, &wv, &rej, &err), 0);
	CHECK_EQ_INT(wv.late, 0);
	e.ingest_time++;
	CHECK_EQ_INT(cnt_window_attribute(w, &e, &wv, &rej, &err), 0);
	CHECK_EQ_INT(wv.late, 1);
	/* kol/dist: the default 3600 s, from the bucket's end at 10:30Z. */
	e = event("kol", "b", T0, T0 + 30 * M + H);
	CHECK_EQ_INT(cnt_window_attribute(w, &e, &wv, &rej, &err), 0);
	CHECK_EQ_INT(wv.late, 0);
	e.ingest_time++;
	CHECK_EQ_INT(cnt_window_attribute(w, &e, &wv, &rej, &err), 0);
	CHECK_EQ_INT(wv.late, 1);
	/* A client clock ahead (event after ingest) is never late. */
	e = event("lhi", "c", T0 + 5 * H, T0);
	CHECK_EQ_INT(cnt_window_attribute(w, &e, &wv, &rej, &err), 0);
	CHECK_EQ_INT(wv.late, 0);
	/* Times at the ends of the range. */
	e = event("utc", "d", INT64_MIN, INT64_MAX);
	CHECK_EQ_INT(cnt_window_attribute(w, &e, &wv, &rej, &err), 0);
	CHECK_EQ_INT(wv.late, 1);
	e = event("utc", "e", INT64_MAX, INT64_MIN);
	CHECK_EQ_INT(cnt_window_attribute(w, &e, &wv, &rej, &err), 0);
	CHECK_EQ_INT(wv.late, 0);
	cnt_window_free(w);
	cnt_defs_free(d);
}

static void test_shards(void)
{
	cnt_defs *d = defs();
	cnt_err err;
	cnt_window *w1 = cnt_window_new(d, "defs.json", 1, NULL, &err);
	cnt_window *w4 = cnt_window_new(d, "defs.json", 4, NULL, &err);
	int used[4] = {0};

	CHECK(cnt_window_new(d, "defs.json", 0, NULL, &err) == NULL);
	CHECK(cnt_window_new(d, "defs.json", CNT_WINDOW_MAX_SHARDS + 1, NULL, &err) == NULL);
	for (int i = 0; i < 200; i++) {
		char id[40];
		cnt_event e;
		cnt_windowed a, b, c;
		cnt_count_reject rej;

		snprintf(id, sizeof(id), "%032x", i * 2654435761u);
		e = event("utc", id, T0, T0);
		CHECK_EQ_INT(cnt_window_attribute(w1, &e, &a, &rej, &err), 0);
		CHECK_EQ_INT(a.shard, 0);
		CHECK_EQ_INT(cnt_window_attribute(w4, &e, &b, &rej, &err), 0);
		CHECK(b.shard >= 0 && b.shard < 4);
		/* cnt-window(1): XXH3-64 of the event_id modulo n */
		CHECK_EQ_INT(b.shard, (int)(XXH3_64bits(id, strlen(id)) % 4));
		/* the event alone decides: another event's time or tenant does not */
		e.event_time += 7 * H;
		e.tenant_id = sl("kol");
		CHECK_EQ_INT(cnt_window_attribute(w4, &e, &c, &rej, &err), 0);
		CHECK_EQ_INT(c.shard, b.shard);
		used[b.shard]++;
	}
	for (int i = 0; i < 4; i++)
		CHECK(used[i] > 20);
	CHECK_EQ_INT(cnt_window_shard("", 0, 1), 0);
	CHECK_EQ_INT(cnt_window_shard("x", 1, CNT_WINDOW_MAX_SHARDS) < CNT_WINDOW_MAX_SHARDS, 1);
	cnt_window_free(w1);
	cnt_window_free(w4);
	cnt_defs_free(d);
}

static int same_windowed(const cnt_windowed *a, const cnt_windowed *b)
{
	if (a->bucket_start != b->bucket_start || a->bucket_end != b->bucket_end || a->late != b->late ||
	    a->shard != b->shard || a->exact != b->exact || a->sample != b->sample ||
	    a->hll_precision != b->hll_precision || a->ndims != b->ndims)
		return 0;
	for (size_t i = 0; i < a->ndims; i++)
		if (a->dims[i].n != b->dims[i].n || memcmp(a->dims[i].p, b->dims[i].p, a->dims[i].n) != 0 ||
		    a->dim_vals[i].p != b->dim_vals[i].p || a->dim_vals[i].n != b->dim_vals[i].n)
			return 0;
	return a->ev.event_id.p == b->ev.event_id.p && a->ev.tenant_id.p == b->ev.tenant_id.p &&
		a->ev.event_time == b->ev.event_time && a->ev.ingest_time == b->ev.ingest_time;
}

/* cnt_window_attribute_as, given what cnt_count_lookup found (as
 * cnt-count's reader gives it what admission found), attributes as
 * cnt_window_attribute does: every tenant's zone, on time and late, four
 * shards; into another windowed event and in place (e is &out->ev). */
static void test_attribute_as(void)
{
	static const char *const tenants[3] = {"utc", "kol", "lhi"};
	cnt_defs *d = defs();
	cnt_err err;
	cnt_window *w = cnt_window_new(d, "defs.json", 4, NULL, &err);
	int n = 0;

	for (int i = 0; i < 300; i++) {
		char id[40];
		int64_t t = T0 + (int64_t)i * 37 * M + i % 2;
		cnt_event e;
		cnt_windowed a, b, c;
		cnt_count_target tg;
		cnt_count_reject rej;

		snprintf(id, sizeof(id), "e%d", i);
		e = event(tenants[i % 3], id, t, t + (i % 4) * 20 * M);
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		memset(&c, 0, sizeof(c));
		CHECK_EQ_INT(cnt_window_attribute(w, &e, &a, &rej, &err), 0);
		CHECK_EQ_INT(cnt_count_lookup(d, "defs.json", &e, &tg, &rej), 0);
		CHECK_EQ_INT(cnt_window_attribute_as(w, &e, &tg, &b, &err), 0);
		c.ev = e;
		CHECK_EQ_INT(cnt_window_attribute_as(w, &c.ev, &tg, &c, &err), 0);
		CHECK(same_windowed(&a, &b));
		CHECK(same_windowed(&a, &c));
		n += a.late;
	}
	CHECK(n > 0 && n < 300);
	cnt_window_free(w);
	cnt_defs_free(d);
}

static void test_rejects(void)
{
	cnt_defs *d = defs();
	cnt_err err;
	cnt_window *w = cnt_window_new(d, "defs.json", 1, NULL, &err);
	cnt_count_reject rej;
	cnt_windowed wv;
	cnt_event e = event("ghost", "a", T0, T0);
	char longid[300];

	CHECK_EQ_INT(cnt_window_attribute(w, &e, &wv, &rej, &err), 1);
	CHECK_EQ_STR(rej.reason, "unknown_tenant");
	CHECK_EQ_STR(rej.field, "tenant_id");
	CHECK_EQ_STR(rej.msg, "tenant 'ghost' is not declared in 'defs.json'");
	e = event("utc", "a", T0, T0);
	e.counter_id = sl("gone");
	CHECK_EQ_INT(cnt_window_attribute(w, &e, &wv, &rej, &err), 1);
	CHECK_EQ_STR(rej.reason, "unknown_counter");
	CHECK_EQ_STR(rej.field, "counter_version");
	CHECK_EQ_STR(rej.msg, "counter 'utc/gone' version 1 is not declared in 'defs.json'");
	e.counter_id = sl("dist");
	e.counter_version = 2;
	CHECK_EQ_INT(cnt_window_attribute(w, &e, &wv, &rej, &err), 1);
	CHECK_EQ_STR(rej.msg, "counter 'utc/dist' version 2 is not declared in 'defs.json'");
	/* ids from a file are cut in messages, and may hold any byte */
	memset(longid, 'x', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = 0;
	e = event(longid, "a", T0, T0);
	CHECK_EQ_INT(cnt_window_attribute(w, &e, &wv, &rej, &err), 1);
	CHECK(strlen(rej.msg) < 200);
	e.tenant_id.p = NULL;
	e.tenant_id.n = 0;
	CHECK_EQ_INT(cnt_window_attribute(w, &e, &wv, &rej, &err), 1);
	CHECK_EQ_STR(rej.msg, "tenant '' is not declared in 'defs.json'");
	cnt_window_free(w);
	cnt_defs_free(d);
}

/* The stage into a real writer: the output reads back as the events, with
 * their buckets; counts per counter; in = out + rejected. */
static void test_stage_writes_and_counts(void)
{
	cnt_defs *d = defs();
	cnt_err err;
	int fd = memfd_create("windowed", MFD_CLOEXEC);
	char *schema = cnt_windowed_schema_json(&err);
	cnt_writer *wr = cnt_writer_new(fd, "windowed", schema, CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, 0, &err);
	cnt_window *w = cnt_window_new(d, "defs.json", 2, wr, &err);
	cnt_count_reject rej;
	cnt_event ev[4];
	const cnt_window_totals *t;
	const cnt_window_counter *c;
	cnt_records *rin;
	cnt_windowed_in *in;
	cnt_windowed back;
	int n = 0, rc;

	ev[0] = event("utc", "a", T0, T0 + 30 * 1000);             /* lag 30 s */
	ev[1] = event("utc", "b", T0 + 45 * 1000, T0);             /* clock 45 s ahead */
	ev[2] = event("utc", "c", T0, T0 + H + 600001);            /* late */
	ev[3] = event("nobody", "d", T0, T0);                      /* rejected */
	for (int i = 0; i < 4; i++)
		CHECK_EQ_INT(cnt_window_event(w, &ev[i], NULL, 0, &rej, &err), i == 3 ? 1 : 0);
	CHECK_EQ_INT(cnt_window_finish(w, &err), 0);
	t = cnt_window_get_totals(w);
	CHECK_EQ_INT(t->in, 4);
	CHECK_EQ_INT(t->out, 3);
	CHECK_EQ_INT(t->late, 1);
	CHECK_EQ_INT(t->rejected, 1);
	CHECK_EQ_INT(t->unknown_tenant, 1);
	CHECK_EQ_INT(t->unknown_counter, 0);
	c = cnt_window_get_counter(w, 0);
	CHECK_EQ_INT(c->in, 3);
	CHECK_EQ_INT(c->late, 1);
	CHECK_EQ_INT(c->max_lag_ms, H + 600001);
	CHECK_EQ_INT(c->clock_ahead, 1);
	CHECK_EQ_INT(c->max_clock_ahead_ms, 45000);
	CHECK_EQ_INT(cnt_window_get_counter(w, 1)->in, 0);

	lseek(fd, 0, SEEK_SET);
	rin = cnt_records_open(fd, "windowed", NULL, NULL, &err);
	in = rin ? cnt_windowed_in_adopt(rin, NULL, &err) : NULL;
	CHECK(in != NULL);
	while (in && (rc = cnt_windowed_in_next(in, &back, &err)) > 0) {
		CHECK(back.ev.idempotency_key.n == 1 && back.ev.idempotency_key.p[0] == "abc"[n]);
		CHECK_EQ_INT(back.bucket_start, T0);
		CHECK_EQ_INT(back.bucket_end, T0 + H);
		CHECK_EQ_INT(back.late, n == 2);
		CHECK_EQ_INT(back.shard, cnt_window_shard("abc" + n, 1, 2));
		CHECK_EQ_INT(back.ev.ingest_time, ev[n].ingest_time);
		n++;
	}
	CHECK_EQ_INT(n, 3);
	cnt_windowed_in_free(in);
	cnt_window_free(w);
	cnt_writer_free(wr);
	free(schema);
	close(fd);
	cnt_defs_free(d);
}

static void restore_tzdir(const char *v)
{
	if (v)
		setenv("TZDIR", v, 1);
	else
		unsetenv("TZDIR");
}

/* Two siblings that split the events between them, their counts
 * absorbed, count what one window counts: sums and maxima (lags, a
 * clock ahead), whatever the split; each attributes as the one does,
 * the zones taken from the parent's checks. */
static void test_siblings_absorb(void)
{
	cnt_defs *d = defs();
	cnt_err err;
	cnt_window *one = cnt_window_new(d, "defs.json", 2, NULL, &err);
	cnt_window *parent = cnt_window_new(d, "defs.json", 2, NULL, &err);
	cnt_window *sib[2];
	char *tzdir = getenv("TZDIR") ? strdup(getenv("TZDIR")) : NULL;
	static const char *const tenants[] = {"utc", "kol", "lhi"};
	static const char *const ids[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
	/* ingest - event: on time, late, a clock ahead, very late */
	static const int64_t lag[] = {5 * M, 3 * H, -7 * M, 30 * H, -2 * M, 2 * H, 1, 9 * H, 0};

	CHECK(one != NULL && parent != NULL);
	/* a sibling of a parent that checked nothing loads its zones itself:
	 * without any to load, it fails */
	{
		cnt_window *lone = cnt_window_sibling(parent, &err);
		cnt_event e = event("kol", "x", T0, T0);
		cnt_count_target t;
		cnt_count_reject rej;
		cnt_windowed b;

		CHECK(lone != NULL);
		CHECK_EQ_INT(cnt_count_lookup(d, "defs.json", &e, &t, &rej), 0);
		setenv("TZDIR", "/nonexistent-zoneinfo", 1);
		CHECK_EQ_INT(cnt_window_attribute_as(lone, &e, &t, &b, &err), -1);
		restore_tzdir(tzdir);
		cnt_window_free(lone);
	}
	sib[0] = cnt_window_sibling(parent, &err);
	sib[1] = cnt_window_sibling(parent, &err);
	CHECK(sib[0] != NULL && sib[1] != NULL);
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		cnt_event e = event(tenants[i % 3], ids[i], T0 + (int64_t)i * 17 * M, T0 + (int64_t)i * 17 * M + lag[i]);
		cnt_count_target t;
		cnt_count_reject rej;
		cnt_windowed a, b;
		cnt_window *s = sib[(i * 7 / 3) % 2];   /* an uneven split */

		CHECK_EQ_INT(cnt_count_lookup(d, "defs.json", &e, &t, &rej), 0);
		CHECK_EQ_INT(cnt_window_attribute_as(one, &e, &t, &a, &err), 0);
		cnt_window_take(one, &e, &a, t.counter_index);
		CHECK_EQ_INT(cnt_window_check(parent, &e, &t, 0, &err), 0);
		/* no zone can be loaded now: the sibling's come from the parent */
		setenv("TZDIR", "/nonexistent-zoneinfo", 1);
		CHECK_EQ_INT(cnt_window_attribute_as(s, &e, &t, &b, &err), 0);
		restore_tzdir(tzdir);
		cnt_window_take(s, &e, &b, t.counter_index);
		CHECK_EQ_INT(b.bucket_start, a.bucket_start);
		CHECK_EQ_INT(b.bucket_end, a.bucket_end);
		CHECK_EQ_INT(b.late, a.late);
		CHECK_EQ_INT(b.shard, a.shard);
	}
	cnt_window_absorb(parent, sib[0]);
	cnt_window_absorb(parent, sib[1]);
	CHECK(memcmp(cnt_window_get_totals(parent), cnt_window_get_totals(one), sizeof(cnt_window_totals)) == 0);
	CHECK(cnt_window_get_totals(one)->late > 0);
	for (size_t k = 0; k < 3; k++) {
		const cnt_window_counter *x = cnt_window_get_counter(one, k), *y = cnt_window_get_counter(parent, k);

		CHECK_EQ_INT(y->in, x->in);
		CHECK_EQ_INT(y->late, x->late);
		CHECK_EQ_INT(y->clock_ahead, x->clock_ahead);
		CHECK_EQ_INT(y->max_lag_ms, x->max_lag_ms);
		CHECK_EQ_INT(y->max_clock_ahead_ms, x->max_clock_ahead_ms);
		CHECK(x->in == 3 && x->max_lag_ms > 0);
	}
	CHECK(cnt_window_get_counter(one, 0)->clock_ahead + cnt_window_get_counter(one, 1)->clock_ahead > 0);
	CHECK_EQ_INT(cnt_window_finish(parent, &err), 0);
	cnt_window_free(sib[0]);
	cnt_window_free(sib[1]);
	cnt_window_free(parent);
	cnt_window_free(one);
	cnt_defs_free(d);
	free(tzdir);
}

static void test_ratio(void)
{
	CHECK(cnt_count_ratio(0, 0) == 0.0);
	CHECK(cnt_count_ratio(1, 3) == 0.333333);
	CHECK(cnt_count_ratio(2, 3) == 0.666667);
	CHECK(cnt_count_ratio(3, 3) == 1.0);
	CHECK(cnt_count_ratio(2, 7) == 0.285714);
}

int main(void)
{
	RUN(test_bucket_edges);
	RUN(test_lateness_at_the_horizon);
	RUN(test_shards);
	RUN(test_attribute_as);
	RUN(test_siblings_absorb);
	RUN(test_rejects);
	RUN(test_stage_writes_and_counts);
	RUN(test_ratio);
	return unit_report("test_window");
}
