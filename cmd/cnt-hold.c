/*
 * cnt-hold - list the events cnt-ingest held, and clear or reject them
 * (lib/correct/hold_decide.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "correct/hold_decide.h"
#include "correct/retract.h"
#include "model/event.h"

static const char usage[] =
	"usage: cnt-hold list [--decisions file] [--hold-state state] [selection] [-F table|json]\n"
	"                     [--stats file] [-v] [--progress | --no-progress] hold-file ...\n"
	"       cnt-hold clear --decisions file --by who [--now time] [-o file] [-c codec]\n"
	"                      [--level n] [--stats file] [-v] selection hold-file ...\n"
	"       cnt-hold reject --decisions file --ledger file --by who [--authority text]\n"
	"                       [--now time] [--stats file] [-v] selection hold-file ...\n"
	"  selection: [--hold id ...] [--signal rate|lockstep|device] [--tenant id]\n"
	"             [--counter id] [--member ref]\n";

static const char help[] =
	"List held events; clear them (released as a new log segment, counted from\n"
	"the decision time) or reject them (a retraction record, cause fraud).  Every\n"
	"decision is a line of the append-only decisions ledger; a hold is decided once.\n"
	"\n"
	"      --decisions FILE    the decisions ledger (cnt-hold(5))\n"
	"      --hold ID           a hold by its id (repeatable)\n"
	"      --signal NAME       holds of one signal: rate, lockstep or device\n"
	"      --tenant ID         holds of one tenant\n"
	"      --counter ID        holds of one counter\n"
	"      --member REF        holds of one member\n"
	"      --hold-state STATE  list: pending, cleared or rejected\n"
	"  -F, --output-format table|json  list: a table (default) or JSON lines\n"
	"      --by WHO            who decides (required to decide)\n"
	"      --now TIME          when (default: the clock)\n"
	"      --ledger FILE       reject: the retraction ledger (cnt-retraction(5))\n"
	"      --authority TEXT    reject: the record's authority (default: quarantine)\n"
	"  -o, --output FILE       clear: the released events (default: standard output)\n"
	"  -c, --codec NAME        clear: null, deflate, snappy, xz, zstandard or bzip2\n"
	"      --level N           compression level (the codec's default)\n"
	"      --stats FILE        counts as one JSON object ('-': standard error)\n"
	"  -v, --verbose           one summary line on standard error\n"
	"      --progress          accepted; cnt-hold shows no progress\n"
	"      --no-progress       no progress\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-hold(1) and cnt-hold(5).\n";

enum { O_DECISIONS = CNT_OPT_TOOL_BASE, O_HOLD, O_SIGNAL, O_TENANT, O_COUNTER, O_MEMBER, O_STATE,
	O_BY, O_NOW, O_LEDGER, O_AUTH };

static void line(void *ctx, const char *text, size_t n)
{
	(void)ctx;
	cnt_cli_write(text, n);
}

static void stats_done(cnt_stats *s, const char *path)
{
	if (path)
		cnt_stats_write(s, path);
	else
		cnt_stats_release(s);
}

static int open_ledger(const char *path, int create)
{
	int fd = open(path, create ? O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC : O_RDONLY | O_CLOEXEC, 0644);

	if (fd < 0)
		cnt_die("cannot open ledger '%s': %s", path, strerror(errno));
	/* two deciders at once would both see a hold pending */
	if (create && flock(fd, LOCK_EX) != 0)
		cnt_die("cannot lock ledger '%s': %s", path, strerror(errno));
	return fd;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"decisions", required_argument, NULL, O_DECISIONS}, {"hold", required_argument, NULL, O_HOLD},
		{"signal", required_argument, NULL, O_SIGNAL}, {"tenant", required_argument, NULL, O_TENANT},
		{"counter", required_argument, NULL, O_COUNTER}, {"member", required_argument, NULL, O_MEMBER},
		{"hold-state", required_argument, NULL, O_STATE}, {"by", required_argument, NULL, O_BY},
		{"now", required_argument, NULL, O_NOW}, {"ledger", required_argument, NULL, O_LEDGER},
		{"authority", required_argument, NULL, O_AUTH}, {"output", required_argument, NULL, 'o'},
		{"output-format", required_argument, NULL, 'F'}, {"codec", required_argument, NULL, 'c'},
		{"level", required_argument, NULL, CNT_OPT_LEVEL},
		CNT_CLI_LONGOPTS, {NULL, 0, NULL, 0}
	};
	cnt_cli_common co = CNT_CLI_COMMON_INIT;
	cnt_hold_sel sel = {0};
	cnt_hold_decision dec = {0, NULL, -1, "quarantine"};
	const char *dpath = NULL, *ledger = NULL, *out_path = NULL, *verb, **ids = NULL;
	int c, json = 0, codec_set = 0, level = CNT_LEVEL_DEFAULT, nin, *fds, dfd = -1, lfd = -1;
	cnt_codec_id codec = CNT_CODEC_NULL;
	cnt_decisions *d = NULL;
	cnt_err err;
	cnt_stats s;

	cnt_cli_init("cnt-hold", usage, help);
	while ((c = cnt_cli_getopt(argc, argv, "o:F:c:" CNT_CLI_SHORT, lo)) != -1) {
		switch (c) {
		case O_DECISIONS: dpath = optarg; break;
		case O_HOLD:
			ids = realloc(ids, (sel.nids + 1) * sizeof(*ids));
			cnt_oom(ids == NULL);
			ids[sel.nids++] = optarg;
			break;
		case O_SIGNAL:
			if (cnt_defs_hold_parse(optarg, &sel.signal) != 0)
				cnt_die_usage("--signal: '%s' is not rate, lockstep or device", optarg);
			sel.has_signal = 1;
			break;
		case O_TENANT: sel.tenant = optarg; break;
		case O_COUNTER: sel.counter = optarg; break;
		case O_MEMBER: sel.member = optarg; break;
		case O_STATE:
			if (cnt_hold_state_parse(optarg, &sel.state) != 0)
				cnt_die_usage("--hold-state: '%s' is not pending, cleared or rejected", optarg);
			sel.has_state = 1;
			break;
		case O_BY: dec.by = cnt_cli_text("--by", optarg); break;
		case O_NOW: dec.at = cnt_cli_time("--now", optarg); break;
		case O_LEDGER: ledger = optarg; break;
		case O_AUTH: dec.authority = cnt_cli_text("--authority", optarg); break;
		case 'o': out_path = optarg; break;
		case 'F':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "table") != 0)
				cnt_die_usage("--output-format: '%s' is not table or json", optarg);
			json = strcmp(optarg, "json") == 0;
			break;
		case 'c': codec = cnt_cli_codec("--codec", optarg); codec_set = 1; break;
		case CNT_OPT_LEVEL: level = cnt_cli_level("--level", optarg); break;
		default: cnt_cli_option(c, optarg, &co);
		}
	}
	if (optind >= argc)
		cnt_die_usage("a command is required: list, clear or reject");
	verb = argv[optind++];
	if (strcmp(verb, "list") != 0 && strcmp(verb, "clear") != 0 && strcmp(verb, "reject") != 0)
		cnt_die_usage("'%s' is not a command: list, clear or reject", verb);
	if ((nin = argc - optind) < 1)
		cnt_die_usage("the hold files are required");
	sel.ids = ids;
	dec.reject = strcmp(verb, "reject") == 0;
	if (strcmp(verb, "list") != 0) {
		if (dpath == NULL || dec.by == NULL)
			cnt_die_usage("%s needs --decisions and --by", verb);
		if (dec.reject && ledger == NULL)
			cnt_die_usage("reject needs --ledger (the retraction ledger)");
		/* a reject's retraction record keeps the selectors */
		if (dec.reject && sel.tenant)
			cnt_cli_text("--tenant", sel.tenant);
		if (dec.reject && sel.counter)
			cnt_cli_text("--counter", sel.counter);
		if (dec.reject && sel.member)
			cnt_cli_text("--member", sel.member);
		if (sel.has_state)
			cnt_die_usage("--hold-state is for list: only pending holds are decided");
		if (sel.nids == 0 && !sel.tenant && !sel.counter && !sel.member && !sel.has_signal)
			cnt_die_usage("nothing selected: give --hold, --signal, --tenant, --counter or --member");
		if (*dec.by == 0 || *dec.authority == 0)
			cnt_die_usage("--by and --authority must not be empty");
	}
	if (dec.at < 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		dec.at = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	}
	fds = calloc((size_t)nin, sizeof(*fds));
	cnt_oom(fds == NULL);
	for (int i = 0; i < nin; i++)
		fds[i] = cnt_cli_open_in(argv[optind + i]);
	if (dpath && (strcmp(verb, "list") != 0 || access(dpath, F_OK) == 0)) {
		dfd = open_ledger(dpath, strcmp(verb, "list") != 0);
		if ((d = cnt_decisions_load(dfd, dpath, &err)) == NULL)
			cnt_die_err(&err);
	}
	cnt_stats_begin(&s);
	if (strcmp(verb, "list") == 0) {
		uint64_t listed;

		if (cnt_hold_list(fds, (const char *const *)argv + optind, (size_t)nin, d, &sel, json, line, NULL,
			    &listed, &err) != 0)
			cnt_die_err(&err);
		cnt_stats_u64(&s, "out", listed);
		stats_done(&s, co.stats_path);
	} else {
		cnt_hold_decide_result r;
		cnt_writer *w = NULL;
		cnt_out out;

		if (dec.reject)
			lfd = open_ledger(ledger, 1);
		else {
			cnt_cli_avro_out(&out, out_path, codec_set, &codec);
			if ((w = cnt_event_writer_new(out.fd, out_path ? out_path : "standard output", codec, level,
				     &err)) == NULL)
				cnt_die_err(&err);
		}
		if (cnt_hold_decide_run(fds, (const char *const *)argv + optind, (size_t)nin, d, &sel, &dec, w, lfd,
			    ledger, &r, &err) != 0)
			cnt_die_err(&err);
		cnt_stats_u64(&s, "in", r.holds);
		cnt_stats_u64(&s, "out", dec.reject ? 0 : r.decided);
		cnt_stats_u64(&s, "decided", r.decided);
		cnt_stats_u64(&s, "retracted", r.retracted);
		cnt_stats_str(&s, "retraction_id", r.retraction_line ? r.retraction_id : NULL, -1);
		stats_done(&s, co.stats_path);   /* before the ledgers: nothing that can fail after them */
		if (co.verbose)
			cnt_cli_note("%llu holds %s", (unsigned long long)r.decided, dec.reject ? "rejected" : "cleared");
		/* the segment on disk, the records, then the segment in place */
		if (w && out.fd > STDOUT_FILENO && fsync(out.fd) != 0 && errno != EINVAL) {   /* EINVAL: /dev/null */
			cnt_err_write(&err, errno, "cannot write '%s'", out_path);
			cnt_die_err(&err);
		}
		if ((r.retraction_line && cnt_retract_ledger_append(lfd, ledger, r.retraction_line, &err) != 0) ||
		    cnt_retract_ledger_append(dfd, dpath, r.decision_lines, &err) != 0)
			cnt_die_err(&err);
		if (w) {
			cnt_cli_commit(&out);
			cnt_writer_free(w);
		} else
			close(lfd);
		free(r.decision_lines);
		free(r.retraction_line);
	}
	cnt_decisions_free(d);
	if (dfd >= 0)
		close(dfd);
	for (int i = 0; i < nin; i++)
		cnt_cli_close_in(fds[i]);
	free(fds);
	free(ids);
	return cnt_cli_finish();
}
