/*
 * text.c - bytes from files we distrust, shown to a person (see text.h).
 */
#include "base/text.h"

#include <locale.h>
#include <pthread.h>
#include <string.h>
#include <wchar.h>

static const char hexd[] = "0123456789abcdef";

static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;
static locale_t utf8_locale;   /* C.UTF-8, for its character widths */

static void utf8_open(void)
{
	utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/* The columns the valid UTF-8 character at p (l > 1 bytes) takes on a
 * terminal: the C library's wcwidth in C.UTF-8 (two for a wide CJK
 * character or an emoji, none for a combining mark), or 1 when it has no
 * answer or no such locale. */
static size_t columns(const uint8_t *p, size_t l)
{
	uint32_t cp = l == 2 ? (uint32_t)(p[0] & 0x1f) : l == 3 ? (uint32_t)(p[0] & 0x0f) : (uint32_t)(p[0] & 0x07);
	locale_t old;
	int w;

	for (size_t k = 1; k < l; k++)
		cp = cp << 6 | (uint32_t)(p[k] & 0x3f);
	pthread_once(&utf8_once, utf8_open);
	if (utf8_locale == (locale_t)0)
		return 1;
	old = uselocale(utf8_locale);
	w = wcwidth((wchar_t)cp);
	uselocale(old);
	return w < 0 ? 1 : (size_t)w;
}

/* Whether the valid UTF-8 character at p (l bytes) is one text.h's rule
 * escapes although it is valid: C1, a separator, a bidirectional control. */
static int hidden(const uint8_t *p, size_t l)
{
	if (l == 2)
		return (p[0] == 0xc2 && p[1] <= 0x9f) || (p[0] == 0xd8 && p[1] == 0x9c);
	if (l != 3 || p[0] != 0xe2)
		return 0;
	if (p[1] == 0x80)
		return p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xa8 && p[2] <= 0xae);
	return p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9;
}

/* Writes p[0..n) into out, at most room bytes (SIZE_MAX: out has 4 bytes
 * per input byte and 4 more), "..." included; returns the bytes written,
 * *chars the columns they take.  out NULL: only counts them.  keep_bs:
 * the backslash as it is (cnt_line_shown). */
static size_t show(const uint8_t *p, size_t n, size_t max, int keep_bs, size_t room, char *out,
	size_t *chars)
{
	size_t o = 0, i = 0, c = 0, forced = 0;

	while (i < n && i < max) {
		size_t l = forced ? 0 : cnt_utf8_len(p + i, n - i);
		int esc;

		if (l > 1 && hidden(p + i, l))
			forced = l;   /* escaped a byte at a time, so that max still bounds the room */
		esc = forced || l == 0 || p[i] < 0x20 || p[i] == 0x7f || (p[i] == '\\' && !keep_bs);
		if (o + (esc ? 4 : l) + 3 > room)
			break;        /* a whole escape or character, and room for "..." */
		if (esc) {
			if (forced)
				forced--;
			if (out) {
				out[o] = '\\';
				out[o + 1] = 'x';
				out[o + 2] = hexd[p[i] >> 4];
				out[o + 3] = hexd[p[i] & 15];
			}
			o += 4;
			c += 4;
			i++;
		} else {
			if (out)
				memcpy(out + o, p + i, l);
			o += l;
			c += l == 1 ? 1 : columns(p + i, l);
			i += l;
		}
	}
	if (i < n) {
		if (out)
			memcpy(out + o, "...", 3);
		o += 3;
		c += 3;
	}
	*chars = c;
	return o;
}

long cnt_buf_shown(cnt_buf *b, const void *p, size_t n, size_t max)
{
	size_t m = n < max ? n : max, chars;

	if (cnt_buf_reserve(b, CNT_SHOWN_SIZE(m)) != 0)
		return -1;
	b->len += show(p, n, max, 0, SIZE_MAX, (char *)b->p + b->len, &chars);
	return (long)chars;
}

const char *cnt_shown(const void *p, size_t n, size_t max, char *out)
{
	size_t chars;

	out[show(p, n, max, 0, SIZE_MAX, out, &chars)] = 0;
	return out;
}

const char *cnt_line_shown(const char *in, size_t n, char *out, size_t size)
{
	size_t chars;

	/* whole when it fits; else cut, with room kept for "..." */
	size_t room = show((const uint8_t *)in, n, n, 1, SIZE_MAX, NULL, &chars) < size ? SIZE_MAX : size - 1;

	out[show((const uint8_t *)in, n, n, 1, room, out, &chars)] = 0;
	return out;
}

size_t cnt_utf8_cut(const void *p, size_t n, size_t max)
{
	const uint8_t *b = p;
	const uint8_t *nul = n ? memchr(b, 0, n < max ? n : max) : NULL;
	size_t k;

	if (nul != NULL)
		return (size_t)(nul - b);   /* printf's %.*s would stop there anyway */
	if (n <= max)
		return n;
	/* b[max] is the first byte left out: back over a character it ends. */
	for (k = max; k > 0 && max - k < 3 && (b[k] & 0xc0) == 0x80; k--)
		;
	if (k < max && cnt_utf8_len(b + k, n - k) > max - k)
		return k;
	return max;
}
