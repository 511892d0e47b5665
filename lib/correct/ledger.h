/*
 * ledger.h - append-only, hash-chained JSON-lines ledgers: the retraction
 * ledger (cnt-retraction(5)) and the seal ledger (cnt-sealed(5)).
 *
 * A ledger is a file of JSON objects, one a line, each ending in a
 * newline.  Every record holds "prev", the XXH3-128 of the bytes of the
 * line before it (without its newline), written as 32 lowercase hex
 * digits, the high 64 bits first (as xxhsum -H2 prints it); the first
 * line's "prev" is 32 zeros.  Changing, inserting or removing a line
 * therefore breaks the chain at the line after it; only the last line is
 * not covered by a later one, which is why the seal ledger keeps a head
 * file beside it (cnt-sealed(5)).  Appending is one write(2) of whole
 * lines to a descriptor opened O_APPEND, then fsync(2)
 * (cnt_retract_ledger_append); nothing is ever rewritten.
 */
#ifndef CNT_CORRECT_LEDGER_H
#define CNT_CORRECT_LEDGER_H

#include <stddef.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/fpset.h"

/* XXH3-128 of n bytes. */
cnt_fp cnt_ledger_hash(const void *p, size_t n);
/* fp as 32 lowercase hex digits, high half first, NUL-terminated. */
void cnt_ledger_hex(cnt_fp fp, char out[33]);
/* Parses 32 lowercase hex digits (exactly; s NUL-terminated).  0 or -1. */
int cnt_ledger_hex_parse(const char *s, cnt_fp *fp);

/* Reads all of fd into out (appended).  0, or -1 with err naming the
 * file (CNT_ERR_DATA for a read error, CNT_ERR_NOMEM). */
int cnt_ledger_slurp(int fd, const char *name, cnt_buf *out, cnt_err *err);

/* Called for each record: rec is the parsed object (borrowed: the walk
 * frees it), line and len its bytes without the newline.  0, or -1 with
 * err set, which ends the walk. */
typedef int (*cnt_ledger_fn)(void *ctx, json_t *rec, size_t lineno, const char *line, size_t len,
	cnt_err *err);

/* Walks the n bytes of a ledger at p (what: "ledger", "seal ledger", for
 * messages; name: its file), checking every line: a JSON object (no
 * duplicate keys), a newline at its end, and "prev" the hash of the line
 * before; then calls fn (when not NULL).  *last is set to the hash of the
 * last line (zero for an empty ledger) and *lines to the number of lines.
 * 0, or -1 with err naming the line (CNT_ERR_DATA; CNT_ERR_NOMEM). */
int cnt_ledger_walk(const void *p, size_t n, const char *what, const char *name, cnt_ledger_fn fn,
	void *ctx, cnt_fp *last, size_t *lines, cnt_err *err);

#endif
