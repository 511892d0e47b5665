/*
 * test_accum.c - bucket records (lib/model/bucket.h) and their accumulation
 * (lib/count/accum.h).
 *
 * - encode / decode round trip through a real bucket file, with 128-bit
 *   sums at every boundary (INT64_MIN - 1 .. INT64_MAX + 1, 2^64, +-2^127);
 * - the canonical key order: each key field in turn, strings by unsigned
 *   bytes with the shorter first on a tie, numbers signed; the same order
 *   the key read back from an encoded record (cnt_bucket_rec_key), and
 *   the merge of sorted encoded records in that order (cnt_bucket_merge;
 *   cnt_bucket_merge_members, cnt-count's halves and day roll-ups, the
 *   same bytes);
 * - cnt_bucket_to_json prints 128-bit sums as exact decimals;
 * - merging is commutative, associative, equal with and without spills,
 *   and idempotent for sketches (the bytes of A+B, B+A, (A+B)+C, A+(B+C),
 *   each built through cnt_accum, are compared), and events accumulate to
 *   the same bytes in any order.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "count/accum.h"
#include "model/bucket.h"
#include "count/hll.h"
#include "unit.h"

static const char *tmpdir = "/tmp";

static cnt_slice S(const char *s)
{
	cnt_slice x = {s, strlen(s)};

	return x;
}

static cnt_i128 P2(int k)
{
	return (cnt_i128)((unsigned __int128)1 << k);
}

/* Reads the whole of fd (from its start) into out. */
static void slurp(int fd, cnt_buf *out)
{
	char tmp[65536];
	ssize_t n;

	out->len = 0;
	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, tmp, sizeof(tmp))) > 0)
		CHECK_EQ_INT(cnt_buf_append(out, tmp, (size_t)n), 0);
}

/* A bucket file of v[0..n) (in the order given) as bytes. */
static FILE *write_buckets(const cnt_bucket *v, size_t n)
{
	FILE *f = tmpfile();
	cnt_err err;
	cnt_writer *w;

	CHECK(f != NULL);
	if (f == NULL)
		return NULL;
	w = cnt_bucket_writer_new(fileno(f), "test", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	CHECK(w != NULL);
	for (size_t i = 0; w && i < n; i++) {
		CHECK_EQ_INT(cnt_bucket_encode(&v[i], cnt_writer_buf(w)), 0);
		CHECK_EQ_INT(cnt_writer_commit(w, &err), 0);
	}
	CHECK(w && cnt_writer_finish(w, &err) == 0);
	cnt_writer_free(w);
	return f;
}

static cnt_bucket base(void)
{
	cnt_bucket b;

	memset(&b, 0, sizeof(b));
	b.tenant_id = S("acme");
	b.counter_id = S("dist");
	b.counter_version = 1;
	b.member_ref = S("m1");
	b.bucket_start = INT64_C(1772359200000);
	b.bucket_end = b.bucket_start + 3600000;
	b.count = 1;
	b.max_ingest_time = b.bucket_end;
	return b;
}

static void test_round_trip(void)
{
	const cnt_i128 sums[] = {
		0, 1, -1, INT64_MAX, (cnt_i128)INT64_MAX + 1, INT64_MIN, (cnt_i128)INT64_MIN - 1,
		P2(64), -P2(64), P2(64) - 1, -P2(64) + 1, P2(64) * 5 + 3,
		(cnt_i128)(((unsigned __int128)1 << 127) - 1), -(cnt_i128)(((unsigned __int128)1 << 127) - 1) - 1,
	};
	enum { N = sizeof(sums) / sizeof(sums[0]) };
	cnt_bucket v[N];
	char members[N][8];
	uint8_t sketch[5] = {1, 2, 3, 4, 5};
	FILE *f;
	cnt_bucket_in in;
	cnt_bucket b;
	cnt_err err;
	size_t i = 0;
	int rc;

	for (size_t k = 0; k < N; k++) {
		v[k] = base();
		snprintf(members[k], sizeof(members[k]), "m%02zu", k);
		v[k].member_ref = S(members[k]);
		v[k].sum = sums[k];
		v[k].late_sum = -sums[N - 1 - k] / 2;
		v[k].late_count = (int64_t)k;
		v[k].has_min = k % 2;
		v[k].min = INT64_MIN + (int64_t)k;
		v[k].has_max = k % 3 != 0;
		v[k].max = INT64_MAX - (int64_t)k;
		v[k].has_last = 1;
		v[k].last_event_time = -(int64_t)k;
		v[k].shard = (int32_t)k - 3;
		v[k].counter_version = INT32_MAX;
		if (k % 4 == 1) {
			v[k].sketch.p = (const char *)sketch;   /* bytes as they are */
			v[k].sketch.n = sizeof(sketch);
		}
		if (k % 4 == 2) {
			v[k].late_sketch.p = (const char *)sketch;
			v[k].late_sketch.n = 0;                  /* present and empty */
		}
	}
	f = write_buckets(v, N);
	if (f == NULL)
		return;
	lseek(fileno(f), 0, SEEK_SET);
	CHECK_EQ_INT(cnt_bucket_in_open(&in, fileno(f), "test", NULL, &err), 0);
	while ((rc = cnt_bucket_in_next(&in, &b, &err)) > 0) {
		CHECK(i < N);
		if (i >= N)
			break;
		CHECK_EQ_INT(cnt_bucket_key_cmp(&b, &v[i]), 0);
		CHECK(b.sum == v[i].sum);
		CHECK(b.late_sum == v[i].late_sum);
		CHECK_EQ_INT(cnt_bucket_values_differ(&b, &v[i], 0), 0);
		CHECK_EQ_INT(b.has_min, v[i].has_min);
		CHECK_EQ_INT(b.has_max, v[i].has_max);
		CHECK_EQ_INT(b.shard, v[i].shard);
		CHECK_EQ_INT(b.counter_version, INT32_MAX);
		CHECK((b.sketch.p == NULL) == (v[i].sketch.p == NULL));
		CHECK((b.late_sketch.p == NULL) == (v[i].late_sketch.p == NULL));
		CHECK_EQ_INT(b.late_sketch.n, v[i].late_sketch.n);
		if (b.sketch.p)
			CHECK(b.sketch.n == sizeof(sketch) && memcmp(b.sketch.p, sketch, sizeof(sketch)) == 0);
		i++;
	}
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(i, N);
	cnt_bucket_in_release(&in);
	fclose(f);
	/* fits64 at its edges */
	CHECK(cnt_i128_fits64(INT64_MAX) && cnt_i128_fits64(INT64_MIN));
	CHECK(!cnt_i128_fits64((cnt_i128)INT64_MAX + 1) && !cnt_i128_fits64((cnt_i128)INT64_MIN - 1));
}

/* Avro zigzag varint at *p, advancing it. */
static int64_t zz(const uint8_t **p)
{
	uint64_t u = 0;
	int shift = 0;

	do {
		u |= (uint64_t)(**p & 0x7f) << shift;
		shift += 7;
	} while (*(*p)++ & 0x80);
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

/* The sum, sum_high and sum_overflow fields as written, decoded by hand
 * from the record's bytes (field order of bucket_aggregate.avsc). */
static void test_sum_encoding(void)
{
	struct { cnt_i128 v; int64_t lo, hi; int flag; } cases[] = {
		{0, 0, 0, 0},
		{INT64_MAX, INT64_MAX, 0, 0},
		{(cnt_i128)INT64_MAX + 1, INT64_MIN, 0, 1},
		{INT64_MIN, INT64_MIN, -1, 0},
		{(cnt_i128)INT64_MIN - 1, INT64_MAX, -1, 1},
		{-1, -1, -1, 0},
		{-P2(64), 0, -1, 1},
		{P2(64) * 5 + 3, 3, 5, 1},
	};
	cnt_buf out = CNT_BUF_INIT;

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		cnt_bucket b = base();
		const uint8_t *p;
		int64_t n;

		b.sum = cases[k].v;
		b.late_sum = -cases[k].v;
		b.sampled = (int64_t)k;
		b.sum_var = cases[k].v;   /* 128 bits, two longs like sum */
		out.len = 0;
		CHECK_EQ_INT(cnt_bucket_encode(&b, &out), 0);
		p = out.p;
		for (int f = 0; f < 10; f++) {  /* tenant .. count */
			n = zz(&p);
			if (f == 0 || f == 1 || f == 3 || f == 4 || f == 5)
				p += n;              /* a string: length, bytes */
		}
		CHECK(zz(&p) == cases[k].lo);
		CHECK(zz(&p) == cases[k].hi);
		CHECK_EQ_INT(*p++, cases[k].flag);
		/* min, max, last_event_time: null branch (0) */
		CHECK_EQ_INT(*p++, 0);
		CHECK_EQ_INT(*p++, 0);
		CHECK_EQ_INT(*p++, 0);
		CHECK(zz(&p) == b.max_ingest_time);
		CHECK(zz(&p) == 0);            /* late_count */
		{
			cnt_i128 lv = -cases[k].v;
			int64_t lo = zz(&p), hi = zz(&p);

			CHECK((cnt_i128)(((unsigned __int128)(uint64_t)hi << 64) | (uint64_t)lo) == lv);
			CHECK_EQ_INT(*p++, !cnt_i128_fits64(lv));
		}
		CHECK_EQ_INT(*p++, 0);          /* sketch null */
		CHECK_EQ_INT(*p++, 0);          /* late_sketch null */
		CHECK(zz(&p) == b.last_count);
		CHECK(zz(&p) == b.ingest_count);
		CHECK(zz(&p) == (int64_t)k);   /* sampled */
		{
			int64_t lo = zz(&p), hi = zz(&p);   /* sum_var, sum_var_high */

			CHECK((cnt_i128)(((unsigned __int128)(uint64_t)hi << 64) | (uint64_t)lo) == cases[k].v);
		}
		CHECK(p == out.p + out.len);
	}
	cnt_buf_release(&out);
}

/* Whether the key read back from x's encoding (cnt_bucket_rec_key) is
 * x's key, field by field. */
static int key_survives(const cnt_bucket *x)
{
	cnt_buf e = CNT_BUF_INIT;
	cnt_bucket k;
	int ok = cnt_bucket_encode(x, &e) == 0 && cnt_bucket_rec_key(e.p, e.len, &k) == 0 &&
		cnt_bucket_key_cmp(&k, x) == 0 && k.counter_version == x->counter_version &&
		k.bucket_start == x->bucket_start && k.shard == x->shard;

	cnt_buf_release(&e);
	return ok;
}

static void test_key_order(void)
{
	cnt_bucket a = base(), b = base(), cut;
	/* each case: a < b */
	cnt_buf ea = CNT_BUF_INIT;
	struct { const char *at, *bt, *ac, *bc, *am, *bm; int32_t av, bv; int64_t as, bs; int32_t ash, bsh; } c[] = {
		{"a", "b", "z", "a", "z", "a", 9, 1, 9, 1, 9, 1},        /* tenant first */
		{"a", "aa", "z", "a", "z", "a", 9, 1, 9, 1, 9, 1},       /* shorter first on a tie */
		{"Z", "a", "x", "x", "m", "m", 1, 1, 0, 0, 0, 0},        /* bytes, not case-folded */
		{"z", "\xc3\xa9", "x", "x", "m", "m", 1, 1, 0, 0, 0, 0}, /* unsigned bytes: 0xc3 > 'z' */
		{"t", "t", "a", "b", "z", "a", 9, 1, 9, 1, 9, 1},        /* then counter */
		{"t", "t", "c", "c", "m", "m", -1, 1, 9, 1, 9, 1},       /* then version, signed */
		{"t", "t", "c", "c", "m", "m1", 1, 1, 9, 1, 9, 1},       /* then member */
		{"t", "t", "c", "c", "m", "m", 1, 1, -5, 1, 9, 1},       /* then bucket, signed */
		{"t", "t", "c", "c", "m", "m", 1, 1, 5, 5, -1, 0},       /* then shard, signed */
		{"t", "t", "c", "c", "", "m", 1, 1, 5, 5, 0, 0},         /* empty string first */
	};

	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		a.tenant_id = S(c[k].at);
		b.tenant_id = S(c[k].bt);
		a.counter_id = S(c[k].ac);
		b.counter_id = S(c[k].bc);
		a.member_ref = S(c[k].am);
		b.member_ref = S(c[k].bm);
		a.counter_version = c[k].av;
		b.counter_version = c[k].bv;
		a.bucket_start = c[k].as;
		b.bucket_start = c[k].bs;
		a.shard = c[k].ash;
		b.shard = c[k].bsh;
		if (!(cnt_bucket_key_cmp(&a, &b) < 0 && cnt_bucket_key_cmp(&b, &a) > 0))
			fprintf(stderr, "key order case %zu wrong\n", k);
		CHECK(cnt_bucket_key_cmp(&a, &b) < 0);
		CHECK(cnt_bucket_key_cmp(&b, &a) > 0);
		CHECK_EQ_INT(cnt_bucket_key_cmp(&a, &a), 0);
		/* the key read back from the encoding is the key */
		CHECK(key_survives(&a) && key_survives(&b));
	}
	/* dimension, then its value, between member and bucket */
	a = base();
	b = base();
	a.dim = S("country");
	b.dim = S("device");
	a.bucket_start = b.bucket_start + 1;
	CHECK(cnt_bucket_key_cmp(&a, &b) < 0 && key_survives(&a) && key_survives(&b));
	b.dim = S("country");
	a.dim_value = S("DE");
	b.dim_value = S("FR");
	CHECK(cnt_bucket_key_cmp(&a, &b) < 0 && key_survives(&a) && key_survives(&b));
	/* a record cut inside its key has none */
	CHECK(cnt_bucket_encode(&a, &ea) == 0);
	CHECK_EQ_INT(cnt_bucket_rec_key(ea.p, 3, &cut), -1);
	/* bucket_end and values are not part of the key */
	a = base();
	b = base();
	b.bucket_end++;
	b.count = 99;
	CHECK_EQ_INT(cnt_bucket_key_cmp(&a, &b), 0);
	CHECK(cnt_bucket_values_differ(&a, &b, 0) != 0);
	cnt_buf_release(&ea);
}

/* A merge source over n records of an array (test_merge). */
typedef struct arr {
	cnt_buf *recs;
	size_t n, at;
	size_t fail_at;      /* returns -1 here; n + 1: never */
} arr;

static int arr_next(void *ctx, const uint8_t **rec, size_t *n)
{
	arr *a = ctx;

	if (a->at == a->fail_at)
		return -1;
	if (a->at == a->n)
		return 0;
	*rec = a->recs[a->at].p;
	*n = a->recs[a->at].len;
	a->at++;
	return 1;
}

typedef int (*merge_fn)(const cnt_bucket_src *, size_t, cnt_writer *, size_t *, cnt_err *);

/* The bytes merge writes of the three sources recs[s][0..40), source 1
 * failing before its record fail1 (41: never), into out; its status. */
static int merged(merge_fn merge, cnt_buf recs[3][40], size_t fail1, size_t *failed, cnt_buf *out)
{
	arr srcs[3];
	cnt_bucket_src src[3];
	cnt_err err;
	FILE *f = tmpfile();
	cnt_writer *w = cnt_bucket_writer_new(fileno(f), "merged", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	int rc;
	char buf[4096];
	size_t n;

	for (int s = 0; s < 3; s++) {
		srcs[s] = (arr){recs[s], 40, 0, s == 1 ? fail1 : 41};
		src[s] = (cnt_bucket_src){arr_next, &srcs[s]};
	}
	CHECK(w != NULL);
	rc = merge(src, 3, w, failed, &err);
	if (rc == 0)
		CHECK(cnt_writer_finish(w, &err) == 0);
	cnt_writer_free(w);
	rewind(f);
	out->len = 0;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		CHECK(cnt_buf_append(out, buf, n) == 0);
	fclose(f);
	return rc;
}

/* cnt_bucket_merge and cnt_bucket_merge_members: three sorted sources
 * split by member (members dealt round-robin, four buckets each; one
 * member's name too long for the run's saved prefix) come out in key
 * order, every record once, the same bytes from both; a source that
 * fails, in the middle of a member's records too, stops the merge and is
 * named. */
static void test_merge(void)
{
	cnt_buf recs[3][40], out[2] = {CNT_BUF_INIT, CNT_BUF_INIT};
	merge_fn fn[2] = {cnt_bucket_merge, cnt_bucket_merge_members};
	size_t failed = 99, total = 0;
	cnt_err err;
	cnt_bucket_in in;
	cnt_bucket x, prev;
	cnt_buf prevkey = CNT_BUF_INIT;
	char longm[400];
	int got, first = 1;

	memset(longm, 'z', sizeof(longm) - 1);
	longm[sizeof(longm) - 1] = 0;
	for (int s = 0; s < 3; s++) {
		for (int i = 0; i < 40; i++) {
			cnt_bucket b = base();
			char m[16];

			/* source s holds members m{s}, m{s+3}, ...: sorted as
			 * strings; source 2's last member a long name, last too */
			snprintf(m, sizeof(m), "m%02d", (i / 4) * 3 + s);
			b.member_ref = s == 2 && i >= 36 ? (cnt_slice){longm, strlen(longm)} : S(m);
			b.bucket_start = (int64_t)(i % 4) * 3600000;
			b.bucket_end = b.bucket_start + 3600000;
			recs[s][i] = (cnt_buf)CNT_BUF_INIT;
			CHECK(cnt_bucket_encode(&b, &recs[s][i]) == 0);
		}
	}
	for (int k = 0; k < 2; k++) {
		FILE *f = tmpfile();

		CHECK_EQ_INT(merged(fn[k], recs, 41, &failed, &out[k]), 0);
		CHECK(fwrite(out[k].p, 1, out[k].len, f) == out[k].len);
		rewind(f);
		CHECK(cnt_bucket_in_open(&in, fileno(f), "merged", NULL, &err) == 0);
		first = 1;
		total = 0;
		while ((got = cnt_bucket_in_next(&in, &x, &err)) == 1) {
			if (!first) {
				CHECK(cnt_bucket_rec_key(prevkey.p, prevkey.len, &prev) == 0);
				CHECK(cnt_bucket_key_cmp(&prev, &x) < 0);
			}
			prevkey.len = 0;
			CHECK(cnt_bucket_encode(&x, &prevkey) == 0);
			first = 0;
			total++;
		}
		CHECK_EQ_INT(got, 0);
		CHECK_EQ_INT(total, 120);
		cnt_bucket_in_release(&in);
		fclose(f);
	}
	CHECK(out[0].len == out[1].len && memcmp(out[0].p, out[1].p, out[0].len) == 0);
	/* source 1 fails after 5 records (the second of its second member)
	 * or after 4 (at a member's end) */
	for (int k = 0; k < 2; k++)
		for (size_t at = 4; at <= 5; at++) {
			failed = 99;
			CHECK_EQ_INT(merged(fn[k], recs, at, &failed, &out[k]), 1);
			CHECK_EQ_INT(failed, 1);
		}
	for (int s = 0; s < 3; s++)
		for (int i = 0; i < 40; i++)
			cnt_buf_release(&recs[s][i]);
	cnt_buf_release(&prevkey);
	cnt_buf_release(&out[0]);
	cnt_buf_release(&out[1]);
}

static void test_to_json(void)
{
	cnt_bucket b = base();
	cnt_buf out = CNT_BUF_INIT;
	char *s;

	b.sum = P2(64) * 5 + 3;                          /* 92233720368547758083 */
	b.late_sum = -(cnt_i128)(((unsigned __int128)1 << 127) - 1) - 1;
	b.has_min = 1;
	b.min = -7;
	CHECK_EQ_INT(cnt_bucket_to_json(&b, &out), 0);
	CHECK_EQ_INT(cnt_buf_putc(&out, 0), 0);
	s = (char *)out.p;
	CHECK(strstr(s, "\"sum\":92233720368547758083,") != NULL);
	CHECK(strstr(s, "\"late_sum\":-170141183460469231731687303715884105728,") != NULL);
	CHECK(strstr(s, "\"min\":-7,\"max\":null,") != NULL);
	CHECK(strstr(s, "\"sketch_estimate\":null") != NULL);
	CHECK(strncmp(s, "{\"tenant_id\":\"acme\",\"counter_id\":\"dist\",\"counter_version\":1,\"member_ref\":\"m1\"", 74) == 0);
	out.len = 0;
	b.sum = INT64_MIN;
	b.late_sum = (cnt_i128)INT64_MIN - 1;
	CHECK_EQ_INT(cnt_bucket_to_json(&b, &out), 0);
	CHECK_EQ_INT(cnt_buf_putc(&out, 0), 0);
	s = (char *)out.p;
	CHECK(strstr(s, "\"sum\":-9223372036854775808,") != NULL);
	CHECK(strstr(s, "\"late_sum\":-9223372036854775809,") != NULL);
	cnt_buf_release(&out);
}

/* ---- merge properties through cnt_accum ------------------------------- */

typedef struct set {
	cnt_bucket *v;
	size_t n;
	cnt_buf sk;          /* sketch bytes, pointed into by v[].sketch */
	size_t *sk_off, *sk_len;
} set;

/* A set of bucket records: members m0..m39 over 3 buckets and 2 shards,
 * uniq records carrying a sketch of items seeded by `seed`, big sums. */
static void make_set(set *s, unsigned seed)
{
	static char names[40][8];
	size_t cap = 40 * 3 * 2 * 2;

	s->v = calloc(cap, sizeof(*s->v));
	s->sk_off = calloc(cap, sizeof(size_t));
	s->sk_len = calloc(cap, sizeof(size_t));
	s->n = 0;
	memset(&s->sk, 0, sizeof(s->sk));
	for (unsigned m = 0; m < 40; m++)
		snprintf(names[m], sizeof(names[m]), "m%u", m);
	for (unsigned m = 0; m < 40; m++)
		for (int bk = 0; bk < 3; bk++)
			for (int sh = 0; sh < 2; sh++)
				for (int u = 0; u < 2; u++) {
					unsigned r = (m * 31 + (unsigned)bk * 7 + (unsigned)sh * 3 + (unsigned)u + seed * 13) % 5;
					cnt_bucket *b;

					if (r == 0)
						continue;     /* not every set has every key */
					b = &s->v[s->n];
					*b = base();
					b->counter_id = S(u ? "uniq" : "dist");
					b->member_ref = S(names[m]);
					b->bucket_start += bk * 3600000;
					b->bucket_end = b->bucket_start + 3600000;
					b->shard = sh;
					b->count = r;
					b->sum = (cnt_i128)INT64_MAX * r + seed;
					b->has_min = b->has_max = b->has_last = 1;
					b->min = -(int64_t)(seed * 10 + r);
					b->max = (int64_t)(seed * 10 + r);
					b->last_event_time = b->bucket_start + seed * 1000 + r;
					b->max_ingest_time = b->bucket_end + seed;
					b->late_count = seed;
					b->late_sum = -(cnt_i128)INT64_MAX * seed;
					if (u) {
						cnt_hll h;

						cnt_hll_init(&h);
						for (unsigned it = 0; it < 5 + seed * 3 + m * 20; it++) {
							char item[32];

							snprintf(item, sizeof(item), "u%u", (it * 7 + seed) % 900);
							CHECK_EQ_INT(cnt_hll_add(&h, item, strlen(item)), 0);
						}
						s->sk_off[s->n] = s->sk.len;
						CHECK_EQ_INT(cnt_hll_serialize(&h, &s->sk), 0);
						s->sk_len[s->n] = s->sk.len - s->sk_off[s->n];
						cnt_hll_release(&h);
					}
					s->n++;
				}
	for (size_t i = 0; i < s->n; i++)
		if (s->sk_len[i]) {
			s->v[i].sketch.p = (const char *)s->sk.p + s->sk_off[i];
			s->v[i].sketch.n = s->sk_len[i];
		}
}

static void free_set(set *s)
{
	free(s->v);
	free(s->sk_off);
	free(s->sk_len);
	cnt_buf_release(&s->sk);
}

/* Accumulates the sets in the order given (each set's records in reverse
 * when `reverse`), with a memory limit, into out (bucket file bytes). */
static void accumulate(set *const *sets, size_t nsets, size_t limit, int reverse, cnt_buf *out, uint64_t *runs)
{
	cnt_err err;
	cnt_accum *a = cnt_accum_new(limit, tmpdir, &err);
	FILE *f = tmpfile();
	cnt_writer *w;

	CHECK(a != NULL && f != NULL);
	if (a == NULL || f == NULL)
		return;
	for (size_t k = 0; k < nsets; k++)
		for (size_t i = 0; i < sets[k]->n; i++) {
			size_t j = reverse ? sets[k]->n - 1 - i : i;

			CHECK_EQ_INT(cnt_accum_add_bucket(a, &sets[k]->v[j], &err), 0);
		}
	w = cnt_bucket_writer_new(fileno(f), "test", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	CHECK(w != NULL);
	CHECK(w && cnt_accum_finish(a, w, &err) == 0);
	CHECK(w && cnt_writer_finish(w, &err) == 0);
	if (runs)
		*runs = cnt_accum_get_stats(a)->runs;
	cnt_writer_free(w);
	cnt_accum_free(a);
	slurp(fileno(f), out);
	fclose(f);
}

/* A bucket file's bytes, read back as a set (for merging merged files). */
static void bytes_to_set(const cnt_buf *bytes, set *s, FILE **keep)
{
	FILE *f = tmpfile();
	cnt_bucket_in in;
	cnt_bucket b;
	cnt_err err;
	size_t cap = 4096;

	memset(s, 0, sizeof(*s));
	s->v = calloc(cap, sizeof(*s->v));
	*keep = f;
	CHECK(f != NULL && s->v != NULL);
	if (f == NULL || s->v == NULL)
		return;
	CHECK_EQ_INT(fwrite(bytes->p, 1, bytes->len, f), bytes->len);
	fflush(f);
	lseek(fileno(f), 0, SEEK_SET);
	CHECK_EQ_INT(cnt_bucket_in_open(&in, fileno(f), "merged", NULL, &err), 0);
	/* the slices point into the reader's block buffer: copy the strings */
	while (cnt_bucket_in_next(&in, &b, &err) > 0 && s->n < cap) {
		cnt_bucket *c = &s->v[s->n++];
		size_t need = b.tenant_id.n + b.counter_id.n + b.member_ref.n + b.sketch.n + b.late_sketch.n;
		char *mem = malloc(need + 1), *p = mem;

		*c = b;
		memcpy(p, b.tenant_id.p, b.tenant_id.n);
		c->tenant_id.p = p;
		p += b.tenant_id.n;
		memcpy(p, b.counter_id.p, b.counter_id.n);
		c->counter_id.p = p;
		p += b.counter_id.n;
		memcpy(p, b.member_ref.p, b.member_ref.n);
		c->member_ref.p = p;
		p += b.member_ref.n;
		if (b.sketch.p) {
			memcpy(p, b.sketch.p, b.sketch.n);
			c->sketch.p = p;
			p += b.sketch.n;
		}
		if (b.late_sketch.p) {
			memcpy(p, b.late_sketch.p, b.late_sketch.n);
			c->late_sketch.p = p;
		}
	}
	cnt_bucket_in_release(&in);
}

static void free_read_set(set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free((char *)(uintptr_t)s->v[i].tenant_id.p);
	free(s->v);
}

static int same(const cnt_buf *a, const cnt_buf *b)
{
	return a->len == b->len && memcmp(a->p, b->p, a->len) == 0;
}

static void test_merge_properties(void)
{
	set A, B, C, AB, BC;
	cnt_buf ab = CNT_BUF_INIT, ba = CNT_BUF_INIT, abc1 = CNT_BUF_INIT, abc2 = CNT_BUF_INIT;
	cnt_buf abc3 = CNT_BUF_INIT, bc = CNT_BUF_INIT, spilled = CNT_BUF_INIT, rev = CNT_BUF_INIT;
	cnt_buf aa = CNT_BUF_INIT, a1 = CNT_BUF_INIT;
	FILE *k1 = NULL, *k2 = NULL;
	uint64_t runs = 0;

	make_set(&A, 1);
	make_set(&B, 2);
	make_set(&C, 3);
	{
		set *o1[] = {&A, &B}, *o2[] = {&B, &A}, *o3[] = {&B, &C}, *o4[] = {&C, &A, &B};

		accumulate(o1, 2, 0, 0, &ab, NULL);
		accumulate(o2, 2, 0, 0, &ba, NULL);
		CHECK(ab.len > 0 && same(&ab, &ba));                      /* commutative */
		accumulate(o1, 2, 0, 1, &rev, NULL);
		CHECK(same(&ab, &rev));                                   /* record order */
		accumulate(o3, 2, 0, 0, &bc, NULL);
		accumulate(o4, 3, 0, 0, &abc3, NULL);
		/* a limit of 1 byte spills at every check (each 256 records) */
		accumulate(o4, 3, 1, 0, &spilled, &runs);
		CHECK(runs >= 2);
		CHECK(same(&abc3, &spilled));                             /* spill = memory */
	}
	bytes_to_set(&ab, &AB, &k1);
	bytes_to_set(&bc, &BC, &k2);
	{
		set *o1[] = {&AB, &C}, *o2[] = {&A, &BC};

		accumulate(o1, 2, 0, 0, &abc1, NULL);
		accumulate(o2, 2, 0, 0, &abc2, NULL);
		CHECK(same(&abc1, &abc2));                                /* associative */
		CHECK(same(&abc1, &abc3));
	}
	/* idempotence of sketches: A+A has A's sketches, doubled counts and sums */
	{
		set *o1[] = {&A, &A}, *o2[] = {&A};
		set AA, A1;
		FILE *k3 = NULL, *k4 = NULL;
		int ok = 1;

		accumulate(o1, 2, 0, 0, &aa, NULL);
		accumulate(o2, 1, 0, 0, &a1, NULL);
		bytes_to_set(&aa, &AA, &k3);
		bytes_to_set(&a1, &A1, &k4);
		CHECK_EQ_INT(AA.n, A1.n);
		for (size_t i = 0; i < AA.n && i < A1.n; i++) {
			const cnt_bucket *x = &A1.v[i], *y = &AA.v[i];

			ok &= cnt_bucket_key_cmp(x, y) == 0;
			ok &= (x->sketch.p == NULL) == (y->sketch.p == NULL);
			ok &= x->sketch.n == y->sketch.n && (x->sketch.n == 0 || memcmp(x->sketch.p, y->sketch.p, x->sketch.n) == 0);
			ok &= y->count == 2 * x->count && y->sum == 2 * x->sum && y->late_sum == 2 * x->late_sum;
			ok &= y->min == x->min && y->max == x->max && y->last_event_time == x->last_event_time;
		}
		CHECK(ok);
		/* and the 128-bit sums really went past 64 bits */
		CHECK(AA.n > 0 && !cnt_i128_fits64(AA.v[0].sum));
		free_read_set(&AA);
		free_read_set(&A1);
		fclose(k3);
		fclose(k4);
	}
	free_read_set(&AB);
	free_read_set(&BC);
	if (k1)
		fclose(k1);
	if (k2)
		fclose(k2);
	free_set(&A);
	free_set(&B);
	free_set(&C);
	cnt_buf_release(&ab);
	cnt_buf_release(&ba);
	cnt_buf_release(&bc);
	cnt_buf_release(&abc1);
	cnt_buf_release(&abc2);
	cnt_buf_release(&abc3);
	cnt_buf_release(&spilled);
	cnt_buf_release(&rev);
	cnt_buf_release(&aa);
	cnt_buf_release(&a1);
}

/* Events accumulate to the same bytes in any order and with spills; late
 * events only touch the late fields. */
static void test_events(void)
{
	enum { N = 20000 };
	static char members[N][12], items[N][12];
	cnt_buf out[3] = {CNT_BUF_INIT, CNT_BUF_INIT, CNT_BUF_INIT};

	for (int pass = 0; pass < 3; pass++) {
		cnt_err err;
		cnt_accum *a = cnt_accum_new(pass == 2 ? 1 << 20 : 0, tmpdir, &err);
		FILE *f = tmpfile();
		cnt_writer *w;

		CHECK(a != NULL && f != NULL);
		if (a == NULL || f == NULL)
			return;
		for (int k = 0; k < N; k++) {
			int i = pass == 1 ? N - 1 - k : k;
			cnt_windowed wv;

			memset(&wv, 0, sizeof(wv));
			snprintf(members[i], sizeof(members[i]), "m%d", i % 10000);
			snprintf(items[i], sizeof(items[i]), "u%d", i % 37);
			wv.ev.tenant_id = S("acme");
			wv.ev.counter_id = S(i % 2 ? "uniq" : "dist");
			wv.ev.counter_version = 1;
			wv.ev.member_ref = S(members[i]);
			if (i % 2)
				wv.ev.item = S(items[i]);
			wv.ev.delta = i % 5 == 0 ? INT64_MAX : -(int64_t)i;
			wv.ev.event_time = INT64_C(1772359200000) + i;
			wv.ev.ingest_time = INT64_C(1772366400000) + i % 7;
			wv.bucket_start = INT64_C(1772359200000);
			wv.bucket_end = wv.bucket_start + 3600000;
			wv.late = i % 11 == 0;
			CHECK_EQ_INT(cnt_accum_add_event(a, &wv, &err), 0);
		}
		w = cnt_bucket_writer_new(fileno(f), "test", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
		CHECK(w && cnt_accum_finish(a, w, &err) == 0 && cnt_writer_finish(w, &err) == 0);
		if (pass == 2)
			CHECK(cnt_accum_get_stats(a)->runs >= 2);
		CHECK_EQ_INT(cnt_accum_get_stats(a)->events, N);
		CHECK_EQ_INT(cnt_accum_get_stats(a)->late_events, (N + 10) / 11);
		cnt_writer_free(w);
		cnt_accum_free(a);
		slurp(fileno(f), &out[pass]);
		fclose(f);
	}
	CHECK(out[0].len > 0 && same(&out[0], &out[1]));
	CHECK(same(&out[0], &out[2]));
	/* spot check one record: m0 of dist holds events 0 and 10000 */
	{
		FILE *f = tmpfile();
		cnt_bucket_in in;
		cnt_bucket b;
		cnt_err err;
		int found = 0;

		CHECK_EQ_INT(fwrite(out[0].p, 1, out[0].len, f), out[0].len);
		fflush(f);
		lseek(fileno(f), 0, SEEK_SET);
		CHECK_EQ_INT(cnt_bucket_in_open(&in, fileno(f), "t", NULL, &err), 0);
		while (cnt_bucket_in_next(&in, &b, &err) > 0) {
			if (b.counter_id.n == 4 && memcmp(b.counter_id.p, "dist", 4) == 0 &&
			    b.member_ref.n == 2 && memcmp(b.member_ref.p, "m0", 2) == 0) {
				/* event 0: late (0 % 11), INT64_MAX; event 10000: on time,
				 * 10000 % 5 == 0 -> INT64_MAX */
				found = 1;
				CHECK_EQ_INT(b.count, 1);
				CHECK(b.sum == INT64_MAX);
				CHECK_EQ_INT(b.late_count, 1);
				CHECK(b.late_sum == INT64_MAX);
				CHECK(b.has_min && b.min == INT64_MAX && b.max == INT64_MAX);
				CHECK(b.has_last && b.last_event_time == INT64_C(1772359200000) + 10000);
				CHECK(b.max_ingest_time == INT64_C(1772366400000) + 10000 % 7);
				CHECK(b.sketch.p == NULL);
			}
		}
		CHECK(found);
		cnt_bucket_in_release(&in);
		fclose(f);
	}
	for (int i = 0; i < 3; i++)
		cnt_buf_release(&out[i]);
}


/* cnt_accum_add_hinted gives the bytes cnt_accum_add_refs gives: two
 * tenants, two counters each, each counter at versions 1 and 2 in turn
 * (so a hint's stream is found again when the version changes, and an
 * event is never counted under the other version's stream), and counter
 * indices up to 39 (the hint map grows). */
static void test_hinted(void)
{
	enum { N = 6000 };
	static char members[N][12], items[N][12];
	static const char *const tenants[2] = {"acme", "vidco"}, *const counters[2] = {"dist", "views"};
	static cnt_windowed ev[N];
	static cnt_accum_hint hint[N];
	cnt_buf out[2] = {CNT_BUF_INIT, CNT_BUF_INIT};
	size_t records = 0, v2 = 0;

	for (int i = 0; i < N; i++) {
		int t = i % 2, c = (i / 2) % 2, version = 1 + (i / 4) % 2;

		snprintf(members[i], sizeof(members[i]), "m%d", i % 500);
		snprintf(items[i], sizeof(items[i]), "u%d", i % 29);
		memset(&ev[i], 0, sizeof(ev[i]));
		ev[i].ev.tenant_id = S(tenants[t]);
		ev[i].ev.counter_id = S(counters[c]);
		ev[i].ev.counter_version = version;
		ev[i].ev.member_ref = S(members[i]);
		if (c)
			ev[i].ev.item = S(items[i]);
		ev[i].ev.delta = 1 + i % 7;
		ev[i].ev.event_time = INT64_C(1772359200000) + i;
		ev[i].ev.ingest_time = INT64_C(1772366400000);
		ev[i].bucket_start = INT64_C(1772359200000);
		ev[i].bucket_end = ev[i].bucket_start + 3600000;
		ev[i].exact = 1;
		hint[i].counter = (uint32_t)(t * 2 + c) * 13;
		hint[i].member_hash = XXH3_64bits(members[i], strlen(members[i]));
	}
	for (int pass = 0; pass < 2; pass++) {
		cnt_err err;
		cnt_accum *a = cnt_accum_new(0, tmpdir, &err);
		FILE *f = tmpfile();
		cnt_writer *w;

		CHECK(a != NULL && f != NULL);
		if (a == NULL || f == NULL)
			return;
		for (int i = 0; i < N;) {
			const cnt_windowed *refs[CNT_ACCUM_BATCH];
			int n = 1 + i % CNT_ACCUM_BATCH;

			if (n > N - i)
				n = N - i;
			for (int j = 0; j < n; j++)
				refs[j] = &ev[i + j];
			CHECK_EQ_INT(pass ? cnt_accum_add_hinted(a, refs, hint + i, (size_t)n, &err)
					  : cnt_accum_add_refs(a, refs, (size_t)n, &err), 0);
			i += n;
		}
		w = cnt_bucket_writer_new(fileno(f), "test", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
		CHECK(w && cnt_accum_finish(a, w, &err) == 0 && cnt_writer_finish(w, &err) == 0);
		cnt_writer_free(w);
		cnt_accum_free(a);
		slurp(fileno(f), &out[pass]);
		fclose(f);
	}
	CHECK(out[0].len > 0 && same(&out[0], &out[1]));
	{
		FILE *f = tmpfile();
		cnt_bucket_in in;
		cnt_bucket b;
		cnt_err err;

		CHECK_EQ_INT(fwrite(out[1].p, 1, out[1].len, f), out[1].len);
		fflush(f);
		lseek(fileno(f), 0, SEEK_SET);
		CHECK_EQ_INT(cnt_bucket_in_open(&in, fileno(f), "t", NULL, &err), 0);
		while (cnt_bucket_in_next(&in, &b, &err) > 0) {
			records++;
			v2 += b.counter_version == 2;
		}
		cnt_bucket_in_release(&in);
		fclose(f);
	}
	/* a record for each (member, tenant, counter, version) met, tallied
	 * from the events: one bucket, no dimensions */
	{
		static unsigned char seen[N][8];
		size_t want = 0, want2 = 0;

		memset(seen, 0, sizeof(seen));
		for (int i = 0; i < N; i++) {
			int st = (i % 2) * 4 + ((i / 2) % 2) * 2 + (i / 4) % 2;

			if (!seen[i % 500][st]++) {
				want++;
				want2 += st % 2 == 1;
			}
		}
		CHECK_EQ_INT(records, want);
		CHECK_EQ_INT(v2, want2);
		CHECK(want2 > 0);
	}
	cnt_buf_release(&out[0]);
	cnt_buf_release(&out[1]);
}

/* An on-time event of acme/dist, an exact counter, for member in the
 * hour'th hourly bucket from 2026-03-01T10:00Z. */
static cnt_windowed exact_event(const char *member, int64_t delta, int hour)
{
	cnt_windowed wv;

	memset(&wv, 0, sizeof(wv));
	wv.ev.tenant_id = S("acme");
	wv.ev.counter_id = S("dist");
	wv.ev.counter_version = 1;
	wv.ev.member_ref = S(member);
	wv.ev.delta = delta;
	wv.ev.event_time = INT64_C(1772359200000);
	wv.ev.ingest_time = INT64_C(1772366400000);
	wv.bucket_start = INT64_C(1772359200000) + (int64_t)hour * 3600000;
	wv.bucket_end = wv.bucket_start + 3600000;
	wv.exact = 1;
	return wv;
}

/* Members are written in byte order, shorter first on a common prefix,
 * whatever their first 8 bytes (which write_sorted radix-sorts before it
 * compares whole members): members that share those 8 bytes, that end
 * inside them, with NUL bytes where a shorter member is padded, with
 * bytes above 0x7f, and 3,000 drawn from a 4-letter alphabet; each after
 * lead, so that with a lead the radix passes of its bytes are skipped. */
static void member_order(const char *lead)
{
	static const char *const fixed[] = {"", "a", "abcdefgh", "abcdefghi", "abcdefgha", "abcdefg",
		"abcdefg\xc3\xa9", "\xc3\xa9", "member-0001", "member-0", "member-00", "zzzzzzzzzz", "b"};
	enum { NR = 3000, NF = sizeof(fixed) / sizeof(fixed[0]) };
	static char mem[NR + 4][16];
	cnt_err err;
	cnt_accum *a = cnt_accum_new(0, tmpdir, &err);
	FILE *f = tmpfile();
	cnt_writer *w;
	cnt_bucket_in in;
	cnt_bucket b;
	char prev[32], buf[32];
	size_t prevn = 0, records = 0, wrong = 0, ln = strlen(lead);
	uint64_t x = 0x9e3779b97f4a7c15u;

	CHECK(a != NULL && f != NULL);
	if (a == NULL || f == NULL)
		return;
	for (size_t i = 0; i < NF + NR + 4; i++) {
		cnt_windowed wv = exact_event("", 1, 0);
		const char *m;
		size_t n;

		if (i < NF) {
			m = fixed[i];
			n = strlen(m);
		} else if (i < NF + 4) {
			/* "a" followed by 1 to 4 NULs: equal prefixes to "a" */
			memcpy(mem[i - NF], "a\0\0\0\0", 5);
			m = mem[i - NF];
			n = 2 + (i - NF);
		} else {
			size_t r = i - NF;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			n = 6 + x % 6;
			for (size_t j = 0; j < n; j++)
				mem[r][j] = "ab\001z"[(x >> (8 + 2 * j)) & 3];
			m = mem[r];
		}
		memcpy(buf, lead, ln);
		memcpy(buf + ln, m, n);
		wv.ev.member_ref.p = buf;
		wv.ev.member_ref.n = ln + n;
		CHECK_EQ_INT(cnt_accum_add_event(a, &wv, &err), 0);
	}
	w = cnt_bucket_writer_new(fileno(f), "test", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	CHECK(w && cnt_accum_finish(a, w, &err) == 0 && cnt_writer_finish(w, &err) == 0);
	cnt_writer_free(w);
	cnt_accum_free(a);
	lseek(fileno(f), 0, SEEK_SET);
	CHECK_EQ_INT(cnt_bucket_in_open(&in, fileno(f), "order", NULL, &err), 0);
	while (cnt_bucket_in_next(&in, &b, &err) > 0) {
		size_t n = b.member_ref.n < prevn ? b.member_ref.n : prevn;
		int d = n ? memcmp(prev, b.member_ref.p, n) : 0;

		if (records > 0 && (d > 0 || (d == 0 && prevn >= b.member_ref.n)))
			wrong++;
		CHECK(b.member_ref.n < sizeof(prev));
		if (b.member_ref.n < sizeof(prev)) {
			memcpy(prev, b.member_ref.p, b.member_ref.n);
			prevn = b.member_ref.n;
		}
		records++;
	}
	CHECK_EQ_INT(wrong, 0);
	CHECK(records > NF + 4 + 1000);
	cnt_bucket_in_release(&in);
	fclose(f);
}

static void test_member_order(void)
{
	member_order("");
	member_order("mem");
	member_order("12345678");
}

/* Many groups: the group index doubles in place nine times (lib/count/
 * accum.c, grow_groups), and every key added before a doubling must be
 * found after it.  Event k adds to key k and to two keys drawn at random
 * from 0..k, so keys of every age are looked up after every doubling; the
 * expected counts are tallied alongside.  A key lost from the index would
 * come out as a second record of it, or with too small a count. */
static void test_many_groups(void)
{
	enum { N = 200000 };
	static char members[N][16];
	static int expect[N];
	cnt_err err;
	cnt_accum *a = cnt_accum_new(0, tmpdir, &err);
	FILE *f = tmpfile();
	cnt_writer *w;
	cnt_bucket_in in;
	cnt_bucket b;
	size_t records = 0, wrong = 0;
	uint64_t x = 88172645463325252u;

	CHECK(a != NULL && f != NULL);
	if (a == NULL || f == NULL)
		return;
	for (int k = 0; k < N; k++)
		snprintf(members[k], sizeof(members[k]), "m%06d", k);
	for (int k = 0; k < N; k++)
		for (int r = 0; r < 3; r++) {
			int j = k;
			cnt_windowed wv;

			if (r) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				j = (int)(x % (uint64_t)(k + 1));
			}
			expect[j]++;
			wv = exact_event(members[j], 1, j % 3);
			CHECK_EQ_INT(cnt_accum_add_event(a, &wv, &err), 0);
		}
	w = cnt_bucket_writer_new(fileno(f), "test", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	CHECK(w && cnt_accum_finish(a, w, &err) == 0 && cnt_writer_finish(w, &err) == 0);
	cnt_writer_free(w);
	CHECK_EQ_INT(cnt_accum_get_stats(a)->events, 3 * N);
	cnt_accum_free(a);
	lseek(fileno(f), 0, SEEK_SET);
	CHECK_EQ_INT(cnt_bucket_in_open(&in, fileno(f), "many", NULL, &err), 0);
	while (cnt_bucket_in_next(&in, &b, &err) > 0) {
		char num[12] = "";
		int j;

		memcpy(num, b.member_ref.p + 1, b.member_ref.n > 1 && b.member_ref.n < 12 ? b.member_ref.n - 1 : 0);
		j = atoi(num);
		records++;
		if (j < 0 || j >= N || b.count != expect[j] ||
		    b.bucket_start != INT64_C(1772359200000) + (int64_t)(j % 3) * 3600000)
			wrong++;
	}
	CHECK_EQ_INT(records, N);
	CHECK_EQ_INT(wrong, 0);
	cnt_bucket_in_release(&in);
	fclose(f);
}

/* --memory bounds the accumulator's estimate: with the group index about
 * to double past the limit, the accumulator spills first rather than
 * after (the doubling is the estimate's largest single step).  Peaks are
 * checked against the limit for several limits, with the output the same
 * bytes as without one. */
static void test_memory_bound(void)
{
	enum { N = 300000 };
	static char members[N][16];
	size_t limits[] = {0, (size_t)3 << 20, (size_t)5 << 20, (size_t)8 << 20, (size_t)13 << 20};
	cnt_buf out[5] = {CNT_BUF_INIT, CNT_BUF_INIT, CNT_BUF_INIT, CNT_BUF_INIT, CNT_BUF_INIT};

	for (int k = 0; k < N; k++)
		snprintf(members[k], sizeof(members[k]), "m%06d", k);
	for (size_t l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
		cnt_err err;
		cnt_accum *a = cnt_accum_new(limits[l], tmpdir, &err);
		FILE *f = tmpfile();
		cnt_writer *w;

		CHECK(a != NULL && f != NULL);
		if (a == NULL || f == NULL)
			return;
		for (int k = 0; k < N; k++) {
			cnt_windowed wv = exact_event(members[(int)((int64_t)k * 7919 % N)], k, 0);

			CHECK_EQ_INT(cnt_accum_add_event(a, &wv, &err), 0);
		}
		w = cnt_bucket_writer_new(fileno(f), "test", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
		CHECK(w && cnt_accum_finish(a, w, &err) == 0 && cnt_writer_finish(w, &err) == 0);
		cnt_writer_free(w);
		if (limits[l]) {
			CHECK(cnt_accum_get_stats(a)->runs >= 2);
			if (cnt_accum_get_stats(a)->peak_bytes > limits[l])
				fprintf(stderr, "limit %zu: peak %zu\n", limits[l], (size_t)cnt_accum_get_stats(a)->peak_bytes);
			/* over by at most one check's worth of groups */
			CHECK(cnt_accum_get_stats(a)->peak_bytes <= limits[l] + 1024 * 200);
		}
		cnt_accum_free(a);
		slurp(fileno(f), &out[l]);
		fclose(f);
		CHECK(out[0].len > 0 && same(&out[0], &out[l]));
	}
	for (size_t l = 0; l < 5; l++)
		cnt_buf_release(&out[l]);
}

/* ---- small sketches kept inline (accum.c, agg.ski) -------------------- */

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

/* Two items whose hashes share their 25-bit sparse key, with its low
 * 25 - 18 bits zero, and give different entries at p = 18 (so that the
 * larger one must be kept), found among "c<i>" (deterministic). */
static int same_key_items(char x[16], char y[16])
{
	enum { N = 400000 };
	uint64_t *v = malloc(N * sizeof(*v));
	int found = 0;

	if (v == NULL)
		return 0;
	for (uint32_t i = 0; i < N; i++) {
		char s[16];
		uint64_t h;

		snprintf(s, sizeof(s), "c%u", i);
		h = cnt_hll_hash(s, strlen(s));
		/* key << 39 | i: sorted by key */
		v[i] = (h >> 39) << 39 | i;
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	for (uint32_t i = 1; i < N && !found; i++) {
		uint64_t key = v[i] >> 39;
		char s[16], t[16];

		if (key != v[i - 1] >> 39 || (key & 0x7f) != 0)
			continue;
		snprintf(s, sizeof(s), "c%u", (uint32_t)(v[i - 1] & ((UINT64_C(1) << 39) - 1)));
		snprintf(t, sizeof(t), "c%u", (uint32_t)(v[i] & ((UINT64_C(1) << 39) - 1)));
		if (cnt_hll_entry(cnt_hll_hash(s, strlen(s)), 18) != cnt_hll_entry(cnt_hll_hash(t, strlen(t)), 18)) {
			memcpy(x, s, 16);
			memcpy(y, t, 16);
			found = 1;
		}
	}
	free(v);
	return found;
}

/*
 * Most groups' sketches hold one or two distinct items, and the
 * accumulator keeps those inline (agg.ski), making a sketch of the heap
 * for a third item, a sketch merged from a bucket record, or another
 * precision.  Whatever the path, every record's sketch must be the bytes
 * of a cnt_hll fed the same items: groups of 1, 2 (repeated, of one key
 * with different entries, in both orders) and 3 or more items, a bucket
 * record merged into an inline group and into a new one, at precisions
 * 4, 14 and 18, counted in one accumulator, spilled, and in two halves
 * absorbed into one.  And a group of at most two items takes no memory
 * beyond its group (the accumulator's estimate, peak_bytes).
 */
static void test_small_sketches(void)
{
	static const char *const sets[][6] = {
		{"A"}, {"A", "A"}, {"A", "B"}, {"A", "B", "A", "B"}, {"A", "B", "C"},
		{"X", "Y"}, {"Y", "X"}, {"X", "Y", "D"}, {"A", "X", "Y"}, {"X", "Y", "X", "A", "B", "C"},
		{"A", "B"}, {NULL},
	};
	enum { G = sizeof(sets) / sizeof(sets[0]) };
	const int merged_into[] = {2, 11};    /* members given a bucket record's sketch {M, A} */
	char cx[16], cy[16];
	const int precs[] = {4, 14, 18};

	CHECK(same_key_items(cx, cy));
	for (size_t pi = 0; pi < sizeof(precs) / sizeof(precs[0]); pi++) {
		int p = precs[pi];
		cnt_hll want[G];
		cnt_buf bsk = CNT_BUF_INIT;
		cnt_hll mk;

		/* the bucket record's sketch, and what every member should hold */
		cnt_hll_init_p(&mk, p);
		cnt_hll_add(&mk, "M", 1);
		cnt_hll_add(&mk, "A", 1);
		CHECK_EQ_INT(cnt_hll_serialize(&mk, &bsk), 0);
		for (int g = 0; g < G; g++) {
			cnt_hll_init_p(&want[g], p);
			for (int k = 0; k < 6 && sets[g][k]; k++) {
				const char *it = strcmp(sets[g][k], "X") == 0 ? cx : strcmp(sets[g][k], "Y") == 0 ? cy : sets[g][k];

				cnt_hll_add(&want[g], it, strlen(it));
			}
			for (size_t m = 0; m < sizeof(merged_into) / sizeof(merged_into[0]); m++)
				if (merged_into[m] == g)
					cnt_hll_merge(&want[g], &mk);
		}
		for (int mode = 0; mode < 3; mode++) {   /* one, spilled, halves */
			cnt_err err;
			cnt_accum *acc[2] = {cnt_accum_new(mode == 1 ? 1 : 0, tmpdir, &err), cnt_accum_new(0, tmpdir, &err)};
			FILE *f = tmpfile();
			cnt_writer *w;
			cnt_bucket_in in;
			cnt_bucket b;
			int seen = 0, ok = 1;

			CHECK(acc[0] && acc[1] && f);
			if (!acc[0] || !acc[1] || !f)
				return;
			for (int g = 0; g < G; g++) {
				char member[16];
				cnt_accum *a = mode == 2 ? acc[g % 2] : acc[0];

				snprintf(member, sizeof(member), "g%02d", g);
				for (int k = 0; k < 6 && sets[g][k]; k++) {
					const char *it = strcmp(sets[g][k], "X") == 0 ? cx : strcmp(sets[g][k], "Y") == 0 ? cy : sets[g][k];
					cnt_windowed wv = exact_event(member, 1, 0);

					wv.exact = 0;
					wv.hll_precision = p;
					wv.ev.item.p = it;
					wv.ev.item.n = strlen(it);
					CHECK_EQ_INT(cnt_accum_add_event(a, &wv, &err), 0);
				}
				for (size_t m = 0; m < sizeof(merged_into) / sizeof(merged_into[0]); m++)
					if (merged_into[m] == g) {
						cnt_bucket r = base();

						r.member_ref.p = member;
						r.member_ref.n = strlen(member);
						r.sketch.p = (const char *)bsk.p;
						r.sketch.n = bsk.len;
						CHECK_EQ_INT(cnt_accum_add_bucket(a, &r, &err), 0);
					}
			}
			if (mode == 2)
				CHECK_EQ_INT(cnt_accum_absorb(acc[0], acc[1], &err), 0);
			w = cnt_bucket_writer_new(fileno(f), "test", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
			CHECK(w && cnt_accum_finish(acc[0], w, &err) == 0 && cnt_writer_finish(w, &err) == 0);
			if (mode == 1)
				CHECK(cnt_accum_get_stats(acc[0])->runs >= 2);
			cnt_writer_free(w);
			fflush(f);
			lseek(fileno(f), 0, SEEK_SET);
			CHECK_EQ_INT(cnt_bucket_in_open(&in, fileno(f), "t", NULL, &err), 0);
			while (cnt_bucket_in_next(&in, &b, &err) > 0) {
				/* "gNN" */
				int g = b.member_ref.n == 3 ? (b.member_ref.p[1] - '0') * 10 + (b.member_ref.p[2] - '0') : -1;
				cnt_buf x = CNT_BUF_INIT;

				ok &= g == seen++;
				ok &= g >= 0 && g < G && cnt_hll_serialize(&want[g], &x) == 0 && b.sketch.p != NULL && b.sketch.n == x.len &&
					memcmp(b.sketch.p, x.p, x.len) == 0;
				if (!ok)
					fprintf(stderr, "precision %d, mode %d: member %d's sketch differs\n", p, mode, g);
				cnt_buf_release(&x);
			}
			CHECK(ok);
			CHECK_EQ_INT(seen, G);
			cnt_bucket_in_release(&in);
			fclose(f);
			cnt_accum_free(acc[0]);
			cnt_accum_free(acc[1]);
		}
		for (int g = 0; g < G; g++)
			cnt_hll_release(&want[g]);
		cnt_hll_release(&mk);
		cnt_buf_release(&bsk);
	}
}

/* The accumulator's memory estimate after three events in each of n
 * groups of a counter with sketches, the first `items` of them with an
 * item (distinct within the group). */
static size_t peak_with_items(int n, int items)
{
	cnt_err err;
	cnt_accum *a = cnt_accum_new(0, tmpdir, &err);
	size_t peak;

	if (a == NULL)
		return 0;
	for (int g = 0; g < n; g++) {
		char member[16], item[16];

		snprintf(member, sizeof(member), "m%d", g);
		for (int k = 0; k < 3; k++) {   /* three events, items of the first `items` */
			cnt_windowed wv = exact_event(member, 1, 0);

			snprintf(item, sizeof(item), "i%d", k);
			wv.exact = 0;
			if (k < items) {
				wv.ev.item.p = item;
				wv.ev.item.n = strlen(item);
			}
			CHECK_EQ_INT(cnt_accum_add_event(a, &wv, &err), 0);
		}
	}
	peak = cnt_accum_get_stats(a)->peak_bytes;
	cnt_accum_free(a);
	return peak;
}

/* A group whose sketch holds one or two items takes no heap sketch: the
 * estimate is that of groups without items; a third item makes one. */
static void test_small_sketch_memory(void)
{
	size_t none = peak_with_items(3000, 0), two = peak_with_items(3000, 2), three = peak_with_items(3000, 3);

	CHECK(none > 0);
	CHECK_EQ_INT(two, none);
	CHECK(three >= none + 3000 * sizeof(cnt_hll));
}

/* ---- exact counters and compensations ---------------------------------- */

/* One windowed event of utc/dist m1 in the 10:00 bucket; comp: a
 * compensation (its delta negated, its original's times). */
static cnt_windowed wev(int64_t delta, int64_t et, int64_t it, int late, int comp, int exact)
{
	cnt_windowed w;

	memset(&w, 0, sizeof(w));
	w.ev.tenant_id = S("utc");
	w.ev.counter_id = S("dist");
	w.ev.counter_version = 1;
	w.ev.member_ref = S("m1");
	w.ev.item = S("an-item");
	w.ev.delta = comp ? -delta : delta;
	w.ev.event_time = et;
	w.ev.ingest_time = it;
	if (comp)
		w.ev.retracts = S("00000000000000000000000000000001");
	w.bucket_start = INT64_C(1772359200000);
	w.bucket_end = w.bucket_start + 3600000;
	w.late = late;
	w.exact = exact;
	return w;
}

typedef struct stale_seen {
	int n, which;
} stale_seen;

static void on_stale(void *ctx, const cnt_bucket *b, int which)
{
	stale_seen *s = ctx;

	(void)b;
	s->n++;
	s->which |= which;
}

/* Accumulates events ev[0..n) and bucket files in[0..nin) (in that order,
 * or reversed) with a memory limit into out; the stale records seen. */
static uint64_t acc_mixed(const cnt_windowed *ev, size_t n, const cnt_buf *in, size_t nin, int reverse,
	size_t limit, cnt_buf *out, stale_seen *seen)
{
	cnt_err err;
	cnt_accum *a = cnt_accum_new(limit, tmpdir, &err);
	FILE *f = tmpfile();
	cnt_writer *w;
	uint64_t stale;

	CHECK(a != NULL && f != NULL);
	if (seen)
		cnt_accum_on_stale(a, on_stale, seen);
	for (size_t k = 0; k < n; k++)
		CHECK_EQ_INT(cnt_accum_add_event(a, &ev[reverse ? n - 1 - k : k], &err), 0);
	for (size_t k = 0; k < nin; k++) {
		const cnt_buf *src = &in[reverse ? nin - 1 - k : k];
		FILE *g = tmpfile();
		cnt_bucket_in bin;
		cnt_bucket b;

		CHECK_EQ_INT(fwrite(src->p, 1, src->len, g), src->len);
		fflush(g);
		lseek(fileno(g), 0, SEEK_SET);
		CHECK_EQ_INT(cnt_bucket_in_open(&bin, fileno(g), "in", NULL, &err), 0);
		while (cnt_bucket_in_next(&bin, &b, &err) > 0)
			CHECK_EQ_INT(cnt_accum_add_bucket(a, &b, &err), 0);
		cnt_bucket_in_release(&bin);
		fclose(g);
	}
	w = cnt_bucket_writer_new(fileno(f), "test", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	CHECK(w && cnt_accum_finish(a, w, &err) == 0 && cnt_writer_finish(w, &err) == 0);
	CHECK_EQ_INT(cnt_accum_check_balance(a, &err), 0);
	stale = cnt_accum_get_stats(a)->stale;
	cnt_writer_free(w);
	cnt_accum_free(a);
	out->len = 0;
	slurp(fileno(f), out);
	fclose(f);
	return stale;
}

/* The one record of a bucket file's bytes (its strings not kept). */
static int one_record(const cnt_buf *bytes, cnt_bucket *b)
{
	FILE *f = tmpfile();
	cnt_bucket_in in;
	cnt_err err;
	int n = 0;
	cnt_bucket x;

	CHECK_EQ_INT(fwrite(bytes->p, 1, bytes->len, f), bytes->len);
	fflush(f);
	lseek(fileno(f), 0, SEEK_SET);
	CHECK_EQ_INT(cnt_bucket_in_open(&in, fileno(f), "t", NULL, &err), 0);
	while (cnt_bucket_in_next(&in, &x, &err) > 0) {
		x.tenant_id.p = x.counter_id.p = x.member_ref.p = NULL;
		x.sketch.p = x.late_sketch.p = NULL;
		*b = x;
		n++;
	}
	cnt_bucket_in_release(&in);
	fclose(f);
	return n;
}

static void test_compensations(void)
{
	const int64_t T = INT64_C(1772359200000), I = T + 4000000, IL = T + 9000000;
	/* e0 10:00, e1 10:01 and e2 10:01 ingested at I, e3 late at IL */
	cnt_windowed e[4] = {wev(10, T, I, 0, 0, 1), wev(3, T + 60000, I, 0, 0, 1),
		wev(5, T + 60000, I, 0, 0, 1), wev(4, T + 30000, IL, 1, 0, 1)};
	cnt_windowed c[4];
	cnt_buf base = CNT_BUF_INIT, cb = CNT_BUF_INIT, m1 = CNT_BUF_INIT, m2 = CNT_BUF_INIT, ref = CNT_BUF_INIT;
	cnt_buf two[2];
	cnt_bucket b;
	stale_seen seen = {0, 0};

	for (int i = 0; i < 4; i++)
		c[i] = wev(e[i].ev.delta, e[i].ev.event_time, e[i].ev.ingest_time, e[i].late, 1, 1);
	/* an exact counter keeps no min, max or sketch; the latest times
	 * keep their multiplicity */
	acc_mixed(e, 4, NULL, 0, 0, 0, &base, NULL);
	CHECK_EQ_INT(one_record(&base, &b), 1);
	CHECK(!b.has_min && !b.has_max && b.sketch.n == 0 && b.late_sketch.n == 0);
	CHECK(b.count == 3 && b.sum == 18 && b.late_count == 1 && b.late_sum == 4);
	CHECK(b.has_last && b.last_event_time == T + 60000 && b.last_count == 2);
	CHECK(b.max_ingest_time == IL && b.ingest_count == 1);
	/* the same events, not exact: min, max and sketches as before */
	{
		cnt_windowed x[4];
		cnt_buf nx = CNT_BUF_INIT;

		for (int i = 0; i < 4; i++) {
			x[i] = e[i];
			x[i].exact = 0;
		}
		acc_mixed(x, 4, NULL, 0, 0, 0, &nx, NULL);
		CHECK_EQ_INT(one_record(&nx, &b), 1);
		CHECK(b.has_min && b.min == 3 && b.has_max && b.max == 10 && b.sketch.n > 0 && b.late_sketch.n > 0);
		cnt_buf_release(&nx);
	}
	/* retract e1 (one of two at the latest event time) and e0: provable,
	 * byte for byte the build of e2, e3; in any order, spilled or not */
	acc_mixed(c, 2, NULL, 0, 0, 0, &cb, NULL);
	CHECK_EQ_INT(one_record(&cb, &b), 1);
	CHECK(b.count == -2 && b.sum == -13 && b.last_count == -1 && b.ingest_count == -2);
	acc_mixed(&e[2], 2, NULL, 0, 0, 0, &ref, NULL);
	two[0] = base;
	two[1] = cb;
	for (int r = 0; r < 2; r++)
		for (size_t lim = 0; lim < 2; lim++) {
			seen.n = 0;
			CHECK(acc_mixed(NULL, 0, two, 2, r, lim, &m1, &seen) == 0 && seen.n == 0);
			CHECK(same(&m1, &ref));
		}
	/* events and compensations in one run, compensations first */
	{
		cnt_windowed all[6] = {c[0], c[1], e[0], e[1], e[2], e[3]};

		CHECK(acc_mixed(all, 6, NULL, 0, 0, 1, &m2, NULL) == 0);
		CHECK(same(&m2, &ref));
	}
	/* retract e1 and e2, both at the latest event time: not known, stale */
	acc_mixed(&c[1], 2, NULL, 0, 0, 0, &cb, NULL);
	two[1] = cb;
	seen.n = seen.which = 0;
	CHECK(acc_mixed(NULL, 0, two, 2, 0, 0, &m1, &seen) == 1);
	CHECK(seen.n == 1 && seen.which == 1);
	CHECK_EQ_INT(one_record(&m1, &b), 1);
	CHECK(b.count == 1 && b.last_count == 0 && cnt_bucket_stale(&b) == 1);
	/* retract e3, the only event at the latest ingest time: stale too */
	acc_mixed(&c[3], 1, NULL, 0, 0, 0, &cb, NULL);
	two[1] = cb;
	CHECK(acc_mixed(NULL, 0, two, 2, 0, 0, &m1, NULL) == 1);
	CHECK_EQ_INT(one_record(&m1, &b), 1);
	CHECK(cnt_bucket_stale(&b) == 2 && b.late_count == 0);
	/* every on-time event retracted: no last_event_time, as a build of
	 * the late event alone */
	acc_mixed(c, 3, NULL, 0, 0, 0, &cb, NULL);
	two[1] = cb;
	CHECK(acc_mixed(NULL, 0, two, 2, 1, 0, &m1, NULL) == 0);
	acc_mixed(&e[3], 1, NULL, 0, 0, 0, &ref, NULL);
	CHECK(same(&m1, &ref));
	CHECK_EQ_INT(one_record(&m1, &b), 1);
	CHECK(!b.has_last && b.last_count == 0 && b.count == 0);
	/* everything retracted: no record */
	acc_mixed(c, 4, NULL, 0, 0, 0, &cb, NULL);
	two[1] = cb;
	acc_mixed(NULL, 0, two, 2, 0, 0, &m1, NULL);
	CHECK_EQ_INT(one_record(&m1, &b), 0);
	cnt_buf_release(&base);
	cnt_buf_release(&cb);
	cnt_buf_release(&m1);
	cnt_buf_release(&m2);
	cnt_buf_release(&ref);
}


/* ---- breakdown records (dimensions) ------------------------------------ */

/* Events with dimensions country and device, in forward, reverse and
 * spilled order, give the same bytes; a breakdown record counts the
 * events of its value; statistics count each event once; a compensation
 * takes its event out of its breakdown records too. */
static void test_dimensions(void)
{
	enum { N = 30000 };
	static char members[N][16], items[N][16], cvals[N][8];
	static const char *const dvals[] = {"tv", "phone", "web"};
	cnt_buf out[3] = {CNT_BUF_INIT, CNT_BUF_INIT, CNT_BUF_INIT};

	for (int pass = 0; pass < 3; pass++) {
		cnt_err err;
		cnt_accum *a = cnt_accum_new(pass == 2 ? 1 << 20 : 0, tmpdir, &err);
		FILE *f = tmpfile();
		cnt_writer *w;

		CHECK(a != NULL && f != NULL);
		if (a == NULL || f == NULL)
			return;
		for (int k = 0; k < N; k++) {
			int i = pass == 1 ? N - 1 - k : k;
			cnt_windowed wv;
			cnt_slice keys[2], vals[2];

			memset(&wv, 0, sizeof(wv));
			snprintf(members[i], sizeof(members[i]), "m%d", i % 3000);
			snprintf(items[i], sizeof(items[i]), "u%d", i % 37);
			snprintf(cvals[i], sizeof(cvals[i]), "C%d", i % 5);
			wv.ev.tenant_id = S("tube");
			wv.ev.counter_id = S("views");
			wv.ev.counter_version = 1;
			wv.ev.member_ref = S(members[i]);
			wv.ev.item = S(items[i]);
			wv.ev.delta = 1;
			wv.ev.event_time = INT64_C(1772359200000) + i;
			wv.ev.ingest_time = INT64_C(1772366400000) + i % 7;
			keys[0] = S("device");
			vals[0] = S(dvals[i % 3]);
			keys[1] = S("country");
			vals[1] = S(cvals[i]);
			wv.ev.attr_keys = keys;
			wv.ev.attr_vals = vals;
			wv.ev.nattrs = i % 4 == 0 ? 1 : 2;   /* every 4th: no country */
			wv.ndims = 2;
			wv.dims[0] = S("country");
			wv.dims[1] = S("device");
			cnt_windowed_dim_values(&wv);
			wv.bucket_start = INT64_C(1772359200000);
			wv.bucket_end = wv.bucket_start + 3600000;
			wv.late = i % 11 == 0;
			CHECK_EQ_INT(cnt_accum_add_event(a, &wv, &err), 0);
		}
		w = cnt_bucket_writer_new(fileno(f), "test", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
		CHECK(w && cnt_accum_finish(a, w, &err) == 0 && cnt_writer_finish(w, &err) == 0);
		if (pass == 2)
			CHECK(cnt_accum_get_stats(a)->runs >= 2);
		CHECK_EQ_INT(cnt_accum_get_stats(a)->events, N);
		CHECK_EQ_INT(cnt_accum_get_stats(a)->late_events, (N + 10) / 11);
		CHECK_EQ_INT(cnt_accum_get_stats(a)->events_out, N);
		CHECK_EQ_INT(cnt_accum_check_balance(a, &err), 0);
		/* a member's events share their attrs (i % 3000 fixes i % 3,
		 * i % 4, i % 5): a total, a country and a device record each */
		CHECK_EQ_INT(cnt_accum_get_stats(a)->groups_out, 3000 * 3);
		CHECK_EQ_INT(cnt_accum_get_stats(a)->dim_records, 3000 * 2);
		cnt_writer_free(w);
		cnt_accum_free(a);
		slurp(fileno(f), &out[pass]);
		fclose(f);
	}
	CHECK(out[0].len > 0 && same(&out[0], &out[1]));
	CHECK(same(&out[0], &out[2]));
	/* m0: events 0, 3000, 6000, ... 27000 (10); the order of its records
	 * and what they count */
	{
		FILE *f = tmpfile();
		cnt_bucket_in in;
		cnt_bucket b;
		cnt_err err;
		int k = 0;
		int64_t total = 0, none = 0;
		cnt_bucket prev;

		CHECK_EQ_INT(fwrite(out[0].p, 1, out[0].len, f), out[0].len);
		fflush(f);
		lseek(fileno(f), 0, SEEK_SET);
		CHECK_EQ_INT(cnt_bucket_in_open(&in, fileno(f), "t", NULL, &err), 0);
		while (cnt_bucket_in_next(&in, &b, &err) > 0) {
			if (!(b.member_ref.n == 2 && memcmp(b.member_ref.p, "m0", 2) == 0))
				continue;
			if (k++ == 0)
				CHECK(cnt_bucket_is_total(&b));   /* the total first */
			else
				CHECK(cnt_bucket_key_cmp(&prev, &b) < 0);
			prev = b;
			if (cnt_bucket_is_total(&b))
				total += b.count + b.late_count;
			/* m0: 0 % 4 == 0, so no country */
			if (b.dim_value.n == 6 && memcmp(b.dim_value.p, "(none)", 6) == 0)
				none += b.count + b.late_count;
		}
		cnt_bucket_in_release(&in);
		CHECK_EQ_INT(k, 3);
		CHECK_EQ_INT(total, 10);
		CHECK_EQ_INT(none, 10);
		fclose(f);
	}
	for (int i = 0; i < 3; i++)
		cnt_buf_release(&out[i]);
}

int main(void)
{
	const char *t = getenv("TMPDIR");

	if (t && *t)
		tmpdir = t;
	RUN(test_round_trip);
	RUN(test_sum_encoding);
	RUN(test_key_order);
	RUN(test_merge);
	RUN(test_to_json);
	RUN(test_merge_properties);
	RUN(test_events);
	RUN(test_hinted);
	RUN(test_many_groups);
	RUN(test_member_order);
	RUN(test_memory_bound);
	RUN(test_small_sketches);
	RUN(test_small_sketch_memory);
	RUN(test_compensations);
	RUN(test_dimensions);
	return unit_report("test_accum");
}
