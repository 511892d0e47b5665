/*
 * cnt-rank - answer top-N, a member's rank, value and neighbourhood from a
 * published ranked view, with a version and an as-of on every answer; or
 * verify a whole view (lib/view/rank.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "base/outfile.h"
#include "view/guard.h"
#include "view/pin.h"
#include "view/rank.h"
#include "view/verified.h"
#include "view/view.h"

static const char usage[] =
	"usage: cnt-rank -w views -b board [--scope key] [--view-version n | --pin token]\n"
	"                [--if-newer version|token] [--offset k] [--now time]\n"
	"                [--overlay events] [--directory file] [-F json|table]\n"
	"                [--verified] [--guard file] [--tenant id]\n"
	"                [--stats file] [-v] [--progress | --no-progress] question\n"
	"       question: top [n] | rank member | around member [k] | value member | verify\n";

static const char help[] =
	"Answer from a board's published view (or a pinned version): the top N, a\n"
	"member's rank (exact inside the materialised head, a band from the histogram\n"
	"beyond it), the neighbourhood of +-k positions around a member, a member's\n"
	"value; or verify the whole view against its checksums.  Every answer carries\n"
	"board, scope, version, as-of and whether the view is stale against the\n"
	"board's freshness budget.  Options may come before or after the question.\n"
	"\n"
	"  -w, --views DIR         the view directory written by cnt-project\n"
	"  -b, --board ID          the leaderboard\n"
	"      --scope KEY         the scope (default global)\n"
	"      --view-version N    answer from version N instead of the published one\n"
	"      --pin TOKEN         answer from the version an earlier answer's token names\n"
	"                          (status 7 when it is no longer retained)\n"
	"      --if-newer N|TOKEN  answer only if the published version is not N (nor\n"
	"                          the token's); else status 6 and nothing printed\n"
	"      --offset K          top: skip the first K positions (paging)\n"
	"      --now TIME          the time staleness is judged at (default: clock)\n"
	"      --overlay FILE      the asking member's events since the view was built\n"
	"                          (a log segment): those the view has not absorbed are\n"
	"                          added to the member's value before ranking\n"
	"      --directory FILE    display names and opt-outs, JSON lines\n"
	"                          {\"member_ref\":..,\"display_name\":..,\"opted_out\":..}\n"
	"      --verified          answer from the verified view (the count after the\n"
	"                          audit, as of its watermark) instead of the fast one\n"
	"      --guard FILE        value: serve a display count that never goes down\n"
	"                          but for a verified value, recorded in FILE\n"
	"  -F, --output-format FMT json (default) or table, for people\n"
	"      --tenant ID         who is asking: refuse (status 5) a view or overlay\n"
	"                          of another tenant (default $CNT_TENANT)\n"
	"      --stats FILE        counts as one JSON object ('-': standard error)\n"
	"  -v, --verbose           one line about the view answered from, on standard error\n"
	"      --progress          progress on standard error (default: on a terminal)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the program's version\n"
	"\n"
	"See cnt-rank(1) and cnt-view(5).\n";

enum { OPT_SCOPE = CNT_OPT_TOOL_BASE, OPT_VIEW_VERSION, OPT_NOW, OPT_OVERLAY, OPT_DIRECTORY, OPT_VERIFIED,
	OPT_GUARD, OPT_PIN, OPT_IF_NEWER, OPT_OFFSET };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"views", required_argument, NULL, 'w'},
		{"board", required_argument, NULL, 'b'},
		{"scope", required_argument, NULL, OPT_SCOPE},
		{"view-version", required_argument, NULL, OPT_VIEW_VERSION},
		{"now", required_argument, NULL, OPT_NOW},
		{"overlay", required_argument, NULL, OPT_OVERLAY},
		{"directory", required_argument, NULL, OPT_DIRECTORY},
		{"output-format", required_argument, NULL, 'F'},
		{"tenant", required_argument, NULL, CNT_OPT_TENANT},
		{"verified", no_argument, NULL, OPT_VERIFIED},
		{"guard", required_argument, NULL, OPT_GUARD},
		{"pin", required_argument, NULL, OPT_PIN},
		{"if-newer", required_argument, NULL, OPT_IF_NEWER},
		{"offset", required_argument, NULL, OPT_OFFSET},
		CNT_CLI_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	const char *who = NULL, *views = NULL, *board = NULL, *scope = "global", *dir_path = NULL;
	const char *guard_path = NULL, *pin_arg = NULL, *newer_arg = NULL;
	int version = 0, table = 0, have_now = 0, verified = 0, newer = 0, newer_tok = 0, c;
	uint64_t offset = 0;
	cnt_pin_token pin, ntok;
	cnt_guard *guard = NULL;
	cnt_rank_source src = {.overlay_fd = -1};
	cnt_rank_question q;
	cnt_rank_answer a;
	cnt_rank_dir *members = NULL;
	cnt_view v;
	cnt_buf out = CNT_BUF_INIT, gbuf = CNT_BUF_INIT, token = CNT_BUF_INIT;
	cnt_out gout;
	cnt_err err;
	char vdir[4200];

	cnt_cli_init("cnt-rank", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "w:b:F:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'w': views = optarg; break;
		case 'b': board = optarg; break;
		case OPT_SCOPE: scope = optarg; break;
		case OPT_VIEW_VERSION: version = (int)cnt_cli_uint("--view-version", optarg, 1, 999999); break;
		case OPT_NOW: src.now = cnt_cli_time("--now", optarg); have_now = 1; break;
		case OPT_OVERLAY: src.overlay_name = optarg; break;
		case OPT_DIRECTORY: dir_path = optarg; break;
		case CNT_OPT_TENANT: who = optarg; break;
		case OPT_VERIFIED: verified = 1; break;
		case OPT_GUARD: guard_path = optarg; break;
		case OPT_PIN: pin_arg = optarg; break;
		case OPT_IF_NEWER: newer_arg = optarg; break;
		case OPT_OFFSET: offset = cnt_cli_uint("--offset", optarg, 0, CNT_RANK_TOP_MAX); break;
		case 'F':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0)
				cnt_die_usage("--output-format: '%s' is not json or table", optarg);
			table = strcmp(optarg, "table") == 0;
			break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (views == NULL || board == NULL)
		cnt_die_usage("-w views and -b board are required");
	if (cnt_rank_parse_question(argc - optind, argv + optind, &q, &err) != 0)
		cnt_die_usage("%s", err.msg);
	if (offset && q.kind != CNT_RANK_Q_TOP)
		cnt_die_usage("--offset pages the top question");
	q.offset = offset;
	if ((pin_arg && version) || (newer_arg && (pin_arg || version)))
		cnt_die_usage("--if-newer asks about the published version, --pin and --view-version name one: "
			"one of the three");
	if (pin_arg && (cnt_pin_parse(pin_arg, &pin, &err) != 0 || cnt_pin_check(&pin, board, scope, verified, &err) != 0))
		cnt_die_usage("--pin: %s", err.msg);
	if (newer_arg && (cnt_pin_parse_if_newer(newer_arg, &newer, &ntok, &newer_tok, &err) != 0 ||
		(newer_tok && cnt_pin_check(&ntok, board, scope, verified, &err) != 0)))
		cnt_die_usage("%s", err.msg);
	if (verified && src.overlay_name)
		cnt_die_usage("--overlay adds to the fast count: not with --verified");
	if (guard_path && (q.kind != CNT_RANK_Q_VALUE || src.overlay_name))
		cnt_die_usage("--guard serves the public display count: the value question, without --overlay");
	if (!have_now) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		src.now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	}
	if (cnt_pin_open(&v, views, board, scope, verified, pin_arg ? &pin : NULL, &version, vdir, sizeof(vdir),
		&src.frozen, &err) != 0)
		cnt_die_err(&err);
	cnt_cli_tenant_guard_id(who = cnt_cli_tenant(who), v.desc.tenant_id, vdir, "cnt.view");
	if (newer_arg && cnt_pin_not_modified(&v, newer, newer_tok ? &ntok : NULL)) {
		if (co.verbose)
			cnt_cli_note("%s: version %d is still the published one: not modified", vdir, version);
		cnt_view_close(&v);
		cnt_cli_finish();
		return CNT_EXIT_NOT_MODIFIED;
	}
	if (!verified && v.desc.verified)
		cnt_die("%s: a verified view where the fast view belongs", vdir);
	if (guard_path && (guard = cnt_guard_load(guard_path, &err)) == NULL)
		cnt_die_err(&err);
	if (guard_path)
		cnt_cli_out(&gout, guard_path);
	src.view = &v;
	src.dir = vdir;
	if (dir_path && (members = cnt_rank_dir_load(dir_path, &err)) == NULL)
		cnt_die_err(&err);
	src.members = members;
	if (src.overlay_name)
		cnt_cli_tenant_guard(who, src.overlay_fd = cnt_cli_open_in(src.overlay_name), src.overlay_name);
	if (cnt_rank_answer_question(&src, &q, &a, &err) != 0 || (guard && cnt_guard_answer(guard, &a, &err) != 0))
		cnt_die_err(&err);
	cnt_oom(cnt_pin_of_view(&v, &token) || cnt_buf_putc(&token, 0));
	a.token = (const char *)token.p;
	if ((table ? cnt_rank_format_table(&a, &out) : cnt_rank_format_json(&a, &out)) != 0 ||
	    (guard && cnt_guard_write(guard, &gbuf) != 0))
		cnt_die_nomem();
	if (co.verbose)
		cnt_cli_note("%s: version %d, %llu members, %s", vdir, version,
			(unsigned long long)v.n, cnt_rank_qname(q.kind));
	if (co.stats_path) {
		cnt_stats st;

		cnt_stats_begin(&st);
		cnt_stats_u64(&st, "in", a.overlay_read);
		cnt_stats_u64(&st, "out", a.nitems);
		cnt_stats_str(&st, "question", cnt_rank_qname(q.kind), -1);
		cnt_stats_str(&st, "board", v.desc.board, -1);
		cnt_stats_str(&st, "scope", v.desc.scope, -1);
		cnt_stats_i64(&st, "version", version);
		cnt_stats_u64(&st, "members", v.n);
		cnt_stats_as_of(&st, v.desc.has_as_of, v.desc.as_of, src.now, v.desc.freshness_budget_s);
		cnt_stats_bool(&st, "verified", v.desc.verified);
		if (guard) {
			cnt_stats_u64(&st, "clamped", (uint64_t)a.guard_clamped);
			cnt_stats_u64(&st, "guard_reset", (uint64_t)a.guard_reset);
		}
		cnt_stats_write(&st, co.stats_path);
	}
	if (guard) {   /* recorded before it is served */
		if (cnt_write_all(gout.fd, gbuf.p, gbuf.len) != 0)
			cnt_err_write(&err, errno, "cannot write the guard '%s'", guard_path), cnt_die_err(&err);
		cnt_cli_commit(&gout);
	}
	cnt_cli_write(out.p, out.len);
	if (src.overlay_fd >= 0)
		cnt_cli_close_in(src.overlay_fd);
	cnt_rank_answer_release(&a);
	cnt_rank_dir_free(members);
	cnt_guard_free(guard);
	cnt_view_close(&v);
	cnt_buf_release(&out);
	cnt_buf_release(&gbuf);
	cnt_buf_release(&token);
	return cnt_cli_finish();
}
