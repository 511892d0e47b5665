/*
 * test_board.c - building a board's views (view/board.h): the window of
 * every kind at an instant in Berlin (with its DST changes), seasons
 * named, found or missing and their own timezones, ranges rounded up to
 * buckets; the scopes a board takes; the scopes file; writing and
 * publishing versions, and the board-wide pointer operations.
 *
 * The expected instants are worked out by hand from the Berlin offsets
 * (CET +01:00, CEST +02:00 from 2026-03-29T01:00Z, CET again from
 * 2026-10-25T01:00Z) and Kolkata's +05:30; tests/project.bats checks the
 * same windows end to end against Python's zoneinfo.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "time/timefmt.h"
#include "unit.h"
#include "view/board.h"
#include "view/view.h"

static const char defs_json[] =
	"{\"format\": \"cnt-definitions/1\","
	" \"tenants\": [{\"tenant_id\": \"ber\", \"timezone\": \"Europe/Berlin\"}],"
	" \"counters\": [{\"tenant_id\": \"ber\", \"counter_id\": \"pts\", \"versions\": [{\"version\": 1, \"type\": \"exact\","
	"   \"windows\": [\"all_time\", \"day\", \"week\", \"month\", \"rolling_24h\", \"last_30d\", \"range\", \"season\"]},"
	"   {\"version\": 2, \"type\": \"max\", \"effective_from\": \"2026-01-01T00:00:00Z\","
	"   \"windows\": [\"all_time\", \"day\", \"week\", \"month\", \"rolling_24h\", \"last_30d\", \"range\", \"season\"]}]}],"
	" \"leaderboards\": ["
	"  {\"board_id\": \"all\", \"tenant_id\": \"ber\", \"counter_id\": \"pts\", \"window\": \"all_time\"},"
	"  {\"board_id\": \"v1\", \"tenant_id\": \"ber\", \"counter_id\": \"pts\", \"counter_version\": 1, \"window\": \"all_time\"},"
	"  {\"board_id\": \"day\", \"tenant_id\": \"ber\", \"counter_id\": \"pts\", \"window\": \"day\"},"
	"  {\"board_id\": \"week\", \"tenant_id\": \"ber\", \"counter_id\": \"pts\", \"window\": \"week\", \"week_start\": \"sunday\"},"
	"  {\"board_id\": \"month\", \"tenant_id\": \"ber\", \"counter_id\": \"pts\", \"window\": \"month\"},"
	"  {\"board_id\": \"r24\", \"tenant_id\": \"ber\", \"counter_id\": \"pts\", \"window\": \"rolling_24h\"},"
	"  {\"board_id\": \"d30\", \"tenant_id\": \"ber\", \"counter_id\": \"pts\", \"window\": \"last_30d\"},"
	"  {\"board_id\": \"range\", \"tenant_id\": \"ber\", \"counter_id\": \"pts\", \"window\": \"range\","
	"   \"from\": \"2026-03-28T22:00:00\", \"to\": \"2026-03-29T03:30:00\"},"
	"  {\"board_id\": \"season\", \"tenant_id\": \"ber\", \"counter_id\": \"pts\", \"window\": \"season\"},"
	"  {\"board_id\": \"coh\", \"tenant_id\": \"ber\", \"counter_id\": \"pts\", \"window\": \"all_time\","
	"   \"scope_kind\": \"cohort\", \"scope_attr\": \"div\"}],"
	" \"seasons\": ["
	"  {\"season_id\": \"s1\", \"board_id\": \"season\", \"opens_at\": \"2026-03-01T00:00:00\", \"closes_at\": \"2026-04-01T00:00:00\"},"
	"  {\"season_id\": \"s2\", \"board_id\": \"season\", \"opens_at\": \"2026-04-01T00:00:00+02:00\","
	"   \"closes_at\": \"2026-05-01T00:00:00+02:00\"},"
	"  {\"season_id\": \"s3\", \"board_id\": \"season\", \"timezone\": \"Asia/Kolkata\","
	"   \"opens_at\": \"2026-06-01T00:00:00\", \"closes_at\": \"2026-07-01T00:00:00\"}]}";

static cnt_defs *defs;
static char tmpdir[] = "/tmp/test_board.XXXXXX";

static int64_t t(const char *rfc3339)
{
	int64_t ms = 0;

	if (cnt_time_parse_arg(rfc3339, &ms) != 0) {
		fprintf(stderr, "bad time %s\n", rfc3339);
		exit(1);
	}
	return ms;
}

static const cnt_leaderboard *board(const char *id)
{
	return cnt_defs_board(defs, id, strlen(id));
}

/* The window of board id at now is [from, to) with label. */
static int window_is(const char *id, const char *now, const char *season, const char *from, const char *to,
	const char *label)
{
	cnt_tz_cache *tzc = cnt_tz_cache_new();
	int64_t f = 0, e = 0;
	const char *l = NULL;
	cnt_err err;
	int ok;

	if (cnt_board_window(defs, board(id), tzc, t(now), season, &f, &e, &l, &err) != 0) {
		fprintf(stderr, "%s at %s: %s\n", id, now, err.msg);
		cnt_tz_cache_free(tzc);
		return 0;
	}
	ok = f == t(from) && e == t(to) && strcmp(l, label) == 0;
	if (!ok)
		fprintf(stderr, "%s at %s: [%lld, %lld) %s\n", id, now, (long long)f, (long long)e, l);
	cnt_tz_cache_free(tzc);
	return ok;
}

static void test_windows(void)
{
	cnt_tz_cache *tzc = cnt_tz_cache_new();
	int64_t f, e;
	const char *l;
	cnt_err err;

	CHECK_EQ_INT(cnt_board_window(defs, board("all"), tzc, 0, NULL, &f, &e, &l, &err), 0);
	CHECK(f == CNT_TZ_MIN_MS && e == CNT_TZ_MAX_MS && strcmp(l, "all_time") == 0);
	cnt_tz_cache_free(tzc);
	/* the local day; the 23-hour day of the spring forward */
	CHECK(window_is("day", "2026-03-10T12:00:00Z", NULL, "2026-03-09T23:00:00Z", "2026-03-10T23:00:00Z", "day"));
	CHECK(window_is("day", "2026-03-29T12:00:00Z", NULL, "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z", "day"));
	/* at local midnight exactly the new day starts */
	CHECK(window_is("day", "2026-03-09T23:00:00Z", NULL, "2026-03-09T23:00:00Z", "2026-03-10T23:00:00Z", "day"));
	/* a week from Sunday: Sunday 8 March to Sunday 15 March */
	CHECK(window_is("week", "2026-03-11T12:00:00Z", NULL, "2026-03-07T23:00:00Z", "2026-03-14T23:00:00Z", "week"));
	/* March: 31 days, 743 hours */
	CHECK(window_is("month", "2026-03-31T21:30:00Z", NULL, "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z", "month"));
	/* 24 h back from the end of the hour of now - 1 ms */
	CHECK(window_is("r24", "2026-03-10T12:30:00Z", NULL, "2026-03-09T13:00:00Z", "2026-03-10T13:00:00Z", "rolling_24h"));
	CHECK(window_is("r24", "2026-03-10T12:00:00Z", NULL, "2026-03-09T12:00:00Z", "2026-03-10T12:00:00Z", "rolling_24h"));
	/* 30 local days ending with today, across the spring forward */
	CHECK(window_is("d30", "2026-04-10T12:00:00Z", NULL, "2026-03-11T23:00:00Z", "2026-04-10T22:00:00Z", "last_30d"));
	/* local times across the gap; the end rounded up to 04:00 CEST */
	CHECK(window_is("range", "2020-01-01T00:00:00Z", NULL, "2026-03-28T21:00:00Z", "2026-03-29T02:00:00Z", "range"));
	/* seasons: open at now, named, in their own zone */
	CHECK(window_is("season", "2026-03-15T00:00:00Z", NULL, "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z", "s1"));
	CHECK(window_is("season", "2026-03-15T00:00:00Z", "s2", "2026-03-31T22:00:00Z", "2026-04-30T22:00:00Z", "s2"));
	CHECK(window_is("season", "2026-06-15T00:00:00Z", NULL, "2026-05-31T19:00:00Z", "2026-06-30T19:00:00Z", "s3"));
	/* none open, or an unknown name */
	tzc = cnt_tz_cache_new();
	CHECK_EQ_INT(cnt_board_window(defs, board("season"), tzc, t("2026-02-01T00:00:00Z"), NULL, &f, &e, &l, &err), -1);
	CHECK_EQ_STR(err.msg, "board 'season' has no season open at --now; name one with --season");
	CHECK_EQ_INT(cnt_board_window(defs, board("season"), tzc, t("2026-03-15T00:00:00Z"), "s9", &f, &e, &l, &err), -1);
	CHECK_EQ_STR(err.msg, "board 'season' has no season 's9'");
	/* --season is ignored for other windows */
	CHECK_EQ_INT(cnt_board_window(defs, board("day"), tzc, t("2026-03-10T12:00:00Z"), "s9", &f, &e, &l, &err), 0);
	cnt_tz_cache_free(tzc);
}

static char *write_tmp(const char *name, const char *text)
{
	static char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (f == NULL)
		exit(1);
	fputs(text, f);
	fclose(f);
	return path;
}

static void test_begin_and_scopes(void)
{
	cnt_board_build bb;
	cnt_err err;
	int64_t now = t("2026-03-10T12:00:00Z");
	char *sc;

	CHECK_EQ_INT(cnt_board_begin(&bb, defs, "d.json", "nope", &now, NULL, NULL, NULL, &err), -1);
	CHECK_EQ_STR(err.msg, "board 'nope' is not declared in 'd.json'");
	CHECK_EQ_INT(cnt_board_begin(&bb, defs, "d.json", "all", &now, NULL, "x.csv", NULL, &err), -1);
	CHECK_EQ_STR(err.msg, "board 'all' is global: --scopes and --scopes-from are for region and cohort boards");
	CHECK_EQ_INT(cnt_board_begin(&bb, defs, "d.json", "coh", &now, NULL, NULL, NULL, &err), -1);
	CHECK_EQ_STR(err.msg, "board 'coh' is scoped by cohort: give --scopes FILE");
	{
		int64_t feb = t("2026-02-01T00:00:00Z");

		CHECK_EQ_INT(cnt_board_begin(&bb, defs, "d.json", "season", &feb, NULL, NULL, NULL, &err), -1);
		CHECK(strstr(err.msg, "no season open") != NULL);
		CHECK(bb.proj == NULL && bb.tzc == NULL);   /* released */
	}
	/* the counter type is the pinned version's, else the latest's */
	CHECK_EQ_INT(cnt_board_begin(&bb, defs, "d.json", "all", &now, NULL, NULL, NULL, &err), 0);
	CHECK_EQ_INT(bb.ctype, CNT_CTYPE_MAX);
	CHECK_EQ_INT(bb.now, now);
	cnt_board_end(&bb);
	cnt_board_end(&bb);   /* twice is harmless */
	CHECK_EQ_INT(cnt_board_begin(&bb, defs, "d.json", "v1", NULL, NULL, NULL, NULL, &err), 0);
	CHECK_EQ_INT(bb.ctype, CNT_CTYPE_EXACT);
	CHECK(bb.now > t("2025-01-01T00:00:00Z"));   /* the clock */
	cnt_board_end(&bb);
	/* the scopes file: a header, CR LF, empty lines, the last comma, the last line of a member */
	sc = write_tmp("s.csv", "member_ref,scope\r\nm1,gold\n\nm,2,silver\r\nm1,bronze\n");
	CHECK_EQ_INT(cnt_board_begin(&bb, defs, "d.json", "coh", &now, NULL, sc, NULL, &err), 0);
	if (bb.proj) {
		cnt_bucket b;

		memset(&b, 0, sizeof(b));
		b.tenant_id = (cnt_slice){"ber", 3};
		b.counter_id = (cnt_slice){"pts", 3};
		b.counter_version = 2;
		b.bucket_start = now;
		b.bucket_end = now + 3600000;
		b.count = 1;
		b.has_max = 1;
		b.max = 5;
		b.last_event_time = now;
		b.has_last = 1;
		b.member_ref = (cnt_slice){"m1", 2};
		CHECK_EQ_INT(cnt_proj_add_bucket(bb.proj, &b, &err), 0);
		b.member_ref = (cnt_slice){"m,2", 3};
		CHECK_EQ_INT(cnt_proj_add_bucket(bb.proj, &b, &err), 0);
		CHECK_EQ_INT(cnt_proj_finish(bb.proj, &err), 0);
		/* the scopes named: gold (now empty), silver, bronze */
		CHECK_EQ_INT(cnt_proj_nscopes(bb.proj), 3);
		for (size_t i = 0; i < cnt_proj_nscopes(bb.proj); i++) {
			cnt_view_build vb;
			const char *s = cnt_proj_scope(bb.proj, i);

			CHECK_EQ_INT(cnt_proj_view(bb.proj, i, &vb, &err), 0);
			CHECK_EQ_INT(vb.n, strcmp(s, "gold") == 0 ? 0 : 1);
		}
	}
	cnt_board_end(&bb);
	/* bad lines, named with their number */
	sc = write_tmp("bad.csv", "m1,gold\nm2\n");
	CHECK_EQ_INT(cnt_board_begin(&bb, defs, "d.json", "coh", &now, NULL, sc, NULL, &err), -1);
	CHECK(strstr(err.msg, "bad.csv' line 2: expected member_ref,scope") != NULL);
	sc = write_tmp("bad.csv", "m1,\n");
	CHECK_EQ_INT(cnt_board_begin(&bb, defs, "d.json", "coh", &now, NULL, sc, NULL, &err), -1);
	CHECK(strstr(err.msg, "line 1: expected member_ref,scope") != NULL);
	sc = write_tmp("bad.csv", ",gold\n");
	CHECK_EQ_INT(cnt_board_begin(&bb, defs, "d.json", "coh", &now, NULL, sc, NULL, &err), -1);
	CHECK_EQ_INT(cnt_board_begin(&bb, defs, "d.json", "coh", &now, NULL, "/nonexistent/s.csv", NULL, &err), -1);
	CHECK_EQ_STR(err.msg, "cannot open '/nonexistent/s.csv': No such file or directory");
	CHECK_EQ_INT(cnt_board_begin(&bb, defs, "d.json", "coh", &now, NULL, NULL, "/nonexistent/e.avro", &err), -1);
	CHECK_EQ_STR(err.msg, "cannot open '/nonexistent/e.avro': No such file or directory");
	sc = write_tmp("notevents", "not an event file");
	CHECK_EQ_INT(cnt_board_begin(&bb, defs, "d.json", "coh", &now, NULL, NULL, sc, &err), -1);
	CHECK(strstr(err.msg, "notevents") != NULL);
}

static void test_write_and_publish(void)
{
	cnt_board_build bb;
	cnt_err err;
	int64_t now = t("2026-03-10T12:00:00Z");
	char views[300], sdir[400], vdir[500];
	cnt_board_written w;
	cnt_view v;
	int version, frozen;
	char *sc = write_tmp("s2.csv", "a,eu\nb,us\n");

	snprintf(views, sizeof(views), "%s/views", tmpdir);
	for (int round = 0; round < 2; round++) {
		CHECK_EQ_INT(cnt_board_begin(&bb, defs, "d.json", "coh", &now, NULL, sc, NULL, &err), 0);
		CHECK_EQ_INT(cnt_proj_finish(bb.proj, &err), 0);
		for (size_t i = 0; i < cnt_proj_nscopes(bb.proj); i++) {
			CHECK_EQ_INT(cnt_board_write_scope(&bb, i, views, round == 1, &w, &err), 0);
			CHECK_EQ_INT(w.version, round + 1);
			CHECK_EQ_INT(w.published, round == 0);
			CHECK_EQ_INT(w.frozen, 0);
		}
		cnt_board_end(&bb);
	}
	/* the description says what was built */
	version = 0;
	CHECK_EQ_INT(cnt_viewdir_open(&v, views, "coh", "eu", &version, vdir, sizeof(vdir), &frozen, &err), 0);
	CHECK_EQ_INT(version, 1);
	CHECK_EQ_STR(v.desc.scope, "eu");
	CHECK_EQ_INT(v.desc.scope_kind, CNT_SCOPE_COHORT);
	CHECK_EQ_INT(v.desc.counter_type, CNT_CTYPE_MAX);
	CHECK_EQ_INT(v.desc.built_at, now);
	CHECK_EQ_INT(v.desc.has_as_of, 0);   /* no bucket of the counter read */
	CHECK_EQ_INT(cnt_view_verify(&v, vdir, &err), 0);
	cnt_view_close(&v);
	/* a board-wide publish of a version one scope lacks switches none */
	CHECK_EQ_INT(cnt_viewdir_path(sdir, sizeof(sdir), views, "coh", "us"), 0);
	snprintf(vdir, sizeof(vdir), "rm -r '%s/v000002'", sdir);
	CHECK_EQ_INT(system(vdir), 0);
	CHECK_EQ_INT(cnt_board_scope_op(views, "coh", NULL, 2, 0, now, &err), -1);
	CHECK(strstr(err.msg, "no scope was switched: ") == err.msg && strstr(err.msg, "has no version 2 to publish") != NULL);
	CHECK_EQ_INT(cnt_viewdir_current(sdir, &version, &err), 0);
	CHECK_EQ_INT(version, 1);
	/* one scope: publish 2, freeze; a frozen scope's new version is not published */
	CHECK_EQ_INT(cnt_board_scope_op(views, "coh", "eu", 2, 1, now, &err), 0);
	CHECK_EQ_INT(cnt_viewdir_path(sdir, sizeof(sdir), views, "coh", "eu"), 0);
	CHECK_EQ_INT(cnt_viewdir_current(sdir, &version, &err), 0);
	CHECK_EQ_INT(version, 2);
	CHECK(cnt_viewdir_frozen(sdir));
	CHECK_EQ_INT(cnt_board_begin(&bb, defs, "d.json", "coh", &now, NULL, sc, NULL, &err), 0);
	CHECK_EQ_INT(cnt_proj_finish(bb.proj, &err), 0);
	for (size_t i = 0; i < cnt_proj_nscopes(bb.proj); i++) {
		CHECK_EQ_INT(cnt_board_write_scope(&bb, i, views, 0, &w, &err), 0);
		CHECK_EQ_INT(w.frozen, strcmp(w.scope, "eu") == 0);
		CHECK_EQ_INT(w.published, strcmp(w.scope, "eu") != 0);
	}
	cnt_board_end(&bb);
	CHECK_EQ_INT(cnt_board_scope_op(views, "coh", NULL, 0, -1, now, &err), 0);
	CHECK(!cnt_viewdir_frozen(sdir));
	CHECK_EQ_INT(cnt_board_scope_op(views, "nope", NULL, 0, 1, now, &err), -1);
	CHECK(strstr(err.msg, "no views of board 'nope'") != NULL);
}

int main(void)
{
	cnt_err err;
	char cmd[128];

	setenv("TZDIR", "/usr/share/zoneinfo", 0);
	defs = cnt_defs_parse(defs_json, sizeof(defs_json) - 1, "test", &err);
	if (defs == NULL) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_windows);
	RUN(test_begin_and_scopes);
	RUN(test_write_and_publish);
	cnt_defs_free(defs);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return unit_report("test_board");
}
