/*
 * test_diff.c - the merge join of two bucket files (lib/count/diff.h):
 * keys on one side only, changed values, equal files, --max-diffs, an
 * unsorted side refused, and a failed write named as an output error.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "count/diff.h"
#include "model/bucket.h"
#include "unit.h"

/* A bucket file of the members named in ms (one letter each), sum = the
 * matching digit of sums; a temporary file, returned at offset 0. */
static int buckets(const char *ms, const char *sums)
{
	char path[] = "/tmp/test_diff.XXXXXX";
	int fd = mkstemp(path);
	cnt_err err;
	cnt_writer *w;

	unlink(path);
	w = cnt_bucket_writer_new(fd, "t", CNT_CODEC_NULL, -1, &err);
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
		b.bucket_end = 3600000;
		b.count = 1;
		b.sum = sums[i] - '0';
		b.max_ingest_time = 1;
		cnt_bucket_encode(&b, cnt_writer_buf(w));
		cnt_writer_commit(w, &err);
	}
	cnt_writer_finish(w, &err);
	cnt_writer_free(w);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static int out_file(void)
{
	char path[] = "/tmp/test_diff_out.XXXXXX";
	int fd = mkstemp(path);

	unlink(path);
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
	int l = buckets("abd", "123"), r = buckets("bcd", "224"), out = out_file();
	cnt_diff_opts o = {0, -1, 0, out, NULL, NULL, 0};
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
	int l = buckets("ab", "12"), r = buckets("ab", "12"), out = out_file();
	cnt_diff_opts o = {0, -1, 0, out, NULL, NULL, 0};
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
	int l = buckets("ba", "12"), r = buckets("ab", "12"), out = out_file();
	cnt_diff_opts o = {0, -1, 0, out, NULL, NULL, 0};
	cnt_diff_stats st;
	cnt_err err;

	CHECK_EQ_INT(cnt_diff_buckets(l, "L", r, "R", &o, &st, &err), -1);
	CHECK(strstr(err.msg, "'L' record 2: keys are not in ascending order") != NULL);
	close(l);
	close(r);
	close(out);
}

static void test_write_error(void)
{
	int l = buckets("a", "1"), r = buckets("a", "2"), full = open("/dev/full", O_WRONLY);
	cnt_diff_opts o = {0, -1, 0, full, NULL, NULL, 0};
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
	RUN(test_write_error);
	return unit_report("test_diff");
}
