/* SPDX-License-Identifier: GPL-2.0 */
/* The page itself (user/out/web/): plain HTML, CSS and JavaScript built into the binary, so
 * nothing is fetched from anywhere but mevitop. */
#ifndef MEVITOP_OUT_WEB_ASSETS_H
#define MEVITOP_OUT_WEB_ASSETS_H

#include <stddef.h>

struct web_asset {
	const char *url;
	const char *type;
	const char *data;
	size_t len;
};

/* The asset served at url ("/" is index.html), or NULL. */
const struct web_asset *web_asset_find(const char *url);

#endif
