/*
 * cnt-dedup - drop events whose deduplication key was already seen within
 * the counter's dedup horizon, across batches, with persistent state
 * (lib/count/dedup_filter.h, lib/count/dedup.h).
 */
#include <inttypes.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/stage_outs.h"
#include "cli/stage_stats.h"
#include "model/fingerprint.h"
#include "count/dedup_filter.h"

static const char usage[] =
	"usage: cnt-dedup -d definitions [-s state] [--snapshots dir] [-o file] [-D file]\n"
	"                 [-r file] [-c codec] [--level n] [--stats file] [-v]\n"
	"                 [--progress | --no-progress] [file ...]\n";

static const char help[] =
	"Drop events whose (tenant, counter, dedup key) was already seen within the\n"
	"counter version's dedup horizon; keep the first occurrence in log order.\n"
	"\n"
	"  -d, --definitions FILE  counters and their dedup horizons; required\n"
	"  -s, --state FILE        remembered keys: read if it exists, rewritten\n"
	"                          (atomically) with this run's keys; without it\n"
	"                          only duplicates within this run are found\n"
	"      --snapshots DIR     after each input segment, the state as it stands\n"
	"                          to DIR/<segment's file name>.state, so that a\n"
	"                          rebuild can start at the next segment\n"
	"  -o, --output FILE       first occurrences (default standard output)\n"
	"  -D, --duplicates FILE   the dropped duplicates, as events\n"
	"  -r, --rejects FILE      events naming an undeclared tenant or counter\n"
	"                          version, as JSON lines (default: standard error)\n"
	"  -c, --codec NAME        output codec (default zstandard for a file, null\n"
	"                          for a pipe)\n"
	"      --level N           compression level\n"
	"      --stats FILE        counts and hit rates as one JSON object\n"
	"  -v, --verbose           one summary line on standard error\n"
	"      --progress          progress on standard error (default: on a terminal)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-dedup(1).\n";

enum { OPT_SNAPSHOTS = CNT_OPT_TOOL_BASE };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"definitions", required_argument, NULL, 'd'},
		{"state", required_argument, NULL, 's'},
		{"snapshots", required_argument, NULL, OPT_SNAPSHOTS},
		{"output", required_argument, NULL, 'o'},
		{"duplicates", required_argument, NULL, 'D'},
		{"rejects", required_argument, NULL, 'r'},
		{"codec", required_argument, NULL, 'c'},
		{"level", required_argument, NULL, CNT_OPT_LEVEL},
		CNT_CLI_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	const char *snap_dir = NULL, *defs_path = NULL, *out_path = NULL;
	int level = CNT_LEVEL_DEFAULT, codec_set = 0, c;
	cnt_codec_id codec = CNT_CODEC_NULL;
	cnt_out out;
	cnt_dedup_outs side = {0};
	cnt_writer *w;
	cnt_err err;
	cnt_defs *defs;
	cnt_dedup dd;
	cnt_dedup_filter *f;
	size_t loaded;
	const cnt_dedup_totals *t;

	cnt_cli_init("cnt-dedup", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "d:s:o:D:r:c:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'd': defs_path = optarg; break;
		case 's': side.state_path = optarg; break;
		case OPT_SNAPSHOTS: snap_dir = optarg; break;
		case 'o': out_path = optarg; break;
		case 'D': side.dup_path = optarg; break;
		case 'r': side.rej_path = optarg; break;
		case 'c': codec = cnt_cli_codec("--codec", optarg); codec_set = 1; break;
		case CNT_OPT_LEVEL: level = cnt_cli_level("--level", optarg); break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (defs_path == NULL)
		cnt_die_usage("-d definitions is required");
	if (snap_dir)
		cnt_snapshots_check(snap_dir, argv + optind, argc - optind);
	if ((defs = cnt_defs_load(defs_path, &err)) == NULL || cnt_fp_policy(defs, &err) != 0)
		cnt_die_err(&err);
	if (cnt_dedup_load(&dd, side.state_path, cnt_dedup_expected_keys(argv + optind, argc - optind), 1, &err) != 0)
		cnt_die_err(&err);
	loaded = dd.count;
	cnt_cli_avro_out(&out, out_path, codec_set, &codec);
	if ((w = cnt_event_writer_new(out.fd, out_path ? out_path : "standard output", codec, level, &err)) == NULL ||
	    cnt_fp_track(w, CNT_FP_EVENTS, &err) != 0)
		cnt_die_err(&err);
	cnt_dedup_outs_open(&side, "cnt-dedup", codec_set, codec, level);
	if ((f = cnt_dedup_filter_new(defs, defs_path, &dd, w, side.dups, &err)) == NULL)
		cnt_die_err(&err);

	cnt_progress_start(&co);
	for (int i = optind; i < argc || i == optind; i++) {
		const char *name = i < argc ? argv[i] : "-";
		int fd = cnt_cli_open_in(name);

		cnt_progress_input(fd, name);
		if (cnt_count_input(fd, name, cnt_dedup_filter_stage, f, &side.rejects, cnt_progress_add, &err) != 0)
			cnt_die_err(&err);
		cnt_cli_close_in(fd);
		if (snap_dir) {
			if (cnt_dedup_filter_flush(f, &err) != 0)
				cnt_die_err(&err);
			cnt_snapshot_save(&dd, snap_dir, name);
		}
	}
	if (cnt_dedup_filter_finish(f, &err) != 0 || cnt_rejects_flush(&side.rejects, &err) != 0)
		cnt_die_err(&err);
	t = cnt_dedup_filter_totals(f);
	cnt_dedup_outs_save(&side, &dd);
	if (co.stats_path) {
		cnt_stats s;

		cnt_stats_begin(&s);
		cnt_stage_stats_dedup(&s, defs, f, loaded, side.kept);
		cnt_stats_write(&s, co.stats_path);
	}
	/* The events first, then the state: a failure in between leaves the
	 * old state, and rerunning the segment gives the same output. */
	cnt_cli_commit(&out);
	cnt_dedup_outs_commit(&side);
	if (co.verbose)
		cnt_cli_note("in %" PRIu64 ", out %" PRIu64 ", duplicate %" PRIu64 ", rejected %" PRIu64
			" (dedup hit rate %.2f%%); state %zu keys loaded, %zu saved", t->in, t->out, t->duplicates,
			t->rejected, 100.0 * cnt_count_ratio(t->duplicates, t->in - t->rejected), loaded, side.kept);
	cnt_writer_free(w);
	cnt_dedup_filter_free(f);
	cnt_dedup_release(&dd);
	cnt_fp_policy_end();
	cnt_defs_free(defs);
	cnt_dedup_outs_release(&side);
	return cnt_cli_finish();
}
