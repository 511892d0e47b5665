/*
 * test_rank.c - answers from a ranked view (view/rank.h): questions
 * parsed strictly; histogram bands with and without the member's own
 * entry; ranks of an overlaid value against the head under each numbering
 * and tie-break; the own-write overlay by counter type, with its filters;
 * the member directory; the answers as JSON and as a table, byte for
 * byte.
 *
 * The views are tests/unit/view_fixture.h's; the expected answers are the
 * ones worked out by hand in tests/rank.bats for the same data.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/event.h"
#include "unit.h"
#include "view/rank.h"
#include "view_fixture.h"

static char tmpdir[] = "/tmp/test_rank.XXXXXX";

/* ---- questions -------------------------------------------------------- */

static int parses(const char *line, cnt_rank_question *q, cnt_err *err)
{
	static char buf[256];   /* the question borrows its member from here */
	char *argv[16];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok(buf, " "); t && argc < 16; t = strtok(NULL, " "))
		argv[argc++] = t;
	return cnt_rank_parse_question(argc, argv, q, err);
}

static void test_questions(void)
{
	cnt_rank_question q;
	cnt_err err;

	CHECK_EQ_INT(parses("top", &q, &err), 0);
	CHECK(q.kind == CNT_RANK_Q_TOP && q.count == 10);
	CHECK_EQ_INT(parses("top 3", &q, &err), 0);
	CHECK_EQ_INT(q.count, 3);
	CHECK_EQ_INT(parses("top 1000000000", &q, &err), 0);
	CHECK_EQ_INT(parses("rank m-1", &q, &err), 0);
	CHECK(q.kind == CNT_RANK_Q_RANK && strcmp(q.member, "m-1") == 0);
	CHECK_EQ_INT(parses("around m 7", &q, &err), 0);
	CHECK(q.kind == CNT_RANK_Q_AROUND && q.count == 7);
	CHECK_EQ_INT(parses("around m", &q, &err), 0);
	CHECK_EQ_INT(q.count, 5);
	CHECK_EQ_INT(parses("value m", &q, &err), 0);
	CHECK_EQ_INT(parses("verify", &q, &err), 0);
	CHECK(q.kind == CNT_RANK_Q_VERIFY);
	CHECK_EQ_INT(parses("", &q, &err), -1);
	CHECK_EQ_STR(err.msg, "a question is required: top, rank, around, value or verify");
	CHECK_EQ_INT(parses("Top", &q, &err), -1);
	CHECK_EQ_STR(err.msg, "unknown question 'Top': top, rank, around, value or verify");
	static const char *const bad_top[] = {"0", "2x", "-1", "+1", "01x", "1000000001", "18446744073709551617", "1e3"};
	for (size_t i = 0; i < sizeof(bad_top) / sizeof(bad_top[0]); i++) {
		char line[64], want[128];

		snprintf(line, sizeof(line), "top %s", bad_top[i]);
		snprintf(want, sizeof(want), "top: '%s' is not a count from 1 to 1000000000", bad_top[i]);
		CHECK_EQ_INT(parses(line, &q, &err), -1);
		CHECK_EQ_STR(err.msg, want);
	}
	CHECK_EQ_INT(parses("top 007", &q, &err), 0);   /* leading zeros are still a whole number */
	CHECK_EQ_INT(q.count, 7);
	CHECK_EQ_INT(parses("around m 1001", &q, &err), -1);
	CHECK_EQ_STR(err.msg, "around: '1001' is not a count from 1 to 1000");
	CHECK_EQ_INT(parses("rank", &q, &err), -1);
	CHECK_EQ_STR(err.msg, "rank: which member?");
	CHECK_EQ_INT(parses("top 3 4", &q, &err), -1);
	CHECK_EQ_STR(err.msg, "unexpected operand '4' after the question");
	CHECK_EQ_INT(parses("value m x", &q, &err), -1);
	CHECK_EQ_INT(parses("rank m 3", &q, &err), -1);   /* only around takes a count */
	CHECK_EQ_INT(parses("verify x", &q, &err), -1);
	CHECK_EQ_STR(cnt_rank_qname(CNT_RANK_Q_AROUND), "around");
}

/* ---- bands and ranks in the head -------------------------------------- */

static void test_bands(void)
{
	cnt_view v;
	cnt_err err;
	uint8_t *img;
	uint64_t lo, hi;

	if (fx_open_cap3(&v, &img, &err) != 0) {
		CHECK(0);
		return;
	}
	/* members as built: p4 75 and p5 70 share [70, 80), three above */
	cnt_rank_band(&v, 75, 3, &lo, &hi);
	CHECK(lo == 4 && hi == 5);
	cnt_rank_band(&v, 70, 4, &lo, &hi);
	CHECK(lo == 4 && hi == 5);
	cnt_rank_band(&v, 40, 5, &lo, &hi);
	CHECK(lo == 6 && hi == 6);
	cnt_rank_band(&v, 10, 6, &lo, &hi);
	CHECK(lo == 7 && hi == 7);
	/* overlaid values: p6 40 -> 58, alone in [50, 60) */
	cnt_rank_band(&v, 58, 5, &lo, &hi);
	CHECK(lo == 6 && hi == 6);
	/* p5 70 -> 20: its old entry above is not someone else */
	cnt_rank_band(&v, 20, 4, &lo, &hi);
	CHECK(lo == 6 && hi == 6);
	/* a newcomer at 1, below the lowest edge: after all 7 */
	cnt_rank_band(&v, 1, -1, &lo, &hi);
	CHECK(lo == 8 && hi == 8);
	/* a newcomer past the top edge: first */
	cnt_rank_band(&v, 1000, -1, &lo, &hi);
	CHECK(lo == 1 && hi == 1);
	/* a newcomer in p4 and p5's bin shares it with both */
	cnt_rank_band(&v, 72, -1, &lo, &hi);
	CHECK(lo == 4 && hi == 6);
	/* p7 10 -> 5 (below the edges): the others are all above */
	cnt_rank_band(&v, 5, 6, &lo, &hi);
	CHECK(lo == 7 && hi == 7);
	cnt_view_close(&v);
	free(img);

	/* ascending order: smaller ranks higher, bins counted from below */
	{
		cnt_viewdesc d = fx_desc(1, CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, 1);
		static const fx_member m[] = {{"x", 1, 0}, {"y", 5, 0}, {"z", 9, 0}};
		static const int64_t edges[] = {1, 4, 7, 10};
		size_t len;

		CHECK_EQ_INT(fx_image(&d, m, 3, 1, edges, 3, &img, &len, &err), 0);
		CHECK_EQ_INT(cnt_view_open_mem(&v, img, len, "asc", 0, &err), 0);
		cnt_rank_band(&v, 5, 1, &lo, &hi);
		CHECK(lo == 2 && hi == 2);
		cnt_rank_band(&v, 0, -1, &lo, &hi);   /* below the edges: best */
		CHECK(lo == 1 && hi == 1);
		cnt_rank_band(&v, 50, -1, &lo, &hi);  /* above: worst */
		CHECK(lo == 4 && hi == 4);
		cnt_rank_band(&v, 8, 1, &lo, &hi);    /* y 5 -> 8: x above, z beside, y not counted */
		CHECK(lo == 2 && hi == 3);
		cnt_view_close(&v);
		free(img);
	}
}

/* The rank e (8, achieved at let) gets against rk's head under rule and
 * numbering, as a member new to the view. */
static int64_t rank_of(cnt_tie_break rule, cnt_rank_numbering num, int64_t value, int64_t let, const char *name,
	int64_t self)
{
	cnt_viewdesc d = fx_desc(0, rule, num, 10);
	const fx_member *m = rule == CNT_TIE_MEMBER_REF_ASC ? fx_rk_ref : fx_rk;
	cnt_view_entry me = {value, let, 0, (uint32_t)strlen(name), 0};
	cnt_view v;
	cnt_err err;
	uint8_t *img;
	size_t len;
	int64_t r = -99;

	if (fx_image(&d, m, 5, 5, fx_rk_edges, 3, &img, &len, &err) != 0)
		return -100;
	if (cnt_view_open_mem(&v, img, len, "rk", 0, &err) == 0) {
		if (cnt_rank_in_head(&v, &me, name, self, &r, &err) != 0)
			r = -98;
		cnt_view_close(&v);
	}
	free(img);
	return r;
}

static void test_rank_in_head(void)
{
	int64_t noon = FX_T0 + 120 * FX_MIN, half = FX_T0 + 30 * FX_MIN;

	/* e 2 + 6 = 8 with its last event still at 12:00 (tests/rank.bats) */
	CHECK_EQ_INT(rank_of(CNT_TIE_MEMBER_REF_ASC, CNT_RANK_COMPETITION, 8, noon, "e", 4), 2);
	CHECK_EQ_INT(rank_of(CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, 8, noon, "e", 4), 5);
	CHECK_EQ_INT(rank_of(CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_DENSE, 8, noon, "e", 4), 4);
	CHECK_EQ_INT(rank_of(CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_ORDINAL, 8, noon, "e", 4), 5);
	/* tied with b and d (8 at 10:30): their rank, under both sharing numberings */
	CHECK_EQ_INT(rank_of(CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, 8, half, "e", 4), 2);
	CHECK_EQ_INT(rank_of(CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_DENSE, 8, half, "e", 4), 2);
	CHECK_EQ_INT(rank_of(CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_ORDINAL, 8, half, "e", 4), 4);
	/* a newcomer "aa" at 10 ties a under member_ref only; "0" before all */
	CHECK_EQ_INT(rank_of(CNT_TIE_MEMBER_REF_ASC, CNT_RANK_COMPETITION, 10, noon, "aa", -1), 1);
	CHECK_EQ_INT(rank_of(CNT_TIE_MEMBER_REF_ASC, CNT_RANK_ORDINAL, 10, noon, "aa", -1), 2);
	CHECK_EQ_INT(rank_of(CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, 11, noon, "z", -1), 1);
	/* a moves down to 1: last, its own old entry not counted; dense
	 * continues from the member above as the view numbers it (e 4) */
	CHECK_EQ_INT(rank_of(CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, 1, noon, "a", 0), 5);
	CHECK_EQ_INT(rank_of(CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_DENSE, 1, noon, "a", 0), 5);
	/* a newcomer at 1: sixth of six */
	CHECK_EQ_INT(rank_of(CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, 1, noon, "n", -1), 6);
	/* beyond a head of 3: no exact rank */
	{
		cnt_view v;
		cnt_err err;
		uint8_t *img;
		cnt_view_entry me = {50, FX_T0, 0, 2, 0};
		int64_t r = 0;

		CHECK_EQ_INT(fx_open_cap3(&v, &img, &err), 0);
		CHECK_EQ_INT(cnt_rank_in_head(&v, &me, "p6", 5, &r, &err), 0);
		CHECK_EQ_INT(r, -1);
		me.value = 85;
		CHECK_EQ_INT(cnt_rank_in_head(&v, &me, "p6", 5, &r, &err), 0);
		CHECK_EQ_INT(r, 3);
		cnt_view_close(&v);
		free(img);
	}
}

/* ---- answers ---------------------------------------------------------- */

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -1;
	fputs(text, f);
	return fclose(f);
}

typedef struct ans {
	char json[4096], table[4096];
	int rc;
	cnt_err err;
} ans;

/* Asks line of cap3 at now, with the directory file dir (or NULL) and the
 * overlay file ov (or NULL). */
static uint64_t ask_offset;          /* --offset for the next questions */
static const char *ask_token;        /* the token the answers carry */

static ans ask(const char *line, int64_t now, const char *dir, const char *ov)
{
	static ans a;
	cnt_rank_question q;
	cnt_rank_answer r;
	cnt_rank_source src = {.overlay_fd = -1, .now = now};
	cnt_view v;
	uint8_t *img;
	cnt_buf b = CNT_BUF_INIT;
	cnt_rank_dir *d = NULL;

	memset(&a, 0, sizeof(a));
	a.rc = -1;
	if (parses(line, &q, &a.err) != 0 || fx_open_cap3(&v, &img, &a.err) != 0)
		return a;
	src.view = &v;
	q.offset = ask_offset;
	if (dir && (d = cnt_rank_dir_load(dir, &a.err)) == NULL)
		goto out;
	src.members = d;
	if (ov) {
		src.overlay_fd = open(ov, O_RDONLY);
		src.overlay_name = ov;
	}
	a.rc = cnt_rank_answer_question(&src, &q, &r, &a.err);
	if (a.rc == 0) {
		r.token = ask_token;
		CHECK_EQ_INT(cnt_rank_format_json(&r, &b), 0);
		snprintf(a.json, sizeof(a.json), "%.*s", (int)b.len, (const char *)b.p);
		b.len = 0;
		CHECK_EQ_INT(cnt_rank_format_table(&r, &b), 0);
		snprintf(a.table, sizeof(a.table), "%.*s", (int)b.len, (const char *)b.p);
	}
	cnt_rank_answer_release(&r);
	if (src.overlay_fd >= 0)
		close(src.overlay_fd);
out:
	cnt_rank_dir_free(d);
	cnt_buf_release(&b);
	cnt_view_close(&v);
	free(img);
	return a;
}

#define HEAD "{\"board\":\"b\",\"scope\":\"global\",\"version\":1,\"as_of\":\"2026-03-01T12:00:00.000Z\"," \
	"\"as_of_ms\":1772366400000,\"stale\":false,\"frozen\":false,\"verified\":false"
#define TFAST "  fast count"
#define THEAD "board b  scope global  version 1  as of 2026-03-01T12:00:00.000Z"
#define NOW (FX_T0 + 125 * FX_MIN)

static void test_answers(void)
{
	ans a;
	char dir[300];

	a = ask("top 2", NOW, NULL, NULL);
	CHECK_EQ_STR(a.json, HEAD ",\"top\":2,\"offset\":0,\"members\":7,\"estimate\":false,\"entries\":[{\"member_ref\":\"p1\",\"rank\":1,\"value\":100,\"estimate\":false,"
		"\"last_event_time\":1772359200000},{\"member_ref\":\"p2\",\"rank\":2,\"value\":90,\"estimate\":false,\"last_event_time\":1772359200000}]}\n");
	CHECK_EQ_STR(a.table, THEAD TFAST "\n"
		"       1  p1                                        100\n"
		"       2  p2                                         90\n");
	a = ask("top 50", NOW, NULL, NULL);
	CHECK(strstr(a.json, "\"top\":3,") != NULL);
	/* pages of the head (cap 3): positions offset + 1 .. */
	ask_offset = 1;
	a = ask("top 2", NOW, NULL, NULL);
	CHECK(strstr(a.json, "\"top\":2,\"offset\":1,\"members\":7,\"estimate\":false,\"entries\":[{\"member_ref\":\"p2\",\"rank\":2") != NULL);
	CHECK(strstr(a.json, "{\"member_ref\":\"p3\",\"rank\":3") != NULL);
	ask_offset = 2;
	a = ask("top 5", NOW, NULL, NULL);
	CHECK(strstr(a.json, "\"top\":1,\"offset\":2,") != NULL && strstr(a.json, "p2") == NULL);
	ask_offset = 3;
	a = ask("top 5", NOW, NULL, NULL);
	CHECK(strstr(a.json, "\"top\":0,\"offset\":3,\"members\":7,\"estimate\":false,\"entries\":[]}") != NULL);
	ask_offset = UINT64_MAX;   /* no overflow */
	a = ask("top 5", NOW, NULL, NULL);
	CHECK(strstr(a.json, "\"top\":0,") != NULL);
	ask_offset = 0;
	/* the token: after the version in JSON, the last line of the table */
	ask_token = "cnt1:b:global:1:00000000000000ff";
	a = ask("rank p3", NOW, NULL, NULL);
	CHECK(strncmp(a.json, "{\"board\":\"b\",\"scope\":\"global\",\"version\":1,\"token\":\"cnt1:b:global:1:00000000000000ff\","
		"\"as_of\"", 92) == 0);
	CHECK(strstr(a.table, "\ntoken cnt1:b:global:1:00000000000000ff\n") != NULL);
	ask_token = NULL;
	a = ask("rank p3", NOW, NULL, NULL);
	CHECK_EQ_STR(a.json, HEAD ",\"member_ref\":\"p3\",\"found\":true,\"value\":80,\"estimate\":false,\"kind\":\"exact\",\"rank\":3}\n");
	CHECK_EQ_STR(a.table, THEAD TFAST "\np3: value 80, rank 3\n");
	a = ask("rank p4", NOW, NULL, NULL);
	CHECK_EQ_STR(a.json, HEAD ",\"member_ref\":\"p4\",\"found\":true,\"value\":75,\"estimate\":false,\"kind\":\"band\",\"rank_band\":[4,5],"
		"\"top_percent_band\":[42.857,71.429]}\n");
	CHECK_EQ_STR(a.table, THEAD TFAST "\np4: value 75, rank between 4 and 5 (histogram band)\n");
	a = ask("value p6", NOW, NULL, NULL);
	CHECK_EQ_STR(a.json, HEAD ",\"member_ref\":\"p6\",\"found\":true,\"value\":40,\"estimate\":false}\n");
	CHECK_EQ_STR(a.table, THEAD TFAST "\np6: value 40\n");
	a = ask("rank nobody", NOW + 3600000, NULL, NULL);
	CHECK(strstr(a.json, "\"stale\":true") != NULL);
	CHECK(strstr(a.json, ",\"member_ref\":\"nobody\",\"found\":false}\n") != NULL);
	CHECK_EQ_STR(a.table, THEAD "  STALE" TFAST "\nnobody: not in this view\n");
	a = ask("around p4 1", NOW, NULL, NULL);
	CHECK(strstr(a.json, ",\"neighbourhood\":[{\"member_ref\":\"p3\",\"rank\":3,\"value\":80,\"estimate\":false,\"last_event_time\":1772359200000},"
		"{\"member_ref\":\"p4\",\"value\":75,\"estimate\":false,") != NULL);
	CHECK(strstr(a.table, "       -  p5                                         70\n") != NULL);
	a = ask("around nobody 1", NOW, NULL, NULL);
	CHECK(strstr(a.json, "\"found\":false}") != NULL);
	a = ask("verify", NOW, NULL, NULL);
	CHECK(strstr(a.json, ",\"intact\":true,\"members\":7,\"bytes\":") != NULL);
	/* the directory: names, opt-outs, the last line of a member wins */
	snprintf(dir, sizeof(dir), "%s/dir.jsonl", tmpdir);
	CHECK_EQ_INT(write_file(dir,
		"{\"member_ref\":\"p5\",\"display_name\":\"Old\"}\n"
		"\n"
		"{\"member_ref\":\"p1\",\"display_name\":\"Ada \\\"the first\\\"\"}\n"
		"{\"member_ref\":\"p3\",\"display_name\":\"Hidden\",\"opted_out\":true}\r\n"
		"{\"member_ref\":\"p5\",\"display_name\":\"Eve\"}\n"
		"{\"member_ref\":\"p6\",\"opted_out\":true}\n"), 0);
	a = ask("around p4 1", NOW, dir, NULL);
	CHECK(strstr(a.json, "\"neighbourhood\":[{\"member_ref\":\"p2\",\"rank\":2,") != NULL);
	CHECK(strstr(a.json, "{\"member_ref\":\"p5\",\"display_name\":\"Eve\",\"value\":70") != NULL);
	a = ask("around p5 1", NOW, dir, NULL);   /* p6 opted out: p7 after it */
	CHECK(strstr(a.json, "{\"member_ref\":\"p7\"") != NULL && strstr(a.json, "\"p6\"") == NULL);
	a = ask("around p3 1", NOW, dir, NULL);   /* the asker is always shown */
	CHECK(strstr(a.json, "\"member_ref\":\"p3\",\"display_name\":\"Hidden\"") != NULL);
	a = ask("top 1", NOW, dir, NULL);
	CHECK(strstr(a.json, "\"display_name\":\"Ada \\\"the first\\\"\"") != NULL);
	CHECK(strstr(a.table, "       1  Ada \"the first\"                           100\n") != NULL);
	CHECK_EQ_INT(write_file(dir, "{\"display_name\":\"x\"}\n"), 0);
	a = ask("top 1", NOW, dir, NULL);
	CHECK_EQ_INT(a.rc, -1);
	CHECK(strstr(a.err.msg, "dir.jsonl' line 1: expected a JSON object with member_ref") != NULL);
	CHECK_EQ_INT(write_file(dir, "{\"member_ref\":\"p1\"}\nnot json\n"), 0);
	a = ask("top 1", NOW, dir, NULL);
	CHECK(strstr(a.err.msg, "line 2: expected a JSON object") != NULL);
	snprintf(dir, sizeof(dir), "%s/none.jsonl", tmpdir);
	a = ask("top 1", NOW, dir, NULL);
	CHECK(strstr(a.err.msg, "cannot open the member directory '") == a.err.msg);
}

/* ---- the overlay ------------------------------------------------------ */

static cnt_slice sl(const char *s)
{
	return (cnt_slice){s, strlen(s)};
}

/* Writes events (member, delta, event_time, ingest_time, id) of tenant t,
 * counter pts. */
typedef struct ev {
	const char *member;
	int64_t delta, et, it;
	const char *id, *counter;
	int retraction;
} ev;

static int write_events(const char *path, const ev *evs, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cnt_err err;
	cnt_writer *w = fd < 0 ? NULL : cnt_event_writer_new(fd, path, CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	int rc = w ? 0 : -1;

	for (size_t i = 0; rc == 0 && i < n; i++) {
		cnt_event e;

		memset(&e, 0, sizeof(e));
		e.event_id = sl(evs[i].id);
		e.idempotency_key = sl(evs[i].id);
		e.tenant_id = sl("t");
		e.counter_id = sl(evs[i].counter ? evs[i].counter : "pts");
		e.counter_version = 1;
		e.member_ref = sl(evs[i].member);
		e.delta = evs[i].delta;
		e.event_time = evs[i].et;
		e.ingest_time = evs[i].it;
		if (evs[i].retraction)
			e.retracts = sl(evs[i].retraction == 2 ? "e5" : "x");
		rc = cnt_event_encode(&e, cnt_writer_buf(w)) || cnt_writer_commit(w, &err);
	}
	if (rc == 0)
		rc = cnt_writer_finish(w, &err);
	cnt_writer_free(w);
	if (fd >= 0)
		close(fd);
	return rc;
}

static void test_overlay(void)
{
	int64_t after = FX_T0 + 180 * FX_MIN, before = FX_T0 + 60 * FX_MIN;
	static ev evs[] = {
		{"p7", 85, FX_T0 + 150 * FX_MIN, 0, "e1", NULL, 0},
		{"p7", 85, FX_T0 + 150 * FX_MIN, 0, "e1", NULL, 0},        /* a redelivered copy */
		{"p7", 1000, FX_T0 + 150 * FX_MIN, 0, "e2", "other", 0},   /* another counter */
		{"p7", 500, FX_T0 + 150 * FX_MIN, 0, "e3", NULL, 1},       /* a retraction */
		{"p7", 700, FX_T0 + 10 * FX_MIN, 0, "e4", NULL, 0},        /* already in the view */
		{"p6", 18, FX_T0 + 150 * FX_MIN, 0, "e5", NULL, 0},
		{"p5", -50, FX_T0 + 150 * FX_MIN, 0, "e6", NULL, 0},
		{"newbie", 1, FX_T0 + 150 * FX_MIN, 0, "e7", NULL, 0},
	};
	char path[300];
	ans a;

	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
		evs[i].it = i == 4 ? before : after;
	snprintf(path, sizeof(path), "%s/later.avro", tmpdir);
	CHECK_EQ_INT(write_events(path, evs, sizeof(evs) / sizeof(evs[0])), 0);
	a = ask("rank p7", NOW, NULL, path);
	CHECK_EQ_INT(a.rc, 0);
	CHECK(strstr(a.json, ",\"member_ref\":\"p7\",\"overlay\":{\"events\":1,\"delta\":85,\"retracted\":0},\"found\":true,\"value\":95,\"estimate\":false,"
		"\"kind\":\"exact\",\"rank\":2}") != NULL);
	a = ask("rank p6", NOW, NULL, path);
	CHECK(strstr(a.json, "\"value\":58,\"estimate\":false,\"kind\":\"band\",\"rank_band\":[6,6]") != NULL);
	a = ask("rank p5", NOW, NULL, path);
	CHECK(strstr(a.json, "\"value\":20,\"estimate\":false,\"kind\":\"band\",\"rank_band\":[6,6]") != NULL);
	a = ask("rank newbie", NOW, NULL, path);
	CHECK(strstr(a.json, "\"found\":true,\"value\":1,\"estimate\":false,\"kind\":\"band\",\"rank_band\":[8,8],\"top_percent_band\":[87.500,100.000]") != NULL);
	a = ask("around newbie 1", NOW, NULL, path);
	CHECK_EQ_INT(a.rc, -1);
	CHECK_EQ_STR(a.err.msg, "around: 'newbie' is not in the view; ask for its rank instead");
	a = ask("rank p2", NOW, NULL, path);
	CHECK(strstr(a.json, "\"overlay\":{\"events\":0,\"delta\":0,\"retracted\":0},\"found\":true,\"value\":90,\"estimate\":false,\"kind\":\"exact\",\"rank\":2") != NULL);
	a = ask("value nobody", NOW, NULL, path);
	CHECK(strstr(a.json, "\"overlay\":{\"events\":0,\"delta\":0,\"retracted\":0},\"found\":false}") != NULL);
	/* a compensation of an overlay event (p6's e5) takes it out, before
	 * or after it; one of an event not in the overlay ("x") does nothing */
	{
		static ev cv[] = {
			{"p6", -18, FX_T0 + 150 * FX_MIN, 0, "c5", NULL, 2},
			{"p6", 18, FX_T0 + 150 * FX_MIN, 0, "e5", NULL, 0},
			{"p6", 7, FX_T0 + 151 * FX_MIN, 0, "e8", NULL, 0},
			{"p6", -500, FX_T0 + 150 * FX_MIN, 0, "c9", NULL, 1},
			{"p6", -18, FX_T0 + 150 * FX_MIN, 0, "c5", NULL, 2},   /* redelivered */
		};

		for (size_t i = 0; i < sizeof(cv) / sizeof(cv[0]); i++)
			cv[i].it = after;
		snprintf(path, sizeof(path), "%s/comp.avro", tmpdir);
		CHECK_EQ_INT(write_events(path, cv, sizeof(cv) / sizeof(cv[0])), 0);
		a = ask("value p6", NOW, NULL, path);
		CHECK(strstr(a.json, "\"overlay\":{\"events\":1,\"delta\":7,\"retracted\":1},\"found\":true,\"value\":47") != NULL);
	}
	/* not an event file */
	snprintf(path, sizeof(path), "%s/dir.jsonl", tmpdir);
	a = ask("rank p7", NOW, NULL, path);
	CHECK_EQ_INT(a.rc, -1);
}

int main(void)
{
	char cmd[128];

	setenv("TZDIR", "/usr/share/zoneinfo", 0);
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_questions);
	RUN(test_bands);
	RUN(test_rank_in_head);
	RUN(test_answers);
	RUN(test_overlay);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return unit_report("test_rank");
}
