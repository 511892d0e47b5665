/*
 * cnt-accumulate - turn windowed events into bucket aggregates, and merge
 * bucket files, in canonical order, within a memory limit.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/text.h"
#include "cli/cli.h"
#include "cli/stage_stats.h"
#include "model/fingerprint.h"
#include "count/accum.h"
#include "count/stage.h"
#include "model/defs.h"
#include "time/timefmt.h"

static const char usage[] =
	"usage: cnt-accumulate [-o file] [-d definitions] [-m size] [-T dir] [-c codec] [--level n]\n"
	"                      [--split-tenants dir] [--strict] [--stats file] [-v]\n"
	"                      [--progress | --no-progress]\n"
	"                      [file ...]\n";

static const char help[] =
	"Group windowed events (from cnt-window) by (tenant, counter, counter version,\n"
	"member, bucket, shard) into bucket aggregates: exact sum, count, min, max,\n"
	"latest event time, late count and sum, HyperLogLog++ sketch of items.\n"
	"Bucket files given as input are merged in: the output is one sorted record\n"
	"per key, the same bytes however the input was ordered or split.\n"
	"\n"
	"  -o, --output FILE       bucket file (default standard output)\n"
	"  -d, --definitions FILE  also write local-day roll-ups, in each tenant's\n"
	"                          timezone as FILE declares it (cnt-bucket(5))\n"
	"  -m, --memory SIZE       spill sorted runs to disk above SIZE (default: a\n"
	"                          quarter of physical memory; suffixes K, M, G)\n"
	"      --split-tenants DIR one bucket file per tenant, DIR/TENANT/buckets.avro\n"
	"                          (directories 0750, files 0640, less the umask)\n"
	"  -T, --tmpdir DIR        where runs are spilled (default $TMPDIR or /tmp)\n"
	"  -c, --codec NAME        output codec (default zstandard for a file, null\n"
	"                          for a pipe)\n"
	"      --level N           compression level\n"
	"      --strict            fail (status 2, no output) when a record is stale:\n"
	"                          compensations merged in left its latest times unknown\n"
	"      --stats FILE        counts as one JSON object (- for standard error)\n"
	"  -v, --verbose           one summary line on standard error\n"
	"      --progress          progress on standard error (default: on a terminal)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-accumulate(1) and cnt-bucket(5).\n";

static void write_stats(const char *path, const cnt_accum_stats *st, size_t memory)
{
	cnt_stats s;

	cnt_stats_begin(&s);
	cnt_stage_stats_accum(&s, st, memory);
	cnt_stats_write(&s, path);
}

/* -v: each stale record, by key, and which time is not known */
static void name_stale(void *ctx, const cnt_bucket *b, int which)
{
	char t[CNT_SHOWN_SIZE(128)], c[CNT_SHOWN_SIZE(128)], m[CNT_SHOWN_SIZE(128)], when[32];

	(void)ctx;
	cnt_time_format_rfc3339(b->bucket_start, when);
	cnt_cli_note("stale: '%s' '%s' v%d '%s' %s shard %d: %s not known", cnt_shown(b->tenant_id.p, b->tenant_id.n, 128, t),
		cnt_shown(b->counter_id.p, b->counter_id.n, 128, c), (int)b->counter_version,
		cnt_shown(b->member_ref.p, b->member_ref.n, 128, m), when, (int)b->shard,
		which == 3 ? "last_event_time and max_ingest_time" : which == 1 ? "last_event_time" : "max_ingest_time");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"definitions", required_argument, NULL, 'd'},
		{"memory", required_argument, NULL, 'm'},
		{"tmpdir", required_argument, NULL, 'T'},
		{"codec", required_argument, NULL, 'c'},
		{"level", required_argument, NULL, CNT_OPT_LEVEL},
		{"strict", no_argument, NULL, 'S'},
		{"split-tenants", required_argument, NULL, CNT_OPT_TOOL_BASE + 0x51},
		CNT_CLI_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	const char *defs_path = NULL, *out_path = NULL, *split = NULL, *tmpdir = getenv("TMPDIR");
	size_t memory = 0;
	int level = CNT_LEVEL_DEFAULT, codec_set = 0, strict = 0, c;
	cnt_codec_id codec = CNT_CODEC_NULL;
	cnt_out out;
	cnt_err err;
	cnt_accum *acc;
	cnt_writer *w;
	const cnt_accum_stats *st;
	cnt_rollup_zones zones = {NULL, NULL, NULL};
	cnt_defs *defs = NULL;

	cnt_cli_init("cnt-accumulate", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "o:d:m:T:c:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'o': out_path = optarg; break;
		case 'd': defs_path = optarg; break;
		case 'm': memory = cnt_cli_size("--memory", optarg, 1u << 20); break;
		case 'T': tmpdir = optarg; break;
		case 'c': codec = cnt_cli_codec("--codec", optarg); codec_set = 1; break;
		case CNT_OPT_LEVEL: level = cnt_cli_level("--level", optarg); break;
		case 'S': strict = 1; break;
		case CNT_OPT_TOOL_BASE + 0x51: split = optarg; break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (tmpdir == NULL || *tmpdir == 0)
		tmpdir = "/tmp";
	if (memory == 0)
		memory = cnt_accum_default_memory();
	acc = cnt_accum_new(memory, tmpdir, &err);
	/* no definitions: the output carries what the inputs recorded */
	if (acc == NULL || cnt_fp_policy(NULL, &err) != 0)
		cnt_die_err(&err);
	/* Opened before reading, so a bad output fails fast; written only
	 * once everything is read. */
	if (split && out_path)
		cnt_die_usage("-o and --split-tenants exclude each other");
	if (split && defs_path)
		cnt_die_usage("-d and --split-tenants exclude each other (split files carry no day roll-ups)");
	if (defs_path) { /* day roll-ups: the definitions give the zones only */
		zones.defs_name = defs_path;
		if ((zones.defs = defs = cnt_defs_load(defs_path, &err)) == NULL || (zones.tzc = cnt_tz_cache_new()) == NULL ||
		    cnt_accum_days(acc, cnt_rollup_defs_zone, &zones, &err) != 0)
			cnt_die_err(zones.defs && !zones.tzc ? (cnt_err_nomem(&err), &err) : &err);
	}
	if (split) /* the whole output first, then split (cnt(7), "TENANT SEPARATION") */
		out.fd = cnt_cli_scratch(tmpdir);
	else
		cnt_cli_avro_out(&out, out_path, codec_set, &codec);
	if (co.verbose)
		cnt_accum_on_stale(acc, name_stale, NULL);
	cnt_progress_start(&co);
	for (int i = optind; i < argc || i == optind; i++) {
		const char *name = i < argc ? argv[i] : "-";
		int fd = cnt_cli_open_in(name);

		cnt_progress_input(fd, name);
		if (cnt_accum_read(acc, fd, name, cnt_progress_add, &err) != 0)
			cnt_die_err(&err);
		cnt_cli_close_in(fd);
	}
	cnt_progress_end();
	w = split ? cnt_bucket_writer_new(out.fd, "the scratch file", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err)
		  : cnt_bucket_writer_new(out.fd, out_path ? out_path : "standard output", codec, level, &err);
	if (w == NULL || cnt_fp_track(w, CNT_FP_BUCKETS, &err) != 0 || cnt_accum_finish(acc, w, &err) != 0 || cnt_writer_finish(w, &err) != 0 ||
	    cnt_accum_check_balance(acc, &err) != 0)
		cnt_die_err(&err);
	st = cnt_accum_get_stats(acc);
	if (strict && st->stale)
		cnt_die("%" PRIu64 " stale records: compensations merged in left their latest times unknown (cnt-retract --rebuild recounts them)",
			st->stale);
	if (split)
		cnt_cli_split_buckets(out.fd, "the scratch file", split, codec_set ? codec : CNT_CODEC_ZSTD, level);
	if (co.stats_path)
		write_stats(co.stats_path, st, memory);
	if (split)
		cnt_cli_split_commit();
	else
		cnt_cli_commit(&out);
	if (st->sum_overflows)
		cnt_cli_note("warning: %" PRIu64 " bucket sums do not fit 64 bits; they are kept exact as 128-bit (sum_high, sum) with sum_overflow set",
			st->sum_overflows);
	if (co.verbose)
		cnt_cli_note("%" PRIu64 " events (%" PRIu64 " late) and %" PRIu64
			" bucket records in, %" PRIu64 " bucket records out, %" PRIu64 " spill runs",
			st->events, st->late_events, st->buckets_in, st->groups_out, st->runs);
	cnt_writer_free(w);
	cnt_accum_free(acc);
	if (zones.tzc)
		cnt_tz_cache_free(zones.tzc);
	cnt_defs_free(defs);
	cnt_fp_policy_end();
	return cnt_cli_finish();
}
