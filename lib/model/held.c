/*
 * held.c - hold file records (see held.h).
 */
#include "model/held.h"

#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "avro/encoding.h"
#include "model/record_reader.h"

extern const char cnt_schema_held_event[];

void cnt_held_id(cnt_slice event_id, char out[35])
{
	static const char hx[] = "0123456789abcdef";
	XXH128_hash_t h = XXH3_128bits(event_id.p ? event_id.p : "", event_id.n);

	out[0] = 'h';
	out[1] = '-';
	for (int i = 0; i < 16; i++) {
		out[2 + i] = hx[(h.high64 >> (60 - 4 * i)) & 15];
		out[18 + i] = hx[(h.low64 >> (60 - 4 * i)) & 15];
	}
	out[34] = 0;
}

int cnt_held_encode_tail(cnt_buf *b, const char *hold_id, cnt_hold_kind signal, const char *detail,
	int64_t held_at)
{
	return cnt_bin_write_bytes(b, hold_id, strlen(hold_id)) | cnt_bin_write_long(b, signal) |
	       cnt_bin_write_bytes(b, detail, strlen(detail)) | cnt_bin_write_long(b, held_at) ? -1 : 0;
}

cnt_writer *cnt_held_writer_new(int fd, const char *name, cnt_codec_id codec, int level, cnt_err *err)
{
	char *compact = cnt_schema_compact(cnt_schema_held_event, err);
	cnt_writer *w;

	if (compact == NULL)
		return NULL;
	w = cnt_writer_new(fd, name, compact, codec, level, 0, err);
	free(compact);
	return w;
}

struct cnt_held_in {
	cnt_typed_in t;
	cnt_attrs_buf ab;
	const uint8_t *ev;
	size_t evn;
};

cnt_held_in *cnt_held_in_open(int fd, const char *name, cnt_err *err)
{
	cnt_held_in *in = calloc(1, sizeof(*in));
	cnt_limits lim = cnt_limits_default();

	if (in == NULL) {
		cnt_err_nomem(err);
		return NULL;
	}
	if (cnt_typed_in_open(&in->t, fd, name, cnt_schema_held_event, &lim, err) != 0) {
		free(in);
		return NULL;
	}
	return in;
}

void cnt_held_in_free(cnt_held_in *in)
{
	if (in == NULL)
		return;
	cnt_typed_in_release(&in->t);
	cnt_attrs_buf_release(&in->ab);
	free(in);
}

int cnt_held_in_next(cnt_held_in *in, cnt_held *h, cnt_err *err)
{
	const uint8_t *p;
	size_t n;
	int64_t sig;
	int rc = cnt_typed_in_step(&in->t, err);

	if (rc <= 0)
		return rc;
	if (!in->t.fast) {
		cnt_err_set(err, "not a hold file: its schema is not cnt.HeldEvent's (cnt-hold(5))");
		return cnt_typed_in_where(&in->t, err);
	}
	in->ev = in->t.cur.p;
	if (cnt_event_decode(&in->t.cur, &h->e, &in->ab, &in->t.lim, err) != 0)
		return cnt_typed_in_where(&in->t, err);
	in->evn = (size_t)(in->t.cur.p - in->ev);
	if (cnt_bin_read_bytes(&in->t.cur, &p, &n) != 0)
		goto trunc;
	h->hold_id.p = (const char *)p;
	h->hold_id.n = n;
	{
		char want[35];

		cnt_held_id(h->e.event_id, want);
		if (n != 34 || memcmp(p, want, 34) != 0) {
			cnt_err_set(err, "hold_id is not the one of its event_id (%s): corrupt file", want);
			return cnt_typed_in_where(&in->t, err);
		}
	}
	if (cnt_bin_read_long(&in->t.cur, &sig) != 0)
		goto trunc;
	if (sig < 0 || sig >= CNT_HOLD_NKINDS) {
		cnt_err_set(err, "signal enum index out of range: corrupt file");
		return cnt_typed_in_where(&in->t, err);
	}
	h->signal = (cnt_hold_kind)sig;
	if (cnt_bin_read_bytes(&in->t.cur, &p, &n) != 0)
		goto trunc;
	h->detail.p = (const char *)p;
	h->detail.n = n;
	if (cnt_bin_read_long(&in->t.cur, &h->held_at) != 0)
		goto trunc;
	return 1;
trunc:
	cnt_err_set(err, "record runs past the end of its block: corrupt file");
	return cnt_typed_in_where(&in->t, err);
}

void cnt_held_in_event_bytes(const cnt_held_in *in, const uint8_t **p, size_t *n)
{
	*p = in->ev;
	*n = in->evn;
}
