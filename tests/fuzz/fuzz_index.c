/*
 * fuzz_index.c - libFuzzer target for the view index (view/view.h) and the
 * answers given from it (view/rank.h).
 *
 * index.bin is read from a file anyone may have damaged or forged: opened
 * from any bytes, it must be refused with a message or opened, and then
 * every question - top, rank, around, value, verify - must be answered or
 * refused with a message, never read outside the image, allocate what the
 * image does not back, or loop for long.  The image is opened twice: as
 * cnt-rank opens it, and with CNT_VIEW_NO_CHECKSUMS, so that the fuzzer
 * reaches the checks behind the checksums, as a forger who recomputes
 * them would.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "view/rank.h"
#include "view/view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ask(const cnt_view *v, cnt_rank_qkind kind, const char *member, uint64_t count)
{
	cnt_rank_source src = {.view = v, .overlay_fd = -1, .now = 1772366400000};
	cnt_rank_question q = {kind, member, count, kind == CNT_RANK_Q_TOP ? count % 5 : 0};   /* some pages */
	cnt_rank_answer a;
	cnt_buf b = CNT_BUF_INIT;
	cnt_err err = {"", CNT_ERR_DATA};

	if (cnt_rank_answer_question(&src, &q, &a, &err) == 0) {
		if (cnt_rank_format_json(&a, &b) != 0 || cnt_rank_format_table(&a, &b) != 0)
			__builtin_trap();
	} else if (err.msg[0] == '\0') {
		__builtin_trap();   /* every refusal says why */
	}
	cnt_rank_answer_release(&a);
	cnt_buf_release(&b);
}

static void walk(const cnt_view *v)
{
	char name[64];
	const char *p;
	size_t n;
	cnt_err err;
	uint64_t lim = v->n < 64 ? v->n : 64;

	for (uint64_t i = 0; i < lim; i++) {
		if (cnt_view_name(v, i, &p, &n, &err) != 0)
			continue;
		if (cnt_view_find(v, p, n) > (int64_t)v->n)
			__builtin_trap();
	}
	if (cnt_view_bin(v, INT64_MIN) >= v->nbins || cnt_view_bin(v, INT64_MAX) >= v->nbins)
		__builtin_trap();
	ask(v, CNT_RANK_Q_TOP, NULL, 10);
	ask(v, CNT_RANK_Q_VERIFY, NULL, 0);
	ask(v, CNT_RANK_Q_VALUE, "nobody", 0);
	/* members of the view, by their names: the first, one past the head */
	for (uint64_t i = 0; i < v->n && i <= v->head + 1; i += v->head + 1) {
		if (cnt_view_name(v, i, &p, &n, &err) != 0 || n >= sizeof(name) || memchr(p, 0, n))
			continue;
		memcpy(name, p, n);
		name[n] = 0;
		ask(v, CNT_RANK_Q_RANK, name, 0);
		ask(v, CNT_RANK_Q_AROUND, name, 3);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *img = NULL;
	cnt_view v;
	cnt_err err = {"", CNT_ERR_DATA};

	/* mapped files are page-aligned; so is this copy */
	if (posix_memalign((void **)&img, 64, size ? size : 1) != 0)
		return 0;
	memcpy(img, data, size);
	for (int flags = 0; flags <= CNT_VIEW_NO_CHECKSUMS; flags += CNT_VIEW_NO_CHECKSUMS) {
		err.msg[0] = '\0';
		if (cnt_view_open_mem(&v, img, size, "fuzz/index.bin", flags, &err) != 0) {
			if (err.msg[0] == '\0')
				__builtin_trap();
			continue;
		}
		if (v.head > v.n || v.nbins < 1 || v.desc.members != v.n)
			__builtin_trap();
		walk(&v);
		cnt_view_close(&v);
	}
	free(img);
	return 0;
}
