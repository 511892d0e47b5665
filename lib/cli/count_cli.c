/*
 * count_cli.c - cnt-count's run after its options (see count_cli.h).
 */
#include "cli/count_cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/stage_stats.h"
#include "count/fused.h"
#include "count/rollup.h"
#include "model/fingerprint.h"

/* --snapshots: called by the fused run after each segment (on its reader). */
typedef struct snapshots {
	cnt_dedup *dd;
	const char *dir;
	char **names;
} snapshots;

static void snapshot(void *ctx, size_t i)
{
	const snapshots *s = ctx;

	cnt_snapshot_save(s->dd, s->dir, s->names[i]);
}

/* --stats: the chain's totals, then each stage's keys as its tool gives them. */
static void write_stats(const char *path, const cnt_defs *defs, cnt_dedup_filter *f, cnt_window *win,
	const cnt_topkey *hot, const cnt_accum_stats *st, size_t loaded, size_t kept, uint32_t shards,
	const cnt_shardmap *map, size_t memory)
{
	const cnt_dedup_totals *t = cnt_dedup_filter_totals(f);
	const cnt_window_totals *wt = cnt_window_get_totals(win);
	cnt_stats s;

	cnt_stats_begin(&s);
	cnt_stats_u64(&s, "in", t->in);
	cnt_stats_u64(&s, "out", st->groups_out);
	cnt_stats_u64(&s, "rejected", t->rejected);
	cnt_stats_u64(&s, "duplicates", t->duplicates);
	cnt_stats_u64(&s, "held", 0);
	cnt_stats_u64(&s, "late", wt->late);
	cnt_stats_bool(&s, "balanced", t->in == t->out + t->duplicates + t->rejected && t->out == st->events);
	cnt_stats_object(&s, "rejected_by_reason");
	cnt_stats_u64(&s, "unknown_tenant", t->unknown_tenant);
	cnt_stats_u64(&s, "unknown_counter", t->unknown_counter);
	cnt_stats_u64(&s, "not_monotonic", t->not_monotonic);
	cnt_stats_close(&s);
	cnt_stats_object(&s, "dedup");
	cnt_stage_stats_dedup(&s, defs, f, loaded, kept);
	cnt_stats_close(&s); /* counters */
	cnt_stats_close(&s);
	cnt_stats_object(&s, "window");
	cnt_stage_stats_window(&s, defs, win, hot, shards, map);
	cnt_stats_close(&s); /* counters */
	cnt_stats_close(&s);
	cnt_stats_object(&s, "accumulate");
	cnt_stage_stats_accum(&s, st, memory);
	cnt_stats_close(&s);
	cnt_stats_write(&s, path);
}

int cnt_count_main(cnt_count_opts *o)
{
	const cnt_cli_common *co = o->co;
	cnt_dedup_outs *side = &o->side;
	const char *out_path = o->out_path, *split = o->split, *defs_path = o->defs_path;
	cnt_codec_id codec = o->codec;
	int level = o->level, codec_set = o->codec_set, nin = o->nfiles > 0 ? o->nfiles : 1;
	size_t memory = o->memory, loaded;
	static char dash[] = "-";
	static char *stdin_name[] = {dash};
	char **names = o->nfiles > 0 ? o->files : stdin_name;
	cnt_shardmap *map = NULL;
	cnt_out out;
	cnt_fused fu = {.threads = o->threads};
	cnt_writer *w;
	cnt_err err;
	cnt_defs *defs;
	cnt_dedup dd;
	int *fds;
	const cnt_dedup_totals *t;
	const cnt_accum_stats *st;
	cnt_rollup_zones zones;
	snapshots snaps;

	if ((fds = calloc((size_t)nin, sizeof(*fds))) == NULL)
		cnt_oom(-1);
	for (int i = 0; i < nin; i++)
		fds[i] = cnt_cli_open_in(names[i]);
	if ((defs = cnt_defs_load(defs_path, &err)) == NULL || cnt_fp_policy(defs, &err) != 0 ||
	    (o->map_path && (map = cnt_shardmap_load(o->map_path, &err)) == NULL) ||
	    cnt_dedup_load(&dd, side->state_path, cnt_dedup_expected_keys(o->files, o->nfiles), 1, &err) != 0 ||
	    (fu.acc = cnt_accum_new(fu.threads > 1 ? memory / 2 : memory, o->tmpdir, &err)) == NULL ||
	    (fu.threads > 1 && (fu.acc2 = cnt_accum_new(memory / 2, o->tmpdir, &err)) == NULL))
		cnt_die_err(&err);
	loaded = dd.count;
	if (split) /* the whole output first, then split (cnt(7), "TENANT SEPARATION") */
		out.fd = cnt_cli_scratch(o->tmpdir);
	else
		cnt_cli_avro_out(&out, out_path, codec_set, &codec);
	cnt_dedup_outs_open(side, "cnt-count", codec_set, codec, level);
	if ((fu.filter = cnt_dedup_filter_new(defs, defs_path, &dd, NULL, side->dups, &err)) == NULL ||
	    (fu.win = cnt_window_new(defs, defs_path, o->shards, NULL, &err)) == NULL ||
	    (co->stats_path && (fu.hot = cnt_topkey_new(CNT_TOPKEY_SLOTS, &err)) == NULL))
		cnt_die_err(&err);
	cnt_window_set_map(fu.win, map);
	fu.rejects = &side->rejects;
	fu.input = cnt_progress_input;
	fu.progress = cnt_progress_add;
	if (o->snap_dir) {
		snaps = (snapshots){&dd, o->snap_dir, names};
		fu.input_done = snapshot;
		fu.ctx = &snaps;
	}
	cnt_progress_start(co);
	if (cnt_fused_run(&fu, fds, names, (size_t)nin, &err) != 0 || cnt_dedup_filter_finish(fu.filter, &err) != 0 ||
	    cnt_window_finish(fu.win, &err) != 0 || cnt_rejects_flush(&side->rejects, &err) != 0)
		cnt_die_err(&err);
	/* --base: bucket records into the halves their members belong to */
	for (int i = 0; i < o->nbase; i++) {
		int fd = cnt_cli_open_in(o->bases[i]);

		if (cnt_accum_read_buckets(fu.acc, fu.threads > 1 ? fu.acc2 : NULL, fd, o->bases[i], cnt_progress_add, &err) != 0)
			cnt_die_err(&err);
		cnt_cli_close_in(fd);
	}
	cnt_progress_end();
	for (int i = 0; i < nin; i++)
		cnt_cli_close_in(fds[i]);
	/* The state is saved now to its temporary file (it is always one,
	 * and committed after the buckets, as cnt-dedup does): then the dedup
	 * table is dead, and its memory, faulted in already, holds the day
	 * records until they are written. */
	cnt_dedup_outs_save(side, &dd);
	cnt_accum_lend(fu.acc, dd.slots, (dd.mask + 1) * sizeof(*dd.slots));
	/* day roll-ups, as cnt-accumulate -d writes them (zones from defs) */
	zones = (cnt_rollup_zones){defs, NULL, defs_path};
	if (o->days && ((zones.tzc = cnt_tz_cache_new()) == NULL ? cnt_err_nomem(&err) :
			cnt_accum_days(fu.acc, cnt_rollup_defs_zone, &zones, &err)) != 0)
		cnt_die_err(&err);
	if ((w = split ? cnt_bucket_writer_new(out.fd, "the scratch file", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err)
		       : cnt_bucket_writer_new(out.fd, out_path ? out_path : "standard output", codec, level, &err)) == NULL ||
	    cnt_fp_track(w, CNT_FP_BUCKETS, &err) != 0 ||
	    (fu.acc2 ? cnt_accum_finish_halves(fu.acc, fu.acc2, w, &err) : cnt_accum_finish(fu.acc, w, &err)) != 0 ||
	    cnt_writer_finish(w, &err) != 0 || cnt_accum_check_balance(fu.acc, &err) != 0)
		cnt_die_err(&err);
	t = cnt_dedup_filter_totals(fu.filter);
	st = cnt_accum_get_stats(fu.acc);
	/* before anything is committed: the state stays as it was (its
	 * temporary, written above, is removed with the others) */
	if (o->strict && st->stale)
		cnt_die("%" PRIu64 " stale records: compensations counted with their originals left their latest "
			"times unknown (cnt-retract --rebuild recounts them)", st->stale);
	if (split)
		cnt_cli_split_buckets(out.fd, "the scratch file", split, codec_set ? codec : CNT_CODEC_ZSTD, level);
	if (co->stats_path)
		write_stats(co->stats_path, defs, fu.filter, fu.win, fu.hot, st, loaded, side->kept, o->shards, map, memory);
	/* The buckets first, then the state, as cnt-dedup does. */
	if (split)
		cnt_cli_split_commit();
	else
		cnt_cli_commit(&out);
	cnt_dedup_outs_commit(side);
	if (st->sum_overflows)
		cnt_cli_note("warning: %" PRIu64 " bucket sums do not fit 64 bits; they are kept exact as 128-bit (sum_high, sum) with sum_overflow set",
			st->sum_overflows);
	if (co->verbose)
		cnt_cli_note("in %" PRIu64 ", duplicate %" PRIu64 ", rejected %" PRIu64 ", late %" PRIu64
			"; %" PRIu64 " bucket records out, %" PRIu64 " spill runs; state %zu keys loaded, %zu saved",
			t->in, t->duplicates, t->rejected, cnt_window_get_totals(fu.win)->late, st->groups_out, st->runs,
			loaded, side->kept);
	cnt_writer_free(w);
	cnt_dedup_filter_free(fu.filter);
	cnt_window_free(fu.win);
	cnt_topkey_free(fu.hot);
	cnt_shardmap_free(map);
	cnt_accum_free(fu.acc);
	cnt_accum_free(fu.acc2);
	cnt_tz_cache_free(zones.tzc); /* after the accumulator: its roll-ups hold zones */
	cnt_dedup_release(&dd);
	cnt_fp_policy_end();
	cnt_defs_free(defs);
	cnt_dedup_outs_release(side);
	free(fds);
	return cnt_cli_finish();
}
