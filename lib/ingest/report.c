/*
 * report.c - the reject and duplicate streams and reject messages (see
 * report.h).
 */
#include "ingest/report.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "avro/json.h"
#include "base/outfile.h"

#define FLUSH_AT (1u << 16)

static int str(cnt_buf *b, const char *s)
{
	return cnt_json_string(b, (const uint8_t *)s, strlen(s), 0);
}

static int pos(cnt_buf *b, const cnt_report_pos *p)
{
	if (cnt_buf_append(b, "\"input\":", 8) != 0 || str(b, p->input) != 0)
		return -1;
	return cnt_buf_printf(b, ",\"%s\":%" PRIu64, p->record ? "record" : "line", p->n);
}

int cnt_report_json(cnt_buf *b, const cnt_report_item *it)
{
	if (cnt_buf_putc(b, '{') != 0 || pos(b, &it->at) != 0 ||
	    cnt_buf_append(b, ",\"reason\":", 10) != 0 || str(b, it->reason) != 0)
		return -1;
	if (it->field && (cnt_buf_append(b, ",\"field\":", 9) != 0 || str(b, it->field) != 0))
		return -1;
	if (cnt_buf_append(b, ",\"message\":", 11) != 0 || str(b, it->msg) != 0)
		return -1;
	if (it->has_retry && cnt_buf_printf(b, ",\"retry_after_ms\":%" PRId64, it->retry_after_ms) != 0)
		return -1;
	if (it->has_first && (cnt_buf_append(b, ",\"duplicate_of\":{", 17) != 0 ||
	    pos(b, &it->first) != 0 || cnt_buf_putc(b, '}') != 0))
		return -1;
	if (cnt_buf_append(b, ",\"raw\":", 7) != 0)
		return -1;
	if (it->raw && it->raw_is_json) {
		if (cnt_buf_append(b, it->raw, it->rawn) != 0)
			return -1;
	} else if (cnt_json_string(b, (const uint8_t *)(it->raw ? it->raw : ""), it->raw ? it->rawn : 0, 0) != 0) {
		return -1;
	}
	return cnt_buf_append(b, "}\n", 2);
}

int cnt_report_message(cnt_buf *b, const cnt_report_item *it)
{
	return cnt_buf_printf(b, "'%s' %s %" PRIu64 ": rejected (%s): %s", it->at.input,
		it->at.record ? "record" : "line", it->at.n, it->reason, it->msg);
}

void cnt_report_init(cnt_report *r, int fd, const char *name, void (*note)(const char *msg),
	uint64_t max_notes)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->name = name;
	r->note = note;
	r->max_notes = max_notes ? max_notes : CNT_REPORT_MESSAGES;
}

static int flush(cnt_report *r, cnt_err *err)
{
	if (r->buf.len == 0)
		return 0;
	if (cnt_write_all(r->fd, r->buf.p, r->buf.len) != 0)
		return cnt_err_write(err, errno, "cannot write '%s'", r->name);
	r->buf.len = 0;
	return 0;
}

/* Gives the message in r->line (NUL-terminated). */
static int say(cnt_report *r, cnt_err *err)
{
	if (cnt_buf_putc(&r->line, '\0') != 0)
		return cnt_err_nomem(err);
	r->note((const char *)r->line.p);
	return 0;
}

int cnt_report_add(cnt_report *r, const cnt_report_item *it, cnt_err *err)
{
	r->added++;
	if (r->fd >= 0) {
		if (cnt_report_json(&r->buf, it) != 0)
			return cnt_err_nomem(err);
		return r->buf.len >= FLUSH_AT ? flush(r, err) : 0;
	}
	if (r->note == NULL)
		return 0;
	r->line.len = 0;
	if (r->noted < r->max_notes) {
		r->noted++;
		if (cnt_report_message(&r->line, it) != 0)
			return cnt_err_nomem(err);
		return say(r, err);
	}
	if (r->added == r->max_notes + 1) {
		if (cnt_buf_printf(&r->line, "more than %" PRIu64 " records rejected: the rest are counted "
			"and summed up at the end (-r FILE keeps every one)", r->max_notes) != 0)
			return cnt_err_nomem(err);
		return say(r, err);
	}
	return 0;
}

int cnt_report_finish(cnt_report *r, const uint64_t by_reason[CNT_REJ_COUNT], cnt_err *err)
{
	int first = 1;

	if (r->fd >= 0)
		return flush(r, err);
	if (r->note == NULL || r->added <= r->noted)
		return 0;
	r->line.len = 0;
	if (cnt_buf_printf(&r->line, "%" PRIu64 " records rejected, the first %" PRIu64 " shown; by reason:",
		r->added, r->noted) != 0)
		return cnt_err_nomem(err);
	for (int i = 0; i < CNT_REJ_COUNT; i++) {
		if (by_reason[i] == 0)
			continue;
		if (cnt_buf_printf(&r->line, "%s %s %" PRIu64, first ? "" : ",",
			cnt_reject_name((cnt_reject_reason)i), by_reason[i]) != 0)
			return cnt_err_nomem(err);
		first = 0;
	}
	return say(r, err);
}

void cnt_report_release(cnt_report *r)
{
	cnt_buf_release(&r->buf);
	cnt_buf_release(&r->line);
}
