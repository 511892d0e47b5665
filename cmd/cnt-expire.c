/*
 * cnt-expire - rewrite a bucket file without the records no declared
 * window can reach any more (lib/view/expire.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "avro/json.h"
#include "cli/cli.h"
#include "model/fingerprint.h"
#include "time/timefmt.h"
#include "view/expire.h"

static const char usage[] =
	"usage: cnt-expire -d definitions [--now time] [-o output | --dry-run]\n"
	"                  [-c codec] [--level n] [-T dir] [--stats file] [-v]\n"
	"                  [--progress | --no-progress] buckets\n";

static const char help[] =
	"Rewrite a bucket file without the records that no window its definitions\n"
	"declare can reach at --now or later, and print one JSON line per counter\n"
	"version with records expired, then one with the bytes freed.\n"
	"\n"
	"  -d, --definitions FILE  the definitions (cnt-definitions(5))\n"
	"      --now TIME          the instant (RFC 3339 or epoch ms; default: now)\n"
	"  -o, --output FILE       write there (default: replace the bucket file)\n"
	"      --dry-run           write nothing; say what would be expired and freed\n"
	"  -c, --codec NAME        null, deflate, snappy, zstandard (default), ...\n"
	"      --level N           the codec's level\n"
	"  -T, --tmpdir DIR        scratch space of --dry-run (default $TMPDIR, /tmp)\n"
	"      --stats FILE        counts as one JSON object (- for standard error)\n"
	"  -v, --verbose           one summary line on standard error\n"
	"      --progress          progress on standard error (default: on a terminal)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-expire(1).\n";

enum { OPT_NOW = CNT_OPT_TOOL_BASE, OPT_DRY_RUN };

static int report(void *ctx, cnt_slice t, cnt_slice c, int32_t v, uint64_t n, int64_t first, int64_t last, cnt_err *err)
{
	cnt_buf *b = ctx;
	char f[32], l[32];

	(void)err;
	b->len = 0;
	cnt_time_format_rfc3339(first, f);
	cnt_time_format_rfc3339(last, l);
	cnt_oom(cnt_buf_append(b, "{\"tenant_id\":", 13) | cnt_json_string(b, (const uint8_t *)t.p, t.n, 0) |
		cnt_buf_append(b, ",\"counter_id\":", 14) | cnt_json_string(b, (const uint8_t *)c.p, c.n, 0) |
		cnt_buf_printf(b, ",\"counter_version\":%d,\"expired\":%" PRIu64 ",\"from\":\"%s\",\"to\":\"%s\"}\n",
			(int)v, n, f, l));
	cnt_cli_write(b->p, b->len);
	return 0;
}

static uint64_t file_bytes(int fd)
{
	struct stat sb;

	return fstat(fd, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"definitions", required_argument, NULL, 'd'},
		{"now", required_argument, NULL, OPT_NOW},
		{"output", required_argument, NULL, 'o'},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		{"codec", required_argument, NULL, 'c'},
		{"level", required_argument, NULL, CNT_OPT_LEVEL},
		{"tmpdir", required_argument, NULL, 'T'},
		CNT_CLI_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	const char *defs_path = NULL, *out_path = NULL, *tmpdir = getenv("TMPDIR");
	int64_t now = (int64_t)time(NULL) * 1000;
	int level = CNT_LEVEL_DEFAULT, codec_set = 0, dry = 0, c, fd;
	cnt_codec_id codec = CNT_CODEC_NULL;
	cnt_buf line = CNT_BUF_INIT;
	cnt_expire_stats st;
	uint64_t before, after;
	cnt_defs *defs;
	cnt_writer *w;
	cnt_out out;
	cnt_err err;

	cnt_cli_init("cnt-expire", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "d:o:c:T:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'd': defs_path = optarg; break;
		case OPT_NOW: now = cnt_cli_time("--now", optarg); break;
		case 'o': out_path = optarg; break;
		case OPT_DRY_RUN: dry = 1; break;
		case 'c': codec = cnt_cli_codec("--codec", optarg); codec_set = 1; break;
		case CNT_OPT_LEVEL: level = cnt_cli_level("--level", optarg); break;
		case 'T': tmpdir = optarg; break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (defs_path == NULL)
		cnt_die_usage("-d definitions is needed: they say which windows reach a bucket");
	if (argc - optind < 1)
		cnt_die_usage("a bucket file is needed");
	cnt_cli_max_operands(argc, argv, optind, 1, "one bucket file");
	if (strcmp(argv[optind], "-") == 0)
		cnt_die_usage("the bucket file cannot be standard input: it is replaced, or -o names the output");
	if (dry && out_path)
		cnt_die_usage("--dry-run and -o exclude each other");
	if (tmpdir == NULL || *tmpdir == 0)
		tmpdir = "/tmp";
	if ((defs = cnt_defs_load(defs_path, &err)) == NULL || cnt_fp_policy(defs, &err) != 0)
		cnt_die_err(&err);
	fd = cnt_cli_open_in(argv[optind]);
	before = file_bytes(fd);
	if (dry)
		out.fd = cnt_cli_scratch(tmpdir);
	else
		cnt_cli_avro_out(&out, out_path ? out_path : argv[optind], codec_set, &codec);
	w = cnt_bucket_writer_new(out.fd, dry ? "the scratch file" : out_path ? out_path : argv[optind],
		dry ? (codec_set ? codec : CNT_CODEC_ZSTD) : codec, level, &err);
	cnt_progress_start(&co);
	cnt_progress_input(fd, argv[optind]);
	if (w == NULL || cnt_fp_track(w, CNT_FP_BUCKETS, &err) != 0 ||
	    cnt_expire_run(defs, now, fd, argv[optind], w, report, &line, &st, &err) != 0 || cnt_writer_finish(w, &err) != 0)
		cnt_die_err(&err);
	cnt_progress_end();
	after = file_bytes(out.fd);
	cnt_cli_close_in(fd);
	line.len = 0;
	cnt_oom(cnt_buf_append(&line, "{\"file\":", 8) | cnt_json_string(&line, (const uint8_t *)argv[optind], strlen(argv[optind]), 0) |
		cnt_buf_printf(&line, ",\"records\":%" PRIu64 ",\"expired\":%" PRIu64 ",\"bytes\":%" PRIu64
			",\"bytes_after\":%" PRIu64 ",\"bytes_freed\":%" PRId64 ",\"dry_run\":%s}\n", st.in, st.expired,
			before, after, (int64_t)(before - after), dry ? "true" : "false"));
	cnt_cli_write(line.p, line.len);
	if (co.stats_path) {
		cnt_stats s;

		cnt_stats_begin(&s);
		cnt_stats_u64(&s, "in", st.in);
		cnt_stats_u64(&s, "out", st.kept);
		cnt_stats_u64(&s, "expired", st.expired);
		cnt_stats_u64(&s, "day_records_kept", st.days_kept);
		cnt_stats_u64(&s, "day_records_expired", st.days_expired);
		cnt_stats_u64(&s, "unknown", st.unknown);
		cnt_stats_bool(&s, "balanced", st.in == st.kept + st.expired);
		cnt_stats_u64(&s, "bytes_freed", before > after ? before - after : 0);
		cnt_stats_write(&s, co.stats_path);
	}
	if (co.verbose)
		cnt_cli_note("%" PRIu64 " records, %" PRIu64 " expired, %" PRIu64 " bytes freed%s", st.in, st.expired,
			before > after ? before - after : 0, dry ? " (dry run: nothing written)" : "");
	if (!dry)
		cnt_cli_commit(&out);
	cnt_writer_free(w);
	cnt_buf_release(&line);
	cnt_defs_free(defs);
	cnt_fp_policy_end();
	return cnt_cli_finish();
}
