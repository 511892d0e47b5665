/*
 * dedup_filter.c - the dedup stage (see dedup_filter.h).
 */
#include "count/dedup_filter.h"

#include "avro/container.h"
#include "base/filehead.h"

#include <stdlib.h>
#include <string.h>

typedef struct pending {
	size_t off, len;         /* the event's bytes in the batch buffer */
	cnt_dkey key;
	uint64_t t, h;
	size_t counter;
} pending;

struct cnt_dedup_filter {
	const cnt_defs *defs;
	const char *defs_name;
	cnt_dedup *table;
	cnt_writer *out, *dups;
	pending batch[CNT_DEDUP_BATCH];
	int nb;
	cnt_buf bytes;
	cnt_dedup_counter *counters;
	cnt_dedup_totals totals;
};

cnt_dkey cnt_dedup_event_key(const cnt_counter_version *cv, const cnt_event *e)
{
	/* A compensation (cnt-retract(1)) shares its original's member and
	 * item: it is keyed by its own idempotency key, so it is never taken
	 * for a second view of the item, and a resent one is a duplicate. */
	if (cv->dedup_key == CNT_DEDUP_ITEM_MEMBER && e->item.p != NULL && e->retracts.p == NULL) {
		const void *parts[4] = {e->tenant_id.p, e->counter_id.p, e->member_ref.p, e->item.p};
		size_t lens[4] = {e->tenant_id.n, e->counter_id.n, e->member_ref.n, e->item.n};

		return cnt_dedup_key(4, parts, lens);
	} else {
		const void *parts[3] = {e->tenant_id.p, e->counter_id.p, e->idempotency_key.p};
		size_t lens[3] = {e->tenant_id.n, e->counter_id.n, e->idempotency_key.n};

		return cnt_dedup_key(3, parts, lens);
	}
}

uint64_t cnt_dedup_event_second(const cnt_event *e)
{
	return e->ingest_time >= 0 ? (uint64_t)(e->ingest_time / 1000) : 0;
}

cnt_dedup_filter *cnt_dedup_filter_new(const cnt_defs *defs, const char *defs_name, cnt_dedup *table,
	cnt_writer *out, cnt_writer *dups, cnt_err *err)
{
	cnt_dedup_filter *f = calloc(1, sizeof(*f));

	if (f == NULL || (f->counters = calloc(cnt_defs_ncounters(defs) + 1, sizeof(*f->counters))) == NULL) {
		free(f);
		cnt_err_nomem(err);
		return NULL;
	}
	f->defs = defs;
	f->defs_name = defs_name;
	f->table = table;
	f->out = out;
	f->dups = dups;
	return f;
}

void cnt_dedup_filter_free(cnt_dedup_filter *f)
{
	if (f == NULL)
		return;
	cnt_buf_release(&f->bytes);
	free(f->counters);
	free(f);
}

static int put(cnt_writer *w, const uint8_t *p, size_t n, cnt_err *err)
{
	if (cnt_buf_append(cnt_writer_buf(w), p, n) != 0)
		return cnt_err_oom(err, "writing an event");
	return cnt_writer_commit(w, err);
}

int cnt_dedup_filter_flush(cnt_dedup_filter *f, cnt_err *err)
{
	/* All at once: a prefetch waits for its page walk, and walks issued
	 * back to back overlap (one per event, each waited for alone, cost
	 * a memory latency apiece). */
	for (int k = 0; k < f->nb; k++)
		cnt_dedup_prefetch(f->table, f->batch[k].key);
	for (int k = 0; k < f->nb; k++) {
		const pending *pe = &f->batch[k];
		const uint8_t *p = f->bytes.p + pe->off;
		int seen = cnt_dedup_check(f->table, pe->key, pe->t, pe->h);

		if (seen < 0)
			return cnt_err_oom(err, "growing the dedup table past %zu keys", f->table->count);
		if (seen == 0) {
			if (put(f->out, p, pe->len, err) != 0)
				return -1;
			f->totals.out++;
		} else {
			f->totals.duplicates++;
			f->counters[pe->counter].duplicates++;
			if (f->dups && put(f->dups, p, pe->len, err) != 0)
				return -1;
		}
	}
	f->nb = 0;
	f->bytes.len = 0;
	return 0;
}

int cnt_dedup_filter_finish(cnt_dedup_filter *f, cnt_err *err)
{
	const cnt_dedup_totals *t = &f->totals;

	if (cnt_dedup_filter_flush(f, err) != 0)
		return -1;
	if (t->in != t->out + t->duplicates + t->rejected)
		return cnt_err_set(err, "internal: records do not balance: in %llu != out %llu + duplicates %llu + rejected %llu",
			(unsigned long long)t->in, (unsigned long long)t->out, (unsigned long long)t->duplicates,
			(unsigned long long)t->rejected);
	if ((f->out && cnt_writer_finish(f->out, err) != 0) || (f->dups && cnt_writer_finish(f->dups, err) != 0))
		return -1;
	return 0;
}

int cnt_dedup_filter_admit(cnt_dedup_filter *f, const cnt_event *e, cnt_count_target *t,
	cnt_count_reject *rej)
{
	if (f->totals.in == 0 || e->event_time < f->totals.event_time_min)
		f->totals.event_time_min = e->event_time;
	if (f->totals.in == 0 || e->event_time > f->totals.event_time_max)
		f->totals.event_time_max = e->event_time;
	if (f->totals.in == 0 || e->ingest_time < f->totals.ingest_time_min)
		f->totals.ingest_time_min = e->ingest_time;
	if (f->totals.in == 0 || e->ingest_time > f->totals.ingest_time_max)
		f->totals.ingest_time_max = e->ingest_time;
	f->totals.in++;
	if (cnt_count_lookup(f->defs, f->defs_name, e, t, rej) != 0) {
		f->totals.rejected++;
		if (t->tenant == NULL)
			f->totals.unknown_tenant++;
		else if (t->version != NULL)
			f->totals.not_monotonic++;
		else
			f->totals.unknown_counter++;
		return 1;
	}
	f->counters[t->counter_index].in++;
	return 0;
}

void cnt_dedup_filter_prefetch(const cnt_dedup_filter *f, cnt_dkey key)
{
	cnt_dedup_prefetch(f->table, key);
}

int cnt_dedup_filter_judge(cnt_dedup_filter *f, cnt_dkey key, uint64_t t, uint64_t h, size_t counter,
	const uint8_t *raw, size_t rawn, cnt_err *err)
{
	int seen = cnt_dedup_check(f->table, key, t, h);

	if (seen < 0)
		return cnt_err_oom(err, "growing the dedup table past %zu keys", f->table->count);
	if (seen == 0) {
		f->totals.out++;
		return 0;
	}
	f->totals.duplicates++;
	f->counters[counter].duplicates++;
	if (f->dups && put(f->dups, raw, rawn, err) != 0)
		return -1;
	return 1;
}

int cnt_dedup_filter_event(cnt_dedup_filter *f, const cnt_event *e, const uint8_t *raw, size_t rawn,
	cnt_count_reject *rej, cnt_err *err)
{
	cnt_count_target t;
	pending *pe;
	int rc;

	if (cnt_dedup_filter_admit(f, e, &t, rej) != 0)
		return 1;
	if (f->nb == CNT_DEDUP_BATCH && cnt_dedup_filter_flush(f, err) != 0)
		return -1;
	pe = &f->batch[f->nb];
	pe->off = f->bytes.len;
	rc = raw ? cnt_buf_append(&f->bytes, raw, rawn) : cnt_event_encode(e, &f->bytes);
	if (rc != 0)
		return cnt_err_oom(err, "queueing an event");
	pe->len = f->bytes.len - pe->off;
	pe->t = cnt_dedup_event_second(e);
	pe->h = t.version->dedup_horizon_s > 0 ? (uint64_t)t.version->dedup_horizon_s : 0;
	pe->counter = t.counter_index;
	pe->key = cnt_dedup_event_key(t.version, e);
	f->nb++;
	return 0;
}

int cnt_dedup_filter_stage(void *f, const cnt_event *e, const uint8_t *raw, size_t rawn,
	cnt_count_reject *rej, cnt_err *err)
{
	return cnt_dedup_filter_event(f, e, raw, rawn, rej, err);
}

const cnt_dedup_totals *cnt_dedup_filter_totals(const cnt_dedup_filter *f)
{
	return &f->totals;
}

const cnt_dedup_counter *cnt_dedup_filter_counter(const cnt_dedup_filter *f, size_t i)
{
	return &f->counters[i];
}

/* An Avro container by its first block; anything else (a file cnt-dedup
 * will refuse) as if each key took 48 bytes, an archive's least. */
static size_t guess_keys(const void *head, size_t got, uint64_t size)
{
	size_t k = cnt_container_guess_records(head, got, size);

	return k ? k : (size_t)(size / 48);
}

size_t cnt_dedup_expected_keys(char *const *names, int n)
{
	return cnt_files_guess(names, n, guess_keys);
}
