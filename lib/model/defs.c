/*
 * defs.c - the definitions file (cnt-definitions/1).
 *
 * The control plane of cnt is one JSON document.  It declares who counts
 * (tenants), what is counted (counters, each a list of numbered versions),
 * how counts are ranked (leaderboards) and when a ranking is closed into
 * standings (seasons).  Field names follow the data model (seed 004):
 *
 *   {
 *     "format": "cnt-definitions/1",
 *     "tenants":      [ {tenant_id, name, timezone, event_quota_per_s,
 *                        member_cap, deletion_sla_days} ... ],
 *     "counters":     [ {tenant_id, counter_id, holds: [
 *                          {signal: rate, window_s, ceiling} |
 *                          {signal: lockstep, span_s, members} |
 *                          {signal: device, attr, span_s, max_events} ...],
 *                        filters: [
 *                          {rule: user_agent, list, attr} |
 *                          {rule: address, list, attr} |
 *                          {rule: rate, max_events, span_s, attr} ...],
 *                        audit: [
 *                          {heuristic: lockstep, span_s, videos} |
 *                          {heuristic: burst, attr, span_s, max_events} |
 *                          {heuristic: watch_time, attr, views, share} |
 *                          {heuristic: inflation, baseline} ...],
 *                        versions: [
 *                          {version, effective_from, type, bounds_lo,
 *                           bounds_hi, lateness_horizon_s, dedup_horizon_s,
 *                           dedup_key, client_writable, windows,
 *                           unit_cost_per_m, min_watch_ms, watch_attr,
 *                           dimensions, tolerated_error} ... ]} ... ],
 *     "leaderboards": [ {board_id, tenant_id, counter_id, counter_version,
 *                        window, from, to, week_start, scope_kind,
 *                        scope_attr, order, tie_break, rank_numbering,
 *                        materialised_cap, freshness_budget_s,
 *                        histogram: {scale, buckets, width},
 *                        retain_versions_s, retain_versions_min} ... ],
 *     "seasons":      [ {season_id, board_id, opens_at, closes_at,
 *                        timezone, state} ... ]
 *   }
 *
 * Why counters are versioned (seed 000, "A tenant wants to change a
 * counter's tie-break rule"): a change of type, bounds or window set that
 * were applied in place would silently reinterpret every event already in
 * the log, and a rebuild would no longer reproduce the live numbers.  So a
 * counter is a list of versions, numbered upwards, each with the instant it
 * takes effect.  Admission stamps onto each event the version in force at
 * admission time (cnt_counter_version_at), and every later stage applies the
 * version the event names, so old events keep the meaning they had.
 *
 * Invariants the loader guarantees (anything else is an error):
 *   - every object has only known keys ("comment" is allowed anywhere and
 *     ignored), so a misspelt key is reported rather than defaulted;
 *   - ids are 1..128 bytes without control characters or '/', unique in
 *     their scope: tenant_id, board_id and season_id globally, counter_id
 *     within its tenant;
 *   - references resolve: counter -> tenant, leaderboard -> counter (and
 *     pinned version), season -> leaderboard;
 *   - a counter's versions are >= 1 and strictly increasing, and so are
 *     their effective_from instants; only the first may omit effective_from
 *     (then it has always been in force);
 *   - timezones name a TZif file under $TZDIR or /usr/share/zoneinfo;
 *   - a leaderboard's tie_break list ends with member_ref_asc (appended when
 *     absent), so every ranking is a total order and reproducible.
 *
 * Errors: the first problem found is reported, as one line naming the file,
 * the JSON path and what is wrong, e.g.
 *   definitions 'defs.json': $.counters[0].versions[1].bounds_lo: expected
 *   an integer, got string
 * JSON syntax errors (and duplicate keys in one object) give line and
 * column from jansson instead of a path.
 *
 * Memory: the jansson tree is kept for the lifetime of the cnt_defs and all
 * strings point into it; the structs live in arrays allocated once, so the
 * pointers between them (counter -> tenant, season -> board) are stable.
 * Lookups go through open-addressing tables keyed by XXH3 of the id bytes:
 * one hash and usually one memcmp per admitted event.
 *
 * RFC 3339 parsing is done by a small static parser here; it is meant to be
 * replaced by lib/timefmt's cnt_time_parse_rfc3339 once that exists.
 */
#include "model/defs.h"
#include "base/jsonload.h"
#include "base/buf.h"
#include "count/hll.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define PATH_MAX_LEN 200
#define DEFS_FILE_MAX (64u << 20)

/* ---- hash tables ---------------------------------------------------- */

typedef struct hslot {
	uint64_t h;
	const char *k1, *k2;
	size_t l1, l2;
	size_t idx1; /* entry index + 1; 0 = empty slot */
} hslot;

typedef struct htab {
	hslot *slots;
	size_t mask;
} htab;

static uint64_t hkey(const char *k1, size_t l1, const char *k2, size_t l2)
{
	uint64_t h = XXH3_64bits(k1, l1);

	if (k2 != NULL)
		h = XXH3_64bits_withSeed(k2, l2, h);
	return h;
}

static int htab_init(htab *t, size_t n)
{
	size_t cap = 8;

	while (cap < 2 * n)
		cap *= 2;
	t->slots = calloc(cap, sizeof(*t->slots));
	t->mask = cap - 1;
	return t->slots ? 0 : -1;
}

/* Returns the entry index, or (size_t)-1. */
static size_t htab_find(const htab *t, const char *k1, size_t l1, const char *k2, size_t l2)
{
	uint64_t h;
	size_t i;

	if (t->slots == NULL)
		return (size_t)-1;
	h = hkey(k1, l1, k2, l2);
	for (i = h & t->mask; t->slots[i].idx1 != 0; i = (i + 1) & t->mask) {
		const hslot *s = &t->slots[i];

		if (s->h == h && s->l1 == l1 && memcmp(s->k1, k1, l1) == 0 &&
		    (k2 == NULL || (s->l2 == l2 && memcmp(s->k2, k2, l2) == 0)))
			return s->idx1 - 1;
	}
	return (size_t)-1;
}

/* The key must not be present yet; the table never fills (cap >= 2n). */
static void htab_put(htab *t, const char *k1, size_t l1, const char *k2, size_t l2, size_t idx)
{
	uint64_t h = hkey(k1, l1, k2, l2);
	size_t i = h & t->mask;

	while (t->slots[i].idx1 != 0)
		i = (i + 1) & t->mask;
	t->slots[i] = (hslot){h, k1, k2, l1, l2, idx + 1};
}

/* ---- the object ------------------------------------------------------ */

struct cnt_defs {
	json_t *root; /* owns every string handed out */
	cnt_tenant *tenants;
	size_t ntenants;
	cnt_counter *counters;
	size_t ncounters;
	cnt_leaderboard *boards;
	size_t nboards;
	cnt_season *seasons;
	size_t nseasons;
	htab t_tenant, t_counter, t_board, t_season;
	double unit_costs[16];        /* $.unit_costs by type */
	unsigned char has_unit_cost[16];
};

/* ---- parse context, paths, messages ----------------------------------- */

typedef struct pctx {
	const char *name;
	cnt_err *err;
} pctx;

static int fail(const pctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(const pctx *c, const char *path, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cnt_err_set(c->err, "definitions '%s': %s: %s", c->name, path, msg);
	if (c->err && strcmp(fmt, "out of memory") == 0)
		c->err->kind = CNT_ERR_NOMEM;
	return -1;
}

/* Paths are built from our own key names and array indexes, so they are
 * short; one that did not fit would only be cut short in a message.
 * (Hand-rolled rather than snprintf, which -Wformat-truncation=2 flags.) */
static size_t pcat(char *out, size_t k, const char *s)
{
	while (*s != '\0' && k < PATH_MAX_LEN - 1)
		out[k++] = *s++;
	out[k] = '\0';
	return k;
}

static void pkey(char *out, const char *parent, const char *key)
{
	size_t k = pcat(out, 0, parent);

	k = pcat(out, k, ".");
	pcat(out, k, key);
}

static void pidx(char *out, const char *parent, const char *key, size_t i)
{
	char num[24], rev[24];
	size_t n = 0, k;

	do {
		rev[n++] = (char)('0' + i % 10);
		i /= 10;
	} while (i != 0);
	for (k = 0; k < n; k++)
		num[k] = rev[n - 1 - k];
	num[n] = '\0';
	pkey(out, parent, key);
	k = pcat(out, strlen(out), "[");
	k = pcat(out, k, num);
	pcat(out, k, "]");
}

/* Copies s for quoting in a one-line message: at most 60 bytes, control
 * characters replaced by '?'. */
static const char *shown(char out[80], const char *s, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n && k < 60; i++)
		out[k++] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
	if (i < n) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
	return out;
}

static const char *jtype(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "real";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

/* Levenshtein distance, capped: used to suggest the key that was meant. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, row[65];

	if (la > 64 || lb > 64)
		return 99;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

static int check_object(const pctx *c, const json_t *v, const char *path)
{
	if (!json_is_object(v))
		return fail(c, path, "expected an object, got %s", jtype(v));
	return 0;
}

/* Every key of obj must be in allowed (NULL-terminated) or be "comment". */
static int check_keys(const pctx *c, json_t *obj, const char *path, const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v) {
		const char *best = NULL;
		size_t bestd = 3, i, d;
		char p[PATH_MAX_LEN], q[80];

		if (strcmp(key, "comment") == 0)
			continue;
		for (i = 0; allowed[i] != NULL; i++) {
			if (strcmp(key, allowed[i]) == 0)
				break;
			d = edit_distance(key, allowed[i]);
			if (d < bestd) {
				bestd = d;
				best = allowed[i];
			}
		}
		if (allowed[i] != NULL)
			continue;
		pkey(p, path, shown(q, key, strlen(key)));
		if (best != NULL)
			return fail(c, p, "unknown key (did you mean '%s'?)", best);
		return fail(c, p, "unknown key");
	}
	return 0;
}

/* The member, or NULL when absent or JSON null. */
static json_t *opt(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return (v == NULL || json_is_null(v)) ? NULL : v;
}

static int get_str(const pctx *c, json_t *obj, const char *path, const char *key,
		   int required, const char **out)
{
	json_t *v = required ? json_object_get(obj, key) : opt(obj, key);
	char p[PATH_MAX_LEN];

	pkey(p, path, key);
	*out = NULL;
	if (v == NULL)
		return required ? fail(c, p, "required key is missing") : 0;
	if (!json_is_string(v))
		return fail(c, p, "expected a string, got %s", jtype(v));
	*out = json_string_value(v);
	return 0;
}

static int get_int(const pctx *c, json_t *obj, const char *path, const char *key,
		   int required, int64_t lo, int64_t hi, int64_t dflt, int64_t *out)
{
	json_t *v = required ? json_object_get(obj, key) : opt(obj, key);
	char p[PATH_MAX_LEN];
	json_int_t x;

	pkey(p, path, key);
	*out = dflt;
	if (v == NULL)
		return required ? fail(c, p, "required key is missing") : 0;
	if (!json_is_integer(v))
		return fail(c, p, "expected an integer, got %s", jtype(v));
	x = json_integer_value(v);
	if (x < lo || x > hi)
		return fail(c, p, "%lld is out of range [%lld, %lld]", (long long)x,
			    (long long)lo, (long long)hi);
	*out = (int64_t)x;
	return 0;
}

static int get_bool(const pctx *c, json_t *obj, const char *path, const char *key,
		    int dflt, int *out)
{
	json_t *v = opt(obj, key);
	char p[PATH_MAX_LEN];

	*out = dflt;
	if (v == NULL)
		return 0;
	if (!json_is_boolean(v)) {
		pkey(p, path, key);
		return fail(c, p, "expected true or false, got %s", jtype(v));
	}
	*out = json_is_true(v);
	return 0;
}

/* Enumerated string: names[] NULL-terminated; dflt < 0 means required. */
static int get_enum(const pctx *c, json_t *obj, const char *path, const char *key,
		    const char *const *names, int dflt, int *out)
{
	const char *s;
	char p[PATH_MAX_LEN], alts[256], q[80];
	size_t k = 0;
	int i;

	if (get_str(c, obj, path, key, dflt < 0, &s) != 0)
		return -1;
	*out = dflt;
	if (s == NULL)
		return 0;
	for (i = 0; names[i] != NULL; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	alts[0] = '\0';
	for (i = 0; names[i] != NULL && k < sizeof(alts) - 1; i++)
		k += (size_t)snprintf(alts + k, sizeof(alts) - k, "%s%s", i ? ", " : "", names[i]);
	pkey(p, path, key);
	return fail(c, p, "unknown value '%s' (expected one of %s)",
		    shown(q, s, strlen(s)), alts);
}

static int check_id(const pctx *c, const char *path, const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0)
		return fail(c, path, "must not be empty");
	if (n > CNT_DEFS_ID_MAX)
		return fail(c, path, "is %zu bytes long, the limit is %d", n, CNT_DEFS_ID_MAX);
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch < 0x20 || ch == 0x7f)
			return fail(c, path, "contains a control character at byte %zu", i);
		if (ch == '/')
			return fail(c, path, "contains '/' (not allowed in ids)");
	}
	return 0;
}

static int get_id(const pctx *c, json_t *obj, const char *path, const char *key, const char **out)
{
	char p[PATH_MAX_LEN];

	if (get_str(c, obj, path, key, 1, out) != 0)
		return -1;
	pkey(p, path, key);
	return check_id(c, p, *out);
}

/* ---- time ------------------------------------------------------------ */

static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int digits(const char *s, size_t n, int *out)
{
	int v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/* Parses "YYYY-MM-DDTHH:MM:SS[.fff...][Z|+HH:MM|-HH:MM]" (RFC 3339; the
 * offset may be absent for a local time).  'T' may also be 't' or ' ', 'Z'
 * also 'z'.  Fractions beyond milliseconds are truncated; leap seconds are
 * not accepted.  Returns 0, or -1 with *why set. */
static int parse_time(const char *s, cnt_deftime *t, const char **why)
{
	static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	size_t n = strlen(s), i = 19;
	int y, mo, d, h, mi, se, ms = 0, oh, om, leap, scale = 100;
	int64_t civil;

	*why = "expected an RFC 3339 time like 2026-01-01T00:00:00Z";
	if (n < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    s[13] != ':' || s[16] != ':' || digits(s, 4, &y) || digits(s + 5, 2, &mo) ||
	    digits(s + 8, 2, &d) || digits(s + 11, 2, &h) || digits(s + 14, 2, &mi) ||
	    digits(s + 17, 2, &se))
		return -1;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && leap) || h > 23 ||
	    mi > 59 || se > 59) {
		*why = "date or time field out of range";
		return -1;
	}
	if (i < n && s[i] == '.') {
		size_t start = ++i;

		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
			if (scale > 0)
				ms += (s[i] - '0') * scale;
			scale /= 10;
		}
		if (i == start)
			return -1;
	}
	civil = (days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se) * 1000 + ms;
	t->text = s;
	t->civil_ms = civil;
	t->has_offset = 0;
	t->ms = 0;
	if (i == n)
		return 0;
	if ((s[i] == 'Z' || s[i] == 'z') && i + 1 == n) {
		t->has_offset = 1;
		t->ms = civil;
		return 0;
	}
	if ((s[i] == '+' || s[i] == '-') && n - i == 6 && s[i + 3] == ':' &&
	    !digits(s + i + 1, 2, &oh) && !digits(s + i + 4, 2, &om)) {
		if (oh > 23 || om > 59) {
			*why = "offset out of range";
			return -1;
		}
		t->has_offset = 1;
		t->ms = civil - (s[i] == '+' ? 1 : -1) * (int64_t)(oh * 60 + om) * 60000;
		return 0;
	}
	return -1;
}

/* need_offset: 1 = instant required, 0 = either form. */
static int get_time(const pctx *c, json_t *obj, const char *path, const char *key,
		    int required, int need_offset, cnt_deftime *out)
{
	const char *s, *why;
	char p[PATH_MAX_LEN], q[80];

	memset(out, 0, sizeof(*out));
	if (get_str(c, obj, path, key, required, &s) != 0)
		return -1;
	if (s == NULL)
		return 0;
	pkey(p, path, key);
	if (parse_time(s, out, &why) != 0)
		return fail(c, p, "'%s': %s", shown(q, s, strlen(s)), why);
	if (need_offset && !out->has_offset)
		return fail(c, p, "'%s': needs an offset or 'Z' (an instant, not a local time)",
			    shown(q, s, strlen(s)));
	return 0;
}

/* ---- timezones -------------------------------------------------------- */

int cnt_defs_check_timezone(const char *name, cnt_err *err)
{
	const char *dir = getenv("TZDIR");
	char file[4096], magic[4], q[80];
	size_t n = strlen(name), i;
	FILE *f;

	if (dir == NULL || *dir == '\0')
		dir = "/usr/share/zoneinfo";
	if (n == 0)
		return cnt_err_set(err, "timezone must not be empty");
	if (n > 255 || name[0] == '/' || strstr(name, "..") != NULL)
		return cnt_err_set(err, "'%s' is not an IANA timezone name", shown(q, name, n));
	for (i = 0; i < n; i++) {
		char ch = name[i];

		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		      (ch >= '0' && ch <= '9') || ch == '/' || ch == '_' || ch == '-' ||
		      ch == '+' || ch == '.'))
			return cnt_err_set(err, "'%s' is not an IANA timezone name", shown(q, name, n));
	}
	if ((size_t)snprintf(file, sizeof(file), "%s/%s", dir, name) >= sizeof(file))
		return cnt_err_set(err, "timezone '%s': path too long", name);
	f = fopen(file, "rb");
	if (f == NULL)
		return cnt_err_set(err, "unknown timezone '%s' (no file %s)", name, file);
	n = fread(magic, 1, 4, f);
	fclose(f);
	if (n != 4 || memcmp(magic, "TZif", 4) != 0)
		return cnt_err_set(err, "unknown timezone '%s' (%s is not a TZif file)", name, file);
	return 0;
}

static int get_tz(const pctx *c, json_t *obj, const char *path, const char *key,
		  int required, const char **out)
{
	cnt_err e;
	char p[PATH_MAX_LEN];

	if (get_str(c, obj, path, key, required, out) != 0)
		return -1;
	if (*out == NULL)
		return 0;
	if (cnt_defs_check_timezone(*out, &e) != 0) {
		pkey(p, path, key);
		return fail(c, p, "%s", e.msg);
	}
	return 0;
}

/* Array member: required or absent (-> *n = 0). */
static int get_array(const pctx *c, json_t *obj, const char *path, const char *key,
		     int required, json_t **arr, size_t *n)
{
	json_t *v = required ? json_object_get(obj, key) : opt(obj, key);
	char p[PATH_MAX_LEN];

	*arr = NULL;
	*n = 0;
	pkey(p, path, key);
	if (v == NULL)
		return required ? fail(c, p, "required key is missing") : 0;
	if (!json_is_array(v))
		return fail(c, p, "expected an array, got %s", jtype(v));
	*arr = v;
	*n = json_array_size(v);
	return 0;
}

/* ---- sections ----------------------------------------------------------- */

static const char *const ctype_names[] = {"exact", "unique", "min", "max", "approx", NULL};
static const char *const window_names[] = {"all_time", "day", "week", "month", "season",
					   "rolling_24h", "last_30d", "range", NULL};
static const char *const dedup_names[] = {"idempotency_key", "item_member", NULL};
static const char *const scope_names[] = {"global", "region", "cohort", NULL};
static const char *const tie_names[] = {"earliest_achiever", "latest_achiever",
					"member_ref_asc", NULL};
static const char *const rank_names[] = {"competition", "dense", "ordinal", NULL};
static const char *const scale_names[] = {"log", "linear", NULL};
static const char *const weekday_names[] = {"monday", "tuesday", "wednesday", "thursday",
					    "friday", "saturday", "sunday", NULL};
static const char *const state_names[] = {"open", "closing", "closed", NULL};
static const char *const order_names[] = {"desc", "asc", NULL};
static const char *const hold_names[] = {"rate", "lockstep", "device", NULL};
static const char *const filter_names[] = {"user_agent", "address", "rate", NULL};
static const char *const audit_names[] = {"lockstep", "burst", "watch_time", "inflation", NULL};

#define DAY_S 86400
#define YEAR_S (366 * DAY_S)

/* "probe": true reserves the tenant for synthetic probe events (the
 * canary, cnt-canary(1)); no leaderboard may rank one of its counters, so
 * a probe can never reach a real standing (parse_boards refuses it). */
static int parse_probe(const pctx *c, json_t *o, const char *p, cnt_tenant *t)
{
	return get_bool(c, o, p, "probe", 0, &t->probe);
}

/* A board ranking a probe tenant's counter. */
static int refuse_probe_board(const pctx *c, const char *p, const cnt_leaderboard *b)
{
	char pk[PATH_MAX_LEN], q[80];

	if (!b->tenant->probe)
		return 0;
	pkey(pk, p, "tenant_id");
	return fail(c, pk, "tenant '%s' is a probe tenant (\"probe\": true): no leaderboard may rank "
		    "its counters", shown(q, b->tenant_id, strlen(b->tenant_id)));
}

static int parse_tenants(const pctx *c, cnt_defs *d, json_t *arr)
{
	static const char *const keys[] = {"tenant_id", "name", "timezone", "event_quota_per_s",
					   "member_cap", "deletion_sla_days", "probe", NULL};
	size_t i;

	for (i = 0; i < d->ntenants; i++) {
		json_t *o = json_array_get(arr, i);
		cnt_tenant *t = &d->tenants[i];
		char p[PATH_MAX_LEN], pk[PATH_MAX_LEN], q[80];
		size_t prev;

		pidx(p, "$", "tenants", i);
		if (check_object(c, o, p) || check_keys(c, o, p, keys) ||
		    get_id(c, o, p, "tenant_id", &t->tenant_id) ||
		    get_str(c, o, p, "name", 0, &t->name) ||
		    get_tz(c, o, p, "timezone", 1, &t->timezone) ||
		    get_int(c, o, p, "event_quota_per_s", 0, 0, INT64_MAX, 0, &t->event_quota_per_s) ||
		    get_int(c, o, p, "member_cap", 0, 0, INT64_MAX, 0, &t->member_cap) ||
		    get_int(c, o, p, "deletion_sla_days", 0, 1, 3650, 30, &t->deletion_sla_days) ||
		    parse_probe(c, o, p, t))
			return -1;
		if (t->name == NULL)
			t->name = t->tenant_id;
		prev = htab_find(&d->t_tenant, t->tenant_id, strlen(t->tenant_id), NULL, 0);
		if (prev != (size_t)-1) {
			pkey(pk, p, "tenant_id");
			return fail(c, pk, "duplicate tenant '%s' (first declared at $.tenants[%zu])",
				    shown(q, t->tenant_id, strlen(t->tenant_id)), prev);
		}
		htab_put(&d->t_tenant, t->tenant_id, strlen(t->tenant_id), NULL, 0, i);
	}
	return 0;
}

static int parse_windows(const pctx *c, json_t *o, const char *path, unsigned *out)
{
	json_t *arr;
	size_t n, i;
	char p[PATH_MAX_LEN], q[80];

	if (get_array(c, o, path, "windows", 0, &arr, &n) != 0)
		return -1;
	*out = CNT_WIN_BIT(CNT_WIN_ALL_TIME);
	if (arr == NULL)
		return 0;
	pkey(p, path, "windows");
	if (n == 0)
		return fail(c, p, "must list at least one window");
	*out = 0;
	for (i = 0; i < n; i++) {
		json_t *v = json_array_get(arr, i);
		const char *s;
		int k;
		char pi[PATH_MAX_LEN];

		pidx(pi, path, "windows", i);
		if (!json_is_string(v))
			return fail(c, pi, "expected a string, got %s", jtype(v));
		s = json_string_value(v);
		for (k = 0; window_names[k] != NULL && strcmp(s, window_names[k]) != 0; k++)
			;
		if (window_names[k] == NULL)
			return fail(c, pi, "unknown window '%s' (expected one of all_time, day, week, "
				    "month, season, rolling_24h, last_30d, range)", shown(q, s, strlen(s)));
		if (*out & CNT_WIN_BIT(k))
			return fail(c, pi, "window '%s' is listed twice", s);
		*out |= CNT_WIN_BIT(k);
	}
	return 0;
}

/* An attrs key named by the definitions: 1 to 64 bytes (the event
 * contract's limit), no control characters. */
static int check_attr_key(const pctx *c, const char *path, const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 64)
		return fail(c, path, "must be 1 to 64 bytes (an attrs key)");
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return fail(c, path, "contains a control character at byte %zu", i);
	return 0;
}

/* The watch-time gate of a version: min_watch_ms, watch_attr. */
static int parse_watch(const pctx *c, json_t *o, const char *p, cnt_counter_version *v)
{
	char pk[PATH_MAX_LEN];

	if (get_int(c, o, p, "min_watch_ms", 0, 1, INT64_MAX, 0, &v->min_watch_ms) ||
	    get_str(c, o, p, "watch_attr", 0, &v->watch_attr))
		return -1;
	pkey(pk, p, "watch_attr");
	if (v->watch_attr == NULL) {
		if (v->min_watch_ms > 0)
			v->watch_attr = "ms_watched";
		return 0;
	}
	if (v->min_watch_ms == 0)
		return fail(c, pk, "only allowed with min_watch_ms (the gate it names the "
			    "attribute of)");
	return check_attr_key(c, pk, v->watch_attr);
}

/* "dimensions": up to CNT_DIMS_MAX distinct attrs keys, each 1 to 64
 * bytes (JSON strings hold no NUL once loaded: jansson refuses \u0000
 * unless asked). */
static int parse_dimensions(const pctx *c, json_t *o, const char *path, cnt_counter_version *v)
{
	json_t *arr;
	size_t n, i, j;
	char p[PATH_MAX_LEN], q[80];

	v->ndimensions = 0;
	if (get_array(c, o, path, "dimensions", 0, &arr, &n) != 0)
		return -1;
	if (arr == NULL)
		return 0;
	pkey(p, path, "dimensions");
	if (n > CNT_DIMS_MAX)
		return fail(c, p, "lists %zu dimensions (at most %d)", n, CNT_DIMS_MAX);
	for (i = 0; i < n; i++) {
		json_t *e = json_array_get(arr, i);
		const char *s;
		char pi[PATH_MAX_LEN];

		pidx(pi, path, "dimensions", i);
		if (!json_is_string(e))
			return fail(c, pi, "expected a string (an attrs key), got %s", jtype(e));
		s = json_string_value(e);
		if (s[0] == '\0' || json_string_length(e) != strlen(s) || strlen(s) > 64)
			return fail(c, pi, "must be 1 to 64 bytes, without NUL");
		for (j = 0; j < i; j++)
			if (strcmp(s, v->dimensions[j]) == 0)
				return fail(c, pi, "dimension '%s' is listed twice", shown(q, s, strlen(s)));
		v->dimensions[i] = s;
	}
	v->ndimensions = n;
	return 0;
}

/* Whether a counter type takes tolerated_error: approx (required: it sets
 * the sampling schedule, lib/ingest/sample.h) and unique (it sets the
 * sketch precision).  Exact, min and max are exact: they tolerate no
 * error. */
static int takes_tolerated_error(cnt_counter_type t)
{
	return t == CNT_CTYPE_APPROX || t == CNT_CTYPE_UNIQUE;
}

/* "tolerated_error" (after type and bounds are known): a number in
 * (0, 0.5] where the type takes it.  An approx version needs it, and
 * bounds within +-CNT_APPROX_DELTA_MAX; for a unique counter it gives the
 * precision it needs, refused past 18. */
static int parse_tolerated_error(const pctx *c, json_t *o, const char *p, cnt_counter_version *v)
{
	json_t *t = opt(o, "tolerated_error");
	char pk[PATH_MAX_LEN];
	double e;
	int need;

	v->tolerated_error = 0;
	v->hll_precision = CNT_HLL_P;
	pkey(pk, p, "tolerated_error");
	if (t == NULL) {
		if (v->type == CNT_CTYPE_APPROX)
			return fail(c, pk, "required for type 'approx' (the relative error "
				    "tolerated at 95 %% confidence, e.g. 0.05)");
		return 0;
	}
	if (!takes_tolerated_error(v->type))
		return fail(c, pk, "not allowed for a counter of type %s (it counts exactly)",
			    cnt_defs_ctype_name(v->type));
	if (!json_is_number(t))
		return fail(c, pk, "expected a number, got %s", jtype(t));
	e = json_number_value(t);
	if (!(e > 0 && e <= 0.5))
		return fail(c, pk, "%g is out of range (0, 0.5] (the relative error tolerated at 95 %%)", e);
	v->tolerated_error = e;
	if (v->type == CNT_CTYPE_APPROX) {
		if (v->bounds_lo < -CNT_APPROX_DELTA_MAX || v->bounds_hi > CNT_APPROX_DELTA_MAX) {
			pkey(pk, p, v->bounds_lo < -CNT_APPROX_DELTA_MAX ? "bounds_lo" : "bounds_hi");
			return fail(c, pk, "an approx counter needs bounds_lo and bounds_hi within "
				    "[-%lld, %lld] (2^30), so that its variance cannot overflow",
				    (long long)CNT_APPROX_DELTA_MAX, (long long)CNT_APPROX_DELTA_MAX);
		}
		return 0;
	}
	need = cnt_hll_precision_for(e);
	if (need > CNT_HLL_P_MAX)
		return fail(c, pk, "%g needs HLL++ precision %d; the highest is %d, whose error at 95 %% "
			    "is %.4f", e, need, CNT_HLL_P_MAX, cnt_hll_error95(CNT_HLL_P_MAX));
	v->hll_precision = need;
	return 0;
}

static int parse_version(const pctx *c, json_t *o, const char *p, cnt_counter_version *v)
{
	static const char *const keys[] = {"version", "effective_from", "type", "bounds_lo",
					   "bounds_hi", "lateness_horizon_s", "dedup_horizon_s",
					   "dedup_key", "client_writable", "windows",
					   "unit_cost_per_m", "min_watch_ms", "watch_attr",
					   "dimensions", "monotonic", "tolerated_error", NULL};
	int64_t ver;
	int type;
	cnt_deftime eff;
	json_t *cost;
	char pk[PATH_MAX_LEN];

	if (check_object(c, o, p) || check_keys(c, o, p, keys) ||
	    get_int(c, o, p, "version", 1, 1, INT32_MAX, 0, &ver) ||
	    get_time(c, o, p, "effective_from", 0, 1, &eff) ||
	    get_enum(c, o, p, "type", ctype_names, -1, &type) ||
	    get_int(c, o, p, "bounds_lo", 0, INT64_MIN, INT64_MAX, INT64_MIN, &v->bounds_lo) ||
	    get_int(c, o, p, "bounds_hi", 0, INT64_MIN, INT64_MAX, INT64_MAX, &v->bounds_hi) ||
	    get_int(c, o, p, "lateness_horizon_s", 0, 0, YEAR_S, 3600, &v->lateness_horizon_s) ||
	    get_int(c, o, p, "dedup_horizon_s", 0, 0, YEAR_S, DAY_S, &v->dedup_horizon_s) ||
	    get_enum(c, o, p, "dedup_key", dedup_names, CNT_DEDUP_IDEMPOTENCY_KEY, &v->dedup_key) ||
	    get_bool(c, o, p, "client_writable", 0, &v->client_writable) ||
	    parse_windows(c, o, p, &v->windows) || parse_watch(c, o, p, v) ||
	    parse_dimensions(c, o, p, v) || get_bool(c, o, p, "monotonic", 0, &v->monotonic))
		return -1;
	v->version = (int)ver;
	v->type = (cnt_counter_type)type;
	v->effective_from_ms = eff.text ? eff.ms : INT64_MIN;
	if (parse_tolerated_error(c, o, p, v) != 0)
		return -1;
	if (v->bounds_lo > v->bounds_hi) {
		pkey(pk, p, "bounds_lo");
		return fail(c, pk, "%lld is greater than bounds_hi %lld",
			    (long long)v->bounds_lo, (long long)v->bounds_hi);
	}
	if (v->monotonic && !cnt_defs_ctype_monotonic(v->type)) {
		pkey(pk, p, "monotonic");
		return fail(c, pk, "a %s counter cannot be monotonic (only a counter that sums "
			    "deltas can: exact, approx)", cnt_defs_ctype_name(v->type));
	}
	if (v->monotonic && opt(o, "bounds_lo") == NULL)
		v->bounds_lo = 0;   /* the declaration's own lower bound */
	if (v->monotonic && v->bounds_lo < 0) {
		pkey(pk, p, "bounds_lo");
		return fail(c, pk, "%lld contradicts \"monotonic\": true (a monotonic counter "
			    "refuses every negative delta; declare bounds_lo >= 0 or leave it out)",
			    (long long)v->bounds_lo);
	}
	v->unit_cost_per_m = 0;
	v->unit_cost_declared = 0;
	cost = opt(o, "unit_cost_per_m");
	if (cost != NULL) {
		v->unit_cost_declared = 1;
		pkey(pk, p, "unit_cost_per_m");
		if (!json_is_number(cost))
			return fail(c, pk, "expected a number, got %s", jtype(cost));
		v->unit_cost_per_m = json_number_value(cost);
		if (!(v->unit_cost_per_m >= 0))
			return fail(c, pk, "must not be negative");
	}
	return 0;
}

/* One hold signal: only the keys its kind takes. */
static int parse_hold(const pctx *c, json_t *o, const char *p, cnt_hold_signal *h)
{
	static const char *const rate_keys[] = {"signal", "window_s", "ceiling", NULL};
	static const char *const lock_keys[] = {"signal", "span_s", "members", NULL};
	static const char *const dev_keys[] = {"signal", "attr", "span_s", "max_events", NULL};
	static const char *const *const keys[] = {rate_keys, lock_keys, dev_keys};
	char pk[PATH_MAX_LEN];
	int kind;

	if (check_object(c, o, p) || get_enum(c, o, p, "signal", hold_names, -1, &kind) ||
	    check_keys(c, o, p, keys[kind]))
		return -1;
	h->kind = (cnt_hold_kind)kind;
	if (kind == CNT_HOLD_RATE)
		return get_int(c, o, p, "window_s", 1, 1, YEAR_S, 0, &h->window_s) ||
		       get_int(c, o, p, "ceiling", 1, INT64_MIN, INT64_MAX, 0, &h->ceiling) ? -1 : 0;
	if (get_int(c, o, p, "span_s", 1, 0, YEAR_S, 0, &h->window_s))
		return -1;
	if (kind == CNT_HOLD_LOCKSTEP)
		return get_int(c, o, p, "members", 1, 2, 1000000000, 0, &h->members);
	if (get_str(c, o, p, "attr", 1, &h->attr) ||
	    get_int(c, o, p, "max_events", 1, 1, INT64_MAX, 0, &h->max_events))
		return -1;
	if (h->attr[0] == '\0' || strlen(h->attr) > 64) {
		pkey(pk, p, "attr");
		return fail(c, pk, "must be 1 to 64 bytes");
	}
	return 0;
}

static int parse_holds(const pctx *c, json_t *o, const char *p, cnt_counter *k)
{
	json_t *arr;
	size_t n;

	if (get_array(c, o, p, "holds", 0, &arr, &n) != 0)
		return -1;
	if (n == 0)
		return 0;
	if ((k->holds = calloc(n, sizeof(*k->holds))) == NULL)
		return fail(c, p, "out of memory");
	k->nholds = n;
	for (size_t j = 0; j < n; j++) {
		char ph[PATH_MAX_LEN];

		pidx(ph, p, "holds", j);
		if (parse_hold(c, json_array_get(arr, j), ph, &k->holds[j]) != 0)
			return -1;
	}
	return 0;
}

/* A list file named in the definitions: as written when absolute, else
 * relative to the directory of the definitions file (c->name). */
static int resolve_list(const pctx *c, const char *p, const char *list, char **out)
{
	const char *slash = strrchr(c->name, '/');
	size_t dl = list[0] == '/' || slash == NULL ? 0 : (size_t)(slash - c->name) + 1;
	size_t ln = strlen(list);

	if ((*out = malloc(dl + ln + 1)) == NULL)
		return fail(c, p, "out of memory");
	memcpy(*out, c->name, dl);
	memcpy(*out + dl, list, ln + 1);
	return 0;
}

/* One inline filter: only the keys its rule takes. */
static int parse_filter(const pctx *c, json_t *o, const char *p, cnt_filter *f)
{
	static const char *const ua_keys[] = {"rule", "list", "attr", NULL};
	static const char *const rate_keys[] = {"rule", "max_events", "span_s", "attr", NULL};
	static const char *const *const keys[] = {ua_keys, ua_keys, rate_keys};
	static const char *const dflt_attr[] = {"user_agent", "ip_prefix", NULL};
	char pk[PATH_MAX_LEN];
	int kind;

	if (check_object(c, o, p) || get_enum(c, o, p, "rule", filter_names, -1, &kind) ||
	    check_keys(c, o, p, keys[kind]) || get_str(c, o, p, "attr", 0, &f->attr))
		return -1;
	f->kind = (cnt_filter_kind)kind;
	pkey(pk, p, "attr");
	if (f->attr != NULL && check_attr_key(c, pk, f->attr) != 0)
		return -1;
	if (f->attr == NULL)
		f->attr = dflt_attr[kind];
	if (kind == CNT_FILTER_RATE)
		return get_int(c, o, p, "max_events", 1, 1, INT32_MAX, 0, &f->max_events) ||
		       get_int(c, o, p, "span_s", 1, 1, YEAR_S, 0, &f->span_s) ? -1 : 0;
	if (get_str(c, o, p, "list", 1, &f->list))
		return -1;
	pkey(pk, p, "list");
	if (f->list[0] == '\0')
		return fail(c, pk, "must not be empty (a list file)");
	return resolve_list(c, pk, f->list, &f->list_path);
}

static int parse_filters(const pctx *c, json_t *o, const char *p, cnt_counter *k)
{
	json_t *arr;
	size_t n;

	if (get_array(c, o, p, "filters", 0, &arr, &n) != 0)
		return -1;
	if (n == 0)
		return 0;
	if ((k->filters = calloc(n, sizeof(*k->filters))) == NULL)
		return fail(c, p, "out of memory");
	k->nfilters = n;
	for (size_t j = 0; j < n; j++) {
		char pf[PATH_MAX_LEN];

		pidx(pf, p, "filters", j);
		if (parse_filter(c, json_array_get(arr, j), pf, &k->filters[j]) != 0)
			return -1;
	}
	return 0;
}

/* A number in [lo, hi] (integers too), or dflt when absent. */
static int get_num(const pctx *c, json_t *o, const char *p, const char *key, double lo, double hi,
		   double dflt, double *out)
{
	json_t *v = opt(o, key);
	char pk[PATH_MAX_LEN];

	*out = dflt;
	if (v == NULL)
		return 0;
	pkey(pk, p, key);
	if (!json_is_number(v))
		return fail(c, pk, "expected a number, got %s", jtype(v));
	*out = json_number_value(v);
	if (!(*out >= lo && *out <= hi))
		return fail(c, pk, "%g is out of range [%g, %g]", *out, lo, hi);
	return 0;
}

/* One audit heuristic: only the keys its kind takes. */
static int parse_audit_rule(const pctx *c, json_t *o, const char *p, cnt_audit_rule *r)
{
	static const char *const lock_keys[] = {"heuristic", "span_s", "videos", NULL};
	static const char *const burst_keys[] = {"heuristic", "attr", "span_s", "max_events", NULL};
	static const char *const watch_keys[] = {"heuristic", "attr", "views", "share", NULL};
	static const char *const infl_keys[] = {"heuristic", "baseline", NULL};
	static const char *const *const keys[] = {lock_keys, burst_keys, watch_keys, infl_keys};
	char pk[PATH_MAX_LEN];
	int kind;

	if (check_object(c, o, p) || get_enum(c, o, p, "heuristic", audit_names, -1, &kind) ||
	    check_keys(c, o, p, keys[kind]))
		return -1;
	r->kind = (cnt_audit_kind)kind;
	switch (r->kind) {
	case CNT_AUDIT_LOCKSTEP:
		return get_int(c, o, p, "span_s", 1, 0, YEAR_S, 0, &r->span_s) ||
		       get_int(c, o, p, "videos", 1, 2, 1000000000, 0, &r->videos) ? -1 : 0;
	case CNT_AUDIT_BURST:
		if (get_str(c, o, p, "attr", 1, &r->attr) || get_int(c, o, p, "span_s", 1, 0, YEAR_S, 0, &r->span_s) ||
		    get_int(c, o, p, "max_events", 1, 1, INT64_MAX, 0, &r->max_events))
			return -1;
		break;
	case CNT_AUDIT_WATCH_TIME:
		if (get_str(c, o, p, "attr", 0, &r->attr) ||
		    get_int(c, o, p, "views", 1, 2, 1000000000, 0, &r->views) ||
		    get_num(c, o, p, "share", 0, 1, 1, &r->share))
			return -1;
		if (r->share <= 0) {
			pkey(pk, p, "share");
			return fail(c, pk, "must be above 0");
		}
		if (r->attr == NULL)
			r->attr = "ms_watched";
		break;
	default:
		if (opt(o, "baseline") == NULL) {
			pkey(pk, p, "baseline");
			return fail(c, pk, "required key is missing");
		}
		return get_num(c, o, p, "baseline", 1, 1e9, 0, &r->baseline);
	}
	if (r->attr[0] == '\0' || strlen(r->attr) > 64) {
		pkey(pk, p, "attr");
		return fail(c, pk, "must be 1 to 64 bytes");
	}
	return 0;
}

static int parse_audit(const pctx *c, json_t *o, const char *p, cnt_counter *k)
{
	json_t *arr;
	size_t n;
	int infl = -1;

	if (get_array(c, o, p, "audit", 0, &arr, &n) != 0)
		return -1;
	if (n == 0)
		return 0;
	if (n > CNT_AUDIT_MAX) {
		char pk[PATH_MAX_LEN];

		pkey(pk, p, "audit");
		return fail(c, pk, "holds %zu heuristics, the limit is %d", n, CNT_AUDIT_MAX);
	}
	if ((k->audit = calloc(n, sizeof(*k->audit))) == NULL)
		return fail(c, p, "out of memory");
	k->naudit = n;
	for (size_t j = 0; j < n; j++) {
		char ph[PATH_MAX_LEN];

		pidx(ph, p, "audit", j);
		if (parse_audit_rule(c, json_array_get(arr, j), ph, &k->audit[j]) != 0)
			return -1;
		if (k->audit[j].kind == CNT_AUDIT_INFLATION) {
			if (infl >= 0)
				return fail(c, ph, "a second inflation baseline (the first is at index %d)", infl);
			infl = (int)j;
		}
	}
	return 0;
}

static int parse_counters(const pctx *c, cnt_defs *d, json_t *arr)
{
	static const char *const keys[] = {"tenant_id", "counter_id", "versions", "holds",
					   "filters", "audit", NULL};
	size_t i, j;

	for (i = 0; i < d->ncounters; i++) {
		json_t *o = json_array_get(arr, i), *varr;
		cnt_counter *k = &d->counters[i];
		char p[PATH_MAX_LEN], pk[PATH_MAX_LEN], q[80], q2[80];
		size_t nv, ti, prev, tl, cl;

		pidx(p, "$", "counters", i);
		if (check_object(c, o, p) || check_keys(c, o, p, keys) ||
		    get_id(c, o, p, "tenant_id", &k->tenant_id) ||
		    get_id(c, o, p, "counter_id", &k->counter_id) ||
		    get_array(c, o, p, "versions", 1, &varr, &nv))
			return -1;
		tl = strlen(k->tenant_id);
		cl = strlen(k->counter_id);
		ti = htab_find(&d->t_tenant, k->tenant_id, tl, NULL, 0);
		if (ti == (size_t)-1) {
			pkey(pk, p, "tenant_id");
			return fail(c, pk, "tenant '%s' is not declared", shown(q, k->tenant_id, tl));
		}
		k->tenant = &d->tenants[ti];
		prev = htab_find(&d->t_counter, k->tenant_id, tl, k->counter_id, cl);
		if (prev != (size_t)-1) {
			pkey(pk, p, "counter_id");
			return fail(c, pk, "duplicate counter '%s/%s' (first declared at $.counters[%zu])",
				    shown(q, k->tenant_id, tl), shown(q2, k->counter_id, cl), prev);
		}
		if (nv == 0) {
			pkey(pk, p, "versions");
			return fail(c, pk, "must hold at least one version");
		}
		k->versions = calloc(nv, sizeof(*k->versions));
		if (k->versions == NULL)
			return fail(c, p, "out of memory");
		k->nversions = nv;
		if (parse_holds(c, o, p, k) != 0 || parse_filters(c, o, p, k) != 0 ||
		    parse_audit(c, o, p, k) != 0)
			return -1;
		for (j = 0; j < nv; j++) {
			cnt_counter_version *v = &k->versions[j], *pv = j ? &k->versions[j - 1] : NULL;
			char pv_path[PATH_MAX_LEN];

			pidx(pv_path, p, "versions", j);
			if (parse_version(c, json_array_get(varr, j), pv_path, v) != 0)
				return -1;
			if (!v->unit_cost_declared)
				cnt_defs_unit_cost(d, v->type, &v->unit_cost_per_m);
			if (pv == NULL)
				continue;
			if (v->version <= pv->version) {
				pkey(pk, pv_path, "version");
				return fail(c, pk, "%d does not follow version %d (versions must "
					    "increase strictly)", v->version, pv->version);
			}
			pkey(pk, pv_path, "effective_from");
			if (v->effective_from_ms == INT64_MIN)
				return fail(c, pk, "required for every version but the first");
			if (v->effective_from_ms <= pv->effective_from_ms)
				return fail(c, pk, "must be later than version %d's effective_from",
					    pv->version);
		}
		/* Hold signals judge a member's whole traffic; an approx
		 * counter's events are sampled as they are admitted, before
		 * holds would see them (cnt-definitions(5), type approx). */
		for (j = 0; j < nv && k->nholds > 0; j++)
			if (k->versions[j].type == CNT_CTYPE_APPROX) {
				pkey(pk, p, "holds");
				return fail(c, pk, "not allowed on a counter with an approx version "
					    "(version %d): holds would judge a sample", k->versions[j].version);
			}
		htab_put(&d->t_counter, k->tenant_id, tl, k->counter_id, cl, i);
	}
	return 0;
}

static int parse_tie_break(const pctx *c, json_t *o, const char *path, cnt_leaderboard *b)
{
	json_t *arr;
	size_t n, i, j;
	char p[PATH_MAX_LEN], pi[PATH_MAX_LEN], q[80];

	if (get_array(c, o, path, "tie_break", 0, &arr, &n) != 0)
		return -1;
	pkey(p, path, "tie_break");
	if (arr == NULL) {
		b->ntie_break = 2;
		b->tie_break[0] = CNT_TIE_EARLIEST_ACHIEVER;
		b->tie_break[1] = CNT_TIE_MEMBER_REF_ASC;
		return 0;
	}
	if (n == 0)
		return fail(c, p, "must list at least one rule");
	b->ntie_break = 0;
	for (i = 0; i < n; i++) {
		json_t *v = json_array_get(arr, i);
		const char *s;
		int k;

		pidx(pi, path, "tie_break", i);
		if (!json_is_string(v))
			return fail(c, pi, "expected a string, got %s", jtype(v));
		s = json_string_value(v);
		for (k = 0; tie_names[k] != NULL && strcmp(s, tie_names[k]) != 0; k++)
			;
		if (tie_names[k] == NULL)
			return fail(c, pi, "unknown rule '%s' (expected one of earliest_achiever, "
				    "latest_achiever, member_ref_asc)", shown(q, s, strlen(s)));
		if (b->ntie_break > 0 &&
		    b->tie_break[b->ntie_break - 1] == CNT_TIE_MEMBER_REF_ASC)
			return fail(c, pi, "'%s' can never apply after member_ref_asc "
				    "(which orders every pair)", s);
		for (j = 0; j < b->ntie_break; j++) {
			if (b->tie_break[j] == (cnt_tie_break)k)
				return fail(c, pi, "rule '%s' is listed twice", s);
			if (b->tie_break[j] != CNT_TIE_MEMBER_REF_ASC && k != CNT_TIE_MEMBER_REF_ASC)
				return fail(c, pi, "'%s' contradicts '%s' listed before it", s,
					    tie_names[b->tie_break[j]]);
		}
		b->tie_break[b->ntie_break++] = (cnt_tie_break)k;
	}
	if (b->tie_break[b->ntie_break - 1] != CNT_TIE_MEMBER_REF_ASC)
		b->tie_break[b->ntie_break++] = CNT_TIE_MEMBER_REF_ASC;
	return 0;
}

static int parse_histogram(const pctx *c, json_t *o, const char *path, cnt_leaderboard *b)
{
	static const char *const keys[] = {"scale", "buckets", "width", NULL};
	json_t *h = opt(o, "histogram");
	char p[PATH_MAX_LEN], pk[PATH_MAX_LEN];
	int scale;
	int64_t buckets;

	b->hist_scale = CNT_HIST_LOG;
	b->hist_buckets = 512;
	b->hist_width = 0;
	if (h == NULL)
		return 0;
	pkey(p, path, "histogram");
	if (check_object(c, h, p) || check_keys(c, h, p, keys) ||
	    get_enum(c, h, p, "scale", scale_names, CNT_HIST_LOG, &scale) ||
	    get_int(c, h, p, "buckets", 0, 1, 65536, 512, &buckets) ||
	    get_int(c, h, p, "width", 0, 1, INT64_MAX, 0, &b->hist_width))
		return -1;
	b->hist_scale = (cnt_hist_scale)scale;
	b->hist_buckets = (int)buckets;
	if (b->hist_width != 0 && b->hist_scale != CNT_HIST_LINEAR) {
		pkey(pk, p, "width");
		return fail(c, pk, "only allowed with scale 'linear'");
	}
	return 0;
}

static int parse_boards(const pctx *c, cnt_defs *d, json_t *arr)
{
	static const char *const keys[] = {
		"board_id", "tenant_id", "counter_id", "counter_version", "window", "from", "to",
		"week_start", "scope_kind", "scope_attr", "order", "tie_break", "rank_numbering",
		"materialised_cap", "freshness_budget_s", "histogram", "retain_versions_s",
		"retain_versions_min", NULL};
	size_t i;

	for (i = 0; i < d->nboards; i++) {
		json_t *o = json_array_get(arr, i);
		cnt_leaderboard *b = &d->boards[i];
		const cnt_counter_version *cv;
		char p[PATH_MAX_LEN], pk[PATH_MAX_LEN], q[80], q2[80];
		size_t prev, ci, tl, cl, bl;
		int64_t pin;
		int win, wk, scope, rank, order;

		pidx(p, "$", "leaderboards", i);
		if (check_object(c, o, p) || check_keys(c, o, p, keys) ||
		    get_id(c, o, p, "board_id", &b->board_id) ||
		    get_id(c, o, p, "tenant_id", &b->tenant_id) ||
		    get_id(c, o, p, "counter_id", &b->counter_id) ||
		    get_int(c, o, p, "counter_version", 0, 1, INT32_MAX, 0, &pin) ||
		    get_enum(c, o, p, "window", window_names, -1, &win) ||
		    get_time(c, o, p, "from", 0, 0, &b->range_from) ||
		    get_time(c, o, p, "to", 0, 0, &b->range_to) ||
		    get_enum(c, o, p, "week_start", weekday_names, 0, &wk) ||
		    get_enum(c, o, p, "scope_kind", scope_names, CNT_SCOPE_GLOBAL, &scope) ||
		    get_str(c, o, p, "scope_attr", 0, &b->scope_attr) ||
		    get_enum(c, o, p, "order", order_names, 2, &order) ||
		    parse_tie_break(c, o, p, b) ||
		    get_enum(c, o, p, "rank_numbering", rank_names, CNT_RANK_COMPETITION, &rank) ||
		    get_int(c, o, p, "materialised_cap", 0, 1, 1000000000, 10000, &b->materialised_cap) ||
		    get_int(c, o, p, "freshness_budget_s", 0, 0, 7 * DAY_S, 60, &b->freshness_budget_s) ||
		    get_int(c, o, p, "retain_versions_s", 0, 0, 400 * DAY_S, DAY_S, &b->retain_versions_s) ||
		    get_int(c, o, p, "retain_versions_min", 0, 0, 1000, 1, &b->retain_versions_min) ||
		    parse_histogram(c, o, p, b))
			return -1;
		b->window = (cnt_window_kind)win;
		b->week_start = wk;
		b->scope_kind = (cnt_scope_kind)scope;
		b->rank_numbering = (cnt_rank_numbering)rank;
		b->counter_version = (int)pin;
		bl = strlen(b->board_id);
		prev = htab_find(&d->t_board, b->board_id, bl, NULL, 0);
		if (prev != (size_t)-1) {
			pkey(pk, p, "board_id");
			return fail(c, pk, "duplicate leaderboard '%s' (first declared at "
				    "$.leaderboards[%zu])", shown(q, b->board_id, bl), prev);
		}
		/* references */
		tl = strlen(b->tenant_id);
		cl = strlen(b->counter_id);
		if (htab_find(&d->t_tenant, b->tenant_id, tl, NULL, 0) == (size_t)-1) {
			pkey(pk, p, "tenant_id");
			return fail(c, pk, "tenant '%s' is not declared", shown(q, b->tenant_id, tl));
		}
		ci = htab_find(&d->t_counter, b->tenant_id, tl, b->counter_id, cl);
		if (ci == (size_t)-1) {
			pkey(pk, p, "counter_id");
			return fail(c, pk, "counter '%s/%s' is not declared",
				    shown(q, b->tenant_id, tl), shown(q2, b->counter_id, cl));
		}
		b->counter = &d->counters[ci];
		b->tenant = b->counter->tenant;
		if (refuse_probe_board(c, p, b))
			return -1;
		if (pin != 0) {
			cv = cnt_counter_version_get(b->counter, (int)pin);
			if (cv == NULL) {
				pkey(pk, p, "counter_version");
				return fail(c, pk, "counter '%s/%s' has no version %d",
					    b->tenant_id, b->counter_id, (int)pin);
			}
		} else {
			cv = cnt_counter_version_latest(b->counter);
		}
		/* window */
		pkey(pk, p, "window");
		if (!(cv->windows & CNT_WIN_BIT(b->window)))
			return fail(c, pk, "'%s' is not among the windows of counter '%s/%s' "
				    "version %d", window_names[b->window], b->tenant_id,
				    b->counter_id, cv->version);
		if (b->window == CNT_WIN_RANGE) {
			if (b->range_from.text == NULL || b->range_to.text == NULL)
				return fail(c, pk, "window 'range' needs both 'from' and 'to'");
			if (b->range_from.has_offset != b->range_to.has_offset) {
				pkey(pk, p, "to");
				return fail(c, pk, "'from' and 'to' must both carry an offset or "
					    "both be local times");
			}
			if ((b->range_from.has_offset ? b->range_from.ms : b->range_from.civil_ms) >=
			    (b->range_to.has_offset ? b->range_to.ms : b->range_to.civil_ms)) {
				pkey(pk, p, "to");
				return fail(c, pk, "must be later than 'from'");
			}
		} else if (b->range_from.text != NULL || b->range_to.text != NULL) {
			pkey(pk, p, b->range_from.text ? "from" : "to");
			return fail(c, pk, "only allowed with window 'range'");
		}
		/* scope */
		pkey(pk, p, "scope_attr");
		if (b->scope_kind == CNT_SCOPE_GLOBAL && b->scope_attr != NULL)
			return fail(c, pk, "not allowed with scope_kind 'global'");
		if (b->scope_kind == CNT_SCOPE_REGION && b->scope_attr == NULL)
			b->scope_attr = "region";
		if (b->scope_kind == CNT_SCOPE_COHORT && b->scope_attr == NULL)
			return fail(c, pk, "required with scope_kind 'cohort' (the attrs key "
				    "naming the cohort)");
		if (b->scope_attr != NULL && check_id(c, pk, b->scope_attr) != 0)
			return -1;
		b->order_asc = order == 2 ? cv->type == CNT_CTYPE_MIN : order == 1;
		htab_put(&d->t_board, b->board_id, bl, NULL, 0, i);
	}
	return 0;
}

static int parse_seasons(const pctx *c, cnt_defs *d, json_t *arr)
{
	static const char *const keys[] = {"season_id", "board_id", "opens_at", "closes_at",
					   "timezone", "state", NULL};
	size_t i;

	for (i = 0; i < d->nseasons; i++) {
		json_t *o = json_array_get(arr, i);
		cnt_season *s = &d->seasons[i];
		char p[PATH_MAX_LEN], pk[PATH_MAX_LEN], q[80];
		size_t prev, bi, sl, bl;
		int state;

		pidx(p, "$", "seasons", i);
		if (check_object(c, o, p) || check_keys(c, o, p, keys) ||
		    get_id(c, o, p, "season_id", &s->season_id) ||
		    get_id(c, o, p, "board_id", &s->board_id) ||
		    get_time(c, o, p, "opens_at", 1, 0, &s->opens_at) ||
		    get_time(c, o, p, "closes_at", 1, 0, &s->closes_at) ||
		    get_tz(c, o, p, "timezone", 0, &s->timezone) ||
		    get_enum(c, o, p, "state", state_names, CNT_SEASON_OPEN, &state))
			return -1;
		s->state = (cnt_season_state)state;
		sl = strlen(s->season_id);
		prev = htab_find(&d->t_season, s->season_id, sl, NULL, 0);
		if (prev != (size_t)-1) {
			pkey(pk, p, "season_id");
			return fail(c, pk, "duplicate season '%s' (first declared at $.seasons[%zu])",
				    shown(q, s->season_id, sl), prev);
		}
		bl = strlen(s->board_id);
		bi = htab_find(&d->t_board, s->board_id, bl, NULL, 0);
		if (bi == (size_t)-1) {
			pkey(pk, p, "board_id");
			return fail(c, pk, "leaderboard '%s' is not declared", shown(q, s->board_id, bl));
		}
		s->board = &d->boards[bi];
		if (s->timezone == NULL)
			s->timezone = s->board->tenant->timezone;
		pkey(pk, p, "closes_at");
		if (s->opens_at.has_offset != s->closes_at.has_offset)
			return fail(c, pk, "opens_at and closes_at must both carry an offset or "
				    "both be local times");
		if ((s->opens_at.has_offset ? s->opens_at.ms : s->opens_at.civil_ms) >=
		    (s->closes_at.has_offset ? s->closes_at.ms : s->closes_at.civil_ms))
			return fail(c, pk, "must be later than opens_at");
		htab_put(&d->t_season, s->season_id, sl, NULL, 0, i);
	}
	return 0;
}

/* "unit_costs": {TYPE: price per million events, ...}: the platform's
 * published price of each counter type (cnt-definitions(5), "UNIT
 * COSTS"); a version that declares no unit_cost_per_m costs its type's. */
static int parse_unit_costs(const pctx *c, cnt_defs *d)
{
	json_t *o = opt(d->root, "unit_costs"), *v;
	const char *k;
	char p[PATH_MAX_LEN], q[80];

	if (o == NULL)
		return 0;
	if (!json_is_object(o))
		return fail(c, "$.unit_costs", "expected an object {type: price per million "
			    "events}, got %s", jtype(o));
	json_object_foreach(o, k, v) {
		int t;

		pkey(p, "$.unit_costs", k);
		if (strcmp(k, "comment") == 0)
			continue;
		for (t = 0; ctype_names[t] != NULL && strcmp(ctype_names[t], k) != 0; t++)
			;
		if (ctype_names[t] == NULL)
			return fail(c, p, "'%s' is not a counter type", shown(q, k, strlen(k)));
		if (!json_is_number(v))
			return fail(c, p, "expected a number (price per million events), got %s",
				    jtype(v));
		d->unit_costs[t] = json_number_value(v);
		if (!(d->unit_costs[t] >= 0) || d->unit_costs[t] > 1e12)
			return fail(c, p, "must be a price from 0 to 1e12");
		d->has_unit_cost[t] = 1;
	}
	return 0;
}

int cnt_defs_unit_cost(const cnt_defs *d, cnt_counter_type t, double *price)
{
	int ok = (unsigned)t < (unsigned)cnt_defs_ntypes() && d->has_unit_cost[t];

	*price = ok ? d->unit_costs[t] : 0;
	return ok;
}

int cnt_defs_ctype_monotonic(cnt_counter_type t)
{
	/* The types whose value is a sum of deltas. */
	return t == CNT_CTYPE_EXACT || t == CNT_CTYPE_APPROX;
}

int cnt_defs_ntypes(void)
{
	int n = 0;

	while (ctype_names[n] != NULL)
		n++;
	return n;
}

static int parse_root(const pctx *c, cnt_defs *d)
{
	static const char *const keys[] = {"format", "tenants", "counters", "leaderboards",
					   "seasons", "unit_costs", NULL};
	json_t *ta, *ca, *ba, *sa;
	const char *fmt;
	char q[80];

	if (check_object(c, d->root, "$") || check_keys(c, d->root, "$", keys) ||
	    get_str(c, d->root, "$", "format", 1, &fmt))
		return -1;
	if (strcmp(fmt, CNT_DEFS_FORMAT) != 0)
		return fail(c, "$.format", "'%s' is not supported (expected '%s')",
			    shown(q, fmt, strlen(fmt)), CNT_DEFS_FORMAT);
	if (get_array(c, d->root, "$", "tenants", 0, &ta, &d->ntenants) ||
	    get_array(c, d->root, "$", "counters", 0, &ca, &d->ncounters) ||
	    get_array(c, d->root, "$", "leaderboards", 0, &ba, &d->nboards) ||
	    get_array(c, d->root, "$", "seasons", 0, &sa, &d->nseasons))
		return -1;
	d->tenants = calloc(d->ntenants + 1, sizeof(*d->tenants));
	d->counters = calloc(d->ncounters + 1, sizeof(*d->counters));
	d->boards = calloc(d->nboards + 1, sizeof(*d->boards));
	d->seasons = calloc(d->nseasons + 1, sizeof(*d->seasons));
	if (!d->tenants || !d->counters || !d->boards || !d->seasons ||
	    htab_init(&d->t_tenant, d->ntenants) || htab_init(&d->t_counter, d->ncounters) ||
	    htab_init(&d->t_board, d->nboards) || htab_init(&d->t_season, d->nseasons))
		return fail(c, "$", "out of memory");
	return parse_unit_costs(c, d) ||
	       parse_tenants(c, d, ta) || parse_counters(c, d, ca) || parse_boards(c, d, ba) ||
	       parse_seasons(c, d, sa) ? -1 : 0;
}

/* ---- public API ----------------------------------------------------------- */

cnt_defs *cnt_defs_parse(const char *text, size_t n, const char *name, cnt_err *err)
{
	pctx c = {name ? name : "-", err};
	json_error_t je;
	cnt_defs *d = calloc(1, sizeof(*d));

	if (d == NULL) {
		cnt_err_nomem(err);
		cnt_err_prefix(err, "definitions '%s'", c.name);
		return NULL;
	}
	d->root = cnt_json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
	if (d->root == NULL) {
		if (cnt_json_oom(&je))
			cnt_err_oom(err, "reading definitions '%s'", c.name);
		else
			cnt_err_set(err, "definitions '%s': line %d, column %d: %s", c.name, je.line,
				    je.column, je.text);
		cnt_defs_free(d);
		return NULL;
	}
	if (parse_root(&c, d) != 0) {
		cnt_defs_free(d);
		return NULL;
	}
	return d;
}

cnt_defs *cnt_defs_load(const char *path, cnt_err *err)
{
	cnt_buf b = CNT_BUF_INIT;
	cnt_defs *d;
	FILE *f = fopen(path, "rb");
	size_t got;

	if (f == NULL) {
		cnt_err_set(err, "definitions '%s': %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (cnt_buf_reserve(&b, 65536) != 0) {
			cnt_err_nomem(err);
			cnt_err_prefix(err, "definitions '%s'", path);
			goto fail;
		}
		got = fread(b.p + b.len, 1, b.cap - b.len, f);
		b.len += got;
		if (b.len > DEFS_FILE_MAX) {
			cnt_err_set(err, "definitions '%s': larger than %u MiB", path,
				    DEFS_FILE_MAX >> 20);
			goto fail;
		}
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		cnt_err_set(err, "definitions '%s': read error: %s", path, strerror(errno));
		goto fail;
	}
	fclose(f);
	d = cnt_defs_parse((const char *)b.p, b.len, path, err);
	cnt_buf_release(&b);
	return d;
fail:
	fclose(f);
	cnt_buf_release(&b);
	return NULL;
}

void cnt_defs_free(cnt_defs *d)
{
	size_t i;

	if (d == NULL)
		return;
	if (d->counters != NULL)
		for (i = 0; i < d->ncounters; i++) {
			free(d->counters[i].versions);
			free(d->counters[i].holds);
			for (size_t j = 0; j < d->counters[i].nfilters; j++)
				free(d->counters[i].filters[j].list_path);
			free(d->counters[i].filters);
			free(d->counters[i].audit);
		}
	free(d->tenants);
	free(d->counters);
	free(d->boards);
	free(d->seasons);
	free(d->t_tenant.slots);
	free(d->t_counter.slots);
	free(d->t_board.slots);
	free(d->t_season.slots);
	json_decref(d->root);
	free(d);
}

const cnt_tenant *cnt_defs_tenant(const cnt_defs *d, const char *id, size_t n)
{
	size_t i = htab_find(&d->t_tenant, id, n, NULL, 0);

	return i == (size_t)-1 ? NULL : &d->tenants[i];
}

const cnt_counter *cnt_defs_counter(const cnt_defs *d, const char *tenant, size_t tn,
				    const char *counter, size_t cn)
{
	size_t i = htab_find(&d->t_counter, tenant, tn, counter ? counter : "", cn);

	return i == (size_t)-1 ? NULL : &d->counters[i];
}

const cnt_leaderboard *cnt_defs_board(const cnt_defs *d, const char *id, size_t n)
{
	size_t i = htab_find(&d->t_board, id, n, NULL, 0);

	return i == (size_t)-1 ? NULL : &d->boards[i];
}

const cnt_season *cnt_defs_season(const cnt_defs *d, const char *id, size_t n)
{
	size_t i = htab_find(&d->t_season, id, n, NULL, 0);

	return i == (size_t)-1 ? NULL : &d->seasons[i];
}

const cnt_counter_version *cnt_counter_version_at(const cnt_counter *c, int64_t t_ms)
{
	size_t lo = 0, hi = c->nversions;

	/* first version with effective_from > t; the one before it is in force */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->versions[mid].effective_from_ms <= t_ms)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? NULL : &c->versions[lo - 1];
}

const cnt_counter_version *cnt_counter_version_get(const cnt_counter *c, int version)
{
	size_t lo = 0, hi = c->nversions;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->versions[mid].version == version)
			return &c->versions[mid];
		if (c->versions[mid].version < version)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const cnt_counter_version *cnt_counter_version_latest(const cnt_counter *c)
{
	return c->nversions ? &c->versions[c->nversions - 1] : NULL;
}

size_t cnt_defs_ntenants(const cnt_defs *d) { return d->ntenants; }
size_t cnt_defs_ncounters(const cnt_defs *d) { return d->ncounters; }
size_t cnt_defs_nboards(const cnt_defs *d) { return d->nboards; }
size_t cnt_defs_nseasons(const cnt_defs *d) { return d->nseasons; }

const cnt_tenant *cnt_defs_tenant_at(const cnt_defs *d, size_t i)
{
	return i < d->ntenants ? &d->tenants[i] : NULL;
}

const cnt_counter *cnt_defs_counter_at(const cnt_defs *d, size_t i)
{
	return i < d->ncounters ? &d->counters[i] : NULL;
}

const cnt_leaderboard *cnt_defs_board_at(const cnt_defs *d, size_t i)
{
	return i < d->nboards ? &d->boards[i] : NULL;
}

const cnt_season *cnt_defs_season_at(const cnt_defs *d, size_t i)
{
	return i < d->nseasons ? &d->seasons[i] : NULL;
}

const char *cnt_defs_ctype_name(cnt_counter_type t)
{
	return (unsigned)t <= CNT_CTYPE_APPROX ? ctype_names[t] : "?";
}

const char *cnt_defs_window_name(cnt_window_kind k)
{
	return (unsigned)k < CNT_WIN_COUNT ? window_names[k] : "?";
}

const char *cnt_defs_enum_name(cnt_defs_enum e, int v)
{
	static const char *const *const tables[] = {
		[CNT_ENUM_DEDUP_KEY] = dedup_names, [CNT_ENUM_SCOPE] = scope_names,
		[CNT_ENUM_TIE] = tie_names, [CNT_ENUM_NUMBERING] = rank_names,
		[CNT_ENUM_HIST_SCALE] = scale_names, [CNT_ENUM_WEEKDAY] = weekday_names,
		[CNT_ENUM_ORDER] = order_names};
	const char *const *t;
	int i;

	if ((unsigned)e >= sizeof tables / sizeof tables[0] || v < 0)
		return "?";
	t = tables[e];
	for (i = 0; t[i] != NULL; i++)
		if (i == v)
			return t[i];
	return "?";
}

const char *cnt_defs_hold_name(cnt_hold_kind k)
{
	return (unsigned)k < CNT_HOLD_NKINDS ? hold_names[k] : "?";
}

const char *cnt_defs_audit_name(cnt_audit_kind k)
{
	return (unsigned)k < CNT_AUDIT_NKINDS ? audit_names[k] : "?";
}

int cnt_defs_hold_parse(const char *name, cnt_hold_kind *k)
{
	for (int i = 0; hold_names[i] != NULL; i++)
		if (strcmp(name, hold_names[i]) == 0) {
			*k = (cnt_hold_kind)i;
			return 0;
		}
	return -1;
}

const char *cnt_defs_filter_name(cnt_filter_kind k)
{
	return (unsigned)k < CNT_FILTER_NKINDS ? filter_names[k] : "?";
}

size_t cnt_defs_counter_index(const cnt_defs *d, const cnt_counter *c)
{
	return (size_t)(c - d->counters);
}
