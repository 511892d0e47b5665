/*
 * cnt-count - cnt-dedup | cnt-window | cnt-accumulate in one process,
 * the same bytes (lib/count/fused.h); its run after the options is
 * cnt_count_main (lib/cli/count_cli.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/count_cli.h"
#include "count/accum.h"
#include "count/window.h"

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
	const char *tmpdir = getenv("TMPDIR");
	int c;
	const char *bases[MAX_BASE];
	cnt_count_opts o = {.level = CNT_LEVEL_DEFAULT, .codec = CNT_CODEC_NULL, .threads = 2, .days = 1, .shards = 1,
		.bases = bases, .co = &co};

	cnt_cli_init("cnt-count", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "d:s:o:D:r:m:T:c:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'd': o.defs_path = optarg; break;
		case 's': o.side.state_path = optarg; break;
		case 'o': o.out_path = optarg; break;
		case 'D': o.side.dup_path = optarg; break;
		case 'r': o.side.rej_path = optarg; break;
		case OPT_SHARDS: o.shards = (uint32_t)cnt_cli_uint("--shards", optarg, 1, CNT_WINDOW_MAX_SHARDS); break;
		case OPT_SHARD_MAP: o.map_path = optarg; break;
		case 'm': o.memory = cnt_cli_size("--memory", optarg, 1u << 20); break;
		case 'T': tmpdir = optarg; break;
		case 'c': o.codec = cnt_cli_codec("--codec", optarg); o.codec_set = 1; break;
		case CNT_OPT_LEVEL: o.level = cnt_cli_level("--level", optarg); break;
		case OPT_THREADS: o.threads = (int)cnt_cli_uint("--threads", optarg, 1, 2); break;
		case OPT_NO_DAYS: o.days = 0; break;
		case OPT_STRICT: o.strict = 1; break;
		case OPT_SNAPSHOTS: o.snap_dir = optarg; break;
		case OPT_SPLIT: o.split = optarg; break;
		case OPT_BASE:
			if (strcmp(optarg, "-") == 0)
				cnt_die_usage("--base needs a bucket file, not standard input");
			if (o.nbase == MAX_BASE)
				cnt_die_usage("at most %d --base files", MAX_BASE);
			bases[o.nbase++] = optarg;
			break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (o.defs_path == NULL)
		cnt_die_usage("-d definitions is required");
	if (o.map_path && o.shards != 1)
		cnt_die_usage("--shards and --shard-map exclude each other");
	if (o.split && o.out_path)
		cnt_die_usage("-o and --split-tenants exclude each other");
	if (o.split && o.days)
		cnt_die_usage("--split-tenants needs --no-days: the per-tenant files carry no day roll-ups");
	if (o.snap_dir)
		cnt_snapshots_check(o.snap_dir, argv + optind, argc - optind);
	o.tmpdir = tmpdir == NULL || *tmpdir == 0 ? "/tmp" : tmpdir;
	if (o.memory == 0)
		o.memory = cnt_accum_default_memory();
	o.files = argv + optind;
	o.nfiles = argc - optind;
	return cnt_count_main(&o);
}
