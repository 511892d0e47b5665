/*
 * verified.h - verified views (cnt-project(1) --verified, cnt-view(5),
 * "Fast and verified views"): a board's count after the batch audit.
 *
 * The fast count is what the pipeline counted.  The verified count of
 * (tenant, counter) is the count over the events with event_time below
 * the watermark through_ms of the latest audit of that pair in the audit
 * ledger (correct/auditlog.h), after the audits' fraud retractions - which
 * are compensating events in the log (cnt-retract(1)), so bucket files
 * built from the archive with the retraction segments hold them.
 *
 * A verified view is built like the fast one from the same bucket files,
 * but only from buckets with bucket_end <= through_ms: the window is
 * [from, min(to, through_ms)).  The watermark must be a bucket boundary
 * of the tenant's zone (an hour in most zones), otherwise a bucket would
 * straddle it and hold events on both sides: such a watermark is refused,
 * never rounded.  Its as-of is the watermark, and its description says
 * "verified":true and the audit's id.  It lives beside the fast view of
 * the scope, in VIEWS/<board>/<scope>/verified/ (versions and `current`
 * as in the scope directory), so neither replaces the other.
 */
#ifndef CNT_VIEW_VERIFIED_H
#define CNT_VIEW_VERIFIED_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "view/board.h"
#include "view/view.h"

/* The directory a verified view of a scope lives in, under the scope's. */
#define CNT_VERIFIED_DIR "verified"

/* Turns the build bb (after cnt_board_begin, before any bucket is added)
 * into a verified one: reads the audit ledger at audits, takes the latest
 * audit of the board's (tenant, counter), checks its watermark is a bucket
 * boundary of the tenant's zone and cuts the window there.  0, or -1 with
 * err set: no such ledger, no audit of the pair, a watermark inside a
 * bucket, a damaged ledger. */
int cnt_verified_begin(cnt_board_build *bb, const char *audits, cnt_err *err);

/* After cnt_proj_finish(): the bucket files must reach the watermark - the
 * latest ingest time among the counter's buckets at or after it - or some
 * audited events may not be in them.  0, or -1 with err set. */
int cnt_verified_check(const cnt_board_build *bb, cnt_err *err);

/* Opens the verified view of (board, scope) under root, as
 * cnt_viewdir_open() opens the fast one; the view must say it is
 * verified.  0, or -1 with err set. */
int cnt_verified_open(cnt_view *v, const char *root, const char *board, const char *scope, int *version,
	char *vdir, size_t n, int *frozen, cnt_err *err);

#endif
