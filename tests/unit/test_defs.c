/*
 * test_defs.c - the definitions file: loading, lookups, versions, and one
 * invalid document per rule, each checked for the JSON path it names.
 *
 * Epoch values below were computed independently with GNU date, e.g.
 * date -u -d 2026-07-01T00:00:00+05:30 +%s%3N.
 */
#include "base/buf.h"
#include "model/defs.h"
#include "model/fingerprint.h"
#include "unit.h"

#include <jansson.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define T_2026_UTC 1767225600000LL        /* 2026-01-01T00:00:00Z */
#define T_2026_JUL_IST 1782844200000LL    /* 2026-07-01T00:00:00+05:30 */
#define T_2026_BERLIN 1767222000000LL     /* 2026-01-01T00:00:00+01:00 */
#define T_LEAP_DAY 1709220896789LL        /* 2024-02-29T12:34:56.789-03:00 */

static cnt_defs *parse_str(const char *s, cnt_err *err)
{
	return cnt_defs_parse(s, strlen(s), "t.json", err);
}

/* ---- a valid document and every lookup ------------------------------- */

static const char valid_doc[] =
	"{\"format\": \"cnt-definitions/1\",\n"
	" \"tenants\": [\n"
	"  {\"tenant_id\": \"acme\", \"name\": \"Acme\", \"timezone\": \"Europe/Berlin\",\n"
	"   \"event_quota_per_s\": 250000, \"member_cap\": 10000000, \"deletion_sla_days\": 30},\n"
	"  {\"tenant_id\": \"k\", \"timezone\": \"Asia/Kolkata\"}],\n"
	" \"counters\": [\n"
	"  {\"tenant_id\": \"acme\", \"counter_id\": \"distance_m\", \"versions\": [\n"
	"    {\"version\": 1, \"type\": \"exact\", \"bounds_lo\": 0, \"bounds_hi\": 1000000,\n"
	"     \"lateness_horizon_s\": 172800, \"windows\": [\"all_time\", \"week\"], \"unit_cost_per_m\": 0.4},\n"
	"    {\"version\": 2, \"effective_from\": \"2026-01-01T00:00:00Z\", \"type\": \"exact\",\n"
	"     \"bounds_lo\": 0, \"bounds_hi\": 500000, \"windows\": [\"week\"], \"client_writable\": true},\n"
	"    {\"version\": 5, \"effective_from\": \"2026-07-01T00:00:00+05:30\", \"type\": \"max\",\n"
	"     \"windows\": [\"week\"]}]},\n"
	"  {\"tenant_id\": \"k\", \"counter_id\": \"distance_m\", \"versions\": [\n"
	"    {\"version\": 1, \"effective_from\": \"2024-02-29T12:34:56.789-03:00\", \"type\": \"unique\",\n"
	"     \"dedup_key\": \"item_member\", \"windows\": [\"day\", \"range\"]}]},\n"
	"  {\"tenant_id\": \"k\", \"counter_id\": \"best\", \"versions\": [\n"
	"    {\"version\": 1, \"type\": \"min\", \"windows\": [\"all_time\", \"season\"]}]}],\n"
	" \"leaderboards\": [\n"
	"  {\"board_id\": \"b1\", \"tenant_id\": \"acme\", \"counter_id\": \"distance_m\", \"window\": \"week\",\n"
	"   \"week_start\": \"sunday\", \"scope_kind\": \"region\", \"tie_break\": [\"latest_achiever\"],\n"
	"   \"rank_numbering\": \"dense\", \"materialised_cap\": 100, \"freshness_budget_s\": 5,\n"
	"   \"histogram\": {\"scale\": \"linear\", \"buckets\": 64, \"width\": 1000}},\n"
	"  {\"board_id\": \"b2\", \"tenant_id\": \"k\", \"counter_id\": \"distance_m\", \"window\": \"range\",\n"
	"   \"from\": \"2026-01-01T00:00:00\", \"to\": \"2026-02-01T00:00:00\", \"scope_kind\": \"cohort\",\n"
	"   \"scope_attr\": \"language\"},\n"
	"  {\"board_id\": \"b3\", \"tenant_id\": \"k\", \"counter_id\": \"best\", \"window\": \"season\"}],\n"
	" \"seasons\": [\n"
	"  {\"season_id\": \"s1\", \"board_id\": \"b3\", \"opens_at\": \"2026-03-01T00:00:00\",\n"
	"   \"closes_at\": \"2026-06-01T00:00:00\", \"state\": \"closing\"},\n"
	"  {\"season_id\": \"s2\", \"board_id\": \"b1\", \"opens_at\": \"2026-03-01T00:00:00Z\",\n"
	"   \"closes_at\": \"2026-03-02T00:00:00+05:30\", \"timezone\": \"UTC\"}]}\n";

static void test_valid_lookups(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_defs *d = parse_str(valid_doc, &err);
	const cnt_tenant *t;
	const cnt_counter *c;
	const cnt_counter_version *v;
	char buf[64];

	CHECK(d != NULL);
	if (d == NULL) {
		fprintf(stderr, "  %s\n", err.msg);
		return;
	}
	CHECK_EQ_INT(cnt_defs_ntenants(d), 2);
	CHECK_EQ_INT(cnt_defs_ncounters(d), 3);
	CHECK_EQ_INT(cnt_defs_nboards(d), 3);
	CHECK_EQ_INT(cnt_defs_nseasons(d), 2);

	t = cnt_defs_tenant(d, "acme", 4);
	CHECK(t != NULL && t == cnt_defs_tenant_at(d, 0));
	if (t != NULL) {
		CHECK_EQ_STR(t->name, "Acme");
		CHECK_EQ_STR(t->timezone, "Europe/Berlin");
		CHECK_EQ_INT(t->event_quota_per_s, 250000);
		CHECK_EQ_INT(t->member_cap, 10000000);
		CHECK_EQ_INT(t->deletion_sla_days, 30);
	}
	t = cnt_defs_tenant(d, "k", 1);
	CHECK(t != NULL);
	if (t != NULL) {
		CHECK_EQ_STR(t->name, "k"); /* defaults to the id */
		CHECK_EQ_INT(t->event_quota_per_s, 0);
		CHECK_EQ_INT(t->member_cap, 0);
		CHECK_EQ_INT(t->deletion_sla_days, 30);
	}
	/* ids are length-delimited, not NUL-terminated */
	memcpy(buf, "acmeXdistance_mY", 16);
	CHECK(cnt_defs_tenant(d, buf, 4) == cnt_defs_tenant(d, "acme", 4));
	CHECK(cnt_defs_tenant(d, buf, 3) == NULL);
	CHECK(cnt_defs_tenant(d, buf, 5) == NULL);
	CHECK(cnt_defs_tenant(d, "", 0) == NULL);
	CHECK(cnt_defs_tenant(d, "ACME", 4) == NULL);
	c = cnt_defs_counter(d, buf, 4, buf + 5, 10);
	CHECK(c != NULL && c == cnt_defs_counter_at(d, 0));
	CHECK(cnt_defs_counter(d, buf, 4, buf + 5, 11) == NULL);
	/* same counter_id under another tenant is a different counter */
	CHECK(cnt_defs_counter(d, "k", 1, "distance_m", 10) == cnt_defs_counter_at(d, 1));
	CHECK(cnt_defs_counter(d, "k", 1, "nope", 4) == NULL);
	CHECK(cnt_defs_counter(d, "acme", 4, "best", 4) == NULL);
	/* a split between tenant and counter must not alias: "acm"+"edistance_m" */
	CHECK(cnt_defs_counter(d, "acm", 3, "edistance_m", 11) == NULL);

	if (c != NULL) {
		CHECK_EQ_STR(c->tenant_id, "acme");
		CHECK(c->tenant == cnt_defs_tenant(d, "acme", 4));
		CHECK_EQ_INT(c->nversions, 3);
		v = &c->versions[0];
		CHECK_EQ_INT(v->effective_from_ms, INT64_MIN);
		CHECK_EQ_INT(v->type, CNT_CTYPE_EXACT);
		CHECK_EQ_INT(v->bounds_hi, 1000000);
		CHECK_EQ_INT(v->lateness_horizon_s, 172800);
		CHECK_EQ_INT(v->dedup_horizon_s, 86400);
		CHECK_EQ_INT(v->dedup_key, CNT_DEDUP_IDEMPOTENCY_KEY);
		CHECK_EQ_INT(v->client_writable, 0);
		CHECK_EQ_INT(v->windows, CNT_WIN_BIT(CNT_WIN_ALL_TIME) | CNT_WIN_BIT(CNT_WIN_WEEK));
		CHECK(v->unit_cost_per_m > 0.39 && v->unit_cost_per_m < 0.41);
		CHECK_EQ_INT(c->versions[1].effective_from_ms, T_2026_UTC);
		CHECK_EQ_INT(c->versions[1].client_writable, 1);
		CHECK_EQ_INT(c->versions[2].effective_from_ms, T_2026_JUL_IST);
		/* defaults */
		v = &c->versions[2];
		CHECK_EQ_INT(v->type, CNT_CTYPE_MAX);
		CHECK_EQ_INT(v->bounds_lo, INT64_MIN);
		CHECK_EQ_INT(v->bounds_hi, INT64_MAX);
		CHECK_EQ_INT(v->lateness_horizon_s, 3600);
		CHECK_EQ_INT(v->windows, CNT_WIN_BIT(CNT_WIN_WEEK));

		/* version_at: v1 has always been in force, v2 from 2026, v5 from July (IST) */
		v = cnt_counter_version_at(c, INT64_MIN);
		CHECK(v != NULL && v->version == 1);
		v = cnt_counter_version_at(c, T_2026_UTC - 1);
		CHECK(v != NULL && v->version == 1);
		v = cnt_counter_version_at(c, T_2026_UTC);
		CHECK(v != NULL && v->version == 2);
		v = cnt_counter_version_at(c, T_2026_UTC + 1);
		CHECK(v != NULL && v->version == 2);
		v = cnt_counter_version_at(c, T_2026_JUL_IST - 1);
		CHECK(v != NULL && v->version == 2);
		v = cnt_counter_version_at(c, T_2026_JUL_IST);
		CHECK(v != NULL && v->version == 5);
		v = cnt_counter_version_at(c, INT64_MAX);
		CHECK(v != NULL && v->version == 5);
		CHECK(cnt_counter_version_get(c, 1) == &c->versions[0]);
		CHECK(cnt_counter_version_get(c, 2) == &c->versions[1]);
		CHECK(cnt_counter_version_get(c, 5) == &c->versions[2]);
		CHECK(cnt_counter_version_get(c, 3) == NULL);
		CHECK(cnt_counter_version_get(c, 0) == NULL);
		CHECK(cnt_counter_version_get(c, 6) == NULL);
		CHECK(cnt_counter_version_latest(c) == &c->versions[2]);
	}

	/* a counter whose only version starts later is undefined before it */
	c = cnt_defs_counter(d, "k", 1, "distance_m", 10);
	if (c != NULL) {
		CHECK_EQ_INT(c->versions[0].effective_from_ms, T_LEAP_DAY);
		CHECK(cnt_counter_version_at(c, T_LEAP_DAY - 1) == NULL);
		CHECK(cnt_counter_version_at(c, T_LEAP_DAY) == &c->versions[0]);
		CHECK_EQ_INT(c->versions[0].dedup_key, CNT_DEDUP_ITEM_MEMBER);
		CHECK_EQ_INT(c->versions[0].type, CNT_CTYPE_UNIQUE);
	}

	{
		const cnt_leaderboard *b = cnt_defs_board(d, "b1", 2);

		CHECK(b != NULL && b == cnt_defs_board_at(d, 0));
		if (b != NULL) {
			CHECK(b->counter == cnt_defs_counter(d, "acme", 4, "distance_m", 10));
			CHECK(b->tenant == cnt_defs_tenant(d, "acme", 4));
			CHECK_EQ_INT(b->window, CNT_WIN_WEEK);
			CHECK_EQ_INT(b->week_start, 6);
			CHECK_EQ_INT(b->scope_kind, CNT_SCOPE_REGION);
			CHECK_EQ_STR(b->scope_attr, "region");
			/* the latest version is max-type: higher is better */
			CHECK_EQ_INT(b->order_asc, 0);
			CHECK_EQ_INT(b->ntie_break, 2);
			CHECK_EQ_INT(b->tie_break[0], CNT_TIE_LATEST_ACHIEVER);
			CHECK_EQ_INT(b->tie_break[1], CNT_TIE_MEMBER_REF_ASC);
			CHECK_EQ_INT(b->rank_numbering, CNT_RANK_DENSE);
			CHECK_EQ_INT(b->materialised_cap, 100);
			CHECK_EQ_INT(b->freshness_budget_s, 5);
			CHECK_EQ_INT(b->hist_scale, CNT_HIST_LINEAR);
			CHECK_EQ_INT(b->hist_buckets, 64);
			CHECK_EQ_INT(b->hist_width, 1000);
			CHECK_EQ_INT(b->counter_version, 0);
		}
		b = cnt_defs_board(d, "b2", 2);
		CHECK(b != NULL);
		if (b != NULL) {
			CHECK_EQ_INT(b->window, CNT_WIN_RANGE);
			CHECK_EQ_STR(b->range_from.text, "2026-01-01T00:00:00");
			CHECK_EQ_INT(b->range_from.has_offset, 0);
			CHECK_EQ_INT(b->range_from.civil_ms, T_2026_UTC);
			CHECK_EQ_STR(b->scope_attr, "language");
			/* defaults */
			CHECK_EQ_INT(b->ntie_break, 2);
			CHECK_EQ_INT(b->tie_break[0], CNT_TIE_EARLIEST_ACHIEVER);
			CHECK_EQ_INT(b->rank_numbering, CNT_RANK_COMPETITION);
			CHECK_EQ_INT(b->materialised_cap, 10000);
			CHECK_EQ_INT(b->freshness_budget_s, 60);
			CHECK_EQ_INT(b->hist_scale, CNT_HIST_LOG);
			CHECK_EQ_INT(b->hist_buckets, 512);
			CHECK_EQ_INT(b->week_start, 0);
		}
		b = cnt_defs_board(d, "b3", 2);
		CHECK(b != NULL && b->order_asc == 1); /* min-type counter */
		CHECK(b != NULL && b->scope_kind == CNT_SCOPE_GLOBAL && b->scope_attr == NULL);
		CHECK(cnt_defs_board(d, "b4", 2) == NULL);
	}
	{
		const cnt_season *s = cnt_defs_season(d, "s1", 2);

		CHECK(s != NULL && s == cnt_defs_season_at(d, 0));
		if (s != NULL) {
			CHECK(s->board == cnt_defs_board(d, "b3", 2));
			CHECK_EQ_STR(s->timezone, "Asia/Kolkata"); /* from the tenant */
			CHECK_EQ_INT(s->state, CNT_SEASON_CLOSING);
			CHECK_EQ_INT(s->opens_at.has_offset, 0);
			CHECK_EQ_STR(s->closes_at.text, "2026-06-01T00:00:00");
		}
		s = cnt_defs_season(d, "s2", 2);
		CHECK(s != NULL);
		if (s != NULL) {
			CHECK_EQ_STR(s->timezone, "UTC");
			CHECK_EQ_INT(s->state, CNT_SEASON_OPEN);
			CHECK_EQ_INT(s->opens_at.has_offset, 1);
			CHECK_EQ_INT(s->opens_at.ms, 1772323200000LL);
			/* 2026-03-02T00:00+05:30 is 2026-03-01T18:30Z */
			CHECK_EQ_INT(s->closes_at.ms, 1772323200000LL + 18 * 3600000LL + 1800000LL);
		}
		CHECK(cnt_defs_season(d, "s3", 2) == NULL);
		CHECK(cnt_defs_season_at(d, 2) == NULL);
	}
	CHECK_EQ_STR(cnt_defs_ctype_name(CNT_CTYPE_UNIQUE), "unique");
	CHECK_EQ_STR(cnt_defs_window_name(CNT_WIN_ROLLING_24H), "rolling_24h");
	cnt_defs_free(d);
}

/* ---- the shipped example ---------------------------------------------- */

static void test_example_file(void)
{
	static const char *const paths[] = {"examples/definitions.json",
					    "../examples/definitions.json",
					    "../../examples/definitions.json", NULL};
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_defs *d = NULL;
	const cnt_counter *c;
	size_t i;

	for (i = 0; paths[i] != NULL && d == NULL; i++)
		if (access(paths[i], R_OK) == 0)
			d = cnt_defs_load(paths[i], &err);
	CHECK(d != NULL);
	if (d == NULL) {
		fprintf(stderr, "  example: %s\n", err.msg[0] ? err.msg : "not found");
		return;
	}
	CHECK_EQ_INT(cnt_defs_ntenants(d), 2);
	CHECK(cnt_defs_tenant(d, "kahani", 6) != NULL);
	CHECK_EQ_STR(cnt_defs_tenant(d, "kahani", 6)->timezone, "Asia/Kolkata");
	c = cnt_defs_counter(d, "kahani", 6, "unique_viewers", 14);
	CHECK(c != NULL && c->nversions == 2);
	if (c != NULL) {
		CHECK_EQ_INT(c->versions[0].dedup_key, CNT_DEDUP_ITEM_MEMBER);
		CHECK_EQ_INT(c->versions[1].type, CNT_CTYPE_UNIQUE);
		CHECK_EQ_INT(cnt_counter_version_at(c, T_2026_JUL_IST - 1)->version, 1);
		CHECK_EQ_INT(cnt_counter_version_at(c, T_2026_JUL_IST)->version, 2);
	}
	c = cnt_defs_counter(d, "acme", 4, "fastest_5k_ms", 13);
	CHECK(c != NULL && c->versions[0].effective_from_ms == T_2026_BERLIN);
	c = cnt_defs_counter(d, "acme", 4, "steps", 5);
	CHECK(c != NULL && c->versions[0].client_writable == 1);
	CHECK(cnt_defs_season(d, "acme-2026-spring", 16) != NULL);
	CHECK(cnt_defs_board(d, "acme-spring-5k", 14) != NULL &&
	      cnt_defs_board(d, "acme-spring-5k", 14)->order_asc == 1);
	cnt_defs_free(d);
}

/* ---- invalid documents ------------------------------------------------ */

#define HDR "{\"format\": \"cnt-definitions/1\", "
#define TEN "\"tenants\": [{\"tenant_id\": \"acme\", \"timezone\": \"UTC\"}]"
#define V1 "{\"version\": 1, \"type\": \"exact\"}"
#define CTR "\"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": [" V1 "]}]"
#define BRD "\"leaderboards\": [{\"board_id\": \"b\", \"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"window\": \"all_time\"}]"

struct bad_case {
	const char *doc;
	const char *expect; /* substring of the message */
};

static const struct bad_case bad_cases[] = {
	/* syntax and top level */
	{"{\"format\": \"cnt-definitions/1\",\n \"tenants\": [,]}", "line 2, column"},
	{"[1, 2]", "$: expected an object, got array"},
	{"{\"tenants\": []}", "$.format: required key is missing"},
	{"{\"format\": \"cnt-definitions/2\"}", "$.format: 'cnt-definitions/2' is not supported"},
	{HDR "\"tenant\": []}", "$.tenant: unknown key (did you mean 'tenants'?)"},
	{HDR "\"tenants\": {}}", "$.tenants: expected an array, got object"},
	{HDR "\"tenants\": [], \"tenants\": []}", "duplicate object key"},
	/* tenants */
	{HDR "\"tenants\": [{\"tenant_id\": \"acme\", \"timzone\": \"UTC\"}]}",
	 "$.tenants[0].timzone: unknown key (did you mean 'timezone'?)"},
	{HDR "\"tenants\": [{\"tenant_id\": \"acme\"}]}", "$.tenants[0].timezone: required key is missing"},
	{HDR "\"tenants\": [{\"tenant_id\": \"acme\", \"timezone\": \"Mars/Olympus_Mons\"}]}",
	 "$.tenants[0].timezone: unknown timezone 'Mars/Olympus_Mons'"},
	{HDR "\"tenants\": [{\"tenant_id\": \"acme\", \"timezone\": \"../../etc/passwd\"}]}",
	 "$.tenants[0].timezone: '../../etc/passwd' is not an IANA timezone name"},
	{HDR "\"tenants\": [{\"tenant_id\": \"acme\", \"timezone\": \"/etc/localtime\"}]}",
	 "$.tenants[0].timezone: '/etc/localtime' is not an IANA timezone name"},
	{HDR "\"tenants\": [{\"tenant_id\": \"acme\", \"timezone\": \"zone1970.tab\"}]}",
	 "$.tenants[0].timezone: unknown timezone 'zone1970.tab'"},
	{HDR "\"tenants\": [{\"tenant_id\": \"\", \"timezone\": \"UTC\"}]}",
	 "$.tenants[0].tenant_id: must not be empty"},
	{HDR "\"tenants\": [{\"tenant_id\": \"a/b\", \"timezone\": \"UTC\"}]}",
	 "$.tenants[0].tenant_id: contains '/'"},
	{HDR "\"tenants\": [{\"tenant_id\": 7, \"timezone\": \"UTC\"}]}",
	 "$.tenants[0].tenant_id: expected a string, got integer"},
	{HDR "\"tenants\": [{\"tenant_id\": \"acme\", \"timezone\": \"UTC\"}, "
	 "{\"tenant_id\": \"b\", \"timezone\": \"UTC\"}, {\"tenant_id\": \"acme\", \"timezone\": \"UTC\"}]}",
	 "$.tenants[2].tenant_id: duplicate tenant 'acme' (first declared at $.tenants[0])"},
	{HDR "\"tenants\": [{\"tenant_id\": \"acme\", \"timezone\": \"UTC\", \"event_quota_per_s\": -1}]}",
	 "$.tenants[0].event_quota_per_s: -1 is out of range"},
	{HDR "\"tenants\": [{\"tenant_id\": \"acme\", \"timezone\": \"UTC\", \"member_cap\": 1.5}]}",
	 "$.tenants[0].member_cap: expected an integer, got real"},
	/* counters */
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acmee\", \"counter_id\": \"laps\", \"versions\": [" V1 "]}]}",
	 "$.counters[0].tenant_id: tenant 'acmee' is not declared"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": [" V1 "]},"
	 "{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": [" V1 "]}]}",
	 "$.counters[1].counter_id: duplicate counter 'acme/laps' (first declared at $.counters[0])"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": []}]}",
	 "$.counters[0].versions: must hold at least one version"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\"}]}",
	 "$.counters[0].versions: required key is missing"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": [" V1 ","
	 "{\"version\": 2, \"effective_from\": \"2026-01-01T00:00:00Z\", \"type\": \"exact\", \"bounds_lo\": \"0\"}]}]}",
	 "$.counters[0].versions[1].bounds_lo: expected an integer, got string"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": ["
	 "{\"version\": 1, \"type\": \"median\"}]}]}",
	 "$.counters[0].versions[0].type: unknown value 'median' (expected one of exact, unique, min, max, approx)"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": ["
	 "{\"version\": 1}]}]}",
	 "$.counters[0].versions[0].type: required key is missing"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": ["
	 "{\"version\": 1, \"type\": \"exact\", \"bounds_lo\": 10, \"bounds_hi\": 5}]}]}",
	 "$.counters[0].versions[0].bounds_lo: 10 is greater than bounds_hi 5"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": [" V1 ","
	 "{\"version\": 1, \"effective_from\": \"2026-01-01T00:00:00Z\", \"type\": \"exact\"}]}]}",
	 "$.counters[0].versions[1].version: 1 does not follow version 1"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": [" V1 ","
	 "{\"version\": 2, \"type\": \"exact\"}]}]}",
	 "$.counters[0].versions[1].effective_from: required for every version but the first"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": ["
	 "{\"version\": 1, \"effective_from\": \"2026-01-01T01:00:00+01:00\", \"type\": \"exact\"},"
	 "{\"version\": 2, \"effective_from\": \"2026-01-01T00:00:00Z\", \"type\": \"exact\"}]}]}",
	 "$.counters[0].versions[1].effective_from: must be later than version 1's effective_from"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": ["
	 "{\"version\": 1, \"effective_from\": \"2026-01-01T00:00:00\", \"type\": \"exact\"}]}]}",
	 "$.counters[0].versions[0].effective_from: '2026-01-01T00:00:00': needs an offset"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": ["
	 "{\"version\": 1, \"effective_from\": \"2025-02-29T00:00:00Z\", \"type\": \"exact\"}]}]}",
	 "$.counters[0].versions[0].effective_from: '2025-02-29T00:00:00Z': date or time field out of range"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": ["
	 "{\"version\": 1, \"type\": \"exact\", \"windows\": [\"day\", \"wek\"]}]}]}",
	 "$.counters[0].versions[0].windows[1]: unknown window 'wek'"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": ["
	 "{\"version\": 1, \"type\": \"exact\", \"windows\": [\"day\", \"day\"]}]}]}",
	 "$.counters[0].versions[0].windows[1]: window 'day' is listed twice"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": ["
	 "{\"version\": 1, \"type\": \"unique\", \"dedup_key\": \"viewer\"}]}]}",
	 "$.counters[0].versions[0].dedup_key: unknown value 'viewer'"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": ["
	 "{\"version\": 1, \"type\": \"exact\", \"client_writable\": \"yes\"}]}]}",
	 "$.counters[0].versions[0].client_writable: expected true or false, got string"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": ["
	 "{\"version\": 1, \"type\": \"exact\", \"unit_cost_per_m\": -0.5}]}]}",
	 "$.counters[0].versions[0].unit_cost_per_m: must not be negative"},
	/* leaderboards */
	{HDR TEN ", " CTR ", \"leaderboards\": [{\"board_id\": \"b\", \"tenant_id\": \"acme\", "
	 "\"counter_id\": \"lap\", \"window\": \"all_time\"}, {\"board_id\": \"c\", \"tenant_id\": \"acme\", "
	 "\"counter_id\": \"laps\", \"window\": \"all_time\"}]}",
	 "$.leaderboards[0].counter_id: counter 'acme/lap' is not declared"},
	{HDR TEN ", " CTR ", " BRD ", \"seasons\": [], \"leaderboards\": []}", "duplicate object key"},
	{HDR TEN ", " CTR ", \"leaderboards\": [{\"board_id\": \"b\", \"tenant_id\": \"acme\", "
	 "\"counter_id\": \"laps\", \"window\": \"week\"}]}",
	 "$.leaderboards[0].window: 'week' is not among the windows of counter 'acme/laps' version 1"},
	{HDR TEN ", " CTR ", \"leaderboards\": [{\"board_id\": \"b\", \"tenant_id\": \"acme\", "
	 "\"counter_id\": \"laps\", \"window\": \"all_time\", \"counter_version\": 3}]}",
	 "$.leaderboards[0].counter_version: counter 'acme/laps' has no version 3"},
	{HDR TEN ", " CTR ", \"leaderboards\": [{\"board_id\": \"b\", \"tenant_id\": \"acme\", "
	 "\"counter_id\": \"laps\", \"window\": \"all_time\", \"tie_break\": [\"earliest_achiever\", \"latest_achiever\"]}]}",
	 "$.leaderboards[0].tie_break[1]: 'latest_achiever' contradicts 'earliest_achiever'"},
	{HDR TEN ", " CTR ", \"leaderboards\": [{\"board_id\": \"b\", \"tenant_id\": \"acme\", "
	 "\"counter_id\": \"laps\", \"window\": \"all_time\", \"tie_break\": [\"member_ref_asc\", \"earliest_achiever\"]}]}",
	 "$.leaderboards[0].tie_break[1]: 'earliest_achiever' can never apply after member_ref_asc"},
	{HDR TEN ", " CTR ", \"leaderboards\": [{\"board_id\": \"b\", \"tenant_id\": \"acme\", "
	 "\"counter_id\": \"laps\", \"window\": \"all_time\", \"tie_break\": [\"fastest\"]}]}",
	 "$.leaderboards[0].tie_break[0]: unknown rule 'fastest'"},
	{HDR TEN ", " CTR ", \"leaderboards\": [{\"board_id\": \"b\", \"tenant_id\": \"acme\", "
	 "\"counter_id\": \"laps\", \"window\": \"all_time\", \"scope_kind\": \"cohort\"}]}",
	 "$.leaderboards[0].scope_attr: required with scope_kind 'cohort'"},
	{HDR TEN ", " CTR ", \"leaderboards\": [{\"board_id\": \"b\", \"tenant_id\": \"acme\", "
	 "\"counter_id\": \"laps\", \"window\": \"all_time\", \"scope_attr\": \"region\"}]}",
	 "$.leaderboards[0].scope_attr: not allowed with scope_kind 'global'"},
	{HDR TEN ", " CTR ", \"leaderboards\": [{\"board_id\": \"b\", \"tenant_id\": \"acme\", "
	 "\"counter_id\": \"laps\", \"window\": \"all_time\", \"histogram\": {\"scale\": \"log\", \"buckets\": 65537}}]}",
	 "$.leaderboards[0].histogram.buckets: 65537 is out of range [1, 65536]"},
	{HDR TEN ", " CTR ", \"leaderboards\": [{\"board_id\": \"b\", \"tenant_id\": \"acme\", "
	 "\"counter_id\": \"laps\", \"window\": \"all_time\", \"histogram\": {\"scale\": \"log\", \"width\": 10}}]}",
	 "$.leaderboards[0].histogram.width: only allowed with scale 'linear'"},
	{HDR TEN ", " CTR ", \"leaderboards\": [{\"board_id\": \"b\", \"tenant_id\": \"acme\", "
	 "\"counter_id\": \"laps\", \"window\": \"all_time\", \"week_start\": \"mon\"}]}",
	 "$.leaderboards[0].week_start: unknown value 'mon'"},
	{HDR TEN ", \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"versions\": ["
	 "{\"version\": 1, \"type\": \"exact\", \"windows\": [\"range\"]}]}], \"leaderboards\": [{\"board_id\": \"b\", "
	 "\"tenant_id\": \"acme\", \"counter_id\": \"laps\", \"window\": \"range\", \"from\": \"2026-01-01T00:00:00\"}]}",
	 "$.leaderboards[0].window: window 'range' needs both 'from' and 'to'"},
	{HDR TEN ", " CTR ", \"leaderboards\": [{\"board_id\": \"b\", \"tenant_id\": \"acme\", "
	 "\"counter_id\": \"laps\", \"window\": \"all_time\", \"to\": \"2026-01-01T00:00:00\"}]}",
	 "$.leaderboards[0].to: only allowed with window 'range'"},
	{HDR TEN ", " CTR ", \"leaderboards\": [{\"board_id\": \"b\", \"tenant_id\": \"acme\", "
	 "\"counter_id\": \"laps\", \"window\": \"all_time\"}, {\"board_id\": \"b\", \"tenant_id\": \"acme\", "
	 "\"counter_id\": \"laps\", \"window\": \"all_time\"}]}",
	 "$.leaderboards[1].board_id: duplicate leaderboard 'b'"},
	/* seasons */
	{HDR TEN ", " CTR ", " BRD ", \"seasons\": [{\"season_id\": \"s\", \"board_id\": \"nope\", "
	 "\"opens_at\": \"2026-01-01T00:00:00\", \"closes_at\": \"2026-02-01T00:00:00\"}]}",
	 "$.seasons[0].board_id: leaderboard 'nope' is not declared"},
	{HDR TEN ", " CTR ", " BRD ", \"seasons\": [{\"season_id\": \"s\", \"board_id\": \"b\", "
	 "\"opens_at\": \"2026-02-01T00:00:00\", \"closes_at\": \"2026-01-01T00:00:00\"}]}",
	 "$.seasons[0].closes_at: must be later than opens_at"},
	{HDR TEN ", " CTR ", " BRD ", \"seasons\": [{\"season_id\": \"s\", \"board_id\": \"b\", "
	 "\"opens_at\": \"2026-01-01T00:00:00Z\", \"closes_at\": \"2026-01-01T00:30:00+01:00\"}]}",
	 "$.seasons[0].closes_at: must be later than opens_at"},
	{HDR TEN ", " CTR ", " BRD ", \"seasons\": [{\"season_id\": \"s\", \"board_id\": \"b\", "
	 "\"opens_at\": \"2026-01-01\", \"closes_at\": \"2026-02-01T00:00:00\"}]}",
	 "$.seasons[0].opens_at: '2026-01-01': expected an RFC 3339 time"},
	{HDR TEN ", " CTR ", " BRD ", \"seasons\": [{\"season_id\": \"s\", \"board_id\": \"b\", "
	 "\"opens_at\": \"2026-01-01T00:00:00\", \"closes_at\": \"2026-02-01T00:00:00\", \"state\": \"sealed\"}]}",
	 "$.seasons[0].state: unknown value 'sealed' (expected one of open, closing, closed)"},
	{HDR TEN ", " CTR ", " BRD ", \"seasons\": [{\"season_id\": \"s\", \"board_id\": \"b\", "
	 "\"opens_at\": \"2026-01-01T00:00:00\", \"closes_at\": \"2026-02-01T00:00:00\", \"timezone\": \"Europe/Berlln\"}]}",
	 "$.seasons[0].timezone: unknown timezone 'Europe/Berlln'"},
	{HDR TEN ", " CTR ", " BRD ", \"seasons\": [{\"season_id\": \"s\", \"board_id\": \"b\", "
	 "\"opens_at\": \"2026-01-01T00:00:00\", \"closes_at\": \"2026-02-01T00:00:00Z\"}]}",
	 "$.seasons[0].closes_at: opens_at and closes_at must both carry an offset or both be local"},
	{HDR TEN ", " CTR ", " BRD ", \"seasons\": [{\"season_id\": \"s\", \"board_id\": \"b\", "
	 "\"opens_at\": \"2026-01-01T00:00:00\", \"closes_at\": \"2026-02-01T00:00:00\"}, "
	 "{\"season_id\": \"s\", \"board_id\": \"b\", "
	 "\"opens_at\": \"2026-01-01T00:00:00\", \"closes_at\": \"2026-02-01T00:00:00\"}]}",
	 "$.seasons[1].season_id: duplicate season 's' (first declared at $.seasons[0])"},
	/* probe tenants: a boolean, and no board may rank their counters */
	{HDR "\"tenants\": [{\"tenant_id\": \"acme\", \"timezone\": \"UTC\", \"probe\": 1}]}",
	 "$.tenants[0].probe: expected true or false, got integer"},
	{HDR "\"tenants\": [{\"tenant_id\": \"acme\", \"timezone\": \"UTC\", \"probe\": true}], " CTR ", " BRD "}",
	 "$.leaderboards[0].tenant_id: tenant 'acme' is a probe tenant (\"probe\": true): no leaderboard may rank its counters"},
};

static void test_invalid_documents(void)
{
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		cnt_err err = {"", CNT_ERR_DATA};
		cnt_defs *d = parse_str(bad_cases[i].doc, &err);

		if (d != NULL) {
			fprintf(stderr, "bad case %zu loaded (expected '%s')\n", i, bad_cases[i].expect);
			unit_failed_checks++;
			cnt_defs_free(d);
			continue;
		}
		if (strstr(err.msg, bad_cases[i].expect) == NULL ||
		    strncmp(err.msg, "definitions 't.json': ", 22) != 0) {
			fprintf(stderr, "bad case %zu: got '%s', expected '%s'\n", i, err.msg,
				bad_cases[i].expect);
			unit_failed_checks++;
		}
	}
	CHECK(sizeof(bad_cases) / sizeof(bad_cases[0]) >= 15);
}

/* Every case above must be the only thing wrong: the same document with the
 * minimal valid sections loads.  This guards the fixtures themselves. */
static void test_minimal_docs_load(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_defs *d = parse_str(HDR TEN ", " CTR ", " BRD ", \"seasons\": [{\"season_id\": \"s\", "
				"\"board_id\": \"b\", \"opens_at\": \"2026-01-01T00:00:00\", "
				"\"closes_at\": \"2026-02-01T00:00:00\", \"comment\": \"ok\"}]}", &err);

	CHECK(d != NULL);
	if (d == NULL)
		fprintf(stderr, "  %s\n", err.msg);
	else {
		const cnt_counter_version *v = cnt_counter_version_at(cnt_defs_counter_at(d, 0), 0);

		/* defaults of a version that gives only version and type */
		CHECK(v != NULL);
		if (v != NULL) {
			CHECK_EQ_INT(v->windows, CNT_WIN_BIT(CNT_WIN_ALL_TIME));
			CHECK_EQ_INT(v->effective_from_ms, INT64_MIN);
			CHECK_EQ_INT(v->lateness_horizon_s, 3600);
			CHECK_EQ_INT(v->dedup_horizon_s, 86400);
			CHECK_EQ_INT(v->client_writable, 0);
			CHECK(v->unit_cost_per_m == 0.0);
		}
	}
	cnt_defs_free(d);
	d = parse_str("{\"format\": \"cnt-definitions/1\"}", &err);
	CHECK(d != NULL && cnt_defs_ntenants(d) == 0 && cnt_defs_tenant(d, "x", 1) == NULL &&
	      cnt_defs_counter(d, "x", 1, "y", 1) == NULL);
	cnt_defs_free(d);
}

/* A probe tenant with counters and no board loads; probe defaults to 0. */
static void test_probe_tenant(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_defs *d = parse_str(HDR "\"tenants\": [{\"tenant_id\": \"acme\", \"timezone\": \"UTC\", "
				"\"probe\": true}, {\"tenant_id\": \"real\", \"timezone\": \"UTC\", "
				"\"probe\": false}], " CTR "}", &err);

	CHECK(d != NULL);
	if (d == NULL) {
		fprintf(stderr, "  %s\n", err.msg);
		return;
	}
	CHECK_EQ_INT(cnt_defs_tenant(d, "acme", 4)->probe, 1);
	CHECK_EQ_INT(cnt_defs_tenant(d, "real", 4)->probe, 0);
	cnt_defs_free(d);
	d = parse_str(HDR TEN "}", &err);
	CHECK(d != NULL && cnt_defs_tenant(d, "acme", 4)->probe == 0);
	cnt_defs_free(d);
}

/* Long ids and many entries exercise the hash tables against a linear scan. */
static void test_many_counters(void)
{
	cnt_buf b = CNT_BUF_INIT;
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_defs *d;
	int i, ok = 1;
	char id[32];

	cnt_buf_printf(&b, "{\"format\": \"cnt-definitions/1\", \"tenants\": [");
	for (i = 0; i < 40; i++)
		cnt_buf_printf(&b, "%s{\"tenant_id\": \"t%d\", \"timezone\": \"UTC\"}", i ? "," : "", i);
	cnt_buf_printf(&b, "], \"counters\": [");
	for (i = 0; i < 2000; i++)
		cnt_buf_printf(&b, "%s{\"tenant_id\": \"t%d\", \"counter_id\": \"c%d\", \"versions\": "
			       "[{\"version\": %d, \"type\": \"exact\"}]}", i ? "," : "", i % 40, i, i + 1);
	cnt_buf_printf(&b, "]}");
	d = cnt_defs_parse((const char *)b.p, b.len, "many", &err);
	CHECK(d != NULL);
	if (d != NULL) {
		for (i = 0; i < 2000; i++) {
			char tid[16];
			const cnt_counter *c;

			snprintf(tid, sizeof(tid), "t%d", i % 40);
			snprintf(id, sizeof(id), "c%d", i);
			c = cnt_defs_counter(d, tid, strlen(tid), id, strlen(id));
			if (c == NULL || c != cnt_defs_counter_at(d, (size_t)i) ||
			    c->versions[0].version != i + 1)
				ok = 0;
			snprintf(tid, sizeof(tid), "t%d", (i + 1) % 40);
			if (cnt_defs_counter(d, tid, strlen(tid), id, strlen(id)) != NULL)
				ok = 0;
		}
		CHECK(ok);
	}
	cnt_defs_free(d);
	cnt_buf_release(&b);
}

static void test_tzdir(void)
{
	char dir[] = "/tmp/cnt_tzdir_XXXXXX", path[128];
	const char *old = getenv("TZDIR");
	char *saved = old ? strdup(old) : NULL;
	cnt_err err = {"", CNT_ERR_DATA};
	FILE *f;

	if (mkdtemp(dir) == NULL) {
		CHECK(0);
		free(saved);
		return;
	}
	snprintf(path, sizeof(path), "%s/Test", dir);
	CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/Test/Good", dir);
	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (f) {
		fputs("TZif2...", f);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/Test/Bad", dir);
	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (f) {
		fputs("nope", f);
		fclose(f);
	}
	setenv("TZDIR", dir, 1);
	CHECK_EQ_INT(cnt_defs_check_timezone("Test/Good", &err), 0);
	CHECK_EQ_INT(cnt_defs_check_timezone("Test/Bad", &err), -1);
	CHECK(strstr(err.msg, "not a TZif file") != NULL);
	CHECK_EQ_INT(cnt_defs_check_timezone("Test", &err), -1); /* a directory */
	CHECK_EQ_INT(cnt_defs_check_timezone("Europe/Berlin", &err), -1); /* not in this TZDIR */
	if (saved)
		setenv("TZDIR", saved, 1);
	else
		unsetenv("TZDIR");
	CHECK_EQ_INT(cnt_defs_check_timezone("Europe/Berlin", &err), 0);
	CHECK_EQ_INT(cnt_defs_check_timezone("Asia/Kolkata", &err), 0);
	CHECK_EQ_INT(cnt_defs_check_timezone("", &err), -1);
	CHECK_EQ_INT(cnt_defs_check_timezone("Europe/../Europe/Berlin", &err), -1);
	snprintf(path, sizeof(path), "%s/Test/Good", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/Test/Bad", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/Test", dir);
	rmdir(path);
	rmdir(dir);
	free(saved);
}


/* ---- dimensions (part of the version, so of its fingerprint) ---------- */

static const char dims_doc[] =
	"{\"format\": \"cnt-definitions/1\", \"tenants\": [{\"tenant_id\": \"t\", \"timezone\": \"UTC\"}],"
	" \"counters\": [{\"tenant_id\": \"t\", \"counter_id\": \"views\", \"versions\": ["
	"  {\"version\": 1, \"type\": \"unique\"},"
	"  {\"version\": 2, \"effective_from\": \"2026-01-01T00:00:00Z\", \"type\": \"unique\", \"dimensions\": %s}]}]}";

static cnt_defs *dims(const char *arr, cnt_err *err)
{
	char doc[1024];

	snprintf(doc, sizeof(doc), dims_doc, arr);
	return parse_str(doc, err);
}

static void test_dimensions(void)
{
	static const struct {
		const char *arr, *msg;
	} bad[] = {
		{"[\"a\", \"b\", \"c\", \"d\", \"e\"]", "$.counters[0].versions[1].dimensions: lists 5 dimensions (at most 4)"},
		{"[\"a\", \"a\"]", "$.counters[0].versions[1].dimensions[1]: dimension 'a' is listed twice"},
		{"[\"\"]", "$.counters[0].versions[1].dimensions[0]: must be 1 to 64 bytes, without NUL"},
		{"[\"a\\u0000b\"]", "is not allowed"},   /* jansson refuses NUL */
		{"[7]", "$.counters[0].versions[1].dimensions[0]: expected a string (an attrs key), got integer"},
		{"\"country\"", "$.counters[0].versions[1].dimensions: expected an array, got string"},
	};
	cnt_err err;
	cnt_defs *d = dims("[\"country\", \"device\", \"source\", \"creator\"]", &err);
	const cnt_counter *c;
	json_t *j1, *j2;

	CHECK(d != NULL);
	if (d == NULL)
		return;
	c = cnt_defs_counter(d, "t", 1, "views", 5);
	CHECK_EQ_INT((int)c->versions[0].ndimensions, 0);
	CHECK_EQ_INT((int)c->versions[1].ndimensions, 4);
	CHECK_EQ_STR(c->versions[1].dimensions[0], "country");
	CHECK_EQ_STR(c->versions[1].dimensions[3], "creator");
	/* in the fingerprint's definition only when declared */
	j1 = cnt_fp_counter_def(c, &c->versions[0]);
	j2 = cnt_fp_counter_def(c, &c->versions[1]);
	CHECK(j1 != NULL && j2 != NULL);
	CHECK(json_object_get(j1, "dimensions") == NULL);
	CHECK(json_array_size(json_object_get(j2, "dimensions")) == 4);
	CHECK_EQ_STR(json_string_value(json_array_get(json_object_get(j2, "dimensions"), 1)), "device");
	json_decref(j1);
	json_decref(j2);
	cnt_defs_free(d);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		d = dims(bad[i].arr, &err);
		CHECK(d == NULL);
		cnt_defs_free(d);
		if (strstr(err.msg, bad[i].msg) == NULL) {
			fprintf(stderr, "%s: got '%s'\n", bad[i].arr, err.msg);
			CHECK(0);
		}
	}
}

static const char mono_doc[] =
	"{\"format\": \"cnt-definitions/1\", %s \"tenants\": [{\"tenant_id\": \"t\", \"timezone\": \"UTC\"}],"
	" \"counters\": [{\"tenant_id\": \"t\", \"counter_id\": \"c\", \"versions\": ["
	"  {\"version\": 1, \"type\": \"exact\"},"
	"  {\"version\": 2, \"effective_from\": \"2026-01-01T00:00:00Z\", %s}]}]}";

static cnt_defs *mono(const char *top, const char *v2, cnt_err *err)
{
	char doc[1024];

	snprintf(doc, sizeof(doc), mono_doc, top, v2);
	return parse_str(doc, err);
}

/* monotonic (exact only, bounds_lo 0 by default, in the fingerprint only
 * when declared) and unit_costs (a version's default price). */
static void test_monotonic_costs(void)
{
	static const struct {
		const char *top, *v2, *msg;
	} bad[] = {
		{"", "\"type\": \"unique\", \"monotonic\": true",
		 "$.counters[0].versions[1].monotonic: a unique counter cannot be monotonic"},
		{"", "\"type\": \"max\", \"monotonic\": true", "a max counter cannot be monotonic"},
		{"", "\"type\": \"exact\", \"monotonic\": true, \"bounds_lo\": -5",
		 "$.counters[0].versions[1].bounds_lo: -5 contradicts \"monotonic\": true"},
		{"", "\"type\": \"exact\", \"monotonic\": \"yes\"", "monotonic: expected true or false"},
		{"\"unit_costs\": {\"exactly\": 1},", "\"type\": \"exact\"",
		 "$.unit_costs.exactly: 'exactly' is not a counter type"},
		{"\"unit_costs\": {\"exact\": \"1\"},", "\"type\": \"exact\"",
		 "$.unit_costs.exact: expected a number"},
		{"\"unit_costs\": {\"exact\": -1},", "\"type\": \"exact\"",
		 "$.unit_costs.exact: must be a price from 0 to 1e12"},
	};
	cnt_err err;
	cnt_defs *d = mono("\"unit_costs\": {\"exact\": 2.5, \"unique\": 7},",
			   "\"type\": \"exact\", \"monotonic\": true, \"unit_cost_per_m\": 1", &err);
	const cnt_counter *c;
	json_t *j1, *j2;
	double p;

	CHECK(d != NULL);
	if (d == NULL)
		return;
	c = cnt_defs_counter(d, "t", 1, "c", 1);
	CHECK(!c->versions[0].monotonic && c->versions[1].monotonic);
	CHECK(c->versions[1].bounds_lo == 0 && c->versions[0].bounds_lo == INT64_MIN);
	CHECK(c->versions[0].unit_cost_per_m == 2.5 && !c->versions[0].unit_cost_declared);
	CHECK(c->versions[1].unit_cost_per_m == 1 && c->versions[1].unit_cost_declared);
	CHECK(cnt_defs_unit_cost(d, CNT_CTYPE_UNIQUE, &p) == 1 && p == 7);
	CHECK(cnt_defs_unit_cost(d, CNT_CTYPE_MIN, &p) == 0 && p == 0);
	CHECK(cnt_defs_ctype_monotonic(CNT_CTYPE_EXACT) && !cnt_defs_ctype_monotonic(CNT_CTYPE_UNIQUE));
	j1 = cnt_fp_counter_def(c, &c->versions[0]);
	j2 = cnt_fp_counter_def(c, &c->versions[1]);
	CHECK(j1 != NULL && j2 != NULL);
	CHECK(json_object_get(j1, "monotonic") == NULL);
	CHECK(json_is_true(json_object_get(j2, "monotonic")));
	json_decref(j1);
	json_decref(j2);
	cnt_defs_free(d);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		d = mono(bad[i].top, bad[i].v2, &err);
		CHECK(d == NULL);
		cnt_defs_free(d);
		if (d == NULL && strstr(err.msg, bad[i].msg) == NULL) {
			fprintf(stderr, "%s: got '%s'\n", bad[i].v2, err.msg);
			CHECK(0);
		}
	}
}

static const char tol_doc[] =
	"{\"format\": \"cnt-definitions/1\", \"tenants\": [{\"tenant_id\": \"t\", \"timezone\": \"UTC\"}],"
	" \"counters\": [{\"tenant_id\": \"t\", \"counter_id\": \"c\", \"versions\": ["
	"  {\"version\": 1, \"type\": \"unique\"},"
	"  {\"version\": 2, \"effective_from\": \"2026-01-01T00:00:00Z\", \"type\": \"%s\", \"tolerated_error\": %s}]}]}";

static cnt_defs *tol(const char *type, const char *e, cnt_err *err)
{
	char doc[1024];

	snprintf(doc, sizeof(doc), tol_doc, type, e);
	return parse_str(doc, err);
}

/* tolerated_error: the precision it sets, its refusals, its place in the
 * fingerprint (only when declared). */
static void test_tolerated_error(void)
{
	static const struct {
		const char *e;
		int p;
	} ok[] = {
		{"0.5", 5}, {"0.3", 6}, {"0.1", 9}, {"0.05", 11}, {"0.02", 14}, {"0.0159", 15},
		{"0.016", 14}, {"0.01", 16}, {"0.006", 17}, {"0.005", 18}, {"0.004", 18}, {"1e-2", 16},
	};
	static const struct {
		const char *type, *e, *msg;
	} bad[] = {
		{"unique", "0.003", "$.counters[0].versions[1].tolerated_error: 0.003 needs HLL++ precision 19; the highest is 18, whose error at 95 % is 0.0040"},
		{"unique", "0.0001", "0.0001 needs HLL++ precision 29;"},
		{"unique", "0", "tolerated_error: 0 is out of range (0, 0.5]"},
		{"unique", "0.50001", "tolerated_error: 0.50001 is out of range (0, 0.5]"},
		{"unique", "-1", "out of range"},
		{"unique", "\"0.1\"", "tolerated_error: expected a number, got string"},
		{"exact", "0.1", "tolerated_error: not allowed for a counter of type exact (it counts exactly)"},
		{"min", "0.1", "not allowed for a counter of type min"},
		{"max", "0.1", "not allowed for a counter of type max"},
	};
	cnt_err err;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cnt_defs *d = tol("unique", ok[i].e, &err);
		const cnt_counter *c;
		json_t *j1, *j2;

		CHECK(d != NULL);
		if (d == NULL) {
			fprintf(stderr, "%s: %s\n", ok[i].e, err.msg);
			continue;
		}
		c = cnt_defs_counter(d, "t", 1, "c", 1);
		CHECK_EQ_INT(c->versions[0].hll_precision, 14);
		CHECK(c->versions[0].tolerated_error == 0);
		CHECK_EQ_INT(c->versions[1].hll_precision, ok[i].p);
		CHECK(c->versions[1].tolerated_error == strtod(ok[i].e, NULL));
		j1 = cnt_fp_counter_def(c, &c->versions[0]);
		j2 = cnt_fp_counter_def(c, &c->versions[1]);
		CHECK(j1 != NULL && j2 != NULL);
		CHECK(json_object_get(j1, "tolerated_error") == NULL);
		CHECK(json_real_value(json_object_get(j2, "tolerated_error")) == strtod(ok[i].e, NULL));
		json_decref(j1);
		json_decref(j2);
		cnt_defs_free(d);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cnt_defs *d = tol(bad[i].type, bad[i].e, &err);

		CHECK(d == NULL);
		cnt_defs_free(d);
		if (d == NULL && strstr(err.msg, bad[i].msg) == NULL) {
			fprintf(stderr, "%s %s: got '%s'\n", bad[i].type, bad[i].e, err.msg);
			CHECK(0);
		}
	}
}

static void test_load_errors(void)
{
	cnt_err err = {"", CNT_ERR_DATA};

	CHECK(cnt_defs_load("/nonexistent/defs.json", &err) == NULL);
	CHECK(strstr(err.msg, "definitions '/nonexistent/defs.json': ") != NULL);
	/* truncated input: a syntax error with a position, never a crash */
	CHECK(cnt_defs_parse(valid_doc, 200, "cut", &err) == NULL);
	CHECK(strstr(err.msg, "definitions 'cut': line ") != NULL);
}

int main(void)
{
	RUN(test_valid_lookups);
	RUN(test_example_file);
	RUN(test_invalid_documents);
	RUN(test_minimal_docs_load);
	RUN(test_probe_tenant);
	RUN(test_many_counters);
	RUN(test_tzdir);
	RUN(test_load_errors);
	RUN(test_dimensions);
	RUN(test_monotonic_costs);
	RUN(test_tolerated_error);
	return unit_report("test_defs");
}
