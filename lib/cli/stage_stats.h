/*
 * stage_stats.h - the --stats keys of the counting stages, written in one
 * place so that cnt-dedup, cnt-window, cnt-accumulate and cnt-count (which
 * gives each step's keys under its name) cannot drift apart; and
 * cnt-ingest's.
 *
 * Each function writes a stage's keys into the object open in s (the top
 * level, or an object the caller opened) and leaves it open.
 */
#ifndef CNT_CLI_STAGE_STATS_H
#define CNT_CLI_STAGE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "cli/cli.h"
#include "count/accum.h"
#include "count/dedup_filter.h"
#include "count/shardmap.h"
#include "count/topkey.h"
#include "count/window.h"
#include "ingest/cap.h"
#include "ingest/ingest.h"
#include "model/defs.h"

/* cnt-dedup(1)'s keys: loaded and kept are the state keys read and saved. */
void cnt_stage_stats_dedup(cnt_stats *s, const cnt_defs *defs, cnt_dedup_filter *f, size_t loaded, size_t kept);

/* cnt-window(1)'s keys: shards as given (1 without --shards), map the
 * shard map or NULL, hot the top keys seen (not NULL). */
void cnt_stage_stats_window(cnt_stats *s, const cnt_defs *defs, cnt_window *win, const cnt_topkey *hot,
	uint32_t shards, const cnt_shardmap *map);

/* cnt-accumulate(1)'s keys; memory is the limit in bytes. */
void cnt_stage_stats_accum(cnt_stats *s, const cnt_accum_stats *st, size_t memory);

/* cnt-ingest(1)'s keys, after cnt_ingest_finish: the balance, reasons,
 * holds, per-counter admissions and their cost at now_ms's version, the
 * inputs, members (NULL: no --members) against each tenant's cap, and the
 * hottest keys of the events written (hot, the run's cnt_ingest_cfg.hot;
 * NULL: none), as cnt-window's.  0, or -1 with err set (out of memory). */
int cnt_stage_stats_ingest(cnt_stats *s, const cnt_ingest *g, const cnt_members *members,
	const cnt_topkey *hot, int64_t now_ms, cnt_err *err);

#endif
