/*
 * event.c - cnt.CountingEvent encoding and reading (see event.h).
 *
 * Field order of the schema, which the encoder and the fast decoder follow:
 *   0 event_id string          8 event_time long (timestamp-millis)
 *   1 idempotency_key string   9 ingest_time long (timestamp-millis)
 *   2 tenant_id string        10 origin enum {BACKEND, CLIENT}
 *   3 counter_id string       11 subject [null, string]
 *   4 counter_version int     12 signature [null, bytes]
 *   5 member_ref string       13 retracts [null, string]
 *   6 item [null, string]     14 retraction_id [null, string]
 *   7 delta long              15 attrs map<string>
 * A test checks this table against the schema file.
 */
#include "model/event.h"
#include "model/defs.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>


#include "avro/encoding.h"
#include "model/record_reader.h"

extern const char cnt_schema_counting_event[];

/* A string at p: its length, then its bytes; returns the end. */
static inline uint8_t *put_str(uint8_t *p, cnt_slice s)
{
	p += cnt_bin_put_long(p, (int64_t)s.n);
	if (s.n > 0)
		memcpy(p, s.p, s.n);
	return p + s.n;
}

/* A [null, string] union at p (NULL p: null); returns the end. */
static inline uint8_t *put_opt(uint8_t *p, cnt_slice s)
{
	if (s.p == NULL) {
		*p = 0;
		return p + 1;
	}
	*p = 2;
	return put_str(p + 1, s);
}

/* Adds a string's bytes at most (its length's 10 and itself) to *need;
 * -1 past what memory can hold. */
static inline int room_for(size_t *need, cnt_slice s)
{
	if (s.n > SIZE_MAX / 4 - *need)
		return -1;
	*need += s.n + 11;
	return 0;
}

/* Room is made once for the whole record, which is then written without
 * a check a field (admission encodes every event it accepts). */
int cnt_event_encode(const cnt_event *e, cnt_buf *b)
{
	size_t need = 6 * 10 + 1 + 10;   /* the longs, origin, the map's count and end */
	uint8_t *p;
	int rc = 0;

	rc |= room_for(&need, e->event_id);
	rc |= room_for(&need, e->idempotency_key);
	rc |= room_for(&need, e->tenant_id);
	rc |= room_for(&need, e->counter_id);
	rc |= room_for(&need, e->member_ref);
	rc |= room_for(&need, e->item);
	rc |= room_for(&need, e->subject);
	rc |= room_for(&need, e->signature);
	rc |= room_for(&need, e->retracts);
	rc |= room_for(&need, e->retraction_id);
	for (size_t i = 0; i < e->nattrs && rc == 0; i++)
		rc |= room_for(&need, e->attr_keys[i]) | room_for(&need, e->attr_vals[i]);
	if (rc != 0 || cnt_buf_reserve(b, need) != 0)
		return -1;
	p = b->p + b->len;
	p = put_str(p, e->event_id);
	p = put_str(p, e->idempotency_key);
	p = put_str(p, e->tenant_id);
	p = put_str(p, e->counter_id);
	p += cnt_bin_put_long(p, e->counter_version);
	p = put_str(p, e->member_ref);
	p = put_opt(p, e->item);
	p += cnt_bin_put_long(p, e->delta);
	p += cnt_bin_put_long(p, e->event_time);
	p += cnt_bin_put_long(p, e->ingest_time);
	p += cnt_bin_put_long(p, e->origin);
	p = put_opt(p, e->subject);
	p = put_opt(p, e->signature);
	p = put_opt(p, e->retracts);
	p = put_opt(p, e->retraction_id);
	if (e->nattrs) {
		p += cnt_bin_put_long(p, (int64_t)e->nattrs);
		for (size_t i = 0; i < e->nattrs; i++) {
			p = put_str(p, e->attr_keys[i]);
			p = put_str(p, e->attr_vals[i]);
		}
	}
	*p++ = 0;
	b->len = (size_t)(p - b->p);
	return 0;
}

cnt_writer *cnt_event_writer_new(int fd, const char *name, cnt_codec_id codec,
	int level, cnt_err *err)
{
	char *compact = cnt_schema_compact(cnt_schema_counting_event, err);
	cnt_writer *w;

	if (compact == NULL)
		return NULL;
	w = cnt_writer_new(fd, name, compact, codec, level, 0, err);
	free(compact);
	return w;
}

/* ---- reading -------------------------------------------------------- */

struct cnt_event_in {
	cnt_typed_in t;
	cnt_attrs_buf ab;
	const uint8_t *raw;      /* last fast-path record's bytes */
	size_t rawn;
};

static int grow_attrs(cnt_attrs_buf *ab, size_t n)
{
	cnt_slice *k, *v;
	size_t cap = ab->cap ? ab->cap : 8;

	if (n <= ab->cap)
		return 0;
	while (cap < n)
		cap *= 2;
	k = realloc(ab->keys, cap * sizeof(*k));
	if (k == NULL)
		return -1;
	ab->keys = k;
	v = realloc(ab->vals, cap * sizeof(*v));
	if (v == NULL)
		return -1;
	ab->vals = v;
	ab->cap = cap;
	return 0;
}

void cnt_attrs_buf_release(cnt_attrs_buf *ab)
{
	free(ab->keys);
	free(ab->vals);
	ab->keys = ab->vals = NULL;
	ab->cap = 0;
}

cnt_event_in *cnt_event_in_open(int fd, const char *name, const cnt_limits *lim, cnt_err *err)
{
	cnt_event_in *in = calloc(1, sizeof(*in));

	if (in == NULL) {
		cnt_err_nomem(err);
		return NULL;
	}
	if (cnt_typed_in_open(&in->t, fd, name, cnt_schema_counting_event, lim, err) != 0) {
		free(in);
		return NULL;
	}
	return in;
}

void cnt_event_in_free(cnt_event_in *in)
{
	if (in == NULL)
		return;
	cnt_typed_in_release(&in->t);
	cnt_attrs_buf_release(&in->ab);
	free(in);
}

#define GET_STR(c, s) do { \
	const uint8_t *p_; size_t n_; \
	if (cnt_bin_read_bytes(c, &p_, &n_) != 0) goto trunc; \
	(s).p = (const char *)p_; (s).n = n_; \
} while (0)

#define GET_OPT(c, s) do { \
	int64_t b_; \
	if (cnt_bin_read_long(c, &b_) != 0) goto trunc; \
	if (b_ == 0) { (s).p = NULL; (s).n = 0; } \
	else if (b_ == 1) GET_STR(c, s); \
	else { what = "union branch out of range"; goto bad; } \
} while (0)

int cnt_event_decode(cnt_cur *c, cnt_event *e, cnt_attrs_buf *ab, const cnt_limits *lim, cnt_err *err)
{
	const char *what = NULL;
	int64_t v, n;
	size_t na = 0;

	GET_STR(c, e->event_id);
	GET_STR(c, e->idempotency_key);
	GET_STR(c, e->tenant_id);
	GET_STR(c, e->counter_id);
	if (cnt_bin_read_long(c, &v) != 0)
		goto trunc;
	if (v < INT32_MIN || v > INT32_MAX) {
		what = "counter_version out of int range";
		goto bad;
	}
	e->counter_version = (int32_t)v;
	GET_STR(c, e->member_ref);
	GET_OPT(c, e->item);
	if (cnt_bin_read_long(c, &e->delta) != 0 || cnt_bin_read_long(c, &e->event_time) != 0 ||
	    cnt_bin_read_long(c, &e->ingest_time) != 0 || cnt_bin_read_long(c, &v) != 0)
		goto trunc;
	if (v != 0 && v != 1) {
		what = "origin enum index out of range";
		goto bad;
	}
	e->origin = (int)v;
	GET_OPT(c, e->subject);
	GET_OPT(c, e->signature);
	GET_OPT(c, e->retracts);
	GET_OPT(c, e->retraction_id);
	for (;;) {
		if (cnt_bin_read_long(c, &n) != 0)
			goto trunc;
		if (n == 0)
			break;
		if (n < 0) {
			int64_t bytes;

			if (n == INT64_MIN || cnt_bin_read_long(c, &bytes) != 0)
				goto trunc;
			n = -n;
		}
		if ((uint64_t)n > lim->max_collection - na) {
			what = "attrs map longer than the max_collection bound";
			goto bad;
		}
		/* An entry takes at least two bytes (two empty strings): a
		 * count the block cannot hold is refused before anything is
		 * allocated for it. */
		if ((uint64_t)n > (uint64_t)(c->end - c->p) / 2)
			goto trunc;
		if (ab == NULL) {
			/* checked, not kept (cnt_event_skip) */
			cnt_slice ks, vs;

			for (int64_t i = 0; i < n; i++, na++) {
				GET_STR(c, ks);
				GET_STR(c, vs);
			}
			(void)ks;
			(void)vs;
			continue;
		}
		if (grow_attrs(ab, na + (size_t)n) != 0)
			return cnt_err_nomem(err);
		for (int64_t i = 0; i < n; i++, na++) {
			GET_STR(c, ab->keys[na]);
			GET_STR(c, ab->vals[na]);
		}
	}
	e->nattrs = ab ? na : 0;
	e->attr_keys = ab ? ab->keys : NULL;
	e->attr_vals = ab ? ab->vals : NULL;
	return 0;
trunc:
	what = "record runs past the end of its block";
bad:
	return cnt_err_set(err, "%s: corrupt file", what);
}

/* The count's check is the readers' decoder itself, attrs not kept: what
 * cnt-cat --count measures is what every event reader does per record. */
int cnt_event_skip(cnt_cur *c, const cnt_limits *lim)
{
	cnt_event e;

	return cnt_event_decode(c, &e, NULL, lim, NULL);
}

char *cnt_event_canonical(void)
{
	cnt_err err;
	cnt_avro_schema *s = cnt_avro_schema_parse(cnt_schema_counting_event, strlen(cnt_schema_counting_event), &err);
	cnt_buf canon = CNT_BUF_INIT;

	if (s == NULL || cnt_schema_canonical(s->root, &canon) != 0 || cnt_buf_putc(&canon, 0) != 0) {
		cnt_buf_release(&canon);
		cnt_avro_schema_free(s);
		return NULL;
	}
	cnt_avro_schema_free(s);
	return (char *)canon.p;
}

static cnt_slice slice_of(const cnt_val *v)
{
	cnt_slice s = {NULL, 0};

	if (v->type == CNT_T_UNION)
		v = v->u.v;
	if (v->type == CNT_T_STRING || v->type == CNT_T_BYTES) {
		s.p = (const char *)v->u.s;
		s.n = v->n;
		if (s.p == NULL)
			s.p = "";
	}
	return s;
}

/* The generic path: a resolved cnt_val in our schema's field order. */
int cnt_event_from_val(const cnt_val *r, cnt_event *e, cnt_attrs_buf *ab, cnt_err *err)
{
	const cnt_val *f = r->u.v, *m;

	e->event_id = slice_of(&f[0]);
	e->idempotency_key = slice_of(&f[1]);
	e->tenant_id = slice_of(&f[2]);
	e->counter_id = slice_of(&f[3]);
	e->counter_version = (int32_t)f[4].u.i;
	e->member_ref = slice_of(&f[5]);
	e->item = slice_of(&f[6]);
	e->delta = f[7].u.i;
	e->event_time = f[8].u.i;
	e->ingest_time = f[9].u.i;
	e->origin = (int)f[10].n;
	e->subject = slice_of(&f[11]);
	e->signature = slice_of(&f[12]);
	e->retracts = slice_of(&f[13]);
	e->retraction_id = slice_of(&f[14]);
	m = &f[15];
	if (grow_attrs(ab, m->n) != 0)
		return cnt_err_nomem(err);
	for (uint32_t i = 0; i < m->n; i++) {
		ab->keys[i] = slice_of(&m->u.v[2 * i]);
		ab->vals[i] = slice_of(&m->u.v[2 * i + 1]);
	}
	e->nattrs = m->n;
	e->attr_keys = ab->keys;
	e->attr_vals = ab->vals;
	return 0;
}

int cnt_event_in_next(cnt_event_in *in, cnt_event *e, cnt_err *err)
{
	cnt_val v;
	int rc = cnt_typed_in_step(&in->t, err);

	if (rc <= 0)
		return rc;
	if (in->t.fast) {
		in->raw = in->t.cur.p;
		if (cnt_event_decode(&in->t.cur, e, &in->ab, &in->t.lim, err) != 0)
			return cnt_typed_in_where(&in->t, err);
		in->rawn = (size_t)(in->t.cur.p - in->raw);
		return 1;
	}
	in->raw = NULL;
	if (cnt_typed_in_resolve(&in->t, &v, err) != 0)
		return -1;
	return cnt_event_from_val(&v, e, &in->ab, err) == 0 ? 1 : -1;
}

int cnt_event_in_raw(const cnt_event_in *in, const uint8_t **p, size_t *n)
{
	if (in->raw == NULL)
		return 0;
	*p = in->raw;
	*n = in->rawn;
	return 1;
}

uint64_t cnt_event_in_record_no(const cnt_event_in *in)
{
	return in->t.record_no;
}

int cnt_event_in_fast(const cnt_event_in *in)
{
	return in->t.fast;
}

int cnt_event_sample_parse(const char *p, size_t n, int *level)
{
	int l = 0;

	if (n < 1 || n > 2 || p[0] < '1' || p[0] > '9')
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		l = l * 10 + (p[i] - '0');
	}
	if (l > CNT_APPROX_LEVEL_MAX)
		return -1;
	*level = l;
	return 0;
}

int cnt_event_sample_level(const cnt_event *e)
{
	static const size_t kn = sizeof(CNT_EVENT_SAMPLE_ATTR) - 1;
	int l;

	for (size_t i = 0; i < e->nattrs; i++)
		if (e->attr_keys[i].n == kn && memcmp(e->attr_keys[i].p, CNT_EVENT_SAMPLE_ATTR, kn) == 0)
			return cnt_event_sample_parse(e->attr_vals[i].p, e->attr_vals[i].n, &l) == 0 ? l : -1;
	return 0;
}
