/*
 * input.c - input formats and line framing (see input.h).
 */
#include "ingest/input.h"

#include "avro/container.h"
#include "base/filehead.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const format_names[] = {"auto", "json", "csv", "avro"};

const char *cnt_input_format_name(cnt_input_format f)
{
	return (unsigned)f < sizeof(format_names) / sizeof(format_names[0]) ? format_names[f] : "?";
}

int cnt_input_format_parse(const char *s)
{
	for (int f = CNT_INPUT_JSON; f <= CNT_INPUT_AVRO; f++)
		if (strcmp(s, format_names[f]) == 0)
			return f;
	return -1;
}

cnt_input_format cnt_input_format_of_name(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (dot == NULL || strchr(dot, '/') != NULL)
		return CNT_INPUT_AUTO;
	if (strcmp(dot, ".jsonl") == 0 || strcmp(dot, ".ndjson") == 0 || strcmp(dot, ".json") == 0)
		return CNT_INPUT_JSON;
	if (strcmp(dot, ".csv") == 0)
		return CNT_INPUT_CSV;
	if (strcmp(dot, ".avro") == 0)
		return CNT_INPUT_AVRO;
	return CNT_INPUT_AUTO;
}

cnt_input_format cnt_input_sniff(const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t k = 0;

	if (n >= 4 && memcmp(s, "Obj\x01", 4) == 0)
		return CNT_INPUT_AVRO;
	while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r' || s[k] == '\n'))
		k++;
	return k == n || s[k] == '{' ? CNT_INPUT_JSON : CNT_INPUT_CSV;
}

long cnt_input_read(int fd, const char *name, void *p, size_t n, cnt_err *err)
{
	for (;;) {
		ssize_t got = read(fd, p, n);

		if (got >= 0)
			return (long)got;
		if (errno != EINTR) {
			cnt_err_set(err, "cannot read '%s': %s", name, strerror(errno));
			return -1;
		}
	}
}

size_t cnt_input_line_events(const void *p, size_t n, uint64_t size)
{
	const char *s = p, *q = s, *from = s, *end = s + n;
	uint64_t lines = 0;

	/* lines shorter than any event (blank ones) are not counted */
	while ((q = memchr(q, '\n', (size_t)(end - q))) != NULL) {
		lines += q - from >= CNT_INPUT_LINE_SHORTEST;
		from = ++q;
	}
	if (n >= size) /* the whole file: its lines, the last maybe unended */
		return (size_t)(lines + (end - from >= CNT_INPUT_LINE_SHORTEST));
	if (lines == 0) /* no line an event could be in n bytes: few events */
		return (size_t)(size / n + 1);
	/* the sample's lines per byte over the file, and an eighth more, so
	 * that a table sized for them is not doubled for a few more; a line
	 * counted takes 17 bytes or more, so this is below size */
	return (size_t)((double)lines * (double)size / (double)n * 1.125);
}

/* An Avro container by its first block, any other file by its lines. */
static size_t guess_events(const void *head, size_t got, uint64_t size)
{
	size_t e = cnt_container_guess_records(head, got, size);

	return e ? e : cnt_input_line_events(head, got, size);
}

size_t cnt_input_expected_events(char *const *names, int n)
{
	return cnt_files_guess(names, n, guess_events);
}

/* ---- lines ---------------------------------------------------------------- */

struct cnt_lines {
	int fd;
	const char *name;
	size_t max;         /* longest line that is not overlong */
	char *buf;          /* own.p, or the caller's buffer (cnt_lines_into) */
	size_t cap;         /* own: more than max, so a line that fits is always held whole */
	size_t start, len;  /* unread bytes are buf[start..len) */
	cnt_buf own;
	cnt_buf *into;      /* the caller's buffer read into, or NULL */
	size_t kept;        /* into: where the last line handed out ends */
	size_t step;        /* into: the most a read asks for */
	uint64_t no;        /* lines handed out */
	int eof;
	int skipping;       /* inside an overlong line: discard up to its '\n' */
};

cnt_lines *cnt_lines_new(int fd, const char *name, size_t max, const void *prefix, size_t n)
{
	cnt_lines *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return NULL;
	l->fd = fd;
	l->name = name;
	l->max = max;
	/* Reads of up to 3 * max at a time: few system calls, and a line of
	 * max bytes always fits beside them. */
	if (n > max || cnt_buf_reserve(&l->own, 4 * max < 65536 ? 65536 : 4 * max) != 0) {
		cnt_buf_release(&l->own);
		free(l);
		return NULL;
	}
	l->buf = (char *)l->own.p;
	l->cap = l->own.cap;
	if (n > 0)
		memcpy(l->buf, prefix, n);
	l->len = n;
	return l;
}

void cnt_lines_free(cnt_lines *l)
{
	if (l == NULL)
		return;
	cnt_buf_release(&l->own);
	free(l);
}

int cnt_lines_into(cnt_lines *l, cnt_buf *b, size_t step)
{
	size_t unread = l->len - l->start, was;
	cnt_buf *to = b != NULL ? b : &l->own;

	if (to == l->into || (b == NULL && l->into == NULL)) {
		l->step = step;   /* already reading there */
		return 0;
	}
	/* own keeps room for more than max (cnt_lines_read); to's length is
	 * as it was if it cannot have room */
	was = to->len;
	to->len = 0;
	if (cnt_buf_reserve(to, b != NULL ? unread + (step ? step : 4096) : unread + l->max + 1) != 0) {
		to->len = was;
		return -1;
	}
	if (unread > 0)
		memcpy(to->p, l->buf + l->start, unread);
	l->into = b;
	l->buf = (char *)to->p;
	l->cap = to->cap;
	l->start = l->kept = 0;
	l->len = to->len = unread;
	l->step = step;
	return 0;
}

/* Takes the lines already in the buffer, up to max of them. */
static size_t take(cnt_lines *l, cnt_line *lines, size_t max)
{
	size_t k = 0;

	while (k < max) {
		char *s = l->buf + l->start, *nl;
		size_t avail = l->len - l->start, n;

		nl = avail ? memchr(s, '\n', avail) : NULL;
		if (l->skipping) {
			if (nl == NULL) {
				l->start = l->len;
				break;
			}
			l->skipping = 0;
			l->start += (size_t)(nl - s) + 1;
			continue;
		}
		if (nl != NULL) {
			n = (size_t)(nl - s);
			l->start += n + 1;
		} else if (avail > l->max) {
			/* No end in sight and already too long: say so now, and
			 * skip the rest as it comes. */
			n = avail;
			l->start = l->len;
			l->skipping = 1;
		} else if (l->eof && avail > 0) {
			n = avail;
			l->start = l->len;
		} else {
			break;
		}
		lines[k].p = s;
		lines[k].no = ++l->no;
		lines[k].overlong = n > l->max;
		lines[k].n = lines[k].overlong && n > CNT_LINE_KEEP ? CNT_LINE_KEEP : n;
		l->kept = (size_t)(s - l->buf) + lines[k].n;
		k++;
	}
	return k;
}

size_t cnt_lines_take(cnt_lines *l, cnt_line *lines, size_t max)
{
	return take(l, lines, max);
}

int cnt_line_blank(const cnt_line *l)
{
	for (size_t k = 0; k < l->n; k++)
		if (l->p[k] != ' ' && l->p[k] != '\t' && l->p[k] != '\r')
			return 0;
	return !l->overlong;
}

long cnt_lines_read(cnt_lines *l, cnt_line *lines, size_t max, cnt_err *err)
{
	for (;;) {
		size_t k = take(l, lines, max), keep, room;
		long got;

		if (k > 0)
			return (long)k;
		if (l->eof)
			return 0;
		/* Nothing complete is left: keep the partial line (at most
		 * max bytes, or take() would have handed it out) and read.  In
		 * the caller's buffer the lines handed out stay where they are:
		 * the partial line goes just after the last of them, and the
		 * buffer grows (moving, see cnt_lines_into) by what is read. */
		keep = l->into != NULL ? l->kept : 0;
		memmove(l->buf + keep, l->buf + l->start, l->len - l->start);
		l->len = keep + (l->len - l->start);
		l->start = keep;
		if (l->into != NULL) {
			room = l->step > 0 ? l->step : 4096;
			l->into->len = l->len;
			if (cnt_buf_reserve(l->into, room) != 0)
				return cnt_err_nomem(err);
			l->buf = (char *)l->into->p;
			l->cap = l->into->cap;
		} else {
			room = l->cap - l->len;
		}
		got = cnt_input_read(l->fd, l->name, l->buf + l->len, room, err);
		if (got < 0)
			return -1;
		if (got == 0)
			l->eof = 1;
		l->len += (size_t)got;
		if (l->into != NULL)
			l->into->len = l->len;
	}
}
