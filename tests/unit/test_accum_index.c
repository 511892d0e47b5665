/*
 * test_accum_index.c - the accumulator's group index and its output order,
 * from inside lib/count/accum.c (this file includes it, to reach the
 * static index and the hash it keys on).
 *
 * - A slot holds only the low 32 bits of its key's hash: a matching tag
 *   is a candidate until the group's key is compared.  Thousands of keys
 *   given one hash are each their own group and are found again, across
 *   the index's doublings;
 * - two keys whose hashes share their low 32 bits in earnest (found by
 *   search over buckets) are counted apart by the batched path, whose
 *   lookup compares the key a phase after it matched the tag: in one
 *   batch, one event at a time, and in either order;
 * - the output order (stream, member, dimension pair, bucket, shard) from
 *   the two counting sorts and the per-member sort: with several streams,
 *   members whose byte order is not their order of arrival, breakdown
 *   records, negative and positive shards, and members with more groups
 *   than the insertion sort takes (qsort), every record is after the one
 *   before it, and the bytes do not depend on the order of the events;
 *   and a member last in one stream and first in the next, with buckets
 *   before and after 1970;
 * - member names of at most 8 bytes compared in their slot, longer ones
 *   in mdata, in one chain of one hash (test_member_inline).
 */
#include "../../lib/count/accum.c"

#include "unit.h"

static const char *tmpdir = "/tmp";

static cnt_slice S(const char *s)
{
	cnt_slice x = {s, strlen(s)};

	return x;
}

static void test_one_tag(void)
{
	enum { N = 6000 };
	cnt_err err;
	cnt_accum *a = cnt_accum_new(0, tmpdir, &err);
	/* equal low 32 bits: one tag, one home; the high bits differ */
	const uint64_t tag = UINT64_C(0x9e3779b9);
	size_t wrong = 0;

	CHECK(a != NULL);
	if (a == NULL)
		return;
	for (uint32_t k = 0; k < N; k++) {
		uint64_t h = tag | (uint64_t)k << 32;

		if (group_of(a, k % 3, k / 3, k % 5, (int64_t)(k % 7) * 3600000, (int32_t)(k % 2) - 1, 0, h) != k)
			wrong++;
	}
	CHECK_EQ_INT(wrong, 0);
	CHECK_EQ_INT(a->ngroups, N);
	CHECK(a->gmask + 1 >= 2 * N);   /* it doubled on the way */
	for (uint32_t k = 0; k < N; k++) {
		uint64_t h = tag | (uint64_t)(N - k) << 32;
		const agg *g = &a->groups[k];

		if (group_of(a, k % 3, k / 3, k % 5, (int64_t)(k % 7) * 3600000, (int32_t)(k % 2) - 1, 0, h) != k ||
		    g->stream != k % 3 || g->member != k / 3 || g->dim != k % 5)
			wrong++;
	}
	CHECK_EQ_INT(wrong, 0);
	CHECK_EQ_INT(a->ngroups, N);
	cnt_accum_free(a);
	/* a home is the tag's bits: the index is never doubled past 2^32
	 * slots (refused before the table is touched) */
	a = cnt_accum_new(0, tmpdir, &err);
	CHECK(a != NULL);
	if (a == NULL)
		return;
	a->gmask = UINT32_MAX;
	CHECK_EQ_INT(grow_groups(a), -1);
	a->gmask = 1023;
	CHECK_EQ_INT(grow_groups(a), 0);
	CHECK_EQ_INT(a->gmask, 2047);
	cnt_accum_free(a);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static const int64_t T0 = INT64_C(1772359200000);   /* 2026-03-01T10:00Z */

/* Reads the whole of fd (from its start) into out. */
static void slurp_into(int fd, cnt_buf *out)
{
	char tmp[65536];
	ssize_t n;

	out->len = 0;
	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, tmp, sizeof(tmp))) > 0)
		CHECK_EQ_INT(cnt_buf_append(out, tmp, (size_t)n), 0);
}

/* A copy of b's key in store (its strings are the reader's until its
 * next record). */
static cnt_bucket kept_key(const cnt_bucket *b, char *store, size_t size)
{
	cnt_bucket k = *b;
	cnt_slice *s[] = {&k.tenant_id, &k.counter_id, &k.member_ref, &k.dim, &k.dim_value};
	size_t at = 0;

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		if (at + s[i]->n > size)
			s[i]->n = size - at;   /* a test's strings are short */
		memcpy(store + at, s[i]->p, s[i]->n);
		s[i]->p = store + at;
		at += s[i]->n;
	}
	return k;
}

/* Two hours from T0 whose groups (first stream, first member, total,
 * shard 0) have hashes equal in their low 32 bits.  0 when none found. */
static int colliding_hours(int64_t *h1, int64_t *h2)
{
	enum { N = 1 << 18 };
	uint64_t *v = malloc(N * sizeof(*v));
	int found = 0;

	if (v == NULL)
		return 0;
	/* tag << 32 | hour: sorted, equal tags are neighbours */
	for (uint64_t k = 0; k < N; k++)
		v[k] = (group_hash_of(0, 0, 0, T0 + (int64_t)k * 3600000, 0) & 0xffffffffu) << 32 | k;
	qsort(v, N, sizeof(*v), cmp_u64);
	for (size_t k = 1; k < N && !found; k++)
		if (v[k] >> 32 == v[k - 1] >> 32) {
			*h1 = (int64_t)(v[k - 1] & 0xffffffffu);
			*h2 = (int64_t)(v[k] & 0xffffffffu);
			found = 1;
		}
	free(v);
	return found;
}

/* a finished into a temporary bucket file (null codec) and freed: the
 * file, rewound, or NULL. */
static FILE *finished(cnt_accum *a)
{
	FILE *f = tmpfile();
	cnt_err err;
	cnt_writer *w = f ? cnt_bucket_writer_new(fileno(f), "test", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err) : NULL;

	CHECK(w && cnt_accum_finish(a, w, &err) == 0 && cnt_writer_finish(w, &err) == 0);
	cnt_writer_free(w);
	cnt_accum_free(a);
	if (f)
		lseek(fileno(f), 0, SEEK_SET);
	return f;
}

/* Reads the bucket file f back: how many records, how many not after the
 * one before them (cnt_bucket_key_cmp), how many before 1970. */
static void read_order(FILE *f, size_t *records, size_t *misordered, size_t *negative)
{
	cnt_bucket_in in;
	cnt_bucket b, prev;
	cnt_err err;
	char store[256];

	*records = *misordered = *negative = 0;
	lseek(fileno(f), 0, SEEK_SET);
	CHECK_EQ_INT(cnt_bucket_in_open(&in, fileno(f), "order", NULL, &err), 0);
	while (cnt_bucket_in_next(&in, &b, &err) > 0) {
		if (*records > 0 && cnt_bucket_key_cmp(&prev, &b) >= 0)
			(*misordered)++;
		*negative += b.bucket_start < 0;
		(*records)++;
		prev = kept_key(&b, store, sizeof(store));
	}
	cnt_bucket_in_release(&in);
}

static cnt_windowed hour_event(const char *member, int64_t hour)
{
	cnt_windowed wv;

	memset(&wv, 0, sizeof(wv));
	wv.ev.tenant_id = S("acme");
	wv.ev.counter_id = S("dist");
	wv.ev.counter_version = 1;
	wv.ev.member_ref = S(member);
	wv.ev.delta = 1;
	wv.ev.event_time = T0 + hour * 3600000;
	wv.ev.ingest_time = wv.ev.event_time + 1000;
	wv.bucket_start = T0 + hour * 3600000;
	wv.bucket_end = wv.bucket_start + 3600000;
	wv.exact = 1;
	return wv;
}

static void test_shared_tag(void)
{
	int64_t h[2] = {0, 0};

	if (!colliding_hours(&h[0], &h[1])) {
		CHECK(!"two hours of one tag among 2^18 (about 8 expected)");
		return;
	}
	CHECK(h[0] != h[1]);
	CHECK_EQ_INT((uint32_t)group_hash_of(0, 0, 0, T0 + h[0] * 3600000, 0),
		(uint32_t)group_hash_of(0, 0, 0, T0 + h[1] * 3600000, 0));
	/* way 0: one batch; 1: one event at a time; 2: one batch, the other
	 * hour first */
	for (int way = 0; way < 3; way++) {
		static const int pick[5] = {0, 1, 0, 1, 0};   /* hour 0 three times, hour 1 twice */
		cnt_windowed ev[5];
		cnt_err err;
		cnt_accum *a = cnt_accum_new(0, tmpdir, &err);
		FILE *f;
		cnt_bucket_in in;
		cnt_bucket b;
		int records = 0;

		CHECK(a != NULL);
		if (a == NULL)
			return;
		for (int i = 0; i < 5; i++)
			ev[i] = hour_event("m", h[way == 2 ? 1 - pick[i] : pick[i]]);
		if (way == 1)
			for (int i = 0; i < 5; i++)
				CHECK_EQ_INT(cnt_accum_add_event(a, &ev[i], &err), 0);
		else
			CHECK_EQ_INT(cnt_accum_add_events(a, ev, 5, &err), 0);
		CHECK_EQ_INT(a->ngroups, 2);
		if ((f = finished(a)) == NULL)
			return;
		CHECK_EQ_INT(cnt_bucket_in_open(&in, fileno(f), "shared", NULL, &err), 0);
		while (cnt_bucket_in_next(&in, &b, &err) > 0) {
			int64_t hour = (b.bucket_start - T0) / 3600000;
			int three = way == 2 ? h[1] : h[0];

			records++;
			CHECK(hour == h[0] || hour == h[1]);
			CHECK_EQ_INT(b.count, hour == three ? 3 : 2);
		}
		CHECK_EQ_INT(records, 2);
		cnt_bucket_in_release(&in);
		fclose(f);
	}
}

/* Events over three streams, 300 members (named so that byte order is
 * not arrival order), breakdown records by device, hours and shards;
 * member k has 1 + k % 40 hours, so many have more than 16 groups. */
static void accumulate_mixed(int reverse, cnt_buf *out, size_t *records, size_t *misordered)
{
	enum { M = 300 };
	static const char *const tenants[] = {"zeta", "acme", "acme"};
	static const char *const counters[] = {"a", "b", "a"};
	static const char *const devices[] = {"web", "tv", "phone"};
	static char members[M][16];
	cnt_err err;
	cnt_accum *a = cnt_accum_new(0, tmpdir, &err);
	FILE *f;
	size_t n = 0, negative;

	*records = *misordered = 0;
	CHECK(a != NULL);
	if (a == NULL)
		return;
	for (int k = 0; k < M; k++)
		snprintf(members[k], sizeof(members[k]), "%c%d", 'z' - k % 26, k);
	for (int k = 0; k < M; k++)
		n += (size_t)(1 + k % 40) * 2;
	for (size_t e = 0; e < n; e++) {
		size_t i = reverse ? n - 1 - e : e, j = i;
		int k = 0, hour;
		cnt_windowed wv;
		cnt_slice keys[1], vals[1];

		while (j >= (size_t)(1 + k % 40) * 2)
			j -= (size_t)(1 + k % 40) * 2, k++;
		hour = (int)(j / 2);
		wv = hour_event(members[k], hour * 7 % 41);
		wv.ev.tenant_id = S(tenants[(k + hour) % 3]);
		wv.ev.counter_id = S(counters[(k + hour) % 3]);
		wv.shard = (int32_t)(j % 2) * 3 - 1;   /* -1 or 2 */
		keys[0] = S("device");
		vals[0] = S(devices[(k + hour) % 3]);
		wv.ev.attr_keys = keys;
		wv.ev.attr_vals = vals;
		wv.ev.nattrs = 1;
		wv.ndims = 1;
		wv.dims[0] = S("device");
		cnt_windowed_dim_values(&wv);
		CHECK_EQ_INT(cnt_accum_add_event(a, &wv, &err), 0);
	}
	if ((f = finished(a)) == NULL)
		return;
	slurp_into(fileno(f), out);
	read_order(f, records, misordered, &negative);
	fclose(f);
}

static void test_order(void)
{
	cnt_buf out[2] = {CNT_BUF_INIT, CNT_BUF_INIT};
	size_t records[2], misordered[2], groups = 0;

	/* each event its own total group and its own device group */
	for (int k = 0; k < 300; k++)
		groups += (size_t)(1 + k % 40) * 2 * 2;
	for (int r = 0; r < 2; r++) {
		accumulate_mixed(r, &out[r], &records[r], &misordered[r]);
		CHECK_EQ_INT(records[r], groups);
		CHECK_EQ_INT(misordered[r], 0);
	}
	CHECK(out[0].len > 0 && out[0].len == out[1].len && memcmp(out[0].p, out[1].p, out[0].len) == 0);
	cnt_buf_release(&out[0]);
	cnt_buf_release(&out[1]);
}

/* One member last in one stream and first in the next (their groups are
 * neighbours after the counting sorts, and are two runs, not one), with
 * hours on both sides of 1970 interleaved across the streams. */
static void test_order_edges(void)
{
	static const struct { const char *counter, *member; int64_t hour; } ev[] = {
		{"a", "zz", 3}, {"b", "zz", -2}, {"a", "a1", 0}, {"b", "zzz", 1}, {"a", "zz", -5},
		{"b", "zz", 4}, {"a", "zz", 1}, {"b", "zz", -7}, {"b", "zz", 2}, {"a", "a1", -1},
	};
	enum { N = sizeof(ev) / sizeof(ev[0]) };
	cnt_err err;
	cnt_accum *a = cnt_accum_new(0, tmpdir, &err);
	FILE *f;
	size_t records, misordered, negative;

	CHECK(a != NULL);
	if (a == NULL)
		return;
	for (size_t i = 0; i < N; i++) {
		cnt_windowed wv = hour_event(ev[i].member, 0);

		wv.ev.counter_id = S(ev[i].counter);
		wv.bucket_start = ev[i].hour * 3600000;
		wv.bucket_end = wv.bucket_start + 3600000;
		wv.ev.event_time = wv.bucket_start;
		CHECK_EQ_INT(cnt_accum_add_event(a, &wv, &err), 0);
	}
	if ((f = finished(a)) == NULL)
		return;
	read_order(f, &records, &misordered, &negative);
	CHECK_EQ_INT(records, N);
	CHECK_EQ_INT(misordered, 0);
	CHECK_EQ_INT(negative, 4);
	fclose(f);
}

/* Member names of at most 8 bytes are compared in their slot (mslot.off
 * holds their bytes), longer ones in mdata.  All given one hash, so that
 * every lookup walks one chain past the others: names that differ only
 * in trailing NUL bytes ("ab", "ab\0", "ab\0\0"), the empty name, names
 * of 8 and 9 bytes with a common 8-byte prefix, and 700 more (the slots
 * double on the way) are each their own member, found again under its
 * id, with its own bytes and length in mdata. */
static void test_member_inline(void)
{
	enum { N = 700 };
	static const struct { const char *p; size_t n; } fixed[] = {
		{"", 0}, {"ab", 2}, {"ab\0", 3}, {"ab\0\0", 4}, {"\0", 1}, {"\0\0\0\0\0\0\0\0", 8},
		{"abcdefgh", 8}, {"abcdefghi", 9}, {"abcdefgh\0", 9}, {"abcdefg", 7},
	};
	enum { F = sizeof(fixed) / sizeof(fixed[0]) };
	static char more[N][16];
	cnt_slice names[F + N];
	uint32_t ids[F + N];
	const uint64_t h = UINT64_C(0x5bd1e9955bd1e995);
	size_t bad = 0;
	cnt_err err;
	cnt_accum *a = cnt_accum_new(0, tmpdir, &err);

	CHECK(a != NULL);
	if (a == NULL)
		return;
	for (size_t i = 0; i < F; i++)
		names[i] = (cnt_slice){fixed[i].p, fixed[i].n};
	for (size_t i = 0; i < N; i++) {
		/* 4 to 12 bytes: both sides of the inline bound */
		int n = snprintf(more[i], sizeof(more[i]), "m%0*zu", (int)(3 + i % 9), i);

		names[F + i] = (cnt_slice){more[i], (size_t)n};
	}
	for (size_t i = 0; i < F + N; i++)
		if (member_of(a, names[i], h, &ids[i]) != 0 || ids[i] != i)
			bad++;
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(a->nmembers, F + N);
	CHECK(a->mmask + 1 > 1024);   /* it doubled on the way */
	for (size_t r = 0; r < F + N; r++) {
		/* found again, in the other order, from a copy followed by
		 * 0xff bytes: only the name's own bytes are compared */
		size_t i = F + N - 1 - r;
		uint32_t id = UINT32_MAX;
		char copy[24];

		memset(copy, 0xff, sizeof(copy));
		memcpy(copy, names[i].p, names[i].n);
		if (member_of(a, (cnt_slice){copy, names[i].n}, h, &id) != 0 || id != ids[i] || a->mlen[id] != names[i].n ||
		    (names[i].n && memcmp(a->mdata.p + a->moff[id], names[i].p, names[i].n) != 0))
			bad++;
	}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(a->nmembers, F + N);
	cnt_accum_free(a);
}

int main(void)
{
	RUN(test_one_tag);
	RUN(test_shared_tag);
	RUN(test_order);
	RUN(test_order_edges);
	RUN(test_member_inline);
	return unit_report("test_accum_index");
}
