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

int main(void)
{
	RUN(test_fast_and_resolved_paths_agree);
	RUN(test_attrs_count_bounded_by_bytes);
	RUN(test_every_codec_reads_the_same_events);
	return unit_report("test_event");
}
