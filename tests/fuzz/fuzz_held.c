/*
 * fuzz_held.c - libFuzzer target for the readers of cnt-hold's inputs
 * (lib/model/held.c, lib/correct/hold_decide.c): the hold file (an Avro
 * container of cnt.HeldEvent) and the decisions ledger (JSON lines in a
 * hash chain).
 *
 * The seeds in tests/fuzz/corpus/fuzz_held/ are hold files written by
 * cnt-ingest --holds (null and zstandard codecs, truncated) and a
 * decisions ledger written by cnt-hold.  Whatever the bytes: an error
 * with a message or holds, never a crash, a leak or a hang; every hold
 * read has a hold id that is its event's, and its event bytes decode to
 * the event returned.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "correct/hold_decide.h"
#include "model/held.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_holds(const uint8_t *data, size_t size)
{
	cnt_err err = {"", CNT_ERR_DATA};
	int fd = fuzz_input_fd("fuzz_held", data, size);
	cnt_held_in *in;
	cnt_held h;

	if (fd < 0)
		return;
	if ((in = cnt_held_in_open(fd, "fuzz", &err)) == NULL) {
		if (err.msg[0] == '\0')
			abort();
		close(fd);
		return;
	}
	for (int i = 0; i < FUZZ_MAX_RECORDS; i++) {
		const uint8_t *p;
		size_t n;
		char id[35];
		int rc;

		err.msg[0] = '\0';
		rc = cnt_held_in_next(in, &h, &err);
		if (rc < 0 && err.msg[0] == '\0')
			abort();
		if (rc <= 0)
			break;
		cnt_held_id(h.e.event_id, id);
		if (h.hold_id.n != 34 || memcmp(h.hold_id.p, id, 34) != 0 || (unsigned)h.signal >= CNT_HOLD_NKINDS)
			abort();
		cnt_held_in_event_bytes(in, &p, &n);
		{
			cnt_buf b = CNT_BUF_INIT;

			if (cnt_event_encode(&h.e, &b) != 0 || b.len != n || memcmp(b.p, p, n) != 0)
				abort();
			cnt_buf_release(&b);
		}
	}
	cnt_held_in_free(in);
	close(fd);
}

static void read_ledger(const uint8_t *data, size_t size)
{
	cnt_err err = {"", CNT_ERR_DATA};
	int fd = fuzz_input_fd("fuzz_held", data, size);
	cnt_decisions *d;

	if (fd < 0)
		return;
	d = cnt_decisions_load(fd, "fuzz", &err);
	if (d == NULL && err.msg[0] == '\0')
		abort();
	cnt_decisions_free(d);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_holds(data, size);
	read_ledger(data, size);
	return 0;
}
