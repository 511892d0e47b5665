/*
 * diff_cli.h - cnt-diff's run, from its parsed options to its exit status
 * (cmd/cnt-diff.c parses; cnt-diff(1) says what it does): two bucket
 * files compared (count/diff.h) or two view directories (view/viewdiff.h),
 * the tenant guard, --stats, the note that says why every day record of
 * one side differs, and -v's summary lines.
 */
#ifndef CNT_CLI_DIFF_CLI_H
#define CNT_CLI_DIFF_CLI_H

#include "cli/cli.h"
#include "count/diff.h"

/* Compares the operands argv[0] and argv[1] (argc of them: exactly two
 * are needed) as o says, with the definitions at defs_path (or none),
 * for who (--tenant, or NULL: $CNT_TENANT).  Returns the exit status:
 * CNT_EXIT_OK when they are equal, CNT_EXIT_DIFFER when not; dies on
 * trouble (cli.h). */
int cnt_diff_main(int argc, char **argv, const char *defs_path, cnt_diff_opts *o, const cnt_cli_common *co,
	const char *who);

#endif
