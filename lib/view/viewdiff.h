/*
 * viewdiff.h - comparing two ranked views member by member (cnt-diff on
 * two view version directories, cnt-view(5)).
 *
 * What is compared.  The descriptions, field by field, except what
 * changes with every build of the same standing: version, built_at, as_of
 * and log_position (and members, head and histogram bins, which follow from
 * the members compared below).  Then every member of index.bin - not only
 * the materialised head - by member_ref: its value, its rank and its
 * last_event_time.  Values of an exact, min or max board are compared
 * exactly.  On a sketch-backed (unique) or approx board the values are
 * estimates: two are equal when |a - b| <= tolerance * max(|a|, |b|), the
 * tolerance being --tolerance, else the counter version's declared
 * tolerated_error (with definitions), else for a unique board the default
 * below, else 0 (an approx board without any); and, when the
 * tolerance is not 0, a member whose values are equal so has its rank
 * accepted whatever it is (its rank moves with its neighbours' estimates,
 * each checked on its own).
 *
 * How, in bounded memory.  Both index files are mapped (the kernel pages
 * them; nothing proportional to the members is allocated) and checked
 * whole first with cnt_view_verify(): checksums, every name in its pool and
 * found through the name table, ranks as the numbering gives them.  Then
 * two passes: the left entries in rank order, each matched to the right
 * entry at the same position when it has the same name (the common case:
 * equal views are read as two sequential streams), else found through the
 * right side's name table (one or two probes); then the right entries,
 * each looked up in the left only when the same position there holds
 * another name, for the members only the right side has.
 *
 * Output: one JSON line per difference (cnt-diff(1), OUTPUT, "Views"):
 *   {"field":"window.from","left":V,"right":V}             a description field
 *   {"member_ref":"m","differs":["value","rank"],
 *    "left":{"rank":R,"value":V,"last_event_time":T}|null,"right":...}
 * differing members in the left side's rank order, then the members only
 * the right side has, in its rank order.
 */
#ifndef CNT_VIEWDIFF_H
#define CNT_VIEWDIFF_H

#include <stdint.h>

#include "base/err.h"
#include "view/viewdesc.h"

/* The standard error of a HyperLogLog++ estimate at precision 14, the
 * default one (count/hll.h): 1.04 / sqrt(2^14) = 0.8125 %.  (A unique
 * counter that declares tolerated_error has sketches at another precision;
 * a board of it is compared with --tolerance, or the declared error.) */
#define CNT_VIEWDIFF_HLL_SE 0.008125
/* The default tolerance of a sketch-backed board: three standard errors
 * (2.44 %; two estimates of the same set differ by less with probability
 * above 99.7 %). */
#define CNT_VIEWDIFF_DEFAULT_TOLERANCE (3 * CNT_VIEWDIFF_HLL_SE)

/* Where the tolerance applied came from. */
typedef enum {
	CNT_VIEWDIFF_TOL_EXACT,    /* 0: an exact, min or max board (or none) */
	CNT_VIEWDIFF_TOL_OPTION,   /* --tolerance */
	CNT_VIEWDIFF_TOL_DECLARED, /* the counter version's tolerated_error */
	CNT_VIEWDIFF_TOL_DEFAULT   /* CNT_VIEWDIFF_DEFAULT_TOLERANCE */
} cnt_viewdiff_tol_from;

typedef struct cnt_viewdiff_opts {
	double tolerance;     /* for estimated boards; < 0: not given (above) */
	int64_t max_shown;    /* print at most this many differences; -1: all */
	int quiet;            /* print none */
	int fd;               /* where the lines go */
	void (*tick)(uint64_t);  /* members read, for progress; may be NULL */
	const cnt_defs *defs;    /* for declared tolerances, or NULL */
} cnt_viewdiff_opts;

typedef struct cnt_viewdiff_stats {
	uint64_t left, right;             /* members on each side */
	uint64_t only_left, only_right;   /* members on one side only */
	uint64_t changed;                 /* members on both sides that differ */
	uint64_t fields;                  /* description fields that differ */
	uint64_t shown;                   /* lines printed */
	double tolerance;                 /* the tolerance applied (0: exact board) */
	int sketch;                       /* 1: a sketch-backed board */
	cnt_viewdiff_tol_from from;       /* where the tolerance came from */
} cnt_viewdiff_stats;

/* Compares the views in the version directories ldir and rdir (each
 * holding index.bin and view.avro; a `current` link will do).  0 when
 * compared (st says whether they differ), or -1 with err set: a view that
 * cannot be opened or fails cnt_view_verify() (kind CNT_ERR_DATA), out of
 * memory, or a write that failed. */
int cnt_viewdiff(const char *ldir, const char *rdir, const cnt_viewdiff_opts *o,
	cnt_viewdiff_stats *st, cnt_err *err);

/* Whether st holds any difference. */
static inline int cnt_viewdiff_differ(const cnt_viewdiff_stats *st)
{
	return st->only_left + st->only_right + st->changed + st->fields > 0;
}

/* Whether two values of a board of type t are equal under tolerance tol
 * (exact unless t is CNT_CTYPE_UNIQUE or CNT_CTYPE_APPROX). */
int cnt_viewdiff_values_equal(cnt_counter_type t, int64_t a, int64_t b, double tol);

#endif
