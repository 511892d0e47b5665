/*
 * jsonout.c - values as JSON and CSV text (see jsonout.h).
 */
#include "avro/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"
#include "time/timefmt.h"

static const char hexd[] = "0123456789abcdef";

int cnt_json_text_ok(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n;) {
		size_t l = cnt_utf8_len(b + i, n - i);

		if (l == 0 || b[i] == 0)
			return 0;
		i += l;
	}
	return 1;
}

int cnt_json_string(cnt_buf *out, const uint8_t *p, size_t n, int bytes)
{
	size_t i = 0;

	/* Worst case 6 output bytes per input byte, plus quotes. */
	if (cnt_buf_reserve(out, n * 6 + 2) != 0)
		return -1;
	uint8_t *o = out->p + out->len;
	*o++ = '"';
	while (i < n) {
		uint8_t c = p[i];

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			*o++ = c;
			i++;
			continue;
		}
		if (c < 0x20 || c == '"' || c == '\\') {
			*o++ = '\\';
			switch (c) {
			case '"': *o++ = '"'; break;
			case '\\': *o++ = '\\'; break;
			case '\b': *o++ = 'b'; break;
			case '\f': *o++ = 'f'; break;
			case '\n': *o++ = 'n'; break;
			case '\r': *o++ = 'r'; break;
			case '\t': *o++ = 't'; break;
			default:
				*o++ = 'u'; *o++ = '0'; *o++ = '0';
				*o++ = (uint8_t)hexd[c >> 4]; *o++ = (uint8_t)hexd[c & 15];
			}
			i++;
			continue;
		}
		if (bytes) {
			/* The byte is the code point U+0080..U+00FF. */
			*o++ = (uint8_t)(0xc0 | (c >> 6));
			*o++ = (uint8_t)(0x80 | (c & 0x3f));
			i++;
			continue;
		}
		{
			size_t l = cnt_utf8_len(p + i, n - i);

			if (l == 0) {
				*o++ = '\\'; *o++ = 'u'; *o++ = '0'; *o++ = '0';
				*o++ = (uint8_t)hexd[c >> 4]; *o++ = (uint8_t)hexd[c & 15];
				i++;
			} else {
				memcpy(o, p + i, l);
				o += l;
				i += l;
			}
		}
	}
	*o++ = '"';
	out->len = (size_t)(o - out->p);
	return 0;
}

static int put_double(cnt_buf *out, double d)
{
	char tmp[40];

	if (isnan(d))
		return cnt_buf_append(out, "\"NaN\"", 5);
	if (isinf(d))
		return d > 0 ? cnt_buf_append(out, "\"Infinity\"", 10) : cnt_buf_append(out, "\"-Infinity\"", 11);
	/* The shortest text that reads back as the same double. */
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	if (strpbrk(tmp, ".eEn") == NULL)
		strcat(tmp, ".0");
	return cnt_buf_append(out, tmp, strlen(tmp));
}

static int put_time(cnt_buf *out, int64_t v, cnt_logical lt)
{
	char tmp[48];
	int64_t ms = v;
	size_t n;

	if (lt == CNT_LT_TIMESTAMP_MICROS || lt == CNT_LT_LOCAL_TIMESTAMP_MICROS)
		ms = v >= 0 ? v / 1000 : -((-(v + 1)) / 1000) - 1;
	n = cnt_time_format_rfc3339(ms, tmp + 1);
	tmp[0] = '"';
	if (lt == CNT_LT_TIMESTAMP_MICROS || lt == CNT_LT_LOCAL_TIMESTAMP_MICROS) {
		/* Keep the microseconds: ".123Z" becomes ".123456Z". */
		int64_t us = ((v % 1000) + 1000) % 1000;

		snprintf(tmp + n, sizeof(tmp) - n, "%03lldZ", (long long)us);
		n += 4;
	}
	if (lt == CNT_LT_LOCAL_TIMESTAMP_MILLIS || lt == CNT_LT_LOCAL_TIMESTAMP_MICROS)
		n--; /* a local timestamp has no zone: drop the 'Z' */
	tmp[n + 1] = '"';
	return cnt_buf_append(out, tmp, n + 2);
}

int cnt_json_value(cnt_buf *out, const cnt_val *v, const cnt_schema *s, int flags)
{
	int rc = 0;

	switch (s->type) {
	case CNT_T_NULL:
		return cnt_buf_append(out, "null", 4);
	case CNT_T_BOOLEAN:
		return v->u.i ? cnt_buf_append(out, "true", 4) : cnt_buf_append(out, "false", 5);
	case CNT_T_INT:
	case CNT_T_LONG:
		if ((flags & CNT_JSON_ISO_TIME) && s->logical != CNT_LT_NONE && s->logical != CNT_LT_DATE)
			return put_time(out, v->u.i, s->logical);
		return cnt_buf_printf(out, "%lld", (long long)v->u.i);
	case CNT_T_FLOAT:
	case CNT_T_DOUBLE:
		return put_double(out, v->u.d);
	case CNT_T_STRING:
		return cnt_json_string(out, v->u.s, v->n, 0);
	case CNT_T_BYTES:
	case CNT_T_FIXED:
		return cnt_json_string(out, v->u.s, v->n, 1);
	case CNT_T_ENUM:
		return cnt_buf_printf(out, "\"%s\"", s->symbols[v->n]);
	case CNT_T_UNION:
		return cnt_json_value(out, v->u.v, s->branches[v->n], flags);
	case CNT_T_ARRAY:
		rc |= cnt_buf_putc(out, '[');
		for (uint32_t i = 0; i < v->n && rc == 0; i++) {
			if (i)
				rc |= cnt_buf_putc(out, ',');
			rc |= cnt_json_value(out, &v->u.v[i], s->items, flags);
		}
		rc |= cnt_buf_putc(out, ']');
		return rc ? -1 : 0;
	case CNT_T_MAP:
		rc |= cnt_buf_putc(out, '{');
		for (uint32_t i = 0; i < v->n && rc == 0; i++) {
			if (i)
				rc |= cnt_buf_putc(out, ',');
			rc |= cnt_json_string(out, v->u.v[2 * i].u.s, v->u.v[2 * i].n, 0);
			rc |= cnt_buf_putc(out, ':');
			rc |= cnt_json_value(out, &v->u.v[2 * i + 1], s->items, flags);
		}
		rc |= cnt_buf_putc(out, '}');
		return rc ? -1 : 0;
	case CNT_T_RECORD:
		rc |= cnt_buf_putc(out, '{');
		for (size_t i = 0; i < s->nfields && rc == 0; i++) {
			if (i)
				rc |= cnt_buf_putc(out, ',');
			rc |= cnt_json_string(out, (const uint8_t *)s->fields[i].name, strlen(s->fields[i].name), 0);
			rc |= cnt_buf_putc(out, ':');
			rc |= cnt_json_value(out, &v->u.v[i], s->fields[i].type, flags);
		}
		rc |= cnt_buf_putc(out, '}');
		return rc ? -1 : 0;
	}
	return -1;
}

/* Appends s as one CSV cell, quoted when it holds a comma, quote or line
 * break (RFC 4180). */
static int csv_cell(cnt_buf *out, const uint8_t *p, size_t n)
{
	int quote = 0;

	for (size_t i = 0; i < n && !quote; i++)
		quote = p[i] == ',' || p[i] == '"' || p[i] == '\n' || p[i] == '\r';
	if (!quote)
		return cnt_buf_append(out, p, n);
	if (cnt_buf_putc(out, '"') != 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if ((p[i] == '"' && cnt_buf_putc(out, '"') != 0) || cnt_buf_putc(out, p[i]) != 0)
			return -1;
	return cnt_buf_putc(out, '"');
}

int cnt_csv_header(cnt_buf *out, const cnt_schema *s)
{
	for (size_t i = 0; i < s->nfields; i++)
		if ((i && cnt_buf_putc(out, ',') != 0) ||
		    csv_cell(out, (const uint8_t *)s->fields[i].name, strlen(s->fields[i].name)) != 0)
			return -1;
	return cnt_buf_putc(out, '\n');
}

int cnt_csv_record(cnt_buf *out, const cnt_val *v, const cnt_schema *s, int flags)
{
	cnt_buf tmp = CNT_BUF_INIT;
	int rc = 0;

	for (size_t i = 0; i < s->nfields && rc == 0; i++) {
		const cnt_val *f = &v->u.v[i];
		const cnt_schema *fs = s->fields[i].type;

		if (i)
			rc |= cnt_buf_putc(out, ',');
		while (fs->type == CNT_T_UNION) {
			fs = fs->branches[f->n];
			f = f->u.v;
		}
		tmp.len = 0;
		switch (fs->type) {
		case CNT_T_NULL:
			break;
		case CNT_T_STRING:
			rc |= csv_cell(out, f->u.s, f->n);
			break;
		case CNT_T_ENUM:
			rc |= csv_cell(out, (const uint8_t *)fs->symbols[f->n], strlen(fs->symbols[f->n]));
			break;
		default:
			rc |= cnt_json_value(&tmp, f, fs, flags);
			if (rc == 0 && (fs->type == CNT_T_BYTES || fs->type == CNT_T_FIXED ||
			    (fs->type == CNT_T_LONG && tmp.len && tmp.p[0] == '"'))) {
				/* Drop the JSON quotes: a cell is already a string. */
				rc |= csv_cell(out, tmp.p + 1, tmp.len - 2);
			} else {
				rc |= csv_cell(out, tmp.p, tmp.len);
			}
		}
	}
	cnt_buf_release(&tmp);
	return rc || cnt_buf_putc(out, '\n') ? -1 : 0;
}

int cnt_json_reject(cnt_buf *out, const char *input, const char *poskind, uint64_t pos,
	const char *reason, const char *field, const char *msg, const char *event_id, size_t event_id_len)
{
	int rc = 0;

	rc |= cnt_buf_append(out, "{\"input\":", 9);
	rc |= cnt_json_string(out, (const uint8_t *)input, strlen(input), 0);
	rc |= cnt_buf_printf(out, ",\"%s\":%llu,\"reason\":\"%s\"", poskind, (unsigned long long)pos, reason);
	if (field)
		rc |= cnt_buf_printf(out, ",\"field\":\"%s\"", field);
	rc |= cnt_buf_append(out, ",\"message\":", 11);
	rc |= cnt_json_string(out, (const uint8_t *)msg, strlen(msg), 0);
	if (event_id) {
		rc |= cnt_buf_append(out, ",\"event_id\":", 12);
		rc |= cnt_json_string(out, (const uint8_t *)event_id, event_id_len, 0);
	}
	rc |= cnt_buf_append(out, "}\n", 2);
	return rc ? -1 : 0;
}
