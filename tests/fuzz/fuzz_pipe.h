/*
 * fuzz_pipe.h - what the targets reading a stream share: the text handed
 * in through a one-page pipe, a piece at a time, each piece written only
 * once the pipe is empty, so that every read of the other end ends where
 * a piece ends (a pipe is writable only while it holds nothing when it is
 * one page long, and a piece of up to a page fills its one buffer). The
 * pieces are 1 to 8, 64, 512 or 4096 bytes long, drawn from a seed, and
 * never fewer than a text's length over FUZZ_PIECES_MAX, so a long text
 * comes in fewer pieces and the run stays fast.
 */
#ifndef CNT_FUZZ_PIPE_H
#define CNT_FUZZ_PIPE_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_PIECES_MAX 512
#define FUZZ_PIPE_PAGE 4096

/* splitmix64: the targets' choices, from a seed in the fuzzer's bytes */
static inline uint64_t fuzz_rnd(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

typedef struct fuzz_pipe {
	pthread_t thread;
	int fd;            /* the writing end, the thread's to close */
	const char *p;
	size_t n;
	uint64_t seed;
	int running;
} fuzz_pipe;

static inline size_t fuzz_piece_size(uint64_t *s)
{
	uint64_t r = fuzz_rnd(s);

	switch (r & 3) {
	case 0: return 1 + (size_t)(r >> 8) % 8;
	case 1: return 1 + (size_t)(r >> 8) % 64;
	case 2: return 1 + (size_t)(r >> 8) % 512;
	default: return 1 + (size_t)(r >> 8) % FUZZ_PIPE_PAGE;
	}
}

static inline void *fuzz_pipe_write(void *arg)
{
	fuzz_pipe *w = arg;
	size_t at = 0;

	while (at < w->n) {
		size_t k = fuzz_piece_size(&w->seed), done = 0;
		struct pollfd pf = {w->fd, POLLOUT, 0};

		if (k < w->n / FUZZ_PIECES_MAX)
			k = w->n / FUZZ_PIECES_MAX;
		if (k > FUZZ_PIPE_PAGE)
			k = FUZZ_PIPE_PAGE;
		if (k > w->n - at)
			k = w->n - at;
		if (poll(&pf, 1, -1) < 0 && errno != EINTR)
			break;
		if (pf.revents & (POLLERR | POLLHUP))
			break;
		if (!(pf.revents & POLLOUT))
			continue;
		while (done < k) {
			ssize_t got = write(w->fd, w->p + at + done, k - done);

			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				goto out;
			done += (size_t)got;
		}
		at += k;
	}
out:
	close(w->fd);
	return NULL;
}

/* Starts writing text[0..n) into a new pipe; returns its reading end, or
 * -1 (nothing to join then). Close the reading end before
 * fuzz_pipe_join: a writer not done yet then fails on it and ends. */
static inline int fuzz_pipe_start(fuzz_pipe *w, const char *text, size_t n, uint64_t seed)
{
	int p[2];

	memset(w, 0, sizeof(*w));
	signal(SIGPIPE, SIG_IGN);
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	if (fcntl(p[1], F_SETPIPE_SZ, FUZZ_PIPE_PAGE) < 0)
		goto fail;
	w->fd = p[1];
	w->p = text;
	w->n = n;
	w->seed = seed ^ UINT64_C(0x5bd1e995);
	if (pthread_create(&w->thread, NULL, fuzz_pipe_write, w) != 0)
		goto fail;
	w->running = 1;
	return p[0];
fail:
	close(p[0]);
	close(p[1]);
	return -1;
}

static inline void fuzz_pipe_join(fuzz_pipe *w)
{
	if (w->running)
		pthread_join(w->thread, NULL);
	w->running = 0;
}

#endif
