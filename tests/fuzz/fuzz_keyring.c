/*
 * fuzz_keyring.c - libFuzzer target for the keyring parser (verify.h).
 *
 * A keyring is written by operators and tenants; whatever the bytes,
 * cnt_keyring_parse() must return a usable keyring or NULL with a message,
 * never crash, leak or read out of bounds.  A parsed keyring is walked:
 * every key is found again under its tenant.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ingest/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_keyring *k = cnt_keyring_parse((const char *)data, size, "fuzz", &err);
	cnt_raw_event e;
	char why[300];

	if (k == NULL) {
		if (err.msg[0] == '\0')      /* every refusal says why */
			__builtin_trap();
		return 0;
	}
	/* a verdict against it: an event signed with a key it may hold */
	memset(&e, 0, sizeof(e));
	e.tenant_id.p = "acme";
	e.tenant_id.n = 4;
	e.has_origin = 1;
	e.origin = CNT_ORIGIN_CLIENT;
	e.has_event_time = 1;
	e.event_time_ms = 1795906740000;
	e.signature.p = "ed25519:acme-app-2026:xWkYe8lZMiJrKgJp+LGrALkmDgzsggWdGdGOTu8fmdGp/vFF4u7F9TbYmZVsdj8hwpAyTsHNUhtycDGd8SKPBg==";
	e.signature.n = strlen(e.signature.p);
	if (cnt_verify_event(k, &e, 0, why, sizeof(why)) == CNT_SIG_OK)
		__builtin_trap();            /* the event is not the signed one */
	if (cnt_keyring_nkeys(k) > 0 && cnt_keyring_ntenants(k) == 0)
		__builtin_trap();
	cnt_keyring_free(k);
	return 0;
}
