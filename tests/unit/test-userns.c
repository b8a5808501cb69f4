// SPDX-License-Identifier: Apache-2.0
/* Unit tests of src/userns: id-map computation and /etc/subuid parsing. */
#include <string.h>

#include "cordon/userns.h"
#include "unit.h"

#define HOST 1001u

static void assert_extents(const struct cordon_idmap *map,
			   const struct cordon_idmap_extent *want, size_t n)
{
	char got[512];

	cordon_idmap_format(map, got, sizeof(got));
	ck_assert_msg(map->n == n, "%zu extents, want %zu; map:\n%s", map->n, n, got);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(map->extent[i].inside == want[i].inside &&
				      map->extent[i].outside == want[i].outside &&
				      map->extent[i].count == want[i].count,
			      "extent %zu is %u %u %u, want %u %u %u; map:\n%s", i,
			      map->extent[i].inside, map->extent[i].outside, map->extent[i].count,
			      want[i].inside, want[i].outside, want[i].count, got);
}

static bool ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/*
 * What the kernel demands of a map (no overlap on either side) and what
 * cordon promises: target is the caller, every other outside id is one
 * of the caller's subordinate ids.
 */
static void assert_rootless_invariants(const struct cordon_idmap *map, uint32_t target,
				       const struct cordon_subid *sub)
{
	uint64_t mapped = 0;

	ck_assert_uint_le(map->n, CORDON_IDMAP_MAX_EXTENTS);
	ck_assert_int_eq(cordon_idmap_to_outside(map, target), HOST);
	for (size_t i = 0; i < map->n; i++) {
		const struct cordon_idmap_extent *e = &map->extent[i];

		ck_assert_uint_gt(e->count, 0);
		mapped += e->count;
		if (e->outside != HOST || e->count != 1) {
			ck_assert_ptr_nonnull(sub);
			ck_assert_uint_ge(e->outside, sub->start);
			ck_assert_uint_le((uint64_t)e->outside + e->count,
					  (uint64_t)sub->start + sub->count);
		}
		for (size_t j = i + 1; j < map->n; j++) {
			const struct cordon_idmap_extent *f = &map->extent[j];

			ck_assert_msg(!ranges_overlap(e->inside, e->count, f->inside, f->count),
				      "inside ranges of extents %zu and %zu overlap", i, j);
			ck_assert_msg(!ranges_overlap(e->outside, e->count, f->outside, f->count),
				      "outside ranges of extents %zu and %zu overlap", i, j);
		}
	}
	/* Every subordinate id is used, plus the caller's own. */
	ck_assert_uint_eq(mapped, (sub ? sub->count : 0) + 1);
}

/* --- rootless maps ----------------------------------------------------- */

START_TEST(rootless_single_id)
{
	struct cordon_idmap map;
	const struct cordon_subid empty = { 100000, 0 };
	uint32_t targets[] = { 0, 1000, 65535, 70000 };

	for (size_t i = 0; i < ARRAY_SIZE(targets); i++) {
		const struct cordon_idmap_extent want[] = { { targets[i], HOST, 1 } };

		cordon_idmap_rootless(HOST, targets[i], NULL, &map);
		assert_extents(&map, want, 1);
		assert_rootless_invariants(&map, targets[i], NULL);
		/* A range of zero ids is no range. */
		cordon_idmap_rootless(HOST, targets[i], &empty, &map);
		assert_extents(&map, want, 1);
	}
}
END_TEST

static const struct cordon_subid sub = { 100000, 65536 };

START_TEST(rootless_range_target_0)
{
	struct cordon_idmap map;
	const struct cordon_idmap_extent want[] = {
		{ 0, HOST, 1 },
		{ 1, 100000, 65536 },
	};

	cordon_idmap_rootless(HOST, 0, &sub, &map);
	assert_extents(&map, want, ARRAY_SIZE(want));
	assert_rootless_invariants(&map, 0, &sub);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, 1), 100000);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, 65536), 165535);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, 65537), -1);
}
END_TEST

START_TEST(rootless_range_target_1000)
{
	struct cordon_idmap map;
	const struct cordon_idmap_extent want[] = {
		{ 0, 100000, 1000 },
		{ 1000, HOST, 1 },
		{ 1001, 101000, 64536 },
	};

	cordon_idmap_rootless(HOST, 1000, &sub, &map);
	assert_extents(&map, want, ARRAY_SIZE(want));
	assert_rootless_invariants(&map, 1000, &sub);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, 0), 100000);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, 999), 100999);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, 1000), HOST);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, 1001), 101000);
}
END_TEST

START_TEST(rootless_range_target_last_in_range)
{
	struct cordon_idmap map;
	const struct cordon_idmap_extent want[] = {
		{ 0, 100000, 65535 },
		{ 65535, HOST, 1 },
		{ 65536, 165535, 1 },
	};

	cordon_idmap_rootless(HOST, 65535, &sub, &map);
	assert_extents(&map, want, ARRAY_SIZE(want));
	assert_rootless_invariants(&map, 65535, &sub);
}
END_TEST

START_TEST(rootless_range_target_beyond)
{
	struct cordon_idmap map;
	uint32_t targets[] = { 65536, 70000, 4000000000u };

	for (size_t i = 0; i < ARRAY_SIZE(targets); i++) {
		const struct cordon_idmap_extent want[] = {
			{ 0, 100000, 65536 },
			{ targets[i], HOST, 1 },
		};

		cordon_idmap_rootless(HOST, targets[i], &sub, &map);
		assert_extents(&map, want, ARRAY_SIZE(want));
		assert_rootless_invariants(&map, targets[i], &sub);
	}
}
END_TEST

START_TEST(rootless_small_range)
{
	const struct cordon_subid small = { 500000, 10 };
	struct cordon_idmap map;

	for (uint32_t target = 0; target < 20; target++) {
		cordon_idmap_rootless(HOST, target, &small, &map);
		assert_rootless_invariants(&map, target, &small);
	}
}
END_TEST

/* --- rootful, identity, lookups, format -------------------------------- */

START_TEST(range_map)
{
	struct cordon_idmap map;
	const struct cordon_idmap_extent want[] = { { 0, 2147418112u, 65536 } };

	cordon_idmap_range(2147418112u, 65536, &map);
	assert_extents(&map, want, 1);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, 0), 2147418112);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, 1000), 2147419112);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, 65535), 2147483647);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, 65536), -1);

	/* High bases do not wrap in the int64_t answer. */
	cordon_idmap_range(4294901759u, 65536, &map);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, 65535), 4294967294LL);

	cordon_idmap_range(1, 0, &map);
	ck_assert_uint_eq(map.n, 0);
}
END_TEST

START_TEST(identity_of_map)
{
	struct cordon_idmap outer, inner;
	const struct cordon_idmap_extent want[] = {
		{ 0, 0, 1000 },
		{ 1000, 1000, 1 },
		{ 1001, 1001, 64536 },
	};

	cordon_idmap_rootless(HOST, 1000, &sub, &outer);
	cordon_idmap_identity_of(&outer, &inner);
	assert_extents(&inner, want, ARRAY_SIZE(want));
	for (uint32_t id = 0; id <= 65536; id += 97)
		ck_assert_int_eq(cordon_idmap_to_outside(&inner, id), id);
	ck_assert_int_eq(cordon_idmap_to_outside(&inner, 65537), -1);

	cordon_idmap_range(2147418112u, 65536, &outer);
	cordon_idmap_identity_of(&outer, &inner);
	ck_assert_uint_eq(inner.n, 1);
	ck_assert_uint_eq(inner.extent[0].inside, 0);
	ck_assert_uint_eq(inner.extent[0].outside, 0);
	ck_assert_uint_eq(inner.extent[0].count, 65536);
}
END_TEST

START_TEST(to_outside_unmapped)
{
	struct cordon_idmap map = { 0 };

	ck_assert_int_eq(cordon_idmap_to_outside(&map, 0), -1);
	cordon_idmap_rootless(HOST, 1000, NULL, &map);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, 999), -1);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, 1000), HOST);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, 1001), -1);
	ck_assert_int_eq(cordon_idmap_to_outside(&map, UINT32_MAX), -1);
}
END_TEST

START_TEST(format_map)
{
	struct cordon_idmap map;
	char buf[256];
	const char want[] = "0 100000 1000\n1000 1001 1\n1001 101000 64536\n";

	cordon_idmap_rootless(HOST, 1000, &sub, &map);
	ck_assert_uint_eq(cordon_idmap_format(&map, buf, sizeof(buf)), strlen(want));
	ck_assert_str_eq(buf, want);

	cordon_idmap_range(2147418112u, 65536, &map);
	ck_assert_uint_eq(cordon_idmap_format(&map, buf, sizeof(buf)), strlen("0 2147418112 65536\n"));
	ck_assert_str_eq(buf, "0 2147418112 65536\n");
}
END_TEST

START_TEST(format_empty_and_short_buffer)
{
	struct cordon_idmap map = { 0 };
	char buf[16] = "junk";

	ck_assert_uint_eq(cordon_idmap_format(&map, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");

	/* Too small for the whole map: 0, never a partial map to write. */
	cordon_idmap_rootless(HOST, 1000, &sub, &map);
	ck_assert_uint_eq(cordon_idmap_format(&map, buf, sizeof(buf)), 0);
	ck_assert_uint_eq(cordon_idmap_format(&map, buf, 0), 0);
}
END_TEST

/* --- /etc/subuid parsing ------------------------------------------------ */

static char *tmp;

static void subid_setup(void)
{
	tmp = unit_tmpdir();
}

static void subid_teardown(void)
{
	unit_rm_rf(tmp);
	free(tmp);
}

static const char subuid[] =
	"alice:100000:65536\n"
	"1001:300000:65536\n"
	"alic:1:65536\n"
	"alice2:2:65536\n"
	"bob:200000:1000\n"
	"bob:400000:65536\n"
	"bob:900000:65536\n"
	"carol:500000:10\n"
	"carol:600000:20\n"
	"carol:700000:15\n"
	"# a comment\n"
	"\n"
	"malformed\n"
	"dave\n"
	"dave:\n"
	"dave:1000\n"
	"dave:abc:65536\n"
	"dave:-1:65536\n"
	"dave: 5:65536\n"
	"dave:700000:0\n"
	"dave:4294967295:10\n"
	"dave:800000:65536\n"
	"eve:1000000:100000\n"
	"frank:4294967290:10\n"
	"frank:4294967296:1\n"
	"grace:1100000:65536";

static int lookup(const char *name, uint32_t id, struct cordon_subid *out)
{
	_cleanup_free_ char *path = cordon_xasprintf("%s/subuid", tmp);

	out->start = out->count = 12345;
	return cordon_subid_lookup(path, name, id, out);
}

#define ck_assert_subid(name, id, want_start, want_count)                                  \
	do {                                                                               \
		struct cordon_subid _s;                                                    \
		const char *_n = (name);                                                   \
		int _r = lookup(_n, (id), &_s);                                            \
		ck_assert_msg(_r == 1, "lookup(%s, %u) = %d, want 1", _n ? _n : "NULL",    \
			      (id), _r);                                                   \
		ck_assert_msg(_s.start == (want_start) && _s.count == (want_count),        \
			      "lookup(%s, %u) = %u:%u, want %u:%u", _n ? _n : "NULL", (id),   \
			      _s.start,                                                    \
			      _s.count, (want_start), (want_count));                       \
	} while (0)

START_TEST(subid_by_name_and_number)
{
	struct cordon_subid out;

	free(unit_write(tmp, "subuid", subuid));
	ck_assert_subid("alice", 5000, 100000, 65536);
	/* An entry may name the user by number. */
	ck_assert_subid("nobody-else", 1001, 300000, 65536);
	ck_assert_subid(NULL, 1001, 300000, 65536);
	/* By name first when both match: the first matching line wins. */
	ck_assert_subid("alice", 1001, 100000, 65536);
	/* No prefix matches: "alic" and "alice2" are other users. */
	ck_assert_int_eq(lookup("ali", 5000, &out), 0);
	ck_assert_int_eq(lookup("nosuch", 5000, &out), 0);
	ck_assert_int_eq(lookup(NULL, 5000, &out), 0);
	/* The last line has no newline and still counts. */
	ck_assert_subid("grace", 5000, 1100000, 65536);
}
END_TEST

START_TEST(subid_multiple_entries)
{
	free(unit_write(tmp, "subuid", subuid));
	/* The first entry of at least 65536 ids, skipping smaller ones. */
	ck_assert_subid("bob", 5000, 400000, 65536);
	/* None big enough: the largest. */
	ck_assert_subid("carol", 5000, 600000, 20);
	/* More than wanted is clamped to 65536. */
	ck_assert_subid("eve", 5000, 1000000, 65536);
}
END_TEST

START_TEST(subid_malformed_lines_skipped)
{
	struct cordon_subid out;

	free(unit_write(tmp, "subuid", subuid));
	ck_assert_subid("dave", 5000, 800000, 65536);
	/* Ranges that would run past 2^32 are refused. */
	ck_assert_int_eq(lookup("frank", 5000, &out), 0);
	ck_assert_int_eq(lookup("malformed", 5000, &out), 0);
	ck_assert_int_eq(lookup("# a comment", 5000, &out), 0);
}
END_TEST

START_TEST(subid_only_garbage)
{
	struct cordon_subid out;

	free(unit_write(tmp, "subuid", "::::\n:\nalice\nalice::\n\n\n"));
	ck_assert_int_eq(lookup("alice", 1000, &out), 0);
	free(unit_write(tmp, "subuid", ""));
	ck_assert_int_eq(lookup("alice", 1000, &out), 0);
}
END_TEST

START_TEST(subid_missing_file)
{
	struct cordon_subid out;
	_cleanup_free_ char *path = cordon_xasprintf("%s/no-such-subuid", tmp);

	ck_assert_int_eq(cordon_subid_lookup(path, "alice", 1000, &out), 0);
}
END_TEST

START_TEST(subid_unreadable_file)
{
	struct cordon_subid out;
	_cleanup_free_ char *path = unit_write(tmp, "subuid", subuid);

	/* root reads everything; the check only means something without it. */
	if (geteuid() == 0)
		return;
	ck_assert_int_eq(chmod(path, 0), 0);
	ck_assert_int_eq(cordon_subid_lookup(path, "alice", 1000, &out), -EACCES);
}
END_TEST

/* --user-limit NAME=N: known names, decimal 0..INT_MAX, once each. */
START_TEST(user_limit_parse)
{
	struct cordon_user_limits l;
	struct cordon_error err = { 0 };
	static const char *const bad[] = { "max_nothing=1", "max_user_namespaces=0", "=1",
					   "max_inotify_instances", "max_inotify_instances=",
					   "max_inotify_instances=-1", "max_inotify_instances=0x10",
					   "max_inotify_instances=2147483648", "max_inotify_instances= 1" };

	cordon_user_limits_init(&l);
	ck_assert_int_eq(cordon_user_limit_parse("max_inotify_instances=7", &l, &err), 0);
	ck_assert_int_eq(cordon_user_limit_parse("max_time_namespaces=0", &l, &err), 0);
	ck_assert_int_eq(l.value[CORDON_USER_LIMIT_INOTIFY_INSTANCES], 7);
	ck_assert_int_eq(l.value[CORDON_USER_LIMIT_TIME_NAMESPACES], 0);
	ck_assert_uint_eq(l.given, (1u << CORDON_USER_LIMIT_INOTIFY_INSTANCES) |
					   (1u << CORDON_USER_LIMIT_TIME_NAMESPACES));
	ck_assert_int_eq(cordon_user_limit_parse("max_inotify_instances=8", &l, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "given twice"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cordon_user_limits_init(&l);
		ck_assert_int_eq(cordon_user_limit_parse(bad[i], &l, &err), -1);
		ck_assert_int_eq(err.code, CORDON_E_USAGE);
		ck_assert_ptr_nonnull(strstr(err.msg, "--user-limit"));
		ck_assert_uint_eq(l.given, 0);
	}
	for (int i = 0; i < CORDON_USER_LIMIT_COUNT; i++)
		ck_assert_int_eq(cordon_user_limit_from_name(cordon_user_limit_name(i)), i);
	ck_assert_int_eq(cordon_user_limit_from_name("max_user_namespaces"), -1);
}
END_TEST

/* Defaults from the caller's own limits: below them; a given one above them is refused. */
START_TEST(user_limit_resolve)
{
	struct cordon_user_limits l;
	struct cordon_error err = { 0 };
	int64_t own;

	cordon_user_limits_init(&l);
	ck_assert_int_eq(cordon_user_limits_resolve(&l, CORDON_E_USAGE, &err), 0);
	for (int i = 0; i < CORDON_USER_LIMIT_COUNT; i++) {
		if (l.host[i] < 0) {
			ck_assert_int_eq(l.value[i], -1);
			continue;
		}
		ck_assert_int_le(l.value[i], l.host[i] / 8);
		ck_assert_int_le(l.value[i], 65536);
	}
	own = l.host[CORDON_USER_LIMIT_INOTIFY_INSTANCES];
	if (own >= 0 && own < 2147483647) {
		char arg[64];

		cordon_user_limits_init(&l);
		snprintf(arg, sizeof(arg), "max_inotify_instances=%lld", (long long)own + 1);
		ck_assert_int_eq(cordon_user_limit_parse(arg, &l, &err), 0);
		ck_assert_int_eq(cordon_user_limits_resolve(&l, CORDON_E_SPEC, &err), -1);
		ck_assert_int_eq(err.code, CORDON_E_SPEC);
		ck_assert_ptr_nonnull(strstr(err.msg, "user.max_inotify_instances"));
	}
}
END_TEST

static Suite *userns_suite(void)
{
	Suite *s = suite_create("userns");
	TCase *tc;

	tc = tcase_create("idmap");
	tcase_add_test(tc, rootless_single_id);
	tcase_add_test(tc, rootless_range_target_0);
	tcase_add_test(tc, rootless_range_target_1000);
	tcase_add_test(tc, rootless_range_target_last_in_range);
	tcase_add_test(tc, rootless_range_target_beyond);
	tcase_add_test(tc, rootless_small_range);
	tcase_add_test(tc, range_map);
	tcase_add_test(tc, identity_of_map);
	tcase_add_test(tc, to_outside_unmapped);
	tcase_add_test(tc, format_map);
	tcase_add_test(tc, format_empty_and_short_buffer);
	tcase_add_test(tc, user_limit_parse);
	tcase_add_test(tc, user_limit_resolve);
	suite_add_tcase(s, tc);

	tc = tcase_create("subid");
	tcase_add_checked_fixture(tc, subid_setup, subid_teardown);
	tcase_add_test(tc, subid_by_name_and_number);
	tcase_add_test(tc, subid_multiple_entries);
	tcase_add_test(tc, subid_malformed_lines_skipped);
	tcase_add_test(tc, subid_only_garbage);
	tcase_add_test(tc, subid_missing_file);
	tcase_add_test(tc, subid_unreadable_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(userns_suite());
}
