/*
 * fuzz_ivtlist.c - libFuzzer target for the list files of the inline
 * invalid-traffic filters (lib/ingest/ivt.h).
 *
 * A list file is outside input.  Whatever the bytes, cnt_ualist_parse()
 * and cnt_addrlist_parse() must return a list or NULL with a message,
 * never crash, leak or read out of bounds.  An accepted list is then
 * matched against every line of the input: a user-agent list must match
 * each of its own substring patterns, an address list each of its own
 * entries; every line must give a defined answer.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ingest/ivt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *p = text, *end = text + size;
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_ualist *ua = cnt_ualist_parse(text, size, "fuzz", &err);
	cnt_addrlist *al;

	if (ua == NULL && err.msg[0] == '\0')
		__builtin_trap();
	err.msg[0] = '\0';
	al = cnt_addrlist_parse(text, size, "fuzz", &err);
	if (al == NULL && err.msg[0] == '\0')
		__builtin_trap();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *a = p, *b = nl ? nl : end;
		int r;

		p = nl ? nl + 1 : end;
		while (a < b && (*a == ' ' || *a == '\t' || *a == '\r'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r'))
			b--;
		if (a == b || *a == '#')
			continue;
		if (ua != NULL && *a != '=' && cnt_ualist_match(ua, a, (size_t)(b - a)) != 1)
			__builtin_trap();
		if (al != NULL && cnt_addrlist_match(al, a, (size_t)(b - a)) != 1)
			__builtin_trap();
		if (ua != NULL && (r = cnt_ualist_match(ua, a + 1, (size_t)(b - a - 1))) != 0 && r != 1)
			__builtin_trap();
		if (al != NULL && ((r = cnt_addrlist_match(al, a + 1, (size_t)(b - a - 1))) < -1 || r > 1))
			__builtin_trap();
	}
	cnt_ualist_free(ua);
	cnt_addrlist_free(al);
	return 0;
}
