/*
 * cnt-explain - re-derive one member's standing from the archive and say
 * what became of each of its events (cnt-explain(1)).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "correct/seal.h"
#include "time/tz.h"
#include "view/board.h"
#include "view/explain.h"
#include "view/rank.h"
#include "view/view.h"

static const char usage[] =
	"usage: cnt-explain -d definitions -b board --member member [--now time] [--season id]\n"
	"                   [--scope key] [--scopes file] [-r rejects ...] [-D duplicates ...]\n"
	"                   [--ledger file] [--holds file ...] [-w views [--view-version n]]\n"
	"                   [--sealed dir] [-F text|json] [--tenant id]\n"
	"                   [--stats file] [-v] [--progress | --no-progress] log ...\n";

static const char help[] =
	"\n"
	"Re-derive a member's value and rank on a board from the event log alone\n"
	"(not from bucket files), with every one of the member's events and its\n"
	"fate: counted (which bucket), outside the window, late (deadline, by how\n"
	"much), duplicate (of which event, first seen where), retracted (by which\n"
	"retraction, cause, authority), rejected or a retry at admission (from\n"
	"cnt-ingest's -r and -D files); then check the published view.\n"
	"\n"
	"  -d, --definitions FILE  the board, its counter and tenant\n"
	"  -b, --board ID          the leaderboard\n"
	"      --member M          the member\n"
	"      --now TIME          the instant the window is taken at (default: clock)\n"
	"      --season ID         for a season window: the season\n"
	"      --scope KEY         the scope (default global)\n"
	"      --scopes FILE       a cohort board's member_ref,scope lines\n"
	"  -r, --rejects FILE      a cnt-ingest -r file (repeatable)\n"
	"  -D, --duplicates FILE   a cnt-ingest -D file (repeatable)\n"
	"      --ledger FILE       the retraction ledger: cause, requester, authority\n"
	"      --holds FILE        a hold file of cnt-ingest --holds (repeatable)\n"
	"  -w, --views DIR         check against the board's published view\n"
	"      --view-version N    check against version N instead\n"
	"      --sealed DIR        a season board: check against its sealed standing\n"
	"                          and corrections (cnt-seal)\n"
	"  -F, --output-format FMT text (default) or json (JSON lines)\n"
	"      --tenant ID         who is asking: refuse (status 5) a board, log, hold\n"
	"                          file or view of another tenant, and -r, -D and\n"
	"                          --ledger (default $CNT_TENANT)\n"
	"      --stats FILE        counts as one JSON object ('-': standard error)\n"
	"  -v, --verbose           a summary line on standard error\n"
	"      --progress          progress on standard error (default: on a terminal)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"Exit status 0 when every check agrees with the log, 1 when one differs.\n"
	"See cnt-explain(1).\n";

enum { OPT_MEMBER = 999, OPT_NOW = 1000, OPT_SEASON, OPT_SCOPE, OPT_SCOPES, OPT_LEDGER, OPT_VIEW_VERSION,
	OPT_HOLDS, OPT_SEALED };

static const char **push(const char **v, size_t *n, const char *s)
{
	const char **w = realloc(v, (*n + 1) * sizeof(*w));

	if (w == NULL)
		cnt_die_nomem();
	w[(*n)++] = s;
	return w;
}

static const char *who; /* --tenant */

/* --tenant and a file that is not separated by tenant: refused. */
static void not_separated(const char *path, const char *what)
{
	cnt_err e;

	cnt_err_set(&e, "'%s': %s are not separated by tenant; refused for tenant '%s'", path, what, who);
	e.kind = CNT_ERR_REFUSED;
	cnt_die_err(&e);
}

static void tick(uint64_t n)
{
	(void)n;
	cnt_progress_add(1);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"definitions", required_argument, NULL, 'd'},
		{"board", required_argument, NULL, 'b'},
		{"member", required_argument, NULL, OPT_MEMBER},
		{"now", required_argument, NULL, OPT_NOW},
		{"season", required_argument, NULL, OPT_SEASON},
		{"scope", required_argument, NULL, OPT_SCOPE},
		{"scopes", required_argument, NULL, OPT_SCOPES},
		{"rejects", required_argument, NULL, 'r'},
		{"duplicates", required_argument, NULL, 'D'},
		{"ledger", required_argument, NULL, OPT_LEDGER},
		{"views", required_argument, NULL, 'w'},
		{"view-version", required_argument, NULL, OPT_VIEW_VERSION},
		{"holds", required_argument, NULL, OPT_HOLDS},
		{"sealed", required_argument, NULL, OPT_SEALED},
		{"output-format", required_argument, NULL, 'F'},
		{"tenant", required_argument, NULL, CNT_OPT_TENANT},
		CNT_CLI_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	cnt_explain_opts o;
	cnt_explain x;
	cnt_explain_check checks[2];
	size_t nchecks = 0;
	const char **rejects = NULL, **dups = NULL, **holds = NULL, *sealed = NULL;
	const char *defs_path = NULL, *board_id = NULL, *views = NULL, *season = NULL;
	int json = 0, have_now = 0, version = 0, c;
	int64_t now = 0;
	cnt_defs *defs;
	cnt_tz_cache *tzc;
	cnt_buf out = CNT_BUF_INIT;
	cnt_err err;
	char what[4300], swhat[4300];

	memset(&o, 0, sizeof(o));
	cnt_cli_init("cnt-explain", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "d:b:r:D:w:F:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'd': defs_path = optarg; break;
		case 'b': board_id = optarg; break;
		case OPT_MEMBER: o.member = optarg; break;
		case OPT_NOW: now = cnt_cli_time("--now", optarg); have_now = 1; break;
		case OPT_SEASON: season = optarg; break;
		case OPT_SCOPE: o.scope = optarg; break;
		case OPT_SCOPES: o.scopes = optarg; break;
		case 'r': rejects = push(rejects, &o.nrejects, optarg); break;
		case 'D': dups = push(dups, &o.ningest_dups, optarg); break;
		case OPT_LEDGER: o.ledger = optarg; break;
		case OPT_HOLDS: holds = push(holds, &o.nholds, optarg); break;
		case OPT_SEALED: sealed = optarg; break;
		case 'w': views = optarg; break;
		case OPT_VIEW_VERSION: version = (int)cnt_cli_uint("--view-version", optarg, 1, 999999); break;
		case CNT_OPT_TENANT: who = optarg; break;
		case 'F':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0)
				cnt_die_usage("--output-format: '%s' is not text or json", optarg);
			json = strcmp(optarg, "json") == 0;
			break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (defs_path == NULL || board_id == NULL || o.member == NULL)
		cnt_die_usage("-d definitions, -b board and --member are required");
	if (optind == argc)
		cnt_die_usage("no log files: give the archive's segments");
	if (version && views == NULL)
		cnt_die_usage("--view-version needs -w views");
	if (!have_now) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	}
	o.rejects = rejects;
	o.ingest_dups = dups;
	o.holds = holds;
	o.logs = (const char *const *)argv + optind;
	o.nlogs = (size_t)(argc - optind);
	if ((defs = cnt_defs_load(defs_path, &err)) == NULL)
		cnt_die_err(&err);
	o.defs = defs;
	o.defs_name = defs_path;
	if ((o.board = cnt_defs_board(defs, board_id, strlen(board_id))) == NULL)
		cnt_die("board '%s' is not in '%s'", board_id, defs_path);
	if ((who = cnt_cli_tenant(who)) != NULL) {
		char bw[300];

		snprintf(bw, sizeof(bw), "board %.280s", board_id);
		cnt_cli_tenant_guard_id(who, o.board->tenant_id, defs_path, bw);
	}
	if ((tzc = cnt_tz_cache_new()) == NULL)
		cnt_die_nomem();
	if (cnt_board_window(defs, o.board, tzc, now, season, &o.from, &o.to, &o.window_label, &err) != 0)
		cnt_die_err(&err);
	/* said before the segments are read, by the tenant guard or the run */
	if (sealed && o.board->window != CNT_WIN_SEASON)
		cnt_die_usage("--sealed: board '%s' has no seasons (its window is %s)", board_id, o.window_label);
	if (who != NULL) {
		for (size_t i = 0; i < o.nlogs; i++)
			cnt_cli_tenant_guard_path(who, o.logs[i]);
		for (size_t i = 0; i < o.nholds; i++)
			cnt_cli_tenant_guard_path(who, o.holds[i]);
		if (o.nrejects || o.ningest_dups)
			not_separated(o.nrejects ? o.rejects[0] : o.ingest_dups[0], "admission's rejects and duplicates");
		if (o.ledger)
			not_separated(o.ledger, "ledgers");
	}
	cnt_progress_start(&co);
	o.tick = tick;
	if (cnt_explain_run(&o, &x, &err) != 0)
		cnt_die_err(&err);
	cnt_progress_end();
	memset(checks, 0, sizeof(checks));
	if (views && cnt_explain_view_check(views, &o, version, now, who, &checks[nchecks++], what, sizeof(what),
		&err) != 0)
		cnt_die_err(&err);
	if (sealed && cnt_explain_sealed_check(sealed, &o, &checks[nchecks++], swhat, sizeof(swhat), &err) != 0)
		cnt_die_err(&err);
	if ((json ? cnt_explain_format_json(&o, &x, checks, nchecks, &out)
		  : cnt_explain_format_text(&o, &x, checks, nchecks, &out)) != 0)
		cnt_die_nomem();
	cnt_cli_write(out.p, out.len);
	if (co.verbose)
		cnt_cli_note("%s: %llu events read, %zu of the member; %s", o.member, (unsigned long long)x.read, x.n,
			x.found ? "ranked" : "not ranked");
	if (co.stats_path) {
		cnt_stats st;

		cnt_stats_begin(&st);
		cnt_stats_u64(&st, "in", x.read);
		cnt_stats_u64(&st, "out", x.n);
		cnt_stats_u64(&st, "of_board", x.of_board);
		cnt_stats_u64(&st, "members", x.members);
		cnt_stats_write(&st, co.stats_path);
	}
	c = 0;
	for (size_t i = 0; i < nchecks; i++)
		c |= !cnt_explain_agrees(&x, &checks[i]);
	cnt_explain_release(&x);
	cnt_buf_release(&out);
	cnt_tz_cache_free(tzc);
	cnt_defs_free(defs);
	free(rejects);
	free(dups);
	free(holds);
	return cnt_cli_finish() == CNT_EXIT_OK && c ? CNT_EXIT_DIFFER : CNT_EXIT_OK;
}
