/*
 * tenant.c - tenant ids as file names, the tenant guard, the per-tenant
 * split of a bucket file.  See tenant.h.
 */
#include "model/tenant.h"
#include "base/jsonload.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avro/records.h"
#include "base/buf.h"
#include "base/text.h"
#include "base/limits.h"
#include "model/bucket.h"
#include "model/fingerprint.h"

int cnt_tenant_id_check(const char *id, size_t n, cnt_err *err)
{
	char s[CNT_SHOWN_SIZE(64)];
	const char *why = NULL;

	if (n == 0)
		return cnt_err_set(err, "tenant id '' is not a safe file name: it is empty");
	if (n > CNT_TENANT_MAX)
		why = "it is longer than 255 bytes";
	else if (id[0] == '.')
		why = "it starts with '.'";
	for (size_t i = 0; why == NULL && i < n; i++) {
		unsigned char ch = (unsigned char)id[i];

		if (ch == '/')
			why = "it holds '/'";
		else if (ch < 0x20 || ch == 0x7f)
			why = "it holds a control character";
	}
	if (why != NULL)
		return cnt_err_set(err, "tenant id '%s' is not a safe file name: %s", cnt_shown(id, n, 64, s), why);
	return 0;
}

int cnt_tenant_guard_id(const char *who, const char *t, size_t tn, const char *name,
	const char *what, cnt_err *err)
{
	char a[CNT_SHOWN_SIZE(64)], b[CNT_SHOWN_SIZE(64)];

	if (tn == strlen(who) && memcmp(t, who, tn) == 0)
		return 0;
	cnt_err_set(err, "'%s': holds tenant '%s' (%s); refused for tenant '%s'", name, cnt_shown(t, tn, 64, a),
		what, cnt_shown(who, strlen(who), 64, b));
	err->kind = CNT_ERR_REFUSED;
	return -1;
}

/* A declared tenant (the string value v) checked against who. */
static int declared_id(const char *who, json_t *v, const char *name, const char *key, cnt_err *err)
{
	char a[CNT_SHOWN_SIZE(64)], b[CNT_SHOWN_SIZE(64)];
	const char *t = json_string_value(v);
	size_t tn = json_string_length(v);

	if (t == NULL)
		return cnt_err_set(err, "'%s': %s: a tenant id that is not a string", name, key);
	if (tn == strlen(who) && memcmp(t, who, tn) == 0)
		return 0;
	cnt_err_set(err, "'%s': declares tenant '%s' (%s); refused for tenant '%s'", name, cnt_shown(t, tn, 64, a),
		key, cnt_shown(who, strlen(who), 64, b));
	err->kind = CNT_ERR_REFUSED;
	return -1;
}

int cnt_tenant_guard_header(const char *who, const cnt_meta_kv *kv, size_t n, const char *name,
	int *declared, cnt_err *err)
{
	*declared = 0;
	for (size_t i = 0; i < n; i++) {
		const char *k = kv[i].key;
		json_t *doc, *e;
		json_error_t je;
		const char *lab;
		size_t j;
		int rc = 0;

		if (strcmp(k, CNT_FP_META) != 0 && strcmp(k, "cnt.view") != 0 && strcmp(k, CNT_TENANT_META) != 0)
			continue;
		doc = cnt_json_loadb((const char *)kv[i].val, kv[i].vlen, JSON_REJECT_DUPLICATES, &je);
		if (doc == NULL && cnt_json_oom(&je))
			return cnt_err_oom(err, "reading '%s'", name);
		if (doc == NULL)
			return cnt_err_set(err, "'%s': %s: not JSON", name, k);
		if (strcmp(k, CNT_FP_META) == 0 && json_is_object(doc)) {
			json_object_foreach(doc, lab, e) {
				json_t *t = json_object_get(json_object_get(e, "def"), "tenant_id");
				if (t == NULL)
					continue;
				*declared = 1;
				if ((rc = declared_id(who, t, name, k, err)) != 0)
					break;
			}
		} else if (strcmp(k, "cnt.view") == 0 && json_is_object(doc)) {
			*declared = 1;
			rc = declared_id(who, json_object_get(doc, "tenant_id"), name, k, err);
		} else if (strcmp(k, CNT_TENANT_META) == 0 && json_is_array(doc)) {
			json_array_foreach(doc, j, e) {
				*declared = 1;
				if ((rc = declared_id(who, e, name, k, err)) != 0)
					break;
			}
		} else {
			rc = cnt_err_set(err, "'%s': %s: not a JSON %s", name, k,
				strcmp(k, CNT_TENANT_META) == 0 ? "array" : "object");
		}
		json_decref(doc);
		if (rc != 0)
			return -1;
	}
	return 0;
}

/* Where a record of schema s holds its tenant: field f (and field g of
 * that field when g >= 0); f < 0 when it holds none. */
static void tenant_path(const cnt_schema *s, int *f, int *g)
{
	*f = *g = -1;
	if (s == NULL || s->type != CNT_T_RECORD)
		return;
	for (size_t i = 0; i < s->nfields; i++)
		if (strcmp(s->fields[i].name, "tenant_id") == 0 && s->fields[i].type->type == CNT_T_STRING) {
			*f = (int)i;
			return;
		}
	for (size_t i = 0; i < s->nfields; i++) {
		const cnt_schema *t = s->fields[i].type;
		if (t->type != CNT_T_RECORD)
			continue;
		for (size_t j = 0; j < t->nfields; j++)
			if (strcmp(t->fields[j].name, "tenant_id") == 0 && t->fields[j].type->type == CNT_T_STRING) {
				*f = (int)i;
				*g = (int)j;
				return;
			}
	}
}

/* Checks the header of the container r is in when it is not cont yet. */
static int header(const char *who, cnt_reader *r, unsigned *cont, int *declared, const char *name,
	cnt_err *err)
{
	const cnt_meta_kv *kv;
	size_t n;

	if (cnt_reader_container(r) == *cont)
		return 0;
	*cont = cnt_reader_container(r);
	n = cnt_reader_meta(r, &kv);
	return cnt_tenant_guard_header(who, kv, n, name, declared, err);
}

int cnt_tenant_guard_fd(const char *who, int fd, const char *name, cnt_err *err)
{
	cnt_records *in = cnt_records_open(fd, name, NULL, NULL, err);
	const cnt_schema *s = NULL;
	unsigned cont = 0;
	int declared = 0, f = -1, g = -1, rc = -1;
	cnt_reader *r;
	cnt_val v;

	if (in == NULL)
		return -1;
	r = cnt_records_reader(in);
	if (header(who, r, &cont, &declared, name, err) != 0)
		goto out;
	for (;;) {
		char what[64];
		const cnt_val *t;
		int got = cnt_records_next(in, &v, err);

		if (got < 0 || header(who, r, &cont, &declared, name, err) != 0)
			goto out;
		if (got == 0)
			break;
		if (cnt_records_schema(in) != s)
			tenant_path(s = cnt_records_schema(in), &f, &g);
		snprintf(what, sizeof(what), "record %llu", (unsigned long long)cnt_records_record_no(in));
		if (f < 0) {
			char q[CNT_SHOWN_SIZE(64)];

			if (declared)
				continue;
			cnt_err_set(err, "'%s': %s names no tenant and the header declares none; refused for "
				"tenant '%s'", name, what, cnt_shown(who, strlen(who), 64, q));
			err->kind = CNT_ERR_REFUSED;
			goto out;
		}
		t = &v.u.v[f];
		if (g >= 0)
			t = &t->u.v[g];
		if (cnt_tenant_guard_id(who, (const char *)t->u.s, t->n, name, what, err) != 0)
			goto out;
	}
	rc = 0;
out:
	cnt_records_free(in);
	return rc;
}

/* ---- one bucket file per tenant ----------------------------------------- */

typedef struct split {
	cnt_writer *w;
	int fd;
	const char *name;
	cnt_buf tenant;   /* NUL-terminated */
} split;

static int split_close(split *sp, const cnt_tenant_sink *sink, cnt_err *err)
{
	int rc;

	if (sp->w == NULL)
		return 0;
	rc = cnt_writer_finish(sp->w, err);
	cnt_writer_free(sp->w);
	sp->w = NULL;
	return rc != 0 ? -1 : sink->close(sink->ctx, err);
}

int cnt_tenant_split_buckets(int fd, const char *name, cnt_codec_id codec, int level,
	const cnt_tenant_sink *sink, size_t *ntenants, cnt_err *err)
{
	cnt_limits lim = cnt_limits_default();
	cnt_records *in = cnt_records_open(fd, name, NULL, NULL, err);
	cnt_buf done = CNT_BUF_INIT;  /* tenants finished: each id NUL-terminated */
	split sp = {NULL, -1, NULL, CNT_BUF_INIT};
	cnt_block b;
	int rc = -1, r;

	*ntenants = 0;
	if (in == NULL)
		return -1;
	while ((r = cnt_records_next_block(in, &b, err)) == 1) {
		const cnt_schema *s = cnt_records_schema(in);
		cnt_cur c = {b.data, b.data + b.len};

		if (s->type != CNT_T_RECORD || s->nfields == 0 || strcmp(s->fields[0].name, "tenant_id") != 0) {
			cnt_err_set(err, "'%s': not a bucket file", name);
			goto out;
		}
		for (int64_t i = 0; i < b.count; i++) {
			const uint8_t *start = c.p, *t;
			size_t tn;
			cnt_cur k = c;

			if (cnt_bin_read_bytes(&k, &t, &tn) != 0 || cnt_skip(s, &c, &lim, 0, err) != 0) {
				cnt_err_set(err, "'%s': block %llu: a damaged record", name, (unsigned long long)b.block_no);
				goto out;
			}
			if (sp.w == NULL || sp.tenant.len != tn + 1 || memcmp(sp.tenant.p, t, tn) != 0) {
				size_t o = 0;

				if (cnt_tenant_id_check((const char *)t, tn, err) != 0) {
					cnt_err_prefix(err, "'%s'", name);
					goto out;
				}
				if (split_close(&sp, sink, err) != 0)
					goto out;
				while (o < done.len) {
					size_t l = strlen((const char *)done.p + o);
					if (l == tn && memcmp(done.p + o, t, tn) == 0) {
						char q[CNT_SHOWN_SIZE(64)];
						cnt_err_set(err, "'%s': the records of tenant '%s' are not together (not a "
							"bucket file in canonical order)", name, cnt_shown((const char *)t, tn, 64, q));
						goto out;
					}
					o += l + 1;
				}
				sp.tenant.len = 0;
				if (cnt_buf_append(&sp.tenant, t, tn) || cnt_buf_putc(&sp.tenant, 0) ||
				    cnt_buf_append(&done, t, tn) || cnt_buf_putc(&done, 0)) {
					cnt_err_nomem(err);
					goto out;
				}
				if (sink->open(sink->ctx, (const char *)sp.tenant.p, &sp.fd, &sp.name, err) != 0)
					goto out;
				sp.w = cnt_bucket_writer_new(sp.fd, sp.name, codec, level, err);
				if (sp.w == NULL || cnt_fp_track(sp.w, CNT_FP_BUCKETS, err) != 0)
					goto out;
				(*ntenants)++;
			}
			if (cnt_buf_append(cnt_writer_buf(sp.w), start, (size_t)(c.p - start)) != 0) {
				cnt_err_nomem(err);
				goto out;
			}
			if (cnt_writer_commit(sp.w, err) != 0)
				goto out;
		}
	}
	if (r == 0 && split_close(&sp, sink, err) == 0)
		rc = 0;
out:
	cnt_writer_free(sp.w);
	cnt_buf_release(&sp.tenant);
	cnt_buf_release(&done);
	cnt_records_free(in);
	return rc;
}
