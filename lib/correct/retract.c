/*
 * retract.c - compensating events, the retraction ledger, and rebuilding
 * the buckets a retraction touches (see retract.h).
 */
#include "correct/retract.h"
#include "base/jsonload.h"
#include "count/rollup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <xxhash.h>

#include "avro/json.h"
#include "base/outfile.h"
#include "correct/ledger.h"
#include "count/accum.h"
#include "count/window.h"
#include "model/bucket.h"
#include "model/event.h"
#include "time/timefmt.h"

static const char *const causes[] = {"deleted", "banned", "dq", "fraud"};

int cnt_retract_cause_ok(const char *s)
{
	for (size_t i = 0; i < sizeof(causes) / sizeof(causes[0]); i++)
		if (strcmp(s, causes[i]) == 0)
			return 1;
	return 0;
}

const char *cnt_retract_scope_name(cnt_retract_scope s)
{
	return s == CNT_SCOPE_EVENT ? "event" : s == CNT_SCOPE_MEMBER ? "member" : "campaign";
}

int cnt_retract_scope_parse(const char *name, cnt_retract_scope *s)
{
	for (int i = CNT_SCOPE_EVENT; i <= CNT_SCOPE_CAMPAIGN; i++)
		if (strcmp(name, cnt_retract_scope_name((cnt_retract_scope)i)) == 0) {
			*s = (cnt_retract_scope)i;
			return 0;
		}
	return -1;
}

static int add_key(char ***keys, size_t *n, const char *p, size_t len)
{
	char **v = realloc(*keys, (*n + 1) * sizeof(*v));
	char *k = malloc(len + 1);

	if (v)
		*keys = v;
	if (v == NULL || k == NULL) {
		free(k);
		return -1;
	}
	memcpy(k, p, len);
	k[len] = 0;
	v[(*n)++] = k;
	return 0;
}

int cnt_retract_keys_read(int fd, const char *name, char ***keys, size_t *n, cnt_err *err)
{
	cnt_buf all = CNT_BUF_INIT;
	char buf[65536];
	size_t off = 0;
	int rc = -1;

	for (;;) {
		ssize_t got = read(fd, buf, sizeof(buf));

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			cnt_err_set(err, "cannot read '%s': %s", name, strerror(errno));
			goto out;
		}
		if (got == 0)
			break;
		if (cnt_buf_append(&all, buf, (size_t)got) != 0) {
			cnt_err_nomem(err);
			goto out;
		}
	}
	while (off < all.len) {
		const char *line = (const char *)all.p + off;
		const char *nl = memchr(line, '\n', all.len - off);
		size_t len = nl ? (size_t)(nl - line) : all.len - off;

		off += len + (nl != NULL);
		if (len > 0 && line[len - 1] == '\r')
			len--;
		if (len > 0 && add_key(keys, n, line, len) != 0) {
			cnt_err_nomem(err);
			goto out;
		}
	}
	rc = 0;
out:
	cnt_buf_release(&all);
	return rc;
}

static cnt_fp fp_str(const char *p, size_t n)
{
	const void *parts[1] = {p};
	size_t lens[1] = {n};

	return cnt_fp_of(1, parts, lens);
}

/* ---- the ledger ---- */

/* Adds the event ids of one array to done.  0 or -1. */
static int add_ids(json_t *ids, const char *name, size_t lineno, cnt_fpset *done, cnt_err *err)
{
	if (!json_is_array(ids))
		return cnt_err_set(err, "ledger '%s' line %zu: no event_ids", name, lineno);
	for (size_t i = 0; i < json_array_size(ids); i++) {
		json_t *v = json_array_get(ids, i);
		uint64_t old;

		if (!json_is_string(v))
			return cnt_err_set(err, "ledger '%s' line %zu: an event id is not a string", name, lineno);
		if (cnt_fpset_add(done, fp_str(json_string_value(v), json_string_length(v)), 1, &old) < 0)
			return cnt_err_nomem(err);
	}
	return 0;
}

/* The event ids a record lists: a retraction's "event_ids", an erasure's
 * "event_ids" of each of its "segments" (erase.h). */
static int record_ids(json_t *rec, const char *name, size_t lineno, cnt_fpset *done, cnt_err *err)
{
	json_t *kind = json_object_get(rec, "kind"), *segs;

	if (kind == NULL)
		return add_ids(json_object_get(rec, "event_ids"), name, lineno, done, err);
	if (!json_is_string(kind) || strcmp(json_string_value(kind), "erasure") != 0)
		return cnt_err_set(err, "ledger '%s' line %zu: a record of an unknown kind", name, lineno);
	segs = json_object_get(rec, "segments");
	if (!json_is_array(segs))
		return cnt_err_set(err, "ledger '%s' line %zu: an erasure without segments", name, lineno);
	for (size_t i = 0; i < json_array_size(segs); i++)
		if (add_ids(json_object_get(json_array_get(segs, i), "event_ids"), name, lineno, done, err) != 0)
			return -1;
	return 0;
}

/* The walk's callback: one retraction record's event ids into done. */
typedef struct ids_ctx {
	const char *name;
	cnt_fpset *done;
} ids_ctx;

static int on_record(void *ctx, json_t *rec, size_t lineno, const char *line, size_t len, cnt_err *err)
{
	ids_ctx *c = ctx;

	(void)line;
	(void)len;
	return record_ids(rec, c->name, lineno, c->done, err);
}

int cnt_retract_ledger_load(int fd, const char *name, cnt_fpset *done, cnt_fp *last, cnt_err *err)
{
	cnt_buf all = CNT_BUF_INIT;
	ids_ctx c = {name, done};
	size_t lines;
	int rc;

	/* the same walk as every hash-chained ledger: one reader, one set
	 * of messages (ledger.h) */
	rc = cnt_ledger_slurp(fd, name, &all, err) != 0 ||
		cnt_ledger_walk(all.p, all.len, "ledger", name, on_record, &c, last, &lines, err) != 0 ? -1 : 0;
	cnt_buf_release(&all);
	return rc;
}

/* ---- selection ---- */

static int slice_is(cnt_slice s, const char *z)
{
	return z == NULL || (strlen(z) == s.n && memcmp(s.p, z, s.n) == 0);
}

/* Which key names e (index), -1 for none; -2 when there are no keys.
 * kidx maps the fingerprint of each key to its first index, so that a
 * long key list (cnt-audit retracts every view it flags by event id)
 * costs two lookups an event, not a pass over the list; the first key
 * naming e, by event id or idempotency key, wins, as in the list. */
static long key_of(const cnt_retract_sel *sel, const cnt_fpset *kidx, const cnt_event *e)
{
	uint64_t i1 = UINT64_MAX, i2 = UINT64_MAX;

	if (sel->nkeys == 0)
		return -2;
	if (cnt_fpset_find(kidx, fp_str(e->event_id.p, e->event_id.n), &i1) && !slice_is(e->event_id, sel->keys[i1]))
		i1 = UINT64_MAX;
	if (slice_is(e->tenant_id, sel->tenant) && slice_is(e->counter_id, sel->counter) &&
	    cnt_fpset_find(kidx, fp_str(e->idempotency_key.p, e->idempotency_key.n), &i2) &&
	    !slice_is(e->idempotency_key, sel->keys[i2]))
		i2 = UINT64_MAX;
	if (i1 == UINT64_MAX && i2 == UINT64_MAX)
		return -1;
	return (long)(i1 < i2 ? i1 : i2);
}

static int attrs_match(const cnt_retract_sel *sel, const cnt_event *e)
{
	for (size_t i = 0; i < sel->nattrs; i++) {
		int ok = 0;

		for (size_t j = 0; j < e->nattrs && !ok; j++)
			ok = slice_is(e->attr_keys[j], sel->attr_k[i]) && slice_is(e->attr_vals[j], sel->attr_v[i]);
		if (!ok)
			return 0;
	}
	return 1;
}

static int selected(const cnt_retract_sel *sel, const cnt_fpset *kidx, const cnt_event *e, long *key)
{
	*key = key_of(sel, kidx, e);
	if (*key == -1)
		return 0;
	if (*key == -2 && (!slice_is(e->tenant_id, sel->tenant) || !slice_is(e->counter_id, sel->counter)))
		return 0;
	if (!slice_is(e->member_ref, sel->member))
		return 0;
	if ((sel->has_from && e->event_time < sel->from) || (sel->has_to && e->event_time >= sel->to))
		return 0;
	return attrs_match(sel, e);
}

/* ---- the run ---- */

typedef struct cand {
	size_t off, len;      /* encoded event in the candidates' buffer */
} cand;

int cnt_retract_ledger_append(int fd, const char *name, const char *line, cnt_err *err)
{
	/* One write of the whole line at the end of the file (O_APPEND),
	 * then fsync: a reader sees the line whole or not at all. */
	return cnt_append_durable(fd, name, "ledger", line, err);
}

/* A malloc'd copy of s with a NUL after it, or NULL. */
static char *dup_slice(cnt_slice s)
{
	char *p = malloc(s.n + 1);

	if (p) {
		memcpy(p, s.p, s.n);
		p[s.n] = 0;
	}
	return p;
}

static int same(const char *a, size_t an, cnt_slice b)
{
	return an == b.n && memcmp(a, b.p, an) == 0;
}

int cnt_retract_ctrs_add(cnt_retract_ctrs *s, cnt_slice t, cnt_slice c)
{
	size_t n = s->n;
	cnt_retract_ctr *v;

	for (size_t k = 0; k < n; k++) {
		size_t i = (s->last + k) % n;

		if (same(s->v[i].tenant, s->v[i].tn, t) && same(s->v[i].counter, s->v[i].cn, c)) {
			s->last = i;
			return 0;
		}
	}
	if ((v = realloc(s->v, (n + 1) * sizeof(*v))) == NULL)
		return -1;
	s->v = v;
	v[n].tenant = dup_slice(t);
	v[n].counter = dup_slice(c);
	v[n].tn = t.n;
	v[n].cn = c.n;
	if (v[n].tenant == NULL || v[n].counter == NULL) {
		free(v[n].tenant);
		free(v[n].counter);
		return -1;
	}
	s->last = n;
	s->n = n + 1;
	return 0;
}

void cnt_retract_ctrs_release(cnt_retract_ctrs *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].tenant);
		free(s->v[i].counter);
	}
	free(s->v);
	*s = (cnt_retract_ctrs){0};
}

/* Byte order of two names of a and b bytes. */
static int name_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	int d = memcmp(a, b, an < bn ? an : bn);

	return d ? d : (an > bn) - (an < bn);
}

json_t *cnt_retract_ctrs_json(const cnt_retract_ctrs *s)
{
	json_t *a = json_array();
	size_t *ord = malloc((s->n + 1) * sizeof(*ord));

	if (a == NULL || ord == NULL)
		goto nomem;
	for (size_t i = 0; i < s->n; i++) {
		size_t j = i;

		/* insertion sort: a handful of pairs */
		for (; j > 0; j--) {
			size_t p = ord[j - 1];
			const cnt_retract_ctr *x = &s->v[p], *y = &s->v[i];
			int d = name_cmp(x->tenant, x->tn, y->tenant, y->tn);

			if (d < 0 || (d == 0 && name_cmp(x->counter, x->cn, y->counter, y->cn) < 0))
				break;
			ord[j] = p;
		}
		ord[j] = i;
	}
	for (size_t i = 0; i < s->n; i++) {
		json_t *o = json_object();
		size_t k = ord[i];

		if (o == NULL || json_array_append_new(a, o) != 0 ||
		    json_object_set_new(o, "tenant_id", json_stringn(s->v[k].tenant, s->v[k].tn)) != 0 ||
		    json_object_set_new(o, "counter_id", json_stringn(s->v[k].counter, s->v[k].cn)) != 0)
			goto nomem;
	}
	free(ord);
	return a;
nomem:
	free(ord);
	json_decref(a);
	return NULL;
}

/* The record's line, newline included, into *out (malloc'd). */
static int ledger_line(const cnt_retract_req *req, const char *rid,
	const cnt_retract_sel *sel, json_t *ids, const cnt_retract_ctrs *ctrs, cnt_fp prev, char **out,
	cnt_err *err)
{
	json_t *rec = json_object(), *selj = json_object(), *cj = cnt_retract_ctrs_json(ctrs);
	char tbuf[32], ph[33];
	char *text = NULL;
	cnt_buf line = CNT_BUF_INIT;
	int rc = -1;

	if (rec == NULL || selj == NULL || cj == NULL)
		goto nomem;
	cnt_time_format_rfc3339(req->created_at, tbuf);
	cnt_ledger_hex(prev, ph);
	if (sel->tenant && json_object_set_new(selj, "tenant_id", json_string(sel->tenant)))
		goto nomem;
	if (sel->counter && json_object_set_new(selj, "counter_id", json_string(sel->counter)))
		goto nomem;
	if (sel->member && json_object_set_new(selj, "member_ref", json_string(sel->member)))
		goto nomem;
	if (sel->has_from && json_object_set_new(selj, "from", json_integer(sel->from)))
		goto nomem;
	if (sel->has_to && json_object_set_new(selj, "to", json_integer(sel->to)))
		goto nomem;
	if (sel->nattrs) {
		json_t *a = json_object();

		if (a == NULL || json_object_set_new(selj, "attrs", a))
			goto nomem;
		for (size_t i = 0; i < sel->nattrs; i++)
			if (json_object_set_new(a, sel->attr_k[i], json_string(sel->attr_v[i])))
				goto nomem;
	}
	if (json_object_set_new(rec, "retraction_id", json_string(rid)) ||
	    json_object_set_new(rec, "cause", json_string(req->cause)) ||
	    json_object_set_new(rec, "requested_by", json_string(req->requester)) ||
	    json_object_set_new(rec, "authority", json_string(req->authority)) ||
	    json_object_set_new(rec, "scope", json_string(cnt_retract_scope_name(sel->scope))) ||
	    json_object_set(rec, "selector", selj) ||
	    json_object_set(rec, "event_ids", ids) ||
	    json_object_set(rec, "counters", cj) ||
	    json_object_set_new(rec, "created_at", json_string(tbuf)) ||
	    json_object_set_new(rec, "prev", json_string(ph)))
		goto nomem;
	text = cnt_json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	if (text == NULL || cnt_buf_append(&line, text, strlen(text)) != 0 || cnt_buf_putc(&line, '\n') != 0 ||
	    cnt_buf_putc(&line, 0) != 0)
		goto nomem;
	*out = (char *)line.p;
	line.p = NULL;
	rc = 0;
	goto out;
nomem:
	cnt_err_nomem(err);
out:
	free(text);
	json_decref(rec);
	json_decref(selj);
	json_decref(cj);
	cnt_buf_release(&line);
	return rc;
}

int cnt_retract_record_line(const cnt_retract_req *req, const char *retraction_id,
	const cnt_retract_sel *sel, const char *const *ids, size_t n, const cnt_retract_ctrs *ctrs,
	cnt_fp prev, char **line, cnt_err *err)
{
	json_t *arr = json_array();
	int rc;

	if (arr == NULL)
		return cnt_err_nomem(err);
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(arr, json_string(ids[i])) != 0) {
			json_decref(arr);
			return cnt_err_nomem(err);
		}
	rc = ledger_line(req, retraction_id, sel, arr, ctrs, prev, line, err);
	json_decref(arr);
	return rc;
}

int cnt_retract_derive_id(const cnt_retract_req *req, const char *const *ids, size_t n, char out[40])
{
	XXH3_state_t *hs = XXH3_createState();
	XXH128_hash_t h;
	cnt_fp fp;
	char hx[33];

	if (hs == NULL)
		return -1;
	XXH3_128bits_reset(hs);
	XXH3_128bits_update(hs, req->cause, strlen(req->cause) + 1);
	XXH3_128bits_update(hs, req->requester, strlen(req->requester) + 1);
	XXH3_128bits_update(hs, req->authority, strlen(req->authority) + 1);
	XXH3_128bits_update(hs, &req->created_at, sizeof(req->created_at));
	for (size_t i = 0; i < n; i++)
		XXH3_128bits_update(hs, ids[i], strlen(ids[i]) + 1);
	h = XXH3_128bits_digest(hs);
	XXH3_freeState(hs);
	fp.hi = h.high64;
	fp.lo = h.low64;
	cnt_ledger_hex(fp, hx);
	snprintf(out, 40, "r-%s", hx);
	return 0;
}

/* Why the event e cannot be retracted, or NULL when it can.  The ledger
 * names its event id, tenant and counter in JSON strings, which hold
 * UTF-8 and whose readers take no NUL (cnt-retraction(5)): a segment no
 * tool admitted could otherwise make the record unwritable, or write a
 * line that makes the whole ledger unreadable. */
static const char *unretractable(const cnt_event *e)
{
	if (e->delta == INT64_MIN)
		return "delta -9223372036854775808 cannot be negated; not retracted";
	if (!cnt_json_text_ok(e->event_id.p, e->event_id.n))
		return "its event_id is not UTF-8 text without NUL bytes, which the ledger cannot name; not retracted";
	if (!cnt_json_text_ok(e->tenant_id.p, e->tenant_id.n))
		return "its tenant_id is not UTF-8 text without NUL bytes, which the ledger cannot name; not retracted";
	if (!cnt_json_text_ok(e->counter_id.p, e->counter_id.n))
		return "its counter_id is not UTF-8 text without NUL bytes, which the ledger cannot name; not retracted";
	return NULL;
}

int cnt_retract_run(const int *fds, const char *const *names, size_t n,
	const cnt_retract_sel *sel, const cnt_retract_req *req,
	int ledger_fd, const char *ledger_name, cnt_writer *out,
	void (*note)(void *ctx, cnt_slice key, const char *why), void *ctx,
	cnt_retract_result *res, cnt_err *err)
{
	cnt_fpset done, seen, kidx;
	cnt_fp last = {0, 0};
	cnt_buf cbuf = CNT_BUF_INIT, enc = CNT_BUF_INIT;
	cand *cands = NULL;
	size_t ncands = 0, ccands = 0;
	unsigned char *found = NULL;
	json_t *ids = NULL;
	cnt_retract_ctrs ctrs = {0};
	cnt_attrs_buf ab = {0};
	cnt_limits lim = cnt_limits_default();
	XXH3_state_t *hs = NULL;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	if (cnt_fpset_init(&done, 1024) != 0)
		return cnt_err_nomem(err);
	if (cnt_fpset_init(&seen, 1024) != 0) {
		cnt_fpset_release(&done);
		return cnt_err_nomem(err);
	}
	if (cnt_fpset_init(&kidx, sel->nkeys ? sel->nkeys : 1) != 0) {
		cnt_fpset_release(&done);
		cnt_fpset_release(&seen);
		return cnt_err_nomem(err);
	}
	for (size_t i = 0; i < sel->nkeys; i++) {
		uint64_t old;

		if (cnt_fpset_add(&kidx, fp_str(sel->keys[i], strlen(sel->keys[i])), i, &old) < 0) {
			cnt_err_nomem(err);
			goto out;
		}
	}
	if ((sel->nkeys && (found = calloc(sel->nkeys, 1)) == NULL) || (ids = json_array()) == NULL ||
	    (hs = XXH3_createState()) == NULL) {
		cnt_err_nomem(err);
		goto out;
	}
	if (ledger_fd >= 0 && cnt_retract_ledger_load(ledger_fd, ledger_name, &done, &last, err) != 0)
		goto out;

	/* One pass over the log: the compensations already there, and the
	 * events selected (kept encoded until the whole log is read). */
	for (size_t i = 0; i < n; i++) {
		cnt_event_in *in = cnt_event_in_open(fds[i], names[i], &lim, err);
		cnt_event e;
		int got;
		long k;

		if (in == NULL)
			goto out;
		while ((got = cnt_event_in_next(in, &e, err)) > 0) {
			uint64_t old;

			res->in++;
			if (e.retracts.p) {
				if (cnt_fpset_add(&done, fp_str(e.retracts.p, e.retracts.n), 1, &old) < 0) {
					cnt_event_in_free(in);
					cnt_err_nomem(err);
					goto out;
				}
				continue;
			}
			if (!selected(sel, &kidx, &e, &k))
				continue;
			if (k >= 0)
				found[k] = 1;
			if (ncands == ccands) {
				size_t c = ccands ? ccands * 2 : 64;
				cand *v = realloc(cands, c * sizeof(*v));

				if (v == NULL) {
					cnt_event_in_free(in);
					cnt_err_nomem(err);
					goto out;
				}
				cands = v;
				ccands = c;
			}
			cands[ncands].off = cbuf.len;
			if (cnt_event_encode(&e, &cbuf) != 0) {
				cnt_event_in_free(in);
				cnt_err_nomem(err);
				goto out;
			}
			cands[ncands].len = cbuf.len - cands[ncands].off;
			ncands++;
		}
		cnt_event_in_free(in);
		if (got < 0)
			goto out;
	}
	for (size_t i = 0; i < sel->nkeys; i++)
		if (!found[i]) {
			res->not_found++;
			if (note)
				note(ctx, (cnt_slice){sel->keys[i], strlen(sel->keys[i])}, "not in the log");
		}

	/* The retracted set decides the id, so it is known before writing. */
	XXH3_128bits_reset(hs);
	XXH3_128bits_update(hs, req->cause, strlen(req->cause) + 1);
	XXH3_128bits_update(hs, req->requester, strlen(req->requester) + 1);
	XXH3_128bits_update(hs, req->authority, strlen(req->authority) + 1);
	XXH3_128bits_update(hs, &req->created_at, sizeof(req->created_at));
	for (int pass = 0; pass < 2; pass++) {
		cnt_fpset_release(&seen);
		if (cnt_fpset_init(&seen, 1024) != 0) {
			cnt_err_nomem(err);
			goto out;
		}
		if (pass == 1) {
			XXH128_hash_t h = XXH3_128bits_digest(hs);
			cnt_fp fp = {h.high64, h.low64};
			char hx[33];

			if (req->retraction_id)
				snprintf(res->retraction_id, sizeof(res->retraction_id), "%.39s", req->retraction_id);
			else {
				cnt_ledger_hex(fp, hx);
				snprintf(res->retraction_id, sizeof(res->retraction_id), "r-%s", hx);
			}
		}
		for (size_t i = 0; i < ncands; i++) {
			cnt_cur c = {cbuf.p + cands[i].off, cbuf.p + cands[i].off + cands[i].len};
			cnt_event e, comp;
			cnt_fp efp;
			uint64_t old;
			char idem[48], newid[33];
			const void *parts[3];
			size_t lens[3];
			int fresh;
			const char *why;

			if (cnt_event_decode(&c, &e, &ab, &lim, err) != 0)
				goto out;
			efp = fp_str(e.event_id.p, e.event_id.n);
			if (cnt_fpset_find(&done, efp, &old)) {
				if (pass == 1)
					res->already++;
				continue;
			}
			if ((fresh = cnt_fpset_add(&seen, efp, 1, &old)) < 0) {
				cnt_err_nomem(err);
				goto out;
			}
			if (fresh == 0)
				continue;   /* the same event twice in the log */
			if ((why = unretractable(&e)) != NULL) {
				if (pass == 1) {
					res->refused++;
					if (note)
						note(ctx, e.event_id, why);
				}
				continue;
			}
			if (pass == 0) {
				XXH3_128bits_update(hs, e.event_id.p, e.event_id.n);
				XXH3_128bits_update(hs, "", 1);
				continue;
			}
			comp = e;
			snprintf(idem, sizeof(idem), "retract:%.*s", (int)(e.event_id.n > 32 ? 32 : e.event_id.n), e.event_id.p);
			parts[0] = e.tenant_id.p;
			lens[0] = e.tenant_id.n;
			parts[1] = e.counter_id.p;
			lens[1] = e.counter_id.n;
			parts[2] = idem;
			lens[2] = strlen(idem);
			cnt_ledger_hex(cnt_fp_of(3, parts, lens), newid);
			comp.event_id.p = newid;
			comp.event_id.n = 32;
			comp.idempotency_key.p = idem;
			comp.idempotency_key.n = strlen(idem);
			comp.delta = -e.delta;
			comp.retracts = e.event_id;
			comp.retraction_id.p = res->retraction_id;
			comp.retraction_id.n = strlen(res->retraction_id);
			if (cnt_event_encode(&comp, cnt_writer_buf(out)) != 0) {
				cnt_err_nomem(err);
				goto out;
			}
			if (cnt_writer_commit(out, err) != 0)
				goto out;
			if (json_array_append_new(ids, json_stringn(e.event_id.p, e.event_id.n)) != 0 ||
			    cnt_retract_ctrs_add(&ctrs, e.tenant_id, e.counter_id) != 0) {
				cnt_err_nomem(err);
				goto out;
			}
			res->retracted++;
		}
	}
	res->matched = ncands;
	if (cnt_writer_finish(out, err) != 0)
		goto out;
	if (res->retracted > 0) {
		if (ledger_line(req, res->retraction_id, sel, ids, &ctrs, last, &res->ledger_line, err) != 0)
			goto out;
		res->ledger_records = 1;
	}
	rc = 0;
out:
	XXH3_freeState(hs);
	json_decref(ids);
	cnt_retract_ctrs_release(&ctrs);
	free(found);
	free(cands);
	cnt_buf_release(&cbuf);
	cnt_buf_release(&enc);
	cnt_attrs_buf_release(&ab);
	cnt_fpset_release(&done);
	cnt_fpset_release(&seen);
	cnt_fpset_release(&kidx);
	return rc;
}

/* ---- rebuilding touched buckets ---- */

static cnt_fp key_fp(const cnt_slice *t, const cnt_slice *c, int32_t v, const cnt_slice *m, int64_t bs, int32_t sh)
{
	const void *parts[6] = {t->p, c->p, &v, m->p, &bs, &sh};
	size_t lens[6] = {t->n, c->n, sizeof(v), m->n, sizeof(bs), sizeof(sh)};

	return cnt_fp_of(6, parts, lens);
}

typedef struct rb_pass {
	int which;           /* 0 retracted set, 1 touched keys, 2 recount */
	cnt_fpset *retracted, *touched;
	cnt_window *win;
	cnt_accum *acc;
	cnt_rebuild_result *res;
} rb_pass;

static int rb_event(rb_pass *p, const cnt_event *e, cnt_err *err)
{
	uint64_t old;
	cnt_windowed w;
	cnt_count_reject rej;
	int r;

	if (p->which == 0) {
		if (e->retracts.p && cnt_fpset_add(p->retracted, fp_str(e->retracts.p, e->retracts.n), 1, &old) == 1)
			p->res->retracted++;
		return 0;
	}
	if (e->retracts.p)
		return 0;
	if (p->which == 1 && !cnt_fpset_find(p->retracted, fp_str(e->event_id.p, e->event_id.n), &old))
		return 0;
	if (p->which == 2 && cnt_fpset_find(p->retracted, fp_str(e->event_id.p, e->event_id.n), &old))
		return 0;
	r = cnt_window_attribute(p->win, e, &w, &rej, err);
	if (r < 0)
		return -1;
	if (r > 0)
		return 0;   /* not counted by cnt-window either */
	{
		cnt_fp k = key_fp(&e->tenant_id, &e->counter_id, e->counter_version, &e->member_ref,
			w.bucket_start, w.shard);

		if (p->which == 1) {
			int a = cnt_fpset_add(p->touched, k, 1, &old);

			if (a < 0)
				return cnt_err_nomem(err);
			p->res->touched += (uint64_t)a;
			return 0;
		}
		if (!cnt_fpset_find(p->touched, k, &old))
			return 0;
	}
	p->res->rebuilt_events++;
	return cnt_accum_add_event(p->acc, &w, err);
}

int cnt_retract_rebuild(const int *fds, const char *const *names, size_t n,
	const cnt_defs *defs, const char *defs_name, uint32_t shards,
	int buckets_fd, const char *buckets_name, cnt_writer *out,
	cnt_rebuild_result *res, cnt_err *err)
{
	cnt_fpset retracted, touched;
	cnt_limits lim = cnt_limits_default();
	cnt_window *win = NULL;
	cnt_accum *acc = NULL;
	cnt_rollup_zones zones = {defs, NULL, defs_name};
	cnt_bucket_in bin;
	int bin_open = 0, rc = -1;
	rb_pass p;

	memset(res, 0, sizeof(*res));
	if (cnt_fpset_init(&retracted, 1024) != 0)
		return cnt_err_nomem(err);
	if (cnt_fpset_init(&touched, 1024) != 0) {
		cnt_fpset_release(&retracted);
		return cnt_err_nomem(err);
	}
	if ((win = cnt_window_new(defs, defs_name, shards, NULL, err)) == NULL ||
	    (acc = cnt_accum_new(cnt_accum_default_memory(), getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", err)) == NULL)
		goto out;
	p.retracted = &retracted;
	p.touched = &touched;
	p.win = win;
	p.acc = acc;
	p.res = res;
	for (p.which = 0; p.which < 3; p.which++)
		for (size_t i = 0; i < n; i++) {
			cnt_event_in *in;
			cnt_event e;
			int got;

			if (lseek(fds[i], 0, SEEK_SET) != 0) {
				cnt_err_set(err, "'%s': the log must be a file that can be read again: %s", names[i], strerror(errno));
				goto out;
			}
			if ((in = cnt_event_in_open(fds[i], names[i], &lim, err)) == NULL)
				goto out;
			while ((got = cnt_event_in_next(in, &e, err)) > 0)
				if (rb_event(&p, &e, err) != 0) {
					got = -1;
					break;
				}
			cnt_event_in_free(in);
			if (got < 0)
				goto out;
		}
	if (cnt_bucket_in_open(&bin, buckets_fd, buckets_name, &lim, err) != 0)
		goto out;
	bin_open = 1;
	if ((zones.tzc = cnt_tz_cache_new()) == NULL) {
		cnt_err_nomem(err);
		goto out;
	}
	for (;;) {
		cnt_bucket b;
		uint64_t old;
		int got = cnt_bucket_in_next(&bin, &b, err);

		if (got < 0)
			goto out;
		if (got == 0)
			break;
		if (cnt_fpset_find(&touched, key_fp(&b.tenant_id, &b.counter_id, b.counter_version, &b.member_ref,
				b.bucket_start, b.shard), &old)) {
			res->dropped++;
			continue;
		}
		res->kept++;
		if (cnt_accum_add_bucket(acc, &b, err) != 0)
			goto out;
	}
	/* A bucket file with day roll-ups is rebuilt with them (cnt-bucket(5)). */
	if (bin.saw_days && cnt_accum_days(acc, cnt_rollup_defs_zone, &zones, err) != 0)
		goto out;
	if (cnt_accum_finish(acc, out, err) != 0 || cnt_writer_finish(out, err) != 0)
		goto out;
	rc = 0;
out:
	if (zones.tzc)
		cnt_tz_cache_free(zones.tzc);
	if (bin_open)
		cnt_bucket_in_release(&bin);
	cnt_accum_free(acc);
	cnt_window_free(win);
	cnt_fpset_release(&retracted);
	cnt_fpset_release(&touched);
	return rc;
}
