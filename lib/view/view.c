/*
 * view.c - the ranked view index (see view.h).
 */
#include "base/outfile.h"
#include "view/view.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include "base/buf.h"
#include "avro/encoding.h"
#include "avro/container.h"

#include <xxhash.h>

static const char magic[8] = {'C', 'N', 'T', 'V', 'I', 'E', 'W', '1'};

static int put_u64(cnt_buf *b, uint64_t v)
{
	uint8_t t[8];

	for (int i = 0; i < 8; i++)
		t[i] = (uint8_t)(v >> (8 * i));
	return cnt_buf_append(b, t, 8);
}

static int flush(cnt_buf *b, int fd, int force, cnt_err *err)
{
	if (b->len == 0 || (!force && b->len < (1u << 20)))
		return 0;
	if (cnt_write_all(fd, b->p, b->len) != 0)
		return cnt_err_write(err, errno, "cannot write the view index");
	b->len = 0;
	return 0;
}

/* The file is written in the machine's byte order after a check that it
 * is little-endian, so entries can be copied and mapped as they are. */
int cnt_view_write_index(int fd, const cnt_view_build *v, cnt_err *err)
{
	cnt_buf b = CNT_BUF_INIT;
	size_t dlen = strlen(v->desc);
	uint32_t *byname = NULL;
	static const uint8_t zero[8];
	size_t nslots = 2;
	int rc = -1;

	/* At most 3/4 full: short probes, a quarter of the file or less. */
	while (nslots / 4 * 3 < v->n)
		nslots *= 2;

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	return cnt_err_set(err, "view files are little-endian; this machine is not");
#endif
	if (cnt_buf_append(&b, magic, 8) || put_u64(&b, dlen) || cnt_buf_append(&b, v->desc, dlen) ||
	    cnt_buf_append(&b, zero, (8 - dlen % 8) % 8) || put_u64(&b, v->n) || put_u64(&b, v->head) ||
	    put_u64(&b, v->nbins) || put_u64(&b, v->pool_len) || put_u64(&b, nslots))
		goto oom;
	for (size_t i = 0; i < v->n; i++) {
		if (cnt_buf_append(&b, &v->entries[i], sizeof(cnt_view_entry)) != 0)
			goto oom;
		if (flush(&b, fd, 0, err) != 0)
			goto out;
	}
	/* Positions by member name: an open-addressing table of XXH3 hashes,
	 * so a lookup is a probe or two. */
	byname = calloc(nslots, sizeof(*byname));
	if (byname == NULL)
		goto oom;
	for (size_t i = 0; i < v->n; i++) {
		const cnt_view_entry *e = &v->entries[i];
		size_t k = XXH3_64bits(v->pool + e->name_off, e->name_len) & (nslots - 1);

		while (byname[k])
			k = (k + 1) & (nslots - 1);
		byname[k] = (uint32_t)i + 1;
	}
	if (cnt_buf_append(&b, byname, nslots * sizeof(uint32_t)) != 0 ||
	    cnt_buf_append(&b, v->edges, (v->nbins + 1) * sizeof(int64_t)) != 0 ||
	    cnt_buf_append(&b, v->counts, v->nbins * sizeof(uint64_t)) != 0)
		goto oom;
	if (flush(&b, fd, 1, err) != 0 || cnt_write_all(fd, v->pool, v->pool_len) != 0) {
		if (b.len == 0)
			cnt_err_write(err, errno, "cannot write the view index");
		goto out;
	}
	rc = 0;
	goto out;
oom:
	cnt_err_oom(err, "writing the view index");
out:
	free(byname);
	cnt_buf_release(&b);
	return rc;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

int cnt_view_open(cnt_view *v, const char *dir, cnt_err *err)
{
	char path[4096];
	struct stat st;
	const uint8_t *p;
	size_t off, need;
	int fd;

	memset(v, 0, sizeof(*v));
	snprintf(path, sizeof(path), "%s/index.bin", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cnt_err_set(err, "cannot open the view '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || st.st_size < 48) {
		close(fd);
		return cnt_err_set(err, "view '%s' is too short to be a view index", path);
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return cnt_err_set(err, "cannot map the view '%s': %s", path, strerror(errno));
	v->map = p;
	v->map_len = (size_t)st.st_size;
	if (memcmp(p, magic, 8) != 0)
		goto corrupt;
	v->desc_len = get_u64(p + 8);
	if (v->desc_len > v->map_len)
		goto corrupt;
	v->desc = (const char *)p + 16;
	off = 16 + v->desc_len + (8 - v->desc_len % 8) % 8;
	if (off + 40 > v->map_len)
		goto corrupt;
	v->n = get_u64(p + off);
	v->head = get_u64(p + off + 8);
	v->nbins = get_u64(p + off + 16);
	v->pool_len = get_u64(p + off + 24);
	v->nslots = get_u64(p + off + 32);
	off += 40;
	if (v->n >= UINT32_MAX || v->head > v->n || v->nbins == 0 || v->nbins > (1u << 20) ||
	    v->nslots < v->n + 1 || (v->nslots & (v->nslots - 1)) || v->nslots > ((uint64_t)1 << 34) ||
	    v->pool_len > v->map_len)
		goto corrupt;
	need = off + v->n * 32 + v->nslots * 4 + (v->nbins + 1) * 8 + v->nbins * 8 + v->pool_len;
	if (need != v->map_len)
		goto corrupt;
	v->entries = (const cnt_view_entry *)(p + off);
	off += v->n * 32;
	v->by_name = (const uint32_t *)(p + off);
	off += v->nslots * 4;
	v->edges = (const int64_t *)(p + off);
	off += (v->nbins + 1) * 8;
	v->counts = (const uint64_t *)(p + off);
	off += v->nbins * 8;
	v->pool = (const char *)p + off;
	return 0;
corrupt:
	cnt_view_close(v);
	return cnt_err_set(err, "view '%s' is corrupt or truncated; rebuild it with cnt-project", path);
}

void cnt_view_close(cnt_view *v)
{
	if (v->map)
		munmap((void *)(uintptr_t)v->map, v->map_len);
	memset(v, 0, sizeof(*v));
}

int64_t cnt_view_find(const cnt_view *v, const char *name, size_t n)
{
	size_t k = XXH3_64bits(name, n) & (v->nslots - 1);

	for (size_t probes = 0; probes < v->nslots && v->by_name[k]; probes++, k = (k + 1) & (v->nslots - 1)) {
		uint32_t pos = v->by_name[k] - 1;
		const cnt_view_entry *e;

		if (pos >= v->n)
			return -1;
		e = &v->entries[pos];
		if (e->name_len == n && e->name_off <= v->pool_len && n <= v->pool_len - e->name_off &&
		    memcmp(v->pool + e->name_off, name, n) == 0)
			return pos;
	}
	return -1;
}

size_t cnt_view_bin(const cnt_view *v, int64_t value)
{
	size_t lo = 0, hi = v->nbins;

	/* The last bin whose lower edge is <= value. */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (v->edges[mid] <= value)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* ---- the view directory --------------------------------------------- */

static int put_component(char *buf, size_t n, size_t *o, const char *s)
{
	static const char hx[] = "0123456789ABCDEF";

	for (size_t i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		int safe = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			c == '_' || c == '-' || (c == '.' && i > 0);

		if (*o + 4 >= n)
			return -1;
		if (safe) {
			buf[(*o)++] = (char)c;
		} else {
			buf[(*o)++] = '%';
			buf[(*o)++] = hx[c >> 4];
			buf[(*o)++] = hx[c & 15];
		}
	}
	buf[*o] = 0;
	return 0;
}

int cnt_viewdir_path(char *buf, size_t n, const char *root, const char *board, const char *scope)
{
	size_t o = (size_t)snprintf(buf, n, "%s/", root);

	if (o >= n || put_component(buf, n, &o, board) != 0 || o + 2 >= n)
		return -1;
	buf[o++] = '/';
	return put_component(buf, n, &o, scope);
}

static int mkdirs(const char *path, cnt_err *err)
{
	char tmp[4096];
	size_t n = strlen(path);

	if (n >= sizeof(tmp))
		return cnt_err_set(err, "path too long: '%s'", path);
	memcpy(tmp, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != 0)
			continue;
		tmp[i] = 0;
		if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
			return cnt_err_set(err, "cannot create the directory '%s': %s", tmp, strerror(errno));
		tmp[i] = path[i];
	}
	return 0;
}

int cnt_viewdir_next(const char *scope_dir, int *version, cnt_err *err)
{
	DIR *d;
	struct dirent *e;
	int max = 0;

	if (mkdirs(scope_dir, err) != 0)
		return -1;
	d = opendir(scope_dir);
	if (d == NULL)
		return cnt_err_set(err, "cannot read the directory '%s': %s", scope_dir, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		char *end;
		long v;

		if (e->d_name[0] != 'v' || strlen(e->d_name) != 7)
			continue;
		v = strtol(e->d_name + 1, &end, 10);
		if (*end == 0 && v > max)
			max = (int)v;
	}
	closedir(d);
	if (max >= 999999)
		return cnt_err_set(err, "'%s' already holds version 999999; remove old versions", scope_dir);
	*version = max + 1;
	return 0;
}

static const char ranked_schema[] =
	"{\"type\":\"record\",\"name\":\"RankedEntry\",\"namespace\":\"cnt\","
	"\"doc\":\"One position of a ranked view's materialised head; see cnt-view(5).\","
	"\"fields\":[{\"name\":\"rank\",\"type\":\"long\"},{\"name\":\"member_ref\",\"type\":\"string\"},"
	"{\"name\":\"value\",\"type\":\"long\"},"
	"{\"name\":\"last_event_time\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}}]}";

static void rmtree_version(const char *dir)
{
	char p[4400];

	snprintf(p, sizeof(p), "%s/view.avro", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/index.bin", dir);
	unlink(p);
	rmdir(dir);
}

int cnt_viewdir_write(const char *scope_dir, int version, const cnt_view_build *b, cnt_err *err)
{
	char tmp[4200], fin[4200], file[4300];
	cnt_writer *w = NULL;
	int fd = -1;

	snprintf(tmp, sizeof(tmp), "%s/.v%06d.XXXXXX", scope_dir, version);
	snprintf(fin, sizeof(fin), "%s/v%06d", scope_dir, version);
	if (mkdtemp(tmp) == NULL)
		return cnt_err_set(err, "cannot create a directory in '%s': %s", scope_dir, strerror(errno));
	chmod(tmp, 0755);
	snprintf(file, sizeof(file), "%s/view.avro", tmp);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		cnt_err_set(err, "cannot create '%s': %s", file, strerror(errno));
		goto fail;
	}
	w = cnt_writer_new(fd, file, ranked_schema, CNT_CODEC_ZSTD, -1, 0, err);
	if (w == NULL || cnt_writer_meta(w, "cnt.view", b->desc, strlen(b->desc), err) != 0)
		goto fail;
	for (size_t i = 0; i < b->head; i++) {
		const cnt_view_entry *e = &b->entries[i];
		cnt_buf *o = cnt_writer_buf(w);

		if (cnt_bin_write_long(o, e->rank) || cnt_bin_write_bytes(o, b->pool + e->name_off, e->name_len) ||
		    cnt_bin_write_long(o, e->value) || cnt_bin_write_long(o, e->last_event_time)) {
			cnt_err_nomem(err);
			goto fail;
		}
		if (cnt_writer_commit(w, err) != 0)
			goto fail;
	}
	if (cnt_writer_finish(w, err) != 0)
		goto fail;
	cnt_writer_free(w);
	w = NULL;
	/* No fsync: a view is a projection, rebuilt from the log at will; what
	 * matters is that readers never see a half-written one, which the
	 * rename of the complete directory guarantees. */
	if (close(fd) != 0) {
		fd = -1;
		cnt_err_write(err, errno, "cannot write '%s'", file);
		goto fail;
	}
	snprintf(file, sizeof(file), "%s/index.bin", tmp);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		cnt_err_set(err, "cannot create '%s': %s", file, strerror(errno));
		goto fail;
	}
	if (cnt_view_write_index(fd, b, err) != 0)
		goto fail;
	if (close(fd) != 0) {
		fd = -1;
		cnt_err_write(err, errno, "cannot write '%s'", file);
		goto fail;
	}
	fd = -1;
	if (rename(tmp, fin) != 0) {
		cnt_err_set(err, "cannot rename the new view to '%s': %s", fin, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	cnt_writer_free(w);
	if (fd >= 0)
		close(fd);
	rmtree_version(tmp);
	return -1;
}

int cnt_viewdir_publish(const char *scope_dir, int version, cnt_err *err)
{
	char target[32], link[4200], tmp[4200], check[4200];
	struct stat st;

	snprintf(target, sizeof(target), "v%06d", version);
	snprintf(check, sizeof(check), "%s/%s/index.bin", scope_dir, target);
	if (stat(check, &st) != 0)
		return cnt_err_set(err, "'%s' has no version %d to publish", scope_dir, version);
	snprintf(link, sizeof(link), "%s/current", scope_dir);
	snprintf(tmp, sizeof(tmp), "%s/.current.%ld", scope_dir, (long)getpid());
	unlink(tmp);
	if (symlink(target, tmp) != 0)
		return cnt_err_set(err, "cannot create a link in '%s': %s", scope_dir, strerror(errno));
	if (rename(tmp, link) != 0) {
		unlink(tmp);
		return cnt_err_set(err, "cannot switch '%s': %s", link, strerror(errno));
	}
	return 0;
}

int cnt_viewdir_current(const char *scope_dir, int *version, cnt_err *err)
{
	char link[4200], target[64];
	ssize_t n;
	char *end;

	snprintf(link, sizeof(link), "%s/current", scope_dir);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0) {
		if (errno == ENOENT) {
			*version = 0;
			return 0;
		}
		return cnt_err_set(err, "cannot read '%s': %s", link, strerror(errno));
	}
	target[n] = 0;
	if (target[0] != 'v' || (*version = (int)strtol(target + 1, &end, 10)) <= 0 || *end)
		return cnt_err_set(err, "'%s' points at '%s', which is not a view version", link, target);
	return 0;
}

int cnt_viewdir_frozen(const char *scope_dir)
{
	char p[4200];
	struct stat st;

	snprintf(p, sizeof(p), "%s/frozen", scope_dir);
	return stat(p, &st) == 0;
}

int cnt_viewdir_freeze(const char *scope_dir, int on, cnt_err *err)
{
	char m[4200];

	snprintf(m, sizeof(m), "%s/frozen", scope_dir);
	if (on) {
		/* A scope can be frozen before its first view is built. */
		if (mkdirs(scope_dir, err) != 0)
			return -1;
		int fd = open(m, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		if (fd < 0)
			return cnt_err_set(err, "cannot create '%s': %s", m, strerror(errno));
		close(fd);
		return 0;
	}
	if (unlink(m) != 0 && errno != ENOENT)
		return cnt_err_set(err, "cannot remove '%s': %s", m, strerror(errno));
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cnt_viewdir_scopes(const char *root, const char *board, char ***dirs, size_t *n, cnt_err *err)
{
	char bdir[4096];
	size_t o = (size_t)snprintf(bdir, sizeof(bdir), "%s/", root), cap = 0;
	DIR *d;
	struct dirent *e;

	*dirs = NULL;
	*n = 0;
	if (o >= sizeof(bdir) || put_component(bdir, sizeof(bdir), &o, board) != 0)
		return cnt_err_set(err, "path too long");
	d = opendir(bdir);
	if (d == NULL)
		return cnt_err_set(err, "no views of board '%s' in '%s': %s", board, root, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		char path[4400];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", bdir, e->d_name);
		if (*n == cap) {
			char **v = realloc(*dirs, (cap = cap ? cap * 2 : 8) * sizeof(char *));

			if (v == NULL)
				break;
			*dirs = v;
		}
		if (((*dirs)[*n] = strdup(path)) == NULL)
			break;
		(*n)++;
	}
	closedir(d);
	if (*n == 0)
		return cnt_err_set(err, "no views of board '%s' in '%s'", board, root);
	qsort(*dirs, *n, sizeof(char *), cmp_str);
	return 0;
}
