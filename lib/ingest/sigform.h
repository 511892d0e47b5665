/*
 * sigform.h - what a signed event's signature covers, and how the
 * signature field is written (cnt-keyring(5), "CANONICAL FORM").
 *
 * Shared by the verifier (verify.h, used by cnt-ingest) and the signing
 * command (cnt-sign): both derive the signed bytes from the event as the
 * ingest parsers read it (cnt_raw_event), never from the text of a line,
 * so a JSON line, a CSV row and an Avro record of the same event carry
 * the same signature.
 *
 * Canonical bytes, version "cnt-sig/1":
 *   "cnt-sig/1" 0x00                          10 bytes, the version tag
 *   then, in this order, tenant_id, counter_id, member_ref, subject,
 *   delta, item, event_time, idempotency_key, each as
 *     0x00                                    the field is absent, or
 *     0x01 len(4, big endian) bytes           a string field, or
 *     0x01 value(8, big endian, two's compl.) delta, event_time (epoch ms)
 * Every field is length-prefixed and marked present or absent, so no two
 * different events have the same canonical bytes.
 *
 * The signature field: "ed25519:" KEY_ID ":" BASE64, KEY_ID 1 to 64 bytes
 * of [A-Za-z0-9._-], BASE64 the 64-byte Ed25519 signature of the
 * canonical bytes in standard base64 with padding (88 characters).
 */
#ifndef CNT_SIGFORM_H
#define CNT_SIGFORM_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "ingest/rawevent.h"

#define CNT_SIG_TAG "cnt-sig/1"
#define CNT_SIG_KEYID_MAX 64
#define CNT_SIG_BYTES 64            /* an Ed25519 signature */
#define CNT_SIG_PUBLIC_BYTES 32     /* an Ed25519 public key */
#define CNT_SIG_SEED_BYTES 32       /* the seed a secret key is made from */
/* "ed25519:" + key id + ":" + 88 base64 characters + NUL */
#define CNT_SIG_FIELD_MAX (8 + CNT_SIG_KEYID_MAX + 1 + 88 + 1)

/* Writes e's canonical bytes into buf when they fit in cap bytes, and
 * returns their length in any case (buf may be NULL with cap 0, to ask
 * the length).  Never fails. */
size_t cnt_sig_canonical(const cnt_raw_event *e, unsigned char *buf, size_t cap);

/* 1 when id (n bytes) is a valid key id: 1 to CNT_SIG_KEYID_MAX bytes of
 * [A-Za-z0-9._-]. */
int cnt_sig_keyid_ok(const char *id, size_t n);

/* Parses a signature field value of n bytes.  Returns 0 and fills keyid
 * (NUL-terminated) and sig, or -1 with one line saying what is wrong in
 * why (why_n bytes, NUL-terminated). */
int cnt_sig_parse(const char *s, size_t n, char keyid[CNT_SIG_KEYID_MAX + 1],
	unsigned char sig[CNT_SIG_BYTES], char *why, size_t why_n);

/* Decodes strict standard base64 (with padding, no white space, no
 * non-zero trailing bits) of exactly want bytes.  Returns 0, or -1. */
int cnt_sig_b64_decode(const char *s, size_t n, unsigned char *out, size_t want);

/* Encodes n bytes as standard base64 with padding into out (at least
 * 4 * ((n + 2) / 3) + 1 bytes), NUL-terminated; returns out. */
char *cnt_sig_b64_encode(const unsigned char *p, size_t n, char *out, size_t out_n);

/* A secret signing key, as a key file holds it (cnt-sign(1)). */
typedef struct cnt_sig_key {
	char tenant_id[129];
	char key_id[CNT_SIG_KEYID_MAX + 1];
	unsigned char seed[CNT_SIG_SEED_BYTES];
	unsigned char secret[64];             /* libsodium's expanded key */
	unsigned char public_key[CNT_SIG_PUBLIC_BYTES];
} cnt_sig_key;

/* Fills k from seed (tenant and key id are the caller's).  Returns 0, or
 * -1 when libsodium cannot be initialised (err set). */
int cnt_sig_key_from_seed(cnt_sig_key *k, const unsigned char seed[CNT_SIG_SEED_BYTES], cnt_err *err);

/* Parses a key file's text: {"tenant_id": T, "key_id": K, "seed": BASE64
 * of 32 bytes}.  Returns 0, or -1 with err naming name and the problem. */
int cnt_sig_key_parse(cnt_sig_key *k, const char *text, size_t n, const char *name, cnt_err *err);

/* The key file's text for k, NUL-terminated, into buf (1024 bytes). */
void cnt_sig_key_format(const cnt_sig_key *k, char buf[1024]);

/* Signs e with k: writes the signature field value, NUL-terminated, into
 * field.  Returns 0, or -1 when out of memory (an event too long for the
 * stack buffer). */
int cnt_sig_sign(const cnt_sig_key *k, const cnt_raw_event *e, char field[CNT_SIG_FIELD_MAX]);

/* Ed25519 check of sig over e's canonical bytes under public key pk:
 * 1 valid, 0 not valid, -1 out of memory. */
int cnt_sig_check(const unsigned char pk[CNT_SIG_PUBLIC_BYTES], const cnt_raw_event *e,
	const unsigned char sig[CNT_SIG_BYTES]);

/* Signs one JSON line (n bytes, without its '\n') with k, as cnt-sign(1)
 * does: parses it as cnt-ingest does (p), refuses an event of another
 * tenant than k's, and appends to out the same object with "signature"
 * set (replaced when present; the other keys in their order, compact,
 * strings as UTF-8) and a '\n'.  A blank line appends nothing.  Returns
 * 0, or -1 with err set: the line's problem (CNT_ERR_DATA, the message
 * without a line number) or out of memory. */
int cnt_sig_sign_line(struct cnt_jsonl *p, const cnt_sig_key *k, const char *line, size_t n,
	cnt_buf *out, cnt_err *err);

/* The same, but appends the line's canonical bytes in lower-case hex and
 * a '\n' (cnt-sign --canonical): what a client library's own canonical
 * form is compared with.  Needs no key and checks no tenant. */
int cnt_sig_canonical_line(struct cnt_jsonl *p, const char *line, size_t n, cnt_buf *out, cnt_err *err);

#endif
