/*
 * test_retain.c - view retention (lib/view/retain.h): the decision (the
 * published, protected, never-superseded and the keep_min most recent
 * versions kept; the period counted from when each was superseded; a
 * frozen scope keeps everything), the record's text both ways and its
 * damaged forms, and cnt_retain_publish() on a scope directory.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "view/retain.h"
#include "unit.h"

#define H INT64_C(3600000)
#define NONE INT64_MIN

static void test_decide(void)
{
	cnt_retain_policy p = {3600, 0, 0};
	cnt_retain_version v[] = {
		{1, 0, 0, 0},          /* superseded at 0 */
		{2, H / 2, 0, 0},      /* at 0:30 */
		{3, H, 0, 0},          /* at 1:00 */
		{4, NONE, 0, 0},       /* the published one */
		{5, NONE, 0, 0},       /* staged, never superseded */
	};

	/* at 1:00 only version 1 has been superseded for an hour */
	CHECK_EQ_INT(cnt_retain_decide(v, 5, 4, 0, H, &p), 1);
	CHECK(v[0].retire && !v[1].retire && !v[2].retire && !v[3].retire && !v[4].retire);
	/* a millisecond before, nothing */
	CHECK_EQ_INT(cnt_retain_decide(v, 5, 4, 0, H - 1, &p), 0);
	/* much later: every superseded one, never the published or the staged */
	CHECK_EQ_INT(cnt_retain_decide(v, 5, 4, 0, 100 * H, &p), 3);
	CHECK(!v[3].retire && !v[4].retire);
	/* frozen: nothing */
	CHECK_EQ_INT(cnt_retain_decide(v, 5, 4, 1, 100 * H, &p), 0);
	CHECK(!v[0].retire);
	/* keep_min: the most recently superseded are kept whatever their age */
	p.keep_min = 2;
	CHECK_EQ_INT(cnt_retain_decide(v, 5, 4, 0, 100 * H, &p), 1);
	CHECK(v[0].retire && !v[1].retire && !v[2].retire);
	/* a published version with an old superseded record (rolled back to) stays */
	p.keep_min = 0;
	CHECK_EQ_INT(cnt_retain_decide(v, 5, 1, 0, 100 * H, &p), 2);
	CHECK(!v[0].retire && v[1].retire && v[2].retire);
	/* protected (a season's newest version) */
	v[1].protect = 1;
	CHECK_EQ_INT(cnt_retain_decide(v, 5, 4, 0, 100 * H, &p), 2);
	CHECK(v[0].retire && !v[1].retire && v[2].retire);
	/* keep_s 0: at once; recency ties broken by the higher version */
	v[1].protect = 0;
	v[0].superseded_at = v[1].superseded_at = v[2].superseded_at = H;
	p.keep_min = 1;
	p.keep_s = 0;
	CHECK_EQ_INT(cnt_retain_decide(v, 5, 4, 0, H, &p), 2);
	CHECK(v[0].retire && v[1].retire && !v[2].retire);
	/* a clock that went back (now before superseded_at): kept */
	CHECK_EQ_INT(cnt_retain_decide(v, 5, 4, 0, 0, &p), 0);
	/* the largest period does not overflow */
	p.keep_s = 400 * 86400;
	p.keep_min = 0;
	CHECK_EQ_INT(cnt_retain_decide(v, 5, 4, 0, INT64_MAX, &p), 3);
	CHECK_EQ_INT(cnt_retain_decide(v, 0, 4, 0, INT64_MAX, &p), 0);
}

static void test_record_text(void)
{
	static const char text[] = "cnt-retention 1\nsuperseded 1 1772368200000\nretired 1 1772371800000\n"
		"superseded 12 -5\n";
	cnt_retain_log log;
	cnt_err err;
	char *out;
	size_t n;
	int state;
	int64_t at;

	CHECK(cnt_retain_parse(text, strlen(text), "r", &log, &err) == 0);
	CHECK_EQ_INT(log.n, 3);
	cnt_retain_state(&log, 1, &state, &at);
	CHECK(state == 2 && at == INT64_C(1772371800000));
	cnt_retain_state(&log, 12, &state, &at);
	CHECK(state == 1 && at == -5);
	cnt_retain_state(&log, 2, &state, &at);
	CHECK(state == 0);
	CHECK(cnt_retain_format(&log, &out, &n) == 0);
	CHECK(n == strlen(text) && memcmp(out, text, n) == 0);
	free(out);
	cnt_retain_log_release(&log);
	/* an empty record */
	CHECK(cnt_retain_parse("cnt-retention 1\n", 16, "r", &log, &err) == 0 && log.n == 0);
	cnt_retain_log_release(&log);
}

static void test_record_damaged(void)
{
	static const char *const bad[] = {
		"", "cnt-retention 2\n", "cnt-retention 1", "cnt-retention 1\nsuperseded 1 5",   /* no newline */
		"cnt-retention 1\nsuperseded one 5\n", "cnt-retention 1\npublished 1 5\n",
		"cnt-retention 1\nsuperseded 0 5\n", "cnt-retention 1\nsuperseded 1000000 5\n",
		"cnt-retention 1\nsuperseded 1 5 6\n", "cnt-retention 1\nsuperseded 1 5x\n",
		"cnt-retention 1\n\n", "cnt-retention 1\nretired  1 5\n",
	};
	cnt_retain_log log;
	cnt_err err;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = cnt_retain_parse(bad[i], strlen(bad[i]), "r", &log, &err);

		if (rc != -1)
			fprintf(stderr, "accepted: '%s'\n", bad[i]);
		CHECK(rc == -1);
		CHECK(strncmp(err.msg, "retention record 'r'", 20) == 0);
	}
}

/* A scope directory with versions 1..n (empty index.bin files). */
static void make_scope(const char *dir, int n)
{
	char p[800];

	mkdir(dir, 0755);
	for (int i = 1; i <= n; i++) {
		snprintf(p, sizeof(p), "%s/v%06d", dir, i);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/v%06d/index.bin", dir, i);
		fclose(fopen(p, "w"));
	}
}

static int exists(const char *dir, int v)
{
	char p[800];
	struct stat st;

	snprintf(p, sizeof(p), "%s/v%06d", dir, v);
	return stat(p, &st) == 0;
}

static void test_publish(void)
{
	char dir[] = "/tmp/cnt-test-retain.XXXXXX", sdir[600], cmd[700], *text;
	cnt_retain_policy p = {3600, 0, 0};
	cnt_retain_log log;
	cnt_err err;
	size_t retired = 99, n;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(sdir, sizeof(sdir), "%s/s", dir);
	make_scope(sdir, 3);
	/* 3 published in place of 1; 2 was passed over */
	CHECK(cnt_retain_publish(sdir, 1, 3, H, &p, &retired, &err) == 0);
	CHECK_EQ_INT(retired, 0);
	CHECK(cnt_retain_load(sdir, &log, &err) == 0);
	CHECK(cnt_retain_format(&log, &text, &n) == 0);
	CHECK_EQ_STR(text, "cnt-retention 1\nsuperseded 1 3600000\nsuperseded 2 3600000\n");
	free(text);
	cnt_retain_log_release(&log);
	/* record only (a --publish): nothing retired however late */
	CHECK(cnt_retain_publish(sdir, 3, 3, 10 * H, NULL, &retired, &err) == 0);
	CHECK(exists(sdir, 1) && exists(sdir, 2));
	/* an hour after: both retired, recorded, gone */
	CHECK(cnt_retain_publish(sdir, 3, 3, 2 * H, &p, &retired, &err) == 0);
	CHECK_EQ_INT(retired, 2);
	CHECK(!exists(sdir, 1) && !exists(sdir, 2) && exists(sdir, 3));
	CHECK_EQ_INT(cnt_retain_check_gone(sdir, "b", "s", 1, &err), 1);
	CHECK(err.kind == CNT_ERR_RETIRED);
	CHECK_EQ_STR(err.msg, "board 'b' scope 's': version 1 is no longer retained: retired at "
		"1970-01-01T02:00:00.000Z; the published version is now none");
	CHECK_EQ_INT(cnt_retain_check_gone(sdir, "b", "s", 3, &err), 0);
	CHECK_EQ_INT(cnt_retain_check_gone(sdir, "b", "s", 7, &err), 0);
	/* a damaged record: an error, and it is left as it is */
	snprintf(cmd, sizeof(cmd), "printf 'cnt-retention 1\\nbad\\n' >'%s/retention'", sdir);
	CHECK(system(cmd) == 0);
	CHECK(cnt_retain_publish(sdir, 3, 3, 3 * H, &p, &retired, &err) == -1);
	CHECK(strstr(err.msg, "line 2: damaged") != NULL);
	CHECK_EQ_INT(cnt_retain_check_gone(sdir, "b", "s", 1, &err), -1);
	snprintf(cmd, sizeof(cmd), "rm -r '%s'", dir);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	RUN(test_decide);
	RUN(test_record_text);
	RUN(test_record_damaged);
	RUN(test_publish);
	return unit_report("test_retain");
}
