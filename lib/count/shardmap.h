/*
 * shardmap.h - hot keys and how many shards each gets (cnt-shardmap(1),
 * cnt-shardmap(5)).
 *
 * A shard map names (tenant_id, counter_id, member_ref) keys and gives
 * each a shard count, a power of two from 1 to CNT_SHARDMAP_MAX_SHARDS.
 * A key the map does not name has 1 shard.  Each key carries its history:
 * every change of its shard count (a split raises it, a merge lowers it),
 * with the time (the --now of the derivation that made it) and the share
 * of events observed then.
 *
 * Who reads it.  cnt-window --shard-map puts an event of a key with k
 * shards in shard XXH3-64(event_id) mod k (a compensation: of the event it
 * retracts), every other event in shard 0.  cnt-partition --shard-map
 * routes an event whose route holds the member (partition.h) and whose
 * key has k > 1 shards by four strings instead of three: tenant_id,
 * counter_id, member_ref and the route shard XXH3-64(item) mod k in
 * decimal, each followed by a NUL byte.  The item is part of that event's
 * dedup key, so every duplicate of an event still falls in one part.
 *
 * Derivation (cnt_shardmap_derive).  Observed rates come from --stats
 * files (cnt-window: "out" events and the "top_keys" list, count/topkey.h);
 * a key's share is the sum of its listed events over the sum of "out".
 * With target share t, merge ratio r and hold time h:
 *
 *   need(share) = the smallest power of two >= share / t (1 at least,
 *                 max_shards at most);
 *   split  when need > cur: cur becomes need;
 *   merge  when need < cur, share < cur * t * r, and the key's last change
 *          is at least h before now: cur becomes need.
 *
 * Between the two thresholds (share from cur * t * r to cur * t) nothing
 * changes: that band is the hysteresis that keeps a key near a threshold
 * from flapping.  A key the stats do not list has share 0.  A key merged
 * down to 1 stays in the map with its history; a key never split is not
 * added.  Every change is appended to the key's history.
 *
 * The file (cnt_shardmap_format) is canonical: keys sorted by tenant_id,
 * counter_id, member_ref (byte order), shares with six decimals, times as
 * RFC 3339 UTC.  Parsing is strict: unknown or duplicate members, keys
 * out of order or repeated, shard counts that are not powers of two, a
 * history that does not chain (first from 1, each from the previous to,
 * the last to the key's shards, times strictly increasing and not after
 * "updated") are errors naming the JSON path.
 */
#ifndef CNT_COUNT_SHARDMAP_H
#define CNT_COUNT_SHARDMAP_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/slice.h"

#define CNT_SHARDMAP_MAX_SHARDS 65536
#define CNT_SHARDMAP_MAX_KEYS 1000000
#define CNT_SHARDMAP_MAX_HISTORY 10000
#define CNT_SHARDMAP_FILE_MAX (64u << 20)
#define CNT_SHARDMAP_FORMAT "cnt-shardmap/1"

typedef struct cnt_shardmap_change {
	int64_t at_ms;
	uint32_t from, to;
	double share;
} cnt_shardmap_change;

typedef struct cnt_shardmap_key {
	cnt_slice tenant, counter, member;   /* NUL-terminated, owned by the map */
	uint32_t shards;
	double share;                         /* at the last derivation */
	cnt_shardmap_change *history;
	size_t nhistory;
} cnt_shardmap_key;

typedef struct cnt_shardmap cnt_shardmap;

/* An empty map (updated at INT64_MIN: never derived).  NULL with err set. */
cnt_shardmap *cnt_shardmap_new(cnt_err *err);
void cnt_shardmap_free(cnt_shardmap *m);

/* Parses text[0..n) (the format above); name names it in messages.  NULL
 * with err set: "shard map 'NAME': $.path: what is wrong". */
cnt_shardmap *cnt_shardmap_parse(const char *text, size_t n, const char *name, cnt_err *err);
/* Reads and parses the file at path (at most CNT_SHARDMAP_FILE_MAX bytes). */
cnt_shardmap *cnt_shardmap_load(const char *path, cnt_err *err);

/* Appends the canonical JSON text of m (a trailing newline) to out.  0, or
 * -1 with err set (out of memory). */
int cnt_shardmap_format(const cnt_shardmap *m, cnt_buf *out, cnt_err *err);

/* The shard count of a key: 1 when the map does not name it. */
uint32_t cnt_shardmap_shards(const cnt_shardmap *m, cnt_slice tenant, cnt_slice counter, cnt_slice member);

/* The keys in canonical order, and the time of the last derivation. */
size_t cnt_shardmap_nkeys(const cnt_shardmap *m);
const cnt_shardmap_key *cnt_shardmap_key_at(const cnt_shardmap *m, size_t i);
int64_t cnt_shardmap_updated(const cnt_shardmap *m);
/* The largest shard count of any key (1 for an empty map). */
uint32_t cnt_shardmap_max(const cnt_shardmap *m);

/* Observed rates, summed over --stats files. */
typedef struct cnt_shardmap_obs cnt_shardmap_obs;
cnt_shardmap_obs *cnt_shardmap_obs_new(cnt_err *err);
void cnt_shardmap_obs_free(cnt_shardmap_obs *o);
/* Adds one --stats JSON object text[0..n): its "out" (an integer) and its
 * "top_keys" (an array of {tenant_id, counter_id, member_ref, events,
 * ...}).  0, or -1 with err set (not such an object, out of memory). */
int cnt_shardmap_obs_add(cnt_shardmap_obs *o, const char *text, size_t n, const char *name, cnt_err *err);
int cnt_shardmap_obs_load(cnt_shardmap_obs *o, const char *path, cnt_err *err);
uint64_t cnt_shardmap_obs_events(const cnt_shardmap_obs *o);

typedef struct cnt_shardmap_policy {
	double target;         /* t: the share one shard should carry at most (0, 1] */
	double merge_ratio;    /* r: (0, 0.5] */
	int64_t hold_ms;       /* h: >= 0 */
	uint32_t max_shards;   /* a power of two, 1 to CNT_SHARDMAP_MAX_SHARDS */
} cnt_shardmap_policy;

#define CNT_SHARDMAP_POLICY_INIT {0.01, 0.25, INT64_C(86400000), 64}

typedef struct cnt_shardmap_summary {
	size_t splits, merges, keys, hot;   /* hot: keys with more than 1 shard */
} cnt_shardmap_summary;

/* need(share) under policy p (above). */
uint32_t cnt_shardmap_need(double share, const cnt_shardmap_policy *p);

/* Updates m from o (whose keys it sorts and sums) at time now (the rule above) and sets its updated time
 * to now.  0, or -1 with err set: now not after m's updated time, a
 * policy out of range (m is then unchanged), out of memory (m is then
 * emptied: only cnt_shardmap_free it). */
int cnt_shardmap_derive(cnt_shardmap *m, cnt_shardmap_obs *o, const cnt_shardmap_policy *p,
	int64_t now, cnt_shardmap_summary *sum, cnt_err *err);

#endif
