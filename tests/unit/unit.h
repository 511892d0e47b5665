/*
 * unit.h - the smallest test harness that says what failed.
 *
 * Each test file defines test functions, lists them in main() with RUN(),
 * and returns unit_report().  CHECK() records a failure with file and line
 * and carries on, so one run shows every broken assertion.
 */
#ifndef CNT_UNIT_H
#define CNT_UNIT_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int unit_failed_checks;
static int unit_tests_passed, unit_tests_failed;

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		unit_failed_checks++; \
	} \
} while (0)

#define CHECK_EQ_INT(a, b) do { \
	long long unit_a_ = (long long)(a), unit_b_ = (long long)(b); \
	if (unit_a_ != unit_b_) { \
		fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, \
			#a, unit_a_, #b, unit_b_); \
		unit_failed_checks++; \
	} \
} while (0)

#define CHECK_EQ_STR(a, b) do { \
	const char *unit_a_ = (a), *unit_b_ = (b); \
	if (unit_a_ == NULL || unit_b_ == NULL || strcmp(unit_a_, unit_b_) != 0) { \
		fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__, \
			#a, unit_a_ ? unit_a_ : "(null)", unit_b_ ? unit_b_ : "(null)"); \
		unit_failed_checks++; \
	} \
} while (0)

#define RUN(fn) do { \
	int unit_before_ = unit_failed_checks; \
	fn(); \
	if (unit_failed_checks == unit_before_) { \
		unit_tests_passed++; \
	} else { \
		unit_tests_failed++; \
		fprintf(stderr, "FAIL %s\n", #fn); \
	} \
} while (0)

/* A file holding the n bytes at text, open for reading at its start
 * (removed when closed), or -1. */
static inline int unit_file_of(const void *text, size_t n)
{
	FILE *f = tmpfile();
	int fd;

	if (f == NULL || fwrite(text, 1, n, f) != n || fflush(f) != 0) {
		if (f)
			fclose(f);
		return -1;
	}
	fd = dup(fileno(f));
	fclose(f);
	if (fd >= 0)
		lseek(fd, 0, SEEK_SET);
	return fd;
}

static inline int unit_report(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, unit_tests_passed, unit_tests_failed);
	return unit_tests_failed ? 1 : 0;
}

#endif
