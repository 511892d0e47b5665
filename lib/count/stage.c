/*
 * stage.c - what the event stages share (see stage.h).
 */
#include "count/stage.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "avro/json.h"
#include "base/outfile.h"
#include "base/text.h"

/* Ids come from files we distrust: at most this many bytes of one go
 * into a message. */
#define ID_SHOWN 128
#define REJECTS_PIECE (64u << 10)

int cnt_count_lookup(const cnt_defs *defs, const char *defs_name, const cnt_event *e,
	cnt_count_target *t, cnt_count_reject *rej)
{
	t->counter = NULL;
	t->version = NULL;
	t->tenant = cnt_defs_tenant(defs, e->tenant_id.p, e->tenant_id.n);
	if (t->tenant == NULL) {
		rej->reason = "unknown_tenant";
		rej->field = "tenant_id";
		snprintf(rej->msg, sizeof(rej->msg), "tenant '%.*s%s' is not declared in '%s'",
			CNT_CUT(e->tenant_id, ID_SHOWN), defs_name);
		return 1;
	}
	t->counter = cnt_defs_counter(defs, e->tenant_id.p, e->tenant_id.n, e->counter_id.p, e->counter_id.n);
	t->version = t->counter ? cnt_counter_version_get(t->counter, e->counter_version) : NULL;
	if (t->version == NULL) {
		rej->reason = "unknown_counter";
		rej->field = "counter_version";
		snprintf(rej->msg, sizeof(rej->msg), "counter '%.*s%s/%.*s%s' version %d is not declared in '%s'",
			CNT_CUT(e->tenant_id, ID_SHOWN), CNT_CUT(e->counter_id, ID_SHOWN),
			(int)e->counter_version, defs_name);
		return 1;
	}
	/* Defence in depth: admission refuses it (not_monotonic), but an
	 * archive from elsewhere may hold one; only a compensation lowers. */
	if (t->version->monotonic && e->delta < 0 && e->retracts.p == NULL) {
		rej->reason = "not_monotonic";
		rej->field = "delta";
		snprintf(rej->msg, sizeof(rej->msg), "delta %lld would lower monotonic counter '%.*s%s/%.*s%s' "
			"v%d, and the event is not a retraction's compensation", (long long)e->delta,
			CNT_CUT(e->tenant_id, ID_SHOWN), CNT_CUT(e->counter_id, ID_SHOWN),
			(int)e->counter_version);
		return 1;
	}
	/* The accessors hand out elements of the definitions' arrays. */
	t->tenant_index = (size_t)(t->tenant - cnt_defs_tenant_at(defs, 0));
	t->counter_index = (size_t)(t->counter - cnt_defs_counter_at(defs, 0));
	return 0;
}

double cnt_count_ratio(uint64_t a, uint64_t b)
{
	return b ? round(1e6 * (double)a / (double)b) / 1e6 : 0.0;
}

void cnt_rejects_init(cnt_rejects *r, int fd, const char *name, const char *text_prefix)
{
	r->fd = fd;
	r->name = name;
	r->prefix = text_prefix;
	r->buf = (cnt_buf)CNT_BUF_INIT;
}

int cnt_rejects_flush(cnt_rejects *r, cnt_err *err)
{
	if (r->buf.len && cnt_write_all(r->fd, r->buf.p, r->buf.len) != 0)
		return cnt_err_write(err, errno, "cannot write '%s'", r->name);
	r->buf.len = 0;
	return 0;
}

/* Appends s by cnt_buf_shown's rule: 0, or -1 when out of memory. */
static int put_visible(cnt_buf *b, const char *s)
{
	return cnt_buf_shown(b, s, strlen(s), SIZE_MAX) < 0 ? -1 : 0;
}

int cnt_rejects_put(cnt_rejects *r, const char *input, uint64_t record, const cnt_event *e,
	const cnt_count_reject *why, cnt_err *err)
{
	int rc;

	if (r->prefix == NULL) {
		if (cnt_json_reject(&r->buf, input, "record", record, why->reason, why->field, why->msg,
		    e->event_id.p, e->event_id.n) != 0)
			return cnt_err_oom(err, "writing a reject");
		return r->buf.len >= REJECTS_PIECE ? cnt_rejects_flush(r, err) : 0;
	}
	rc = cnt_buf_printf(&r->buf, "%s: '", r->prefix) | put_visible(&r->buf, input) |
		cnt_buf_printf(&r->buf, "' record %llu: rejected (%s): ", (unsigned long long)record, why->reason) |
		put_visible(&r->buf, why->msg) | cnt_buf_putc(&r->buf, '\n');
	if (rc != 0)
		return cnt_err_oom(err, "writing a reject");
	return cnt_rejects_flush(r, err);
}

void cnt_rejects_release(cnt_rejects *r)
{
	cnt_buf_release(&r->buf);
}

int cnt_count_input(int fd, const char *name, cnt_count_stage stage, void *ctx, cnt_rejects *rejects,
	void (*progress)(uint64_t), cnt_err *err)
{
	cnt_event_in *in = cnt_event_in_open(fd, name, NULL, err);
	cnt_event e;
	cnt_count_reject why;
	const uint8_t *raw;
	size_t rawn;
	int rc;

	if (in == NULL)
		return -1;
	while ((rc = cnt_event_in_next(in, &e, err)) > 0) {
		if (progress)
			progress(1);
		if (!cnt_event_in_raw(in, &raw, &rawn)) {
			raw = NULL;
			rawn = 0;
		}
		rc = stage(ctx, &e, raw, rawn, &why, err);
		if (rc < 0 || (rc > 0 && cnt_rejects_put(rejects, name, cnt_event_in_record_no(in), &e, &why, err) != 0)) {
			rc = -1;
			break;
		}
	}
	cnt_event_in_free(in);
	return rc < 0 ? -1 : 0;
}
