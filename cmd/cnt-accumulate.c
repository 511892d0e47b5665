/*
 * cnt-accumulate - turn windowed events into bucket aggregates, and merge
 * bucket files, in canonical order, within a memory limit.
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

#include "count/accum.h"
#include "cli/legacy.h"
#include "base/outfile.h"

static const char usage[] =
	"usage: cnt-accumulate [-o file] [-m size] [-T dir] [-c codec] [--level n]\n"
	"                      [--stats file] [-v] [file ...]\n";

static const char help[] =
	"Group windowed events (from cnt-window) by (tenant, counter, counter version,\n"
	"member, bucket, shard) into bucket aggregates: exact sum, count, min, max,\n"
	"latest event time, late count and sum, HyperLogLog++ sketch of items.\n"
	"Bucket files given as input are merged in: the output is one sorted record\n"
	"per key, the same bytes however the input was ordered or split.\n"
	"\n"
	"  -o, --output FILE       bucket file (default standard output)\n"
	"  -m, --memory SIZE       spill sorted runs to disk above SIZE (default: a\n"
	"                          quarter of physical memory; suffixes K, M, G)\n"
	"  -T, --tmpdir DIR        where runs are spilled (default $TMPDIR or /tmp)\n"
	"  -c, --codec NAME        output codec (default zstandard for a file, null\n"
	"                          for a pipe)\n"
	"      --level N           compression level\n"
	"      --stats FILE        counts as one JSON object\n"
	"  -v, --verbose           one summary line on standard error\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-accumulate(1) and cnt-bucket(5).\n";

static struct {
	cnt_out out, stats_out;
	cnt_err err;
} C;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("cnt-accumulate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cnt_out_abort(&C.out);
	cnt_out_abort(&C.stats_out);
	/* _exit: a fatal error ends the process here; memory is the
	 * kernel's to reclaim (the sanitizers' leak check is for the
	 * paths that finish, which free everything). */
	_exit(CNT_EXIT_TROUBLE);
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	case 0: break;
	default: return -1;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	*out = (size_t)v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"memory", required_argument, NULL, 'm'},
		{"tmpdir", required_argument, NULL, 'T'},
		{"codec", required_argument, NULL, 'c'},
		{"level", required_argument, NULL, 'L'},
		{"stats", required_argument, NULL, 'S'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	const char *out_path = NULL, *stats_path = NULL, *codec_name = NULL;
	const char *tmpdir = getenv("TMPDIR");
	size_t memory = 0;
	int level = -1, verbose = 0, c, nin;
	cnt_codec_id codec = CNT_CODEC_NULL;
	cnt_accum *acc;
	cnt_writer *w;
	const cnt_accum_stats *st;

	while ((c = getopt_long(argc, argv, "o:m:T:c:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out_path = optarg; break;
		case 'm':
			if (parse_size(optarg, &memory) != 0 || memory < (1u << 20))
				die("--memory: '%s' is not a size of at least 1M (e.g. 512M, 2G)", optarg);
			break;
		case 'T': tmpdir = optarg; break;
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
			puts("cnt-accumulate " CNT_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return CNT_EXIT_TROUBLE;
		}
	}
	if (tmpdir == NULL || *tmpdir == 0)
		tmpdir = "/tmp";
	if (memory == 0) {
		/* Like sort(1), use a good part of the machine by default: a
		 * quarter of physical memory, at least 256 MiB. */
		long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

		memory = pages > 0 && psize > 0 ? (size_t)pages * (size_t)psize / 4 : (size_t)1 << 30;
		if (memory < ((size_t)256 << 20))
			memory = (size_t)256 << 20;
	}
	if (codec_name && cnt_cli_old_codec(codec_name, &codec, &C.err) != 0)
		die("%s", C.err.msg);
	acc = cnt_accum_new(memory, tmpdir, &C.err);
	if (acc == NULL)
		die("%s", C.err.msg);
	/* Opened before reading, so a bad output fails fast; written only
	 * once everything is read. */
	if (cnt_cli_old_avro_out(&C.out, out_path, codec_name, &codec, &C.err) != 0)
		die("%s", C.err.msg);

	nin = optind < argc ? argc - optind : 1;
	for (int i = 0; i < nin; i++) {
		const char *name = optind < argc ? argv[optind + i] : "-";
		int fd = cnt_cli_old_open_in(name, &C.err);
		cnt_records *rin;
		const char *kind;
		int rc;

		if (fd < 0)
			die("%s", C.err.msg);
		rin = cnt_records_open(fd, name, NULL, NULL, &C.err);
		if (rin == NULL)
			die("%s", C.err.msg);
		kind = cnt_records_schema(rin)->fullname ? cnt_records_schema(rin)->fullname : "";
		if (strcmp(kind, "cnt.BucketAggregate") == 0) {
			cnt_bucket_in bin;
			cnt_bucket b;

			if (cnt_bucket_in_adopt(&bin, rin, NULL, &C.err) != 0)
				die("%s", C.err.msg);
			while ((rc = cnt_bucket_in_next(&bin, &b, &C.err)) != 0)
				if (rc < 0 || cnt_accum_add_bucket(acc, &b, &C.err) != 0)
					die("%s", C.err.msg);
			cnt_bucket_in_release(&bin);
		} else if (strcmp(kind, "cnt.WindowedEvent") == 0) {
			cnt_windowed_in *win = cnt_windowed_in_adopt(rin, NULL, &C.err);
			static cnt_windowed batch[CNT_ACCUM_BATCH];
			size_t nb = 0;

			if (win == NULL)
				die("%s", C.err.msg);
			/* Batches never span blocks: their strings point into one. */
			while ((rc = cnt_windowed_in_next(win, &batch[nb], &C.err)) != 0) {
				if (rc < 0)
					die("%s", C.err.msg);
				if (++nb == CNT_ACCUM_BATCH || cnt_windowed_in_left(win) == 0) {
					if (cnt_accum_add_events(acc, batch, nb, &C.err) != 0)
						die("%s", C.err.msg);
					nb = 0;
				}
			}
			cnt_windowed_in_free(win);
		} else {
			die("'%s' holds %s records; cnt-accumulate reads cnt.WindowedEvent (from cnt-window) or cnt.BucketAggregate (bucket files)",
				name, *kind ? kind : "unnamed");
		}
		cnt_cli_old_close_in(fd);
	}

	w = cnt_bucket_writer_new(C.out.fd, out_path ? out_path : "standard output", codec, level, &C.err);
	if (w == NULL || cnt_accum_finish(acc, w, &C.err) != 0 || cnt_writer_finish(w, &C.err) != 0)
		die("%s", C.err.msg);
	st = cnt_accum_get_stats(acc);
	/* Every event read, directly or inside a bucket record read, must
	 * be counted in exactly one output record (on time or late). */
	if (st->events_out != st->events + st->events_in_buckets)
		die("internal: events do not balance: %" PRIu64 " in (%" PRIu64 " events + %" PRIu64
			" in bucket records), %" PRIu64 " in the output", st->events + st->events_in_buckets,
			st->events, st->events_in_buckets, st->events_out);
	if (stats_path) {
		cnt_buf b = CNT_BUF_INIT;

		if (cnt_buf_printf(&b, "{\"tool\":\"cnt-accumulate\",\"in\":%" PRIu64 ",\"out\":%" PRIu64
			",\"rejected\":0,\"duplicate\":0,\"held\":0,\"balanced\":true,\"events\":%" PRIu64
			",\"late_events\":%" PRIu64 ",\"buckets_in\":%" PRIu64 ",\"events_in_buckets\":%" PRIu64
			",\"events_out\":%" PRIu64 ",\"spill_runs\":%" PRIu64 ",\"sum_overflows\":%" PRIu64
			",\"peak_memory_estimate\":%zu,\"memory_limit\":%zu}\n",
			st->events + st->buckets_in, st->groups_out, st->events, st->late_events, st->buckets_in,
			st->events_in_buckets, st->events_out, st->runs, st->sum_overflows, st->peak_bytes, memory) != 0 ||
		    cnt_cli_old_stats(&C.stats_out, stats_path, &b, &C.err) != 0)
			die("%s", C.err.msg[0] ? C.err.msg : "out of memory");
		cnt_buf_release(&b);
	}
	if (cnt_out_commit(&C.out, &C.err) != 0 || (stats_path && cnt_out_commit(&C.stats_out, &C.err) != 0))
		die("%s", C.err.msg);
	if (st->sum_overflows)
		fprintf(stderr, "cnt-accumulate: warning: %" PRIu64 " bucket sums do not fit 64 bits; they are kept exact as 128-bit (sum_high, sum) with sum_overflow set\n",
			st->sum_overflows);
	if (verbose)
		fprintf(stderr, "cnt-accumulate: %" PRIu64 " events (%" PRIu64 " late) and %" PRIu64
			" bucket records in, %" PRIu64 " bucket records out, %" PRIu64 " spill runs\n",
			st->events, st->late_events, st->buckets_in, st->groups_out, st->runs);
	cnt_writer_free(w);
	cnt_accum_free(acc);
	return 0;
}
