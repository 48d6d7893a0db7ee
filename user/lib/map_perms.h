/* SPDX-License-Identifier: GPL-2.0 */
/* A mapping's permissions as bit flags: read from /proc/PID/maps by kernel/, kept by the
 * model, printed by the views.  Here in lib/ so each of them names the same bits without one
 * layer reaching into another. */
#ifndef MEVITOP_MAP_PERMS_H
#define MEVITOP_MAP_PERMS_H

#define MP_READ		(1u << 0)
#define MP_WRITE	(1u << 1)
#define MP_EXEC		(1u << 2)
#define MP_SHARED	(1u << 3)

#endif
