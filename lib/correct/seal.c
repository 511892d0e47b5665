/*
 * seal.c - sealed standings, corrections and the seal ledger (see seal.h
 * and cnt-sealed(5)).
 */
#include "correct/seal.h"
#include "base/jsonload.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "avro/json.h"
#include "base/text.h"
#include "correct/ledger.h"
#include "correct/retract.h"
#include "model/fingerprint.h"
#include "time/timefmt.h"
#include "view/project.h"
#include "view/view.h"

#define SCOPE_MAX 1024   /* bytes of a scope key in a ledger line */

/* ---- small helpers ---- */

static char *dupz(const char *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

static cnt_fp member_fp(const char *p, size_t n)
{
	const void *parts[1] = {p};
	size_t lens[1] = {n};

	return cnt_fp_of(1, parts, lens);
}

/* The file of (season, scope, seq) relative to DIR into buf: seq 0 the
 * standings, else corrections-<seq>.  0, or -1 when it does not fit. */
static int rel_path(char *buf, size_t n, const char *season, const char *scope, int seq)
{
	char tmp[4096];
	int k;

	if (cnt_viewdir_path(tmp, sizeof(tmp), ".", season, scope) != 0)
		return -1;
	if (seq == 0)
		k = snprintf(buf, n, "%s/standings.jsonl", tmp + 2);
	else
		k = snprintf(buf, n, "%s/corrections-%06d.jsonl", tmp + 2, seq);
	return k < 0 || (size_t)k >= n ? -1 : 0;
}

static int full_path(char *buf, size_t n, const char *dir, const char *rel)
{
	int k = snprintf(buf, n, "%s/%s", dir, rel);

	return k < 0 || (size_t)k >= n ? -1 : 0;
}

static int json_dump_line(json_t *o, cnt_buf *out)
{
	char *text = cnt_json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	int rc = -1;

	if (text && cnt_buf_append(out, text, strlen(text)) == 0 && cnt_buf_putc(out, '\n') == 0)
		rc = 0;
	free(text);
	return rc;
}

static json_t *time_json(int64_t ms)
{
	char t[32];

	cnt_time_format_rfc3339(ms, t);
	return json_string(t);
}

/* A string field of rec, or NULL. */
static const char *str_field(json_t *rec, const char *key)
{
	json_t *v = json_object_get(rec, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int int_field(json_t *rec, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
	json_t *v = json_object_get(rec, key);

	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return -1;
	*out = json_integer_value(v);
	return 0;
}

/* The final value of an approx or unique board is an estimate: the
 * standing says so, with its bound at 95 % (count/estimate.h), null when
 * unknown.  0, or -1 when out of memory. */
static int seal_estimate(json_t *rec, int64_t error)
{
	return json_object_set_new(rec, "estimate", json_true()) ||
	       json_object_set_new(rec, "final_error", error < 0 ? json_null() : json_integer(error));
}

static int time_field(json_t *rec, const char *key, int64_t *ms)
{
	const char *s = str_field(rec, key);

	return s == NULL || cnt_time_parse_rfc3339(s, strlen(s), ms) != 0 ? -1 : 0;
}

/* ---- the ledger ---- */

static void entry_release(cnt_seal_entry *e)
{
	free(e->season_id);
	free(e->board_id);
	free(e->scope);
	free(e->file);
	free(e->at);
	for (size_t i = 0; i < e->nrids; i++)
		free(e->rids[i]);
	free(e->rids);
}

static int bad_entry(cnt_seal_dir *s, size_t line, const char *why, cnt_err *err)
{
	s->damaged = 1;
	return cnt_err_set(err, "seal ledger '%s/" CNT_SEAL_LEDGER "' line %zu: %s", s->dir, line, why);
}

static int entry_parse(void *ctx, json_t *rec, size_t lineno, const char *line, size_t len, cnt_err *err)
{
	cnt_seal_dir *s = ctx;
	cnt_seal_entry e, *v;
	const char *kind = str_field(rec, "kind"), *season = str_field(rec, "season_id");
	const char *board = str_field(rec, "board_id"), *scope = str_field(rec, "scope");
	const char *file = str_field(rec, "file"), *digest = str_field(rec, "digest"), *at;
	char want[4096];
	int64_t records, seq = 0, t;
	json_t *ids;

	(void)line;
	(void)len;
	memset(&e, 0, sizeof(e));
	e.line = lineno;
	if (kind == NULL || (strcmp(kind, "standings") != 0 && strcmp(kind, "corrections") != 0))
		return bad_entry(s, lineno, "\"kind\" is not \"standings\" or \"corrections\"", err);
	e.kind = strcmp(kind, "standings") == 0 ? CNT_SEAL_STANDINGS : CNT_SEAL_CORRECTIONS;
	if (season == NULL || *season == 0 || strlen(season) > CNT_DEFS_ID_MAX || board == NULL || *board == 0 ||
	    strlen(board) > CNT_DEFS_ID_MAX || scope == NULL || *scope == 0 || strlen(scope) > SCOPE_MAX)
		return bad_entry(s, lineno, "no valid season_id, board_id or scope", err);
	if (int_field(rec, "records", 0, INT64_MAX, &records) != 0)
		return bad_entry(s, lineno, "\"records\" is not a count", err);
	if (digest == NULL || cnt_ledger_hex_parse(digest, &e.digest) != 0)
		return bad_entry(s, lineno, "\"digest\" is not 32 hex digits", err);
	at = e.kind == CNT_SEAL_STANDINGS ? "sealed_at" : "published_at";
	if (time_field(rec, at, &t) != 0)
		return bad_entry(s, lineno, e.kind == CNT_SEAL_STANDINGS ? "\"sealed_at\" is not a time" :
			"\"published_at\" is not a time", err);
	if (e.kind == CNT_SEAL_CORRECTIONS) {
		const cnt_seal_entry *st = cnt_seal_find(s, season, scope);
		int64_t have = 0;

		if (st == NULL)
			return bad_entry(s, lineno, "corrections of a scope that is not sealed", err);
		for (size_t i = 0; i < s->n; i++)
			if (s->e[i].kind == CNT_SEAL_CORRECTIONS && strcmp(s->e[i].season_id, season) == 0 &&
			    strcmp(s->e[i].scope, scope) == 0)
				have++;
		if (int_field(rec, "seq", 1, 999999, &seq) != 0 || seq != have + 1)
			return bad_entry(s, lineno, "\"seq\" is not the next correction number", err);
		if (strcmp(st->board_id, board) != 0)
			return bad_entry(s, lineno, "\"board_id\" is not the sealed standings' board", err);
		ids = json_object_get(rec, "retraction_ids");
		if (!json_is_array(ids))
			return bad_entry(s, lineno, "\"retraction_ids\" is not a list", err);
		for (size_t i = 0; i < json_array_size(ids); i++)
			if (!json_is_string(json_array_get(ids, i)))
				return bad_entry(s, lineno, "a retraction id is not a string", err);
	} else if (cnt_seal_find(s, season, scope)) {
		return bad_entry(s, lineno, "the scope is sealed twice", err);
	}
	e.seq = (int)seq;
	e.records = (uint64_t)records;
	if (rel_path(want, sizeof(want), season, scope, e.seq) != 0)
		return bad_entry(s, lineno, "path too long", err);
	if (file == NULL || strcmp(file, want) != 0)
		return bad_entry(s, lineno, "\"file\" is not the path its season, scope and kind give", err);
	if ((e.season_id = strdup(season)) == NULL || (e.board_id = strdup(board)) == NULL ||
	    (e.scope = strdup(scope)) == NULL || (e.file = strdup(file)) == NULL ||
	    (e.at = strdup(str_field(rec, at))) == NULL)
		goto nomem;
	if (e.kind == CNT_SEAL_CORRECTIONS) {
		ids = json_object_get(rec, "retraction_ids");
		if (json_array_size(ids) && (e.rids = calloc(json_array_size(ids), sizeof(char *))) == NULL)
			goto nomem;
		for (size_t i = 0; i < json_array_size(ids); i++) {
			if ((e.rids[i] = strdup(json_string_value(json_array_get(ids, i)))) == NULL)
				goto nomem;
			e.nrids++;
		}
	}
	v = realloc(s->e, (s->n + 1) * sizeof(*v));
	if (v == NULL)
		goto nomem;
	s->e = v;
	s->e[s->n++] = e;
	return 0;
nomem:
	entry_release(&e);
	return cnt_err_oom(err, "reading the seal ledger");
}

/* Checks DIR/ledger.head against the ledger read. */
static int head_check(cnt_seal_dir *s, cnt_err *err)
{
	char path[4200], want[80], hx[33];
	cnt_buf b = CNT_BUF_INIT;
	int fd, rc = -1;

	snprintf(path, sizeof(path), "%s/" CNT_SEAL_HEAD, s->dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT && s->lines == 0)
			return 0;
		s->damaged = errno == ENOENT;
		return cnt_err_set(err, "seal ledger head '%s': %s", path, strerror(errno));
	}
	if (cnt_ledger_slurp(fd, path, &b, err) != 0)
		goto out;
	cnt_ledger_hex(s->last, hx);
	snprintf(want, sizeof(want), "%zu %s\n", s->lines, hx);
	if (b.len != strlen(want) || memcmp(b.p, want, b.len) != 0) {
		s->damaged = 1;
		cnt_err_set(err, "seal ledger head '%s' does not match the ledger (%zu lines ending in %s): "
			"the ledger or its head changed", path, s->lines, hx);
		goto out;
	}
	rc = 0;
out:
	close(fd);
	cnt_buf_release(&b);
	return rc;
}

int cnt_seal_dir_open(cnt_seal_dir *s, const char *dir, int write, cnt_err *err)
{
	char path[4200];
	cnt_buf b = CNT_BUF_INIT;
	int fd = -1, rc = -1;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (strlen(dir) >= sizeof(s->dir) - 64)
		return cnt_err_set(err, "sealed directory '%s': path too long", dir);
	strcpy(s->dir, dir);
	if (write && mkdir(dir, 0777) != 0 && errno != EEXIST)
		return cnt_err_set(err, "cannot create the sealed directory '%s': %s", dir, strerror(errno));
	/* The directory is the lock, so that the ledger is created only
	 * when something is published. */
	s->fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->fd < 0) {
		if (!write && errno == ENOENT)
			return cnt_err_set(err, "'%s' is not a sealed directory (it does not exist)", dir);
		return cnt_err_set(err, "cannot open the sealed directory '%s': %s", dir, strerror(errno));
	}
	if (flock(s->fd, write ? LOCK_EX : LOCK_SH) != 0)
		return cnt_err_set(err, "cannot lock the sealed directory '%s': %s", dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/" CNT_SEAL_LEDGER, dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			return cnt_err_set(err, "cannot open the seal ledger '%s': %s", path, strerror(errno));
		if (!write)
			return cnt_err_set(err, "'%s' is not a sealed directory (it has no " CNT_SEAL_LEDGER ")", dir);
	} else if (cnt_ledger_slurp(fd, path, &b, err) != 0) {
		goto out;
	}
	if (cnt_ledger_walk(b.p, b.len, "seal ledger", path, entry_parse, s, &s->last, &s->lines, err) != 0) {
		if (err->kind == CNT_ERR_DATA)
			s->damaged = 1;
		goto out;
	}
	if (head_check(s, err) != 0)
		goto out;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	cnt_buf_release(&b);
	return rc;
}

void cnt_seal_dir_close(cnt_seal_dir *s)
{
	for (size_t i = 0; i < s->n; i++)
		entry_release(&s->e[i]);
	free(s->e);
	for (size_t i = 0; i < s->nouts; i++) {
		if (s->outs[i].opened)
			cnt_out_abort(&s->outs[i].out);
		free(s->outs[i].scope);
		cnt_buf_release(&s->outs[i].bytes);
	}
	free(s->outs);
	cnt_buf_release(&s->append);
	if (s->fd >= 0)
		close(s->fd);
	s->e = NULL;
	s->outs = NULL;
	s->n = s->nouts = 0;
	s->fd = -1;
}

const cnt_seal_entry *cnt_seal_find(const cnt_seal_dir *s, const char *season, const char *scope)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->e[i].kind == CNT_SEAL_STANDINGS && strcmp(s->e[i].season_id, season) == 0 &&
		    strcmp(s->e[i].scope, scope) == 0)
			return &s->e[i];
	return NULL;
}

/* ---- the season's standings ---- */

int64_t cnt_seal_horizon_s(const cnt_leaderboard *b)
{
	const cnt_counter_version *pinned;
	int64_t h = 0;

	if (b->counter_version && (pinned = cnt_counter_version_get(b->counter, b->counter_version)) != NULL)
		return pinned->lateness_horizon_s;
	for (size_t i = 0; i < b->counter->nversions; i++)
		if (b->counter->versions[i].lateness_horizon_s > h)
			h = b->counter->versions[i].lateness_horizon_s;
	return h;
}

int cnt_seal_begin(cnt_board_build *bb, const cnt_defs *defs, const char *defs_name, const char *season_id,
	int64_t now, int check_horizon, const char *scopes, const char *scopes_from, cnt_err *err)
{
	const cnt_season *se = cnt_defs_season(defs, season_id, strlen(season_id));
	int64_t h, may;
	char tc[32], tm[32], tn[32];

	memset(bb, 0, sizeof(*bb));
	if (se == NULL)
		return cnt_err_set(err, "season '%s' is not declared in '%s'", season_id, defs_name);
	if (se->board->window != CNT_WIN_SEASON)
		return cnt_err_set(err, "season '%s': board '%s' has a %s window, not a season one", season_id,
			se->board_id, cnt_defs_window_name(se->board->window));
	if (cnt_board_begin(bb, defs, defs_name, se->board_id, &now, season_id, scopes, scopes_from, err) != 0)
		return -1;
	if (!check_horizon)
		return 0;
	h = cnt_seal_horizon_s(se->board);
	if (__builtin_mul_overflow(h, 1000, &may) || __builtin_add_overflow(may, bb->to, &may))
		may = INT64_MAX;
	if (now > may)
		return 0;
	cnt_time_format_rfc3339(bb->to, tc);
	cnt_time_format_rfc3339(may, tm);
	cnt_time_format_rfc3339(now, tn);
	cnt_board_end(bb);
	return cnt_err_set(err, "season '%s' closes at %s (%s); events may still arrive on time until the "
		"lateness horizon of %s/%s (%" PRId64 " s) has passed: it may be sealed after %s, not at %s",
		season_id, se->closes_at.text, tc, se->board->tenant_id, se->board->counter_id, h, tm, tn);
}

/* ---- preparing files ---- */

static cnt_seal_out *new_out(cnt_seal_dir *s, const char *scope, int seq, cnt_err *err)
{
	cnt_seal_out *v = realloc(s->outs, (s->nouts + 1) * sizeof(*v)), *o;

	if (v == NULL)
		return cnt_err_nomem(err), NULL;
	s->outs = v;
	o = &v[s->nouts];
	memset(o, 0, sizeof(*o));
	if ((o->scope = strdup(scope)) == NULL)
		return cnt_err_nomem(err), NULL;
	s->nouts++;
	o->seq = seq;
	return o;
}

/* The ledger line of o (file rel) into s->append, chained. */
static int add_line(cnt_seal_dir *s, json_t *rec, cnt_err *err)
{
	char hx[33];
	size_t before = s->append.len;

	if (s->new_lines == 0) {
		s->new_last = s->last;
		s->new_lines = s->lines;
	}
	cnt_ledger_hex(s->new_last, hx);
	if (json_object_set_new(rec, "prev", json_string(hx)) != 0 || json_dump_line(rec, &s->append) != 0)
		return cnt_err_nomem(err);
	s->new_last = cnt_ledger_hash(s->append.p + before, s->append.len - before - 1);
	/* kept NUL-terminated for the append, which takes a string */
	if (cnt_buf_putc(&s->append, 0) != 0)
		return cnt_err_nomem(err);
	s->append.len--;
	s->new_lines++;
	return 0;
}

static int check_free(const cnt_seal_dir *s, const char *season, const char *scope, int seq, const char *rel,
	cnt_err *err)
{
	const cnt_seal_entry *e = cnt_seal_find(s, season, scope);
	char path[4200];
	struct stat st;

	if (seq == 0 && e)
		return cnt_err_set(err, "season '%s' scope '%s' is already sealed (seal ledger line %zu, '%s/%s'): "
			"a seal is never overwritten; publish changes with cnt-seal correct", season, scope, e->line,
			s->dir, e->file);
	snprintf(path, sizeof(path), "%s/%s", s->dir, rel);
	if (lstat(path, &st) == 0)
		return cnt_err_set(err, "'%s' exists but the seal ledger does not list it (an interrupted run?): "
			"it was never published; remove it and run again", path);
	return 0;
}

/* 0 when the member's name can be a JSON string in the standings and
 * corrections, or -1 with err set: bucket files hold what their writer
 * gave them, and cnt-ingest admits UTF-8 alone, so such a name comes from
 * files no cnt tool wrote.  The message shows its first 48 bytes by
 * cnt_shown's rule. */
static int nameable(const char *name, size_t len, const char *scope, cnt_err *err)
{
	char shown[CNT_SHOWN_SIZE(48)];

	if (cnt_json_text_ok(name, len))
		return 0;
	return cnt_err_set(err, "scope '%s': member_ref '%s' in the bucket files is not UTF-8 text without NUL bytes, "
		"which the standings cannot name (bucket files no cnt tool wrote?); nothing published", scope,
		cnt_shown(name, len, 48, shown));
}

int cnt_seal_close(cnt_seal_dir *s, cnt_board_build *bb, const char *scope, int64_t now, cnt_err *err)
{
	cnt_proj *p = bb->proj;
	const cnt_leaderboard *b = bb->board;
	size_t ns = cnt_proj_nscopes(p);
	int global = b->scope_kind == CNT_SCOPE_GLOBAL, found = 0;
	json_t *rec = NULL;
	int rc = -1;

	if (scope && global && strcmp(scope, "global") != 0)
		return cnt_err_set(err, "board '%s' is global: its one scope is 'global', not '%s'", b->board_id, scope);
	for (size_t i = 0; i <= ns; i++) {
		const char *sc = i < ns ? cnt_proj_scope(p, i) : "global";
		char rel[4096];
		cnt_view_build vb;
		cnt_seal_out *o;

		if (i == ns && (!global || found))
			break;   /* a global board with nobody counted still seals "global" */
		if (scope && strcmp(scope, sc) != 0)
			continue;
		found = 1;
		/* The scopes' readers refuse such a name already (cnt_board_read_scopes,
		 * cnt_proj_scope_from_event); this keeps the ledger safe from a new one. */
		if (!cnt_json_text_ok(sc, strlen(sc))) {
			char shown[CNT_SHOWN_SIZE(64)];

			return cnt_err_set(err, "board '%s': scope '%s' (from --scopes, or the events' scope attribute) "
				"is not UTF-8 text, which the ledger cannot name; nothing published", b->board_id,
				cnt_shown(sc, strlen(sc), 64, shown));
		}
		if (rel_path(rel, sizeof(rel), bb->label, sc, 0) != 0)
			return cnt_err_set(err, "scope '%s': path too long", sc);
		if (check_free(s, bb->label, sc, 0, rel, err) != 0)
			return -1;
		memset(&vb, 0, sizeof(vb));
		if (i < ns && cnt_proj_view(p, i, &vb, err) != 0)
			return -1;
		if ((o = new_out(s, sc, 0, err)) == NULL)
			return -1;
		if (full_path(o->path, sizeof(o->path), s->dir, rel) != 0)
			return cnt_err_set(err, "scope '%s': path too long", sc);
		for (size_t k = 0; k < vb.n; k++) {
			const cnt_view_entry *en = &vb.entries[k];

			if (nameable(vb.pool + en->name_off, en->name_len, sc, err) != 0)
				goto out;
			if ((rec = json_object()) == NULL ||
			    json_object_set_new(rec, "season_id", json_string(bb->label)) ||
			    json_object_set_new(rec, "board_id", json_string(b->board_id)) ||
			    json_object_set_new(rec, "scope", json_string(sc)) ||
			    json_object_set_new(rec, "member_ref", json_stringn(vb.pool + en->name_off, en->name_len)) ||
			    json_object_set_new(rec, "final_value", json_integer(en->value)) ||
			    json_object_set_new(rec, "final_rank", json_integer(en->rank)) ||
			    (vb.errors && seal_estimate(rec, vb.errors[k])) ||
			    json_object_set_new(rec, "sealed_at", time_json(now)) ||
			    json_dump_line(rec, &o->bytes) != 0)
				goto nomem;
			json_decref(rec);
			rec = NULL;
			o->records++;
		}
		{
			char hx[33];
			cnt_ledger_hex(cnt_ledger_hash(o->bytes.p, o->bytes.len), hx);
			if ((rec = json_object()) == NULL ||
			    json_object_set_new(rec, "kind", json_string("standings")) ||
			    json_object_set_new(rec, "season_id", json_string(bb->label)) ||
			    json_object_set_new(rec, "board_id", json_string(b->board_id)) ||
			    json_object_set_new(rec, "scope", json_string(sc)) ||
			    json_object_set_new(rec, "file", json_string(rel)) ||
			    json_object_set_new(rec, "records", json_integer((json_int_t)o->records)) ||
			    json_object_set_new(rec, "digest", json_string(hx)) ||
			    json_object_set_new(rec, "sealed_at", time_json(now)) ||
			    json_object_set_new(rec, "window_from", time_json(bb->from)) ||
			    json_object_set_new(rec, "window_to", time_json(bb->to)) ||
			    json_object_set_new(rec, "horizon_s", json_integer(cnt_seal_horizon_s(b))))
				goto nomem;
			/* the definitions the standings were counted and ranked
			 * under: the board's and its buckets' versions */
			{
				char *fps = NULL;
				json_t *t;

				if (cnt_fp_set_dump(cnt_proj_versions(p), b, &fps, err) != 0)
					goto out;
				json_error_t je;

				t = fps ? cnt_json_loads(fps, 0, &je) : json_null();
				free(fps);
				if (t == NULL || json_object_set_new(rec, "fingerprints", t) != 0)
					goto nomem;
			}
			if (add_line(s, rec, err) != 0)
				goto out;
			json_decref(rec);
			rec = NULL;
		}
	}
	if (scope && !found)
		return cnt_err_set(err, "season '%s' has no member in scope '%s'", bb->label, scope);
	return 0;
nomem:
	cnt_err_oom(err, "sealing");
out:
	json_decref(rec);
	return rc;
}

/* ---- reading what was published ---- */

typedef struct smember {
	char *name;
	size_t len;
	int has_final, present;
	int64_t final_value, final_rank, value, rank;
	int estimate;               /* the final value is an estimate ... */
	int64_t final_error;        /* ... within this bound at 95 % (-1: unknown) */
	json_t *corr;               /* show: the member's corrections */
} smember;

typedef struct sscope {
	const cnt_seal_entry *st;
	smember *m;
	size_t n, cap;
	cnt_fpset idx;              /* member -> position + 1 */
	int keep_corr;
} sscope;

static void sscope_release(sscope *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->m[i].name);
		json_decref(c->m[i].corr);
	}
	free(c->m);
	cnt_fpset_release(&c->idx);
}

static smember *sscope_get(sscope *c, const char *name, size_t len, int add, int *fresh)
{
	uint64_t at;
	int r;

	*fresh = 0;
	if (cnt_fpset_find(&c->idx, member_fp(name, len), &at))
		return &c->m[at - 1];
	if (!add)
		return NULL;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		smember *v = realloc(c->m, cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		c->m = v;
		c->cap = cap;
	}
	memset(&c->m[c->n], 0, sizeof(c->m[c->n]));
	if ((c->m[c->n].name = dupz(name, len)) == NULL)
		return NULL;
	c->m[c->n].len = len;
	r = cnt_fpset_add(&c->idx, member_fp(name, len), c->n + 1, &at);
	if (r < 0) {
		free(c->m[c->n].name);
		return NULL;
	}
	*fresh = 1;
	return &c->m[c->n++];
}

/* Reads DIR/<e->file> whole and checks its digest and line count. */
static int read_published(const cnt_seal_dir *s, const cnt_seal_entry *e, cnt_buf *b, int *changed, cnt_err *err)
{
	char path[4200], hx[33], want[33];
	uint64_t lines = 0;
	int fd;

	*changed = 0;
	snprintf(path, sizeof(path), "%s/%s", s->dir, e->file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*changed = errno == ENOENT;
		return cnt_err_set(err, "'%s' (seal ledger line %zu): %s", path, e->line, strerror(errno));
	}
	if (cnt_ledger_slurp(fd, path, b, err) != 0) {
		close(fd);
		return -1;
	}
	close(fd);
	cnt_ledger_hex(cnt_ledger_hash(b->p, b->len), hx);
	cnt_ledger_hex(e->digest, want);
	if (strcmp(hx, want) != 0) {
		*changed = 1;
		return cnt_err_set(err, "'%s' has changed since it was published: its digest is %s, seal ledger "
			"line %zu says %s", path, hx, e->line, want);
	}
	for (size_t i = 0; i < b->len; i++)
		lines += b->p[i] == '\n';
	if (lines != e->records || (b->len && b->p[b->len - 1] != '\n')) {
		*changed = 1;
		return cnt_err_set(err, "'%s' does not hold the %" PRIu64 " records seal ledger line %zu says",
			path, e->records, e->line);
	}
	return 0;
}

static int bad_rec(const cnt_seal_dir *s, const cnt_seal_entry *e, size_t line, const char *why, cnt_err *err)
{
	return cnt_err_set(err, "'%s/%s' line %zu: %s", s->dir, e->file, line, why);
}

/* An optional integer (null allowed): 0 set, 1 null, -1 bad. */
static int opt_int(json_t *rec, const char *key, int64_t lo, int64_t *out)
{
	json_t *v = json_object_get(rec, key);

	if (json_is_null(v))
		return 1;
	if (!json_is_integer(v) || json_integer_value(v) < lo)
		return -1;
	*out = json_integer_value(v);
	return 0;
}

static int same_place(json_t *rec, const cnt_seal_entry *e)
{
	const char *se = str_field(rec, "season_id"), *sc = str_field(rec, "scope"), *bd = str_field(rec, "board_id");

	return se && sc && bd && strcmp(se, e->season_id) == 0 && strcmp(sc, e->scope) == 0 &&
		strcmp(bd, e->board_id) == 0;
}

/* Each line of a published file (checked by read_published) as JSON. */
static int each_line(const cnt_seal_dir *s, const cnt_seal_entry *e, const cnt_buf *b,
	int (*fn)(const cnt_seal_dir *, const cnt_seal_entry *, sscope *, json_t *, size_t, cnt_err *),
	sscope *c, cnt_err *err)
{
	size_t off = 0, line = 0;

	while (off < b->len) {
		const char *p = (const char *)b->p + off;
		const char *nl = memchr(p, '\n', b->len - off);
		json_error_t je;
		json_t *rec;
		int rc;

		line++;
		rec = cnt_json_loadb(p, (size_t)(nl - p), JSON_REJECT_DUPLICATES, &je);
		if (rec == NULL && cnt_json_oom(&je))
			return cnt_err_oom(err, "reading '%s/%s'", s->dir, e->file);
		if (rec == NULL || !json_is_object(rec)) {
			json_decref(rec);
			return bad_rec(s, e, line, "not a JSON object", err);
		}
		rc = fn(s, e, c, rec, line, err);
		json_decref(rec);
		if (rc != 0)
			return -1;
		off = (size_t)(nl - (const char *)b->p) + 1;
	}
	return 0;
}

static int standing_line(const cnt_seal_dir *s, const cnt_seal_entry *e, sscope *c, json_t *rec, size_t line,
	cnt_err *err)
{
	const char *m = str_field(rec, "member_ref");
	int64_t v, r, t;
	smember *sm;
	int fresh;

	if (!same_place(rec, e))
		return bad_rec(s, e, line, "season_id, board_id or scope is not the ledger's", err);
	if (m == NULL || int_field(rec, "final_value", INT64_MIN, INT64_MAX, &v) != 0 ||
	    int_field(rec, "final_rank", 1, UINT32_MAX, &r) != 0 || time_field(rec, "sealed_at", &t) != 0)
		return bad_rec(s, e, line, "not a standing (member_ref, final_value, final_rank, sealed_at)", err);
	if ((sm = sscope_get(c, m, json_string_length(json_object_get(rec, "member_ref")), 1, &fresh)) == NULL)
		return cnt_err_oom(err, "reading '%s'", e->file);
	if (!fresh)
		return bad_rec(s, e, line, "the member is listed twice", err);
	sm->has_final = sm->present = 1;
	sm->final_value = sm->value = v;
	sm->final_rank = sm->rank = r;
	sm->final_error = -1;
	if (json_object_get(rec, "final_error") != NULL) {
		json_t *fe = json_object_get(rec, "final_error");

		if (!json_is_null(fe) && int_field(rec, "final_error", 0, INT64_MAX, &sm->final_error) != 0)
			return bad_rec(s, e, line, "final_error is not a bound (an integer >= 0, or null)", err);
		sm->estimate = 1;
	}
	return 0;
}

static int correction_line(const cnt_seal_dir *s, const cnt_seal_entry *e, sscope *c, json_t *rec, size_t line,
	cnt_err *err)
{
	const char *m = str_field(rec, "member_ref"), *ch = str_field(rec, "change");
	int64_t pv = 0, pr = 0, rv = 0, rr = 0, t;
	int a, b2, x, y, fresh;
	smember *sm;

	if (!same_place(rec, e))
		return bad_rec(s, e, line, "season_id, board_id or scope is not the ledger's", err);
	a = opt_int(rec, "prior_value", INT64_MIN, &pv);
	b2 = opt_int(rec, "prior_rank", 1, &pr);
	x = opt_int(rec, "revised_value", INT64_MIN, &rv);
	y = opt_int(rec, "revised_rank", 1, &rr);
	if (m == NULL || ch == NULL || str_field(rec, "correction_id") == NULL || a < 0 || b2 < 0 || x < 0 ||
	    y < 0 || a != b2 || x != y || !json_is_array(json_object_get(rec, "retraction_ids")) ||
	    time_field(rec, "published_at", &t) != 0)
		return bad_rec(s, e, line, "not a correction record", err);
	if ((sm = sscope_get(c, m, json_string_length(json_object_get(rec, "member_ref")), 1, &fresh)) == NULL)
		return cnt_err_oom(err, "reading '%s'", e->file);
	if (sm->present != (a == 0) || (a == 0 && (sm->value != pv || sm->rank != pr)))
		return bad_rec(s, e, line, "its prior value and rank are not the member's as published before", err);
	sm->present = x == 0;
	sm->value = rv;
	sm->rank = rr;
	if (c->keep_corr) {
		json_t *o = json_deep_copy(rec);

		if (o == NULL || (sm->corr == NULL && (sm->corr = json_array()) == NULL) ||
		    json_object_del(o, "season_id") || json_object_del(o, "board_id") ||
		    json_object_del(o, "scope") || json_object_del(o, "member_ref")) {
			json_decref(o);
			return cnt_err_oom(err, "reading '%s'", e->file);
		}
		/* o is the array's, or freed, either way */
		if (json_array_append_new(sm->corr, o) != 0)
			return cnt_err_oom(err, "reading '%s'", e->file);
	}
	return 0;
}

/* The sealed standings of st, with every correction of its scope applied
 * in order.  *ncorr is set to the number of correction files. */
static int load_scope(const cnt_seal_dir *s, const cnt_seal_entry *st, sscope *c, int keep_corr, int *ncorr,
	cnt_err *err)
{
	cnt_buf b = CNT_BUF_INIT;
	int changed, rc = -1;

	memset(c, 0, sizeof(*c));
	c->st = st;
	c->keep_corr = keep_corr;
	*ncorr = 0;
	if (cnt_fpset_init(&c->idx, 64) != 0)
		return cnt_err_nomem(err);
	if (read_published(s, st, &b, &changed, err) != 0 || each_line(s, st, &b, standing_line, c, err) != 0)
		goto out;
	for (size_t i = 0; i < s->n; i++) {
		const cnt_seal_entry *e = &s->e[i];

		if (e->kind != CNT_SEAL_CORRECTIONS || strcmp(e->season_id, st->season_id) != 0 ||
		    strcmp(e->scope, st->scope) != 0)
			continue;
		b.len = 0;
		if (read_published(s, e, &b, &changed, err) != 0 || each_line(s, e, &b, correction_line, c, err) != 0)
			goto out;
		(*ncorr)++;
	}
	rc = 0;
out:
	cnt_buf_release(&b);
	return rc;
}

/* ---- corrections ---- */

static cnt_fp id_fp(const char *id)
{
	const void *parts[1] = {id};
	size_t lens[1] = {strlen(id)};

	return cnt_fp_of(1, parts, lens);
}

typedef struct rled {
	const cnt_leaderboard *board;
	const char *name;
	char **ids;
	size_t n;
	cnt_fpset seen;            /* the ids kept: each is named once */
} rled;

/* Whether the record rec of the ledger counts for board b: with the
 * "counters" its writer lists (the counters of its events), when b's is
 * among them; without (a record written before they were listed), unless
 * its selector names another tenant or counter.  1, 0, or -1: "counters"
 * is not a list of {tenant_id, counter_id}. */
static int counts_for(json_t *rec, const cnt_leaderboard *b)
{
	json_t *ctrs = json_object_get(rec, "counters"), *sel = json_object_get(rec, "selector"), *o;
	const char *t, *c;
	size_t i;
	int hit = 0;

	if (ctrs == NULL) {
		t = json_is_object(sel) ? str_field(sel, "tenant_id") : NULL;
		c = json_is_object(sel) ? str_field(sel, "counter_id") : NULL;
		return !((t && strcmp(t, b->tenant_id) != 0) || (c && strcmp(c, b->counter_id) != 0));
	}
	if (!json_is_array(ctrs))
		return -1;
	json_array_foreach(ctrs, i, o) {
		json_t *tj = json_object_get(o, "tenant_id"), *cjs = json_object_get(o, "counter_id");

		if (!json_is_string(tj) || !json_is_string(cjs))
			return -1;
		/* by length too, so that a name with a NUL could match no
		 * board's (the ledger walk refuses \u0000 today) */
		hit |= json_string_length(tj) == strlen(b->tenant_id) && strcmp(json_string_value(tj), b->tenant_id) == 0 &&
			json_string_length(cjs) == strlen(b->counter_id) &&
			strcmp(json_string_value(cjs), b->counter_id) == 0;
	}
	return hit;
}

/* One line of the retraction ledger.  A "kind" other than "erasure" is
 * refused, as cnt_retract_ledger_load refuses it (a retraction has none);
 * the line's id is its retraction_id, else its erasure_id.  The id is kept
 * when the record counts for the board (counts_for) and no earlier line
 * gave it. */
static int rled_line(void *ctx, json_t *rec, size_t lineno, const char *line, size_t len, cnt_err *err)
{
	rled *r = ctx;
	json_t *kind = json_object_get(rec, "kind");
	/* a retraction's id, or an erasure's (the deletion path) */
	const char *id = str_field(rec, "retraction_id") ? str_field(rec, "retraction_id") : str_field(rec, "erasure_id");
	char **v;
	int added, counts;

	(void)line;
	(void)len;
	if (kind != NULL && (!json_is_string(kind) || strcmp(json_string_value(kind), "erasure") != 0))
		return cnt_err_set(err, "retraction ledger '%s' line %zu: a record of an unknown kind", r->name, lineno);
	if (id == NULL)
		return cnt_err_set(err, "retraction ledger '%s' line %zu: neither a retraction_id nor an erasure_id",
			r->name, lineno);
	if ((counts = counts_for(rec, r->board)) < 0)
		return cnt_err_set(err, "retraction ledger '%s' line %zu: \"counters\" is not a list of objects "
			"with a tenant_id and a counter_id", r->name, lineno);
	if (counts == 0)
		return 0;   /* another counter's */
	if ((added = cnt_fpset_add(&r->seen, id_fp(id), 1, NULL)) < 0)
		return cnt_err_nomem(err);
	if (added == 0)
		return 0;   /* named on an earlier line */
	if ((v = realloc(r->ids, (r->n + 1) * sizeof(*v))) == NULL)
		return cnt_err_nomem(err);
	r->ids = v;
	if ((r->ids[r->n] = strdup(id)) == NULL)
		return cnt_err_nomem(err);
	r->n++;
	return 0;
}

static int named_before(const cnt_seal_dir *s, const cnt_seal_entry *st, const char *id)
{
	for (size_t i = 0; i < s->n; i++) {
		const cnt_seal_entry *e = &s->e[i];

		if (e->kind != CNT_SEAL_CORRECTIONS || strcmp(e->season_id, st->season_id) != 0 ||
		    strcmp(e->scope, st->scope) != 0)
			continue;
		for (size_t k = 0; k < e->nrids; k++)
			if (strcmp(e->rids[k], id) == 0)
				return 1;
	}
	return 0;
}

static int put_opt(json_t *rec, const char *key, int present, int64_t v)
{
	return json_object_set_new(rec, key, present ? json_integer(v) : json_null());
}

/* One correction record into o. */
static int correction(cnt_seal_out *o, const cnt_seal_entry *st, int seq, const char *name, size_t len,
	const smember *prior, int rpresent, int64_t rv, int64_t rr, json_t *ids, int64_t now)
{
	const void *parts[4] = {st->season_id, st->scope, &seq, name};
	size_t lens[4] = {strlen(st->season_id), strlen(st->scope), sizeof(seq), len};
	int ppresent = prior && prior->present;
	const char *change = !ppresent ? "added" : !rpresent ? "removed" : prior->value != rv ? "value" : "rank";
	char cid[40], hx[33];
	json_t *rec = json_object();
	int rc = -1;

	cnt_ledger_hex(cnt_fp_of(4, parts, lens), hx);
	snprintf(cid, sizeof(cid), "c-%s", hx);
	if (rec == NULL ||
	    json_object_set_new(rec, "correction_id", json_string(cid)) ||
	    json_object_set_new(rec, "season_id", json_string(st->season_id)) ||
	    json_object_set_new(rec, "board_id", json_string(st->board_id)) ||
	    json_object_set_new(rec, "scope", json_string(st->scope)) ||
	    json_object_set_new(rec, "member_ref", json_stringn(name, len)) ||
	    json_object_set_new(rec, "change", json_string(change)) ||
	    json_object_set(rec, "retraction_ids", ids) ||
	    put_opt(rec, "prior_value", ppresent, ppresent ? prior->value : 0) ||
	    put_opt(rec, "prior_rank", ppresent, ppresent ? prior->rank : 0) ||
	    put_opt(rec, "revised_value", rpresent, rv) ||
	    put_opt(rec, "revised_rank", rpresent, rr) ||
	    json_object_set_new(rec, "published_at", time_json(now)) ||
	    json_dump_line(rec, &o->bytes) != 0)
		goto out;
	o->records++;
	rc = 0;
out:
	json_decref(rec);
	return rc;
}

/* Compares scope st with the revised view vb (NULL: nobody) and prepares
 * its corrections file when anything differs. */
static int correct_scope(cnt_seal_dir *s, const cnt_seal_entry *st, const cnt_view_build *vb, const rled *r,
	const char *rhead, int64_t now, cnt_err *err)
{
	sscope c;
	int ncorr, rc = -1, seq;
	unsigned char *seen = NULL;
	json_t *ids = json_array(), *rec = NULL;
	cnt_seal_out *o = NULL;
	char rel[4096], hx[33];
	size_t nvb = vb ? vb->n : 0;

	if (ids == NULL)
		return cnt_err_nomem(err);
	if (load_scope(s, st, &c, 0, &ncorr, err) != 0)
		goto out;
	seq = ncorr + 1;
	if (c.n && (seen = calloc(c.n, 1)) == NULL)
		goto nomem;
	for (int pass = 0; pass < 2; pass++) {
		/* pass 0 counts the differences, pass 1 writes them */
		uint64_t diffs = 0;

		for (size_t k = 0; k < nvb; k++) {
			const cnt_view_entry *en = &vb->entries[k];
			int fresh;
			smember *sm = sscope_get(&c, vb->pool + en->name_off, en->name_len, 0, &fresh);

			if (pass == 0 && nameable(vb->pool + en->name_off, en->name_len, st->scope, err) != 0)
				goto out;
			if (sm)
				seen[sm - c.m] = 1;
			if (sm && sm->present && sm->value == en->value && sm->rank == (int64_t)en->rank)
				continue;
			diffs++;
			if (pass == 1 && correction(o, st, seq, vb->pool + en->name_off, en->name_len, sm, 1, en->value,
				en->rank, ids, now) != 0)
				goto nomem;
		}
		for (size_t k = 0; k < c.n; k++) {
			if (seen[k] || !c.m[k].present)
				continue;
			diffs++;
			if (pass == 1 && correction(o, st, seq, c.m[k].name, c.m[k].len, &c.m[k], 0, 0, 0, ids, now) != 0)
				goto nomem;
		}
		if (diffs == 0) {
			rc = 0;
			goto out;
		}
		if (pass == 1)
			break;
		if (r->n == 0) {
			cnt_err_set(err, "season '%s' scope '%s': %" PRIu64 " standings differ from those published, but the "
				"retraction ledger has no retraction of %s/%s: corrections are published for retractions only "
				"(were these the season's bucket files?)", st->season_id, st->scope, diffs,
				r->board->tenant_id, r->board->counter_id);
			goto out;
		}
		/* the retractions no earlier correction named, else all */
		for (int all = 0; all < 2 && json_array_size(ids) == 0; all++)
			for (size_t i = 0; i < r->n; i++)
				if ((all || !named_before(s, st, r->ids[i])) && json_array_append_new(ids, json_string(r->ids[i])))
					goto nomem;
		if (rel_path(rel, sizeof(rel), st->season_id, st->scope, seq) != 0) {
			cnt_err_set(err, "scope '%s': path too long", st->scope);
			goto out;
		}
		if (check_free(s, st->season_id, st->scope, seq, rel, err) != 0)
			goto out;
		if ((o = new_out(s, st->scope, seq, err)) == NULL)
			goto out;
		if (full_path(o->path, sizeof(o->path), s->dir, rel) != 0) {
			cnt_err_set(err, "scope '%s': path too long", st->scope);
			goto out;
		}
		if (c.n)
			memset(seen, 0, c.n);
	}
	s->changed += o->records;
	cnt_ledger_hex(cnt_ledger_hash(o->bytes.p, o->bytes.len), hx);
	if ((rec = json_object()) == NULL ||
	    json_object_set_new(rec, "kind", json_string("corrections")) ||
	    json_object_set_new(rec, "season_id", json_string(st->season_id)) ||
	    json_object_set_new(rec, "board_id", json_string(st->board_id)) ||
	    json_object_set_new(rec, "scope", json_string(st->scope)) ||
	    json_object_set_new(rec, "file", json_string(rel)) ||
	    json_object_set_new(rec, "seq", json_integer(seq)) ||
	    json_object_set_new(rec, "records", json_integer((json_int_t)o->records)) ||
	    json_object_set_new(rec, "digest", json_string(hx)) ||
	    json_object_set_new(rec, "published_at", time_json(now)) ||
	    json_object_set(rec, "retraction_ids", ids) ||
	    json_object_set_new(rec, "retractions_head", json_string(rhead)))
		goto nomem;
	rc = add_line(s, rec, err);
	goto out;
nomem:
	cnt_err_oom(err, "correcting");
out:
	json_decref(rec);
	json_decref(ids);
	free(seen);
	sscope_release(&c);
	return rc;
}

int cnt_seal_correct(cnt_seal_dir *s, cnt_board_build *bb, const char *scope, int rfd, const char *rname,
	int64_t now, cnt_err *err)
{
	rled r = {bb->board, rname, NULL, 0, {0}};
	cnt_buf b = CNT_BUF_INIT;
	cnt_fp last;
	size_t lines, sealed = 0;
	char rhead[33];
	int rc = -1;

	if (cnt_fpset_init(&r.seen, 64) != 0) {
		cnt_err_nomem(err);
		goto out;
	}
	if (cnt_ledger_slurp(rfd, rname, &b, err) != 0 ||
	    cnt_ledger_walk(b.p, b.len, "retraction ledger", rname, rled_line, &r, &last, &lines, err) != 0)
		goto out;
	cnt_ledger_hex(last, rhead);
	for (size_t i = 0; i < s->n; i++) {
		const cnt_seal_entry *st = &s->e[i];
		cnt_view_build vb, *v = NULL;
		size_t ns = cnt_proj_nscopes(bb->proj);

		if (st->kind != CNT_SEAL_STANDINGS || strcmp(st->season_id, bb->label) != 0 ||
		    (scope && strcmp(scope, st->scope) != 0))
			continue;
		sealed++;
		if (strcmp(st->board_id, bb->board->board_id) != 0) {
			cnt_err_set(err, "season '%s' was sealed on board '%s', not '%s'", st->season_id, st->board_id,
				bb->board->board_id);
			goto out;
		}
		for (size_t k = 0; k < ns && v == NULL; k++)
			if (strcmp(cnt_proj_scope(bb->proj, k), st->scope) == 0) {
				if (cnt_proj_view(bb->proj, k, &vb, err) != 0)
					goto out;
				v = &vb;
			}
		if (correct_scope(s, st, v, &r, rhead, now, err) != 0)
			goto out;
	}
	if (sealed == 0) {
		if (scope)
			cnt_err_set(err, "season '%s' scope '%s' is not sealed in '%s': run cnt-seal close first", bb->label,
				scope, s->dir);
		else
			cnt_err_set(err, "season '%s' is not sealed in '%s': run cnt-seal close first", bb->label, s->dir);
		goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; i < r.n; i++)
		free(r.ids[i]);
	free(r.ids);
	cnt_fpset_release(&r.seen);
	cnt_buf_release(&b);
	return rc;
}

/* ---- publishing ---- */

static int mkdirs_for(const char *path)
{
	char tmp[4096];
	char *slash;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; (slash = strchr(p, '/')) != NULL; p = slash + 1) {
		*slash = 0;
		if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
			return -1;
		*slash = '/';
	}
	return 0;
}

int cnt_seal_commit(cnt_seal_dir *s, void (*reg)(cnt_out *), void (*unreg)(cnt_out *), cnt_err *err)
{
	char head[4200], lpath[4200], text[64], hx[33];
	cnt_out ho;
	int ho_open = 0, lfd;
	size_t i;

	if (s->nouts == 0)
		return 0;
	snprintf(head, sizeof(head), "%s/" CNT_SEAL_HEAD, s->dir);
	snprintf(lpath, sizeof(lpath), "%s/" CNT_SEAL_LEDGER, s->dir);
	if (cnt_out_open(&ho, head, err) != 0)
		return -1;
	ho_open = 1;
	if (reg)
		reg(&ho);
	/* One file at a time: a temporary, fsync'd, linked to its name, the
	 * temporary removed.  A file linked here is not published until its
	 * ledger line is appended, and is removed again if that fails. */
	for (i = 0; i < s->nouts; i++) {
		cnt_seal_out *o = &s->outs[i];
		int ok;

		if (mkdirs_for(o->path) != 0) {
			cnt_err_set(err, "cannot create the directory of '%s': %s", o->path, strerror(errno));
			goto fail;
		}
		if (cnt_out_open(&o->out, o->path, err) != 0)
			goto fail;
		o->opened = 1;
		if (reg)
			reg(&o->out);
		ok = cnt_write_all(o->out.fd, o->bytes.p, o->bytes.len) == 0 && fsync(o->out.fd) == 0;
		if (!ok)
			cnt_err_write(err, errno, "cannot write '%s'", o->path);
		else if (link(o->out.tmp, o->path) != 0) {
			ok = 0;
			if (errno == EEXIST)
				cnt_err_set(err, "'%s' appeared while it was being written: not replaced", o->path);
			else
				cnt_err_write(err, errno, "cannot link '%s'", o->path);
		} else {
			o->linked = 1;
			ok = cnt_sync_dir(o->path, err) == 0;
		}
		if (unreg)
			unreg(&o->out);
		cnt_out_abort(&o->out);   /* the temporary; the name is linked */
		o->opened = 0;
		if (!ok)
			goto fail;
	}
	lfd = open(lpath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (lfd < 0) {
		cnt_err_write(err, errno, "cannot open the seal ledger '%s'", lpath);
		goto fail;
	}
	if (cnt_retract_ledger_append(lfd, lpath, (const char *)s->append.p, err) != 0) {
		close(lfd);
		goto fail;
	}
	close(lfd);
	cnt_ledger_hex(s->new_last, hx);
	snprintf(text, sizeof(text), "%zu %s\n", s->new_lines, hx);
	if (unreg)
		unreg(&ho);
	if (cnt_write_all(ho.fd, text, strlen(text)) != 0) {
		cnt_err_write(err, errno, "cannot write '%s' (the ledger was appended: run cnt-seal verify)", head);
		cnt_out_abort(&ho);
		return -1;
	}
	if (cnt_out_commit(&ho, err) != 0)
		return cnt_err_prefix(err, "the ledger was appended but its head not replaced (run cnt-seal verify)");
	s->last = s->new_last;
	s->lines = s->new_lines;
	return 0;
fail:
	for (i = 0; i < s->nouts; i++) {
		cnt_seal_out *o = &s->outs[i];

		if (o->linked)
			unlink(o->path);
		o->linked = 0;
		if (o->opened) {
			if (unreg)
				unreg(&o->out);
			cnt_out_abort(&o->out);
			o->opened = 0;
		}
	}
	if (ho_open) {
		if (unreg)
			unreg(&ho);
		cnt_out_abort(&ho);
	}
	return -1;
}

/* ---- show ---- */

/* Text for a terminal: ids may hold anything, so by cnt_buf_shown's rule. */
static int put_safe(cnt_buf *out, const char *p, size_t n)
{
	return cnt_buf_shown(out, p, n, SIZE_MAX) < 0 ? -1 : 0;
}

static int show_scope(const cnt_seal_dir *s, const cnt_seal_entry *st, int table, cnt_buf *out, cnt_err *err)
{
	sscope c;
	int ncorr, rc = -1;
	json_t *rec = NULL;

	if (load_scope(s, st, &c, 1, &ncorr, err) != 0)
		goto out;
	if (table) {
		if (cnt_buf_printf(out, "season ") != 0 || put_safe(out, st->season_id, strlen(st->season_id)) != 0 ||
		    cnt_buf_printf(out, " board %s scope ", st->board_id) != 0 ||
		    put_safe(out, st->scope, strlen(st->scope)) != 0 ||
		    cnt_buf_printf(out, " sealed %s, %d correction%s\n", st->at, ncorr, ncorr == 1 ? "" : "s") != 0 ||
		    cnt_buf_printf(out, "%10s %20s %10s %20s %11s  %s\n", "final_rank", "final_value", "rank", "value",
			"corrections", "member_ref") != 0)
			goto nomem;
	}
	for (size_t i = 0; i < c.n; i++) {
		const smember *m = &c.m[i];

		if (table) {
			char fr[24] = "-", fv[64] = "-", r[24] = "-", v[24] = "-";

			if (m->has_final) {
				snprintf(fr, sizeof(fr), "%" PRId64, m->final_rank);
				if (!m->estimate)
					snprintf(fv, sizeof(fv), "%" PRId64, m->final_value);
				else if (m->final_error >= 0)
					snprintf(fv, sizeof(fv), "~%" PRId64 " +-%" PRId64, m->final_value, m->final_error);
				else
					snprintf(fv, sizeof(fv), "~%" PRId64 " +-?", m->final_value);
			}
			if (m->present) {
				snprintf(r, sizeof(r), "%" PRId64, m->rank);
				snprintf(v, sizeof(v), "%" PRId64, m->value);
			}
			if (cnt_buf_printf(out, "%10s %20s %10s %20s %11zu  ", fr, fv, r, v, json_array_size(m->corr)) != 0)
				goto nomem;
			if (put_safe(out, m->name, m->len) != 0 || cnt_buf_putc(out, '\n') != 0)
				goto nomem;
			continue;
		}
		if ((rec = json_object()) == NULL ||
		    json_object_set_new(rec, "season_id", json_string(st->season_id)) ||
		    json_object_set_new(rec, "board_id", json_string(st->board_id)) ||
		    json_object_set_new(rec, "scope", json_string(st->scope)) ||
		    json_object_set_new(rec, "member_ref", json_stringn(m->name, m->len)) ||
		    put_opt(rec, "final_value", m->has_final, m->final_value) ||
		    put_opt(rec, "final_rank", m->has_final, m->final_rank) ||
		    (m->estimate && seal_estimate(rec, m->final_error)) ||
		    json_object_set_new(rec, "sealed_at", json_string(st->at)) ||
		    put_opt(rec, "value", m->present, m->value) ||
		    put_opt(rec, "rank", m->present, m->rank) ||
		    json_object_set_new(rec, "corrections", m->corr ? json_incref(m->corr) : json_array()) ||
		    json_dump_line(rec, out) != 0)
			goto nomem;
		json_decref(rec);
		rec = NULL;
	}
	rc = 0;
	goto out;
nomem:
	cnt_err_oom(err, "showing '%s'", st->file);
out:
	json_decref(rec);
	sscope_release(&c);
	return rc;
}

int cnt_seal_show(const cnt_seal_dir *s, const char *season, const char *scope, int table, cnt_buf *out,
	cnt_err *err)
{
	size_t shown = 0;

	for (size_t i = 0; i < s->n; i++) {
		const cnt_seal_entry *st = &s->e[i];

		if (st->kind != CNT_SEAL_STANDINGS || strcmp(st->season_id, season) != 0 ||
		    (scope && strcmp(st->scope, scope) != 0))
			continue;
		if (show_scope(s, st, table, out, err) != 0)
			return -1;
		shown++;
	}
	if (shown == 0)
		return scope ? cnt_err_set(err, "season '%s' scope '%s' is not sealed in '%s'", season, scope, s->dir) :
			cnt_err_set(err, "season '%s' is not sealed in '%s'", season, s->dir);
	return 0;
}

/* ---- verify ---- */

static int listed(const cnt_seal_dir *s, const char *rel)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->e[i].file, rel) == 0)
			return 1;
	return 0;
}

static int published_name(const char *n)
{
	size_t k = strlen(n);

	return strcmp(n, "standings.jsonl") == 0 ||
		(k == 24 && strncmp(n, "corrections-", 12) == 0 && strcmp(n + 18, ".jsonl") == 0);
}

/* A file under DIR/<season>/<scope>/ that looks published but is not in
 * the ledger.  0 none, 1 found (err set), -1 trouble. */
static int stray(const cnt_seal_dir *s, cnt_err *err)
{
	DIR *d1 = opendir(s->dir), *d2, *d3;
	struct dirent *a, *b, *c;
	char p2[4400], p3[4700], rel[800];
	int rc = 0;

	if (d1 == NULL)
		return cnt_err_set(err, "cannot read '%s': %s", s->dir, strerror(errno));
	while (rc == 0 && (a = readdir(d1)) != NULL) {
		if (a->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(p2, sizeof(p2), "%s/%.255s", s->dir, a->d_name) >= sizeof(p2))
			continue;
		if ((d2 = opendir(p2)) == NULL)
			continue;
		while (rc == 0 && (b = readdir(d2)) != NULL) {
			if (b->d_name[0] == '.')
				continue;
			if ((size_t)snprintf(p3, sizeof(p3), "%s/%.255s", p2, b->d_name) >= sizeof(p3))
				continue;
			if ((d3 = opendir(p3)) == NULL)
				continue;
			while (rc == 0 && (c = readdir(d3)) != NULL) {
				snprintf(rel, sizeof(rel), "%.255s/%.255s/%.255s", a->d_name, b->d_name, c->d_name);
				if (published_name(c->d_name) && !listed(s, rel)) {
					cnt_err_set(err, "'%s/%s' is not in the seal ledger (an interrupted run, or a file "
						"put there): it is not published", s->dir, rel);
					rc = 1;
				}
			}
			closedir(d3);
		}
		closedir(d2);
	}
	closedir(d1);
	return rc;
}

int cnt_seal_verify(const char *dir, size_t *files, cnt_err *err)
{
	cnt_seal_dir s;
	cnt_buf b = CNT_BUF_INIT;
	int rc = -1, changed;

	*files = 0;
	if (cnt_seal_dir_open(&s, dir, 0, err) != 0) {
		rc = s.damaged ? 1 : -1;
		goto out;
	}
	for (size_t i = 0; i < s.n; i++) {
		b.len = 0;
		if (read_published(&s, &s.e[i], &b, &changed, err) != 0) {
			rc = changed ? 1 : -1;
			goto out;
		}
		(*files)++;
	}
	rc = stray(&s, err);
out:
	cnt_buf_release(&b);
	cnt_seal_dir_close(&s);
	return rc;
}

/* ---- cnt-project ---- */

int cnt_seal_check_publish(const cnt_defs *defs, const cnt_board_build *bb, const char *sealed_dir,
	cnt_err *err)
{
	const cnt_season *se;
	cnt_seal_dir s;
	int rc = 0;

	if (bb->board->window != CNT_WIN_SEASON || (se = cnt_defs_season(defs, bb->label, strlen(bb->label))) == NULL)
		return 0;
	if (se->state == CNT_SEASON_CLOSED)
		return cnt_err_set(err, "season '%s' is closed (its definitions say \"state\": \"closed\"): its standings "
			"are sealed and not published again; publish changes with cnt-seal correct", se->season_id);
	if (sealed_dir == NULL)
		return 0;
	if (cnt_seal_dir_open(&s, sealed_dir, 0, err) != 0) {
		cnt_seal_dir_close(&s);
		return -1;
	}
	for (size_t i = 0; i < s.n && rc == 0; i++)
		if (s.e[i].kind == CNT_SEAL_STANDINGS && strcmp(s.e[i].season_id, se->season_id) == 0)
			rc = cnt_err_set(err, "season '%s' is sealed in '%s' (seal ledger line %zu): its standings are not "
				"published again; publish changes with cnt-seal correct", se->season_id, sealed_dir, s.e[i].line);
	cnt_seal_dir_close(&s);
	return rc;
}
