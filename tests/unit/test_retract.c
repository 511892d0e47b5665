/*
 * test_retract.c - retraction (lib/correct/retract.h) and what the count
 * stage does with compensations (lib/count/accum.h, window.h).
 *
 * Compensations: one per selected event, naming it, negating its delta,
 * keeping its times; selection by key (event id or idempotency key), by
 * member, by time range and attributes; keys not in the log reported; a
 * delta of -2^63 refused.  The ledger: one JSON line per run that
 * retracts something, chained by "prev"; rerunning retracts nothing; a
 * broken chain and a torn last line are refused.  Accumulation: a
 * compensation subtracts one event and its delta, and a key left with no
 * event is not written, spilled or not.  Rebuild: the touched buckets
 * come out as a full build without the retracted events, byte for byte.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "correct/retract.h"
#include "count/accum.h"
#include "count/window.h"
#include "model/bucket.h"
#include "model/event.h"
#include "unit.h"

#define S(z) ((cnt_slice){(z), sizeof(z) - 1})
#define T0 INT64_C(1772359200000)   /* 2026-03-01T10:00:00Z */

static const char defs_json[] =
	"{\"format\": \"cnt-definitions/1\","
	" \"tenants\": [{\"tenant_id\": \"utc\", \"timezone\": \"UTC\"}],"
	" \"counters\": ["
	"  {\"tenant_id\": \"utc\", \"counter_id\": \"dist\", \"versions\": [{\"version\": 1, \"type\": \"max\", \"lateness_horizon_s\": 600}]}]}";

static cnt_event mk(const char *id, const char *key, const char *member, int64_t delta, int64_t et)
{
	cnt_event e;

	memset(&e, 0, sizeof(e));
	e.event_id.p = id;
	e.event_id.n = strlen(id);
	e.idempotency_key.p = key;
	e.idempotency_key.n = strlen(key);
	e.tenant_id = S("utc");
	e.counter_id = S("dist");
	e.counter_version = 1;
	e.member_ref.p = member;
	e.member_ref.n = strlen(member);
	e.delta = delta;
	e.event_time = et;
	e.ingest_time = T0 + 1800000;
	return e;
}

/* An event file (tmpfile, rewound) of v[0..n). */
static int events_file(const cnt_event *v, size_t n)
{
	FILE *f = tmpfile();
	cnt_err err;
	cnt_writer *w;
	int fd;

	CHECK(f != NULL);
	fd = dup(fileno(f));
	fclose(f);
	w = cnt_event_writer_new(fd, "test", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	CHECK(w != NULL);
	for (size_t i = 0; w && i < n; i++) {
		CHECK_EQ_INT(cnt_event_encode(&v[i], cnt_writer_buf(w)), 0);
		CHECK_EQ_INT(cnt_writer_commit(w, &err), 0);
	}
	CHECK(w && cnt_writer_finish(w, &err) == 0);
	cnt_writer_free(w);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static int tmp_fd(void)
{
	FILE *f = tmpfile();
	int fd = dup(fileno(f));

	fclose(f);
	return fd;
}

/* Reads every event of fd into out (event_id, retracts, delta as text). */
static void read_back(int fd, char *out, size_t cap)
{
	cnt_err err;
	cnt_event_in *in;
	cnt_event e;
	size_t len = 0;

	out[0] = 0;
	lseek(fd, 0, SEEK_SET);
	in = cnt_event_in_open(fd, "back", NULL, &err);
	CHECK(in != NULL);
	while (in && cnt_event_in_next(in, &e, &err) > 0)
		len += (size_t)snprintf(out + len, cap - len, "%.*s<%.*s:%lld;", (int)e.idempotency_key.n,
			e.idempotency_key.p, (int)e.retracts.n, e.retracts.p, (long long)e.delta);
	cnt_event_in_free(in);
}

static char *noted[8];
static size_t nnoted;

static void note(void *ctx, cnt_slice key, const char *why)
{
	(void)ctx;
	(void)why;
	if (nnoted < 8)
		noted[nnoted++] = strndup(key.p, key.n);
}

static int run(int log, const cnt_retract_sel *sel, int ledger, int outfd, cnt_retract_result *r)
{
	cnt_retract_req req = {NULL, "fraud", "ts", "case-1", T0};
	const char *name = "log";
	cnt_err err;
	cnt_writer *w = cnt_event_writer_new(outfd, "out", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	int rc;

	lseek(log, 0, SEEK_SET);
	lseek(ledger, 0, SEEK_SET);
	rc = cnt_retract_run(&log, &name, 1, sel, &req, ledger, "ledger", w, note, NULL, r, &err);
	if (rc == 0 && r->ledger_line)
		rc = cnt_retract_ledger_append(ledger, "ledger", r->ledger_line, &err);
	if (rc != 0)
		fprintf(stderr, "run: %s\n", err.msg);
	free(r->ledger_line);
	r->ledger_line = NULL;
	cnt_writer_free(w);
	return rc;
}

static void test_causes(void)
{
	CHECK(cnt_retract_cause_ok("deleted") && cnt_retract_cause_ok("banned"));
	CHECK(cnt_retract_cause_ok("dq") && cnt_retract_cause_ok("fraud"));
	CHECK(!cnt_retract_cause_ok("Fraud") && !cnt_retract_cause_ok(""));
	CHECK_EQ_STR(cnt_retract_scope_name(CNT_SCOPE_MEMBER), "member");
}

static void test_by_key_and_ledger(void)
{
	cnt_event v[3] = {mk("00000000000000000000000000000001", "k1", "m1", 10, T0),
		mk("00000000000000000000000000000002", "k2", "m1", -3, T0 + 1),
		mk("00000000000000000000000000000003", "k3", "m2", 7, T0 + 2)};
	int log = events_file(v, 3), ledger = tmp_fd(), o1 = tmp_fd(), o2 = tmp_fd();
	const char *keys[] = {"k2", "00000000000000000000000000000003", "nope"};
	cnt_retract_sel sel = {0};
	cnt_retract_result r;
	cnt_fpset done;
	cnt_fp last;
	cnt_err err;
	char got[1024], line[2048];
	ssize_t n;

	sel.keys = keys;
	sel.nkeys = 3;
	nnoted = 0;
	CHECK_EQ_INT(run(log, &sel, ledger, o1, &r), 0);
	CHECK_EQ_INT(r.in, 3);
	CHECK_EQ_INT(r.retracted, 2);
	CHECK_EQ_INT(r.not_found, 1);
	CHECK_EQ_INT(r.ledger_records, 1);
	CHECK_EQ_INT(nnoted, 1);
	CHECK(nnoted == 1 && strcmp(noted[0], "nope") == 0);
	read_back(o1, got, sizeof(got));
	CHECK_EQ_STR(got, "retract:00000000000000000000000000000002<00000000000000000000000000000002:3;"
		"retract:00000000000000000000000000000003<00000000000000000000000000000003:-7;");
	lseek(ledger, 0, SEEK_SET);
	n = read(ledger, line, sizeof(line) - 1);
	CHECK(n > 0);
	line[n > 0 ? n : 0] = 0;
	CHECK(strstr(line, "\"event_ids\":[\"00000000000000000000000000000002\",\"00000000000000000000000000000003\"]") != NULL);
	CHECK(strstr(line, "\"prev\":\"00000000000000000000000000000000\"}\n") != NULL);
	CHECK(strstr(line, "\"created_at\":\"2026-03-01T10:00:00.000Z\"") != NULL);
	CHECK(strchr(line, '\n') == line + n - 1);
	/* the ledger lists them: a rerun retracts nothing, appends nothing */
	CHECK_EQ_INT(run(log, &sel, ledger, o2, &r), 0);
	CHECK_EQ_INT(r.retracted, 0);
	CHECK_EQ_INT(r.already, 2);
	CHECK_EQ_INT(r.ledger_records, 0);
	CHECK_EQ_INT(lseek(ledger, 0, SEEK_END), n);
	/* the loaded set and the chain's end */
	CHECK_EQ_INT(cnt_fpset_init(&done, 16), 0);
	lseek(ledger, 0, SEEK_SET);
	CHECK_EQ_INT(cnt_retract_ledger_load(ledger, "ledger", &done, &last, &err), 0);
	CHECK_EQ_INT(done.count, 2);
	CHECK(last.hi != 0 || last.lo != 0);
	cnt_fpset_release(&done);
	for (size_t i = 0; i < nnoted; i++)
		free(noted[i]);
	close(log);
	close(ledger);
	close(o1);
	close(o2);
}

/* The record lists the counters of the events it retracts, each once, in
 * byte order of (tenant, counter), whatever the selector names. */
static void test_counters_listed(void)
{
	cnt_event v[4] = {mk("00000000000000000000000000000001", "k1", "m1", 1, T0),
		mk("00000000000000000000000000000002", "k2", "m1", 2, T0 + 1),
		mk("00000000000000000000000000000003", "k3", "m2", 3, T0 + 2),
		mk("00000000000000000000000000000004", "k4", "m2", 4, T0 + 3)};
	int log, ledger = tmp_fd(), o1 = tmp_fd();
	const char *keys[] = {"00000000000000000000000000000001", "00000000000000000000000000000002",
		"00000000000000000000000000000003", "00000000000000000000000000000004"};
	cnt_retract_sel sel = {0};
	cnt_retract_result r;
	char line[2048];
	ssize_t n;

	v[1].tenant_id = S("alpha");
	v[1].counter_id = S("zz");
	v[3].tenant_id = S("alpha");
	v[3].counter_id = S("a");
	log = events_file(v, 4);
	sel.keys = keys;
	sel.nkeys = 4;
	nnoted = 0;
	CHECK_EQ_INT(run(log, &sel, ledger, o1, &r), 0);
	CHECK_EQ_INT(r.retracted, 4);
	lseek(ledger, 0, SEEK_SET);
	n = read(ledger, line, sizeof(line) - 1);
	CHECK(n > 0);
	line[n > 0 ? n : 0] = 0;
	CHECK(strstr(line, "\"selector\":{},") != NULL);
	CHECK(strstr(line, "\"00000000000000000000000000000004\"],\"counters\":[{\"tenant_id\":\"alpha\","
		"\"counter_id\":\"a\"},{\"tenant_id\":\"alpha\",\"counter_id\":\"zz\"},"
		"{\"tenant_id\":\"utc\",\"counter_id\":\"dist\"}],\"created_at\":") != NULL);
	close(log);
	close(ledger);
	close(o1);
}

static void test_filters_and_refusal(void)
{
	static const cnt_slice ak[1] = {{"source", 6}}, avb[1] = {{"bot", 3}}, ava[1] = {{"app", 3}};
	cnt_event v[4] = {mk("00000000000000000000000000000011", "a", "m1", 1, T0),
		mk("00000000000000000000000000000012", "b", "m1", 2, T0 + 3600000),
		mk("00000000000000000000000000000013", "c", "m2", 3, T0),
		mk("00000000000000000000000000000014", "d", "m1", INT64_MIN, T0)};
	const char *fk[] = {"source"}, *fv[] = {"bot"};
	int log, ledger = tmp_fd(), o = tmp_fd();
	cnt_retract_sel sel = {0};
	cnt_retract_result r;
	char got[1024];

	v[0].nattrs = v[1].nattrs = v[3].nattrs = 1;
	v[0].attr_keys = v[1].attr_keys = v[3].attr_keys = v[2].attr_keys = ak;
	v[0].attr_vals = v[1].attr_vals = v[3].attr_vals = avb;
	v[2].nattrs = 1;
	v[2].attr_vals = ava;
	log = events_file(v, 4);
	sel.scope = CNT_SCOPE_CAMPAIGN;
	sel.tenant = "utc";
	sel.counter = "dist";
	sel.has_from = sel.has_to = 1;
	sel.from = T0;
	sel.to = T0 + 3600000;     /* excludes b */
	sel.attr_k = fk;
	sel.attr_v = fv;           /* excludes c */
	sel.nattrs = 1;
	nnoted = 0;
	CHECK_EQ_INT(run(log, &sel, ledger, o, &r), 0);
	CHECK_EQ_INT(r.matched, 2);
	CHECK_EQ_INT(r.retracted, 1);
	CHECK_EQ_INT(r.refused, 1);    /* d: -2^63 */
	CHECK(nnoted == 1 && strcmp(noted[0], "00000000000000000000000000000014") == 0);
	read_back(o, got, sizeof(got));
	CHECK_EQ_STR(got, "retract:00000000000000000000000000000011<00000000000000000000000000000011:-1;");
	for (size_t i = 0; i < nnoted; i++)
		free(noted[i]);
	close(log);
	close(ledger);
	close(o);
}

/* The ledger is read by the walk every hash-chained ledger shares
 * (correct/ledger.h), so its refusals say what the others say: a first
 * line's "prev" that is not zeros is named as such, not as "the hash of
 * line 0". */
static void test_ledger_refusals(void)
{
	static const char good[] = "{\"event_ids\":[\"x\"],\"prev\":\"00000000000000000000000000000000\"}\n";
	static const char badprev[] = "{\"event_ids\":[\"x\"],\"prev\":\"00000000000000000000000000000001\"}\n";
	static const char torn[] = "{\"event_ids\":[\"x\"],\"prev\":\"00000000000000000000000000000000\"}";
	static const char second[] = "{\"event_ids\":[\"x\"],\"prev\":\"00000000000000000000000000000000\"}\n"
		"{\"event_ids\":[\"y\"],\"prev\":\"00000000000000000000000000000000\"}\n";
	static const struct {
		const char *ledger, *says; /* says: the whole message; NULL: loads */
	} cases[] = {
		{good, NULL},
		{badprev, "ledger 'l' line 1: \"prev\" is not 32 zeros (not the first line?)"},
		{torn, "ledger 'l' line 1: no newline at the end (an interrupted append?)"},
		{"not json\n", "ledger 'l' line 1: not a JSON object"},
		{"{\"prev\":\"00000000000000000000000000000000\"}\n", "ledger 'l' line 1: no event_ids"},
		{second, "ledger 'l' line 2: the hash chain is broken (\"prev\" is not the hash of line 1)"},
		{"{\"kind\":\"other\",\"event_ids\":[\"x\"],\"prev\":\"00000000000000000000000000000000\"}\n",
			"ledger 'l' line 1: a record of an unknown kind"},
		{"{\"kind\":\"erasure\",\"prev\":\"00000000000000000000000000000000\"}\n",
			"ledger 'l' line 1: an erasure without segments"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *says = cases[i].says;
		size_t n = strlen(cases[i].ledger);
		int fd = tmp_fd();
		cnt_fpset done;
		cnt_fp last;
		cnt_err err;

		err.msg[0] = 0;
		CHECK(write(fd, cases[i].ledger, n) == (ssize_t)n);
		lseek(fd, 0, SEEK_SET);
		CHECK_EQ_INT(cnt_fpset_init(&done, 16), 0);
		CHECK_EQ_INT(cnt_retract_ledger_load(fd, "l", &done, &last, &err), says ? -1 : 0);
		if (says)
			CHECK_EQ_STR(err.msg, says);
		else
			CHECK_EQ_INT(done.count, 1);
		cnt_fpset_release(&done);
		close(fd);
	}
}

/* Windows and accumulates events into a bucket fd. */
static int accumulate(const cnt_event *v, size_t n, size_t limit)
{
	cnt_err err;
	cnt_defs *defs = cnt_defs_parse(defs_json, sizeof(defs_json) - 1, "defs", &err);
	cnt_window *win = cnt_window_new(defs, "defs", 1, NULL, &err);
	cnt_accum *a = cnt_accum_new(limit, "/tmp", &err);
	int fd = tmp_fd();
	cnt_writer *w = cnt_bucket_writer_new(fd, "b", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);

	CHECK(defs && win && a && w);
	for (size_t i = 0; i < n; i++) {
		cnt_windowed x;
		cnt_count_reject rej;

		CHECK_EQ_INT(cnt_window_attribute(win, &v[i], &x, &rej, &err), 0);
		CHECK_EQ_INT(cnt_accum_add_event(a, &x, &err), 0);
	}
	CHECK_EQ_INT(cnt_accum_finish(a, w, &err), 0);
	CHECK_EQ_INT(cnt_writer_finish(w, &err), 0);
	CHECK_EQ_INT(cnt_accum_check_balance(a, &err), 0);
	cnt_writer_free(w);
	cnt_accum_free(a);
	cnt_window_free(win);
	cnt_defs_free(defs);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static size_t slurp(int fd, char *buf, size_t cap)
{
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, cap);
	return n > 0 ? (size_t)n : 0;
}

static void test_accum_compensation(void)
{
	cnt_event v[3] = {mk("00000000000000000000000000000021", "a", "m1", 10, T0),
		mk("00000000000000000000000000000022", "b", "m2", 4, T0),
		mk("000000000000000000000000000000c1", "retract:a", "m1", -10, T0)};
	static char x[65536], y[65536];
	int fd, ref;
	cnt_bucket_in in;
	cnt_bucket b;
	cnt_err err;

	v[2].retracts = v[0].event_id;
	/* a and its compensation: only m2's record is left, as without a */
	for (size_t limit = 0; limit < 2; limit++) {
		fd = accumulate(v, 3, limit);   /* limit 1: a spill after every event */
		ref = accumulate(&v[1], 1, 0);
		CHECK(slurp(fd, x, sizeof(x)) == slurp(ref, y, sizeof(y)) && memcmp(x, y, slurp(fd, x, sizeof(x))) == 0);
		close(fd);
		close(ref);
	}
	/* the compensation alone: count -1, sum -10, its times at
	 * multiplicity -1, nothing else */
	fd = accumulate(&v[2], 1, 0);
	CHECK_EQ_INT(cnt_bucket_in_open(&in, fd, "b", NULL, &err), 0);
	CHECK_EQ_INT(cnt_bucket_in_next(&in, &b, &err), 1);
	CHECK_EQ_INT(b.count, -1);
	CHECK(b.sum == -10);
	CHECK(!b.has_min && !b.has_max && b.sketch.p == NULL);
	CHECK(b.has_last && b.last_event_time == T0 && b.last_count == -1 && b.ingest_count == -1);
	cnt_bucket_in_release(&in);
	close(fd);
}

static void test_rebuild(void)
{
	cnt_event v[3] = {mk("00000000000000000000000000000031", "a", "m1", 10, T0),
		mk("00000000000000000000000000000032", "b", "m1", 4, T0 + 60000),
		mk("00000000000000000000000000000033", "c", "m2", 6, T0)};
	cnt_event comp = mk("000000000000000000000000000000c3", "retract:a", "m1", -10, T0);
	cnt_event all[4];
	static char x[65536], y[65536];
	int fds[2], old, out = tmp_fd(), ref;
	const char *names[2] = {"log", "comp"};
	cnt_err err;
	cnt_defs *defs = cnt_defs_parse(defs_json, sizeof(defs_json) - 1, "defs", &err);
	cnt_writer *w = cnt_bucket_writer_new(out, "out", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	cnt_rebuild_result r;
	size_t nx, ny;

	comp.retracts = v[0].event_id;
	memcpy(all, v, sizeof(v));
	all[3] = comp;
	fds[0] = events_file(v, 3);
	fds[1] = events_file(&comp, 1);
	old = accumulate(all, 4, 0);    /* merged: sum right, max still 10 */
	ref = accumulate(&v[1], 2, 0);  /* without a */
	CHECK_EQ_INT(cnt_retract_rebuild(fds, names, 2, defs, "defs", 1, old, "old", w, &r, &err), 0);
	CHECK_EQ_INT(r.retracted, 1);
	CHECK_EQ_INT(r.touched, 1);
	CHECK_EQ_INT(r.rebuilt_events, 1);
	CHECK_EQ_INT(r.kept, 1);
	CHECK_EQ_INT(r.dropped, 1);
	nx = slurp(out, x, sizeof(x));
	ny = slurp(ref, y, sizeof(y));
	CHECK(nx == ny && memcmp(x, y, nx) == 0);
	nx = slurp(old, x, sizeof(x));
	CHECK(nx != ny || memcmp(x, y, nx) != 0);   /* the merge alone is not it */
	cnt_writer_free(w);
	cnt_defs_free(defs);
	close(fds[0]);
	close(fds[1]);
	close(old);
	close(out);
	close(ref);
}

int main(void)
{
	RUN(test_causes);
	RUN(test_by_key_and_ledger);
	RUN(test_counters_listed);
	RUN(test_filters_and_refusal);
	RUN(test_ledger_refusals);
	RUN(test_accum_compensation);
	RUN(test_rebuild);
	return unit_report("test_retract");
}
