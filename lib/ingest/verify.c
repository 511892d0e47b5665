/*
 * verify.c - the keyring and signature verdicts (verify.h).
 *
 * The keyring is small (a few keys per tenant): it is kept as arrays and
 * searched linearly.  Ed25519 verification is libsodium's (sigform.c).
 */
#include "ingest/verify.h"
#include "base/jsonload.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/text.h"
#include "time/timefmt.h"

#define KEYRING_FILE_MAX (16u << 20)
#define TENANT_MAX 128

typedef struct kr_tenant {
	const char *tenant_id;
	size_t n;                     /* bytes of tenant_id */
	cnt_key *keys;
	size_t nkeys;
} kr_tenant;

struct cnt_keyring {
	json_t *root;                 /* strings point into it */
	kr_tenant *tenants;
	size_t ntenants, nkeys;
};

typedef struct pctx {
	const char *name;
	cnt_err *err;
} pctx;

static int fail(const pctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(const pctx *c, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cnt_err_set(c->err, "keyring '%s': %s: %s", c->name, path, msg);
}

static const char *jtype(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE: case JSON_FALSE: return "boolean";
	default: return "null";
	}
}

/* Refuses any key of obj not in allowed (NULL-terminated). */
static int only_keys(const pctx *c, json_t *obj, const char *path, const char *const *allowed, const char *list)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v) {
		size_t i;

		for (i = 0; allowed[i] && strcmp(allowed[i], key) != 0; i++)
			;
		if (allowed[i] == NULL)
			return fail(c, path, "unknown key '%.64s' (expected %s)", key, list);
	}
	return 0;
}

/* obj[key] as a string of 1..max bytes without control characters; NULL
 * absent (when !required). */
static int get_str(const pctx *c, json_t *obj, const char *path, const char *key, int required,
	size_t max, const char **out, size_t *len)
{
	json_t *v = json_object_get(obj, key);
	char p[160];
	size_t n;

	*out = NULL;
	snprintf(p, sizeof(p), "%s.%s", path, key);
	if (v == NULL) {
		if (required)
			return fail(c, p, "required");
		return 0;
	}
	if (!json_is_string(v))
		return fail(c, p, "expected a string, got %s", jtype(v));
	n = json_string_length(v);
	if (n < 1 || n > max)
		return fail(c, p, "is %zu bytes long; it must be 1 to %zu", n, max);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)json_string_value(v)[i] < 0x20)
			return fail(c, p, "contains a control character at byte %zu", i);
	*out = json_string_value(v);
	if (len)
		*len = n;
	return 0;
}

static int get_time(const pctx *c, json_t *obj, const char *path, const char *key, int required, int64_t *ms)
{
	const char *s;
	size_t n = 0;
	char p[160];

	if (get_str(c, obj, path, key, required, 64, &s, &n) != 0)
		return -1;
	if (s == NULL)
		return 1;
	snprintf(p, sizeof(p), "%s.%s", path, key);
	if (cnt_time_parse_rfc3339(s, n, ms) != 0)
		return fail(c, p, "'%s' is not an RFC 3339 time with offset (e.g. 2026-01-01T00:00:00Z)", s);
	return 0;
}

static int parse_key(const pctx *c, json_t *o, const char *path, kr_tenant *t, cnt_key *k)
{
	static const char *const allowed[] = {"key_id", "public_key", "origins", "valid_from", "valid_until",
		"revoked_at", NULL};
	const char *pk;
	size_t n = 0;
	json_t *orig, *v;
	char p[128];
	size_t i;
	int rc;

	if (!json_is_object(o))
		return fail(c, path, "expected an object, got %s", jtype(o));
	if (only_keys(c, o, path, allowed, "key_id, public_key, origins, valid_from, valid_until, revoked_at") ||
	    get_str(c, o, path, "key_id", 1, CNT_SIG_KEYID_MAX, &k->key_id, &n))
		return -1;
	snprintf(p, sizeof(p), "%s.key_id", path);
	if (!cnt_sig_keyid_ok(k->key_id, n))
		return fail(c, p, "'%s': a key id is 1 to %d characters of A-Z a-z 0-9 . _ -", k->key_id,
			CNT_SIG_KEYID_MAX);
	for (i = 0; i < t->nkeys; i++)
		if (strcmp(t->keys[i].key_id, k->key_id) == 0)
			return fail(c, p, "'%s' is registered twice for tenant '%s'", k->key_id, t->tenant_id);
	if (get_str(c, o, path, "public_key", 1, 256, &pk, &n))
		return -1;
	snprintf(p, sizeof(p), "%s.public_key", path);
	if (cnt_sig_b64_decode(pk, n, k->public_key, CNT_SIG_PUBLIC_BYTES) != 0)
		return fail(c, p, "expected an Ed25519 public key: %d bytes in base64 (44 characters, padded)",
			CNT_SIG_PUBLIC_BYTES);
	snprintf(p, sizeof(p), "%s.origins", path);
	if ((orig = json_object_get(o, "origins")) == NULL)
		return fail(c, p, "required (a list of \"client\", \"backend\")");
	if (!json_is_array(orig) || json_array_size(orig) == 0)
		return fail(c, p, "expected a non-empty array of \"client\", \"backend\"");
	json_array_foreach(orig, i, v) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";
		int bit = strcmp(s, "client") == 0 ? CNT_KEY_ORIGIN_CLIENT : strcmp(s, "backend") == 0 ?
			CNT_KEY_ORIGIN_BACKEND : 0;
		char q[160];

		snprintf(q, sizeof(q), "%s[%zu]", p, i);
		if (bit == 0 || json_string_length(v) != strlen(s))
			return fail(c, q, "expected \"client\" or \"backend\"");
		if (k->origins & bit)
			return fail(c, q, "\"%s\" is listed twice", s);
		k->origins |= bit;
	}
	if (get_time(c, o, path, "valid_from", 1, &k->valid_from_ms) < 0)
		return -1;
	if ((rc = get_time(c, o, path, "valid_until", 0, &k->valid_until_ms)) < 0)
		return -1;
	if (rc == 1)
		k->valid_until_ms = INT64_MAX;
	else if (k->valid_until_ms <= k->valid_from_ms)
		return snprintf(p, sizeof(p), "%s.valid_until", path),
			fail(c, p, "must be later than valid_from");
	if ((rc = get_time(c, o, path, "revoked_at", 0, &k->revoked_at_ms)) < 0)
		return -1;
	if (rc == 1)
		k->revoked_at_ms = INT64_MAX;
	return 0;
}

static int parse_tenant(const pctx *c, json_t *o, const char *path, cnt_keyring *kr, kr_tenant *t)
{
	static const char *const allowed[] = {"tenant_id", "keys", NULL};
	json_t *keys, *v;
	char p[64];
	size_t i;

	if (!json_is_object(o))
		return fail(c, path, "expected an object, got %s", jtype(o));
	if (only_keys(c, o, path, allowed, "tenant_id, keys") ||
	    get_str(c, o, path, "tenant_id", 1, TENANT_MAX, &t->tenant_id, &t->n))
		return -1;
	snprintf(p, sizeof(p), "%s.tenant_id", path);
	for (i = 0; i < kr->ntenants; i++)
		if (kr->tenants[i].n == t->n && memcmp(kr->tenants[i].tenant_id, t->tenant_id, t->n) == 0)
			return fail(c, p, "tenant '%s' is listed twice", t->tenant_id);
	snprintf(p, sizeof(p), "%s.keys", path);
	if ((keys = json_object_get(o, "keys")) == NULL)
		return fail(c, p, "required");
	if (!json_is_array(keys))
		return fail(c, p, "expected an array, got %s", jtype(keys));
	if (json_array_size(keys) > 0 && (t->keys = calloc(json_array_size(keys), sizeof(cnt_key))) == NULL)
		return cnt_err_oom(c->err, "reading keyring '%s'", c->name);
	json_array_foreach(keys, i, v) {
		char q[96];

		snprintf(q, sizeof(q), "%s[%zu]", p, i);
		if (parse_key(c, v, q, t, &t->keys[t->nkeys]) != 0)
			return -1;
		t->nkeys++;
		kr->nkeys++;
	}
	return 0;
}

cnt_keyring *cnt_keyring_parse(const char *text, size_t n, const char *name, cnt_err *err)
{
	static const char *const allowed[] = {"tenants", NULL};
	pctx c = {name, err};
	cnt_keyring *kr = calloc(1, sizeof(*kr));
	json_error_t je;
	json_t *ts, *v;
	size_t i;

	if (kr == NULL) {
		cnt_err_oom(err, "reading keyring '%s'", name);
		return NULL;
	}
	if ((kr->root = cnt_json_loadb(text, n, JSON_REJECT_DUPLICATES, &je)) == NULL) {
		if (cnt_json_oom(&je))
			cnt_err_oom(err, "reading keyring '%s'", name);
		else
			cnt_err_set(err, "keyring '%s': line %d column %d: %s", name, je.line, je.column, je.text);
		goto fail;
	}
	if (!json_is_object(kr->root)) {
		fail(&c, "$", "expected an object, got %s", jtype(kr->root));
		goto fail;
	}
	if (only_keys(&c, kr->root, "$", allowed, "tenants") != 0)
		goto fail;
	if ((ts = json_object_get(kr->root, "tenants")) == NULL) {
		fail(&c, "$.tenants", "required");
		goto fail;
	}
	if (!json_is_array(ts)) {
		fail(&c, "$.tenants", "expected an array, got %s", jtype(ts));
		goto fail;
	}
	if (json_array_size(ts) > 0 && (kr->tenants = calloc(json_array_size(ts), sizeof(kr_tenant))) == NULL) {
		cnt_err_oom(err, "reading keyring '%s'", name);
		goto fail;
	}
	json_array_foreach(ts, i, v) {
		char p[32];

		snprintf(p, sizeof(p), "$.tenants[%zu]", i);
		if (parse_tenant(&c, v, p, kr, &kr->tenants[kr->ntenants]) != 0) {
			kr->ntenants++;          /* its keys are freed */
			goto fail;
		}
		kr->ntenants++;
	}
	return kr;
fail:
	cnt_keyring_free(kr);
	return NULL;
}

cnt_keyring *cnt_keyring_load(const char *path, cnt_err *err)
{
	cnt_buf b = CNT_BUF_INIT;
	cnt_keyring *k = NULL;
	FILE *f = fopen(path, "rb");
	size_t got;

	if (f == NULL) {
		cnt_err_set(err, "keyring '%s': %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (cnt_buf_reserve(&b, 65536) != 0) {
			cnt_err_oom(err, "reading keyring '%s'", path);
			goto out;
		}
		got = fread(b.p + b.len, 1, b.cap - b.len, f);
		b.len += got;
		if (b.len > KEYRING_FILE_MAX) {
			cnt_err_set(err, "keyring '%s': larger than %u MiB", path, KEYRING_FILE_MAX >> 20);
			goto out;
		}
		if (got == 0)
			break;
	}
	if (ferror(f))
		cnt_err_set(err, "keyring '%s': read error: %s", path, strerror(errno));
	else
		k = cnt_keyring_parse((const char *)b.p, b.len, path, err);
out:
	fclose(f);
	cnt_buf_release(&b);
	return k;
}

void cnt_keyring_free(cnt_keyring *k)
{
	if (k == NULL)
		return;
	for (size_t i = 0; i < k->ntenants; i++)
		free(k->tenants[i].keys);
	free(k->tenants);
	json_decref(k->root);
	free(k);
}

const cnt_key *cnt_keyring_find(const cnt_keyring *k, const char *tenant, size_t n, const char *key_id)
{
	if (k == NULL)
		return NULL;
	for (size_t i = 0; i < k->ntenants; i++) {
		const kr_tenant *t = &k->tenants[i];

		if (t->n != n || memcmp(t->tenant_id, tenant, n) != 0)
			continue;
		for (size_t j = 0; j < t->nkeys; j++)
			if (strcmp(t->keys[j].key_id, key_id) == 0)
				return &t->keys[j];
		return NULL;
	}
	return NULL;
}

size_t cnt_keyring_ntenants(const cnt_keyring *k)
{
	return k ? k->ntenants : 0;
}

size_t cnt_keyring_nkeys(const cnt_keyring *k)
{
	return k ? k->nkeys : 0;
}

#define SHOW(s) CNT_CUT(s, 64)   /* a name from the input, cut whole */

cnt_sig_status cnt_verify_event(const cnt_keyring *k, const cnt_raw_event *e, int64_t now_ms,
	char *why, size_t why_n)
{
	int client = e->has_origin && e->origin == CNT_ORIGIN_CLIENT;
	const char *oname = client ? "client" : "backend";
	char keyid[CNT_SIG_KEYID_MAX + 1], t1[32], t2[32];
	unsigned char sig[CNT_SIG_BYTES];
	const cnt_key *key;
	int ok;

	if (e->signature.p == NULL) {
		if (!client)
			return CNT_SIG_OK;
		snprintf(why, why_n, "a client-origin event must be signed (field 'signature', cnt-keyring(5))");
		return CNT_SIG_UNSIGNED;
	}
	if (cnt_sig_parse(e->signature.p, e->signature.n, keyid, sig, why, why_n) != 0)
		return CNT_SIG_BAD;
	if (k == NULL) {
		snprintf(why, why_n, "key '%s' is unknown: no keyring was given (--keyring)", keyid);
		return CNT_SIG_UNKNOWN_KEY;
	}
	if ((key = cnt_keyring_find(k, e->tenant_id.p, e->tenant_id.n, keyid)) == NULL) {
		snprintf(why, why_n, "tenant '%.*s%s' registered no key '%s'", SHOW(e->tenant_id), keyid);
		return CNT_SIG_UNKNOWN_KEY;
	}
	if (!(key->origins & (client ? CNT_KEY_ORIGIN_CLIENT : CNT_KEY_ORIGIN_BACKEND))) {
		snprintf(why, why_n, "key '%s' of tenant '%.*s%s' is not registered for %s-origin events",
			keyid, SHOW(e->tenant_id), oname);
		return CNT_SIG_UNKNOWN_KEY;
	}
	if ((ok = cnt_sig_check(key->public_key, e, sig)) < 0) {
		snprintf(why, why_n, "out of memory");
		return CNT_SIG_NOMEM;
	}
	if (!ok) {
		snprintf(why, why_n, "the signature does not verify under key '%s' (an event field was changed "
			"after signing, or another key signed it)", keyid);
		return CNT_SIG_BAD;
	}
	if (now_ms >= key->revoked_at_ms) {
		cnt_time_format_rfc3339(key->revoked_at_ms, t1);
		snprintf(why, why_n, "key '%s' of tenant '%.*s%s' was revoked at %s", keyid, SHOW(e->tenant_id), t1);
		return CNT_SIG_REVOKED;
	}
	if (e->event_time_ms < key->valid_from_ms || e->event_time_ms >= key->valid_until_ms) {
		cnt_time_format_rfc3339(key->valid_from_ms, t1);
		if (key->valid_until_ms == INT64_MAX)
			snprintf(t2, sizeof(t2), "(open)");
		else
			cnt_time_format_rfc3339(key->valid_until_ms, t2);
		snprintf(why, why_n, "event_time is outside key '%s''s validity [%s, %s)", keyid, t1, t2);
		return CNT_SIG_EXPIRED;
	}
	return CNT_SIG_OK;
}
