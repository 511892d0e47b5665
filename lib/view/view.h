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
 *               as JSON in the header key "cnt.view" - for people, cnt-cat
 *               and jq;
 *   index.bin   every member, for answers that must not scan: the layout
 *               below, read with mmap.
 * The scope directory holds `current`, a symbolic link to the published
 * version (switched atomically: a new link renamed over the old), and
 * `frozen`, a marker an operator creates to stop publishing.
 *
 * index.bin (all integers little-endian):
 *   0   "CNTVIEW1"
 *   8   u64 description length D; then D bytes of JSON (the same as
 *       "cnt.view"), zero-padded to a multiple of 8
 *   .   u64 n (members), u64 head (materialised positions, <= n),
 *       u64 nbins, u64 string pool bytes S, u64 name slots H (a power of
 *       two, with n <= 3H/4)
 *   .   n entries in rank order, 32 bytes each:
 *         i64 value, i64 last_event_time, u64 name offset, u32 name length,
 *         u32 rank (as the board numbers them)
 *   .   H u32 slots: entry position + 1 (0: empty) at XXH3-64(name) mod H,
 *       linear probing - finding a member is one or two probes
 *   .   nbins + 1 i64 histogram edges, ascending; bin i holds the values
 *       v with edge[i] <= v < edge[i+1] (the last bin includes its end)
 *   .   nbins u64 member counts
 *   .   S bytes: the member names
 * Ranks beyond the head are not given out as exact numbers: cnt-rank
 * answers them as a band from the histogram, as the board declares.
 */
#ifndef CNT_VIEW_H
#define CNT_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

typedef struct cnt_view_entry {
	int64_t value;
	int64_t last_event_time;
	uint64_t name_off;
	uint32_t name_len;
	uint32_t rank;
} cnt_view_entry;

typedef struct cnt_view {
	/* as mapped */
	const uint8_t *map;
	size_t map_len;
	const char *desc;          /* the JSON description, desc_len bytes */
	size_t desc_len;
	uint64_t n, head, nbins, pool_len, nslots;
	const cnt_view_entry *entries;
	const uint32_t *by_name;
	const int64_t *edges;
	const uint64_t *counts;
	const char *pool;
} cnt_view;

/* What a view is built from, for cnt_view_write(). */
typedef struct cnt_view_build {
	const char *desc;          /* JSON description */
	size_t n, head;
	const cnt_view_entry *entries;   /* rank order */
	const char *pool;
	size_t pool_len;
	size_t nbins;
	const int64_t *edges;      /* nbins + 1 */
	const uint64_t *counts;
} cnt_view_build;

/* Writes index.bin to fd.  Returns 0 or -1 with err set. */
int cnt_view_write_index(int fd, const cnt_view_build *b, cnt_err *err);

/* Maps dir/index.bin and checks its layout.  Returns 0 or -1 with err set
 * naming the file.  cnt_view_close() unmaps. */
int cnt_view_open(cnt_view *v, const char *dir, cnt_err *err);
void cnt_view_close(cnt_view *v);

/* The entry position of member name (n bytes), or -1 when not in the view. */
int64_t cnt_view_find(const cnt_view *v, const char *name, size_t n);

/* The histogram bin holding value (0..nbins-1). */
size_t cnt_view_bin(const cnt_view *v, int64_t value);

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

#endif
