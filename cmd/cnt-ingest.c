/*
 * cnt-ingest - admit raw counting events into the log (lib/ingest/ingest.h).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/stage_stats.h"
#include "count/stage.h"
#include "ingest/cap.h"
#include "ingest/hold.h"
#include "model/fingerprint.h"
#include "ingest/ingest.h"
#include "ingest/verify.h"
#include "time/timefmt.h"

static const char usage[] =
	"usage: cnt-ingest -d definitions [-o file] [-r file] [-D file] [-f json|csv|avro]\n"
	"                  [--holds file | --no-holds] [--members file] [--now time] [--live]\n"
	"                  [--keyring file] [--max-past dur] [--max-future dur]\n"
	"                  [-c codec] [--level n] [--stats file] [-v]\n"
	"                  [--progress | --no-progress] [file ...]\n";

static const char help[] =
	"Admit raw counting events (JSON lines, CSV or Avro) into the log as\n"
	"cnt.CountingEvent Avro records: each is accepted, rejected or a duplicate.\n"
	"\n"
	"  -d, --definitions FILE  tenants and counters (cnt-definitions(5)); required\n"
	"  -o, --output FILE       accepted events (default: standard output)\n"
	"  -r, --rejects FILE      rejected records as JSON lines (default: messages)\n"
	"  -D, --duplicates FILE   duplicates as JSON lines (default: counted only)\n"
	"  -f, --format FMT        input format json, csv or avro (default: guessed)\n"
	"      --holds FILE        events matching a hold signal go here (cnt-hold(5))\n"
	"      --no-holds          admit every event although hold signals are declared\n"
	"      --members FILE      each tenant's members, kept between runs: member caps\n"
	"      --now TIME          ingest time of every event instead of the clock\n"
	"      --live              live traffic: shed events over a tenant's quota\n"
	"      --keyring FILE      keys that sign events (cnt-keyring(5)); without it a\n"
	"                          client-origin event is rejected\n"
	"      --max-past DUR      oldest event_time accepted, before the ingest time (7d)\n"
	"      --max-future DUR    latest event_time accepted, after the ingest time (60s)\n"
	"  -c, --codec NAME        null, deflate, snappy, xz, zstandard or bzip2\n"
	"      --level N           compression level (the codec's default)\n"
	"      --stats FILE        counts as one JSON object ('-': standard error)\n"
	"  -v, --verbose           one summary line on standard error\n"
	"      --progress          progress on standard error (default: on a terminal)\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-ingest(1), cnt-event(5) and cnt-definitions(5).\n";

enum { OPT_NOW = CNT_OPT_TOOL_BASE, OPT_LIVE, OPT_MAX_PAST, OPT_MAX_FUTURE, OPT_HOLDS, OPT_NO_HOLDS, OPT_MEMBERS,
	OPT_KEYRING };

static const cnt_members *members;

/* A reject message, on a line of its own even while progress is shown. */
static void note(const char *msg)
{
	cnt_cli_note("%s", msg);
}

static int64_t duration(const char *opt, const char *s, const char *eg)
{
	int64_t ms;

	if (cnt_time_parse_duration(s, &ms) != 0 || ms < 0)
		cnt_die_usage("%s: '%s' is not a duration (e.g. %s)", opt, s, eg);
	return ms;
}

/* A stream output (-r, -D) when path is given: its descriptor, else -1. */
static int stream(cnt_out *o, const char *path, const char *events)
{
	if (path == NULL)
		return -1;
	if (strcmp(path, "-") == 0 && (events == NULL || strcmp(events, "-") == 0))
		cnt_die_usage("the events go to standard output: -r and -D need a file name then (or use -o)");
	cnt_cli_out(o, path);
	return o->fd;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"definitions", required_argument, NULL, 'd'}, {"output", required_argument, NULL, 'o'},
		{"rejects", required_argument, NULL, 'r'}, {"duplicates", required_argument, NULL, 'D'},
		{"format", required_argument, NULL, 'f'}, {"codec", required_argument, NULL, 'c'},
		{"level", required_argument, NULL, CNT_OPT_LEVEL}, {"now", required_argument, NULL, OPT_NOW},
		{"live", no_argument, NULL, OPT_LIVE}, {"max-past", required_argument, NULL, OPT_MAX_PAST},
		{"max-future", required_argument, NULL, OPT_MAX_FUTURE}, {"holds", required_argument, NULL, OPT_HOLDS},
		{"no-holds", no_argument, NULL, OPT_NO_HOLDS}, {"members", required_argument, NULL, OPT_MEMBERS},
		{"keyring", required_argument, NULL, OPT_KEYRING},
		CNT_CLI_LONGOPTS, {NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	cnt_ingest_cfg cfg = {.hold_fd = -1, .admit = {.now_ms = INT64_MIN, .max_past_ms = 7LL * 86400 * 1000,
		.max_future_ms = 60 * 1000}, .level = CNT_LEVEL_DEFAULT, .note = note, .progress = cnt_progress_add};
	const char *defs_path = NULL, *out_path = NULL, *mem_path = NULL, *keyring_path = NULL;
	cnt_keyring *keyring = NULL;
	cnt_out out, rej, dup, hold, mem;
	const cnt_tenant *ct;
	const cnt_counter *hc;
	int codec_set = 0, c, no_holds = 0;
	cnt_codec_id hcodec;
	cnt_defs *defs;
	cnt_ingest *g;
	cnt_err err;

	cnt_cli_init("cnt-ingest", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "d:o:r:D:f:c:" CNT_CLI_SHORT, longopts)) != -1) {
		switch (c) {
		case 'd': defs_path = optarg; break;
		case 'o': out_path = optarg; break;
		case 'r': cfg.rej_name = optarg; break;
		case 'D': cfg.dup_name = optarg; break;
		case 'f':
			if ((c = cnt_input_format_parse(optarg)) < 0)
				cnt_die_usage("--format: '%s' is not json, csv or avro", optarg);
			cfg.format = (cnt_input_format)c;
			break;
		case 'c': cfg.codec = cnt_cli_codec("--codec", optarg); codec_set = 1; break;
		case CNT_OPT_LEVEL: cfg.level = cnt_cli_level("--level", optarg); break;
		case OPT_NOW: cfg.admit.now_ms = cnt_cli_time("--now", optarg); break;
		case OPT_LIVE: cfg.admit.live = 1; break;
		case OPT_HOLDS: cfg.hold_name = optarg; break;
		case OPT_NO_HOLDS: no_holds = 1; break;
		case OPT_MEMBERS: mem_path = optarg; break;
		case OPT_KEYRING: keyring_path = optarg; break;
		case OPT_MAX_PAST: cfg.admit.max_past_ms = duration("--max-past", optarg, "7d, 36h, 90m"); break;
		case OPT_MAX_FUTURE: cfg.admit.max_future_ms = duration("--max-future", optarg, "60s, 5m"); break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (defs_path == NULL)
		cnt_die_usage("-d definitions is required");
	if (cfg.hold_name && no_holds)
		cnt_die_usage("--holds and --no-holds exclude each other");
	if ((cfg.admit.defs = defs = cnt_defs_load(defs_path, &err)) == NULL || cnt_fp_policy(defs, &err) != 0)
		cnt_die_err(&err);
	if (keyring_path && (cfg.admit.keyring = keyring = cnt_keyring_load(keyring_path, &err)) == NULL)
		cnt_die_err(&err);
	if ((hc = cnt_hold_first_counter(defs)) != NULL && cfg.hold_name == NULL && !no_holds)
		cnt_die("counter '%s/%s' declares hold signals: give --holds FILE, or --no-holds to admit "
			"every event", hc->tenant_id, hc->counter_id);
	if ((ct = cnt_members_first_capped(defs)) != NULL && mem_path == NULL)
		cnt_die("tenant '%s' declares a member_cap: give --members FILE (a cap that forgets its "
			"members between runs enforces nothing)", ct->tenant_id);
	if (mem_path != NULL && strcmp(mem_path, "-") == 0)
		cnt_die_usage("--members needs a file name");
	if (mem_path != NULL && ((cfg.admit.members = cnt_members_new(defs, &err)) == NULL ||
	    cnt_members_load(cfg.admit.members, mem_path, &err) != 0))
		cnt_die_err(&err);
	members = cfg.admit.members;
	cfg.admit.expected = cnt_input_expected_events(argv + optind, argc - optind);
	cfg.rej_fd = stream(&rej, cfg.rej_name, out_path);
	cfg.dup_fd = stream(&dup, cfg.dup_name, out_path);
	cnt_cli_avro_out(&out, out_path, codec_set, &cfg.codec);
	cfg.out_fd = out.fd;
	cfg.out_name = out_path ? out_path : "standard output";
	if (cfg.hold_name) {
		if (strcmp(cfg.hold_name, "-") == 0)
			cnt_die_usage("--holds needs a file name");
		hcodec = cfg.codec;
		cnt_cli_avro_out(&hold, cfg.hold_name, 1, &hcodec);
		cfg.hold_fd = hold.fd;
	}
	if ((co.stats_path && (cfg.hot = cnt_topkey_new(CNT_TOPKEY_SLOTS, &err)) == NULL) ||
	    (g = cnt_ingest_new(&cfg, &err)) == NULL)
		cnt_die_err(&err);
	cnt_progress_start(&co);
	for (int i = optind; i < argc || i == optind; i++) {
		const char *name = i < argc ? argv[i] : "-";
		int fd = cnt_cli_open_in(name);

		cnt_progress_input(fd, name);
		if (cnt_ingest_input_fd(g, fd, name, &err) != 0)
			cnt_die_err(&err);
		cnt_cli_close_in(fd);
	}
	cnt_progress_end();
	if (cnt_ingest_finish(g, &err) != 0)
		cnt_die_err(&err);
	if (co.stats_path) {
		cnt_stats st;

		cnt_stats_begin(&st);
		if (cnt_stage_stats_ingest(&st, g, members, cfg.hot,
			cfg.admit.now_ms != INT64_MIN ? cfg.admit.now_ms : (int64_t)time(NULL) * 1000, &err) != 0)
			cnt_die_err(&err);
		cnt_stats_write(&st, co.stats_path);
	}
	if (mem_path != NULL) {   /* first: a member remembered but not logged only errs safe */
		cnt_cli_out(&mem, mem_path);
		if (cnt_members_write(members, mem.fd, mem_path, &err) != 0)
			cnt_die_err(&err);
		cnt_cli_commit(&mem);
	}
	cnt_cli_commit(&out);
	if (cfg.rej_fd >= 0)
		cnt_cli_commit(&rej);
	if (cfg.dup_fd >= 0)
		cnt_cli_commit(&dup);
	if (cfg.hold_fd >= 0)
		cnt_cli_commit(&hold);
	if (co.verbose) {
		const cnt_admit_stats *st = cnt_ingest_stats(g);

		uint64_t held = cnt_ingest_held(g) ? cnt_ingest_held(g)->held : 0;

		char hs[40] = "";

		if (cfg.hold_fd >= 0)   /* the line is unchanged without holds */
			snprintf(hs, sizeof(hs), ", held %llu", (unsigned long long)held);
		cnt_cli_note("in %llu, out %llu, rejected %llu, duplicate %llu%s (dedup hit rate %.2f%%)",
			(unsigned long long)st->in, (unsigned long long)(st->accepted - held),
			(unsigned long long)st->rejected, (unsigned long long)st->duplicate, hs,
			100.0 * cnt_count_ratio(st->duplicate, st->accepted + st->duplicate));
	}
	cnt_ingest_free(g);
	cnt_topkey_free(cfg.hot);
	cnt_members_free(cfg.admit.members);
	cnt_fp_policy_end();
	cnt_defs_free(defs);
	cnt_keyring_free(keyring);
	return cnt_cli_finish();
}
