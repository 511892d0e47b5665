/*
 * test_view.c - the ranked view index (view/view.h): its layout read back,
 * the checks made on every open (checksums, sizes, histogram, description)
 * and by verify (the data checksum and the structure), bounds on damaged
 * entries and slots, and the view directory.
 *
 * Damage comes two ways: bytes changed at random, which the checksums
 * must catch, and forged files whose checksums were recomputed over the
 * damage (reseal() below, with libxxhash as an independent hasher), which
 * the structural checks must catch.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "unit.h"
#include "view_fixture.h"

static char tmpdir[] = "/tmp/test_view.XXXXXX";

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void wr64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Offsets of an image's parts, from its header. */
typedef struct parts {
	size_t P, entries, slots, edges, counts, pool, len;
	uint64_t n, nbins, H;
} parts;

static parts parts_of(const uint8_t *b)
{
	parts p;
	uint64_t d = rd64(b + 40);

	p.n = rd64(b + 48);
	p.nbins = rd64(b + 64);
	p.H = rd64(b + 80);
	p.P = 88 + d + (8 - d % 8) % 8;
	p.entries = p.P;
	p.slots = p.entries + 32 * p.n;
	p.edges = p.slots + 4 * p.H;
	p.counts = p.edges + 8 * (p.nbins + 1);
	p.pool = p.counts + 8 * p.nbins;
	p.len = rd64(b + 32);
	return p;
}

/* Recomputes all three checksums, as a forger would, over the sections
 * where the untouched file has them (a forged size must not make this
 * test read outside the image). */
static parts good_parts;

static void reseal(uint8_t *b)
{
	parts p = good_parts;

	wr64(b + 16, XXH3_64bits(b + p.edges, p.pool - p.edges));
	wr64(b + 24, XXH3_64bits(b + p.P, p.len - p.P));
	wr64(b + 8, XXH3_64bits(b + 16, p.P - 16));
}

static uint8_t *copy_of(const uint8_t *img, size_t len)
{
	uint8_t *c = NULL;

	if (posix_memalign((void **)&c, 64, len) != 0)
		abort();
	memcpy(c, img, len);
	return c;
}

/* Opening img (len bytes) fails with a message holding want. */
static int refused(const uint8_t *img, size_t len, const char *want)
{
	cnt_view v;
	cnt_err err;

	if (cnt_view_open_mem(&v, img, len, "f/index.bin", 0, &err) == 0) {
		cnt_view_close(&v);
		fprintf(stderr, "opened, expected '%s'\n", want);
		return 0;
	}
	if (strstr(err.msg, want) == NULL || strstr(err.msg, "view 'f/index.bin' is corrupt: ") != err.msg) {
		fprintf(stderr, "message '%s', expected '%s'\n", err.msg, want);
		return 0;
	}
	return 1;
}

static void test_layout_and_lookups(void)
{
	cnt_view v;
	cnt_err err;
	uint8_t *img;
	const char *name;
	size_t len = 0;

	CHECK_EQ_INT(fx_open_cap3(&v, &img, &err), 0);
	if (img == NULL)
		return;
	CHECK(memcmp(img, "CNTVIEW2", 8) == 0);
	CHECK_EQ_INT(v.n, 7);
	CHECK_EQ_INT(v.head, 3);
	CHECK_EQ_INT(v.nbins, 10);
	CHECK_EQ_INT(v.nslots, 16);   /* the smallest power of two with 7 <= 3H/4 */
	CHECK_EQ_INT(v.pool_len, 14);
	CHECK_EQ_INT(v.map_len, rd64(img + 32));
	CHECK_EQ_STR(v.desc.board, "b");
	CHECK_EQ_INT(v.desc.members, 7);
	CHECK_EQ_INT(v.desc.head, 3);
	CHECK_EQ_INT(v.desc.bins, 10);
	for (int i = 0; i < 7; i++) {
		CHECK_EQ_INT(cnt_view_find(&v, fx_cap3[i].name, 2), i);
		CHECK_EQ_INT(cnt_view_name(&v, (uint64_t)i, &name, &len, &err), 0);
		CHECK(len == 2 && memcmp(name, fx_cap3[i].name, 2) == 0);
		CHECK_EQ_INT(v.entries[i].value, fx_cap3[i].value);
		CHECK_EQ_INT(v.entries[i].rank, i + 1);
	}
	CHECK_EQ_INT(cnt_view_find(&v, "p8", 2), -1);
	CHECK_EQ_INT(cnt_view_find(&v, "p", 1), -1);
	CHECK_EQ_INT(cnt_view_find(&v, "", 0), -1);
	CHECK_EQ_INT(cnt_view_find(&v, "p1x", 2), 0);   /* n bytes only */
	CHECK_EQ_INT(cnt_view_name(&v, 7, &name, &len, &err), -1);
	/* bins: the last whose lower edge is <= value */
	CHECK_EQ_INT(cnt_view_bin(&v, 75), 6);
	CHECK_EQ_INT(cnt_view_bin(&v, 70), 6);
	CHECK_EQ_INT(cnt_view_bin(&v, 69), 5);
	CHECK_EQ_INT(cnt_view_bin(&v, 100), 9);
	CHECK_EQ_INT(cnt_view_bin(&v, -5), 0);
	CHECK_EQ_INT(cnt_view_bin(&v, 5000), 9);
	CHECK_EQ_INT(cnt_view_verify(&v, NULL, &err), 0);
	cnt_view_close(&v);
	cnt_view_close(&v);   /* twice is harmless */
	free(img);
}

static void test_every_truncation_and_flip_refused(void)
{
	cnt_view v;
	cnt_err err;
	uint8_t *img, *c;
	parts p;
	size_t len = 0;
	int ok = 1;

	if (fx_open_cap3(&v, &img, &err) != 0)
		return;
	len = v.map_len;
	cnt_view_close(&v);
	p = good_parts = parts_of(img);
	for (size_t cut = 0; cut < len; cut++)
		ok &= refused(img, cut, "");
	CHECK(ok);
	/* every bit of the header, the description and the histogram */
	c = copy_of(img, len);
	for (size_t off = 0; off < len; off++) {
		if (off >= p.P && off < p.edges)
			continue;
		if (off >= p.pool)
			continue;
		for (int bit = 0; bit < 8; bit++) {
			c[off] ^= (uint8_t)(1 << bit);
			if (!refused(c, len, "")) {
				fprintf(stderr, "offset %zu bit %d opened\n", off, bit);
				ok = 0;
			}
			c[off] ^= (uint8_t)(1 << bit);
		}
	}
	CHECK(ok);
	/* in the entries, slots and names a flip opens, and verify finds it */
	for (size_t off = p.P; off < len; off++) {
		if (off >= p.edges && off < p.pool)
			continue;
		c[off] ^= 0x40;
		if (cnt_view_open_mem(&v, c, len, "f/index.bin", 0, &err) == 0) {
			if (cnt_view_verify(&v, NULL, &err) == 0 || strstr(err.msg, "data checksum mismatch") == NULL) {
				fprintf(stderr, "offset %zu: verify said '%s'\n", off, err.msg);
				ok = 0;
			}
			cnt_view_close(&v);
		} else {
			ok = 0;
		}
		c[off] ^= 0x40;
	}
	CHECK(ok);
	free(c);
	free(img);
}

static void test_forged_headers_refused(void)
{
	cnt_view v;
	cnt_err err;
	uint8_t *img, *c;
	parts p;
	size_t len = 0;

	if (fx_open_cap3(&v, &img, &err) != 0)
		return;
	len = v.map_len;
	cnt_view_close(&v);
	p = good_parts = parts_of(img);
#define FORGE(off, val, want) do { \
		c = copy_of(img, len); \
		wr64(c + (off), (val)); \
		reseal(c); \
		CHECK(refused(c, len, want)); \
		free(c); \
	} while (0)
	FORGE(48, 8, "sections add up");                       /* n */
	FORGE(48, UINT64_C(1) << 40, "member count");
	FORGE(48, 0xffffffff, "member count");
	FORGE(56, 8, "head 8 is larger than the member count 7");
	FORGE(64, 0, "histogram bin count 0");
	FORGE(64, (1u << 17) + 1, "histogram bin count");
	FORGE(80, 24, "name slot count 24");                   /* not a power of two */
	FORGE(80, 4, "name slot count 4");                     /* not more than n */
	FORGE(80, UINT64_C(1) << 40, "name slot count");
	FORGE(72, 15, "sections add up");                      /* pool */
	FORGE(72, UINT64_MAX, "name pool size");
	FORGE(32, len + 8, "the header gives");
	FORGE(40, UINT64_MAX - 3, "description length");
	FORGE(40, CNT_VIEWDESC_MAX + 8, "description length");
	/* histogram: edges out of order, counts that do not add up */
	c = copy_of(img, len);
	wr64(c + p.edges + 8, 1000);
	reseal(c);
	CHECK(refused(c, len, "histogram edges 1 and 2 are not in order"));
	free(c);
	c = copy_of(img, len);
	wr64(c + p.counts, 0);
	reseal(c);
	CHECK(refused(c, len, "histogram counts add up to 6, not the 7 members"));
	wr64(c + p.counts, 2);
	reseal(c);
	CHECK(refused(c, len, "histogram counts add up to more than the 7 members"));
	wr64(c + p.counts, UINT64_MAX);
	reseal(c);
	CHECK(refused(c, len, "histogram counts add up to more than the 7 members"));
	free(c);
	/* a description that disagrees with the header, or is not one */
	c = copy_of(img, len);
	{
		char *m = memmem(c + 88, p.P - 88, "\"members\":7", 11);

		CHECK(m != NULL);
		if (m)
			m[10] = '6';
		reseal(c);
		CHECK(refused(c, len, "the description's members, head or bins differ from the header's"));
		if (m)
			m[0] = '}';
		reseal(c);
		CHECK(refused(c, len, "description: not JSON"));
	}
	free(c);
	/* the checksums themselves */
	c = copy_of(img, len);
	c[8] ^= 1;
	CHECK(refused(c, len, "header checksum mismatch"));
	free(c);
	c = copy_of(img, len);
	c[16] ^= 1;
	wr64(c + 8, XXH3_64bits(c + 16, p.P - 16));
	CHECK(refused(c, len, "histogram checksum mismatch"));
	free(c);
	/* a forged header opens with CNT_VIEW_NO_CHECKSUMS only as far as
	 * the other checks allow */
	c = copy_of(img, len);
	c[8] ^= 1;
	CHECK_EQ_INT(cnt_view_open_mem(&v, c, len, "f", CNT_VIEW_NO_CHECKSUMS, &err), 0);
	cnt_view_close(&v);
	wr64(c + 48, 9);
	CHECK_EQ_INT(cnt_view_open_mem(&v, c, len, "f", CNT_VIEW_NO_CHECKSUMS, &err), -1);
	free(c);
	/* the older format is named */
	c = copy_of(img, len);
	c[7] = '1';
	CHECK(refused(c, len, "index format CNTVIEW1, this cnt reads CNTVIEW2"));
	c[0] = 'X';
	CHECK(refused(c, len, "not a view index (bad magic)"));
	free(c);
	/* an unaligned image is refused, not read */
	if (posix_memalign((void **)&c, 64, len + 1) != 0)
		abort();
	memcpy(c + 1, img, len);
	CHECK_EQ_INT(cnt_view_open_mem(&v, c + 1, len, "f", 0, &err), -1);
	free(c);
	free(img);
#undef FORGE
}

static void test_damaged_entries_and_slots(void)
{
	cnt_view v;
	cnt_err err;
	uint8_t *img, *c;
	parts p;
	size_t len = 0;
	const char *name;
	size_t nl;

	if (fx_open_cap3(&v, &img, &err) != 0)
		return;
	len = v.map_len;
	cnt_view_close(&v);
	p = good_parts = parts_of(img);
	c = copy_of(img, len);
	/* entry 1: a name offset far past the pool; entry 2: a length that
	 * wraps offset + length around */
	wr64(c + p.entries + 32 + 16, UINT64_C(1) << 40);
	wr64(c + p.entries + 64 + 16, 2);
	memcpy(c + p.entries + 64 + 24, &(uint32_t){UINT32_MAX}, 4);
	CHECK_EQ_INT(cnt_view_open_mem(&v, c, len, "f/index.bin", 0, &err), 0);
	CHECK_EQ_INT(cnt_view_name(&v, 1, &name, &nl, &err), -1);
	CHECK_EQ_STR(err.msg, "view 'f/index.bin' is corrupt: entry 1: its name (offset 1099511627776, length 2) lies "
		"outside the 14-byte name pool; rebuild it with cnt-project");
	CHECK_EQ_INT(cnt_view_name(&v, 2, &name, &nl, &err), -1);
	CHECK_EQ_INT(cnt_view_find(&v, "p2", 2), -1);   /* behind the damage: not found, no read */
	CHECK_EQ_INT(cnt_view_find(&v, "p4", 2), 3);
	CHECK_EQ_INT(cnt_view_name(&v, 0, &name, &nl, &err), 0);
	CHECK_EQ_INT(cnt_view_verify(&v, NULL, &err), -1);
	cnt_view_close(&v);
	/* resealed, verify names the first damaged entry */
	reseal(c);
	CHECK_EQ_INT(cnt_view_open_mem(&v, c, len, "f/index.bin", 0, &err), 0);
	CHECK_EQ_INT(cnt_view_verify(&v, NULL, &err), -1);
	CHECK(strstr(err.msg, "entry 1: its name") != NULL);
	cnt_view_close(&v);
	free(c);
	/* every slot full of positions past the entries: lookups end */
	c = copy_of(img, len);
	for (uint64_t s = 0; s < p.H; s++)
		memcpy(c + p.slots + 4 * s, &(uint32_t){1000}, 4);
	CHECK_EQ_INT(cnt_view_open_mem(&v, c, len, "f", 0, &err), 0);
	CHECK_EQ_INT(cnt_view_find(&v, "p1", 2), -1);
	reseal(c);
	cnt_view_close(&v);
	CHECK_EQ_INT(cnt_view_open_mem(&v, c, len, "f", 0, &err), 0);
	CHECK_EQ_INT(cnt_view_verify(&v, NULL, &err), -1);
	CHECK(strstr(err.msg, "name slot 0 points past the entries") != NULL);
	cnt_view_close(&v);
	free(c);
	free(img);
}

/* verify's structural checks, each on a forged (resealed) file. */
static void test_verify_structure(void)
{
	cnt_view v;
	cnt_err err;
	uint8_t *img, *c;
	parts p;
	size_t len = 0;

	if (fx_open_cap3(&v, &img, &err) != 0)
		return;
	len = v.map_len;
	cnt_view_close(&v);
	p = good_parts = parts_of(img);
#define VERIFY_SAYS(want) do { \
		reseal(c); \
		CHECK_EQ_INT(cnt_view_open_mem(&v, c, len, "f", 0, &err), 0); \
		CHECK_EQ_INT(cnt_view_verify(&v, NULL, &err), -1); \
		if (strstr(err.msg, want) == NULL) \
			fprintf(stderr, "verify said '%s', expected '%s'\n", err.msg, want); \
		CHECK(strstr(err.msg, want) != NULL); \
		cnt_view_close(&v); \
		free(c); \
	} while (0)
	/* p2 and p3 swap values: out of rank order */
	c = copy_of(img, len);
	wr64(c + p.entries + 32, 80);
	wr64(c + p.entries + 64, 90);
	VERIFY_SAYS("entries 1 and 2 are not in rank order");
	/* a wrong rank */
	c = copy_of(img, len);
	memcpy(c + p.entries + 32 * 4 + 28, &(uint32_t){4}, 4);
	VERIFY_SAYS("entry 4 has rank 4, the numbering gives 5");
	/* p5 70 -> 72: still in order, in its bin; p6 40 -> 45: same bin;
	 * p7 10 -> 35: another bin than counted */
	c = copy_of(img, len);
	wr64(c + p.entries + 32 * 6, 35);
	VERIFY_SAYS("histogram bin 0 counts 1 members, the entries 0");
	/* a value past the histogram */
	c = copy_of(img, len);
	wr64(c + p.entries, 500);
	VERIFY_SAYS("entry 0: its value lies outside the histogram");
	/* two entries with one name: the second is not found by it */
	c = copy_of(img, len);
	wr64(c + p.entries + 32 + 16, 0);
	VERIFY_SAYS("entry 1 is not found by its name");
	/* and the image as written verifies */
	CHECK_EQ_INT(cnt_view_open_mem(&v, img, len, "f", 0, &err), 0);
	CHECK_EQ_INT(cnt_view_verify(&v, NULL, &err), 0);
	cnt_view_close(&v);
	free(img);
#undef VERIFY_SAYS
}

/* Ranks by each numbering, and ties with achiever times. */
static void test_numbering_verified(void)
{
	static const struct {
		cnt_tie_break rule;
		cnt_rank_numbering num;
		const fx_member *m;
		uint32_t ranks[5];
	} cases[] = {
		{CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, fx_rk, {1, 2, 2, 4, 5}},
		{CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_DENSE, fx_rk, {1, 2, 2, 3, 4}},
		{CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_ORDINAL, fx_rk, {1, 2, 3, 4, 5}},
		{CNT_TIE_MEMBER_REF_ASC, CNT_RANK_COMPETITION, fx_rk_ref, {1, 2, 2, 2, 5}},
		{CNT_TIE_MEMBER_REF_ASC, CNT_RANK_DENSE, fx_rk_ref, {1, 2, 2, 2, 3}},
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		cnt_viewdesc d = fx_desc(0, cases[k].rule, cases[k].num, 10);
		cnt_view v;
		cnt_err err;
		uint8_t *img;
		size_t len = 0;

		CHECK_EQ_INT(fx_image(&d, cases[k].m, 5, 5, fx_rk_edges, 3, &img, &len, &err), 0);
		if (img == NULL)
			continue;
		CHECK_EQ_INT(cnt_view_open_mem(&v, img, len, "f", 0, &err), 0);
		for (int i = 0; i < 5; i++)
			CHECK_EQ_INT(v.entries[i].rank, cases[k].ranks[i]);
		CHECK_EQ_INT(cnt_view_verify(&v, NULL, &err), 0);
		cnt_view_close(&v);
		free(img);
	}
}

static void test_empty_view(void)
{
	cnt_viewdesc d = fx_desc(0, CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, 10);
	static const int64_t edges[] = {0, 1};
	cnt_view v;
	cnt_err err;
	uint8_t *img;
	size_t len = 0;

	CHECK_EQ_INT(fx_image(&d, NULL, 0, 0, edges, 1, &img, &len, &err), 0);
	if (img == NULL)
		return;
	CHECK_EQ_INT(cnt_view_open_mem(&v, img, len, "f", 0, &err), 0);
	CHECK_EQ_INT(v.n, 0);
	CHECK_EQ_INT(v.nslots, 2);
	CHECK_EQ_INT(cnt_view_find(&v, "a", 1), -1);
	CHECK_EQ_INT(cnt_view_verify(&v, NULL, &err), 0);
	cnt_view_close(&v);
	free(img);
}

/* The directory: write, open by (board, scope, version), verify with
 * view.avro, identity checks. */
static void test_viewdir_write_open_verify(void)
{
	cnt_viewdesc d = fx_desc(0, CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, 3);
	cnt_view_entry e[7];
	uint64_t counts[10] = {1, 0, 0, 1, 0, 0, 2, 1, 1, 1};
	char pool[32], root[256], sdir[300], vdir[400], path[500];
	cnt_view_build vb;
	cnt_view v;
	cnt_err err;
	int version = 0, frozen = -1;

	for (int i = 0; i < 7; i++) {
		e[i].value = fx_cap3[i].value;
		e[i].last_event_time = fx_cap3[i].last;
		e[i].name_off = (uint64_t)(2 * i);
		e[i].name_len = 2;
		e[i].rank = (uint32_t)i + 1;
		memcpy(pool + 2 * i, fx_cap3[i].name, 2);
	}
	vb = (cnt_view_build){&d, 7, 3, e, pool, 14, 10, fx_cap3_edges, counts, NULL, NULL, 0};
	snprintf(root, sizeof(root), "%s/views", tmpdir);
	CHECK_EQ_INT(cnt_viewdir_path(sdir, sizeof(sdir), root, "b", "global"), 0);
	CHECK_EQ_INT(cnt_viewdir_next(sdir, &version, &err), 0);
	CHECK_EQ_INT(version, 1);
	CHECK_EQ_INT(cnt_viewdir_write(sdir, 1, &vb, &err), 0);
	CHECK_EQ_INT(cnt_viewdir_publish(sdir, 1, &err), 0);
	version = 0;
	CHECK_EQ_INT(cnt_viewdir_open(&v, root, "b", "global", &version, vdir, sizeof(vdir), &frozen, &err), 0);
	CHECK_EQ_INT(version, 1);
	CHECK_EQ_INT(frozen, 0);
	CHECK_EQ_INT(v.n, 7);
	CHECK_EQ_INT(cnt_view_verify(&v, vdir, &err), 0);
	cnt_view_close(&v);
	/* version 2 written with a description saying version 1 */
	CHECK_EQ_INT(cnt_viewdir_write(sdir, 2, &vb, &err), 0);
	version = 2;
	CHECK_EQ_INT(cnt_viewdir_open(&v, root, "b", "global", &version, vdir, sizeof(vdir), &frozen, &err), -1);
	CHECK(strstr(err.msg, "is corrupt: it describes version 1 of board 'b' scope 'global'") != NULL);
	/* another board's or scope's name */
	snprintf(path, sizeof(path), "%s/b/global", root);
	CHECK_EQ_INT(cnt_viewdir_freeze(path, 1, &err), 0);
	version = 1;
	CHECK_EQ_INT(cnt_viewdir_open(&v, root, "b", "global", &version, vdir, sizeof(vdir), &frozen, &err), 0);
	CHECK_EQ_INT(frozen, 1);
	cnt_view_close(&v);
	d.board = "other";
	CHECK_EQ_INT(cnt_viewdir_write(sdir, 3, &vb, &err), 0);
	version = 3;
	CHECK_EQ_INT(cnt_viewdir_open(&v, root, "b", "global", &version, vdir, sizeof(vdir), &frozen, &err), -1);
	CHECK(strstr(err.msg, "of board 'other'") != NULL);
	/* no published view */
	version = 0;
	CHECK_EQ_INT(cnt_viewdir_open(&v, root, "nope", "global", &version, vdir, sizeof(vdir), &frozen, &err), -1);
	CHECK(strstr(err.msg, "has no published view") != NULL);
	/* a description the writer refuses leaves nothing behind */
	d.scope = "not-global";
	CHECK_EQ_INT(cnt_viewdir_write(sdir, 4, &vb, &err), -1);
	CHECK(strstr(err.msg, "$.scope") != NULL);
	snprintf(path, sizeof(path), "%s/v000004", sdir);
	CHECK(access(path, F_OK) != 0);
}

static void test_viewdir_publish_freeze_scopes(void)
{
	cnt_viewdesc d = fx_desc(0, CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, 3);
	static const int64_t edges[] = {0, 1};
	static const uint64_t counts[] = {0};
	char sdir[256], buf[128], link[300];
	cnt_view_build vb = {&d, 0, 0, NULL, "", 0, 1, edges, counts, NULL, NULL, 0};
	cnt_err err;
	int version = -1;
	char **dirs = NULL;
	size_t n = 0;
	ssize_t ln;

	snprintf(sdir, sizeof(sdir), "%s/views/pub/global", tmpdir);
	CHECK_EQ_INT(cnt_viewdir_next(sdir, &version, &err), 0);
	CHECK_EQ_INT(cnt_viewdir_current(sdir, &version, &err), 0);
	CHECK_EQ_INT(version, 0);   /* nothing published yet */
	CHECK_EQ_INT(cnt_viewdir_publish(sdir, 1, &err), -1);
	CHECK(strstr(err.msg, "no version 1") != NULL);
	CHECK_EQ_INT(cnt_viewdir_write(sdir, 1, &vb, &err), 0);
	CHECK_EQ_INT(cnt_viewdir_write(sdir, 2, &vb, &err), 0);
	CHECK_EQ_INT(cnt_viewdir_publish(sdir, 2, &err), 0);
	CHECK_EQ_INT(cnt_viewdir_current(sdir, &version, &err), 0);
	CHECK_EQ_INT(version, 2);
	CHECK_EQ_INT(cnt_viewdir_publish(sdir, 1, &err), 0);
	CHECK_EQ_INT(cnt_viewdir_current(sdir, &version, &err), 0);
	CHECK_EQ_INT(version, 1);
	snprintf(link, sizeof(link), "%s/current", sdir);
	ln = readlink(link, buf, sizeof(buf) - 1);
	CHECK_EQ_INT(ln, 7);
	buf[ln > 0 ? ln : 0] = 0;
	CHECK_EQ_STR(buf, "v000001");   /* relative, so the tree can move */
	CHECK(!cnt_viewdir_frozen(sdir));
	CHECK_EQ_INT(cnt_viewdir_freeze(sdir, 1, &err), 0);
	CHECK(cnt_viewdir_frozen(sdir));
	CHECK_EQ_INT(cnt_viewdir_freeze(sdir, 1, &err), 0);   /* twice is fine */
	CHECK_EQ_INT(cnt_viewdir_freeze(sdir, 0, &err), 0);
	CHECK(!cnt_viewdir_frozen(sdir));
	CHECK_EQ_INT(cnt_viewdir_freeze(sdir, 0, &err), 0);
	/* a current link naming no version */
	unlink(link);
	CHECK_EQ_INT(symlink("elsewhere", link), 0);
	CHECK_EQ_INT(cnt_viewdir_current(sdir, &version, &err), -1);
	/* scopes of a board, sorted */
	snprintf(sdir, sizeof(sdir), "%s/views/pub/b", tmpdir);
	CHECK_EQ_INT(cnt_viewdir_next(sdir, &version, &err), 0);
	snprintf(sdir, sizeof(sdir), "%s/views/pub/a", tmpdir);
	CHECK_EQ_INT(cnt_viewdir_next(sdir, &version, &err), 0);
	snprintf(sdir, sizeof(sdir), "%s/views", tmpdir);
	CHECK_EQ_INT(cnt_viewdir_scopes(sdir, "pub", &dirs, &n, &err), 0);
	CHECK_EQ_INT(n, 3);
	if (n == 3) {
		CHECK(strstr(dirs[0], "/pub/a") != NULL);
		CHECK(strstr(dirs[1], "/pub/b") != NULL);
		CHECK(strstr(dirs[2], "/pub/global") != NULL);
	}
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	CHECK_EQ_INT(cnt_viewdir_scopes(sdir, "nope", &dirs, &n, &err), -1);
}

/* The error column (issue 11): written and read back, an old unique view
 * without it read at precision 14, a bound below -1 refused, and a
 * description and a column that disagree refused. */
static void test_error_column(void)
{
	static const int64_t errs[] = {5, 4, 0, -1, 3, 2, 1};
	cnt_viewdesc d = fx_desc(0, CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, 3);
	cnt_view v;
	cnt_err err;
	uint8_t *img = NULL, *bad;
	size_t len = 0;
	int64_t e;

	/* exact: no column, every answer exact */
	CHECK_EQ_INT(fx_image(&d, fx_cap3, 7, 3, fx_cap3_edges, 10, &img, &len, &err), 0);
	CHECK_EQ_INT(cnt_view_open_mem(&v, img, len, "f/index.bin", 0, &err), 0);
	CHECK_EQ_INT(cnt_view_error(&v, 0, &e, &err), CNT_VIEW_EXACT);
	CHECK_EQ_INT(e, 0);
	cnt_view_close(&v);
	free(img);
	/* unique, written before the column: value 100 at p = 14 gives 2 */
	d.counter_type = CNT_CTYPE_UNIQUE;
	CHECK_EQ_INT(fx_image(&d, fx_cap3, 7, 3, fx_cap3_edges, 10, &img, &len, &err), 0);
	CHECK_EQ_INT(cnt_view_open_mem(&v, img, len, "f/index.bin", 0, &err), 0);
	CHECK_EQ_INT(cnt_view_error(&v, 0, &e, &err), CNT_VIEW_ESTIMATE);
	CHECK_EQ_INT(e, 2);        /* ceil(2.0384 * 100 / 128) */
	CHECK_EQ_INT(cnt_view_value_error(&v, -1, 1000, &e, &err), CNT_VIEW_ESTIMATE);
	CHECK_EQ_INT(e, 16);
	cnt_view_close(&v);
	free(img);
	/* approx with the column */
	d.counter_type = CNT_CTYPE_APPROX;
	fx_errors = errs;
	CHECK_EQ_INT(fx_image(&d, fx_cap3, 7, 3, fx_cap3_edges, 10, &img, &len, &err), 0);
	fx_errors = NULL;
	CHECK_EQ_INT(cnt_view_open_mem(&v, img, len, "f/index.bin", 0, &err), 0);
	CHECK_EQ_INT(v.desc.errors, 1);
	CHECK_EQ_INT(v.desc.precision, 0);
	CHECK_EQ_INT(cnt_view_error(&v, 0, &e, &err), CNT_VIEW_ESTIMATE);
	CHECK_EQ_INT(e, 5);
	CHECK_EQ_INT(cnt_view_error(&v, 6, &e, &err), CNT_VIEW_ESTIMATE);
	CHECK_EQ_INT(e, 1);
	CHECK_EQ_INT(cnt_view_error(&v, 3, &e, &err), CNT_VIEW_UNKNOWN);
	CHECK_EQ_INT(cnt_view_value_error(&v, 1, 95, &e, &err), CNT_VIEW_ESTIMATE);
	CHECK_EQ_INT(e, 4);        /* the member's own */
	CHECK_EQ_INT(cnt_view_verify(&v, NULL, &err), 0);
	cnt_view_close(&v);
	/* a bound below -1: corrupt, on read and in verify */
	good_parts = parts_of(img);
	bad = copy_of(img, len);
	wr64(bad + len - 8, (uint64_t)-5);
	reseal(bad);
	CHECK_EQ_INT(cnt_view_open_mem(&v, bad, len, "f/index.bin", 0, &err), 0);
	CHECK_EQ_INT(cnt_view_error(&v, 6, &e, &err), -1);
	CHECK(strstr(err.msg, "entry 6: error bound -5 is negative") != NULL);
	CHECK_EQ_INT(cnt_view_verify(&v, NULL, &err), -1);
	cnt_view_close(&v);
	free(bad);
	/* the column cut off, its length and checksums forged: the
	 * description announces a column the file does not have */
	bad = copy_of(img, len - 56);
	wr64(bad + 32, len - 56);
	good_parts.len = len - 56;
	reseal(bad);
	CHECK(refused(bad, len - 56, "(the description announces an error column)"));
	free(bad);
	free(img);
	/* a unique view with the column carries its precision */
	d.counter_type = CNT_CTYPE_UNIQUE;
	fx_errors = errs;
	fx_precision = 16;
	CHECK_EQ_INT(fx_image(&d, fx_cap3, 7, 3, fx_cap3_edges, 10, &img, &len, &err), 0);
	fx_errors = NULL;
	fx_precision = 0;
	CHECK_EQ_INT(cnt_view_open_mem(&v, img, len, "f/index.bin", 0, &err), 0);
	CHECK_EQ_INT(v.desc.precision, 16);
	CHECK_EQ_INT(cnt_view_value_error(&v, -1, 1000, &e, &err), CNT_VIEW_ESTIMATE);
	CHECK_EQ_INT(e, 8);
	cnt_view_close(&v);
	free(img);
	/* an exact view cannot carry a column */
	d.counter_type = CNT_CTYPE_EXACT;
	fx_errors = errs;
	CHECK_EQ_INT(fx_image(&d, fx_cap3, 7, 3, fx_cap3_edges, 10, &img, &len, &err), -1);
	fx_errors = NULL;
	CHECK(strstr(err.msg, "$.errors: only a view of an approx or unique counter") != NULL);
}

static void test_viewdir_path(void)
{
	char b[64];

	CHECK_EQ_INT(cnt_viewdir_path(b, sizeof(b), "V", "board", "eu-1_x.y"), 0);
	CHECK_EQ_STR(b, "V/board/eu-1_x.y");
	CHECK_EQ_INT(cnt_viewdir_path(b, sizeof(b), "V", "a/b", ".."), 0);
	CHECK_EQ_STR(b, "V/a%2Fb/%2E.");
	CHECK_EQ_INT(cnt_viewdir_path(b, sizeof(b), "V", "b", "d\xc3\xa9 1"), 0);
	CHECK_EQ_STR(b, "V/b/d%C3%A9%201");
	CHECK_EQ_INT(cnt_viewdir_path(b, 8, "V", "board", "scope"), -1);
}

int main(void)
{
	char cmd[128];

	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_layout_and_lookups);
	RUN(test_every_truncation_and_flip_refused);
	RUN(test_forged_headers_refused);
	RUN(test_damaged_entries_and_slots);
	RUN(test_verify_structure);
	RUN(test_numbering_verified);
	RUN(test_empty_view);
	RUN(test_viewdir_write_open_verify);
	RUN(test_viewdir_publish_freeze_scopes);
	RUN(test_viewdir_path);
	RUN(test_error_column);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return unit_report("test_view");
}
