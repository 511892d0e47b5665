/*
 * cnt-partition - split an event archive into N parts that can be counted
 * apart, on other machines, and merged (lib/count/partition.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "model/fingerprint.h"
#include "count/partition.h"
#include "count/shardmap.h"

static const char usage[] =
	"usage: cnt-partition -d definitions --parts n -o prefix [--shard-map file]\n"
	"                     [-c codec] [--level n] [--stats file] [-v] [--progress | --no-progress] [file ...]\n";

static const char help[] =
	"Split events into n parts, prefix.0.avro .. prefix.<n-1>.avro, so that every\n"
	"duplicate of an event (as cnt-dedup judges it) is in the same part: by\n"
	"(tenant, counter, member) when the counter's dedup key holds the member,\n"
	"else by (tenant, counter, idempotency key).  Each part can run the counting\n"
	"chain on its own machine; cnt-accumulate merges the parts' bucket files\n"
	"into the bytes of the one-machine run.\n"
	"\n"
	"  -d, --definitions FILE  counters and their dedup keys; required\n"
	"      --parts N           how many parts (1 to 4096); required\n"
	"  -o, --output PREFIX     the parts are PREFIX.0.avro .. PREFIX.<N-1>.avro,\n"
	"                          every one written, even if empty; required\n"
	"      --shard-map FILE    spread each hot member the map names over its\n"
	"                          shards' parts, by item (cnt-shardmap(5))\n"
	"  -c, --codec NAME        output codec (default zstandard)\n"
	"      --level N           compression level\n"
	"      --stats FILE        counts per part as one JSON object\n"
	"  -v, --verbose           one summary line on standard error\n"
	"      --progress          progress on standard error (default: on a terminal)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-partition(1).\n";

enum { OPT_PARTS = CNT_OPT_TOOL_BASE, OPT_SHARD_MAP };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"definitions", required_argument, NULL, 'd'},
		{"parts", required_argument, NULL, OPT_PARTS},
		{"output", required_argument, NULL, 'o'},
		{"shard-map", required_argument, NULL, OPT_SHARD_MAP},
		{"codec", required_argument, NULL, 'c'},
		{"level", required_argument, NULL, CNT_OPT_LEVEL},
		CNT_CLI_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	const char *defs_path = NULL, *prefix = NULL, *map_path = NULL;
	uint32_t n = 0;
	int level = CNT_LEVEL_DEFAULT, c;
	cnt_codec_id codec = CNT_CODEC_ZSTD;
	cnt_out *outs;
	cnt_writer **ws;
	cnt_rejects rej;
	cnt_err err;
	cnt_defs *defs;
	cnt_partition *p;
	cnt_shardmap *map = NULL;
	const cnt_partition_totals *t;

	cnt_cli_init("cnt-partition", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "d:o:c:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'd': defs_path = optarg; break;
		case OPT_PARTS: n = (uint32_t)cnt_cli_uint("--parts", optarg, 1, CNT_PARTITION_MAX); break;
		case 'o': prefix = optarg; break;
		case OPT_SHARD_MAP: map_path = optarg; break;
		case 'c': codec = cnt_cli_codec("--codec", optarg); break;
		case CNT_OPT_LEVEL: level = cnt_cli_level("--level", optarg); break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (defs_path == NULL)
		cnt_die_usage("-d definitions is required");
	if (n == 0)
		cnt_die_usage("--parts N is required");
	if (prefix == NULL || *prefix == '\0' || (prefix[0] == '-' && prefix[1] == '\0'))
		cnt_die_usage("-o prefix is required (the parts are files, not standard output)");
	if ((defs = cnt_defs_load(defs_path, &err)) == NULL || cnt_fp_policy(defs, &err) != 0 ||
	    (map_path && (map = cnt_shardmap_load(map_path, &err)) == NULL))
		cnt_die_err(&err);
	if ((outs = calloc(n, sizeof(*outs))) == NULL || (ws = calloc(n, sizeof(*ws))) == NULL)
		cnt_die_nomem();
	for (uint32_t i = 0; i < n; i++) {
		char name[4096];

		if ((size_t)snprintf(name, sizeof(name), "%s.%" PRIu32 ".avro", prefix, i) >= sizeof(name))
			cnt_die_usage("-o: the prefix '%s' is too long", prefix);
		cnt_cli_out(&outs[i], name);
		if ((ws[i] = cnt_event_writer_new(outs[i].fd, outs[i].path, codec, level, &err)) == NULL ||
		    cnt_fp_track(ws[i], CNT_FP_EVENTS, &err) != 0)
			cnt_die_err(&err);
	}
	if ((p = cnt_partition_new(defs, n, ws, &err)) == NULL)
		cnt_die_err(&err);
	cnt_partition_set_map(p, map);
	cnt_rejects_init(&rej, 2, "standard error", "cnt-partition");   /* never used: no event is rejected */

	cnt_progress_start(&co);
	for (int i = optind; i < argc || i == optind; i++) {
		const char *name = i < argc ? argv[i] : "-";
		int fd = cnt_cli_open_in(name);

		cnt_progress_input(fd, name);
		if (cnt_count_input(fd, name, cnt_partition_stage, p, &rej, cnt_progress_add, &err) != 0)
			cnt_die_err(&err);
		cnt_cli_close_in(fd);
	}
	if (cnt_partition_finish(p, &err) != 0)
		cnt_die_err(&err);
	t = cnt_partition_get_totals(p);
	if (co.stats_path) {
		cnt_stats s;

		cnt_stats_begin(&s);
		cnt_stats_u64(&s, "in", t->in);
		cnt_stats_u64(&s, "out", t->out);
		cnt_stats_u64(&s, "rejected", 0);
		cnt_stats_bool(&s, "balanced", 1);
		cnt_stats_u64(&s, "by_member", t->by_member);
		cnt_stats_u64(&s, "by_key", t->by_key);
		cnt_stats_u64(&s, "undeclared", t->undeclared);
		cnt_stats_u64(&s, "by_shard", t->by_shard);
		cnt_stats_array(&s, "parts");
		for (uint32_t i = 0; i < n; i++)
			cnt_stats_u64(&s, NULL, cnt_partition_part_count(p, i));
		cnt_stats_close(&s);
		cnt_stats_write(&s, co.stats_path);
	}
	for (uint32_t i = 0; i < n; i++)
		cnt_cli_commit(&outs[i]);
	if (co.verbose)
		cnt_cli_note("in %" PRIu64 ", out %" PRIu64 " in %" PRIu32 " parts (%" PRIu64 " by member, %" PRIu64
			" by idempotency key)", t->in, t->out, n, t->by_member, t->by_key);
	for (uint32_t i = 0; i < n; i++)
		cnt_writer_free(ws[i]);
	free(ws);
	free(outs);
	cnt_partition_free(p);
	cnt_shardmap_free(map);
	cnt_fp_policy_end();
	cnt_defs_free(defs);
	cnt_rejects_release(&rej);
	return cnt_cli_finish();
}
