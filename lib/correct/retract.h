/*
 * retract.h - retraction (cnt-retract(1), cnt-retraction(5)): taking
 * contributions out of the counters without editing anything in place.
 *
 * A retraction selects events of the log (by event id or idempotency
 * key, by member, or by a campaign filter), and for each one not already
 * retracted writes a compensating cnt.CountingEvent:
 *
 *   event_id         XXH3-128 of (tenant_id, counter_id, idempotency_key)
 *                    as at admission (cnt-event(5)), so a rerun gives the
 *                    same id;
 *   idempotency_key  "retract:" followed by the original's event_id;
 *   delta            the original's delta negated (an original delta of
 *                    -2^63 has no negation: that event is refused);
 *   retracts         the original's event_id;
 *   retraction_id    the retraction's id;
 *   everything else  the original's: tenant, counter, version, member,
 *                    item, event_time and ingest_time (so the
 *                    compensation falls in the original's bucket and is
 *                    late exactly when it was), origin, subject,
 *                    signature, attrs.
 *
 * The retraction record goes to an append-only ledger of JSON lines, each
 * chained to the one before by "prev", the XXH3-128 of the previous line's
 * bytes (32 zeros on the first).  Appending is one write(2) of the whole
 * line to a descriptor opened O_APPEND, then fsync(2); nothing is ever
 * rewritten.
 *
 * An event is already retracted when the ledger lists it or a compensation
 * naming it is in the log; it is then not retracted again.
 */
#ifndef CNT_CORRECT_RETRACT_H
#define CNT_CORRECT_RETRACT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "avro/container.h"
#include "base/buf.h"
#include "base/err.h"
#include "base/fpset.h"
#include "base/slice.h"
#include "model/defs.h"

typedef enum { CNT_SCOPE_EVENT = 0, CNT_SCOPE_MEMBER, CNT_SCOPE_CAMPAIGN } cnt_retract_scope;

/* What to retract.  Every field set must match (an AND); keys, when
 * given, name events by event_id, or by idempotency_key within the
 * tenant and counter when those are set. */
typedef struct cnt_retract_sel {
	cnt_retract_scope scope;
	const char *const *keys;      /* event ids or idempotency keys */
	size_t nkeys;
	const char *tenant, *counter, *member;  /* NULL: any */
	int has_from, has_to;
	int64_t from, to;              /* event_time in [from, to) */
	const char *const *attr_k, *const *attr_v;  /* attrs[k] == v, each */
	size_t nattrs;
} cnt_retract_sel;

/* The record (cnt-retraction(5)). */
typedef struct cnt_retract_req {
	const char *retraction_id;     /* NULL: derived (see cnt_retract_run) */
	const char *cause;             /* deleted, banned, dq or fraud */
	const char *requester, *authority;
	int64_t created_at;            /* epoch ms */
} cnt_retract_req;

/* What a run did. */
typedef struct cnt_retract_result {
	uint64_t in;                   /* events read from the log */
	uint64_t matched;              /* events selected (not compensations) */
	uint64_t retracted;            /* compensations written */
	uint64_t already;              /* selected but already retracted */
	uint64_t not_found;            /* keys naming no event of the log */
	uint64_t refused;              /* events whose delta cannot be negated */
	uint64_t ledger_records;       /* 1 when a record is to be appended, else 0 */
	char *ledger_line;             /* that record, a NUL-terminated line ending
	                                * in a newline (malloc'd: the caller frees
	                                * it); NULL when nothing was retracted */
	char retraction_id[40];
} cnt_retract_result;

/* Appends the keys of a list file at fd (one a line; a trailing CR and
 * blank lines dropped) to *keys (grown with realloc; each key malloc'd)
 * and *n.  0, or -1 with err set (a read error, out of memory). */
int cnt_retract_keys_read(int fd, const char *name, char ***keys, size_t *n, cnt_err *err);

/* Parses a scope name into *s.  0, or -1 when it is none. */
int cnt_retract_scope_parse(const char *name, cnt_retract_scope *s);

/* Whether s is one of the causes.  1 or 0. */
int cnt_retract_cause_ok(const char *s);
/* The scope's name. */
const char *cnt_retract_scope_name(cnt_retract_scope s);

/* Reads the ledger at fd (may be empty) and adds every event id it lists
 * to done (an erasure record's too: cnt-retraction(5)), checking the chain.  *last is set to the fingerprint of the
 * last line (zero for an empty ledger).  0, or -1 with err set (a line
 * that is not a record, or a broken chain: CNT_ERR_DATA). */
int cnt_retract_ledger_load(int fd, const char *name, cnt_fpset *done, cnt_fp *last, cnt_err *err);

/* Retracts: reads the ledger at ledger_fd (when >= 0) and the log inputs
 * (fds[i] named names[i]), writes the compensations to out (an event
 * writer, finished) and, when at least one event is newly retracted,
 * prepares the ledger record in res->ledger_line, chained to the ledger's
 * last line.  The caller appends it (cnt_retract_ledger_append) once the
 * compensations are safely written, and only then publishes them: nothing
 * that can run out of memory comes between.  note(ctx, key, why) is called for each key
 * that names no event ("not in the log") and each event refused (its id,
 * which may hold any bytes).  The
 * derived retraction_id is "r-" and 32 hex digits of XXH3-128 over cause,
 * requester, authority, created_at and the retracted event ids.
 * 0, or -1 with err set. */
int cnt_retract_run(const int *fds, const char *const *names, size_t n,
	const cnt_retract_sel *sel, const cnt_retract_req *req,
	int ledger_fd, const char *ledger_name, cnt_writer *out,
	void (*note)(void *ctx, cnt_slice key, const char *why), void *ctx,
	cnt_retract_result *res, cnt_err *err);

/* Appends line (NUL-terminated, ending in a newline) to the ledger at fd,
 * opened O_APPEND, in one write(2), then fsync(2).  Allocates nothing.
 * 0, or -1 with err set (CNT_ERR_IO). */
int cnt_retract_ledger_append(int fd, const char *name, const char *line, cnt_err *err);

/* The counters a retraction's events belong to: the distinct (tenant,
 * counter) pairs, which its record lists as "counters" (cnt-retraction(5))
 * so that cnt-seal correct cites it only on those counters' boards, even
 * when its selector names no tenant or counter.  Few: a linear set. */
typedef struct cnt_retract_ctr {
	char *tenant, *counter;        /* tn and cn bytes (and a NUL) */
	size_t tn, cn;
} cnt_retract_ctr;

typedef struct cnt_retract_ctrs {
	cnt_retract_ctr *v;
	size_t n;
	size_t last;                   /* the pair found last: events come in runs */
} cnt_retract_ctrs;

/* Adds the pair (t, c) when it is new.  0, or -1 (out of memory). */
int cnt_retract_ctrs_add(cnt_retract_ctrs *s, cnt_slice t, cnt_slice c);
void cnt_retract_ctrs_release(cnt_retract_ctrs *s);
/* The pairs as a record's "counters": an array of objects {"tenant_id",
 * "counter_id"} in byte order of (tenant, counter), so that the same
 * events give the same line.  NULL: out of memory. */
json_t *cnt_retract_ctrs_json(const cnt_retract_ctrs *s);

/* The record line (NUL-terminated, ending in a newline) of a retraction
 * of the events ids[0..n) (n >= 1) of the counters ctrs for req, with the
 * selector of sel, chained to prev (the fingerprint of the ledger's last
 * line, from cnt_retract_ledger_load), into *line (malloc'd: the caller
 * frees it).  For records made outside cnt_retract_run (cnt-hold
 * reject).  0, or -1 with err set (out of memory). */
int cnt_retract_record_line(const cnt_retract_req *req, const char *retraction_id,
	const cnt_retract_sel *sel, const char *const *ids, size_t n, const cnt_retract_ctrs *ctrs,
	cnt_fp prev, char **line, cnt_err *err);
/* The retraction id cnt_retract_run derives for req and the retracted
 * event ids ids[0..n), in that order, into out.  0, or -1 (out of memory). */
int cnt_retract_derive_id(const cnt_retract_req *req, const char *const *ids, size_t n, char out[40]);

/* ---- rebuilding the buckets a retraction touches ---- */

typedef struct cnt_rebuild_result {
	uint64_t retracted;            /* originals named by compensations in the log */
	uint64_t touched;              /* bucket keys they fall in */
	uint64_t rebuilt_events;       /* events counted again into those keys */
	uint64_t kept;                 /* bucket records copied unchanged */
	uint64_t dropped;              /* bucket records of touched keys, replaced */
} cnt_rebuild_result;

/* Rebuilds the bucket file read from buckets_fd into out (a bucket
 * writer): every record whose key holds an event retracted in the log (a
 * compensation in the log names it) is replaced by the events of that
 * key in the log, windowed with defs and shards as cnt-window does, less
 * retracted events and compensations; every other record is kept.  The
 * log inputs are read twice, so they must be seekable files.  When the
 * bucket file is the full build of the log's originals (with or without
 * compensations merged in), the output is byte for byte the full build
 * of the log without the retracted events.  0, or -1 with err set. */
int cnt_retract_rebuild(const int *fds, const char *const *names, size_t n,
	const cnt_defs *defs, const char *defs_name, uint32_t shards,
	int buckets_fd, const char *buckets_name, cnt_writer *out,
	cnt_rebuild_result *res, cnt_err *err);

#endif
