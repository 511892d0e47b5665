/*
 * jsonout.h - decoded Avro values as JSON text, for people and jq.
 *
 * The conventions (cnt-cat(1), "OUTPUT"): a record is an object with its
 * fields in schema order; a union's value is written plainly (null, or the
 * branch's value: no {"string": ...} wrapper); an enum is its symbol;
 * bytes and fixed are strings whose code points U+0000..U+00FF are the
 * bytes (Avro's own JSON encoding); a map is an object in encoded order;
 * long values are exact integers.  Strings are escaped as Python's
 * json.dumps(ensure_ascii=False) does: \" \\ \b \f \n \r \t, other control
 * characters as \u00xx, everything else as UTF-8.  A string that is not
 * valid UTF-8 has each offending byte written as \u00xx, so nothing is
 * lost or made up.
 */
#ifndef CNT_JSON_H
#define CNT_JSON_H

#include "base/buf.h"
#include "avro/schema.h"
#include "avro/value.h"

enum {
	CNT_JSON_ISO_TIME = 1   /* timestamp-millis/micros as RFC 3339 strings */
};

/* Appends v (typed by schema s) as compact JSON to out.  Returns 0, or -1
 * when out of memory. */
int cnt_json_value(cnt_buf *out, const cnt_val *v, const cnt_schema *s, int flags);

/* Whether p[0..n) is valid UTF-8 holding no NUL byte: text that a JSON
 * string in our ledgers can carry and their readers (jansson) take back.
 * 1 or 0. */
int cnt_json_text_ok(const void *p, size_t n);

/* Appends p[0..n) as a JSON string literal.  bytes != 0: Avro bytes. */
int cnt_json_string(cnt_buf *out, const uint8_t *p, size_t n, int bytes);

/* Appends one line of a reject stream (cnt(7), REJECT STREAMS):
 * {"input":..,"<poskind>":pos,"reason":..,"field":..,"message":..,"event_id":..}
 * field and event_id are left out when NULL.  Returns 0 or -1. */
int cnt_json_reject(cnt_buf *out, const char *input, const char *poskind, uint64_t pos,
	const char *reason, const char *field, const char *msg, const char *event_id, size_t event_id_len);

/* Appends one CSV row of a record's top-level fields: scalars as text,
 * null as an empty cell, nested values as compact JSON.  Returns 0 or -1. */
int cnt_csv_record(cnt_buf *out, const cnt_val *v, const cnt_schema *s, int flags);
/* Appends the CSV header row for record schema s. */
int cnt_csv_header(cnt_buf *out, const cnt_schema *s);

#endif
