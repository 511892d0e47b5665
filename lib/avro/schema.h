/*
 * schema.h - Avro schemas, parsed from their JSON form (Avro 1.11
 * specification, "Schema Declaration").
 *
 * A parsed schema is a graph of cnt_schema nodes owned by one
 * cnt_avro_schema handle: named types (record, enum, fixed) are stored once
 * and every reference points at the same node, so recursive types are
 * cycles.  Nothing here is global: two handles share no state.
 *
 * libavro-c 1.11 could parse schemas, but its avro_schema_to_json drops
 * logicalType, doc and default, and we need all three (defaults drive
 * schema resolution; logicalType drives readable timestamps), so the
 * parser is ours, over jansson.
 */
#ifndef CNT_SCHEMA_H
#define CNT_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"

typedef enum cnt_type {
	CNT_T_NULL, CNT_T_BOOLEAN, CNT_T_INT, CNT_T_LONG, CNT_T_FLOAT,
	CNT_T_DOUBLE, CNT_T_BYTES, CNT_T_STRING, CNT_T_RECORD, CNT_T_ENUM,
	CNT_T_ARRAY, CNT_T_MAP, CNT_T_UNION, CNT_T_FIXED
} cnt_type;

typedef enum cnt_logical {
	CNT_LT_NONE, CNT_LT_TIMESTAMP_MILLIS, CNT_LT_TIMESTAMP_MICROS,
	CNT_LT_LOCAL_TIMESTAMP_MILLIS, CNT_LT_LOCAL_TIMESTAMP_MICROS, CNT_LT_DATE
} cnt_logical;

typedef struct cnt_schema cnt_schema;

typedef struct cnt_field {
	char *name;
	cnt_schema *type;
	json_t *dflt;         /* the default as JSON, or NULL when none */
	char **aliases;
	size_t naliases;
} cnt_field;

struct cnt_schema {
	cnt_type type;
	cnt_logical logical;
	char *fullname;       /* named types only */
	char **aliases;       /* named types: full names */
	size_t naliases;
	cnt_field *fields;    /* record */
	size_t nfields;
	char **symbols;       /* enum */
	size_t nsymbols;
	int enum_default;     /* enum: index of the default symbol, or -1 */
	cnt_schema *items;    /* array items, map values */
	cnt_schema **branches; /* union */
	size_t nbranches;
	size_t size;          /* fixed */
	int min_state;        /* internal: 0 unknown, 1 being computed, 2 known */
	size_t min_size;      /* internal: cnt_schema_min_size cache */
};

typedef struct cnt_avro_schema {
	cnt_schema *root;
	char *json;           /* the text it was parsed from, NUL-terminated */
	size_t json_len;
	/* private */
	cnt_schema **nodes;
	size_t nnodes, cap;
} cnt_avro_schema;

/* Parses an Avro schema from JSON text of n bytes.  Returns a handle the
 * caller frees with cnt_avro_schema_free(), or NULL with err set (the
 * message names the JSON path of the problem). */
cnt_avro_schema *cnt_avro_schema_parse(const char *json, size_t n, cnt_err *err);
void cnt_avro_schema_free(cnt_avro_schema *s);

/* Appends the Parsing Canonical Form (specification, "Parsing Canonical
 * Form for Schemas") of s to out.  Two schemas with the same canonical form
 * encode data identically.  Returns 0, or -1 when out of memory. */
int cnt_schema_canonical(const cnt_schema *s, cnt_buf *out);

/* Returns the JSON text json (NUL-terminated) rewritten compactly, keys in
 * their order: what our writers put in avro.schema.  The caller frees it.
 * NULL with err set when it is not JSON or memory runs out. */
char *cnt_schema_compact(const char *json, cnt_err *err);

/* Returns the type's name as the specification spells it ("long",
 * "record", ...). */
const char *cnt_type_name(cnt_type t);

/* Returns the index of the record field called name, or -1. */
int cnt_schema_field_index(const cnt_schema *rec, const char *name);

/* Returns the smallest number of bytes one value of s can take (0 for
 * null, 1 for an int, ...); used to reject blocks that claim more records
 * than their bytes can hold. */
size_t cnt_schema_min_size(const cnt_schema *s);

#endif
