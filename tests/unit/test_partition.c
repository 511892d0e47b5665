/*
 * test_partition.c - the route of an event to its part and the
 * partitioning stage (lib/count/partition.h).
 *
 * The route: by member exactly when the dedup key holds the member
 * (item_member, with an item, not a compensation), else by idempotency
 * key; undeclared versions by member; the hash pinned (the same parts on
 * every machine); every duplicate cnt-dedup would find in the same part,
 * including a retry that names another member; parts in range and
 * balanced.  The stage: every event in exactly one part, in input order,
 * the counts and the balance check.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "count/dedup_filter.h"
#include "count/partition.h"
#include "count/shardmap.h"
#include "unit.h"

static const char defs_json[] =
	"{\"format\": \"cnt-definitions/1\","
	" \"tenants\": [{\"tenant_id\": \"t\", \"timezone\": \"UTC\"}],"
	" \"counters\": ["
	"  {\"tenant_id\": \"t\", \"counter_id\": \"dist\", \"versions\": ["
	"     {\"version\": 1, \"type\": \"exact\", \"dedup_horizon_s\": 3600}]},"
	"  {\"tenant_id\": \"t\", \"counter_id\": \"views\", \"versions\": ["
	"     {\"version\": 1, \"type\": \"unique\", \"dedup_key\": \"item_member\", \"dedup_horizon_s\": 3600}]}]}";

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

static cnt_event event(const char *counter, const char *key, const char *member, const char *item)
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
	e.event_time = INT64_C(1772359200000);
	e.ingest_time = INT64_C(1772359200000);
	return e;
}

static const cnt_counter_version *version(const cnt_defs *d, const char *counter)
{
	return cnt_counter_version_get(cnt_defs_counter(d, "t", 1, counter, strlen(counter)), 1);
}

static int same_key(cnt_dkey a, cnt_dkey b)
{
	return a.lo == b.lo && a.hi == b.hi;
}

static void test_rule(void)
{
	cnt_defs *d = defs();
	const cnt_counter_version *dist = version(d, "dist"), *views = version(d, "views");
	cnt_event e;

	e = event("dist", "k1", "m1", NULL);
	CHECK_EQ_INT(cnt_partition_by_member(dist, &e), 0);
	e = event("dist", "k1", "m1", "u1");
	CHECK_EQ_INT(cnt_partition_by_member(dist, &e), 0);
	e = event("views", "k1", "m1", "u1");
	CHECK_EQ_INT(cnt_partition_by_member(views, &e), 1);
	e = event("views", "k1", "m1", NULL);                 /* no item: keyed by idempotency key */
	CHECK_EQ_INT(cnt_partition_by_member(views, &e), 0);
	e = event("views", "k1", "m1", "u1");
	e.retracts = sl("0123");                               /* a compensation */
	CHECK_EQ_INT(cnt_partition_by_member(views, &e), 0);
	e = event("nope", "k1", "m1", NULL);                   /* undeclared */
	CHECK_EQ_INT(cnt_partition_by_member(NULL, &e), 1);
	cnt_defs_free(d);
}

/* The hash is XXH3-64 (seed 0) of the three strings, each followed by a
 * NUL, modulo n: computed here from a flat buffer, and pinned. */
static void test_hash_pinned(void)
{
	cnt_defs *d = defs();
	cnt_event e = event("dist", "k1", "m1", NULL), v = event("views", "k9", "vid", "u1");
	static const char flat[] = "t\0dist\0k1";                  /* sizeof includes the final NUL */
	static const char flatv[] = "t\0views\0vid";
	uint64_t h = XXH3_64bits(flat, sizeof(flat)), hv = XXH3_64bits(flatv, sizeof(flatv));

	for (uint32_t n = 1; n <= 64; n++) {
		CHECK_EQ_INT(cnt_partition_of(version(d, "dist"), &e, n), h % n);
		CHECK_EQ_INT(cnt_partition_of(version(d, "views"), &v, n), hv % n);
	}
	CHECK_EQ_INT(h, UINT64_C(0x1397c3a609c20563));
	CHECK_EQ_INT(cnt_partition_of(NULL, &e, 1), 0);
	cnt_defs_free(d);
}

/* Every pair cnt-dedup takes for duplicates lands in one part. */
static void test_duplicates_meet(void)
{
	cnt_defs *d = defs();
	const cnt_counter_version *dist = version(d, "dist"), *views = version(d, "views");
	int split_by_member = 0;

	for (int i = 0; i < 200; i++) {
		char k[32], m1[32], m2[32], k2[32];
		cnt_event a, b;

		snprintf(k, sizeof(k), "key-%d", i);
		snprintf(k2, sizeof(k2), "other-%d", i);
		snprintf(m1, sizeof(m1), "m-%d", i);
		snprintf(m2, sizeof(m2), "n-%d", i * 7 + 1);
		/* a retry naming another member: the same dedup key */
		a = event("dist", k, m1, NULL);
		b = event("dist", k, m2, NULL);
		CHECK(same_key(cnt_dedup_event_key(dist, &a), cnt_dedup_event_key(dist, &b)));
		CHECK_EQ_INT(cnt_partition_of(dist, &a, 7), cnt_partition_of(dist, &b, 7));
		/* a member-only route would have split some of them */
		{
			cnt_event ma = event("views", "x", m1, "u"), mb = event("views", "x", m2, "u");

			split_by_member += cnt_partition_of(views, &ma, 7) != cnt_partition_of(views, &mb, 7);
		}
		/* a second view of (member, item) under another idempotency key */
		a = event("views", k, m1, "u1");
		b = event("views", k2, m1, "u1");
		CHECK(same_key(cnt_dedup_event_key(views, &a), cnt_dedup_event_key(views, &b)));
		CHECK_EQ_INT(cnt_partition_of(views, &a, 7), cnt_partition_of(views, &b, 7));
		/* all of a member's views in its part */
		b = event("views", k2, m1, "u2");
		CHECK_EQ_INT(cnt_partition_of(views, &a, 7), cnt_partition_of(views, &b, 7));
	}
	CHECK(split_by_member > 100);
	cnt_defs_free(d);
}

static void test_balance(void)
{
	cnt_defs *d = defs();
	const cnt_counter_version *dist = version(d, "dist");
	unsigned hist[4] = {0};

	for (int i = 0; i < 20000; i++) {
		char k[32];
		cnt_event e;
		uint32_t p;

		snprintf(k, sizeof(k), "ride-%06d", i);
		e = event("dist", k, "m", NULL);
		p = cnt_partition_of(dist, &e, 4);
		CHECK(p < 4);
		if (p < 4)
			hist[p]++;
	}
	for (int p = 0; p < 4; p++)
		CHECK(hist[p] > 4700 && hist[p] < 5300);
	cnt_defs_free(d);
}

/* The idempotency keys of an events file, comma-separated. */
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
	const cnt_counter_version *dist = version(d, "dist");
	cnt_err err;
	int fds[3];
	cnt_writer *ws[3];
	cnt_partition *p;
	const cnt_partition_totals *t;
	char want[3][4096], got[4096];
	size_t wl[3] = {0, 0, 0};
	cnt_count_reject rej;

	for (int i = 0; i < 3; i++) {
		fds[i] = memfd_create("part", MFD_CLOEXEC);
		ws[i] = cnt_event_writer_new(fds[i], "part", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
		CHECK(ws[i] != NULL);
		want[i][0] = 0;
	}
	CHECK(cnt_partition_new(d, 0, ws, &err) == NULL);
	CHECK(cnt_partition_new(d, CNT_PARTITION_MAX + 1, ws, &err) == NULL);
	p = cnt_partition_new(d, 3, ws, &err);
	CHECK(p != NULL);
	for (int i = 0; i < 60 && p; i++) {
		char k[32];
		cnt_event e;
		uint32_t part;

		snprintf(k, sizeof(k), "k%02d", i);
		e = event(i % 10 == 9 ? "nope" : "dist", k, i % 2 ? "m1" : "m2", NULL);
		part = i % 10 == 9 ? cnt_partition_of(NULL, &e, 3) : cnt_partition_of(dist, &e, 3);
		wl[part] += (size_t)snprintf(want[part] + wl[part], sizeof(want[part]) - wl[part], "%s%s",
			wl[part] ? "," : "", k);
		CHECK_EQ_INT(cnt_partition_stage(p, &e, NULL, 0, &rej, &err), 0);
	}
	CHECK_EQ_INT(cnt_partition_finish(p, &err), 0);
	t = cnt_partition_get_totals(p);
	CHECK_EQ_INT(t->in, 60);
	CHECK_EQ_INT(t->out, 60);
	CHECK_EQ_INT(t->undeclared, 6);
	CHECK_EQ_INT(t->by_member, 6);
	CHECK_EQ_INT(t->by_key, 54);
	for (uint32_t i = 0; i < 3; i++) {
		size_t n = 0;

		keys_of(fds[i], got, sizeof(got));
		CHECK_EQ_STR(got, want[i]);
		for (const char *c = want[i]; *c; c++)
			n += *c == 'k';
		CHECK_EQ_INT(cnt_partition_part_count(p, i), n);
		CHECK(n > 5);
	}
	CHECK_EQ_INT(cnt_partition_part_count(p, 3), 0);
	cnt_partition_free(p);
	for (int i = 0; i < 3; i++) {
		cnt_writer_free(ws[i]);
		close(fds[i]);
	}
	cnt_defs_free(d);
}

/* A hot member with 4 route shards: the route hashes the fourth string
 * (XXH3-64(item) mod 4, in decimal), pinned; the same item always in one
 * part; the member over several parts; other keys as without a map. */
static void test_hot_member(void)
{
	static const char mj[] =
		"{\"format\": \"cnt-shardmap/1\", \"updated\": \"2026-03-01T00:00:00Z\", \"events\": 100, \"keys\": ["
		"{\"tenant_id\": \"t\", \"counter_id\": \"views\", \"member_ref\": \"hot\", \"shards\": 4, \"share\": 0.5,"
		" \"history\": [{\"at\": \"2026-03-01T00:00:00Z\", \"from\": 1, \"to\": 4, \"share\": 0.5}]}]}";
	cnt_err err;
	cnt_defs *d = defs();
	cnt_shardmap *m = cnt_shardmap_parse(mj, strlen(mj), "m", &err);
	const cnt_counter_version *views = version(d, "views"), *dist = version(d, "dist");
	unsigned seen = 0;
	char key[32], item[32], flat[64];

	CHECK(m != NULL);
	if (m == NULL)
		return;
	for (int i = 0; i < 200; i++) {
		cnt_event a, b;
		uint32_t sub;
		int fl;

		snprintf(key, sizeof(key), "k%d", i);
		snprintf(item, sizeof(item), "u%d", i % 50);
		a = event("views", key, "hot", item);
		b = event("views", "other-key", "hot", item);           /* a duplicate by (member, item) */
		CHECK_EQ_INT(cnt_partition_of_mapped(views, &a, 16, m), cnt_partition_of_mapped(views, &b, 16, m));
		sub = (uint32_t)(XXH3_64bits(item, strlen(item)) % 4);
		fl = snprintf(flat, sizeof(flat), "t%cviews%chot%c%u", 0, 0, 0, sub);
		CHECK_EQ_INT(cnt_partition_of_mapped(views, &a, 16, m), XXH3_64bits(flat, (size_t)fl + 1) % 16);
		seen |= 1u << cnt_partition_of_mapped(views, &a, 16, m);
		/* not mapped, or not routed by member: as without a map */
		a = event("views", key, "cold", item);
		CHECK_EQ_INT(cnt_partition_of_mapped(views, &a, 16, m), cnt_partition_of(views, &a, 16));
		a = event("dist", key, "hot", NULL);
		CHECK_EQ_INT(cnt_partition_of_mapped(dist, &a, 16, m), cnt_partition_of(dist, &a, 16));
		a = event("views", key, "hot", NULL);
		CHECK_EQ_INT(cnt_partition_of_mapped(views, &a, 16, m), cnt_partition_of(views, &a, 16));
	}
	CHECK(__builtin_popcount(seen) > 1 && __builtin_popcount(seen) <= 4);
	cnt_shardmap_free(m);
	cnt_defs_free(d);
}

int main(void)
{
	RUN(test_hot_member);
	RUN(test_rule);
	RUN(test_hash_pinned);
	RUN(test_duplicates_meet);
	RUN(test_balance);
	RUN(test_stage);
	return unit_report("test_partition");
}
