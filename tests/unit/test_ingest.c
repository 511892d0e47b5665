/*
 * test_ingest.c - one admission run (lib/ingest/ingest.h): formats told
 * apart, framing, routing to the streams, the live-only quota, counts that
 * balance, and failures that stop a run.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "ingest/report.h"
#include "unit.h"

static const char defs_text[] =
	"{\"format\": \"cnt-definitions/1\","
	" \"tenants\": [{\"tenant_id\": \"t\", \"timezone\": \"UTC\", \"event_quota_per_s\": 2}],"
	" \"counters\": [{\"tenant_id\": \"t\", \"counter_id\": \"c\","
	"   \"versions\": [{\"version\": 1, \"type\": \"exact\"}]}]}";

/* 2026-03-01T12:00:00Z */
#define NOW INT64_C(1772366400000)

static cnt_defs *defs;

/* A file holding text, open for reading from its start. */
static int file_of(const char *text)
{
	FILE *f = tmpfile();
	int fd;

	if (f == NULL || fwrite(text, 1, strlen(text), f) != strlen(text) || fflush(f) != 0)
		return -1;
	fd = dup(fileno(f));
	fclose(f);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* What a stream file holds, as a string (the caller frees it). */
static char *contents(int fd)
{
	off_t n = lseek(fd, 0, SEEK_END);
	char *s = malloc((size_t)n + 1);

	if (s == NULL || pread(fd, s, (size_t)n, 0) != n)
		return NULL;
	s[n] = '\0';
	return s;
}

static int count(const char *s, const char *what)
{
	int n = 0;

	while ((s = strstr(s, what)) != NULL) {
		n++;
		s += strlen(what);
	}
	return n;
}

typedef struct run {
	cnt_ingest_cfg cfg;
	cnt_ingest *g;
	int out, rej, dup;
	cnt_err err;
} run;

static FILE *tmp[3];

static void start(run *r, int live, int64_t now)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 3; i++)
		tmp[i] = tmpfile();
	r->out = fileno(tmp[0]);
	r->rej = fileno(tmp[1]);
	r->dup = fileno(tmp[2]);
	r->cfg.admit.defs = defs;
	r->cfg.admit.now_ms = now;
	r->cfg.admit.max_past_ms = 7LL * 86400 * 1000;
	r->cfg.admit.max_future_ms = 60000;
	r->cfg.admit.live = live;
	r->cfg.out_fd = r->out;
	r->cfg.out_name = "out.avro";
	r->cfg.codec = CNT_CODEC_NULL;
	r->cfg.level = CNT_LEVEL_DEFAULT;
	r->cfg.rej_fd = r->rej;
	r->cfg.rej_name = "rej.jsonl";
	r->cfg.dup_fd = r->dup;
	r->cfg.dup_name = "dup.jsonl";
	r->cfg.hold_fd = -1;
	r->g = cnt_ingest_new(&r->cfg, &r->err);
	CHECK(r->g != NULL);
}

static int input(run *r, const char *name, const char *text)
{
	int fd = file_of(text), rc;

	rc = cnt_ingest_input_fd(r->g, fd, name, &r->err);
	close(fd);
	return rc;
}

static void stop(run *r)
{
	cnt_ingest_free(r->g);
	for (int i = 0; i < 3; i++)
		fclose(tmp[i]);
}

#define EV(key, extra) "{\"idempotency_key\":\"" key "\",\"tenant_id\":\"t\",\"counter_id\":\"c\"," \
	"\"member_ref\":\"m\",\"delta\":1,\"event_time\":\"2026-03-01T11:00:00Z\"" extra "}\n"

static void test_json_run(void)
{
	run r;
	const cnt_admit_stats *st;
	const cnt_ingest_input *in;
	size_t n;
	static const char after[] = "\n" EV("k3", "");
	size_t nx = 2000000;
	char *rej, *dup, *big = malloc(nx + sizeof(after));

	if (big == NULL)
		return;
	start(&r, 0, NOW);
	/* blank lines, a bad field, malformed, a duplicate, an overlong line */
	memset(big, 'x', nx);
	memcpy(big + nx, after, sizeof(after));
	CHECK_EQ_INT(input(&r, "a.jsonl", "\n" EV("k1", "") "  \t\r\n" EV("k2", ",\"delta\":\"5\"")
		"{\n" EV("k1", "")), 0);
	CHECK_EQ_INT(input(&r, "b.jsonl", big), 0);
	CHECK_EQ_INT(cnt_ingest_finish(r.g, &r.err), 0);
	st = cnt_ingest_stats(r.g);
	CHECK_EQ_INT(st->in, 6);
	CHECK_EQ_INT(st->accepted, 2);
	CHECK_EQ_INT(st->rejected, 3);
	CHECK_EQ_INT(st->duplicate, 1);
	CHECK_EQ_INT(st->by_reason[CNT_REJ_MALFORMED], 2);
	CHECK_EQ_INT(st->by_reason[CNT_REJ_BAD_FIELD], 1);
	CHECK_EQ_INT(cnt_ingest_blank_lines(r.g), 2);
	in = cnt_ingest_inputs(r.g, &n);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_STR(in[0].name, "a.jsonl");
	CHECK_EQ_INT(in[0].format, CNT_INPUT_JSON);
	CHECK_EQ_INT(in[0].records, 4);
	CHECK_EQ_INT(in[1].records, 2);
	rej = contents(r.rej);
	dup = contents(r.dup);
	CHECK(rej && strstr(rej, "{\"input\":\"a.jsonl\",\"line\":4,\"reason\":\"bad_field\",\"field\":\"delta\"") == rej);
	CHECK(rej && strstr(rej, "\"line\":5,\"reason\":\"malformed\"") != NULL);
	CHECK(rej && strstr(rej, "{\"input\":\"b.jsonl\",\"line\":1,\"reason\":\"malformed\","
		"\"message\":\"line longer than 1048576 bytes\"") != NULL);
	CHECK(dup && strstr(dup, "\"line\":6,\"reason\":\"duplicate\"") != NULL);
	CHECK(dup && strstr(dup, "\"duplicate_of\":{\"input\":\"a.jsonl\",\"line\":2}") != NULL);
	free(rej);
	free(dup);
	free(big);
	stop(&r);
}

/* The quota is a guard for live traffic: a replay of 10 events of a
 * tenant allowed 2 a second, all in one ingest second (a fixed now), is
 * admitted whole; the same input as live traffic is shed past 2. */
static void test_quota_live_only(void)
{
	char text[4096] = "";
	run r;

	for (int i = 0; i < 10; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), EV("q%d", ""), i);
	start(&r, 0, NOW);
	CHECK_EQ_INT(input(&r, "-", text), 0);
	CHECK_EQ_INT(cnt_ingest_finish(r.g, &r.err), 0);
	CHECK_EQ_INT(cnt_ingest_stats(r.g)->accepted, 10);
	stop(&r);
	/* by the clock as well (the events are old by then) */
	start(&r, 0, INT64_MIN);
	cnt_ingest_free(r.g);
	r.cfg.admit.max_past_ms = INT64_MAX;
	r.g = cnt_ingest_new(&r.cfg, &r.err);
	CHECK_EQ_INT(input(&r, "-", text), 0);
	CHECK_EQ_INT(cnt_ingest_finish(r.g, &r.err), 0);
	CHECK_EQ_INT(cnt_ingest_stats(r.g)->accepted, 10);
	stop(&r);
	start(&r, 1, NOW + 400);
	CHECK_EQ_INT(input(&r, "-", text), 0);
	CHECK_EQ_INT(cnt_ingest_finish(r.g, &r.err), 0);
	CHECK_EQ_INT(cnt_ingest_stats(r.g)->accepted, 2);
	CHECK_EQ_INT(cnt_ingest_stats(r.g)->by_reason[CNT_REJ_QUOTA], 8);
	{
		char *rej = contents(r.rej);

		CHECK(rej && count(rej, "\"retry_after_ms\":600,") == 8);
		free(rej);
	}
	stop(&r);
}

static void test_formats(void)
{
	run r;
	const cnt_ingest_input *in;
	size_t n;

	start(&r, 0, NOW);
	/* sniffed: CSV, JSON, an empty input (JSON); the name decides first */
	CHECK_EQ_INT(input(&r, "-", "idempotency_key,tenant_id,counter_id,member_ref,delta,event_time\n"
		"s1,t,c,m,1,2026-03-01T11:00:00Z\n"), 0);
	CHECK_EQ_INT(input(&r, "-", "  " EV("s2", "")), 0);
	CHECK_EQ_INT(input(&r, "-", ""), 0);
	CHECK_EQ_INT(input(&r, "x.csv", "idempotency_key,tenant_id,counter_id,member_ref,delta,event_time\n"), 0);
	in = cnt_ingest_inputs(r.g, &n);
	CHECK_EQ_INT(n, 4);
	CHECK_EQ_INT(in[0].format, CNT_INPUT_CSV);
	CHECK_EQ_INT(in[1].format, CNT_INPUT_JSON);
	CHECK_EQ_INT(in[2].format, CNT_INPUT_JSON);
	CHECK_EQ_INT(in[3].format, CNT_INPUT_CSV);
	CHECK_EQ_INT(cnt_ingest_finish(r.g, &r.err), 0);
	CHECK_EQ_INT(cnt_ingest_stats(r.g)->accepted, 2);
	stop(&r);
	/* a JSON file read as CSV (forced) stops at its "header" */
	start(&r, 0, NOW);
	cnt_ingest_free(r.g);
	r.cfg.format = CNT_INPUT_CSV;
	r.g = cnt_ingest_new(&r.cfg, &r.err);
	CHECK_EQ_INT(input(&r, "e.jsonl", EV("k", "") EV("k", "")), -1);
	CHECK(strncmp(r.err.msg, "'e.jsonl': line 1: CSV header: ", 31) == 0);
	CHECK_EQ_INT(r.err.kind, CNT_ERR_DATA);
	stop(&r);
	/* something that is not an Avro container, read as Avro */
	start(&r, 0, NOW);
	CHECK_EQ_INT(input(&r, "x.avro", "Obj"), -1);
	CHECK(strstr(r.err.msg, "x.avro") != NULL);
	stop(&r);
}

static int notes;
static char last_note[512];

static void note(const char *msg)
{
	notes++;
	snprintf(last_note, sizeof(last_note), "%s", msg);
}

static void test_messages(void)
{
	size_t cap = 300 * 8 + 1;
	char *text = malloc(cap);
	run r;

	if (text == NULL)
		return;
	text[0] = '\0';
	for (int i = 0; i < 300; i++)
		strcat(text, "{bad}\n\n");
	start(&r, 0, NOW);
	cnt_ingest_free(r.g);
	r.cfg.rej_fd = -1;
	r.cfg.note = note;
	r.g = cnt_ingest_new(&r.cfg, &r.err);
	CHECK_EQ_INT(input(&r, "m.jsonl", text), 0);
	CHECK_EQ_INT(notes, CNT_REPORT_MESSAGES + 1);
	CHECK_EQ_INT(cnt_ingest_finish(r.g, &r.err), 0);
	CHECK_EQ_INT(notes, CNT_REPORT_MESSAGES + 2);
	CHECK_EQ_STR(last_note, "300 records rejected, the first 200 shown; by reason: malformed 300");
	stop(&r);
	free(text);
}

static void test_failures(void)
{
	run r;
	int fd;

	/* an input that cannot be read */
	start(&r, 0, NOW);
	fd = open("/dev/null", O_WRONLY);
	CHECK_EQ_INT(cnt_ingest_input_fd(r.g, fd, "w.jsonl", &r.err), -1);
	CHECK(strncmp(r.err.msg, "cannot read 'w.jsonl': ", 23) == 0);
	close(fd);
	stop(&r);
	/* an event log that cannot be written: exit status 3's kind */
	start(&r, 0, NOW);
	cnt_ingest_free(r.g);
	fd = open("/dev/full", O_WRONLY);
	r.cfg.out_fd = fd;
	r.cfg.out_name = "/dev/full";
	r.g = cnt_ingest_new(&r.cfg, &r.err);
	CHECK_EQ_INT(input(&r, "a.jsonl", EV("k", "")), 0);
	CHECK_EQ_INT(cnt_ingest_finish(r.g, &r.err), -1);
	CHECK_EQ_INT(r.err.kind, CNT_ERR_IO);
	CHECK(strstr(r.err.msg, "/dev/full") != NULL);
	close(fd);
	stop(&r);
}

int main(void)
{
	cnt_err err;

	defs = cnt_defs_parse(defs_text, strlen(defs_text), "defs", &err);
	if (defs == NULL) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	RUN(test_json_run);
	RUN(test_quota_live_only);
	RUN(test_formats);
	RUN(test_messages);
	RUN(test_failures);
	cnt_defs_free(defs);
	return unit_report("test_ingest");
}
