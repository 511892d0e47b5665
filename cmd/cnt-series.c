/*
 * cnt-series - creator analytics: views and unique viewers of videos per
 * local hour or day over a range, optionally broken down by one
 * dimension, from bucket files (lib/view/series.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "view/series.h"

static const char usage[] =
	"usage: cnt-series -d definitions --counter tenant/counter --from time --to time\n"
	"                  [--granularity hour|day] [--hours] [--by dimension] [--member id]...\n"
	"                  [--members file] [--creator id] [-F table|json] [--tenant id]\n"
	"                  [--stats file] [-v] [--progress | --no-progress] buckets...\n";

static const char help[] =
	"Views (events counted, on time and late) and unique viewers (the union of\n"
	"the sketches) of the chosen videos, per local hour or day of the tenant's\n"
	"timezone over [from, to), in total or per value of one dimension, with the\n"
	"as-of of the data (the latest ingest time in the bucket files).\n"
	"\n"
	"  -d, --definitions FILE  the definitions (the counter, its zone, dimensions)\n"
	"      --counter ID        tenant/counter (split at the first '/')\n"
	"      --from TIME         start: RFC 3339 with an offset, epoch ms, or a local\n"
	"                          date or date-time of the tenant (2026-03-01T10:00)\n"
	"      --to TIME           end (excluded), likewise\n"
	"      --granularity G     hour or day (default day)\n"
	"      --hours             sum hourly records even for a range of whole local\n"
	"                          days (default: the files' day roll-ups; same rows)\n"
	"      --by DIM            break down by this dimension of the counter\n"
	"      --member ID         a video (may be repeated)\n"
	"      --members FILE      videos, one id a line\n"
	"      --creator ID        the videos whose events carry attrs creator=ID (the\n"
	"                          counter must declare the dimension \"creator\")\n"
	"                          without --member, --members or --creator: every video\n"
	"  -F, --output-format FMT table (default) or json (JSON lines)\n"
	"      --tenant ID         who is asking: refuse (status 5) the counter or a\n"
	"                          bucket file of another tenant (default $CNT_TENANT)\n"
	"      --stats FILE        counts as one JSON object ('-': standard error)\n"
	"  -v, --verbose           one line about what was read, on standard error\n"
	"      --progress          progress on standard error (default: on a terminal)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the program's version\n"
	"\n"
	"See cnt-series(1) and cnt-bucket(5).\n";

enum { OPT_COUNTER = CNT_OPT_TOOL_BASE, OPT_FROM, OPT_TO, OPT_GRAN, OPT_BY, OPT_MEMBER, OPT_MEMBERS, OPT_CREATOR, OPT_HOURS };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"definitions", required_argument, NULL, 'd'},
		{"counter", required_argument, NULL, OPT_COUNTER},
		{"from", required_argument, NULL, OPT_FROM},
		{"to", required_argument, NULL, OPT_TO},
		{"granularity", required_argument, NULL, OPT_GRAN},
		{"hours", no_argument, NULL, OPT_HOURS},
		{"by", required_argument, NULL, OPT_BY},
		{"member", required_argument, NULL, OPT_MEMBER},
		{"members", required_argument, NULL, OPT_MEMBERS},
		{"creator", required_argument, NULL, OPT_CREATOR},
		{"output-format", required_argument, NULL, 'F'},
		{"tenant", required_argument, NULL, CNT_OPT_TENANT},
		CNT_CLI_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	cnt_series_query q = {0};
	const char *defs_path = NULL, *counter = NULL, *who = NULL;
	const cnt_series_result *res;
	const char **members = NULL;
	int table = 1, c, *fds;
	size_t nfiles;
	cnt_series *s;
	cnt_defs *defs;
	cnt_buf out = CNT_BUF_INIT;
	cnt_err err;
	char *tc;

	q.day = 1;
	cnt_cli_init("cnt-series", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "d:F:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'd': defs_path = optarg; break;
		case OPT_COUNTER: counter = optarg; break;
		case OPT_FROM: q.from = optarg; break;
		case OPT_TO: q.to = optarg; break;
		case OPT_GRAN:
			if (strcmp(optarg, "hour") != 0 && strcmp(optarg, "day") != 0)
				cnt_die_usage("--granularity: '%s' is not hour or day", optarg);
			q.day = strcmp(optarg, "day") == 0;
			break;
		case OPT_HOURS: q.hours = 1; break;
		case OPT_BY: q.by = optarg; break;
		case OPT_MEMBER:
			if ((members = realloc(members, (q.nmembers + 1) * sizeof(*members))) == NULL)
				cnt_die_nomem();
			members[q.nmembers++] = optarg;
			break;
		case OPT_MEMBERS: q.members_file = optarg; break;
		case OPT_CREATOR: q.creator = optarg; break;
		case CNT_OPT_TENANT: who = optarg; break;
		case 'F':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0)
				cnt_die_usage("--output-format: '%s' is not table or json", optarg);
			table = strcmp(optarg, "table") == 0;
			break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (defs_path == NULL || counter == NULL || q.from == NULL || q.to == NULL)
		cnt_die_usage("-d definitions, --counter, --from and --to are required");
	if (optind == argc)
		cnt_die_usage("no bucket file given");
	if ((tc = strdup(counter)) == NULL)
		cnt_die_nomem();
	if (strchr(tc, '/') == NULL || tc[0] == '/')
		cnt_die_usage("--counter: '%s' is not tenant/counter", counter);
	*strchr(tc, '/') = 0;
	q.tenant = tc;
	q.counter = tc + strlen(tc) + 1;
	q.members = members;
	cnt_cli_tenant_guard_id(who = cnt_cli_tenant(who), q.tenant, counter, "--counter");
	if ((defs = cnt_defs_load(defs_path, &err)) == NULL)
		cnt_die_err(&err);
	q.defs = defs;
	if ((s = cnt_series_new(&q, &err)) == NULL)
		cnt_die_err(&err);
	nfiles = (size_t)(argc - optind);
	if ((fds = malloc(nfiles * sizeof(*fds))) == NULL)
		cnt_die_nomem();
	cnt_progress_start(&co);
	for (size_t i = 0; i < nfiles; i++)
		cnt_cli_tenant_guard(who, fds[i] = cnt_cli_open_in(argv[optind + (int)i]), argv[optind + (int)i]);
	if (cnt_series_run(s, fds, (const char *const *)argv + optind, nfiles, &res, &err) != 0)
		cnt_die_err(&err);
	cnt_progress_end();
	cnt_oom(table ? cnt_series_format_table(s, &out) : cnt_series_format_json(s, &out));
	cnt_cli_write(out.p, out.len);
	if (co.verbose)
		cnt_cli_note("%zu files, %llu %s records read, %llu used, %zu rows", nfiles,
			(unsigned long long)res->records_read, res->used_days ? "day" : "hourly",
			(unsigned long long)res->records_used, res->nrows);
	if (co.stats_path) {
		cnt_stats st;

		cnt_stats_begin(&st);
		cnt_stats_u64(&st, "in", res->records_read);
		cnt_stats_u64(&st, "out", res->nrows);
		cnt_stats_u64(&st, "records_used", res->records_used);
		cnt_stats_bool(&st, "day_rollups", res->used_days);
		if (q.creator)
			cnt_stats_u64(&st, "creator_members", res->creator_members);
		cnt_stats_str(&st, "tenant_id", q.tenant, -1);
		cnt_stats_str(&st, "counter_id", q.counter, -1);
		if (res->has_as_of)
			cnt_stats_i64(&st, "as_of_ms", res->as_of);
		cnt_stats_write(&st, co.stats_path);
	}
	for (size_t i = 0; i < nfiles; i++)
		cnt_cli_close_in(fds[i]);
	free(fds);
	free(members);
	free(tc);
	cnt_series_free(s);
	cnt_defs_free(defs);
	cnt_buf_release(&out);
	return cnt_cli_finish();
}
