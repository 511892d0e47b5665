/*
 * fuzz_rollup.c - libFuzzer target for bucket files with day roll-ups
 * (lib/count/rollup.c, cnt-bucket(5) "Day roll-ups"): the container
 * framing walk of cnt_rollup_seek_days, which skips hourly blocks by their
 * sizes, then the day records read as cnt-project reads them, and the
 * whole file read again as the hourly readers read it (day containers
 * skipped) and as cnt-expire reads it (both kinds).
 *
 * The seeds in tests/fuzz/corpus/fuzz_rollup/ are bucket files written by
 * cnt-accumulate -d (zstandard and null codecs), one without a day
 * container, one cut inside its day container and one whose cnt.rollup is
 * not "day".  Whatever the bytes: records or an error with a message,
 * never a crash, leak, hang or an allocation a file merely claims; a seek
 * that reports a day container leaves the descriptor at an Avro magic.
 */
#include <stdlib.h>
#include <string.h>

#include "count/rollup.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_all(int fd, int days, const cnt_limits *lim)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_bucket_in in;
	cnt_bucket b;

	if (cnt_bucket_in_open(&in, fd, "fuzz", lim, &err) != 0) {
		if (err.msg[0] == '\0')
			abort();
		return;
	}
	in.days = days;
	for (int i = 0; i < FUZZ_MAX_RECORDS; i++) {
		int rc;

		err.msg[0] = '\0';
		rc = cnt_bucket_in_next(&in, &b, &err);
		if (rc < 0 && err.msg[0] == '\0')
			abort();
		if (rc <= 0)
			break;
		if (days == 1 && !in.is_day)
			abort();
		if (days == 0 && in.is_day)
			abort();
	}
	cnt_bucket_in_release(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cnt_limits lim = fuzz_limits();
	cnt_err err = {"", CNT_ERR_DATA};
	int fd = fuzz_input_fd("fuzz_rollup", data, size);
	int rc;

	if (fd < 0)
		return 0;
	rc = cnt_rollup_seek_days(fd, "fuzz", &err);
	if (rc < 0 && err.msg[0] == '\0')
		abort();
	if (rc == 1) {
		off_t at = lseek(fd, 0, SEEK_CUR);

		if (at < 0 || (size_t)at + 4 > size || memcmp(data + at, "Obj\x01", 4) != 0)
			abort();
		read_all(fd, 1, &lim);
	}
	if (rc == 0 && lseek(fd, 0, SEEK_CUR) != 0)
		abort();
	for (int days = -1; days <= 0; days++) {
		if (lseek(fd, 0, SEEK_SET) != 0)
			abort();
		read_all(fd, days, &lim);
	}
	close(fd);
	return 0;
}
