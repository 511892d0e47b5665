/*
 * fuzz_event.c - libFuzzer target for the cnt.CountingEvent decoders
 * (lib/model/event.c): the hand-written fast decoder and skipper, and the
 * event reader with its fallback through schema resolution.
 *
 * The input is read two ways:
 *   - as an Avro container (the seeds in tests/fuzz/corpus/fuzz_event/
 *     are event files written by cnt-ingest and cnt-dedup, null and
 *     zstandard codecs, several containers back to back, and files whose
 *     writer schema differs from ours so that resolution is taken), every
 *     event read through cnt_event_in;
 *   - as bare record bytes, decoded one record after another with
 *     cnt_event_decode and, from the same place, cnt_event_skip.
 * Whatever the bytes: an error with a message or records, never a crash,
 * a leak, a hang or an allocation a file merely claims.  And: the decoder
 * and the skipper agree on every record (both fail, or both succeed and
 * end at the same byte); every event read re-encodes to bytes that decode
 * to the same event (encode . decode is the identity on our encoding);
 * the raw bytes of a fast-path event skip exactly.  A broken property
 * aborts.
 */
#include <stdlib.h>
#include <string.h>

#include "model/event.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* encode(e) decodes to an event that encodes to the same bytes. */
static void check_roundtrip(const cnt_event *e, const cnt_limits *lim)
{
	cnt_buf a = CNT_BUF_INIT, b = CNT_BUF_INIT;
	cnt_attrs_buf ab = {0};
	cnt_event back;
	cnt_cur c;
	cnt_err err;

	if (cnt_event_encode(e, &a) != 0)
		abort();
	c.p = a.p;
	c.end = a.p + a.len;
	if (cnt_event_decode(&c, &back, &ab, lim, &err) != 0 || c.p != c.end)
		abort();
	if (cnt_event_encode(&back, &b) != 0 || a.len != b.len || memcmp(a.p, b.p, a.len) != 0)
		abort();
	cnt_attrs_buf_release(&ab);
	cnt_buf_release(&a);
	cnt_buf_release(&b);
}

static void read_container(const uint8_t *data, size_t size, const cnt_limits *lim)
{
	cnt_err err = {"", CNT_ERR_DATA};
	int fd = fuzz_input_fd("fuzz_event", data, size);
	cnt_event_in *in;
	cnt_event e;

	if (fd < 0)
		return;
	in = cnt_event_in_open(fd, "fuzz", lim, &err);
	if (in == NULL) {
		if (err.msg[0] == '\0')   /* every refusal says why */
			abort();
		close(fd);
		return;
	}
	for (int i = 0; i < FUZZ_MAX_RECORDS; i++) {
		const uint8_t *raw;
		size_t rawn;
		int rc;

		err.msg[0] = '\0';
		rc = cnt_event_in_next(in, &e, &err);
		if (rc < 0 && err.msg[0] == '\0')
			abort();
		if (rc <= 0)
			break;
		check_roundtrip(&e, lim);
		if (cnt_event_in_raw(in, &raw, &rawn)) {
			cnt_cur c = {raw, raw + rawn};

			if (!cnt_event_in_fast(in) || cnt_event_skip(&c, lim) != 0 || c.p != c.end)
				abort();
		}
	}
	cnt_event_in_free(in);
	close(fd);
}

static void read_records(const uint8_t *data, size_t size, const cnt_limits *lim)
{
	cnt_cur c = {data, data + size};
	cnt_attrs_buf ab = {0};
	cnt_event e;
	cnt_err err;

	while (c.p < c.end) {
		cnt_cur s = c;
		int drc = cnt_event_decode(&c, &e, &ab, lim, &err);
		int src = cnt_event_skip(&s, lim);

		if ((drc == 0) != (src == 0))
			abort();
		if (drc != 0)
			break;
		if (s.p != c.p)
			abort();
		check_roundtrip(&e, lim);
	}
	cnt_attrs_buf_release(&ab);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cnt_limits lim = fuzz_limits();

	read_container(data, size, &lim);
	read_records(data, size, &lim);
	return 0;
}
