/*
 * fingerprint.c - canonical definitions, their fingerprints and the
 * per-field compatibility rules (see fingerprint.h).
 */
#include "model/fingerprint.h"
#include "base/jsonload.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "avro/encoding.h"
#include "model/windowed.h"

enum { F_IDENT, F_MEANING, F_GROW, F_RAISE, F_NOTE, F_SEASON };

static const struct {
	const char *name;
	int cls;
} fields[] = {
	{"board_id", F_IDENT},
	{"bounds_hi", F_MEANING},
	{"bounds_lo", F_MEANING},
	{"client_writable", F_MEANING},
	{"counter_id", F_IDENT}, /* meaning for a board: see field_class() */
	{"counter_version", F_MEANING},
	{"dedup_horizon_s", F_MEANING},
	{"dimensions", F_MEANING},
	{"dedup_key", F_MEANING},
	{"effective_from", F_MEANING},
	{"freshness_budget_s", F_NOTE},
	{"histogram", F_NOTE},
	{"lateness_horizon_s", F_MEANING},
	{"materialised_cap", F_RAISE},
	{"min_watch_ms", F_MEANING},
	{"monotonic", F_MEANING},
	{"order", F_MEANING},
	{"range_from", F_MEANING},
	{"range_to", F_MEANING},
	{"rank_numbering", F_MEANING},
	{"scope_attr", F_MEANING},
	{"scope_kind", F_MEANING},
	{"tenant_id", F_IDENT},
	{"tie_break", F_MEANING},
	{"tolerated_error", F_MEANING},
	{"timezone", F_MEANING},
	{"type", F_MEANING},
	{"unit_cost_per_m", F_NOTE},
	{"version", F_IDENT},
	{"watch_attr", F_MEANING},
	{"week_start", F_MEANING},
	{"window", F_MEANING},
	{"windows", F_GROW},
};

static int is_season(json_t *def)
{
	return json_object_get(def, "season_id") != NULL;
}

static int is_board(json_t *def)
{
	return !is_season(def) && json_object_get(def, "board_id") != NULL;
}

/* Unknown fields (a def from a newer cnt) count as meaning. */
static int field_class(json_t *def, const char *name)
{
	size_t i;

	if (is_season(def))
		return strcmp(name, "season_id") == 0 ? F_IDENT : F_SEASON;
	for (i = 0; i < sizeof fields / sizeof fields[0]; i++)
		if (strcmp(fields[i].name, name) == 0) {
			/* On a board, which counter it ranks is meaning. */
			if (fields[i].cls == F_IDENT && is_board(def) &&
			    strcmp(name, "board_id") != 0)
				return F_MEANING;
			return fields[i].cls;
		}
	return F_MEANING;
}

static int set(json_t *o, const char *k, json_t *v)
{
	return v == NULL || json_object_set_new(o, k, v) != 0 ? -1 : 0;
}

json_t *cnt_fp_counter_def(const cnt_counter *c, const cnt_counter_version *v)
{
	json_t *o = json_object(), *w = json_array();
	int k, bad = 0;

	if (o == NULL || w == NULL)
		goto fail;
	for (k = 0; k < CNT_WIN_COUNT; k++)
		if ((v->windows & CNT_WIN_BIT(k)) &&
		    json_array_append_new(w, json_string(cnt_defs_window_name((cnt_window_kind)k))) != 0)
			goto fail;
	bad |= set(o, "tenant_id", json_string(c->tenant_id));
	bad |= set(o, "counter_id", json_string(c->counter_id));
	bad |= set(o, "version", json_integer(v->version));
	bad |= set(o, "type", json_string(cnt_defs_ctype_name(v->type)));
	bad |= set(o, "bounds_lo", json_integer(v->bounds_lo));
	bad |= set(o, "bounds_hi", json_integer(v->bounds_hi));
	bad |= set(o, "lateness_horizon_s", json_integer(v->lateness_horizon_s));
	bad |= set(o, "dedup_key", json_string(cnt_defs_enum_name(CNT_ENUM_DEDUP_KEY, v->dedup_key)));
	bad |= set(o, "dedup_horizon_s", json_integer(v->dedup_horizon_s));
	bad |= set(o, "client_writable", json_boolean(v->client_writable));
	bad |= set(o, "effective_from", v->effective_from_ms == INT64_MIN
					     ? json_null() : json_integer(v->effective_from_ms));
	bad |= set(o, "timezone", json_string(c->tenant != NULL ? c->tenant->timezone : ""));
	bad |= set(o, "unit_cost_per_m", json_real(v->unit_cost_per_m));
	bad |= set(o, "windows", w);
	/* Only a gated version names its gate, so versions without one keep
	 * the fingerprints they had before the gate existed. */
	if (v->min_watch_ms > 0) {
		bad |= set(o, "min_watch_ms", json_integer(v->min_watch_ms));
		bad |= set(o, "watch_attr", json_string(v->watch_attr));
	}
	/* Only when declared, so that the fingerprints of versions without
	 * dimensions stay what they were. */
	if (v->ndimensions > 0) {
		json_t *dims = json_array();

		for (size_t i = 0; dims != NULL && i < v->ndimensions; i++)
			if (json_array_append_new(dims, json_string(v->dimensions[i])) != 0) {
				json_decref(dims);
				dims = NULL;
			}
		bad |= set(o, "dimensions", dims);
	}
	/* Only when declared, as dimensions. */
	if (v->monotonic)
		bad |= set(o, "monotonic", json_true());
	/* Only when declared (approx, or a unique counter's precision). */
	if (v->tolerated_error > 0)
		bad |= set(o, "tolerated_error", json_real(v->tolerated_error));
	if (!bad)
		return o;
	json_decref(o);
	return NULL;
fail:
	json_decref(w);
	json_decref(o);
	return NULL;
}

json_t *cnt_fp_board_def(const cnt_leaderboard *b)
{
	json_t *o = json_object(), *t = json_array(), *h = json_object();
	size_t i;
	int bad = 0;

	if (o == NULL || t == NULL || h == NULL)
		goto fail;
	for (i = 0; i < b->ntie_break; i++)
		if (json_array_append_new(t, json_string(cnt_defs_enum_name(CNT_ENUM_TIE,
									   (int)b->tie_break[i]))) != 0)
			goto fail;
	bad |= set(h, "scale", json_string(cnt_defs_enum_name(CNT_ENUM_HIST_SCALE, (int)b->hist_scale)));
	bad |= set(h, "buckets", json_integer(b->hist_buckets));
	bad |= set(h, "width", json_integer(b->hist_width));
	bad |= set(o, "histogram", h);
	h = NULL;
	bad |= set(o, "board_id", json_string(b->board_id));
	bad |= set(o, "tenant_id", json_string(b->tenant_id));
	bad |= set(o, "counter_id", json_string(b->counter_id));
	bad |= set(o, "counter_version", json_integer(b->counter_version));
	bad |= set(o, "window", json_string(cnt_defs_window_name(b->window)));
	if (b->window == CNT_WIN_WEEK)
		bad |= set(o, "week_start", json_string(cnt_defs_enum_name(CNT_ENUM_WEEKDAY, b->week_start)));
	if (b->window == CNT_WIN_RANGE) {
		bad |= set(o, "range_from", json_string(b->range_from.text ? b->range_from.text : ""));
		bad |= set(o, "range_to", json_string(b->range_to.text ? b->range_to.text : ""));
	}
	bad |= set(o, "scope_kind", json_string(cnt_defs_enum_name(CNT_ENUM_SCOPE, (int)b->scope_kind)));
	bad |= set(o, "scope_attr", b->scope_attr ? json_string(b->scope_attr) : json_null());
	bad |= set(o, "order", json_string(cnt_defs_enum_name(CNT_ENUM_ORDER, b->order_asc)));
	bad |= set(o, "tie_break", t);
	t = NULL;
	bad |= set(o, "rank_numbering",
		   json_string(cnt_defs_enum_name(CNT_ENUM_NUMBERING, (int)b->rank_numbering)));
	bad |= set(o, "timezone", json_string(b->tenant != NULL ? b->tenant->timezone : ""));
	bad |= set(o, "materialised_cap", json_integer(b->materialised_cap));
	bad |= set(o, "freshness_budget_s", json_integer(b->freshness_budget_s));
	if (!bad)
		return o;
fail:
	json_decref(h);
	json_decref(t);
	json_decref(o);
	return NULL;
}

static const char *const season_states[] = {"open", "closing", "closed"};

json_t *cnt_fp_season_def(const cnt_season *s)
{
	json_t *o = json_object();
	int bad = 0;

	if (o == NULL)
		return NULL;
	bad |= set(o, "season_id", json_string(s->season_id));
	bad |= set(o, "board_id", json_string(s->board_id));
	bad |= set(o, "opens_at", json_string(s->opens_at.text ? s->opens_at.text : ""));
	bad |= set(o, "closes_at", json_string(s->closes_at.text ? s->closes_at.text : ""));
	bad |= set(o, "timezone", json_string(s->timezone ? s->timezone : ""));
	bad |= set(o, "state", json_string(season_states[s->state <= CNT_SEASON_CLOSED ? s->state : 0]));
	if (!bad)
		return o;
	json_decref(o);
	return NULL;
}

static int state_rank(json_t *v)
{
	const char *s = json_string_value(v);

	for (int i = 0; s != NULL && i < 3; i++)
		if (strcmp(s, season_states[i]) == 0)
			return i;
	return -1;
}

int cnt_fp_hex(json_t *def, char hex[CNT_FP_HEX], cnt_err *err)
{
	json_t *m = json_object();
	const char *k;
	json_t *v;
	char *text = NULL;
	XXH128_hash_t h;
	cnt_buf b = {0};

	if (m == NULL)
		return cnt_err_nomem(err);
	if (!json_is_object(def) || (json_object_get(def, "board_id") == NULL &&
				     json_object_get(def, "version") == NULL && !is_season(def))) {
		json_decref(m);
		return cnt_err_set(err, "fingerprints: a definition without its identity");
	}
	json_object_foreach(def, k, v) {
		int cls = field_class(def, k);
		if ((cls == F_IDENT || cls == F_MEANING) && json_object_set(m, k, v) != 0)
			goto nomem;
	}
	text = cnt_json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	if (text == NULL || cnt_buf_append(&b, "cnt-fp/1\n", 9) != 0 ||
	    cnt_buf_append(&b, text, strlen(text)) != 0)
		goto nomem;
	h = XXH3_128bits(b.p, b.len);
	snprintf(hex, CNT_FP_HEX, "%016" PRIx64 "%016" PRIx64, (uint64_t)h.high64, (uint64_t)h.low64);
	free(text);
	cnt_buf_release(&b);
	json_decref(m);
	return 0;
nomem:
	free(text);
	cnt_buf_release(&b);
	json_decref(m);
	return cnt_err_nomem(err);
}

int cnt_fp_label(json_t *def, cnt_buf *b, cnt_err *err)
{
	const char *bid = json_string_value(json_object_get(def, "board_id"));
	const char *sid = json_string_value(json_object_get(def, "season_id"));
	int r;

	b->len = 0;
	if (sid != NULL)
		r = cnt_buf_printf(b, "season %s", sid);
	else if (bid != NULL)
		r = cnt_buf_printf(b, "board %s", bid);
	else {
		const char *t = json_string_value(json_object_get(def, "tenant_id"));
		const char *c = json_string_value(json_object_get(def, "counter_id"));
		json_t *v = json_object_get(def, "version");
		if (t == NULL || c == NULL || !json_is_integer(v))
			return cnt_err_set(err, "fingerprints: a definition without its identity");
		r = cnt_buf_printf(b, "%s/%s v%" JSON_INTEGER_FORMAT, t, c, json_integer_value(v));
	}
	if (r != 0 || cnt_buf_putc(b, 0) != 0)
		return cnt_err_nomem(err);
	b->len--;
	return 0;
}

/* v as people read it, into b (NUL-terminated). */
static int show(json_t *v, cnt_buf *b)
{
	size_t i;
	json_t *e;

	b->len = 0;
	if (v == NULL || json_is_null(v))
		return cnt_buf_printf(b, "(none)");
	if (json_is_string(v))
		return cnt_buf_printf(b, "%s", json_string_value(v));
	if (json_is_array(v)) {
		if (json_array_size(v) == 0)
			return cnt_buf_printf(b, "(none)");
		json_array_foreach(v, i, e) {
			const char *s = json_string_value(e);
			if (cnt_buf_printf(b, "%s%s", i ? "," : "", s ? s : "?") != 0)
				return -1;
		}
		return 0;
	}
	if (json_is_real(v)) {
		/* the shortest decimal that reads back the same: 0.05, not
		 * 0.050000000000000003 as %.17g gives */
		double d = json_real_value(v);
		char t[40];

		for (int prec = 1; prec <= 17; prec++) {
			snprintf(t, sizeof t, "%.*g", prec, d);
			if (strtod(t, NULL) == d)
				break;
		}
		if (strpbrk(t, ".eEn") == NULL)
			strcat(t, ".0");   /* a real, as json_dumps writes one */
		return cnt_buf_printf(b, "%s", t);
	}
	{
		char *t = cnt_json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		int r;
		if (t == NULL)
			return -1;
		r = cnt_buf_printf(b, "%s", t);
		free(t);
		return r;
	}
}

/* Is every string of array a also in array b? */
static int subset(json_t *a, json_t *b)
{
	size_t i, j;
	json_t *x, *y;

	if (!json_is_array(a) || !json_is_array(b))
		return 0;
	json_array_foreach(a, i, x) {
		int found = 0;
		json_array_foreach(b, j, y)
			if (json_equal(x, y))
				found = 1;
		if (!found)
			return 0;
	}
	return 1;
}

static int compatible(int cls, const char *field, json_t *old_def, json_t *o, json_t *n)
{
	switch (cls) {
	case F_SEASON:
		/* the state only moves forward; the rest only while open */
		if (strcmp(field, "state") == 0)
			return state_rank(o) >= 0 && state_rank(n) >= state_rank(o);
		return state_rank(json_object_get(old_def, "state")) == 0;
	case F_NOTE:
		return 1;
	case F_GROW:
		return subset(o, n);
	case F_RAISE:
		return json_is_integer(o) && json_is_integer(n) &&
		       json_integer_value(n) >= json_integer_value(o);
	default:
		return 0;
	}
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int cnt_fp_diff(json_t *old, json_t *new_def, cnt_fp_change_fn *fn, void *ctx,
		cnt_err *err)
{
	const char **keys = NULL;
	size_t nk = 0, i;
	const char *k;
	json_t *v;
	cnt_buf lab = {0}, from = {0}, to = {0};
	int nre = 0, r = 0;

	keys = malloc((json_object_size(old) + json_object_size(new_def) + 1) * sizeof *keys);
	if (keys == NULL)
		return cnt_err_nomem(err);
	json_object_foreach(old, k, v)
		keys[nk++] = k;
	json_object_foreach(new_def, k, v)
		if (json_object_get(old, k) == NULL)
			keys[nk++] = k;
	qsort(keys, nk, sizeof *keys, cmpstr);
	if (cnt_fp_label(old, &lab, err) != 0) {
		r = -1;
		goto out;
	}
	for (i = 0; i < nk; i++) {
		json_t *o = json_object_get(old, keys[i]), *n = json_object_get(new_def, keys[i]);
		int cls = field_class(old, keys[i]);
		cnt_fp_change ch;

		if ((o != NULL && n != NULL && json_equal(o, n)) || cls == F_IDENT)
			continue;
		if (show(o, &from) != 0 || cnt_buf_putc(&from, 0) != 0 || show(n, &to) != 0 ||
		    cnt_buf_putc(&to, 0) != 0) {
			r = cnt_err_nomem(err);
			goto out;
		}
		ch.label = (const char *)lab.p;
		ch.field = keys[i];
		ch.from = (const char *)from.p;
		ch.to = (const char *)to.p;
		ch.reinterprets = !compatible(cls, keys[i], old, o, n);
		ch.next_version = 0;
		nre += ch.reinterprets;
		if (fn != NULL && (r = fn(ctx, &ch)) != 0)
			goto out;
	}
	r = nre;
out:
	free(keys);
	cnt_buf_release(&lab);
	cnt_buf_release(&from);
	cnt_buf_release(&to);
	return r;
}

json_t *cnt_fp_entry(json_t *def, cnt_err *err)
{
	char hex[CNT_FP_HEX];
	json_t *m, *e;
	const char *k;
	json_t *v;

	if (cnt_fp_hex(def, hex, err) != 0)
		return NULL;
	if ((m = json_object()) == NULL) {
		cnt_err_nomem(err);
		return NULL;
	}
	json_object_foreach(def, k, v) {
		int cls = field_class(def, k);
		if ((cls == F_IDENT || cls == F_MEANING) && json_object_set(m, k, v) != 0) {
			json_decref(m);
			cnt_err_nomem(err);
			return NULL;
		}
	}
	if ((e = json_object()) == NULL || json_object_set_new(e, "fp", json_string(hex)) != 0 ||
	    json_object_set(e, "def", m) != 0) {
		json_decref(e);
		e = NULL;
		cnt_err_nomem(err);
	}
	json_decref(m);
	return e;
}

json_t *cnt_fp_table_parse(const void *text, size_t n, cnt_err *err)
{
	json_error_t je;
	json_t *t = cnt_json_loadb(text, n, JSON_REJECT_DUPLICATES, &je), *e;
	const char *k;
	char hex[CNT_FP_HEX];
	cnt_buf lab = {0};

	if (t == NULL && cnt_json_oom(&je)) {
		cnt_err_nomem(err);
		return NULL;
	}
	if (t == NULL || !json_is_object(t)) {
		cnt_err_set(err, "fingerprints: not a JSON object%s%s", t == NULL ? ": " : "",
			    t == NULL ? je.text : "");
		json_decref(t);
		return NULL;
	}
	json_object_foreach(t, k, e) {
		json_t *def = json_object_get(e, "def");
		const char *fp = json_string_value(json_object_get(e, "fp"));
		if (!json_is_object(def) || fp == NULL) {
			cnt_err_set(err, "fingerprints: entry '%s' lacks its fp or def", k);
			goto fail;
		}
		if (cnt_fp_hex(def, hex, err) != 0 || cnt_fp_label(def, &lab, err) != 0)
			goto fail;
		if (strcmp(hex, fp) != 0 || strcmp((const char *)lab.p, k) != 0) {
			cnt_err_set(err, "fingerprints: entry '%s' does not match its definition", k);
			goto fail;
		}
	}
	cnt_buf_release(&lab);
	return t;
fail:
	cnt_buf_release(&lab);
	json_decref(t);
	return NULL;
}

/* The def d now gives for the entry recorded as old; NULL with *missing
 * set when d no longer defines it, NULL alone when out of memory. */
static json_t *current_def(const cnt_defs *d, json_t *old, int *missing)
{
	const char *bid = json_string_value(json_object_get(old, "board_id"));
	const char *sid = json_string_value(json_object_get(old, "season_id"));
	*missing = 0;
	if (sid != NULL) {
		const cnt_season *s = cnt_defs_season(d, sid, strlen(sid));
		if (s == NULL) {
			*missing = 1;
			return NULL;
		}
		return cnt_fp_season_def(s);
	} else if (bid != NULL) {
		const cnt_leaderboard *b = cnt_defs_board(d, bid, strlen(bid));
		if (b == NULL) {
			*missing = 1;
			return NULL;
		}
		return cnt_fp_board_def(b);
	} else {
		const char *t = json_string_value(json_object_get(old, "tenant_id"));
		const char *c = json_string_value(json_object_get(old, "counter_id"));
		json_int_t v = json_integer_value(json_object_get(old, "version"));
		const cnt_counter *ct = t && c ? cnt_defs_counter(d, t, strlen(t), c, strlen(c)) : NULL;
		const cnt_counter_version *cv =
			ct && v > 0 && v <= INT32_MAX ? cnt_counter_version_get(ct, (int)v) : NULL;
		if (cv == NULL) {
			*missing = 1;
			return NULL;
		}
		return cnt_fp_counter_def(ct, cv);
	}
}

static int first_refusal(void *ctx, const cnt_fp_change *ch)
{
	cnt_err *err = ctx;

	if (!ch->reinterprets)
		return 0;
	if (strncmp(ch->label, "board ", 6) == 0)
		cnt_err_set(err, "%s: %s %s \u2192 %s; a change that reinterprets standings needs a new board",
			    ch->label, ch->field, ch->from, ch->to);
	else
		cnt_err_set(err, "%s: %s %s \u2192 %s; a change that reinterprets counted events needs a new "
			    "version", ch->label, ch->field, ch->from, ch->to);
	return 1;
}

int cnt_fp_entry_check(json_t *entry, const cnt_defs *d, cnt_err *err)
{
	json_t *old = json_object_get(entry, "def"), *now, *ne;
	const char *ofp = json_string_value(json_object_get(entry, "fp")), *nfp;
	int missing, r;

	if (d == NULL || (now = current_def(d, old, &missing)) == NULL) {
		if (d != NULL && !missing)
			return cnt_err_nomem(err);
		/* Not declared here: a tool meeting its events treats them as
		 * unknown, so nothing is reinterpreted. */
		return 0;
	}
	ne = cnt_fp_entry(now, err);
	json_decref(now);
	if (ne == NULL)
		return -1;
	nfp = json_string_value(json_object_get(ne, "fp"));
	r = 0;
	if (ofp == NULL || strcmp(ofp, nfp) != 0) {
		r = cnt_fp_diff(old, json_object_get(ne, "def"), first_refusal, err, err);
		if (r == 0) /* same fields, another hash: a def from another cnt */
			cnt_err_set(err, "fingerprint %s recorded, %s defined", ofp ? ofp : "(none)", nfp);
		r = -1;
	}
	json_decref(ne);
	return r;
}

int cnt_fp_table_check(json_t *table, const cnt_defs *d, cnt_err *err)
{
	const char *k;
	json_t *e;

	json_object_foreach(table, k, e)
		if (cnt_fp_entry_check(e, d, err) != 0)
			return -1;
	return 0;
}

/* ---- cnt-defs check ----------------------------------------------------- */

static int max_version(const cnt_counter *a, const cnt_counter *b)
{
	int m = cnt_counter_version_latest(a)->version;
	if (b != NULL && cnt_counter_version_latest(b)->version > m)
		m = cnt_counter_version_latest(b)->version;
	return m;
}

typedef struct {
	cnt_fp_change_fn *fn;
	void *ctx;
	int next;
} relay;

static int relay_fn(void *ctx, const cnt_fp_change *ch)
{
	relay *r = ctx;
	cnt_fp_change c = *ch;

	c.next_version = r->next;
	return r->fn(r->ctx, &c);
}

/* Reports old (NULL: added) against new_def (NULL: removed). */
static int report(json_t *old, json_t *new_def, int next, cnt_fp_change_fn *fn, void *ctx,
		  cnt_err *err)
{
	cnt_buf lab = {0};
	cnt_fp_change ch;
	relay rl = {fn, ctx, next};
	int r;

	if (old == NULL && new_def == NULL)
		return cnt_err_nomem(err);
	if (old != NULL && new_def != NULL)
		return cnt_fp_diff(old, new_def, relay_fn, &rl, err);
	if (cnt_fp_label(old ? old : new_def, &lab, err) != 0)
		return -1;
	ch.label = (const char *)lab.p;
	ch.field = "definition";
	ch.from = old ? "declared" : "(none)";
	ch.to = old ? "(removed)" : "declared";
	ch.reinterprets = old != NULL && !(is_season(old) && state_rank(json_object_get(old, "state")) == 0);
	ch.next_version = 0;
	r = fn(ctx, &ch);
	cnt_buf_release(&lab);
	return r < 0 ? r : (int)ch.reinterprets;
}

int cnt_fp_compare_defs(const cnt_defs *cur, const cnt_defs *prop, cnt_fp_change_fn *fn,
			void *ctx, cnt_err *err)
{
	size_t i, j;
	int total = 0, r;

	for (i = 0; i < cnt_defs_ncounters(cur); i++) {
		const cnt_counter *c = cnt_defs_counter_at(cur, i);
		const cnt_counter *p = cnt_defs_counter(prop, c->tenant_id, strlen(c->tenant_id),
							c->counter_id, strlen(c->counter_id));
		for (j = 0; j < c->nversions; j++) {
			const cnt_counter_version *pv =
				p ? cnt_counter_version_get(p, c->versions[j].version) : NULL;
			json_t *o = cnt_fp_counter_def(c, &c->versions[j]);
			json_t *n = pv ? cnt_fp_counter_def(p, pv) : NULL;
			r = (pv != NULL && n == NULL) || o == NULL
				    ? cnt_err_nomem(err)
				    : report(o, n, max_version(c, p) + 1, fn, ctx, err);
			json_decref(o);
			json_decref(n);
			if (r < 0)
				return -1;
			total += r;
		}
	}
	for (i = 0; i < cnt_defs_ncounters(prop); i++) {
		const cnt_counter *p = cnt_defs_counter_at(prop, i);
		const cnt_counter *c = cnt_defs_counter(cur, p->tenant_id, strlen(p->tenant_id),
							p->counter_id, strlen(p->counter_id));
		for (j = 0; j < p->nversions; j++) {
			json_t *n;
			if (c != NULL && cnt_counter_version_get(c, p->versions[j].version) != NULL)
				continue;
			n = cnt_fp_counter_def(p, &p->versions[j]);
			r = report(NULL, n, 0, fn, ctx, err);
			json_decref(n);
			if (r < 0)
				return -1;
		}
	}
	for (i = 0; i < cnt_defs_nboards(cur); i++) {
		const cnt_leaderboard *b = cnt_defs_board_at(cur, i);
		const cnt_leaderboard *p = cnt_defs_board(prop, b->board_id, strlen(b->board_id));
		json_t *o = cnt_fp_board_def(b), *n = p ? cnt_fp_board_def(p) : NULL;
		r = (p != NULL && n == NULL) || o == NULL ? cnt_err_nomem(err)
							  : report(o, n, 0, fn, ctx, err);
		json_decref(o);
		json_decref(n);
		if (r < 0)
			return -1;
		total += r;
	}
	for (i = 0; i < cnt_defs_nboards(prop); i++) {
		const cnt_leaderboard *p = cnt_defs_board_at(prop, i);
		json_t *n;
		if (cnt_defs_board(cur, p->board_id, strlen(p->board_id)) != NULL)
			continue;
		n = cnt_fp_board_def(p);
		r = report(NULL, n, 0, fn, ctx, err);
		json_decref(n);
		if (r < 0)
			return -1;
	}
	for (i = 0; i < cnt_defs_nseasons(cur); i++) {
		const cnt_season *s = cnt_defs_season_at(cur, i);
		const cnt_season *p = cnt_defs_season(prop, s->season_id, strlen(s->season_id));
		json_t *o = cnt_fp_season_def(s), *n = p ? cnt_fp_season_def(p) : NULL;
		r = (p != NULL && n == NULL) || o == NULL ? cnt_err_nomem(err)
							  : report(o, n, 0, fn, ctx, err);
		json_decref(o);
		json_decref(n);
		if (r < 0)
			return -1;
		total += r;
	}
	for (i = 0; i < cnt_defs_nseasons(prop); i++) {
		const cnt_season *p = cnt_defs_season_at(prop, i);
		json_t *n;
		if (cnt_defs_season(cur, p->season_id, strlen(p->season_id)) != NULL)
			continue;
		n = cnt_fp_season_def(p);
		r = n == NULL ? cnt_err_nomem(err) : report(NULL, n, 0, fn, ctx, err);
		json_decref(n);
		if (r < 0)
			return -1;
	}
	return total;
}

/* ---- the counter versions an output holds ------------------------------ */

/* The policy: the definitions, what the inputs recorded, the trackers. */
static struct {
	int on;
	const cnt_defs *defs;
	json_t *known;  /* label -> entry */
	json_t *from;   /* label -> the input that recorded it first */
} pol;

#define FP_RECENT 8

struct cnt_fp_set {
	json_t *have;   /* label -> entry, or null: a version nothing defines */
	/* tenant, NUL, counter, NUL, version of the last FP_RECENT adds
	 * (round robin): a hit needs no label nor lookup */
	cnt_buf recent[FP_RECENT];
	unsigned next;
	cnt_buf lab;
	cnt_fp_records kind;
	/* track_record: the encoded tenant, counter and version of the last
	 * record tracked (lastn 0: none).  Records come in runs of one
	 * counter, and bytes equal to these are a version added already. */
	uint8_t last[128];
	size_t lastn;
};

cnt_fp_set *cnt_fp_set_new(cnt_err *err)
{
	cnt_fp_set *s = calloc(1, sizeof(*s));

	if (s == NULL || (s->have = json_object()) == NULL) {
		free(s);
		cnt_err_nomem(err);
		return NULL;
	}
	return s;
}

void cnt_fp_set_free(cnt_fp_set *s)
{
	if (s == NULL)
		return;
	json_decref(s->have);
	for (int i = 0; i < FP_RECENT; i++)
		cnt_buf_release(&s->recent[i]);
	cnt_buf_release(&s->lab);
	free(s);
}

/* The entry of the policy for label (t, c, v): a new reference, or
 * json_null() when nothing defines it; NULL when out of memory. */
static json_t *resolve(const char *t, size_t tn, const char *c, size_t cn, int32_t v, const char *label,
	cnt_err *err)
{
	const cnt_counter *ct = pol.defs ? cnt_defs_counter(pol.defs, t, tn, c, cn) : NULL;
	const cnt_counter_version *cv = ct && v > 0 ? cnt_counter_version_get(ct, v) : NULL;
	json_t *e;

	if (cv != NULL) {
		json_t *def = cnt_fp_counter_def(ct, cv);
		if (def == NULL) {
			cnt_err_nomem(err);
			return NULL;
		}
		e = cnt_fp_entry(def, err);
		json_decref(def);
		return e;
	}
	if (pol.known != NULL && (e = json_object_get(pol.known, label)) != NULL)
		return json_incref(e);
	if ((e = json_null()) == NULL)
		cnt_err_nomem(err);
	return e;
}

int cnt_fp_set_add(cnt_fp_set *s, const char *t, size_t tn, const char *c, size_t cn, int32_t v,
	cnt_err *err)
{
	size_t n = tn + cn + 2 + sizeof(v);
	json_t *e;
	cnt_buf *last;

	for (int i = 0; i < FP_RECENT; i++) {
		const cnt_buf *r = &s->recent[i];

		if (r->len == n && memcmp(r->p, t, tn) == 0 && r->p[tn] == 0 && memcmp(r->p + tn + 1, c, cn) == 0 &&
		    r->p[tn + 1 + cn] == 0 && memcmp(r->p + tn + cn + 2, &v, sizeof(v)) == 0)
			return 0;
	}
	last = &s->recent[s->next++ % FP_RECENT];
	last->len = 0;
	if (cnt_buf_append(last, t, tn) || cnt_buf_putc(last, 0) || cnt_buf_append(last, c, cn) ||
	    cnt_buf_putc(last, 0) || cnt_buf_append(last, &v, sizeof(v))) {
		last->len = 0;
		return cnt_err_nomem(err);
	}
	/* A name holding NUL cannot be in any definitions or table. */
	if (memchr(t, 0, tn) != NULL || memchr(c, 0, cn) != NULL)
		return 0;
	s->lab.len = 0;
	if (cnt_buf_printf(&s->lab, "%.*s/%.*s v%d", (int)tn, t, (int)cn, c, (int)v) != 0 ||
	    cnt_buf_putc(&s->lab, 0) != 0)
		return cnt_err_nomem(err);
	if (json_object_get(s->have, (const char *)s->lab.p) != NULL)
		return 0;
	if ((e = resolve(t, tn, c, cn, v, (const char *)s->lab.p, err)) == NULL)
		return -1;
	/* nocheck: a name that is not UTF-8 is simply never defined */
	if (json_object_set_new_nocheck(s->have, (const char *)s->lab.p, e) != 0)
		return cnt_err_nomem(err);
	return 0;
}

int cnt_fp_set_dump(const cnt_fp_set *s, const cnt_leaderboard *b, char **text, cnt_err *err)
{
	json_t *t = json_object(), *e;
	const char *k;

	*text = NULL;
	if (t == NULL)
		return cnt_err_nomem(err);
	json_object_foreach(s->have, k, e)
		if (!json_is_null(e) && json_object_set(t, k, e) != 0)
			goto nomem;
	if (b != NULL) {
		json_t *def = cnt_fp_board_def(b);
		cnt_buf lab = CNT_BUF_INIT;
		int rc = -1;

		e = NULL;
		if (def == NULL)
			cnt_err_nomem(err);
		else if ((e = cnt_fp_entry(def, err)) != NULL && cnt_fp_label(def, &lab, err) == 0)
			rc = json_object_set(t, (const char *)lab.p, e) != 0 ? cnt_err_nomem(err) : 0;
		json_decref(def);
		json_decref(e);
		cnt_buf_release(&lab);
		if (rc != 0) {
			json_decref(t);
			return -1;
		}
	}
	if (json_object_size(t) != 0 && (*text = cnt_json_dumps(t, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
		goto nomem;
	json_decref(t);
	return 0;
nomem:
	json_decref(t);
	return cnt_err_nomem(err);
}

/* ---- the process's policy ----------------------------------------------- */

int cnt_fp_policy(const cnt_defs *d, cnt_err *err)
{
	cnt_fp_policy_end();
	if ((pol.known = json_object()) == NULL || (pol.from = json_object()) == NULL) {
		cnt_fp_policy_end();
		return cnt_err_nomem(err);
	}
	pol.defs = d;
	pol.on = 1;
	return 0;
}

void cnt_fp_policy_end(void)
{
	json_decref(pol.known);
	json_decref(pol.from);
	memset(&pol, 0, sizeof(pol));
}

/* Adds entry e (label k) recorded by input name to what the inputs
 * recorded; another fingerprint for the same label is refused. */
static int know(const char *k, json_t *e, const char *name, cnt_err *err)
{
	json_t *have = json_object_get(pol.known, k);
	const char *fa, *fb, *first;
	json_t *nm;

	if (have == NULL) {
		/* only ever read back for a message: any bytes, as named (a
		 * file name need not be UTF-8), so NULL is out of memory */
		if ((nm = json_string_nocheck(name)) == NULL)
			return cnt_err_nomem(err);
		if (json_object_set(pol.known, k, e) != 0) {
			json_decref(nm);
			return cnt_err_nomem(err);
		}
		/* json_object_set_new frees nm when it fails */
		return json_object_set_new(pol.from, k, nm) != 0 ? cnt_err_nomem(err) : 0;
	}
	fa = json_string_value(json_object_get(have, "fp"));
	fb = json_string_value(json_object_get(e, "fp"));
	if (fa != NULL && fb != NULL && strcmp(fa, fb) == 0)
		return 0;
	first = json_string_value(json_object_get(pol.from, k));
	{
		json_t *od = json_object_get(have, "def"), *nd = json_object_get(e, "def");
		struct { const char *field; cnt_buf a, b; } w = {NULL, CNT_BUF_INIT, CNT_BUF_INIT};
		const char *f;
		json_t *v;
		int rc;

		/* the first meaning field (sorted) in which they differ */
		json_object_foreach(nd, f, v) {
			json_t *o = json_object_get(od, f);
			if ((o == NULL || !json_equal(o, v)) && (w.field == NULL || strcmp(f, w.field) < 0))
				w.field = f;
		}
		json_object_foreach(od, f, v)
			if (json_object_get(nd, f) == NULL && (w.field == NULL || strcmp(f, w.field) < 0))
				w.field = f;
		if (w.field == NULL)
			return cnt_err_set(err, "'%s': %s: fingerprint %s here, %s in '%s'; inputs counted under two "
				"definitions of one version cannot be combined", name, k, fb ? fb : "?", fa ? fa : "?",
				first ? first : "?");
		rc = show(json_object_get(nd, w.field), &w.b) || cnt_buf_putc(&w.b, 0) ||
		     show(json_object_get(od, w.field), &w.a) || cnt_buf_putc(&w.a, 0);
		if (rc == 0)
			cnt_err_set(err, "'%s': %s: %s %s here, %s in '%s'; inputs counted under two definitions of "
				"one version cannot be combined", name, k, w.field, (const char *)w.b.p,
				(const char *)w.a.p, first ? first : "?");
		cnt_buf_release(&w.a);
		cnt_buf_release(&w.b);
		return rc ? cnt_err_nomem(err) : -1;
	}
}

int cnt_fp_input(const cnt_meta_kv *kv, size_t n, const char *name, cnt_err *err)
{
	const char *k;
	json_t *t, *e;
	size_t i;

	if (!pol.on)
		return 0;
	for (i = 0; i < n; i++)
		if (strcmp(kv[i].key, CNT_FP_META) == 0)
			break;
	if (i == n)
		return 0;
	if ((t = cnt_fp_table_parse(kv[i].val, kv[i].vlen, err)) == NULL)
		return cnt_err_prefix(err, "'%s'", name);
	json_object_foreach(t, k, e) {
		if (cnt_fp_entry_check(e, pol.defs, err) != 0) {
			json_decref(t);
			return cnt_err_prefix(err, "'%s'", name);
		}
		if (know(k, e, name, err) != 0) {
			json_decref(t);
			return -1;
		}
	}
	json_decref(t);
	return 0;
}

int cnt_fp_check_published(const cnt_meta_kv *kv, size_t n, const char *name, cnt_err *err)
{
	json_t *t;
	size_t i;
	int rc;

	if (!pol.on || pol.defs == NULL)
		return 0;
	for (i = 0; i < n; i++)
		if (strcmp(kv[i].key, CNT_FP_META) == 0)
			break;
	if (i == n)
		return 0;
	if ((t = cnt_fp_table_parse(kv[i].val, kv[i].vlen, err)) == NULL)
		return cnt_err_prefix(err, "'%s'", name);
	rc = cnt_fp_table_check(t, pol.defs, err);
	json_decref(t);
	return rc != 0 ? cnt_err_prefix(err, "'%s'", name) : 0;
}

/* ---- tracking an output --------------------------------------------------- */

static int rd_str(cnt_cur *c, const char **p, size_t *n)
{
	const uint8_t *q;

	if (cnt_bin_read_bytes(c, &q, n) != 0)
		return -1;
	*p = (const char *)q;
	return 0;
}

/* The tenant, counter and version of one record of kind k. */
static int track_record(void *ctx, const uint8_t *rec, size_t n, cnt_err *err)
{
	cnt_fp_set *s = ctx;
	cnt_cur c = {rec, rec + n};
	const uint8_t *at;
	const char *t, *ct, *skip;
	size_t tn, cn, sn;
	int64_t l;
	int32_t v;

	if (s->kind == CNT_FP_WINDOWED) {
		/* bucket_start, bucket_end, late, shard, exact, dimensions,
		 * sample, hll_precision, then the event */
		cnt_windowed w;

		if (cnt_bin_read_long(&c, &l) || cnt_bin_read_long(&c, &l) || c.p >= c.end)
			goto bad;
		c.p++;
		if (cnt_bin_read_long(&c, &l) || c.p >= c.end)
			goto bad;
		c.p++;
		if (cnt_windowed_decode_dims(&c, &w) != 0 || cnt_bin_read_long(&c, &l) != 0 ||
		    cnt_bin_read_long(&c, &l) != 0)
			goto bad; /* ... sample and hll_precision */
	}
	if (s->kind != CNT_FP_BUCKETS && (rd_str(&c, &skip, &sn) || rd_str(&c, &skip, &sn)))
		goto bad; /* event_id, idempotency_key */
	/* The same bytes as the last record's: the same version (the
	 * encoding of strings and ints is canonical), added already. */
	if (s->lastn && (size_t)(c.end - c.p) >= s->lastn && memcmp(c.p, s->last, s->lastn) == 0)
		return 0;
	at = c.p;
	if (rd_str(&c, &t, &tn) || rd_str(&c, &ct, &cn) || cnt_bin_read_int(&c, &v))
		goto bad;
	if (cnt_fp_set_add(s, t, tn, ct, cn, v, err) != 0)
		return -1;
	s->lastn = 0;
	if ((size_t)(c.p - at) <= sizeof(s->last)) {
		memcpy(s->last, at, (size_t)(c.p - at));
		s->lastn = (size_t)(c.p - at);
	}
	return 0;
bad:
	return cnt_err_set(err, "internal: a record that is not of its file's schema");
}

static int track_header(void *ctx, cnt_writer *w, cnt_err *err)
{
	char *text;
	int rc;

	if (cnt_fp_set_dump(ctx, NULL, &text, err) != 0)
		return -1;
	rc = text ? cnt_writer_meta(w, CNT_FP_META, text, strlen(text), err) : 0;
	free(text);
	return rc;
}

static void track_release(void *ctx)
{
	cnt_fp_set_free(ctx);
}

int cnt_fp_track(cnt_writer *w, cnt_fp_records kind, cnt_err *err)
{
	cnt_writer_hooks h = {track_record, track_header, track_release, NULL};
	cnt_fp_set *s;

	if ((s = cnt_fp_set_new(err)) == NULL)
		return -1;
	s->kind = kind;
	h.ctx = s;
	if (cnt_writer_defer(w, &h, err) != 0) {
		cnt_fp_set_free(s);
		return -1;
	}
	return 0;
}
