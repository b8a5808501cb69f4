// SPDX-License-Identifier: Apache-2.0
/*
 * An OCI runtime-spec config.json → struct cordon_spec: the top level,
 * root, hooks and annotations here; process, mounts and linux in their
 * own files. Nothing here touches the host (the bundle's config.json is
 * the one file read); cordon_spec_finalize checks paths afterwards, so
 * `cordon run` and `cordon create --bundle` share the same validation.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "oci-internal.h"

const char *const oci_hook_names[CORDON_OCI_HOOK_COUNT] = {
	[CORDON_OCI_HOOK_PRESTART] = "prestart",
	[CORDON_OCI_HOOK_CREATE_RUNTIME] = "createRuntime",
	[CORDON_OCI_HOOK_CREATE_CONTAINER] = "createContainer",
	[CORDON_OCI_HOOK_START_CONTAINER] = "startContainer",
	[CORDON_OCI_HOOK_POSTSTART] = "poststart",
	[CORDON_OCI_HOOK_POSTSTOP] = "poststop",
};

const char *cordon_oci_hook_name(enum cordon_oci_hook_kind kind)
{
	return (unsigned)kind < CORDON_OCI_HOOK_COUNT ? oci_hook_names[kind] : "?";
}

static void mount_free(struct cordon_oci_mount *m)
{
	free(m->destination);
	free(m->type);
	free(m->source);
	cordon_strv_free(m->options);
	free(m->data);
	free(m->uid_map);
	free(m->gid_map);
}

void cordon_oci_free(struct cordon_oci *oci)
{
	if (!oci)
		return;
	free(oci->bundle);
	free(oci->config_text);
	free(oci->oci_version);
	free(oci->additional_gids);
	free(oci->apparmor_profile);
	free(oci->selinux_label);
	free(oci->domainname);
	for (size_t i = 0; i < oci->n_mounts; i++)
		mount_free(&oci->mounts[i]);
	free(oci->mounts);
	for (size_t k = 0; k < CORDON_OCI_HOOK_COUNT; k++) {
		for (size_t i = 0; i < oci->n_hooks[k]; i++) {
			free(oci->hooks[k][i].path);
			cordon_strv_free(oci->hooks[k][i].args);
			cordon_strv_free(oci->hooks[k][i].env);
		}
		free(oci->hooks[k]);
	}
	cordon_strv_free(oci->annotations);
	for (size_t i = 0; i < CORDON_OCI_NS_COUNT; i++)
		free(oci->ns_path[i]);
	free(oci->uid_map);
	free(oci->gid_map);
	for (size_t i = 0; i < oci->n_devices; i++)
		free(oci->devices[i].path);
	free(oci->devices);
	cordon_resources_free(&oci->resources);
	free(oci->cgroups_path);
	cordon_strv_free(oci->masked_paths);
	cordon_strv_free(oci->readonly_paths);
	cordon_strv_free(oci->sysctl);
	free(oci->mount_label);
	cordon_strv_free(oci->warnings);
	free(oci);
}

/* "1.0.0" to "1.2.x", with an optional "-suffix" ("1.0.2-dev"). */
static int parse_version(struct oci_parse *p, yajl_val v)
{
	const char *s, *q;
	unsigned long part[3];
	char *end;

	if (!v)
		return oci_error(p->err, "ociVersion: required");
	if (oci_string_ref(v, "ociVersion", &s, p->err) < 0)
		return -1;
	q = s;
	for (int i = 0; i < 3; i++) {
		if (*q < '0' || *q > '9')
			return oci_error(p->err, "ociVersion: '%s' is not MAJOR.MINOR.PATCH", s);
		part[i] = strtoul(q, &end, 10);
		q = end;
		if (i < 2 && *q++ != '.')
			return oci_error(p->err, "ociVersion: '%s' is not MAJOR.MINOR.PATCH", s);
	}
	if (*q && *q != '-' && *q != '+')
		return oci_error(p->err, "ociVersion: '%s' is not MAJOR.MINOR.PATCH", s);
	if (part[0] != 1 || part[1] > 2)
		return oci_error(p->err, "ociVersion: %s is not supported (1.0.0 to 1.2.x)", s);
	p->oci->oci_version = cordon_xstrdup(s);
	return 0;
}

static int parse_root(struct oci_parse *p, yajl_val root)
{
	yajl_val v;
	const char *path;

	if (!root)
		return oci_error(p->err, "root: required");
	if (oci_want_object(root, "root", p->err) < 0)
		return -1;
	v = oci_get(root, "path");
	if (!v)
		return oci_error(p->err, "root.path: required");
	if (oci_string_ref(v, "root.path", &path, p->err) < 0)
		return -1;
	if (!*path)
		return oci_error(p->err, "root.path: empty");
	/* A relative root is relative to the bundle (runtime-spec, "Root"). */
	free(p->spec->rootfs);
	p->spec->rootfs =
		path[0] == '/' ? cordon_xstrdup(path) : cordon_xasprintf("%s/%s", p->bundle, path);
	v = oci_get(root, "readonly");
	if (v && oci_bool(v, "root.readonly", &p->oci->root_readonly, p->err) < 0)
		return -1;
	return 0;
}

/* The kernel's limit for a host or domain name (__NEW_UTS_LEN). */
static int parse_uts_name(yajl_val v, const char *path, char **out, struct cordon_error *err)
{
	if (!v)
		return 0;
	if (oci_string(v, path, out, err) < 0)
		return -1;
	if (strlen(*out) > 64)
		return oci_error(err, "%s: longer than 64 bytes", path);
	if (!**out)
		free(TAKE_PTR(*out)); /* "" means: leave it alone */
	return 0;
}

static int parse_hook(yajl_val h, const char *path, struct cordon_oci_hook *hook,
		      struct cordon_error *err)
{
	char f[OCI_PATH_MAX];
	yajl_val v;
	const char *s;

	if (oci_want_object(h, path, err) < 0)
		return -1;
	oci_path(f, "%s.path", path);
	v = oci_get(h, "path");
	if (!v)
		return oci_error(err, "%s: required", f);
	if (oci_string_ref(v, f, &s, err) < 0)
		return -1;
	if (s[0] != '/')
		return oci_error(err, "%s: must be absolute, got '%s'", f, s);
	hook->path = cordon_xstrdup(s);
	oci_path(f, "%s.args", path);
	if ((v = oci_get(h, "args")) && oci_strv(v, f, &hook->args, NULL, err) < 0)
		return -1;
	oci_path(f, "%s.env", path);
	if ((v = oci_get(h, "env")) && oci_strv(v, f, &hook->env, NULL, err) < 0)
		return -1;
	for (size_t i = 0; hook->env && hook->env[i]; i++) {
		const char *eq = strchr(hook->env[i], '=');

		if (!eq || eq == hook->env[i])
			return oci_error(err, "%s[%zu]: expected NAME=VALUE, got '%s'", f, i,
					 hook->env[i]);
	}
	oci_path(f, "%s.timeout", path);
	if ((v = oci_get(h, "timeout"))) {
		if (oci_u32(v, f, INT32_MAX, &hook->timeout_s, err) < 0)
			return -1;
		if (hook->timeout_s == 0)
			return oci_error(err, "%s: must be greater than zero", f);
	}
	return 0;
}

static int parse_hooks(struct oci_parse *p, yajl_val hooks)
{
	if (!hooks)
		return 0;
	if (oci_want_object(hooks, "hooks", p->err) < 0)
		return -1;
	for (size_t k = 0; k < CORDON_OCI_HOOK_COUNT; k++) {
		yajl_val list = oci_get(hooks, oci_hook_names[k]);
		char path[OCI_PATH_MAX];

		if (!list)
			continue;
		oci_path(path, "hooks.%s", oci_hook_names[k]);
		if (oci_want_array(list, path, p->err) < 0)
			return -1;
		p->oci->hooks[k] = cordon_xcalloc(list->u.array.len + 1, sizeof(**p->oci->hooks));
		for (size_t i = 0; i < list->u.array.len; i++) {
			char hp[OCI_PATH_MAX];

			oci_path(hp, "%s[%zu]", path, i);
			p->oci->n_hooks[k]++; /* counted first: freed with the rest on error */
			if (parse_hook(list->u.array.values[i], hp, &p->oci->hooks[k][i], p->err) <
			    0)
				return -1;
		}
	}
	return 0;
}

/* Relations between fields the spec makes errors, checked once all are read. */
static int check_cross(struct oci_parse *p)
{
	struct cordon_oci *oci = p->oci;

	if (p->spec->hostname && !oci->ns_listed[CORDON_OCI_NS_UTS])
		return oci_error(p->err, "hostname: needs a uts namespace in linux.namespaces");
	if (oci->domainname && !oci->ns_listed[CORDON_OCI_NS_UTS])
		return oci_error(p->err, "domainname: needs a uts namespace in linux.namespaces");
	/*
	 * The host name has a field of its own, which cordon always sets
	 * (finalize names an unnamed container "cordon"): the sysctl would
	 * silently fight it. The domain name's field may be absent; set to
	 * another value, the two conflict. runc and crun refuse both.
	 */
	for (size_t i = 0; i < oci->n_sysctl; i++) {
		const char *key = oci->sysctl[2 * i], *value = oci->sysctl[2 * i + 1];

		if (strcmp(key, "kernel.hostname") == 0)
			return oci_error(p->err,
					 "linux.sysctl.kernel.hostname: refused: it conflicts with "
					 "the config's hostname field (set that instead)");
		if (strcmp(key, "kernel.domainname") == 0 && oci->domainname && *oci->domainname &&
		    strcmp(oci->domainname, value) != 0)
			return oci_error(p->err,
					 "linux.sysctl.kernel.domainname: '%s' conflicts with the "
					 "config's domainname '%s'",
					 value, oci->domainname);
	}
	if ((oci->n_uid_map || oci->n_gid_map) && !oci->ns_listed[CORDON_OCI_NS_USER])
		return oci_error(p->err,
				 "linux.uidMappings: needs a user namespace in linux.namespaces");
	if (oci->n_uid_map && !oci->n_gid_map)
		return oci_error(p->err, "linux.gidMappings: required with linux.uidMappings");
	if (oci->n_gid_map && !oci->n_uid_map)
		return oci_error(p->err, "linux.uidMappings: required with linux.gidMappings");
	/* Last, so that the other cross checks name what they find first (oci-linux.c says why). */
	if (!oci->ns_listed[CORDON_OCI_NS_PID])
		return oci_error(p->err,
				 "linux.namespaces: no 'pid' entry: sharing the runtime's pid namespace "
				 "is not supported (cordon's init is pid 1 of a namespace of its own)");
	return 0;
}

/*
 * Clear what a config.json sets, so that parsing into a spec that already
 * holds one (a retry) replaces it: nothing of the first may survive, least
 * of all its seccomp filter. What the caller chose (the id) stays.
 */
static void reset_config_fields(struct cordon_spec *spec)
{
	cordon_strv_free(TAKE_PTR(spec->argv));
	cordon_strv_free(TAKE_PTR(spec->env));
	spec->n_env = 0;
	free(TAKE_PTR(spec->cwd));
	free(TAKE_PTR(spec->hostname));
	free(TAKE_PTR(spec->rootfs));
	spec->uid = 0;
	spec->gid = 0;
	spec->security.caps = 0;
	spec->security.config_sets = false;
	spec->security.effective = spec->security.permitted = 0;
	spec->security.inheritable = spec->security.ambient = 0;
	spec->security.new_privs_allowed = false;
	cordon_rlimits_default(&spec->security.rlimits);
	cordon_seccomp_profile_free(&spec->security);
	spec->security.seccomp = CORDON_SECCOMP_DEFAULT;
	memset(&spec->limits, 0, sizeof(spec->limits));
	cordon_user_limits_init(&spec->user_limits);
	/* The network annotations' share of spec->net. */
	cordon_strv_free(TAKE_PTR(spec->net.allow));
	spec->net.n_allow = 0;
	cordon_strv_free(TAKE_PTR(spec->net.upstream_text));
	spec->net.n_upstream_text = 0;
	spec->net.dns_none = spec->net.dns_given = false;
	cordon_oci_free(TAKE_PTR(spec->oci));
}

/*
 * A JSON document that must be one object: bounded in size and depth,
 * without NUL bytes, parsed by yajl. `what` names it in every message
 * ("config.json"), or is NULL for a process document, whose caller names
 * the file.
 */
static int parse_object(const char *json, size_t len, const char *what, yajl_val *out,
			struct cordon_error *err)
{
	yajl_val tree = NULL;
	int r;

	if (len > CORDON_OCI_CONFIG_MAX)
		r = oci_error(err, "larger than %u bytes", CORDON_OCI_CONFIG_MAX);
	else
		r = cordon_json_parse(json, len, CORDON_E_SPEC, &tree, err);
	if (r == 0 && !YAJL_IS_OBJECT(tree)) {
		yajl_tree_free(TAKE_PTR(tree));
		r = oci_error(err, "expected object");
	}
	if (r < 0)
		return what ? cordon_error_wrap(err, "%s", what) : -1;
	*out = tree;
	return 0;
}

/*
 * run.cordon.no-new-privileges: "true" sets no_new_privs whatever
 * process.noNewPrivileges says (for the container's process and every
 * exec'd one, since exec reads the annotations of the config kept at
 * create); "false" leaves it to the process.
 */
static int parse_nnp_annotation(struct oci_parse *p)
{
	const char *v = oci_annotation(p->oci, "run.cordon.no-new-privileges");

	if (!v || strcmp(v, "false") == 0)
		return 0;
	if (strcmp(v, "true") != 0)
		return oci_error(p->err,
				 "annotations.run.cordon.no-new-privileges: expected 'true' or "
				 "'false', got '%s'",
				 v);
	p->spec->security.new_privs_allowed = false;
	return 0;
}

int cordon_spec_from_oci(struct cordon_spec *spec, const char *bundle_dir, const char *json,
			 size_t len, struct cordon_error *err)
{
	struct oci_parse p = { .spec = spec, .bundle = bundle_dir, .err = err };
	yajl_val tree, linux_obj;
	int r;

	if (!bundle_dir || !*bundle_dir)
		return oci_error(err, "bundle: empty path");
	if (parse_object(json, len, "config.json", &tree, err) < 0)
		return -1;
	reset_config_fields(spec);
	spec->oci = p.oci = cordon_xcalloc(1, sizeof(*p.oci));
	p.oci->bundle = cordon_xstrdup(bundle_dir);
	/* Kept for the container's state: `cordon exec` confines by the config of create. */
	p.oci->config_text = cordon_xmalloc(len + 1);
	memcpy(p.oci->config_text, json, len);
	p.oci->config_text[len] = '\0';
	p.oci->config_len = len;
	/* OCI workloads get exactly the config's environment and user. */
	spec->no_workspace = true;

	linux_obj = oci_get(tree, "linux");
	r = parse_version(&p, oci_get(tree, "ociVersion"));
	if (r == 0)
		r = parse_root(&p, oci_get(tree, "root"));
	if (r == 0)
		r = oci_parse_process(&p, oci_get(tree, "process"));
	if (r == 0)
		r = parse_uts_name(oci_get(tree, "hostname"), "hostname", &spec->hostname, err);
	if (r == 0)
		r = parse_uts_name(oci_get(tree, "domainname"), "domainname", &p.oci->domainname,
				   err);
	if (r == 0)
		r = oci_parse_mounts(&p, oci_get(tree, "mounts"));
	if (r == 0)
		r = parse_hooks(&p, oci_get(tree, "hooks"));
	if (r == 0 && oci_get(tree, "annotations"))
		r = oci_string_map(oci_get(tree, "annotations"), "annotations", &p.oci->annotations,
				   &p.oci->n_annotations, err);
	if (r == 0 && !linux_obj)
		r = oci_error(err, "linux: required (cordon runs Linux containers only)");
	if (r == 0)
		r = oci_parse_linux(&p, linux_obj);
	if (r == 0)
		r = check_cross(&p);
	if (r == 0)
		r = oci_parse_net_annotations(&p);
	if (r == 0)
		r = parse_nnp_annotation(&p);
	yajl_tree_free(tree);
	return r;
}

/* Everything "process" sets, so that a process JSON replaces it whole. */
static void reset_process_fields(struct cordon_spec *spec)
{
	struct cordon_oci *oci = spec->oci;

	cordon_strv_free(TAKE_PTR(spec->argv));
	cordon_strv_free(TAKE_PTR(spec->env));
	spec->n_env = 0;
	free(TAKE_PTR(spec->cwd));
	spec->uid = 0;
	spec->gid = 0;
	spec->security.caps = 0;
	spec->security.config_sets = false;
	spec->security.effective = spec->security.permitted = 0;
	spec->security.inheritable = spec->security.ambient = 0;
	spec->security.new_privs_allowed = false;
	cordon_rlimits_default(&spec->security.rlimits);
	oci->terminal = false;
	oci->has_console_size = false;
	oci->console_height = oci->console_width = 0;
	free(TAKE_PTR(oci->additional_gids));
	oci->n_additional_gids = 0;
	oci->has_umask = false;
	memset(&oci->caps, 0, sizeof(oci->caps));
	oci->no_new_privileges = false;
	oci->has_oom_score_adj = false;
	free(TAKE_PTR(oci->apparmor_profile));
	free(TAKE_PTR(oci->selinux_label));
}

int cordon_spec_process_from_json(struct cordon_spec *spec, const char *json, size_t len,
				  struct cordon_error *err)
{
	struct oci_parse p = { .spec = spec, .oci = spec->oci, .err = err };
	yajl_val tree;
	int r;

	if (!spec->oci)
		return oci_error(err, "process: no container config to apply it to");
	p.bundle = spec->oci->bundle;
	if (parse_object(json, len, NULL, &tree, err) < 0)
		return -1;
	reset_process_fields(spec);
	r = oci_parse_process(&p, tree);
	if (r == 0)
		r = parse_nnp_annotation(&p);
	yajl_tree_free(tree);
	return r;
}

int cordon_spec_from_bundle(struct cordon_spec *spec, const char *bundle_dir,
			    struct cordon_error *err)
{
	_cleanup_close_ int dir = -1;
	_cleanup_free_ char *text = NULL, *what = NULL;
	size_t len = 0;

	/* The unsafe-transition rule of host paths (docs/security.md) for the bundle too. */
	dir = cordon_path_open(bundle_dir, "bundle", CORDON_E_SPEC, err);
	if (dir < 0)
		return -1;
	/*
	 * Walked from the bundle's fd by the same rule (another user's
	 * symlink at config.json is refused, not followed), looked at before
	 * it is opened: not a fifo or a device, which a reader must never
	 * open.
	 */
	what = cordon_xasprintf("bundle %s: config.json", bundle_dir);
	if (cordon_input_read_path_at(dir, "config.json", CORDON_OCI_CONFIG_MAX, CORDON_E_SPEC,
				      what, &text, &len, err) < 0)
		return -1;
	if (cordon_spec_from_oci(spec, bundle_dir, text, len, err) < 0)
		return cordon_error_wrap(err, "bundle %s", bundle_dir);
	return 0;
}
