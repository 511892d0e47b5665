/*
 * cnt-erase - rewrite the archive segments holding a member's events
 * without them, and record the erasure in the retraction ledger
 * (lib/correct/erase.h).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "model/fingerprint.h"
#include "correct/erase.h"

static const char usage[] =
	"usage: cnt-erase --member member [--tenant tenant] [--counter counter] --cause cause\n"
	"                 --requester who --authority what --ledger file [--now time]\n"
	"                 [--erasure-id id] [--level n] [--stats file] [-v]\n"
	"                 [--progress | --no-progress] segment ...\n";

static const char help[] =
	"Rewrite each segment of the archive that holds events of the member without\n"
	"them (the originals, already retracted, and their compensations) and append\n"
	"one erasure record to the retraction ledger.  Other segments are not touched.\n\n"
	"      --member M          whose events (required)\n"
	"      --tenant T          only the member's events of this tenant\n"
	"      --counter C         only the member's events of this counter\n"
	"      --cause deleted|banned|dq|fraud  why (required)\n"
	"      --requester WHO     who asked (required)\n"
	"      --authority WHAT    on what authority (required)\n"
	"      --ledger FILE       the retraction ledger, cnt-retraction(5) (required)\n"
	"      --now TIME          created_at of the record (default: the clock)\n"
	"      --erasure-id ID     the record's id (default: derived from its content)\n"
	"      --level N           compression level (default: each segment's own)\n"
	"      --stats FILE        counts as one JSON object (- for standard error)\n"
	"  -v, --verbose           one summary line on standard error\n"
	"      --progress          accepted; cnt-erase shows no progress\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n\n"
	"See cnt-erase(1).\n";

enum { O_MEMBER = CNT_OPT_TOOL_BASE, O_TENANT, O_COUNTER, O_CAUSE, O_REQ, O_AUTH, O_LEDGER, O_NOW, O_EID };

/* Segments switched per ledger record: the command layer holds at most 32
 * temporaries at once (and --stats is one). */
#define BATCH 16

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"member", required_argument, NULL, O_MEMBER},
		{"tenant", required_argument, NULL, O_TENANT},
		{"counter", required_argument, NULL, O_COUNTER},
		{"cause", required_argument, NULL, O_CAUSE},
		{"requester", required_argument, NULL, O_REQ},
		{"authority", required_argument, NULL, O_AUTH},
		{"ledger", required_argument, NULL, O_LEDGER},
		{"now", required_argument, NULL, O_NOW},
		{"erasure-id", required_argument, NULL, O_EID},
		{"level", required_argument, NULL, CNT_OPT_LEVEL},
		CNT_CLI_LONGOPTS, {NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	cnt_erase_sel sel = {0};
	cnt_retract_req req = {0};
	cnt_erase_plan plan;
	const char *ledger = NULL;
	const char *const *names;
	int level = CNT_LEVEL_DEFAULT, c, nin, *fds, lfd;
	cnt_out *outs;
	cnt_err err;
	cnt_stats s;

	req.created_at = -1;
	cnt_cli_init("cnt-erase", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, CNT_CLI_SHORT, lo)) != -1) {
		switch (c) {
		case O_MEMBER: sel.member = optarg; break;
		case O_TENANT: sel.tenant = cnt_cli_text("--tenant", optarg); break;
		case O_COUNTER: sel.counter = cnt_cli_text("--counter", optarg); break;
		case O_CAUSE: req.cause = optarg; break;
		case O_REQ: req.requester = cnt_cli_text("--requester", optarg); break;
		case O_AUTH: req.authority = cnt_cli_text("--authority", optarg); break;
		case O_LEDGER: ledger = optarg; break;
		case O_NOW: req.created_at = cnt_cli_time("--now", optarg); break;
		case O_EID:
			if (strlen(optarg) < 1 || strlen(optarg) > 39)
				cnt_die_usage("--erasure-id: from 1 to 39 bytes");
			req.retraction_id = cnt_cli_text("--erasure-id", optarg);
			break;
		case CNT_OPT_LEVEL: level = cnt_cli_level("--level", optarg); break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (sel.member == NULL)
		cnt_die_usage("--member is required");
	if (req.cause == NULL || !cnt_retract_cause_ok(req.cause))
		cnt_die_usage("--cause deleted|banned|dq|fraud is required");
	if (req.requester == NULL || req.authority == NULL || ledger == NULL)
		cnt_die_usage("--requester, --authority and --ledger are required");
	if ((nin = argc - optind) < 1)
		cnt_die_usage("the segments to erase from are required");
	names = (const char *const *)argv + optind;
	fds = calloc((size_t)nin, sizeof(*fds));
	outs = calloc((size_t)nin, sizeof(*outs));
	cnt_oom(fds == NULL || outs == NULL);
	for (int i = 0; i < nin; i++) {
		if (strcmp(names[i], "-") == 0)
			cnt_die_usage("a segment is a file rewritten in place, not standard input");
		cnt_cli_text("a segment's name", names[i]);   /* the record names it */
		fds[i] = cnt_cli_open_in(names[i]);
	}
	if (req.created_at < 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		req.created_at = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	}
	if ((lfd = open(ledger, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0)
		cnt_die("cannot open ledger '%s': %m", ledger);
	/* the inputs' fingerprint tables, carried into the rewritten segments */
	if (cnt_fp_policy(NULL, &err) != 0 ||
	    cnt_erase_scan(fds, names, (size_t)nin, &sel, lfd, ledger, &plan, &err) != 0)
		cnt_die_err(&err);
	cnt_stats_begin(&s);
	cnt_stats_u64(&s, "in", plan.in);
	cnt_stats_u64(&s, "out", plan.in - plan.originals - plan.compensations);
	cnt_stats_u64(&s, "erased", plan.originals + plan.compensations);
	cnt_stats_u64(&s, "originals", plan.originals);
	cnt_stats_u64(&s, "compensations", plan.compensations);
	cnt_stats_u64(&s, "segments", plan.n);
	cnt_stats_u64(&s, "rewritten", plan.affected);
	cnt_stats_u64(&s, "ledger_records", (plan.affected + BATCH - 1) / BATCH);
	if (plan.affected == 0)
		cnt_cli_note("no event of the member in the %d segment%s: nothing erased", nin, nin == 1 ? "" : "s");
	else if (co.verbose)
		cnt_cli_note("erasing %llu events (%llu originals, %llu compensations) from %zu of %d segments",
			(unsigned long long)(plan.originals + plan.compensations), (unsigned long long)plan.originals,
			(unsigned long long)plan.compensations, plan.affected, nin);
	if (co.stats_path)
		cnt_stats_write(&s, co.stats_path);
	else
		cnt_stats_release(&s);
	/* Per batch: the new segments written beside the old and fsync'd, the
	 * record appended, then each switched by a rename. */
	for (size_t i = 0, j; i < plan.n; i = j) {
		cnt_erase_plan part = plan;
		size_t k = 0;
		char id[40], *line;

		for (j = i; j < plan.n && k < BATCH; j++) {
			cnt_erase_seg *g = &plan.segs[j];

			if (g->originals + g->compensations == 0)
				continue;
			k++;
			cnt_cli_out(&outs[j], names[j]);
			if (cnt_erase_rewrite(fds[j], &sel, g, level, outs[j].fd, names[j], &err) != 0)
				cnt_die_err(&err);
		}
		if (k == 0)
			break;
		part.segs = plan.segs + i;
		part.n = j - i;
		if (cnt_erase_record(&req, &sel, &part, id, &line, &err) != 0 ||
		    cnt_retract_ledger_append(lfd, ledger, line, &err) != 0)
			cnt_die_err(&err);
		free(line);
		plan.last = part.last;
		for (size_t m = i; m < j; m++)
			if (plan.segs[m].originals + plan.segs[m].compensations)
				cnt_cli_commit(&outs[m]);
	}
	close(lfd);
	for (int i = 0; i < nin; i++)
		cnt_cli_close_in(fds[i]);
	cnt_erase_plan_release(&plan);
	cnt_fp_policy_end();
	free(fds);
	free(outs);
	return cnt_cli_finish();
}
