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
	/* counting (cnt_records_open_counting): blocks checked on the
	 * read-ahead threads */
	int counting;
	char *name;
	int blk_checked;       /* blk was checked: its records are not decoded again */
	int64_t fail_at;       /* index in blk of its first bad record, -1 the block, -2 none */
	cnt_err fail_err;
};

static int is_canon(const cnt_schema *w, const char *canon, int *same)
{
	cnt_buf c = CNT_BUF_INIT;

	if (cnt_schema_canonical(w, &c) != 0 || cnt_buf_putc(&c, 0) != 0) {
		cnt_buf_release(&c);
		return -1;
	}
	*same = strcmp((const char *)c.p, canon) == 0;
	cnt_buf_release(&c);
	return 0;
}

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
	if (in->skipper && is_canon(w->root, in->skip_canon, &in->use_skipper) != 0)
		return cnt_err_nomem(err);
	return 0;
}

int cnt_records_set_reader(cnt_records *in, const cnt_avro_schema *reader, cnt_err *err)
{
	in->reader = reader;
	in->plan_container = 0;   /* recompile for the current container */
	return ensure_plan(in, err);
}

/* cnt_block_check.classify: 1 for the skipper's schema, 2 for any other
 * (the generic walk), 3 when that could not be told (out of memory: its
 * blocks fail, rather than be checked by the weaker walk). */
static int classify(void *arg, const cnt_avro_schema *w)
{
	const cnt_records *in = arg;
	int same = 0;

	if (is_canon(w->root, in->skip_canon, &same) != 0)
		return 3;
	return same ? 1 : 2;
}

static int leftover(cnt_err *err, const char *name, const cnt_block *b, const cnt_cur *c)
{
	return cnt_err_set(err, "'%s' block %llu: %zu bytes left over after its %lld records: corrupt file", name,
		(unsigned long long)b->block_no, (size_t)(c->end - c->p), (long long)b->count);
}

/* cnt_block_check.check: every record of b, on a read-ahead thread; the
 * messages are those next_record() gives, without the record number,
 * which only the caller knows. */
static int check_block(void *arg, int cls, const cnt_avro_schema *w, const cnt_block *b, int64_t *bad,
	cnt_err *err)
{
	const cnt_records *in = arg;
	cnt_cur c = {b->data, b->data + b->len};

	if (cls == 3) {
		*bad = -1;
		return cnt_err_oom(err, "checking '%s' block %llu", in->name, (unsigned long long)b->block_no);
	}
	for (int64_t i = 0; i < b->count; i++)
		if (cls == 1 ? in->skipper(&c, &in->lim) != 0 && cnt_err_set(err, "malformed record") :
		    cnt_skip(w->root, &c, &in->lim, 0, err) != 0) {
			*bad = i;
			return -1;
		}
	if (c.p != c.end) {
		*bad = -1;
		return leftover(err, in->name, b, &c);
	}
	return 0;
}

cnt_records *cnt_records_open(int fd, const char *name, const cnt_avro_schema *reader,
	const cnt_limits *lim, cnt_err *err)
{
	return cnt_records_open_prefixed(fd, name, NULL, 0, reader, lim, err);
}

static cnt_records *open_records(int fd, const char *name, const void *prefix, size_t n,
	const cnt_avro_schema *reader, const cnt_limits *lim, const char *canon, cnt_skipper skipper, cnt_err *err)
{
	cnt_records *in = calloc(1, sizeof(*in));
	cnt_block_check chk = {classify, check_block, in};

	if (in == NULL) {
		cnt_err_nomem(err);
		return NULL;
	}
	in->lim = lim ? *lim : cnt_limits_default();
	in->reader = reader;
	cnt_arena_init(&in->arena, in->lim.max_block_decoded);
	if (skipper) {
		in->counting = 1;
		in->skipper = skipper;
		in->skip_canon = strdup(canon);
		in->name = strdup(name);
		if (in->skip_canon == NULL || in->name == NULL) {
			cnt_err_nomem(err);
			cnt_records_free(in);
			return NULL;
		}
	}
	in->rd = cnt_reader_open_checked(fd, name, prefix, n, &in->lim, 0, skipper ? &chk : NULL, err);
	if (in->rd == NULL || ensure_plan(in, err) != 0) {
		cnt_records_free(in);
		return NULL;
	}
	return in;
}

cnt_records *cnt_records_open_prefixed(int fd, const char *name, const void *prefix, size_t n,
	const cnt_avro_schema *reader, const cnt_limits *lim, cnt_err *err)
{
	return open_records(fd, name, prefix, n, reader, lim, NULL, NULL, err);
}

cnt_records *cnt_records_open_counting(int fd, const char *name, const char *canon, cnt_skipper skipper,
	const cnt_limits *lim, cnt_err *err)
{
	return open_records(fd, name, NULL, 0, NULL, lim, canon, skipper, err);
}

void cnt_records_free(cnt_records *in)
{
	if (in == NULL)
		return;
	cnt_plan_free(in->plan);
	/* the reader first: its threads may still be checking with in */
	cnt_reader_free(in->rd);
	free(in->skip_canon);
	free(in->name);
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

		if (in->blk.data && in->blk_checked && in->fail_at == -1) {
			*err = in->fail_err;
			return -1;
		}
		if (in->blk.data && !in->blk_checked && in->cur.p != in->cur.end)
			return leftover(err, cnt_reader_name(in->rd), &in->blk, &in->cur);
		rc = cnt_records_next_block(in, &in->blk, err);
		if (rc <= 0) {
			in->blk.data = NULL;
			return rc;
		}
		in->cur.p = in->blk.data;
		in->cur.end = in->blk.data + in->blk.len;
		in->left = in->blk.count;
		in->blk_checked = in->blk.checked;
		in->fail_at = -2;
		if (in->blk.check_err) {
			in->fail_at = in->blk.bad_record;
			in->fail_err = *in->blk.check_err;
		}
	}
	in->record_no++;
	if (in->blk_checked) {
		/* checked on a read-ahead thread (check_block): fail where
		 * the caller's own check would have */
		if (in->fail_at == in->blk.count - in->left) {
			*err = in->fail_err;
			goto bad;
		}
		in->left--;
		return 1;
	}
	if (v == NULL) {
		if (in->use_skipper ? in->skipper(&in->cur, &in->lim) != 0 && cnt_err_set(err, "malformed record") :
		    cnt_skip(cnt_reader_schema(in->rd)->root, &in->cur, &in->lim, 0, err) != 0)
			goto bad;
		in->left--;
		return 1;
	}
	cnt_arena_reset(&in->arena);
	if (cnt_plan_decode(in->plan, &in->cur, &in->arena, &in->lim, v, err) != 0)
		goto bad;
	in->left--;
	return 1;
bad:
	return cnt_err_prefix(err, "'%s' record %llu (block %llu)", cnt_reader_name(in->rd),
		(unsigned long long)in->record_no, (unsigned long long)in->blk.block_no);
}

int cnt_records_next(cnt_records *in, cnt_val *v, cnt_err *err)
{
	if (in->counting)
		return cnt_err_set(err, "'%s': opened for counting: records are not decoded", in->name);
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
