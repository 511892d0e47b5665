/*
 * ivt.c - inline invalid-traffic filters: list files and the rate rule
 * (see ivt.h).
 */
#include "ingest/ivt.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fpset.h"
#include "base/text.h"

/* ---- reading lines -------------------------------------------------------- */

typedef struct line_iter {
	const char *p, *end;
	uint64_t no;
} line_iter;

static int is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

/* The next entry (trimmed, not a comment or blank): 1 with *s, *n and
 * it->no set; 0 at the end. */
static int next_entry(line_iter *it, const char **s, size_t *n)
{
	while (it->p < it->end) {
		const char *nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
		const char *a = it->p, *b = nl ? nl : it->end;

		it->p = nl ? nl + 1 : it->end;
		it->no++;
		while (a < b && is_blank(*a))
			a++;
		while (b > a && is_blank(b[-1]))
			b--;
		if (a == b || *a == '#')
			continue;
		*s = a;
		*n = (size_t)(b - a);
		return 1;
	}
	return 0;
}

/* Copies s for quoting: at most 60 bytes, control characters as '?'. */
static const char *shown(char out[80], const char *s, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n && k < 60; i++)
		out[k++] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
	if (i < n) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
	return out;
}

static int lower(int ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch + 32 : ch;
}

/* ---- user-agent lists ------------------------------------------------------ */

struct cnt_ualist {
	cnt_fpset exact;       /* XXH3-128 of each "=TEXT" */
	size_t nexact, nsub;
	uint16_t cls[256];     /* byte (lowercased) -> class; 0: in no pattern */
	size_t ncls;           /* classes including 0 */
	int32_t *next;         /* DFA: state * ncls + class -> state */
	uint8_t *out;          /* state: some pattern ends here */
	size_t nstates;
};

void cnt_ualist_free(cnt_ualist *l)
{
	if (l == NULL)
		return;
	cnt_fpset_release(&l->exact);
	free(l->next);
	free(l->out);
	free(l);
}

size_t cnt_ualist_size(const cnt_ualist *l)
{
	return l->nexact + l->nsub;
}

static cnt_fp fp_bytes(const char *s, size_t n)
{
	const void *parts[1] = {s};
	size_t lens[1] = {n};

	return cnt_fp_of(1, parts, lens);
}

/* Builds the Aho-Corasick automaton over the substring patterns. */
static int ua_build(cnt_ualist *l, const char *text, size_t n, size_t total)
{
	line_iter it = {text, text + n, 0};
	const char *s;
	size_t len, cap = total + 1, head = 0, tail = 0;
	int32_t *fail = NULL, *queue = NULL;

	l->next = malloc(cap * l->ncls * sizeof(int32_t));
	l->out = calloc(cap, 1);
	fail = calloc(cap, sizeof(int32_t));
	queue = malloc(cap * sizeof(int32_t));
	if (l->next == NULL || l->out == NULL || fail == NULL || queue == NULL) {
		free(fail);
		free(queue);
		return -1;
	}
	for (size_t k = 0; k < cap * l->ncls; k++)
		l->next[k] = -1;
	l->nstates = 1;
	while (next_entry(&it, &s, &len)) {
		int32_t st = 0;

		if (s[0] == '=')
			continue;
		for (size_t i = 0; i < len; i++) {
			int32_t *t = &l->next[(size_t)st * l->ncls + l->cls[lower((unsigned char)s[i])]];

			if (*t < 0)
				*t = (int32_t)l->nstates++;
			st = *t;
		}
		l->out[st] = 1;
	}
	/* Breadth first: failure links, then every missing edge filled. */
	for (size_t c = 0; c < l->ncls; c++) {
		int32_t *t = &l->next[c];

		if (c == 0 || *t < 0) {
			*t = 0;
		} else {
			fail[*t] = 0;
			queue[tail++] = *t;
		}
	}
	while (head < tail) {
		int32_t st = queue[head++];

		for (size_t c = 1; c < l->ncls; c++) {
			int32_t *t = &l->next[(size_t)st * l->ncls + c];
			int32_t f = l->next[(size_t)fail[st] * l->ncls + c];

			if (*t < 0) {
				*t = f;
			} else {
				fail[*t] = f;
				l->out[*t] |= l->out[f];
				queue[tail++] = *t;
			}
		}
		l->next[(size_t)st * l->ncls] = 0;
	}
	free(fail);
	free(queue);
	return 0;
}

cnt_ualist *cnt_ualist_parse(const char *text, size_t n, const char *name, cnt_err *err)
{
	cnt_ualist *l = calloc(1, sizeof(*l));
	line_iter it = {text, text + n, 0};
	const char *s;
	size_t len, total = 0;
	char q[80];

	if (l == NULL || cnt_fpset_init(&l->exact, 64) != 0)
		goto oom;
	l->ncls = 1;
	while (next_entry(&it, &s, &len)) {
		int exact = s[0] == '=';
		const char *p = s + exact;
		size_t pn = len - (size_t)exact;

		if (pn == 0 || pn > CNT_IVT_PATTERN_MAX) {
			cnt_err_set(err, "list '%s': line %" PRIu64 ": a pattern must be 1 to %d bytes",
				name, it.no, CNT_IVT_PATTERN_MAX);
			goto fail;
		}
		for (size_t i = 0; i < pn; i++)
			if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f) {
				cnt_err_set(err, "list '%s': line %" PRIu64 ": '%s' holds a control "
					"character", name, it.no, shown(q, s, len));
				goto fail;
			}
		if (exact) {
			uint64_t old;

			if (cnt_fpset_add(&l->exact, fp_bytes(p, pn), 1, &old) < 0)
				goto oom;
			l->nexact++;
			continue;
		}
		l->nsub++;
		total += pn;
		for (size_t i = 0; i < pn; i++) {
			unsigned char b = (unsigned char)lower((unsigned char)p[i]);

			if (l->cls[b] == 0)
				l->cls[b] = (uint16_t)l->ncls++;
		}
	}
	/* Upper case letters share their lower case class. */
	for (int b = 'A'; b <= 'Z'; b++)
		l->cls[b] = l->cls[b + 32];
	if (ua_build(l, text, n, total) != 0)
		goto oom;
	return l;
oom:
	cnt_err_nomem(err);
	cnt_err_prefix(err, "list '%s'", name);
fail:
	cnt_ualist_free(l);
	return NULL;
}

int cnt_ualist_match(const cnt_ualist *l, const char *ua, size_t n)
{
	uint64_t v;
	int32_t st = 0;

	if (l->nexact && cnt_fpset_find(&l->exact, fp_bytes(ua, n), &v))
		return 1;
	if (l->nsub == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		st = l->next[(size_t)st * l->ncls + l->cls[(unsigned char)ua[i]]];
		if (l->out[st])
			return 1;
	}
	return 0;
}

/* ---- address lists -------------------------------------------------------- */

typedef struct addr {
	int v6;                /* 0: IPv4 (bytes 0..3), 1: IPv6 */
	int len;               /* prefix length */
	unsigned char b[16];
} addr;

struct cnt_addrlist {
	cnt_fpset set;         /* (family, length, network) */
	size_t n;
	unsigned char has4[33], has6[129];
};

void cnt_addrlist_free(cnt_addrlist *l)
{
	if (l == NULL)
		return;
	cnt_fpset_release(&l->set);
	free(l);
}

size_t cnt_addrlist_size(const cnt_addrlist *l)
{
	return l->n;
}

/* Parses "ADDRESS" or "ADDRESS/LEN" (n bytes).  0, -1 not an address,
 * -2 host bits set (with *a filled). */
static int addr_parse(const char *s, size_t n, addr *a)
{
	const char *slash = memchr(s, '/', n);
	size_t an = slash ? (size_t)(slash - s) : n, max;
	char buf[64];
	int host = 0;

	memset(a, 0, sizeof(*a));
	if (an == 0 || an >= sizeof(buf))
		return -1;
	memcpy(buf, s, an);
	buf[an] = '\0';
	if (inet_pton(AF_INET, buf, a->b) == 1) {
		a->v6 = 0;
	} else if (inet_pton(AF_INET6, buf, a->b) == 1) {
		a->v6 = 1;
	} else {
		return -1;
	}
	max = a->v6 ? 128 : 32;
	a->len = (int)max;
	if (slash != NULL) {
		size_t dn = n - an - 1, v = 0;

		if (dn == 0 || dn > 3)
			return -1;
		for (size_t i = 0; i < dn; i++) {
			if (slash[1 + i] < '0' || slash[1 + i] > '9')
				return -1;
			v = v * 10 + (size_t)(slash[1 + i] - '0');
		}
		if (v > max || (dn > 1 && slash[1] == '0'))
			return -1;
		a->len = (int)v;
	}
	/* ::ffff:a.b.c.d is the IPv4 address a.b.c.d */
	if (a->v6 && a->len >= 96 && memcmp(a->b, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0) {
		memmove(a->b, a->b + 12, 4);
		memset(a->b + 4, 0, 12);
		a->v6 = 0;
		a->len -= 96;
	}
	for (int bit = a->len; bit < (a->v6 ? 128 : 32); bit++)
		if (a->b[bit / 8] & (0x80 >> (bit % 8))) {
			host = 1;
			a->b[bit / 8] &= (unsigned char)~(0x80 >> (bit % 8));
		}
	return host ? -2 : 0;
}

/* a's first len bits as a set key. */
static cnt_fp addr_key(const addr *a, int len)
{
	unsigned char k[18] = {0};
	const void *parts[1] = {k};
	size_t lens[1] = {sizeof(k)};

	k[0] = (unsigned char)a->v6;
	k[1] = (unsigned char)len;
	for (int i = 0; i < len / 8; i++)
		k[2 + i] = a->b[i];
	if (len % 8)
		k[2 + len / 8] = (unsigned char)(a->b[len / 8] & (0xff00 >> (len % 8)));
	return cnt_fp_of(1, parts, lens);
}

cnt_addrlist *cnt_addrlist_parse(const char *text, size_t n, const char *name, cnt_err *err)
{
	cnt_addrlist *l = calloc(1, sizeof(*l));
	line_iter it = {text, text + n, 0};
	const char *s;
	size_t len;
	char q[80];

	if (l == NULL || cnt_fpset_init(&l->set, 64) != 0)
		goto oom;
	while (next_entry(&it, &s, &len)) {
		addr a;
		uint64_t old;
		int r = addr_parse(s, len, &a);

		if (r == -1) {
			cnt_err_set(err, "list '%s': line %" PRIu64 ": '%s' is not an IPv4 or IPv6 "
				"address or CIDR range", name, it.no, shown(q, s, len));
			goto fail;
		}
		if (r == -2) {
			cnt_err_set(err, "list '%s': line %" PRIu64 ": '%s' has bits set beyond its "
				"/%d prefix", name, it.no, shown(q, s, len), a.len);
			goto fail;
		}
		if (cnt_fpset_add(&l->set, addr_key(&a, a.len), 1, &old) < 0)
			goto oom;
		if (a.v6)
			l->has6[a.len] = 1;
		else
			l->has4[a.len] = 1;
		l->n++;
	}
	return l;
oom:
	cnt_err_nomem(err);
	cnt_err_prefix(err, "list '%s'", name);
fail:
	cnt_addrlist_free(l);
	return NULL;
}

int cnt_addrlist_match(const cnt_addrlist *l, const char *s, size_t n)
{
	const unsigned char *has;
	uint64_t v;
	addr a;

	if (addr_parse(s, n, &a) == -1)
		return -1;
	has = a.v6 ? l->has6 : l->has4;
	for (int len = 0; len <= a.len; len++)
		if (has[len] && cnt_fpset_find(&l->set, addr_key(&a, len), &v))
			return 1;
	return 0;
}

/* ---- the filters of a run ------------------------------------------------- */

typedef struct viewer {
	int64_t *t;            /* ring of the last event times let through */
	uint32_t cap, n, head;
} viewer;

typedef struct cfilters {
	void **lists;          /* per filter: cnt_ualist, cnt_addrlist or NULL */
} cfilters;

struct cnt_ivt {
	const cnt_defs *defs;
	cfilters *by_counter;
	size_t ncounters;
	cnt_fpset viewers;     /* (counter, filter, viewer) -> index + 1 */
	viewer *vs;
	size_t nvs, capvs;
};

static int read_list(const char *path, char **text, size_t *n, cnt_err *err)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 0, got;

	*text = NULL;
	*n = 0;
	if (f == NULL)
		return cnt_err_set(err, "list '%s': %s", path, strerror(errno));
	for (;;) {
		if (*n == cap) {
			char *p;

			cap = cap ? 2 * cap : 65536;
			if ((p = realloc(*text, cap)) == NULL) {
				fclose(f);
				cnt_err_nomem(err);
				return cnt_err_prefix(err, "list '%s'", path);
			}
			*text = p;
		}
		got = fread(*text + *n, 1, cap - *n, f);
		*n += got;
		if (*n > CNT_IVT_LIST_MAX) {
			fclose(f);
			return cnt_err_set(err, "list '%s': larger than %u MiB", path,
				CNT_IVT_LIST_MAX >> 20);
		}
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		int e = errno;

		fclose(f);
		return cnt_err_set(err, "list '%s': read error: %s", path, strerror(e));
	}
	fclose(f);
	if (memchr(*text, '\0', *n) != NULL)
		return cnt_err_set(err, "list '%s': holds a NUL byte (not a text file)", path);
	return 0;
}

void cnt_ivt_free(cnt_ivt *v)
{
	if (v == NULL)
		return;
	for (size_t i = 0; v->by_counter != NULL && i < v->ncounters; i++) {
		const cnt_counter *c = cnt_defs_counter_at(v->defs, i);

		for (size_t j = 0; v->by_counter[i].lists != NULL && j < c->nfilters; j++) {
			if (c->filters[j].kind == CNT_FILTER_USER_AGENT)
				cnt_ualist_free(v->by_counter[i].lists[j]);
			else if (c->filters[j].kind == CNT_FILTER_ADDRESS)
				cnt_addrlist_free(v->by_counter[i].lists[j]);
		}
		free(v->by_counter[i].lists);
	}
	free(v->by_counter);
	for (size_t i = 0; i < v->nvs; i++)
		free(v->vs[i].t);
	free(v->vs);
	cnt_fpset_release(&v->viewers);
	free(v);
}

cnt_ivt *cnt_ivt_new(const cnt_defs *d, cnt_err *err)
{
	cnt_ivt *v = calloc(1, sizeof(*v));
	char *text = NULL;
	size_t n;

	if (v == NULL)
		goto oom;
	v->defs = d;
	v->ncounters = cnt_defs_ncounters(d);
	if ((v->by_counter = calloc(v->ncounters + 1, sizeof(*v->by_counter))) == NULL ||
	    cnt_fpset_init(&v->viewers, 1024) != 0)
		goto oom;
	for (size_t i = 0; i < v->ncounters; i++) {
		const cnt_counter *c = cnt_defs_counter_at(d, i);

		if (c->nfilters == 0)
			continue;
		if ((v->by_counter[i].lists = calloc(c->nfilters, sizeof(void *))) == NULL)
			goto oom;
		for (size_t j = 0; j < c->nfilters; j++) {
			const cnt_filter *f = &c->filters[j];

			if (f->kind == CNT_FILTER_RATE)
				continue;
			if (read_list(f->list_path, &text, &n, err) != 0)
				goto fail_at;
			v->by_counter[i].lists[j] = f->kind == CNT_FILTER_USER_AGENT
				? (void *)cnt_ualist_parse(text, n, f->list_path, err)
				: (void *)cnt_addrlist_parse(text, n, f->list_path, err);
			free(text);
			text = NULL;
			if (v->by_counter[i].lists[j] == NULL)
				goto fail_at;
			continue;
fail_at:
			if (err != NULL && err->kind != CNT_ERR_NOMEM) {
				char m[sizeof(err->msg)];

				snprintf(m, sizeof(m), "%s", err->msg);
				cnt_err_set(err, "%s (filters[%zu] of counter '%s/%s')", m, j,
					c->tenant_id, c->counter_id);
			}
			goto fail;
		}
	}
	return v;
oom:
	cnt_err_nomem(err);
fail:
	free(text);
	cnt_ivt_free(v);
	return NULL;
}

int cnt_ivt_any(const cnt_ivt *v, const cnt_counter *c)
{
	(void)v;
	return c->nfilters > 0;
}

int cnt_ivt_attr(const cnt_ivt_event *e, const char *key, cnt_slice *out)
{
	size_t kn = strlen(key);

	for (size_t i = 0; i < e->nattrs; i++)
		if (e->attr_keys[i].n == kn && memcmp(e->attr_keys[i].p, key, kn) == 0) {
			*out = e->attr_vals[i];
			if (out->p == NULL)
				out->p = "";
			return 1;
		}
	return 0;
}

#define SHOW(s) CNT_CUT(s, 64)   /* a name from the input, cut whole */

int cnt_ivt_lists(const cnt_ivt *v, const cnt_counter *c, const cnt_ivt_event *e, char *msg,
	size_t msgn)
{
	size_t ci = cnt_defs_counter_index(v->defs, c);

	for (size_t j = 0; j < c->nfilters; j++) {
		const cnt_filter *f = &c->filters[j];
		const void *l = v->by_counter[ci].lists[j];
		cnt_slice val;

		if (f->kind == CNT_FILTER_RATE || !cnt_ivt_attr(e, f->attr, &val))
			continue;
		if (f->kind == CNT_FILTER_USER_AGENT && cnt_ualist_match(l, val.p, val.n) == 1) {
			snprintf(msg, msgn, "attrs '%s' '%.*s%s' matches the user-agent list '%s'",
				f->attr, SHOW(val), f->list);
			return (int)j;
		}
		if (f->kind == CNT_FILTER_ADDRESS && cnt_addrlist_match(l, val.p, val.n) == 1) {
			snprintf(msg, msgn, "attrs '%s' '%.*s%s' is in the address list '%s'",
				f->attr, SHOW(val), f->list);
			return (int)j;
		}
	}
	return -1;
}

/* The viewer slot key of e under filter j of counter ci: 1 with *fp set,
 * 0 when e has no viewer for it. */
static int viewer_key(const cnt_filter *f, size_t ci, size_t j, const cnt_ivt_event *e, cnt_fp *fp)
{
	uint64_t ids[2] = {ci, j};
	cnt_slice who;
	const void *parts[2];
	size_t lens[2] = {sizeof(ids), 0};

	if (f->attr != NULL) {
		if (!cnt_ivt_attr(e, f->attr, &who))
			return 0;
	} else {
		if (e->item.p == NULL)
			return 0;
		who = e->item;
	}
	parts[0] = ids;
	parts[1] = who.p;
	lens[1] = who.n;
	*fp = cnt_fp_of(2, parts, lens);
	return 1;
}

static uint64_t dist(int64_t a, int64_t b)
{
	return a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
}

int cnt_ivt_rate(cnt_ivt *v, const cnt_counter *c, const cnt_ivt_event *e, char *msg,
	size_t msgn)
{
	size_t ci = cnt_defs_counter_index(v->defs, c);

	for (size_t j = 0; j < c->nfilters; j++) {
		const cnt_filter *f = &c->filters[j];
		uint64_t idx, span = (uint64_t)f->span_s * 1000;
		const viewer *w;
		cnt_fp fp;
		uint32_t k;

		if (f->kind != CNT_FILTER_RATE || !viewer_key(f, ci, j, e, &fp) ||
		    !cnt_fpset_find(&v->viewers, fp, &idx))
			continue;
		w = &v->vs[idx - 1];
		if (w->n < (uint64_t)f->max_events)
			continue;
		for (k = 0; k < w->n; k++)
			if (dist(w->t[k], e->event_time_ms) >= span)
				break;
		if (k < w->n)
			continue;
		{
			cnt_slice who = e->item;

			if (f->attr != NULL)
				cnt_ivt_attr(e, f->attr, &who);
			snprintf(msg, msgn, "%s '%.*s%s' already has %" PRId64 " events within %" PRId64
				" s of this one (at most %" PRId64 " per %" PRId64 " s)",
				f->attr ? f->attr : "item", SHOW(who), f->max_events, f->span_s,
				f->max_events, f->span_s);
		}
		return (int)j;
	}
	return -1;
}

int cnt_ivt_rate_commit(cnt_ivt *v, const cnt_counter *c, const cnt_ivt_event *e)
{
	size_t ci = cnt_defs_counter_index(v->defs, c);

	for (size_t j = 0; j < c->nfilters; j++) {
		const cnt_filter *f = &c->filters[j];
		uint64_t idx;
		viewer *w;
		cnt_fp fp;

		if (f->kind != CNT_FILTER_RATE || !viewer_key(f, ci, j, e, &fp))
			continue;
		if (!cnt_fpset_find(&v->viewers, fp, &idx)) {
			if (v->nvs == v->capvs) {
				size_t nc = v->capvs ? 2 * v->capvs : 256;
				viewer *p = realloc(v->vs, nc * sizeof(*p));

				if (p == NULL)
					return -1;
				v->vs = p;
				v->capvs = nc;
			}
			if (cnt_fpset_add(&v->viewers, fp, v->nvs + 1, &idx) < 0)
				return -1;
			v->vs[v->nvs] = (viewer){NULL, 0, 0, 0};
			idx = ++v->nvs;
		}
		w = &v->vs[idx - 1];
		if (w->n < (uint64_t)f->max_events) {
			/* grow: the ring is still in insertion order from 0 */
			if (w->n == w->cap) {
				uint32_t nc = w->cap ? 2 * w->cap : 2;
				int64_t *p;

				if (nc > f->max_events)
					nc = (uint32_t)f->max_events;
				if ((p = realloc(w->t, nc * sizeof(*p))) == NULL)
					return -1;
				w->t = p;
				w->cap = nc;
			}
			w->t[w->n++] = e->event_time_ms;
		} else {
			w->t[w->head] = e->event_time_ms;
			w->head = (w->head + 1) % w->n;
		}
	}
	return 0;
}
