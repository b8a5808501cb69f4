// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of src/cgroup: the layout parser on fixture texts of
 * /proc/self/mountinfo and /proc/self/cgroup, the pure conversions
 * (--cpus, --memory-swap, cpu.shares, device rules), and -- as root, on
 * the real hierarchies of this host -- creating, attaching, limiting and
 * removing a sandbox's cgroups, and device rules enforced both through the
 * v1 devices controller and through the cgroup2 BPF device program.
 *
 * A root-only case that cannot run is a TAP SKIP (unit.h): a layout this
 * host does not have (UNIT_SKIP_LAYOUT), or a missing precondition, root
 * or a controller (UNIT_SKIP_OR_FAIL: a failure under CI).
 */
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include "cordon/cgroup.h"
#include "cordon/core.h"
#include "unit.h"

/* --- helpers --------------------------------------------------------- */

static const struct cordon_cgroup_hier *hier_at(const struct cordon_cgroup_layout *l,
						const char *mount)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->hier[i].mount, mount) == 0)
			return &l->hier[i];
	return NULL;
}

/* The hierarchy at MOUNT must exist with these properties. */
static void expect_hier(const struct cordon_cgroup_layout *l, const char *mount, bool v2,
			const char *path, unsigned ctrls, const char *names)
{
	const struct cordon_cgroup_hier *h = hier_at(l, mount);

	ck_assert_msg(h != NULL, "no hierarchy at %s (of %zu)", mount, l->n);
	ck_assert_msg(h->v2 == v2, "%s: v2 is %d, expected %d", mount, h->v2, v2);
	ck_assert_msg(strcmp(h->path, path) == 0, "%s: path '%s', expected '%s'", mount, h->path,
		      path);
	ck_assert_msg(h->ctrls == ctrls, "%s: ctrls 0x%x, expected 0x%x", mount, h->ctrls, ctrls);
	if (names)
		ck_assert_msg(strcmp(h->ctrl_names, names) == 0,
			      "%s: ctrl_names '%s', expected '%s'", mount, h->ctrl_names, names);
}

static void parse_ok(const char *mountinfo, const char *self, struct cordon_cgroup_layout *l)
{
	struct cordon_error err = { 0 };

	memset(l, 0, sizeof(*l));
	ck_assert_int_eq(cordon_cgroup_layout_parse(mountinfo, self, l, &err), 0);
	ck_assert_uint_le(l->n, CORDON_CGROUP_MAX_HIER);
}

#define NEED_ROOT()                                                                     \
	do {                                                                            \
		if (geteuid() != 0)                                                     \
			UNIT_SKIP_OR_FAIL("needs root (creates cgroups on this host)"); \
	} while (0)

/* --- fixtures -------------------------------------------------------- */

/* Mount table lines that every fixture has and the parser must pass over. */
#define MI_BASE                                                                         \
	"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"                        \
	"23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n" \
	"24 22 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw\n"

#define MI_TMPFS \
	"30 24 0:27 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:3 - tmpfs tmpfs ro,mode=755\n"

/* v1 with separate cpu and cpuacct hierarchies, plus a named systemd one. */
static const char v1_split_mi[] = MI_BASE MI_TMPFS
	"31 30 0:28 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:4 - cgroup cgroup rw,xattr,name=systemd\n"
	"32 30 0:29 / /sys/fs/cgroup/cpu rw,nosuid,nodev,noexec,relatime shared:5 - cgroup cgroup rw,cpu\n"
	"33 30 0:30 / /sys/fs/cgroup/cpuacct rw,nosuid,nodev,noexec,relatime shared:6 - cgroup cgroup rw,cpuacct\n"
	"34 30 0:31 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:7 - cgroup cgroup rw,memory\n"
	"35 30 0:32 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:8 - cgroup cgroup rw,pids\n"
	"36 30 0:33 / /sys/fs/cgroup/devices rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,devices\n"
	"37 30 0:34 / /sys/fs/cgroup/cpuset rw,nosuid,nodev,noexec,relatime shared:10 - cgroup cgroup rw,cpuset\n";
static const char v1_split_cg[] = "7:cpuset:/\n"
				  "6:devices:/user.slice\n"
				  "5:pids:/user.slice/user-1000.slice/session-2.scope\n"
				  "4:memory:/user.slice/user-1000.slice/session-2.scope\n"
				  "3:cpuacct:/user.slice\n"
				  "2:cpu:/user.slice\n"
				  "1:name=systemd:/user.slice/user-1000.slice/session-2.scope\n";

/* v1 as Debian/systemd mounts it: cpu and cpuacct co-mounted. */
static const char v1_combined_mi[] = MI_BASE MI_TMPFS
	"31 30 0:28 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:4 - cgroup cgroup rw,xattr,name=systemd\n"
	"32 30 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:5 - cgroup cgroup rw,cpu,cpuacct\n"
	"33 30 0:30 / /sys/fs/cgroup/net_cls,net_prio rw,nosuid,nodev,noexec,relatime shared:6 - cgroup cgroup rw,net_cls,net_prio\n"
	"34 30 0:31 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:7 - cgroup cgroup rw,memory\n"
	"35 30 0:32 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:8 - cgroup cgroup rw,pids\n";
static const char v1_combined_cg[] = "5:pids:/user.slice\n"
				     "4:memory:/user.slice\n"
				     "3:net_cls,net_prio:/\n"
				     "2:cpu,cpuacct:/user.slice\n"
				     "1:name=systemd:/user.slice/user-1000.slice/session-2.scope\n";

static const char v2_mi[] = MI_BASE
	"30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";
static const char v2_cg[] =
	"0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-u7.scope\n";

/* This machine's kind: v1 controllers, cgroup2 (hugetlb only) at unified. */
static const char hybrid_mi[] =
	MI_BASE "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
		"31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
		"32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
		"33 30 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
		"34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
		"35 30 0:32 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
		"36 30 0:33 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
		"37 30 0:34 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"
		"38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
		"39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
		"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
#define NESTED "/process_api/e528950cbc7239d323f8a609410782ad"
static const char hybrid_cg[] = "9:name=systemd:/\n"
				"8:pids:/\n"
				"7:blkio:/\n"
				"6:freezer:/\n"
				"5:devices:/\n"
				"4:memory:" NESTED "\n"
				"3:cpuset:/\n"
				"2:cpuacct:/\n"
				"1:cpu:/\n"
				"0::/\n";

/* --- layout parse ------------------------------------------------------ */

START_TEST(parse_v1_separate_cpu_cpuacct)
{
	struct cordon_cgroup_layout l;

	parse_ok(v1_split_mi, v1_split_cg, &l);
	ck_assert_uint_eq(l.n, 6);
	expect_hier(&l, "/sys/fs/cgroup/cpu", false, "/user.slice", CORDON_CTRL_CPU, "cpu");
	expect_hier(&l, "/sys/fs/cgroup/cpuacct", false, "/user.slice", CORDON_CTRL_CPUACCT,
		    "cpuacct");
	expect_hier(&l, "/sys/fs/cgroup/memory", false,
		    "/user.slice/user-1000.slice/session-2.scope", CORDON_CTRL_MEMORY, "memory");
	expect_hier(&l, "/sys/fs/cgroup/pids", false, "/user.slice/user-1000.slice/session-2.scope",
		    CORDON_CTRL_PIDS, "pids");
	expect_hier(&l, "/sys/fs/cgroup/devices", false, "/user.slice", CORDON_CTRL_DEVICES,
		    "devices");
	expect_hier(&l, "/sys/fs/cgroup/cpuset", false, "/", CORDON_CTRL_CPUSET, "cpuset");
	/* "cpu" is not matched to the cpuacct mount, nor the other way round */
	ck_assert_ptr_null(hier_at(&l, "/sys/fs/cgroup/systemd"));
	cordon_cgroup_layout_free(&l);
	ck_assert_uint_eq(l.n, 0);
}
END_TEST

START_TEST(parse_v1_combined_cpu_cpuacct)
{
	struct cordon_cgroup_layout l;

	parse_ok(v1_combined_mi, v1_combined_cg, &l);
	ck_assert_uint_eq(l.n, 4);
	expect_hier(&l, "/sys/fs/cgroup/cpu,cpuacct", false, "/user.slice",
		    CORDON_CTRL_CPU | CORDON_CTRL_CPUACCT, "cpu,cpuacct");
	expect_hier(&l, "/sys/fs/cgroup/memory", false, "/user.slice", CORDON_CTRL_MEMORY,
		    "memory");
	expect_hier(&l, "/sys/fs/cgroup/pids", false, "/user.slice", CORDON_CTRL_PIDS, "pids");
	/* a hierarchy of controllers cordon does not use carries no bits */
	expect_hier(&l, "/sys/fs/cgroup/net_cls,net_prio", false, "/", 0, "net_cls,net_prio");
	for (size_t i = 0; i < l.n; i++)
		ck_assert(!l.hier[i].v2);
	cordon_cgroup_layout_free(&l);
}
END_TEST

START_TEST(parse_v2_pure)
{
	struct cordon_cgroup_layout l;

	parse_ok(v2_mi, v2_cg, &l);
	ck_assert_uint_eq(l.n, 1);
	/* controllers of v2 come from cgroup.controllers (detect), not the parse */
	expect_hier(&l, "/sys/fs/cgroup", true,
		    "/user.slice/user-1000.slice/user@1000.service/app.slice/run-u7.scope", 0, "");
	cordon_cgroup_layout_free(&l);
}
END_TEST

START_TEST(parse_hybrid_with_nested_memory)
{
	struct cordon_cgroup_layout l;
	size_t v2 = 0;

	parse_ok(hybrid_mi, hybrid_cg, &l);
	/* 8 v1 hierarchies with controllers (systemd is named) + unified */
	ck_assert_uint_eq(l.n, 9);
	expect_hier(&l, "/sys/fs/cgroup/memory", false, NESTED, CORDON_CTRL_MEMORY, "memory");
	expect_hier(&l, "/sys/fs/cgroup/pids", false, "/", CORDON_CTRL_PIDS, "pids");
	expect_hier(&l, "/sys/fs/cgroup/cpu", false, "/", CORDON_CTRL_CPU, "cpu");
	expect_hier(&l, "/sys/fs/cgroup/cpuacct", false, "/", CORDON_CTRL_CPUACCT, "cpuacct");
	expect_hier(&l, "/sys/fs/cgroup/devices", false, "/", CORDON_CTRL_DEVICES, "devices");
	expect_hier(&l, "/sys/fs/cgroup/unified", true, "/", 0, "");
	expect_hier(&l, "/sys/fs/cgroup/blkio", false, "/", 0, "blkio");
	ck_assert_ptr_null(hier_at(&l, "/sys/fs/cgroup/systemd"));
	for (size_t i = 0; i < l.n; i++)
		v2 += l.hier[i].v2;
	ck_assert_uint_eq(v2, 1);
	cordon_cgroup_layout_free(&l);
}
END_TEST

START_TEST(parse_hybrid_v2_path_nested)
{
	/* systemd hybrid: the unified line carries the session scope */
	static const char cg[] = "4:memory:/user.slice\n"
				 "1:name=systemd:/user.slice/user-1000.slice/session-3.scope\n"
				 "0::/user.slice/user-1000.slice/session-3.scope\n";
	struct cordon_cgroup_layout l;

	parse_ok(hybrid_mi, cg, &l);
	ck_assert_uint_eq(l.n, 2);
	expect_hier(&l, "/sys/fs/cgroup/memory", false, "/user.slice", CORDON_CTRL_MEMORY,
		    "memory");
	expect_hier(&l, "/sys/fs/cgroup/unified", true,
		    "/user.slice/user-1000.slice/session-3.scope", 0, "");
	cordon_cgroup_layout_free(&l);
}
END_TEST

START_TEST(parse_mount_root_not_slash)
{
	/* In a container: each hierarchy's mount root is the container's cgroup. */
	static const char mi[] = MI_BASE
		"700 24 0:40 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - tmpfs tmpfs ro,mode=755\n"
		"701 700 0:31 /docker/0123abcd /sys/fs/cgroup/memory ro,nosuid,nodev,noexec,relatime master:15 - cgroup cgroup rw,memory\n"
		"702 700 0:32 /docker/0123abcd /sys/fs/cgroup/pids ro,nosuid,nodev,noexec,relatime master:16 - cgroup cgroup rw,pids\n"
		"703 700 0:29 /docker/0123abcd /sys/fs/cgroup/cpu,cpuacct ro,nosuid,nodev,noexec,relatime master:17 - cgroup cgroup rw,cpu,cpuacct\n";
	static const char cg[] = "5:pids:/docker/0123abcd/inner/deeper\n"
				 "4:memory:/docker/0123abcd\n"
				 "2:cpu,cpuacct:/docker/0123abcdef\n";
	static const char mi2[] = MI_BASE
		"800 24 0:50 /system.slice/box.service /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw\n";
	static const char cg2[] = "0::/system.slice/box.service/payload\n";
	struct cordon_cgroup_layout l;
	const struct cordon_cgroup_hier *h;

	parse_ok(mi, cg, &l);
	ck_assert_uint_eq(l.n, 3);
	expect_hier(&l, "/sys/fs/cgroup/memory", false, "/", CORDON_CTRL_MEMORY, "memory");
	expect_hier(&l, "/sys/fs/cgroup/pids", false, "/inner/deeper", CORDON_CTRL_PIDS, "pids");
	/* "/docker/0123abcdef" is not below the root "/docker/0123abcd": not cut at "ef" */
	h = hier_at(&l, "/sys/fs/cgroup/cpu,cpuacct");
	ck_assert_ptr_nonnull(h);
	ck_assert_msg(strcmp(h->path, "ef") != 0 && strcmp(h->path, "/ef") != 0,
		      "path cut at a non-component boundary: '%s'", h->path);
	cordon_cgroup_layout_free(&l);

	parse_ok(mi2, cg2, &l);
	ck_assert_uint_eq(l.n, 1);
	expect_hier(&l, "/sys/fs/cgroup", true, "/payload", 0, "");
	cordon_cgroup_layout_free(&l);

	/* the caller exactly at the mount root: "/" */
	parse_ok(mi2, "0::/system.slice/box.service\n", &l);
	ck_assert_uint_eq(l.n, 1);
	expect_hier(&l, "/sys/fs/cgroup", true, "/", 0, "");
	cordon_cgroup_layout_free(&l);
}
END_TEST

START_TEST(parse_named_hierarchies_skipped)
{
	static const char mi[] = MI_BASE MI_TMPFS
		"31 30 0:28 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,xattr,name=systemd\n"
		"32 30 0:29 / /sys/fs/cgroup/elogind rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,none,name=elogind\n"
		"33 30 0:30 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,pids\n";
	static const char cg[] = "3:name=elogind:/c1\n"
				 "2:pids:/\n"
				 "1:name=systemd:/user.slice\n";
	struct cordon_cgroup_layout l;

	parse_ok(mi, cg, &l);
	ck_assert_uint_eq(l.n, 1);
	expect_hier(&l, "/sys/fs/cgroup/pids", false, "/", CORDON_CTRL_PIDS, "pids");
	cordon_cgroup_layout_free(&l);

	/* only named hierarchies: nothing */
	parse_ok(mi, "1:name=systemd:/user.slice\n", &l);
	ck_assert_uint_eq(l.n, 0);
	cordon_cgroup_layout_free(&l);
}
END_TEST

START_TEST(parse_malformed_lines_ignored)
{
	static const char mi[] = MI_BASE
		"garbage\n"
		"\n"
		"1 2 3 - cgroup\n"					     /* too few fields */
		"99 30 0:99 / /sys/fs/cgroup/x rw cgroup cgroup rw,memory\n" /* no separator */
		"98 30 0:98 / - cgroup\n" /* no mount point, no super options */
		"38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
		"34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n";
	static const char cg[] = "nonsense\n"
				 "\n"
				 "7:\n"
				 "x:memory\n"
				 "8:pids:/\n"
				 "9:freezer:/\n" /* no such mount: skipped */
				 "4:memory:/a:b\n";
	struct cordon_cgroup_layout l;

	parse_ok(mi, cg, &l);
	ck_assert_uint_eq(l.n, 2);
	expect_hier(&l, "/sys/fs/cgroup/pids", false, "/", CORDON_CTRL_PIDS, "pids");
	/* a path may contain ':' (everything after the second one) */
	expect_hier(&l, "/sys/fs/cgroup/memory", false, "/a:b", CORDON_CTRL_MEMORY, "memory");
	cordon_cgroup_layout_free(&l);

	/* empty inputs: an empty layout, no error */
	parse_ok("", "", &l);
	ck_assert_uint_eq(l.n, 0);
	parse_ok(hybrid_mi, "", &l);
	ck_assert_uint_eq(l.n, 0);
	parse_ok("", hybrid_cg, &l);
	ck_assert_uint_eq(l.n, 0);
	/* a v2 line without any cgroup2 mount */
	parse_ok(v1_split_mi, "0::/\n", &l);
	ck_assert_uint_eq(l.n, 0);
}
END_TEST

START_TEST(parse_empty_controller_list_is_malformed)
{
	/*
	 * "ID::PATH" with ID other than 0 names neither controllers nor a
	 * name= hierarchy: no such v1 hierarchy exists. It must not be
	 * matched to some v1 mount (an empty list is "contained" in any).
	 */
	static const char cg[] = "3::/bogus\n"
				 "::/bogus2\n"
				 "8:pids:/\n";
	struct cordon_cgroup_layout l;

	parse_ok(hybrid_mi, cg, &l);
	for (size_t i = 0; i < l.n; i++)
		ck_assert_msg(strncmp(l.hier[i].path, "/bogus", 6) != 0,
			      "malformed line '::/bogus' became a hierarchy at %s",
			      l.hier[i].mount);
	ck_assert_uint_eq(l.n, 1);
	cordon_cgroup_layout_free(&l);
}
END_TEST

START_TEST(parse_caps_at_max_hierarchies)
{
	char mi[8192] = MI_BASE, cg[2048] = "";
	struct cordon_cgroup_layout l;

	for (int i = 0; i < 24; i++) {
		char line[256];

		snprintf(line, sizeof(line),
			 "%d 30 0:%d / /sys/fs/cgroup/c%d rw - cgroup cgroup rw,ctl%d\n", 100 + i,
			 100 + i, i, i);
		strcat(mi, line);
		snprintf(line, sizeof(line), "%d:ctl%d:/\n", i + 1, i);
		strcat(cg, line);
	}
	parse_ok(mi, cg, &l);
	ck_assert_uint_eq(l.n, CORDON_CGROUP_MAX_HIER);
	cordon_cgroup_layout_free(&l);
}
END_TEST

START_TEST(parse_mount_over_sys_fs_cgroup_hides_hierarchies)
{
	/*
	 * cgroup2 mounted over /sys/fs/cgroup (a private mount namespace, or
	 * a container runtime doing so): the v1 hierarchies and unified below
	 * it stay in mountinfo but can no longer be reached through their
	 * mount points. The layout is the cgroup2 at /sys/fs/cgroup alone.
	 */
	static const char mi[] =
		MI_BASE "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
			"31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
			"34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
			"38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
			"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
			"65 30 0:37 / /sys/fs/cgroup rw,relatime - cgroup2 none rw\n";
	static const char cg[] = "8:pids:/\n"
				 "4:memory:" NESTED "\n"
				 "1:cpu:/\n"
				 "0::/\n";
	struct cordon_cgroup_layout l;

	parse_ok(mi, cg, &l);
	for (size_t i = 0; i < l.n; i++)
		ck_assert_msg(strcmp(l.hier[i].mount, "/sys/fs/cgroup") == 0,
			      "hierarchy at %s is hidden by the cgroup2 mounted on /sys/fs/cgroup",
			      l.hier[i].mount);
	ck_assert_uint_eq(l.n, 1);
	expect_hier(&l, "/sys/fs/cgroup", true, "/", 0, "");
	cordon_cgroup_layout_free(&l);
}
END_TEST

START_TEST(kind_names)
{
	ck_assert_str_eq(cordon_cgroup_kind_name(CORDON_CGROUP_NONE), "none");
	ck_assert_str_eq(cordon_cgroup_kind_name(CORDON_CGROUP_V1), "v1");
	ck_assert_str_eq(cordon_cgroup_kind_name(CORDON_CGROUP_V2), "v2");
	ck_assert_str_eq(cordon_cgroup_kind_name(CORDON_CGROUP_HYBRID), "hybrid");
}
END_TEST

/* --- conversions --------------------------------------------------------- */

START_TEST(cpus_to_quota_values)
{
	static const struct {
		const char *in;
		uint64_t quota;
	} ok[] = {
		{ "0.5", 50000 },  { "2", 200000 },   { "1", 100000 },	 { "0.25", 25000 },
		{ "1.5", 150000 }, { "0.001", 1000 }, /* 100 µs: raised to the 1 ms minimum */
		{ "0.009", 1000 }, { "0.01", 1000 },  { "0.011", 1100 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		uint64_t q = 0, p = 0;

		ck_assert_msg(cordon_cpus_to_quota(ok[i].in, &q, &p) == 0, "'%s' rejected",
			      ok[i].in);
		ck_assert_msg(q == ok[i].quota, "'%s': quota %llu, expected %llu", ok[i].in,
			      (unsigned long long)q, (unsigned long long)ok[i].quota);
		ck_assert_uint_eq(p, CORDON_CPU_PERIOD_US);
	}
}
END_TEST

START_TEST(cpus_to_quota_rejects)
{
	static const char *const bad[] = {
		"0",  "0.0", "0.000", "-1", "-0.5", "abc", "1.2.3", "",
		"1.", ".5",  "1e3",   " 1", "1 ",   "0x2", "+1",    "1,5"
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		uint64_t q = 7, p = 7;

		ck_assert_msg(cordon_cpus_to_quota(bad[i], &q, &p) < 0,
			      "'%s' accepted (quota %llu)", bad[i], (unsigned long long)q);
	}
}
END_TEST

START_TEST(swap_only_docker_semantics)
{
	const uint64_t M = 1 << 20;
	struct cordon_limits l = { 0 };
	struct cordon_error err = { 0 };
	uint64_t swap = 99;

	/* unset: as much swap as memory */
	l.memory = 32 * M;
	ck_assert_int_eq(cordon_swap_only(&l, &swap, &err), 0);
	ck_assert_uint_eq(swap, 32 * M);
	/* equal: no swap */
	l.memory_swap = 32 * M;
	ck_assert_int_eq(cordon_swap_only(&l, &swap, &err), 0);
	ck_assert_uint_eq(swap, 0);
	/* above: the difference */
	l.memory_swap = 100 * M;
	ck_assert_int_eq(cordon_swap_only(&l, &swap, &err), 0);
	ck_assert_uint_eq(swap, 68 * M);
	/* nothing requested: nothing */
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(cordon_swap_only(&l, &swap, &err), 0);
	ck_assert_uint_eq(swap, 0);
}
END_TEST

START_TEST(swap_only_errors)
{
	const uint64_t M = 1 << 20;
	struct cordon_limits l = { 0 };
	struct cordon_error err = { 0 };
	uint64_t swap = 0;

	l.memory = 64 * M;
	l.memory_swap = 32 * M; /* below --memory */
	ck_assert_int_lt(cordon_swap_only(&l, &swap, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_USAGE);
	ck_assert_msg(strstr(err.msg, "--memory") != NULL, "message: %s", err.msg);

	memset(&err, 0, sizeof(err));
	l.memory = 0; /* without --memory */
	l.memory_swap = 32 * M;
	ck_assert_int_lt(cordon_swap_only(&l, &swap, &err), 0);
	ck_assert_int_eq(err.code, CORDON_E_USAGE);
	ck_assert_msg(strstr(err.msg, "--memory") != NULL, "message: %s", err.msg);
}
END_TEST

START_TEST(shares_to_weight_mapping)
{
	static const struct {
		uint64_t shares, weight;
	} t[] = {
		{ 2, 1 },	    { 1024, 39 }, /* 1 + (1022 * 9999) / 262142 = 1 + 38 */
		{ 262144, 10000 },  { 1, 1 },	  /* below the v1 minimum: clamped to 2 */
		{ 1000000, 10000 },		  /* above the maximum: clamped */
		{ 512, 20 },			  /* 1 + 510 * 9999 / 262142 */
		{ 0, 0 },			  /* not set */
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		uint64_t w = cordon_shares_to_weight(t[i].shares);

		ck_assert_msg(w == t[i].weight, "shares %llu: weight %llu, expected %llu",
			      (unsigned long long)t[i].shares, (unsigned long long)w,
			      (unsigned long long)t[i].weight);
		/* the kernel's formula, independently */
		if (t[i].shares >= 2 && t[i].shares <= 262144)
			ck_assert_uint_eq(w, 1 + ((t[i].shares - 2) * 9999) / 262142);
	}
}
END_TEST

START_TEST(device_rule_parse_good)
{
	struct cordon_device_rule r;
	struct cordon_error err = { 0 };

	ck_assert_int_eq(cordon_device_rule_parse("a", false, &r, &err), 0);
	ck_assert(!r.allow);
	ck_assert_int_eq(r.type, 'a');
	ck_assert_int_eq(r.major, -1);
	ck_assert_int_eq(r.minor, -1);
	ck_assert_str_eq(r.access, "rwm");

	ck_assert_int_eq(cordon_device_rule_parse("c 1:3 rwm", true, &r, &err), 0);
	ck_assert(r.allow);
	ck_assert_int_eq(r.type, 'c');
	ck_assert_int_eq(r.major, 1);
	ck_assert_int_eq(r.minor, 3);
	ck_assert_str_eq(r.access, "rwm");

	ck_assert_int_eq(cordon_device_rule_parse("b *:* r", true, &r, &err), 0);
	ck_assert_int_eq(r.type, 'b');
	ck_assert_int_eq(r.major, -1);
	ck_assert_int_eq(r.minor, -1);
	ck_assert_str_eq(r.access, "r");

	ck_assert_int_eq(cordon_device_rule_parse("c 136:* rw", true, &r, &err), 0);
	ck_assert_int_eq(r.major, 136);
	ck_assert_int_eq(r.minor, -1);
	ck_assert_str_eq(r.access, "rw");

	ck_assert_int_eq(cordon_device_rule_parse("c 4294967295:0 m", true, &r, &err), 0);
	ck_assert_int_eq(r.major, 4294967295LL);
	ck_assert_str_eq(r.access, "m");
}
END_TEST

START_TEST(device_rule_parse_bad)
{
	static const char *const bad[] = {
		"",	    "x 1:3 r",	"c 1:3",  "c 1:3 rwx", "c a:3 r",
		"c 1:b r",  "c 1 r",	"c :3 r", "c 1:3 RW",  "c 4294967296:0 r",
		"c 1*:3 r", "c -1:3 r", "z",	  "aa",
	};
	struct cordon_device_rule r;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct cordon_error err = { 0 };

		ck_assert_msg(cordon_device_rule_parse(bad[i], true, &r, &err) < 0, "'%s' accepted",
			      bad[i]);
		ck_assert_int_eq(err.code, CORDON_E_SPEC);
	}
}
END_TEST

START_TEST(device_rule_parse_trailing_garbage)
{
	/* "TYPE MAJOR:MINOR ACCESS" and nothing else */
	static const char *const bad[] = { "c 1:3 rwm extra", "c 1:3 r w", "c1:3 r",
					   "c 1:3 rwmrwm" };
	char accepted[512] = "";

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct cordon_device_rule r;
		struct cordon_error err = { 0 };
		char one[96];

		if (cordon_device_rule_parse(bad[i], true, &r, &err) < 0)
			continue;
		snprintf(one, sizeof(one), "%s'%s' (as %c %lld:%lld %s)", *accepted ? ", " : "",
			 bad[i], r.type, (long long)r.major, (long long)r.minor, r.access);
		strncat(accepted, one, sizeof(accepted) - strlen(accepted) - 1);
	}
	ck_assert_msg(!*accepted, "accepted: %s", accepted);
}
END_TEST

START_TEST(resources_to_limits_mapping)
{
	struct cordon_resources res = { 0 };
	struct cordon_limits l = { 0 };

	res.memory_limit = 64 << 20;
	res.memory_swap = 128 << 20;
	res.cpu_quota = 25000;
	res.pids_limit = 42;
	l.pids = CORDON_PIDS_DEFAULT;
	l.pids_default = true;
	cordon_resources_to_limits(&res, &l);
	ck_assert_uint_eq(l.memory, 64 << 20);
	ck_assert_uint_eq(l.memory_swap, 128 << 20);
	ck_assert_uint_eq(l.cpu_quota, 25000);
	ck_assert_uint_eq(l.cpu_period, CORDON_CPU_PERIOD_US); /* period unset: the default */
	ck_assert_uint_eq(l.pids, 42);
	ck_assert(!l.pids_default);

	/* nothing set (OCI: absent; -1 for pids is "unlimited"): nothing changes */
	memset(&res, 0, sizeof(res));
	res.pids_limit = -1;
	memset(&l, 0, sizeof(l));
	cordon_resources_to_limits(&res, &l);
	ck_assert_uint_eq(l.memory, 0);
	ck_assert_uint_eq(l.cpu_quota, 0);
	ck_assert_uint_eq(l.pids, 0);
}
END_TEST

/* --- where a sandbox's cgroup goes (pure) ---------------------------------- */

static void expect_place(const char *id, const char *parent, const char *path, const char *caller,
			 const char *want, size_t want_start)
{
	struct cordon_cgroup_place place = { .id = id, .parent = parent, .path = path };
	size_t start = 99;
	char *got = cordon_cgroup_place_path(&place, caller, &start);

	if (!want) {
		ck_assert_msg(got == NULL, "path '%s' below '%s': expected a refusal, got '%s'",
			      path ? path : "(none)", caller, got);
		return;
	}
	ck_assert_msg(got != NULL, "path '%s' below '%s': refused", path ? path : "(none)", caller);
	ck_assert_str_eq(got, want);
	ck_assert_uint_eq(start, want_start);
	free(got);
}

START_TEST(place_default_and_parent)
{
	/* cordon-ID below the caller's cgroup, which cordon does not create */
	expect_place("c1", NULL, NULL, "/", "/cordon-c1", 0);
	expect_place("c1", NULL, NULL, "/user.slice/s-1.scope", "/user.slice/s-1.scope/cordon-c1",
		     2);
	/* --cgroup-parent: from the root, instead of the caller's */
	expect_place("c1", "/sandboxes", NULL, "/user.slice", "/sandboxes/cordon-c1", 1);
	/* an empty cgroupsPath is no cgroupsPath */
	expect_place("c1", NULL, "", "/a", "/a/cordon-c1", 1);
}
END_TEST

/* The cgroup a v2 sandbox's controllers come from: its parent's, not the caller's. */
static void expect_base(const char *parent, const char *path, const char *caller, const char *want)
{
	struct cordon_cgroup_place place = { .id = "c1", .parent = parent, .path = path };
	char *got = cordon_cgroup_place_base(&place, caller);

	if (!want) {
		ck_assert_msg(got == NULL, "base of '%s': expected a refusal, got '%s'",
			      path ? path : "(none)", got);
		return;
	}
	ck_assert_msg(got != NULL, "base of '%s' below '%s': refused", path ? path : "(none)",
		      caller);
	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(place_base)
{
	expect_base(NULL, NULL, "/user.slice/s-1.scope", "/user.slice/s-1.scope");
	expect_base(NULL, NULL, "/", "/");
	/* --cgroup-parent: the parent, whatever the caller's cgroup */
	expect_base("/sandboxes", NULL, "/user.slice/s-1.scope", "/sandboxes");
	expect_base("/a/b/", NULL, "/", "/a/b");
	expect_base("/", NULL, "/u", "/");
	/* linux.cgroupsPath: absolute from the root, relative from the caller's */
	expect_base(NULL, "/k8s.io/ctr1", "/u", "/");
	expect_base("/ignored", "pod/ctr", "/process_api/q", "/process_api/q");
	expect_base(NULL, "/a/../b", "/", NULL);
}
END_TEST

START_TEST(place_cgroups_path)
{
	/* absolute: from each hierarchy's root, every component may be made */
	expect_place("x", NULL, "/libpod_parent/libpod-0123abcd", "/process_api/q",
		     "/libpod_parent/libpod-0123abcd", 0);
	expect_place("x", NULL, "/k8s.io/ctr1", "/", "/k8s.io/ctr1", 0);
	/* the id and --cgroup-parent play no part */
	expect_place("x", "/ignored", "/a/b", "/c", "/a/b", 0);
	/* relative: below the caller's cgroup in that hierarchy */
	expect_place("x", NULL, "pod/ctr", "/process_api/q", "/process_api/q/pod/ctr", 2);
	expect_place("x", NULL, "pod/ctr", "/", "/pod/ctr", 0);
	/* "//", "/./" and a trailing "/" collapse */
	expect_place("x", NULL, "//a/./b//", "/", "/a/b", 0);
	expect_place("x", NULL, "./a", "/u", "/u/a", 1);
	/* refused: "..", the root itself, the caller's own cgroup */
	expect_place("x", NULL, "/a/../b", "/", NULL, 0);
	expect_place("x", NULL, "..", "/u", NULL, 0);
	expect_place("x", NULL, "/", "/u", NULL, 0);
	expect_place("x", NULL, "/./", "/u", NULL, 0);
	expect_place("x", NULL, ".", "/u", NULL, 0);
	expect_place("x", NULL, NULL, "/a/../b", NULL, 0);
	/* a component that only starts with dots is a name */
	expect_place("x", NULL, "/...", "/", "/...", 0);
}
END_TEST

static bool has_rule(const struct cordon_device_rule *r, size_t n, bool allow, char type,
		     int64_t major, int64_t minor)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].allow == allow && r[i].type == type && r[i].major == major &&
		    r[i].minor == minor)
			return true;
	return false;
}

START_TEST(device_rules_container_defaults)
{
	struct cordon_device_rule in[3];
	struct cordon_error err = { 0 };
	struct cordon_device_rule *out;
	size_t n;

	/* deny all (podman's and cordon spec's first rule): the config's rule first, then /dev's */
	ck_assert_int_eq(cordon_device_rule_parse("a", false, &in[0], &err), 0);
	out = cordon_device_rules_container(in, 1, &n);
	ck_assert_uint_eq(n, 9);
	ck_assert(!out[0].allow && out[0].type == 'a');
	ck_assert(has_rule(out + 1, n - 1, true, 'c', 1, 3));	 /* null */
	ck_assert(has_rule(out + 1, n - 1, true, 'c', 1, 9));	 /* urandom */
	ck_assert(has_rule(out + 1, n - 1, true, 'c', 5, 2));	 /* ptmx */
	ck_assert(has_rule(out + 1, n - 1, true, 'c', 136, -1)); /* the ptys */
	free(out);

	/* a device denied by name stays denied: its default is left out */
	ck_assert_int_eq(cordon_device_rule_parse("c 1:3 rwm", false, &in[1], &err), 0);
	ck_assert_int_eq(cordon_device_rule_parse("c 136:* rw", false, &in[2], &err), 0);
	out = cordon_device_rules_container(in, 3, &n);
	ck_assert_uint_eq(n, 3 + 6);
	ck_assert(!has_rule(out + 3, n - 3, true, 'c', 1, 3));
	ck_assert(!has_rule(out + 3, n - 3, true, 'c', 136, -1));
	ck_assert(has_rule(out + 3, n - 3, true, 'c', 1, 5));
	free(out);

	/* a deny of a whole class does not name /dev/null: the default comes back */
	ck_assert_int_eq(cordon_device_rule_parse("c 1:* rwm", false, &in[1], &err), 0);
	out = cordon_device_rules_container(in, 2, &n);
	ck_assert(has_rule(out + 2, n - 2, true, 'c', 1, 3));
	free(out);
	/* an allow rule names nothing to keep out */
	ck_assert_int_eq(cordon_device_rule_parse("c 1:3 r", true, &in[1], &err), 0);
	out = cordon_device_rules_container(in, 2, &n);
	ck_assert_uint_eq(n, 2 + 8);
	free(out);
}
END_TEST

/* --- root: this host's hierarchies ---------------------------------------- */

static unsigned long fs_type(const char *path)
{
	struct statfs s;

	return statfs(path, &s) == 0 ? (unsigned long)s.f_type : 0;
}

static char *read_text(const char *dir, const char *file)
{
	char path[PATH_MAX];
	char *text = NULL;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (cordon_read_file_at(AT_FDCWD, path, &text, NULL) < 0)
		return NULL;
	text[strcspn(text, "\n")] = '\0';
	return text;
}

static void expect_file(const char *dir, const char *file, const char *want)
{
	char *got = read_text(dir, file);

	ck_assert_msg(got != NULL, "cannot read %s/%s", dir, file);
	ck_assert_msg(strcmp(got, want) == 0, "%s/%s reads '%s', expected '%s'", dir, file, got,
		      want);
	free(got);
}

static bool dir_exists(const char *dir)
{
	struct stat st;

	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

static char unit_id[64];

/* cordon-ID below the caller's cgroup. */
#define PLACE(i) (&(struct cordon_cgroup_place){ .id = (i) })

static const char *new_id(void)
{
	static int k;

	snprintf(unit_id, sizeof(unit_id), "unit-%d-%d", (int)getpid(), ++k);
	return unit_id;
}

static size_t idx_with(const struct cordon_cgroup *cg, unsigned ctrl)
{
	for (size_t i = 0; i < cg->n; i++)
		if (cg->ctrls[i] & ctrl)
			return i;
	ck_abort_msg("no directory for controller 0x%x", ctrl);
	return 0;
}

/* The directory created in the hierarchy carrying ctrl, or NULL. */
static const char *dir_with(const struct cordon_cgroup *cg, unsigned ctrl)
{
	for (size_t i = 0; i < cg->n; i++)
		if (cg->ctrls[i] & ctrl)
			return cg->dir[i];
	return NULL;
}

START_TEST(detect_this_host)
{
	struct cordon_cgroup_layout l;
	struct cordon_error err = { 0 };
	enum cordon_cgroup_kind want;
	unsigned long top = fs_type("/sys/fs/cgroup");

	if (top == CGROUP2_SUPER_MAGIC)
		want = CORDON_CGROUP_V2;
	else if (top == TMPFS_MAGIC && fs_type("/sys/fs/cgroup/unified") == CGROUP2_SUPER_MAGIC)
		want = CORDON_CGROUP_HYBRID;
	else if (top == TMPFS_MAGIC)
		want = CORDON_CGROUP_V1;
	else
		want = CORDON_CGROUP_NONE;
	ck_assert_int_eq(cordon_cgroup_detect(&l, &err), 0);
	ck_assert_msg(l.kind == want, "detected %s, statfs says %s",
		      cordon_cgroup_kind_name(l.kind), cordon_cgroup_kind_name(want));
	if (want != CORDON_CGROUP_HYBRID) {
		cordon_cgroup_layout_free(&l);
		UNIT_SKIP_LAYOUT("the hybrid checks need this host's hybrid layout (found %s)",
				 cordon_cgroup_kind_name(want));
	}
	/* The brief's machine: v1 memory/cpu/cpuacct/pids, unified carries hugetlb. */
	{
		const struct cordon_cgroup_hier *u = hier_at(&l, "/sys/fs/cgroup/unified");
		char *self = NULL, *mem_line;

		ck_assert_ptr_nonnull(u);
		ck_assert(u->v2);
		ck_assert_msg((u->ctrls & (CORDON_CTRL_MEMORY | CORDON_CTRL_PIDS)) == 0,
			      "unified carries %s", u->ctrl_names);
		ck_assert_ptr_nonnull(hier_at(&l, "/sys/fs/cgroup/memory"));
		ck_assert_ptr_nonnull(hier_at(&l, "/sys/fs/cgroup/pids"));
		ck_assert_int_eq(cordon_read_file_at(AT_FDCWD, "/proc/self/cgroup", &self, NULL),
				 0);
		mem_line = strstr(self, ":memory:");
		ck_assert_ptr_nonnull(mem_line);
		mem_line += strlen(":memory:");
		mem_line[strcspn(mem_line, "\n")] = '\0';
		expect_hier(&l, "/sys/fs/cgroup/memory", false, mem_line, CORDON_CTRL_MEMORY,
			    "memory");
		free(self);
	}
	cordon_cgroup_layout_free(&l);
}
END_TEST

/* A child that waits for a byte on go[0] before acting. */
struct child {
	pid_t pid;
	int go;	     /* write end: start */
	int results; /* read end: what the child reports */
};

static void child_start(struct child *c, void (*body)(int out))
{
	int go[2], res[2];

	ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(res, O_CLOEXEC), 0);
	c->pid = fork();
	ck_assert_int_ge(c->pid, 0);
	if (c->pid == 0) {
		char b;

		close(go[1]);
		close(res[0]);
		if (read(go[0], &b, 1) != 1)
			_exit(90);
		body(res[1]);
		_exit(0);
	}
	close(go[0]);
	close(res[1]);
	c->go = go[1];
	c->results = res[0];
}

/* Let it run; read up to len bytes of its report; reap it. Returns bytes read. */
static size_t child_finish(struct child *c, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;
	int status;

	ck_assert_int_eq(write(c->go, "g", 1), 1);
	close(c->go);
	while (got < len && (n = read(c->results, (char *)buf + got, len - got)) > 0)
		got += (size_t)n;
	close(c->results);
	ck_assert_int_eq(waitpid(c->pid, &status, 0), c->pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
	return got;
}

static void child_kill(struct child *c)
{
	kill(c->pid, SIGKILL);
	close(c->go);
	close(c->results);
	waitpid(c->pid, NULL, 0);
}

/* Fork until the kernel says no (at most 40); report how many succeeded. */
static void fork_until_refused(int out)
{
	pid_t kids[40];
	int n = 0, e = 0;

	for (; n < 40; n++) {
		kids[n] = fork();
		if (kids[n] == 0) {
			pause();
			_exit(0);
		}
		if (kids[n] < 0) {
			e = errno;
			break;
		}
	}
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		waitpid(kids[i], NULL, 0);
	if (write(out, &n, sizeof(n)) != sizeof(n) || write(out, &e, sizeof(e)) != sizeof(e))
		_exit(91);
}

static bool pid_in(const char *dir, pid_t pid)
{
	char *procs = read_text(dir, "cgroup.procs");
	char want[32];
	bool found;

	if (!procs)
		return false;
	/* read_text cut it at the first newline: one process expected */
	snprintf(want, sizeof(want), "%d", (int)pid);
	found = strcmp(procs, want) == 0;
	free(procs);
	return found;
}

START_TEST(create_attach_limits_destroy)
{
	const uint64_t M = 1 << 20;
	struct cordon_cgroup_layout layout;
	struct cordon_limits lim = { 0 };
	struct cordon_cgroup cg;
	struct cordon_error err = { 0 };
	char *dirs[CORDON_CGROUP_MAX_HIER] = { 0 };
	struct child c;
	const char *id, *mem, *pids, *cpu;
	unsigned all = 0;
	size_t n;
	int forks[2] = { -1, -1 };

	NEED_ROOT();
	ck_assert_int_eq(cordon_cgroup_detect(&layout, &err), 0);
	if (layout.kind == CORDON_CGROUP_NONE)
		UNIT_SKIP_OR_FAIL("no cgroups mounted at /sys/fs/cgroup");
	id = new_id();
	lim.memory = 64 * M;
	lim.pids = 20;
	lim.cpu_quota = 50000;
	lim.cpu_period = CORDON_CPU_PERIOD_US;
	ck_assert_msg(cordon_cgroup_create(&layout, PLACE(id), &lim, 0, &cg, &err) == 0,
		      "create: %s (errno %d)", err.msg, err.errnum);
	ck_assert(cg.enforced);
	ck_assert_uint_ge(cg.n, 1);
	for (size_t i = 0; i < cg.n; i++) {
		char suffix[96];

		all |= cg.ctrls[i];
		dirs[i] = strdup(cg.dir[i]);
		snprintf(suffix, sizeof(suffix), "/cordon-%s", id);
		ck_assert_msg(
			strlen(cg.dir[i]) > strlen(suffix) &&
				strcmp(cg.dir[i] + strlen(cg.dir[i]) - strlen(suffix), suffix) == 0,
			"%s is not named cordon-%s", cg.dir[i], id);
		ck_assert_msg(dir_exists(cg.dir[i]), "%s was not created", cg.dir[i]);
		/* without want_stats, no directory in a cpuacct-only hierarchy */
		ck_assert_msg(cg.ctrls[i] != CORDON_CTRL_CPUACCT, "%s made for cpuacct alone",
			      cg.dir[i]);
	}
	n = cg.n;
	ck_assert_msg((all & (CORDON_CTRL_MEMORY | CORDON_CTRL_PIDS | CORDON_CTRL_CPU)) ==
			      (CORDON_CTRL_MEMORY | CORDON_CTRL_PIDS | CORDON_CTRL_CPU),
		      "controllers with a directory: 0x%x", all);
	mem = dir_with(&cg, CORDON_CTRL_MEMORY);
	pids = dir_with(&cg, CORDON_CTRL_PIDS);
	cpu = dir_with(&cg, CORDON_CTRL_CPU);
	/* below the caller's own cgroup of its hierarchy (memory is nested here) */
	for (size_t h = 0; h < layout.n; h++) {
		const struct cordon_cgroup_hier *hi = &layout.hier[h];
		size_t ml = strlen(hi->mount);
		char want[PATH_MAX];

		if (strncmp(mem, hi->mount, ml) != 0 || mem[ml] != '/')
			continue;
		snprintf(want, sizeof(want), "%s%s/cordon-%s", hi->mount,
			 strcmp(hi->path, "/") == 0 ? "" : hi->path, id);
		ck_assert_str_eq(mem, want);
	}
	if (cg.v2[idx_with(&cg, CORDON_CTRL_MEMORY)]) {
		expect_file(mem, "memory.max", "67108864");
		expect_file(pids, "pids.max", "20");
		expect_file(cpu, "cpu.max", "50000 100000");
	} else {
		char *memsw;

		expect_file(mem, "memory.limit_in_bytes", "67108864");
		/* no --memory-swap: as much swap as memory, 128 MiB in total */
		memsw = read_text(mem, "memory.memsw.limit_in_bytes");
		if (memsw)
			ck_assert_str_eq(memsw, "134217728");
		free(memsw);
		expect_file(pids, "pids.max", "20");
		expect_file(cpu, "cpu.cfs_period_us", "100000");
		expect_file(cpu, "cpu.cfs_quota_us", "50000");
	}

	/* A second sandbox of the same id is refused, and leaves the first alone. */
	{
		struct cordon_cgroup dup;
		struct cordon_error e2 = { 0 };

		ck_assert_int_lt(cordon_cgroup_create(&layout, PLACE(id), &lim, 0, &dup, &e2), 0);
		ck_assert_int_eq(e2.code, CORDON_E_CGROUP);
		for (size_t i = 0; i < n; i++)
			ck_assert_msg(dir_exists(dirs[i]), "%s removed by the failed create",
				      dirs[i]);
	}

	/* attach: the child is in every directory, and pids.max holds for it */
	child_start(&c, fork_until_refused);
	if (cordon_cgroup_attach(&cg, c.pid, &err) < 0) {
		child_kill(&c);
		cordon_cgroup_destroy(&cg);
		ck_abort_msg("attach: %s (errno %d)", err.msg, err.errnum);
	}
	for (size_t i = 0; i < cg.n; i++)
		ck_assert_msg(pid_in(cg.dir[i], c.pid), "pid %d not in %s/cgroup.procs", (int)c.pid,
			      cg.dir[i]);
	ck_assert_uint_eq(child_finish(&c, forks, sizeof(forks)), sizeof(forks));
	/* pids.max 20 counts the child itself: 19 more */
	ck_assert_msg(forks[0] == 19, "the child forked %d times under pids.max 20 (then errno %d)",
		      forks[0], forks[1]);
	ck_assert_int_eq(forks[1], EAGAIN);

	cordon_cgroup_destroy(&cg);
	ck_assert_uint_eq(cg.n, 0);
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(!dir_exists(dirs[i]), "%s still there after destroy", dirs[i]);
		free(dirs[i]);
	}
	cordon_cgroup_destroy(&cg); /* idempotent */
	cordon_cgroup_layout_free(&layout);
}
END_TEST

/* Probes nothing: a member to make a cgroup busy until it is told to go. */
static void stay(int out)
{
	(void)out;
}

static void rmdir_parents(const char *leaf_dir, int levels)
{
	char *d = strdup(leaf_dir);

	for (int i = 0; i < levels; i++) {
		*strrchr(d, '/') = '\0';
		rmdir(d);
	}
	free(d);
}

/*
 * An OCI cgroupsPath from the root: parents made (a v1 cpuset parent
 * with its parent's cpus and mems), the leaf refused while in use, taken
 * over when empty, removed at the end while the parents stay.
 */
START_TEST(create_cgroups_path_nested)
{
	struct cordon_cgroup_layout layout;
	struct cordon_limits lim = { 0 };
	struct cordon_resources res = { 0 };
	struct cordon_cgroup cg, other;
	struct cordon_error err = { 0 };
	char path[96], suffix[96], file[PATH_MAX], *dirs[CORDON_CGROUP_MAX_HIER] = { 0 };
	struct cordon_cgroup_place place = { .id = "unused" };
	struct child c;
	const char *cpuset = NULL;
	size_t n;

	NEED_ROOT();
	ck_assert_int_eq(cordon_cgroup_detect(&layout, &err), 0);
	if (layout.kind == CORDON_CGROUP_NONE)
		UNIT_SKIP_OR_FAIL("no cgroups mounted at /sys/fs/cgroup");
	snprintf(path, sizeof(path), "/cordon-unit-%d/pod/leaf", (int)getpid());
	snprintf(suffix, sizeof(suffix), "%s", path);
	place.path = path;
	lim.pids = 20;
	ck_assert_msg(
		cordon_cgroup_create(&layout, &place, &lim, CORDON_CGROUP_WANT_OCI, &cg, &err) == 0,
		"create: %s (errno %d)", err.msg, err.errnum);
	res.cpus = "0";
	if (cordon_cgroup_apply_resources(&layout, &place, &res, &cg, &err) < 0 &&
	    !strstr(err.msg, "no cpuset controller")) {
		cordon_cgroup_destroy(&cg);
		ck_abort_msg("apply_resources: %s (errno %d)", err.msg, err.errnum);
	}
	n = cg.n;
	ck_assert_uint_ge(n, 1);
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(cg.dir[i]);

		dirs[i] = strdup(cg.dir[i]);
		ck_assert_msg(l > strlen(suffix) &&
				      strcmp(cg.dir[i] + l - strlen(suffix), suffix) == 0,
			      "%s is not at %s", cg.dir[i], path);
		snprintf(file, sizeof(file), "%s/cpuset.cpus", cg.dir[i]);
		if (!cg.v2[i] && access(file, F_OK) == 0)
			cpuset = cg.dir[i];
	}
	if (cpuset) {
		char parent[PATH_MAX];
		char *pc;

		expect_file(cpuset, "cpuset.cpus", "0");
		/* the parent cordon made has its own parent's cpus, not none */
		snprintf(parent, sizeof(parent), "%s/..", cpuset);
		pc = read_text(parent, "cpuset.cpus");
		ck_assert_ptr_nonnull(pc);
		ck_assert_msg(*pc, "the made parent %s has no cpus", parent);
		free(pc);
	}

	/* in use: a second container at the same path is refused and changes nothing */
	child_start(&c, stay);
	ck_assert_int_eq(cordon_cgroup_attach(&cg, c.pid, &err), 0);
	ck_assert_int_lt(
		cordon_cgroup_create(&layout, &place, &lim, CORDON_CGROUP_WANT_OCI, &other, &err),
		0);
	ck_assert_int_eq(err.code, CORDON_E_CGROUP);
	ck_assert_msg(strstr(err.msg, "is in use"), "%s", err.msg);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(dir_exists(dirs[i]), "%s removed by the refused create", dirs[i]);
	child_finish(&c, NULL, 0);

	/* a parent with children is no leaf */
	{
		struct cordon_cgroup_place up = { .path = path };
		char parent_path[96];
		struct cordon_error e2 = { 0 };

		snprintf(parent_path, sizeof(parent_path), "/cordon-unit-%d/pod", (int)getpid());
		up.path = parent_path;
		ck_assert_int_lt(cordon_cgroup_create(&layout, &up, &lim, 0, &other, &e2), 0);
		ck_assert_msg(strstr(e2.msg, "child cgroups"), "%s", e2.msg);
	}

	/* destroy: the leaf goes, the parents stay (as runc leaves them) */
	cordon_cgroup_destroy(&cg);
	for (size_t i = 0; i < n; i++) {
		char parent[PATH_MAX];

		ck_assert_msg(!dir_exists(dirs[i]), "%s still there after destroy", dirs[i]);
		snprintf(parent, sizeof(parent), "%s", dirs[i]);
		*strrchr(parent, '/') = '\0';
		ck_assert_msg(dir_exists(parent), "the parent of %s was removed", dirs[i]);
	}

	/* an existing empty cgroup is taken over */
	ck_assert_int_eq(mkdir(dirs[0], 0755), 0);
	ck_assert_msg(
		cordon_cgroup_create(&layout, &place, &lim, CORDON_CGROUP_WANT_OCI, &cg, &err) == 0,
		"take over: %s", err.msg);
	cordon_cgroup_destroy(&cg);
	ck_assert(!dir_exists(dirs[0]));
	for (size_t i = 0; i < n; i++) {
		rmdir_parents(dirs[i], 2);
		free(dirs[i]);
	}
	cordon_cgroup_layout_free(&layout);
}
END_TEST

START_TEST(create_default_pids_and_stats)
{
	struct cordon_cgroup_layout layout;
	struct cordon_limits lim = { 0 };
	struct cordon_cgroup cg;
	struct cordon_cgroup_stats st;
	struct cordon_error err = { 0 };
	struct child c;
	int forks[2];
	const char *pids;

	NEED_ROOT();
	ck_assert_int_eq(cordon_cgroup_detect(&layout, &err), 0);
	lim.pids = CORDON_PIDS_DEFAULT;
	lim.pids_default = true;
	ck_assert_msg(cordon_cgroup_create(&layout, PLACE(new_id()), &lim, CORDON_CGROUP_WANT_STATS,
					   &cg, &err) == 0,
		      "create: %s", err.msg);
	pids = dir_with(&cg, CORDON_CTRL_PIDS);
	if (!pids) {
		cordon_cgroup_destroy(&cg);
		UNIT_SKIP_OR_FAIL("no pids controller on this host");
	}
	expect_file(pids, "pids.max", "512");
	ck_assert_ptr_nonnull(dir_with(&cg, CORDON_CTRL_MEMORY)); /* for the outcomes */
	ck_assert_ptr_nonnull(dir_with(&cg, CORDON_CTRL_CPUACCT));
	child_start(&c, fork_until_refused);
	ck_assert_int_eq(cordon_cgroup_attach(&cg, c.pid, &err), 0);
	child_finish(&c, forks, sizeof(forks));
	ck_assert_int_eq(forks[0], 40); /* far below 512 */
	cordon_cgroup_stats(&cg, &st);
	ck_assert(st.enforced);
	ck_assert(!st.oom_killed);
	ck_assert(st.memory_peak_known);
	ck_assert_uint_gt(st.memory_peak, 0);
	ck_assert(st.cpu_usage_known);
	if (st.pids_peak_known)
		ck_assert_uint_ge(st.pids_peak, 41);
	cordon_cgroup_destroy(&cg);
	cordon_cgroup_layout_free(&layout);
}
END_TEST

/* --- root: device rules ------------------------------------------------------ */

struct probe {
	const char *path;
	int flags;
};

static const struct probe probes[] = {
	{ "/dev/null", O_RDONLY },    /* 1:3 r */
	{ "/dev/null", O_WRONLY },    /* 1:3 w */
	{ "/dev/null", O_RDWR },      /* 1:3 rw */
	{ "/dev/zero", O_RDWR },      /* 1:5 rw */
	{ "/dev/urandom", O_RDONLY }, /* 1:9 r */
};

static void probe_devices(int out)
{
	int res[ARRAY_SIZE(probes)];

	for (size_t i = 0; i < ARRAY_SIZE(probes); i++) {
		int fd = open(probes[i].path, probes[i].flags | O_CLOEXEC);

		res[i] = fd >= 0 ? 0 : errno;
		if (fd >= 0)
			close(fd);
	}
	if (write(out, res, sizeof(res)) != sizeof(res))
		_exit(92);
}

/* Apply rules (text, allow) in a fresh cgroup of layout; run the probes in it. */
static void run_device_case(const struct cordon_cgroup_layout *layout, bool want_v2, int idx,
			    const char *const *texts, const bool *allow, size_t n, const int *want)
{
	struct cordon_device_rule rules[8];
	struct cordon_resources res = { 0 };
	struct cordon_limits none = { 0 };
	struct cordon_cgroup cg;
	struct cordon_error err = { 0 };
	int got[ARRAY_SIZE(probes)];
	struct child c;
	char *dir;

	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(cordon_device_rule_parse(texts[i], allow[i], &rules[i], &err), 0);
	res.devices = rules;
	res.n_devices = n;
	/* nothing requested: initializes cg, creates nothing */
	ck_assert_int_eq(cordon_cgroup_create(layout, PLACE(new_id()), &none, 0, &cg, &err), 0);
	ck_assert_uint_eq(cg.n, 0);
	if (cordon_cgroup_apply_resources(layout, PLACE(unit_id), &res, &cg, &err) < 0) {
		cordon_cgroup_destroy(&cg);
		ck_abort_msg("apply_resources: %s (errno %d)", err.msg, err.errnum);
	}
	ck_assert_uint_eq(cg.n, 1);
	ck_assert(cg.v2[0] == want_v2);
	if (want_v2)
		ck_assert_int_ge(cg.device_prog_fd, 0);
	dir = strdup(cg.dir[0]);
	child_start(&c, probe_devices);
	if (cordon_cgroup_attach(&cg, c.pid, &err) < 0) {
		child_kill(&c);
		cordon_cgroup_destroy(&cg);
		ck_abort_msg("attach: %s", err.msg);
	}
	ck_assert_uint_eq(child_finish(&c, got, sizeof(got)), sizeof(got));
	cordon_cgroup_destroy(&cg);
	ck_assert_msg(!dir_exists(dir), "%s still there after destroy", dir);
	free(dir);
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++)
		ck_assert_msg(got[i] == want[i],
			      "%s rule set %d (last rule %s '%s'): open(%s, %s): %s, expected %s",
			      want_v2 ? "v2 (BPF)" : "v1", idx, allow[n - 1] ? "allow" : "deny",
			      texts[n - 1], probes[i].path,
			      probes[i].flags == O_RDONLY ? "r" :
			      probes[i].flags == O_WRONLY ? "w" :
							    "rw",
			      got[i] ? strerror(got[i]) : "allowed",
			      want[i] ? strerror(want[i]) : "allowed");
}

static const char *const oci_rules[] = { "a", "c 1:5 rwm", "c 1:3 r" };
static const bool oci_allow[] = { false, true, true };
/* /dev/null readable not writable, /dev/zero allowed, /dev/urandom denied */
static const int oci_want[] = { 0, EPERM, EPERM, 0, EPERM };

START_TEST(devices_v1_enforced)
{
	struct cordon_cgroup_layout layout;
	struct cordon_error err = { 0 };
	const struct cordon_cgroup_hier *h = NULL;

	NEED_ROOT();
	ck_assert_int_eq(cordon_cgroup_detect(&layout, &err), 0);
	for (size_t i = 0; i < layout.n; i++)
		if (!layout.hier[i].v2 && (layout.hier[i].ctrls & CORDON_CTRL_DEVICES))
			h = &layout.hier[i];
	if (!h) {
		cordon_cgroup_layout_free(&layout);
		UNIT_SKIP_LAYOUT("no v1 devices hierarchy on this host");
	}
	run_device_case(&layout, false, -1, oci_rules, oci_allow, ARRAY_SIZE(oci_rules), oci_want);
	cordon_cgroup_layout_free(&layout);
}
END_TEST

/* A layout of this host's cgroup2 hierarchy alone: forces the BPF path. */
static bool v2_only_layout(struct cordon_cgroup_layout *out)
{
	struct cordon_cgroup_layout layout;
	struct cordon_error err = { 0 };

	memset(out, 0, sizeof(*out));
	ck_assert_int_eq(cordon_cgroup_detect(&layout, &err), 0);
	for (size_t i = 0; i < layout.n; i++) {
		if (!layout.hier[i].v2)
			continue;
		out->kind = CORDON_CGROUP_V2;
		out->n = 1;
		out->hier[0].mount = strdup(layout.hier[i].mount);
		out->hier[0].path = strdup(layout.hier[i].path);
		out->hier[0].ctrl_names = strdup(layout.hier[i].ctrl_names);
		out->hier[0].ctrls = layout.hier[i].ctrls;
		out->hier[0].v2 = true;
		break;
	}
	cordon_cgroup_layout_free(&layout);
	return out->n == 1;
}

START_TEST(devices_v2_bpf_enforced)
{
	struct cordon_cgroup_layout layout;

	NEED_ROOT();
	if (!v2_only_layout(&layout))
		UNIT_SKIP_LAYOUT("no cgroup2 hierarchy on this host");
	run_device_case(&layout, true, -1, oci_rules, oci_allow, ARRAY_SIZE(oci_rules), oci_want);
	cordon_cgroup_layout_free(&layout);
}
END_TEST

/*
 * More rule sets, each on v1 (the kernel's own semantics, the reference)
 * and through cordon's BPF assembler on cgroup2: both must agree.
 * Probes: null r, null w, null rw, zero rw, urandom r.
 */
static const struct {
	const char *rules[4];
	bool allow[4];
	size_t n;
	int want[ARRAY_SIZE(probes)];
} dev_cases[] = {
	/* 0: allow all */
	{ { "a" }, { true }, 1, { 0, 0, 0, 0, 0 } },
	/* 1: deny all */
	{ { "a" }, { false }, 1, { EPERM, EPERM, EPERM, EPERM, EPERM } },
	/* 2: wildcard minor, read only */
	{ { "a", "c 1:* r" }, { false, true }, 2, { 0, EPERM, EPERM, EPERM, 0 } },
	/* 3: a later deny takes w away from an earlier allow */
	{ { "a", "c 1:3 rwm", "c 1:3 w" },
	  { false, true, false },
	  3,
	  { 0, EPERM, EPERM, EPERM, EPERM } },
	/* 4: a block rule does not cover character devices */
	{ { "a", "b *:* rwm" }, { false, true }, 2, { EPERM, EPERM, EPERM, EPERM, EPERM } },
	/* 5: wildcard major with a minor */
	{ { "a", "c *:5 rw" }, { false, true }, 2, { EPERM, EPERM, EPERM, 0, EPERM } },
	/* 6: allow all, then deny one device */
	{ { "a", "c 1:9 rwm" }, { true, false }, 2, { 0, 0, 0, 0, EPERM } },
	/* 7: write-only on null */
	{ { "a", "c 1:3 w" }, { false, true }, 2, { EPERM, 0, EPERM, EPERM, EPERM } },
	/* 8: allow all, deny writing null: read-write is a write too */
	{ { "a", "c 1:3 w" }, { true, false }, 2, { 0, EPERM, EPERM, 0, 0 } },
};

START_TEST(devices_v1_rule_sets)
{
	struct cordon_cgroup_layout layout;
	struct cordon_error err = { 0 };
	bool have = false;

	NEED_ROOT();
	ck_assert_int_eq(cordon_cgroup_detect(&layout, &err), 0);
	for (size_t i = 0; i < layout.n; i++)
		have |= !layout.hier[i].v2 && (layout.hier[i].ctrls & CORDON_CTRL_DEVICES);
	if (!have) {
		cordon_cgroup_layout_free(&layout);
		UNIT_SKIP_LAYOUT("no v1 devices hierarchy on this host");
	}
	run_device_case(&layout, false, _i, dev_cases[_i].rules, dev_cases[_i].allow,
			dev_cases[_i].n, dev_cases[_i].want);
	cordon_cgroup_layout_free(&layout);
}
END_TEST

START_TEST(devices_v2_bpf_rule_sets)
{
	struct cordon_cgroup_layout layout;

	NEED_ROOT();
	if (!v2_only_layout(&layout))
		UNIT_SKIP_LAYOUT("no cgroup2 hierarchy on this host");
	run_device_case(&layout, true, _i, dev_cases[_i].rules, dev_cases[_i].allow,
			dev_cases[_i].n, dev_cases[_i].want);
	cordon_cgroup_layout_free(&layout);
}
END_TEST

START_TEST(apply_resources_v1_files)
{
	struct cordon_cgroup_layout layout;
	struct cordon_resources res = { 0 };
	struct cordon_limits none = { 0 };
	struct cordon_cgroup cg;
	struct cordon_error err = { 0 };
	const char *cpu = NULL, *mem = NULL, *cpuset = NULL;
	unsigned need = CORDON_CTRL_MEMORY | CORDON_CTRL_CPU | CORDON_CTRL_CPUSET, have = 0;

	NEED_ROOT();
	ck_assert_int_eq(cordon_cgroup_detect(&layout, &err), 0);
	for (size_t i = 0; i < layout.n; i++)
		if (!layout.hier[i].v2)
			have |= layout.hier[i].ctrls;
	if ((have & need) != need) {
		cordon_cgroup_layout_free(&layout);
		UNIT_SKIP_LAYOUT("needs v1 memory, cpu and cpuset hierarchies");
	}
	res.memory_reservation = 16 << 20;
	res.cpu_shares = 512;
	res.cpus = "0";
	ck_assert_int_eq(cordon_cgroup_create(&layout, PLACE(new_id()), &none, 0, &cg, &err), 0);
	if (cordon_cgroup_apply_resources(&layout, PLACE(unit_id), &res, &cg, &err) < 0) {
		cordon_cgroup_destroy(&cg);
		ck_abort_msg("apply_resources: %s (errno %d)", err.msg, err.errnum);
	}
	for (size_t i = 0; i < cg.n; i++) {
		char *s;

		if ((s = read_text(cg.dir[i], "cpu.shares")))
			cpu = cg.dir[i];
		free(s);
		if ((s = read_text(cg.dir[i], "memory.soft_limit_in_bytes")))
			mem = cg.dir[i];
		free(s);
		if ((s = read_text(cg.dir[i], "cpuset.cpus")))
			cpuset = cg.dir[i];
		free(s);
	}
	ck_assert_ptr_nonnull(cpu);
	ck_assert_ptr_nonnull(mem);
	ck_assert_ptr_nonnull(cpuset);
	expect_file(cpu, "cpu.shares", "512");
	expect_file(mem, "memory.soft_limit_in_bytes", "16777216");
	expect_file(cpuset, "cpuset.cpus", "0");
	{
		/* mems not given: inherited from the parent, so tasks are accepted */
		char parent[PATH_MAX];
		char *pm;

		snprintf(parent, sizeof(parent), "%s/..", cpuset);
		pm = read_text(parent, "cpuset.mems");
		ck_assert_ptr_nonnull(pm);
		expect_file(cpuset, "cpuset.mems", pm);
		free(pm);
	}
	cordon_cgroup_destroy(&cg);
	cordon_cgroup_layout_free(&layout);
}
END_TEST

/* --- removing a tree ----------------------------------------------------- */

/* A member that stays until killed. */
static void stay_forever(int out)
{
	(void)out;
	for (;;)
		pause();
}

static void mkdirs_below(const char *dir, const char *const *rels, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", dir, rels[i]);
		ck_assert_msg(mkdir(path, 0755) == 0, "mkdir %s: %s", path, strerror(errno));
	}
}

static void put_in(const char *dir, pid_t pid)
{
	char v[32];

	snprintf(v, sizeof(v), "%d", (int)pid);
	ck_assert_int_eq(cordon_write_file_at(AT_FDCWD, dir, v, strlen(v)), 0);
}

/*
 * What a workload with a writable cgroup mount leaves: child cgroups
 * a/b/c and a/e and d below the sandbox's, in every hierarchy, a process
 * in a/b/c. A sweep (no kill) leaves such a tree alone, the supervisor's
 * destroy kills the process and removes everything, children first.
 */
START_TEST(remove_tree_nested_busy)
{
	static const char *const rels[] = { "a", "a/b", "a/b/c", "a/e", "d" };
	struct cordon_cgroup_layout layout;
	struct cordon_limits none = { 0 };
	struct cordon_cgroup cg;
	struct cordon_error err = { 0 };
	char *dirs[CORDON_CGROUP_MAX_HIER] = { 0 };
	struct child c;
	size_t n;
	int status;

	NEED_ROOT();
	ck_assert_int_eq(cordon_cgroup_detect(&layout, &err), 0);
	if (layout.kind == CORDON_CGROUP_NONE)
		UNIT_SKIP_OR_FAIL("no cgroups mounted at /sys/fs/cgroup");
	/* an OCI container's set: every hierarchy, unified among them */
	ck_assert_msg(cordon_cgroup_create(&layout, PLACE(new_id()), &none, CORDON_CGROUP_WANT_OCI,
					   &cg, &err) == 0,
		      "create: %s (errno %d)", err.msg, err.errnum);
	ck_assert_uint_ge(cg.n, 1);
	n = cg.n;
	child_start(&c, stay_forever);
	for (size_t i = 0; i < n; i++) {
		char leaf[PATH_MAX];

		dirs[i] = strdup(cg.dir[i]);
		mkdirs_below(cg.dir[i], rels, ARRAY_SIZE(rels));
		snprintf(leaf, sizeof(leaf), "%s/a/b/c/cgroup.procs", cg.dir[i]);
		put_in(leaf, c.pid);
	}
	/* in use: a sweep touches nothing */
	for (size_t i = 0; i < n; i++) {
		char leaf[PATH_MAX];

		ck_assert_int_eq(cordon_cgroup_remove_tree(dirs[i], false), -EBUSY);
		snprintf(leaf, sizeof(leaf), "%s/a/b/c", dirs[i]);
		ck_assert_msg(dir_exists(leaf), "%s removed by a sweep while in use", leaf);
	}
	ck_assert_int_eq(kill(c.pid, 0), 0);
	cordon_cgroup_destroy(&cg);
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(!dir_exists(dirs[i]), "%s still there after destroy", dirs[i]);
		free(dirs[i]);
	}
	ck_assert_int_eq(waitpid(c.pid, &status, 0), c.pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "member status 0x%x",
		      status);
	close(c.go);
	close(c.results);
	cordon_cgroup_layout_free(&layout);
}
END_TEST

/* Never anything but a cgroup below a hierarchy's root, never through a symlink. */
START_TEST(remove_tree_refuses_what_is_not_a_sandbox_cgroup)
{
	char *tmp = unit_tmpdir(), path[PATH_MAX], link[PATH_MAX];
	struct statfs sfs;

	snprintf(path, sizeof(path), "%s/x/y", tmp);
	unit_mkdirs(tmp, "x/y");
	snprintf(path, sizeof(path), "%s/x", tmp);
	ck_assert_int_eq(cordon_cgroup_remove_tree(path, true), -EINVAL);
	ck_assert(dir_exists(path));
	snprintf(link, sizeof(link), "%s/l", tmp);
	ck_assert_int_eq(symlink(path, link), 0);
	ck_assert_int_eq(cordon_cgroup_remove_tree(link, true), -ENOTDIR); /* O_NOFOLLOW */
	ck_assert(dir_exists(path));
	snprintf(path, sizeof(path), "%s/gone", tmp);
	ck_assert_int_eq(cordon_cgroup_remove_tree(path, true), 0);
	unit_rm_rf(tmp);
	free(tmp);
	/* a hierarchy's root (without kill: the check comes first either way) */
	if (statfs("/sys/fs/cgroup/pids", &sfs) == 0 && sfs.f_type == CGROUP_SUPER_MAGIC)
		ck_assert_int_eq(cordon_cgroup_remove_tree("/sys/fs/cgroup/pids", false), -EINVAL);
	if (statfs("/sys/fs/cgroup", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
		ck_assert_int_eq(cordon_cgroup_remove_tree("/sys/fs/cgroup", false), -EINVAL);
	if (statfs("/sys/fs/cgroup/unified", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
		ck_assert_int_eq(cordon_cgroup_remove_tree("/sys/fs/cgroup/unified", false),
				 -EINVAL);
}
END_TEST

static Suite *cgroup_suite(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc;

	tc = tcase_create("layout");
	tcase_add_test(tc, parse_v1_separate_cpu_cpuacct);
	tcase_add_test(tc, parse_v1_combined_cpu_cpuacct);
	tcase_add_test(tc, parse_v2_pure);
	tcase_add_test(tc, parse_hybrid_with_nested_memory);
	tcase_add_test(tc, parse_hybrid_v2_path_nested);
	tcase_add_test(tc, parse_mount_root_not_slash);
	tcase_add_test(tc, parse_named_hierarchies_skipped);
	tcase_add_test(tc, parse_malformed_lines_ignored);
	tcase_add_test(tc, parse_empty_controller_list_is_malformed);
	tcase_add_test(tc, parse_caps_at_max_hierarchies);
	tcase_add_test(tc, parse_mount_over_sys_fs_cgroup_hides_hierarchies);
	tcase_add_test(tc, kind_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("convert");
	tcase_add_test(tc, cpus_to_quota_values);
	tcase_add_test(tc, cpus_to_quota_rejects);
	tcase_add_test(tc, swap_only_docker_semantics);
	tcase_add_test(tc, swap_only_errors);
	tcase_add_test(tc, shares_to_weight_mapping);
	tcase_add_test(tc, device_rule_parse_good);
	tcase_add_test(tc, device_rule_parse_bad);
	tcase_add_test(tc, device_rule_parse_trailing_garbage);
	tcase_add_test(tc, resources_to_limits_mapping);
	tcase_add_test(tc, place_default_and_parent);
	tcase_add_test(tc, place_cgroups_path);
	tcase_add_test(tc, place_base);
	tcase_add_test(tc, device_rules_container_defaults);
	tcase_add_test(tc, remove_tree_refuses_what_is_not_a_sandbox_cgroup);
	suite_add_tcase(s, tc);

	/* On this host's real hierarchies; each case skips itself unless root. */
	tc = tcase_create("host");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, detect_this_host);
	tcase_add_test(tc, create_attach_limits_destroy);
	tcase_add_test(tc, create_default_pids_and_stats);
	tcase_add_test(tc, create_cgroups_path_nested);
	tcase_add_test(tc, remove_tree_nested_busy);
	tcase_add_test(tc, devices_v1_enforced);
	tcase_add_test(tc, devices_v2_bpf_enforced);
	tcase_add_loop_test(tc, devices_v1_rule_sets, 0, ARRAY_SIZE(dev_cases));
	tcase_add_loop_test(tc, devices_v2_bpf_rule_sets, 0, ARRAY_SIZE(dev_cases));
	tcase_add_test(tc, apply_resources_v1_files);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(cgroup_suite());
}
