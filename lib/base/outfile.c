/*
 * outfile.c - complete-or-absent output files (see outfile.h).
 */
#include "base/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

/* Temporary names are "<dir>/.<name>.tmp-<pid>-XXXXXX".  A tool that is
 * killed outright (SIGKILL, a power cut) cannot remove its own, so the
 * next one that writes <name> removes every "<dir>/.<name>.tmp-<pid>-*"
 * whose process no longer exists.  (A process of another machine sharing
 * the directory is not seen; cnt(7), FILES, says so.) */
static void remove_leftovers(const char *dir, const char *base)
{
	char prefix[512], path[4096];
	size_t pn;
	DIR *d;
	struct dirent *de;

	pn = (size_t)snprintf(prefix, sizeof(prefix), ".%s.tmp-", base);
	if (pn >= sizeof(prefix))
		return;
	d = opendir(*dir ? dir : ".");
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		const char *p = de->d_name;
		char *end;
		long pid;

		if (strncmp(p, prefix, pn) != 0)
			continue;
		p += pn;
		if (*p < '1' || *p > '9')
			continue;
		pid = strtol(p, &end, 10);
		if (*end != '-' || strlen(end) != 7 || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s%s", dir, de->d_name) < sizeof(path))
			unlink(path);
	}
	closedir(d);
}

#define OWNED 16
static int owned[OWNED];   /* fd + 1 of each, 0 where free */

void cnt_fd_own(int fd)
{
	for (int i = 0; i < OWNED; i++) {
		int none = 0;

		if (__atomic_compare_exchange_n(&owned[i], &none, fd + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return;
	}
}

/* async-signal-safe: cnt_out_abort runs in a signal handler too */
void cnt_fd_disown(int fd)
{
	for (int i = 0; i < OWNED; i++)
		if (__atomic_load_n(&owned[i], __ATOMIC_SEQ_CST) == fd + 1)
			__atomic_store_n(&owned[i], 0, __ATOMIC_SEQ_CST);
}

int cnt_fd_owned(int fd)
{
	for (int i = 0; i < OWNED; i++)
		if (fd >= 0 && __atomic_load_n(&owned[i], __ATOMIC_SEQ_CST) == fd + 1)
			return 1;
	return 0;
}

int cnt_out_open_direct(cnt_out *o, const char *path, cnt_err *err)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (path == NULL || strcmp(path, "-") == 0) {
		o->fd = STDOUT_FILENO;
		o->is_file = fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode);
		return 1;
	}
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && strncmp(path, "/dev/", 5) == 0) {
		struct stat so;

		/* "/dev/stdout" (a link to descriptor 1) while standard output
		 * is a file: write to the descriptor.  Renaming a temporary
		 * file over the path would replace the system's link. */
		if (fstat(STDOUT_FILENO, &so) == 0 && so.st_dev == st.st_dev && so.st_ino == st.st_ino) {
			o->fd = STDOUT_FILENO;
			o->is_file = 1;
			return 1;
		}
		return cnt_err_set(err, "'%s': will not replace a file under /dev", path);
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		o->fd = open(path, O_WRONLY | O_CLOEXEC);
		if (o->fd < 0)
			return cnt_err_set(err, "cannot open '%s' for writing: %s", path, strerror(errno));
		return 1;
	}
	return 0;
}

int cnt_out_open(cnt_out *o, const char *path, cnt_err *err)
{
	int rc;

	if ((rc = cnt_out_open_direct(o, path, err)) != 0)
		return rc < 0 ? -1 : 0;
	return cnt_out_open_temp(o, path, err);
}

int cnt_out_open_temp(cnt_out *o, const char *path, cnt_err *err)
{
	const char *slash;
	size_t dirlen;
	mode_t um;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->path = strdup(path);
	slash = strrchr(path, '/');
	dirlen = slash ? (size_t)(slash - path + 1) : 0;
	o->tmp = malloc(strlen(path) + 40);
	if (o->path == NULL || o->tmp == NULL) {
		cnt_out_abort(o);
		return cnt_err_nomem(err);
	}
	memcpy(o->tmp, path, dirlen);
	o->tmp[dirlen] = 0;
	remove_leftovers(o->tmp, path + dirlen);
	sprintf(o->tmp + dirlen, ".%s.tmp-%ld-XXXXXX", path + dirlen, (long)getpid());
	o->fd = mkstemp(o->tmp);
	if (o->fd < 0) {
		int e = errno;

		free(o->tmp);
		o->tmp = NULL;
		cnt_out_abort(o);
		return cnt_err_set(err, "cannot create a file beside '%s': %s", path, strerror(e));
	}
	/* mkstemp makes 0600; give the file the mode a plain create would. */
	um = umask(0);
	umask(um);
	if (fchmod(o->fd, 0666 & ~um) != 0) {
		int e = errno;

		cnt_out_abort(o);
		return cnt_err_set(err, "cannot set the mode of a file beside '%s': %s", path, strerror(e));
	}
	o->is_file = 1;
	cnt_fd_own(o->fd);
	return 0;
}

int cnt_out_commit(cnt_out *o, cnt_err *err)
{
	int rc;

	if (o->tmp == NULL) {
		if (o->fd > STDOUT_FILENO && close(o->fd) != 0) {
			o->fd = -1;
			return cnt_err_write(err, errno, "cannot write '%s'", o->path ? o->path : "output");
		}
		o->fd = -1;
		return 0;
	}
	cnt_fd_disown(o->fd);
	if (fsync(o->fd) != 0 || close(o->fd) != 0) {
		int e = errno;

		o->fd = -1;
		cnt_err_write(err, e, "cannot write '%s'", o->path);
		cnt_out_abort(o);
		return -1;
	}
	o->fd = -1;
	if (rename(o->tmp, o->path) != 0) {
		int e = errno;

		cnt_err_set(err, "cannot rename the finished file to '%s': %s", o->path, strerror(e));
		cnt_out_abort(o);
		return -1;
	}
	free(o->tmp);
	o->tmp = NULL;
	rc = cnt_sync_dir(o->path, err);
	free(o->path);
	o->path = NULL;
	return rc;
}

/* The file is in place, but its name may not be on disk. */
static int sync_failed(cnt_err *err, const char *path, const char *doing, int e)
{
	cnt_err_set(err, "'%s' is written, but %s its directory failed (%s): its name may not survive a crash; "
		"write it again", path, doing, strerror(e));
	if (err)
		err->kind = CNT_ERR_IO;
	return -1;
}

int cnt_sync_dir(const char *path, cnt_err *err)
{
	/* No allocation: the file is in place by now, and running out of
	 * memory here must not be taken for a failed write. */
	const char *slash = strrchr(path, '/');
	size_t n = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
	char dir[PATH_MAX];
	int fd, e;

	if (n >= sizeof(dir))
		return sync_failed(err, path, "naming", ENAMETOOLONG);
	memcpy(dir, n ? path : ".", n ? n : 1);
	dir[n ? n : 1] = 0;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e == EACCES)
			return 0;
		return sync_failed(err, path, "opening", e);
	}
	if (fsync(fd) != 0 && errno != EINVAL) {
		e = errno;
		close(fd);
		return sync_failed(err, path, "flushing", e);
	}
	close(fd);
	return 0;
}

void cnt_out_abort(cnt_out *o)
{
	if (o->tmp) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
	if (o->fd > STDOUT_FILENO) {
		cnt_fd_disown(o->fd);
		close(o->fd);
	}
	o->fd = -1;
	free(o->path);
	o->path = NULL;
}

int cnt_out_wants_compression(const cnt_out *o)
{
	return o->is_file;
}

int cnt_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *q = p;

	while (n > 0) {
		ssize_t w = write(fd, q, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		q += w;
		n -= (size_t)w;
	}
	return 0;
}

int cnt_append_durable(int fd, const char *path, const char *what, const char *line, cnt_err *err)
{
	struct stat st;

	if (fstat(fd, &st) != 0 || cnt_write_all(fd, line, strlen(line)) != 0 || fsync(fd) != 0)
		return cnt_err_write(err, errno, "cannot append to %s '%s'", what, path);
	return st.st_size == 0 ? cnt_sync_dir(path, err) : 0;
}
