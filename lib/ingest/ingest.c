/*
 * ingest.c - one admission run (see ingest.h).
 */
#include "ingest/ingest.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avro/json.h"
#include "avro/records.h"
#include "avro/schema.h"
#include "count/topkey.h"
#include "ingest/ahead.h"
#include "ingest/hold.h"
#include "ingest/sample.h"
#include "ingest/rawevent.h"
#include "ingest/report.h"
#include "ingest/seen.h"
#include "model/event.h"
#include "model/fingerprint.h"
#include "model/held.h"

extern const char cnt_schema_raw_event[];

/* dedup slots prefetched in bursts of this many, one burst ahead */
#define AHEAD 16

struct cnt_ingest {
	cnt_ingest_cfg cfg;
	cnt_admit *adm;
	cnt_writer *w;
	cnt_hold *hold;              /* NULL without holds */
	cnt_writer *hw;              /* the hold file */
	cnt_sampler *sampler;        /* NULL without approx counters */
	cnt_avro_schema *raw_schema;
	cnt_report rej, dup;
	cnt_ingest_input *inputs;
	uint64_t *tag0;              /* per input: the tag of its position 0 */
	size_t ninputs, icap;
	uint64_t tag_end;            /* above every tag given so far */
	uint64_t blank;
	cnt_event ev;
	cnt_err *err;                /* the current call's */
	cnt_buf text;                /* an Avro record as JSON */
	cnt_ahead *ahead;            /* JSON lines and CSV, read and parsed ahead */
};

static int any_approx(const cnt_defs *d)
{
	for (size_t i = 0; i < cnt_defs_ncounters(d); i++) {
		const cnt_counter *c = cnt_defs_counter_at(d, i);

		for (size_t j = 0; j < c->nversions; j++)
			if (c->versions[j].type == CNT_CTYPE_APPROX)
				return 1;
	}
	return 0;
}

/* An approx counter's accepted event is sampled (sample.h): 1 kept (its
 * attrs may have gained cnt.sample), 0 sampled out, -1 error. */
static int keep(cnt_ingest *g)
{
	const cnt_event *e = &g->ev;
	const cnt_counter *c;

	if (g->sampler == NULL)
		return 1;
	c = cnt_defs_counter(g->cfg.admit.defs, e->tenant_id.p, e->tenant_id.n,
		e->counter_id.p, e->counter_id.n);
	return cnt_sampler_decide(g->sampler, c, cnt_counter_version_get(c, e->counter_version),
		&g->ev, g->err);
}

cnt_ingest *cnt_ingest_new(const cnt_ingest_cfg *cfg, cnt_err *err)
{
	cnt_ingest *g = calloc(1, sizeof(*g));

	if (g == NULL) {
		cnt_err_nomem(err);
		return NULL;
	}
	g->cfg = *cfg;
	cnt_report_init(&g->rej, cfg->rej_fd, cfg->rej_name, cfg->note, 0);
	cnt_report_init(&g->dup, cfg->dup_fd, cfg->dup_name, NULL, 0);
	if ((g->ahead = cnt_ahead_new()) == NULL)
		goto oom;
	g->adm = cnt_admit_new(&cfg->admit, err);
	if (g->adm == NULL)
		goto fail;
	g->raw_schema = cnt_avro_schema_parse(cnt_schema_raw_event, strlen(cnt_schema_raw_event), err);
	if (g->raw_schema == NULL)
		goto fail;
	g->w = cnt_event_writer_new(cfg->out_fd, cfg->out_name, cfg->codec, cfg->level, err);
	/* the log records the definitions of the versions it stamps */
	if (g->w == NULL || cnt_fp_track(g->w, CNT_FP_EVENTS, err) != 0)
		goto fail;
	/* admission, on one thread, sets the pace: compression waits for it */
	cnt_writer_yield(g->w);
	if (any_approx(cfg->admit.defs) && (g->sampler = cnt_sampler_new(cfg->admit.defs, err)) == NULL)
		goto fail;
	if (cfg->hold_fd >= 0 &&
	    ((g->hold = cnt_hold_new(cfg->admit.defs, err)) == NULL ||
	     (g->hw = cnt_held_writer_new(cfg->hold_fd, cfg->hold_name, cfg->codec, cfg->level, err)) == NULL))
		goto fail;
	return g;
oom:
	cnt_err_nomem(err);
fail:
	cnt_ingest_free(g);
	return NULL;
}

void cnt_ingest_free(cnt_ingest *g)
{
	if (g == NULL)
		return;
	cnt_ahead_free(g->ahead);
	cnt_writer_free(g->w);
	cnt_writer_free(g->hw);
	cnt_hold_free(g->hold);
	cnt_sampler_free(g->sampler);
	cnt_avro_schema_free(g->raw_schema);
	cnt_admit_free(g->adm);
	cnt_report_release(&g->rej);
	cnt_report_release(&g->dup);
	cnt_buf_release(&g->text);
	free(g->inputs);
	free(g->tag0);
	free(g);
}

/* ---- judging and routing one record --------------------------------------- */

static cnt_ingest_input *cur(cnt_ingest *g)
{
	return &g->inputs[g->ninputs - 1];
}

static void position(const cnt_ingest *g, size_t input, uint64_t n, cnt_report_pos *p)
{
	p->input = g->inputs[input].name;
	p->record = g->inputs[input].format == CNT_INPUT_AVRO;
	p->n = n;
}

/* A record's tag in the duplicate table, so that a duplicate can name the
 * first copy: the positions of the run's inputs one after another (an
 * input's follow the largest of the input before).  Fits the table's 40
 * bits up to a trillion lines in one run. */
static int tag_of(cnt_ingest *g, uint64_t pos, uint64_t *tag)
{
	if (cnt_seen_val_at(g->tag0[g->ninputs - 1], pos, tag) != 0)
		return cnt_err_set(g->err, "'%s' %s %" PRIu64 ": more than %" PRIu64
			" lines and records in one run; admit the inputs in several runs",
			cur(g)->name, cur(g)->format == CNT_INPUT_AVRO ? "record" : "line", pos, CNT_SEEN_VAL_MAX);
	if (*tag >= g->tag_end)
		g->tag_end = *tag + 1;
	return 0;
}

/* The input and position of a tag. */
static void position_of_tag(const cnt_ingest *g, uint64_t tag, cnt_report_pos *p)
{
	size_t lo = 0, hi = g->ninputs - 1;

	/* the last input whose tags start at or below tag: an input without
	 * records shares its start with the next */
	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;

		if (g->tag0[mid] <= tag)
			lo = mid;
		else
			hi = mid - 1;
	}
	position(g, lo, tag - g->tag0[lo], p);
}

/* What the record was, for the streams: its text, or an Avro record (v),
 * written as JSON only when a stream takes it: most records are accepted,
 * and writing each as JSON was a fifth of an Avro input's time. */
typedef struct rec_text {
	const char *p;
	size_t n;
	const cnt_val *v;
} rec_text;

static int route(cnt_ingest *g, cnt_report *r, cnt_report_item *it, uint64_t pos, const rec_text *t)
{
	position(g, g->ninputs - 1, pos, &it->at);
	if (t->v != NULL) {
		g->text.len = 0;
		if (cnt_json_value(&g->text, t->v, g->raw_schema->root, 0) != 0)
			return cnt_err_nomem(g->err);
		it->raw = (const char *)g->text.p;
		it->rawn = g->text.len;
		it->raw_is_json = 1;
	} else {
		it->raw = t->p;
		it->rawn = t->n;
	}
	return cnt_report_add(r, it, g->err);
}

/* A record that could not be read as an event (malformed, a bad field,
 * an overlong line). */
static int reject_unread(cnt_ingest *g, uint64_t pos, const cnt_raw_problem *pb, const rec_text *t)
{
	cnt_reject_reason r = pb->status == CNT_RAW_MALFORMED ? CNT_REJ_MALFORMED : CNT_REJ_BAD_FIELD;
	cnt_report_item it = {0};

	cur(g)->records++;
	if (pb->status == CNT_RAW_NOMEM)
		return cnt_err_nomem(g->err);
	cnt_admit_count_reject(g->adm, r);
	it.reason = cnt_reject_name(r);
	it.field = pb->field;
	it.msg = pb->msg;
	return route(g, &g->rej, &it, pos, t);
}

/* Judges a parsed event (fp: its prefetched fingerprint, or NULL) and
 * sends it where it belongs. */
static int judge(cnt_ingest *g, uint64_t pos, const cnt_raw_event *raw, const cnt_fp *fp,
	const rec_text *t)
{
	uint64_t tag = 0;
	cnt_report_item it = {0};
	cnt_verdict v;
	int rc;

	cur(g)->records++;
	if (tag_of(g, pos, &tag) != 0)
		return -1;
	rc = fp ? cnt_admit_event_fp(g->adm, raw, *fp, tag, &g->ev, &v) :
		cnt_admit_event(g->adm, raw, tag, &g->ev, &v);
	if (rc < 0)
		return cnt_err_nomem(g->err);
	if (rc == CNT_ADMIT_ACCEPT) {
		if ((rc = keep(g)) <= 0)
			return rc;
		if (g->hold)
			return cnt_hold_add(g->hold, &g->ev, g->err);
		if (g->cfg.hot != NULL &&
		    cnt_topkey_add(g->cfg.hot, g->ev.tenant_id, g->ev.counter_id, g->ev.member_ref, g->err) != 0)
			return -1;
		if (cnt_event_encode(&g->ev, cnt_writer_buf(g->w)) != 0)
			return cnt_err_nomem(g->err);
		return cnt_writer_commit(g->w, g->err);
	}
	it.msg = v.msg;
	if (rc == CNT_ADMIT_REJECT) {
		it.reason = cnt_reject_name(v.reason);
		it.field = v.field;
		it.has_retry = v.reason == CNT_REJ_QUOTA;
		it.retry_after_ms = v.retry_after_ms;
		return route(g, &g->rej, &it, pos, t);
	}
	it.reason = "duplicate";
	it.has_first = 1;
	position_of_tag(g, v.first, &it.first);
	return route(g, &g->dup, &it, pos, t);
}

static void progress(cnt_ingest *g, uint64_t n)
{
	if (g->cfg.progress && n)
		g->cfg.progress(n);
}

/* ---- JSON lines and CSV, read ahead ------------------------------------------- */

/* Judges every line (a CSV row) the read-ahead hands out, started on the
 * input already; json: blank lines are skipped and overlong ones
 * rejected (CSV rows are neither). */
static int judge_ahead(cnt_ingest *g, int json)
{
	cnt_raw_problem overlong = {CNT_RAW_MALFORMED, NULL, ""};
	cnt_ahead_chunk c;
	int rc = 0, got = 0;

	snprintf(overlong.msg, sizeof(overlong.msg), "line longer than %zu bytes", CNT_INGEST_LINE_MAX);
	/* the lines come parsed (ahead.h); the duplicate table's slots are
	 * prefetched in bursts, one burst ahead of the lines judged */
	while (rc == 0 && (got = cnt_ahead_next(g->ahead, &c, g->err)) > 0) {
		uint64_t records = 0;

		for (size_t i = 0; i < c.n && rc == 0; i++) {
			const cnt_line *l = &c.line[i];
			rec_text t = {l->p, l->n, NULL};

			if (i % AHEAD == 0) {
				/* the duplicate table's slots, one burst ahead.
				 * The chunk's lines, records and attrs lie in
				 * arrays read in order, which the hardware fetches
				 * ahead by itself (fetching them here as well was
				 * no faster). */
				for (size_t j = i == 0 ? 0 : i + AHEAD; j < c.n && j < i + 2 * AHEAD; j++)
					if (c.pb[j].status == CNT_RAW_OK)
						cnt_admit_prefetch_fp(g->adm, c.fp[j]);
			}
			if (json && cnt_line_blank(l)) {
				g->blank++;
				continue;
			}
			records++;
			if (l->overlong)
				rc = reject_unread(g, l->no, &overlong, &t);
			else if (c.pb[i].status != CNT_RAW_OK)
				rc = reject_unread(g, l->no, &c.pb[i], &t);
			else
				rc = judge(g, l->no, &c.raw[i], &c.fp[i], &t);
		}
		progress(g, records);
	}
	cnt_ahead_stop(g->ahead);
	return rc == 0 && got < 0 ? -1 : rc;
}

static int read_json(cnt_ingest *g, int fd, const char *name, const void *pre, size_t pren)
{
	if (cnt_ahead_start(g->ahead, fd, name, CNT_INGEST_LINE_MAX, pre, pren, g->err) != 0)
		return -1;
	return judge_ahead(g, 1);
}

static int read_csv(cnt_ingest *g, int fd, const char *name, const void *pre, size_t pren)
{
	if (cnt_ahead_start_csv(g->ahead, fd, name, pre, pren, g->err) != 0)
		return -1;
	return judge_ahead(g, 0);
}

/* ---- Avro ------------------------------------------------------------------------ */

static int read_avro(cnt_ingest *g, int fd, const char *name, const void *pre, size_t pren)
{
	cnt_records *in = cnt_records_open_prefixed(fd, name, pre, pren, g->raw_schema, NULL, g->err);
	cnt_slice *keys = NULL, *vals = NULL;
	size_t cap = 0;
	cnt_raw_event ev;
	cnt_val v;
	int rc = 0, got = 0;

	if (in == NULL)
		return -1;
	while (rc == 0 && (got = cnt_records_next(in, &v, g->err)) != 0) {
		uint32_t na;
		rec_text t;

		if (got < 0) {
			rc = -1;
			break;
		}
		na = v.u.v[10].n;
		if (na > cap) {
			cnt_slice *k = realloc(keys, (size_t)na * 2 * sizeof(*k)), *s;

			if (k != NULL)
				keys = k;
			s = k ? realloc(vals, (size_t)na * 2 * sizeof(*s)) : NULL;
			if (s == NULL) {
				rc = cnt_err_nomem(g->err);
				break;
			}
			vals = s;
			cap = (size_t)na * 2;
		}
		cnt_raw_from_val(&v, &ev, keys, vals);
		t.p = NULL;
		t.n = 0;
		t.v = &v;
		rc = judge(g, cnt_records_record_no(in), &ev, NULL, &t);
		progress(g, 1);
	}
	free(keys);
	free(vals);
	cnt_records_free(in);
	return rc;
}

/* ---- the run ------------------------------------------------------------------- */

int cnt_ingest_input_fd(cnt_ingest *g, int fd, const char *name, cnt_err *err)
{
	uint8_t pre[64];
	size_t pren = 0;
	cnt_input_format f = g->cfg.format;
	cnt_ingest_input *in;

	g->err = err;
	if (g->ninputs == g->icap) {
		size_t cap = g->icap ? 2 * g->icap : 8;
		cnt_ingest_input *p = realloc(g->inputs, cap * sizeof(*p));
		uint64_t *t0;

		if (p == NULL)
			return cnt_err_nomem(err);
		g->inputs = p;
		if ((t0 = realloc(g->tag0, cap * sizeof(*t0))) == NULL)
			return cnt_err_nomem(err);
		g->tag0 = t0;
		g->icap = cap;
	}
	if (f == CNT_INPUT_AUTO)
		f = cnt_input_format_of_name(name);
	if (f == CNT_INPUT_AUTO) {
		/* Enough of the first bytes to tell; a pipe may give fewer. */
		while (pren < 4) {
			long got = cnt_input_read(fd, name, pre + pren, sizeof(pre) - pren, err);

			if (got < 0)
				return -1;
			if (got == 0)
				break;
			pren += (size_t)got;
		}
		f = cnt_input_sniff(pre, pren);
	}
	g->tag0[g->ninputs] = g->tag_end;
	in = &g->inputs[g->ninputs++];
	in->name = name;
	in->format = f;
	in->records = 0;
	if (f == CNT_INPUT_JSON)
		return read_json(g, fd, name, pre, pren);
	if (f == CNT_INPUT_CSV)
		return read_csv(g, fd, name, pre, pren);
	return read_avro(g, fd, name, pre, pren);
}

int cnt_ingest_finish(cnt_ingest *g, cnt_err *err)
{
	const cnt_admit_stats *st = cnt_admit_get_stats(g->adm);
	uint64_t held = 0, sampled = cnt_ingest_sampled_out(g);

	if (g->hold) {
		if (cnt_hold_finish(g->hold, g->w, g->hw, g->cfg.hot, err) != 0 || cnt_writer_finish(g->hw, err) != 0)
			return -1;
		held = cnt_hold_get_stats(g->hold)->held;
	}
	if (cnt_writer_finish(g->w, err) != 0 || cnt_report_finish(&g->rej, st->by_reason, err) != 0 ||
	    cnt_report_finish(&g->dup, st->by_reason, err) != 0)
		return -1;
	if (st->in != st->accepted + st->rejected + st->duplicate ||
	    cnt_writer_records(g->w) + held + sampled != st->accepted)
		return cnt_err_set(err, "internal: records do not balance: in %" PRIu64 " != out %" PRIu64
			" + rejected %" PRIu64 " + duplicates %" PRIu64 " + held %" PRIu64
			" + sampled_out %" PRIu64, st->in, st->accepted - held - sampled, st->rejected,
			st->duplicate, held, sampled);
	return 0;
}

const cnt_admit_stats *cnt_ingest_stats(const cnt_ingest *g)
{
	return cnt_admit_get_stats(g->adm);
}

const cnt_hold_stats *cnt_ingest_held(const cnt_ingest *g)
{
	return g->hold ? cnt_hold_get_stats(g->hold) : NULL;
}

uint64_t cnt_ingest_counter_held(const cnt_ingest *g, const cnt_counter *c)
{
	return g->hold ? cnt_hold_counter_held(g->hold, c) : 0;
}

uint64_t cnt_ingest_sampled_out(const cnt_ingest *g)
{
	return g->sampler ? cnt_sampler_out(g->sampler) : 0;
}

uint64_t cnt_ingest_counter_sampled_out(const cnt_ingest *g, const cnt_counter *c)
{
	return g->sampler ? cnt_sampler_counter_out(g->sampler, c) : 0;
}

const cnt_defs *cnt_ingest_defs(const cnt_ingest *g)
{
	return g->cfg.admit.defs;
}

uint64_t cnt_ingest_blank_lines(const cnt_ingest *g)
{
	return g->blank;
}

const cnt_ingest_input *cnt_ingest_inputs(const cnt_ingest *g, size_t *n)
{
	*n = g->ninputs;
	return g->inputs;
}

int cnt_ingest_each_counter(const cnt_ingest *g,
	void (*fn)(void *ctx, const char *tenant, const char *counter, uint64_t accepted, uint64_t dups),
	void *ctx, cnt_err *err)
{
	return cnt_admit_each_counter(g->adm, fn, ctx) != 0 ? cnt_err_nomem(err) : 0;
}
