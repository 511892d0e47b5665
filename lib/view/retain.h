/*
 * retain.h - how long superseded view versions stay readable, and the
 * record of when each was superseded and retired (cnt-project(1),
 * "Retention"; cnt-view(5), "The retention record").
 *
 * A reader may pin a version (view/pin.h) and page through it while
 * newer ones are published, so a version does not disappear the moment it
 * is superseded.  It is retired - its directory removed - by cnt-project
 * when it publishes, under the board's policy (cnt-definitions(5)):
 *
 *   retain_versions_s    a superseded version stays at least this many
 *                        seconds after it was superseded (default 86400);
 *   retain_versions_min  the most recently superseded versions kept
 *                        whatever their age (default 1, so one rollback
 *                        is always possible).
 *
 * Superseded.  A version is superseded at the instant another version is
 * published in its place; a version that was never published is
 * superseded when a later-numbered one is published (it was passed over).
 * Versions newer than the published one that were never published (built
 * with --no-publish or while frozen) wait to be published and are not
 * superseded.  A superseded version published again (a rollback) is the
 * published one until it is superseded anew; the latest record counts.
 *
 * Never retired: the published version; anything in a frozen scope (an
 * operator froze it to keep it as it is); of a board with a season window,
 * the newest version of each season (the standing of a season that has
 * closed is no longer rebuilt, so its last version is its view for good).
 *
 * The record.  The scope directory holds `retention`, a text file
 * rewritten whole and renamed into place on every change:
 *
 *   cnt-retention 1
 *   superseded <version> <epoch ms>
 *   retired <version> <epoch ms>
 *   ...
 *
 * one line per event in the order they happened, so a reader told that a
 * version is gone can say when.  A file that does not exist is an empty
 * record; a damaged one is an error (status 2), never silently reset.
 * Retiring renames the version directory to a hidden name first (readers
 * then see it gone at once; a reader that has it mapped keeps its pages),
 * records it, then removes it.
 */
#ifndef CNT_VIEW_RETAIN_H
#define CNT_VIEW_RETAIN_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define CNT_RETAIN_FILE "retention"

typedef struct cnt_retain_policy {
	int64_t keep_s;          /* retain_versions_s */
	int64_t keep_min;        /* retain_versions_min */
	int seasons;             /* a season board: keep each season's newest version */
} cnt_retain_policy;

/* One version of a scope, for cnt_retain_decide(). */
typedef struct cnt_retain_version {
	int version;
	int64_t superseded_at;   /* INT64_MIN: not superseded */
	int protect;             /* never retired (a season's newest version) */
	int retire;              /* set by cnt_retain_decide() */
} cnt_retain_version;

/* The retention decision, pure: marks retire in each of the n versions
 * that must go at now under p, given the published version current and
 * whether the scope is frozen; returns how many.  Kept: current, protected
 * and never-superseded versions; everything when frozen; the keep_min
 * most recently superseded (by superseded_at, then the higher version);
 * any superseded less than keep_s seconds before now. */
size_t cnt_retain_decide(cnt_retain_version *v, size_t n, int current, int frozen, int64_t now,
	const cnt_retain_policy *p);

/* One line of the record. */
typedef struct cnt_retain_rec {
	int version;
	int retired;             /* 0: superseded */
	int64_t at;
} cnt_retain_rec;

typedef struct cnt_retain_log {
	cnt_retain_rec *r;
	size_t n, cap;
} cnt_retain_log;

/* Reads scope_dir/retention into log (empty when the file does not
 * exist).  0, or -1 with err naming the file and line.  Release with
 * cnt_retain_log_release(). */
int cnt_retain_load(const char *scope_dir, cnt_retain_log *log, cnt_err *err);
void cnt_retain_log_release(cnt_retain_log *log);

/* The text of a record (for writing, and for tests).  0 or -1 (memory). */
int cnt_retain_format(const cnt_retain_log *log, char **text, size_t *len);
/* Parses text (name for messages) into log.  0, or -1 with err set. */
int cnt_retain_parse(const char *text, size_t len, const char *name, cnt_retain_log *log, cnt_err *err);

/* The latest record of version: *state 0 none, 1 superseded, 2 retired,
 * with *at its instant. */
void cnt_retain_state(const cnt_retain_log *log, int version, int *state, int64_t *at);

/* Called when the scope's `current` link has been switched from version
 * old (0: none) to version cur at now: records old as superseded, and
 * every version below cur that is present, not old, and not superseded
 * yet (passed over); then, when p is not NULL, retires what
 * cnt_retain_decide() says (p NULL: record only, as --publish does,
 * having no definitions).  *retired (may be NULL) is set to the number
 * retired.  0, or -1 with err set (kind CNT_ERR_IO when the record
 * cannot be written). */
int cnt_retain_publish(const char *scope_dir, int old, int cur, int64_t now, const cnt_retain_policy *p,
	size_t *retired, cnt_err *err);

/* For a reader asking for version of a scope whose directory lacks it:
 * when the record says it was retired, sets err (kind CNT_ERR_RETIRED)
 * to one line naming board, scope, the version, when it was retired and
 * the version published now, and returns 1; when it holds no such record
 * returns 0 (err untouched); -1 with err set on a damaged record. */
int cnt_retain_check_gone(const char *scope_dir, const char *board, const char *scope, int version,
	cnt_err *err);

/* The instant now in epoch ms from the clock. */
int64_t cnt_retain_clock(void);

#endif
