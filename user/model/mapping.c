// SPDX-License-Identifier: GPL-2.0
/* A mapping's attributes as text. */
#include "model/model.h"

void mapping_perms_str(uint32_t perms, char out[5])
{
	out[0] = perms & MP_READ ? 'r' : '-';
	out[1] = perms & MP_WRITE ? 'w' : '-';
	out[2] = perms & MP_EXEC ? 'x' : '-';
	out[3] = perms & MP_SHARED ? 's' : 'p';
	out[4] = 0;
}
