/*
 * dedup-keys - how much memory and time cnt-dedup's state takes for N
 * remembered keys (default 50 million): inserts N distinct keys into the
 * table, saves the state file, loads it back, and prints bytes per key
 * (peak resident set / N, and the file) and the times.  Linked with the
 * library; run by tests/bench/run.sh.
 *
 *   dedup-keys 50000000 build-bench/state
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "count/dedup.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long long n = argc > 1 ? atoll(argv[1]) : 50000000;
	const char *path = argc > 2 ? argv[2] : "state";
	cnt_dedup d, back;
	cnt_err err;
	struct rusage ru;
	struct stat st;
	size_t kept;
	double t0, t1, t2, t3;
	int fd;

	if (cnt_dedup_init(&d, (size_t)n) != 0)
		return fprintf(stderr, "dedup-keys: out of memory\n"), 2;
	t0 = now_s();
	for (long long i = 0; i < n; i++) {
		char key[32];
		const void *part = key;
		size_t len = (size_t)snprintf(key, sizeof(key), "k-%016llx", (unsigned long long)i * 0x9e3779b97f4a7c15ULL);

		/* one hour of horizon, keys seen over the last minutes */
		if (cnt_dedup_check(&d, cnt_dedup_key(1, &part, &len), 1796000000 + (uint64_t)(i % 600), 3600) != 0)
			return fprintf(stderr, "dedup-keys: key %lld taken for a duplicate or out of memory\n", i), 1;
	}
	t1 = now_s();
	getrusage(RUSAGE_SELF, &ru);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || cnt_dedup_save(&d, fd, path, &kept, &err) != 0 || close(fd) != 0)
		return fprintf(stderr, "dedup-keys: %s\n", fd < 0 ? "cannot create the state file" : err.msg), 2;
	t2 = now_s();
	cnt_dedup_release(&d);
	if (cnt_dedup_load(&back, path, 0, 0, &err) != 0)
		return fprintf(stderr, "dedup-keys: %s\n", err.msg), 2;
	t3 = now_s();
	stat(path, &st);
	printf("keys %lld table_slots %zu table_bytes_per_key %.1f peak_rss_bytes_per_key %.1f "
		"state_file_bytes_per_key %.1f insert_s %.2f save_s %.2f load_s %.2f\n",
		n, back.mask + 1, (double)((back.mask + 1) * sizeof(cnt_dslot)) / (double)n,
		(double)ru.ru_maxrss * 1024.0 / (double)n, (double)st.st_size / (double)n, t1 - t0, t2 - t1, t3 - t2);
	if (back.count != (size_t)n || kept != (size_t)n)
		return fprintf(stderr, "dedup-keys: %zu keys saved, %zu loaded, of %lld\n", kept, back.count, n), 1;
	cnt_dedup_release(&back);
	unlink(path);
	return 0;
}
