/*
 * hold_decide.h - deciding holds (cnt-hold(1), cnt-hold(5)): listing the
 * events cnt-ingest held, clearing them into the log or rejecting them
 * into a retraction, with who decided and when.
 *
 * The hold files are never edited: a decision is a line of the decisions
 * ledger, an append-only file of JSON lines, each chained to the one
 * before by "prev", the XXH3-128 of the previous line's bytes without its
 * newline (32 zeros on the first), exactly as the retraction ledger is
 * (cnt-retraction(5)).  One line per hold decided:
 *
 *   {"hold_id":"h-...","event_id":"...","tenant_id":"acme","counter_id":"pts",
 *    "member_ref":"m1","signal":"rate","decision":"cleared","decided_by":"ana",
 *    "decided_at":"2026-11-30T12:00:00.000Z","retraction_id":null,"prev":"..."}
 *
 * A hold's state is pending until the ledger has a line for it, then
 * cleared or rejected; a hold is decided once, and a ledger naming one
 * twice is refused as corrupt.  The same event held by two runs has the
 * same hold id (held.h): it is one hold, listed and decided once.
 *
 * Clearing releases each event as cnt-ingest admitted it (event id,
 * idempotency key, counter version, event time, attrs, ...) with one
 * change: its ingest_time is the decision time, because the event enters
 * the counters then.  A bucket's on-time value is final once its
 * lateness horizon has passed; a release before then counts on time in
 * its event-time bucket, a release after it counts in that bucket's late
 * columns, as any event arriving then would.  The hold file and the
 * ledger keep the original ingest time (held_at).
 *
 * Rejecting appends one retraction record (cause fraud, scope event) for
 * the events to the retraction ledger (retract.h), leaving out events the
 * ledger already lists; the events were never in the log, so there is
 * nothing to compensate.
 */
#ifndef CNT_CORRECT_HOLD_DECIDE_H
#define CNT_CORRECT_HOLD_DECIDE_H

#include <stddef.h>
#include <stdint.h>

#include "avro/container.h"
#include "base/err.h"
#include "model/defs.h"

typedef enum { CNT_HOLD_PENDING, CNT_HOLD_CLEARED, CNT_HOLD_REJECTED } cnt_hold_state;

/* "pending", "cleared" or "rejected". */
const char *cnt_hold_state_name(cnt_hold_state s);
/* Parses a state name: 0, or -1 when it is none. */
int cnt_hold_state_parse(const char *name, cnt_hold_state *s);

/* Which holds.  Every field set must match (an AND); ids, when given,
 * name holds by hold_id. */
typedef struct cnt_hold_sel {
	const char *const *ids;
	size_t nids;
	const char *tenant, *counter, *member;   /* NULL: any */
	int has_signal, has_state;
	cnt_hold_kind signal;
	cnt_hold_state state;
} cnt_hold_sel;

/* The decisions ledger, loaded. */
typedef struct cnt_decisions cnt_decisions;

/* Reads the ledger at fd (may be empty), checking the chain and that no
 * hold is decided twice.  NULL with err set (a line that is not a
 * decision, a broken chain: CNT_ERR_DATA; out of memory). */
cnt_decisions *cnt_decisions_load(int fd, const char *name, cnt_err *err);
void cnt_decisions_free(cnt_decisions *d);

/* The list: for each hold of the hold files (fds[i] named names[i]) that
 * sel selects, in file order, one line through line(ctx, text, n): a
 * JSON object (json) or a table row, after a header row.  Strings of the
 * files are escaped (JSON) or have control bytes shown as \xNN (table).
 * *listed gets the number of holds listed.  0, or -1 with err set. */
int cnt_hold_list(const int *fds, const char *const *names, size_t n, const cnt_decisions *d,
	const cnt_hold_sel *sel, int json, void (*line)(void *ctx, const char *text, size_t n), void *ctx,
	uint64_t *listed, cnt_err *err);

typedef struct cnt_hold_decision {
	int reject;                 /* 0 clear, 1 reject */
	const char *by;             /* who decided */
	int64_t at;                 /* when, epoch ms */
	const char *authority;      /* reject: the retraction record's authority */
} cnt_hold_decision;

typedef struct cnt_hold_decide_result {
	uint64_t holds;             /* holds read (each hold id once) */
	uint64_t decided;           /* holds decided now */
	uint64_t retracted;         /* reject: event ids in the retraction record */
	char *decision_lines;       /* the ledger lines to append (malloc'd) */
	char *retraction_line;      /* reject: the record, or NULL (malloc'd) */
	char retraction_id[40];
} cnt_hold_decide_result;

/* Decides the pending holds sel selects (sel->has_state is ignored).
 * Refused with CNT_ERR_DATA, before anything is written: an id naming no
 * hold ("hold 'h-..' is in no hold file"), an id naming a hold already
 * decided ("hold 'h-..' was already cleared by ana at ..."), a selection
 * with no pending hold.  Clear: writes the released events to seg (an
 * event writer, finished), in file order.  Reject: reads the retraction
 * ledger at rl_fd and prepares its record.  The caller appends the lines
 * with cnt_retract_ledger_append (reject: the retraction record first),
 * then publishes the segment.
 * 0, or -1 with err set. */
int cnt_hold_decide_run(const int *fds, const char *const *names, size_t n, const cnt_decisions *d,
	const cnt_hold_sel *sel, const cnt_hold_decision *dec, cnt_writer *seg, int rl_fd,
	const char *rl_name, cnt_hold_decide_result *res, cnt_err *err);

#endif
