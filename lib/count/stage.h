/*
 * stage.h - what the event stages of counting (cnt-dedup, cnt-window)
 * share: the declared counter version an event is counted under, the
 * stream of events rejected for naming none, and the loop that feeds one
 * input's events to a stage.
 *
 * An event names its tenant, counter and counter version; a stage counts
 * it only when the definitions declare all three.  Otherwise it is
 * rejected, never dropped silently, with a reason and the field at fault
 * (cnt-dedup(1), cnt-window(1)):
 *
 *   reason            field             when
 *   unknown_tenant    tenant_id         the tenant is not declared
 *   unknown_counter   counter_version   the tenant is, but not the counter
 *                                       or this version of it
 *   not_monotonic     delta             the version is monotonic, delta is
 *                                       negative and the event is not a
 *                                       compensation (retracts is null)
 */
#ifndef CNT_COUNT_STAGE_H
#define CNT_COUNT_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "model/defs.h"
#include "model/event.h"

/* What an event is counted under: pointers into the definitions, and the
 * positions of tenant and counter in them (for per-counter statistics).
 * After a reject for an unknown tenant, tenant is NULL. */
typedef struct cnt_count_target {
	const cnt_tenant *tenant;
	const cnt_counter *counter;
	const cnt_counter_version *version;
	size_t tenant_index, counter_index;
} cnt_count_target;

/* Why an event was not counted. */
typedef struct cnt_count_reject {
	const char *reason;   /* "unknown_tenant", "unknown_counter", "not_monotonic" (static) */
	const char *field;    /* "tenant_id", "counter_version", "delta" (static) */
	char msg[400];        /* naming the ids (at most 128 bytes of each) and the definitions */
} cnt_count_reject;

/* Looks up e's tenant, counter and counter version in defs.  Returns 0
 * with *t filled, or 1 with *rej filled (t->version is set only for
 * not_monotonic) (defs_name is the definitions
 * file as the user named it, for the message).  Never fails otherwise. */
int cnt_count_lookup(const cnt_defs *defs, const char *defs_name, const cnt_event *e,
	cnt_count_target *t, cnt_count_reject *rej);

/* a / b rounded to 6 decimals, 0 when b is 0: ratios as --stats gives
 * them (late_ratio, dedup_hit_rate), so equal counts print equal text. */
double cnt_count_ratio(uint64_t a, uint64_t b);

/*
 * The rejects stream: either JSON lines (cnt(7), REJECT STREAMS:
 * input, record, reason, field, message, event_id), buffered and written
 * in pieces of 64 KiB, or one text line per reject,
 *	<prefix>: '<input>' record <n>: rejected (<reason>): <message>
 * written at once, with control characters and bytes that are not
 * printable ASCII shown as \xNN (ids come from files we distrust; a
 * terminal must not receive them raw).
 */
typedef struct cnt_rejects {
	int fd;
	const char *name;     /* of fd, for error messages */
	const char *prefix;   /* text lines: the tool's name; NULL: JSON lines */
	cnt_buf buf;
} cnt_rejects;

/* Sets r up to write to fd (not owned). */
void cnt_rejects_init(cnt_rejects *r, int fd, const char *name, const char *text_prefix);
/* Adds the reject of e, record `record` of input.  0, or -1 with err set
 * (memory; a write, kind as cnt_err_write). */
int cnt_rejects_put(cnt_rejects *r, const char *input, uint64_t record, const cnt_event *e,
	const cnt_count_reject *why, cnt_err *err);
/* Writes what is buffered.  0 or -1 with err set. */
int cnt_rejects_flush(cnt_rejects *r, cnt_err *err);
void cnt_rejects_release(cnt_rejects *r);

/* A stage's handling of one event (cnt_window_event, cnt_dedup_filter_event
 * have this shape): 0 taken, 1 rejected (*why filled), -1 with err set. */
typedef int (*cnt_count_stage)(void *stage, const cnt_event *e, const uint8_t *raw, size_t rawn,
	cnt_count_reject *why, cnt_err *err);

/* Reads every event of the input on fd (name for messages; fd is not
 * closed) and hands each to stage, with its Avro bytes when the reader
 * has them; rejects go to rejects.  progress, when not NULL, is called
 * with 1 for every event read.  Returns 0, or -1 with err set (the
 * input, the stage, the rejects stream). */
int cnt_count_input(int fd, const char *name, cnt_count_stage stage, void *ctx, cnt_rejects *rejects,
	void (*progress)(uint64_t), cnt_err *err);

#endif
