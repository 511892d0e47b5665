/*
 * test_auditlog.c - the audit ledger (lib/correct/auditlog.h): appending
 * and reading back, the latest watermark per (tenant, counter), refusals
 * (a watermark going back, a duplicate id, empty fields), and corrupt
 * ledgers (a broken chain, a missing field, through and through_ms that
 * disagree, a torn last line).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "correct/auditlog.h"
#include "unit.h"

#define DAY INT64_C(86400000)
#define T0 INT64_C(1780963200000) /* 2026-06-09T00:00:00Z */

static char path[] = "/tmp/test_auditlog.XXXXXX";

static cnt_auditlog *reload(cnt_err *err)
{
	return cnt_auditlog_open(path, 0, err);
}

static int append(const cnt_audit_entry *e, cnt_err *err)
{
	cnt_auditlog *l = reload(err);
	char *line;
	int fd, rc = -1;

	if (l == NULL)
		return -1;
	line = cnt_auditlog_line(l, e, err);
	cnt_auditlog_free(l);
	if (line == NULL)
		return -1;
	fd = open(path, O_WRONLY | O_APPEND);
	if (fd >= 0) {
		rc = cnt_auditlog_append(fd, path, line, err);
		close(fd);
	}
	free(line);
	return rc;
}

static void write_file(const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

static cnt_audit_entry entry(const char *counter, int64_t through, const char *rid)
{
	cnt_audit_entry e = { NULL, "kahani", counter, through, T0 + DAY, "ivt-audit v3", 100, 7, rid };
	return e;
}

static void test_missing_and_empty(void)
{
	cnt_err err;
	cnt_auditlog *l = cnt_auditlog_open("/nonexistent/audits", 1, &err);

	CHECK(l != NULL);
	if (l != NULL) {
		CHECK_EQ_INT(cnt_auditlog_count(l), 0);
		CHECK(cnt_auditlog_latest(l, "kahani", "views") == NULL);
		cnt_auditlog_free(l);
	}
	CHECK(cnt_auditlog_open("/nonexistent/audits", 0, &err) == NULL);
	CHECK(strstr(err.msg, "/nonexistent/audits") != NULL);
}

static void test_append_and_latest(void)
{
	cnt_err err;
	cnt_audit_entry a = entry("views", T0, "r-0123456789abcdef0123456789abcdef");
	cnt_audit_entry b = entry("likes", T0 + DAY, NULL);
	cnt_audit_entry c = entry("views", T0 + DAY, NULL);
	cnt_auditlog *l;

	write_file("");
	CHECK_EQ_INT(append(&a, &err), 0);
	CHECK_EQ_INT(append(&b, &err), 0);
	CHECK_EQ_INT(append(&c, &err), 0);
	l = reload(&err);
	CHECK(l != NULL);
	if (l == NULL)
		return;
	CHECK_EQ_INT(cnt_auditlog_count(l), 3);
	const cnt_audit_entry *v = cnt_auditlog_latest(l, "kahani", "views");
	CHECK(v != NULL && v->through_ms == T0 + DAY && v->retraction_id == NULL);
	v = cnt_auditlog_at(l, 0);
	CHECK_EQ_STR(v->retraction_id, "r-0123456789abcdef0123456789abcdef");
	CHECK_EQ_INT(v->examined, 100);
	CHECK_EQ_INT(v->flagged, 7);
	CHECK(strncmp(v->audit_id, "a-", 2) == 0 && strlen(v->audit_id) == 34);
	CHECK(cnt_auditlog_latest(l, "kahani", "none") == NULL);
	CHECK(cnt_auditlog_at(l, 3) == NULL);
	cnt_auditlog_free(l);
}

static void test_refusals(void)
{
	cnt_err err;
	cnt_audit_entry back = entry("views", T0, NULL);
	cnt_audit_entry same = entry("views", T0 + DAY, NULL); /* same fields: same derived id */
	cnt_audit_entry empty = entry("", T0 + 2 * DAY, NULL);
	cnt_audit_entry over = entry("views", T0 + 2 * DAY, NULL);

	back.authority = "other"; /* a different id, but the watermark goes back */
	CHECK_EQ_INT(append(&back, &err), -1);
	CHECK(strstr(err.msg, "already audited through 2026-06-10T00:00:00.000Z") != NULL);
	CHECK_EQ_INT(append(&same, &err), -1);
	CHECK(strstr(err.msg, "already in the ledger") != NULL);
	CHECK_EQ_INT(append(&empty, &err), -1);
	over.flagged = 101;
	CHECK_EQ_INT(append(&over, &err), -1);
}

static void test_corrupt(void)
{
	cnt_err err;
	FILE *f = fopen(path, "r");
	char text[8192];
	size_t n = fread(text, 1, sizeof text - 1, f);
	char bad[8192];

	fclose(f);
	text[n] = 0;
	/* A changed watermark on line 1 breaks the chain at line 2. */
	snprintf(bad, sizeof bad, "%s", text);
	char *p = strstr(bad, "\"examined\":100");
	CHECK(p != NULL);
	if (p != NULL) {
		p[12] = '9';
		write_file(bad);
		CHECK(reload(&err) == NULL);
		CHECK(strstr(err.msg, "line 2") != NULL);
	}
	/* A torn last line. */
	snprintf(bad, sizeof bad, "%s", text);
	bad[n - 1] = 0;
	write_file(bad);
	CHECK(reload(&err) == NULL);
	CHECK(strstr(err.msg, "newline") != NULL);
	/* Not an audit record. */
	write_file("{\"prev\":\"00000000000000000000000000000000\"}\n");
	CHECK(reload(&err) == NULL);
	CHECK(strstr(err.msg, "not an audit record") != NULL);
	/* through and through_ms disagree. */
	write_file("{\"audit_id\":\"a-1\",\"tenant_id\":\"k\",\"counter_id\":\"v\","
		"\"through\":\"2026-06-09T00:00:00.000Z\",\"through_ms\":1,\"audited_at\":"
		"\"2026-06-09T00:00:00.000Z\",\"authority\":\"x\",\"examined\":1,\"flagged\":0,"
		"\"retraction_id\":null,\"prev\":\"00000000000000000000000000000000\"}\n");
	CHECK(reload(&err) == NULL);
	CHECK(strstr(err.msg, "does not match") != NULL);
	write_file(text);
	cnt_auditlog *l = reload(&err);
	CHECK(l != NULL);
	cnt_auditlog_free(l);
}

int main(void)
{
	int fd = mkstemp(path);

	if (fd < 0)
		return 1;
	close(fd);
	RUN(test_missing_and_empty);
	RUN(test_append_and_latest);
	RUN(test_refusals);
	RUN(test_corrupt);
	unlink(path);
	return unit_report("test_auditlog");
}
