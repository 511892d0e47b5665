/*
 * cnt-project - build versioned ranked views of a leaderboard from bucket
 * files, and publish (or roll back) by moving a pointer.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "model/bucket.h"
#include "cli/legacy.h"
#include "model/event.h"
#include "avro/json.h"
#include "base/outfile.h"
#include "view/project.h"
#include "time/timefmt.h"
#include "time/tz.h"

static const char usage[] =
	"usage: cnt-project -d definitions -b board -D views [--now time] [--season id]\n"
	"                   [--scopes file | --scopes-from events] [--no-publish]\n"
	"                   [--stats file] [-v] bucket-file ...\n"
	"       cnt-project -D views -b board [-s scope] --publish version\n"
	"       cnt-project -D views -b board [-s scope] --freeze | --unfreeze\n";

static const char help[] =
	"Compose a board's window from bucket files in its tenant's timezone, rank the\n"
	"members of every scope, and write a new numbered view version per scope;\n"
	"then publish it by switching the scope's `current` link (unless frozen).\n"
	"\n"
	"  -d, --definitions FILE  the board, its counter and tenant; required to build\n"
	"  -b, --board ID          the leaderboard\n"
	"  -D, --views DIR         the view directory (DIR/<board>/<scope>/v000001 ...)\n"
	"      --now TIME          the instant the window is taken at (default: clock)\n"
	"      --season ID         for a season window: the season (default: the\n"
	"                          board's season containing --now)\n"
	"      --scopes FILE       member_ref,scope lines (cohorts, or regions)\n"
	"      --scopes-from FILE  events: a member's region is the board's scope_attr\n"
	"                          of the member's latest event\n"
	"      --no-publish        write the versions, leave `current` alone\n"
	"      --publish VERSION   point `current` at VERSION (roll back or forward)\n"
	"  -s, --scope KEY         with --publish/--freeze: one scope (default: all)\n"
	"      --freeze, --unfreeze  stop or resume publishing a scope\n"
	"      --stats FILE        counts as one JSON object\n"
	"  -v, --verbose           one line per scope on standard error\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-project(1) and cnt-view(5).\n";

static cnt_err err;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("cnt-project: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	/* _exit: a fatal error ends the process here; memory is the
	 * kernel's to reclaim (the sanitizers' leak check is for the
	 * paths that finish, which free everything). */
	_exit(CNT_EXIT_TROUBLE);
}

static int64_t round_up_to_bucket(const cnt_tz *tz, int64_t t)
{
	int64_t b = cnt_tz_bucket_start(tz, t);

	return b == t ? t : cnt_tz_bucket_end(tz, t);
}

/* A definitions time: an instant, or a local time in zone local; either
 * way rounded up to a bucket boundary of the tenant's zone tz. */
static int64_t deftime_utc(const cnt_tz *tz, const cnt_tz *local, const cnt_deftime *d)
{
	cnt_civil c;

	if (d->has_offset)
		return round_up_to_bucket(tz, d->ms);
	cnt_civil_from_ms(d->civil_ms, &c);
	return round_up_to_bucket(tz, cnt_tz_local_to_utc(local, &c, 0));
}

/* The zone a season's local times are written in: its own, else the
 * tenant's. */
static const cnt_tz *season_tz(cnt_tz_cache *tzc, const cnt_tz *tz, const cnt_season *s)
{
	const cnt_tz *z;

	if (s->timezone == NULL || strcmp(s->timezone, cnt_tz_name(tz)) == 0)
		return tz;
	z = cnt_tz_cache_get(tzc, s->timezone, &err);
	if (z == NULL)
		die("season '%s': %s", s->season_id, err.msg);
	return z;
}

static cnt_tz_window board_window(const cnt_defs *defs, const cnt_leaderboard *b, const cnt_tz *tz,
	cnt_tz_cache *tzc, int64_t now, const char *season_id, const char **label)
{
	cnt_tz_window w = {CNT_TZ_MIN_MS, CNT_TZ_MAX_MS};

	*label = cnt_defs_window_name(b->window);
	switch (b->window) {
	case CNT_WIN_ALL_TIME: break;
	case CNT_WIN_DAY: w = cnt_tz_day(tz, now); break;
	case CNT_WIN_WEEK: w = cnt_tz_week(tz, now, b->week_start); break;
	case CNT_WIN_MONTH: w = cnt_tz_month(tz, now); break;
	case CNT_WIN_ROLLING_24H: w = cnt_tz_rolling(tz, now, 24 * 3600 * INT64_C(1000)); break;
	case CNT_WIN_LAST_30D: w = cnt_tz_last_days(tz, now, 30); break;
	case CNT_WIN_RANGE:
		w.start_ms = deftime_utc(tz, tz, &b->range_from);
		w.end_ms = deftime_utc(tz, tz, &b->range_to);
		break;
	case CNT_WIN_SEASON: {
		const cnt_season *found = NULL;

		for (size_t i = 0; i < cnt_defs_nseasons(defs); i++) {
			const cnt_season *s = cnt_defs_season_at(defs, i);
			int64_t o, c;

			if (s->board != b)
				continue;
			if (season_id) {
				if (strcmp(s->season_id, season_id) == 0)
					found = s;
				continue;
			}
			o = deftime_utc(tz, season_tz(tzc, tz, s), &s->opens_at);
			c = deftime_utc(tz, season_tz(tzc, tz, s), &s->closes_at);
			if (now >= o && now < c)
				found = s;
		}
		if (found == NULL)
			die(season_id ? "board '%s' has no season '%s'" : "board '%s' has no season open at --now%s; name one with --season",
				b->board_id, season_id ? season_id : "");
		w.start_ms = deftime_utc(tz, season_tz(tzc, tz, found), &found->opens_at);
		w.end_ms = deftime_utc(tz, season_tz(tzc, tz, found), &found->closes_at);
		*label = found->season_id;
		break;
	}
	default:
		die("board '%s': window kind not supported", b->board_id);
	}
	return w;
}

static void load_scopes(cnt_proj *p, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned long long no = 0;

	if (f == NULL)
		die("cannot open '%s': %s", path, strerror(errno));
	while ((n = getline(&line, &cap, f)) > 0) {
		char *comma;

		no++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if (n == 0 || (no == 1 && strncmp(line, "member_ref,", 11) == 0))
			continue;
		comma = strrchr(line, ',');
		if (comma == NULL || comma == line || comma[1] == 0)
			die("'%s' line %llu: expected member_ref,scope", path, no);
		if (cnt_proj_set_scope(p, line, (size_t)(comma - line), comma + 1, strlen(comma + 1)) != 0)
			die("out of memory");
	}
	free(line);
	if (ferror(f))
		die("cannot read '%s': %s", path, strerror(errno));
	fclose(f);
}

/* --publish and --freeze/--unfreeze: on one scope, or on all of them. */
static int scope_op(const char *views, const char *board, const char *scope, int publish, int freeze)
{
	char **dirs = NULL, one[4096];
	size_t n = 0;

	if (scope) {
		if (cnt_viewdir_path(one, sizeof(one), views, board, scope) != 0)
			die("path too long");
	} else if (cnt_viewdir_scopes(views, board, &dirs, &n, &err) != 0) {
		die("%s", err.msg);
	}
	/* Every scope must have the version before any is switched, so a
	 * failed rollback leaves the board as it was. */
	for (size_t i = 0; publish > 0 && i < (scope ? 1 : n); i++) {
		char check[4300];
		struct stat sb;

		snprintf(check, sizeof(check), "%s/v%06d/index.bin", scope ? one : dirs[i], publish);
		if (stat(check, &sb) != 0)
			die("no scope was switched: '%s' has no version %d to publish", scope ? one : dirs[i], publish);
	}
	for (size_t i = 0; i < (scope ? 1 : n); i++) {
		const char *dir = scope ? one : dirs[i];

		if (publish > 0 && cnt_viewdir_publish(dir, publish, &err) != 0)
			die("%s", err.msg);
		if (freeze && cnt_viewdir_freeze(dir, freeze > 0, &err) != 0)
			die("%s", err.msg);
	}
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"definitions", required_argument, NULL, 'd'},
		{"board", required_argument, NULL, 'b'},
		{"views", required_argument, NULL, 'D'},
		{"now", required_argument, NULL, 'N'},
		{"season", required_argument, NULL, 'E'},
		{"scopes", required_argument, NULL, 'C'},
		{"scopes-from", required_argument, NULL, 'F'},
		{"no-publish", no_argument, NULL, 'n'},
		{"publish", required_argument, NULL, 'P'},
		{"scope", required_argument, NULL, 's'},
		{"freeze", no_argument, NULL, 'Z'},
		{"unfreeze", no_argument, NULL, 'U'},
		{"stats", required_argument, NULL, 'S'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	const char *defs_path = NULL, *board_id = NULL, *views = NULL, *season = NULL, *scopes = NULL;
	const char *scopes_from = NULL, *scope = NULL, *stats_path = NULL, *label;
	int no_publish = 0, publish = 0, freeze = 0, verbose = 0, c, have_now = 0;
	int64_t now = 0;
	cnt_defs *defs;
	const cnt_leaderboard *b;
	cnt_counter_type ctype;
	const cnt_tz *tz;
	cnt_tz_cache *tzc;
	cnt_tz_window win;
	cnt_proj *p;
	const cnt_proj_stats *st;
	cnt_buf stats = CNT_BUF_INIT;

	while ((c = getopt_long(argc, argv, "d:b:D:s:vh", longopts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'd': defs_path = optarg; break;
		case 'b': board_id = optarg; break;
		case 'D': views = optarg; break;
		case 'N':
			if (cnt_time_parse_arg(optarg, &now) != 0)
				die("--now: '%s' is not an RFC 3339 time or epoch milliseconds", optarg);
			have_now = 1;
			break;
		case 'E': season = optarg; break;
		case 'C': scopes = optarg; break;
		case 'F': scopes_from = optarg; break;
		case 'n': no_publish = 1; break;
		case 'P':
			errno = 0;
			publish = (int)strtol(optarg, &end, 10);
			if (errno || *end || publish <= 0)
				die("--publish: '%s' is not a version number", optarg);
			break;
		case 's': scope = optarg; break;
		case 'Z': freeze = 1; break;
		case 'U': freeze = -1; break;
		case 'S': stats_path = optarg; break;
		case 'v': verbose = 1; break;
		case 'h':
			fputs(usage, stdout);
			fputs(help, stdout);
			return 0;
		case 'V':
			puts("cnt-project " CNT_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return CNT_EXIT_TROUBLE;
		}
	}
	if (board_id == NULL || views == NULL) {
		fputs("cnt-project: -b board and -D views are required\n", stderr);
		fputs(usage, stderr);
		return CNT_EXIT_TROUBLE;
	}
	if (publish || freeze)
		return scope_op(views, board_id, scope, publish, freeze);
	if (defs_path == NULL || optind == argc) {
		fputs("cnt-project: building a view needs -d definitions and bucket files\n", stderr);
		fputs(usage, stderr);
		return CNT_EXIT_TROUBLE;
	}
	if (!have_now) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	}
	defs = cnt_defs_load(defs_path, &err);
	if (defs == NULL)
		die("%s", err.msg);
	b = cnt_defs_board(defs, board_id, strlen(board_id));
	if (b == NULL)
		die("board '%s' is not declared in '%s'", board_id, defs_path);
	if (b->scope_kind == CNT_SCOPE_GLOBAL && (scopes || scopes_from))
		die("board '%s' is global: --scopes and --scopes-from are for region and cohort boards", board_id);
	{
		const cnt_counter_version *cv = b->counter_version ?
			cnt_counter_version_get(b->counter, b->counter_version) : cnt_counter_version_latest(b->counter);

		ctype = cv ? cv->type : CNT_CTYPE_EXACT;
	}
	if (b->scope_kind != CNT_SCOPE_GLOBAL && scopes == NULL && scopes_from == NULL)
		die("board '%s' is scoped by %s: give --scopes FILE%s", board_id,
			b->scope_kind == CNT_SCOPE_REGION ? "region" : "cohort",
			b->scope_kind == CNT_SCOPE_REGION ? " or --scopes-from EVENTS" : "");
	tzc = cnt_tz_cache_new();
	if (tzc == NULL)
		die("out of memory");
	tz = cnt_tz_cache_get(tzc, b->tenant->timezone, &err);
	if (tz == NULL)
		die("tenant '%s': %s", b->tenant_id, err.msg);
	win = board_window(defs, b, tz, tzc, now, season, &label);
	p = cnt_proj_new(b, win.start_ms, win.end_ms, &err);
	if (p == NULL)
		die("%s", err.msg);
	if (scopes)
		load_scopes(p, scopes);
	if (scopes_from) {
		int fd = cnt_cli_old_open_in(scopes_from, &err);
		cnt_event_in *in;
		cnt_event e;
		int rc;

		if (fd < 0)
			die("%s", err.msg);
		in = cnt_event_in_open(fd, scopes_from, NULL, &err);
		if (in == NULL)
			die("%s", err.msg);
		while ((rc = cnt_event_in_next(in, &e, &err)) != 0)
			if (rc < 0 || cnt_proj_scope_from_event(p, &e) != 0)
				die("%s", rc < 0 ? err.msg : "out of memory");
		cnt_event_in_free(in);
		cnt_cli_old_close_in(fd);
	}
	for (int i = optind; i < argc; i++) {
		int fd = cnt_cli_old_open_in(argv[i], &err);
		cnt_bucket_in in;
		cnt_bucket bk;
		int rc;

		if (fd < 0)
			die("%s", err.msg);
		if (cnt_bucket_in_open(&in, fd, argv[i], NULL, &err) != 0)
			die("%s", err.msg);
		while ((rc = cnt_bucket_in_next(&in, &bk, &err)) != 0)
			if (rc < 0 || cnt_proj_add_bucket(p, &bk, &err) != 0)
				die("%s", err.msg);
		cnt_bucket_in_release(&in);
		cnt_cli_old_close_in(fd);
	}
	if (cnt_proj_finish(p, &err) != 0)
		die("%s", err.msg);
	st = cnt_proj_get_stats(p);
	if (cnt_buf_printf(&stats, "{\"tool\":\"cnt-project\",\"in\":%" PRIu64 ",\"buckets_used\":%" PRIu64
		",\"members\":%" PRIu64 ",\"unscoped\":%" PRIu64 ",\"clamped\":%" PRIu64 ",\"scopes\":[",
		st->buckets_read, st->buckets_used, st->members, st->unscoped, st->clamped) != 0)
		die("out of memory");
	for (size_t i = 0; i < cnt_proj_nscopes(p); i++) {
		const char *key = cnt_proj_scope(p, i);
		char dir[4096], *desc;
		cnt_view_build vb;
		json_t *j, *tb;
		int version, published;

		if (cnt_proj_view(p, i, &vb, &err) != 0)
			die("%s", err.msg);
		if (cnt_viewdir_path(dir, sizeof(dir), views, board_id, key) != 0)
			die("path too long for scope '%s'", key);
		if (cnt_viewdir_next(dir, &version, &err) != 0)
			die("%s", err.msg);
		tb = json_array();
		for (size_t t = 0; t < b->ntie_break; t++)
			json_array_append_new(tb, json_string(b->tie_break[t] == CNT_TIE_EARLIEST_ACHIEVER ? "earliest_achiever" :
				b->tie_break[t] == CNT_TIE_LATEST_ACHIEVER ? "latest_achiever" : "member_ref_asc"));
		j = json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:s, s:i, s:{s:s, s:s, s:I, s:I, s:s}, s:o, s:{s:o}, s:I,"
			" s:s, s:o, s:s, s:I, s:I, s:{s:s, s:i}, s:I, s:I}",
			"board", board_id, "tenant_id", b->tenant_id, "counter_id", b->counter_id,
			"counter_version", b->counter_version ? json_integer(b->counter_version) : json_null(),
			"counter_type", cnt_defs_ctype_name(ctype),
			"scope_kind", b->scope_kind == CNT_SCOPE_GLOBAL ? "global" : b->scope_kind == CNT_SCOPE_REGION ? "region" : "cohort",
			"scope", key, "version", version,
			"window", "kind", cnt_defs_window_name(b->window), "label", label,
			"from", (json_int_t)win.start_ms, "to", (json_int_t)win.end_ms, "timezone", b->tenant->timezone,
			/* No record of the counter at all: the view covers no log. */
			"as_of", st->as_of == INT64_MIN ? json_null() : json_integer(st->as_of),
			"log_position", "max_ingest_time", st->as_of == INT64_MIN ? json_null() : json_integer(st->as_of),
			"built_at", (json_int_t)now,
			"order", b->order_asc ? "asc" : "desc", "tie_break", tb,
			"rank_numbering", b->rank_numbering == CNT_RANK_COMPETITION ? "competition" :
				b->rank_numbering == CNT_RANK_DENSE ? "dense" : "ordinal",
			"materialised_cap", (json_int_t)b->materialised_cap,
			"freshness_budget_s", (json_int_t)b->freshness_budget_s,
			"histogram", "scale", b->hist_scale == CNT_HIST_LOG ? "log" : "linear", "bins", (int)vb.nbins,
			"members", (json_int_t)vb.n, "head", (json_int_t)vb.head);
		if (j == NULL || (desc = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER)) == NULL)
			die("out of memory");
		json_decref(j);
		vb.desc = desc;
		if (cnt_viewdir_write(dir, version, &vb, &err) != 0)
			die("%s", err.msg);
		free(desc);
		published = 0;
		if (!no_publish && !cnt_viewdir_frozen(dir)) {
			if (cnt_viewdir_publish(dir, version, &err) != 0)
				die("%s", err.msg);
			published = 1;
		}
		if (verbose)
			fprintf(stderr, "cnt-project: %s/%s: version %d, %zu members, %s\n", board_id, key, version, vb.n,
				published ? "published" : cnt_viewdir_frozen(dir) ? "not published (scope frozen)" : "not published");
		/* the key comes from the data (a region attribute): escaped */
		if (cnt_buf_printf(&stats, "%s{\"scope\":", i ? "," : "") != 0 ||
		    cnt_json_string(&stats, (const uint8_t *)key, strlen(key), 0) != 0 ||
		    cnt_buf_printf(&stats, ",\"version\":%d,\"members\":%zu,\"published\":%s}",
			version, vb.n, published ? "true" : "false") != 0)
			die("out of memory");
	}
	if (cnt_buf_append(&stats, "]}\n", 3) != 0)
		die("out of memory");
	if (stats_path) {
		cnt_out o;

		if (cnt_cli_old_stats(&o, stats_path, &stats, &err) != 0 || cnt_out_commit(&o, &err) != 0)
			die("%s", err.msg);
	}
	cnt_buf_release(&stats);
	cnt_proj_free(p);
	cnt_tz_cache_free(tzc);
	cnt_defs_free(defs);
	return 0;
}
