// SPDX-License-Identifier: Apache-2.0
/*
 * The netlink libraries loaded on demand (src/net/netlib.c): nothing
 * calls through an empty table, a group loads only its own libraries,
 * each by its absolute path. This program does not link the libraries
 * (tests/unit/meson.build), so every mapping of them is the loader's.
 * Each case runs in a fresh fork of an unloaded process (CK_FORK).
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "cordon/net.h"
#include "unit.h"

/* Is NAME (a soname: the file is NAME or NAME.x.y) mapped into this process? */
static bool mapped(const char *name)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096];
	bool found = false;

	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f)) {
		char *nl = strchr(line, '\n'), *slash;

		if (nl)
			*nl = '\0';
		slash = strrchr(line, '/');
		found = slash && strncmp(slash + 1, name, strlen(name)) == 0 &&
			(slash[1 + strlen(name)] == '\0' || slash[1 + strlen(name)] == '.');
	}
	fclose(f);
	return found;
}

START_TEST(unloaded_fails_closed)
{
	struct cordon_error err = { 0 };

	ck_assert(!mapped("libnftnl.so.11") && !mapped("libnl-route-3.so.200"));
	ck_assert_ptr_null(cordon_nft_open(&err));
	ck_assert_int_eq(err.code, CORDON_E_INTERNAL);
	ck_assert_msg(strstr(err.msg, "not loaded"), "%s", err.msg);
	memset(&err, 0, sizeof(err));
	ck_assert_ptr_null(cordon_link_open(&err));
	ck_assert_int_eq(err.code, CORDON_E_INTERNAL);
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(cordon_link_wait_configured("lo", false, 0, &err), -1);
	ck_assert_int_eq(err.code, CORDON_E_INTERNAL);
}
END_TEST

START_TEST(nft_group_alone)
{
	struct cordon_error err = { 0 };
	struct cordon_nft *nft;

	ck_assert_msg(cordon_netlib_load(CORDON_NETLIB_NFT, &err) == 0, "%s", err.msg);
	ck_assert(mapped("libnftnl.so.11") && mapped("libmnl.so.0"));
	/* libnl reads its environment and files when loaded: not for the nft group. */
	ck_assert(!mapped("libnl-3.so.200") && !mapped("libnl-route-3.so.200"));
	nft = cordon_nft_open(&err);
	ck_assert_msg(nft, "%s", err.msg);
	cordon_nft_close(nft);
	ck_assert_ptr_null(cordon_link_open(&err));
	ck_assert_int_eq(err.code, CORDON_E_INTERNAL);
}
END_TEST

START_TEST(all_groups_idempotent)
{
	struct cordon_error err = { 0 };
	struct cordon_link *l;

	ck_assert_msg(cordon_netlib_load(CORDON_NETLIB_ALL, &err) == 0, "%s", err.msg);
	ck_assert_msg(cordon_netlib_load(CORDON_NETLIB_ALL, &err) == 0, "%s", err.msg);
	ck_assert(mapped("libnl-3.so.200") && mapped("libnl-route-3.so.200"));
	l = cordon_link_open(&err);
	ck_assert_msg(l, "%s", err.msg);
	cordon_link_close(l);
}
END_TEST

/* Absolute paths, fixed at build time: no search path decides which file is loaded. */
START_TEST(paths_absolute)
{
	const char *paths[] = { CORDON_LIBMNL_PATH, CORDON_LIBNFTNL_PATH, CORDON_LIBNL_PATH,
				CORDON_LIBNL_ROUTE_PATH, CORDON_LIBSECCOMP_PATH };

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		ck_assert_msg(paths[i][0] == '/' && !strstr(paths[i], "/../"), "%s", paths[i]);
}
END_TEST

static Suite *netlib_suite(void)
{
	Suite *s = suite_create("net-netlib");
	TCase *tc = tcase_create("load");

	tcase_add_test(tc, unloaded_fails_closed);
	tcase_add_test(tc, nft_group_alone);
	tcase_add_test(tc, all_groups_idempotent);
	tcase_add_test(tc, paths_absolute);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(netlib_suite());
}
