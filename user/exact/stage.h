/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stage.h - testing only: where exact mode's attach is, for the kill -9 sweeps
 * (tests/integration/killsweep.py).  Nothing happens unless one of these is set:
 *
 *   MEVITOP_TEST_STAGE_FILE=PATH  each stage's name is written at offset 0 of PATH (one
 *       64-byte line, padded), so after mevitop is killed PATH names the stage it died in.
 *   MEVITOP_TEST_PAUSE=STAGE[:MS]  at STAGE, print "mevitop: test-pause STAGE" on stderr
 *       and sleep MS ms (default 60000), so a test kills it exactly there (exact.h lists
 *       exact.c's stages, which pause the same way; these are the injection's).
 *
 * The injection's stages: "inj:seize" (seizing the threads), "inj:prepare" (looking for
 * a page left by a killed attach, and for the code the bootstrap borrows), "boot:CALL" (the scratch
 * page's bootstrap, inside memfd_create, ftruncate, mmap or close: the thread sits at the
 * call's entry, its registers borrowed), "call:CALL" (inside an injected call, at its
 * entry), "tramp:CALL" (the call returned, the thread still in the trampoline, before it
 * is restored), "chain:CALL" (inside a call of a chain), "drop:munmap" (inside the munmap
 * of the scratch page before the release), "inj:detach" (detaching the threads).
 */
#ifndef MEVITOP_STAGE_H
#define MEVITOP_STAGE_H

/* Record stage "@prefix:@name" (@name NULL: "@prefix"), and pause there if asked. */
void stage_enter(const char *prefix, const char *name);
/* The same for a system call number: its name from the injected-call list. */
void stage_enter_nr(const char *prefix, long nr);

#endif /* MEVITOP_STAGE_H */
