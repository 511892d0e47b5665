/*
 * input.h - what cnt-ingest reads: the format of an input, told from its
 * name or its first bytes, and its framing into lines.
 *
 * Formats (cnt-ingest(1), "Input formats").  An input's format is the one
 * forced with -f; else its name's extension (.jsonl, .ndjson, .json: JSON
 * lines; .csv; .avro); else its first bytes: the Avro magic "Obj\x01" is
 * Avro, a '{' as the first byte that is not blank (or an input with no
 * such byte) is JSON lines, anything else is CSV.
 *
 * Lines.  A line ends at '\n' (a '\r' before it stays in the line: the
 * JSON-lines parser tolerates it).  A line longer than the limit is never
 * held whole: as soon as more than the limit has been read without a '\n',
 * it is handed out as overlong (its first bytes only), and the rest of it
 * is skipped as it arrives.  So an input that never ends a line, like
 * /dev/zero, costs a bounded buffer and gives one overlong line at once
 * instead of a run that reads forever.
 */
#ifndef CNT_INPUT_H
#define CNT_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

typedef enum {
	CNT_INPUT_AUTO = 0,     /* not known yet: from the name, else the first bytes */
	CNT_INPUT_JSON,
	CNT_INPUT_CSV,
	CNT_INPUT_AVRO
} cnt_input_format;

/* "auto", "json", "csv" or "avro". */
const char *cnt_input_format_name(cnt_input_format f);
/* The format named s ("json", "csv", "avro"); -1 when s names none. */
int cnt_input_format_parse(const char *s);
/* The format an input's name implies by its extension, or
 * CNT_INPUT_AUTO when it implies none ("-", "events.txt"). */
cnt_input_format cnt_input_format_of_name(const char *name);
/* The format the first n bytes of an input imply (never AUTO).  Up to 4
 * bytes decide; fewer (a short input) are judged as they are. */
cnt_input_format cnt_input_sniff(const void *p, size_t n);

/* Reads up to n bytes from fd into p, retrying EINTR.  Returns the
 * number read (0 at the end), or -1 with err saying "cannot read 'name':
 * why". */
long cnt_input_read(int fd, const char *name, void *p, size_t n, cnt_err *err);

/* Events to expect from the named inputs, judged from the first 64 KiB
 * of each regular file among them; 0 when none is one.  Used to size the
 * duplicate table up front.  An Avro container is judged by its first
 * block's records per byte (an archive holds about 48 bytes an event,
 * another producer's container may hold kilobytes), any other file (or a
 * container whose first block is not in those bytes) by its first lines'
 * (JSON lines of about 200 bytes, CSV rows of about 90 in the benchmark);
 * a file at most one event per 32 bytes it stores, whatever it claims
 * (cnt_files_guess, base/filehead.h).  Names that are "-", not regular
 * files, empty or unreadable add nothing; the sum stops at SIZE_MAX. */
size_t cnt_input_expected_events(char *const *names, int n);
/* The estimate for a file of size bytes from its first n (> 0) at p: its
 * lines when they are the whole file, else their lines per byte over the
 * file and an eighth more (below size: a line counted takes 17 bytes or
 * more), or size / n + 1 when no line is counted in those bytes.  Only
 * lines of at least CNT_INPUT_LINE_SHORTEST bytes (without the '\n') are
 * counted: no event is shorter, and a file of blank lines must not ask
 * for a big table.  cnt_files_guess bounds what a file may claim. */
#define CNT_INPUT_LINE_SHORTEST 16
size_t cnt_input_line_events(const void *p, size_t n, uint64_t size);

/* ---- lines -------------------------------------------------------------- */

typedef struct cnt_line {
	const char *p;      /* the line without its '\n'; of an overlong line, its first bytes */
	size_t n;           /* bytes at p */
	uint64_t no;        /* 1-based line number in the input */
	int overlong;       /* longer than the limit: n is at most CNT_LINE_KEEP */
} cnt_line;

/* Bytes kept of an overlong line. */
#define CNT_LINE_KEEP 256

typedef struct cnt_lines cnt_lines;

/* Returns a line reader of fd (not closed by it), named name in messages
 * (kept, not copied), whose first n bytes (prefix, copied; n at most
 * max) were already read from it.  Lines longer than max bytes are overlong.
 * Returns NULL when out of memory. */
cnt_lines *cnt_lines_new(int fd, const char *name, size_t max, const void *prefix, size_t n);
void cnt_lines_free(cnt_lines *l);

/* Hands out up to max lines, in order, into lines[]: every complete line
 * already read, reading more only when there is none.  The lines' bytes
 * stay valid until the next call.  Returns the number of lines (at least
 * 1), 0 at the end of the input, or -1 with err set (a read error).  An
 * input that does not end with '\n' has a last line all the same. */
long cnt_lines_read(cnt_lines *l, cnt_line *lines, size_t max, cnt_err *err);

/* From now on reads into b (its bytes, grown as needed), or with b NULL
 * into the reader's own buffer again; what was read and not handed out
 * moves to the new buffer's start.  Reading into b, lines handed out are
 * not moved when more is read (cnt_lines_read()'s "until the next call"
 * does not hold): they stay in b, though b may move as it grows, so a
 * line's place is best kept as its offset, p - b->p, when handed out.
 * Each read then asks for at most step bytes (0: 4 KiB): so the caller
 * can read about what it wants of b and little beyond, which is copied
 * out when it turns away.  0, or -1 when out of memory (nothing
 * changed). */
int cnt_lines_into(cnt_lines *l, cnt_buf *b, size_t step);

/* cnt_lines_read() without reading: only the lines already read, maybe
 * none. */
size_t cnt_lines_take(cnt_lines *l, cnt_line *lines, size_t max);

/* 1 when l holds only blanks (space, tab, CR) and is not overlong. */
int cnt_line_blank(const cnt_line *l);

#endif
