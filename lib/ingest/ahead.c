/*
 * ahead.c - JSON lines and CSV read and parsed ahead (see ahead.h).
 */
#include "ingest/ahead.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "ingest/admit.h"

#define CHUNK_LINES 2048
/* a chunk is cut once its lines hold this many bytes (checked every
 * TAKE lines, so it holds at most TAKE lines more) */
#define CHUNK_BYTES ((size_t)1 << 20)
#define TAKE 64
/* chunks: the one the caller holds and 15 filled ahead.  Four were
 * too few for the two threads' uneven pace (and the admitting thread's
 * first second, spent faulting in its duplicate table): 16 made 10 M
 * events 9 % faster, for 20 MB.  A chunk of the benchmark's lines
 * holds about 1.25 MiB; one of long lines with escapes (5 MiB of them,
 * decoded beside them, their keys joined) and 64 attrs a line, about
 * 28 MiB at worst.  So that 16 of those cannot be filled at once, the
 * reader fills a chunk beyond the next only while the chunks together
 * hold at most HELD_MAX, and over it first lets go of what the idle
 * chunks kept (may_fill()): at most HELD_MAX and one chunk in all. */
#define CHUNKS 16
#define HELD_MAX ((size_t)48 << 20)
/* The parser keeps what its largest line needed (its attrs arrays): one
 * that holds more than this is let go when a chunk is filled again. */
#define PARSER_KEEP ((size_t)64 << 10)

typedef struct chunk {
	size_t n;
	cnt_line line[CHUNK_LINES];
	size_t off[CHUNK_LINES];     /* of each line's bytes in bytes, while it fills */
	cnt_raw_event raw[CHUNK_LINES];
	cnt_raw_problem pb[CHUNK_LINES];
	cnt_fp fp[CHUNK_LINES];
	cnt_buf bytes;
	cnt_buf unesc;               /* strings with escapes, decoded: line i's at off[i] */
	cnt_buf keys;                /* each parsed line's cnt_admit_fp_key(), */
	size_t koff[CHUNK_LINES];    /* at these offsets, */
	size_t klen[CHUNK_LINES];    /* of these lengths, until hashed */
	cnt_buf attrs;               /* every line's attrs keys and values, side by side, */
	size_t aoff[CHUNK_LINES];    /* line i's at this index, until it is filled */
	int end;                     /* the input ends after these lines: 1 its end, -1 err */
	cnt_err err;
	size_t held;                 /* its buffers' memory, as counted in cnt_ahead.held */
} chunk;

struct cnt_ahead {
	chunk *ch;
	cnt_jsonl *jp;               /* the reading thread's: one for every line */
	cnt_line got[TAKE];          /* the reader thread's lines, before a chunk takes them */
	cnt_lines *lines;
	pthread_t thread;
	int running;                 /* thread started and not joined */
	pthread_mutex_t mu;
	pthread_cond_t cv_full, cv_free;
	/* chunk i is ch[i % CHUNKS]; the thread has filled `filled`, the
	 * caller has let go of `done` (it holds chunk done while it reads it) */
	uint64_t filled, done;
	int holding, stop;
	int regular;                 /* the input is a regular file */
	/* CSV (cnt_ahead_start_csv): its reader, and the bytes read and not
	 * yet fed to it, cbuf[cpos .. clen) */
	cnt_csvin *csv;
	chunk *cur;                  /* the chunk csv_take() fills */
	const char *name;
	int fd, csv_nomem;
	char *cbuf;
	size_t ccap, cpos, clen;
	uint64_t lines_seen, bytes_seen;   /* by the chunks filled, for step_for() */
	size_t held, peak;           /* what every chunk's buffers hold; the most so far */
};

cnt_ahead *cnt_ahead_new(void)
{
	cnt_ahead *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	if ((a->ch = calloc(CHUNKS, sizeof(*a->ch))) == NULL) {
		free(a);
		return NULL;
	}
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv_full, NULL);
	pthread_cond_init(&a->cv_free, NULL);
	return a;
}

void cnt_ahead_free(cnt_ahead *a)
{
	if (a == NULL)
		return;
	if (a->ch != NULL) {
		cnt_ahead_stop(a);
		for (int k = 0; k < CHUNKS; k++) {
			cnt_buf_release(&a->ch[k].bytes);
			cnt_buf_release(&a->ch[k].unesc);
			cnt_buf_release(&a->ch[k].keys);
			cnt_buf_release(&a->ch[k].attrs);
		}
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv_full);
		pthread_cond_destroy(&a->cv_free);
	}
	cnt_jsonl_free(a->jp);
	free(a->cbuf);
	free(a->ch);
	free(a);
}

/* What to read next into a chunk that has n lines, whose last ends at
 * used: about the bytes of the lines it still takes (at the input's mean
 * line so far, and one line more), so that little is read beyond the
 * chunk: that is copied out to the next (cnt_lines_into). */
static size_t step_for(const cnt_ahead *a, size_t n, size_t used)
{
	size_t mean = a->lines_seen > 0 ? a->bytes_seen / a->lines_seen + 1 : 256;
	size_t want = (CHUNK_LINES - n + 1) * mean;

	if (used < CHUNK_BYTES && want > CHUNK_BYTES - used + mean)
		want = CHUNK_BYTES - used + mean;
	return want < 4096 ? 4096 : want;
}

/* Fills c with the next lines of the input, read into its own buffer
 * (only what was read past its last line is copied, out to the reader's
 * buffer and in to the next chunk's), and parses them. */
static void fill(cnt_ahead *a, chunk *c)
{
	cnt_slice *at;
	size_t used = 0;   /* where c's last line ends in c->bytes */

	if (a->jp != NULL && cnt_jsonl_held(a->jp) > PARSER_KEEP) {
		cnt_jsonl_free(a->jp);
		a->jp = NULL;
	}
	c->n = 0;
	c->keys.len = 0;
	c->attrs.len = 0;
	c->end = 0;
	if (cnt_lines_into(a->lines, &c->bytes, step_for(a, 0, 0)) != 0) {
		cnt_err_nomem(&c->err);
		c->end = -1;
		return;
	}
	while (c->n < CHUNK_LINES && used < CHUNK_BYTES) {
		/* lines a few at a time, so that the byte limit holds too */
		size_t room = CHUNK_LINES - c->n < TAKE ? CHUNK_LINES - c->n : TAKE;
		long k = (long)cnt_lines_take(a->lines, a->got, room);

		if (k == 0) {
			/* Only what was read already goes in a chunk: lines that
			 * have come are judged before the input is waited on (a
			 * stalled writer's lines are not held back).  A regular
			 * file has no writer to wait on: its chunks are filled. */
			if (c->n > 0 && !a->regular)
				break;
			cnt_lines_into(a->lines, &c->bytes, step_for(a, c->n, used));   /* the same buffer: no memory */
			/* the one place the thread waits on the input: cancelled
			 * there when the caller stops early */
			pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
			k = cnt_lines_read(a->lines, a->got, room, &c->err);
			pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
			if (k <= 0) {
				c->end = k == 0 ? 1 : -1;
				break;
			}
		}
		/* the lines are in c->bytes, which moves as it grows: their
		 * places are kept, and pointed at once it is read */
		for (long j = 0; j < k; j++) {
			c->line[c->n] = a->got[j];
			c->off[c->n++] = (size_t)(a->got[j].p - (const char *)c->bytes.p);
			used = c->off[c->n - 1] + a->got[j].n;
		}
	}
	/* what was read beyond the chunk goes back to the reader's buffer,
	 * so that c's can be let go of while the next is filled */
	if (cnt_lines_into(a->lines, NULL, 0) != 0) {
		cnt_err_nomem(&c->err);
		c->end = -1;
		c->n = 0;
	}
	c->bytes.len = used;
	a->lines_seen += c->n;
	a->bytes_seen += used;
	/* Strings with escapes are decoded beside their line (never longer
	 * than it), so that one parser serves every line of the chunk and
	 * its memory stays in the cache; its attrs arrays are copied out,
	 * unless there are more than admission takes (ahead.h). */
	if (c->n > 0 && cnt_buf_reserve(&c->unesc, used) != 0) {
		cnt_err_nomem(&c->err);
		c->end = -1;
		c->n = 0;
	}
	for (size_t i = 0; i < c->n; i++) {
		cnt_line *l = &c->line[i];
		cnt_raw_event *r = &c->raw[i];

		l->p = c->bytes.p ? (const char *)c->bytes.p + c->off[i] : "";   /* only empty lines: no memory */
		if (cnt_line_blank(l) || l->overlong) {
			c->pb[i].status = CNT_RAW_MALFORMED;   /* not parsed (ahead.h) */
			continue;
		}
		if (a->jp == NULL && (a->jp = cnt_jsonl_new()) == NULL) {
			/* this line cannot be parsed: the input ends before it */
			cnt_err_nomem(&c->err);
			c->end = -1;
			c->n = i;
			break;
		}
		if (cnt_jsonl_parse_into(a->jp, l->p, l->n, (char *)c->unesc.p + c->off[i], r, &c->pb[i]) !=
		    CNT_RAW_OK)
			continue;
		c->koff[i] = c->keys.len;
		c->aoff[i] = c->attrs.len / sizeof(cnt_slice);
		if (cnt_admit_fp_key(r, &c->keys) != 0 ||
		    (r->nattrs > 0 && r->nattrs <= CNT_ATTRS_MAX &&
		     cnt_buf_reserve(&c->attrs, 2 * r->nattrs * sizeof(cnt_slice)) != 0)) {
			cnt_err_nomem(&c->err);
			c->end = -1;
			c->n = i;
			break;
		}
		c->klen[i] = c->keys.len - c->koff[i];
		if (r->nattrs > 0 && r->nattrs <= CNT_ATTRS_MAX) {
			memcpy(c->attrs.p + c->attrs.len, r->attr_keys, r->nattrs * sizeof(cnt_slice));
			c->attrs.len += r->nattrs * sizeof(cnt_slice);
			memcpy(c->attrs.p + c->attrs.len, r->attr_vals, r->nattrs * sizeof(cnt_slice));
			c->attrs.len += r->nattrs * sizeof(cnt_slice);
		}
	}
	/* Hashed once every key is written: hashing each key just after
	 * writing it made the hash's loads wait on those stores (25-50 ns an
	 * event, on the thread that bounds cnt-ingest).  The attrs are
	 * pointed at once they no longer move. */
	at = (cnt_slice *)c->attrs.p;
	for (size_t i = 0; i < c->n; i++)
		if (c->pb[i].status == CNT_RAW_OK) {
			cnt_raw_event *r = &c->raw[i];
			int kept = r->nattrs > 0 && r->nattrs <= CNT_ATTRS_MAX;

			c->fp[i] = cnt_fp_of_joined(c->keys.p + c->koff[i], c->klen[i]);
			r->attr_keys = kept ? at + c->aoff[i] : NULL;
			r->attr_vals = kept ? at + c->aoff[i] + r->nattrs : NULL;
		}
}

/* ---- CSV ---------------------------------------------------------------- */

/* Bytes a read of CSV asks for. */
#define CSV_READ ((size_t)64 << 10)
/* fed to cnt_csvin at once, at most */
#define FEED_MAX ((size_t)16 << 10)

/* A slice's bytes appended to c->bytes, room made already; its place
 * kept in the slice, as its offset + 1 (0 stays NULL, absent), until the
 * bytes stop moving. */
static void keep_slice(chunk *c, cnt_slice *s)
{
	size_t at = c->bytes.len;

	if (s->p == NULL)
		return;
	if (s->n)
		memcpy(c->bytes.p + at, s->p, s->n);
	c->bytes.len += s->n;
	s->p = (const char *)(uintptr_t)(at + 1);
}

static void point_slice(const chunk *c, cnt_slice *s)
{
	/* a chunk of empty strings only has no memory: "" stands for it */
	const char *base = c->bytes.p ? (const char *)c->bytes.p : "";

	if (s->p != NULL)
		s->p = base + ((uintptr_t)s->p - 1);
}

/* cnt_csvin's callback: the row copied into the chunk (its text, its
 * problem, its event's strings and attrs), pointed at once it is full. */
static int csv_take(void *ctx, uint64_t no, const cnt_raw_event *ev, const cnt_raw_problem *pb,
	const char *text, size_t n)
{
	cnt_ahead *a = ctx;
	chunk *c = a->cur;
	size_t i = c->n;
	cnt_raw_event *r = &c->raw[i];

	int ok = pb->status == CNT_RAW_OK;
	int kept = ok && ev->nattrs > 0 && ev->nattrs <= CNT_ATTRS_MAX;
	size_t need = n;

	/* room for the row's text and strings made once */
	if (ok) {
		need += ev->idempotency_key.n + ev->tenant_id.n + ev->counter_id.n + ev->member_ref.n + ev->item.n +
			ev->subject.n + ev->signature.n;
		for (size_t j = 0; kept && j < ev->nattrs; j++)
			need += ev->attr_keys[j].n + ev->attr_vals[j].n;
	}
	if (cnt_buf_reserve(&c->bytes, need) != 0 ||
	    (kept && cnt_buf_reserve(&c->attrs, 2 * ev->nattrs * sizeof(cnt_slice)) != 0)) {
		a->csv_nomem = 1;
		return -1;
	}
	c->off[i] = c->bytes.len;
	c->line[i].n = n;
	c->line[i].no = no;
	c->line[i].overlong = 0;
	/* not the whole problem: its message is 256 bytes, 544 MB of
	 * stores on 2 M rows, and an accepted row's is empty */
	c->pb[i].status = pb->status;
	c->pb[i].field = pb->field;
	if (ok)
		c->pb[i].msg[0] = '\0';
	else
		memcpy(c->pb[i].msg, pb->msg, strnlen(pb->msg, sizeof(pb->msg) - 1) + 1);
	if (n)
		memcpy(c->bytes.p + c->bytes.len, text, n);
	c->bytes.len += n;
	if (ok) {
		*r = *ev;
		keep_slice(c, &r->idempotency_key);
		keep_slice(c, &r->tenant_id);
		keep_slice(c, &r->counter_id);
		keep_slice(c, &r->member_ref);
		keep_slice(c, &r->item);
		keep_slice(c, &r->subject);
		keep_slice(c, &r->signature);
		c->aoff[i] = c->attrs.len / sizeof(cnt_slice);
		for (size_t j = 0; kept && j < 2 * ev->nattrs; j++) {
			cnt_slice v = j < ev->nattrs ? ev->attr_keys[j] : ev->attr_vals[j - ev->nattrs];

			keep_slice(c, &v);
			memcpy(c->attrs.p + c->attrs.len, &v, sizeof(v));
			c->attrs.len += sizeof(v);
		}
	}
	c->n++;
	return 0;
}

/* How many of the n bytes at p to feed cnt_csvin when rooms rows are
 * left in the chunk: at most FEED_MAX, and up to the rooms-th line end.
 * A row ends at a line end ('\n' or '\r'), at most one per line end;
 * only the report of an overlong row comes before its line's end, and
 * that line end then ends no row.  So bytes ending at a line end make
 * at most as many rows as they hold line ends, and bytes with fewer
 * than rooms line ends at most one more.  (Bounding the bytes by the
 * rows instead, as was done, cut every row near a chunk's end in two:
 * a third of the rows went through libcsv's slow path.) */
static size_t feed_size(const char *p, size_t n, size_t rooms)
{
	size_t i = 0;

	if (n > FEED_MAX)
		n = FEED_MAX;
	if (memchr(p, '\r', n) == NULL) {
		while (rooms > 0) {
			const char *q = memchr(p + i, '\n', n - i);

			if (q == NULL)
				return n;
			i = (size_t)(q - p) + 1;
			rooms--;
		}
		return i;
	}
	for (; i < n && rooms > 0; i++)
		if (p[i] == '\n' || p[i] == '\r')
			rooms--;
	return rooms > 0 ? n : i;
}

/* Fills c with the next rows of the CSV input: fed to the reader no more
 * rows at once than the chunk has left (feed_size), one row kept for the
 * last, which the input's end can give. */
static void fill_csv(cnt_ahead *a, chunk *c)
{
	cnt_slice *at;
	int rc = 0;

	a->cur = c;
	c->n = 0;
	c->bytes.len = 0;
	c->keys.len = 0;
	c->attrs.len = 0;
	c->end = 0;
	while (rc == 0 && c->n < CHUNK_LINES - 1 && c->bytes.len < CHUNK_BYTES) {
		size_t k = CHUNK_LINES - 1 - c->n;

		if (a->cpos == a->clen) {
			long got;

			/* rows that have come are judged before the input is
			 * waited on, as lines are (fill) */
			if (c->n > 0 && !a->regular)
				break;
			pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
			got = cnt_input_read(a->fd, a->name, a->cbuf, a->ccap, &c->err);
			pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
			if (got < 0) {
				c->end = -1;
				break;
			}
			if (got == 0) {
				rc = cnt_csvin_finish(a->csv, csv_take, a, &c->err);
				c->end = 1;
				break;
			}
			a->cpos = 0;
			a->clen = (size_t)got;
		}
		k = feed_size(a->cbuf + a->cpos, a->clen - a->cpos, k);
		rc = cnt_csvin_feed(a->csv, a->cbuf + a->cpos, k, csv_take, a, &c->err);
		a->cpos += k;
	}
	if (rc != 0) {
		/* the rows before it are handed out, then the error */
		c->end = -1;
		if (a->csv_nomem)
			cnt_err_nomem(&c->err);
		else
			cnt_err_prefix(&c->err, "'%s'", a->name);   /* the reader's own: a header, memory */
	}
	at = (cnt_slice *)c->attrs.p;
	for (size_t i = 0; i < c->n; i++) {
		cnt_raw_event *r = &c->raw[i];

		c->line[i].p = c->bytes.p ? (const char *)c->bytes.p + c->off[i] : "";
		if (c->pb[i].status != CNT_RAW_OK)
			continue;
		point_slice(c, &r->idempotency_key);
		point_slice(c, &r->tenant_id);
		point_slice(c, &r->counter_id);
		point_slice(c, &r->member_ref);
		point_slice(c, &r->item);
		point_slice(c, &r->subject);
		point_slice(c, &r->signature);
		if (r->nattrs > 0 && r->nattrs <= CNT_ATTRS_MAX) {
			r->attr_keys = at + c->aoff[i];
			r->attr_vals = at + c->aoff[i] + r->nattrs;
			for (size_t j = 0; j < 2 * r->nattrs; j++)
				point_slice(c, &r->attr_keys[j]);
		} else {
			r->attr_keys = r->attr_vals = NULL;
		}
		c->koff[i] = c->keys.len;
		if (cnt_admit_fp_key(r, &c->keys) != 0) {
			cnt_err_nomem(&c->err);
			c->end = -1;
			c->n = i;
			break;
		}
		c->klen[i] = c->keys.len - c->koff[i];
	}
	for (size_t i = 0; i < c->n; i++)
		if (c->pb[i].status == CNT_RAW_OK)
			c->fp[i] = cnt_fp_of_joined(c->keys.p + c->koff[i], c->klen[i]);
}

/* The memory a chunk's buffers hold. */
static size_t held(const chunk *c)
{
	return c->bytes.cap + c->unesc.cap + c->keys.cap + c->attrs.cap;
}

/* Whether the reader may fill another chunk (a->mu held): there is one
 * free, and the chunks hold at most HELD_MAX, or the caller has no
 * other to go on with.  Over it, free chunks' buffers are let go
 * first, the farthest first, until under it: they are the reader's (the
 * caller touches only the chunks filled and not yet let go of), and
 * kept only to be reused.  So a chunk is filled with at most HELD_MAX
 * held, or with only the caller's chunk held. */
static int may_fill(cnt_ahead *a)
{
	uint64_t ahead = a->filled - a->done;

	if (ahead >= CHUNKS)
		return 0;
	if (a->held <= HELD_MAX)
		return 1;
	/* the next to fill keeps its buffers if it can */
	for (uint64_t k = a->done + CHUNKS; k-- > a->filled && a->held > HELD_MAX;) {
		chunk *c = &a->ch[k % CHUNKS];

		cnt_buf_release(&c->bytes);
		cnt_buf_release(&c->unesc);
		cnt_buf_release(&c->keys);
		cnt_buf_release(&c->attrs);
		a->held -= c->held;
		c->held = 0;
	}
	return ahead < 2 || a->held <= HELD_MAX;
}

static void *reader(void *arg)
{
	cnt_ahead *a = arg;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	for (;;) {
		chunk *c;
		int end;

		pthread_mutex_lock(&a->mu);
		while (!a->stop && !may_fill(a))
			pthread_cond_wait(&a->cv_free, &a->mu);
		if (a->stop) {
			pthread_mutex_unlock(&a->mu);
			return NULL;
		}
		c = &a->ch[a->filled % CHUNKS];
		pthread_mutex_unlock(&a->mu);
		if (a->csv != NULL)
			fill_csv(a, c);
		else
			fill(a, c);
		end = c->end;
		pthread_mutex_lock(&a->mu);
		a->held = a->held - c->held + held(c);
		c->held = held(c);
		if (a->held > a->peak)
			a->peak = a->held;
		a->filled++;
		pthread_cond_signal(&a->cv_full);
		pthread_mutex_unlock(&a->mu);
		if (end)
			return NULL;
	}
}

/* Starts the reading thread on fd, whose reader (lines or csv) is made:
 * 0, or -1 with err set and the reader freed. */
static int launch(cnt_ahead *a, int fd, const char *name, cnt_err *err)
{
	struct stat sb;
	int e;

	a->filled = a->done = 0;
	a->holding = a->stop = 0;
	a->regular = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
	if ((e = pthread_create(&a->thread, NULL, reader, a)) != 0) {
		cnt_lines_free(a->lines);
		a->lines = NULL;
		cnt_csvin_free(a->csv);
		a->csv = NULL;
		return cnt_err_set(err, "cannot start a thread to read '%s': %s", name, strerror(e));
	}
	a->running = 1;
	return 0;
}

int cnt_ahead_start(cnt_ahead *a, int fd, const char *name, size_t max, const void *pre, size_t pren,
	cnt_err *err)
{
	cnt_ahead_stop(a);
	if ((a->lines = cnt_lines_new(fd, name, max, pre, pren)) == NULL)
		return cnt_err_nomem(err);
	a->lines_seen = a->bytes_seen = 0;
	return launch(a, fd, name, err);
}

int cnt_ahead_start_csv(cnt_ahead *a, int fd, const char *name, const void *pre, size_t pren, cnt_err *err)
{
	size_t cap = pren > CSV_READ ? pren : CSV_READ;

	cnt_ahead_stop(a);
	if (a->ccap < cap) {
		char *p = realloc(a->cbuf, cap);

		if (p == NULL)
			return cnt_err_nomem(err);
		a->cbuf = p;
		a->ccap = cap;
	}
	if ((a->csv = cnt_csvin_new()) == NULL)
		return cnt_err_nomem(err);
	if (pren)
		memcpy(a->cbuf, pre, pren);
	a->cpos = 0;
	a->clen = pren;
	a->fd = fd;
	a->name = name;
	a->csv_nomem = 0;
	return launch(a, fd, name, err);
}

/* What the input's end is, once every line was handed out: 0 or -1. */
static int end_of(const chunk *c, cnt_err *err)
{
	if (c->end > 0)
		return 0;
	*err = c->err;
	return -1;
}

int cnt_ahead_next(cnt_ahead *a, cnt_ahead_chunk *out, cnt_err *err)
{
	chunk *c;

	pthread_mutex_lock(&a->mu);
	if (a->holding) {
		c = &a->ch[a->done % CHUNKS];
		if (c->end) {   /* its lines were handed out: now the end */
			pthread_mutex_unlock(&a->mu);
			return end_of(c, err);
		}
		a->done++;
		a->holding = 0;
		pthread_cond_signal(&a->cv_free);
	}
	while (a->filled == a->done)
		pthread_cond_wait(&a->cv_full, &a->mu);
	a->holding = 1;
	pthread_mutex_unlock(&a->mu);
	c = &a->ch[a->done % CHUNKS];
	if (c->n == 0)
		return end_of(c, err);
	out->n = c->n;
	out->line = c->line;
	out->raw = c->raw;
	out->pb = c->pb;
	out->fp = c->fp;
	return 1;
}

size_t cnt_ahead_held(cnt_ahead *a, size_t *peak)
{
	size_t h;

	pthread_mutex_lock(&a->mu);
	h = a->held;
	if (peak != NULL)
		*peak = a->peak;
	pthread_mutex_unlock(&a->mu);
	return h;
}

void cnt_ahead_stop(cnt_ahead *a)
{
	if (!a->running)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_signal(&a->cv_free);
	pthread_mutex_unlock(&a->mu);
	pthread_cancel(a->thread);
	pthread_join(a->thread, NULL);
	a->running = 0;
	cnt_lines_free(a->lines);
	a->lines = NULL;
	cnt_csvin_free(a->csv);
	a->csv = NULL;
}
