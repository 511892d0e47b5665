/*
 * test_filehead.c - a file's first bytes, and the guesses made from them
 * (lib/base/filehead.h).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/filehead.h"
#include "unit.h"

/* what the last guess was given */
static size_t seen_got;
static uint64_t seen_size;
static unsigned char seen_first;

/* claims every file holds more records than any could */
static size_t guess_all(const void *head, size_t got, uint64_t size)
{
	seen_got = got;
	seen_size = size;
	seen_first = *(const unsigned char *)head;
	return SIZE_MAX;
}

/* claims a record in 100 bytes */
static size_t guess_100(const void *head, size_t got, uint64_t size)
{
	(void)head;
	(void)got;
	return (size_t)(size / 100);
}

static size_t guess_none(const void *head, size_t got, uint64_t size)
{
	(void)head;
	(void)got;
	(void)size;
	return 0;
}

/* a temporary file of n bytes 'a'..'z' over and over, flushed so that
 * st_blocks counts them; its descriptor, or -1 */
static int bytes_file(char *name, size_t n)
{
	char *p = malloc(n ? n : 1);
	int fd = mkstemp(name), ok;

	if (p == NULL || fd < 0) {
		free(p);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		p[i] = (char)('a' + i % 26);
	ok = write(fd, p, n) == (ssize_t)n && fsync(fd) == 0;
	free(p);
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

static void test_head(void)
{
	char a[] = "/tmp/test_filehead.XXXXXX", e[] = "/tmp/test_filehead.XXXXXX";
	char d[] = "/tmp/test_filehead.XXXXXX", fifo[4096];
	unsigned char buf[100];
	uint64_t size = 1, stored = 1;
	int fd = bytes_file(a, 1000), efd = mkstemp(e);

	CHECK(fd >= 0 && efd >= 0);
	/* the first bytes, the size, what it takes on disk */
	CHECK_EQ_INT(cnt_file_head(a, buf, sizeof(buf), &size, &stored), 100);
	CHECK(memcmp(buf, "abcdefghijklmnopqrstuvwxyzab", 28) == 0);
	CHECK_EQ_INT(size, 1000);
	{
		struct stat sb;

		CHECK(fd >= 0 && fstat(fd, &sb) == 0 && stored == (uint64_t)sb.st_blocks * 512);
	}
	/* a file shorter than the room: all of it */
	{
		unsigned char big[4096];

		CHECK_EQ_INT(cnt_file_head(a, big, sizeof(big), &size, &stored), 1000);
		CHECK(big[999] == 'a' + 999 % 26);
	}
	/* nothing to judge: 0, with size and stored 0 */
	CHECK_EQ_INT(cnt_file_head(e, buf, sizeof(buf), &size, &stored), 0);
	CHECK(size == 0 && stored == 0);
	size = stored = 1;
	CHECK_EQ_INT(cnt_file_head("-", buf, sizeof(buf), &size, &stored), 0);
	CHECK(size == 0 && stored == 0);
	CHECK_EQ_INT(cnt_file_head("/nonexistent/file", buf, sizeof(buf), &size, &stored), 0);
	CHECK_EQ_INT(cnt_file_head("/dev/null", buf, sizeof(buf), &size, &stored), 0);
	CHECK(mkdtemp(d) != NULL);
	CHECK_EQ_INT(cnt_file_head(d, buf, sizeof(buf), &size, &stored), 0);
	/* a FIFO is never opened: a writer waiting for its reader still waits
	 * after the call (an open, even one that does not wait, would let it
	 * start; ingest.bats shows what that does to a pipeline) */
	snprintf(fifo, sizeof(fifo), "%s/fifo", d);
	CHECK(mkfifo(fifo, 0600) == 0);
	{
		pid_t pid = fork();
		int st = 0, r;

		if (pid == 0) {
			alarm(10);
			_exit(open(fifo, O_WRONLY) >= 0 ? 0 : 1);
		}
		CHECK(pid > 0);
		usleep(100000);   /* the writer is in its open by now */
		CHECK_EQ_INT(cnt_file_head(fifo, buf, sizeof(buf), &size, &stored), 0);
		usleep(100000);
		CHECK(pid > 0 && waitpid(pid, &st, WNOHANG) == 0);
		r = open(fifo, O_RDONLY | O_NONBLOCK);   /* now let it go */
		if (pid > 0)
			waitpid(pid, &st, 0);
		if (r >= 0)
			close(r);
	}
	unlink(fifo);
	rmdir(d);
	if (fd >= 0)
		close(fd);
	if (efd >= 0)
		close(efd);
	unlink(a);
	unlink(e);
}

/* at most a record in 32 bytes of what the file holds on disk (less than
 * its size on a file system that compresses) */
static long long bound(int fd)
{
	struct stat sb;
	uint64_t stored;

	if (fd < 0 || fstat(fd, &sb) != 0)
		return -1;
	stored = (uint64_t)sb.st_blocks * 512;
	return (long long)((stored < (uint64_t)sb.st_size ? stored : (uint64_t)sb.st_size) / 32);
}

static long long least(long long a, long long b)
{
	return a < b ? a : b;
}

static void test_guess(void)
{
	char a[] = "/tmp/test_filehead.XXXXXX", b[] = "/tmp/test_filehead.XXXXXX";
	char dash[] = "-", none[] = "/nonexistent/file";
	char *names[4] = {a, dash, none, b};
	int fa = bytes_file(a, 100000), fb = bytes_file(b, 3200);
	struct stat sb;

	CHECK(fa >= 0 && fb >= 0);
	/* the guess is given the first 64 KiB and the size */
	CHECK_EQ_INT(cnt_files_guess(names, 1, guess_100), least(1000, bound(fa)));
	CHECK_EQ_INT(cnt_files_guess(names, 1, guess_all), bound(fa));
	CHECK(bound(fa) <= 100000 / 32);
	CHECK_EQ_INT(seen_got, 65536);
	CHECK_EQ_INT(seen_size, 100000);
	CHECK_EQ_INT(seen_first, 'a');
	/* a whole file when it is shorter */
	CHECK_EQ_INT(cnt_files_guess(names + 3, 1, guess_all), bound(fb));
	CHECK_EQ_INT(seen_got, 3200);
	/* the sum over the files it can judge; "-" and a missing file add
	 * nothing, nor does a file the guess finds nothing in */
	CHECK_EQ_INT(cnt_files_guess(names, 4, guess_100), least(1000, bound(fa)) + least(32, bound(fb)));
	CHECK_EQ_INT(cnt_files_guess(names, 4, guess_all), bound(fa) + bound(fb));
	CHECK_EQ_INT(cnt_files_guess(names, 4, guess_none), 0);
	seen_got = 12345;
	CHECK_EQ_INT(cnt_files_guess(names + 1, 2, guess_all), 0);
	CHECK_EQ_INT(seen_got, 12345);   /* not asked about what cannot be read */
	CHECK_EQ_INT(cnt_files_guess(names, 0, guess_all), 0);
	/* made a sparse 64 GiB, the file still counts at most one record in
	 * 32 bytes of what it holds on disk, not of its size (2^31) */
	CHECK(fa >= 0 && ftruncate(fa, (off_t)1 << 36) == 0 && fstat(fa, &sb) == 0);
	CHECK((uint64_t)sb.st_blocks * 512 < (uint64_t)1 << 30);
	CHECK_EQ_INT(cnt_files_guess(names, 1, guess_all), bound(fa));
	CHECK_EQ_INT(seen_size, (long long)1 << 36);
	/* and a guess below the bound stands (where the file system does not
	 * compress its 3,200 bytes into less than 1,024) */
	CHECK_EQ_INT(cnt_files_guess(names + 3, 1, guess_100), least(32, bound(fb)));
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	unlink(a);
	unlink(b);
}

int main(void)
{
	RUN(test_head);
	RUN(test_guess);
	return unit_report("test_filehead");
}
