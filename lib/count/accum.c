/*
 * accum.c - bucket aggregation with spilling (see accum.h).
 */
#include "count/accum.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <xxhash.h>

#include "base/recq.h"
#include "base/table.h"
#include "count/rollup.h"

enum { AGG_MIN = 1, AGG_MAX = 2, AGG_LAST = 4, AGG_SKI = 8 };
/* With AGG_SKI, a group's on-time sketch is its entries inline (agg.ski)
 * and its precision is in these bits of its flags. */
#define AGG_SKP_SHIFT 8
#define AGG_SKP_MASK (UINT32_C(31) << AGG_SKP_SHIFT)

/* A group's aggregates, laid out for the cache: the first line holds
 * the key and what every on-time event of an exact counter changes, the
 * second the rest of what an on-time event touches.  What only late and
 * approx events change is a cold part of its own (agg_cold), made for the
 * groups that have one: at 10 M events no group of the benchmark's has,
 * and a third line in each would be 300 MB more of fresh memory.  Groups
 * are 64-byte aligned (cnt_table_grow), so a group is two whole lines. */
typedef struct agg {
	/* line 0 */
	uint32_t stream, member;
	uint32_t dim;            /* 0: the member's total; else dimension pair id + 1 */
	int32_t shard;
	uint32_t flags;
	uint32_t cold1;          /* its cold part's index + 1; 0: none, all zero */
	int64_t bucket_start;
	int64_t count;
	int64_t max_ingest_time, ningest;  /* ningest: its multiplicity */
	int64_t last_event_time;
	/* line 1 */
	int64_t nlast;           /* multiplicity of last_event_time */
	int64_t min;
	cnt_i128 sum;
	int64_t max;
	/* The on-time sketch.  Most groups' sketches hold one or two items:
	 * those are kept as their sparse entries (AGG_SKI in flags; ski[1]
	 * 0 while there is one), not as a cnt_hll of the heap, which would
	 * be two allocations a group.  Else sketch: NULL (none) or the heap's. */
	union {
		cnt_hll *sketch;
		uint32_t ski[2];
	};
	int64_t bucket_end;
	int64_t late_count;
} __attribute__((aligned(64))) agg;

_Static_assert(sizeof(agg) == 128 && offsetof(agg, nlast) == 64, "a group is two cache lines");

/* What only late, approx and compensating events of a group change. */
typedef struct agg_cold {
	cnt_i128 late_sum;
	cnt_i128 sum_var;        /* approx: variance estimate of sum, wrapping */
	int64_t sampled;         /* approx: on-time events read (bucket.h) */
	cnt_hll *late_sketch;
} agg_cold;

static const agg_cold no_cold;

/* The precision of a group's inline sketch (AGG_SKI). */
static int inline_p(const agg *g)
{
	return (int)((g->flags & AGG_SKP_MASK) >> AGG_SKP_SHIFT);
}

/* Hash-table slots carry what a lookup compares, so that a probe touches
 * one cache line, not the entry it points to (see cnt_accum_add_events). */
typedef struct mslot {
	uint64_t hash;
	uint64_t off;        /* of the string in mdata; a name of at most 8
	                      * bytes: its bytes, zero-padded (inline_name) */
	uint32_t len;
	uint32_t id1;        /* member id + 1; 0: empty */
} mslot;

/* A member name of at most 8 bytes (the benchmark's are 4 to 8) is kept
 * in its slot as well, so that finding it touches no line of mdata; with
 * the length beside it the padding cannot make two names one. */
static uint64_t inline_name(cnt_slice m)
{
	uint64_t v = 0;

	if (m.n)
		memcpy(&v, m.p, m.n);
	return v;
}

/* A group's slot in its index: the low 32 bits of the key's hash (whose
 * low bits are also its home, so the index can be doubled from the
 * slots alone) and the group's index + 1.  A lookup whose tag matches
 * compares the key in the group, whose first line it touches anyway:
 * 8-byte slots are a quarter of the fresh memory of slots that held
 * the key, and four times as many to a cache line. */
typedef struct gslot {
	uint32_t tag;
	uint32_t idx1;       /* group index + 1; 0: empty */
} gslot;

/* A (dimension, value) pair of breakdown records, interned: the bytes
 * dim NUL value (a dimension holds no NUL, cnt-definitions(5)), so that
 * their byte order is the order of (dim, dim_value). */
typedef struct dpair {
	size_t off;
	uint32_t len, dlen;   /* whole, and the dimension's part */
	uint64_t hash;
} dpair;

typedef struct stream {
	char *tenant, *counter;
	size_t tn, cn;
	int32_t version;
} stream;

struct cnt_accum {
	size_t limit;
	cnt_rollup *days;            /* day roll-ups of the output, or NULL */
	cnt_rollup_zone_fn zone;     /* what days was made with */
	void *zone_ctx;
	pthread_mutex_t zone_mu;     /* finishing halves: the zone cache is one */
	void *lent;                  /* memory lent to days (cnt_accum_lend) */
	size_t lent_bytes;
	char *tmpdir;
	cnt_accum_stats st;
	/* streams: few, looked up linearly behind a one-entry cache */
	stream *streams;
	size_t nstreams, cstreams;
	uint32_t last_stream;
	/* cnt_accum_add_hinted: stream id + 1 of a counter hint (0: not
	 * yet known); checked against the event's version */
	uint32_t *hint_sid;
	size_t nhints;
	/* members: interned strings */
	cnt_buf mdata;
	size_t *moff;
	uint32_t *mlen;
	size_t nmembers, cmembers;
	mslot *mslots;
	size_t mmask;
	/* dimension pairs: few (a country has ~250 values), looked up in a
	 * small open-addressed table of ids + 1 */
	cnt_buf ddata;
	dpair *dpairs;
	size_t ndpairs, cdpairs;
	uint32_t *dslots;
	size_t dmask;
	cnt_buf dkey;        /* scratch: the pair being looked up */
	/* groups */
	agg *groups;
	size_t ngroups, cgroups;
	agg_cold *colds;     /* the groups' cold parts (agg.cold1) */
	size_t ncolds, ccolds;
	gslot *gslots;
	size_t gmask;
	size_t sketch_bytes;
	/* spilled runs: unlinked temporary files, still open */
	int *runs;
	size_t nruns, cruns;
	cnt_buf s1, s2;     /* sketch serialization scratch */
	int final;          /* writing the output, not a spill run */
	void (*stale_cb)(void *, const cnt_bucket *, int);
	void *stale_ctx;
};

void cnt_accum_on_stale(cnt_accum *a, void (*cb)(void *ctx, const cnt_bucket *b, int which), void *ctx)
{
	a->stale_cb = cb;
	a->stale_ctx = ctx;
}

/* The groups count as many as there are: their table is a mapping whose
 * pages past the last group are never touched (base/table.h).  The
 * indexes count whole: a lookup touches them anywhere. */
static size_t mem_estimate(const cnt_accum *a)
{
	return a->ngroups * sizeof(agg) + a->ccolds * sizeof(agg_cold) + (a->gmask + 1) * sizeof(gslot) +
		a->mdata.cap + a->cmembers * (sizeof(size_t) + sizeof(uint32_t)) +
		(a->mmask + 1) * sizeof(mslot) + a->sketch_bytes +
		a->ddata.cap + a->cdpairs * sizeof(dpair) + (a->dslots ? (a->dmask + 1) * sizeof(uint32_t) : 0);
}

cnt_accum *cnt_accum_new(size_t memory_limit, const char *tmpdir, cnt_err *err)
{
	cnt_accum *a = calloc(1, sizeof(*a));

	if (a == NULL || (a->tmpdir = strdup(tmpdir ? tmpdir : "/tmp")) == NULL) {
		free(a);
		cnt_err_nomem(err);
		return NULL;
	}
	a->limit = memory_limit;
	a->gmask = 1023;
	a->mmask = 1023;
	a->gslots = cnt_table_alloc((a->gmask + 1) * sizeof(gslot));
	a->mslots = cnt_table_alloc((a->mmask + 1) * sizeof(mslot));
	a->last_stream = UINT32_MAX;
	pthread_mutex_init(&a->zone_mu, NULL);
	if (a->gslots == NULL || a->mslots == NULL) {
		cnt_accum_free(a);
		cnt_err_nomem(err);
		return NULL;
	}
	return a;
}

/* The cold part of g: read only (all zero when it has none). */
static const agg_cold *cold_get(const cnt_accum *a, const agg *g)
{
	return g->cold1 ? &a->colds[g->cold1 - 1] : &no_cold;
}

/* The cold part of g, made when it has none; NULL when out of memory.
 * Making one moves the others: use the pointer before the next call. */
static agg_cold *cold_of(cnt_accum *a, agg *g)
{
	if (g->cold1)
		return &a->colds[g->cold1 - 1];
	if (a->ncolds == a->ccolds) {
		size_t c = a->ccolds ? a->ccolds * 2 : 256;
		agg_cold *v = c <= UINT32_MAX ? realloc(a->colds, c * sizeof(*v)) : NULL;

		if (v == NULL)
			return NULL;
		a->colds = v;
		a->ccolds = c;
	}
	memset(&a->colds[a->ncolds], 0, sizeof(agg_cold));
	g->cold1 = (uint32_t)++a->ncolds;
	return &a->colds[g->cold1 - 1];
}

/* Whether b has anything a group keeps in its cold part. */
static int has_cold(const cnt_bucket *b)
{
	return b->late_sum != 0 || b->sum_var != 0 || b->sampled != 0 || b->late_sketch.p != NULL;
}

static void release_sketches(cnt_accum *a, agg *g)
{
	if (g->flags & AGG_SKI)
		g->flags &= ~(AGG_SKI | AGG_SKP_MASK);
	else
		cnt_hll_free(g->sketch);
	g->sketch = NULL;
	if (g->cold1) {
		cnt_hll_free(a->colds[g->cold1 - 1].late_sketch);
		a->colds[g->cold1 - 1].late_sketch = NULL;
	}
}

static void free_sketches(cnt_accum *a)
{
	for (size_t i = 0; i < a->ngroups; i++)
		release_sketches(a, &a->groups[i]);
	a->sketch_bytes = 0;
}

void cnt_accum_free(cnt_accum *a)
{
	if (a == NULL)
		return;
	cnt_rollup_free(a->days);
	free_sketches(a);
	for (size_t i = 0; i < a->nstreams; i++) {
		free(a->streams[i].tenant);
		free(a->streams[i].counter);
	}
	for (size_t i = 0; i < a->nruns; i++)
		if (a->runs[i] >= 0)
			close(a->runs[i]);
	free(a->runs);
	free(a->streams);
	free(a->hint_sid);
	cnt_buf_release(&a->mdata);
	cnt_buf_release(&a->ddata);
	cnt_buf_release(&a->dkey);
	free(a->dpairs);
	free(a->dslots);
	cnt_buf_release(&a->s1);
	cnt_buf_release(&a->s2);
	free(a->moff);
	free(a->mlen);
	cnt_table_free(a->mslots, (a->mmask + 1) * sizeof(mslot));
	cnt_table_free(a->groups, a->cgroups * sizeof(agg));
	free(a->colds);
	cnt_table_free(a->gslots, (a->gmask + 1) * sizeof(gslot));
	free(a->tmpdir);
	pthread_mutex_destroy(&a->zone_mu);
	free(a);
}

static int stream_of(cnt_accum *a, cnt_slice tenant, cnt_slice counter, int32_t version, uint32_t *out)
{
	stream *s;

	if (a->last_stream != UINT32_MAX) {
		s = &a->streams[a->last_stream];
		if (s->version == version && s->tn == tenant.n && s->cn == counter.n &&
		    memcmp(s->tenant, tenant.p, tenant.n) == 0 && memcmp(s->counter, counter.p, counter.n) == 0) {
			*out = a->last_stream;
			return 0;
		}
	}
	for (size_t i = 0; i < a->nstreams; i++) {
		s = &a->streams[i];
		if (s->version == version && s->tn == tenant.n && s->cn == counter.n &&
		    memcmp(s->tenant, tenant.p, tenant.n) == 0 && memcmp(s->counter, counter.p, counter.n) == 0) {
			*out = a->last_stream = (uint32_t)i;
			return 0;
		}
	}
	if (a->nstreams == a->cstreams) {
		size_t c = a->cstreams ? a->cstreams * 2 : 8;
		stream *v = realloc(a->streams, c * sizeof(*v));

		if (v == NULL)
			return -1;
		a->streams = v;
		a->cstreams = c;
	}
	s = &a->streams[a->nstreams];
	s->tenant = malloc(tenant.n + 1);
	s->counter = malloc(counter.n + 1);
	if (s->tenant == NULL || s->counter == NULL) {
		free(s->tenant);
		free(s->counter);
		return -1;
	}
	if (tenant.n)
		memcpy(s->tenant, tenant.p, tenant.n);
	if (counter.n)
		memcpy(s->counter, counter.p, counter.n);
	s->tn = tenant.n;
	s->cn = counter.n;
	s->version = version;
	*out = a->last_stream = (uint32_t)a->nstreams++;
	return 0;
}

/* stream_of() for an event whose counter's definitions index is hint:
 * the same index always names the same tenant and counter, so the
 * strings are compared only the first time (and when the version
 * differs from the last one seen). */
static int stream_hinted(cnt_accum *a, uint32_t hint, const cnt_event *e, uint32_t *out)
{
	if (hint < a->nhints && a->hint_sid[hint] != 0 &&
	    a->streams[a->hint_sid[hint] - 1].version == e->counter_version) {
		*out = a->hint_sid[hint] - 1;
		return 0;
	}
	if (stream_of(a, e->tenant_id, e->counter_id, e->counter_version, out) != 0)
		return -1;
	if (hint >= a->nhints) {
		size_t c = (size_t)hint + 8;
		uint32_t *v = realloc(a->hint_sid, c * sizeof(*v));

		if (v == NULL)
			return -1;
		memset(v + a->nhints, 0, (c - a->nhints) * sizeof(*v));
		a->hint_sid = v;
		a->nhints = c;
	}
	a->hint_sid[hint] = *out + 1;
	return 0;
}

static uint64_t group_hash_of(uint32_t sid, uint32_t member, uint32_t dim, int64_t bucket, int32_t shard)
{
	uint64_t k[3] = {((uint64_t)sid << 32) | member, (uint64_t)bucket,
		((uint64_t)dim << 32) | (uint64_t)(uint32_t)shard};

	return XXH3_64bits(k, sizeof(k));
}

static uint64_t mslot_hash(const void *slot, void *ctx)
{
	(void)ctx;
	return ((const mslot *)slot)->hash;
}

static int grow_members(cnt_accum *a)
{
	mslot *t = cnt_table_double(a->mslots, a->mmask + 1, sizeof(mslot), mslot_hash, NULL);

	if (t == NULL)
		return -1;
	a->mslots = t;
	a->mmask = a->mmask * 2 + 1;
	return 0;
}

static uint64_t gslot_hash(const void *slot, void *ctx)
{
	(void)ctx;
	return ((const gslot *)slot)->tag;
}

/* The group index doubled in place (base/table.h): only its new half is
 * fresh memory.  A new table and a copy touched twice the final size in
 * fresh pages, which the kernel must zero: a tenth of cnt-count's time at
 * 10 M events. */
static int grow_groups(cnt_accum *a)
{
	gslot *t;

	/* a home is at most the tag's 32 bits */
	if (a->gmask >= UINT32_MAX)
		return -1;
	if ((t = cnt_table_double(a->gslots, a->gmask + 1, sizeof(gslot), gslot_hash, NULL)) == NULL)
		return -1;
	a->gslots = t;
	a->gmask = a->gmask * 2 + 1;
	return 0;
}

/* The id of member m (hash h), interned when new.  -1: out of memory. */
static int member_of(cnt_accum *a, cnt_slice m, uint64_t h, uint32_t *out)
{
	size_t i;

	for (i = h & a->mmask; a->mslots[i].id1; i = (i + 1) & a->mmask) {
		const mslot *sl = &a->mslots[i];

		if (sl->hash == h && sl->len == m.n &&
		    (m.n <= 8 ? sl->off == inline_name(m) : memcmp(a->mdata.p + sl->off, m.p, m.n) == 0)) {
			*out = sl->id1 - 1;
			return 0;
		}
	}
	if (a->nmembers == a->cmembers) {
		size_t c = a->cmembers ? a->cmembers * 2 : 1024;
		size_t *o = realloc(a->moff, c * sizeof(*o));
		uint32_t *l;

		if (o == NULL)
			return -1;
		a->moff = o;
		l = realloc(a->mlen, c * sizeof(*l));
		if (l == NULL)
			return -1;
		a->mlen = l;
		a->cmembers = c;
	}
	a->moff[a->nmembers] = a->mdata.len;
	a->mlen[a->nmembers] = (uint32_t)m.n;
	a->mslots[i].hash = h;
	a->mslots[i].off = m.n <= 8 ? inline_name(m) : a->mdata.len;
	a->mslots[i].len = (uint32_t)m.n;
	a->mslots[i].id1 = (uint32_t)a->nmembers + 1;
	if (cnt_buf_append(&a->mdata, m.p, m.n) != 0)
		return -1;
	*out = (uint32_t)a->nmembers++;
	if (a->nmembers * 2 > a->mmask + 1 && grow_members(a) != 0)
		return -1;
	return 0;
}

/* The id + 1 of the pair (dim, val), interned when new.  -1: out of
 * memory. */
static int dpair_of(cnt_accum *a, cnt_slice dim, cnt_slice val, uint32_t *out)
{
	uint64_t h;
	size_t i;

	a->dkey.len = 0;
	if (cnt_buf_append(&a->dkey, dim.p, dim.n) != 0 || cnt_buf_putc(&a->dkey, 0) != 0 ||
	    cnt_buf_append(&a->dkey, val.p, val.n) != 0)
		return -1;
	if (a->dslots == NULL) {
		a->dmask = 255;
		if ((a->dslots = calloc(a->dmask + 1, sizeof(*a->dslots))) == NULL)
			return -1;
	}
	h = XXH3_64bits(a->dkey.p, a->dkey.len);
	for (i = h & a->dmask; a->dslots[i]; i = (i + 1) & a->dmask) {
		const dpair *d = &a->dpairs[a->dslots[i] - 1];

		if (d->hash == h && d->len == a->dkey.len && memcmp(a->ddata.p + d->off, a->dkey.p, d->len) == 0) {
			*out = a->dslots[i];
			return 0;
		}
	}
	if (a->ndpairs == a->cdpairs) {
		size_t c = a->cdpairs ? a->cdpairs * 2 : 64;
		dpair *v = realloc(a->dpairs, c * sizeof(*v));

		if (v == NULL)
			return -1;
		a->dpairs = v;
		a->cdpairs = c;
	}
	if (a->ndpairs + 1 >= UINT32_MAX)
		return -1;
	a->dpairs[a->ndpairs].off = a->ddata.len;
	a->dpairs[a->ndpairs].len = (uint32_t)a->dkey.len;
	a->dpairs[a->ndpairs].dlen = (uint32_t)dim.n;
	a->dpairs[a->ndpairs].hash = h;
	if (cnt_buf_append(&a->ddata, a->dkey.p, a->dkey.len) != 0)
		return -1;
	a->dslots[i] = (uint32_t)++a->ndpairs;
	*out = (uint32_t)a->ndpairs;
	if (a->ndpairs * 2 > a->dmask + 1) {
		size_t cap = (a->dmask + 1) * 2;
		uint32_t *n = calloc(cap, sizeof(*n));

		if (n == NULL)
			return -1;
		for (size_t k = 0; k < a->ndpairs; k++) {
			size_t j;

			for (j = a->dpairs[k].hash & (cap - 1); n[j]; j = (j + 1) & (cap - 1))
				;
			n[j] = (uint32_t)k + 1;
		}
		free(a->dslots);
		a->dslots = n;
		a->dmask = cap - 1;
	}
	return 0;
}

/* The dimension and value of pair id1 (id + 1). */
static void dpair_get(const cnt_accum *a, uint32_t id1, cnt_slice *dim, cnt_slice *val)
{
	const dpair *d = &a->dpairs[id1 - 1];

	dim->p = (const char *)a->ddata.p + d->off;
	dim->n = d->dlen;
	val->p = dim->p + d->dlen + 1;
	val->n = d->len - d->dlen - 1;
}

static int same_key(const agg *g, uint32_t sid, uint32_t member, uint32_t dim, int64_t bucket, int32_t shard)
{
	return g->bucket_start == bucket && g->member == member && g->stream == sid && g->shard == shard &&
		g->dim == dim;
}

/* The first slot from slot i on that is empty or has h's tag. */
static size_t probe(const cnt_accum *a, uint64_t h, size_t i)
{
	while (a->gslots[i].idx1 && a->gslots[i].tag != (uint32_t)h)
		i = (i + 1) & a->gmask;
	return i;
}

/* A new group, empty, for a key (hash h) not in the index, at its empty
 * slot i; its index, or -1 when out of memory. */
static ssize_t new_group(cnt_accum *a, size_t i, uint32_t sid, uint32_t member, uint32_t dim, int64_t bucket,
	int32_t shard, int64_t bucket_end, uint64_t h)
{
	agg *g;

	if (a->ngroups == a->cgroups) {
		size_t c = a->cgroups ? a->cgroups * 2 : 4096;
		/* aligned (a group is two whole lines), remapped
		 * rather than copied when large (base/table.h) */
		agg *v = cnt_table_grow(a->groups, a->cgroups * sizeof(agg), c * sizeof(agg));

		if (v == NULL)
			return -1;
		a->groups = v;
		a->cgroups = c;
	}
	g = &a->groups[a->ngroups];
	memset(g, 0, sizeof(*g));
	g->stream = sid;
	g->member = member;
	g->dim = dim;
	g->bucket_start = bucket;
	g->bucket_end = bucket_end;
	g->shard = shard;
	g->max_ingest_time = INT64_MIN;
	a->gslots[i].tag = (uint32_t)h;
	a->gslots[i].idx1 = (uint32_t)a->ngroups + 1;
	a->ngroups++;
	if (a->ngroups * 2 > a->gmask + 1 && grow_groups(a) != 0)
		return -1;
	return (ssize_t)a->ngroups - 1;
}

/* The index of the group for a key (hash h), created empty when new;
 * -1 when out of memory. */
static ssize_t group_of(cnt_accum *a, uint32_t sid, uint32_t member, uint32_t dim, int64_t bucket, int32_t shard,
	int64_t bucket_end, uint64_t h)
{
	for (size_t i = probe(a, h, h & a->gmask);; i = probe(a, h, (i + 1) & a->gmask)) {
		uint32_t idx1 = a->gslots[i].idx1;

		if (idx1 == 0)
			return new_group(a, i, sid, member, dim, bucket, shard, bucket_end, h);
		if (same_key(&a->groups[idx1 - 1], sid, member, dim, bucket, shard))
			return (ssize_t)idx1 - 1;
	}
}

/* Adds item to *hp, made at precision p (the event's version's) when
 * NULL: one group is one counter version, so one precision. */
/* Adds an item, by its hash (cnt_hll_hash), to *hp, made when NULL. */
static int sketch_add(cnt_accum *a, cnt_hll **hp, uint64_t item_hash, int p)
{
	size_t before;

	if (*hp == NULL) {
		*hp = malloc(sizeof(cnt_hll));
		if (*hp == NULL)
			return -1;
		cnt_hll_init_p(*hp, p);
		a->sketch_bytes += sizeof(cnt_hll);
	}
	before = cnt_hll_heap_bytes(*hp);
	if (cnt_hll_add_hash(*hp, item_hash) != 0)
		return -1;
	a->sketch_bytes += cnt_hll_heap_bytes(*hp) - before;
	return 0;
}

/* g's on-time sketch of the heap, or NULL (none, or inline). */
static const cnt_hll *heap_sketch(const agg *g)
{
	return g->flags & AGG_SKI ? NULL : g->sketch;
}

/* Makes g's inline sketch a sketch of the heap.  0 or -1 (out of memory;
 * g unchanged). */
static int sketch_to_heap(cnt_accum *a, agg *g)
{
	cnt_hll *h;

	if (!(g->flags & AGG_SKI))
		return 0;
	if ((h = malloc(sizeof(*h))) == NULL)
		return -1;
	cnt_hll_init_p(h, inline_p(g));
	if (cnt_hll_add_entry(h, g->ski[0]) != 0 || (g->ski[1] && cnt_hll_add_entry(h, g->ski[1]) != 0)) {
		cnt_hll_free(h);
		return -1;
	}
	g->flags &= ~(AGG_SKI | AGG_SKP_MASK);
	g->sketch = h;
	a->sketch_bytes += sizeof(cnt_hll) + cnt_hll_heap_bytes(h);
	return 0;
}

/* Adds an item, by its hash, to g's on-time sketch at precision p: inline
 * while it has at most two distinct entries (of the same precision).  0 or
 * -1 (out of memory). */
static int group_sketch_add(cnt_accum *a, agg *g, uint64_t item_hash, int p)
{
	uint32_t e, k;

	if (p < CNT_HLL_P_MIN || p > CNT_HLL_P_MAX)
		p = CNT_HLL_P;
	e = cnt_hll_entry(item_hash, p);
	k = cnt_hll_entry_key(e);
	if (!(g->flags & AGG_SKI) && g->sketch == NULL) {
		g->ski[0] = e;
		g->ski[1] = 0;
		g->flags |= AGG_SKI | (uint32_t)p << AGG_SKP_SHIFT;
		return 0;
	}
	if ((g->flags & AGG_SKI) && inline_p(g) == p) {
		/* one entry a key, the larger word (as in a cnt_hll) */
		for (int i = 0; i < 2; i++) {
			if (g->ski[i] == 0) {
				g->ski[i] = e;
				return 0;
			}
			if (cnt_hll_entry_key(g->ski[i]) == k) {
				if (g->ski[i] < e)
					g->ski[i] = e;
				return 0;
			}
		}
	}
	if (sketch_to_heap(a, g) != 0)
		return -1;
	return sketch_add(a, &g->sketch, item_hash, p);
}

static int sketch_merge_bytes(cnt_accum *a, cnt_hll **hp, cnt_slice bytes, cnt_err *err)
{
	cnt_hll src;
	size_t before;
	int rc, made;

	if (bytes.p == NULL)
		return 0;
	if (cnt_hll_deserialize(&src, (const uint8_t *)bytes.p, bytes.n, err) != 0)
		return cnt_err_prefix(err, "sketch");
	before = *hp ? cnt_hll_heap_bytes(*hp) : 0;
	made = *hp == NULL;
	rc = cnt_hll_merge_into(hp, &src);
	cnt_hll_release(&src);
	if (rc != 0)
		return cnt_err_nomem(err);
	if (a)
		a->sketch_bytes += (made ? sizeof(cnt_hll) : 0) + cnt_hll_heap_bytes(*hp) - before;
	return 0;
}

static void latest_last(agg *g, int64_t u, int64_t m);
static void latest_ingest(agg *g, int64_t u, int64_t m);

/* c: g's cold part, or NULL when b has nothing for it (has_cold). */
static void merge_numbers(agg *g, agg_cold *c, const cnt_bucket *b)
{
	g->count += b->count;
	g->sum += b->sum;
	if (b->has_min && (!(g->flags & AGG_MIN) || b->min < g->min)) {
		g->min = b->min;
		g->flags |= AGG_MIN;
	}
	if (b->has_max && (!(g->flags & AGG_MAX) || b->max > g->max)) {
		g->max = b->max;
		g->flags |= AGG_MAX;
	}
	if (b->has_last)
		latest_last(g, b->last_event_time, b->last_count);
	latest_ingest(g, b->max_ingest_time, b->ingest_count);
	g->late_count += b->late_count;
	if (c == NULL)
		return;
	c->late_sum += b->late_sum;
	c->sampled += b->sampled;
	c->sum_var = (cnt_i128)((unsigned __int128)c->sum_var + (unsigned __int128)b->sum_var);
}

static int spill(cnt_accum *a, cnt_err *err);

/*
 * What the accumulator's tables would add to the estimate if those within
 * a batch or two of growing grew now.  Each doubles when it fills (the
 * indexes at half full), and a doubling is the estimate's largest single
 * step (the group index's 16 bytes a group against about 144 in all).  check_memory
 * spills before such a step would pass the limit, not after, which would
 * leave the peak that far over.  The margin of 1024 entries (64 bytes of
 * name each) covers a batch of events with their breakdown records, or
 * the 256 bucket records between two checks of cnt_accum_add_bucket.
 */
static size_t next_growth(const cnt_accum *a)
{
	enum { MARGIN = 1024 };
	size_t g = 0;

	if (a->ngroups + MARGIN > (a->gmask + 1) / 2)
		g += (a->gmask + 1) * sizeof(gslot);
	if (a->nmembers + MARGIN > (a->mmask + 1) / 2)
		g += (a->mmask + 1) * sizeof(mslot);
	if (a->nmembers + MARGIN > a->cmembers)
		g += a->cmembers * (sizeof(size_t) + sizeof(uint32_t));
	if (a->mdata.len + MARGIN * 64 > a->mdata.cap)
		g += a->mdata.cap;
	if (a->ncolds + MARGIN > a->ccolds)
		g += a->ccolds * sizeof(agg_cold);
	return g;
}

static int check_memory(cnt_accum *a, cnt_err *err)
{
	size_t m = mem_estimate(a);

	if (m > a->st.peak_bytes)
		a->st.peak_bytes = m;
	if (a->limit && a->ngroups > 0 && m + next_growth(a) > a->limit)
		return spill(a, err);
	return 0;
}

/* The latest times keep their multiplicity: (time, n) combine by taking
 * the later time, or adding n on a tie.  That is commutative and
 * associative with signed n, so a compensation (n = -1 at its original's
 * time) meets its original in any order, and a result of n > 0 at the
 * latest time seen anywhere is provably the latest time of the events
 * left; n <= 0 means it is not known (cnt_bucket_stale). */
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

static void latest_last(agg *g, int64_t u, int64_t m)
{
	int has = (g->flags & AGG_LAST) != 0;

	latest(&g->last_event_time, &g->nlast, &has, u, m);
	g->flags |= AGG_LAST;
}

static void latest_ingest(agg *g, int64_t u, int64_t m)
{
	/* max_ingest_time starts at INT64_MIN with multiplicity 0 */
	int has = g->ningest != 0 || g->max_ingest_time != INT64_MIN;

	latest(&g->max_ingest_time, &g->ningest, &has, u, m);
}

/* An approx counter's event at level L (w->sample >= 0) weighs 2^L: it
 * adds 2^L to count and d * 2^L to sum, one to sampled, and
 * d*d*w*(w-1) to sum_var (the Horvitz-Thompson variance estimate,
 * 128-bit wrapping; cnt-bucket(5)).  sign -1 takes all of it out again
 * (a compensation). */
static void add_sampled(agg_cold *c, const cnt_windowed *w, int sign)
{
	int64_t wt = (int64_t)1 << w->sample, d = w->ev.delta;
	unsigned __int128 v = (unsigned __int128)((cnt_i128)d * d) * (uint64_t)wt * (uint64_t)(wt - 1);

	c->sampled += sign;
	c->sum_var = (cnt_i128)(sign > 0 ? (unsigned __int128)c->sum_var + v
					 : (unsigned __int128)c->sum_var - v);
}

/* total: g is the member's total (else a breakdown record, whose events
 * are already counted in the statistics); ih: the hash of the event's
 * item, when it has one (cnt_hll_hash). */
static int add_one(cnt_accum *a, agg *g, const cnt_windowed *w, int total, uint64_t ih, cnt_err *err)
{
	const cnt_event *e = &w->ev;
	/* the event's weight: 1, or 2^L for an approx counter's sample */
	int64_t wt = w->sample > 0 ? (int64_t)1 << w->sample : 1;
	cnt_i128 dw = (cnt_i128)e->delta * wt;
	agg_cold *c = NULL;

	if (total) {
		a->st.events++;
		a->st.scaled_extra += e->retracts.p ? -(uint64_t)(wt - 1) : (uint64_t)(wt - 1);
	}
	if (e->retracts.p) {
		/* A compensation (cnt-retract(1)) takes its original out of
		 * the additive columns: one event fewer, its delta (already
		 * negated) added.  It carries the original's times, so it is
		 * late exactly when the original was, and it takes one from
		 * the multiplicity of those times.  Minima, maxima and
		 * sketches cannot be compensated: they are left alone (the
		 * buckets a retraction touches are rebuilt, cnt-retract
		 * --rebuild); an exact counter has none.  It carries the
		 * original's attrs, hence its weight. */
		if (total)
			a->st.compensations++;
		latest_ingest(g, e->ingest_time, -1);
		if (w->late || w->sample >= 0) {
			if ((c = cold_of(a, g)) == NULL)
				return cnt_err_nomem(err);
		}
		if (w->late) {
			if (total)
				a->st.late_events++;
			g->late_count -= wt;
			c->late_sum += dw;
		} else {
			g->count -= wt;
			g->sum += dw;
			latest_last(g, e->event_time, -1);
			if (w->sample >= 0)
				add_sampled(c, w, -1);
		}
		return 0;
	}
	latest_ingest(g, e->ingest_time, 1);
	if (w->late) {
		/* Kept apart: counted, never folded into the on-time values. */
		if (total)
			a->st.late_events++;
		if ((c = cold_of(a, g)) == NULL)
			return cnt_err_nomem(err);
		g->late_count += wt;
		c->late_sum += dw;
		if (!w->exact && e->item.p && sketch_add(a, &c->late_sketch, ih, w->hll_precision) != 0)
			return cnt_err_nomem(err);
		return 0;
	}
	g->count += wt;
	g->sum += dw;
	latest_last(g, e->event_time, 1);
	if (w->sample >= 0) {
		if ((c = cold_of(a, g)) == NULL)
			return cnt_err_nomem(err);
		add_sampled(c, w, 1);
	}
	/* An exact (or approx) counter's value is its sum: no minimum,
	 * maximum or sketch, which a compensation could not undo. */
	if (w->exact)
		return 0;
	if (!(g->flags & AGG_MIN) || e->delta < g->min)
		g->min = e->delta;
	if (!(g->flags & AGG_MAX) || e->delta > g->max)
		g->max = e->delta;
	g->flags |= AGG_MIN | AGG_MAX;
	if (e->item.p && group_sketch_add(a, g, ih, w->hll_precision) != 0)
		return cnt_err_nomem(err);
	return 0;
}

/* Adds w to the breakdown record of each of its dimensions (sid, mid: its
 * stream and member). */
static int add_dims(cnt_accum *a, const cnt_windowed *w, uint32_t sid, uint32_t mid, uint64_t ih, cnt_err *err)
{
	for (size_t d = 0; d < w->ndims; d++) {
		uint32_t did;
		ssize_t gi;

		if (dpair_of(a, w->dims[d], w->dim_vals[d], &did) != 0)
			return cnt_err_nomem(err);
		gi = group_of(a, sid, mid, did, w->bucket_start, w->shard, w->bucket_end,
			group_hash_of(sid, mid, did, w->bucket_start, w->shard));
		if (gi < 0)
			return cnt_err_nomem(err);
		if (add_one(a, &a->groups[gi], w, 0, ih, err) != 0)
			return -1;
	}
	return 0;
}

/* Whether w adds its item to a sketch of its group (add_one). */
static int sketches(const cnt_windowed *w)
{
	return w->ev.item.p != NULL && !w->exact && w->ev.retracts.p == NULL;
}

/* Events are added in batches, one phase at a time over the batch, each
 * phase prefetching what the next will touch: the member slot, the
 * member's bytes (a name longer than 8 bytes: a shorter one is in its
 * slot), the group slot, the group's two lines an event
 * touches, and for an item its sketch, then the place in the sketch
 * that the item changes.  At a few million groups every one of those is
 * a cache miss, and this way they overlap. */
int cnt_accum_add_hinted(cnt_accum *a, const cnt_windowed *const *w, const cnt_accum_hint *hint, size_t n,
	cnt_err *err)
{
	uint32_t sid[CNT_ACCUM_BATCH], mid[CNT_ACCUM_BATCH];
	uint64_t mh[CNT_ACCUM_BATCH], gh[CNT_ACCUM_BATCH], ih[CNT_ACCUM_BATCH];
	ssize_t gi[CNT_ACCUM_BATCH];
	unsigned char tagged[CNT_ACCUM_BATCH];
	int any_item = 0;

	if (n > CNT_ACCUM_BATCH)
		return cnt_err_set(err, "internal: batch of %zu events", n);
	for (size_t i = 0; i < n; i++) {
		const cnt_event *e = &w[i]->ev;

		if ((hint ? stream_hinted(a, hint[i].counter, e, &sid[i])
			  : stream_of(a, e->tenant_id, e->counter_id, e->counter_version, &sid[i])) != 0)
			return cnt_err_nomem(err);
		mh[i] = hint ? hint[i].member_hash : XXH3_64bits(e->member_ref.p, e->member_ref.n);
		__builtin_prefetch(&a->mslots[mh[i] & a->mmask]);
	}
	for (size_t i = 0; i < n; i++) {
		const mslot *sl = &a->mslots[mh[i] & a->mmask];

		if (sl->id1 && sl->hash == mh[i] && sl->len > 8)
			__builtin_prefetch(a->mdata.p + sl->off);
	}
	for (size_t i = 0; i < n; i++) {
		if (member_of(a, w[i]->ev.member_ref, mh[i], &mid[i]) != 0)
			return cnt_err_nomem(err);
		gh[i] = group_hash_of(sid[i], mid[i], 0, w[i]->bucket_start, w[i]->shard);
		__builtin_prefetch(&a->gslots[gh[i] & a->gmask]);
	}
	/* A matching tag is taken as the group here, and its key compared
	 * in the next phase, when the group's line has come; no match is a
	 * new group. */
	for (size_t i = 0; i < n; i++) {
		size_t s = probe(a, gh[i], gh[i] & a->gmask);

		if ((tagged[i] = a->gslots[s].idx1 != 0))
			gi[i] = (ssize_t)a->gslots[s].idx1 - 1;
		else if ((gi[i] = new_group(a, s, sid[i], mid[i], 0, w[i]->bucket_start, w[i]->shard,
				  w[i]->bucket_end, gh[i])) < 0)
			return cnt_err_nomem(err);
		__builtin_prefetch(&a->groups[gi[i]]);
		__builtin_prefetch((const char *)&a->groups[gi[i]] + 64);
	}
	for (size_t i = 0; i < n; i++)
		if (tagged[i] && !same_key(&a->groups[gi[i]], sid[i], mid[i], 0, w[i]->bucket_start, w[i]->shard) &&
		    (gi[i] = group_of(a, sid[i], mid[i], 0, w[i]->bucket_start, w[i]->shard, w[i]->bucket_end,
			     gh[i])) < 0)
			return cnt_err_nomem(err);
	for (size_t i = 0; i < n; i++) {
		const cnt_event *e = &w[i]->ev;

		ih[i] = 0;
		if (e->item.p == NULL)
			continue;
		ih[i] = cnt_hll_hash(e->item.p, e->item.n);
		if (sketches(w[i])) {
			const agg *g = &a->groups[gi[i]];
			const cnt_hll *h = w[i]->late ? cold_get(a, g)->late_sketch : heap_sketch(g);

			any_item = 1;
			if (h)
				__builtin_prefetch(h);
		}
	}
	if (any_item)
		for (size_t i = 0; i < n; i++)
			if (sketches(w[i])) {
				const agg *g = &a->groups[gi[i]];
				const cnt_hll *h = w[i]->late ? cold_get(a, g)->late_sketch : heap_sketch(g);

				if (h)
					cnt_hll_prefetch(h, ih[i]);
			}
	for (size_t i = 0; i < n; i++)
		if (add_one(a, &a->groups[gi[i]], w[i], 1, ih[i], err) != 0 ||
		    (w[i]->ndims > 0 && add_dims(a, w[i], sid[i], mid[i], ih[i], err) != 0))
			return -1;
	return check_memory(a, err);
}

int cnt_accum_add_refs(cnt_accum *a, const cnt_windowed *const *w, size_t n, cnt_err *err)
{
	return cnt_accum_add_hinted(a, w, NULL, n, err);
}

int cnt_accum_add_events(cnt_accum *a, const cnt_windowed *w, size_t n, cnt_err *err)
{
	const cnt_windowed *refs[CNT_ACCUM_BATCH];

	if (n > CNT_ACCUM_BATCH)
		return cnt_err_set(err, "internal: batch of %zu events", n);
	for (size_t i = 0; i < n; i++)
		refs[i] = &w[i];
	return cnt_accum_add_refs(a, refs, n, err);
}

int cnt_accum_add_event(cnt_accum *a, const cnt_windowed *w, cnt_err *err)
{
	return cnt_accum_add_events(a, w, 1, err);
}

int cnt_accum_add_bucket(cnt_accum *a, const cnt_bucket *b, cnt_err *err)
{
	uint32_t s, m, d = 0;
	ssize_t gi;
	agg *g;
	agg_cold *c = NULL;

	if (b->dim.n > 0 && memchr(b->dim.p, 0, b->dim.n) != NULL)
		return cnt_err_set(err, "a bucket record's dimension holds a NUL byte: corrupt file");
	if (stream_of(a, b->tenant_id, b->counter_id, b->counter_version, &s) != 0 ||
	    member_of(a, b->member_ref, XXH3_64bits(b->member_ref.p, b->member_ref.n), &m) != 0 ||
	    (b->dim.n > 0 && dpair_of(a, b->dim, b->dim_value, &d) != 0) ||
	    (gi = group_of(a, s, m, d, b->bucket_start, b->shard, b->bucket_end,
			group_hash_of(s, m, d, b->bucket_start, b->shard))) < 0)
		return cnt_err_nomem(err);
	g = &a->groups[gi];
	a->st.buckets_in++;
	/* A breakdown record's events are those of the total record too. */
	if (d == 0)
		a->st.events_in_buckets += (uint64_t)b->count + (uint64_t)b->late_count;
	if (has_cold(b) && (c = cold_of(a, g)) == NULL)
		return cnt_err_nomem(err);
	merge_numbers(g, c, b);
	/* a sketch merged in: the group's inline entries go to the heap */
	if (b->sketch.p != NULL && sketch_to_heap(a, g) != 0)
		return cnt_err_nomem(err);
	if (sketch_merge_bytes(a, &g->sketch, b->sketch, err) != 0 ||
	    (c && sketch_merge_bytes(a, &c->late_sketch, b->late_sketch, err) != 0))
		return -1;
	return (a->st.buckets_in & 255) == 0 ? check_memory(a, err) : 0;
}

/* ---- absorbing another accumulator (count/fused.h) ------------------ */

/* Adds y's statistics to x's (two halves of one count). */
static void add_stats(cnt_accum_stats *x, const cnt_accum_stats *y)
{
	x->events += y->events;
	x->late_events += y->late_events;
	x->buckets_in += y->buckets_in;
	x->groups_out += y->groups_out;
	x->runs += y->runs;
	x->compensations += y->compensations;
	x->emptied += y->emptied;
	x->stale += y->stale;
	x->sum_overflows += y->sum_overflows;
	x->dim_records += y->dim_records;
	x->events_in_buckets += y->events_in_buckets;
	x->events_out += y->events_out;
	x->scaled_extra += y->scaled_extra;
	x->day_records += y->day_records;
	x->peak_bytes += y->peak_bytes;
}

int cnt_accum_absorb(cnt_accum *a, cnt_accum *b, cnt_err *err)
{
	/* b's member and stream ids in a, + 1 (0: not yet interned) */
	uint32_t *mmap1 = calloc(b->nmembers + 1, sizeof(*mmap1)), *smap1 = calloc(b->nstreams + 1, sizeof(*smap1));

	if (mmap1 == NULL || smap1 == NULL)
		goto oom;
	/* room for every group at once: no growth on the way */
	while ((a->ngroups + b->ngroups) * 2 > a->gmask + 1)
		if (grow_groups(a) != 0)
			goto oom;
	for (size_t i = 0; i < b->ngroups; i++) {
		agg *o = &b->groups[i];
		uint32_t s, mid, d = 0;
		size_t before = a->ngroups;
		ssize_t gi;

		if (smap1[o->stream] == 0) {
			const stream *bs = &b->streams[o->stream];
			cnt_slice t = {bs->tenant, bs->tn}, c = {bs->counter, bs->cn};

			if (stream_of(a, t, c, bs->version, &s) != 0)
				goto oom;
			smap1[o->stream] = s + 1;
		}
		s = smap1[o->stream] - 1;
		if (mmap1[o->member] == 0) {
			cnt_slice m = {(const char *)b->mdata.p + b->moff[o->member], b->mlen[o->member]};

			if (member_of(a, m, XXH3_64bits(m.p, m.n), &mid) != 0)
				goto oom;
			mmap1[o->member] = mid + 1;
		}
		mid = mmap1[o->member] - 1;
		if (o->dim) {
			cnt_slice dim, val;

			dpair_get(b, o->dim, &dim, &val);
			if (dpair_of(a, dim, val, &d) != 0)
				goto oom;
		}
		if ((gi = group_of(a, s, mid, d, o->bucket_start, o->shard, o->bucket_end,
			group_hash_of(s, mid, d, o->bucket_start, o->shard))) < 0)
			goto oom;
		if (a->ngroups == before) {
			free(mmap1);
			free(smap1);
			return cnt_err_set(err, "internal: absorbing an accumulator that shares a key");
		}
		a->groups[gi] = *o;
		a->groups[gi].stream = s;
		a->groups[gi].member = mid;
		a->groups[gi].dim = d;
		a->groups[gi].cold1 = 0;
		o->sketch = NULL;   /* a's now, before anything can fail */
		o->flags &= ~(AGG_SKI | AGG_SKP_MASK);
		if (o->cold1) {
			agg_cold *c = cold_of(a, &a->groups[gi]);

			if (c == NULL)
				goto oom;
			*c = b->colds[o->cold1 - 1];
			b->colds[o->cold1 - 1].late_sketch = NULL;   /* a's now */
		}
	}
	free(mmap1);
	free(smap1);
	a->sketch_bytes += b->sketch_bytes;
	b->sketch_bytes = 0;
	for (size_t i = 0; i < b->nruns; i++) {
		if (a->nruns == a->cruns) {
			size_t c = a->cruns ? a->cruns * 2 : 8;
			int *v = realloc(a->runs, c * sizeof(*v));

			if (v == NULL)
				return cnt_err_nomem(err);
			a->runs = v;
			a->cruns = c;
		}
		a->runs[a->nruns++] = b->runs[i];
		b->runs[i] = -1;
	}
	add_stats(&a->st, &b->st);
	b->st = (cnt_accum_stats){0};
	return check_memory(a, err);
oom:
	free(mmap1);
	free(smap1);
	return cnt_err_nomem(err);
}

/* ---- canonical order ------------------------------------------------ */

static int cmp_dpairs(const void *x, const void *y, void *ctx)
{
	const cnt_accum *a = ctx;
	const dpair *p = &a->dpairs[*(const uint32_t *)x], *q = &a->dpairs[*(const uint32_t *)y];
	size_t n = p->len < q->len ? p->len : q->len;
	int d = n ? memcmp(a->ddata.p + p->off, a->ddata.p + q->off, n) : 0;

	if (d)
		return d;
	return p->len < q->len ? -1 : p->len > q->len;
}

static int cmp_members(const void *x, const void *y, void *ctx)
{
	const cnt_accum *a = ctx;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	size_t n = a->mlen[i] < a->mlen[j] ? a->mlen[i] : a->mlen[j];
	int d = n ? memcmp(a->mdata.p + a->moff[i], a->mdata.p + a->moff[j], n) : 0;

	if (d)
		return d;
	return a->mlen[i] < a->mlen[j] ? -1 : a->mlen[i] > a->mlen[j];
}

/* A member's first 8 bytes as a big-endian number, zero-padded: where
 * two members' prefixes differ, they are in the order of the members
 * (cmp_members); equal prefixes decide nothing. */
static uint64_t member_prefix(const cnt_accum *a, uint32_t i)
{
	const uint8_t *p = a->mdata.p + a->moff[i];
	size_t n = a->mlen[i] < 8 ? a->mlen[i] : 8;
	uint64_t k = 0;

	for (size_t j = 0; j < 8; j++)
		k = k << 8 | (j < n ? p[j] : 0);
	return k;
}

/* The members 0..nmembers in cmp_members's order into mord: a radix sort
 * of their prefixes (a byte that all share costs no pass), then each run
 * of equal prefixes by cmp_members.  qsort_r alone made about 20
 * comparisons a member, each fetching two members' bytes from wherever
 * they are.  The sort's 20 bytes a member are the member index's (dead
 * once the groups are written, as the group index is: see write_sorted),
 * which has at least 48 bytes a member but after a failed growth; else
 * the heap; out of memory, qsort_r alone. */
static void sort_members(cnt_accum *a, uint32_t *mord)
{
	size_t n = a->nmembers, need = n * (2 * sizeof(uint64_t) + sizeof(uint32_t));
	int borrowed = need <= (a->mmask + 1) * sizeof(mslot);
	uint64_t *key = borrowed ? (uint64_t *)(void *)a->mslots : malloc(need + 1);
	uint64_t *k2 = key ? key + n : NULL, *kin = key;
	uint32_t *tmp = key ? (uint32_t *)(void *)(key + 2 * n) : NULL, *in = mord;

	for (uint32_t i = 0; i < n; i++)
		mord[i] = i;
	if (n < 2 || key == NULL) {
		if (key == NULL)
			qsort_r(mord, n, sizeof(*mord), cmp_members, a);
		if (!borrowed)
			free(key);
		return;
	}
	for (size_t i = 0; i < n; i++)
		key[i] = member_prefix(a, (uint32_t)i);
	for (int shift = 0; shift < 64; shift += 8) {
		size_t at[257] = {0};
		uint64_t *kt;
		uint32_t *it;

		for (size_t i = 0; i < n; i++)
			at[(kin[i] >> shift & 0xff) + 1]++;
		if (at[(kin[0] >> shift & 0xff) + 1] == n)
			continue;
		for (int b = 0; b < 256; b++)
			at[b + 1] += at[b];
		for (size_t i = 0; i < n; i++) {
			size_t j = at[kin[i] >> shift & 0xff]++;

			k2[j] = kin[i];
			tmp[j] = in[i];
		}
		kt = kin, kin = k2, k2 = kt;
		it = in, in = tmp, tmp = it;
	}
	if (in != mord)
		memcpy(mord, in, n * sizeof(*mord));
	for (size_t i = 0, e; i < n; i = e) {
		for (e = i + 1; e < n && kin[e] == kin[i]; e++)
			;
		if (e - i > 1)
			qsort_r(mord + i, e - i, sizeof(*mord), cmp_members, a);
	}
	if (!borrowed)
		free(key);
}

static int slice_cmp2(const char *a, size_t an, const char *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int d = n ? memcmp(a, b, n) : 0;

	if (d)
		return d;
	return an < bn ? -1 : an > bn;
}

static int cmp_streams(const void *x, const void *y, void *ctx)
{
	const stream *s = ctx;
	const stream *p = &s[*(const uint32_t *)x], *q = &s[*(const uint32_t *)y];
	int d = slice_cmp2(p->tenant, p->tn, q->tenant, q->tn);

	if (d == 0)
		d = slice_cmp2(p->counter, p->cn, q->counter, q->cn);
	if (d == 0)
		d = p->version < q->version ? -1 : p->version > q->version;
	return d;
}

/* Sorts the group indexes in[0..n) into out, stably, by each one's
 * key[index] < nkeys.  -1: out of memory. */
static int counting_sort(const uint32_t *in, uint32_t *out, size_t n, const uint32_t *key, size_t nkeys)
{
	size_t *at = calloc(nkeys + 1, sizeof(*at));

	if (at == NULL)
		return -1;
	for (size_t i = 0; i < n; i++)
		at[key[in[i]] + 1]++;
	for (size_t k = 0; k < nkeys; k++)
		at[k + 1] += at[k];
	for (size_t i = 0; i < n; i++)
		out[at[key[in[i]]]++] = in[i];
	free(at);
	return 0;
}

/* The order of two groups of one stream and member: by dimension pair
 * (the total first), bucket and shard. */
static int cmp_in_run(const agg *g, const agg *h, const uint32_t *drank)
{
	uint32_t dg = g->dim ? drank[g->dim - 1] : 0, dh = h->dim ? drank[h->dim - 1] : 0;

	if (dg != dh)
		return dg < dh ? -1 : 1;
	if (g->bucket_start != h->bucket_start)
		return g->bucket_start < h->bucket_start ? -1 : 1;
	return g->shard < h->shard ? -1 : g->shard > h->shard;
}

typedef struct run_ctx {
	const agg *groups;
	const uint32_t *drank;
} run_ctx;

static int cmp_run_qsort(const void *x, const void *y, void *ctx)
{
	const run_ctx *c = ctx;

	return cmp_in_run(&c->groups[*(const uint32_t *)x], &c->groups[*(const uint32_t *)y], c->drank);
}

/* Sorts the n group indexes of one stream and member.  A run is mostly a
 * few groups (a member's hours): insertion sort, else qsort. */
static void sort_run(const cnt_accum *a, uint32_t *v, size_t n, const uint32_t *drank)
{
	if (n > 16) {
		run_ctx c = {a->groups, drank};

		qsort_r(v, n, sizeof(*v), cmp_run_qsort, &c);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		uint32_t x = v[i];
		size_t j = i;

		for (; j > 0 && cmp_in_run(&a->groups[x], &a->groups[v[j - 1]], drank) < 0; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* Where emit() puts records: the writer w, or with q set, the queue to
 * the thread that writes them (cnt_accum_finish_halves). */
typedef struct sink {
	cnt_writer *w;
	cnt_recq *q;
} sink;

static cnt_buf *sink_buf(const sink *k)
{
	return k->q ? cnt_recq_buf(k->q) : cnt_writer_buf(k->w);
}

static int sink_commit(const sink *k, cnt_err *err)
{
	return k->q ? cnt_recq_commit(k->q, err) : cnt_writer_commit(k->w, err);
}

/* Writes one record from a group's aggregates and its key strings. */
static int emit(cnt_accum *a, const sink *w, const stream *s, cnt_slice member, cnt_slice dim, cnt_slice dval,
	const agg *g, const agg_cold *c, cnt_err *err)
{
	cnt_bucket b;
	int total = dim.n == 0;
	cnt_hll inl;
	uint32_t inl_buf[2];
	const cnt_hll *sk = heap_sketch(g);

	/* In the final output, a record left with no event (every event of
	 * it retracted) is not written: a rebuild without those events has
	 * no such key.  Spill runs keep it, so that spilling changes nothing. */
	if (a->final && g->count == 0 && g->late_count == 0 && g->sum == 0 && c->late_sum == 0) {
		a->st.emptied++;
		return 0;
	}
	memset(&b, 0, sizeof(b));
	b.tenant_id.p = s->tenant;
	b.tenant_id.n = s->tn;
	b.counter_id.p = s->counter;
	b.counter_id.n = s->cn;
	b.counter_version = s->version;
	b.member_ref = member;
	b.dim = dim;
	b.dim_value = dval;
	b.bucket_start = g->bucket_start;
	b.bucket_end = g->bucket_end;
	b.shard = g->shard;
	b.count = g->count;
	b.sum = g->sum;
	b.has_min = (g->flags & AGG_MIN) != 0;
	b.min = g->min;
	b.has_max = (g->flags & AGG_MAX) != 0;
	b.max = g->max;
	b.has_last = (g->flags & AGG_LAST) != 0;
	b.last_event_time = g->last_event_time;
	b.max_ingest_time = g->max_ingest_time;
	b.late_count = g->late_count;
	b.late_sum = c->late_sum;
	b.last_count = g->nlast;
	b.ingest_count = g->ningest;
	b.sampled = c->sampled;
	b.sum_var = c->sum_var;
	/* Every on-time event of the record retracted: a rebuild has no
	 * on-time event, hence no last_event_time.  (In a spill run the time
	 * is kept, so that spilling changes nothing.) */
	if (a->final && g->count == 0 && g->nlast == 0) {
		b.has_last = 0;
		b.last_event_time = 0;
	}
	a->s1.len = a->s2.len = 0;
	if (g->flags & AGG_SKI) {
		/* inline entries: a sketch over them, on the stack */
		if (cnt_hll_entries_view(&inl, inl_buf, g->ski, g->ski[1] ? 2 : 1, inline_p(g)) != 0)
			return cnt_err_set(err, "internal: a group's inline sketch is malformed");
		sk = &inl;
	}
	if (sk) {
		if (cnt_hll_serialize(sk, &a->s1) != 0)
			return cnt_err_nomem(err);
		b.sketch.p = (const char *)a->s1.p;
		b.sketch.n = a->s1.len;
	}
	if (c->late_sketch) {
		if (cnt_hll_serialize(c->late_sketch, &a->s2) != 0)
			return cnt_err_nomem(err);
		b.late_sketch.p = (const char *)a->s2.p;
		b.late_sketch.n = a->s2.len;
	}
	if (!cnt_i128_fits64(g->sum))
		a->st.sum_overflows++;
	if (a->final && total) {
		int st = cnt_bucket_stale(&b);

		if (st) {
			a->st.stale++;
			if (a->stale_cb)
				a->stale_cb(a->stale_ctx, &b, st);
		}
	}
	/* Conservation: the events the output records stand for (a
	 * breakdown record's are its total's). */
	if (total)
		a->st.events_out += (uint64_t)g->count + (uint64_t)g->late_count;
	else if (a->final)
		a->st.dim_records++;
	if (cnt_bucket_encode(&b, sink_buf(w)) != 0)
		return cnt_err_nomem(err);
	if (a->final && a->days && cnt_rollup_add(a->days, &b, sk, c->late_sketch, err) != 0)
		return -1;
	return sink_commit(w, err);
}

/* Writes the in-memory groups to w in canonical order: (stream, member,
 * dimension pair, bucket, shard), the strings in byte order. */
static int write_sorted(cnt_accum *a, const sink *w, cnt_err *err)
{
	uint32_t *mord = NULL, *sord = NULL, *dord = NULL, *drank = NULL, *mrank = NULL, *srank = NULL;
	uint32_t *gkey = NULL, *ord, *ord1;
	size_t n = a->ngroups, ahead = 0;
	int rc = -1, borrowed = 0;

	if (n == 0)
		return 0;
	/* The group index (gslots) is dead once the groups are being written:
	 * every caller ends the table or resets it after this.  Its memory,
	 * faulted in already, holds the sort's three arrays of 4 bytes a
	 * group rather than as much fresh memory (on this project's 2-core VM
	 * about 1 s per GiB, as the measuring stick's README says).  It has
	 * at least twice as many 8-byte slots as there are groups (but after
	 * a failed growth); else the heap. */
	if (3 * n * sizeof(uint32_t) <= (a->gmask + 1) * sizeof(gslot)) {
		gkey = (uint32_t *)(void *)a->gslots;
		borrowed = 1;
	} else {
		gkey = malloc(3 * n * sizeof(*gkey));
	}
	ord = gkey ? gkey + n : NULL;
	ord1 = gkey ? gkey + 2 * n : NULL;
	mord = malloc(a->nmembers * sizeof(*mord));
	mrank = malloc(a->nmembers * sizeof(*mrank));
	sord = malloc(a->nstreams * sizeof(*sord));
	srank = malloc(a->nstreams * sizeof(*srank));
	dord = malloc(a->ndpairs * sizeof(*dord) + 1);
	drank = malloc(a->ndpairs * sizeof(*drank) + 1);
	if (mord == NULL || mrank == NULL || sord == NULL || srank == NULL || gkey == NULL ||
	    dord == NULL || drank == NULL)
		goto oom;
	sort_members(a, mord);
	for (uint32_t r = 0; r < a->nmembers; r++)
		mrank[mord[r]] = r;
	for (uint32_t i = 0; i < a->nstreams; i++)
		sord[i] = i;
	qsort_r(sord, a->nstreams, sizeof(*sord), cmp_streams, a->streams);
	for (uint32_t r = 0; r < a->nstreams; r++)
		srank[sord[r]] = r;
	for (uint32_t i = 0; i < a->ndpairs; i++)
		dord[i] = i;
	qsort_r(dord, a->ndpairs, sizeof(*dord), cmp_dpairs, a);
	for (uint32_t r = 0; r < a->ndpairs; r++)
		drank[dord[r]] = r + 1;
	/* By member, then (stable) by stream: two counting sorts, each a
	 * pass over the groups in their own order.  Then the few groups of
	 * each stream and member are sorted when they are written. */
	for (size_t i = 0; i < n; i++) {
		ord1[i] = (uint32_t)i;
		gkey[i] = mrank[a->groups[i].member];
	}
	if (counting_sort(ord1, ord, n, gkey, a->nmembers) != 0)
		goto oom;
	if (a->nstreams > 1) {
		for (size_t i = 0; i < n; i++)
			gkey[i] = srank[a->groups[i].stream];
		if (counting_sort(ord, ord1, n, gkey, a->nstreams) != 0)
			goto oom;
		ord = ord1; /* the order is now in ord1 */
	}
	for (size_t i = 0, e; i < n; i = e) {
		const agg *g0 = &a->groups[ord[i]];

		/* Sorted order visits the groups at random: fetch ahead, 24
		 * groups' lines, then for the group 12 ahead (whose first line
		 * has come) its member's offset and length, and for the one 6
		 * ahead the member's bytes.  A run shares its member, so those
		 * are mostly fetched once a run. */
		for (e = i + 1; e < n; e++) {
			const agg *g = &a->groups[ord[e]];

			for (; ahead < e + 24 && ahead < n; ahead++) {
				__builtin_prefetch(&a->groups[ord[ahead]]);
				__builtin_prefetch((const char *)&a->groups[ord[ahead]] + 64);
				if (ahead >= 12) {
					uint32_t mm = a->groups[ord[ahead - 12]].member;

					__builtin_prefetch(&a->moff[mm]);
					__builtin_prefetch(&a->mlen[mm]);
				}
				if (ahead >= 18)
					__builtin_prefetch(a->mdata.p + a->moff[a->groups[ord[ahead - 18]].member]);
			}
			if (g->member != g0->member || g->stream != g0->stream)
				break;
		}
		sort_run(a, ord + i, e - i, drank);
		for (size_t j = i; j < e; j++) {
			const agg *g = &a->groups[ord[j]];
			cnt_slice m = {(const char *)a->mdata.p + a->moff[g->member], a->mlen[g->member]};
			cnt_slice dim = {"", 0}, dval = {"", 0};

			if (g->dim)
				dpair_get(a, g->dim, &dim, &dval);
			if (emit(a, w, &a->streams[g->stream], m, dim, dval, g, cold_get(a, g), err) != 0)
				goto out;
			/* the output's last use of the sketches: free them while
			 * they are at hand (in the writing thread, with halves) */
			if (a->final)
				release_sketches(a, &a->groups[ord[j]]);
		}
	}
	rc = 0;
	goto out;
oom:
	cnt_err_oom(err, "sorting %zu groups", n);
out:
	free(mord);
	free(mrank);
	free(sord);
	free(srank);
	if (!borrowed)
		free(gkey);
	free(dord);
	free(drank);
	return rc;
}

/* Empties the table and gives its memory back, so that the estimate
 * starts again from nothing after a spill. */
static int reset_groups(cnt_accum *a)
{
	free_sketches(a);
	cnt_table_free(a->groups, a->cgroups * sizeof(agg));
	a->groups = NULL;
	a->ngroups = a->cgroups = 0;
	free(a->colds);
	a->colds = NULL;
	a->ncolds = a->ccolds = 0;
	free(a->moff);
	free(a->mlen);
	a->moff = NULL;
	a->mlen = NULL;
	a->nmembers = a->cmembers = 0;
	cnt_buf_release(&a->mdata);
	cnt_table_free(a->gslots, (a->gmask + 1) * sizeof(gslot));
	cnt_table_free(a->mslots, (a->mmask + 1) * sizeof(mslot));
	a->gmask = a->mmask = 1023;
	a->gslots = cnt_table_alloc((a->gmask + 1) * sizeof(gslot));
	a->mslots = cnt_table_alloc((a->mmask + 1) * sizeof(mslot));
	return a->gslots && a->mslots ? 0 : -1;
}

static int spill(cnt_accum *a, cnt_err *err)
{
	char path[4096];
	cnt_writer *w;
	int fd;
	uint64_t overflows = a->st.sum_overflows, represented = a->st.events_out;

	/* A run has no name: an O_TMPFILE file never has one, and one made
	 * by mkstemp (file systems without O_TMPFILE) loses it at once.  So
	 * however the process ends, even by SIGKILL, nothing is left in the
	 * directory for anyone to clean up. */
	fd = -1;
#ifdef O_TMPFILE
	fd = open(a->tmpdir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
	if (fd < 0) {
		snprintf(path, sizeof(path), "%s/.cnt-accumulate.run-XXXXXX", a->tmpdir);
		fd = mkstemp(path);
		if (fd < 0) {
			int e = errno;

			cnt_err_set(err, "cannot create a spill file in '%s': %s (set --tmpdir or TMPDIR)", a->tmpdir, strerror(e));
			/* A full or broken disk is an output that cannot be
			 * written (exit 3); a missing directory is a usage
			 * matter (exit 2). */
			if (e == ENOSPC || e == EDQUOT || e == EIO || e == EROFS)
				err->kind = CNT_ERR_IO;
			return -1;
		}
		unlink(path);
	}
	if (a->nruns == a->cruns) {
		size_t c = a->cruns ? a->cruns * 2 : 8;
		int *v = realloc(a->runs, c * sizeof(*v));

		if (v == NULL) {
			close(fd);
			return cnt_err_nomem(err);
		}
		a->runs = v;
		a->cruns = c;
	}
	a->runs[a->nruns++] = fd;
	w = cnt_bucket_writer_new(fd, "spill file", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, err);
	if (w == NULL)
		return -1;
	if (write_sorted(a, &(sink){w, NULL}, err) != 0 || cnt_writer_finish(w, err) != 0) {
		cnt_writer_free(w);
		return cnt_err_prefix(err, "spilling to '%s'", a->tmpdir);
	}
	cnt_writer_free(w);
	a->st.runs++;
	/* counted when the output is written, not per run */
	a->st.sum_overflows = overflows;
	a->st.events_out = represented;
	return reset_groups(a) == 0 ? 0 : cnt_err_nomem(err);
}

/* ---- merging runs --------------------------------------------------- */

typedef struct run {
	cnt_bucket_in in;
	cnt_bucket cur;
	int live;
} run;

static int run_less(const run *r, uint32_t x, uint32_t y)
{
	int d = cnt_bucket_key_cmp(&r[x].cur, &r[y].cur);

	return d < 0 || (d == 0 && x < y);
}

static void heap_down(const run *r, uint32_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && run_less(r, h[l], h[m]))
			m = l;
		if (l + 1 < n && run_less(r, h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		uint32_t t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static int merge_runs(cnt_accum *a, const sink *w, cnt_err *err)
{
	run *r = calloc(a->nruns, sizeof(*r));
	uint32_t *heap = calloc(a->nruns, sizeof(*heap));
	size_t n = 0;
	cnt_buf key = CNT_BUF_INIT;
	int rc = -1;

	if (r == NULL || heap == NULL) {
		cnt_err_nomem(err);
		goto out;
	}
	for (size_t i = 0; i < a->nruns; i++) {
		int got;

		if (lseek(a->runs[i], 0, SEEK_SET) != 0) {
			cnt_err_set(err, "cannot reread a spill file: %s", strerror(errno));
			goto out;
		}
		if (cnt_bucket_in_open(&r[i].in, a->runs[i], "spill file", NULL, err) != 0)
			goto out;
		r[i].live = 1;
		got = cnt_bucket_in_next(&r[i].in, &r[i].cur, err);
		if (got < 0)
			goto out;
		if (got > 0)
			heap[n++] = (uint32_t)i;
	}
	for (size_t i = n / 2; i-- > 0;)
		heap_down(r, heap, n, i);
	while (n > 0) {
		agg g;
		agg_cold gc;
		stream s;
		cnt_slice member, dim, dval;
		cnt_bucket k;

		/* The smallest key, with its strings copied (the reader moves on). */
		k = r[heap[0]].cur;
		key.len = 0;
		if (cnt_buf_append(&key, k.tenant_id.p, k.tenant_id.n) != 0 ||
		    cnt_buf_append(&key, k.counter_id.p, k.counter_id.n) != 0 ||
		    cnt_buf_append(&key, k.member_ref.p, k.member_ref.n) != 0 ||
		    cnt_buf_append(&key, k.dim.p, k.dim.n) != 0 ||
		    cnt_buf_append(&key, k.dim_value.p, k.dim_value.n) != 0) {
			cnt_err_nomem(err);
			goto out;
		}
		s.tenant = (char *)key.p;
		s.tn = k.tenant_id.n;
		s.counter = (char *)key.p + k.tenant_id.n;
		s.cn = k.counter_id.n;
		s.version = k.counter_version;
		member.p = (const char *)key.p + k.tenant_id.n + k.counter_id.n;
		member.n = k.member_ref.n;
		dim.p = member.p + member.n;
		dim.n = k.dim.n;
		dval.p = dim.p + dim.n;
		dval.n = k.dim_value.n;
		k.tenant_id.p = s.tenant;
		k.counter_id.p = s.counter;
		k.member_ref = member;
		k.dim = dim;
		k.dim_value = dval;
		memset(&g, 0, sizeof(g));
		memset(&gc, 0, sizeof(gc));
		g.bucket_start = k.bucket_start;
		g.bucket_end = k.bucket_end;
		g.shard = k.shard;
		g.max_ingest_time = INT64_MIN;
		while (n > 0 && cnt_bucket_key_cmp(&r[heap[0]].cur, &k) == 0) {
			run *top = &r[heap[0]];
			int got;

			merge_numbers(&g, &gc, &top->cur);
			if (sketch_merge_bytes(NULL, &g.sketch, top->cur.sketch, err) != 0 ||
			    sketch_merge_bytes(NULL, &gc.late_sketch, top->cur.late_sketch, err) != 0)
				goto fail_g;
			got = cnt_bucket_in_next(&top->in, &top->cur, err);
			if (got < 0)
				goto fail_g;
			if (got == 0)
				heap[0] = heap[--n];
			heap_down(r, heap, n, 0);
		}
		rc = emit(a, w, &s, member, dim, dval, &g, &gc, err);
fail_g:
		cnt_hll_free(g.sketch);
		cnt_hll_free(gc.late_sketch);
		if (rc != 0)
			goto out;
		rc = -1;
		a->st.groups_out++;
	}
	rc = 0;
out:
	if (r)
		for (size_t i = 0; i < a->nruns; i++)
			if (r[i].live)
				cnt_bucket_in_release(&r[i].in);
	free(r);
	free(heap);
	cnt_buf_release(&key);
	return rc;
}

int cnt_accum_finish(cnt_accum *a, cnt_writer *w, cnt_err *err)
{
	int rc;

	if (a->days)
		cnt_rollup_lend(a->days, a->lent, a->lent_bytes);
	if (a->nruns == 0) {
		a->final = 1;
		a->st.groups_out = a->ngroups;
		rc = write_sorted(a, &(sink){w, NULL}, err);
	} else {
		if (a->ngroups > 0 && spill(a, err) != 0)
			return -1;
		a->final = 1;
		rc = merge_runs(a, &(sink){w, NULL}, err);
	}
	a->st.groups_out -= a->st.emptied;
	/* Day roll-ups (count/rollup.h): the hourly container ends, the day
	 * container follows on the same stream. */
	if (rc == 0 && a->days) {
		rc = cnt_rollup_write(a->days, w, err);
		if (rc == 0)
			a->st.day_records = cnt_rollup_records(a->days);
	}
	return rc;
}

void cnt_accum_lend(cnt_accum *a, void *mem, size_t bytes)
{
	a->lent = mem;
	a->lent_bytes = mem ? bytes : 0;
}

int cnt_accum_days(cnt_accum *a, cnt_rollup_zone_fn zone, void *ctx, cnt_err *err)
{
	cnt_rollup_free(a->days);
	a->zone = zone;
	a->zone_ctx = ctx;
	a->days = cnt_rollup_new(zone, ctx);
	return a->days ? 0 : cnt_err_nomem(err);
}

/* ---- finishing two halves at once (cnt-count) ------------------------ */

/* One half: sorted and encoded on a thread of its own, into q. */
typedef struct half {
	cnt_accum *a;
	cnt_recq *q;
	cnt_err err;
	int rc;
} half;

static void *half_main(void *arg)
{
	half *h = arg;

	h->a->final = 1;
	h->a->st.groups_out = h->a->ngroups;
	h->rc = write_sorted(h->a, &(sink){NULL, h->q}, &h->err);
	cnt_recq_close(h->q, h->rc != 0);
	return NULL;
}

/* The zone function of both halves' day roll-ups: the one they were
 * asked for (cnt_accum_days), one call at a time, since the cache behind
 * it is shared. */
static const cnt_tz *zone_locked(void *ctx, cnt_slice tenant, cnt_err *err)
{
	cnt_accum *a = ctx;
	const cnt_tz *tz;

	pthread_mutex_lock(&a->zone_mu);
	tz = a->zone(a->zone_ctx, tenant, err);
	pthread_mutex_unlock(&a->zone_mu);
	return tz;
}

/* A half's queue as a source of the merge (model/bucket.h). */
static int half_next(void *ctx, const uint8_t **rec, size_t *n)
{
	return cnt_recq_next(ctx, rec, n);
}

int cnt_accum_finish_halves(cnt_accum *a, cnt_accum *b, cnt_writer *w, cnt_err *err)
{
	half h[2] = {{.a = a}, {.a = b}};
	pthread_t t[2];
	int started = 0, rc = -1;

	/* Spilled runs are merged from files, and a stale callback wants
	 * the records in order: one accumulator, as before. */
	if (a->nruns || b->nruns || a->stale_cb || b->stale_cb)
		return cnt_accum_absorb(a, b, err) != 0 ? -1 : cnt_accum_finish(a, w, err);
	if (a->days) {
		cnt_rollup_free(a->days);
		a->days = cnt_rollup_new(zone_locked, a);
		cnt_rollup_free(b->days);
		b->days = cnt_rollup_new(zone_locked, a);
		if (a->days == NULL || b->days == NULL)
			return cnt_err_nomem(err);
		if (a->lent) {
			size_t first = a->lent_bytes / 2 / 64 * 64;

			cnt_rollup_lend(a->days, a->lent, first);
			cnt_rollup_lend(b->days, (char *)a->lent + first, a->lent_bytes - first);
		}
	}
	if ((h[0].q = cnt_recq_new(4, (size_t)1 << 20)) == NULL || (h[1].q = cnt_recq_new(4, (size_t)1 << 20)) == NULL) {
		cnt_err_nomem(err);
		goto out;
	}
	for (; started < 2; started++) {
		int e = pthread_create(&t[started], NULL, half_main, &h[started]);

		if (e != 0) {
			if (e == ENOMEM || e == EAGAIN)
				cnt_err_oom(err, "starting a thread");
			else
				cnt_err_set(err, "cannot start a thread: %s", strerror(e));
			break;
		}
	}
	if (started == 2) {
		cnt_bucket_src src[2] = {{half_next, h[0].q}, {half_next, h[1].q}};
		size_t failed;

		/* 1: a half failed, and its own error is reported below */
		rc = cnt_bucket_merge_members(src, 2, w, &failed, err) < 0 ? -1 : 0;
	}
	/* a writer that failed, or a thread that never started: the others
	 * stop at their next hand-over */
	cnt_recq_stop(h[0].q);
	cnt_recq_stop(h[1].q);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	/* a half's own error, unless the writer's stopped it */
	for (int i = 0; i < 2 && rc == 0; i++)
		if (h[i].rc != 0) {
			*err = h[i].err;
			rc = -1;
		}
	if (rc != 0)
		goto out;
	add_stats(&a->st, &b->st);
	b->st = (cnt_accum_stats){0};
	a->st.groups_out -= a->st.emptied;
	if (a->days) {
		cnt_rollup *days[2] = {a->days, b->days};

		rc = cnt_rollup_write_merged(days, 2, w, err);
		if (rc == 0)
			a->st.day_records = cnt_rollup_records(a->days) + cnt_rollup_records(b->days);
	}
out:
	cnt_recq_free(h[0].q);
	cnt_recq_free(h[1].q);
	return rc;
}

const cnt_accum_stats *cnt_accum_get_stats(const cnt_accum *a)
{
	return &a->st;
}
