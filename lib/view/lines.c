/*
 * lines.c - bounded line reading (see lines.h).
 */
#include "view/lines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cnt_lines_open(cnt_lines *l, const char *path, const char *what, cnt_err *err)
{
	memset(l, 0, sizeof(*l));
	l->name = path;
	l->buf = malloc(CNT_LINE_MAX + 2);
	if (l->buf == NULL)
		return cnt_err_nomem(err);
	l->f = fopen(path, "r");
	if (l->f == NULL) {
		int e = errno;

		free(l->buf);
		l->buf = NULL;
		return cnt_err_set(err, "cannot open %s%s'%s': %s", what ? what : "", what ? " " : "", path, strerror(e));
	}
	return 0;
}

int cnt_lines_next(cnt_lines *l, size_t *len, cnt_err *err)
{
	size_t n = 0;
	int c;

	/* getc, not fgets: a NUL byte in the line must not hide its end. */
	while ((c = getc(l->f)) != EOF && c != '\n') {
		if (n == CNT_LINE_MAX + 1)
			return cnt_err_set(err, "'%s' line %llu: longer than %d bytes", l->name, l->no + 1, CNT_LINE_MAX);
		l->buf[n++] = (char)c;
	}
	if (ferror(l->f))
		return cnt_err_set(err, "cannot read '%s': %s", l->name, strerror(errno));
	if (c == EOF && n == 0)
		return 0;
	l->no++;
	if (n > 0 && l->buf[n - 1] == '\r')
		n--;
	if (n > CNT_LINE_MAX)
		return cnt_err_set(err, "'%s' line %llu: longer than %d bytes", l->name, l->no, CNT_LINE_MAX);
	l->buf[n] = 0;
	*len = n;
	return 1;
}

void cnt_lines_close(cnt_lines *l)
{
	if (l->f)
		fclose(l->f);
	free(l->buf);
	memset(l, 0, sizeof(*l));
}
