/*
 * test_viewdiff.c - comparing two views (view/viewdiff.h): what counts as
 * a difference, which fields are ignored, the two passes' matching when
 * positions shift, the tolerance of a sketch-backed board, output bounds.
 */
#include "unit.h"
#include "view_fixture.h"
#include "view/viewdiff.h"

static char tmpdir[] = "/tmp/test_viewdiff.XXXXXX";

/* Writes m[0..n) (rank order; competition ranks under d's rules) as
 * version d->version of scope dir tmpdir/NAME, into vdir. */
static void put(const char *name, const cnt_viewdesc *d, const fx_member *m, size_t n, char *vdir, size_t vn)
{
	cnt_view_entry e[16];
	static const int64_t edges[] = {0, 1000000};
	uint64_t counts[1] = {n};
	char pool[256], sdir[300];
	size_t plen = 0;
	cnt_view_build vb;
	cnt_err err;

	for (size_t i = 0; i < n; i++) {
		size_t nl = strlen(m[i].name);

		e[i].value = m[i].value;
		e[i].last_event_time = m[i].last;
		e[i].name_off = plen;
		e[i].name_len = (uint32_t)nl;
		memcpy(pool + plen, m[i].name, nl);
		plen += nl;
		e[i].rank = i > 0 && fx_tied(d, &m[i - 1], &m[i]) ? e[i - 1].rank : (uint32_t)i + 1;
	}
	vb = (cnt_view_build){.desc = d, .n = n, .head = n, .entries = e, .pool = pool, .pool_len = plen, .nbins = 1,
		.edges = edges, .counts = counts};
	int next;

	snprintf(sdir, sizeof(sdir), "%s/%s", tmpdir, name);
	CHECK_EQ_INT(cnt_viewdir_next(sdir, &next, &err), 0);
	if (cnt_viewdir_write(sdir, d->version, &vb, &err) != 0) {
		fprintf(stderr, "%s\n", err.msg);
		CHECK(0);
	}
	snprintf(vdir, vn, "%s/v%06d", sdir, d->version);
}

/* Runs the comparison with output to a temporary file, read back into out. */
static int run(const char *l, const char *r, cnt_viewdiff_opts *o, cnt_viewdiff_stats *st, char *out, size_t on,
	cnt_err *err)
{
	FILE *f = tmpfile();
	ssize_t got;
	int rc;

	o->fd = fileno(f);
	rc = cnt_viewdiff(l, r, o, st, err);
	got = pread(fileno(f), out, on - 1, 0);
	out[got > 0 ? got : 0] = 0;
	fclose(f);
	return rc;
}

static void test_values_equal(void)
{
	CHECK(cnt_viewdiff_values_equal(CNT_CTYPE_EXACT, 5, 5, 0.5));
	CHECK(!cnt_viewdiff_values_equal(CNT_CTYPE_EXACT, 100, 101, 0.5));
	CHECK(!cnt_viewdiff_values_equal(CNT_CTYPE_MAX, 100, 101, 0.5));
	CHECK(cnt_viewdiff_values_equal(CNT_CTYPE_UNIQUE, 1000, 1024, 0.024375));
	CHECK(!cnt_viewdiff_values_equal(CNT_CTYPE_UNIQUE, 1000, 1025, 0.024375));
	CHECK(cnt_viewdiff_values_equal(CNT_CTYPE_UNIQUE, 0, 0, 0));
	CHECK(!cnt_viewdiff_values_equal(CNT_CTYPE_UNIQUE, 0, 1, 0.5));
	CHECK(!cnt_viewdiff_values_equal(CNT_CTYPE_UNIQUE, 10, 11, 0));
	CHECK(cnt_viewdiff_values_equal(CNT_CTYPE_UNIQUE, INT64_MAX, INT64_MAX - 1, 0.01));
}

/* The same members, rebuilt later as version 2: equal. */
static void test_ignored_fields(void)
{
	cnt_viewdesc d = fx_desc(0, CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, 10);
	cnt_viewdiff_opts o = {-1, -1, 0, -1, NULL, NULL};
	cnt_viewdiff_stats st;
	char l[400], r[400], out[4096];
	cnt_err err;

	put("same", &d, fx_rk, 5, l, sizeof(l));
	d.version = 2;
	d.built_at += 3600000;
	d.as_of += 60000;
	d.freshness_budget_s = 60;
	put("same", &d, fx_rk, 5, r, sizeof(r));
	CHECK_EQ_INT(run(l, r, &o, &st, out, sizeof(out), &err), 0);
	CHECK(!cnt_viewdiff_differ(&st));
	CHECK_EQ_INT(st.left, 5);
	CHECK_EQ_INT(st.right, 5);
	CHECK_EQ_STR(out, "");
	/* the window is not ignored */
	d.version = 3;
	d.from = FX_T0;
	put("same", &d, fx_rk, 5, r, sizeof(r));
	CHECK_EQ_INT(run(l, r, &o, &st, out, sizeof(out), &err), 0);
	CHECK_EQ_INT(st.fields, 1);
	CHECK(strstr(out, "{\"field\":\"window.from\",\"left\":") == out);
}

/* An extra member at the top shifts every position: matched by name. */
static void test_shifted_positions(void)
{
	cnt_viewdesc d = fx_desc(0, CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, 10);
	static const fx_member right[] = {
		{"z", 50, FX_T0}, {"a", 10, FX_T0}, {"b", 8, FX_T0 + 30 * FX_MIN}, {"d", 8, FX_T0 + 30 * FX_MIN},
		{"c", 8, FX_T0 + 60 * FX_MIN}};
	cnt_viewdiff_opts o = {-1, -1, 0, -1, NULL, NULL};
	cnt_viewdiff_stats st;
	char l[400], r[400], out[4096];
	cnt_err err;

	put("shl", &d, fx_rk, 5, l, sizeof(l));
	put("shr", &d, right, 5, r, sizeof(r));
	CHECK_EQ_INT(run(l, r, &o, &st, out, sizeof(out), &err), 0);
	CHECK_EQ_INT(st.changed, 4);     /* a b d c: one rank down */
	CHECK_EQ_INT(st.only_left, 1);   /* e */
	CHECK_EQ_INT(st.only_right, 1);  /* z */
	CHECK_EQ_INT(st.shown, 6);
	CHECK(strstr(out, "{\"member_ref\":\"a\",\"differs\":[\"rank\"],\"left\":{\"rank\":1,\"value\":10,") == out);
	CHECK(strstr(out, "{\"member_ref\":\"e\",\"differs\":[],\"left\":{\"rank\":5,") != NULL);
	CHECK(strstr(out, "\"right\":null}\n{\"member_ref\":\"z\",\"differs\":[],\"left\":null,\"right\":{\"rank\":1,") != NULL);
	/* bounded output, every difference still counted */
	o.max_shown = 2;
	CHECK_EQ_INT(run(l, r, &o, &st, out, sizeof(out), &err), 0);
	CHECK_EQ_INT(st.shown, 2);
	CHECK_EQ_INT(st.changed + st.only_left + st.only_right, 6);
	o.quiet = 1;
	CHECK_EQ_INT(run(l, r, &o, &st, out, sizeof(out), &err), 0);
	CHECK_EQ_INT(st.shown, 0);
	CHECK_EQ_STR(out, "");
	CHECK(cnt_viewdiff_differ(&st));
}

/* A unique board: values within the tolerance are equal, and so is a
 * rank they moved; a last_event_time is compared exactly. */
static void test_sketch_tolerance(void)
{
	cnt_viewdesc d = fx_desc(0, CNT_TIE_MEMBER_REF_ASC, CNT_RANK_COMPETITION, 10);
	static const fx_member left[] = {{"a", 1000, FX_T0}, {"b", 995, FX_T0}, {"c", 500, FX_T0}};
	static const fx_member right[] = {{"b", 1005, FX_T0}, {"a", 1000, FX_T0}, {"c", 500, FX_T0 + 1}};
	cnt_viewdiff_opts o = {-1, -1, 0, -1, NULL, NULL};
	cnt_viewdiff_stats st;
	char l[400], r[400], out[4096];
	cnt_err err;

	d.counter_type = CNT_CTYPE_UNIQUE;
	put("ul", &d, left, 3, l, sizeof(l));
	put("ur", &d, right, 3, r, sizeof(r));
	CHECK_EQ_INT(run(l, r, &o, &st, out, sizeof(out), &err), 0);
	CHECK(st.sketch);
	CHECK(st.tolerance == CNT_VIEWDIFF_DEFAULT_TOLERANCE);
	CHECK_EQ_INT(st.changed, 1);
	CHECK(strstr(out, "{\"member_ref\":\"c\",\"differs\":[\"last_event_time\"],") == out);
	o.tolerance = 0;
	CHECK_EQ_INT(run(l, r, &o, &st, out, sizeof(out), &err), 0);
	CHECK_EQ_INT(st.changed, 3);
	CHECK(strstr(out, "{\"member_ref\":\"a\",\"differs\":[\"rank\"],") == out);
	CHECK(strstr(out, "{\"member_ref\":\"b\",\"differs\":[\"value\",\"rank\"],") != NULL);
	/* the tolerance applies to sketch-backed boards only */
	d.counter_type = CNT_CTYPE_EXACT;
	d.version = 2;
	put("ul", &d, left, 3, l, sizeof(l));
	put("ur", &d, right, 3, r, sizeof(r));
	o.tolerance = 0.5;
	CHECK_EQ_INT(run(l, r, &o, &st, out, sizeof(out), &err), 0);
	CHECK(!st.sketch);
	CHECK_EQ_INT(st.changed, 3);
}

static void test_trouble(void)
{
	cnt_viewdesc d = fx_desc(0, CNT_TIE_EARLIEST_ACHIEVER, CNT_RANK_COMPETITION, 10);
	cnt_viewdiff_opts o = {-1, -1, 0, -1, NULL, NULL};
	cnt_viewdiff_stats st;
	char l[400], r[400], path[500], out[64];
	cnt_err err;
	FILE *f;

	put("tl", &d, fx_rk, 5, l, sizeof(l));
	put("tr", &d, fx_rk, 5, r, sizeof(r));
	/* the last byte of the name pool */
	snprintf(path, sizeof(path), "%s/index.bin", r);
	f = fopen(path, "r+b");
	CHECK(f != NULL);
	if (f) {
		fseek(f, -1, SEEK_END);
		fputc('q', f);
		fclose(f);
	}
	CHECK_EQ_INT(run(l, r, &o, &st, out, sizeof(out), &err), -1);
	CHECK_EQ_INT(err.kind, CNT_ERR_DATA);
	CHECK(strstr(err.msg, "is corrupt: data checksum mismatch") != NULL);
	CHECK(strstr(err.msg, path) != NULL);
	snprintf(path, sizeof(path), "%s/nothing", tmpdir);
	CHECK_EQ_INT(run(path, l, &o, &st, out, sizeof(out), &err), -1);
	CHECK(strstr(err.msg, "nothing/index.bin") != NULL);
}

int main(void)
{
	char cmd[128];

	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_values_equal);
	RUN(test_ignored_fields);
	RUN(test_shifted_positions);
	RUN(test_sketch_tolerance);
	RUN(test_trouble);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return unit_report("test_viewdiff");
}
