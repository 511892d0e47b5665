/*
 * window.c - bucket attribution, lateness and shards (see window.h).
 */
#include "count/window.h"

#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "base/text.h"
#include "count/shardmap.h"
#include "time/tz.h"

struct cnt_window {
	const cnt_defs *defs;
	const char *defs_name;
	uint32_t shards;
	const cnt_shardmap *map;      /* NULL: shards for every key */
	cnt_writer *out;
	cnt_tz_cache *zones;
	cnt_tz_cursor *cursor;        /* per tenant, valid where cursor_ok */
	unsigned char *cursor_ok;
	cnt_window_counter *counters; /* per counter */
	cnt_window_totals totals;
	const cnt_window *parent;     /* a sibling's: whose checked cursors it starts from */
};

cnt_window *cnt_window_new(const cnt_defs *defs, const char *defs_name, uint32_t shards, cnt_writer *out,
	cnt_err *err)
{
	cnt_window *w;
	size_t nt = cnt_defs_ntenants(defs), nc = cnt_defs_ncounters(defs);

	if (shards < 1 || shards > CNT_WINDOW_MAX_SHARDS) {
		cnt_err_set(err, "shards: %u is not from 1 to %u", shards, CNT_WINDOW_MAX_SHARDS);
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL) {
		cnt_err_nomem(err);
		return NULL;
	}
	w->defs = defs;
	w->defs_name = defs_name;
	w->shards = shards;
	w->out = out;
	w->zones = cnt_tz_cache_new();
	w->cursor = calloc(nt + 1, sizeof(*w->cursor));
	w->cursor_ok = calloc(nt + 1, 1);
	w->counters = calloc(nc + 1, sizeof(*w->counters));
	if (w->zones == NULL || w->cursor == NULL || w->cursor_ok == NULL || w->counters == NULL) {
		cnt_window_free(w);
		cnt_err_nomem(err);
		return NULL;
	}
	return w;
}

void cnt_window_free(cnt_window *w)
{
	if (w == NULL)
		return;
	cnt_tz_cache_free(w->zones);
	free(w->cursor);
	free(w->cursor_ok);
	free(w->counters);
	free(w);
}

int cnt_window_is_late(int64_t ingest_ms, int64_t bucket_end_ms, int64_t horizon_s)
{
	int64_t h_ms, closes;

	if (__builtin_mul_overflow(horizon_s, 1000, &h_ms))
		return horizon_s < 0;
	if (__builtin_add_overflow(bucket_end_ms, h_ms, &closes))
		return h_ms < 0;   /* closes before any time, or after every one */
	return ingest_ms > closes;
}

int32_t cnt_window_shard(const void *event_id, size_t n, uint32_t shards)
{
	if (shards <= 1)
		return 0;
	return (int32_t)(XXH3_64bits(event_id, n) % shards);
}

void cnt_window_set_map(cnt_window *w, const cnt_shardmap *m)
{
	w->map = m;
}

/* Readies w's cursor for t's tenant, its zone loaded when first needed
 * (a sibling takes the zone its parent's check loaded).  0 or -1. */
static int ready(cnt_window *w, const cnt_count_target *t, cnt_err *err)
{
	const cnt_tz *tz;

	if (w->cursor_ok[t->tenant_index])
		return 0;
	if (w->parent && w->parent->cursor_ok[t->tenant_index])
		tz = w->parent->cursor[t->tenant_index].tz;
	else if ((tz = cnt_tz_cache_get(w->zones, t->tenant->timezone, err)) == NULL)
		return cnt_err_prefix(err, "tenant '%s'", t->tenant->tenant_id);
	cnt_tz_cursor_init(&w->cursor[t->tenant_index], tz);
	w->cursor_ok[t->tenant_index] = 1;
	return 0;
}

static int bad_sample(const cnt_event *e, cnt_err *err)
{
	char shown[CNT_SHOWN_SIZE(64)];

	return cnt_err_set(err, "event '%s': attrs %s is not a sampling level 1 to %d: "
		"corrupt log", cnt_shown(e->event_id.p, e->event_id.n, 64, shown), CNT_EVENT_SAMPLE_ATTR,
		CNT_APPROX_LEVEL_MAX);
}

/* Attributes e, of target t in w's definitions.  0 or -1. */
static int attribute_target(cnt_window *w, const cnt_event *e, const cnt_count_target *t, cnt_windowed *out,
	cnt_err *err)
{
	cnt_tz_cursor *cur = &w->cursor[t->tenant_index];

	if (ready(w, t, err) != 0)
		return -1;
	out->bucket_start = cnt_tz_cursor_bucket_start(cur, e->event_time);
	out->bucket_end = cnt_tz_cursor_bucket_end(cur, e->event_time);
	out->late = cnt_window_is_late(e->ingest_time, out->bucket_end, t->version->lateness_horizon_s);
	out->exact = t->version->type == CNT_CTYPE_EXACT || t->version->type == CNT_CTYPE_APPROX;
	out->sample = -1;
	if (t->version->type == CNT_CTYPE_APPROX && (out->sample = cnt_event_sample_level(e)) < 0)
		return bad_sample(e, err);
	out->hll_precision = t->version->hll_precision;
	out->ndims = t->version->ndimensions;
	for (size_t i = 0; i < out->ndims; i++) {
		out->dims[i].p = t->version->dimensions[i];
		out->dims[i].n = strlen(t->version->dimensions[i]);
	}
	/* A compensation is counted in the shard of the event it retracts,
	 * so that it meets that event's record when bucket files merge. */
	{
		uint32_t k = w->map ? cnt_shardmap_shards(w->map, e->tenant_id, e->counter_id, e->member_ref) :
			w->shards;

		if (e->retracts.p)
			out->shard = cnt_window_shard(e->retracts.p, e->retracts.n, k);
		else
			out->shard = cnt_window_shard(e->event_id.p, e->event_id.n, k);
	}
	if (e != &out->ev)
		out->ev = *e;
	cnt_windowed_dim_values(out);
	return 0;
}

static int attribute(cnt_window *w, const cnt_event *e, cnt_windowed *out, cnt_count_target *t,
	cnt_count_reject *rej, cnt_err *err)
{
	if (cnt_count_lookup(w->defs, w->defs_name, e, t, rej) != 0)
		return 1;
	return attribute_target(w, e, t, out, err);
}

int cnt_window_attribute(cnt_window *w, const cnt_event *e, cnt_windowed *out,
	cnt_count_reject *rej, cnt_err *err)
{
	cnt_count_target t;

	return attribute(w, e, out, &t, rej, err);
}

int cnt_window_check(cnt_window *w, const cnt_event *e, const cnt_count_target *t, int sample, cnt_err *err)
{
	if (ready(w, t, err) != 0)
		return -1;
	if (t->version->type == CNT_CTYPE_APPROX && sample < 0)
		return bad_sample(e, err);
	return 0;
}

cnt_window *cnt_window_sibling(const cnt_window *w, cnt_err *err)
{
	cnt_window *s = cnt_window_new(w->defs, w->defs_name, w->shards, NULL, err);

	if (s != NULL) {
		s->map = w->map;
		s->parent = w;
	}
	return s;
}

/* cnt_window_absorb names every field, so a new one must be added there
 * too (a sum or a maximum): these stop the build when a field is added,
 * until the count in them is changed with cnt_window_absorb. */
_Static_assert(sizeof(cnt_window_totals) == 7 * sizeof(uint64_t), "cnt_window_absorb: add the new total");
_Static_assert(sizeof(cnt_window_counter) == 5 * sizeof(uint64_t), "cnt_window_absorb: add the new counter field");

void cnt_window_absorb(cnt_window *dst, const cnt_window *src)
{
	size_t nc = cnt_defs_ncounters(dst->defs);

	dst->totals.in += src->totals.in;
	dst->totals.out += src->totals.out;
	dst->totals.late += src->totals.late;
	dst->totals.rejected += src->totals.rejected;
	dst->totals.unknown_tenant += src->totals.unknown_tenant;
	dst->totals.unknown_counter += src->totals.unknown_counter;
	dst->totals.not_monotonic += src->totals.not_monotonic;
	for (size_t i = 0; i < nc; i++) {
		cnt_window_counter *d = &dst->counters[i];
		const cnt_window_counter *c = &src->counters[i];

		d->in += c->in;
		d->late += c->late;
		d->clock_ahead += c->clock_ahead;
		if (c->max_lag_ms > d->max_lag_ms)
			d->max_lag_ms = c->max_lag_ms;
		if (c->max_clock_ahead_ms > d->max_clock_ahead_ms)
			d->max_clock_ahead_ms = c->max_clock_ahead_ms;
	}
}

int cnt_window_attribute_as(cnt_window *w, const cnt_event *e, const cnt_count_target *t, cnt_windowed *out,
	cnt_err *err)
{
	return attribute_target(w, e, t, out, err);
}

/* b - a, held at the ends of the range instead of overflowing. */
static int64_t diff_sat(int64_t b, int64_t a)
{
	int64_t d;

	if (__builtin_sub_overflow(b, a, &d))
		return b > a ? INT64_MAX : INT64_MIN;
	return d;
}

static void count(cnt_window *w, const cnt_event *e, const cnt_windowed *wv, const cnt_count_target *t)
{
	cnt_window_counter *c = &w->counters[t->counter_index];
	int64_t lag = diff_sat(e->ingest_time, e->event_time);

	c->in++;
	if (wv->late) {
		c->late++;
		w->totals.late++;
	}
	if (lag > c->max_lag_ms)
		c->max_lag_ms = lag;
	if (lag < 0) {
		int64_t ahead = lag == INT64_MIN ? INT64_MAX : -lag;

		c->clock_ahead++;
		if (ahead > c->max_clock_ahead_ms)
			c->max_clock_ahead_ms = ahead;
	}
}

int cnt_window_event(cnt_window *w, const cnt_event *e, const uint8_t *raw, size_t rawn,
	cnt_count_reject *rej, cnt_err *err)
{
	cnt_windowed wv;
	cnt_count_target t;
	cnt_buf *b = cnt_writer_buf(w->out);
	int rc;

	w->totals.in++;
	rc = attribute(w, e, &wv, &t, rej, err);
	if (rc < 0)
		return -1;
	if (rc > 0) {
		w->totals.rejected++;
		if (t.tenant == NULL)
			w->totals.unknown_tenant++;
		else if (t.version != NULL)
			w->totals.not_monotonic++;
		else
			w->totals.unknown_counter++;
		return 1;
	}
	count(w, e, &wv, &t);
	if (cnt_windowed_encode_head(&wv, b) != 0 ||
	    (raw ? cnt_buf_append(b, raw, rawn) : cnt_event_encode(e, b)) != 0)
		return cnt_err_oom(err, "encoding a windowed event");
	if (cnt_writer_commit(w->out, err) != 0)
		return -1;
	w->totals.out++;
	return 0;
}

void cnt_window_take(cnt_window *w, const cnt_event *e, const cnt_windowed *wv, size_t counter_index)
{
	cnt_count_target t;

	t.counter_index = counter_index;
	w->totals.in++;
	count(w, e, wv, &t);
	w->totals.out++;
}

int cnt_window_stage(void *w, const cnt_event *e, const uint8_t *raw, size_t rawn,
	cnt_count_reject *rej, cnt_err *err)
{
	return cnt_window_event(w, e, raw, rawn, rej, err);
}

int cnt_window_finish(cnt_window *w, cnt_err *err)
{
	const cnt_window_totals *t = &w->totals;

	if (t->in != t->out + t->rejected)
		return cnt_err_set(err, "internal: records do not balance: in %llu != out %llu + rejected %llu",
			(unsigned long long)t->in, (unsigned long long)t->out, (unsigned long long)t->rejected);
	return w->out ? cnt_writer_finish(w->out, err) : 0;
}

const cnt_window_totals *cnt_window_get_totals(const cnt_window *w)
{
	return &w->totals;
}

const cnt_window_counter *cnt_window_get_counter(const cnt_window *w, size_t i)
{
	return &w->counters[i];
}
