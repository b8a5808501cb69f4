// SPDX-License-Identifier: Apache-2.0
/* `cordon doctor [--json]`: can this host give the confinement cordon promises? */
#include <string.h>
#include <yajl/yajl_gen.h>

#include "cli.h"
#include "cordon/sandbox.h"

enum { F_JSON = 1, F_HELP };

static const struct cli_flag flags[] = {
	{ "json", F_JSON, false, 0 },
	{ "help", F_HELP, false, 'h' },
	{ NULL, 0, false, 0 },
};

struct args {
	bool json, help;
};

static int apply(void *ctx, int id, const char *value, struct cordon_error *err)
{
	struct args *a = ctx;

	(void)value, (void)err;
	if (id == F_JSON)
		a->json = true;
	else
		a->help = true;
	return 0;
}

static void gen_str(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void gen_kv(yajl_gen g, const char *k, const char *v)
{
	gen_str(g, k);
	gen_str(g, v);
}

static void print_json(const struct cordon_doctor *d)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t len;

	yajl_gen_map_open(g);
	gen_kv(g, "mode", d->rootful ? "rootful" : "rootless");
	gen_str(g, "uid");
	yajl_gen_integer(g, d->uid);
	gen_str(g, "ok");
	yajl_gen_bool(g, d->failed == 0);
	gen_str(g, "checks");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < d->n; i++) {
		const struct cordon_doctor_check *c = &d->check[i];

		yajl_gen_map_open(g);
		gen_kv(g, "check", c->key);
		gen_kv(g, "title", c->title);
		gen_kv(g, "status", cordon_doctor_status_name(c->status));
		gen_kv(g, "detail", c->detail);
		if (c->status != CORDON_DOCTOR_OK) {
			gen_kv(g, "consequence", c->consequence);
			gen_kv(g, "fix", c->fix);
		}
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, &len);
	fwrite(buf, 1, len, stdout);
	putchar('\n');
	yajl_gen_free(g);
}

static void print_text(const struct cordon_doctor *d)
{
	printf("cordon doctor: %s (uid %u)\n", d->rootful ? "rootful" : "rootless",
	       (unsigned)d->uid);
	for (size_t i = 0; i < d->n; i++) {
		const struct cordon_doctor_check *c = &d->check[i];

		printf("  %-9s %-31s %s\n", cordon_doctor_status_name(c->status), c->title,
		       c->detail);
		if (c->status == CORDON_DOCTOR_OK)
			continue;
		printf("            so: %s\n", c->consequence);
		printf("            to fix: %s\n", c->fix);
	}
	if (d->failed)
		printf("cordon cannot confine as promised here: %u failed, %u degraded\n",
		       d->failed, d->degraded);
	else if (d->degraded)
		printf("cordon's defaults work here; %u optional part%s degraded (above)\n",
		       d->degraded, d->degraded == 1 ? "" : "s");
	else
		printf("everything cordon uses works here\n");
}

int cli_doctor(int argc, char **argv)
{
	struct cordon_error err = { 0 };
	struct args a = { 0 };
	struct cordon_doctor *d;
	int n_pos = 0, rc;

	if (cli_parse_args(flags, F_HELP, argc, argv, apply, &a, NULL, 0, &n_pos, &err) < 0)
		return cli_fail(&err);
	if (a.help) {
		puts("Usage: cordon doctor [--json]\n\n"
		     "Check whether this host can give the confinement cordon promises, before\n"
		     "anything runs: user namespaces, subordinate ids, kernel features, cgroups,\n"
		     "idmapped mounts, nftables and veth, the uplink helpers, the state directory.\n"
		     "Each check is ok, degraded (an optional part fails closed when asked for)\n"
		     "or failed (a default `cordon run` cannot work), with what it means and what\n"
		     "to do. Exit status 0 when nothing failed, 1 otherwise.");
		return 0;
	}
	d = cordon_xcalloc(1, sizeof(*d));
	cordon_doctor_run(d, cli_global.root);
	if (a.json)
		print_json(d);
	else
		print_text(d);
	rc = d->failed ? 1 : 0;
	free(d);
	return rc;
}
