// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "stacks/target_code.h"
#include "stacks/unwind_check.h"

bool unwind_check_call_precedes(const struct proc *p, uint64_t ra, uint64_t *target)
{
	unsigned char b[7];
	int32_t rel;
	int k;

	*target = 0;
	if (ra < sizeof(b) || !target_code_read(p, ra - sizeof(b), b, sizeof(b)))
		return false;
	/* call rel32: e8 + 4 bytes, relative to the return address. */
	if (b[sizeof(b) - 5] == 0xe8) {
		memcpy(&rel, &b[sizeof(b) - 4], sizeof(rel));
		*target = ra + (int64_t)rel;
		return true;
	}
	/* call r/m64: ff /2, 2 to 7 bytes with its ModRM, SIB and displacement. */
	for (k = 2; k <= 7; k++) {
		unsigned char op = b[sizeof(b) - k], modrm = b[sizeof(b) - k + 1];

		if (op == 0xff && ((modrm >> 3) & 7) == 2)
			return true;
	}
	return false;
}

bool unwind_check_frame_set_up(const struct proc *p, uint64_t func_start, uint64_t pc)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const unsigned char prologue[4] = { 0x55, 0x48, 0x89, 0xe5 };	/* push; mov */
	unsigned char b[8];
	size_t at = 0;

	if (!func_start || pc < func_start || !target_code_read(p, func_start, b, sizeof(b)))
		return false;
	if (!memcmp(b, endbr64, sizeof(endbr64)))
		at = sizeof(endbr64);
	if (memcmp(b + at, prologue, sizeof(prologue)))
		return false;
	/* At or inside the prologue %rbp is still the caller's frame. */
	return pc >= func_start + at + sizeof(prologue);
}

bool unwind_check_plt_dest(const struct proc *p, uint64_t stub, uint64_t *dest)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	unsigned char b[11];
	size_t at = 0;
	int32_t disp;
	uint64_t got;

	*dest = 0;
	if (p->exited || !target_code_read(p, stub, b, sizeof(b)))
		return false;
	if (!memcmp(b, endbr64, sizeof(endbr64)))
		at = sizeof(endbr64);
	if (b[at] == 0xf2)	/* bnd: .plt.sec entries built for MPX/IBT */
		at++;
	if (b[at] != 0xff || b[at + 1] != 0x25)
		return false;
	memcpy(&disp, &b[at + 2], sizeof(disp));
	got = stub + at + 6 + (int64_t)disp;	/* rip-relative: from the next instruction */
	return target_code_read(p, got, dest, sizeof(*dest)) && *dest;
}
