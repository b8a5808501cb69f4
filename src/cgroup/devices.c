// SPDX-License-Identifier: Apache-2.0
/*
 * Device rules. cgroup v1 has files (devices.allow, devices.deny); cgroup
 * v2 has none: access is decided by an eBPF program of type
 * BPF_PROG_TYPE_CGROUP_DEVICE attached to the cgroup, which this file
 * assembles from the rules.
 */
#include <fcntl.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>

#include "cgroup-internal.h"

int cordon_device_rule_parse(const char *text, bool allow, struct cordon_device_rule *rule,
			     struct cordon_error *err)
{
	char type, major[16], minor[16], access[8];
	int64_t v[2];
	const char *s[2] = { major, minor };

	memset(rule, 0, sizeof(*rule));
	rule->allow = allow;
	if (strcmp(text, "a") == 0) {
		rule->type = 'a';
		rule->major = rule->minor = -1;
		strcpy(rule->access, "rwm");
		return 0;
	}
	int used = -1;

	/* Strict: one space between fields, nothing after, each access letter once. */
	if (sscanf(text, "%c %15[0-9*]:%15[0-9*] %7[rwm]%n", &type, major, minor, access, &used) != 4 ||
	    used < 0 || text[used] != '\0' || text[1] != ' ' || strchr(text + 2, ' ') != strrchr(text, ' ') ||
	    (type != 'a' && type != 'c' && type != 'b') || strlen(access) > 3 ||
	    (strchr(access, 'r') != strrchr(access, 'r')) || (strchr(access, 'w') != strrchr(access, 'w')) ||
	    (strchr(access, 'm') != strrchr(access, 'm')))
		return cordon_error_set(err, CORDON_E_SPEC, 0,
					"device rule '%s': expected TYPE MAJOR:MINOR ACCESS", text);
	for (int i = 0; i < 2; i++) {
		uint64_t n;

		if (strcmp(s[i], "*") == 0)
			v[i] = -1;
		else if (cordon_parse_u64(s[i], &n) == 0 && n <= UINT32_MAX)
			v[i] = (int64_t)n;
		else
			return cordon_error_set(err, CORDON_E_SPEC, 0, "device rule '%s': bad number",
						text);
	}
	rule->type = type;
	rule->major = v[0];
	rule->minor = v[1];
	memcpy(rule->access, access, strlen(access) + 1); /* at most 3 letters, checked above */
	return 0;
}

static void rule_format(const struct cordon_device_rule *r, char *buf, size_t len)
{
	char major[24] = "*", minor[24] = "*";

	if (r->type == 'a') {
		snprintf(buf, len, "a");
		return;
	}
	if (r->major >= 0)
		snprintf(major, sizeof(major), "%lld", (long long)r->major);
	if (r->minor >= 0)
		snprintf(minor, sizeof(minor), "%lld", (long long)r->minor);
	snprintf(buf, len, "%c %s:%s %s", r->type, major, minor, r->access[0] ? r->access : "rwm");
}

int cgroup_devices_v1(const char *dir, const struct cordon_device_rule *rules, size_t n,
		      struct cordon_error *err)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *path =
			cordon_xasprintf("%s/%s", dir, rules[i].allow ? "devices.allow" : "devices.deny");
		char line[64];
		int r;

		rule_format(&rules[i], line, sizeof(line));
		r = cordon_write_file_at(AT_FDCWD, path, line, strlen(line));
		if (r < 0)
			return cordon_error_set(err, CORDON_E_CGROUP, -r, "writing '%s' to %s", line,
						path);
	}
	return 0;
}

#define INSN(c, d, s, o, i)                                                               \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

static unsigned access_mask(const char *access)
{
	unsigned m = 0;

	if (!*access)
		return BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD;
	if (strchr(access, 'r'))
		m |= BPF_DEVCG_ACC_READ;
	if (strchr(access, 'w'))
		m |= BPF_DEVCG_ACC_WRITE;
	if (strchr(access, 'm'))
		m |= BPF_DEVCG_ACC_MKNOD;
	return m;
}

/*
 * OCI semantics: rules apply in order and a later rule overrides an
 * earlier one, so the program tests them last to first and the first
 * match decides; no match denies.
 *
 *   r2 = type, r3 = access, r4 = major, r5 = minor (from the context)
 *   per rule: [type check] [access check] [major check] [minor check]
 *             r0 = verdict; exit
 */
size_t cgroup_devices_bpf(const struct cordon_device_rule *rules, size_t n, struct bpf_insn *out,
			  size_t cap)
{
	size_t k = 0;

#define EMIT(x)                                                                           \
	do {                                                                              \
		if (k >= cap)                                                             \
			return 0;                                                         \
		out[k++] = (x);                                                           \
	} while (0)
	EMIT(INSN(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_2, BPF_REG_1, 0, 0));
	EMIT(INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_2, 0, 0));
	EMIT(INSN(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 0xffff));
	EMIT(INSN(BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_3, 0, 0, 16));
	EMIT(INSN(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_4, BPF_REG_1, 4, 0));
	EMIT(INSN(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_5, BPF_REG_1, 8, 0));
	for (size_t i = n; i-- > 0;) {
		const struct cordon_device_rule *r = &rules[i];
		unsigned mask = access_mask(r->access);
		bool all_access = mask == (BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD);
		/* instructions in this block after each check, to jump past it */
		int len = 2 + (r->type != 'a') + (all_access ? 0 : 3) + (r->type != 'a' && r->major >= 0) +
			  (r->type != 'a' && r->minor >= 0);
		int left = len - 2;

		if (r->type != 'a') {
			left--;
			EMIT(INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0, (short)(left + 2),
				  r->type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK));
		}
		if (!all_access) {
			/*
			 * An allow rule matches when it grants every requested
			 * bit; a deny rule as soon as it covers any of them
			 * (as cgroup v1 decides: "rw" is refused by a "w" deny).
			 */
			left -= 3;
			EMIT(INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_3, 0, 0));
			if (r->allow) {
				EMIT(INSN(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_6, 0, 0, (int)~mask));
				EMIT(INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_6, 0, (short)(left + 2), 0));
			} else {
				EMIT(INSN(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_6, 0, 0, (int)mask));
				EMIT(INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_6, 0, (short)(left + 2), 0));
			}
		}
		if (r->type != 'a' && r->major >= 0) {
			left--;
			EMIT(INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_4, 0, (short)(left + 2),
				  (int)r->major));
		}
		if (r->type != 'a' && r->minor >= 0) {
			left--;
			EMIT(INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_5, 0, (short)(left + 2),
				  (int)r->minor));
		}
		EMIT(INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, r->allow ? 1 : 0));
		EMIT(INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
		/* A rule without checks always decides: what follows is unreachable. */
		if (len == 2)
			return k;
	}
	EMIT(INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0));
	EMIT(INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
#undef EMIT
	return k;
}

int cgroup_devices_v2(const char *dir, const struct cordon_device_rule *rules, size_t n,
		      int *prog_fd, struct cordon_error *err)
{
	size_t cap = 8 + n * 12, len;
	_cleanup_free_ struct bpf_insn *insns = cordon_xcalloc(cap, sizeof(*insns));
	_cleanup_close_ int cgfd = -1, prog = -1;
	char log[4096] = "";
	union bpf_attr attr;

	len = cgroup_devices_bpf(rules, n, insns, cap);
	if (len == 0)
		return cordon_error_set(err, CORDON_E_INTERNAL, 0, "device program too large");
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.insn_cnt = (uint32_t)len;
	attr.license = (uint64_t)(uintptr_t)"Apache";
	attr.log_buf = (uint64_t)(uintptr_t)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	prog = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (prog < 0) {
		int e = errno;

		log[strcspn(log, "\n")] = '\0';
		return cordon_error_set(err, CORDON_E_CGROUP, e, "loading the device program%s%s%s",
					*log ? " (verifier: " : "", log, *log ? ")" : "");
	}
	cgfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0)
		return cordon_error_set(err, CORDON_E_CGROUP, errno, "opening %s", dir);
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (uint32_t)cgfd;
	attr.attach_bpf_fd = (uint32_t)prog;
	attr.attach_type = BPF_CGROUP_DEVICE;
	attr.attach_flags = BPF_F_ALLOW_MULTI;
	if (syscall(SYS_bpf, BPF_PROG_ATTACH, &attr, sizeof(attr)) < 0)
		return cordon_error_set(err, CORDON_E_CGROUP, errno, "attaching the device program to %s",
					dir);
	*prog_fd = TAKE_FD(prog);
	return 0;
}

/* The devices of cordon's /dev (src/fs/api.c) and its devpts instance. */
static const struct cordon_device_rule sandbox_devices[] = {
	{ true, 'c', 1, 3, "rwm" },   /* null */
	{ true, 'c', 1, 5, "rwm" },   /* zero */
	{ true, 'c', 1, 7, "rwm" },   /* full */
	{ true, 'c', 1, 8, "rwm" },   /* random */
	{ true, 'c', 1, 9, "rwm" },   /* urandom */
	{ true, 'c', 5, 0, "rwm" },   /* tty */
	{ true, 'c', 5, 2, "rwm" },   /* pts/ptmx */
	{ true, 'c', 136, -1, "rwm" } /* the ptys, pts/N */
};

static bool denied_by_name(const struct cordon_device_rule *rules, size_t n,
			   const struct cordon_device_rule *dev)
{
	for (size_t i = 0; i < n; i++)
		if (!rules[i].allow && rules[i].type == dev->type && rules[i].major == dev->major &&
		    rules[i].minor == dev->minor)
			return true;
	return false;
}

struct cordon_device_rule *cordon_device_rules_container(const struct cordon_device_rule *rules,
							  size_t n, size_t *n_out)
{
	struct cordon_device_rule *out =
		cordon_xcalloc(n + ARRAY_SIZE(sandbox_devices), sizeof(*out));
	size_t k = n;

	if (n)
		memcpy(out, rules, n * sizeof(*out));
	for (size_t i = 0; i < ARRAY_SIZE(sandbox_devices); i++)
		if (!denied_by_name(rules, n, &sandbox_devices[i]))
			out[k++] = sandbox_devices[i];
	*n_out = k;
	return out;
}
