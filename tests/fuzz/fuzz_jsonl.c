/*
 * fuzz_jsonl.c - libFuzzer target for the JSON-lines event parser.
 *
 * The input is split at '\n' and every line goes through one reused
 * parser.  Beyond "no crash, no leak, no out-of-bounds read", it checks:
 *   - the status and the problem agree (BAD_FIELD names a field and its
 *     message starts with "field '", MALFORMED names none, both say why);
 *   - an accepted event survives a round trip: written back as JSON (every
 *     string escaped as \u00XX or plainly) and parsed again, it gives the
 *     same fields.  That catches decoding that silently changes bytes.
 *     The second parse decodes into a scratch of exactly the written
 *     line's length (cnt_jsonl_parse_into), so decoding that needs more
 *     than the line's length is caught too;
 *   - every line, parsed again by a second parser into a scratch of
 *     exactly its length (cnt_jsonl_parse_into, as cnt-ingest's reading
 *     thread does), gives the same status, problem and event: decoding
 *     the input's own escapes (surrogate pairs, 3-byte characters, bad
 *     ones) never needs more room than the line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "ingest/rawevent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put_str(cnt_buf *b, cnt_slice s, int escape_all)
{
	static const char hex[] = "0123456789abcdef";

	cnt_buf_putc(b, '"');
	for (size_t i = 0; i < s.n; i++) {
		unsigned char c = (unsigned char)s.p[i];
		if (c < 0x20 || c == '"' || c == '\\' || (escape_all && c < 0x80)) {
			char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			cnt_buf_append(b, e, 6);
		} else {
			cnt_buf_putc(b, c);
		}
	}
	cnt_buf_putc(b, '"');
}

static void put_field(cnt_buf *b, const char *name, cnt_slice s, int esc)
{
	if (s.p == NULL)
		return;
	cnt_buf_printf(b, "%s\"%s\":", b->len > 1 ? "," : "", name);
	put_str(b, s, esc);
}

static int same(cnt_slice a, cnt_slice b)
{
	if (a.p == NULL || b.p == NULL)
		return a.p == b.p;
	return a.n == b.n && memcmp(a.p, b.p, a.n) == 0;
}

static void check_event(cnt_jsonl *p, const cnt_raw_event *ev, int esc)
{
	const cnt_slice *fs[7] = {&ev->idempotency_key, &ev->tenant_id, &ev->counter_id,
		&ev->member_ref, &ev->item, &ev->subject, &ev->signature};
	static const char *const names[7] = {"idempotency_key", "tenant_id", "counter_id",
		"member_ref", "item", "subject", "signature"};
	cnt_buf b = CNT_BUF_INIT, keep = CNT_BUF_INIT;
	cnt_raw_event ev2;
	cnt_raw_problem pb2;
	cnt_slice mine[7];
	char *scratch;
	size_t moff[7];
	int64_t delta = ev->delta, tm = ev->event_time_ms;
	int hd = ev->has_delta, ht = ev->has_event_time, ho = ev->has_origin, org = ev->origin;
	size_t nattrs = ev->nattrs, *koff, *voff;

	cnt_buf_putc(&b, '{');
	for (int i = 0; i < 7; i++)
		put_field(&b, names[i], *fs[i], esc);
	if (hd)
		cnt_buf_printf(&b, "%s\"delta\":%lld", b.len > 1 ? "," : "", (long long)delta);
	if (ht)
		cnt_buf_printf(&b, "%s\"event_time\":%lld", b.len > 1 ? "," : "", (long long)tm);
	if (ho)
		cnt_buf_printf(&b, "%s\"origin\":\"%s\"", b.len > 1 ? "," : "", org ? "CLIENT" : "backend");
	if (nattrs) {
		cnt_buf_printf(&b, "%s\"attrs\":{", b.len > 1 ? "," : "");
		for (size_t i = 0; i < nattrs; i++) {
			if (i)
				cnt_buf_putc(&b, ',');
			put_str(&b, ev->attr_keys[i], esc);
			cnt_buf_putc(&b, ':');
			put_str(&b, ev->attr_vals[i], !esc);
		}
		cnt_buf_putc(&b, '}');
	}
	cnt_buf_putc(&b, '}');

	/* keep copies of the first parse's strings */
	koff = calloc(nattrs * 2 + 1, sizeof(*koff));
	voff = koff + nattrs;
	for (int i = 0; i < 7; i++) {
		moff[i] = keep.len;
		if (fs[i]->p)
			cnt_buf_append(&keep, fs[i]->p, fs[i]->n);
	}
	for (size_t i = 0; i < nattrs; i++) {
		koff[i] = keep.len;
		cnt_buf_append(&keep, ev->attr_keys[i].p, ev->attr_keys[i].n);
		voff[i] = keep.len;
		cnt_buf_append(&keep, ev->attr_vals[i].p, ev->attr_vals[i].n);
	}
	cnt_buf_putc(&keep, 0);
	for (int i = 0; i < 7; i++) {
		mine[i].p = fs[i]->p ? (const char *)keep.p + moff[i] : NULL;
		mine[i].n = fs[i]->n;
	}

	/* parsed again with a scratch of exactly the line's length, outside
	 * the parser: a decoded string longer than its text is a write out of
	 * bounds */
	scratch = malloc(b.len);
	if (scratch == NULL ||
	    cnt_jsonl_parse_into(p, (const char *)b.p, b.len, scratch, &ev2, &pb2) != CNT_RAW_OK)
		__builtin_trap();
	{
		const cnt_slice *gs[7] = {&ev2.idempotency_key, &ev2.tenant_id, &ev2.counter_id,
			&ev2.member_ref, &ev2.item, &ev2.subject, &ev2.signature};
		for (int i = 0; i < 7; i++)
			if (!same(mine[i], *gs[i]))
				__builtin_trap();
	}
	if (ev2.has_delta != hd || (hd && ev2.delta != delta) || ev2.has_event_time != ht ||
	    (ht && ev2.event_time_ms != tm) || ev2.has_origin != ho || (ho && ev2.origin != org) ||
	    ev2.nattrs != nattrs)
		__builtin_trap();
	for (size_t i = 0; i < nattrs; i++) {
		cnt_slice k = {(const char *)keep.p + koff[i], voff[i] - koff[i]};
		cnt_slice v = {(const char *)keep.p + voff[i],
			(i + 1 < nattrs ? koff[i + 1] : keep.len - 1) - voff[i]};
		if (!same(k, ev2.attr_keys[i]) || !same(v, ev2.attr_vals[i]))
			__builtin_trap();
	}
	free(koff);
	free(scratch);
	cnt_buf_release(&b);
	cnt_buf_release(&keep);
}

/* The line parsed into a scratch of exactly its length by q gives what
 * p's parse gave (st, ev, pb). */
static void check_into(cnt_jsonl *q, const char *s, size_t n, cnt_raw_status st, const cnt_raw_event *ev,
	const cnt_raw_problem *pb)
{
	char *scratch = malloc(n ? n : 1);
	cnt_raw_event e2;
	cnt_raw_problem pb2;

	if (scratch == NULL)
		return;
	if (cnt_jsonl_parse_into(q, s, n, scratch, &e2, &pb2) != st || pb2.status != st ||
	    strcmp(pb2.msg, pb->msg) != 0 || (pb2.field == NULL) != (pb->field == NULL) ||
	    (pb->field != NULL && strcmp(pb2.field, pb->field) != 0))
		__builtin_trap();
	if (st == CNT_RAW_OK) {
		if (!same(ev->idempotency_key, e2.idempotency_key) || !same(ev->tenant_id, e2.tenant_id) ||
		    !same(ev->counter_id, e2.counter_id) || !same(ev->member_ref, e2.member_ref) ||
		    !same(ev->item, e2.item) || !same(ev->subject, e2.subject) ||
		    !same(ev->signature, e2.signature) || ev->has_delta != e2.has_delta ||
		    ev->delta != e2.delta || ev->has_event_time != e2.has_event_time ||
		    ev->event_time_ms != e2.event_time_ms || ev->has_origin != e2.has_origin ||
		    ev->origin != e2.origin || ev->nattrs != e2.nattrs)
			__builtin_trap();
		for (size_t i = 0; i < ev->nattrs; i++)
			if (!same(ev->attr_keys[i], e2.attr_keys[i]) || !same(ev->attr_vals[i], e2.attr_vals[i]))
				__builtin_trap();
	}
	free(scratch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cnt_jsonl *p = cnt_jsonl_new(), *q = cnt_jsonl_new();
	const char *s = (const char *)data, *end = s + size;
	cnt_raw_event ev;
	cnt_raw_problem pb;
	int k = 0;

	if (p == NULL || q == NULL) {
		cnt_jsonl_free(p);
		cnt_jsonl_free(q);
		return 0;
	}
	while (s <= end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		cnt_raw_status st = cnt_jsonl_parse(p, s, n, &ev, &pb);

		if (st != pb.status || (pb.msg[0] == '\0' && st != CNT_RAW_OK))
			__builtin_trap();
		if (st == CNT_RAW_MALFORMED && pb.field != NULL)
			__builtin_trap();
		if (st == CNT_RAW_BAD_FIELD &&
		    (pb.field == NULL || strncmp(pb.msg, "field '", 7) != 0))
			__builtin_trap();
		check_into(q, s, n, st, &ev, &pb);
		if (st == CNT_RAW_OK)
			check_event(p, &ev, k++ & 1);
		if (nl == NULL)
			break;
		s = nl + 1;
	}
	cnt_jsonl_free(p);
	cnt_jsonl_free(q);
	return 0;
}
