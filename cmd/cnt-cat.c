/*
 * cnt-cat - print Avro container files as JSON lines or CSV.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "avro/json.h"
#include "avro/print.h"
#include "cli/cli.h"

static const char usage[] =
	"usage: cnt-cat [--count | --schema | --meta] [-F json|csv] [-n count] [-t]\n"
	"               [--as event|raw | --reader-schema file] [--tenant id]\n"
	"               [--stats file] [-v]\n"
	"               [--progress | --no-progress]\n"
	"               [file ...]\n";

static const char help[] =
	"Print Avro container files (events, buckets, views) as JSON lines or CSV.\n"
	"\n"
	"  -F, --output-format json|csv  what to print (default json: one object per\n"
	"                          record)\n"
	"  -t, --iso-time          timestamps as RFC 3339 UTC text (default: exact epoch values)\n"
	"  -n, --head N            stop after N records\n"
	"      --count             print the number of records (every record is decoded)\n"
	"      --schema            print each container's writer schema\n"
	"      --meta              print each container's header as a JSON object\n"
	"      --as event|raw      read as cnt.CountingEvent or cnt.RawEvent (schema resolution)\n"
	"      --reader-schema F   read with the Avro schema in file F (schema resolution)\n"
	"      --tenant ID         who is asking: refuse (status 5) before printing\n"
	"                          anything unless every input holds only ID's data\n"
	"                          (default $CNT_TENANT)\n"
	"      --stats FILE        counts as one JSON object ('-': standard error)\n"
	"  -v, --verbose           per-input record counts on standard error\n"
	"      --progress          progress on standard error (default: on a terminal)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"Files are read in order; '-' or no file reads standard input, which may hold\n"
	"several containers back to back.  See cnt-cat(1).\n";

enum { OPT_COUNT = CNT_OPT_TOOL_BASE, OPT_SCHEMA, OPT_META, OPT_AS, OPT_READER, OPT_TENANT };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output-format", required_argument, NULL, 'F'},
		{"iso-time", no_argument, NULL, 't'},
		{"head", required_argument, NULL, 'n'},
		{"count", no_argument, NULL, OPT_COUNT},
		{"schema", no_argument, NULL, OPT_SCHEMA},
		{"meta", no_argument, NULL, OPT_META},
		{"as", required_argument, NULL, OPT_AS},
		{"reader-schema", required_argument, NULL, OPT_READER},
		{"tenant", required_argument, NULL, OPT_TENANT},
		CNT_CLI_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	cnt_printer p;
	cnt_avro_schema *reader = NULL;
	const char *as = NULL, *reader_file = NULL, *who = NULL;
	int c, nmodes = 0;
	cnt_err err;

	memset(&p, 0, sizeof(p));
	p.head = -1;
	p.fd = STDOUT_FILENO;
	cnt_cli_init("cnt-cat", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "F:tn:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'F':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "csv") != 0)
				cnt_die_usage("--output-format: '%s' is not json or csv", optarg);
			p.csv = strcmp(optarg, "csv") == 0;
			break;
		case 't': p.flags |= CNT_JSON_ISO_TIME; break;
		case 'n': p.head = (int64_t)cnt_cli_uint("--head", optarg, 0, INT64_MAX); break;
		case OPT_COUNT: p.mode = CNT_PRINT_COUNT; nmodes++; break;
		case OPT_SCHEMA: p.mode = CNT_PRINT_SCHEMA; nmodes++; break;
		case OPT_META: p.mode = CNT_PRINT_META; nmodes++; break;
		case OPT_AS: as = optarg; break;
		case OPT_READER: reader_file = optarg; break;
		case OPT_TENANT: who = optarg; break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (nmodes > 1)
		cnt_die_usage("--count, --schema and --meta exclude each other");
	if (as && reader_file)
		cnt_die_usage("--as and --reader-schema exclude each other");
	if ((as || reader_file) && (reader = cnt_print_reader_schema(as, reader_file, &err)) == NULL)
		cnt_die_err(&err);
	p.reader = reader;
	/* every input checked whole before anything is printed */
	if ((who = cnt_cli_tenant(who)) != NULL)
		for (int i = optind; i < argc || i == optind; i++) {
			const char *name = i < argc ? argv[i] : "-";
			int fd = cnt_cli_open_in(name);

			cnt_cli_tenant_guard(who, fd, name);
			cnt_cli_close_in(fd);
		}
	cnt_progress_start(&co);
	p.tick = cnt_progress_add;
	for (int i = optind; (i < argc || i == optind) && !cnt_print_full(&p); i++) {
		const char *name = i < argc ? argv[i] : "-";
		int fd = cnt_cli_open_in(name);
		uint64_t n;

		cnt_progress_input(fd, name);
		if (cnt_print_input(&p, fd, name, &n, &err) != 0)
			cnt_die_err(&err);
		cnt_cli_close_in(fd);
		if (co.verbose)
			cnt_cli_note("'%s': %llu records", name, (unsigned long long)n);
	}
	if (cnt_print_finish(&p, &err) != 0)
		cnt_die_err(&err);
	if (co.stats_path) {
		cnt_stats s;

		cnt_stats_begin(&s);
		cnt_stats_u64(&s, "in", p.total);
		cnt_stats_u64(&s, "out", p.mode == CNT_PRINT_RECORDS ? p.total : 0);
		cnt_stats_write(&s, co.stats_path);
	}
	cnt_print_release(&p);
	cnt_avro_schema_free(reader);
	return cnt_cli_finish();
}
