/*
 * erase.h - the deletion path (cnt-erase(1), cnt-retraction(5)): taking a
 * member's events out of the archive itself, where the law requires
 * personal data to go, with a record of what went.
 *
 * Retraction (retract.h) leaves the log untouched: compensations are
 * appended and the counters follow.  Erasure is the one operation that
 * rewrites the log, and it comes after a retraction: every original event
 * of the member that is erased must already be retracted (the ledger
 * lists it, or a compensation naming it is in the archive), so the
 * counters have already lost it and a rebuild from the rewritten archive
 * equals the live numbers.  Both the originals and their compensations
 * (which carry the member too) are erased.
 *
 * A segment is rewritten as the writer of lib/avro/container.h would
 * write its remaining records: the same schema text, codec and further
 * metadata; the same compression level (found by compressing the first
 * block again at each level of the codec until one gives its stored
 * bytes); the writer's sync marker and block cut.  Records are copied as
 * they are encoded, never decoded and encoded again.  So a segment
 * written by a cnt tool becomes, byte for byte, what that tool would have
 * written without the erased events (unless its level was not found: a
 * zstandard fast level below -7 is rewritten at the default).  Segments without a matching event
 * are not written at all.
 *
 * Order of work, so that a failure or a signal at any point leaves the
 * archive either as it was or erased and recorded:
 *   1. cnt_erase_scan() reads the ledger and every segment whole: any
 *      segment that cannot be read, an event not yet retracted, a broken
 *      ledger chain stops everything before anything is written;
 *   2. cnt_erase_rewrite() writes each affected segment's new version to
 *      a temporary file beside it (the caller's), which is fsync'd;
 *   3. cnt_erase_record() gives the ledger line (event ids and counts per
 *      segment, digests before and after; the member only as a hash),
 *      appended with cnt_retract_ledger_append();
 *   4. the caller renames each temporary over its segment (the switch).
 */
#ifndef CNT_CORRECT_ERASE_H
#define CNT_CORRECT_ERASE_H

#include <stddef.h>
#include <stdint.h>

#include "avro/codec.h"
#include "base/buf.h"
#include "base/err.h"
#include "base/fpset.h"
#include "correct/retract.h"

/* Whose events.  member is required; tenant and counter NULL: any. */
typedef struct cnt_erase_sel {
	const char *member, *tenant, *counter;
} cnt_erase_sel;

/* One segment, as found by the scan and changed by the rewrite. */
typedef struct cnt_erase_seg {
	const char *name;            /* as given (not copied) */
	uint64_t records;            /* records in it */
	uint64_t originals;          /* the member's events to erase */
	uint64_t compensations;      /* compensations of the member to erase */
	cnt_buf ids;                 /* their event ids, each NUL-terminated, in file order */
	cnt_retract_ctrs ctrs;       /* the counters of those events */
	cnt_fp before, after;        /* XXH3-128 of the file's bytes; after set by the rewrite */
	cnt_codec_id codec;
	int level;                   /* set by the rewrite: the level written at (found
	                              * from the first block, or forced); CNT_LEVEL_DEFAULT
	                              * the default */
	unsigned mode;               /* permission bits */
	uint64_t dev, ino;           /* the file, so that one named twice is refused */
} cnt_erase_seg;

typedef struct cnt_erase_plan {
	cnt_erase_seg *segs;
	size_t n;
	uint64_t in;                 /* records read, every segment */
	uint64_t originals, compensations;
	size_t affected;             /* segments holding something to erase */
	cnt_fp last;                 /* fingerprint of the ledger's last line */
} cnt_erase_plan;

/* The member's fingerprint recorded instead of the member: 32 lowercase
 * hex digits of XXH3-128 of member_ref's bytes (high 64 bits first). */
void cnt_erase_member_hash(const char *member, char out[33]);

/* Reads the ledger at ledger_fd (may be empty; its chain checked) and
 * every segment fds[i] named names[i] whole, and fills *plan (released
 * with cnt_erase_plan_release(), also after a failure).  A segment must
 * be a regular file with one name (a second hard link would keep the
 * events) holding one container of cnt.CountingEvent records.  Fails,
 * with err set and nothing written anywhere, when a segment cannot be
 * read (CNT_ERR_DATA naming it and the place), when an original event of
 * the member is not retracted (named, with the way to retract it), or
 * when out of memory.  0 or -1. */
int cnt_erase_scan(const int *fds, const char *const *names, size_t n,
	const cnt_erase_sel *sel, int ledger_fd, const char *ledger_name,
	cnt_erase_plan *plan, cnt_err *err);

/* Writes the new version of an affected segment (in_fd, as scanned into
 * seg) to out_fd (an empty file, not closed): every record but the
 * member's, with seg->level unless level is not CNT_LEVEL_DEFAULT.  Gives out_fd the
 * segment's permission bits, fsyncs it and sets seg->after.  Fails when
 * the segment no longer holds what the scan found.  0, or -1 with err
 * set. */
int cnt_erase_rewrite(int in_fd, const cnt_erase_sel *sel, cnt_erase_seg *seg, int level,
	int out_fd, const char *out_name, cnt_err *err);

/* The erasure record (cnt-retraction(5), kind "erasure") of the affected
 * segments of plan->segs[0 .. plan->n), rewritten, chained to plan->last,
 * into *line (a NUL-terminated line ending in a newline; malloc'd, the
 * caller frees it), and its id into id (req->retraction_id, or "e-" and
 * 32 hex digits of XXH3-128 over cause, requester, authority, created_at
 * and the erased event ids).  plan->last becomes the new line's hash, so
 * that a caller working in batches (a plan copy over part of segs) chains
 * one record to the next.  0, or -1 with err set (out of memory). */
int cnt_erase_record(const cnt_retract_req *req, const cnt_erase_sel *sel,
	cnt_erase_plan *plan, char id[40], char **line, cnt_err *err);

void cnt_erase_plan_release(cnt_erase_plan *plan);

#endif
