/*
 * cnt-cost - what a tenant's traffic costs, per counter, at the declared
 * price and at every type's published price (lib/count/cost.h).
 */
#include <stdio.h>
#include <string.h>

#include "avro/json.h"
#include "cli/cli.h"
#include "count/cost.h"
#include "model/fingerprint.h"

static const char usage[] =
	"usage: cnt-cost -d definitions [-F table|json] [--tenant id] [--stats file] [-v]\n"
	"                [--progress | --no-progress] [file ...]\n";

static const char help[] =
	"The events of an archive (cnt.CountingEvent files, or standard input) per\n"
	"tenant, counter and version: events archived, events they represent, and\n"
	"their cost at the version's unit_cost_per_m and at each type's published price.\n"
	"\n"
	"  -d, --definitions FILE  tenants, counters and unit_costs; required\n"
	"  -F, --output-format FMT table (default) or json (JSON lines)\n"
	"      --tenant ID         who is asking: only that tenant's data, else status 5\n"
	"      --stats FILE        counts as one JSON object ('-': standard error)\n"
	"  -v, --verbose           one summary line on standard error\n"
	"      --progress          progress on standard error (default: on a terminal)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-cost(1) and cnt-definitions(5).\n";

static int json;
static const cnt_defs *defs;

static void reject(void *ctx, const char *name, uint64_t rec, const char *reason, const char *msg)
{
	(void)ctx;
	cnt_cli_note("'%s' record %llu: not counted (%s): %s", name, (unsigned long long)rec, reason, msg);
}

static void row(void *ctx, const cnt_cost_row *r)
{
	cnt_buf b = {0};
	int nt = cnt_defs_ntypes(), first = 1;

	(void)ctx;
	if (!json) {
		cnt_cli_printf("%-16s %-16s %3d %-7s %10llu %12llu %10.4f %14.6f", r->counter->tenant_id,
			r->counter->counter_id, r->version->version, cnt_defs_ctype_name(r->version->type),
			(unsigned long long)r->archived, (unsigned long long)r->represented,
			r->version->unit_cost_per_m, r->cost);
		for (int t = 0; t < nt; t++)
			if (r->priced[t])
				cnt_cli_printf(" %14.6f", r->at[t]);
		cnt_cli_printf("\n");
		return;
	}
	cnt_oom(cnt_buf_append(&b, "{\"tenant_id\":", 13));
	cnt_oom(cnt_json_string(&b, (const uint8_t *)r->counter->tenant_id, strlen(r->counter->tenant_id), 0));
	cnt_oom(cnt_buf_append(&b, ",\"counter_id\":", 14));
	cnt_oom(cnt_json_string(&b, (const uint8_t *)r->counter->counter_id, strlen(r->counter->counter_id), 0));
	cnt_oom(cnt_buf_printf(&b, ",\"version\":%d,\"type\":\"%s\",\"archived\":%llu,\"represented\":%llu,"
		"\"compensations\":%llu,\"unit_cost_per_m\":%.10g,\"cost\":%.6f,\"at\":{", r->version->version,
		cnt_defs_ctype_name(r->version->type), (unsigned long long)r->archived,
		(unsigned long long)r->represented, (unsigned long long)r->compensations,
		r->version->unit_cost_per_m, r->cost));
	for (int t = 0; t < nt; t++)
		if (r->priced[t]) {
			cnt_oom(cnt_buf_printf(&b, "%s\"%s\":%.6f", first ? "" : ",",
				cnt_defs_ctype_name((cnt_counter_type)t), r->at[t]));
			first = 0;
		}
	cnt_oom(cnt_buf_append(&b, "}}\n", 3));
	cnt_cli_printf("%.*s", (int)b.len, (const char *)b.p);
	cnt_buf_release(&b);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"definitions", required_argument, NULL, 'd'}, {"output-format", required_argument, NULL, 'F'},
		{"tenant", required_argument, NULL, CNT_OPT_TENANT}, CNT_CLI_LONGOPTS, {NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	const char *defs_path = NULL, *who = NULL;
	uint64_t rejected = 0;
	cnt_cost_row sum;
	cnt_cost *cost;
	cnt_defs *d;
	cnt_err err;
	size_t rows;
	int c;

	cnt_cli_init("cnt-cost", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "d:F:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'd': defs_path = optarg; break;
		case 'F':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0)
				cnt_die_usage("--output-format: '%s' is not table or json", optarg);
			json = optarg[0] == 'j';
			break;
		case CNT_OPT_TENANT: who = optarg; break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (defs_path == NULL)
		cnt_die_usage("-d definitions is required");
	who = cnt_cli_tenant(who);
	if ((defs = d = cnt_defs_load(defs_path, &err)) == NULL || cnt_fp_policy(d, &err) != 0 ||
	    (cost = cnt_cost_new(d, &err)) == NULL)
		cnt_die_err(&err);
	if (who != NULL)   /* every input checked before anything is printed */
		for (int i = optind; i < argc || i == optind; i++) {
			const char *name = i < argc ? argv[i] : "-";
			int fd = cnt_cli_open_in(name);

			cnt_cli_tenant_guard(who, fd, name);
			cnt_cli_close_in(fd);
		}
	cnt_progress_start(&co);
	for (int i = optind; i < argc || i == optind; i++) {
		const char *name = i < argc ? argv[i] : "-";
		int fd = cnt_cli_open_in(name);

		cnt_progress_input(fd, name);
		if (cnt_cost_read_fd(cost, fd, name, reject, NULL, &rejected, &err) != 0)
			cnt_die_err(&err);
		cnt_cli_close_in(fd);
	}
	cnt_progress_end();
	if (!json) {
		cnt_cli_printf("%-16s %-16s %3s %-7s %10s %12s %10s %14s", "TENANT", "COUNTER", "V", "TYPE",
			"ARCHIVED", "REPRESENTED", "PRICE/M", "COST");
		for (int t = 0; t < cnt_defs_ntypes(); t++) {
			double p;

			if (cnt_defs_unit_cost(d, (cnt_counter_type)t, &p))
				cnt_cli_printf(" %14s", cnt_defs_ctype_name((cnt_counter_type)t));
		}
		cnt_cli_printf("\n");
	}
	rows = cnt_cost_each(cost, who, row, NULL);
	cnt_cost_total(cost, who, &sum);
	if (co.stats_path) {
		cnt_stats s;

		cnt_stats_begin(&s);
		cnt_stats_u64(&s, "in", sum.archived + sum.compensations + rejected);
		cnt_stats_u64(&s, "out", rows);
		cnt_stats_u64(&s, "rejected", rejected);
		cnt_stats_u64(&s, "archived", sum.archived);
		cnt_stats_u64(&s, "represented", sum.represented);
		cnt_stats_u64(&s, "compensations", sum.compensations);
		cnt_stats_double(&s, "cost", sum.cost);
		cnt_stats_write(&s, co.stats_path);
	}
	if (co.verbose)
		cnt_cli_note("%llu events archived, %llu represented, cost %.6f, %llu not counted",
			(unsigned long long)sum.archived, (unsigned long long)sum.represented, sum.cost,
			(unsigned long long)rejected);
	cnt_cost_free(cost);
	cnt_fp_policy_end();
	cnt_defs_free(d);
	return cnt_cli_finish();
}
