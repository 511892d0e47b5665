/*
 * test_lines.c - bounded line reading (view/lines.h): line ends, a last
 * line without one, NUL bytes, the bound met exactly and passed, and an
 * input that never ends a line (/dev/zero), refused at the bound.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "view/lines.h"

static char tmpdir[] = "/tmp/test_lines.XXXXXX";

static const char *write_tmp(const void *p, size_t n)
{
	static char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/f", tmpdir);
	f = fopen(path, "wb");
	if (f == NULL)
		exit(1);
	fwrite(p, 1, n, f);
	fclose(f);
	return path;
}

static void test_line_ends(void)
{
	static const char text[] = "a,b\r\n\nlast\0x\nno newline";
	const char *path = write_tmp(text, sizeof(text) - 1);
	cnt_lines l;
	cnt_err err;
	size_t n = 0;

	CHECK_EQ_INT(cnt_lines_open(&l, path, NULL, &err), 0);
	CHECK_EQ_INT(cnt_lines_next(&l, &n, &err), 1);
	CHECK(n == 3 && strcmp(l.buf, "a,b") == 0);
	CHECK_EQ_INT(cnt_lines_next(&l, &n, &err), 1);
	CHECK(n == 0 && l.no == 2);
	CHECK_EQ_INT(cnt_lines_next(&l, &n, &err), 1);
	CHECK(n == 6 && memcmp(l.buf, "last\0x", 6) == 0);   /* the NUL does not end the line */
	CHECK_EQ_INT(cnt_lines_next(&l, &n, &err), 1);
	CHECK(n == 10 && strcmp(l.buf, "no newline") == 0 && l.no == 4);
	CHECK_EQ_INT(cnt_lines_next(&l, &n, &err), 0);
	CHECK_EQ_INT(cnt_lines_next(&l, &n, &err), 0);
	cnt_lines_close(&l);
	cnt_lines_close(&l);   /* twice is harmless */
	path = write_tmp("", 0);
	CHECK_EQ_INT(cnt_lines_open(&l, path, NULL, &err), 0);
	CHECK_EQ_INT(cnt_lines_next(&l, &n, &err), 0);
	cnt_lines_close(&l);
}

static void test_bound(void)
{
	char *big = malloc(CNT_LINE_MAX + 3);
	cnt_lines l;
	cnt_err err;
	size_t n = 0;

	/* exactly the bound, with CR LF: accepted */
	memset(big, 'x', CNT_LINE_MAX);
	memcpy(big + CNT_LINE_MAX, "\r\n", 2);
	CHECK_EQ_INT(cnt_lines_open(&l, write_tmp(big, CNT_LINE_MAX + 2), NULL, &err), 0);
	CHECK_EQ_INT(cnt_lines_next(&l, &n, &err), 1);
	CHECK_EQ_INT(n, CNT_LINE_MAX);
	cnt_lines_close(&l);
	/* one byte more: refused, naming the file and line */
	memset(big, 'x', CNT_LINE_MAX + 1);
	big[CNT_LINE_MAX + 1] = '\n';
	CHECK_EQ_INT(cnt_lines_open(&l, write_tmp(big, CNT_LINE_MAX + 2), NULL, &err), 0);
	CHECK_EQ_INT(cnt_lines_next(&l, &n, &err), -1);
	CHECK(strstr(err.msg, "' line 1: longer than 65536 bytes") != NULL);
	cnt_lines_close(&l);
	free(big);
	/* a line that never ends */
	CHECK_EQ_INT(cnt_lines_open(&l, "/dev/zero", "the member directory", &err), 0);
	CHECK_EQ_INT(cnt_lines_next(&l, &n, &err), -1);
	CHECK_EQ_STR(err.msg, "'/dev/zero' line 1: longer than 65536 bytes");
	cnt_lines_close(&l);
	/* a file that cannot be opened, named as the caller says */
	CHECK_EQ_INT(cnt_lines_open(&l, "/nonexistent", "the member directory", &err), -1);
	CHECK_EQ_STR(err.msg, "cannot open the member directory '/nonexistent': No such file or directory");
	CHECK_EQ_INT(cnt_lines_open(&l, "/nonexistent", NULL, &err), -1);
	CHECK_EQ_STR(err.msg, "cannot open '/nonexistent': No such file or directory");
	/* a directory cannot be read as lines */
	CHECK_EQ_INT(cnt_lines_open(&l, tmpdir, NULL, &err), 0);
	CHECK_EQ_INT(cnt_lines_next(&l, &n, &err), -1);
	CHECK(strstr(err.msg, "cannot read '") == err.msg);
	cnt_lines_close(&l);
}

int main(void)
{
	char cmd[128];

	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_line_ends);
	RUN(test_bound);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return unit_report("test_lines");
}
