/*
 * filehead.h - the first bytes of a named regular file, read to guess
 * what it holds (how many events, to size a table up front).
 */
#ifndef CNT_FILEHEAD_H
#define CNT_FILEHEAD_H

#include <stddef.h>
#include <stdint.h>

/* Reads up to cap bytes from the start of the file named name into buf.
 * Returns the bytes read (> 0), with *size the file's size and *stored
 * the bytes it takes on disk (st_blocks: less than *size for a sparse
 * file); 0 when name is "-", not a regular file, empty or unreadable.
 * A name that is not a regular file is not opened (opening a FIFO would
 * start its writer); one that becomes a FIFO between the check and the
 * open is opened without waiting for a writer, and the file is judged by
 * what was opened. */
size_t cnt_file_head(const char *name, void *buf, size_t cap, uint64_t *size, uint64_t *stored);

#endif
