/*
 * ledger.c - hash-chained JSON-lines ledgers (see ledger.h).
 */
#include "correct/ledger.h"
#include "base/jsonload.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

cnt_fp cnt_ledger_hash(const void *p, size_t n)
{
	XXH128_hash_t h = XXH3_128bits(p, n);
	cnt_fp fp = {h.high64, h.low64};

	return fp;
}

void cnt_ledger_hex(cnt_fp fp, char out[33])
{
	static const char hx[] = "0123456789abcdef";

	for (int i = 0; i < 16; i++) {
		out[i] = hx[(fp.hi >> (60 - 4 * i)) & 15];
		out[16 + i] = hx[(fp.lo >> (60 - 4 * i)) & 15];
	}
	out[32] = 0;
}

int cnt_ledger_hex_parse(const char *s, cnt_fp *fp)
{
	uint64_t v[2] = {0, 0};

	if (strlen(s) != 32)
		return -1;
	for (int i = 0; i < 32; i++) {
		int c = s[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			return -1;
		v[i / 16] = (v[i / 16] << 4) | (uint64_t)d;
	}
	fp->hi = v[0];
	fp->lo = v[1];
	return 0;
}

int cnt_ledger_slurp(int fd, const char *name, cnt_buf *out, cnt_err *err)
{
	char buf[65536];

	for (;;) {
		ssize_t got = read(fd, buf, sizeof(buf));

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return cnt_err_set(err, "cannot read '%s': %s", name, strerror(errno));
		if (got == 0)
			return 0;
		if (cnt_buf_append(out, buf, (size_t)got) != 0)
			return cnt_err_oom(err, "reading '%s'", name);
	}
}

int cnt_ledger_walk(const void *p, size_t n, const char *what, const char *name, cnt_ledger_fn fn,
	void *ctx, cnt_fp *last, size_t *lines, cnt_err *err)
{
	const char *all = p;
	cnt_fp prev = {0, 0};
	size_t off = 0, lineno = 0;
	char want[33];

	while (off < n) {
		const char *line = all + off;
		const char *nl = memchr(line, '\n', n - off);
		size_t len;
		json_t *rec, *pv;
		json_error_t je;

		lineno++;
		if (nl == NULL)
			return cnt_err_set(err, "%s '%s' line %zu: no newline at the end (an interrupted append?)",
				what, name, lineno);
		len = (size_t)(nl - line);
		rec = cnt_json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
		if (rec == NULL || !json_is_object(rec)) {
			json_decref(rec);
			if (rec == NULL && cnt_json_oom(&je))
				return cnt_err_nomem(err);
			return cnt_err_set(err, "%s '%s' line %zu: not a JSON object", what, name, lineno);
		}
		cnt_ledger_hex(prev, want);
		pv = json_object_get(rec, "prev");
		if (!json_is_string(pv) || strcmp(json_string_value(pv), want) != 0) {
			json_decref(rec);
			if (lineno == 1)
				return cnt_err_set(err, "%s '%s' line 1: \"prev\" is not 32 zeros (not the first line?)",
					what, name);
			return cnt_err_set(err, "%s '%s' line %zu: the hash chain is broken (\"prev\" is not the hash of line %zu)",
				what, name, lineno, lineno - 1);
		}
		if (fn && fn(ctx, rec, lineno, line, len, err) != 0) {
			json_decref(rec);
			return -1;
		}
		json_decref(rec);
		prev = cnt_ledger_hash(line, len);
		off += len + 1;
	}
	*last = prev;
	*lines = lineno;
	return 0;
}
