/*
 * test_dedup_filter.c - the dedup key rule and the dedup stage
 * (lib/count/dedup_filter.h).
 *
 * The key rule: an idempotency-key counter keys on (tenant, counter,
 * idempotency_key), not on the version, member or item; an item_member
 * counter on (tenant, counter, member_ref, item), not on the idempotency
 * key, and on the idempotency key when the event has no item; parts
 * never run together.  The stage: events judged in log order across batch
 * boundaries, each counter version's horizon, rejects, the two writers
 * receiving exactly the kept and the dropped events, the counts and the
 * balance.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "count/dedup_filter.h"
#include "unit.h"

static const char defs_json[] =
	"{\"format\": \"cnt-definitions/1\","
	" \"tenants\": [{\"tenant_id\": \"t\", \"timezone\": \"UTC\"}, {\"tenant_id\": \"u\", \"timezone\": \"UTC\"}],"
	" \"counters\": ["
	"  {\"tenant_id\": \"t\", \"counter_id\": \"dist\", \"versions\": ["
	"     {\"version\": 1, \"type\": \"exact\", \"dedup_horizon_s\": 3600},"
	"     {\"version\": 2, \"effective_from\": \"2026-01-01T00:00:00Z\", \"type\": \"exact\", \"dedup_horizon_s\": 60}]},"
	"  {\"tenant_id\": \"t\", \"counter_id\": \"views\", \"versions\": ["
	"     {\"version\": 1, \"type\": \"unique\", \"dedup_key\": \"item_member\", \"dedup_horizon_s\": 3600}]},"
	"  {\"tenant_id\": \"u\", \"counter_id\": \"dist\", \"versions\": [{\"version\": 1, \"type\": \"exact\"}]}]}";

#define T0 INT64_C(1772359200000)   /* 2026-03-01T10:00:00Z */

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

static cnt_event event(const char *counter, const char *key, const char *member, const char *item, int64_t ingest)
{
	cnt_event e;

	memset(&e, 0, sizeof(e));
	e.event_id = sl(key);
	e.idempotency_key = sl(key);
	e.tenant_id = sl("t");
	e.counter_id = sl(counter);
	e.counter_version = 1;
	e.member_ref = sl(member);
	e.item = sl(item);
	e.delta = 1;
	e.event_time = ingest;
	e.ingest_time = ingest;
	return e;
}

static int same(cnt_dkey a, cnt_dkey b)
{
	return a.lo == b.lo && a.hi == b.hi;
}

static const cnt_counter_version *version(const cnt_defs *d, const char *counter, int v)
{
	return cnt_counter_version_get(cnt_defs_counter(d, "t", 1, counter, strlen(counter)), v);
}

static void test_key_rule(void)
{
	cnt_defs *d = defs();
	const cnt_counter_version *dist = version(d, "dist", 1), *dist2 = version(d, "dist", 2);
	const cnt_counter_version *views = version(d, "views", 1);
	cnt_event a = event("dist", "k1", "m1", NULL, T0), b;
	cnt_dkey ka = cnt_dedup_event_key(dist, &a);

	/* idempotency key: member, item, delta, times and version do not count */
	b = event("dist", "k1", "m2", "i9", T0 + 5000);
	b.delta = 7;
	b.counter_version = 2;
	CHECK(same(cnt_dedup_event_key(dist, &b), ka));
	CHECK(same(cnt_dedup_event_key(dist2, &b), ka));
	b = event("dist", "k2", "m1", NULL, T0);
	CHECK(!same(cnt_dedup_event_key(dist, &b), ka));
	/* the tenant and the counter do */
	b = a;
	b.tenant_id = sl("u");
	CHECK(!same(cnt_dedup_event_key(dist, &b), ka));
	b = a;
	b.counter_id = sl("clicks");
	CHECK(!same(cnt_dedup_event_key(dist, &b), ka));
	/* parts never run together: ("t", "dist", "k1") is not ("t", "dis", "tk1") */
	b = a;
	b.counter_id = sl("dis");
	b.idempotency_key = sl("tk1");
	CHECK(!same(cnt_dedup_event_key(dist, &b), ka));

	/* item_member: (member, item), whatever the idempotency key */
	a = event("views", "k1", "vid1", "u1", T0);
	ka = cnt_dedup_event_key(views, &a);
	b = event("views", "k2", "vid1", "u1", T0 + 1000);
	CHECK(same(cnt_dedup_event_key(views, &b), ka));
	b = event("views", "k1", "vid1", "u2", T0);
	CHECK(!same(cnt_dedup_event_key(views, &b), ka));
	b = event("views", "k1", "vid2", "u1", T0);
	CHECK(!same(cnt_dedup_event_key(views, &b), ka));
	/* (member "vid1", item "u1") is not (member "vid", item "1u1") */
	b = event("views", "k1", "vid", "1u1", T0);
	CHECK(!same(cnt_dedup_event_key(views, &b), ka));
	/* no item: the idempotency key, as for any counter ... */
	a = event("views", "k1", "vid1", NULL, T0);
	b = event("views", "k1", "vid9", NULL, T0);
	CHECK(same(cnt_dedup_event_key(views, &a), cnt_dedup_event_key(views, &b)));
	CHECK(same(cnt_dedup_event_key(views, &a), cnt_dedup_event_key(dist, &a)));
	/* ... and an empty item is an item */
	b = event("views", "k1", "vid1", "", T0);
	CHECK(!same(cnt_dedup_event_key(views, &b), cnt_dedup_event_key(views, &a)));
	/* a view key never equals the idempotency key of the same strings */
	a = event("views", "k", "m", "i", T0);
	CHECK(!same(cnt_dedup_event_key(views, &a), cnt_dedup_event_key(dist, &a)));
	cnt_defs_free(d);
}

static void test_ingest_second(void)
{
	cnt_event e = event("dist", "k", "m", NULL, 1999);

	CHECK_EQ_INT(cnt_dedup_event_second(&e), 1);
	e.ingest_time = 2000;
	CHECK_EQ_INT(cnt_dedup_event_second(&e), 2);
	e.ingest_time = -1;
	CHECK_EQ_INT(cnt_dedup_event_second(&e), 0);
	e.ingest_time = INT64_MIN;
	CHECK_EQ_INT(cnt_dedup_event_second(&e), 0);
}

/* The idempotency keys of the events of an events file, comma-separated. */
static void keys_of(int fd, char *out, size_t n)
{
	cnt_err err;
	cnt_event_in *in;
	cnt_event e;
	size_t len = 0;

	out[0] = 0;
	lseek(fd, 0, SEEK_SET);
	in = cnt_event_in_open(fd, "out", NULL, &err);
	CHECK(in != NULL);
	while (in && cnt_event_in_next(in, &e, &err) > 0)
		len += (size_t)snprintf(out + len, n - len, "%s%.*s", len ? "," : "", (int)e.idempotency_key.n,
			e.idempotency_key.p);
	cnt_event_in_free(in);
}

static void test_stage(void)
{
	cnt_defs *d = defs();
	cnt_err err;
	int ofd = memfd_create("out", MFD_CLOEXEC), dfd = memfd_create("dups", MFD_CLOEXEC);
	cnt_writer *ow = cnt_event_writer_new(ofd, "out", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	cnt_writer *dw = cnt_event_writer_new(dfd, "dups", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	cnt_dedup table;
	cnt_dedup_filter *f;
	cnt_count_reject rej;
	const cnt_dedup_totals *t;
	char want[4096], got[4096];
	size_t wl = 0;
	cnt_event e;

	CHECK_EQ_INT(cnt_dedup_init(&table, 0), 0);
	f = cnt_dedup_filter_new(d, "defs.json", &table, ow, dw, &err);
	CHECK(f != NULL);
	/* 40 distinct keys, then the same 40 again: more than two batches,
	 * the second half all duplicates, in log order. */
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < 40; i++) {
			char k[16];

			snprintf(k, sizeof(k), "k%d", i);
			e = event("dist", k, "m", NULL, T0 + r * 1000);
			CHECK_EQ_INT(cnt_dedup_filter_event(f, &e, NULL, 0, &rej, &err), 0);
			if (r == 0)
				wl += (size_t)snprintf(want + wl, sizeof(want) - wl, "%s%s", wl ? "," : "", k);
		}
	/* each occurrence is remembered for its own version's horizon: h
	 * (version 2, 60 s) is new again after 61 s, g (version 1, 1 h) not */
	e = event("dist", "h", "m", NULL, T0);
	e.counter_version = 2;
	CHECK_EQ_INT(cnt_dedup_filter_event(f, &e, NULL, 0, &rej, &err), 0);
	e.ingest_time += 61000;
	CHECK_EQ_INT(cnt_dedup_filter_event(f, &e, NULL, 0, &rej, &err), 0);
	e = event("dist", "g", "m", NULL, T0);
	CHECK_EQ_INT(cnt_dedup_filter_event(f, &e, NULL, 0, &rej, &err), 0);
	e.ingest_time += 61000;
	CHECK_EQ_INT(cnt_dedup_filter_event(f, &e, NULL, 0, &rej, &err), 0);
	/* an undeclared version is rejected, not judged */
	e.counter_version = 3;
	CHECK_EQ_INT(cnt_dedup_filter_event(f, &e, NULL, 0, &rej, &err), 1);
	CHECK_EQ_STR(rej.reason, "unknown_counter");
	e.tenant_id = sl("nobody");
	CHECK_EQ_INT(cnt_dedup_filter_event(f, &e, NULL, 0, &rej, &err), 1);
	CHECK_EQ_STR(rej.reason, "unknown_tenant");
	/* views: one per (video, viewer) */
	e = event("views", "v1", "vid1", "u1", T0);
	CHECK_EQ_INT(cnt_dedup_filter_event(f, &e, NULL, 0, &rej, &err), 0);
	e = event("views", "v2", "vid1", "u1", T0);
	CHECK_EQ_INT(cnt_dedup_filter_event(f, &e, NULL, 0, &rej, &err), 0);
	CHECK_EQ_INT(cnt_dedup_filter_finish(f, &err), 0);

	t = cnt_dedup_filter_totals(f);
	CHECK_EQ_INT(t->in, 88);
	CHECK_EQ_INT(t->out, 44);
	CHECK_EQ_INT(t->duplicates, 42);
	CHECK_EQ_INT(t->rejected, 2);
	CHECK_EQ_INT(t->unknown_tenant, 1);
	CHECK_EQ_INT(t->unknown_counter, 1);
	CHECK_EQ_INT(cnt_dedup_filter_counter(f, 0)->in, 84);
	CHECK_EQ_INT(cnt_dedup_filter_counter(f, 0)->duplicates, 41);
	CHECK_EQ_INT(cnt_dedup_filter_counter(f, 1)->in, 2);
	CHECK_EQ_INT(cnt_dedup_filter_counter(f, 1)->duplicates, 1);
	CHECK_EQ_INT(cnt_dedup_filter_counter(f, 2)->in, 0);
	CHECK_EQ_INT(table.count, 43);

	keys_of(ofd, got, sizeof(got));
	CHECK(strlen(got) == wl + strlen(",h,h,g,v1") && strncmp(got, want, wl) == 0 &&
		strcmp(got + wl, ",h,h,g,v1") == 0);
	keys_of(dfd, got, sizeof(got));
	CHECK(strlen(got) == wl + strlen(",g,v2") && strncmp(got, want, wl) == 0 && strcmp(got + wl, ",g,v2") == 0);

	cnt_dedup_filter_free(f);
	cnt_writer_free(ow);
	cnt_writer_free(dw);
	cnt_dedup_release(&table);
	close(ofd);
	close(dfd);
	cnt_defs_free(d);
}

/* Without a duplicates writer, duplicates are only counted. */
static void test_no_duplicates_writer(void)
{
	cnt_defs *d = defs();
	cnt_err err;
	int ofd = memfd_create("out", MFD_CLOEXEC);
	cnt_writer *ow = cnt_event_writer_new(ofd, "out", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	cnt_dedup table;
	cnt_dedup_filter *f;
	cnt_count_reject rej;
	cnt_event e = event("dist", "k", "m", NULL, T0);
	char got[64];

	CHECK_EQ_INT(cnt_dedup_init(&table, 0), 0);
	f = cnt_dedup_filter_new(d, "defs.json", &table, ow, NULL, &err);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(cnt_dedup_filter_event(f, &e, NULL, 0, &rej, &err), 0);
	CHECK_EQ_INT(cnt_dedup_filter_finish(f, &err), 0);
	CHECK_EQ_INT(cnt_dedup_filter_totals(f)->duplicates, 2);
	keys_of(ofd, got, sizeof(got));
	CHECK_EQ_STR(got, "k");
	cnt_dedup_filter_free(f);
	cnt_writer_free(ow);
	cnt_dedup_release(&table);
	close(ofd);
	cnt_defs_free(d);
}

static void test_expected_keys(void)
{
	char path[] = "/tmp/test_dedup_filter.XXXXXX";
	int fd = mkstemp(path);
	char buf[4800];
	char *names[3], dash[] = "-", none[] = "/nonexistent/file";

	memset(buf, 'x', sizeof(buf));
	CHECK(fd >= 0 && write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
	names[0] = path;
	names[1] = dash;
	names[2] = none;
	CHECK_EQ_INT(cnt_dedup_expected_keys(names, 3), 100);
	CHECK_EQ_INT(cnt_dedup_expected_keys(names, 0), 0);
	close(fd);
	unlink(path);
	/* a container python3-avro wrote, 40 records in 9,161 bytes: its first
	 * block judges it, not the 48-byte rule (190) */
	{
		char fx[256], *one[1] = {fx};
		struct stat sb;
		size_t k;

		snprintf(fx, sizeof(fx), "tests/fixtures/events.null.avro");
		if (stat(fx, &sb) != 0)
			snprintf(fx, sizeof(fx), "../../tests/fixtures/events.null.avro");
		k = cnt_dedup_expected_keys(one, 1);
		CHECK(k >= 20 && k <= 80);
	}
	/* a container whose first block claims 2^63 - 1 records in no bytes:
	 * at most a key in 32 bytes (test_filehead has the bound) */
	{
		static const uint8_t head[] = {'O', 'b', 'j', 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
			0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0};
		char big[] = "/tmp/test_dedup_filter.XXXXXX", *one[1] = {big};
		int bfd = mkstemp(big);
		static uint8_t body[1 << 16];
		struct stat sb;

		memcpy(body, head, sizeof(head));
		CHECK(bfd >= 0 && write(bfd, body, sizeof(body)) == (ssize_t)sizeof(body) && fsync(bfd) == 0);
		CHECK(bfd >= 0 && fstat(bfd, &sb) == 0);
		CHECK_EQ_INT(cnt_dedup_expected_keys(one, 1),
			((uint64_t)sb.st_blocks * 512 < sizeof(body) ? (uint64_t)sb.st_blocks * 512 : sizeof(body)) / 32);
		if (bfd >= 0)
			close(bfd);
		unlink(big);
	}
}

int main(void)
{
	RUN(test_key_rule);
	RUN(test_ingest_second);
	RUN(test_stage);
	RUN(test_no_duplicates_writer);
	RUN(test_expected_keys);
	return unit_report("test_dedup_filter");
}
