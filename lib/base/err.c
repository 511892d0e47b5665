#include "base/err.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int cnt_err_set(cnt_err *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	/* Call sites that spell out "... out of memory ..." in their own
	 * format (codecs, the container reader, timezones, definitions) mean
	 * a failed allocation: exit 4, not 2.  The format is ours, never a
	 * file's bytes, so no input can pass for an allocation failure. */
	err->kind = strstr(fmt, "out of memory") ? CNT_ERR_NOMEM : CNT_ERR_DATA;
	return -1;
}

int cnt_err_nomem(cnt_err *err)
{
	if (err == NULL)
		return -1;
	snprintf(err->msg, sizeof(err->msg), "out of memory");
	err->kind = CNT_ERR_NOMEM;
	return -1;
}

int cnt_err_oom(cnt_err *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	memcpy(err->msg, "out of memory ", 14);
	va_start(ap, fmt);
	vsnprintf(err->msg + 14, sizeof(err->msg) - 14, fmt, ap);
	va_end(ap);
	err->kind = CNT_ERR_NOMEM;
	return -1;
}

int cnt_err_write(cnt_err *err, int errnum, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (err == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	n = strlen(err->msg);
	snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", strerror(errnum));
	err->kind = errnum == EPIPE ? CNT_ERR_PIPE : CNT_ERR_IO;
	return -1;
}

int cnt_err_prefix(cnt_err *err, const char *fmt, ...)
{
	char pre[256], old[sizeof(err->msg)];
	size_t n;
	va_list ap;

	if (err == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	n = strlen(pre);
	if (n + 2 >= sizeof(err->msg))
		return -1;
	memcpy(err->msg, pre, n);
	memcpy(err->msg + n, ": ", 2);
	memcpy(err->msg + n + 2, old, sizeof(err->msg) - n - 2);
	err->msg[sizeof(err->msg) - 1] = 0;
	return -1;
}
