/*
 * test_timefmt.c - RFC 3339 parsing and formatting, durations, civil dates.
 *
 * Expected instants come from Python's datetime (computed once, noted
 * beside each vector) and, for bulk checks, from the C library's timegm(3)
 * and gmtime_r(3), which share no code with lib/time/timefmt.c.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "time/timefmt.h"
#include "unit.h"

static int parse(const char *s, int64_t *ms)
{
	return cnt_time_parse_rfc3339(s, strlen(s), ms);
}

/* Deterministic 64-bit generator for sampling (splitmix64). */
static uint64_t next_u64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static void test_rfc3339_valid(void)
{
	/* Expected values from Python: (datetime.fromisoformat(s) - epoch) // ms. */
	static const struct { const char *s; int64_t ms; } v[] = {
		{"1970-01-01T00:00:00Z", 0},
		{"2026-11-30T05:26:10.123+05:30", INT64_C(1795996570123)},
		{"2000-02-29T12:00:00Z", INT64_C(951825600000)},
		{"2000-02-29t12:00:00z", INT64_C(951825600000)},
		{"2024-02-29T23:59:59.999-09:30", INT64_C(1709285399999)},
		{"2026-12-31T23:59:59+05:45", INT64_C(1798740899000)},
		{"1969-12-31T23:59:59.999Z", -1},
		{"0001-01-01T00:00:00Z", INT64_C(-62135596800000)},
		/* year 0 is a leap year: 366 days before 0001-01-01 */
		{"0000-01-01T00:00:00Z", INT64_C(-62135596800000) - 366 * INT64_C(86400000)},
		{"1900-03-01T00:00:00Z", INT64_C(-2203891200000)},
		{"9999-12-31T23:59:59.999Z", INT64_C(253402300799999)},
		{"1970-01-01T00:00:00+14:00", INT64_C(-50400000)},
		{"2026-01-31T00:00:00-00:01", INT64_C(1769817660000)},
		{"1066-10-14T09:00:00Z", INT64_C(-28502722800000)},
		{"2026-01-31T00:00:00-00:00", INT64_C(1769817600000)},
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int64_t ms = 12345;
		int rc = parse(v[i].s, &ms);
		if (rc != 0 || ms != v[i].ms)
			fprintf(stderr, "vector %s\n", v[i].s);
		CHECK_EQ_INT(rc, 0);
		CHECK_EQ_INT(ms, v[i].ms);
	}
}

static void test_rfc3339_fraction(void)
{
	static const char *const s[] = {
		"2026-03-01T10:00:00Z", "2026-03-01T10:00:00.1Z", "2026-03-01T10:00:00.12Z",
		"2026-03-01T10:00:00.123Z", "2026-03-01T10:00:00.1234Z", "2026-03-01T10:00:00.12345Z",
		"2026-03-01T10:00:00.123456Z", "2026-03-01T10:00:00.1234567Z",
		"2026-03-01T10:00:00.12345678Z", "2026-03-01T10:00:00.123456789Z",
	};
	static const int frac[] = {0, 100, 120, 123, 123, 123, 123, 123, 123, 123};
	int64_t base, ms;

	CHECK_EQ_INT(parse(s[0], &base), 0);
	for (size_t i = 0; i < 10; i++) {
		CHECK_EQ_INT(parse(s[i], &ms), 0);
		CHECK_EQ_INT(ms - base, frac[i]);
	}
	/* truncation is toward minus infinity, also before 1970 */
	CHECK_EQ_INT(parse("1969-12-31T23:59:59.9999999Z", &ms), 0);
	CHECK_EQ_INT(ms, -1);
	CHECK_EQ_INT(parse("1970-01-01T00:00:00.0009Z", &ms), 0);
	CHECK_EQ_INT(ms, 0);
	CHECK_EQ_INT(parse("1970-01-01T00:00:00.5+00:01", &ms), 0);
	CHECK_EQ_INT(ms, -59500);
}

static void test_rfc3339_leap_second(void)
{
	int64_t a, b;

	CHECK_EQ_INT(parse("2016-12-31T23:59:60Z", &a), 0);
	CHECK_EQ_INT(parse("2016-12-31T23:59:59.999Z", &b), 0);
	CHECK_EQ_INT(a, b);
	CHECK_EQ_INT(parse("2016-12-31T23:59:60.5Z", &a), 0);
	CHECK_EQ_INT(a, b);
	CHECK(parse("2016-12-31T23:59:61Z", &a) != 0);
}

static void test_rfc3339_invalid(void)
{
	static const char *const bad[] = {
		"", "2026", "2026-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2100-02-29T00:00:00Z",
		"2026-04-31T00:00:00Z", "2026-06-31T00:00:00Z", "2026-01-32T00:00:00Z",
		"2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z",
		"2026-01-01T24:00:00Z", "2026-01-01T12:60:00Z", "2026-01-01T12:00:61Z",
		"2026-01-01T00:00:00", "2026-01-01T00:00:00.123", "2026-1-1T00:00:00Z",
		"2026-01-01 00:00:00Z", "2026-01-01T0:00:00Z", "2026-01-01T00:00Z",
		"2026-01-01T00:00:00.Z", "2026-01-01T00:00:00+05", "2026-01-01T00:00:00+05:3",
		"2026-01-01T00:00:00+0530", "2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00+05:60",
		"2026-01-01T00:00:00ZZ", "2026-01-01T00:00:00Z ", " 2026-01-01T00:00:00Z",
		"+2026-01-01T00:00:00Z", "20260-01-01T00:00:00Z", "2026-01-01T00:00:00UTC",
		"2026-01-01", "2026-01-01T", "2026-0a-01T00:00:00Z", "2026-01-01T00:00:00,5Z",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t ms = 777;
		int rc = parse(bad[i], &ms);
		if (rc == 0)
			fprintf(stderr, "accepted: '%s'\n", bad[i]);
		CHECK(rc != 0);
		CHECK_EQ_INT(ms, 777);
	}
	/* the length is honoured: no reading past n */
	{
		int64_t ms;
		const char *s = "2026-01-01T00:00:00Zgarbage";
		CHECK_EQ_INT(cnt_time_parse_rfc3339(s, 20, &ms), 0);
		CHECK(cnt_time_parse_rfc3339(s, 19, &ms) != 0);
	}
}

static void test_month_ends(void)
{
	/* Every month end from 1899 to 2101 parses, and the next day is a
	 * different month: compare with timegm(3). */
	for (int y = 1899; y <= 2101; y++) {
		for (unsigned m = 1; m <= 12; m++) {
			unsigned dim = cnt_days_in_month(y, m);
			char s[40];
			int64_t ms;
			struct tm tm;

			snprintf(s, sizeof(s), "%04d-%02u-%02uT12:34:56+05:45", y, m, dim);
			CHECK_EQ_INT(parse(s, &ms), 0);
			memset(&tm, 0, sizeof(tm));
			tm.tm_year = y - 1900;
			tm.tm_mon = (int)m - 1;
			tm.tm_mday = (int)dim;
			tm.tm_hour = 12;
			tm.tm_min = 34;
			tm.tm_sec = 56;
			CHECK_EQ_INT(ms, ((int64_t)timegm(&tm) - 5 * 3600 - 45 * 60) * 1000);
			snprintf(s, sizeof(s), "%04d-%02u-%02uT12:34:56Z", y, m, dim + 1);
			CHECK(parse(s, &ms) != 0);
		}
	}
	CHECK_EQ_INT(cnt_days_in_month(2000, 2), 29);
	CHECK_EQ_INT(cnt_days_in_month(1900, 2), 28);
	CHECK_EQ_INT(cnt_days_in_month(2024, 2), 29);
	CHECK_EQ_INT(cnt_days_in_month(2026, 2), 28);
}

static void test_civil_against_libc(void)
{
	/* Every day from 1600 to 2400 against timegm(3) and gmtime_r(3). */
	int64_t expect_days = cnt_days_from_civil(1600, 1, 1);
	for (int64_t day = expect_days; day < cnt_days_from_civil(2400, 1, 1); day++) {
		int64_t y;
		unsigned m, d;
		struct tm tm;
		time_t t = (time_t)(day * 86400);

		cnt_civil_from_days(day, &y, &m, &d);
		CHECK(gmtime_r(&t, &tm) != NULL);
		if (y != tm.tm_year + 1900 || m != (unsigned)tm.tm_mon + 1 || d != (unsigned)tm.tm_mday) {
			CHECK_EQ_INT(y, tm.tm_year + 1900);
			CHECK_EQ_INT(m, tm.tm_mon + 1);
			CHECK_EQ_INT(d, tm.tm_mday);
			break;
		}
		if (cnt_days_from_civil(y, m, d) != day) {
			CHECK_EQ_INT(cnt_days_from_civil(y, m, d), day);
			break;
		}
	}
}

static void test_format(void)
{
	char buf[32];

	CHECK_EQ_INT(cnt_time_format_rfc3339(0, buf), 24);
	CHECK_EQ_STR(buf, "1970-01-01T00:00:00.000Z");
	cnt_time_format_rfc3339(-1, buf);
	CHECK_EQ_STR(buf, "1969-12-31T23:59:59.999Z");
	cnt_time_format_rfc3339(INT64_C(1795996570123), buf);
	CHECK_EQ_STR(buf, "2026-11-29T23:56:10.123Z");
	cnt_time_format_rfc3339(INT64_C(951825600000), buf);
	CHECK_EQ_STR(buf, "2000-02-29T12:00:00.000Z");
	cnt_time_format_rfc3339(INT64_C(-62135596800000) - 366 * INT64_C(86400000), buf);
	CHECK_EQ_STR(buf, "0000-01-01T00:00:00.000Z");
	cnt_time_format_rfc3339(INT64_C(253402300799999), buf);
	CHECK_EQ_STR(buf, "9999-12-31T23:59:59.999Z");
	/* extremes do not overflow the buffer */
	CHECK(cnt_time_format_rfc3339(INT64_MIN, buf) < 32);
	CHECK(buf[0] == '-');
	CHECK(cnt_time_format_rfc3339(INT64_MAX, buf) < 32);
}

static void test_round_trip(void)
{
	/* Random instants over years 0000..9999: format, parse back, and check
	 * the text against gmtime_r(3) + strftime(3). */
	int64_t lo = INT64_C(-62167219200000), hi = INT64_C(253402300799999);
	uint64_t st = 42;

	for (int i = 0; i < 200000; i++) {
		int64_t ms = lo + (int64_t)(next_u64(&st) % (uint64_t)(hi - lo + 1)), back = 0;
		char buf[32], want[64];
		size_t n = cnt_time_format_rfc3339(ms, buf);

		if (parse(buf, &back) != 0 || back != ms) {
			CHECK_EQ_INT(back, ms);
			break;
		}
		CHECK_EQ_INT(n, 24);
		if (i % 16 == 0 && ms >= INT64_C(-62135596800000)) {	/* glibc prints year 0 oddly */
			struct tm tm;
			time_t t = (time_t)(ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000));
			int64_t frac = ms - (int64_t)t * 1000;
			size_t k;

			CHECK(gmtime_r(&t, &tm) != NULL);
			k = strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%S", &tm);
			snprintf(want + k, sizeof(want) - k, ".%03dZ", (int)frac);
			if (tm.tm_year + 1900 >= 1000 && strcmp(buf, want) != 0) {
				CHECK_EQ_STR(buf, want);
				break;
			}
		}
	}
}

static void test_offsets_equal(void)
{
	int64_t a, b, c, d;

	CHECK_EQ_INT(parse("2026-11-30T05:26:10.123+05:30", &a), 0);
	CHECK_EQ_INT(parse("2026-11-29T23:56:10.123Z", &b), 0);
	CHECK_EQ_INT(parse("2026-11-29T14:26:10.123-09:30", &c), 0);
	CHECK_EQ_INT(parse("2026-11-30T05:41:10.123+05:45", &d), 0);
	CHECK_EQ_INT(a, b);
	CHECK_EQ_INT(a, c);
	CHECK_EQ_INT(a, d);
}

static void test_duration(void)
{
	static const struct { const char *s; int64_t ms; } ok[] = {
		{"0", 0}, {"250ms", 250}, {"60s", 60000}, {"90m", 5400000}, {"7d", 604800000},
		{"1h30m", 5400000}, {"2w", 1209600000}, {"1d12h", 129600000},
		{"1h1m1s1ms", 3661001}, {"0s", 0},
	};
	static const char *const bad[] = {
		"", "60", "-5s", "5", "1x", "s", "1h1h", "30m1h", "1.5h", "1 h", "h1",
		"99999999999999999999s", "9223372036854775807w", "1ms1s",
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int64_t ms = -1;
		CHECK_EQ_INT(cnt_time_parse_duration(ok[i].s, &ms), 0);
		CHECK_EQ_INT(ms, ok[i].ms);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t ms;
		if (cnt_time_parse_duration(bad[i], &ms) == 0)
			fprintf(stderr, "accepted duration '%s'\n", bad[i]);
		CHECK(cnt_time_parse_duration(bad[i], &ms) != 0);
	}
}

static void test_parse_arg(void)
{
	int64_t ms;

	CHECK_EQ_INT(cnt_time_parse_arg("1795996570123", &ms), 0);
	CHECK_EQ_INT(ms, INT64_C(1795996570123));
	CHECK_EQ_INT(cnt_time_parse_arg("-1", &ms), 0);
	CHECK_EQ_INT(ms, -1);
	CHECK_EQ_INT(cnt_time_parse_arg("9223372036854775807", &ms), 0);
	CHECK_EQ_INT(ms, INT64_MAX);
	CHECK_EQ_INT(cnt_time_parse_arg("-9223372036854775808", &ms), 0);
	CHECK(ms == INT64_MIN);
	CHECK(cnt_time_parse_arg("9223372036854775808", &ms) != 0);
	CHECK(cnt_time_parse_arg("-9223372036854775809", &ms) != 0);
	CHECK_EQ_INT(cnt_time_parse_arg("2026-11-30T05:26:10.123+05:30", &ms), 0);
	CHECK_EQ_INT(ms, INT64_C(1795996570123));
	CHECK(cnt_time_parse_arg("", &ms) != 0);
	CHECK(cnt_time_parse_arg("-", &ms) != 0);
	CHECK(cnt_time_parse_arg("12abc", &ms) != 0);
	CHECK(cnt_time_parse_arg("2026-11-30", &ms) != 0);
}

static void test_parse_local(void)
{
	cnt_civil c;

	CHECK_EQ_INT(cnt_time_parse_local("2026-12-01", 10, &c), 0);
	CHECK(c.year == 2026 && c.month == 12 && c.day == 1 && c.hour == 0 && c.minute == 0);
	CHECK_EQ_INT(cnt_time_parse_local("2026-12-01T18:30", 16, &c), 0);
	CHECK(c.hour == 18 && c.minute == 30 && c.second == 0);
	CHECK_EQ_INT(cnt_time_parse_local("2024-02-29 23:59:58.25", 22, &c), 0);
	CHECK(c.day == 29 && c.second == 58 && c.msec == 250);
	CHECK(cnt_time_parse_local("2026-02-29", 10, &c) != 0);
	CHECK(cnt_time_parse_local("2026-12-01T18:30Z", 17, &c) != 0);
	CHECK(cnt_time_parse_local("2026-12-01T", 11, &c) != 0);
	/* local fields read as UTC agree with the RFC 3339 parser */
	{
		int64_t ms;
		CHECK_EQ_INT(cnt_time_parse_local("2026-11-30T05:26:10.123", 23, &c), 0);
		CHECK_EQ_INT(parse("2026-11-30T05:26:10.123Z", &ms), 0);
		CHECK_EQ_INT(cnt_civil_to_ms(&c), ms);
	}
}

static void test_civil_from_ms(void)
{
	cnt_civil c;

	cnt_civil_from_ms(-1, &c);
	CHECK(c.year == 1969 && c.month == 12 && c.day == 31 && c.hour == 23 &&
		c.minute == 59 && c.second == 59 && c.msec == 999);
	CHECK_EQ_INT(cnt_civil_to_ms(&c), -1);
}

int main(void)
{
	RUN(test_rfc3339_valid);
	RUN(test_rfc3339_fraction);
	RUN(test_rfc3339_leap_second);
	RUN(test_rfc3339_invalid);
	RUN(test_month_ends);
	RUN(test_civil_against_libc);
	RUN(test_format);
	RUN(test_round_trip);
	RUN(test_offsets_equal);
	RUN(test_duration);
	RUN(test_parse_arg);
	RUN(test_parse_local);
	RUN(test_civil_from_ms);
	return unit_report("test_timefmt");
}
