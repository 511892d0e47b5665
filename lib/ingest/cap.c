/*
 * cap.c - members per tenant and the member cap (see cap.h).
 */
#include "ingest/cap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "base/buf.h"
#include "base/outfile.h"

#define MAGIC_LEN (sizeof(CNT_MEMBERS_MAGIC) - 1)

typedef struct tset {
	cnt_fpset set;      /* slots NULL until the first member */
	uint64_t rejected;
} tset;

/* A tenant the file holds and the definitions do not declare: kept. */
typedef struct foreign {
	char *id;
	size_t idlen;
	uint64_t n;
	uint8_t *fps;       /* n x 16 bytes, as in the file */
} foreign;

struct cnt_members {
	const cnt_defs *d;
	size_t nt;
	tset *t;
	foreign *f;
	size_t nf;
};

cnt_members *cnt_members_new(const cnt_defs *d, cnt_err *err)
{
	cnt_members *m = calloc(1, sizeof(*m));

	if (m == NULL || (m->t = calloc(cnt_defs_ntenants(d) + 1, sizeof(tset))) == NULL) {
		free(m);
		cnt_err_nomem(err);
		return NULL;
	}
	m->d = d;
	m->nt = cnt_defs_ntenants(d);
	return m;
}

void cnt_members_free(cnt_members *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->nt; i++)
		if (m->t[i].set.slots != NULL)
			cnt_fpset_release(&m->t[i].set);
	for (size_t i = 0; i < m->nf; i++) {
		free(m->f[i].id);
		free(m->f[i].fps);
	}
	free(m->f);
	free(m->t);
	free(m);
}

const cnt_tenant *cnt_members_first_capped(const cnt_defs *d)
{
	for (size_t i = 0; i < cnt_defs_ntenants(d); i++)
		if (cnt_defs_tenant_at(d, i)->member_cap > 0)
			return cnt_defs_tenant_at(d, i);
	return NULL;
}

static tset *of(const cnt_members *m, const cnt_tenant *t)
{
	return &m->t[t - cnt_defs_tenant_at(m->d, 0)];
}

static int add_fp(tset *s, cnt_fp fp, size_t expected)
{
	if (s->set.slots == NULL && cnt_fpset_init(&s->set, expected) != 0)
		return -1;
	return cnt_fpset_add(&s->set, fp, 0, NULL) < 0 ? -1 : 0;
}

int cnt_members_check(cnt_members *m, const cnt_tenant *t, cnt_slice member, cnt_fp *fp)
{
	const void *parts[1] = {member.p};
	size_t lens[1] = {member.n};
	tset *s = of(m, t);

	*fp = cnt_fp_of(1, parts, lens);
	if (s->set.slots != NULL && cnt_fpset_find(&s->set, *fp, NULL))
		return 0;
	if (t->member_cap > 0 && (s->set.slots ? s->set.count : 0) >= (uint64_t)t->member_cap) {
		s->rejected++;
		return 1;
	}
	return 0;
}

int cnt_members_add(cnt_members *m, const cnt_tenant *t, cnt_fp fp)
{
	return add_fp(of(m, t), fp, 0);
}

uint64_t cnt_members_count(const cnt_members *m, const cnt_tenant *t)
{
	const tset *s = of(m, t);

	return s->set.slots ? s->set.count : 0;
}

uint64_t cnt_members_rejected(const cnt_members *m, const cnt_tenant *t)
{
	return of(m, t)->rejected;
}

/* ---- the file ------------------------------------------------------------ */

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

static int put(cnt_buf *b, uint64_t v, int n)
{
	uint8_t x[8];

	for (int i = 0; i < n; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	return cnt_buf_append(b, x, (size_t)n);
}

static int bad(cnt_err *err, const char *name, const char *what)
{
	return cnt_err_set(err, "members '%s': %s; the file is corrupt (restore it from a backup "
		"or rebuild it from the event log)", name, what);
}

static int cmp_id(const void *a, size_t an, const void *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	return c ? c : (an > bn) - (an < bn);
}

int cnt_members_parse(cnt_members *m, const void *data, size_t n, const char *name, cnt_err *err)
{
	const uint8_t *p = data, *end;
	const uint8_t *prev = NULL;
	size_t prevn = 0;
	uint64_t nt;

	if (n < MAGIC_LEN || memcmp(p, CNT_MEMBERS_MAGIC, MAGIC_LEN) != 0)
		return cnt_err_set(err, "members '%s': not a members file (it does not begin with "
			"'cnt-members/1')", name);
	if (n < MAGIC_LEN + 4 + 8)
		return bad(err, name, "it is truncated");
	if (XXH3_64bits(p, n - 8) != le(p + n - 8, 8))
		return bad(err, name, "its checksum does not match");
	end = p + n - 8;
	p += MAGIC_LEN;
	nt = le(p, 4);
	p += 4;
	for (uint64_t i = 0; i < nt; i++) {
		size_t idl;
		uint64_t k;
		const cnt_tenant *t;
		const uint8_t *fps;
		cnt_fp last = {0, 0};

		if ((size_t)(end - p) < 2)
			return bad(err, name, "a tenant entry is truncated");
		idl = (size_t)le(p, 2);
		p += 2;
		if (idl < 1 || idl > CNT_DEFS_ID_MAX || (size_t)(end - p) < idl + 8)
			return bad(err, name, "a tenant id length is out of range");
		if (prev != NULL && cmp_id(prev, prevn, p, idl) >= 0)
			return bad(err, name, "tenants are not in ascending order");
		prev = p;
		prevn = idl;
		t = cnt_defs_tenant(m->d, (const char *)p, idl);
		p += idl;
		k = le(p, 8);
		p += 8;
		if (k > (uint64_t)(end - p) / 16)
			return bad(err, name, "a member count exceeds the file");
		fps = p;
		for (uint64_t j = 0; j < k; j++, p += 16) {
			cnt_fp fp = {le(p, 8), le(p + 8, 8)};

			if ((fp.hi | fp.lo) == 0 || (j > 0 && (last.hi > fp.hi ||
			    (last.hi == fp.hi && last.lo >= fp.lo))))
				return bad(err, name, "members are not in ascending order");
			last = fp;
			if (t != NULL && add_fp(of(m, t), fp, (size_t)k) != 0)
				return cnt_err_nomem(err);
		}
		if (t == NULL) {
			foreign *f = realloc(m->f, (m->nf + 1) * sizeof(*f));

			if (f == NULL)
				return cnt_err_nomem(err);
			m->f = f;
			f = &m->f[m->nf];
			f->idlen = idl;
			f->n = k;
			f->id = malloc(idl);
			f->fps = malloc(k * 16 + 1);
			if (f->id == NULL || f->fps == NULL) {
				free(f->id);
				free(f->fps);
				return cnt_err_nomem(err);
			}
			m->nf++;
			memcpy(f->id, prev, idl);
			memcpy(f->fps, fps, k * 16);
		}
	}
	if (p != end)
		return bad(err, name, "bytes follow the last tenant");
	return 0;
}

int cnt_members_load(cnt_members *m, const char *path, cnt_err *err)
{
	cnt_buf b = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;
	struct stat st;

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return cnt_err_set(err, "members '%s': %s", path, strerror(errno));
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return cnt_err_set(err, "members '%s': not a regular file (the members must be kept "
			"between runs)", path);
	}
	for (;;) {
		ssize_t r;

		if (cnt_buf_reserve(&b, 65536) != 0) {
			close(fd);
			cnt_buf_release(&b);
			return cnt_err_nomem(err);
		}
		r = read(fd, b.p + b.len, b.cap - b.len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = cnt_err_set(err, "members '%s': %s", path, strerror(errno));
			close(fd);
			cnt_buf_release(&b);
			return rc;
		}
		if (r == 0)
			break;
		b.len += (size_t)r;
	}
	close(fd);
	rc = cnt_members_parse(m, b.p, b.len, path, err);
	cnt_buf_release(&b);
	return rc;
}

typedef struct entry {
	const char *id;
	size_t idlen;
	size_t tenant;      /* index, or (size_t)-1 for foreign */
	const foreign *f;
} entry;

static int by_id(const void *a, const void *b)
{
	const entry *x = a, *y = b;

	return cmp_id(x->id, x->idlen, y->id, y->idlen);
}

static int by_fp(const void *a, const void *b)
{
	const cnt_fpset_slot *x = a, *y = b;

	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

static int put_set(cnt_buf *b, const cnt_fpset *s)
{
	size_t k = 0, n = s->slots ? s->count : 0;
	cnt_fpset_slot *v = malloc((n + 1) * sizeof(*v));
	int rc = 0;

	if (v == NULL)
		return -1;
	for (size_t i = 0; n > 0 && i <= s->mask; i++)
		if (s->slots[i].hi | s->slots[i].lo)
			v[k++] = s->slots[i];
	qsort(v, k, sizeof(*v), by_fp);
	rc = put(b, k, 8);
	for (size_t i = 0; rc == 0 && i < k; i++)
		rc = put(b, v[i].hi, 8) || put(b, v[i].lo, 8) ? -1 : 0;
	free(v);
	return rc;
}

int cnt_members_write(const cnt_members *m, int fd, const char *name, cnt_err *err)
{
	cnt_buf b = {0};
	entry *e = calloc(m->nt + m->nf + 1, sizeof(*e));
	size_t n = 0;
	int rc = -1;

	if (e == NULL)
		return cnt_err_nomem(err);
	for (size_t i = 0; i < m->nt; i++)
		if (m->t[i].set.slots != NULL && m->t[i].set.count > 0) {
			const cnt_tenant *t = cnt_defs_tenant_at(m->d, i);

			e[n++] = (entry){t->tenant_id, strlen(t->tenant_id), i, NULL};
		}
	for (size_t i = 0; i < m->nf; i++)
		e[n++] = (entry){m->f[i].id, m->f[i].idlen, (size_t)-1, &m->f[i]};
	qsort(e, n, sizeof(*e), by_id);
	if (cnt_buf_append(&b, CNT_MEMBERS_MAGIC, MAGIC_LEN) != 0 || put(&b, n, 4) != 0)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		if (put(&b, e[i].idlen, 2) != 0 || cnt_buf_append(&b, e[i].id, e[i].idlen) != 0)
			goto oom;
		if (e[i].f != NULL ? put(&b, e[i].f->n, 8) != 0 ||
				     cnt_buf_append(&b, e[i].f->fps, e[i].f->n * 16) != 0
				   : put_set(&b, &m->t[e[i].tenant].set) != 0)
			goto oom;
	}
	if (put(&b, XXH3_64bits(b.p, b.len), 8) != 0)
		goto oom;
	if (cnt_write_all(fd, b.p, b.len) != 0)
		rc = cnt_err_write(err, errno, "members '%s'", name);
	else
		rc = 0;
	free(e);
	cnt_buf_release(&b);
	return rc;
oom:
	free(e);
	cnt_buf_release(&b);
	return cnt_err_nomem(err);
}
