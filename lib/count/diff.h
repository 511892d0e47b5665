/*
 * diff.h - comparing two bucket files record by record (cnt-diff).
 *
 * Both files are sorted by key (cnt-accumulate writes them so), so one
 * merge-join pass over the two streams finds every key present on one
 * side only and every key whose values differ, holding two records in
 * memory whatever the sizes.  A side whose keys are not ascending is an
 * error, not a difference: an unsorted side would hide differences.
 *
 * Each difference is one JSON line {"key":{..},"left":{..}|null,
 * "right":{..}|null} (cnt-diff(1), OUTPUT).
 *
 * A file's day roll-ups (cnt-bucket(5), the container after the hourly
 * one) are records too, compared after the hourly ones in the same pass:
 * a key is (hourly or day, the bucket key), so a day record present on
 * one side only, or whose values differ, is a difference like any other,
 * and a day container on one side only makes each of its records one.
 * With no_days, day containers are skipped and only hours are compared.
 */
#ifndef CNT_DIFF_H
#define CNT_DIFF_H

#include <stdint.h>

#include "base/err.h"
#include "model/defs.h"

/* With definitions (cnt-diff -d), each counter is compared as its type
 * allows: an exact, min or max counter's records byte for byte; a unique
 * counter's sketches within a relative tolerance - --tolerance, else its
 * declared tolerated_error, else the 95 % bound of the sketches'
 * precision (count/estimate.h) - and its other fields exactly; an approx
 * counter's count, sum, late_count and late_sum within --tolerance, else
 * its declared tolerated_error (two samplings keep different events, so
 * sampled, sum_var, minimum, maximum, last event and ingest figures are
 * not compared; bucket_end is).  Without definitions every record is
 * compared exactly but for sketches, within --tolerance (default 0).
 * Relative: a and b agree when |a - b| <= tolerance * max(|a|, |b|). */
typedef enum {
	CNT_DIFF_TOL_EXACT,        /* bytes: exact, min, max (or no tolerance) */
	CNT_DIFF_TOL_OPTION,       /* --tolerance */
	CNT_DIFF_TOL_DECLARED,     /* the version's tolerated_error */
	CNT_DIFF_TOL_PRECISION     /* a unique counter's 95 % bound at its precision */
} cnt_diff_tol_from;

/* The tolerance applied to one counter version (one per version met). */
typedef struct cnt_diff_counter {
	char *tenant_id, *counter_id;
	int counter_version;
	cnt_counter_type type;     /* CNT_CTYPE_EXACT when not declared */
	int declared;              /* found in the definitions */
	double tolerance;
	cnt_diff_tol_from from;
} cnt_diff_counter;

/* The source's name: "exact", "--tolerance", "declared", "precision". */
const char *cnt_diff_tol_name(cnt_diff_tol_from f);

typedef struct cnt_diff_opts {
	double tolerance;     /* sketches equal within this relative difference; 0: bytes */
	int64_t max_shown;    /* print at most this many differences; -1: all */
	int quiet;            /* print none */
	int fd;               /* where the lines go */
	void (*tick)(uint64_t);  /* records read, for progress; may be NULL */
	const cnt_defs *defs;    /* NULL: no definitions (above) */
	int tolerance_given;     /* --tolerance was given */
	int no_days;             /* skip day containers: compare hourly records only */
} cnt_diff_opts;

/* The counts of one kind of record (hourly or day). */
typedef struct cnt_diff_counts {
	uint64_t left, right;             /* records read from each side */
	uint64_t only_left, only_right;   /* keys on one side only */
	uint64_t changed;                 /* keys on both sides whose values differ */
} cnt_diff_counts;

typedef struct cnt_diff_stats {
	uint64_t left, right;             /* records read from each side, hours and days */
	uint64_t only_left, only_right;   /* keys on one side only */
	uint64_t changed;                 /* keys on both sides whose values differ */
	uint64_t shown;                   /* differences printed */
	cnt_diff_counts days;             /* the day records among the above */
	int days_left, days_right;        /* each side holds a day container */
	cnt_diff_counter *counters;       /* with definitions: each version met, in file order */
	size_t ncounters;
} cnt_diff_stats;

/* Frees st's counters. */
void cnt_diff_stats_release(cnt_diff_stats *st);

/* Compares the bucket files on lfd and rfd (not closed; names for
 * messages).  0 when compared (st says whether they differ), or -1 with
 * err set: an unreadable or unsorted side, out of memory, or a write that
 * failed. */
int cnt_diff_buckets(int lfd, const char *lname, int rfd, const char *rname,
	const cnt_diff_opts *o, cnt_diff_stats *st, cnt_err *err);

/* Whether st holds any difference. */
static inline int cnt_diff_differ(const cnt_diff_stats *st)
{
	return st->only_left + st->only_right + st->changed > 0;
}

#endif
