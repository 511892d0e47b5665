/*
 * filehead.h - the first bytes of a named regular file, read to guess
 * what it holds (how many events, to size a table up front).
 */
#ifndef CNT_FILEHEAD_H
#define CNT_FILEHEAD_H

#include <stddef.h>
#include <stdint.h>

/* Reads up to cap bytes from the start of the file named name into buf.
 * Returns the bytes read (> 0, at most *size even if the file grows
 * meanwhile), with *size the file's size and *stored
 * the bytes it takes on disk (st_blocks: less than *size for a sparse
 * file); 0 when name is "-", not a regular file, empty or unreadable.
 * A name that is not a regular file is not opened (opening a FIFO would
 * start its writer); one that becomes a FIFO between the check and the
 * open is opened without waiting for a writer, and the file is judged by
 * what was opened. */
size_t cnt_file_head(const char *name, void *buf, size_t cap, uint64_t *size, uint64_t *stored);

/* Judges a file by its first bytes: head holds the first got bytes of a
 * file of size bytes (got <= size; got == size when it is whole).
 * Returns how many records it guesses the file holds. */
typedef size_t (*cnt_file_guess_fn)(const void *head, size_t got, uint64_t size);

/* How many records the n files named hold, to size a table up front: the
 * sum of guess() over each file's first 64 KiB (cnt_file_head), each at
 * most one record in 32 bytes of what the file holds on disk, so that no
 * first bytes and no sparse file can ask for a table larger than the
 * file itself.  A name cnt_file_head cannot judge counts 0.  The sum
 * stops at SIZE_MAX. */
size_t cnt_files_guess(char *const *names, int n, cnt_file_guess_fn guess);

#endif
