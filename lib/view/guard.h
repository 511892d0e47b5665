/*
 * guard.h - the display-count guard (cnt-rank(1) --guard, "THE DISPLAY
 * GUARD"): a member's displayed count never goes down, except when the
 * verified count says so.
 *
 * Two numbers answer "how many views" (cnt-view(5), "Fast and verified
 * views"): the fast count, from the pipeline, which a replay or a rebuild
 * can make go backwards for no real reason; and the verified count, after
 * the batch audit's fraud retractions up to its watermark, which is
 * legitimately lower when fakes were purged.  The guard keeps, per
 * (board, scope, member), the last value served, and serves:
 *
 *   a fast value f        max(f, last served); when f is lower it is
 *                         "clamped" (counted: a served count that went
 *                         down for a non-verified reason would page);
 *   a verified value v    v as it is - the one sanctioned decrease - and
 *                         the floor becomes v, so that later fast values
 *                         clamp to the post-purge floor, not to the
 *                         pre-purge number.  A verified value whose as-of
 *                         is older than the verified value that last reset
 *                         the floor is served as it is but leaves the
 *                         floor alone (an old audit cannot undo a newer
 *                         one).
 *
 * Either way the value served becomes the last served.  A member the view
 * does not hold has the value 0.
 *
 * The guard file (text; every byte of a key outside '!'..'~', and '%',
 * written as %XX, so keys hold anything):
 *
 *   cnt-guard 1
 *   <board> <scope> <member> <served> <verified_as_of or -> <clamps>
 *   ...                                   (sorted by board, scope, member)
 *   end <entries> <XXH3-64 of every byte before this line, 16 hex digits>
 *
 * clamps is how many times the member's fast value was clamped, over the
 * file's life.  The reader checks everything (the checksum, the count, the
 * order, each field) and refuses a damaged file with an error naming it: a
 * guard is never silently reset.  The caller writes the file whole and
 * renames it into place (base/outfile.h), so a crash leaves the old one.
 */
#ifndef CNT_VIEW_GUARD_H
#define CNT_VIEW_GUARD_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "model/defs.h"

typedef struct cnt_guard cnt_guard;

/* An empty guard.  NULL when out of memory. */
cnt_guard *cnt_guard_new(void);
/* Parses n bytes of a guard file (name for messages).  NULL with err set:
 * CNT_ERR_DATA naming the file, the line and what is wrong; or out of
 * memory. */
cnt_guard *cnt_guard_parse(const char *text, size_t n, const char *name, cnt_err *err);
/* Reads path: a file that does not exist is an empty guard (the first
 * use); one that cannot be read or parsed is an error. */
cnt_guard *cnt_guard_load(const char *path, cnt_err *err);
void cnt_guard_free(cnt_guard *g);

size_t cnt_guard_count(const cnt_guard *g);

/* What cnt_guard_serve() did. */
typedef struct cnt_guard_step {
	int64_t served;        /* the value to display */
	int64_t floor;         /* the last served before this step (when had_floor) */
	int had_floor;         /* the member had a last served value */
	int clamped;           /* a fast value below the floor, raised to it */
	int reset;             /* a verified value set the floor */
	int old_verified;      /* a verified value older than the last reset: floor kept */
} cnt_guard_step;

/* Serves value for (board, scope, member of mlen bytes): verified says
 * which count it is, as_of its as-of (for a verified value, the audit's
 * watermark).  Updates the guard as the header says.  0, or -1 with err
 * set (out of memory). */
int cnt_guard_serve(cnt_guard *g, const char *board, const char *scope, const char *member, size_t mlen,
	int64_t value, int verified, int64_t as_of, cnt_guard_step *out, cnt_err *err);

/* The guard file's bytes, appended to out.  0, or -1 (out of memory). */
int cnt_guard_write(const cnt_guard *g, cnt_buf *out);

/* Applies the guard to a value answer a (view/rank.h) of a view whose
 * window may be guarded: serves a->value (0 when the member is not in
 * the view) as the count the view's description says it is (verified or
 * fast, as of its as-of), and sets a->value to the value served and the
 * answer's guard fields.  0, or -1 with err set (the window moves, not a
 * value answer, out of memory). */
struct cnt_rank_answer;
int cnt_guard_answer(cnt_guard *g, struct cnt_rank_answer *a, cnt_err *err);

/* Whether a board of this window kind may be guarded: only windows that
 * do not move with time (all_time, range, season), whose counts only grow;
 * a day or a rolling window drops old events by design. */
int cnt_guard_window_ok(cnt_window_kind k);

#endif
