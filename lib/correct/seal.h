/*
 * seal.h - closing a season (cnt-seal(1), cnt-sealed(5)): its final
 * standings written once, corrections published beside them, and an
 * append-only, hash-chained seal ledger that proves neither changed.
 *
 * A sealed directory DIR holds
 *   ledger.jsonl                     the seal ledger (correct/ledger.h):
 *                                    one line per file published;
 *   ledger.head                      "<lines> <hash of the last line>\n",
 *                                    rewritten after every append, so that
 *                                    a change to the last line (which no
 *                                    later line covers) or a lost line is
 *                                    seen too;
 *   <season>/<scope>/standings.jsonl the sealed standings, once;
 *   <season>/<scope>/corrections-NNNNNN.jsonl
 *                                    corrections, numbered from 000001.
 * Season and scope are written as one safe path component each
 * (cnt_viewdir_path).  A ledger line names its file, the number of
 * records and the XXH3-128 of the file's bytes; a file the ledger does
 * not name is not published.  Nothing is ever rewritten: a file is
 * written to a temporary, fsync'd and linked to its name (link(2) fails
 * when the name exists), then its ledger line is appended and the head
 * replaced.
 *
 * The standings are ranked by the board code that cnt-project(1) uses
 * (view/board.h, view/project.h), over the season's window, so a sealed
 * standing is the one cnt-project would have published.
 *
 * Everything read from DIR is checked before it is used: the chain, the
 * head, each ledger line's fields (its file must be the path its season,
 * scope, kind and number give, so a ledger cannot point outside DIR), each
 * file's digest and record count, and each record's fields and types.
 */
#ifndef CNT_CORRECT_SEAL_H
#define CNT_CORRECT_SEAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/fpset.h"
#include "base/outfile.h"
#include "model/defs.h"
#include "view/board.h"

#define CNT_SEAL_LEDGER "ledger.jsonl"
#define CNT_SEAL_HEAD "ledger.head"

typedef enum { CNT_SEAL_STANDINGS = 0, CNT_SEAL_CORRECTIONS = 1 } cnt_seal_kind;

/* One line of the seal ledger, checked. */
typedef struct cnt_seal_entry {
	cnt_seal_kind kind;
	char *season_id, *board_id, *scope;
	char *file;                /* relative to DIR */
	char *at;                  /* sealed_at or published_at, as written */
	int seq;                   /* corrections: 1, 2, ...; standings: 0 */
	uint64_t records;
	cnt_fp digest;
	char **rids;               /* corrections: the retraction ids */
	size_t nrids;
	size_t line;
} cnt_seal_entry;

/* A file to publish (cnt_seal_close, cnt_seal_correct). */
typedef struct cnt_seal_out {
	char path[4096];           /* DIR/<file> */
	char *scope;
	cnt_buf bytes;
	uint64_t records;
	int seq;
	cnt_out out;
	int opened, linked;
} cnt_seal_out;

/* A sealed directory, its ledger read and checked, and what is to be
 * published into it. */
typedef struct cnt_seal_dir {
	char dir[4096];
	int fd;                    /* the directory, locked; -1 when closed */
	int damaged;               /* cnt_seal_dir_open failed on the content */
	cnt_seal_entry *e;
	size_t n;
	cnt_fp last;               /* hash of the ledger's last line */
	size_t lines;
	cnt_seal_out *outs;
	size_t nouts;
	cnt_buf append;            /* ledger lines to append */
	cnt_fp new_last;
	size_t new_lines;
	uint64_t changed;          /* cnt_seal_correct: correction records */
} cnt_seal_dir;

/* Opens DIR: for writing (write = 1: DIR created when missing and
 * locked exclusively with flock(2); the ledger is created by the first
 * cnt_seal_commit), or for reading (a shared lock; DIR must hold a
 * ledger).  Reads and checks the ledger and its
 * head.  0, or -1 with err set (s->damaged = 1 when the ledger or head
 * is not what was written: a broken chain, a line that is not an entry, a
 * head that does not match); cnt_seal_dir_close() in either case. */
int cnt_seal_dir_open(cnt_seal_dir *s, const char *dir, int write, cnt_err *err);
void cnt_seal_dir_close(cnt_seal_dir *s);

/* The standings entry of (season, scope), or NULL. */
const cnt_seal_entry *cnt_seal_find(const cnt_seal_dir *s, const char *season, const char *scope);

/* The lateness horizon that bounds the board's counted data: the pinned
 * version's, else the largest of the counter's versions (seconds). */
int64_t cnt_seal_horizon_s(const cnt_leaderboard *b);

/* Starts the build of a season's standings: the season's board, its
 * window at closes_at (scopes and scopes_from as cnt_board_begin).  With
 * check_horizon, refuses (CNT_ERR_DATA, naming the instant after which
 * it may run) unless now is after the window's end plus the horizon.
 * 0, or -1 with err set. */
int cnt_seal_begin(cnt_board_build *bb, const cnt_defs *defs, const char *defs_name, const char *season_id,
	int64_t now, int check_horizon, const char *scopes, const char *scopes_from, cnt_err *err);

/* After cnt_proj_finish(bb->proj): prepares the standings file of every
 * scope (only scope, when not NULL; a global board's one scope "global"
 * even when nobody counted) with sealed_at now, and their ledger lines.
 * Refuses, writing nothing, when a scope is already sealed or its file
 * exists.  0, or -1 with err set. */
int cnt_seal_close(cnt_seal_dir *s, cnt_board_build *bb, const char *scope, int64_t now, cnt_err *err);

/* After cnt_proj_finish(bb->proj) over the revised buckets: compares the
 * standings of every sealed scope of the season (only scope, when not
 * NULL) with the sealed ones as corrected so far, and prepares a
 * corrections file for each scope where a member's value or rank
 * differs.  The retraction ledger (rfd, rname) is read and its chain
 * checked; a correction names the retractions of the board's tenant and
 * counter that no earlier correction of the scope named (all of them when
 * every one was named before); with none at all it is refused.  Nothing
 * is prepared when nothing changed (s->nouts == 0).  0, or -1. */
int cnt_seal_correct(cnt_seal_dir *s, cnt_board_build *bb, const char *scope, int rfd, const char *rname,
	int64_t now, cnt_err *err);

/* Publishes what close or correct prepared, one file at a time: written
 * to a temporary (reg is called with it, unreg after, so that the caller
 * can remove it on a signal), fsync'd, linked to its name (never over an
 * existing one) and the temporary removed; then the ledger lines are
 * appended in one write and the head replaced.  A file is published by
 * its ledger line: on a failure before the append, every file linked by
 * this call is removed again.  0, or -1 with err set (CNT_ERR_IO, or
 * CNT_ERR_NOMEM when a temporary cannot be opened). */
int cnt_seal_commit(cnt_seal_dir *s, void (*reg)(cnt_out *), void (*unreg)(cnt_out *), cnt_err *err);

/* The season's sealed standings with their corrections (only scope when
 * not NULL), as JSON lines (table 0) or a table, appended to out.  Every
 * file read is checked against the ledger.  0, or -1 with err set (a
 * season that is not sealed, a file that changed, a corrupt file). */
int cnt_seal_show(const cnt_seal_dir *s, const char *season, const char *scope, int table, cnt_buf *out,
	cnt_err *err);

/* Checks a sealed directory: the ledger's chain and fields, the head, the
 * digest and records of every file it names, and that DIR holds no
 * published-looking file the ledger does not name.  *files is set to the
 * number of files checked.  0 when intact; 1 with err naming the first
 * change (a file, or a ledger line); -1 with err set on another failure
 * (no ledger, out of memory). */
int cnt_seal_verify(const char *dir, size_t *files, cnt_err *err);

/* For cnt-project: refuses (CNT_ERR_DATA) a build of a season window
 * whose season the definitions declare closed, or which is sealed in
 * sealed_dir (when not NULL).  0, or -1 with err set. */
int cnt_seal_check_publish(const cnt_defs *defs, const cnt_board_build *bb, const char *sealed_dir,
	cnt_err *err);

#endif
