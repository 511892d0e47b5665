/*
 * test_explain.c - view/explain: when a published answer agrees with the
 * re-derived one (exact ranks, bands beyond the head, absent members), and
 * the JSON form of an explanation (escaping, fields by fate, counts).
 * The whole run over a log is tested by tests/explain.bats.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "unit.h"
#include "view/explain.h"

static void test_agrees(void)
{
	cnt_explain x = {.found = 1, .value = 42, .rank = 7};
	cnt_explain_check c = {.have = 1, .found = 1, .value = 42, .exact = 1, .rank = 7};

	CHECK_EQ_INT(cnt_explain_agrees(&x, &c), 1);
	c.rank = 6;
	CHECK_EQ_INT(cnt_explain_agrees(&x, &c), 0);
	c.rank = 7;
	c.value = 41;
	CHECK_EQ_INT(cnt_explain_agrees(&x, &c), 0);
	/* beyond the head: the band must hold the rank, ends included */
	c.value = 42;
	c.exact = 0;
	c.band_lo = 7;
	c.band_hi = 9;
	CHECK_EQ_INT(cnt_explain_agrees(&x, &c), 1);
	c.band_lo = 8;
	CHECK_EQ_INT(cnt_explain_agrees(&x, &c), 0);
	c.band_lo = 1;
	c.band_hi = 6;
	CHECK_EQ_INT(cnt_explain_agrees(&x, &c), 0);
	/* absent on one side only, on both */
	c.found = 0;
	CHECK_EQ_INT(cnt_explain_agrees(&x, &c), 0);
	x.found = 0;
	CHECK_EQ_INT(cnt_explain_agrees(&x, &c), 1);
	/* nothing to check never agrees by accident */
	c.have = 0;
	CHECK_EQ_INT(cnt_explain_agrees(&x, &c), 0);
}

static void test_json(void)
{
	cnt_leaderboard b = {.board_id = "bo\"ard", .tenant_id = "t", .counter_id = "c"};
	cnt_explain_opts o = {.board = &b, .member = "m\\1", .from = 0, .to = 3600000, .window_label = "day"};
	char s_log[] = "log.avro", s_id[] = "abc", s_key[] = "k\n1", s_in[] = "in.jsonl", s_reason[] = "bad_field",
		s_msg[] = "delta \"x\"";
	cnt_explain_event ev[2];
	cnt_explain x;
	cnt_explain_check c = {.have = 1, .what = "view v1", .found = 1, .value = 5, .exact = 1, .rank = 2};
	cnt_buf out = CNT_BUF_INIT;
	char *line, *save = NULL;
	int n = 0;

	memset(ev, 0, sizeof(ev));
	memset(&x, 0, sizeof(x));
	ev[0].fate = CNT_FATE_LATE;
	ev[0].source = s_log;
	ev[0].position = 3;
	ev[0].event_id = s_id;
	ev[0].idempotency_key = s_key;
	ev[0].delta = 5;
	ev[0].has_times = 1;
	ev[0].event_time = 1000;
	ev[0].ingest_time = 4000000;
	ev[0].deadline = 3600000;
	ev[1].fate = CNT_FATE_REJECTED;
	ev[1].source = s_in;
	ev[1].position = 9;
	ev[1].reason = s_reason;
	ev[1].message = s_msg;
	x.ev = ev;
	x.n = 2;
	x.by_fate[CNT_FATE_LATE] = 1;
	x.by_fate[CNT_FATE_REJECTED] = 1;
	x.found = 1;
	x.value = 5;
	x.rank = 2;
	x.members = 3;
	x.as_of = 4000000;
	x.scope = "global";
	CHECK_EQ_INT(cnt_explain_format_json(&o, &x, &c, 1, &out), 0);
	CHECK_EQ_INT(cnt_buf_putc(&out, 0), 0);
	for (line = strtok_r((char *)out.p, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		json_error_t je;
		json_t *j = json_loads(line, 0, &je);
		const char *kind;

		CHECK(j != NULL);
		if (j == NULL)
			continue;
		kind = json_string_value(json_object_get(j, "kind"));
		if (n == 0) {
			CHECK_EQ_STR(json_string_value(json_object_get(j, "fate")), "late");
			CHECK_EQ_STR(json_string_value(json_object_get(j, "idempotency_key")), "k\n1");
			CHECK_EQ_INT(json_integer_value(json_object_get(j, "late_by_ms")), 400000);
			CHECK_EQ_INT(json_integer_value(json_object_get(j, "record")), 3);
		} else if (n == 1) {
			CHECK_EQ_STR(json_string_value(json_object_get(j, "fate")), "rejected");
			CHECK_EQ_STR(json_string_value(json_object_get(j, "message")), "delta \"x\"");
			CHECK_EQ_INT(json_integer_value(json_object_get(j, "line")), 9);
			CHECK(json_is_null(json_object_get(j, "event_id")));
		} else if (n == 2) {
			CHECK_EQ_STR(kind, "standing");
			CHECK_EQ_STR(json_string_value(json_object_get(j, "board")), "bo\"ard");
			CHECK_EQ_STR(json_string_value(json_object_get(j, "member")), "m\\1");
			CHECK_EQ_INT(json_integer_value(json_object_get(j, "rank")), 2);
			CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(j, "fates"), "late")), 1);
			CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(j, "fates"), "counted")), 0);
		} else {
			CHECK_EQ_STR(kind, "check");
			CHECK(json_is_true(json_object_get(j, "agrees")));
		}
		json_decref(j);
	}
	CHECK_EQ_INT(n, 4);
	cnt_buf_release(&out);
}

static void test_fate_names(void)
{
	CHECK_EQ_STR(cnt_fate_name(CNT_FATE_COUNTED), "counted");
	CHECK_EQ_STR(cnt_fate_name(CNT_FATE_OUTSIDE), "outside_window");
	CHECK_EQ_STR(cnt_fate_name(CNT_FATE_INGEST_DUPLICATE), "ingest_duplicate");
	CHECK_EQ_STR(cnt_fate_name(CNT_FATE_N), "?");
}

int main(void)
{
	RUN(test_agrees);
	RUN(test_json);
	RUN(test_fate_names);
	return unit_report("test_explain");
}
