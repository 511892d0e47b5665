/*
 * fuzz_viewdesc.c - libFuzzer target for the view description parser
 * (view/viewdesc.h).
 *
 * The description is JSON read from a view file we must distrust.  From
 * any bytes, cnt_viewdesc_parse() must either refuse with a message or
 * give a description that the writer accepts, and that then reads back
 * and writes again to the same bytes: what is read can always be
 * written, and writing is canonical.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "view/viewdesc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cnt_viewdesc d, r;
	cnt_buf a = CNT_BUF_INIT, b = CNT_BUF_INIT;
	cnt_err err = {"", CNT_ERR_DATA};

	if (cnt_viewdesc_parse(&d, (const char *)data, size, &err) != 0) {
		if (err.msg[0] == '\0')
			__builtin_trap();   /* every refusal says why */
		return 0;
	}
	if (cnt_viewdesc_write(&d, &a, &err) != 0)
		__builtin_trap();       /* what is read can be written */
	if (cnt_viewdesc_parse(&r, (const char *)a.p, a.len, &err) != 0)
		__builtin_trap();       /* and read back */
	if (cnt_viewdesc_write(&r, &b, &err) != 0 || a.len != b.len || memcmp(a.p, b.p, a.len) != 0)
		__builtin_trap();       /* to the same bytes */
	if (r.version != d.version || r.members != d.members || r.as_of != d.as_of || strcmp(r.scope, d.scope) != 0)
		__builtin_trap();
	(void)cnt_viewdesc_stale(&r, INT64_MAX);
	(void)cnt_viewdesc_stale(&r, INT64_MIN);
	cnt_viewdesc_release(&r);
	cnt_viewdesc_release(&d);
	cnt_buf_release(&a);
	cnt_buf_release(&b);
	return 0;
}
