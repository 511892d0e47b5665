/*
 * cnt-dedup - drop events whose idempotency key was already seen within
 * the counter's dedup horizon, across batches, with persistent state.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "count/dedup.h"
#include "model/defs.h"
#include "model/event.h"
#include "avro/json.h"
#include "cli/legacy.h"
#include "base/outfile.h"

static const char usage[] =
	"usage: cnt-dedup -d definitions [-s state] [-o file] [-D file] [-r file]\n"
	"                 [-c codec] [--level n] [--stats file] [-v] [file ...]\n";

static const char help[] =
	"Drop events whose (tenant, counter, dedup key) was already seen within the\n"
	"counter version's dedup horizon; keep the first occurrence in log order.\n"
	"\n"
	"  -d, --definitions FILE  counters and their dedup horizons; required\n"
	"  -s, --state FILE        remembered keys: read if it exists, rewritten\n"
	"                          (atomically) with this run's keys; without it\n"
	"                          only duplicates within this run are found\n"
	"  -o, --output FILE       first occurrences (default standard output)\n"
	"  -D, --duplicates FILE   the dropped duplicates, as events\n"
	"  -r, --rejects FILE      events naming an undeclared counter version, as JSON\n"
	"                          lines (default: one line each on standard error)\n"
	"  -c, --codec NAME        output codec (default zstandard for a file, null\n"
	"                          for a pipe)\n"
	"      --level N           compression level\n"
	"      --stats FILE        counts and hit rates as one JSON object\n"
	"  -v, --verbose           one summary line on standard error\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-dedup(1).\n";

typedef struct ctr_stats {
	uint64_t in, dup;
} ctr_stats;

static struct {
	cnt_out out, dup_out, rej_out, state_out, stats_out;
	cnt_writer *w, *dw;
	cnt_err err;
} C;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("cnt-dedup: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cnt_out_abort(&C.out);
	cnt_out_abort(&C.dup_out);
	cnt_out_abort(&C.rej_out);
	cnt_out_abort(&C.state_out);
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

/* A batch: events are copied as Avro bytes, keyed and prefetched, then
 * judged in order, so the table's cache misses overlap. */
#define BATCH 16

typedef struct pending {
	size_t off, len;         /* bytes in the batch buffer */
	cnt_dkey key;
	uint64_t t, h;
	size_t ctr;              /* counter index for stats */
} pending;

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"definitions", required_argument, NULL, 'd'},
		{"state", required_argument, NULL, 's'},
		{"output", required_argument, NULL, 'o'},
		{"duplicates", required_argument, NULL, 'D'},
		{"rejects", required_argument, NULL, 'r'},
		{"codec", required_argument, NULL, 'c'},
		{"level", required_argument, NULL, 'L'},
		{"stats", required_argument, NULL, 'S'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	const char *defs_path = NULL, *state_path = NULL, *out_path = NULL, *dup_path = NULL;
	const char *rej_path = NULL, *stats_path = NULL, *codec_name = NULL;
	int level = -1, verbose = 0, c, nin;
	cnt_codec_id codec = CNT_CODEC_NULL;
	cnt_defs *defs;
	cnt_dedup dd;
	size_t ncounters, expected = 0, kept = 0, loaded;
	ctr_stats *cs;
	pending batch[BATCH];
	cnt_buf bb = CNT_BUF_INIT, rej = CNT_BUF_INIT, enc = CNT_BUF_INIT;
	int nb = 0;
	uint64_t in = 0, out = 0, dups = 0, rejected = 0;

	while ((c = getopt_long(argc, argv, "d:s:o:D:r:c:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': defs_path = optarg; break;
		case 's': state_path = optarg; break;
		case 'o': out_path = optarg; break;
		case 'D': dup_path = optarg; break;
		case 'r': rej_path = optarg; break;
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
			puts("cnt-dedup " CNT_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return CNT_EXIT_TROUBLE;
		}
	}
	if (defs_path == NULL) {
		fputs("cnt-dedup: -d definitions is required\n", stderr);
		fputs(usage, stderr);
		return CNT_EXIT_TROUBLE;
	}
	if (codec_name && cnt_cli_old_codec(codec_name, &codec, &C.err) != 0)
		die("%s", C.err.msg);
	defs = cnt_defs_load(defs_path, &C.err);
	if (defs == NULL)
		die("%s", C.err.msg);
	ncounters = cnt_defs_ncounters(defs);
	cs = calloc(ncounters + 1, sizeof(*cs));
	if (cs == NULL)
		die("out of memory");
	for (int i = optind; i < argc; i++) {
		struct stat sb;

		if (stat(argv[i], &sb) == 0 && S_ISREG(sb.st_mode))
			expected += (size_t)sb.st_size / 48;   /* zstd events: ~50 bytes each */
	}
	if (state_path) {
		if (cnt_dedup_load(&dd, state_path, expected, 1, &C.err) != 0)
			die("%s", C.err.msg);
	} else if (cnt_dedup_init(&dd, expected) != 0) {
		die("out of memory");
	}
	loaded = dd.count;

	if (cnt_cli_old_avro_out(&C.out, out_path, codec_name, &codec, &C.err) != 0)
		die("%s", C.err.msg);
	C.w = cnt_event_writer_new(C.out.fd, out_path ? out_path : "standard output", codec, level, &C.err);
	if (C.w == NULL)
		die("%s", C.err.msg);
	if (dup_path) {
		if (cnt_out_open(&C.dup_out, dup_path, &C.err) != 0)
			die("%s", C.err.msg);
		C.dw = cnt_event_writer_new(C.dup_out.fd, dup_path, codec_name ? codec : CNT_CODEC_ZSTD, level, &C.err);
		if (C.dw == NULL)
			die("%s", C.err.msg);
	}
	if (rej_path && cnt_out_open(&C.rej_out, rej_path, &C.err) != 0)
		die("%s", C.err.msg);

	nin = optind < argc ? argc - optind : 1;
	for (int i = 0; i < nin; i++) {
		const char *name = optind < argc ? argv[optind + i] : "-";
		int fd = cnt_cli_old_open_in(name, &C.err);
		cnt_event_in *ein;
		cnt_event ev;
		int rc;

		if (fd < 0)
			die("%s", C.err.msg);
		ein = cnt_event_in_open(fd, name, NULL, &C.err);
		if (ein == NULL)
			die("%s", C.err.msg);
		for (;;) {
			const cnt_counter *ctr;
			const cnt_counter_version *cv;
			const uint8_t *raw;
			size_t rawn;
			pending *pe;

			rc = cnt_event_in_next(ein, &ev, &C.err);
			if (rc < 0)
				die("%s", C.err.msg);
			if (rc == 0 || nb == BATCH) {
				/* Judge the batch, in log order. */
				for (int k = 0; k < nb; k++) {
					int seen;

					pe = &batch[k];
					seen = cnt_dedup_check(&dd, pe->key, pe->t, pe->h);
					if (seen < 0)
						die("out of memory: the dedup table cannot grow");
					if (seen == 0) {
						oom(cnt_buf_append(cnt_writer_buf(C.w), bb.p + pe->off, pe->len));
						if (cnt_writer_commit(C.w, &C.err) != 0)
							die("%s", C.err.msg);
						out++;
					} else {
						dups++;
						cs[pe->ctr].dup++;
						if (C.dw) {
							oom(cnt_buf_append(cnt_writer_buf(C.dw), bb.p + pe->off, pe->len));
							if (cnt_writer_commit(C.dw, &C.err) != 0)
								die("%s", C.err.msg);
						}
					}
				}
				nb = 0;
				bb.len = 0;
			}
			if (rc == 0)
				break;
			in++;
			ctr = cnt_defs_counter(defs, ev.tenant_id.p, ev.tenant_id.n, ev.counter_id.p, ev.counter_id.n);
			cv = ctr ? cnt_counter_version_get(ctr, ev.counter_version) : NULL;
			if (cv == NULL) {
				char msg[400];

				rejected++;
				snprintf(msg, sizeof(msg), "counter '%.*s/%.*s' version %d is not declared in '%s'",
					(int)(ev.tenant_id.n > 128 ? 128 : ev.tenant_id.n), ev.tenant_id.p,
					(int)(ev.counter_id.n > 128 ? 128 : ev.counter_id.n), ev.counter_id.p,
					ev.counter_version, defs_path);
				if (!rej_path) {
					fprintf(stderr, "cnt-dedup: '%s' record %" PRIu64 ": rejected (unknown_counter): %s\n",
						name, cnt_event_in_record_no(ein), msg);
					continue;
				}
				oom(cnt_json_reject(&rej, name, "record", cnt_event_in_record_no(ein), "unknown_counter",
					"counter_version", msg, ev.event_id.p, ev.event_id.n));
				continue;
			}
			pe = &batch[nb++];
			pe->off = bb.len;
			if (cnt_event_in_raw(ein, &raw, &rawn)) {
				oom(cnt_buf_append(&bb, raw, rawn));
			} else {
				enc.len = 0;
				oom(cnt_event_encode(&ev, &enc));
				oom(cnt_buf_append(&bb, enc.p, enc.len));
			}
			pe->len = bb.len - pe->off;
			pe->t = ev.ingest_time >= 0 ? (uint64_t)(ev.ingest_time / 1000) : 0;
			pe->h = (uint64_t)cv->dedup_horizon_s;
			pe->ctr = (size_t)(ctr - cnt_defs_counter_at(defs, 0));
			cs[pe->ctr].in++;
			if (cv->dedup_key == CNT_DEDUP_ITEM_MEMBER && ev.item.p != NULL) {
				/* The view-count key: one per (viewer, video). */
				const void *parts[4] = {ev.tenant_id.p, ev.counter_id.p, ev.member_ref.p, ev.item.p};
				size_t lens[4] = {ev.tenant_id.n, ev.counter_id.n, ev.member_ref.n, ev.item.n};

				pe->key = cnt_dedup_key(4, parts, lens);
			} else {
				const void *parts[3] = {ev.tenant_id.p, ev.counter_id.p, ev.idempotency_key.p};
				size_t lens[3] = {ev.tenant_id.n, ev.counter_id.n, ev.idempotency_key.n};

				pe->key = cnt_dedup_key(3, parts, lens);
			}
			cnt_dedup_prefetch(&dd, pe->key);
		}
		cnt_event_in_free(ein);
		cnt_cli_old_close_in(fd);
	}
	if (in != out + dups + rejected)
		die("internal: records do not balance: in %" PRIu64 " != out %" PRIu64 " + duplicate %" PRIu64
			" + rejected %" PRIu64, in, out, dups, rejected);
	if (cnt_writer_finish(C.w, &C.err) != 0 || (C.dw && cnt_writer_finish(C.dw, &C.err) != 0))
		die("%s", C.err.msg);
	if (rej_path && rej.len && cnt_write_all(C.rej_out.fd, rej.p, rej.len) != 0)
		die("cannot write '%s': %s", rej_path, strerror(errno));
	if (state_path) {
		if (cnt_out_open(&C.state_out, state_path, &C.err) != 0 ||
		    cnt_dedup_save(&dd, C.state_out.fd, state_path, &kept, &C.err) != 0)
			die("%s", C.err.msg);
	}
	if (stats_path) {
		cnt_buf b = CNT_BUF_INIT;
		int first = 1;

		oom(cnt_buf_printf(&b, "{\"tool\":\"cnt-dedup\",\"in\":%" PRIu64 ",\"out\":%" PRIu64
			",\"rejected\":%" PRIu64 ",\"duplicate\":%" PRIu64 ",\"held\":0,\"balanced\":true,"
			"\"dedup_hit_rate\":%.6f,\"state_keys_loaded\":%zu,\"state_keys_saved\":%zu,\"counters\":[",
			in, out, rejected, dups, in - rejected ? (double)dups / (double)(in - rejected) : 0.0, loaded, kept));
		for (size_t k = 0; k < ncounters; k++) {
			const cnt_counter *ct = cnt_defs_counter_at(defs, k);

			if (cs[k].in == 0)
				continue;
			oom(cnt_buf_printf(&b, "%s{\"tenant_id\":\"%s\",\"counter_id\":\"%s\",\"in\":%" PRIu64
				",\"duplicate\":%" PRIu64 ",\"dedup_hit_rate\":%.6f}", first ? "" : ",",
				ct->tenant_id, ct->counter_id, cs[k].in, cs[k].dup, (double)cs[k].dup / (double)cs[k].in));
			first = 0;
		}
		oom(cnt_buf_append(&b, "]}\n", 3));
		if (cnt_cli_old_stats(&C.stats_out, stats_path, &b, &C.err) != 0)
			die("%s", C.err.msg);
		cnt_buf_release(&b);
	}
	/* The events first, then the state: a failure in between leaves the
	 * old state, and rerunning the segment gives the same output. */
	if (cnt_out_commit(&C.out, &C.err) != 0 || (dup_path && cnt_out_commit(&C.dup_out, &C.err) != 0) ||
	    (rej_path && cnt_out_commit(&C.rej_out, &C.err) != 0) ||
	    (state_path && cnt_out_commit(&C.state_out, &C.err) != 0) ||
	    (stats_path && cnt_out_commit(&C.stats_out, &C.err) != 0))
		die("%s", C.err.msg);
	if (verbose)
		fprintf(stderr, "cnt-dedup: in %" PRIu64 ", out %" PRIu64 ", duplicate %" PRIu64 ", rejected %" PRIu64
			" (dedup hit rate %.2f%%); state %zu keys loaded, %zu saved\n", in, out, dups, rejected,
			in - rejected ? 100.0 * (double)dups / (double)(in - rejected) : 0.0, loaded, kept);
	cnt_writer_free(C.w);
	cnt_writer_free(C.dw);
	cnt_dedup_release(&dd);
	cnt_defs_free(defs);
	cnt_buf_release(&bb);
	cnt_buf_release(&rej);
	cnt_buf_release(&enc);
	free(cs);
	return 0;
}
