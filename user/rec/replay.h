/* SPDX-License-Identifier: GPL-2.0 */
/* `mevitop replay FILE [--json] [--at T | --from T1 --to T2] [--maps]`: a recording read back. */
#ifndef MEVITOP_REC_REPLAY_H
#define MEVITOP_REC_REPLAY_H

#include <stdio.h>

/* argv[0] is "replay".  Returns the exit status: 0, 1 (unreadable recording), 2 (usage). */
int replay_main(int argc, char **argv);
void replay_usage(FILE *out);

#endif
