/*
 * signals.c - the --stats files of a run as one list of signals, each
 * against its threshold (signals.h).
 */
#include "ops/signals.h"
#include "base/jsonload.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "avro/json.h"

static const char *const names[CNT_SIG_NLIMITS] = {
	"dedup_hit_rate", "late_ratio", "rejected", "held", "top_key_share",
	"as_of_age_s", "differences", "canary_age_s",
};

const char *cnt_sig_name(cnt_sig k)
{
	return (unsigned)k < CNT_SIG_NLIMITS ? names[k] : "?";
}

void cnt_sig_limits_default(cnt_sig_limits *l)
{
	memset(l, 0, sizeof(*l));
#define LIMIT(k, v) (l->limit[k] = (v), l->has[k] = 1)
	LIMIT(CNT_SIG_DEDUP_HIT_RATE, 0.10);
	LIMIT(CNT_SIG_LATE_RATIO, 0.05);
	LIMIT(CNT_SIG_TOP_KEY_SHARE, 0.017);
	LIMIT(CNT_SIG_AS_OF_AGE_S, 60);
	LIMIT(CNT_SIG_DIFFERENCES, 0);
	LIMIT(CNT_SIG_CANARY_AGE_S, 3600);
#undef LIMIT
}

static int find(const char *name, size_t n)
{
	for (int k = 0; k < CNT_SIG_NLIMITS; k++)
		if (strlen(names[k]) == n && memcmp(names[k], name, n) == 0)
			return k;
	return -1;
}

static int put(cnt_sig_limits *l, int k, int has, double v)
{
	l->has[k] = has;
	l->limit[k] = has ? v : 0;
	l->set[k] = 1;
	return 0;
}

int cnt_sig_limits_set(cnt_sig_limits *l, const char *a, cnt_err *err)
{
	const char *eq = strchr(a, '=');
	char *end;
	double v;
	int k;

	if (eq == NULL)
		return cnt_err_set(err, "threshold '%s': expected NAME=VALUE", a);
	if ((k = find(a, (size_t)(eq - a))) < 0)
		return cnt_err_set(err, "threshold '%s': unknown signal '%.*s'", a, (int)(eq - a), a);
	if (strcmp(eq + 1, "none") == 0)
		return put(l, k, 0, 0);
	errno = 0;
	v = strtod(eq + 1, &end);
	if (eq[1] == '\0' || *end != '\0' || errno != 0 || !isfinite(v) || v < 0 || eq[1] == '-' ||
	    eq[1] == '+' || eq[1] == ' ')
		return cnt_err_set(err, "threshold '%s': '%s' is not a number >= 0 or 'none'", a, eq + 1);
	return put(l, k, 1, v);
}

static int json_fail(const json_error_t *je, const char *what, const char *path, cnt_err *err)
{
	if (json_error_code(je) == json_error_out_of_memory)
		return cnt_err_nomem(err);
	if (json_error_code(je) == json_error_cannot_open_file)
		return cnt_err_set(err, "cannot read %s '%s': %s", what, path, je->text);
	return cnt_err_set(err, "%s '%s': line %d, column %d: %s", what, path, je->line, je->column, je->text);
}

int cnt_sig_limits_load(cnt_sig_limits *l, const char *path, cnt_err *err)
{
	json_error_t je;
	json_t *j = cnt_json_load_file(path, JSON_REJECT_DUPLICATES, &je), *v;
	const char *key;
	int rc = 0, k;

	if (j == NULL)
		return json_fail(&je, "thresholds", path, err);
	if (!json_is_object(j)) {
		json_decref(j);
		return cnt_err_set(err, "thresholds '%s': expected one object of signal names and numbers", path);
	}
	json_object_foreach(j, key, v) {
		if ((k = find(key, strlen(key))) < 0) {
			rc = cnt_err_set(err, "thresholds '%s': unknown signal '%.100s'", path, key);
			break;
		}
		if (json_is_null(v))
			put(l, k, 0, 0);
		else if (json_is_number(v) && json_number_value(v) >= 0)
			put(l, k, 1, json_number_value(v));
		else {
			rc = cnt_err_set(err, "thresholds '%s': %s: expected a number >= 0 or null", path, key);
			break;
		}
	}
	json_decref(j);
	return rc;
}

/* ---- reading a --stats file ------------------------------------------- */

static char *dup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	return p ? memcpy(p, s, n) : NULL;
}

/* Appends a row; value NULL: no value.  limit_k < 0: no threshold. */
static int row(cnt_signals *s, const char *file, const char *tool, const char *signal, const json_t *value,
	int has_limit, double limit, int flag_false, cnt_err *err)
{
	cnt_sig_row *r;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		cnt_sig_row *p = realloc(s->rows, cap * sizeof(*p));

		if (p == NULL)
			return cnt_err_nomem(err);
		s->rows = p;
		s->cap = cap;
	}
	r = &s->rows[s->n];
	memset(r, 0, sizeof(*r));
	if ((r->file = dup(file)) == NULL || (r->tool = dup(tool)) == NULL || (r->signal = dup(signal)) == NULL) {
		free(r->file);
		free(r->tool);
		return cnt_err_nomem(err);
	}
	s->n++;
	if (json_is_boolean(value)) {
		r->has_value = 1;
		r->value = json_is_true(value);
		r->flagged = flag_false && !json_is_true(value);
	} else if (json_is_number(value)) {
		r->has_value = 1;
		r->value = json_number_value(value);
		r->has_limit = has_limit;
		r->limit = limit;
		r->flagged = has_limit && r->value > limit;
	}
	if (r->flagged)
		s->flagged++;
	return 0;
}

int cnt_signals_add_file(cnt_signals *s, const cnt_sig_limits *l, const char *path, cnt_err *err)
{
	json_error_t je;
	json_t *j = cnt_json_load_file(path, 0, &je), *v, *tool, *rr, *budget;
	const char *t, *key;
	char name[160];
	int rc = 0;

	if (j == NULL)
		return json_fail(&je, "statistics", path, err);
	tool = json_object_get(j, "tool");
	if (!json_is_object(j) || !json_is_string(tool)) {
		json_decref(j);
		return cnt_err_set(err, "statistics '%s': not the --stats object of a cnt tool (no \"tool\")", path);
	}
	t = json_string_value(tool);
	s->files++;
	/* the conservation check, and the canary's liveness: flagged when false */
	if ((v = json_object_get(j, "balanced")) != NULL && json_is_boolean(v))
		rc = row(s, path, t, "balanced", v, 0, 0, 1, err);
	if (rc == 0 && (v = json_object_get(j, "reporting")) != NULL && json_is_boolean(v))
		rc = row(s, path, t, "reporting", v, 0, 0, 1, err);
	for (int k = 0; rc == 0 && k < CNT_SIG_NLIMITS; k++) {
		double limit = l->limit[k];
		int has = l->has[k];

		if ((v = json_object_get(j, names[k])) == NULL)
			continue;
		/* rejects and holds: a row when there are any (or a threshold) */
		if ((k == CNT_SIG_REJECTED || k == CNT_SIG_HELD) && !has && json_is_number(v) &&
		    json_number_value(v) == 0)
			continue;
		/* the projection lag against the board's own freshness budget */
		if (k == CNT_SIG_AS_OF_AGE_S && !l->set[k] &&
		    json_is_number(budget = json_object_get(j, "freshness_budget_s")) &&
		    json_number_value(budget) > 0)
			limit = json_number_value(budget), has = 1;
		rc = row(s, path, t, names[k], v, has, limit, 0, err);
		/* the reject reasons that occurred, after "rejected" */
		if (rc == 0 && k == CNT_SIG_REJECTED && json_is_object(rr = json_object_get(j, "rejected_by_reason")))
			json_object_foreach(rr, key, v) {
				if (!json_is_number(v) || json_number_value(v) == 0)
					continue;
				snprintf(name, sizeof(name), "rejected_by_reason.%.120s", key);
				if ((rc = row(s, path, t, name, v, 0, 0, 0, err)) != 0)
					break;
			}
	}
	json_decref(j);
	return rc;
}

/* ---- output ------------------------------------------------------------- */

static void num(char *buf, size_t n, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, n, "%.0f", v);
	else
		snprintf(buf, n, "%.6g", v);
}

static void shown_value(char *buf, size_t n, const cnt_sig_row *r)
{
	if (!r->has_value)
		snprintf(buf, n, "null");
	else if (strcmp(r->signal, "balanced") == 0 || strcmp(r->signal, "reporting") == 0)
		snprintf(buf, n, "%s", r->value != 0 ? "true" : "false");
	else
		num(buf, n, r->value);
}

int cnt_signals_table(const cnt_signals *s, cnt_buf *out)
{
	char v[64], lim[72];

	if (cnt_buf_printf(out, "%-16s %-40s %12s %10s  %s\n", "tool", "signal", "value", "threshold", "status") != 0)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		const cnt_sig_row *r = &s->rows[i];

		shown_value(v, sizeof(v), r);
		if (r->has_limit) {
			lim[0] = '>';
			lim[1] = ' ';
			num(lim + 2, sizeof(lim) - 2, r->limit);
		} else if (strcmp(r->signal, "balanced") == 0 || strcmp(r->signal, "reporting") == 0)
			snprintf(lim, sizeof(lim), "= false");
		else
			snprintf(lim, sizeof(lim), "-");
		if (cnt_buf_printf(out, "%-16s %-40s %12s %10s  %s\n", r->tool, r->signal, v, lim,
			r->flagged ? "FLAGGED" : "ok") != 0)
			return -1;
	}
	return cnt_buf_printf(out, "%zu file%s, %zu signal%s, %zu flagged\n", s->files, s->files == 1 ? "" : "s",
		s->n, s->n == 1 ? "" : "s", s->flagged);
}

int cnt_signals_json(const cnt_signals *s, cnt_buf *out)
{
	char v[64];

	if (cnt_buf_printf(out, "{\"files\":%zu,\"flagged\":%zu,\"signals\":[", s->files, s->flagged) != 0)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		const cnt_sig_row *r = &s->rows[i];

		shown_value(v, sizeof(v), r);
		if ((i && cnt_buf_append(out, ",", 1) != 0) ||
		    cnt_buf_append(out, "{\"file\":", 8) != 0 ||
		    cnt_json_string(out, (const uint8_t *)r->file, strlen(r->file), 0) != 0 ||
		    cnt_buf_append(out, ",\"tool\":", 8) != 0 ||
		    cnt_json_string(out, (const uint8_t *)r->tool, strlen(r->tool), 0) != 0 ||
		    cnt_buf_append(out, ",\"signal\":", 10) != 0 ||
		    cnt_json_string(out, (const uint8_t *)r->signal, strlen(r->signal), 0) != 0 ||
		    cnt_buf_printf(out, ",\"value\":%s,\"threshold\":", v) != 0)
			return -1;
		if (r->has_limit) {
			num(v, sizeof(v), r->limit);
			if (cnt_buf_printf(out, "%s", v) != 0)
				return -1;
		} else if (cnt_buf_append(out, "null", 4) != 0)
			return -1;
		if (cnt_buf_printf(out, ",\"flagged\":%s}", r->flagged ? "true" : "false") != 0)
			return -1;
	}
	return cnt_buf_append(out, "]}\n", 3);
}

void cnt_signals_release(cnt_signals *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->rows[i].file);
		free(s->rows[i].tool);
		free(s->rows[i].signal);
	}
	free(s->rows);
	memset(s, 0, sizeof(*s));
}
