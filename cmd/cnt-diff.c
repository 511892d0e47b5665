/*
 * cnt-diff - compare two bucket files record by record, or two ranked
 * views member by member (lib/count/diff.h, lib/view/viewdiff.h).
 */
#include <getopt.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/diff_cli.h"

static const char usage[] =
	"usage: cnt-diff [-q] [-d definitions] [--max-diffs n] [--tolerance r] [--no-days]\n"
	"                [--tenant id] [--stats file] [-v]\n"
	"                [--progress | --no-progress] left right\n";

static const char help[] =
	"Compare two bucket files (sorted, so in one streaming pass) and list each\n"
	"difference as a JSON line {\"key\":..,\"left\":..,\"right\":..}; a record present\n"
	"on one side only has null on the other.  Day roll-ups are compared after\n"
	"the hourly records, their keys marked \"rollup\":\"day\".  Two view\n"
	"directories (VIEWS/BOARD/SCOPE/vNNNNNN or .../current) are compared\n"
	"member by member instead: every member's value, rank and last event\n"
	"time, one line {\"member_ref\":..} per difference; version, built_at and\n"
	"as_of are ignored.  Exit 0 when they are equal, 1 when they differ, 2 on\n"
	"trouble.\n"
	"\n"
	"  -q, --quiet             print nothing; the exit status says it\n"
	"  -d, --definitions FILE  compare approx and unique counters within their\n"
	"                          declared tolerated_error (a unique one without:\n"
	"                          the 95 % bound of its sketch precision)\n"
	"      --max-diffs N       print at most N differences (all are counted)\n"
	"      --tolerance R       estimates are equal when they differ by at most\n"
	"                          the fraction R (e.g. 0.02), overriding -d; default\n"
	"                          for buckets 0 (bytes), for a unique board's views\n"
	"                          0.024375 (three HyperLogLog++ standard errors)\n"
	"      --no-days           compare hourly records only, skipping day roll-ups\n"
	"      --tenant ID         who is asking: refuse (status 5) before printing\n"
	"                          anything unless both sides hold only ID's data\n"
	"                          (default $CNT_TENANT)\n"
	"      --stats FILE        counts as one JSON object (- for standard error)\n"
	"  -v, --verbose           one summary line on standard error\n"
	"      --progress          progress on standard error (default: on a terminal)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"'-' reads one side from standard input.  See cnt-diff(1).\n";

enum { OPT_MAX = CNT_OPT_TOOL_BASE, OPT_TOLERANCE, OPT_NO_DAYS };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"quiet", no_argument, NULL, 'q'},
		{"definitions", required_argument, NULL, 'd'},
		{"max-diffs", required_argument, NULL, OPT_MAX},
		{"tolerance", required_argument, NULL, OPT_TOLERANCE},
		{"no-days", no_argument, NULL, OPT_NO_DAYS},
		{"tenant", required_argument, NULL, CNT_OPT_TENANT},
		CNT_CLI_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	cnt_diff_opts o = {-1, -1, 0, STDOUT_FILENO, cnt_progress_add, NULL, 0, 0};
	const char *defs_path = NULL;
	const char *who = NULL;
	int c;

	cnt_cli_init("cnt-diff", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "qd:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'q': o.quiet = 1; break;
		case 'd': defs_path = optarg; break;
		case OPT_MAX: o.max_shown = (int64_t)cnt_cli_uint("--max-diffs", optarg, 0, INT64_MAX); break;
		case OPT_TOLERANCE: o.tolerance = cnt_cli_double("--tolerance", optarg, 0, 0.999999); o.tolerance_given = 1; break;
		case OPT_NO_DAYS: o.no_days = 1; break;
		case CNT_OPT_TENANT: who = optarg; break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	return cnt_diff_main(argc - optind, argv + optind, defs_path, &o, &co, who);
}
