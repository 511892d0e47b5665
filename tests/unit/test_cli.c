/* cli: a signal taken by one thread while another is between creating a
 * temporary output and registering it (cnt_cli_hold_signals) waits for
 * that section to end, and then removes the temporary with the others
 * and ends the process by the signal.  Each case runs in a child
 * process, which the signal ends. */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "unit.h"

static char dir[] = "/tmp/test_cli.XXXXXX";

static void *send_term(void *arg)
{
	(void)arg;
	kill(getpid(), SIGTERM);
	return NULL;
}

/* Files left in dir. */
static int files_left(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	if (d)
		closedir(d);
	return n;
}

/* The child: an output opened inside a section on this thread while
 * another thread takes SIGTERM; writes "in" and "out" to fd as it goes. */
static void child(int fd)
{
	char path[256];
	pthread_t t;
	sigset_t old, held;
	cnt_out o;
	cnt_err err;

	cnt_cli_init("test_cli", "", "");
	snprintf(path, sizeof(path), "%s/out", dir);
	cnt_cli_hold_signals(&old);
	if (write(fd, "in\n", 3) != 3)
		_exit(90);
	/* The other thread does not hold the signals: the signal is its. */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pthread_create(&t, NULL, send_term, NULL) != 0)
		_exit(91);
	pthread_join(t, NULL);
	sigemptyset(&held);
	sigaddset(&held, SIGINT);
	sigaddset(&held, SIGTERM);
	sigaddset(&held, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &held, NULL);
	/* the handler has run and returned: still here, in the section */
	if (cnt_out_open(&o, path, &err) != 0)
		_exit(92);
	cnt_cli_register(&o);
	if (write(fd, "out\n", 4) != 4)
		_exit(93);
	cnt_cli_release_signals(&old);
	_exit(94);   /* not reached: the signal ends the process */
}

static void test_signal_waits_for_section(void)
{
	int p[2];
	pid_t pid;
	int status = 0;
	char buf[64] = "";
	ssize_t n, got = 0;

	CHECK(pipe(p) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		child(p[1]);
	}
	close(p[1]);
	while ((n = read(p[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	close(p[0]);
	CHECK(waitpid(pid, &status, 0) == pid);
	/* The section ran to its end after the signal came ... */
	CHECK_EQ_STR(buf, "in\nout\n");
	/* ... then the signal ended the process ... */
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	/* ... and the temporary the section made is gone. */
	CHECK_EQ_INT(files_left(), 0);
}

int main(void)
{
	if (mkdtemp(dir) == NULL)
		return 1;
	RUN(test_signal_waits_for_section);
	rmdir(dir);
	return unit_report("test_cli");
}
