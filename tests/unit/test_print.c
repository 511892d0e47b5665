/*
 * test_print.c - container inputs printed as text (lib/avro/print.h):
 * JSON lines, CSV, --head across inputs, --count, headers, the records
 * before a damaged block written and nothing after, a failed write named
 * as an output error, and the reader schema for --as / --reader-schema.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "avro/container.h"
#include "avro/encoding.h"
#include "avro/print.h"
#include "unit.h"

static const char schema[] =
	"{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"n\",\"type\":\"long\"},"
	"{\"name\":\"s\",\"type\":\"string\"}]}";

/* A container of n records {n: i, s: "r<i>"} in a temporary file, blocks of
 * block_bytes; returns a descriptor at offset 0. */
static int container(int n, size_t block_bytes)
{
	char path[] = "/tmp/test_print.XXXXXX";
	int fd = mkstemp(path);
	cnt_err err;
	cnt_writer *w;

	unlink(path);
	w = cnt_writer_new(fd, "t", schema, CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, block_bytes, &err);
	for (int i = 0; i < n; i++) {
		char s[16];
		int len = snprintf(s, sizeof(s), "r%d", i);

		cnt_bin_write_long(cnt_writer_buf(w), i);
		cnt_bin_write_bytes(cnt_writer_buf(w), s, (size_t)len);
		cnt_writer_commit(w, &err);
	}
	cnt_writer_finish(w, &err);
	cnt_writer_free(w);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* Prints into a temporary file and returns its text (caller frees). */
static char *run(cnt_printer *p, int *fds, int nfds, int *rc, cnt_err *err)
{
	char path[] = "/tmp/test_print_out.XXXXXX";
	int out = mkstemp(path);
	char *text = calloc(1, 1 << 16);
	uint64_t n;

	unlink(path);
	p->fd = out;
	*rc = 0;
	for (int i = 0; i < nfds && *rc == 0 && !cnt_print_full(p); i++)
		*rc = cnt_print_input(p, fds[i], "in", &n, err);
	if (*rc == 0)
		*rc = cnt_print_finish(p, err);
	lseek(out, 0, SEEK_SET);
	if (read(out, text, (1 << 16) - 1) < 0)
		text[0] = 0;
	close(out);
	cnt_print_release(p);
	return text;
}

static void test_json_and_head(void)
{
	cnt_printer p = {0};
	int fds[2] = {container(3, 0), container(3, 0)}, rc;
	cnt_err err;
	char *t;

	p.head = 4;
	t = run(&p, fds, 2, &rc, &err);
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_STR(t, "{\"n\":0,\"s\":\"r0\"}\n{\"n\":1,\"s\":\"r1\"}\n{\"n\":2,\"s\":\"r2\"}\n{\"n\":0,\"s\":\"r0\"}\n");
	CHECK_EQ_INT(p.total, 4);
	free(t);
	close(fds[0]);
	close(fds[1]);
}

static void test_csv_and_count(void)
{
	cnt_printer p = {0};
	int fd = container(2, 0), rc;
	cnt_err err;
	char *t;

	p.head = -1;
	p.csv = 1;
	t = run(&p, &fd, 1, &rc, &err);
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_STR(t, "n,s\n0,r0\n1,r1\n");
	free(t);
	close(fd);

	memset(&p, 0, sizeof(p));
	p.head = -1;
	p.mode = CNT_PRINT_COUNT;
	fd = container(1000, 256);
	t = run(&p, &fd, 1, &rc, &err);
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_STR(t, "1000\n");
	free(t);
	close(fd);
}

/* A container cut in its last block: the records of the whole blocks
 * before it are printed, then the error. */
static void test_damage_prints_what_came_before(void)
{
	cnt_printer p = {0};
	int fd = container(400, 512), rc;
	off_t size = lseek(fd, 0, SEEK_END);
	cnt_err err;
	char *t;
	int lines = 0;

	CHECK(ftruncate(fd, size - 40) == 0);
	lseek(fd, 0, SEEK_SET);
	p.head = -1;
	t = run(&p, &fd, 1, &rc, &err);
	CHECK_EQ_INT(rc, -1);
	CHECK(strstr(err.msg, "'in'") != NULL);
	CHECK_EQ_INT(err.kind, CNT_ERR_DATA);
	for (char *q = t; *q; q++)
		lines += *q == '\n';
	CHECK(lines > 300 && lines < 400);
	CHECK(strncmp(t, "{\"n\":0,", 7) == 0);
	free(t);
	close(fd);
}

static void test_write_error_is_an_output_error(void)
{
	cnt_printer p = {0};
	int fd = container(10, 0), full = open("/dev/full", O_WRONLY);
	uint64_t n;
	cnt_err err;

	p.head = -1;
	p.fd = full;
	CHECK_EQ_INT(cnt_print_input(&p, fd, "in", &n, &err), 0);
	CHECK_EQ_INT(cnt_print_finish(&p, &err), -1);
	CHECK_EQ_INT(err.kind, CNT_ERR_IO);
	cnt_print_release(&p);
	close(full);
	close(fd);
}

static void test_reader_schema(void)
{
	cnt_err err;
	cnt_avro_schema *s = cnt_print_reader_schema("event", NULL, &err);
	char path[] = "/tmp/test_print_schema.XXXXXX";
	int fd;

	CHECK(s != NULL && strcmp(s->root->fullname, "cnt.CountingEvent") == 0);
	cnt_avro_schema_free(s);
	CHECK(cnt_print_reader_schema("xml", NULL, &err) == NULL);
	CHECK(strstr(err.msg, "'xml'") != NULL);
	CHECK(cnt_print_reader_schema(NULL, "/nonexistent/x.avsc", &err) == NULL);
	CHECK(strstr(err.msg, "cannot open '/nonexistent/x.avsc'") != NULL);
	fd = mkstemp(path);
	CHECK(write(fd, "{\"type\":\"recrod\"}", 17) == 17);
	close(fd);
	CHECK(cnt_print_reader_schema(NULL, path, &err) == NULL);
	CHECK(strncmp(err.msg, "'/tmp/test_print_schema.", 24) == 0);
	unlink(path);
}

int main(void)
{
	RUN(test_json_and_head);
	RUN(test_csv_and_count);
	RUN(test_damage_prints_what_came_before);
	RUN(test_write_error_is_an_output_error);
	RUN(test_reader_schema);
	return unit_report("test_print");
}
