/*
 * fuzz_bucket.c - libFuzzer target for the bucket file reader
 * (lib/model/bucket.c over lib/model/record_reader.c): a whole container
 * read as cnt-accumulate, cnt-diff and cnt-project read bucket files, by
 * the fast decoder when the writer's schema is ours and through schema
 * resolution otherwise, each record printed as JSON (which reads its
 * HyperLogLog++ sketches) and compared with itself.
 *
 * The seeds in tests/fuzz/corpus/fuzz_bucket/ are bucket files written by
 * cnt-accumulate (exact and unique counters, sparse and dense sketches,
 * late columns, shards, null and zstandard codecs, an empty file) and one
 * whose writer schema differs from ours so that resolution is taken.
 * Whatever the bytes: records or an error with a message, never a crash,
 * leak, hang or an allocation a file merely claims.  Every record read
 * must re-encode to bytes that read back, through a bucket file of our
 * own, to a record with the same key and values.
 */
#include <stdlib.h>
#include <string.h>

#include "model/bucket.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* b written to a bucket file of one record and read back equals b. */
static void check_roundtrip(const cnt_bucket *b, const cnt_limits *lim)
{
	cnt_err err;
	int fd = memfd_create("fuzz_bucket_rt", MFD_CLOEXEC);
	cnt_writer *w;
	cnt_bucket_in in;
	cnt_bucket back;

	if (fd < 0)
		return;
	w = cnt_bucket_writer_new(fd, "roundtrip", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	if (w == NULL || cnt_bucket_encode(b, cnt_writer_buf(w)) != 0 || cnt_writer_commit(w, &err) != 0 ||
	    cnt_writer_finish(w, &err) != 0)
		abort();
	cnt_writer_free(w);
	if (lseek(fd, 0, SEEK_SET) != 0 || cnt_bucket_in_open(&in, fd, "roundtrip", lim, &err) != 0)
		abort();
	if (cnt_bucket_in_next(&in, &back, &err) != 1 || cnt_bucket_key_cmp(b, &back) != 0 ||
	    cnt_bucket_values_differ(b, &back, 0) || back.counter_version != b->counter_version ||
	    back.shard != b->shard || back.bucket_start != b->bucket_start)
		abort();
	if (cnt_bucket_in_next(&in, &back, &err) != 0)
		abort();
	cnt_bucket_in_release(&in);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cnt_limits lim = fuzz_limits();
	cnt_err err = {"", CNT_ERR_DATA};
	int fd = fuzz_input_fd("fuzz_bucket", data, size);
	cnt_bucket_in in;
	cnt_bucket b;
	cnt_buf json = CNT_BUF_INIT;

	if (fd < 0)
		return 0;
	if (cnt_bucket_in_open(&in, fd, "fuzz", &lim, &err) != 0) {
		if (err.msg[0] == '\0')
			abort();
		close(fd);
		return 0;
	}
	for (int i = 0; i < FUZZ_MAX_RECORDS; i++) {
		int rc;

		err.msg[0] = '\0';
		rc = cnt_bucket_in_next(&in, &b, &err);
		if (rc < 0 && err.msg[0] == '\0')
			abort();
		if (rc <= 0)
			break;
		json.len = 0;
		if (cnt_bucket_to_json(&b, &json) != 0)
			abort();
		if (cnt_bucket_key_cmp(&b, &b) != 0 || cnt_bucket_values_differ(&b, &b, 0) ||
		    cnt_bucket_values_differ(&b, &b, 0.01))
			abort();
		if (i < 64)
			check_roundtrip(&b, &lim);
	}
	cnt_bucket_in_release(&in);
	cnt_buf_release(&json);
	close(fd);
	return 0;
}
