/*
 * verify.h - signed events: the keyring and the verdict on one event's
 * signature (cnt-keyring(5), cnt-ingest(1) --keyring).
 *
 * A keyring lists, per tenant, the Ed25519 public keys it registered, each
 * with a key id, the origins it may sign for (client, backend), a validity
 * period [valid_from, valid_until) that the event's event_time must fall
 * in, and an optional revoked_at: from that instant on (ingest time) no
 * event signed with the key is admitted, whatever its event_time says.
 *
 * The verdict, in this order (the first that applies is given):
 *   unsigned       a client-origin event without a signature field (a
 *                  backend-origin event without one is trusted: CNT_SIG_OK)
 *   bad_signature  the field is not "ed25519:KEY_ID:BASE64" (sigform.h)
 *   unknown_key    no keyring, or the tenant registered no key KEY_ID, or
 *                  not for the event's origin
 *   bad_signature  the signature does not verify over the canonical bytes
 *   revoked_key    the key was revoked at or before the ingest time
 *   expired_key    event_time is outside the key's validity period
 * A signature is checked before revocation and validity are looked at,
 * so expired_key and revoked_key are only said of authentic signatures.
 */
#ifndef CNT_VERIFY_H
#define CNT_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "ingest/rawevent.h"
#include "ingest/sigform.h"

typedef enum {
	CNT_SIG_OK = 0, CNT_SIG_UNSIGNED, CNT_SIG_BAD, CNT_SIG_UNKNOWN_KEY,
	CNT_SIG_EXPIRED, CNT_SIG_REVOKED, CNT_SIG_NOMEM
} cnt_sig_status;

enum { CNT_KEY_ORIGIN_BACKEND = 1, CNT_KEY_ORIGIN_CLIENT = 2 };

typedef struct cnt_key {
	const char *key_id;
	unsigned char public_key[CNT_SIG_PUBLIC_BYTES];
	int origins;                  /* CNT_KEY_ORIGIN_* bits */
	int64_t valid_from_ms;
	int64_t valid_until_ms;       /* INT64_MAX: open */
	int64_t revoked_at_ms;        /* INT64_MAX: not revoked */
} cnt_key;

typedef struct cnt_keyring cnt_keyring;

/* Parses a keyring's text (name is used in messages).  Returns it, or
 * NULL with err set to one line naming the file and the JSON path of the
 * first problem ("keyring 'k.json': $.tenants[0].keys[1].public_key:
 * ..."), kind CNT_ERR_DATA, or out of memory (CNT_ERR_NOMEM). */
cnt_keyring *cnt_keyring_parse(const char *text, size_t n, const char *name, cnt_err *err);

/* Reads and parses the file at path. */
cnt_keyring *cnt_keyring_load(const char *path, cnt_err *err);

void cnt_keyring_free(cnt_keyring *k);

/* The key key_id of tenant (n bytes), or NULL. */
const cnt_key *cnt_keyring_find(const cnt_keyring *k, const char *tenant, size_t n, const char *key_id);

/* Number of tenants and of keys in all (for tests and messages). */
size_t cnt_keyring_ntenants(const cnt_keyring *k);
size_t cnt_keyring_nkeys(const cnt_keyring *k);

/* The verdict on e's signature (see above).  k may be NULL (no keyring).
 * now_ms is the ingest time.  e's event_time must be present.  On
 * anything but CNT_SIG_OK, why holds one line (why_n bytes). */
cnt_sig_status cnt_verify_event(const cnt_keyring *k, const cnt_raw_event *e, int64_t now_ms,
	char *why, size_t why_n);

#endif
