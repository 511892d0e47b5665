/*
 * fused.c - the counting chain in one process (see fused.h).
 */
#include "count/fused.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "avro/encoding.h"

/* A batch is what one hand-over moves: it ends at BATCH_EVENTS events,
 * BATCH_BYTES of them or BATCH_ATTRS attribute slices (two an attribute),
 * whichever comes first.  The benchmark's events carry about two
 * attributes each, so the attribute slices end its batches: at 4,096
 * slices about 1,080 events, and the counting threads waited for the
 * reader about 15,000 times on its 10 million events while a CPU was often
 * idle; at 16,384 slices (and 8,192 events, 4 MiB) about 4,300 events,
 * 3,800 waits, and cnt-count about 12 % faster there.  Twice that again
 * was no faster. */
#define BATCH_EVENTS CNT_FUSED_BATCH
_Static_assert(BATCH_EVENTS <= 65536, "a batch's lists hold 16-bit indices");
#define BATCH_BYTES ((size_t)4 << 20)
#define BATCH_ATTRS 16384
#define QUEUE 3   /* batches between the reader and the counting sides */
#define AHEAD 16  /* dedup slots prefetched in bursts of this many, one burst ahead */

/*
 * Stores that bypass the cache.  What the reader writes into a batch
 * (the slots, the events' bytes, their attrs) is read next by a counting
 * thread on the other core, and the batch's lines were last read there:
 * each ordinary store had first to take its line back, and the reader,
 * cnt-count's critical path, stalled behind those (perf put about a
 * third of its samples on whatever instruction followed the copies).
 * Non-temporal stores write the lines without reading them first; the
 * counting threads then read them from memory.  The reader reads them
 * back only for a duplicate's bytes (rare), for an approx event's id when
 * its sampling level is bad (once: it stops the run) and, with --stats,
 * for each first occurrence's hot key (slower, from memory); what judging
 * needs is in `judged`, kept in its cache.  fence() orders them before a
 * batch is handed over: a mutex does not order them.  On the 10 M benchmark
 * cnt-count was about 15 % faster (the closing note of issue 12).  Other
 * machines: plain stores.
 */
#if defined(__SSE2__)
/* 16 bytes from src to dst (16-byte aligned). */
static void put16(void *dst, const void *src)
{
	__m128i v;

	memcpy(&v, src, 16);
	_mm_stream_si128((__m128i *)dst, v);
}

static void fence(void)
{
	_mm_sfence();
}
#else
static void put16(void *dst, const void *src)
{
	memcpy(dst, src, 16);
}

static void fence(void)
{
}
#endif

/* n bytes from src to dst (16-byte aligned), the last 16 padded with
 * zeros: (n + 15) / 16 stores. */
static void put_bytes(uint8_t *dst, const uint8_t *src, size_t n)
{
	size_t i = 0;

	for (; i + 16 <= n; i += 16)
		put16(dst + i, src + i);
	if (i < n) {
		uint8_t tail[16] = {0};

		memcpy(tail, src + i, n - i);
		put16(dst + i, tail);
	}
}

/* n rounded up to the 16 bytes put_bytes() writes. */
static size_t padded(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

/* One event of a batch, as the counting sides read it: the event and
 * what admission and judging found.  Written whole with put16(). */
typedef struct slot {
	_Alignas(16) cnt_event ev;  /* slices into the batch's bytes and attrs */
	cnt_count_target tg;        /* what admission found: not looked up again */
	uint64_t mh;                /* XXH3_64bits of the member */
} slot;
_Static_assert(sizeof(slot) % 16 == 0, "a slot is written in 16-byte stores");
_Static_assert(sizeof(cnt_slice) == 16, "an attr slice is one 16-byte store");

/* What only the reader reads of an event, to judge it: apart from the
 * slot, so that it stays in the reader's cache. */
typedef struct judged {
	cnt_dkey key;
	size_t off, len;            /* its Avro bytes in the batch */
	uint64_t t, h;
	cnt_count_target tg;
	uint64_t mh;
	int sample;                 /* an approx event's sampling level (-1: not one); else 0 */
} judged;

typedef struct batch {
	slot *s;
	judged *j;                  /* beside each slot */
	size_t n, cap;              /* cap: events it takes (cnt_fused.batch) */
	/* once judged: the first occurrences of each accumulator, in order */
	uint16_t *mine[2];
	size_t nmine[2];
	uint8_t *bytes;             /* fixed while the batch fills: slices point in */
	size_t blen, bcap;
	cnt_slice *attrs;
	size_t alen, acap;
} batch;

typedef struct run {
	const cnt_fused *fu;
	const int *fds;
	char *const *names;
	size_t n;
	batch b[QUEUE];
	/* the hand-over (two threads): batch i is in b[i % QUEUE]; the reader
	 * has filled `filled` batches, counting side k has counted done[k] */
	pthread_mutex_t mu;
	pthread_cond_t cv_full, cv_free;   /* counting sides wait on the one, the reader on the other */
	int rwait, cwait;          /* the reader waits; counting sides that wait */
	uint64_t filled, done[2];
	int eof, stop;             /* reader finished; a counting side failed */
	int rrc, crc;              /* the reader's and the second counting thread's results */
	cnt_err rerr, cerr;
	cnt_accum *acc[2];
	cnt_window *win[2];        /* what each counting side attributes with */
	cnt_buf scratch;           /* an event encoded (not read by the fast path) */
	cnt_attrs_buf ab;
} run;

static void batch_release(batch *b)
{
	free(b->s);
	free(b->j);
	free(b->bytes);
	free(b->attrs);
	free(b->mine[0]);
}

/* n bytes aligned to a cache line (what the streaming stores above
 * write in), or NULL. */
static void *alloc_lines(size_t n)
{
	void *p;

	return posix_memalign(&p, 64, n) == 0 ? p : NULL;
}

static int batch_init(batch *b, size_t cap, cnt_err *err)
{
	memset(b, 0, sizeof(*b));
	b->cap = cap == 0 || cap > BATCH_EVENTS ? BATCH_EVENTS : cap;
	b->s = alloc_lines(BATCH_EVENTS * sizeof(*b->s));
	b->j = malloc(BATCH_EVENTS * sizeof(*b->j));
	b->bytes = alloc_lines(BATCH_BYTES);
	b->attrs = alloc_lines(BATCH_ATTRS * sizeof(*b->attrs));
	b->mine[0] = malloc(2 * BATCH_EVENTS * sizeof(*b->mine[0]));
	b->mine[1] = b->mine[0] ? b->mine[0] + BATCH_EVENTS : NULL;
	b->bcap = BATCH_BYTES;
	b->acap = BATCH_ATTRS;
	if (b->s == NULL || b->j == NULL || b->bytes == NULL || b->attrs == NULL || b->mine[0] == NULL) {
		batch_release(b);
		memset(b, 0, sizeof(*b));
		return cnt_err_oom(err, "the batches of cnt-count");
	}
	return 0;
}

/* Grows an empty batch's bytes and attrs to hold an event of len bytes
 * and nattrs attrs (nothing points into them yet, so nothing is copied).
 * 0 or -1. */
static int batch_fit(batch *b, size_t len, size_t nattrs, cnt_err *err)
{
	if (len > b->bcap) {
		uint8_t *p = alloc_lines(len);

		if (p == NULL)
			return cnt_err_oom(err, "an event of %zu bytes", len);
		free(b->bytes);
		b->bytes = p;
		b->bcap = len;
	}
	if (2 * nattrs > b->acap) {
		cnt_slice *p = alloc_lines(2 * nattrs * sizeof(*p));

		if (p == NULL)
			return cnt_err_oom(err, "an event of %zu attrs", nattrs);
		free(b->attrs);
		b->attrs = p;
		b->acap = 2 * nattrs;
	}
	return 0;
}

/* s moved from the n bytes at from to the same place in to (a slice
 * pointing elsewhere, or NULL, is kept). */
static cnt_slice moved(cnt_slice s, const uint8_t *from, size_t n, const uint8_t *to)
{
	const uint8_t *p = (const uint8_t *)s.p;

	if (p != NULL && p >= from && p <= from + n)
		s.p = (const char *)(to + (p - from));
	return s;
}

/*
 * Adds the admitted event e (target t), whose slices point into raw/rawn
 * and its attrs arrays, to b, keyed.  Returns 0 added, 1 when b has no
 * room (nothing added; b is not empty), -1 with err set.  The event's
 * bytes start 16-byte aligned in b->bytes (put_bytes); the slot is
 * built on the stack and put whole.
 */
static int add(batch *b, const cnt_event *e, const cnt_count_target *t, const uint8_t *raw, size_t rawn,
	cnt_err *err)
{
	slot x;
	cnt_slice *keys, *vals;
	uint8_t *to;
	size_t pn = padded(rawn);

	if (b->n == b->cap || pn > b->bcap - b->blen || 2 * e->nattrs > b->acap - b->alen) {
		if (b->n > 0)
			return 1;
		if (batch_fit(b, pn, e->nattrs, err) != 0)
			return -1;
	}
	to = b->bytes + b->blen;
	put_bytes(to, raw, rawn);
	keys = b->attrs + b->alen;
	vals = keys + e->nattrs;
	for (size_t i = 0; i < e->nattrs; i++) {
		cnt_slice k = moved(e->attr_keys[i], raw, rawn, to), v = moved(e->attr_vals[i], raw, rawn, to);

		put16(&keys[i], &k);
		put16(&vals[i], &v);
	}
	x.ev = *e;
	x.ev.attr_keys = keys;
	x.ev.attr_vals = vals;
	x.ev.event_id = moved(e->event_id, raw, rawn, to);
	x.ev.idempotency_key = moved(e->idempotency_key, raw, rawn, to);
	x.ev.tenant_id = moved(e->tenant_id, raw, rawn, to);
	x.ev.counter_id = moved(e->counter_id, raw, rawn, to);
	x.ev.member_ref = moved(e->member_ref, raw, rawn, to);
	x.ev.item = moved(e->item, raw, rawn, to);
	x.ev.subject = moved(e->subject, raw, rawn, to);
	x.ev.signature = moved(e->signature, raw, rawn, to);
	x.ev.retracts = moved(e->retracts, raw, rawn, to);
	x.ev.retraction_id = moved(e->retraction_id, raw, rawn, to);
	x.tg = *t;
	/* hashed where the reader decoded it, still in its cache */
	x.mh = XXH3_64bits(e->member_ref.p, e->member_ref.n);
	for (size_t i = 0; i < sizeof(slot); i += 16)
		put16((char *)&b->s[b->n] + i, (const char *)&x + i);
	b->j[b->n] = (judged){cnt_dedup_event_key(t->version, e), b->blen, rawn, cnt_dedup_event_second(e),
		t->version->dedup_horizon_s > 0 ? (uint64_t)t->version->dedup_horizon_s : 0, *t, x.mh,
		t->version->type == CNT_CTYPE_APPROX ? cnt_event_sample_level(e) : 0};
	b->blen += pn;
	b->alen += 2 * e->nattrs;
	b->n++;
	return 0;
}

/* Judges the events of a full b in log order: a duplicate is written to
 * the duplicates; a first occurrence is checked for what its attribution
 * could fail on (cnt_window_check), fed to the hot keys and put on the
 * list of the accumulator of its member (of `parts`).  0 or -1 with err
 * set. */
static int judge(const cnt_fused *fu, batch *b, int parts, cnt_err *err)
{
	b->nmine[0] = b->nmine[1] = 0;
	for (size_t i = 0; i < b->n && i < AHEAD; i++)
		cnt_dedup_filter_prefetch(fu->filter, b->j[i].key);
	for (size_t i = 0; i < b->n; i++) {
		const slot *s = &b->s[i];
		const judged *jd = &b->j[i];
		int rc, part;

		if (i % AHEAD == 0)
			for (size_t j = i + AHEAD; j < b->n && j < i + 2 * AHEAD; j++)
				cnt_dedup_filter_prefetch(fu->filter, b->j[j].key);

		rc = cnt_dedup_filter_judge(fu->filter, jd->key, jd->t, jd->h, jd->tg.counter_index, b->bytes + jd->off,
			jd->len, err);
		if (rc < 0)
			return -1;
		if (rc > 0)
			continue;
		if (cnt_window_check(fu->win, &s->ev, &jd->tg, jd->sample, err) != 0)
			return -1;
		if (fu->hot && cnt_topkey_add(fu->hot, s->ev.tenant_id, s->ev.counter_id, s->ev.member_ref, err) != 0)
			return -1;
		part = parts == 1 ? 0 : (int)(jd->mh >> 63);
		b->mine[part][b->nmine[part]++] = (uint16_t)i;
	}
	return 0;
}

/* How far ahead count() fetches a slot's lines (twice this) and then
 * the member's bytes it points to. */
#define COUNT_AHEAD 4

/* Attributes the first occurrences of b that belong to accumulator k
 * with window win, counts them there and adds them to acc.  0 or -1 with
 * err set. */
static int count(cnt_accum *acc, cnt_window *win, const batch *b, int k, cnt_err *err)
{
	cnt_windowed wv[CNT_ACCUM_BATCH];
	const cnt_windowed *pend[CNT_ACCUM_BATCH];
	cnt_accum_hint hint[CNT_ACCUM_BATCH];
	size_t np = 0;

	/* only this side's events: the other's slots are not touched */
	for (size_t j = 0; j < b->nmine[k]; j++) {
		const slot *s = &b->s[b->mine[k][j]];

		/* The reader wrote the slots past the cache (put16): their
		 * lines are fetched 2 * COUNT_AHEAD events ahead, and the
		 * member's bytes, which the slot points to, COUNT_AHEAD ahead. */
		if (j + 2 * COUNT_AHEAD < b->nmine[k]) {
			const char *q = (const char *)&b->s[b->mine[k][j + 2 * COUNT_AHEAD]];

			for (size_t o = 0; o < sizeof(slot); o += 64)
				__builtin_prefetch(q + o);
		}
		if (j + COUNT_AHEAD < b->nmine[k])
			__builtin_prefetch(b->s[b->mine[k][j + COUNT_AHEAD]].ev.member_ref.p);

		if (cnt_window_attribute_as(win, &s->ev, &s->tg, &wv[np], err) != 0)
			return -1;
		cnt_window_take(win, &s->ev, &wv[np], s->tg.counter_index);
		hint[np].counter = (uint32_t)s->tg.counter_index;
		hint[np].member_hash = s->mh;
		pend[np] = &wv[np];
		np++;
		if (np == CNT_ACCUM_BATCH) {
			if (cnt_accum_add_hinted(acc, pend, hint, np, err) != 0)
				return -1;
			np = 0;
		}
	}
	return np > 0 ? cnt_accum_add_hinted(acc, pend, hint, np, err) : 0;
}

static void empty(batch *b)
{
	b->n = 0;
	b->nmine[0] = b->nmine[1] = 0;
	b->blen = 0;
	b->alen = 0;
}

/* ---- the hand-over (two threads) ---- */

/* A side failed or could not start: every waiter gives up. */
static void stop_all(run *r)
{
	pthread_mutex_lock(&r->mu);
	r->stop = 1;
	pthread_cond_broadcast(&r->cv_full);
	pthread_cond_broadcast(&r->cv_free);
	pthread_mutex_unlock(&r->mu);
}

/* The reader's next batch to fill, or NULL when a counting side stopped. */
static batch *take_free(run *r)
{
	batch *b = NULL;

	pthread_mutex_lock(&r->mu);
	while (!r->stop && (r->filled - r->done[0] >= QUEUE || r->filled - r->done[1] >= QUEUE)) {
		r->rwait = 1;
		pthread_cond_wait(&r->cv_free, &r->mu);
		r->rwait = 0;
	}
	if (!r->stop)
		b = &r->b[r->filled % QUEUE];
	pthread_mutex_unlock(&r->mu);
	if (b)
		empty(b);
	return b;
}

static void put_full(run *r)
{
	fence();   /* the batch's stores before the counting sides can see it */
	pthread_mutex_lock(&r->mu);
	r->filled++;
	if (r->cwait > 0)
		pthread_cond_broadcast(&r->cv_full);
	pthread_mutex_unlock(&r->mu);
}

/* Hands a full batch on: judged, then counted at once (one thread) or
 * queued (threaded).  Returns the next batch to fill, or NULL (err set
 * when something failed; not set when a counting side stopped). */
static batch *hand_on(run *r, batch *b, int threaded, int *failed, cnt_err *err)
{
	if (judge(r->fu, b, threaded ? 2 : 1, err) != 0) {
		*failed = 1;
		return NULL;
	}
	if (!threaded) {
		if (count(r->acc[0], r->win[0], b, 0, err) != 0) {
			*failed = 1;
			return NULL;
		}
		empty(b);
		return b;
	}
	put_full(r);
	return take_free(r);
}

/*
 * The reader: reads every input, admits each event (rejects to the
 * rejects stream) and queues the others in batches, each judged and
 * handed on when full.  0, or -1 with err set.
 */
static int read_all(run *r, int threaded, cnt_err *err)
{
	const cnt_fused *fu = r->fu;
	batch *b = threaded ? take_free(r) : &r->b[0];
	int failed = 0;

	if (b == NULL)
		return 0;
	for (size_t i = 0; i < r->n; i++) {
		cnt_event_in *in;
		cnt_event e;
		int rc;

		if (fu->input)
			fu->input(r->fds[i], r->names[i]);
		if ((in = cnt_event_in_open(r->fds[i], r->names[i], NULL, err)) == NULL)
			return -1;
		while ((rc = cnt_event_in_next(in, &e, err)) > 0) {
			cnt_count_target t;
			cnt_count_reject why;
			const uint8_t *raw;
			size_t rawn;
			cnt_event copy;

			if (fu->progress)
				fu->progress(1);
			if (cnt_dedup_filter_admit(fu->filter, &e, &t, &why) != 0) {
				if (cnt_rejects_put(fu->rejects, r->names[i], cnt_event_in_record_no(in), &e, &why, err) != 0) {
					rc = -1;
					break;
				}
				continue;
			}
			if (!cnt_event_in_raw(in, &raw, &rawn)) {
				/* not our schema: encoded, and decoded again so that
				 * the slices point into the encoding */
				cnt_cur c;

				r->scratch.len = 0;
				if (cnt_event_encode(&e, &r->scratch) != 0) {
					rc = cnt_err_oom(err, "encoding an event");
					break;
				}
				c.p = r->scratch.p;
				c.end = r->scratch.p + r->scratch.len;
				if (cnt_event_decode(&c, &copy, &r->ab, NULL, err) != 0) {
					rc = -1;
					break;
				}
				e = copy;
				raw = r->scratch.p;
				rawn = r->scratch.len;
			}
			while ((rc = add(b, &e, &t, raw, rawn, err)) == 1)
				if ((b = hand_on(r, b, threaded, &failed, err)) == NULL)
					break;
			if (b == NULL || rc < 0)
				break;
		}
		cnt_event_in_free(in);
		if (rc < 0 || failed)
			return -1;
		if (b == NULL)
			return 0;
		if (fu->input_done) {
			/* the input's events judged before anything of the next */
			if (b->n > 0 && (b = hand_on(r, b, threaded, &failed, err)) == NULL)
				return failed ? -1 : 0;
			fu->input_done(fu->ctx, i);
		}
	}
	if (b->n > 0 && judge(fu, b, threaded ? 2 : 1, err) != 0)
		return -1;
	if (threaded) {
		if (b->n > 0)
			put_full(r);
		return 0;
	}
	return count(r->acc[0], r->win[0], b, 0, err);
}

static void *reader(void *arg)
{
	run *r = arg;
	int rc = read_all(r, 1, &r->rerr);

	pthread_mutex_lock(&r->mu);
	r->rrc = rc;
	r->eof = 1;
	pthread_cond_broadcast(&r->cv_full);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* Counting side k of two threads: every batch in the order it was
 * filled, its members of half k.  0, or -1 with err set. */
static int count_all(run *r, int k, cnt_err *err)
{
	for (;;) {
		batch *b;

		pthread_mutex_lock(&r->mu);
		while (r->done[k] == r->filled && !r->eof && !r->stop) {
			r->cwait++;
			pthread_cond_wait(&r->cv_full, &r->mu);
			r->cwait--;
		}
		if (r->stop || r->done[k] == r->filled) {
			pthread_mutex_unlock(&r->mu);
			return 0;
		}
		b = &r->b[r->done[k] % QUEUE];
		pthread_mutex_unlock(&r->mu);
		if (count(r->acc[k], r->win[k], b, k, err) != 0) {
			stop_all(r);
			return -1;
		}
		pthread_mutex_lock(&r->mu);
		r->done[k]++;
		/* The reader waits for a free batch: it is woken when half the
		 * queue is free for both sides, not at each batch (the wake-ups
		 * cost more than the work between them). */
		if (r->rwait && r->filled - r->done[0] <= QUEUE / 2 && r->filled - r->done[1] <= QUEUE / 2)
			pthread_cond_signal(&r->cv_free);
		pthread_mutex_unlock(&r->mu);
	}
}

static void *counter(void *arg)
{
	run *r = arg;

	r->crc = count_all(r, 1, &r->cerr);
	return NULL;
}

/* Two threads beside the calling one: the reader and counting side 1;
 * the calling thread is counting side 0.  0 or -1 with err set. */
static int run_threads(run *r, cnt_err *err)
{
	pthread_t rt, ct;
	int e, rc;

	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv_full, NULL);
	pthread_cond_init(&r->cv_free, NULL);
	if ((e = pthread_create(&rt, NULL, reader, r)) != 0) {
		rc = e == ENOMEM || e == EAGAIN ? cnt_err_oom(err, "starting a thread")
			: cnt_err_set(err, "cannot start a thread: %s", strerror(e));
		goto out;
	}
	if ((e = pthread_create(&ct, NULL, counter, r)) != 0) {
		stop_all(r);
		pthread_join(rt, NULL);
		rc = e == ENOMEM || e == EAGAIN ? cnt_err_oom(err, "starting a thread")
			: cnt_err_set(err, "cannot start a thread: %s", strerror(e));
		goto out;
	}
	rc = count_all(r, 0, err);
	pthread_join(ct, NULL);
	pthread_join(rt, NULL);
	/* the reader's error first: what it did not read was never counted */
	if (r->rrc != 0) {
		*err = r->rerr;
		rc = -1;
	} else if (rc == 0 && r->crc != 0) {
		*err = r->cerr;
		rc = -1;
	}
out:
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv_full);
	pthread_cond_destroy(&r->cv_free);
	return rc;
}

int cnt_fused_run(const cnt_fused *fu, const int *fds, char *const *names, size_t n, cnt_err *err)
{
	run *r = calloc(1, sizeof(*r));
	int threaded = fu->threads > 1 && fu->acc2 != NULL, nb = threaded ? QUEUE : 1, rc = 0;

	if (r == NULL)
		return cnt_err_oom(err, "cnt-count");
	r->fu = fu;
	r->fds = fds;
	r->names = names;
	r->n = n;
	r->acc[0] = fu->acc;
	r->acc[1] = fu->acc2;
	r->scratch = (cnt_buf)CNT_BUF_INIT;
	for (int i = 0; i < nb && rc == 0; i++)
		rc = batch_init(&r->b[i], fu->batch, err);
	/* threaded: each counting side attributes with a window of its own,
	 * its counts added to fu->win at the end */
	r->win[0] = fu->win;
	for (int k = 0; k < 2 && threaded && rc == 0; k++)
		if ((r->win[k] = cnt_window_sibling(fu->win, err)) == NULL)
			rc = -1;
	if (rc == 0)
		rc = threaded ? run_threads(r, err) : read_all(r, 0, err);
	for (int k = 0; k < 2 && threaded; k++) {
		if (r->win[k] != NULL && r->win[k] != fu->win) {
			cnt_window_absorb(fu->win, r->win[k]);
			cnt_window_free(r->win[k]);
		}
	}
	for (int i = 0; i < nb; i++)
		batch_release(&r->b[i]);
	cnt_buf_release(&r->scratch);
	cnt_attrs_buf_release(&r->ab);
	free(r);
	return rc;
}
