/*
 * test_container.c - the Avro container layer: writer/reader round trips
 * for every codec, determinism, header-only and oversized records,
 * concatenated containers, canonical form, schema errors, resolution
 * rules, bounds, and complete-or-absent output files.
 *
 * Expected values come from the Avro 1.11 specification (canonical form,
 * resolution rules) or from the records the test itself wrote, never from
 * a previous run of the code.  Files go to a mkdtemp directory that is
 * removed at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "avro/encoding.h"
#include "avro/container.h"
#include "base/outfile.h"
#include "avro/records.h"
#include "avro/schema.h"
#include "avro/value.h"
#include "unit.h"

extern const char cnt_schema_counting_event[];

static char dir[64];

static const char small_schema[] =
	"{\"type\": \"record\", \"name\": \"T\", \"namespace\": \"test\", \"fields\": ["
	"{\"name\": \"n\", \"type\": \"long\"}, {\"name\": \"s\", \"type\": \"string\"}]}";

static const cnt_codec_id all_codecs[] = {
	CNT_CODEC_NULL, CNT_CODEC_DEFLATE, CNT_CODEC_SNAPPY, CNT_CODEC_XZ, CNT_CODEC_ZSTD, CNT_CODEC_BZIP2
};
#define NCODECS (sizeof(all_codecs) / sizeof(all_codecs[0]))

static char *path_in(const char *name)
{
	static char p[4][256];
	static int k;

	k = (k + 1) & 3;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

/* Record i of the test set: n spans negative and 64-bit values, s varies
 * in length (0..~90 bytes) and holds a NUL and non-ASCII bytes. */
static int64_t rec_n(int i)
{
	return i % 3 == 0 ? -(int64_t)i * 1000003 : (int64_t)i * INT64_C(0x10000000001) + i;
}

static size_t rec_s(int i, char *buf)
{
	size_t len = (size_t)snprintf(buf, 128, "rec-%d-%.*s", i, i % 80,
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123");

	if (i % 7 == 0) {
		buf[len++] = 0;
		buf[len++] = (char)0xc3;
		buf[len++] = (char)0xa9;
	}
	return len;
}

static int put_record(cnt_writer *w, int i, cnt_err *err)
{
	char s[160];
	size_t len = rec_s(i, s);
	cnt_buf *b = cnt_writer_buf(w);

	if (cnt_bin_write_long(b, rec_n(i)) != 0 || cnt_bin_write_bytes(b, s, len) != 0)
		return -1;
	return cnt_writer_commit(w, err);
}

/* Writes records [first, first+n) with codec to fd. */
static int write_set(int fd, cnt_codec_id codec, size_t block_bytes, int first, int n)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_writer *w = cnt_writer_new(fd, "test", small_schema, codec, CNT_LEVEL_DEFAULT, block_bytes, &err);
	int rc = 0;

	if (w == NULL) {
		fprintf(stderr, "writer: %s\n", err.msg);
		return -1;
	}
	for (int i = first; i < first + n && rc == 0; i++)
		rc = put_record(w, i, &err);
	if (rc == 0)
		rc = cnt_writer_finish(w, &err);
	if (rc != 0)
		fprintf(stderr, "writer: %s\n", err.msg);
	cnt_writer_free(w);
	return rc;
}

static int write_file(const char *path, cnt_codec_id codec, size_t block_bytes, int n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc;

	if (fd < 0)
		return -1;
	rc = write_set(fd, codec, block_bytes, 0, n);
	close(fd);
	return rc;
}

static int check_record(const cnt_val *v, int i)
{
	char s[160];
	size_t len = rec_s(i, s);

	return v->type == CNT_T_RECORD && v->n == 2 &&
		v->u.v[0].type == CNT_T_LONG && v->u.v[0].u.i == rec_n(i) &&
		v->u.v[1].type == CNT_T_STRING && v->u.v[1].n == len &&
		memcmp(v->u.v[1].u.s, s, len) == 0;
}

static cnt_buf slurp(const char *path)
{
	cnt_buf b = CNT_BUF_INIT;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t chunk[65536];
	ssize_t got;

	if (fd < 0)
		return b;
	while ((got = read(fd, chunk, sizeof(chunk))) > 0)
		if (cnt_buf_append(&b, chunk, (size_t)got) != 0)
			break;
	close(fd);
	return b;
}

/* Reads path through cnt_records (writer schema) and checks it holds records
 * [first, first+n) of the set, in order.  Returns the number of blocks. */
static int read_back(const char *path, int first, int n, cnt_codec_id codec)
{
	cnt_err err = {"", CNT_ERR_DATA};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	cnt_records *in = fd < 0 ? NULL : cnt_records_open(fd, path, NULL, NULL, &err);
	cnt_val v;
	int got = 0, rc, bad = 0;

	CHECK(in != NULL);
	if (in == NULL) {
		fprintf(stderr, "open: %s\n", err.msg);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	CHECK_EQ_INT(cnt_reader_codec(cnt_records_reader(in)), codec);
	while ((rc = cnt_records_next(in, &v, &err)) == 1) {
		if (!check_record(&v, first + got))
			bad++;
		got++;
		CHECK_EQ_INT(cnt_records_record_no(in), got);
	}
	if (rc < 0)
		fprintf(stderr, "read: %s\n", err.msg);
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(got, n);
	CHECK_EQ_INT(bad, 0);
	cnt_records_free(in);
	close(fd);
	return 0;
}

static int count_blocks(const char *path)
{
	cnt_err err = {"", CNT_ERR_DATA};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	cnt_reader *r = cnt_reader_open(fd, path, NULL, &err);
	cnt_block b;
	int blocks = 0, rc;

	if (r == NULL) {
		close(fd);
		return -1;
	}
	while ((rc = cnt_reader_next(r, &b, &err)) == 1)
		blocks++;
	cnt_reader_free(r);
	close(fd);
	return rc == 0 ? blocks : -1;
}

static void test_round_trip_every_codec(void)
{
	for (size_t k = 0; k < NCODECS; k++) {
		char name[64];

		snprintf(name, sizeof(name), "rt.%s.avro", cnt_codec_name(all_codecs[k]));
		CHECK_EQ_INT(write_file(path_in(name), all_codecs[k], 4096, 1000), 0);
		read_back(path_in(name), 0, 1000, all_codecs[k]);
		/* ~60 KB of records in 4 KB blocks: many blocks. */
		CHECK(count_blocks(path_in(name)) >= 10);
	}
}

static void test_writer_is_deterministic(void)
{
	for (size_t k = 0; k < NCODECS; k++) {
		char a[64], b[64];
		cnt_buf x, y;

		snprintf(a, sizeof(a), "det-a.%s.avro", cnt_codec_name(all_codecs[k]));
		snprintf(b, sizeof(b), "det-b.%s.avro", cnt_codec_name(all_codecs[k]));
		CHECK_EQ_INT(write_file(path_in(a), all_codecs[k], 0, 500), 0);
		CHECK_EQ_INT(write_file(path_in(b), all_codecs[k], 0, 500), 0);
		x = slurp(path_in(a));
		y = slurp(path_in(b));
		CHECK(x.len > 100);
		CHECK(x.len == y.len && memcmp(x.p, y.p, x.len) == 0);
		cnt_buf_release(&x);
		cnt_buf_release(&y);
	}
}

/* The most and the fewest nice of this process's threads but the
 * caller's, above the caller's (/proc/self/task/N/stat, its 19th field);
 * 0 and 0 when it has no other. */
static void niced(int *most, int *fewest)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	char path[320], line[1024];
	int self = getpriority(PRIO_PROCESS, 0), seen = 0;

	*most = *fewest = 0;
	while (d != NULL && (e = readdir(d)) != NULL) {
		FILE *f;
		char *p;
		int nice = 0, field = 2;

		if (e->d_name[0] == '.' || atoi(e->d_name) == (int)gettid())
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
		fclose(f);
		/* fields 3 on after the name's ')' */
		for (; p != NULL && field < 19; field++)
			p = strchr(p + 1, ' ');
		if (p == NULL || sscanf(p, " %d", &nice) != 1)
			continue;
		nice -= self;
		if (!seen || nice > *most)
			*most = nice;
		if (!seen || nice < *fewest)
			*fewest = nice;
		seen = 1;
	}
	if (d != NULL)
		closedir(d);
}

/* cnt_writer_yield: the same bytes, with workers or without, however
 * many times the 64 blocks that may wait go round; its workers 5 nice
 * levels below the caller (CNT_WRITE_NICE, 0 to 19, says how many;
 * anything else is the default), and none when asked after the first
 * block. */
static void test_writer_yield(void)
{
	static const struct {
		const char *threads, *nice;
		int yield_at, want;   /* yield before record yield_at; the workers' nice */
	} runs[] = {
		{"2", NULL, 0, 5}, {"2", "0", 0, 0}, {"2", "12", 0, 12}, {"2", "25", 0, 5},
		{"2", "x", 0, 5}, {"2", NULL, 100, 0}, {"0", NULL, 0, 0},
	};
	cnt_buf want = CNT_BUF_INIT;
	const char *plain = path_in("yield-plain.avro");

	setenv("CNT_WRITE_THREADS", "2", 1);
	CHECK_EQ_INT(write_file(plain, CNT_CODEC_ZSTD, 512, 20000), 0);
	want = slurp(plain);
	CHECK(count_blocks(plain) > 4 * 64);
	for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		const char *path = path_in("yield.avro");
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), rc = 0, most = -1, fewest = -1;
		cnt_err err = {"", CNT_ERR_DATA};
		cnt_writer *w;
		cnt_buf got;

		setenv("CNT_WRITE_THREADS", runs[k].threads, 1);
		if (runs[k].nice)
			setenv("CNT_WRITE_NICE", runs[k].nice, 1);
		else
			unsetenv("CNT_WRITE_NICE");
		w = cnt_writer_new(fd, "test", small_schema, CNT_CODEC_ZSTD, CNT_LEVEL_DEFAULT, 512, &err);
		CHECK(w != NULL);
		for (int i = 0; w != NULL && i < 20000 && rc == 0; i++) {
			if (i == runs[k].yield_at)
				cnt_writer_yield(w);
			rc = put_record(w, i, &err);
			if (i == 10000)
				niced(&most, &fewest);
		}
		CHECK_EQ_INT(rc, 0);
		CHECK_EQ_INT(cnt_writer_finish(w, &err), 0);
		cnt_writer_free(w);
		close(fd);
		got = slurp(path);
		CHECK(got.len == want.len && memcmp(got.p, want.p, want.len) == 0);
		cnt_buf_release(&got);
		/* by record 10,000 (some 250 blocks) each worker has had a
		 * block: both niced, or neither (CNT_WRITE_THREADS=2 starts
		 * two on any machine) */
		if (runs[k].threads[0] == '2') {
			CHECK_EQ_INT(most, runs[k].want);
			CHECK_EQ_INT(fewest, runs[k].want);
		} else {
			CHECK_EQ_INT(most, 0);
		}
	}
	unsetenv("CNT_WRITE_NICE");
	unsetenv("CNT_WRITE_THREADS");
	cnt_buf_release(&want);
}

/* Deferred header: the hook sees every record and adds metadata at the
 * end; with no metadata the bytes are those of a plain writer, also when
 * the spool overflows memory into a temporary file (here ~9 MiB). */
typedef struct {
	uint64_t seen;
	int add;
} defer_ctx;

static int on_record(void *ctx, const uint8_t *rec, size_t n, cnt_err *err)
{
	defer_ctx *d = ctx;
	cnt_cur c = {rec, rec + n};
	int64_t v;

	(void)err;
	if (cnt_bin_read_long(&c, &v) != 0 || v != rec_n((int)d->seen))
		return cnt_err_set(err, "record %llu is not the one committed", (unsigned long long)d->seen);
	d->seen++;
	return 0;
}

/* add 1: the records seen so far, a header that grows with them; add 2:
 * one that shrinks (200,000 / (seen + 1) bytes, at least 1). */
static int on_header(void *ctx, cnt_writer *w, cnt_err *err)
{
	defer_ctx *d = ctx;
	char v[256];

	if (!d->add)
		return 0;
	if (d->add == 2) {
		uint64_t k = 200000 / (d->seen + 1);

		k = k < 1 ? 1 : k > 255 ? 255 : k;
		memset(v, 'x', k);
		v[k] = 0;
	} else {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)d->seen);
	}
	return cnt_writer_meta(w, "test.seen", v, strlen(v), err);
}

/* A deferred container of n records to fd, as it stands.  On a file open
 * for reading and writing the header is guessed at the first block and
 * the blocks moved at the end if it changed; write-only, spooled. */
static int write_deferred_fd(int fd, int n, cnt_codec_id codec, defer_ctx *d, off_t *before)
{
	struct stat st;
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_writer_hooks h = {on_record, on_header, NULL, d};
	int rc = 0;
	cnt_writer *w = cnt_writer_new(fd, "test", small_schema, codec, CNT_LEVEL_DEFAULT, 0, &err);

	if (w == NULL || cnt_writer_defer(w, &h, &err) != 0)
		rc = -1;
	for (int i = 0; i < n && rc == 0; i++)
		rc = put_record(w, i, &err);
	/* only once, and only before the first record */
	if (rc == 0)
		CHECK_EQ_INT(cnt_writer_defer(w, &h, &err), -1);
	/* what the file held before the end: the guessed header and blocks,
	 * or, spooled, nothing of this container */
	*before = fstat(fd, &st) == 0 ? st.st_size : -1;
	if (rc == 0)
		rc = cnt_writer_finish(w, &err);
	if (rc != 0)
		fprintf(stderr, "deferred writer: %s\n", err.msg);
	cnt_writer_free(w);
	return rc;
}

static int write_deferred(const char *path, int n, defer_ctx *d)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), rc;
	off_t before;

	rc = write_deferred_fd(fd, n, CNT_CODEC_NULL, d, &before);
	close(fd);
	return rc;
}

static void test_deferred_header(void)
{
	static const int sizes[] = {0, 500, 250000};

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		defer_ctx d = {0, 0}, e = {0, 1};
		cnt_buf x, y;
		cnt_err err = {"", CNT_ERR_DATA};
		cnt_reader *r;
		const cnt_meta_kv *kv;
		size_t nkv;
		char seen[32];
		int fd;

		CHECK_EQ_INT(write_file(path_in("plain.avro"), CNT_CODEC_NULL, 0, sizes[k]), 0);
		CHECK_EQ_INT(write_deferred(path_in("deferred.avro"), sizes[k], &d), 0);
		CHECK_EQ_INT((int)d.seen, sizes[k]);
		x = slurp(path_in("plain.avro"));
		y = slurp(path_in("deferred.avro"));
		CHECK(x.len == y.len && memcmp(x.p, y.p, x.len) == 0);
		if (sizes[k] == 250000)
			CHECK(y.len > (9u << 20));
		cnt_buf_release(&x);
		cnt_buf_release(&y);
		/* metadata added at the end is in the header */
		CHECK_EQ_INT(write_deferred(path_in("meta.avro"), sizes[k], &e), 0);
		fd = open(path_in("meta.avro"), O_RDONLY | O_CLOEXEC);
		r = cnt_reader_open(fd, "meta.avro", NULL, &err);
		CHECK(r != NULL);
		if (r != NULL) {
			size_t j;

			nkv = cnt_reader_meta(r, &kv);
			snprintf(seen, sizeof(seen), "%d", sizes[k]);
			for (j = 0; j < nkv && strcmp(kv[j].key, "test.seen") != 0; j++)
				;
			CHECK(j < nkv && kv[j].vlen == strlen(seen) && memcmp(kv[j].val, seen, kv[j].vlen) == 0);
			cnt_reader_free(r);
		}
		close(fd);
	}
}

/* The same file, n records in one or two containers, written four ways:
 * 0 guessed (an owned read-write file), 1 spooled (write-only), 2 spooled
 * with CNT_GUESS_HEADER=0, 3 spooled (read-write but not owned: it could
 * be shared, as standard output can).  Checks which way it went where a
 * block was written before the end (250,000 records). */
static cnt_buf four_ways(const char *name, int n, int twice, int add, cnt_codec_id codec, int way)
{
	int fl = way == 1 ? O_WRONLY : O_RDWR;
	int fd = open(path_in(name), fl | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	defer_ctx a = {0, add}, b = {0, add};
	cnt_buf none = CNT_BUF_INIT;
	off_t first = -1, second = -1, end;

	if (way == 2)
		setenv("CNT_GUESS_HEADER", "0", 1);
	CHECK(fd >= 0);
	if (fd < 0)
		return none;
	if (way != 1 && way != 3)
		cnt_fd_own(fd);
	CHECK_EQ_INT(write_deferred_fd(fd, n, codec, &a, &first), 0);
	end = lseek(fd, 0, SEEK_CUR);
	if (twice)
		CHECK_EQ_INT(write_deferred_fd(fd, n / 3, codec, &b, &second), 0);
	unsetenv("CNT_GUESS_HEADER");
	cnt_fd_disown(fd);
	CHECK_EQ_INT((int)a.seen, n);
	if (n == 250000) {
		CHECK(way == 0 ? first > 0 : first == 0);
		if (twice)
			CHECK(way == 0 ? second > end : second == end);
	}
	close(fd);
	return slurp(path_in(name));
}

/* A guessed header that turned out wrong (longer, or shorter) moves the
 * blocks: the bytes are those of the spooled writer, in every codec, for
 * a second container after a first on the same file too, and the header
 * holds what the end gave. */
static void test_guessed_header(void)
{
	static const cnt_codec_id codecs[] = {CNT_CODEC_NULL, CNT_CODEC_ZSTD, CNT_CODEC_DEFLATE};
	static const int sizes[] = {0, 500, 250000};

	for (size_t c = 0; c < sizeof(codecs) / sizeof(codecs[0]); c++)
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
			for (int add = 0; add <= 2; add++)
				for (int twice = 0; twice <= 1; twice++) {
					cnt_buf g = four_ways("guessed.avro", sizes[k], twice, add, codecs[c], 0);
					cnt_buf s = four_ways("spooled.avro", sizes[k], twice, add, codecs[c], 1);
					cnt_buf o = four_ways("off.avro", sizes[k], twice, add, codecs[c], 2);
					cnt_buf u = four_ways("unowned.avro", sizes[k], twice, add, codecs[c], 3);

					CHECK(g.len > 0 && g.len == s.len && memcmp(g.p, s.p, g.len) == 0);
					CHECK(g.len == o.len && memcmp(g.p, o.p, g.len) == 0);
					CHECK(g.len == u.len && memcmp(g.p, u.p, g.len) == 0);
					if (g.len != s.len || memcmp(g.p, s.p, g.len) != 0)
						fprintf(stderr, "  codec %s, %d records, add %d, twice %d: %zu and %zu bytes\n",
							cnt_codec_name(codecs[c]), sizes[k], add, twice, g.len, s.len);
					cnt_buf_release(&g);
					cnt_buf_release(&s);
					cnt_buf_release(&o);
					cnt_buf_release(&u);
				}
	/* the header written at the end: 250000 records seen */
	{
		cnt_buf g = four_ways("guessed.avro", 250000, 0, 1, CNT_CODEC_ZSTD, 0);
		static const char want[] = "test.seen\x0c" "250000";

		CHECK(g.len > 0 && memmem(g.p, g.len < 4096 ? g.len : 4096, want, sizeof(want) - 1) != NULL);
		cnt_buf_release(&g);
	}
}

static void test_sync_marker_depends_on_schema_and_codec(void)
{
	cnt_buf x, y;

	CHECK_EQ_INT(write_file(path_in("sync-null.avro"), CNT_CODEC_NULL, 0, 3), 0);
	CHECK_EQ_INT(write_file(path_in("sync-zstd.avro"), CNT_CODEC_ZSTD, 0, 3), 0);
	x = slurp(path_in("sync-null.avro"));
	y = slurp(path_in("sync-zstd.avro"));
	/* The last 16 bytes of each file are its sync marker. */
	CHECK(x.len > 16 && y.len > 16);
	if (x.len > 16 && y.len > 16)
		CHECK(memcmp(x.p + x.len - 16, y.p + y.len - 16, 16) != 0);
	cnt_buf_release(&x);
	cnt_buf_release(&y);
}

static void test_header_only(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	int fd = open(path_in("empty.avro"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cnt_writer *w = cnt_writer_new(fd, "empty", small_schema, CNT_CODEC_DEFLATE, CNT_LEVEL_DEFAULT, 0, &err);
	cnt_reader *r;
	cnt_block b;
	const cnt_meta_kv *kv;
	size_t nmeta;
	cnt_buf x;

	CHECK(w != NULL);
	if (w == NULL)
		return;
	CHECK_EQ_INT(cnt_writer_meta(w, "user.key", "v\0x", 3, &err), 0);
	CHECK_EQ_INT(cnt_writer_finish(w, &err), 0);
	CHECK_EQ_INT(cnt_writer_records(w), 0);
	cnt_writer_free(w);
	close(fd);
	x = slurp(path_in("empty.avro"));
	CHECK(x.len > 4 && memcmp(x.p, "Obj\x01", 4) == 0);
	cnt_buf_release(&x);

	fd = open(path_in("empty.avro"), O_RDONLY | O_CLOEXEC);
	r = cnt_reader_open(fd, "empty", NULL, &err);
	CHECK(r != NULL);
	if (r == NULL) {
		close(fd);
		return;
	}
	CHECK_EQ_INT(cnt_reader_codec(r), CNT_CODEC_DEFLATE);
	CHECK_EQ_INT(cnt_reader_container(r), 1);
	nmeta = cnt_reader_meta(r, &kv);
	/* Fixed order: avro.codec, avro.schema, the user's entries, then the
	 * end marker's declaration. */
	CHECK_EQ_INT(nmeta, 4);
	if (nmeta == 4) {
		CHECK_EQ_STR(kv[3].key, CNT_END_MARKER_KEY);
		CHECK(kv[3].vlen == 1 && kv[3].val[0] == '1');
		CHECK_EQ_STR(kv[0].key, "avro.codec");
		CHECK(kv[0].vlen == 7 && memcmp(kv[0].val, "deflate", 7) == 0);
		CHECK_EQ_STR(kv[1].key, "avro.schema");
		CHECK(kv[1].vlen == strlen(small_schema) && memcmp(kv[1].val, small_schema, kv[1].vlen) == 0);
		CHECK_EQ_STR(kv[2].key, "user.key");
		CHECK(kv[2].vlen == 3 && memcmp(kv[2].val, "v\0x", 3) == 0);
	}
	CHECK_EQ_STR(cnt_reader_schema(r)->root->fullname, "test.T");
	CHECK_EQ_INT(cnt_reader_next(r, &b, &err), 0);
	cnt_reader_free(r);
	close(fd);
}

static void test_record_larger_than_block(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	int fd = open(path_in("big.avro"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cnt_writer *w = cnt_writer_new(fd, "big", small_schema, CNT_CODEC_ZSTD, CNT_LEVEL_DEFAULT, 64, &err);
	static char huge[3 << 20];
	cnt_records *in;
	cnt_val v;
	int got = 0, rc;

	CHECK(w != NULL);
	if (w == NULL)
		return;
	for (size_t i = 0; i < sizeof(huge); i++)
		huge[i] = (char)('a' + i % 26);
	for (int i = 0; i < 3; i++) {
		cnt_buf *b = cnt_writer_buf(w);

		CHECK_EQ_INT(cnt_bin_write_long(b, i), 0);
		CHECK_EQ_INT(cnt_bin_write_bytes(b, huge, sizeof(huge) - (size_t)i), 0);
		CHECK_EQ_INT(cnt_writer_commit(w, &err), 0);
	}
	CHECK_EQ_INT(cnt_writer_finish(w, &err), 0);
	CHECK_EQ_INT(cnt_writer_records(w), 3);
	cnt_writer_free(w);
	close(fd);
	/* One record per block: each is bigger than the 64-byte target. */
	CHECK_EQ_INT(count_blocks(path_in("big.avro")), 3);

	fd = open(path_in("big.avro"), O_RDONLY | O_CLOEXEC);
	in = cnt_records_open(fd, "big", NULL, NULL, &err);
	CHECK(in != NULL);
	if (in == NULL) {
		close(fd);
		return;
	}
	while ((rc = cnt_records_next(in, &v, &err)) == 1) {
		CHECK_EQ_INT(v.u.v[0].u.i, got);
		CHECK_EQ_INT(v.u.v[1].n, sizeof(huge) - (size_t)got);
		CHECK(memcmp(v.u.v[1].u.s, huge, v.u.v[1].n) == 0);
		got++;
	}
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(got, 3);
	cnt_records_free(in);
	close(fd);
}

static void test_concatenated_writers(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	const char *p = path_in("concat.avro");
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cnt_reader *r;
	cnt_records *in;
	cnt_block b;
	cnt_val v;
	unsigned containers_seen[3] = {0, 0, 0};
	int got = 0, rc;

	CHECK_EQ_INT(write_set(fd, CNT_CODEC_SNAPPY, 1024, 0, 100), 0);
	CHECK_EQ_INT(write_set(fd, CNT_CODEC_NULL, 1024, 0, 0), 0);  /* header only */
	CHECK_EQ_INT(write_set(fd, CNT_CODEC_BZIP2, 1024, 100, 150), 0);
	close(fd);

	/* Block level: the container number goes 1 -> 3 (2 has no blocks),
	 * and each container's codec is its own. */
	fd = open(p, O_RDONLY | O_CLOEXEC);
	r = cnt_reader_open(fd, p, NULL, &err);
	CHECK(r != NULL);
	if (r != NULL) {
		CHECK_EQ_INT(cnt_reader_container(r), 1);
		while ((rc = cnt_reader_next(r, &b, &err)) == 1) {
			unsigned c = cnt_reader_container(r);

			if (c >= 1 && c <= 3)
				containers_seen[c - 1]++;
			CHECK(c == 1 || c == 3);
			CHECK_EQ_INT(cnt_reader_codec(r), c == 1 ? CNT_CODEC_SNAPPY : CNT_CODEC_BZIP2);
			if (c == 3)
				CHECK(b.block_no >= 1 && b.first_record >= 100);
		}
		CHECK_EQ_INT(rc, 0);
		CHECK_EQ_INT(cnt_reader_container(r), 3);
		CHECK(containers_seen[0] > 1 && containers_seen[1] == 0 && containers_seen[2] > 1);
		cnt_reader_free(r);
	}
	close(fd);

	/* Record level: all 250 records, in order. */
	fd = open(p, O_RDONLY | O_CLOEXEC);
	in = cnt_records_open(fd, p, NULL, NULL, &err);
	CHECK(in != NULL);
	if (in != NULL) {
		while ((rc = cnt_records_next(in, &v, &err)) == 1) {
			CHECK(check_record(&v, got));
			got++;
		}
		CHECK_EQ_INT(rc, 0);
		CHECK_EQ_INT(got, 250);
		cnt_records_free(in);
	}
	close(fd);
	read_back(p, 0, 250, CNT_CODEC_SNAPPY);
}

/* Read-ahead: blocks come out in order, whole, whichever thread
 * decompressed them (a worker, or the reader's caller while it would
 * otherwise wait), with 0, 1 and 2 workers and a caller that is faster or
 * slower than they are; a corrupt block is reported at its place, after
 * every record before it. */
static void test_read_ahead(void)
{
	const char *p = path_in("ahead.avro"), *bad = path_in("ahead-bad.avro");
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cnt_err err = {"", CNT_ERR_DATA};
	uint64_t bad_off = 0, bad_first = 0;
	cnt_buf file;

	CHECK_EQ_INT(write_set(fd, CNT_CODEC_ZSTD, 200, 0, 3000), 0);
	close(fd);
	/* Block 60's payload gets a flipped byte. */
	fd = open(p, O_RDONLY | O_CLOEXEC);
	{
		cnt_reader *r = cnt_reader_open(fd, p, NULL, &err);
		cnt_block b;

		CHECK(r != NULL);
		while (r != NULL && cnt_reader_next(r, &b, &err) == 1)
			if (b.block_no == 60) {
				bad_off = b.offset;
				bad_first = b.first_record;
			}
		cnt_reader_free(r);
	}
	close(fd);
	CHECK(bad_off > 0 && bad_first > 0);
	file = slurp(p);
	CHECK(file.len > bad_off + 12);
	if (file.len > bad_off + 12) {
		file.p[bad_off + 12] ^= 0x5a;
		fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		CHECK(write(fd, file.p, file.len) == (ssize_t)file.len);
		close(fd);
	}
	cnt_buf_release(&file);

	for (int workers = 0; workers <= 2; workers++)
		for (int slow = 0; slow <= 1; slow++)
			for (int corrupt = 0; corrupt <= 1; corrupt++) {
				char n[16];
				cnt_records *in;
				cnt_val v;
				int got = 0, rc = -1;

				snprintf(n, sizeof(n), "%d", workers);
				setenv("CNT_READ_THREADS", n, 1);
				fd = open(corrupt ? bad : p, O_RDONLY | O_CLOEXEC);
				in = cnt_records_open(fd, corrupt ? bad : p, NULL, NULL, &err);
				CHECK(in != NULL);
				while (in != NULL && (rc = cnt_records_next(in, &v, &err)) == 1) {
					if (!check_record(&v, got))
						break;
					if (slow && got % 7 == 0)
						usleep(50);   /* the workers get ahead */
					got++;
				}
				if (!corrupt) {
					CHECK_EQ_INT(rc, 0);
					CHECK_EQ_INT(got, 3000);
				} else {
					CHECK_EQ_INT(rc, -1);
					CHECK_EQ_INT(got, (int)bad_first);
					CHECK(strstr(err.msg, "block 60 ") != NULL);
				}
				cnt_records_free(in);
				close(fd);
			}
	unsetenv("CNT_READ_THREADS");
}

/* A block check (cnt_reader_open_checked): run on the read-ahead threads
 * over every block, its result handed out with the block, in order;
 * classify() once per container header; without read-ahead no block is
 * checked and the caller must check it. */
static int check_classified;
static long check_records;

static int classify_each(void *arg, const cnt_avro_schema *schema)
{
	(void)arg;
	(void)schema;
	return ++check_classified;
}

static int check_each(void *arg, int cls, const cnt_avro_schema *schema, const cnt_block *b, int64_t *bad,
	cnt_err *err)
{
	(void)arg;
	(void)schema;
	__atomic_fetch_add(&check_records, (long)b->count, __ATOMIC_RELAXED);
	if (cls == 1 && b->block_no == 60) {
		*bad = 5;
		return cnt_err_set(err, "block %llu fails", (unsigned long long)b->block_no);
	}
	return 0;
}

static void test_block_check(void)
{
	const char *p = path_in("checked.avro");
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	cnt_block_check chk = {classify_each, check_each, NULL};
	cnt_err err = {"", CNT_ERR_DATA};

	CHECK_EQ_INT(write_set(fd, CNT_CODEC_ZSTD, 200, 0, 3000), 0);
	CHECK_EQ_INT(write_set(fd, CNT_CODEC_SNAPPY, 200, 3000, 500), 0);
	close(fd);
	for (int workers = 0; workers <= 2; workers++) {
		char n[16];
		cnt_reader *r;
		cnt_block b;
		long records = 0;
		int rc = -1, checked = 0, unchecked = 0, failed = 0;
		uint64_t next_first = 0;

		snprintf(n, sizeof(n), "%d", workers);
		setenv("CNT_READ_THREADS", n, 1);
		check_classified = 0;
		check_records = 0;
		fd = open(p, O_RDONLY | O_CLOEXEC);
		r = cnt_reader_open_checked(fd, p, NULL, 0, NULL, 0, &chk, &err);
		CHECK(r != NULL);
		while (r != NULL && (rc = cnt_reader_next(r, &b, &err)) == 1) {
			CHECK(b.first_record == next_first);   /* in order */
			next_first += (uint64_t)b.count;
			records += (long)b.count;
			if (!b.checked) {
				unchecked++;
				CHECK(b.check_err == NULL);
				continue;
			}
			checked++;
			if (cnt_reader_container(r) == 1 && b.block_no == 60) {
				failed++;
				CHECK(b.check_err != NULL);
				CHECK_EQ_INT((int)b.bad_record, 5);
				CHECK(b.check_err != NULL && strcmp(b.check_err->msg, "block 60 fails") == 0);
			} else {
				CHECK(b.check_err == NULL);
			}
		}
		CHECK_EQ_INT(rc, 0);
		CHECK_EQ_INT((int)records, 3500);
		CHECK_EQ_INT(check_classified, 2);   /* one per container */
		if (workers == 0) {
			/* read in the caller's thread: nothing checked */
			CHECK_EQ_INT(checked, 0);
			CHECK_EQ_INT((int)check_records, 0);
		} else {
			CHECK_EQ_INT(unchecked, 0);
			CHECK_EQ_INT(failed, 1);
			CHECK_EQ_INT((int)check_records, 3500);
		}
		cnt_reader_free(r);
		close(fd);
	}
	unsetenv("CNT_READ_THREADS");
}

/* Reads path to its end: the records, or -1 with err. */
static long read_all(const char *path, cnt_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	cnt_reader *r = cnt_reader_open(fd, path, NULL, err);
	cnt_block b;
	long n = 0;
	int rc;

	if (r == NULL) {
		close(fd);
		return -1;
	}
	while ((rc = cnt_reader_next(r, &b, err)) >= 1)
		if (rc == 1)
			n += (long)b.count;
	cnt_reader_free(r);
	close(fd);
	return rc == 0 ? n : -1;
}

static int copy_prefix(const char *from, const char *to, off_t n, const void *tail, size_t tn)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char buf[1 << 16];
	int rc = in >= 0 && out >= 0 ? 0 : -1;

	while (rc == 0 && n > 0) {
		ssize_t k = read(in, buf, (size_t)(n < (off_t)sizeof(buf) ? n : (off_t)sizeof(buf)));

		if (k <= 0 || write(out, buf, (size_t)k) != k)
			rc = -1;
		n -= k;
	}
	if (rc == 0 && tn && write(out, tail, tn) != (ssize_t)tn)
		rc = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc;
}

static void test_end_marker(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	struct stat st;
	char whole[256];
	static const uint8_t junk_block[2 + CNT_SYNC_SIZE] = {0};

	snprintf(whole, sizeof(whole), "%s", path_in("marked.avro"));
	/* null codec: the marker is 0x00 0x00 and the sync marker, 18 bytes */
	CHECK_EQ_INT(write_file(whole, CNT_CODEC_NULL, 512, 100), 0);
	CHECK_EQ_INT(read_all(whole, &err), 100);
	CHECK_EQ_INT(stat(whole, &st), 0);
	/* cut at the block boundary before the marker: refused */
	CHECK_EQ_INT(copy_prefix(whole, path_in("cut.avro"), st.st_size - 18, NULL, 0), 0);
	CHECK_EQ_INT(read_all(path_in("cut.avro"), &err), -1);
	CHECK(strstr(err.msg, "without the end marker") != NULL);
	/* a second container after a cut one: refused where it starts */
	{
		int fd = open(path_in("cut.avro"), O_WRONLY | O_APPEND | O_CLOEXEC);

		CHECK_EQ_INT(write_set(fd, CNT_CODEC_DEFLATE, 512, 0, 5), 0);
		close(fd);
	}
	CHECK_EQ_INT(read_all(path_in("cut.avro"), &err), -1);
	CHECK(strstr(err.msg, "a container ends without the end marker") != NULL);
	/* a block after the marker: corrupt (an empty block with the sync
	 * marker of the file, copied from its last 16 bytes) */
	{
		uint8_t tail[2 + CNT_SYNC_SIZE];
		int fd = open(whole, O_RDONLY | O_CLOEXEC);

		memcpy(tail, junk_block, 2);
		CHECK_EQ_INT((int)pread(fd, tail + 2, CNT_SYNC_SIZE, st.st_size - CNT_SYNC_SIZE), CNT_SYNC_SIZE);
		close(fd);
		CHECK_EQ_INT(copy_prefix(whole, path_in("after.avro"), st.st_size, tail, sizeof(tail)), 0);
		CHECK_EQ_INT(read_all(path_in("after.avro"), &err), -1);
		CHECK(strstr(err.msg, "after the end marker") != NULL);
	}
	/* every codec: the marker is read (and skipped) */
	for (size_t k = 0; k < NCODECS; k++) {
		CHECK_EQ_INT(write_file(path_in("codec.avro"), all_codecs[k], 512, 50), 0);
		CHECK_EQ_INT(read_all(path_in("codec.avro"), &err), 50);
	}
}

static void test_writer_rejects_bad_schema(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_writer *w = cnt_writer_new(STDOUT_FILENO, "x", "{\"type\": \"recrod\"}", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, 0, &err);

	/* container.h: "Returns NULL with err set on a bad schema". */
	CHECK(w == NULL);
	cnt_writer_free(w);
}

/* ---- schemas -------------------------------------------------------- */

static void test_canonical_form(void)
{
	/* Namespaces inherited and overridden, a dotted name, references by
	 * short and full name, a recursive reference, doc/aliases/defaults/
	 * logicalType to strip, primitives in object form. */
	static const char js[] =
		"{\"type\": \"record\", \"name\": \"Outer\", \"namespace\": \"com.example\", \"doc\": \"d\", \"aliases\": [\"Old\"],\n"
		" \"fields\": [\n"
		"  {\"name\": \"id\", \"type\": {\"type\": \"fixed\", \"name\": \"MD5\", \"size\": 16}, \"doc\": \"d\"},\n"
		"  {\"name\": \"inner\", \"type\": {\"type\": \"record\", \"name\": \"Inner\", \"namespace\": \"other.ns\", \"fields\": [\n"
		"      {\"name\": \"color\", \"type\": {\"type\": \"enum\", \"name\": \"Color\", \"symbols\": [\"RED\", \"GREEN\"], \"default\": \"RED\"}},\n"
		"      {\"name\": \"hash\", \"type\": \"com.example.MD5\"},\n"
		"      {\"name\": \"next\", \"type\": [\"null\", \"Inner\"]}\n"
		"  ]}},\n"
		"  {\"name\": \"colors\", \"type\": {\"type\": \"array\", \"items\": \"other.ns.Color\"}},\n"
		"  {\"name\": \"when\", \"type\": {\"type\": \"map\", \"values\": {\"type\": \"long\", \"logicalType\": \"timestamp-millis\"}}},\n"
		"  {\"name\": \"self\", \"type\": [\"null\", \"Outer\"], \"default\": null},\n"
		"  {\"name\": \"dotted\", \"type\": {\"type\": \"record\", \"name\": \"x.y.Z\", \"fields\": [\n"
		"      {\"name\": \"f\", \"type\": {\"type\": \"fixed\", \"name\": \"Four\", \"size\": 4}}]}},\n"
		"  {\"name\": \"md5again\", \"type\": \"MD5\"},\n"
		"  {\"name\": \"prim\", \"type\": {\"type\": \"string\"}}\n"
		" ]}";
	/* Written by hand from the specification's rules: [PRIMITIVES],
	 * [FULLNAMES], [STRIP], [ORDER] name type fields symbols items values
	 * size, [WHITESPACE]; a named type already written is its full name. */
	static const char want[] =
		"{\"name\":\"com.example.Outer\",\"type\":\"record\",\"fields\":["
		"{\"name\":\"id\",\"type\":{\"name\":\"com.example.MD5\",\"type\":\"fixed\",\"size\":16}},"
		"{\"name\":\"inner\",\"type\":{\"name\":\"other.ns.Inner\",\"type\":\"record\",\"fields\":["
		"{\"name\":\"color\",\"type\":{\"name\":\"other.ns.Color\",\"type\":\"enum\",\"symbols\":[\"RED\",\"GREEN\"]}},"
		"{\"name\":\"hash\",\"type\":\"com.example.MD5\"},"
		"{\"name\":\"next\",\"type\":[\"null\",\"other.ns.Inner\"]}]}},"
		"{\"name\":\"colors\",\"type\":{\"type\":\"array\",\"items\":\"other.ns.Color\"}},"
		"{\"name\":\"when\",\"type\":{\"type\":\"map\",\"values\":\"long\"}},"
		"{\"name\":\"self\",\"type\":[\"null\",\"com.example.Outer\"]},"
		"{\"name\":\"dotted\",\"type\":{\"name\":\"x.y.Z\",\"type\":\"record\",\"fields\":["
		"{\"name\":\"f\",\"type\":{\"name\":\"x.y.Four\",\"type\":\"fixed\",\"size\":4}}]}},"
		"{\"name\":\"md5again\",\"type\":\"com.example.MD5\"},"
		"{\"name\":\"prim\",\"type\":\"string\"}]}";
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_avro_schema *s = cnt_avro_schema_parse(js, strlen(js), &err);
	cnt_buf out = CNT_BUF_INIT;

	CHECK(s != NULL);
	if (s == NULL) {
		fprintf(stderr, "parse: %s\n", err.msg);
		return;
	}
	CHECK_EQ_INT(cnt_schema_canonical(s->root, &out), 0);
	CHECK_EQ_INT(cnt_buf_putc(&out, 0), 0);
	CHECK_EQ_STR((const char *)out.p, want);
	/* The same node is shared by every reference. */
	CHECK(s->root->fields[1].type->fields[2].type->branches[1] == s->root->fields[1].type);
	CHECK(s->root->fields[6].type == s->root->fields[0].type);
	cnt_buf_release(&out);
	cnt_avro_schema_free(s);

	/* The specification's own simple cases. */
	{
		static const struct { const char *in, *want; } cases[] = {
			{"\"int\"", "\"int\""},
			{"{\"type\": \"int\"}", "\"int\""},
			{"{\"type\": \"array\", \"items\": {\"type\": \"bytes\"}}", "{\"type\":\"array\",\"items\":\"bytes\"}"},
			{"[\"null\", {\"type\": \"long\", \"logicalType\": \"timestamp-micros\"}]", "[\"null\",\"long\"]"},
			{"{\"type\": \"enum\", \"symbols\": [\"A\"], \"name\": \"E\", \"namespace\": \"\"}",
			 "{\"name\":\"E\",\"type\":\"enum\",\"symbols\":[\"A\"]}"},
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			s = cnt_avro_schema_parse(cases[i].in, strlen(cases[i].in), &err);
			CHECK(s != NULL);
			if (s == NULL)
				continue;
			out.len = 0;
			CHECK_EQ_INT(cnt_schema_canonical(s->root, &out), 0);
			CHECK_EQ_INT(cnt_buf_putc(&out, 0), 0);
			CHECK_EQ_STR((const char *)out.p, cases[i].want);
			cnt_avro_schema_free(s);
		}
		cnt_buf_release(&out);
	}
}

static void test_builtin_schema_parses(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_avro_schema *s = cnt_avro_schema_parse(cnt_schema_counting_event, strlen(cnt_schema_counting_event), &err);

	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK_EQ_STR(s->root->fullname, "cnt.CountingEvent");
	CHECK_EQ_INT(s->root->nfields, 16);
	CHECK_EQ_INT(cnt_schema_field_index(s->root, "event_id"), 0);
	CHECK_EQ_INT(cnt_schema_field_index(s->root, "attrs"), 15);
	CHECK_EQ_INT(cnt_schema_field_index(s->root, "nope"), -1);
	CHECK_EQ_INT(s->root->fields[8].type->logical, CNT_LT_TIMESTAMP_MILLIS);
	cnt_avro_schema_free(s);
}

/* Parses js, expects failure, and checks the message holds each of the
 * NULL-terminated fragments. */
static void expect_schema_error(const char *js, const char *frag1, const char *frag2)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_avro_schema *s = cnt_avro_schema_parse(js, strlen(js), &err);

	CHECK(s == NULL);
	cnt_avro_schema_free(s);
	if (strstr(err.msg, frag1) == NULL || (frag2 && strstr(err.msg, frag2) == NULL)) {
		fprintf(stderr, "schema error for %s\n  is \"%s\"\n  expected \"%s\"%s%s\n", js, err.msg, frag1,
			frag2 ? " and " : "", frag2 ? frag2 : "");
		CHECK(!"schema error lacks the expected text");
	}
}

static void test_schema_errors_name_the_path(void)
{
	expect_schema_error("{\"type\": \"record\", \"name\": \"R\", \"fields\": ["
		"{\"name\": \"a\", \"type\": \"int\"},"
		"{\"name\": \"b\", \"type\": {\"type\": \"array\", \"items\": \"nosuch\"}}]}",
		"schema .b.items:", "'nosuch'");
	expect_schema_error("{\"type\": \"record\", \"name\": \"R\", \"fields\": ["
		"{\"name\": \"u\", \"type\": [\"null\", \"string\", \"null\"]}]}",
		"schema .u[2]:", "null");
	expect_schema_error("{\"type\": \"enum\", \"name\": \"E\", \"symbols\": [\"A\", \"A\"]}",
		"schema $:", "'A' appears twice");
	expect_schema_error("{\"type\": \"record\", \"name\": \"R\", \"fields\": ["
		"{\"name\": \"x\", \"type\": {\"type\": \"record\", \"name\": \"S\", \"fields\": ["
		"{\"name\": \"y\", \"type\": {\"type\": \"fixed\", \"name\": \"F\"}}]}}]}",
		"schema .x.y:", "size");
	expect_schema_error("{\"type\": \"record\", \"name\": \"R\", \"fields\": ["
		"{\"name\": \"x\", \"type\": \"long\"}, {\"name\": \"x\", \"type\": \"int\"}]}",
		"'x'", "twice");
	expect_schema_error("{\"type\": \"record\", \"name\": \"9bad\", \"fields\": []}", "name", NULL);
	expect_schema_error("{\"type\": \"record\", \"name\": \"R\", \"fields\": [", "not valid JSON", NULL);
	expect_schema_error("{\"type\": \"record\", \"name\": \"R\", \"fields\": [{\"name\": \"r\", \"type\": "
		"{\"type\": \"record\", \"name\": \"R\", \"fields\": []}}]}", "'R'", "defined twice");
}

/* ---- resolution ----------------------------------------------------- */

typedef struct resolved {
	cnt_avro_schema *w, *r;
	cnt_plan *plan;
	cnt_arena arena;
	cnt_limits lim;
	cnt_err err;
} resolved;

static int resolve(resolved *x, const char *wjs, const char *rjs)
{
	memset(x, 0, sizeof(*x));
	x->lim = cnt_limits_default();
	cnt_arena_init(&x->arena, 0);
	x->w = cnt_avro_schema_parse(wjs, strlen(wjs), &x->err);
	x->r = x->w ? cnt_avro_schema_parse(rjs, strlen(rjs), &x->err) : NULL;
	if (x->w == NULL || x->r == NULL) {
		fprintf(stderr, "schema: %s\n", x->err.msg);
		return -1;
	}
	x->plan = cnt_plan_new(x->w->root, x->r->root, &x->err);
	return x->plan ? 0 : -1;
}

static int decode_buf(resolved *x, const cnt_buf *b, cnt_val *v)
{
	cnt_cur c = {b->p, b->p + b->len};
	int rc;

	cnt_arena_reset(&x->arena);
	rc = cnt_plan_decode(x->plan, &c, &x->arena, &x->lim, v, &x->err);
	if (rc == 0 && c.p != c.end) {
		fprintf(stderr, "decode left %zu bytes\n", (size_t)(c.end - c.p));
		return -1;
	}
	return rc;
}

static void resolved_free(resolved *x)
{
	cnt_plan_free(x->plan);
	cnt_avro_schema_free(x->w);
	cnt_avro_schema_free(x->r);
	cnt_arena_release(&x->arena);
}

static void test_promotions(void)
{
	resolved x;
	cnt_buf b = CNT_BUF_INIT;
	cnt_val v;
	static const int64_t ints[] = {0, -1, 1, INT32_MAX, INT32_MIN, 16777217};

	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		b.len = 0;
		cnt_bin_write_long(&b, ints[i]);
		CHECK_EQ_INT(resolve(&x, "\"int\"", "\"long\""), 0);
		CHECK(x.plan && decode_buf(&x, &b, &v) == 0 && v.type == CNT_T_LONG && v.u.i == ints[i]);
		resolved_free(&x);
		CHECK_EQ_INT(resolve(&x, "\"int\"", "\"double\""), 0);
		CHECK(x.plan && decode_buf(&x, &b, &v) == 0 && v.type == CNT_T_DOUBLE && v.u.d == (double)ints[i]);
		resolved_free(&x);
		/* A float holds 24 bits: 16777217 reads as 16777216. */
		CHECK_EQ_INT(resolve(&x, "\"int\"", "\"float\""), 0);
		CHECK(x.plan && decode_buf(&x, &b, &v) == 0 && v.type == CNT_T_FLOAT);
		CHECK(v.u.d == (double)(float)ints[i]);
		resolved_free(&x);
	}
	/* long -> double, float -> double */
	b.len = 0;
	cnt_bin_write_long(&b, INT64_C(1) << 53);
	CHECK_EQ_INT(resolve(&x, "\"long\"", "\"double\""), 0);
	CHECK(x.plan && decode_buf(&x, &b, &v) == 0 && v.u.d == 9007199254740992.0);
	resolved_free(&x);
	{
		float f = 0.1f;

		b.len = 0;
		cnt_buf_append(&b, &f, 4);
		CHECK_EQ_INT(resolve(&x, "\"float\"", "\"double\""), 0);
		CHECK(x.plan && decode_buf(&x, &b, &v) == 0 && v.type == CNT_T_DOUBLE && v.u.d == (double)0.1f);
		resolved_free(&x);
	}
	/* Narrowing is not a promotion. */
	CHECK_EQ_INT(resolve(&x, "\"long\"", "\"int\""), -1);
	CHECK(strstr(x.err.msg, "long") && strstr(x.err.msg, "int"));
	resolved_free(&x);
	CHECK_EQ_INT(resolve(&x, "\"double\"", "\"float\""), -1);
	resolved_free(&x);
	cnt_buf_release(&b);
}

static void test_string_bytes(void)
{
	resolved x;
	cnt_buf b = CNT_BUF_INIT;
	cnt_val v;

	cnt_bin_write_bytes(&b, "h\xc3\xa9\0!", 5);
	CHECK_EQ_INT(resolve(&x, "\"string\"", "\"bytes\""), 0);
	CHECK(x.plan && decode_buf(&x, &b, &v) == 0 && v.type == CNT_T_BYTES && v.n == 5 &&
		memcmp(v.u.s, "h\xc3\xa9\0!", 5) == 0);
	resolved_free(&x);
	CHECK_EQ_INT(resolve(&x, "\"bytes\"", "\"string\""), 0);
	CHECK(x.plan && decode_buf(&x, &b, &v) == 0 && v.type == CNT_T_STRING && v.n == 5);
	resolved_free(&x);
	cnt_buf_release(&b);
}

static void test_enum_resolution(void)
{
	static const char w[] = "{\"type\": \"enum\", \"name\": \"E\", \"symbols\": [\"A\", \"B\", \"C\"]}";
	static const char r[] = "{\"type\": \"enum\", \"name\": \"E\", \"symbols\": [\"C\", \"A\", \"D\"], \"default\": \"D\"}";
	static const char r_nodef[] = "{\"type\": \"enum\", \"name\": \"E\", \"symbols\": [\"C\", \"A\"]}";
	static const int want[] = {1, 2, 0}; /* A -> 1, B -> default D (2), C -> 0 */
	resolved x;
	cnt_buf b = CNT_BUF_INIT;
	cnt_val v;

	CHECK_EQ_INT(resolve(&x, w, r), 0);
	for (int i = 0; i < 3 && x.plan; i++) {
		b.len = 0;
		cnt_bin_write_long(&b, i);
		CHECK(decode_buf(&x, &b, &v) == 0 && v.type == CNT_T_ENUM);
		CHECK_EQ_INT(v.n, want[i]);
	}
	resolved_free(&x);
	/* Without a default, B fails only when a datum uses it. */
	CHECK_EQ_INT(resolve(&x, w, r_nodef), 0);
	if (x.plan) {
		b.len = 0;
		cnt_bin_write_long(&b, 2);
		CHECK(decode_buf(&x, &b, &v) == 0 && v.n == 0);
		b.len = 0;
		cnt_bin_write_long(&b, 1);
		CHECK_EQ_INT(decode_buf(&x, &b, &v), -1);
		CHECK(strstr(x.err.msg, "'B'") != NULL);
		b.len = 0;
		cnt_bin_write_long(&b, 3);
		CHECK_EQ_INT(decode_buf(&x, &b, &v), -1);
		CHECK(strstr(x.err.msg, "out of range") != NULL);
	}
	resolved_free(&x);
	cnt_buf_release(&b);
}

static void test_union_branch_selection(void)
{
	resolved x;
	cnt_buf b = CNT_BUF_INIT;
	cnt_val v;

	cnt_bin_write_long(&b, 42);
	/* An exact match wins over an earlier promotion. */
	CHECK_EQ_INT(resolve(&x, "\"int\"", "[\"null\", \"long\", \"int\"]"), 0);
	CHECK(x.plan && decode_buf(&x, &b, &v) == 0 && v.type == CNT_T_UNION && v.n == 2 &&
		v.u.v->type == CNT_T_INT && v.u.v->u.i == 42);
	resolved_free(&x);
	/* With no exact match, the first that promotes. */
	CHECK_EQ_INT(resolve(&x, "\"int\"", "[\"null\", \"string\", \"double\", \"long\"]"), 0);
	CHECK(x.plan && decode_buf(&x, &b, &v) == 0 && v.n == 2 && v.u.v->type == CNT_T_DOUBLE &&
		v.u.v->u.d == 42.0);
	resolved_free(&x);
	/* Nothing fits: a compile-time error. */
	CHECK_EQ_INT(resolve(&x, "\"int\"", "[\"null\", \"string\"]"), -1);
	resolved_free(&x);
	/* Writer union -> reader union, branches in another order. */
	b.len = 0;
	cnt_bin_write_long(&b, 1);
	cnt_bin_write_bytes(&b, "xy", 2);
	CHECK_EQ_INT(resolve(&x, "[\"null\", \"string\"]", "[\"string\", \"null\"]"), 0);
	CHECK(x.plan && decode_buf(&x, &b, &v) == 0 && v.type == CNT_T_UNION && v.n == 0 &&
		v.u.v->type == CNT_T_STRING && v.u.v->n == 2);
	resolved_free(&x);
	/* Writer union -> non-union reader: a branch that cannot resolve
	 * fails only when used. */
	CHECK_EQ_INT(resolve(&x, "[\"null\", \"string\"]", "\"string\""), 0);
	CHECK(x.plan && decode_buf(&x, &b, &v) == 0 && v.type == CNT_T_STRING && v.n == 2);
	b.len = 0;
	cnt_bin_write_long(&b, 0);
	CHECK(x.plan && decode_buf(&x, &b, &v) == -1);
	resolved_free(&x);
	cnt_buf_release(&b);
}

static void test_record_fields(void)
{
	static const char w[] = "{\"type\": \"record\", \"name\": \"W\", \"fields\": ["
		"{\"name\": \"skip\", \"type\": {\"type\": \"array\", \"items\": \"double\"}},"
		"{\"name\": \"b\", \"type\": \"string\"},"
		"{\"name\": \"a\", \"type\": \"int\"}]}";
	static const char r[] = "{\"type\": \"record\", \"name\": \"R\", \"fields\": ["
		"{\"name\": \"a\", \"type\": \"long\"},"
		"{\"name\": \"c\", \"type\": [\"null\", \"string\"], \"default\": null},"
		"{\"name\": \"d\", \"type\": \"string\", \"default\": \"dflt\"},"
		"{\"name\": \"bee\", \"aliases\": [\"b\"], \"type\": \"string\"}]}";
	static const char r_missing[] = "{\"type\": \"record\", \"name\": \"R\", \"fields\": ["
		"{\"name\": \"a\", \"type\": \"long\"}, {\"name\": \"needed\", \"type\": \"long\"}]}";
	resolved x;
	cnt_buf b = CNT_BUF_INIT;
	cnt_val v;
	double d = 1.5;

	cnt_bin_write_long(&b, 2);          /* skip: 2 doubles */
	cnt_buf_append(&b, &d, 8);
	cnt_buf_append(&b, &d, 8);
	cnt_bin_write_long(&b, 0);
	cnt_bin_write_bytes(&b, "bv", 2);   /* b */
	cnt_bin_write_long(&b, -7);         /* a */
	CHECK_EQ_INT(resolve(&x, w, r), 0);
	if (x.plan) {
		CHECK_EQ_INT(decode_buf(&x, &b, &v), 0);
		CHECK(v.type == CNT_T_RECORD && v.n == 4);
		CHECK(v.u.v[0].type == CNT_T_LONG && v.u.v[0].u.i == -7);
		CHECK(v.u.v[1].type == CNT_T_UNION && v.u.v[1].n == 0);
		CHECK(v.u.v[2].type == CNT_T_STRING && v.u.v[2].n == 4 && memcmp(v.u.v[2].u.s, "dflt", 4) == 0);
		CHECK(v.u.v[3].type == CNT_T_STRING && v.u.v[3].n == 2 && memcmp(v.u.v[3].u.s, "bv", 2) == 0);
	}
	resolved_free(&x);
	CHECK_EQ_INT(resolve(&x, w, r_missing), -1);
	CHECK(strstr(x.err.msg, "'needed'") != NULL && strstr(x.err.msg, "no default") != NULL);
	resolved_free(&x);
	cnt_buf_release(&b);
}

static const char list_schema[] =
	"{\"type\": \"record\", \"name\": \"Node\", \"fields\": ["
	"{\"name\": \"v\", \"type\": \"long\"}, {\"name\": \"next\", \"type\": [\"null\", \"Node\"]}]}";

static void write_list(cnt_buf *b, int n)
{
	for (int i = 1; i <= n; i++) {
		cnt_bin_write_long(b, i * 10);
		cnt_bin_write_long(b, i < n ? 1 : 0);
	}
}

static void test_recursive_schema(void)
{
	resolved x;
	cnt_buf b = CNT_BUF_INIT;
	cnt_val v;

	write_list(&b, 5);
	CHECK_EQ_INT(resolve(&x, list_schema, list_schema), 0);
	if (x.plan && decode_buf(&x, &b, &v) == 0) {
		const cnt_val *n = &v;
		int len = 0;

		for (;;) {
			CHECK(n->type == CNT_T_RECORD && n->n == 2);
			len++;
			CHECK_EQ_INT(n->u.v[0].u.i, len * 10);
			CHECK(n->u.v[1].type == CNT_T_UNION);
			if (n->u.v[1].n == 0)
				break;
			n = n->u.v[1].u.v;
		}
		CHECK_EQ_INT(len, 5);
	} else {
		CHECK(!"linked list did not decode");
	}
	resolved_free(&x);
	cnt_buf_release(&b);
}

static void test_bounds(void)
{
	resolved x;
	cnt_buf b = CNT_BUF_INIT;
	cnt_val v;

	/* max_collection: 5 items against a bound of 4, in one block and in
	 * two blocks of a map. */
	cnt_bin_write_long(&b, 5);
	for (int i = 0; i < 5; i++)
		cnt_bin_write_long(&b, i);
	cnt_bin_write_long(&b, 0);
	CHECK_EQ_INT(resolve(&x, "{\"type\": \"array\", \"items\": \"long\"}", "{\"type\": \"array\", \"items\": \"long\"}"), 0);
	x.lim.max_collection = 5;
	CHECK(x.plan && decode_buf(&x, &b, &v) == 0 && v.n == 5);
	x.lim.max_collection = 4;
	CHECK(x.plan && decode_buf(&x, &b, &v) == -1 && strstr(x.err.msg, "max_collection"));
	resolved_free(&x);
	b.len = 0;
	for (int blk = 0; blk < 2; blk++) {
		cnt_bin_write_long(&b, 3);
		for (int i = 0; i < 3; i++) {
			cnt_bin_write_bytes(&b, "k", 1);
			cnt_bin_write_long(&b, i);
		}
	}
	cnt_bin_write_long(&b, 0);
	CHECK_EQ_INT(resolve(&x, "{\"type\": \"map\", \"values\": \"int\"}", "{\"type\": \"map\", \"values\": \"long\"}"), 0);
	x.lim.max_collection = 6;
	CHECK(x.plan && decode_buf(&x, &b, &v) == 0 && v.n == 6);
	x.lim.max_collection = 5;
	CHECK(x.plan && decode_buf(&x, &b, &v) == -1 && strstr(x.err.msg, "max_collection"));
	resolved_free(&x);
	/* ... and when the collection is skipped rather than read. */
	CHECK_EQ_INT(resolve(&x, "{\"type\": \"record\", \"name\": \"R\", \"fields\": ["
		"{\"name\": \"m\", \"type\": {\"type\": \"map\", \"values\": \"int\"}}]}",
		"{\"type\": \"record\", \"name\": \"R\", \"fields\": []}"), 0);
	x.lim.max_collection = 5;
	CHECK(x.plan && decode_buf(&x, &b, &v) == -1 && strstr(x.err.msg, "max_collection"));
	resolved_free(&x);

	/* max_string */
	b.len = 0;
	cnt_bin_write_bytes(&b, "0123456789abcdef", 16);
	CHECK_EQ_INT(resolve(&x, "\"string\"", "\"string\""), 0);
	x.lim.max_string = 16;
	CHECK(x.plan && decode_buf(&x, &b, &v) == 0 && v.n == 16);
	x.lim.max_string = 15;
	CHECK(x.plan && decode_buf(&x, &b, &v) == -1 && strstr(x.err.msg, "max_string"));
	resolved_free(&x);

	/* max_depth: a 10-node list nests 2 levels per node. */
	b.len = 0;
	write_list(&b, 10);
	CHECK_EQ_INT(resolve(&x, list_schema, list_schema), 0);
	x.lim.max_depth = 64;
	CHECK(x.plan && decode_buf(&x, &b, &v) == 0);
	x.lim.max_depth = 5;
	CHECK(x.plan && decode_buf(&x, &b, &v) == -1 && strstr(x.err.msg, "max_depth"));
	resolved_free(&x);
	cnt_buf_release(&b);
}

static void test_container_bounds(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_limits lim = cnt_limits_default();
	int fd;
	cnt_reader *r;
	cnt_block b;

	/* One block of ~60 KB (null codec). */
	CHECK_EQ_INT(write_file(path_in("bounds.avro"), CNT_CODEC_NULL, 1u << 20, 1000), 0);
	fd = open(path_in("bounds.avro"), O_RDONLY | O_CLOEXEC);
	lim.max_block_bytes = 4096;
	r = cnt_reader_open(fd, "bounds.avro", &lim, &err);
	CHECK(r != NULL);
	if (r != NULL) {
		CHECK_EQ_INT(cnt_reader_next(r, &b, &err), -1);
		CHECK(strstr(err.msg, "max_block_bytes") != NULL && strstr(err.msg, "bounds.avro") != NULL);
		cnt_reader_free(r);
	}
	close(fd);

	/* The decompressed size is bounded separately. */
	CHECK_EQ_INT(write_file(path_in("bounds.zst.avro"), CNT_CODEC_ZSTD, 1u << 20, 1000), 0);
	fd = open(path_in("bounds.zst.avro"), O_RDONLY | O_CLOEXEC);
	lim = cnt_limits_default();
	lim.max_block_decoded = 4096;
	r = cnt_reader_open(fd, "bounds.zst.avro", &lim, &err);
	CHECK(r != NULL);
	if (r != NULL) {
		CHECK_EQ_INT(cnt_reader_next(r, &b, &err), -1);
		CHECK(strstr(err.msg, "4096") != NULL);
		cnt_reader_free(r);
	}
	close(fd);

	/* The header (the schema alone is ~150 bytes). */
	fd = open(path_in("bounds.avro"), O_RDONLY | O_CLOEXEC);
	lim = cnt_limits_default();
	lim.max_header = 64;
	r = cnt_reader_open(fd, "bounds.avro", &lim, &err);
	CHECK(r == NULL);
	CHECK(strstr(err.msg, "max_header") != NULL);
	close(fd);
}

/* ---- output files --------------------------------------------------- */

/* The number of entries in dir other than . and .. whose name starts with
 * prefix. */
static int count_entries(const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			n++;
	closedir(d);
	return n;
}

static void test_outfile(void)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_out o;
	struct stat st;
	const char *p = path_in("result.txt");
	cnt_buf x;

	/* Commit: absent (no file under the final name) until commit. */
	CHECK_EQ_INT(cnt_out_open(&o, p, &err), 0);
	CHECK(o.fd > STDOUT_FILENO && o.is_file);
	CHECK(stat(p, &st) != 0 && errno == ENOENT);
	CHECK_EQ_INT(count_entries(".result.txt."), 1);
	CHECK_EQ_INT(cnt_write_all(o.fd, "hello\n", 6), 0);
	CHECK(stat(p, &st) != 0);
	CHECK_EQ_INT(cnt_out_commit(&o, &err), 0);
	CHECK(stat(p, &st) == 0 && st.st_size == 6);
	CHECK_EQ_INT(count_entries(".result.txt."), 0);
	x = slurp(p);
	CHECK(x.len == 6 && memcmp(x.p, "hello\n", 6) == 0);
	cnt_buf_release(&x);

	/* Replacing: the old content stays until commit, then is replaced. */
	CHECK_EQ_INT(cnt_out_open(&o, p, &err), 0);
	CHECK_EQ_INT(cnt_write_all(o.fd, "new content\n", 12), 0);
	x = slurp(p);
	CHECK(x.len == 6 && memcmp(x.p, "hello\n", 6) == 0);
	cnt_buf_release(&x);
	CHECK_EQ_INT(cnt_out_commit(&o, &err), 0);
	x = slurp(p);
	CHECK(x.len == 12 && memcmp(x.p, "new content\n", 12) == 0);
	cnt_buf_release(&x);

	/* Abort: the temporary file goes, an existing file is untouched, and
	 * a new name never appears. */
	CHECK_EQ_INT(cnt_out_open(&o, p, &err), 0);
	CHECK_EQ_INT(cnt_write_all(o.fd, "junk", 4), 0);
	cnt_out_abort(&o);
	cnt_out_abort(&o); /* safe twice */
	CHECK_EQ_INT(count_entries(".result.txt."), 0);
	x = slurp(p);
	CHECK(x.len == 12);
	cnt_buf_release(&x);
	CHECK_EQ_INT(cnt_out_open(&o, path_in("never.txt"), &err), 0);
	cnt_out_abort(&o);
	CHECK(stat(path_in("never.txt"), &st) != 0);
	CHECK_EQ_INT(count_entries(".never.txt."), 0);

	/* A directory that does not exist: an error naming the path. */
	CHECK_EQ_INT(cnt_out_open(&o, path_in("no/such/dir.txt"), &err), -1);
	CHECK(strstr(err.msg, "dir.txt") != NULL);
	unlink(p);
}

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			unlink(path_in(e->d_name));
	closedir(d);
	rmdir(dir);
}

/* A container of `blocks` blocks of `count` records in `len` bytes each,
 * after a header whose metadata is one entry written in the negative-count
 * form (its byte size too), as a writer may; returns its size. */
static size_t container(uint8_t *p, int blocks, int64_t count, int64_t len)
{
	static const char key[] = "avro.codec", val[] = "null";
	size_t n = 0;

	memcpy(p, "Obj\x01", 4);
	n = 4;
	n += cnt_bin_put_long(p + n, -1);
	n += cnt_bin_put_long(p + n, 2 + (int64_t)strlen(key) + (int64_t)strlen(val));
	n += cnt_bin_put_long(p + n, (int64_t)strlen(key));
	memcpy(p + n, key, strlen(key));
	n += strlen(key);
	n += cnt_bin_put_long(p + n, (int64_t)strlen(val));
	memcpy(p + n, val, strlen(val));
	n += strlen(val);
	n += cnt_bin_put_long(p + n, 0);
	memset(p + n, 0xa5, 16);
	n += 16;
	for (int b = 0; b < blocks; b++) {
		size_t body = len < 0 ? 0 : (size_t)len;

		n += cnt_bin_put_long(p + n, count);
		n += cnt_bin_put_long(p + n, len);
		memset(p + n, 0, body + 16);
		n += body + 16;
	}
	return n;
}

/* A container's records guessed from its first block; 0 for bytes too
 * short or too odd to hold one. */
static void test_guess_records(void)
{
	static uint8_t p[8192];
	size_t header = container(p, 0, 0, 0), one = container(p, 1, 10, 100), n = container(p, 3, 10, 100);

	/* three blocks of 10 records */
	CHECK_EQ_INT(cnt_container_guess_records(p, n, n), 30);
	/* only the first block read; the file holds 9 such blocks */
	CHECK_EQ_INT(cnt_container_guess_records(p, one, header + 9 * (one - header)), 90);
	/* the header or the block's count or size not within the bytes read */
	CHECK_EQ_INT(cnt_container_guess_records(p, header, n), 0);
	CHECK_EQ_INT(cnt_container_guess_records(p, header + 1, n), 0);
	CHECK_EQ_INT(cnt_container_guess_records(p, 20, n), 0);
	CHECK_EQ_INT(cnt_container_guess_records(p, 3, n), 0);
	/* not a container */
	p[3] = 2;
	CHECK_EQ_INT(cnt_container_guess_records(p, n, n), 0);
	/* a first block of no record, or of a negative count or size */
	n = container(p, 2, 0, 100);
	CHECK_EQ_INT(cnt_container_guess_records(p, n, n), 0);
	n = container(p, 2, -10, 100);
	CHECK_EQ_INT(cnt_container_guess_records(p, n, n), 0);
	n = container(p, 2, 10, -1);
	CHECK_EQ_INT(cnt_container_guess_records(p, 64, 4096), 0);
	/* a block claiming more bytes than the file has (else its records
	 * per byte would make 1000 * 60 / 120 = 500, 60 at most) */
	n = container(p, 1, 1000, 100);
	CHECK_EQ_INT(cnt_container_guess_records(p, n, header + 60), 0);
	/* a block of 10 records in 119 bytes, in a file of 238 after the header */
	n = container(p, 1, 10, 100);
	CHECK_EQ_INT(cnt_container_guess_records(p, n, header + 238), 20);
	/* a count beyond the bytes: at most one event a byte after the header */
	n = container(p, 1, INT64_MAX, 100);
	CHECK_EQ_INT(cnt_container_guess_records(p, n, n), (long long)(n - header));
	/* metadata whose count or lengths overrun the bytes read */
	{
		uint8_t q[32] = "Obj\x01";
		size_t m = 4;

		m += cnt_bin_put_long(q + m, INT64_MIN);    /* an entry count with no negation */
		CHECK_EQ_INT(cnt_container_guess_records(q, m + 8, 4096), 0);
		m = 4 + cnt_bin_put_long(q + 4, 1);
		m += cnt_bin_put_long(q + m, 1000);          /* a key of 1000 bytes in 32 */
		CHECK_EQ_INT(cnt_container_guess_records(q, sizeof(q), 4096), 0);
		m = 4 + cnt_bin_put_long(q + 4, 0);         /* no metadata, then 16 bytes of sync short */
		CHECK_EQ_INT(cnt_container_guess_records(q, m + 15, 4096), 0);
	}
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/cnt-test-container.XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_round_trip_every_codec);
	RUN(test_writer_is_deterministic);
	RUN(test_writer_yield);
	RUN(test_deferred_header);
	RUN(test_guessed_header);
	RUN(test_sync_marker_depends_on_schema_and_codec);
	RUN(test_header_only);
	RUN(test_record_larger_than_block);
	RUN(test_concatenated_writers);
	RUN(test_read_ahead);
	RUN(test_block_check);
	RUN(test_end_marker);
	RUN(test_writer_rejects_bad_schema);
	RUN(test_canonical_form);
	RUN(test_builtin_schema_parses);
	RUN(test_schema_errors_name_the_path);
	RUN(test_promotions);
	RUN(test_string_bytes);
	RUN(test_enum_resolution);
	RUN(test_union_branch_selection);
	RUN(test_record_fields);
	RUN(test_recursive_schema);
	RUN(test_bounds);
	RUN(test_container_bounds);
	RUN(test_outfile);
	if (!getenv("KEEP")) remove_dir();
	RUN(test_guess_records);
	return unit_report("test_container");
}
