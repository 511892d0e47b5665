/*
 * test_dedup.c - the remembered-key table and its state file (lib/count/dedup.h).
 *
 * The table is checked against a plain reference (an array indexed by key
 * number holding the expiry second) over a long pseudo-random sequence; the
 * expiry boundary exactly (t == expire_s is new, per dedup.h); growth from
 * the smallest size; and the state file: round trip, the documented byte
 * layout (header, sorted 16-byte slots, XXH64 trailer), expired keys left
 * out, and every kind of damage refused.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "count/dedup.h"
#include "unit.h"

static char tmpdir[64];

static void path_of(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", tmpdir, name);
}

/* The key of string number i: ("t", "c", "key-<i>"). */
static cnt_dkey key_n(unsigned i)
{
	char s[32];
	const void *parts[3];
	size_t lens[3];

	snprintf(s, sizeof(s), "key-%u", i);
	parts[0] = "t";
	parts[1] = "c";
	parts[2] = s;
	lens[0] = 1;
	lens[1] = 1;
	lens[2] = strlen(s);
	return cnt_dedup_key(3, parts, lens);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_key(void)
{
	const void *p1[2] = {"ab", "c"}, *p2[2] = {"a", "bc"}, *p3[3] = {"a", "", "bc"};
	size_t l1[2] = {2, 1}, l2[2] = {1, 2}, l3[3] = {1, 0, 2};
	cnt_dkey a = cnt_dedup_key(2, p1, l1), b = cnt_dedup_key(2, p2, l2), c = cnt_dedup_key(3, p3, l3);
	cnt_dkey a2 = cnt_dedup_key(2, p1, l1);
	char big[3000];
	const void *pb[2] = {big, big};
	size_t lb[2] = {sizeof(big), sizeof(big) - 1};
	cnt_dkey k1, k2;

	/* parts are delimited: moving a byte across a boundary changes the key */
	CHECK(a.lo == a2.lo && a.hi == a2.hi);
	CHECK(a.lo != b.lo || a.hi != b.hi);
	CHECK(b.lo != c.lo || b.hi != c.hi);
	CHECK((a.lo | a.hi) != 0);
	/* the streaming path (keys longer than 1 KiB) is deterministic too */
	memset(big, 'x', sizeof(big));
	k1 = cnt_dedup_key(2, pb, lb);
	k2 = cnt_dedup_key(2, pb, lb);
	CHECK(k1.lo == k2.lo && k1.hi == k2.hi);
	lb[1]--;
	k2 = cnt_dedup_key(2, pb, lb);
	CHECK(k1.lo != k2.lo || k1.hi != k2.hi);
}

static void test_expiry_boundary(void)
{
	cnt_dedup d;
	cnt_dkey k = key_n(1);

	CHECK_EQ_INT(cnt_dedup_init(&d, 0), 0);
	CHECK_EQ_INT(cnt_dedup_check(&d, k, 1000, 60), 0);   /* new: remembered until 1060 */
	CHECK_EQ_INT(cnt_dedup_check(&d, k, 1000, 60), 1);
	CHECK_EQ_INT(cnt_dedup_check(&d, k, 1059, 60), 1);   /* last second inside */
	CHECK_EQ_INT(cnt_dedup_check(&d, k, 1060, 60), 0);   /* t == expire_s: new again */
	CHECK_EQ_INT(cnt_dedup_check(&d, k, 1119, 60), 1);   /* remembered anew until 1120 */
	CHECK_EQ_INT(cnt_dedup_check(&d, k, 1120, 60), 0);
	CHECK_EQ_INT(d.count, 1);                            /* one slot, refreshed */
	CHECK_EQ_INT(d.clock_s, 1120);
	/* an event older than the clock is judged at its own time */
	CHECK_EQ_INT(cnt_dedup_check(&d, k, 1100, 60), 1);
	CHECK_EQ_INT(d.clock_s, 1120);
	/* horizon 0: nothing is ever a duplicate */
	CHECK_EQ_INT(cnt_dedup_check(&d, key_n(2), 5000, 0), 0);
	CHECK_EQ_INT(cnt_dedup_check(&d, key_n(2), 5000, 0), 0);
	/* expiry saturates at the u32 limit rather than wrapping */
	CHECK_EQ_INT(cnt_dedup_check(&d, key_n(3), UINT32_MAX - 10, 100), 0);
	CHECK_EQ_INT(cnt_dedup_check(&d, key_n(3), UINT32_MAX - 1, 100), 1);
	cnt_dedup_release(&d);
}

/* Against a reference over 200000 random (key, time, horizon) steps with
 * time moving forward by 0..2 s and keys drawn from 5000. */
static void test_reference(void)
{
	enum { NK = 5000, STEPS = 200000 };
	uint64_t *ref = calloc(NK, sizeof(*ref)), s = 0x9E3779B97F4A7C15u, t = 100000;
	cnt_dkey *keys = malloc(NK * sizeof(*keys));
	cnt_dedup d;
	int bad = 0;
	uint64_t dups = 0;

	CHECK(ref != NULL && keys != NULL);
	if (ref == NULL || keys == NULL)
		goto out;
	for (unsigned i = 0; i < NK; i++)
		keys[i] = key_n(i);
	CHECK_EQ_INT(cnt_dedup_init(&d, 0), 0);
	for (int step = 0; step < STEPS; step++) {
		uint64_t r = xorshift(&s);
		unsigned i = (unsigned)(r % NK);
		uint64_t h = (r >> 20) % 3 == 0 ? 600 : 3600;
		int want, got;

		t += (r >> 32) % 3;
		want = t < ref[i];
		if (!want)
			ref[i] = t + h;
		got = cnt_dedup_check(&d, keys[i], t, h);
		dups += got == 1;
		if (got != want && bad++ < 5)
			fprintf(stderr, "step %d key %u t %llu: got %d want %d\n", step, i,
				(unsigned long long)t, got, want);
	}
	CHECK_EQ_INT(bad, 0);
	CHECK(dups > STEPS / 4 && dups < STEPS);   /* both answers were exercised */
	CHECK(d.count <= NK);
	cnt_dedup_release(&d);
out:
	free(ref);
	free(keys);
}

static void test_growth(void)
{
	enum { N = 100000 };
	cnt_dedup d;
	int missing = 0;

	CHECK_EQ_INT(cnt_dedup_init(&d, 0), 0);
	for (unsigned i = 0; i < N; i++)
		CHECK_EQ_INT(cnt_dedup_check(&d, key_n(i), 10, 100), 0);
	CHECK_EQ_INT(d.count, N);
	CHECK(((d.mask + 1) & d.mask) == 0);              /* a power of two */
	CHECK(d.count <= (d.mask + 1) / 4 * 3);           /* at most 3/4 full */
	for (unsigned i = 0; i < N; i++)
		missing += cnt_dedup_check(&d, key_n(i), 20, 100) != 1;
	CHECK_EQ_INT(missing, 0);
	CHECK_EQ_INT(d.count, N);
	cnt_dedup_release(&d);
	/* presized: no growth needed for the expected count */
	CHECK_EQ_INT(cnt_dedup_init(&d, N), 0);
	CHECK(d.mask + 1 >= N + N / 3);
	cnt_dedup_release(&d);
}

static int save_to(cnt_dedup *d, const char *path, size_t *kept)
{
	cnt_err err;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int rc;

	if (fd < 0)
		return -1;
	rc = cnt_dedup_save(d, fd, path, kept, &err);
	close(fd);
	return rc;
}

static size_t read_file(const char *path, uint8_t **out)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0, cap = 1 << 16;
	uint8_t *p = malloc(cap);

	while (f && p) {
		size_t got = fread(p + n, 1, cap - n, f);

		n += got;
		if (n < cap)
			break;
		cap *= 2;
		p = realloc(p, cap);
	}
	if (f)
		fclose(f);
	*out = p;
	return n;
}

static void write_file(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	CHECK(f != NULL);
	if (f) {
		CHECK_EQ_INT(fwrite(p, 1, n, f), n);
		fclose(f);
	}
}

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void test_save_load(void)
{
	enum { N = 3000 };
	char path[128];
	cnt_dedup d, e;
	cnt_err err;
	size_t kept = 0, n;
	uint8_t *b = NULL;
	int wrong = 0, sorted = 1;

	path_of(path, sizeof(path), "state");
	CHECK_EQ_INT(cnt_dedup_init(&d, 0), 0);
	/* keys 0..N-1 seen at 1000 + i/10; even ones with horizon 100, odd 5000 */
	for (unsigned i = 0; i < N; i++)
		cnt_dedup_check(&d, key_n(i), 1000 + i / 10, i % 2 ? 5000 : 100);
	/* clock 1299: the even keys of i < 2000 (expired by 1000 + i/10 + 100
	 * <= 1299) are left out, i.e. 1000 of 1500 even keys */
	CHECK_EQ_INT(d.clock_s, 1000 + (N - 1) / 10);
	CHECK_EQ_INT(save_to(&d, path, &kept), 0);
	CHECK_EQ_INT(kept, N / 2 + 500);
	n = read_file(path, &b);
	CHECK(b != NULL);
	if (b == NULL)
		return;
	CHECK_EQ_INT(n, 24 + 16 * kept + 8);
	CHECK(memcmp(b, "CNTDDUP1", 8) == 0);
	CHECK_EQ_INT(le(b + 8, 8), d.clock_s);
	CHECK_EQ_INT(le(b + 16, 8), kept);
	CHECK_EQ_INT(le(b + n - 8, 8), XXH64(b, n - 8, 0));
	for (size_t i = 1; i < kept; i++) {
		const uint8_t *p = b + 24 + 16 * (i - 1), *q = p + 16;

		if (!(le(p, 8) < le(q, 8) || (le(p, 8) == le(q, 8) && le(p + 8, 4) < le(q + 8, 4))))
			sorted = 0;
	}
	CHECK(sorted);
	for (size_t i = 0; i < kept; i++)
		CHECK(le(b + 24 + 16 * i + 12, 4) > d.clock_s);
	/* load: the same answers at the clock, for every key */
	CHECK_EQ_INT(cnt_dedup_load(&e, path, 0, 0, &err), 0);
	CHECK_EQ_INT(e.count, kept);
	CHECK_EQ_INT(e.clock_s, d.clock_s);
	for (unsigned i = 0; i < N; i++) {
		int want = cnt_dedup_check(&d, key_n(i), d.clock_s, 1);
		int got = cnt_dedup_check(&e, key_n(i), e.clock_s, 1);

		wrong += want != got;
	}
	CHECK_EQ_INT(wrong, 0);
	/* saving what was loaded (nothing new) gives the same bytes back */
	{
		char p2[128];
		uint8_t *b2 = NULL;
		size_t n2, kept2 = 0;
		cnt_dedup f;

		path_of(p2, sizeof(p2), "state2");
		CHECK_EQ_INT(cnt_dedup_load(&f, path, 10, 0, &err), 0);
		CHECK_EQ_INT(save_to(&f, p2, &kept2), 0);
		n2 = read_file(p2, &b2);
		CHECK(n2 == n && b2 && memcmp(b, b2, n) == 0);
		free(b2);
		cnt_dedup_release(&f);
	}
	free(b);
	cnt_dedup_release(&d);
	cnt_dedup_release(&e);
}

static int dkey_less(const void *x, const void *y)
{
	const cnt_dkey *a = x, *b = y;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

/* The saved order comes from the slot order (home = top bits of lo) and
 * an insertion sort: keys whose probing wrapped past the last slot, long
 * clusters of one home (past the insertion budget: the radix fallback),
 * and equal lo halves must all come out sorted, as qsort sorts them. */
static void test_save_order(void)
{
	enum { N = 2600 };
	static cnt_dkey keys[N];
	char path[128];
	uint64_t seed = 7;
	uint8_t *b = NULL;
	int bad = 0;

	path_of(path, sizeof(path), "order");
	for (int round = 0; round < 4; round++) {
		cnt_dedup d;
		size_t kept = 0, n;

		CHECK_EQ_INT(cnt_dedup_init(&d, 0), 0);
		for (unsigned i = 0; i < N; i++) {
			uint64_t r = xorshift(&seed);

			if (round == 0)          /* crowded at the top: they wrap */
				keys[i].lo = (i % 3 ? ~(uint64_t)0 << 52 : 0) | (r >> 12);
			else if (round == 1)     /* one home for all: a long cluster */
				keys[i].lo = (~(uint64_t)0 << 40) | (r >> 24);
			else if (round == 2)     /* equal lo, hi differs */
				keys[i].lo = (uint64_t)(i / 4) << 50;
			else                     /* uniform: a few may wrap */
				keys[i].lo = r;
			keys[i].hi = (uint32_t)(r | 1);
			cnt_dedup_check(&d, keys[i], 100, 1000);
		}
		qsort(keys, N, sizeof(keys[0]), dkey_less);
		CHECK_EQ_INT(save_to(&d, path, &kept), 0);
		CHECK_EQ_INT(kept, N);
		n = read_file(path, &b);
		CHECK(b != NULL && n == 24 + 16 * (size_t)N + 8);
		for (unsigned i = 0; b && i < N && n == 24 + 16 * (size_t)N + 8; i++)
			bad += le(b + 24 + 16 * i, 8) != keys[i].lo || le(b + 32 + 16 * i, 4) != keys[i].hi;
		CHECK_EQ_INT(bad, 0);
		free(b);
		b = NULL;
		cnt_dedup_release(&d);
	}
}

static void test_empty_and_missing(void)
{
	char path[128];
	cnt_dedup d;
	cnt_err err;
	size_t kept = 1;

	path_of(path, sizeof(path), "nonexistent");
	CHECK_EQ_INT(cnt_dedup_load(&d, path, 100, 1, &err), 0);   /* missing_ok */
	CHECK_EQ_INT(d.count, 0);
	CHECK_EQ_INT(d.clock_s, 0);
	cnt_dedup_release(&d);
	CHECK_EQ_INT(cnt_dedup_load(&d, path, 100, 0, &err), -1);
	CHECK(strstr(err.msg, "cannot open") != NULL && strstr(err.msg, "nonexistent") != NULL);
	/* an empty table saves as a 32-byte file and loads back */
	path_of(path, sizeof(path), "empty");
	CHECK_EQ_INT(cnt_dedup_init(&d, 0), 0);
	CHECK_EQ_INT(save_to(&d, path, &kept), 0);
	CHECK_EQ_INT(kept, 0);
	cnt_dedup_release(&d);
	{
		struct stat st;

		CHECK(stat(path, &st) == 0 && st.st_size == 32);
	}
	CHECK_EQ_INT(cnt_dedup_load(&d, path, 0, 0, &err), 0);
	CHECK_EQ_INT(d.count, 0);
	cnt_dedup_release(&d);
}

/* Loads path after damage; it must fail with a message containing what. */
static void expect_refused(const char *path, const char *what)
{
	cnt_dedup d;
	cnt_err err;

	err.msg[0] = 0;
	if (cnt_dedup_load(&d, path, 0, 1, &err) == 0) {
		fprintf(stderr, "damaged state '%s' was loaded (expected '%s')\n", path, what);
		CHECK(0);
		cnt_dedup_release(&d);
		return;
	}
	if (strstr(err.msg, what) == NULL)
		fprintf(stderr, "message \"%s\" lacks \"%s\"\n", err.msg, what);
	CHECK(strstr(err.msg, what) != NULL);
	CHECK(strstr(err.msg, path) != NULL);
}

static void test_corrupt(void)
{
	char path[128], bad[128];
	cnt_dedup d;
	size_t kept, n;
	uint8_t *b = NULL;

	path_of(path, sizeof(path), "good");
	path_of(bad, sizeof(bad), "bad");
	CHECK_EQ_INT(cnt_dedup_init(&d, 0), 0);
	for (unsigned i = 0; i < 10; i++)
		cnt_dedup_check(&d, key_n(i), 100, 1000);
	CHECK_EQ_INT(save_to(&d, path, &kept), 0);
	cnt_dedup_release(&d);
	n = read_file(path, &b);
	CHECK_EQ_INT(n, 32 + 16 * 10);
	if (b == NULL || n != 32 + 16 * 10)
		return;
	/* every single-bit flip anywhere is caught (magic, count, slot, trailer) */
	for (size_t i = 0; i < n; i++) {
		b[i] ^= 0x10;
		write_file(bad, b, n);
		expect_refused(bad, i < 8 ? "CNTDDUP1" : "corrupt");
		b[i] ^= 0x10;
	}
	/* truncated anywhere */
	for (size_t len = 0; len < n; len += 7) {
		write_file(bad, b, len);
		expect_refused(bad, "corrupt");
	}
	/* a correct checksum over unsorted slots: not a file we wrote */
	{
		uint8_t tmp[16];

		memcpy(tmp, b + 24, 16);
		memcpy(b + 24, b + 40, 16);
		memcpy(b + 40, tmp, 16);
		{
			uint64_t h = XXH64(b, n - 8, 0);

			for (int i = 0; i < 8; i++)
				b[n - 8 + i] = (uint8_t)(h >> (8 * i));
		}
		write_file(bad, b, n);
		expect_refused(bad, "corrupt");
	}
	/* a directory is not a state file */
	expect_refused(tmpdir, "not a regular file");
	free(b);
}

/* Not files: "" and "-", a device, a directory and a FIFO (with no
 * writer: the load must not wait for one) are refused, also when
 * missing_ok. */
static void test_not_files(void)
{
	char path[128];

	expect_refused("-", "not a file name");
	expect_refused("", "not a file name");
	expect_refused("/dev/null", "not a regular file");
	/* a pipe or a terminal, or a file: then a link under /dev */
	expect_refused("/dev/stdin", "not a regular file");
	/* a directory */
	expect_refused(tmpdir, "not a regular file");
	path_of(path, sizeof(path), "fifo");
	CHECK_EQ_INT(mkfifo(path, 0600), 0);
	expect_refused(path, "not a regular file");
	CHECK_EQ_INT(unlink(path), 0);
}

/* From memory: every count checked against the size before anything is
 * allocated for it; a NULL path is an empty state. */
static void test_load_mem_bounds(void)
{
	uint8_t b[32 + 16 + 8];
	cnt_dedup d;
	cnt_err err;
	uint64_t h;

	memset(b, 0, sizeof(b));
	memcpy(b, "CNTDDUP1", 8);
	/* a count of 2^60 keys in a file of one slot, checksum right */
	b[23] = 0x10;
	h = XXH64(b, sizeof(b) - 8, 0);
	for (int i = 0; i < 8; i++)
		b[sizeof(b) - 8 + i] = (uint8_t)(h >> (8 * i));
	CHECK_EQ_INT(cnt_dedup_load_mem(&d, b, sizeof(b), "huge", 0, &err), -1);
	CHECK(strstr(err.msg, "corrupt") != NULL && strstr(err.msg, "huge") != NULL);
	CHECK(d.slots == NULL);
	/* the same with a count that wraps 32 + 16 n around to the size */
	memset(b + 16, 0, 8);
	b[23] = 0x10;
	b[16] = 1;
	CHECK_EQ_INT(cnt_dedup_load_mem(&d, b, sizeof(b), "wrap", 0, &err), -1);
	/* one all-zero key: the mark of an empty slot, never written */
	memset(b + 16, 0, 8);
	b[16] = 1;
	h = XXH64(b, sizeof(b) - 8, 0);
	for (int i = 0; i < 8; i++)
		b[sizeof(b) - 8 + i] = (uint8_t)(h >> (8 * i));
	CHECK_EQ_INT(cnt_dedup_load_mem(&d, b, sizeof(b), "zero", 0, &err), -1);
	CHECK(strstr(err.msg, "corrupt") != NULL);
	/* fewer bytes than a magic */
	CHECK_EQ_INT(cnt_dedup_load_mem(&d, b, 3, "short", 0, &err), -1);
	CHECK(strstr(err.msg, "corrupt") != NULL);
	/* no path: an empty state sized for the keys to come */
	CHECK_EQ_INT(cnt_dedup_load(&d, NULL, 5000, 0, &err), 0);
	CHECK_EQ_INT(d.count, 0);
	CHECK(d.mask + 1 >= 5000 / 3 * 4);
	cnt_dedup_release(&d);
	/* an expected count no table can hold is refused, not looped on */
	CHECK_EQ_INT(cnt_dedup_init(&d, SIZE_MAX), -1);
	cnt_dedup_release(&d);
}

int main(void)
{
	char cmd[128];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_dedup.XXXXXX");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_key);
	RUN(test_expiry_boundary);
	RUN(test_reference);
	RUN(test_growth);
	RUN(test_save_load);
	RUN(test_save_order);
	RUN(test_empty_and_missing);
	RUN(test_corrupt);
	RUN(test_not_files);
	RUN(test_load_mem_bounds);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return unit_report("test_dedup");
}
