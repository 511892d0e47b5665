/*
 * cnt-seal - close a season: its final standings sealed once, corrections
 * published beside them, a hash-chained ledger to verify both
 * (lib/correct/seal.h).
 */
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "correct/seal.h"
#include "model/fingerprint.h"

static const char usage[] =
	"usage: cnt-seal close -d definitions --season id --sealed dir [--now time] [--scope key]\n"
	"                [--scopes file | --scopes-from events] bucket-file ...\n"
	"       cnt-seal correct -d definitions --season id --sealed dir --retractions ledger\n"
	"                [--now time] [--scope key] [--scopes file | --scopes-from events]\n"
	"                bucket-file ...\n"
	"       cnt-seal show --season id --sealed dir [-F json|table] [--scope key]\n"
	"       cnt-seal verify --sealed dir\n"
	"       (each also: [--stats file] [-v] [--progress | --no-progress])\n";

static const char help[] =
	"Seal a season's final standings once its lateness horizon has passed, publish\n"
	"corrections beside them after a retraction, show a standing with its\n"
	"corrections, and verify that nothing published has changed.\n"
	"\n"
	"  -d, --definitions FILE  the season, its board, counter and tenant\n"
	"      --season ID         the season\n"
	"      --sealed DIR        the sealed directory (its ledger, standings, corrections)\n"
	"      --now TIME          sealed_at or published_at (default: the clock)\n"
	"      --scope KEY         one scope only (default: every scope)\n"
	"      --scopes FILE       member_ref,scope lines (cohorts, or regions)\n"
	"      --scopes-from FILE  events: a member's region is the board's scope_attr\n"
	"      --retractions FILE  correct: the retraction ledger (cnt-retraction(5))\n"
	"  -F, --output-format json|table  show: JSON lines (default) or a table\n"
	"      --stats FILE        counts as one JSON object ('-': standard error)\n"
	"  -v, --verbose           one line per file published, or checked\n"
	"      --progress          progress on standard error (default: on a terminal)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-seal(1) and cnt-sealed(5).\n";

enum { OPT_SEASON = CNT_OPT_TOOL_BASE, OPT_SEALED, OPT_NOW, OPT_SCOPE, OPT_SCOPES, OPT_SCOPES_FROM, OPT_RETRACTIONS };

static int64_t clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void reg(cnt_out *o) { cnt_cli_register(o); }
static void unreg(cnt_out *o) { cnt_cli_unregister(o); }

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"definitions", required_argument, NULL, 'd'},
		{"season", required_argument, NULL, OPT_SEASON},
		{"sealed", required_argument, NULL, OPT_SEALED},
		{"now", required_argument, NULL, OPT_NOW},
		{"scope", required_argument, NULL, OPT_SCOPE},
		{"scopes", required_argument, NULL, OPT_SCOPES},
		{"scopes-from", required_argument, NULL, OPT_SCOPES_FROM},
		{"retractions", required_argument, NULL, OPT_RETRACTIONS},
		{"output-format", required_argument, NULL, 'F'},
		CNT_CLI_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	static const char *const cmds[] = {"close", "correct", "show", "verify"};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	const char *defs_path = NULL, *season = NULL, *dir = NULL, *scope = NULL, *scopes = NULL;
	const char *scopes_from = NULL, *retractions = NULL, *cmd = NULL;
	int table = 0, have_now = 0, c, which = -1;
	int64_t now = 0;
	cnt_stats st;
	cnt_err err;
	cnt_seal_dir s;

	cnt_cli_init("cnt-seal", usage, help);
	if (argc > 1)
		for (int i = 0; i < 4; i++)
			if (strcmp(argv[1], cmds[i]) == 0) {
				which = i;
				cmd = argv[1];
				argv[1] = argv[0];
				argc--;
				argv++;
			}
	while ((c = cnt_cli_getopt(argc, argv, "d:F:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'd': defs_path = optarg; break;
		case OPT_SEASON: season = optarg; break;
		case OPT_SEALED: dir = optarg; break;
		case OPT_NOW: now = cnt_cli_time("--now", optarg); have_now = 1; break;
		case OPT_SCOPE: scope = optarg; break;
		case OPT_SCOPES: scopes = optarg; break;
		case OPT_SCOPES_FROM: scopes_from = optarg; break;
		case OPT_RETRACTIONS: retractions = optarg; break;
		case 'F':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0)
				cnt_die_usage("--output-format: '%s' is not json or table", optarg);
			table = strcmp(optarg, "table") == 0;
			break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (which < 0)
		cnt_die_usage("a command is required first: close, correct, show or verify");
	if (dir == NULL || (which != 3 && season == NULL))
		cnt_die_usage("%s needs %s", cmd, which == 3 ? "--sealed dir" : "--season id and --sealed dir");
	if (!have_now)
		now = clock_ms();
	cnt_stats_begin(&st);
	cnt_stats_str(&st, "command", cmd, -1);
	if (which >= 2) {
		cnt_buf out = CNT_BUF_INIT;
		size_t files = 0;
		int r = 0;

		cnt_cli_max_operands(argc, argv, optind, 0, "operands");
		if (which == 3 && (r = cnt_seal_verify(dir, &files, &err)) < 0)
			cnt_die_err(&err);
		if (which == 3 && r > 0) {
			cnt_stats_release(&st);
			cnt_cli_note("%s", err.msg);
			return cnt_cli_finish() + 1;
		}
		if (which == 2) {
			if (cnt_seal_dir_open(&s, dir, 0, &err) != 0 || cnt_seal_show(&s, season, scope, table, &out, &err) != 0)
				cnt_die_err(&err);
			cnt_seal_dir_close(&s);
			cnt_cli_write(out.p, out.len);
		}
		if (co.verbose && which == 3)
			cnt_cli_note("'%s': intact, %zu files", dir, files);
		cnt_stats_u64(&st, "files", files);
		cnt_stats_bool(&st, "intact", 1);
		if (co.stats_path)
			cnt_stats_write(&st, co.stats_path);
		else
			cnt_stats_release(&st);
		cnt_buf_release(&out);
		return cnt_cli_finish();
	}
	if (defs_path == NULL || optind == argc)
		cnt_die_usage("%s needs -d definitions and bucket files", cmd);
	if (which == 1 && retractions == NULL)
		cnt_die_usage("correct needs --retractions ledger");
	{
		cnt_defs *defs = cnt_defs_load(defs_path, &err);
		cnt_board_build bb;
		int rfd = -1;

		/* bucket files counted under a version since edited in place
		 * are refused as they are read (cnt-definitions(5)) */
		if (defs == NULL || cnt_fp_policy(defs, &err) != 0 ||
		    cnt_seal_begin(&bb, defs, defs_path, season, now, which == 0, scopes, scopes_from, &err) != 0)
			cnt_die_err(&err);
		if (which == 1)
			rfd = cnt_cli_open_in(retractions);
		cnt_progress_start(&co);
		for (int i = optind; i < argc; i++) {
			int fd = cnt_cli_open_in(argv[i]);

			cnt_progress_input(fd, argv[i]);
			if (cnt_board_add_buckets(&bb, fd, argv[i], cnt_progress_add, &err) != 0)
				cnt_die_err(&err);
			cnt_cli_close_in(fd);
		}
		cnt_progress_end();
		if (cnt_proj_finish(bb.proj, &err) != 0 || cnt_seal_dir_open(&s, dir, 1, &err) != 0 ||
		    (which == 0 ? cnt_seal_close(&s, &bb, scope, now, &err) :
			cnt_seal_correct(&s, &bb, scope, rfd, retractions, now, &err)) != 0)
			cnt_die_err(&err);
		if (rfd >= 0)
			cnt_cli_close_in(rfd);
		cnt_stats_u64(&st, "in", cnt_proj_get_stats(bb.proj)->buckets_read);
		cnt_stats_u64(&st, "files", s.nouts);
		{
			uint64_t out = 0;

			for (size_t i = 0; i < s.nouts; i++)
				out += s.outs[i].records;
			cnt_stats_u64(&st, "out", out);
		}
		cnt_stats_array(&st, "published");
		for (size_t i = 0; i < s.nouts; i++) {
			cnt_stats_object(&st, NULL);
			cnt_stats_str(&st, "scope", s.outs[i].scope, -1);
			cnt_stats_str(&st, "file", s.outs[i].path, -1);
			cnt_stats_u64(&st, "records", s.outs[i].records);
			cnt_stats_close(&st);
			if (co.verbose)
				cnt_cli_note("%s '%s': %llu records", which == 0 ? "sealed" : "corrections", s.outs[i].path,
					(unsigned long long)s.outs[i].records);
		}
		cnt_stats_close(&st);
		if (which == 1 && s.nouts == 0)
			cnt_cli_note("season '%s': no standing differs from those published; nothing published", season);
		if (co.stats_path)
			cnt_stats_write(&st, co.stats_path);
		else
			cnt_stats_release(&st);
		if (cnt_seal_commit(&s, reg, unreg, &err) != 0)
			cnt_die_err(&err);
		cnt_seal_dir_close(&s);
		cnt_board_end(&bb);
		cnt_fp_policy_end();
		cnt_defs_free(defs);
	}
	return cnt_cli_finish();
}
