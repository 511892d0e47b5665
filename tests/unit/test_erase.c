/*
 * test_erase.c - the deletion path (lib/correct/erase.h).
 *
 * Scan: the member's originals and compensations counted per segment,
 * their ids in file order; an original neither in the ledger nor named by
 * a compensation refused; an unreadable segment refused.  Rewrite: the
 * new segment equals, byte for byte, the writer's output of the remaining
 * events at the level the old one was written at (found from its first
 * block), every codec; the digests before and after are XXH3-128 of the
 * files.  Record: kind erasure, per-segment ids and counts, the member
 * only as XXH3-128, chained, readable by cnt_retract_ledger_load, which
 * takes its ids as retracted.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <xxhash.h>

#include "correct/erase.h"
#include "correct/ledger.h"
#include "model/event.h"
#include "unit.h"

#define S(z) ((cnt_slice){(z), sizeof(z) - 1})
#define T0 INT64_C(1772359200000)

static cnt_event mk(const char *id, const char *member, int64_t delta, const char *retracts)
{
	cnt_event e;

	memset(&e, 0, sizeof(e));
	e.event_id.p = id;
	e.event_id.n = strlen(id);
	e.idempotency_key = e.event_id;
	e.tenant_id = S("utc");
	e.counter_id = S("dist");
	e.counter_version = 1;
	e.member_ref.p = member;
	e.member_ref.n = strlen(member);
	e.delta = delta;
	e.event_time = T0;
	e.ingest_time = T0 + 1000;
	if (retracts) {
		e.retracts.p = retracts;
		e.retracts.n = strlen(retracts);
	}
	return e;
}

static int tmp_fd(void)
{
	FILE *f = tmpfile();
	int fd;

	CHECK(f != NULL);
	fd = dup(fileno(f));
	fclose(f);
	return fd;
}

/* An event file of v[0..n) (skipping those of member skip, when given). */
static int events_file(const cnt_event *v, size_t n, cnt_codec_id codec, int level, const char *skip)
{
	int fd = tmp_fd();
	cnt_err err;
	cnt_writer *w = cnt_event_writer_new(fd, "test", codec, level, &err);

	CHECK(w != NULL);
	for (size_t i = 0; w && i < n; i++) {
		if (skip && v[i].member_ref.n == strlen(skip) && memcmp(v[i].member_ref.p, skip, v[i].member_ref.n) == 0)
			continue;
		CHECK_EQ_INT(cnt_event_encode(&v[i], cnt_writer_buf(w)), 0);
		CHECK_EQ_INT(cnt_writer_commit(w, &err), 0);
	}
	CHECK(w && cnt_writer_finish(w, &err) == 0);
	cnt_writer_free(w);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static size_t slurp(int fd, char *buf, size_t cap)
{
	ssize_t n = pread(fd, buf, cap, 0);

	return n > 0 ? (size_t)n : 0;
}

static int same_file(int a, int b)
{
	static char x[1 << 20], y[1 << 20];
	size_t nx = slurp(a, x, sizeof(x)), ny = slurp(b, y, sizeof(y));

	return nx == ny && memcmp(x, y, nx) == 0;
}

static cnt_fp digest(int fd)
{
	static char x[1 << 20];
	size_t n = slurp(fd, x, sizeof(x));
	XXH128_hash_t h = XXH3_128bits(x, n);
	cnt_fp fp = {h.high64, h.low64};

	return fp;
}

/* a log: m1's two events (a1 retracted by c1 in the same file, a3 by a
 * ledger line), m2's two */
static cnt_event log_v[5];
static void make_log(void)
{
	log_v[0] = mk("a1", "m1", 10, NULL);
	log_v[1] = mk("a2", "m2", 3, NULL);
	log_v[2] = mk("a3", "m1", 7, NULL);
	log_v[3] = mk("c1", "m1", -10, "a1");
	log_v[4] = mk("a4", "m2", 1, NULL);
}

static int ledger_with(const char *ids_json)
{
	char line[256];
	int fd = tmp_fd();

	snprintf(line, sizeof(line), "{\"event_ids\":%s,\"prev\":\"00000000000000000000000000000000\"}\n", ids_json);
	CHECK(write(fd, line, strlen(line)) == (ssize_t)strlen(line));
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static void test_member_hash(void)
{
	char h[33], want[33];
	XXH128_hash_t x = XXH3_128bits("m-3307", 6);

	snprintf(want, sizeof(want), "%016llx%016llx", (unsigned long long)x.high64, (unsigned long long)x.low64);
	cnt_erase_member_hash("m-3307", h);
	CHECK_EQ_STR(h, want);
}

static void test_scan_counts_and_refuses_unretracted(void)
{
	cnt_erase_sel sel = {"m1", NULL, NULL};
	cnt_erase_plan plan;
	cnt_err err;
	int fds[2], lfd;
	const char *names[2] = {"seg1", "seg2"};
	cnt_event other[1] = {mk("b1", "m2", 5, NULL)};

	make_log();
	fds[0] = events_file(log_v, 5, CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, NULL);
	fds[1] = events_file(other, 1, CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, NULL);
	/* a3 is retracted nowhere */
	CHECK_EQ_INT(cnt_erase_scan(fds, names, 2, &sel, -1, NULL, &plan, &err), -1);
	CHECK(strstr(err.msg, "event a3 of the member is not retracted") != NULL);
	cnt_erase_plan_release(&plan);
	/* the ledger lists a3 */
	lfd = ledger_with("[\"a3\"]");
	CHECK_EQ_INT(cnt_erase_scan(fds, names, 2, &sel, lfd, "ledger", &plan, &err), 0);
	CHECK_EQ_INT(plan.in, 6);
	CHECK_EQ_INT(plan.originals, 2);
	CHECK_EQ_INT(plan.compensations, 1);
	CHECK_EQ_INT(plan.affected, 1);
	CHECK_EQ_INT(plan.segs[0].originals, 2);
	CHECK_EQ_INT(plan.segs[0].compensations, 1);
	CHECK_EQ_INT(plan.segs[1].originals + plan.segs[1].compensations, 0);
	CHECK_EQ_INT(plan.segs[0].ids.len, 9);
	CHECK(memcmp(plan.segs[0].ids.p, "a1\0a3\0c1\0", 9) == 0);
	CHECK(memcmp(&plan.segs[0].before, &(cnt_fp){0, 0}, sizeof(cnt_fp)) != 0);
	{
		cnt_fp d = digest(fds[0]);

		CHECK(d.hi == plan.segs[0].before.hi && d.lo == plan.segs[0].before.lo);
	}
	cnt_erase_plan_release(&plan);
	/* narrowed to another counter: nothing of the member */
	sel.counter = "clicks";
	CHECK_EQ_INT(cnt_erase_scan(fds, names, 2, &sel, -1, NULL, &plan, &err), 0);
	CHECK_EQ_INT(plan.affected, 0);
	cnt_erase_plan_release(&plan);
	close(fds[0]);
	close(fds[1]);
	close(lfd);
}

static void test_scan_refuses_unreadable(void)
{
	cnt_erase_sel sel = {"m1", NULL, NULL};
	cnt_erase_plan plan;
	cnt_err err;
	int fd = tmp_fd();
	const char *name = "junk";

	CHECK(write(fd, "Obj\001garbage", 11) == 11);
	lseek(fd, 0, SEEK_SET);
	CHECK_EQ_INT(cnt_erase_scan(&fd, &name, 1, &sel, -1, NULL, &plan, &err), -1);
	CHECK_EQ_INT(err.kind, CNT_ERR_DATA);
	CHECK(strstr(err.msg, "junk") != NULL);
	cnt_erase_plan_release(&plan);
	close(fd);
}

/* The rewrite equals the writer's output without m1, for each codec and
 * a level other than the default, found from the segment. */
static void test_rewrite_is_the_writers_output(void)
{
	static const struct { cnt_codec_id c; int level; int want; } cases[] = {
		{CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, CNT_LEVEL_DEFAULT},
		{CNT_CODEC_ZSTD, CNT_LEVEL_DEFAULT, CNT_LEVEL_DEFAULT}, {CNT_CODEC_ZSTD, 12, 12},
		{CNT_CODEC_ZSTD, -3, -3}, {CNT_CODEC_ZSTD, -7, -7},
		{CNT_CODEC_DEFLATE, 2, 2}, {CNT_CODEC_XZ, 1, 1}, {CNT_CODEC_BZIP2, 5, 5},
		{CNT_CODEC_SNAPPY, CNT_LEVEL_DEFAULT, CNT_LEVEL_DEFAULT},
	};
	cnt_erase_sel sel = {"m1", "utc", "dist"};

	make_log();
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		cnt_erase_plan plan;
		cnt_err err;
		int fd = events_file(log_v, 5, cases[k].c, cases[k].level, NULL);
		int ref = events_file(log_v, 5, cases[k].c, cases[k].level, "m1");
		int out = tmp_fd(), lfd = ledger_with("[\"a3\"]");
		const char *name = "seg";

		CHECK_EQ_INT(cnt_erase_scan(&fd, &name, 1, &sel, lfd, "ledger", &plan, &err), 0);
		CHECK_EQ_INT(cnt_erase_rewrite(fd, &sel, &plan.segs[0], CNT_LEVEL_DEFAULT, out, "out", &err), 0);
		CHECK(same_file(out, ref));
		if (cases[k].c != CNT_CODEC_NULL && cases[k].c != CNT_CODEC_SNAPPY)
			CHECK_EQ_INT(plan.segs[0].level, cases[k].want);
		{
			cnt_fp d = digest(out);

			CHECK(d.hi == plan.segs[0].after.hi && d.lo == plan.segs[0].after.lo);
		}
		cnt_erase_plan_release(&plan);
		close(fd);
		close(ref);
		close(out);
		close(lfd);
	}
}

static void test_record_and_chain(void)
{
	cnt_erase_sel sel = {"m1", "utc", NULL};
	cnt_retract_req req = {NULL, "deleted", "dpo", "art17", T0};
	cnt_erase_plan plan;
	cnt_err err;
	char id[40], *line = NULL;
	const char *prev_line;
	const char *name = "seg";
	int fd, out = tmp_fd(), lfd;
	json_t *rec, *seg;
	json_error_t je;
	cnt_fpset done;
	cnt_fp last;
	uint64_t v;

	make_log();
	fd = events_file(log_v, 5, CNT_CODEC_ZSTD, CNT_LEVEL_DEFAULT, NULL);
	lfd = ledger_with("[\"a3\"]");
	prev_line = "{\"event_ids\":[\"a3\"],\"prev\":\"00000000000000000000000000000000\"}";
	CHECK_EQ_INT(cnt_erase_scan(&fd, &name, 1, &sel, lfd, "ledger", &plan, &err), 0);
	CHECK_EQ_INT(cnt_erase_rewrite(fd, &sel, &plan.segs[0], CNT_LEVEL_DEFAULT, out, "out", &err), 0);
	CHECK_EQ_INT(cnt_erase_record(&req, &sel, &plan, id, &line, &err), 0);
	CHECK(line != NULL && strstr(line, "m1") == NULL);
	CHECK(strncmp(id, "e-", 2) == 0 && strlen(id) == 34);
	rec = json_loads(line, 0, &je);
	CHECK(rec != NULL);
	if (rec) {
		char hx[33], mh[33];
		XXH128_hash_t h = XXH3_128bits(prev_line, strlen(prev_line));
		cnt_fp pf = {h.high64, h.low64};

		cnt_ledger_hex(pf, hx);
		cnt_erase_member_hash("m1", mh);
		CHECK_EQ_STR(json_string_value(json_object_get(rec, "kind")), "erasure");
		CHECK_EQ_STR(json_string_value(json_object_get(rec, "erasure_id")), id);
		CHECK_EQ_STR(json_string_value(json_object_get(rec, "prev")), hx);
		CHECK_EQ_STR(json_string_value(json_object_get(json_object_get(rec, "selector"), "member_xxh3")), mh);
		CHECK(json_object_get(json_object_get(rec, "selector"), "member_ref") == NULL);
		CHECK_EQ_INT(json_integer_value(json_object_get(rec, "erased")), 3);
		CHECK_EQ_INT(json_array_size(json_object_get(rec, "segments")), 1);
		seg = json_array_get(json_object_get(rec, "segments"), 0);
		CHECK_EQ_STR(json_string_value(json_object_get(seg, "segment")), "seg");
		CHECK_EQ_INT(json_integer_value(json_object_get(seg, "originals")), 2);
		CHECK_EQ_INT(json_integer_value(json_object_get(seg, "compensations")), 1);
		CHECK_EQ_INT(json_integer_value(json_object_get(seg, "kept")), 2);
		CHECK_EQ_STR(json_string_value(json_array_get(json_object_get(seg, "event_ids"), 2)), "c1");
		cnt_ledger_hex(plan.segs[0].after, hx);
		CHECK_EQ_STR(json_string_value(json_object_get(seg, "after")), hx);
		json_decref(rec);
	}
	/* the ledger with the record appended reads back: chain intact, the
	 * erased ids counted as retracted */
	CHECK_EQ_INT(cnt_retract_ledger_append(lfd, "ledger", line, &err), 0);
	lseek(lfd, 0, SEEK_SET);
	CHECK_EQ_INT(cnt_fpset_init(&done, 16), 0);
	CHECK_EQ_INT(cnt_retract_ledger_load(lfd, "ledger", &done, &last, &err), 0);
	CHECK(last.hi == plan.last.hi && last.lo == plan.last.lo);
	{
		const void *parts[1] = {"c1"};
		size_t lens[1] = {2};

		CHECK_EQ_INT(cnt_fpset_find(&done, cnt_fp_of(1, parts, lens), &v), 1);
	}
	cnt_fpset_release(&done);
	free(line);
	cnt_erase_plan_release(&plan);
	close(fd);
	close(out);
	close(lfd);
}

static void test_ledger_refuses_unknown_kind(void)
{
	static const char l[] = "{\"kind\":\"purge\",\"prev\":\"00000000000000000000000000000000\"}\n";
	int fd = tmp_fd();
	cnt_fpset done;
	cnt_fp last;
	cnt_err err;

	CHECK(write(fd, l, sizeof(l) - 1) == (ssize_t)(sizeof(l) - 1));
	lseek(fd, 0, SEEK_SET);
	CHECK_EQ_INT(cnt_fpset_init(&done, 16), 0);
	CHECK_EQ_INT(cnt_retract_ledger_load(fd, "ledger", &done, &last, &err), -1);
	CHECK(strstr(err.msg, "unknown kind") != NULL);
	cnt_fpset_release(&done);
	close(fd);
}

int main(void)
{
	RUN(test_member_hash);
	RUN(test_scan_counts_and_refuses_unretracted);
	RUN(test_scan_refuses_unreadable);
	RUN(test_rewrite_is_the_writers_output);
	RUN(test_record_and_chain);
	RUN(test_ledger_refuses_unknown_kind);
	return unit_report("test_erase");
}
