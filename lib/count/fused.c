/*
 * fused.c - the counting chain in one process (see fused.h).
 */
#include "count/fused.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "avro/encoding.h"

#define BATCH_EVENTS 2048
#define BATCH_BYTES ((size_t)1 << 20)
#define BATCH_ATTRS 4096
#define QUEUE 3
#define AHEAD 8   /* dedup slots prefetched this many events ahead */

/* One event of a batch: attributed, keyed, its bytes in the batch. */
typedef struct slot {
	cnt_windowed wv;            /* wv.ev: slices into the batch's bytes and attrs */
	size_t off, len;            /* its Avro bytes in the batch */
	cnt_dkey key;
	uint64_t t, h;
	size_t counter;
	int bad;                    /* attribution failed: errs[i] says why */
} slot;

typedef struct batch {
	slot *s;
	size_t n;
	uint8_t *bytes;             /* fixed while the batch fills: slices point in */
	size_t blen, bcap;
	cnt_slice *attrs;
	size_t alen, acap;
	cnt_err *errs;              /* made on the first failed attribution */
} batch;

typedef struct run {
	const cnt_fused *fu;
	const int *fds;
	char *const *names;
	size_t n;
	batch b[QUEUE];
	/* the queue (two threads): batches full[head..head+nfull) in order */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t head, nfull, nfree, at;   /* counted next; full; free; filled next */
	int done, stop;            /* reader finished; counting side failed */
	int rrc;                   /* the reader's result */
	cnt_err rerr;
	cnt_buf scratch;           /* an event encoded (not read by the fast path) */
	cnt_attrs_buf ab;
} run;

static void batch_release(batch *b)
{
	free(b->s);
	free(b->bytes);
	free(b->attrs);
	free(b->errs);
}

static int batch_init(batch *b, cnt_err *err)
{
	memset(b, 0, sizeof(*b));
	b->s = malloc(BATCH_EVENTS * sizeof(*b->s));
	b->bytes = malloc(BATCH_BYTES);
	b->attrs = malloc(BATCH_ATTRS * sizeof(*b->attrs));
	b->bcap = BATCH_BYTES;
	b->acap = BATCH_ATTRS;
	if (b->s == NULL || b->bytes == NULL || b->attrs == NULL) {
		batch_release(b);
		memset(b, 0, sizeof(*b));
		return cnt_err_oom(err, "the batches of cnt-count");
	}
	return 0;
}

/* Grows an empty batch's bytes and attrs to hold an event of len bytes
 * and nattrs attrs (nothing points into them yet).  0 or -1. */
static int batch_fit(batch *b, size_t len, size_t nattrs, cnt_err *err)
{
	if (len > b->bcap) {
		uint8_t *p = realloc(b->bytes, len);

		if (p == NULL)
			return cnt_err_oom(err, "an event of %zu bytes", len);
		b->bytes = p;
		b->bcap = len;
	}
	if (2 * nattrs > b->acap) {
		cnt_slice *p = realloc(b->attrs, 2 * nattrs * sizeof(*p));

		if (p == NULL)
			return cnt_err_oom(err, "an event of %zu attrs", nattrs);
		b->attrs = p;
		b->acap = 2 * nattrs;
	}
	return 0;
}

static void rebase(cnt_slice *s, const uint8_t *from, size_t n, const uint8_t *to)
{
	const uint8_t *p = (const uint8_t *)s->p;

	if (p != NULL && p >= from && p <= from + n)
		s->p = (const char *)(to + (p - from));
}

/*
 * Adds the admitted event e (target t), whose slices point into raw/rawn
 * and its attrs arrays, to b.  Returns 0 added, 1 when b has no room
 * (nothing added; b is not empty), -1 with err set.
 */
static int add(run *r, batch *b, const cnt_event *e, const cnt_count_target *t, const uint8_t *raw,
	size_t rawn, cnt_err *err)
{
	slot *s;
	cnt_event *ev;
	cnt_slice *keys, *vals;
	cnt_count_reject why;
	int rc;

	if (b->n == BATCH_EVENTS || rawn > b->bcap - b->blen || 2 * e->nattrs > b->acap - b->alen) {
		if (b->n > 0)
			return 1;
		if (batch_fit(b, rawn, e->nattrs, err) != 0)
			return -1;
	}
	s = &b->s[b->n];
	s->off = b->blen;
	s->len = rawn;
	memcpy(b->bytes + b->blen, raw, rawn);
	b->blen += rawn;
	ev = &s->wv.ev;
	*ev = *e;
	keys = b->attrs + b->alen;
	vals = keys + e->nattrs;
	b->alen += 2 * e->nattrs;
	for (size_t i = 0; i < e->nattrs; i++) {
		keys[i] = e->attr_keys[i];
		vals[i] = e->attr_vals[i];
		rebase(&keys[i], raw, rawn, b->bytes + s->off);
		rebase(&vals[i], raw, rawn, b->bytes + s->off);
	}
	ev->attr_keys = keys;
	ev->attr_vals = vals;
	rebase(&ev->event_id, raw, rawn, b->bytes + s->off);
	rebase(&ev->idempotency_key, raw, rawn, b->bytes + s->off);
	rebase(&ev->tenant_id, raw, rawn, b->bytes + s->off);
	rebase(&ev->counter_id, raw, rawn, b->bytes + s->off);
	rebase(&ev->member_ref, raw, rawn, b->bytes + s->off);
	rebase(&ev->item, raw, rawn, b->bytes + s->off);
	rebase(&ev->subject, raw, rawn, b->bytes + s->off);
	rebase(&ev->signature, raw, rawn, b->bytes + s->off);
	rebase(&ev->retracts, raw, rawn, b->bytes + s->off);
	rebase(&ev->retraction_id, raw, rawn, b->bytes + s->off);
	s->key = cnt_dedup_event_key(t->version, ev);
	s->t = cnt_dedup_event_second(ev);
	s->h = t->version->dedup_horizon_s > 0 ? (uint64_t)t->version->dedup_horizon_s : 0;
	s->counter = t->counter_index;
	s->bad = 0;
	/* Attributed now, judged later: a failure counts only if the event
	 * turns out to be a first occurrence (cnt-window never sees a
	 * duplicate). */
	rc = cnt_window_attribute(r->fu->win, ev, &s->wv, &why, err);
	if (rc != 0) {
		if (b->errs == NULL && (b->errs = malloc(BATCH_EVENTS * sizeof(*b->errs))) == NULL)
			return cnt_err_oom(err, "an attribution error");
		if (rc > 0)   /* cannot happen: admitted with the same definitions */
			cnt_err_set(&b->errs[b->n], "internal: an admitted event is not declared: %s", why.msg);
		else
			b->errs[b->n] = *err;
		s->bad = 1;
	}
	b->n++;
	return 0;
}

/* Judges, counts and accumulates the events of b in order, and empties
 * it.  0 or -1 with err set. */
static int count(run *r, batch *b, cnt_err *err)
{
	const cnt_fused *fu = r->fu;
	cnt_windowed pend[CNT_ACCUM_BATCH];
	size_t np = 0;

	for (size_t i = 0; i < b->n; i++) {
		slot *s = &b->s[i];
		int rc;

		if (i + AHEAD < b->n)
			cnt_dedup_filter_prefetch(fu->filter, b->s[i + AHEAD].key);
		rc = cnt_dedup_filter_judge(fu->filter, s->key, s->t, s->h, s->counter, b->bytes + s->off, s->len, err);
		if (rc < 0)
			return -1;
		if (rc > 0)
			continue;
		if (s->bad) {
			*err = b->errs[i];
			return -1;
		}
		cnt_window_take(fu->win, &s->wv.ev, &s->wv, s->counter);
		if (fu->hot && cnt_topkey_add(fu->hot, s->wv.ev.tenant_id, s->wv.ev.counter_id, s->wv.ev.member_ref, err) != 0)
			return -1;
		pend[np++] = s->wv;
		if (np == CNT_ACCUM_BATCH) {
			if (cnt_accum_add_events(fu->acc, pend, np, err) != 0)
				return -1;
			np = 0;
		}
	}
	if (np > 0 && cnt_accum_add_events(fu->acc, pend, np, err) != 0)
		return -1;
	b->n = 0;
	b->blen = 0;
	b->alen = 0;
	return 0;
}

/* ---- the hand-over (two threads) ---- */

/* The reader's next empty batch, or NULL when the counting side stopped. */
static batch *take_free(run *r)
{
	batch *b = NULL;

	pthread_mutex_lock(&r->mu);
	while (r->nfree == 0 && !r->stop)
		pthread_cond_wait(&r->cv, &r->mu);
	if (!r->stop) {
		r->nfree--;
		b = &r->b[r->at];
		r->at = (r->at + 1) % QUEUE;
	}
	pthread_mutex_unlock(&r->mu);
	return b;
}

static void put_full(run *r, batch *b)
{
	pthread_mutex_lock(&r->mu);
	r->nfull++;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	(void)b;
}

/*
 * The reader.  With one thread each full batch is counted at once; with
 * two (threaded), it is queued: batches are filled in the order b[0],
 * b[1], ... (mod QUEUE), and counted in that order.
 */
static int read_all(run *r, int threaded, cnt_err *err)
{
	const cnt_fused *fu = r->fu;
	batch *b = threaded ? take_free(r) : &r->b[0];

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
			while ((rc = add(r, b, &e, &t, raw, rawn, err)) == 1) {
				if (threaded) {
					put_full(r, b);
					if ((b = take_free(r)) == NULL) {
						cnt_event_in_free(in);
						return 0;
					}
				} else if (count(r, b, err) != 0) {
					break;
				}
			}
			if (rc < 0)
				break;
		}
		cnt_event_in_free(in);
		if (rc < 0)
			return -1;
	}
	if (threaded) {
		if (b->n > 0)
			put_full(r, b);
		return 0;
	}
	return count(r, b, err);
}

static void *reader(void *arg)
{
	run *r = arg;
	int rc = read_all(r, 1, &r->rerr);

	pthread_mutex_lock(&r->mu);
	r->rrc = rc;
	r->done = 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* The counting side of two threads: batches in the order they were
 * filled, each given back once counted. */
static int count_all(run *r, cnt_err *err)
{
	for (;;) {
		batch *b;
		size_t idx;

		pthread_mutex_lock(&r->mu);
		while (r->nfull == 0 && !r->done)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->nfull == 0) {
			pthread_mutex_unlock(&r->mu);
			return 0;
		}
		idx = r->head;
		pthread_mutex_unlock(&r->mu);
		b = &r->b[idx];
		if (count(r, b, err) != 0) {
			pthread_mutex_lock(&r->mu);
			r->stop = 1;
			pthread_cond_broadcast(&r->cv);
			pthread_mutex_unlock(&r->mu);
			return -1;
		}
		pthread_mutex_lock(&r->mu);
		r->head = (r->head + 1) % QUEUE;
		r->nfull--;
		r->nfree++;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
	}
}

int cnt_fused_run(const cnt_fused *fu, const int *fds, char *const *names, size_t n, cnt_err *err)
{
	run *r = calloc(1, sizeof(*r));
	int nb = fu->threads > 1 ? QUEUE : 1, rc = 0;

	if (r == NULL)
		return cnt_err_oom(err, "cnt-count");
	r->fu = fu;
	r->fds = fds;
	r->names = names;
	r->n = n;
	r->scratch = (cnt_buf)CNT_BUF_INIT;
	for (int i = 0; i < nb; i++)
		if (batch_init(&r->b[i], err) != 0) {
			rc = -1;
			goto out;
		}
	if (nb == 1) {
		rc = read_all(r, 0, err);
	} else {
		pthread_t th;
		int e;

		/* both sides go round b[0], b[1], ... in the same order */
		r->nfree = QUEUE;
		pthread_mutex_init(&r->mu, NULL);
		pthread_cond_init(&r->cv, NULL);
		if ((e = pthread_create(&th, NULL, reader, r)) != 0) {
			rc = e == ENOMEM || e == EAGAIN ? cnt_err_oom(err, "starting a thread")
				: cnt_err_set(err, "cannot start a thread: %s", strerror(e));
		} else {
			rc = count_all(r, err);
			pthread_join(th, NULL);
			if (rc == 0 && r->rrc != 0) {
				*err = r->rerr;
				rc = -1;
			}
		}
		pthread_mutex_destroy(&r->mu);
		pthread_cond_destroy(&r->cv);
	}
out:
	for (int i = 0; i < nb; i++)
		batch_release(&r->b[i]);
	cnt_buf_release(&r->scratch);
	cnt_attrs_buf_release(&r->ab);
	free(r);
	return rc;
}
