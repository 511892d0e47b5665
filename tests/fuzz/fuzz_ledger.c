/*
 * fuzz_ledger.c - libFuzzer target for the readers of the hash-chained
 * JSON-lines ledgers (lib/correct/ledger.c): the audit ledger
 * (cnt_auditlog_load, lib/correct/auditlog.c), the seal ledger
 * (cnt_seal_dir_open and cnt_seal_verify on a directory holding the bytes
 * as ledger.jsonl, lib/correct/seal.c) and the retraction ledger
 * (cnt_retract_ledger_load, lib/correct/retract.c; cnt_audit_ledger_has,
 * lib/correct/audit.c; the read of --retractions by cnt_seal_correct,
 * lib/correct/seal.c, reached with no sealed scope so that it stops right
 * after the walk).
 *
 * The seeds in tests/fuzz/corpus/fuzz_ledger/ are ledgers written by the
 * tools: audit ledgers and a retraction ledger by cnt-audit, a
 * retraction ledger with an erasure by cnt-retract and cnt-erase, seal
 * ledgers (standings, then corrections) by cnt-seal close and correct,
 * and truncated or corrupted copies of them.  Whatever the bytes: an
 * error with a message, or a ledger that agrees with the plain walk
 * (cnt_ledger_walk without a callback: same lines, same last hash) and
 * with its own rules: audit entries with ids, 0 <= flagged <= examined,
 * unique audit ids, "through" never going back for a pair, and a line
 * cnt_auditlog_line() makes for it loading back; seal entries one a line,
 * each scope sealed once, corrections numbered 1, 2, ... after their
 * standings on the same board, files three components deep inside the
 * directory.  Never a crash, a leak or a hang.  The bytes are read as
 * they are and, when that differs, with the "prev" of every line fixed
 * to chain (most mutations break the chain, which would hide the checks
 * after it).  The seal directory is made once a process under /tmp and
 * removed at exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "correct/audit.h"
#include "correct/auditlog.h"
#include "correct/ledger.h"
#include "correct/retract.h"
#include "correct/seal.h"
#include "fuzz_input.h"

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
