/*
 * fingerprint.h - what a counter version, a leaderboard or a season means,
 * as a canonical serialization and a stable hash; the rules that say which
 * edits of a definition keep that meaning; and the table every file that
 * counted data records (cnt-definitions(5), "FINGERPRINTS").
 *
 * A definition's "def" is a JSON object (jansson) with one key per field,
 * built from the parsed definitions (never from the file's text, so key
 * order, whitespace and defaults written out or left implicit do not
 * matter).  Each field has a class (cnt-definitions(5), "COMPATIBILITY"):
 *
 *   identity     tenant_id, counter_id, version / board_id / season_id:
 *                names, compared by lookup, never as a change;
 *   meaning      a change reinterprets counted events (counter: type,
 *                bounds_lo, bounds_hi, lateness_horizon_s, dedup_key,
 *                dedup_horizon_s, client_writable, effective_from, timezone,
 *                min_watch_ms, watch_attr -- the last two only present in a
 *                version with a watch-time gate; dimensions and monotonic,
 *                only present when declared;
 *                board: tenant_id, counter_id, counter_version, window,
 *                week_start, range_from, range_to, scope_kind, scope_attr,
 *                order, tie_break, rank_numbering, timezone);
 *   grow-only    windows: adding one is compatible, removing one is not;
 *   raise-only   materialised_cap: raising it is compatible, lowering not;
 *   note         unit_cost_per_m, freshness_budget_s, histogram: always
 *                compatible;
 *   season       board_id, opens_at, closes_at, timezone may change while
 *                the season is open, never once it is closing or closed;
 *                state may only move forward (open, closing, closed).
 *
 * The fingerprint is XXH3-128 of "cnt-fp/1\n" followed by the compact JSON
 * (keys sorted) of the identity and meaning fields, as 32 lowercase hex
 * digits.  Compatible edits therefore never change it.
 *
 * A fingerprint table is a JSON object {LABEL: {"fp": HEX, "def": DEF}}
 * where LABEL is "TENANT/COUNTER vN" or "board BOARD" and DEF holds only
 * the identity and meaning fields (so one fingerprint always has one
 * entry, byte for byte).  A file records in its Avro header, under
 * "cnt.fingerprints" (compact, keys sorted; absent when empty), exactly
 * the counter versions that occur in its records (views: the board and
 * the versions of the buckets it ranked), each as the definitions gave it
 * or, for a tool without definitions, as its inputs recorded it.  So the
 * same records give the same bytes however they were produced.
 */
#ifndef CNT_FINGERPRINT_H
#define CNT_FINGERPRINT_H

#include <jansson.h>

#include "avro/container.h"
#include "base/buf.h"
#include "base/err.h"
#include "model/defs.h"

#define CNT_FP_HEX 33 /* 32 hex digits and NUL */
#define CNT_FP_META "cnt.fingerprints" /* Avro header key of a table */

/* The def of version v of counter c / of board b / of season s, every
 * field: a new object the caller releases with json_decref(), or NULL
 * when out of memory. */
json_t *cnt_fp_counter_def(const cnt_counter *c, const cnt_counter_version *v);
json_t *cnt_fp_board_def(const cnt_leaderboard *b);
json_t *cnt_fp_season_def(const cnt_season *s);

/* Writes def's fingerprint to hex.  Returns 0, or -1 with err set (out of
 * memory, or def has no identity). */
int cnt_fp_hex(json_t *def, char hex[CNT_FP_HEX], cnt_err *err);

/* def's label into b (replacing its contents), NUL-terminated.  Returns 0,
 * or -1 with err set. */
int cnt_fp_label(json_t *def, cnt_buf *b, cnt_err *err);

/* One field that differs between an old and a new def.  from/to are the
 * values as people read them ("day,week"; "(none)" for absent).
 * reinterprets is 1 when the change is refused as an in-place edit. */
typedef struct cnt_fp_change {
	const char *label, *field, *from, *to;
	int reinterprets;
	int next_version; /* counters: the version number a refused change
			   * should be declared as; 0 for boards and seasons */
} cnt_fp_change;
typedef int cnt_fp_change_fn(void *ctx, const cnt_fp_change *ch);

/* Calls fn for every field (sorted by name) whose value differs between
 * old and new (defs of the same label).  A non-zero return from fn stops
 * the walk and is returned.  Returns the number of reinterpreting changes
 * (>= 0) or -1 with err set when out of memory. */
int cnt_fp_diff(json_t *old, json_t *new_def, cnt_fp_change_fn *fn, void *ctx,
		cnt_err *err);

/* The entry a table records for def: {"fp": HEX, "def": identity and
 * meaning fields only}.  New object, or NULL with err set. */
json_t *cnt_fp_entry(json_t *def, cnt_err *err);

/* Parses a table as recorded in a file (n bytes), checking its shape and
 * that each entry's fp is its def's.  Returns a new object or NULL with
 * err set ("fingerprints: ..."). */
json_t *cnt_fp_table_parse(const void *text, size_t n, cnt_err *err);

/* Checks one entry recorded in a file against what d defines under the
 * same label.  Returns 0 when d does not define it or defines it with the
 * same fingerprint; else -1 with err set to one line naming the label and
 * the first field that changed: "acme/distance_m v1: type exact → max; a
 * change that reinterprets counted events needs a new version" (boards:
 * "... reinterprets standings needs a new board"). */
int cnt_fp_entry_check(json_t *entry, const cnt_defs *d, cnt_err *err);

/* Checks every entry of table as cnt_fp_entry_check(). */
int cnt_fp_table_check(json_t *table, const cnt_defs *d, cnt_err *err);

/* ---- the counter versions an output holds ------------------------------ */

/* A set of counter versions, each with the entry a table gives it: from
 * the definitions of the process's policy (below) when they declare it,
 * else from what its inputs recorded, else none (a version no definitions
 * know: the file records nothing for it). */
typedef struct cnt_fp_set cnt_fp_set;
cnt_fp_set *cnt_fp_set_new(cnt_err *err);
void cnt_fp_set_free(cnt_fp_set *s);
/* Adds version v of tenant t (tn bytes) counter c (cn bytes).  Cheap when
 * it is one of the last 8 distinct versions added.  0, or -1 with err set (out of memory). */
int cnt_fp_set_add(cnt_fp_set *s, const char *t, size_t tn, const char *c, size_t cn, int32_t v,
	cnt_err *err);
/* The table of s, with board b's entry too when b is not NULL, as compact
 * JSON with sorted keys: *text malloc'd (NULL when the table is empty).
 * 0, or -1 with err set. */
int cnt_fp_set_dump(const cnt_fp_set *s, const cnt_leaderboard *b, char **text, cnt_err *err);

/* ---- the process's policy ----------------------------------------------- */

/* A tool that reads or writes counted data calls cnt_fp_policy() once,
 * before it opens its inputs, with its definitions (NULL for a tool that
 * has none, such as cnt-accumulate: it carries what its inputs recorded).
 * From then on every typed input (model/record_reader.h) hands each
 * container header to cnt_fp_input().  Not thread-safe; one policy per
 * process.  0, or -1 with err set. */
int cnt_fp_policy(const cnt_defs *d, cnt_err *err);
/* Frees the policy (after the last input is read and the last tracked
 * output finished). */
void cnt_fp_policy_end(void);

/* One container header of the input name (its metadata, n entries): its
 * table, if any, is checked against the policy's definitions
 * (cnt_fp_entry_check, err prefixed with 'name') and added to what the
 * inputs recorded; an input recording another fingerprint for a version
 * an earlier input recorded is refused too ("'b.avro': acme/distance_m
 * v1: type max here, exact in 'a.avro'; inputs counted under two
 * definitions of one version cannot be combined").  Without a policy it
 * does nothing.  0, or -1 with err set. */
int cnt_fp_input(const cnt_meta_kv *kv, size_t n, const char *name, cnt_err *err);

/* A published file's header (its metadata, n entries, named name) checked
 * against the policy's definitions only, as cnt_fp_input() checks an
 * input: cnt-project checks the view it is about to supersede, so that a
 * board edited in place is refused ("'...view.avro': board b: tie_break
 * ...; a change that reinterprets standings needs a new board").  0, or
 * -1 with err set. */
int cnt_fp_check_published(const cnt_meta_kv *kv, size_t n, const char *name, cnt_err *err);

/* What the records of an output are. */
typedef enum { CNT_FP_EVENTS, CNT_FP_WINDOWED, CNT_FP_BUCKETS } cnt_fp_records;

/* Makes w (before its first record) record the table of the counter
 * versions its records hold: its header is deferred (cnt_writer_defer),
 * each record's tenant, counter and version are read as it is committed,
 * and the table goes into the header when w is finished; entries come from
 * the policy (none without one).  cnt_writer_free() frees the tracker.
 * 0, or -1 with err set. */
int cnt_fp_track(cnt_writer *w, cnt_fp_records kind, cnt_err *err);

/* ---- cnt-defs check ------------------------------------------------------ */

/* What cnt-defs check reports: every counter version, board and season of
 * cur compared with prop.  fn is called for each change (label set), for
 * each one removed (field "definition", to "(removed)", reinterprets 1;
 * an open season's removal is compatible) and added (field "definition",
 * from "(none)", reinterprets 0).  Returns the number of refused changes
 * or -1 with err set. */
int cnt_fp_compare_defs(const cnt_defs *cur, const cnt_defs *prop, cnt_fp_change_fn *fn,
			void *ctx, cnt_err *err);

#endif
