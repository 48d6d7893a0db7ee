/* SPDX-License-Identifier: GPL-2.0 */
/* Readers for /proc.  Only the engine calls these (the UI never reads /proc). */
#ifndef MEVITOP_PROCFS_H
#define MEVITOP_PROCFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/map_perms.h"	/* struct maps_entry.perms: MP_* */

struct maps_entry {
	uint64_t start, end;	/* bytes, page aligned */
	uint64_t offset;
	uint64_t ino;
	uint32_t dev_major, dev_minor;
	uint32_t perms;		/* MP_* */
	const char *path;	/* "" for anonymous; valid during the callback only */
};

typedef int (*maps_cb)(const struct maps_entry *e, void *arg);

/* Calls cb for each well-formed line of a maps text (NUL-terminated; its newlines are
 * overwritten), in order; lines that are not one are skipped.  A non-zero return stops. */
int procfs_parse_maps(char *buf, maps_cb cb, void *arg);
/* Calls cb for each line of /proc/PID/maps, in address order; a non-zero return stops. */
int procfs_read_maps(pid_t pid, maps_cb cb, void *arg);
/* The same, with the names as PROCMAP_QUERY gives them, or -EILSEQ before any callback
 * when the text cannot say them exactly (a backslash in it: a newline is written \012);
 * -ESRCH for no mappings (no mm), as PROCMAP_QUERY says. */
int procfs_read_maps_exact(pid_t pid, maps_cb cb, void *arg);

/* Per-mapping VmFlags from /proc/PID/smaps, as bit flags (only the ones mevitop uses).
 * Costs a page-table walk of the process: called only when THP eligibility matters. */
#define VMF_HUGEPAGE	(1u << 0)	/* "hg": MADV_HUGEPAGE */
#define VMF_NOHUGEPAGE	(1u << 1)	/* "nh" */
#define VMF_GROWSDOWN	(1u << 2)	/* "gd" */
#define VMF_LOCKED	(1u << 3)	/* "lo" */
#define VMF_HUGETLB	(1u << 4)	/* "ht" */
#define VMF_PFNMAP	(1u << 5)	/* "pf" or "io" */
typedef int (*vmflags_cb)(uint64_t start, uint64_t end, uint32_t vmf, void *arg);
int procfs_read_vmflags(pid_t pid, vmflags_cb cb, void *arg);

int procfs_read_comm(pid_t pid, char *comm, size_t len);
int procfs_read_tgid(pid_t tid, pid_t *tgid);		/* from /proc/TID/status */
int procfs_read_uid(pid_t pid, uid_t *uid);
int procfs_read_euid(pid_t pid, uid_t *euid);	/* status "Uid:", second field */
size_t procfs_pid_max(void);			/* largest pid + 1 */
int procfs_read_start_brk(pid_t pid, uint64_t *start_brk); /* /proc/PID/stat field 47 */
int procfs_read_cpu(pid_t tid, int *cpu);	/* the CPU it last ran on: stat field 39 */
bool procfs_is_kernel_thread(pid_t pid);		/* no mm: empty maps */
/* The thread whose /proc/TID entries show pid's address space: pid itself, or a live thread
 * if pid's main thread has exited while others run; -ESRCH if there is none. */
int procfs_live_thread(pid_t pid, pid_t *tid);
/* 1 if pid runs a 32-bit ELF image (i386 or x32), 0 if 64-bit, -errno if unknown. */
int procfs_exe_is_32bit(pid_t pid);
/* Counters of /proc/PID/stat: faults (exact, summed over threads), size and the parent;
 * resident pages from /proc/PID/statm (procfs_read_rss). */
struct proc_counters {
	uint64_t minflt, majflt;
	uint64_t vsize;		/* bytes */
	uint64_t rss;		/* pages, exact: from /proc/PID/statm */
	uint64_t start_time;	/* clock ticks after boot: tells a reused pid */
	pid_t ppid;
	char state;		/* R, S, D, Z, ... (of the main thread) */
	char comm[16];		/* of the thread read: prctl(PR_SET_NAME) renames it */
};
int procfs_read_counters(pid_t pid, struct proc_counters *c);
/* pid is no longer the process started at born (start_time; 0: any): gone, reused, or
 * exited and not yet reaped. */
bool procfs_process_ended(pid_t pid, uint64_t born);
/* The resident pages the kernel counts for pid's mm (file + anon + shmem), summed exactly. */
int procfs_read_rss(pid_t pid, uint64_t *rss);
/* Resident anonymous pages (MM_ANONPAGES: statm's resident less its shared, which is file
 * and shmem pages), summed over the per-CPU parts as procfs_read_rss() says; no page-table
 * walk. */
int procfs_read_anon_rss(pid_t pid, uint64_t *pages);

/* All pids (tgids) in /proc, sorted; *pids is malloc'ed. */
int procfs_list_pids(pid_t **pids, size_t *n);

/* The pid a pidfd in another process refers to (/proc/PID/fdinfo/FD "Pid:"), or -errno. */
int procfs_pidfd_target(pid_t pid, int fd, pid_t *target);

/* Reads a small whole file into buf (NUL terminated); returns length or -errno. */
ssize_t procfs_read_file(const char *path, char *buf, size_t len);

#endif
