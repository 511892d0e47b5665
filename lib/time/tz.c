/*
 * tz.c - TZif reader, POSIX TZ rules, local-hour buckets and windows.
 *
 * The TZif format (RFC 8536).  A file is
 *
 *   header v1 | data v1 (32-bit times) | [header v2+ | data v2+ | footer]
 *
 * A header is 44 bytes: "TZif", a version byte (0, '2', '3' or '4'), 15
 * unused bytes, then six big-endian uint32 counts: isutcnt, isstdcnt,
 * leapcnt, timecnt, typecnt, charcnt.  The data block that follows holds
 * timecnt transition times (4 bytes in v1, 8 in v2+), timecnt one-byte
 * type indexes, typecnt 6-byte local time types (int32 utoff, uint8 isdst,
 * uint8 desigidx), charcnt bytes of abbreviations, leapcnt leap-second
 * records (4+4 or 8+4 bytes), isstdcnt and isutcnt one-byte indicators.
 * Version 2+ files repeat the header and data with 64-bit times and end
 * with a footer "\n<POSIX TZ string>\n" giving the rule for instants after
 * the last transition.  A v2+ reader skips the v1 block (its size follows
 * from the v1 counts) and uses the 64-bit one; so do we.  Version 3 allows
 * rule times of -167..167 hours in the footer, version 4 only changes the
 * leap-second table, which we refuse anyway.
 *
 * Every count is checked against the bytes present before anything is
 * read (sizes are computed in 64 bits from 32-bit counts, so they cannot
 * wrap), the file must end right after the footer, and a loaded file is at
 * most 1 MiB.
 *
 * The POSIX TZ string: std offset [dst [offset] [,start[/time],end[/time]]]
 * where a name is 3+ letters or <3+ of [A-Za-z0-9+-]>, an offset is
 * [+-]hh[:mm[:ss]] (hh 0..24) counted WEST of Greenwich (so "CET-1" is
 * UTC+1), the DST offset defaults to one hour ahead of standard, and a date
 * is Jn (1..365, February 29 never counted), n (0..365, counted) or Mm.w.d
 * (month m, week w 1..5 where 5 is the last, weekday d 0 = Sunday).  The
 * start time is local standard time, the end time local daylight time,
 * default 02:00, and may be negative or beyond 24 h.  Negative DST
 * (Europe/Dublin: "IST-1GMT0,M10.5.0,M3.5.0/1") and a DST period spanning
 * new year (southern hemisphere) need no special case below: the offset at
 * t is that set by the latest transition at or before t, over all years.
 *
 * Internal representation: transitions in milliseconds, merged so that
 * each one changes the offset, in one sorted array; off[i] is the offset
 * before at[i] (off[0] before the first, off[n] after the last).  When the
 * footer has a DST rule its transitions are appended up to the year 2100
 * and from `tail_ms` on the rule is evaluated directly ("rule_interval").
 */
#include "time/tz.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TZ_MAX_FILE (1u << 20)
#define TZ_UTOFF_MIN (-89999)
#define TZ_UTOFF_MAX 93599
#define TZ_EXPAND_UNTIL_MS INT64_C(4102444800000) /* 2100-01-01T00:00:00Z */
#define TZ_LOCAL_SCAN_MAX 4096                    /* intervals per local_to_utc */

typedef struct tz_date {
	char kind;           /* 'J', 'N' or 'M' */
	int n, m, w, d;
	int32_t time_s;      /* seconds after local midnight, may be < 0 or > 24 h */
} tz_date;

typedef struct tz_rule {
	int32_t std_off, dst_off; /* seconds east of UTC */
	int has_dst;
	tz_date start, end;
} tz_rule;

struct cnt_tz {
	char *name;
	size_t n;          /* transitions */
	int64_t *at;       /* n strictly ascending instants (ms) */
	int32_t *off;      /* n + 1 offsets (s) */
	int has_rule;      /* rule governs [tail_ms, +inf) */
	int64_t tail_ms;   /* INT64_MAX when there is no rule tail */
	tz_rule rule;
};

static int64_t clamp_ms(int64_t t)
{
	if (t < CNT_TZ_MIN_MS)
		return CNT_TZ_MIN_MS;
	if (t >= CNT_TZ_MAX_MS)
		return CNT_TZ_MAX_MS - 1;
	return t;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static int64_t floor_mod(int64_t a, int64_t b)
{
	int64_t r = a % b;

	return r < 0 ? r + b : r;
}

/* ---- POSIX TZ rules ---------------------------------------------------- */

static int is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days since the epoch of date d in year y. */
static int64_t rule_day(const tz_date *d, int64_t y)
{
	int64_t jan1 = cnt_days_from_civil(y, 1, 1), first, day;
	int wd;

	switch (d->kind) {
	case 'J':
		return jan1 + d->n - 1 + (is_leap(y) && d->n >= 60);
	case 'N':
		return jan1 + d->n;
	default:
		first = cnt_days_from_civil(y, (unsigned)d->m, 1);
		wd = (int)floor_mod(first + 4, 7); /* 1970-01-01 was a Thursday */
		day = (d->d - wd + 7) % 7 + (int64_t)(d->w - 1) * 7;
		while (day >= cnt_days_in_month(y, (unsigned)d->m))
			day -= 7;
		return first + day;
	}
}

/* The transitions of year y: [0] start of DST, [1] end. */
static void rule_year(const tz_rule *r, int64_t y, int64_t out[2])
{
	out[0] = (rule_day(&r->start, y) * 86400 + r->start.time_s - r->std_off) * 1000;
	out[1] = (rule_day(&r->end, y) * 86400 + r->end.time_s - r->dst_off) * 1000;
}

/*
 * The interval of the rule containing t (already clamped).  The offset at
 * t is set by the latest transition at or before t over all years, ties
 * broken by (year, start before end); the interval ends at the earliest
 * transition after t.  A year's transitions lie within 8 days of that year
 * (rule times are at most 167 h, offsets at most 26 h), which makes the
 * years Y-2 .. Y+3 around t's year Y enough for both answers, so the
 * intervals are the same whichever t inside them asked.
 */
static void rule_interval(const tz_rule *r, int64_t t, int64_t *lo, int64_t *hi, int32_t *off)
{
	int64_t y0, y, ev[2], best = INT64_MIN, next = INT64_MAX;
	int32_t boff = r->std_off;
	cnt_civil c;

	if (!r->has_dst) {
		*lo = INT64_MIN;
		*hi = INT64_MAX;
		*off = r->std_off;
		return;
	}
	cnt_civil_from_ms(t + (int64_t)r->std_off * 1000, &c);
	y0 = c.year;
	for (y = y0 - 2; y <= y0 + 3; y++) {
		rule_year(r, y, ev);
		for (int k = 0; k < 2; k++) {
			/* later (y, k) wins ties: >= keeps the last in key order */
			if (ev[k] <= t && ev[k] >= best) {
				best = ev[k];
				boff = k == 0 ? r->dst_off : r->std_off;
			}
			if (ev[k] > t && ev[k] < next)
				next = ev[k];
		}
	}
	*lo = best;
	*hi = next;
	*off = boff;
}

static int skip_digits(const char **s, int *v, int maxv)
{
	const char *p = *s;
	int x = 0;

	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		x = x * 10 + (*p - '0');
		if (x > maxv)
			return -1;
		p++;
	}
	*s = p;
	*v = x;
	return 0;
}

/* [+-]hh[:mm[:ss]] with hh <= maxh; returns seconds (sign applied). */
static int parse_hms(const char **s, int maxh, int32_t *out)
{
	int sign = 1, h, m = 0, sec = 0;

	if (**s == '+' || **s == '-') {
		sign = **s == '-' ? -1 : 1;
		(*s)++;
	}
	if (skip_digits(s, &h, maxh) != 0)
		return -1;
	if (**s == ':') {
		(*s)++;
		if (skip_digits(s, &m, 59) != 0)
			return -1;
		if (**s == ':') {
			(*s)++;
			if (skip_digits(s, &sec, 59) != 0)
				return -1;
		}
	}
	*out = sign * (h * 3600 + m * 60 + sec);
	return 0;
}

static int parse_tzname(const char **s)
{
	const char *p = *s;
	size_t len = 0;

	if (*p == '<') {
		p++;
		while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		       (*p >= '0' && *p <= '9') || *p == '+' || *p == '-') {
			p++;
			len++;
		}
		if (*p != '>' || len < 3)
			return -1;
		p++;
	} else {
		while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')) {
			p++;
			len++;
		}
		if (len < 3)
			return -1;
	}
	*s = p;
	return 0;
}

static int parse_date(const char **s, tz_date *d)
{
	memset(d, 0, sizeof(*d));
	if (**s == 'J') {
		(*s)++;
		d->kind = 'J';
		if (skip_digits(s, &d->n, 365) != 0 || d->n < 1)
			return -1;
	} else if (**s == 'M') {
		(*s)++;
		d->kind = 'M';
		if (skip_digits(s, &d->m, 12) != 0 || d->m < 1 || *(*s)++ != '.' ||
		    skip_digits(s, &d->w, 5) != 0 || d->w < 1 || *(*s)++ != '.' ||
		    skip_digits(s, &d->d, 6) != 0)
			return -1;
	} else {
		d->kind = 'N';
		if (skip_digits(s, &d->n, 365) != 0)
			return -1;
	}
	d->time_s = 7200;
	if (**s == '/') {
		(*s)++;
		if (parse_hms(s, 167, &d->time_s) != 0)
			return -1;
	}
	return 0;
}

/*
 * A rule whose DST or standard time never lasts (RFC 8536's permanent DST
 * "EST5EDT,0/0,J365/25", or equal offsets) is a fixed offset: found by
 * walking one 400-year Gregorian cycle, after which every rule repeats.
 */
static void rule_normalise(tz_rule *r)
{
	int64_t t = INT64_C(946684800000), end = INT64_C(13569465600000); /* 2000, 2400 */
	int64_t lo, hi;
	int32_t off;
	int std_seen = 0, dst_seen = 0;

	if (!r->has_dst)
		return;
	if (r->std_off == r->dst_off) {
		r->has_dst = 0;
		return;
	}
	while (t < end && !(std_seen && dst_seen)) {
		rule_interval(r, t, &lo, &hi, &off);
		if (hi > lo && hi > t) {
			if (off == r->std_off)
				std_seen = 1;
			else
				dst_seen = 1;
		}
		t = hi;
	}
	if (!std_seen) {
		r->std_off = r->dst_off;
		r->has_dst = 0;
	} else if (!dst_seen) {
		r->has_dst = 0;
	}
}

/* Parses a whole POSIX TZ string into *r.  Returns 0 or -1 with err. */
static int parse_posix(const char *str, tz_rule *r, cnt_err *err)
{
	const char *s = str;
	int32_t v;

	memset(r, 0, sizeof(*r));
	if (parse_tzname(&s) != 0)
		return cnt_err_set(err, "TZ string '%s': bad standard-time name at byte %zu", str,
				   (size_t)(s - str));
	if (parse_hms(&s, 24, &v) != 0)
		return cnt_err_set(err, "TZ string '%s': bad UTC offset at byte %zu", str,
				   (size_t)(s - str));
	r->std_off = -v;
	r->dst_off = r->std_off + 3600;
	if (*s == '\0')
		return 0;
	if (parse_tzname(&s) != 0)
		return cnt_err_set(err, "TZ string '%s': bad daylight-time name at byte %zu", str,
				   (size_t)(s - str));
	r->has_dst = 1;
	if (*s != ',' && *s != '\0') {
		if (parse_hms(&s, 24, &v) != 0)
			return cnt_err_set(err, "TZ string '%s': bad DST offset at byte %zu", str,
					   (size_t)(s - str));
		r->dst_off = -v;
	}
	if (*s != ',')
		return cnt_err_set(err, "TZ string '%s': daylight time without a rule", str);
	s++;
	if (parse_date(&s, &r->start) != 0 || *s++ != ',' || parse_date(&s, &r->end) != 0 ||
	    *s != '\0')
		return cnt_err_set(err, "TZ string '%s': bad rule near byte %zu", str,
				   (size_t)(s - str));
	rule_normalise(r);
	return 0;
}

/* ---- the table ---------------------------------------------------------- */

static cnt_tz *tz_alloc(const char *name, size_t cap, cnt_err *err)
{
	cnt_tz *tz = calloc(1, sizeof(*tz));

	if (tz == NULL)
		goto oom;
	tz->name = strdup(name ? name : "");
	tz->at = malloc((cap ? cap : 1) * sizeof(*tz->at));
	tz->off = malloc((cap + 1) * sizeof(*tz->off));
	if (tz->name == NULL || tz->at == NULL || tz->off == NULL)
		goto oom;
	tz->tail_ms = INT64_MAX;
	return tz;
oom:
	cnt_tz_free(tz);
	cnt_err_set(err, "timezone '%s': out of memory", name ? name : "");
	return NULL;
}

void cnt_tz_free(cnt_tz *tz)
{
	if (tz == NULL)
		return;
	free(tz->name);
	free(tz->at);
	free(tz->off);
	free(tz);
}

const char *cnt_tz_name(const cnt_tz *tz)
{
	return tz->name;
}

/* Appends transition (t, new offset), dropping ones that change nothing. */
static void tz_push(cnt_tz *tz, int64_t t, int32_t off)
{
	if (off == tz->off[tz->n])
		return;
	tz->at[tz->n++] = t;
	tz->off[tz->n] = off;
}

/* Sets the offset from instant `from` (>= the last transition) on. */
static void tz_set_from(cnt_tz *tz, int64_t from, int32_t off)
{
	if (tz->n > 0 && tz->at[tz->n - 1] == from) {
		tz->off[tz->n] = off;
		if (tz->off[tz->n - 1] == off)
			tz->n--;
	} else {
		tz_push(tz, from, off);
	}
}

/*
 * Finishes a zone whose table holds the file's transitions up to `from`
 * (CNT_TZ_MIN_MS when there are none): the footer rule governs from `from`
 * on.  Without DST that is one more offset.  With DST, the rule's
 * transitions are appended up to 2100 (when that is at most 500 years
 * away) and the rule is evaluated directly from the last one on.
 */
static int tz_add_rule(cnt_tz *tz, int64_t from, cnt_err *err)
{
	int64_t lo, hi, t = from;
	int32_t off;
	size_t cap;

	if (!tz->rule.has_dst) {
		if (from == CNT_TZ_MIN_MS) {
			tz->n = 0;
			tz->off[0] = tz->rule.std_off;
		} else {
			tz_set_from(tz, from, tz->rule.std_off);
		}
		return 0;
	}
	tz->has_rule = 1;
	tz->tail_ms = from;
	if (from == CNT_TZ_MIN_MS) {
		tz->n = 0;
		return 0;
	}
	rule_interval(&tz->rule, t, &lo, &hi, &off);
	tz_set_from(tz, from, off);
	if (from >= TZ_EXPAND_UNTIL_MS || TZ_EXPAND_UNTIL_MS - from > 500 * 366 * CNT_MS_PER_DAY)
		return 0;
	cap = tz->n + 2 * 502;
	{
		int64_t *a = realloc(tz->at, cap * sizeof(*a));
		int32_t *o;

		if (a == NULL)
			return cnt_err_set(err, "timezone '%s': out of memory", tz->name);
		tz->at = a;
		o = realloc(tz->off, (cap + 1) * sizeof(*o));
		if (o == NULL)
			return cnt_err_set(err, "timezone '%s': out of memory", tz->name);
		tz->off = o;
	}
	while (hi < TZ_EXPAND_UNTIL_MS && tz->n < cap) {
		t = hi;
		rule_interval(&tz->rule, t, &lo, &hi, &off);
		tz_push(tz, t, off);
	}
	tz->tail_ms = t;
	return 0;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const uint8_t *p)
{
	return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

typedef struct tzif_counts {
	uint32_t isut, isstd, leap, time, type, chars;
} tzif_counts;

static int read_header(const uint8_t *p, size_t n, size_t off, tzif_counts *c, int *version,
		       const char *name, cnt_err *err)
{
	if (n - off < 44)
		return cnt_err_set(err, "timezone '%s': header at byte %zu: truncated", name, off);
	if (memcmp(p + off, "TZif", 4) != 0)
		return cnt_err_set(err, "timezone '%s': byte %zu: not a TZif file (no \"TZif\")",
				   name, off);
	if (p[off + 4] != 0 && (p[off + 4] < '2' || p[off + 4] > '4'))
		return cnt_err_set(err, "timezone '%s': unsupported TZif version byte 0x%02x", name,
				   p[off + 4]);
	*version = p[off + 4] ? p[off + 4] - '0' : 1;
	c->isut = be32(p + off + 20);
	c->isstd = be32(p + off + 24);
	c->leap = be32(p + off + 28);
	c->time = be32(p + off + 32);
	c->type = be32(p + off + 36);
	c->chars = be32(p + off + 40);
	return 0;
}

static uint64_t block_size(const tzif_counts *c, unsigned tsize)
{
	return (uint64_t)c->time * (tsize + 1) + (uint64_t)c->type * 6 + c->chars +
	       (uint64_t)c->leap * (tsize + 4) + c->isstd + c->isut;
}

cnt_tz *cnt_tz_parse(const void *data, size_t n, const char *name, cnt_err *err)
{
	const uint8_t *p = data;
	tzif_counts c;
	int version, v2;
	size_t off = 0, pos, i, types, foot_len = 0;
	unsigned tsize = 4;
	uint64_t need;
	const char *foot = NULL;
	char footer[1024];
	cnt_tz *tz;
	int64_t prev = INT64_MIN, last_at = CNT_TZ_MIN_MS;
	int have_prev = 0, cut = 0;

	if (name == NULL)
		name = "";
	if (read_header(p, n, 0, &c, &version, name, err) != 0)
		return NULL;
	if (version >= 2) {
		need = 44 + block_size(&c, 4);
		if (need > n)
			return cnt_err_set(err, "timezone '%s': version 1 data block of %llu bytes "
					   "runs past the end (%zu bytes)", name,
					   (unsigned long long)(need - 44), n), NULL;
		off = (size_t)need;
		if (read_header(p, n, off, &c, &v2, name, err) != 0)
			return NULL;
		tsize = 8;
	}
	pos = off + 44;
	if (c.type == 0 || c.type > 256)
		return cnt_err_set(err, "timezone '%s': typecnt %u not in 1..256", name, c.type), NULL;
	if (c.chars == 0)
		return cnt_err_set(err, "timezone '%s': charcnt is 0", name), NULL;
	if ((c.isut != 0 && c.isut != c.type) || (c.isstd != 0 && c.isstd != c.type))
		return cnt_err_set(err, "timezone '%s': isutcnt %u / isstdcnt %u must be 0 or "
				   "typecnt %u", name, c.isut, c.isstd, c.type), NULL;
	if (c.leap != 0)
		return cnt_err_set(err, "timezone '%s': %u leap seconds: leap-second (\"right/\") "
				   "zones are not supported", name, c.leap), NULL;
	need = block_size(&c, tsize);
	if (need > n - pos)
		return cnt_err_set(err, "timezone '%s': data block at byte %zu needs %llu bytes, "
				   "only %zu left (timecnt %u, typecnt %u, charcnt %u)", name, pos,
				   (unsigned long long)need, n - pos, c.time, c.type, c.chars), NULL;
	if (version >= 2) {
		size_t f = pos + (size_t)need, e;

		if (f >= n || p[f] != '\n')
			return cnt_err_set(err, "timezone '%s': no footer at byte %zu", name, f), NULL;
		for (e = f + 1; e < n && p[e] != '\n'; e++)
			if (p[e] == '\0')
				break;
		if (e >= n || p[e] != '\n')
			return cnt_err_set(err, "timezone '%s': footer at byte %zu is not "
					   "terminated by a newline", name, f), NULL;
		if (e + 1 != n)
			return cnt_err_set(err, "timezone '%s': %zu bytes after the footer", name,
					   n - e - 1), NULL;
		foot_len = e - f - 1;
		if (foot_len >= sizeof(footer))
			return cnt_err_set(err, "timezone '%s': footer of %zu bytes is too long",
					   name, foot_len), NULL;
		memcpy(footer, p + f + 1, foot_len);
		footer[foot_len] = '\0';
		foot = footer;
	}

	/* the types first: transitions refer to them */
	types = pos + (size_t)c.time * (tsize + 1);
	for (i = 0; i < c.type; i++) {
		const uint8_t *t = p + types + i * 6;
		int32_t utoff = (int32_t)be32(t);

		if (utoff < TZ_UTOFF_MIN || utoff > TZ_UTOFF_MAX)
			return cnt_err_set(err, "timezone '%s': type %zu: utoff %ld outside "
					   "[%d, %d]", name, i, (long)utoff, TZ_UTOFF_MIN,
					   TZ_UTOFF_MAX), NULL;
		if (t[4] > 1)
			return cnt_err_set(err, "timezone '%s': type %zu: isdst %u", name, i, t[4]),
			       NULL;
		if (t[5] >= c.chars)
			return cnt_err_set(err, "timezone '%s': type %zu: desigidx %u >= charcnt %u",
					   name, i, t[5], c.chars), NULL;
	}
	tz = tz_alloc(name, c.time, err);
	if (tz == NULL)
		return NULL;
	tz->off[0] = (int32_t)be32(p + types); /* type 0 before the first transition */
	for (i = 0; i < c.time; i++) {
		int64_t t = tsize == 8 ? be64(p + pos + i * 8) : (int32_t)be32(p + pos + i * 4);
		unsigned idx = p[pos + (size_t)c.time * tsize + i];
		int32_t o;

		if (idx >= c.type) {
			cnt_err_set(err, "timezone '%s': transition %zu: type index %u >= typecnt %u",
				    name, i, idx, c.type);
			goto fail;
		}
		if (have_prev && t <= prev) {
			cnt_err_set(err, "timezone '%s': transition %zu: times not ascending", name, i);
			goto fail;
		}
		prev = t;
		have_prev = 1;
		o = (int32_t)be32(p + types + idx * 6);
		if (t < CNT_TZ_MIN_MS / 1000) {
			tz->off[0] = o; /* before the representable range: the initial state */
			continue;
		}
		if (t >= CNT_TZ_MAX_MS / 1000) {
			cut = 1; /* beyond the range: this and the rest never apply */
			continue;
		}
		tz_push(tz, t * 1000, o);
		last_at = t * 1000;
	}
	for (i = 0; i < c.isstd + c.isut; i++) {
		uint8_t b = p[types + (size_t)c.type * 6 + c.chars + i];

		if (b > 1) {
			cnt_err_set(err, "timezone '%s': standard/UT indicator %zu is %u", name, i, b);
			goto fail;
		}
	}
	if (foot != NULL && foot[0] != '\0' && !cut) {
		if (parse_posix(foot, &tz->rule, err) != 0) {
			cnt_err_prefix(err, "timezone '%s': footer", name);
			goto fail;
		}
		/* RFC 8536: with no transitions the string governs all of time */
		if (tz_add_rule(tz, have_prev ? last_at : CNT_TZ_MIN_MS, err) != 0)
			goto fail;
	}
	return tz;
fail:
	cnt_tz_free(tz);
	return NULL;
}

cnt_tz *cnt_tz_posix(const char *tzstring, cnt_err *err)
{
	cnt_tz *tz = tz_alloc(tzstring, 0, err);

	if (tz == NULL)
		return NULL;
	if (parse_posix(tzstring, &tz->rule, err) != 0) {
		cnt_tz_free(tz);
		return NULL;
	}
	tz->off[0] = tz->rule.std_off;
	if (tz_add_rule(tz, CNT_TZ_MIN_MS, err) != 0) {
		cnt_tz_free(tz);
		return NULL;
	}
	return tz;
}

static int valid_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 255 || name[0] == '/' || strstr(name, "..") != NULL)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = name[i];

		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		      (ch >= '0' && ch <= '9') || ch == '/' || ch == '_' || ch == '-' ||
		      ch == '+' || ch == '.'))
			return 0;
	}
	return 1;
}

cnt_tz *cnt_tz_load(const char *name, cnt_err *err)
{
	const char *dir = getenv("TZDIR");
	char path[4096];
	uint8_t *buf;
	size_t n;
	FILE *f;
	cnt_tz *tz;

	if (name == NULL || !valid_name(name))
		return cnt_err_set(err, "'%.64s' is not an IANA timezone name",
				   name ? name : "(null)"), NULL;
	if (dir == NULL || *dir == '\0')
		dir = "/usr/share/zoneinfo";
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return cnt_err_set(err, "timezone '%s': path too long", name), NULL;
	f = fopen(path, "rb");
	if (f == NULL) {
		if (strcmp(name, "UTC") == 0 && (tz = cnt_tz_posix("UTC0", err)) != NULL) {
			char *n2 = strdup(name);

			if (n2 == NULL) {
				cnt_tz_free(tz);
				return cnt_err_set(err, "timezone '%s': out of memory", name), NULL;
			}
			free(tz->name);
			tz->name = n2;
			return tz;
		}
		if (strcmp(name, "UTC") == 0)
			return NULL;
		return cnt_err_set(err, "unknown timezone '%s': %s: %s", name, path,
				   strerror(errno)), NULL;
	}
	buf = malloc(TZ_MAX_FILE + 1);
	if (buf == NULL) {
		fclose(f);
		return cnt_err_set(err, "timezone '%s': out of memory", name), NULL;
	}
	n = fread(buf, 1, TZ_MAX_FILE + 1, f);
	if (ferror(f)) {
		cnt_err_set(err, "timezone '%s': %s: read error", name, path);
		tz = NULL;
	} else if (n > TZ_MAX_FILE) {
		cnt_err_set(err, "timezone '%s': %s is larger than %u bytes", name, path,
			    TZ_MAX_FILE);
		tz = NULL;
	} else if (n < 4 || memcmp(buf, "TZif", 4) != 0) {
		cnt_err_set(err, "unknown timezone '%s': %s is not a TZif file", name, path);
		tz = NULL;
	} else {
		tz = cnt_tz_parse(buf, n, name, err);
	}
	free(buf);
	fclose(f);
	return tz;
}

/* ---- lookups ------------------------------------------------------------ */

void cnt_tz_interval(const cnt_tz *tz, int64_t utc_ms, int64_t *lo, int64_t *hi,
		     int32_t *off_s)
{
	int64_t t = clamp_ms(utc_ms), l, h;
	int32_t o;

	if (t >= tz->tail_ms) {
		rule_interval(&tz->rule, t, &l, &h, &o);
		if (l < tz->tail_ms)
			l = tz->tail_ms;
	} else {
		/* i = number of transitions <= t */
		size_t a = 0, b = tz->n;

		while (a < b) {
			size_t m = a + (b - a) / 2;

			if (tz->at[m] <= t)
				a = m + 1;
			else
				b = m;
		}
		o = tz->off[a];
		l = a ? tz->at[a - 1] : INT64_MIN;
		h = a < tz->n ? tz->at[a] : tz->tail_ms;
	}
	if (lo)
		*lo = l;
	if (hi)
		*hi = h;
	if (off_s)
		*off_s = o;
}

int32_t cnt_tz_offset_s(const cnt_tz *tz, int64_t utc_ms)
{
	int32_t o;

	cnt_tz_interval(tz, utc_ms, NULL, NULL, &o);
	return o;
}

int64_t cnt_tz_next_transition(const cnt_tz *tz, int64_t utc_ms)
{
	int64_t hi, limit;
	int32_t o, o2;

	/* rule intervals may meet without an offset change (a zero-length
	 * standard time between two years' DST); rules repeat every 400 years,
	 * so looking further than that finds nothing new */
	cnt_tz_interval(tz, utc_ms, NULL, &hi, &o);
	limit = hi < CNT_TZ_MAX_MS - 401 * 366 * CNT_MS_PER_DAY ?
		hi + 401 * 366 * CNT_MS_PER_DAY : CNT_TZ_MAX_MS;
	while (hi < limit) {
		cnt_tz_interval(tz, hi, NULL, NULL, &o2);
		if (o2 != o)
			return hi;
		cnt_tz_interval(tz, hi, NULL, &hi, NULL);
	}
	return INT64_MAX;
}

void cnt_tz_to_civil(const cnt_tz *tz, int64_t utc_ms, cnt_civil *out)
{
	int64_t t = clamp_ms(utc_ms);

	cnt_civil_from_ms(t + (int64_t)cnt_tz_offset_s(tz, t) * 1000, out);
}

void cnt_tz_cursor_init(cnt_tz_cursor *c, const cnt_tz *tz)
{
	c->tz = tz;
	c->lo = 0;
	c->hi = 0; /* empty: the first lookup seeks */
	c->off_ms = 0;
	c->idx = SIZE_MAX;
}

/* Table interval a (0..n): [at[a-1], at[a]) with offset off[a]. */
static void cursor_set(cnt_tz_cursor *c, size_t a)
{
	const cnt_tz *tz = c->tz;

	c->idx = a;
	c->lo = a ? tz->at[a - 1] : INT64_MIN;
	c->hi = a < tz->n ? tz->at[a] : tz->tail_ms;
	c->off_ms = (int64_t)tz->off[a] * 1000;
}

void cnt_tz_cursor_seek(cnt_tz_cursor *c, int64_t utc_ms)
{
	const cnt_tz *tz = c->tz;
	int64_t t = clamp_ms(utc_ms);
	int32_t o;

	/* events out of order mostly step into a neighbouring interval */
	if (c->idx != SIZE_MAX && t < tz->tail_ms) {
		size_t a = c->idx;

		if (t >= c->hi && a < tz->n && (a + 1 == tz->n || t < tz->at[a + 1])) {
			cursor_set(c, a + 1);
			return;
		}
		if (t < c->lo && a > 0 && (a == 1 || t >= tz->at[a - 2])) {
			cursor_set(c, a - 1);
			return;
		}
	}
	if (t < tz->tail_ms) {
		size_t a = 0, b = tz->n;

		while (a < b) {
			size_t m = a + (b - a) / 2;

			if (tz->at[m] <= t)
				a = m + 1;
			else
				b = m;
		}
		cursor_set(c, a);
		return;
	}
	cnt_tz_interval(tz, t, &c->lo, &c->hi, &o);
	c->off_ms = (int64_t)o * 1000;
	c->idx = SIZE_MAX;
}

int64_t cnt_tz_bucket_start(const cnt_tz *tz, int64_t utc_ms)
{
	cnt_tz_cursor c;

	cnt_tz_cursor_init(&c, tz);
	return cnt_tz_cursor_bucket_start(&c, utc_ms);
}

int64_t cnt_tz_bucket_end(const cnt_tz *tz, int64_t utc_ms)
{
	cnt_tz_cursor c;

	cnt_tz_cursor_init(&c, tz);
	return cnt_tz_cursor_bucket_end(&c, utc_ms);
}

/*
 * Local wall time l (ms, the fields read as UTC) to an instant.  With
 * f(t) = t + offset(t) the wall clock, fold 0 gives min { t : f(t) >= l }:
 * the instant itself when l occurs once, its first occurrence in a fold,
 * the end of the gap when it does not occur.  Defined this way the answer
 * never decreases as l grows, whatever the zone, so local days, weeks and
 * months always tile the time line.  fold 1 gives the last t with
 * f(t) == l when there is one.  Since the offset lies in [-89999, 93599] s,
 * both lie within [l - 93599 s, l + 90000 s]: the intervals meeting that
 * range are walked in order.
 */
static int64_t local_ms_to_utc(const cnt_tz *tz, int64_t l, int fold)
{
	int64_t lo, hi, first = 0, last = 0, end;
	int32_t off;
	int have_first = 0, have_last = 0;

	if (l < CNT_TZ_MIN_MS + 2 * CNT_MS_PER_DAY)
		l = CNT_TZ_MIN_MS + 2 * CNT_MS_PER_DAY;
	if (l > CNT_TZ_MAX_MS - 2 * CNT_MS_PER_DAY)
		l = CNT_TZ_MAX_MS - 2 * CNT_MS_PER_DAY;
	end = l - (int64_t)TZ_UTOFF_MIN * 1000;
	cnt_tz_interval(tz, l - (int64_t)TZ_UTOFF_MAX * 1000, &lo, &hi, &off);
	for (int k = 0; k < TZ_LOCAL_SCAN_MAX; k++) {
		int64_t o = (int64_t)off * 1000, a = lo < CNT_TZ_MIN_MS ? l - o - 1 : lo;
		int64_t wall_hi = hi >= CNT_TZ_MAX_MS ? INT64_MAX : hi + o;

		/* wall times shown in [a, hi): [a + o, wall_hi) */
		if (!have_first && l < wall_hi) {
			first = a + o >= l ? a : l - o;
			have_first = 1;
			if (!fold)
				break;
		}
		if (a + o <= l && l < wall_hi) {
			last = l - o;
			have_last = 1;
		}
		if (hi > end || hi >= CNT_TZ_MAX_MS)
			break;
		cnt_tz_interval(tz, hi, &lo, &hi, &off);
	}
	if (fold && have_last)
		return last;
	if (have_first)
		return first;
	return l - (int64_t)cnt_tz_offset_s(tz, l) * 1000; /* only past the scan bound */
}

/* A wall time's fields read as UTC, months carried into years. */
static int64_t civil_local_ms(const cnt_civil *c)
{
	int64_t y = c->year;
	unsigned m = c->month;

	if (m == 0) {
		m = 12;
		y--;
	} else if (m > 12) {
		y += (m - 1) / 12;
		m = (m - 1) % 12 + 1;
	}
	/* keep the arithmetic inside int64; the result is clamped anyway */
	if (y > INT64_C(100000000))
		y = INT64_C(100000000);
	if (y < -INT64_C(100000000))
		y = -INT64_C(100000000);
	return cnt_days_from_civil(y, m, 1) * CNT_MS_PER_DAY +
	       ((int64_t)c->day - 1) * CNT_MS_PER_DAY + (int64_t)c->hour * CNT_MS_PER_HOUR +
	       (int64_t)c->minute * CNT_MS_PER_MIN + (int64_t)c->second * CNT_MS_PER_SEC +
	       (int64_t)c->msec;
}

int64_t cnt_tz_local_to_utc(const cnt_tz *tz, const cnt_civil *local, int fold)
{
	return local_ms_to_utc(tz, civil_local_ms(local), fold);
}

/* ---- windows ------------------------------------------------------------ */

/* The instant local day `day` (days since 1970-01-01, local) begins. */
static int64_t day_start(const cnt_tz *tz, int64_t day)
{
	return local_ms_to_utc(tz, day * CNT_MS_PER_DAY, 0);
}

/* Periods are numbered by k; first_day(k) is the local day period k starts
 * on.  kind: 'd' day, 'w' week (param = week start 0..6), 'm' month. */
static int64_t period_first_day(int kind, int param, int64_t k)
{
	switch (kind) {
	case 'w':
		return k * 7 - 3 + param; /* day 0 was a Thursday (3 from Monday) */
	case 'm':
		return cnt_days_from_civil(floor_div(k, 12), (unsigned)floor_mod(k, 12) + 1, 1);
	default:
		return k;
	}
}

static int64_t period_of_day(int kind, int param, int64_t day)
{
	int64_t y;
	unsigned m, d;

	switch (kind) {
	case 'w':
		return floor_div(day + 3 - param, 7);
	case 'm':
		cnt_civil_from_days(day, &y, &m, &d);
		return y * 12 + (int64_t)m - 1;
	default:
		return day;
	}
}

/*
 * The period containing t: guessed from t's wall-clock date, then moved
 * until its boundaries enclose t (they differ only in a fold across
 * midnight, where the repeated end of the old day belongs to the new one).
 * *k_out receives the period number.
 */
static cnt_tz_window period(const cnt_tz *tz, int64_t utc_ms, int kind, int param,
			    int64_t *k_out)
{
	int64_t t = clamp_ms(utc_ms), l, k, s, e;
	cnt_tz_window w;

	l = t + (int64_t)cnt_tz_offset_s(tz, t) * 1000;
	k = period_of_day(kind, param, floor_div(l, CNT_MS_PER_DAY));
	s = day_start(tz, period_first_day(kind, param, k));
	e = day_start(tz, period_first_day(kind, param, k + 1));
	for (int i = 0; i < 8 && (t < s || t >= e); i++) {
		if (t < s) {
			k--;
			e = s;
			s = day_start(tz, period_first_day(kind, param, k));
		} else {
			k++;
			s = e;
			e = day_start(tz, period_first_day(kind, param, k + 1));
		}
	}
	if (t < s || t >= e) { /* only when local_ms_to_utc hit its scan bound */
		s = cnt_tz_bucket_start(tz, t);
		e = cnt_tz_bucket_end(tz, t);
	}
	w.start_ms = s;
	w.end_ms = e;
	if (k_out)
		*k_out = k;
	return w;
}

int64_t cnt_tz_local_day(const cnt_tz *tz, int64_t utc_ms)
{
	int64_t k;

	period(tz, utc_ms, 'd', 0, &k);
	return k;
}

cnt_tz_window cnt_tz_day(const cnt_tz *tz, int64_t utc_ms)
{
	return period(tz, utc_ms, 'd', 0, NULL);
}

cnt_tz_window cnt_tz_week(const cnt_tz *tz, int64_t utc_ms, int week_start)
{
	return period(tz, utc_ms, 'w', (int)floor_mod(week_start, 7), NULL);
}

cnt_tz_window cnt_tz_month(const cnt_tz *tz, int64_t utc_ms)
{
	return period(tz, utc_ms, 'm', 0, NULL);
}

cnt_tz_window cnt_tz_last_days(const cnt_tz *tz, int64_t utc_ms, unsigned n_days)
{
	int64_t k;
	cnt_tz_window w = period(tz, utc_ms, 'd', 0, &k);

	if (n_days == 0)
		w.start_ms = w.end_ms;
	else if (n_days > 1)
		w.start_ms = day_start(tz, k - (int64_t)n_days + 1);
	return w;
}

cnt_tz_window cnt_tz_rolling(const cnt_tz *tz, int64_t utc_ms, int64_t dur_ms)
{
	cnt_tz_window w;
	int64_t t = clamp_ms(utc_ms);

	w.end_ms = cnt_tz_bucket_end(tz, t - 1);
	if (dur_ms <= 0)
		w.start_ms = w.end_ms;
	else
		w.start_ms = cnt_tz_bucket_start(tz, w.end_ms - (dur_ms < CNT_TZ_MAX_MS ?
							    dur_ms : CNT_TZ_MAX_MS));
	return w;
}

/* The first bucket boundary at or after t. */
static int64_t ceil_bucket(const cnt_tz *tz, int64_t t)
{
	return cnt_tz_bucket_start(tz, t) == t ? t : cnt_tz_bucket_end(tz, t);
}

int cnt_tz_range(const cnt_tz *tz, const cnt_civil *from, const cnt_civil *to,
		 cnt_tz_window *out, cnt_err *err)
{
	int64_t lf = civil_local_ms(from), lt = civil_local_ms(to);

	if (lt < lf)
		return cnt_err_set(err, "timezone '%s': range ends before it starts", tz->name);
	out->start_ms = ceil_bucket(tz, local_ms_to_utc(tz, lf, 0));
	out->end_ms = ceil_bucket(tz, local_ms_to_utc(tz, lt, 0));
	if (out->end_ms < out->start_ms)
		out->end_ms = out->start_ms;
	return 0;
}

int cnt_tz_parse_weekday(const char *s)
{
	static const char *const names[] = {"monday", "tuesday", "wednesday", "thursday",
					    "friday", "saturday", "sunday"};
	size_t n = strlen(s);

	for (int i = 0; i < 7; i++) {
		size_t full = strlen(names[i]);

		if ((n == full || n == 3) && strncasecmp(s, names[i], n) == 0)
			return i;
	}
	return -1;
}

/* ---- cache -------------------------------------------------------------- */

struct cnt_tz_cache {
	size_t cap, used; /* open addressing, power-of-two capacity */
	cnt_tz **slot;
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = UINT64_C(14695981039346656037);

	while (*s)
		h = (h ^ (uint8_t)*s++) * UINT64_C(1099511628211);
	return h;
}

cnt_tz_cache *cnt_tz_cache_new(void)
{
	cnt_tz_cache *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->cap = 16;
	c->slot = calloc(c->cap, sizeof(*c->slot));
	if (c->slot == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

static void cache_put(cnt_tz **slot, size_t cap, cnt_tz *tz)
{
	size_t i = (size_t)name_hash(tz->name) & (cap - 1);

	while (slot[i] != NULL)
		i = (i + 1) & (cap - 1);
	slot[i] = tz;
}

const cnt_tz *cnt_tz_cache_get(cnt_tz_cache *c, const char *name, cnt_err *err)
{
	size_t i = (size_t)name_hash(name) & (c->cap - 1);
	cnt_tz *tz;

	for (; c->slot[i] != NULL; i = (i + 1) & (c->cap - 1))
		if (strcmp(c->slot[i]->name, name) == 0)
			return c->slot[i];
	if ((c->used + 1) * 2 > c->cap) {
		size_t cap = c->cap * 2;
		cnt_tz **s = calloc(cap, sizeof(*s));

		if (s == NULL)
			return cnt_err_set(err, "timezone cache: out of memory"), NULL;
		for (size_t j = 0; j < c->cap; j++)
			if (c->slot[j] != NULL)
				cache_put(s, cap, c->slot[j]);
		free(c->slot);
		c->slot = s;
		c->cap = cap;
	}
	tz = cnt_tz_load(name, err);
	if (tz == NULL)
		return NULL;
	cache_put(c->slot, c->cap, tz);
	c->used++;
	return tz;
}

void cnt_tz_cache_free(cnt_tz_cache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->cap; i++)
		cnt_tz_free(c->slot[i]);
	free(c->slot);
	free(c);
}
