/*
 * windowed.c - cnt.WindowedEvent (see windowed.h).
 */
#include "model/windowed.h"
#include "base/jsonload.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "avro/encoding.h"
#include "model/defs.h"
#include "model/record_reader.h"

extern const char cnt_schema_counting_event[];

char *cnt_windowed_schema_json(cnt_err *err)
{
	json_error_t je;
	json_t *ev = cnt_json_loads(cnt_schema_counting_event, 0, &je);
	json_t *root;
	char *s;

	if (ev == NULL) {
		if (cnt_json_oom(&je))
			cnt_err_nomem(err);
		else
			cnt_err_set(err, "internal: built-in schema: %s", je.text);
		return NULL;
	}
	root = json_pack("{s:s, s:s, s:s, s:s, s:[{s:s, s:{s:s, s:s}, s:s}, {s:s, s:{s:s, s:s}}, {s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:b, s:s}, {s:s, s:{s:s, s:s}, s:[], s:s}, {s:s, s:s, s:i, s:s}, {s:s, s:s, s:i, s:s}, {s:s, s:o}]}",
		"type", "record", "name", "WindowedEvent", "namespace", "cnt",
		"doc", "An event with its event-time bucket, lateness and shard: written by cnt-window, read by cnt-accumulate; see cnt-bucket(5).",
		"fields",
		"name", "bucket_start", "type", "type", "long", "logicalType", "timestamp-millis",
		"doc", "UTC instant the tenant-local hour holding event_time began.",
		"name", "bucket_end", "type", "type", "long", "logicalType", "timestamp-millis",
		"name", "late", "type", "boolean", "doc", "ingest_time is after bucket_end plus the counter's lateness horizon.",
		"name", "shard", "type", "int", "doc", "Which shard of a hot key the event is counted in.",
		"name", "exact", "type", "boolean", "default", 0,
		"doc", "The event's counter version is of type exact or approx: cnt-accumulate keeps no min, max or sketch for it.",
		"name", "dimensions", "type", "type", "array", "items", "string", "default",
		"doc", "The event's counter version's dimensions (attrs keys): cnt-accumulate also counts the event in one breakdown record per dimension.",
		"name", "sample", "type", "int", "default", -1,
		"doc", "-1, or for an approx counter's event its sampling level L (attrs cnt.sample): it weighs 2^L.",
		"name", "hll_precision", "type", "int", "default", 14,
		"doc", "The HLL++ precision (4..18) of the event's counter version's sketches: 14 unless a unique counter declares tolerated_error (cnt-definitions(5)).",
		"name", "event", "type", ev);
	if (root == NULL) {
		cnt_err_nomem(err);
		return NULL;
	}
	s = cnt_json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (s == NULL)
		cnt_err_nomem(err);
	return s;
}

int cnt_windowed_encode_head(const cnt_windowed *w, cnt_buf *b)
{
	int rc = 0;

	rc |= cnt_bin_write_long(b, w->bucket_start);
	rc |= cnt_bin_write_long(b, w->bucket_end);
	rc |= cnt_buf_putc(b, w->late ? 1 : 0);
	rc |= cnt_bin_write_long(b, w->shard);
	rc |= cnt_buf_putc(b, w->exact ? 1 : 0);
	if (w->ndims > 0) {
		rc |= cnt_bin_write_long(b, (int64_t)w->ndims);
		for (size_t i = 0; i < w->ndims; i++)
			rc |= cnt_bin_write_bytes(b, w->dims[i].p, w->dims[i].n);
	}
	rc |= cnt_buf_putc(b, 0);
	rc |= cnt_bin_write_long(b, w->sample);
	rc |= cnt_bin_write_long(b, w->hll_precision ? w->hll_precision : 14);
	return rc ? -1 : 0;
}

struct cnt_windowed_in {
	cnt_typed_in t;
	cnt_attrs_buf ab;
};

cnt_windowed_in *cnt_windowed_in_adopt(cnt_records *rin, const cnt_limits *lim, cnt_err *err)
{
	cnt_windowed_in *in = calloc(1, sizeof(*in));
	char *json = cnt_windowed_schema_json(err);
	int rc;

	if (in == NULL || json == NULL) {
		if (in == NULL)
			cnt_err_nomem(err);
		cnt_records_free(rin);
		free(in);
		free(json);
		return NULL;
	}
	rc = cnt_typed_in_adopt(&in->t, rin, json, lim, err);
	free(json);
	if (rc != 0) {
		free(in);
		return NULL;
	}
	return in;
}

void cnt_windowed_in_free(cnt_windowed_in *in)
{
	if (in == NULL)
		return;
	cnt_typed_in_release(&in->t);
	cnt_attrs_buf_release(&in->ab);
	free(in);
}

void cnt_windowed_dim_values(cnt_windowed *w)
{
	static const char none[] = "(none)";   /* CNT_DIM_NONE */

	for (size_t d = 0; d < w->ndims; d++) {
		w->dim_vals[d].p = none;
		w->dim_vals[d].n = sizeof(none) - 1;
		for (size_t i = 0; i < w->ev.nattrs; i++)
			if (w->ev.attr_keys[i].n == w->dims[d].n &&
			    memcmp(w->ev.attr_keys[i].p, w->dims[d].p, w->dims[d].n) == 0) {
				w->dim_vals[d] = w->ev.attr_vals[i];
				break;
			}
	}
}

int cnt_windowed_decode_dims(cnt_cur *c, cnt_windowed *w)
{
	int64_t n, bytes;

	w->ndims = 0;
	for (;;) {
		if (cnt_bin_read_long(c, &n) != 0)
			return -1;
		if (n == 0)
			return 0;
		if (n < 0) {
			if (n == INT64_MIN || cnt_bin_read_long(c, &bytes) != 0)
				return -1;
			n = -n;
		}
		if (n > CNT_WINDOWED_DIMS_MAX - (int64_t)w->ndims)
			return -1;
		while (n-- > 0) {
			const uint8_t *p;
			size_t len;

			if (cnt_bin_read_bytes(c, &p, &len) != 0)
				return -1;
			w->dims[w->ndims].p = (const char *)p;
			w->dims[w->ndims].n = len;
			w->ndims++;
		}
	}
}

int cnt_windowed_in_next(cnt_windowed_in *in, cnt_windowed *w, cnt_err *err)
{
	cnt_cur *c = &in->t.cur;
	cnt_val v;
	int64_t shard;
	int rc = cnt_typed_in_step(&in->t, err);

	if (rc <= 0)
		return rc;
	if (!in->t.fast) {
		if (cnt_typed_in_resolve(&in->t, &v, err) != 0)
			return -1;
		w->bucket_start = v.u.v[0].u.i;
		w->bucket_end = v.u.v[1].u.i;
		w->late = (int)v.u.v[2].u.i;
		w->shard = (int32_t)v.u.v[3].u.i;
		w->exact = (int)v.u.v[4].u.i;
		if (v.u.v[5].n > CNT_WINDOWED_DIMS_MAX) {
			cnt_err_set(err, "%u dimensions (at most %d): corrupt file", (unsigned)v.u.v[5].n, CNT_WINDOWED_DIMS_MAX);
			return cnt_typed_in_where(&in->t, err);
		}
		w->ndims = v.u.v[5].n;
		for (size_t i = 0; i < w->ndims; i++) {
			w->dims[i].p = v.u.v[5].u.v[i].u.s ? (const char *)v.u.v[5].u.v[i].u.s : "";
			w->dims[i].n = v.u.v[5].u.v[i].n;
		}
		w->sample = (int)v.u.v[6].u.i;
		if (w->sample < -1 || w->sample > CNT_APPROX_LEVEL_MAX) {
			cnt_err_set(err, "sample level %d: corrupt file", w->sample);
			return cnt_typed_in_where(&in->t, err);
		}
		if (v.u.v[7].u.i < 4 || v.u.v[7].u.i > 18) {
			cnt_err_set(err, "hll_precision %lld out of range 4..18: corrupt file", (long long)v.u.v[7].u.i);
			return cnt_typed_in_where(&in->t, err);
		}
		w->hll_precision = (int)v.u.v[7].u.i;
		if (cnt_event_from_val(&v.u.v[8], &w->ev, &in->ab, err) != 0)
			return -1;
		cnt_windowed_dim_values(w);
		return 1;
	}
	if (cnt_bin_read_long(c, &w->bucket_start) != 0 || cnt_bin_read_long(c, &w->bucket_end) != 0 ||
	    c->p >= c->end || *c->p > 1) {
		cnt_err_set(err, "malformed window fields: corrupt file");
		return cnt_typed_in_where(&in->t, err);
	}
	w->late = *c->p++;
	if (cnt_bin_read_long(c, &shard) != 0 || shard < INT32_MIN || shard > INT32_MAX) {
		cnt_err_set(err, "malformed shard: corrupt file");
		return cnt_typed_in_where(&in->t, err);
	}
	w->shard = (int32_t)shard;
	if (c->p >= c->end || *c->p > 1) {
		cnt_err_set(err, "malformed exact flag: corrupt file");
		return cnt_typed_in_where(&in->t, err);
	}
	w->exact = *c->p++;
	if (cnt_windowed_decode_dims(c, w) != 0) {
		cnt_err_set(err, "malformed dimensions: corrupt file");
		return cnt_typed_in_where(&in->t, err);
	}
	if (cnt_bin_read_long(c, &shard) != 0 || shard < -1 || shard > CNT_APPROX_LEVEL_MAX) {
		cnt_err_set(err, "malformed sample level: corrupt file");
		return cnt_typed_in_where(&in->t, err);
	}
	w->sample = (int)shard;
	if (cnt_bin_read_long(c, &shard) != 0 || shard < 4 || shard > 18) {
		cnt_err_set(err, "malformed hll_precision (4..18): corrupt file");
		return cnt_typed_in_where(&in->t, err);
	}
	w->hll_precision = (int)shard;
	if (cnt_event_decode(c, &w->ev, &in->ab, &in->t.lim, err) != 0)
		return cnt_typed_in_where(&in->t, err);
	cnt_windowed_dim_values(w);
	return 1;
}

int64_t cnt_windowed_in_left(const cnt_windowed_in *in)
{
	return in->t.left;
}
