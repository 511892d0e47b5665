/*
 * ivt.h - inline invalid-traffic filters at admission (GIVT; seed 002,
 * "cheap inline GIVT at ingest"): the list files the filters of a counter
 * name, and the per-viewer rate rule (cnt-definitions(5), "FILTERS").
 *
 * List files are text, one entry a line; '#' starts a comment line, blank
 * lines are skipped, leading and trailing blanks (space, tab, CR) are
 * trimmed.  Anything else that is not an entry is an error naming the
 * file and the line: a list is a security control, so a garbled one must
 * stop admission rather than filter less than its author meant.
 *
 *   user-agent list  each line is a pattern matched against the whole of
 *                    attrs[attr]: "=TEXT" matches a user agent equal to
 *                    TEXT (bytes, case-sensitive); any other line matches a
 *                    user agent containing it (ASCII case-insensitive).
 *                    Patterns are 1 to 256 bytes without control
 *                    characters.  Substrings are found in one pass over the
 *                    user agent (an Aho-Corasick automaton over the bytes
 *                    the patterns use), exact lines by one hash probe.
 *   address list     each line is an IPv4 or IPv6 address or a CIDR range
 *                    ADDRESS/LEN (LEN 0..32 or 0..128, no host bits set),
 *                    parsed by inet_pton(3).  An IPv4-mapped IPv6 address
 *                    (::ffff:a.b.c.d) is the IPv4 address.  Ranges are kept
 *                    in one hash set keyed by (family, length, network),
 *                    and a value is looked up once per length that occurs
 *                    in the list: at most 33 (IPv4) or 129 (IPv6) probes,
 *                    usually a handful.
 *
 * A value of attrs[attr] for the address rule is an address or a range
 * (ip_prefix "203.0.113.0/24"); it matches when it lies wholly inside a
 * listed range (a listed address is a range of one).  A value that is no
 * address matches nothing; an event without the key matches nothing.
 */
#ifndef CNT_INGEST_IVT_H
#define CNT_INGEST_IVT_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/slice.h"
#include "model/defs.h"

#define CNT_IVT_PATTERN_MAX 256 /* bytes: an attrs value's limit */
#define CNT_IVT_LIST_MAX (64u << 20) /* bytes of a list file */

/* ---- user-agent lists ---------------------------------------------------- */

typedef struct cnt_ualist cnt_ualist;

/* Parses n bytes of a user-agent list; name is used in messages only.
 * Returns a new list, or NULL with err set to "list 'NAME': line N: what
 * is wrong" (or out of memory, err->kind CNT_ERR_NOMEM). */
cnt_ualist *cnt_ualist_parse(const char *text, size_t n, const char *name, cnt_err *err);
void cnt_ualist_free(cnt_ualist *l);
/* 1 when the n bytes ua match a pattern of l, else 0.  No allocation. */
int cnt_ualist_match(const cnt_ualist *l, const char *ua, size_t n);
/* The number of patterns (substring and exact). */
size_t cnt_ualist_size(const cnt_ualist *l);

/* ---- address lists ----------------------------------------------------- */

typedef struct cnt_addrlist cnt_addrlist;

/* Parses n bytes of an address list, as cnt_ualist_parse(). */
cnt_addrlist *cnt_addrlist_parse(const char *text, size_t n, const char *name, cnt_err *err);
void cnt_addrlist_free(cnt_addrlist *l);
/* 1 when the n bytes s ("ADDRESS" or "ADDRESS/LEN") lie inside a range of
 * l, 0 when not, -1 when s is not an address or range.  No allocation. */
int cnt_addrlist_match(const cnt_addrlist *l, const char *s, size_t n);
/* The number of addresses and ranges. */
size_t cnt_addrlist_size(const cnt_addrlist *l);

/* ---- the filters of one admission run ------------------------------------ */

typedef struct cnt_ivt cnt_ivt;

/* Reads the list file of every filter declared in d (which must outlive
 * the result).  Returns a new object (also when d declares no filter), or
 * NULL with err set: a list that cannot be read ("list 'PATH': No such
 * file or directory (filters[1] of counter 'acme/views')") or is garbled
 * (as cnt_ualist_parse), or out of memory. */
cnt_ivt *cnt_ivt_new(const cnt_defs *d, cnt_err *err);
void cnt_ivt_free(cnt_ivt *v);
/* 1 when counter c of the definitions declares a filter. */
int cnt_ivt_any(const cnt_ivt *v, const cnt_counter *c);

/* The attributes of one event, and its viewer (item, or NULL slice). */
typedef struct cnt_ivt_event {
	cnt_slice item;
	size_t nattrs;
	const cnt_slice *attr_keys, *attr_vals;
	int64_t event_time_ms;
} cnt_ivt_event;

/* The first user_agent or address filter of counter c, in declaration
 * order, that e matches: its index in c->filters with msg (msgn bytes) set
 * to one line saying why; -1 when none matches.  No allocation. */
int cnt_ivt_lists(const cnt_ivt *v, const cnt_counter *c, const cnt_ivt_event *e, char *msg,
	size_t msgn);

/* The rate filters of counter c, in declaration order.  An event of viewer
 * V (item, or attrs[attr]; an event without it is never judged) is over
 * the rate when V already has max_events events let through in this run
 * whose event_times all lie within span_s seconds of its own (the last
 * max_events let through before it in input order; |t' - t| < span_s).
 * For input in event_time order that is "more than max_events events in
 * any span_s seconds": the events beyond the rate are rejected, the first
 * max_events of each burst are not.  Events over the rate are not
 * remembered (a flood does not lock its viewer out for longer).
 * Returns the index in c->filters of the first rate filter e is over, with
 * msg set; -1 when it is over none.  No allocation; remembers nothing:
 * cnt_ivt_rate_commit() does, once the event is admitted. */
int cnt_ivt_rate(cnt_ivt *v, const cnt_counter *c, const cnt_ivt_event *e, char *msg,
	size_t msgn);
/* Remembers e (the event cnt_ivt_rate() last judged and found within every
 * rate) as let through.  0, or -1 when out of memory. */
int cnt_ivt_rate_commit(cnt_ivt *v, const cnt_counter *c, const cnt_ivt_event *e);

/* attrs[key] of e: 1 with *out set, 0 when absent. */
int cnt_ivt_attr(const cnt_ivt_event *e, const char *key, cnt_slice *out);

#endif
