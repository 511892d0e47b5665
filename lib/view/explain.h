/*
 * explain.h - re-deriving one member's standing from the archive
 * (cnt-explain(1)), independently of any bucket file.
 *
 * The log is read twice.  The first pass collects the compensations
 * (events whose `retracts` is set, cnt-retract(1)).  The second judges
 * every event of the board's tenant and counter as the pipeline would:
 *
 *   duplicate   its dedup key (count/dedup_filter.h) was first seen
 *               within the counter version's horizon, judged in log order
 *               on ingest seconds exactly as cnt-dedup(1) does;
 *   retracted   a compensation in the log names it (it and its
 *               compensation count for nothing);
 *   late        its ingest time is after its local-hour bucket's end plus
 *               the lateness horizon (count/window.h);
 *   outside     on time, but its bucket is not inside the board's window
 *               (or the board pins another counter version);
 *   counted     on time, in the window: part of the standing.
 *
 * Every event of the board's counter that is not a duplicate, a
 * compensation or retracted is added to a projection of the board
 * (view/project.h) as a bucket of its own, so the value and the rank are
 * computed by the same rules as cnt-project(1)'s (sums, minima, maxima,
 * HyperLogLog++ unions; the board's order, tie-breaks and numbering),
 * from the log and nothing else.  The member's events are listed with
 * their fate, and the admission side files add what never reached the
 * log: cnt-ingest(1)'s rejects (-r) and in-run duplicates (-D), whose raw
 * lines name the member, and the hold files of cnt-ingest --holds.
 */
#ifndef CNT_VIEW_EXPLAIN_H
#define CNT_VIEW_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "model/defs.h"

typedef enum {
	CNT_FATE_COUNTED,
	CNT_FATE_OUTSIDE,        /* on time, not in the board's window */
	CNT_FATE_LATE,
	CNT_FATE_DUPLICATE,      /* dropped by dedup (cnt-dedup) */
	CNT_FATE_RETRACTED,
	CNT_FATE_COMPENSATION,   /* a compensating event of the member */
	CNT_FATE_REJECTED,       /* refused at admission (cnt-ingest -r) */
	CNT_FATE_INGEST_DUPLICATE, /* a retry within one admission (cnt-ingest -D) */
	CNT_FATE_HELD,           /* held at admission (cnt-ingest --holds, cnt-hold) */
	CNT_FATE_N
} cnt_fate;

/* The fate's name as printed ("counted", ...). */
const char *cnt_fate_name(cnt_fate f);

typedef struct cnt_explain_event {
	cnt_fate fate;
	char *source;             /* file */
	uint64_t position;        /* record number (1-based) in the log file, or line */
	char *event_id;           /* as in the log; NULL for what never reached the log */
	char *idempotency_key;
	int64_t delta, event_time, ingest_time;
	int has_times;            /* event_time / ingest_time known */
	char *item;               /* NULL: none */
	/* counted, outside, late */
	int64_t bucket_start, bucket_end, deadline;
	/* duplicate: the first occurrence, when it is known (one of the
	 * member's own events, which is where a retry's original is) */
	char *dup_source, *dup_event_id;
	uint64_t dup_position;
	/* retracted / compensation */
	char *retraction_id, *comp_source;
	uint64_t comp_position;
	char *cause, *requester, *authority;  /* from the ledger, when given */
	/* rejected / ingest duplicate; held: reason the signal, message the
	 * detail, dup_source the hold id */
	char *reason, *message;
} cnt_explain_event;

typedef struct cnt_explain_opts {
	const cnt_defs *defs;
	const char *defs_name;
	const cnt_leaderboard *board;
	const char *member;
	const char *scope;        /* NULL: global */
	const char *scopes;       /* member_ref,scope lines for a cohort board, or NULL */
	int64_t from, to;         /* the board's window (cnt_board_window) */
	const char *window_label;
	const char *const *logs;  /* the archive: segments in log order */
	size_t nlogs;
	const char *const *rejects, *const *ingest_dups; /* cnt-ingest -r / -D files */
	size_t nrejects, ningest_dups;
	const char *const *holds; /* hold files (cnt-hold(5)) */
	size_t nholds;
	const char *ledger;       /* the retraction ledger, or NULL */
	void (*tick)(uint64_t);   /* progress: records read, or NULL */
} cnt_explain_opts;

typedef struct cnt_explain {
	cnt_explain_event *ev;    /* the member's, in log order, then side files */
	size_t n, cap;
	uint64_t by_fate[CNT_FATE_N];
	uint64_t read;            /* events read from the log (both passes: once) */
	uint64_t of_board;        /* of the board's tenant and counter */
	int found;                /* the member is ranked */
	int64_t value;
	int est;                  /* 0: exact; 1: an estimate (approx, unique)
	                           * with error its 95 % bound; 2: bound unknown */
	int64_t error;
	uint32_t rank;
	uint64_t members;         /* ranked in the scope */
	int64_t as_of;            /* largest ingest time of the counter's events */
	const char *scope;
} cnt_explain;

/* Explains o->member's standing into x (released with
 * cnt_explain_release() either way).  0, or -1 with err set: a log or
 * side file that cannot be read (naming it and where), out of memory. */
int cnt_explain_run(const cnt_explain_opts *o, cnt_explain *x, cnt_err *err);
void cnt_explain_release(cnt_explain *x);

/* Reads the member's standing in a sealed season from cnt-seal show's
 * JSON lines (the effective value and rank, after every correction) into
 * c (what: a label the caller keeps).  0, or -1 with err set. */
struct cnt_explain_check;
int cnt_explain_sealed(const char *show_json, size_t n, const char *member, struct cnt_explain_check *c,
	cnt_err *err);

/* The published answer to compare with (cnt-rank's), filled by the
 * caller; have = 0 when there is none. */
typedef struct cnt_explain_check {
	int have;
	const char *what;         /* "view v000003", "sealed standing" */
	int found;
	int64_t value;
	int exact;                /* rank exact, else a band */
	int64_t rank;
	uint64_t band_lo, band_hi;
} cnt_explain_check;

/* The published view's answer for o->member, as cnt-rank rank gives it:
 * the view of o->board and o->scope under views, at version (0: the
 * published one), read at now.  who: --tenant, or NULL; a view of
 * another tenant is refused.  what (wn bytes, kept by the caller) is
 * the check's label.  0, or -1 with err set (no such view, a corrupt
 * one, another tenant's). */
int cnt_explain_view_check(const char *views, const cnt_explain_opts *o, int version, int64_t now,
	const char *who, cnt_explain_check *c, char *what, size_t wn, cnt_err *err);

/* The sealed standing of o->board's season (o->window_label) in the
 * seal directory dir, every correction applied, as cnt-seal show gives
 * it.  The board's window must be a season (cnt-explain refuses
 * --sealed for another board as a usage error before this).  what as
 * above.  0, or -1 with err set (a damaged seal directory, the season not
 * sealed). */
int cnt_explain_sealed_check(const char *dir, const cnt_explain_opts *o, cnt_explain_check *c, char *what,
	size_t wn, cnt_err *err);

/* Whether the check agrees with x: 1 agrees, 0 not (or nothing to check). */
int cnt_explain_agrees(const cnt_explain *x, const cnt_explain_check *c);

/* The explanation as JSON lines (one per event, then one "standing"
 * line), or as text for people.  0 or -1 (out of memory). */
int cnt_explain_format_json(const cnt_explain_opts *o, const cnt_explain *x, const cnt_explain_check *checks,
	size_t nchecks, cnt_buf *out);
int cnt_explain_format_text(const cnt_explain_opts *o, const cnt_explain *x, const cnt_explain_check *checks,
	size_t nchecks, cnt_buf *out);

#endif
