/* SPDX-License-Identifier: GPL-2.0 */
/* The page size mevitop models in: x86_64's base page.  Written once; everything that turns
 * addresses into page numbers uses these. */
#ifndef MEVITOP_PAGE_H
#define MEVITOP_PAGE_H

#define PAGE_SHIFT_4K 12
#define PAGE_SIZE_4K 4096ULL

#endif
