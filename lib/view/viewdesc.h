/*
 * viewdesc.h - the view description: what a ranked view is of, written by
 * cnt-project and read by cnt-rank (cnt-view(5), "The description").
 *
 * One module writes it and reads it, so the two cannot drift apart; the
 * format is described at the top of viewdesc.c.  The reader distrusts its
 * input: the text is bounded (CNT_VIEWDESC_MAX bytes) and every field is
 * checked for its type and range before the description is handed out.
 */
#ifndef CNT_VIEWDESC_H
#define CNT_VIEWDESC_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "model/defs.h"

/* The longest description a reader accepts, in bytes.  cnt-project writes
 * about 700; the bound only keeps a corrupt length from costing memory. */
#define CNT_VIEWDESC_MAX (1u << 20)
/* Bounds the reader checks, as cnt-project and cnt-definitions(5) allow. */
#define CNT_VIEWDESC_MAX_VERSION 999999
#define CNT_VIEWDESC_MAX_BINS (1u << 17)

typedef struct cnt_viewdesc {
	/* Strings: borrowed for cnt_viewdesc_write(); owned by the
	 * description after cnt_viewdesc_parse() (until _release). */
	const char *board, *tenant_id, *counter_id;
	int counter_version;              /* 0: null, every version */
	cnt_counter_type counter_type;
	cnt_scope_kind scope_kind;
	const char *scope;
	int version;                      /* 1 .. CNT_VIEWDESC_MAX_VERSION */
	cnt_window_kind window_kind;
	const char *window_label, *timezone;
	int64_t from, to;                 /* [from, to), UTC epoch ms */
	int has_as_of;                    /* 0: as_of null, the view covers no log */
	int64_t as_of;                    /* = log_position.max_ingest_time */
	int64_t built_at;
	int order_asc;
	size_t ntie_break;                /* 1 .. CNT_TIE_MAX, last MEMBER_REF_ASC */
	cnt_tie_break tie_break[CNT_TIE_MAX];
	cnt_rank_numbering rank_numbering;
	int64_t materialised_cap;         /* >= 1 */
	int64_t freshness_budget_s;       /* >= 0 */
	cnt_hist_scale hist_scale;
	uint64_t bins, members, head;     /* as in index.bin's header */
	/* A verified view (cnt-project --verified): the count after the audit
	 * audit_id, over events before its watermark, which is then as_of.
	 * 0 and NULL for a fast view (the keys are not written). */
	int verified;
	const char *audit_id;
	/* A view of an approx or unique counter: 1 when index.bin carries the
	 * error column (view.h); precision (unique only, else 0) the smallest
	 * sketch precision of its members.  0 and 0: not written. */
	int errors;
	int precision;
	void *json_;                      /* the parsed document, for the strings */
} cnt_viewdesc;

/* Fills the fields that come from the board (tenant, counter, pinned
 * version, scope kind, order, tie-break, numbering, cap, budget, scale)
 * and clears the rest; ctype is the type of the counter version read.
 * Strings are borrowed from b. */
void cnt_viewdesc_from_board(cnt_viewdesc *d, const cnt_leaderboard *b, cnt_counter_type ctype);

/* Appends d to out as one line of compact JSON (no newline), keys in the
 * documented order.  Returns 0, or -1 with err set: out of memory, or a
 * string that is not valid UTF-8 (JSON text must be), or a field out of
 * the range the reader accepts (so whatever is written can be read). */
int cnt_viewdesc_write(const cnt_viewdesc *d, cnt_buf *out, cnt_err *err);

/* Parses n bytes of description (need not be NUL-terminated) into d.
 * Returns 0, the caller then owning d until cnt_viewdesc_release(); or -1
 * with err saying what is wrong ("$.window.from: expected an integer"),
 * d released.  Unknown keys are ignored, so that a newer writer may add
 * some; every documented key is required and checked. */
int cnt_viewdesc_parse(cnt_viewdesc *d, const char *text, size_t n, cnt_err *err);

/* Frees what cnt_viewdesc_parse() allocated; safe on a cleared or
 * released description. */
void cnt_viewdesc_release(cnt_viewdesc *d);

/* Whether the view described was stale at now (epoch ms): no as-of, or a
 * freshness budget that now is past. */
int cnt_viewdesc_stale(const cnt_viewdesc *d, int64_t now);

/* Names of the enumerations as written ("competition", ...). */
const char *cnt_viewdesc_tie_name(cnt_tie_break t);
const char *cnt_viewdesc_numbering_name(cnt_rank_numbering r);
const char *cnt_viewdesc_scope_kind_name(cnt_scope_kind k);

#endif
