// SPDX-License-Identifier: Apache-2.0
/*
 * linux.maskedPaths and linux.readonlyPaths of a config.json, applied
 * after its mounts (a path may lie on one of them) and in addition to
 * cordon's own /proc list (api.c), which is not repeated. A path that
 * does not exist is skipped, as runc does: configs list paths of every
 * kernel.
 */
#include <string.h>

#include "fs-internal.h"

/* /proc/NAME with NAME in cordon's own list: done already. */
static bool cordon_does(const char *path, const char *const *names)
{
	if (strncmp(path, "/proc/", 6) != 0)
		return false;
	for (size_t i = 0; names[i]; i++)
		if (strcmp(path + 6, names[i]) == 0)
			return true;
	return false;
}

static int apply_paths(int root, char *const *paths, size_t n, const char *field,
		       const char *const *own,
		       int (*apply)(int target, const char *what, struct cordon_error *err),
		       struct cordon_error *err)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_close_ int target = -1;

		if (cordon_does(paths[i], own))
			continue;
		target = fs_open_existing(root, paths[i], err);
		if (target == -2)
			continue;
		if (target < 0 || apply(target, paths[i], err) < 0) {
			err->code = CORDON_E_MOUNT;
			return cordon_error_wrap(err, "linux.%s[%zu]", field, i);
		}
	}
	return 0;
}

int fs_setup_oci_paths(int root, const struct cordon_oci *oci, struct cordon_error *err)
{
	if (!oci)
		return 0;
	if (apply_paths(root, oci->masked_paths, oci->n_masked_paths, "maskedPaths",
			cordon_fs_masked_paths, fs_mask, err) < 0)
		return -1;
	return apply_paths(root, oci->readonly_paths, oci->n_readonly_paths, "readonlyPaths",
			   cordon_fs_readonly_paths, fs_make_readonly, err);
}
