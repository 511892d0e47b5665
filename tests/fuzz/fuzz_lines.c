/*
 * fuzz_lines.c - libFuzzer target for the line reader (cnt_lines_*,
 * lib/ingest/input.h) and the read-ahead that drives it (cnt_ahead_*,
 * lib/ingest/ahead.h).
 *
 * The first 8 bytes choose how the rest (the text, repeated up to 65
 * times) is read:
 *   [0], [1]       the line limit: [0] + 256 * ([1] & 3), and 65536 more
 *                  when bit 2 of [1] is set;
 *   [2]            bit 0: the text comes through a pipe, in pieces of
 *                  1 to 4096 bytes (of a long text, at least a 512th of
 *                  it: fast), else from a memfd (a regular file);
 *                  bits 1-2: the driver (below); bits 3-7: the most lines
 *                  asked for a call, 1 to 32;
 *   [3]            192 and over: the text repeated [3] - 190 times;
 *   [4]            the text's first bytes passed to cnt_lines_new as read
 *                  already (at most the limit);
 *   [5] to [7]     the seed of the choices made on the way (the pipe's
 *                  pieces, steps, buffers, when to stop a round).
 * The pipe is fuzz_pipe.h's: one page long, each piece written only once
 * it is empty, so every read ends where the fuzzer chose and a run is the
 * same every time.
 *
 * Drivers: 0, cnt_lines_read() into the reader's own buffer, with
 * cnt_lines_take() now and then; 1 and 3, rounds as ahead.c's fill()
 * does them: cnt_lines_into() one of three buffers or the reader's own,
 * with a step, lines taken a few at a time, read only when none is left,
 * the round ended after some lines or when none has come; 2,
 * cnt_ahead_start() / cnt_ahead_next() themselves.
 *
 * The oracle is the text split at '\n' by a loop of its own: a final
 * piece after the last '\n' is a line when it is not empty; a '\r' stays
 * in its line; a line of more than the limit's bytes is overlong and
 * comes out as its first bytes: more than the limit (or CNT_LINE_KEEP
 * when that is less), at most its length and CNT_LINE_KEEP (input.h).
 * Every line handed out is the oracle's next one: its number, overlong
 * flag, length and bytes, and cnt_line_blank(); none is lost or invented,
 * and the end (0) is said once every line is out, and said again.
 * Read into a caller's buffer, a line lies inside it, and is still at the
 * offset it was handed out at, with the same bytes, when the reader has
 * turned to another buffer (however often this one grew).  From a memfd,
 * cnt_lines_read() reads only when no complete line was left: when the
 * file's offset moved, the first line it returns ended beyond it.  The
 * read-ahead's lines are the oracle's, and each line that is not blank
 * or overlong parses (status, problem, fields, attrs, fingerprint) as
 * cnt_jsonl_parse() parses the oracle's line; the others are MALFORMED.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "fuzz_input.h"
#include "fuzz_pipe.h"
#include "ingest/admit.h"
#include "ingest/ahead.h"
#include "ingest/input.h"
#include "ingest/rawevent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEAD 8
#define TEXT_MAX ((size_t)1 << 18)
/* lines asked for at a time: [2] is 1 to BATCH_MAX */
#define BATCH_MAX 32
#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

/* ---- the oracle ------------------------------------------------------- */

typedef struct oracle {
	const char *text;
	size_t len, max, pn;    /* pn: bytes passed as read already */
	size_t *off, *n;        /* line i is text[off[i] .. off[i] + n[i]) */
	size_t count, next;     /* lines; the next one to be handed out */
} oracle;

static int oracle_init(oracle *o, const char *text, size_t len, size_t max, size_t pn)
{
	size_t lines = 0, at = 0;

	memset(o, 0, sizeof(*o));
	o->text = text;
	o->len = len;
	o->max = max;
	o->pn = pn;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	o->off = malloc((lines + 1) * sizeof(size_t));
	o->n = malloc((lines + 1) * sizeof(size_t));
	if (o->off == NULL || o->n == NULL)
		return -1;
	for (size_t i = 0; i < len; i++)
		if (text[i] == '\n') {
			o->off[o->count] = at;
			o->n[o->count++] = i - at;
			at = i + 1;
		}
	if (at < len) {
		o->off[o->count] = at;
		o->n[o->count++] = len - at;
	}
	return 0;
}

static void oracle_free(oracle *o)
{
	free(o->off);
	free(o->n);
}

/* The bytes line i is handed out with, by the rules in input.h. */
static void check_bytes(const oracle *o, size_t i, const char *p, size_t n, int overlong)
{
	size_t want = o->n[i];

	CHECK(overlong == (want > o->max));
	if (!overlong) {
		CHECK(n == want);
	} else {
		size_t hi = want < CNT_LINE_KEEP ? want : CNT_LINE_KEEP;
		size_t lo = o->max + 1 < CNT_LINE_KEEP ? o->max + 1 : CNT_LINE_KEEP;

		CHECK(n >= lo && n <= hi);
	}
	CHECK(n == 0 || memcmp(p, o->text + o->off[i], n) == 0);
}

/* A line handed out: the oracle's next.  Returns its index. */
static size_t check_line(oracle *o, const cnt_line *g)
{
	size_t i = o->next++;
	int blank = 1;

	CHECK(i < o->count);
	CHECK(g->no == (uint64_t)i + 1);
	check_bytes(o, i, g->p, g->n, g->overlong);
	for (size_t k = 0; k < g->n; k++)
		if (g->p[k] != ' ' && g->p[k] != '\t' && g->p[k] != '\r')
			blank = 0;
	CHECK(cnt_line_blank(g) == (blank && !g->overlong));
	return i;
}


/* ---- drivers ---------------------------------------------------------- */

typedef struct run {
	oracle o;
	int fd, regular;
	size_t batch;
	uint64_t seed;
} run;

/* A step for cnt_lines_into(); a long text's are not tiny (fast). */
static size_t step_size(uint64_t *s, size_t len)
{
	uint64_t r = fuzz_rnd(s);
	size_t step;

	switch (r % 5) {
	case 0: return 0;   /* 4 KiB */
	case 1: step = 1 + (size_t)(r >> 8) % 16; break;
	case 2: step = 1 + (size_t)(r >> 8) % 256; break;
	case 3: step = 1 + (size_t)(r >> 8) % 4096; break;
	default: step = 4096 + (size_t)(r >> 8) % 8192; break;
	}
	return step < len / FUZZ_PIECES_MAX ? len / FUZZ_PIECES_MAX : step;
}

static off_t fd_pos(const run *r)
{
	return r->regular ? lseek(r->fd, 0, SEEK_CUR) : 0;
}

/* cnt_lines_read(), checked: at least one line or the end, never more
 * than asked, and from a file, a read only when no whole line was left. */
static long read_lines(run *r, cnt_lines *l, cnt_line *got, size_t max)
{
	cnt_err err;
	off_t before = fd_pos(r);
	long k = cnt_lines_read(l, got, max, &err);

	CHECK(k >= 0 && (size_t)k <= max);
	if (k == 0)
		CHECK(r->o.next == r->o.count);
	if (k > 0 && fd_pos(r) != before) {
		size_t i = r->o.next;

		CHECK(i < r->o.count && r->o.off[i] + r->o.n[i] >= r->o.pn + (size_t)before);
	}
	return k;
}

/* Driver 0: the reader's own buffer. */
static void drive_own(run *r, cnt_lines *l)
{
	cnt_line got[BATCH_MAX];
	long k;

	for (;;) {
		if (fuzz_rnd(&r->seed) % 4 == 0) {
			size_t t = cnt_lines_take(l, got, r->batch);

			CHECK(t <= r->batch);
			for (size_t j = 0; j < t; j++)
				check_line(&r->o, &got[j]);
			continue;
		}
		if ((k = read_lines(r, l, got, r->batch)) == 0)
			break;
		for (long j = 0; j < k; j++)
			check_line(&r->o, &got[j]);
	}
	CHECK(read_lines(r, l, got, r->batch) == 0);
	CHECK(cnt_lines_take(l, got, r->batch) == 0);
}

/* The lines handed out into a caller's buffer, by offset. */
typedef struct held {
	size_t *idx, *off, *n;
	int *overlong;
	size_t count;
} held;

static void held_check(const oracle *o, held *h, cnt_buf *b)
{
	for (size_t j = 0; j < h->count; j++) {
		CHECK(h->off[j] + h->n[j] <= b->len);
		check_bytes(o, h->idx[j], (const char *)b->p + h->off[j], h->n[j], h->overlong[j]);
	}
	/* as fill() leaves it: up to its last line */
	if (h->count > 0)
		b->len = h->off[h->count - 1] + h->n[h->count - 1];
	h->count = 0;
}

/* Drivers 1 and 3: rounds, each into one of three buffers or the
 * reader's own, as ahead.c's fill() does. */
static void drive_into(run *r, cnt_lines *l)
{
	cnt_buf b[3] = {CNT_BUF_INIT, CNT_BUF_INIT, CNT_BUF_INIT};
	cnt_buf *at = NULL;
	cnt_line got[BATCH_MAX];
	held h;
	int end = 0;

	memset(&h, 0, sizeof(h));
	h.idx = malloc((r->o.count + 1) * sizeof(size_t));
	h.off = malloc((r->o.count + 1) * sizeof(size_t));
	h.n = malloc((r->o.count + 1) * sizeof(size_t));
	h.overlong = malloc((r->o.count + 1) * sizeof(int));
	if (h.idx == NULL || h.off == NULL || h.n == NULL || h.overlong == NULL)
		goto done;
	while (!end) {
		uint64_t c = fuzz_rnd(&r->seed);
		cnt_buf *to = c % 4 == 3 ? NULL : &b[c % 4];
		size_t limit = 1 + (size_t)(c >> 8) % 64, lines = 0;

		if (cnt_lines_into(l, to, step_size(&r->seed, r->o.len)) != 0)
			goto done;   /* out of memory: nothing to check */
		if (to != at && at != NULL)
			held_check(&r->o, &h, at);
		at = to;
		while (lines < limit) {
			size_t room = limit - lines < r->batch ? limit - lines : r->batch;
			long k = (long)cnt_lines_take(l, got, room);

			CHECK((size_t)k <= room);
			if (k == 0) {
				/* a pipe's round ends with what has come, sometimes */
				if (lines > 0 && fuzz_rnd(&r->seed) % 3 == 0)
					break;
				if (fuzz_rnd(&r->seed) % 2 == 0)
					CHECK(cnt_lines_into(l, to, step_size(&r->seed, r->o.len)) == 0);   /* the same buffer */
				if ((k = read_lines(r, l, got, room)) == 0) {
					end = 1;
					break;
				}
			}
			for (long j = 0; j < k; j++) {
				size_t i = check_line(&r->o, &got[j]);

				lines++;
				if (to == NULL)
					continue;
				CHECK(got[j].p >= (const char *)to->p &&
				      got[j].p + got[j].n <= (const char *)to->p + to->len);
				h.idx[h.count] = i;
				h.off[h.count] = (size_t)(got[j].p - (const char *)to->p);
				h.n[h.count] = got[j].n;
				h.overlong[h.count++] = got[j].overlong;
			}
		}
	}
	CHECK(cnt_lines_into(l, NULL, 0) == 0);
	if (at != NULL)
		held_check(&r->o, &h, at);
	CHECK(read_lines(r, l, got, r->batch) == 0);
done:
	free(h.idx);
	free(h.off);
	free(h.n);
	free(h.overlong);
	for (int j = 0; j < 3; j++)
		cnt_buf_release(&b[j]);
}

static int same(cnt_slice a, cnt_slice b)
{
	if (a.p == NULL || b.p == NULL)
		return a.p == b.p;
	return a.n == b.n && memcmp(a.p, b.p, a.n) == 0;
}

/* A chunk's parse of line i agrees with a parse of the oracle's. */
static void check_parsed(cnt_jsonl *jp, const oracle *o, size_t i, const cnt_ahead_chunk *c, size_t j)
{
	const cnt_raw_event *x = &c->raw[j];
	cnt_raw_event ev;
	cnt_raw_problem pb;
	cnt_raw_status st;
	cnt_fp fp;

	if (cnt_line_blank(&c->line[j]) || c->line[j].overlong) {
		CHECK(c->pb[j].status == CNT_RAW_MALFORMED);
		return;
	}
	st = cnt_jsonl_parse(jp, o->text + o->off[i], o->n[i], &ev, &pb);
	CHECK(c->pb[j].status == st && strcmp(c->pb[j].msg, pb.msg) == 0);
	CHECK((c->pb[j].field == NULL) == (pb.field == NULL));
	CHECK(pb.field == NULL || strcmp(c->pb[j].field, pb.field) == 0);
	if (st != CNT_RAW_OK)
		return;
	CHECK(same(x->idempotency_key, ev.idempotency_key) && same(x->tenant_id, ev.tenant_id) &&
	      same(x->counter_id, ev.counter_id) && same(x->member_ref, ev.member_ref) &&
	      same(x->item, ev.item) && same(x->subject, ev.subject) && same(x->signature, ev.signature));
	CHECK(x->has_delta == ev.has_delta && x->delta == ev.delta &&
	      x->has_event_time == ev.has_event_time && x->event_time_ms == ev.event_time_ms &&
	      x->has_origin == ev.has_origin && (!ev.has_origin || x->origin == ev.origin) &&
	      x->nattrs == ev.nattrs);
	if (ev.nattrs > CNT_ATTRS_MAX)
		CHECK(x->attr_keys == NULL && x->attr_vals == NULL);
	else
		for (size_t k = 0; k < ev.nattrs; k++)
			CHECK(same(x->attr_keys[k], ev.attr_keys[k]) && same(x->attr_vals[k], ev.attr_vals[k]));
	fp = cnt_admit_fp(&ev);
	CHECK(fp.hi == c->fp[j].hi && fp.lo == c->fp[j].lo);
}

/* Driver 2: the read-ahead, one reader for every input. */
static void drive_ahead(run *r, const char *pre, size_t pn)
{
	static cnt_ahead *a;
	static cnt_jsonl *jp;
	cnt_ahead_chunk c;
	cnt_err err;
	int rc;

	if (a == NULL)
		a = cnt_ahead_new();
	if (jp == NULL)
		jp = cnt_jsonl_new();
	if (a == NULL || jp == NULL)
		return;
	if (cnt_ahead_start(a, r->fd, "fuzz", r->o.max, pre, pn, &err) != 0)
		return;
	while ((rc = cnt_ahead_next(a, &c, &err)) > 0) {
		CHECK(c.n > 0);
		for (size_t j = 0; j < c.n; j++)
			check_parsed(jp, &r->o, check_line(&r->o, &c.line[j]), &c, j);
	}
	/* out of memory reading ahead is the one way to -1 here */
	if (rc == 0) {
		CHECK(r->o.next == r->o.count);
		CHECK(cnt_ahead_next(a, &c, &err) == 0);
	}
	cnt_ahead_stop(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t h[HEAD] = {0};
	size_t body = size > HEAD ? size - HEAD : 0, reps, len, max, pn;
	char *text;
	run r;
	cnt_lines *l = NULL;
	fuzz_pipe w = {0};
	int pipe_in, driver;

	if (size > 0)
		memcpy(h, data, size < HEAD ? size : HEAD);
	max = (size_t)h[0] | (size_t)(h[1] & 3) << 8;
	if (h[1] & 4)
		max += 65536;
	pipe_in = h[2] & 1;
	driver = (h[2] >> 1) & 3;
	reps = h[3] >= 192 ? (size_t)h[3] - 190 : 1;
	if (body > TEXT_MAX / reps)
		return 0;
	len = body * reps;
	text = malloc(len ? len : 1);
	if (text == NULL)
		return 0;
	for (size_t k = 0; k < reps && body > 0; k++)
		memcpy(text + k * body, data + HEAD, body);
	pn = h[4];
	if (pn > max)
		pn = max;
	if (pn > len)
		pn = len;
	memset(&r, 0, sizeof(r));
	r.batch = 1 + (size_t)(h[2] >> 3);
	r.seed = (uint64_t)h[5] | (uint64_t)h[6] << 8 | (uint64_t)h[7] << 16;
	if (oracle_init(&r.o, text, len, max, pn) != 0)
		goto out;

	if (pipe_in) {
		if ((r.fd = fuzz_pipe_start(&w, text + pn, len - pn, r.seed)) < 0)
			goto out;
	} else {
		if ((r.fd = fuzz_input_fd("lines", (const uint8_t *)text + pn, len - pn)) < 0)
			goto out;
		r.regular = 1;
	}

	if (driver == 2) {
		drive_ahead(&r, text, pn);
	} else if ((l = cnt_lines_new(r.fd, "fuzz", max, text, pn)) != NULL) {
		if (driver == 0)
			drive_own(&r, l);
		else
			drive_into(&r, l);
	}
	cnt_lines_free(l);
	close(r.fd);   /* a writer not done yet fails on it and ends */
	fuzz_pipe_join(&w);
out:
	oracle_free(&r.o);
	free(text);
	return 0;
}
