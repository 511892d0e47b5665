/*
 * fuzz_csv_ahead.c - libFuzzer target for CSV read ahead
 * (cnt_ahead_start_csv, lib/ingest/ahead.h: fill_csv() and csv_take() in
 * ahead.c), against cnt_csvin fed the whole text at once.
 *
 * The first 8 bytes choose the text and how it is read:
 *   [0]        bit 0: the text comes through a pipe, in pieces of 1 to
 *              4096 bytes (of a long text, at least a 512th of it), else
 *              from a memfd (a regular file); bits 1-2: a header put
 *              before the rest (0 none, 1 the four needed columns, 2 with
 *              delta, event_time, origin and two attrs columns, 3 every
 *              field and 60 to 67 attrs columns, bits 3-5 adding to 60,
 *              so that rows can have more attrs than CNT_ATTRS_MAX);
 *   [1]        160 to 223: the rest repeated [1] - 158 times (2 to 65);
 *              224 and over: ([1] - 223) * 256 times (256 to 8,192), so a
 *              short input makes thousands of rows ("x\n" is a row of two
 *              bytes) and chunks (2,048 rows) are filled and cut; the
 *              text is cut to whole repeats of at most 128 KiB (long
 *              texts are slow: they are the fuzzer's choice, not the
 *              common case);
 *   [2]        255: of at most 2 MiB instead (slow, so rare), so that a
 *              chunk's bytes can pass 1 MiB and a row be over 1 MiB;
 *   [3], [4]   the text's first bytes passed to cnt_ahead_start_csv as
 *              read already: [3] + 256 * ([4] & 127), times 16 when bit
 *              7 of [4] is set (at most the text);
 *   [5] to [7] the seed of the pipe's pieces.
 * The pipe is fuzz_pipe.h's, as in fuzz_lines.c: every read ends where
 * the fuzzer chose.
 *
 * The oracle is cnt_csvin fed the whole text, then finished, every row
 * kept (a deep copy).  Every chunk's rows are the oracle's, in order, none
 * lost or invented: line number, text bytes, never overlong; problem
 * status, field and message; for an OK row every field (the seven slices
 * and whether they are NULL, delta, event_time, origin and their has_
 * flags, nattrs, the attrs keys and values when at most CNT_ATTRS_MAX,
 * else attr_keys and attr_vals NULL) and the fingerprint, cnt_admit_fp()
 * of the oracle's event.  The end (0) comes only after every row, and
 * again after it; an error (-1) only where the oracle's feed or finish
 * returned one, after all its rows, its message the oracle's after
 * "'fuzz': ".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "fuzz_input.h"
#include "fuzz_pipe.h"
#include "ingest/admit.h"
#include "ingest/ahead.h"
#include "ingest/rawevent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEAD 8
#define TEXT_MAX ((size_t)128 << 10)
#define TEXT_LONG ((size_t)2 << 20)
#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

/* ---- the oracle ------------------------------------------------------- */

/* A row as cnt_csvin gave it: its slices' p are offsets + 1 into store
 * (NULL stays NULL), its attrs at aoff in attrs (when kept). */
typedef struct row {
	uint64_t no;
	size_t toff, tn;
	cnt_raw_problem pb;
	cnt_raw_event ev;
	size_t aoff;
	cnt_fp fp;
} row;

typedef struct oracle {
	row *rows;
	size_t count, cap, next;
	cnt_buf store;
	cnt_slice *attrs;
	size_t nattr, attrcap;
	int nomem;
} oracle;

static cnt_slice keep(oracle *o, cnt_slice s)
{
	size_t at = o->store.len;

	if (s.p == NULL)
		return s;
	if (s.n && cnt_buf_append(&o->store, s.p, s.n) != 0)
		o->nomem = 1;
	s.p = (const char *)(uintptr_t)(at + 1);
	return s;
}

static cnt_slice back(const oracle *o, cnt_slice s)
{
	if (s.p != NULL)
		s.p = (const char *)o->store.p + ((uintptr_t)s.p - 1);
	return s;
}

static int take(void *ctx, uint64_t no, const cnt_raw_event *ev, const cnt_raw_problem *pb,
	const char *text, size_t n)
{
	oracle *o = ctx;
	row *r;

	if (o->count == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 256;
		row *p = realloc(o->rows, cap * sizeof(*p));

		if (p == NULL) {
			o->nomem = 1;
			return -1;
		}
		o->rows = p;
		o->cap = cap;
	}
	r = &o->rows[o->count++];
	memset(r, 0, sizeof(*r));
	r->no = no;
	r->pb = *pb;
	r->toff = o->store.len;
	r->tn = n;
	if (n && cnt_buf_append(&o->store, text, n) != 0)
		o->nomem = 1;
	if (pb->status != CNT_RAW_OK)
		return o->nomem ? -1 : 0;
	r->fp = cnt_admit_fp(ev);
	r->ev = *ev;
	r->ev.idempotency_key = keep(o, ev->idempotency_key);
	r->ev.tenant_id = keep(o, ev->tenant_id);
	r->ev.counter_id = keep(o, ev->counter_id);
	r->ev.member_ref = keep(o, ev->member_ref);
	r->ev.item = keep(o, ev->item);
	r->ev.subject = keep(o, ev->subject);
	r->ev.signature = keep(o, ev->signature);
	r->ev.attr_keys = r->ev.attr_vals = NULL;
	r->aoff = o->nattr;
	if (ev->nattrs <= CNT_ATTRS_MAX) {
		if (o->nattr + 2 * ev->nattrs > o->attrcap) {
			size_t cap = 2 * (o->nattr + 2 * ev->nattrs) + 64;
			cnt_slice *p = realloc(o->attrs, cap * sizeof(*p));

			if (p == NULL) {
				o->nomem = 1;
				return -1;
			}
			o->attrs = p;
			o->attrcap = cap;
		}
		for (size_t k = 0; k < ev->nattrs; k++) {
			o->attrs[o->nattr + k] = keep(o, ev->attr_keys[k]);
			o->attrs[o->nattr + ev->nattrs + k] = keep(o, ev->attr_vals[k]);
		}
		o->nattr += 2 * ev->nattrs;
	}
	return o->nomem ? -1 : 0;
}

static void oracle_free(oracle *o)
{
	free(o->rows);
	free(o->attrs);
	cnt_buf_release(&o->store);
}

static int same(cnt_slice a, cnt_slice b)
{
	if (a.p == NULL || b.p == NULL)
		return a.p == b.p;
	return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

/* Row j of a chunk: the oracle's next. */
static void check_row(oracle *o, const cnt_ahead_chunk *c, size_t j)
{
	const cnt_line *l = &c->line[j];
	const cnt_raw_problem *pb = &c->pb[j];
	const cnt_raw_event *x = &c->raw[j];
	const row *r;
	const cnt_raw_event *ev;

	CHECK(o->next < o->count);
	r = &o->rows[o->next++];
	ev = &r->ev;
	CHECK(l->no == r->no && !l->overlong && l->n == r->tn);
	CHECK(l->n == 0 || memcmp(l->p, o->store.p + r->toff, l->n) == 0);
	CHECK(pb->status == r->pb.status && strcmp(pb->msg, r->pb.msg) == 0);
	CHECK((pb->field == NULL) == (r->pb.field == NULL));
	CHECK(pb->field == NULL || strcmp(pb->field, r->pb.field) == 0);
	if (r->pb.status != CNT_RAW_OK)
		return;
	CHECK(same(x->idempotency_key, back(o, ev->idempotency_key)) && same(x->tenant_id, back(o, ev->tenant_id)) &&
	      same(x->counter_id, back(o, ev->counter_id)) && same(x->member_ref, back(o, ev->member_ref)) &&
	      same(x->item, back(o, ev->item)) && same(x->subject, back(o, ev->subject)) &&
	      same(x->signature, back(o, ev->signature)));
	CHECK(x->has_delta == ev->has_delta && (!ev->has_delta || x->delta == ev->delta) &&
	      x->has_event_time == ev->has_event_time &&
	      (!ev->has_event_time || x->event_time_ms == ev->event_time_ms) &&
	      x->has_origin == ev->has_origin && (!ev->has_origin || x->origin == ev->origin) &&
	      x->nattrs == ev->nattrs);
	if (ev->nattrs > CNT_ATTRS_MAX) {
		CHECK(x->attr_keys == NULL && x->attr_vals == NULL);
	} else {
		for (size_t k = 0; k < ev->nattrs; k++)
			CHECK(same(x->attr_keys[k], back(o, o->attrs[r->aoff + k])) &&
			      same(x->attr_vals[k], back(o, o->attrs[r->aoff + ev->nattrs + k])));
	}
	CHECK(c->fp[j].hi == r->fp.hi && c->fp[j].lo == r->fp.lo);
}


/* ---- the run ------------------------------------------------------------ */

static size_t header(char *h, size_t cap, int which, int extra)
{
	size_t n;

	switch (which) {
	case 1:
		return (size_t)snprintf(h, cap, "idempotency_key,tenant_id,counter_id,member_ref\n");
	case 2:
		return (size_t)snprintf(h, cap, "idempotency_key,tenant_id,counter_id,member_ref,delta,event_time,"
			"origin,attrs.region,attrs.device\r\n");
	case 3:
		n = (size_t)snprintf(h, cap, "idempotency_key,tenant_id,counter_id,member_ref,item,subject,"
			"signature,delta,event_time,origin");
		for (int k = 0; k < 60 + extra; k++)
			n += (size_t)snprintf(h + n, cap - n, ",attrs.a%d", k);
		n += (size_t)snprintf(h + n, cap - n, "\n");
		return n;
	default:
		return 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static cnt_ahead *a;
	static char head[1024];
	uint8_t h[HEAD] = {0};
	size_t body = size > HEAD ? size - HEAD : 0, reps = 1, len, hn, pn, most;
	char *text;
	oracle o;
	cnt_csvin *in;
	cnt_ahead_chunk c;
	cnt_err oerr, err;
	fuzz_pipe w = {0};
	int orc, rc, fd = -1;

	if (size > 0)
		memcpy(h, data, size < HEAD ? size : HEAD);
	if (a == NULL && (a = cnt_ahead_new()) == NULL)
		return 0;
	hn = header(head, sizeof(head), (h[0] >> 1) & 3, (h[0] >> 3) & 7);
	if (h[1] >= 224)
		reps = ((size_t)h[1] - 223) * 256;
	else if (h[1] >= 160)
		reps = (size_t)h[1] - 158;
	most = h[2] == 255 ? TEXT_LONG : TEXT_MAX;
	if (body == 0)
		reps = 1;
	else if (body * reps > most - hn)
		reps = (most - hn) / body;
	if (reps == 0)
		return 0;
	len = hn + body * reps;
	if ((text = malloc(len ? len : 1)) == NULL)
		return 0;
	memcpy(text, head, hn);
	for (size_t k = 0; k < reps && body > 0; k++)
		memcpy(text + hn + k * body, data + HEAD, body);
	pn = ((size_t)h[3] | (size_t)(h[4] & 127) << 8) << (h[4] & 128 ? 4 : 0);
	if (pn > len)
		pn = len;

	/* the oracle: the whole text at once */
	memset(&o, 0, sizeof(o));
	memset(&oerr, 0, sizeof(oerr));
	if ((in = cnt_csvin_new()) == NULL)
		goto out;
	orc = cnt_csvin_feed(in, text, len, take, &o, &oerr);
	if (orc == 0)
		orc = cnt_csvin_finish(in, take, &o, &oerr);
	cnt_csvin_free(in);
	if (o.nomem)
		goto out;

	if (h[0] & 1) {
		uint64_t seed = (uint64_t)h[5] | (uint64_t)h[6] << 8 | (uint64_t)h[7] << 16;

		if ((fd = fuzz_pipe_start(&w, text + pn, len - pn, seed)) < 0)
			goto out;
	} else if ((fd = fuzz_input_fd("csv", (const uint8_t *)text + pn, len - pn)) < 0) {
		goto out;
	}

	if (cnt_ahead_start_csv(a, fd, "fuzz", text, pn, &err) == 0) {
		while ((rc = cnt_ahead_next(a, &c, &err)) > 0) {
			CHECK(c.n > 0);
			for (size_t j = 0; j < c.n; j++)
				check_row(&o, &c, j);
		}
		/* every row first, then the oracle's end or error */
		CHECK(o.next == o.count);
		if (rc == 0) {
			CHECK(orc == 0);
			CHECK(cnt_ahead_next(a, &c, &err) == 0);
		} else {
			CHECK(orc != 0);
			CHECK(strncmp(err.msg, "'fuzz': ", 8) == 0);
			CHECK(strncmp(err.msg + 8, oerr.msg, sizeof(err.msg) - 9) == 0);
		}
		cnt_ahead_stop(a);
	}
	close(fd);   /* a writer not done yet fails on it and ends */
	fuzz_pipe_join(&w);
out:
	oracle_free(&o);
	free(text);
	return 0;
}
