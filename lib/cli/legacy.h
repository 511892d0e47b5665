/*
 * legacy.h - the first command helpers, kept only until every tool uses
 * cli/cli.h; removed when the last one does.  Like the rest of lib/, it prints nothing: it fills a cnt_err and
 * the tool says it in its own name.
 */
#ifndef CNT_CLI_LEGACY_H
#define CNT_CLI_LEGACY_H

#include "base/buf.h"
#include "avro/codec.h"
#include "base/outfile.h"

/* Parses a --level argument.  0, or -1 with err naming it. */
int cnt_cli_old_level(const char *s, int *level, cnt_err *err);

/* Looks up a --codec argument.  0, or -1 with err listing the codecs. */
int cnt_cli_old_codec(const char *name, cnt_codec_id *codec, cnt_err *err);

/* Opens the Avro output path (NULL or "-": standard output, refused when
 * it is a terminal) and picks the codec: codec_name when given, else
 * zstandard for a file and null for a pipe.  0, or -1 with err set. */
int cnt_cli_old_avro_out(cnt_out *o, const char *path, const char *codec_name, cnt_codec_id *codec, cnt_err *err);

/* Opens an input by name ("-": standard input).  Returns the descriptor,
 * or -1 with err naming the file. */
int cnt_cli_old_open_in(const char *name, cnt_err *err);
/* Closes what cnt_cli_open_in opened (not standard input). */
void cnt_cli_old_close_in(int fd);

/* Opens path and writes the --stats object b into it (the caller commits
 * o with the other outputs).  0, or -1 with err set. */
int cnt_cli_old_stats(cnt_out *o, const char *path, const cnt_buf *b, cnt_err *err);

#endif
