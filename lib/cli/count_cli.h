/*
 * count_cli.h - cnt-count's run, from its parsed options to its exit
 * status (cmd/cnt-count.c parses; cnt-count(1) says what it does).
 *
 * The order is the tool's contract: the fused run (count/fused.h), the
 * --base bucket files, the dedup state saved to its temporary (then its
 * table's memory holds the day records), the buckets written, --strict's
 * check before anything is committed, the split per tenant, --stats, and
 * the commits: the buckets first, then the duplicates, the rejects and
 * the state last (stage_outs.h).  Every failure dies with one line and
 * leaves no output (cli.h).
 */
#ifndef CNT_CLI_COUNT_CLI_H
#define CNT_CLI_COUNT_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "cli/cli.h"
#include "cli/stage_outs.h"

typedef struct cnt_count_opts {
	const char *defs_path;     /* required */
	const char *out_path;      /* NULL: standard output */
	const char *split;         /* --split-tenants DIR, or NULL */
	const char *tmpdir;        /* never NULL */
	const char *map_path;      /* --shard-map, or NULL */
	const char *snap_dir;      /* --snapshots, or NULL (checked by the caller) */
	const char *const *bases;  /* --base files */
	int nbase;
	char **files;              /* the input segments; none: standard input */
	int nfiles;
	cnt_dedup_outs side;       /* the state, duplicates and rejects paths */
	cnt_codec_id codec;
	int codec_set, level;
	int threads;               /* 1 or 2 */
	int days;                  /* day roll-ups */
	int strict;
	uint32_t shards;
	size_t memory;             /* the accumulator's bound, bytes */
	const cnt_cli_common *co;  /* --stats, -v, --progress */
} cnt_count_opts;

/* Runs cnt-count as o says; returns its exit status (cnt_cli_finish) or
 * dies. */
int cnt_count_main(cnt_count_opts *o);

#endif
