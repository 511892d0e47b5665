/*
 * test_tz.c - timezones, buckets and windows against an independent oracle.
 *
 * The oracle is glibc: localtime_r() after setenv("TZ", ...) + tzset(),
 * whose TZif and POSIX-rule code shares nothing with lib/time/tz.c (it reads the
 * same zoneinfo files, which is the point: the same data, another reader).
 * Offsets are compared every hour from 1970 to 2040 and at one second
 * either side of every transition, for zones chosen for their oddities;
 * POSIX TZ strings are compared over 1970..2200 (glibc does not apply them
 * to earlier years).  The bucket partition is
 * proved by walking every bucket of 2024..2027 and checking each against
 * glibc's wall clock; window boundaries are checked the same way.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "time/tz.h"
#include "unit.h"

#if defined(__SANITIZE_ADDRESS__)
#define LIGHT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LIGHT 1
#endif
#endif
#ifndef LIGHT
#define LIGHT 0
#endif

#define H CNT_MS_PER_HOUR
#define S1970 INT64_C(0)
#define S2024 INT64_C(1704067200)
#define S2028 INT64_C(1830297600)
#define S2040 INT64_C(2208988800)

static const char *const zones[] = {
	"UTC", "Europe/Berlin", "America/New_York", "America/Sao_Paulo", "Asia/Kolkata",
	"Asia/Kathmandu", "Australia/Lord_Howe", "Australia/Eucla", "Pacific/Chatham",
	"America/St_Johns", "Africa/Casablanca", "Europe/Dublin", "Pacific/Apia",
};
#define NZONES (sizeof(zones) / sizeof(zones[0]))

/* POSIX strings: plain, negative DST, southern, :45, permanent DST, RFC 8536
 * negative and > 24 h rule times, Jn and n dates. */
static const char *const posix_strings[] = {
	"CET-1CEST,M3.5.0,M10.5.0/3",
	"EST5EDT,M3.2.0,M11.1.0",
	"IST-1GMT0,M10.5.0,M3.5.0/1",
	"<+1030>-10:30<+11>-11,M10.1.0,M4.1.0",
	"<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45",
	"NST3:30NDT,M3.2.0,M11.1.0",
	"<-03>3<-02>,M3.5.0/-2,M10.5.0/-1",
	"<+0545>-5:45",
	"AAA3BBB,J60/1,300/26",
	"XXX-10YYY-11,M10.5.0/0,M3.5.0/167",
	"<-01>1<+00>0,M3.5.0/0,M10.5.0/1",
	"CST5CDT,M3.2.0/0,M11.1.0/1",
};
#define NPOSIX (sizeof(posix_strings) / sizeof(posix_strings[0]))

/* ---- the oracle ---------------------------------------------------------- */

static void oracle_zone(const char *tzval)
{
	setenv("TZ", tzval, 1);
	tzset();
}

static long g_off(int64_t s)
{
	time_t t = (time_t)s;
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL)
		return -999999;
	return tm.tm_gmtoff;
}

static int64_t floor_s(int64_t ms)
{
	return ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
}

/* glibc's local wall clock of instant ms, as days since 1970 and ms of day */
static void g_wall(int64_t ms, int64_t *day, int64_t *msofday)
{
	int64_t s = floor_s(ms);
	int64_t l = s + g_off(s);
	int64_t d = l >= 0 ? l / 86400 : -((-l + 86399) / 86400);

	*day = d;
	*msofday = (l - d * 86400) * 1000 + (ms - s * 1000);
}

static int64_t g_day(int64_t ms)
{
	int64_t d, x;

	g_wall(ms, &d, &x);
	return d;
}

static cnt_tz *load(const char *name)
{
	cnt_err e = {"", CNT_ERR_DATA};
	cnt_tz *tz = cnt_tz_load(name, &e);

	if (tz == NULL)
		fprintf(stderr, "load %s: %s\n", name, e.msg);
	return tz;
}

static int64_t utc(const char *rfc3339)
{
	int64_t ms = 0;

	if (cnt_time_parse_rfc3339(rfc3339, strlen(rfc3339), &ms) != 0)
		fprintf(stderr, "bad test time %s\n", rfc3339);
	return ms;
}

static cnt_civil civ(int64_t y, unsigned mo, unsigned d, unsigned h, unsigned mi)
{
	cnt_civil c;

	memset(&c, 0, sizeof(c));
	c.year = y;
	c.month = mo;
	c.day = d;
	c.hour = h;
	c.minute = mi;
	return c;
}

/* Compares offsets every step seconds in [from, to) and at every transition
 * of ours +-1 s; returns the number of mismatches (the first few printed). */
static int compare_offsets(const cnt_tz *tz, const char *label, int64_t from, int64_t to,
			   int64_t step)
{
	int bad = 0;
	int64_t s, t;

	for (s = from; s < to; s += step) {
		long want = g_off(s);
		int32_t got = cnt_tz_offset_s(tz, s * 1000);

		if (got != want && bad++ < 5)
			fprintf(stderr, "%s: at %lld: offset %ld, glibc %ld\n", label, (long long)s,
				(long)got, want);
	}
	for (t = cnt_tz_next_transition(tz, from * 1000); t < to * 1000;
	     t = cnt_tz_next_transition(tz, t)) {
		int64_t ts = t / 1000;

		if (t % 1000 != 0 && bad++ < 5)
			fprintf(stderr, "%s: transition %lld not on a second\n", label, (long long)t);
		for (int64_t d = -1; d <= 1; d++) {
			long want = g_off(ts + d);
			int32_t got = cnt_tz_offset_s(tz, (ts + d) * 1000);

			if (got != want && bad++ < 5)
				fprintf(stderr, "%s: at transition %lld%+lld s: offset %ld, glibc %ld\n",
					label, (long long)ts, (long long)d, (long)got, want);
		}
		/* and glibc agrees something changes there */
		if (g_off(ts - 1) == g_off(ts) && bad++ < 5)
			fprintf(stderr, "%s: transition %lld: glibc sees no change\n", label,
				(long long)ts);
		/* the cursor answers the same at both sides */
	}
	return bad;
}

static void test_offsets_vs_glibc(void)
{
	for (size_t i = 0; i < NZONES; i++) {
		cnt_tz *tz = load(zones[i]);

		CHECK(tz != NULL);
		if (tz == NULL)
			continue;
		oracle_zone(zones[i]);
		CHECK_EQ_INT(compare_offsets(tz, zones[i], S1970, S2040, LIGHT ? 5 * 3600 : 3600), 0);
		CHECK_EQ_STR(cnt_tz_name(tz), zones[i]);
		cnt_tz_free(tz);
	}
}

static void test_posix_vs_glibc(void)
{
	for (size_t i = 0; i < NPOSIX; i++) {
		cnt_err e = {"", CNT_ERR_DATA};
		cnt_tz *tz = cnt_tz_posix(posix_strings[i], &e);

		if (tz == NULL)
			fprintf(stderr, "%s: %s\n", posix_strings[i], e.msg);
		CHECK(tz != NULL);
		if (tz == NULL)
			continue;
		oracle_zone(posix_strings[i]);
		/* 1970 .. 2200 (glibc applies POSIX rules from 1970 on only),
		 * stepping 3 h 7 min to hit every phase of the day */
		CHECK_EQ_INT(compare_offsets(tz, posix_strings[i], S1970,
					     INT64_C(7258118400), LIGHT ? 40 * 3637 : 11220),
			     0);
		cnt_tz_free(tz);
	}
}

/* The footer alone governs when a file has no transitions, and from the
 * last transition on otherwise; a file built here is checked the same way. */
typedef struct ttype {
	int32_t utoff;
	uint8_t isdst;
} ttype;

static size_t put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return 4;
}

static size_t header(uint8_t *p, int version, uint32_t timecnt, uint32_t typecnt,
		     uint32_t charcnt)
{
	memset(p, 0, 44);
	memcpy(p, "TZif", 4);
	p[4] = version == 1 ? 0 : (uint8_t)('0' + version);
	put32(p + 32, timecnt);
	put32(p + 36, typecnt);
	put32(p + 40, charcnt);
	return 44;
}

/* A TZif file: version 1 (32-bit data only) or 2..4 (empty v1 block, then
 * 64-bit data and the footer). */
static size_t build_tzif(uint8_t *out, int version, const int64_t *at, const uint8_t *idx,
			 size_t nt, const ttype *types, size_t ntypes, const char *footer)
{
	size_t n = 0, i;
	unsigned tsize = version == 1 ? 4 : 8;

	if (version != 1) {
		n += header(out, version, 0, 1, 1);
		memset(out + n, 0, 7); /* one type, one char */
		n += 7;
	}
	n += header(out + n, version, (uint32_t)nt, (uint32_t)ntypes, 4);
	for (i = 0; i < nt; i++) {
		if (tsize == 8) {
			n += put32(out + n, (uint32_t)((uint64_t)at[i] >> 32));
		}
		n += put32(out + n, (uint32_t)at[i]);
	}
	for (i = 0; i < nt; i++)
		out[n++] = idx[i];
	for (i = 0; i < ntypes; i++) {
		n += put32(out + n, (uint32_t)types[i].utoff);
		out[n++] = types[i].isdst;
		out[n++] = 0;
	}
	memcpy(out + n, "ABC", 4);
	n += 4;
	if (version != 1) {
		out[n++] = '\n';
		memcpy(out + n, footer, strlen(footer));
		n += strlen(footer);
		out[n++] = '\n';
	}
	return n;
}

static void test_synthetic_files(void)
{
	uint8_t buf[4096];
	cnt_err e = {"", CNT_ERR_DATA};
	const ttype types[] = {{3600, 0}, {7200, 1}, {3600, 0}};
	/* 2000-01-01, 2000-06-01, 2001-01-01 */
	const int64_t at[] = {946684800, 959817600, 978307200};
	const uint8_t idx[] = {0, 1, 2};
	size_t n;
	cnt_tz *tz;

	/* footer only: the rule for all of time */
	n = build_tzif(buf, 2, NULL, NULL, 0, types, 1, "CET-1CEST,M3.5.0,M10.5.0/3");
	tz = cnt_tz_parse(buf, n, "footer-only", &e);
	CHECK(tz != NULL);
	if (tz) {
		oracle_zone("CET-1CEST,M3.5.0,M10.5.0/3");
		CHECK_EQ_INT(compare_offsets(tz, "footer-only", S1970, S2040,
					     LIGHT ? 86400 : 7 * 3600), 0);
		cnt_tz_free(tz);
	}
	/* transitions then a rule; the type 1 -> 2 change of isdst only is no
	 * boundary (no offset change at 2001-01-01... type 2 has the same
	 * offset as the rule's standard time) */
	n = build_tzif(buf, 3, at, idx, 3, types, 3, "<+03>-3<+04>,M3.5.0,M10.5.0/3");
	tz = cnt_tz_parse(buf, n, "mixed", &e);
	CHECK(tz != NULL);
	if (tz) {
		CHECK_EQ_INT(cnt_tz_offset_s(tz, (at[0] - 1) * 1000), 3600); /* type 0 before */
		CHECK_EQ_INT(cnt_tz_offset_s(tz, at[1] * 1000), 7200);
		CHECK_EQ_INT(cnt_tz_offset_s(tz, at[1] * 1000 - 1), 3600);
		/* from the last transition on, the footer: winter +03 */
		CHECK_EQ_INT(cnt_tz_offset_s(tz, at[2] * 1000), 10800);
		CHECK_EQ_INT(cnt_tz_offset_s(tz, utc("2005-07-01T00:00:00Z")), 14400);
		CHECK_EQ_INT(cnt_tz_offset_s(tz, utc("2150-07-01T00:00:00Z")), 14400);
		CHECK_EQ_INT(cnt_tz_offset_s(tz, utc("2150-12-01T00:00:00Z")), 10800);
		CHECK_EQ_INT(cnt_tz_next_transition(tz, at[1] * 1000), at[2] * 1000);
		cnt_tz_free(tz);
	}
	/* version 1: 32-bit times, no footer, last type forever */
	n = build_tzif(buf, 1, at, idx, 2, types, 2, "");
	tz = cnt_tz_parse(buf, n, "v1", &e);
	CHECK(tz != NULL);
	if (tz) {
		CHECK_EQ_INT(cnt_tz_offset_s(tz, utc("1999-01-01T00:00:00Z")), 3600);
		CHECK_EQ_INT(cnt_tz_offset_s(tz, utc("2300-01-01T00:00:00Z")), 7200);
		cnt_tz_free(tz);
	}
	/* RFC 8536's permanent DST: the rule never leaves daylight time */
	tz = cnt_tz_posix("EST5EDT,0/0,J365/25", &e);
	CHECK(tz != NULL);
	if (tz) {
		CHECK_EQ_INT(cnt_tz_offset_s(tz, utc("2026-01-01T00:00:00Z")), -14400);
		CHECK_EQ_INT(cnt_tz_offset_s(tz, utc("2026-01-01T05:00:00Z")), -14400);
		CHECK_EQ_INT(cnt_tz_offset_s(tz, utc("2026-07-01T00:00:00Z")), -14400);
		CHECK_EQ_INT(cnt_tz_offset_s(tz, utc("1900-12-31T23:00:00Z")), -14400);
		CHECK_EQ_INT(cnt_tz_next_transition(tz, 0), INT64_MAX);
		cnt_tz_free(tz);
	}
	/* an empty footer in v2: the last type goes on */
	n = build_tzif(buf, 2, at, idx, 2, types, 2, "");
	tz = cnt_tz_parse(buf, n, "v2-empty-footer", &e);
	CHECK(tz != NULL);
	if (tz) {
		CHECK_EQ_INT(cnt_tz_offset_s(tz, utc("2300-01-01T00:00:00Z")), 7200);
		cnt_tz_free(tz);
	}
	/* a transition before the representable range sets the initial type */
	{
		const int64_t at2[] = {-(INT64_C(1) << 59), 0};
		const uint8_t idx2[] = {1, 0};

		n = build_tzif(buf, 2, at2, idx2, 2, types, 2, "");
		tz = cnt_tz_parse(buf, n, "bigbang", &e);
		CHECK(tz != NULL);
		if (tz) {
			CHECK_EQ_INT(cnt_tz_offset_s(tz, -1), 7200);
			CHECK_EQ_INT(cnt_tz_offset_s(tz, INT64_MIN), 7200);
			CHECK_EQ_INT(cnt_tz_offset_s(tz, 0), 3600);
			CHECK_EQ_INT(cnt_tz_offset_s(tz, INT64_MAX), 3600);
			cnt_tz_free(tz);
		}
	}
}

static void test_bad_files(void)
{
	uint8_t buf[4096], bad[4096];
	cnt_err e;
	const ttype types[] = {{3600, 0}, {7200, 1}};
	const int64_t at[] = {946684800, 959817600};
	const uint8_t idx[] = {0, 1};
	size_t n = build_tzif(buf, 2, at, idx, 2, types, 2, "CET-1CEST,M3.5.0,M10.5.0/3");
	size_t v2 = 44 + 7; /* the v2 header */
	cnt_tz *tz;
	struct {
		const char *what;
		size_t off;
		uint8_t byte;
	} flips[] = {
		{"magic", v2, 'X'},
		{"version", v2 + 4, '9'},
		{"typecnt 0", v2 + 39, 0},
		{"leapcnt", v2 + 31, 1},
		{"timecnt huge", v2 + 32, 0x7f},
		{"charcnt 0", v2 + 43, 0},
		{"type index", v2 + 44 + 16, 5},
		{"not ascending", v2 + 44 + 8 + 4, 0},
		{"isdst 2", v2 + 44 + 18 + 4, 2},
		{"utoff", v2 + 44 + 18, 0x40},
		{"footer newline", n - 1, 'x'},
	};

	tz = cnt_tz_parse(buf, n, "good", &e);
	CHECK(tz != NULL);
	cnt_tz_free(tz);
	/* every proper prefix is refused with a message */
	for (size_t k = 0; k < n; k++) {
		e.msg[0] = '\0';
		tz = cnt_tz_parse(buf, k, "prefix", &e);
		CHECK(tz == NULL);
		CHECK(e.msg[0] != '\0');
		cnt_tz_free(tz);
	}
	for (size_t k = 0; k < sizeof(flips) / sizeof(flips[0]); k++) {
		memcpy(bad, buf, n);
		bad[flips[k].off] = flips[k].byte;
		e.msg[0] = '\0';
		tz = cnt_tz_parse(bad, n, flips[k].what, &e);
		if (tz != NULL)
			fprintf(stderr, "corruption '%s' accepted\n", flips[k].what);
		CHECK(tz == NULL);
		CHECK(e.msg[0] != '\0');
		cnt_tz_free(tz);
	}
	/* trailing bytes */
	memcpy(bad, buf, n);
	bad[n] = 'x';
	CHECK(cnt_tz_parse(bad, n + 1, "trailing", &e) == NULL);
	/* bad footers */
	{
		static const char *const footers[] = {
			"CET", "CE-1", "CET-1CEST", "CET-25", "CET-1CEST,M13.5.0,M10.5.0",
			"CET-1CEST,M3.6.0,M10.5.0", "CET-1CEST,M3.5.7,M10.5.0", "CET-1CEST,J0,J5",
			"CET-1CEST,366,5", "CET-1CEST,M3.5.0/168,M10.5.0", "<AB>1", "<ABC1",
			"CET-1CEST,M3.5.0,M10.5.0x", "CET-1:60",
		};
		for (size_t k = 0; k < sizeof(footers) / sizeof(footers[0]); k++) {
			n = build_tzif(buf, 2, at, idx, 2, types, 2, footers[k]);
			e.msg[0] = '\0';
			tz = cnt_tz_parse(buf, n, footers[k], &e);
			if (tz != NULL)
				fprintf(stderr, "footer '%s' accepted\n", footers[k]);
			CHECK(tz == NULL);
			CHECK(strstr(e.msg, "TZ string") != NULL);
			cnt_tz_free(tz);
		}
	}
}

static void test_load_names(void)
{
	static const char *const bad[] = {"", "/etc/localtime", "../etc/passwd",
					  "Europe/../../etc/passwd", "Europe/Berlin\n",
					  "Europe/Berlin x"};
	char dir[] = "/tmp/test_tz.XXXXXX";
	char path[256];
	const char *old = getenv("TZDIR");
	char *saved = old ? strdup(old) : NULL;
	cnt_err e;
	cnt_tz *tz;
	FILE *f;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e.msg[0] = '\0';
		CHECK(cnt_tz_load(bad[i], &e) == NULL);
		CHECK(strstr(e.msg, "not an IANA timezone name") != NULL);
	}
	CHECK(cnt_tz_load("Mars/Olympus_Mons", &e) == NULL);
	CHECK(strstr(e.msg, "unknown timezone 'Mars/Olympus_Mons'") != NULL);
	/* TZDIR is honoured, and a file that is not TZif refused */
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/Fake", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("not a zone\n", f);
		fclose(f);
	}
	setenv("TZDIR", dir, 1);
	CHECK(cnt_tz_load("Fake", &e) == NULL);
	CHECK(strstr(e.msg, "not a TZif file") != NULL);
	CHECK(cnt_tz_load("Europe/Berlin", &e) == NULL);
	/* UTC works without a zoneinfo directory */
	tz = cnt_tz_load("UTC", &e);
	CHECK(tz != NULL);
	if (tz) {
		CHECK_EQ_INT(cnt_tz_offset_s(tz, 123456789), 0);
		CHECK_EQ_STR(cnt_tz_name(tz), "UTC");
		cnt_tz_free(tz);
	}
	unlink(path);
	rmdir(dir);
	if (saved) {
		setenv("TZDIR", saved, 1);
		free(saved);
	} else {
		unsetenv("TZDIR");
	}
}

/* ---- local -> UTC ---------------------------------------------------------- */

/* Around every transition 1970..2040, every local quarter hour within 3 h
 * of the change maps as glibc says: a single instant; fold 0/1 the
 * earlier/later of two; in a gap, the transition. */
static void test_local_to_utc_vs_glibc(void)
{
	for (size_t i = 0; i < NZONES; i++) {
		cnt_tz *tz = load(zones[i]);
		int bad = 0;

		if (tz == NULL)
			continue;
		oracle_zone(zones[i]);
		for (int64_t t = cnt_tz_next_transition(tz, 0); t < S2040 * 1000;
		     t = cnt_tz_next_transition(tz, t)) {
			int64_t ts = t / 1000;
			long o[2] = {g_off(ts - 1), g_off(ts)};
			int64_t lmin = (ts + (o[0] < o[1] ? o[0] : o[1])) * 1000 - 3 * H;
			int64_t lmax = (ts + (o[0] > o[1] ? o[0] : o[1])) * 1000 + 3 * H;

			lmin -= ((lmin % (15 * CNT_MS_PER_MIN)) + 15 * CNT_MS_PER_MIN) %
				(15 * CNT_MS_PER_MIN);
			for (int64_t l = lmin; l <= lmax; l += 15 * CNT_MS_PER_MIN) {
				int64_t cand[2], want0, want1;
				int nc = 0;
				cnt_civil c;

				for (int k = 0; k < 2; k++) {
					int64_t u = l - (int64_t)o[k] * 1000;

					if (g_off(floor_s(u)) == o[k] && (nc == 0 || cand[0] != u))
						cand[nc++] = u;
				}
				if (nc == 2 && cand[1] < cand[0]) {
					int64_t x = cand[0];

					cand[0] = cand[1];
					cand[1] = x;
				}
				want0 = nc ? cand[0] : t;
				want1 = nc ? cand[nc - 1] : t;
				cnt_civil_from_ms(l, &c);
				if ((cnt_tz_local_to_utc(tz, &c, 0) != want0 ||
				     cnt_tz_local_to_utc(tz, &c, 1) != want1) && bad++ < 5)
					fprintf(stderr, "%s: local %lld: got %lld/%lld, want %lld/%lld\n",
						zones[i], (long long)l,
						(long long)cnt_tz_local_to_utc(tz, &c, 0),
						(long long)cnt_tz_local_to_utc(tz, &c, 1),
						(long long)want0, (long long)want1);
			}
		}
		CHECK_EQ_INT(bad, 0);
		cnt_tz_free(tz);
	}
}

static void test_local_to_utc_cases(void)
{
	cnt_tz *tz = load("Europe/Berlin");
	cnt_civil c;

	if (tz == NULL) {
		CHECK(0);
		return;
	}
	/* 02:30 on 2026-03-29 does not exist: the end of the gap, 01:00Z */
	c = civ(2026, 3, 29, 2, 30);
	CHECK_EQ_INT(cnt_tz_local_to_utc(tz, &c, 0), utc("2026-03-29T01:00:00Z"));
	CHECK_EQ_INT(cnt_tz_local_to_utc(tz, &c, 1), utc("2026-03-29T01:00:00Z"));
	/* 02:30 on 2026-10-25 happens twice */
	c = civ(2026, 10, 25, 2, 30);
	CHECK_EQ_INT(cnt_tz_local_to_utc(tz, &c, 0), utc("2026-10-25T00:30:00Z"));
	CHECK_EQ_INT(cnt_tz_local_to_utc(tz, &c, 1), utc("2026-10-25T01:30:00Z"));
	/* carried fields: hour 24 is the next midnight, month 13 next January */
	c = civ(2026, 1, 1, 24, 0);
	CHECK_EQ_INT(cnt_tz_local_to_utc(tz, &c, 0), utc("2026-01-02T00:00:00+01:00"));
	c = civ(2025, 13, 1, 0, 0);
	CHECK_EQ_INT(cnt_tz_local_to_utc(tz, &c, 0), utc("2026-01-01T00:00:00+01:00"));
	cnt_tz_free(tz);
}

/* ---- buckets ------------------------------------------------------------- */

/*
 * Walks every bucket of 2024..2027 and checks, against glibc: buckets
 * touch; each lies within one local hour (so one local day) and one offset;
 * each begins on a local whole hour or at an offset change (so buckets are
 * as long as they can be); every instant sampled inside maps back to it;
 * the cursor agrees with the stateless functions.
 */
static int walk_buckets(const cnt_tz *tz, const char *label)
{
	int bad = 0;
	int64_t b = cnt_tz_bucket_start(tz, S2024 * 1000), nb = 0;
	cnt_tz_cursor cur;

	cnt_tz_cursor_init(&cur, tz);
	if (b > S2024 * 1000 || cnt_tz_bucket_end(tz, S2024 * 1000) <= S2024 * 1000)
		bad++;
	while (b < S2028 * 1000) {
		int64_t e = cnt_tz_bucket_end(tz, b), d0, m0, d1, m1, bs = b / 1000, es = e / 1000;

		nb++;
		if (!(e > b && e - b <= H) || b % 1000 || e % 1000) {
			if (bad++ < 5)
				fprintf(stderr, "%s: bucket [%lld, %lld)\n", label, (long long)b,
					(long long)e);
			break;
		}
		g_wall(b, &d0, &m0);
		g_wall(e - 1, &d1, &m1);
		if ((d0 != d1 || m0 / H != m1 / H) && bad++ < 5)
			fprintf(stderr, "%s: bucket [%lld, %lld) spans local hours\n", label,
				(long long)b, (long long)e);
		if (g_off(bs) != g_off(es - 1) && bad++ < 5)
			fprintf(stderr, "%s: bucket at %lld spans an offset change\n", label,
				(long long)b);
		if (m0 % H != 0 && g_off(bs - 1) == g_off(bs) && bad++ < 5)
			fprintf(stderr, "%s: bucket at %lld starts mid-hour without a transition\n",
				label, (long long)b);
		if (e - b < H && m0 % H == 0 && g_off(es - 1) == g_off(es) && bad++ < 5)
			fprintf(stderr, "%s: short bucket at %lld ends without a transition\n", label,
				(long long)b);
		for (int64_t x = b; x < e; x += (e - b) / 7 + 1)
			if ((cnt_tz_bucket_start(tz, x) != b || cnt_tz_bucket_end(tz, x) != e ||
			     cnt_tz_cursor_bucket_start(&cur, x) != b ||
			     cnt_tz_cursor_bucket_end(&cur, x) != e) && bad++ < 5)
				fprintf(stderr, "%s: instant %lld not in its bucket\n", label,
					(long long)x);
		if ((cnt_tz_bucket_start(tz, e - 1) != b || cnt_tz_cursor_bucket_start(&cur, e - 1) != b) &&
		    bad++ < 5)
			fprintf(stderr, "%s: last ms of bucket %lld\n", label, (long long)b);
		if (cnt_tz_bucket_start(tz, e) != e && bad++ < 5)
			fprintf(stderr, "%s: bucket end %lld is not a start\n", label, (long long)e);
		b = e;
	}
	return bad;
}

static void test_bucket_partition(void)
{
	for (size_t i = 0; i < NZONES; i++) {
		cnt_tz *tz = load(zones[i]);

		if (tz == NULL) {
			CHECK(0);
			continue;
		}
		oracle_zone(zones[i]);
		CHECK_EQ_INT(walk_buckets(tz, zones[i]), 0);
		/* every offset change is a bucket boundary */
		for (int64_t t = cnt_tz_next_transition(tz, S2024 * 1000); t < S2028 * 1000;
		     t = cnt_tz_next_transition(tz, t))
			CHECK_EQ_INT(cnt_tz_bucket_start(tz, t), t);
		cnt_tz_free(tz);
	}
	for (size_t i = 0; i < NPOSIX; i++) {
		cnt_err e;
		cnt_tz *tz = cnt_tz_posix(posix_strings[i], &e);

		if (tz == NULL)
			continue;
		oracle_zone(posix_strings[i]);
		CHECK_EQ_INT(walk_buckets(tz, posix_strings[i]), 0);
		cnt_tz_free(tz);
	}
}

static void check_bucket(const cnt_tz *tz, const char *at, const char *start, const char *end)
{
	int64_t t = utc(at);

	CHECK_EQ_INT(cnt_tz_bucket_start(tz, t), utc(start));
	CHECK_EQ_INT(cnt_tz_bucket_end(tz, t), utc(end));
}

static void test_bucket_cases(void)
{
	cnt_tz *tz = load("Europe/Berlin");
	cnt_civil c;

	if (tz) {
		/* spring forward at 01:00Z: local 01:00-02:00 CET, then 03:00 CEST */
		check_bucket(tz, "2026-03-29T00:59:59.999Z", "2026-03-29T00:00:00Z",
			     "2026-03-29T01:00:00Z");
		check_bucket(tz, "2026-03-29T01:00:00Z", "2026-03-29T01:00:00Z",
			     "2026-03-29T02:00:00Z");
		cnt_tz_to_civil(tz, utc("2026-03-29T01:00:00Z"), &c);
		CHECK_EQ_INT(c.hour, 3);
		/* fall back at 01:00Z: local 02:00-03:00 twice, two buckets */
		check_bucket(tz, "2026-10-25T00:30:00Z", "2026-10-25T00:00:00Z",
			     "2026-10-25T01:00:00Z");
		check_bucket(tz, "2026-10-25T01:30:00Z", "2026-10-25T01:00:00Z",
			     "2026-10-25T02:00:00Z");
		cnt_tz_to_civil(tz, utc("2026-10-25T00:30:00Z"), &c);
		CHECK_EQ_INT(c.hour, 2);
		cnt_tz_to_civil(tz, utc("2026-10-25T01:30:00Z"), &c);
		CHECK_EQ_INT(c.hour, 2);
		cnt_tz_free(tz);
	}
	tz = load("Asia/Kathmandu");
	if (tz) {
		/* +05:45: local hours begin at :15 UTC */
		check_bucket(tz, "2026-01-15T12:20:00Z", "2026-01-15T12:15:00Z",
			     "2026-01-15T13:15:00Z");
		check_bucket(tz, "2026-01-15T12:14:59.999Z", "2026-01-15T11:15:00Z",
			     "2026-01-15T12:15:00Z");
		/* 1986-01-01: +05:30 -> +05:45 at local 00:00 -> 00:15, a 45-minute
		 * bucket follows the 23:00 one */
		check_bucket(tz, "1985-12-31T18:29:00Z", "1985-12-31T17:30:00Z",
			     "1985-12-31T18:30:00Z");
		check_bucket(tz, "1985-12-31T18:30:00Z", "1985-12-31T18:30:00Z",
			     "1985-12-31T19:15:00Z");
		cnt_tz_free(tz);
	}
	tz = load("Asia/Kolkata");
	if (tz) {
		check_bucket(tz, "2026-01-14T18:30:00Z", "2026-01-14T18:30:00Z",
			     "2026-01-14T19:30:00Z");
		check_bucket(tz, "2026-01-14T18:29:59.999Z", "2026-01-14T17:30:00Z",
			     "2026-01-14T18:30:00Z");
		cnt_tz_free(tz);
	}
	tz = load("Australia/Eucla");
	if (tz) {
		check_bucket(tz, "2026-06-01T00:00:00Z", "2026-05-31T23:15:00Z",
			     "2026-06-01T00:15:00Z");
		cnt_tz_free(tz);
	}
	tz = load("Australia/Lord_Howe");
	if (tz) {
		/* 2026-04-05 02:00 +11 -> 01:30 +10:30 at 15:00Z: the repeated half
		 * hour is a bucket of its own */
		check_bucket(tz, "2026-04-04T14:59:59.999Z", "2026-04-04T14:00:00Z",
			     "2026-04-04T15:00:00Z");
		check_bucket(tz, "2026-04-04T15:00:00Z", "2026-04-04T15:00:00Z",
			     "2026-04-04T15:30:00Z");
		check_bucket(tz, "2026-04-04T15:30:00Z", "2026-04-04T15:30:00Z",
			     "2026-04-04T16:30:00Z");
		/* 2026-10-04 02:00 +10:30 -> 02:30 +11 at 15:30Z: a 30-minute bucket */
		check_bucket(tz, "2026-10-03T15:29:59.999Z", "2026-10-03T14:30:00Z",
			     "2026-10-03T15:30:00Z");
		check_bucket(tz, "2026-10-03T15:30:00Z", "2026-10-03T15:30:00Z",
			     "2026-10-03T16:00:00Z");
		check_bucket(tz, "2026-10-03T16:00:00Z", "2026-10-03T16:00:00Z",
			     "2026-10-03T17:00:00Z");
		cnt_tz_free(tz);
	}
	tz = load("Pacific/Chatham");
	if (tz) {
		/* +13:45 in January: local hours begin at :15 UTC */
		check_bucket(tz, "2026-01-10T05:00:00Z", "2026-01-10T04:15:00Z",
			     "2026-01-10T05:15:00Z");
		cnt_tz_free(tz);
	}
	/* the clamp: no overflow at the ends of int64 */
	tz = load("UTC");
	if (tz) {
		CHECK(cnt_tz_bucket_start(tz, INT64_MIN) <= CNT_TZ_MIN_MS);
		CHECK(cnt_tz_bucket_end(tz, INT64_MAX) >= CNT_TZ_MAX_MS);
		CHECK_EQ_INT(cnt_tz_bucket_start(tz, -1), -H);
		cnt_tz_free(tz);
	}
}

/* ---- windows ------------------------------------------------------------- */

static void check_win(cnt_tz_window w, const char *start, const char *end)
{
	CHECK_EQ_INT(w.start_ms, utc(start));
	CHECK_EQ_INT(w.end_ms, utc(end));
}

static void test_window_cases(void)
{
	cnt_tz *tz = load("Europe/Berlin");
	cnt_tz_window w;
	cnt_err e;
	cnt_civil a, b;

	if (tz) {
		int64_t t = utc("2026-03-29T12:00:00Z");

		check_win(cnt_tz_day(tz, t), "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z");
		/* Monday week: 23 Mar 00:00 CET .. 30 Mar 00:00 CEST */
		check_win(cnt_tz_week(tz, t, 0), "2026-03-22T23:00:00Z", "2026-03-29T22:00:00Z");
		/* Sunday week: 29 Mar (the DST day) .. 5 Apr */
		check_win(cnt_tz_week(tz, t, 6), "2026-03-28T23:00:00Z", "2026-04-04T22:00:00Z");
		check_win(cnt_tz_month(tz, t), "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z");
		check_win(cnt_tz_last_days(tz, t, 30), "2026-02-27T23:00:00Z",
			  "2026-03-29T22:00:00Z");
		check_win(cnt_tz_last_days(tz, t, 1), "2026-03-28T23:00:00Z",
			  "2026-03-29T22:00:00Z");
		w = cnt_tz_last_days(tz, t, 0);
		CHECK(w.start_ms == w.end_ms);
		check_win(cnt_tz_rolling(tz, utc("2026-03-29T12:20:00Z"), 24 * H),
			  "2026-03-28T13:00:00Z", "2026-03-29T13:00:00Z");
		check_win(cnt_tz_rolling(tz, utc("2026-03-29T12:00:00Z"), 24 * H),
			  "2026-03-28T12:00:00Z", "2026-03-29T12:00:00Z");
		/* the fall-back day has 25 hours */
		check_win(cnt_tz_day(tz, utc("2026-10-25T12:00:00Z")), "2026-10-24T22:00:00Z",
			  "2026-10-25T23:00:00Z");
		CHECK_EQ_INT(cnt_tz_local_day(tz, utc("2026-10-25T12:00:00Z")),
			     cnt_days_from_civil(2026, 10, 25));
		/* a season from a local time in the gap to one on a half hour */
		a = civ(2026, 3, 29, 2, 0);
		b = civ(2026, 3, 29, 4, 30);
		CHECK_EQ_INT(cnt_tz_range(tz, &a, &b, &w, &e), 0);
		check_win(w, "2026-03-29T01:00:00Z", "2026-03-29T03:00:00Z");
		a = civ(2026, 3, 1, 10, 30);
		b = civ(2026, 3, 1, 10, 30);
		CHECK_EQ_INT(cnt_tz_range(tz, &a, &b, &w, &e), 0);
		CHECK(w.start_ms == w.end_ms);
		b = civ(2026, 3, 1, 10, 29);
		CHECK_EQ_INT(cnt_tz_range(tz, &a, &b, &w, &e), -1);
		CHECK(strstr(e.msg, "ends before it starts") != NULL);
		cnt_tz_free(tz);
	}
	tz = load("Asia/Kolkata");
	if (tz) {
		check_win(cnt_tz_day(tz, utc("2026-01-15T12:00:00Z")), "2026-01-14T18:30:00Z",
			  "2026-01-15T18:30:00Z");
		check_win(cnt_tz_day(tz, utc("2026-01-14T18:29:59.999Z")), "2026-01-13T18:30:00Z",
			  "2026-01-14T18:30:00Z");
		cnt_tz_free(tz);
	}
	tz = load("Pacific/Apia");
	if (tz) {
		cnt_civil c = civ(2011, 12, 30, 12, 0);

		/* 2011-12-30 never happened: 29 Dec 23:59:59 -10 -> 31 Dec 00:00 +14 */
		CHECK_EQ_INT(cnt_tz_local_to_utc(tz, &c, 0), utc("2011-12-30T10:00:00Z"));
		check_win(cnt_tz_day(tz, utc("2011-12-30T10:00:00Z")), "2011-12-30T10:00:00Z",
			  "2011-12-31T10:00:00Z");
		check_win(cnt_tz_day(tz, utc("2011-12-30T09:59:59Z")), "2011-12-29T10:00:00Z",
			  "2011-12-30T10:00:00Z");
		CHECK_EQ_INT(cnt_tz_local_day(tz, utc("2011-12-30T10:00:00Z")),
			     cnt_days_from_civil(2011, 12, 31));
		/* the month of December 2011 had 30 days there */
		check_win(cnt_tz_month(tz, utc("2011-12-15T00:00:00Z")), "2011-12-01T10:00:00Z",
			  "2011-12-31T10:00:00Z");
		cnt_tz_free(tz);
	}
	tz = load("America/Sao_Paulo");
	if (tz) {
		/* 2018-11-04: midnight did not exist; the day starts at 01:00 -02 */
		check_win(cnt_tz_day(tz, utc("2018-11-04T12:00:00Z")), "2018-11-04T03:00:00Z",
			  "2018-11-05T02:00:00Z");
		/* 2018-02-17 had 25 hours (23:00-24:00 twice) */
		check_win(cnt_tz_day(tz, utc("2018-02-17T12:00:00Z")), "2018-02-17T02:00:00Z",
			  "2018-02-18T03:00:00Z");
		cnt_tz_free(tz);
	}
	{
		/* a fold across midnight: 00:30 DST back to 23:30 the day before;
		 * the repeated 23:30-24:00 belongs to the new day */
		cnt_tz *f = cnt_tz_posix("AAA3BBB,M3.2.0/0,M11.1.0/0:30", &e);

		CHECK(f != NULL);
		if (f) {
			/* 2026-11-01 00:30 BBB (-2) = 02:30Z; then 23:30 AAA (-3) of Oct 31 */
			check_win(cnt_tz_day(f, utc("2026-11-01T02:45:00Z")), "2026-11-01T02:00:00Z",
				  "2026-11-02T03:00:00Z");
			check_win(cnt_tz_day(f, utc("2026-11-01T01:59:00Z")), "2026-10-31T02:00:00Z",
				  "2026-11-01T02:00:00Z");
			CHECK_EQ_INT(cnt_tz_local_day(f, utc("2026-11-01T02:45:00Z")),
				     cnt_days_from_civil(2026, 11, 1));
			cnt_tz_free(f);
		}
	}
	CHECK_EQ_INT(cnt_tz_parse_weekday("Monday"), 0);
	CHECK_EQ_INT(cnt_tz_parse_weekday("sun"), 6);
	CHECK_EQ_INT(cnt_tz_parse_weekday("SUNDAY"), 6);
	CHECK_EQ_INT(cnt_tz_parse_weekday("sunday "), -1);
	CHECK_EQ_INT(cnt_tz_parse_weekday("mo"), -1);
}

static int is_boundary(const cnt_tz *tz, int64_t t)
{
	return cnt_tz_bucket_start(tz, t) == t;
}

/* Whether b is where local day f begins by glibc's clock: the first second
 * whose local date is f or later (so a midnight in a gap begins the day at
 * the end of the gap, a repeated one at its first occurrence, and a day that
 * never happened is empty, beginning where the next one does). */
static int g_begins(int64_t b, int64_t f)
{
	return b % 1000 == 0 && g_day(b) >= f && g_day(b - 1000) < f;
}

static int64_t local_midnight(const cnt_tz *tz, int64_t day)
{
	int64_t y;
	unsigned m, d;
	cnt_civil c;

	cnt_civil_from_days(day, &y, &m, &d);
	c = civ(y, m, d, 0, 0);
	return cnt_tz_local_to_utc(tz, &c, 0);
}

/*
 * For one instant: each window contains t, lies on bucket boundaries, and
 * begins and ends where glibc's local date reaches the right days.
 */
static int check_windows_at(const cnt_tz *tz, const char *label, int64_t t)
{
	int bad = 0;
	int64_t k = cnt_tz_local_day(tz, t), f;
	cnt_tz_window d = cnt_tz_day(tz, t), w, m, l, r;
	int64_t y;
	unsigned mo, dd;
	int ws = (int)(((t / H) % 7 + 7) % 7);

#define WBAD(cond, what) do { if (!(cond) && bad++ < 3) \
	fprintf(stderr, "%s: t=%lld: %s\n", label, (long long)t, what); } while (0)
	WBAD(d.start_ms <= t && t < d.end_ms, "day does not contain t");
	WBAD(is_boundary(tz, d.start_ms) && is_boundary(tz, d.end_ms), "day not on buckets");
	WBAD(g_begins(d.start_ms, k) && g_begins(d.end_ms, k + 1), "day boundaries");
	WBAD(d.start_ms == local_midnight(tz, k), "day start is not local_to_utc(00:00)");
	/* week: from the ws weekday on or before day k, 7 days */
	f = k - (((k + 3 - ws) % 7) + 7) % 7;
	w = cnt_tz_week(tz, t, ws);
	WBAD(w.start_ms <= t && t < w.end_ms, "week does not contain t");
	WBAD(is_boundary(tz, w.start_ms) && is_boundary(tz, w.end_ms), "week not on buckets");
	WBAD(g_begins(w.start_ms, f) && g_begins(w.end_ms, f + 7), "week boundaries");
	/* month: from the 1st of k's month to the next 1st */
	cnt_civil_from_days(k, &y, &mo, &dd);
	f = cnt_days_from_civil(y, mo, 1);
	m = cnt_tz_month(tz, t);
	WBAD(m.start_ms <= t && t < m.end_ms, "month does not contain t");
	WBAD(is_boundary(tz, m.start_ms) && is_boundary(tz, m.end_ms), "month not on buckets");
	WBAD(g_begins(m.start_ms, f) && g_begins(m.end_ms, f + cnt_days_in_month(y, mo)),
	     "month boundaries");
	l = cnt_tz_last_days(tz, t, 30);
	WBAD(l.end_ms == d.end_ms && g_begins(l.start_ms, k - 29), "last 30 days");
	r = cnt_tz_rolling(tz, t, 24 * H);
	WBAD(is_boundary(tz, r.start_ms) && is_boundary(tz, r.end_ms), "rolling not on buckets");
	WBAD(r.end_ms >= t && cnt_tz_bucket_start(tz, t - 1) == cnt_tz_bucket_start(tz, r.end_ms - 1),
	     "rolling end");
	WBAD(r.start_ms <= r.end_ms - 24 * H && cnt_tz_bucket_end(tz, r.start_ms) > r.end_ms - 24 * H,
	     "rolling start");
#undef WBAD
	return bad;
}

static void test_windows_vs_glibc(void)
{
	for (size_t i = 0; i < NZONES; i++) {
		cnt_tz *tz = load(zones[i]);
		int bad = 0;

		if (tz == NULL)
			continue;
		oracle_zone(zones[i]);
		for (int64_t t = S2024 * 1000; t < S2028 * 1000;
		     t += LIGHT ? 47 * H + 13 * CNT_MS_PER_MIN : 7 * H + 13 * CNT_MS_PER_MIN)
			bad += check_windows_at(tz, zones[i], t);
		for (int64_t t = cnt_tz_next_transition(tz, 0); t < S2040 * 1000;
		     t = cnt_tz_next_transition(tz, t))
			for (int64_t d = -2 * H; d <= 2 * H; d += 30 * CNT_MS_PER_MIN)
				bad += check_windows_at(tz, zones[i], t + d);
		CHECK_EQ_INT(bad, 0);
		cnt_tz_free(tz);
	}
}

/* ---- cache and speed ------------------------------------------------------ */

static void test_cache(void)
{
	cnt_tz_cache *c = cnt_tz_cache_new();
	cnt_err e;
	const cnt_tz *a, *b;

	CHECK(c != NULL);
	if (c == NULL)
		return;
	a = cnt_tz_cache_get(c, "Europe/Berlin", &e);
	b = cnt_tz_cache_get(c, "Europe/Berlin", &e);
	CHECK(a != NULL && a == b);
	for (size_t i = 0; i < NZONES; i++) {
		const cnt_tz *z = cnt_tz_cache_get(c, zones[i], &e);

		CHECK(z != NULL && strcmp(cnt_tz_name(z), zones[i]) == 0);
	}
	CHECK(cnt_tz_cache_get(c, "Europe/Berlin", &e) == a);
	CHECK(cnt_tz_cache_get(c, "No/Such_Zone", &e) == NULL);
	CHECK(strstr(e.msg, "No/Such_Zone") != NULL);
	cnt_tz_cache_free(c);
	cnt_tz_cache_free(NULL);
	cnt_tz_free(NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 10 M events over a week in shuffled order: the cursor path must agree
 * with the stateless one; both speeds are printed (figures, not checks). */
static void test_speed(void)
{
	cnt_tz *tz = load("Europe/Berlin");
	size_t n = LIGHT ? 200000 : 10000000, i;
	int64_t *ev, base = utc("2026-03-25T00:00:00Z");
	uint64_t x = 88172645463325252ull, sum1 = 0, sum2 = 0;
	cnt_tz_cursor cur;
	double t0, t1, t2;

	if (tz == NULL)
		return;
	ev = malloc(n * sizeof(*ev));
	if (ev == NULL) {
		cnt_tz_free(tz);
		return;
	}
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ev[i] = base + (int64_t)(x % (uint64_t)(7 * CNT_MS_PER_DAY)); /* spans the DST change */
	}
	cnt_tz_cursor_init(&cur, tz);
	t0 = now_s();
	for (i = 0; i < n; i++)
		sum1 += (uint64_t)cnt_tz_cursor_bucket_start(&cur, ev[i]);
	t1 = now_s();
	for (i = 0; i < n; i++)
		sum2 += (uint64_t)cnt_tz_bucket_start(tz, ev[i]);
	t2 = now_s();
	CHECK(sum1 == sum2);
	printf("bucket_start: cursor %.1f ns/event, stateless %.1f ns/event (%zu events, "
	       "random order over a week with a DST change)\n",
	       (t1 - t0) * 1e9 / (double)n, (t2 - t1) * 1e9 / (double)n, n);
	/* in time order, as a log mostly is */
	for (i = 0; i < n; i++)
		ev[i] = base + (int64_t)i * 60;
	cnt_tz_cursor_init(&cur, tz);
	t0 = now_s();
	for (i = 0; i < n; i++)
		sum1 += (uint64_t)cnt_tz_cursor_bucket_start(&cur, ev[i]);
	t1 = now_s();
	printf("bucket_start: cursor %.1f ns/event in time order\n", (t1 - t0) * 1e9 / (double)n);
	free(ev);
	cnt_tz_free(tz);
}

int main(void)
{
	RUN(test_offsets_vs_glibc);
	RUN(test_posix_vs_glibc);
	RUN(test_synthetic_files);
	RUN(test_bad_files);
	RUN(test_load_names);
	RUN(test_local_to_utc_vs_glibc);
	RUN(test_local_to_utc_cases);
	RUN(test_bucket_partition);
	RUN(test_bucket_cases);
	RUN(test_window_cases);
	RUN(test_windows_vs_glibc);
	RUN(test_cache);
	RUN(test_speed);
	return unit_report("test_tz");
}
