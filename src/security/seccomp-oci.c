// SPDX-License-Identifier: Apache-2.0
/*
 * --seccomp-profile FILE: an OCI runtime-spec seccomp object (the
 * `linux.seccomp` of config.json) compiled with libseccomp when the spec
 * is validated, so a bad profile fails before anything is created and the
 * sandbox's start-up only installs ready cBPF.
 *
 * libseccomp is loaded (dlopen) only here, when a profile is given: the
 * default profile is compiled at build time, and a shared library linked
 * into cordon would cost every start its mapping and relocations. It is
 * opened by its absolute path, fixed at build time (config.h), as the
 * netlink libraries are (src/net/netlib.c): no search path chooses it.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <string.h>
#include <sys/mman.h>
#include <yajl/yajl_tree.h>

#include "config.h"
#include "cordon/security.h"

struct owned_filter {
	struct cordon_bpf bpf;
	struct sock_filter *insns;
};

static const struct {
	const char *name;
	uint32_t arch;
} arches[] = {
	{ "SCMP_ARCH_X86_64", SCMP_ARCH_X86_64 }, { "SCMP_ARCH_X86", SCMP_ARCH_X86 },
	{ "SCMP_ARCH_X32", SCMP_ARCH_X32 },	  { "SCMP_ARCH_AARCH64", SCMP_ARCH_AARCH64 },
	{ "SCMP_ARCH_ARM", SCMP_ARCH_ARM },
};

static const struct {
	const char *name;
	enum scmp_compare op;
} ops[] = {
	{ "SCMP_CMP_NE", SCMP_CMP_NE },
	{ "SCMP_CMP_LT", SCMP_CMP_LT },
	{ "SCMP_CMP_LE", SCMP_CMP_LE },
	{ "SCMP_CMP_EQ", SCMP_CMP_EQ },
	{ "SCMP_CMP_GE", SCMP_CMP_GE },
	{ "SCMP_CMP_GT", SCMP_CMP_GT },
	{ "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

/* The action names parse_action accepts, for the features document. */
static const char *const actions[] = {
	"SCMP_ACT_ALLOW",	 "SCMP_ACT_ERRNO", "SCMP_ACT_KILL", "SCMP_ACT_KILL_THREAD",
	"SCMP_ACT_KILL_PROCESS", "SCMP_ACT_TRAP",  "SCMP_ACT_LOG",  "SCMP_ACT_TRACE",
};

/*
 * seccomp(2) filter flags an OCI profile may name. None changes what the
 * filter allows: TSYNC is moot (the workload is single-threaded when the
 * filter goes in), LOG only adds audit records, SPEC_ALLOW would turn off
 * the speculative store bypass mitigation, and WAIT_KILLABLE_RECV only
 * matters with a notifier. cordon accepts them and applies none.
 */
static const char *const known_flags[] = {
	"SECCOMP_FILTER_FLAG_TSYNC",
	"SECCOMP_FILTER_FLAG_LOG",
	"SECCOMP_FILTER_FLAG_SPEC_ALLOW",
	"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
};

/* The libseccomp functions this file calls, typed from its header. */
static struct {
	typeof(seccomp_init) *seccomp_init;
	typeof(seccomp_release) *seccomp_release;
	typeof(seccomp_arch_add) *seccomp_arch_add;
	typeof(seccomp_arch_native) *seccomp_arch_native;
	typeof(seccomp_rule_add_array) *seccomp_rule_add_array;
	typeof(seccomp_syscall_resolve_name) *seccomp_syscall_resolve_name;
	typeof(seccomp_export_bpf) *seccomp_export_bpf;
} scmp;

static int libseccomp_load(struct cordon_error *err)
{
	static void *handle;
	void *h;

	if (handle)
		return 0;
	h = dlopen(CORDON_LIBSECCOMP_PATH, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return cordon_error_set(err, CORDON_E_SECURITY, 0,
					"seccomp profiles need libseccomp.so.2: %s", dlerror());
#define LOAD(name)                                                                           \
	if (!(*(void **)&scmp.name = dlsym(h, #name))) {                                     \
		dlclose(h);                                                                  \
		return cordon_error_set(err, CORDON_E_SECURITY, 0, "libseccomp.so.2: no %s", \
					#name);                                              \
	}
	LOAD(seccomp_init)
	LOAD(seccomp_release)
	LOAD(seccomp_arch_add)
	LOAD(seccomp_arch_native)
	LOAD(seccomp_rule_add_array)
	LOAD(seccomp_syscall_resolve_name)
	LOAD(seccomp_export_bpf)
#undef LOAD
	handle = h;
	return 0;
}

static yajl_val field(yajl_val obj, const char *key)
{
	const char *path[] = { key, NULL };

	return obj ? yajl_tree_get(obj, path, yajl_t_any) : NULL;
}

static int want_uint(yajl_val v, const char *where, uint64_t *out, struct cordon_error *err)
{
	if (!v || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0) {
		/* large masks do not fit a long long: accept them as doubles too */
		if (v && YAJL_IS_NUMBER(v) && !YAJL_IS_INTEGER(v)) {
			double d = YAJL_GET_DOUBLE(v);

			if (d >= 0 && d <= 18446744073709551615.0) {
				*out = (uint64_t)d;
				return 0;
			}
		}
		return cordon_error_set(err, CORDON_E_SPEC, 0, "%s: expected unsigned integer",
					where);
	}
	*out = (uint64_t)YAJL_GET_INTEGER(v);
	return 0;
}

static int parse_action(yajl_val obj, const char *key, const char *errno_key, uint32_t dflt_errno,
			const char *where, uint32_t *out, struct cordon_error *err)
{
	yajl_val v = field(obj, key), e = field(obj, errno_key);
	const char *s = v && YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
	uint64_t errnum = dflt_errno;

	const char *dot = *where ? "." : "";

	if (!s)
		return cordon_error_set(err, CORDON_E_SPEC, 0, "%s%s%s: expected string", where,
					dot, key);
	char name[160];

	snprintf(name, sizeof(name), "%s%s%s", where, dot, errno_key);
	if (e && want_uint(e, name, &errnum, err) < 0)
		return -1;
	if (errnum > 4095)
		return cordon_error_set(err, CORDON_E_SPEC, 0,
					"%s%s%s: %" PRIu64 " is not an errno", where, dot,
					errno_key, errnum);
	if (strcmp(s, "SCMP_ACT_ALLOW") == 0)
		*out = SCMP_ACT_ALLOW;
	else if (strcmp(s, "SCMP_ACT_ERRNO") == 0)
		*out = SCMP_ACT_ERRNO((uint32_t)errnum);
	else if (strcmp(s, "SCMP_ACT_KILL") == 0 || strcmp(s, "SCMP_ACT_KILL_THREAD") == 0)
		*out = SCMP_ACT_KILL_THREAD;
	else if (strcmp(s, "SCMP_ACT_KILL_PROCESS") == 0)
		*out = SCMP_ACT_KILL_PROCESS;
	else if (strcmp(s, "SCMP_ACT_TRAP") == 0)
		*out = SCMP_ACT_TRAP;
	else if (strcmp(s, "SCMP_ACT_LOG") == 0)
		*out = SCMP_ACT_LOG;
	else if (strcmp(s, "SCMP_ACT_TRACE") == 0)
		*out = SCMP_ACT_TRACE((uint32_t)errnum);
	else
		return cordon_error_set(err, CORDON_E_SPEC, 0, "%s%s%s: unsupported action '%s'",
					where, dot, key, s);
	return 0;
}

static int parse_args(yajl_val args, const char *where, struct scmp_arg_cmp *cmps, unsigned *n,
		      struct cordon_error *err)
{
	*n = 0;
	if (!args)
		return 0;
	if (!YAJL_IS_ARRAY(args))
		return cordon_error_set(err, CORDON_E_SPEC, 0, "%s.args: expected array", where);
	if (args->u.array.len > 6)
		return cordon_error_set(err, CORDON_E_SPEC, 0, "%s.args: at most 6", where);
	for (size_t i = 0; i < args->u.array.len; i++) {
		yajl_val a = args->u.array.values[i], op = field(a, "op");
		uint64_t index, value, two = 0;
		char w[128];
		size_t k;

		char wi[160], wv[160], wt[160];

		snprintf(w, sizeof(w), "%s.args[%zu]", where, i);
		snprintf(wi, sizeof(wi), "%s.index", w);
		snprintf(wv, sizeof(wv), "%s.value", w);
		snprintf(wt, sizeof(wt), "%s.valueTwo", w);
		if (!a || !YAJL_IS_OBJECT(a))
			return cordon_error_set(err, CORDON_E_SPEC, 0, "%s: expected object", w);
		if (want_uint(field(a, "index"), wi, &index, err) < 0 ||
		    want_uint(field(a, "value"), wv, &value, err) < 0 ||
		    (field(a, "valueTwo") && want_uint(field(a, "valueTwo"), wt, &two, err) < 0))
			return -1;
		if (index > 5)
			return cordon_error_set(err, CORDON_E_SPEC, 0, "%s: 0-5", wi);
		const char *ops_name = op && YAJL_IS_STRING(op) ? YAJL_GET_STRING(op) : NULL;

		if (!ops_name)
			return cordon_error_set(err, CORDON_E_SPEC, 0, "%s.op: expected string", w);
		for (k = 0; k < ARRAY_SIZE(ops); k++)
			if (strcmp(ops[k].name, ops_name) == 0)
				break;
		if (k == ARRAY_SIZE(ops))
			return cordon_error_set(err, CORDON_E_SPEC, 0, "%s.op: unknown '%s'", w,
						ops_name);
		/* For MASKED_EQ the OCI "value" is the mask and "valueTwo" the datum. */
		cmps[(*n)++] = (struct scmp_arg_cmp){ (unsigned)index, ops[k].op, value, two };
	}
	return 0;
}

static int check_flags(yajl_val flags, struct cordon_error *err)
{
	if (!flags)
		return 0;
	if (!YAJL_IS_ARRAY(flags))
		return cordon_error_set(err, CORDON_E_SPEC, 0, "flags: expected array");
	for (size_t i = 0; i < flags->u.array.len; i++) {
		yajl_val f = flags->u.array.values[i];
		const char *name = f && YAJL_IS_STRING(f) ? f->u.string : NULL;
		size_t k;

		if (!name)
			return cordon_error_set(err, CORDON_E_SPEC, 0,
						"flags[%zu]: expected string", i);
		for (k = 0; k < ARRAY_SIZE(known_flags); k++)
			if (strcmp(known_flags[k], name) == 0)
				break;
		if (k == ARRAY_SIZE(known_flags))
			return cordon_error_set(err, CORDON_E_SPEC, 0,
						"flags[%zu]: unknown flag '%s'", i, name);
	}
	return 0;
}

static int add_rules(scmp_filter_ctx ctx, yajl_val syscalls, struct cordon_error *err)
{
	if (!syscalls)
		return 0;
	if (!YAJL_IS_ARRAY(syscalls))
		return cordon_error_set(err, CORDON_E_SPEC, 0, "syscalls: expected array");
	for (size_t i = 0; i < syscalls->u.array.len; i++) {
		yajl_val sc = syscalls->u.array.values[i], names = field(sc, "names");
		struct scmp_arg_cmp cmps[6];
		uint32_t action;
		unsigned n;
		char w[64];

		snprintf(w, sizeof(w), "syscalls[%zu]", i);
		if (!sc || !YAJL_IS_OBJECT(sc))
			return cordon_error_set(err, CORDON_E_SPEC, 0, "%s: expected object", w);
		if (!names || !YAJL_IS_ARRAY(names))
			return cordon_error_set(err, CORDON_E_SPEC, 0, "%s.names: expected array",
						w);
		if (parse_action(sc, "action", "errnoRet", EPERM, w, &action, err) < 0 ||
		    parse_args(field(sc, "args"), w, cmps, &n, err) < 0)
			return -1;
		for (size_t j = 0; j < names->u.array.len; j++) {
			yajl_val nm = names->u.array.values[j];
			int nr, r;

			if (!YAJL_IS_STRING(nm))
				return cordon_error_set(err, CORDON_E_SPEC, 0,
							"%s.names[%zu]: expected string", w, j);
			nr = scmp.seccomp_syscall_resolve_name(YAJL_GET_STRING(nm));
			if (nr == __NR_SCMP_ERROR)
				continue; /* unknown here: as runc does, skip it */
			r = scmp.seccomp_rule_add_array(ctx, action, nr, n, cmps);
			/* -EEXIST: a duplicate; -EACCES: action equals the default. */
			if (r < 0 && r != -EEXIST && r != -EACCES)
				return cordon_error_set(err, CORDON_E_SPEC, -r, "%s: rule for %s",
							w, YAJL_GET_STRING(nm));
		}
	}
	return 0;
}

static int export_filter(scmp_filter_ctx ctx, struct cordon_security *sec, struct cordon_error *err)
{
	_cleanup_close_ int fd = memfd_create("cordon-seccomp", MFD_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	size_t len;
	char path[CORDON_FD_PATH_MAX];
	int r;

	if (fd < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, errno, "memfd_create");
	r = scmp.seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return cordon_error_set(err, CORDON_E_SECURITY, -r,
					"compiling the seccomp profile");
	r = cordon_read_file_at(AT_FDCWD, cordon_fd_path(fd, path), &buf, &len);
	if (r < 0 || len == 0 || len % sizeof(struct sock_filter) || len / 8 > BPF_MAXINSNS)
		return cordon_error_set(err, CORDON_E_SECURITY, r < 0 ? -r : E2BIG,
					"seccomp profile: compiled program unusable");
	cordon_seccomp_adopt(sec, TAKE_PTR(buf), len / sizeof(struct sock_filter));
	return 0;
}

void cordon_seccomp_adopt(struct cordon_security *sec, void *insns, size_t len)
{
	struct owned_filter *of = cordon_xcalloc(1, sizeof(*of));

	cordon_seccomp_profile_free(sec);
	of->insns = insns;
	of->bpf.insns = of->insns;
	of->bpf.len = len;
	sec->owned = of;
	sec->filters = &of->bpf;
	sec->n_filters = 1;
}

void cordon_seccomp_profile_free(struct cordon_security *sec)
{
	struct owned_filter *of = sec->owned;

	if (!of)
		return;
	free(of->insns);
	free(of);
	sec->owned = NULL;
	sec->filters = NULL;
	sec->n_filters = 0;
}

/*
 * Compile an already parsed profile object. Messages name the field
 * relative to the profile ("syscalls[2].action: ..."); callers add where
 * the profile came from (a file, or linux.seccomp of a config.json).
 */
int cordon_seccomp_oci_compile(const struct yajl_val_s *profile, struct cordon_security *sec,
			       struct cordon_error *err)
{
	yajl_val tree = (yajl_val)profile, archs, v;
	scmp_filter_ctx ctx = NULL;
	uint32_t dflt;
	int r;

	if (!tree || !YAJL_IS_OBJECT(tree))
		return cordon_error_set(err, CORDON_E_SPEC, 0, "expected a JSON object");
	if (libseccomp_load(err) < 0)
		return -1;
	/* A user-space notifier needs an agent cordon does not have. */
	v = field(tree, "listenerPath");
	if (v && !(YAJL_IS_STRING(v) && !*YAJL_GET_STRING(v)))
		return cordon_error_set(err, CORDON_E_SPEC, 0,
					"listenerPath: seccomp user notification is not supported");
	r = check_flags(field(tree, "flags"), err);
	if (r == 0)
		r = parse_action(tree, "defaultAction", "defaultErrnoRet", EPERM, "", &dflt, err);
	if (r == 0) {
		ctx = scmp.seccomp_init(dflt);
		if (!ctx)
			r = cordon_error_set(err, CORDON_E_SPEC, 0, "defaultAction rejected");
	}
	archs = field(tree, "architectures");
	if (r == 0 && archs && !YAJL_IS_ARRAY(archs))
		r = cordon_error_set(err, CORDON_E_SPEC, 0, "architectures: expected array");
	if (r == 0 && archs) {
		for (size_t i = 0; i < archs->u.array.len && r == 0; i++) {
			yajl_val a = archs->u.array.values[i];
			const char *name = YAJL_IS_STRING(a) ? YAJL_GET_STRING(a) : NULL;
			size_t k;

			for (k = 0; name && k < ARRAY_SIZE(arches); k++)
				if (strcmp(arches[k].name, name) == 0)
					break;
			if (!name)
				k = ARRAY_SIZE(arches);
			if (k == ARRAY_SIZE(arches)) {
				r = cordon_error_set(err, CORDON_E_SPEC, 0,
						     "architectures[%zu]: unknown", i);
				break;
			}
			if (arches[k].arch != scmp.seccomp_arch_native()) {
				int e = scmp.seccomp_arch_add(ctx, arches[k].arch);

				if (e < 0 && e != -EEXIST)
					r = cordon_error_set(err, CORDON_E_SPEC, -e,
							     "architecture %s", arches[k].name);
			}
		}
	}
	if (r == 0)
		r = add_rules(ctx, field(tree, "syscalls"), err);
	if (r == 0)
		r = export_filter(ctx, sec, err);
	if (ctx)
		scmp.seccomp_release(ctx);
	return r;
}

int cordon_seccomp_profile_load(const char *path, struct cordon_security *sec,
				struct cordon_error *err)
{
	_cleanup_free_ char *text = NULL, *what = cordon_xasprintf("--seccomp-profile %s", path);
	yajl_val tree = NULL;
	size_t len;
	int r;

	r = cordon_input_read_path(path, CORDON_INPUT_JSON_MAX, CORDON_E_SPEC, what, &text, &len,
				   err);
	if (r < 0)
		return -1;
	if (libseccomp_load(err) < 0)
		return cordon_error_wrap(err, "%s", what);
	r = cordon_json_parse(text, len, CORDON_E_SPEC, &tree, err);
	if (r == 0 && !YAJL_IS_OBJECT(tree))
		r = cordon_error_set(err, CORDON_E_SPEC, 0, "expected a JSON object");
	if (r == 0)
		r = cordon_seccomp_oci_compile(tree, sec, err);
	/* Every message names the file, whichever step refused it. */
	if (r < 0)
		cordon_error_wrap(err, "%s", what);
	yajl_tree_free(tree);
	return r;
}

const char *cordon_seccomp_oci_name(enum cordon_seccomp_oci_kind kind, size_t i)
{
	switch (kind) {
	case CORDON_SECCOMP_OCI_ACTION:
		return i < ARRAY_SIZE(actions) ? actions[i] : NULL;
	case CORDON_SECCOMP_OCI_OPERATOR:
		return i < ARRAY_SIZE(ops) ? ops[i].name : NULL;
	case CORDON_SECCOMP_OCI_ARCH:
		return i < ARRAY_SIZE(arches) ? arches[i].name : NULL;
	case CORDON_SECCOMP_OCI_FLAG:
		return i < ARRAY_SIZE(known_flags) ? known_flags[i] : NULL;
	}
	return NULL;
}
