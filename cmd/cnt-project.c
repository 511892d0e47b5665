/*
 * cnt-project - build versioned ranked views of a leaderboard from bucket
 * files, and publish (or roll back) by moving a pointer (lib/view/board.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "correct/seal.h"
#include "model/fingerprint.h"
#include "view/board.h"
#include "view/retain.h"
#include "view/verified.h"

static const char usage[] =
	"usage: cnt-project -d definitions -b board -w views [--now time] [--season id]\n"
	"                   [--scopes file | --scopes-from events] [--no-publish]\n"
	"                   [--sealed dir] [--split-tenants] [--verified audits] [--hours]\n"
	"                   [--stats file] [-v] [--progress | --no-progress]\n"
	"                   bucket-file ...\n"
	"       cnt-project -w views -b board [--scope key] --publish version\n"
	"       cnt-project -w views -b board [--scope key] --freeze | --unfreeze\n";

static const char help[] =
	"Compose a board's window from bucket files in its tenant's timezone, rank the\n"
	"members of every scope, and write a new numbered view version per scope;\n"
	"then publish it by switching the scope's `current` link (unless frozen).\n"
	"\n"
	"  -d, --definitions FILE  the board, its counter and tenant; required to build\n"
	"  -b, --board ID          the leaderboard\n"
	"  -w, --views DIR         the view directory (DIR/<board>/<scope>/v000001 ...)\n"
	"      --split-tenants     write into DIR/<tenant>/<board>/... instead, the\n"
	"                          board's tenant directory made with mode 0750\n"
	"      --now TIME          the instant the window is taken at (default: clock)\n"
	"      --season ID         for a season window: the season (default: the\n"
	"                          board's season containing --now)\n"
	"      --scopes FILE       member_ref,scope lines (cohorts, or regions)\n"
	"      --scopes-from FILE  events: a member's region is the board's scope_attr\n"
	"                          of the member's latest event\n"
	"      --no-publish        write the versions, leave `current` alone\n"
	"      --sealed DIR        refuse a season sealed in DIR (cnt-seal(1))\n"
	"      --verified AUDITS   build the verified view instead: buckets ending by the\n"
	"                          latest audit's watermark in the audit ledger AUDITS,\n"
	"                          as of it, into <scope>/verified\n"
	"      --hours             sum hourly records even for a window of whole local\n"
	"                          days (default: the files' day roll-ups, cnt-bucket(5))\n"
	"      --publish VERSION   point `current` at VERSION (roll back or forward)\n"
	"      --scope KEY         with --publish/--freeze: one scope (default: all)\n"
	"      --freeze, --unfreeze  stop or resume publishing a scope\n"
	"      --stats FILE        counts as one JSON object ('-': standard error)\n"
	"  -v, --verbose           one line per scope on standard error\n"
	"      --progress          progress on standard error (default: on a terminal)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-project(1) and cnt-view(5).\n";

enum {
	OPT_NOW = CNT_OPT_TOOL_BASE, OPT_SEASON, OPT_SCOPES, OPT_SCOPES_FROM, OPT_NO_PUBLISH, OPT_PUBLISH,
	OPT_SCOPE, OPT_FREEZE, OPT_UNFREEZE, OPT_SEALED, OPT_VERIFIED, OPT_HOURS
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"definitions", required_argument, NULL, 'd'},
		{"board", required_argument, NULL, 'b'},
		{"views", required_argument, NULL, 'w'},
		{"now", required_argument, NULL, OPT_NOW},
		{"season", required_argument, NULL, OPT_SEASON},
		{"scopes", required_argument, NULL, OPT_SCOPES},
		{"scopes-from", required_argument, NULL, OPT_SCOPES_FROM},
		{"no-publish", no_argument, NULL, OPT_NO_PUBLISH},
		{"publish", required_argument, NULL, OPT_PUBLISH},
		{"scope", required_argument, NULL, OPT_SCOPE},
		{"freeze", no_argument, NULL, OPT_FREEZE},
		{"unfreeze", no_argument, NULL, OPT_UNFREEZE},
		{"sealed", required_argument, NULL, OPT_SEALED},
		{"split-tenants", no_argument, NULL, CNT_OPT_TOOL_BASE + 0x51},
		{"verified", required_argument, NULL, OPT_VERIFIED},
		{"hours", no_argument, NULL, OPT_HOURS},
		CNT_CLI_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	const char *defs_path = NULL, *board_id = NULL, *views = NULL, *season = NULL, *scopes = NULL;
	char *tenant_views = NULL;
	const char *scopes_from = NULL, *scope = NULL, *sealed = NULL, *audits = NULL;
	int no_publish = 0, publish = 0, freeze = 0, have_now = 0, split = 0, hours = 0, c;
	int64_t now = 0;
	cnt_defs *defs;
	cnt_board_build bb;
	const cnt_proj_stats *ps;
	cnt_stats st;
	cnt_err err;

	cnt_cli_init("cnt-project", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "d:b:w:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'd': defs_path = optarg; break;
		case 'b': board_id = optarg; break;
		case 'w': views = optarg; break;
		case OPT_NOW: now = cnt_cli_time("--now", optarg); have_now = 1; break;
		case OPT_SEASON: season = optarg; break;
		case OPT_SCOPES: scopes = optarg; break;
		case OPT_SCOPES_FROM: scopes_from = optarg; break;
		case OPT_NO_PUBLISH: no_publish = 1; break;
		case OPT_PUBLISH: publish = (int)cnt_cli_uint("--publish", optarg, 1, 999999); break;
		case OPT_SCOPE: scope = optarg; break;
		case OPT_FREEZE: freeze = 1; break;
		case OPT_UNFREEZE: freeze = -1; break;
		case OPT_SEALED: sealed = optarg; break;
		case CNT_OPT_TOOL_BASE + 0x51: split = 1; break;
		case OPT_VERIFIED: audits = optarg; break;
		case OPT_HOURS: hours = 1; break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (board_id == NULL || views == NULL)
		cnt_die_usage("-b board and -w views are required");
	if (publish || freeze) {
		if (split)
			cnt_die_usage("--split-tenants builds views; to publish or freeze, name the tenant's directory "
				"(-w VIEWS/TENANT)");
		if (audits)
			cnt_die_usage("--verified builds a view: not with --publish, --freeze or --unfreeze");
		cnt_cli_max_operands(argc, argv, optind, 0, "bucket files with --publish, --freeze or --unfreeze");
		if (cnt_board_scope_op(views, board_id, scope, publish, freeze, have_now ? now : cnt_retain_clock(),
			&err) != 0)
			cnt_die_err(&err);
		return cnt_cli_finish();
	}
	if (defs_path == NULL || optind == argc)
		cnt_die_usage("building a view needs -d definitions and bucket files");
	if ((defs = cnt_defs_load(defs_path, &err)) == NULL || cnt_fp_policy(defs, &err) != 0)
		cnt_die_err(&err);
	if (cnt_board_begin(&bb, defs, defs_path, board_id, have_now ? &now : NULL, season, scopes, scopes_from,
		&err) != 0 || cnt_seal_check_publish(defs, &bb, sealed, &err) != 0 ||
	    (audits && cnt_verified_begin(&bb, audits, &err) != 0))
		cnt_die_err(&err);
	bb.no_days = hours;
	if (split) /* cnt(7), "TENANT SEPARATION" */
		views = tenant_views = cnt_cli_tenant_dir(views, bb.board->tenant_id);
	cnt_progress_start(&co);
	for (int i = optind; i < argc; i++) {
		int fd = cnt_cli_open_in(argv[i]);

		cnt_progress_input(fd, argv[i]);
		if (cnt_board_add_buckets(&bb, fd, argv[i], cnt_progress_add, &err) != 0)
			cnt_die_err(&err);
		cnt_cli_close_in(fd);
	}
	cnt_progress_end();
	if (cnt_proj_finish(bb.proj, &err) != 0 || cnt_verified_check(&bb, &err) != 0)
		cnt_die_err(&err);
	ps = cnt_proj_get_stats(bb.proj);
	cnt_stats_begin(&st);
	cnt_stats_u64(&st, "in", ps->buckets_read);
	cnt_stats_u64(&st, "out", ps->members);
	cnt_stats_u64(&st, "buckets_used", ps->buckets_used);
	cnt_stats_bool(&st, "day_rollups", bb.used_days);
	cnt_stats_u64(&st, "members", ps->members);
	cnt_stats_u64(&st, "unscoped", ps->unscoped);
	cnt_stats_u64(&st, "clamped", ps->clamped);
	cnt_stats_as_of(&st, ps->as_of != INT64_MIN, ps->as_of, bb.now, bb.board->freshness_budget_s);
	cnt_stats_bool(&st, "verified", bb.verified);
	cnt_stats_array(&st, "scopes");
	for (size_t i = 0; i < cnt_proj_nscopes(bb.proj); i++) {
		cnt_board_written w;

		if (cnt_board_write_scope(&bb, i, views, no_publish, &w, &err) != 0)
			cnt_die_err(&err);
		if (co.verbose)
			cnt_cli_note("%s/%s: version %d, %llu members, %s%s", board_id, w.scope, w.version,
				(unsigned long long)w.members, w.published ? "published" :
				w.frozen ? "not published (scope frozen)" : "not published",
				w.retired ? ", older versions retired" : "");
		cnt_stats_object(&st, NULL);
		cnt_stats_str(&st, "scope", w.scope, -1);
		cnt_stats_i64(&st, "version", w.version);
		cnt_stats_u64(&st, "members", w.members);
		cnt_stats_bool(&st, "published", w.published);
		cnt_stats_u64(&st, "retired", w.retired);
		cnt_stats_close(&st);
	}
	if (co.stats_path)
		cnt_stats_write(&st, co.stats_path);
	else
		cnt_stats_release(&st);
	cnt_board_end(&bb);
	cnt_fp_policy_end();
	cnt_defs_free(defs);
	free(tenant_views);
	return cnt_cli_finish();
}
