/*
 * sign_cli.c - cnt-sign's run over events (see sign_cli.h).
 */
#include "cli/sign_cli.h"

#include <errno.h>

#include "base/buf.h"
#include "ingest/input.h"
#include "ingest/rawevent.h"

int cnt_sign_main(const cnt_sig_key *k, char *const *names, int n, const char *path, const cnt_cli_common *co)
{
	cnt_jsonl *p = cnt_jsonl_new();
	cnt_buf b = CNT_BUF_INIT;
	uint64_t outn = 0;
	cnt_line lines[64];
	cnt_out out;
	cnt_err err;
	cnt_stats s;
	long got;

	if (p == NULL)
		cnt_die_nomem();
	cnt_cli_out(&out, path);
	for (int i = 0; i < n || i == 0; i++) {
		const char *name = i < n ? names[i] : "-";
		int fd = cnt_cli_open_in(name);
		cnt_lines *l = cnt_lines_new(fd, name, 1 << 20, "", 0);   /* no prefix read */

		if (l == NULL)
			cnt_die_nomem();
		while ((got = cnt_lines_read(l, lines, 64, &err)) > 0) {
			for (long j = 0; j < got; j++) {
				size_t before = b.len;

				if (lines[j].overlong)
					cnt_die("%s:%llu: a line longer than 1 MiB", name, (unsigned long long)lines[j].no);
				if ((k ? cnt_sig_sign_line(p, k, lines[j].p, lines[j].n, &b, &err)
				     : cnt_sig_canonical_line(p, lines[j].p, lines[j].n, &b, &err)) != 0) {
					if (err.kind != CNT_ERR_NOMEM)
						cnt_err_prefix(&err, "%s:%llu", name, (unsigned long long)lines[j].no);
					cnt_die_err(&err);
				}
				outn += b.len > before;
			}
			if (cnt_write_all(out.fd, b.p, b.len) != 0)
				cnt_err_write(&err, errno, "cannot write '%s'", path ? path : "standard output"),
				cnt_die_err(&err);
			b.len = 0;
		}
		if (got < 0)
			cnt_die_err(&err);
		cnt_lines_free(l);
		cnt_cli_close_in(fd);
	}
	if (co->stats_path) {     /* before the commit: a failure leaves nothing */
		cnt_stats_begin(&s);
		cnt_stats_u64(&s, "in", outn);
		cnt_stats_u64(&s, "out", outn);
		if (k)
			cnt_stats_str(&s, "key_id", k->key_id, -1);
		cnt_stats_write(&s, co->stats_path);
	}
	cnt_cli_commit(&out);
	if (co->verbose)
		cnt_cli_note("%s %llu events%s%s", k ? "signed" : "wrote the canonical form of",
			(unsigned long long)outn, k ? " with key " : "", k ? k->key_id : "");
	cnt_buf_release(&b);
	cnt_jsonl_free(p);
	return cnt_cli_finish();
}
