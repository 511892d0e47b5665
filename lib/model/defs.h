/*
 * defs.h - the definitions file: cnt's control plane.
 *
 * One JSON document declares the tenants, the counters (each a list of
 * numbered versions), the leaderboards and the seasons every tool works
 * against.  The format is described in defs.c and in cnt-definitions(5).
 *
 * Ownership: cnt_defs_load()/cnt_defs_parse() return one heap object that
 * owns everything reachable from it.  Every pointer handed out by the
 * accessors below (structs, strings, arrays) stays valid until
 * cnt_defs_free() and must not be freed by the caller.  A loaded cnt_defs
 * is never modified, so it may be shared read-only between threads.
 */
#ifndef CNT_DEFS_H
#define CNT_DEFS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define CNT_DEFS_FORMAT "cnt-definitions/1"
#define CNT_DEFS_ID_MAX 128 /* bytes, for every *_id */

typedef enum {
	CNT_CTYPE_EXACT,  /* signed 64-bit sum of deltas */
	CNT_CTYPE_UNIQUE, /* distinct items (HyperLogLog++) */
	CNT_CTYPE_MIN,    /* smallest delta seen */
	CNT_CTYPE_MAX,    /* largest delta seen */
	CNT_CTYPE_APPROX  /* sampled, scaled sum of deltas (an estimate) */
} cnt_counter_type;

enum {
	CNT_DEDUP_IDEMPOTENCY_KEY = 0, /* one event per idempotency_key */
	CNT_DEDUP_ITEM_MEMBER = 1      /* one event per (item, member_ref) */
};

typedef enum {
	CNT_WIN_ALL_TIME,
	CNT_WIN_DAY,
	CNT_WIN_WEEK,
	CNT_WIN_MONTH,
	CNT_WIN_SEASON,
	CNT_WIN_ROLLING_24H,
	CNT_WIN_LAST_30D,
	CNT_WIN_RANGE,
	CNT_WIN_COUNT
} cnt_window_kind;

#define CNT_WIN_BIT(k) (1u << (unsigned)(k))

typedef struct cnt_tenant {
	const char *tenant_id;
	const char *name;     /* tenant_id when not given */
	const char *timezone; /* IANA name, checked against the zoneinfo files */
	int64_t event_quota_per_s; /* 0 = unlimited */
	int64_t member_cap;        /* 0 = unlimited */
	int64_t deletion_sla_days;
	int probe;                 /* "probe": true: synthetic probe events only
	                            * (cnt-canary); no leaderboard ranks its counters */
} cnt_tenant;

typedef struct cnt_counter_version {
	int version;                /* >= 1 */
	int64_t effective_from_ms;  /* UTC epoch ms; INT64_MIN if absent */
	cnt_counter_type type;
	int64_t bounds_lo, bounds_hi; /* inclusive bounds on delta */
	int64_t lateness_horizon_s;
	int64_t dedup_horizon_s;
	int dedup_key;              /* CNT_DEDUP_* */
	int client_writable;        /* 0 or 1 */
	unsigned windows;           /* set of CNT_WIN_BIT(cnt_window_kind) */
	double unit_cost_per_m;     /* cost note per million events */
	/* Watch-time gate (cnt-definitions(5), "WATCH-TIME GATE"): an event
	 * is admitted only when attrs[watch_attr] is a decimal integer >=
	 * min_watch_ms.  min_watch_ms 0: no gate (watch_attr NULL then). */
	int64_t min_watch_ms;
	const char *watch_attr;     /* "ms_watched" when not given */
	/* Breakdown dimensions (cnt-definitions(5), "dimensions"): attrs
	 * keys whose values get bucket records of their own (cnt-bucket(5));
	 * distinct, each 1 to 64 bytes without NUL; 0 to CNT_DIMS_MAX. */
	size_t ndimensions;
	const char *dimensions[4];
} cnt_counter_version;

#define CNT_DIMS_MAX 4

/* Hold signals (cnt-definitions(5), "HOLD SIGNALS"; lib/ingest/hold.h):
 * admission policy of a counter, not part of a version, since a held
 * event is not counted and a cleared one is counted under the version it
 * names. */
typedef enum {
	CNT_HOLD_RATE,      /* a member's summed delta over window_s above ceiling */
	CNT_HOLD_LOCKSTEP,  /* >= members distinct members, the same delta, within span_s */
	CNT_HOLD_DEVICE,    /* > max_events events with one value of attrs[attr] within span_s */
	CNT_HOLD_NKINDS
} cnt_hold_kind;

typedef struct cnt_hold_signal {
	cnt_hold_kind kind;
	int64_t window_s;    /* rate: the window; lockstep, device: the span */
	int64_t ceiling;     /* rate */
	int64_t members;     /* lockstep, >= 2 */
	int64_t max_events;  /* device, >= 1 */
	const char *attr;    /* device: the attrs key */
} cnt_hold_signal;

/* Inline invalid-traffic filters (cnt-definitions(5), "FILTERS";
 * lib/ingest/ivt.h): admission policy of a counter like the hold signals,
 * not part of a version.  A list file is named as written (list) and
 * resolved against the definitions file's directory (list_path); it is
 * read by lib/ingest/ivt.h, not by the definitions loader. */
typedef enum {
	CNT_FILTER_USER_AGENT, /* attrs[attr] matches a line of the list */
	CNT_FILTER_ADDRESS,    /* attrs[attr] lies in an address or range of the list */
	CNT_FILTER_RATE,       /* > max_events events of one viewer within span_s */
	CNT_FILTER_NKINDS
} cnt_filter_kind;

typedef struct cnt_filter {
	cnt_filter_kind kind;
	const char *attr;      /* user_agent, address: the attrs key; rate: the
				* attrs key naming the viewer, NULL = item */
	const char *list;      /* user_agent, address: the list file as written */
	char *list_path;       /* ... resolved (owned by the cnt_defs) */
	int64_t max_events;    /* rate, >= 1 */
	int64_t span_s;        /* rate, >= 1 */
} cnt_filter;
/* Batch audit heuristics (cnt-definitions(5), "AUDIT HEURISTICS";
 * lib/correct/audit.h, cnt-audit(1)): like holds, admission policy of a
 * counter and not part of a version.  Each finds sophisticated invalid
 * traffic in the archive after the fact; inflation only reports. */
typedef enum {
	CNT_AUDIT_LOCKSTEP,   /* one item on >= videos distinct members within span_s */
	CNT_AUDIT_BURST,      /* > max_events events with one value of attrs[attr] within span_s */
	CNT_AUDIT_WATCH_TIME, /* an item's views sharing one attrs[attr] value: >= views, >= share */
	CNT_AUDIT_INFLATION,  /* report: beacons / unique items per member above baseline */
	CNT_AUDIT_NKINDS
} cnt_audit_kind;

#define CNT_AUDIT_MAX 16  /* rules per counter */

typedef struct cnt_audit_rule {
	cnt_audit_kind kind;
	int64_t span_s;      /* lockstep, burst */
	int64_t videos;      /* lockstep: >= 2 */
	int64_t max_events;  /* burst: >= 1 */
	int64_t views;       /* watch_time: >= 2 */
	double share;        /* watch_time: (0, 1], default 1 */
	double baseline;     /* inflation: >= 1 */
	const char *attr;    /* burst (required), watch_time (default "ms_watched") */
} cnt_audit_rule;

struct cnt_tenant;
typedef struct cnt_counter {
	const char *tenant_id, *counter_id;
	const cnt_tenant *tenant;
	size_t nversions;               /* >= 1 */
	cnt_counter_version *versions;  /* ascending by version and effective_from */
	size_t nholds;                  /* hold signals, in file order (0: none) */
	cnt_hold_signal *holds;
	size_t nfilters;                /* inline filters, in file order (0: none) */
	cnt_filter *filters;
	size_t naudit;                  /* audit heuristics, in file order (0: none) */
	cnt_audit_rule *audit;
} cnt_counter;

/* A point in time as written in the file: either an instant (with "Z" or a
 * numeric offset) or a local wall-clock time in some timezone. */
typedef struct cnt_deftime {
	const char *text;   /* as written */
	int has_offset;     /* 1: ms is an instant; 0: a local time */
	int64_t ms;         /* UTC epoch ms if has_offset, else 0 */
	int64_t civil_ms;   /* the wall-clock fields read as if they were UTC */
} cnt_deftime;

typedef enum { CNT_SCOPE_GLOBAL, CNT_SCOPE_REGION, CNT_SCOPE_COHORT } cnt_scope_kind;
typedef enum {
	CNT_TIE_EARLIEST_ACHIEVER, /* who reached the value first ranks higher */
	CNT_TIE_LATEST_ACHIEVER,
	CNT_TIE_MEMBER_REF_ASC     /* total order; always the last rule */
} cnt_tie_break;
typedef enum { CNT_RANK_COMPETITION, CNT_RANK_DENSE, CNT_RANK_ORDINAL } cnt_rank_numbering;
typedef enum { CNT_HIST_LOG, CNT_HIST_LINEAR } cnt_hist_scale;

#define CNT_TIE_MAX 3

typedef struct cnt_leaderboard {
	const char *board_id, *tenant_id, *counter_id;
	const cnt_tenant *tenant;
	const cnt_counter *counter;
	int counter_version;        /* pinned version, or 0: every version */
	cnt_window_kind window;
	int week_start;             /* 0 = monday ... 6 = sunday */
	cnt_deftime range_from, range_to; /* only for CNT_WIN_RANGE */
	cnt_scope_kind scope_kind;
	const char *scope_attr;     /* attrs key; NULL for global */
	int order_asc;              /* 1: smaller values rank higher */
	size_t ntie_break;          /* 1..CNT_TIE_MAX; last is MEMBER_REF_ASC */
	cnt_tie_break tie_break[CNT_TIE_MAX];
	cnt_rank_numbering rank_numbering;
	int64_t materialised_cap;
	int64_t freshness_budget_s;
	cnt_hist_scale hist_scale;
	int hist_buckets;           /* 1..65536 */
	int64_t hist_width;         /* linear only; 0 = chosen from the data */
} cnt_leaderboard;

typedef enum { CNT_SEASON_OPEN, CNT_SEASON_CLOSING, CNT_SEASON_CLOSED } cnt_season_state;

typedef struct cnt_season {
	const char *season_id, *board_id;
	const cnt_leaderboard *board;
	const char *timezone;       /* the board's tenant's when not given */
	cnt_deftime opens_at, closes_at; /* opens_at < closes_at */
	cnt_season_state state;
} cnt_season;

typedef struct cnt_defs cnt_defs;

/* Reads and validates the definitions file at path.  Returns a new object
 * the caller frees with cnt_defs_free(), or NULL with err set to one line
 * "definitions 'PATH': $.json.path: what is wrong" (the first error found;
 * JSON syntax errors name line and column instead of a path). */
cnt_defs *cnt_defs_load(const char *path, cnt_err *err);

/* The same from n bytes of memory (need not be NUL-terminated); name is
 * used in error messages only and is not retained. */
cnt_defs *cnt_defs_parse(const char *text, size_t n, const char *name, cnt_err *err);

/* Frees d and everything reachable from it; NULL is a no-op. */
void cnt_defs_free(cnt_defs *d);

/* Lookups by id (id bytes need not be NUL-terminated).  Hash-table backed,
 * no allocation; return NULL when the id is not declared. */
const cnt_tenant *cnt_defs_tenant(const cnt_defs *d, const char *id, size_t n);
const cnt_counter *cnt_defs_counter(const cnt_defs *d, const char *tenant, size_t tn,
				    const char *counter, size_t cn);
const cnt_leaderboard *cnt_defs_board(const cnt_defs *d, const char *id, size_t n);
const cnt_season *cnt_defs_season(const cnt_defs *d, const char *id, size_t n);

/* The version in force at UTC epoch ms t: the highest version whose
 * effective_from <= t.  NULL when none is (the counter is not yet defined
 * at t; callers report that as an unknown counter). */
const cnt_counter_version *cnt_counter_version_at(const cnt_counter *c, int64_t t_ms);
/* The version numbered version, or NULL. */
const cnt_counter_version *cnt_counter_version_get(const cnt_counter *c, int version);
/* The newest version (never NULL for a counter from a loaded cnt_defs). */
const cnt_counter_version *cnt_counter_version_latest(const cnt_counter *c);

/* Iteration in file order: i in 0 .. count-1; out of range gives NULL. */
size_t cnt_defs_ntenants(const cnt_defs *d);
const cnt_tenant *cnt_defs_tenant_at(const cnt_defs *d, size_t i);
size_t cnt_defs_ncounters(const cnt_defs *d);
const cnt_counter *cnt_defs_counter_at(const cnt_defs *d, size_t i);
size_t cnt_defs_nboards(const cnt_defs *d);
const cnt_leaderboard *cnt_defs_board_at(const cnt_defs *d, size_t i);
size_t cnt_defs_nseasons(const cnt_defs *d);
const cnt_season *cnt_defs_season_at(const cnt_defs *d, size_t i);

/* Names as written in the file ("exact", "week", ...); "?" if out of range. */
const char *cnt_defs_ctype_name(cnt_counter_type t);
const char *cnt_defs_window_name(cnt_window_kind k);
typedef enum {
	CNT_ENUM_DEDUP_KEY,  /* CNT_DEDUP_* */
	CNT_ENUM_SCOPE,      /* cnt_scope_kind */
	CNT_ENUM_TIE,        /* cnt_tie_break */
	CNT_ENUM_NUMBERING,  /* cnt_rank_numbering */
	CNT_ENUM_HIST_SCALE, /* cnt_hist_scale */
	CNT_ENUM_WEEKDAY,    /* week_start: 0 = monday */
	CNT_ENUM_ORDER       /* order_asc: 0 = desc, 1 = asc */
} cnt_defs_enum;
/* The name of value v of enumeration e as written in the file; "?" if out
 * of range. */
const char *cnt_defs_enum_name(cnt_defs_enum e, int v);
/* "rate", "lockstep" or "device"; "?" if out of range. */
const char *cnt_defs_hold_name(cnt_hold_kind k);
/* Parses a signal name into *k: 0, or -1 when it is none. */
int cnt_defs_hold_parse(const char *name, cnt_hold_kind *k);
/* "user_agent", "address" or "rate"; "?" if out of range. */
const char *cnt_defs_filter_name(cnt_filter_kind k);
/* "lockstep", "burst", "watch_time" or "inflation"; "?" if out of range. */
const char *cnt_defs_audit_name(cnt_audit_kind k);
/* The index of c among the counters (cnt_defs_counter_at(d, i) == c). */
size_t cnt_defs_counter_index(const cnt_defs *d, const cnt_counter *c);

/* Checks that name is an IANA timezone with a TZif file under $TZDIR (or
 * /usr/share/zoneinfo).  Rejects absolute names and names containing "..".
 * Returns 0, or -1 with err saying why. */
int cnt_defs_check_timezone(const char *name, cnt_err *err);

#endif
