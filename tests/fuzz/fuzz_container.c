/*
 * fuzz_container.c - libFuzzer target for the container reader, schema
 * parser, resolution and JSON/CSV output.
 *
 * The input bytes are an Avro container stream (a seed corpus of fixtures
 * lives in tests/fuzz/corpus/fuzz_container/).  They are put in a memfd and
 * read through cnt_records twice: as written (reader schema NULL) and resolved
 * to cnt.CountingEvent, every record printed as JSON (plain and with
 * RFC 3339 times) and as CSV, every header's metadata and canonical schema
 * walked.  Whatever the bytes, the reader must return records or an error
 * with a message, never crash, leak, hang or allocate what a file merely
 * claims: the bounds are small (1 MiB blocks) so a claimed size that got
 * past them would show up as an out-of-memory report.  The guess of a
 * container's records from its first block (cnt_container_guess_records,
 * which sizes cnt-ingest's and cnt-dedup's tables) is held to what the
 * reader finds in that block.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/outfile.h"
#include "avro/container.h"
#include "avro/json.h"
#include "avro/records.h"

extern const char cnt_schema_counting_event[];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Records read per pass at most: a schema whose values take no bytes
 * (null, an empty record) lets a short file claim 2^62 records legally. */
#define MAX_RECORDS 100000

static int input_fd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz_container", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (cnt_write_all(fd, data, size) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void walk_header(cnt_reader *rd, cnt_buf *out)
{
	const cnt_meta_kv *kv;
	size_t n = cnt_reader_meta(rd, &kv);
	const cnt_avro_schema *s = cnt_reader_schema(rd);

	for (size_t i = 0; i < n; i++) {
		out->len = 0;
		if (cnt_json_string(out, (const uint8_t *)kv[i].key, strlen(kv[i].key), 0) != 0 ||
		    cnt_json_string(out, kv[i].val, kv[i].vlen, 1) != 0)
			return;
	}
	if (cnt_codec_name(cnt_reader_codec(rd)) == NULL)
		__builtin_trap();
	out->len = 0;
	if (s == NULL || cnt_schema_canonical(s->root, out) != 0)
		__builtin_trap();
}

static void read_all(const uint8_t *data, size_t size, const cnt_avro_schema *reader,
	const cnt_limits *lim, cnt_buf *out)
{
	cnt_err err = {"", CNT_ERR_DATA};
	int fd = input_fd(data, size);
	cnt_records *in;
	cnt_val v;
	unsigned container = 0;
	int rc, csv_header = 0;

	if (fd < 0)
		return;
	in = cnt_records_open(fd, "fuzz", reader, lim, &err);
	if (in == NULL) {
		if (err.msg[0] == '\0') /* every refusal says why */
			__builtin_trap();
		close(fd);
		return;
	}
	for (int i = 0; i < MAX_RECORDS; i++) {
		const cnt_schema *s;

		err.msg[0] = '\0';
		rc = cnt_records_next(in, &v, &err);
		if (rc < 0 && err.msg[0] == '\0')
			__builtin_trap();
		if (rc <= 0)
			break;
		if (cnt_reader_container(cnt_records_reader(in)) != container) {
			container = cnt_reader_container(cnt_records_reader(in));
			walk_header(cnt_records_reader(in), out);
		}
		s = cnt_records_schema(in);
		if (reader == NULL && s != cnt_reader_schema(cnt_records_reader(in))->root)
			__builtin_trap();
		out->len = 0;
		if (cnt_json_value(out, &v, s, 0) != 0)
			break;
		out->len = 0;
		if (cnt_json_value(out, &v, s, CNT_JSON_ISO_TIME) != 0)
			break;
		if (s->type == CNT_T_RECORD) {
			out->len = 0;
			if (!csv_header && cnt_csv_header(out, s) != 0)
				break;
			csv_header = 1;
			if (cnt_csv_record(out, &v, s, i & 1 ? CNT_JSON_ISO_TIME : 0) != 0)
				break;
		}
	}
	cnt_records_free(in);
	close(fd);
}

/* The guess is at most an event a byte; when the reader reads a first
 * block of records, it is at least that block's count (or every byte
 * after the header, when the count is larger): the block lies within the
 * file, so its span fits in the bytes after the header at least once. */
static void estimate(const uint8_t *data, size_t size, const cnt_limits *lim)
{
	cnt_err err = {"", CNT_ERR_DATA};
	size_t e = cnt_container_guess_records(data, size, size);
	int fd = input_fd(data, size);
	cnt_reader *rd;
	cnt_block b;

	if (e > size)
		__builtin_trap();
	if (fd < 0)
		return;
	rd = cnt_reader_open(fd, "fuzz", lim, &err);
	if (rd != NULL && cnt_reader_next(rd, &b, &err) == 1 && cnt_reader_container(rd) == 1 && b.block_no == 1 &&
	    b.count > 0) {
		size_t after = size - (size_t)b.offset;

		if (b.offset >= size || e < ((uint64_t)b.count < after ? (size_t)b.count : after))
			__builtin_trap();
	}
	cnt_reader_free(rd);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cnt_limits lim = cnt_limits_default();
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_buf out = CNT_BUF_INIT;
	cnt_avro_schema *event;

	lim.max_block_bytes = 1u << 20;
	lim.max_block_decoded = 4u << 20;
	lim.max_string = 1u << 20;
	lim.max_collection = 1u << 16;
	lim.max_header = 1u << 20;
	lim.max_depth = 32;
	event = cnt_avro_schema_parse(cnt_schema_counting_event, strlen(cnt_schema_counting_event), &err);
	if (event == NULL)
		__builtin_trap();
	read_all(data, size, NULL, &lim, &out);
	read_all(data, size, event, &lim, &out);
	estimate(data, size, &lim);
	cnt_avro_schema_free(event);
	cnt_buf_release(&out);
	return 0;
}
