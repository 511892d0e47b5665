/*
 * report.h - where the records that are not admitted go: the reject and
 * duplicate streams, and the reject messages on standard error.
 *
 * A stream is a file of JSON lines, one object per record, keys in this
 * order (cnt-ingest(1), "OUTPUT"):
 *
 *   {"input":"day1.jsonl","line":7,"reason":"bad_field","field":"delta",
 *    "message":"field 'delta': ...","retry_after_ms":250,
 *    "duplicate_of":{"input":"day1.jsonl","line":1},"raw":"..."}
 *
 * "line" is "record" for Avro inputs; field, retry_after_ms (quota only)
 * and duplicate_of (duplicates only) are left out when they do not apply;
 * raw is the record as read: a JSON string of the line or CSV row, or the
 * Avro record as a JSON object.
 *
 * Without a reject file each reject is one message line,
 *
 *   'day1.jsonl' line 7: rejected (bad_field): field 'delta': ...
 *
 * given to a callback (the tool prints it on standard error), but only the
 * first few hundred: a run that rejects a million records must not bury
 * the terminal.  Past the limit one message says the rest are counted,
 * and at the end one line sums up every reject by reason.
 */
#ifndef CNT_REPORT_H
#define CNT_REPORT_H

#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "ingest/admit.h"

/* A position in an input: a line number, or a record number (Avro). */
typedef struct cnt_report_pos {
	const char *input;       /* the input's name as given ("-": standard input) */
	int record;              /* n is a record number rather than a line number */
	uint64_t n;
} cnt_report_pos;

/* One record that was not admitted. */
typedef struct cnt_report_item {
	cnt_report_pos at;
	const char *reason;      /* a reason code (cnt_reject_name), or "duplicate" */
	const char *field;       /* the field at fault, or NULL */
	const char *msg;
	int has_retry;           /* quota_exceeded: retry_after_ms applies */
	int64_t retry_after_ms;
	int has_first;           /* a duplicate: first is the accepted record */
	cnt_report_pos first;
	const char *raw;         /* the record as read (NULL: empty) */
	size_t rawn;
	int raw_is_json;         /* raw is JSON text (a decoded Avro record), not a string */
} cnt_report_item;

/* Appends it as one JSON line, with its '\n'.  0, or -1 out of memory. */
int cnt_report_json(cnt_buf *b, const cnt_report_item *it);
/* Appends its message line ("'IN' line N: rejected (REASON): MESSAGE"),
 * without a newline.  0, or -1 out of memory. */
int cnt_report_message(cnt_buf *b, const cnt_report_item *it);

/* Messages given one by one before the rest are only counted. */
#define CNT_REPORT_MESSAGES 200

/* A destination: a stream file, messages, or nothing. */
typedef struct cnt_report {
	int fd;                  /* the stream's descriptor, or -1 */
	const char *name;        /* its name, for a write error */
	void (*note)(const char *msg);   /* without fd: messages, or NULL: nothing */
	uint64_t max_notes;      /* messages before the rest are only counted */
	uint64_t added, noted;
	cnt_buf buf, line;
} cnt_report;

/* A stream into fd (not closed by it) named name; fd -1: a message per
 * item through note(msg), up to max_notes of them (0: the default
 * CNT_REPORT_MESSAGES); fd -1 and note NULL: items are only counted. */
void cnt_report_init(cnt_report *r, int fd, const char *name, void (*note)(const char *msg),
	uint64_t max_notes);

/* Adds one item.  Stream lines are buffered and written in 64 KiB writes.
 * Returns 0, or -1 with err set (a write error, or out of memory). */
int cnt_report_add(cnt_report *r, const cnt_report_item *it, cnt_err *err);

/* Writes what is buffered; with messages, when some were only counted,
 * gives one last message summing up all rejects by reason (by_reason[r]
 * of each reason code r).  Returns 0, or -1 with err set. */
int cnt_report_finish(cnt_report *r, const uint64_t by_reason[CNT_REJ_COUNT], cnt_err *err);

void cnt_report_release(cnt_report *r);

#endif
