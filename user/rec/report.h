/* SPDX-License-Identifier: GPL-2.0 */
/* `mevitop report FILE -o OUT.svg [-p PID]`: a picture of one process in a recording. */
#ifndef MEVITOP_REC_REPORT_H
#define MEVITOP_REC_REPORT_H

/* argv[0] is "report".  Returns the exit status: 0, 1 (unreadable recording), 2 (usage). */
int report_main(int argc, char **argv);

#endif
