/*
 * fuzz_dedup_state.c - libFuzzer target for the cnt-dedup state file
 * loader (lib/count/dedup.c, cnt_dedup_load_mem; the layout is in
 * lib/count/dedup.h and cnt-dedup(1), STATE FILE).
 *
 * The seeds in tests/fuzz/corpus/fuzz_dedup_state/ are state files written
 * by cnt-dedup (empty, a few keys, keys of several horizons) and damaged
 * ones (truncated, a key count that disagrees with the size, a flipped
 * byte, wrong magic).  A file is 8 bytes of checksum away from being
 * accepted, so the target also tries each input with its checksum
 * recomputed, which lets the fuzzer reach the checks behind it (order,
 * repeated and all-zero keys).  Whatever the bytes: the state loads or
 * is refused with a message, never a crash, a leak or an allocation
 * larger than the file justifies.  A state that loads must save to the
 * same bytes it was loaded from when none of its keys has expired, and
 * in any case save to a file that loads back with the same keys.
 */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "count/dedup.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *data, size_t size)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_dedup d, d2;
	size_t kept, live = 0;
	int fd;
	off_t len;
	uint8_t *saved;

	if (cnt_dedup_load_mem(&d, data, size, "fuzz", 0, &err) != 0) {
		if (err.msg[0] == '\0')
			abort();
		return;
	}
	for (size_t i = 0; i <= d.mask; i++)
		if ((d.slots[i].lo | d.slots[i].hi) && d.slots[i].expire_s > d.clock_s)
			live++;
	fd = memfd_create("fuzz_dedup_saved", MFD_CLOEXEC);
	if (fd < 0 || cnt_dedup_save(&d, fd, "saved", &kept, &err) != 0 || kept != live)
		abort();
	len = lseek(fd, 0, SEEK_END);
	saved = malloc((size_t)len + 1);
	if (saved == NULL || pread(fd, saved, (size_t)len, 0) != len)
		abort();
	if (live == d.count && ((size_t)len != size || memcmp(saved, data, size) != 0))
		abort();   /* nothing expired: the file is canonical */
	if (cnt_dedup_load_mem(&d2, saved, (size_t)len, "saved", 0, &err) != 0 || d2.count != kept ||
	    d2.clock_s != d.clock_s)
		abort();
	/* Every key kept is remembered, and still within its horizon. */
	for (size_t i = 0; i <= d.mask; i++) {
		cnt_dkey k = {d.slots[i].lo, d.slots[i].hi};

		if ((k.lo | k.hi) && d.slots[i].expire_s > d.clock_s &&
		    cnt_dedup_check(&d2, k, d.clock_s, 0) != 1)
			abort();
	}
	cnt_dedup_release(&d2);
	cnt_dedup_release(&d);
	free(saved);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check(data, size);
	if (size >= 32 && size <= (1u << 20)) {
		uint8_t *fixed = malloc(size);
		uint64_t sum;

		if (fixed == NULL)
			return 0;
		memcpy(fixed, data, size);
		sum = XXH64(fixed, size - 8, 0);
		for (int i = 0; i < 8; i++)
			fixed[size - 8 + i] = (uint8_t)(sum >> (8 * i));
		check(fixed, size);
		free(fixed);
	}
	return 0;
}
