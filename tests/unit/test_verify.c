/*
 * test_verify.c - canonical form, signature fields, key files (sigform.h),
 * keyring parsing and signature verdicts (verify.h).  The key is RFC
 * 8032's first Ed25519 test vector; the expected bytes are cnt-keyring(5)'s
 * test vectors, checked independently by tests/sigref.py.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "ingest/sigform.h"
#include "ingest/verify.h"

#define SEED "nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A="
#define PUB "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="
#define KEYFILE "{\"tenant_id\": \"acme\", \"key_id\": \"acme-app-2026\", \"seed\": \"" SEED "\"}"
#define SIG1 "ed25519:acme-app-2026:xWkYe8lZMiJrKgJp+LGrALkmDgzsggWdGdGOTu8fmdGp/vFF4u7F9TbYmZVsdj8hwpAyTsHNUhtycDGd8SKPBg=="
#define T2026 INT64_C(1767225600000)     /* 2026-01-01T00:00:00Z */
#define EV1_MS INT64_C(1795906740000)    /* 2026-11-28T23:59:00+01:00 */

static cnt_slice sl(const char *s)
{
	cnt_slice x = {s, s ? strlen(s) : 0};
	return x;
}

/* Vector 1 of cnt-keyring(5). */
static cnt_raw_event ev1(void)
{
	cnt_raw_event e;

	memset(&e, 0, sizeof(e));
	e.idempotency_key = sl("acme-steps-m1042-1128");
	e.tenant_id = sl("acme");
	e.counter_id = sl("steps");
	e.member_ref = sl("m-1042");
	e.subject = sl("m-1042");
	e.has_delta = 1;
	e.delta = 11250;
	e.has_event_time = 1;
	e.event_time_ms = EV1_MS;
	e.has_origin = 1;
	e.origin = CNT_ORIGIN_CLIENT;
	return e;
}

static void hex(const unsigned char *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

static void test_canonical_vector(void)
{
	cnt_raw_event e = ev1();
	unsigned char buf[512];
	char h[1100];
	size_t n = cnt_sig_canonical(&e, buf, sizeof(buf));

	CHECK_EQ_INT(n, cnt_sig_canonical(&e, NULL, 0));
	hex(buf, n, h);
	CHECK_EQ_STR(h, "636e742d7369672f3100010000000461636d650100000005737465707301000000066d2d"
		"3130343201000000066d2d31303432010000000000002bf20001000001a224621f200100"
		"00001561636d652d73746570732d6d313034322d31313238");
}

static void test_canonical_unambiguous(void)
{
	cnt_raw_event a = ev1(), b = ev1();
	unsigned char x[512], y[512];
	size_t nx, ny;

	/* moving bytes from one field to the next changes the bytes */
	a.tenant_id = sl("acmes");
	a.counter_id = sl("teps");
	nx = cnt_sig_canonical(&a, x, sizeof(x));
	ny = cnt_sig_canonical(&b, y, sizeof(y));
	CHECK(nx == ny && memcmp(x, y, nx) != 0);
	/* absent and empty differ */
	a = ev1();
	a.item = sl("");
	nx = cnt_sig_canonical(&a, x, sizeof(x));
	CHECK(nx == ny + 4);
	/* no delta and delta 0 differ */
	a = ev1();
	a.has_delta = 0;
	b.delta = 0;
	CHECK(cnt_sig_canonical(&a, x, sizeof(x)) + 8 == cnt_sig_canonical(&b, y, sizeof(y)));
	/* a buffer too small is not written past */
	memset(x, 0xAA, sizeof(x));
	CHECK(cnt_sig_canonical(&b, x, 20) > 20);
	CHECK(x[20] == 0xAA);
}

static void test_sign_vector(void)
{
	cnt_sig_key k;
	cnt_err err;
	cnt_raw_event e = ev1();
	char field[CNT_SIG_FIELD_MAX], pub[64];

	CHECK_EQ_INT(cnt_sig_key_parse(&k, KEYFILE, strlen(KEYFILE), "k", &err), 0);
	cnt_sig_b64_encode(k.public_key, sizeof(k.public_key), pub, sizeof(pub));
	CHECK_EQ_STR(pub, PUB);
	CHECK_EQ_INT(cnt_sig_sign(&k, &e, field), 0);
	CHECK_EQ_STR(field, SIG1);
}

static void test_sig_parse(void)
{
	char id[CNT_SIG_KEYID_MAX + 1], why[200];
	unsigned char sig[64];
	char bad[200];

	CHECK_EQ_INT(cnt_sig_parse(SIG1, strlen(SIG1), id, sig, why, sizeof(why)), 0);
	CHECK_EQ_STR(id, "acme-app-2026");
	CHECK(cnt_sig_parse("c2lnbmVk", 8, id, sig, why, sizeof(why)) == -1 && strstr(why, "ed25519:"));
	CHECK(cnt_sig_parse("ed25519:abc", 11, id, sig, why, sizeof(why)) == -1 && strstr(why, "no ':'"));
	CHECK(cnt_sig_parse("ed25519::AAAA", 13, id, sig, why, sizeof(why)) == -1 && strstr(why, "key id"));
	CHECK(cnt_sig_parse("ed25519:a/b:AAAA", 16, id, sig, why, sizeof(why)) == -1 && strstr(why, "key id"));
	/* one base64 character short, one too many, padding missing, a space */
	snprintf(bad, sizeof(bad), "%.*s", (int)strlen(SIG1) - 1, SIG1);
	CHECK(cnt_sig_parse(bad, strlen(bad), id, sig, why, sizeof(why)) == -1 && strstr(why, "base64"));
	snprintf(bad, sizeof(bad), "%sA", SIG1);
	CHECK(cnt_sig_parse(bad, strlen(bad), id, sig, why, sizeof(why)) == -1);
	snprintf(bad, sizeof(bad), "%.*sAA", (int)strlen(SIG1) - 2, SIG1);
	CHECK(cnt_sig_parse(bad, strlen(bad), id, sig, why, sizeof(why)) == -1);
	snprintf(bad, sizeof(bad), "%.*s %s", 30, SIG1, SIG1 + 31);
	CHECK(cnt_sig_parse(bad, strlen(bad), id, sig, why, sizeof(why)) == -1);
	/* non-zero trailing bits: the last character before "==" must be one
	 * of AQgw for a 64-byte value */
	snprintf(bad, sizeof(bad), "%.*sB==", (int)strlen(SIG1) - 3, SIG1);
	CHECK(cnt_sig_parse(bad, strlen(bad), id, sig, why, sizeof(why)) == -1);
}

static void test_key_file_errors(void)
{
	cnt_sig_key k;
	cnt_err err;
	static const struct { const char *text, *msg; } cases[] = {
		{"[]", "$: expected an object"},
		{"{\"tenant_id\": \"a\", \"key_id\": \"k\"}", "$.seed: required"},
		{"{\"tenant_id\": \"a\", \"key_id\": \"k\", \"seed\": \"AAAA\"}", "$.seed: expected 32 bytes"},
		{"{\"tenant_id\": \"a\", \"key_id\": \"k k\", \"seed\": \"" SEED "\"}", "$.key_id: must be"},
		{"{\"tenant_id\": \"a\", \"key_id\": \"k\", \"seed\": \"" SEED "\", \"x\": 1}", "$.x: unknown key"},
		{"{\"tenant_id\": 1}", "$.tenant_id: expected a string"},
		{"{", "line 1"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_EQ_INT(cnt_sig_key_parse(&k, cases[i].text, strlen(cases[i].text), "kf", &err), -1);
		CHECK(strstr(err.msg, "key file 'kf': ") == err.msg);
		if (strstr(err.msg, cases[i].msg) == NULL)
		{
			fprintf(stderr, "case %zu: %s\n", i, err.msg);
			CHECK(0);
		}
	}
}

#define RING(keys) "{\"tenants\": [{\"tenant_id\": \"acme\", \"keys\": [" keys "]}]}"
#define KEY(extra) "{\"key_id\": \"acme-app-2026\", \"public_key\": \"" PUB "\", \"origins\": [\"client\"], " \
	"\"valid_from\": \"2026-01-01T00:00:00Z\"" extra "}"

static void test_keyring_parse(void)
{
	cnt_err err;
	const char *good = RING(KEY(", \"valid_until\": \"2027-01-01T00:00:00Z\", \"revoked_at\": \"2026-06-01T00:00:00+02:00\""));
	cnt_keyring *k = cnt_keyring_parse(good, strlen(good), "r", &err);
	const cnt_key *key;

	CHECK(k != NULL);
	CHECK_EQ_INT(cnt_keyring_ntenants(k), 1);
	CHECK_EQ_INT(cnt_keyring_nkeys(k), 1);
	key = cnt_keyring_find(k, "acme", 4, "acme-app-2026");
	CHECK(key != NULL);
	if (key) {
		CHECK_EQ_INT(key->valid_from_ms, T2026);
		CHECK_EQ_INT(key->valid_until_ms, INT64_C(1798761600000));
		CHECK_EQ_INT(key->revoked_at_ms, INT64_C(1780264800000));
		CHECK_EQ_INT(key->origins, CNT_KEY_ORIGIN_CLIENT);
	}
	CHECK(cnt_keyring_find(k, "acm", 3, "acme-app-2026") == NULL);
	CHECK(cnt_keyring_find(k, "acme", 4, "acme-app") == NULL);
	cnt_keyring_free(k);
}

static void test_keyring_errors(void)
{
	static const struct { const char *text, *msg; } cases[] = {
		{"[]", "keyring 'r': $: expected an object, got array"},
		{"{}", "keyring 'r': $.tenants: required"},
		{"{\"tenants\": [], \"x\": 1}", "keyring 'r': $: unknown key 'x'"},
		{"{\"tenants\": {}}", "$.tenants: expected an array, got object"},
		{"{\"tenants\": [{\"tenant_id\": \"\", \"keys\": []}]}", "$.tenants[0].tenant_id: is 0 bytes long"},
		{"{\"tenants\": [{\"tenant_id\": \"a\"}]}", "$.tenants[0].keys: required"},
		{"{\"tenants\": [{\"tenant_id\": \"a\", \"keys\": []}, {\"tenant_id\": \"a\", \"keys\": []}]}",
			"$.tenants[1].tenant_id: tenant 'a' is listed twice"},
		{RING(KEY("") "," KEY("")), "$.tenants[0].keys[1].key_id: 'acme-app-2026' is registered twice"},
		{RING("{\"key_id\": \"a b\"}"), "$.tenants[0].keys[0].key_id: 'a b': a key id is"},
		{RING("{\"key_id\": \"k\", \"public_key\": \"AAAA\"}"), "keys[0].public_key: expected an Ed25519 public key"},
		{RING("{\"key_id\": \"k\", \"public_key\": \"" PUB "\"}"), "keys[0].origins: required"},
		{RING("{\"key_id\": \"k\", \"public_key\": \"" PUB "\", \"origins\": []}"), "keys[0].origins: expected a non-empty"},
		{RING("{\"key_id\": \"k\", \"public_key\": \"" PUB "\", \"origins\": [\"web\"]}"), "keys[0].origins[0]: expected \"client\""},
		{RING("{\"key_id\": \"k\", \"public_key\": \"" PUB "\", \"origins\": [\"client\", \"client\"]}"),
			"keys[0].origins[1]: \"client\" is listed twice"},
		{RING("{\"key_id\": \"k\", \"public_key\": \"" PUB "\", \"origins\": [\"client\"]}"), "keys[0].valid_from: required"},
		{RING(KEY(", \"valid_until\": \"2026-01-01T00:00:00Z\"")), "keys[0].valid_until: must be later than valid_from"},
		{RING(KEY(", \"revoked_at\": \"2026-01-01\"")), "keys[0].revoked_at: '2026-01-01' is not an RFC 3339 time"},
		{RING(KEY(", \"revoked\": true")), "keys[0]: unknown key 'revoked'"},
		{RING("3"), "keys[0]: expected an object, got integer"},
		{"{\"tenants\": [], \"tenants\": []}", "line 1"},
	};
	cnt_err err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cnt_keyring *k = cnt_keyring_parse(cases[i].text, strlen(cases[i].text), "r", &err);

		CHECK(k == NULL);
		CHECK(err.kind == CNT_ERR_DATA);
		if (k != NULL || strstr(err.msg, cases[i].msg) == NULL)
		{
			fprintf(stderr, "case %zu: %s\n", i, k ? "(parsed)" : err.msg);
			CHECK(0);
		}
		cnt_keyring_free(k);
	}
}

static cnt_sig_status judge(const char *ring, cnt_raw_event *e, int64_t now, char *why)
{
	cnt_err err;
	cnt_keyring *k = ring ? cnt_keyring_parse(ring, strlen(ring), "r", &err) : NULL;
	cnt_sig_status st;

	CHECK(ring == NULL || k != NULL);
	st = cnt_verify_event(k, e, now, why, 300);
	cnt_keyring_free(k);
	return st;
}

static void test_verdicts(void)
{
	const char *ring = RING(KEY(", \"valid_until\": \"2027-01-01T00:00:00Z\""));
	const char *revoked = RING(KEY(", \"revoked_at\": \"2026-12-01T00:00:00Z\""));
	const char *backend = RING("{\"key_id\": \"acme-app-2026\", \"public_key\": \"" PUB "\", \"origins\": [\"backend\"], "
		"\"valid_from\": \"2026-01-01T00:00:00Z\"}");
	cnt_raw_event e = ev1();
	int64_t now = EV1_MS + 3600000;
	char why[300];

	e.signature = sl(SIG1);
	CHECK_EQ_INT(judge(ring, &e, now, why), CNT_SIG_OK);
	CHECK_EQ_INT(judge(NULL, &e, now, why), CNT_SIG_UNKNOWN_KEY);
	CHECK(strstr(why, "no keyring") != NULL);
	CHECK_EQ_INT(judge(backend, &e, now, why), CNT_SIG_UNKNOWN_KEY);
	CHECK(strstr(why, "not registered for client-origin") != NULL);
	CHECK_EQ_INT(judge(revoked, &e, now, why), CNT_SIG_OK);
	CHECK_EQ_INT(judge(revoked, &e, INT64_C(1796083200000), why), CNT_SIG_REVOKED);   /* at revoked_at */
	CHECK(strstr(why, "revoked at 2026-12-01T00:00:00.000Z") != NULL);
	/* validity: event_time is judged, not the ingest time */
	e.event_time_ms = T2026 - 1;
	CHECK_EQ_INT(judge(ring, &e, now, why), CNT_SIG_BAD);   /* signed bytes changed */
	/* every canonical field changed after signing */
	for (int f = 0; f < 8; f++) {
		e = ev1();
		e.signature = sl(SIG1);
		switch (f) {
		case 0: e.tenant_id = sl("acmf"); break;
		case 1: e.counter_id = sl("stepz"); break;
		case 2: e.member_ref = sl("m-1043"); break;
		case 3: e.subject = sl("m-1043"); break;
		case 4: e.delta++; break;
		case 5: e.item = sl("x"); break;
		case 6: e.event_time_ms++; break;
		case 7: e.idempotency_key = sl("acme-steps-m1042-1129"); break;
		}
		CHECK_EQ_INT(judge(f == 0 ? RING(KEY("")) "" : ring, &e, now, why), f == 0 ? CNT_SIG_UNKNOWN_KEY : CNT_SIG_BAD);
	}
	/* origin and attrs are not signed: a backend-origin copy checks under a backend key */
	e = ev1();
	e.signature = sl(SIG1);
	e.origin = CNT_ORIGIN_BACKEND;
	CHECK_EQ_INT(judge(backend, &e, now, why), CNT_SIG_OK);
	CHECK_EQ_INT(judge(ring, &e, now, why), CNT_SIG_UNKNOWN_KEY);
	/* unsigned */
	e = ev1();
	CHECK_EQ_INT(judge(ring, &e, now, why), CNT_SIG_UNSIGNED);
	e.origin = CNT_ORIGIN_BACKEND;
	CHECK_EQ_INT(judge(ring, &e, now, why), CNT_SIG_OK);
	e.has_origin = 0;
	CHECK_EQ_INT(judge(NULL, &e, now, why), CNT_SIG_OK);
	/* malformed */
	e = ev1();
	e.signature = sl("");
	CHECK_EQ_INT(judge(ring, &e, now, why), CNT_SIG_BAD);
}

static void test_expired(void)
{
	const char *ring = RING(KEY(", \"valid_until\": \"2026-11-28T22:59:00Z\""));
	cnt_sig_key k;
	cnt_err err;
	cnt_raw_event e = ev1();
	char field[CNT_SIG_FIELD_MAX], why[300];

	CHECK_EQ_INT(cnt_sig_key_parse(&k, KEYFILE, strlen(KEYFILE), "k", &err), 0);
	/* event_time == valid_until: outside ([from, until)) */
	cnt_sig_sign(&k, &e, field);
	e.signature = sl(field);
	CHECK_EQ_INT(judge(ring, &e, EV1_MS, why), CNT_SIG_EXPIRED);
	CHECK(strstr(why, "[2026-01-01T00:00:00.000Z, 2026-11-28T22:59:00.000Z)") != NULL);
	e.event_time_ms = EV1_MS - 1;
	cnt_sig_sign(&k, &e, field);
	CHECK_EQ_INT(judge(ring, &e, EV1_MS, why), CNT_SIG_OK);
	e.event_time_ms = T2026 - 1;
	cnt_sig_sign(&k, &e, field);
	CHECK_EQ_INT(judge(ring, &e, EV1_MS, why), CNT_SIG_EXPIRED);
	e.event_time_ms = T2026;
	cnt_sig_sign(&k, &e, field);
	CHECK_EQ_INT(judge(ring, &e, EV1_MS, why), CNT_SIG_OK);
}

static void test_long_event(void)
{
	/* canonical bytes longer than the stack buffer go to the heap */
	char big[3000];
	cnt_sig_key k;
	cnt_err err;
	cnt_raw_event e = ev1();
	char field[CNT_SIG_FIELD_MAX], why[300];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	CHECK_EQ_INT(cnt_sig_key_parse(&k, KEYFILE, strlen(KEYFILE), "k", &err), 0);
	e.item = sl(big);
	CHECK_EQ_INT(cnt_sig_sign(&k, &e, field), 0);
	e.signature = sl(field);
	CHECK_EQ_INT(judge(RING(KEY("")), &e, EV1_MS, why), CNT_SIG_OK);
}

int main(void)
{
	RUN(test_canonical_vector);
	RUN(test_canonical_unambiguous);
	RUN(test_sign_vector);
	RUN(test_sig_parse);
	RUN(test_key_file_errors);
	RUN(test_keyring_parse);
	RUN(test_keyring_errors);
	RUN(test_verdicts);
	RUN(test_expired);
	RUN(test_long_event);
	return unit_report("test_verify");
}
