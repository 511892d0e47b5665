/*
 * diff_cli.c - cnt-diff's run after its options (see diff_cli.h).
 */
#include "cli/diff_cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "view/viewdiff.h"

static const char *const from_names[] = {"exact", "--tolerance", "declared", "default"};

/* The keys both comparisons give, in this order. */
static void counts(cnt_stats *s, uint64_t left, uint64_t right, uint64_t shown, uint64_t only_left,
	uint64_t only_right, uint64_t changed)
{
	cnt_stats_u64(s, "in", left + right);
	cnt_stats_u64(s, "out", shown);
	cnt_stats_u64(s, "left", left);
	cnt_stats_u64(s, "right", right);
	cnt_stats_u64(s, "only_left", only_left);
	cnt_stats_u64(s, "only_right", only_right);
	cnt_stats_u64(s, "changed", changed);
}

static void write_view_stats(const char *path, const cnt_viewdiff_stats *st)
{
	cnt_stats s;

	cnt_stats_begin(&s);
	cnt_stats_str(&s, "compared", "views", -1);
	counts(&s, st->left, st->right, st->shown, st->only_left, st->only_right, st->changed);
	cnt_stats_u64(&s, "fields", st->fields);
	cnt_stats_u64(&s, "differences", st->only_left + st->only_right + st->changed + st->fields);
	cnt_stats_double(&s, "tolerance", st->tolerance);
	cnt_stats_str(&s, "tolerance_from", from_names[st->from], -1);
	cnt_stats_bool(&s, "equal", !cnt_viewdiff_differ(st));
	cnt_stats_write(&s, path);
}

/* Two view directories: 0 or 1 as diff(1). */
static int views(const char *l, const char *r, const cnt_diff_opts *o, const cnt_cli_common *co)
{
	cnt_viewdiff_opts vo = {o->tolerance_given ? o->tolerance : -1, o->max_shown, o->quiet, o->fd, o->tick, o->defs};
	cnt_viewdiff_stats st;
	cnt_err err;

	cnt_progress_start(co);
	if (cnt_viewdiff(l, r, &vo, &st, &err) != 0)
		cnt_die_err(&err);
	if (co->stats_path)
		write_view_stats(co->stats_path, &st);
	if (co->verbose)
		cnt_cli_note("%" PRIu64 " left, %" PRIu64 " right members: %" PRIu64 " only left, %" PRIu64
			" only right, %" PRIu64 " changed, %" PRIu64 " description fields differ",
			st.left, st.right, st.only_left, st.only_right, st.changed, st.fields);
	if (co->verbose)
		cnt_cli_note("tolerance %g (%s)", st.tolerance, from_names[st.from]);
	cnt_cli_finish();
	return cnt_viewdiff_differ(&st) ? CNT_EXIT_DIFFER : CNT_EXIT_OK;
}

static int is_dir(const char *path)
{
	struct stat sb;

	return strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static void write_stats(const char *path, const cnt_diff_stats *st, int no_days)
{
	cnt_stats s;

	cnt_stats_begin(&s);
	counts(&s, st->left, st->right, st->shown, st->only_left, st->only_right, st->changed);
	cnt_stats_u64(&s, "differences", st->only_left + st->only_right + st->changed);
	cnt_stats_bool(&s, "equal", !cnt_diff_differ(st));
	cnt_stats_object(&s, "days");
	cnt_stats_bool(&s, "compared", !no_days);
	cnt_stats_bool(&s, "in_left", st->days_left);
	cnt_stats_bool(&s, "in_right", st->days_right);
	cnt_stats_u64(&s, "left", st->days.left);
	cnt_stats_u64(&s, "right", st->days.right);
	cnt_stats_u64(&s, "only_left", st->days.only_left);
	cnt_stats_u64(&s, "only_right", st->days.only_right);
	cnt_stats_u64(&s, "changed", st->days.changed);
	cnt_stats_close(&s);
	if (st->counters != NULL) {
		cnt_stats_array(&s, "counters");
		for (size_t i = 0; i < st->ncounters; i++) {
			const cnt_diff_counter *c = &st->counters[i];

			cnt_stats_object(&s, NULL);
			cnt_stats_str(&s, "tenant_id", c->tenant_id, -1);
			cnt_stats_str(&s, "counter_id", c->counter_id, -1);
			cnt_stats_u64(&s, "counter_version", (uint64_t)c->counter_version);
			cnt_stats_str(&s, "type", c->declared ? cnt_defs_ctype_name(c->type) : "undeclared", -1);
			cnt_stats_double(&s, "tolerance", c->tolerance);
			cnt_stats_str(&s, "tolerance_from", cnt_diff_tol_name(c->from), -1);
			cnt_stats_close(&s);
		}
		cnt_stats_close(&s);
	}
	cnt_stats_write(&s, path);
}

int cnt_diff_main(int argc, char **argv, const char *defs_path, cnt_diff_opts *o, const cnt_cli_common *co,
	const char *who)
{
	cnt_defs *defs = NULL;
	cnt_diff_stats st;
	cnt_err err;
	int c, lfd, rfd;

	if (argc < 2)
		cnt_die_usage("two bucket files or two view directories are needed");
	cnt_cli_max_operands(argc, argv, 0, 2, "two bucket files or two view directories");
	if (is_dir(argv[0]) != is_dir(argv[1]))
		cnt_die_usage("'%s' is a %s but '%s' is not: compare two bucket files or two view directories",
			is_dir(argv[0]) ? argv[0] : argv[1], "directory",
			is_dir(argv[0]) ? argv[1] : argv[0]);
	if ((who = cnt_cli_tenant(who)) != NULL && is_dir(argv[0])) {
		cnt_cli_tenant_guard_path(who, argv[0]);
		cnt_cli_tenant_guard_path(who, argv[1]);
	}
	if (defs_path != NULL && (o->defs = defs = cnt_defs_load(defs_path, &err)) == NULL)
		cnt_die_err(&err);
	if (is_dir(argv[0]) && o->no_days)
		cnt_die_usage("--no-days is for bucket files: views have no day roll-ups");
	if (is_dir(argv[0])) {
		c = views(argv[0], argv[1], o, co);
		cnt_defs_free(defs);
		return c;
	}
	if (o->tolerance < 0)
		o->tolerance = 0;
	if (strcmp(argv[0], "-") == 0 && strcmp(argv[1], "-") == 0)
		cnt_die_usage("only one side can be standard input");
	lfd = cnt_cli_open_in(argv[0]);
	rfd = cnt_cli_open_in(argv[1]);
	cnt_cli_tenant_guard(who, lfd, argv[0]);
	cnt_cli_tenant_guard(who, rfd, argv[1]);
	cnt_progress_start(co);
	cnt_progress_input(lfd, argv[0]);
	if (cnt_diff_buckets(lfd, argv[0], rfd, argv[1], o, &st, &err) != 0)
		cnt_die_err(&err);
	cnt_cli_close_in(lfd);
	cnt_cli_close_in(rfd);
	if (co->stats_path)
		write_stats(co->stats_path, &st, o->no_days);
	if ((st.days.left == 0) != (st.days.right == 0) && !o->quiet) {
		const char *l = strcmp(argv[0], "-") ? argv[0] : "standard input";
		const char *r = strcmp(argv[1], "-") ? argv[1] : "standard input";

		/* every day record of one side is a difference: say why */
		cnt_cli_note("'%s' has %" PRIu64 " day records and '%s' has none: each is a difference (--no-days compares hourly records only)",
			st.days.left ? l : r, st.days.left + st.days.right, st.days.left ? r : l);
	}
	if (co->verbose)
		cnt_cli_note("%" PRIu64 " left, %" PRIu64 " right: %" PRIu64 " only left, %" PRIu64
			" only right, %" PRIu64 " changed", st.left, st.right, st.only_left, st.only_right, st.changed);
	if (co->verbose && !o->no_days)
		cnt_cli_note("of which day records: %" PRIu64 " left, %" PRIu64 " right: %" PRIu64 " only left, %" PRIu64
			" only right, %" PRIu64 " changed", st.days.left, st.days.right, st.days.only_left,
			st.days.only_right, st.days.changed);
	for (size_t i = 0; co->verbose && i < st.ncounters; i++)
		cnt_cli_note("%s/%s v%d: %s, tolerance %g (%s)", st.counters[i].tenant_id, st.counters[i].counter_id,
			st.counters[i].counter_version, st.counters[i].declared ? cnt_defs_ctype_name(st.counters[i].type) :
			"undeclared", st.counters[i].tolerance, cnt_diff_tol_name(st.counters[i].from));
	cnt_diff_stats_release(&st);
	cnt_defs_free(defs);
	cnt_cli_finish();
	return cnt_diff_differ(&st) ? CNT_EXIT_DIFFER : CNT_EXIT_OK;
}
