/*
 * fuzz_defs.c - libFuzzer target for the definitions parser.
 *
 * The definitions file is outside input written by tenants; whatever the
 * bytes, cnt_defs_parse() must either return a usable object or NULL with a
 * message, never crash, leak or read out of bounds.  A loaded object is
 * walked through every accessor so that the pointers it hands out are used.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/defs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cnt_err err = {"", CNT_ERR_DATA};
	cnt_defs *d = cnt_defs_parse((const char *)data, size, "fuzz", &err);
	size_t i, j;

	if (d == NULL) {
		if (err.msg[0] == '\0') /* every refusal says why */
			__builtin_trap();
		return 0;
	}
	for (i = 0; i < cnt_defs_ntenants(d); i++) {
		const cnt_tenant *t = cnt_defs_tenant_at(d, i);

		if (cnt_defs_tenant(d, t->tenant_id, strlen(t->tenant_id)) != t)
			__builtin_trap();
	}
	for (i = 0; i < cnt_defs_ncounters(d); i++) {
		const cnt_counter *c = cnt_defs_counter_at(d, i);

		if (cnt_defs_counter(d, c->tenant_id, strlen(c->tenant_id), c->counter_id,
				     strlen(c->counter_id)) != c)
			__builtin_trap();
		for (j = 0; j < c->nversions; j++) {
			const cnt_counter_version *v = &c->versions[j];

			if (cnt_counter_version_get(c, v->version) != v)
				__builtin_trap();
			if (v->effective_from_ms != INT64_MIN &&
			    cnt_counter_version_at(c, v->effective_from_ms) != v)
				__builtin_trap();
		}
	}
	for (i = 0; i < cnt_defs_nboards(d); i++) {
		const cnt_leaderboard *b = cnt_defs_board_at(d, i);

		if (cnt_defs_board(d, b->board_id, strlen(b->board_id)) != b || b->counter == NULL ||
		    b->ntie_break == 0 || b->tie_break[b->ntie_break - 1] != CNT_TIE_MEMBER_REF_ASC)
			__builtin_trap();
	}
	for (i = 0; i < cnt_defs_nseasons(d); i++) {
		const cnt_season *s = cnt_defs_season_at(d, i);

		if (cnt_defs_season(d, s->season_id, strlen(s->season_id)) != s || s->board == NULL ||
		    s->timezone == NULL)
			__builtin_trap();
	}
	cnt_defs_free(d);
	return 0;
}
