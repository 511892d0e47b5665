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
 */
#ifndef CNT_DIFF_H
#define CNT_DIFF_H

#include <stdint.h>

#include "base/err.h"

typedef struct cnt_diff_opts {
	double tolerance;     /* sketches equal within this relative difference; 0: bytes */
	int64_t max_shown;    /* print at most this many differences; -1: all */
	int quiet;            /* print none */
	int fd;               /* where the lines go */
	void (*tick)(uint64_t);  /* records read, for progress; may be NULL */
} cnt_diff_opts;

typedef struct cnt_diff_stats {
	uint64_t left, right;             /* records read from each side */
	uint64_t only_left, only_right;   /* keys on one side only */
	uint64_t changed;                 /* keys on both sides whose values differ */
	uint64_t shown;                   /* differences printed */
} cnt_diff_stats;

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
