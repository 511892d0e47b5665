/*
 * fuzz_ledger.c - libFuzzer target for the readers of the hash-chained
 * JSON-lines ledgers (lib/correct/ledger.c): the audit ledger
 * (cnt_auditlog_load, lib/correct/auditlog.c), the seal ledger
 * (cnt_seal_dir_open and cnt_seal_verify on a directory holding the bytes
 * as ledger.jsonl, lib/correct/seal.c) and the retraction ledger
 * (cnt_retract_ledger_load, lib/correct/retract.c; cnt_audit_ledger_has,
 * lib/correct/audit.c; the read of --retractions by cnt_seal_correct,
 * lib/correct/seal.c, twice: with no sealed scope, so that it stops right
 * after the walk, and on a directory that holds a sealed season).
 *
 * The sealed season is made once a process with the library, as cnt-seal
 * would: week w43 of board acme-league (acme/distance_m, UTC) sealed with
 * m-b 20, m-a 10, m-c 5, then corrected once for retraction
 * r-fdd48669007bfed861a7b9b211b7a59c (m-b gone), both committed.  Each
 * input is then the --retractions of a correction of revised standings
 * (m-c 12, m-a 10: two members differ), prepared and never committed, so
 * the directory stays as made.  Whatever the bytes: an error with a
 * message, refused when the ledger is broken or names no retraction of
 * acme/distance_m (a line with a retraction_id or erasure_id, of no kind
 * but "erasure", whose "counters" list acme/distance_m or, without
 * "counters", whose selector names no other tenant or counter; a
 * "counters" that is not a list of two-string objects is refused),
 * prepared when it names one (each id once);
 * then exactly one corrections file, number 2, of the two records that
 * differ with their prior and revised value and rank, every record and
 * the ledger line naming the ledger's retractions of acme/distance_m that
 * correction 1 did not name (all of them when it named every one), the
 * line chained to the sealed ledger and carrying the file's digest and the
 * retraction ledger's head, and no file written.
 *
 * The seeds in tests/fuzz/corpus/fuzz_ledger/ are ledgers written by the
 * tools: audit ledgers and a retraction ledger by cnt-audit, a
 * retraction ledger with an erasure by cnt-retract and cnt-erase,
 * retraction ledgers by cnt-retract that make the sealed season's
 * correction (two members, another counter's retraction first, an event
 * retraction with an empty selector, written before records listed their
 * counters; event retractions without a selector that list their
 * counters, one of them acme/distance_m's or none), seal ledgers (standings, then
 * corrections) by cnt-seal close and correct, and truncated or corrupted
 * copies of them.  Whatever the bytes: an error with a message, or a
 * ledger that agrees with the plain walk
 * (cnt_ledger_walk without a callback: same lines, same last hash) and
 * with its own rules: audit entries with ids, 0 <= flagged <= examined,
 * unique audit ids, "through" never going back for a pair, and a line
 * cnt_auditlog_line() makes for it loading back; seal entries one a line,
 * each scope sealed once, corrections numbered 1, 2, ... after their
 * standings on the same board, files three components deep inside the
 * directory.  Never a crash, a leak or a hang.  The bytes are read as
 * they are and, when that differs, with the "prev" of every line fixed
 * to chain (most mutations break the chain, which would hide the checks
 * after it).  The seal directories are made once a process under /tmp
 * and removed at exit (not after a failed check, which traps: the
 * directories are left for the input's post-mortem).
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "correct/audit.h"
#include "correct/auditlog.h"
#include "correct/ledger.h"
#include "correct/retract.h"
#include "correct/seal.h"
#include "fuzz_input.h"
#include "view/project.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char sealdir[64];

#define CHECK(c) \
	do { \
		if (!(c)) \
			__builtin_trap(); \
	} while (0)

static void sealdir_remove(void)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/" CNT_SEAL_LEDGER, sealdir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/" CNT_SEAL_HEAD, sealdir);
	unlink(p);
	rmdir(sealdir);
}

static int sealdir_make(void)
{
	if (sealdir[0])
		return 0;
	strcpy(sealdir, "/tmp/fuzz_ledger.XXXXXX");
	if (mkdtemp(sealdir) == NULL) {
		sealdir[0] = 0;
		return -1;
	}
	atexit(sealdir_remove);
	return 0;
}

static int same_fp(cnt_fp a, cnt_fp b)
{
	return a.hi == b.hi && a.lo == b.lo;
}

/* The plain walk, keeping the first line's retraction_id (if a string). */
typedef struct ref {
	int ok;
	cnt_fp last;
	size_t lines;
	char *rid;
} ref;

static int first_rid(void *ctx, json_t *rec, size_t lineno, const char *line, size_t len, cnt_err *err)
{
	ref *r = ctx;
	json_t *v = json_object_get(rec, "retraction_id");

	(void)line, (void)len, (void)err;
	if (lineno == 1 && json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v))
		r->rid = strdup(json_string_value(v));
	return 0;
}

static void walk_ref(const uint8_t *data, size_t size, ref *r)
{
	cnt_err err = {"", CNT_ERR_DATA};
	size_t nl = 0, start = 0;

	memset(r, 0, sizeof(*r));
	r->ok = cnt_ledger_walk(data, size, "ledger", "fuzz", first_rid, r, &r->last, &r->lines, &err) == 0;
	if (!r->ok) {
		CHECK(err.msg[0] != '\0');
		return;
	}
	/* whole lines, and the hash is the last one's */
	CHECK(size == 0 || data[size - 1] == '\n');
	for (size_t i = 0; i < size; i++)
		if (data[i] == '\n') {
			nl++;
			if (i + 1 < size)
				start = i + 1;
		}
	CHECK(nl == r->lines);
	if (size == 0)
		CHECK(r->last.hi == 0 && r->last.lo == 0);
	else
		CHECK(same_fp(r->last, cnt_ledger_hash(data + start, size - 1 - start)));
}

/* ---- the audit ledger ---- */

static cnt_auditlog *audit_load(const uint8_t *data, size_t size, cnt_err *err)
{
	int fd = fuzz_input_fd("fuzz_ledger", data, size);
	cnt_auditlog *l;

	if (fd < 0)
		return NULL;
	l = cnt_auditlog_load(fd, "fuzz", err);
	close(fd);
	if (l == NULL)
		CHECK(err->msg[0] != '\0');
	return l;
}

static void read_audit(const uint8_t *data, size_t size, const ref *r)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_auditlog *l = audit_load(data, size, &err), *l2;
	cnt_audit_entry e = {NULL, "fuzz-t", "fuzz-c", 0, 0, NULL, 0, 0, NULL};
	size_t n;
	char *line;
	uint8_t *more;

	if (l == NULL)
		return;
	n = cnt_auditlog_count(l);
	CHECK(r->ok && n == r->lines && cnt_auditlog_at(l, n) == NULL);
	for (size_t i = 0; i < n; i++) {
		const cnt_audit_entry *a = cnt_auditlog_at(l, i), *last;

		CHECK(a && a->audit_id && *a->audit_id && a->tenant_id && *a->tenant_id && a->counter_id &&
			*a->counter_id && a->authority && *a->authority);
		CHECK(a->through_ms >= 0 && a->examined >= 0 && a->flagged >= 0 && a->flagged <= a->examined);
		CHECK(a->retraction_id == NULL || *a->retraction_id);
		last = cnt_auditlog_latest(l, a->tenant_id, a->counter_id);
		CHECK(last && last >= a && last->through_ms >= a->through_ms);
		if (n <= 256)
			for (size_t k = 0; k < i; k++)
				CHECK(strcmp(cnt_auditlog_at(l, k)->audit_id, a->audit_id) != 0);
	}
	/* A line made for the ledger loads back after it. */
	if (n > 0) {
		e = *cnt_auditlog_at(l, n - 1);
		e.audit_id = NULL;
	}
	e.authority = "fuzz round trip";
	err.msg[0] = '\0';
	line = cnt_auditlog_line(l, &e, &err);
	if (line == NULL) {
		CHECK(err.msg[0] != '\0');
	} else if ((more = malloc(size + strlen(line) + 1)) != NULL) {
		memcpy(more, data, size);
		memcpy(more + size, line, strlen(line));
		err.msg[0] = '\0';
		l2 = audit_load(more, size + strlen(line), &err);
		CHECK(l2 != NULL && cnt_auditlog_count(l2) == n + 1);
		{
			const cnt_audit_entry *a = cnt_auditlog_at(l2, n);

			CHECK(strcmp(a->tenant_id, e.tenant_id) == 0 && strcmp(a->counter_id, e.counter_id) == 0 &&
				a->through_ms == e.through_ms && a->audited_at_ms == e.audited_at_ms &&
				a->examined == e.examined && a->flagged == e.flagged &&
				(a->retraction_id == NULL) == (e.retraction_id == NULL));
		}
		cnt_auditlog_free(l2);
		free(more);
	}
	free(line);
	cnt_auditlog_free(l);
}

/* ---- the seal ledger ---- */

static int put_file(const char *name, const void *p, size_t n)
{
	char path[128];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", sealdir, name);
	if ((f = fopen(path, "wb")) == NULL)
		return -1;
	rc = fwrite(p, 1, n, f) == n ? 0 : -1;
	return fclose(f) == 0 ? rc : -1;
}

/* DIR-relative and three components deep, none of them "", "." or "..". */
static int inside(const char *file)
{
	int parts = 0;

	for (const char *p = file;; p++) {
		const char *q = strchr(p, '/');
		size_t k = q ? (size_t)(q - p) : strlen(p);

		if (k == 0 || (k == 1 && p[0] == '.') || (k == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		parts++;
		if (q == NULL)
			break;
		p = q;
	}
	return parts == 3;
}

static void read_seal(const uint8_t *data, size_t size, const ref *r)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_seal_dir s;
	char head[80], hx[33], path[128];
	size_t files = 0;
	int rc;

	if (sealdir_make() != 0 || put_file(CNT_SEAL_LEDGER, data, size) != 0)
		return;
	/* A head that matches, so that the ledger's content decides. */
	snprintf(path, sizeof(path), "%s/" CNT_SEAL_HEAD, sealdir);
	if (r->ok) {
		cnt_ledger_hex(r->last, hx);
		snprintf(head, sizeof(head), "%zu %s\n", r->lines, hx);
		if (put_file(CNT_SEAL_HEAD, head, strlen(head)) != 0)
			return;
	} else {
		unlink(path);
	}
	if (cnt_seal_dir_open(&s, sealdir, 0, &err) != 0) {
		CHECK(err.msg[0] != '\0');
	} else {
		CHECK(r->ok && s.lines == r->lines && same_fp(s.last, r->last) && s.n == r->lines);
		for (size_t i = 0; i < s.n; i++) {
			const cnt_seal_entry *e = &s.e[i], *st = cnt_seal_find(&s, e->season_id, e->scope);

			CHECK(e->line == i + 1 && e->season_id[0] && e->board_id[0] && e->scope[0] && e->at);
			CHECK(e->file && inside(e->file) && st != NULL);
			if (e->kind == CNT_SEAL_STANDINGS) {
				CHECK(st == e && e->seq == 0 && e->nrids == 0);
			} else {
				CHECK(e->kind == CNT_SEAL_CORRECTIONS && st < e && e->seq >= 1);
				CHECK(strcmp(st->board_id, e->board_id) == 0);
				for (size_t k = 0; k < e->nrids; k++)
					CHECK(e->rids[k] != NULL);
			}
		}
	}
	cnt_seal_dir_close(&s);
	err.msg[0] = '\0';
	rc = cnt_seal_verify(sealdir, &files, &err);
	CHECK(rc >= -1 && rc <= 1);
	if (rc != 0)
		CHECK(err.msg[0] != '\0');
	else
		CHECK(r->ok && r->lines == 0 && files == 0); /* no published file exists */
}

/* ---- the retraction ledger ---- */

static void read_retractions(const uint8_t *data, size_t size, const ref *r)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_fpset done;
	cnt_fp last;
	int fd = fuzz_input_fd("fuzz_ledger", data, size), has = 0, rc;

	if (fd < 0)
		return;
	if (cnt_fpset_init(&done, 16) == 0) {
		if (cnt_retract_ledger_load(fd, "fuzz", &done, &last, &err) != 0)
			CHECK(err.msg[0] != '\0');
		else
			CHECK(r->ok && same_fp(last, r->last));
		cnt_fpset_release(&done);
	}

	err.msg[0] = '\0';
	if (lseek(fd, 0, SEEK_SET) == 0) {
		rc = cnt_audit_ledger_has(fd, "fuzz", r->rid ? r->rid : "r-none", &has, &err);
		CHECK((rc == 0) == r->ok);
		if (rc != 0)
			CHECK(err.msg[0] != '\0');
		else if (r->rid)
			CHECK(has == 1);
	}

	/* cnt-seal correct's read of --retractions: with nothing sealed it
	 * fails after the walk, whatever the ledger. */
	err.msg[0] = '\0';
	if (lseek(fd, 0, SEEK_SET) == 0) {
		static const cnt_leaderboard board = {.board_id = "acme-league", .tenant_id = "acme",
			.counter_id = "distance_m"};
		cnt_board_build bb;
		cnt_seal_dir s;

		memset(&bb, 0, sizeof(bb));
		memset(&s, 0, sizeof(s));
		s.fd = -1;
		bb.board = &board;
		bb.label = "w43";
		CHECK(cnt_seal_correct(&s, &bb, NULL, fd, "fuzz", 0, &err) != 0 && err.msg[0] != '\0');
		cnt_seal_dir_close(&s);
	}
	close(fd);
}

/* ---- a correction of a sealed season ---- */

#define W43_CLOSE_MS INT64_C(1792972800000)   /* 2026-10-26T00:00:00Z */
#define HOUR_MS INT64_C(3600000)
#define SEAL_NOW (W43_CLOSE_MS + 2 * HOUR_MS)
#define CORRECT_NOW (W43_CLOSE_MS + 48 * HOUR_MS)
/* The retraction correction 1 names (that of cnt-retract in
 * retraction-ledger-member.jsonl). */
#define SETUP_RID "r-fdd48669007bfed861a7b9b211b7a59c"

static const char season_defs[] =
	"{\"format\": \"cnt-definitions/1\","
	" \"tenants\": [{\"tenant_id\": \"acme\", \"timezone\": \"UTC\"}],"
	" \"counters\": [{\"tenant_id\": \"acme\", \"counter_id\": \"distance_m\", \"versions\": ["
	"   {\"version\": 1, \"type\": \"exact\", \"lateness_horizon_s\": 3600, \"windows\": [\"season\"]}]}],"
	" \"leaderboards\": [{\"board_id\": \"acme-league\", \"tenant_id\": \"acme\", \"counter_id\": \"distance_m\","
	"   \"window\": \"season\", \"scope_kind\": \"global\", \"tie_break\": [\"member_ref_asc\"],"
	"   \"rank_numbering\": \"competition\"}],"
	" \"seasons\": [{\"season_id\": \"w43\", \"board_id\": \"acme-league\", \"opens_at\": \"2026-10-19T00:00:00\","
	"   \"closes_at\": \"2026-10-26T00:00:00\", \"state\": \"closing\"}]}";

static const char setup_ledger[] =
	"{\"retraction_id\":\"" SETUP_RID "\",\"selector\":{\"tenant_id\":\"acme\",\"counter_id\":\"distance_m\","
	"\"member_ref\":\"m-cheat\"},\"prev\":\"00000000000000000000000000000000\"}\n";

static char sealed[64];
static cnt_defs *sdefs;
static cnt_board_build revised;   /* w43 as revised, built once */
static int sealed_state;          /* 0 not made yet, 1 made, -1 cannot be made */

static void setup_failed(const char *what, const cnt_err *err)
{
	fprintf(stderr, "fuzz_ledger: making the sealed season: %s: %s\n", what, err ? err->msg : "");
	__builtin_trap();
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

static void sealed_remove(void)
{
	if (sealed_state == 1)
		cnt_board_end(&revised);
	sealed_state = -1;
	cnt_defs_free(sdefs);
	sdefs = NULL;
	if (sealed[0])
		nftw(sealed, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* w43 of n members (an hourly bucket each on the season's last day),
 * projected and ranked. */
static void season_build(cnt_board_build *bb, size_t n, const char *const *members, const int64_t *sums)
{
	cnt_err err = {"", CNT_ERR_DATA};

	if (cnt_seal_begin(bb, sdefs, "fuzz-defs", "w43", SEAL_NOW, 1, NULL, NULL, &err) != 0)
		setup_failed("cnt_seal_begin", &err);
	for (size_t i = 0; i < n; i++) {
		cnt_bucket b;

		memset(&b, 0, sizeof(b));
		b.tenant_id = (cnt_slice){"acme", 4};
		b.counter_id = (cnt_slice){"distance_m", 10};
		b.counter_version = 1;
		b.member_ref = (cnt_slice){members[i], strlen(members[i])};
		b.bucket_start = W43_CLOSE_MS - (int64_t)(i + 1) * HOUR_MS;
		b.bucket_end = b.bucket_start + HOUR_MS;
		b.count = 1;
		b.sum = sums[i];
		b.has_last = 1;
		b.last_event_time = b.bucket_start;
		b.max_ingest_time = b.bucket_start + 60000;
		if (cnt_proj_add_bucket(bb->proj, &b, &err) != 0)
			setup_failed("cnt_proj_add_bucket", &err);
	}
	if (cnt_proj_finish(bb->proj, &err) != 0)
		setup_failed("cnt_proj_finish", &err);
}

/* Seals w43 and publishes correction 1, once a process: 1 when the
 * directory is there, -1 when /tmp has no room for it. */
static int sealed_make(void)
{
	static const char *const m_sealed[] = {"m-a", "m-b", "m-c"}, *const m_now[] = {"m-a", "m-c"};
	static const int64_t v_sealed[] = {10, 20, 5}, v_first[] = {10, 5}, v_revised[] = {10, 12};
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_board_build bb;
	cnt_seal_dir s;
	int fd;

	if (sealed_state)
		return sealed_state;
	sealed_state = -1;
	strcpy(sealed, "/tmp/fuzz_ledger_sealed.XXXXXX");
	if (mkdtemp(sealed) == NULL) {
		sealed[0] = 0;
		return -1;
	}
	atexit(sealed_remove);
	if ((sdefs = cnt_defs_parse(season_defs, sizeof(season_defs) - 1, "fuzz-defs", &err)) == NULL)
		setup_failed("cnt_defs_parse", &err);
	/* cnt-seal close */
	season_build(&bb, 3, m_sealed, v_sealed);
	if (cnt_seal_dir_open(&s, sealed, 1, &err) != 0 || cnt_seal_close(&s, &bb, NULL, SEAL_NOW, &err) != 0 ||
	    s.nouts != 1 || cnt_seal_commit(&s, NULL, NULL, &err) != 0)
		setup_failed("close", &err);
	cnt_seal_dir_close(&s);
	cnt_board_end(&bb);
	/* cnt-seal correct: m-b retracted */
	season_build(&bb, 2, m_now, v_first);
	if ((fd = fuzz_input_fd("fuzz_ledger", (const uint8_t *)setup_ledger, sizeof(setup_ledger) - 1)) < 0)
		setup_failed("memfd", NULL);
	if (cnt_seal_dir_open(&s, sealed, 1, &err) != 0 ||
	    cnt_seal_correct(&s, &bb, NULL, fd, "setup", SEAL_NOW + HOUR_MS, &err) != 0 || s.nouts != 1 ||
	    cnt_seal_commit(&s, NULL, NULL, &err) != 0)
		setup_failed("correct", &err);
	close(fd);
	cnt_seal_dir_close(&s);
	cnt_board_end(&bb);
	/* the revision every input is asked to correct: m-c 12 overtakes m-a */
	season_build(&revised, 2, m_now, v_revised);
	sealed_state = 1;
	return 1;
}

/* The retractions of acme/distance_m a ledger names, as cnt_seal_correct
 * reads them: a line's retraction_id, else its erasure_id (a line with
 * neither, or with a "kind" other than "erasure", is refused), unless its
 * selector names another tenant or counter; each id once, where it is
 * first named. */
typedef struct rids {
	int bad, oom;
	char **ids;
	size_t n;
} rids;

static const char *sel_str(json_t *sel, const char *key)
{
	json_t *v = json_is_object(sel) ? json_object_get(sel, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int collect_rid(void *ctx, json_t *rec, size_t lineno, const char *line, size_t len, cnt_err *err)
{
	rids *m = ctx;
	json_t *id = json_object_get(rec, "retraction_id"), *sel = json_object_get(rec, "selector");
	json_t *kind = json_object_get(rec, "kind");
	const char *t = sel_str(sel, "tenant_id"), *c = sel_str(sel, "counter_id");
	char **v;

	(void)lineno, (void)line, (void)len, (void)err;
	if (!json_is_string(id))
		id = json_object_get(rec, "erasure_id");
	if (!json_is_string(id) ||
	    (kind != NULL && (!json_is_string(kind) || strcmp(json_string_value(kind), "erasure") != 0))) {
		m->bad = 1;
		return 0;
	}
	if (json_object_get(rec, "counters") != NULL) {
		/* the counters its events belong to: acme/distance_m among
		 * them, each an object of two strings, else a refusal */
		json_t *a = json_object_get(rec, "counters"), *o;
		size_t k;
		int hit = 0;

		if (!json_is_array(a)) {
			m->bad = 1;
			return 0;
		}
		json_array_foreach(a, k, o) {
			json_t *tj = json_object_get(o, "tenant_id"), *cj = json_object_get(o, "counter_id");

			if (!json_is_string(tj) || !json_is_string(cj)) {
				m->bad = 1;
				return 0;
			}
			hit |= json_string_length(tj) == 4 && memcmp(json_string_value(tj), "acme", 4) == 0 &&
				json_string_length(cj) == 10 && memcmp(json_string_value(cj), "distance_m", 10) == 0;
		}
		if (!hit)
			return 0;
	} else if ((t && strcmp(t, "acme") != 0) || (c && strcmp(c, "distance_m") != 0)) {
		return 0;
	}
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->ids[i], json_string_value(id)) == 0)
			return 0;
	if ((v = realloc(m->ids, (m->n + 1) * sizeof(*v))) == NULL || (v[m->n] = strdup(json_string_value(id))) == NULL) {
		if (v)
			m->ids = v;
		m->oom = 1;
		return 0;
	}
	m->ids = v;
	m->n++;
	return 0;
}

/* Whether a is a list of exactly the n strings want. */
static int ids_are(json_t *a, char *const *want, size_t n)
{
	if (!json_is_array(a) || json_array_size(a) != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		json_t *v = json_array_get(a, i);

		if (!json_is_string(v) || strcmp(json_string_value(v), want[i]) != 0)
			return 0;
	}
	return 1;
}

static int int_is(json_t *o, const char *key, json_int_t v)
{
	json_t *x = json_object_get(o, key);

	return json_is_integer(x) && json_integer_value(x) == v;
}

static int str_is(json_t *o, const char *key, const char *v)
{
	json_t *x = json_object_get(o, key);

	return json_is_string(x) && strcmp(json_string_value(x), v) == 0;
}

/* What a prepared correction must be: the corrections file of w43 number
 * 2 with the records of m-c (5, 2 -> 12, 1) and m-a (10, 1 -> 10, 2),
 * each naming want, and its ledger line chained to the sealed ledger. */
static void check_prepared(const cnt_seal_dir *s, char *const *want, size_t nwant, cnt_fp rhead)
{
	static const struct {
		const char *member, *change;
		json_int_t pv, pr, rv, rr;
	} exp[2] = {{"m-c", "value", 5, 2, 12, 1}, {"m-a", "rank", 10, 1, 10, 2}};
	const cnt_seal_out *o = &s->outs[0];
	char path[128], hx[33];
	const char *p = (const char *)o->bytes.p, *end = p + o->bytes.len;
	size_t k = 0;
	json_t *rec;

	snprintf(path, sizeof(path), "%s/w43/global/corrections-000002.jsonl", sealed);
	CHECK(s->nouts == 1 && o->seq == 2 && o->records == 2 && s->changed == 2 && strcmp(o->scope, "global") == 0);
	CHECK(strcmp(o->path, path) == 0 && !o->opened && !o->linked);
	CHECK(nwant > 0);
	/* the records */
	CHECK(o->bytes.len > 0 && end[-1] == '\n');
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		CHECK(k < 2);
		rec = json_loadb(p, (size_t)(nl - p), JSON_REJECT_DUPLICATES, NULL);
		CHECK(rec != NULL);
		CHECK(str_is(rec, "season_id", "w43") && str_is(rec, "board_id", "acme-league") &&
			str_is(rec, "scope", "global") && str_is(rec, "member_ref", exp[k].member) &&
			str_is(rec, "change", exp[k].change) && int_is(rec, "prior_value", exp[k].pv) &&
			int_is(rec, "prior_rank", exp[k].pr) && int_is(rec, "revised_value", exp[k].rv) &&
			int_is(rec, "revised_rank", exp[k].rr));
		CHECK(json_is_string(json_object_get(rec, "correction_id")));
		CHECK(ids_are(json_object_get(rec, "retraction_ids"), want, nwant));
		json_decref(rec);
		k++;
		p = nl + 1;
	}
	CHECK(k == 2);
	/* its ledger line */
	CHECK(s->append.len > 0 && s->append.p[s->append.len - 1] == '\n' &&
		memchr(s->append.p, '\n', s->append.len) == s->append.p + s->append.len - 1);
	CHECK(s->new_lines == s->lines + 1 && s->lines == 2);
	CHECK(same_fp(s->new_last, cnt_ledger_hash(s->append.p, s->append.len - 1)));
	rec = json_loadb((const char *)s->append.p, s->append.len - 1, JSON_REJECT_DUPLICATES, NULL);
	CHECK(rec != NULL);
	CHECK(str_is(rec, "kind", "corrections") && str_is(rec, "season_id", "w43") &&
		str_is(rec, "board_id", "acme-league") && str_is(rec, "scope", "global") &&
		str_is(rec, "file", "w43/global/corrections-000002.jsonl") && int_is(rec, "seq", 2) &&
		int_is(rec, "records", 2));
	cnt_ledger_hex(cnt_ledger_hash(o->bytes.p, o->bytes.len), hx);
	CHECK(str_is(rec, "digest", hx));
	cnt_ledger_hex(s->last, hx);
	CHECK(str_is(rec, "prev", hx));
	cnt_ledger_hex(rhead, hx);
	CHECK(str_is(rec, "retractions_head", hx));
	CHECK(ids_are(json_object_get(rec, "retraction_ids"), want, nwant));
	json_decref(rec);
}

static void read_correct(const uint8_t *data, size_t size, const ref *r)
{
	cnt_err err = {"", CNT_ERR_DATA};
	const char *scope = size & 1 ? "global" : NULL;
	rids m = {0, 0, NULL, 0};
	char **want = NULL, path[128];
	size_t nwant = 0, lines;
	cnt_seal_dir s;
	cnt_fp last;
	struct stat st;
	int fd, rc, walked, names;

	if (sealed_make() != 1)
		return;
	walked = cnt_ledger_walk(data, size, "retraction ledger", "fuzz", collect_rid, &m, &last, &lines, &err) == 0;
	CHECK(walked == r->ok);
	if (m.oom || (fd = fuzz_input_fd("fuzz_ledger", data, size)) < 0)
		goto out;
	names = walked && !m.bad && m.n > 0;
	/* the retractions no earlier correction named, else all of them */
	if (names && (want = malloc(m.n * sizeof(*want))) == NULL) {
		close(fd);
		goto out;
	}
	for (size_t i = 0; names && i < m.n; i++)
		if (strcmp(m.ids[i], SETUP_RID) != 0)
			want[nwant++] = m.ids[i];
	if (names && nwant == 0)
		for (; nwant < m.n; nwant++)
			want[nwant] = m.ids[nwant];

	err.msg[0] = '\0';
	CHECK(cnt_seal_dir_open(&s, sealed, 0, &err) == 0 && s.n == 2 && s.nouts == 0);
	rc = cnt_seal_correct(&s, &revised, scope, fd, "fuzz", CORRECT_NOW, &err);
	close(fd);
	if (rc != 0) {
		/* refused: a broken ledger, or none of acme/distance_m */
		CHECK(err.msg[0] != '\0' && !names);
	} else {
		CHECK(names);
		check_prepared(&s, want, nwant, last);
	}
	cnt_seal_dir_close(&s);
	/* prepared, never published */
	snprintf(path, sizeof(path), "%s/w43/global/corrections-000002.jsonl", sealed);
	CHECK(lstat(path, &st) != 0 && errno == ENOENT);
out:
	free(want);
	for (size_t i = 0; i < m.n; i++)
		free(m.ids[i]);
	free(m.ids);
}

/* The bytes with the "prev" of each line (its first "prev":"<32 bytes>")
 * made the hash of the line before, so that mutations of a line reach
 * the readers' checks of its fields rather than stopping at the chain.
 * NULL when that changes nothing (or out of memory). */
static uint8_t *rechain(const uint8_t *data, size_t size)
{
	static const char key[] = "\"prev\":\"";
	uint8_t *p = malloc(size ? size : 1);
	cnt_fp prev = {0, 0};
	size_t off = 0;

	if (p == NULL)
		return NULL;
	memcpy(p, data, size);
	while (off < size) {
		uint8_t *line = p + off, *nl = memchr(line, '\n', size - off), *k;
		size_t len;

		if (nl == NULL)
			break;
		len = (size_t)(nl - line);
		k = memmem(line, len, key, sizeof(key) - 1);
		if (k && (size_t)(k - line) + sizeof(key) - 1 + 32 <= len) {
			char hx[33];

			cnt_ledger_hex(prev, hx);
			memcpy(k + sizeof(key) - 1, hx, 32);
		}
		prev = cnt_ledger_hash(line, len);
		off += len + 1;
	}
	if (memcmp(p, data, size) == 0) {
		free(p);
		return NULL;
	}
	return p;
}

static void read_all(const uint8_t *data, size_t size)
{
	ref r;

	walk_ref(data, size, &r);
	read_audit(data, size, &r);
	read_seal(data, size, &r);
	read_retractions(data, size, &r);
	read_correct(data, size, &r);
	free(r.rid);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *chained = rechain(data, size);

	read_all(data, size);
	if (chained) {
		read_all(chained, size);
		free(chained);
	}
	return 0;
}
