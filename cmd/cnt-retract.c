/*
 * cnt-retract - take events out of the counters by compensating events
 * and a ledger record, or rebuild the buckets a retraction touches
 * (lib/correct/retract.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "model/fingerprint.h"
#include "correct/retract.h"
#include "model/bucket.h"
#include "model/event.h"

static const char usage[] =
	"usage: cnt-retract --cause C --requester R --authority A --ledger FILE [-o file]\n"
	"                   [--event KEY ...] [--events FILE] [--member M] [--tenant T]\n"
	"                   [--counter C] [--from T] [--to T] [--attr K=V ...] [--scope S]\n"
	"                   [--retraction-id ID] [--now T] [-c codec] [--level n] log ...\n"
	"       cnt-retract --rebuild BUCKETS -d definitions [--shards n] [-o file] log ...\n";

static const char help[] =
	"Select events of the log and write a compensating event for each one not yet\n"
	"retracted (a new log segment), and one record to the retraction ledger.\n"
	"With --rebuild, rewrite a bucket file: the buckets holding retracted events\n"
	"are counted again from the log without them.\n\n"
	"  --event KEY, --events FILE  event ids or idempotency keys (FILE: one a line)\n"
	"  --member M, --tenant T, --counter C, --from T, --to T, --attr K=V  filters\n"
	"  --scope event|member|campaign  (default from the selectors)\n"
	"  --cause deleted|banned|dq|fraud, --requester WHO, --authority WHAT  required\n"
	"  --ledger FILE   the append-only retraction ledger (cnt-retraction(5))\n"
	"  --now TIME      created_at of the record (default: the clock)\n"
	"  -o, --output FILE  compensations, or the rebuilt buckets (default stdout)\n"
	"  -c, --codec NAME, --level N, -d, --definitions FILE, --shards N\n"
	"  --stats FILE, -v, -h, --version\n\nSee cnt-retract(1).\n";

enum { O_EVENT = CNT_OPT_TOOL_BASE, O_EVENTS, O_MEMBER, O_TENANT, O_COUNTER, O_FROM, O_TO, O_ATTR, O_SCOPE,
	O_CAUSE, O_REQ, O_AUTH, O_LEDGER, O_NOW, O_RID, O_REBUILD, O_SHARDS };

static char **keys;
static const char **ak, **av;
static size_t nkeys, nattrs;

static void add_list(const char *path)
{
	int fd = cnt_cli_open_in(path);
	cnt_err err;

	if (cnt_retract_keys_read(fd, path, &keys, &nkeys, &err) != 0)
		cnt_die_err(&err);
	cnt_cli_close_in(fd);
}

static void add_attr(char *kv)
{
	char *eq = strchr(kv, '=');

	if (eq == NULL || eq == kv)
		cnt_die_usage("--attr: '%s' is not KEY=VALUE", kv);
	*eq = 0;
	ak = realloc(ak, (nattrs + 1) * sizeof(*ak));
	av = realloc(av, (nattrs + 1) * sizeof(*av));
	cnt_oom(ak == NULL || av == NULL);
	ak[nattrs] = kv;
	av[nattrs++] = eq + 1;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"event", 1, NULL, O_EVENT}, {"events", 1, NULL, O_EVENTS}, {"member", 1, NULL, O_MEMBER},
		{"tenant", 1, NULL, O_TENANT}, {"counter", 1, NULL, O_COUNTER}, {"from", 1, NULL, O_FROM},
		{"to", 1, NULL, O_TO}, {"attr", 1, NULL, O_ATTR}, {"scope", 1, NULL, O_SCOPE},
		{"cause", 1, NULL, O_CAUSE}, {"requester", 1, NULL, O_REQ}, {"authority", 1, NULL, O_AUTH},
		{"ledger", 1, NULL, O_LEDGER}, {"now", 1, NULL, O_NOW}, {"retraction-id", 1, NULL, O_RID},
		{"rebuild", 1, NULL, O_REBUILD}, {"shards", 1, NULL, O_SHARDS}, {"definitions", 1, NULL, 'd'},
		{"output", 1, NULL, 'o'}, {"codec", 1, NULL, 'c'}, {"level", 1, NULL, CNT_OPT_LEVEL},
		CNT_CLI_LONGOPTS, {NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	cnt_retract_sel sel = {0};
	cnt_retract_req req = {0};
	const char *out_path = NULL, *ledger = NULL, *rebuild = NULL, *defs_path = NULL, *scope = NULL;
	int level = CNT_LEVEL_DEFAULT, codec_set = 0, c, nin, *fds, lfd = -1, bfd;
	uint32_t shards = 1;
	cnt_codec_id codec = CNT_CODEC_NULL;
	cnt_out out;
	cnt_err err;
	cnt_writer *w;
	cnt_stats s;

	req.created_at = -1;
	cnt_cli_init("cnt-retract", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "d:o:c:" CNT_CLI_SHORT, lo)) != -1) {
		switch (c) {
		case O_EVENT:
			keys = realloc(keys, (nkeys + 1) * sizeof(*keys));
			cnt_oom(keys == NULL);
			keys[nkeys++] = optarg;
			break;
		case O_EVENTS: add_list(optarg); break;
		case O_MEMBER: sel.member = cnt_cli_text("--member", optarg); break;
		case O_TENANT: sel.tenant = cnt_cli_text("--tenant", optarg); break;
		case O_COUNTER: sel.counter = cnt_cli_text("--counter", optarg); break;
		case O_FROM: sel.from = cnt_cli_time("--from", optarg); sel.has_from = 1; break;
		case O_TO: sel.to = cnt_cli_time("--to", optarg); sel.has_to = 1; break;
		case O_ATTR: cnt_cli_text("--attr", optarg); add_attr(optarg); break;
		case O_SCOPE: scope = optarg; break;
		case O_CAUSE: req.cause = optarg; break;
		case O_REQ: req.requester = cnt_cli_text("--requester", optarg); break;
		case O_AUTH: req.authority = cnt_cli_text("--authority", optarg); break;
		case O_LEDGER: ledger = optarg; break;
		case O_NOW: req.created_at = cnt_cli_time("--now", optarg); break;
		case O_RID:
			if (strlen(optarg) < 1 || strlen(optarg) > 39)
				cnt_die_usage("--retraction-id: from 1 to 39 bytes");
			req.retraction_id = cnt_cli_text("--retraction-id", optarg);
			break;
		case O_REBUILD: rebuild = optarg; break;
		case O_SHARDS: shards = (uint32_t)cnt_cli_uint("--shards", optarg, 1, 65536); break;
		case 'd': defs_path = optarg; break;
		case 'o': out_path = optarg; break;
		case 'c': codec = cnt_cli_codec("--codec", optarg); codec_set = 1; break;
		case CNT_OPT_LEVEL: level = cnt_cli_level("--level", optarg); break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if ((nin = argc - optind) < 1)
		cnt_die_usage("the log (one or more event files) is required");
	fds = calloc((size_t)nin, sizeof(*fds));
	cnt_oom(fds == NULL);
	for (int i = 0; i < nin; i++)
		fds[i] = cnt_cli_open_in(argv[optind + i]);
	cnt_stats_begin(&s);
	if (rebuild) {
		cnt_rebuild_result r;
		cnt_defs *defs;

		if (defs_path == NULL)
			cnt_die_usage("--rebuild needs -d definitions");
		if ((defs = cnt_defs_load(defs_path, &err)) == NULL || cnt_fp_policy(defs, &err) != 0)
			cnt_die_err(&err);
		bfd = cnt_cli_open_in(rebuild);
		cnt_cli_avro_out(&out, out_path, codec_set, &codec);
		if ((w = cnt_bucket_writer_new(out.fd, out_path ? out_path : "standard output", codec, level, &err)) == NULL ||
		    cnt_fp_track(w, CNT_FP_BUCKETS, &err) != 0 ||
		    cnt_retract_rebuild(fds, (const char *const *)argv + optind, (size_t)nin, defs, defs_path, shards,
			    bfd, rebuild, w, &r, &err) != 0)
			cnt_die_err(&err);
		cnt_stats_u64(&s, "retracted", r.retracted);
		cnt_stats_u64(&s, "touched", r.touched);
		cnt_stats_u64(&s, "rebuilt_events", r.rebuilt_events);
		cnt_stats_u64(&s, "kept", r.kept);
		cnt_stats_u64(&s, "dropped", r.dropped);
		/* the statistics' last allocations before anything is committed */
		if (co.stats_path)
			cnt_stats_write(&s, co.stats_path);
		cnt_cli_commit(&out);
		cnt_writer_free(w);
		cnt_fp_policy_end();
		cnt_defs_free(defs);
	} else {
		cnt_retract_result r;

		if (req.cause == NULL || !cnt_retract_cause_ok(req.cause))
			cnt_die_usage("--cause deleted|banned|dq|fraud is required");
		if (req.requester == NULL || req.authority == NULL || ledger == NULL)
			cnt_die_usage("--requester, --authority and --ledger are required");
		if (nkeys == 0 && sel.member == NULL && !sel.has_from && !sel.has_to && nattrs == 0 && sel.counter == NULL)
			cnt_die_usage("nothing selected: give --event, --events, --member or a campaign filter");
		sel.scope = nkeys ? CNT_SCOPE_EVENT : sel.member ? CNT_SCOPE_MEMBER : CNT_SCOPE_CAMPAIGN;
		if (scope && cnt_retract_scope_parse(scope, &sel.scope) != 0)
			cnt_die_usage("--scope: '%s' is not event, member or campaign", scope);
		if (sel.member && (sel.tenant == NULL || sel.counter == NULL) && nkeys == 0)
			cnt_die_usage("--member needs --tenant and --counter");
		sel.keys = (const char *const *)keys; sel.nkeys = nkeys; sel.attr_k = ak; sel.attr_v = av; sel.nattrs = nattrs;
		if (req.created_at < 0) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			req.created_at = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
		}
		if ((lfd = open(ledger, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0)
			cnt_die("cannot open ledger '%s': %m", ledger);
		cnt_cli_avro_out(&out, out_path, codec_set, &codec);
		/* no definitions: the compensations carry what the log recorded */
		if (cnt_fp_policy(NULL, &err) != 0 ||
		    (w = cnt_event_writer_new(out.fd, out_path ? out_path : "standard output", codec, level, &err)) == NULL ||
		    cnt_fp_track(w, CNT_FP_EVENTS, &err) != 0 ||
		    cnt_retract_run(fds, (const char *const *)argv + optind, (size_t)nin, &sel, &req, lfd, ledger, w,
			    cnt_cli_note_key, NULL, &r, &err) != 0)
			cnt_die_err(&err);
		cnt_stats_u64(&s, "in", r.in);
		cnt_stats_u64(&s, "out", r.retracted);
		cnt_stats_u64(&s, "matched", r.matched);
		cnt_stats_u64(&s, "already_retracted", r.already);
		cnt_stats_u64(&s, "not_found", r.not_found);
		cnt_stats_u64(&s, "refused", r.refused);
		cnt_stats_u64(&s, "ledger_records", r.ledger_records);
		cnt_stats_str(&s, "retraction_id", r.ledger_records ? r.retraction_id : "", -1);
		if (co.verbose)
			cnt_cli_note("%llu retracted, %llu already, %llu not found",
				(unsigned long long)r.retracted, (unsigned long long)r.already,
				(unsigned long long)r.not_found);
		/* the statistics' last allocations before the ledger's record: a
		 * run that fails after it would leave a record of a retraction
		 * whose segment is not in place */
		if (co.stats_path)
			cnt_stats_write(&s, co.stats_path);
		/* the segment on disk, then the record, then the segment in place */
		if (out.tmp && fsync(out.fd) != 0) {
			cnt_err_write(&err, errno, "cannot write '%s'", out_path);
			cnt_die_err(&err);
		}
		if (r.ledger_line && cnt_retract_ledger_append(lfd, ledger, r.ledger_line, &err) != 0)
			cnt_die_err(&err);
		cnt_cli_commit(&out);
		close(lfd);
		free(r.ledger_line);
		cnt_writer_free(w);
		cnt_fp_policy_end();
	}
	if (co.stats_path == NULL)
		cnt_stats_release(&s);
	for (int i = 0; i < nin; i++)
		cnt_cli_close_in(fds[i]);
	free(fds);
	return cnt_cli_finish();
}
