/*
 * hold_decide.c - listing and deciding holds, the decisions ledger (see
 * hold_decide.h).
 */
#include "correct/hold_decide.h"
#include "base/jsonload.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <xxhash.h>

#include "avro/json.h"
#include "base/buf.h"
#include "base/fpset.h"
#include "base/text.h"
#include "correct/retract.h"
#include "model/held.h"
#include "time/timefmt.h"

static const char *const state_names[] = {"pending", "cleared", "rejected"};

const char *cnt_hold_state_name(cnt_hold_state s)
{
	return (unsigned)s < 3 ? state_names[s] : "?";
}

int cnt_hold_state_parse(const char *name, cnt_hold_state *s)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(name, state_names[i]) == 0) {
			*s = (cnt_hold_state)i;
			return 0;
		}
	return -1;
}

static cnt_fp fp_bytes(const void *p, size_t n)
{
	const void *parts[1] = {p};
	size_t lens[1] = {n};

	return cnt_fp_of(1, parts, lens);
}

static void hex128(XXH128_hash_t h, char out[33])
{
	static const char hx[] = "0123456789abcdef";

	for (int i = 0; i < 16; i++) {
		out[i] = hx[(h.high64 >> (60 - 4 * i)) & 15];
		out[16 + i] = hx[(h.low64 >> (60 - 4 * i)) & 15];
	}
	out[32] = 0;
}

static int slurp(int fd, const char *name, cnt_buf *all, cnt_err *err)
{
	char buf[65536];

	for (;;) {
		ssize_t got = read(fd, buf, sizeof(buf));

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return cnt_err_set(err, "cannot read '%s': %s", name, strerror(errno));
		if (got == 0)
			return 0;
		if (cnt_buf_append(all, buf, (size_t)got) != 0)
			return cnt_err_nomem(err);
	}
}

/* ---- the decisions ledger ---- */

struct cnt_decisions {
	cnt_fpset idx;          /* hold id -> index in recs */
	json_t **recs;
	size_t n;
	XXH128_hash_t last;     /* of the last line; zero when empty */
};

void cnt_decisions_free(cnt_decisions *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < d->n; i++)
		json_decref(d->recs[i]);
	free(d->recs);
	cnt_fpset_release(&d->idx);
	free(d);
}

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

cnt_decisions *cnt_decisions_load(int fd, const char *name, cnt_err *err)
{
	cnt_decisions *d = calloc(1, sizeof(*d));
	cnt_buf all = CNT_BUF_INIT;
	size_t off = 0, lineno = 0;

	if (d == NULL || cnt_fpset_init(&d->idx, 64) != 0) {
		free(d);
		cnt_err_nomem(err);
		return NULL;
	}
	if (slurp(fd, name, &all, err) != 0)
		goto fail;
	while (off < all.len) {
		const char *line = (const char *)all.p + off, *hid, *dec;
		const char *nl = memchr(line, '\n', all.len - off);
		char want[33];
		json_t *rec, **v;
		json_error_t je;
		uint64_t old;
		size_t n;
		int a;

		lineno++;
		if (nl == NULL) {
			cnt_err_set(err, "decisions ledger '%s' line %zu: no newline at the end (an interrupted append?)",
				name, lineno);
			goto fail;
		}
		n = (size_t)(nl - line);
		rec = cnt_json_loadb(line, n, JSON_REJECT_DUPLICATES, &je);
		if (rec == NULL && cnt_json_oom(&je)) {
			cnt_err_oom(err, "reading decisions ledger '%s'", name);
			goto fail;
		}
		hid = rec ? jstr(rec, "hold_id") : NULL;
		dec = rec ? jstr(rec, "decision") : NULL;
		if (!json_is_object(rec) || hid == NULL || dec == NULL || jstr(rec, "decided_by") == NULL ||
		    jstr(rec, "decided_at") == NULL || (strcmp(dec, "cleared") != 0 && strcmp(dec, "rejected") != 0)) {
			json_decref(rec);
			cnt_err_set(err, "decisions ledger '%s' line %zu: not a decision record", name, lineno);
			goto fail;
		}
		hex128(d->last, want);
		if (jstr(rec, "prev") == NULL || strcmp(jstr(rec, "prev"), want) != 0) {
			json_decref(rec);
			cnt_err_set(err, "decisions ledger '%s' line %zu: the hash chain is broken (\"prev\" is not "
				"the hash of line %zu)", name, lineno, lineno - 1);
			goto fail;
		}
		if ((v = realloc(d->recs, (d->n + 1) * sizeof(*v))) == NULL) {
			json_decref(rec);
			cnt_err_nomem(err);
			goto fail;
		}
		d->recs = v;
		d->recs[d->n] = rec;
		if ((a = cnt_fpset_add(&d->idx, fp_bytes(hid, strlen(hid)), d->n, &old)) < 0) {
			json_decref(rec);
			cnt_err_nomem(err);
			goto fail;
		}
		d->n++;
		if (a == 0) {
			cnt_err_set(err, "decisions ledger '%s' line %zu: hold '%.40s' is decided twice (first on line %zu)",
				name, lineno, hid, (size_t)old + 1);
			goto fail;
		}
		d->last = XXH3_128bits(line, n);
		off += n + 1;
	}
	cnt_buf_release(&all);
	return d;
fail:
	cnt_buf_release(&all);
	cnt_decisions_free(d);
	return NULL;
}

/* The decision of hold id, or NULL. */
static json_t *decision_of(const cnt_decisions *d, cnt_slice id)
{
	uint64_t i;

	if (d == NULL || !cnt_fpset_find(&d->idx, fp_bytes(id.p, id.n), &i))
		return NULL;
	return d->recs[i];
}

static cnt_hold_state state_of(json_t *rec)
{
	if (rec == NULL)
		return CNT_HOLD_PENDING;
	return strcmp(jstr(rec, "decision"), "cleared") == 0 ? CNT_HOLD_CLEARED : CNT_HOLD_REJECTED;
}

/* ---- selection ---- */

static int slice_is(cnt_slice s, const char *z)
{
	return z == NULL || (strlen(z) == s.n && memcmp(s.p, z, s.n) == 0);
}

/* Whether sel selects h (the state aside); *key the id that names it (-1
 * none, -2 no ids given). */
static int selected(const cnt_hold_sel *sel, const cnt_held *h, long *key)
{
	*key = sel->nids ? -1 : -2;
	for (size_t i = 0; i < sel->nids; i++)
		if (slice_is(h->hold_id, sel->ids[i]))
			*key = (long)i;
	if (*key == -1)
		return 0;
	return slice_is(h->e.tenant_id, sel->tenant) && slice_is(h->e.counter_id, sel->counter) &&
	       slice_is(h->e.member_ref, sel->member) && (!sel->has_signal || h->signal == sel->signal);
}

/* Reads every hold of the files once (a hold id seen before is skipped),
 * calling fn for each. */
static int each_hold(const int *fds, const char *const *names, size_t n,
	int (*fn)(void *ctx, cnt_held_in *in, const cnt_held *h, cnt_err *err), void *ctx,
	uint64_t *holds, cnt_err *err)
{
	cnt_fpset seen;
	int rc = -1;

	if (cnt_fpset_init(&seen, 256) != 0)
		return cnt_err_nomem(err);
	for (size_t i = 0; i < n; i++) {
		cnt_held_in *in = cnt_held_in_open(fds[i], names[i], err);
		cnt_held h;
		int got;

		if (in == NULL)
			goto out;
		while ((got = cnt_held_in_next(in, &h, err)) > 0) {
			uint64_t old;
			int a = cnt_fpset_add(&seen, fp_bytes(h.hold_id.p, h.hold_id.n), 1, &old);

			if (a < 0) {
				cnt_err_nomem(err);
				got = -1;
				break;
			}
			if (a == 0)
				continue;
			(*holds)++;
			if (fn(ctx, in, &h, err) != 0) {
				got = -1;
				break;
			}
		}
		cnt_held_in_free(in);
		if (got < 0)
			goto out;
	}
	rc = 0;
out:
	cnt_fpset_release(&seen);
	return rc;
}

/* ---- listing ---- */

typedef struct list_ctx {
	const cnt_decisions *d;
	const cnt_hold_sel *sel;
	int json;
	void (*line)(void *ctx, const char *text, size_t n);
	void *lctx;
	cnt_buf b;
	uint64_t listed;
	const char *head;
} list_ctx;

static int jslice(cnt_buf *b, const char *key, cnt_slice s)
{
	if (cnt_buf_printf(b, ",\"%s\":", key) != 0)
		return -1;
	if (s.p == NULL)
		return cnt_buf_append(b, "null", 4);
	return cnt_json_string(b, (const uint8_t *)s.p, s.n, 0);
}

/* Untrusted bytes for a table, by cnt_buf_shown's rule ("-" when empty),
 * padded to width columns and two spaces after. */
static int shown(cnt_buf *b, cnt_slice s, size_t width)
{
	long n = s.n ? cnt_buf_shown(b, s.p, s.n, SIZE_MAX) : cnt_buf_putc(b, '-') ? -1 : 1;

	if (n < 0)
		return -1;
	for (; (size_t)n < width; n++)
		if (cnt_buf_putc(b, ' ') != 0)
			return -1;
	return cnt_buf_append(b, "  ", 2);
}

static cnt_slice zs(const char *z)
{
	cnt_slice s = {z, z ? strlen(z) : 0};

	return s;
}

static int list_one(void *vctx, cnt_held_in *in, const cnt_held *h, cnt_err *err)
{
	list_ctx *c = vctx;
	json_t *rec = decision_of(c->d, h->hold_id);
	cnt_hold_state st = state_of(rec);
	char t1[32], t2[32];
	long key;
	int rc = 0;

	(void)in;
	if (!selected(c->sel, h, &key) || (c->sel->has_state && st != c->sel->state))
		return 0;
	c->b.len = 0;
	if (c->json) {
		const char *rid = rec ? jstr(rec, "retraction_id") : NULL;

		cnt_time_format_rfc3339(h->e.event_time, t1);
		cnt_time_format_rfc3339(h->held_at, t2);
		rc |= cnt_buf_putc(&c->b, '{') | cnt_buf_append(&c->b, "\"hold_id\":", 10) |
		      cnt_json_string(&c->b, (const uint8_t *)h->hold_id.p, h->hold_id.n, 0);
		rc |= cnt_buf_printf(&c->b, ",\"signal\":\"%s\"", cnt_defs_hold_name(h->signal));
		rc |= jslice(&c->b, "detail", h->detail);
		rc |= cnt_buf_printf(&c->b, ",\"state\":\"%s\"", cnt_hold_state_name(st));
		rc |= jslice(&c->b, "decided_by", zs(rec ? jstr(rec, "decided_by") : NULL));
		rc |= jslice(&c->b, "decided_at", zs(rec ? jstr(rec, "decided_at") : NULL));
		rc |= jslice(&c->b, "retraction_id", zs(rid));
		rc |= jslice(&c->b, "event_id", h->e.event_id);
		rc |= jslice(&c->b, "idempotency_key", h->e.idempotency_key);
		rc |= jslice(&c->b, "tenant_id", h->e.tenant_id);
		rc |= jslice(&c->b, "counter_id", h->e.counter_id);
		rc |= cnt_buf_printf(&c->b, ",\"counter_version\":%" PRId32, h->e.counter_version);
		rc |= jslice(&c->b, "member_ref", h->e.member_ref);
		rc |= jslice(&c->b, "item", h->e.item);
		rc |= cnt_buf_printf(&c->b, ",\"delta\":%" PRId64 ",\"event_time\":\"%s\",\"held_at\":\"%s\"",
			h->e.delta, t1, t2);
		rc |= cnt_buf_append(&c->b, ",\"attrs\":{", 10);
		for (size_t i = 0; i < h->e.nattrs; i++)
			rc |= (i ? cnt_buf_putc(&c->b, ',') : 0) |
			      cnt_json_string(&c->b, (const uint8_t *)h->e.attr_keys[i].p, h->e.attr_keys[i].n, 0) |
			      cnt_buf_putc(&c->b, ':') |
			      cnt_json_string(&c->b, (const uint8_t *)h->e.attr_vals[i].p, h->e.attr_vals[i].n, 0);
		rc |= cnt_buf_append(&c->b, "}}\n", 3);
	} else {
		char num[24];

		cnt_time_format_rfc3339(h->e.event_time, t1);
		snprintf(num, sizeof(num), "%" PRId64, h->e.delta);
		rc |= shown(&c->b, h->hold_id, 34) | shown(&c->b, zs(cnt_hold_state_name(st)), 8) |
		      shown(&c->b, zs(cnt_defs_hold_name(h->signal)), 8) | shown(&c->b, h->e.tenant_id, 8) |
		      shown(&c->b, h->e.counter_id, 12) | shown(&c->b, h->e.member_ref, 10) |
		      shown(&c->b, zs(num), 6) | shown(&c->b, zs(t1), 24);
		if (rec)
			rc |= cnt_buf_printf(&c->b, "%s by ", jstr(rec, "decided_at")) |
			      shown(&c->b, zs(jstr(rec, "decided_by")), 0);
		else
			rc |= shown(&c->b, h->detail, 0);
		while (rc == 0 && c->b.len && c->b.p[c->b.len - 1] == ' ')
			c->b.len--;
		rc |= cnt_buf_putc(&c->b, '\n');
	}
	if (rc != 0)
		return cnt_err_nomem(err);
	if (!c->json && c->listed == 0)
		c->line(c->lctx, c->head, strlen(c->head));
	c->line(c->lctx, (const char *)c->b.p, c->b.len);
	c->listed++;
	return 0;
}

int cnt_hold_list(const int *fds, const char *const *names, size_t n, const cnt_decisions *d,
	const cnt_hold_sel *sel, int json, void (*line)(void *ctx, const char *text, size_t n), void *ctx,
	uint64_t *listed, cnt_err *err)
{
	static const char head[] = "HOLD_ID                             STATE     SIGNAL    TENANT    "
		"COUNTER       MEMBER      DELTA   EVENT_TIME                DETAIL OR DECISION\n";
	list_ctx c = {d, sel, json, line, ctx, CNT_BUF_INIT, 0, head};
	uint64_t holds = 0;
	int rc;

	/* the header with the first row, or alone at the end: never before
	 * an error in the files */
	rc = each_hold(fds, names, n, list_one, &c, &holds, err);
	if (rc == 0 && !json && c.listed == 0)
		line(ctx, head, sizeof(head) - 1);
	cnt_buf_release(&c.b);
	*listed = c.listed;
	return rc;
}

/* ---- deciding ---- */

typedef struct pick {
	size_t off, len;        /* the event's bytes in the picks' buffer */
	char hid[35];
	cnt_hold_kind signal;
	int64_t held_at;
} pick;

typedef struct decide_ctx {
	const cnt_decisions *d;
	const cnt_hold_sel *sel;
	unsigned char *found;
	cnt_buf ev;
	pick *v;
	size_t n, cap;
} decide_ctx;

static int pick_one(void *vctx, cnt_held_in *in, const cnt_held *h, cnt_err *err)
{
	static const char *const what[] = {"event_id", "tenant_id", "counter_id", "member_ref"};
	const cnt_slice named[] = {h->e.event_id, h->e.tenant_id, h->e.counter_id, h->e.member_ref};
	decide_ctx *c = vctx;
	json_t *rec;
	const uint8_t *p;
	size_t n;
	long key;

	if (!selected(c->sel, h, &key))
		return 0;
	if (key >= 0)
		c->found[key] = 1;
	if ((rec = decision_of(c->d, h->hold_id)) != NULL) {
		if (key < 0)
			return 0;    /* chosen by a filter: only pending holds are */
		return cnt_err_set(err, "hold '%s' was already %s by %s at %s: a hold is decided once",
			c->sel->ids[key], jstr(rec, "decision"), jstr(rec, "decided_by"), jstr(rec, "decided_at"));
	}
	/* the decision (and a reject's ledger record) names these in JSON
	 * strings: text they cannot carry means a damaged or forged file */
	for (size_t i = 0; i < 4; i++)
		if (!cnt_json_text_ok(named[i].p, named[i].n)) {
			char id[CNT_SHOWN_SIZE(34)], val[CNT_SHOWN_SIZE(64)];

			return cnt_err_set(err, "hold '%s': its event's %s '%s' is not UTF-8 text without NUL bytes, "
				"which no decision can name (a damaged hold file?); nothing decided",
				cnt_shown(h->hold_id.p, h->hold_id.n, 34, id), what[i],
				cnt_shown(named[i].p, named[i].n, 64, val));
		}
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		pick *v = realloc(c->v, cap * sizeof(*v));

		if (v == NULL)
			return cnt_err_nomem(err);
		c->v = v;
		c->cap = cap;
	}
	cnt_held_in_event_bytes(in, &p, &n);
	c->v[c->n].off = c->ev.len;
	c->v[c->n].len = n;
	memcpy(c->v[c->n].hid, h->hold_id.p, 34);
	c->v[c->n].hid[34] = 0;
	c->v[c->n].signal = h->signal;
	c->v[c->n].held_at = h->held_at;
	if (cnt_buf_append(&c->ev, p, n) != 0)
		return cnt_err_nomem(err);
	c->n++;
	return 0;
}

static int set_str(json_t *o, const char *k, cnt_slice s)
{
	return json_object_set_new(o, k, s.p ? json_stringn(s.p, s.n) : json_null());
}

/* The decision line of hold k, chained to *prev (updated). */
static int decision_line(const decide_ctx *c, size_t k, const cnt_event *e, const cnt_hold_decision *dec,
	const char *rid, XXH128_hash_t *prev, cnt_buf *out, cnt_err *err)
{
	json_t *o = json_object();
	char at[32], held[32], ph[33], *text = NULL;
	size_t start = out->len;
	int rc = -1;

	cnt_time_format_rfc3339(dec->at, at);
	cnt_time_format_rfc3339(c->v[k].held_at, held);
	hex128(*prev, ph);
	if (o == NULL || json_object_set_new(o, "hold_id", json_string(c->v[k].hid)) ||
	    set_str(o, "event_id", e->event_id) || set_str(o, "tenant_id", e->tenant_id) ||
	    set_str(o, "counter_id", e->counter_id) || set_str(o, "member_ref", e->member_ref) ||
	    json_object_set_new(o, "signal", json_string(cnt_defs_hold_name(c->v[k].signal))) ||
	    json_object_set_new(o, "held_at", json_string(held)) ||
	    json_object_set_new(o, "decision", json_string(dec->reject ? "rejected" : "cleared")) ||
	    json_object_set_new(o, "decided_by", json_string(dec->by)) ||
	    json_object_set_new(o, "decided_at", json_string(at)) ||
	    json_object_set_new(o, "retraction_id", rid ? json_string(rid) : json_null()) ||
	    json_object_set_new(o, "prev", json_string(ph)) ||
	    (text = cnt_json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII)) == NULL ||
	    cnt_buf_append(out, text, strlen(text)) != 0)
		goto out;
	*prev = XXH3_128bits(out->p + start, out->len - start);
	rc = cnt_buf_putc(out, '\n');
out:
	free(text);
	json_decref(o);
	return rc ? cnt_err_nomem(err) : 0;
}

int cnt_hold_decide_run(const int *fds, const char *const *names, size_t n, const cnt_decisions *d,
	const cnt_hold_sel *sel, const cnt_hold_decision *dec, cnt_writer *seg, int rl_fd,
	const char *rl_name, cnt_hold_decide_result *res, cnt_err *err)
{
	decide_ctx c = {d, sel, NULL, CNT_BUF_INIT, NULL, 0, 0};
	cnt_limits lim = cnt_limits_default();
	cnt_attrs_buf ab = {0};
	cnt_buf lines = CNT_BUF_INIT;
	cnt_fpset done;
	cnt_fp rlast = {0, 0};
	XXH128_hash_t prev = d ? d->last : (XXH128_hash_t){0, 0};
	const char **ids = NULL;
	char **idcopy = NULL;
	size_t nids = 0;
	const cnt_retract_ctrs none = {0};   /* the record's counters (below) */
	int rc = -1;

	memset(res, 0, sizeof(*res));
	if (cnt_fpset_init(&done, 64) != 0)
		return cnt_err_nomem(err);
	if (sel->nids && (c.found = calloc(sel->nids, 1)) == NULL) {
		cnt_err_nomem(err);
		goto out;
	}
	if (each_hold(fds, names, n, pick_one, &c, &res->holds, err) != 0)
		goto out;
	for (size_t i = 0; i < sel->nids; i++)
		if (!c.found[i]) {
			cnt_err_set(err, "hold '%.40s' is in no hold file given", sel->ids[i]);
			goto out;
		}
	if (c.n == 0) {
		cnt_err_set(err, "no pending hold matches the selection");
		goto out;
	}
	if (dec->reject) {
		if (cnt_retract_ledger_load(rl_fd, rl_name, &done, &rlast, err) != 0)
			goto out;
		if ((ids = calloc(c.n, sizeof(*ids))) == NULL || (idcopy = calloc(c.n, sizeof(*idcopy))) == NULL) {
			cnt_err_nomem(err);
			goto out;
		}
	}
	/* reject: the event ids the ledger does not list yet, and the record,
	 * which lists no counters: its events were never counted, so it
	 * touched no board, and no correction cites it (cnt-retraction(5)) */
	for (size_t k = 0; dec->reject && k < c.n; k++) {
		cnt_cur cur = {c.ev.p + c.v[k].off, c.ev.p + c.v[k].off + c.v[k].len};
		cnt_event e;
		uint64_t old;

		if (cnt_event_decode(&cur, &e, &ab, &lim, err) != 0)
			goto out;
		if (cnt_fpset_find(&done, fp_bytes(e.event_id.p, e.event_id.n), &old))
			continue;
		if ((idcopy[nids] = strndup(e.event_id.p, e.event_id.n)) == NULL) {
			cnt_err_nomem(err);
			goto out;
		}
		ids[nids] = idcopy[nids];
		nids++;
	}
	if (nids) {
		cnt_retract_req req = {NULL, "fraud", dec->by, dec->authority, dec->at};
		cnt_retract_sel rsel = {0};

		rsel.scope = CNT_SCOPE_EVENT;
		rsel.tenant = sel->tenant;
		rsel.counter = sel->counter;
		rsel.member = sel->member;
		if (cnt_retract_derive_id(&req, ids, nids, res->retraction_id) != 0 ||
		    cnt_retract_record_line(&req, res->retraction_id, &rsel, ids, nids, &none, rlast,
			    &res->retraction_line, err) != 0) {
			cnt_err_nomem(err);
			goto out;
		}
		res->retracted = nids;
	}
	for (size_t k = 0; k < c.n; k++) {
		cnt_cur cur = {c.ev.p + c.v[k].off, c.ev.p + c.v[k].off + c.v[k].len};
		cnt_event e;

		if (cnt_event_decode(&cur, &e, &ab, &lim, err) != 0)
			goto out;
		if (!dec->reject) {
			cnt_event r = e;

			r.ingest_time = dec->at;
			if (cnt_event_encode(&r, cnt_writer_buf(seg)) != 0) {
				cnt_err_nomem(err);
				goto out;
			}
			if (cnt_writer_commit(seg, err) != 0)
				goto out;
		}
		if (decision_line(&c, k, &e, dec, dec->reject && nids ? res->retraction_id : NULL, &prev, &lines, err) != 0)
			goto out;
	}
	if (seg && cnt_writer_finish(seg, err) != 0)
		goto out;
	if (cnt_buf_putc(&lines, 0) != 0) {
		cnt_err_nomem(err);
		goto out;
	}
	res->decision_lines = (char *)lines.p;
	lines.p = NULL;
	res->decided = c.n;
	rc = 0;
out:
	if (idcopy)
		for (size_t i = 0; i < nids; i++)
			free(idcopy[i]);
	free(idcopy);
	free(ids);
	free(c.found);
	free(c.v);
	cnt_buf_release(&c.ev);
	cnt_buf_release(&lines);
	cnt_attrs_buf_release(&ab);
	cnt_fpset_release(&done);
	if (rc != 0) {
		free(res->retraction_line);
		res->retraction_line = NULL;
	}
	return rc;
}
