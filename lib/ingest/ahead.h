/*
 * ahead.h - JSON lines and CSV read and parsed ahead of admission, on a
 * thread of their own.
 *
 * Admission is in order and on one thread (the duplicate table, the
 * quotas, the log's order).  Reading the input, cutting it into lines,
 * parsing each line and computing its duplicate-table fingerprint need
 * nothing of admission, so a second thread does them a chunk of lines
 * ahead: the admitting thread is left the judging, the encoding and the
 * writing.  What the caller sees is what cnt_lines_read() and
 * cnt_jsonl_parse() give one line at a time: the same lines, numbers,
 * overlong flags, events and problems, in input order, then the end or
 * the read error that stopped the input (after every line before it).
 */
#ifndef CNT_AHEAD_H
#define CNT_AHEAD_H

#include <stddef.h>

#include "base/err.h"
#include "ingest/input.h"
#include "ingest/rawevent.h"
#include "base/fpset.h"

/* A chunk of lines, parsed.  A line that is blank or overlong is not
 * parsed: its pb.status is CNT_RAW_MALFORMED, and the rest of pb, raw
 * and fp are not set.  For any line whose pb.status is not CNT_RAW_OK,
 * raw and fp are not meaningful.  An event with more attrs than
 * admission takes (CNT_ATTRS_MAX, rejected by their count) has its
 * nattrs but no attr_keys or attr_vals (NULL): a chunk does not keep
 * them. */
typedef struct cnt_ahead_chunk {
	size_t n;
	const cnt_line *line;
	const cnt_raw_event *raw;
	const cnt_raw_problem *pb;
	const cnt_fp *fp;            /* cnt_admit_fp() of raw */
} cnt_ahead_chunk;

typedef struct cnt_ahead cnt_ahead;

/* Returns a reader with its chunks and its parser (reused for every input),
 * or NULL when out of memory. */
cnt_ahead *cnt_ahead_new(void);
/* Stops a running input first (cnt_ahead_stop). */
void cnt_ahead_free(cnt_ahead *a);

/* Starts reading fd (not closed), named name, whose first pren bytes
 * (pre) were read already, with lines longer than max bytes overlong
 * (cnt_lines_new).  0, or -1 with err set. */
int cnt_ahead_start(cnt_ahead *a, int fd, const char *name, size_t max, const void *pre, size_t pren,
	cnt_err *err);

/* cnt_ahead_start() for CSV with a header row (cnt_csvin): each row is a
 * line of the chunk, its text the row's (as the reader gives it), its
 * number the line the row starts on, never overlong; its event and problem
 * the reader's.  A header the reader refuses, after the rows before it
 * (none), is the input's error, named "'name': ...". */
int cnt_ahead_start_csv(cnt_ahead *a, int fd, const char *name, const void *pre, size_t pren, cnt_err *err);

/* The next chunk, valid until the next call or cnt_ahead_stop: 1 with *c
 * set, 0 at the end of the input, -1 with err set (a read error, or out
 * of memory while reading ahead). */
int cnt_ahead_next(cnt_ahead *a, cnt_ahead_chunk *c, cnt_err *err);

/* The memory the chunks' buffers hold now, in bytes, and (peak, unless
 * NULL) the most they held at once, over every input so far.  The
 * reader fills more chunks ahead only while they hold at most 48 MiB
 * (one more is always filled when the caller has none to go on with),
 * so the peak stays under 48 MiB and one chunk (about 28 MiB at
 * worst). */
size_t cnt_ahead_held(cnt_ahead *a, size_t *peak);

/* Ends the input: at its end, or early (a thread blocked reading a pipe
 * is cancelled there).  Nothing of it is valid afterwards. */
void cnt_ahead_stop(cnt_ahead *a);

#endif
