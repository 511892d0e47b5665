/*
 * cnt-diff - compare two bucket files record by record.
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

#include "model/bucket.h"
#include "cli/legacy.h"
#include "avro/json.h"
#include "base/outfile.h"

static const char usage[] =
	"usage: cnt-diff [-q] [-n max] [--tolerance r] [--stats file] [-v] left right\n";

static const char help[] =
	"Compare two bucket files (sorted, so in one streaming pass) and list each\n"
	"difference as a JSON line {\"key\":..,\"left\":..,\"right\":..}; a record present\n"
	"on one side only has null on the other.  Exit 0 when they are equal, 1 when\n"
	"they differ, 2 on trouble.\n"
	"\n"
	"  -q, --quiet             print nothing; the exit status says it\n"
	"  -n, --max N             print at most N differences (all are counted)\n"
	"      --tolerance R       sketches are equal when their estimates differ by\n"
	"                          at most the fraction R (e.g. 0.02); default 0: bytes\n"
	"      --stats FILE        counts as one JSON object\n"
	"  -v, --verbose           one summary line on standard error\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"'-' reads one side from standard input.  See cnt-diff(1).\n";

static cnt_err err;
static cnt_buf out = CNT_BUF_INIT;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("cnt-diff: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	/* _exit: a fatal error ends the process here; memory is the
	 * kernel's to reclaim (the sanitizers' leak check is for the
	 * paths that finish, which free everything). */
	_exit(CNT_EXIT_TROUBLE);
}

static void flush_out(int force)
{
	if (out.len == 0 || (!force && out.len < (1u << 16)))
		return;
	if (cnt_write_all(STDOUT_FILENO, out.p, out.len) != 0) {
		if (errno == EPIPE)
			_exit(CNT_EXIT_DIFFER);
		die("cannot write standard output: %s", strerror(errno));
	}
	out.len = 0;
}

static int open_side(const char *path)
{
	int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("cannot open '%s': %s", path, strerror(errno));
	return fd;
}

static void key_json(const cnt_bucket *b)
{
	int rc = 0;

	rc |= cnt_buf_append(&out, "{\"key\":{\"tenant_id\":", 20);
	rc |= cnt_json_string(&out, (const uint8_t *)b->tenant_id.p, b->tenant_id.n, 0);
	rc |= cnt_buf_append(&out, ",\"counter_id\":", 14);
	rc |= cnt_json_string(&out, (const uint8_t *)b->counter_id.p, b->counter_id.n, 0);
	rc |= cnt_buf_printf(&out, ",\"counter_version\":%d,\"member_ref\":", (int)b->counter_version);
	rc |= cnt_json_string(&out, (const uint8_t *)b->member_ref.p, b->member_ref.n, 0);
	rc |= cnt_buf_printf(&out, ",\"bucket_start\":%lld,\"shard\":%d}", (long long)b->bucket_start, (int)b->shard);
	if (rc)
		die("out of memory");
}

static void side_json(const char *name, const cnt_bucket *b)
{
	if (cnt_buf_printf(&out, ",\"%s\":", name) != 0 ||
	    (b ? cnt_bucket_to_json(b, &out) : cnt_buf_append(&out, "null", 4)) != 0)
		die("out of memory");
}

/* The previous key of one side, copied: a merge join needs both sides
 * sorted, and an unsorted side would hide differences. */
typedef struct prevkey {
	cnt_buf strings;
	cnt_bucket b;
	int have;
} prevkey;

static int advance(cnt_bucket_in *in, cnt_bucket *b, prevkey *pk, const char *name, uint64_t done)
{
	int rc;

	if (pk->have || done > 0) {
		pk->strings.len = 0;
		if (cnt_buf_append(&pk->strings, b->tenant_id.p, b->tenant_id.n) != 0 ||
		    cnt_buf_append(&pk->strings, b->counter_id.p, b->counter_id.n) != 0 ||
		    cnt_buf_append(&pk->strings, b->member_ref.p, b->member_ref.n) != 0)
			die("out of memory");
		pk->b = *b;
		pk->b.tenant_id.p = (const char *)pk->strings.p;
		pk->b.counter_id.p = (const char *)pk->strings.p + b->tenant_id.n;
		pk->b.member_ref.p = (const char *)pk->strings.p + b->tenant_id.n + b->counter_id.n;
		pk->have = 1;
	}
	rc = cnt_bucket_in_next(in, b, &err);
	if (rc > 0 && pk->have && cnt_bucket_key_cmp(&pk->b, b) >= 0)
		die("'%s' record %llu: keys are not in ascending order, so this is not a bucket file as cnt-accumulate writes it (re-sort it with 'cnt-accumulate %s')",
			name, (unsigned long long)done + 1, name);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"quiet", no_argument, NULL, 'q'},
		{"max", required_argument, NULL, 'n'},
		{"tolerance", required_argument, NULL, 't'},
		{"stats", required_argument, NULL, 'S'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	int quiet = 0, verbose = 0, c, rl, rr;
	long long max = -1;
	double tolerance = 0;
	const char *stats_path = NULL;
	cnt_bucket_in L, R;
	cnt_bucket l, r;
	uint64_t nl = 0, nr = 0, only_l = 0, only_r = 0, changed = 0, shown = 0;
	cnt_out stats_out;
	prevkey kl, kr;

	memset(&kl, 0, sizeof(kl));
	memset(&kr, 0, sizeof(kr));
	while ((c = getopt_long(argc, argv, "qn:vh", longopts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'q': quiet = 1; break;
		case 'n':
			errno = 0;
			max = strtoll(optarg, &end, 10);
			if (errno || *end || end == optarg || max < 0)
				die("--max: '%s' is not a non-negative number", optarg);
			break;
		case 't':
			errno = 0;
			tolerance = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(tolerance >= 0 && tolerance < 1))
				die("--tolerance: '%s' is not a fraction from 0 to 1 (e.g. 0.02)", optarg);
			break;
		case 'S': stats_path = optarg; break;
		case 'v': verbose = 1; break;
		case 'h':
			fputs(usage, stdout);
			fputs(help, stdout);
			return 0;
		case 'V':
			puts("cnt-diff " CNT_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return CNT_EXIT_TROUBLE;
		}
	}
	if (argc - optind != 2) {
		fputs("cnt-diff: two bucket files are needed\n", stderr);
		fputs(usage, stderr);
		return CNT_EXIT_TROUBLE;
	}
	if (strcmp(argv[optind], "-") == 0 && strcmp(argv[optind + 1], "-") == 0)
		die("only one side can be standard input");
	if (cnt_bucket_in_open(&L, open_side(argv[optind]), argv[optind], NULL, &err) != 0 ||
	    cnt_bucket_in_open(&R, open_side(argv[optind + 1]), argv[optind + 1], NULL, &err) != 0)
		die("%s", err.msg);
	rl = advance(&L, &l, &kl, argv[optind], 0);
	rr = advance(&R, &r, &kr, argv[optind + 1], 0);
	for (;;) {
		int d;
		const cnt_bucket *pl = NULL, *pr = NULL;

		if (rl < 0 || rr < 0)
			die("%s", err.msg);
		if (rl == 0 && rr == 0)
			break;
		d = rl == 0 ? 1 : rr == 0 ? -1 : cnt_bucket_key_cmp(&l, &r);
		if (d < 0) {
			pl = &l;
			only_l++;
		} else if (d > 0) {
			pr = &r;
			only_r++;
		} else if (cnt_bucket_values_differ(&l, &r, tolerance)) {
			pl = &l;
			pr = &r;
			changed++;
		}
		if ((pl || pr) && !quiet && (max < 0 || shown < (uint64_t)max)) {
			key_json(pl ? pl : pr);
			side_json("left", pl);
			side_json("right", pr);
			if (cnt_buf_append(&out, "}\n", 2) != 0)
				die("out of memory");
			shown++;
			flush_out(0);
		}
		if (d <= 0) {
			nl++;
			rl = advance(&L, &l, &kl, argv[optind], nl);
		}
		if (d >= 0) {
			nr++;
			rr = advance(&R, &r, &kr, argv[optind + 1], nr);
		}
	}
	flush_out(1);
	if (stats_path) {
		cnt_buf b = CNT_BUF_INIT;

		if (cnt_buf_printf(&b, "{\"tool\":\"cnt-diff\",\"left\":%" PRIu64 ",\"right\":%" PRIu64
			",\"only_left\":%" PRIu64 ",\"only_right\":%" PRIu64 ",\"changed\":%" PRIu64 ",\"equal\":%s}\n",
			nl, nr, only_l, only_r, changed, only_l + only_r + changed ? "false" : "true") != 0)
			die("out of memory");
		if (cnt_cli_old_stats(&stats_out, stats_path, &b, &err) != 0 || cnt_out_commit(&stats_out, &err) != 0)
			die("%s", err.msg);
		cnt_buf_release(&b);
	}
	if (verbose)
		fprintf(stderr, "cnt-diff: %" PRIu64 " left, %" PRIu64 " right: %" PRIu64 " only left, %" PRIu64
			" only right, %" PRIu64 " changed\n", nl, nr, only_l, only_r, changed);
	cnt_bucket_in_release(&L);
	cnt_bucket_in_release(&R);
	cnt_buf_release(&out);
	cnt_buf_release(&kl.strings);
	cnt_buf_release(&kr.strings);
	return only_l + only_r + changed ? CNT_EXIT_DIFFER : CNT_EXIT_OK;
}
