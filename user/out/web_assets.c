// SPDX-License-Identifier: GPL-2.0
/*
 * The files of user/out/web/ as bytes of this object: the assembler's .incbin reads them at
 * build time (paths from the top of the tree, where make runs; the Makefile makes this
 * object depend on them).  No generator, no xxd: gcc and binutils are enough, on any arch.
 */
#include <string.h>
#include "out/web_assets.h"

#define ASSET(sym, file)                                                                   \
	__asm__(".pushsection .rodata\n"                                                   \
		".balign 16\n"                                                             \
		".globl " #sym "\n.hidden " #sym "\n" #sym ":\n"                                             \
		".incbin \"" file "\"\n"                                                   \
		".globl " #sym "_end\n.hidden " #sym "_end\n" #sym "_end:\n"                                     \
		".byte 0\n"                                                                \
		".popsection\n");                                                          \
	extern const char sym[] __attribute__((visibility("hidden"))), sym##_end[] __attribute__((visibility("hidden")))

ASSET(web_index_html, "user/out/web/index.html");
ASSET(web_app_js, "user/out/web/app.js");
ASSET(web_app_css, "user/out/web/app.css");
ASSET(web_heatmap_js, "user/out/web/heatmap.js");

const struct web_asset *web_asset_find(const char *url)
{
	static struct web_asset assets[] = {
		{ "/", "text/html; charset=utf-8", web_index_html, 0 },
		{ "/app.js", "text/javascript; charset=utf-8", web_app_js, 0 },
		{ "/app.css", "text/css; charset=utf-8", web_app_css, 0 },
		{ "/heatmap.js", "text/javascript; charset=utf-8", web_heatmap_js, 0 },
	};
	static const char *const ends[] = { web_index_html_end, web_app_js_end, web_app_css_end,
					    web_heatmap_js_end };

	for (size_t i = 0; i < sizeof(assets) / sizeof(assets[0]); i++) {
		if (strcmp(url, assets[i].url))
			continue;
		assets[i].len = (size_t)(ends[i] - assets[i].data);
		return &assets[i];
	}
	return NULL;
}
