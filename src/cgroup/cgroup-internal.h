/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the files of src/cgroup/; not part of the public API. */
#ifndef CORDON_CGROUP_INTERNAL_H
#define CORDON_CGROUP_INTERNAL_H

#include <linux/bpf.h>

#include "cordon/cgroup.h"

int cgroup_devices_v1(const char *dir, const struct cordon_device_rule *rules, size_t n,
		      struct cordon_error *err);
int cgroup_devices_v2(const char *dir, const struct cordon_device_rule *rules, size_t n,
		      int *prog_fd, struct cordon_error *err);
/* Assemble the v2 device program; returns its length, 0 if cap is too small. */
size_t cgroup_devices_bpf(const struct cordon_device_rule *rules, size_t n, struct bpf_insn *out,
			  size_t cap);

int cgroup_write(const char *dir, const char *file, const char *value, struct cordon_error *err);
int cgroup_write_u64(const char *dir, const char *file, uint64_t v, struct cordon_error *err);
/*
 * The sandbox's directory in hierarchy hi at place (src/cgroup/place.c):
 * made with its missing parents, v2 controllers v2_ctrls enabled in each
 * parent's cgroup.subtree_control on the way. With ours, the sandbox
 * made it already: only the controllers are enabled. *taken is set when
 * it exists and may not be used (holds processes or child cgroups, or
 * is a cordon-ID one): the caller must fail then, whatever its limits.
 */
int cgroup_make_dir(const struct cordon_cgroup_hier *hi, const struct cordon_cgroup_place *place,
		    unsigned v2_ctrls, bool ours, char **dir, bool *taken, struct cordon_error *err);
/* The directory of hierarchy h, made with cgroup_make_dir where the sandbox has none yet. */
int cgroup_dir_for(const struct cordon_cgroup_layout *layout, size_t h,
		   const struct cordon_cgroup_place *place, unsigned v2_ctrls,
		   struct cordon_cgroup *cg, const char **dir, struct cordon_error *err);

#endif
