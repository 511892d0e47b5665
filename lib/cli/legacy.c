/*
 * legacy.c - see legacy.h.
 */
#include "base/outfile.h"
#include "cli/legacy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "avro/container.h"

int cnt_cli_old_level(const char *s, int *level, cnt_err *err)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < -100 || v > 100)
		return cnt_err_set(err, "--level: '%s' is not a number", s);
	*level = (int)v;
	return 0;
}

int cnt_cli_old_codec(const char *name, cnt_codec_id *codec, cnt_err *err)
{
	if (cnt_codec_lookup(name, strlen(name), codec) != 0)
		return cnt_err_set(err, "--codec: '%s' is not one of null, deflate, snappy, xz, zstandard, bzip2", name);
	return 0;
}

int cnt_cli_old_avro_out(cnt_out *o, const char *path, const char *codec_name, cnt_codec_id *codec, cnt_err *err)
{
	if (codec_name && cnt_cli_old_codec(codec_name, codec, err) != 0)
		return -1;
	if ((path == NULL || strcmp(path, "-") == 0) && isatty(STDOUT_FILENO))
		return cnt_err_set(err, "standard output is a terminal; Avro is binary: use -o FILE or a pipe (cnt-cat prints it)");
	if (cnt_out_open(o, path, err) != 0)
		return -1;
	if (codec_name == NULL)
		*codec = cnt_out_wants_compression(o) ? CNT_CODEC_ZSTD : CNT_CODEC_NULL;
	return 0;
}

int cnt_cli_old_open_in(const char *name, cnt_err *err)
{
	int fd;

	if (strcmp(name, "-") == 0)
		return STDIN_FILENO;
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cnt_err_set(err, "cannot open '%s': %s", name, strerror(errno));
	return fd;
}

void cnt_cli_old_close_in(int fd)
{
	if (fd > STDIN_FILENO)
		close(fd);
}

int cnt_cli_old_stats(cnt_out *o, const char *path, const cnt_buf *b, cnt_err *err)
{
	if (cnt_out_open(o, path, err) != 0)
		return cnt_err_prefix(err, "--stats");
	if (cnt_write_all(o->fd, b->p, b->len) != 0)
		return cnt_err_set(err, "cannot write '%s': %s", path, strerror(errno));
	return 0;
}
