/*
 * recin.c - resolved records from container inputs (see recin.h).
 */
#include "avro/records.h"

#include <stdlib.h>
#include <string.h>

struct cnt_records {
	cnt_reader *rd;
	const cnt_avro_schema *reader;
	cnt_limits lim;
	cnt_plan *plan;
	unsigned plan_container;
	cnt_block blk;
	cnt_cur cur;
	int64_t left;          /* records left in blk */
	uint64_t record_no;
	cnt_arena arena;
	char *skip_canon;
	cnt_skipper skipper;
	int use_skipper;       /* for the current container */
};

static int ensure_plan(cnt_records *in, cnt_err *err)
{
	const cnt_avro_schema *w = cnt_reader_schema(in->rd);

	if (in->plan && in->plan_container == cnt_reader_container(in->rd))
		return 0;
	cnt_plan_free(in->plan);
	in->plan = cnt_plan_new(w->root, in->reader ? in->reader->root : w->root, err);
	if (in->plan == NULL)
		return cnt_err_prefix(err, "'%s' (container %u): cannot read it as the expected schema",
			cnt_reader_name(in->rd), cnt_reader_container(in->rd));
	in->plan_container = cnt_reader_container(in->rd);
	in->use_skipper = 0;
	if (in->skipper) {
		cnt_buf canon = CNT_BUF_INIT;

		if (cnt_schema_canonical(w->root, &canon) != 0 || cnt_buf_putc(&canon, 0) != 0) {
			cnt_buf_release(&canon);
			return cnt_err_nomem(err);
		}
		in->use_skipper = strcmp((const char *)canon.p, in->skip_canon) == 0;
		cnt_buf_release(&canon);
	}
	return 0;
}

int cnt_records_set_reader(cnt_records *in, const cnt_avro_schema *reader, cnt_err *err)
{
	in->reader = reader;
	in->plan_container = 0;   /* recompile for the current container */
	return ensure_plan(in, err);
}

int cnt_records_set_skipper(cnt_records *in, const char *canon, cnt_skipper fn)
{
	free(in->skip_canon);
	in->skip_canon = strdup(canon);
	if (in->skip_canon == NULL)
		return -1;
	in->skipper = fn;
	in->plan_container = 0;   /* recheck the current container */
	return ensure_plan(in, NULL);
}

cnt_records *cnt_records_open(int fd, const char *name, const cnt_avro_schema *reader,
	const cnt_limits *lim, cnt_err *err)
{
	return cnt_records_open_prefixed(fd, name, NULL, 0, reader, lim, err);
}

cnt_records *cnt_records_open_prefixed(int fd, const char *name, const void *prefix, size_t n,
	const cnt_avro_schema *reader, const cnt_limits *lim, cnt_err *err)
{
	cnt_records *in = calloc(1, sizeof(*in));

	if (in == NULL) {
		cnt_err_nomem(err);
		return NULL;
	}
	in->lim = lim ? *lim : cnt_limits_default();
	in->reader = reader;
	cnt_arena_init(&in->arena, in->lim.max_block_decoded);
	in->rd = cnt_reader_open_prefixed(fd, name, prefix, n, &in->lim, 0, err);
	if (in->rd == NULL || ensure_plan(in, err) != 0) {
		cnt_records_free(in);
		return NULL;
	}
	return in;
}

void cnt_records_free(cnt_records *in)
{
	if (in == NULL)
		return;
	cnt_plan_free(in->plan);
	free(in->skip_canon);
	cnt_reader_free(in->rd);
	cnt_arena_release(&in->arena);
	free(in);
}

int cnt_records_next_block(cnt_records *in, cnt_block *b, cnt_err *err)
{
	for (;;) {
		int rc = cnt_reader_next(in->rd, b, err);

		if (rc <= 0)
			return rc;
		if (ensure_plan(in, err) != 0)
			return -1;
		if (b->count > 0)
			return 1;
		/* An empty block: nothing to decode, but it must be empty. */
		if (b->len != 0)
			return cnt_err_set(err, "'%s' byte %llu: block %llu holds 0 records but %zu bytes: corrupt file",
				cnt_reader_name(in->rd), (unsigned long long)b->offset,
				(unsigned long long)b->block_no, b->len);
	}
}

static int next_record(cnt_records *in, cnt_val *v, cnt_err *err)
{
	while (in->left == 0) {
		int rc;

		if (in->blk.data && in->cur.p != in->cur.end)
			return cnt_err_set(err, "'%s' block %llu: %zu bytes left over after its %lld records: corrupt file",
				cnt_reader_name(in->rd), (unsigned long long)in->blk.block_no,
				(size_t)(in->cur.end - in->cur.p), (long long)in->blk.count);
		rc = cnt_records_next_block(in, &in->blk, err);
		if (rc <= 0) {
			in->blk.data = NULL;
			return rc;
		}
		in->cur.p = in->blk.data;
		in->cur.end = in->blk.data + in->blk.len;
		in->left = in->blk.count;
	}
	in->record_no++;
	if (v == NULL) {
		if (in->use_skipper ? in->skipper(&in->cur, &in->lim) != 0 && cnt_err_set(err, "malformed record") :
		    cnt_skip(cnt_reader_schema(in->rd)->root, &in->cur, &in->lim, 0, err) != 0)
			return cnt_err_prefix(err, "'%s' record %llu (block %llu)", cnt_reader_name(in->rd),
				(unsigned long long)in->record_no, (unsigned long long)in->blk.block_no);
		in->left--;
		return 1;
	}
	cnt_arena_reset(&in->arena);
	if (cnt_plan_decode(in->plan, &in->cur, &in->arena, &in->lim, v, err) != 0)
		return cnt_err_prefix(err, "'%s' record %llu (block %llu)", cnt_reader_name(in->rd),
			(unsigned long long)in->record_no, (unsigned long long)in->blk.block_no);
	in->left--;
	return 1;
}

int cnt_records_next(cnt_records *in, cnt_val *v, cnt_err *err)
{
	return next_record(in, v, err);
}

int cnt_records_skip(cnt_records *in, cnt_err *err)
{
	return next_record(in, NULL, err);
}

int cnt_records_decode(cnt_records *in, cnt_cur *c, cnt_val *v, cnt_err *err)
{
	cnt_arena_reset(&in->arena);
	return cnt_plan_decode(in->plan, c, &in->arena, &in->lim, v, err);
}

const cnt_schema *cnt_records_schema(const cnt_records *in)
{
	return in->reader ? in->reader->root : cnt_reader_schema(in->rd)->root;
}

uint64_t cnt_records_record_no(const cnt_records *in)
{
	return in->record_no;
}

cnt_reader *cnt_records_reader(cnt_records *in)
{
	return in->rd;
}
