/*
 * explain.c - one member's standing re-derived from the archive (see
 * explain.h).
 */
#include "view/explain.h"
#include "base/jsonload.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "avro/json.h"
#include "base/fpset.h"
#include "correct/seal.h"
#include "count/dedup.h"
#include "count/dedup_filter.h"
#include "count/hll.h"
#include "count/stage.h"
#include "count/window.h"
#include "model/bucket.h"
#include "model/event.h"
#include "model/held.h"
#include "model/tenant.h"
#include "model/windowed.h"
#include "time/timefmt.h"
#include "time/tz.h"
#include "view/board.h"
#include "view/project.h"
#include "view/rank.h"
#include "view/view.h"

static const char *const fate_names[CNT_FATE_N] = {
	"counted", "outside_window", "late", "duplicate", "retracted", "compensation", "rejected",
	"ingest_duplicate", "held"
};

const char *cnt_fate_name(cnt_fate f)
{
	return f < CNT_FATE_N ? fate_names[f] : "?";
}

static int slice_is(cnt_slice s, const char *z)
{
	size_t n = strlen(z);

	return s.p != NULL && s.n == n && memcmp(s.p, z, n) == 0;
}

static char *dup_slice(cnt_slice s)
{
	char *p;

	if (s.p == NULL)
		return NULL;
	p = malloc(s.n + 1);
	if (p) {
		memcpy(p, s.p, s.n);
		p[s.n] = 0;
	}
	return p;
}

static cnt_fp fp_of_slice(cnt_slice s)
{
	const void *parts[1] = {s.p};
	size_t lens[1] = {s.n};

	return cnt_fp_of(1, parts, lens);
}

static cnt_explain_event *new_event(cnt_explain *x, cnt_err *err)
{
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 16;
		cnt_explain_event *v = realloc(x->ev, cap * sizeof(*v));

		if (v == NULL) {
			cnt_err_nomem(err);
			return NULL;
		}
		x->ev = v;
		x->cap = cap;
	}
	memset(&x->ev[x->n], 0, sizeof(x->ev[0]));
	return &x->ev[x->n++];
}

static void event_release(cnt_explain_event *e)
{
	free(e->source);
	free(e->event_id);
	free(e->idempotency_key);
	free(e->item);
	free(e->dup_source);
	free(e->dup_event_id);
	free(e->retraction_id);
	free(e->comp_source);
	free(e->cause);
	free(e->requester);
	free(e->authority);
	free(e->reason);
	free(e->message);
}

void cnt_explain_release(cnt_explain *x)
{
	for (size_t i = 0; i < x->n; i++)
		event_release(&x->ev[i]);
	free(x->ev);
	memset(x, 0, sizeof(*x));
}

/* ---- reading the log ---------------------------------------------------- */

typedef int (*event_fn)(void *ctx, const cnt_event *e, const char *file, uint64_t pos, cnt_err *err);

static int each_event(const cnt_explain_opts *o, event_fn fn, void *ctx, cnt_err *err)
{
	for (size_t i = 0; i < o->nlogs; i++) {
		int fd = open(o->logs[i], O_RDONLY | O_CLOEXEC);
		cnt_event_in *in;
		cnt_event e;
		int rc;

		if (fd < 0)
			return cnt_err_set(err, "cannot open '%s': %s", o->logs[i], strerror(errno));
		in = cnt_event_in_open(fd, o->logs[i], NULL, err);
		if (in == NULL) {
			close(fd);
			return -1;
		}
		while ((rc = cnt_event_in_next(in, &e, err)) == 1) {
			if (fn(ctx, &e, o->logs[i], cnt_event_in_record_no(in), err) != 0) {
				rc = -1;
				break;
			}
		}
		cnt_event_in_free(in);
		close(fd);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Pass 1: the compensations; retracted event id -> index of the
 * compensation in comps. */
typedef struct comp {
	char *retraction_id, *source;
	uint64_t position;
} comp;

typedef struct pass {
	const cnt_explain_opts *o;
	cnt_explain *x;
	cnt_fpset retracted;       /* event_id -> comps index + 1 */
	comp *comps;
	size_t ncomps, capcomps;
	cnt_dedup dedup;
	cnt_fpset firsts;          /* the member's first occurrences: dkey -> ev index + 1 */
	cnt_window *win;
	cnt_proj *proj;
	cnt_buf sk;
	uint64_t nread;
} pass;

static int of_board(const cnt_leaderboard *b, const cnt_event *e)
{
	return slice_is(e->tenant_id, b->tenant_id) && slice_is(e->counter_id, b->counter_id);
}

static int collect_comp(void *ctx, const cnt_event *e, const char *file, uint64_t pos, cnt_err *err)
{
	pass *p = ctx;
	uint64_t old;
	int rc;

	if (p->o->tick)
		p->o->tick(++p->nread);
	if (e->retracts.p == NULL || !of_board(p->o->board, e))
		return 0;
	if (p->ncomps == p->capcomps) {
		size_t cap = p->capcomps ? p->capcomps * 2 : 64;
		comp *v = realloc(p->comps, cap * sizeof(*v));

		if (v == NULL)
			return cnt_err_nomem(err);
		p->comps = v;
		p->capcomps = cap;
	}
	rc = cnt_fpset_add(&p->retracted, fp_of_slice(e->retracts), p->ncomps + 1, &old);
	if (rc < 0)
		return cnt_err_nomem(err);
	if (rc == 0)
		return 0;   /* a resent compensation: the first one stands */
	p->comps[p->ncomps].retraction_id = e->retraction_id.p ? dup_slice(e->retraction_id) : NULL;
	p->comps[p->ncomps].source = strdup(file);
	p->comps[p->ncomps].position = pos;
	if (p->comps[p->ncomps].source == NULL || (e->retraction_id.p && p->comps[p->ncomps].retraction_id == NULL)) {
		free(p->comps[p->ncomps].retraction_id);
		free(p->comps[p->ncomps].source);
		return cnt_err_nomem(err);
	}
	p->ncomps++;
	return 0;
}

static int fill_common(cnt_explain_event *v, const cnt_event *e, const char *file, uint64_t pos, cnt_err *err)
{
	v->source = strdup(file);
	v->position = pos;
	v->event_id = dup_slice(e->event_id);
	v->idempotency_key = dup_slice(e->idempotency_key);
	v->item = e->item.p ? dup_slice(e->item) : NULL;
	v->delta = e->delta;
	v->event_time = e->event_time;
	v->ingest_time = e->ingest_time;
	v->has_times = 1;
	if (v->source == NULL || v->event_id == NULL || v->idempotency_key == NULL || (e->item.p && v->item == NULL))
		return cnt_err_nomem(err);
	return 0;
}

static int add_to_proj(pass *p, const cnt_windowed *w, cnt_err *err)
{
	const cnt_event *e = &w->ev;
	cnt_bucket b;

	memset(&b, 0, sizeof(b));
	b.tenant_id = e->tenant_id;
	b.counter_id = e->counter_id;
	b.counter_version = e->counter_version;
	b.member_ref = e->member_ref;
	b.bucket_start = w->bucket_start;
	b.bucket_end = w->bucket_end;
	b.count = 1;
	b.sum = e->delta;
	if (w->sample >= 0) {
		/* an approx counter's sample weighs 2^L (cnt-bucket(5)) */
		int64_t wt = (int64_t)1 << w->sample;

		b.count = wt;
		b.sum = (cnt_i128)e->delta * wt;
		b.sampled = 1;
		b.sum_var = (cnt_i128)((unsigned __int128)((cnt_i128)e->delta * e->delta) *
				       (uint64_t)wt * (uint64_t)(wt - 1));   /* wrapping */
	}
	b.has_min = b.has_max = b.has_last = 1;
	b.min = b.max = e->delta;
	b.last_event_time = e->event_time;
	b.max_ingest_time = e->ingest_time;
	if (e->item.p) {
		cnt_hll h;
		int rc;

		cnt_hll_init_p(&h, w->hll_precision);
		p->sk.len = 0;
		rc = cnt_hll_add(&h, e->item.p, e->item.n) != 0 || cnt_hll_serialize(&h, &p->sk) != 0;
		cnt_hll_release(&h);
		if (rc)
			return cnt_err_nomem(err);
		b.sketch.p = (const char *)p->sk.p;
		b.sketch.n = p->sk.len;
	}
	return cnt_proj_add_bucket(p->proj, &b, err);
}

static int judge(void *ctx, const cnt_event *e, const char *file, uint64_t pos, cnt_err *err)
{
	pass *p = ctx;
	const cnt_explain_opts *o = p->o;
	cnt_explain *x = p->x;
	cnt_count_target t;
	cnt_count_reject rej;
	cnt_windowed w;
	cnt_dkey k;
	int mine, dup, rc;
	uint64_t ci = 0;

	if (o->tick)
		o->tick(++p->nread);
	x->read++;
	if (o->board->scope_kind == CNT_SCOPE_REGION && slice_is(e->tenant_id, o->board->tenant_id) &&
	    cnt_proj_scope_from_event(p->proj, e, err) != 0)
		return err->kind == CNT_ERR_NOMEM ? -1 : cnt_err_prefix(err, "'%s' record %" PRIu64, file, pos);
	if (!of_board(o->board, e))
		return 0;
	x->of_board++;
	if (e->ingest_time > x->as_of)
		x->as_of = e->ingest_time;
	if (cnt_count_lookup(o->defs, o->defs_name, e, &t, &rej) != 0)
		return 0;   /* cnt-dedup rejects it: not counted */
	mine = slice_is(e->member_ref, o->member);
	k = cnt_dedup_event_key(t.version, e);
	dup = cnt_dedup_check(&p->dedup, k, cnt_dedup_event_second(e),
		t.version->dedup_horizon_s > 0 ? (uint64_t)t.version->dedup_horizon_s : 0);
	if (dup < 0)
		return cnt_err_nomem(err);
	if (!mine && (dup || e->retracts.p))
		return 0;
	if (!mine && cnt_fpset_find(&p->retracted, fp_of_slice(e->event_id), &ci))
		return 0;
	if (mine) {
		cnt_explain_event *v = new_event(x, err);
		cnt_fp kf = cnt_fp_of(2, (const void *[]){&k.lo, &k.hi}, (const size_t[]){sizeof(k.lo), sizeof(k.hi)});

		if (v == NULL || fill_common(v, e, file, pos, err) != 0)
			return -1;
		if (dup) {
			uint64_t first;

			v->fate = CNT_FATE_DUPLICATE;
			if (cnt_fpset_find(&p->firsts, kf, &first)) {
				const cnt_explain_event *f = &x->ev[first - 1];

				v->dup_source = strdup(f->source);
				v->dup_event_id = strdup(f->event_id);
				v->dup_position = f->position;
				if (v->dup_source == NULL || v->dup_event_id == NULL)
					return cnt_err_nomem(err);
			}
			x->by_fate[v->fate]++;
			return 0;
		}
		/* a new first occurrence of this key (re)starts its memory */
		{
			size_t idx = x->n;
			uint64_t old;

			rc = cnt_fpset_add(&p->firsts, kf, idx, &old);
			if (rc < 0)
				return cnt_err_nomem(err);
			if (rc == 0) {
				/* remembered again after its horizon: point at this one */
				for (size_t s = 0; s <= p->firsts.mask; s++)
					if (p->firsts.slots[s].hi == kf.hi && p->firsts.slots[s].lo == kf.lo)
						p->firsts.slots[s].val = idx;
			}
		}
		if (e->retracts.p || cnt_fpset_find(&p->retracted, fp_of_slice(e->event_id), &ci)) {
			const comp *c;

			if (e->retracts.p) {
				v->fate = CNT_FATE_COMPENSATION;
				cnt_fpset_find(&p->retracted, fp_of_slice(e->retracts), &ci);
			} else {
				v->fate = CNT_FATE_RETRACTED;
			}
			if (ci) {
				c = &p->comps[ci - 1];
				v->retraction_id = c->retraction_id ? strdup(c->retraction_id) : NULL;
				v->comp_source = strdup(c->source);
				v->comp_position = c->position;
				if (v->comp_source == NULL || (c->retraction_id && v->retraction_id == NULL))
					return cnt_err_nomem(err);
			}
			x->by_fate[v->fate]++;
			return 0;
		}
	}
	rc = cnt_window_attribute(p->win, e, &w, &rej, err);
	if (rc < 0)
		return -1;
	if (rc > 0)
		return 0;
	if (mine) {
		cnt_explain_event *v = &x->ev[x->n - 1];
		int pinned_out = o->board->counter_version && e->counter_version != o->board->counter_version;

		v->bucket_start = w.bucket_start;
		v->bucket_end = w.bucket_end;
		v->deadline = w.bucket_end + t.version->lateness_horizon_s * 1000;
		if (w.late)
			v->fate = CNT_FATE_LATE;
		else if (pinned_out || w.bucket_start < o->from || w.bucket_end > o->to)
			v->fate = CNT_FATE_OUTSIDE;
		else
			v->fate = CNT_FATE_COUNTED;
		x->by_fate[v->fate]++;
	}
	if (w.late)
		return 0;
	return add_to_proj(p, &w, err);
}

/* ---- side files ------------------------------------------------------------ */

/* The ledger's records, for cause, requester and authority. */
static int ledger_details(const cnt_explain_opts *o, cnt_explain *x, cnt_err *err)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t no = 0;

	if (o->ledger == NULL)
		return 0;
	f = fopen(o->ledger, "re");
	if (f == NULL)
		return cnt_err_set(err, "cannot open the ledger '%s': %s", o->ledger, strerror(errno));
	while ((n = getline(&line, &cap, f)) > 0) {
		json_error_t je;
		json_t *r;
		const char *id, *cause, *req, *auth;

		no++;
		r = cnt_json_loadb(line, (size_t)n, 0, &je);
		if (r == NULL || !json_is_object(r)) {
			json_decref(r);
			free(line);
			fclose(f);
			if (r == NULL && cnt_json_oom(&je))
				return cnt_err_oom(err, "reading the ledger '%s'", o->ledger);
			return cnt_err_set(err, "'%s' line %" PRIu64 ": not a JSON object (%s)", o->ledger, no, je.text);
		}
		id = json_string_value(json_object_get(r, "retraction_id"));
		cause = json_string_value(json_object_get(r, "cause"));
		req = json_string_value(json_object_get(r, "requested_by"));
		auth = json_string_value(json_object_get(r, "authority"));
		for (size_t i = 0; id && i < x->n; i++) {
			cnt_explain_event *v = &x->ev[i];

			if (v->retraction_id == NULL || strcmp(v->retraction_id, id) != 0 || v->cause)
				continue;
			v->cause = cause ? strdup(cause) : NULL;
			v->requester = req ? strdup(req) : NULL;
			v->authority = auth ? strdup(auth) : NULL;
			if ((cause && !v->cause) || (req && !v->requester) || (auth && !v->authority)) {
				json_decref(r);
				free(line);
				fclose(f);
				return cnt_err_nomem(err);
			}
		}
		json_decref(r);
	}
	free(line);
	if (ferror(f)) {
		fclose(f);
		return cnt_err_set(err, "cannot read the ledger '%s'", o->ledger);
	}
	fclose(f);
	return 0;
}

/* cnt-ingest's -r and -D lines: the raw line names the member. */
static int side_file(const cnt_explain_opts *o, cnt_explain *x, const char *path, cnt_fate fate, cnt_err *err)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t no = 0;
	int rc = 0;

	if (f == NULL)
		return cnt_err_set(err, "cannot open '%s': %s", path, strerror(errno));
	while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
		json_error_t je;
		json_t *r, *raw = NULL;
		const char *rawtext;
		cnt_explain_event *v;

		no++;
		if (n == 1 && line[0] == '\n')
			continue;
		r = cnt_json_loadb(line, (size_t)n, 0, &je);
		if (r == NULL && cnt_json_oom(&je)) {
			rc = cnt_err_oom(err, "reading '%s'", path);
			break;
		}
		if (r == NULL || !json_is_object(r)) {
			json_decref(r);
			rc = cnt_err_set(err, "'%s' line %" PRIu64 ": not a JSON object (%s): is it a cnt-ingest -r or -D file?",
				path, no, je.text);
			break;
		}
		rawtext = json_string_value(json_object_get(r, "raw"));
		if (rawtext)
			raw = cnt_json_loads(rawtext, 0, &je);
		if (rawtext && raw == NULL && cnt_json_oom(&je)) {
			json_decref(r);
			rc = cnt_err_oom(err, "reading '%s'", path);
			break;
		}
		if (raw == NULL || !json_is_object(raw) ||
		    !json_is_string(json_object_get(raw, "member_ref")) ||
		    strcmp(json_string_value(json_object_get(raw, "member_ref")), o->member) != 0 ||
		    !json_is_string(json_object_get(raw, "tenant_id")) ||
		    strcmp(json_string_value(json_object_get(raw, "tenant_id")), o->board->tenant_id) != 0 ||
		    !json_is_string(json_object_get(raw, "counter_id")) ||
		    strcmp(json_string_value(json_object_get(raw, "counter_id")), o->board->counter_id) != 0) {
			json_decref(raw);
			json_decref(r);
			continue;
		}
		v = new_event(x, err);
		if (v == NULL) {
			rc = -1;
		} else {
			json_t *pos = json_object_get(r, "line");
			const char *reason = json_string_value(json_object_get(r, "reason"));
			const char *msg = json_string_value(json_object_get(r, "message"));
			const char *key = json_string_value(json_object_get(raw, "idempotency_key"));
			json_t *delta = json_object_get(raw, "delta");
			json_t *of = json_object_get(r, "duplicate_of");

			v->fate = fate;
			v->source = strdup(path);
			v->position = no;
			if (json_is_integer(pos))
				v->position = (uint64_t)json_integer_value(pos);
			v->reason = strdup(reason ? reason : "?");
			v->message = strdup(msg ? msg : "");
			v->idempotency_key = key ? strdup(key) : NULL;
			v->delta = json_is_integer(delta) ? (int64_t)json_integer_value(delta) : 0;
			if (json_is_object(of) && json_is_integer(json_object_get(of, "line"))) {
				const char *in = json_string_value(json_object_get(of, "input"));

				v->dup_source = strdup(in ? in : "?");
				v->dup_position = (uint64_t)json_integer_value(json_object_get(of, "line"));
				if (v->dup_source == NULL)
					rc = cnt_err_nomem(err);
			}
			{
				const char *in = json_string_value(json_object_get(r, "input"));

				if (in) {
					free(v->source);
					v->source = strdup(in);
				}
			}
			if (rc == 0 && (v->source == NULL || v->reason == NULL || v->message == NULL ||
			    (key && v->idempotency_key == NULL)))
				rc = cnt_err_nomem(err);
			x->by_fate[fate]++;
		}
		json_decref(raw);
		json_decref(r);
	}
	free(line);
	if (rc == 0 && ferror(f))
		rc = cnt_err_set(err, "cannot read '%s'", path);
	fclose(f);
	return rc;
}

/* Hold files: the member's held events, with their hold. */
static int hold_file(const cnt_explain_opts *o, cnt_explain *x, const char *path, cnt_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	cnt_held_in *in;
	cnt_held h;
	uint64_t no = 0;
	int rc;

	if (fd < 0)
		return cnt_err_set(err, "cannot open the hold file '%s': %s", path, strerror(errno));
	in = cnt_held_in_open(fd, path, err);
	if (in == NULL) {
		close(fd);
		return -1;
	}
	while ((rc = cnt_held_in_next(in, &h, err)) == 1) {
		cnt_explain_event *v;

		no++;
		if (!of_board(o->board, &h.e) || !slice_is(h.e.member_ref, o->member))
			continue;
		if ((v = new_event(x, err)) == NULL || fill_common(v, &h.e, path, no, err) != 0) {
			rc = -1;
			break;
		}
		v->fate = CNT_FATE_HELD;
		v->reason = strdup(cnt_defs_hold_name(h.signal));
		v->message = dup_slice(h.detail);
		v->dup_source = dup_slice(h.hold_id);
		v->dup_position = (uint64_t)h.held_at;
		if (v->reason == NULL || v->message == NULL || v->dup_source == NULL) {
			rc = cnt_err_nomem(err);
			break;
		}
		x->by_fate[CNT_FATE_HELD]++;
	}
	cnt_held_in_free(in);
	close(fd);
	return rc < 0 ? -1 : 0;
}

int cnt_explain_sealed(const char *show_json, size_t n, const char *member, cnt_explain_check *c, cnt_err *err)
{
	const char *p = show_json, *end = show_json + n;

	c->have = 1;
	c->found = 0;
	c->exact = 1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_error_t je;
		json_t *r = cnt_json_loadb(p, len, 0, &je), *v, *k;

		if (r == NULL && cnt_json_oom(&je))
			return cnt_err_nomem(err);
		if (r == NULL)
			return cnt_err_set(err, "sealed standings: not JSON (%s)", je.text);
		k = json_object_get(r, "member_ref");
		if (json_is_string(k) && strcmp(json_string_value(k), member) == 0) {
			v = json_object_get(r, "value");
			k = json_object_get(r, "rank");
			/* removed by a correction: no standing any more */
			if (json_is_integer(v) && json_is_integer(k)) {
				c->found = 1;
				c->value = (int64_t)json_integer_value(v);
				c->rank = (int64_t)json_integer_value(k);
			}
		}
		json_decref(r);
		p += len + 1;
	}
	return 0;
}

/* ---- the run ------------------------------------------------------------ */

int cnt_explain_run(const cnt_explain_opts *o, cnt_explain *x, cnt_err *err)
{
	pass p;
	cnt_view_build vb;
	int rc = -1;

	memset(x, 0, sizeof(*x));
	memset(&p, 0, sizeof(p));
	x->as_of = INT64_MIN;
	x->scope = o->scope ? o->scope : "global";
	p.o = o;
	p.x = x;
	p.sk = (cnt_buf)CNT_BUF_INIT;
	if (cnt_fpset_init(&p.retracted, 64) != 0 || cnt_fpset_init(&p.firsts, 64) != 0 ||
	    cnt_dedup_init(&p.dedup, 1 << 16) != 0) {
		cnt_err_nomem(err);
		goto out;
	}
	p.win = cnt_window_new(o->defs, o->defs_name, 1, NULL, err);
	if (p.win == NULL)
		goto out;
	p.proj = cnt_proj_new(o->board, o->from, o->to, err);
	if (p.proj == NULL)
		goto out;
	if (o->scopes && cnt_board_read_scopes(p.proj, o->scopes, err) != 0)
		goto out;
	if (each_event(o, collect_comp, &p, err) != 0)
		goto out;
	p.nread = 0;
	if (each_event(o, judge, &p, err) != 0)
		goto out;
	for (size_t i = 0; i < o->nrejects; i++)
		if (side_file(o, x, o->rejects[i], CNT_FATE_REJECTED, err) != 0)
			goto out;
	for (size_t i = 0; i < o->ningest_dups; i++)
		if (side_file(o, x, o->ingest_dups[i], CNT_FATE_INGEST_DUPLICATE, err) != 0)
			goto out;
	for (size_t i = 0; i < o->nholds; i++)
		if (hold_file(o, x, o->holds[i], err) != 0)
			goto out;
	if (ledger_details(o, x, err) != 0)
		goto out;
	if (cnt_proj_finish(p.proj, err) != 0)
		goto out;
	for (size_t s = 0; s < cnt_proj_nscopes(p.proj); s++) {
		if (strcmp(cnt_proj_scope(p.proj, s), x->scope) != 0)
			continue;
		if (cnt_proj_view(p.proj, s, &vb, err) != 0)
			goto out;
		x->members = vb.n;
		for (size_t i = 0; i < vb.n; i++) {
			const cnt_view_entry *en = &vb.entries[i];

			if (en->name_len == strlen(o->member) && memcmp(vb.pool + en->name_off, o->member, en->name_len) == 0) {
				x->found = 1;
				x->value = en->value;
				x->rank = en->rank;
				/* An approx or unique counter's value is an estimate:
				 * its bound, as cnt-rank gives it (view/view.h). */
				if (vb.errors != NULL) {
					x->est = vb.errors[i] >= 0 ? 1 : 2;
					x->error = vb.errors[i] >= 0 ? vb.errors[i] : 0;
				}
				break;
			}
		}
	}
	rc = 0;
out:
	for (size_t i = 0; i < p.ncomps; i++) {
		free(p.comps[i].retraction_id);
		free(p.comps[i].source);
	}
	free(p.comps);
	cnt_fpset_release(&p.retracted);
	cnt_fpset_release(&p.firsts);
	cnt_dedup_release(&p.dedup);
	cnt_window_free(p.win);
	cnt_proj_free(p.proj);
	cnt_buf_release(&p.sk);
	return rc;
}

int cnt_explain_agrees(const cnt_explain *x, const cnt_explain_check *c)
{
	if (!c->have)
		return 0;
	if (c->found != x->found)
		return 0;
	if (!x->found)
		return 1;
	if (c->value != x->value)
		return 0;
	if (c->exact)
		return c->rank == (int64_t)x->rank;
	return x->rank >= c->band_lo && x->rank <= c->band_hi;
}

/* ---- output ------------------------------------------------------------- */

static int put_time(cnt_buf *out, int64_t ms)
{
	char t[32];

	cnt_time_format_rfc3339(ms, t);
	return cnt_buf_printf(out, "\"%s\"", t);
}

static int put_str(cnt_buf *out, const char *key, const char *s)
{
	if (cnt_buf_printf(out, ",\"%s\":", key) != 0)
		return -1;
	if (s == NULL)
		return cnt_buf_printf(out, "null");
	return cnt_json_string(out, (const uint8_t *)s, strlen(s), 0);
}

static int put_tkey(cnt_buf *out, const char *key, int64_t ms)
{
	return cnt_buf_printf(out, ",\"%s\":", key) || put_time(out, ms);
}

/* A window end: null when the window is unbounded on that side. */
static int put_wkey(cnt_buf *out, const char *key, int64_t ms)
{
	if (ms <= CNT_TZ_MIN_MS || ms >= CNT_TZ_MAX_MS)
		return cnt_buf_printf(out, ",\"%s\":null", key);
	return put_tkey(out, key, ms);
}

static void wtime(int64_t ms, char t[32])
{
	if (ms <= CNT_TZ_MIN_MS)
		snprintf(t, 32, "the beginning");
	else if (ms >= CNT_TZ_MAX_MS)
		snprintf(t, 32, "the end");
	else
		cnt_time_format_rfc3339(ms, t);
}

int cnt_explain_format_json(const cnt_explain_opts *o, const cnt_explain *x, const cnt_explain_check *checks,
	size_t nchecks, cnt_buf *out)
{
	int rc = 0;

	for (size_t i = 0; i < x->n && rc == 0; i++) {
		const cnt_explain_event *v = &x->ev[i];

		rc |= cnt_buf_printf(out, "{\"kind\":\"event\",\"fate\":\"%s\"", cnt_fate_name(v->fate));
		rc |= put_str(out, "source", v->source);
		rc |= cnt_buf_printf(out, ",\"%s\":%" PRIu64, v->event_id ? "record" : "line", v->position);
		rc |= put_str(out, "event_id", v->event_id);
		rc |= put_str(out, "idempotency_key", v->idempotency_key);
		rc |= cnt_buf_printf(out, ",\"delta\":%" PRId64, v->delta);
		if (v->has_times)
			rc |= put_tkey(out, "event_time", v->event_time) || put_tkey(out, "ingest_time", v->ingest_time);
		if (v->item)
			rc |= put_str(out, "item", v->item);
		switch (v->fate) {
		case CNT_FATE_COUNTED:
		case CNT_FATE_OUTSIDE:
		case CNT_FATE_LATE:
			rc |= put_tkey(out, "bucket_start", v->bucket_start) || put_tkey(out, "bucket_end", v->bucket_end) ||
				put_tkey(out, "deadline", v->deadline);
			if (v->fate == CNT_FATE_LATE)
				rc |= cnt_buf_printf(out, ",\"late_by_ms\":%" PRId64, v->ingest_time - v->deadline);
			break;
		case CNT_FATE_DUPLICATE:
			rc |= put_str(out, "duplicate_of", v->dup_event_id) || put_str(out, "first_source", v->dup_source) ||
				cnt_buf_printf(out, ",\"first_record\":%" PRIu64, v->dup_position);
			break;
		case CNT_FATE_RETRACTED:
		case CNT_FATE_COMPENSATION:
			rc |= put_str(out, "retraction_id", v->retraction_id) || put_str(out, "compensation_source", v->comp_source) ||
				cnt_buf_printf(out, ",\"compensation_record\":%" PRIu64, v->comp_position) ||
				put_str(out, "cause", v->cause) || put_str(out, "requester", v->requester) ||
				put_str(out, "authority", v->authority);
			break;
		case CNT_FATE_HELD:
			rc |= put_str(out, "hold_id", v->dup_source) || put_str(out, "signal", v->reason) ||
				put_str(out, "detail", v->message) || put_tkey(out, "held_at", (int64_t)v->dup_position);
			break;
		case CNT_FATE_REJECTED:
		case CNT_FATE_INGEST_DUPLICATE:
			rc |= put_str(out, "reason", v->reason) || put_str(out, "message", v->message);
			if (v->dup_source)
				rc |= put_str(out, "first_source", v->dup_source) ||
					cnt_buf_printf(out, ",\"first_line\":%" PRIu64, v->dup_position);
			break;
		default:
			break;
		}
		rc |= cnt_buf_printf(out, "}\n");
	}
	rc |= cnt_buf_printf(out, "{\"kind\":\"standing\"");
	rc |= put_str(out, "board", o->board->board_id) || put_str(out, "scope", x->scope) ||
		put_str(out, "member", o->member) || put_str(out, "window", o->window_label) ||
		put_wkey(out, "from", o->from) || put_wkey(out, "to", o->to);
	if (x->as_of > INT64_MIN)
		rc |= put_tkey(out, "as_of", x->as_of);
	else
		rc |= cnt_buf_printf(out, ",\"as_of\":null");
	if (x->found && x->est == 1)
		rc |= cnt_buf_printf(out, ",\"found\":true,\"value\":%" PRId64 ",\"estimate\":true,\"error\":%" PRId64
			",\"rank\":%" PRIu32, x->value, x->error, x->rank);
	else if (x->found && x->est == 2)
		rc |= cnt_buf_printf(out, ",\"found\":true,\"value\":%" PRId64 ",\"estimate\":true,\"error\":null"
			",\"rank\":%" PRIu32, x->value, x->rank);
	else if (x->found)
		rc |= cnt_buf_printf(out, ",\"found\":true,\"value\":%" PRId64 ",\"estimate\":false,\"rank\":%" PRIu32,
			x->value, x->rank);
	else
		rc |= cnt_buf_printf(out, ",\"found\":false,\"value\":null,\"rank\":null");
	rc |= cnt_buf_printf(out, ",\"members\":%" PRIu64 ",\"events_read\":%" PRIu64 ",\"fates\":{", x->members, x->read);
	for (int f = 0; f < CNT_FATE_N; f++)
		rc |= cnt_buf_printf(out, "%s\"%s\":%" PRIu64, f ? "," : "", fate_names[f], x->by_fate[f]);
	rc |= cnt_buf_printf(out, "}}\n");
	for (size_t i = 0; i < nchecks; i++) {
		const cnt_explain_check *c = &checks[i];

		rc |= cnt_buf_printf(out, "{\"kind\":\"check\"");
		rc |= put_str(out, "against", c->what);
		if (!c->found)
			rc |= cnt_buf_printf(out, ",\"found\":false");
		else if (c->exact)
			rc |= cnt_buf_printf(out, ",\"found\":true,\"value\":%" PRId64 ",\"rank\":%" PRId64, c->value, c->rank);
		else
			rc |= cnt_buf_printf(out, ",\"found\":true,\"value\":%" PRId64 ",\"rank_band\":[%" PRIu64 ",%" PRIu64 "]",
				c->value, c->band_lo, c->band_hi);
		rc |= cnt_buf_printf(out, ",\"agrees\":%s}\n", cnt_explain_agrees(x, c) ? "true" : "false");
	}
	return rc ? -1 : 0;
}

static int put_dur(cnt_buf *out, int64_t ms)
{
	int64_t s = ms / 1000;

	if (s >= 86400)
		return cnt_buf_printf(out, "%" PRId64 "d%02" PRId64 "h%02" PRId64 "m", s / 86400, s / 3600 % 24, s / 60 % 60);
	if (s >= 3600)
		return cnt_buf_printf(out, "%" PRId64 "h%02" PRId64 "m%02" PRId64 "s", s / 3600, s / 60 % 60, s % 60);
	return cnt_buf_printf(out, "%" PRId64 "m%02" PRId64 "s.%03" PRId64, s / 60, s % 60, ms % 1000);
}

int cnt_explain_format_text(const cnt_explain_opts *o, const cnt_explain *x, const cnt_explain_check *checks,
	size_t nchecks, cnt_buf *out)
{
	char a[32], b[32];
	int rc = 0;

	wtime(o->from, a);
	wtime(o->to, b);
	rc |= cnt_buf_printf(out, "%s on %s (%s/%s, %s: %s .. %s), scope %s\n", o->member, o->board->board_id,
		o->board->tenant_id, o->board->counter_id, o->window_label, a, b, x->scope);
	if (x->found && x->est == 1)
		rc |= cnt_buf_printf(out, "value ~%" PRId64 " +-%" PRId64 " (an estimate, 95 %%), rank %" PRIu32 " of %" PRIu64,
			x->value, x->error, x->rank, x->members);
	else if (x->found && x->est == 2)
		rc |= cnt_buf_printf(out, "value ~%" PRId64 " +-? (an estimate, bound unknown), rank %" PRIu32 " of %" PRIu64,
			x->value, x->rank, x->members);
	else if (x->found)
		rc |= cnt_buf_printf(out, "value %" PRId64 ", rank %" PRIu32 " of %" PRIu64, x->value, x->rank, x->members);
	else
		rc |= cnt_buf_printf(out, "not ranked (%" PRIu64 " members ranked)", x->members);
	if (x->as_of > INT64_MIN) {
		cnt_time_format_rfc3339(x->as_of, a);
		rc |= cnt_buf_printf(out, ", from the log as of %s", a);
	}
	rc |= cnt_buf_printf(out, "\n%zu events of the member:", x->n);
	for (int f = 0; f < CNT_FATE_N; f++)
		if (x->by_fate[f])
			rc |= cnt_buf_printf(out, " %" PRIu64 " %s", x->by_fate[f], fate_names[f]);
	rc |= cnt_buf_printf(out, "\n\n");
	for (size_t i = 0; i < x->n && rc == 0; i++) {
		const cnt_explain_event *v = &x->ev[i];

		rc |= cnt_buf_printf(out, "%-16s ", cnt_fate_name(v->fate));
		if (v->has_times) {
			cnt_time_format_rfc3339(v->event_time, a);
			rc |= cnt_buf_printf(out, "%s ", a);
		} else {
			rc |= cnt_buf_printf(out, "%-24s ", "-");
		}
		rc |= cnt_buf_printf(out, "%12" PRId64 "  %s", v->delta, v->idempotency_key ? v->idempotency_key : "-");
		if (v->event_id)
			rc |= cnt_buf_printf(out, " (%s record %" PRIu64 ")", v->source, v->position);
		else
			rc |= cnt_buf_printf(out, " (%s line %" PRIu64 ")", v->source, v->position);
		rc |= cnt_buf_printf(out, "\n%17s", "");
		switch (v->fate) {
		case CNT_FATE_COUNTED:
		case CNT_FATE_OUTSIDE:
			cnt_time_format_rfc3339(v->bucket_start, a);
			rc |= cnt_buf_printf(out, "bucket %s, %s the window", a, v->fate == CNT_FATE_COUNTED ? "inside" : "outside");
			break;
		case CNT_FATE_LATE:
			cnt_time_format_rfc3339(v->deadline, a);
			cnt_time_format_rfc3339(v->ingest_time, b);
			rc |= cnt_buf_printf(out, "ingested %s, deadline %s: late by ", b, a) ||
				put_dur(out, v->ingest_time - v->deadline);
			break;
		case CNT_FATE_DUPLICATE:
			if (v->dup_event_id)
				rc |= cnt_buf_printf(out, "duplicate of %s, first seen in %s record %" PRIu64, v->dup_event_id,
					v->dup_source, v->dup_position);
			else
				rc |= cnt_buf_printf(out, "duplicate of an event with the same key (another member's)");
			break;
		case CNT_FATE_RETRACTED:
		case CNT_FATE_COMPENSATION:
			rc |= cnt_buf_printf(out, "%s %s (compensation in %s record %" PRIu64 ")",
				v->fate == CNT_FATE_RETRACTED ? "retracted by" : "compensation of",
				v->retraction_id ? v->retraction_id : "?", v->comp_source, v->comp_position);
			if (v->cause)
				rc |= cnt_buf_printf(out, ", cause %s, requester %s, authority %s", v->cause,
					v->requester ? v->requester : "?", v->authority ? v->authority : "?");
			break;
		case CNT_FATE_HELD:
			rc |= cnt_buf_printf(out, "held as %s (signal %s: %s), not in the log", v->dup_source, v->reason,
				v->message);
			break;
		default:
			rc |= cnt_buf_printf(out, "%s: %s", v->reason ? v->reason : "?", v->message ? v->message : "");
			if (v->dup_source)
				rc |= cnt_buf_printf(out, " (first: %s line %" PRIu64 ")", v->dup_source, v->dup_position);
			break;
		}
		rc |= cnt_buf_printf(out, "\n");
	}
	if (nchecks)
		rc |= cnt_buf_printf(out, "\n");
	for (size_t i = 0; i < nchecks; i++) {
		const cnt_explain_check *c = &checks[i];

		rc |= cnt_buf_printf(out, "%s: ", c->what);
		if (!c->found)
			rc |= cnt_buf_printf(out, "the member is not in it");
		else if (c->exact)
			rc |= cnt_buf_printf(out, "value %" PRId64 ", rank %" PRId64, c->value, c->rank);
		else
			rc |= cnt_buf_printf(out, "value %" PRId64 ", rank %" PRIu64 "-%" PRIu64, c->value, c->band_lo, c->band_hi);
		rc |= cnt_buf_printf(out, ": %s\n", cnt_explain_agrees(x, c) ? "agrees" : "DIFFERS from the log");
	}
	return rc ? -1 : 0;
}

int cnt_explain_view_check(const char *views, const cnt_explain_opts *o, int version, int64_t now,
	const char *who, cnt_explain_check *c, char *what, size_t wn, cnt_err *err)
{
	cnt_rank_source src = {.overlay_fd = -1, .now = now};
	cnt_rank_question q = {.kind = CNT_RANK_Q_RANK, .member = o->member};
	cnt_rank_answer a;
	cnt_view v;
	char vdir[4200];
	const char *t;
	int rc;

	if (cnt_viewdir_open(&v, views, o->board->board_id, o->scope ? o->scope : "global", &version, vdir,
		sizeof(vdir), &src.frozen, err) != 0)
		return -1;
	t = v.desc.tenant_id ? v.desc.tenant_id : "";
	if (who != NULL && cnt_tenant_guard_id(who, t, strlen(t), vdir, "cnt.view", err) != 0) {
		cnt_view_close(&v);
		return -1;
	}
	src.view = &v;
	src.dir = vdir;
	rc = cnt_rank_answer_question(&src, &q, &a, err);
	if (rc == 0) {
		snprintf(what, wn, "view %s", vdir);
		c->have = 1;
		c->what = what;
		c->found = a.found;
		c->value = a.value;
		c->exact = a.exact;
		c->rank = a.rank;
		c->band_lo = a.band_lo;
		c->band_hi = a.band_hi;
	}
	cnt_rank_answer_release(&a);
	cnt_view_close(&v);
	return rc;
}

int cnt_explain_sealed_check(const char *dir, const cnt_explain_opts *o, cnt_explain_check *c, char *what,
	size_t wn, cnt_err *err)
{
	cnt_seal_dir s;
	cnt_buf show = CNT_BUF_INIT;
	int rc;

	if (o->board->window != CNT_WIN_SEASON)
		return cnt_err_set(err, "board '%s' has no seasons (its window is %s)", o->board->board_id,
			o->window_label);
	rc = cnt_seal_dir_open(&s, dir, 0, err);   /* closed either way (seal.h) */
	if (rc == 0)
		rc = cnt_seal_show(&s, o->window_label, o->scope ? o->scope : "global", 0, &show, err);
	if (rc == 0)
		rc = cnt_explain_sealed((const char *)show.p, show.len, o->member, c, err);
	if (rc == 0) {
		snprintf(what, wn, "sealed standing of season %s in %s, corrections applied", o->window_label, dir);
		c->what = what;
	}
	cnt_seal_dir_close(&s);
	cnt_buf_release(&show);
	return rc;
}
