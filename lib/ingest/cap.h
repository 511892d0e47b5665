/*
 * cap.h - a tenant's member cap (cnt-definitions(5), "member_cap";
 * cnt-ingest(1), "MEMBER CAP"): the set of members each tenant has had
 * admitted, kept between runs in a state file, so that an event that would
 * add a member beyond the cap is rejected (reason member_cap) while the
 * members already counted keep being admitted, never dropped.
 *
 * A member is the fingerprint (XXH3-128) of its member_ref, in a hash set
 * per tenant (base/fpset.h): memory is proportional to the members, about
 * 24 to 48 bytes each.  Every declared tenant's members are remembered,
 * capped or not, so that a cap declared later starts from the members
 * already counted; tenants the file holds but the definitions no longer
 * declare are kept as they are.
 *
 * The state file (cnt-ingest(1), "MEMBERS FILE"), little-endian:
 *   "cnt-members/1\n"                     14 bytes
 *   u32 tenants
 *   per tenant, ascending by tenant_id:
 *     u16 id length (1..128), the id bytes, u64 members,
 *     members x (u64 hi, u64 lo), ascending
 *   u64 XXH3-64 of every byte before it
 * A file whose checksum, lengths or order do not hold is refused whole.
 */
#ifndef CNT_CAP_H
#define CNT_CAP_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/fpset.h"
#include "base/slice.h"
#include "model/defs.h"

#define CNT_MEMBERS_MAGIC "cnt-members/1\n"

typedef struct cnt_members cnt_members;

/* An empty set for the tenants of d (which must outlive it).  NULL with
 * err set when out of memory. */
cnt_members *cnt_members_new(const cnt_defs *d, cnt_err *err);
void cnt_members_free(cnt_members *m);

/* Loads the state file at path into m (empty, just made).  A missing file
 * leaves m empty; one that is not a regular file (/dev/null: a set that
 * forgets) is refused.  Returns 0, or -1 with err naming the file: CNT_ERR_DATA
 * for an unreadable or corrupt one ("members 'F': ..."), CNT_ERR_NOMEM. */
int cnt_members_load(cnt_members *m, const char *path, cnt_err *err);
/* The same from the n bytes at p (name for messages). */
int cnt_members_parse(cnt_members *m, const void *p, size_t n, const char *name, cnt_err *err);

/* Admission of an event of tenant t (declared in m's definitions) for
 * member: 0 when the member is known, or the tenant has no cap, or there
 * is room under it (*fp then names the member for cnt_members_add); 1 when
 * the member is new and the tenant already has member_cap members (the
 * reject is counted for the tenant).  Never changes the set. */
int cnt_members_check(cnt_members *m, const cnt_tenant *t, cnt_slice member, cnt_fp *fp);
/* Remembers the member of an admitted event.  0, or -1 out of memory. */
int cnt_members_add(cnt_members *m, const cnt_tenant *t, cnt_fp fp);

/* Members remembered for t, and events of t rejected by its cap. */
uint64_t cnt_members_count(const cnt_members *m, const cnt_tenant *t);
uint64_t cnt_members_rejected(const cnt_members *m, const cnt_tenant *t);

/* Writes the state file to fd.  0, or -1 with err set (CNT_ERR_IO or
 * CNT_ERR_PIPE naming name, CNT_ERR_NOMEM). */
int cnt_members_write(const cnt_members *m, int fd, const char *name, cnt_err *err);

/* The first tenant of d that declares a member cap, or NULL. */
const cnt_tenant *cnt_members_first_capped(const cnt_defs *d);

#endif
