/*
 * fuzz_csv.c - libFuzzer target for the CSV event reader.
 *
 * The same input is read three ways: in one piece, split at a point chosen
 * by the first byte, and one byte at a time.  Beyond "no crash, no leak, no
 * out-of-bounds read", every way must deliver the same rows: same line
 * numbers (never decreasing, never before line 2), statuses, messages and
 * raw text, and the same return value.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ingest/rawevent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct trace {
	uint64_t hash, rows, last_line;
} trace;

static void mix(trace *t, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)
		t->hash = (t->hash ^ s[i]) * UINT64_C(0x100000001b3);
}

static void mix_slice(trace *t, cnt_slice s)
{
	uint8_t present = s.p != NULL;

	mix(t, &present, 1);
	mix(t, &s.n, sizeof(s.n));
	if (s.p)
		mix(t, s.p, s.n);
}

static int on_row(void *ctx, uint64_t line, const cnt_raw_event *ev, const cnt_raw_problem *pb,
	const char *raw, size_t rawn)
{
	trace *t = ctx;

	if (line < 2 || line < t->last_line)
		__builtin_trap();
	if (pb->status != CNT_RAW_OK && pb->msg[0] == '\0')
		__builtin_trap();
	if ((pb->status == CNT_RAW_BAD_FIELD) != (pb->field != NULL))
		__builtin_trap();
	t->last_line = line;
	t->rows++;
	mix(t, &line, sizeof(line));
	mix(t, &pb->status, sizeof(pb->status));
	mix(t, pb->msg, strlen(pb->msg));
	mix(t, raw, rawn);
	if (pb->status == CNT_RAW_OK) {
		mix_slice(t, ev->idempotency_key);
		mix_slice(t, ev->tenant_id);
		mix_slice(t, ev->counter_id);
		mix_slice(t, ev->member_ref);
		mix_slice(t, ev->item);
		mix_slice(t, ev->subject);
		mix_slice(t, ev->signature);
		if (ev->has_delta)
			mix(t, &ev->delta, sizeof(ev->delta));
		if (ev->has_event_time)
			mix(t, &ev->event_time_ms, sizeof(ev->event_time_ms));
		if (ev->has_origin)
			mix(t, &ev->origin, sizeof(ev->origin));
		for (size_t i = 0; i < ev->nattrs; i++) {
			mix_slice(t, ev->attr_keys[i]);
			mix_slice(t, ev->attr_vals[i]);
		}
	}
	/* a row count derived from the data stops the reader early sometimes */
	return t->rows == 1000 ? 5 : 0;
}

static int read_all(const uint8_t *data, size_t size, size_t chunk, trace *t)
{
	cnt_csvin *r = cnt_csvin_new();
	cnt_err err = {"", CNT_ERR_DATA};
	int rc = 0;

	if (r == NULL)
		return -2;
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < size && rc == 0; i += chunk)
		rc = cnt_csvin_feed(r, data + i, size - i < chunk ? size - i : chunk, on_row, t, &err);
	if (rc == 0)
		rc = cnt_csvin_finish(r, on_row, t, &err);
	if (rc == -1 && err.msg[0] == '\0')
		__builtin_trap();
	cnt_csvin_free(r);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	trace a, b, c;
	int ra, rb, rc;
	size_t split = size ? (data[0] % size) + 1 : 1;

	if (size > 65536)
		return 0;
	ra = read_all(data, size, size ? size : 1, &a);
	rb = read_all(data, size, split, &b);
	rc = read_all(data, size, 1, &c);
	if (ra != rb || ra != rc || a.hash != b.hash || a.hash != c.hash || a.rows != b.rows ||
	    a.rows != c.rows)
		__builtin_trap();
	return 0;
}
