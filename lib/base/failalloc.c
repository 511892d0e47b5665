/*
 * failalloc.c - allocation failure injection for the tools' tests.
 *
 * The tools are linked with -Wl,--wrap for malloc, calloc, realloc,
 * strdup, strndup, posix_memalign and mmap (Makefile, FAILALLOC), so every
 * allocation made by cnt's own code comes through here.  With
 * CNT_FAIL_ALLOC=N in the environment the N-th of them (counting from 1)
 * returns NULL, as SQLite's test builds do; with CNT_FAIL_ALLOC unset
 * nothing changes.  tests/faults.bats walks N over every allocation a
 * small run makes and checks that each tool then fails cleanly: one
 * message, the documented status, no output left behind.
 *
 * Allocations inside the shared libraries (zstd, jansson, ...) are not
 * counted: --wrap only reaches calls that the linker resolves from our
 * objects.
 *
 * fsync is wrapped too: with CNT_FAIL_FSYNC=file every fsync of a regular
 * file fails with EIO, with CNT_FAIL_FSYNC=dir every fsync of a directory
 * (base/outfile.h, cnt_sync_dir), so that tests/faults.bats can prove a
 * disk that fails to flush a file, or the name it was given, is reported
 * and never taken for success.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
void *__real_mmap(void *addr, size_t n, int prot, int flags, int fd, off_t off);
int __real_fsync(int fd);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t n);
void *__wrap_mmap(void *addr, size_t n, int prot, int flags, int fd, off_t off);
int __wrap_fsync(int fd);

static long fail_at = -1;   /* -1: not yet read from the environment */
static long count;

/* Whether this allocation is the one to fail.  Worker threads allocate
 * too, so the count is atomic (which allocation is the N-th may then
 * differ from run to run; that every one of them fails cleanly is what
 * the tests check). */
static int should_fail(void)
{
	if (fail_at < 0) {
		const char *e = getenv("CNT_FAIL_ALLOC");

		fail_at = e && *e ? strtol(e, NULL, 10) : 0;
		if (fail_at < 0)
			fail_at = 0;
	}
	return fail_at > 0 && __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED) == fail_at;
}

void *__wrap_malloc(size_t n)
{
	return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
	return should_fail() ? NULL : __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
	return should_fail() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return should_fail() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return should_fail() ? NULL : __real_strndup(s, n);
}

int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
	return should_fail() ? ENOMEM : __real_posix_memalign(p, align, n);
}

void *__wrap_mmap(void *addr, size_t n, int prot, int flags, int fd, off_t off)
{
	if (should_fail()) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return __real_mmap(addr, n, prot, flags, fd, off);
}

int __wrap_fsync(int fd)
{
	const char *e = getenv("CNT_FAIL_FSYNC");
	struct stat st;

	if (e && *e && fstat(fd, &st) == 0 &&
	    ((strcmp(e, "dir") == 0 && S_ISDIR(st.st_mode)) || (strcmp(e, "file") == 0 && S_ISREG(st.st_mode)))) {
		errno = EIO;
		return -1;
	}
	return __real_fsync(fd);
}
