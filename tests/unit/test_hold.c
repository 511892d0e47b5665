/*
 * test_hold.c - the hold signals (lib/ingest/hold.h) and the hold file
 * (lib/model/held.h).
 *
 * The signals are checked against their definitions computed the slow
 * way (every event against every other) over many random runs, in input
 * order and shuffled: the verdicts must agree, and must not depend on the
 * order.  The hold file: what cnt_hold_finish writes reads back with
 * cnt_held_in, event and hold fields alike; the log gets the rest in
 * input order; definitions with hold signals are parsed and checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/hold.h"
#include "model/held.h"
#include "unit.h"

static const char defs_json[] =
	"{\"format\": \"cnt-definitions/1\","
	" \"tenants\": [{\"tenant_id\": \"utc\", \"timezone\": \"UTC\"}],"
	" \"counters\": ["
	"  {\"tenant_id\": \"utc\", \"counter_id\": \"pts\", \"holds\": ["
	"     {\"signal\": \"rate\", \"window_s\": 40, \"ceiling\": 9},"
	"     {\"signal\": \"lockstep\", \"span_s\": 20, \"members\": 3},"
	"     {\"signal\": \"device\", \"attr\": \"ip\", \"span_s\": 15, \"max_events\": 3}],"
	"   \"versions\": [{\"version\": 1, \"type\": \"exact\"}]},"
	"  {\"tenant_id\": \"utc\", \"counter_id\": \"free\", \"versions\": [{\"version\": 1, \"type\": \"exact\"}]}]}";

#define N 60

typedef struct ev {
	char id[16], member[8], ip[8];
	int counter;          /* 0 pts, 1 free */
	int64_t t, delta;
	int has_ip;
} ev;

static cnt_event to_event(const ev *x, cnt_slice *k, cnt_slice *v)
{
	cnt_event e;

	memset(&e, 0, sizeof(e));
	e.event_id = (cnt_slice){x->id, strlen(x->id)};
	e.idempotency_key = e.event_id;
	e.tenant_id = (cnt_slice){"utc", 3};
	e.counter_id = x->counter ? (cnt_slice){"free", 4} : (cnt_slice){"pts", 3};
	e.counter_version = 1;
	e.member_ref = (cnt_slice){x->member, strlen(x->member)};
	e.delta = x->delta;
	e.event_time = x->t;
	e.ingest_time = 5000000;
	if (x->has_ip) {
		*k = (cnt_slice){"ip", 2};
		*v = (cnt_slice){x->ip, strlen(x->ip)};
		e.nattrs = 1;
		e.attr_keys = k;
		e.attr_vals = v;
	}
	return e;
}

/* The verdicts the slow way: -1, or the first signal matched. */
static int slow(const ev *v, size_t n, size_t i)
{
	const ev *e = &v[i];
	long long sum = 0;

	if (e->counter)
		return -1;
	for (size_t j = 0; j < n; j++)
		if (!v[j].counter && strcmp(v[j].member, e->member) == 0 && v[j].t <= e->t && v[j].t > e->t - 40000)
			sum += v[j].delta;
	if (sum > 9)
		return 0;
	for (int sig = 1; sig <= 2; sig++)
		for (size_t s = 0; s < n; s++) {
			char seen[N][8];
			int members = 0, events = 0;
			int64_t span = sig == 1 ? 20000 : 15000;

			if (v[s].counter || v[s].t > e->t || e->t > v[s].t + span)
				continue;
			for (size_t j = 0; j < n; j++) {
				int dup = 0;

				if (v[j].counter || v[j].t < v[s].t || v[j].t > v[s].t + span)
					continue;
				if (sig == 1 && v[j].delta == e->delta) {
					for (int m = 0; m < members; m++)
						dup |= strcmp(seen[m], v[j].member) == 0;
					if (!dup)
						strcpy(seen[members++], v[j].member);
				}
				if (sig == 2 && e->has_ip && v[j].has_ip && strcmp(v[j].ip, e->ip) == 0)
					events++;
			}
			if (sig == 1 && members >= 3 && v[s].delta == e->delta)
				return 1;
			if (sig == 2 && events > 3 && e->has_ip && v[s].has_ip && strcmp(v[s].ip, e->ip) == 0)
				return 2;
		}
	return -1;
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The verdicts of a cnt_hold fed v in order perm. */
static void fast(const cnt_defs *d, const ev *v, const size_t *perm, size_t n, int *out)
{
	cnt_err err;
	cnt_hold *h = cnt_hold_new(d, &err);

	CHECK(h != NULL);
	for (size_t i = 0; i < n; i++) {
		cnt_slice k, val;
		cnt_event e = to_event(&v[perm[i]], &k, &val);

		CHECK(cnt_hold_add(h, &e, &err) == 0);
	}
	CHECK(cnt_hold_decide(h, &err) == 0);
	for (size_t i = 0; i < n; i++)
		out[perm[i]] = cnt_hold_verdict(h, i);
	cnt_hold_free(h);
}

static void test_random_against_definitions(void)
{
	cnt_err err;
	cnt_defs *d = cnt_defs_parse(defs_json, sizeof(defs_json) - 1, "t", &err);
	uint64_t seed = 0x9e3779b97f4a7c15u;
	int mismatches = 0, held = 0, by[3] = {0, 0, 0};

	CHECK(d != NULL);
	for (int run = 0; run < 400 && d; run++) {
		ev v[N];
		size_t perm[N], n = 10 + rng(&seed) % (N - 10);
		int a[N], b[N];

		for (size_t i = 0; i < n; i++) {
			ev *x = &v[i];

			snprintf(x->id, sizeof(x->id), "e%zu", i);
			snprintf(x->member, sizeof(x->member), "m%d", (int)(rng(&seed) % 6));
			snprintf(x->ip, sizeof(x->ip), "ip%d", (int)(rng(&seed) % 3));
			x->has_ip = rng(&seed) % 4 != 0;
			x->counter = rng(&seed) % 8 == 0;
			x->t = (int64_t)(rng(&seed) % 60) * 5000 + (rng(&seed) % 3 == 0 ? 1 : 0);
			x->delta = (int64_t)(rng(&seed) % 5) * 2 - 1;
			perm[i] = i;
		}
		fast(d, v, perm, n, a);
		for (size_t i = n - 1; i > 0; i--) {
			size_t j = rng(&seed) % (i + 1), t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
		fast(d, v, perm, n, b);
		for (size_t i = 0; i < n; i++) {
			int want = slow(v, n, i);

			if (a[i] != want || b[i] != want) {
				if (mismatches++ < 5)
					fprintf(stderr, "run %d event %zu: got %d / %d (shuffled), want %d\n", run, i, a[i],
						b[i], want);
			}
			if (want >= 0) {
				held++;
				by[want]++;
			}
		}
	}
	CHECK_EQ_INT(mismatches, 0);
	/* the runs exercise every signal, and admit most events */
	if (!(by[0] > 50 && by[1] > 50 && by[2] > 50 && held < 400 * N / 2))
		fprintf(stderr, "held %d: rate %d, lockstep %d, device %d\n", held, by[0], by[1], by[2]);
	CHECK(by[0] > 50 && by[1] > 50 && by[2] > 50 && held < 400 * N / 2);
	cnt_defs_free(d);
}

static void test_finish_writes_log_and_hold_file(void)
{
	cnt_err err;
	cnt_defs *d = cnt_defs_parse(defs_json, sizeof(defs_json) - 1, "t", &err);
	FILE *lf = tmpfile(), *hf = tmpfile();
	cnt_writer *lw = cnt_event_writer_new(fileno(lf), "log", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	cnt_writer *hw = cnt_held_writer_new(fileno(hf), "holds", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	cnt_hold *h = cnt_hold_new(d, &err);
	ev v[5] = {
		{"a", "m1", "", 0, 1000, 5, 0}, {"b", "m1", "", 0, 2000, 5, 0}, {"c", "m2", "", 1, 2500, 50, 0},
		{"d", "m1", "", 0, 3000, 1, 0}, {"e", "m3", "", 0, 900000, 2, 0},
	};
	cnt_held_in *in;
	cnt_event_in *ein;
	cnt_held hd;
	cnt_event e;
	cnt_limits lim = cnt_limits_default();
	char want[35];
	const char *logged[4] = {"a", "c", "e", NULL};
	int k = 0;

	CHECK(d && lw && hw && h);
	CHECK(cnt_hold_first_counter(d) == cnt_defs_counter_at(d, 0));
	for (int i = 0; i < 5; i++) {
		cnt_slice ks, vs;
		cnt_event x = to_event(&v[i], &ks, &vs);

		CHECK(cnt_hold_add(h, &x, &err) == 0);
	}
	CHECK(cnt_hold_finish(h, lw, hw, NULL, &err) == 0);
	CHECK(cnt_writer_finish(lw, &err) == 0 && cnt_writer_finish(hw, &err) == 0);
	CHECK_EQ_INT(cnt_hold_get_stats(h)->held, 2);
	CHECK_EQ_INT(cnt_hold_get_stats(h)->admitted, 3);
	CHECK_EQ_INT(cnt_hold_get_stats(h)->by_signal[CNT_HOLD_RATE], 2);
	CHECK_EQ_INT(cnt_hold_counter_held(h, cnt_defs_counter_at(d, 0)), 2);
	CHECK_EQ_INT(cnt_hold_counter_held(h, cnt_defs_counter_at(d, 1)), 0);
	/* the log: the admitted, in the order added */
	lseek(fileno(lf), 0, SEEK_SET);
	ein = cnt_event_in_open(fileno(lf), "log", &lim, &err);
	CHECK(ein != NULL);
	while (ein && cnt_event_in_next(ein, &e, &err) > 0) {
		CHECK(logged[k] && e.event_id.n == 1 && e.event_id.p[0] == logged[k][0]);
		k++;
	}
	CHECK_EQ_INT(k, 3);
	cnt_event_in_free(ein);
	/* the hold file: b (10 in 40 s) and d (11) */
	lseek(fileno(hf), 0, SEEK_SET);
	in = cnt_held_in_open(fileno(hf), "holds", &err);
	CHECK(in != NULL);
	CHECK_EQ_INT(cnt_held_in_next(in, &hd, &err), 1);
	CHECK(hd.e.event_id.n == 1 && hd.e.event_id.p[0] == 'b' && hd.e.delta == 5 && hd.e.event_time == 2000);
	CHECK(hd.signal == CNT_HOLD_RATE && hd.held_at == 5000000);
	cnt_held_id(hd.e.event_id, want);
	CHECK(hd.hold_id.n == 34 && memcmp(hd.hold_id.p, want, 34) == 0);
	CHECK(hd.detail.n > 0 && strstr(hd.detail.p, "sum to 10, above the ceiling 9") != NULL);
	CHECK_EQ_INT(cnt_held_in_next(in, &hd, &err), 1);
	CHECK(hd.e.event_id.p[0] == 'd');
	CHECK_EQ_INT(cnt_held_in_next(in, &hd, &err), 0);
	cnt_held_in_free(in);
	/* a log is not a hold file */
	lseek(fileno(lf), 0, SEEK_SET);
	CHECK(cnt_held_in_open(fileno(lf), "log", &err) == NULL);
	cnt_hold_free(h);
	cnt_writer_free(lw);
	cnt_writer_free(hw);
	fclose(lf);
	fclose(hf);
	cnt_defs_free(d);
}

static void test_ids_and_names(void)
{
	char id[35];
	cnt_hold_kind k;

	cnt_held_id((cnt_slice){"abc", 3}, id);
	CHECK(strlen(id) == 34 && id[0] == 'h' && id[1] == '-');
	for (int i = 2; i < 34; i++)
		CHECK((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f'));
	CHECK(cnt_defs_hold_parse("lockstep", &k) == 0 && k == CNT_HOLD_LOCKSTEP);
	CHECK(cnt_defs_hold_parse("speed", &k) != 0);
	CHECK_EQ_STR(cnt_defs_hold_name(CNT_HOLD_DEVICE), "device");
	CHECK_EQ_STR(cnt_defs_hold_name((cnt_hold_kind)9), "?");
}

static void test_defs_errors(void)
{
	static const char *const bad[][2] = {
		{"{\"signal\": \"rate\", \"window_s\": 0, \"ceiling\": 1}", "window_s: 0 is out of range"},
		{"{\"signal\": \"device\", \"span_s\": 1, \"max_events\": 0, \"attr\": \"ip\"}", "max_events: 0 is out of range"},
		{"{\"signal\": \"device\", \"span_s\": 1, \"max_events\": 2}", "attr: required key is missing"},
		{"{\"signal\": \"rate\", \"window_s\": 5, \"ceiling\": 1, \"members\": 2}", "members: unknown key"},
		{"[]", "holds[0]: expected an object"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[1024];
		cnt_err err;
		cnt_defs *d;

		snprintf(text, sizeof(text), "{\"format\": \"cnt-definitions/1\", \"tenants\": [{\"tenant_id\": \"u\", "
			"\"timezone\": \"UTC\"}], \"counters\": [{\"tenant_id\": \"u\", \"counter_id\": \"c\", \"holds\": [%s], "
			"\"versions\": [{\"version\": 1, \"type\": \"exact\"}]}]}", bad[i][0]);
		d = cnt_defs_parse(text, strlen(text), "t", &err);
		CHECK(d == NULL);
		if (d == NULL && strstr(err.msg, bad[i][1]) == NULL)
			fprintf(stderr, "case %zu: %s\n", i, err.msg);
		CHECK(d == NULL && strstr(err.msg, bad[i][1]) != NULL);
		cnt_defs_free(d);
	}
}

int main(void)
{
	RUN(test_random_against_definitions);
	RUN(test_finish_writes_log_and_hold_file);
	RUN(test_ids_and_names);
	RUN(test_defs_errors);
	return unit_report("test_hold");
}
