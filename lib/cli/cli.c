/*
 * cli.c - the command layer (see cli.h).
 */
#include "base/outfile.h"
#include "cli/cli.h"
#include "avro/container.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "avro/json.h"
#include "base/err.h"
#include "base/text.h"
#include "time/timefmt.h"

/* One process, one tool: the command layer's state is the process's. */
#define MAX_OUTS 32

static struct {
	const char *tool, *usage, *help;
	cnt_out *volatile outs[MAX_OUTS];
	cnt_out stats_out;        /* --stats, committed by cnt_cli_finish() */
	int stats_pending;
} G = {"cnt", "", "", {0}, {-1, NULL, NULL, 0}, 0};

const char *cnt_cli_tool(void)
{
	return G.tool;
}

/* ---- temporaries and signals ---------------------------------------------- */

/* Async-signal-safe: unlink(2) only. */
static void remove_temporaries(void)
{
	for (int i = 0; i < MAX_OUTS; i++) {
		cnt_out *o = __atomic_load_n(&G.outs[i], __ATOMIC_SEQ_CST);

		if (o && o->tmp)
			unlink(o->tmp);
	}
}

/* Threads inside a section (cnt_cli_hold_signals) and the signal that
 * came meanwhile.  A section is where a temporary file exists but is not
 * registered, or is unregistered but not yet renamed.  Blocking the
 * signals holds them back on the section's own thread only: another
 * thread (cnt-count's reader saves snapshots) may still take one, so the
 * handler leaves the removal to the last thread out of its section.
 * dying: a fatal error is removing the outputs (quiesce); no section
 * begins any more. */
static int busy;
static int pending_sig;
static int dying;
static __thread int depth;   /* this thread's sections, nested */

/* Removes every temporary and ends the process by sig.  Async-signal-safe. */
static void end_by(int sig) __attribute__((noreturn));
static void end_by(int sig)
{
	sigset_t set;

	remove_temporaries();
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

static void on_signal(int sig)
{
	__atomic_store_n(&pending_sig, sig, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&busy, __ATOMIC_SEQ_CST) > 0)
		return;   /* the thread in its section ends the process as it leaves */
	end_by(sig);
}

void cnt_cli_init(const char *tool, const char *usage, const char *help)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa;

	G.tool = tool;
	G.usage = usage;
	G.help = help;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* a signal held for another thread's section (on_signal) must not
	 * fail this thread's read or write */
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	/* SIGPIPE always: a parent that ignores it must not turn a closed
	 * pipe into a stream of write errors. */
	sigaction(SIGPIPE, &sa, NULL);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;

		/* A signal ignored by whoever started us (nohup, a background
		 * job) stays ignored. */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

void cnt_cli_register(cnt_out *o)
{
	for (int i = 0; i < MAX_OUTS; i++)
		if (G.outs[i] == o)
			return;
	for (int i = 0; i < MAX_OUTS; i++) {
		cnt_out *none = NULL;

		if (__atomic_compare_exchange_n(&G.outs[i], &none, o, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return;
	}
	/* More outputs than any tool has: a programming error. */
	abort();
}

void cnt_cli_unregister(cnt_out *o)
{
	for (int i = 0; i < MAX_OUTS; i++)
		if (G.outs[i] == o)
			__atomic_store_n(&G.outs[i], NULL, __ATOMIC_SEQ_CST);
}

/* A fatal error: no section begins any more, the other threads' sections
 * end, and a signal waits (the handler defers while busy), so that the
 * outputs are removed with no temporary half made and none removed twice. */
static void quiesce(void)
{
	struct timespec ts = {0, 100000};
	int mine = depth > 0 ? 1 : 0;

	if (__atomic_exchange_n(&dying, 1, __ATOMIC_SEQ_CST) != 0)
		for (;;)
			pause();   /* another thread's error ends the process */
	__atomic_add_fetch(&busy, 1, __ATOMIC_SEQ_CST);
	/* at most 10 s: whatever a section waits on must not keep the
	 * process from ending (a FIFO's open, which can wait for ever, is
	 * made outside any section: cnt_cli_out) */
	for (int i = 0; i < 100000 && __atomic_load_n(&busy, __ATOMIC_SEQ_CST) > 1 + mine; i++)
		nanosleep(&ts, NULL);
}

static void abort_outputs(void)
{
	quiesce();
	for (int i = 0; i < MAX_OUTS; i++) {
		cnt_out *o = G.outs[i];

		if (o) {
			G.outs[i] = NULL;
			cnt_out_abort(o);
		}
	}
}

/* ---- messages and fatal errors ------------------------------------------- */

static void vmessage(const char *fmt, va_list ap)
{
	/* line is longer than any shown line's input can be, so that where
	 * vsnprintf cuts it (inside a character, maybe) is never shown */
	char line[PIPE_BUF + 64], shown[PIPE_BUF];
	size_t n;
	int k;

	k = snprintf(line, sizeof(line), "%s: ", G.tool);
	if (k < 0 || (size_t)k >= sizeof(line))
		k = 0;
	vsnprintf(line + k, sizeof(line) - (size_t)k, fmt, ap);
	/* One line, whatever a name in it holds (cnt(7), its list of rules),
	 * in one write of at most PIPE_BUF bytes, so that lines of tools
	 * sharing a terminal or a pipe do not interleave. */
	cnt_line_shown(line, strlen(line), shown, sizeof(shown));
	n = strlen(shown);
	shown[n++] = '\n';
	if (write(STDERR_FILENO, shown, n) < 0) {
		/* Nowhere left to say it. */
	}
}

static void die_status(int status) __attribute__((noreturn));
static void die_status(int status)
{
	cnt_progress_end();
	abort_outputs();
	/* _exit: a fatal error ends the process here; memory is the
	 * kernel's to reclaim (the sanitizers' leak check is for the paths
	 * that finish, which free everything), and stdio buffers of an
	 * output that failed must not be flushed now. */
	_exit(status);
}

static void clear_progress_line(void);

void cnt_cli_note(const char *fmt, ...)
{
	va_list ap;

	clear_progress_line();
	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
}

void cnt_cli_note_key(void *ctx, cnt_slice key, const char *why)
{
	char shown[CNT_SHOWN_SIZE(256)];

	(void)ctx;
	cnt_cli_note("'%s': %s", cnt_shown(key.p, key.n, 256, shown), why);
}

void cnt_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	die_status(CNT_EXIT_TROUBLE);
}

static void message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void message(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
}

void cnt_die_err(const cnt_err *err)
{
	switch (err->kind) {
	case CNT_ERR_PIPE:
		cnt_progress_end();
		abort_outputs();
		end_by(SIGPIPE);
	case CNT_ERR_IO:
		message("%s", err->msg);
		die_status(CNT_EXIT_IO);
	case CNT_ERR_NOMEM:
		message("%s", err->msg);
		die_status(CNT_EXIT_NOMEM);
	case CNT_ERR_REFUSED:
		message("%s", err->msg);
		die_status(CNT_EXIT_REFUSED);
	case CNT_ERR_RETIRED:
		message("%s", err->msg);
		die_status(CNT_EXIT_RETIRED);
	case CNT_ERR_DATA:
	default:
		message("%s", err->msg);
		die_status(CNT_EXIT_TROUBLE);
	}
}

void cnt_die_nomem(void)
{
	message("out of memory");
	die_status(CNT_EXIT_NOMEM);
}

void cnt_die_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	if (write(STDERR_FILENO, G.usage, strlen(G.usage)) < 0) {
		/* Nowhere left to say it. */
	}
	die_status(CNT_EXIT_TROUBLE);
}

/* ---- options ------------------------------------------------------------- */

void cnt_cli_option(int c, const char *arg, cnt_cli_common *co)
{
	switch (c) {
	case 'h':
		cnt_cli_printf("%s\n%s", G.usage, G.help);
		exit(cnt_cli_finish());
	case CNT_OPT_VERSION:
		cnt_cli_printf("%s %s\n", G.tool, CNT_VERSION);
		exit(cnt_cli_finish());
	case 'v':
		co->verbose = 1;
		return;
	case CNT_OPT_STATS:
		co->stats_path = arg;
		return;
	case CNT_OPT_PROGRESS:
		co->progress = 1;
		return;
	case CNT_OPT_NO_PROGRESS:
		co->progress = 0;
		return;
	default:
		/* a code the tool's switch does not know (cnt_cli_getopt ends
		 * the tool itself at a bad option, so none of those comes here) */
		if (write(STDERR_FILENO, G.usage, strlen(G.usage)) < 0) {
			/* Nowhere left to say it. */
		}
		die_status(CNT_EXIT_TROUBLE);
	}
}

/* The long option that "--name[=value]" names: exactly, or as the one
 * option it is a prefix of (options alike in argument, flag and value, as
 * getopt counts them, are one); NULL when none or several. */
static const struct option *long_named(const char *name, size_t len, const struct option *lo, size_t *matches)
{
	const struct option *one = NULL;

	*matches = 0;
	for (const struct option *o = lo; o->name != NULL; o++) {
		if (strncmp(o->name, name, len) != 0)
			continue;
		if (strlen(o->name) == len) {
			*matches = 1;
			return o;
		}
		if (one != NULL && o->has_arg == one->has_arg && o->flag == one->flag && o->val == one->val)
			continue;
		if (one == NULL)
			one = o;
		(*matches)++;
	}
	return *matches == 1 ? one : NULL;
}

/* getopt's complaint, in its words, said by vmessage (cnt(7)'s rule: an
 * option as typed may hold anything), then the usage. */
static void bad_option(int c, char *const argv[], const struct option *lo, int moved)
	__attribute__((noreturn));
static void bad_option(int c, char *const argv[], const struct option *lo, int moved)
{
	const char *a = optind > 0 ? argv[optind - 1] : "";
	int ch;

	/* A long option's trouble always moves optind past it; a short
	 * option's inside a cluster ("-Sv") leaves optind where it was, and
	 * argv[optind - 1] may then be anything, a "--strict=1" given as the
	 * value of the option before. */
	if (moved && strncmp(a, "--", 2) == 0 && a[2] != 0) {
		const char *name = a + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name), matches;
		const struct option *o = long_named(name, len, lo, &matches);

		if (c == ':' && o != NULL && o->has_arg == required_argument && eq == NULL && o->val == optopt)
			cnt_die_usage("option '--%s' requires an argument", o->name);
		if (c == '?' && o != NULL && o->has_arg == no_argument && eq != NULL && o->val == optopt)
			cnt_die_usage("option '--%s' doesn't allow an argument", o->name);
		if (c == '?' && optopt == 0 && matches > 1) {
			char list[1024];
			size_t n = 0;

			list[0] = 0;
			for (o = lo; o->name != NULL && n < sizeof(list); o++)
				if (strncmp(o->name, name, len) == 0) {
					int k = snprintf(list + n, sizeof(list) - n, " '--%s'", o->name);

					n = k < 0 ? sizeof(list) : n + (size_t)k;
				}
			cnt_die_usage("option '%s' is ambiguous; possibilities:%s", a, list);
		}
		if (c == '?' && optopt == 0)
			cnt_die_usage("unrecognized option '%s'", a);
	}
	/* a short option's byte (glibc's char: past 0x7f negative here) */
	ch = optopt < 0 && optopt >= -128 ? optopt & 0xff : optopt;
	if (ch <= 0 || ch > 255)   /* a long option's code: none is a letter */
		cnt_die_usage("unrecognized option '%s'", a);
	if (c == ':')
		cnt_die_usage("option requires an argument -- '%c'", ch);
	cnt_die_usage("invalid option -- '%c'", ch);
}

int cnt_cli_getopt(int argc, char *const argv[], const char *shortopts, const struct option *lo)
{
	char opts[128];
	int c, before = optind;

	/* ':' first: a missing value is told from an unknown option */
	if (snprintf(opts, sizeof(opts), ":%s", shortopts) >= (int)sizeof(opts))
		cnt_die("internal: the short options string is too long");
	opterr = 0;
	c = getopt_long(argc, argv, opts, lo, NULL);
	if (c == '?' || c == ':')
		bad_option(c, argv, lo, optind != before);
	return c;
}

void cnt_cli_max_operands(int argc, char **argv, int first, int max, const char *what)
{
	if (argc - first > max) {
		if (max == 0)
			cnt_die_usage("unexpected operand '%s': this tool takes no %s", argv[first], what);
		cnt_die_usage("unexpected operand '%s' after the %s", argv[first + max], what);
	}
}

/* ---- strict numbers -------------------------------------------------------- */

uint64_t cnt_cli_uint(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (s[0] < '0' || s[0] > '9')
		goto bad;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		goto bad;
	return v;
bad:
	cnt_die_usage("%s: '%s' is not a whole number from %llu to %llu", opt, s,
		(unsigned long long)min, (unsigned long long)max);
}

int64_t cnt_cli_int(const char *opt, const char *s, int64_t min, int64_t max)
{
	char *end;
	long long v;

	errno = 0;
	if (!((s[0] >= '0' && s[0] <= '9') || (s[0] == '-' && s[1] >= '0' && s[1] <= '9')))
		goto bad;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		goto bad;
	return v;
bad:
	cnt_die_usage("%s: '%s' is not a whole number from %lld to %lld", opt, s,
		(long long)min, (long long)max);
}

double cnt_cli_double(const char *opt, const char *s, double min, double max)
{
	char *end;
	double v;

	errno = 0;
	if (!((s[0] >= '0' && s[0] <= '9') || s[0] == '.' || s[0] == '-'))
		goto bad;
	v = strtod(s, &end);
	if (errno || *end || end == s || isnan(v) || v < min || v > max)
		goto bad;
	return v;
bad:
	cnt_die_usage("%s: '%s' is not a number from %g to %g", opt, s, min, max);
}

uint64_t cnt_cli_size(const char *opt, const char *s, uint64_t min)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	errno = 0;
	if (s[0] < '0' || s[0] > '9')
		goto bad;
	v = strtoull(s, &end, 10);
	if (errno)
		goto bad;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v > (UINT64_MAX >> shift) || (v << shift) < min)
		goto bad;
	return v << shift;
bad:
	cnt_die_usage("%s: '%s' is not a size of at least %llu bytes (e.g. 512M, 2G)", opt, s,
		(unsigned long long)min);
}

int64_t cnt_cli_time(const char *opt, const char *s)
{
	int64_t ms;

	if (cnt_time_parse_arg(s, &ms) != 0)
		cnt_die_usage("%s: '%s' is not an RFC 3339 time or epoch milliseconds", opt, s);
	return ms;
}

const char *cnt_cli_text(const char *opt, const char *s)
{
	if (!cnt_json_text_ok(s, strlen(s)))
		cnt_die_usage("%s: not UTF-8 text, which the ledger (JSON) cannot keep", opt);
	return s;
}

int cnt_cli_level(const char *opt, const char *s)
{
	return (int)cnt_cli_int(opt, s, -1000000, 1000000);
}

cnt_codec_id cnt_cli_codec(const char *opt, const char *s)
{
	cnt_codec_id c;

	if (cnt_codec_lookup(s, strlen(s), &c) != 0)
		cnt_die_usage("%s: '%s' is not one of null, deflate, snappy, xz, zstandard, bzip2", opt, s);
	return c;
}

/* ---- inputs and outputs ----------------------------------------------------- */

void cnt_cli_hold_signals(sigset_t *old)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, old);
	if (depth++ > 0)
		return;   /* within this thread's section already */
	__atomic_add_fetch(&busy, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&pending_sig, __ATOMIC_SEQ_CST) == 0 && !__atomic_load_n(&dying, __ATOMIC_SEQ_CST))
		return;
	/* A signal or a fatal error came first: no section begins now.  The
	 * last thread out of its section ends the process by the signal, or
	 * the thread with the error ends it. */
	if (__atomic_sub_fetch(&busy, 1, __ATOMIC_SEQ_CST) == 0 && !__atomic_load_n(&dying, __ATOMIC_SEQ_CST) &&
	    (sig = __atomic_load_n(&pending_sig, __ATOMIC_SEQ_CST)) != 0)
		end_by(sig);
	for (;;)
		pause();
}

void cnt_cli_release_signals(const sigset_t *old)
{
	int sig;

	if (--depth == 0 && __atomic_sub_fetch(&busy, 1, __ATOMIC_SEQ_CST) == 0 &&
	    !__atomic_load_n(&dying, __ATOMIC_SEQ_CST) && (sig = __atomic_load_n(&pending_sig, __ATOMIC_SEQ_CST)) != 0)
		end_by(sig);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

void cnt_cli_out(cnt_out *o, const char *path)
{
	cnt_err err;
	sigset_t old;
	int rc;

	/* Standard output, a FIFO or a device: no temporary, so no section.
	 * Opening a FIFO waits for its reader, and a signal must end that. */
	if ((rc = cnt_out_open_direct(o, path, &err)) < 0)
		cnt_die_err(&err);
	cnt_cli_hold_signals(&old);
	if (rc == 0)   /* not checked again: a FIFO made meanwhile is replaced */
		rc = cnt_out_open_temp(o, path, &err) == 0;
	if (rc > 0)
		cnt_cli_register(o);
	cnt_cli_release_signals(&old);
	if (rc == 0)
		cnt_die_err(&err);
}

void cnt_cli_out_file(cnt_out *o, const char *path)
{
	cnt_err err;
	sigset_t old;
	struct stat st;
	int rc;

	if (strncmp(path, "/dev/", 5) == 0 && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		cnt_err_set(&err, "'%s': will not replace a link under /dev", path);
		cnt_die_err(&err);
	}
	cnt_cli_hold_signals(&old);
	if ((rc = cnt_out_open_temp(o, path, &err)) == 0)
		cnt_cli_register(o);
	cnt_cli_release_signals(&old);
	if (rc != 0)
		cnt_die_err(&err);
}

void cnt_cli_avro_out(cnt_out *o, const char *path, int codec_set, cnt_codec_id *codec)
{
	if ((path == NULL || strcmp(path, "-") == 0) && isatty(STDOUT_FILENO))
		cnt_die("standard output is a terminal; Avro is binary: use -o FILE or a pipe (cnt-cat prints it)");
	cnt_cli_out(o, path);
	if (!codec_set)
		*codec = cnt_out_wants_compression(o) ? CNT_CODEC_ZSTD : CNT_CODEC_NULL;
}

void cnt_cli_commit(cnt_out *o)
{
	cnt_err err;
	sigset_t old;
	int rc;

	cnt_cli_hold_signals(&old);
	cnt_cli_unregister(o);
	rc = cnt_out_commit(o, &err);
	cnt_cli_release_signals(&old);
	if (rc != 0)
		cnt_die_err(&err);
}

void cnt_cli_abort(cnt_out *o)
{
	sigset_t old;

	cnt_cli_hold_signals(&old);
	cnt_cli_unregister(o);
	cnt_out_abort(o);
	cnt_cli_release_signals(&old);
}

int cnt_cli_open_in(const char *name)
{
	int fd;

	if (strcmp(name, "-") == 0)
		return STDIN_FILENO;
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		cnt_die("cannot open '%s': %s", name, strerror(errno));
	return fd;
}

void cnt_cli_close_in(int fd)
{
	if (fd > STDIN_FILENO)
		close(fd);
}

void cnt_cli_write(const void *p, size_t n)
{
	cnt_err err;

	fflush(stdout);
	if (cnt_write_all(STDOUT_FILENO, p, n) != 0) {
		cnt_err_write(&err, errno, "cannot write standard output");
		cnt_die_err(&err);
	}
}

void cnt_cli_printf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/* ---- statistics -------------------------------------------------------------- */

static void stats_key(cnt_stats *s, const char *key)
{
	if (!s->first)
		cnt_oom(cnt_buf_putc(&s->b, ','));
	s->first = 0;
	if (key) {
		cnt_oom(cnt_json_string(&s->b, (const uint8_t *)key, strlen(key), 0));
		cnt_oom(cnt_buf_putc(&s->b, ':'));
	}
}

void cnt_stats_begin(cnt_stats *s)
{
	memset(s, 0, sizeof(*s));
	cnt_oom(cnt_buf_putc(&s->b, '{'));
	s->open[0] = '{';
	s->depth = 1;
	s->first = 1;
	cnt_stats_str(s, "tool", G.tool, -1);
}

void cnt_stats_u64(cnt_stats *s, const char *key, uint64_t v)
{
	stats_key(s, key);
	cnt_oom(cnt_buf_printf(&s->b, "%llu", (unsigned long long)v));
}

void cnt_stats_i64(cnt_stats *s, const char *key, int64_t v)
{
	stats_key(s, key);
	cnt_oom(cnt_buf_printf(&s->b, "%lld", (long long)v));
}

void cnt_stats_double(cnt_stats *s, const char *key, double v)
{
	stats_key(s, key);
	if (isfinite(v))
		cnt_oom(cnt_buf_printf(&s->b, "%.17g", v));
	else
		cnt_oom(cnt_buf_append(&s->b, "null", 4));
}

void cnt_stats_bool(cnt_stats *s, const char *key, int v)
{
	stats_key(s, key);
	cnt_oom(v ? cnt_buf_append(&s->b, "true", 4) : cnt_buf_append(&s->b, "false", 5));
}

void cnt_stats_str(cnt_stats *s, const char *key, const char *v, long n)
{
	stats_key(s, key);
	if (v == NULL)
		cnt_oom(cnt_buf_append(&s->b, "null", 4));
	else
		cnt_oom(cnt_json_string(&s->b, (const uint8_t *)v, n < 0 ? strlen(v) : (size_t)n, 0));
}

void cnt_stats_object(cnt_stats *s, const char *key)
{
	stats_key(s, key);
	if (s->depth >= (int)sizeof(s->open))
		abort();
	cnt_oom(cnt_buf_putc(&s->b, '{'));
	s->open[s->depth++] = '{';
	s->first = 1;
}

void cnt_stats_array(cnt_stats *s, const char *key)
{
	stats_key(s, key);
	if (s->depth >= (int)sizeof(s->open))
		abort();
	cnt_oom(cnt_buf_putc(&s->b, '['));
	s->open[s->depth++] = '[';
	s->first = 1;
}

void cnt_stats_close(cnt_stats *s)
{
	if (s->depth <= 0)
		return;
	s->depth--;
	cnt_oom(cnt_buf_putc(&s->b, s->open[s->depth] == '[' ? ']' : '}'));
	s->first = 0;
}

void cnt_stats_as_of(cnt_stats *s, int has_as_of, int64_t as_of, int64_t now, int64_t budget_s)
{
	if (has_as_of) {
		cnt_stats_i64(s, "as_of", as_of);
		cnt_stats_double(s, "as_of_age_s", (double)(now - as_of) / 1000.0);
	} else {
		cnt_stats_str(s, "as_of", NULL, -1);
		cnt_stats_str(s, "as_of_age_s", NULL, -1);
	}
	cnt_stats_i64(s, "freshness_budget_s", budget_s);
}

void cnt_stats_release(cnt_stats *s)
{
	cnt_buf_release(&s->b);
}

void cnt_stats_write(cnt_stats *s, const char *path)
{
	cnt_err err;

	while (s->depth > 0)
		cnt_stats_close(s);
	cnt_oom(cnt_buf_putc(&s->b, '\n'));
	if (strcmp(path, "-") == 0) {
		if (cnt_write_all(STDERR_FILENO, s->b.p, s->b.len) != 0) {
			cnt_err_write(&err, errno, "--stats: cannot write standard error");
			cnt_die_err(&err);
		}
		cnt_stats_release(s);
		return;
	}
	/* Committed by cnt_cli_finish(), after the tool's own outputs: a
	 * tool that fails after this leaves no statistics of a run that did
	 * not happen. */
	cnt_cli_out(&G.stats_out, path);
	if (cnt_write_all(G.stats_out.fd, s->b.p, s->b.len) != 0) {
		cnt_err_write(&err, errno, "--stats: cannot write '%s'", path);
		cnt_die_err(&err);
	}
	G.stats_pending = 1;
	cnt_stats_release(s);
}

/* ---- progress ------------------------------------------------------------------ */

static struct {
	int on, drawn;
	uint64_t records, next_check;
	int fd;
	const char *name;
	uint64_t done_bytes;       /* bytes of the inputs finished before fd */
	uint64_t total_bytes;      /* sizes of the regular-file inputs so far, 0 when unknown */
	int all_files;
	struct timespec start, last;
} P;

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

void cnt_progress_start(const cnt_cli_common *co)
{
	memset(&P, 0, sizeof(P));
	P.fd = -1;
	P.on = co->progress == 1 || (co->progress == -1 && isatty(STDERR_FILENO));
	P.all_files = 1;
	P.next_check = 1u << 14;
	clock_gettime(CLOCK_MONOTONIC, &P.start);
	P.last = P.start;
}

static uint64_t fd_offset(int fd)
{
	off_t o;

	if (fd < 0)
		return 0;
	o = lseek(fd, 0, SEEK_CUR);
	return o < 0 ? 0 : (uint64_t)o;
}

void cnt_progress_input(int fd, const char *name)
{
	struct stat st;

	if (!P.on)
		return;
	if (P.fd >= 0)
		P.done_bytes += fd_offset(P.fd);
	P.fd = fd;
	P.name = name;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		P.total_bytes += (uint64_t)st.st_size - fd_offset(fd);
	else
		P.all_files = 0;
}

static void human(char *buf, size_t n, double v, const char *unit)
{
	static const char *pre[] = {"", "K", "M", "G", "T"};
	int i = 0;

	while (v >= 1000 && i < 4) {
		v /= 1000;
		i++;
	}
	snprintf(buf, n, i ? "%.1f %s%s" : "%.0f %s%s", v, pre[i], unit);
}

static void draw(const struct timespec *now)
{
	char line[256], rec[32], rate[32], bytes[32];
	double secs = since(&P.start, now);
	uint64_t b = P.done_bytes + fd_offset(P.fd);
	int n;

	human(rec, sizeof(rec), (double)P.records, "records");
	human(rate, sizeof(rate), secs > 0 ? (double)P.records / secs : 0, "records/s");
	human(bytes, sizeof(bytes), (double)b, "B");
	n = snprintf(line, sizeof(line), "\r%s: %s, %s, %s", G.tool, rec, bytes, rate);
	if (P.all_files && P.total_bytes > 0 && n > 0 && (size_t)n < sizeof(line))
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", %.0f%%",
			100.0 * (double)(b > P.total_bytes ? P.total_bytes : b) / (double)P.total_bytes);
	if (n > 0 && (size_t)n < sizeof(line) - 4) {
		memcpy(line + n, "\033[K", 3);
		n += 3;
		if (write(STDERR_FILENO, line, (size_t)n) < 0) {
			/* A progress line is worth no error. */
		}
		P.drawn = 1;
	}
}

void cnt_progress_add(uint64_t n)
{
	struct timespec now;

	if (!P.on)
		return;
	P.records += n;
	if (P.records < P.next_check)
		return;
	P.next_check = P.records + (1u << 14);
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (since(&P.last, &now) < 0.25)
		return;
	P.last = now;
	draw(&now);
}

/* Clears a drawn progress line; it is drawn again at the next update. */
static void clear_progress_line(void)
{
	static const char clear[] = "\r\033[K";

	if (P.on && P.drawn) {
		if (write(STDERR_FILENO, clear, sizeof(clear) - 1) < 0) {
			/* A progress line is worth no error. */
		}
	}
	P.drawn = 0;
}

void cnt_progress_end(void)
{
	clear_progress_line();
	P.on = 0;
}

/* ---- finishing -------------------------------------------------------------------- */

int cnt_cli_finish(void)
{
	cnt_err err;

	cnt_progress_end();
	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cnt_err_write(&err, errno ? errno : EIO, "cannot write standard output");
		cnt_die_err(&err);
	}
	if (G.stats_pending) {
		G.stats_pending = 0;
		cnt_cli_commit(&G.stats_out);
	}
	/* Last: the end markers of the Avro streams on standard output, so
	 * that the next stage sees a complete stream only when this tool
	 * did everything it had to. */
	if (cnt_writer_end_deferred(&err) != 0)
		cnt_die_err(&err);
	if (fclose(stdout) != 0) {
		cnt_err_write(&err, errno, "cannot write standard output");
		cnt_die_err(&err);
	}
	return CNT_EXIT_OK;
}
