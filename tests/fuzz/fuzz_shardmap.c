/*
 * fuzz_shardmap.c - libFuzzer target for the shard map parser and the
 * stats reader of cnt-shardmap derive.
 *
 * Whatever the bytes, cnt_shardmap_parse() returns a map or NULL with a
 * message; a map is formatted, parsed back to the same text (the format
 * is canonical), looked up by each of its keys, and updated by a
 * derivation.  The same bytes read as a --stats object must be taken or
 * refused with a message.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "count/shardmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_shardmap *m = cnt_shardmap_parse((const char *)data, size, "fuzz", &err), *m2;
	cnt_shardmap_obs *o = cnt_shardmap_obs_new(&err);
	cnt_shardmap_policy p = CNT_SHARDMAP_POLICY_INIT;
	cnt_shardmap_summary sum;
	cnt_buf a = CNT_BUF_INIT, b = CNT_BUF_INIT;

	if (o == NULL)
		__builtin_trap();
	err.msg[0] = '\0';
	if (cnt_shardmap_obs_add(o, (const char *)data, size, "fuzz", &err) != 0 && err.msg[0] == '\0')
		__builtin_trap();
	if (m == NULL) {
		cnt_shardmap_obs_free(o);
		return 0;
	}
	for (size_t i = 0; i < cnt_shardmap_nkeys(m); i++) {
		const cnt_shardmap_key *k = cnt_shardmap_key_at(m, i);

		if (cnt_shardmap_shards(m, k->tenant, k->counter, k->member) != k->shards)
			__builtin_trap();
	}
	if (cnt_shardmap_format(m, &a, &err) != 0)
		__builtin_trap();
	if ((m2 = cnt_shardmap_parse((const char *)a.p, a.len, "again", &err)) == NULL ||
	    cnt_shardmap_format(m2, &b, &err) != 0 || a.len != b.len || memcmp(a.p, b.p, a.len) != 0)
		__builtin_trap();
	if (cnt_shardmap_updated(m) < INT64_MAX - 1 &&
	    cnt_shardmap_derive(m, o, &p, cnt_shardmap_updated(m) + 1, &sum, &err) != 0)
		__builtin_trap();
	cnt_buf_release(&a);
	cnt_buf_release(&b);
	cnt_shardmap_free(m2);
	cnt_shardmap_free(m);
	cnt_shardmap_obs_free(o);
	return 0;
}
