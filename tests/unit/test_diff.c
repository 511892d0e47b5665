/*
 * test_diff.c - the merge join of two bucket files (lib/count/diff.h):
 * keys on one side only, changed values, equal files, --max-diffs, an
 * unsorted side refused, day records compared after the hours, and a
 * failed write named as an output error.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "count/diff.h"
#include "count/rollup.h"
#include "model/bucket.h"
#include "unit.h"

/* Appends to fd a container of records of the members named in ms (one
 * letter each), sum = the matching digit of sums; marked as day roll-ups
 * (cnt.rollup = day) when day. */
static void container(int fd, const char *ms, const char *sums, int day)
{
	cnt_err err;
	cnt_writer *w;

	w = cnt_bucket_writer_new(fd, "t", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	if (day)
		CHECK_EQ_INT(cnt_writer_meta(w, CNT_ROLLUP_META, "day", 3, &err), 0);
	for (size_t i = 0; ms[i]; i++) {
		cnt_bucket b;

		memset(&b, 0, sizeof(b));
		b.tenant_id.p = "t";
		b.tenant_id.n = 1;
		b.counter_id.p = "c";
		b.counter_id.n = 1;
		b.counter_version = 1;
		b.member_ref.p = &ms[i];
		b.member_ref.n = 1;
		b.bucket_start = 0;
		b.bucket_end = day ? 86400000 : 3600000;
		b.count = 1;
		b.sum = sums[i] - '0';
		b.max_ingest_time = 1;
		cnt_bucket_encode(&b, cnt_writer_buf(w));
		cnt_writer_commit(w, &err);
	}
	cnt_writer_finish(w, &err);
	cnt_writer_free(w);
}

/* A temporary file, open for reading and writing (a bucket file, or
 * where the differences go). */
static int temp_file(void)
{
	char path[] = "/tmp/test_diff.XXXXXX";
	int fd = mkstemp(path);

	unlink(path);
	return fd;
}

/* A bucket file of hourly records (container()), returned at offset 0. */
static int buckets(const char *ms, const char *sums)
{
	int fd = temp_file();

	container(fd, ms, sums, 0);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* The same with a day container after the hours (dms, dsums), as
 * cnt-accumulate -d writes it. */
static int buckets_days(const char *ms, const char *sums, const char *dms, const char *dsums)
{
	int fd = temp_file();

	container(fd, ms, sums, 0);
	container(fd, dms, dsums, 1);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static int lines_in(int fd)
{
	char buf[8192];
	ssize_t n;
	int lines = 0;

	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	return lines;
}

static void test_differences(void)
{
	int l = buckets("abd", "123"), r = buckets("bcd", "224"), out = temp_file();
	cnt_diff_opts o = {0, -1, 0, out, NULL, NULL, 0, 0};
	cnt_diff_stats st;
	cnt_err err;

	CHECK_EQ_INT(cnt_diff_buckets(l, "L", r, "R", &o, &st, &err), 0);
	CHECK_EQ_INT(st.left, 3);
	CHECK_EQ_INT(st.right, 3);
	CHECK_EQ_INT(st.only_left, 1);    /* a */
	CHECK_EQ_INT(st.only_right, 1);   /* c */
	CHECK_EQ_INT(st.changed, 1);      /* d: 3 vs 4; b equal */
	CHECK_EQ_INT(st.shown, 3);
	CHECK(cnt_diff_differ(&st));
	CHECK_EQ_INT(lines_in(out), 3);
	close(l);
	close(r);
	close(out);
}

static void test_equal_and_limits(void)
{
	int l = buckets("ab", "12"), r = buckets("ab", "12"), out = temp_file();
	cnt_diff_opts o = {0, -1, 0, out, NULL, NULL, 0, 0};
	cnt_diff_stats st;
	cnt_err err;

	CHECK_EQ_INT(cnt_diff_buckets(l, "L", r, "R", &o, &st, &err), 0);
	CHECK(!cnt_diff_differ(&st));
	CHECK_EQ_INT(lines_in(out), 0);
	close(l);
	close(r);

	l = buckets("abcde", "11111");
	r = buckets("abcde", "22222");
	o.max_shown = 2;
	CHECK_EQ_INT(cnt_diff_buckets(l, "L", r, "R", &o, &st, &err), 0);
	CHECK_EQ_INT(st.changed, 5);
	CHECK_EQ_INT(st.shown, 2);
	close(l);
	close(r);
	close(out);
}

static void test_unsorted_side_refused(void)
{
	int l = buckets("ba", "12"), r = buckets("ab", "12"), out = temp_file();
	cnt_diff_opts o = {0, -1, 0, out, NULL, NULL, 0, 0};
	cnt_diff_stats st;
	cnt_err err;

	CHECK_EQ_INT(cnt_diff_buckets(l, "L", r, "R", &o, &st, &err), -1);
	CHECK(strstr(err.msg, "'L' record 2: keys are not in ascending order") != NULL);
	close(l);
	close(r);
	close(out);
}

/* Day records are compared after the hourly ones: a day key is never
 * matched with an hourly one, however the keys sort; no_days skips them. */
static void test_days(void)
{
	/* hourly z sorts after day a, and comes first all the same */
	int l = buckets_days("az", "12", "ab", "33"), r = buckets_days("az", "12", "bc", "43"), out = temp_file();
	cnt_diff_opts o = {0, -1, 0, out, NULL, NULL, 0, 0};
	cnt_diff_stats st;
	cnt_err err;

	CHECK_EQ_INT(cnt_diff_buckets(l, "L", r, "R", &o, &st, &err), 0);
	CHECK_EQ_INT(st.left, 4);
	CHECK_EQ_INT(st.right, 4);
	CHECK_EQ_INT(st.days.left, 2);
	CHECK_EQ_INT(st.days.right, 2);
	CHECK_EQ_INT(st.days.only_left, 1);    /* a */
	CHECK_EQ_INT(st.days.only_right, 1);   /* c */
	CHECK_EQ_INT(st.days.changed, 1);      /* b: 3 vs 4 */
	CHECK_EQ_INT(st.only_left + st.only_right + st.changed, 3);
	CHECK(st.days_left && st.days_right);
	CHECK_EQ_INT(lines_in(out), 3);

	/* hours only: equal */
	lseek(l, 0, SEEK_SET);
	lseek(r, 0, SEEK_SET);
	o.no_days = 1;
	CHECK_EQ_INT(cnt_diff_buckets(l, "L", r, "R", &o, &st, &err), 0);
	CHECK(!cnt_diff_differ(&st));
	CHECK_EQ_INT(st.left, 2);
	CHECK_EQ_INT(st.days.left, 0);
	close(l);
	close(r);

	/* one side without days: its partner's day records are differences */
	l = buckets("az", "12");
	r = buckets_days("az", "12", "a", "3");
	o.no_days = 0;
	CHECK_EQ_INT(cnt_diff_buckets(l, "L", r, "R", &o, &st, &err), 0);
	CHECK_EQ_INT(st.only_right, 1);
	CHECK_EQ_INT(st.days.only_right, 1);
	CHECK(!st.days_left && st.days_right);
	close(l);
	close(r);

	/* hourly records after day records: refused */
	l = temp_file();
	container(l, "a", "1", 1);
	container(l, "b", "1", 0);
	lseek(l, 0, SEEK_SET);
	r = buckets_days("ab", "11", "a", "1");
	CHECK_EQ_INT(cnt_diff_buckets(l, "L", r, "R", &o, &st, &err), -1);
	CHECK(strstr(err.msg, "'L' record 2: an hourly record after the day roll-ups") != NULL);
	close(l);
	close(r);

	/* day keys out of order: refused, named as a day record */
	l = buckets_days("a", "1", "ba", "11");
	r = buckets_days("a", "1", "ab", "11");
	CHECK_EQ_INT(cnt_diff_buckets(l, "L", r, "R", &o, &st, &err), -1);
	CHECK(strstr(err.msg, "'L' record 3 (a day record): keys are not in ascending order") != NULL);
	close(l);
	close(r);
	close(out);
}

static void test_write_error(void)
{
	int l = buckets("a", "1"), r = buckets("a", "2"), full = open("/dev/full", O_WRONLY);
	cnt_diff_opts o = {0, -1, 0, full, NULL, NULL, 0, 0};
	cnt_diff_stats st;
	cnt_err err;

	CHECK_EQ_INT(cnt_diff_buckets(l, "L", r, "R", &o, &st, &err), -1);
	CHECK_EQ_INT(err.kind, CNT_ERR_IO);
	close(l);
	close(r);
	close(full);
}

int main(void)
{
	RUN(test_differences);
	RUN(test_equal_and_limits);
	RUN(test_unsorted_side_refused);
	RUN(test_days);
	RUN(test_write_error);
	return unit_report("test_diff");
}
