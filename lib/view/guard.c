/*
 * guard.c - the display-count guard (see guard.h).
 *
 * The entries are a sorted array searched by bisection: a guard file is
 * read whole and written whole on every use, so a table would not make
 * anything cheaper than that.
 */
#include "view/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "view/rank.h"

typedef struct gkey {
	const char *p;
	size_t n;
} gkey;

typedef struct gentry {
	gkey k[3];               /* board, scope, member */
	char *mem[3];            /* what k points at */
	int64_t served;
	int has_vas_of;
	int64_t vas_of;          /* the as-of of the verified value that last reset the floor */
	uint64_t clamps;
} gentry;

struct cnt_guard {
	gentry *e;
	size_t n, cap;
};

cnt_guard *cnt_guard_new(void)
{
	return calloc(1, sizeof(cnt_guard));
}

void cnt_guard_free(cnt_guard *g)
{
	if (g == NULL)
		return;
	for (size_t i = 0; i < g->n; i++)
		for (int j = 0; j < 3; j++)
			free(g->e[i].mem[j]);
	free(g->e);
	free(g);
}

size_t cnt_guard_count(const cnt_guard *g)
{
	return g->n;
}

int cnt_guard_window_ok(cnt_window_kind k)
{
	return k == CNT_WIN_ALL_TIME || k == CNT_WIN_RANGE || k == CNT_WIN_SEASON;
}

static int key_cmp(const gkey *a, const char *p, size_t n)
{
	size_t m = a->n < n ? a->n : n;
	int d = m ? memcmp(a->p, p, m) : 0;

	if (d)
		return d;
	return a->n < n ? -1 : a->n > n;
}

static int entry_cmp(const gentry *e, const gkey *k)
{
	int d;

	for (int j = 0; j < 3; j++)
		if ((d = key_cmp(&e->k[j], k[j].p, k[j].n)) != 0)
			return d;
	return 0;
}

/* The position of k, or where it would go (*found 0). */
static size_t find(const cnt_guard *g, const gkey *k, int *found)
{
	size_t lo = 0, hi = g->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = entry_cmp(&g->e[mid], k);

		if (d == 0) {
			*found = 1;
			return mid;
		}
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = 0;
	return lo;
}

/* Inserts a new entry with copies of the keys at position at. */
static gentry *insert(cnt_guard *g, size_t at, const gkey *k)
{
	gentry e;

	memset(&e, 0, sizeof(e));
	if (g->n == g->cap) {
		size_t c = g->cap ? g->cap * 2 : 16;
		gentry *v = realloc(g->e, c * sizeof(*v));

		if (v == NULL)
			return NULL;
		g->e = v;
		g->cap = c;
	}
	for (int j = 0; j < 3; j++) {
		e.mem[j] = malloc(k[j].n + 1);
		if (e.mem[j] == NULL) {
			for (int i = 0; i < j; i++)
				free(e.mem[i]);
			return NULL;
		}
		if (k[j].n)
			memcpy(e.mem[j], k[j].p, k[j].n);
		e.mem[j][k[j].n] = 0;
		e.k[j].p = e.mem[j];
		e.k[j].n = k[j].n;
	}
	memmove(&g->e[at + 1], &g->e[at], (g->n - at) * sizeof(gentry));
	g->e[at] = e;
	g->n++;
	return &g->e[at];
}

int cnt_guard_serve(cnt_guard *g, const char *board, const char *scope, const char *member, size_t mlen,
	int64_t value, int verified, int64_t as_of, cnt_guard_step *out, cnt_err *err)
{
	gkey k[3] = {{board, strlen(board)}, {scope, strlen(scope)}, {member, mlen}};
	int found;
	size_t at = find(g, k, &found);
	gentry *e = found ? &g->e[at] : NULL;

	memset(out, 0, sizeof(*out));
	if (k[0].n == 0 || k[1].n == 0 || mlen == 0)
		return cnt_err_set(err, "guard: an empty board, scope or member cannot be guarded");
	out->served = value;
	if (e) {
		out->had_floor = 1;
		out->floor = e->served;
	}
	if (verified) {
		if (e && e->has_vas_of && as_of < e->vas_of) {
			/* an older audit than the one that set the floor */
			out->old_verified = 1;
			return 0;
		}
		if (e == NULL && (e = insert(g, at, k)) == NULL)
			return cnt_err_oom(err, "guard");
		e->served = value;
		e->has_vas_of = 1;
		e->vas_of = as_of;
		out->reset = 1;
		return 0;
	}
	if (e == NULL) {
		if ((e = insert(g, at, k)) == NULL)
			return cnt_err_oom(err, "guard");
		e->served = value;
		return 0;
	}
	if (value < e->served) {
		out->served = e->served;
		out->clamped = 1;
		e->clamps++;
		return 0;
	}
	e->served = value;
	return 0;
}

/* ---- the file --------------------------------------------------------- */

static int put_key(cnt_buf *b, const gkey *k)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < k->n; i++) {
		unsigned char c = (unsigned char)k->p[i];

		if (c > ' ' && c <= '~' && c != '%') {
			if (cnt_buf_putc(b, c) != 0)
				return -1;
		} else if (cnt_buf_putc(b, '%') || cnt_buf_putc(b, (uint8_t)hex[c >> 4]) ||
			cnt_buf_putc(b, (uint8_t)hex[c & 15])) {
			return -1;
		}
	}
	return 0;
}

int cnt_guard_write(const cnt_guard *g, cnt_buf *out)
{
	size_t start = out->len;
	int rc = cnt_buf_printf(out, "cnt-guard 1\n");

	for (size_t i = 0; rc == 0 && i < g->n; i++) {
		const gentry *e = &g->e[i];

		rc = put_key(out, &e->k[0]) || cnt_buf_putc(out, ' ') || put_key(out, &e->k[1]) ||
			cnt_buf_putc(out, ' ') || put_key(out, &e->k[2]) || cnt_buf_printf(out, " %" PRId64, e->served) ||
			(e->has_vas_of ? cnt_buf_printf(out, " %" PRId64, e->vas_of) : cnt_buf_printf(out, " -")) ||
			cnt_buf_printf(out, " %" PRIu64 "\n", e->clamps);
	}
	if (rc == 0)
		rc = cnt_buf_printf(out, "end %zu %016" PRIx64 "\n", g->n,
			(uint64_t)XXH3_64bits(out->p + start, out->len - start));
	return rc ? -1 : 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes field [p, p+n) in place into k (k->p points into the copy). */
static int get_key(char *p, size_t n, gkey *k)
{
	size_t o = 0;

	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '%') {
			int h, l;

			if (i + 2 >= n)
				return -1;
			h = hexval(p[i + 1]);
			l = hexval(p[i + 2]);
			if (h < 0 || l < 0)
				return -1;
			c = (unsigned char)(h * 16 + l);
			/* only the bytes the writer escapes: one spelling per key */
			if (c > ' ' && c <= '~' && c != '%')
				return -1;
			i += 2;
		} else if (c <= ' ' || c > '~') {
			return -1;
		}
		p[o++] = (char)c;
	}
	k->p = p;
	k->n = o;
	return 0;
}

/* A strict decimal integer (a leading '-' when neg_ok). */
static int get_num(const char *p, size_t n, int neg_ok, int64_t *out)
{
	int neg = 0;
	uint64_t v = 0, lim;

	if (n && p[0] == '-' && neg_ok) {
		neg = 1;
		p++;
		n--;
	}
	if (n == 0 || n > 20 || (n > 1 && p[0] == '0'))
		return -1;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9' || v > (lim - (uint64_t)(p[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	if (neg && v == 0)
		return -1;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

/* Splits line [p, p+n) at single spaces into at most max fields. */
static size_t split(char *p, size_t n, char **f, size_t *fl, size_t max)
{
	size_t nf = 0, s = 0;

	for (size_t i = 0; i <= n; i++)
		if (i == n || p[i] == ' ') {
			if (nf == max)
				return max + 1;
			f[nf] = p + s;
			fl[nf++] = i - s;
			s = i + 1;
		}
	return nf;
}

#define BAD(...) do { cnt_err_set(err, __VA_ARGS__); goto fail; } while (0)

cnt_guard *cnt_guard_parse(const char *text, size_t n, const char *name, cnt_err *err)
{
	cnt_guard *g = cnt_guard_new();
	char *copy = NULL, *p, *end, *last;
	size_t lineno = 1, nent = 0;
	int64_t declared;
	char want[17];

	if (g == NULL || (copy = malloc(n + 1)) == NULL) {
		cnt_guard_free(g);
		cnt_err_oom(err, "reading the guard '%s'", name);
		return NULL;
	}
	memcpy(copy, text, n);
	copy[n] = 0;
	if (n == 0 || copy[n - 1] != '\n')
		BAD("guard '%s': damaged: %s", name, n == 0 ? "empty" : "the last line is cut short");
	if (n < 12 || memcmp(copy, "cnt-guard 1\n", 12) != 0)
		BAD("guard '%s': not a guard file (it must start with \"cnt-guard 1\")", name);
	/* the last line: end N checksum, over every byte before it */
	for (last = copy + n - 1; last > copy && last[-1] != '\n'; last--)
		;
	{
		char *f[4];
		size_t fl[4], nf = split(last, (size_t)(copy + n - 1 - last), f, fl, 3);

		if (nf != 3 || fl[0] != 3 || memcmp(f[0], "end", 3) != 0 || get_num(f[1], fl[1], 0, &declared) != 0 ||
		    fl[2] != 16)
			BAD("guard '%s': damaged: the last line is not \"end <entries> <checksum>\"", name);
		snprintf(want, sizeof(want), "%016" PRIx64, (uint64_t)XXH3_64bits(copy, (size_t)(last - copy)));
		if (memcmp(want, f[2], 16) != 0)
			BAD("guard '%s': damaged: the checksum does not match its contents", name);
	}
	for (p = copy + 12; p < last; p = end + 1) {
		char *f[7];
		size_t fl[7], nf;
		gkey k[3];
		int64_t served, vas = 0, clamps;
		int found;
		size_t at;
		gentry *e;

		lineno++;
		end = memchr(p, '\n', (size_t)(last - p));
		nf = split(p, (size_t)(end - p), f, fl, 6);
		if (nf != 6)
			BAD("guard '%s' line %zu: expected board scope member served verified_as_of clamps", name, lineno);
		for (int j = 0; j < 3; j++)
			if (get_key(f[j], fl[j], &k[j]) != 0)
				BAD("guard '%s' line %zu: field %d is not an encoded key", name, lineno, j + 1);
		if (get_num(f[3], fl[3], 1, &served) != 0 ||
		    (!(fl[4] == 1 && f[4][0] == '-') && get_num(f[4], fl[4], 1, &vas) != 0) ||
		    get_num(f[5], fl[5], 0, &clamps) != 0)
			BAD("guard '%s' line %zu: a number is malformed", name, lineno);
		at = find(g, k, &found);
		if (found || at != g->n)
			BAD("guard '%s' line %zu: out of order or repeated", name, lineno);
		if ((e = insert(g, at, k)) == NULL) {
			cnt_err_oom(err, "reading the guard '%s'", name);
			goto fail;
		}
		e->served = served;
		e->has_vas_of = !(fl[4] == 1 && f[4][0] == '-');
		e->vas_of = vas;
		e->clamps = (uint64_t)clamps;
		nent++;
	}
	if ((int64_t)nent != declared)
		BAD("guard '%s': damaged: %zu entries, the last line says %" PRId64, name, nent, declared);
	free(copy);
	return g;
fail:
	free(copy);
	cnt_guard_free(g);
	return NULL;
}

cnt_guard *cnt_guard_load(const char *path, cnt_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	cnt_guard *g;
	char *text;
	size_t got = 0;

	if (fd < 0) {
		if (errno == ENOENT) {
			g = cnt_guard_new();
			if (g == NULL)
				cnt_err_oom(err, "guard '%s'", path);
			return g;
		}
		cnt_err_set(err, "cannot open the guard '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		cnt_err_set(err, "guard '%s': not a regular file", path);
		return NULL;
	}
	if ((text = malloc((size_t)sb.st_size + 1)) == NULL) {
		close(fd);
		cnt_err_oom(err, "reading the guard '%s'", path);
		return NULL;
	}
	while (got < (size_t)sb.st_size) {
		ssize_t r = read(fd, text + got, (size_t)sb.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	g = cnt_guard_parse(text, got, path, err);
	free(text);
	return g;
}

int cnt_guard_answer(cnt_guard *g, cnt_rank_answer *a, cnt_err *err)
{
	const cnt_viewdesc *d = &a->view->desc;
	cnt_guard_step st;

	if (a->kind != CNT_RANK_Q_VALUE)
		return cnt_err_set(err, "the guard serves a member's value, not %s", cnt_rank_qname(a->kind));
	if (!cnt_guard_window_ok(d->window_kind))
		return cnt_err_set(err, "board '%s' has a %s window, whose counts drop as it moves: the guard only serves "
			"all_time, range and season boards", d->board, cnt_defs_window_name(d->window_kind));
	a->unguarded = a->found ? a->value : 0;
	if (cnt_guard_serve(g, d->board, d->scope, a->member, strlen(a->member), a->unguarded, d->verified,
		d->has_as_of ? d->as_of : INT64_MIN, &st, err) != 0)
		return -1;
	a->guarded = 1;
	a->value = st.served;
	a->guard_clamped = st.clamped;
	a->guard_reset = st.reset;
	a->guard_old = st.old_verified;
	a->guard_had_floor = st.had_floor;
	a->guard_floor = st.floor;
	return 0;
}
