// SPDX-License-Identifier: GPL-2.0
/*
 * A tree of processes the test grows and prunes: the process list's tree view's workload (a
 * forking server the test can predict).
 *
 * The root reads commands on stdin; every member of the tree (the root included) waits on
 * its slot of a shared mailbox page mapped before the first fork, so any member can be told
 * to fork or to exit.  A new member names itself (prctl PR_SET_NAME), maps PAGES private
 * anonymous pages and writes every one before the command is answered: each member's own
 * region is resident, whole.  SIGCHLD is ignored (members are reaped at once) and the root
 * is a child subreaper, so a member whose parent exits is re-parented to the root.
 *
 *   forktree [--name NAME]             prints "ready PID"
 *   spawn PARENT NAME PAGES            PARENT (a member's pid) forks; "done MONO_NS PID"
 *   quit PID                           member PID exits; answered once it is gone
 *   exit                               every member and the root exit
 */
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "workload.h"

#define PAGE 4096UL
#define MAX_MEMBERS 64

enum op { OP_NONE, OP_SPAWN, OP_QUIT };

struct slot {
	_Atomic uint32_t seq;		/* bumped by the root for each command */
	_Atomic uint32_t done;		/* set to seq by the member once it is done */
	_Atomic int32_t pid;		/* the member's pid, 0: free */
	int32_t op, child, pages;	/* child: the slot the spawned member takes */
	char name[16];
};

static struct slot *box;

static void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
	syscall(SYS_futex, addr, FUTEX_WAIT, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE, 1 << 30, NULL, NULL, 0);
}

static void member_loop(int me);

/* In the new child: become member `me`, then tell slot `parent` the spawn is done. */
static void become(int me, int parent, const char *name, long pages)
{
	struct slot *s = &box[me];
	char *p;
	long i;

	prctl(PR_SET_NAME, name);
	p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		wl_die("failed to map %ld pages", pages);
	for (i = 0; i < pages; i++)
		p[i * PAGE] = 1;
	atomic_store(&s->seq, 0);
	atomic_store(&s->done, 0);
	atomic_store(&s->pid, getpid());
	atomic_store(&box[parent].done, atomic_load(&box[parent].seq));
	futex_wake(&box[parent].done);
	member_loop(me);
}

static void spawn(int me)
{
	struct slot *s = &box[me];

	if (fork() == 0)
		become(s->child, me, s->name, s->pages);
}

static void member_loop(int me)
{
	struct slot *s = &box[me];
	uint32_t seen = 0;

	for (;;) {
		uint32_t seq = atomic_load(&s->seq);

		if (seq == seen) {
			futex_wait(&s->seq, seq);
			continue;
		}
		seen = seq;
		if (s->op == OP_QUIT) {
			atomic_store(&s->pid, 0);
			_exit(0);
		}
		spawn(me);	/* the child answers */
	}
}

static int slot_of(pid_t pid)
{
	int i;

	for (i = 0; i < MAX_MEMBERS; i++)
		if (atomic_load(&box[i].pid) == pid)
			return i;
	return -1;
}

static int free_slot(void)
{
	int i;

	for (i = 1; i < MAX_MEMBERS; i++)
		if (!atomic_load(&box[i].pid))
			return i;
	return -1;
}

/* Posts a command to slot i (not the root's) and waits for the member's answer. */
static void post(int i, int op)
{
	struct slot *s = &box[i];
	uint32_t seq = atomic_load(&s->seq) + 1;

	s->op = op;
	atomic_store(&s->seq, seq);
	futex_wake(&s->seq);
	while (atomic_load(&s->done) != seq)
		futex_wait(&s->done, atomic_load(&s->done));
}

static void cmd_spawn(pid_t parent, const char *name, long pages)
{
	int p = slot_of(parent), c = free_slot();
	char extra[32];

	if (p < 0 || c < 0 || pages < 1) {
		errno = p < 0 ? ESRCH : c < 0 ? ENOSPC : EINVAL;
		wl_fail("spawn");
		return;
	}
	atomic_store(&box[c].pid, -1);	/* taken */
	box[p].child = c;
	box[p].pages = (int32_t)pages;
	snprintf(box[p].name, sizeof(box[p].name), "%.15s", name);
	if (p == 0) {
		uint32_t seq = atomic_load(&box[0].seq) + 1;

		atomic_store(&box[0].seq, seq);
		spawn(0);
		while (atomic_load(&box[0].done) != seq)
			futex_wait(&box[0].done, atomic_load(&box[0].done));
	} else {
		post(p, OP_SPAWN);
	}
	snprintf(extra, sizeof(extra), "%d", (int)atomic_load(&box[c].pid));
	wl_done(extra);
}

static void cmd_quit(pid_t pid)
{
	int i = slot_of(pid), fd;
	struct pollfd pf;

	if (i <= 0) {
		errno = ESRCH;
		wl_fail("quit");
		return;
	}
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0) {
		wl_fail("pidfd_open");
		return;
	}
	box[i].op = OP_QUIT;
	atomic_store(&box[i].seq, atomic_load(&box[i].seq) + 1);
	futex_wake(&box[i].seq);
	pf = (struct pollfd){ .fd = fd, .events = POLLIN };
	while (poll(&pf, 1, -1) < 0 && errno == EINTR)
		;
	close(fd);
	wl_done(NULL);
}

int main(int argc, char **argv)
{
	char line[256], name[64];
	long a, b;
	int i;

	if (argc == 3 && !strcmp(argv[1], "--name"))
		prctl(PR_SET_NAME, argv[2]);
	signal(SIGCHLD, SIG_IGN);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	box = mmap(NULL, MAX_MEMBERS * sizeof(*box), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (box == MAP_FAILED)
		wl_die("failed to map the mailbox");
	atomic_store(&box[0].pid, getpid());
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "spawn %ld %63s %ld", &a, name, &b) == 3) {
			cmd_spawn((pid_t)a, name, b);
		} else if (sscanf(line, "quit %ld", &a) == 1) {
			cmd_quit((pid_t)a);
		} else if (!strncmp(line, "exit", 4)) {
			break;
		} else {
			errno = EINVAL;
			wl_fail("unknown command");
		}
	}
	for (i = 1; i < MAX_MEMBERS; i++) {
		pid_t pid = atomic_load(&box[i].pid);

		if (pid > 0)
			kill(pid, SIGKILL);
	}
	return 0;
}
