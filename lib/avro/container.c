/*
 * container.c - Avro object container reader and writer (see container.h).
 */
#include "avro/container.h"
#include "base/outfile.h"
#include "base/text.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "avro/encoding.h"

static const uint8_t magic[4] = {'O', 'b', 'j', 1};

/* One container's header.  Headers are kept until the reader is freed,
 * because with read-ahead the producer may already be in the next
 * container while the consumer still decodes blocks of this one. */
typedef struct hdr {
	struct hdr *next;
	cnt_avro_schema *schema;
	cnt_meta_kv *meta;
	size_t nmeta;
	uint8_t sync[CNT_SYNC_SIZE];
	cnt_codec_id cid;
	unsigned container;
	size_t min_record;       /* smallest encoded record of the schema */
	int end_declared;        /* cnt.end_marker in the header */
	int ended;               /* its end marker was read (producer side) */
	int check_class;         /* the check's classify() of the schema */
} hdr;

/* A block on its way from the stream to the consumer. */
typedef struct job {
	enum { J_FREE, J_RAW, J_WORKING, J_DONE } state;
	uint64_t seq;
	int rc;                  /* 1 a block, 0 the end, -1 an error */
	cnt_err err;
	cnt_err check_err;       /* the check's failure (b.check_err) */
	cnt_buf comp;            /* the payload as stored */
	cnt_buf out;             /* decompressed */
	cnt_block b;
	const hdr *h;
} job;

#define NJOBS 6
#define MAX_WORKERS 2

struct cnt_reader {
	int fd;
	char *name;
	cnt_limits lim;
	uint8_t *in;
	size_t in_cap, in_pos, in_len;
	int eof;
	uint64_t in_base;      /* stream offset of in[0] */
	hdr *hdrs, *cur;       /* all headers; the producer's current one */
	const hdr *out_hdr;    /* header of the last block handed out */
	uint64_t block_no;
	uint64_t records;
	cnt_block_check chk;   /* chk.check NULL: none */
	/* synchronous reading */
	cnt_codec *codec;
	cnt_buf dec;
	/* read-ahead: a producer thread reads blocks, workers decompress */
	int report_headers;
	int wake[2];           /* written to stop the producer's wait for input */
	int async;
	pthread_t producer, workers[MAX_WORKERS];
	int nworkers;
	pthread_mutex_t mu;
	/* Each waiter has its own condition, so a change wakes only the
	 * thread that waits for it (a broadcast to all cost ~10 % in
	 * context switches): the producer waits for a free slot, the
	 * workers for a stored block, the consumer for its block. */
	pthread_cond_t cv_free, cv_raw, cv_done;
	job jobs[NJOBS];
	uint64_t pseq, cseq;   /* next sequence to produce / consume */
	int stop, producer_done;
	job *held;             /* the job the consumer holds, freed next call */
};

static uint64_t offset_of(const cnt_reader *r)
{
	return r->in_base + r->in_pos;
}

/* Makes at least n bytes available from in_pos, unless the input ends
 * first.  Returns the number available (< n only at the end), or -1 on a
 * read error. */
static ssize_t fill(cnt_reader *r, size_t n, cnt_err *err)
{
	size_t avail = r->in_len - r->in_pos;

	if (avail >= n || r->eof)
		return (ssize_t)avail;
	if (r->in_pos > 0) {
		memmove(r->in, r->in + r->in_pos, avail);
		r->in_base += r->in_pos;
		r->in_pos = 0;
		r->in_len = avail;
	}
	if (n > r->in_cap) {
		size_t cap = r->in_cap;
		uint8_t *p;

		while (cap < n)
			cap *= 2;
		p = realloc(r->in, cap);
		if (p == NULL) {
			cnt_err_oom(err, "for a %zu-byte read of '%s'", n, r->name);
			return -1;
		}
		r->in = p;
		r->in_cap = cap;
	}
	while (r->in_len < n && !r->eof) {
		ssize_t got;

		/* The producer thread must not block in read() for ever when
		 * the reader is freed early (a pipe nobody closes): it waits
		 * for the input or for the wake-up pipe, whichever comes. */
		if (r->async) {
			struct pollfd pf[2] = {{r->fd, POLLIN, 0}, {r->wake[0], POLLIN, 0}};

			if (poll(pf, 2, -1) < 0) {
				if (errno == EINTR)
					continue;
				cnt_err_set(err, "'%s': poll: %s", r->name, strerror(errno));
				return -1;
			}
			if (pf[1].revents) {
				cnt_err_set(err, "'%s': reading stopped", r->name);
				return -1;
			}
		}
		got = read(r->fd, r->in + r->in_len, r->in_cap - r->in_len);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			cnt_err_set(err, "'%s': read error at byte %llu: %s", r->name,
				(unsigned long long)(r->in_base + r->in_len), strerror(errno));
			return -1;
		}
		if (got == 0)
			r->eof = 1;
		r->in_len += (size_t)got;
	}
	return (ssize_t)(r->in_len - r->in_pos);
}

static int read_long(cnt_reader *r, int64_t *v, cnt_err *err)
{
	ssize_t avail = fill(r, 10, err);
	cnt_cur c;

	if (avail < 0)
		return -1;
	c.p = r->in + r->in_pos;
	c.end = c.p + avail;
	if (cnt_bin_read_long(&c, v) != 0)
		return cnt_err_set(err, "'%s' byte %llu: %s", r->name, (unsigned long long)offset_of(r),
			avail < 10 ? "file ends inside a length: truncated?" : "malformed varint");
	r->in_pos = (size_t)(c.p - r->in);
	return 0;
}

static void hdr_free(hdr *h)
{
	for (size_t i = 0; i < h->nmeta; i++) {
		free(h->meta[i].key);
		free(h->meta[i].val);
	}
	free(h->meta);
	cnt_avro_schema_free(h->schema);
	free(h);
}

static int read_header(cnt_reader *r, cnt_err *err)
{
	uint64_t start = offset_of(r);
	size_t total = 0, cap = 0;
	const cnt_meta_kv *schema_kv = NULL, *codec_kv = NULL;
	ssize_t avail = fill(r, 4, err);
	hdr *h;

	if (avail < 0)
		return -1;
	if (avail == 0 && start == 0) {
		struct stat st;

		/* A cnt tool writes at least a header even for no records, so
		 * an empty pipe means the command before failed: say so, so
		 * that the root cause is read first, not this. */
		if (fstat(r->fd, &st) == 0 && S_ISFIFO(st.st_mode))
			return cnt_err_set(err, "'%s': empty input from a pipe: the command before this one failed (see its message) or wrote nothing", r->name);
		return cnt_err_set(err, "'%s': empty input, not an Avro container file", r->name);
	}
	if (avail < 4 || memcmp(r->in + r->in_pos, magic, 4) != 0)
		return cnt_err_set(err, "'%s' byte %llu: not an Avro container file (no \"Obj\\x01\" magic)",
			r->name, (unsigned long long)start);
	r->in_pos += 4;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return cnt_err_nomem(err);
	/* Linked first, so that every exit below leaves it to be freed. */
	h->next = r->hdrs;
	r->hdrs = h;
	for (;;) {
		int64_t count, sz;

		if (read_long(r, &count, err) != 0)
			return -1;
		if (count == 0)
			break;
		if (count < 0) {
			if (count == INT64_MIN || read_long(r, &sz, err) != 0)
				return cnt_err_set(err, "'%s' byte %llu: bad metadata block", r->name, (unsigned long long)offset_of(r));
			count = -count;
		}
		if ((uint64_t)count > 4096 || h->nmeta + (size_t)count > 4096)
			return cnt_err_set(err, "'%s' byte %llu: header claims %lld metadata entries (bound 4096)",
				r->name, (unsigned long long)offset_of(r), (long long)count);
		for (int64_t i = 0; i < count; i++) {
			int64_t len[2];
			uint8_t *part[2];

			for (int k = 0; k < 2; k++) {
				if (read_long(r, &len[k], err) != 0) {
					if (k)
						free(part[0]);
					return -1;
				}
				ssize_t got;

				if (len[k] < 0 || (uint64_t)len[k] > r->lim.max_header - total) {
					if (k)
						free(part[0]);
					return cnt_err_set(err, "'%s' byte %llu: header metadata larger than %zu bytes (bound max_header)",
						r->name, (unsigned long long)offset_of(r), r->lim.max_header);
				}
				/* A failed read or allocation is said as such, not
				 * taken for the end of the file. */
				got = fill(r, (size_t)len[k], err);
				if (got < len[k] || (part[k] = malloc((size_t)len[k] + 1)) == NULL) {
					if (k)
						free(part[0]);
					if (got < 0)
						return -1;
					if (got >= len[k])
						return cnt_err_oom(err, "reading the header of '%s'", r->name);
					return cnt_err_set(err, "'%s' byte %llu: file ends inside the header: truncated?",
						r->name, (unsigned long long)offset_of(r));
				}
				total += (size_t)len[k];
				memcpy(part[k], r->in + r->in_pos, (size_t)len[k]);
				part[k][len[k]] = 0;
				r->in_pos += (size_t)len[k];
			}
			if (h->nmeta == cap) {
				size_t ncap = cap ? cap * 2 : 8;
				cnt_meta_kv *m = realloc(h->meta, ncap * sizeof(*m));

				if (m == NULL) {
					free(part[0]);
					free(part[1]);
					return cnt_err_oom(err, "reading the header of '%s'", r->name);
				}
				h->meta = m;
				cap = ncap;
			}
			h->meta[h->nmeta].key = (char *)part[0];
			h->meta[h->nmeta].val = part[1];
			h->meta[h->nmeta].vlen = (size_t)len[1];
			h->nmeta++;
		}
	}
	if (fill(r, CNT_SYNC_SIZE, err) < CNT_SYNC_SIZE)
		return cnt_err_set(err, "'%s' byte %llu: file ends inside the header's sync marker: truncated?",
			r->name, (unsigned long long)offset_of(r));
	memcpy(h->sync, r->in + r->in_pos, CNT_SYNC_SIZE);
	r->in_pos += CNT_SYNC_SIZE;
	for (size_t i = 0; i < h->nmeta; i++) {
		if (strcmp(h->meta[i].key, "avro.schema") == 0)
			schema_kv = &h->meta[i];
		else if (strcmp(h->meta[i].key, "avro.codec") == 0)
			codec_kv = &h->meta[i];
		else if (strcmp(h->meta[i].key, CNT_END_MARKER_KEY) == 0)
			h->end_declared = 1;
	}
	if (schema_kv == NULL)
		return cnt_err_set(err, "'%s' byte %llu: header has no avro.schema", r->name, (unsigned long long)start);
	h->cid = CNT_CODEC_NULL;
	if (codec_kv && cnt_codec_lookup((const char *)codec_kv->val, codec_kv->vlen, &h->cid) != 0) {
		char shown[CNT_SHOWN_SIZE(64)];

		return cnt_err_set(err, "'%s' byte %llu: unsupported codec '%s' (supported: null, deflate, snappy, xz, zstandard, bzip2)",
			r->name, (unsigned long long)start, cnt_shown(codec_kv->val, codec_kv->vlen, 64, shown));
	}
	h->schema = cnt_avro_schema_parse((const char *)schema_kv->val, schema_kv->vlen, err);
	if (h->schema == NULL)
		return cnt_err_prefix(err, "'%s' byte %llu: avro.schema", r->name, (unsigned long long)start);
	h->min_record = cnt_schema_min_size(h->schema->root);
	h->check_class = r->chk.check ? r->chk.classify(r->chk.arg, h->schema) : 0;
	h->container = r->cur ? r->cur->container + 1 : 1;
	r->cur = h;
	r->block_no = 0;
	return 0;
}

/* At the end of a container (end of input, or another header): one that
 * declared an end marker must have had it. */
static int check_ended(cnt_reader *r, int at_eof, cnt_err *err)
{
	struct stat st;

	if (r->cur == NULL || !r->cur->end_declared || r->cur->ended)
		return 0;
	if (fstat(r->fd, &st) == 0 && S_ISFIFO(st.st_mode))
		return cnt_err_set(err, "'%s' byte %llu: upstream ended without its end marker: the stage before failed "
			"or was stopped (see its message); its %llu records are not a complete stream",
			r->name, (unsigned long long)offset_of(r), (unsigned long long)r->records);
	return cnt_err_set(err, "'%s' byte %llu: %s without the end marker its writer puts after the last block: "
		"the file is truncated, or its writer failed or is still writing",
		r->name, (unsigned long long)offset_of(r), at_eof ? "the file ends" : "a container ends");
}

/* Reads the next block as stored: on 1, *payload and *size point into the
 * input buffer (valid until the next read) and b has its numbers. */
static int next_raw(cnt_reader *r, cnt_block *b, const uint8_t **payload, size_t *size, cnt_err *err)
{
	int64_t count, sz;
	uint64_t at;
	ssize_t avail;

again:
	for (;;) {
		avail = fill(r, 4, err);
		if (avail < 0)
			return -1;
		if (avail == 0)
			return check_ended(r, 1, err) == 0 ? 0 : -1;
		if (avail >= 4 && memcmp(r->in + r->in_pos, magic, 4) == 0) {
			/* Another container follows (cat a.avro b.avro). */
			if (check_ended(r, 0, err) != 0 || read_header(r, err) != 0)
				return -1;
			if (r->report_headers)
				return 2;
			continue;
		}
		if (r->cur->ended)
			return cnt_err_set(err, "'%s' byte %llu: a block after the end marker of container %u: corrupt file",
				r->name, (unsigned long long)offset_of(r), r->cur->container);
		break;
	}
	at = offset_of(r);
	r->block_no++;
	if (read_long(r, &count, err) != 0 || read_long(r, &sz, err) != 0)
		return cnt_err_set(err, "'%s' byte %llu: block %llu: malformed or truncated block header",
			r->name, (unsigned long long)at, (unsigned long long)r->block_no);
	if (count < 0)
		return cnt_err_set(err, "'%s' byte %llu: block %llu has a negative record count (%lld): corrupt file",
			r->name, (unsigned long long)at, (unsigned long long)r->block_no, (long long)count);
	if (sz < 0 || (uint64_t)sz > r->lim.max_block_bytes)
		return cnt_err_set(err, "'%s' byte %llu: block %llu claims %lld bytes, over the %zu-byte bound (max_block_bytes): corrupt file?",
			r->name, (unsigned long long)at, (unsigned long long)r->block_no, (long long)sz, r->lim.max_block_bytes);
	avail = fill(r, (size_t)sz + CNT_SYNC_SIZE, err);
	if (avail < 0)
		return -1;
	if ((size_t)avail < (size_t)sz + CNT_SYNC_SIZE)
		return cnt_err_set(err, "'%s' byte %llu: block %llu is cut short (%lld bytes claimed, %zd present): truncated file",
			r->name, (unsigned long long)at, (unsigned long long)r->block_no, (long long)sz,
			avail >= CNT_SYNC_SIZE ? avail - CNT_SYNC_SIZE : 0);
	if (memcmp(r->in + r->in_pos + sz, r->cur->sync, CNT_SYNC_SIZE) != 0)
		return cnt_err_set(err, "'%s' byte %llu: block %llu does not end with the header's sync marker: corrupt file",
			r->name, (unsigned long long)at, (unsigned long long)r->block_no);
	*payload = r->in + r->in_pos;
	*size = (size_t)sz;
	r->in_pos += (size_t)sz + CNT_SYNC_SIZE;
	if (count == 0 && r->cur->end_declared) {
		/* The end marker: an empty block, the container's last; not
		 * handed out. */
		r->cur->ended = 1;
		goto again;
	}
	b->count = count;
	b->block_no = r->block_no;
	b->first_record = r->records;
	b->offset = at;
	r->records += (uint64_t)count;
	return 1;
}

/* Turns a stored payload into records: decompresses into out (or points
 * at the payload for the null codec) and checks the record count. */
static int finish_block(cnt_reader *r, const hdr *h, cnt_codec *codec, const uint8_t *payload,
	size_t size, cnt_buf *out, cnt_block *b, cnt_err *err)
{
	if (h->cid == CNT_CODEC_NULL || (size == 0 && b->count == 0)) {
		b->data = payload;
		b->len = size;
	} else {
		if (cnt_codec_decompress(codec, h->cid, payload, size, out, r->lim.max_block_decoded, err) != 0)
			return cnt_err_prefix(err, "'%s' byte %llu: block %llu (%s)", r->name,
				(unsigned long long)b->offset, (unsigned long long)b->block_no, cnt_codec_name(h->cid));
		b->data = out->p;
		b->len = out->len;
	}
	if (b->count > 0 && ((h->min_record > 0 && (uint64_t)b->count > b->len / h->min_record) ||
	    (uint64_t)b->count > r->lim.max_block_decoded))
		return cnt_err_set(err, "'%s' byte %llu: block %llu claims %lld records in %zu bytes: corrupt file",
			r->name, (unsigned long long)b->offset, (unsigned long long)b->block_no, (long long)b->count, b->len);
	return 0;
}

/* ---- read-ahead ------------------------------------------------------ */

static void *producer_main(void *arg)
{
	cnt_reader *r = arg;

	for (;;) {
		job *j;
		const uint8_t *payload = NULL;
		size_t size = 0;
		cnt_block b;
		cnt_err err;
		int rc, jrc;

		memset(&b, 0, sizeof(b));
		rc = next_raw(r, &b, &payload, &size, &err);
		pthread_mutex_lock(&r->mu);
		j = &r->jobs[r->pseq % NJOBS];
		while (j->state != J_FREE && !r->stop)
			pthread_cond_wait(&r->cv_free, &r->mu);
		if (r->stop) {
			pthread_mutex_unlock(&r->mu);
			break;
		}
		pthread_mutex_unlock(&r->mu);
		/* The slot is ours until it is marked J_RAW. */
		j->seq = r->pseq;
		j->rc = rc;
		j->b = b;
		j->h = r->cur;
		if (rc < 0)
			j->err = err;
		if (rc == 1 && cnt_buf_reserve(&j->comp, size) == 0) {
			j->comp.len = 0;
			cnt_buf_append(&j->comp, payload, size);
		} else if (rc == 1) {
			j->rc = -1;
			cnt_err_nomem(&j->err);
		}
		pthread_mutex_lock(&r->mu);
		jrc = j->rc;   /* a worker may change it once the slot is J_RAW */
		j->state = rc == 1 && jrc == 1 ? J_RAW : J_DONE;
		r->pseq++;
		if (j->state == J_RAW)
			pthread_cond_signal(&r->cv_raw);
		else
			pthread_cond_signal(&r->cv_done);   /* the end, an error, a header */
		if (jrc <= 0) {
			r->producer_done = 1;
			pthread_cond_broadcast(&r->cv_raw);   /* idle workers end */
		}
		pthread_mutex_unlock(&r->mu);
		if (rc <= 0 || jrc <= 0)
			break;
	}
	return NULL;
}

/* The oldest stored block, now J_WORKING and the caller's to finish, or
 * NULL when there is none.  Called with mu held. */
static job *take_raw(cnt_reader *r)
{
	job *j = NULL;
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < NJOBS; i++)
		if (r->jobs[i].state == J_RAW && r->jobs[i].seq < best) {
			best = r->jobs[i].seq;
			j = &r->jobs[i];
		}
	if (j != NULL)
		j->state = J_WORKING;
	return j;
}

/* Decompresses a taken block, without mu. */
static void work(cnt_reader *r, job *j, cnt_codec *codec)
{
	if (codec == NULL) {
		j->rc = -1;
		cnt_err_nomem(&j->err);
	} else if (finish_block(r, j->h, codec, j->comp.p, j->comp.len, &j->out, &j->b, &j->err) != 0) {
		j->rc = -1;
	} else if (j->h->check_class != 0) {
		j->b.checked = 1;
		if (r->chk.check(r->chk.arg, j->h->check_class, j->h->schema, &j->b, &j->b.bad_record, &j->check_err) != 0)
			j->b.check_err = &j->check_err;
	}
}

static void *worker_main(void *arg)
{
	cnt_reader *r = arg;
	cnt_codec *codec = cnt_codec_new();

	for (;;) {
		job *j = NULL;

		pthread_mutex_lock(&r->mu);
		while (!r->stop && (j = take_raw(r)) == NULL && !r->producer_done)
			pthread_cond_wait(&r->cv_raw, &r->mu);
		pthread_mutex_unlock(&r->mu);
		if (j == NULL)
			break;
		work(r, j, codec);
		pthread_mutex_lock(&r->mu);
		j->state = J_DONE;
		pthread_cond_signal(&r->cv_done);
		pthread_mutex_unlock(&r->mu);
	}
	cnt_codec_free(codec);
	return NULL;
}

static void stop_async(cnt_reader *r);

static void destroy_conds(cnt_reader *r)
{
	pthread_cond_destroy(&r->cv_done);
	pthread_cond_destroy(&r->cv_raw);
	pthread_cond_destroy(&r->cv_free);
}

static int start_async(cnt_reader *r)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	const char *env = getenv("CNT_READ_THREADS");

	r->nworkers = cpus >= 2 ? 2 : 1;
	if (env != NULL)
		r->nworkers = atoi(env);
	if (r->nworkers <= 0 || r->cur->cid == CNT_CODEC_NULL)
		return 0;   /* nothing to decompress: read in the caller's thread */
	if (r->nworkers > MAX_WORKERS)
		r->nworkers = MAX_WORKERS;
	if (pthread_mutex_init(&r->mu, NULL) != 0)
		return 0;
	if (pthread_cond_init(&r->cv_free, NULL) != 0) {
		pthread_mutex_destroy(&r->mu);
		return 0;
	}
	if (pthread_cond_init(&r->cv_raw, NULL) != 0) {
		pthread_cond_destroy(&r->cv_free);
		pthread_mutex_destroy(&r->mu);
		return 0;
	}
	if (pthread_cond_init(&r->cv_done, NULL) != 0) {
		pthread_cond_destroy(&r->cv_raw);
		pthread_cond_destroy(&r->cv_free);
		pthread_mutex_destroy(&r->mu);
		return 0;
	}
	if (pipe2(r->wake, O_CLOEXEC) != 0) {
		destroy_conds(r);
		pthread_mutex_destroy(&r->mu);
		return 0;
	}
	r->async = 1;
	if (pthread_create(&r->producer, NULL, producer_main, r) != 0) {
		r->async = 0;
		close(r->wake[0]);
		close(r->wake[1]);
		destroy_conds(r);
		pthread_mutex_destroy(&r->mu);
		return 0;
	}
	for (int i = 0; i < r->nworkers; i++)
		if (pthread_create(&r->workers[i], NULL, worker_main, r) != 0) {
			r->nworkers = i;
			break;
		}
	if (r->nworkers == 0) {
		/* No worker could start: the producer's blocks would wait for
		 * ever.  Stop it. */
		stop_async(r);
		return -1;
	}
	return 0;
}

static void stop_async(cnt_reader *r)
{
	if (!r->async)
		return;
	pthread_mutex_lock(&r->mu);
	r->stop = 1;
	pthread_cond_broadcast(&r->cv_free);
	pthread_cond_broadcast(&r->cv_raw);
	pthread_cond_broadcast(&r->cv_done);
	pthread_mutex_unlock(&r->mu);
	/* Wakes a producer waiting for input (see fill). */
	while (write(r->wake[1], "x", 1) < 0 && errno == EINTR)
		;
	pthread_join(r->producer, NULL);
	for (int i = 0; i < r->nworkers; i++)
		pthread_join(r->workers[i], NULL);
	close(r->wake[0]);
	close(r->wake[1]);
	destroy_conds(r);
	pthread_mutex_destroy(&r->mu);
	r->async = 0;
}

/* ---- public reader ---------------------------------------------------- */

cnt_reader *cnt_reader_open(int fd, const char *name, const cnt_limits *lim, cnt_err *err)
{
	return cnt_reader_open_prefixed(fd, name, NULL, 0, lim, 0, err);
}

cnt_reader *cnt_reader_open_prefixed(int fd, const char *name, const void *prefix, size_t n,
	const cnt_limits *lim, int flags, cnt_err *err)
{
	return cnt_reader_open_checked(fd, name, prefix, n, lim, flags, NULL, err);
}

cnt_reader *cnt_reader_open_checked(int fd, const char *name, const void *prefix, size_t n,
	const cnt_limits *lim, int flags, const cnt_block_check *chk, cnt_err *err)
{
	cnt_reader *r = calloc(1, sizeof(*r));

	if (r == NULL) {
		cnt_err_nomem(err);
		return NULL;
	}
	if (chk)
		r->chk = *chk;
	r->report_headers = (flags & CNT_READER_HEADERS) != 0;
	r->fd = fd;
	r->name = strdup(name);
	r->lim = lim ? *lim : cnt_limits_default();
	r->in_cap = 1u << 20;
	while (r->in_cap < n)
		r->in_cap *= 2;
	r->in = malloc(r->in_cap);
	r->codec = cnt_codec_new();
	if (r->name == NULL || r->in == NULL || r->codec == NULL) {
		cnt_err_nomem(err);
		cnt_reader_free(r);
		return NULL;
	}
	if (n) {
		memcpy(r->in, prefix, n);
		r->in_len = n;
	}
	if (read_header(r, err) != 0) {
		cnt_reader_free(r);
		return NULL;
	}
	r->out_hdr = r->cur;
	if (start_async(r) != 0) {
		cnt_err_set(err, "'%s': cannot start the read-ahead threads", name);
		cnt_reader_free(r);
		return NULL;
	}
	return r;
}

/* The records of a container file of size bytes whose first n bytes
 * are p: its first block's records per byte, over the bytes after the
 * header.  0 when the header and the first block's count and size are not
 * all within p, the block holds no record or does not fit in the file (a
 * file read is distrusted: every length is checked against p and size). */
size_t cnt_container_guess_records(const void *p, size_t n, uint64_t size)
{
	cnt_cur c = {p, (const uint8_t *)p + n};
	int64_t k, count, len;
	const uint8_t *s;
	size_t sn;
	uint64_t header, span;

	if (n < 4 || memcmp(p, "Obj\x01", 4) != 0)
		return 0;
	c.p += 4;
	/* the metadata map: blocks of k entries (-k: then their byte size) */
	for (;;) {
		if (cnt_bin_read_long(&c, &k) != 0)
			return 0;
		if (k == 0)
			break;
		if (k < 0 && (k == INT64_MIN || cnt_bin_read_long(&c, &len) != 0))
			return 0;
		for (k = k < 0 ? -k : k; k > 0; k--)
			if (cnt_bin_read_bytes(&c, &s, &sn) != 0 || cnt_bin_read_bytes(&c, &s, &sn) != 0)
				return 0;
	}
	if (c.end - c.p < 16)
		return 0;
	c.p += 16;
	header = (uint64_t)(c.p - (const uint8_t *)p);
	if (cnt_bin_read_long(&c, &count) != 0 || cnt_bin_read_long(&c, &len) != 0 || count <= 0 || len < 0 ||
	    (uint64_t)len > size)
		return 0;
	span = (uint64_t)(c.p - (const uint8_t *)p) - header + (uint64_t)len + 16;
	if (size <= header || span > size - header) /* the block is not all in the file */
		return 0;
	/* at most one event a byte, whatever the block claims */
	double events = (double)count * (double)(size - header) / (double)span;
	return events >= (double)(size - header) ? (size_t)(size - header) : (size_t)events;
}

void cnt_reader_free(cnt_reader *r)
{
	if (r == NULL)
		return;
	stop_async(r);
	for (int i = 0; i < NJOBS; i++) {
		cnt_buf_release(&r->jobs[i].comp);
		cnt_buf_release(&r->jobs[i].out);
	}
	while (r->hdrs) {
		hdr *h = r->hdrs->next;

		hdr_free(r->hdrs);
		r->hdrs = h;
	}
	cnt_codec_free(r->codec);
	cnt_buf_release(&r->dec);
	free(r->in);
	free(r->name);
	free(r);
}

int cnt_reader_next(cnt_reader *r, cnt_block *b, cnt_err *err)
{
	const uint8_t *payload;
	size_t size;
	job *j;
	int rc;

	if (!r->async) {
		rc = next_raw(r, b, &payload, &size, err);
		if (rc == 0)
			r->out_hdr = r->cur;
		if (rc <= 0)
			return rc;
		r->out_hdr = r->cur;
		if (rc == 2)
			return 2;
		b->checked = 0;
		b->check_err = NULL;
		return finish_block(r, r->cur, r->codec, payload, size, &r->dec, b, err) == 0 ? 1 : -1;
	}
	pthread_mutex_lock(&r->mu);
	if (r->held) {
		if (r->held->rc <= 0) {
			/* The end or an error is final: say it again. */
			rc = r->held->rc;
			if (rc < 0)
				*err = r->held->err;
			pthread_mutex_unlock(&r->mu);
			return rc;
		}
		r->held->state = J_FREE;
		r->held = NULL;
		pthread_cond_signal(&r->cv_free);
	}
	j = &r->jobs[r->cseq % NJOBS];
	while (!(j->state == J_DONE && j->seq == r->cseq)) {
		/* Rather than sleep until a worker has decompressed the next
		 * block, decompress a stored one here: the waits and wake-ups
		 * cost more than the work on a machine of few cores. */
		job *w = take_raw(r);

		if (w == NULL) {
			pthread_cond_wait(&r->cv_done, &r->mu);
			continue;
		}
		pthread_mutex_unlock(&r->mu);
		work(r, w, r->codec);
		pthread_mutex_lock(&r->mu);
		w->state = J_DONE;
	}
	r->cseq++;
	r->held = j;
	pthread_mutex_unlock(&r->mu);
	if (j->rc < 0) {
		*err = j->err;
		return -1;
	}
	r->out_hdr = j->h;
	if (j->rc == 0)
		return 0;
	if (j->rc == 2)
		return 2;
	*b = j->b;
	return 1;
}

unsigned cnt_reader_container(const cnt_reader *r) { return r->out_hdr->container; }
const cnt_avro_schema *cnt_reader_schema(const cnt_reader *r) { return r->out_hdr->schema; }
cnt_codec_id cnt_reader_codec(const cnt_reader *r) { return r->out_hdr->cid; }
const uint8_t *cnt_reader_sync(const cnt_reader *r) { return r->out_hdr->sync; }
const char *cnt_reader_name(const cnt_reader *r) { return r->name; }

size_t cnt_reader_meta(const cnt_reader *r, const cnt_meta_kv **kv)
{
	*kv = r->out_hdr->meta;
	return r->out_hdr->nmeta;
}

/* ---- writer --------------------------------------------------------- */

/* A block on its way to the output with write-behind compression. */
typedef struct wjob {
	enum { W_FREE, W_RAW, W_WORKING, W_DONE } state;
	uint64_t seq;
	int64_t count;
	int rc;
	cnt_err err;
	cnt_buf raw, comp;
} wjob;

/* Blocks queued for the workers: NWJOBS, or up to NWJOBS_MAX for a
 * writer that yields (cnt_writer_yield). */
#define NWJOBS 6
#define NWJOBS_MAX 64
/* A yielding writer's workers' nice, above the tool's */
#define WORKER_NICE 5

static void start_writer_threads(cnt_writer *w);
static void stop_writer_threads(cnt_writer *w);

/* End markers of streams on standard output, held back until the tool
 * has done everything else (cnt_writer_end_deferred()). */
static struct {
	int fd;
	uint8_t *bytes;
	size_t n;
} pending[4];
static size_t npending;

static int fd_is_regular(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

struct cnt_writer {
	int fd;
	char *name;
	char *schema;
	cnt_codec_id cid;
	int level;
	size_t block_bytes;
	cnt_codec *codec;
	cnt_buf block, comp, out, meta;
	size_t nmeta;
	int64_t block_count;
	uint64_t records;
	int header_done, ended;
	uint8_t sync[CNT_SYNC_SIZE];
	/* compression on worker threads; blocks are written in order */
	int async, nworkers, stop;
	pthread_t workers[MAX_WORKERS];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	wjob jobs[NWJOBS_MAX];
	int njobs;             /* of jobs[] in use */
	int yield;             /* the workers' nice above the tool's (cnt_writer_yield) */
	uint64_t qseq, wseq;   /* next block to queue / to write */
	int writing;           /* a thread is writing block wseq */
	int wrc;               /* -1 once a block failed (werr says why) */
	cnt_err werr;
	/* cnt_writer_defer(): the header waits for cnt_writer_finish(); blocks
	 * are spooled to memory, then to an unlinked temporary file. */
	int deferred;
	cnt_writer_hooks hooks;
	size_t rec_start;      /* where the record being encoded begins */
	cnt_buf spool;
	int spool_fd;          /* -1 while the spool fits in memory */
	/* ... or, on a regular file of our own, the header is guessed: made
	 * at the first block from the records before it and written, the
	 * blocks after it; cnt_writer_finish() makes it again and, if it came
	 * out different, moves the blocks (settle_header()). */
	int guessed;
	int guessing;          /* 0: not decided yet (the first block decides); 1 yes; -1 no */
	off_t base;            /* where the container begins in fd */
	cnt_buf guess;         /* the header written */
	size_t meta0, nmeta0;  /* the metadata before the header hook's */
};

#define SPOOL_MEM (8u << 20)

cnt_writer *cnt_writer_new(int fd, const char *name, const char *schema_json,
	cnt_codec_id codec, int level, size_t block_bytes, cnt_err *err)
{
	cnt_writer *w = calloc(1, sizeof(*w));
	XXH3_state_t *st;
	XXH128_hash_t h;
	XXH128_canonical_t canon;
	const char *cname = cnt_codec_name(codec);
	cnt_avro_schema *check;

	/* A file whose header schema does not parse is unreadable: refuse. */
	check = cnt_avro_schema_parse(schema_json, strlen(schema_json), err);
	if (check == NULL || cname == NULL) {
		if (check != NULL)
			cnt_err_set(err, "unknown codec %d", (int)codec);
		cnt_avro_schema_free(check);
		free(w);
		cnt_err_prefix(err, "'%s'", name);
		return NULL;
	}
	cnt_avro_schema_free(check);
	if (w == NULL || (w->name = strdup(name)) == NULL || (w->schema = strdup(schema_json)) == NULL ||
	    (w->codec = cnt_codec_new()) == NULL) {
		cnt_writer_free(w);
		cnt_err_nomem(err);
		return NULL;
	}
	w->fd = fd;
	w->spool_fd = -1;
	w->cid = codec;
	w->level = level;
	w->block_bytes = block_bytes ? block_bytes : CNT_BLOCK_BYTES_DEFAULT;
	/* The sync marker only has to be unlikely to occur inside the data;
	 * deriving it from the schema and codec keeps the output a function
	 * of the records alone. */
	st = XXH3_createState();
	if (st == NULL) {
		cnt_writer_free(w);
		cnt_err_nomem(err);
		return NULL;
	}
	XXH3_128bits_reset(st);
	XXH3_128bits_update(st, "cnt-sync\0", 9);
	XXH3_128bits_update(st, schema_json, strlen(schema_json));
	XXH3_128bits_update(st, cname, strlen(cname));
	h = XXH3_128bits_digest(st);
	XXH3_freeState(st);
	XXH128_canonicalFromHash(&canon, h);
	memcpy(w->sync, canon.digest, CNT_SYNC_SIZE);
	if (cnt_buf_reserve(&w->block, w->block_bytes + 4096) != 0) {
		cnt_writer_free(w);
		cnt_err_nomem(err);
		return NULL;
	}
	w->njobs = NWJOBS;
	start_writer_threads(w);
	return w;
}

int cnt_writer_meta(cnt_writer *w, const char *key, const void *val, size_t n, cnt_err *err)
{
	if (w->header_done)
		return cnt_err_set(err, "internal: metadata after the header was written");
	if (cnt_bin_write_bytes(&w->meta, key, strlen(key)) != 0 || cnt_bin_write_bytes(&w->meta, val, n) != 0)
		return cnt_err_nomem(err);
	w->nmeta++;
	return 0;
}

cnt_buf *cnt_writer_buf(cnt_writer *w)
{
	return &w->block;
}

/* The header's bytes into w->out.  0, or -1 out of memory. */
static int build_header(cnt_writer *w, cnt_err *err)
{
	const char *cname = cnt_codec_name(w->cid);
	int rc = 0;

	w->out.len = 0;
	rc |= cnt_buf_append(&w->out, magic, 4);
	rc |= cnt_bin_write_long(&w->out, (int64_t)(3 + w->nmeta));
	rc |= cnt_bin_write_bytes(&w->out, "avro.codec", 10);
	rc |= cnt_bin_write_bytes(&w->out, cname, strlen(cname));
	rc |= cnt_bin_write_bytes(&w->out, "avro.schema", 11);
	rc |= cnt_bin_write_bytes(&w->out, w->schema, strlen(w->schema));
	rc |= cnt_buf_append(&w->out, w->meta.p, w->meta.len);
	rc |= cnt_bin_write_bytes(&w->out, CNT_END_MARKER_KEY, strlen(CNT_END_MARKER_KEY));
	rc |= cnt_bin_write_bytes(&w->out, "1", 1);
	rc |= cnt_bin_write_long(&w->out, 0);
	rc |= cnt_buf_append(&w->out, w->sync, CNT_SYNC_SIZE);
	return rc != 0 ? cnt_err_nomem(err) : 0;
}

static int write_header(cnt_writer *w, cnt_err *err)
{
	if (build_header(w, err) != 0)
		return -1;
	if (cnt_write_all(w->fd, w->out.p, w->out.len) != 0)
		return cnt_err_write(err, errno, "\'%s\': write error", w->name);
	w->header_done = 1;
	return 0;
}

/* Appends n bytes to the spool: memory up to SPOOL_MEM, then an unlinked
 * temporary file under $TMPDIR (or /tmp). */
static int spool(cnt_writer *w, const void *p, size_t n, cnt_err *err)
{
	if (w->spool_fd < 0 && w->spool.len + n <= SPOOL_MEM)
		return cnt_buf_append(&w->spool, p, n) != 0 ? cnt_err_nomem(err) : 0;
	if (w->spool_fd < 0) {
		const char *dir = getenv("TMPDIR");
		char path[4200];

		snprintf(path, sizeof(path), "%s/cnt-spool.XXXXXX", dir && *dir ? dir : "/tmp");
		if ((w->spool_fd = mkstemp(path)) < 0)
			return cnt_err_write(err, errno, "'%s': cannot create a temporary file in '%s'", w->name,
				dir && *dir ? dir : "/tmp");
		unlink(path);
	}
	if (cnt_write_all(w->spool_fd, p, n) != 0)
		return cnt_err_write(err, errno, "'%s': cannot write a temporary file", w->name);
	return 0;
}

static int emit(cnt_writer *w, const void *p, size_t n, cnt_err *err)
{
	if (w->deferred)
		return spool(w, p, n, err);
	if (cnt_write_all(w->fd, p, n) != 0)
		return cnt_err_write(err, errno, "\'%s\': write error", w->name);
	return 0;
}

static int write_block(cnt_writer *w, int64_t count, const uint8_t *payload, size_t plen, cnt_err *err)
{
	uint8_t head[20];
	size_t hn;

	hn = cnt_bin_put_long(head, count);
	hn += cnt_bin_put_long(head + hn, (int64_t)plen);
	if (emit(w, head, hn, err) != 0 || emit(w, payload, plen, err) != 0 ||
	    emit(w, w->sync, CNT_SYNC_SIZE, err) != 0)
		return -1;
	return 0;
}

/*
 * A deferred header is guessed where the blocks can be moved after it
 * when the guess was wrong, and where no other writer shares the file or
 * its offset: a temporary file the process made for an output of its own
 * (cnt_fd_owned: a named -o file; never standard output, which two
 * streams may share, as `-D -` beside it does), regular, open for reading
 * and writing, not appending.  The blocks are then written once, to their
 * file, not spooled and copied at the end (cnt-ingest's 10 M events: 490
 * MB copied in 0.76 s after everything else).  The fingerprint header
 * only grows with the records, and a stream's few counters are all in
 * its first block as a rule, so the guess is kept as a rule.  Decided
 * once, at the first block, before anything is spooled.
 * CNT_GUESS_HEADER=0 turns it off (the tests compare both ways).
 */
static int may_guess(cnt_writer *w)
{
	const char *env = getenv("CNT_GUESS_HEADER");
	int fl;

	if (w->guessing == 0) {
		w->guessing = -1;
		if ((env != NULL && strcmp(env, "0") == 0) || !cnt_fd_owned(w->fd) || !fd_is_regular(w->fd))
			return 0;
		/* read back when the blocks move; appending would put them at the end */
		if ((fl = fcntl(w->fd, F_GETFL)) < 0 || (fl & O_ACCMODE) != O_RDWR || (fl & O_APPEND))
			return 0;
		if ((w->base = lseek(w->fd, 0, SEEK_CUR)) < 0)
			return 0;
		w->guessing = 1;
	}
	return w->guessing > 0;
}

/* Writes the header the records so far give, before the first block. */
static int guess_header(cnt_writer *w, cnt_err *err)
{
	w->meta0 = w->meta.len;
	w->nmeta0 = w->nmeta;
	if (w->hooks.header != NULL && w->hooks.header(w->hooks.ctx, w, err) != 0)
		return -1;
	if (build_header(w, err) != 0)
		return -1;
	w->guess.len = 0;
	if (cnt_buf_append(&w->guess, w->out.p, w->out.len) != 0)
		return cnt_err_nomem(err);
	if (cnt_write_all(w->fd, w->out.p, w->out.len) != 0)
		return cnt_err_write(err, errno, "\'%s\': write error", w->name);
	w->header_done = 1;
	w->deferred = 0;
	w->guessed = 1;
	return 0;
}

static int pread_all(int fd, void *p, size_t n, off_t at)
{
	while (n > 0) {
		ssize_t k = pread(fd, p, n, at);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;   /* shorter than what was written */
			return -1;
		}
		p = (char *)p + k;
		n -= (size_t)k;
		at += k;
	}
	return 0;
}

static int pwrite_all(int fd, const void *p, size_t n, off_t at)
{
	while (n > 0) {
		ssize_t k = pwrite(fd, p, n, at);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			return -1;
		}
		p = (const char *)p + k;
		n -= (size_t)k;
		at += k;
	}
	return 0;
}

#define MOVE_PIECE ((size_t)1 << 20)

/* The n bytes at from moved to to, in pieces of MOVE_PIECE through buf,
 * in the order that reads each before it is written over.  0, or -1
 * with errno. */
static int move_bytes(int fd, char *buf, off_t from, off_t to, off_t n)
{
	size_t cap = MOVE_PIECE;
	int rc = 0;

	for (off_t done = 0; rc == 0 && done < n;) {
		size_t k = n - done < (off_t)cap ? (size_t)(n - done) : cap;
		/* later bytes first when moving up, earlier when moving down */
		off_t at = to > from ? n - done - (off_t)k : done;

		rc = pread_all(fd, buf, k, from + at) != 0 || pwrite_all(fd, buf, k, to + at) != 0 ? -1 : 0;
		done += (off_t)k;
	}
	return rc;
}

/* cnt_writer_finish() of a guessed header, every block written: the
 * header made again from all the records; where it differs from the
 * guess, the blocks are moved to follow it and it is written over the
 * guess.  The stream is left at the container's end. */
static int settle_header(cnt_writer *w, cnt_err *err)
{
	off_t end, from, to;
	char *buf;
	int rc;

	w->guessed = 0;
	w->meta.len = w->meta0;
	w->nmeta = w->nmeta0;
	w->header_done = 0;
	if (w->hooks.header != NULL && w->hooks.header(w->hooks.ctx, w, err) != 0)
		return -1;
	if (build_header(w, err) != 0)
		return -1;
	w->header_done = 1;
	if (w->out.len == w->guess.len && memcmp(w->out.p, w->guess.p, w->out.len) == 0)
		return 0;
	if ((end = lseek(w->fd, 0, SEEK_CUR)) < 0)
		return cnt_err_write(err, errno, "'%s': cannot find the end of what was written", w->name);
	if ((buf = malloc(MOVE_PIECE)) == NULL)
		return cnt_err_nomem(err);
	from = w->base + (off_t)w->guess.len;
	to = w->base + (off_t)w->out.len;
	/* a header of the same length (other digits): only itself rewritten */
	rc = (to != from && move_bytes(w->fd, buf, from, to, end - from) != 0) ||
		(to < from && ftruncate(w->fd, to + (end - from)) != 0) ||
		pwrite_all(w->fd, w->out.p, w->out.len, w->base) != 0 ||
		lseek(w->fd, to + (end - from), SEEK_SET) < 0 ? -1 : 0;
	if (rc != 0)
		cnt_err_write(err, errno, "\'%s\': write error (moving the blocks after the header)", w->name);
	free(buf);
	return rc;
}

/* The header, then what was spooled. */
static int write_deferred(cnt_writer *w, cnt_err *err)
{
	char buf[65536];
	ssize_t got;

	w->deferred = 0;
	if (w->hooks.header != NULL && w->hooks.header(w->hooks.ctx, w, err) != 0)
		return -1;
	if (write_header(w, err) != 0 || emit(w, w->spool.p, w->spool.len, err) != 0)
		return -1;
	if (w->spool_fd < 0)
		return 0;
	if (lseek(w->spool_fd, 0, SEEK_SET) < 0)
		return cnt_err_write(err, errno, "'%s': cannot read back a temporary file", w->name);
	/* Copied by the kernel where it can (a file to a file); what it
	 * cannot copy (a pipe, an old kernel) is read and written. */
	while ((got = copy_file_range(w->spool_fd, NULL, w->fd, NULL, (size_t)1 << 30, 0)) != 0) {
		if (got > 0)
			continue;
		if (errno == EINTR)
			continue;
		if (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP || errno == EBADF ||
		    errno == EPERM || errno == ETXTBSY)
			break;
		return cnt_err_write(err, errno, "\'%s\': write error", w->name);
	}
	while ((got = read(w->spool_fd, buf, sizeof(buf))) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return cnt_err_write(err, errno, "'%s': cannot read back a temporary file", w->name);
		if (emit(w, buf, (size_t)got, err) != 0)
			return -1;
	}
	return 0;
}

int cnt_writer_defer(cnt_writer *w, const cnt_writer_hooks *h, cnt_err *err)
{
	if (w->header_done || w->records != 0 || w->deferred)
		return cnt_err_set(err, "internal: cnt_writer_defer after the first record");
	w->deferred = 1;
	w->hooks = *h;
	return 0;
}

/* Writes the compressed blocks that are next in order, if no other
 * thread is writing: whichever thread (a worker that has just compressed
 * one, or the tool's waiting for room) finds the next block done writes
 * it, so the writes leave the tool's thread while the order of the bytes
 * stays that of the blocks.  The first failure is kept in wrc/werr and
 * stops all writing.  Called with the lock held; may release it while
 * writing. */
static void write_ready(cnt_writer *w)
{
	while (!w->writing && w->wrc == 0 && w->wseq < w->qseq) {
		wjob *j = &w->jobs[w->wseq % (uint64_t)w->njobs];
		cnt_err err;
		int rc;

		if (!(j->state == W_DONE && j->seq == w->wseq))
			return;
		w->writing = 1;
		pthread_mutex_unlock(&w->mu);
		rc = j->rc == 0 ? write_block(w, j->count, j->comp.p, j->comp.len, &err) : -1;
		if (j->rc != 0)
			err = j->err;
		pthread_mutex_lock(&w->mu);
		w->writing = 0;
		j->state = W_FREE;
		w->wseq++;
		if (rc != 0) {
			w->wrc = -1;
			w->werr = err;
		}
		pthread_cond_broadcast(&w->cv);
	}
}

/* The calling thread's nice raised to the tool's and by (Linux: a
 * thread's own); only advice, so a failure is ignored. */
static void nice_by(int base, int by)
{
	int v = base + by > 19 ? 19 : base + by;

	if (setpriority(PRIO_PROCESS, 0, v) != 0) {
		/* as it was */
	}
}

static void *wworker_main(void *arg)
{
	cnt_writer *w = arg;
	cnt_codec *codec = cnt_codec_new();
	int base, niced = 0;

	errno = 0;
	base = getpriority(PRIO_PROCESS, 0);
	if (errno != 0)
		base = 0;

	for (;;) {
		wjob *j = NULL;

		pthread_mutex_lock(&w->mu);
		for (;;) {
			uint64_t best = UINT64_MAX;

			for (int i = 0; i < w->njobs; i++)
				if (w->jobs[i].state == W_RAW && w->jobs[i].seq < best) {
					best = w->jobs[i].seq;
					j = &w->jobs[i];
				}
			if (j != NULL || w->stop)
				break;
			pthread_cond_wait(&w->cv, &w->mu);
		}
		if (j == NULL) {
			pthread_mutex_unlock(&w->mu);
			break;
		}
		j->state = W_WORKING;
		if (w->yield > niced) {
			niced = w->yield;
			nice_by(base, niced);
		}
		pthread_mutex_unlock(&w->mu);
		if (codec == NULL)
			j->rc = cnt_err_nomem(&j->err);
		else if (cnt_codec_compress(codec, w->cid, w->level, j->raw.p, j->raw.len, &j->comp, &j->err) != 0)
			j->rc = cnt_err_prefix(&j->err, "'%s'", w->name);
		else
			j->rc = 0;
		pthread_mutex_lock(&w->mu);
		j->state = W_DONE;
		write_ready(w);
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
	cnt_codec_free(codec);
	return NULL;
}

/* Waits until the blocks before upto are written (write_ready()).
 * Called with the lock held. */
static int drain(cnt_writer *w, uint64_t upto, cnt_err *err)
{
	for (;;) {
		write_ready(w);
		if (w->wrc != 0) {
			*err = w->werr;
			return -1;
		}
		if (w->wseq >= upto)
			return 0;
		pthread_cond_wait(&w->cv, &w->mu);
	}
}

static int flush_block(cnt_writer *w, cnt_err *err)
{
	if (!w->header_done && w->deferred && w->block_count > 0 && may_guess(w) && guess_header(w, err) != 0)
		return -1;
	if (!w->header_done && !w->deferred && write_header(w, err) != 0)
		return -1;
	if (w->block_count == 0)
		return 0;
	if (w->async) {
		/* Hand the block to a worker (swapping buffers, no copy); make
		 * room first by writing the oldest finished blocks. */
		wjob *j = &w->jobs[w->qseq % (uint64_t)w->njobs];
		cnt_buf t;
		int rc = 0;

		pthread_mutex_lock(&w->mu);
		if (w->qseq - w->wseq >= (uint64_t)w->njobs)
			rc = drain(w, w->qseq - (uint64_t)w->njobs + 1, err);
		if (rc == 0) {
			t = j->raw;
			j->raw = w->block;
			w->block = t;
			w->block.len = 0;
			j->count = w->block_count;
			j->seq = w->qseq++;
			j->state = W_RAW;
			pthread_cond_broadcast(&w->cv);
		}
		pthread_mutex_unlock(&w->mu);
		w->block_count = 0;
		if (rc == 0 && cnt_buf_reserve(&w->block, w->block_bytes + 4096) != 0)
			return cnt_err_nomem(err);
		return rc;
	}
	if (w->cid != CNT_CODEC_NULL) {
		if (cnt_codec_compress(w->codec, w->cid, w->level, w->block.p, w->block.len, &w->comp, err) != 0)
			return cnt_err_prefix(err, "'%s'", w->name);
		if (write_block(w, w->block_count, w->comp.p, w->comp.len, err) != 0)
			return -1;
	} else if (write_block(w, w->block_count, w->block.p, w->block.len, err) != 0) {
		return -1;
	}
	w->block.len = 0;
	w->block_count = 0;
	return 0;
}

int cnt_writer_commit(cnt_writer *w, cnt_err *err)
{
	if (w->hooks.record != NULL &&
	    w->hooks.record(w->hooks.ctx, w->block.p + w->rec_start, w->block.len - w->rec_start, err) != 0) {
		w->block.len = w->rec_start;
		return -1;
	}
	w->block_count++;
	w->records++;
	if (w->block.len >= w->block_bytes && flush_block(w, err) != 0)
		return -1;
	w->rec_start = w->block.len;
	return 0;
}

int cnt_writer_finish(cnt_writer *w, cnt_err *err)
{
	int rc;

	if (w->ended)   /* finished already (count/accum.c, day roll-ups) */
		return 0;
	rc = flush_block(w, err);

	if (rc == 0 && w->async) {
		pthread_mutex_lock(&w->mu);
		rc = drain(w, w->qseq, err);
		pthread_mutex_unlock(&w->mu);
	}
	if (rc == 0 && w->guessed)
		rc = settle_header(w, err);
	if (rc == 0 && w->deferred)
		rc = write_deferred(w, err);
	if (rc != 0 || w->ended)
		return rc;
	/* The end marker: an empty block (its payload the codec's encoding
	 * of nothing, which any Avro reader accepts and skips), written only
	 * when everything before it was. */
	w->comp.len = 0;
	if (w->cid != CNT_CODEC_NULL &&
	    cnt_codec_compress(w->codec, w->cid, w->level, (const uint8_t *)"", 0, &w->comp, err) != 0)
		return cnt_err_prefix(err, "'%s'", w->name);
	w->ended = 1;
	if (w->fd == STDOUT_FILENO && !fd_is_regular(w->fd)) {
		uint8_t *m;
		size_t n = 0;

		if (npending == sizeof(pending) / sizeof(pending[0]))
			return cnt_err_set(err, "internal: more than %zu streams on standard output", npending);
		m = malloc(20 + w->comp.len + CNT_SYNC_SIZE);
		if (m == NULL)
			return cnt_err_nomem(err);
		n = cnt_bin_put_long(m, 0);
		n += cnt_bin_put_long(m + n, (int64_t)w->comp.len);
		if (w->comp.len)
			memcpy(m + n, w->comp.p, w->comp.len);
		n += w->comp.len;
		memcpy(m + n, w->sync, CNT_SYNC_SIZE);
		pending[npending].fd = w->fd;
		pending[npending].bytes = m;
		pending[npending].n = n + CNT_SYNC_SIZE;
		npending++;
		return 0;
	}
	return write_block(w, 0, w->comp.p, w->comp.len, err);
}

int cnt_writer_fd(const cnt_writer *w) { return w->fd; }
cnt_codec_id cnt_writer_codec(const cnt_writer *w) { return w->cid; }
int cnt_writer_level(const cnt_writer *w) { return w->level; }
const char *cnt_writer_name(const cnt_writer *w) { return w->name; }

int cnt_writer_end_deferred(cnt_err *err)
{
	int rc = 0;

	for (size_t i = 0; i < npending; i++) {
		if (rc == 0 && cnt_write_all(pending[i].fd, pending[i].bytes, pending[i].n) != 0)
			rc = cnt_err_write(err, errno, "'standard output': write error");
		free(pending[i].bytes);
	}
	npending = 0;
	return rc;
}

void cnt_writer_yield(cnt_writer *w)
{
	const char *env = getenv("CNT_WRITE_NICE");
	char *end;
	long by = WORKER_NICE;

	/* 0 to 19; anything else is not a nice level: the default */
	if (env != NULL && env[0] >= '0' && env[0] <= '9') {
		by = strtol(env, &end, 10);
		if (*end != 0 || by > 19)
			by = WORKER_NICE;
	}
	if (!w->async || w->qseq > 0)
		return;
	pthread_mutex_lock(&w->mu);
	w->njobs = NWJOBS_MAX;
	w->yield = (int)by;
	pthread_mutex_unlock(&w->mu);
}

/* Compression on worker threads, when there is compressing to do and more
 * than one processor; CNT_WRITE_THREADS=0 turns it off. */
static void start_writer_threads(cnt_writer *w)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	const char *env = getenv("CNT_WRITE_THREADS");

	w->nworkers = cpus >= 2 ? 2 : 0;
	if (env != NULL)
		w->nworkers = atoi(env);
	if (w->nworkers > MAX_WORKERS)
		w->nworkers = MAX_WORKERS;
	if (w->nworkers <= 0 || w->cid == CNT_CODEC_NULL)
		return;
	if (pthread_mutex_init(&w->mu, NULL) != 0)
		return;
	if (pthread_cond_init(&w->cv, NULL) != 0) {
		pthread_mutex_destroy(&w->mu);
		return;
	}
	for (int i = 0; i < w->nworkers; i++)
		if (pthread_create(&w->workers[i], NULL, wworker_main, w) != 0) {
			w->nworkers = i;
			break;
		}
	if (w->nworkers == 0) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		return;
	}
	w->async = 1;
}

static void stop_writer_threads(cnt_writer *w)
{
	if (!w->async)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	for (int i = 0; i < w->nworkers; i++)
		pthread_join(w->workers[i], NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	w->async = 0;
}

uint64_t cnt_writer_records(const cnt_writer *w)
{
	return w->records;
}

void cnt_writer_free(cnt_writer *w)
{
	if (w == NULL)
		return;
	stop_writer_threads(w);
	for (int i = 0; i < NWJOBS_MAX; i++) {
		cnt_buf_release(&w->jobs[i].raw);
		cnt_buf_release(&w->jobs[i].comp);
	}
	cnt_codec_free(w->codec);
	cnt_buf_release(&w->block);
	cnt_buf_release(&w->comp);
	cnt_buf_release(&w->out);
	cnt_buf_release(&w->meta);
	cnt_buf_release(&w->spool);
	cnt_buf_release(&w->guess);
	if (w->hooks.release != NULL)
		w->hooks.release(w->hooks.ctx);
	if (w->spool_fd >= 0)
		close(w->spool_fd);
	free(w->schema);
	free(w->name);
	free(w);
}
