/*
 * test_seal.c - the seal ledger and sealed standings (lib/correct/seal.h,
 * lib/correct/ledger.h).
 *
 * The chain: hex round trip, a walk that checks "prev" line by line.
 * Closing: the horizon refusal in a zone that changes its clocks on the
 * season's last weekend; standings ranked by the board code; a second seal
 * refused; corrections against the standings as corrected so far, and
 * none when nothing changed.  Hostile directories: ledgers and files
 * forged with the right digests (which the bats tests cannot make), so that
 * the record checks behind the digest are reached: every one gives an
 * error, never a crash.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "correct/ledger.h"
#include "correct/seal.h"
#include "view/project.h"
#include "unit.h"

/* Berlin: the clocks go back at 03:00 CEST on Sunday 2026-10-25. */
static const char defs_json[] =
	"{\"format\": \"cnt-definitions/1\","
	" \"tenants\": [{\"tenant_id\": \"acme\", \"timezone\": \"Europe/Berlin\"}],"
	" \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"dist\", \"versions\": ["
	"   {\"version\": 1, \"type\": \"exact\", \"lateness_horizon_s\": 3600, \"windows\": [\"season\"]},"
	"   {\"version\": 2, \"effective_from\": \"2026-06-01T00:00:00Z\", \"type\": \"exact\","
	"    \"lateness_horizon_s\": 7200, \"windows\": [\"season\"]}]}],"
	" \"leaderboards\": [{\"board_id\": \"lg\", \"tenant_id\": \"acme\", \"counter_id\": \"dist\","
	"   \"window\": \"season\", \"scope_kind\": \"global\", \"tie_break\": [\"member_ref_asc\"],"
	"   \"rank_numbering\": \"competition\"}],"
	" \"seasons\": [{\"season_id\": \"w43\", \"board_id\": \"lg\", \"opens_at\": \"2026-10-19T00:00:00\","
	"   \"closes_at\": \"2026-10-26T00:00:00\", \"state\": \"closing\"}]}";

#define CLOSE_MS INT64_C(1792969200000)   /* 2026-10-25T23:00:00Z: Monday 00:00 CET */
#define HOUR INT64_C(3600000)

static char root[64];
static int nth;

/* A fresh directory under root. */
static const char *fresh(void)
{
	static char d[128];

	snprintf(d, sizeof(d), "%s/d%d", root, ++nth);
	CHECK_EQ_INT(mkdir(d, 0777), 0);
	return d;
}

static void put(const char *dir, const char *rel, const char *text)
{
	char path[512], sub[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (char *p = strchr(strcpy(sub, path) + strlen(dir) + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = 0;
		mkdir(sub, 0777);
		*p = '/';
	}
	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Forges a sealed directory: files[i] under rels[i], each with a ledger
 * line (the templates' DIGEST replaced by the file's digest and PREV by the
 * chain), and the head. */
static void forge(const char *dir, size_t n, const char *const *rels, const char *const *files,
	const char *const *lines)
{
	cnt_buf led = CNT_BUF_INIT;
	cnt_fp prev = {0, 0};
	char hx[33], head[64];

	for (size_t i = 0; i < n; i++) {
		char line[2048], dg[33], *p;
		size_t before = led.len;

		put(dir, rels[i], files[i]);
		cnt_ledger_hex(cnt_ledger_hash(files[i], strlen(files[i])), dg);
		cnt_ledger_hex(prev, hx);
		snprintf(line, sizeof(line), "%s", lines[i]);
		if ((p = strstr(line, "DIGEST")) != NULL) {
			memmove(p + 32, p + 6, strlen(p + 6) + 1);
			memcpy(p, dg, 32);
		}
		if ((p = strstr(line, "PREV")) != NULL) {
			memmove(p + 32, p + 4, strlen(p + 4) + 1);
			memcpy(p, hx, 32);
		}
		cnt_buf_append(&led, line, strlen(line));
		cnt_buf_putc(&led, '\n');
		prev = cnt_ledger_hash(led.p + before, led.len - before - 1);
	}
	cnt_buf_putc(&led, 0);
	put(dir, "ledger.jsonl", (const char *)led.p);
	cnt_ledger_hex(prev, hx);
	snprintf(head, sizeof(head), "%zu %s\n", n, hx);
	put(dir, "ledger.head", head);
	cnt_buf_release(&led);
}

#define ST_LINE "{\"kind\":\"standings\",\"season_id\":\"w43\",\"board_id\":\"lg\",\"scope\":\"global\"," \
	"\"file\":\"w43/global/standings.jsonl\",\"records\":%d,\"digest\":\"DIGEST\"," \
	"\"sealed_at\":\"2026-10-28T00:00:00.000Z\",\"prev\":\"PREV\"}"
#define CO_LINE "{\"kind\":\"corrections\",\"season_id\":\"w43\",\"board_id\":\"lg\",\"scope\":\"global\"," \
	"\"file\":\"w43/global/corrections-000001.jsonl\",\"seq\":1,\"records\":%d,\"digest\":\"DIGEST\"," \
	"\"published_at\":\"2026-10-28T10:00:00.000Z\",\"retraction_ids\":[\"r-1\"],\"prev\":\"PREV\"}"
#define REC(m, v, r) "{\"season_id\":\"w43\",\"board_id\":\"lg\",\"scope\":\"global\",\"member_ref\":\"" m \
	"\",\"final_value\":" v ",\"final_rank\":" r ",\"sealed_at\":\"2026-10-28T00:00:00.000Z\"}\n"
#define COR(m, pv, pr, rv, rr) "{\"correction_id\":\"c-1\",\"season_id\":\"w43\",\"board_id\":\"lg\"," \
	"\"scope\":\"global\",\"member_ref\":\"" m "\",\"change\":\"rank\",\"retraction_ids\":[\"r-1\"]," \
	"\"prior_value\":" pv ",\"prior_rank\":" pr ",\"revised_value\":" rv ",\"revised_rank\":" rr "," \
	"\"published_at\":\"2026-10-28T10:00:00.000Z\"}\n"

/* Shows w43 from a forged directory of a standings file (and a
 * corrections file when co is not NULL); returns show's status, the
 * output or error in out. */
static int show_forged(const char *st, int nst, const char *co, int nco, cnt_buf *out, cnt_err *err)
{
	const char *dir = fresh();
	const char *rels[2] = {"w43/global/standings.jsonl", "w43/global/corrections-000001.jsonl"};
	const char *files[2] = {st, co};
	char l0[1024], l1[1024];
	const char *lines[2] = {l0, l1};
	cnt_seal_dir s;
	int rc;

	snprintf(l0, sizeof(l0), ST_LINE, nst);
	snprintf(l1, sizeof(l1), CO_LINE, nco);
	forge(dir, co ? 2 : 1, rels, files, lines);
	out->len = 0;
	rc = cnt_seal_dir_open(&s, dir, 0, err);
	if (rc == 0)
		rc = cnt_seal_show(&s, "w43", NULL, 0, out, err);
	cnt_seal_dir_close(&s);
	cnt_buf_putc(out, 0);
	return rc;
}

static void test_hex_and_walk(void)
{
	cnt_fp fp = {0x0123456789abcdefULL, 0xfedcba9876543210ULL}, back;
	char hx[33], text[512], l1[200];
	cnt_fp last;
	size_t lines;
	cnt_err err;

	cnt_ledger_hex(fp, hx);
	CHECK_EQ_STR(hx, "0123456789abcdeffedcba9876543210");
	CHECK_EQ_INT(cnt_ledger_hex_parse(hx, &back), 0);
	CHECK(back.hi == fp.hi && back.lo == fp.lo);
	CHECK_EQ_INT(cnt_ledger_hex_parse("0123456789ABCDEFfedcba9876543210", &back), -1);
	CHECK_EQ_INT(cnt_ledger_hex_parse("0123", &back), -1);

	snprintf(l1, sizeof(l1), "{\"a\":1,\"prev\":\"%032d\"}", 0);
	cnt_ledger_hex(cnt_ledger_hash(l1, strlen(l1)), hx);
	snprintf(text, sizeof(text), "%s\n{\"a\":2,\"prev\":\"%s\"}\n", l1, hx);
	CHECK_EQ_INT(cnt_ledger_walk(text, strlen(text), "ledger", "L", NULL, NULL, &last, &lines, &err), 0);
	CHECK_EQ_INT(lines, 2);
	text[5] = '3';   /* line 1 changed: line 2's prev no longer matches */
	CHECK_EQ_INT(cnt_ledger_walk(text, strlen(text), "ledger", "L", NULL, NULL, &last, &lines, &err), -1);
	CHECK_EQ_STR(err.msg, "ledger 'L' line 2: the hash chain is broken (\"prev\" is not the hash of line 1)");
	CHECK_EQ_INT(cnt_ledger_walk("{\"prev\":\"x\"}\n", 13, "ledger", "L", NULL, NULL, &last, &lines, &err), -1);
	CHECK_EQ_STR(err.msg, "ledger 'L' line 1: \"prev\" is not 32 zeros (not the first line?)");
	CHECK_EQ_INT(cnt_ledger_walk("", 0, "ledger", "L", NULL, NULL, &last, &lines, &err), 0);
	CHECK(lines == 0 && last.hi == 0 && last.lo == 0);
}

static cnt_bucket bk(const char *member, int64_t start, int64_t sum)
{
	cnt_bucket b;

	memset(&b, 0, sizeof(b));
	b.tenant_id = (cnt_slice){"acme", 4};
	b.counter_id = (cnt_slice){"dist", 4};
	b.counter_version = 2;
	b.member_ref = (cnt_slice){member, strlen(member)};
	b.bucket_start = start;
	b.bucket_end = start + HOUR;
	b.count = 1;
	b.sum = sum;
	b.has_last = 1;
	b.last_event_time = start;
	b.max_ingest_time = start + 60000;
	return b;
}

/* Builds w43 from buckets (name, bucket start, sum) at now. */
static int build(cnt_board_build *bb, const cnt_defs *d, int64_t now, int check, size_t n, const cnt_bucket *v,
	cnt_err *err)
{
	if (cnt_seal_begin(bb, d, "defs", "w43", now, check, NULL, NULL, err) != 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		CHECK_EQ_INT(cnt_proj_add_bucket(bb->proj, &v[i], err), 0);
	CHECK_EQ_INT(cnt_proj_finish(bb->proj, err), 0);
	return 0;
}

/* A retraction ledger of the records lines[0..n) in dir/name, each the
 * text up to its "prev", chained as cnt-retract chains them. */
static void chain(const char *dir, const char *name, const char *const *lines, size_t n)
{
	cnt_buf b = CNT_BUF_INIT;
	char hx[33] = "00000000000000000000000000000000";

	for (size_t i = 0; i < n; i++) {
		size_t at = b.len;

		CHECK(cnt_buf_printf(&b, "%s\"prev\":\"%s\"}", lines[i], hx) == 0);
		cnt_ledger_hex(cnt_ledger_hash(b.p + at, b.len - at), hx);
		CHECK(cnt_buf_putc(&b, '\n') == 0);
	}
	CHECK(cnt_buf_putc(&b, 0) == 0);
	put(dir, name, (const char *)b.p);
	cnt_buf_release(&b);
}

static void test_close_and_correct(void)
{
	cnt_err err;
	cnt_defs *d = cnt_defs_parse(defs_json, sizeof(defs_json) - 1, "defs", &err);
	cnt_board_build bb;
	cnt_seal_dir s;
	const char *dir = fresh();
	char sdir[160], path[256];
	cnt_bucket v[4];
	cnt_buf out = CNT_BUF_INIT;
	int rfd;

	CHECK(d != NULL);
	if (d == NULL)
		return;
	CHECK_EQ_INT(cnt_seal_horizon_s(cnt_defs_board(d, "lg", 2)), 7200);
	/* the last hour of the week, Sunday 23:00 CET, is counted; Monday's is not */
	v[0] = bk("m-a", CLOSE_MS - HOUR, 10);
	v[1] = bk("m-b", CLOSE_MS - 169 * HOUR, 20);   /* the first hour, Monday 00:00 CEST */
	v[2] = bk("m-c", CLOSE_MS, 99);
	v[3] = bk("m-d", CLOSE_MS - 170 * HOUR, 99);
	/* before the horizon: refused, saying when */
	CHECK_EQ_INT(build(&bb, d, CLOSE_MS + 2 * HOUR, 1, 4, v, &err), -1);
	CHECK(strstr(err.msg, "it may be sealed after 2026-10-26T01:00:00.000Z, not at 2026-10-26T01:00:00.000Z") != NULL);
	CHECK_EQ_INT(build(&bb, d, CLOSE_MS + 2 * HOUR + 1, 1, 4, v, &err), 0);
	CHECK_EQ_INT(bb.from, CLOSE_MS - 169 * HOUR);
	CHECK_EQ_INT(bb.to, CLOSE_MS);
	snprintf(sdir, sizeof(sdir), "%s/sealed", dir);
	CHECK_EQ_INT(cnt_seal_dir_open(&s, sdir, 1, &err), 0);
	CHECK_EQ_INT(cnt_seal_close(&s, &bb, NULL, CLOSE_MS + 3 * HOUR, &err), 0);
	CHECK_EQ_INT(s.nouts, 1);
	CHECK_EQ_INT(s.outs[0].records, 2);
	CHECK_EQ_INT(cnt_seal_commit(&s, NULL, NULL, &err), 0);
	cnt_seal_dir_close(&s);
	/* sealed once: a second close is refused */
	CHECK_EQ_INT(cnt_seal_dir_open(&s, sdir, 1, &err), 0);
	CHECK_EQ_INT(cnt_seal_close(&s, &bb, NULL, CLOSE_MS + 4 * HOUR, &err), -1);
	CHECK(strstr(err.msg, "is already sealed (seal ledger line 1") != NULL);
	cnt_seal_dir_close(&s);
	cnt_board_end(&bb);

	/* a retraction removes m-b: m-a moves up.  The ledger names it twice
	 * (a hand-made ledger may): the correction names it once.  Records
	 * that list their counters count where those say, whatever their
	 * selector: r-8 is acme/steps's, r-6 acme/distance's although its
	 * selector says acme/dist. */
	snprintf(path, sizeof(path), "%s/r.jsonl", dir);
	{
		static const char *const lines[] = {
			"{\"retraction_id\":\"r-9\",\"selector\":{\"tenant_id\":\"acme\",\"counter_id\":\"dist\"},",
			"{\"retraction_id\":\"r-8\",\"selector\":{},"
			"\"counters\":[{\"tenant_id\":\"acme\",\"counter_id\":\"steps\"}],",
			"{\"retraction_id\":\"r-7\",\"selector\":{},\"counters\":[{\"tenant_id\":\"acme\","
			"\"counter_id\":\"dist\"},{\"tenant_id\":\"zeta\",\"counter_id\":\"x\"}],",
			"{\"retraction_id\":\"r-6\",\"selector\":{\"tenant_id\":\"acme\",\"counter_id\":\"dist\"},"
			"\"counters\":[{\"tenant_id\":\"acme\",\"counter_id\":\"distance\"}],",
			"{\"retraction_id\":\"r-9\",",
		};

		chain(dir, "r.jsonl", lines, 5);
		/* a "counters" that is not a list of two strings: refused */
		chain(dir, "bad.jsonl", (const char *const[]){lines[0],
			"{\"retraction_id\":\"r-5\",\"counters\":[{\"tenant_id\":\"acme\"}],"}, 2);
	}
	CHECK_EQ_INT(build(&bb, d, CLOSE_MS + 5 * HOUR, 0, 1, v, &err), 0);
	CHECK_EQ_INT(cnt_seal_dir_open(&s, sdir, 1, &err), 0);
	{
		char bad[256];

		snprintf(bad, sizeof(bad), "%s/bad.jsonl", dir);
		rfd = open(bad, O_RDONLY);
		CHECK_EQ_INT(cnt_seal_correct(&s, &bb, NULL, rfd, bad, CLOSE_MS + 5 * HOUR, &err), -1);
		close(rfd);
		CHECK(strstr(err.msg, "bad.jsonl' line 2: \"counters\" is not a list of objects with a tenant_id "
			"and a counter_id") != NULL);
		CHECK_EQ_INT(s.nouts, 0);
	}
	rfd = open(path, O_RDONLY);
	CHECK_EQ_INT(cnt_seal_correct(&s, &bb, NULL, rfd, path, CLOSE_MS + 5 * HOUR, &err), 0);
	close(rfd);
	CHECK_EQ_INT(s.nouts, 1);
	CHECK_EQ_INT(s.changed, 2);
	CHECK(strstr((const char *)s.append.p, "\"retraction_ids\":[\"r-9\",\"r-7\"],") != NULL);  /* NUL-ended */
	CHECK_EQ_INT(cnt_seal_commit(&s, NULL, NULL, &err), 0);
	cnt_seal_dir_close(&s);
	/* the same again: nothing */
	CHECK_EQ_INT(cnt_seal_dir_open(&s, sdir, 1, &err), 0);
	rfd = open(path, O_RDONLY);
	CHECK_EQ_INT(cnt_seal_correct(&s, &bb, NULL, rfd, path, CLOSE_MS + 6 * HOUR, &err), 0);
	close(rfd);
	CHECK_EQ_INT(s.nouts, 0);
	CHECK_EQ_INT(cnt_seal_show(&s, "w43", NULL, 0, &out, &err), 0);
	cnt_buf_putc(&out, 0);
	CHECK(strstr((const char *)out.p, "\"member_ref\":\"m-a\",\"final_value\":10,\"final_rank\":2,"
		"\"sealed_at\":\"2026-10-26T02:00:00.000Z\",\"value\":10,\"rank\":1,") != NULL);
	CHECK(strstr((const char *)out.p, "\"member_ref\":\"m-b\",\"final_value\":20,\"final_rank\":1,"
		"\"sealed_at\":\"2026-10-26T02:00:00.000Z\",\"value\":null,\"rank\":null,") != NULL);
	cnt_seal_dir_close(&s);
	cnt_board_end(&bb);
	{
		size_t files;

		CHECK_EQ_INT(cnt_seal_verify(sdir, &files, &err), 0);
		CHECK_EQ_INT(files, 2);
	}
	cnt_buf_release(&out);
	cnt_defs_free(d);
}

static void test_hostile_files(void)
{
	cnt_buf out = CNT_BUF_INIT;
	cnt_err err;

	CHECK_EQ_INT(show_forged(REC("m-a", "5", "1") REC("m-b", "4", "2"), 2, NULL, 0, &out, &err), 0);
	CHECK(strstr((const char *)out.p, "\"member_ref\":\"m-b\"") != NULL);
	/* the right digest, wrong content */
	CHECK_EQ_INT(show_forged(REC("m-a", "5", "0"), 1, NULL, 0, &out, &err), -1);
	CHECK(strstr(err.msg, "w43/global/standings.jsonl' line 1: not a standing") != NULL);
	CHECK_EQ_INT(show_forged(REC("m-a", "\"5\"", "1"), 1, NULL, 0, &out, &err), -1);
	CHECK(strstr(err.msg, "line 1: not a standing") != NULL);
	CHECK_EQ_INT(show_forged(REC("m-a", "5", "1") REC("m-a", "4", "2"), 2, NULL, 0, &out, &err), -1);
	CHECK(strstr(err.msg, "line 2: the member is listed twice") != NULL);
	CHECK_EQ_INT(show_forged("[1]\n", 1, NULL, 0, &out, &err), -1);
	CHECK(strstr(err.msg, "line 1: not a JSON object") != NULL);
	CHECK_EQ_INT(show_forged(REC("m-a", "5", "1"), 2, NULL, 0, &out, &err), -1);
	CHECK(strstr(err.msg, "does not hold the 2 records") != NULL);
	CHECK_EQ_INT(show_forged("{\"season_id\":\"w44\",\"board_id\":\"lg\",\"scope\":\"global\"}\n", 1, NULL, 0,
		&out, &err), -1);
	CHECK(strstr(err.msg, "season_id, board_id or scope is not the ledger's") != NULL);
	/* a correction whose prior is not the published standing */
	CHECK_EQ_INT(show_forged(REC("m-a", "5", "1"), 1, COR("m-a", "6", "1", "5", "2"), 1, &out, &err), -1);
	CHECK(strstr(err.msg, "corrections-000001.jsonl' line 1: its prior value and rank are not") != NULL);
	CHECK_EQ_INT(show_forged(REC("m-a", "5", "1"), 1, COR("m-a", "5", "1", "null", "2"), 1, &out, &err), -1);
	CHECK(strstr(err.msg, "not a correction record") != NULL);
	CHECK_EQ_INT(show_forged(REC("m-a", "5", "1"), 1, COR("m-a", "5", "1", "5", "2"), 1, &out, &err), 0);
	CHECK(strstr((const char *)out.p, "\"final_rank\":1,\"sealed_at\":\"2026-10-28T00:00:00.000Z\",\"value\":5,\"rank\":2,") != NULL);
	cnt_buf_release(&out);
}

static void test_hostile_ledgers(void)
{
	static const char *const bad[][2] = {
		{"{\"kind\":\"standings\",\"season_id\":\"w43\",\"board_id\":\"lg\",\"scope\":\"global\","
		 "\"file\":\"w43/global/../../x\",\"records\":0,\"digest\":\"DIGEST\",\"sealed_at\":\"2026-10-28T00:00:00Z\",\"prev\":\"PREV\"}",
		 "\"file\" is not the path"},
		{"{\"kind\":\"corrections\",\"season_id\":\"w43\",\"board_id\":\"lg\",\"scope\":\"global\","
		 "\"file\":\"w43/global/corrections-000001.jsonl\",\"seq\":1,\"records\":0,\"digest\":\"DIGEST\","
		 "\"published_at\":\"2026-10-28T00:00:00Z\",\"retraction_ids\":[],\"prev\":\"PREV\"}",
		 "corrections of a scope that is not sealed"},
		{"{\"kind\":\"standings\",\"season_id\":\"\",\"board_id\":\"lg\",\"scope\":\"global\",\"prev\":\"PREV\"}",
		 "no valid season_id"},
		{"{\"kind\":\"seal\",\"prev\":\"PREV\"}", "\"kind\" is not"},
	};
	cnt_err err;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *dir = fresh();
		const char *rels[1] = {"f"}, *files[1] = {""}, *lines[1] = {bad[i][0]};
		cnt_seal_dir s;
		size_t n;

		forge(dir, 1, rels, files, lines);
		CHECK_EQ_INT(cnt_seal_dir_open(&s, dir, 0, &err), -1);
		CHECK(s.damaged == 1);
		CHECK(strstr(err.msg, bad[i][1]) != NULL);
		cnt_seal_dir_close(&s);
		CHECK_EQ_INT(cnt_seal_verify(dir, &n, &err), 1);
	}
	{
		/* a second standings line of the same scope; a correction number skipped */
		const char *dir = fresh();
		char l0[1024], l1[1024];
		const char *rels[2] = {"w43/global/standings.jsonl", "x"}, *files[2] = {"", ""}, *lines[2] = {l0, l1};
		cnt_seal_dir s;

		snprintf(l0, sizeof(l0), ST_LINE, 0);
		snprintf(l1, sizeof(l1), ST_LINE, 0);
		forge(dir, 2, rels, files, lines);
		CHECK_EQ_INT(cnt_seal_dir_open(&s, dir, 0, &err), -1);
		CHECK(strstr(err.msg, "line 2: the scope is sealed twice") != NULL);
		cnt_seal_dir_close(&s);
		dir = fresh();
		snprintf(l1, sizeof(l1), CO_LINE, 0);
		memcpy(strstr(l1, "\"seq\":1"), "\"seq\":2", 7);
		forge(dir, 2, rels, files, lines);
		CHECK_EQ_INT(cnt_seal_dir_open(&s, dir, 0, &err), -1);
		CHECK(strstr(err.msg, "line 2: \"seq\" is not the next correction number") != NULL);
		cnt_seal_dir_close(&s);
	}
}

int main(void)
{
	char cmd[128];

	snprintf(root, sizeof(root), "%s/test_seal.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(root) == NULL)
		return 1;
	RUN(test_hex_and_walk);
	RUN(test_close_and_correct);
	RUN(test_hostile_files);
	RUN(test_hostile_ledgers);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		return 1;
	return unit_report("test_seal");
}
