/*
 * dedup.c - the remembered-key table and its state file (see dedup.h).
 */
#include "base/outfile.h"
#include "count/dedup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "avro/container.h"
#include "base/fpset.h"

static const char state_magic[8] = {'C', 'N', 'T', 'D', 'D', 'U', 'P', '1'};

cnt_dkey cnt_dedup_key(size_t n, const void *const *parts, const size_t *lens)
{
	cnt_fp fp = cnt_fp_of(n, parts, lens);
	cnt_dkey k;

	k.lo = fp.lo;
	k.hi = (uint32_t)(fp.hi >> 32);
	if (k.lo == 0 && k.hi == 0)
		k.hi = 1;   /* all-zero marks an empty slot */
	return k;
}

static cnt_dslot *slots_new(size_t cap)
{
	return cnt_table_alloc(cap * sizeof(cnt_dslot));
}

static void slots_free(cnt_dslot *p, size_t cap)
{
	cnt_table_free(p, cap * sizeof(cnt_dslot));
}

int cnt_dedup_init(cnt_dedup *d, size_t expected)
{
	size_t cap = 1024;

	memset(d, 0, sizeof(*d));
	if (expected > SIZE_MAX / 64)
		return -1;
	while (cap / 4 * 3 < expected)
		cap *= 2;
	d->slots = slots_new(cap);
	d->mask = cap - 1;
	return d->slots ? 0 : -1;
}

void cnt_dedup_release(cnt_dedup *d)
{
	slots_free(d->slots, d->mask + 1);
	d->slots = NULL;
	d->count = 0;
}

static void put(cnt_dslot *slots, size_t mask, const cnt_dslot *s)
{
	size_t i;

	for (i = cnt_dedup_home(s->lo, mask); slots[i].lo | slots[i].hi; i = (i + 1) & mask)
		;
	slots[i] = *s;
}

static int grow(cnt_dedup *d)
{
	size_t cap = (d->mask + 1) * 2;
	cnt_dslot *n = slots_new(cap);

	if (n == NULL)
		return -1;
	for (size_t i = 0; i <= d->mask; i++)
		if (d->slots[i].lo | d->slots[i].hi)
			put(n, cap - 1, &d->slots[i]);
	slots_free(d->slots, d->mask + 1);
	d->slots = n;
	d->mask = cap - 1;
	return 0;
}

int cnt_dedup_check(cnt_dedup *d, cnt_dkey k, uint64_t t, uint64_t h)
{
	uint64_t exp = t + h > UINT32_MAX ? UINT32_MAX : t + h;
	size_t i;

	if (t > d->clock_s)
		d->clock_s = t;
	for (i = cnt_dedup_home(k.lo, d->mask);; i = (i + 1) & d->mask) {
		cnt_dslot *s = &d->slots[i];

		if (s->lo == k.lo && s->hi == k.hi) {
			if (t < s->expire_s)
				return 1;
			/* Remembered, but past its horizon: counted again, and
			 * remembered anew from this occurrence. */
			s->expire_s = (uint32_t)exp;
			return 0;
		}
		if ((s->lo | s->hi) == 0)
			break;
	}
	if ((d->count + 1) > (d->mask + 1) / 4 * 3) {
		if (grow(d) != 0)
			return -1;
		for (i = cnt_dedup_home(k.lo, d->mask); d->slots[i].lo | d->slots[i].hi; i = (i + 1) & d->mask)
			;
	}
	d->slots[i].lo = k.lo;
	d->slots[i].hi = k.hi;
	d->slots[i].expire_s = (uint32_t)exp;
	d->count++;
	return 0;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* LSD radix sort of slots by (lo, hi): 12 byte-passes, linear time, so a
 * state of 50 million keys sorts in about a second. */
static int sort_slots(cnt_dslot *v, size_t n)
{
	cnt_dslot *tmp = malloc(n * sizeof(*tmp) + 1);

	if (tmp == NULL)
		return -1;
	for (int pass = 0; pass < 12; pass++) {
		size_t count[257] = {0};
		int shift = pass < 4 ? 8 * pass : 8 * (pass - 4);
		int use_hi = pass < 4;

		for (size_t i = 0; i < n; i++)
			count[((use_hi ? v[i].hi : v[i].lo) >> shift & 0xff) + 1]++;
		if (count[((use_hi ? v[0].hi : v[0].lo) >> shift & 0xff) + 1] == n)
			continue;   /* every key has the same byte here */
		for (int b = 0; b < 256; b++)
			count[b + 1] += count[b];
		for (size_t i = 0; i < n; i++)
			tmp[count[(use_hi ? v[i].hi : v[i].lo) >> shift & 0xff]++] = v[i];
		memcpy(v, tmp, n * sizeof(*v));
	}
	free(tmp);
	return 0;
}

static int slot_less(const cnt_dslot *a, const cnt_dslot *b)
{
	return a->lo < b->lo || (a->lo == b->lo && a->hi < b->hi);
}

/* Sorts v, nearly sorted already, by insertion: 0, or 1 when that would
 * take more than about 8 moves a key (then v is still a permutation of
 * itself, to be sorted otherwise). */
static int sort_nearly(cnt_dslot *v, size_t n)
{
	size_t budget = 8 * n + 1024;

	for (size_t i = 1; i < n; i++) {
		cnt_dslot x = v[i];
		size_t j = i;

		while (j > 0 && slot_less(&x, &v[j - 1])) {
			v[j] = v[j - 1];
			j--;
			if (--budget == 0) {
				v[j] = x;
				return 1;
			}
		}
		v[j] = x;
	}
	return 0;
}

/*
 * The live keys of d in key order, into live (room for d->count): a key
 * sits at or a little after its home slot, the top bits of lo, so the
 * table read in slot order is sorted but for the short runs that probing
 * shuffles, and the keys that wrapped past the last slot to the first
 * ones, which belong at the end.  Insertion sort finishes it in linear
 * time; the radix sort is the fallback when it would not.
 */
static int gather_sorted(const cnt_dedup *d, cnt_dslot *live, size_t *np)
{
	size_t n = 0, cap = d->mask + 1, i, nw = 0, wrapped[64];
	int spill = 0;

	/* the first run (up to the first empty slot) may hold wrapped keys */
	for (i = 0; i < cap && (d->slots[i].lo | d->slots[i].hi); i++) {
		const cnt_dslot *s = &d->slots[i];

		if (cnt_dedup_home(s->lo, d->mask) > i) {
			if (nw < 64)
				wrapped[nw++] = i;
			else
				spill = 1;
			continue;
		}
		if (s->expire_s > d->clock_s)
			live[n++] = *s;
	}
	for (; i < cap; i++) {
		const cnt_dslot *s = &d->slots[i];

		if ((s->lo | s->hi) && s->expire_s > d->clock_s)
			live[n++] = *s;
	}
	for (size_t k = 0; k < nw; k++)
		if (d->slots[wrapped[k]].expire_s > d->clock_s)
			live[n++] = d->slots[wrapped[k]];
	if (spill) {   /* more than 64 wrapped: take them in whatever order */
		for (i = 0; i < cap && (d->slots[i].lo | d->slots[i].hi); i++)
			if (cnt_dedup_home(d->slots[i].lo, d->mask) > i && d->slots[i].expire_s > d->clock_s) {
				int seen = 0;

				for (size_t k = 0; k < nw; k++)
					seen |= wrapped[k] == i;
				if (!seen)
					live[n++] = d->slots[i];
			}
	}
	*np = n;
	if (n > 1 && sort_nearly(live, n) != 0)
		return sort_slots(live, n);
	return 0;
}

int cnt_dedup_save(cnt_dedup *d, int fd, const char *name, size_t *kept, cnt_err *err)
{
	size_t n = 0;
	cnt_dslot *live = malloc((d->count + 1) * sizeof(*live));
	uint8_t head[24], rec[16], sum[8];
	XXH64_state_t st;
	cnt_buf out = CNT_BUF_INIT;

	if (live == NULL)
		return cnt_err_oom(err, "saving the dedup state");
	if (gather_sorted(d, live, &n) != 0) {
		free(live);
		return cnt_err_oom(err, "saving the dedup state");
	}
	memcpy(head, state_magic, 8);
	put_le(head + 8, d->clock_s, 8);
	put_le(head + 16, n, 8);
	XXH64_reset(&st, 0);
	if (cnt_buf_append(&out, head, sizeof(head)) != 0)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		put_le(rec, live[i].lo, 8);
		put_le(rec + 8, live[i].hi, 4);
		put_le(rec + 12, live[i].expire_s, 4);
		if (cnt_buf_append(&out, rec, sizeof(rec)) != 0)
			goto oom;
		if (out.len >= (1u << 20)) {
			XXH64_update(&st, out.p, out.len);
			if (cnt_write_all(fd, out.p, out.len) != 0)
				goto wfail;
			out.len = 0;
		}
	}
	XXH64_update(&st, out.p, out.len);
	put_le(sum, XXH64_digest(&st), 8);
	if (cnt_buf_append(&out, sum, 8) != 0)
		goto oom;
	if (cnt_write_all(fd, out.p, out.len) != 0)
		goto wfail;
	cnt_buf_release(&out);
	free(live);
	*kept = n;
	return 0;
oom:
	cnt_buf_release(&out);
	free(live);
	return cnt_err_oom(err, "saving the dedup state");
wfail:
	cnt_buf_release(&out);
	free(live);
	return cnt_err_write(err, errno, "cannot write the dedup state '%s'", name);
}

static int corrupt(cnt_err *err, const char *name)
{
	return cnt_err_set(err, "dedup state '%s' is corrupt or truncated (size or checksum wrong); restore it, or rebuild it by rerunning cnt-dedup over the last horizon of the log", name);
}

int cnt_dedup_load_mem(cnt_dedup *d, const uint8_t *p, size_t size, const char *name, size_t extra, cnt_err *err)
{
	uint64_t n, clock;

	memset(d, 0, sizeof(*d));
	if (size < 8 || memcmp(p, state_magic, 8) != 0) {
		if (size < 32)
			return corrupt(err, name);
		return cnt_err_set(err, "'%s' is not a cnt-dedup state file (no CNTDDUP1 magic)", name);
	}
	if (size < 32)
		return corrupt(err, name);
	clock = get_le(p + 8, 8);
	n = get_le(p + 16, 8);
	/* The count must agree with the size before anything is allocated
	 * for it, so a file cannot claim more keys than it holds. */
	if (n > (size - 32) / 16 || 32 + n * 16 != size || XXH64(p, size - 8, 0) != get_le(p + size - 8, 8))
		return corrupt(err, name);
	if (extra > SIZE_MAX / 64 - (size_t)n || cnt_dedup_init(d, (size_t)n + extra) != 0)
		return cnt_err_oom(err, "loading the dedup state '%s' (%llu keys)", name, (unsigned long long)n);
	d->clock_s = clock;
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *r = p + 24 + 16 * i;
		cnt_dslot s;

		s.lo = get_le(r, 8);
		s.hi = (uint32_t)get_le(r + 8, 4);
		s.expire_s = (uint32_t)get_le(r + 12, 4);
		if ((s.lo | s.hi) == 0 || (i > 0 && (get_le(r - 16, 8) > s.lo ||
		    (get_le(r - 16, 8) == s.lo && get_le(r - 8, 4) >= s.hi)))) {
			/* Unsorted or repeated keys: not a file we wrote. */
			cnt_dedup_release(d);
			return corrupt(err, name);
		}
		put(d->slots, d->mask, &s);
	}
	d->count = (size_t)n;
	return 0;
}

int cnt_dedup_load(cnt_dedup *d, const char *path, size_t extra, int missing_ok, cnt_err *err)
{
	static const char hint[] = "the state is read and rewritten in place: give it a file of its own";
	struct stat st;
	uint8_t *p;
	size_t size;
	int fd, rc;

	memset(d, 0, sizeof(*d));
	if (path && (*path == 0 || strcmp(path, "-") == 0))
		return cnt_err_set(err, "dedup state '%s': not a file name (%s)", path, hint);
	/* Refused before it is opened: a FIFO, a device, a directory; and a
	 * link under /dev (/dev/stdout, /dev/fd/N), which the commit would
	 * replace.  A regular file there (in /dev/shm) is a file like any. */
	if (path && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return cnt_err_set(err, "dedup state '%s' is not a regular file (%s)", path, hint);
	if (path && strncmp(path, "/dev/", 5) == 0 && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		return cnt_err_set(err, "dedup state '%s' is a link under /dev, not a regular file (%s)", path, hint);
	/* O_NONBLOCK: should a FIFO be made meanwhile, no wait for a writer */
	fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) : -1;
	if (fd < 0) {
		if (path == NULL || (errno == ENOENT && missing_ok))
			return cnt_dedup_init(d, extra) == 0 ? 0 : cnt_err_oom(err, "making the dedup table");
		return cnt_err_set(err, "cannot open the dedup state '%s': %s", path, strerror(errno));
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return cnt_err_set(err, "dedup state '%s' is not a regular file (%s)", path, hint);
	}
	size = (size_t)st.st_size;
	if (size == 0) {
		close(fd);
		return corrupt(err, path);
	}
	p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		if (errno == ENOMEM)
			return cnt_err_oom(err, "reading the dedup state '%s'", path);
		return cnt_err_set(err, "cannot read the dedup state '%s': %s", path, strerror(errno));
	}
	rc = cnt_dedup_load_mem(d, p, size, path, extra, err);
	munmap(p, size);
	return rc;
}
