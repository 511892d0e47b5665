/*
 * test_event.c - the event reader's two paths against each other, on files
 * written by python3-avro: events.null.avro is written with exactly our
 * schema (the hand-written decoder reads it), resolve.reordered.avro holds
 * the same first 20 events with the fields in another order (schema
 * resolution reads it).  Both must give the same events, and re-encoding
 * a fast-path event must give back its bytes exactly.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/event.h"
#include "unit.h"

#define MAXEV 64

typedef struct copy {
	cnt_buf bytes;      /* the event re-encoded */
} copy;

static int open_fixture(const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "tests/fixtures/%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		snprintf(path, sizeof(path), "../../tests/fixtures/%s", name);
		fd = open(path, O_RDONLY);
	}
	return fd;
}

/* Reads every event of a fixture, re-encoded, and whether the fast path
 * read it.  Returns the count, or -1. */
static int read_all(const char *name, copy *out, int *fast, int check_raw)
{
	int fd = open_fixture(name), n = 0, rc;
	cnt_err err;
	cnt_event_in *in;
	cnt_event e;

	if (fd < 0)
		return -1;
	in = cnt_event_in_open(fd, name, NULL, &err);
	if (in == NULL) {
		close(fd);
		return -1;
	}
	*fast = cnt_event_in_fast(in);
	while ((rc = cnt_event_in_next(in, &e, &err)) > 0 && n < MAXEV) {
		const uint8_t *raw;
		size_t rawn;

		memset(&out[n].bytes, 0, sizeof(out[n].bytes));
		CHECK_EQ_INT(cnt_event_encode(&e, &out[n].bytes), 0);
		if (check_raw) {
			CHECK_EQ_INT(cnt_event_in_raw(in, &raw, &rawn), 1);
			/* Our encoder writes what python-avro wrote, byte for byte. */
			CHECK(rawn == out[n].bytes.len && memcmp(raw, out[n].bytes.p, rawn) == 0);
		} else {
			CHECK_EQ_INT(cnt_event_in_raw(in, &raw, &rawn), 0);
		}
		n++;
	}
	CHECK_EQ_INT(rc, 0);
	cnt_event_in_free(in);
	close(fd);
	return n;
}

static void test_fast_and_resolved_paths_agree(void)
{
	static copy a[MAXEV], b[MAXEV];
	int fa = -1, fb = -1;
	int na = read_all("events.null.avro", a, &fa, 1);
	int nb = read_all("resolve.reordered.avro", b, &fb, 0);

	CHECK_EQ_INT(na, 40);
	CHECK_EQ_INT(nb, 20);
	CHECK_EQ_INT(fa, 1);   /* our schema: the hand-written decoder */
	CHECK_EQ_INT(fb, 0);   /* another field order: resolution */
	for (int i = 0; i < nb && i < na; i++)
		CHECK(a[i].bytes.len == b[i].bytes.len && memcmp(a[i].bytes.p, b[i].bytes.p, a[i].bytes.len) == 0);
	for (int i = 0; i < na; i++)
		cnt_buf_release(&a[i].bytes);
	for (int i = 0; i < nb; i++)
		cnt_buf_release(&b[i].bytes);
}

static void test_every_codec_reads_the_same_events(void)
{
	static const char *files[] = {"events.deflate.avro", "events.snappy.avro", "events.xz.avro",
		"events.zstandard.avro", "events.bzip2.avro", "events.zstd-nosize.avro"};
	static copy ref[MAXEV], got[MAXEV];
	int fast, n = read_all("events.null.avro", ref, &fast, 1);

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		int m = read_all(files[f], got, &fast, 1);

		CHECK_EQ_INT(m, n);
		for (int i = 0; i < m && i < n; i++) {
			CHECK(got[i].bytes.len == ref[i].bytes.len &&
			      memcmp(got[i].bytes.p, ref[i].bytes.p, got[i].bytes.len) == 0);
			cnt_buf_release(&got[i].bytes);
		}
	}
	for (int i = 0; i < n; i++)
		cnt_buf_release(&ref[i].bytes);
}

/* A map count the rest of the block cannot hold is refused before any
 * memory is taken for it (a 20-byte record claiming a million attrs once
 * made the decoder allocate 32 MiB first). */
static void test_attrs_count_bounded_by_bytes(void)
{
	cnt_event e;
	cnt_buf b = CNT_BUF_INIT;
	cnt_attrs_buf ab = {0};
	cnt_limits lim = cnt_limits_default();
	cnt_err err;
	cnt_cur c;

	memset(&e, 0, sizeof(e));
	e.event_id.p = e.idempotency_key.p = e.tenant_id.p = e.counter_id.p = e.member_ref.p = "x";
	e.event_id.n = e.idempotency_key.n = e.tenant_id.n = e.counter_id.n = e.member_ref.n = 1;
	CHECK_EQ_INT(cnt_event_encode(&e, &b), 0);
	b.len--;   /* the attrs' end marker, replaced by a count of 1000000 */
	CHECK_EQ_INT(cnt_bin_write_long(&b, 1000000), 0);
	c.p = b.p;
	c.end = b.p + b.len;
	CHECK_EQ_INT(cnt_event_decode(&c, &e, &ab, &lim, &err), -1);
	CHECK(strstr(err.msg, "runs past the end") != NULL);
	CHECK_EQ_INT(ab.cap, 0);
	c.p = b.p;
	CHECK_EQ_INT(cnt_event_skip(&c, &lim), -1);
	cnt_attrs_buf_release(&ab);
	cnt_buf_release(&b);
}

/* The count's check (cnt_event_skip) is the decoder with attrs not kept:
 * it accepts exactly what cnt_event_decode accepts, ends at the same byte,
 * and allocates nothing for attrs. */
static void test_skip_is_the_decoder(void)
{
	static const char *const keys[] = {"cnt.sample", "k2", "k3"};
	cnt_slice ks[3], vs[3];
	cnt_event e, d;
	cnt_buf b = CNT_BUF_INIT;
	cnt_attrs_buf ab = {0};
	cnt_limits lim = cnt_limits_default();
	cnt_err err;

	memset(&e, 0, sizeof(e));
	e.event_id.p = e.idempotency_key.p = e.tenant_id.p = e.counter_id.p = e.member_ref.p = "id";
	e.event_id.n = e.idempotency_key.n = e.tenant_id.n = e.counter_id.n = e.member_ref.n = 2;
	e.item.p = "v1";
	e.item.n = 2;
	e.event_time = 1772359200000LL;
	e.ingest_time = 1772359260000LL;
	for (int i = 0; i < 3; i++) {
		ks[i].p = keys[i];
		ks[i].n = strlen(keys[i]);
		vs[i].p = "3";
		vs[i].n = 1;
	}
	e.nattrs = 3;
	e.attr_keys = ks;
	e.attr_vals = vs;
	CHECK_EQ_INT(cnt_event_encode(&e, &b), 0);
	/* every prefix and every one-byte change: the same verdict, the same end */
	for (size_t cut = 0; cut <= b.len; cut++) {
		for (int flip = -1; flip < (int)cut; flip++) {
			uint8_t save = 0;
			cnt_cur c1 = {b.p, b.p + cut}, c2 = c1;
			int r1, r2;

			if (flip >= 0) {
				save = b.p[flip];
				b.p[flip] ^= 0x41;
			}
			r1 = cnt_event_decode(&c1, &d, &ab, &lim, &err);
			r2 = cnt_event_skip(&c2, &lim);
			CHECK_EQ_INT(r1, r2);
			if (r1 == 0)
				CHECK(c1.p == c2.p);
			if (flip >= 0)
				b.p[flip] = save;
		}
	}
	{
		cnt_cur c = {b.p, b.p + b.len};

		CHECK_EQ_INT(cnt_event_decode(&c, &d, NULL, &lim, &err), 0);
		CHECK(c.p == b.p + b.len);
		CHECK_EQ_INT(d.nattrs, 0);
		CHECK(d.attr_keys == NULL);
		CHECK(d.item.n == 2 && memcmp(d.item.p, "v1", 2) == 0);
		CHECK_EQ_INT(d.ingest_time, 1772359260000LL);
	}
	cnt_attrs_buf_release(&ab);
	cnt_buf_release(&b);
}

int main(void)
{
	RUN(test_skip_is_the_decoder);
	RUN(test_fast_and_resolved_paths_agree);
	RUN(test_attrs_count_bounded_by_bytes);
	RUN(test_every_codec_reads_the_same_events);
	return unit_report("test_event");
}
