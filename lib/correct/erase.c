/*
 * erase.c - rewriting archive segments without a member's events, and the
 * erasure record (see erase.h).
 */
#include "correct/erase.h"
#include "model/fingerprint.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <xxhash.h>

#include "avro/encoding.h"
#include "avro/json.h"
#include "base/jsonload.h"
#include "base/outfile.h"
#include "base/text.h"
#include "correct/ledger.h"
#include "model/event.h"
#include "model/record_reader.h"
#include "time/timefmt.h"

extern const char cnt_schema_counting_event[];

static int slice_is(cnt_slice s, const char *z)
{
	return z == NULL || (strlen(z) == s.n && memcmp(s.p, z, s.n) == 0);
}

static int matches(const cnt_erase_sel *sel, const cnt_event *e)
{
	return slice_is(e->member_ref, sel->member) && slice_is(e->tenant_id, sel->tenant) &&
		slice_is(e->counter_id, sel->counter);
}

static cnt_fp fp_of(const void *p, size_t n)
{
	XXH128_hash_t h = XXH3_128bits(p, n);
	cnt_fp fp = {h.high64, h.low64};

	return fp;
}

/* An event id's key in the retracted set, as retract.c makes it. */
static cnt_fp id_fp(const void *p, size_t n)
{
	const void *parts[1] = {p};
	size_t lens[1] = {n};

	return cnt_fp_of(1, parts, lens);
}

void cnt_erase_member_hash(const char *member, char out[33])
{
	cnt_ledger_hex(fp_of(member, strlen(member)), out);
}

/* XXH3-128 of the whole file at fd, read with pread (the offset is left
 * alone). */
static int file_digest(int fd, const char *name, cnt_fp *out, cnt_err *err)
{
	XXH3_state_t *hs = XXH3_createState();
	uint8_t buf[65536];
	off_t off = 0;

	if (hs == NULL)
		return cnt_err_nomem(err);
	XXH3_128bits_reset(hs);
	for (;;) {
		ssize_t got = pread(fd, buf, sizeof(buf), off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			XXH3_freeState(hs);
			return cnt_err_set(err, "cannot read '%s': %s", name, strerror(errno));
		}
		if (got == 0)
			break;
		XXH3_128bits_update(hs, buf, (size_t)got);
		off += got;
	}
	{
		XXH128_hash_t h = XXH3_128bits_digest(hs);

		out->hi = h.high64;
		out->lo = h.low64;
	}
	XXH3_freeState(hs);
	return 0;
}

/* The next event of t into *e, with the bytes it is encoded in (as the
 * file holds them, whatever the writer's schema) in [*p, *p + *n).
 * Returns like cnt_typed_in_step(). */
static int next_event(cnt_typed_in *t, cnt_attrs_buf *ab, cnt_event *e, const uint8_t **p, size_t *n, cnt_err *err)
{
	int rc = cnt_typed_in_step(t, err);
	cnt_val v;

	if (rc <= 0)
		return rc;
	*p = t->cur.p;
	if (t->fast) {
		if (cnt_event_decode(&t->cur, e, ab, &t->lim, err) != 0)
			return cnt_typed_in_where(t, err);
	} else if (cnt_typed_in_resolve(t, &v, err) != 0 || cnt_event_from_val(&v, e, ab, err) != 0)
		return -1;
	*n = (size_t)(t->cur.p - *p);
	return 1;
}

/* Fails unless the input was one container (cat a.avro b.avro is not a
 * segment a writer makes). */
static int one_container(cnt_typed_in *t, const char *name, cnt_err *err)
{
	if (cnt_reader_container(cnt_records_reader(t->rin)) > 1)
		return cnt_err_set(err, "'%s' holds more than one container (files joined with cat?): "
			"erase each file on its own", name);
	return 0;
}

/* ---- scan ---- */

static int add_id(cnt_buf *b, cnt_slice id)
{
	return cnt_buf_append(b, id.p, id.n) != 0 || cnt_buf_putc(b, 0) != 0 ? -1 : 0;
}

static int check_file(int fd, const char *name, cnt_erase_seg *seg, cnt_err *err)
{
	struct stat st, lst;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return cnt_err_set(err, "'%s': not a regular file (a segment is rewritten in place)", name);
	if (lstat(name, &lst) == 0 && S_ISLNK(lst.st_mode))
		return cnt_err_set(err, "'%s' is a symbolic link: name the segment itself", name);
	if (st.st_nlink > 1)
		return cnt_err_set(err, "'%s' has %lu hard links: the other names would keep the erased events",
			name, (unsigned long)st.st_nlink);
	seg->mode = (unsigned)(st.st_mode & 07777);
	seg->dev = (uint64_t)st.st_dev;
	seg->ino = (uint64_t)st.st_ino;
	return 0;
}

static int scan_one(int fd, cnt_erase_seg *seg, const cnt_erase_sel *sel, cnt_fpset *retracted,
	cnt_buf *orig, cnt_erase_plan *plan, cnt_err *err)
{
	cnt_limits lim = cnt_limits_default();
	cnt_attrs_buf ab = {0};
	cnt_typed_in t;
	cnt_event e;
	const uint8_t *p;
	size_t n;
	int got, rc = -1;

	if (check_file(fd, seg->name, seg, err) != 0 || file_digest(fd, seg->name, &seg->before, err) != 0)
		return -1;
	if (lseek(fd, 0, SEEK_SET) != 0)
		return cnt_err_set(err, "cannot read '%s': %s", seg->name, strerror(errno));
	if (cnt_typed_in_open(&t, fd, seg->name, cnt_schema_counting_event, &lim, err) != 0)
		return -1;
	seg->codec = cnt_reader_codec(cnt_records_reader(t.rin));
	while ((got = next_event(&t, &ab, &e, &p, &n, err)) > 0) {
		const cnt_slice *bad;
		uint64_t old;

		seg->records++;
		if (e.retracts.p && cnt_fpset_add(retracted, id_fp(e.retracts.p, e.retracts.n), 1, &old) < 0) {
			cnt_err_nomem(err);
			goto out;
		}
		if (!matches(sel, &e))
			continue;
		/* the erasure record names them in JSON strings (cnt-erase(1)) */
		if ((bad = !cnt_json_text_ok(e.event_id.p, e.event_id.n) ? &e.event_id
			: !cnt_json_text_ok(e.tenant_id.p, e.tenant_id.n) ? &e.tenant_id
			: !cnt_json_text_ok(e.counter_id.p, e.counter_id.n) ? &e.counter_id : NULL) != NULL) {
			char shown[CNT_SHOWN_SIZE(64)];

			cnt_err_set(err, "'%s' record %" PRIu64 ": its %s '%s' is not UTF-8 text without NUL bytes, which "
				"the erasure record cannot name (a segment no tool admitted?); nothing erased",
				seg->name, seg->records, bad == &e.event_id ? "event_id" : bad == &e.tenant_id ? "tenant_id"
				: "counter_id", cnt_shown(bad->p, bad->n, 64, shown));
			goto out;
		}
		if (add_id(&seg->ids, e.event_id) != 0 || (e.retracts.p == NULL && add_id(orig, e.event_id) != 0) ||
		    cnt_retract_ctrs_add(&seg->ctrs, e.tenant_id, e.counter_id) != 0) {
			cnt_err_nomem(err);
			goto out;
		}
		if (e.retracts.p)
			seg->compensations++;
		else
			seg->originals++;
	}
	if (got < 0 || one_container(&t, seg->name, err) != 0)
		goto out;
	plan->in += seg->records;
	plan->originals += seg->originals;
	plan->compensations += seg->compensations;
	plan->affected += seg->originals + seg->compensations > 0;
	rc = 0;
out:
	cnt_attrs_buf_release(&ab);
	cnt_typed_in_release(&t);
	return rc;
}

int cnt_erase_scan(const int *fds, const char *const *names, size_t n,
	const cnt_erase_sel *sel, int ledger_fd, const char *ledger_name,
	cnt_erase_plan *plan, cnt_err *err)
{
	cnt_fpset retracted;
	cnt_buf orig = CNT_BUF_INIT;
	int rc = -1;

	memset(plan, 0, sizeof(*plan));
	if (cnt_fpset_init(&retracted, 1024) != 0)
		return cnt_err_nomem(err);
	if ((plan->segs = calloc(n ? n : 1, sizeof(*plan->segs))) == NULL) {
		cnt_err_nomem(err);
		goto out;
	}
	plan->n = n;
	for (size_t i = 0; i < n; i++) {
		plan->segs[i].name = names[i];
		plan->segs[i].level = CNT_LEVEL_DEFAULT;
	}
	if (ledger_fd >= 0 && cnt_retract_ledger_load(ledger_fd, ledger_name, &retracted, &plan->last, err) != 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (scan_one(fds[i], &plan->segs[i], sel, &retracted, &orig, plan, err) != 0)
			goto out;
		for (size_t j = 0; j < i; j++)
			if (plan->segs[j].dev == plan->segs[i].dev && plan->segs[j].ino == plan->segs[i].ino) {
				cnt_err_set(err, "'%s' and '%s' are the same file", names[j], names[i]);
				goto out;
			}
	}
	/* Erasing an event the counters still hold would make the live
	 * numbers and a rebuild from the archive disagree for good. */
	for (size_t off = 0; off < orig.len;) {
		const char *id = (const char *)orig.p + off;
		uint64_t old;

		if (!cnt_fpset_find(&retracted, id_fp(id, strlen(id)), &old)) {
			cnt_err_set(err, "event %s of the member is not retracted: retract it first "
				"(cnt-retract --member), so that the counters lose it too; nothing erased", id);
			goto out;
		}
		off += strlen(id) + 1;
	}
	rc = 0;
out:
	cnt_buf_release(&orig);
	cnt_fpset_release(&retracted);
	if (rc != 0)
		cnt_erase_plan_release(plan);
	return rc;
}

void cnt_erase_plan_release(cnt_erase_plan *plan)
{
	for (size_t i = 0; i < plan->n && plan->segs; i++) {
		cnt_buf_release(&plan->segs[i].ids);
		cnt_retract_ctrs_release(&plan->segs[i].ctrs);
	}
	free(plan->segs);
	memset(plan, 0, sizeof(*plan));
}

/* ---- rewrite ---- */

/* The block at offset off of fd as stored (compressed) into out. */
static int stored_payload(int fd, uint64_t off, cnt_buf *out)
{
	uint8_t head[20];
	ssize_t got = pread(fd, head, sizeof(head), (off_t)off);
	cnt_cur c;
	int64_t count, size;

	if (got <= 0)
		return -1;
	c.p = head;
	c.end = head + got;
	if (cnt_bin_read_long(&c, &count) != 0 || cnt_bin_read_long(&c, &size) != 0 || size < 0)
		return -1;
	out->len = 0;
	if (cnt_buf_reserve(out, (size_t)size) != 0)
		return -2;
	got = pread(fd, out->p, (size_t)size, (off_t)(off + (uint64_t)(c.p - head)));
	if (got != (ssize_t)size)
		return -1;
	out->len = (size_t)size;
	return 0;
}

/* The level that compresses the first block's records into the bytes
 * stored for it: the codec's default first, then each level of its range
 * in turn.  CNT_LEVEL_DEFAULT when none does or the codec has no levels. */
static int find_level(int fd, cnt_codec_id codec, const cnt_block *b, int *level, cnt_err *err)
{
	/* zstandard from -7: the fast levels that people use (zstd --fast=1..7) */
	static const int lo[CNT_CODEC_COUNT] = {0, 0, 0, 0, -7, 1};
	static const int hi[CNT_CODEC_COUNT] = {-1, 9, -1, 9, 22, 9};
	cnt_buf stored = CNT_BUF_INIT, again = CNT_BUF_INIT;
	cnt_codec *c = NULL;
	int rc = -1, r;

	*level = CNT_LEVEL_DEFAULT;
	if (hi[codec] < 0 || b->count == 0)
		return 0;
	if ((r = stored_payload(fd, b->offset, &stored)) == -2 || (c = cnt_codec_new()) == NULL) {
		cnt_err_nomem(err);
		goto out;
	}
	for (int l = lo[codec] - 1; r == 0 && l <= hi[codec]; l++) {
		int try = l < lo[codec] ? CNT_LEVEL_DEFAULT : l;
		cnt_err e2;

		if (codec == CNT_CODEC_ZSTD && l == 0)   /* not a level of its: the default's other name */
			continue;
		if (cnt_codec_compress(c, codec, try, b->data, b->len, &again, &e2) != 0) {
			if (e2.kind == CNT_ERR_NOMEM) {
				*err = e2;
				goto out;
			}
		} else if (again.len == stored.len && memcmp(again.p, stored.p, stored.len) == 0) {
			*level = try;
			break;
		}
	}
	rc = 0;
out:
	cnt_codec_free(c);
	cnt_buf_release(&stored);
	cnt_buf_release(&again);
	return rc;
}

/* A writer for the container t reads: its schema text, codec and further
 * metadata, in the order the file has them (the end marker's declaration
 * is the writer's own, written by it). */
static cnt_writer *writer_like(cnt_typed_in *t, int level, int out_fd, const char *out_name, cnt_err *err)
{
	const cnt_reader *r = cnt_records_reader(t->rin);
	const cnt_meta_kv *kv;
	size_t nkv = cnt_reader_meta(r, &kv);
	char *schema = NULL;
	size_t slen = 0;
	cnt_writer *w;

	for (size_t i = 0; i < nkv && schema == NULL; i++)
		if (strcmp(kv[i].key, "avro.schema") == 0) {
			if ((schema = strndup((const char *)kv[i].val, kv[i].vlen)) == NULL) {
				cnt_err_nomem(err);
				return NULL;
			}
			slen = kv[i].vlen;
		}
	if (schema == NULL || strlen(schema) != slen) {
		free(schema);
		cnt_err_set(err, "'%s': no schema in the header", cnt_reader_name(r));
		return NULL;
	}
	w = cnt_writer_new(out_fd, out_name, schema, cnt_reader_codec(r), level, 0, err);
	free(schema);
	for (size_t i = 0; w && i < nkv; i++)
		if (strncmp(kv[i].key, "avro.", 5) != 0 && strcmp(kv[i].key, CNT_END_MARKER_KEY) != 0 &&
		    strcmp(kv[i].key, CNT_FP_META) != 0 &&
		    cnt_writer_meta(w, kv[i].key, kv[i].val, kv[i].vlen, err) != 0) {
			cnt_writer_free(w);
			return NULL;
		}
	/* the fingerprint table is the remaining records' (as every writer
	 * of events records it), its entries carried from what was read */
	if (w && cnt_fp_track(w, CNT_FP_EVENTS, err) != 0) {
		cnt_writer_free(w);
		return NULL;
	}
	return w;
}

int cnt_erase_rewrite(int in_fd, const cnt_erase_sel *sel, cnt_erase_seg *seg, int level,
	int out_fd, const char *out_name, cnt_err *err)
{
	cnt_limits lim = cnt_limits_default();
	cnt_attrs_buf ab = {0};
	cnt_writer *w = NULL;
	cnt_typed_in t;
	cnt_event e;
	const uint8_t *p;
	size_t n;
	uint64_t erased = 0, block_seen = 0;
	int got, rc = -1;

	if (lseek(in_fd, 0, SEEK_SET) != 0)
		return cnt_err_set(err, "cannot read '%s': %s", seg->name, strerror(errno));
	if (cnt_typed_in_open(&t, in_fd, seg->name, cnt_schema_counting_event, &lim, err) != 0)
		return -1;
	while ((got = next_event(&t, &ab, &e, &p, &n, err)) > 0) {
		if (t.blk.block_no != block_seen && w == NULL) {
			block_seen = t.blk.block_no;
			if (level == CNT_LEVEL_DEFAULT && find_level(in_fd, seg->codec, &t.blk, &level, err) != 0)
				goto out;
			seg->level = level;
			if ((w = writer_like(&t, level, out_fd, out_name, err)) == NULL)
				goto out;
		}
		if (matches(sel, &e)) {
			erased++;
			continue;
		}
		if (cnt_buf_append(cnt_writer_buf(w), p, n) != 0) {
			cnt_err_nomem(err);
			goto out;
		}
		if (cnt_writer_commit(w, err) != 0)
			goto out;
	}
	if (got < 0 || one_container(&t, seg->name, err) != 0)
		goto out;
	if (w == NULL || erased != seg->originals + seg->compensations) {
		cnt_err_set(err, "'%s' changed while it was being erased (%llu events of the member, %llu before): nothing erased",
			seg->name, (unsigned long long)erased, (unsigned long long)(seg->originals + seg->compensations));
		goto out;
	}
	if (cnt_writer_finish(w, err) != 0)
		goto out;
	if (fchmod(out_fd, (mode_t)seg->mode) != 0 || fsync(out_fd) != 0) {
		cnt_err_write(err, errno, "cannot write '%s'", out_name);
		goto out;
	}
	if (file_digest(out_fd, out_name, &seg->after, err) != 0)
		goto out;
	rc = 0;
out:
	cnt_writer_free(w);
	cnt_attrs_buf_release(&ab);
	cnt_typed_in_release(&t);
	return rc;
}

/* ---- the record ---- */

static json_t *seg_json(const cnt_erase_seg *s)
{
	json_t *o = json_object(), *ids = json_array();
	char hb[33], ha[33];
	int bad = o == NULL || ids == NULL;

	for (size_t off = 0; !bad && off < s->ids.len;) {
		const char *id = (const char *)s->ids.p + off;

		bad |= json_array_append_new(ids, json_string(id)) != 0;
		off += strlen(id) + 1;
	}
	cnt_ledger_hex(s->before, hb);
	cnt_ledger_hex(s->after, ha);
	bad = bad || json_object_set_new(o, "segment", json_string(s->name)) ||
		json_object_set(o, "event_ids", ids) ||
		json_object_set_new(o, "originals", json_integer((json_int_t)s->originals)) ||
		json_object_set_new(o, "compensations", json_integer((json_int_t)s->compensations)) ||
		json_object_set_new(o, "kept", json_integer((json_int_t)(s->records - s->originals - s->compensations))) ||
		json_object_set_new(o, "before", json_string(hb)) ||
		json_object_set_new(o, "after", json_string(ha));
	json_decref(ids);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int cnt_erase_record(const cnt_retract_req *req, const cnt_erase_sel *sel,
	cnt_erase_plan *plan, char id[40], char **line, cnt_err *err)
{
	json_t *rec = json_object(), *selj = json_object(), *segs = json_array(), *cj = NULL;
	cnt_retract_ctrs ctrs = {0};
	XXH3_state_t *hs = XXH3_createState();
	char tbuf[32], ph[33], mh[33];
	char *text = NULL;
	cnt_buf out = CNT_BUF_INIT;
	uint64_t erased = 0;
	int rc = -1;

	*line = NULL;
	if (rec == NULL || selj == NULL || segs == NULL || hs == NULL)
		goto nomem;
	XXH3_128bits_reset(hs);
	XXH3_128bits_update(hs, req->cause, strlen(req->cause) + 1);
	XXH3_128bits_update(hs, req->requester, strlen(req->requester) + 1);
	XXH3_128bits_update(hs, req->authority, strlen(req->authority) + 1);
	XXH3_128bits_update(hs, &req->created_at, sizeof(req->created_at));
	for (size_t i = 0; i < plan->n; i++) {
		const cnt_erase_seg *s = &plan->segs[i];
		json_t *o;

		if (s->originals + s->compensations == 0)
			continue;
		erased += s->originals + s->compensations;
		XXH3_128bits_update(hs, s->ids.p, s->ids.len);
		/* the counters of this record's segments (a batch: cnt-erase(1)) */
		for (size_t k = 0; k < s->ctrs.n; k++)
			if (cnt_retract_ctrs_add(&ctrs, (cnt_slice){s->ctrs.v[k].tenant, s->ctrs.v[k].tn},
				    (cnt_slice){s->ctrs.v[k].counter, s->ctrs.v[k].cn}) != 0)
				goto nomem;
		if ((o = seg_json(s)) == NULL || json_array_append_new(segs, o) != 0)
			goto nomem;
	}
	if (req->retraction_id)
		snprintf(id, 40, "%.39s", req->retraction_id);
	else {
		XXH128_hash_t h = XXH3_128bits_digest(hs);
		cnt_fp fp = {h.high64, h.low64};
		char hx[33];

		cnt_ledger_hex(fp, hx);
		snprintf(id, 40, "e-%s", hx);
	}
	if ((cj = cnt_retract_ctrs_json(&ctrs)) == NULL)
		goto nomem;
	cnt_time_format_rfc3339(req->created_at, tbuf);
	cnt_ledger_hex(plan->last, ph);
	cnt_erase_member_hash(sel->member, mh);
	if ((sel->tenant && json_object_set_new(selj, "tenant_id", json_string(sel->tenant))) ||
	    (sel->counter && json_object_set_new(selj, "counter_id", json_string(sel->counter))) ||
	    json_object_set_new(selj, "member_xxh3", json_string(mh)))
		goto nomem;
	if (json_object_set_new(rec, "kind", json_string("erasure")) ||
	    json_object_set_new(rec, "erasure_id", json_string(id)) ||
	    json_object_set_new(rec, "cause", json_string(req->cause)) ||
	    json_object_set_new(rec, "requested_by", json_string(req->requester)) ||
	    json_object_set_new(rec, "authority", json_string(req->authority)) ||
	    json_object_set(rec, "selector", selj) ||
	    json_object_set(rec, "segments", segs) ||
	    json_object_set_new(rec, "erased", json_integer((json_int_t)erased)) ||
	    json_object_set(rec, "counters", cj) ||
	    json_object_set_new(rec, "created_at", json_string(tbuf)) ||
	    json_object_set_new(rec, "prev", json_string(ph)))
		goto nomem;
	text = cnt_json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	if (text == NULL || cnt_buf_append(&out, text, strlen(text)) != 0 || cnt_buf_putc(&out, '\n') != 0 ||
	    cnt_buf_putc(&out, 0) != 0)
		goto nomem;
	plan->last = fp_of(text, strlen(text));
	*line = (char *)out.p;
	out.p = NULL;
	rc = 0;
	goto done;
nomem:
	cnt_err_nomem(err);
done:
	free(text);
	XXH3_freeState(hs);
	json_decref(rec);
	json_decref(selj);
	json_decref(segs);
	json_decref(cj);
	cnt_retract_ctrs_release(&ctrs);
	cnt_buf_release(&out);
	return rc;
}
