// SPDX-License-Identifier: Apache-2.0
/* Id-map computation: pure functions, unit tested in tests/unit/test-userns.c. */
#include <string.h>

#include "cordon/userns.h"

int cordon_subid_lookup(const char *path, const char *name, uint32_t id,
			struct cordon_subid *out)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	_cleanup_free_ char *line = NULL;
	char idstr[16];
	size_t cap = 0;
	bool found = false;

	if (!f)
		return errno == ENOENT ? 0 : -errno;
	snprintf(idstr, sizeof(idstr), "%u", id);
	while (getline(&line, &cap, f) > 0) {
		char *owner, *start, *count, *save = NULL;
		uint64_t s, c;

		owner = strtok_r(line, ":\n", &save);
		start = strtok_r(NULL, ":\n", &save);
		count = strtok_r(NULL, ":\n", &save);
		if (!owner || !start || !count)
			continue;
		if (!(name && strcmp(owner, name) == 0) && strcmp(owner, idstr) != 0)
			continue;
		if (cordon_parse_u64(start, &s) < 0 || cordon_parse_u64(count, &c) < 0 || c == 0 ||
		    s > UINT32_MAX || c > UINT32_MAX || s + c > UINT32_MAX)
			continue;
		if (!found || (out->count < CORDON_SUBID_WANTED && c > out->count)) {
			out->start = (uint32_t)s;
			out->count = (uint32_t)c;
			found = true;
		}
		if (out->count >= CORDON_SUBID_WANTED)
			break;
	}
	if (found && out->count > CORDON_SUBID_WANTED)
		out->count = CORDON_SUBID_WANTED;
	return found ? 1 : 0;
}

static void idmap_add(struct cordon_idmap *map, uint32_t inside, uint32_t outside,
		      uint32_t count)
{
	if (count == 0 || map->n == CORDON_IDMAP_MAX_EXTENTS)
		return;
	map->extent[map->n++] = (struct cordon_idmap_extent){ inside, outside, count };
}

void cordon_idmap_rootless(uint32_t host_id, uint32_t target, const struct cordon_subid *sub,
			   struct cordon_idmap *out)
{
	memset(out, 0, sizeof(*out));
	if (!sub || sub->count == 0) {
		idmap_add(out, target, host_id, 1);
		return;
	}
	/* Subordinate ids fill the namespace from 0 upwards, around target. */
	if (target < sub->count) {
		idmap_add(out, 0, sub->start, target);
		idmap_add(out, target, host_id, 1);
		idmap_add(out, target + 1, sub->start + target, sub->count - target);
	} else {
		idmap_add(out, 0, sub->start, sub->count);
		idmap_add(out, target, host_id, 1);
	}
}

void cordon_idmap_range(uint32_t base, uint32_t count, struct cordon_idmap *out)
{
	memset(out, 0, sizeof(*out));
	idmap_add(out, 0, base, count);
}

void cordon_idmap_identity_of(const struct cordon_idmap *outer, struct cordon_idmap *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < outer->n; i++)
		idmap_add(out, outer->extent[i].inside, outer->extent[i].inside,
			  outer->extent[i].count);
}

int64_t cordon_idmap_to_outside(const struct cordon_idmap *map, uint32_t id)
{
	for (size_t i = 0; i < map->n; i++) {
		const struct cordon_idmap_extent *e = &map->extent[i];

		if (id >= e->inside && id - e->inside < e->count)
			return (int64_t)e->outside + (id - e->inside);
	}
	return -1;
}

size_t cordon_idmap_format(const struct cordon_idmap *map, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < map->n && off < len; i++) {
		int w = snprintf(buf + off, len - off, "%u %u %u\n", map->extent[i].inside,
				 map->extent[i].outside, map->extent[i].count);

		if (w < 0 || (size_t)w >= len - off)
			return 0;
		off += (size_t)w;
	}
	return off;
}
