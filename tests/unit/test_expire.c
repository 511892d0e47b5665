/*
 * test_expire.c - bucket expiry (view/expire.h): which records a counter
 * version's moving windows, a board's range and a season reach at an
 * instant in Berlin, worked out by hand (CET, +01:00, in November 2026).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "time/timefmt.h"
#include "unit.h"
#include "view/expire.h"

static const char defs_json[] =
	"{\"format\": \"cnt-definitions/1\","
	" \"tenants\": [{\"tenant_id\": \"ber\", \"timezone\": \"Europe/Berlin\"}],"
	" \"counters\": ["
	"  {\"tenant_id\": \"ber\", \"counter_id\": \"day\", \"versions\": [{\"version\": 1, \"type\": \"exact\", \"windows\": [\"day\"]},"
	"    {\"version\": 2, \"type\": \"exact\", \"effective_from\": \"2026-11-20T00:00:00Z\", \"windows\": [\"all_time\"]}]},"
	"  {\"tenant_id\": \"ber\", \"counter_id\": \"r24\", \"versions\": [{\"version\": 1, \"type\": \"exact\", \"windows\": [\"rolling_24h\", \"last_30d\"]}]},"
	"  {\"tenant_id\": \"ber\", \"counter_id\": \"fixed\", \"versions\": [{\"version\": 1, \"type\": \"exact\", \"windows\": [\"range\", \"season\"]}]}],"
	" \"leaderboards\": ["
	"  {\"board_id\": \"rng\", \"tenant_id\": \"ber\", \"counter_id\": \"fixed\", \"window\": \"range\","
	"   \"from\": \"2026-11-10T00:00:00\", \"to\": \"2026-11-11T00:00:00\"},"
	"  {\"board_id\": \"sea\", \"tenant_id\": \"ber\", \"counter_id\": \"fixed\", \"window\": \"season\"}],"
	" \"seasons\": [{\"season_id\": \"s\", \"board_id\": \"sea\", \"opens_at\": \"2026-11-20T00:00:00\","
	"   \"closes_at\": \"2026-11-21T00:00:00\", \"state\": \"closed\"}]}";

static cnt_defs *defs;

static int64_t t(const char *s)
{
	int64_t ms = 0;

	if (cnt_time_parse_rfc3339(s, strlen(s), &ms) != 0)
		abort();
	return ms;
}

/* Whether the one-hour bucket starting at start (UTC) of counter c
 * version v is reachable at now. */
static int reach(const char *c, int v, const char *start, const char *now)
{
	cnt_tz_cache *tzc = cnt_tz_cache_new();
	cnt_bucket b;
	cnt_err err;
	int r;

	memset(&b, 0, sizeof(b));
	b.tenant_id.p = "ber";
	b.tenant_id.n = 3;
	b.counter_id.p = c;
	b.counter_id.n = strlen(c);
	b.counter_version = v;
	b.bucket_start = t(start);
	b.bucket_end = b.bucket_start + 3600000;
	r = cnt_expire_reachable(defs, tzc, &b, t(now), &err);
	cnt_tz_cache_free(tzc);
	return r;
}

static void test_moving_windows(void)
{
	/* day at 2026-11-30T13:00Z: the local day began 2026-11-29T23:00Z */
	CHECK_EQ_INT(reach("day", 1, "2026-11-29T23:00:00Z", "2026-11-30T13:00:00Z"), 1);
	CHECK_EQ_INT(reach("day", 1, "2026-11-29T22:00:00Z", "2026-11-30T13:00:00Z"), 0);
	/* a later bucket than now is reachable: the window will move onto it */
	CHECK_EQ_INT(reach("day", 1, "2026-12-05T10:00:00Z", "2026-11-30T13:00:00Z"), 1);
	/* all_time in version 2 keeps everything of version 2 */
	CHECK_EQ_INT(reach("day", 2, "2020-01-01T00:00:00Z", "2026-11-30T13:00:00Z"), 1);
	/* rolling_24h and last_30d: the longer one decides (30 local days:
	 * from 2026-10-31T23:00Z, the start of 1 November in Berlin) */
	CHECK_EQ_INT(reach("r24", 1, "2026-10-31T23:00:00Z", "2026-11-30T13:00:00Z"), 1);
	CHECK_EQ_INT(reach("r24", 1, "2026-10-31T22:00:00Z", "2026-11-30T13:00:00Z"), 0);
}

static void test_fixed_spans(void)
{
	/* range [2026-11-09T23:00Z, 2026-11-10T23:00Z), season [2026-11-19T23:00Z, 2026-11-20T23:00Z),
	 * closed: both are kept forever, whatever now is */
	CHECK_EQ_INT(reach("fixed", 1, "2026-11-09T23:00:00Z", "2027-06-01T00:00:00Z"), 1);
	CHECK_EQ_INT(reach("fixed", 1, "2026-11-10T22:00:00Z", "2027-06-01T00:00:00Z"), 1);
	CHECK_EQ_INT(reach("fixed", 1, "2026-11-10T23:00:00Z", "2027-06-01T00:00:00Z"), 0);
	CHECK_EQ_INT(reach("fixed", 1, "2026-11-09T22:00:00Z", "2027-06-01T00:00:00Z"), 0);
	CHECK_EQ_INT(reach("fixed", 1, "2026-11-20T22:00:00Z", "2027-06-01T00:00:00Z"), 1);
	CHECK_EQ_INT(reach("fixed", 1, "2026-11-15T12:00:00Z", "2026-11-01T00:00:00Z"), 0);
}

static void test_unknown(void)
{
	CHECK_EQ_INT(reach("nosuch", 1, "2026-11-15T12:00:00Z", "2026-11-30T00:00:00Z"), 2);
	CHECK_EQ_INT(reach("day", 9, "2026-11-15T12:00:00Z", "2026-11-30T00:00:00Z"), 2);
}

int main(void)
{
	cnt_err err;

	setenv("TZDIR", "/usr/share/zoneinfo", 0);
	defs = cnt_defs_parse(defs_json, sizeof(defs_json) - 1, "test", &err);
	if (defs == NULL) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	RUN(test_moving_windows);
	RUN(test_fixed_spans);
	RUN(test_unknown);
	cnt_defs_free(defs);
	return unit_report("test_expire");
}
