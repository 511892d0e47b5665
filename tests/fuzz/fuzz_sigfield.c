/*
 * fuzz_sigfield.c - libFuzzer target for the signature field parser and
 * the verdict on an event carrying it (sigform.h, verify.h).
 *
 * The signature field comes from a member's device, the least trusted
 * input there is.  The input's first byte picks the origin and whether a
 * keyring is given; the rest is the field.  Whatever it is, the verdict
 * is never "valid" (no input here is the signature of the event), and a
 * field that parses names a key id of the documented alphabet.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ingest/sigform.h"
#include "ingest/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char ring[] = "{\"tenants\": [{\"tenant_id\": \"acme\", \"keys\": [{\"key_id\": \"acme-app-2026\", "
	"\"public_key\": \"11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\", \"origins\": [\"client\", \"backend\"], "
	"\"valid_from\": \"2026-01-01T00:00:00Z\"}]}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cnt_err err;
	cnt_keyring *k = NULL;
	cnt_raw_event e;
	char id[CNT_SIG_KEYID_MAX + 1], why[300];
	unsigned char sig[CNT_SIG_BYTES];
	cnt_sig_status st;

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		k = cnt_keyring_parse(ring, sizeof(ring) - 1, "fuzz", &err);
		if (k == NULL)
			__builtin_trap();
	}
	if (cnt_sig_parse((const char *)data + 1, size - 1, id, sig, why, sizeof(why)) == 0 &&
	    !cnt_sig_keyid_ok(id, strlen(id)))
		__builtin_trap();
	memset(&e, 0, sizeof(e));
	e.tenant_id.p = "acme";
	e.tenant_id.n = 4;
	e.member_ref.p = "m-1";
	e.member_ref.n = 3;
	e.has_origin = 1;
	e.origin = (data[0] & 2) ? CNT_ORIGIN_CLIENT : CNT_ORIGIN_BACKEND;
	e.has_event_time = 1;
	e.event_time_ms = 1795906740000;
	e.signature.p = (const char *)data + 1;
	e.signature.n = size - 1;
	st = cnt_verify_event(k, &e, 0, why, sizeof(why));
	if (st == CNT_SIG_OK || why[0] == '\0')
		__builtin_trap();
	cnt_keyring_free(k);
	return 0;
}
