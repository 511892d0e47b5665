/*
 * test_report.c - reject and duplicate records, and reject messages with
 * their summary (lib/ingest/report.h).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/report.h"
#include "unit.h"

static char *str_of(cnt_buf *b)
{
	cnt_buf_putc(b, '\0');
	b->len--;
	return (char *)b->p;
}

static void test_json_line(void)
{
	cnt_buf b = CNT_BUF_INIT;
	cnt_report_item it = {{"in \"1\".jsonl", 0, 7}, "bad_field", "delta", "field 'delta': \"x\"", 0, 0,
		0, {NULL, 0, 0}, "{\"delta\":\"x\"}", 13, 0};

	CHECK_EQ_INT(cnt_report_json(&b, &it), 0);
	CHECK_EQ_STR(str_of(&b), "{\"input\":\"in \\\"1\\\".jsonl\",\"line\":7,\"reason\":\"bad_field\","
		"\"field\":\"delta\",\"message\":\"field 'delta': \\\"x\\\"\",\"raw\":\"{\\\"delta\\\":\\\"x\\\"}\"}\n");
	/* quota: a retry hint, no field; Avro: a record number, raw as JSON */
	b.len = 0;
	it.at.record = 1;
	it.field = NULL;
	it.reason = "quota_exceeded";
	it.msg = "over";
	it.has_retry = 1;
	it.retry_after_ms = 250;
	it.raw_is_json = 1;
	CHECK_EQ_INT(cnt_report_json(&b, &it), 0);
	CHECK_EQ_STR(str_of(&b), "{\"input\":\"in \\\"1\\\".jsonl\",\"record\":7,\"reason\":\"quota_exceeded\","
		"\"message\":\"over\",\"retry_after_ms\":250,\"raw\":{\"delta\":\"x\"}}\n");
	/* a duplicate names the first copy; no raw is an empty string */
	b.len = 0;
	memset(&it, 0, sizeof(it));
	it.at.input = "-";
	it.at.n = 3;
	it.reason = "duplicate";
	it.msg = "seen";
	it.has_first = 1;
	it.first.input = "a.avro";
	it.first.record = 1;
	it.first.n = 1;
	CHECK_EQ_INT(cnt_report_json(&b, &it), 0);
	CHECK_EQ_STR(str_of(&b), "{\"input\":\"-\",\"line\":3,\"reason\":\"duplicate\",\"message\":\"seen\","
		"\"duplicate_of\":{\"input\":\"a.avro\",\"record\":1},\"raw\":\"\"}\n");
	/* control bytes and NULs of a raw line are escaped */
	b.len = 0;
	it.has_first = 0;
	it.raw = "a\0\x01\n";
	it.rawn = 4;
	CHECK_EQ_INT(cnt_report_json(&b, &it), 0);
	CHECK(strstr(str_of(&b), "\"raw\":\"a\\u0000\\u0001\\n\"}") != NULL);
	cnt_buf_release(&b);
}

static void test_message(void)
{
	cnt_buf b = CNT_BUF_INIT;
	cnt_report_item it = {{"day.jsonl", 0, 12}, "unknown_tenant", "tenant_id", "tenant 'x' is not declared",
		0, 0, 0, {NULL, 0, 0}, NULL, 0, 0};

	CHECK_EQ_INT(cnt_report_message(&b, &it), 0);
	CHECK_EQ_STR(str_of(&b), "'day.jsonl' line 12: rejected (unknown_tenant): tenant 'x' is not declared");
	b.len = 0;
	it.at.record = 1;
	CHECK_EQ_INT(cnt_report_message(&b, &it), 0);
	CHECK_EQ_STR(str_of(&b), "'day.jsonl' record 12: rejected (unknown_tenant): tenant 'x' is not declared");
	cnt_buf_release(&b);
}

/* Messages received, one per line. */
static cnt_buf said;

static void note(const char *msg)
{
	cnt_buf_append(&said, msg, strlen(msg));
	cnt_buf_putc(&said, '\n');
}

static int lines_of(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_messages_summed_up(void)
{
	cnt_report r;
	cnt_err err;
	uint64_t by[CNT_REJ_COUNT] = {0};
	cnt_report_item it = {{"f", 0, 0}, "malformed", NULL, "bad", 0, 0, 0, {NULL, 0, 0}, NULL, 0, 0};
	char *s;

	/* few: each one said, no summary */
	said.len = 0;
	cnt_report_init(&r, -1, NULL, note, 5);
	for (int i = 1; i <= 5; i++) {
		it.at.n = (uint64_t)i;
		CHECK_EQ_INT(cnt_report_add(&r, &it, &err), 0);
	}
	by[CNT_REJ_MALFORMED] = 5;
	CHECK_EQ_INT(cnt_report_finish(&r, by, &err), 0);
	s = str_of(&said);
	CHECK_EQ_INT(lines_of(s), 5);
	CHECK(strstr(s, "'f' line 5: rejected (malformed): bad\n") != NULL);
	cnt_report_release(&r);

	/* many: the first 5, one line saying the rest are counted, and a
	 * summary by reason at the end */
	said.len = 0;
	cnt_report_init(&r, -1, NULL, note, 5);
	for (int i = 1; i <= 100000; i++) {
		it.at.n = (uint64_t)i;
		it.reason = i % 10 ? "unknown_tenant" : "malformed";
		CHECK_EQ_INT(cnt_report_add(&r, &it, &err), 0);
	}
	by[CNT_REJ_MALFORMED] = 10000;
	by[CNT_REJ_UNKNOWN_TENANT] = 90000;
	CHECK_EQ_INT(cnt_report_finish(&r, by, &err), 0);
	s = str_of(&said);
	CHECK_EQ_INT(lines_of(s), 7);
	CHECK(strstr(s, "'f' line 5: rejected (unknown_tenant): bad\n"
		"more than 5 records rejected: the rest are counted and summed up at the end "
		"(-r FILE keeps every one)\n"
		"100000 records rejected, the first 5 shown; by reason: malformed 10000, unknown_tenant 90000\n") != NULL);
	cnt_report_release(&r);

	/* the default limit */
	said.len = 0;
	cnt_report_init(&r, -1, NULL, note, 0);
	for (int i = 0; i < 1000; i++)
		cnt_report_add(&r, &it, &err);
	CHECK_EQ_INT(lines_of(str_of(&said)), CNT_REPORT_MESSAGES + 1);
	cnt_report_release(&r);

	/* no note and no stream: only counted */
	said.len = 0;
	cnt_report_init(&r, -1, NULL, NULL, 0);
	CHECK_EQ_INT(cnt_report_add(&r, &it, &err), 0);
	CHECK_EQ_INT(cnt_report_finish(&r, by, &err), 0);
	CHECK_EQ_INT(r.added, 1);
	CHECK_EQ_INT(said.len, 0);
	cnt_report_release(&r);
	cnt_buf_release(&said);
}

static void test_stream(void)
{
	FILE *f = tmpfile();
	cnt_report r;
	cnt_err err;
	uint64_t by[CNT_REJ_COUNT] = {0};
	cnt_report_item it = {{"f", 0, 0}, "malformed", NULL, "bad", 0, 0, 0, {NULL, 0, 0}, "x", 1, 0};
	char line[256];
	int n = 0, ok = 1;

	if (f == NULL)
		return;
	cnt_report_init(&r, fileno(f), "rej.jsonl", note, 0);
	for (int i = 1; i <= 20000; i++) {
		it.at.n = (uint64_t)i;
		CHECK_EQ_INT(cnt_report_add(&r, &it, &err), 0);
	}
	CHECK_EQ_INT(cnt_report_finish(&r, by, &err), 0);
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		char want[256];

		snprintf(want, sizeof(want), "{\"input\":\"f\",\"line\":%d,\"reason\":\"malformed\","
			"\"message\":\"bad\",\"raw\":\"x\"}\n", ++n);
		ok &= strcmp(line, want) == 0;
	}
	CHECK_EQ_INT(n, 20000);
	CHECK(ok);
	CHECK_EQ_INT(said.len, 0);   /* a stream takes the place of messages */
	cnt_report_release(&r);
	fclose(f);
}

static void test_stream_write_error(void)
{
	int fd = open("/dev/full", O_WRONLY);
	cnt_report r;
	cnt_err err;
	uint64_t by[CNT_REJ_COUNT] = {0};
	cnt_report_item it = {{"f", 0, 1}, "malformed", NULL, "bad", 0, 0, 0, {NULL, 0, 0}, "x", 1, 0};
	int rc = 0;

	if (fd < 0)
		return;
	cnt_report_init(&r, fd, "/dev/full", NULL, 0);
	/* buffered at first; the 64 KiB write fails, or the last one */
	for (int i = 0; i < 100000 && rc == 0; i++)
		rc = cnt_report_add(&r, &it, &err);
	if (rc == 0)
		rc = cnt_report_finish(&r, by, &err);
	CHECK_EQ_INT(rc, -1);
	CHECK_EQ_INT(err.kind, CNT_ERR_IO);
	CHECK_EQ_STR(err.msg, "cannot write '/dev/full': No space left on device");
	cnt_report_release(&r);
	close(fd);
}

int main(void)
{
	RUN(test_json_line);
	RUN(test_message);
	RUN(test_messages_summed_up);
	RUN(test_stream);
	RUN(test_stream_write_error);
	return unit_report("test_report");
}
