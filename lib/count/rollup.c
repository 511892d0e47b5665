/*
 * rollup.c - local-day roll-ups of bucket files (see rollup.h).
 */
#include "count/rollup.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/table.h"
#include "base/text.h"
#include "count/hll.h"
#include "model/defs.h"

/* One day's union for one shard of the current key prefix. */
typedef struct dayagg {
	int32_t shard;
	cnt_bucket b;                 /* numbers; strings unused */
	int has_ingest;
	cnt_hll *sketch, *late_sketch;
} dayagg;

struct cnt_rollup {
	cnt_rollup_zone_fn zone;
	void *ctx;
	/* the current prefix (tenant .. dim_value) and day */
	cnt_buf prefix;               /* the strings, back to back */
	cnt_bucket key;               /* slices into prefix */
	int have;
	const cnt_tz *tz;
	cnt_buf tenant;               /* the tenant tz is for */
	int have_tz;
	int64_t day_start, day_end;
	dayagg *d;
	size_t nd, cap;
	/* output: encoded day records and where each ends, kept until the
	 * end (at 10 M events a hundred MB or more): in a loan, then in
	 * memory grown by cnt_table_grow (remapped, not copied, above 4 MiB) */
	uint8_t *out;
	size_t olen, ocap;
	int out_lent;                 /* out is the caller's (cnt_rollup_lend) */
	size_t *ends;
	uint64_t n, ecap;
	cnt_buf rec;                  /* one record, encoded */
	cnt_buf s1, s2;
};

cnt_rollup *cnt_rollup_new(cnt_rollup_zone_fn zone, void *ctx)
{
	cnt_rollup *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->zone = zone;
	r->ctx = ctx;
	return r;
}

const cnt_tz *cnt_rollup_defs_zone(void *ctx, cnt_slice tenant, cnt_err *err)
{
	const cnt_rollup_zones *z = ctx;
	const cnt_tenant *t = cnt_defs_tenant(z->defs, tenant.p, tenant.n);
	const cnt_tz *tz;
	char shown[CNT_SHOWN_SIZE(128)];

	if (t == NULL)
		return cnt_err_set(err, "tenant '%s' is not declared in '%s': its day roll-ups need its timezone",
			cnt_shown(tenant.p, tenant.n, 128, shown), z->defs_name), NULL;
	tz = cnt_tz_cache_get(z->tzc, t->timezone, err);
	if (tz == NULL)
		cnt_err_prefix(err, "tenant '%s'", t->tenant_id);
	return tz;
}

static void drop_days(cnt_rollup *r)
{
	for (size_t i = 0; i < r->nd; i++) {
		cnt_hll_free(r->d[i].sketch);
		cnt_hll_free(r->d[i].late_sketch);
	}
	r->nd = 0;
}

void cnt_rollup_free(cnt_rollup *r)
{
	if (r == NULL)
		return;
	drop_days(r);
	free(r->d);
	cnt_table_free(r->ends, r->ecap * sizeof(*r->ends));
	if (!r->out_lent)
		cnt_table_free(r->out, r->ocap);
	cnt_buf_release(&r->rec);
	cnt_buf_release(&r->prefix);
	cnt_buf_release(&r->tenant);
	cnt_buf_release(&r->s1);
	cnt_buf_release(&r->s2);
	free(r);
}

void cnt_rollup_lend(cnt_rollup *r, void *mem, size_t bytes)
{
	if (r->out != NULL || mem == NULL || bytes == 0)
		return;
	r->out = mem;
	r->ocap = bytes;
	r->out_lent = 1;
}

uint64_t cnt_rollup_records(const cnt_rollup *r)
{
	return r->n;
}

static int slice_eq(cnt_slice a, cnt_slice b)
{
	return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

static int same_prefix(const cnt_bucket *a, const cnt_bucket *b)
{
	return a->counter_version == b->counter_version && slice_eq(a->member_ref, b->member_ref) &&
		slice_eq(a->counter_id, b->counter_id) && slice_eq(a->tenant_id, b->tenant_id) &&
		slice_eq(a->dim, b->dim) && slice_eq(a->dim_value, b->dim_value);
}

/* (t, n) latest-time combination, as the accumulator's (accum.c) */
static void latest(int64_t *t, int64_t *n, int *has, int64_t u, int64_t m)
{
	if (!*has || u > *t) {
		*t = u;
		*n = m;
		*has = 1;
	} else if (u == *t) {
		*n += m;
	}
}

/* *hp becomes the union of itself and src (NULL: none) */
static int merge_hll(cnt_hll **hp, const cnt_hll *src, cnt_err *err)
{
	return src && cnt_hll_merge_into(hp, src) != 0 ? cnt_err_nomem(err) : 0;
}

static int emit(cnt_rollup *r, const dayagg *d, cnt_err *err)
{
	cnt_bucket b = d->b;

	b.tenant_id = r->key.tenant_id;
	b.counter_id = r->key.counter_id;
	b.counter_version = r->key.counter_version;
	b.member_ref = r->key.member_ref;
	b.dim = r->key.dim;
	b.dim_value = r->key.dim_value;
	b.bucket_start = r->day_start;
	b.bucket_end = r->day_end;
	b.shard = d->shard;
	r->s1.len = r->s2.len = 0;
	b.sketch.p = b.late_sketch.p = NULL;
	b.sketch.n = b.late_sketch.n = 0;
	if (d->sketch) {
		if (cnt_hll_serialize(d->sketch, &r->s1) != 0)
			return cnt_err_nomem(err);
		b.sketch.p = (const char *)r->s1.p;
		b.sketch.n = r->s1.len;
	}
	if (d->late_sketch) {
		if (cnt_hll_serialize(d->late_sketch, &r->s2) != 0)
			return cnt_err_nomem(err);
		b.late_sketch.p = (const char *)r->s2.p;
		b.late_sketch.n = r->s2.len;
	}
	r->rec.len = 0;
	if (cnt_bucket_encode(&b, &r->rec) != 0)
		return cnt_err_nomem(err);
	if (r->n == r->ecap) {
		uint64_t nc = r->ecap ? r->ecap * 2 : 1024;
		size_t *e = nc > SIZE_MAX / sizeof(*e) ? NULL
			: cnt_table_grow(r->ends, r->ecap * sizeof(*e), nc * sizeof(*e));

		if (e == NULL)
			return cnt_err_nomem(err);
		r->ends = e;
		r->ecap = nc;
	}
	if (r->rec.len > r->ocap - r->olen) {
		size_t nc = r->ocap ? r->ocap : (size_t)64 << 10;
		uint8_t *o;

		while (nc - r->olen < r->rec.len)
			if ((nc = nc > SIZE_MAX / 2 ? 0 : 2 * nc) == 0)
				return cnt_err_nomem(err);
		if (r->out_lent) {
			/* outgrown: the records move to memory of r's own */
			if ((o = cnt_table_alloc(nc)) == NULL)
				return cnt_err_nomem(err);
			if (r->olen)
				memcpy(o, r->out, r->olen);
			r->out_lent = 0;
		} else if ((o = cnt_table_grow(r->out, r->ocap, nc)) == NULL) {
			return cnt_err_nomem(err);
		}
		r->out = o;
		r->ocap = nc;
	}
	memcpy(r->out + r->olen, r->rec.p, r->rec.len);
	r->olen += r->rec.len;
	r->ends[r->n++] = r->olen;
	return 0;
}

/* Writes the pending day records (one per shard, in shard order). */
static int flush(cnt_rollup *r, cnt_err *err)
{
	int rc = 0;

	for (size_t i = 0; i < r->nd && rc == 0; i++)
		rc = emit(r, &r->d[i], err);
	drop_days(r);
	return rc;
}

static int set_prefix(cnt_rollup *r, const cnt_bucket *b, cnt_err *err)
{
	const cnt_slice *s[6] = {&b->tenant_id, &b->counter_id, &b->member_ref, &b->dim, &b->dim_value, NULL};
	cnt_slice *d[6] = {&r->key.tenant_id, &r->key.counter_id, &r->key.member_ref, &r->key.dim, &r->key.dim_value, NULL};
	size_t off[5];

	r->prefix.len = 0;
	for (int i = 0; s[i]; i++) {
		off[i] = r->prefix.len;
		if (s[i]->n && cnt_buf_append(&r->prefix, s[i]->p, s[i]->n) != 0)
			return cnt_err_nomem(err);
	}
	for (int i = 0; s[i]; i++) {
		d[i]->p = r->prefix.p ? (const char *)r->prefix.p + off[i] : "";
		d[i]->n = s[i]->n;
	}
	r->key.counter_version = b->counter_version;
	r->have = 1;
	return 0;
}

int cnt_rollup_is_day(const cnt_tz *tz, int64_t start, int64_t end)
{
	cnt_tz_window w = cnt_tz_day(tz, start);

	return w.start_ms == start && w.end_ms == end;
}

void cnt_rollup_days_seen_init(cnt_rollup_days_seen *c)
{
	for (size_t i = 0; i < 256; i++)
		c->v[i][0] = c->v[i][1] = INT64_MIN;
}

int cnt_rollup_check_day(cnt_rollup_days_seen *c, const cnt_tz *tz, const char *name,
	int64_t start, int64_t end, cnt_err *err)
{
	size_t slot = (size_t)((uint64_t)start / 3600000u) & 255u;

	if (c->v[slot][0] == start && c->v[slot][1] == end)
		return 0;
	if (!cnt_rollup_is_day(tz, start, end))
		return cnt_err_set(err, "'%s': a day record of %lld..%lld is not a local day of %s: "
			"corrupt day roll-ups", name, (long long)start, (long long)end, cnt_tz_name(tz));
	c->v[slot][0] = start;
	c->v[slot][1] = end;
	return 0;
}

int cnt_rollup_add(cnt_rollup *r, const cnt_bucket *b, const cnt_hll *sketch, const cnt_hll *late_sketch,
	cnt_err *err)
{
	dayagg *d = NULL;

	if (!r->have || !same_prefix(&r->key, b) || b->bucket_start >= r->day_end || b->bucket_start < r->day_start) {
		if (r->have && flush(r, err) != 0)
			return -1;
		if ((!r->have || !same_prefix(&r->key, b)) && set_prefix(r, b, err) != 0)
			return -1;
		if (!r->have_tz || !slice_eq(b->tenant_id, (cnt_slice){(const char *)r->tenant.p, r->tenant.len})) {
			r->tz = r->zone(r->ctx, b->tenant_id, err);
			if (r->tz == NULL)
				return -1;
			r->tenant.len = 0;
			if (b->tenant_id.n && cnt_buf_append(&r->tenant, b->tenant_id.p, b->tenant_id.n) != 0)
				return cnt_err_nomem(err);
			r->have_tz = 1;
		}
		{
			cnt_tz_window w = cnt_tz_day(r->tz, b->bucket_start);

			r->day_start = w.start_ms;
			r->day_end = w.end_ms;
		}
	}
	if (b->bucket_end > r->day_end || b->bucket_end <= b->bucket_start)
		return cnt_err_set(err, "bucket %lld..%lld is not within one local day of its tenant's zone",
			(long long)b->bucket_start, (long long)b->bucket_end);
	for (size_t i = 0; i < r->nd; i++)
		if (r->d[i].shard == b->shard)
			d = &r->d[i];
	if (d == NULL) {
		/* shards come in increasing order within an hour, but a later
		 * hour may bring a new shard: keep them sorted */
		size_t at = r->nd;

		if (r->nd == r->cap) {
			size_t nc = r->cap ? r->cap * 2 : 4;
			dayagg *v = realloc(r->d, nc * sizeof(*v));

			if (v == NULL)
				return cnt_err_nomem(err);
			r->d = v;
			r->cap = nc;
		}
		while (at > 0 && r->d[at - 1].shard > b->shard)
			at--;
		memmove(&r->d[at + 1], &r->d[at], (r->nd - at) * sizeof(*r->d));
		r->nd++;
		d = &r->d[at];
		memset(d, 0, sizeof(*d));
		d->shard = b->shard;
	}
	d->b.count += b->count;
	d->b.sum += b->sum;
	if (b->has_min && (!d->b.has_min || b->min < d->b.min)) {
		d->b.min = b->min;
		d->b.has_min = 1;
	}
	if (b->has_max && (!d->b.has_max || b->max > d->b.max)) {
		d->b.max = b->max;
		d->b.has_max = 1;
	}
	if (b->has_last)
		latest(&d->b.last_event_time, &d->b.last_count, &d->b.has_last, b->last_event_time, b->last_count);
	latest(&d->b.max_ingest_time, &d->b.ingest_count, &d->has_ingest, b->max_ingest_time, b->ingest_count);
	d->b.late_count += b->late_count;
	d->b.late_sum += b->late_sum;
	d->b.sampled += b->sampled;
	d->b.sum_var = (cnt_i128)((unsigned __int128)d->b.sum_var + (unsigned __int128)b->sum_var);
	return merge_hll(&d->sketch, sketch, err) != 0 || merge_hll(&d->late_sketch, late_sketch, err) != 0 ? -1 : 0;
}

cnt_writer *cnt_rollup_day_writer(cnt_writer *hours, cnt_err *err)
{
	cnt_writer *w;

	if (cnt_writer_finish(hours, err) != 0)
		return NULL;
	/* the hourly container's end marker before the day container */
	if (cnt_writer_fd(hours) == STDOUT_FILENO && cnt_writer_end_deferred(err) != 0)
		return NULL;
	w = cnt_bucket_writer_new(cnt_writer_fd(hours), cnt_writer_name(hours), cnt_writer_codec(hours),
		cnt_writer_level(hours), err);
	if (w != NULL && cnt_writer_meta(w, CNT_ROLLUP_META, "day", 3, err) != 0) {
		cnt_writer_free(w);
		return NULL;
	}
	return w;
}

int cnt_rollup_write(cnt_rollup *r, cnt_writer *hours, cnt_err *err)
{
	return cnt_rollup_write_merged(&r, 1, hours, err);
}

/* A builder's day records as a source of the merge (model/bucket.h):
 * ctx is a cursor over them. */
typedef struct cursor {
	const cnt_rollup *r;
	uint64_t at;
} cursor;

static int out_next(void *ctx, const uint8_t **rec, size_t *n)
{
	cursor *c = ctx;
	size_t from;

	if (c->at == c->r->n)
		return 0;
	from = c->at ? c->r->ends[c->at - 1] : 0;
	*rec = c->r->out + from;
	*n = c->r->ends[c->at] - from;
	c->at++;
	return 1;
}

int cnt_rollup_write_merged(cnt_rollup *const *rs, size_t n, cnt_writer *hours, cnt_err *err)
{
	cursor cur[8];
	cnt_bucket_src src[8];
	cnt_writer *w;
	size_t failed;

	if (n > 8)
		return cnt_err_set(err, "internal: merging %zu day roll-ups", n);
	for (size_t i = 0; i < n; i++) {
		if (flush(rs[i], err) != 0)
			return -1;
		cur[i] = (cursor){rs[i], 0};
		src[i] = (cnt_bucket_src){out_next, &cur[i]};
	}
	if ((w = cnt_rollup_day_writer(hours, err)) == NULL)
		return -1;
	/* (in-memory sources never fail) */
	if (cnt_bucket_merge_members(src, n, w, &failed, err) != 0 || cnt_writer_finish(w, err) != 0) {
		cnt_writer_free(w);
		return -1;
	}
	cnt_writer_free(w);
	return 0;
}

int cnt_rollup_kind(const cnt_meta_kv *kv, size_t n, const char *name, cnt_err *err)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(kv[i].key, CNT_ROLLUP_META) != 0)
			continue;
		if (kv[i].vlen == 3 && memcmp(kv[i].val, "day", 3) == 0)
			return 1;
		return cnt_err_set(err, "'%s': container of an unknown roll-up kind (%s is not \"day\")", name,
			CNT_ROLLUP_META);
	}
	return 0;
}

/* ---- skipping containers by their framing ---- */

typedef struct scan {
	int fd;
	uint8_t buf[65536];
	size_t pos, len;
	off_t base;                   /* file offset of buf[0] */
	const char *name;
} scan;

/* 1 with *c, 0 at the end of the file, -1 on a read error */
static int sgetc(scan *s, uint8_t *c, cnt_err *err)
{
	if (s->pos == s->len) {
		ssize_t n;

		s->base += (off_t)s->len;
		s->pos = s->len = 0;
		do
			n = read(s->fd, s->buf, sizeof(s->buf));
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return cnt_err_set(err, "'%s': read error: %s", s->name, strerror(errno));
		if (n == 0)
			return 0;
		s->len = (size_t)n;
	}
	*c = s->buf[s->pos++];
	return 1;
}

static off_t stell(const scan *s)
{
	return s->base + (off_t)s->pos;
}

static int corrupt(scan *s, const char *what, cnt_err *err)
{
	return cnt_err_set(err, "'%s' byte %lld: %s: corrupt bucket file", s->name, (long long)stell(s), what);
}

static int sget(scan *s, void *p, size_t n, cnt_err *err)
{
	for (size_t i = 0; i < n; i++) {
		int rc = sgetc(s, (uint8_t *)p + i, err);

		if (rc <= 0)
			return rc < 0 ? -1 : corrupt(s, "truncated", err);
	}
	return 0;
}

static int slong(scan *s, int64_t *v, cnt_err *err)
{
	uint64_t u = 0;
	uint8_t c;

	for (int shift = 0; shift < 70; shift += 7) {
		int rc = sgetc(s, &c, err);

		if (rc <= 0)
			return rc < 0 ? -1 : corrupt(s, "truncated", err);
		u |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
			return 0;
		}
	}
	return corrupt(s, "a number longer than 10 bytes", err);
}

static int sskip(scan *s, int64_t n, cnt_err *err)
{
	off_t to;

	if (n < 0)
		return corrupt(s, "a negative length", err);
	if ((uint64_t)n <= s->len - s->pos) {
		s->pos += (size_t)n;
		return 0;
	}
	to = stell(s) + (off_t)n;
	if (lseek(s->fd, to, SEEK_SET) < 0)
		return cnt_err_set(err, "'%s': seek error: %s", s->name, strerror(errno));
	s->base = to;
	s->pos = s->len = 0;
	return 0;
}

/* Reads a container header (after its magic); *day set when it is a day
 * container. */
static int header(scan *s, int *day, cnt_err *err)
{
	int64_t cnt, len;
	char key[64];
	uint8_t sync[16];

	*day = 0;
	for (;;) {
		if (slong(s, &cnt, err) != 0)
			return -1;
		if (cnt == 0)
			break;
		if (cnt < 0) {
			int64_t bytes;

			if (cnt == INT64_MIN || slong(s, &bytes, err) != 0)
				return cnt == INT64_MIN ? corrupt(s, "bad metadata count", err) : -1;
			cnt = -cnt;
		}
		for (int64_t i = 0; i < cnt; i++) {
			int is_rollup = 0;

			if (slong(s, &len, err) != 0)
				return -1;
			if (len < 0)
				return corrupt(s, "a negative length", err);
			if ((size_t)len < sizeof(key)) {
				if (sget(s, key, (size_t)len, err) != 0)
					return -1;
				key[len] = 0;
				is_rollup = strcmp(key, CNT_ROLLUP_META) == 0;
			} else if (sskip(s, len, err) != 0) {
				return -1;
			}
			if (slong(s, &len, err) != 0)
				return -1;
			if (is_rollup) {
				char v[8];

				if (len != 3)
					return cnt_err_set(err, "'%s': container of an unknown roll-up kind", s->name);
				if (sget(s, v, 3, err) != 0)
					return -1;
				if (memcmp(v, "day", 3) != 0)
					return cnt_err_set(err, "'%s': container of an unknown roll-up kind", s->name);
				*day = 1;
			} else if (sskip(s, len, err) != 0) {
				return -1;
			}
		}
	}
	return sget(s, sync, sizeof(sync), err);
}

int cnt_rollup_seek_days(int fd, const char *name, cnt_err *err)
{
	struct stat st;
	scan *s;
	int rc = -1;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	s = malloc(sizeof(*s));
	if (s == NULL)
		return cnt_err_nomem(err);
	s->fd = fd;
	s->pos = s->len = 0;
	s->base = 0;
	s->name = name;
	if (lseek(fd, 0, SEEK_SET) != 0) {
		free(s);
		return 0;
	}
	for (;;) {
		uint8_t m[4];
		off_t at = stell(s);
		int day, c;

		/* a container header, or the end of the file */
		if ((c = sgetc(s, &m[0], err)) <= 0) {
			rc = c;
			break;
		}
		if (sget(s, m + 1, 3, err) != 0)
			break;
		if (memcmp(m, "Obj\x01", 4) != 0) {
			corrupt(s, "not an Avro container", err);
			break;
		}
		if (header(s, &day, err) != 0)
			break;
		if (day) {
			if (lseek(fd, at, SEEK_SET) < 0) {
				cnt_err_set(err, "'%s': seek error: %s", name, strerror(errno));
				break;
			}
			free(s);
			return 1;
		}
		/* blocks up to the next container or the end */
		for (;;) {
			int64_t count, size;

			if ((c = sgetc(s, &m[0], err)) < 0)
				goto out;
			if (c == 0) {
				rc = 0;
				goto out;
			}
			if (m[0] == 'O') {         /* a negative count: the next magic */
				s->pos--;
				break;
			}
			s->pos--;
			if (slong(s, &count, err) != 0 || slong(s, &size, err) != 0)
				goto out;
			if (count < 0 || size < 0) {
				corrupt(s, "a negative block count or size", err);
				goto out;
			}
			if (size > st.st_size - stell(s)) {
				corrupt(s, "a block larger than the rest of the file", err);
				goto out;
			}
			if (sskip(s, size + 16, err) != 0)
				goto out;
		}
	}
out:
	free(s);
	if (rc == 0 && lseek(fd, 0, SEEK_SET) != 0)
		return cnt_err_set(err, "'%s': seek error: %s", name, strerror(errno));
	return rc;
}
