/*
 * recq.c - records handed between two threads (see recq.h).
 *
 * Chunk i (counting from 0) lives in c[i % nc].  The producer fills chunk
 * `produced` and may do so only while produced - consumed < nc; the
 * consumer reads chunk `consumed` while consumed < produced.  Both
 * counters change under the mutex, so every byte of a chunk is written
 * before the consumer sees it handed over, and read before the producer
 * sees it given back.
 */
#include "base/recq.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct chunk {
	cnt_buf bytes;
	size_t *ends;               /* where each record ends in bytes */
	size_t n, cap;
} chunk;

struct cnt_recq {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	chunk *c;
	size_t nc, chunk_bytes;
	uint64_t produced, consumed;
	int closed, failed, stopped;
	/* the consumer's own: whether it reads chunk `consumed`, and where */
	int holding;
	size_t at;
};

cnt_recq *cnt_recq_new(size_t nchunks, size_t chunk_bytes)
{
	cnt_recq *q = calloc(1, sizeof(*q));

	if (q == NULL)
		return NULL;
	q->nc = nchunks < 2 ? 2 : nchunks;
	q->chunk_bytes = chunk_bytes;
	q->c = calloc(q->nc, sizeof(*q->c));
	if (q->c == NULL) {
		free(q);
		return NULL;
	}
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	return q;
}

void cnt_recq_free(cnt_recq *q)
{
	if (q == NULL)
		return;
	for (size_t i = 0; i < q->nc; i++) {
		cnt_buf_release(&q->c[i].bytes);
		free(q->c[i].ends);
	}
	free(q->c);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	free(q);
}

cnt_buf *cnt_recq_buf(cnt_recq *q)
{
	return &q->c[q->produced % q->nc].bytes;
}

/* Hands the producer's chunk over and waits to own the next one.  0, or
 * -1 when the consumer stopped. */
static int hand_over(cnt_recq *q)
{
	int rc;

	pthread_mutex_lock(&q->mu);
	q->produced++;
	pthread_cond_broadcast(&q->cv);
	while (q->produced - q->consumed >= q->nc && !q->stopped)
		pthread_cond_wait(&q->cv, &q->mu);
	rc = q->stopped ? -1 : 0;
	pthread_mutex_unlock(&q->mu);
	if (rc == 0) {
		chunk *k = &q->c[q->produced % q->nc];

		k->bytes.len = 0;
		k->n = 0;
	}
	return rc;
}

int cnt_recq_commit(cnt_recq *q, cnt_err *err)
{
	chunk *k = &q->c[q->produced % q->nc];

	if (k->n == k->cap) {
		size_t c = k->cap ? k->cap * 2 : 4096;
		size_t *e = realloc(k->ends, c * sizeof(*e));

		if (e == NULL)
			return cnt_err_nomem(err);
		k->ends = e;
		k->cap = c;
	}
	k->ends[k->n++] = k->bytes.len;
	if (k->bytes.len >= q->chunk_bytes && hand_over(q) != 0)
		return cnt_err_set(err, "the records' reader stopped");
	return 0;
}

void cnt_recq_close(cnt_recq *q, int failed)
{
	pthread_mutex_lock(&q->mu);
	/* records not ended by a commit are not records */
	if (!q->stopped && q->c[q->produced % q->nc].n > 0)
		q->produced++;
	q->closed = 1;
	q->failed = failed;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

int cnt_recq_next(cnt_recq *q, const uint8_t **rec, size_t *n)
{
	for (;;) {
		int rc;

		if (q->holding) {
			const chunk *k = &q->c[q->consumed % q->nc];

			if (q->at < k->n) {
				size_t from = q->at ? k->ends[q->at - 1] : 0;

				*rec = k->bytes.p + from;
				*n = k->ends[q->at] - from;
				q->at++;
				return 1;
			}
			pthread_mutex_lock(&q->mu);
			q->consumed++;
			q->holding = 0;
			q->at = 0;
			pthread_cond_broadcast(&q->cv);
			pthread_mutex_unlock(&q->mu);
		}
		pthread_mutex_lock(&q->mu);
		while (q->consumed == q->produced && !q->closed)
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->consumed < q->produced) {
			q->holding = 1;
			rc = 1;
		} else {
			rc = q->failed ? -1 : 0;
		}
		pthread_mutex_unlock(&q->mu);
		if (rc <= 0)
			return rc;
	}
}

void cnt_recq_stop(cnt_recq *q)
{
	pthread_mutex_lock(&q->mu);
	q->stopped = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}
