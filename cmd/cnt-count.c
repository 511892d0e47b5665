/*
 * cnt-count - cnt-dedup | cnt-window | cnt-accumulate in one process,
 * the same bytes (lib/count/fused.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/stage_outs.h"
#include "cli/stage_stats.h"
#include "model/fingerprint.h"
#include "count/fused.h"
#include "count/rollup.h"

static const char usage[] =
	"usage: cnt-count -d definitions [-s state] [--snapshots dir] [-o file] [-D file] [-r file]\n"
	"                 [--shards n | --shard-map file] [-m size] [-T dir] [-c codec] [--level n]\n"
	"                 [--base file]... [--threads n] [--no-days [--split-tenants dir]] [--strict]\n"
	"                 [--stats file] [-v]\n"
	"                 [--progress | --no-progress]\n"
	"                 [file ...]\n";

static const char help[] =
	"Count events into a bucket file in one process: the bytes of\n"
	"cnt-dedup | cnt-window | cnt-accumulate -d, without the events between them.\n"
	"\n"
	"  -d, --definitions FILE  tenants and counters; required\n"
	"  -s, --state FILE        dedup state: read if it exists, rewritten (cnt-dedup -s)\n"
	"      --snapshots DIR     after each input segment, the state as it stands\n"
	"                          then, as DIR/<segment file name>.state (cnt-dedup)\n"
	"  -o, --output FILE       bucket file (default standard output)\n"
	"  -D, --duplicates FILE   the dropped duplicates, as events\n"
	"  -r, --rejects FILE      events naming an undeclared tenant or counter\n"
	"                          version, as JSON lines (default: standard error)\n"
	"      --shards N          split every key over N shards by event_id (default 1)\n"
	"      --shard-map FILE    split only the keys a shard map names over their\n"
	"                          shards (cnt-shardmap(5)); other keys are in shard 0\n"
	"  -m, --memory SIZE       spill sorted runs to disk above SIZE\n"
	"  -T, --tmpdir DIR        where runs are spilled (default $TMPDIR or /tmp)\n"
	"  -c, --codec NAME        output codec (default zstandard for a file, null\n"
	"                          for a pipe)\n"
	"      --level N           compression level\n"
	"      --base FILE         a bucket file merged in, as cnt-accumulate merges bucket\n"
	"                          files with the events (repeatable)\n"
	"      --threads N         1, or 2 (default): a reader thread beside the counting\n"
	"      --no-days           no local-day roll-ups (cnt-accumulate without -d)\n"
	"      --split-tenants DIR one bucket file per tenant, DIR/TENANT/buckets.avro,\n"
	"                          as cnt-accumulate --split-tenants (with --no-days)\n"
	"      --strict            fail (status 2, no output, the state kept) when a\n"
	"                          record is stale, as cnt-accumulate --strict\n"
	"      --stats FILE        counts as one JSON object, each stage's under its name\n"
	"  -v, --verbose           one summary line on standard error\n"
	"      --progress          progress on standard error (default: on a terminal)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-count(1).\n";

enum { OPT_SHARDS = CNT_OPT_TOOL_BASE, OPT_THREADS, OPT_NO_DAYS, OPT_SHARD_MAP, OPT_STRICT, OPT_SNAPSHOTS, OPT_BASE,
	OPT_SPLIT };

enum { MAX_BASE = 64 };

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

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"definitions", required_argument, NULL, 'd'},
		{"state", required_argument, NULL, 's'},
		{"output", required_argument, NULL, 'o'},
		{"duplicates", required_argument, NULL, 'D'},
		{"rejects", required_argument, NULL, 'r'},
		{"shards", required_argument, NULL, OPT_SHARDS},
		{"shard-map", required_argument, NULL, OPT_SHARD_MAP},
		{"memory", required_argument, NULL, 'm'},
		{"tmpdir", required_argument, NULL, 'T'},
		{"codec", required_argument, NULL, 'c'},
		{"level", required_argument, NULL, CNT_OPT_LEVEL},
		{"threads", required_argument, NULL, OPT_THREADS},
		{"no-days", no_argument, NULL, OPT_NO_DAYS},
		{"strict", no_argument, NULL, OPT_STRICT},
		{"snapshots", required_argument, NULL, OPT_SNAPSHOTS},
		{"base", required_argument, NULL, OPT_BASE},
		{"split-tenants", required_argument, NULL, OPT_SPLIT},
		CNT_CLI_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	const char *defs_path = NULL, *out_path = NULL, *split = NULL;
	const char *tmpdir = getenv("TMPDIR"), *map_path = NULL, *snap_dir = NULL;
	cnt_shardmap *map = NULL;
	int level = CNT_LEVEL_DEFAULT, codec_set = 0, c, nin, days = 1, strict = 0, nbase = 0;
	uint32_t shards = 1;
	size_t memory = 0, loaded;
	cnt_codec_id codec = CNT_CODEC_NULL;
	cnt_out out;
	cnt_dedup_outs side = {0};
	cnt_fused fu = {.threads = 2};
	cnt_writer *w;
	cnt_err err;
	cnt_defs *defs;
	cnt_dedup dd;
	static char dash[] = "-";
	char *stdin_name[] = {dash};
	char **names;
	int *fds;
	const cnt_dedup_totals *t;
	const cnt_accum_stats *st;
	cnt_rollup_zones zones;
	snapshots snaps;
	const char *bases[MAX_BASE];

	cnt_cli_init("cnt-count", usage, help);
	while ((c = getopt_long(argc, argv, "d:s:o:D:r:m:T:c:" CNT_CLI_SHORT, longopts, NULL)) != -1) {
		switch (c) {
		case 'd': defs_path = optarg; break;
		case 's': side.state_path = optarg; break;
		case 'o': out_path = optarg; break;
		case 'D': side.dup_path = optarg; break;
		case 'r': side.rej_path = optarg; break;
		case OPT_SHARDS: shards = (uint32_t)cnt_cli_uint("--shards", optarg, 1, CNT_WINDOW_MAX_SHARDS); break;
		case OPT_SHARD_MAP: map_path = optarg; break;
		case 'm': memory = cnt_cli_size("--memory", optarg, 1u << 20); break;
		case 'T': tmpdir = optarg; break;
		case 'c': codec = cnt_cli_codec("--codec", optarg); codec_set = 1; break;
		case CNT_OPT_LEVEL: level = cnt_cli_level("--level", optarg); break;
		case OPT_THREADS: fu.threads = (int)cnt_cli_uint("--threads", optarg, 1, 2); break;
		case OPT_NO_DAYS: days = 0; break;
		case OPT_STRICT: strict = 1; break;
		case OPT_SNAPSHOTS: snap_dir = optarg; break;
		case OPT_SPLIT: split = optarg; break;
		case OPT_BASE:
			if (strcmp(optarg, "-") == 0)
				cnt_die_usage("--base needs a bucket file, not standard input");
			if (nbase == MAX_BASE)
				cnt_die_usage("at most %d --base files", MAX_BASE);
			bases[nbase++] = optarg;
			break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (defs_path == NULL)
		cnt_die_usage("-d definitions is required");
	if (map_path && shards != 1)
		cnt_die_usage("--shards and --shard-map exclude each other");
	if (split && out_path)
		cnt_die_usage("-o and --split-tenants exclude each other");
	if (split && days)
		cnt_die_usage("--split-tenants needs --no-days: the per-tenant files carry no day roll-ups");
	if (snap_dir)
		cnt_snapshots_check(snap_dir, argv + optind, argc - optind);
	if (tmpdir == NULL || *tmpdir == 0)
		tmpdir = "/tmp";
	if (memory == 0)
		memory = cnt_accum_default_memory();
	nin = argc > optind ? argc - optind : 1;
	names = argc > optind ? argv + optind : stdin_name;
	if ((fds = calloc((size_t)nin, sizeof(*fds))) == NULL)
		cnt_oom(-1);
	for (int i = 0; i < nin; i++)
		fds[i] = cnt_cli_open_in(names[i]);
	if ((defs = cnt_defs_load(defs_path, &err)) == NULL || cnt_fp_policy(defs, &err) != 0 ||
	    (map_path && (map = cnt_shardmap_load(map_path, &err)) == NULL) ||
	    cnt_dedup_load(&dd, side.state_path, cnt_dedup_expected_keys(argv + optind, argc - optind), 1, &err) != 0 ||
	    (fu.acc = cnt_accum_new(fu.threads > 1 ? memory / 2 : memory, tmpdir, &err)) == NULL ||
	    (fu.threads > 1 && (fu.acc2 = cnt_accum_new(memory / 2, tmpdir, &err)) == NULL))
		cnt_die_err(&err);
	loaded = dd.count;
	if (split) /* the whole output first, then split (cnt(7), "TENANT SEPARATION") */
		out.fd = cnt_cli_scratch(tmpdir);
	else
		cnt_cli_avro_out(&out, out_path, codec_set, &codec);
	cnt_dedup_outs_open(&side, "cnt-count", codec_set, codec, level);
	if ((fu.filter = cnt_dedup_filter_new(defs, defs_path, &dd, NULL, side.dups, &err)) == NULL ||
	    (fu.win = cnt_window_new(defs, defs_path, shards, NULL, &err)) == NULL ||
	    (co.stats_path && (fu.hot = cnt_topkey_new(CNT_TOPKEY_SLOTS, &err)) == NULL))
		cnt_die_err(&err);
	cnt_window_set_map(fu.win, map);
	fu.rejects = &side.rejects;
	fu.input = cnt_progress_input;
	fu.progress = cnt_progress_add;
	if (snap_dir) {
		snaps = (snapshots){&dd, snap_dir, names};
		fu.input_done = snapshot;
		fu.ctx = &snaps;
	}
	cnt_progress_start(&co);
	if (cnt_fused_run(&fu, fds, names, (size_t)nin, &err) != 0 || cnt_dedup_filter_finish(fu.filter, &err) != 0 ||
	    cnt_window_finish(fu.win, &err) != 0 || cnt_rejects_flush(&side.rejects, &err) != 0)
		cnt_die_err(&err);
	/* --base: bucket records into the halves their members belong to */
	for (int i = 0; i < nbase; i++) {
		int fd = cnt_cli_open_in(bases[i]);

		if (cnt_accum_read_buckets(fu.acc, fu.threads > 1 ? fu.acc2 : NULL, fd, bases[i], cnt_progress_add, &err) != 0)
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
	cnt_dedup_outs_save(&side, &dd);
	cnt_accum_lend(fu.acc, dd.slots, (dd.mask + 1) * sizeof(*dd.slots));
	/* day roll-ups, as cnt-accumulate -d writes them (zones from defs) */
	zones = (cnt_rollup_zones){defs, NULL, defs_path};
	if (days && ((zones.tzc = cnt_tz_cache_new()) == NULL ? cnt_err_nomem(&err) :
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
	if (strict && st->stale)
		cnt_die("%" PRIu64 " stale records: compensations counted with their originals left their latest "
			"times unknown (cnt-retract --rebuild recounts them)", st->stale);
	if (split)
		cnt_cli_split_buckets(out.fd, "the scratch file", split, codec_set ? codec : CNT_CODEC_ZSTD, level);
	if (co.stats_path)
		write_stats(co.stats_path, defs, fu.filter, fu.win, fu.hot, st, loaded, side.kept, shards, map, memory);
	/* The buckets first, then the state, as cnt-dedup does. */
	if (split)
		cnt_cli_split_commit();
	else
		cnt_cli_commit(&out);
	cnt_dedup_outs_commit(&side);
	if (st->sum_overflows)
		cnt_cli_note("warning: %" PRIu64 " bucket sums do not fit 64 bits; they are kept exact as 128-bit (sum_high, sum) with sum_overflow set",
			st->sum_overflows);
	if (co.verbose)
		cnt_cli_note("in %" PRIu64 ", duplicate %" PRIu64 ", rejected %" PRIu64 ", late %" PRIu64
			"; %" PRIu64 " bucket records out, %" PRIu64 " spill runs; state %zu keys loaded, %zu saved",
			t->in, t->duplicates, t->rejected, cnt_window_get_totals(fu.win)->late, st->groups_out, st->runs,
			loaded, side.kept);
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
	cnt_dedup_outs_release(&side);
	free(fds);
	return cnt_cli_finish();
}
