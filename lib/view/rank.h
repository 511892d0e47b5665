/*
 * rank.h - answering questions from a ranked view (cnt-rank(1)): top N, a
 * member's rank, value and neighbourhood, and verifying a whole view.
 *
 * Ranks.  Inside the materialised head a rank is the exact one stored
 * with the entry.  Beyond it the answer is a band of positions from the
 * histogram (cnt-view(5), "Ranks beyond the head"): with b the bin of the
 * value, better the members in the bins that rank higher and same those
 * in b, the position lies in [better + 1, better + same + 1], where the
 * member's own entry is not counted as someone else.  A value outside
 * the histogram's edges (only an overlay can make one) ranks before or
 * after every member.
 *
 * Own-write overlay.  The asking member's events that the view has not
 * absorbed - of its tenant, counter (and pinned version), ingested after
 * its as-of, inside its window, each event_id once - are added as the
 * counter's type adds them (sums for exact, the smaller or larger for min
 * and max; unique counters cannot be, without sketches).  A compensation
 * (cnt-retract(1)) among them takes out the event it retracts when that
 * event is among them too, whatever the order: it is as if neither were
 * there.  One whose event the view holds is ignored: it carries its
 * event's ingest time, at or before the as-of, so it counts as absorbed
 * like that event.
 * The new value is placed in the head by a binary search under the
 * board's order and tie-breaks, leaving the member's own old entry out;
 * a tie with a neighbour shares its rank (competition and dense), dense
 * numbering continues from the member above; beyond the head, a band.
 *
 * Answers are computed into a cnt_rank_answer and then written as JSON
 * (one line) or as a table for people, by the same data.
 */
#ifndef CNT_RANK_H
#define CNT_RANK_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "view/view.h"

/* ---- questions -------------------------------------------------------- */

typedef enum {
	CNT_RANK_Q_TOP,
	CNT_RANK_Q_RANK,
	CNT_RANK_Q_AROUND,
	CNT_RANK_Q_VALUE,
	CNT_RANK_Q_VERIFY
} cnt_rank_qkind;

#define CNT_RANK_TOP_DEFAULT 10
#define CNT_RANK_TOP_MAX 1000000000      /* the largest materialised_cap */
#define CNT_RANK_AROUND_DEFAULT 5
#define CNT_RANK_AROUND_MAX 1000

typedef struct cnt_rank_question {
	cnt_rank_qkind kind;
	const char *member;       /* rank, around, value: borrowed from argv */
	uint64_t count;           /* top: N; around: k */
	uint64_t offset;          /* top: positions skipped (paging), 0 by default */
} cnt_rank_question;

/* Parses a question from the operands left after the options: argv[0] is
 * its name (top, rank, around, value, verify), the rest its arguments.
 * Counts are whole decimal numbers in range, nothing else ("2x", "+3" and
 * " 3" are refused; top 1 to CNT_RANK_TOP_MAX, around 1 to
 * CNT_RANK_AROUND_MAX), and nothing may follow a complete question.
 * 0, or -1 with err saying what is wrong (a usage error). */
int cnt_rank_parse_question(int argc, char *const *argv, cnt_rank_question *q, cnt_err *err);

/* The question's name ("top", ...). */
const char *cnt_rank_qname(cnt_rank_qkind k);

/* ---- the member directory --------------------------------------------- */

/* Display names and opt-outs: JSON lines {"member_ref":..,
 * "display_name":..,"opted_out":..}; empty lines skipped; for a member
 * given on several lines the last wins. */
typedef struct cnt_rank_dir cnt_rank_dir;

/* Reads path into a new directory the caller frees with
 * cnt_rank_dir_free().  NULL with err naming the file and line. */
cnt_rank_dir *cnt_rank_dir_load(const char *path, cnt_err *err);
void cnt_rank_dir_free(cnt_rank_dir *d);

/* ---- answering -------------------------------------------------------- */

/* What an answer is given from. */
typedef struct cnt_rank_source {
	const cnt_view *view;        /* open (its description checked) */
	const char *dir;             /* the version's directory, for verify */
	int frozen;                  /* the scope's frozen marker exists */
	int64_t now;                 /* staleness is judged at now (epoch ms) */
	const cnt_rank_dir *members; /* NULL: no directory */
	int overlay_fd;              /* events to overlay, or -1 */
	const char *overlay_name;
} cnt_rank_source;

/* One member listed in an answer. */
typedef struct cnt_rank_item {
	const char *member;          /* member_len bytes, in the view */
	size_t member_len;
	const char *display_name;    /* NUL-terminated, from the directory; NULL */
	int has_rank;                /* inside the head */
	uint32_t rank;
	int64_t value, last_event_time;
	int est;                     /* CNT_VIEW_EXACT, _ESTIMATE (error set), _UNKNOWN */
	int64_t error;               /* absolute bound at 95 % (count/estimate.h) */
} cnt_rank_item;

typedef struct cnt_rank_answer {
	cnt_rank_qkind kind;
	const cnt_view *view;
	int stale, frozen;
	const char *token;           /* the session token (view/pin.h), or NULL */
	/* top */
	uint64_t top;                /* entries given: min(N, head - offset) */
	uint64_t offset;             /* positions skipped before them */
	/* rank, around, value */
	const char *member;
	int overlaid;                /* 1: overlay read, 2: not supported (unique) */
	uint64_t overlay_events;     /* events read from the overlay and added */
	uint64_t overlay_retracted;  /* overlay events taken out by a compensation in it */
	int64_t overlay_delta;
	uint64_t overlay_read;       /* events read from the overlay, all of them */
	int found;
	int64_t value;
	int est;                     /* the value's: CNT_VIEW_EXACT, _ESTIMATE, _UNKNOWN */
	int64_t error;
	int exact;                   /* rank, around: 1 exact rank, 0 a band */
	int64_t rank;
	uint64_t band_lo, band_hi;
	double pct_lo, pct_hi;
	/* top: the entries; around: the neighbourhood */
	cnt_rank_item *items;
	size_t nitems;
	/* verify */
	int verified;                /* the whole view checked out ("intact") */
	/* value with a display guard (view/guard.h) */
	int guarded;
	int guard_clamped, guard_reset, guard_old;
	int64_t unguarded;           /* the view's value before the guard */
	int guard_had_floor;
	int64_t guard_floor;         /* the last served before this answer */
} cnt_rank_answer;

/* Answers q from src into a (which the caller releases with
 * cnt_rank_answer_release() either way).  0, or -1 with err set: a
 * corrupt view (naming the file and what), an overlay that cannot be
 * read, around for a member only the overlay knows, out of memory. */
int cnt_rank_answer_question(const cnt_rank_source *src, const cnt_rank_question *q, cnt_rank_answer *a,
	cnt_err *err);
void cnt_rank_answer_release(cnt_rank_answer *a);

/* Every answer says which count it is from: the view's description
 * "verified" (a verified view, view/verified.h) or not (the fast count),
 * as "verified":true|false beside its as-of. */

/* Every value of an approx or unique counter is an estimate, and says so:
 * "estimate":true,"error":E in JSON (E the absolute bound at 95 %, null
 * when unknown), "~V +-E" in a table; exact, min and max values say
 * "estimate":false and nothing in a table.  Answers of top also say it
 * once for the view ("estimate" beside "members").
 *
 * Appends the answer as one line of JSON (cnt-rank(1), "OUTPUT"), or as
 * lines for people.  0, or -1 when out of memory. */
int cnt_rank_format_json(const cnt_rank_answer *a, cnt_buf *out);
int cnt_rank_format_table(const cnt_rank_answer *a, cnt_buf *out);

/* ---- the pieces, for tests ------------------------------------------- */

/* The band [*lo, *hi] of positions value would hold, from v's histogram;
 * self is the member's position in the view (-1: not in it), whose own
 * entry is then not counted as another member. */
void cnt_rank_band(const cnt_view *v, int64_t value, int64_t self, uint64_t *lo, uint64_t *hi);

/* The exact rank entry me (named name, of me->name_len bytes) would have
 * against v's head, leaving out position self (-1: none): 0 with *rank
 * set, *rank = -1 when it falls beyond the head; -1 with err set when a
 * head entry's name is damaged. */
int cnt_rank_in_head(const cnt_view *v, const cnt_view_entry *me, const char *name, int64_t self, int64_t *rank,
	cnt_err *err);

#endif
