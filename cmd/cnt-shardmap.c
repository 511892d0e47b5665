/*
 * cnt-shardmap - derive a hot-key shard map from observed write rates, or
 * show one (lib/count/shardmap.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "count/shardmap.h"
#include "time/timefmt.h"

static const char usage[] =
	"usage: cnt-shardmap derive --now time [--map file] [-o file] [--target share]\n"
	"                    [--merge-ratio r] [--hold duration] [--max-shards n]\n"
	"                    [--stats file] [-v] [--progress | --no-progress] stats.json ...\n"
	"       cnt-shardmap show map.json\n";

static const char help[] =
	"derive: read cnt-window --stats files (their \"out\" and \"top_keys\"), update\n"
	"the map (or start one) and write it: a key whose share of events is above\n"
	"its shards times the target is split (shards raised to the power of two that\n"
	"carries it); one whose share fell below shards * target * merge-ratio, and\n"
	"whose last change is older than the hold time, is merged back.  Every change\n"
	"is recorded with --now.\n"
	"show: check a map and print tenant, counter, member, shards, share (TSV).\n"
	"\n"
	"      --now TIME          the time of this derivation (RFC 3339 or epoch ms);\n"
	"                          required by derive, after the map's last update\n"
	"      --map FILE          the map to update (default: a new, empty one)\n"
	"  -o, --output FILE       the new map (default standard output)\n"
	"      --target SHARE      the share of events one shard should carry at most\n"
	"                          (default 0.01)\n"
	"      --merge-ratio R     merge below shards * target * R (default 0.25)\n"
	"      --hold DURATION     no merge sooner than this after a change (default 1d)\n"
	"      --max-shards N      a power of two from 1 to 65536 (default 64)\n"
	"      --stats FILE        splits, merges and keys as one JSON object\n"
	"  -v, --verbose           one summary line on standard error\n"
	"      --progress          accepted, as by every tool (nothing to show here)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-shardmap(1) and cnt-shardmap(5).\n";

enum { OPT_NOW = CNT_OPT_TOOL_BASE, OPT_MAP, OPT_TARGET, OPT_MERGE, OPT_HOLD, OPT_MAX };

static void show(const char *path)
{
	cnt_err err;
	cnt_shardmap *m = cnt_shardmap_load(path, &err);

	if (m == NULL)
		cnt_die_err(&err);
	for (size_t i = 0; i < cnt_shardmap_nkeys(m); i++) {
		const cnt_shardmap_key *k = cnt_shardmap_key_at(m, i);

		cnt_cli_printf("%s\t%s\t%s\t%" PRIu32 "\t%.6f\n", k->tenant.p, k->counter.p, k->member.p,
			k->shards, k->share);
	}
	cnt_shardmap_free(m);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"now", required_argument, NULL, OPT_NOW},
		{"map", required_argument, NULL, OPT_MAP},
		{"output", required_argument, NULL, 'o'},
		{"target", required_argument, NULL, OPT_TARGET},
		{"merge-ratio", required_argument, NULL, OPT_MERGE},
		{"hold", required_argument, NULL, OPT_HOLD},
		{"max-shards", required_argument, NULL, OPT_MAX},
		CNT_CLI_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	cnt_shardmap_policy pol = CNT_SHARDMAP_POLICY_INIT;
	cnt_shardmap_summary sum;
	const char *map_path = NULL, *out_path = NULL, *cmd = NULL;
	int have_now = 0, c;
	int64_t now = 0;
	uint64_t max;
	cnt_buf b = CNT_BUF_INIT;
	cnt_shardmap *m;
	cnt_shardmap_obs *o;
	cnt_out out;
	cnt_err err;

	cnt_cli_init("cnt-shardmap", usage, help);
	if (argc > 1 && (strcmp(argv[1], "derive") == 0 || strcmp(argv[1], "show") == 0)) {
		cmd = argv[1];
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	while ((c = cnt_cli_getopt(argc, argv, "o:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case OPT_NOW: now = cnt_cli_time("--now", optarg); have_now = 1; break;
		case OPT_MAP: map_path = optarg; break;
		case 'o': out_path = optarg; break;
		case OPT_TARGET: pol.target = cnt_cli_double("--target", optarg, 1e-9, 1); break;
		case OPT_MERGE: pol.merge_ratio = cnt_cli_double("--merge-ratio", optarg, 1e-9, 0.5); break;
		case OPT_HOLD:
			if (cnt_time_parse_duration(optarg, &pol.hold_ms) != 0)
				cnt_die_usage("--hold: '%s' is not a duration (e.g. 6h, 1d)", optarg);
			break;
		case OPT_MAX:
			max = cnt_cli_uint("--max-shards", optarg, 1, CNT_SHARDMAP_MAX_SHARDS);
			if (max & (max - 1))
				cnt_die_usage("--max-shards: %" PRIu64 " is not a power of two", max);
			pol.max_shards = (uint32_t)max;
			break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (cmd == NULL)
		cnt_die_usage("a command is required first: derive or show");
	if (strcmp(cmd, "show") == 0) {
		if (argc - optind != 1)
			cnt_die_usage("show takes one map file");
		show(argv[optind]);
		return cnt_cli_finish();
	}
	if (!have_now)
		cnt_die_usage("derive needs --now time");
	if (optind == argc)
		cnt_die_usage("derive needs at least one --stats file of cnt-window");
	if ((m = map_path ? cnt_shardmap_load(map_path, &err) : cnt_shardmap_new(&err)) == NULL ||
	    (o = cnt_shardmap_obs_new(&err)) == NULL)
		cnt_die_err(&err);
	for (int i = optind; i < argc; i++)
		if (cnt_shardmap_obs_load(o, argv[i], &err) != 0)
			cnt_die_err(&err);
	if (cnt_shardmap_derive(m, o, &pol, now, &sum, &err) != 0 || cnt_shardmap_format(m, &b, &err) != 0)
		cnt_die_err(&err);
	cnt_cli_out(&out, out_path);
	if (cnt_write_all(out.fd, b.p, b.len) != 0)
		cnt_err_write(&err, errno, "cannot write '%s'", out_path ? out_path : "standard output"),
		cnt_die_err(&err);
	if (co.stats_path) {
		cnt_stats s;

		cnt_stats_begin(&s);
		cnt_stats_u64(&s, "in", (uint64_t)(argc - optind));
		cnt_stats_u64(&s, "events", cnt_shardmap_obs_events(o));
		cnt_stats_u64(&s, "keys", sum.keys);
		cnt_stats_u64(&s, "hot", sum.hot);
		cnt_stats_u64(&s, "splits", sum.splits);
		cnt_stats_u64(&s, "merges", sum.merges);
		cnt_stats_u64(&s, "max_shards", cnt_shardmap_max(m));
		cnt_stats_write(&s, co.stats_path);
	}
	cnt_cli_commit(&out);
	if (co.verbose)
		cnt_cli_note("%zu keys, %zu with more than 1 shard; %zu split, %zu merged", sum.keys, sum.hot,
			sum.splits, sum.merges);
	cnt_buf_release(&b);
	cnt_shardmap_obs_free(o);
	cnt_shardmap_free(m);
	return cnt_cli_finish();
}
