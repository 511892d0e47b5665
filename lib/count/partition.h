/*
 * partition.h - splitting an event archive into N parts that can be
 * counted apart and merged (cnt-partition(1)).
 *
 * The route.  Every event goes to part  H mod N,  H the XXH3-64 (seed 0)
 * of three strings, each followed by a NUL byte (as the dedup key is
 * built, count/dedup.h), chosen by the dedup key rule of the event's
 * counter version (count/dedup_filter.h):
 *
 *   the dedup key holds the member    (tenant_id, counter_id, member_ref)
 *   (item_member, an event with an item
 *   that is not a compensation)
 *   otherwise (idempotency_key, or an  (tenant_id, counter_id, idempotency_key)
 *   event without item, or a
 *   compensation)
 *
 * An event whose tenant or counter version the definitions do not
 * declare is routed by (tenant_id, counter_id, member_ref): every part's
 * cnt-dedup rejects it as the one-machine run would.
 *
 * Why this is exact.  cnt-dedup judges an event by its dedup key alone
 * (and the ingest time of the key's earlier occurrence), in log order.
 * The route is a function of the key's parts (the member is one of them
 * in the first case; the rest of the second case is exactly the key), so
 * every occurrence of a key goes to one part, in the order it had, and
 * that part's cnt-dedup sees the same sequence of occurrences of the key
 * as one machine would: it keeps and drops the same events.  A route by
 * member alone could not be exact: an idempotency key does not include
 * the member, and cnt-dedup drops a retry that names another member (the
 * first occurrence is kept and counted under its own member), so the two
 * must meet in one part although their members differ.  For those
 * counters one member's events are spread over the parts; the bucket
 * records of one key are then summed when cnt-accumulate merges the
 * parts' bucket files, and every aggregate being commutative and
 * associative (count/accum.h), the merged file has the bytes of the
 * one-machine run.  The only inexactness is a collision of cnt-dedup's
 * 96-bit fingerprints between two keys routed apart (about n^2 / 2^97).
 *
 * Hot members (cnt_partition_set_map, count/shardmap.h).  With a shard
 * map, an event routed by the member whose key the map gives k > 1
 * shards is routed by four strings instead: tenant_id, counter_id,
 * member_ref and its route shard XXH3-64(item) mod k written in decimal,
 * each followed by a NUL byte.  Such an event has an item, and the item
 * is part of its dedup key (tenant, counter, member, item), so every
 * occurrence of the key still goes to one part; the member's events are
 * spread over up to k parts, and their bucket records meet again when
 * cnt-accumulate merges the parts.  Keys the map does not name (or gives
 * 1 shard) are routed as without a map.
 *
 * Within a part, events keep their order in the input.
 */
#ifndef CNT_COUNT_PARTITION_H
#define CNT_COUNT_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include "avro/container.h"
#include "count/stage.h"
#include "model/defs.h"
#include "model/event.h"

#define CNT_PARTITION_MAX 4096

/* What the route of e hashes (the rule above): 1 when the member
 * (tenant_id, counter_id, member_ref), 0 when the idempotency key.  cv is
 * e's counter version, NULL when the definitions do not declare it. */
int cnt_partition_by_member(const cnt_counter_version *cv, const cnt_event *e);

/* The part of e among n (n >= 1): the rule above; map may be NULL. */
struct cnt_shardmap;
uint32_t cnt_partition_of(const cnt_counter_version *cv, const cnt_event *e, uint32_t n);
uint32_t cnt_partition_of_mapped(const cnt_counter_version *cv, const cnt_event *e, uint32_t n,
	const struct cnt_shardmap *map);

typedef struct cnt_partition_totals {
	uint64_t in, out;
	uint64_t by_member, by_key;   /* how events were routed (of in) */
	uint64_t undeclared;          /* of by_member: tenant or version not declared */
	uint64_t by_shard;            /* of by_member: a hot member's, by its route shard */
} cnt_partition_totals;

typedef struct cnt_partition cnt_partition;

/* A partitioner over defs writing part i to parts[i] (n writers, 1 to
 * CNT_PARTITION_MAX).  defs and the writers must outlive it and are not
 * owned.  NULL with err set (out of memory, n out of range). */
cnt_partition *cnt_partition_new(const cnt_defs *defs, uint32_t n, cnt_writer *const *parts, cnt_err *err);
void cnt_partition_free(cnt_partition *p);
/* Routes hot members by map m from now on (the rule above); m must
 * outlive p and is not owned; NULL: no map. */
void cnt_partition_set_map(cnt_partition *p, const struct cnt_shardmap *m);

/* Routes e to its part: its Avro bytes raw/rawn when the reader has them
 * (copied as they are), else raw NULL and e is encoded.  Returns 0, or -1
 * with err set (memory, a write).  Shaped as a cnt_count_stage (it never
 * rejects; rej is not used). */
int cnt_partition_stage(void *p, const cnt_event *e, const uint8_t *raw, size_t rawn,
	cnt_count_reject *rej, cnt_err *err);

/* Ends: checks that every event went to exactly one part (in = out = the
 * sum of the parts; an internal error otherwise) and finishes every
 * writer (cnt_writer_finish).  0 or -1 with err set. */
int cnt_partition_finish(cnt_partition *p, cnt_err *err);

/* Counts so far; the events written to part i (i < n). */
const cnt_partition_totals *cnt_partition_get_totals(const cnt_partition *p);
uint64_t cnt_partition_part_count(const cnt_partition *p, uint32_t i);

#endif
