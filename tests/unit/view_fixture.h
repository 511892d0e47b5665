/*
 * view_fixture.h - small ranked views built by hand, for the unit tests of
 * view/view.h and view/rank.h (included by one test file each).
 *
 * A view is given as its members in rank order, their values and achiever
 * times, the head and the histogram edges; ranks and bin counts are worked
 * out here by the definitions of cnt-view(5), with no code of
 * lib/view/project.c, and the index is written with cnt_view_write_index()
 * into an 8-byte aligned image that cnt_view_open_mem() can open.
 */
#ifndef VIEW_FIXTURE_H
#define VIEW_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "time/tz.h"
#include "view/view.h"
#include "view/viewdesc.h"

#define FX_T0 INT64_C(1772359200000) /* 2026-03-01T10:00:00Z */
#define FX_MIN INT64_C(60000)

typedef struct fx_member {
	const char *name;
	int64_t value, last;
} fx_member;

/* A description of a global all-time board "b" in UTC, version 1, as of
 * FX_T0 + 2 h, with the given rules; members, head and bins are set when
 * the view is written. */
static inline cnt_viewdesc fx_desc(int order_asc, cnt_tie_break first_rule, cnt_rank_numbering numbering,
	int64_t cap)
{
	cnt_viewdesc d;

	memset(&d, 0, sizeof(d));
	d.board = "b";
	d.tenant_id = "t";
	d.counter_id = "pts";
	d.counter_type = CNT_CTYPE_EXACT;
	d.scope_kind = CNT_SCOPE_GLOBAL;
	d.scope = "global";
	d.version = 1;
	d.window_kind = CNT_WIN_ALL_TIME;
	d.window_label = "all_time";
	d.timezone = "UTC";
	d.from = CNT_TZ_MIN_MS;
	d.to = CNT_TZ_MAX_MS;
	d.has_as_of = 1;
	d.as_of = FX_T0 + 120 * FX_MIN;
	d.built_at = FX_T0 + 180 * FX_MIN;
	d.order_asc = order_asc;
	d.ntie_break = 0;
	if (first_rule != CNT_TIE_MEMBER_REF_ASC)
		d.tie_break[d.ntie_break++] = first_rule;
	d.tie_break[d.ntie_break++] = CNT_TIE_MEMBER_REF_ASC;
	d.rank_numbering = numbering;
	d.materialised_cap = cap;
	d.freshness_budget_s = 600;
	d.hist_scale = CNT_HIST_LINEAR;
	return d;
}

/* Whether two neighbours are tied: the same value and, under an achiever
 * rule, the same time (cnt-view(5), "Ranking"). */
static inline int fx_tied(const cnt_viewdesc *d, const fx_member *a, const fx_member *b)
{
	return a->value == b->value && (d->ntie_break == 1 || a->last == b->last);
}

/* An error column and precision for the next fx_image() (NULL: none). */
static const int64_t *fx_errors;
static int fx_precision;

/* Writes the index of m[0..n) (in rank order) into a new aligned image
 * (*img, *len; the caller frees *img).  0, or -1 with err set. */
static inline int fx_image(const cnt_viewdesc *d, const fx_member *m, size_t n, size_t head, const int64_t *edges,
	size_t nbins, uint8_t **img, size_t *len, cnt_err *err)
{
	cnt_view_entry *e = calloc(n + 1, sizeof(*e));
	uint64_t *counts = calloc(nbins, sizeof(*counts));
	char pool[4096];
	size_t plen = 0;
	cnt_view_build vb;
	FILE *f = tmpfile();
	long sz;
	int rc = -1;

	*img = NULL;
	if (e == NULL || counts == NULL || f == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		size_t nl = strlen(m[i].name), b = 0;

		e[i].value = m[i].value;
		e[i].last_event_time = m[i].last;
		e[i].name_off = plen;
		e[i].name_len = (uint32_t)nl;
		memcpy(pool + plen, m[i].name, nl);
		plen += nl;
		if (d->rank_numbering == CNT_RANK_ORDINAL || i == 0)
			e[i].rank = (uint32_t)i + 1;
		else if (fx_tied(d, &m[i - 1], &m[i]))
			e[i].rank = e[i - 1].rank;
		else
			e[i].rank = d->rank_numbering == CNT_RANK_DENSE ? e[i - 1].rank + 1 : (uint32_t)i + 1;
		while (b + 1 < nbins && edges[b + 1] <= m[i].value)
			b++;
		counts[b]++;
	}
	vb.desc = d;
	vb.n = n;
	vb.head = head;
	vb.entries = e;
	vb.pool = pool;
	vb.pool_len = plen;
	vb.nbins = nbins;
	vb.edges = edges;
	vb.counts = counts;
	vb.fingerprints = NULL;
	vb.errors = fx_errors;
	vb.precision = fx_precision;
	if (cnt_view_write_index(fileno(f), &vb, err) != 0)
		goto out;
	sz = lseek(fileno(f), 0, SEEK_END);
	if (sz <= 0 || posix_memalign((void **)img, 64, (size_t)sz) != 0 || pread(fileno(f), *img, (size_t)sz, 0) != sz) {
		cnt_err_set(err, "fixture: cannot read the index back");
		goto out;
	}
	*len = (size_t)sz;
	rc = 0;
out:
	if (rc != 0) {
		free(*img);
		*img = NULL;
	}
	if (f)
		fclose(f);
	free(e);
	free(counts);
	return rc;
}

/* cap3 of tests/rank.bats: p1 100, p2 90, p3 80 | p4 75, p5 70, p6 40,
 * p7 10; head 3; bins of width 10 from 10 (the last [100, 101)). */
static const fx_member fx_cap3[] = {
	{"p1", 100, FX_T0}, {"p2", 90, FX_T0}, {"p3", 80, FX_T0}, {"p4", 75, FX_T0},
	{"p5", 70, FX_T0}, {"p6", 40, FX_T0}, {"p7", 10, FX_T0}};
static const int64_t fx_cap3_edges[] = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 101};

/* ranking.jsonl of tests/rank.bats under earliest_achiever: a 10 (10:00),
 * b 8 (10:30), d 8 (10:30), c 8 (11:00), e 2 (12:00). */
static const fx_member fx_rk[] = {
	{"a", 10, FX_T0}, {"b", 8, FX_T0 + 30 * FX_MIN}, {"d", 8, FX_T0 + 30 * FX_MIN},
	{"c", 8, FX_T0 + 60 * FX_MIN}, {"e", 2, FX_T0 + 120 * FX_MIN}};
/* the same under member_ref_asc alone */
static const fx_member fx_rk_ref[] = {
	{"a", 10, FX_T0}, {"b", 8, FX_T0 + 30 * FX_MIN}, {"c", 8, FX_T0 + 60 * FX_MIN},
	{"d", 8, FX_T0 + 30 * FX_MIN}, {"e", 2, FX_T0 + 120 * FX_MIN}};
static const int64_t fx_rk_edges[] = {2, 5, 8, 11};

/* Opens an image of cap3 (head 3) into v; the caller frees *img after
 * cnt_view_close(). */
static inline int fx_open_cap3(cnt_view *v, uint8_t **img, cnt_err *err)
{
	cnt_viewdesc d = fx_desc(0, CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, 3);
	size_t len;

	if (fx_image(&d, fx_cap3, 7, 3, fx_cap3_edges, 10, img, &len, err) != 0)
		return -1;
	return cnt_view_open_mem(v, *img, len, "cap3", 0, err);
}

#endif
