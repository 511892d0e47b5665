/*
 * auditlog.h - the audit ledger (cnt-audit(1), cnt-audit(5)): one line per
 * run of the batch invalid-traffic audit over one (tenant, counter), saying
 * up to which event time the archive has been audited.
 *
 * It is a hash-chained JSON-lines ledger (ledger.h): each line is an
 * object, "prev" the XXH3-128 of the line before (32 zeros first):
 *
 *   {"audit_id":"a-...","tenant_id":"kahani","counter_id":"views",
 *    "through":"2026-06-09T00:00:00.000Z","through_ms":1780963200000,
 *    "audited_at":"2026-06-09T03:00:00.000Z","authority":"ivt-audit v3",
 *    "examined":120345,"flagged":412,"retraction_id":"r-..."|null,
 *    "prev":"..."}
 *
 * Meaning: every event of (tenant, counter) with event_time < through_ms
 * has been audited; the events the audit found invalid were retracted by
 * the retraction named (cause fraud), or none was found (null).  The
 * verified count of (tenant, counter) is the count over events with
 * event_time < through_ms of the LATEST line for that pair, after the
 * retractions of all audits up to it.  "through" never goes backwards
 * for a pair: an append whose through_ms is below the pair's latest is
 * refused, so a verified count only ever covers more of the archive.
 */
#ifndef CNT_CORRECT_AUDITLOG_H
#define CNT_CORRECT_AUDITLOG_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/fpset.h"

/* One line of the ledger; strings borrowed from the loaded ledger. */
typedef struct cnt_audit_entry {
	const char *audit_id, *tenant_id, *counter_id;
	int64_t through_ms, audited_at_ms;
	const char *authority;
	int64_t examined, flagged;
	const char *retraction_id; /* NULL when the audit retracted nothing */
} cnt_audit_entry;

typedef struct cnt_auditlog cnt_auditlog;

/* Reads the ledger at fd (may be empty), checking the chain, the fields
 * of every line, that audit ids are unique and that "through" never goes
 * backwards for a pair.  name is for messages.  NULL with err set
 * (CNT_ERR_DATA naming the line; CNT_ERR_NOMEM). */
cnt_auditlog *cnt_auditlog_load(int fd, const char *name, cnt_err *err);
/* The same for a path; a file that does not exist is an empty ledger
 * when missing_ok, else an error. */
cnt_auditlog *cnt_auditlog_open(const char *path, int missing_ok, cnt_err *err);
void cnt_auditlog_free(cnt_auditlog *l);

size_t cnt_auditlog_count(const cnt_auditlog *l);
const cnt_audit_entry *cnt_auditlog_at(const cnt_auditlog *l, size_t i);
/* The latest entry for (tenant, counter), or NULL when none. */
const cnt_audit_entry *cnt_auditlog_latest(const cnt_auditlog *l, const char *tenant,
	const char *counter);

/* The line (with its newline, NUL-terminated, heap; caller frees) that
 * appends e to l: audit_id is derived when e->audit_id is NULL ("a-" and
 * 32 hex digits of XXH3-128 over tenant, counter, through, audited_at,
 * authority and retraction id).  NULL with err set when e is invalid
 * (empty ids or authority, negative counts, through below the pair's
 * latest, a duplicate audit id: CNT_ERR_DATA) or out of
 * memory. */
char *cnt_auditlog_line(const cnt_auditlog *l, const cnt_audit_entry *e, cnt_err *err);

/* Appends line at the end of the ledger open at fd (O_APPEND) in one
 * write(2), then fsync(2).  0, or -1 with err (CNT_ERR_IO). */
int cnt_auditlog_append(int fd, const char *name, const char *line, cnt_err *err);

#endif
