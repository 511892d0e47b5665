/*
 * signals.h - the operator signals of one run (cnt-stats(1)): the --stats
 * files of the tools of a run, read into one list of signals, each
 * compared with its threshold, the ones beyond it flagged.
 *
 * The signals are the batch-relevant rows of the observability matrix
 * (seed 003, view 17) under the keys every tool shares (cnt(7),
 * STATISTICS):
 *	balanced        false: a tool's conservation check failed (always flagged)
 *	reporting       false: the canary is not reporting (always flagged)
 *	dedup_hit_rate  cnt-ingest, cnt-dedup
 *	late_ratio      cnt-window, cnt-accumulate
 *	rejected, rejected_by_reason.<reason>, held
 *	top_key_share   cnt-window
 *	as_of_age_s     cnt-project, cnt-rank (projection lag)
 *	differences     cnt-diff (rebuild difference)
 *	canary_age_s    cnt-canary
 * A key a file does not hold gives no row; a null value gives a row
 * without a value, never flagged.
 *
 * Thresholds: a signal is flagged when its value is above its threshold
 * (a limit; none = never flagged).  The defaults and the seed each comes
 * from are in cnt-stats(1); as_of_age_s is judged against the file's own
 * freshness_budget_s when it has one and the threshold was not set.
 */
#ifndef CNT_OPS_SIGNALS_H
#define CNT_OPS_SIGNALS_H

#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"

typedef enum cnt_sig {
	CNT_SIG_DEDUP_HIT_RATE,
	CNT_SIG_LATE_RATIO,
	CNT_SIG_REJECTED,
	CNT_SIG_HELD,
	CNT_SIG_TOP_KEY_SHARE,
	CNT_SIG_AS_OF_AGE_S,
	CNT_SIG_DIFFERENCES,
	CNT_SIG_CANARY_AGE_S,
	CNT_SIG_NLIMITS            /* signals with a numeric threshold */
} cnt_sig;

typedef struct cnt_sig_limits {
	double limit[CNT_SIG_NLIMITS];
	int has[CNT_SIG_NLIMITS];   /* 0: none, never flagged */
	int set[CNT_SIG_NLIMITS];   /* given by the user (not the default) */
} cnt_sig_limits;

/* The name of signal k ("dedup_hit_rate"). */
const char *cnt_sig_name(cnt_sig k);

/* The defaults (cnt-stats(1), THRESHOLDS). */
void cnt_sig_limits_default(cnt_sig_limits *l);
/* One threshold from "NAME=VALUE" (VALUE a number >= 0, or "none").
 * 0, or -1 with err naming what is wrong. */
int cnt_sig_limits_set(cnt_sig_limits *l, const char *assignment, cnt_err *err);
/* Thresholds from a JSON file: one object of NAME: number or null (none).
 * An unknown name or a bad value is an error.  0 or -1 with err set. */
int cnt_sig_limits_load(cnt_sig_limits *l, const char *path, cnt_err *err);

/* One row. */
typedef struct cnt_sig_row {
	char *file, *tool, *signal;  /* owned */
	int has_value;               /* 0: the file has null there */
	double value;
	int has_limit;
	double limit;
	int flagged;
} cnt_sig_row;

typedef struct cnt_signals {
	cnt_sig_row *rows;
	size_t n, cap;
	size_t files, flagged;
} cnt_signals;

#define CNT_SIGNALS_INIT {NULL, 0, 0, 0, 0}

/* Reads the --stats file at path (one JSON object with a "tool" string)
 * and appends its signals.  0, or -1 with err set (the file unreadable,
 * not JSON, not a --stats object: kind data; out of memory). */
int cnt_signals_add_file(cnt_signals *s, const cnt_sig_limits *l, const char *path, cnt_err *err);

/* The rows as a table (a header, one line per row, a summary line), or as
 * one JSON object {"files":n,"flagged":n,"signals":[{file, tool, signal,
 * value, threshold, flagged}, ...]} and a newline.  0, or -1 (out of
 * memory). */
int cnt_signals_table(const cnt_signals *s, cnt_buf *out);
int cnt_signals_json(const cnt_signals *s, cnt_buf *out);

void cnt_signals_release(cnt_signals *s);

#endif
