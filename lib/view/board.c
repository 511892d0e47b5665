/*
 * board.c - a board's window, scopes and view versions (see board.h).
 */
#include "view/board.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "avro/json.h"
#include "count/rollup.h"
#include "model/bucket.h"
#include "model/event.h"
#include "model/fingerprint.h"
#include "view/lines.h"
#include "view/retain.h"
#include "view/view.h"

static int slice_is(cnt_slice s, const char *z)
{
	size_t n = strlen(z);

	return s.n == n && memcmp(s.p, z, n) == 0;
}

static int64_t round_up_to_bucket(const cnt_tz *tz, int64_t t)
{
	int64_t b = cnt_tz_bucket_start(tz, t);

	return b == t ? t : cnt_tz_bucket_end(tz, t);
}

/* A definitions time: an instant, or a local time in zone local; either
 * way rounded up to a bucket boundary of the tenant's zone tz. */
static int64_t deftime_utc(const cnt_tz *tz, const cnt_tz *local, const cnt_deftime *d)
{
	cnt_civil c;

	if (d->has_offset)
		return round_up_to_bucket(tz, d->ms);
	cnt_civil_from_ms(d->civil_ms, &c);
	return round_up_to_bucket(tz, cnt_tz_local_to_utc(local, &c, 0));
}

/* The zone a season's local times are written in: its own, else the
 * tenant's.  NULL with err set. */
static const cnt_tz *season_tz(cnt_tz_cache *tzc, const cnt_tz *tz, const cnt_season *s, cnt_err *err)
{
	const cnt_tz *z;

	if (s->timezone == NULL || strcmp(s->timezone, cnt_tz_name(tz)) == 0)
		return tz;
	z = cnt_tz_cache_get(tzc, s->timezone, err);
	if (z == NULL)
		cnt_err_prefix(err, "season '%s'", s->season_id);
	return z;
}

/* The season's [opens, closes) in the tenant's zone tz. */
static int season_window(cnt_tz_cache *tzc, const cnt_tz *tz, const cnt_season *s, int64_t *from, int64_t *to,
	cnt_err *err)
{
	const cnt_tz *local = season_tz(tzc, tz, s, err);

	if (local == NULL)
		return -1;
	*from = deftime_utc(tz, local, &s->opens_at);
	*to = deftime_utc(tz, local, &s->closes_at);
	return 0;
}

int cnt_board_window(const cnt_defs *defs, const cnt_leaderboard *b, cnt_tz_cache *tzc, int64_t now,
	const char *season_id, int64_t *from, int64_t *to, const char **label, cnt_err *err)
{
	const cnt_tz *tz = cnt_tz_cache_get(tzc, b->tenant->timezone, err);
	cnt_tz_window w = {CNT_TZ_MIN_MS, CNT_TZ_MAX_MS};
	const cnt_season *found = NULL;

	if (tz == NULL)
		return cnt_err_prefix(err, "tenant '%s'", b->tenant_id);
	*label = cnt_defs_window_name(b->window);
	switch (b->window) {
	case CNT_WIN_ALL_TIME: break;
	case CNT_WIN_DAY: w = cnt_tz_day(tz, now); break;
	case CNT_WIN_WEEK: w = cnt_tz_week(tz, now, b->week_start); break;
	case CNT_WIN_MONTH: w = cnt_tz_month(tz, now); break;
	case CNT_WIN_ROLLING_24H: w = cnt_tz_rolling(tz, now, 24 * 3600 * INT64_C(1000)); break;
	case CNT_WIN_LAST_30D: w = cnt_tz_last_days(tz, now, 30); break;
	case CNT_WIN_RANGE:
		w.start_ms = deftime_utc(tz, tz, &b->range_from);
		w.end_ms = deftime_utc(tz, tz, &b->range_to);
		break;
	case CNT_WIN_SEASON:
		for (size_t i = 0; i < cnt_defs_nseasons(defs); i++) {
			const cnt_season *s = cnt_defs_season_at(defs, i);
			int64_t o, c;

			if (s->board != b)
				continue;
			if (season_id) {
				if (strcmp(s->season_id, season_id) == 0)
					found = s;
				continue;
			}
			if (season_window(tzc, tz, s, &o, &c, err) != 0)
				return -1;
			if (now >= o && now < c)
				found = s;
		}
		if (found == NULL)
			return season_id ? cnt_err_set(err, "board '%s' has no season '%s'", b->board_id, season_id) :
				cnt_err_set(err, "board '%s' has no season open at --now; name one with --season", b->board_id);
		if (season_window(tzc, tz, found, &w.start_ms, &w.end_ms, err) != 0)
			return -1;
		*label = found->season_id;
		break;
	default:
		return cnt_err_set(err, "board '%s': window kind not supported", b->board_id);
	}
	*from = w.start_ms;
	*to = w.end_ms;
	return 0;
}

int cnt_board_begin(cnt_board_build *bb, const cnt_defs *defs, const char *defs_name, const char *board_id,
	const int64_t *now, const char *season_id, const char *scopes, const char *scopes_from, cnt_err *err)
{
	const cnt_leaderboard *b = cnt_defs_board(defs, board_id, strlen(board_id));
	const cnt_counter_version *cv;

	memset(bb, 0, sizeof(*bb));
	if (b == NULL)
		return cnt_err_set(err, "board '%s' is not declared in '%s'", board_id, defs_name);
	cv = b->counter_version ? cnt_counter_version_get(b->counter, b->counter_version) :
		cnt_counter_version_latest(b->counter);
	bb->board = b;
	bb->ctype = cv ? cv->type : CNT_CTYPE_EXACT;
	if (now) {
		bb->now = *now;
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		bb->now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	}
	if (b->scope_kind == CNT_SCOPE_GLOBAL && (scopes || scopes_from))
		return cnt_err_set(err, "board '%s' is global: --scopes and --scopes-from are for region and cohort boards",
			b->board_id);
	if (b->scope_kind != CNT_SCOPE_GLOBAL && !scopes && !scopes_from)
		return cnt_err_set(err, "board '%s' is scoped by %s: give --scopes FILE%s", b->board_id,
			b->scope_kind == CNT_SCOPE_REGION ? "region" : "cohort",
			b->scope_kind == CNT_SCOPE_REGION ? " or --scopes-from EVENTS" : "");
	bb->tzc = cnt_tz_cache_new();
	if (bb->tzc == NULL)
		return cnt_err_nomem(err);
	if (cnt_board_window(defs, b, bb->tzc, bb->now, season_id, &bb->from, &bb->to, &bb->label, err) != 0 ||
	    (bb->proj = cnt_proj_new(b, bb->from, bb->to, err)) == NULL ||
	    (scopes && cnt_board_read_scopes(bb->proj, scopes, err) != 0))
		goto fail;
	if (scopes_from) {
		int fd = strcmp(scopes_from, "-") == 0 ? STDIN_FILENO : open(scopes_from, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			cnt_err_set(err, "cannot open '%s': %s", scopes_from, strerror(errno));
			goto fail;
		}
		if (cnt_board_scopes_from_events(bb, fd, scopes_from, err) != 0) {
			if (fd != STDIN_FILENO)
				close(fd);
			goto fail;
		}
		if (fd != STDIN_FILENO)
			close(fd);
	}
	return 0;
fail:
	cnt_board_end(bb);
	return -1;
}

void cnt_board_end(cnt_board_build *bb)
{
	cnt_proj_free(bb->proj);
	free(bb->audit_id);
	bb->audit_id = NULL;
	if (bb->tzc)
		cnt_tz_cache_free(bb->tzc);
	bb->proj = NULL;
	bb->tzc = NULL;
}

int cnt_board_read_scopes(cnt_proj *p, const char *path, cnt_err *err)
{
	cnt_lines l;
	size_t n;
	int rc;

	if (cnt_lines_open(&l, path, NULL, err) != 0)
		return -1;
	while ((rc = cnt_lines_next(&l, &n, err)) > 0) {
		char *comma;

		if (n == 0 || (l.no == 1 && strncmp(l.buf, "member_ref,", 11) == 0))
			continue;
		comma = memrchr(l.buf, ',', n);
		if (comma == NULL || comma == l.buf || comma == l.buf + n - 1) {
			rc = cnt_err_set(err, "'%s' line %llu: expected member_ref,scope", path, l.no);
			break;
		}
		if (memchr(l.buf, 0, n) != NULL) {
			rc = cnt_err_set(err, "'%s' line %llu: a NUL byte", path, l.no);
			break;
		}
		if (!cnt_json_text_ok(comma + 1, n - (size_t)(comma - l.buf) - 1)) {
			rc = cnt_err_set(err, "'%s' line %llu: the scope is not UTF-8 text", path, l.no);
			break;
		}
		if (cnt_proj_set_scope(p, l.buf, (size_t)(comma - l.buf), comma + 1,
			n - (size_t)(comma - l.buf) - 1) != 0) {
			rc = cnt_err_oom(err, "reading '%s'", path);
			break;
		}
	}
	cnt_lines_close(&l);
	return rc < 0 ? -1 : 0;
}

int cnt_board_scopes_from_events(cnt_board_build *bb, int fd, const char *name, cnt_err *err)
{
	cnt_event_in *in = cnt_event_in_open(fd, name, NULL, err);
	cnt_event e;
	int rc;

	if (in == NULL)
		return -1;
	while ((rc = cnt_event_in_next(in, &e, err)) > 0)
		if (cnt_proj_scope_from_event(bb->proj, &e, err) != 0) {
			rc = err->kind == CNT_ERR_NOMEM ? cnt_err_oom(err, "reading '%s'", name)
				: cnt_err_prefix(err, "'%s' record %llu", name,
					(unsigned long long)cnt_event_in_record_no(in));
			break;
		}
	cnt_event_in_free(in);
	return rc < 0 ? -1 : 0;
}

/* Whether t is the start of a local day of tz (or an open end). */
static int day_edge(const cnt_tz *tz, int64_t t)
{
	return t <= CNT_TZ_MIN_MS || t >= CNT_TZ_MAX_MS || cnt_tz_day(tz, t).start_ms == t;
}

/* Whether the window is made of whole local days of the tenant's zone,
 * so that day roll-ups give its values (count/rollup.h). */
static int whole_days(cnt_board_build *bb, const cnt_tz **tzp)
{
	cnt_err e2;
	const cnt_tz *tz;

	if (bb->no_days || bb->verified || bb->to <= bb->from)
		return 0;
	if ((tz = cnt_tz_cache_get(bb->tzc, bb->board->tenant->timezone, &e2)) == NULL)
		return 0;
	*tzp = tz;
	return day_edge(tz, bb->from) && day_edge(tz, bb->to);
}

int cnt_board_add_buckets(cnt_board_build *bb, int fd, const char *name, void (*tick)(uint64_t), cnt_err *err)
{
	cnt_bucket_in in;
	cnt_bucket bk;
	const cnt_tz *tz = NULL;
	int rc, days = 0;
	cnt_rollup_days_seen seen;

	/* A window of whole local days reads the file's day container only,
	 * the hourly blocks skipped by their sizes: the cost grows with days,
	 * not hours.  Without a day container, the hours. */
	if (whole_days(bb, &tz) && (days = cnt_rollup_seek_days(fd, name, err)) < 0)
		return -1;
	if (cnt_bucket_in_open(&in, fd, name, NULL, err) != 0)
		return -1;
	in.days = days;
	bb->used_days |= days;
	cnt_rollup_days_seen_init(&seen);
	while ((rc = cnt_bucket_in_next(&in, &bk, err)) > 0) {
		/* each day record of the board's tenant must be one of its local
		 * days */
		if (days && slice_is(bk.tenant_id, bb->board->tenant_id) &&
		    cnt_rollup_check_day(&seen, tz, name, bk.bucket_start, bk.bucket_end, err) != 0) {
			rc = -1;
			break;
		}
		if (cnt_proj_add_bucket(bb->proj, &bk, err) != 0) {
			rc = -1;
			break;
		}
		if (tick)
			tick(1);
	}
	cnt_bucket_in_release(&in);
	return rc < 0 ? -1 : 0;
}

/* The view published in dir, if any, was built under the definitions
 * (model/fingerprint.h): a board edited in place since is refused.  A
 * view that cannot be read is left to the readers to report. */
static int check_published(const char *dir, cnt_err *err)
{
	char path[4400];
	const cnt_meta_kv *kv;
	cnt_reader *r;
	int cur, fd, rc;
	size_t n;
	cnt_err e2;

	if (cnt_viewdir_current(dir, &cur, err) != 0)
		return -1;
	if (cur == 0)
		return 0;
	snprintf(path, sizeof(path), "%s/v%06d/view.avro", dir, cur);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	if ((r = cnt_reader_open(fd, path, NULL, &e2)) == NULL) {
		close(fd);
		if (e2.kind == CNT_ERR_NOMEM)
			*err = e2;
		return e2.kind == CNT_ERR_NOMEM ? -1 : 0;
	}
	n = cnt_reader_meta(r, &kv);
	rc = cnt_fp_check_published(kv, n, path, err);
	cnt_reader_free(r);
	close(fd);
	return rc;
}

int cnt_board_write_scope(cnt_board_build *bb, size_t i, const char *views, int no_publish,
	cnt_board_written *out, cnt_err *err)
{
	const cnt_leaderboard *b = bb->board;
	const cnt_proj_stats *st = cnt_proj_get_stats(bb->proj);
	char dir[4096];
	cnt_view_build vb;
	cnt_viewdesc d;
	char *fps;
	int version, rc;

	memset(out, 0, sizeof(*out));
	out->scope = cnt_proj_scope(bb->proj, i);
	if (cnt_proj_view(bb->proj, i, &vb, err) != 0)
		return -1;
	if (cnt_viewdir_path(dir, sizeof(dir), views, b->board_id, out->scope) != 0 ||
	    (bb->verified && strlen(dir) + sizeof("/verified") > sizeof(dir)))
		return cnt_err_set(err, "path too long for scope '%s'", out->scope);
	if (bb->verified)
		strcat(dir, "/verified");   /* view/verified.h: beside the fast view */
	if (check_published(dir, err) != 0 || cnt_viewdir_next(dir, &version, err) != 0)
		return -1;
	cnt_viewdesc_from_board(&d, b, bb->ctype);
	d.scope = out->scope;
	d.version = version;
	d.window_label = bb->label;
	d.from = bb->from;
	d.to = bb->to;
	/* No record of the counter at all: the view covers no log. */
	d.has_as_of = st->as_of != INT64_MIN;
	d.as_of = d.has_as_of ? st->as_of : 0;
	d.built_at = bb->now;
	if (bb->verified) {
		d.verified = 1;
		d.audit_id = bb->audit_id;
		d.has_as_of = 1;
		d.as_of = bb->through;
	}
	vb.desc = &d;
	/* the board and the counter versions it ranked */
	if (cnt_fp_set_dump(cnt_proj_versions(bb->proj), b, &fps, err) != 0)
		return -1;
	vb.fingerprints = fps;
	rc = cnt_viewdir_write(dir, version, &vb, err);
	free(fps);
	if (rc != 0)
		return cnt_err_prefix(err, "scope '%s'", out->scope);
	out->version = version;
	out->members = vb.n;
	out->frozen = cnt_viewdir_frozen(dir);
	if (!no_publish && !out->frozen) {
		cnt_retain_policy rp = {b->retain_versions_s, b->retain_versions_min, b->window == CNT_WIN_SEASON};
		cnt_retain_log lg;
		int old;

		/* a damaged record stops the build before anything is published */
		if (cnt_retain_load(dir, &lg, err) != 0)
			return -1;
		cnt_retain_log_release(&lg);
		if (cnt_viewdir_current(dir, &old, err) != 0 || cnt_viewdir_publish(dir, version, err) != 0)
			return -1;
		out->published = 1;
		/* view/retain.h: the version it replaced is superseded now, and
		 * versions superseded long enough ago are retired */
		if (cnt_retain_publish(dir, old, version, bb->now, &rp, &out->retired, err) != 0)
			return -1;
	}
	return 0;
}

int cnt_board_scope_op(const char *views, const char *board, const char *scope, int publish, int freeze,
	int64_t now, cnt_err *err)
{
	char **dirs = NULL, one[4096];
	size_t n = 0;
	int rc = -1;

	if (scope) {
		if (cnt_viewdir_path(one, sizeof(one), views, board, scope) != 0)
			return cnt_err_set(err, "path too long");
	} else if (cnt_viewdir_scopes(views, board, &dirs, &n, err) != 0) {
		return -1;
	}
	/* Every scope must have the version before any is switched, so a
	 * failed rollback leaves the board as it was. */
	for (size_t i = 0; publish > 0 && i < (scope ? 1 : n); i++) {
		char check[4300];
		struct stat sb;

		snprintf(check, sizeof(check), "%s/v%06d/index.bin", scope ? one : dirs[i], publish);
		if (stat(check, &sb) != 0) {
			int gone = cnt_retain_check_gone(scope ? one : dirs[i], board,
				scope ? scope : strrchr(dirs[i], '/') + 1, publish, err);

			if (gone > 0) {
				err->kind = CNT_ERR_DATA;   /* a usage error here, not a reader's status 7 */
				cnt_err_prefix(err, "no scope was switched: '%s' cannot be published again (rebuild "
					"the view from the log)", scope ? one : dirs[i]);
			} else if (gone == 0) {
				cnt_err_set(err, "no scope was switched: '%s' has no version %d to publish",
					scope ? one : dirs[i], publish);
			}
			goto out;
		}
	}
	for (size_t i = 0; i < (scope ? 1 : n); i++) {
		const char *dir = scope ? one : dirs[i];
		int old;

		if (publish > 0 && (cnt_viewdir_current(dir, &old, err) != 0 ||
			cnt_viewdir_publish(dir, publish, err) != 0 ||
			cnt_retain_publish(dir, old, publish, now, NULL, NULL, err) != 0))
			goto out;
		if (freeze && cnt_viewdir_freeze(dir, freeze > 0, err) != 0)
			goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	return rc;
}
