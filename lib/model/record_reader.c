/*
 * typedin.c - own-type readers with a fast path (see typedin.h).
 */
#include "model/record_reader.h"

#include <stdlib.h>
#include <string.h>

#include "model/fingerprint.h"

static int check_fast(cnt_typed_in *t, cnt_err *err)
{
	cnt_reader *rd = cnt_records_reader(t->rin);
	cnt_buf canon = CNT_BUF_INIT;

	if (t->checked == cnt_reader_container(rd))
		return 0;
	{
		const cnt_meta_kv *kv;
		size_t n = cnt_reader_meta(rd, &kv);

		/* the definitions this container was counted under (a no-op
		 * unless the tool set a policy) */
		if (cnt_fp_input(kv, n, cnt_reader_name(rd), err) != 0)
			return -1;
	}
	if (cnt_schema_canonical(cnt_reader_schema(rd)->root, &canon) != 0 || cnt_buf_putc(&canon, 0) != 0) {
		cnt_buf_release(&canon);
		return cnt_err_nomem(err);
	}
	t->fast = strcmp((const char *)canon.p, t->canon) == 0;
	t->checked = cnt_reader_container(rd);
	cnt_buf_release(&canon);
	return 0;
}

static int init_ours(cnt_typed_in *t, const char *schema_json, const cnt_limits *lim, cnt_err *err)
{
	cnt_buf canon = CNT_BUF_INIT;

	memset(t, 0, sizeof(*t));
	t->lim = lim ? *lim : cnt_limits_default();
	t->ours = cnt_avro_schema_parse(schema_json, strlen(schema_json), err);
	if (t->ours == NULL)
		return -1;
	if (cnt_schema_canonical(t->ours->root, &canon) != 0 || cnt_buf_putc(&canon, 0) != 0) {
		cnt_buf_release(&canon);
		cnt_typed_in_release(t);
		return cnt_err_nomem(err);
	}
	t->canon = (char *)canon.p;
	return 0;
}

int cnt_typed_in_open(cnt_typed_in *t, int fd, const char *name, const char *schema_json,
	const cnt_limits *lim, cnt_err *err)
{
	if (init_ours(t, schema_json, lim, err) != 0)
		return -1;
	t->rin = cnt_records_open(fd, name, t->ours, &t->lim, err);
	if (t->rin == NULL || check_fast(t, err) != 0) {
		cnt_typed_in_release(t);
		return -1;
	}
	t->name = cnt_reader_name(cnt_records_reader(t->rin));
	return 0;
}

int cnt_typed_in_adopt(cnt_typed_in *t, cnt_records *rin, const char *schema_json, const cnt_limits *lim, cnt_err *err)
{
	if (init_ours(t, schema_json, lim, err) != 0) {
		cnt_records_free(rin);
		return -1;
	}
	t->rin = rin;
	if (cnt_records_set_reader(rin, t->ours, err) != 0 || check_fast(t, err) != 0) {
		cnt_typed_in_release(t);
		return -1;
	}
	t->name = cnt_reader_name(cnt_records_reader(t->rin));
	return 0;
}

void cnt_typed_in_release(cnt_typed_in *t)
{
	cnt_records_free(t->rin);
	cnt_avro_schema_free(t->ours);
	free(t->canon);
	memset(t, 0, sizeof(*t));
}

int cnt_typed_in_step(cnt_typed_in *t, cnt_err *err)
{
	while (t->left == 0) {
		int rc;

		if (t->blk.data && t->cur.p != t->cur.end)
			return cnt_err_set(err, "'%s' block %llu: %zu bytes left over after its %lld records: corrupt file",
				t->name, (unsigned long long)t->blk.block_no,
				(size_t)(t->cur.end - t->cur.p), (long long)t->blk.count);
		rc = cnt_records_next_block(t->rin, &t->blk, err);
		if (rc <= 0) {
			t->blk.data = NULL;
			return rc;
		}
		t->cur.p = t->blk.data;
		t->cur.end = t->blk.data + t->blk.len;
		t->left = t->blk.count;
		/* Each container on a stream is checked on its own. */
		if (check_fast(t, err) != 0)
			return -1;
	}
	t->record_no++;
	t->left--;
	return 1;
}

int cnt_typed_in_resolve(cnt_typed_in *t, cnt_val *v, cnt_err *err)
{
	if (cnt_records_decode(t->rin, &t->cur, v, err) != 0)
		return cnt_typed_in_where(t, err);
	return 0;
}

int cnt_typed_in_where(const cnt_typed_in *t, cnt_err *err)
{
	return cnt_err_prefix(err, "'%s' record %llu (block %llu)", t->name,
		(unsigned long long)t->record_no, (unsigned long long)t->blk.block_no);
}
