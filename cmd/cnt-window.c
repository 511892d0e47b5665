/*
 * cnt-window - attribute each event to the tenant-local hour bucket its
 * event time falls in, and mark the events that arrived too late
 * (lib/count/window.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/stage_outs.h"
#include "cli/stage_stats.h"
#include "model/fingerprint.h"
#include "count/shardmap.h"
#include "count/topkey.h"
#include "count/window.h"

static const char usage[] =
	"usage: cnt-window -d definitions [-o file] [-r file] [--shards n | --shard-map file]\n"
	"                  [-c codec] [--level n] [--stats file] [-v] [--progress | --no-progress]\n"
	"                  [file ...]\n";

static const char help[] =
	"Attribute each event to the bucket (one local hour of its tenant's timezone)\n"
	"its event_time falls in, and mark it late when its ingest_time is after the\n"
	"bucket's end plus the counter version's lateness horizon.  Writes\n"
	"cnt.WindowedEvent records for cnt-accumulate.\n"
	"\n"
	"  -d, --definitions FILE  tenants (timezones) and counters (horizons); required\n"
	"  -o, --output FILE       windowed events (default standard output)\n"
	"  -r, --rejects FILE      events naming an undeclared tenant or counter\n"
	"                          version, as JSON lines (default: standard error)\n"
	"      --shards N          split every key over N shards by event_id (default 1)\n"
	"      --shard-map FILE    split only the keys the map names, each over its\n"
	"                          shards (cnt-shardmap(5)); other keys are in shard 0\n"
	"  -c, --codec NAME        output codec (default zstandard for a file, null\n"
	"                          for a pipe)\n"
	"      --level N           compression level\n"
	"      --stats FILE        counts, late ratios and clock skew as one JSON object\n"
	"  -v, --verbose           one summary line on standard error\n"
	"      --progress          progress on standard error (default: on a terminal)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-window(1) and cnt-bucket(5).\n";

enum { OPT_SHARDS = CNT_OPT_TOOL_BASE, OPT_SHARD_MAP };

/* The window stage, and the hottest key of the events it writes. */
static cnt_topkey *hot;

static int stage(void *win, const cnt_event *e, const uint8_t *raw, size_t rawn, cnt_count_reject *rej,
	cnt_err *err)
{
	int rc = cnt_window_stage(win, e, raw, rawn, rej, err);

	if (rc == 0 && cnt_topkey_add(hot, e->tenant_id, e->counter_id, e->member_ref, err) != 0)
		return -1;
	return rc;
}

/* top_key_share, top_key and top_keys (count/topkey.h). */
int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"definitions", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"rejects", required_argument, NULL, 'r'},
		{"shards", required_argument, NULL, OPT_SHARDS},
		{"shard-map", required_argument, NULL, OPT_SHARD_MAP},
		{"codec", required_argument, NULL, 'c'},
		{"level", required_argument, NULL, CNT_OPT_LEVEL},
		CNT_CLI_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	const char *defs_path = NULL, *out_path = NULL, *rej_path = NULL, *map_path = NULL;
	int level = CNT_LEVEL_DEFAULT, codec_set = 0, c;
	uint32_t shards = 1;
	cnt_codec_id codec = CNT_CODEC_NULL;
	cnt_out out, rej_out;
	cnt_rejects rej;
	cnt_err err;
	cnt_defs *defs;
	cnt_window *win;
	cnt_shardmap *map = NULL;
	cnt_writer *w;
	char *schema;
	const cnt_window_totals *t;

	cnt_cli_init("cnt-window", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "d:o:r:c:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'd': defs_path = optarg; break;
		case 'o': out_path = optarg; break;
		case 'r': rej_path = optarg; break;
		case OPT_SHARDS: shards = (uint32_t)cnt_cli_uint("--shards", optarg, 1, CNT_WINDOW_MAX_SHARDS); break;
		case OPT_SHARD_MAP: map_path = optarg; break;
		case 'c': codec = cnt_cli_codec("--codec", optarg); codec_set = 1; break;
		case CNT_OPT_LEVEL: level = cnt_cli_level("--level", optarg); break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (defs_path == NULL)
		cnt_die_usage("-d definitions is required");
	if (map_path && shards != 1)
		cnt_die_usage("--shards and --shard-map exclude each other");
	if ((defs = cnt_defs_load(defs_path, &err)) == NULL || cnt_fp_policy(defs, &err) != 0 ||
	    (map_path && (map = cnt_shardmap_load(map_path, &err)) == NULL))
		cnt_die_err(&err);
	cnt_cli_avro_out(&out, out_path, codec_set, &codec);
	if ((schema = cnt_windowed_schema_json(&err)) == NULL ||
	    (w = cnt_writer_new(out.fd, out_path ? out_path : "standard output", schema, codec, level, 0, &err)) == NULL ||
	    cnt_fp_track(w, CNT_FP_WINDOWED, &err) != 0 ||
	    (win = cnt_window_new(defs, defs_path, shards, w, &err)) == NULL ||
	    (hot = cnt_topkey_new(CNT_TOPKEY_SLOTS, &err)) == NULL)
		cnt_die_err(&err);
	free(schema);
	cnt_window_set_map(win, map);
	cnt_cli_rejects(&rej, &rej_out, rej_path, "cnt-window");

	cnt_progress_start(&co);
	for (int i = optind; i < argc || i == optind; i++) {
		const char *name = i < argc ? argv[i] : "-";
		int fd = cnt_cli_open_in(name);

		cnt_progress_input(fd, name);
		if (cnt_count_input(fd, name, stage, win, &rej, cnt_progress_add, &err) != 0)
			cnt_die_err(&err);
		cnt_cli_close_in(fd);
	}
	if (cnt_window_finish(win, &err) != 0 || cnt_rejects_flush(&rej, &err) != 0)
		cnt_die_err(&err);
	t = cnt_window_get_totals(win);
	if (co.stats_path) {
		cnt_stats s;

		cnt_stats_begin(&s);
		cnt_stage_stats_window(&s, defs, win, hot, shards, map);
		cnt_stats_write(&s, co.stats_path);
	}
	cnt_cli_commit(&out);
	if (rej_path)
		cnt_cli_commit(&rej_out);
	if (co.verbose)
		cnt_cli_note("in %" PRIu64 ", out %" PRIu64 ", late %" PRIu64 " (%.2f%%), rejected %" PRIu64,
			t->in, t->out, t->late, t->out ? 100.0 * (double)t->late / (double)t->out : 0.0, t->rejected);
	cnt_writer_free(w);
	cnt_window_free(win);
	cnt_topkey_free(hot);
	cnt_shardmap_free(map);
	cnt_fp_policy_end();
	cnt_defs_free(defs);
	cnt_rejects_release(&rej);
	return cnt_cli_finish();
}
