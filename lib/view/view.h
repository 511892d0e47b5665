/*
 * view.h - ranked views (cnt-view(5)): what cnt-project writes and
 * cnt-rank answers from.
 *
 * A view is keyed (board, scope, version) and lives in a directory
 *   VIEWS/<board>/<scope>/v<version, 6 digits>/
 * holding two files written together (the directory is renamed into place
 * complete):
 *   view.avro   the materialised head: cnt.RankedEntry records (rank,
 *               member_ref, value, last_event_time) for the first
 *               materialised_cap positions, with the view's description
 *               (view/viewdesc.h) as JSON in the header key "cnt.view" -
 *               for people, cnt-cat and jq;
 *   index.bin   every member, for answers that must not scan: the layout
 *               below, read with mmap.
 * The scope directory holds `current`, a symbolic link to the published
 * version (switched atomically: a new link renamed over the old), and
 * `frozen`, a marker an operator creates to stop publishing.
 *
 * index.bin (all integers little-endian; offsets from the file's start):
 *   0   "CNTVIEW2"
 *   8   u64 header checksum: XXH3-64 (seed 0) of bytes [16, P)
 *   16  u64 histogram checksum: XXH3-64 of the edges and counts, the
 *       16 nbins + 8 bytes at E
 *   24  u64 data checksum: XXH3-64 of bytes [P, L), everything after
 *       the description
 *   32  u64 L, the file's length
 *   40  u64 D, the description's length (at most CNT_VIEWDESC_MAX)
 *   48  u64 n (members), u64 head (materialised positions, <= n),
 *       u64 nbins, u64 S (name pool bytes), u64 H (name slots: a power of
 *       two, the smallest >= 2 with n <= 3H/4)
 *   88  D bytes of description (the same as "cnt.view"), zero-padded to a
 *       multiple of 8: P = 88 + D + padding
 *   P   n entries in rank order, 32 bytes each:
 *         i64 value, i64 last_event_time, u64 name offset, u32 name length,
 *         u32 rank (as the board numbers them)
 *   .   H u32 slots: entry position + 1 (0: empty) at XXH3-64(name) mod H,
 *       linear probing - finding a member is one or two probes
 *   E   nbins + 1 i64 histogram edges, ascending; bin i holds the values
 *       v with edge[i] <= v < edge[i+1] (the last bin includes its end)
 *   .   nbins u64 member counts
 *   .   S bytes: the member names, in rank order
 *   .   only when the description says "errors": true (a view of an
 *       approx or unique counter): n i64 error bounds in rank order, not
 *       aligned (read byte-wise): each entry's absolute error at 95 %
 *       (count/estimate.h), or -1 when unknown (an approx member whose
 *       summed variance is negative: a corrupt bucket)
 *   L = P + 32 n + 4 H + 16 nbins + 8 + S (+ 8 n with errors)
 *
 * The error column came with issue 11 under the same magic: a view written
 * before it has no "errors" key and no column, and reads as before (its
 * unique values at precision 14, the only one then).  A reader older than
 * the column refuses a view with one (its sections do not add up).
 *
 * Trust.  A view is read from a file anyone may have damaged, so nothing
 * in it is used before it is checked.  Opening checks the header checksum
 * (a corrupt length or count is caught before it is used), every size
 * against the file's length (so nothing is allocated or mapped from a
 * count the file does not back), the histogram's checksum, order and total,
 * and the description field by field against the header.  That is cheap:
 * a few hundred bytes plus the histogram, whatever the number of members.
 * The entries, slots and names - hundreds of megabytes for a big board -
 * are covered by the data checksum, which only cnt_view_verify() (cnt-rank
 * verify) computes: hashing them on every answer would cost more than the
 * answer.  So every use of them is bounds-checked instead: a slot past the
 * entries is an empty one, and an entry's name is handed out only by
 * cnt_view_name(), which checks it against the pool.  A damaged entry then
 * gives a wrong value or a clear error, never a read outside the file.
 *
 * Ranks beyond the head are not given out as exact numbers: cnt-rank
 * answers them as a band from the histogram, as the board declares.
 */
#ifndef CNT_VIEW_H
#define CNT_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "view/viewdesc.h"

#define CNT_VIEW_HEADER 88        /* bytes before the description */

typedef struct cnt_view_entry {
	int64_t value;
	int64_t last_event_time;
	uint64_t name_off;
	uint32_t name_len;
	uint32_t rank;
} cnt_view_entry;

typedef struct cnt_view {
	char path[4096];           /* the file, for messages */
	const uint8_t *map;        /* the file's bytes */
	size_t map_len;
	int mapped;                /* 1: map is ours to unmap */
	const char *desc_text;     /* the JSON description, desc_len bytes */
	size_t desc_len;
	cnt_viewdesc desc;         /* parsed and checked against the header */
	uint64_t n, head, nbins, pool_len, nslots;
	uint64_t data_sum;         /* the data checksum the header holds */
	size_t data_off;           /* P: where the entries start */
	const cnt_view_entry *entries;
	const uint32_t *by_name;
	const int64_t *edges;
	const uint64_t *counts;
	const char *pool;
	const uint8_t *errors;     /* the error column, 8 n bytes, or NULL */
} cnt_view;

/* What a view is built from, for cnt_view_write_index(). */
typedef struct cnt_view_build {
	const cnt_viewdesc *desc;  /* members, head and bins are taken from here below */
	size_t n, head;
	const cnt_view_entry *entries;   /* rank order */
	const char *pool;
	size_t pool_len;
	size_t nbins;
	const int64_t *edges;      /* nbins + 1 */
	const uint64_t *counts;
	const char *fingerprints;  /* the "cnt.fingerprints" table, or NULL */
	const int64_t *errors;     /* n error bounds in rank order, or NULL */
	int precision;             /* a unique counter's: the smallest sketch precision; else 0 */
} cnt_view_build;

/* The description as it is written for b: b->desc with members, head,
 * bins, errors (b->errors != NULL) and precision set from b.  Appends it to out.  0, or -1 with err set. */
int cnt_view_describe(const cnt_view_build *b, cnt_buf *out, cnt_err *err);

/* Writes index.bin to fd (which must be a regular file open for writing
 * at offset 0: the checksums are written last, at the start).  Returns 0
 * or -1 with err set. */
int cnt_view_write_index(int fd, const cnt_view_build *b, cnt_err *err);

/* Maps dir/index.bin and checks it as "Trust" above says.  Returns 0, or
 * -1 with err naming the file and what is wrong (kind CNT_ERR_DATA, or
 * CNT_ERR_NOMEM).  cnt_view_close() unmaps and frees. */
int cnt_view_open(cnt_view *v, const char *dir, cnt_err *err);

/* Flags of cnt_view_open_mem(). */
enum {
	/* Skip the header and histogram checksums (every other check is
	 * made): for the fuzzer, so that it reaches the checks a forged file
	 * with matching checksums would meet. */
	CNT_VIEW_NO_CHECKSUMS = 1
};

/* The same checks on n bytes at p (not copied: they must outlive v);
 * name is used in messages. */
int cnt_view_open_mem(cnt_view *v, const void *p, size_t n, const char *name, int flags, cnt_err *err);
void cnt_view_close(cnt_view *v);

/* The member_ref of entry i (< v->n): 0 with *name and *len set, or -1
 * with err naming the file and the entry when its name lies outside the
 * name pool. */
int cnt_view_name(const cnt_view *v, uint64_t i, const char **name, size_t *len, cnt_err *err);

/* The entry position of member name (n bytes), or -1 when not in the view
 * (or only behind a damaged slot or entry). */
int64_t cnt_view_find(const cnt_view *v, const char *name, size_t n);

/* Whether answers from v are estimates, and the bound of one.  The error
 * of entry i (< v->n): CNT_VIEW_EXACT (the counter is exact, min or max:
 * *e is 0); CNT_VIEW_ESTIMATE with *e >= 0 the absolute bound at 95 %;
 * CNT_VIEW_UNKNOWN when the bound is unknown (a negative summed variance,
 * or an approx view without the column); -1 with err naming the file and
 * entry when the column holds anything below -1 (corrupt).  A unique view
 * without the column (written before issue 11) gives the bound of the
 * entry's value at precision 14. */
enum { CNT_VIEW_EXACT = 0, CNT_VIEW_ESTIMATE = 1, CNT_VIEW_UNKNOWN = 2 };
int cnt_view_error(const cnt_view *v, uint64_t i, int64_t *e, cnt_err *err);

/* The error of a value not in the view (an overlaid one) for member
 * position self (-1: none): a unique view's bound of value at its
 * precision, an approx view's the member's own (0 for a new member). */
int cnt_view_value_error(const cnt_view *v, int64_t self, int64_t value, int64_t *e, cnt_err *err);

/* The histogram bin holding value (0..nbins-1; values outside the edges
 * fall in the first or last bin). */
size_t cnt_view_bin(const cnt_view *v, int64_t value);

/* The whole of a view, for cnt-rank verify: the data checksum; every
 * entry's name inside the pool and found through the name table at its
 * own position; entries in rank order with ranks as the numbering gives
 * them; every value counted in its histogram bin.  When dir is not NULL,
 * also dir/view.avro: its "cnt.view" is the index's description and its
 * records are the index's head.  Returns 0, or -1 with err naming the file
 * and the first thing wrong. */
int cnt_view_verify(const cnt_view *v, const char *dir, cnt_err *err);

/* ---- the view directory --------------------------------------------- */

/* Writes root/<board>/<scope> into buf (n bytes), with any byte of board
 * or scope outside [A-Za-z0-9._-] written as %XX (and a leading '.' too),
 * so every key is one safe path component.  0, or -1 when it does not fit. */
int cnt_viewdir_path(char *buf, size_t n, const char *root, const char *board, const char *scope);

/* Creates the scope directory (and its parents) if needed, and returns the
 * next version number: one more than the largest vNNNNNN in it.  0 or -1. */
int cnt_viewdir_next(const char *scope_dir, int *version, cnt_err *err);

/* Writes a version: view.avro (the head, with desc in its header) and
 * index.bin, into a temporary directory renamed to v<version> when both
 * are complete.  0, or -1 with err set (nothing is left behind). */
int cnt_viewdir_write(const char *scope_dir, int version, const cnt_view_build *b, cnt_err *err);

/* Points `current` at v<version> by renaming a new symbolic link over it
 * (atomic for readers).  The version must exist.  0 or -1. */
int cnt_viewdir_publish(const char *scope_dir, int version, cnt_err *err);

/* The published version, or 0 when none; -1 with err set on trouble. */
int cnt_viewdir_current(const char *scope_dir, int *version, cnt_err *err);

/* Creates (on) or removes (!on) the scope's `frozen` marker.  0 or -1. */
int cnt_viewdir_freeze(const char *scope_dir, int on, cnt_err *err);

/* Lists the scope directories of a board (full paths, sorted); the caller
 * frees each and the array.  0, or -1 with err set (no such board). */
int cnt_viewdir_scopes(const char *root, const char *board, char ***dirs, size_t *n, cnt_err *err);

/* Whether an operator froze the scope (a file named `frozen` exists). */
int cnt_viewdir_frozen(const char *scope_dir);

/* Opens the view of (board, scope) under root that an answer is given
 * from: version *version, or the published one when *version is 0 (set to
 * it).  The version's directory is written into vdir (n bytes), and
 * whether the scope is frozen into *frozen.  Besides cnt_view_open()'s
 * checks, the description must name the board, scope and version asked
 * for.  0, or -1 with err set (no published view, no such version, a
 * corrupt view). */
int cnt_viewdir_open(cnt_view *v, const char *root, const char *board, const char *scope, int *version,
	char *vdir, size_t n, int *frozen, cnt_err *err);

#endif
