/*
 * pin.c - session tokens (see pin.h).
 */
#include "view/pin.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "view/retain.h"
#include "view/verified.h"

static int safe_byte(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
		c == '_' || c == '-';
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

uint64_t cnt_pin_content(const cnt_view *v)
{
	if (v->map == NULL || v->map_len < 32)
		return 0;
	return le64(v->map + 8) ^ le64(v->map + 24);
}

static int put_key(cnt_buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (safe_byte(*p)) {
			if (cnt_buf_putc(out, (char)*p) != 0)
				return -1;
		} else if (cnt_buf_putc(out, '%') != 0 || cnt_buf_putc(out, hex[*p >> 4]) != 0 ||
			cnt_buf_putc(out, hex[*p & 15]) != 0) {
			return -1;
		}
	}
	return 0;
}

int cnt_pin_encode(int verified, const char *board, const char *scope, int version, uint64_t content,
	cnt_buf *out)
{
	return cnt_buf_printf(out, "%s:", verified ? "cnt1v" : "cnt1") || put_key(out, board) ||
		cnt_buf_putc(out, ':') || put_key(out, scope) ||
		cnt_buf_printf(out, ":%d:%016" PRIx64, version, content) ? -1 : 0;
}

int cnt_pin_of_view(const cnt_view *v, cnt_buf *out)
{
	return cnt_pin_encode(v->desc.verified, v->desc.board, v->desc.scope, v->desc.version, cnt_pin_content(v),
		out);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Decodes one key of the token, up to the next ':'; *s is moved past it. */
static int get_key(const char **s, char *out, size_t *len, const char *what, cnt_err *err)
{
	const char *p = *s;
	size_t n = 0;

	for (; *p && *p != ':'; p++) {
		int c;

		if (n == CNT_PIN_KEY_MAX)
			return cnt_err_set(err, "the token's %s is longer than %d bytes", what, CNT_PIN_KEY_MAX);
		if (*p == '%') {
			int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);

			if (hi < 0 || lo < 0 || (c = hi * 16 + lo) == 0 || safe_byte((unsigned char)c))
				return cnt_err_set(err, "the token's %s has a bad %%-escape", what);
			p += 2;
		} else if (safe_byte((unsigned char)*p)) {
			c = (unsigned char)*p;
		} else {
			return cnt_err_set(err, "the token's %s holds a character that must be %%-escaped", what);
		}
		out[n++] = (char)c;
	}
	if (n == 0 || *p != ':')
		return cnt_err_set(err, "the token has no %s", what);
	out[n] = 0;
	*len = n;
	*s = p + 1;
	return 0;
}

static int get_version(const char *s, size_t n, int *version)
{
	int v = 0;

	if (n == 0 || n > 6 || s[0] == '0')
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*version = v;
	return 0;
}

int cnt_pin_parse(const char *s, cnt_pin_token *t, cnt_err *err)
{
	const char *p = s, *colon;
	uint64_t sum = 0;
	cnt_err e;

	memset(t, 0, sizeof(*t));
	if (strncmp(p, "cnt1:", 5) == 0) {
		p += 5;
	} else if (strncmp(p, "cnt1v:", 6) == 0) {
		t->verified = 1;
		p += 6;
	} else {
		return cnt_err_set(err, "'%.64s' is not a cnt-rank token (cnt1:board:scope:version:content)", s);
	}
	if (get_key(&p, t->board, &t->board_len, "board", &e) != 0 ||
	    get_key(&p, t->scope, &t->scope_len, "scope", &e) != 0)
		return cnt_err_set(err, "'%.64s' is not a cnt-rank token: %s", s, e.msg);
	colon = strchr(p, ':');
	if (colon == NULL || get_version(p, (size_t)(colon - p), &t->version) != 0)
		return cnt_err_set(err, "'%.64s' is not a cnt-rank token: its version is not 1 to 999999", s);
	p = colon + 1;
	for (int i = 0; i < 16; i++) {
		int d = p[i] >= '0' && p[i] <= '9' ? p[i] - '0' : p[i] >= 'a' && p[i] <= 'f' ? p[i] - 'a' + 10 : -1;

		if (d < 0)
			return cnt_err_set(err, "'%.64s' is not a cnt-rank token: its content is not 16 hex digits", s);
		sum = sum << 4 | (uint64_t)d;
	}
	if (p[16] != 0)
		return cnt_err_set(err, "'%.64s' is not a cnt-rank token: its content is not 16 hex digits", s);
	t->content = sum;
	return 0;
}

int cnt_pin_check(const cnt_pin_token *t, const char *board, const char *scope, int verified, cnt_err *err)
{
	if (strlen(board) != t->board_len || memcmp(board, t->board, t->board_len) != 0 ||
	    strlen(scope) != t->scope_len || memcmp(scope, t->scope, t->scope_len) != 0)
		return cnt_err_set(err, "the token pins board '%s' scope '%s', not board '%s' scope '%s'", t->board,
			t->scope, board, scope);
	if (t->verified != verified)
		return cnt_err_set(err, "the token pins the %s count: %s --verified", t->verified ? "verified" : "fast",
			t->verified ? "add" : "without");
	return 0;
}

int cnt_pin_parse_if_newer(const char *s, int *version, cnt_pin_token *t, int *has_token, cnt_err *err)
{
	*has_token = 0;
	if (s[0] >= '0' && s[0] <= '9') {
		if (get_version(s, strlen(s), version) != 0)
			return cnt_err_set(err, "--if-newer: '%.64s' is not a version from 1 to 999999 or a token", s);
		return 0;
	}
	if (cnt_pin_parse(s, t, err) != 0)
		return cnt_err_prefix(err, "--if-newer");
	*has_token = 1;
	*version = t->version;
	return 0;
}

int cnt_pin_not_modified(const cnt_view *v, int version, const cnt_pin_token *t)
{
	return v->desc.version == version && (t == NULL || t->content == cnt_pin_content(v));
}

static int retired(const char *sdir, const char *board, const char *scope, int version, const char *why,
	cnt_err *err)
{
	int cur = 0;
	char now[32] = "none";

	if (cnt_viewdir_current(sdir, &cur, err) != 0)
		return -1;
	if (cur > 0)
		snprintf(now, sizeof(now), "%d", cur);
	cnt_err_set(err, "board '%s' scope '%s': version %d is no longer retained (%s); the published version is "
		"now %s", board, scope, version, why, now);
	err->kind = CNT_ERR_RETIRED;
	return -1;
}

int cnt_pin_open(cnt_view *v, const char *views, const char *board, const char *scope, int verified,
	const cnt_pin_token *pin, int *version, char *vdir, size_t n, int *frozen, cnt_err *err)
{
	char sdir[4200], idx[4300];
	struct stat st;
	int rc;

	memset(v, 0, sizeof(*v));
	if (pin)
		*version = pin->version;
	if (cnt_viewdir_path(sdir, sizeof(sdir) - sizeof("/" CNT_VERIFIED_DIR), views, board, scope) != 0)
		return cnt_err_set(err, "path too long: '%s'", views);
	if (verified)
		strcat(sdir, "/" CNT_VERIFIED_DIR);
	if (*version > 0) {
		snprintf(idx, sizeof(idx), "%s/v%06d/index.bin", sdir, *version);
		if (stat(idx, &st) != 0) {
			rc = cnt_retain_check_gone(sdir, board, scope, *version, err);
			if (rc != 0)
				return -1;
			if (pin)
				return retired(sdir, board, scope, *version, "no record of when it was retired", err);
		}
	}
	rc = verified ? cnt_verified_open(v, views, board, scope, version, vdir, n, frozen, err) :
		cnt_viewdir_open(v, views, board, scope, version, vdir, n, frozen, err);
	if (rc != 0)
		return -1;
	if (pin && cnt_pin_content(v) != pin->content) {
		cnt_view_close(v);
		return retired(sdir, board, scope, *version, "the version of that number now holds another view: "
			"the scope was rebuilt since, or the token was altered", err);
	}
	return 0;
}
