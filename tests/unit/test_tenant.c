/*
 * test_tenant.c - tenant separation (lib/model/tenant.h): which tenant ids
 * are safe file names; the guard on header declarations (fingerprint
 * table, view description, cnt.tenants), on records, on files without a
 * tenant; and the split of a bucket file per tenant, each part byte for
 * byte the file written from that tenant's records alone.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "model/bucket.h"
#include "model/fingerprint.h"
#include "model/tenant.h"
#include "unit.h"

static int check_id(const char *id, size_t n)
{
	cnt_err err;
	return cnt_tenant_id_check(id, n, &err);
}

static void test_id_check(void)
{
	cnt_err err;
	char big[300];

	CHECK(check_id("acme", 4) == 0);
	CHECK(check_id("a.b-c_d", 7) == 0);
	CHECK(check_id("caf\xc3\xa9", 5) == 0);
	CHECK(check_id("", 0) != 0);
	CHECK(check_id(".", 1) != 0);
	CHECK(check_id("..", 2) != 0);
	CHECK(check_id(".hidden", 7) != 0);
	CHECK(check_id("a/b", 3) != 0);
	CHECK(check_id("a\nb", 3) != 0);
	CHECK(check_id("a\x7f", 2) != 0);
	CHECK(check_id("a\0b", 3) != 0);
	memset(big, 'x', sizeof(big));
	CHECK(check_id(big, 255) == 0);
	CHECK(check_id(big, 256) != 0);
	CHECK(cnt_tenant_id_check("../etc", 6, &err) == -1);
	CHECK_EQ_STR(err.msg, "tenant id '../etc' is not a safe file name: it starts with '.'");
	CHECK_EQ_INT(err.kind, CNT_ERR_DATA);
	CHECK(cnt_tenant_id_check("a\tb/", 4, &err) == -1);
	CHECK_EQ_STR(err.msg, "tenant id 'a\\x09b/' is not a safe file name: it holds a control character");
}

static int guard_meta(const char *key, const char *val, int *declared, cnt_err *err)
{
	char k0[] = "avro.codec", v0[] = "null", k1[64], v1[256];
	cnt_meta_kv kv[2] = {{k0, (uint8_t *)v0, 4}, {k1, (uint8_t *)v1, strlen(val)}};

	snprintf(k1, sizeof(k1), "%s", key);
	snprintf(v1, sizeof(v1), "%s", val);
	return cnt_tenant_guard_header("acme", kv, 2, "f.avro", declared, err);
}

static void test_header(void)
{
	cnt_err err;
	int d = -1;

	CHECK(guard_meta("other", "x", &d, &err) == 0);
	CHECK_EQ_INT(d, 0);
	CHECK(guard_meta(CNT_FP_META, "{\"acme/views v1\":{\"fp\":\"0\",\"def\":{\"tenant_id\":\"acme\"}}}", &d,
		&err) == 0);
	CHECK_EQ_INT(d, 1);
	CHECK(guard_meta(CNT_FP_META, "{\"acme/v v1\":{\"def\":{\"tenant_id\":\"acme\"}},"
		"\"g/v v1\":{\"def\":{\"tenant_id\":\"globex\"}}}", &d, &err) == -1);
	CHECK_EQ_INT(err.kind, CNT_ERR_REFUSED);
	CHECK_EQ_STR(err.msg, "'f.avro': declares tenant 'globex' (cnt.fingerprints); refused for tenant 'acme'");
	CHECK(guard_meta("cnt.view", "{\"board\":\"b\",\"tenant_id\":\"acme\"}", &d, &err) == 0);
	CHECK_EQ_INT(d, 1);
	CHECK(guard_meta("cnt.view", "{\"board\":\"b\",\"tenant_id\":\"acmex\"}", &d, &err) == -1);
	CHECK_EQ_INT(err.kind, CNT_ERR_REFUSED);
	CHECK(guard_meta("cnt.view", "{\"board\":\"b\"}", &d, &err) == -1);
	CHECK_EQ_INT(err.kind, CNT_ERR_DATA);
	CHECK(guard_meta(CNT_TENANT_META, "[\"acme\"]", &d, &err) == 0);
	CHECK_EQ_INT(d, 1);
	CHECK(guard_meta(CNT_TENANT_META, "[\"acme\",\"a\\u0001'\"]", &d, &err) == -1);
	CHECK_EQ_STR(err.msg, "'f.avro': declares tenant 'a\\x01'' (cnt.tenants); refused for tenant 'acme'");
	CHECK(guard_meta(CNT_TENANT_META, "{}", &d, &err) == -1);
	CHECK_EQ_INT(err.kind, CNT_ERR_DATA);
	CHECK(guard_meta(CNT_TENANT_META, "[1]", &d, &err) == -1);
	CHECK_EQ_INT(err.kind, CNT_ERR_DATA);
	CHECK(guard_meta(CNT_FP_META, "{not json", &d, &err) == -1);
	CHECK_EQ_INT(err.kind, CNT_ERR_DATA);
}

static void test_id(void)
{
	cnt_err err;

	CHECK(cnt_tenant_guard_id("acme", "acme", 4, "v", "cnt.view", &err) == 0);
	CHECK(cnt_tenant_guard_id("acme", "acm", 3, "v", "cnt.view", &err) == -1);
	CHECK(cnt_tenant_guard_id("acme", "acme\0", 5, "v", "record 1", &err) == -1);
	CHECK_EQ_STR(err.msg, "'v': holds tenant 'acme\\x00' (record 1); refused for tenant 'acme'");
	CHECK_EQ_INT(err.kind, CNT_ERR_REFUSED);
}

static int tmpfd(void)
{
	char path[] = "/tmp/test_tenant.XXXXXX";
	int fd = mkstemp(path);

	unlink(path);
	return fd;
}

/* A container of records {tenant_id: string} (or {x: string} when
 * field is "x"), one per tenant in ts ('|'-separated), with an optional
 * metadata entry. */
static int strings_file(const char *field, const char *ts, const char *mkey, const char *mval)
{
	char schema[200];
	int fd = tmpfd();
	cnt_err err;
	cnt_writer *w;

	snprintf(schema, sizeof(schema),
		"{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"%s\",\"type\":\"string\"}]}", field);
	w = cnt_writer_new(fd, "t", schema, CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, 0, &err);
	if (mkey)
		cnt_writer_meta(w, mkey, mval, strlen(mval), &err);
	while (*ts) {
		size_t n = strcspn(ts, "|");
		cnt_bin_write_bytes(cnt_writer_buf(w), ts, n);
		cnt_writer_commit(w, &err);
		ts += n + (ts[n] == '|');
	}
	cnt_writer_finish(w, &err);
	cnt_writer_free(w);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static int guard_file(int fd, cnt_err *err)
{
	int rc = cnt_tenant_guard_fd("acme", fd, "f.avro", err);
	close(fd);
	return rc;
}

static void test_fd(void)
{
	cnt_err err;

	CHECK(guard_file(strings_file("tenant_id", "acme|acme", NULL, NULL), &err) == 0);
	CHECK(guard_file(strings_file("tenant_id", "acme|globex|acme", NULL, NULL), &err) == -1);
	CHECK_EQ_INT(err.kind, CNT_ERR_REFUSED);
	CHECK_EQ_STR(err.msg, "'f.avro': holds tenant 'globex' (record 2); refused for tenant 'acme'");
	/* the header alone is not trusted */
	CHECK(guard_file(strings_file("tenant_id", "globex", CNT_TENANT_META, "[\"acme\"]"), &err) == -1);
	CHECK_EQ_INT(err.kind, CNT_ERR_REFUSED);
	/* a declaration alone refuses, before any record */
	CHECK(guard_file(strings_file("tenant_id", "acme", CNT_TENANT_META, "[\"globex\"]"), &err) == -1);
	CHECK_EQ_STR(err.msg, "'f.avro': declares tenant 'globex' (cnt.tenants); refused for tenant 'acme'");
	/* records that name no tenant: refused unless the header declares it */
	CHECK(guard_file(strings_file("x", "a|b", NULL, NULL), &err) == -1);
	CHECK_EQ_INT(err.kind, CNT_ERR_REFUSED);
	CHECK_EQ_STR(err.msg, "'f.avro': record 1 names no tenant and the header declares none; refused for "
		"tenant 'acme'");
	CHECK(guard_file(strings_file("x", "a|b", CNT_TENANT_META, "[\"acme\"]"), &err) == 0);
	CHECK(guard_file(strings_file("x", "", NULL, NULL), &err) == 0);
	/* not a container */
	{
		int fd = tmpfd();
		CHECK(write(fd, "hello", 5) == 5);
		lseek(fd, 0, SEEK_SET);
		CHECK(guard_file(fd, &err) == -1);
		CHECK_EQ_INT(err.kind, CNT_ERR_DATA);
	}
}

/* Bucket records of the tenants named in ts (one letter each, member =
 * position) to fd; when only is not 0, only those of tenant only. */
static void write_buckets(int fd, const char *ts, char only)
{
	cnt_err err;
	cnt_writer *w = cnt_bucket_writer_new(fd, "t", CNT_CODEC_ZSTD, CNT_LEVEL_DEFAULT, &err);
	static const char members[] = "0123456789";

	cnt_fp_track(w, CNT_FP_BUCKETS, &err);
	for (size_t i = 0; ts[i]; i++) {
		cnt_bucket b;

		if (only && ts[i] != only)
			continue;
		memset(&b, 0, sizeof(b));
		b.tenant_id.p = &ts[i];
		b.tenant_id.n = 1;
		b.counter_id.p = "c";
		b.counter_id.n = 1;
		b.counter_version = 1;
		b.member_ref.p = &members[i];
		b.member_ref.n = 1;
		b.bucket_end = 3600000;
		b.count = 1;
		b.sum = (cnt_i128)i;
		b.max_ingest_time = 1;
		b.last_count = b.ingest_count = 1;
		cnt_bucket_encode(&b, cnt_writer_buf(w));
		cnt_writer_commit(w, &err);
	}
	cnt_writer_finish(w, &err);
	cnt_writer_free(w);
	lseek(fd, 0, SEEK_SET);
}

typedef struct sink_ctx {
	int fds[4];
	char names[4][8];
	size_t n, closed;
} sink_ctx;

static int s_open(void *ctx, const char *tenant, int *fd, const char **name, cnt_err *err)
{
	sink_ctx *s = ctx;
	(void)err;
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", tenant);
	*fd = s->fds[s->n] = tmpfd();
	*name = s->names[s->n++];
	return 0;
}

static int s_close(void *ctx, cnt_err *err)
{
	(void)err;
	((sink_ctx *)ctx)->closed++;
	return 0;
}

static int same_bytes(int a, int b)
{
	char x[65536], y[65536];
	ssize_t n, m;

	lseek(a, 0, SEEK_SET);
	lseek(b, 0, SEEK_SET);
	n = read(a, x, sizeof(x));
	m = read(b, y, sizeof(y));
	return n > 0 && n == m && memcmp(x, y, (size_t)n) == 0;
}

static void test_split(void)
{
	sink_ctx s;
	cnt_tenant_sink sink = {s_open, s_close, &s};
	cnt_err err;
	size_t n = 99;
	int in = tmpfd(), a = tmpfd(), b = tmpfd();

	CHECK(cnt_fp_policy(NULL, &err) == 0);
	memset(&s, 0, sizeof(s));
	write_buckets(in, "aaab", 0);
	write_buckets(a, "aaab", 'a');
	write_buckets(b, "aaab", 'b');
	CHECK(cnt_tenant_split_buckets(in, "in", CNT_CODEC_ZSTD, CNT_LEVEL_DEFAULT, &sink, &n, &err) == 0);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_INT(s.n, 2);
	CHECK_EQ_INT(s.closed, 2);
	CHECK_EQ_STR(s.names[0], "a");
	CHECK_EQ_STR(s.names[1], "b");
	CHECK(same_bytes(s.fds[0], a));
	CHECK(same_bytes(s.fds[1], b));
	CHECK(!same_bytes(s.fds[0], b));
	for (size_t i = 0; i < s.n; i++)
		close(s.fds[i]);
	close(in);

	/* not together: refused */
	memset(&s, 0, sizeof(s));
	in = tmpfd();
	write_buckets(in, "aba", 0);
	CHECK(cnt_tenant_split_buckets(in, "in", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &sink, &n, &err) == -1);
	CHECK_EQ_STR(err.msg, "'in': the records of tenant 'a' are not together (not a bucket file in canonical "
		"order)");
	for (size_t i = 0; i < s.n; i++)
		close(s.fds[i]);
	close(in);

	/* an unsafe tenant id: refused before its file is opened */
	memset(&s, 0, sizeof(s));
	in = tmpfd();
	write_buckets(in, "a.", 0);
	CHECK(cnt_tenant_split_buckets(in, "in", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &sink, &n, &err) == -1);
	CHECK_EQ_STR(err.msg, "'in': tenant id '.' is not a safe file name: it starts with '.'");
	CHECK_EQ_INT(s.n, 1);
	for (size_t i = 0; i < s.n; i++)
		close(s.fds[i]);
	close(in);

	/* an empty file: no tenants */
	memset(&s, 0, sizeof(s));
	in = tmpfd();
	write_buckets(in, "", 0);
	CHECK(cnt_tenant_split_buckets(in, "in", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &sink, &n, &err) == 0);
	CHECK_EQ_INT(n, 0);
	close(in);
	close(a);
	close(b);
	cnt_fp_policy_end();
}

int main(void)
{
	RUN(test_id_check);
	RUN(test_header);
	RUN(test_id);
	RUN(test_fd);
	RUN(test_split);
	return unit_report("test_tenant");
}
