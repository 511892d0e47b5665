/*
 * filehead.c - the first bytes of a named regular file (see filehead.h).
 */
#include "base/filehead.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

size_t cnt_file_head(const char *name, void *buf, size_t cap, uint64_t *size, uint64_t *stored)
{
	struct stat st;
	ssize_t got = -1;
	int fd;

	*size = *stored = 0;
	/* stat first: opening a FIFO, even without waiting, would let its
	 * writer start, and closing it again would end that writer with
	 * SIGPIPE before the run opens it */
	if (strcmp(name, "-") == 0 || stat(name, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	fd = open(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		/* not more than the size seen, should the file grow meanwhile */
		got = pread(fd, buf, (uint64_t)st.st_size < cap ? (size_t)st.st_size : cap, 0);
		*size = (uint64_t)st.st_size;
		*stored = (uint64_t)st.st_blocks * 512;
	}
	close(fd);
	if (got <= 0) {
		*size = *stored = 0;
		return 0;
	}
	return (size_t)got;
}

size_t cnt_files_guess(char *const *names, int n, cnt_file_guess_fn guess)
{
	size_t total = 0;

	for (int i = 0; i < n; i++) {
		unsigned char head[65536];
		uint64_t size, stored;
		size_t got = cnt_file_head(names[i], head, sizeof(head), &size, &stored), k, most;

		if (got == 0)
			continue;
		/* the one bound of every caller, whatever the first bytes
		 * claim: an archive's records take 48 bytes or more, an event
		 * of JSON lines or CSV more than 32 (shorter lines claim more
		 * than they can hold) */
		most = (size_t)((stored < size ? stored : size) / 32);
		k = guess(head, got, size);
		k = k < most ? k : most;
		total = total > SIZE_MAX - k ? SIZE_MAX : total + k;
	}
	return total;
}
