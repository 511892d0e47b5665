/*
 * tenant.h - tenant separation (cnt(7), "TENANT SEPARATION"): tenant ids
 * as file names, the guard a query tool runs on every file it reads when
 * told which tenant is asking, and the split of a bucket file into one file
 * per tenant.
 *
 * Whose data a file holds.  A file declares it in its container header:
 *   - "cnt.fingerprints" (model/fingerprint.h): every entry's def names
 *     its tenant_id (counter versions and the board of a view);
 *   - "cnt.view" (view/viewdesc.h): the tenant_id of the ranked board;
 *   - "cnt.tenants": a JSON array of tenant ids, for writers that record
 *     the set directly.
 * The records are not trusted to agree: a record whose schema has a
 * string field tenant_id, at the top level or in a record-typed field
 * (cnt.WindowedEvent's event), is checked one by one.  A file holding
 * records of which neither the header nor the records say whose they are
 * is refused too (it cannot be shown to be the caller's); a file with no
 * records and no declaration holds nothing to refuse.
 *
 * A refusal is an error of kind CNT_ERR_REFUSED (exit status 5), one line
 * naming the file and both tenants:
 *   'b.avro': holds tenant 'globex' (record 3); refused for tenant 'acme'
 *   'b.avro': declares tenant 'globex' (cnt.fingerprints); refused for tenant 'acme'
 * Ids are quoted with control bytes and backslashes as \xNN.
 */
#ifndef CNT_TENANT_H
#define CNT_TENANT_H

#include <stddef.h>

#include "avro/codec.h"
#include "avro/container.h"
#include "base/err.h"

#define CNT_TENANT_META "cnt.tenants"
#define CNT_TENANT_ENV "CNT_TENANT"   /* who is asking, when --tenant is not given */
#define CNT_TENANT_MAX 255            /* bytes: one file name */

/* Checks that the n bytes of id can name a directory of their own: 1 to
 * CNT_TENANT_MAX bytes, no '/', no NUL or other control byte, no leading
 * '.' (so neither "." nor ".." nor a hidden name).  0, or -1 with err set
 * (kind CNT_ERR_DATA): "tenant id '../x' is not a safe file name: it
 * starts with '.'". */
int cnt_tenant_id_check(const char *id, size_t n, cnt_err *err);

/* The declared tenants in a container header (kv, n entries, of the file
 * name): each is checked against who (NUL-terminated).  Sets *declared
 * to 1 when the header declares any tenant.  0 when every declared tenant
 * is who; -1 with err set: CNT_ERR_REFUSED for another tenant,
 * CNT_ERR_DATA for a declaration that cannot be parsed. */
int cnt_tenant_guard_header(const char *who, const cnt_meta_kv *kv, size_t n, const char *name,
	int *declared, cnt_err *err);

/* One tenant id (tn bytes) found in a record or a view description:
 * 0 when it is who, else -1 with err set (CNT_ERR_REFUSED); what says
 * where it was found ("record 3", "cnt.view"). */
int cnt_tenant_guard_id(const char *who, const char *t, size_t tn, const char *name,
	const char *what, cnt_err *err);

/* Reads the whole of fd (a stream of containers, any schema; not closed)
 * as the input name and refuses it unless it holds only who's data, as
 * the top of this file says: every container's header, then every record.
 * The caller rewinds fd before reading it for real.  0, or -1 with err
 * set (CNT_ERR_REFUSED, or the input's own error). */
int cnt_tenant_guard_fd(const char *who, int fd, const char *name, cnt_err *err);

/* ---- one bucket file per tenant ----------------------------------------- */

/* Where the file of one tenant goes: open() gets the tenant id (checked
 * with cnt_tenant_id_check() already, NUL-terminated) and returns the
 * descriptor to write its file to, and its name for messages; close() is
 * called once that file is complete (its descriptor no longer used). */
typedef struct cnt_tenant_sink {
	int (*open)(void *ctx, const char *tenant, int *fd, const char **name, cnt_err *err);
	int (*close)(void *ctx, cnt_err *err);
	void *ctx;
} cnt_tenant_sink;

/* Splits the bucket file on fd (records in canonical order, so each
 * tenant's are contiguous) into one bucket file per tenant, in order:
 * each written as cnt_bucket_writer_new() with codec and level, recording
 * its own fingerprint table (cnt_fp_track: the process's policy), so its
 * bytes are those cnt-accumulate writes from that tenant's records alone.
 * A tenant id that is not a safe file name, or records of one tenant that
 * are not contiguous, are refused (CNT_ERR_DATA).  *ntenants gets the
 * number of files.  0, or -1 with err set. */
int cnt_tenant_split_buckets(int fd, const char *name, cnt_codec_id codec, int level,
	const cnt_tenant_sink *sink, size_t *ntenants, cnt_err *err);

#endif
