/* signals: --stats files as operator signals against thresholds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "ops/signals.h"
#include "unit.h"

static char dir[] = "/tmp/test_signals.XXXXXX";

static const char *file(const char *name, const char *text)
{
	static char path[4][256];
	static int k;
	char *p = path[k++ % 4];
	FILE *f;

	snprintf(p, 256, "%s/%s", dir, name);
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return p;
}

static const cnt_sig_row *get(const cnt_signals *s, const char *tool, const char *signal)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->rows[i].tool, tool) == 0 && strcmp(s->rows[i].signal, signal) == 0)
			return &s->rows[i];
	return NULL;
}

static void test_rows_and_flags(void)
{
	cnt_sig_limits l;
	cnt_signals s = CNT_SIGNALS_INIT;
	cnt_err err;
	const cnt_sig_row *r;

	cnt_sig_limits_default(&l);
	CHECK_EQ_INT(cnt_signals_add_file(&s, &l, file("i.json",
		"{\"tool\":\"cnt-ingest\",\"in\":10,\"rejected\":2,\"held\":0,\"balanced\":true,"
		"\"dedup_hit_rate\":0.25,\"rejected_by_reason\":{\"malformed\":0,\"too_old\":2}}"), &err), 0);
	CHECK_EQ_INT(cnt_signals_add_file(&s, &l, file("w.json",
		"{\"tool\":\"cnt-window\",\"balanced\":false,\"late_ratio\":0.05,\"top_key_share\":0.5}"), &err), 0);
	CHECK_EQ_INT(cnt_signals_add_file(&s, &l, file("r.json",
		"{\"tool\":\"cnt-rank\",\"as_of_age_s\":90,\"freshness_budget_s\":120}"), &err), 0);
	CHECK_EQ_INT(cnt_signals_add_file(&s, &l, file("p.json",
		"{\"tool\":\"cnt-project\",\"as_of_age_s\":null,\"freshness_budget_s\":60}"), &err), 0);
	CHECK(s.files == 4);
	r = get(&s, "cnt-ingest", "dedup_hit_rate");
	CHECK(r && r->has_limit && r->limit == 0.10 && r->flagged);
	CHECK(get(&s, "cnt-ingest", "held") == NULL);      /* 0 and no threshold: no row */
	r = get(&s, "cnt-ingest", "rejected_by_reason.too_old");
	CHECK(r && r->value == 2 && !r->flagged);
	CHECK(get(&s, "cnt-ingest", "rejected_by_reason.malformed") == NULL);
	r = get(&s, "cnt-window", "balanced");
	CHECK(r && r->flagged);
	r = get(&s, "cnt-window", "late_ratio");
	CHECK(r && !r->flagged);                          /* at the threshold: not beyond it */
	CHECK(get(&s, "cnt-window", "top_key_share")->flagged);
	r = get(&s, "cnt-rank", "as_of_age_s");
	CHECK(r && r->limit == 120 && !r->flagged);       /* the board's own budget */
	r = get(&s, "cnt-project", "as_of_age_s");
	CHECK(r && !r->has_value && !r->flagged);
	CHECK_EQ_INT(s.flagged, 3);
	cnt_signals_release(&s);

	/* a threshold given by the user wins over the budget; none never flags */
	CHECK_EQ_INT(cnt_sig_limits_set(&l, "as_of_age_s=30", &err), 0);
	CHECK_EQ_INT(cnt_sig_limits_set(&l, "top_key_share=none", &err), 0);
	CHECK_EQ_INT(cnt_signals_add_file(&s, &l, file("r.json",
		"{\"tool\":\"cnt-rank\",\"as_of_age_s\":90,\"freshness_budget_s\":120}"), &err), 0);
	CHECK_EQ_INT(cnt_signals_add_file(&s, &l, file("w.json",
		"{\"tool\":\"cnt-window\",\"top_key_share\":0.9}"), &err), 0);
	CHECK(get(&s, "cnt-rank", "as_of_age_s")->flagged);
	CHECK(!get(&s, "cnt-window", "top_key_share")->flagged && !get(&s, "cnt-window", "top_key_share")->has_limit);
	cnt_signals_release(&s);
}

static void test_outputs(void)
{
	cnt_sig_limits l;
	cnt_signals s = CNT_SIGNALS_INIT;
	cnt_buf b = CNT_BUF_INIT;
	cnt_err err;
	json_t *j;
	json_error_t je;

	cnt_sig_limits_default(&l);
	CHECK_EQ_INT(cnt_signals_add_file(&s, &l, file("d\"q\\.json",
		"{\"tool\":\"cnt-d\\\"iff\\\\\",\"differences\":3}"), &err), 0);
	CHECK_EQ_INT(cnt_signals_json(&s, &b), 0);
	j = json_loadb((const char *)b.p, b.len, 0, &je);
	CHECK(j != NULL);
	if (j) {
		json_t *r = json_array_get(json_object_get(j, "signals"), 0);

		CHECK(json_integer_value(json_object_get(j, "flagged")) == 1);
		CHECK_EQ_STR(json_string_value(json_object_get(r, "tool")), "cnt-d\"iff\\");
		CHECK(strstr(json_string_value(json_object_get(r, "file")), "d\"q\\.json") != NULL);
		CHECK(json_number_value(json_object_get(r, "value")) == 3);
		CHECK(json_number_value(json_object_get(r, "threshold")) == 0);
		CHECK(json_is_true(json_object_get(r, "flagged")));
		json_decref(j);
	}
	b.len = 0;
	CHECK_EQ_INT(cnt_signals_table(&s, &b), 0);
	CHECK(cnt_buf_append(&b, "", 1) == 0);
	CHECK(strstr((char *)b.p, "differences") != NULL && strstr((char *)b.p, "FLAGGED") != NULL &&
	      strstr((char *)b.p, "1 file, 1 signal, 1 flagged\n") != NULL);
	cnt_buf_release(&b);
	cnt_signals_release(&s);
}

static void test_errors(void)
{
	cnt_sig_limits l;
	cnt_signals s = CNT_SIGNALS_INIT;
	cnt_err err;

	cnt_sig_limits_default(&l);
	CHECK(cnt_signals_add_file(&s, &l, file("bad.json", "{\"tool\":"), &err) == -1 &&
	      strstr(err.msg, "bad.json': line 1") != NULL);
	CHECK(cnt_signals_add_file(&s, &l, file("notool.json", "{\"in\":1}"), &err) == -1 &&
	      strstr(err.msg, "not the --stats object of a cnt tool") != NULL);
	CHECK(cnt_signals_add_file(&s, &l, "/nonexistent/x.json", &err) == -1 &&
	      strstr(err.msg, "cannot read statistics '/nonexistent/x.json'") != NULL);
	CHECK(s.n == 0 && s.files == 0);
	CHECK(cnt_sig_limits_set(&l, "late_ratio", &err) == -1 && strstr(err.msg, "expected NAME=VALUE"));
	CHECK(cnt_sig_limits_set(&l, "lateness=1", &err) == -1 && strstr(err.msg, "unknown signal 'lateness'"));
	CHECK(cnt_sig_limits_set(&l, "late_ratio=-1", &err) == -1 && strstr(err.msg, "not a number >= 0"));
	CHECK(cnt_sig_limits_set(&l, "late_ratio=0.1x", &err) == -1);
	CHECK(cnt_sig_limits_set(&l, "late_ratio=", &err) == -1);
	CHECK(cnt_sig_limits_load(&l, file("t.json", "{\"late_ratio\": 0.2, \"held\": 5, \"top_key_share\": null}"),
		&err) == 0);
	CHECK(l.limit[CNT_SIG_LATE_RATIO] == 0.2 && l.has[CNT_SIG_HELD] && !l.has[CNT_SIG_TOP_KEY_SHARE]);
	CHECK(cnt_sig_limits_load(&l, file("t.json", "{\"late\": 1}"), &err) == -1 &&
	      strstr(err.msg, "unknown signal 'late'"));
	CHECK(cnt_sig_limits_load(&l, file("t.json", "{\"late_ratio\": \"1\"}"), &err) == -1 &&
	      strstr(err.msg, "late_ratio: expected a number >= 0 or null"));
	CHECK(cnt_sig_limits_load(&l, file("t.json", "[1]"), &err) == -1);
	CHECK_EQ_STR(cnt_sig_name(CNT_SIG_CANARY_AGE_S), "canary_age_s");
}

int main(void)
{
	if (mkdtemp(dir) == NULL)
		return 1;
	RUN(test_rows_and_flags);
	RUN(test_outputs);
	RUN(test_errors);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return unit_report("test_signals");
}
