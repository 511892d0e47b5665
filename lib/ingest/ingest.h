/*
 * ingest.h - one admission run (cnt-ingest(1)): inputs in any of the three
 * formats in, accepted events to the log, every other record to the
 * reject or duplicate destination, and the counts that prove nothing was
 * lost (in = out + rejected + duplicates + held + sampled_out).
 *
 * An approx counter's accepted events are sampled (sample.h) before
 * anything else sees them: a sampled-out event is counted, never written.
 *
 * With a hold file (cfg.hold_fd), the accepted events are kept until the
 * end of the run and judged by the hold signals of their counters
 * (hold.h): the held ones go to the hold file, the rest to the log, in
 * input order.
 *
 * The run reads each input to its end in turn: its format is told by
 * input.h, its records are framed (lines, CSV rows, Avro records), parsed
 * (rawevent.h), judged (admit.h) and routed (report.h).  JSON lines are
 * read and parsed ahead on a thread of their own (ahead.h) and judged here
 * in order, each one's slot in the duplicate table prefetched in bursts
 * of 16, a burst ahead, so the table's cache misses overlap instead of
 * queueing.
 *
 * Bad records never stop a run; what stops it is an input that cannot be
 * read as its format at all (a CSV header, an Avro container), a failed
 * read or write, or memory.
 */
#ifndef CNT_INGEST_H
#define CNT_INGEST_H

#include <stdint.h>

#include "avro/codec.h"
#include "ingest/admit.h"
#include "ingest/input.h"

/* The longest JSON line or CSV row read as a record; longer ones are
 * rejected as malformed, with their first CNT_LINE_KEEP bytes. */
#define CNT_INGEST_LINE_MAX ((size_t)1 << 20)

typedef struct cnt_ingest_cfg {
	cnt_admit_cfg admit;         /* definitions, ingest time, limits, live */
	cnt_input_format format;     /* every input's, or CNT_INPUT_AUTO: each its own */
	int out_fd;                  /* the event log (not closed by the run) */
	const char *out_name;
	cnt_codec_id codec;
	int level;                   /* CNT_LEVEL_DEFAULT: the codec's default */
	int rej_fd;                  /* reject stream, or -1: messages through note */
	const char *rej_name;
	int dup_fd;                  /* duplicate stream, or -1: counted only */
	const char *dup_name;
	int hold_fd;                 /* hold file (held.h), or -1: no holds */
	const char *hold_name;
	/* A reject message, or a line summing them up (report.h); NULL: none. */
	void (*note)(const char *msg);
	/* n more records read (for a progress display); NULL: none. */
	void (*progress)(uint64_t n);
	/* Counts the (tenant, counter, member) of every event written to the
	 * log (count/topkey.h; --stats' top_keys); NULL: none. */
	struct cnt_topkey *hot;
} cnt_ingest_cfg;

/* What the run has read of one input. */
typedef struct cnt_ingest_input {
	const char *name;
	cnt_input_format format;
	uint64_t records;
} cnt_ingest_input;

typedef struct cnt_ingest cnt_ingest;

/* Starts a run.  cfg's definitions must outlive it.  Returns NULL with
 * err set (out of memory, a bad --level for the codec). */
cnt_ingest *cnt_ingest_new(const cnt_ingest_cfg *cfg, cnt_err *err);
void cnt_ingest_free(cnt_ingest *g);

/* Reads the input fd (not closed here), named name (kept, not copied), to
 * its end.  Returns 0, or -1 with err set, after which only _free is
 * allowed. */
int cnt_ingest_input_fd(cnt_ingest *g, int fd, const char *name, cnt_err *err);

/* Ends the run: the log's last block and the streams are written, the
 * summary of rejects not shown is given, and the counts are checked to
 * balance.  Returns 0, or -1 with err set. */
int cnt_ingest_finish(cnt_ingest *g, cnt_err *err);

/* The counts so far.  With holds, accepted counts the held events too
 * until cnt_ingest_finish(); use cnt_ingest_held() for them. */
const cnt_admit_stats *cnt_ingest_stats(const cnt_ingest *g);
/* The hold run's counts (held.h), or NULL without holds. */
const struct cnt_hold_stats *cnt_ingest_held(const cnt_ingest *g);
/* Events of counter c held (0 without holds). */
uint64_t cnt_ingest_counter_held(const cnt_ingest *g, const cnt_counter *c);
/* Events sampled out (approx counters, sample.h): in all, of counter c.
 * accepted counts them too. */
uint64_t cnt_ingest_sampled_out(const cnt_ingest *g);
uint64_t cnt_ingest_counter_sampled_out(const cnt_ingest *g, const cnt_counter *c);
/* The definitions of the run. */
const cnt_defs *cnt_ingest_defs(const cnt_ingest *g);
/* Blank lines skipped in JSON-lines inputs (not records). */
uint64_t cnt_ingest_blank_lines(const cnt_ingest *g);
/* The inputs read so far, in order; *n gets their number. */
const cnt_ingest_input *cnt_ingest_inputs(const cnt_ingest *g, size_t *n);
/* Calls fn for every declared counter, as cnt_admit_each_counter():
 * 0, or -1 with err set (out of memory). */
int cnt_ingest_each_counter(const cnt_ingest *g,
	void (*fn)(void *ctx, const char *tenant, const char *counter, uint64_t accepted, uint64_t dups),
	void *ctx, cnt_err *err);

#endif
