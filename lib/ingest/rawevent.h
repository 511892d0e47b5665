/*
 * rawevent.h - raw counting events as JSON lines and CSV (cnt-event(5)).
 *
 * Both readers report what an event says, field by field: whether each
 * field is present and whether it has the right type.  They do not decide
 * what is required, in bounds or defined: the caller does that for JSON
 * lines, CSV and Avro alike.  The layouts themselves are described in the
 * essay at the top of rawevent.c.
 */
#ifndef CNT_RAWEVENT_H
#define CNT_RAWEVENT_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/slice.h"

enum { CNT_ORIGIN_BACKEND = 0, CNT_ORIGIN_CLIENT = 1 };

/* One raw event.  Slices point into the caller's input or into storage
 * owned by the parser, valid until the parser's next call or its _free. */
typedef struct cnt_raw_event {
	cnt_slice idempotency_key, tenant_id, counter_id, member_ref, item, subject, signature;
	int has_delta;
	int64_t delta;
	int has_event_time;
	int64_t event_time_ms;
	int has_origin;
	int origin;             /* CNT_ORIGIN_*, meaningful when has_origin */
	size_t nattrs;          /* attrs in input order; no key appears twice */
	cnt_slice *attr_keys, *attr_vals;
} cnt_raw_event;

typedef enum {
	CNT_RAW_OK = 0,
	CNT_RAW_MALFORMED,      /* not a JSON object / not a CSV row of the header's shape */
	CNT_RAW_BAD_FIELD,      /* well-formed, but a field is repeated or of the wrong type */
	CNT_RAW_NOMEM           /* out of memory: nothing can be said of the record */
} cnt_raw_status;

typedef struct cnt_raw_problem {
	cnt_raw_status status;
	const char *field;      /* static field name for BAD_FIELD, NULL otherwise */
	char msg[256];          /* one line, complete: "field 'delta': expected an integer, got a string" */
} cnt_raw_problem;

/* ---- JSON lines ------------------------------------------------------- */

typedef struct cnt_jsonl cnt_jsonl;

/* Returns a parser (reusable for any number of lines), or NULL when out of
 * memory.  Free it with cnt_jsonl_free(). */
cnt_jsonl *cnt_jsonl_new(void);
void cnt_jsonl_free(cnt_jsonl *p);
/* The bytes p holds: it keeps what its largest line needed. */
size_t cnt_jsonl_held(const cnt_jsonl *p);

/* Parses one line (without its '\n'; a trailing '\r' is tolerated) into *ev
 * and returns the status, also stored in pb->status with the message.
 * On CNT_RAW_OK, ev's slices point into line (strings without escapes) or
 * into p's scratch storage, valid until the next call on p; ev is not
 * meaningful otherwise.  A line that is empty or only whitespace is
 * MALFORMED with the message "empty line" (the caller may skip such lines).
 * When a line is both malformed and has a bad field, MALFORMED wins.  Out of
 * memory is CNT_RAW_NOMEM, "out of memory". */
cnt_raw_status cnt_jsonl_parse(cnt_jsonl *p, const char *line, size_t n,
	cnt_raw_event *ev, cnt_raw_problem *pb);

/* cnt_jsonl_parse(), decoding strings with escapes into scratch (at least
 * n bytes, the caller's: decoding never makes a line longer) instead of p's
 * own storage.  So ev's strings stay valid after the next call on p, as
 * long as scratch does; its attrs arrays are still p's, valid until the
 * next call.  One parser can then serve many lines held at once (ahead.c). */
cnt_raw_status cnt_jsonl_parse_into(cnt_jsonl *p, const char *line, size_t n, char *scratch,
	cnt_raw_event *ev, cnt_raw_problem *pb);

/* ---- CSV with a header row -------------------------------------------- */

typedef struct cnt_csvin cnt_csvin;

/* Called once per data row, in order.  line is the 1-based physical line on
 * which the row starts ('\n', "\r\n" or a lone '\r' end a line).
 * pb->status says whether ev is meaningful (CNT_RAW_OK) or why not.  raw/rawn is the row written
 * back as one CSV record (fields quoted where needed), or for a row that
 * could not be split into cells, its text as read (at most 1 MiB; of a
 * row longer than 1 MiB, its first 256 bytes, reported as soon as the
 * limit is passed, before its end is read).  All
 * pointers are valid only during the call.  Returning nonzero stops the
 * reader, and cnt_csvin_feed/_finish return that value. */
typedef int (*cnt_csvin_cb)(void *ctx, uint64_t line, const cnt_raw_event *ev,
	const cnt_raw_problem *pb, const char *raw, size_t rawn);

/* Returns a reader expecting a header row first, or NULL (out of memory). */
cnt_csvin *cnt_csvin_new(void);
void cnt_csvin_free(cnt_csvin *r);

/* Pushes the next n bytes of the input (any split; rows may span calls).
 * Returns 0; or -1 with err set when the input cannot be read as CSV at all
 * (a malformed or duplicated header column, out of memory); or the nonzero
 * value a callback returned.  After a nonzero return, only _free is allowed. */
int cnt_csvin_feed(cnt_csvin *r, const void *data, size_t n, cnt_csvin_cb cb, void *ctx,
	cnt_err *err);

/* Ends the input: delivers a last row without a final newline, and reports
 * an unterminated quoted field as a MALFORMED row.  Same returns as feed. */
int cnt_csvin_finish(cnt_csvin *r, cnt_csvin_cb cb, void *ctx, cnt_err *err);

/* The line number of the next byte to be read (1-based), for messages. */
uint64_t cnt_csvin_line(const cnt_csvin *r);

/* ---- shared with the Avro reader --------------------------------------- */

/* Parses an event_time given as text: a JSON-style integer of epoch
 * milliseconds or an RFC 3339 timestamp with offset.  Returns 0 or -1. */
int cnt_raw_parse_event_time(const char *s, size_t n, int64_t *ms_out);

/* Parses s[0..n) as a JSON integer literal (-?(0|[1-9][0-9]*)) in int64
 * range.  Returns 0, or -1 on bad syntax or overflow. */
int cnt_raw_parse_int64(const char *s, size_t n, int64_t *out);

/* Parses "backend"/"client" in any case.  Returns 0 and sets *origin, or -1. */
int cnt_raw_parse_origin(const char *s, size_t n, int *origin);

#endif
