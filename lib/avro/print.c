/*
 * print.c - container inputs as text (see print.h).
 */
#include "avro/print.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avro/container.h"
#include "avro/json.h"
#include "avro/records.h"
#include "base/outfile.h"
#include "model/event.h"

extern const char cnt_schema_counting_event[];
extern const char cnt_schema_raw_event[];

static int write_out(cnt_printer *p, cnt_err *err)
{
	if (p->out.len && cnt_write_all(p->fd, p->out.p, p->out.len) != 0)
		return cnt_err_write(err, errno, "cannot write standard output");
	p->out.len = 0;
	return 0;
}

/* Writes whole records out once 64 KiB have gathered. */
static int flush_some(cnt_printer *p, cnt_err *err)
{
	return p->out.len < (1u << 16) ? 0 : write_out(p, err);
}

/* An input went bad: what was printed before the damage goes out first,
 * so the records before it are all there; err keeps the input's error. */
static int fail(cnt_printer *p, cnt_err *err)
{
	cnt_err werr;

	if (write_out(p, &werr) != 0 && werr.kind == CNT_ERR_PIPE)
		*err = werr;
	return -1;
}

static int print_meta(cnt_printer *p, cnt_reader *rd)
{
	const cnt_meta_kv *kv;
	size_t n = cnt_reader_meta(rd, &kv);
	const uint8_t *sync = cnt_reader_sync(rd);
	cnt_buf *o = &p->out;
	int rc = 0;

	rc |= cnt_buf_append(o, "{\"input\":", 9);
	rc |= cnt_json_string(o, (const uint8_t *)cnt_reader_name(rd), strlen(cnt_reader_name(rd)), 0);
	rc |= cnt_buf_printf(o, ",\"container\":%u,\"codec\":\"%s\",\"sync\":\"",
		cnt_reader_container(rd), cnt_codec_name(cnt_reader_codec(rd)));
	for (int i = 0; i < CNT_SYNC_SIZE; i++)
		rc |= cnt_buf_printf(o, "%02x", sync[i]);
	rc |= cnt_buf_append(o, "\",\"metadata\":{", 14);
	for (size_t i = 0; i < n; i++) {
		if (i)
			rc |= cnt_buf_putc(o, ',');
		rc |= cnt_json_string(o, (const uint8_t *)kv[i].key, strlen(kv[i].key), 0);
		rc |= cnt_buf_putc(o, ':');
		rc |= cnt_json_string(o, kv[i].val, kv[i].vlen, 1);
	}
	rc |= cnt_buf_append(o, "}}\n", 3);
	return rc;
}

static int print_schema(cnt_printer *p, cnt_reader *rd)
{
	const cnt_avro_schema *s = cnt_reader_schema(rd);
	int rc = cnt_buf_append(&p->out, s->json, s->json_len);

	if (s->json_len == 0 || s->json[s->json_len - 1] != '\n')
		rc |= cnt_buf_putc(&p->out, '\n');
	return rc;
}

/* --schema, --meta: headers only, every container's, header-only ones too. */
static int print_headers(cnt_printer *p, int fd, const char *name, cnt_err *err)
{
	cnt_reader *rd = cnt_reader_open_prefixed(fd, name, NULL, 0, NULL, CNT_READER_HEADERS, err);
	cnt_block b;
	int rc;

	if (rd == NULL)
		return fail(p, err);
	do {
		if ((p->mode == CNT_PRINT_SCHEMA ? print_schema(p, rd) : print_meta(p, rd)) != 0) {
			cnt_reader_free(rd);
			return cnt_err_nomem(err);
		}
		if (flush_some(p, err) != 0) {
			cnt_reader_free(rd);
			return -1;
		}
		while ((rc = cnt_reader_next(rd, &b, err)) == 1)
			;
	} while (rc == 2);
	cnt_reader_free(rd);
	return rc < 0 ? fail(p, err) : 0;
}

static int print_record(cnt_printer *p, const cnt_val *v, const cnt_schema *s, const char *name, cnt_err *err)
{
	if (p->csv) {
		if (s->type != CNT_T_RECORD)
			return cnt_err_set(err, "'%s': CSV output needs records, and this schema is a %s",
				name, cnt_type_name(s->type));
		if (!p->header_done) {
			if (cnt_csv_header(&p->out, s) != 0)
				return cnt_err_nomem(err);
			p->header_done = 1;
		}
		if (cnt_csv_record(&p->out, v, s, p->flags) != 0)
			return cnt_err_nomem(err);
	} else if (cnt_json_value(&p->out, v, s, p->flags) != 0 || cnt_buf_putc(&p->out, '\n') != 0) {
		return cnt_err_nomem(err);
	}
	return 0;
}

int cnt_print_full(const cnt_printer *p)
{
	return p->head >= 0 && p->total >= (uint64_t)p->head;
}

int cnt_print_input(cnt_printer *p, int fd, const char *name, uint64_t *records, cnt_err *err)
{
	int counting = p->mode == CNT_PRINT_COUNT && p->reader == NULL;
	cnt_records *in;
	cnt_val v;
	int rc = 0;

	*records = 0;
	if (p->mode == CNT_PRINT_SCHEMA || p->mode == CNT_PRINT_META)
		return print_headers(p, fd, name, err);
	if (counting) {
		/* Event archives are what gets counted most: check them with
		 * the decoder written for their schema, on the read-ahead
		 * threads. */
		char *canon = cnt_event_canonical();

		if (canon == NULL)
			return cnt_err_nomem(err);
		in = cnt_records_open_counting(fd, name, canon, cnt_event_skip, NULL, err);
		free(canon);
	} else {
		in = cnt_records_open(fd, name, p->reader, NULL, err);
	}
	if (in == NULL)
		return fail(p, err);
	while (!cnt_print_full(p) &&
	       (rc = counting ? cnt_records_skip(in, err) : cnt_records_next(in, &v, err)) > 0) {
		(*records)++;
		p->total++;
		if (p->tick)
			p->tick(1);
		if (p->mode == CNT_PRINT_COUNT)
			continue;
		if (print_record(p, &v, cnt_records_schema(in), name, err) != 0 || flush_some(p, err) != 0) {
			rc = -1;
			break;
		}
	}
	cnt_records_free(in);
	return rc < 0 ? fail(p, err) : 0;
}

int cnt_print_finish(cnt_printer *p, cnt_err *err)
{
	if (p->mode == CNT_PRINT_COUNT &&
	    cnt_buf_printf(&p->out, "%llu\n", (unsigned long long)p->total) != 0)
		return cnt_err_nomem(err);
	return write_out(p, err);
}

void cnt_print_release(cnt_printer *p)
{
	cnt_buf_release(&p->out);
}

cnt_avro_schema *cnt_print_reader_schema(const char *as_name, const char *path, cnt_err *err)
{
	cnt_buf b = CNT_BUF_INIT;
	cnt_avro_schema *s;
	const char *text;
	size_t n;

	if (as_name) {
		if (strcmp(as_name, "event") == 0)
			text = cnt_schema_counting_event;
		else if (strcmp(as_name, "raw") == 0)
			text = cnt_schema_raw_event;
		else
			return cnt_err_set(err, "--as: '%s' is not event or raw", as_name), NULL;
		n = strlen(text);
	} else {
		FILE *f = fopen(path, "rb");
		char chunk[65536];
		size_t got;

		if (f == NULL)
			return cnt_err_set(err, "cannot open '%s': %s", path, strerror(errno)), NULL;
		while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
			/* A schema is small; a huge file is not one. */
			int big = b.len + got > (16u << 20);

			if (big || cnt_buf_append(&b, chunk, got) != 0) {
				fclose(f);
				cnt_buf_release(&b);
				if (big)
					return cnt_err_set(err, "'%s': over 16 MiB, not a schema", path), NULL;
				return cnt_err_nomem(err), NULL;
			}
		}
		if (ferror(f)) {
			cnt_err_set(err, "cannot read '%s': %s", path, strerror(errno));
			fclose(f);
			cnt_buf_release(&b);
			return NULL;
		}
		fclose(f);
		text = (const char *)b.p;
		n = b.len;
	}
	s = cnt_avro_schema_parse(text ? text : "", n, err);
	if (s == NULL)
		cnt_err_prefix(err, "'%s'", path ? path : "built-in schema");
	cnt_buf_release(&b);
	return s;
}
