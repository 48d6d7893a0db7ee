/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEVITOP_REC_REPLAY_WEB_H
#define MEVITOP_REC_REPLAY_WEB_H

#include "out/listen_addr.h"
#include "rec/rec_reader.h"

/* `mevitop replay FILE --listen ADDR:PORT`: the web view on the recording, with a time
 * slider, until SIGINT or SIGTERM (exit 0).  Nonzero: it could not serve (said on stderr). */
int replay_web(struct rec_reader *r, const char *path, const struct listen_addr *a);

#endif
