/*
 * held.h - the hold file (cnt-hold(5)): events cnt-ingest held instead of
 * admitting, one cnt.HeldEvent record each (lib/model/schemas/held_event.avsc).
 *
 * Why an Avro container and not JSON lines: a held event must be released
 * exactly as admission made it (event id, key, version, times, origin,
 * subject, the signature's bytes, attrs), and the container reader already
 * checks every length, block and sync marker of a file nobody should
 * trust; cnt-cat(1) prints it as JSON lines for people and jq.
 *
 * A cnt.HeldEvent is the sixteen cnt.CountingEvent fields, in their order,
 * followed by hold_id (string), signal (enum rate, lockstep, device),
 * detail (string) and held_at (timestamp-millis).  So its Avro encoding
 * is cnt_event_encode()'s output followed by the four hold fields, and the
 * event part is copied to the log unchanged when the hold is cleared.
 */
#ifndef CNT_HELD_H
#define CNT_HELD_H

#include <stdint.h>

#include "model/defs.h"
#include "model/event.h"

typedef struct cnt_held {
	cnt_event e;               /* the event as admitted */
	cnt_slice hold_id;
	cnt_hold_kind signal;
	cnt_slice detail;
	int64_t held_at;           /* epoch ms */
} cnt_held;

/* The hold id of an event: "h-" and 32 lowercase hex digits of XXH3-128
 * of the event id's bytes, into out (35 bytes with the NUL). */
void cnt_held_id(cnt_slice event_id, char out[35]);

/* Appends the four hold fields (after an event's encoding) to b.
 * 0, or -1 out of memory. */
int cnt_held_encode_tail(cnt_buf *b, const char *hold_id, cnt_hold_kind signal, const char *detail,
	int64_t held_at);

/* A writer of hold files.  Arguments and result as cnt_writer_new(). */
cnt_writer *cnt_held_writer_new(int fd, const char *name, cnt_codec_id codec, int level, cnt_err *err);

typedef struct cnt_held_in cnt_held_in;

/* Opens a hold file on fd (not closed by it).  NULL with err set when it
 * is not an Avro container or not a hold file. */
cnt_held_in *cnt_held_in_open(int fd, const char *name, cnt_err *err);
/* Reads the next hold into *h (slices valid until the next call).
 * Returns 1, 0 at the end, -1 with err naming the file and record: a
 * container written with any other schema than cnt.HeldEvent's is
 * refused, as is a truncated or corrupt one. */
int cnt_held_in_next(cnt_held_in *in, cnt_held *h, cnt_err *err);
/* The encoded event part of the last hold returned (cnt_event_encode()'s
 * bytes), valid until the next call. */
void cnt_held_in_event_bytes(const cnt_held_in *in, const uint8_t **p, size_t *n);
void cnt_held_in_free(cnt_held_in *in);

#endif
