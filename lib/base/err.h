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

/* The one exit-status table for every tool (documented in cnt(7)). */
enum {
	CNT_EXIT_OK = 0,      /* success */
	CNT_EXIT_DIFFER = 1,  /* a "differs" answer (cnt-diff), like diff(1) */
	CNT_EXIT_TROUBLE = 2, /* usage error, or bad data that stops the tool */
	CNT_EXIT_IO = 3       /* an output could not be written (disk full, ...) */
};

typedef struct cnt_err {
	char msg[1024];
} cnt_err;

/* Sets err->msg from a printf format; returns -1 so callers can
 * "return cnt_err_set(err, ...)".  err may be NULL. */
int cnt_err_set(cnt_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prefixes the existing message with "<prefix>: " (used to add the file or
 * record position as an error travels up).  Returns -1. */
int cnt_err_prefix(cnt_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
