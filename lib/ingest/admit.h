/*
 * admit.h - admission: the checks cnt-ingest applies to each raw event,
 * and the log record it makes of an accepted one (cnt-ingest(1)).
 *
 * Checks, in this order; the first that fails is the reason reported:
 *   malformed            the record is not an object of the contract's shape
 *   missing_field        a required field is absent (field named)
 *   bad_field            a field has the wrong type, length or format
 *   reserved_attr        an attrs key begins with "cnt." (reserved for what
 *                        cnt itself writes, such as cnt.sample)
 *   unknown_tenant       tenant_id is not declared
 *   unknown_counter      counter_id is not declared for the tenant, or no
 *                        version of it is in effect at the ingest time
 *   client_not_writable  origin client, and the counter version does not
 *                        allow client writes
 *   subject_mismatch     origin client, and subject is absent or is not
 *                        member_ref
 *   unsigned, bad_signature, unknown_key, revoked_key, expired_key
 *                        the signature's verdict (verify.h): a client-origin
 *                        event must be signed under a key of cfg.keyring;
 *                        a backend-origin one, when it carries a signature
 *   item_required        a unique-type counter, and item is absent
 *   not_monotonic        the counter version is monotonic and delta is
 *                        negative (only a retraction lowers it)
 *   delta_out_of_bounds  delta outside the counter version's bounds
 *   too_old              event_time earlier than ingest time - max past
 *   in_future            event_time later than ingest time + max future
 *   bad_watch_time       the counter version has a watch-time gate and the
 *                        event's attrs[watch_attr] is absent or not a
 *                        decimal integer (digits only)
 *   below_watch_time     ... and it is below the version's min_watch_ms
 *   ivt_user_agent       a user_agent filter of the counter matches
 *   ivt_address          an address filter of the counter matches (the
 *                        first filter in declaration order that matches
 *                        gives the reason; ivt.h)
 *   (duplicate)          (tenant, counter, idempotency_key) was accepted
 *                        earlier in this batch: a duplicate, not a reject
 *   ivt_rate             a rate filter: the viewer is over its rate (after
 *                        the duplicate check, so that a retried beacon is a
 *                        duplicate and never counts as more traffic)
 *   quota_exceeded       live traffic only (cfg.live): the tenant already
 *                        had event_quota_per_s events accepted in this
 *                        ingest second; shed, with a retry hint, never
 *                        queued
 *   member_cap           cfg.members is given, the tenant declares a
 *                        member_cap, member_ref is not one of its members
 *                        and it already has member_cap of them (cap.h)
 *                        (checked before quota_exceeded; a member is
 *                        added only when its event is accepted, so a shed
 *                        or rejected event never takes a member's place)
 * A duplicate of a rejected or shed event is judged afresh, since nothing
 * of the first was admitted.
 *
 * The quota guards a live service against a flood from one tenant; it is
 * not a property of the events.  A replay or backfill of events that were
 * once live must admit them all, whatever their number per second, so the
 * quota applies only when the caller says the input is live traffic.
 */
#ifndef CNT_ADMIT_H
#define CNT_ADMIT_H

#include <stdint.h>

#include "model/defs.h"
#include "model/event.h"
#include "base/fpset.h"
#include "ingest/rawevent.h"
#include "avro/value.h"

typedef enum {
	CNT_REJ_MALFORMED, CNT_REJ_MISSING_FIELD, CNT_REJ_BAD_FIELD,
	CNT_REJ_UNKNOWN_TENANT, CNT_REJ_UNKNOWN_COUNTER,
	CNT_REJ_CLIENT_NOT_WRITABLE, CNT_REJ_SUBJECT_MISMATCH,
	CNT_REJ_ITEM_REQUIRED, CNT_REJ_DELTA_BOUNDS, CNT_REJ_TOO_OLD,
	CNT_REJ_IN_FUTURE, CNT_REJ_QUOTA,
	CNT_REJ_BAD_WATCH, CNT_REJ_BELOW_WATCH, CNT_REJ_IVT_UA, CNT_REJ_IVT_ADDRESS,
	CNT_REJ_IVT_RATE,
	CNT_REJ_NOT_MONOTONIC, CNT_REJ_MEMBER_CAP,
	CNT_REJ_UNSIGNED, CNT_REJ_BAD_SIGNATURE, CNT_REJ_UNKNOWN_KEY, CNT_REJ_EXPIRED_KEY,
	CNT_REJ_REVOKED_KEY,
	CNT_REJ_RESERVED_ATTR,
	CNT_REJ_COUNT
} cnt_reject_reason;

/* The reason's code as written in the reject stream ("too_old", ...). */
const char *cnt_reject_name(cnt_reject_reason r);

enum { CNT_ADMIT_ACCEPT, CNT_ADMIT_REJECT, CNT_ADMIT_DUPLICATE };

typedef struct cnt_verdict {
	int outcome;                 /* CNT_ADMIT_* */
	cnt_reject_reason reason;    /* when rejected */
	const char *field;           /* the field at fault, or NULL */
	char msg[320];               /* one line saying what and why */
	int64_t retry_after_ms;      /* quota_exceeded: when to retry */
	uint64_t first;              /* duplicate: the accepted event's tag */
} cnt_verdict;

/* Limits of the contract (cnt-event(5)). */
#define CNT_KEY_MAX 128          /* idempotency_key, ids: bytes */
#define CNT_REF_MAX 256          /* member_ref, item, subject: bytes */
#define CNT_SIGNATURE_MAX 4096
#define CNT_ATTRS_MAX 64         /* entries */
#define CNT_ATTR_KEY_MAX 64
#define CNT_ATTR_VAL_MAX 256

typedef struct cnt_admit_cfg {
	const cnt_defs *defs;
	int64_t now_ms;              /* fixed ingest time, or INT64_MIN: the clock */
	int64_t max_past_ms;         /* default 7 days */
	int64_t max_future_ms;       /* default 60 s */
	size_t expected;             /* events expected, to size the key table */
	int live;                    /* live traffic: tenants' quotas apply */
	struct cnt_members *members; /* members per tenant (cap.h): each admitted
				      * event's member is added; the caps apply.
				      * NULL: neither */
	const struct cnt_keyring *keyring; /* signing keys (verify.h), or NULL */
} cnt_admit_cfg;

typedef struct cnt_admit cnt_admit;

/* Returns an admission context, or NULL with err set: out of memory, or
 * a list file of a filter that cannot be read or is garbled (ivt.h). */
cnt_admit *cnt_admit_new(const cnt_admit_cfg *cfg, cnt_err *err);
void cnt_admit_free(cnt_admit *a);

/* Judges one raw event.  tag identifies it for duplicate reports (where
 * the caller read it; at most CNT_SEEN_VAL_MAX, ingest/seen.h).  On CNT_ADMIT_ACCEPT, *out is the
 * log record; its event_id lives in a until the next call.  Returns the
 * outcome (also in v->outcome), or -1 when out of memory. */
int cnt_admit_event(cnt_admit *a, const cnt_raw_event *raw, uint64_t tag,
	cnt_event *out, cnt_verdict *v);

/* The fingerprint of raw's (tenant, counter, idempotency key), with its
 * table slot prefetched.  A caller that has several events in hand calls
 * this for all of them first and then cnt_admit_event_fp() for each, so
 * the duplicate checks' memory accesses overlap.  raw's three fields may
 * be absent (their fingerprint is then never used). */
cnt_fp cnt_admit_prefetch(cnt_admit *a, const cnt_raw_event *raw);

/* cnt_admit_prefetch() in two: the fingerprint alone (it reads nothing
 * but raw: any thread may compute it), and the prefetch of its slot. */
cnt_fp cnt_admit_fp(const cnt_raw_event *raw);
/* What cnt_admit_fp() hashes, appended to b: cnt_fp_of_joined() of those
 * bytes is cnt_admit_fp(raw).  A caller with many events joins them all
 * first and hashes them after, so that the hash's loads do not wait on
 * the stores that just wrote its input.  0, or -1 out of memory. */
int cnt_admit_fp_key(const cnt_raw_event *raw, cnt_buf *b);
void cnt_admit_prefetch_fp(cnt_admit *a, cnt_fp fp);

/* cnt_admit_event() with the fingerprint from cnt_admit_prefetch(). */
int cnt_admit_event_fp(cnt_admit *a, const cnt_raw_event *raw, cnt_fp fp, uint64_t tag,
	cnt_event *out, cnt_verdict *v);

/* Records a reject found before admission (a malformed line or field). */
void cnt_admit_count_reject(cnt_admit *a, cnt_reject_reason r);

typedef struct cnt_admit_stats {
	uint64_t in, accepted, rejected, duplicate;
	uint64_t by_reason[CNT_REJ_COUNT];
} cnt_admit_stats;

const cnt_admit_stats *cnt_admit_get_stats(const cnt_admit *a);

/* Calls fn for each (tenant, counter) with its accepted and duplicate
 * counts, in a stable order (sorted by tenant, then counter).  Returns 0,
 * or -1 when out of memory (fn is then not called). */
int cnt_admit_each_counter(const cnt_admit *a,
	void (*fn)(void *ctx, const char *tenant, const char *counter, uint64_t accepted, uint64_t dups),
	void *ctx);

/* Fills *raw from a record decoded with the cnt.RawEvent schema
 * (lib/model/schemas/raw_event.avsc).  keys/vals must hold v's attrs (the map's
 * n entries); slices point into v's storage. */
void cnt_raw_from_val(const cnt_val *v, cnt_raw_event *raw, cnt_slice *keys, cnt_slice *vals);

#endif
