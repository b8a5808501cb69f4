// SPDX-License-Identifier: Apache-2.0
/* Installing seccomp programs, and what --print-profile reports of them. */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

#include "cordon/security.h"
#include "security-internal.h"

void cordon_seccomp_digest(const struct cordon_bpf *filters, size_t n, char out[65])
{
	struct cordon_sha256 ctx;
	uint8_t digest[32];

	cordon_sha256_init(&ctx);
	for (size_t i = 0; i < n; i++)
		cordon_sha256_update(&ctx, filters[i].insns, filters[i].len * sizeof(struct sock_filter));
	cordon_sha256_final(&ctx, digest);
	cordon_hex(digest, sizeof(digest), out);
}

int cordon_seccomp_install(const struct cordon_bpf *filters, size_t n, struct cordon_error *err)
{
	for (size_t i = 0; i < n; i++) {
		struct sock_fprog prog = {
			.len = (unsigned short)filters[i].len,
			.filter = (struct sock_filter *)filters[i].insns,
		};

		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
			return cordon_error_set(err, CORDON_E_SECURITY, errno,
						"installing seccomp filter %zu", i);
	}
	return 0;
}

int cordon_security_seccomp(const struct cordon_security *sec, bool uid_is_root,
			    struct cordon_error *err)
{
	/*
	 * The guard goes first: a profile may deny seccomp(2) itself, and
	 * stacked filters give the strictest answer whatever their order.
	 */
	if (sec->mode_guard && cordon_seccomp_install(cordon_seccomp_mode_guard(), 1, err) < 0)
		return cordon_error_wrap(err, "the mode guard");
	if (sec->seccomp != CORDON_SECCOMP_UNCONFINED &&
	    cordon_seccomp_install(sec->filters, sec->n_filters, err) < 0)
		return -1;
	/*
	 * Without no_new_privs the filter needed CAP_SYS_ADMIN: dropped now,
	 * through capset under the filter (as runc does; a profile that
	 * denies capset fails the process here rather than leave it).
	 */
	if (security_admin_for_seccomp(sec, uid_is_root) &&
	    security_capset(sec, uid_is_root, false, err) < 0)
		return cordon_error_wrap(err, "after the seccomp filter");
	return 0;
}
