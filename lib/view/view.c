/*
 * view.c - the ranked view index (see view.h).
 */
#include "base/outfile.h"
#include "view/view.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/table.h"
#include "count/estimate.h"
#include "avro/encoding.h"
#include "avro/container.h"

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

static const char magic[8] = {'C', 'N', 'T', 'V', 'I', 'E', 'W', '2'};

_Static_assert(sizeof(cnt_view_entry) == 32, "an index entry is 32 bytes");

/* Byte offsets of the header fields (view.h). */
enum {
	OFF_HEADER_SUM = 8, OFF_HIST_SUM = 16, OFF_DATA_SUM = 24, OFF_LEN = 32, OFF_D = 40,
	OFF_N = 48, OFF_HEAD = 56, OFF_NBINS = 64, OFF_S = 72, OFF_H = 80
};

#define MAX_SLOTS ((uint64_t)1 << 33)

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static size_t pad8(size_t n)
{
	return (8 - n % 8) % 8;
}

int cnt_view_describe(const cnt_view_build *b, cnt_buf *out, cnt_err *err)
{
	cnt_viewdesc d;

	if (b->desc == NULL)
		return cnt_err_set(err, "internal: a view without a description");
	d = *b->desc;
	d.members = b->n;
	d.head = b->head;
	d.bins = b->nbins;
	d.errors = b->errors != NULL;
	d.precision = b->errors != NULL ? b->precision : 0;
	return cnt_viewdesc_write(&d, out, err);
}

/* The name slots of b: H slots, position + 1 at XXH3-64(name) mod H,
 * linear probing.  NULL when out of memory. */
static uint32_t *name_slots(const cnt_view_build *b, size_t nslots)
{
	enum { AHEAD = 16 };
	uint32_t *byname = calloc(nslots, sizeof(*byname));
	size_t home[AHEAD];

	if (byname == NULL)
		return NULL;
	cnt_mem_huge(byname, nslots * sizeof(*byname));
	/* Each name's home slot is hashed AHEAD names early and its line
	 * fetched then: the slots are a random access each. */
	for (size_t i = 0; i < b->n + AHEAD; i++) {
		if (i >= AHEAD) {	/* name i - AHEAD, whose home is in home[i % AHEAD] */
			size_t k = home[i % AHEAD];

			while (byname[k])
				k = (k + 1) & (nslots - 1);
			byname[k] = (uint32_t)(i - AHEAD) + 1;
		}
		if (i < b->n) {
			const cnt_view_entry *e = &b->entries[i];
			size_t k = XXH3_64bits(b->pool + e->name_off, e->name_len) & (nslots - 1);

			__builtin_prefetch(&byname[k], 1);
			home[i % AHEAD] = k;
		}
	}
	return byname;
}

/* The file is written in the machine's byte order after a check that it
 * is little-endian, so entries can be copied and mapped as they are. */
int cnt_view_write_index(int fd, const cnt_view_build *v, cnt_err *err)
{
	cnt_buf h = CNT_BUF_INIT, hist = CNT_BUF_INIT;
	static const uint8_t zero[8];
	uint32_t *byname = NULL;
	size_t nslots = 2, dlen, P, L;
	XXH3_state_t st;
	int rc = -1;

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	return cnt_err_set(err, "view files are little-endian; this machine is not");
#endif
	if (v->n >= UINT32_MAX - 1)
		return cnt_err_set(err, "a view holds fewer than 2^32 - 1 members, not %zu", v->n);
	/* At most 3/4 full: short probes, a quarter of the file or less. */
	while (nslots / 4 * 3 < v->n)
		nslots *= 2;
	if (cnt_buf_reserve(&h, CNT_VIEW_HEADER) != 0)
		goto oom;
	memset(h.p, 0, CNT_VIEW_HEADER);
	h.len = CNT_VIEW_HEADER;
	if (cnt_view_describe(v, &h, err) != 0)
		goto out;
	dlen = h.len - CNT_VIEW_HEADER;
	if (cnt_buf_append(&h, zero, pad8(dlen)) != 0)
		goto oom;
	P = h.len;
	byname = name_slots(v, nslots);
	if (byname == NULL)
		goto oom;
	if (cnt_buf_append(&hist, v->edges, (v->nbins + 1) * sizeof(int64_t)) != 0 ||
	    cnt_buf_append(&hist, v->counts, v->nbins * sizeof(uint64_t)) != 0)
		goto oom;
	L = P + v->n * 32 + nslots * 4 + hist.len + v->pool_len + (v->errors ? v->n * 8 : 0);
	/* The data checksum, over the sections in file order. */
	XXH3_INITSTATE(&st);
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, v->entries, v->n * sizeof(cnt_view_entry));
	XXH3_64bits_update(&st, byname, nslots * sizeof(uint32_t));
	XXH3_64bits_update(&st, hist.p, hist.len);
	XXH3_64bits_update(&st, v->pool, v->pool_len);
	if (v->errors)
		XXH3_64bits_update(&st, v->errors, v->n * 8);
	memcpy(h.p, magic, 8);
	put64(h.p + OFF_HIST_SUM, XXH3_64bits(hist.p, hist.len));
	put64(h.p + OFF_DATA_SUM, XXH3_64bits_digest(&st));
	put64(h.p + OFF_LEN, L);
	put64(h.p + OFF_D, dlen);
	put64(h.p + OFF_N, v->n);
	put64(h.p + OFF_HEAD, v->head);
	put64(h.p + OFF_NBINS, v->nbins);
	put64(h.p + OFF_S, v->pool_len);
	put64(h.p + OFF_H, nslots);
	put64(h.p + OFF_HEADER_SUM, XXH3_64bits(h.p + 16, P - 16));
	if (cnt_write_all(fd, h.p, h.len) != 0 ||
	    cnt_write_all(fd, v->entries, v->n * sizeof(cnt_view_entry)) != 0 ||
	    cnt_write_all(fd, byname, nslots * sizeof(uint32_t)) != 0 ||
	    cnt_write_all(fd, hist.p, hist.len) != 0 || cnt_write_all(fd, v->pool, v->pool_len) != 0 ||
	    (v->errors && cnt_write_all(fd, v->errors, v->n * 8) != 0)) {
		cnt_err_write(err, errno, "cannot write the view index");
		goto out;
	}
	rc = 0;
	goto out;
oom:
	cnt_err_oom(err, "writing the view index");
out:
	free(byname);
	cnt_buf_release(&h);
	cnt_buf_release(&hist);
	return rc;
}

/* "view 'PATH' is corrupt: <what>; rebuild it with cnt-project". */
static int corrupt(const cnt_view *v, cnt_err *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int corrupt(const cnt_view *v, cnt_err *err, const char *fmt, ...)
{
	char what[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return cnt_err_set(err, "view '%s' is corrupt: %s; rebuild it with cnt-project", v->path, what);
}

/* The checks of "Trust" in view.h, on v->map. */
static int check_layout(cnt_view *v, int flags, cnt_err *err)
{
	const uint8_t *p = v->map;
	uint64_t L = v->map_len, D, P, need, total = 0;
	cnt_err derr;

	if (L < CNT_VIEW_HEADER)
		return corrupt(v, err, "%llu bytes, too short for a view index (truncated?)", (unsigned long long)L);
	if (memcmp(p, magic, 7) == 0 && p[7] >= '0' && p[7] <= '9' && p[7] != magic[7])
		return corrupt(v, err, "index format CNTVIEW%c, this cnt reads CNTVIEW%c", p[7], magic[7]);
	if (memcmp(p, magic, 8) != 0)
		return corrupt(v, err, "not a view index (bad magic)");
	D = get64(p + OFF_D);
	if (D > CNT_VIEWDESC_MAX || D > L - CNT_VIEW_HEADER)
		return corrupt(v, err, "description length %llu is past the end of the file (truncated?)", (unsigned long long)D);
	P = CNT_VIEW_HEADER + D + pad8(D);
	if (P > L)
		return corrupt(v, err, "the description's padding is past the end of the file (truncated?)");
	if (!(flags & CNT_VIEW_NO_CHECKSUMS) && XXH3_64bits(p + 16, P - 16) != get64(p + OFF_HEADER_SUM))
		return corrupt(v, err, "header checksum mismatch");
	if (get64(p + OFF_LEN) != L)
		return corrupt(v, err, "the header gives %llu bytes, the file has %llu (truncated?)",
			(unsigned long long)get64(p + OFF_LEN), (unsigned long long)L);
	v->desc_text = (const char *)p + CNT_VIEW_HEADER;
	v->desc_len = D;
	v->n = get64(p + OFF_N);
	v->head = get64(p + OFF_HEAD);
	v->nbins = get64(p + OFF_NBINS);
	v->pool_len = get64(p + OFF_S);
	v->nslots = get64(p + OFF_H);
	v->data_sum = get64(p + OFF_DATA_SUM);
	v->data_off = P;
	/* Each size against the file before any sum of them. */
	if (v->n >= UINT32_MAX - 1 || v->n > L / 32)
		return corrupt(v, err, "member count %llu is out of range", (unsigned long long)v->n);
	if (v->head > v->n)
		return corrupt(v, err, "head %llu is larger than the member count %llu", (unsigned long long)v->head,
			(unsigned long long)v->n);
	if (v->nbins < 1 || v->nbins > CNT_VIEWDESC_MAX_BINS)
		return corrupt(v, err, "histogram bin count %llu is out of range", (unsigned long long)v->nbins);
	if (v->nslots < 2 || (v->nslots & (v->nslots - 1)) || v->nslots <= v->n || v->nslots > MAX_SLOTS ||
	    v->nslots > L / 4)
		return corrupt(v, err, "name slot count %llu is out of range", (unsigned long long)v->nslots);
	if (v->pool_len > L)
		return corrupt(v, err, "name pool size %llu is out of range", (unsigned long long)v->pool_len);
	need = P + v->n * 32 + v->nslots * 4 + v->nbins * 16 + 8 + v->pool_len;
	/* The error column, if the description (checked below) says so. */
	if (need != L && need + v->n * 8 != L)
		return corrupt(v, err, "its sections add up to %llu bytes, the file has %llu", (unsigned long long)need,
			(unsigned long long)L);
	v->entries = (const cnt_view_entry *)(p + P);
	v->by_name = (const uint32_t *)(p + P + v->n * 32);
	v->edges = (const int64_t *)(p + P + v->n * 32 + v->nslots * 4);
	v->counts = (const uint64_t *)(v->edges + v->nbins + 1);
	v->pool = (const char *)(v->counts + v->nbins);
	if (!(flags & CNT_VIEW_NO_CHECKSUMS) &&
	    XXH3_64bits(v->edges, v->nbins * 16 + 8) != get64(p + OFF_HIST_SUM))
		return corrupt(v, err, "histogram checksum mismatch");
	for (uint64_t i = 0; i < v->nbins; i++) {
		if (v->edges[i] > v->edges[i + 1])
			return corrupt(v, err, "histogram edges %llu and %llu are not in order", (unsigned long long)i,
				(unsigned long long)i + 1);
		if (v->counts[i] > v->n - total)
			return corrupt(v, err, "histogram counts add up to more than the %llu members", (unsigned long long)v->n);
		total += v->counts[i];
	}
	if (total != v->n)
		return corrupt(v, err, "histogram counts add up to %llu, not the %llu members", (unsigned long long)total,
			(unsigned long long)v->n);
	if (cnt_viewdesc_parse(&v->desc, v->desc_text, v->desc_len, &derr) != 0) {
		if (derr.kind == CNT_ERR_NOMEM) {
			*err = derr;
			return -1;
		}
		return corrupt(v, err, "description: %s", derr.msg);
	}
	if (v->desc.members != v->n || v->desc.head != v->head || v->desc.bins != v->nbins)
		return corrupt(v, err, "the description's members, head or bins differ from the header's");
	if (need + (v->desc.errors ? v->n * 8 : 0) != L)
		return corrupt(v, err, "its sections add up to %llu bytes, the file has %llu (the description %s an error column)",
			(unsigned long long)(need + (v->desc.errors ? v->n * 8 : 0)), (unsigned long long)L,
			v->desc.errors ? "announces" : "has no");
	v->errors = v->desc.errors ? p + need : NULL;
	return 0;
}

int cnt_view_open_mem(cnt_view *v, const void *p, size_t n, const char *name, int flags, cnt_err *err)
{
	memset(v, 0, sizeof(*v));
	snprintf(v->path, sizeof(v->path), "%s", name);
	if ((uintptr_t)p % 8)
		return cnt_err_set(err, "internal: a view image must be 8-byte aligned");
	v->map = p;
	v->map_len = n;
	if (check_layout(v, flags, err) != 0) {
		cnt_view_close(v);
		return -1;
	}
	return 0;
}

int cnt_view_open(cnt_view *v, const char *dir, cnt_err *err)
{
	struct stat st;
	const uint8_t *p;
	int fd;

	memset(v, 0, sizeof(*v));
	if ((size_t)snprintf(v->path, sizeof(v->path), "%s/index.bin", dir) >= sizeof(v->path))
		return cnt_err_set(err, "path too long: '%s'", dir);
	fd = open(v->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cnt_err_set(err, "cannot open the view '%s': %s", v->path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return cnt_err_set(err, "view '%s' is not a regular file", v->path);
	}
	if (st.st_size < CNT_VIEW_HEADER) {
		close(fd);
		return corrupt(v, err, "%lld bytes, too short for a view index (truncated?)", (long long)st.st_size);
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return errno == ENOMEM ? cnt_err_oom(err, "mapping the view '%s'", v->path) :
			cnt_err_set(err, "cannot map the view '%s': %s", v->path, strerror(errno));
	v->map = p;
	v->map_len = (size_t)st.st_size;
	v->mapped = 1;
	if (check_layout(v, 0, err) != 0) {
		cnt_view_close(v);
		return -1;
	}
	return 0;
}

void cnt_view_close(cnt_view *v)
{
	if (v->map && v->mapped)
		munmap((void *)(uintptr_t)v->map, v->map_len);
	cnt_viewdesc_release(&v->desc);
	v->map = NULL;
	v->mapped = 0;
	v->entries = NULL;
	v->n = v->head = 0;
}

int cnt_view_name(const cnt_view *v, uint64_t i, const char **name, size_t *len, cnt_err *err)
{
	const cnt_view_entry *e;

	if (i >= v->n)
		return corrupt(v, err, "entry %llu is past the %llu entries", (unsigned long long)i, (unsigned long long)v->n);
	e = &v->entries[i];
	if (e->name_off > v->pool_len || e->name_len > v->pool_len - e->name_off)
		return corrupt(v, err, "entry %llu: its name (offset %llu, length %u) lies outside the %llu-byte name pool",
			(unsigned long long)i, (unsigned long long)e->name_off, e->name_len, (unsigned long long)v->pool_len);
	*name = v->pool + e->name_off;
	*len = e->name_len;
	return 0;
}

int64_t cnt_view_find(const cnt_view *v, const char *name, size_t n)
{
	size_t k = XXH3_64bits(name, n) & (v->nslots - 1);

	for (size_t probes = 0; probes < v->nslots && v->by_name[k]; probes++, k = (k + 1) & (v->nslots - 1)) {
		uint32_t pos = v->by_name[k] - 1;
		const cnt_view_entry *e;

		if (pos >= v->n)
			continue;   /* a damaged slot: as if it held another name */
		e = &v->entries[pos];
		if (e->name_len == n && e->name_off <= v->pool_len && n <= v->pool_len - e->name_off &&
		    memcmp(v->pool + e->name_off, name, n) == 0)
			return pos;
	}
	return -1;
}

int cnt_view_error(const cnt_view *v, uint64_t i, int64_t *e, cnt_err *err)
{
	int64_t x;

	*e = 0;
	if (!cnt_estimate_is(v->desc.counter_type))
		return CNT_VIEW_EXACT;
	if (i >= v->n)
		return corrupt(v, err, "entry %llu is past the %llu entries", (unsigned long long)i, (unsigned long long)v->n);
	if (v->errors == NULL) {
		if (v->desc.counter_type != CNT_CTYPE_UNIQUE || v->entries[i].value < 0)
			return CNT_VIEW_UNKNOWN;
		*e = cnt_estimate_unique_error((uint64_t)v->entries[i].value, CNT_ESTIMATE_P_DEFAULT);
		return CNT_VIEW_ESTIMATE;
	}
	memcpy(&x, v->errors + i * 8, 8);
	if (x < -1)
		return corrupt(v, err, "entry %llu: error bound %lld is negative", (unsigned long long)i, (long long)x);
	if (x == -1)
		return CNT_VIEW_UNKNOWN;
	*e = x;
	return CNT_VIEW_ESTIMATE;
}

int cnt_view_value_error(const cnt_view *v, int64_t self, int64_t value, int64_t *e, cnt_err *err)
{
	*e = 0;
	if (!cnt_estimate_is(v->desc.counter_type))
		return CNT_VIEW_EXACT;
	if (v->desc.counter_type == CNT_CTYPE_UNIQUE) {
		if (value < 0)
			return CNT_VIEW_UNKNOWN;
		*e = cnt_estimate_unique_error((uint64_t)value,
			v->desc.precision ? v->desc.precision : CNT_ESTIMATE_P_DEFAULT);
		return CNT_VIEW_ESTIMATE;
	}
	if (self < 0)
		return CNT_VIEW_ESTIMATE;
	return cnt_view_error(v, (uint64_t)self, e, err);
}

size_t cnt_view_bin(const cnt_view *v, int64_t value)
{
	size_t lo = 0, hi = v->nbins;

	/* The last bin whose lower edge is <= value. */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (v->edges[mid] <= value)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* ---- verify ------------------------------------------------------------ */

/* Whether a ranks at or above b by value and achiever time alone (names
 * are compared by the caller). */
static int value_order(const cnt_viewdesc *d, const cnt_view_entry *a, const cnt_view_entry *b)
{
	if (a->value != b->value)
		return (a->value > b->value) == !d->order_asc ? -1 : 1;
	for (size_t i = 0; i < d->ntie_break; i++) {
		if (d->tie_break[i] == CNT_TIE_EARLIEST_ACHIEVER && a->last_event_time != b->last_event_time)
			return a->last_event_time < b->last_event_time ? -1 : 1;
		if (d->tie_break[i] == CNT_TIE_LATEST_ACHIEVER && a->last_event_time != b->last_event_time)
			return a->last_event_time > b->last_event_time ? -1 : 1;
		if (d->tie_break[i] == CNT_TIE_MEMBER_REF_ASC)
			break;
	}
	return 0;
}

static int verify_avro(const cnt_view *v, const char *dir, cnt_err *err)
{
	char path[4200];
	int fd, rc = -1;
	cnt_reader *r;
	cnt_limits lim = cnt_limits_default();
	const cnt_meta_kv *kv;
	size_t nkv, found = 0;
	uint64_t i = 0;
	cnt_block b;
	int got;

	snprintf(path, sizeof(path), "%s/view.avro", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cnt_err_set(err, "cannot open the view '%s': %s", path, strerror(errno));
	r = cnt_reader_open(fd, path, &lim, err);
	if (r == NULL)
		goto out;
	nkv = cnt_reader_meta(r, &kv);
	for (size_t k = 0; k < nkv; k++)
		if (strcmp(kv[k].key, "cnt.view") == 0) {
			found = 1;
			if (kv[k].vlen != v->desc_len || memcmp(kv[k].val, v->desc_text, v->desc_len) != 0) {
				cnt_err_set(err, "view '%s' is corrupt: its description differs from index.bin's; rebuild it with cnt-project", path);
				goto out;
			}
		}
	if (!found) {
		cnt_err_set(err, "view '%s' is corrupt: it has no description (cnt.view); rebuild it with cnt-project", path);
		goto out;
	}
	while ((got = cnt_reader_next(r, &b, err)) != 0) {
		cnt_cur c = {b.data, b.data + b.len};

		if (got < 0)
			goto out;
		for (int64_t k = 0; k < b.count; k++, i++) {
			int64_t rank, value, let;
			const uint8_t *name;
			size_t nlen;
			const cnt_view_entry *e = i < v->head ? &v->entries[i] : NULL;

			if (cnt_bin_read_long(&c, &rank) || cnt_bin_read_bytes(&c, &name, &nlen) ||
			    cnt_bin_read_long(&c, &value) || cnt_bin_read_long(&c, &let)) {
				cnt_err_set(err, "view '%s' is corrupt: record %llu cannot be decoded; rebuild it with cnt-project",
					path, (unsigned long long)i + 1);
				goto out;
			}
			if (e == NULL || rank != e->rank || value != e->value || let != e->last_event_time ||
			    nlen != e->name_len || memcmp(name, v->pool + e->name_off, nlen) != 0) {
				cnt_err_set(err, "view '%s' is corrupt: record %llu differs from index.bin's entry; rebuild it with cnt-project",
					path, (unsigned long long)i + 1);
				goto out;
			}
		}
	}
	if (i != v->head) {
		cnt_err_set(err, "view '%s' is corrupt: %llu records, the head is %llu; rebuild it with cnt-project", path,
			(unsigned long long)i, (unsigned long long)v->head);
		goto out;
	}
	rc = 0;
out:
	cnt_reader_free(r);
	close(fd);
	return rc;
}

int cnt_view_verify(const cnt_view *v, const char *dir, cnt_err *err)
{
	const cnt_viewdesc *d = &v->desc;
	uint64_t *seen = NULL;

	if (XXH3_64bits(v->map + v->data_off, v->map_len - v->data_off) != v->data_sum)
		return corrupt(v, err, "data checksum mismatch (entries, name slots, histogram or names)");
	for (uint64_t s = 0; s < v->nslots; s++)
		if (v->by_name[s] > v->n)
			return corrupt(v, err, "name slot %llu points past the entries", (unsigned long long)s);
	seen = calloc(v->nbins, sizeof(*seen));
	if (seen == NULL)
		return cnt_err_oom(err, "verifying '%s'", v->path);
	for (uint64_t i = 0; i < v->n; i++) {
		const cnt_view_entry *e = &v->entries[i];
		const char *name;
		size_t len;
		uint32_t want;

		if (cnt_view_name(v, i, &name, &len, err) != 0)
			goto fail;
		if (cnt_view_find(v, name, len) != (int64_t)i) {
			corrupt(v, err, "entry %llu is not found by its name", (unsigned long long)i);
			goto fail;
		}
		if (e->value < v->edges[0] || e->value > v->edges[v->nbins]) {
			corrupt(v, err, "entry %llu: its value lies outside the histogram", (unsigned long long)i);
			goto fail;
		}
		seen[cnt_view_bin(v, e->value)]++;
		if (i == 0) {
			want = 1;
		} else {
			const cnt_view_entry *p = &v->entries[i - 1];
			int o = value_order(d, p, e);

			if (o > 0) {
				corrupt(v, err, "entries %llu and %llu are not in rank order", (unsigned long long)i - 1,
					(unsigned long long)i);
				goto fail;
			}
			want = d->rank_numbering == CNT_RANK_ORDINAL || o < 0 ? (uint32_t)i + 1 : p->rank;
			if (o < 0 && d->rank_numbering == CNT_RANK_DENSE)
				want = p->rank + 1;
		}
		{
			int64_t x;

			if (cnt_view_error(v, i, &x, err) < 0)
				goto fail;
		}
		if (e->rank != want) {
			corrupt(v, err, "entry %llu has rank %u, the numbering gives %u", (unsigned long long)i, e->rank, want);
			goto fail;
		}
	}
	for (uint64_t b = 0; b < v->nbins; b++)
		if (seen[b] != v->counts[b]) {
			corrupt(v, err, "histogram bin %llu counts %llu members, the entries %llu", (unsigned long long)b,
				(unsigned long long)v->counts[b], (unsigned long long)seen[b]);
			goto fail;
		}
	free(seen);
	return dir ? verify_avro(v, dir, err) : 0;
fail:
	free(seen);
	return -1;
}

/* ---- the view directory --------------------------------------------- */

static int put_component(char *buf, size_t n, size_t *o, const char *s)
{
	static const char hx[] = "0123456789ABCDEF";

	for (size_t i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		int safe = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			c == '_' || c == '-' || (c == '.' && i > 0);

		if (*o + 4 >= n)
			return -1;
		if (safe) {
			buf[(*o)++] = (char)c;
		} else {
			buf[(*o)++] = '%';
			buf[(*o)++] = hx[c >> 4];
			buf[(*o)++] = hx[c & 15];
		}
	}
	buf[*o] = 0;
	return 0;
}

int cnt_viewdir_path(char *buf, size_t n, const char *root, const char *board, const char *scope)
{
	size_t o = (size_t)snprintf(buf, n, "%s/", root);

	if (o >= n || put_component(buf, n, &o, board) != 0 || o + 2 >= n)
		return -1;
	buf[o++] = '/';
	return put_component(buf, n, &o, scope);
}

static int mkdirs(const char *path, cnt_err *err)
{
	char tmp[4096];
	size_t n = strlen(path);

	if (n >= sizeof(tmp))
		return cnt_err_set(err, "path too long: '%s'", path);
	memcpy(tmp, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != 0)
			continue;
		tmp[i] = 0;
		if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
			return cnt_err_set(err, "cannot create the directory '%s': %s", tmp, strerror(errno));
		tmp[i] = path[i];
	}
	return 0;
}

int cnt_viewdir_next(const char *scope_dir, int *version, cnt_err *err)
{
	DIR *d;
	struct dirent *e;
	int max = 0;

	if (mkdirs(scope_dir, err) != 0)
		return -1;
	d = opendir(scope_dir);
	if (d == NULL)
		return cnt_err_set(err, "cannot read the directory '%s': %s", scope_dir, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		char *end;
		long v;

		if (e->d_name[0] != 'v' || strlen(e->d_name) != 7)
			continue;
		v = strtol(e->d_name + 1, &end, 10);
		if (*end == 0 && v > max)
			max = (int)v;
	}
	closedir(d);
	if (max >= 999999)
		return cnt_err_set(err, "'%s' already holds version 999999; remove old versions", scope_dir);
	*version = max + 1;
	return 0;
}

static const char ranked_schema[] =
	"{\"type\":\"record\",\"name\":\"RankedEntry\",\"namespace\":\"cnt\","
	"\"doc\":\"One position of a ranked view's materialised head; see cnt-view(5).\","
	"\"fields\":[{\"name\":\"rank\",\"type\":\"long\"},{\"name\":\"member_ref\",\"type\":\"string\"},"
	"{\"name\":\"value\",\"type\":\"long\"},"
	"{\"name\":\"last_event_time\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}}]}";

static void rmtree_version(const char *dir)
{
	char p[4400];

	snprintf(p, sizeof(p), "%s/view.avro", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/index.bin", dir);
	unlink(p);
	rmdir(dir);
}

int cnt_viewdir_write(const char *scope_dir, int version, const cnt_view_build *b, cnt_err *err)
{
	char tmp[4200], fin[4200], file[4300];
	cnt_writer *w = NULL;
	cnt_buf desc = CNT_BUF_INIT;
	int fd = -1;

	if (cnt_view_describe(b, &desc, err) != 0)
		return -1;
	snprintf(tmp, sizeof(tmp), "%s/.v%06d.XXXXXX", scope_dir, version);
	snprintf(fin, sizeof(fin), "%s/v%06d", scope_dir, version);
	if (mkdtemp(tmp) == NULL) {
		cnt_buf_release(&desc);
		return cnt_err_set(err, "cannot create a directory in '%s': %s", scope_dir, strerror(errno));
	}
	chmod(tmp, 0755);
	snprintf(file, sizeof(file), "%s/view.avro", tmp);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		cnt_err_set(err, "cannot create '%s': %s", file, strerror(errno));
		goto fail;
	}
	w = cnt_writer_new(fd, file, ranked_schema, CNT_CODEC_ZSTD, CNT_LEVEL_DEFAULT, 0, err);
	if (w == NULL || cnt_writer_meta(w, "cnt.view", desc.p, desc.len, err) != 0 ||
	    (b->fingerprints != NULL && cnt_writer_meta(w, "cnt.fingerprints", b->fingerprints,
		strlen(b->fingerprints), err) != 0))
		goto fail;
	for (size_t i = 0; i < b->head; i++) {
		const cnt_view_entry *e = &b->entries[i];
		cnt_buf *o = cnt_writer_buf(w);

		if (cnt_bin_write_long(o, e->rank) || cnt_bin_write_bytes(o, b->pool + e->name_off, e->name_len) ||
		    cnt_bin_write_long(o, e->value) || cnt_bin_write_long(o, e->last_event_time)) {
			cnt_err_nomem(err);
			goto fail;
		}
		if (cnt_writer_commit(w, err) != 0)
			goto fail;
	}
	if (cnt_writer_finish(w, err) != 0)
		goto fail;
	cnt_writer_free(w);
	w = NULL;
	/* No fsync: a view is a projection, rebuilt from the log at will; what
	 * matters is that readers never see a half-written one, which the
	 * rename of the complete directory guarantees. */
	if (close(fd) != 0) {
		fd = -1;
		cnt_err_write(err, errno, "cannot write '%s'", file);
		goto fail;
	}
	snprintf(file, sizeof(file), "%s/index.bin", tmp);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		cnt_err_set(err, "cannot create '%s': %s", file, strerror(errno));
		goto fail;
	}
	if (cnt_view_write_index(fd, b, err) != 0)
		goto fail;
	if (close(fd) != 0) {
		fd = -1;
		cnt_err_write(err, errno, "cannot write '%s'", file);
		goto fail;
	}
	fd = -1;
	if (rename(tmp, fin) != 0) {
		cnt_err_set(err, "cannot rename the new view to '%s': %s", fin, strerror(errno));
		goto fail;
	}
	cnt_buf_release(&desc);
	return 0;
fail:
	cnt_buf_release(&desc);
	cnt_writer_free(w);
	if (fd >= 0)
		close(fd);
	rmtree_version(tmp);
	return -1;
}

int cnt_viewdir_publish(const char *scope_dir, int version, cnt_err *err)
{
	char target[32], link[4200], tmp[4200], check[4200];
	struct stat st;

	snprintf(target, sizeof(target), "v%06d", version);
	snprintf(check, sizeof(check), "%s/%s/index.bin", scope_dir, target);
	if (stat(check, &st) != 0)
		return cnt_err_set(err, "'%s' has no version %d to publish", scope_dir, version);
	snprintf(link, sizeof(link), "%s/current", scope_dir);
	snprintf(tmp, sizeof(tmp), "%s/.current.%ld", scope_dir, (long)getpid());
	unlink(tmp);
	if (symlink(target, tmp) != 0)
		return cnt_err_set(err, "cannot create a link in '%s': %s", scope_dir, strerror(errno));
	if (rename(tmp, link) != 0) {
		unlink(tmp);
		return cnt_err_set(err, "cannot switch '%s': %s", link, strerror(errno));
	}
	return 0;
}

int cnt_viewdir_current(const char *scope_dir, int *version, cnt_err *err)
{
	char link[4200], target[64];
	ssize_t n;
	char *end;

	snprintf(link, sizeof(link), "%s/current", scope_dir);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0) {
		if (errno == ENOENT) {
			*version = 0;
			return 0;
		}
		return cnt_err_set(err, "cannot read '%s': %s", link, strerror(errno));
	}
	target[n] = 0;
	if (target[0] != 'v' || (*version = (int)strtol(target + 1, &end, 10)) <= 0 || *end)
		return cnt_err_set(err, "'%s' points at '%s', which is not a view version", link, target);
	return 0;
}

int cnt_viewdir_frozen(const char *scope_dir)
{
	char p[4200];
	struct stat st;

	snprintf(p, sizeof(p), "%s/frozen", scope_dir);
	return stat(p, &st) == 0;
}

int cnt_viewdir_freeze(const char *scope_dir, int on, cnt_err *err)
{
	char m[4200];

	snprintf(m, sizeof(m), "%s/frozen", scope_dir);
	if (on) {
		/* A scope can be frozen before its first view is built. */
		if (mkdirs(scope_dir, err) != 0)
			return -1;
		int fd = open(m, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		if (fd < 0)
			return cnt_err_set(err, "cannot create '%s': %s", m, strerror(errno));
		close(fd);
		return 0;
	}
	if (unlink(m) != 0 && errno != ENOENT)
		return cnt_err_set(err, "cannot remove '%s': %s", m, strerror(errno));
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cnt_viewdir_scopes(const char *root, const char *board, char ***dirs, size_t *n, cnt_err *err)
{
	char bdir[4096];
	size_t o = (size_t)snprintf(bdir, sizeof(bdir), "%s/", root), cap = 0;
	DIR *d;
	struct dirent *e;

	*dirs = NULL;
	*n = 0;
	if (o >= sizeof(bdir) || put_component(bdir, sizeof(bdir), &o, board) != 0)
		return cnt_err_set(err, "path too long");
	d = opendir(bdir);
	if (d == NULL)
		return cnt_err_set(err, "no views of board '%s' in '%s': %s", board, root, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		char path[4400];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", bdir, e->d_name);
		if (*n == cap) {
			char **v = realloc(*dirs, (cap = cap ? cap * 2 : 8) * sizeof(char *));

			if (v == NULL)
				goto oom;
			*dirs = v;
		}
		if (((*dirs)[*n] = strdup(path)) == NULL)
			goto oom;
		(*n)++;
	}
	closedir(d);
	if (*n == 0)
		return cnt_err_set(err, "no views of board '%s' in '%s'", board, root);
	qsort(*dirs, *n, sizeof(char *), cmp_str);
	return 0;
oom:
	closedir(d);
	for (size_t i = 0; i < *n; i++)
		free((*dirs)[i]);
	free(*dirs);
	*dirs = NULL;
	*n = 0;
	return cnt_err_oom(err, "listing the scopes of board '%s'", board);
}

int cnt_viewdir_open(cnt_view *v, const char *root, const char *board, const char *scope, int *version,
	char *vdir, size_t n, int *frozen, cnt_err *err)
{
	char sdir[4096];

	memset(v, 0, sizeof(*v));
	if (cnt_viewdir_path(sdir, sizeof(sdir), root, board, scope) != 0)
		return cnt_err_set(err, "path too long: '%s'", root);
	if (*version == 0 && cnt_viewdir_current(sdir, version, err) != 0)
		return -1;
	if (*version == 0)
		return cnt_err_set(err, "board '%s' scope '%s' has no published view in '%s' (cnt-project builds and publishes one)",
			board, scope, root);
	if ((size_t)snprintf(vdir, n, "%s/v%06d", sdir, *version) >= n)
		return cnt_err_set(err, "path too long: '%s'", sdir);
	*frozen = cnt_viewdir_frozen(sdir);
	if (cnt_view_open(v, vdir, err) != 0)
		return -1;
	if (strcmp(v->desc.board, board) != 0 || strcmp(v->desc.scope, scope) != 0 || v->desc.version != *version) {
		corrupt(v, err, "it describes version %d of board '%s' scope '%s'", v->desc.version, v->desc.board,
			v->desc.scope);
		cnt_view_close(v);
		return -1;
	}
	return 0;
}
