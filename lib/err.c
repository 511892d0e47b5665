#include "err.h"

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
	return -1;
}

int cnt_err_prefix(cnt_err *err, const char *fmt, ...)
{
	char pre[512], old[sizeof(err->msg)];
	va_list ap;

	if (err == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", pre, old);
	return -1;
}
