/*
 * stage_outs.c - the side outputs of the counting stages (see
 * stage_outs.h).
 */
#include "cli/stage_outs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/fingerprint.h"

void cnt_cli_rejects(cnt_rejects *rej, cnt_out *o, const char *path, const char *tool)
{
	if (path)
		cnt_cli_out(o, path);
	cnt_rejects_init(rej, path ? o->fd : STDERR_FILENO, path ? path : "standard error", path ? NULL : tool);
}

void cnt_dedup_outs_open(cnt_dedup_outs *o, const char *tool, int codec_set, cnt_codec_id codec, int level)
{
	cnt_err err;

	o->dups = NULL;
	o->kept = 0;
	if (o->dup_path) {
		cnt_cli_out(&o->dup_out, o->dup_path);
		if ((o->dups = cnt_event_writer_new(o->dup_out.fd, o->dup_path, codec_set ? codec : CNT_CODEC_ZSTD, level,
				&err)) == NULL || cnt_fp_track(o->dups, CNT_FP_EVENTS, &err) != 0)
			cnt_die_err(&err);
	}
	cnt_cli_rejects(&o->rejects, &o->rej_out, o->rej_path, tool);
}

size_t cnt_dedup_save_to(cnt_dedup *dd, cnt_out *out, const char *path)
{
	cnt_err err;
	size_t kept = 0;

	cnt_cli_out_file(out, path);
	if (cnt_dedup_save(dd, out->fd, path, &kept, &err) != 0)
		cnt_die_err(&err);
	return kept;
}

void cnt_dedup_outs_save(cnt_dedup_outs *o, cnt_dedup *dd)
{
	if (o->state_path)
		o->kept = cnt_dedup_save_to(dd, &o->state_out, o->state_path);
}

void cnt_dedup_outs_commit(cnt_dedup_outs *o)
{
	if (o->dup_path)
		cnt_cli_commit(&o->dup_out);
	if (o->rej_path)
		cnt_cli_commit(&o->rej_out);
	if (o->state_path)
		cnt_cli_commit(&o->state_out);
}

void cnt_dedup_outs_release(cnt_dedup_outs *o)
{
	cnt_writer_free(o->dups);
	o->dups = NULL;
	cnt_rejects_release(&o->rejects);
}

const char *cnt_snapshot_path(char *buf, size_t n, const char *dir, const char *name)
{
	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	if ((size_t)snprintf(buf, n, "%s/%s.state", dir, base) >= n)
		cnt_die_usage("--snapshots: the path of the snapshot of '%s' is too long", name);
	return buf;
}

void cnt_snapshots_check(const char *dir, char **names, int n)
{
	char a[4096], b[4096];

	if (n == 0)
		cnt_die_usage("--snapshots needs the segments as named files, not standard input");
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i], "-") == 0)
			cnt_die_usage("--snapshots needs the segments as named files, not standard input");
		cnt_snapshot_path(a, sizeof(a), dir, names[i]);   /* dies now, not after the segment, when too long */
		for (int j = 0; j < i; j++)
			if (strcmp(cnt_snapshot_path(a, sizeof(a), dir, names[i]),
				   cnt_snapshot_path(b, sizeof(b), dir, names[j])) == 0)
				cnt_die_usage("--snapshots: segments '%s' and '%s' have the same file name", names[j], names[i]);
	}
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		cnt_die("--snapshots: cannot create the directory '%s': %s", dir, strerror(errno));
}

void cnt_snapshot_save(cnt_dedup *dd, const char *dir, const char *name)
{
	char path[4096];
	cnt_out snap;

	cnt_dedup_save_to(dd, &snap, cnt_snapshot_path(path, sizeof(path), dir, name));
	cnt_cli_commit(&snap);
}
