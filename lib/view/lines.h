/*
 * lines.h - bounded line reading for the small text files the view tools
 * take beside their data (cnt-project --scopes, cnt-rank --directory).
 *
 * Such a file is outside input: a line is refused as soon as it passes
 * the bound, so an input that never ends a line (/dev/zero) costs the
 * bound, not all memory.
 */
#ifndef CNT_LINES_H
#define CNT_LINES_H

#include <stdio.h>

#include "base/err.h"

/* The longest line accepted, in bytes, without its line end. */
#define CNT_LINE_MAX 65536

typedef struct cnt_lines {
	FILE *f;
	const char *name;       /* for messages */
	char *buf;              /* CNT_LINE_MAX + 2 bytes */
	unsigned long long no;  /* the line just read, from 1 */
} cnt_lines;

/* Opens path; what names it in messages ("cannot open the member
 * directory 'path': ..."; NULL: "cannot open 'path': ...").  0, or -1
 * with err set. */
int cnt_lines_open(cnt_lines *l, const char *path, const char *what, cnt_err *err);

/* Reads the next line into l->buf, NUL-terminated, its line end (LF or
 * CR LF) removed, its length in *len.  1 for a line, 0 at the end of the
 * file, -1 with err naming the file and line (too long, a read error).
 * A NUL byte inside a line ends it for a caller that reads it as a C
 * string; *len counts every byte. */
int cnt_lines_next(cnt_lines *l, size_t *len, cnt_err *err);

void cnt_lines_close(cnt_lines *l);

#endif
