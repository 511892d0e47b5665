/*
 * viewdesc.c - the view description, written and read (see viewdesc.h).
 *
 * What it is
 * ----------
 * Every version of a ranked view (cnt-view(5)) says what it is a view of:
 * which board, tenant and counter, which scope, which window, as of which
 * point of the log, ranked by which rules.  That is the description, one
 * JSON object kept twice with the same bytes: at the start of index.bin,
 * where cnt-rank reads it on every answer, and in view.avro's header under
 * the key "cnt.view", where cnt-cat and jq show it to people.  cnt-rank
 * needs it to answer (the order and tie-breaks to place an overlaid value,
 * the window and as-of to pick overlay events, the freshness budget for
 * "stale"), so it is part of the format, not a comment.
 *
 * The text
 * --------
 * Compact JSON on one line, keys in this order, nothing else:
 *
 *   board              string  the leaderboard's board_id
 *   tenant_id          string
 *   counter_id         string
 *   counter_version    integer 1.. the version the board pins, or null
 *   counter_type       string  exact | unique | min | max | approx
 *   scope_kind         string  global | region | cohort
 *   scope              string  the scope key ("global" for a global board)
 *   version            integer 1..999999, this version's number
 *   window             object  kind (all_time, day, week, month, season,
 *                              rolling_24h, last_30d, range), label (the
 *                              season_id of a season window, else the
 *                              kind), from and to (UTC epoch ms, from <=
 *                              to, half-open), timezone (the tenant's)
 *   as_of              integer epoch ms, or null: no log covered
 *   log_position       object  max_ingest_time: the same as as_of
 *   built_at           integer epoch ms the window was taken at
 *   order              string  desc | asc
 *   tie_break          array   1..3 distinct rules of earliest_achiever,
 *                              latest_achiever, member_ref_asc, ending with
 *                              member_ref_asc
 *   rank_numbering     string  competition | dense | ordinal
 *   materialised_cap   integer >= 1
 *   freshness_budget_s integer >= 0
 *   histogram          object  scale (log | linear), bins (1..2^17)
 *   members            integer the members in the view
 *   head               integer min(members, materialised_cap)
 *   verified           true, only in a verified view (cnt-project
 *                      --verified): its as_of (and log_position) is then
 *                      the audit's watermark through_ms, not a log time
 *   audit_id           string  only in a verified view: the audit entry
 *
 *   errors             true, only in a view of an approx or unique
 *                      counter written since issue 11: index.bin then ends
 *                      with an error column (cnt-view(5), view.h)
 *   precision          integer 4..18, only with errors and only for a
 *                      unique counter: the smallest sketch precision of
 *                      the view's members (a union folds to the lower)
 *
 * A fast view has neither verified nor audit_id (a reader takes their
 * absence for a fast view), so its bytes are what they were before
 * verified views existed; likewise a view of an exact, min or max counter
 * has neither errors nor precision.  A view of a unique counter without
 * errors (written before issue 11) is read as precision 14, the only one
 * sketches had then.
 *
 * Strings are valid UTF-8 (JSON text must be; a scope key from the data
 * that is not is refused when writing, not mangled) and are escaped as
 * avro/json.h says; integers are plain decimals.  The same description
 * therefore always has the same bytes, and so do rebuilt views.
 *
 * Reading a description we must distrust
 * --------------------------------------
 * The description comes from a file anyone can have damaged or forged, so
 * the reader bounds the text (CNT_VIEWDESC_MAX bytes, checked before the
 * JSON parser sees it), refuses duplicate keys, requires every key above
 * with its type, checks every integer's range and every enumeration's
 * spelling, and the fields' agreement with one another (head, the label,
 * the log position, the tie-break's last rule).  A failure names the field
 * as a path ("$.window.from: expected an integer").  Keys it does not know
 * are ignored, so a later writer can add some; a change in the meaning of
 * a key needs a new index.bin magic instead.  index.bin's header checksum
 * (view.h) already catches accidental damage, so these checks are for what
 * a checksum cannot catch: a file written wrongly, or on purpose.
 *
 * The writer runs the same checks as the reader before writing, so that
 * every description written can be read back.
 */
#include "view/viewdesc.h"
#include "base/jsonload.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "avro/json.h"

/* Indexed by cnt_counter_type: approx is CNT_CTYPE_APPROX (4). */
static const char *const ctype_names[] = {"exact", "unique", "min", "max", "approx"};
static const char *const scope_names[] = {"global", "region", "cohort"};
static const char *const tie_names[] = {"earliest_achiever", "latest_achiever", "member_ref_asc"};
static const char *const numbering_names[] = {"competition", "dense", "ordinal"};
static const char *const order_names[] = {"desc", "asc"};
static const char *const scale_names[] = {"log", "linear"};

#define NAMES(a) (a), (int)(sizeof(a) / sizeof((a)[0]))

const char *cnt_viewdesc_tie_name(cnt_tie_break t)
{
	return (unsigned)t < 3 ? tie_names[t] : "?";
}

const char *cnt_viewdesc_numbering_name(cnt_rank_numbering r)
{
	return (unsigned)r < 3 ? numbering_names[r] : "?";
}

const char *cnt_viewdesc_scope_kind_name(cnt_scope_kind k)
{
	return (unsigned)k < 3 ? scope_names[k] : "?";
}

void cnt_viewdesc_from_board(cnt_viewdesc *d, const cnt_leaderboard *b, cnt_counter_type ctype)
{
	memset(d, 0, sizeof(*d));
	d->board = b->board_id;
	d->tenant_id = b->tenant_id;
	d->counter_id = b->counter_id;
	d->counter_version = b->counter_version;
	d->counter_type = ctype;
	d->scope_kind = b->scope_kind;
	d->window_kind = b->window;
	d->window_label = cnt_defs_window_name(b->window);
	d->timezone = b->tenant->timezone;
	d->order_asc = b->order_asc;
	d->ntie_break = b->ntie_break;
	memcpy(d->tie_break, b->tie_break, sizeof(d->tie_break));
	d->rank_numbering = b->rank_numbering;
	d->materialised_cap = b->materialised_cap;
	d->freshness_budget_s = b->freshness_budget_s;
	d->hist_scale = b->hist_scale;
}

/* ---- checks shared by the writer and the reader ----------------------- */

/* Whether p[0..n) is UTF-8 as RFC 3629 (and jansson) define it: no
 * overlong forms, no surrogates, nothing past U+10FFFF. */
static int utf8_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned c = *p, need;
		uint32_t cp;

		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, cp = c & 0x07;
		else
			return 0;
		for (unsigned i = 1; i <= need; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		p += need + 1;
	}
	return 1;
}

static int check_str(const char *s, const char *path, cnt_err *err)
{
	if (s == NULL || s[0] == 0)
		return cnt_err_set(err, "%s: expected a non-empty string", path);
	if (strlen(s) > CNT_VIEWDESC_MAX)
		return cnt_err_set(err, "%s: longer than %u bytes", path, CNT_VIEWDESC_MAX);
	if (!utf8_ok(s))
		return cnt_err_set(err, "%s: not valid UTF-8", path);
	return 0;
}

/* What both ends require of a description beyond the types. */
static int check(const cnt_viewdesc *d, cnt_err *err)
{
	int member_ref_seen = 0;

	if (check_str(d->board, "$.board", err) || check_str(d->tenant_id, "$.tenant_id", err) ||
	    check_str(d->counter_id, "$.counter_id", err) || check_str(d->scope, "$.scope", err) ||
	    check_str(d->window_label, "$.window.label", err) || check_str(d->timezone, "$.window.timezone", err))
		return -1;
	if (d->counter_version < 0)
		return cnt_err_set(err, "$.counter_version: expected null or a version from 1");
	if ((unsigned)d->counter_type > CNT_CTYPE_APPROX)
		return cnt_err_set(err, "$.counter_type: out of range");
	if (d->errors && d->counter_type != CNT_CTYPE_UNIQUE && d->counter_type != CNT_CTYPE_APPROX)
		return cnt_err_set(err, "$.errors: only a view of an approx or unique counter has an error column");
	if (d->precision && (!d->errors || d->counter_type != CNT_CTYPE_UNIQUE))
		return cnt_err_set(err, "$.precision: only a unique counter's view with errors has one");
	if (d->precision && (d->precision < 4 || d->precision > 18))
		return cnt_err_set(err, "$.precision: %d is out of range (4..18)", d->precision);
	if ((unsigned)d->scope_kind > CNT_SCOPE_COHORT)
		return cnt_err_set(err, "$.scope_kind: out of range");
	if (d->scope_kind == CNT_SCOPE_GLOBAL && strcmp(d->scope, "global") != 0)
		return cnt_err_set(err, "$.scope: a global board's scope is \"global\"");
	if (d->version < 1 || d->version > CNT_VIEWDESC_MAX_VERSION)
		return cnt_err_set(err, "$.version: expected 1 to %d", CNT_VIEWDESC_MAX_VERSION);
	if ((unsigned)d->window_kind >= CNT_WIN_COUNT)
		return cnt_err_set(err, "$.window.kind: out of range");
	if (d->window_kind != CNT_WIN_SEASON && strcmp(d->window_label, cnt_defs_window_name(d->window_kind)) != 0)
		return cnt_err_set(err, "$.window.label: expected \"%s\" for this window kind",
			cnt_defs_window_name(d->window_kind));
	if (d->from > d->to)
		return cnt_err_set(err, "$.window: from is after to");
	if (d->verified && (check_str(d->audit_id, "$.audit_id", err) != 0))
		return -1;
	if (d->verified && !d->has_as_of)
		return cnt_err_set(err, "$.as_of: a verified view's as_of is its audit's watermark, not null");
	if (d->ntie_break < 1 || d->ntie_break > CNT_TIE_MAX)
		return cnt_err_set(err, "$.tie_break: expected 1 to %d rules", CNT_TIE_MAX);
	for (size_t i = 0; i < d->ntie_break; i++) {
		if ((unsigned)d->tie_break[i] > CNT_TIE_MEMBER_REF_ASC)
			return cnt_err_set(err, "$.tie_break[%zu]: out of range", i);
		for (size_t j = 0; j < i; j++)
			if (d->tie_break[j] == d->tie_break[i])
				return cnt_err_set(err, "$.tie_break[%zu]: \"%s\" given twice", i,
					tie_names[d->tie_break[i]]);
		if (d->tie_break[i] == CNT_TIE_MEMBER_REF_ASC)
			member_ref_seen = 1;
	}
	if (!member_ref_seen || d->tie_break[d->ntie_break - 1] != CNT_TIE_MEMBER_REF_ASC)
		return cnt_err_set(err, "$.tie_break: the last rule must be \"member_ref_asc\"");
	if ((unsigned)d->rank_numbering > CNT_RANK_ORDINAL)
		return cnt_err_set(err, "$.rank_numbering: out of range");
	if (d->materialised_cap < 1)
		return cnt_err_set(err, "$.materialised_cap: expected at least 1");
	if (d->freshness_budget_s < 0)
		return cnt_err_set(err, "$.freshness_budget_s: expected at least 0");
	if ((unsigned)d->hist_scale > CNT_HIST_LINEAR)
		return cnt_err_set(err, "$.histogram.scale: out of range");
	if (d->bins < 1 || d->bins > CNT_VIEWDESC_MAX_BINS)
		return cnt_err_set(err, "$.histogram.bins: expected 1 to %u", CNT_VIEWDESC_MAX_BINS);
	if (d->members >= UINT32_MAX)
		return cnt_err_set(err, "$.members: more than a view holds");
	if (d->head != (d->members < (uint64_t)d->materialised_cap ? d->members : (uint64_t)d->materialised_cap))
		return cnt_err_set(err, "$.head: expected the smaller of members and materialised_cap");
	return 0;
}

int cnt_viewdesc_stale(const cnt_viewdesc *d, int64_t now)
{
	if (!d->has_as_of)
		return 1;
	if (d->freshness_budget_s == 0)
		return 0;
	/* as_of + budget, without overflow at the ends of the range */
	if (d->freshness_budget_s > (INT64_MAX - 1) / 1000 || d->as_of > INT64_MAX - d->freshness_budget_s * 1000)
		return 0;
	return now > d->as_of + d->freshness_budget_s * 1000;
}

/* ---- writing ---------------------------------------------------------- */

static int put_str(cnt_buf *b, const char *key, const char *v)
{
	return cnt_buf_printf(b, ",\"%s\":", key) || cnt_json_string(b, (const uint8_t *)v, strlen(v), 0);
}

static int put_int(cnt_buf *b, const char *key, int64_t v)
{
	return cnt_buf_printf(b, ",\"%s\":%" PRId64, key, v);
}

int cnt_viewdesc_write(const cnt_viewdesc *d, cnt_buf *out, cnt_err *err)
{
	size_t start = out->len;
	int rc;

	if (check(d, err) != 0)
		return cnt_err_prefix(err, "view description");
	rc = cnt_buf_append(out, "{\"board\":", 9) ||
		cnt_json_string(out, (const uint8_t *)d->board, strlen(d->board), 0) ||
		put_str(out, "tenant_id", d->tenant_id) || put_str(out, "counter_id", d->counter_id) ||
		(d->counter_version ? put_int(out, "counter_version", d->counter_version) :
			cnt_buf_printf(out, ",\"counter_version\":null")) ||
		put_str(out, "counter_type", ctype_names[d->counter_type]) ||
		put_str(out, "scope_kind", scope_names[d->scope_kind]) || put_str(out, "scope", d->scope) ||
		put_int(out, "version", d->version) ||
		cnt_buf_printf(out, ",\"window\":{\"kind\":\"%s\"", cnt_defs_window_name(d->window_kind)) ||
		put_str(out, "label", d->window_label) || put_int(out, "from", d->from) || put_int(out, "to", d->to) ||
		put_str(out, "timezone", d->timezone) || cnt_buf_putc(out, '}') ||
		(d->has_as_of ? cnt_buf_printf(out, ",\"as_of\":%" PRId64 ",\"log_position\":{\"max_ingest_time\":%" PRId64 "}",
				d->as_of, d->as_of) :
			cnt_buf_printf(out, ",\"as_of\":null,\"log_position\":{\"max_ingest_time\":null}")) ||
		put_int(out, "built_at", d->built_at) || put_str(out, "order", order_names[d->order_asc ? 1 : 0]) ||
		cnt_buf_printf(out, ",\"tie_break\":[");
	for (size_t i = 0; rc == 0 && i < d->ntie_break; i++)
		rc = cnt_buf_printf(out, "%s\"%s\"", i ? "," : "", tie_names[d->tie_break[i]]);
	rc = rc || cnt_buf_putc(out, ']') || put_str(out, "rank_numbering", numbering_names[d->rank_numbering]) ||
		put_int(out, "materialised_cap", d->materialised_cap) ||
		put_int(out, "freshness_budget_s", d->freshness_budget_s) ||
		cnt_buf_printf(out, ",\"histogram\":{\"scale\":\"%s\",\"bins\":%" PRIu64 "}", scale_names[d->hist_scale], d->bins) ||
		cnt_buf_printf(out, ",\"members\":%" PRIu64 ",\"head\":%" PRIu64, d->members, d->head) ||
		(d->verified && (cnt_buf_printf(out, ",\"verified\":true") || put_str(out, "audit_id", d->audit_id))) ||
		(d->errors && cnt_buf_printf(out, ",\"errors\":true")) ||
		(d->precision && put_int(out, "precision", d->precision)) ||
		cnt_buf_putc(out, '}');
	if (rc) {
		out->len = start;
		return cnt_err_oom(err, "writing the view description");
	}
	if (out->len - start > CNT_VIEWDESC_MAX) {
		out->len = start;
		return cnt_err_set(err, "view description: longer than %u bytes", CNT_VIEWDESC_MAX);
	}
	return 0;
}

/* ---- reading ---------------------------------------------------------- */

static int get(json_t *o, const char *where, const char *key, json_t **v, cnt_err *err)
{
	*v = json_object_get(o, key);
	if (*v == NULL)
		return cnt_err_set(err, "%s.%s: missing", where, key);
	return 0;
}

static int get_str(json_t *o, const char *where, const char *key, const char **out, cnt_err *err)
{
	json_t *v;

	if (get(o, where, key, &v, err) != 0)
		return -1;
	if (!json_is_string(v) || json_string_length(v) != strlen(json_string_value(v)))
		return cnt_err_set(err, "%s.%s: expected a string", where, key);
	*out = json_string_value(v);
	return 0;
}

/* An integer in [min, max]; nullable: null gives *is_null = 1. */
static int get_int(json_t *o, const char *where, const char *key, int64_t min, int64_t max, int64_t *out,
	int *is_null, cnt_err *err)
{
	json_t *v;

	if (get(o, where, key, &v, err) != 0)
		return -1;
	if (is_null) {
		*is_null = json_is_null(v);
		if (*is_null) {
			*out = 0;
			return 0;
		}
	}
	if (!json_is_integer(v))
		return cnt_err_set(err, "%s.%s: expected an integer%s", where, key, is_null ? " or null" : "");
	*out = (int64_t)json_integer_value(v);
	if (*out < min || *out > max)
		return cnt_err_set(err, "%s.%s: %" PRId64 " is out of range", where, key, *out);
	return 0;
}

static int name_index(const char *s, const char *const *names, int count)
{
	for (int i = 0; i < count; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

static int get_enum(json_t *o, const char *where, const char *key, const char *const *names, int count, int *out,
	cnt_err *err)
{
	const char *s;

	if (get_str(o, where, key, &s, err) != 0)
		return -1;
	*out = name_index(s, names, count);
	if (*out < 0)
		return cnt_err_set(err, "%s.%s: unknown value", where, key);
	return 0;
}

static int get_obj(json_t *o, const char *where, const char *key, json_t **out, cnt_err *err)
{
	if (get(o, where, key, out, err) != 0)
		return -1;
	if (!json_is_object(*out))
		return cnt_err_set(err, "%s.%s: expected an object", where, key);
	return 0;
}

static int parse(cnt_viewdesc *d, json_t *j, cnt_err *err)
{
	static const char *const window_names[] = {"all_time", "day", "week", "month", "season", "rolling_24h",
		"last_30d", "range"};
	json_t *w, *lp, *h, *tb, *x;
	int64_t i64, mit;
	int e, null_as_of, null_mit, null_cv;

	if (!json_is_object(j))
		return cnt_err_set(err, "$: expected an object");
	if (get_str(j, "$", "board", &d->board, err) || get_str(j, "$", "tenant_id", &d->tenant_id, err) ||
	    get_str(j, "$", "counter_id", &d->counter_id, err))
		return -1;
	if (get_int(j, "$", "counter_version", 1, INT32_MAX, &i64, &null_cv, err) != 0)
		return -1;
	d->counter_version = (int)i64;
	if (get_enum(j, "$", "counter_type", NAMES(ctype_names), &e, err) != 0)
		return -1;
	d->counter_type = (cnt_counter_type)e;
	if (get_enum(j, "$", "scope_kind", NAMES(scope_names), &e, err) != 0)
		return -1;
	d->scope_kind = (cnt_scope_kind)e;
	if (get_str(j, "$", "scope", &d->scope, err) != 0 ||
	    get_int(j, "$", "version", 1, CNT_VIEWDESC_MAX_VERSION, &i64, NULL, err) != 0)
		return -1;
	d->version = (int)i64;
	if (get_obj(j, "$", "window", &w, err) != 0 ||
	    get_enum(w, "$.window", "kind", NAMES(window_names), &e, err) != 0)
		return -1;
	d->window_kind = (cnt_window_kind)e;
	if (get_str(w, "$.window", "label", &d->window_label, err) ||
	    get_int(w, "$.window", "from", INT64_MIN, INT64_MAX, &d->from, NULL, err) ||
	    get_int(w, "$.window", "to", INT64_MIN, INT64_MAX, &d->to, NULL, err) ||
	    get_str(w, "$.window", "timezone", &d->timezone, err))
		return -1;
	if (get_int(j, "$", "as_of", INT64_MIN, INT64_MAX, &d->as_of, &null_as_of, err) != 0 ||
	    get_obj(j, "$", "log_position", &lp, err) != 0 ||
	    get_int(lp, "$.log_position", "max_ingest_time", INT64_MIN, INT64_MAX, &mit, &null_mit, err) != 0)
		return -1;
	d->has_as_of = !null_as_of;
	if (null_as_of != null_mit || mit != d->as_of)
		return cnt_err_set(err, "$.log_position.max_ingest_time: differs from $.as_of");
	if (get_int(j, "$", "built_at", INT64_MIN, INT64_MAX, &d->built_at, NULL, err) != 0 ||
	    get_enum(j, "$", "order", NAMES(order_names), &d->order_asc, err) != 0)
		return -1;
	if (get(j, "$", "tie_break", &tb, err) != 0)
		return -1;
	if (!json_is_array(tb) || json_array_size(tb) < 1 || json_array_size(tb) > CNT_TIE_MAX)
		return cnt_err_set(err, "$.tie_break: expected an array of 1 to %d rules", CNT_TIE_MAX);
	d->ntie_break = json_array_size(tb);
	for (size_t i = 0; i < d->ntie_break; i++) {
		x = json_array_get(tb, i);
		e = json_is_string(x) ? name_index(json_string_value(x), NAMES(tie_names)) : -1;
		if (e < 0)
			return cnt_err_set(err, "$.tie_break[%zu]: unknown rule", i);
		d->tie_break[i] = (cnt_tie_break)e;
	}
	if (get_enum(j, "$", "rank_numbering", NAMES(numbering_names), &e, err) != 0)
		return -1;
	d->rank_numbering = (cnt_rank_numbering)e;
	if (get_int(j, "$", "materialised_cap", 1, INT64_MAX, &d->materialised_cap, NULL, err) ||
	    get_int(j, "$", "freshness_budget_s", 0, INT64_MAX, &d->freshness_budget_s, NULL, err) ||
	    get_obj(j, "$", "histogram", &h, err) ||
	    get_enum(h, "$.histogram", "scale", NAMES(scale_names), &e, err))
		return -1;
	d->hist_scale = (cnt_hist_scale)e;
	if (get_int(h, "$.histogram", "bins", 1, CNT_VIEWDESC_MAX_BINS, &i64, NULL, err) != 0)
		return -1;
	d->bins = (uint64_t)i64;
	if (get_int(j, "$", "members", 0, UINT32_MAX - 1, &i64, NULL, err) != 0)
		return -1;
	d->members = (uint64_t)i64;
	if (get_int(j, "$", "head", 0, UINT32_MAX - 1, &i64, NULL, err) != 0)
		return -1;
	d->head = (uint64_t)i64;
	if ((x = json_object_get(j, "verified")) != NULL) {
		if (!json_is_true(x))
			return cnt_err_set(err, "$.verified: expected true (a fast view has no such key)");
		d->verified = 1;
		if (get_str(j, "$", "audit_id", &d->audit_id, err) != 0)
			return -1;
	} else if (json_object_get(j, "audit_id") != NULL) {
		return cnt_err_set(err, "$.audit_id: only a verified view has one");
	}
	if ((x = json_object_get(j, "errors")) != NULL) {
		if (!json_is_true(x))
			return cnt_err_set(err, "$.errors: expected true (a view without an error column has no such key)");
		d->errors = 1;
	}
	if (json_object_get(j, "precision") != NULL) {
		if (get_int(j, "$", "precision", 4, 18, &i64, NULL, err) != 0)
			return -1;
		d->precision = (int)i64;
	}
	return check(d, err);
}

int cnt_viewdesc_parse(cnt_viewdesc *d, const char *text, size_t n, cnt_err *err)
{
	json_error_t je;
	json_t *j;

	memset(d, 0, sizeof(*d));
	if (n > CNT_VIEWDESC_MAX)
		return cnt_err_set(err, "%zu bytes, more than the %u a description may have", n, CNT_VIEWDESC_MAX);
	j = cnt_json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
	if (j == NULL && cnt_json_oom(&je))
		return cnt_err_nomem(err);
	if (j == NULL)
		return cnt_err_set(err, "not JSON: %s at byte %d", je.text, je.position);
	d->json_ = j;
	if (parse(d, j, err) != 0) {
		cnt_viewdesc_release(d);
		return -1;
	}
	return 0;
}

void cnt_viewdesc_release(cnt_viewdesc *d)
{
	if (d->json_)
		json_decref(d->json_);
	memset(d, 0, sizeof(*d));
}
