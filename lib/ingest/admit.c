/*
 * admit.c - admission checks and log records (see admit.h).
 */
#include "ingest/admit.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xxhash.h>

#include "base/text.h"
#include "ingest/cap.h"
#include "ingest/ivt.h"
#include "ingest/seen.h"
#include "ingest/verify.h"

static const char *const reason_names[CNT_REJ_COUNT] = {
	"malformed", "missing_field", "bad_field", "unknown_tenant",
	"unknown_counter", "client_not_writable", "subject_mismatch",
	"item_required", "delta_out_of_bounds", "too_old", "in_future",
	"quota_exceeded", "bad_watch_time", "below_watch_time", "ivt_user_agent",
	"ivt_address", "ivt_rate", "not_monotonic", "member_cap",
	"unsigned", "bad_signature", "unknown_key", "expired_key", "revoked_key", "reserved_attr"
};

const char *cnt_reject_name(cnt_reject_reason r)
{
	return (unsigned)r < CNT_REJ_COUNT ? reason_names[r] : "?";
}

/* The duplicate table is kept at most 3/4 full: a run's table is fresh
 * memory, touched once per key, and each fresh byte costs more than the
 * slightly longer probes (its first slot is prefetched). */
#define ADMIT_LOAD_PCT 75

typedef struct quota_slot {
	int64_t second;
	int64_t used;
} quota_slot;

struct cnt_admit {
	cnt_admit_cfg cfg;
	cnt_seen seen;
	cnt_admit_stats st;
	size_t ncounters, ntenants;
	uint64_t *acc_by_counter, *dup_by_counter;
	quota_slot *quota;           /* per tenant */
	cnt_ivt *ivt;                /* inline filters */
	char event_id[33];
};

cnt_admit *cnt_admit_new(const cnt_admit_cfg *cfg, cnt_err *err)
{
	cnt_admit *a = calloc(1, sizeof(*a));

	if (a == NULL)
		goto oom;
	a->cfg = *cfg;
	a->ncounters = cnt_defs_ncounters(cfg->defs);
	a->ntenants = cnt_defs_ntenants(cfg->defs);
	a->acc_by_counter = calloc(a->ncounters + 1, sizeof(uint64_t));
	a->dup_by_counter = calloc(a->ncounters + 1, sizeof(uint64_t));
	a->quota = calloc(a->ntenants + 1, sizeof(quota_slot));
	if (a->acc_by_counter == NULL || a->dup_by_counter == NULL || a->quota == NULL ||
	    cnt_seen_init(&a->seen, cfg->expected > (1u << 16) ? cfg->expected : (1u << 16), ADMIT_LOAD_PCT) != 0)
		goto oom;
	for (size_t i = 0; i < a->ntenants; i++)
		a->quota[i].second = INT64_MIN;
	if ((a->ivt = cnt_ivt_new(cfg->defs, err)) == NULL) {
		cnt_admit_free(a);
		return NULL;
	}
	return a;
oom:
	cnt_admit_free(a);
	cnt_err_nomem(err);
	return NULL;
}

void cnt_admit_free(cnt_admit *a)
{
	if (a == NULL)
		return;
	cnt_seen_release(&a->seen);
	free(a->acc_by_counter);
	free(a->dup_by_counter);
	free(a->quota);
	cnt_ivt_free(a->ivt);
	free(a);
}

static int reject(cnt_admit *a, cnt_verdict *v, cnt_reject_reason r, const char *field,
	const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int reject(cnt_admit *a, cnt_verdict *v, cnt_reject_reason r, const char *field,
	const char *fmt, ...)
{
	va_list ap;

	v->outcome = CNT_ADMIT_REJECT;
	v->reason = r;
	v->field = field;
	va_start(ap, fmt);
	vsnprintf(v->msg, sizeof(v->msg), fmt, ap);
	va_end(ap);
	a->st.rejected++;
	a->st.by_reason[r]++;
	return CNT_ADMIT_REJECT;
}

void cnt_admit_count_reject(cnt_admit *a, cnt_reject_reason r)
{
	a->st.in++;
	a->st.rejected++;
	a->st.by_reason[r]++;
}

static int64_t clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Checks a string field's presence and length; returns 0 when fine. */
static int check_str(cnt_admit *a, cnt_verdict *v, cnt_slice s, const char *field,
	size_t min, size_t max, int required)
{
	if (s.p == NULL) {
		if (!required)
			return 0;
		reject(a, v, CNT_REJ_MISSING_FIELD, field, "field '%s' is required", field);
		return -1;
	}
	if (s.n < min || s.n > max) {
		reject(a, v, CNT_REJ_BAD_FIELD, field, "field '%s' is %zu bytes long; it must be %zu to %zu",
			field, s.n, min, max);
		return -1;
	}
	return 0;
}

/* ms as seconds for a message: "604800 s", or "604800.001 s" when not whole
 * (a limit overshot by 1 ms must not read as equal to the limit). */
static const char *show_ms(char buf[32], uint64_t ms)
{
	if (ms % 1000 == 0)
		snprintf(buf, 32, "%" PRIu64 " s", ms / 1000);
	else
		snprintf(buf, 32, "%" PRIu64 ".%03" PRIu64 " s", ms / 1000, ms % 1000);
	return buf;
}

#define SHOW(s) CNT_CUT(s, 64)   /* a name from the input, cut whole */

/* The watch-time gate of version cv (cnt-definitions(5)): 0 when e passes
 * it, else the verdict. */
static int watch_gate(cnt_admit *a, cnt_verdict *v, const cnt_counter *c,
	const cnt_counter_version *cv, const cnt_ivt_event *e)
{
	cnt_slice w;
	int64_t ms = 0;
	size_t i;

	if (cv->min_watch_ms <= 0)
		return 0;
	if (!cnt_ivt_attr(e, cv->watch_attr, &w))
		return reject(a, v, CNT_REJ_BAD_WATCH, "attrs",
			"counter '%s/%s' v%d counts views of at least %" PRId64 " ms: attrs '%s' is "
			"required", c->tenant_id, c->counter_id, cv->version, cv->min_watch_ms, cv->watch_attr);
	for (i = 0; i < w.n && w.p[i] >= '0' && w.p[i] <= '9'; i++)
		ms = ms > (INT64_MAX - 9) / 10 ? INT64_MAX : ms * 10 + (w.p[i] - '0');
	if (w.n == 0 || i < w.n)
		return reject(a, v, CNT_REJ_BAD_WATCH, "attrs",
			"attrs '%s' '%.*s%s' is not a decimal number of milliseconds", cv->watch_attr, SHOW(w));
	if (ms < cv->min_watch_ms)
		return reject(a, v, CNT_REJ_BELOW_WATCH, "attrs",
			"attrs '%s' %" PRId64 " ms is below the %" PRId64 " ms counter '%s/%s' v%d counts",
			cv->watch_attr, ms, cv->min_watch_ms, c->tenant_id, c->counter_id, cv->version);
	return 0;
}

cnt_fp cnt_admit_fp(const cnt_raw_event *raw)
{
	const void *parts[3] = {raw->tenant_id.p, raw->counter_id.p, raw->idempotency_key.p};
	size_t lens[3] = {raw->tenant_id.n, raw->counter_id.n, raw->idempotency_key.n};

	return cnt_fp_of(3, parts, lens);
}

int cnt_admit_fp_key(const cnt_raw_event *raw, cnt_buf *b)
{
	const cnt_slice *part[3] = {&raw->tenant_id, &raw->counter_id, &raw->idempotency_key};
	size_t n = part[0]->n + part[1]->n + part[2]->n + 3;
	uint8_t *o;

	if (cnt_buf_reserve(b, n) != 0)
		return -1;
	o = b->p + b->len;
	for (int i = 0; i < 3; i++) {
		if (part[i]->n)
			memcpy(o, part[i]->p, part[i]->n);
		o += part[i]->n;
		*o++ = 0;
	}
	b->len += n;
	return 0;
}

void cnt_admit_prefetch_fp(cnt_admit *a, cnt_fp fp)
{
	cnt_seen_prefetch(&a->seen, fp);
}

cnt_fp cnt_admit_prefetch(cnt_admit *a, const cnt_raw_event *raw)
{
	cnt_fp fp = cnt_admit_fp(raw);

	cnt_seen_prefetch(&a->seen, fp);
	return fp;
}

int cnt_admit_event(cnt_admit *a, const cnt_raw_event *raw, uint64_t tag,
	cnt_event *out, cnt_verdict *v)
{
	/* The duplicate check is a random access into a large table: start
	 * it now and let the definition checks hide some of its latency. */
	return cnt_admit_event_fp(a, raw, cnt_admit_prefetch(a, raw), tag, out, v);
}

int cnt_admit_event_fp(cnt_admit *a, const cnt_raw_event *raw, cnt_fp fp, uint64_t tag,
	cnt_event *out, cnt_verdict *v)
{
	const cnt_tenant *t;
	const cnt_counter *c;
	const cnt_counter_version *cv;
	int64_t now = a->cfg.now_ms != INT64_MIN ? a->cfg.now_ms : clock_ms();
	size_t ci, ti;
	int64_t delta, oldest, latest;
	uint64_t first;
	int added, f;
	cnt_ivt_event ie;
	cnt_fp mfp;
	char why[sizeof(v->msg)];

	a->st.in++;
	v->field = NULL;
	v->msg[0] = 0;
	v->retry_after_ms = 0;
	if (check_str(a, v, raw->idempotency_key, "idempotency_key", 1, CNT_KEY_MAX, 1) ||
	    check_str(a, v, raw->tenant_id, "tenant_id", 1, CNT_KEY_MAX, 1) ||
	    check_str(a, v, raw->counter_id, "counter_id", 1, CNT_KEY_MAX, 1) ||
	    check_str(a, v, raw->member_ref, "member_ref", 1, CNT_REF_MAX, 1) ||
	    check_str(a, v, raw->item, "item", 1, CNT_REF_MAX, 0) ||
	    check_str(a, v, raw->subject, "subject", 1, CNT_REF_MAX, 0) ||
	    check_str(a, v, raw->signature, "signature", 0, CNT_SIGNATURE_MAX, 0))
		return v->outcome;
	if (!raw->has_event_time)
		return reject(a, v, CNT_REJ_MISSING_FIELD, "event_time", "field 'event_time' is required");
	if (raw->nattrs > CNT_ATTRS_MAX)
		return reject(a, v, CNT_REJ_BAD_FIELD, "attrs", "field 'attrs' has %zu entries; at most %d are allowed",
			raw->nattrs, CNT_ATTRS_MAX);
	for (size_t i = 0; i < raw->nattrs; i++)
		if (raw->attr_keys[i].n < 1 || raw->attr_keys[i].n > CNT_ATTR_KEY_MAX ||
		    raw->attr_vals[i].n > CNT_ATTR_VAL_MAX)
			return reject(a, v, CNT_REJ_BAD_FIELD, "attrs",
				"field 'attrs': entry '%.*s%s' has a %zu-byte key and a %zu-byte value "
				"(keys must be 1 to %d bytes, values at most %d)",
				SHOW(raw->attr_keys[i]), raw->attr_keys[i].n, raw->attr_vals[i].n,
				CNT_ATTR_KEY_MAX, CNT_ATTR_VAL_MAX);
	for (size_t i = 0; i < raw->nattrs; i++)
		if (raw->attr_keys[i].n >= 4 && memcmp(raw->attr_keys[i].p, "cnt.", 4) == 0)
			return reject(a, v, CNT_REJ_RESERVED_ATTR, "attrs",
				"attrs key '%.*s%s' is reserved: keys beginning 'cnt.' are written by cnt only",
				SHOW(raw->attr_keys[i]));

	t = cnt_defs_tenant(a->cfg.defs, raw->tenant_id.p, raw->tenant_id.n);
	if (t == NULL)
		return reject(a, v, CNT_REJ_UNKNOWN_TENANT, "tenant_id", "tenant '%.*s%s' is not declared",
			SHOW(raw->tenant_id));
	c = cnt_defs_counter(a->cfg.defs, raw->tenant_id.p, raw->tenant_id.n, raw->counter_id.p, raw->counter_id.n);
	if (c == NULL)
		return reject(a, v, CNT_REJ_UNKNOWN_COUNTER, "counter_id", "counter '%.*s%s' is not declared for tenant '%s'",
			SHOW(raw->counter_id), t->tenant_id);
	cv = cnt_counter_version_at(c, now);
	if (cv == NULL)
		return reject(a, v, CNT_REJ_UNKNOWN_COUNTER, "counter_id",
			"counter '%s/%s' has no version in effect at the ingest time", t->tenant_id, c->counter_id);
	if (raw->has_origin && raw->origin == CNT_ORIGIN_CLIENT) {
		if (!cv->client_writable)
			return reject(a, v, CNT_REJ_CLIENT_NOT_WRITABLE, "origin",
				"counter '%s/%s' v%d does not accept client-origin events", t->tenant_id, c->counter_id, cv->version);
		if (raw->subject.p == NULL || raw->subject.n != raw->member_ref.n ||
		    memcmp(raw->subject.p, raw->member_ref.p, raw->subject.n) != 0)
			return reject(a, v, CNT_REJ_SUBJECT_MISMATCH, "subject",
				raw->subject.p ? "a client-origin event's subject must be its member_ref" :
				"a client-origin event needs a subject (the authenticated member_ref)");
	}
	if ((f = (int)cnt_verify_event(a->cfg.keyring, raw, now, why, sizeof(why))) != CNT_SIG_OK) {
		static const cnt_reject_reason sig_reason[] = {0, CNT_REJ_UNSIGNED, CNT_REJ_BAD_SIGNATURE,
			CNT_REJ_UNKNOWN_KEY, CNT_REJ_EXPIRED_KEY, CNT_REJ_REVOKED_KEY};

		if (f == CNT_SIG_NOMEM)
			return -1;
		return reject(a, v, sig_reason[f], "signature", "%s", why);
	}
	if (cv->type == CNT_CTYPE_UNIQUE && raw->item.p == NULL)
		return reject(a, v, CNT_REJ_ITEM_REQUIRED, "item",
			"counter '%s/%s' counts distinct items: field 'item' is required", t->tenant_id, c->counter_id);
	if (!raw->has_delta && cv->type != CNT_CTYPE_UNIQUE)
		return reject(a, v, CNT_REJ_MISSING_FIELD, "delta",
			"field 'delta' is required for %s counter '%s/%s'", cnt_defs_ctype_name(cv->type), t->tenant_id, c->counter_id);
	/* A unique-type event without a delta is one observation. */
	delta = raw->has_delta ? raw->delta : 1;
	if (cv->monotonic && delta < 0)
		return reject(a, v, CNT_REJ_NOT_MONOTONIC, "delta",
			"delta %" PRId64 " would lower monotonic counter '%s/%s' v%d; only a retraction "
			"(cnt-retract) may", delta, t->tenant_id, c->counter_id, cv->version);
	if (delta < cv->bounds_lo || delta > cv->bounds_hi)
		return reject(a, v, CNT_REJ_DELTA_BOUNDS, "delta",
			"delta %" PRId64 " is outside [%" PRId64 ", %" PRId64 "] declared by counter '%s/%s' v%d",
			delta, cv->bounds_lo, cv->bounds_hi, t->tenant_id, c->counter_id, cv->version);
	/* event_time is any int64 and the limits may be huge: no signed
	 * arithmetic may overflow (distances are taken as uint64). */
	if (__builtin_sub_overflow(now, a->cfg.max_past_ms, &oldest))
		oldest = INT64_MIN;
	if (__builtin_add_overflow(now, a->cfg.max_future_ms, &latest))
		latest = INT64_MAX;
	if (raw->event_time_ms < oldest) {
		char ago[32], lim[32];

		return reject(a, v, CNT_REJ_TOO_OLD, "event_time",
			"event_time is %s before the ingest time; the limit is %s",
			show_ms(ago, (uint64_t)now - (uint64_t)raw->event_time_ms),
			show_ms(lim, (uint64_t)a->cfg.max_past_ms));
	}
	if (raw->event_time_ms > latest)
		return reject(a, v, CNT_REJ_IN_FUTURE, "event_time",
			"event_time is %" PRIu64 " ms after the ingest time; the limit is %" PRId64 " ms",
			(uint64_t)raw->event_time_ms - (uint64_t)now, a->cfg.max_future_ms);
	ie.item = raw->item;
	ie.nattrs = raw->nattrs;
	ie.attr_keys = raw->attr_keys;
	ie.attr_vals = raw->attr_vals;
	ie.event_time_ms = raw->event_time_ms;
	if (watch_gate(a, v, c, cv, &ie) != 0)
		return v->outcome;
	if (c->nfilters > 0 && (f = cnt_ivt_lists(a->ivt, c, &ie, why, sizeof(why))) >= 0)
		return reject(a, v, c->filters[f].kind == CNT_FILTER_USER_AGENT ? CNT_REJ_IVT_UA
			: CNT_REJ_IVT_ADDRESS, "attrs", "%s", why);

	ci = (size_t)(c - cnt_defs_counter_at(a->cfg.defs, 0));
	ti = (size_t)(t - cnt_defs_tenant_at(a->cfg.defs, 0));
	/* Quota before remembering the key: a shed event was not admitted,
	 * so its retry must not be taken for a duplicate. */
	if (cnt_seen_find(&a->seen, fp, &first)) {
		v->outcome = CNT_ADMIT_DUPLICATE;
		v->first = first;
		snprintf(v->msg, sizeof(v->msg), "idempotency_key '%.*s%s' was accepted earlier in this batch",
			SHOW(raw->idempotency_key));
		a->st.duplicate++;
		a->dup_by_counter[ci]++;
		return CNT_ADMIT_DUPLICATE;
	}
	if (c->nfilters > 0 && (f = cnt_ivt_rate(a->ivt, c, &ie, why, sizeof(why))) >= 0)
		return reject(a, v, CNT_REJ_IVT_RATE, NULL, "%s", why);
	if (a->cfg.members != NULL && cnt_members_check(a->cfg.members, t, raw->member_ref, &mfp))
		return reject(a, v, CNT_REJ_MEMBER_CAP, "member_ref",
			"member '%.*s%s' is new and tenant '%s' already has its member_cap of %" PRId64
			" members", SHOW(raw->member_ref), t->tenant_id, t->member_cap);
	if (a->cfg.live && t->event_quota_per_s > 0) {
		quota_slot *q = &a->quota[ti];
		int64_t sec = now >= 0 ? now / 1000 : -((-now + 999) / 1000);

		if (q->second != sec) {
			q->second = sec;
			q->used = 0;
		}
		if (q->used >= t->event_quota_per_s) {
			reject(a, v, CNT_REJ_QUOTA, NULL,
				"tenant '%s' is over its quota of %" PRId64 " events per second; retry after %" PRId64 " ms",
				t->tenant_id, t->event_quota_per_s, (sec + 1) * 1000 - now);
			v->retry_after_ms = (sec + 1) * 1000 - now;
			return CNT_ADMIT_REJECT;
		}
		q->used++;
	}
	added = cnt_seen_add(&a->seen, fp, tag, &first);
	if (added < 0 || (c->nfilters > 0 && cnt_ivt_rate_commit(a->ivt, c, &ie) != 0) ||
	    (a->cfg.members != NULL && cnt_members_add(a->cfg.members, t, mfp) != 0))
		return -1;

	for (int i = 0; i < 16; i++) {
		static const char hx[] = "0123456789abcdef";

		a->event_id[i] = hx[(fp.hi >> (60 - 4 * i)) & 15];
		a->event_id[16 + i] = hx[(fp.lo >> (60 - 4 * i)) & 15];
	}
	a->event_id[32] = 0;
	out->event_id.p = a->event_id;
	out->event_id.n = 32;
	out->idempotency_key = raw->idempotency_key;
	out->tenant_id = raw->tenant_id;
	out->counter_id = raw->counter_id;
	out->counter_version = cv->version;
	out->member_ref = raw->member_ref;
	out->item = raw->item;
	out->delta = delta;
	out->event_time = raw->event_time_ms;
	out->ingest_time = now;
	out->origin = raw->has_origin ? raw->origin : CNT_ORIGIN_BACKEND;
	out->subject = raw->subject;
	out->signature = raw->signature;
	out->retracts.p = NULL;
	out->retracts.n = 0;
	out->retraction_id.p = NULL;
	out->retraction_id.n = 0;
	out->nattrs = raw->nattrs;
	out->attr_keys = raw->attr_keys;
	out->attr_vals = raw->attr_vals;
	v->outcome = CNT_ADMIT_ACCEPT;
	a->st.accepted++;
	a->acc_by_counter[ci]++;
	return CNT_ADMIT_ACCEPT;
}

const cnt_admit_stats *cnt_admit_get_stats(const cnt_admit *a)
{
	return &a->st;
}

static int by_name(const void *x, const void *y, void *defs)
{
	const cnt_counter *a = cnt_defs_counter_at(defs, *(const size_t *)x);
	const cnt_counter *b = cnt_defs_counter_at(defs, *(const size_t *)y);
	int d = strcmp(a->tenant_id, b->tenant_id);

	return d ? d : strcmp(a->counter_id, b->counter_id);
}

int cnt_admit_each_counter(const cnt_admit *a,
	void (*fn)(void *ctx, const char *tenant, const char *counter, uint64_t accepted, uint64_t dups),
	void *ctx)
{
	size_t *idx = malloc((a->ncounters + 1) * sizeof(size_t));

	if (idx == NULL)
		return -1;
	for (size_t i = 0; i < a->ncounters; i++)
		idx[i] = i;
	qsort_r(idx, a->ncounters, sizeof(size_t), by_name, (void *)(uintptr_t)a->cfg.defs);
	for (size_t i = 0; i < a->ncounters; i++) {
		const cnt_counter *c = cnt_defs_counter_at(a->cfg.defs, idx[i]);

		fn(ctx, c->tenant_id, c->counter_id, a->acc_by_counter[idx[i]], a->dup_by_counter[idx[i]]);
	}
	free(idx);
	return 0;
}

static cnt_slice val_slice(const cnt_val *v)
{
	cnt_slice s = {NULL, 0};

	if (v->type == CNT_T_UNION)
		v = v->u.v;
	if (v->type == CNT_T_STRING || v->type == CNT_T_BYTES) {
		s.p = v->u.s ? (const char *)v->u.s : "";
		s.n = v->n;
	}
	return s;
}

void cnt_raw_from_val(const cnt_val *v, cnt_raw_event *raw, cnt_slice *keys, cnt_slice *vals)
{
	const cnt_val *f = v->u.v, *d = &f[4], *m = &f[10];

	/* Field order of raw_event.avsc: idempotency_key, tenant_id,
	 * counter_id, member_ref, delta, item, event_time, origin, subject,
	 * signature, attrs. */
	memset(raw, 0, sizeof(*raw));
	raw->idempotency_key = val_slice(&f[0]);
	raw->tenant_id = val_slice(&f[1]);
	raw->counter_id = val_slice(&f[2]);
	raw->member_ref = val_slice(&f[3]);
	if (d->type == CNT_T_UNION)
		d = d->u.v;
	raw->has_delta = d->type == CNT_T_LONG;
	raw->delta = raw->has_delta ? d->u.i : 0;
	raw->item = val_slice(&f[5]);
	raw->has_event_time = 1;
	raw->event_time_ms = f[6].u.i;
	raw->has_origin = 1;
	raw->origin = (int)f[7].n;
	raw->subject = val_slice(&f[8]);
	raw->signature = val_slice(&f[9]);
	for (uint32_t i = 0; i < m->n; i++) {
		keys[i] = val_slice(&m->u.v[2 * i]);
		vals[i] = val_slice(&m->u.v[2 * i + 1]);
	}
	raw->nattrs = m->n;
	raw->attr_keys = keys;
	raw->attr_vals = vals;
}
