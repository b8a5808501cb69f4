// SPDX-License-Identifier: Apache-2.0
#include <string.h>

#include "cordon/core.h"

static const char *const code_names[CORDON_CODE_COUNT] = {
	[CORDON_OK] = "CORDON_OK",
	[CORDON_E_USAGE] = "CORDON_E_USAGE",
	[CORDON_E_ROOTFS] = "CORDON_E_ROOTFS",
	[CORDON_E_PATH] = "CORDON_E_PATH",
	[CORDON_E_USERNS] = "CORDON_E_USERNS",
	[CORDON_E_NAMESPACE] = "CORDON_E_NAMESPACE",
	[CORDON_E_MOUNT] = "CORDON_E_MOUNT",
	[CORDON_E_STATE] = "CORDON_E_STATE",
	[CORDON_E_RESULT] = "CORDON_E_RESULT",
	[CORDON_E_EXEC] = "CORDON_E_EXEC",
	[CORDON_E_INTERNAL] = "CORDON_E_INTERNAL",
	[CORDON_E_SECURITY] = "CORDON_E_SECURITY",
	[CORDON_E_CGROUP] = "CORDON_E_CGROUP",
	[CORDON_E_NET_POLICY] = "CORDON_E_NET_POLICY",
	[CORDON_E_SPEC] = "CORDON_E_SPEC",
};

const char *cordon_code_name(enum cordon_code code)
{
	if ((unsigned)code >= CORDON_CODE_COUNT || !code_names[code])
		return "CORDON_E_INTERNAL";
	return code_names[code];
}

int cordon_error_set(struct cordon_error *err, enum cordon_code code, int errnum,
		     const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	err->errnum = errnum;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int cordon_error_wrap(struct cordon_error *err, const char *fmt, ...)
{
	char prefix[256], old[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* Truncation keeps the context and the start of the cause: acceptable. */
	if (snprintf(err->msg, sizeof(err->msg), "%s: %.*s", prefix, (int)(sizeof(old) - 1), old) < 0)
		err->msg[0] = '\0';
	return -1;
}

void cordon_error_message(const struct cordon_error *err, char *buf, size_t len)
{
	if (err->errnum)
		snprintf(buf, len, "%s: %s", err->msg, strerror(err->errnum));
	else
		snprintf(buf, len, "%s", err->msg);
}

void cordon_error_print(const struct cordon_error *err)
{
	char msg[1024];

	cordon_error_message(err, msg, sizeof(msg));
	/* One line, always: a multi-line reason would break log parsers. */
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	fprintf(stderr, "cordon: %s: %s\n", cordon_code_name(err->code), msg);
}

void cordon_warn(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "cordon: warning: %s\n", msg);
}
