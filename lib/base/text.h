/*
 * text.h - bytes from files we distrust, shown to a person.
 *
 * Names in segments, hold files, bucket files and views hold whatever
 * their writer put there.  The places that show one to a person (reject
 * lines, -v notes, refusals of a name a ledger cannot hold, the tables of
 * cnt-audit, cnt-hold and cnt-seal; cnt(7) lists them) go through
 * cnt_buf_shown() or cnt_shown(), so that one rule holds in all of them:
 * valid UTF-8 is shown as it is, but these are written as \xNN, byte by
 * byte:
 *   - control characters: C0 (NUL too), DEL and C1 (U+0080..U+009F, which
 *     some terminals obey as escape sequences or line ends);
 *   - Unicode's line and paragraph separators (U+2028, U+2029) and its
 *     bidirectional controls (U+061C, U+200E, U+200F, U+202A..U+202E,
 *     U+2066..U+2069), which break a line or reorder what follows;
 *   - the backslash, so that a \xNN seen is always an escape;
 *   - every byte that is not part of valid UTF-8.
 * A line stays one line and reads in its own order.
 */
#ifndef CNT_TEXT_H
#define CNT_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* Length of the valid UTF-8 sequence at p (1..4, of n > 0 bytes), or 0
 * when it is not one: overlong forms, surrogates and code points past
 * U+10FFFF are not. */
static inline size_t cnt_utf8_len(const uint8_t *p, size_t n)
{
	uint8_t c = p[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (n < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f))
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (n < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

/* Appends p[0..n) to b by the rule above.  The first max bytes are shown
 * (a character begun there whole, unless it is escaped); when that leaves
 * some out, "..." follows.
 * Returns the columns the text takes on a terminal, for tables that pad
 * to a column: an escape four, a wide (CJK, emoji) character two, a
 * combining mark none, by the C library's wcwidth in the C.UTF-8 locale
 * (one a character without it); or -1 when out of memory. */
long cnt_buf_shown(cnt_buf *b, const void *p, size_t n, size_t max);

/* Room cnt_shown() needs for max bytes: four per byte, "..." and a NUL. */
#define CNT_SHOWN_SIZE(max) (4 * (size_t)(max) + 4)

/* The same into out, which has CNT_SHOWN_SIZE(max) bytes, for a message
 * built with printf; returns out.  Never fails.  max is a small constant
 * (a message's budget), never one near SIZE_MAX / 4. */
const char *cnt_shown(const void *p, size_t n, size_t max, char *out);

/* A message line for standard error, in[0..n) into out (of size bytes, at
 * least 4), by the rule above but with the backslash kept as it is.  The
 * names a message shows by the rule (their backslashes escaped already)
 * pass unchanged; a name that reached the message without it (an
 * option's value, or a name from a file that a message missed) still
 * cannot break the line or send a terminal anything it would obey.  At
 * most size - 1 bytes and a NUL are written: a line longer than that ends
 * after a whole character or escape, with "...".  CNT_SHOWN_SIZE(n) bytes
 * hold any line whole.  Returns out. */
const char *cnt_line_shown(const char *in, size_t n, char *out, size_t size);

/* The length of p[0..n) cut to at most max bytes without splitting a
 * UTF-8 character: when the byte after the cut continues a character, the
 * cut moves back to that character's first byte (at most three bytes
 * back; bytes that are not UTF-8 are cut where they fall).  A NUL ends
 * it, as it would end printf's %.*s.  For reject messages, which give a
 * name from a file raw and are shown by the rule above later (reject
 * lines) or written as JSON strings (reject files); an error message
 * for stderr uses cnt_shown instead. */
size_t cnt_utf8_cut(const void *p, size_t n, size_t max);

/* The arguments of printf's "%.*s%s" for the slice s cut to max bytes by
 * cnt_utf8_cut, followed by "..." when something was cut. */
#define CNT_CUT(s, max) (int)cnt_utf8_cut((s).p, (s).n, (max)), ((s).p ? (s).p : ""), \
	(cnt_utf8_cut((s).p, (s).n, (max)) < (s).n ? "..." : "")

#endif
