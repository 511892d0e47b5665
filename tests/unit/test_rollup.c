/*
 * test_rollup.c - local-day roll-ups (lib/count/rollup.h).
 *
 * - a day record is the union of its hours: sums and counts added, min
 *   and max, the latest times with their multiplicities (ties add), late
 *   columns, one record per shard in shard order, members apart;
 * - DST: the Berlin spring-forward day is 23 hours long;
 * - an hour not within one local day and an unknown zone are errors;
 * - the day container is marked cnt.rollup=day and follows the hourly one
 *   on the same descriptor; hourly readers skip it, day readers skip hours;
 * - cnt_rollup_seek_days finds the day container by the framing alone,
 *   says 0 without one (and for a pipe), and fails on corrupt framing;
 * - cnt_rollup_kind refuses an unknown roll-up kind;
 * - a day record's sketches are the unions of its hours' sketches, sparse
 *   and dense, late ones too, a precision of their own kept;
 * - 600,000 day records (about 30 MB kept, their ends 4.8 MB: memory that
 *   moves from the heap to a mapping and is then remapped) come back in
 *   order, each with its own values;
 * - memory lent to a builder (any contents) holds its records, and
 *   records that outgrow it move: the file's bytes are the same as
 *   without it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "count/hll.h"
#include "count/rollup.h"
#include "unit.h"

static cnt_tz *berlin;

static const cnt_tz *zone(void *ctx, cnt_slice t, cnt_err *err)
{
	(void)ctx;
	if (t.n == 3 && memcmp(t.p, "ber", 3) == 0)
		return berlin;
	cnt_err_set(err, "no zone for '%.*s'", (int)t.n, t.p);
	return NULL;
}

static cnt_slice S(const char *s)
{
	cnt_slice x = {s, strlen(s)};

	return x;
}

#define H INT64_C(3600000)
/* 2026-03-29 00:00 CET = 2026-03-28T23:00Z; the day ends 2026-03-29T22:00Z */
#define DAY0 INT64_C(1774738800000)

static cnt_bucket hour(const char *member, int64_t start, int32_t shard, int64_t count, int64_t sum)
{
	cnt_bucket b;

	memset(&b, 0, sizeof(b));
	b.tenant_id = S("ber");
	b.counter_id = S("pts");
	b.counter_version = 1;
	b.member_ref = S(member);
	b.dim = S("");
	b.dim_value = S("");
	b.bucket_start = start;
	b.bucket_end = start + H;
	b.shard = shard;
	b.count = count;
	b.sum = sum;
	b.has_min = b.has_max = 1;
	b.min = sum / (count ? count : 1);
	b.max = sum;
	b.has_last = 1;
	b.last_event_time = start + 10;
	b.last_count = 1;
	b.max_ingest_time = start + 100;
	b.ingest_count = 1;
	return b;
}

/* Writes an hourly container of hs (n) and, through r, the day container
 * to a temporary file; returns it, positioned at its start. */
static FILE *write_file(cnt_rollup *r, const cnt_bucket *hs, size_t n)
{
	FILE *f = tmpfile();
	cnt_err err;
	cnt_writer *w = cnt_bucket_writer_new(fileno(f), "t", CNT_CODEC_ZSTD, CNT_LEVEL_DEFAULT, &err);

	CHECK(w != NULL);
	for (size_t i = 0; i < n; i++) {
		CHECK(cnt_bucket_encode(&hs[i], cnt_writer_buf(w)) == 0);
		CHECK(cnt_writer_commit(w, &err) == 0);
		CHECK(cnt_rollup_add(r, &hs[i], NULL, NULL, &err) == 0);
	}
	CHECK(cnt_rollup_write(r, w, &err) == 0);
	CHECK(cnt_writer_finish(w, &err) == 0); /* again: does nothing */
	cnt_writer_free(w);
	fflush(f);
	lseek(fileno(f), 0, SEEK_SET);
	return f;
}

/* The whole of f (from its start), malloc'd; its size in *n. */
static char *file_bytes(FILE *f, size_t *n)
{
	long end;
	char *all;

	CHECK(fseek(f, 0, SEEK_END) == 0);
	end = ftell(f);
	CHECK(end >= 0);
	all = malloc(end > 0 ? (size_t)end : 1);
	CHECK(all != NULL);
	CHECK(fseek(f, 0, SEEK_SET) == 0);
	CHECK(fread(all, 1, (size_t)end, f) == (size_t)end);
	*n = (size_t)end;
	return all;
}

static void test_union(void)
{
	cnt_bucket hs[6];
	cnt_rollup *r = cnt_rollup_new(zone, NULL);
	cnt_bucket_in in;
	cnt_bucket b;
	cnt_err err;
	FILE *f;
	int n = 0;

	hs[0] = hour("a", DAY0, 0, 2, 10);
	hs[1] = hour("a", DAY0, 1, 1, 5);
	hs[2] = hour("a", DAY0 + 5 * H, 0, 3, 30);
	hs[2].min = -4;
	hs[2].last_event_time = hs[0].last_event_time + 5 * H; /* the latest */
	hs[3] = hour("a", DAY0 + 22 * H, 0, 1, 7);            /* the day's last hour (23 h day) */
	hs[3].last_event_time = hs[2].last_event_time;        /* a tie: multiplicities add */
	hs[3].late_count = 2;
	hs[3].late_sum = 9;
	hs[4] = hour("a", DAY0 + 23 * H, 0, 1, 1);            /* the next day */
	hs[5] = hour("b", DAY0, 0, 1, 1);
	CHECK(r != NULL);
	f = write_file(r, hs, 6);
	CHECK_EQ_INT(cnt_rollup_records(r), 4);
	/* hourly readers see the hours only */
	CHECK(cnt_bucket_in_open(&in, fileno(f), "t", NULL, &err) == 0);
	while (cnt_bucket_in_next(&in, &b, &err) == 1)
		n++;
	CHECK_EQ_INT(n, 6);
	CHECK(in.saw_days == 1);
	cnt_bucket_in_release(&in);
	/* day readers see the days only */
	lseek(fileno(f), 0, SEEK_SET);
	CHECK(cnt_bucket_in_open(&in, fileno(f), "t", NULL, &err) == 0);
	in.days = 1;
	CHECK(cnt_bucket_in_next(&in, &b, &err) == 1);   /* a, day 0, shard 0 */
	CHECK(b.member_ref.n == 1 && b.member_ref.p[0] == 'a');
	CHECK_EQ_INT(b.bucket_start, DAY0);
	CHECK_EQ_INT(b.bucket_end - b.bucket_start, 23 * H);
	CHECK_EQ_INT(b.shard, 0);
	CHECK_EQ_INT(b.count, 6);
	CHECK(b.sum == 47);
	CHECK_EQ_INT(b.min, -4);
	CHECK_EQ_INT(b.max, 30);
	CHECK_EQ_INT(b.last_event_time, hs[2].last_event_time);
	CHECK_EQ_INT(b.last_count, 2);
	CHECK_EQ_INT(b.max_ingest_time, hs[3].max_ingest_time);
	CHECK_EQ_INT(b.ingest_count, 1);
	CHECK_EQ_INT(b.late_count, 2);
	CHECK(b.late_sum == 9);
	CHECK(cnt_bucket_in_next(&in, &b, &err) == 1);   /* a, day 0, shard 1 */
	CHECK_EQ_INT(b.shard, 1);
	CHECK_EQ_INT(b.count, 1);
	CHECK(cnt_bucket_in_next(&in, &b, &err) == 1);   /* a, day 1 */
	CHECK_EQ_INT(b.bucket_start, DAY0 + 23 * H);
	CHECK_EQ_INT(b.bucket_end - b.bucket_start, 24 * H);
	CHECK(cnt_bucket_in_next(&in, &b, &err) == 1);   /* b */
	CHECK(b.member_ref.p[0] == 'b');
	CHECK(cnt_bucket_in_next(&in, &b, &err) == 0);
	cnt_bucket_in_release(&in);
	/* the seek finds the day container */
	CHECK(cnt_rollup_seek_days(fileno(f), "t", &err) == 1);
	CHECK(cnt_bucket_in_open(&in, fileno(f), "t", NULL, &err) == 0);
	in.days = 1;
	n = 0;
	while (cnt_bucket_in_next(&in, &b, &err) == 1)
		n++;
	CHECK_EQ_INT(n, 4);
	cnt_bucket_in_release(&in);
	fclose(f);
	cnt_rollup_free(r);
}

/* Whether slice x holds the serialization of h (NULL: x is absent). */
static int holds(cnt_slice x, const cnt_hll *h)
{
	cnt_buf b = CNT_BUF_INIT;
	int same;

	if (h == NULL)
		return x.p == NULL;
	same = cnt_hll_serialize(h, &b) == 0 && x.p && x.n == b.len && memcmp(x.p, b.p, b.len) == 0;
	cnt_buf_release(&b);
	return same;
}

static void test_sketches(void)
{
	cnt_bucket hs[4], b;
	cnt_hll h[4], lh, *a_union = NULL;
	cnt_rollup *r = cnt_rollup_new(zone, NULL);
	cnt_bucket_in in;
	cnt_err err;
	FILE *f = tmpfile();
	cnt_writer *w = cnt_bucket_writer_new(fileno(f), "t", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);

	hs[0] = hour("a", DAY0, 0, 2, 10);
	hs[1] = hour("a", DAY0 + H, 0, 2, 10);
	hs[2] = hour("a", DAY0 + 2 * H, 0, 2, 10);
	hs[3] = hour("b", DAY0, 0, 2, 10);
	for (int i = 0; i < 4; i++) {
		/* 0: sparse; 1: dense (more items than sparse holds); 2: none;
		 * 3: another member's, at precision 12 */
		cnt_hll_init_p(&h[i], i == 3 ? 12 : 14);
		for (int k = 0; i != 2 && k < (i == 1 ? 20000 : 50 + i); k++) {
			char item[16];

			snprintf(item, sizeof(item), "i%d", k * (i + 1));
			CHECK(cnt_hll_add(&h[i], item, strlen(item)) == 0);
		}
	}
	cnt_hll_init_p(&lh, 14);
	CHECK(cnt_hll_add(&lh, "late", 4) == 0);
	CHECK(r && w);
	for (int i = 0; i < 4; i++) {
		CHECK(cnt_bucket_encode(&hs[i], cnt_writer_buf(w)) == 0 && cnt_writer_commit(w, &err) == 0);
		CHECK(cnt_rollup_add(r, &hs[i], i == 2 ? NULL : &h[i], i == 2 ? &lh : NULL, &err) == 0);
	}
	CHECK(cnt_rollup_write(r, w, &err) == 0);
	/* the expected unions, merged here */
	CHECK(cnt_hll_merge_into(&a_union, &h[0]) == 0 && cnt_hll_merge_into(&a_union, &h[1]) == 0);
	lseek(fileno(f), 0, SEEK_SET);
	CHECK(cnt_bucket_in_open(&in, fileno(f), "t", NULL, &err) == 0);
	in.days = 1;
	CHECK(cnt_bucket_in_next(&in, &b, &err) == 1);   /* a: a sparse and a dense hour, and a late one */
	CHECK(b.member_ref.n == 1 && b.member_ref.p[0] == 'a');
	CHECK(holds(b.sketch, a_union) && cnt_hll_precision(a_union) == 14);
	CHECK(holds(b.late_sketch, &lh));
	CHECK(cnt_bucket_in_next(&in, &b, &err) == 1);   /* b: its one hour, at precision 12 */
	CHECK(b.member_ref.n == 1 && b.member_ref.p[0] == 'b');
	CHECK(holds(b.sketch, &h[3]) && holds(b.late_sketch, NULL));
	CHECK(cnt_bucket_in_next(&in, &b, &err) == 0);
	cnt_bucket_in_release(&in);
	cnt_writer_free(w);
	cnt_rollup_free(r);
	fclose(f);
	for (int i = 0; i < 4; i++)
		cnt_hll_release(&h[i]);
	cnt_hll_release(&lh);
	cnt_hll_free(a_union);
}

static void test_errors(void)
{
	cnt_rollup *r = cnt_rollup_new(zone, NULL);
	cnt_bucket b = hour("a", DAY0 + 22 * H, 0, 1, 1);
	cnt_err err;

	b.bucket_end = DAY0 + 24 * H;   /* across local midnight */
	CHECK(cnt_rollup_add(r, &b, NULL, NULL, &err) == -1);
	CHECK(strstr(err.msg, "not within one local day") != NULL);
	cnt_rollup_free(r);
	r = cnt_rollup_new(zone, NULL);
	b = hour("a", DAY0, 0, 1, 1);
	b.tenant_id = S("xyz");
	CHECK(cnt_rollup_add(r, &b, NULL, NULL, &err) == -1);
	CHECK(strstr(err.msg, "no zone for 'xyz'") != NULL);
	cnt_rollup_free(r);
	CHECK(cnt_rollup_is_day(berlin, DAY0, DAY0 + 23 * H));
	CHECK(!cnt_rollup_is_day(berlin, DAY0, DAY0 + 24 * H));
	CHECK(!cnt_rollup_is_day(berlin, DAY0 + H, DAY0 + 23 * H));
	/* the readers' check, with its cache: a day passes (twice), a wrong
	 * span of the same start is still refused, naming the file */
	{
		cnt_rollup_days_seen seen;

		cnt_rollup_days_seen_init(&seen);
		CHECK_EQ_INT(cnt_rollup_check_day(&seen, berlin, "f.avro", DAY0, DAY0 + 23 * H, &err), 0);
		CHECK_EQ_INT(cnt_rollup_check_day(&seen, berlin, "f.avro", DAY0, DAY0 + 23 * H, &err), 0);
		CHECK_EQ_INT(cnt_rollup_check_day(&seen, berlin, "f.avro", DAY0, DAY0 + 24 * H, &err), -1);
		CHECK(strstr(err.msg, "'f.avro'") != NULL && strstr(err.msg, "not a local day of Europe/Berlin") != NULL);
		CHECK_EQ_INT(cnt_rollup_check_day(&seen, berlin, "f.avro", DAY0 + 23 * H, DAY0 + 47 * H, &err), 0);
	}
	{
		char k1[] = "x", k2[] = CNT_ROLLUP_META;
		uint8_t v1[] = "y", v2[] = "week", v3[] = "day";
		cnt_meta_kv kv[2] = {{k1, v1, 1}, {k2, v2, 4}};

		CHECK(cnt_rollup_kind(kv, 1, "t", &err) == 0);
		CHECK(cnt_rollup_kind(kv, 2, "t", &err) == -1);
		CHECK(strstr(err.msg, "unknown roll-up kind") != NULL);
		kv[1].val = v3;
		kv[1].vlen = 3;
		CHECK(cnt_rollup_kind(kv, 2, "t", &err) == 1);
	}
}

static void test_seek(void)
{
	cnt_bucket hs[2] = {hour("a", DAY0, 0, 1, 1), hour("a", DAY0 + H, 0, 1, 2)};
	cnt_rollup *r = cnt_rollup_new(zone, NULL);
	FILE *f = write_file(r, hs, 2), *g;
	size_t size;
	char *all = file_bytes(f, &size);
	long n = (long)size;
	int p[2];
	cnt_err err;

	/* hours only: 0, back at the start */
	{
		long day = -1;

		CHECK(cnt_rollup_seek_days(fileno(f), "t", &err) == 1);
		day = (long)lseek(fileno(f), 0, SEEK_CUR);
		CHECK(day > 0 && day < n);
		CHECK(memcmp(all + day, "Obj\x01", 4) == 0);
		g = tmpfile();
		CHECK(fwrite(all, 1, (size_t)day, g) == (size_t)day);
		fflush(g);
		lseek(fileno(g), 0, SEEK_SET);
		CHECK(cnt_rollup_seek_days(fileno(g), "t", &err) == 0);
		CHECK(lseek(fileno(g), 0, SEEK_CUR) == 0);
		/* garbage after the hourly container */
		fseek(g, 0, SEEK_END);
		fputs("junk", g);
		fflush(g);
		CHECK(cnt_rollup_seek_days(fileno(g), "t", &err) == -1);
		fclose(g);
		/* a block claiming more bytes than the file has */
		g = tmpfile();
		CHECK(fwrite(all, 1, (size_t)day - 20, g) == (size_t)day - 20);
		fflush(g);
		CHECK(cnt_rollup_seek_days(fileno(g), "t", &err) == -1 || cnt_rollup_seek_days(fileno(g), "t", &err) == 0);
		fclose(g);
		/* every truncation: never a crash, never a day container found
		 * before its header is whole */
		for (long cut = 0; cut < n; cut += 7) {
			int rc;

			g = tmpfile();
			CHECK(fwrite(all, 1, (size_t)cut, g) == (size_t)cut);
			fflush(g);
			rc = cnt_rollup_seek_days(fileno(g), "t", &err);
			CHECK(rc == -1 || rc == 0 || (rc == 1 && cut > day));
			fclose(g);
		}
	}
	/* not a regular file: 0, untouched */
	CHECK(pipe(p) == 0);
	CHECK(cnt_rollup_seek_days(p[0], "t", &err) == 0);
	close(p[0]);
	close(p[1]);
	free(all);
	fclose(f);
	cnt_rollup_free(r);
}

#define MANY 600000

/* Enough day records that the builder's memory for them (and for where
 * each ends) outgrows the heap and is remapped several times: every
 * record must come back in order with its own member and values. */
static void test_many(void)
{
	cnt_rollup *r = cnt_rollup_new(zone, NULL);
	cnt_bucket *hs = calloc(MANY, sizeof(*hs));
	char (*names)[16] = calloc(MANY, sizeof(*names));
	cnt_bucket_in in;
	cnt_bucket b;
	cnt_err err;
	FILE *f;
	size_t n = 0, bad = 0;

	CHECK(r != NULL && hs != NULL && names != NULL);
	for (size_t i = 0; i < MANY; i++) {
		snprintf(names[i], sizeof(names[i]), "member-%07zu", i);
		hs[i] = hour(names[i], DAY0 + (int64_t)(i % 23) * H, 0, (int64_t)(i % 7) + 1, (int64_t)i);
	}
	f = write_file(r, hs, MANY);
	CHECK_EQ_INT(cnt_rollup_records(r), MANY);
	CHECK(cnt_rollup_seek_days(fileno(f), "t", &err) == 1);
	CHECK(cnt_bucket_in_open(&in, fileno(f), "t", NULL, &err) == 0);
	in.days = 1;
	while (cnt_bucket_in_next(&in, &b, &err) == 1) {
		if (n >= MANY || b.member_ref.n != strlen(names[n]) || memcmp(b.member_ref.p, names[n], b.member_ref.n) != 0 ||
		    b.bucket_start != DAY0 || b.count != (int64_t)(n % 7) + 1 || b.sum != (int64_t)n)
			bad++;
		n++;
	}
	CHECK_EQ_INT(n, MANY);
	CHECK_EQ_INT(bad, 0);
	cnt_bucket_in_release(&in);
	fclose(f);
	free(names);
	free(hs);
	cnt_rollup_free(r);
}

#define LENT 20000

/* Day records kept in lent memory, filled with junk first: in memory
 * that holds them all, and in memory they outgrow at once (4 KiB) and
 * leave: the same file bytes as a builder of its own memory writes. */
static void test_lend(void)
{
	cnt_bucket *hs = calloc(LENT, sizeof(*hs));
	char (*names)[16] = calloc(LENT, sizeof(*names));
	size_t sizes[] = {(size_t)8 << 20, 4096}, n0;
	char *want;
	cnt_rollup *r;
	FILE *f;

	CHECK(hs != NULL && names != NULL);
	for (size_t i = 0; i < LENT; i++) {
		snprintf(names[i], sizeof(names[i]), "m%06zu", i);
		hs[i] = hour(names[i], DAY0 + (int64_t)(i % 3) * H, (int32_t)(i % 2), 1, (int64_t)i);
	}
	r = cnt_rollup_new(zone, NULL);
	f = write_file(r, hs, LENT);
	want = file_bytes(f, &n0);
	CHECK(n0 > 8192);   /* more than the small loan holds */
	fclose(f);
	cnt_rollup_free(r);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		unsigned char *mem = malloc(sizes[k]);
		size_t n;
		char *got;

		CHECK(mem != NULL);
		memset(mem, 0xa5, sizes[k]);
		r = cnt_rollup_new(zone, NULL);
		cnt_rollup_lend(r, mem, sizes[k]);
		f = write_file(r, hs, LENT);
		got = file_bytes(f, &n);
		CHECK_EQ_INT(n, n0);
		CHECK(n == n0 && memcmp(got, want, n) == 0);
		/* the records went to the loan first (the small one they left) */
		CHECK(mem[0] != 0xa5);
		free(got);
		fclose(f);
		cnt_rollup_free(r);   /* frees nothing lent */
		free(mem);
	}
	free(want);
	free(names);
	free(hs);
}

int main(void)
{
	cnt_err err;

	berlin = cnt_tz_load("Europe/Berlin", &err);
	if (berlin == NULL) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	RUN(test_union);
	RUN(test_errors);
	RUN(test_seek);
	RUN(test_sketches);
	RUN(test_many);
	RUN(test_lend);
	cnt_tz_free(berlin);
	return unit_report("test_rollup");
}
