/*
 * tenant_cli.c - the command layer's side of tenant separation: who is
 * asking, the guard that ends a tool with status 5, per-tenant outputs.
 * See cli.h and model/tenant.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "model/tenant.h"

const char *cnt_cli_tenant(const char *opt)
{
	const char *who = opt;
	cnt_err err;

	if (who == NULL) {
		who = getenv(CNT_TENANT_ENV);
		if (who == NULL || *who == 0)
			return NULL;
	}
	if (cnt_tenant_id_check(who, strlen(who), &err) != 0)
		cnt_die_usage("%s: %s", opt ? "--tenant" : CNT_TENANT_ENV, err.msg);
	return who;
}

void cnt_cli_tenant_guard(const char *who, int fd, const char *name)
{
	cnt_err err;

	if (who == NULL)
		return;
	if (lseek(fd, 0, SEEK_SET) != 0)
		cnt_die("'%s': --tenant checks a whole input before printing any of it, so it needs a file, "
			"not a pipe", name);
	if (cnt_tenant_guard_fd(who, fd, name, &err) != 0)
		cnt_die_err(&err);
	if (lseek(fd, 0, SEEK_SET) != 0)
		cnt_die("'%s': cannot rewind: %s", name, strerror(errno));
}

void cnt_cli_tenant_guard_id(const char *who, const char *t, const char *name, const char *what)
{
	cnt_err err;

	if (who != NULL && cnt_tenant_guard_id(who, t ? t : "", t ? strlen(t) : 0, name, what, &err) != 0)
		cnt_die_err(&err);
}

static void make_dir(const char *path)
{
	if (mkdir(path, 0750) != 0 && errno != EEXIST)
		cnt_die("cannot create the directory '%s': %s", path, strerror(errno));
}

char *cnt_cli_tenant_dir(const char *dir, const char *tenant)
{
	size_t n = strlen(dir) + strlen(tenant) + 2;
	char *p = malloc(n);
	cnt_err err;

	if (cnt_tenant_id_check(tenant, strlen(tenant), &err) != 0)
		cnt_die_err(&err);
	if (p == NULL)
		cnt_die_nomem();
	make_dir(dir);
	snprintf(p, n, "%s/%s", dir, tenant);
	make_dir(p);
	return p;
}

void cnt_cli_tenant_out(cnt_out *o, const char *dir, const char *tenant, const char *file)
{
	char *d = cnt_cli_tenant_dir(dir, tenant);
	size_t n = strlen(d) + strlen(file) + 2;
	char *p = malloc(n);
	mode_t um;

	if (p == NULL) {
		free(d);
		cnt_die_nomem();
	}
	snprintf(p, n, "%s/%s", d, file);
	free(d);
	cnt_cli_out(o, p);
	free(p);
	um = umask(0);
	umask(um);
	if (o->is_file && fchmod(o->fd, 0640 & ~um) != 0)
		cnt_die("cannot set the mode of '%s': %s", o->path ? o->path : file, strerror(errno));
}

/* ---- cnt-accumulate --split-tenants ------------------------------------- */

static struct {
	cnt_out **outs;
	size_t n;
	const char *dir;
} S;

static int split_open(void *ctx, const char *tenant, int *fd, const char **name, cnt_err *err)
{
	cnt_out **v = realloc(S.outs, (S.n + 1) * sizeof(*v));
	cnt_out *o = malloc(sizeof(*o));

	(void)ctx;
	if (v != NULL)
		S.outs = v;
	if (v == NULL || o == NULL) {
		free(o);
		return cnt_err_nomem(err);
	}
	cnt_cli_tenant_out(o, S.dir, tenant, "buckets.avro");
	S.outs[S.n++] = o;
	*fd = o->fd;
	*name = o->path;
	return 0;
}

static int split_close(void *ctx, cnt_err *err)
{
	(void)ctx;
	(void)err;
	return 0;
}

size_t cnt_cli_split_buckets(int fd, const char *name, const char *dir, cnt_codec_id codec, int level)
{
	cnt_tenant_sink sink = {split_open, split_close, NULL};
	size_t n;
	cnt_err err;

	S.dir = dir;
	if (lseek(fd, 0, SEEK_SET) != 0)
		cnt_die("cannot rewind %s: %s", name, strerror(errno));
	if (cnt_tenant_split_buckets(fd, name, codec, level, &sink, &n, &err) != 0)
		cnt_die_err(&err);
	return n;
}

void cnt_cli_split_commit(void)
{
	for (size_t i = 0; i < S.n; i++) {
		cnt_cli_commit(S.outs[i]);
		free(S.outs[i]);
	}
	free(S.outs);
	memset(&S, 0, sizeof(S));
}

int cnt_cli_scratch(const char *tmpdir)
{
	size_t n = strlen(tmpdir) + 32;
	char *p = malloc(n);
	sigset_t old;
	int fd, e;

	if (p == NULL)
		cnt_die_nomem();
	snprintf(p, n, "%s/cnt-scratch-XXXXXX", tmpdir);
	/* a section: a signal must not come between creating and unlinking */
	cnt_cli_hold_signals(&old);
	fd = mkstemp(p);
	e = errno;
	if (fd >= 0)
		unlink(p);
	cnt_cli_release_signals(&old);
	free(p);
	if (fd < 0)
		cnt_die("cannot create a scratch file in '%s': %s", tmpdir, strerror(e));
	return fd;
}

void cnt_cli_tenant_guard_path(const char *who, const char *path)
{
	struct stat st;
	char *p = NULL;
	int fd;

	if (who == NULL)
		return;
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		size_t n = strlen(path) + sizeof("/view.avro");

		if ((p = malloc(n)) == NULL)
			cnt_die_nomem();
		snprintf(p, n, "%s/view.avro", path);
		path = p;
	}
	fd = cnt_cli_open_in(path);
	cnt_cli_tenant_guard(who, fd, path);
	cnt_cli_close_in(fd);
	free(p);
}
