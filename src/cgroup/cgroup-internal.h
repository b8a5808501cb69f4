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
/* Create (or find, when the sandbox already has it) the directory in hierarchy h. */
int cgroup_dir_for(const struct cordon_cgroup_layout *layout, size_t h, const char *id,
		   const char *parent, struct cordon_cgroup *cg, const char **dir,
		   struct cordon_error *err);

#endif
