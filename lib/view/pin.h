/*
 * pin.h - session tokens that pin a view version (cnt-rank(1), "PINNED
 * AND CONDITIONAL READS").
 *
 * Every answer carries a token naming what it was answered from: the
 * count (fast or verified), the board, the scope, the version and the
 * version's content.  A client that pages through a board, or asks for a
 * rank and then the neighbourhood, passes the token back (--pin) and is
 * answered from that same version while it is retained; a conditional
 * read (--if-newer) passes it to learn whether anything was published
 * since.
 *
 * The token is one word, safe in a shell, a URL query and JSON:
 *
 *   cnt1:<board>:<scope>:<version>:<content>       the fast count
 *   cnt1v:<board>:<scope>:<version>:<content>      the verified count
 *
 * board and scope are written with every byte outside [A-Za-z0-9._-] as
 * %XX (two upper-case hex digits), so ':' never occurs inside them and a
 * token has exactly one spelling; version is decimal 1..999999 without
 * leading zeros; content is 16 lower-case hex digits, the XOR of the two
 * checksums at the start of the version's index.bin (the header checksum,
 * which covers the description with its as-of and build time, and the data
 * checksum, which covers every entry and name; cnt-view(5)).  Version
 * numbers are per scope and only grow, but a scope rebuilt from scratch
 * (its directory removed, cnt-rebuild) numbers from 1 again: the content
 * part is what keeps a token from silently matching a different view that
 * reused its number.  It is not a signature: a token is a handle, not a
 * credential, and tenant separation (--tenant) is checked as for any read.
 */
#ifndef CNT_VIEW_PIN_H
#define CNT_VIEW_PIN_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "view/view.h"

#define CNT_PIN_KEY_MAX 1024        /* bytes of a board or scope in a token */

typedef struct cnt_pin_token {
	int verified;                   /* 1: cnt1v, the verified count */
	char board[CNT_PIN_KEY_MAX + 1];
	char scope[CNT_PIN_KEY_MAX + 1];
	size_t board_len, scope_len;    /* decoded; may hold any byte but NUL */
	int version;
	uint64_t content;
} cnt_pin_token;

/* The content part of v's token: the header checksum XOR the data
 * checksum, as the file's first 32 bytes hold them (v was opened, so they
 * were read from a file that passed cnt_view_open()'s checks). */
uint64_t cnt_pin_content(const cnt_view *v);

/* Appends the token of (verified, board, scope, version, content) to out.
 * 0, or -1 when out of memory. */
int cnt_pin_encode(int verified, const char *board, const char *scope, int version, uint64_t content,
	cnt_buf *out);

/* The token of the view v (its description's board, scope, version and
 * verified flag, and cnt_pin_content()). */
int cnt_pin_of_view(const cnt_view *v, cnt_buf *out);

/* Parses s as a token in its one spelling.  0, or -1 with err saying
 * what is wrong (kind CNT_ERR_DATA: a usage error for the caller). */
int cnt_pin_parse(const char *s, cnt_pin_token *t, cnt_err *err);

/* Whether t is of board and scope (and of the verified count when
 * verified).  0, or -1 with err naming both (a usage error). */
int cnt_pin_check(const cnt_pin_token *t, const char *board, const char *scope, int verified, cnt_err *err);

/* --if-newer N: the argument is a version number (1..999999) or a token.
 * Sets *version, and *t / *has_token when a token.  0, or -1 with err set. */
int cnt_pin_parse_if_newer(const char *s, int *version, cnt_pin_token *t, int *has_token, cnt_err *err);

/* Whether the published view v answers "not modified" to a client that
 * holds version (and, with a token, content t->content): the published
 * version is that version and, when a token was given, its content is the
 * token's.  Any other published version - a later build, or an earlier
 * one published again (a rollback) - is a change. */
int cnt_pin_not_modified(const cnt_view *v, int version, const cnt_pin_token *t);

/* Opens the view of (board, scope) under views that an answer is given
 * from, as cnt_viewdir_open() (or cnt_verified_open() when verified)
 * does: the version pinned by the token pin when not NULL, else version
 * *version, else the published one; *version is set to the one opened.
 * A version no longer in the scope's directory that the retention record
 * (view/retain.h) says was retired, and any pinned version no longer
 * there or whose content is not the token's (the scope was rebuilt and
 * the number reused, or the token altered), is an error of kind
 * CNT_ERR_RETIRED naming the version, when it was retired if known, and
 * the published version now.  0, or -1 with err set. */
int cnt_pin_open(cnt_view *v, const char *views, const char *board, const char *scope, int verified,
	const cnt_pin_token *pin, int *version, char *vdir, size_t n, int *frozen, cnt_err *err);

#endif
