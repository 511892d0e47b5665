/*
 * timefmt.h - timestamps and durations as cnt reads and writes them.
 *
 * Time inside cnt is always an int64 count of milliseconds since
 * 1970-01-01T00:00:00Z (Avro's timestamp-millis), on the proleptic Gregorian
 * calendar, without leap seconds.  Text forms:
 *
 *   RFC 3339 with an offset   2026-11-30T05:26:10.123+05:30, ...Z
 *       Date, 'T' (or 't'), time, an optional fraction of any number of
 *       digits, then 'Z'/'z' or +hh:mm / -hh:mm.  Years 0000..9999.  Every
 *       field is range-checked, including the days of the month in leap and
 *       common years.  Digits beyond the third of the fraction are truncated,
 *       which rounds the instant toward minus infinity.  A time without an
 *       offset is refused: its instant would depend on a timezone we were
 *       not told.
 *       Second 60 (a leap second) is accepted on any minute and read as
 *       59.999 of that minute (its own fraction ignored), so an event stamped
 *       during a leap second sorts after everything in the second before it
 *       and before the next minute.  Whether the minute really had a leap
 *       second is not checked.
 *
 *   Output                    2026-11-30T05:26:10.123Z
 *       Always UTC, always three fraction digits, so the text sorts like
 *       the number for years 0000..9999.
 *
 *   Durations                 250ms 60s 90m 7d 1h30m 2w
 *       One or more <digits><unit> terms, units w d h m s ms, each unit at
 *       most once and from the largest down.  A bare number is refused
 *       ("60": seconds or milliseconds?), except "0".
 *
 * Nothing here reads the clock or a timezone database.
 */
#ifndef CNT_TIMEFMT_H
#define CNT_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

#define CNT_MS_PER_SEC  INT64_C(1000)
#define CNT_MS_PER_MIN  INT64_C(60000)
#define CNT_MS_PER_HOUR INT64_C(3600000)
#define CNT_MS_PER_DAY  INT64_C(86400000)

/* A broken-down calendar time, with no timezone attached. */
typedef struct cnt_civil {
	int64_t year;
	unsigned month;   /* 1..12 */
	unsigned day;     /* 1..31 */
	unsigned hour;    /* 0..23 */
	unsigned minute;  /* 0..59 */
	unsigned second;  /* 0..59 (a parsed leap second reads as 59) */
	unsigned msec;    /* 0..999 */
} cnt_civil;

/* Parses an RFC 3339 timestamp with offset from s[0..n) (no NUL needed; all n
 * bytes must belong to the timestamp).  Returns 0 and sets *ms_out to epoch
 * milliseconds, or -1 when the text is not one (then *ms_out is untouched). */
int cnt_time_parse_rfc3339(const char *s, size_t n, int64_t *ms_out);

/* Parses a date-time WITHOUT offset, as a timezone-local time is written in
 * definitions: "YYYY-MM-DD", "YYYY-MM-DDTHH:MM" or "YYYY-MM-DDTHH:MM:SS[.frac]"
 * ('T' or 't' or one space).  Same ranges as above.  Returns 0 and fills *out
 * (missing parts are zero), or -1. */
int cnt_time_parse_local(const char *s, size_t n, cnt_civil *out);

/* Formats ms as "YYYY-MM-DDTHH:MM:SS.mmmZ" into buf, NUL-terminated, and
 * returns its length (24 for years 0000..9999).  Any int64 is accepted:
 * instants before 1970 are handled; years outside 0000..9999 are written
 * with more digits or a '-' sign (not RFC 3339, not parsed back). */
size_t cnt_time_format_rfc3339(int64_t ms, char buf[32]);

/* Parses a duration (see above) from the NUL-terminated s.  Returns 0 and
 * sets *ms_out (>= 0), or -1 on bad syntax or int64 overflow. */
int cnt_time_parse_duration(const char *s, int64_t *ms_out);

/* Parses a time given on a command line: an integer of epoch milliseconds
 * (optionally negative) or an RFC 3339 timestamp with offset.  Returns 0 and
 * sets *ms_out, or -1. */
int cnt_time_parse_arg(const char *s, int64_t *ms_out);

/* Days since 1970-01-01 of the proleptic Gregorian date y-m-d (m 1..12,
 * d 1..31, not range-checked), by Howard Hinnant's days_from_civil. */
int64_t cnt_days_from_civil(int64_t y, unsigned m, unsigned d);

/* The inverse of cnt_days_from_civil (Hinnant's civil_from_days). */
void cnt_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

/* Epoch milliseconds of c read as UTC (fields not range-checked). */
int64_t cnt_civil_to_ms(const cnt_civil *c);

/* Breaks ms down into UTC calendar fields (floor semantics before 1970). */
void cnt_civil_from_ms(int64_t ms, cnt_civil *out);

/* Days in month m (1..12) of year y on the Gregorian calendar. */
unsigned cnt_days_in_month(int64_t y, unsigned m);

#endif
