/*
 * recq.h - records handed from one producing thread to one consuming
 * thread, in order, through a few reused chunks.
 *
 * The producer appends a record's bytes to cnt_recq_buf() and ends it with
 * cnt_recq_commit(); a chunk is handed over when it holds chunk_bytes, and the producer waits while every chunk is in the
 * consumer's hands, so memory stays bounded whatever the speeds.  The
 * consumer takes records one at a time with cnt_recq_next().
 *
 * Either side can give up: cnt_recq_close(q, failed) ends the producer's
 * side (failed: the consumer's next() then returns -1 once the records
 * before are taken), cnt_recq_stop() the consumer's (the producer's next
 * commit returns -1): neither side ever waits for a thread that left.
 */
#ifndef CNT_RECQ_H
#define CNT_RECQ_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

typedef struct cnt_recq cnt_recq;

/* A queue of nchunks chunks (at least 2) of about chunk_bytes each.
 * NULL when out of memory. */
cnt_recq *cnt_recq_new(size_t nchunks, size_t chunk_bytes);
/* Frees q; both sides must be done with it. */
void cnt_recq_free(cnt_recq *q);

/* Producer: the buffer to append the next record to, and the end of
 * that record.  commit returns 0, or -1 with err set (out of memory, or
 * the consumer stopped). */
cnt_buf *cnt_recq_buf(cnt_recq *q);
int cnt_recq_commit(cnt_recq *q, cnt_err *err);
/* Producer: no more records (failed: the producer failed; the consumer
 * is told after the records committed before). */
void cnt_recq_close(cnt_recq *q, int failed);

/* Consumer: the next record, valid until the next call.  1 with *rec and
 * *n, 0 at the end, -1 when the producer closed it failed. */
int cnt_recq_next(cnt_recq *q, const uint8_t **rec, size_t *n);
/* Consumer: stops taking records; the producer's commits fail. */
void cnt_recq_stop(cnt_recq *q);

#endif
