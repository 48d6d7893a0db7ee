/* SPDX-License-Identifier: GPL-2.0 */
/* `mevitop replay FILE [--json] [--at T | --from T1 --to T2] [--maps]`: a recording read back. */
#ifndef MEVITOP_REC_REPLAY_H
#define MEVITOP_REC_REPLAY_H

struct rec_reader;
struct json_frame;
struct mem_summary;

/* The memory summary a frame of a whole-system recording carries: 0, or -ENOENT (none). */
int replay_frame_memory(const struct json_frame *f, struct mem_summary *out);

/* argv[0] is "replay".  Without --json the recording goes to `interactive` (the UI layer's,
 * passed in by main so this layer stays free of curses).  Returns the exit status: 0, 1
 * (unreadable recording, no terminal), 2 (usage). */
int replay_main(int argc, char **argv, int (*interactive)(struct rec_reader *r));

#endif
