/*
 * auditlog.c - the audit ledger (see auditlog.h).
 */
#include "correct/auditlog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/jsonload.h"
#include "base/outfile.h"
#include "correct/ledger.h"
#include "time/timefmt.h"

struct cnt_auditlog {
	cnt_buf text;          /* the file, lines NUL-terminated in place */
	json_t **recs;         /* owned parsed lines, to keep strings alive */
	cnt_audit_entry *e;
	size_t n, cap;
	cnt_fp last;
};

static const char *str_field(json_t *rec, const char *key, int nullable, int *bad)
{
	json_t *v = json_object_get(rec, key);

	if (v != NULL && json_is_string(v) && json_string_length(v) > 0 &&
	    strlen(json_string_value(v)) == json_string_length(v))
		return json_string_value(v);
	if (nullable && v != NULL && json_is_null(v))
		return NULL;
	*bad = 1;
	return NULL;
}

static int64_t int_field(json_t *rec, const char *key, int *bad)
{
	json_t *v = json_object_get(rec, key);

	if (v == NULL || !json_is_integer(v) || json_integer_value(v) < 0) {
		*bad = 1;
		return 0;
	}
	return (int64_t)json_integer_value(v);
}

static const cnt_audit_entry *latest(const cnt_auditlog *l, const char *tenant, const char *counter)
{
	for (size_t i = l->n; i-- > 0;)
		if (strcmp(l->e[i].tenant_id, tenant) == 0 && strcmp(l->e[i].counter_id, counter) == 0)
			return &l->e[i];
	return NULL;
}

static int has_id(const cnt_auditlog *l, const char *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->e[i].audit_id, id) == 0)
			return 1;
	return 0;
}

typedef struct {
	cnt_auditlog *l;
	const char *name;
} walk_ctx;

static int on_line(void *vctx, json_t *rec, size_t lineno, const char *line, size_t len, cnt_err *err)
{
	walk_ctx *c = vctx;
	cnt_auditlog *l = c->l;
	cnt_audit_entry e;
	const char *through, *at;
	int64_t t;
	int bad = 0;

	(void)line;
	(void)len;
	e.audit_id = str_field(rec, "audit_id", 0, &bad);
	e.tenant_id = str_field(rec, "tenant_id", 0, &bad);
	e.counter_id = str_field(rec, "counter_id", 0, &bad);
	e.authority = str_field(rec, "authority", 0, &bad);
	e.retraction_id = str_field(rec, "retraction_id", 1, &bad);
	through = str_field(rec, "through", 0, &bad);
	at = str_field(rec, "audited_at", 0, &bad);
	e.through_ms = int_field(rec, "through_ms", &bad);
	e.examined = int_field(rec, "examined", &bad);
	e.flagged = int_field(rec, "flagged", &bad);
	if (bad)
		return cnt_err_set(err, "audit ledger '%s' line %zu: not an audit record (a field is "
			"missing or of the wrong type; see cnt-audit(5))", c->name, lineno);
	if (cnt_time_parse_rfc3339(through, strlen(through), &t) != 0 || t != e.through_ms)
		return cnt_err_set(err, "audit ledger '%s' line %zu: \"through\" does not match "
			"\"through_ms\"", c->name, lineno);
	if (cnt_time_parse_rfc3339(at, strlen(at), &e.audited_at_ms) != 0)
		return cnt_err_set(err, "audit ledger '%s' line %zu: \"audited_at\" is not an "
			"RFC 3339 time", c->name, lineno);
	if (e.flagged > e.examined)
		return cnt_err_set(err, "audit ledger '%s' line %zu: flagged %lld of %lld examined",
			c->name, lineno, (long long)e.flagged, (long long)e.examined);
	if (has_id(l, e.audit_id))
		return cnt_err_set(err, "audit ledger '%s' line %zu: audit '%s' is recorded twice",
			c->name, lineno, e.audit_id);
	const cnt_audit_entry *prev = latest(l, e.tenant_id, e.counter_id);
	if (prev != NULL && e.through_ms < prev->through_ms)
		return cnt_err_set(err, "audit ledger '%s' line %zu: \"through\" goes back for %s/%s "
			"(an audit watermark never moves backwards)", c->name, lineno, e.tenant_id,
			e.counter_id);
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		cnt_audit_entry *ne = realloc(l->e, cap * sizeof *ne);
		if (ne == NULL)
			return cnt_err_nomem(err);
		l->e = ne;
		json_t **nr = realloc(l->recs, cap * sizeof *nr);
		if (nr == NULL)
			return cnt_err_nomem(err);
		l->recs = nr;
		l->cap = cap;
	}
	l->recs[l->n] = json_incref(rec);
	l->e[l->n++] = e;
	return 0;
}

cnt_auditlog *cnt_auditlog_load(int fd, const char *name, cnt_err *err)
{
	cnt_auditlog *l = calloc(1, sizeof *l);
	walk_ctx c = { l, name };
	size_t lines;

	if (l == NULL) {
		cnt_err_nomem(err);
		return NULL;
	}
	if ((fd >= 0 && cnt_ledger_slurp(fd, name, &l->text, err) != 0) ||
	    cnt_ledger_walk(l->text.p, l->text.len, "audit ledger", name, on_line, &c, &l->last,
		    &lines, err) != 0) {
		cnt_auditlog_free(l);
		return NULL;
	}
	return l;
}

cnt_auditlog *cnt_auditlog_open(const char *path, int missing_ok, cnt_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	cnt_auditlog *l;

	if (fd < 0) {
		if (errno == ENOENT && missing_ok)
			return cnt_auditlog_load(-1, path, err);
		cnt_err_set(err, "cannot open audit ledger '%s': %s", path, strerror(errno));
		return NULL;
	}
	l = cnt_auditlog_load(fd, path, err);
	close(fd);
	return l;
}

void cnt_auditlog_free(cnt_auditlog *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->n; i++)
		json_decref(l->recs[i]);
	free(l->recs);
	free(l->e);
	cnt_buf_release(&l->text);
	free(l);
}

size_t cnt_auditlog_count(const cnt_auditlog *l)
{
	return l->n;
}

const cnt_audit_entry *cnt_auditlog_at(const cnt_auditlog *l, size_t i)
{
	return i < l->n ? &l->e[i] : NULL;
}

const cnt_audit_entry *cnt_auditlog_latest(const cnt_auditlog *l, const char *tenant,
	const char *counter)
{
	return latest(l, tenant, counter);
}

char *cnt_auditlog_line(const cnt_auditlog *l, const cnt_audit_entry *e, cnt_err *err)
{
	char id[35], ph[33], t[32], at[32];
	json_t *rec = NULL;
	char *text = NULL, *out = NULL;
	cnt_buf seed = CNT_BUF_INIT;
	const cnt_audit_entry *prev;

	if (e->tenant_id == NULL || !*e->tenant_id || e->counter_id == NULL || !*e->counter_id ||
	    e->authority == NULL || !*e->authority || e->examined < 0 || e->flagged < 0 ||
	    e->flagged > e->examined || e->through_ms < 0 || e->audited_at_ms < 0 ||
	    (e->retraction_id != NULL && !*e->retraction_id)) {
		cnt_err_set(err, "audit record: tenant, counter and authority must not be empty, and "
			"0 <= flagged <= examined");
		return NULL;
	}
	prev = latest(l, e->tenant_id, e->counter_id);
	if (prev != NULL && e->through_ms < prev->through_ms) {
		cnt_time_format_rfc3339(prev->through_ms, t);
		cnt_err_set(err, "%s/%s is already audited through %s; an audit watermark never "
			"moves backwards (audit from that time on)", e->tenant_id, e->counter_id, t);
		return NULL;
	}
	cnt_time_format_rfc3339(e->through_ms, t);
	cnt_time_format_rfc3339(e->audited_at_ms, at);
	if (e->audit_id != NULL) {
		if (!*e->audit_id || strlen(e->audit_id) > 128) {
			cnt_err_set(err, "audit id must be 1..128 bytes");
			return NULL;
		}
	} else {
		/* Derived: the same audit written twice gets the same id. */
		const char *parts[] = { e->tenant_id, e->counter_id, t, at, e->authority,
			e->retraction_id ? e->retraction_id : "" };
		for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
			if (cnt_buf_append(&seed, parts[i], strlen(parts[i]) + 1) != 0)
				goto nomem;
		id[0] = 'a';
		id[1] = '-';
		cnt_ledger_hex(cnt_ledger_hash(seed.p, seed.len), id + 2);
	}
	const char *aid = e->audit_id ? e->audit_id : id;
	if (has_id(l, aid)) {
		cnt_err_set(err, "audit '%s' is already in the ledger", aid);
		goto out;
	}
	cnt_ledger_hex(l->last, ph);
	rec = json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:I, s:I, s:s?, s:s}", "audit_id", aid,
		"tenant_id", e->tenant_id, "counter_id", e->counter_id, "through", t, "through_ms",
		(json_int_t)e->through_ms, "audited_at", at, "authority", e->authority, "examined",
		(json_int_t)e->examined, "flagged", (json_int_t)e->flagged, "retraction_id",
		e->retraction_id, "prev", ph);
	if (rec == NULL)
		goto nomem;
	if (e->retraction_id == NULL && json_object_set_new(rec, "retraction_id", json_null()) != 0)
		goto nomem;
	text = cnt_json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (text == NULL)
		goto nomem;
	size_t n = strlen(text);
	out = malloc(n + 2);
	if (out == NULL)
		goto nomem;
	memcpy(out, text, n);
	out[n] = '\n';
	out[n + 1] = 0;
	goto out;
nomem:
	cnt_err_nomem(err);
out:
	free(text);
	json_decref(rec);
	cnt_buf_release(&seed);
	return out;
}

int cnt_auditlog_append(int fd, const char *name, const char *line, cnt_err *err)
{
	return cnt_append_durable(fd, name, "audit ledger", line, err);
}
