/*
 * err.h - error reporting and exit statuses shared by every cnt tool.
 *
 * lib/ never prints and never exits.  A function that can fail returns 0 on
 * success and -1 on failure (or a pointer / NULL) and fills the caller's
 * cnt_err with one line that names the place: file, block, record, field.
 * Only cmd/ turns that into a message on stderr and an exit status.
 */
#ifndef CNT_ERR_H
#define CNT_ERR_H

#include <stdarg.h>

/* The one exit-status table for every tool (documented in cnt(7), "EXIT
 * STATUS", and proved for each tool by tests/faults.bats).  A closed pipe
 * is not in it: the tool removes its temporary files and ends by SIGPIPE,
 * quietly, as it would have had it not caught the signal (the shell shows
 * 141); SIGINT, SIGTERM and SIGHUP likewise end it by their own signal. */
enum {
	CNT_EXIT_OK = 0,      /* success */
	CNT_EXIT_DIFFER = 1,  /* a "differs" answer (cnt-diff), like diff(1) */
	CNT_EXIT_TROUBLE = 2, /* usage error, or bad data that stops the tool */
	CNT_EXIT_IO = 3,      /* an output could not be written (disk full, ...) */
	CNT_EXIT_NOMEM = 4,   /* out of memory */
	CNT_EXIT_REFUSED = 5, /* refused: not the asking tenant's data (cnt(7),
	                       * "TENANT SEPARATION") */
	CNT_EXIT_NOT_MODIFIED = 6, /* cnt-rank --if-newer: nothing published
	                       * since the client's version; no body */
	CNT_EXIT_RETIRED = 7  /* a pinned view version is no longer retained */
};

/* What kind of failure an error is: it decides the exit status. */
typedef enum cnt_err_kind {
	CNT_ERR_DATA = 0,     /* bad input, bad options, anything else: exit 2 */
	CNT_ERR_IO,           /* an output could not be written: exit 3 */
	CNT_ERR_NOMEM,        /* an allocation failed: exit 4 */
	CNT_ERR_PIPE,         /* the reader of an output went away (EPIPE) */
	CNT_ERR_REFUSED,      /* another tenant's data, refused: exit 5 */
	CNT_ERR_RETIRED       /* a pinned view version was retired: exit 7 */
} cnt_err_kind;

typedef struct cnt_err {
	char msg[1024];
	cnt_err_kind kind;
} cnt_err;

/* Sets err->msg from a printf format, kind CNT_ERR_DATA (CNT_ERR_NOMEM
 * when the format itself says "out of memory"); returns -1 so callers
 * can "return cnt_err_set(err, ...)".  err may be NULL. */
int cnt_err_set(cnt_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Sets "out of memory", kind CNT_ERR_NOMEM.  Returns -1.  err may be NULL. */
int cnt_err_nomem(cnt_err *err);

/* The same with what was being done: "out of memory <printf message>". */
int cnt_err_oom(cnt_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A failed write: sets "<printf message>: strerror(errnum)", kind
 * CNT_ERR_PIPE when errnum is EPIPE, else CNT_ERR_IO.  Returns -1. */
int cnt_err_write(cnt_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefixes the existing message with "<prefix>: " (used to add the file or
 * record position as an error travels up); the kind is kept.  Returns -1. */
int cnt_err_prefix(cnt_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
