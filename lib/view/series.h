/*
 * series.h - creator analytics (cnt-series(1)): views and unique viewers
 * of one video, a set of videos or one creator's videos, per local hour or
 * day over a range, broken down by one dimension, read from bucket files.
 *
 * The figures come from bucket records (cnt-bucket(5)): a member's total
 * records (dim empty), or, broken down, its records of that dimension.
 * views is count + late_count summed over the records in a period (every
 * counted event, on time or late); unique viewers is the estimate of the
 * union (HyperLogLog++ merge) of their sketch and late_sketch, over every
 * selected member, so a viewer of two of a creator's videos is one viewer.
 * A record belongs to the period holding its bucket_start, and is read
 * when bucket_start lies in [from, to).  Periods are local hours (the
 * tenant's buckets: an hour repeated at a fall-back is two periods, an
 * hour cut by an offset change is shorter) or local days of the tenant's
 * timezone (23 or 25 hours long across a DST change).
 *
 * Files are read only through cnt_series_run(), which opens each with one
 * call (series_open in series.c): a check that a file is the asking
 * tenant's belongs there.
 */
#ifndef CNT_VIEW_SERIES_H
#define CNT_VIEW_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "model/defs.h"

/* Periods one query may span at most (an hourly series of 100 years). */
#define CNT_SERIES_MAX_PERIODS 1000000

typedef struct cnt_series_query {
	const cnt_defs *defs;
	const char *tenant, *counter;  /* the counter, declared in defs */
	const char *from, *to;         /* [from, to): an instant (RFC 3339 with an
	                                * offset, or epoch ms) or a local date or
	                                * date-time of the tenant's zone
	                                * ("2026-03-01", "2026-03-01T10:00") */
	int day;                       /* 1: local days; 0: local hours */
	int hours;                     /* 1: sum hourly records even where day
	                                * roll-ups would do (see cnt_series_run) */
	const char *by;                /* a dimension of the counter; NULL: none */
	const char *const *members;    /* the videos; with nmembers == 0 and no
	                                * creator: every member */
	size_t nmembers;
	const char *members_file;      /* NULL, or more videos: one id a line
	                                * (empty lines ignored) */
	const char *creator;           /* NULL, or the members having a breakdown
	                                * record of dimension "creator" with this
	                                * value (the counter must declare it) */
} cnt_series_query;

typedef struct cnt_series_row {
	int64_t start, end;            /* the period, UTC epoch ms, [start, end) */
	const char *value;             /* the dimension's value; NULL: no --by */
	size_t value_n;
	int64_t views;                 /* count + late_count */
	int views_est;                 /* 0: exact; 1: an estimate (an approx
	                                * version's records), views_error its
	                                * 95 % bound; 2: an estimate, bound unknown */
	int64_t views_error;
	int has_uniques;               /* 0: no record carried a sketch */
	uint64_t uniques;              /* estimate */
	int64_t uniques_error;         /* its 95 % bound at the union's precision */
} cnt_series_row;

typedef struct cnt_series_result {
	cnt_series_row *rows;          /* by period, then value (bytes) */
	size_t nrows;
	int has_as_of;
	int64_t as_of;                 /* latest max_ingest_time of the counter's
	                                * total records read (any member, any time) */
	uint64_t records_read;         /* bucket records read (all passes) */
	int used_days;                 /* 1: some file's day roll-ups were read
	                                * instead of its hours */
	uint64_t records_used;         /* records added to a row */
	uint64_t creator_members;      /* with a creator: the members found */
} cnt_series_result;

typedef struct cnt_series cnt_series;

/* Checks q against the definitions (the counter exists; by is a
 * dimension of one of its versions; creator needs a "creator" dimension;
 * from < to and at most CNT_SERIES_MAX_PERIODS periods) and loads the
 * tenant's zone.  NULL with err set.  q and what it points to must outlive the series. */
cnt_series *cnt_series_new(const cnt_series_query *q, cnt_err *err);
void cnt_series_free(cnt_series *s);

/* Reads the n bucket files (fds not closed; names for messages) and
 * answers the query into *res (owned by s, valid until cnt_series_free).
 * With a creator, the files are read twice (the first pass finds the
 * creator's members), so each must be a file that can be read again.  A
 * file that is not a bucket file or is corrupt is an error naming it.
 * 0, or -1 with err set. */
int cnt_series_run(cnt_series *s, const int *fds, const char *const *names, size_t n,
	const cnt_series_result **res, cnt_err *err);

/* Appends the answer as JSON lines, one per row:
 *   {"tenant_id":..,"counter_id":..,"period":"hour"|"day","start":RFC3339 UTC,
 *    "end":..,"local":"2026-03-01T10:00+01:00","dim":..,"value":..,
 *    "views":N,"views_estimate":false,"unique_viewers":N|null,
 *    "unique_viewers_estimate":true,"unique_viewers_error":E,
 *    "as_of":RFC3339|null}
 * (dim and value only when broken down; the two unique_viewers_ keys only
 * with a number; views of an approx counter: "views_estimate":true,
 * "views_error":E, the bound of the on-time events' sampling - late
 * events carry no variance in a bucket, so it does not cover them).  In
 * the table, estimates read "~N +-E".  0 or -1 (out of memory). */
int cnt_series_format_json(const cnt_series *s, cnt_buf *out);
/* The same as a table for people: a heading line, then one line per row. */
int cnt_series_format_table(const cnt_series *s, cnt_buf *out);

/* The local label of instant t in the series' zone: "YYYY-MM-DD" for a
 * day, "YYYY-MM-DDTHH:MM+HH:MM" for an hour (the offset shows which of a
 * repeated hour it is).  buf of at least 40 bytes. */
void cnt_series_label(const cnt_series *s, int64_t t, char *buf, size_t n);

#endif
