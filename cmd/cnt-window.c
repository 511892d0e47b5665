/*
 * cnt-window - attribute each event to the tenant-local hour bucket its
 * event time falls in, and mark the events that arrived too late.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "model/defs.h"
#include "avro/json.h"
#include "cli/legacy.h"
#include "base/outfile.h"
#include "time/tz.h"
#include "model/windowed.h"

static const char usage[] =
	"usage: cnt-window -d definitions [-o file] [-r file] [--shards n] [-c codec]\n"
	"                  [--level n] [--stats file] [-v] [file ...]\n";

static const char help[] =
	"Attribute each event to the bucket (one local hour of its tenant's timezone)\n"
	"its event_time falls in, and mark it late when its ingest_time is after the\n"
	"bucket's end plus the counter version's lateness horizon.  Writes\n"
	"cnt.WindowedEvent records for cnt-accumulate.\n"
	"\n"
	"  -d, --definitions FILE  tenants (timezones) and counters (horizons); required\n"
	"  -o, --output FILE       windowed events (default standard output)\n"
	"  -r, --rejects FILE      events naming an undeclared tenant or counter\n"
	"                          version, as JSON lines (default: standard error)\n"
	"      --shards N          split every key over N shards by event_id (default 1)\n"
	"  -c, --codec NAME        output codec (default zstandard for a file, null\n"
	"                          for a pipe)\n"
	"      --level N           compression level\n"
	"      --stats FILE        counts, late ratios and clock skew as one JSON object\n"
	"  -v, --verbose           one summary line on standard error\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-window(1) and cnt-bucket(5).\n";

typedef struct ctr_stats {
	uint64_t in, late;
	int64_t max_lag_ms;      /* ingest_time - event_time, largest */
	uint64_t ahead;          /* event_time after ingest_time (client clock ahead) */
	int64_t max_ahead_ms;
} ctr_stats;

static struct {
	cnt_out out, rej_out, stats_out;
	cnt_err err;
} C;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("cnt-window: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cnt_out_abort(&C.out);
	cnt_out_abort(&C.rej_out);
	cnt_out_abort(&C.stats_out);
	/* _exit: a fatal error ends the process here; memory is the
	 * kernel's to reclaim (the sanitizers' leak check is for the
	 * paths that finish, which free everything). */
	_exit(CNT_EXIT_TROUBLE);
}

static void oom(int rc)
{
	if (rc != 0)
		die("out of memory");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"definitions", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"rejects", required_argument, NULL, 'r'},
		{"shards", required_argument, NULL, 'n'},
		{"codec", required_argument, NULL, 'c'},
		{"level", required_argument, NULL, 'L'},
		{"stats", required_argument, NULL, 'S'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	const char *defs_path = NULL, *out_path = NULL, *rej_path = NULL, *stats_path = NULL, *codec_name = NULL;
	int level = -1, verbose = 0, c, nin;
	long shards = 1;
	cnt_codec_id codec = CNT_CODEC_NULL;
	cnt_defs *defs;
	cnt_tz_cache *tzc;
	cnt_tz_cursor *cur;
	unsigned char *cur_ok;
	ctr_stats *cs;
	size_t ntenants, ncounters;
	cnt_writer *w;
	char *schema;
	cnt_buf rej = CNT_BUF_INIT;
	uint64_t in = 0, out = 0, late = 0, rejected = 0;

	while ((c = getopt_long(argc, argv, "d:o:r:c:vh", longopts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'd': defs_path = optarg; break;
		case 'o': out_path = optarg; break;
		case 'r': rej_path = optarg; break;
		case 'n':
			errno = 0;
			shards = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || shards < 1 || shards > 65536)
				die("--shards: '%s' is not a number from 1 to 65536", optarg);
			break;
		case 'c': codec_name = optarg; break;
		case 'L':
			if (cnt_cli_old_level(optarg, &level, &C.err) != 0)
				die("%s", C.err.msg);
			break;
		case 'S': stats_path = optarg; break;
		case 'v': verbose = 1; break;
		case 'h':
			fputs(usage, stdout);
			fputs(help, stdout);
			return 0;
		case 'V':
			puts("cnt-window " CNT_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return CNT_EXIT_TROUBLE;
		}
	}
	if (defs_path == NULL) {
		fputs("cnt-window: -d definitions is required\n", stderr);
		fputs(usage, stderr);
		return CNT_EXIT_TROUBLE;
	}
	if (codec_name && cnt_cli_old_codec(codec_name, &codec, &C.err) != 0)
		die("%s", C.err.msg);
	defs = cnt_defs_load(defs_path, &C.err);
	if (defs == NULL)
		die("%s", C.err.msg);
	ntenants = cnt_defs_ntenants(defs);
	ncounters = cnt_defs_ncounters(defs);
	tzc = cnt_tz_cache_new();
	cur = calloc(ntenants + 1, sizeof(*cur));
	cur_ok = calloc(ntenants + 1, 1);
	cs = calloc(ncounters + 1, sizeof(*cs));
	if (tzc == NULL || cur == NULL || cur_ok == NULL || cs == NULL)
		die("out of memory");

	if (cnt_cli_old_avro_out(&C.out, out_path, codec_name, &codec, &C.err) != 0)
		die("%s", C.err.msg);
	schema = cnt_windowed_schema_json(&C.err);
	if (schema == NULL)
		die("%s", C.err.msg);
	w = cnt_writer_new(C.out.fd, out_path ? out_path : "standard output", schema, codec, level, 0, &C.err);
	free(schema);
	if (w == NULL)
		die("%s", C.err.msg);
	if (rej_path && cnt_out_open(&C.rej_out, rej_path, &C.err) != 0)
		die("%s", C.err.msg);

	nin = optind < argc ? argc - optind : 1;
	for (int i = 0; i < nin; i++) {
		const char *name = optind < argc ? argv[optind + i] : "-";
		int fd = cnt_cli_old_open_in(name, &C.err);
		cnt_event_in *ein;
		cnt_windowed wv;
		int rc;

		if (fd < 0)
			die("%s", C.err.msg);
		ein = cnt_event_in_open(fd, name, NULL, &C.err);
		if (ein == NULL)
			die("%s", C.err.msg);
		while ((rc = cnt_event_in_next(ein, &wv.ev, &C.err)) != 0) {
			const cnt_event *e = &wv.ev;
			const cnt_tenant *t;
			const cnt_counter *ctr = NULL;
			const cnt_counter_version *cv = NULL;
			const uint8_t *raw;
			size_t rawn, ti, ci;
			ctr_stats *st;

			if (rc < 0)
				die("%s", C.err.msg);
			in++;
			t = cnt_defs_tenant(defs, e->tenant_id.p, e->tenant_id.n);
			if (t) {
				ctr = cnt_defs_counter(defs, e->tenant_id.p, e->tenant_id.n, e->counter_id.p, e->counter_id.n);
				cv = ctr ? cnt_counter_version_get(ctr, e->counter_version) : NULL;
			}
			if (cv == NULL) {
				char msg[400];

				rejected++;
				if (t)
					snprintf(msg, sizeof(msg), "counter '%.*s/%.*s' version %d is not declared in '%s'",
						(int)(e->tenant_id.n > 128 ? 128 : e->tenant_id.n), e->tenant_id.p,
						(int)(e->counter_id.n > 128 ? 128 : e->counter_id.n), e->counter_id.p,
						e->counter_version, defs_path);
				else
					snprintf(msg, sizeof(msg), "tenant '%.*s' is not declared in '%s'",
						(int)(e->tenant_id.n > 128 ? 128 : e->tenant_id.n), e->tenant_id.p, defs_path);
				if (!rej_path)
					fprintf(stderr, "cnt-window: '%s' record %" PRIu64 ": rejected (%s): %s\n", name,
						cnt_event_in_record_no(ein), t ? "unknown_counter" : "unknown_tenant", msg);
				else
					oom(cnt_json_reject(&rej, name, "record", cnt_event_in_record_no(ein),
						t ? "unknown_counter" : "unknown_tenant", t ? "counter_version" : "tenant_id",
						msg, e->event_id.p, e->event_id.n));
				continue;
			}
			ti = (size_t)(t - cnt_defs_tenant_at(defs, 0));
			ci = (size_t)(ctr - cnt_defs_counter_at(defs, 0));
			if (!cur_ok[ti]) {
				const cnt_tz *tz = cnt_tz_cache_get(tzc, t->timezone, &C.err);

				if (tz == NULL)
					die("tenant '%s': %s", t->tenant_id, C.err.msg);
				cnt_tz_cursor_init(&cur[ti], tz);
				cur_ok[ti] = 1;
			}
			wv.bucket_start = cnt_tz_cursor_bucket_start(&cur[ti], e->event_time);
			wv.bucket_end = cnt_tz_cursor_bucket_end(&cur[ti], e->event_time);
			/* Late: ingested after the bucket closed for good. */
			wv.late = e->ingest_time > wv.bucket_end + cv->lateness_horizon_s * 1000;
			wv.shard = shards > 1 ? (int32_t)(XXH3_64bits(e->event_id.p, e->event_id.n) % (uint64_t)shards) : 0;
			st = &cs[ci];
			st->in++;
			if (wv.late) {
				st->late++;
				late++;
			}
			if (e->ingest_time - e->event_time > st->max_lag_ms)
				st->max_lag_ms = e->ingest_time - e->event_time;
			if (e->event_time > e->ingest_time) {
				st->ahead++;
				if (e->event_time - e->ingest_time > st->max_ahead_ms)
					st->max_ahead_ms = e->event_time - e->ingest_time;
			}
			oom(cnt_windowed_encode_head(&wv, cnt_writer_buf(w)));
			if (cnt_event_in_raw(ein, &raw, &rawn)) {
				oom(cnt_buf_append(cnt_writer_buf(w), raw, rawn));
			} else {
				oom(cnt_event_encode(e, cnt_writer_buf(w)));
			}
			if (cnt_writer_commit(w, &C.err) != 0)
				die("%s", C.err.msg);
			out++;
		}
		cnt_event_in_free(ein);
		cnt_cli_old_close_in(fd);
	}
	if (in != out + rejected)
		die("internal: records do not balance: in %" PRIu64 " != out %" PRIu64 " + rejected %" PRIu64,
			in, out, rejected);
	if (cnt_writer_finish(w, &C.err) != 0)
		die("%s", C.err.msg);
	if (rej_path && rej.len && cnt_write_all(C.rej_out.fd, rej.p, rej.len) != 0)
		die("cannot write '%s': %s", rej_path, strerror(errno));
	if (stats_path) {
		cnt_buf b = CNT_BUF_INIT;
		int first = 1;

		oom(cnt_buf_printf(&b, "{\"tool\":\"cnt-window\",\"in\":%" PRIu64 ",\"out\":%" PRIu64
			",\"rejected\":%" PRIu64 ",\"duplicate\":0,\"held\":0,\"late\":%" PRIu64
			",\"balanced\":true,\"late_ratio\":%.6f,\"shards\":%ld,\"counters\":[",
			in, out, rejected, late, out ? (double)late / (double)out : 0.0, shards));
		for (size_t k = 0; k < ncounters; k++) {
			const cnt_counter *ct = cnt_defs_counter_at(defs, k);

			if (cs[k].in == 0)
				continue;
			oom(cnt_buf_printf(&b, "%s{\"tenant_id\":\"%s\",\"counter_id\":\"%s\",\"in\":%" PRIu64
				",\"late\":%" PRIu64 ",\"late_ratio\":%.6f,\"max_lag_ms\":%" PRId64
				",\"clock_ahead\":%" PRIu64 ",\"max_clock_ahead_ms\":%" PRId64 "}", first ? "" : ",",
				ct->tenant_id, ct->counter_id, cs[k].in, cs[k].late,
				(double)cs[k].late / (double)cs[k].in, cs[k].max_lag_ms, cs[k].ahead, cs[k].max_ahead_ms));
			first = 0;
		}
		oom(cnt_buf_append(&b, "]}\n", 3));
		if (cnt_cli_old_stats(&C.stats_out, stats_path, &b, &C.err) != 0)
			die("%s", C.err.msg);
		cnt_buf_release(&b);
	}
	if (cnt_out_commit(&C.out, &C.err) != 0 || (rej_path && cnt_out_commit(&C.rej_out, &C.err) != 0) ||
	    (stats_path && cnt_out_commit(&C.stats_out, &C.err) != 0))
		die("%s", C.err.msg);
	if (verbose)
		fprintf(stderr, "cnt-window: in %" PRIu64 ", out %" PRIu64 ", late %" PRIu64 " (%.2f%%), rejected %" PRIu64 "\n",
			in, out, late, out ? 100.0 * (double)late / (double)out : 0.0, rejected);
	cnt_writer_free(w);
	cnt_tz_cache_free(tzc);
	cnt_defs_free(defs);
	cnt_buf_release(&rej);
	free(cur);
	free(cur_ok);
	free(cs);
	return 0;
}
