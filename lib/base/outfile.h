/*
 * outfile.h - output files that are either complete or absent.
 *
 * A named regular file is written to a hidden temporary file in the same
 * directory (".NAME.tmp-PID-XXXXXX") and renamed over NAME only by
 * cnt_out_commit(), so a tool that fails or is killed never leaves a file
 * that looks complete.  Opening NAME removes the temporary files of NAME
 * left by processes that no longer exist (killed with SIGKILL); the command
 * layer (cli/cli.h) removes a tool's own on an error or a signal.  Standard output ("-" or NULL), and names that are
 * not regular files (/dev/null, a FIFO, a terminal), are written directly.
 */
#ifndef CNT_OUTFILE_H
#define CNT_OUTFILE_H

#include <stddef.h>

#include "base/err.h"

typedef struct cnt_out {
	int fd;
	char *path;      /* final name, NULL for standard output */
	char *tmp;       /* temporary name while open, or NULL */
	int is_file;     /* output is a regular file (temporary or stdout) */
} cnt_out;

/* Opens path for writing.  Returns 0, or -1 with err naming the path. */
int cnt_out_open(cnt_out *o, const char *path, cnt_err *err);

/* The part of cnt_out_open that makes no temporary: standard output (path
 * NULL or "-"), or an existing path that is not a regular file (a FIFO, a
 * device), opened as it is.  Opening a FIFO waits for a reader, so the
 * caller does it where a signal may end the wait, and makes a temporary
 * (cnt_out_open_temp) only where signals wait (cnt_cli_out).  Returns 1
 * when o is open, 0 when path needs a temporary (o reset, nothing
 * opened), -1 with err naming the path. */
int cnt_out_open_direct(cnt_out *o, const char *path, cnt_err *err);
/* The other part: a temporary beside path, renamed over it by
 * cnt_out_commit, whatever path is by then.  0, or -1 with err set. */
int cnt_out_open_temp(cnt_out *o, const char *path, cnt_err *err);
/* Flushes to disk and renames the temporary file into place, then flushes
 * the directory (cnt_sync_dir), so that the new name survives a crash as
 * well as the bytes; closes the descriptor (except standard output).
 * Returns 0 or -1 with err set: before the rename the temporary file is
 * removed; a directory that cannot be flushed leaves the complete file
 * in place, its name not known to be on disk. */
int cnt_out_commit(cnt_out *o, cnt_err *err);

/* Flushes the directory that holds path ("." for a bare name) to disk:
 * after a rename, link or create there, the name is then on disk, not
 * only the bytes it names.  A file system that cannot flush a directory
 * (EINVAL), or a directory this process may not open (EACCES), is left as
 * it is, as PostgreSQL does.  0, or -1 with err naming the file. */
int cnt_sync_dir(const char *path, cnt_err *err);
/* Removes the temporary file, if any, and closes.  Safe to call twice. */
void cnt_out_abort(cnt_out *o);

/* Whether the codec default for this output should be the file one
 * (zstandard) rather than the pipe one (null). */
int cnt_out_wants_compression(const cnt_out *o);

/* The descriptors of the temporary files this process made for its
 * outputs (cnt_out_open_temp) and has not yet committed or removed: no
 * other writer shares them or their offset.  A deferred Avro header is
 * guessed only on such a file (avro/container.h, cnt_writer_defer).
 * cnt_fd_own marks another (the tests); at most 16 are kept, and one
 * beyond them is simply not marked. */
void cnt_fd_own(int fd);
void cnt_fd_disown(int fd);
int cnt_fd_owned(int fd);

/* Writes all n bytes to fd, retrying short writes.  0 or -1 (errno set). */
int cnt_write_all(int fd, const void *p, size_t n);

/* Appends the line to the ledger open on fd (O_APPEND) at path in one
 * write, then flushes it to disk; a ledger that was empty (just made)
 * has its directory flushed too (cnt_sync_dir), so that its name is on
 * disk with its first line.  what names it in a message ("ledger").
 * 0, or -1 with err set. */
int cnt_append_durable(int fd, const char *path, const char *what, const char *line, cnt_err *err);

#endif
