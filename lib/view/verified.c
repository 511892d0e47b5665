/*
 * verified.c - verified views (see verified.h).
 */
#include "view/verified.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "correct/auditlog.h"
#include "time/timefmt.h"

int cnt_verified_begin(cnt_board_build *bb, const char *audits, cnt_err *err)
{
	const cnt_leaderboard *b = bb->board;
	const cnt_audit_entry *a;
	cnt_auditlog *l = cnt_auditlog_open(audits, 0, err);
	const cnt_tz *tz;
	char t[40];
	int64_t to;

	if (l == NULL)
		return -1;
	a = cnt_auditlog_latest(l, b->tenant_id, b->counter_id);
	if (a == NULL) {
		cnt_auditlog_free(l);
		return cnt_err_set(err, "'%s' has no audit of %s/%s: there is no verified count yet", audits,
			b->tenant_id, b->counter_id);
	}
	if ((tz = cnt_tz_cache_get(bb->tzc, b->tenant->timezone, err)) == NULL) {
		cnt_auditlog_free(l);
		return -1;
	}
	if (cnt_tz_bucket_start(tz, a->through_ms) != a->through_ms) {
		cnt_time_format_rfc3339(a->through_ms, t);
		cnt_err_set(err, "audit '%s' of %s/%s: its watermark %s is not a bucket boundary in %s, so a bucket "
			"would hold events on both sides of it (audit through a bucket boundary)", a->audit_id,
			b->tenant_id, b->counter_id, t, b->tenant->timezone);
		cnt_auditlog_free(l);
		return -1;
	}
	if ((bb->audit_id = strdup(a->audit_id)) == NULL) {
		cnt_auditlog_free(l);
		return cnt_err_oom(err, "reading '%s'", audits);
	}
	bb->verified = 1;
	bb->through = a->through_ms;
	cnt_auditlog_free(l);
	to = bb->to < bb->through ? bb->to : bb->through;
	if (to < bb->from)
		to = bb->from;
	bb->to = to;
	cnt_proj_cut(bb->proj, to);
	return 0;
}

int cnt_verified_check(const cnt_board_build *bb, cnt_err *err)
{
	const cnt_proj_stats *st = cnt_proj_get_stats(bb->proj);
	char t[40], w[40];

	if (!bb->verified || st->as_of >= bb->through)
		return 0;
	cnt_time_format_rfc3339(bb->through, w);
	if (st->as_of == INT64_MIN)
		return cnt_err_set(err, "no bucket of %s/%s: the verified count through %s needs the buckets of the audited events",
			bb->board->tenant_id, bb->board->counter_id, w);
	cnt_time_format_rfc3339(st->as_of, t);
	return cnt_err_set(err, "the buckets of %s/%s end at ingest time %s, before the audit's watermark %s: "
		"events of the audited period may be missing from them", bb->board->tenant_id, bb->board->counter_id, t, w);
}

int cnt_verified_open(cnt_view *v, const char *root, const char *board, const char *scope, int *version,
	char *vdir, size_t n, int *frozen, cnt_err *err)
{
	char sdir[4096];
	size_t o;

	memset(v, 0, sizeof(*v));
	if (cnt_viewdir_path(sdir, sizeof(sdir), root, board, scope) != 0 ||
	    (o = strlen(sdir)) + sizeof("/" CNT_VERIFIED_DIR) > sizeof(sdir))
		return cnt_err_set(err, "path too long: '%s'", root);
	memcpy(sdir + o, "/" CNT_VERIFIED_DIR, sizeof("/" CNT_VERIFIED_DIR));
	if (*version == 0 && cnt_viewdir_current(sdir, version, err) != 0)
		return -1;
	if (*version == 0)
		return cnt_err_set(err, "board '%s' scope '%s' has no published verified view in '%s' "
			"(cnt-project --verified builds one)", board, scope, root);
	if ((size_t)snprintf(vdir, n, "%s/v%06d", sdir, *version) >= n)
		return cnt_err_set(err, "path too long: '%s'", sdir);
	*frozen = cnt_viewdir_frozen(sdir);
	if (cnt_view_open(v, vdir, err) != 0)
		return -1;
	if (strcmp(v->desc.board, board) != 0 || strcmp(v->desc.scope, scope) != 0 || v->desc.version != *version ||
	    !v->desc.verified) {
		cnt_err_set(err, "'%s': corrupt: it describes %s version %d of board '%s' scope '%s'", vdir,
			v->desc.verified ? "verified" : "fast", v->desc.version, v->desc.board, v->desc.scope);
		cnt_view_close(v);
		return -1;
	}
	return 0;
}
