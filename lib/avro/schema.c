/*
 * schema.c - Avro schema parsing (see schema.h).
 *
 * Names follow the specification: a name without a dot takes the nearest
 * enclosing namespace; a reference to a named type may be written as its
 * full name or, inside the same namespace, its short name.  Types must be
 * defined before they are referenced, as in every Avro implementation.
 */
#include "avro/schema.h"
#include "base/jsonload.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
	cnt_avro_schema *s;
	cnt_err *err;
	char path[512];
	int depth;
} parser;

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

static cnt_schema *node_new(parser *ps, cnt_type t)
{
	cnt_avro_schema *s = ps->s;
	cnt_schema *n;

	if (s->nnodes == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		cnt_schema **v = realloc(s->nodes, cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		s->nodes = v;
		s->cap = cap;
	}
	n = calloc(1, sizeof(*n));
	if (n == NULL)
		return NULL;
	n->type = t;
	n->enum_default = -1;
	s->nodes[s->nnodes++] = n;
	return n;
}

static int fail(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(parser *ps, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	cnt_err_set(ps->err, "schema %s: %s", ps->path[0] ? ps->path : "$", what);
	if (ps->err && strcmp(fmt, "out of memory") == 0)
		ps->err->kind = CNT_ERR_NOMEM;
	return -1;
}

static const struct { const char *name; cnt_type t; } prims[] = {
	{"null", CNT_T_NULL}, {"boolean", CNT_T_BOOLEAN}, {"int", CNT_T_INT},
	{"long", CNT_T_LONG}, {"float", CNT_T_FLOAT}, {"double", CNT_T_DOUBLE},
	{"bytes", CNT_T_BYTES}, {"string", CNT_T_STRING},
};

const char *cnt_type_name(cnt_type t)
{
	static const char *names[] = {"null", "boolean", "int", "long", "float",
		"double", "bytes", "string", "record", "enum", "array", "map",
		"union", "fixed"};

	return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

static int prim_lookup(const char *name, cnt_type *t)
{
	for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
		if (strcmp(prims[i].name, name) == 0) {
			*t = prims[i].t;
			return 0;
		}
	return -1;
}

static cnt_schema *find_named(parser *ps, const char *fullname)
{
	for (size_t i = 0; i < ps->s->nnodes; i++) {
		cnt_schema *n = ps->s->nodes[i];

		if (n->fullname && strcmp(n->fullname, fullname) == 0)
			return n;
	}
	return NULL;
}

static int valid_name(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return 0;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

static int valid_fullname(const char *s)
{
	char part[256];
	const char *dot;

	for (;;) {
		size_t n;

		dot = strchr(s, '.');
		n = dot ? (size_t)(dot - s) : strlen(s);
		if (n == 0 || n >= sizeof(part))
			return 0;
		memcpy(part, s, n);
		part[n] = 0;
		if (!valid_name(part))
			return 0;
		if (!dot)
			return 1;
		s = dot + 1;
	}
}

/* Builds "ns.name" unless name already has a dot. */
static char *make_fullname(const char *name, const char *ns)
{
	char *f;
	size_t n;

	if (strchr(name, '.') || ns == NULL || *ns == 0)
		return xstrdup(name);
	n = strlen(ns) + strlen(name) + 2;
	f = malloc(n);
	if (f)
		snprintf(f, n, "%s.%s", ns, name);
	return f;
}

static const char *namespace_of(const char *fullname, char *buf, size_t n)
{
	const char *dot = strrchr(fullname, '.');

	if (dot == NULL || (size_t)(dot - fullname) >= n) {
		buf[0] = 0; /* callers use buf itself: never leave it unset */
		return buf;
	}
	memcpy(buf, fullname, (size_t)(dot - fullname));
	buf[dot - fullname] = 0;
	return buf;
}

static cnt_schema *parse_node(parser *ps, json_t *j, const char *ns);

/* Appends pre, mid and post to the JSON path; returns the old length so
 * the caller can cut it back. */
static size_t path_push(parser *ps, const char *pre, const char *mid, const char *post)
{
	size_t len = strlen(ps->path);

	snprintf(ps->path + len, sizeof(ps->path) - len, "%s%s%s", pre, mid, post);
	return len;
}

static int parse_aliases(parser *ps, json_t *j, const char *ns, char ***out, size_t *nout)
{
	json_t *a = json_object_get(j, "aliases");
	size_t i;
	json_t *v;

	if (a == NULL)
		return 0;
	if (!json_is_array(a))
		return fail(ps, "'aliases' must be an array of names");
	*out = calloc(json_array_size(a) + 1, sizeof(char *));
	if (*out == NULL)
		return fail(ps, "out of memory");
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || !valid_fullname(json_string_value(v)))
			return fail(ps, "'aliases' must be an array of names");
		(*out)[i] = ns ? make_fullname(json_string_value(v), ns) : xstrdup(json_string_value(v));
		if ((*out)[i] == NULL)
			return fail(ps, "out of memory");
		*nout = i + 1;
	}
	return 0;
}

static cnt_schema *parse_named(parser *ps, json_t *j, cnt_type t, const char *ns, char *nsbuf, size_t nsbufn)
{
	json_t *name = json_object_get(j, "name"), *jns = json_object_get(j, "namespace");
	cnt_schema *n;
	char *full;

	if (!json_is_string(name) || !valid_fullname(json_string_value(name))) {
		fail(ps, "a %s needs a valid 'name'", cnt_type_name(t));
		return NULL;
	}
	if (jns && !json_is_null(jns) && !json_is_string(jns)) {
		fail(ps, "'namespace' must be a string");
		return NULL;
	}
	if (jns && json_is_string(jns))
		ns = json_string_value(jns);
	full = make_fullname(json_string_value(name), ns);
	if (full == NULL) {
		fail(ps, "out of memory");
		return NULL;
	}
	if (find_named(ps, full)) {
		fail(ps, "type '%s' is defined twice", full);
		free(full);
		return NULL;
	}
	n = node_new(ps, t);
	if (n == NULL) {
		free(full);
		fail(ps, "out of memory");
		return NULL;
	}
	n->fullname = full;
	if (strlen(full) >= nsbufn) {
		fail(ps, "the name '%.64s...' is longer than %zu bytes", full, nsbufn - 1);
		return NULL;
	}
	namespace_of(full, nsbuf, nsbufn);
	if (parse_aliases(ps, j, nsbuf, &n->aliases, &n->naliases) != 0)
		return NULL;
	return n;
}

static int parse_record(parser *ps, json_t *j, cnt_schema *n, const char *ns)
{
	json_t *fields = json_object_get(j, "fields"), *f;
	size_t i, mark;

	if (!json_is_array(fields))
		return fail(ps, "record '%s' needs a 'fields' array", n->fullname);
	n->fields = calloc(json_array_size(fields) + 1, sizeof(cnt_field));
	if (n->fields == NULL)
		return fail(ps, "out of memory");
	json_array_foreach(fields, i, f) {
		json_t *fname = json_object_get(f, "name");
		cnt_field *cf = &n->fields[i];
		char idx[32];

		snprintf(idx, sizeof(idx), "%zu", i);
		mark = path_push(ps, ".fields[", idx, "]");
		if (!json_is_object(f) || !json_is_string(fname) || !valid_name(json_string_value(fname)))
			return fail(ps, "a field needs a valid 'name'");
		if (cnt_schema_field_index(n, json_string_value(fname)) >= 0)
			return fail(ps, "field '%s' appears twice", json_string_value(fname));
		cf->name = xstrdup(json_string_value(fname));
		n->nfields = i + 1;
		if (cf->name == NULL)
			return fail(ps, "out of memory");
		if (json_object_get(f, "type") == NULL)
			return fail(ps, "field '%s' has no 'type'", cf->name);
		ps->path[mark] = 0;
		mark = path_push(ps, ".", cf->name, "");
		cf->type = parse_node(ps, json_object_get(f, "type"), ns);
		if (cf->type == NULL)
			return -1;
		ps->path[mark] = 0;
		cf->dflt = json_object_get(f, "default");
		if (cf->dflt)
			json_incref(cf->dflt);
		if (parse_aliases(ps, f, NULL, &cf->aliases, &cf->naliases) != 0)
			return -1;
	}
	return 0;
}

static int parse_enum(parser *ps, json_t *j, cnt_schema *n)
{
	json_t *syms = json_object_get(j, "symbols"), *v, *d;
	size_t i;

	if (!json_is_array(syms))
		return fail(ps, "enum '%s' needs a 'symbols' array", n->fullname);
	n->symbols = calloc(json_array_size(syms) + 1, sizeof(char *));
	if (n->symbols == NULL)
		return fail(ps, "out of memory");
	json_array_foreach(syms, i, v) {
		if (!json_is_string(v) || !valid_name(json_string_value(v)))
			return fail(ps, "enum '%s' has an invalid symbol", n->fullname);
		for (size_t k = 0; k < i; k++)
			if (strcmp(n->symbols[k], json_string_value(v)) == 0)
				return fail(ps, "enum symbol '%s' appears twice", json_string_value(v));
		n->symbols[i] = xstrdup(json_string_value(v));
		n->nsymbols = i + 1;
		if (n->symbols[i] == NULL)
			return fail(ps, "out of memory");
	}
	d = json_object_get(j, "default");
	if (d) {
		if (!json_is_string(d))
			return fail(ps, "enum '%s' default must be a symbol", n->fullname);
		for (i = 0; i < n->nsymbols; i++)
			if (strcmp(n->symbols[i], json_string_value(d)) == 0)
				n->enum_default = (int)i;
		if (n->enum_default < 0)
			return fail(ps, "enum default '%s' is not one of its symbols", json_string_value(d));
	}
	return 0;
}

static cnt_logical logical_of(json_t *j, cnt_type t)
{
	const char *lt = json_string_value(json_object_get(j, "logicalType"));

	/* A logical type that does not fit its type is ignored, as the
	 * specification requires. */
	if (lt == NULL)
		return CNT_LT_NONE;
	if (t == CNT_T_LONG && strcmp(lt, "timestamp-millis") == 0)
		return CNT_LT_TIMESTAMP_MILLIS;
	if (t == CNT_T_LONG && strcmp(lt, "timestamp-micros") == 0)
		return CNT_LT_TIMESTAMP_MICROS;
	if (t == CNT_T_LONG && strcmp(lt, "local-timestamp-millis") == 0)
		return CNT_LT_LOCAL_TIMESTAMP_MILLIS;
	if (t == CNT_T_LONG && strcmp(lt, "local-timestamp-micros") == 0)
		return CNT_LT_LOCAL_TIMESTAMP_MICROS;
	if (t == CNT_T_INT && strcmp(lt, "date") == 0)
		return CNT_LT_DATE;
	return CNT_LT_NONE;
}

static cnt_schema *parse_object(parser *ps, json_t *j, const char *ns)
{
	json_t *jt = json_object_get(j, "type");
	const char *t;
	char nsbuf[512];
	cnt_schema *n;
	cnt_type pt;
	size_t mark;

	if (jt == NULL) {
		fail(ps, "an object schema needs a 'type'");
		return NULL;
	}
	if (!json_is_string(jt)) {
		/* {"type": {...}} or {"type": [...]} wraps another schema. */
		return parse_node(ps, jt, ns);
	}
	t = json_string_value(jt);
	if (prim_lookup(t, &pt) == 0) {
		n = node_new(ps, pt);
		if (n == NULL)
			fail(ps, "out of memory");
		else
			n->logical = logical_of(j, pt);
		return n;
	}
	if (strcmp(t, "record") == 0 || strcmp(t, "error") == 0) {
		n = parse_named(ps, j, CNT_T_RECORD, ns, nsbuf, sizeof(nsbuf));
		if (n == NULL || parse_record(ps, j, n, nsbuf) != 0)
			return NULL;
		return n;
	}
	if (strcmp(t, "enum") == 0) {
		n = parse_named(ps, j, CNT_T_ENUM, ns, nsbuf, sizeof(nsbuf));
		if (n == NULL || parse_enum(ps, j, n) != 0)
			return NULL;
		return n;
	}
	if (strcmp(t, "fixed") == 0) {
		json_t *sz = json_object_get(j, "size");

		n = parse_named(ps, j, CNT_T_FIXED, ns, nsbuf, sizeof(nsbuf));
		if (n == NULL)
			return NULL;
		if (!json_is_integer(sz) || json_integer_value(sz) < 0 || json_integer_value(sz) > (1 << 30)) {
			fail(ps, "fixed '%s' needs a non-negative integer 'size'", n->fullname);
			return NULL;
		}
		n->size = (size_t)json_integer_value(sz);
		return n;
	}
	if (strcmp(t, "array") == 0 || strcmp(t, "map") == 0) {
		int arr = t[0] == 'a';
		json_t *it = json_object_get(j, arr ? "items" : "values");

		n = node_new(ps, arr ? CNT_T_ARRAY : CNT_T_MAP);
		if (n == NULL) {
			fail(ps, "out of memory");
			return NULL;
		}
		if (it == NULL) {
			fail(ps, "%s", arr ? "an array needs 'items'" : "a map needs 'values'");
			return NULL;
		}
		mark = path_push(ps, arr ? ".items" : ".values", "", "");
		n->items = parse_node(ps, it, ns);
		ps->path[mark] = 0;
		return n->items ? n : NULL;
	}
	/* A named type referenced as {"type": "cnt.Origin"}. */
	return parse_node(ps, jt, ns);
}

static cnt_schema *parse_node(parser *ps, json_t *j, const char *ns)
{
	cnt_schema *n = NULL;

	if (++ps->depth > 64) {
		fail(ps, "schema nested deeper than 64 levels");
		return NULL;
	}
	if (json_is_string(j)) {
		const char *name = json_string_value(j);
		cnt_type pt;

		if (prim_lookup(name, &pt) == 0) {
			n = node_new(ps, pt);
			if (n == NULL)
				fail(ps, "out of memory");
		} else {
			char *full = make_fullname(name, ns);

			n = full ? find_named(ps, full) : NULL;
			if (n == NULL)
				n = find_named(ps, name);
			if (n == NULL)
				fail(ps, "unknown type '%s'", name);
			free(full);
		}
	} else if (json_is_array(j)) {
		size_t i;
		json_t *b;

		n = node_new(ps, CNT_T_UNION);
		if (n == NULL || (n->branches = calloc(json_array_size(j) + 1, sizeof(cnt_schema *))) == NULL) {
			fail(ps, "out of memory");
			ps->depth--;
			return NULL;
		}
		json_array_foreach(j, i, b) {
			char idx[32];
			size_t mark;
			cnt_schema *br;

			snprintf(idx, sizeof(idx), "%zu", i);
			mark = path_push(ps, "[", idx, "]");
			br = parse_node(ps, b, ns);
			if (br == NULL) {
				n = NULL;
				break;
			}
			if (br->type == CNT_T_UNION) {
				fail(ps, "a union may not contain a union");
				n = NULL;
				break;
			}
			for (size_t k = 0; k < i; k++) {
				cnt_schema *o = n->branches[k];

				if (o->type == br->type && (o->fullname == NULL ||
				    strcmp(o->fullname, br->fullname) == 0)) {
					fail(ps, "a union may not contain two branches of type %s", br->fullname ? br->fullname : cnt_type_name(br->type));
					n = NULL;
					break;
				}
			}
			if (n == NULL)
				break;
			n->branches[i] = br;
			n->nbranches = i + 1;
			ps->path[mark] = 0;
		}
	} else if (json_is_object(j)) {
		n = parse_object(ps, j, ns);
	} else {
		fail(ps, "a schema must be a string, an array or an object");
	}
	ps->depth--;
	return n;
}

cnt_avro_schema *cnt_avro_schema_parse(const char *json, size_t n, cnt_err *err)
{
	cnt_avro_schema *s = calloc(1, sizeof(*s));
	json_error_t je;
	json_t *root;
	parser ps;

	if (s == NULL) {
		cnt_err_nomem(err);
		return NULL;
	}
	root = cnt_json_loadb(json, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (root == NULL) {
		if (cnt_json_oom(&je))
			cnt_err_nomem(err);
		else
			cnt_err_set(err, "schema is not valid JSON: line %d column %d: %s", je.line, je.column, je.text);
		free(s);
		return NULL;
	}
	memset(&ps, 0, sizeof(ps));
	ps.s = s;
	ps.err = err;
	s->root = parse_node(&ps, root, "");
	json_decref(root);
	s->json = malloc(n + 1);
	if (s->root == NULL || s->json == NULL) {
		if (s->root != NULL)
			cnt_err_nomem(err);
		cnt_avro_schema_free(s);
		return NULL;
	}
	memcpy(s->json, json, n);
	s->json[n] = 0;
	s->json_len = n;
	return s;
}

void cnt_avro_schema_free(cnt_avro_schema *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nnodes; i++) {
		cnt_schema *n = s->nodes[i];

		for (size_t f = 0; f < n->nfields; f++) {
			free(n->fields[f].name);
			json_decref(n->fields[f].dflt);
			for (size_t a = 0; a < n->fields[f].naliases; a++)
				free(n->fields[f].aliases[a]);
			free(n->fields[f].aliases);
		}
		free(n->fields);
		for (size_t k = 0; k < n->nsymbols; k++)
			free(n->symbols[k]);
		free(n->symbols);
		for (size_t a = 0; a < n->naliases; a++)
			free(n->aliases[a]);
		free(n->aliases);
		free(n->branches);
		free(n->fullname);
		free(n);
	}
	free(s->nodes);
	free(s->json);
	free(s);
}

int cnt_schema_field_index(const cnt_schema *rec, const char *name)
{
	for (size_t i = 0; i < rec->nfields; i++)
		if (rec->fields[i].name && strcmp(rec->fields[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int put_json_string(cnt_buf *out, const char *s)
{
	/* Names and symbols are [A-Za-z0-9_.] by construction: no escaping. */
	return cnt_buf_printf(out, "\"%s\"", s);
}

typedef struct seen {
	const cnt_schema **v;
	size_t n, cap;
} seen;

static int canon(const cnt_schema *s, cnt_buf *out, seen *sn)
{
	int rc = 0;

	if (s->fullname) {
		for (size_t i = 0; i < sn->n; i++)
			if (sn->v[i] == s)
				return put_json_string(out, s->fullname);
		if (sn->n == sn->cap) {
			size_t cap = sn->cap ? sn->cap * 2 : 16;
			const cnt_schema **v = realloc(sn->v, cap * sizeof(*v));

			if (v == NULL)
				return -1;
			sn->v = v;
			sn->cap = cap;
		}
		sn->v[sn->n++] = s;
	}
	switch (s->type) {
	case CNT_T_RECORD:
		rc |= cnt_buf_printf(out, "{\"name\":\"%s\",\"type\":\"record\",\"fields\":[", s->fullname);
		for (size_t i = 0; i < s->nfields && rc == 0; i++) {
			rc |= cnt_buf_printf(out, "%s{\"name\":\"%s\",\"type\":", i ? "," : "", s->fields[i].name);
			rc |= canon(s->fields[i].type, out, sn);
			rc |= cnt_buf_putc(out, '}');
		}
		rc |= cnt_buf_append(out, "]}", 2);
		break;
	case CNT_T_ENUM:
		rc |= cnt_buf_printf(out, "{\"name\":\"%s\",\"type\":\"enum\",\"symbols\":[", s->fullname);
		for (size_t i = 0; i < s->nsymbols; i++)
			rc |= cnt_buf_printf(out, "%s\"%s\"", i ? "," : "", s->symbols[i]);
		rc |= cnt_buf_append(out, "]}", 2);
		break;
	case CNT_T_FIXED:
		rc |= cnt_buf_printf(out, "{\"name\":\"%s\",\"type\":\"fixed\",\"size\":%zu}", s->fullname, s->size);
		break;
	case CNT_T_ARRAY:
	case CNT_T_MAP:
		rc |= cnt_buf_printf(out, "{\"type\":\"%s\",\"%s\":", cnt_type_name(s->type),
			s->type == CNT_T_ARRAY ? "items" : "values");
		rc |= canon(s->items, out, sn);
		rc |= cnt_buf_putc(out, '}');
		break;
	case CNT_T_UNION:
		rc |= cnt_buf_putc(out, '[');
		for (size_t i = 0; i < s->nbranches && rc == 0; i++) {
			if (i)
				rc |= cnt_buf_putc(out, ',');
			rc |= canon(s->branches[i], out, sn);
		}
		rc |= cnt_buf_putc(out, ']');
		break;
	default:
		rc |= put_json_string(out, cnt_type_name(s->type));
		break;
	}
	return rc ? -1 : 0;
}

int cnt_schema_canonical(const cnt_schema *s, cnt_buf *out)
{
	seen sn = {NULL, 0, 0};
	int rc = canon(s, out, &sn);

	free(sn.v);
	return rc;
}

size_t cnt_schema_min_size(const cnt_schema *s)
{
	cnt_schema *m = (cnt_schema *)(uintptr_t)s; /* cache lives in the node */
	size_t v = 0;

	if (m->min_state == 2)
		return m->min_size;
	if (m->min_state == 1)
		return SIZE_MAX / 4; /* a cycle: this branch is never the smallest */
	m->min_state = 1;
	switch (s->type) {
	case CNT_T_NULL:
		v = 0;
		break;
	case CNT_T_BOOLEAN: case CNT_T_INT: case CNT_T_LONG: case CNT_T_BYTES:
	case CNT_T_STRING: case CNT_T_ENUM: case CNT_T_ARRAY: case CNT_T_MAP:
		v = 1;
		break;
	case CNT_T_FLOAT:
		v = 4;
		break;
	case CNT_T_DOUBLE:
		v = 8;
		break;
	case CNT_T_FIXED:
		v = s->size;
		break;
	case CNT_T_RECORD:
		for (size_t i = 0; i < s->nfields; i++) {
			v += cnt_schema_min_size(s->fields[i].type);
			if (v > SIZE_MAX / 4)
				v = SIZE_MAX / 4;
		}
		break;
	case CNT_T_UNION:
		v = SIZE_MAX / 4;
		for (size_t i = 0; i < s->nbranches; i++) {
			size_t b = cnt_schema_min_size(s->branches[i]);

			if (b < v)
				v = b;
		}
		v = v + 1 > SIZE_MAX / 4 ? SIZE_MAX / 4 : v + 1;
		break;
	}
	m->min_size = v;
	m->min_state = 2;
	return v;
}

char *cnt_schema_compact(const char *json, cnt_err *err)
{
	json_error_t je;
	json_t *j = cnt_json_loads(json, 0, &je);
	char *compact;

	if (j == NULL) {
		if (cnt_json_oom(&je))
			cnt_err_nomem(err);
		else
			cnt_err_set(err, "schema is not valid JSON: line %d column %d: %s", je.line, je.column, je.text);
		return NULL;
	}
	compact = cnt_json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (compact == NULL)
		cnt_err_nomem(err);
	return compact;
}
