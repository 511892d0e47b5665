/*
 * tz.h - IANA timezones, local-hour buckets and the windows built from them.
 *
 * A tenant counts in its own timezone: "today" is the tenant's local day,
 * "this week" its local week.  Events are pre-aggregated into buckets of
 * one LOCAL hour, and every window is an exact union of buckets.  This
 * module reads the zone (TZif files, RFC 8536) and answers three kinds of
 * question about an instant (int64 UTC epoch milliseconds, as in timefmt.h):
 * what UTC offset is in effect, which bucket holds it, which window.
 *
 * The rules, exactly:
 *
 *   Offset.  The zone is a sequence of intervals [lo, hi) of constant UTC
 *   offset.  Transitions in the file that do not change the offset (only
 *   the abbreviation or the isdst flag) are not interval boundaries.
 *   Before the first transition, time type 0 applies (RFC 8536 3.2); after
 *   the last one, the POSIX TZ string of the footer (which then governs from
 *   the last transition on), or the last transition's type when there is
 *   none.  Under a rule, the offset at t is set by the latest of all the
 *   years' DST starts and ends at or before t (so negative DST, southern
 *   summers and RFC 8536's permanent DST "EST5EDT,0/0,J365/25" need no
 *   special case).
 *
 *   Bucket.  The bucket of instant t is the set of instants that lie in the
 *   same constant-offset interval as t AND in the same local hour
 *   (floor((t + offset) / 1 h)).  Hence: buckets partition the time line;
 *   consecutive buckets touch; an offset change always starts a new bucket;
 *   a bucket is never longer than 3600 s but may be shorter where an
 *   offset change falls inside a local hour (Lord Howe's 30-minute shift,
 *   Kathmandu's 1986 +05:30 -> +05:45, a fall-back to 01:30 ...); every
 *   bucket lies within one local hour, so within one local day.  A bucket
 *   is identified by its start instant: during a fall-back the repeated
 *   local hour gives two distinct buckets.
 *
 *   Local -> UTC (cnt_tz_local_to_utc).  With fold == 0, a wall time L maps
 *   to the first instant at which the zone's clock shows L or later.  So a
 *   wall time that occurs once maps to that instant; one that occurs twice
 *   (a fold, fall back) to the earlier; one that does not occur (a gap:
 *   spring forward, Apia's lost 2011-12-30) to the first instant after the
 *   gap, which is the transition instant.  With fold == 1 a wall time that
 *   occurs more than once maps to its last occurrence, otherwise as with
 *   fold == 0.  The fold-0 map never decreases as L grows, in any zone, and
 *   a wall time on a whole local hour always maps to a bucket boundary.
 *
 *   Windows.  The local day D is [U(D 00:00), U(D+1 00:00)) where U is
 *   local_to_utc with fold 0: a midnight inside a gap starts the day when
 *   the gap ends; a repeated midnight starts it at its first occurrence.  A
 *   day that never happened locally (Apia 2011-12-30) is empty.  An instant
 *   belongs to the day whose boundaries enclose it, so the days partition
 *   the time line (in a fold across midnight the repeated end of the old
 *   day belongs to the new one).  Weeks (starting on a chosen weekday) and
 *   calendar months are unions of whole days.  "Last N days" is the N local
 *   days ending with the day of t (today included).  "Rolling" is the
 *   absolute duration ending at the end of the bucket of t-1 ms (so t's own
 *   partial hour is in, and a t exactly on a boundary ends the window
 *   there), its start rounded down to a bucket boundary.  An explicit local
 *   [from, to) has both ends mapped by U and then rounded UP to the next
 *   bucket boundary (a bucket is in the range iff it starts inside it).
 *   Every window boundary is a bucket boundary.
 *
 *   Range.  Instants are clamped to [CNT_TZ_MIN_MS, CNT_TZ_MAX_MS) (about
 *   +-146 million years) before any arithmetic, so nothing overflows; for
 *   instants outside that range the answers are those of the clamped one.
 *   Files using leap seconds ("right/" zones) are refused: cnt time has
 *   none.
 *
 * A cnt_tz is immutable after loading and may be shared between threads.
 * Lookups are a binary search over the transitions (the footer rule is
 * expanded into the table up to the year 2100 and evaluated directly
 * beyond).  For a hot loop, a cnt_tz_cursor remembers the last interval and
 * answers cnt_tz_cursor_bucket_start() in a few nanoseconds.
 */
#ifndef CNT_TZ_H
#define CNT_TZ_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "time/timefmt.h"

#define CNT_TZ_MIN_MS (-(INT64_C(1) << 62))
#define CNT_TZ_MAX_MS (INT64_C(1) << 62)
#define CNT_TZ_BUCKET_MS INT64_C(3600000)

typedef struct cnt_tz cnt_tz;

/* A UTC half-open window [start_ms, end_ms); empty when they are equal. */
typedef struct cnt_tz_window {
	int64_t start_ms, end_ms;
} cnt_tz_window;

/* Loads the zone named name (an IANA name such as "Europe/Berlin") from
 * $TZDIR, or /usr/share/zoneinfo when TZDIR is unset or empty.  Names that
 * are empty, longer than 255 bytes, start with '/', contain "..", or use
 * characters other than [A-Za-z0-9/_+-.] are refused, and so is a file that
 * does not start with "TZif", is larger than 1 MiB or fails to parse.  "UTC"
 * works even without a zoneinfo directory.  Returns a new zone the caller
 * frees with cnt_tz_free(), or NULL with err set. */
cnt_tz *cnt_tz_load(const char *name, cnt_err *err);

/* Parses a TZif file (versions 1 to 4) from n bytes of memory.  Every count
 * in the header is checked against the bytes present; transitions must be
 * strictly ascending, type indexes in range, offsets within RFC 8536's
 * [-89999, 93599] s, the footer a valid POSIX TZ string (RFC 8536's
 * extensions included).  name is copied and given back by cnt_tz_name().
 * Returns a new zone (free with cnt_tz_free()) or NULL with err naming the
 * field or offset at fault. */
cnt_tz *cnt_tz_parse(const void *data, size_t n, const char *name, cnt_err *err);

/* A zone from a POSIX TZ string alone, e.g. "CET-1CEST,M3.5.0,M10.5.0/3"
 * (with RFC 8536's extensions: rule times -167..167 h).  DST without a rule
 * is refused.  Returns a new zone named after the string, or NULL. */
cnt_tz *cnt_tz_posix(const char *tzstring, cnt_err *err);

/* Frees tz; NULL is a no-op. */
void cnt_tz_free(cnt_tz *tz);

/* The name the zone was loaded or parsed under (owned by tz). */
const char *cnt_tz_name(const cnt_tz *tz);

/* The UTC offset, in seconds east of UTC, in effect at utc_ms. */
int32_t cnt_tz_offset_s(const cnt_tz *tz, int64_t utc_ms);

/* The constant-offset interval [*lo, *hi) containing utc_ms and its offset
 * in seconds (*lo may be INT64_MIN and *hi INT64_MAX at the ends of time).
 * Any pointer may be NULL. */
void cnt_tz_interval(const cnt_tz *tz, int64_t utc_ms, int64_t *lo, int64_t *hi,
		     int32_t *off_s);

/* The next offset change strictly after utc_ms, or INT64_MAX if none. */
int64_t cnt_tz_next_transition(const cnt_tz *tz, int64_t utc_ms);

/* The wall-clock fields of utc_ms in the zone (offset applied). */
void cnt_tz_to_civil(const cnt_tz *tz, int64_t utc_ms, cnt_civil *out);

/* The UTC instant of a local wall time (fields as in cnt_civil; out-of-range
 * fields are carried, e.g. hour 24 is the next day's 00:00).  Folds and gaps
 * are resolved as described above (fold 0: earlier, 1: later; gap: the end
 * of the gap). */
int64_t cnt_tz_local_to_utc(const cnt_tz *tz, const cnt_civil *local, int fold);

/* The bucket of utc_ms: its start, and its end (= the next bucket's start).
 * The bucket start is the bucket's identity. */
int64_t cnt_tz_bucket_start(const cnt_tz *tz, int64_t utc_ms);
int64_t cnt_tz_bucket_end(const cnt_tz *tz, int64_t utc_ms);

/* The local day number (days since 1970-01-01 on the local calendar) of the
 * day window containing utc_ms, consistent with cnt_tz_day(). */
int64_t cnt_tz_local_day(const cnt_tz *tz, int64_t utc_ms);

/* Windows containing utc_ms, as described above.  week_start: 0 = Monday
 * ... 6 = Sunday (as in defs.h; out-of-range values are taken mod 7).
 * cnt_tz_last_days with n_days == 0 gives the empty window at the end of
 * today.  cnt_tz_rolling with dur_ms <= 0 gives an empty window. */
cnt_tz_window cnt_tz_day(const cnt_tz *tz, int64_t utc_ms);
cnt_tz_window cnt_tz_week(const cnt_tz *tz, int64_t utc_ms, int week_start);
cnt_tz_window cnt_tz_month(const cnt_tz *tz, int64_t utc_ms);
cnt_tz_window cnt_tz_last_days(const cnt_tz *tz, int64_t utc_ms, unsigned n_days);
cnt_tz_window cnt_tz_rolling(const cnt_tz *tz, int64_t utc_ms, int64_t dur_ms);

/* The window of the local wall times [from, to).  Returns 0 and fills *out,
 * or -1 with err set when to is before from. */
int cnt_tz_range(const cnt_tz *tz, const cnt_civil *from, const cnt_civil *to,
		 cnt_tz_window *out, cnt_err *err);

/* Parses a weekday name ("monday" .. "sunday", case-insensitive, or the
 * first three letters) into 0 = Monday .. 6 = Sunday; -1 if not one. */
int cnt_tz_parse_weekday(const char *s);

/*
 * Cursor: the hot path of bucket attribution.  It remembers the interval of
 * the last lookup; events close in time hit it and cost a compare, an add
 * and a floor.  Embedded by value (cnt_tz_cursor_init); the zone must
 * outlive it.  Not shared between threads.
 */
typedef struct cnt_tz_cursor {
	const cnt_tz *tz;
	int64_t lo, hi;   /* the remembered interval [lo, hi) */
	int64_t off_ms;   /* its offset */
	size_t idx;       /* its index in the zone's table; SIZE_MAX if none */
} cnt_tz_cursor;

void cnt_tz_cursor_init(cnt_tz_cursor *c, const cnt_tz *tz);
/* Moves the cursor to the interval containing utc_ms (the slow path). */
void cnt_tz_cursor_seek(cnt_tz_cursor *c, int64_t utc_ms);

/* Same answers as cnt_tz_bucket_start() / cnt_tz_bucket_end(). */
static inline int64_t cnt_tz_cursor_bucket_start(cnt_tz_cursor *c, int64_t utc_ms)
{
	int64_t l, r, b;

	if (utc_ms < c->lo || utc_ms >= c->hi)
		cnt_tz_cursor_seek(c, utc_ms);
	if (utc_ms < CNT_TZ_MIN_MS)
		utc_ms = CNT_TZ_MIN_MS;
	else if (utc_ms >= CNT_TZ_MAX_MS)
		utc_ms = CNT_TZ_MAX_MS - 1;
	l = utc_ms + c->off_ms;
	r = l % CNT_TZ_BUCKET_MS;
	if (r < 0)
		r += CNT_TZ_BUCKET_MS;
	b = l - r - c->off_ms;
	return b < c->lo ? c->lo : b;
}

static inline int64_t cnt_tz_cursor_bucket_end(cnt_tz_cursor *c, int64_t utc_ms)
{
	int64_t l, r, e;

	if (utc_ms < c->lo || utc_ms >= c->hi)
		cnt_tz_cursor_seek(c, utc_ms);
	if (utc_ms < CNT_TZ_MIN_MS)
		utc_ms = CNT_TZ_MIN_MS;
	else if (utc_ms >= CNT_TZ_MAX_MS)
		utc_ms = CNT_TZ_MAX_MS - 1;
	l = utc_ms + c->off_ms;
	r = l % CNT_TZ_BUCKET_MS;
	if (r < 0)
		r += CNT_TZ_BUCKET_MS;
	e = l - r + CNT_TZ_BUCKET_MS - c->off_ms;
	return e > c->hi ? c->hi : e;
}

/*
 * A cache of loaded zones by name: a tool handling many tenants loads each
 * zone once.  Zones stay owned by the cache until cnt_tz_cache_free().
 */
typedef struct cnt_tz_cache cnt_tz_cache;

/* Returns a new empty cache, or NULL when out of memory. */
cnt_tz_cache *cnt_tz_cache_new(void);
/* The zone named name, loaded on first use by cnt_tz_load().  Returns a
 * pointer owned by the cache, or NULL with err set (failures are not
 * cached). */
const cnt_tz *cnt_tz_cache_get(cnt_tz_cache *c, const char *name, cnt_err *err);
/* Frees the cache and every zone in it; NULL is a no-op. */
void cnt_tz_cache_free(cnt_tz_cache *c);

#endif
