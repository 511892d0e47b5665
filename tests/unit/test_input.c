/*
 * test_input.c - input formats and line framing (lib/ingest/input.h).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "avro/container.h"
#include "ingest/input.h"
#include "unit.h"

static void test_format_names(void)
{
	CHECK_EQ_INT(cnt_input_format_parse("json"), CNT_INPUT_JSON);
	CHECK_EQ_INT(cnt_input_format_parse("csv"), CNT_INPUT_CSV);
	CHECK_EQ_INT(cnt_input_format_parse("avro"), CNT_INPUT_AVRO);
	CHECK_EQ_INT(cnt_input_format_parse("auto"), -1);
	CHECK_EQ_INT(cnt_input_format_parse("JSON"), -1);
	CHECK_EQ_INT(cnt_input_format_parse(""), -1);
	CHECK_EQ_STR(cnt_input_format_name(CNT_INPUT_CSV), "csv");
	CHECK_EQ_STR(cnt_input_format_name(CNT_INPUT_AUTO), "auto");

	CHECK_EQ_INT(cnt_input_format_of_name("day.jsonl"), CNT_INPUT_JSON);
	CHECK_EQ_INT(cnt_input_format_of_name("day.ndjson"), CNT_INPUT_JSON);
	CHECK_EQ_INT(cnt_input_format_of_name("a/b.json"), CNT_INPUT_JSON);
	CHECK_EQ_INT(cnt_input_format_of_name("x.csv"), CNT_INPUT_CSV);
	CHECK_EQ_INT(cnt_input_format_of_name("x.avro"), CNT_INPUT_AVRO);
	CHECK_EQ_INT(cnt_input_format_of_name("-"), CNT_INPUT_AUTO);
	CHECK_EQ_INT(cnt_input_format_of_name("events.txt"), CNT_INPUT_AUTO);
	CHECK_EQ_INT(cnt_input_format_of_name("x.csv.gz"), CNT_INPUT_AUTO);
	CHECK_EQ_INT(cnt_input_format_of_name("dir.csv/events"), CNT_INPUT_AUTO);
	CHECK_EQ_INT(cnt_input_format_of_name(".csv"), CNT_INPUT_CSV);
}

static void test_sniff(void)
{
	CHECK_EQ_INT(cnt_input_sniff("Obj\x01\x04", 5), CNT_INPUT_AVRO);
	CHECK_EQ_INT(cnt_input_sniff("Obj\x02", 4), CNT_INPUT_CSV);
	CHECK_EQ_INT(cnt_input_sniff("Obj", 3), CNT_INPUT_CSV);
	CHECK_EQ_INT(cnt_input_sniff("{\"a\"", 4), CNT_INPUT_JSON);
	CHECK_EQ_INT(cnt_input_sniff(" \r\n\t{", 5), CNT_INPUT_JSON);
	CHECK_EQ_INT(cnt_input_sniff("", 0), CNT_INPUT_JSON);
	CHECK_EQ_INT(cnt_input_sniff("\n\n", 2), CNT_INPUT_JSON);
	CHECK_EQ_INT(cnt_input_sniff("item,delta", 10), CNT_INPUT_CSV);
	CHECK_EQ_INT(cnt_input_sniff("\0\0\0\0", 4), CNT_INPUT_CSV);
	CHECK_EQ_INT(cnt_input_sniff("[{}]", 4), CNT_INPUT_CSV);
}

/* Reads every line of fd (max bytes a line), at most batch a call, into
 * out as "NO:TEXT|" or "NO:!TEXT|" for an overlong one. */
static long all_lines(int fd, size_t max, const char *pre, size_t batch, char *out, size_t cap)
{
	cnt_lines *l = cnt_lines_new(fd, "t", max, pre, strlen(pre));
	cnt_line lines[8];
	cnt_err err;
	long k, total = 0;
	size_t o = 0;

	out[0] = '\0';
	if (l == NULL)
		return -2;
	while ((k = cnt_lines_read(l, lines, batch, &err)) > 0) {
		CHECK(k <= (long)batch);
		for (long i = 0; i < k; i++) {
			int w = snprintf(out + o, cap - o, "%llu:%s%.*s|", (unsigned long long)lines[i].no,
				lines[i].overlong ? "!" : "", (int)lines[i].n, lines[i].p);

			if (w > 0 && (size_t)w < cap - o)
				o += (size_t)w;
		}
		total += k;
	}
	cnt_lines_free(l);
	return k < 0 ? -1 : total;
}

static void test_lines(void)
{
	char out[4096];
	int fd;

	fd = unit_file_of("a\n\nbc\r\nlast", 11);
	CHECK_EQ_INT(all_lines(fd, 100, "", 8, out, sizeof(out)), 4);
	CHECK_EQ_STR(out, "1:a|2:|3:bc\r|4:last|");
	close(fd);
	/* one line a call; a prefix already read */
	fd = unit_file_of("c\nd\n", 4);
	CHECK_EQ_INT(all_lines(fd, 100, "a\nb", 1, out, sizeof(out)), 3);
	CHECK_EQ_STR(out, "1:a|2:bc|3:d|");
	close(fd);
	/* an empty input has no line; one newline is one empty line */
	fd = unit_file_of("", 0);
	CHECK_EQ_INT(all_lines(fd, 100, "", 8, out, sizeof(out)), 0);
	close(fd);
	fd = unit_file_of("\n", 1);
	CHECK_EQ_INT(all_lines(fd, 100, "", 8, out, sizeof(out)), 1);
	CHECK_EQ_STR(out, "1:|");
	close(fd);
	/* longer than max: overlong, the next lines as usual */
	fd = unit_file_of("12345\n123456\n1234567890123\nok\n123456", 36);
	CHECK_EQ_INT(all_lines(fd, 5, "", 8, out, sizeof(out)), 5);
	CHECK_EQ_STR(out, "1:12345|2:!123456|3:!1234567890123|4:ok|5:!123456|");
	close(fd);
}

/* Lines across many reads and buffer refills: 200,000 lines of lengths
 * 0 to 99, and a few longer than the limit. */
static void test_lines_many(void)
{
	size_t n = 0, cap = 12u << 20;
	char *text = malloc(cap);
	cnt_lines *l;
	cnt_line lines[16];
	cnt_err err;
	uint64_t want = 0, got_overlong = 0;
	long k;
	int fd, bad = 0;

	if (text == NULL)
		return;
	for (int i = 0; i < 200000; i++) {
		size_t len = (size_t)(i * 7919) % 100;

		if (i % 50000 == 7)
			len = 70000;   /* over the 65536 limit */
		memset(text + n, 'a' + i % 26, len);
		n += len;
		text[n++] = '\n';
	}
	fd = unit_file_of(text, n);
	l = cnt_lines_new(fd, "t", 65536, "", 0);
	while ((k = cnt_lines_read(l, lines, 16, &err)) > 0) {
		for (long i = 0; i < k; i++) {
			size_t len = (size_t)(want * 7919) % 100;

			if (want % 50000 == 7) {
				len = CNT_LINE_KEEP;
				got_overlong += lines[i].overlong;
			}
			if (lines[i].no != want + 1 || lines[i].n != len ||
			    (len && (lines[i].p[0] != (char)('a' + want % 26) || lines[i].p[len - 1] != lines[i].p[0])))
				bad++;
			want++;
		}
	}
	CHECK_EQ_INT(k, 0);
	CHECK_EQ_INT(want, 200000);
	CHECK_EQ_INT(got_overlong, 4);
	CHECK_EQ_INT(bad, 0);
	cnt_lines_free(l);
	close(fd);
	free(text);
}

/* Reading into the caller's buffers (cnt_lines_into), turn about with
 * the reader's own, as cnt-ingest's chunks do: lines stay in the buffer
 * they were read into, at the offsets they were handed out at, however
 * often it is read into and grows; what was read beyond a buffer's last
 * line goes on to the next; reads ask for no more than the step; and an
 * overlong line skipped in a buffer does not grow it by the line.  The same lines as one reader's own buffer. */
static void test_lines_into(void)
{
	char *text = malloc(40u << 20);   /* about 15 MiB of lines and 5 overlong */
	size_t n = 0;
	cnt_buf b[3] = {CNT_BUF_INIT, CNT_BUF_INIT, CNT_BUF_INIT};
	cnt_line got[64];
	cnt_err err;
	cnt_lines *l;
	uint64_t want = 0;
	size_t off[64 * 40];
	long k = 1;
	int fd, bad = 0, round = 0;

	if (text == NULL)
		return;
	for (int i = 0; i < 100000; i++) {
		size_t len = (size_t)(i * 7919) % 300;

		if (i % 20000 == 11)
			len = 3u << 20;   /* 3 MiB: over the 1 MiB limit */
		memset(text + n, 'a' + i % 26, len);
		n += len;
		text[n++] = '\n';
	}
	/* its first 1,000 bytes already read (a prefix, in the reader's own
	 * buffer first) */
	fd = unit_file_of(text + 1000, n - 1000);
	l = cnt_lines_new(fd, "t", 1u << 20, text, 1000);
	while (k > 0) {
		cnt_buf *to = &b[round % 3];
		size_t step = 1000 + (size_t)round * 37 % 5000, lines = 0;

		CHECK_EQ_INT(cnt_lines_into(l, to, step), 0);
		/* up to 40 calls a buffer, each after what is in it */
		for (int call = 0; call < 40; call++) {
			int overlong = 0;

			if ((k = cnt_lines_read(l, got, 64, &err)) <= 0)
				break;
			for (long i = 0; i < k; i++) {
				off[lines++] = (size_t)(got[i].p - (const char *)to->p);
				overlong |= got[i].overlong;
			}
			/* what is left after the last line came with the last
			 * read (fewer than 64 lines: no line is left whole, and
			 * lines are shorter than a step) */
			if (k < 64 && !overlong && to->len - off[lines - 1] - got[k - 1].n > step)
				bad++;
		}
		/* skipping 3 MiB did not grow the buffer by it */
		if (to->cap > (2u << 20))
			bad++;
		for (size_t i = 0; i < lines; i++, want++) {
			size_t len = (size_t)(want * 7919) % 300;
			const char *p = (const char *)to->p + off[i];

			if (want % 20000 == 11)
				len = CNT_LINE_KEEP;
			for (size_t j = 0; j < len; j++)
				if (p[j] != (char)('a' + want % 26)) {
					bad++;
					break;
				}
		}
		/* every other round, back to the reader's own buffer */
		if (round++ % 2 == 1)
			CHECK_EQ_INT(cnt_lines_into(l, NULL, 0), 0);
	}
	CHECK_EQ_INT(k, 0);
	CHECK_EQ_INT(want, 100000);
	CHECK_EQ_INT(bad, 0);
	CHECK(round > 100);
	cnt_lines_free(l);
	close(fd);
	for (int i = 0; i < 3; i++)
		cnt_buf_release(&b[i]);
	free(text);
}

/* A writer that sends 3 MiB without a newline, then holds the pipe open
 * until told to stop: the overlong line must come out before the end. */
struct endless {
	int fd, stop[2];
};

static void *write_endless(void *arg)
{
	struct endless *e = arg;
	static char x[65536];
	char c;

	memset(x, 'z', sizeof(x));
	for (int i = 0; i < 48; i++)
		if (write(e->fd, x, sizeof(x)) != (ssize_t)sizeof(x))
			break;
	/* hold the pipe open until the reader has seen the line */
	if (read(e->stop[0], &c, 1) < 0) {
		/* nothing to do */
	}
	if (write(e->fd, "\nafter\n", 7) != 7) {
		/* the check below fails */
	}
	close(e->fd);
	return NULL;
}

static void test_lines_endless(void)
{
	struct endless e;
	int p[2];
	pthread_t t;
	cnt_lines *l;
	cnt_line line;
	cnt_err err;

	if (pipe(p) != 0 || pipe(e.stop) != 0)
		return;
	e.fd = p[1];
	alarm(30);   /* a reader waiting for the end would hang: fail instead */
	pthread_create(&t, NULL, write_endless, &e);
	l = cnt_lines_new(p[0], "pipe", 1u << 20, "", 0);
	CHECK_EQ_INT(cnt_lines_read(l, &line, 1, &err), 1);
	CHECK_EQ_INT(line.overlong, 1);
	CHECK_EQ_INT(line.no, 1);
	CHECK_EQ_INT(line.n, CNT_LINE_KEEP);
	CHECK(line.p[0] == 'z' && line.p[CNT_LINE_KEEP - 1] == 'z');
	if (write(e.stop[1], "x", 1) != 1)
		CHECK(0);
	/* the rest of the overlong line is skipped; then lines as usual */
	CHECK_EQ_INT(cnt_lines_read(l, &line, 1, &err), 1);
	CHECK_EQ_INT(line.overlong, 0);
	CHECK_EQ_INT(line.no, 2);
	CHECK(line.n == 5 && memcmp(line.p, "after", 5) == 0);
	CHECK_EQ_INT(cnt_lines_read(l, &line, 1, &err), 0);
	pthread_join(t, NULL);
	alarm(0);
	cnt_lines_free(l);
	close(p[0]);
	close(e.stop[0]);
	close(e.stop[1]);
}

static void test_read_error(void)
{
	cnt_lines *l;
	cnt_line line;
	cnt_err err;
	char buf[4];
	/* a descriptor open for writing only cannot be read */
	int fd = open("/dev/null", O_WRONLY);

	l = cnt_lines_new(fd, "w.jsonl", 100, "", 0);
	CHECK_EQ_INT(cnt_lines_read(l, &line, 1, &err), -1);
	CHECK(strncmp(err.msg, "cannot read 'w.jsonl': ", 23) == 0);
	CHECK_EQ_INT(err.kind, CNT_ERR_DATA);
	CHECK_EQ_INT(cnt_input_read(fd, "w", buf, sizeof(buf), &err), -1);
	cnt_lines_free(l);
	close(fd);
}

/* Writes n bytes of lines of `len` bytes (the last n % len bytes a line
 * unended) to a new temporary file named in name. */
static int lines_file(char *name, size_t n, size_t len)
{
	char *p = malloc(n ? n : 1);
	int fd = mkstemp(name), ok;

	if (p == NULL || fd < 0) {
		free(p);
		return -1;
	}
	memset(p, 'x', n);
	for (size_t i = len - 1; i < n; i += len)
		p[i] = '\n';
	/* flushed, so that st_blocks counts the bytes */
	ok = write(fd, p, n) == (ssize_t)n && fsync(fd) == 0;
	free(p);
	close(fd);
	return ok ? 0 : -1;
}

/* Files that are not Avro are judged by their first 64 KiB's lines. */
static void test_expected(void)
{
	char a[] = "/tmp/test_input.XXXXXX", b[] = "/tmp/test_input.XXXXXX", c[] = "/tmp/test_input.XXXXXX";
	char none[] = "/nonexistent/file", null[] = "/dev/null";
	char *names[5] = {a, none, null, b, c};
	size_t e;

	/* read whole: its lines, the last unended one too */
	CHECK(lines_file(a, 1050, 100) == 0 && lines_file(b, 1 << 20, 100) == 0 && lines_file(c, 200000, 200000) == 0);
	CHECK_EQ_INT(cnt_input_expected_events(names, 1), 11);
	CHECK_EQ_INT(cnt_input_expected_events(names, 3), 11);
	CHECK_EQ_INT(cnt_input_expected_events(names, 0), 0);
	/* 1 MiB of 100-byte lines, 10,485 of them: from 64 KiB, an eighth more */
	e = cnt_input_expected_events(names + 3, 1);
	CHECK(e >= 10485 && e <= 10485 * 9 / 8 + 1);
	/* one line of 200,000 bytes: none ends in the first 64 KiB */
	CHECK_EQ_INT(cnt_input_expected_events(names + 4, 1), 4);
	CHECK_EQ_INT(cnt_input_expected_events(names, 5), 11 + e + 4);
	unlink(a);
	unlink(b);
	unlink(c);
	/* 16-byte lines claim an event in 17 bytes (and an eighth more); the
	 * file counts one in 32 bytes it holds (test_filehead has the bound) */
	{
		char d[] = "/tmp/test_input.XXXXXX", *big[1] = {d};
		struct stat sb;

		CHECK(lines_file(d, 1 << 20, 17) == 0 && stat(d, &sb) == 0);
		CHECK_EQ_INT(cnt_input_expected_events(big, 1),
			((uint64_t)sb.st_blocks * 512 < (1 << 20) ? (uint64_t)sb.st_blocks * 512 : (1 << 20)) / 32);
		unlink(d);
	}
	/* the rule at its bounds; "0123456789abcdef" is the shortest line counted */
	CHECK_EQ_INT(cnt_input_line_events("0123456789abcdef\n0123456789abcdef\n", 34, 34), 2);
	CHECK_EQ_INT(cnt_input_line_events("0123456789abcdef\n0123456789abcdef", 33, 33), 2);
	CHECK_EQ_INT(cnt_input_line_events("0123456789abcdef\n0123456789abcde", 32, 32), 1);
	CHECK_EQ_INT(cnt_input_line_events("0123456789abcde\n\n\r\n", 19, 19), 0);  /* blank or short */
	CHECK_EQ_INT(cnt_input_line_events("0123456789abcdef\n", 17, 17), 1);
	CHECK_EQ_INT(cnt_input_line_events("0123456789abcdef\n", 17, 170), 11);   /* 1 in 17 bytes * 10 * 9/8 */
	CHECK_EQ_INT(cnt_input_line_events("\n\n\n\n", 4, 8000), 2001);          /* none counted: size / n + 1 */
	CHECK_EQ_INT(cnt_input_line_events("abcd", 4, UINT64_MAX), UINT64_MAX / 4 + 1);
}

/* A file python3-avro wrote: the estimate is its records within a factor
 * of two (its blocks differ in size), and as a named input it replaces the
 * 200-byte rule. */
static void test_expected_fixture(void)
{
	char path[256], *names[1] = {path};
	static unsigned char head[65536];
	struct stat sb;
	size_t n = 0, e;
	FILE *f;

	snprintf(path, sizeof(path), "tests/fixtures/events.null.avro");
	if (stat(path, &sb) != 0)
		snprintf(path, sizeof(path), "../../tests/fixtures/events.null.avro");
	CHECK(stat(path, &sb) == 0);
	f = fopen(path, "rb");
	CHECK(f != NULL);
	if (f != NULL) {
		n = fread(head, 1, sizeof(head), f);
		fclose(f);
	}
	e = cnt_input_expected_events(names, 1);
	/* 40 records in 9,161 bytes, judged by the first block, not by the
	 * bytes that happen to be line ends (49) */
	CHECK(e >= 20 && e <= 80);
	CHECK_EQ_INT(e, cnt_container_guess_records(head, n, (uint64_t)sb.st_size));
	CHECK(e != cnt_input_line_events(head, n, (uint64_t)sb.st_size));
}

/* "-" names standard input, even with a file of that name at hand */
static void test_expected_dash(void)
{
	char dir[] = "/tmp/test_input.XXXXXX", dash[] = "-", *names[1] = {dash};
	int here = open(".", O_RDONLY | O_DIRECTORY), fd;

	CHECK(here >= 0 && mkdtemp(dir) != NULL && chdir(dir) == 0);
	fd = open("-", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, "0123456789abcdefghij\n0123456789abcdefghij\n", 42) == 42);
	close(fd);
	CHECK_EQ_INT(cnt_input_line_events("0123456789abcdefghij\n0123456789abcdefghij\n", 42, 42), 2);
	CHECK_EQ_INT(cnt_input_expected_events(names, 1), 0);
	unlink("-");
	CHECK(fchdir(here) == 0);
	rmdir(dir);
	close(here);
}

int main(void)
{
	RUN(test_format_names);
	RUN(test_sniff);
	RUN(test_lines);
	RUN(test_lines_many);
	RUN(test_lines_into);
	RUN(test_lines_endless);
	RUN(test_read_error);
	RUN(test_expected);
	RUN(test_expected_fixture);
	RUN(test_expected_dash);
	return unit_report("test_input");
}
