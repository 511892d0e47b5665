/*
 * diff.c - one merge-join pass over two bucket files (see diff.h).
 */
#include "count/diff.h"

#include <errno.h>
#include <string.h>

#include "avro/json.h"
#include "base/outfile.h"
#include "model/bucket.h"

/* One side: its reader, its current record, and a copy of the previous
 * key, to check the order. */
typedef struct side {
	cnt_bucket_in in;
	cnt_bucket b;
	const char *name;
	uint64_t done;
	int rc;              /* of the last read: 1 a record, 0 the end */
	cnt_buf strings;
	cnt_bucket prev;
	int have_prev;
} side;

static int advance(side *s, cnt_err *err)
{
	if (s->done > 0) {
		const cnt_bucket *b = &s->b;

		s->strings.len = 0;
		if (cnt_buf_append(&s->strings, b->tenant_id.p, b->tenant_id.n) != 0 ||
		    cnt_buf_append(&s->strings, b->counter_id.p, b->counter_id.n) != 0 ||
		    cnt_buf_append(&s->strings, b->member_ref.p, b->member_ref.n) != 0)
			return cnt_err_nomem(err);
		s->prev = *b;
		s->prev.tenant_id.p = (const char *)s->strings.p;
		s->prev.counter_id.p = (const char *)s->strings.p + b->tenant_id.n;
		s->prev.member_ref.p = (const char *)s->strings.p + b->tenant_id.n + b->counter_id.n;
		s->have_prev = 1;
	}
	s->rc = cnt_bucket_in_next(&s->in, &s->b, err);
	if (s->rc < 0)
		return -1;
	if (s->rc > 0 && s->have_prev && cnt_bucket_key_cmp(&s->prev, &s->b) >= 0)
		return cnt_err_set(err, "'%s' record %llu: keys are not in ascending order, so this is not a bucket file as cnt-accumulate writes it (re-sort it with 'cnt-accumulate %s')",
			s->name, (unsigned long long)s->done + 1, s->name);
	return 0;
}

static int line(cnt_buf *out, const cnt_bucket *l, const cnt_bucket *r)
{
	const cnt_bucket *b = l ? l : r;
	int rc = 0;

	rc |= cnt_buf_append(out, "{\"key\":{\"tenant_id\":", 20);
	rc |= cnt_json_string(out, (const uint8_t *)b->tenant_id.p, b->tenant_id.n, 0);
	rc |= cnt_buf_append(out, ",\"counter_id\":", 14);
	rc |= cnt_json_string(out, (const uint8_t *)b->counter_id.p, b->counter_id.n, 0);
	rc |= cnt_buf_printf(out, ",\"counter_version\":%d,\"member_ref\":", (int)b->counter_version);
	rc |= cnt_json_string(out, (const uint8_t *)b->member_ref.p, b->member_ref.n, 0);
	rc |= cnt_buf_printf(out, ",\"bucket_start\":%lld,\"shard\":%d}", (long long)b->bucket_start, (int)b->shard);
	rc |= cnt_buf_append(out, ",\"left\":", 8);
	rc |= l ? cnt_bucket_to_json(l, out) : cnt_buf_append(out, "null", 4);
	rc |= cnt_buf_append(out, ",\"right\":", 9);
	rc |= r ? cnt_bucket_to_json(r, out) : cnt_buf_append(out, "null", 4);
	rc |= cnt_buf_append(out, "}\n", 2);
	return rc;
}

static int flush(int fd, cnt_buf *out, size_t at_least, cnt_err *err)
{
	if (out->len == 0 || out->len < at_least)
		return 0;
	if (cnt_write_all(fd, out->p, out->len) != 0)
		return cnt_err_write(err, errno, "cannot write standard output");
	out->len = 0;
	return 0;
}

static int compare(side *L, side *R, const cnt_diff_opts *o, cnt_diff_stats *st, cnt_buf *out, cnt_err *err)
{
	if (advance(L, err) != 0 || advance(R, err) != 0)
		return -1;
	while (L->rc > 0 || R->rc > 0) {
		const cnt_bucket *pl = NULL, *pr = NULL;
		int d = L->rc == 0 ? 1 : R->rc == 0 ? -1 : cnt_bucket_key_cmp(&L->b, &R->b);

		if (d < 0) {
			pl = &L->b;
			st->only_left++;
		} else if (d > 0) {
			pr = &R->b;
			st->only_right++;
		} else {
			int v = cnt_bucket_values_differ(&L->b, &R->b, o->tolerance);

			if (v < 0)
				return cnt_err_oom(err, "comparing sketches");
			if (v > 0) {
				pl = &L->b;
				pr = &R->b;
				st->changed++;
			}
		}
		if ((pl || pr) && !o->quiet && (o->max_shown < 0 || st->shown < (uint64_t)o->max_shown)) {
			if (line(out, pl, pr) != 0)
				return cnt_err_nomem(err);
			st->shown++;
			if (flush(o->fd, out, 1u << 16, err) != 0)
				return -1;
		}
		if (o->tick)
			o->tick(d == 0 ? 2 : 1);
		if (d <= 0) {
			L->done++;
			if (advance(L, err) != 0)
				return -1;
		}
		if (d >= 0) {
			R->done++;
			if (advance(R, err) != 0)
				return -1;
		}
	}
	st->left = L->done;
	st->right = R->done;
	return flush(o->fd, out, 1, err);
}

int cnt_diff_buckets(int lfd, const char *lname, int rfd, const char *rname,
	const cnt_diff_opts *o, cnt_diff_stats *st, cnt_err *err)
{
	side L, R;
	cnt_buf out = CNT_BUF_INIT;
	int rc = -1;

	memset(st, 0, sizeof(*st));
	memset(&L, 0, sizeof(L));
	memset(&R, 0, sizeof(R));
	L.name = lname;
	R.name = rname;
	if (cnt_bucket_in_open(&L.in, lfd, lname, NULL, err) != 0)
		return -1;
	if (cnt_bucket_in_open(&R.in, rfd, rname, NULL, err) == 0) {
		rc = compare(&L, &R, o, st, &out, err);
		cnt_bucket_in_release(&R.in);
	}
	cnt_bucket_in_release(&L.in);
	cnt_buf_release(&out);
	cnt_buf_release(&L.strings);
	cnt_buf_release(&R.strings);
	return rc;
}
