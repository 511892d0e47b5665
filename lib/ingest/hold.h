/*
 * hold.h - quarantine at admission (cnt-ingest --holds, cnt-hold(5)):
 * events that match an inflation signal declared on their counter are
 * held instead of admitted, so that a false positive costs a delay and
 * never a member's effort (seed 000, "The platform thinks this
 * contribution is fake but is not certain").
 *
 * The signals (cnt-definitions(5), "HOLD SIGNALS"), over the events of one
 * counter that passed every admission check and are not duplicates (the
 * candidates), all in event time:
 *
 *   rate      window_s, ceiling: an event is held when its member's deltas
 *             summed over (t - window_s, t], t its event_time, events at t
 *             included, exceed ceiling.  The events that take the member
 *             over the ceiling are held; the ones before stay admitted.
 *   lockstep  span_s, members: an event is held when some interval of
 *             span_s seconds (both ends included) around its event_time
 *             holds events with the same delta from at least members
 *             distinct members.  Every event of such a burst is held: no
 *             one of them is less suspect than another.
 *   device    attr, span_s, max_events: an event is held when some
 *             interval of span_s seconds around its event_time holds more
 *             than max_events events whose attrs[attr] has its value.
 *             Every event of the burst is held.  Events without the key
 *             never match.
 *
 * A held event records the first signal, in declaration order, that it
 * matched.  Every signal measures what was sent (held events count towards
 * the sums too), so no verdict depends on another.
 *
 * Scope of the sliding state: one run (one cnt_hold).  The candidates are
 * kept, encoded, until cnt_hold_finish(), then judged as a set: the
 * verdicts depend on the events' fields and event times only, never on
 * the order the inputs gave them in, and the admitted events are written
 * to the log in input order, so a run that holds nothing writes the same
 * log byte for byte as a run without holds.  A burst split between two
 * runs is seen by neither; the memory is the run's admitted events
 * (about their Avro size plus 80 bytes each).
 */
#ifndef CNT_INGEST_HOLD_H
#define CNT_INGEST_HOLD_H

#include <stdint.h>

#include "avro/container.h"
#include "base/err.h"
#include "model/defs.h"
#include "model/event.h"

typedef struct cnt_hold cnt_hold;

typedef struct cnt_hold_stats {
	uint64_t added;                     /* candidates seen */
	uint64_t admitted, held;            /* after cnt_hold_finish() */
	uint64_t by_signal[CNT_HOLD_NKINDS];
} cnt_hold_stats;

/* The first counter of d that declares a hold signal, or NULL. */
const cnt_counter *cnt_hold_first_counter(const cnt_defs *d);

/* A new run over defs (which must outlive it).  NULL with err set (out of
 * memory). */
cnt_hold *cnt_hold_new(const cnt_defs *defs, cnt_err *err);
void cnt_hold_free(cnt_hold *h);

/* Keeps a copy of e, an admitted event of a counter declared in defs.
 * 0, or -1 with err set (out of memory). */
int cnt_hold_add(cnt_hold *h, const cnt_event *e, cnt_err *err);

/* Judges every event kept (once; later calls do nothing).  0, or -1 with
 * err set (out of memory). */
int cnt_hold_decide(cnt_hold *h, cnt_err *err);
/* After cnt_hold_decide: for the i-th event added, -1 when admitted, else
 * the index of the signal that held it in its counter's holds[]. */
int cnt_hold_verdict(const cnt_hold *h, size_t i);

/* Decides (if not yet), then writes every event kept, in the order added:
 * an admitted one to log (and counted in hot, the hottest keys of the
 * events written, unless NULL), a held one to held (a hold file writer,
 * held.h) with its hold id, signal, detail and held_at = its
 * ingest_time.  Finishes neither writer.  0, or -1 with err set. */
struct cnt_topkey;
int cnt_hold_finish(cnt_hold *h, cnt_writer *log, cnt_writer *held, struct cnt_topkey *hot, cnt_err *err);

const cnt_hold_stats *cnt_hold_get_stats(const cnt_hold *h);
/* Events of counter c held (after cnt_hold_finish). */
uint64_t cnt_hold_counter_held(const cnt_hold *h, const cnt_counter *c);

#endif
