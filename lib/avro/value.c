/*
 * value.c - schema resolution and generic decoding (see value.h).
 */
#include "avro/value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---------------------------------------------------------- */

struct cnt_arena_chunk {
	struct cnt_arena_chunk *next;
	size_t cap, used;
	_Alignas(16) unsigned char data[];
};

void cnt_arena_init(cnt_arena *a, size_t limit)
{
	a->head = NULL;
	a->used_total = 0;
	a->limit = limit;
}

void cnt_arena_reset(cnt_arena *a)
{
	struct cnt_arena_chunk *c = a->head;

	if (c == NULL)
		return;
	/* Keep the newest (largest) chunk, free the rest. */
	while (c->next) {
		struct cnt_arena_chunk *n = c->next;

		c->next = n->next;
		free(n);
	}
	c->used = 0;
	a->used_total = 0;
}

void cnt_arena_release(cnt_arena *a)
{
	while (a->head) {
		struct cnt_arena_chunk *n = a->head->next;

		free(a->head);
		a->head = n;
	}
	a->used_total = 0;
}

void *cnt_arena_alloc(cnt_arena *a, size_t n)
{
	struct cnt_arena_chunk *c = a->head;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n == 0)
		n = 16;
	if (a->limit && (n > a->limit || a->used_total > a->limit - n))
		return NULL;
	if (c == NULL || c->cap - c->used < n) {
		size_t cap = c ? c->cap * 2 : 16384;

		while (cap < n)
			cap *= 2;
		c = malloc(sizeof(*c) + cap);
		if (c == NULL)
			return NULL;
		c->cap = cap;
		c->used = 0;
		c->next = a->head;
		a->head = c;
	}
	p = c->data + c->used;
	c->used += n;
	a->used_total += n;
	return p;
}

/* ---- plans ---------------------------------------------------------- */

enum op {
	P_READ,    /* a primitive, with promotion from wt to rt */
	P_FIXED, P_ENUM, P_ARRAY, P_MAP, P_RECORD,
	P_WUNION,  /* writer union: a branch index, then that branch's plan */
	P_RUNION,  /* reader union, writer not: wrap in reader branch rbranch */
	P_FAIL     /* cannot resolve: fails when a datum reaches it */
};

typedef struct step {
	int rindex;           /* reader field index, or -1 to skip */
	cnt_plan *sub;
	const cnt_schema *skip;
} step;

struct cnt_plan {
	enum op op;
	cnt_type wt, rt;
	const cnt_schema *w, *r;
	cnt_plan *sub;
	int rbranch;
	cnt_plan **wb;
	size_t nwb;
	int *enum_map;
	step *steps;
	size_t nsteps;
	cnt_val *defaults;    /* record: per reader field, valid if has_default */
	uint8_t *has_default; /* record: 1 when the writer lacks the field */
	char *fail_msg;
	/* a registry of every plan, for freeing and for recursive types */
	struct plan_reg *reg;
};

typedef struct plan_reg {
	cnt_plan **v;
	size_t n, cap;
	cnt_arena perm;       /* defaults live here */
	int refs;
} plan_reg;

static cnt_plan *plan_alloc(plan_reg *reg, const cnt_schema *w, const cnt_schema *r)
{
	cnt_plan *p;

	if (reg->n == reg->cap) {
		size_t cap = reg->cap ? reg->cap * 2 : 16;
		cnt_plan **v = realloc(reg->v, cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		reg->v = v;
		reg->cap = cap;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->w = w;
	p->r = r;
	p->wt = w->type;
	p->rt = r->type;
	p->reg = reg;
	reg->v[reg->n++] = p;
	return p;
}

static const char *short_name(const char *full)
{
	const char *d = full ? strrchr(full, '.') : NULL;

	return d ? d + 1 : full;
}

static int names_match(const cnt_schema *w, const cnt_schema *r)
{
	if (strcmp(w->fullname, r->fullname) == 0 ||
	    strcmp(short_name(w->fullname), short_name(r->fullname)) == 0)
		return 1;
	for (size_t i = 0; i < r->naliases; i++)
		if (strcmp(r->aliases[i], w->fullname) == 0 ||
		    strcmp(short_name(r->aliases[i]), short_name(w->fullname)) == 0)
			return 1;
	return 0;
}

static int promotable(cnt_type w, cnt_type r)
{
	switch (w) {
	case CNT_T_INT:
		return r == CNT_T_LONG || r == CNT_T_FLOAT || r == CNT_T_DOUBLE;
	case CNT_T_LONG:
		return r == CNT_T_FLOAT || r == CNT_T_DOUBLE;
	case CNT_T_FLOAT:
		return r == CNT_T_DOUBLE;
	case CNT_T_STRING:
		return r == CNT_T_BYTES;
	case CNT_T_BYTES:
		return r == CNT_T_STRING;
	default:
		return 0;
	}
}

/* Whether w can resolve to r without looking inside records (the test the
 * specification uses to pick a reader union branch). */
static int matches(const cnt_schema *w, const cnt_schema *r, int exact)
{
	if (w->type != r->type)
		return !exact && promotable(w->type, r->type);
	switch (w->type) {
	case CNT_T_RECORD: case CNT_T_ENUM:
		return names_match(w, r);
	case CNT_T_FIXED:
		return names_match(w, r) && w->size == r->size;
	case CNT_T_ARRAY: case CNT_T_MAP:
		return matches(w->items, r->items, 0);
	default:
		return 1;
	}
}

static cnt_plan *compile(plan_reg *reg, const cnt_schema *w, const cnt_schema *r,
	const char *path, int top, cnt_err *err);

static int default_to_val(plan_reg *reg, json_t *j, const cnt_schema *r, cnt_val *out, int depth);

static cnt_plan *fail_plan(plan_reg *reg, const cnt_schema *w, const cnt_schema *r, const char *msg)
{
	cnt_plan *p = plan_alloc(reg, w, r);

	if (p == NULL)
		return NULL;
	p->op = P_FAIL;
	p->fail_msg = strdup(msg);
	return p->fail_msg ? p : NULL;
}

static cnt_plan *compile_record(plan_reg *reg, const cnt_schema *w, const cnt_schema *r,
	const char *path, cnt_err *err)
{
	cnt_plan *p = plan_alloc(reg, w, r);
	char sub[512];

	if (p == NULL)
		goto oom;
	p->op = P_RECORD;
	p->steps = calloc(w->nfields + 1, sizeof(step));
	p->defaults = calloc(r->nfields + 1, sizeof(cnt_val));
	p->has_default = calloc(r->nfields + 1, 1);
	if (p->steps == NULL || p->defaults == NULL || p->has_default == NULL)
		goto oom;
	p->nsteps = w->nfields;
	for (size_t i = 0; i < r->nfields; i++)
		p->has_default[i] = 1;
	for (size_t i = 0; i < w->nfields; i++) {
		const cnt_field *wf = &w->fields[i];
		int ri = cnt_schema_field_index(r, wf->name);

		for (size_t k = 0; ri < 0 && k < r->nfields; k++)
			for (size_t a = 0; a < r->fields[k].naliases; a++)
				if (strcmp(r->fields[k].aliases[a], wf->name) == 0)
					ri = (int)k;
		p->steps[i].rindex = ri;
		if (ri < 0) {
			p->steps[i].skip = wf->type;
			continue;
		}
		p->has_default[ri] = 0;
		snprintf(sub, sizeof(sub), "%s.%s", path, r->fields[ri].name);
		p->steps[i].sub = compile(reg, wf->type, r->fields[ri].type, sub, 0, err);
		if (p->steps[i].sub == NULL)
			return NULL;
	}
	for (size_t i = 0; i < r->nfields; i++) {
		if (!p->has_default[i])
			continue;
		if (r->fields[i].dflt == NULL) {
			cnt_err_set(err, "field '%s%s%s' is missing from the writer's schema and has no default in the reader's",
				path + (path[0] == '.'), path[0] && path[1] ? "." : "", r->fields[i].name);
			return NULL;
		}
		if (default_to_val(reg, r->fields[i].dflt, r->fields[i].type, &p->defaults[i], 0) != 0) {
			cnt_err_set(err, "field '%s': its default does not fit its type %s",
				r->fields[i].name, cnt_type_name(r->fields[i].type->type));
			return NULL;
		}
	}
	return p;
oom:
	cnt_err_nomem(err);
	return NULL;
}

static cnt_plan *compile(plan_reg *reg, const cnt_schema *w, const cnt_schema *r,
	const char *path, int top, cnt_err *err)
{
	cnt_plan *p;
	const char *where = path[0] ? path + 1 : "(top level)";

	/* Recursive types: reuse the plan already made for this pair. */
	for (size_t i = 0; i < reg->n; i++)
		if (reg->v[i]->w == w && reg->v[i]->r == r && reg->v[i]->op == P_RECORD)
			return reg->v[i];
	if (w->type == CNT_T_UNION) {
		p = plan_alloc(reg, w, r);
		if (p == NULL || (p->wb = calloc(w->nbranches + 1, sizeof(cnt_plan *))) == NULL)
			goto oom;
		p->op = P_WUNION;
		p->nwb = w->nbranches;
		for (size_t i = 0; i < w->nbranches; i++) {
			cnt_err sub;

			p->wb[i] = compile(reg, w->branches[i], r, path, 0, &sub);
			if (p->wb[i] == NULL) {
				/* A branch that cannot be resolved fails only when a
				 * datum takes it; memory that ran out fails now. */
				if (sub.kind == CNT_ERR_NOMEM)
					goto oom;
				p->wb[i] = fail_plan(reg, w->branches[i], r, sub.msg);
				if (p->wb[i] == NULL)
					goto oom;
			}
		}
		return p;
	}
	if (r->type == CNT_T_UNION) {
		int pick = -1;

		for (int pass = 1; pass >= 0 && pick < 0; pass--)
			for (size_t i = 0; i < r->nbranches && pick < 0; i++)
				if (matches(w, r->branches[i], pass))
					pick = (int)i;
		if (pick < 0) {
			cnt_err_set(err, "field '%s': the writer's %s matches no branch of the reader's union",
				where, w->fullname ? w->fullname : cnt_type_name(w->type));
			return NULL;
		}
		p = plan_alloc(reg, w, r);
		if (p == NULL)
			goto oom;
		p->op = P_RUNION;
		p->rbranch = pick;
		p->sub = compile(reg, w, r->branches[pick], path, 0, err);
		return p->sub ? p : NULL;
	}
	if (w->type != r->type && !promotable(w->type, r->type)) {
		cnt_err_set(err, "field '%s': the writer's %s cannot be read as the reader's %s",
			where, w->fullname ? w->fullname : cnt_type_name(w->type),
			r->fullname ? r->fullname : cnt_type_name(r->type));
		return NULL;
	}
	if ((w->type == CNT_T_ENUM || w->type == CNT_T_FIXED ||
	     (w->type == CNT_T_RECORD && !top)) && !names_match(w, r)) {
		cnt_err_set(err, "field '%s': the writer's type '%s' does not match the reader's '%s'",
			where, w->fullname, r->fullname);
		return NULL;
	}
	switch (w->type) {
	case CNT_T_RECORD:
		return compile_record(reg, w, r, path, err);
	case CNT_T_FIXED:
		if (w->size != r->size) {
			cnt_err_set(err, "field '%s': fixed '%s' has size %zu in the writer's schema and %zu in the reader's",
				where, w->fullname, w->size, r->size);
			return NULL;
		}
		p = plan_alloc(reg, w, r);
		if (p == NULL)
			goto oom;
		p->op = P_FIXED;
		return p;
	case CNT_T_ENUM:
		p = plan_alloc(reg, w, r);
		if (p == NULL || (p->enum_map = calloc(w->nsymbols + 1, sizeof(int))) == NULL)
			goto oom;
		p->op = P_ENUM;
		for (size_t i = 0; i < w->nsymbols; i++) {
			p->enum_map[i] = r->enum_default;
			for (size_t k = 0; k < r->nsymbols; k++)
				if (strcmp(w->symbols[i], r->symbols[k]) == 0)
					p->enum_map[i] = (int)k;
		}
		return p;
	case CNT_T_ARRAY:
	case CNT_T_MAP: {
		char sub[512];

		p = plan_alloc(reg, w, r);
		if (p == NULL)
			goto oom;
		p->op = w->type == CNT_T_ARRAY ? P_ARRAY : P_MAP;
		snprintf(sub, sizeof(sub), "%s[]", path);
		p->sub = compile(reg, w->items, r->items, sub, 0, err);
		return p->sub ? p : NULL;
	}
	default:
		p = plan_alloc(reg, w, r);
		if (p == NULL)
			goto oom;
		p->op = P_READ;
		return p;
	}
oom:
	cnt_err_nomem(err);
	return NULL;
}

static void reg_free(plan_reg *reg)
{
	for (size_t i = 0; i < reg->n; i++) {
		cnt_plan *p = reg->v[i];

		free(p->wb);
		free(p->enum_map);
		free(p->steps);
		free(p->defaults);
		free(p->has_default);
		free(p->fail_msg);
		free(p);
	}
	free(reg->v);
	cnt_arena_release(&reg->perm);
	free(reg);
}

cnt_plan *cnt_plan_new(const cnt_schema *w, const cnt_schema *r, cnt_err *err)
{
	plan_reg *reg = calloc(1, sizeof(*reg));
	cnt_plan *p;

	if (reg == NULL) {
		cnt_err_nomem(err);
		return NULL;
	}
	cnt_arena_init(&reg->perm, 0);
	p = compile(reg, w, r, "", 1, err);
	if (p == NULL) {
		reg_free(reg);
		return NULL;
	}
	/* The first plan made is the root only if compile() made one; find
	 * the root by identity so cnt_plan_free() can reach the registry. */
	return p;
}

void cnt_plan_free(cnt_plan *p)
{
	if (p != NULL)
		reg_free(p->reg);
}

/* ---- defaults ------------------------------------------------------- */

static int default_to_val(plan_reg *reg, json_t *j, const cnt_schema *r, cnt_val *out, int depth)
{
	memset(out, 0, sizeof(*out));
	out->type = (uint8_t)r->type;
	if (depth > 64)
		return -1;
	switch (r->type) {
	case CNT_T_NULL:
		return json_is_null(j) ? 0 : -1;
	case CNT_T_BOOLEAN:
		if (!json_is_boolean(j))
			return -1;
		out->u.i = json_is_true(j);
		return 0;
	case CNT_T_INT:
	case CNT_T_LONG:
		if (!json_is_integer(j))
			return -1;
		out->u.i = json_integer_value(j);
		if (r->type == CNT_T_INT && (out->u.i < INT32_MIN || out->u.i > INT32_MAX))
			return -1;
		return 0;
	case CNT_T_FLOAT:
	case CNT_T_DOUBLE:
		if (!json_is_number(j))
			return -1;
		out->u.d = json_number_value(j);
		return 0;
	case CNT_T_STRING:
	case CNT_T_BYTES:
	case CNT_T_FIXED: {
		const char *s = json_string_value(j);
		size_t n = json_string_length(j), o = 0;
		uint8_t *d;

		if (s == NULL)
			return -1;
		d = cnt_arena_alloc(&reg->perm, n + 1);
		if (d == NULL)
			return -1;
		if (r->type == CNT_T_STRING) {
			memcpy(d, s, n);
			o = n;
		} else {
			/* Avro's JSON form of bytes: code points U+0000..U+00FF. */
			for (size_t i = 0; i < n; i++) {
				unsigned char c = (unsigned char)s[i];

				if (c < 0x80)
					d[o++] = c;
				else if ((c == 0xc2 || c == 0xc3) && i + 1 < n)
					d[o++] = (uint8_t)(((c & 0x03) << 6) | ((unsigned char)s[++i] & 0x3f));
				else
					return -1;
			}
			if (r->type == CNT_T_FIXED && o != r->size)
				return -1;
		}
		out->u.s = d;
		out->n = (uint32_t)o;
		return 0;
	}
	case CNT_T_ENUM:
		if (!json_is_string(j))
			return -1;
		for (size_t i = 0; i < r->nsymbols; i++)
			if (strcmp(r->symbols[i], json_string_value(j)) == 0) {
				out->n = (uint32_t)i;
				return 0;
			}
		return -1;
	case CNT_T_ARRAY: {
		size_t i;
		json_t *v;

		if (!json_is_array(j))
			return -1;
		out->n = (uint32_t)json_array_size(j);
		out->u.v = cnt_arena_alloc(&reg->perm, (out->n + 1) * sizeof(cnt_val));
		if (out->u.v == NULL)
			return -1;
		json_array_foreach(j, i, v)
			if (default_to_val(reg, v, r->items, &out->u.v[i], depth + 1) != 0)
				return -1;
		return 0;
	}
	case CNT_T_MAP: {
		const char *k;
		json_t *v;
		size_t i = 0;

		if (!json_is_object(j))
			return -1;
		out->n = (uint32_t)json_object_size(j);
		out->u.v = cnt_arena_alloc(&reg->perm, (2 * out->n + 1) * sizeof(cnt_val));
		if (out->u.v == NULL)
			return -1;
		json_object_foreach(j, k, v) {
			size_t kn = strlen(k);
			uint8_t *d = cnt_arena_alloc(&reg->perm, kn + 1);

			if (d == NULL)
				return -1;
			memcpy(d, k, kn);
			out->u.v[2 * i].type = CNT_T_STRING;
			out->u.v[2 * i].u.s = d;
			out->u.v[2 * i].n = (uint32_t)kn;
			if (default_to_val(reg, v, r->items, &out->u.v[2 * i + 1], depth + 1) != 0)
				return -1;
			i++;
		}
		return 0;
	}
	case CNT_T_RECORD:
		if (!json_is_object(j))
			return -1;
		out->n = (uint32_t)r->nfields;
		out->u.v = cnt_arena_alloc(&reg->perm, (r->nfields + 1) * sizeof(cnt_val));
		if (out->u.v == NULL)
			return -1;
		for (size_t i = 0; i < r->nfields; i++) {
			json_t *fv = json_object_get(j, r->fields[i].name);

			if (fv == NULL)
				fv = r->fields[i].dflt;
			if (fv == NULL || default_to_val(reg, fv, r->fields[i].type, &out->u.v[i], depth + 1) != 0)
				return -1;
		}
		return 0;
	case CNT_T_UNION:
		/* Avro 1.11 says the first branch; later versions allow any.
		 * Accept the first branch that fits. */
		for (size_t i = 0; i < r->nbranches; i++) {
			cnt_val *v = cnt_arena_alloc(&reg->perm, sizeof(cnt_val));

			if (v == NULL)
				return -1;
			if (default_to_val(reg, j, r->branches[i], v, depth + 1) == 0) {
				out->type = CNT_T_UNION;
				out->n = (uint32_t)i;
				out->u.v = v;
				return 0;
			}
		}
		return -1;
	}
	return -1;
}

/* ---- decoding ------------------------------------------------------- */

static int truncated(cnt_err *err, const char *what)
{
	return cnt_err_set(err, "data ends inside a %s value", what);
}

int cnt_skip(const cnt_schema *w, cnt_cur *c, const cnt_limits *lim, int depth, cnt_err *err)
{
	int64_t n;
	const uint8_t *p;
	size_t len;

	if (depth > lim->max_depth)
		return cnt_err_set(err, "values nested deeper than %d levels (bound max_depth)", lim->max_depth);
	switch (w->type) {
	case CNT_T_NULL:
		return 0;
	case CNT_T_BOOLEAN:
		if (c->p >= c->end)
			return truncated(err, "boolean");
		c->p++;
		return 0;
	case CNT_T_INT:
	case CNT_T_LONG:
	case CNT_T_ENUM:
		return cnt_bin_read_long(c, &n) == 0 ? 0 : truncated(err, cnt_type_name(w->type));
	case CNT_T_FLOAT:
	case CNT_T_DOUBLE: {
		size_t sz = w->type == CNT_T_FLOAT ? 4 : 8;

		if ((size_t)(c->end - c->p) < sz)
			return truncated(err, cnt_type_name(w->type));
		c->p += sz;
		return 0;
	}
	case CNT_T_BYTES:
	case CNT_T_STRING:
		return cnt_bin_read_bytes(c, &p, &len) == 0 ? 0 : truncated(err, cnt_type_name(w->type));
	case CNT_T_FIXED:
		if ((size_t)(c->end - c->p) < w->size)
			return truncated(err, "fixed");
		c->p += w->size;
		return 0;
	case CNT_T_RECORD:
		for (size_t i = 0; i < w->nfields; i++)
			if (cnt_skip(w->fields[i].type, c, lim, depth + 1, err) != 0)
				return -1;
		return 0;
	case CNT_T_UNION:
		if (cnt_bin_read_long(c, &n) != 0)
			return truncated(err, "union");
		if (n < 0 || (uint64_t)n >= w->nbranches)
			return cnt_err_set(err, "union branch %lld out of range (the union has %zu)", (long long)n, w->nbranches);
		return cnt_skip(w->branches[n], c, lim, depth + 1, err);
	case CNT_T_ARRAY:
	case CNT_T_MAP: {
		size_t total = 0;

		for (;;) {
			if (cnt_bin_read_long(c, &n) != 0)
				return truncated(err, cnt_type_name(w->type));
			if (n == 0)
				return 0;
			if (n < 0) {
				int64_t bytes;

				/* A negative count is followed by the block's size
				 * in bytes, so the block can be skipped whole. */
				if (cnt_bin_read_long(c, &bytes) != 0 || bytes < 0 || bytes > c->end - c->p)
					return truncated(err, cnt_type_name(w->type));
				if (n == INT64_MIN)
					return cnt_err_set(err, "invalid %s block count", cnt_type_name(w->type));
				n = -n;
				total += (size_t)n;
				if (total > lim->max_collection)
					return cnt_err_set(err, "%s longer than %zu items (bound max_collection)", cnt_type_name(w->type), lim->max_collection);
				c->p += bytes;
				continue;
			}
			if ((uint64_t)n > lim->max_collection || total + (size_t)n > lim->max_collection)
				return cnt_err_set(err, "%s longer than %zu items (bound max_collection)", cnt_type_name(w->type), lim->max_collection);
			total += (size_t)n;
			for (int64_t i = 0; i < n; i++) {
				if (w->type == CNT_T_MAP && cnt_bin_read_bytes(c, &p, &len) != 0)
					return truncated(err, "map key");
				if (cnt_skip(w->items, c, lim, depth + 1, err) != 0)
					return -1;
			}
		}
	}
	}
	return cnt_err_set(err, "unknown type");
}

static int decode(const cnt_plan *p, cnt_cur *c, cnt_arena *a, const cnt_limits *lim,
	cnt_val *out, int depth, cnt_err *err);

static int read_prim(const cnt_plan *p, cnt_cur *c, const cnt_limits *lim, cnt_val *out, cnt_err *err)
{
	int64_t i;
	double d;
	float f;
	const uint8_t *s;
	size_t n;

	out->type = (uint8_t)p->rt;
	switch (p->wt) {
	case CNT_T_NULL:
		return 0;
	case CNT_T_BOOLEAN:
		if (c->p >= c->end)
			return truncated(err, "boolean");
		if (*c->p > 1)
			return cnt_err_set(err, "boolean byte is %u, not 0 or 1", *c->p);
		out->u.i = *c->p++;
		return 0;
	case CNT_T_INT:
	case CNT_T_LONG:
		if (cnt_bin_read_long(c, &i) != 0)
			return truncated(err, cnt_type_name(p->wt));
		if (p->wt == CNT_T_INT && (i < INT32_MIN || i > INT32_MAX))
			return cnt_err_set(err, "int value %lld out of range", (long long)i);
		if (p->rt == CNT_T_FLOAT) /* a float holds 24 bits: round as Java does */
			out->u.d = (double)(float)i;
		else if (p->rt == CNT_T_DOUBLE)
			out->u.d = (double)i;
		else
			out->u.i = i;
		return 0;
	case CNT_T_FLOAT:
		if (cnt_bin_read_float(c, &f) != 0)
			return truncated(err, "float");
		out->u.d = f;
		return 0;
	case CNT_T_DOUBLE:
		if (cnt_bin_read_double(c, &d) != 0)
			return truncated(err, "double");
		out->u.d = d;
		return 0;
	case CNT_T_BYTES:
	case CNT_T_STRING:
		if (cnt_bin_read_bytes(c, &s, &n) != 0) {
			int64_t claimed;
			cnt_cur probe = *c;

			if (cnt_bin_read_long(&probe, &claimed) == 0 && claimed > 0)
				return cnt_err_set(err, "%s length %lld runs past the end of the block (%zu bytes left)",
					cnt_type_name(p->wt), (long long)claimed, (size_t)(probe.end - probe.p));
			return truncated(err, cnt_type_name(p->wt));
		}
		if (n > lim->max_string)
			return cnt_err_set(err, "%s of %zu bytes exceeds the %zu-byte bound (max_string)",
				cnt_type_name(p->wt), n, lim->max_string);
		out->u.s = s;
		out->n = (uint32_t)n;
		return 0;
	default:
		return cnt_err_set(err, "internal: not a primitive");
	}
}

static int decode_items(const cnt_plan *p, cnt_cur *c, cnt_arena *a, const cnt_limits *lim,
	cnt_val *out, int depth, cnt_err *err)
{
	int map = p->op == P_MAP;
	size_t total = 0, cap = 0;
	cnt_val *v = NULL;

	out->type = (uint8_t)p->rt;
	out->n = 0;
	out->u.v = NULL;
	for (;;) {
		int64_t n;

		if (cnt_bin_read_long(c, &n) != 0)
			return truncated(err, map ? "map" : "array");
		if (n == 0)
			break;
		if (n < 0) {
			int64_t bytes;

			if (n == INT64_MIN || cnt_bin_read_long(c, &bytes) != 0 || bytes < 0)
				return truncated(err, map ? "map" : "array");
			n = -n;
		}
		if ((uint64_t)n > lim->max_collection - total)
			return cnt_err_set(err, "%s longer than %zu items (bound max_collection)",
				map ? "map" : "array", lim->max_collection);
		if (total + (size_t)n > cap) {
			size_t ncap = cap ? cap * 2 : 8;
			cnt_val *nv;

			while (ncap < total + (size_t)n)
				ncap *= 2;
			nv = cnt_arena_alloc(a, ncap * (map ? 2 : 1) * sizeof(cnt_val));
			if (nv == NULL)
				return cnt_err_oom(err, "decoding a %zu-item %s", ncap, map ? "map" : "array");
			if (total)
				memcpy(nv, v, total * (map ? 2 : 1) * sizeof(cnt_val));
			v = nv;
			cap = ncap;
		}
		for (int64_t i = 0; i < n; i++, total++) {
			cnt_val *dst = map ? &v[2 * total] : &v[total];

			if (map) {
				const uint8_t *s;
				size_t len;

				if (cnt_bin_read_bytes(c, &s, &len) != 0)
					return truncated(err, "map key");
				if (len > lim->max_string)
					return cnt_err_set(err, "map key of %zu bytes exceeds the %zu-byte bound (max_string)", len, lim->max_string);
				dst->type = CNT_T_STRING;
				dst->u.s = s;
				dst->n = (uint32_t)len;
				dst++;
			}
			if (decode(p->sub, c, a, lim, dst, depth + 1, err) != 0)
				return -1;
		}
	}
	out->n = (uint32_t)total;
	out->u.v = v;
	return 0;
}

static int decode(const cnt_plan *p, cnt_cur *c, cnt_arena *a, const cnt_limits *lim,
	cnt_val *out, int depth, cnt_err *err)
{
	int64_t n;

	if (depth > lim->max_depth)
		return cnt_err_set(err, "values nested deeper than %d levels (bound max_depth)", lim->max_depth);
	switch (p->op) {
	case P_READ:
		return read_prim(p, c, lim, out, err);
	case P_FIXED:
		if ((size_t)(c->end - c->p) < p->w->size)
			return truncated(err, "fixed");
		out->type = CNT_T_FIXED;
		out->u.s = c->p;
		out->n = (uint32_t)p->w->size;
		c->p += p->w->size;
		return 0;
	case P_ENUM:
		if (cnt_bin_read_long(c, &n) != 0)
			return truncated(err, "enum");
		if (n < 0 || (uint64_t)n >= p->w->nsymbols)
			return cnt_err_set(err, "enum index %lld out of range for '%s' (%zu symbols)",
				(long long)n, p->w->fullname, p->w->nsymbols);
		if (p->enum_map[n] < 0)
			return cnt_err_set(err, "enum symbol '%s' is not in the reader's '%s', which has no default",
				p->w->symbols[n], p->r->fullname);
		out->type = CNT_T_ENUM;
		out->n = (uint32_t)p->enum_map[n];
		return 0;
	case P_ARRAY:
	case P_MAP:
		return decode_items(p, c, a, lim, out, depth, err);
	case P_RECORD: {
		const cnt_schema *r = p->r;
		cnt_val *f = cnt_arena_alloc(a, (r->nfields + 1) * sizeof(cnt_val));

		if (f == NULL)
			return cnt_err_oom(err, "decoding record '%s'", r->fullname);
		for (size_t i = 0; i < p->nsteps; i++) {
			const step *s = &p->steps[i];

			if (s->rindex < 0) {
				if (cnt_skip(s->skip, c, lim, depth + 1, err) != 0)
					return cnt_err_prefix(err, "field '%s'", p->w->fields[i].name);
			} else if (decode(s->sub, c, a, lim, &f[s->rindex], depth + 1, err) != 0) {
				return cnt_err_prefix(err, "field '%s'", r->fields[s->rindex].name);
			}
		}
		for (size_t i = 0; i < r->nfields; i++)
			if (p->has_default[i])
				f[i] = p->defaults[i];
		out->type = CNT_T_RECORD;
		out->n = (uint32_t)r->nfields;
		out->u.v = f;
		return 0;
	}
	case P_WUNION:
		if (cnt_bin_read_long(c, &n) != 0)
			return truncated(err, "union");
		if (n < 0 || (uint64_t)n >= p->nwb)
			return cnt_err_set(err, "union branch %lld out of range (the union has %zu)", (long long)n, p->nwb);
		return decode(p->wb[n], c, a, lim, out, depth + 1, err);
	case P_RUNION: {
		cnt_val *v = cnt_arena_alloc(a, sizeof(cnt_val));

		if (v == NULL)
			return cnt_err_nomem(err);
		if (decode(p->sub, c, a, lim, v, depth + 1, err) != 0)
			return -1;
		out->type = CNT_T_UNION;
		out->n = (uint32_t)p->rbranch;
		out->u.v = v;
		return 0;
	}
	case P_FAIL:
		return cnt_err_set(err, "%s", p->fail_msg);
	}
	return cnt_err_set(err, "internal: bad plan");
}

int cnt_plan_decode(const cnt_plan *p, cnt_cur *c, cnt_arena *a,
	const cnt_limits *lim, cnt_val *out, cnt_err *err)
{
	return decode(p, c, a, lim, out, 0, err);
}
