// SPDX-License-Identifier: GPL-2.0
#include "ui/keys.h"

static const struct ui_key *keymap_find(const struct ui_keymap *km, int key)
{
	size_t i;
	int c;

	for (i = 0; i < km->n; i++)
		for (c = 0; c < UI_KEY_CODES && km->keys[i].codes[c]; c++)
			if (km->keys[i].codes[c] == key)
				return &km->keys[i];
	return NULL;
}

bool keys_dispatch(const struct ui_keymap *km, struct ui *ui, int key)
{
	const struct ui_key *k = keymap_find(km, key);

	return k && k->fn(ui, key);
}

void keys_print(FILE *f, const struct ui_keymap *km)
{
	size_t i;

	for (i = 0; i < km->n; i++)
		fprintf(f, "%s\t%s\t%s\n", km->title, km->keys[i].keys, km->keys[i].help);
}
