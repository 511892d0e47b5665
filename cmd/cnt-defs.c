/*
 * cnt-defs - compare a proposed definitions file with the current one and
 * say, field by field, whether each change may apply in place.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ingest/ivt.h"
#include "model/fingerprint.h"

static const char usage[] =
	"usage: cnt-defs check [--stats file] [-v] [--progress | --no-progress] current proposed\n";

static const char help[] =
	"Compare the definitions file proposed with current, field by field.  A\n"
	"change that would reinterpret counted events (type, bounds, lateness or\n"
	"dedup horizon, dedup key, windows removed, tie-break, ...) is refused as\n"
	"an in-place edit and names the new counter version to declare instead; a\n"
	"compatible one (a window added, a cap raised, a cost note) is accepted.  A\n"
	"season's dates may change while it is open, its state only forward.  The\n"
	"list files of proposed's filters are read and must be well-formed.\n"
	"One line per change.  Exit 0 when every change is compatible, 1 when one\n"
	"is refused, 2 on trouble.\n"
	"\n"
	"      --stats FILE        counts as one JSON object (- for standard error)\n"
	"  -v, --verbose           a summary line on standard error\n"
	"      --progress          accepted, as by every tool (there is nothing to show)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-defs(1) and cnt-definitions(5).\n";

typedef struct {
	uint64_t compatible, refused;
} tally;

static int print_change(void *ctx, const cnt_fp_change *ch)
{
	tally *t = ctx;
	const char *what = strcmp(ch->field, "definition") == 0
				   ? (strcmp(ch->from, "(none)") == 0 ? "added" : "removed") : NULL;

	if (what != NULL)
		cnt_cli_printf("%s: %s", ch->label, what);
	else
		cnt_cli_printf("%s: %s %s \u2192 %s", ch->label, ch->field, ch->from, ch->to);
	if (!ch->reinterprets) {
		t->compatible++;
		cnt_cli_printf(": compatible\n");
	} else {
		t->refused++;
		if (what != NULL)
			cnt_cli_printf(": refused, counted data may refer to it\n");
		else if (strncmp(ch->label, "season ", 7) == 0)
			cnt_cli_printf(": refused, the season is closing or closed (its state only moves "
				       "forward); declare a new season\n");
		else if (ch->next_version > 0)
			cnt_cli_printf(": refused, it reinterprets counted events; declare the change as "
				       "version %d\n", ch->next_version);
		else
			cnt_cli_printf(": refused, it reinterprets standings; declare a new board\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {CNT_CLI_LONGOPTS, {NULL, 0, NULL, 0}};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	cnt_defs *cur, *prop;
	cnt_ivt *lists;
	tally t = {0, 0};
	cnt_err err;
	int c;

	cnt_cli_init("cnt-defs", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, CNT_CLI_SHORT, longopts)) != -1)
		cnt_cli_option(c, optarg, &co);
	if (optind >= argc || strcmp(argv[optind], "check") != 0)
		cnt_die_usage(optind >= argc ? "a command is needed (check)" : "unknown command '%s'",
			      argv[optind]);
	if (argc - optind < 3)
		cnt_die_usage("check needs two definitions files");
	cnt_cli_max_operands(argc, argv, optind, 3, "check and two definitions files");
	if ((cur = cnt_defs_load(argv[optind + 1], &err)) == NULL)
		cnt_die_err(&err);
	if ((prop = cnt_defs_load(argv[optind + 2], &err)) == NULL)
		cnt_die_err(&err);
	/* the filters' list files must be readable and well-formed too */
	if ((lists = cnt_ivt_new(prop, &err)) == NULL)
		cnt_die_err(&err);
	cnt_ivt_free(lists);
	if (cnt_fp_compare_defs(cur, prop, print_change, &t, &err) < 0)
		cnt_die_err(&err);
	cnt_defs_free(cur);
	cnt_defs_free(prop);
	if (co.stats_path) {
		cnt_stats s;
		cnt_stats_begin(&s);
		cnt_stats_u64(&s, "changes", t.compatible + t.refused);
		cnt_stats_u64(&s, "compatible", t.compatible);
		cnt_stats_u64(&s, "refused", t.refused);
		cnt_stats_write(&s, co.stats_path);
	}
	if (co.verbose)
		fprintf(stderr, "cnt-defs: %llu changes, %llu compatible, %llu refused\n",
			(unsigned long long)(t.compatible + t.refused),
			(unsigned long long)t.compatible, (unsigned long long)t.refused);
	cnt_cli_finish();
	return t.refused ? CNT_EXIT_DIFFER : CNT_EXIT_OK;
}
