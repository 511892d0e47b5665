/*
 * fuzz_windowed.c - libFuzzer target for the cnt.WindowedEvent reader
 * (lib/model/windowed.c over lib/model/record_reader.c): a whole container
 * file read as cnt-accumulate reads it, by the fast decoder when the
 * writer's schema is ours and through schema resolution otherwise.
 *
 * The seeds in tests/fuzz/corpus/fuzz_windowed/ are files written by
 * cnt-window (null and zstandard codecs, late events, shards, containers
 * back to back, a header-only file) and one whose writer schema differs
 * from ours so that resolution is taken.  Whatever the bytes: records or
 * an error with a message, never a crash, leak, hang or an allocation a
 * file merely claims.  Every record read must re-encode (head, then the
 * event) to bytes that the fast decoder reads back to the same record.
 */
#include <stdlib.h>
#include <string.h>

#include "avro/records.h"
#include "model/windowed.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_roundtrip(const cnt_windowed *w, const cnt_limits *lim)
{
	cnt_buf a = CNT_BUF_INIT, b = CNT_BUF_INIT;
	cnt_attrs_buf ab = {0};
	cnt_windowed back;
	int64_t v;
	cnt_cur c;
	cnt_err err;

	if (cnt_windowed_encode_head(w, &a) != 0 || cnt_event_encode(&w->ev, &a) != 0)
		abort();
	c.p = a.p;
	c.end = a.p + a.len;
	if (cnt_bin_read_long(&c, &back.bucket_start) || cnt_bin_read_long(&c, &back.bucket_end) ||
	    c.p >= c.end || *c.p > 1)
		abort();
	back.late = *c.p++;
	if (cnt_bin_read_long(&c, &v) || v != w->shard || back.bucket_start != w->bucket_start ||
	    back.bucket_end != w->bucket_end || back.late != !!w->late)
		abort();
	back.shard = (int32_t)v;
	if (c.p >= c.end || *c.p > 1 || *c.p != !!w->exact)
		abort();
	back.exact = *c.p++;
	if (cnt_windowed_decode_dims(&c, &back) != 0 || back.ndims != w->ndims ||
	    cnt_bin_read_long(&c, &v) != 0 || v != w->sample)
		abort();
	back.sample = (int)v;
	if (cnt_bin_read_long(&c, &v) || v < 4 || v > 18 || v != (w->hll_precision ? w->hll_precision : 14))
		abort();
	back.hll_precision = (int)v;
	if (cnt_event_decode(&c, &back.ev, &ab, lim, &err) != 0 || c.p != c.end)
		abort();
	if (cnt_windowed_encode_head(&back, &b) != 0 || cnt_event_encode(&back.ev, &b) != 0 ||
	    a.len != b.len || memcmp(a.p, b.p, a.len) != 0)
		abort();
	cnt_attrs_buf_release(&ab);
	cnt_buf_release(&a);
	cnt_buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cnt_limits lim = fuzz_limits();
	cnt_err err = {"", CNT_ERR_DATA};
	int fd = fuzz_input_fd("fuzz_windowed", data, size);
	cnt_records *rin;
	cnt_windowed_in *in;
	cnt_windowed w;

	if (fd < 0)
		return 0;
	rin = cnt_records_open(fd, "fuzz", NULL, &lim, &err);
	if (rin == NULL) {
		if (err.msg[0] == '\0')
			abort();
		close(fd);
		return 0;
	}
	in = cnt_windowed_in_adopt(rin, &lim, &err);
	if (in == NULL) {
		if (err.msg[0] == '\0')
			abort();
		close(fd);
		return 0;
	}
	for (int i = 0; i < FUZZ_MAX_RECORDS; i++) {
		int rc;

		err.msg[0] = '\0';
		rc = cnt_windowed_in_next(in, &w, &err);
		if (rc < 0 && err.msg[0] == '\0')
			abort();
		if (rc <= 0)
			break;
		if (w.late != 0 && w.late != 1)
			abort();
		check_roundtrip(&w, &lim);
	}
	cnt_windowed_in_free(in);
	close(fd);
	return 0;
}
