/*
 * container.h - Avro object container files (Avro 1.11 specification,
 * "Object Container Files"), read and written by our own code.
 *
 * Layout: the magic "Obj" 0x01; a metadata map (string keys, bytes values;
 * avro.schema is the writer's schema as JSON, avro.codec the block codec,
 * absent meaning null); a 16-byte sync marker; then blocks, each a long
 * record count, a long byte size, that many bytes of (compressed)
 * records, and the sync marker again.
 *
 * Why not libavro-c's: Debian's 1.11 has no zstandard codec, returns a
 * stale record on an empty block and loses the rest of the file, reads
 * concatenated containers as garbage, fails on records larger than its
 * block, leaves half-written files and seeds its sync marker (and the
 * process's rand()) from the clock.
 *
 * Reader: any number of containers back to back on one stream (cat
 * day1.avro day2.avro | ...) are read one after another; blocks holding
 * zero records and header-only containers are fine; every length a file
 * claims is checked against cnt_limits before anything is allocated.
 *
 * Writer: deterministic.  The sync marker is the XXH3-128 hash of the
 * schema text and codec name, metadata is written in a fixed order, and
 * blocks are cut at a fixed size, so the same records give the same bytes.
 * The header is written with the first block, or by cnt_writer_finish()
 * when there are no records (a header-only file) or the header is deferred
 * (cnt_writer_defer; guessed at the first block where the file allows).
 */
#ifndef CNT_CONTAINER_H
#define CNT_CONTAINER_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "avro/codec.h"
#include "base/err.h"
#include "base/limits.h"
#include "avro/schema.h"

#define CNT_SYNC_SIZE 16
/* Header key by which a writer declares that its container ends with an
 * end marker: one block of zero records (see cnt-avro(5)). */
#define CNT_END_MARKER_KEY "cnt.end_marker"
#define CNT_BLOCK_BYTES_DEFAULT (256u << 10)

typedef struct cnt_meta_kv {
	char *key;
	uint8_t *val;
	size_t vlen;
} cnt_meta_kv;

typedef struct cnt_block {
	const uint8_t *data;   /* decompressed records; valid until the next call */
	size_t len;
	int64_t count;         /* records in the block (may be 0) */
	uint64_t block_no;     /* 1-based within its container */
	uint64_t first_record; /* records before this block, in this input */
	uint64_t offset;       /* byte offset of the block in the input */
	/* Set by a reader opened with a check (cnt_reader_open_checked): 1
	 * when check() ran over this block; then check_err is NULL when every
	 * record passed, or the failure (valid until the next call), with
	 * bad_record the 0-based index of the first bad record in the block
	 * (-1: the block as a whole). */
	int checked;
	int64_t bad_record;
	const cnt_err *check_err;
} cnt_block;

typedef struct cnt_reader cnt_reader;

/* Opens a reader on fd (which it does not close) and reads the first
 * container header.  name is used in messages.  Returns NULL with err set
 * when the input is not an Avro container or its header is bad. */
cnt_reader *cnt_reader_open(int fd, const char *name, const cnt_limits *lim, cnt_err *err);
/* The same, for a caller that has already read the first n bytes of the
 * stream (to sniff its format): they are read before fd.  flags:
 * CNT_READER_HEADERS makes cnt_reader_next() return 2 after reading each
 * further container's header, so a header-only container is seen too. */
#define CNT_READER_HEADERS 1
cnt_reader *cnt_reader_open_prefixed(int fd, const char *name, const void *prefix, size_t n,
	const cnt_limits *lim, int flags, cnt_err *err);
/* A check of every record, run on the read-ahead threads right after a
 * block is decompressed, so that records are checked on both cores while
 * the caller receives blocks in order (cnt-cat --count).  classify() is
 * called once per container header, on one thread at a time: 0 leaves
 * that container's blocks unchecked, anything else is passed to check().
 * check() may run on several threads at once: it returns 0, or -1 with
 * *bad and err set (see cnt_block).  Blocks read without read-ahead (the
 * null codec, CNT_READ_THREADS=0) are not checked: the caller must check
 * a block whose checked is 0 itself. */
typedef struct cnt_block_check {
	int (*classify)(void *arg, const cnt_avro_schema *schema);
	int (*check)(void *arg, int cls, const cnt_avro_schema *schema, const cnt_block *b, int64_t *bad,
		cnt_err *err);
	void *arg;
} cnt_block_check;
cnt_reader *cnt_reader_open_checked(int fd, const char *name, const void *prefix, size_t n,
	const cnt_limits *lim, int flags, const cnt_block_check *chk, cnt_err *err);
void cnt_reader_free(cnt_reader *r);

/* Reads the next block.  Returns 1 with *b filled, 0 at the end of the
 * input, or -1 with err naming the input, byte offset and block.  When a
 * further container follows on the stream its header is read on the way:
 * cnt_reader_container() then returns a larger number and the schema,
 * codec and metadata are the new container's.  With CNT_READER_HEADERS it
 * returns 2 (and no block) right after each further header.  After 0 they
 * are the last container's, so that one without blocks (a header and its
 * end marker) is seen at the end of the stream. */
int cnt_reader_next(cnt_reader *r, cnt_block *b, cnt_err *err);

unsigned cnt_reader_container(const cnt_reader *r);   /* 1-based */
const cnt_avro_schema *cnt_reader_schema(const cnt_reader *r);
cnt_codec_id cnt_reader_codec(const cnt_reader *r);
size_t cnt_reader_meta(const cnt_reader *r, const cnt_meta_kv **kv);
const uint8_t *cnt_reader_sync(const cnt_reader *r);
const char *cnt_reader_name(const cnt_reader *r);

/* A guess of the records in a container file of size bytes, from its
 * first n bytes at p (which are distrusted): its first block's records
 * per byte, over the bytes after the header, at most one a byte.  0 when
 * the n bytes do not hold the header and the first block's count and
 * size, that block holds no record, or it does not fit in the file.
 * Sizes the tables of cnt-ingest, cnt-dedup and cnt-count up front. */
size_t cnt_container_guess_records(const void *p, size_t n, uint64_t size);

typedef struct cnt_writer cnt_writer;

/* Creates a writer on fd (not closed by it).  schema_json is written as
 * given.  level CNT_LEVEL_DEFAULT is the codec's default; block_bytes 0 is
 * the default.
 * Returns NULL with err set on a bad schema or out of memory. */
cnt_writer *cnt_writer_new(int fd, const char *name, const char *schema_json,
	cnt_codec_id codec, int level, size_t block_bytes, cnt_err *err);
/* Lets compression wait for the tool's own threads, for a tool whose one
 * thread sets the pace (cnt-ingest's admitting thread): the workers
 * (CNT_WRITE_THREADS) run 5 nice levels below the tool (CNT_WRITE_NICE,
 * 0 to 19, says how many), so that where they share a processor with
 * that thread it gets about three quarters of it and not half, and up
 * to 64 blocks instead of 6 wait for them, compressed in the time the
 * tool's threads leave.  The bytes are the same.  Nothing without
 * workers; only before the first block. */
void cnt_writer_yield(cnt_writer *w);
/* Adds a metadata entry written after avro.codec and avro.schema, in the
 * order added.  Only before the first record.  Returns 0 or -1. */
int cnt_writer_meta(cnt_writer *w, const char *key, const void *val, size_t n, cnt_err *err);
/* Hooks of cnt_writer_defer(), each optional (NULL).  record() is called
 * by cnt_writer_commit() with the bytes of the record being committed (a
 * non-zero return fails the commit: the record is dropped, err set);
 * header() just before the header is made, so it may still add metadata
 * with cnt_writer_meta(): by cnt_writer_finish(), and, where the header
 * is guessed (below), also at the first block, its metadata then dropped
 * and made again at the end; release() by cnt_writer_free(), to free ctx. */
typedef struct cnt_writer_hooks {
	int (*record)(void *ctx, const uint8_t *rec, size_t n, cnt_err *err);
	int (*header)(void *ctx, cnt_writer *w, cnt_err *err);
	void (*release)(void *ctx);
	void *ctx;
} cnt_writer_hooks;
/* Defers the header to cnt_writer_finish(), for metadata that depends on
 * the records (model/fingerprint.h).  On a temporary file the process
 * made for a named output (base/outfile.h, cnt_fd_owned: no other writer
 * shares it), regular, read-write and not appending, the header is
 * guessed from the records before the first block and written with it;
 * at the end it is made again and, if it differs, the blocks are moved
 * in the file to follow it (the stream is then left at the container's
 * end, for another after it).  Elsewhere (standard output, a pipe, or
 * CNT_GUESS_HEADER=0 in the environment) the blocks are kept
 * in memory (up to 8 MiB), then in an unlinked temporary file under
 * $TMPDIR (or /tmp), and copied after the header at the end.  The bytes
 * written are the same every way, and as without it.  Only before the
 * first record, once; h is copied.  Returns 0 or -1 (then h->release is
 * not called). */
int cnt_writer_defer(cnt_writer *w, const cnt_writer_hooks *h, cnt_err *err);
/* What w was made with (for a second container on the same stream). */
int cnt_writer_fd(const cnt_writer *w);
cnt_codec_id cnt_writer_codec(const cnt_writer *w);
int cnt_writer_level(const cnt_writer *w);
const char *cnt_writer_name(const cnt_writer *w);
/* The buffer to encode the next record into (append to it). */
cnt_buf *cnt_writer_buf(cnt_writer *w);
/* Ends the record just appended; writes a block when the buffer is full.
 * Returns 0, or -1 with err set (a write failed). */
int cnt_writer_commit(cnt_writer *w, cnt_err *err);
/* Writes what remains (at least the header), then the end marker (an
 * empty block; cnt-event(5), "Container files").  On standard output when
 * it is not a regular file (a pipe: the next stage reads it), the marker
 * is held back until cnt_writer_end_deferred(), which the command layer
 * calls in cnt_cli_finish() after every other output was committed: a
 * tool that fails after its last block still leaves its reader a stream
 * without the marker.  Returns 0 or -1. */
int cnt_writer_finish(cnt_writer *w, cnt_err *err);
/* Writes the end markers held back by cnt_writer_finish().  A program that
 * writes a container to standard output without the command layer calls
 * it last.  Returns 0 or -1 (a write failed). */
int cnt_writer_end_deferred(cnt_err *err);
uint64_t cnt_writer_records(const cnt_writer *w);
void cnt_writer_free(cnt_writer *w);

#endif
