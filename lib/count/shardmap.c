/*
 * shardmap.c - the shard map: parse, format, look up, derive (see
 * shardmap.h).  Keys are kept sorted; an open-addressing index over the
 * XXH3-64 of the key (each part followed by a NUL byte) finds a key's
 * shards in O(1) for the per-event lookup.
 */
#include "count/shardmap.h"
#include "base/jsonload.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "time/timefmt.h"

struct cnt_shardmap {
	int64_t updated_ms;
	uint64_t events;              /* observed at the last derivation */
	cnt_shardmap_key *keys;
	size_t nkeys;
	uint32_t *index;              /* key + 1; 0 empty */
	size_t mask;
	uint32_t max;
};

typedef struct obs_key {
	cnt_slice tenant, counter, member;   /* owned, NUL-terminated */
	uint64_t events;
} obs_key;

struct cnt_shardmap_obs {
	obs_key *keys;
	size_t n, cap;
	uint64_t events;
};

/* ---- keys ---- */

static int slice_cmp(cnt_slice a, cnt_slice b)
{
	size_t n = a.n < b.n ? a.n : b.n;
	int c = n ? memcmp(a.p, b.p, n) : 0;

	return c ? c : (a.n > b.n) - (a.n < b.n);
}

static int key_cmp(cnt_slice t1, cnt_slice c1, cnt_slice m1, cnt_slice t2, cnt_slice c2, cnt_slice m2)
{
	int c;

	if ((c = slice_cmp(t1, t2)) != 0 || (c = slice_cmp(c1, c2)) != 0)
		return c;
	return slice_cmp(m1, m2);
}

static void feed(XXH3_state_t *st, cnt_slice s)
{
	static const char nul = 0;

	if (s.n > 0)
		XXH3_64bits_update(st, s.p, s.n);
	XXH3_64bits_update(st, &nul, 1);
}

/* XXH3-64 of the three parts, each followed by a NUL byte: one-shot from
 * a stack buffer for the usual short keys (the per-event lookup), the
 * streaming state (the same hash) for long ones. */
static uint64_t key_hash(cnt_slice t, cnt_slice c, cnt_slice m)
{
	XXH3_state_t st;
	char flat[256];

	if (t.n + c.n + m.n + 3 <= sizeof(flat)) {
		char *p = flat;

		if (t.n)
			memcpy(p, t.p, t.n);
		p += t.n;
		*p++ = '\0';
		if (c.n)
			memcpy(p, c.p, c.n);
		p += c.n;
		*p++ = '\0';
		if (m.n)
			memcpy(p, m.p, m.n);
		p += m.n;
		*p++ = '\0';
		return XXH3_64bits(flat, (size_t)(p - flat));
	}
	XXH3_64bits_reset(&st);
	feed(&st, t);
	feed(&st, c);
	feed(&st, m);
	return XXH3_64bits_digest(&st);
}

static void free_slice(cnt_slice s)
{
	free((void *)(uintptr_t)s.p);
}

static int dup_slice(cnt_slice *out, const char *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s == NULL)
		return -1;
	if (n)
		memcpy(s, p, n);
	s[n] = '\0';
	out->p = s;
	out->n = n;
	return 0;
}

static void key_release(cnt_shardmap_key *k)
{
	free_slice(k->tenant);
	free_slice(k->counter);
	free_slice(k->member);
	free(k->history);
}

cnt_shardmap *cnt_shardmap_new(cnt_err *err)
{
	cnt_shardmap *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		cnt_err_nomem(err);
		return NULL;
	}
	m->updated_ms = INT64_MIN;
	m->max = 1;
	return m;
}

void cnt_shardmap_free(cnt_shardmap *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->nkeys; i++)
		key_release(&m->keys[i]);
	free(m->keys);
	free(m->index);
	free(m);
}

/* (Re)builds the index and the largest shard count. */
static int build_index(cnt_shardmap *m, cnt_err *err)
{
	size_t cap = 16;
	uint32_t *ix;

	while (cap < 2 * m->nkeys)
		cap <<= 1;
	if ((ix = calloc(cap, sizeof(*ix))) == NULL)
		return cnt_err_nomem(err);
	free(m->index);
	m->index = ix;
	m->mask = cap - 1;
	m->max = 1;
	for (size_t i = 0; i < m->nkeys; i++) {
		const cnt_shardmap_key *k = &m->keys[i];
		size_t j = (size_t)key_hash(k->tenant, k->counter, k->member) & m->mask;

		while (ix[j] != 0)
			j = (j + 1) & m->mask;
		ix[j] = (uint32_t)(i + 1);
		if (k->shards > m->max)
			m->max = k->shards;
	}
	return 0;
}

uint32_t cnt_shardmap_shards(const cnt_shardmap *m, cnt_slice tenant, cnt_slice counter, cnt_slice member)
{
	size_t j;

	if (m == NULL || m->nkeys == 0)
		return 1;
	for (j = (size_t)key_hash(tenant, counter, member) & m->mask; m->index[j] != 0; j = (j + 1) & m->mask) {
		const cnt_shardmap_key *k = &m->keys[m->index[j] - 1];

		if (key_cmp(k->tenant, k->counter, k->member, tenant, counter, member) == 0)
			return k->shards;
	}
	return 1;
}

size_t cnt_shardmap_nkeys(const cnt_shardmap *m) { return m->nkeys; }
const cnt_shardmap_key *cnt_shardmap_key_at(const cnt_shardmap *m, size_t i) { return &m->keys[i]; }
int64_t cnt_shardmap_updated(const cnt_shardmap *m) { return m->updated_ms; }
uint32_t cnt_shardmap_max(const cnt_shardmap *m) { return m->max; }

static int is_pow2(json_int_t v) { return v >= 1 && v <= CNT_SHARDMAP_MAX_SHARDS && (v & (v - 1)) == 0; }

/* ---- parsing ---- */

typedef struct pctx {
	const char *name;
	cnt_err *err;
} pctx;

static int bad(const pctx *c, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(const pctx *c, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cnt_err_set(c->err, "shard map '%s': %s: %s", c->name, path, msg);
}

static int only_keys(const pctx *c, json_t *o, const char *path, const char *const *allowed)
{
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v) {
		size_t i;

		for (i = 0; allowed[i] && strcmp(allowed[i], k) != 0; i++)
			;
		if (allowed[i] == NULL)
			return bad(c, path, "unknown member \"%s\"", k);
	}
	return 0;
}

static json_t *need_member(const pctx *c, json_t *o, const char *path, const char *key, json_type type)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL) {
		bad(c, path, "\"%s\" is missing", key);
		return NULL;
	}
	if (json_typeof(v) != type && !(type == JSON_REAL && json_is_integer(v))) {
		bad(c, path, "\"%s\" is not %s", key, type == JSON_STRING ? "a string" : type == JSON_INTEGER ?
			"an integer" : type == JSON_ARRAY ? "an array" : type == JSON_REAL ? "a number" : "an object");
		return NULL;
	}
	return v;
}

static int get_id(const pctx *c, json_t *o, const char *path, const char *key, cnt_slice *out)
{
	json_t *v = need_member(c, o, path, key, JSON_STRING);
	size_t n;

	if (v == NULL)
		return -1;
	n = json_string_length(v);
	if (n == 0 || n > 1024 || memchr(json_string_value(v), 0, n) != NULL)
		return bad(c, path, "\"%s\" must be 1 to 1024 bytes without NUL", key);
	if (dup_slice(out, json_string_value(v), n) != 0)
		return cnt_err_nomem(c->err);
	return 0;
}

static int get_time(const pctx *c, json_t *o, const char *path, const char *key, int64_t *out)
{
	json_t *v = need_member(c, o, path, key, JSON_STRING);

	if (v == NULL)
		return -1;
	if (cnt_time_parse_rfc3339(json_string_value(v), json_string_length(v), out) != 0)
		return bad(c, path, "\"%s\" is not an RFC 3339 time with offset", key);
	return 0;
}

static int get_shards(const pctx *c, json_t *o, const char *path, const char *key, uint32_t *out)
{
	json_t *v = need_member(c, o, path, key, JSON_INTEGER);

	if (v == NULL)
		return -1;
	if (!is_pow2(json_integer_value(v)))
		return bad(c, path, "\"%s\": %lld is not a power of two from 1 to %d", key,
			(long long)json_integer_value(v), CNT_SHARDMAP_MAX_SHARDS);
	*out = (uint32_t)json_integer_value(v);
	return 0;
}

static int get_share(const pctx *c, json_t *o, const char *path, double *out)
{
	json_t *v = need_member(c, o, path, "share", JSON_REAL);
	double d;

	if (v == NULL)
		return -1;
	d = json_number_value(v);
	if (!(d >= 0 && d <= 1))
		return bad(c, path, "\"share\" is not from 0 to 1");
	*out = d;
	return 0;
}

static int parse_key(const pctx *c, json_t *o, size_t i, int64_t updated, cnt_shardmap_key *k)
{
	static const char *const kk[] = {"tenant_id", "counter_id", "member_ref", "shards", "share", "history", NULL};
	static const char *const hk[] = {"at", "from", "to", "share", NULL};
	char path[96], hp[128];
	json_t *h;

	snprintf(path, sizeof(path), "$.keys[%zu]", i);
	if (!json_is_object(o))
		return bad(c, path, "not an object");
	if (only_keys(c, o, path, kk) != 0 || get_id(c, o, path, "tenant_id", &k->tenant) != 0 ||
	    get_id(c, o, path, "counter_id", &k->counter) != 0 || get_id(c, o, path, "member_ref", &k->member) != 0 ||
	    get_shards(c, o, path, "shards", &k->shards) != 0 || get_share(c, o, path, &k->share) != 0 ||
	    (h = need_member(c, o, path, "history", JSON_ARRAY)) == NULL)
		return -1;
	if (json_array_size(h) == 0 || json_array_size(h) > CNT_SHARDMAP_MAX_HISTORY)
		return bad(c, path, "\"history\" must hold 1 to %d changes", CNT_SHARDMAP_MAX_HISTORY);
	if ((k->history = calloc(json_array_size(h), sizeof(*k->history))) == NULL)
		return cnt_err_nomem(c->err);
	for (size_t j = 0; j < json_array_size(h); j++) {
		json_t *e = json_array_get(h, j);
		cnt_shardmap_change *ch = &k->history[j];
		uint32_t prev = j ? k->history[j - 1].to : 1;

		snprintf(hp, sizeof(hp), "%s.history[%zu]", path, j);
		if (!json_is_object(e))
			return bad(c, hp, "not an object");
		if (only_keys(c, e, hp, hk) != 0 || get_time(c, e, hp, "at", &ch->at_ms) != 0 ||
		    get_shards(c, e, hp, "from", &ch->from) != 0 || get_shards(c, e, hp, "to", &ch->to) != 0 ||
		    get_share(c, e, hp, &ch->share) != 0)
			return -1;
		k->nhistory = j + 1;
		if (ch->from != prev)
			return bad(c, hp, "\"from\" is %u, not %u (%s)", ch->from, prev,
				j ? "the previous change's \"to\"" : "every key starts with 1 shard");
		if (ch->to == ch->from)
			return bad(c, hp, "\"to\" equals \"from\": not a change");
		if (j && ch->at_ms <= k->history[j - 1].at_ms)
			return bad(c, hp, "\"at\" is not after the previous change's");
		if (ch->at_ms > updated)
			return bad(c, hp, "\"at\" is after the map's \"updated\"");
	}
	if (k->history[k->nhistory - 1].to != k->shards)
		return bad(c, path, "\"shards\" is %u but the last change's \"to\" is %u", k->shards,
			k->history[k->nhistory - 1].to);
	return 0;
}

static int parse_root(const pctx *c, json_t *root, cnt_shardmap *m)
{
	static const char *const rk[] = {"format", "updated", "events", "keys", NULL};
	json_t *v, *keys;

	if (!json_is_object(root))
		return bad(c, "$", "not a JSON object");
	if (only_keys(c, root, "$", rk) != 0 || (v = need_member(c, root, "$", "format", JSON_STRING)) == NULL)
		return -1;
	if (strcmp(json_string_value(v), CNT_SHARDMAP_FORMAT) != 0)
		return bad(c, "$.format", "\"%s\" is not \"%s\"", json_string_value(v), CNT_SHARDMAP_FORMAT);
	if (get_time(c, root, "$", "updated", &m->updated_ms) != 0 ||
	    (v = need_member(c, root, "$", "events", JSON_INTEGER)) == NULL ||
	    (keys = need_member(c, root, "$", "keys", JSON_ARRAY)) == NULL)
		return -1;
	if (json_integer_value(v) < 0)
		return bad(c, "$.events", "negative");
	m->events = (uint64_t)json_integer_value(v);
	if (json_array_size(keys) > CNT_SHARDMAP_MAX_KEYS)
		return bad(c, "$.keys", "more than %d keys", CNT_SHARDMAP_MAX_KEYS);
	if (json_array_size(keys) && (m->keys = calloc(json_array_size(keys), sizeof(*m->keys))) == NULL)
		return cnt_err_nomem(c->err);
	for (size_t i = 0; i < json_array_size(keys); i++) {
		cnt_shardmap_key *k = &m->keys[i];

		m->nkeys = i + 1;
		if (parse_key(c, json_array_get(keys, i), i, m->updated_ms, k) != 0)
			return -1;
		if (i && key_cmp(k[-1].tenant, k[-1].counter, k[-1].member, k->tenant, k->counter, k->member) >= 0) {
			char path[64];

			snprintf(path, sizeof(path), "$.keys[%zu]", i);
			return bad(c, path, "not after the key before it (keys are unique and sorted by "
				"tenant_id, counter_id, member_ref)");
		}
	}
	return build_index(m, c->err);
}

cnt_shardmap *cnt_shardmap_parse(const char *text, size_t n, const char *name, cnt_err *err)
{
	pctx c = {name, err};
	json_error_t je;
	json_t *root;
	cnt_shardmap *m;

	if ((m = cnt_shardmap_new(err)) == NULL)
		return NULL;
	if ((root = cnt_json_loadb(text, n, JSON_REJECT_DUPLICATES, &je)) == NULL) {
		if (cnt_json_oom(&je))
			cnt_err_oom(err, "reading shard map '%s'", name);
		else
			cnt_err_set(err, "shard map '%s': line %d, column %d: %s", name, je.line, je.column, je.text);
		cnt_shardmap_free(m);
		return NULL;
	}
	if (parse_root(&c, root, m) != 0) {
		json_decref(root);
		cnt_shardmap_free(m);
		return NULL;
	}
	json_decref(root);
	return m;
}

static int slurp(const char *what, const char *path, cnt_buf *b, cnt_err *err)
{
	FILE *f = fopen(path, "rb");
	size_t got;

	if (f == NULL)
		return cnt_err_set(err, "%s '%s': %s", what, path, strerror(errno));
	for (;;) {
		if (cnt_buf_reserve(b, 65536) != 0) {
			fclose(f);
			return cnt_err_nomem(err);
		}
		got = fread(b->p + b->len, 1, b->cap - b->len, f);
		b->len += got;
		if (b->len > CNT_SHARDMAP_FILE_MAX) {
			fclose(f);
			return cnt_err_set(err, "%s '%s': larger than %u MiB", what, path, CNT_SHARDMAP_FILE_MAX >> 20);
		}
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		cnt_err_set(err, "%s '%s': read error: %s", what, path, strerror(errno));
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

cnt_shardmap *cnt_shardmap_load(const char *path, cnt_err *err)
{
	cnt_buf b = CNT_BUF_INIT;
	cnt_shardmap *m = NULL;

	if (slurp("shard map", path, &b, err) == 0)
		m = cnt_shardmap_parse((const char *)b.p, b.len, path, err);
	cnt_buf_release(&b);
	return m;
}

/* ---- formatting ---- */

static int put_str(cnt_buf *b, cnt_slice s)
{
	json_t *j = json_stringn_nocheck(s.p, s.n);
	char *t;
	int rc;

	if (j == NULL)
		return -1;
	t = cnt_json_dumps(j, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
	json_decref(j);
	if (t == NULL)
		return -1;
	rc = cnt_buf_append(b, t, strlen(t));
	free(t);
	return rc;
}

static int put_time(cnt_buf *b, int64_t ms)
{
	char t[32];

	cnt_time_format_rfc3339(ms, t);
	return cnt_buf_printf(b, "\"%s\"", t);
}

int cnt_shardmap_format(const cnt_shardmap *m, cnt_buf *b, cnt_err *err)
{
	int rc = cnt_buf_printf(b, "{\"format\": \"%s\", \"updated\": ", CNT_SHARDMAP_FORMAT);

	rc |= put_time(b, m->updated_ms == INT64_MIN ? 0 : m->updated_ms);
	rc |= cnt_buf_printf(b, ", \"events\": %llu, \"keys\": [", (unsigned long long)m->events);
	for (size_t i = 0; i < m->nkeys && rc == 0; i++) {
		const cnt_shardmap_key *k = &m->keys[i];

		rc |= cnt_buf_printf(b, "%s\n  {\"tenant_id\": ", i ? "," : "");
		rc |= put_str(b, k->tenant);
		rc |= cnt_buf_printf(b, ", \"counter_id\": ");
		rc |= put_str(b, k->counter);
		rc |= cnt_buf_printf(b, ", \"member_ref\": ");
		rc |= put_str(b, k->member);
		rc |= cnt_buf_printf(b, ", \"shards\": %u, \"share\": %.6f, \"history\": [", k->shards, k->share);
		for (size_t j = 0; j < k->nhistory; j++) {
			const cnt_shardmap_change *h = &k->history[j];

			rc |= cnt_buf_printf(b, "%s{\"at\": ", j ? ", " : "");
			rc |= put_time(b, h->at_ms);
			rc |= cnt_buf_printf(b, ", \"from\": %u, \"to\": %u, \"share\": %.6f}", h->from, h->to, h->share);
		}
		rc |= cnt_buf_printf(b, "]}");
	}
	rc |= cnt_buf_printf(b, "%s]}\n", m->nkeys ? "\n" : "");
	return rc ? cnt_err_nomem(err) : 0;
}

/* ---- observations ---- */

cnt_shardmap_obs *cnt_shardmap_obs_new(cnt_err *err)
{
	cnt_shardmap_obs *o = calloc(1, sizeof(*o));

	if (o == NULL)
		cnt_err_nomem(err);
	return o;
}

void cnt_shardmap_obs_free(cnt_shardmap_obs *o)
{
	if (o == NULL)
		return;
	for (size_t i = 0; i < o->n; i++) {
		free_slice(o->keys[i].tenant);
		free_slice(o->keys[i].counter);
		free_slice(o->keys[i].member);
	}
	free(o->keys);
	free(o);
}

uint64_t cnt_shardmap_obs_events(const cnt_shardmap_obs *o) { return o->events; }

static int obs_cmp(const void *a, const void *b)
{
	const obs_key *x = a, *y = b;

	return key_cmp(x->tenant, x->counter, x->member, y->tenant, y->counter, y->member);
}

static int obs_add_parsed(cnt_shardmap_obs *o, json_t *root, const pctx *c)
{
	json_t *out, *tk;
	uint64_t add;

	if (!json_is_object(root))
		return bad(c, "$", "not a JSON object");
	if ((out = need_member(c, root, "$", "out", JSON_INTEGER)) == NULL ||
	    (tk = need_member(c, root, "$", "top_keys", JSON_ARRAY)) == NULL)
		return -1;
	if (json_integer_value(out) < 0)
		return bad(c, "$.out", "negative");
	add = (uint64_t)json_integer_value(out);
	for (size_t i = 0; i < json_array_size(tk); i++) {
		json_t *e = json_array_get(tk, i), *ev;
		char path[64];
		obs_key k;

		snprintf(path, sizeof(path), "$.top_keys[%zu]", i);
		if (!json_is_object(e))
			return bad(c, path, "not an object");
		if ((ev = need_member(c, e, path, "events", JSON_INTEGER)) == NULL)
			return -1;
		if (json_integer_value(ev) < 0 || (uint64_t)json_integer_value(ev) > add)
			return bad(c, path, "\"events\" is not from 0 to \"out\"");
		if (o->n == o->cap) {
			size_t cap = o->cap ? 2 * o->cap : 64;
			obs_key *p = realloc(o->keys, cap * sizeof(*p));

			if (p == NULL)
				return cnt_err_nomem(c->err);
			o->keys = p;
			o->cap = cap;
		}
		memset(&k, 0, sizeof(k));
		k.events = (uint64_t)json_integer_value(ev);
		if (get_id(c, e, path, "tenant_id", &k.tenant) != 0 || get_id(c, e, path, "counter_id", &k.counter) != 0 ||
		    get_id(c, e, path, "member_ref", &k.member) != 0) {
			free_slice(k.tenant);
			free_slice(k.counter);
			return -1;
		}
		o->keys[o->n++] = k;
	}
	o->events += add;
	return 0;
}

int cnt_shardmap_obs_add(cnt_shardmap_obs *o, const char *text, size_t n, const char *name, cnt_err *err)
{
	pctx c = {name, err};
	json_error_t je;
	json_t *root = cnt_json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
	int rc;

	if (root == NULL && cnt_json_oom(&je))
		return cnt_err_oom(err, "reading stats '%s'", name);
	if (root == NULL)
		return cnt_err_set(err, "stats '%s': line %d, column %d: %s", name, je.line, je.column, je.text);
	rc = obs_add_parsed(o, root, &c);
	json_decref(root);
	if (rc != 0 && err && strncmp(err->msg, "shard map '", 11) == 0) {
		/* the messages name a stats file, not a map */
		char tmp[sizeof(err->msg)];

		snprintf(tmp, sizeof(tmp), "stats '%s", err->msg + 11);
		memcpy(err->msg, tmp, sizeof(tmp));
	}
	return rc;
}

int cnt_shardmap_obs_load(cnt_shardmap_obs *o, const char *path, cnt_err *err)
{
	cnt_buf b = CNT_BUF_INIT;
	int rc = slurp("stats", path, &b, err);

	if (rc == 0)
		rc = cnt_shardmap_obs_add(o, (const char *)b.p, b.len, path, err);
	cnt_buf_release(&b);
	return rc;
}

/* Sorts the observations and sums the repeats of a key into one. */
static void obs_merge(cnt_shardmap_obs *o)
{
	size_t j = 0;

	if (o->n == 0)
		return;
	qsort(o->keys, o->n, sizeof(*o->keys), obs_cmp);
	for (size_t i = 1; i < o->n; i++) {
		if (obs_cmp(&o->keys[j], &o->keys[i]) == 0) {
			o->keys[j].events += o->keys[i].events;
			free_slice(o->keys[i].tenant);
			free_slice(o->keys[i].counter);
			free_slice(o->keys[i].member);
		} else {
			o->keys[++j] = o->keys[i];
		}
	}
	o->n = j + 1;
}

/* ---- derivation ---- */

uint32_t cnt_shardmap_need(double share, const cnt_shardmap_policy *p)
{
	uint32_t s = 1;

	while (s < p->max_shards && share > (double)s * p->target)
		s <<= 1;
	return s;
}

static int append_change(cnt_shardmap_key *k, int64_t now, uint32_t to, double share)
{
	cnt_shardmap_change *h;

	if (k->nhistory >= CNT_SHARDMAP_MAX_HISTORY) {
		/* the oldest changes go: down to one whose "to" is not 1, which
		 * then starts the chain from 1 (a change to 1 would be none) */
		size_t drop = 1;

		while (drop < k->nhistory && k->history[drop].to == 1)
			drop++;
		if (drop == k->nhistory)
			drop--;       /* every remaining one ends at 1: keep the last */
		memmove(k->history, k->history + drop, (k->nhistory - drop) * sizeof(*h));
		k->nhistory -= drop;
		k->history[0].from = 1;
	}
	if ((h = realloc(k->history, (k->nhistory + 1) * sizeof(*h))) == NULL)
		return -1;
	k->history = h;
	h[k->nhistory].at_ms = now;
	h[k->nhistory].from = k->shards;
	h[k->nhistory].to = to;
	h[k->nhistory].share = share;
	k->nhistory++;
	k->shards = to;
	return 0;
}

int cnt_shardmap_derive(cnt_shardmap *m, cnt_shardmap_obs *o, const cnt_shardmap_policy *p,
	int64_t now, cnt_shardmap_summary *sum, cnt_err *err)
{
	cnt_shardmap_key *nk;
	size_t i = 0, j = 0, n = 0;

	memset(sum, 0, sizeof(*sum));
	if (!(p->target > 0 && p->target <= 1) || !(p->merge_ratio > 0 && p->merge_ratio <= 0.5) ||
	    p->hold_ms < 0 || !is_pow2(p->max_shards))
		return cnt_err_set(err, "shard map policy out of range");
	if (m->updated_ms != INT64_MIN && now <= m->updated_ms) {
		char t[32];

		cnt_time_format_rfc3339(m->updated_ms, t);
		return cnt_err_set(err, "--now is not after the map's last update (%s)", t);
	}
	obs_merge(o);
	if ((nk = calloc(m->nkeys + o->n + 1, sizeof(*nk))) == NULL)
		return cnt_err_nomem(err);
	/* walk the map's keys and the observed keys in order, side by side */
	while (i < m->nkeys || j < o->n) {
		int c = i == m->nkeys ? 1 : j == o->n ? -1 :
			key_cmp(m->keys[i].tenant, m->keys[i].counter, m->keys[i].member,
				o->keys[j].tenant, o->keys[j].counter, o->keys[j].member);
		uint64_t ev = c >= 0 ? o->keys[j].events : 0;
		double share = o->events ? (double)ev / (double)o->events : 0;
		uint32_t need = cnt_shardmap_need(share, p);
		cnt_shardmap_key k;

		if (c <= 0) {
			k = m->keys[i];          /* moved; the old array is emptied below */
			memset(&m->keys[i], 0, sizeof(m->keys[i]));
			i++;
		} else {
			if (need == 1) {         /* not hot, not mapped: stays out */
				j++;
				continue;
			}
			memset(&k, 0, sizeof(k));
			k.shards = 1;
			if (dup_slice(&k.tenant, o->keys[j].tenant.p, o->keys[j].tenant.n) != 0 ||
			    dup_slice(&k.counter, o->keys[j].counter.p, o->keys[j].counter.n) != 0 ||
			    dup_slice(&k.member, o->keys[j].member.p, o->keys[j].member.n) != 0) {
				key_release(&k);
				goto nomem;
			}
		}
		if (c >= 0)
			j++;
		k.share = share;
		if (need > k.shards) {
			if (append_change(&k, now, need, share) != 0)
				goto nomem_k;
			sum->splits++;
		} else if (need < k.shards && share < (double)k.shards * p->target * p->merge_ratio &&
			   (k.nhistory == 0 || now - k.history[k.nhistory - 1].at_ms >= p->hold_ms)) {
			if (append_change(&k, now, need, share) != 0)
				goto nomem_k;
			sum->merges++;
		}
		nk[n++] = k;
		if (k.shards > 1)
			sum->hot++;
		continue;
nomem_k:
		nk[n++] = k;
		goto nomem;
	}
	free(m->keys);
	m->keys = nk;
	m->nkeys = n;
	m->updated_ms = now;
	m->events = o->events;
	sum->keys = n;
	return build_index(m, err);
nomem:
	/* m is emptied: the caller can only free it */
	for (size_t a = 0; a < n; a++)
		key_release(&nk[a]);
	free(nk);
	for (size_t a = 0; a < m->nkeys; a++)
		key_release(&m->keys[a]);
	m->nkeys = 0;
	return cnt_err_nomem(err);
}
