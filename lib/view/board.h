/*
 * board.h - building a board's views (cnt-project(1)): its window at an
 * instant, its scopes, and a new published version of the view of every
 * scope; and the pointer operations on a board's scopes (publish a
 * version, freeze, unfreeze).
 *
 * The ranking itself is view/project.h; the files are view/view.h.
 *
 * Windows.  A board's window is taken at an instant now and cut in its
 * tenant's timezone, every boundary a bucket boundary (cnt-project(1),
 * "The window"): all_time is everything; day, week, month, rolling_24h and
 * last_30d come from time/tz.h; a range's from and to, and a season's
 * opens_at and closes_at, are instants or local times (a season's in its
 * own timezone, else the tenant's), rounded up to a bucket boundary of the
 * tenant's zone.  The season of a season window is the one named, or the
 * board's season open at now (the last one in the file when several are).
 */
#ifndef CNT_BOARD_H
#define CNT_BOARD_H

#include <stdint.h>

#include "base/err.h"
#include "model/defs.h"
#include "time/tz.h"
#include "view/project.h"
#include "view/viewdesc.h"

/* One build of a board's views. */
typedef struct cnt_board_build {
	const cnt_leaderboard *board;
	cnt_counter_type ctype;      /* of the pinned version, or the latest */
	int64_t now;                 /* the instant the window is taken at */
	int64_t from, to;            /* the window, [from, to) UTC ms */
	const char *label;           /* the season_id, or the window kind's name */
	cnt_tz_cache *tzc;
	cnt_proj *proj;              /* add scopes and buckets to it, then finish */
	/* A verified build (view/verified.h): the views go to the scope's
	 * verified/ directory, as of the audit's watermark through. */
	int verified;
	int64_t through;
	char *audit_id;              /* owned */
	/* Day roll-ups (cnt-bucket(5)): no_days makes a window of whole local
	 * days read the hourly records all the same (cnt-project --hours);
	 * used_days tells that some input's day records were read. */
	int no_days, used_days;
} cnt_board_build;

/* The window of board b at now into *from, *to and *label (borrowed from
 * defs).  season_id: the season of a season window (NULL: the one open at
 * now); ignored for other windows.  tzc caches the zones.  0, or -1 with
 * err naming the board and what is missing. */
int cnt_board_window(const cnt_defs *defs, const cnt_leaderboard *b, cnt_tz_cache *tzc, int64_t now,
	const char *season_id, int64_t *from, int64_t *to, const char **label, cnt_err *err);

/* Starts a build of board board_id of defs (read from defs_name) at *now
 * (NULL: the clock): checks that the scopes fit the board (a global board
 * takes none; a scoped board needs scopes or scopes_from), takes the
 * window, creates the projection and reads the members' scopes from
 * scopes (cnt_board_read_scopes) and scopes_from (events, "-": standard
 * input; cnt_board_scopes_from_events), either NULL when not given.
 * 0, or -1 with err set (bb is then released). */
int cnt_board_begin(cnt_board_build *bb, const cnt_defs *defs, const char *defs_name, const char *board_id,
	const int64_t *now, const char *season_id, const char *scopes, const char *scopes_from, cnt_err *err);
void cnt_board_end(cnt_board_build *bb);

/* Reads the members' scopes into p from a file of member_ref,scope lines
 * (split at the last comma; empty lines and a first line starting
 * "member_ref," skipped; CR LF accepted; a member given twice keeps its
 * last line; a scope must be UTF-8 text).  cnt-project and cnt-explain
 * both read --scopes with it.  0, or -1 with err naming the file and line. */
int cnt_board_read_scopes(cnt_proj *p, const char *path, cnt_err *err);

/* Reads the members' regions from events on fd (see
 * cnt_proj_scope_from_event).  0, or -1 with err set. */
int cnt_board_scopes_from_events(cnt_board_build *bb, int fd, const char *name, cnt_err *err);

/* Adds the bucket records on fd (a bucket file, name for messages) to the
 * projection; tick, when not NULL, is called with 1 for each record read
 * (for a progress display).  0, or -1 with err set. */
int cnt_board_add_buckets(cnt_board_build *bb, int fd, const char *name, void (*tick)(uint64_t), cnt_err *err);

/* What cnt_board_write_scope() did. */
typedef struct cnt_board_written {
	const char *scope;
	int version;
	uint64_t members;
	int published;
	int frozen;                  /* not published because the scope is frozen */
	size_t retired;              /* older versions retired (view/retain.h) */
} cnt_board_written;

/* After cnt_proj_finish(): writes the next version of scope i's view into
 * views (VIEWS/<board>/<scope>/vNNNNNN) with its description, and
 * publishes it unless no_publish or the scope is frozen.  0, or -1 with
 * err set (kind CNT_ERR_IO when a file could not be written). */
int cnt_board_write_scope(cnt_board_build *bb, size_t i, const char *views, int no_publish,
	cnt_board_written *out, cnt_err *err);

/* The pointer operations: publish version (when > 0) and freeze (1),
 * unfreeze (-1) or neither (0), in scope, or in every scope of the board
 * when scope is NULL.  A board-wide publish first checks that every scope
 * has the version, so that a failed rollback switches none; a version
 * that was retired is refused with the instant it was.  A publish records
 * the version it replaced as superseded at now (view/retain.h) but
 * retires nothing: without definitions it has no policy; the next build
 * applies it.  0 or -1. */
int cnt_board_scope_op(const char *views, const char *board, const char *scope, int publish, int freeze,
	int64_t now, cnt_err *err);

#endif
