/*
 * audit.h - the batch invalid-traffic audit (cnt-audit(1)): the declared
 * heuristics of one (tenant, counter) (cnt-definitions(5), "AUDIT
 * HEURISTICS") applied to the archive up to a watermark, and the
 * inflation ratio per member.
 *
 * What is examined.  The events of the counter with event_time < through
 * that are not compensations.  The archive may be the ingested log (every
 * beacon) or the deduplicated one: the audit deduplicates again as
 * cnt-dedup(1) does (the key of the event's counter version: (member,
 * item) or the idempotency key; a key is counted again once its ingest
 * second reaches the counted occurrence's plus the dedup horizon; within
 * a key, events in ingest second then event id order), and an event id
 * seen twice is one event.  Only the counted views are examined and can
 * be flagged, so retracting them lowers the count by exactly the flagged
 * views, and a duplicate is never flagged (nor retracted) twice.
 *
 * The heuristics (item = viewer, member = video; times are event times,
 * a window [t, t + span_s] includes both ends and starts at a view):
 *   lockstep    a view is flagged when some window of its viewer's views
 *               holds views of at least `videos` distinct members;
 *   burst       a view is flagged when some window of the views carrying
 *               its value of attrs[attr] holds more than max_events;
 *   watch_time  a viewer's views carrying attrs[attr] are grouped by that
 *               value; when the largest group (ties: the smallest value)
 *               holds at least `views` views and at least `share` of the
 *               viewer's views with the key, its views are flagged.
 * A view can be flagged by several heuristics; it is one flagged view.
 * Views without an item are never flagged by lockstep or watch_time,
 * views without the attrs key never by burst or watch_time.
 *
 * Inflation: per member, beacons (every examined event and its
 * duplicates) divided by the HyperLogLog++ estimate of distinct items
 * (lib/count/hll.h); inflated when above the baseline.
 *
 * Determinism: every ordering is by content (bytes of ids and values,
 * times), never by arrival, so the same events in any order of inputs
 * give the same findings, flagged ids and report.
 */
#ifndef CNT_CORRECT_AUDIT_H
#define CNT_CORRECT_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "correct/retract.h"
#include "model/defs.h"
#include "model/event.h"

#define CNT_AUDIT_BASELINE 2.0   /* inflation baseline when none is declared or given */

typedef struct cnt_audit cnt_audit;

/* One finding: a heuristic that matched one key. */
typedef struct cnt_audit_finding {
	size_t rule;           /* index in the counter's audit array */
	cnt_audit_kind kind;
	const char *key;       /* lockstep, watch_time: the item; burst: the attrs value */
	int64_t from_ms;       /* lockstep, burst: start of the first window that matched;
	                        * watch_time: the first flagged view's event time */
	int64_t measure;       /* lockstep: most distinct members in a window; burst: most
	                        * events in a window; watch_time: views with the value */
	int64_t total;         /* watch_time: the item's views with the key; else 0 */
	const char *value;     /* watch_time: the repeated value; else NULL */
	uint64_t views;        /* views this finding flags */
} cnt_audit_finding;

/* One member (video). */
typedef struct cnt_audit_video {
	const char *member;
	uint64_t beacons;      /* examined events and their duplicates */
	uint64_t views;        /* examined (counted) views */
	uint64_t viewers;      /* HLL++ estimate of distinct items (0 when none) */
	double ratio;          /* beacons / viewers; 0 when viewers is 0 */
	int inflated;          /* ratio > baseline */
	uint64_t flagged;      /* views flagged */
} cnt_audit_video;

typedef struct cnt_audit_totals {
	uint64_t in;           /* records read */
	uint64_t compensations;/* compensating events (not examined) */
	uint64_t skipped;      /* another tenant or counter, or event_time >= through */
	uint64_t duplicates;   /* not counted: a repeated key within the horizon, or event id */
	uint64_t examined;     /* counted views examined */
	uint64_t flagged;      /* distinct views flagged */
	uint64_t inflated;     /* members above the baseline */
} cnt_audit_totals;

/* 0 when through_ms is a bucket boundary of the counter's tenant's zone,
 * else -1 with err saying so (CNT_ERR_DATA; the zone cannot be read).
 * The verified view counts whole buckets up to the watermark
 * (lib/view/verified.h), and the ledger's watermark never goes back, so
 * one between boundaries would leave the counter without a verified count
 * until a later audit.  cnt_audit_new() checks it too. */
int cnt_audit_check_through(const cnt_counter *k, int64_t through_ms, cnt_err *err);

/* A new audit of counter k (of defs) over events with event_time <
 * through_ms.  baseline < 0: the counter's declared inflation baseline,
 * else CNT_AUDIT_BASELINE.  NULL with err set (out of memory). */
cnt_audit *cnt_audit_new(const cnt_counter *k, int64_t through_ms, double baseline, cnt_err *err);
void cnt_audit_free(cnt_audit *a);

/* Offers one event (any tenant or counter: others are skipped).  Copies
 * what it keeps.  0, or -1 with err set (out of memory). */
int cnt_audit_add(cnt_audit *a, const cnt_event *e, cnt_err *err);

/* Reads the event files fds[0..n) (names for messages) through
 * cnt_audit_add, and sets order[0..n) to the input indices sorted by a
 * fingerprint of each input's event ids, so that a second pass over the
 * inputs in that order sees the events in an order that does not depend
 * on the order given.  0, or -1 with err set. */
int cnt_audit_read(cnt_audit *a, const int *fds, const char *const *names, size_t n, size_t *order,
	cnt_err *err);

/* Deduplicates, applies the heuristics and computes the ratios.  Call
 * once, after the last add.  0, or -1 with err set (out of memory). */
int cnt_audit_run(cnt_audit *a, cnt_err *err);

/* Results, valid until cnt_audit_free: findings ordered by rule, then
 * key bytes; members by member bytes; flagged event ids by bytes. */
size_t cnt_audit_nfindings(const cnt_audit *a);
const cnt_audit_finding *cnt_audit_finding_at(const cnt_audit *a, size_t i);
size_t cnt_audit_nvideos(const cnt_audit *a);
const cnt_audit_video *cnt_audit_video_at(const cnt_audit *a, size_t i);
size_t cnt_audit_nflagged(const cnt_audit *a);
const char *const *cnt_audit_flagged(const cnt_audit *a);
const cnt_audit_totals *cnt_audit_totals_of(const cnt_audit *a);
double cnt_audit_baseline(const cnt_audit *a);

/* The retraction id of the audit's retraction: "r-" and 32 hex digits of
 * XXH3-128 over "cnt-audit", tenant, counter, through, requester,
 * authority and the flagged ids in order, so that a rerun over the same
 * archive names the same retraction whatever the clock.  0 or -1 (out of
 * memory). */
int cnt_audit_retraction_id(const cnt_audit *a, const char *requester, const char *authority,
	char out[40]);

/* Retracts the flagged views (cause fraud, retract.h): the inputs
 * fds[0..n) (names[i]; regular files, read again from the start) in the
 * order cnt_audit_read gave, the retraction ledger at ledger_fd (opened
 * O_RDWR | O_APPEND), the compensations to out (finished; empty when
 * nothing is flagged).  req gives requester, authority and created_at;
 * the retraction id is cnt_audit_retraction_id's, copied into rid.  The
 * record to append is left in res->ledger_line, as cnt_retract_run does;
 * note (when not NULL) is called with ctx for each flagged event it
 * refuses, as cnt_retract_run's.
 * *named is 1 when the audit's retraction is in the ledger after the
 * append (a record is to be appended, or one with that id is there from
 * an earlier run), else 0.  0, or -1 with err set. */
int cnt_audit_retract(const cnt_audit *a, const int *fds, const char *const *names, size_t n,
	const size_t *order, const cnt_retract_req *req, int ledger_fd, const char *ledger_name,
	cnt_writer *out, void (*note)(void *ctx, cnt_slice key, const char *why), void *ctx,
	cnt_retract_result *res, char rid[40], int *named, cnt_err *err);

/* Whether the retraction ledger at fd (read from its current offset to
 * the end) holds a record with retraction id rid: *has 1 or 0.  0, or
 * -1 with err set (a ledger that is not one, CNT_ERR_DATA). */
int cnt_audit_ledger_has(int fd, const char *name, const char *rid, int *has, cnt_err *err);

/* Whether s is valid UTF-8 (the ledgers are JSON): 1 or 0. */
int cnt_audit_utf8_ok(const char *s);

/* What the report says about the run beside the findings. */
typedef struct cnt_audit_summary {
	const char *audit_id;       /* NULL: none appended (dry run, or already audited) */
	const char *retraction_id;  /* NULL: none */
	uint64_t retracted, already;
	int dry_run;
} cnt_audit_summary;

/* Appends the report to out: json 0, a table for people; json 1, JSON
 * lines ({"kind":"finding",...} per finding, {"kind":"video",...} per
 * member, then one {"kind":"audit",...}; cnt-audit(1)).  0 or -1 (out of
 * memory). */
int cnt_audit_report(const cnt_audit *a, const cnt_audit_summary *s, int json, cnt_buf *out);

#endif
