/*
 * cnt-rank - answer top-N, a member's rank, value and neighbourhood from a
 * published ranked view, with a version and an as-of on every answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/outfile.h"
#include "cli/legacy.h"
#include "model/event.h"
#include "base/fpset.h"
#include "avro/json.h"
#include "view/project.h"
#include "time/timefmt.h"
#include "view/view.h"

static const char usage[] =
	"usage: cnt-rank -D views -b board [-s scope] [--version n] [--now time]\n"
	"                [--overlay events] [--directory file] [--table]\n"
	"                top [n] | rank member | around member [k] | value member\n";

static const char help[] =
	"Answer from a board's published view (or a pinned version): the top N, a\n"
	"member's rank (exact inside the materialised head, a band from the histogram\n"
	"beyond it), the neighbourhood of +-k positions around a member, a member's\n"
	"value.  Every answer carries board, scope, version, as-of and whether the\n"
	"view is stale against the board's freshness budget.\n"
	"\n"
	"  -D, --views DIR         the view directory written by cnt-project\n"
	"  -b, --board ID          the leaderboard\n"
	"  -s, --scope KEY         the scope (default global)\n"
	"      --version N         answer from version N instead of the published one\n"
	"      --now TIME          the time staleness is judged at (default: clock)\n"
	"      --overlay FILE      the asking member's events since the view was built\n"
	"                          (a log segment): those the view has not absorbed are\n"
	"                          added to the member's value before ranking\n"
	"      --directory FILE    display names and opt-outs, JSON lines\n"
	"                          {\"member_ref\":..,\"display_name\":..,\"opted_out\":..}\n"
	"      --table             a table instead of JSON\n"
	"  -h, --help              this help\n"
	"      --version-info      print the version\n"
	"\n"
	"See cnt-rank(1) and cnt-view(5).\n";

static cnt_err err;
static cnt_buf out = CNT_BUF_INIT;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("cnt-rank: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	/* _exit: a fatal error ends the process here; memory is the
	 * kernel's to reclaim (the sanitizers' leak check is for the
	 * paths that finish, which free everything). */
	_exit(CNT_EXIT_TROUBLE);
}

static void oom(int rc)
{
	if (rc != 0)
		die("out of memory");
}

/* What the answer needs to know about the view, from its description. */
typedef struct vinfo {
	json_t *desc;
	const char *board, *scope, *tenant, *counter;
	int counter_version;       /* 0: every version */
	cnt_counter_type type;
	int version;
	int64_t as_of, from, to, freshness_s;
	int has_as_of;             /* 0: the view covers no log at all */
	cnt_leaderboard lb;        /* order, tie-break, numbering for comparisons */
} vinfo;

static void read_desc(const cnt_view *v, vinfo *vi)
{
	json_error_t je;
	json_t *tb, *x;
	size_t i;

	vi->desc = json_loadb(v->desc, v->desc_len, 0, &je);
	if (vi->desc == NULL)
		die("the view's description is not JSON: %s; rebuild it with cnt-project", je.text);
	vi->board = json_string_value(json_object_get(vi->desc, "board"));
	vi->scope = json_string_value(json_object_get(vi->desc, "scope"));
	vi->tenant = json_string_value(json_object_get(vi->desc, "tenant_id"));
	vi->counter = json_string_value(json_object_get(vi->desc, "counter_id"));
	vi->counter_version = (int)json_integer_value(json_object_get(vi->desc, "counter_version"));
	vi->version = (int)json_integer_value(json_object_get(vi->desc, "version"));
	x = json_object_get(vi->desc, "counter_type");
	vi->type = !json_is_string(x) ? CNT_CTYPE_EXACT : strcmp(json_string_value(x), "unique") == 0 ? CNT_CTYPE_UNIQUE :
		strcmp(json_string_value(x), "min") == 0 ? CNT_CTYPE_MIN : strcmp(json_string_value(x), "max") == 0 ? CNT_CTYPE_MAX :
		CNT_CTYPE_EXACT;
	x = json_object_get(vi->desc, "as_of");
	vi->has_as_of = json_is_integer(x);
	vi->as_of = vi->has_as_of ? json_integer_value(x) : INT64_MIN;
	vi->freshness_s = json_integer_value(json_object_get(vi->desc, "freshness_budget_s"));
	x = json_object_get(vi->desc, "window");
	vi->from = json_integer_value(json_object_get(x, "from"));
	vi->to = json_integer_value(json_object_get(x, "to"));
	memset(&vi->lb, 0, sizeof(vi->lb));
	vi->lb.order_asc = strcmp(json_string_value(json_object_get(vi->desc, "order")) ?: "desc", "asc") == 0;
	x = json_object_get(vi->desc, "rank_numbering");
	vi->lb.rank_numbering = json_string_value(x) && strcmp(json_string_value(x), "dense") == 0 ? CNT_RANK_DENSE :
		json_string_value(x) && strcmp(json_string_value(x), "ordinal") == 0 ? CNT_RANK_ORDINAL : CNT_RANK_COMPETITION;
	tb = json_object_get(vi->desc, "tie_break");
	json_array_foreach(tb, i, x) {
		const char *t = json_string_value(x);

		if (i >= CNT_TIE_MAX || t == NULL)
			break;
		vi->lb.tie_break[i] = strcmp(t, "earliest_achiever") == 0 ? CNT_TIE_EARLIEST_ACHIEVER :
			strcmp(t, "latest_achiever") == 0 ? CNT_TIE_LATEST_ACHIEVER : CNT_TIE_MEMBER_REF_ASC;
		vi->lb.ntie_break = i + 1;
	}
	if (vi->board == NULL || vi->scope == NULL || vi->tenant == NULL || vi->counter == NULL)
		die("the view's description lacks board, scope, tenant or counter; rebuild it with cnt-project");
}

/* ---- the member directory -------------------------------------------- */

typedef struct dirent_ {
	char *member, *name;
	int opted_out;
} dir_entry;

typedef struct directory {
	dir_entry *e;
	size_t n;
} directory;

static void load_directory(directory *d, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, dcap = 0;
	ssize_t len;
	unsigned long long no = 0;

	memset(d, 0, sizeof(*d));
	if (f == NULL)
		die("cannot open the member directory '%s': %s", path, strerror(errno));
	while ((len = getline(&line, &cap, f)) > 0) {
		json_error_t je;
		json_t *j;
		const char *m, *nm;

		no++;
		if (len <= 1)
			continue;
		j = json_loadb(line, (size_t)len, 0, &je);
		m = json_string_value(json_object_get(j, "member_ref"));
		nm = json_string_value(json_object_get(j, "display_name"));
		if (j == NULL || m == NULL)
			die("'%s' line %llu: expected a JSON object with member_ref", path, no);
		if (d->n == dcap) {
			dir_entry *v = realloc(d->e, (dcap = dcap ? dcap * 2 : 64) * sizeof(*v));

			if (v == NULL)
				die("out of memory");
			d->e = v;
		}
		d->e[d->n].member = strdup(m);
		d->e[d->n].name = nm ? strdup(nm) : NULL;
		d->e[d->n].opted_out = json_is_true(json_object_get(j, "opted_out"));
		d->n++;
		json_decref(j);
	}
	free(line);
	fclose(f);
}

static const dir_entry *dir_find(const directory *d, const char *m, size_t n)
{
	/* The last line for a member wins. */
	for (size_t i = d->n; i-- > 0;)
		if (strlen(d->e[i].member) == n && memcmp(d->e[i].member, m, n) == 0)
			return &d->e[i];
	return NULL;
}

/* ---- answers --------------------------------------------------------- */

static void head_json(const vinfo *vi, int64_t now, int frozen)
{
	int stale = !vi->has_as_of || (vi->freshness_s > 0 && now > vi->as_of + vi->freshness_s * 1000);
	char t[40];

	oom(cnt_buf_append(&out, "{\"board\":", 9));
	oom(cnt_json_string(&out, (const uint8_t *)vi->board, strlen(vi->board), 0));
	oom(cnt_buf_append(&out, ",\"scope\":", 9));
	oom(cnt_json_string(&out, (const uint8_t *)vi->scope, strlen(vi->scope), 0));
	if (vi->has_as_of) {
		cnt_time_format_rfc3339(vi->as_of, t);
		oom(cnt_buf_printf(&out, ",\"version\":%d,\"as_of\":\"%s\",\"as_of_ms\":%" PRId64, vi->version, t, vi->as_of));
	} else {
		oom(cnt_buf_printf(&out, ",\"version\":%d,\"as_of\":null,\"as_of_ms\":null", vi->version));
	}
	oom(cnt_buf_printf(&out, ",\"stale\":%s,\"frozen\":%s", stale ? "true" : "false", frozen ? "true" : "false"));
}

static void entry_json(const cnt_view *v, const directory *d, const cnt_view_entry *e, int exact_rank)
{
	const dir_entry *de = d ? dir_find(d, v->pool + e->name_off, e->name_len) : NULL;

	oom(cnt_buf_append(&out, "{\"member_ref\":", 14));
	oom(cnt_json_string(&out, (const uint8_t *)v->pool + e->name_off, e->name_len, 0));
	if (de && de->name) {
		oom(cnt_buf_append(&out, ",\"display_name\":", 16));
		oom(cnt_json_string(&out, (const uint8_t *)de->name, strlen(de->name), 0));
	}
	if (exact_rank)
		oom(cnt_buf_printf(&out, ",\"rank\":%u", e->rank));
	oom(cnt_buf_printf(&out, ",\"value\":%" PRId64 ",\"last_event_time\":%" PRId64 "}", e->value, e->last_event_time));
}

/* Where value falls against the histogram, in rank direction: 0 in a bin
 * (*bin set), -1 beyond the best end (better than every member), +1 beyond
 * the worst end (worse than every member: only an overlaid value can lie
 * outside the edges). */
static int place(const cnt_view *v, const vinfo *vi, int64_t value, size_t *bin)
{
	int below = value < v->edges[0], above = value > v->edges[v->nbins];

	*bin = cnt_view_bin(v, value);
	if (!below && !above)
		return 0;
	return below == vi->lb.order_asc ? -1 : 1;
}

/* The rank band of value from the histogram: members in better bins, and
 * those sharing the value's bin.  self is the member's position in the view
 * (-1: not in it); its own entry, which may hold an older value, is not
 * counted as someone else. */
static void band(const cnt_view *v, const vinfo *vi, int64_t value, int64_t self, uint64_t *lo, uint64_t *hi)
{
	size_t b, ob;
	int where = place(v, vi, value, &b);
	uint64_t better = 0, same = 0;

	if (where > 0) {
		better = v->n;
	} else if (where == 0) {
		if (vi->lb.order_asc)
			for (size_t i = 0; i < b; i++)
				better += v->counts[i];
		else
			for (size_t i = b + 1; i < v->nbins; i++)
				better += v->counts[i];
		same = v->counts[b];
	}
	if (self >= 0) {
		int owhere = place(v, vi, v->entries[self].value, &ob);

		/* the old value is inside the edges (the view was built with it) */
		if (owhere == 0 && where == 0 && ob == b && same > 0)
			same--;
		else if (owhere == 0 && (where > 0 || (where == 0 && (vi->lb.order_asc ? ob < b : ob > b))) && better > 0)
			better--;
	}
	*lo = better + 1;
	*hi = better + same + 1;
}

/* The rank a (possibly overlaid) entry would have, against the head:
 * -1 when it falls beyond the head. */
static int64_t rank_in_head(const cnt_view *v, const vinfo *vi, const cnt_view_entry *me, const char *mn, int64_t self)
{
	uint64_t above = 0, lo = 0, hi = v->head;

	/* Binary search: the first head position that ranks below me. */
	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;
		const cnt_view_entry *e = &v->entries[mid];

		if (cnt_proj_cmp(&vi->lb, e, v->pool + e->name_off, me, mn) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	above = lo;
	if (self >= 0 && (uint64_t)self < lo)
		above--;   /* my own old entry does not count */
	if (above >= v->head && v->head < v->n)
		return -1;
	if (vi->lb.rank_numbering == CNT_RANK_ORDINAL)
		return (int64_t)above + 1;
	/* A tie with a neighbour shares its rank. */
	for (int64_t k = (int64_t)lo - 1; k <= (int64_t)lo; k++) {
		if (k < 0 || (uint64_t)k >= v->head || k == self)
			continue;
		if (cnt_proj_tied(&vi->lb, &v->entries[k], me))
			return v->entries[k].rank;
	}
	if (vi->lb.rank_numbering == CNT_RANK_DENSE) {
		int64_t k = (int64_t)lo - 1;

		if (k == self)
			k--;
		return k >= 0 ? (int64_t)v->entries[k].rank + 1 : 1;
	}
	return (int64_t)above + 1;
}

/* Adds the member's events the view has not absorbed (ingest_time after
 * its log position, inside its window, each event_id once) as the
 * counter's type adds them: sums for exact counters, the smaller or larger
 * value for min and max ones.  A unique counter's distinct items cannot be
 * added without the view's sketches: the overlay then says unsupported
 * and leaves the value alone. */
static int overlay(const char *path, const vinfo *vi, const char *member, cnt_view_entry *me,
	int have, uint64_t *events, int64_t *delta)
{
	int fd = cnt_cli_old_open_in(path, &err);
	cnt_event_in *in;
	cnt_event e;
	cnt_fpset seen;
	size_t mn = strlen(member);
	int rc;

	if (fd < 0)
		die("overlay: %s", err.msg);
	if (vi->type == CNT_CTYPE_UNIQUE) {
		cnt_cli_old_close_in(fd);
		return -1;
	}
	in = cnt_event_in_open(fd, path, NULL, &err);
	if (in == NULL)
		die("%s", err.msg);
	if (cnt_fpset_init(&seen, 1024) != 0)
		die("out of memory");
	while ((rc = cnt_event_in_next(in, &e, &err)) != 0) {
		const void *part = e.event_id.p;
		int added;

		if (rc < 0)
			die("%s", err.msg);
		if (e.ingest_time <= vi->as_of || e.event_time < vi->from || e.event_time >= vi->to ||
		    e.member_ref.n != mn || memcmp(e.member_ref.p, member, mn) != 0 ||
		    e.tenant_id.n != strlen(vi->tenant) || memcmp(e.tenant_id.p, vi->tenant, e.tenant_id.n) != 0 ||
		    e.counter_id.n != strlen(vi->counter) || memcmp(e.counter_id.p, vi->counter, e.counter_id.n) != 0 ||
		    (vi->counter_version && e.counter_version != vi->counter_version) || e.retracts.p)
			continue;
		added = cnt_fpset_add(&seen, cnt_fp_of(1, &part, &e.event_id.n), 0, NULL);
		if (added < 0)
			die("out of memory");
		if (added == 0)
			continue;   /* a redelivered copy */
		switch (vi->type) {
		case CNT_CTYPE_MIN:
			if (!have || e.delta < me->value)
				me->value = e.delta;
			break;
		case CNT_CTYPE_MAX:
			if (!have || e.delta > me->value)
				me->value = e.delta;
			break;
		default:
			me->value += e.delta;
			break;
		}
		have = 1;
		*delta += e.delta;
		if (e.event_time > me->last_event_time)
			me->last_event_time = e.event_time;
		(*events)++;
	}
	cnt_fpset_release(&seen);
	cnt_event_in_free(in);
	cnt_cli_old_close_in(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"views", required_argument, NULL, 'D'},
		{"board", required_argument, NULL, 'b'},
		{"scope", required_argument, NULL, 's'},
		{"version", required_argument, NULL, 'n'},
		{"now", required_argument, NULL, 'N'},
		{"overlay", required_argument, NULL, 'O'},
		{"directory", required_argument, NULL, 'R'},
		{"table", no_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{"version-info", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	const char *views = NULL, *board = NULL, *scope = "global", *overlay_path = NULL, *dir_path = NULL, *cmd;
	int version = 0, table = 0, c, have_now = 0, frozen;
	int64_t now = 0;
	char sdir[4096], vdir[4200];
	cnt_view v;
	vinfo vi;
	directory d, *dp = NULL;

	while ((c = getopt_long(argc, argv, "+D:b:s:h", longopts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'D': views = optarg; break;
		case 'b': board = optarg; break;
		case 's': scope = optarg; break;
		case 'n':
			errno = 0;
			version = (int)strtol(optarg, &end, 10);
			if (errno || *end || version <= 0)
				die("--version: '%s' is not a version number", optarg);
			break;
		case 'N':
			if (cnt_time_parse_arg(optarg, &now) != 0)
				die("--now: '%s' is not an RFC 3339 time or epoch milliseconds", optarg);
			have_now = 1;
			break;
		case 'O': overlay_path = optarg; break;
		case 'R': dir_path = optarg; break;
		case 't': table = 1; break;
		case 'h':
			fputs(usage, stdout);
			fputs(help, stdout);
			return 0;
		case 'V':
			puts("cnt-rank " CNT_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return CNT_EXIT_TROUBLE;
		}
	}
	if (views == NULL || board == NULL || optind >= argc) {
		fputs("cnt-rank: -D views, -b board and a question are required\n", stderr);
		fputs(usage, stderr);
		return CNT_EXIT_TROUBLE;
	}
	cmd = argv[optind];
	if (!have_now) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	}
	if (cnt_viewdir_path(sdir, sizeof(sdir), views, board, scope) != 0)
		die("path too long");
	if (version == 0 && cnt_viewdir_current(sdir, &version, &err) != 0)
		die("%s", err.msg);
	if (version == 0)
		die("board '%s' scope '%s' has no published view in '%s' (cnt-project builds and publishes one)", board, scope, views);
	snprintf(vdir, sizeof(vdir), "%s/v%06d", sdir, version);
	if (cnt_view_open(&v, vdir, &err) != 0)
		die("%s", err.msg);
	read_desc(&v, &vi);
	frozen = cnt_viewdir_frozen(sdir);
	if (dir_path) {
		load_directory(&d, dir_path);
		dp = &d;
	}
	head_json(&vi, now, frozen);
	if (strcmp(cmd, "top") == 0) {
		long long n = optind + 1 < argc ? strtoll(argv[optind + 1], NULL, 10) : 10;

		if (n <= 0)
			die("top: '%s' is not a positive count", argv[optind + 1]);
		if ((uint64_t)n > v.head)
			n = (long long)v.head;
		oom(cnt_buf_printf(&out, ",\"top\":%lld,\"members\":%" PRIu64 ",\"entries\":[", n, v.n));
		for (long long i = 0; i < n; i++) {
			if (i)
				oom(cnt_buf_putc(&out, ','));
			entry_json(&v, dp, &v.entries[i], 1);
		}
		oom(cnt_buf_append(&out, "]", 1));
	} else if (strcmp(cmd, "rank") == 0 || strcmp(cmd, "value") == 0 || strcmp(cmd, "around") == 0) {
		const char *m;
		int64_t pos;
		cnt_view_entry me;
		uint64_t oevents = 0;
		int64_t odelta = 0;

		if (optind + 1 >= argc)
			die("%s: which member?", cmd);
		m = argv[optind + 1];
		pos = cnt_view_find(&v, m, strlen(m));
		oom(cnt_buf_append(&out, ",\"member_ref\":", 14));
		oom(cnt_json_string(&out, (const uint8_t *)m, strlen(m), 0));
		if (pos < 0 && overlay_path == NULL) {
			oom(cnt_buf_append(&out, ",\"found\":false", 14));
			goto done;
		}
		if (pos >= 0) {
			me = v.entries[pos];
		} else {
			memset(&me, 0, sizeof(me));
			me.last_event_time = INT64_MIN;
		}
		if (overlay_path) {
			if (overlay(overlay_path, &vi, m, &me, pos >= 0, &oevents, &odelta) != 0)
				oom(cnt_buf_append(&out, ",\"overlay\":{\"supported\":false}", 30));
			else
				oom(cnt_buf_printf(&out, ",\"overlay\":{\"events\":%" PRIu64 ",\"delta\":%" PRId64 "}", oevents, odelta));
			if (pos < 0 && oevents == 0) {
				oom(cnt_buf_append(&out, ",\"found\":false", 14));
				goto done;
			}
		}
		oom(cnt_buf_printf(&out, ",\"found\":true,\"value\":%" PRId64, me.value));
		if (strcmp(cmd, "value") == 0)
			goto done;
		{
			int64_t r;
			uint64_t lo, hi;
			cnt_view_entry probe = me;

			/* Compared under the member's own name, in the view or not. */
			probe.name_len = (uint32_t)strlen(m);
			r = (oevents == 0 && pos >= 0) ? ((uint64_t)pos < v.head ? (int64_t)me.rank : -1) :
				rank_in_head(&v, &vi, &probe, m, pos);
			if (r > 0) {
				oom(cnt_buf_printf(&out, ",\"kind\":\"exact\",\"rank\":%" PRId64, r));
			} else {
				band(&v, &vi, me.value, pos, &lo, &hi);
				oom(cnt_buf_printf(&out, ",\"kind\":\"band\",\"rank_band\":[%" PRIu64 ",%" PRIu64
					"],\"top_percent_band\":[%.3f,%.3f]", lo, hi,
					/* a member new to the view (overlay) is one more */
					100.0 * (double)(lo - 1) / (double)(v.n + (pos < 0)),
					100.0 * (double)hi / (double)(v.n + (pos < 0))));
			}
		}
		if (strcmp(cmd, "around") == 0) {
			long k = optind + 2 < argc ? strtol(argv[optind + 2], NULL, 10) : 5;
			int64_t center = pos;
			int first = 1;

			if (k <= 0 || k > 1000)
				die("around: '%s' is not a count from 1 to 1000", argv[optind + 2]);
			if (center < 0)
				die("around: '%s' is not in the view; ask for its rank instead", m);
			oom(cnt_buf_append(&out, ",\"neighbourhood\":[", 18));
			/* Up to k listed members on each side; opted-out members
			 * are left out (the asking member is always shown). */
			{
				int64_t lo = center, hi = center;
				long got = 0;

				while (got < k && lo > 0) {
					const cnt_view_entry *e = &v.entries[--lo];
					const dir_entry *de = dp ? dir_find(dp, v.pool + e->name_off, e->name_len) : NULL;

					if (!(de && de->opted_out))
						got++;
				}
				for (got = 0; got < k && hi + 1 < (int64_t)v.n;) {
					const cnt_view_entry *e = &v.entries[++hi];
					const dir_entry *de = dp ? dir_find(dp, v.pool + e->name_off, e->name_len) : NULL;

					if (!(de && de->opted_out))
						got++;
				}
				for (int64_t i = lo; i <= hi; i++) {
					const cnt_view_entry *e = &v.entries[i];
					const dir_entry *de = dp ? dir_find(dp, v.pool + e->name_off, e->name_len) : NULL;

					if (i != center && de && de->opted_out)
						continue;
					if (!first)
						oom(cnt_buf_putc(&out, ','));
					first = 0;
					entry_json(&v, dp, e, (uint64_t)i < v.head);
				}
			}
			oom(cnt_buf_putc(&out, ']'));
		}
	} else {
		die("unknown question '%s': top, rank, around or value", cmd);
	}
done:
	oom(cnt_buf_append(&out, "}\n", 2));
	if (table) {
		/* The same answer, as lines a person reads. */
		json_error_t je;
		json_t *j = json_loadb((const char *)out.p, out.len, 0, &je), *a, *e;
		size_t i;

		if (j == NULL)
			die("internal: %s", je.text);
		printf("board %s  scope %s  version %lld  as of %s%s%s\n", vi.board, vi.scope,
			(long long)vi.version, vi.has_as_of ? json_string_value(json_object_get(j, "as_of")) : "(no data)",
			json_is_true(json_object_get(j, "stale")) ? "  STALE" : "",
			json_is_true(json_object_get(j, "frozen")) ? "  FROZEN" : "");
		a = json_object_get(j, "entries");
		if (a == NULL)
			a = json_object_get(j, "neighbourhood");
		if (json_object_get(j, "kind")) {
			json_t *band = json_object_get(j, "rank_band");

			if (band)
				printf("%s: value %lld, rank between %lld and %lld (histogram band)\n",
					json_string_value(json_object_get(j, "member_ref")),
					(long long)json_integer_value(json_object_get(j, "value")),
					(long long)json_integer_value(json_array_get(band, 0)),
					(long long)json_integer_value(json_array_get(band, 1)));
			else
				printf("%s: value %lld, rank %lld\n", json_string_value(json_object_get(j, "member_ref")),
					(long long)json_integer_value(json_object_get(j, "value")),
					(long long)json_integer_value(json_object_get(j, "rank")));
		} else if (json_is_integer(json_object_get(j, "value"))) {
			printf("%s: value %lld\n", json_string_value(json_object_get(j, "member_ref")),
				(long long)json_integer_value(json_object_get(j, "value")));
		} else if (json_is_false(json_object_get(j, "found"))) {
			printf("%s: not in this view\n", json_string_value(json_object_get(j, "member_ref")));
		}
		json_array_foreach(a, i, e) {
			json_t *r = json_object_get(e, "rank"), *dn = json_object_get(e, "display_name");
			char rk[32] = "-";

			if (r)
				snprintf(rk, sizeof(rk), "%lld", (long long)json_integer_value(r));
			printf("%8s  %-24s %20lld\n", rk,
				dn ? json_string_value(dn) : json_string_value(json_object_get(e, "member_ref")),
				(long long)json_integer_value(json_object_get(e, "value")));
		}
		json_decref(j);
	} else if (cnt_write_all(STDOUT_FILENO, out.p, out.len) != 0 && errno != EPIPE) {
		die("cannot write standard output: %s", strerror(errno));
	}
	json_decref(vi.desc);
	cnt_view_close(&v);
	cnt_buf_release(&out);
	if (dp) {
		for (size_t i = 0; i < d.n; i++) {
			free(d.e[i].member);
			free(d.e[i].name);
		}
		free(d.e);
	}
	return 0;
}
