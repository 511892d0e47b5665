/*
 * fused.h - the counting chain in one process (cnt-count(1)): dedup ->
 * window -> accumulate over event files, without writing the events
 * between the stages.
 *
 * The result is exactly that of
 *	cnt-dedup -d D [-s S] [-D dups] | cnt-window -d D [--shards N] | cnt-accumulate
 * because the same stage modules judge, attribute and group every event,
 * in the same log order:
 *   - cnt_dedup_filter_admit() counts each event read and looks up its
 *     counter version; an event naming none is written to the rejects
 *     stream (cnt-dedup's reject, reasons as stage.h);
 *   - cnt_dedup_filter_judge() judges the others in log order against the
 *     dedup table; a duplicate goes to the duplicates writer of the filter;
 *   - each first occurrence is attributed with the counter version that
 *     admission found (cnt_window_attribute_as), counted as cnt-window
 *     counts it (cnt_window_take) and added to the accumulator with that
 *     counter and its member's hash (cnt_accum_add_hinted); a
 *     compensation (retracts set), an approx counter's sampled event and
 *     a late one are handled there exactly as cnt-window and
 *     cnt-accumulate handle them.  Nothing is
 *     held here: cnt-ingest --holds sets held events aside before the
 *     archive, and the three tools too count held as 0.
 * A first occurrence whose attribution fails (a timezone that cannot be
 * loaded, an approx event whose cnt.sample is not a level) stops the run
 * with that error, as it stops cnt-window; a duplicate is never
 * attributed, as in the pipe.
 *
 * Threads.  With two threads (fu->threads 2 and fu->acc2 set), a reader
 * thread reads, decompresses and decodes the inputs, admits each event,
 * copies it into a batch with its dedup key, and when the batch is full
 * judges it in log order (duplicates written) and checks each first
 * occurrence for what its attribution could fail on (cnt_window_check:
 * its tenant's timezone, an approx event's sampling level), so that the
 * first such event in log order stops the run whatever the threads; it
 * also feeds the hot keys.  Two counting threads (the calling thread and
 * one more) then attribute the batch's first occurrences, count them in
 * a window of their own (cnt_window_sibling, absorbed into fu->win at
 * the end: sums and maxima, so the counts do not depend on the split)
 * and add them to fu->acc and fu->acc2, each taking the members of one
 * half of the hash space (top bit of XXH3-64 of member_ref), so the two
 * hold no key in common, and cnt_accum_finish_halves() writes them as
 * one output, each half sorted and encoded on a thread of its own.
 * Batches are handed over in order through a ring of three, reused; every
 * call on the dedup table is made in log order by the reader, and each
 * accumulator sees its events in log order: the output does not depend
 * on scheduling (and an accumulator's groups do not depend on the order
 * of their events anyway).  An error on any side stops the others; the
 * reader's error is returned first (what it did not read was never
 * counted), else a counting side's.
 */
#ifndef CNT_COUNT_FUSED_H
#define CNT_COUNT_FUSED_H

#include <stddef.h>
#include <stdint.h>

#include "count/accum.h"
#include "count/dedup_filter.h"
#include "count/stage.h"
#include "count/topkey.h"
#include "count/window.h"

typedef struct cnt_fused {
	cnt_dedup_filter *filter;   /* made with out NULL; its duplicates writer, if any, gets them */
	cnt_window *win;            /* made with out NULL, over the same definitions */
	cnt_accum *acc;
	cnt_accum *acc2;            /* with two threads: the second half's, absorbed into acc at the end */
	cnt_topkey *hot;            /* NULL, or fed each first occurrence's key (cnt-window --stats) */
	cnt_rejects *rejects;
	void (*input)(int fd, const char *name);  /* NULL, or called as each input starts */
	void (*progress)(uint64_t);               /* NULL, or called with events read */
	/* NULL, or called after input i's last event is judged, before the
	 * next input's first: the dedup table then holds exactly the keys
	 * of the inputs up to i (cnt-count --snapshots).  Called on the
	 * thread that reads (the dedup table's only user). */
	void (*input_done)(void *ctx, size_t i);
	void *ctx;
	int threads;                /* 1: everything on the calling thread; 2: a reader thread too */
	size_t batch;               /* events handed over at once at most: 0 or more than
	                             * CNT_FUSED_BATCH is CNT_FUSED_BATCH; tests give fewer.
	                             * A batch also ends at its bytes' and attributes' room. */
} cnt_fused;

#define CNT_FUSED_BATCH 8192

/* Runs the chain over the n inputs fds[i] (names[i] for messages and
 * rejects; the fds are not closed), in order, into fu's stages.
 * Afterwards everything counted is in fu->acc, and with two threads in
 * fu->acc and fu->acc2 (halves with no key in common, for
 * cnt_accum_finish_halves()); the caller finishes the filter, the window
 * and the accumulators as the tools do.  0, or -1 with err set (an input, a
 * timezone, memory, a write, a spill); the callbacks run on the reader
 * thread with two threads. */
int cnt_fused_run(const cnt_fused *fu, const int *fds, char *const *names, size_t n, cnt_err *err);

#endif
