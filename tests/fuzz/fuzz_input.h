/*
 * fuzz_input.h - what the targets reading whole files share: the input
 * bytes as a file descriptor (a memfd, read through the same code as a
 * file), and reader bounds small enough that an allocation a file merely
 * claims shows up as an out-of-memory report (run.sh sets
 * -malloc_limit_mb).
 */
#ifndef CNT_FUZZ_INPUT_H
#define CNT_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/limits.h"
#include "base/outfile.h"

/* Records read per file at most: a short file may legally claim 2^62
 * records of a schema whose values take no bytes. */
#define FUZZ_MAX_RECORDS 100000

static inline int fuzz_input_fd(const char *name, const uint8_t *data, size_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (cnt_write_all(fd, data, size) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static inline cnt_limits fuzz_limits(void)
{
	cnt_limits lim = cnt_limits_default();

	lim.max_block_bytes = 1u << 20;
	lim.max_block_decoded = 4u << 20;
	lim.max_string = 1u << 20;
	lim.max_collection = 1u << 16;
	lim.max_header = 1u << 20;
	lim.max_depth = 32;
	return lim;
}

#endif
