/*
 * cnt-stats - gather the --stats files of one run into one table (or one
 * JSON object) of operator signals, each against its threshold, and exit
 * 1 when one is flagged, so that a nightly job can alarm
 * (lib/ops/signals.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ops/signals.h"

static const char usage[] =
	"usage: cnt-stats [-F table|json] [--thresholds file] [--threshold name=value ...]\n"
	"                 [--stats file] [-v] [--progress | --no-progress] file ...\n";

static const char help[] =
	"Read the --stats files of one run (any cnt tool's) and print their operator\n"
	"signals in one table: dedup hit rate, late ratio, rejects by reason, holds,\n"
	"top-key share, projection lag (as_of_age_s), rebuild differences, canary\n"
	"age, and every conservation check; a value beyond its threshold is FLAGGED.\n"
	"Exit 0 when nothing is flagged, 1 when something is, 2 on trouble.\n"
	"\n"
	"  -F, --output-format FMT table (default) or json (one object)\n"
	"      --thresholds FILE   thresholds from a JSON object {\"name\": number|null}\n"
	"      --threshold SET     one threshold, NAME=VALUE (a number >= 0, or none);\n"
	"                          repeatable, applied after --thresholds\n"
	"      --stats FILE        counts as one JSON object (- for standard error)\n"
	"  -v, --verbose           a summary line on standard error\n"
	"      --progress          accepted, as by every tool (there is nothing to show)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"The default thresholds and the seeds they come from: cnt-stats(1).\n";

enum { OPT_THRESHOLDS = CNT_OPT_TOOL_BASE, OPT_THRESHOLD };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output-format", required_argument, NULL, 'F'},
		{"thresholds", required_argument, NULL, OPT_THRESHOLDS},
		{"threshold", required_argument, NULL, OPT_THRESHOLD},
		CNT_CLI_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	cnt_sig_limits lim;
	cnt_signals sig = CNT_SIGNALS_INIT;
	cnt_buf out = CNT_BUF_INIT;
	const char *thresholds = NULL, **sets;
	size_t nsets = 0;
	cnt_err err;
	int json = 0, c, flagged;

	cnt_cli_init("cnt-stats", usage, help);
	if ((sets = calloc((size_t)argc, sizeof(*sets))) == NULL)
		cnt_die_nomem();
	while ((c = cnt_cli_getopt(argc, argv, "F:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'F':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0)
				cnt_die_usage("--output-format: '%s' is not table or json", optarg);
			json = strcmp(optarg, "json") == 0;
			break;
		case OPT_THRESHOLDS: thresholds = optarg; break;
		case OPT_THRESHOLD: sets[nsets++] = optarg; break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (optind == argc)
		cnt_die_usage("no statistics file given: name the --stats files of the run");
	cnt_sig_limits_default(&lim);
	if (thresholds && cnt_sig_limits_load(&lim, thresholds, &err) != 0)
		cnt_die_err(&err);
	for (size_t i = 0; i < nsets; i++)
		if (cnt_sig_limits_set(&lim, sets[i], &err) != 0)
			cnt_die_usage("--threshold: %s", err.msg);
	free(sets);
	for (int i = optind; i < argc; i++)
		if (cnt_signals_add_file(&sig, &lim, argv[i], &err) != 0)
			cnt_die_err(&err);
	cnt_oom(json ? cnt_signals_json(&sig, &out) : cnt_signals_table(&sig, &out));
	cnt_cli_write(out.p, out.len);
	cnt_buf_release(&out);
	if (co.stats_path) {
		cnt_stats s;

		cnt_stats_begin(&s);
		cnt_stats_u64(&s, "in", sig.files);
		cnt_stats_u64(&s, "out", sig.n);
		cnt_stats_u64(&s, "flagged", sig.flagged);
		cnt_stats_write(&s, co.stats_path);
	}
	if (co.verbose)
		cnt_cli_note("%zu files, %zu signals, %zu flagged", sig.files, sig.n, sig.flagged);
	flagged = sig.flagged > 0;
	cnt_signals_release(&sig);
	cnt_cli_finish();
	return flagged ? CNT_EXIT_DIFFER : CNT_EXIT_OK;
}
