/*
 * accum_read.c - whole inputs into an accumulator (see accum.h).
 */
#include "count/accum.h"

#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "avro/records.h"

size_t cnt_accum_default_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	size_t m = pages > 0 && psize > 0 ? (size_t)pages * (size_t)psize / 4 : (size_t)1 << 30;

	return m < ((size_t)256 << 20) ? (size_t)256 << 20 : m;
}

/* The records of rin into a, or split between a and half (not NULL) by
 * member as cnt-count's counting threads split events (count/fused.c). */
static int read_buckets(cnt_accum *a, cnt_accum *half, cnt_records *rin, void (*tick)(uint64_t), cnt_err *err)
{
	cnt_bucket_in bin;
	cnt_bucket b;
	int rc;

	if (cnt_bucket_in_adopt(&bin, rin, NULL, err) != 0)
		return -1;
	while ((rc = cnt_bucket_in_next(&bin, &b, err)) > 0) {
		cnt_accum *to = half && XXH3_64bits(b.member_ref.p, b.member_ref.n) >> 63 ? half : a;

		if (cnt_accum_add_bucket(to, &b, err) != 0) {
			rc = -1;
			break;
		}
		if (tick)
			tick(1);
	}
	cnt_bucket_in_release(&bin);
	return rc < 0 ? -1 : 0;
}

static int read_windowed(cnt_accum *a, cnt_records *rin, void (*tick)(uint64_t), cnt_err *err)
{
	cnt_windowed_in *win = cnt_windowed_in_adopt(rin, NULL, err);
	cnt_windowed batch[CNT_ACCUM_BATCH];
	size_t nb = 0;
	int rc;

	if (win == NULL)
		return -1;
	/* Batches never span blocks: their strings point into one. */
	while ((rc = cnt_windowed_in_next(win, &batch[nb], err)) > 0) {
		if (++nb == CNT_ACCUM_BATCH || cnt_windowed_in_left(win) == 0) {
			if (cnt_accum_add_events(a, batch, nb, err) != 0) {
				rc = -1;
				break;
			}
			if (tick)
				tick(nb);
			nb = 0;
		}
	}
	cnt_windowed_in_free(win);
	return rc < 0 ? -1 : 0;
}

/* One input into a (and half, for bucket records); windowed events only
 * when events is set. */
static int read_input(cnt_accum *a, cnt_accum *half, int events, int fd, const char *name,
	void (*tick)(uint64_t), cnt_err *err)
{
	cnt_records *rin = cnt_records_open(fd, name, NULL, NULL, err);
	const char *kind;

	if (rin == NULL)
		return -1;
	kind = cnt_records_schema(rin)->fullname ? cnt_records_schema(rin)->fullname : "";
	if (strcmp(kind, "cnt.BucketAggregate") == 0)
		return read_buckets(a, half, rin, tick, err);
	if (events && strcmp(kind, "cnt.WindowedEvent") == 0)
		return read_windowed(a, rin, tick, err);
	if (events)
		cnt_err_set(err, "'%s' holds %s records; cnt-accumulate reads cnt.WindowedEvent (from cnt-window) or cnt.BucketAggregate (bucket files)",
			name, *kind ? kind : "unnamed");
	else
		cnt_err_set(err, "'%s' holds %s records, not cnt.BucketAggregate: it is not a bucket file", name,
			*kind ? kind : "unnamed");
	cnt_records_free(rin);
	return -1;
}

int cnt_accum_read(cnt_accum *a, int fd, const char *name, void (*tick)(uint64_t), cnt_err *err)
{
	return read_input(a, NULL, 1, fd, name, tick, err);
}

int cnt_accum_read_buckets(cnt_accum *a, cnt_accum *b, int fd, const char *name, void (*tick)(uint64_t),
	cnt_err *err)
{
	return read_input(a, b, 0, fd, name, tick, err);
}

int cnt_accum_check_balance(const cnt_accum *a, cnt_err *err)
{
	const cnt_accum_stats *st = cnt_accum_get_stats(a);

	/* A compensation takes one event out instead of adding one; an
	 * approx counter's sampled event stands for 2^L. */
	if (st->events_out == st->events - 2 * st->compensations + st->events_in_buckets +
	    st->scaled_extra)
		return 0;
	return cnt_err_set(err, "internal: events do not balance: %" PRIu64 " in (%" PRIu64 " events + %" PRIu64
		" in bucket records), %" PRIu64 " in the output", st->events + st->events_in_buckets,
		st->events, st->events_in_buckets, st->events_out);
}
