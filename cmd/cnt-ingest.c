/*
 * cnt-ingest - admit raw counting events into the log.
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

#include "ingest/admit.h"
#include "avro/json.h"
#include "cli/legacy.h"
#include "base/outfile.h"
#include "avro/records.h"
#include "time/timefmt.h"

extern const char cnt_schema_raw_event[];

static const char usage[] =
	"usage: cnt-ingest -d definitions [-o file] [-r file] [-D file] [-f json|csv|avro]\n"
	"                  [--now time] [--max-past dur] [--max-future dur] [-c codec]\n"
	"                  [--level n] [--stats file] [-v] [file ...]\n";

static const char help[] =
	"Admit raw counting events (JSON lines, CSV or Avro) into the log as\n"
	"cnt.CountingEvent Avro records.  Every input record is accepted, rejected\n"
	"(with a typed reason) or counted as a duplicate.\n"
	"\n"
	"  -d, --definitions FILE  tenants and counters (cnt-definitions(5)); required\n"
	"  -o, --output FILE       accepted events (default standard output)\n"
	"  -r, --rejects FILE      rejected records as JSON lines (default: one line\n"
	"                          each on standard error)\n"
	"  -D, --duplicates FILE   duplicates as JSON lines (default: counted only)\n"
	"  -f, --format FMT        json, csv or avro (default: from the file name, else\n"
	"                          from the first bytes)\n"
	"      --now TIME          ingest time for every event (RFC 3339 or epoch ms)\n"
	"                          instead of the clock, for reproducible runs\n"
	"      --max-past DUR      oldest event_time accepted, before the ingest time (7d)\n"
	"      --max-future DUR    latest event_time accepted, after the ingest time (60s)\n"
	"  -c, --codec NAME        null, deflate, snappy, xz, zstandard or bzip2 (default\n"
	"                          zstandard for a file, null for a pipe)\n"
	"      --level N           compression level (codec's default)\n"
	"      --stats FILE        write counts as one JSON object ('-': standard output\n"
	"                          is not allowed; use a file)\n"
	"  -v, --verbose           one summary line on standard error\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"See cnt-ingest(1), cnt-event(5) and cnt-definitions(5).\n";

enum fmt { F_AUTO, F_JSON, F_CSV, F_AVRO };
static const char *const fmt_names[] = {"auto", "json", "csv", "avro"};

typedef struct input_info {
	const char *name;
	enum fmt fmt;
	uint64_t records;
} input_info;

typedef struct ctx {
	cnt_admit *adm;
	cnt_writer *w;
	cnt_out out, rej_out, dup_out, stats_out;
	int rej_file, dup_file;
	cnt_buf rej, dup;
	input_info *inputs;
	size_t ninputs, cur;
	const char *poskind;
	cnt_event ev;
	cnt_err err;
	cnt_avro_schema *raw_schema;
	uint64_t blank_lines;
} ctx;

static ctx C;

static void cleanup_outputs(void)
{
	cnt_out_abort(&C.out);
	cnt_out_abort(&C.rej_out);
	cnt_out_abort(&C.dup_out);
	cnt_out_abort(&C.stats_out);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("cnt-ingest: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cleanup_outputs();
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

static void flush_buf(cnt_buf *b, int fd, const char *what, int force)
{
	if (b->len == 0 || (!force && b->len < (1u << 16)))
		return;
	if (cnt_write_all(fd, b->p, b->len) != 0)
		die("cannot write %s: %s", what, strerror(errno));
	b->len = 0;
}

static uint64_t make_tag(size_t input, uint64_t pos)
{
	return ((uint64_t)input << 44) | (pos & ((UINT64_C(1) << 44) - 1));
}

/* Writes one JSON line of the reject or duplicate stream. */
static void stream_line(cnt_buf *b, uint64_t pos, const char *reason, const cnt_verdict *v,
	const char *msg, const char *field, const char *raw, size_t rawn)
{
	const char *name = C.inputs[C.cur].name;

	oom(cnt_buf_append(b, "{\"input\":", 9));
	oom(cnt_json_string(b, (const uint8_t *)name, strlen(name), 0));
	oom(cnt_buf_printf(b, ",\"%s\":%" PRIu64 ",\"reason\":\"%s\"", C.poskind, pos, reason));
	if (field)
		oom(cnt_buf_printf(b, ",\"field\":\"%s\"", field));
	oom(cnt_buf_append(b, ",\"message\":", 11));
	oom(cnt_json_string(b, (const uint8_t *)msg, strlen(msg), 0));
	if (v && v->outcome == CNT_ADMIT_REJECT && v->reason == CNT_REJ_QUOTA)
		oom(cnt_buf_printf(b, ",\"retry_after_ms\":%" PRId64, v->retry_after_ms));
	if (v && v->outcome == CNT_ADMIT_DUPLICATE) {
		size_t in = (size_t)(v->first >> 44);
		const char *fname = in < C.ninputs ? C.inputs[in].name : "?";

		oom(cnt_buf_append(b, ",\"duplicate_of\":{\"input\":", 25));
		oom(cnt_json_string(b, (const uint8_t *)fname, strlen(fname), 0));
		oom(cnt_buf_printf(b, ",\"%s\":%" PRIu64 "}", in < C.ninputs && C.inputs[in].fmt == F_AVRO ? "record" : "line", (uint64_t)(v->first & ((UINT64_C(1) << 44) - 1))));
	}
	oom(cnt_buf_append(b, ",\"raw\":", 7));
	if (raw && C.inputs[C.cur].fmt == F_AVRO)
		oom(cnt_buf_append(b, raw, rawn));   /* already JSON */
	else
		oom(cnt_json_string(b, (const uint8_t *)(raw ? raw : ""), raw ? rawn : 0, 0));
	oom(cnt_buf_append(b, "}\n", 2));
}

static void report_reject(uint64_t pos, cnt_reject_reason r, const char *field, const char *msg,
	const cnt_verdict *v, const char *raw, size_t rawn)
{
	if (C.rej_file) {
		stream_line(&C.rej, pos, cnt_reject_name(r), v, msg, field, raw, rawn);
		flush_buf(&C.rej, C.rej_out.fd, "the reject stream", 0);
		return;
	}
	fprintf(stderr, "cnt-ingest: '%s' %s %" PRIu64 ": rejected (%s): %s\n",
		C.inputs[C.cur].name, C.poskind, pos, cnt_reject_name(r), msg);
}

/* Judges one parsed record (or a parse problem) and routes it.  fp is the
 * prefetched fingerprint, or NULL. */
static void handle_fp(uint64_t pos, const cnt_raw_event *raw, const cnt_raw_problem *pb,
	const char *text, size_t textn, const cnt_fp *fp)
{
	cnt_verdict v;
	int rc;

	C.inputs[C.cur].records++;
	if (pb && pb->status != CNT_RAW_OK) {
		cnt_reject_reason r = pb->status == CNT_RAW_MALFORMED ? CNT_REJ_MALFORMED : CNT_REJ_BAD_FIELD;

		cnt_admit_count_reject(C.adm, r);
		report_reject(pos, r, pb->field, pb->msg, NULL, text, textn);
		return;
	}
	rc = fp ? cnt_admit_event_fp(C.adm, raw, *fp, make_tag(C.cur, pos), &C.ev, &v) :
		cnt_admit_event(C.adm, raw, make_tag(C.cur, pos), &C.ev, &v);
	if (rc < 0)
		die("out of memory");
	if (rc == CNT_ADMIT_ACCEPT) {
		oom(cnt_event_encode(&C.ev, cnt_writer_buf(C.w)));
		if (cnt_writer_commit(C.w, &C.err) != 0)
			die("%s", C.err.msg);
	} else if (rc == CNT_ADMIT_REJECT) {
		report_reject(pos, v.reason, v.field, v.msg, &v, text, textn);
	} else if (C.dup_file) {
		stream_line(&C.dup, pos, "duplicate", &v, v.msg, NULL, text, textn);
		flush_buf(&C.dup, C.dup_out.fd, "the duplicate stream", 0);
	}
}

static void handle(uint64_t pos, const cnt_raw_event *raw, const cnt_raw_problem *pb,
	const char *text, size_t textn)
{
	handle_fp(pos, raw, pb, text, textn, NULL);
}

/* ---- JSON lines ----------------------------------------------------- */

/* Lines are parsed in batches: every line of a batch is parsed and its
 * duplicate-table slot prefetched before any is judged, so the table's
 * cache misses overlap instead of queueing (cnt-ingest(1), PERFORMANCE). */
#define BATCH 16

typedef struct jbatch {
	cnt_jsonl *jp[BATCH];
	cnt_raw_event ev[BATCH];
	cnt_raw_problem pb[BATCH];
	cnt_fp fp[BATCH];
	const char *line[BATCH];
	size_t len[BATCH];
	uint64_t no[BATCH];
	int n;
} jbatch;

static jbatch jb;

static void jbatch_flush(jbatch *b)
{
	for (int i = 0; i < b->n; i++)
		if (b->pb[i].status == CNT_RAW_OK)
			b->fp[i] = cnt_admit_prefetch(C.adm, &b->ev[i]);
	for (int i = 0; i < b->n; i++)
		handle_fp(b->no[i], &b->ev[i], &b->pb[i], b->line[i], b->len[i],
			b->pb[i].status == CNT_RAW_OK ? &b->fp[i] : NULL);
	b->n = 0;
}


#define LINE_MAX_BYTES (1u << 20)

/* A line over LINE_MAX_BYTES is one malformed record, whether or not it
 * fits the read buffer; its first 256 bytes go to the reject stream. */
static void reject_overlong(uint64_t line, const char *text)
{
	char msg[64];

	jbatch_flush(&jb);   /* earlier lines first, in order */
	C.inputs[C.cur].records++;
	cnt_admit_count_reject(C.adm, CNT_REJ_MALFORMED);
	snprintf(msg, sizeof(msg), "line longer than %u bytes", LINE_MAX_BYTES);
	report_reject(line, CNT_REJ_MALFORMED, NULL, msg, NULL, text, 256);
}

static void ingest_json(int fd, const char *name, const uint8_t *pre, size_t pren)
{
	size_t cap = 4u << 20, len = 0, start;
	char *buf = malloc(cap);
	uint64_t line = 0;
	int eof = 0, skipping = 0;

	if (buf == NULL)
		die("out of memory");
	for (int i = 0; i < BATCH; i++)
		if (jb.jp[i] == NULL && (jb.jp[i] = cnt_jsonl_new()) == NULL)
			die("out of memory");
	C.poskind = "line";
	memcpy(buf, pre, pren);
	len = pren;
	while (!eof || len > 0) {
		char *nl;

		if (!eof && len < cap) {
			ssize_t got = read(fd, buf + len, cap - len);

			if (got < 0) {
				if (errno == EINTR)
					continue;
				die("cannot read '%s': %s", name, strerror(errno));
			}
			if (got == 0)
				eof = 1;
			len += (size_t)got;
			if (!eof && len < cap / 2)
				continue;
		}
		start = 0;
		while (start < len) {
			size_t n;

			nl = memchr(buf + start, '\n', len - start);
			if (nl == NULL && !eof) {
				if (len - start > LINE_MAX_BYTES && !skipping) {
					/* An overlong line: reject it, skip to its end. */
					reject_overlong(++line, buf + start);
					skipping = 1;
				}
				if (skipping)
					start = len;
				break;
			}
			n = nl ? (size_t)(nl - (buf + start)) : len - start;
			if (skipping) {
				skipping = 0;
			} else {
				const char *l = buf + start;
				size_t k = 0;

				line++;
				while (k < n && (l[k] == ' ' || l[k] == '\t' || l[k] == '\r'))
					k++;
				if (k == n) {
					C.blank_lines++;   /* not a record */
				} else if (n > LINE_MAX_BYTES) {
					reject_overlong(line, l);
				} else {
					int i = jb.n++;

					cnt_jsonl_parse(jb.jp[i], l, n, &jb.ev[i], &jb.pb[i]);
					jb.line[i] = l;
					jb.len[i] = n;
					jb.no[i] = line;
					if (jb.n == BATCH)
						jbatch_flush(&jb);
				}
			}
			start += n + (nl != NULL);
		}
		jbatch_flush(&jb);   /* its lines live in buf */
		memmove(buf, buf + start, len - start);
		len -= start;
		if (eof && len == 0)
			break;
	}
	free(buf);
}

/* ---- CSV ------------------------------------------------------------ */

static int csv_row(void *unused, uint64_t line, const cnt_raw_event *ev, const cnt_raw_problem *pb,
	const char *raw, size_t rawn)
{
	(void)unused;
	handle(line, ev, pb, raw, rawn);
	return 0;
}

static void ingest_csv(int fd, const char *name, const uint8_t *pre, size_t pren)
{
	cnt_csvin *r = cnt_csvin_new();
	static char chunk[1u << 20];
	ssize_t got;

	if (r == NULL)
		die("out of memory");
	C.poskind = "line";
	if (pren && cnt_csvin_feed(r, pre, pren, csv_row, NULL, &C.err) != 0)
		die("'%s': %s", name, C.err.msg);
	while ((got = read(fd, chunk, sizeof(chunk))) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			die("cannot read '%s': %s", name, strerror(errno));
		}
		if (cnt_csvin_feed(r, chunk, (size_t)got, csv_row, NULL, &C.err) != 0)
			die("'%s': %s", name, C.err.msg);
	}
	if (cnt_csvin_finish(r, csv_row, NULL, &C.err) != 0)
		die("'%s': %s", name, C.err.msg);
	cnt_csvin_free(r);
}

/* ---- Avro ----------------------------------------------------------- */

static void ingest_avro(int fd, const char *name, const uint8_t *pre, size_t pren)
{
	cnt_records *in = cnt_records_open_prefixed(fd, name, pre, pren, C.raw_schema, NULL, &C.err);
	cnt_slice *keys = NULL, *vals = NULL;
	size_t cap = 0;
	cnt_buf text = CNT_BUF_INIT;
	cnt_raw_event ev;
	cnt_val v;
	int rc;

	if (in == NULL)
		die("%s", C.err.msg);
	C.poskind = "record";
	while ((rc = cnt_records_next(in, &v, &C.err)) != 0) {
		uint32_t na;

		if (rc < 0)
			die("%s", C.err.msg);
		na = v.u.v[10].n;
		if (na > cap) {
			cap = na * 2;
			keys = realloc(keys, cap * sizeof(*keys));
			vals = realloc(vals, cap * sizeof(*vals));
			if (keys == NULL || vals == NULL)
				die("out of memory");
		}
		cnt_raw_from_val(&v, &ev, keys, vals);
		text.len = 0;
		oom(cnt_json_value(&text, &v, C.raw_schema->root, 0));
		handle(cnt_records_record_no(in), &ev, NULL, (const char *)text.p, text.len);
	}
	free(keys);
	free(vals);
	cnt_buf_release(&text);
	cnt_records_free(in);
}

/* ---- driver --------------------------------------------------------- */

static enum fmt fmt_from_name(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (dot == NULL)
		return F_AUTO;
	if (strcmp(dot, ".jsonl") == 0 || strcmp(dot, ".ndjson") == 0 || strcmp(dot, ".json") == 0)
		return F_JSON;
	if (strcmp(dot, ".csv") == 0)
		return F_CSV;
	if (strcmp(dot, ".avro") == 0)
		return F_AVRO;
	return F_AUTO;
}

static void ingest_one(int fd, const char *name, enum fmt forced)
{
	uint8_t pre[4096];
	size_t pren = 0;
	enum fmt f = forced != F_AUTO ? forced : fmt_from_name(name);

	if (f == F_AUTO) {
		/* Sniff: the Avro magic, or a JSON object, else CSV. */
		while (pren < sizeof(pre)) {
			ssize_t got = read(fd, pre + pren, sizeof(pre) - pren);

			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0)
				die("cannot read '%s': %s", name, strerror(errno));
			if (got == 0)
				break;
			pren += (size_t)got;
			if (pren >= 4)
				break;
		}
		if (pren >= 4 && memcmp(pre, "Obj\x01", 4) == 0) {
			f = F_AVRO;
		} else {
			size_t k = 0;

			while (k < pren && (pre[k] == ' ' || pre[k] == '\t' || pre[k] == '\r' || pre[k] == '\n'))
				k++;
			f = (k == pren || pre[k] == '{') ? F_JSON : F_CSV;
		}
	}
	C.inputs[C.cur].fmt = f;
	if (f == F_JSON)
		ingest_json(fd, name, pre, pren);
	else if (f == F_CSV)
		ingest_csv(fd, name, pre, pren);
	else
		ingest_avro(fd, name, pre, pren);
}

static void counter_json(void *b, const char *tenant, const char *counter, uint64_t acc, uint64_t dups)
{
	cnt_buf *buf = b;

	if (buf->p[buf->len - 1] != '[')
		oom(cnt_buf_putc(buf, ','));
	/* Identifiers may hold '"' or '\\': escape them. */
	oom(cnt_buf_append(buf, "{\"tenant_id\":", 13));
	oom(cnt_json_string(buf, (const uint8_t *)tenant, strlen(tenant), 0));
	oom(cnt_buf_append(buf, ",\"counter_id\":", 14));
	oom(cnt_json_string(buf, (const uint8_t *)counter, strlen(counter), 0));
	oom(cnt_buf_printf(buf, ",\"accepted\":%" PRIu64
		",\"duplicate\":%" PRIu64 ",\"dedup_hit_rate\":%.6f}", acc, dups,
		acc + dups ? (double)dups / (double)(acc + dups) : 0.0));
}

static void write_stats(const char *path)
{
	const cnt_admit_stats *st = cnt_admit_get_stats(C.adm);
	cnt_buf b = CNT_BUF_INIT;

	oom(cnt_buf_printf(&b, "{\"tool\":\"cnt-ingest\",\"in\":%" PRIu64 ",\"out\":%" PRIu64
		",\"rejected\":%" PRIu64 ",\"duplicate\":%" PRIu64 ",\"held\":0,\"balanced\":%s,"
		"\"dedup_hit_rate\":%.6f,\"rejected_by_reason\":{",
		st->in, st->accepted, st->rejected, st->duplicate,
		st->in == st->accepted + st->rejected + st->duplicate ? "true" : "false",
		st->accepted + st->duplicate ? (double)st->duplicate / (double)(st->accepted + st->duplicate) : 0.0));
	for (int r = 0; r < CNT_REJ_COUNT; r++)
		oom(cnt_buf_printf(&b, "%s\"%s\":%" PRIu64, r ? "," : "", cnt_reject_name((cnt_reject_reason)r), st->by_reason[r]));
	oom(cnt_buf_append(&b, "},\"counters\":[", 14));
	cnt_admit_each_counter(C.adm, counter_json, &b);
	oom(cnt_buf_append(&b, "],\"inputs\":[", 12));
	for (size_t i = 0; i < C.ninputs; i++) {
		oom(cnt_buf_append(&b, i ? ",{\"name\":" : "{\"name\":", i ? 9 : 8));
		oom(cnt_json_string(&b, (const uint8_t *)C.inputs[i].name, strlen(C.inputs[i].name), 0));
		oom(cnt_buf_printf(&b, ",\"format\":\"%s\",\"records\":%" PRIu64 "}", fmt_names[C.inputs[i].fmt], C.inputs[i].records));
	}
	oom(cnt_buf_printf(&b, "],\"blank_lines\":%" PRIu64 "}\n", C.blank_lines));
	if (cnt_cli_old_stats(&C.stats_out, path, &b, &C.err) != 0)
		die("%s", C.err.msg);
	cnt_buf_release(&b);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"definitions", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"rejects", required_argument, NULL, 'r'},
		{"duplicates", required_argument, NULL, 'D'},
		{"format", required_argument, NULL, 'f'},
		{"now", required_argument, NULL, 'N'},
		{"max-past", required_argument, NULL, 'P'},
		{"max-future", required_argument, NULL, 'F'},
		{"codec", required_argument, NULL, 'c'},
		{"level", required_argument, NULL, 'L'},
		{"stats", required_argument, NULL, 'S'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	const char *defs_path = NULL, *out_path = NULL, *rej_path = NULL, *dup_path = NULL;
	const char *stats_path = NULL, *codec_name = NULL;
	enum fmt forced = F_AUTO;
	cnt_admit_cfg cfg = {NULL, INT64_MIN, 7LL * 86400 * 1000, 60 * 1000, 0};
	int level = -1, verbose = 0, c;
	cnt_codec_id codec;
	cnt_defs *defs;
	const cnt_admit_stats *st;

	while ((c = getopt_long(argc, argv, "d:o:r:D:f:c:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': defs_path = optarg; break;
		case 'o': out_path = optarg; break;
		case 'r': rej_path = optarg; break;
		case 'D': dup_path = optarg; break;
		case 'f':
			if (strcmp(optarg, "json") == 0) forced = F_JSON;
			else if (strcmp(optarg, "csv") == 0) forced = F_CSV;
			else if (strcmp(optarg, "avro") == 0) forced = F_AVRO;
			else die("--format: '%s' is not json, csv or avro", optarg);
			break;
		case 'N':
			if (cnt_time_parse_arg(optarg, &cfg.now_ms) != 0)
				die("--now: '%s' is not an RFC 3339 time (e.g. 2026-11-30T00:00:00Z) or epoch milliseconds", optarg);
			break;
		case 'P':
			if (cnt_time_parse_duration(optarg, &cfg.max_past_ms) != 0 || cfg.max_past_ms < 0)
				die("--max-past: '%s' is not a duration (e.g. 7d, 36h, 90m)", optarg);
			break;
		case 'F':
			if (cnt_time_parse_duration(optarg, &cfg.max_future_ms) != 0 || cfg.max_future_ms < 0)
				die("--max-future: '%s' is not a duration (e.g. 60s, 5m)", optarg);
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
			puts("cnt-ingest " CNT_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return CNT_EXIT_TROUBLE;
		}
	}
	if (defs_path == NULL) {
		fputs("cnt-ingest: -d definitions is required\n", stderr);
		fputs(usage, stderr);
		return CNT_EXIT_TROUBLE;
	}
	if (codec_name && cnt_cli_old_codec(codec_name, &codec, &C.err) != 0)
		die("%s", C.err.msg);
	if (stats_path && strcmp(stats_path, "-") == 0)
		die("--stats: name a file (standard output carries the events)");
	if ((out_path == NULL || strcmp(out_path, "-") == 0) &&
	    ((rej_path && strcmp(rej_path, "-") == 0) || (dup_path && strcmp(dup_path, "-") == 0)))
		die("the events go to standard output: -r and -D need a file name then (or use -o)");
	defs = cnt_defs_load(defs_path, &C.err);
	if (defs == NULL)
		die("%s", C.err.msg);
	cfg.defs = defs;
	/* Size the duplicate table from the inputs' sizes (about 200 bytes a
	 * JSON line), so it is not rehashed as it fills. */
	for (int i = optind; i < argc; i++) {
		struct stat sb;

		if (stat(argv[i], &sb) == 0 && S_ISREG(sb.st_mode))
			cfg.expected += (size_t)sb.st_size / 200;
	}
	C.adm = cnt_admit_new(&cfg, &C.err);
	if (C.adm == NULL)
		die("%s", C.err.msg);
	C.raw_schema = cnt_avro_schema_parse(cnt_schema_raw_event, strlen(cnt_schema_raw_event), &C.err);
	if (C.raw_schema == NULL)
		die("internal: %s", C.err.msg);

	if (cnt_cli_old_avro_out(&C.out, out_path, codec_name, &codec, &C.err) != 0)
		die("%s", C.err.msg);
	if (rej_path) {
		if (cnt_out_open(&C.rej_out, rej_path, &C.err) != 0)
			die("%s", C.err.msg);
		C.rej_file = 1;
	}
	if (dup_path) {
		if (cnt_out_open(&C.dup_out, dup_path, &C.err) != 0)
			die("%s", C.err.msg);
		C.dup_file = 1;
	}
	C.w = cnt_event_writer_new(C.out.fd, out_path ? out_path : "standard output", codec, level, &C.err);
	if (C.w == NULL)
		die("%s", C.err.msg);

	C.ninputs = optind < argc ? (size_t)(argc - optind) : 1;
	C.inputs = calloc(C.ninputs, sizeof(*C.inputs));
	if (C.inputs == NULL)
		die("out of memory");
	for (C.cur = 0; C.cur < C.ninputs; C.cur++) {
		const char *name = optind < argc ? argv[optind + (int)C.cur] : "-";
		int fd = cnt_cli_old_open_in(name, &C.err);

		C.inputs[C.cur].name = name;
		if (fd < 0)
			die("%s", C.err.msg);
		ingest_one(fd, name, forced);
		cnt_cli_old_close_in(fd);
	}
	C.cur = 0;
	for (int i = 0; i < BATCH; i++)
		cnt_jsonl_free(jb.jp[i]);
	if (cnt_writer_finish(C.w, &C.err) != 0)
		die("%s", C.err.msg);
	flush_buf(&C.rej, C.rej_out.fd, "the reject stream", 1);
	flush_buf(&C.dup, C.dup_out.fd, "the duplicate stream", 1);
	st = cnt_admit_get_stats(C.adm);
	if (st->in != st->accepted + st->rejected + st->duplicate)
		die("internal: records do not balance: in %" PRIu64 " != out %" PRIu64 " + rejected %" PRIu64
			" + duplicate %" PRIu64, st->in, st->accepted, st->rejected, st->duplicate);
	if (stats_path)
		write_stats(stats_path);
	if (cnt_out_commit(&C.out, &C.err) != 0 || (rej_path && cnt_out_commit(&C.rej_out, &C.err) != 0) ||
	    (dup_path && cnt_out_commit(&C.dup_out, &C.err) != 0) ||
	    (stats_path && cnt_out_commit(&C.stats_out, &C.err) != 0))
		die("%s", C.err.msg);
	if (verbose)
		fprintf(stderr, "cnt-ingest: in %" PRIu64 ", out %" PRIu64 ", rejected %" PRIu64
			", duplicate %" PRIu64 " (dedup hit rate %.2f%%)\n", st->in, st->accepted, st->rejected,
			st->duplicate, st->accepted + st->duplicate ? 100.0 * (double)st->duplicate / (double)(st->accepted + st->duplicate) : 0.0);
	cnt_writer_free(C.w);
	cnt_admit_free(C.adm);
	cnt_avro_schema_free(C.raw_schema);
	cnt_defs_free(defs);
	cnt_buf_release(&C.rej);
	cnt_buf_release(&C.dup);
	free(C.inputs);
	return 0;
}
