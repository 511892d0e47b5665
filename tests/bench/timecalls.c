/*
 * timecalls - runs a command N times, each as its own process (so process
 * start is included), with @M in its arguments replaced by a member name
 * drawn from "m%08d" over 1..MEMBERS, and prints the median, p95 and max
 * wall time per call in milliseconds.
 *
 *   timecalls 1000 10000000 cnt-rank -w views -b board rank @M
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n, members;
	double *ms;
	unsigned long long s = 12345;
	char name[32];

	if (argc < 4)
		return fprintf(stderr, "usage: timecalls N MEMBERS command args... (@M = a member)\n"), 2;
	n = atoi(argv[1]);
	members = atoi(argv[2]);
	ms = calloc((size_t)n, sizeof(double));
	if (ms == NULL || n <= 0 || members <= 0)
		return 2;
	for (int i = 0; i < n; i++) {
		char **args = calloc((size_t)argc, sizeof(char *));
		struct timespec a, b;
		pid_t pid;
		int st;

		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		snprintf(name, sizeof(name), "m%08d", (int)((s >> 33) % (unsigned)members) + 1);
		for (int k = 3; k < argc; k++)
			args[k - 3] = strcmp(argv[k], "@M") == 0 ? name : argv[k];
		clock_gettime(CLOCK_MONOTONIC, &a);
		pid = fork();
		if (pid == 0) {
			if (freopen("/dev/null", "w", stdout) == NULL)
				_exit(127);
			execvp(args[0], args);
			_exit(127);
		}
		waitpid(pid, &st, 0);
		clock_gettime(CLOCK_MONOTONIC, &b);
		free(args);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return fprintf(stderr, "timecalls: call %d failed (status %d)\n", i, st), 1;
		ms[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	}
	qsort(ms, (size_t)n, sizeof(double), cmp);
	printf("calls %d median_ms %.3f p95_ms %.3f max_ms %.3f\n", n, ms[n / 2], ms[n * 95 / 100], ms[n - 1]);
	free(ms);
	return 0;
}
