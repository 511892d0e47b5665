/*
 * stage_stats.c - the counting stages' --stats keys (stage_stats.h).
 */
#include "cli/stage_stats.h"

#include <string.h>

#include "avro/json.h"
#include "count/stage.h"
#include "ingest/hold.h"

static void top_keys(cnt_stats *s, const cnt_topkey *hot)
{
	cnt_topkey_top tk, list[CNT_TOPKEY_LIST];
	size_t n = cnt_topkey_list(hot, list, CNT_TOPKEY_LIST);

	cnt_topkey_get(hot, &tk);
	cnt_stats_double(s, "top_key_share", cnt_count_ratio(tk.count, tk.n));
	cnt_stats_object(s, "top_key");
	cnt_stats_str(s, "tenant_id", tk.tenant.p, (long)tk.tenant.n);
	cnt_stats_str(s, "counter_id", tk.counter.p, (long)tk.counter.n);
	cnt_stats_str(s, "member_ref", tk.member.p, (long)tk.member.n);
	cnt_stats_u64(s, "events", tk.count);
	cnt_stats_bool(s, "exact", tk.exact);
	cnt_stats_close(s);
	cnt_stats_array(s, "top_keys");
	for (size_t i = 0; i < n; i++) {
		/* a shard map names these keys: one its JSON cannot carry (from
		 * files no cnt tool wrote) would name another, so it is left out */
		if (!cnt_json_text_ok(list[i].tenant.p, list[i].tenant.n) ||
		    !cnt_json_text_ok(list[i].counter.p, list[i].counter.n) ||
		    !cnt_json_text_ok(list[i].member.p, list[i].member.n))
			continue;
		cnt_stats_object(s, NULL);
		cnt_stats_str(s, "tenant_id", list[i].tenant.p, (long)list[i].tenant.n);
		cnt_stats_str(s, "counter_id", list[i].counter.p, (long)list[i].counter.n);
		cnt_stats_str(s, "member_ref", list[i].member.p, (long)list[i].member.n);
		cnt_stats_u64(s, "events", list[i].count);
		cnt_stats_double(s, "share", cnt_count_ratio(list[i].count, list[i].n));
		cnt_stats_close(s);
	}
	cnt_stats_close(s);
}

void cnt_stage_stats_dedup(cnt_stats *s, const cnt_defs *defs, cnt_dedup_filter *f, size_t loaded, size_t kept)
{
	const cnt_dedup_totals *t = cnt_dedup_filter_totals(f);

	cnt_stats_u64(s, "in", t->in);
	cnt_stats_u64(s, "out", t->out);
	cnt_stats_u64(s, "rejected", t->rejected);
	cnt_stats_u64(s, "duplicates", t->duplicates);
	cnt_stats_u64(s, "held", 0);
	cnt_stats_bool(s, "balanced", t->in == t->out + t->duplicates + t->rejected);
	cnt_stats_object(s, "rejected_by_reason");
	cnt_stats_u64(s, "unknown_tenant", t->unknown_tenant);
	cnt_stats_u64(s, "unknown_counter", t->unknown_counter);
	cnt_stats_u64(s, "not_monotonic", t->not_monotonic);
	cnt_stats_close(s);
	cnt_stats_double(s, "dedup_hit_rate", cnt_count_ratio(t->duplicates, t->in - t->rejected));
	cnt_stats_u64(s, "state_keys_loaded", loaded);
	cnt_stats_u64(s, "state_keys_saved", kept);
	if (t->in > 0) {
		cnt_stats_i64(s, "event_time_min", t->event_time_min);
		cnt_stats_i64(s, "event_time_max", t->event_time_max);
		cnt_stats_i64(s, "ingest_time_min", t->ingest_time_min);
		cnt_stats_i64(s, "ingest_time_max", t->ingest_time_max);
	}
	cnt_stats_array(s, "counters");
	for (size_t k = 0; k < cnt_defs_ncounters(defs); k++) {
		const cnt_counter *ct = cnt_defs_counter_at(defs, k);
		const cnt_dedup_counter *dc = cnt_dedup_filter_counter(f, k);

		if (dc->in == 0)
			continue;
		cnt_stats_object(s, NULL);
		cnt_stats_str(s, "tenant_id", ct->tenant_id, -1);
		cnt_stats_str(s, "counter_id", ct->counter_id, -1);
		cnt_stats_u64(s, "in", dc->in);
		cnt_stats_u64(s, "duplicates", dc->duplicates);
		cnt_stats_double(s, "dedup_hit_rate", cnt_count_ratio(dc->duplicates, dc->in));
		cnt_stats_close(s);
	}
}

void cnt_stage_stats_window(cnt_stats *s, const cnt_defs *defs, cnt_window *win, const cnt_topkey *hot,
	uint32_t shards, const cnt_shardmap *map)
{
	const cnt_window_totals *t = cnt_window_get_totals(win);

	cnt_stats_u64(s, "in", t->in);
	cnt_stats_u64(s, "out", t->out);
	cnt_stats_u64(s, "rejected", t->rejected);
	cnt_stats_u64(s, "duplicates", 0);
	cnt_stats_u64(s, "held", 0);
	cnt_stats_u64(s, "late", t->late);
	cnt_stats_bool(s, "balanced", t->in == t->out + t->rejected);
	cnt_stats_object(s, "rejected_by_reason");
	cnt_stats_u64(s, "unknown_tenant", t->unknown_tenant);
	cnt_stats_u64(s, "unknown_counter", t->unknown_counter);
	cnt_stats_u64(s, "not_monotonic", t->not_monotonic);
	cnt_stats_close(s);
	cnt_stats_double(s, "late_ratio", cnt_count_ratio(t->late, t->out));
	cnt_stats_u64(s, "shards", map ? cnt_shardmap_max(map) : shards);
	if (map) {
		cnt_stats_object(s, "shard_map");
		cnt_stats_u64(s, "keys", cnt_shardmap_nkeys(map));
		cnt_stats_u64(s, "max_shards", cnt_shardmap_max(map));
		cnt_stats_close(s);
	}
	top_keys(s, hot);
	cnt_stats_array(s, "counters");
	for (size_t k = 0; k < cnt_defs_ncounters(defs); k++) {
		const cnt_counter *ct = cnt_defs_counter_at(defs, k);
		const cnt_window_counter *wc = cnt_window_get_counter(win, k);

		if (wc->in == 0)
			continue;
		cnt_stats_object(s, NULL);
		cnt_stats_str(s, "tenant_id", ct->tenant_id, -1);
		cnt_stats_str(s, "counter_id", ct->counter_id, -1);
		cnt_stats_u64(s, "in", wc->in);
		cnt_stats_u64(s, "late", wc->late);
		cnt_stats_double(s, "late_ratio", cnt_count_ratio(wc->late, wc->in));
		cnt_stats_i64(s, "max_lag_ms", wc->max_lag_ms);
		cnt_stats_u64(s, "clock_ahead", wc->clock_ahead);
		cnt_stats_i64(s, "max_clock_ahead_ms", wc->max_clock_ahead_ms);
		cnt_stats_close(s);
	}
}

void cnt_stage_stats_accum(cnt_stats *s, const cnt_accum_stats *st, size_t memory)
{
	cnt_stats_u64(s, "in", st->events + st->buckets_in);
	cnt_stats_u64(s, "out", st->groups_out);
	cnt_stats_u64(s, "rejected", 0);
	cnt_stats_u64(s, "duplicates", 0);
	cnt_stats_u64(s, "held", 0);
	cnt_stats_u64(s, "late", st->late_events);
	cnt_stats_bool(s, "balanced", 1);
	cnt_stats_double(s, "late_ratio", cnt_count_ratio(st->late_events, st->events));
	cnt_stats_u64(s, "events", st->events);
	cnt_stats_u64(s, "buckets_in", st->buckets_in);
	cnt_stats_i64(s, "events_in_buckets", (int64_t)st->events_in_buckets);
	cnt_stats_i64(s, "events_out", (int64_t)st->events_out);
	cnt_stats_u64(s, "compensations", st->compensations);
	cnt_stats_i64(s, "scaled_extra", (int64_t)st->scaled_extra);
	cnt_stats_u64(s, "emptied", st->emptied);
	cnt_stats_u64(s, "stale", st->stale);
	cnt_stats_u64(s, "dim_records", st->dim_records);
	cnt_stats_u64(s, "day_records", st->day_records);
	cnt_stats_u64(s, "spill_runs", st->runs);
	cnt_stats_u64(s, "sum_overflows", st->sum_overflows);
	cnt_stats_u64(s, "peak_memory_estimate", st->peak_bytes);
	cnt_stats_u64(s, "memory_limit", memory);
}

/* ---- cnt-ingest ---- */

static double hit_rate(uint64_t acc, uint64_t dups)
{
	return cnt_count_ratio(dups, acc + dups);   /* rounded to 6 decimals, as every tool's ratios */
}

typedef struct ingest_ctx {
	cnt_stats *s;
	const cnt_ingest *g;
	int64_t now_ms;
} ingest_ctx;

static void counter_stats(void *ctx, const char *tenant, const char *counter, uint64_t acc, uint64_t dups)
{
	const ingest_ctx *x = ctx;
	cnt_stats *s = x->s;
	const cnt_counter *c = cnt_defs_counter(cnt_ingest_defs(x->g), tenant, strlen(tenant), counter, strlen(counter));
	uint64_t held = c ? cnt_ingest_counter_held(x->g, c) : 0;
	uint64_t smp = c ? cnt_ingest_counter_sampled_out(x->g, c) : 0;

	cnt_stats_object(s, NULL);
	cnt_stats_str(s, "tenant_id", tenant, -1);
	cnt_stats_str(s, "counter_id", counter, -1);
	cnt_stats_u64(s, "accepted", acc - held - smp);
	cnt_stats_u64(s, "held", held);
	cnt_stats_u64(s, "sampled_out", smp);
	cnt_stats_u64(s, "duplicates", dups);
	cnt_stats_double(s, "dedup_hit_rate", hit_rate(acc, dups));
	if (c != NULL) {   /* unit cost (cnt-definitions(5), "UNIT COSTS") */
		const cnt_counter_version *v = cnt_counter_version_at(c, x->now_ms);

		v = v ? v : cnt_counter_version_latest(c);
		cnt_stats_u64(s, "admitted", acc - held);
		cnt_stats_double(s, "unit_cost_per_m", v->unit_cost_per_m);
		cnt_stats_double(s, "cost", (double)(acc - held) / 1e6 * v->unit_cost_per_m);
	}
	cnt_stats_close(s);
}

/* "member_cap": {tenant: {members, cap, rejected}} for each capped tenant. */
static void cap_stats(cnt_stats *s, const cnt_members *m, const cnt_defs *d)
{
	cnt_stats_object(s, "member_cap");
	for (size_t i = 0; m != NULL && i < cnt_defs_ntenants(d); i++) {
		const cnt_tenant *t = cnt_defs_tenant_at(d, i);

		if (t->member_cap <= 0)
			continue;
		cnt_stats_object(s, t->tenant_id);
		cnt_stats_u64(s, "members", cnt_members_count(m, t));
		cnt_stats_i64(s, "cap", t->member_cap);
		cnt_stats_u64(s, "rejected", cnt_members_rejected(m, t));
		cnt_stats_close(s);
	}
	cnt_stats_close(s);
}

int cnt_stage_stats_ingest(cnt_stats *s0, const cnt_ingest *g, const cnt_members *members,
	const cnt_topkey *hot, int64_t now_ms, cnt_err *err)
{
	ingest_ctx x = {s0, g, now_ms};
	const cnt_admit_stats *st = cnt_ingest_stats(g);
	const cnt_hold_stats *hs = cnt_ingest_held(g);
	uint64_t held = hs ? hs->held : 0, smp = cnt_ingest_sampled_out(g);
	uint64_t out = st->accepted - held - smp;
	const cnt_ingest_input *in;
	cnt_stats *s = s0;
	size_t n;

	cnt_stats_u64(s, "in", st->in);
	cnt_stats_u64(s, "out", out);
	cnt_stats_u64(s, "rejected", st->rejected);
	cnt_stats_u64(s, "duplicates", st->duplicate);
	cnt_stats_u64(s, "held", held);
	cnt_stats_u64(s, "sampled_out", smp);
	cnt_stats_bool(s, "balanced", st->in == out + st->rejected + st->duplicate + held + smp);
	cnt_stats_object(s, "held_by_signal");
	for (int k = 0; k < CNT_HOLD_NKINDS; k++)
		cnt_stats_u64(s, cnt_defs_hold_name((cnt_hold_kind)k), hs ? hs->by_signal[k] : 0);
	cnt_stats_close(s);
	cnt_stats_double(s, "dedup_hit_rate", hit_rate(st->accepted, st->duplicate));
	if (hot != NULL)
		top_keys(s, hot);
	cnt_stats_object(s, "rejected_by_reason");
	for (int r = 0; r < CNT_REJ_COUNT; r++)
		cnt_stats_u64(s, cnt_reject_name((cnt_reject_reason)r), st->by_reason[r]);
	cnt_stats_close(s);
	cnt_stats_array(s, "counters");
	if (cnt_ingest_each_counter(g, counter_stats, &x, err) != 0)
		return -1;
	cnt_stats_close(s);
	cnt_stats_array(s, "inputs");
	for (in = cnt_ingest_inputs(g, &n); n > 0; in++, n--) {
		cnt_stats_object(s, NULL);
		cnt_stats_str(s, "name", in->name, -1);
		cnt_stats_str(s, "format", cnt_input_format_name(in->format), -1);
		cnt_stats_u64(s, "records", in->records);
		cnt_stats_close(s);
	}
	cnt_stats_close(s);
	cnt_stats_u64(s, "blank_lines", cnt_ingest_blank_lines(g));
	cap_stats(s, members, cnt_ingest_defs(g));
	return 0;
}
