/*
 * test_fused.c - the counting chain in one process (lib/count/fused.h)
 * and cnt_accum_absorb (lib/count/accum.h).
 *
 * A generated log (three counters of two tenants, one of them keyed on
 * (member, item), duplicates within and across two inputs, late events,
 * events of an undeclared counter, more events than one batch holds) is
 * counted three ways: the stages one after the other through files, as
 * the pipe runs them (the reference); cnt_fused_run with one thread; and
 * with two threads and two accumulators.  The bucket files, the
 * duplicates, the rejects, the saved dedup state and the counts must be
 * the same bytes and numbers.  Every bucket file carries day roll-ups
 * (one tenant in Asia/Kolkata, whose days the events cross).  The two
 * threads' halves are written both ways: absorbed into one accumulator
 * and finished, and finished at once, each half on a thread of its own
 * (cnt_accum_finish_halves), whose records and day records must merge
 * into the same bytes; with spills, finish_halves absorbs.  The day
 * records are also kept in lent memory (cnt_accum_lend, as cnt-count lends
 * its dead dedup table), filled with junk first, one that holds them all
 * and one they outgrow: the same bytes.  Absorbing an accumulator that
 * shares a key is an internal error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "count/fused.h"
#include "unit.h"

static const char defs_json[] =
	"{\"format\": \"cnt-definitions/1\","
	" \"tenants\": [{\"tenant_id\": \"t\", \"timezone\": \"UTC\"}, {\"tenant_id\": \"k\", \"timezone\": \"Asia/Kolkata\"}],"
	" \"counters\": ["
	"  {\"tenant_id\": \"t\", \"counter_id\": \"dist\", \"versions\": ["
	"     {\"version\": 1, \"type\": \"exact\", \"dedup_horizon_s\": 3600, \"lateness_horizon_s\": 600},"
	"     {\"version\": 2, \"effective_from\": \"2026-02-01T00:00:00Z\", \"type\": \"exact\","
	"      \"dedup_horizon_s\": 7200, \"lateness_horizon_s\": 900}]},"
	"  {\"tenant_id\": \"t\", \"counter_id\": \"views\", \"versions\": ["
	"     {\"version\": 1, \"type\": \"unique\", \"dedup_key\": \"item_member\", \"dedup_horizon_s\": 3600}]},"
	"  {\"tenant_id\": \"k\", \"counter_id\": \"dist\", \"versions\": [{\"version\": 1, \"type\": \"exact\"}]}]}";

#define T0 INT64_C(1772359200000)   /* 2026-03-01T10:00:00Z */
#define N 9000

static cnt_slice sl(const char *s)
{
	cnt_slice x = {s, s ? strlen(s) : 0};

	return x;
}

/* Writes events lo..hi-1 of the generated log to a new memfd. */
static int make_log(int lo, int hi)
{
	cnt_err err;
	int fd = memfd_create("log", MFD_CLOEXEC);
	cnt_writer *w = cnt_event_writer_new(fd, "log", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);

	CHECK(w != NULL);
	for (int i = lo; w && i < hi; i++) {
		/* every 7th repeats an earlier key: a duplicate */
		int k = i % 7 == 0 && i > 10 ? i - 10 : i;
		char key[32], member[32], item[32];
		static const char *counters[] = {"dist", "views", "dist", "ghost"};
		const char *c = counters[k % 4];
		cnt_event e;

		memset(&e, 0, sizeof(e));
		snprintf(key, sizeof(key), "e%d", k);
		snprintf(member, sizeof(member), "m%d", k % 577);
		snprintf(item, sizeof(item), "v%d", k % 13);
		e.event_id = sl(key);
		e.idempotency_key = sl(key);
		e.tenant_id = sl(k % 4 == 2 ? "k" : "t");
		e.counter_id = sl(c);
		/* t/dist at both versions, in turn: one stream each */
		e.counter_version = k % 4 == 0 && k % 3 == 0 ? 2 : 1;
		e.member_ref = sl(member);
		e.item = strcmp(c, "views") == 0 ? sl(item) : sl(NULL);
		e.delta = 1 + k % 5;
		e.event_time = T0 + (int64_t)(k % 40) * 900000;
		/* some arrive hours late */
		e.ingest_time = e.event_time + (k % 11 == 0 ? 3 * 3600000 : 1000);
		CHECK_EQ_INT(cnt_event_encode(&e, cnt_writer_buf(w)), 0);
		CHECK_EQ_INT(cnt_writer_commit(w, &err), 0);
	}
	CHECK(w && cnt_writer_finish(w, &err) == 0);
	cnt_writer_free(w);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* The bytes of fd (from its start) into a fresh buffer; *n their count. */
static uint8_t *slurp(int fd, size_t *n)
{
	off_t end = lseek(fd, 0, SEEK_END);
	uint8_t *p = malloc((size_t)end + 1);

	*n = 0;
	if (p && pread(fd, p, (size_t)end, 0) == (ssize_t)end)
		*n = (size_t)end;
	return p;
}

typedef struct outcome {
	uint8_t *buckets, *dups, *rejects, *state;
	size_t nb, nd, nr, ns;
	cnt_dedup_totals dt;
	cnt_window_totals wt;
	uint64_t events, late, day_records, groups_out;
} outcome;

static void outcome_free(outcome *o)
{
	free(o->buckets);
	free(o->dups);
	free(o->rejects);
	free(o->state);
}

/* Saves table and the bucket file of acc, with its day roll-ups (zones
 * from d), into o; with acc2, the two as halves (halves: finished at
 * once, else acc2 absorbed into acc first). */
static void finish(outcome *o, cnt_dedup *table, const cnt_defs *d, cnt_accum *acc, cnt_accum *acc2, int halves)
{
	cnt_err err;
	int bfd = memfd_create("buckets", MFD_CLOEXEC), sfd = memfd_create("state", MFD_CLOEXEC);
	cnt_writer *w = cnt_bucket_writer_new(bfd, "buckets", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	cnt_rollup_zones z = {d, cnt_tz_cache_new(), "defs.json"};
	size_t kept;

	CHECK(z.tzc && cnt_accum_days(acc, cnt_rollup_defs_zone, &z, &err) == 0);
	if (acc2 && halves)
		CHECK_EQ_INT(cnt_accum_finish_halves(acc, acc2, w, &err), 0);
	else
		CHECK((acc2 == NULL || cnt_accum_absorb(acc, acc2, &err) == 0) && cnt_accum_finish(acc, w, &err) == 0);
	CHECK(w && cnt_writer_finish(w, &err) == 0);
	CHECK_EQ_INT(cnt_accum_check_balance(acc, &err), 0);
	CHECK_EQ_INT(cnt_dedup_save(table, sfd, "state", &kept, &err), 0);
	o->buckets = slurp(bfd, &o->nb);
	o->state = slurp(sfd, &o->ns);
	o->events = cnt_accum_get_stats(acc)->events;
	o->late = cnt_accum_get_stats(acc)->late_events;
	o->day_records = cnt_accum_get_stats(acc)->day_records;
	o->groups_out = cnt_accum_get_stats(acc)->groups_out;
	cnt_writer_free(w);
	cnt_tz_cache_free(z.tzc);
	close(bfd);
	close(sfd);
}

/* The reference: dedup, window and accumulate one after the other,
 * through files, as the pipe runs them. */
static void reference(const cnt_defs *d, const int *logs, outcome *o)
{
	cnt_err err;
	int mid = memfd_create("deduped", MFD_CLOEXEC), win = memfd_create("windowed", MFD_CLOEXEC);
	int dfd = memfd_create("dups", MFD_CLOEXEC), rfd = memfd_create("rejects", MFD_CLOEXEC);
	cnt_writer *mw = cnt_event_writer_new(mid, "deduped", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	cnt_writer *dw = cnt_event_writer_new(dfd, "dups", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	char *schema = cnt_windowed_schema_json(&err);
	cnt_writer *ww = cnt_writer_new(win, "windowed", schema, CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, 0, &err);
	cnt_dedup table;
	cnt_dedup_filter *f;
	cnt_window *wn;
	cnt_accum *acc = cnt_accum_new((size_t)1 << 30, "/tmp", &err);
	cnt_rejects rej;
	static char a_name[] = "a.avro", b_name[] = "b.avro";
	char *names[2] = {a_name, b_name};

	CHECK_EQ_INT(cnt_dedup_init(&table, 0), 0);
	f = cnt_dedup_filter_new(d, "defs.json", &table, mw, dw, &err);
	wn = cnt_window_new(d, "defs.json", 1, ww, &err);
	CHECK(f && wn && acc && ww);
	cnt_rejects_init(&rej, rfd, "rejects", NULL);
	for (int i = 0; i < 2; i++) {
		lseek(logs[i], 0, SEEK_SET);
		CHECK_EQ_INT(cnt_count_input(logs[i], names[i], cnt_dedup_filter_stage, f, &rej, NULL, &err), 0);
	}
	CHECK_EQ_INT(cnt_dedup_filter_finish(f, &err), 0);
	CHECK_EQ_INT(cnt_rejects_flush(&rej, &err), 0);
	lseek(mid, 0, SEEK_SET);
	CHECK_EQ_INT(cnt_count_input(mid, "deduped", cnt_window_stage, wn, &rej, NULL, &err), 0);
	CHECK_EQ_INT(cnt_window_finish(wn, &err), 0);
	lseek(win, 0, SEEK_SET);
	CHECK_EQ_INT(cnt_accum_read(acc, win, "windowed", NULL, &err), 0);
	finish(o, &table, d, acc, NULL, 0);
	o->dups = slurp(dfd, &o->nd);
	o->rejects = slurp(rfd, &o->nr);
	o->dt = *cnt_dedup_filter_totals(f);
	o->wt = *cnt_window_get_totals(wn);
	cnt_writer_free(mw);
	cnt_writer_free(dw);
	cnt_writer_free(ww);
	free(schema);
	cnt_dedup_filter_free(f);
	cnt_window_free(wn);
	cnt_accum_free(acc);
	cnt_dedup_release(&table);
	cnt_rejects_release(&rej);
	close(mid);
	close(win);
	close(dfd);
	close(rfd);
}

static void fused(const cnt_defs *d, const int *logs, int threads, size_t memory, int halves, size_t lend,
	size_t batch, outcome *o)
{
	unsigned char *loan = lend ? malloc(lend) : NULL;
	cnt_err err;
	int dfd = memfd_create("dups", MFD_CLOEXEC), rfd = memfd_create("rejects", MFD_CLOEXEC);
	cnt_writer *dw = cnt_event_writer_new(dfd, "dups", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	cnt_dedup table;
	cnt_rejects rej;
	cnt_fused fu = {.threads = threads, .batch = batch};
	static char a_name[] = "a.avro", b_name[] = "b.avro";
	char *names[2] = {a_name, b_name};

	CHECK_EQ_INT(cnt_dedup_init(&table, 0), 0);
	fu.filter = cnt_dedup_filter_new(d, "defs.json", &table, NULL, dw, &err);
	fu.win = cnt_window_new(d, "defs.json", 1, NULL, &err);
	fu.acc = cnt_accum_new(memory, "/tmp", &err);
	if (threads > 1)
		fu.acc2 = cnt_accum_new(memory, "/tmp", &err);
	fu.rejects = &rej;
	CHECK(fu.filter && fu.win && fu.acc && (threads == 1 || fu.acc2));
	cnt_rejects_init(&rej, rfd, "rejects", NULL);
	lseek(logs[0], 0, SEEK_SET);
	lseek(logs[1], 0, SEEK_SET);
	CHECK_EQ_INT(cnt_fused_run(&fu, logs, names, 2, &err), 0);
	CHECK_EQ_INT(cnt_dedup_filter_finish(fu.filter, &err), 0);
	CHECK_EQ_INT(cnt_window_finish(fu.win, &err), 0);
	CHECK_EQ_INT(cnt_rejects_flush(&rej, &err), 0);
	if (lend) {
		CHECK(loan != NULL);
		memset(loan, 0xa5, lend);
		cnt_accum_lend(fu.acc, loan, lend);
	}
	finish(o, &table, d, fu.acc, fu.acc2, halves);
	o->dups = slurp(dfd, &o->nd);
	o->rejects = slurp(rfd, &o->nr);
	o->dt = *cnt_dedup_filter_totals(fu.filter);
	o->wt = *cnt_window_get_totals(fu.win);
	cnt_writer_free(dw);
	cnt_dedup_filter_free(fu.filter);
	cnt_window_free(fu.win);
	cnt_accum_free(fu.acc);
	cnt_accum_free(fu.acc2);
	if (loan) {
		/* the day records went to the loan first: with two halves each
		 * to its own part, unless they spilled and were put together,
		 * when one roll-up takes the whole loan (4 KiB, filled past its
		 * middle before the records outgrow it) */
		CHECK(loan[0] != 0xa5);
		CHECK(!(threads > 1 && halves) || loan[lend / 2 / 64 * 64] != 0xa5);
		free(loan);
	}
	cnt_dedup_release(&table);
	cnt_rejects_release(&rej);
	close(dfd);
	close(rfd);
}

static int same_bytes(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	return a && b && na == nb && memcmp(a, b, na) == 0;
}

static void test_same_as_stages(void)
{
	cnt_err err;
	cnt_defs *d = cnt_defs_parse(defs_json, strlen(defs_json), "defs.json", &err);
	int logs[2];
	outcome ref, got;
	/* lend: bytes lent to the day records (16 MiB hold them all, 4 KiB do
	 * not); batch: events a hand-over takes at most, 1000 (the 8,251 events
	 * admitted, of 11,000 read, in 9 batches: the queue of 3 used round
	 * three times) or cnt-count's (2 batches, the second of 59 events) */
	struct { int threads; size_t memory; int halves; size_t lend, batch; } runs[] = {
		{1, (size_t)1 << 30, 0, 0, 1000}, {2, (size_t)1 << 30, 0, 0, 1000}, {2, (size_t)1 << 30, 1, 0, 1000},
		{2, (size_t)1 << 20, 1, 0, 1000}, {1, (size_t)1 << 20, 0, 0, 1000},
		{2, (size_t)1 << 30, 1, (size_t)16 << 20, 1000}, {2, (size_t)1 << 30, 1, 4096, 1000},
		{1, (size_t)1 << 30, 0, 4096, 1000}, {2, (size_t)1 << 20, 1, 4096, 1000},
		{1, (size_t)1 << 30, 0, 0, 0}, {2, (size_t)1 << 30, 1, 0, 0}};

	CHECK(d != NULL);
	if (d == NULL)
		return;
	/* two inputs that overlap by 2000 events: duplicates across them */
	logs[0] = make_log(0, N / 2 + 1000);
	logs[1] = make_log(N / 2 - 1000, N);
	memset(&ref, 0, sizeof(ref));
	reference(d, logs, &ref);
	CHECK(ref.dt.duplicates > 2000 && ref.dt.rejected > 0 && ref.wt.late > 0 && ref.nb > 0);
	/* Kolkata's day turns within the log: more day records than streams */
	CHECK(ref.day_records > 577);
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		memset(&got, 0, sizeof(got));
		fused(d, logs, runs[r].threads, runs[r].memory, runs[r].halves, runs[r].lend, runs[r].batch, &got);
		CHECK(same_bytes(ref.buckets, ref.nb, got.buckets, got.nb));
		CHECK(same_bytes(ref.dups, ref.nd, got.dups, got.nd));
		CHECK(same_bytes(ref.rejects, ref.nr, got.rejects, got.nr));
		CHECK(same_bytes(ref.state, ref.ns, got.state, got.ns));
		CHECK(memcmp(&ref.dt, &got.dt, sizeof(ref.dt)) == 0);
		CHECK(memcmp(&ref.wt, &got.wt, sizeof(ref.wt)) == 0);
		CHECK_EQ_INT(got.events, ref.events);
		CHECK_EQ_INT(got.late, ref.late);
		CHECK_EQ_INT(got.day_records, ref.day_records);
		CHECK_EQ_INT(got.groups_out, ref.groups_out);
		outcome_free(&got);
	}
	outcome_free(&ref);
	close(logs[0]);
	close(logs[1]);
	cnt_defs_free(d);
}

static void test_absorb_shared_key(void)
{
	cnt_err err;
	cnt_accum *a = cnt_accum_new((size_t)1 << 30, "/tmp", &err), *b = cnt_accum_new((size_t)1 << 30, "/tmp", &err);
	cnt_windowed w;

	memset(&w, 0, sizeof(w));
	w.ev.tenant_id = sl("t");
	w.ev.counter_id = sl("dist");
	w.ev.counter_version = 1;
	w.ev.member_ref = sl("m");
	w.ev.event_id = sl("e");
	w.ev.delta = 1;
	w.ev.event_time = T0;
	w.bucket_start = T0;
	w.bucket_end = T0 + 3600000;
	w.exact = 1;
	w.sample = -1;
	w.hll_precision = 14;
	CHECK(a && b);
	CHECK_EQ_INT(cnt_accum_add_event(a, &w, &err), 0);
	CHECK_EQ_INT(cnt_accum_add_event(b, &w, &err), 0);
	CHECK_EQ_INT(cnt_accum_absorb(a, b, &err), -1);
	CHECK(strstr(err.msg, "internal") != NULL);
	cnt_accum_free(a);
	cnt_accum_free(b);
}

int main(void)
{
	RUN(test_same_as_stages);
	RUN(test_absorb_shared_key);
	return unit_report("test_fused");
}
