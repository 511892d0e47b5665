/*
 * viewdiff.c - two passes over two mapped, verified views (see viewdiff.h).
 */
#include "view/viewdiff.h"

#include "count/estimate.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "avro/json.h"
#include "base/outfile.h"
#include "view/view.h"

typedef struct ctx {
	const cnt_view *L, *R;
	const cnt_viewdiff_opts *o;
	cnt_viewdiff_stats *st;
	cnt_counter_type type;
	double tol;
	cnt_buf out;
} ctx;

int cnt_viewdiff_values_equal(cnt_counter_type t, int64_t a, int64_t b, double tol)
{
	double da = fabs((double)a), db = fabs((double)b);

	if (a == b)
		return 1;
	if (!cnt_estimate_is(t))
		return 0;
	return fabs((double)a - (double)b) <= tol * (da > db ? da : db);
}

static int flush(ctx *c, size_t at_least, cnt_err *err)
{
	if (c->out.len == 0 || c->out.len < at_least)
		return 0;
	if (cnt_write_all(c->o->fd, c->out.p, c->out.len) != 0)
		return cnt_err_write(err, errno, "cannot write standard output");
	c->out.len = 0;
	return 0;
}

/* Whether the next difference is printed (and counts it as shown). */
static int showing(ctx *c)
{
	if (c->o->quiet || (c->o->max_shown >= 0 && c->st->shown >= (uint64_t)c->o->max_shown))
		return 0;
	c->st->shown++;
	return 1;
}

/* ---- the descriptions ---------------------------------------------------- */

static int field_str(ctx *c, const char *name, const char *l, const char *r, cnt_err *err)
{
	int rc = 0;

	if ((l == NULL && r == NULL) || (l && r && strcmp(l, r) == 0))
		return 0;
	c->st->fields++;
	if (!showing(c))
		return 0;
	rc |= cnt_buf_printf(&c->out, "{\"field\":\"%s\",\"left\":", name);
	rc |= l ? cnt_json_string(&c->out, (const uint8_t *)l, strlen(l), 0) : cnt_buf_append(&c->out, "null", 4);
	rc |= cnt_buf_append(&c->out, ",\"right\":", 9);
	rc |= r ? cnt_json_string(&c->out, (const uint8_t *)r, strlen(r), 0) : cnt_buf_append(&c->out, "null", 4);
	rc |= cnt_buf_append(&c->out, "}\n", 2);
	return rc ? cnt_err_nomem(err) : 0;
}

static int field_int(ctx *c, const char *name, int64_t l, int64_t r, cnt_err *err)
{
	if (l == r)
		return 0;
	c->st->fields++;
	if (showing(c) && cnt_buf_printf(&c->out, "{\"field\":\"%s\",\"left\":%lld,\"right\":%lld}\n",
			name, (long long)l, (long long)r) != 0)
		return cnt_err_nomem(err);
	return 0;
}

static const char *order_name(int asc)
{
	return asc ? "asc" : "desc";
}

static const char *scale_name(cnt_hist_scale s)
{
	return s == CNT_HIST_LINEAR ? "linear" : "log";
}

/* The tie-break rules as one comma-separated string, into buf. */
static const char *ties(const cnt_viewdesc *d, char *buf, size_t n)
{
	size_t at = 0;

	buf[0] = 0;
	for (size_t i = 0; i < d->ntie_break && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? "," : "", cnt_viewdesc_tie_name(d->tie_break[i]));
	return buf;
}

static int compare_desc(ctx *c, cnt_err *err)
{
	const cnt_viewdesc *l = &c->L->desc, *r = &c->R->desc;
	char tl[256], tr[256];

	if (field_str(c, "board", l->board, r->board, err) ||
	    field_str(c, "tenant_id", l->tenant_id, r->tenant_id, err) ||
	    field_str(c, "counter_id", l->counter_id, r->counter_id, err) ||
	    field_int(c, "counter_version", l->counter_version, r->counter_version, err) ||
	    field_str(c, "counter_type", cnt_defs_ctype_name(l->counter_type), cnt_defs_ctype_name(r->counter_type), err) ||
	    field_str(c, "scope_kind", cnt_viewdesc_scope_kind_name(l->scope_kind),
		cnt_viewdesc_scope_kind_name(r->scope_kind), err) ||
	    field_str(c, "scope", l->scope, r->scope, err) ||
	    field_str(c, "window.kind", cnt_defs_window_name(l->window_kind), cnt_defs_window_name(r->window_kind), err) ||
	    field_str(c, "window.label", l->window_label, r->window_label, err) ||
	    field_int(c, "window.from", l->from, r->from, err) ||
	    field_int(c, "window.to", l->to, r->to, err) ||
	    field_str(c, "window.timezone", l->timezone, r->timezone, err) ||
	    field_str(c, "order", order_name(l->order_asc), order_name(r->order_asc), err) ||
	    field_str(c, "tie_break", ties(l, tl, sizeof(tl)), ties(r, tr, sizeof(tr)), err) ||
	    field_str(c, "rank_numbering", cnt_viewdesc_numbering_name(l->rank_numbering),
		cnt_viewdesc_numbering_name(r->rank_numbering), err) ||
	    field_int(c, "materialised_cap", l->materialised_cap, r->materialised_cap, err) ||
	    field_str(c, "histogram.scale", scale_name(l->hist_scale), scale_name(r->hist_scale), err))
		return -1;
	return flush(c, 1, err);
}

/* ---- the members --------------------------------------------------------- */

static int side_json(cnt_buf *out, const cnt_view_entry *e)
{
	if (e == NULL)
		return cnt_buf_append(out, "null", 4);
	return cnt_buf_printf(out, "{\"rank\":%u,\"value\":%lld,\"last_event_time\":%lld}",
		(unsigned)e->rank, (long long)e->value, (long long)e->last_event_time);
}

static int member_line(ctx *c, const char *name, size_t len, unsigned what,
	const cnt_view_entry *l, const cnt_view_entry *r, cnt_err *err)
{
	static const char *const names[] = {"value", "rank", "last_event_time"};
	int rc = 0, first = 1;

	if (!showing(c))
		return 0;
	rc |= cnt_buf_append(&c->out, "{\"member_ref\":", 14);
	rc |= cnt_json_string(&c->out, (const uint8_t *)name, len, 0);
	rc |= cnt_buf_append(&c->out, ",\"differs\":[", 12);
	for (unsigned k = 0; k < 3; k++)
		if (what & (1u << k)) {
			rc |= cnt_buf_printf(&c->out, "%s\"%s\"", first ? "" : ",", names[k]);
			first = 0;
		}
	rc |= cnt_buf_append(&c->out, "],\"left\":", 9);
	rc |= side_json(&c->out, l);
	rc |= cnt_buf_append(&c->out, ",\"right\":", 9);
	rc |= side_json(&c->out, r);
	rc |= cnt_buf_append(&c->out, "}\n", 2);
	if (rc)
		return cnt_err_nomem(err);
	return flush(c, 1u << 16, err);
}

/* Which of value (1), rank (2), last_event_time (4) differ. */
static unsigned differs(const ctx *c, const cnt_view_entry *l, const cnt_view_entry *r)
{
	unsigned w = 0;

	if (!cnt_viewdiff_values_equal(c->type, l->value, r->value, c->tol))
		w |= 1;
	if (l->rank != r->rank && (c->tol == 0 || (w & 1)))
		w |= 2;
	if (l->last_event_time != r->last_event_time)
		w |= 4;
	return w;
}

/* Whether entry i of b is named name (len bytes). */
static int same_name_at(const cnt_view *b, uint64_t i, const char *name, size_t len, cnt_err *err)
{
	const char *bn;
	size_t bl;

	if (i >= b->n)
		return 0;
	if (cnt_view_name(b, i, &bn, &bl, err) != 0)
		return -1;
	return bl == len && memcmp(bn, name, len) == 0;
}

static int compare_members(ctx *c, cnt_err *err)
{
	const cnt_view *L = c->L, *R = c->R;

	for (uint64_t i = 0; i < L->n; i++) {
		const char *name;
		size_t len;
		int64_t j;
		int same;

		if (cnt_view_name(L, i, &name, &len, err) != 0)
			return -1;
		if ((same = same_name_at(R, i, name, len, err)) < 0)
			return -1;
		j = same ? (int64_t)i : cnt_view_find(R, name, len);
		if (j < 0) {
			c->st->only_left++;
			if (member_line(c, name, len, 0, &L->entries[i], NULL, err) != 0)
				return -1;
		} else {
			unsigned w = differs(c, &L->entries[i], &R->entries[j]);

			if (w) {
				c->st->changed++;
				if (member_line(c, name, len, w, &L->entries[i], &R->entries[j], err) != 0)
					return -1;
			}
		}
		if (c->o->tick)
			c->o->tick(1);
	}
	for (uint64_t j = 0; j < R->n; j++) {
		const char *name;
		size_t len;
		int same;

		if (cnt_view_name(R, j, &name, &len, err) != 0)
			return -1;
		if ((same = same_name_at(L, j, name, len, err)) < 0)
			return -1;
		if (!same && cnt_view_find(L, name, len) < 0) {
			c->st->only_right++;
			if (member_line(c, name, len, 0, NULL, &R->entries[j], err) != 0)
				return -1;
		}
		if (c->o->tick)
			c->o->tick(1);
	}
	return flush(c, 1, err);
}

int cnt_viewdiff(const char *ldir, const char *rdir, const cnt_viewdiff_opts *o,
	cnt_viewdiff_stats *st, cnt_err *err)
{
	cnt_view L, R;
	ctx c;
	int rc = -1;

	memset(st, 0, sizeof(*st));
	memset(&c, 0, sizeof(c));
	if (cnt_view_open(&L, ldir, err) != 0)
		return -1;
	if (cnt_view_open(&R, rdir, err) != 0) {
		cnt_view_close(&L);
		return -1;
	}
	if (cnt_view_verify(&L, ldir, err) != 0 || cnt_view_verify(&R, rdir, err) != 0)
		goto done;
	c.L = &L;
	c.R = &R;
	c.o = o;
	c.st = st;
	c.type = L.desc.counter_type;
	st->sketch = c.type == CNT_CTYPE_UNIQUE;
	st->from = CNT_VIEWDIFF_TOL_EXACT;
	if (cnt_estimate_is(c.type)) {
		const cnt_counter *ctr = o->defs ? cnt_defs_counter(o->defs, L.desc.tenant_id, strlen(L.desc.tenant_id),
			L.desc.counter_id, strlen(L.desc.counter_id)) : NULL;
		const cnt_counter_version *cv = ctr == NULL ? NULL : L.desc.counter_version ?
			cnt_counter_version_get(ctr, L.desc.counter_version) : cnt_counter_version_latest(ctr);

		if (o->tolerance >= 0) {
			c.tol = o->tolerance;
			st->from = CNT_VIEWDIFF_TOL_OPTION;
		} else if (cv != NULL && cnt_estimate_declared(cv) > 0) {
			c.tol = cnt_estimate_declared(cv);
			st->from = CNT_VIEWDIFF_TOL_DECLARED;
		} else if (st->sketch) {
			c.tol = CNT_VIEWDIFF_DEFAULT_TOLERANCE;
			st->from = CNT_VIEWDIFF_TOL_DEFAULT;
		}
		if (c.tol <= 0)
			st->from = CNT_VIEWDIFF_TOL_EXACT;
	}
	st->tolerance = c.tol;
	st->left = L.n;
	st->right = R.n;
	if (compare_desc(&c, err) == 0 && compare_members(&c, err) == 0)
		rc = 0;
done:
	cnt_buf_release(&c.out);
	cnt_view_close(&L);
	cnt_view_close(&R);
	return rc;
}
