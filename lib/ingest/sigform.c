/*
 * sigform.c - canonical bytes, signature fields and key files (sigform.h).
 *
 * The cryptography is libsodium's (Ed25519, crypto_sign_*); nothing here
 * computes a signature by hand.
 */
#include "ingest/sigform.h"
#include "base/jsonload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sodium.h>

static size_t put_str(unsigned char *buf, size_t cap, size_t at, cnt_slice s)
{
	if (s.p == NULL) {
		if (at < cap)
			buf[at] = 0;
		return at + 1;
	}
	if (at + 5 + s.n <= cap) {
		buf[at] = 1;
		buf[at + 1] = (unsigned char)(s.n >> 24);
		buf[at + 2] = (unsigned char)(s.n >> 16);
		buf[at + 3] = (unsigned char)(s.n >> 8);
		buf[at + 4] = (unsigned char)s.n;
		if (s.n > 0)
			memcpy(buf + at + 5, s.p, s.n);
	}
	return at + 5 + s.n;
}

static size_t put_i64(unsigned char *buf, size_t cap, size_t at, int present, int64_t v)
{
	uint64_t u = (uint64_t)v;

	if (!present) {
		if (at < cap)
			buf[at] = 0;
		return at + 1;
	}
	if (at + 9 <= cap) {
		buf[at] = 1;
		for (int i = 0; i < 8; i++)
			buf[at + 1 + i] = (unsigned char)(u >> (56 - 8 * i));
	}
	return at + 9;
}

size_t cnt_sig_canonical(const cnt_raw_event *e, unsigned char *buf, size_t cap)
{
	size_t at = sizeof(CNT_SIG_TAG);      /* with its NUL */

	if (at <= cap)
		memcpy(buf, CNT_SIG_TAG, at);
	at = put_str(buf, cap, at, e->tenant_id);
	at = put_str(buf, cap, at, e->counter_id);
	at = put_str(buf, cap, at, e->member_ref);
	at = put_str(buf, cap, at, e->subject);
	at = put_i64(buf, cap, at, e->has_delta, e->delta);
	at = put_str(buf, cap, at, e->item);
	at = put_i64(buf, cap, at, e->has_event_time, e->event_time_ms);
	at = put_str(buf, cap, at, e->idempotency_key);
	return at;
}

int cnt_sig_keyid_ok(const char *id, size_t n)
{
	if (n < 1 || n > CNT_SIG_KEYID_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

int cnt_sig_b64_decode(const char *s, size_t n, unsigned char *out, size_t want)
{
	size_t got = 0;
	const char *end = NULL;

	if (n != 4 * ((want + 2) / 3))
		return -1;
	if (sodium_base642bin(out, want, s, n, NULL, &got, &end, sodium_base64_VARIANT_ORIGINAL) != 0)
		return -1;
	return got == want && end == s + n ? 0 : -1;
}

char *cnt_sig_b64_encode(const unsigned char *p, size_t n, char *out, size_t out_n)
{
	return sodium_bin2base64(out, out_n, p, n, sodium_base64_VARIANT_ORIGINAL);
}

int cnt_sig_parse(const char *s, size_t n, char keyid[CNT_SIG_KEYID_MAX + 1],
	unsigned char sig[CNT_SIG_BYTES], char *why, size_t why_n)
{
	const char *id, *colon;
	size_t idn;

	if (n < 8 || memcmp(s, "ed25519:", 8) != 0) {
		snprintf(why, why_n, "signature does not start with 'ed25519:'");
		return -1;
	}
	id = s + 8;
	colon = memchr(id, ':', n - 8);
	if (colon == NULL) {
		snprintf(why, why_n, "signature has no ':' after its key id");
		return -1;
	}
	idn = (size_t)(colon - id);
	if (!cnt_sig_keyid_ok(id, idn)) {
		snprintf(why, why_n, "signature's key id is not 1 to %d characters of A-Z a-z 0-9 . _ -",
			CNT_SIG_KEYID_MAX);
		return -1;
	}
	if (cnt_sig_b64_decode(colon + 1, n - (size_t)(colon + 1 - s), sig, CNT_SIG_BYTES) != 0) {
		snprintf(why, why_n, "signature of key '%.*s' is not %d bytes in base64 (88 characters, padded)",
			(int)idn, id, CNT_SIG_BYTES);
		return -1;
	}
	memcpy(keyid, id, idn);
	keyid[idn] = 0;
	return 0;
}

int cnt_sig_key_from_seed(cnt_sig_key *k, const unsigned char seed[CNT_SIG_SEED_BYTES], cnt_err *err)
{
	if (sodium_init() < 0)
		return cnt_err_set(err, "libsodium cannot be initialised");
	memcpy(k->seed, seed, CNT_SIG_SEED_BYTES);
	crypto_sign_seed_keypair(k->public_key, k->secret, k->seed);
	return 0;
}

int cnt_sig_key_parse(cnt_sig_key *k, const char *text, size_t n, const char *name, cnt_err *err)
{
	json_error_t je;
	json_t *root = cnt_json_loadb(text, n, JSON_REJECT_DUPLICATES, &je), *v;
	const char *key;
	const char *tid = NULL, *kid = NULL, *seed = NULL;
	unsigned char sd[CNT_SIG_SEED_BYTES];
	int rc = -1;

	memset(k, 0, sizeof(*k));
	if (root == NULL) {
		if (cnt_json_oom(&je))
			return cnt_err_oom(err, "reading key file '%s'", name);
		return cnt_err_set(err, "key file '%s': line %d column %d: %s", name, je.line, je.column, je.text);
	}
	if (!json_is_object(root)) {
		cnt_err_set(err, "key file '%s': $: expected an object", name);
		goto out;
	}
	json_object_foreach(root, key, v) {
		const char **slot = strcmp(key, "tenant_id") == 0 ? &tid : strcmp(key, "key_id") == 0 ? &kid
			: strcmp(key, "seed") == 0 ? &seed : NULL;

		if (slot == NULL) {
			cnt_err_set(err, "key file '%s': $.%.64s: unknown key (expected tenant_id, key_id, seed)", name, key);
			goto out;
		}
		if (!json_is_string(v)) {
			cnt_err_set(err, "key file '%s': $.%s: expected a string", name, key);
			goto out;
		}
		*slot = json_string_value(v);
	}
	if (tid == NULL || kid == NULL || seed == NULL) {
		cnt_err_set(err, "key file '%s': $.%s: required", name, tid == NULL ? "tenant_id" : kid == NULL ? "key_id" : "seed");
		goto out;
	}
	if (*tid == 0 || strlen(tid) > 128 || strlen(tid) != json_string_length(json_object_get(root, "tenant_id"))) {
		cnt_err_set(err, "key file '%s': $.tenant_id: must be 1 to 128 bytes without NUL", name);
		goto out;
	}
	if (!cnt_sig_keyid_ok(kid, json_string_length(json_object_get(root, "key_id")))) {
		cnt_err_set(err, "key file '%s': $.key_id: must be 1 to %d characters of A-Z a-z 0-9 . _ -",
			name, CNT_SIG_KEYID_MAX);
		goto out;
	}
	if (cnt_sig_b64_decode(seed, json_string_length(json_object_get(root, "seed")), sd, sizeof(sd)) != 0) {
		cnt_err_set(err, "key file '%s': $.seed: expected %d bytes in base64 (44 characters, padded)",
			name, CNT_SIG_SEED_BYTES);
		goto out;
	}
	strcpy(k->tenant_id, tid);
	strcpy(k->key_id, kid);
	rc = cnt_sig_key_from_seed(k, sd, err);
	sodium_memzero(sd, sizeof(sd));
out:
	json_decref(root);
	return rc;
}

/* s as a JSON string body: the ids are validated, but a tenant id may hold
 * '"', '\\' or control characters. */
static size_t json_esc(char *out, size_t cap, const char *s)
{
	size_t o = 0;

	for (; *s && o + 7 < cap; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20) {
			o += (size_t)snprintf(out + o, cap - o, "\\u%04x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = 0;
	return o;
}

void cnt_sig_key_format(const cnt_sig_key *k, char buf[1024])
{
	char t[129 * 6 + 1], s[64];

	json_esc(t, sizeof(t), k->tenant_id);
	cnt_sig_b64_encode(k->seed, sizeof(k->seed), s, sizeof(s));
	snprintf(buf, 1024, "{\"tenant_id\": \"%s\", \"key_id\": \"%s\", \"seed\": \"%s\"}\n", t, k->key_id, s);
}

/* e's canonical bytes in stack (cap bytes) or on the heap; NULL when out
 * of memory.  Free with free() when != stack. */
static unsigned char *canon(const cnt_raw_event *e, unsigned char *stack, size_t cap, size_t *n)
{
	unsigned char *p = stack;

	*n = cnt_sig_canonical(e, stack, cap);
	if (*n > cap) {
		if ((p = malloc(*n)) == NULL)
			return NULL;
		cnt_sig_canonical(e, p, *n);
	}
	return p;
}

int cnt_sig_sign(const cnt_sig_key *k, const cnt_raw_event *e, char field[CNT_SIG_FIELD_MAX])
{
	unsigned char stack[2048], sig[CNT_SIG_BYTES], *p;
	size_t n, at;

	if ((p = canon(e, stack, sizeof(stack), &n)) == NULL)
		return -1;
	crypto_sign_detached(sig, NULL, p, n, k->secret);
	if (p != stack)
		free(p);
	at = (size_t)snprintf(field, CNT_SIG_FIELD_MAX, "ed25519:%s:", k->key_id);
	cnt_sig_b64_encode(sig, sizeof(sig), field + at, CNT_SIG_FIELD_MAX - at);
	return 0;
}

int cnt_sig_check(const unsigned char pk[CNT_SIG_PUBLIC_BYTES], const cnt_raw_event *e,
	const unsigned char sig[CNT_SIG_BYTES])
{
	unsigned char stack[2048], *p;
	size_t n;
	int ok;

	if ((p = canon(e, stack, sizeof(stack), &n)) == NULL)
		return -1;
	ok = crypto_sign_verify_detached(sig, p, n, pk) == 0;
	if (p != stack)
		free(p);
	return ok;
}

int cnt_sig_sign_line(cnt_jsonl *p, const cnt_sig_key *k, const char *line, size_t n,
	cnt_buf *out, cnt_err *err)
{
	char field[CNT_SIG_FIELD_MAX], *text;
	cnt_raw_event ev;
	cnt_raw_problem pb;
	json_error_t je;
	json_t *root;
	size_t i;
	int rc;

	for (i = 0; i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'); i++)
		;
	if (i == n)
		return 0;
	switch (cnt_jsonl_parse(p, line, n, &ev, &pb)) {
	case CNT_RAW_OK: break;
	case CNT_RAW_NOMEM: return cnt_err_nomem(err);
	default: return cnt_err_set(err, "%s", pb.msg);
	}
	if (ev.tenant_id.p == NULL || ev.tenant_id.n != strlen(k->tenant_id) ||
	    memcmp(ev.tenant_id.p, k->tenant_id, ev.tenant_id.n) != 0)
		return cnt_err_set(err, "tenant_id is not '%s', the tenant of key '%s'", k->tenant_id, k->key_id);
	if (!ev.has_event_time)
		return cnt_err_set(err, "field 'event_time' is required (it is signed)");
	if (cnt_sig_sign(k, &ev, field) != 0)
		return cnt_err_nomem(err);
	if ((root = cnt_json_loadb(line, n, JSON_ALLOW_NUL, &je)) == NULL) {
		if (cnt_json_oom(&je))
			return cnt_err_nomem(err);
		return cnt_err_set(err, "cannot be re-written: %s", je.text);
	}
	if (json_object_set_new(root, "signature", json_string(field)) != 0 ||
	    (text = cnt_json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER)) == NULL) {
		json_decref(root);
		return cnt_err_nomem(err);
	}
	json_decref(root);
	rc = cnt_buf_append(out, text, strlen(text)) != 0 || cnt_buf_putc(out, '\n') != 0 ? cnt_err_nomem(err) : 0;
	free(text);
	return rc;
}

int cnt_sig_canonical_line(cnt_jsonl *p, const char *line, size_t n, cnt_buf *out, cnt_err *err)
{
	static const char hx[] = "0123456789abcdef";
	cnt_raw_event ev;
	cnt_raw_problem pb;
	unsigned char stack[2048], *c;
	size_t i, len;

	for (i = 0; i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'); i++)
		;
	if (i == n)
		return 0;
	switch (cnt_jsonl_parse(p, line, n, &ev, &pb)) {
	case CNT_RAW_OK: break;
	case CNT_RAW_NOMEM: return cnt_err_nomem(err);
	default: return cnt_err_set(err, "%s", pb.msg);
	}
	if ((c = canon(&ev, stack, sizeof(stack), &len)) == NULL || cnt_buf_reserve(out, 2 * len + 1) != 0) {
		if (c != stack)
			free(c);
		return cnt_err_nomem(err);
	}
	for (i = 0; i < len; i++) {
		out->p[out->len++] = (uint8_t)hx[c[i] >> 4];
		out->p[out->len++] = (uint8_t)hx[c[i] & 15];
	}
	out->p[out->len++] = '\n';
	if (c != stack)
		free(c);
	return 0;
}
