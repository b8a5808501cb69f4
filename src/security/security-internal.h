/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the security module's sources, not part of its interface. */
#ifndef CORDON_SECURITY_INTERNAL_H
#define CORDON_SECURITY_INTERNAL_H

#include <stdbool.h>

#include "cordon/security.h"

/*
 * Whether the process keeps CAP_SYS_ADMIN effective from the id change
 * until its seccomp filter is in: no_new_privs is left off (a config's
 * noNewPrivileges false), a filter is to come, and the final sets lack it.
 */
bool security_admin_for_seccomp(const struct cordon_security *sec, bool uid_is_root);
/* capset(2) of the final sets, with CAP_SYS_ADMIN added when admin is true. */
int security_capset(const struct cordon_security *sec, bool uid_is_root, bool admin,
		    struct cordon_error *err);

#endif
