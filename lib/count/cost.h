/*
 * cost.h - what a tenant's traffic costs (cnt-cost(1); cnt-definitions(5),
 * "UNIT COSTS"): the events of an archive, per tenant, counter and
 * version, priced at the version's unit_cost_per_m (its own, or its type's
 * published price) and at every type's published price, so that a tenant
 * sees exact against approximate on its own traffic.
 *
 * An archived event stands for w = 2^L offered events, L its attrs
 * "cnt.sample" (1 to 20, decimal, no sign or leading zero; absent: L = 0,
 * w = 1): an approximate counter keeps one event in 2^L and archives it
 * with its level.  archived counts events read, represented the sum of w,
 * and a cost is represented / 1e6 * price.  A compensating event (it
 * carries "retracts", cnt-retract(1)) is not traffic: it is counted in
 * compensations and costs nothing.
 */
#ifndef CNT_COST_H
#define CNT_COST_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "model/defs.h"
#include "model/event.h"

#define CNT_COST_TYPES 16   /* room for every counter type */

typedef struct cnt_cost_row {
	const cnt_counter *counter;
	const cnt_counter_version *version;
	uint64_t archived;       /* events read (compensations not included) */
	uint64_t represented;    /* sum of their weights */
	uint64_t compensations;  /* compensating events read */
	double cost;             /* represented / 1e6 * version->unit_cost_per_m */
	/* at[t]: the cost at type t's published price, when priced[t]. */
	double at[CNT_COST_TYPES];
	int priced[CNT_COST_TYPES];
} cnt_cost_row;

typedef struct cnt_cost cnt_cost;

/* A report over the counters of d (which must outlive it), NULL with err
 * set when out of memory. */
cnt_cost *cnt_cost_new(const cnt_defs *d, cnt_err *err);
void cnt_cost_free(cnt_cost *c);

/* The weight of e: 1 and *w = 2^L, or 0 with why (n bytes) saying what is
 * wrong with its attrs "cnt.sample". */
int cnt_cost_weight(const cnt_event *e, uint64_t *w, char *why, size_t n);

/* Counts one event: 0, or 1 when it is not counted (an undeclared tenant,
 * counter or version, or a bad cnt.sample), why (n bytes) saying why and
 * *reason its code ("unknown_counter", "bad_sample"). */
int cnt_cost_add(cnt_cost *c, const cnt_event *e, const char **reason, char *why, size_t n);

/* Reads the events file fd (named name, not closed) to its end, counting
 * each event; an event not counted is passed to rej (its 1-based record
 * number in the file, the reason's code, a message) and counted in
 * *rejected.  Returns 0, or -1 with err set (not an events file, a bad
 * record, out of memory). */
int cnt_cost_read_fd(cnt_cost *c, int fd, const char *name,
	void (*rej)(void *ctx, const char *name, uint64_t record, const char *reason, const char *msg),
	void *ctx, uint64_t *rejected, cnt_err *err);

/* Calls fn for each version that has events (archived or compensations),
 * sorted by tenant, counter and version; only tenant's when tenant is not
 * NULL.  Returns the number of rows. */
size_t cnt_cost_each(const cnt_cost *c, const char *tenant,
	void (*fn)(void *ctx, const cnt_cost_row *r), void *ctx);

/* Every row's counts and cost added up (tenant as above) into *sum
 * (counter and version NULL, at[] and priced[] not set). */
void cnt_cost_total(const cnt_cost *c, const char *tenant, cnt_cost_row *sum);

#endif
