/* cli: a signal taken by one thread while another is between creating a
 * temporary output and registering it (cnt_cli_hold_signals) waits for
 * that section to end, and then removes the temporary with the others
 * and ends the process by the signal; so does a fatal error on another
 * thread; sections nest.  Each case runs in a child process, which the
 * signal or the error ends. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
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

/* Runs fn(fd) in a child; returns what it wrote to fd and its status. */
static int in_child(void (*fn)(int), char *buf, size_t n)
{
	int p[2], status = 0;
	ssize_t k, got = 0;
	pid_t pid;

	if (pipe(p) != 0 || (pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		close(p[0]);
		dup2(open("/dev/null", O_WRONLY | O_CLOEXEC), STDERR_FILENO);   /* the error's message */
		alarm(20);   /* a hang fails the case (SIGALRM) */
		fn(p[1]);
		_exit(95);
	}
	close(p[1]);
	while ((k = read(p[0], buf + got, n - 1 - (size_t)got)) > 0)
		got += k;
	buf[got] = 0;
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* A signal held back while the thread is in a section, then a section
 * within it: the inner one does not wait for ever (nor end the process);
 * the outer one's end does. */
static void nested(int fd)
{
	sigset_t o1, o2;
	pthread_t t;

	cnt_cli_init("test_cli", "", "");
	cnt_cli_hold_signals(&o1);
	pthread_sigmask(SIG_SETMASK, &o1, NULL);   /* the new thread takes it */
	if (pthread_create(&t, NULL, send_term, NULL) != 0)
		_exit(91);
	pthread_join(t, NULL);
	cnt_cli_hold_signals(&o2);
	if (write(fd, "nested\n", 7) != 7)
		_exit(90);
	cnt_cli_release_signals(&o2);
	if (write(fd, "outer\n", 6) != 6)
		_exit(90);
	cnt_cli_release_signals(&o1);
}

static void test_sections_nest(void)
{
	char buf[64];
	int status = in_child(nested, buf, sizeof(buf));

	CHECK_EQ_STR(buf, "nested\nouter\n");
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
}

/* A fatal error on one thread while another is between creating an
 * output and registering it: the error waits for that section, then
 * removes the output and ends the process with its status. */
static int ready[2];

static void *make_output(void *arg)
{
	char path[256];
	sigset_t old;
	static cnt_out o;
	cnt_err err;
	struct timespec ts = {0, 200000000};

	(void)arg;
	snprintf(path, sizeof(path), "%s/out", dir);
	cnt_cli_hold_signals(&old);
	if (cnt_out_open(&o, path, &err) != 0)
		_exit(92);
	if (write(ready[1], "r", 1) != 1)
		_exit(93);
	nanosleep(&ts, NULL);   /* the error comes now */
	cnt_cli_register(&o);
	cnt_cli_release_signals(&old);
	for (;;)
		pause();
	return NULL;
}

static void error_meanwhile(int fd)
{
	pthread_t t;
	char c;

	(void)fd;
	cnt_cli_init("test_cli", "", "");
	if (pipe(ready) != 0 || pthread_create(&t, NULL, make_output, NULL) != 0)
		_exit(91);
	if (read(ready[0], &c, 1) != 1)
		_exit(94);
	cnt_die("an error while another thread makes an output");
}

static void test_error_waits_for_section(void)
{
	char buf[64];
	int status = in_child(error_meanwhile, buf, sizeof(buf));

	CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) < 90);
	CHECK_EQ_INT(files_left(), 0);
}

static void test_signal_waits_for_section(void)
{
	char buf[64];
	int status = in_child(child, buf, sizeof(buf));

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
	RUN(test_sections_nest);
	RUN(test_error_waits_for_section);
	rmdir(dir);
	return unit_report("test_cli");
}
