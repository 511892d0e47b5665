/*
 * stage_outs.h - the side outputs of the counting stages, opened and
 * committed in one place for the tools that write them: the rejects
 * stream (cnt-dedup, cnt-window, cnt-count) and the dedup step's
 * duplicates and state (cnt-dedup, cnt-count).
 *
 * Each file is written to a temporary and renamed into place by
 * cnt_dedup_outs_commit(), which the caller calls after committing its
 * main output: the duplicates, the rejects, then the state last, so that
 * a failure in between leaves the old state and rerunning the segment
 * gives the same output.  A failure to open or write dies with one line
 * (cli.h).
 */
#ifndef CNT_CLI_STAGE_OUTS_H
#define CNT_CLI_STAGE_OUTS_H

#include <stddef.h>

#include "cli/cli.h"
#include "count/dedup.h"
#include "count/stage.h"

/* Rejects to path (a temporary, into o) as JSON lines, or without a path
 * to standard error as text lines starting with tool. */
void cnt_cli_rejects(cnt_rejects *rej, cnt_out *o, const char *path, const char *tool);

typedef struct cnt_dedup_outs {
	const char *dup_path, *rej_path, *state_path;   /* the caller's; NULL: none */
	cnt_writer *dups;            /* the duplicates' writer; NULL without dup_path */
	cnt_rejects rejects;
	size_t kept;                 /* state keys saved (cnt_dedup_outs_save) */
	cnt_out dup_out, rej_out, state_out;
} cnt_dedup_outs;

/* Opens the duplicates (events, compressed with codec when codec_set,
 * else zstandard, at level) and the rejects of tool. */
void cnt_dedup_outs_open(cnt_dedup_outs *o, const char *tool, int codec_set, cnt_codec_id codec, int level);
/* Writes dd to a temporary of the state path, when there is one. */
void cnt_dedup_outs_save(cnt_dedup_outs *o, cnt_dedup *dd);
/* Writes dd to a temporary of path (into out), committed by the caller;
 * returns the keys saved.  Always a temporary (cnt_cli_out_file): nothing
 * reaches a reader of path before the commit, so a caller may save early
 * and still fail without a trace. */
size_t cnt_dedup_save_to(cnt_dedup *dd, cnt_out *out, const char *path);
/* Renames the duplicates, the rejects and the state into place. */
void cnt_dedup_outs_commit(cnt_dedup_outs *o);
void cnt_dedup_outs_release(cnt_dedup_outs *o);

/* --snapshots (cnt-dedup, cnt-count): after each input segment, the state
 * as it stands then, in dir/<the segment's file name>.state. */
/* The snapshot path of segment name into buf (of n); dies (usage) when it
 * does not fit. */
const char *cnt_snapshot_path(char *buf, size_t n, const char *dir, const char *name);
/* Checks that the n segments are named files with distinct file names,
 * and makes dir when missing (not its parents); dies with one line. */
void cnt_snapshots_check(const char *dir, char **names, int n);
/* Writes the snapshot of segment name: dd saved to a temporary, renamed
 * into place at once. */
void cnt_snapshot_save(cnt_dedup *dd, const char *dir, const char *name);

#endif
