/*
 * cli.h - the command layer: what every tool does with its options,
 * inputs, outputs, messages and exit status, done once.
 *
 * This is the one part of lib/ that talks to the user and ends the
 * process, on behalf of cmd/ (as git's usage.c and write_or_die.c do):
 * every other module fills a cnt_err and returns.  A tool's main() is
 *
 *	cnt_cli_init("cnt-foo", usage, help);
 *	while ((c = cnt_cli_getopt(argc, argv, "o:" CNT_CLI_SHORT, longopts)) != -1)
 *		switch (c) {
 *		case 'o': ...; break;
 *		default: cnt_cli_option(c, optarg, &common);   (help, version, -v, --stats, ...)
 *		}
 *	...  the library call; on failure cnt_die_err(&err)  ...
 *	return cnt_cli_finish(&common, &stats);
 *
 * The rules it keeps (cnt(7), "EXIT STATUS", "OPTIONS", "STATISTICS",
 * "PROGRESS"):
 *   - Messages are "<tool>: <message>" on standard error, one line.
 *   - Every output file is opened with cnt_cli_out(), which registers it:
 *     a fatal error, a closed pipe or SIGINT/SIGTERM/SIGHUP removes every
 *     registered temporary file before the process ends, so nothing that
 *     looks complete is left behind.
 *   - Exit status by the kind of error (base/err.h): 2 bad data or usage,
 *     3 an output could not be written, 4 out of memory.  A closed pipe
 *     (EPIPE on any write; SIGPIPE is caught, so an ignored SIGPIPE in the
 *     parent changes nothing) is quiet: temporaries removed, then the tool
 *     ends by SIGPIPE as an uncaught one would have ended it.
 *   - Standard output is flushed and checked (ferror, fclose) before a
 *     successful exit; a failure there is an output that could not be
 *     written.
 */
#ifndef CNT_CLI_H
#define CNT_CLI_H

#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "avro/codec.h"
#include "base/buf.h"
#include "base/outfile.h"
#include "base/slice.h"

/* ---- start, options, usage ---------------------------------------------- */

/* Long-option codes of the options every tool shares (no short letter
 * except -h and -v).  Tools list CNT_CLI_LONGOPTS in their table and pass
 * anything their switch does not know to cnt_cli_option(). */
enum {
	CNT_OPT_VERSION = 0x1000,
	CNT_OPT_STATS,
	CNT_OPT_PROGRESS,
	CNT_OPT_NO_PROGRESS,
	CNT_OPT_LEVEL,
	CNT_OPT_TOOL_BASE = 0x1100   /* first code free for a tool's own long-only options */
};

#define CNT_CLI_SHORT "hv"
#define CNT_CLI_LONGOPTS \
	{"help", no_argument, NULL, 'h'}, \
	{"version", no_argument, NULL, CNT_OPT_VERSION}, \
	{"verbose", no_argument, NULL, 'v'}, \
	{"stats", required_argument, NULL, CNT_OPT_STATS}, \
	{"progress", no_argument, NULL, CNT_OPT_PROGRESS}, \
	{"no-progress", no_argument, NULL, CNT_OPT_NO_PROGRESS}

/* What the shared options set. */
typedef struct cnt_cli_common {
	const char *stats_path;  /* --stats FILE, or NULL */
	int verbose;             /* -v */
	int progress;            /* 1 --progress, 0 --no-progress, -1 auto (stderr a terminal) */
} cnt_cli_common;

#define CNT_CLI_COMMON_INIT {NULL, 0, -1}

/* Names the tool for its messages and sets up the signal handling above.
 * usage is the usage text ("usage: cnt-foo ...\n", as the man page's
 * SYNOPSIS), help what --help prints after it.  Call first in main(). */
void cnt_cli_init(const char *tool, const char *usage, const char *help);
/* The tool's name, as given to cnt_cli_init(). */
const char *cnt_cli_tool(void);

/* Handles a shared option (-h, --version, -v, --stats, --progress,
 * --no-progress) into co; anything else (a code the tool's switch does not
 * know) is a usage error that ends the tool.  -h and --version print and exit 0. */
void cnt_cli_option(int c, const char *arg, cnt_cli_common *co);
/* getopt_long, but an unknown option, a missing value or a value an
 * option does not take is told in getopt's words by cnt_die_usage, whose
 * line shows what was typed by cnt(7)'s rule, and the tool ends with
 * status 2; so it never returns '?' or ':'. */
int cnt_cli_getopt(int argc, char *const argv[], const char *shortopts, const struct option *lo);

/* Ends the tool with "<tool>: <message>", the usage text and status 2. */
void cnt_die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* A tool that takes no operands, or at most max of them: trailing
 * operands after a complete command line are a usage error. */
void cnt_cli_max_operands(int argc, char **argv, int first, int max, const char *what);

/* "<tool>: <message>" on standard error in one write, the progress line
 * (if any) cleared first: for -v summaries, warnings and reject lines. */
void cnt_cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "<tool>: '<key>': <why>", as cnt_cli_note, the key (from files we
 * distrust) by cnt_shown's rule and cut after 256 bytes: the note
 * cnt_retract_run and cnt_audit_retract take for each event they do not
 * retract.  ctx is not used. */
void cnt_cli_note_key(void *ctx, cnt_slice key, const char *why);

/* ---- fatal errors ------------------------------------------------------- */

/* "<tool>: <message>", registered temporaries removed, exit 2. */
void cnt_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* err's message, and the exit status of its kind (a closed pipe: quiet,
 * ends by SIGPIPE). */
void cnt_die_err(const cnt_err *err) __attribute__((noreturn));
/* "out of memory" and exit 4. */
void cnt_die_nomem(void) __attribute__((noreturn));
/* Dies of "out of memory" when rc != 0 (for cnt_buf_* and the like). */
static inline void cnt_oom(int rc)
{
	if (rc != 0)
		cnt_die_nomem();
}

/* ---- strict numbers ----------------------------------------------------- */

/* Each parses the whole of s (no sign where none is allowed, no trailing
 * characters, no empty string) or ends the tool with a usage error naming
 * opt ("--head: '2x' is not a whole number from 1 to 1000000").  */
uint64_t cnt_cli_uint(const char *opt, const char *s, uint64_t min, uint64_t max);
int64_t cnt_cli_int(const char *opt, const char *s, int64_t min, int64_t max);
double cnt_cli_double(const char *opt, const char *s, double min, double max);
/* A size with an optional K, M or G suffix (and optional B): bytes. */
uint64_t cnt_cli_size(const char *opt, const char *s, uint64_t min);
/* A time as RFC 3339 or epoch milliseconds; ms since the epoch. */
int64_t cnt_cli_time(const char *opt, const char *s);
/* --level N: a compression level, an integer; the codec checks its range
 * when it is used (zstandard's fast levels are negative). */
int cnt_cli_level(const char *opt, const char *s);
/* --codec NAME (-c): a codec. */
cnt_codec_id cnt_cli_codec(const char *opt, const char *s);
/* A string a ledger keeps as JSON text (a requester, an authority, a
 * selector): s, or a usage error naming opt when it is not UTF-8. */
const char *cnt_cli_text(const char *opt, const char *s);

/* ---- inputs and outputs ------------------------------------------------- */

/* Opens an output (NULL or "-": standard output) as cnt_out_open() does,
 * and registers it for removal on a fatal error or signal.  Dies on
 * failure. */
void cnt_cli_out(cnt_out *o, const char *path);
/* Opens path as a temporary file beside it, renamed over whatever path
 * is when committed (never standard output, a FIFO or a device), and
 * registers it.  Refuses a link under /dev (/dev/stdout); dies on
 * failure. */
void cnt_cli_out_file(cnt_out *o, const char *path);
/* Opens the Avro output path (NULL or "-": standard output, refused when
 * it is a terminal) and picks the codec: *codec when codec_set, else
 * zstandard for a file and null for a pipe.  Registers it; dies on
 * failure. */
void cnt_cli_avro_out(cnt_out *o, const char *path, int codec_set, cnt_codec_id *codec);
/* Commits a registered output (rename into place) and unregisters it.
 * Dies on failure (status 3). */
void cnt_cli_commit(cnt_out *o);
/* Removes a registered output's temporary file and unregisters it. */
void cnt_cli_abort(cnt_out *o);
/* A section in which SIGINT, SIGTERM and SIGHUP wait (*old: the mask
 * before): a temporary file is never between existing and being
 * registered, nor between being unregistered and renamed into place.  A
 * signal taken by any thread meanwhile ends the process when the last
 * thread leaves its section, every temporary then removed; a fatal error
 * (cnt_die and the like) waits for the other threads' sections before it
 * removes the outputs.  A section may hold another on the same thread. */
void cnt_cli_hold_signals(sigset_t *old);
void cnt_cli_release_signals(const sigset_t *old);
/* Registers o so that a fatal error or a signal removes its temporary
 * file; cnt_cli_unregister() takes it off the list again. */
void cnt_cli_register(cnt_out *o);
void cnt_cli_unregister(cnt_out *o);

/* Opens an input by name ("-": standard input).  Dies naming the file
 * when it cannot be opened. */
int cnt_cli_open_in(const char *name);
/* Closes what cnt_cli_open_in opened (not standard input). */
void cnt_cli_close_in(int fd);

/* Writes n bytes to standard output (a descriptor, not stdio), dying as
 * the rules above say on a failed write. */
void cnt_cli_write(const void *p, size_t n);
/* printf to standard output through stdio; a failure is found by
 * cnt_cli_finish(). */
void cnt_cli_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- statistics (--stats) ----------------------------------------------- */

/* One JSON object, built key by key, every string escaped.  The same key
 * means the same thing in every tool (cnt(7), "STATISTICS"): tool, in,
 * out, rejected, duplicates, held, late, balanced, seconds, ... */
typedef struct cnt_stats {
	cnt_buf b;
	char open[16];   /* '{' or '[' of each open container */
	int depth;
	int first;
} cnt_stats;

/* Starts {"tool":"<tool>" (the name from cnt_cli_init). */
void cnt_stats_begin(cnt_stats *s);
void cnt_stats_u64(cnt_stats *s, const char *key, uint64_t v);
void cnt_stats_i64(cnt_stats *s, const char *key, int64_t v);
void cnt_stats_double(cnt_stats *s, const char *key, double v);
void cnt_stats_bool(cnt_stats *s, const char *key, int v);
/* A string value; NULL writes null.  n bytes, or strlen when n is -1. */
void cnt_stats_str(cnt_stats *s, const char *key, const char *v, long n);
/* A nested object or array under key (key NULL inside an array). */
void cnt_stats_object(cnt_stats *s, const char *key);
void cnt_stats_array(cnt_stats *s, const char *key);
/* Closes the innermost open object or array. */
void cnt_stats_close(cnt_stats *s);
/* Closes what is open and writes the object, with a newline, to path (a
 * file written whole or not at all; "-" is standard error, so that a
 * pipeline's standard output stays the data).  Call it before committing
 * the tool's outputs: the file is renamed into place by cnt_cli_finish(),
 * last, so a run that fails leaves neither.  Dies on failure; frees s. */
void cnt_stats_write(cnt_stats *s, const char *path);
void cnt_stats_release(cnt_stats *s);
/* The projection lag of a view (cnt(7), STATISTICS): "as_of" (epoch ms),
 * "as_of_age_s" (now - as_of, in seconds), both null when the view covers
 * no log (has_as_of 0), and "freshness_budget_s", the board's budget. */
void cnt_stats_as_of(cnt_stats *s, int has_as_of, int64_t as_of, int64_t now, int64_t budget_s);

/* ---- progress ----------------------------------------------------------- */

/* Progress on standard error for tools that read large inputs: records,
 * bytes, rate and, for regular files, the fraction done, redrawn at most
 * four times a second on one line and cleared at the end.  Shown when
 * co->progress is 1, or -1 and standard error is a terminal. */
void cnt_progress_start(const cnt_cli_common *co);
/* The input now being read: its descriptor (its offset is polled for the
 * bytes done) and name; sizes of regular files are added up for the
 * fraction. */
void cnt_progress_input(int fd, const char *name);
/* Adds n records; cheap enough to call per record. */
void cnt_progress_add(uint64_t n);
/* Clears the line. */
void cnt_progress_end(void);

/* ---- finishing ---------------------------------------------------------- */

/* Flushes and closes standard output and checks it (a failure ends the
 * tool: status 3, or quietly by SIGPIPE); clears the progress line.
 * Returns CNT_EXIT_OK for "return cnt_cli_finish();". */
int cnt_cli_finish(void);

/* ---- tenant separation (cnt(7), "TENANT SEPARATION") ----------------- */

/* The option code of --tenant ID in the query tools (long only). */
#define CNT_OPT_TENANT (CNT_OPT_TOOL_BASE + 0x50)

/* Who is asking: opt (--tenant ID) when not NULL, else $CNT_TENANT when
 * set and not empty, else NULL (nobody: no guard).  The option wins over
 * the environment.  An id that is not a safe file name is a usage error
 * naming where it came from. */
const char *cnt_cli_tenant(const char *opt);

/* The guard, in one line for a query tool, before it prints anything:
 * when who is not NULL, reads the whole of the input fd (name) and ends
 * the tool with status 5 and one line naming the file and both tenants
 * unless it holds only who's data (model/tenant.h), then rewinds fd.  An
 * input that cannot be read twice (a pipe) is refused with status 2.
 * Does nothing when who is NULL. */
void cnt_cli_tenant_guard(const char *who, int fd, const char *name);

/* The same for a file named path, opened and closed here; a directory
 * is a view version (VIEWS/BOARD/SCOPE/vNNNNNN or .../current) and its
 * view.avro is checked.  For a tool that opens the file later itself. */
void cnt_cli_tenant_guard_path(const char *who, const char *path);

/* The same for a tenant id the tool found elsewhere (a view's
 * description, a board's definition): status 5 unless t is who.  what
 * says where it was found.  Does nothing when who is NULL. */
void cnt_cli_tenant_guard_id(const char *who, const char *t, const char *name, const char *what);

/* Opens DIR/TENANT/FILE as cnt_cli_out() does, for a per-tenant layout:
 * DIR and DIR/TENANT are created when missing with mode 0750 (less the
 * umask; existing directories keep theirs), the file gets mode 0640 (less
 * the umask).  tenant must have passed cnt_tenant_id_check().  Dies on
 * failure. */
void cnt_cli_tenant_out(cnt_out *o, const char *dir, const char *tenant, const char *file);

/* Creates DIR and DIR/TENANT as cnt_cli_tenant_out() does (dying on a
 * failure or an unsafe id) and returns "DIR/TENANT", malloc'd. */
char *cnt_cli_tenant_dir(const char *dir, const char *tenant);

/* cnt-accumulate --split-tenants DIR: splits the bucket file on fd (read
 * from the start) into DIR/TENANT/buckets.avro, one per tenant, opened as
 * cnt_cli_tenant_out() and written with codec and level
 * (cnt_tenant_split_buckets()); they stay temporary until
 * cnt_cli_split_commit() renames them all into place.  Returns the number
 * of files; dies on failure. */
size_t cnt_cli_split_buckets(int fd, const char *name, const char *dir, cnt_codec_id codec, int level);
void cnt_cli_split_commit(void);

/* An unlinked scratch file in tmpdir, open for reading and writing
 * (nothing is left behind whatever happens).  Dies on failure. */
int cnt_cli_scratch(const char *tmpdir);

#endif
