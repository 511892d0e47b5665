/*
 * test_hold_decide.c - deciding holds (lib/correct/hold_decide.h): the
 * decisions ledger (chain, a hold decided twice, a torn line), clear (the
 * released event with the decision's ingest time, the ledger line),
 * reject (the fraud retraction record), refusals (decided already, no
 * such hold, nothing pending), and the list.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "correct/hold_decide.h"
#include "correct/retract.h"
#include "model/event.h"
#include "model/held.h"
#include "unit.h"

#define AT INT64_C(1772361600000)   /* 2026-03-01T10:40:00Z */

static int file_of(const char *text)
{
	FILE *f = tmpfile();
	int fd = dup(fileno(f));

	fputs(text, f);
	fclose(f);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* A hold file of n events e0.. (members m0..), null codec. */
static int holds_file(int n)
{
	FILE *f = tmpfile();
	int fd = dup(fileno(f));
	cnt_err err;
	cnt_writer *w = cnt_held_writer_new(fd, "h", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);

	fclose(f);
	for (int i = 0; i < n; i++) {
		char id[16], mem[16], hid[35];
		cnt_event e;

		memset(&e, 0, sizeof(e));
		snprintf(id, sizeof(id), "e%d", i);
		snprintf(mem, sizeof(mem), "m%d", i);
		e.event_id = e.idempotency_key = (cnt_slice){id, strlen(id)};
		e.tenant_id = (cnt_slice){"utc", 3};
		e.counter_id = (cnt_slice){"pts", 3};
		e.counter_version = 2;
		e.member_ref = (cnt_slice){mem, strlen(mem)};
		e.delta = 10 + i;
		e.event_time = 1000 * i;
		e.ingest_time = 777;
		cnt_held_id(e.event_id, hid);
		CHECK(cnt_event_encode(&e, cnt_writer_buf(w)) == 0);
		CHECK(cnt_held_encode_tail(cnt_writer_buf(w), hid, i % 2 ? CNT_HOLD_DEVICE : CNT_HOLD_RATE, "why", 777) == 0);
		CHECK(cnt_writer_commit(w, &err) == 0);
	}
	CHECK(cnt_writer_finish(w, &err) == 0);
	cnt_writer_free(w);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static void line_to(void *ctx, const char *text, size_t n)
{
	fwrite(text, 1, n, ctx);
}

/* A ledger line for hold h of event id, chained to *prev. */
static void ledger_add(char *out, size_t cap, const char *hid, XXH128_hash_t *prev)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "{\"hold_id\":\"%s\",\"decision\":\"cleared\",\"decided_by\":\"x\","
		"\"decided_at\":\"t\",\"prev\":\"%016llx%016llx\"}", hid, (unsigned long long)prev->high64,
		(unsigned long long)prev->low64);

	*prev = XXH3_128bits(line, (size_t)n);
	strncat(out, line, cap - strlen(out) - 2);
	strcat(out, "\n");
}

static void test_ledger_load(void)
{
	char text[4096] = "", hid[35];
	XXH128_hash_t prev = {0, 0};
	cnt_decisions *d;
	cnt_err err;
	int fd;

	cnt_held_id((cnt_slice){"e0", 2}, hid);
	ledger_add(text, sizeof(text), hid, &prev);
	ledger_add(text, sizeof(text), "h-other", &prev);
	fd = file_of(text);
	d = cnt_decisions_load(fd, "dec", &err);
	CHECK(d != NULL);
	cnt_decisions_free(d);
	close(fd);
	/* the same hold again, chain intact: refused */
	ledger_add(text, sizeof(text), hid, &prev);
	fd = file_of(text);
	CHECK(cnt_decisions_load(fd, "dec", &err) == NULL);
	CHECK(strstr(err.msg, "line 3: hold 'h-") != NULL && strstr(err.msg, "is decided twice (first on line 1)") != NULL);
	close(fd);
	/* a torn last line, a broken chain, not a decision */
	fd = file_of("{\"hold_id\":\"h\"");
	CHECK(cnt_decisions_load(fd, "dec", &err) == NULL && strstr(err.msg, "no newline at the end") != NULL);
	close(fd);
	fd = file_of("{\"hold_id\":\"h\",\"decision\":\"cleared\",\"decided_by\":\"x\",\"decided_at\":\"t\",\"prev\":\"1\"}\n");
	CHECK(cnt_decisions_load(fd, "dec", &err) == NULL && strstr(err.msg, "the hash chain is broken") != NULL);
	close(fd);
	fd = file_of("{\"hold_id\":\"h\",\"decision\":\"maybe\",\"decided_by\":\"x\",\"decided_at\":\"t\"}\n");
	CHECK(cnt_decisions_load(fd, "dec", &err) == NULL && strstr(err.msg, "line 1: not a decision record") != NULL);
	close(fd);
	fd = file_of("");
	d = cnt_decisions_load(fd, "dec", &err);
	CHECK(d != NULL);
	cnt_decisions_free(d);
	close(fd);
}

static void test_clear_then_refused(void)
{
	int hfd = holds_file(4), dfd, fds[1];
	const char *names[1] = {"h"}, *ids[1];
	char hid[35], *lines;
	FILE *seg = tmpfile(), *ledger = tmpfile();
	cnt_err err;
	cnt_writer *w = cnt_event_writer_new(fileno(seg), "seg", CNT_CODEC_NULL, CNT_LEVEL_DEFAULT, &err);
	cnt_hold_sel sel = {0};
	cnt_hold_decision dec = {0, "ana", AT, "quarantine"};
	cnt_hold_decide_result r;
	cnt_limits lim = cnt_limits_default();
	cnt_event_in *in;
	cnt_event e;
	cnt_decisions *d;

	cnt_held_id((cnt_slice){"e2", 2}, hid);
	ids[0] = hid;
	sel.ids = ids;
	sel.nids = 1;
	fds[0] = hfd;
	CHECK(cnt_hold_decide_run(fds, names, 1, NULL, &sel, &dec, w, -1, NULL, &r, &err) == 0);
	CHECK_EQ_INT(r.holds, 4);
	CHECK_EQ_INT(r.decided, 1);
	CHECK(r.retraction_line == NULL);
	CHECK(strstr(r.decision_lines, "\"decision\":\"cleared\",\"decided_by\":\"ana\","
		"\"decided_at\":\"2026-03-01T10:40:00.000Z\",\"retraction_id\":null,"
		"\"prev\":\"00000000000000000000000000000000\"}\n") != NULL);
	lseek(fileno(seg), 0, SEEK_SET);
	in = cnt_event_in_open(fileno(seg), "seg", &lim, &err);
	CHECK(in && cnt_event_in_next(in, &e, &err) == 1);
	CHECK(e.event_id.n == 2 && memcmp(e.event_id.p, "e2", 2) == 0 && e.delta == 12 && e.event_time == 2000 &&
	      e.ingest_time == AT && e.counter_version == 2);
	CHECK(cnt_event_in_next(in, &e, &err) == 0);
	cnt_event_in_free(in);
	cnt_writer_free(w);
	/* now decided: again is refused, by id; by filter only e0 and e1, e3 are pending */
	lines = r.decision_lines;
	fputs(lines, ledger);
	fflush(ledger);
	free(lines);
	dfd = dup(fileno(ledger));
	lseek(dfd, 0, SEEK_SET);
	d = cnt_decisions_load(dfd, "dec", &err);
	CHECK(d != NULL);
	lseek(hfd, 0, SEEK_SET);
	CHECK(cnt_hold_decide_run(fds, names, 1, d, &sel, &dec, NULL, -1, NULL, &r, &err) == -1);
	CHECK(strstr(err.msg, "was already cleared by ana at 2026-03-01T10:40:00.000Z") != NULL);
	/* reject the rest by tenant: one retraction record for e0, e1, e3 */
	{
		FILE *rl = tmpfile();
		cnt_hold_sel all = {0};
		cnt_hold_decision rej = {1, "ts", AT, "case-1"};

		all.tenant = "utc";
		lseek(hfd, 0, SEEK_SET);
		CHECK(cnt_hold_decide_run(fds, names, 1, d, &all, &rej, NULL, fileno(rl), "rl", &r, &err) == 0);
		CHECK_EQ_INT(r.decided, 3);
		CHECK_EQ_INT(r.retracted, 3);
		CHECK(r.retraction_line && strstr(r.retraction_line, "\"cause\":\"fraud\",\"requested_by\":\"ts\","
			"\"authority\":\"case-1\",\"scope\":\"event\",\"selector\":{\"tenant_id\":\"utc\"},"
			"\"event_ids\":[\"e0\",\"e1\",\"e3\"]") != NULL);
		CHECK(strncmp(r.retraction_id, "r-", 2) == 0 && strlen(r.retraction_id) == 34);
		/* the decision lines continue the chain of the ledger */
		CHECK(strstr(r.decision_lines, "\"decision\":\"rejected\"") != NULL);
		CHECK(strstr(r.decision_lines, "\"prev\":\"00000000000000000000000000000000\"") == NULL);
		free(r.decision_lines);
		free(r.retraction_line);
		fclose(rl);
		/* a selection with no pending hold */
		all.member = "m2";
		lseek(hfd, 0, SEEK_SET);
		CHECK(cnt_hold_decide_run(fds, names, 1, d, &all, &rej, NULL, -1, "rl", &r, &err) == -1);
		CHECK_EQ_STR(err.msg, "no pending hold matches the selection");
	}
	/* an id in no file */
	{
		const char *none[1] = {"h-nope"};
		cnt_hold_sel s2 = {0};

		s2.ids = none;
		s2.nids = 1;
		lseek(hfd, 0, SEEK_SET);
		CHECK(cnt_hold_decide_run(fds, names, 1, d, &s2, &dec, NULL, -1, NULL, &r, &err) == -1);
		CHECK_EQ_STR(err.msg, "hold 'h-nope' is in no hold file given");
	}
	/* the list: states from the ledger, filters */
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		cnt_hold_sel ls = {0};
		uint64_t listed;

		ls.has_state = 1;
		ls.state = CNT_HOLD_CLEARED;
		lseek(hfd, 0, SEEK_SET);
		CHECK(cnt_hold_list(fds, names, 1, d, &ls, 1, line_to, out, &listed, &err) == 0);
		fclose(out);
		CHECK_EQ_INT(listed, 1);
		CHECK(buf && strstr(buf, "\"state\":\"cleared\",\"decided_by\":\"ana\"") != NULL &&
		      strstr(buf, "\"idempotency_key\":\"e2\"") != NULL);
		free(buf);
		out = open_memstream(&buf, &len);
		ls.has_state = 0;
		ls.has_signal = 1;
		ls.signal = CNT_HOLD_DEVICE;
		lseek(hfd, 0, SEEK_SET);
		CHECK(cnt_hold_list(fds, names, 1, d, &ls, 0, line_to, out, &listed, &err) == 0);
		fclose(out);
		CHECK_EQ_INT(listed, 2);
		CHECK(buf && strncmp(buf, "HOLD_ID", 7) == 0);
		free(buf);
	}
	cnt_decisions_free(d);
	close(dfd);
	close(hfd);
	fclose(seg);
	fclose(ledger);
}

static void test_states(void)
{
	cnt_hold_state s;

	CHECK(cnt_hold_state_parse("rejected", &s) == 0 && s == CNT_HOLD_REJECTED);
	CHECK(cnt_hold_state_parse("held", &s) != 0);
	CHECK_EQ_STR(cnt_hold_state_name(CNT_HOLD_PENDING), "pending");
}

int main(void)
{
	RUN(test_ledger_load);
	RUN(test_clear_then_refused);
	RUN(test_states);
	return unit_report("test_hold_decide");
}
