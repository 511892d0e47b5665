/*
 * cnt-audit - the batch invalid-traffic audit of one (tenant, counter) up
 * to a watermark: the declared heuristics over the archive
 * (lib/correct/audit.h), the views they flag retracted with cause fraud
 * (lib/correct/retract.h), one line in the audit ledger
 * (lib/correct/auditlog.h), and a report.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "correct/audit.h"
#include "correct/auditlog.h"
#include "correct/retract.h"
#include "model/event.h"
#include "model/fingerprint.h"

static const char usage[] =
	"usage: cnt-audit -d definitions --tenant id --counter id --through time\n"
	"                 --requester who --authority text --ledger file --audits file -o file\n"
	"                 [--now time] [--baseline r] [-F table|json] [-c codec] [--level n]\n"
	"                 [--stats file] [-v] [--progress | --no-progress] log ...\n"
	"       cnt-audit -d definitions --tenant id --counter id --through time --dry-run\n"
	"                 [--baseline r] [-F table|json] [--stats file] [-v] log ...\n";

static const char help[] =
	"Apply the counter's declared audit heuristics to the events of the log files\n"
	"with event_time before --through, retract the views they flag (cause fraud),\n"
	"append one line to the audit ledger, and print the findings and the\n"
	"inflation ratio per video.\n"
	"\n"
	"  -d, --definitions FILE  the definitions (the counter's audit heuristics)\n"
	"      --tenant ID         the tenant audited (required)\n"
	"      --counter ID        the counter audited (required)\n"
	"      --through TIME      the watermark: events before it (required)\n"
	"      --dry-run           report only: write nothing\n"
	"      --requester WHO     who asks for the retraction\n"
	"      --authority TEXT    on what authority (the audit's name and version)\n"
	"      --ledger FILE       the retraction ledger (cnt-retraction(5))\n"
	"      --audits FILE       the audit ledger (cnt-audit(5))\n"
	"  -o, --output FILE       the compensating events\n"
	"      --now TIME          audited_at and created_at (default: the clock)\n"
	"      --baseline R        inflation baseline (default: declared, else 2)\n"
	"  -F, --output-format table|json  the report: a table (default) or JSON lines\n"
	"  -c, --codec NAME        null, deflate, snappy, xz, zstandard or bzip2\n"
	"      --level N           compression level (the codec's default)\n"
	"      --stats FILE        counts as one JSON object ('-': standard error)\n"
	"  -v, --verbose           one summary line on standard error\n"
	"      --progress          accepted; cnt-audit shows no progress\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-audit(1) and cnt-audit(5).\n";

enum { O_TENANT = CNT_OPT_TOOL_BASE, O_COUNTER, O_THROUGH, O_DRY, O_REQ, O_AUTH, O_LEDGER, O_AUDITS, O_NOW,
	O_BASELINE };

static int64_t clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void stats(const cnt_cli_common *co, const cnt_audit *a, const cnt_retract_result *r,
	const cnt_audit_summary *sum, const char *tenant, const char *counter, int dry, int appended)
{
	const cnt_audit_totals *t = cnt_audit_totals_of(a);
	cnt_stats s;

	if (co->stats_path == NULL)
		return;
	cnt_stats_begin(&s);
	cnt_stats_u64(&s, "in", t->in);
	cnt_stats_u64(&s, "out", r->retracted);
	cnt_stats_u64(&s, "rejected", r->refused);
	cnt_stats_u64(&s, "duplicates", t->duplicates);
	cnt_stats_u64(&s, "compensations", t->compensations);
	cnt_stats_u64(&s, "skipped", t->skipped);
	cnt_stats_u64(&s, "examined", t->examined);
	cnt_stats_u64(&s, "flagged", t->flagged);
	cnt_stats_u64(&s, "already_retracted", r->already);
	cnt_stats_u64(&s, "findings", cnt_audit_nfindings(a));
	cnt_stats_u64(&s, "inflated", t->inflated);
	cnt_stats_bool(&s, "balanced", t->in == t->examined + t->duplicates + t->compensations + t->skipped);
	cnt_stats_bool(&s, "dry_run", dry);
	cnt_stats_u64(&s, "ledger_records", r->ledger_records);
	cnt_stats_u64(&s, "audit_records", (uint64_t)appended);
	cnt_stats_str(&s, "retraction_id", sum->retraction_id, -1);
	cnt_stats_str(&s, "audit_id", appended || sum->audit_id ? sum->audit_id : NULL, -1);
	cnt_stats_array(&s, "counters");
	cnt_stats_object(&s, NULL);
	cnt_stats_str(&s, "tenant_id", tenant, -1);
	cnt_stats_str(&s, "counter_id", counter, -1);
	cnt_stats_u64(&s, "examined", t->examined);
	cnt_stats_u64(&s, "flagged", t->flagged);
	cnt_stats_write(&s, co->stats_path);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"definitions", required_argument, NULL, 'd'}, {"tenant", required_argument, NULL, O_TENANT},
		{"counter", required_argument, NULL, O_COUNTER}, {"through", required_argument, NULL, O_THROUGH},
		{"dry-run", no_argument, NULL, O_DRY}, {"requester", required_argument, NULL, O_REQ},
		{"authority", required_argument, NULL, O_AUTH}, {"ledger", required_argument, NULL, O_LEDGER},
		{"audits", required_argument, NULL, O_AUDITS}, {"now", required_argument, NULL, O_NOW},
		{"baseline", required_argument, NULL, O_BASELINE}, {"output-format", required_argument, NULL, 'F'},
		{"output", required_argument, NULL, 'o'}, {"codec", required_argument, NULL, 'c'},
		{"level", required_argument, NULL, CNT_OPT_LEVEL},
		CNT_CLI_LONGOPTS, {NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	const char *defs_path = NULL, *tenant = NULL, *counter = NULL, *out_path = NULL, *ledger = NULL,
		*audits = NULL, *fmt = "table";
	cnt_retract_req req = {0};
	cnt_audit_summary sum = {0};
	int64_t through = -1, now = -1;
	double baseline = -1;
	int level = CNT_LEVEL_DEFAULT, codec_set = 0, dry = 0, c, nin, *fds, lfd = -1, afd = -1;
	size_t *order;
	cnt_codec_id codec = CNT_CODEC_NULL;
	const cnt_counter *k;
	const cnt_audit_entry *last = NULL;
	cnt_auditlog *al = NULL;
	cnt_audit *a;
	cnt_defs *defs;
	cnt_err err;
	cnt_buf rep = CNT_BUF_INIT;
	cnt_retract_result r = {0};
	char rid[40], aid[40], *aline = NULL;

	cnt_cli_init("cnt-audit", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "d:o:c:F:" CNT_CLI_SHORT, lo)) != -1) {
		switch (c) {
		case 'd': defs_path = optarg; break;
		case O_TENANT: tenant = optarg; break;
		case O_COUNTER: counter = optarg; break;
		case O_THROUGH: through = cnt_cli_time("--through", optarg); break;
		case O_DRY: dry = 1; break;
		case O_REQ: req.requester = optarg; break;
		case O_AUTH: req.authority = optarg; break;
		case O_LEDGER: ledger = optarg; break;
		case O_AUDITS: audits = optarg; break;
		case O_NOW: now = cnt_cli_time("--now", optarg); break;
		case O_BASELINE: baseline = cnt_cli_double("--baseline", optarg, 1, 1e9); break;
		case 'F':
			if (strcmp(optarg, "table") != 0 && strcmp(optarg, "json") != 0)
				cnt_die_usage("--output-format: '%s' is not table or json", optarg);
			fmt = optarg;
			break;
		case 'o': out_path = optarg; break;
		case 'c': codec = cnt_cli_codec("--codec", optarg); codec_set = 1; break;
		case CNT_OPT_LEVEL: level = cnt_cli_level("--level", optarg); break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (defs_path == NULL || tenant == NULL || counter == NULL || through < 0)
		cnt_die_usage("-d, --tenant, --counter and --through are required");
	if (!dry && (req.requester == NULL || req.authority == NULL || ledger == NULL || audits == NULL ||
		     out_path == NULL))
		cnt_die_usage("--requester, --authority, --ledger, --audits and -o are required (or --dry-run)");
	if (!dry && (!cnt_audit_utf8_ok(req.requester) || !cnt_audit_utf8_ok(req.authority)))
		cnt_die_usage("--requester and --authority must be UTF-8 text");
	if ((nin = argc - optind) < 1)
		cnt_die_usage("the log (one or more event files) is required");
	if ((defs = cnt_defs_load(defs_path, &err)) == NULL || cnt_fp_policy(defs, &err) != 0)
		cnt_die_err(&err);
	if ((k = cnt_defs_counter(defs, tenant, strlen(tenant), counter, strlen(counter))) == NULL)
		cnt_die("counter '%s/%s' is not declared in '%s'", tenant, counter, defs_path);
	if (cnt_audit_check_through(k, through, &err) != 0)
		cnt_die_err(&err);
	if (now < 0)
		now = clock_ms();
	if (!dry) {
		/* the watermark first: a refused audit writes nothing */
		if ((afd = open(audits, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0)
			cnt_die("cannot open audit ledger '%s': %m", audits);
		if ((al = cnt_auditlog_load(afd, audits, &err)) == NULL)
			cnt_die_err(&err);
		if ((last = cnt_auditlog_latest(al, tenant, counter)) && through < last->through_ms)
			cnt_die("--through is before the last audit of '%s/%s' (%s): the watermark never goes back",
				tenant, counter, last->audit_id);
	}
	fds = calloc((size_t)nin, sizeof(*fds));
	order = calloc((size_t)nin, sizeof(*order));
	cnt_oom(fds == NULL || order == NULL);
	for (int i = 0; i < nin; i++)
		if (strcmp(argv[optind + i], "-") == 0)
			cnt_die_usage("the log is read twice: give files, not standard input");
		else
			fds[i] = cnt_cli_open_in(argv[optind + i]);
	if ((a = cnt_audit_new(k, through, baseline, &err)) == NULL ||
	    cnt_audit_read(a, fds, (const char *const *)argv + optind, (size_t)nin, order, &err) != 0 ||
	    cnt_audit_run(a, &err) != 0)
		cnt_die_err(&err);
	sum.dry_run = dry;
	if (!dry) {
		cnt_out out;
		cnt_writer *w;
		int named = 0;

		if ((lfd = open(ledger, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0)
			cnt_die("cannot open ledger '%s': %m", ledger);
		req.created_at = now;
		cnt_cli_avro_out(&out, out_path, codec_set, &codec);
		if ((w = cnt_event_writer_new(out.fd, out_path, codec, level, &err)) == NULL ||
		    cnt_fp_track(w, CNT_FP_EVENTS, &err) != 0 ||
		    cnt_audit_retract(a, fds, (const char *const *)argv + optind, (size_t)nin, order, &req, lfd, ledger,
			    w, cnt_cli_note_key, NULL, &r, rid, &named, &err) != 0)
			cnt_die_err(&err);
		sum.retracted = r.retracted;
		sum.already = r.already;
		sum.retraction_id = named ? rid : NULL;
		/* an audit already recorded at this watermark that retracts nothing new: idempotent */
		if (last && last->through_ms == through && r.retracted == 0) {
			sum.audit_id = last->audit_id;
		} else {
			cnt_audit_entry e = {NULL, tenant, counter, through, now, req.authority,
				(int64_t)cnt_audit_totals_of(a)->examined, (int64_t)cnt_audit_totals_of(a)->flagged,
				sum.retraction_id};

			if ((aline = cnt_auditlog_line(al, &e, &err)) == NULL)
				cnt_die_err(&err);
			if (sscanf(aline, "{\"audit_id\":\"%39[^\"]\"", aid) != 1)
				cnt_die("internal: an audit line without its id");
			sum.audit_id = aid;
		}
		cnt_oom(cnt_audit_report(a, &sum, strcmp(fmt, "json") == 0, &rep));
		stats(&co, a, &r, &sum, tenant, counter, dry, aline != NULL);
		/* the report first (a closed pipe ends the run before it changes
		 * anything), then the segment on disk, the retraction, the
		 * segment in place, the audit */
		cnt_cli_write(rep.p, rep.len);
		if (out.tmp && fsync(out.fd) != 0) {
			cnt_err_write(&err, errno, "cannot write '%s'", out_path);
			cnt_die_err(&err);
		}
		if (r.ledger_line && cnt_retract_ledger_append(lfd, ledger, r.ledger_line, &err) != 0)
			cnt_die_err(&err);
		cnt_cli_commit(&out);
		if (aline && cnt_auditlog_append(afd, audits, aline, &err) != 0)
			cnt_die_err(&err);
		cnt_writer_free(w);
		close(lfd);
		close(afd);
	} else {
		cnt_oom(cnt_audit_report(a, &sum, strcmp(fmt, "json") == 0, &rep));
		stats(&co, a, &r, &sum, tenant, counter, dry, 0);
		cnt_cli_write(rep.p, rep.len);
	}
	if (co.verbose)
		cnt_cli_note("%llu examined, %llu flagged, %llu retracted", (unsigned long long)cnt_audit_totals_of(a)->examined,
			(unsigned long long)cnt_audit_totals_of(a)->flagged, (unsigned long long)r.retracted);
	for (int i = 0; i < nin; i++)
		cnt_cli_close_in(fds[i]);
	free(fds);
	free(order);
	free(aline);
	free(r.ledger_line);
	cnt_buf_release(&rep);
	cnt_audit_free(a);
	cnt_auditlog_free(al);
	cnt_fp_policy_end();
	cnt_defs_free(defs);
	return cnt_cli_finish();
}
