/*
 * test_recq.c - lib/base/recq.h: records handed between two threads.
 *
 * A producer thread commits records of varied lengths (0 to 296 bytes;
 * each but the empty ones names its number) through chunks far smaller than the stream, so
 * that it waits on the consumer again and again; the consumer must see
 * every record, whole and in order.  A producer that fails is reported
 * after its records; a consumer that stops makes the producer's commits
 * fail instead of leaving it waiting.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/recq.h"
#include "unit.h"

typedef struct producer {
	cnt_recq *q;
	unsigned n;           /* records to commit */
	int fail;             /* close failed after them */
	unsigned committed;   /* commits that returned 0 */
	int rc;               /* the first failing commit's -1, else 0 */
	char msg[1024];
} producer;

/* Record i: empty when i % 301 is 5, else its number, then i % 301 - 8
 * bytes (at least 0) of i's low byte. */
static size_t make_rec(unsigned i, uint8_t *out)
{
	size_t pad = i % 301 > 8 ? i % 301 - 8 : 0;

	if (i % 301 == 5)
		return 0;
	memcpy(out, &i, sizeof(i));
	memset(out + sizeof(i), (int)(i & 0xff), pad);
	return sizeof(i) + pad;
}

static void *produce(void *arg)
{
	producer *p = arg;
	uint8_t rec[512];
	cnt_err err;

	for (unsigned i = 0; i < p->n; i++) {
		size_t n = make_rec(i, rec);

		if (cnt_buf_append(cnt_recq_buf(p->q), rec, n) != 0 || cnt_recq_commit(p->q, &err) != 0) {
			p->rc = -1;
			snprintf(p->msg, sizeof(p->msg), "%s", err.msg);
			break;
		}
		p->committed++;
	}
	cnt_recq_close(p->q, p->fail || p->rc != 0);
	return NULL;
}

/* Takes up to max records, checking each against make_rec; returns what
 * the last cnt_recq_next said, *taken the records taken. */
static int consume(cnt_recq *q, unsigned max, unsigned *taken, int *bad)
{
	uint8_t want[512];
	const uint8_t *rec;
	size_t n;
	int rc = 1;

	*taken = 0;
	*bad = 0;
	while (*taken < max && (rc = cnt_recq_next(q, &rec, &n)) == 1) {
		size_t wn = make_rec(*taken, want);

		if (n != wn || memcmp(rec, want, n) != 0)
			(*bad)++;
		(*taken)++;
	}
	return rc;
}

static void test_everything_in_order(void)
{
	size_t chunks[] = {1, 64, 4096, (size_t)1 << 20};

	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		cnt_recq *q = cnt_recq_new(2 + c, chunks[c]);
		/* a hand-over per record: fewer of them */
		unsigned n = chunks[c] <= 64 ? 20000 : 200000;
		producer p = {q, n, 0, 0, 0, ""};
		pthread_t t;
		unsigned taken;
		int bad, rc;

		CHECK(q != NULL);
		if (q == NULL)
			return;
		CHECK_EQ_INT(pthread_create(&t, NULL, produce, &p), 0);
		rc = consume(q, UINT32_MAX, &taken, &bad);
		pthread_join(t, NULL);
		CHECK_EQ_INT(rc, 0);
		CHECK_EQ_INT(taken, n);
		CHECK_EQ_INT(bad, 0);
		CHECK_EQ_INT(p.rc, 0);
		/* the end stays the end */
		CHECK_EQ_INT(consume(q, 1, &taken, &bad), 0);
		cnt_recq_free(q);
	}
}

static void test_empty(void)
{
	cnt_recq *q = cnt_recq_new(2, 64);
	const uint8_t *rec;
	size_t n;

	CHECK(q != NULL);
	cnt_recq_close(q, 0);
	CHECK_EQ_INT(cnt_recq_next(q, &rec, &n), 0);
	cnt_recq_free(q);
	q = cnt_recq_new(2, 64);
	cnt_recq_close(q, 1);
	CHECK_EQ_INT(cnt_recq_next(q, &rec, &n), -1);
	cnt_recq_free(q);
}

/* A failed producer: its records first, every one of them, then -1. */
static void test_producer_fails(void)
{
	cnt_recq *q = cnt_recq_new(3, 100);
	producer p = {q, 5000, 1, 0, 0, ""};
	pthread_t t;
	unsigned taken;
	int bad;

	CHECK_EQ_INT(pthread_create(&t, NULL, produce, &p), 0);
	CHECK_EQ_INT(consume(q, UINT32_MAX, &taken, &bad), -1);
	pthread_join(t, NULL);
	CHECK_EQ_INT(taken, 5000);
	CHECK_EQ_INT(bad, 0);
	cnt_recq_free(q);
}

/* A consumer that stops: the producer is not left waiting, its commits
 * fail and say why. */
static void test_consumer_stops(void)
{
	cnt_recq *q = cnt_recq_new(2, 100);
	producer p = {q, 100000, 0, 0, 0, ""};
	pthread_t t;
	unsigned taken;
	int bad;

	CHECK_EQ_INT(pthread_create(&t, NULL, produce, &p), 0);
	CHECK_EQ_INT(consume(q, 1000, &taken, &bad), 1);
	CHECK_EQ_INT(taken, 1000);
	CHECK_EQ_INT(bad, 0);
	cnt_recq_stop(q);
	pthread_join(t, NULL);
	CHECK_EQ_INT(p.rc, -1);
	CHECK(p.committed < 100000);
	CHECK(strstr(p.msg, "stopped") != NULL);
	cnt_recq_free(q);
}

int main(void)
{
	RUN(test_everything_in_order);
	RUN(test_empty);
	RUN(test_producer_fails);
	RUN(test_consumer_stops);
	return unit_report("test_recq");
}
