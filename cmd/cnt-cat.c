/*
 * cnt-cat - print Avro container files as JSON lines or CSV.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/outfile.h"
#include "cli/legacy.h"
#include "avro/container.h"
#include "model/event.h"
#include "avro/json.h"
#include "avro/records.h"

extern const char cnt_schema_counting_event[];
extern const char cnt_schema_raw_event[];

static const char usage[] =
	"usage: cnt-cat [-c | -m | -s] [-f json|csv] [-n count] [-t]\n"
	"               [--as event|raw | --reader-schema file] [-v] [file ...]\n";

static const char help[] =
	"Print Avro container files (events, buckets, views) as JSON lines or CSV.\n"
	"\n"
	"  -f, --format json|csv   output format (default json: one object per record)\n"
	"  -t, --iso-time          timestamps as RFC 3339 UTC text (default: exact epoch values)\n"
	"  -n, --head N            stop after N records\n"
	"  -c, --count             print the number of records (every record is decoded)\n"
	"  -s, --schema            print each container's writer schema\n"
	"  -m, --meta              print each container's header as a JSON object\n"
	"      --as event|raw      read as cnt.CountingEvent or cnt.RawEvent (schema resolution)\n"
	"      --reader-schema F   read with the Avro schema in file F (schema resolution)\n"
	"  -v, --verbose           per-input record counts on standard error\n"
	"  -h, --help              this help\n"
	"      --version           print the version\n"
	"\n"
	"Files are read in order; '-' or no file reads standard input, which may hold\n"
	"several containers back to back.  See cnt-cat(1).\n";

enum mode { M_RECORDS, M_COUNT, M_SCHEMA, M_META };

typedef struct opts {
	enum mode mode;
	int csv;
	int flags;
	long long head;
	int verbose;
	const char *as;
	const char *reader_file;
} opts;

static cnt_buf out = CNT_BUF_INIT;

static void write_out(void)
{
	if (out.len && cnt_write_all(STDOUT_FILENO, out.p, out.len) != 0) {
		/* A reader that stopped reading (| head) is not an error. */
		if (errno == EPIPE)
			_exit(0);
		fprintf(stderr, "cnt-cat: cannot write standard output: %s\n", strerror(errno));
		_exit(CNT_EXIT_IO);
	}
	out.len = 0;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	/* What was printed so far is whole records: let it out first, so
	 * the records before the damage are all there. */
	write_out();
	fputs("cnt-cat: ", stderr);
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
	write_out();
}

static void oom(int rc)
{
	if (rc != 0)
		die("out of memory");
}

static void print_meta(cnt_reader *rd)
{
	const cnt_meta_kv *kv;
	size_t n = cnt_reader_meta(rd, &kv);
	const uint8_t *sync = cnt_reader_sync(rd);

	oom(cnt_buf_append(&out, "{\"input\":", 9));
	oom(cnt_json_string(&out, (const uint8_t *)cnt_reader_name(rd), strlen(cnt_reader_name(rd)), 0));
	oom(cnt_buf_printf(&out, ",\"container\":%u,\"codec\":\"%s\",\"sync\":\"",
		cnt_reader_container(rd), cnt_codec_name(cnt_reader_codec(rd))));
	for (int i = 0; i < CNT_SYNC_SIZE; i++)
		oom(cnt_buf_printf(&out, "%02x", sync[i]));
	oom(cnt_buf_append(&out, "\",\"metadata\":{", 14));
	for (size_t i = 0; i < n; i++) {
		if (i)
			oom(cnt_buf_putc(&out, ','));
		oom(cnt_json_string(&out, (const uint8_t *)kv[i].key, strlen(kv[i].key), 0));
		oom(cnt_buf_putc(&out, ':'));
		oom(cnt_json_string(&out, kv[i].val, kv[i].vlen, 1));
	}
	oom(cnt_buf_append(&out, "}}\n", 3));
}

static void print_schema(cnt_reader *rd)
{
	const cnt_avro_schema *s = cnt_reader_schema(rd);

	oom(cnt_buf_append(&out, s->json, s->json_len));
	if (s->json_len == 0 || s->json[s->json_len - 1] != '\n')
		oom(cnt_buf_putc(&out, '\n'));
}

/* Reads one input; returns the number of records it produced. */
static unsigned long long cat_one(const opts *o, int fd, const char *name,
	const cnt_avro_schema *reader, unsigned long long *total, int *header_done)
{
	cnt_err err;
	cnt_records *in;
	unsigned long long n = 0;
	cnt_val v;
	int rc;

	if (o->mode == M_SCHEMA || o->mode == M_META) {
		/* Headers only: every container's, header-only ones too. */
		cnt_reader *rd = cnt_reader_open_prefixed(fd, name, NULL, 0, NULL, CNT_READER_HEADERS, &err);
		cnt_block b;

		if (rd == NULL)
			die("%s", err.msg);
		do {
			if (o->mode == M_SCHEMA)
				print_schema(rd);
			else
				print_meta(rd);
			flush_out(0);
			while ((rc = cnt_reader_next(rd, &b, &err)) == 1)
				;
			if (rc < 0)
				die("%s", err.msg);
		} while (rc == 2);
		cnt_reader_free(rd);
		return 0;
	}
	in = cnt_records_open(fd, name, reader, NULL, &err);
	if (in == NULL)
		die("%s", err.msg);
	if (o->mode == M_COUNT && reader == NULL) {
		/* Event archives are what gets counted most: check them with the
		 * decoder written for their schema. */
		char *canon = cnt_event_canonical();

		if (canon == NULL || cnt_records_set_skipper(in, canon, cnt_event_skip) != 0)
			die("out of memory");
		free(canon);
	}
	while ((o->head < 0 || *total < (unsigned long long)o->head) &&
	       (rc = (o->mode == M_COUNT && reader == NULL) ? cnt_records_skip(in, &err) : cnt_records_next(in, &v, &err)) != 0) {
		const cnt_schema *s;

		if (rc < 0)
			die("%s", err.msg);
		n++;
		(*total)++;
		if (o->mode == M_COUNT)
			continue;
		s = cnt_records_schema(in);
		if (o->csv) {
			if (s->type != CNT_T_RECORD)
				die("'%s': --format csv needs records, and this schema is a %s", name, cnt_type_name(s->type));
			if (!*header_done) {
				oom(cnt_csv_header(&out, s));
				*header_done = 1;
			}
			oom(cnt_csv_record(&out, &v, s, o->flags));
		} else {
			oom(cnt_json_value(&out, &v, s, o->flags));
			oom(cnt_buf_putc(&out, '\n'));
		}
		flush_out(0);
	}
	cnt_records_free(in);
	return n;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	cnt_buf b = CNT_BUF_INIT;
	char chunk[65536];
	size_t got;

	if (f == NULL)
		die("cannot open '%s': %s", path, strerror(errno));
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		oom(cnt_buf_append(&b, chunk, got));
	if (ferror(f))
		die("cannot read '%s': %s", path, strerror(errno));
	fclose(f);
	oom(cnt_buf_putc(&b, 0));
	return (char *)b.p;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'},
		{"iso-time", no_argument, NULL, 't'},
		{"head", required_argument, NULL, 'n'},
		{"count", no_argument, NULL, 'c'},
		{"schema", no_argument, NULL, 's'},
		{"meta", no_argument, NULL, 'm'},
		{"as", required_argument, NULL, 'A'},
		{"reader-schema", required_argument, NULL, 'R'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	opts o = {M_RECORDS, 0, 0, -1, 0, NULL, NULL};
	cnt_avro_schema *reader = NULL;
	char *reader_text = NULL;
	unsigned long long total = 0;
	int header_done = 0, c, nmodes = 0;
	cnt_err err;

	while ((c = getopt_long(argc, argv, "f:tn:csmvh", longopts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'f':
			if (strcmp(optarg, "json") == 0)
				o.csv = 0;
			else if (strcmp(optarg, "csv") == 0)
				o.csv = 1;
			else
				die("--format: '%s' is not json or csv", optarg);
			break;
		case 't':
			o.flags |= CNT_JSON_ISO_TIME;
			break;
		case 'n':
			errno = 0;
			o.head = strtoll(optarg, &end, 10);
			if (errno || *end || end == optarg || o.head < 0)
				die("--head: '%s' is not a non-negative number", optarg);
			break;
		case 'c': o.mode = M_COUNT; nmodes++; break;
		case 's': o.mode = M_SCHEMA; nmodes++; break;
		case 'm': o.mode = M_META; nmodes++; break;
		case 'A':
			if (strcmp(optarg, "event") != 0 && strcmp(optarg, "raw") != 0)
				die("--as: '%s' is not event or raw", optarg);
			o.as = optarg;
			break;
		case 'R': o.reader_file = optarg; break;
		case 'v': o.verbose = 1; break;
		case 'h':
			fputs(usage, stdout);
			fputs(help, stdout);
			return 0;
		case 'V':
			puts("cnt-cat " CNT_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return CNT_EXIT_TROUBLE;
		}
	}
	if (nmodes > 1)
		die("--count, --schema and --meta exclude each other");
	if (o.as && o.reader_file)
		die("--as and --reader-schema exclude each other");
	if (o.as)
		reader_text = strdup(strcmp(o.as, "event") == 0 ? cnt_schema_counting_event : cnt_schema_raw_event);
	else if (o.reader_file)
		reader_text = slurp(o.reader_file);
	if (reader_text) {
		reader = cnt_avro_schema_parse(reader_text, strlen(reader_text), &err);
		if (reader == NULL)
			die("'%s': %s", o.reader_file ? o.reader_file : "built-in schema", err.msg);
	}
	if (optind == argc) {
		unsigned long long n = cat_one(&o, STDIN_FILENO, "-", reader, &total, &header_done);

		if (o.verbose)
			fprintf(stderr, "cnt-cat: '-': %llu records\n", n);
	}
	for (int i = optind; i < argc && (o.head < 0 || total < (unsigned long long)o.head); i++) {
		int fd = cnt_cli_old_open_in(argv[i], &err);
		unsigned long long n;

		if (fd < 0)
			die("%s", err.msg);
		n = cat_one(&o, fd, argv[i], reader, &total, &header_done);
		cnt_cli_old_close_in(fd);
		if (o.verbose)
			fprintf(stderr, "cnt-cat: '%s': %llu records\n", argv[i], n);
	}
	if (o.mode == M_COUNT)
		oom(cnt_buf_printf(&out, "%llu\n", total));
	flush_out(1);
	cnt_buf_release(&out);
	cnt_avro_schema_free(reader);
	free(reader_text);
	return 0;
}
