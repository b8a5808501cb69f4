// SPDX-License-Identifier: Apache-2.0
/*
 * Fuzz target for the allowlist parser: the input, as one --net-allow
 * value, either is refused with a message or becomes entries that then
 * match themselves; the input as a hostname never crashes the matcher.
 */
#include <string.h>

#include "cordon/net.h"
#include "fuzz.h"

#define INPUT_MAX 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cordon_error err = { 0 };
	struct cordon_allowlist *al;
	char text[INPUT_MAX + 1], fp[65];

	if (size > INPUT_MAX)
		size = INPUT_MAX;
	memcpy(text, data, size);
	text[size] = '\0';

	al = cordon_allowlist_new();
	if (cordon_allowlist_add(al, text, (size & 1) != 0, &err) == 0) {
		for (size_t i = 0; i < cordon_allowlist_count(al); i++) {
			const struct cordon_allow_entry *e = cordon_allowlist_entry(al, i);

			/* A normalised exact name matches itself; an address entry its address. */
			if (e->kind == CORDON_ALLOW_HOST && !cordon_allowlist_match_name(al, e->text))
				abort();
			if (e->kind == CORDON_ALLOW_ADDR &&
			    !cordon_allowlist_match_addr(al, &e->cidr.addr))
				abort();
		}
		cordon_allowlist_fingerprint(al, fp);
		if (strlen(fp) != 64)
			abort();
	} else if (!err.msg[0]) {
		abort(); /* a refusal always says why */
	}
	(void)cordon_allowlist_match_name(al, text);
	cordon_allowlist_free(al);
	return 0;
}
