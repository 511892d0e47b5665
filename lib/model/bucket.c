/*
 * bucket.c - bucket aggregates (see bucket.h).
 *
 * Field order of bucket_aggregate.avsc, which the encoder and the fast
 * decoder follow: tenant_id, counter_id, counter_version, member_ref,
 * dim, dim_value, bucket_start, bucket_end, shard, count, sum, sum_high, sum_overflow,
 * min, max, last_event_time, max_ingest_time, late_count, late_sum,
 * late_sum_high, late_sum_overflow, sketch, late_sketch, last_event_count,
 * max_ingest_count, sampled, sum_var, sum_var_high.  A 128-bit sum is
 * written as its low 64 bits (sum) and high 64 bits (sum_high); when it
 * fits a long, sum is the value itself and sum_overflow is false.
 */
#include "model/bucket.h"

#include <stdlib.h>
#include <string.h>


#include "avro/encoding.h"
#include "avro/json.h"
#include "count/rollup.h"

extern const char cnt_schema_bucket_aggregate[];

static int put_str(cnt_buf *b, cnt_slice s)
{
	return cnt_bin_write_bytes(b, s.p ? s.p : "", s.n);
}

static int put_sum(cnt_buf *b, cnt_i128 v)
{
	int rc = 0;

	rc |= cnt_bin_write_long(b, (int64_t)(uint64_t)(unsigned __int128)v);
	rc |= cnt_bin_write_long(b, (int64_t)(v >> 64));
	rc |= cnt_buf_putc(b, cnt_i128_fits64(v) ? 0 : 1);
	return rc;
}

static int put_optlong(cnt_buf *b, int has, int64_t v)
{
	if (!has)
		return cnt_buf_putc(b, 0);
	return cnt_buf_putc(b, 2) | cnt_bin_write_long(b, v);
}

static int put_optbytes(cnt_buf *b, cnt_slice s)
{
	if (s.p == NULL)
		return cnt_buf_putc(b, 0);
	return cnt_buf_putc(b, 2) | cnt_bin_write_bytes(b, s.p, s.n);
}

int cnt_bucket_encode(const cnt_bucket *b, cnt_buf *out)
{
	int rc = 0;

	rc |= put_str(out, b->tenant_id);
	rc |= put_str(out, b->counter_id);
	rc |= cnt_bin_write_long(out, b->counter_version);
	rc |= put_str(out, b->member_ref);
	rc |= put_str(out, b->dim);
	rc |= put_str(out, b->dim_value);
	rc |= cnt_bin_write_long(out, b->bucket_start);
	rc |= cnt_bin_write_long(out, b->bucket_end);
	rc |= cnt_bin_write_long(out, b->shard);
	rc |= cnt_bin_write_long(out, b->count);
	rc |= put_sum(out, b->sum);
	rc |= put_optlong(out, b->has_min, b->min);
	rc |= put_optlong(out, b->has_max, b->max);
	rc |= put_optlong(out, b->has_last, b->last_event_time);
	rc |= cnt_bin_write_long(out, b->max_ingest_time);
	rc |= cnt_bin_write_long(out, b->late_count);
	rc |= put_sum(out, b->late_sum);
	rc |= put_optbytes(out, b->sketch);
	rc |= put_optbytes(out, b->late_sketch);
	rc |= cnt_bin_write_long(out, b->last_count);
	rc |= cnt_bin_write_long(out, b->ingest_count);
	rc |= cnt_bin_write_long(out, b->sampled);
	rc |= cnt_bin_write_long(out, (int64_t)(uint64_t)(unsigned __int128)b->sum_var);
	rc |= cnt_bin_write_long(out, (int64_t)((unsigned __int128)b->sum_var >> 64));
	return rc ? -1 : 0;
}

cnt_writer *cnt_bucket_writer_new(int fd, const char *name, cnt_codec_id codec, int level, cnt_err *err)
{
	char *compact = cnt_schema_compact(cnt_schema_bucket_aggregate, err);
	cnt_writer *w;

	if (compact == NULL)
		return NULL;
	if (codec == CNT_CODEC_ZSTD && level == CNT_LEVEL_DEFAULT)
		level = CNT_BUCKET_ZSTD_LEVEL;
	w = cnt_writer_new(fd, name, compact, codec, level, 0, err);
	free(compact);
	return w;
}

static int slice_cmp(cnt_slice a, cnt_slice b)
{
	size_t n = a.n < b.n ? a.n : b.n;
	int d = n ? memcmp(a.p, b.p, n) : 0;

	if (d)
		return d;
	return a.n < b.n ? -1 : a.n > b.n;
}

int cnt_bucket_key_cmp(const cnt_bucket *a, const cnt_bucket *b)
{
	int d;

	if ((d = slice_cmp(a->tenant_id, b->tenant_id)) != 0 || (d = slice_cmp(a->counter_id, b->counter_id)) != 0)
		return d;
	if (a->counter_version != b->counter_version)
		return a->counter_version < b->counter_version ? -1 : 1;
	if ((d = slice_cmp(a->member_ref, b->member_ref)) != 0 || (d = slice_cmp(a->dim, b->dim)) != 0 ||
	    (d = slice_cmp(a->dim_value, b->dim_value)) != 0)
		return d;
	if (a->bucket_start != b->bucket_start)
		return a->bucket_start < b->bucket_start ? -1 : 1;
	if (a->shard != b->shard)
		return a->shard < b->shard ? -1 : 1;
	return 0;
}

/* ---- reading -------------------------------------------------------- */

int cnt_bucket_in_open(cnt_bucket_in *in, int fd, const char *name, const cnt_limits *lim, cnt_err *err)
{
	in->days = in->is_day = in->saw_days = 0;
	in->cont = 0;
	return cnt_typed_in_open(&in->t, fd, name, cnt_schema_bucket_aggregate, lim, err);
}

int cnt_bucket_in_adopt(cnt_bucket_in *in, cnt_records *rin, const cnt_limits *lim, cnt_err *err)
{
	in->days = in->is_day = in->saw_days = 0;
	in->cont = 0;
	return cnt_typed_in_adopt(&in->t, rin, cnt_schema_bucket_aggregate, lim, err);
}

void cnt_bucket_in_release(cnt_bucket_in *in)
{
	cnt_typed_in_release(&in->t);
}

static int get_str(cnt_cur *c, cnt_slice *s)
{
	const uint8_t *p;
	size_t n;

	if (cnt_bin_read_bytes(c, &p, &n) != 0)
		return -1;
	s->p = (const char *)p;
	s->n = n;
	return 0;
}

int cnt_bucket_rec_key(const uint8_t *p, size_t n, cnt_bucket *k)
{
	cnt_cur c = {p, p + n};
	int64_t version, end, shard;

	if (get_str(&c, &k->tenant_id) || get_str(&c, &k->counter_id) || cnt_bin_read_long(&c, &version) ||
	    get_str(&c, &k->member_ref) || get_str(&c, &k->dim) || get_str(&c, &k->dim_value) ||
	    cnt_bin_read_long(&c, &k->bucket_start) || cnt_bin_read_long(&c, &end) || cnt_bin_read_long(&c, &shard))
		return -1;
	k->counter_version = (int32_t)version;
	k->shard = (int32_t)shard;
	return 0;
}

/* The next record of a merge's source i, its key read; got[i] as next(). */
static void merge_next(const cnt_bucket_src *src, size_t i, const uint8_t **r, size_t *n, cnt_bucket *k, int *got)
{
	got[i] = src[i].next(src[i].ctx, &r[i], &n[i]);
	/* a record too short for its key (never ours): an empty key, first */
	if (got[i] > 0 && cnt_bucket_rec_key(r[i], n[i], &k[i]) != 0)
		memset(&k[i], 0, sizeof(k[i]));
}

static int merge(const cnt_bucket_src *src, size_t n, int runs, cnt_writer *w, size_t *failed, cnt_err *err)
{
	const uint8_t *r[8];
	size_t len[8];
	cnt_bucket k[8];
	int got[8];

	if (n > 8)
		return cnt_err_set(err, "internal: merging %zu sources", n);
	for (size_t i = 0; i < n; i++)
		merge_next(src, i, r, len, k, got);
	for (;;) {
		size_t at = n, pl;
		uint8_t pfx[256];

		/* the smallest head; keys are disjoint, never equal */
		for (size_t i = 0; i < n; i++) {
			if (got[i] < 0) {
				*failed = i;
				return 1;
			}
			if (got[i] > 0 && (at == n || cnt_bucket_key_cmp(&k[i], &k[at]) < 0))
				at = i;
		}
		if (at == n)
			return 0;
		/* runs: the bytes of its tenant, counter, version and member
		 * (whose encoding is canonical), which no other source has */
		pl = runs && k[at].member_ref.p ? (size_t)((const uint8_t *)k[at].member_ref.p + k[at].member_ref.n - r[at]) : 0;
		if (pl > sizeof(pfx) || pl > len[at])
			pl = 0;
		memcpy(pfx, r[at], pl);
		for (;;) {
			if (cnt_buf_append(cnt_writer_buf(w), r[at], len[at]) != 0)
				return cnt_err_nomem(err);
			if (cnt_writer_commit(w, err) != 0)
				return -1;
			/* the source's next record of the same member comes next
			 * too: its key is greater than this one's, and every other
			 * source's head is of another member, hence greater still */
			if (pl == 0) {
				merge_next(src, at, r, len, k, got);
				break;
			}
			if ((got[at] = src[at].next(src[at].ctx, &r[at], &len[at])) <= 0)
				break;
			if (len[at] <= pl || memcmp(r[at], pfx, pl) != 0) {
				if (cnt_bucket_rec_key(r[at], len[at], &k[at]) != 0)
					memset(&k[at], 0, sizeof(k[at]));
				break;
			}
		}
	}
}

int cnt_bucket_merge(const cnt_bucket_src *src, size_t n, cnt_writer *w, size_t *failed, cnt_err *err)
{
	return merge(src, n, 0, w, failed, err);
}

int cnt_bucket_merge_members(const cnt_bucket_src *src, size_t n, cnt_writer *w, size_t *failed, cnt_err *err)
{
	return merge(src, n, 1, w, failed, err);
}

static int get_sum(cnt_cur *c, cnt_i128 *v)
{
	int64_t lo, hi;

	if (cnt_bin_read_long(c, &lo) != 0 || cnt_bin_read_long(c, &hi) != 0 || c->p >= c->end || *c->p > 1)
		return -1;
	c->p++;   /* the overflow flag is derived, not trusted */
	*v = (cnt_i128)(((unsigned __int128)(uint64_t)hi << 64) | (uint64_t)lo);
	return 0;
}

static int get_optlong(cnt_cur *c, int *has, int64_t *v)
{
	int64_t br;

	if (cnt_bin_read_long(c, &br) != 0 || (br != 0 && br != 1))
		return -1;
	*has = (int)br;
	return br ? cnt_bin_read_long(c, v) : 0;
}

static int get_optbytes(cnt_cur *c, cnt_slice *s)
{
	int64_t br;

	if (cnt_bin_read_long(c, &br) != 0 || (br != 0 && br != 1))
		return -1;
	if (br == 0) {
		s->p = NULL;
		s->n = 0;
		return 0;
	}
	return get_str(c, s);
}

static int decode_fast(cnt_cur *c, cnt_bucket *b)
{
	int64_t v, shard, vlo, vhi;

	if (get_str(c, &b->tenant_id) || get_str(c, &b->counter_id) ||
	    cnt_bin_read_long(c, &v) || v < INT32_MIN || v > INT32_MAX)
		return -1;
	b->counter_version = (int32_t)v;
	if (get_str(c, &b->member_ref) || get_str(c, &b->dim) || get_str(c, &b->dim_value) ||
	    cnt_bin_read_long(c, &b->bucket_start) ||
	    cnt_bin_read_long(c, &b->bucket_end) || cnt_bin_read_long(c, &shard) ||
	    shard < INT32_MIN || shard > INT32_MAX)
		return -1;
	b->shard = (int32_t)shard;
	if (cnt_bin_read_long(c, &b->count) || get_sum(c, &b->sum) ||
	    get_optlong(c, &b->has_min, &b->min) || get_optlong(c, &b->has_max, &b->max) ||
	    get_optlong(c, &b->has_last, &b->last_event_time) || cnt_bin_read_long(c, &b->max_ingest_time) ||
	    cnt_bin_read_long(c, &b->late_count) || get_sum(c, &b->late_sum) ||
	    get_optbytes(c, &b->sketch) || get_optbytes(c, &b->late_sketch) ||
	    cnt_bin_read_long(c, &b->last_count) || cnt_bin_read_long(c, &b->ingest_count) ||
	    cnt_bin_read_long(c, &b->sampled) || cnt_bin_read_long(c, &vlo) || cnt_bin_read_long(c, &vhi))
		return -1;
	b->sum_var = (cnt_i128)(((unsigned __int128)(uint64_t)vhi << 64) | (uint64_t)vlo);
	return 0;
}

static cnt_slice vslice(const cnt_val *v)
{
	cnt_slice s = {NULL, 0};

	if (v->type == CNT_T_UNION)
		v = v->u.v;
	if (v->type == CNT_T_STRING || v->type == CNT_T_BYTES) {
		s.p = v->u.s ? (const char *)v->u.s : "";
		s.n = v->n;
	}
	return s;
}

static int vopt(const cnt_val *v, int64_t *out)
{
	if (v->type == CNT_T_UNION)
		v = v->u.v;
	if (v->type != CNT_T_LONG)
		return 0;
	*out = v->u.i;
	return 1;
}

static void from_val(const cnt_val *r, cnt_bucket *b)
{
	const cnt_val *f = r->u.v;

	b->tenant_id = vslice(&f[0]);
	b->counter_id = vslice(&f[1]);
	b->counter_version = (int32_t)f[2].u.i;
	b->member_ref = vslice(&f[3]);
	b->dim = vslice(&f[4]);
	b->dim_value = vslice(&f[5]);
	f += 2;
	b->bucket_start = f[4].u.i;
	b->bucket_end = f[5].u.i;
	b->shard = (int32_t)f[6].u.i;
	b->count = f[7].u.i;
	b->sum = (cnt_i128)(((unsigned __int128)(uint64_t)f[9].u.i << 64) | (uint64_t)f[8].u.i);
	b->has_min = vopt(&f[11], &b->min);
	b->has_max = vopt(&f[12], &b->max);
	b->has_last = vopt(&f[13], &b->last_event_time);
	b->max_ingest_time = f[14].u.i;
	b->late_count = f[15].u.i;
	b->late_sum = (cnt_i128)(((unsigned __int128)(uint64_t)f[17].u.i << 64) | (uint64_t)f[16].u.i);
	b->sketch = vslice(&f[19]);
	b->late_sketch = vslice(&f[20]);
	b->last_count = f[21].u.i;
	b->ingest_count = f[22].u.i;
	b->sampled = f[23].u.i;
	b->sum_var = (cnt_i128)(((unsigned __int128)(uint64_t)f[25].u.i << 64) | (uint64_t)f[24].u.i);
}

int cnt_bucket_in_next(cnt_bucket_in *in, cnt_bucket *b, cnt_err *err)
{
	cnt_val v;
	int rc;

	for (;;) {
		unsigned cont;

		if ((rc = cnt_typed_in_step(&in->t, err)) < 0)
			return rc;
		/* at the end too: a day container without records (a header and
		 * its end marker) is the last, and counts as seen */
		cont = cnt_reader_container(cnt_records_reader(in->t.rin));
		if (cont != in->cont) {
			const cnt_meta_kv *kv;
			size_t n = cnt_reader_meta(cnt_records_reader(in->t.rin), &kv);

			if ((in->is_day = cnt_rollup_kind(kv, n, in->t.name, err)) < 0)
				return -1;
			in->cont = cont;
		}
		if (in->is_day)
			in->saw_days = 1;
		if (rc == 0)
			return 0;
		if (in->days < 0 || in->is_day == in->days)
			break;
		/* the other kind's container: its block is skipped whole */
		in->t.left = 0;
		in->t.cur.p = in->t.cur.end;
	}
	if (!in->t.fast) {
		if (cnt_typed_in_resolve(&in->t, &v, err) != 0)
			return -1;
		from_val(&v, b);
		return 1;
	}
	if (decode_fast(&in->t.cur, b) != 0) {
		cnt_err_set(err, "malformed bucket record: corrupt file");
		return cnt_typed_in_where(&in->t, err);
	}
	return 1;
}

static int put_i128(cnt_buf *out, cnt_i128 v)
{
	char tmp[48];
	int i = (int)sizeof(tmp);
	unsigned __int128 u = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;

	tmp[--i] = 0;
	do {
		tmp[--i] = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u);
	if (v < 0)
		tmp[--i] = '-';
	return cnt_buf_append(out, tmp + i, sizeof(tmp) - 1 - (size_t)i);
}

static int put_estimate(cnt_buf *out, const char *name, cnt_slice s)
{
	cnt_hll h;
	cnt_err err;

	if (cnt_buf_printf(out, ",\"%s\":", name) != 0)
		return -1;
	if (s.p == NULL)
		return cnt_buf_append(out, "null", 4);
	if (cnt_hll_deserialize(&h, (const uint8_t *)s.p, s.n, &err) != 0)
		return err.kind == CNT_ERR_NOMEM ? -1 : cnt_buf_append(out, "null", 4);
	if (cnt_buf_printf(out, "%llu", (unsigned long long)cnt_hll_estimate(&h)) != 0) {
		cnt_hll_release(&h);
		return -1;
	}
	cnt_hll_release(&h);
	return 0;
}

static int put_opt(cnt_buf *out, const char *name, int has, int64_t v)
{
	if (!has)
		return cnt_buf_printf(out, ",\"%s\":null", name);
	return cnt_buf_printf(out, ",\"%s\":%lld", name, (long long)v);
}

int cnt_bucket_to_json(const cnt_bucket *b, cnt_buf *out)
{
	int rc = 0;

	rc |= cnt_buf_append(out, "{\"tenant_id\":", 13);
	rc |= cnt_json_string(out, (const uint8_t *)b->tenant_id.p, b->tenant_id.n, 0);
	rc |= cnt_buf_append(out, ",\"counter_id\":", 14);
	rc |= cnt_json_string(out, (const uint8_t *)b->counter_id.p, b->counter_id.n, 0);
	rc |= cnt_buf_printf(out, ",\"counter_version\":%d,\"member_ref\":", (int)b->counter_version);
	rc |= cnt_json_string(out, (const uint8_t *)b->member_ref.p, b->member_ref.n, 0);
	if (b->dim.n) {
		rc |= cnt_buf_append(out, ",\"dim\":", 7);
		rc |= cnt_json_string(out, (const uint8_t *)b->dim.p, b->dim.n, 0);
		rc |= cnt_buf_append(out, ",\"dim_value\":", 13);
		rc |= cnt_json_string(out, (const uint8_t *)b->dim_value.p, b->dim_value.n, 0);
	}
	rc |= cnt_buf_printf(out, ",\"bucket_start\":%lld,\"bucket_end\":%lld,\"shard\":%d,\"count\":%lld,\"sum\":",
		(long long)b->bucket_start, (long long)b->bucket_end, (int)b->shard, (long long)b->count);
	rc |= put_i128(out, b->sum);
	rc |= put_opt(out, "min", b->has_min, b->min);
	rc |= put_opt(out, "max", b->has_max, b->max);
	rc |= put_opt(out, "last_event_time", b->has_last, b->last_event_time);
	rc |= cnt_buf_printf(out, ",\"max_ingest_time\":%lld,\"late_count\":%lld,\"late_sum\":",
		(long long)b->max_ingest_time, (long long)b->late_count);
	rc |= put_i128(out, b->late_sum);
	rc |= put_estimate(out, "sketch_estimate", b->sketch);
	rc |= put_estimate(out, "late_sketch_estimate", b->late_sketch);
	rc |= cnt_buf_printf(out, ",\"last_event_count\":%lld,\"max_ingest_count\":%lld",
		(long long)b->last_count, (long long)b->ingest_count);
	if (b->sampled != 0 || b->sum_var != 0) {
		rc |= cnt_buf_printf(out, ",\"sampled\":%lld,\"sum_var\":", (long long)b->sampled);
		rc |= put_i128(out, b->sum_var);
	}
	rc |= cnt_buf_putc(out, '}');
	return rc ? -1 : 0;
}

static int sketch_differs(cnt_slice a, cnt_slice b, double tolerance)
{
	cnt_hll ha, hb;
	cnt_err err;
	double ea, eb;

	if ((a.p == NULL) != (b.p == NULL))
		return 1;
	if (a.p == NULL)
		return 0;
	if (a.n == b.n && memcmp(a.p, b.p, a.n) == 0)
		return 0;
	if (tolerance <= 0)
		return 1;
	if (cnt_hll_deserialize(&ha, (const uint8_t *)a.p, a.n, &err) != 0)
		return err.kind == CNT_ERR_NOMEM ? -1 : 1;
	if (cnt_hll_deserialize(&hb, (const uint8_t *)b.p, b.n, &err) != 0) {
		cnt_hll_release(&ha);
		return err.kind == CNT_ERR_NOMEM ? -1 : 1;
	}
	ea = (double)cnt_hll_estimate(&ha);
	eb = (double)cnt_hll_estimate(&hb);
	cnt_hll_release(&ha);
	cnt_hll_release(&hb);
	return (ea > eb ? ea - eb : eb - ea) > tolerance * (ea > eb ? ea : eb);
}

int cnt_bucket_values_differ(const cnt_bucket *a, const cnt_bucket *b, double tolerance)
{
	int d;

	if (a->bucket_end != b->bucket_end || a->count != b->count || a->sum != b->sum ||
	    a->has_min != b->has_min || (a->has_min && a->min != b->min) ||
	    a->has_max != b->has_max || (a->has_max && a->max != b->max) ||
	    a->has_last != b->has_last || (a->has_last && a->last_event_time != b->last_event_time) ||
	    a->max_ingest_time != b->max_ingest_time || a->late_count != b->late_count ||
	    a->late_sum != b->late_sum || a->last_count != b->last_count || a->ingest_count != b->ingest_count ||
	    a->sampled != b->sampled || a->sum_var != b->sum_var)
		return 1;
	d = sketch_differs(a->sketch, b->sketch, tolerance);
	return d != 0 ? d : sketch_differs(a->late_sketch, b->late_sketch, tolerance);
}

int cnt_bucket_stale(const cnt_bucket *b)
{
	int r = 0;

	if (b->count < 0 || b->late_count < 0 || b->count + b->late_count == 0)
		return 0;
	if (b->count > 0 && (!b->has_last || b->last_count <= 0))
		r |= 1;
	if (b->ingest_count <= 0)
		r |= 2;
	return r;
}
