/*
 * test_project.c - window composition, ranking, ties, numbering and the
 * histogram (lib/view/project.h), on small synthetic bucket records.  The
 * view index and directory are tests/unit/test_view.c.
 *
 * Expectations are worked out by hand for the small cases, and for the
 * larger ones come from a plain reference written here (qsort with the
 * rule spelt out, numbering by its definition), which shares no code with
 * the radix sort and run handling of lib/view/project.c.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "view/project.h"
#include "time/tz.h"
#include "unit.h"
#include "view/view.h"

static const char defs_json[] =
	"{\"format\": \"cnt-definitions/1\","
	" \"tenants\": [{\"tenant_id\": \"t\", \"timezone\": \"UTC\"}],"
	" \"counters\": ["
	"  {\"tenant_id\": \"t\", \"counter_id\": \"pts\", \"versions\": [{\"version\": 1, \"type\": \"exact\"}]},"
	"  {\"tenant_id\": \"t\", \"counter_id\": \"other\", \"versions\": [{\"version\": 1, \"type\": \"exact\"}]},"
	"  {\"tenant_id\": \"t\", \"counter_id\": \"fast\", \"versions\": [{\"version\": 1, \"type\": \"min\"}]},"
	"  {\"tenant_id\": \"t\", \"counter_id\": \"best\", \"versions\": [{\"version\": 1, \"type\": \"max\"}]}],"
	" \"leaderboards\": ["
	"  {\"board_id\": \"comp\", \"tenant_id\": \"t\", \"counter_id\": \"pts\", \"window\": \"all_time\"},"
	"  {\"board_id\": \"dense\", \"tenant_id\": \"t\", \"counter_id\": \"pts\", \"window\": \"all_time\", \"rank_numbering\": \"dense\"},"
	"  {\"board_id\": \"ord\", \"tenant_id\": \"t\", \"counter_id\": \"pts\", \"window\": \"all_time\", \"rank_numbering\": \"ordinal\"},"
	"  {\"board_id\": \"latest\", \"tenant_id\": \"t\", \"counter_id\": \"pts\", \"window\": \"all_time\", \"tie_break\": [\"latest_achiever\"]},"
	"  {\"board_id\": \"ref\", \"tenant_id\": \"t\", \"counter_id\": \"pts\", \"window\": \"all_time\", \"tie_break\": [\"member_ref_asc\"]},"
	"  {\"board_id\": \"asc\", \"tenant_id\": \"t\", \"counter_id\": \"pts\", \"window\": \"all_time\", \"order\": \"asc\"},"
	"  {\"board_id\": \"fast\", \"tenant_id\": \"t\", \"counter_id\": \"fast\", \"window\": \"all_time\"},"
	"  {\"board_id\": \"best\", \"tenant_id\": \"t\", \"counter_id\": \"best\", \"window\": \"all_time\"},"
	"  {\"board_id\": \"lin\", \"tenant_id\": \"t\", \"counter_id\": \"pts\", \"window\": \"all_time\", \"materialised_cap\": 2,"
	"   \"histogram\": {\"scale\": \"linear\", \"width\": 10}},"
	"  {\"board_id\": \"log\", \"tenant_id\": \"t\", \"counter_id\": \"pts\", \"window\": \"all_time\","
	"   \"histogram\": {\"scale\": \"log\", \"buckets\": 16}},"
	"  {\"board_id\": \"coh\", \"tenant_id\": \"t\", \"counter_id\": \"pts\", \"window\": \"all_time\","
	"   \"scope_kind\": \"cohort\", \"scope_attr\": \"div\"},"
	"  {\"board_id\": \"reg\", \"tenant_id\": \"t\", \"counter_id\": \"pts\", \"window\": \"all_time\","
	"   \"scope_kind\": \"region\"}]}";

#define H INT64_C(3600000)
#define T0 INT64_C(1772359200000) /* 2026-03-01T10:00:00Z */

static cnt_defs *defs;
static char tmpdir[] = "/tmp/test_project.XXXXXX";

static const cnt_leaderboard *board(const char *id)
{
	const cnt_leaderboard *b = cnt_defs_board(defs, id, strlen(id));

	if (b == NULL) {
		fprintf(stderr, "no board %s\n", id);
		exit(1);
	}
	return b;
}

static cnt_slice sl(const char *s)
{
	cnt_slice x = {s, strlen(s)};

	return x;
}

/* One bucket record of counter on [start, start + 1 h), shard 0. */
static cnt_bucket bk(const char *counter, const char *member, int64_t start, int64_t sum, int64_t last)
{
	cnt_bucket b;

	memset(&b, 0, sizeof(b));
	b.tenant_id = sl("t");
	b.counter_id = sl(counter);
	b.counter_version = 1;
	b.member_ref = sl(member);
	b.bucket_start = start;
	b.bucket_end = start + H;
	b.count = 1;
	b.sum = sum;
	b.has_min = b.has_max = b.has_last = 1;
	b.min = b.max = sum;
	b.last_event_time = last;
	b.max_ingest_time = last + 1000;
	return b;
}

static void add(cnt_proj *p, cnt_bucket b)
{
	cnt_err err;

	CHECK_EQ_INT(cnt_proj_add_bucket(p, &b, &err), 0);
}

/* "member:rank:value ..." of scope i, in rank order. */
static const char *listing(cnt_proj *p, size_t i)
{
	static char s[4096];
	cnt_view_build vb;
	cnt_err err;
	size_t o = 0;

	s[0] = 0;
	if (cnt_proj_view(p, i, &vb, &err) != 0)
		return "(error)";
	for (size_t k = 0; k < vb.n && o < sizeof(s) - 64; k++)
		o += (size_t)snprintf(s + o, sizeof(s) - o, "%s%.*s:%u:%lld", k ? " " : "", (int)vb.entries[k].name_len,
			vb.pool + vb.entries[k].name_off, vb.entries[k].rank, (long long)vb.entries[k].value);
	return s;
}

/* The five members of tests/data/views/ranking.jsonl:
 *   a 10 (last 10:00), b 5 + 3 = 8 (10:30, two buckets), c 8 (11:00),
 *   d 8 (10:30), e 2 (12:00). */
static cnt_proj *five(const char *id)
{
	cnt_err err;
	cnt_proj *p = cnt_proj_new(board(id), CNT_TZ_MIN_MS, CNT_TZ_MAX_MS, &err);

	add(p, bk("pts", "e", T0 + 2 * H, 2, T0 + 2 * H));
	add(p, bk("pts", "d", T0, 8, T0 + H / 2));
	add(p, bk("pts", "c", T0 + H, 8, T0 + H));
	add(p, bk("pts", "b", T0 - H, 5, T0 - H));
	add(p, bk("pts", "b", T0, 3, T0 + H / 2));
	add(p, bk("pts", "a", T0, 10, T0));
	CHECK_EQ_INT(cnt_proj_finish(p, &err), 0);
	CHECK_EQ_INT(cnt_proj_nscopes(p), 1);
	CHECK_EQ_STR(cnt_proj_scope(p, 0), "global");
	return p;
}

static void test_numbering_and_tie_breaks(void)
{
	static const struct {
		const char *board, *want;
	} cases[] = {
		{"comp", "a:1:10 b:2:8 d:2:8 c:4:8 e:5:2"},
		{"dense", "a:1:10 b:2:8 d:2:8 c:3:8 e:4:2"},
		{"ord", "a:1:10 b:2:8 d:3:8 c:4:8 e:5:2"},
		{"latest", "a:1:10 c:2:8 b:3:8 d:3:8 e:5:2"},
		{"ref", "a:1:10 b:2:8 c:2:8 d:2:8 e:5:2"},
		{"asc", "e:1:2 b:2:8 d:2:8 c:4:8 a:5:10"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cnt_proj *p = five(cases[i].board);

		CHECK_EQ_STR(listing(p, 0), cases[i].want);
		cnt_proj_free(p);
	}
}

static void test_cmp_and_tied(void)
{
	cnt_view_entry x = {8, T0, 0, 1, 0}, y = {8, T0, 0, 1, 0}, z = {8, T0 + 1, 0, 1, 0}, w = {9, T0 + 5, 0, 1, 0};

	CHECK(cnt_proj_tied(board("comp"), &x, &y));
	CHECK(!cnt_proj_tied(board("comp"), &x, &z));   /* earliest achiever separates them */
	CHECK(cnt_proj_tied(board("ref"), &x, &z));     /* member_ref only: the value decides */
	CHECK(!cnt_proj_tied(board("ref"), &x, &w));
	CHECK(cnt_proj_cmp(board("comp"), &x, "a", &z, "a") < 0);
	CHECK(cnt_proj_cmp(board("latest"), &x, "a", &z, "a") > 0);
	CHECK(cnt_proj_cmp(board("comp"), &x, "a", &y, "b") < 0);
	CHECK(cnt_proj_cmp(board("comp"), &y, "b", &x, "a") > 0);
	CHECK(cnt_proj_cmp(board("comp"), &w, "z", &x, "a") < 0);
	CHECK(cnt_proj_cmp(board("asc"), &w, "z", &x, "a") > 0);
	CHECK_EQ_INT(cnt_proj_cmp(board("comp"), &x, "a", &y, "a"), 0);
	/* a shorter name that is a prefix sorts first */
	{
		cnt_view_entry s = {8, T0, 0, 1, 0}, l = {8, T0, 0, 2, 0};

		CHECK(cnt_proj_cmp(board("ref"), &s, "a", &l, "ab") < 0);
		CHECK(cnt_proj_cmp(board("ref"), &l, "ab", &s, "a") > 0);
	}
}

/* Only the board's counter and tenant, whole buckets inside the window,
 * non-empty ones; the as-of is the newest ingest of the counter's buckets,
 * inside the window or not. */
static void test_window_and_skips(void)
{
	cnt_err err;
	cnt_proj *p = cnt_proj_new(board("comp"), T0, T0 + 3 * H, &err);
	cnt_bucket b;
	const cnt_proj_stats *st;

	add(p, bk("pts", "in1", T0, 1, T0));
	add(p, bk("pts", "in2", T0 + 2 * H, 2, T0 + 2 * H));
	add(p, bk("pts", "before", T0 - H, 4, T0 - 1));
	b = bk("pts", "after", T0 + 3 * H, 8, T0 + 3 * H);
	b.max_ingest_time = T0 + 10 * H;   /* outside the window, but the as-of */
	add(p, b);
	b = bk("other", "other", T0, 16, T0);
	b.max_ingest_time = T0 + 20 * H;   /* another counter: not the as-of */
	add(p, b);
	b = bk("pts", "tenant", T0, 32, T0);
	b.tenant_id = sl("u");
	add(p, b);
	b = bk("pts", "empty", T0, 0, T0);
	b.count = 0;
	add(p, b);
	b = bk("pts", "straddle", T0 + 2 * H + H / 2, 64, T0 + 3 * H);
	add(p, b);
	/* two shards of one bucket add up */
	b = bk("pts", "in1", T0, 100, T0 + 5);
	b.shard = 3;
	add(p, b);
	CHECK_EQ_INT(cnt_proj_finish(p, &err), 0);
	CHECK_EQ_STR(listing(p, 0), "in1:1:101 in2:2:2");
	st = cnt_proj_get_stats(p);
	CHECK_EQ_INT(st->buckets_read, 9);
	CHECK_EQ_INT(st->buckets_used, 3);
	CHECK_EQ_INT(st->members, 2);
	CHECK_EQ_INT(st->as_of, T0 + 10 * H);
	{
		cnt_view_build vb;

		CHECK_EQ_INT(cnt_proj_view(p, 0, &vb, &err), 0);
		CHECK_EQ_INT(vb.entries[0].last_event_time, T0 + 5);
	}
	cnt_proj_free(p);
}

static void test_min_max_counters(void)
{
	cnt_err err;
	cnt_proj *p = cnt_proj_new(board("fast"), CNT_TZ_MIN_MS, CNT_TZ_MAX_MS, &err);
	cnt_proj *q = cnt_proj_new(board("best"), CNT_TZ_MIN_MS, CNT_TZ_MAX_MS, &err);
	cnt_bucket b;

	/* min: the smallest delta over the member's buckets; smaller ranks first */
	b = bk("fast", "x", T0, 0, T0);
	b.min = 30;
	b.max = 90;
	add(p, b);
	b = bk("fast", "x", T0 + H, 0, T0 + H);
	b.min = 25;
	b.max = 40;
	add(p, b);
	b = bk("fast", "y", T0, 0, T0);
	b.min = 27;
	b.max = 99;
	add(p, b);
	CHECK_EQ_INT(cnt_proj_finish(p, &err), 0);
	CHECK_EQ_STR(listing(p, 0), "x:1:25 y:2:27");
	b = bk("best", "x", T0, 0, T0);
	b.min = 1;
	b.max = 90;
	add(q, b);
	b = bk("best", "y", T0, 0, T0);
	b.min = 1;
	b.max = 99;
	add(q, b);
	CHECK_EQ_INT(cnt_proj_finish(q, &err), 0);
	CHECK_EQ_STR(listing(q, 0), "y:1:99 x:2:90");
	cnt_proj_free(p);
	cnt_proj_free(q);
}

/* ---- many members against a reference -------------------------------- */

typedef struct ref {
	int64_t value, last;
	char name[24];
	uint32_t rank;
} ref;

static const cnt_leaderboard *ref_board;

static int ref_cmp(const void *x, const void *y)
{
	const ref *a = x, *b = y;
	const cnt_leaderboard *bd = ref_board;

	if (a->value != b->value)
		return bd->order_asc ? (a->value < b->value ? -1 : 1) : (a->value > b->value ? -1 : 1);
	if (bd->tie_break[0] == CNT_TIE_EARLIEST_ACHIEVER && a->last != b->last)
		return a->last < b->last ? -1 : 1;
	if (bd->tie_break[0] == CNT_TIE_LATEST_ACHIEVER && a->last != b->last)
		return a->last > b->last ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int ref_tied(const ref *a, const ref *b)
{
	return a->value == b->value && (ref_board->tie_break[0] == CNT_TIE_MEMBER_REF_ASC || a->last == b->last);
}

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005u + 1442695040888963407u;
	return *s >> 33;
}

static void check_against_reference(const char *id, size_t n, int values, int times, uint64_t seed)
{
	cnt_err err;
	const cnt_leaderboard *bd = board(id);
	cnt_proj *p = cnt_proj_new(bd, CNT_TZ_MIN_MS, CNT_TZ_MAX_MS, &err);
	ref *r = calloc(n, sizeof(*r));
	cnt_view_build vb;
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		r[i].value = (int64_t)(lcg(&seed) % (uint64_t)values) - values / 3;
		r[i].last = T0 + (int64_t)(lcg(&seed) % (uint64_t)times);
		snprintf(r[i].name, sizeof(r[i].name), "m%zu", (size_t)(lcg(&seed) % 1000000) * 10000 + i);
		add(p, bk("pts", r[i].name, T0, r[i].value, r[i].last));
	}
	CHECK_EQ_INT(cnt_proj_finish(p, &err), 0);
	ref_board = bd;
	qsort(r, n, sizeof(*r), ref_cmp);
	for (size_t i = 0; i < n; i++) {
		if (bd->rank_numbering == CNT_RANK_ORDINAL || i == 0)
			r[i].rank = (uint32_t)i + 1;
		else if (ref_tied(&r[i - 1], &r[i]))
			r[i].rank = r[i - 1].rank;
		else
			r[i].rank = bd->rank_numbering == CNT_RANK_DENSE ? r[i - 1].rank + 1 : (uint32_t)i + 1;
	}
	CHECK_EQ_INT(cnt_proj_view(p, 0, &vb, &err), 0);
	CHECK_EQ_INT(vb.n, n);
	for (size_t i = 0; i < n && !bad; i++) {
		const cnt_view_entry *e = &vb.entries[i];

		if (e->value != r[i].value || e->last_event_time != r[i].last || e->rank != r[i].rank ||
		    e->name_len != strlen(r[i].name) || memcmp(vb.pool + e->name_off, r[i].name, e->name_len) != 0) {
			fprintf(stderr, "%s: position %zu: got %.*s %lld rank %u, want %s %lld rank %u\n", id, i,
				(int)e->name_len, vb.pool + e->name_off, (long long)e->value, e->rank, r[i].name,
				(long long)r[i].value, r[i].rank);
			bad = 1;
		}
	}
	CHECK(!bad);
	/* the histogram: ascending edges, each value in its bin, counts add up */
	{
		uint64_t total = 0;
		int inbin = 1, asc = 1;

		for (size_t i = 0; i < vb.nbins; i++) {
			total += vb.counts[i];
			asc &= vb.edges[i] < vb.edges[i + 1];
		}
		for (size_t i = 0; i < n; i++) {
			size_t b = 0;

			while (b + 1 < vb.nbins && vb.edges[b + 1] <= vb.entries[i].value)
				b++;
			inbin &= vb.edges[b] <= vb.entries[i].value && vb.entries[i].value < vb.edges[b + 1];
		}
		CHECK_EQ_INT(total, n);
		CHECK(asc);
		CHECK(inbin);
	}
	free(r);
	cnt_proj_free(p);
}

static void test_many_members(void)
{
	/* few values and times: long runs of ties; many: mostly distinct */
	check_against_reference("comp", 3000, 7, 3, 1);
	check_against_reference("dense", 3000, 7, 3, 2);
	check_against_reference("ord", 3000, 7, 3, 3);
	check_against_reference("latest", 3000, 20, 5, 4);
	check_against_reference("ref", 3000, 5, 1000, 5);
	check_against_reference("asc", 3000, 1000000, 1000, 6);
	check_against_reference("comp", 1, 10, 1, 7);
	/* one mass tie: every member the same value and time */
	check_against_reference("comp", 2000, 1, 1, 8);
}

static void test_histogram_linear_and_log(void)
{
	cnt_err err;
	cnt_proj *p = cnt_proj_new(board("lin"), CNT_TZ_MIN_MS, CNT_TZ_MAX_MS, &err);
	cnt_proj *q = cnt_proj_new(board("log"), CNT_TZ_MIN_MS, CNT_TZ_MAX_MS, &err);
	static const int64_t vals[] = {100, 90, 80, 75, 70, 40, 10};
	static const int64_t lvals[] = {-5, 0, 1, 2, 3, 10, 100, 1000, 100000, 1000000};
	cnt_view_build vb;
	char name[8];

	for (size_t i = 0; i < 7; i++) {
		snprintf(name, sizeof(name), "p%zu", i + 1);
		add(p, bk("pts", name, T0, vals[i], T0 + (int64_t)i));
	}
	CHECK_EQ_INT(cnt_proj_finish(p, &err), 0);
	CHECK_EQ_INT(cnt_proj_view(p, 0, &vb, &err), 0);
	CHECK_EQ_INT(vb.head, 2);   /* materialised_cap */
	CHECK_EQ_INT(vb.n, 7);
	/* width 10 from the smallest value 10: edges 10, 20, ..., 100, then 101 */
	CHECK_EQ_INT(vb.nbins, 10);
	for (size_t i = 0; i < vb.nbins; i++)
		CHECK_EQ_INT(vb.edges[i], 10 + 10 * (int64_t)i);
	CHECK_EQ_INT(vb.edges[vb.nbins], 101);
	CHECK_EQ_INT(vb.counts[0], 1);   /* 10 */
	CHECK_EQ_INT(vb.counts[3], 1);   /* 40 */
	CHECK_EQ_INT(vb.counts[6], 2);   /* 70, 75 */
	CHECK_EQ_INT(vb.counts[9], 1);   /* 100 */
	for (size_t i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "q%zu", i);
		add(q, bk("pts", name, T0, lvals[i], T0));
	}
	CHECK_EQ_INT(cnt_proj_finish(q, &err), 0);
	CHECK_EQ_INT(cnt_proj_view(q, 0, &vb, &err), 0);
	CHECK(vb.nbins >= 2 && vb.nbins <= 18);
	CHECK_EQ_INT(vb.edges[0], -5);
	CHECK_EQ_INT(vb.edges[vb.nbins], 1000001);
	{
		uint64_t total = 0;

		for (size_t i = 0; i < vb.nbins; i++) {
			total += vb.counts[i];
			CHECK(vb.edges[i] < vb.edges[i + 1]);
		}
		CHECK_EQ_INT(total, 10);
		/* everything <= 0 shares the first bin, which ends at 1 */
		CHECK_EQ_INT(vb.edges[1], 1);
		CHECK_EQ_INT(vb.counts[0], 2);
	}
	cnt_proj_free(p);
	cnt_proj_free(q);
}

static void test_scopes(void)
{
	cnt_err err;
	cnt_proj *p = cnt_proj_new(board("coh"), CNT_TZ_MIN_MS, CNT_TZ_MAX_MS, &err);
	size_t a = SIZE_MAX, b = SIZE_MAX;

	CHECK_EQ_INT(cnt_proj_set_scope(p, "m1", 2, "A", 1), 0);
	CHECK_EQ_INT(cnt_proj_set_scope(p, "m2", 2, "B", 1), 0);
	CHECK_EQ_INT(cnt_proj_set_scope(p, "m3", 2, "B", 1), 0);
	CHECK_EQ_INT(cnt_proj_set_scope(p, "m3", 2, "A", 1), 0);   /* the last wins */
	CHECK_EQ_INT(cnt_proj_set_scope(p, "idle", 4, "C", 1), 0); /* a scope with no values */
	add(p, bk("pts", "m1", T0, 5, T0));
	add(p, bk("pts", "m2", T0, 7, T0));
	add(p, bk("pts", "m3", T0, 9, T0));
	add(p, bk("pts", "nobody", T0, 11, T0));
	CHECK_EQ_INT(cnt_proj_finish(p, &err), 0);
	CHECK_EQ_INT(cnt_proj_nscopes(p), 3);
	for (size_t i = 0; i < cnt_proj_nscopes(p); i++) {
		if (strcmp(cnt_proj_scope(p, i), "A") == 0)
			a = i;
		if (strcmp(cnt_proj_scope(p, i), "B") == 0)
			b = i;
	}
	CHECK(a != SIZE_MAX && b != SIZE_MAX);
	if (a != SIZE_MAX && b != SIZE_MAX) {
		cnt_view_build vb;

		CHECK_EQ_STR(listing(p, a), "m3:1:9 m1:2:5");
		CHECK_EQ_STR(listing(p, b), "m2:1:7");
		/* each scope's names are its own */
		CHECK_EQ_INT(cnt_proj_view(p, b, &vb, &err), 0);
		CHECK_EQ_INT(vb.pool_len, 2);
	}
	CHECK_EQ_INT(cnt_proj_get_stats(p)->unscoped, 1);
	CHECK_EQ_INT(cnt_proj_get_stats(p)->members, 3);
	cnt_proj_free(p);
}

static cnt_event event(const char *id, const char *member, int64_t t, const char *region)
{
	static cnt_slice keys[4], vals[4];
	static int k;
	cnt_event e;

	memset(&e, 0, sizeof(e));
	e.event_id = sl(id);
	e.tenant_id = sl("t");
	e.counter_id = sl("pts");
	e.member_ref = sl(member);
	e.event_time = t;
	k = (k + 1) % 4;
	keys[k] = sl("region");
	vals[k] = sl(region);
	e.nattrs = 1;
	e.attr_keys = &keys[k];
	e.attr_vals = &vals[k];
	return e;
}

/* The member's latest event names its region; events at the same instant
 * are settled the same way whatever their order. */
static void test_scope_from_events(void)
{
	const char *want = NULL;

	for (int order = 0; order < 2; order++) {
		cnt_err err;
		cnt_proj *p = cnt_proj_new(board("reg"), CNT_TZ_MIN_MS, CNT_TZ_MAX_MS, &err);
		cnt_event ev[4];
		cnt_event other;

		ev[0] = event("e1", "m", T0 + H, "us");
		ev[1] = event("e2", "m", T0, "eu");
		ev[2] = event("e3", "n", T0, "eu");
		ev[3] = event("e4", "n", T0, "us");
		for (int i = 0; i < 4; i++)
			CHECK_EQ_INT(cnt_proj_scope_from_event(p, &ev[order ? 3 - i : i], &err), 0);
		other = event("e5", "m", T0 + 2 * H, "apac");
		other.tenant_id = sl("u");   /* another tenant: ignored */
		CHECK_EQ_INT(cnt_proj_scope_from_event(p, &other, &err), 0);
		add(p, bk("pts", "m", T0, 1, T0));
		add(p, bk("pts", "n", T0, 2, T0));
		CHECK_EQ_INT(cnt_proj_finish(p, &err), 0);
		for (size_t i = 0; i < cnt_proj_nscopes(p); i++) {
			const char *l = listing(p, i);

			if (strcmp(cnt_proj_scope(p, i), "apac") == 0)
				CHECK_EQ_STR(l, "");
			if (strcmp(cnt_proj_scope(p, i), "us") == 0 && strstr(l, "m:") == NULL)
				CHECK(0);
			if (strstr(l, "n:")) {
				if (want == NULL)
					want = cnt_proj_scope(p, i) [0] == 'e' ? "eu" : "us";
				else
					CHECK_EQ_STR(cnt_proj_scope(p, i), want);
			}
		}
		cnt_proj_free(p);
	}
	CHECK(want != NULL);
}

/* An empty value names no scope: the member keeps the one before.  A value
 * that is not text (a NUL, a byte that is not UTF-8) is refused, naming the
 * event, and changes nothing. */
static void test_scope_not_text(void)
{
	static const char nul[] = "e\0u", bad[] = "e\xffu";
	cnt_err err;
	cnt_proj *p = cnt_proj_new(board("reg"), CNT_TZ_MIN_MS, CNT_TZ_MAX_MS, &err);
	cnt_slice v;
	cnt_event e;

	e = event("e1", "m", T0, "eu");
	CHECK_EQ_INT(cnt_proj_scope_from_event(p, &e, &err), 0);
	e = event("e2", "m", T0 + H, "");
	CHECK_EQ_INT(cnt_proj_scope_from_event(p, &e, &err), 0);
	e = event("e3", "m", T0 + 2 * H, "us");
	v = (cnt_slice){ nul, sizeof(nul) - 1 };
	e.attr_vals = &v;
	CHECK_EQ_INT(cnt_proj_scope_from_event(p, &e, &err), -1);
	CHECK_EQ_STR(err.msg, "event 'e3': attrs 'region' is not UTF-8 text, so it cannot name a scope "
		"(cnt-ingest admits only text: was this log written by another tool?)");
	CHECK(err.kind != CNT_ERR_NOMEM);
	e = event("e\xff" "4", "m", T0 + 2 * H, "us");
	v = (cnt_slice){ bad, sizeof(bad) - 1 };
	e.attr_vals = &v;
	CHECK_EQ_INT(cnt_proj_scope_from_event(p, &e, &err), -1);
	CHECK(strstr(err.msg, "event 'e\\xff4': ") == err.msg);
	add(p, bk("pts", "m", T0, 1, T0));
	CHECK_EQ_INT(cnt_proj_finish(p, &err), 0);
	CHECK_EQ_INT(cnt_proj_nscopes(p), 1);
	CHECK_EQ_STR(cnt_proj_scope(p, 0), "eu");
	CHECK_EQ_STR(listing(p, 0), "m:1:1");
	cnt_proj_free(p);
}

int main(void)
{
	cnt_err err;
	char cmd[128];

	setenv("TZDIR", "/usr/share/zoneinfo", 0);
	defs = cnt_defs_parse(defs_json, sizeof(defs_json) - 1, "test", &err);
	if (defs == NULL) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_numbering_and_tie_breaks);
	RUN(test_cmp_and_tied);
	RUN(test_window_and_skips);
	RUN(test_min_max_counters);
	RUN(test_many_members);
	RUN(test_histogram_linear_and_log);
	RUN(test_scopes);
	RUN(test_scope_from_events);
	RUN(test_scope_not_text);
	cnt_defs_free(defs);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return unit_report("test_project");
}
