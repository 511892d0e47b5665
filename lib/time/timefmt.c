/*
 * timefmt.c - RFC 3339 timestamps, durations and civil dates (see timefmt.h).
 *
 * The calendar arithmetic is Howard Hinnant's ("chrono-Compatible Low-Level
 * Date Algorithms", http://howardhinnant.github.io/date_algorithms.html):
 * exact on the proleptic Gregorian calendar for any year, with no tables and
 * no dependence on the C library's time zone state (timegm(3) is not C11 and
 * gmtime_r(3) is limited by time_t on some platforms).
 */
#include "time/timefmt.h"

#include <stdio.h>
#include <string.h>

int64_t cnt_days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (int64_t)(m > 2 ? m - 3 : m + 9) + 2) / 5 + (int64_t)d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

void cnt_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t z = days + 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	unsigned mm = (unsigned)(mp < 10 ? mp + 3 : mp - 9);

	*d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
	*m = mm;
	*y = yoe + era * 400 + (mm <= 2);
}

static int is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

unsigned cnt_days_in_month(int64_t y, unsigned m)
{
	static const unsigned char dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	if (m < 1 || m > 12)
		return 0;
	return m == 2 && is_leap(y) ? 29 : dim[m - 1];
}

int64_t cnt_civil_to_ms(const cnt_civil *c)
{
	return cnt_days_from_civil(c->year, c->month, c->day) * CNT_MS_PER_DAY +
		(int64_t)c->hour * CNT_MS_PER_HOUR + (int64_t)c->minute * CNT_MS_PER_MIN +
		(int64_t)c->second * CNT_MS_PER_SEC + (int64_t)c->msec;
}

void cnt_civil_from_ms(int64_t ms, cnt_civil *out)
{
	int64_t days = ms / CNT_MS_PER_DAY, rem = ms % CNT_MS_PER_DAY;

	if (rem < 0) {
		rem += CNT_MS_PER_DAY;
		days--;
	}
	cnt_civil_from_days(days, &out->year, &out->month, &out->day);
	out->hour = (unsigned)(rem / CNT_MS_PER_HOUR);
	out->minute = (unsigned)(rem / CNT_MS_PER_MIN % 60);
	out->second = (unsigned)(rem / CNT_MS_PER_SEC % 60);
	out->msec = (unsigned)(rem % 1000);
}

/* Reads exactly k decimal digits at s[*i]; -1 if any is not a digit. */
static int digits(const char *s, size_t n, size_t *i, unsigned k, unsigned *v)
{
	unsigned r = 0;

	if (n - *i < k)
		return -1;
	for (unsigned j = 0; j < k; j++) {
		unsigned char c = (unsigned char)s[*i + j];
		if (c < '0' || c > '9')
			return -1;
		r = r * 10 + (c - '0');
	}
	*i += k;
	*v = r;
	return 0;
}

static int expect(const char *s, size_t n, size_t *i, char c)
{
	if (*i >= n || s[*i] != c)
		return -1;
	(*i)++;
	return 0;
}

static int parse_date(const char *s, size_t n, size_t *i, cnt_civil *c)
{
	unsigned y, m, d;

	if (digits(s, n, i, 4, &y) || expect(s, n, i, '-') || digits(s, n, i, 2, &m) ||
	    expect(s, n, i, '-') || digits(s, n, i, 2, &d))
		return -1;
	if (m < 1 || m > 12 || d < 1 || d > cnt_days_in_month(y, m))
		return -1;
	c->year = y;
	c->month = m;
	c->day = d;
	return 0;
}

/* HH:MM:SS[.frac]; with allow_short, also HH:MM.  Second 60 becomes 59.999. */
static int parse_time(const char *s, size_t n, size_t *i, cnt_civil *c, int allow_short)
{
	unsigned h, mi, se = 0, ms = 0;

	if (digits(s, n, i, 2, &h) || expect(s, n, i, ':') || digits(s, n, i, 2, &mi))
		return -1;
	if (h > 23 || mi > 59)
		return -1;
	if (!(allow_short && (*i == n || s[*i] != ':'))) {
		if (expect(s, n, i, ':') || digits(s, n, i, 2, &se) || se > 60)
			return -1;
		if (*i < n && s[*i] == '.') {
			unsigned nd = 0;
			(*i)++;
			while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
				if (nd < 3)
					ms = ms * 10 + (unsigned)(s[*i] - '0');
				nd++;
				(*i)++;
			}
			if (nd == 0)
				return -1;
			for (; nd < 3; nd++)
				ms *= 10;
		}
		if (se == 60) {
			se = 59;
			ms = 999;
		}
	}
	c->hour = h;
	c->minute = mi;
	c->second = se;
	c->msec = ms;
	return 0;
}

int cnt_time_parse_rfc3339(const char *s, size_t n, int64_t *ms_out)
{
	cnt_civil c;
	size_t i = 0;
	int64_t off = 0;

	if (parse_date(s, n, &i, &c) != 0 || i >= n || (s[i] != 'T' && s[i] != 't'))
		return -1;
	i++;
	if (parse_time(s, n, &i, &c, 0) != 0 || i >= n)
		return -1;
	if (s[i] == 'Z' || s[i] == 'z') {
		i++;
	} else if (s[i] == '+' || s[i] == '-') {
		unsigned oh, om;
		int neg = s[i] == '-';
		i++;
		if (digits(s, n, &i, 2, &oh) || expect(s, n, &i, ':') || digits(s, n, &i, 2, &om) ||
		    oh > 23 || om > 59)
			return -1;
		off = (int64_t)oh * CNT_MS_PER_HOUR + (int64_t)om * CNT_MS_PER_MIN;
		if (neg)
			off = -off;
	} else {
		return -1;
	}
	if (i != n)
		return -1;
	*ms_out = cnt_civil_to_ms(&c) - off;
	return 0;
}

int cnt_time_parse_local(const char *s, size_t n, cnt_civil *out)
{
	cnt_civil c;
	size_t i = 0;

	memset(&c, 0, sizeof(c));
	if (parse_date(s, n, &i, &c) != 0)
		return -1;
	if (i < n) {
		if (s[i] != 'T' && s[i] != 't' && s[i] != ' ')
			return -1;
		i++;
		if (parse_time(s, n, &i, &c, 1) != 0 || i != n)
			return -1;
	}
	*out = c;
	return 0;
}

size_t cnt_time_format_rfc3339(int64_t ms, char buf[32])
{
	cnt_civil c;
	int r;

	cnt_civil_from_ms(ms, &c);
	r = snprintf(buf, 32, "%04lld-%02u-%02uT%02u:%02u:%02u.%03uZ", (long long)c.year,
		c.month, c.day, c.hour, c.minute, c.second, c.msec);
	return r < 0 ? 0 : (size_t)r;
}

int cnt_time_parse_duration(const char *s, int64_t *ms_out)
{
	/* Largest unit first; a term's unit must be smaller than the last one. */
	static const struct { const char *name; int64_t ms; } units[] = {
		{"w", 7 * CNT_MS_PER_DAY}, {"d", CNT_MS_PER_DAY}, {"h", CNT_MS_PER_HOUR},
		{"ms", 1}, {"m", CNT_MS_PER_MIN}, {"s", CNT_MS_PER_SEC},
	};
	int64_t total = 0, last = INT64_MAX;

	if (s == NULL || *s == '\0')
		return -1;
	if (strcmp(s, "0") == 0) {
		*ms_out = 0;
		return 0;
	}
	while (*s != '\0') {
		int64_t v = 0, unit = 0;
		size_t nd = 0;

		while (*s >= '0' && *s <= '9') {
			if (v > (INT64_MAX - (*s - '0')) / 10)
				return -1;
			v = v * 10 + (*s - '0');
			s++;
			nd++;
		}
		if (nd == 0)
			return -1;
		for (size_t k = 0; k < sizeof(units) / sizeof(units[0]); k++) {
			size_t ul = strlen(units[k].name);
			if (strncmp(s, units[k].name, ul) == 0) {
				unit = units[k].ms;
				s += ul;
				break;
			}
		}
		if (unit == 0 || unit >= last)
			return -1;
		last = unit;
		if (v > INT64_MAX / unit || total > INT64_MAX - v * unit)
			return -1;
		total += v * unit;
	}
	*ms_out = total;
	return 0;
}

int cnt_time_parse_arg(const char *s, int64_t *ms_out)
{
	const char *p = s;
	uint64_t mag = 0;
	int neg = 0;

	if (s == NULL || *s == '\0')
		return -1;
	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (*p >= '0' && *p <= '9') {
		const char *q = p;
		while (*q >= '0' && *q <= '9')
			q++;
		if (*q == '\0') {
			for (; p < q; p++) {
				if (mag > (UINT64_C(9223372036854775808) - (uint64_t)(*p - '0')) / 10)
					return -1;
				mag = mag * 10 + (uint64_t)(*p - '0');
			}
			if (!neg && mag > (uint64_t)INT64_MAX)
				return -1;
			*ms_out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
			return 0;
		}
	}
	return cnt_time_parse_rfc3339(s, strlen(s), ms_out);
}
