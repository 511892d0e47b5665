/*
 * retain.c - view version retention (see retain.h).
 */
#include "view/retain.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/outfile.h"
#include "time/timefmt.h"
#include "view/view.h"

int64_t cnt_retain_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the decision ----------------------------------------------------- */

static int by_recency(const void *x, const void *y)
{
	const cnt_retain_version *a = *(cnt_retain_version *const *)x, *b = *(cnt_retain_version *const *)y;

	if (a->superseded_at != b->superseded_at)
		return a->superseded_at > b->superseded_at ? -1 : 1;
	return a->version > b->version ? -1 : a->version < b->version;
}

size_t cnt_retain_decide(cnt_retain_version *v, size_t n, int current, int frozen, int64_t now,
	const cnt_retain_policy *p)
{
	cnt_retain_version *stack[64], **c = n <= 64 ? stack : malloc(n * sizeof(*c));
	size_t nc = 0, out = 0;

	for (size_t i = 0; i < n; i++)
		v[i].retire = 0;
	if (frozen || n == 0)
		return 0;
	if (c == NULL)
		return 0;   /* out of memory: retire nothing, which is always safe */
	for (size_t i = 0; i < n; i++)
		if (v[i].version != current && !v[i].protect && v[i].superseded_at != INT64_MIN)
			c[nc++] = &v[i];
	qsort(c, nc, sizeof(*c), by_recency);
	for (size_t i = (size_t)p->keep_min; i < nc; i++) {
		/* now - superseded_at >= keep_s seconds, without overflow */
		if (now >= c[i]->superseded_at && (uint64_t)(now - c[i]->superseded_at) >= (uint64_t)p->keep_s * 1000) {
			c[i]->retire = 1;
			out++;
		}
	}
	if (c != stack)
		free(c);
	return out;
}

/* ---- the record ------------------------------------------------------- */

static const char magic[] = "cnt-retention 1\n";

void cnt_retain_log_release(cnt_retain_log *log)
{
	free(log->r);
	memset(log, 0, sizeof(*log));
}

static int add_rec(cnt_retain_log *log, int version, int retired, int64_t at)
{
	if (log->n == log->cap) {
		size_t cap = log->cap ? 2 * log->cap : 16;
		cnt_retain_rec *r = realloc(log->r, cap * sizeof(*r));

		if (r == NULL)
			return -1;
		log->r = r;
		log->cap = cap;
	}
	log->r[log->n].version = version;
	log->r[log->n].retired = retired;
	log->r[log->n].at = at;
	log->n++;
	return 0;
}

int cnt_retain_parse(const char *text, size_t len, const char *name, cnt_retain_log *log, cnt_err *err)
{
	size_t pos = sizeof(magic) - 1, line = 1;

	memset(log, 0, sizeof(*log));
	if (len < pos || memcmp(text, magic, pos) != 0)
		return cnt_err_set(err, "retention record '%s': not a cnt-retention 1 file", name);
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		char buf[80], what[16];
		long long v, at;
		int used = -1;
		size_t n;

		line++;
		n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		if (nl == NULL || n >= sizeof(buf))
			goto bad;
		memcpy(buf, text + pos, n);
		buf[n] = 0;
		if (sscanf(buf, "%15s %lld %lld%n", what, &v, &at, &used) != 3 || used != (int)n ||
		    (strcmp(what, "superseded") != 0 && strcmp(what, "retired") != 0) || v < 1 || v > 999999)
			goto bad;
		{   /* one spelling: exactly as cnt_retain_format() writes it */
			char again[80];

			snprintf(again, sizeof(again), "%s %lld %lld", what, v, at);
			if (strcmp(again, buf) != 0)
				goto bad;
		}
		if (add_rec(log, (int)v, what[0] == 'r', (int64_t)at) != 0) {
			cnt_retain_log_release(log);
			return cnt_err_oom(err, "reading the retention record '%s'", name);
		}
		pos += n + 1;
	}
	return 0;
bad:
	cnt_retain_log_release(log);
	return cnt_err_set(err, "retention record '%s' line %zu: damaged (expected 'superseded|retired VERSION MS')",
		name, line);
}

int cnt_retain_format(const cnt_retain_log *log, char **text, size_t *len)
{
	size_t cap = sizeof(magic) + log->n * 48, o = sizeof(magic) - 1;
	char *t = malloc(cap);

	if (t == NULL)
		return -1;
	memcpy(t, magic, o);
	for (size_t i = 0; i < log->n; i++)
		o += (size_t)snprintf(t + o, cap - o, "%s %d %" PRId64 "\n", log->r[i].retired ? "retired" : "superseded",
			log->r[i].version, log->r[i].at);
	*text = t;
	*len = o;
	return 0;
}

int cnt_retain_load(const char *scope_dir, cnt_retain_log *log, cnt_err *err)
{
	char path[4200];
	struct stat st;
	char *text;
	ssize_t got;
	int fd, rc;

	memset(log, 0, sizeof(*log));
	snprintf(path, sizeof(path), "%s/%s", scope_dir, CNT_RETAIN_FILE);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : cnt_err_set(err, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (64 << 20)) {
		close(fd);
		return cnt_err_set(err, "retention record '%s': not a regular file of at most 64 MiB", path);
	}
	text = malloc((size_t)st.st_size + 1);
	if (text == NULL) {
		close(fd);
		return cnt_err_oom(err, "reading '%s'", path);
	}
	got = read(fd, text, (size_t)st.st_size);
	close(fd);
	if (got != (ssize_t)st.st_size) {
		free(text);
		return cnt_err_set(err, "cannot read '%s'", path);
	}
	rc = cnt_retain_parse(text, (size_t)got, path, log, err);
	free(text);
	return rc;
}

void cnt_retain_state(const cnt_retain_log *log, int version, int *state, int64_t *at)
{
	*state = 0;
	*at = 0;
	for (size_t i = log->n; i-- > 0;)
		if (log->r[i].version == version) {
			*state = log->r[i].retired ? 2 : 1;
			*at = log->r[i].at;
			return;
		}
}

static int save(const char *scope_dir, const cnt_retain_log *log, cnt_err *err)
{
	char path[4200], tmp[4200], *text;
	size_t len;
	int fd;

	if (cnt_retain_format(log, &text, &len) != 0)
		return cnt_err_oom(err, "writing the retention record of '%s'", scope_dir);
	snprintf(path, sizeof(path), "%s/%s", scope_dir, CNT_RETAIN_FILE);
	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld", scope_dir, CNT_RETAIN_FILE, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		free(text);
		return cnt_err_write(err, errno, "cannot create '%s'", tmp);
	}
	if (cnt_write_all(fd, text, len) != 0 || close(fd) != 0) {
		int e = errno;

		free(text);
		unlink(tmp);
		return cnt_err_write(err, e, "cannot write '%s'", tmp);
	}
	free(text);
	if (rename(tmp, path) != 0) {
		int e = errno;

		unlink(tmp);
		return cnt_err_write(err, e, "cannot rename '%s' to '%s'", tmp, path);
	}
	return 0;
}

/* The versions present in scope_dir (vNNNNNN directories), ascending. */
static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

static int list_versions(const char *scope_dir, int **out, size_t *n, cnt_err *err)
{
	DIR *d = opendir(scope_dir);
	struct dirent *e;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (d == NULL)
		return cnt_err_set(err, "cannot read the directory '%s': %s", scope_dir, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		char *end;
		long v;

		if (e->d_name[0] != 'v' || strlen(e->d_name) != 7)
			continue;
		v = strtol(e->d_name + 1, &end, 10);
		if (*end != 0 || v < 1)
			continue;
		if (*n == cap) {
			int *nv = realloc(*out, (cap = cap ? 2 * cap : 16) * sizeof(int));

			if (nv == NULL) {
				closedir(d);
				free(*out);
				*out = NULL;
				return cnt_err_oom(err, "listing '%s'", scope_dir);
			}
			*out = nv;
		}
		(*out)[(*n)++] = (int)v;
	}
	closedir(d);
	if (*n > 1)
		qsort(*out, *n, sizeof(int), cmp_int);
	return 0;
}

static void remove_version_dir(const char *dir)
{
	char p[4400];

	snprintf(p, sizeof(p), "%s/view.avro", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/index.bin", dir);
	unlink(p);
	rmdir(dir);
}

/* Of a season board, the newest version of each season (by the window
 * label of its description) is protected.  A version whose description
 * cannot be read is protected too: retention never guesses. */
static void protect_seasons(const char *scope_dir, cnt_retain_version *v, size_t n)
{
	char (*label)[160] = calloc(n ? n : 1, sizeof(*label));

	if (label == NULL) {
		for (size_t i = 0; i < n; i++)
			v[i].protect = 1;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char dir[4300];
		cnt_view view;
		cnt_err e;

		snprintf(dir, sizeof(dir), "%s/v%06d", scope_dir, v[i].version);
		if (cnt_view_open(&view, dir, &e) != 0) {
			v[i].protect = 1;
			continue;
		}
		snprintf(label[i], sizeof(label[i]), "%s", view.desc.window_label ? view.desc.window_label : "");
		cnt_view_close(&view);
	}
	for (size_t i = 0; i < n; i++) {
		int newest = 1;

		for (size_t j = i + 1; j < n; j++)
			if (strcmp(label[i], label[j]) == 0)
				newest = 0;
		if (newest)
			v[i].protect = 1;
	}
	free(label);
}

int cnt_retain_publish(const char *scope_dir, int old, int cur, int64_t now, const cnt_retain_policy *p,
	size_t *retired, cnt_err *err)
{
	cnt_retain_log log;
	cnt_retain_version *vs = NULL;
	int *present = NULL, rc = -1, changed = 0;
	size_t np = 0, nret = 0;
	char (*gone)[4400] = NULL;

	if (retired)
		*retired = 0;
	if (cnt_retain_load(scope_dir, &log, err) != 0)
		return -1;
	if (list_versions(scope_dir, &present, &np, err) != 0)
		goto out;
	if (old > 0 && old != cur) {
		if (add_rec(&log, old, 0, now) != 0)
			goto oom;
		changed = 1;
	}
	for (size_t i = 0; i < np; i++) {
		int state;
		int64_t at;

		if (present[i] >= cur || present[i] == old)
			continue;
		cnt_retain_state(&log, present[i], &state, &at);
		if (state == 1)
			continue;
		if (add_rec(&log, present[i], 0, now) != 0)   /* passed over */
			goto oom;
		changed = 1;
	}
	if (p != NULL && np > 0) {
		if ((vs = calloc(np, sizeof(*vs))) == NULL || (gone = calloc(np, sizeof(*gone))) == NULL)
			goto oom;
		for (size_t i = 0; i < np; i++) {
			int state;
			int64_t at;

			vs[i].version = present[i];
			cnt_retain_state(&log, present[i], &state, &at);
			vs[i].superseded_at = state == 1 ? at : INT64_MIN;
		}
		if (p->seasons)
			protect_seasons(scope_dir, vs, np);
		cnt_retain_decide(vs, np, cur, cnt_viewdir_frozen(scope_dir), now, p);
		for (size_t i = 0; i < np; i++) {
			char dir[4300];

			if (!vs[i].retire)
				continue;
			snprintf(dir, sizeof(dir), "%s/v%06d", scope_dir, vs[i].version);
			snprintf(gone[nret], sizeof(gone[nret]), "%s/.retired.v%06d.%ld", scope_dir, vs[i].version,
				(long)getpid());
			if (rename(dir, gone[nret]) != 0) {
				cnt_err_set(err, "cannot retire '%s': %s", dir, strerror(errno));
				goto out;
			}
			nret++;
			if (add_rec(&log, vs[i].version, 1, now) != 0)
				goto oom;
			changed = 1;
		}
	}
	if (changed && save(scope_dir, &log, err) != 0)
		goto out;
	for (size_t i = 0; i < nret; i++)
		remove_version_dir(gone[i]);
	if (retired)
		*retired = nret;
	rc = 0;
	goto out;
oom:
	cnt_err_oom(err, "recording the retention of '%s'", scope_dir);
out:
	if (rc != 0)   /* put back what was moved aside but not recorded */
		for (size_t i = 0; i < nret; i++) {
			char dir[4300];
			const char *v = strstr(gone[i], "/.retired.v");

			snprintf(dir, sizeof(dir), "%s/%.7s", scope_dir, v + 10);
			rename(gone[i], dir);
		}
	free(gone);
	free(vs);
	free(present);
	cnt_retain_log_release(&log);
	return rc;
}

int cnt_retain_check_gone(const char *scope_dir, const char *board, const char *scope, int version,
	cnt_err *err)
{
	cnt_retain_log log;
	int state, cur = 0;
	int64_t at;
	char t[40], now[64] = "none";

	if (cnt_retain_load(scope_dir, &log, err) != 0)
		return -1;
	cnt_retain_state(&log, version, &state, &at);
	cnt_retain_log_release(&log);
	if (state != 2)
		return 0;
	if (cnt_viewdir_current(scope_dir, &cur, err) != 0)
		return -1;
	if (cur > 0)
		snprintf(now, sizeof(now), "%d", cur);
	cnt_time_format_rfc3339(at, t);
	cnt_err_set(err, "board '%s' scope '%s': version %d is no longer retained: retired at %s; the published "
		"version is now %s", board, scope, version, t, now);
	err->kind = CNT_ERR_RETIRED;
	return 1;
}
