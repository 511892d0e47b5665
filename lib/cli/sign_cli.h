/*
 * sign_cli.h - cnt-sign's run over events, from its parsed options to its
 * exit status (cmd/cnt-sign.c parses; cnt-sign(1) says what it does):
 * every JSON line of the inputs signed with a key, or written in its
 * canonical form (ingest/sigform.h), --stats and -v's summary line.
 */
#ifndef CNT_CLI_SIGN_CLI_H
#define CNT_CLI_SIGN_CLI_H

#include "cli/cli.h"
#include "ingest/sigform.h"

/* Signs every line of the n inputs names (none: standard input) with k,
 * or writes each line's canonical bytes when k is NULL, into path (NULL
 * or "-": standard output; a file only once all is written).  A line
 * that cannot be signed stops the run, naming its file and line.
 * Returns the exit status; dies on trouble (cli.h). */
int cnt_sign_main(const cnt_sig_key *k, char *const *names, int n, const char *path, const cnt_cli_common *co);

#endif
