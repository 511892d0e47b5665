/*
 * test_ahead.c - JSON lines and CSV read and parsed ahead (lib/ingest/ahead.h):
 * what it hands out is what the line reader and the parser give one line
 * at a time; lines that have come are not held back for the input to go
 * on; stopping does not wait for an idle writer.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "ingest/admit.h"
#include "ingest/ahead.h"
#include "ingest/input.h"
#include "ingest/rawevent.h"
#include "unit.h"

#define MAX 4096   /* longest line; longer ones are overlong */

static void slice(cnt_buf *b, cnt_slice s)
{
	char n[32];

	snprintf(n, sizeof(n), "%zu:", s.n);
	cnt_buf_append(b, n, strlen(n));
	if (s.n)
		cnt_buf_append(b, s.p, s.n);
	cnt_buf_append(b, "|", 1);
}

/* One line as text: its number, flags, bytes, and what the parser made
 * of it (the problem, or the fields, the attrs and the fingerprint). */
static void describe(cnt_buf *b, const cnt_line *l, const cnt_raw_event *raw, const cnt_raw_problem *pb,
	const cnt_fp *fp)
{
	char head[128];

	snprintf(head, sizeof(head), "%llu %d %zu ", (unsigned long long)l->no, l->overlong, l->n);
	cnt_buf_append(b, head, strlen(head));
	cnt_buf_append(b, l->p, l->n);
	if (cnt_line_blank(l) || l->overlong) {
		cnt_buf_append(b, "\n", 1);
		return;
	}
	snprintf(head, sizeof(head), " => %d ", (int)pb->status);
	cnt_buf_append(b, head, strlen(head));
	if (pb->status != CNT_RAW_OK) {
		cnt_buf_append(b, pb->msg, strlen(pb->msg));
	} else {
		slice(b, raw->idempotency_key);
		slice(b, raw->tenant_id);
		slice(b, raw->counter_id);
		slice(b, raw->member_ref);
		if (raw->nattrs > CNT_ATTRS_MAX) {
			/* more than admission takes: only their count (ahead.h) */
			snprintf(head, sizeof(head), "%zu attrs|", raw->nattrs);
			cnt_buf_append(b, head, strlen(head));
		} else {
			for (size_t i = 0; i < raw->nattrs; i++) {
				slice(b, raw->attr_keys[i]);
				slice(b, raw->attr_vals[i]);
			}
		}
		snprintf(head, sizeof(head), "%lld %lld %016llx%016llx", (long long)raw->delta,
			(long long)raw->event_time_ms, (unsigned long long)fp->hi, (unsigned long long)fp->lo);
		cnt_buf_append(b, head, strlen(head));
	}
	cnt_buf_append(b, "\n", 1);
}

/* Every line of fd, one at a time, as describe() has it. */
static int one_at_a_time(int fd, size_t max, cnt_buf *out)
{
	cnt_lines *l = cnt_lines_new(fd, "t", max, "", 0);
	cnt_jsonl *p = cnt_jsonl_new();
	cnt_line line;
	cnt_err err;
	long k;

	while ((k = cnt_lines_read(l, &line, 1, &err)) > 0) {
		cnt_raw_event raw;
		cnt_raw_problem pb;
		cnt_fp fp = {0, 0};

		if (!cnt_line_blank(&line) && !line.overlong &&
		    cnt_jsonl_parse(p, line.p, line.n, &raw, &pb) == CNT_RAW_OK)
			fp = cnt_admit_fp(&raw);
		describe(out, &line, &raw, &pb, &fp);
	}
	cnt_jsonl_free(p);
	cnt_lines_free(l);
	return (int)k;
}

/* text in a file, what one_at_a_time() makes of it in want, and the
 * file back at its start */
static int file_of(const cnt_buf *text, size_t max, cnt_buf *want)
{
	int fd = unit_file_of(text->p, text->len);

	CHECK_EQ_INT(one_at_a_time(fd, max, want), 0);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* through() reads CSV (cnt_ahead_start_csv), with these bytes as read
 * already, when csv_mode is set. */
static int csv_mode;
static const char *csv_pre = "";
static size_t csv_pren;
static cnt_err through_err;   /* through()'s error, when it returns -1 */

/* Every line of fd through a, as describe() has it; *chunks counted. */
static int through(cnt_ahead *a, int fd, size_t max, cnt_buf *out, int *chunks)
{
	cnt_ahead_chunk c;
	cnt_err err;
	int rc;

	*chunks = 0;
	if ((csv_mode ? cnt_ahead_start_csv(a, fd, "t", csv_pre, csv_pren, &err)
	              : cnt_ahead_start(a, fd, "t", max, "", 0, &err)) != 0)
		return -2;
	while ((rc = cnt_ahead_next(a, &c, &err)) > 0) {
		(*chunks)++;
		for (size_t i = 0; i < c.n; i++)
			describe(out, &c.line[i], &c.raw[i], &c.pb[i], &c.fp[i]);
	}
	through_err = err;
	/* the end stays the end */
	CHECK_EQ_INT(cnt_ahead_next(a, &c, &err), rc);
	cnt_ahead_stop(a);
	return rc;
}

/* A writer of text to a pipe, in pieces of uneven sizes. */
struct pieces {
	int fd;
	const cnt_buf *text;
};

static void *write_pieces(void *arg)
{
	struct pieces *w = arg;

	for (size_t at = 0, i = 0; at < w->text->len; i++) {
		size_t n = 1 + (i * 7919) % 70000;

		if (n > w->text->len - at)
			n = w->text->len - at;
		if (write(w->fd, w->text->p + at, n) != (ssize_t)n)
			break;
		at += n;
	}
	close(w->fd);
	return NULL;
}

/* through(), from a pipe that text is written to */
static int through_pipe(cnt_ahead *a, const cnt_buf *text, size_t max, cnt_buf *out, int *chunks)
{
	struct pieces w;
	pthread_t t;
	int p[2], rc;

	if (pipe(p) != 0)
		return -2;
	w.fd = p[1];
	w.text = text;
	pthread_create(&t, NULL, write_pieces, &w);
	rc = through(a, p[0], max, out, chunks);
	pthread_join(t, NULL);
	close(p[0]);
	return rc;
}

/* 20,000 lines of every kind: events (some with escapes, whose strings
 * are the parser's own copies, and attrs), malformed lines, bad fields,
 * blank lines, a CR at the end, overlong lines; a last line without its
 * newline.  The same text, lines, events and problems, in order, and
 * more than one chunk. */
static void test_same_as_one_at_a_time(void)
{
	cnt_buf text = CNT_BUF_INIT, want = CNT_BUF_INIT, got = CNT_BUF_INIT;
	cnt_ahead *a = cnt_ahead_new();
	int fd, chunks;

	for (int i = 0; i < 20000; i++) {
		char line[512];

		switch (i % 9) {
		case 0: snprintf(line, sizeof(line), "not json %d\n", i); break;
		case 1: snprintf(line, sizeof(line), "\n"); break;
		case 2: snprintf(line, sizeof(line), " \t\r\n"); break;
		case 3: snprintf(line, sizeof(line), "{\"idempotency_key\":\"k%d\",\"delta\":\"x\"}\n", i); break;
		case 4: snprintf(line, sizeof(line), "{\"idempotency_key\":\"k\\u00e9%d\",\"tenant_id\":\"t\\n\","
			"\"counter_id\":\"c\",\"member_ref\":\"m%d\",\"delta\":%d,"
			"\"event_time\":\"2026-03-01T10:00:00Z\",\"attrs\":{\"b\":\"x\\\"y\",\"a\":\"%d\"}}\r\n",
			i, i % 7, i, i); break;
		default: snprintf(line, sizeof(line), "{\"idempotency_key\":\"k%d\",\"tenant_id\":\"acme\","
			"\"counter_id\":\"distance_m\",\"member_ref\":\"m%d\",\"delta\":%d,"
			"\"event_time\":%d}\n", i, i % 101, i, 1772359200 + i); break;
		}
		cnt_buf_append(&text, line, strlen(line));
		if (i % 5000 == 17)
			for (int j = 0; j < MAX + 10; j++)
				cnt_buf_append(&text, j + 1 == MAX + 10 ? "\n" : "o", 1);
	}
	cnt_buf_append(&text, "{\"no\":\"newline\"}", 16);
	if (a == NULL)
		CHECK(0);
	fd = unit_file_of((const char *)text.p, text.len);
	CHECK_EQ_INT(one_at_a_time(fd, MAX, &want), 0);
	cnt_buf_putc(&want, 0);   /* a C string for strstr below */
	want.len--;
	lseek(fd, 0, SEEK_SET);
	CHECK_EQ_INT(through(a, fd, MAX, &got, &chunks), 0);
	CHECK(chunks > 5);
	CHECK(want.len > text.len);
	{
		/* the comparison covers parsed events, not only problems:
		 * 5 lines in 9 are events (and 1 in 9 a bad field) */
		size_t ok = 0;

		for (const char *q = (const char *)want.p; (q = strstr(q, " => 0 ")) != NULL; q++)
			ok++;
		CHECK(ok > 20000 * 5 / 9 - 10);
	}
	CHECK(got.len == want.len && memcmp(got.p, want.p, want.len) == 0);
	close(fd);
	/* the same from a pipe, whose lines come as they are written */
	got.len = 0;
	CHECK_EQ_INT(through_pipe(a, &text, MAX, &got, &chunks), 0);
	CHECK(got.len == want.len && memcmp(got.p, want.p, want.len) == 0);
	/* the reader is reused: a second input, an empty one */
	got.len = 0;
	fd = unit_file_of("", 0);
	CHECK_EQ_INT(through(a, fd, MAX, &got, &chunks), 0);
	CHECK_EQ_INT(chunks, 0);
	CHECK_EQ_INT(got.len, 0);
	close(fd);
	/* empty lines first: a chunk whose bytes have no memory yet */
	{
		static const char t[] = "\n\n{\"idempotency_key\":\"z\"}\n";

		got.len = want.len = 0;
		fd = unit_file_of(t, sizeof(t) - 1);
		CHECK_EQ_INT(one_at_a_time(fd, MAX, &want), 0);
		lseek(fd, 0, SEEK_SET);
		CHECK_EQ_INT(through(a, fd, MAX, &got, &chunks), 0);
		CHECK(want.len > 0 && got.len == want.len && memcmp(got.p, want.p, want.len) == 0);
		close(fd);
		fd = unit_file_of("\n\n", 2);
		CHECK_EQ_INT(through(a, fd, MAX, &got, &chunks), 0);
		CHECK_EQ_INT(chunks, 1);
		close(fd);
	}
	cnt_ahead_free(a);
	cnt_buf_release(&text);
	cnt_buf_release(&want);
	cnt_buf_release(&got);
}

/* Lines as cnt-ingest gets them (up to 1 MiB): 6,000 short ones, so that
 * one read holds more than a chunk's 2,048 lines and the rest wait for
 * the next chunk; then 3,000 of about 1 KiB and some of 12 KiB and
 * 300 KiB, all with escapes, so that chunks are cut at 1 MiB and the
 * decoded strings of a chunk are far apart; some with 3,000 attrs, so
 * that the parser's arrays grow past what it keeps (and it is made
 * again), and some with 64 ("note" and 63 more), the most a chunk keeps.
 * The same as one line at a time. */
static void test_long_lines(void)
{
	cnt_buf text = CNT_BUF_INIT, want = CNT_BUF_INIT, got = CNT_BUF_INIT, big = CNT_BUF_INIT;
	cnt_ahead *a = cnt_ahead_new();
	int fd, chunks;

	for (int i = 0; i < 300 * 1024 / 2; i++)
		cnt_buf_append(&big, i % 3 == 0 ? "\\u00e9" : i % 3 == 1 ? "\\\"" : "\\\\", i % 3 == 0 ? 6 : 2);
	for (int i = 0; i < 9000; i++) {
		char head[256];
		size_t pad = i < 6000 ? 0 : i % 97 == 0 ? 12 * 1024 : 1000;

		snprintf(head, sizeof(head), "{\"idempotency_key\":\"k%d\",\"tenant_id\":\"acme\","
			"\"counter_id\":\"distance_m\",\"member_ref\":\"m%d\",\"delta\":1,"
			"\"event_time\":\"2026-03-01T10:00:00Z\",\"attrs\":{\"note\":\"", i, i % 13);
		cnt_buf_append(&text, head, strlen(head));
		if (i >= 6000 && i % 1000 == 500)
			cnt_buf_append(&text, big.p, big.len);
		for (size_t k = 0; k < pad; k += 2)
			cnt_buf_append(&text, k % 10 ? "ab" : "\\n", 2);
		cnt_buf_append(&text, "\"", 1);
		for (int k = 0; k < (i % 1500 == 700 ? 3000 : i % 1500 == 701 ? CNT_ATTRS_MAX - 1 : 0); k++) {
			snprintf(head, sizeof(head), ",\"a%d\":\"v\\t%d\"", k, i + k);
			cnt_buf_append(&text, head, strlen(head));
		}
		cnt_buf_append(&text, "}}\n", 3);
	}
	if (a == NULL)
		CHECK(0);
	fd = file_of(&text, (size_t)1 << 20, &want);
	CHECK_EQ_INT(through(a, fd, (size_t)1 << 20, &got, &chunks), 0);
	/* 6,000 short lines need 3 chunks (1 MiB of them); the 5 MiB after
	 * them at least 5 */
	CHECK(chunks >= 8);
	CHECK(want.len > text.len);
	CHECK(got.len == want.len && memcmp(got.p, want.p, want.len) == 0);
	/* again through the same reader, whose parsers have grown */
	got.len = 0;
	lseek(fd, 0, SEEK_SET);
	CHECK_EQ_INT(through(a, fd, (size_t)1 << 20, &got, &chunks), 0);
	CHECK(got.len == want.len && memcmp(got.p, want.p, want.len) == 0);
	close(fd);
	cnt_ahead_free(a);
	cnt_buf_release(&text);
	cnt_buf_release(&want);
	cnt_buf_release(&got);
	cnt_buf_release(&big);
}

/* A regular file's chunks are full: 2,048 lines each but the last,
 * though a read of the line reader's own buffer (64 KiB with this MAX)
 * holds fewer lines (a pipe's chunk is what has come, test_idle_writer). */
static void test_full_chunks(void)
{
	cnt_buf text = CNT_BUF_INIT, want = CNT_BUF_INIT, got = CNT_BUF_INIT;
	cnt_ahead *a = cnt_ahead_new();
	cnt_ahead_chunk c;
	cnt_err err;
	int fd, rc, chunks = 0, short_ones = 0;

	for (int i = 0; i < 10000; i++) {
		char line[256];

		snprintf(line, sizeof(line), "{\"idempotency_key\":\"k%d\",\"tenant_id\":\"acme\","
			"\"counter_id\":\"c\",\"member_ref\":\"m%d\",\"delta\":%d}\n", i, i % 37, i % 5 + 1);
		cnt_buf_append(&text, line, strlen(line));
	}
	if (a == NULL)
		CHECK(0);
	fd = file_of(&text, MAX, &want);
	CHECK_EQ_INT(cnt_ahead_start(a, fd, "t", MAX, "", 0, &err), 0);
	while ((rc = cnt_ahead_next(a, &c, &err)) > 0) {
		chunks++;
		short_ones += c.n != 2048;
		for (size_t i = 0; i < c.n; i++)
			describe(&got, &c.line[i], &c.raw[i], &c.pb[i], &c.fp[i]);
	}
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(chunks, 5);
	CHECK_EQ_INT(short_ones, 1);
	CHECK(got.len == want.len && memcmp(got.p, want.p, want.len) == 0);
	cnt_ahead_stop(a);
	close(fd);
	cnt_ahead_free(a);
	cnt_buf_release(&text);
	cnt_buf_release(&want);
	cnt_buf_release(&got);
}

/* Lines of 64 attrs: a chunk of them (1 MiB of lines) holds about
 * 8 MiB, so 16 filled at once would hold some 130 MiB.  The caller
 * holds its first chunk while the reader fills what it may: it stops
 * at about 48 MiB, and lets go of the chunks' buffers to go on; what it
 * hands out is still the same as one line at a time. */
static void test_held(void)
{
	cnt_buf text = CNT_BUF_INIT, want = CNT_BUF_INIT, got = CNT_BUF_INIT;
	cnt_ahead *a = cnt_ahead_new();
	cnt_ahead_chunk c;
	cnt_err err;
	size_t peak = 0;
	int fd, rc, chunks;

	for (int i = 0; text.len < ((size_t)24 << 20); i++) {
		char head[256];

		snprintf(head, sizeof(head), "{\"idempotency_key\":\"k%d\",\"tenant_id\":\"acme\","
			"\"counter_id\":\"c\",\"member_ref\":\"m%d\",\"delta\":1,"
			"\"event_time\":\"2026-03-01T10:00:00Z\",\"attrs\":{", i, i % 13);
		cnt_buf_append(&text, head, strlen(head));
		for (int k = 0; k < CNT_ATTRS_MAX; k++) {
			snprintf(head, sizeof(head), "%s\"a%d\":\"\\t\"", k ? "," : "", k);
			cnt_buf_append(&text, head, strlen(head));
		}
		cnt_buf_append(&text, "}}\n", 3);
	}
	if (a == NULL)
		CHECK(0);
	fd = file_of(&text, (size_t)1 << 20, &want);
	CHECK_EQ_INT(cnt_ahead_start(a, fd, "t", (size_t)1 << 20, "", 0, &err), 0);
	CHECK_EQ_INT(cnt_ahead_next(a, &c, &err), 1);
	/* until the reader is over 48 MiB (30 s at most), then a while more
	 * for it to go on, if it would */
	for (int waited = 0; peak <= ((size_t)48 << 20) && waited < 30000; waited += 20) {
		usleep(20 * 1000);
		cnt_ahead_held(a, &peak);
	}
	CHECK(peak > ((size_t)48 << 20));
	usleep(300 * 1000);
	cnt_ahead_held(a, &peak);
	CHECK(peak <= ((size_t)64 << 20));
	do
		for (size_t i = 0; i < c.n; i++)
			describe(&got, &c.line[i], &c.raw[i], &c.pb[i], &c.fp[i]);
	while ((rc = cnt_ahead_next(a, &c, &err)) > 0);
	CHECK_EQ_INT(rc, 0);
	cnt_ahead_held(a, &peak);
	CHECK(peak <= ((size_t)64 << 20));
	CHECK(got.len == want.len && memcmp(got.p, want.p, want.len) == 0);
	/* the same reader again: stopped early, then the whole input, with
	 * what its chunks kept counted on */
	lseek(fd, 0, SEEK_SET);
	CHECK_EQ_INT(cnt_ahead_start(a, fd, "t", (size_t)1 << 20, "", 0, &err), 0);
	CHECK_EQ_INT(cnt_ahead_next(a, &c, &err), 1);
	usleep(100 * 1000);
	cnt_ahead_stop(a);
	lseek(fd, 0, SEEK_SET);
	got.len = 0;
	CHECK_EQ_INT(through(a, fd, (size_t)1 << 20, &got, &chunks), 0);
	cnt_ahead_held(a, &peak);
	CHECK(peak <= ((size_t)64 << 20));
	CHECK(cnt_ahead_held(a, NULL) <= ((size_t)64 << 20));
	CHECK(got.len == want.len && memcmp(got.p, want.p, want.len) == 0);
	cnt_ahead_stop(a);
	close(fd);
	cnt_ahead_free(a);
	cnt_buf_release(&text);
	cnt_buf_release(&want);
	cnt_buf_release(&got);
}

/* A writer that sends two lines (or what two says), then holds the pipe
 * open until told. */
struct idle {
	int fd, go[2];
	const char *two;
};

static void *write_idle(void *arg)
{
	struct idle *w = arg;
	const char *two = w->two ? w->two : "{\"idempotency_key\":\"a\"}\nnot json\n";
	char c;

	if (write(w->fd, two, strlen(two)) != (ssize_t)strlen(two))
		return NULL;
	if (read(w->go[0], &c, 1) < 0) {
		/* the pipe is closed all the same */
	}
	close(w->fd);
	return NULL;
}

/* Stops a, whose thread waits on the pipe (read end rd) that w writes,
 * while w is still idle; then lets w end.  (The caller's alarm(30) is
 * ended: a stop that waited for the writer would have hung.) */
static void stop_while_idle(cnt_ahead *a, struct idle *w, pthread_t t, int rd)
{
	usleep(50 * 1000);
	cnt_ahead_stop(a);
	alarm(0);
	if (write(w->go[1], "x", 1) != 1)
		CHECK(0);
	pthread_join(t, NULL);
	close(rd);
	close(w->go[0]);
	close(w->go[1]);
}

/* Lines that have come are handed out while the writer is idle; stopping
 * then, with the thread waiting on the pipe, does not wait for the writer;
 * and the reader is reusable afterwards. */
static void test_idle_writer(void)
{
	cnt_ahead *a = cnt_ahead_new();
	struct idle w;
	cnt_ahead_chunk c;
	cnt_err err;
	pthread_t t;
	int p[2];

	if (a == NULL || pipe(p) != 0 || pipe(w.go) != 0) {
		CHECK(0);
		return;
	}
	w.fd = p[1];
	w.two = NULL;
	alarm(30);   /* a reader that waits for the writer would hang: fail instead */
	pthread_create(&t, NULL, write_idle, &w);
	CHECK_EQ_INT(cnt_ahead_start(a, p[0], "pipe", MAX, "", 0, &err), 0);
	CHECK_EQ_INT(cnt_ahead_next(a, &c, &err), 1);
	CHECK_EQ_INT(c.n, 2);
	CHECK_EQ_INT(c.line[1].no, 2);
	CHECK_EQ_INT(c.pb[0].status, CNT_RAW_OK);
	CHECK_EQ_INT(c.pb[1].status, CNT_RAW_MALFORMED);
	/* the thread now waits on the pipe; the writer is still idle */
	stop_while_idle(a, &w, t, p[0]);
	/* a read error: a descriptor open for writing only */
	{
		int wo = open("/dev/null", O_WRONLY);

		CHECK_EQ_INT(cnt_ahead_start(a, wo, "w.jsonl", MAX, "", 0, &err), 0);
		CHECK_EQ_INT(cnt_ahead_next(a, &c, &err), -1);
		CHECK(strncmp(err.msg, "cannot read 'w.jsonl': ", 23) == 0);
		CHECK_EQ_INT(cnt_ahead_next(a, &c, &err), -1);
		cnt_ahead_stop(a);
		close(wo);
	}
	/* prefix bytes already read count as the input's first */
	{
		int fd = unit_file_of("\"x\"}\n", 5);

		CHECK_EQ_INT(cnt_ahead_start(a, fd, "f", MAX, "{\"idempotency_key\":", 19, &err), 0);
		CHECK_EQ_INT(cnt_ahead_next(a, &c, &err), 1);
		CHECK_EQ_INT(c.n, 1);
		CHECK(c.line[0].n == 23 && memcmp(c.line[0].p, "{\"idempotency_key\":\"x\"}", 23) == 0);
		CHECK_EQ_INT(cnt_ahead_next(a, &c, &err), 0);
		close(fd);
	}
	cnt_ahead_free(a);   /* stops the last input itself */
}

/* What cnt_csvin gives for text fed whole, row by row, as describe()
 * has it (a row is a line: its text, the line it starts on). */
static int csv_row(void *ctx, uint64_t no, const cnt_raw_event *ev, const cnt_raw_problem *pb,
	const char *text, size_t n)
{
	cnt_line l = {text, n, no, 0};
	cnt_fp fp = {0, 0};

	if (pb->status == CNT_RAW_OK)
		fp = cnt_admit_fp(ev);
	describe(ctx, &l, ev, pb, &fp);
	return 0;
}

static int csv_whole(const cnt_buf *text, cnt_buf *out, cnt_err *err)
{
	cnt_csvin *r = cnt_csvin_new();
	int rc = cnt_csvin_feed(r, text->p, text->len, csv_row, out, err);

	if (rc == 0)
		rc = cnt_csvin_finish(r, csv_row, out, err);
	cnt_csvin_free(r);
	return rc;
}

/* CSV read ahead: 20,000 rows of every kind (events with attrs columns,
 * quoted cells holding commas, quotes and newlines, so that a row spans
 * lines; rows of the wrong shape, 5,000 of them two bytes long; bad
 * fields; blank lines; CRLF), one row over 1 MiB,
 * and a last row without its newline: the same rows, line numbers,
 * events and problems as cnt_csvin fed the whole text at once, from a
 * file (full chunks), with bytes read already, and from a pipe.  A
 * header the reader refuses is the input's error, named; a read error
 * too.  Rows that have come are not held back for an idle writer. */
static void test_csv(void)
{
	cnt_buf text = CNT_BUF_INIT, want = CNT_BUF_INIT, got = CNT_BUF_INIT;
	cnt_ahead *a = cnt_ahead_new();
	cnt_err err;
	int fd, chunks;
	static const char head[] = "idempotency_key,tenant_id,counter_id,member_ref,delta,event_time,attrs.region,"
		"attrs.device\r\n";

	cnt_buf_append(&text, head, sizeof(head) - 1);
	for (int i = 0; i < 20000; i++) {
		char row[512];

		switch (i % 8) {
		case 0: snprintf(row, sizeof(row), "k%d,acme,distance_m,m%d\n", i, i); break;   /* too few cells */
		case 1: snprintf(row, sizeof(row), "\n"); break;
		case 2: snprintf(row, sizeof(row), "k%d,acme,distance_m,m%d,x,2026-03-01T10:00:00Z,eu,ios\n", i, i); break;
		case 3: snprintf(row, sizeof(row), "\"k\"\"%d\",acme,\"distance,m\",\"m\n%d\",%d,1772359200000,"
			"\"e\r\nu\",\r\n", i, i % 7, i); break;
		default: snprintf(row, sizeof(row), "k%d,acme,distance_m,m%d,%d,%d,eu,%s\n", i, i % 101, i,
			1772359200 + i, i % 2 ? "ios" : ""); break;
		}
		cnt_buf_append(&text, row, strlen(row));
		if (i == 5000)   /* rows of two bytes: the most a chunk's bytes can end */
			for (int j = 0; j < 5000; j++)
				cnt_buf_append(&text, "x\n", 2);
		if (i == 12345) {
			cnt_buf_append(&text, "k-long,acme,distance_m,", 23);
			for (int j = 0; j < (1 << 20) + 100; j++)
				cnt_buf_append(&text, "m", 1);
			cnt_buf_append(&text, ",1,1772359200000,eu,ios\n", 25);
		}
	}
	cnt_buf_append(&text, "k-last,acme,distance_m,m1,1,1772359200000,eu,ios", 48);
	CHECK_EQ_INT(csv_whole(&text, &want, &err), 0);
	CHECK(want.len > text.len / 2);
	{
		/* the comparison covers events, not only problems */
		size_t ok = 0;

		for (const char *q = (const char *)want.p; q < (const char *)want.p + want.len &&
		     (q = memmem(q, want.len - (size_t)(q - (const char *)want.p), " => 0 ", 6)) != NULL; q++)
			ok++;
		CHECK(ok > 20000 / 2);
	}
	if (a == NULL)
		CHECK(0);
	csv_mode = 1;
	fd = unit_file_of((const char *)text.p, text.len);
	CHECK_EQ_INT(through(a, fd, MAX, &got, &chunks), 0);
	/* 22,502 rows (a blank line is none), at most 2,048 a chunk */
	CHECK(chunks >= 11);
	CHECK(got.len == want.len && memcmp(got.p, want.p, want.len) == 0);
	/* the first bytes read already (as cnt-ingest's sniffing does) */
	got.len = 0;
	csv_pre = (const char *)text.p;
	csv_pren = 70000;
	lseek(fd, (off_t)csv_pren, SEEK_SET);
	CHECK_EQ_INT(through(a, fd, MAX, &got, &chunks), 0);
	CHECK(got.len == want.len && memcmp(got.p, want.p, want.len) == 0);
	csv_pre = "";
	csv_pren = 0;
	close(fd);
	/* from a pipe */
	got.len = 0;
	CHECK_EQ_INT(through_pipe(a, &text, MAX, &got, &chunks), 0);
	CHECK(got.len == want.len && memcmp(got.p, want.p, want.len) == 0);
	/* a header the reader refuses: the input's error, named */
	got.len = 0;
	fd = unit_file_of("tenant_id,tenant_id\nx,y\n", 24);
	CHECK_EQ_INT(through(a, fd, MAX, &got, &chunks), -1);
	CHECK_EQ_INT(got.len, 0);
	CHECK(strncmp(through_err.msg, "'t': ", 5) == 0);
	close(fd);
	/* an empty input: no rows, no error, as the reader fed nothing says */
	want.len = got.len = 0;
	{
		cnt_buf empty = CNT_BUF_INIT;
		int whole = csv_whole(&empty, &want, &err);

		fd = unit_file_of("", 0);
		CHECK_EQ_INT(through(a, fd, MAX, &got, &chunks), whole);
		close(fd);
	}
	csv_mode = 0;
	/* rows that have come are handed out while the writer is idle, and
	 * stopping then does not wait for it */
	{
		struct idle w;
		cnt_ahead_chunk c;
		pthread_t t;
		int p[2];

		if (pipe(p) != 0 || pipe(w.go) != 0)
			CHECK(0);
		w.fd = p[1];
		w.two = "idempotency_key,tenant_id\nk1,acme\n\"k\n2\",acme\n";
		alarm(30);
		pthread_create(&t, NULL, write_idle, &w);
		CHECK_EQ_INT(cnt_ahead_start_csv(a, p[0], "pipe", "", 0, &err), 0);
		CHECK_EQ_INT(cnt_ahead_next(a, &c, &err), 1);
		CHECK_EQ_INT(c.n, 2);
		CHECK_EQ_INT(c.line[1].no, 3);
		CHECK(c.pb[1].status == CNT_RAW_OK && c.raw[1].idempotency_key.n == 3 &&
		      memcmp(c.raw[1].idempotency_key.p, "k\n2", 3) == 0);
		stop_while_idle(a, &w, t, p[0]);
	}
	/* a read error */
	{
		int wo = open("/dev/null", O_WRONLY);
		cnt_ahead_chunk c;

		CHECK_EQ_INT(cnt_ahead_start_csv(a, wo, "w.csv", "", 0, &err), 0);
		CHECK_EQ_INT(cnt_ahead_next(a, &c, &err), -1);
		CHECK(strncmp(err.msg, "cannot read 'w.csv': ", 21) == 0);
		cnt_ahead_stop(a);
		close(wo);
	}
	cnt_ahead_free(a);
	cnt_buf_release(&text);
	cnt_buf_release(&want);
	cnt_buf_release(&got);
}

int main(void)
{
	RUN(test_same_as_one_at_a_time);
	RUN(test_long_lines);
	RUN(test_full_chunks);
	RUN(test_held);
	RUN(test_idle_writer);
	RUN(test_csv);
	return unit_report("test_ahead");
}
