// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "kernel/kfeatures.h"
#include "kernel/kbtf.h"
#include "kernel/libbpf_log.h"
#include "lib/log.h"
#include "lib/page.h"
#include "kernel/pagemap.h"
#include "kernel/cachestat.h"
#include "kernel/kpage.h"
#include "kernel/procfs.h"
#include "kernel/procmap.h"
#include "kernel/seccomp_probe.h"

static const struct {
	const char *name;
	uint32_t bit;
} disable_names[] = {
	{ "tp_btf", DIS_TP_BTF },
	{ "tracefs", DIS_TRACEFS },
	{ "syscall_tp", DIS_SYSCALL_TP },
	{ "pagemap_scan", DIS_PAGEMAP_SCAN },
	{ "kernel_faults", DIS_KERNEL_FAULTS },
	{ "rss", DIS_RSS },
	{ "fentry", DIS_FENTRY },
	{ "kprobe", DIS_KPROBE },
	{ "smaps", DIS_SMAPS },
	{ "btf", DIS_BTF },
	{ "uffd", DIS_UFFD },
	{ "mmap_lock", DIS_MMAP_LOCK },
	{ "procmap_query", DIS_PROCMAP_QUERY },
	{ "seccomp_suspend", DIS_SECCOMP_SUSPEND },
	{ "uffd_syscall", DIS_UFFD_SYSCALL },
	{ "uffd_dev", DIS_UFFD_DEV },
	{ "task_iter", DIS_TASK_ITER },
	{ "fcache_bpf", DIS_FCACHE_BPF },
	{ "kpagecount", DIS_KPAGECOUNT },
	{ "observer", DIS_OBSERVER },
	{ "detach_child", DIS_DETACH_CHILD },
	{ "dirty_tp", DIS_DIRTY_TP },
	{ "maps_text", DIS_MAPS_TEXT },
	{ "fault_rings", DIS_FAULT_RINGS },
	{ "meminfo_anon", DIS_MEMINFO_ANON },
	{ "vma_pass", DIS_VMA_PASS },
};

const char *kfeatures_disable_names(void)
{
	return "tp_btf, tracefs, syscall_tp, pagemap_scan, kernel_faults, rss, fentry, kprobe, "
	       "smaps, btf, uffd, mmap_lock, procmap_query, seccomp_suspend, uffd_syscall, uffd_dev, "
	       "task_iter, fcache_bpf, kpagecount, observer, detach_child, dirty_tp, maps_text, "
	       "fault_rings, meminfo_anon, vma_pass";
}

int kfeatures_parse_disable(const char *list, uint32_t *mask)
{
	char *copy = strdup(list), *tok, *save = NULL;
	bool named = false;
	size_t i;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		for (char *c = tok; *c; c++)
			if (*c == '-')
				*c = '_';	/* seccomp-suspend reads as seccomp_suspend */
		for (i = 0; i < sizeof(disable_names) / sizeof(disable_names[0]); i++)
			if (!strcmp(tok, disable_names[i].name))
				break;
		if (i == sizeof(disable_names) / sizeof(disable_names[0])) {
			log_err("unknown feature '%s' to disable (known: %s)", tok,
				kfeatures_disable_names());
			free(copy);
			return -EINVAL;
		}
		*mask |= disable_names[i].bit;
		named = true;
	}
	free(copy);
	if (!named) {
		log_err("--disable needs a feature name (known: %s)", kfeatures_disable_names());
		return -EINVAL;
	}
	return 0;
}

static const char *hook_name(enum hook h)
{
	static const char *names[HOOK_COUNT] = {
		[HOOK_FAULT] = "user page faults",
		[HOOK_KFAULT] = "kernel faults on user memory",
		[HOOK_SYSCALLS] = "mm syscalls",
		[HOOK_FORK] = "fork",
		[HOOK_EXEC] = "exec",
		[HOOK_EXIT] = "exit",
		[HOOK_RSS] = "rss counters",
		[HOOK_LAYOUT] = "layout changes",
	};
	return h < HOOK_COUNT ? names[h] : "?";
}

const char *kfeatures_attach_name(enum attach a)
{
	switch (a) {
	case AT_NONE: return "none";
	case AT_TP_BTF: return "tp_btf";
	case AT_TP: return "tracepoint";
	case AT_TP_PER_SYSCALL: return "tracepoint syscalls/sys_exit_*";
	case AT_TP_BTF_RAW_SYSCALLS: return "tp_btf sys_exit";
	case AT_TP_RAW_SYSCALLS: return "tracepoint raw_syscalls/sys_exit";
	case AT_FENTRY: return "fentry handle_mm_fault";
	case AT_KPROBE: return "kprobe handle_mm_fault";
	case AT_COVERED: return "covered by the fault hook";
	case AT_TP_BTF_MMAP_LOCK: return "tp_btf mmap_lock_released";
	}
	return "?";
}

/*
 * Every BPF program names a process by task->tgid (bpf_get_current_pid_tgid() too), its
 * pid in the kernel's root pid namespace, and the engine matches those to /proc's pids and
 * kill()s, which are the reader's.  In a nested pid namespace (mevitop run in a container)
 * the two differ: a fork record's pid, or a pass's, would be taken for another process's.
 * The root pid namespace's inode number is fixed (PROC_PID_INIT_INO,
 * include/linux/proc_ns.h, since 3.8); NSpid in /proc/self/status would not do: a procfs
 * mounted in the namespace lists its levels only.
 */
#define PROC_PID_INIT_INO_	0xEFFFFFFCu

static bool in_root_pidns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) || st.st_ino == PROC_PID_INIT_INO_;
}

/* Loads "r0 = 0; exit" as a tracing program against a BTF id: the cheapest honest answer to
 * "can this kernel attach tp_btf / fentry here?" (fentry loads fail with EPERM on some). */
static bool probe_tracing_prog(struct btf *vmlinux, enum bpf_attach_type type,
			       const char *btf_name, int kind)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type);
	int id, fd;

	if (!vmlinux)
		return false;
	id = btf__find_by_name_kind(vmlinux, btf_name, kind);
	if (id <= 0)
		return false;
	opts.attach_btf_id = id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "mevitop_probe", "GPL", insns, 2, &opts);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* The byte offset of member name in struct id, looked for through anonymous members too
 * (anon_name sat in an anonymous union in 5.17-6.x); 0 when it has none. */
static uint32_t member_off(const struct btf *btf, int id, const char *name, uint32_t base)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, id));
	const struct btf_member *m;

	if (!t || (!btf_is_struct(t) && !btf_is_union(t)))
		return 0;
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);
		uint32_t off = base + btf_member_bit_offset(t, i) / 8, in;

		if (n && !strcmp(n, name))
			return off;
		if ((!n || !*n) && (in = member_off(btf, m->type, name, off)))
			return in;
	}
	return 0;
}

/* Where the VMA pass finds an anonymous name: read at an offset found here, not by a CO-RE
 * relocation: on a kernel without the field that relocation's failed candidate search cost
 * ~10 ms of libbpf's load here (measured, 12 starts; the cause inside libbpf not traced). */
static uint32_t vma_anon_name_off(const struct btf *vmlinux)
{
	int id = vmlinux ? btf__find_by_name_kind(vmlinux, "vm_area_struct", BTF_KIND_STRUCT) : -1;

	return id > 0 ? member_off(vmlinux, id, "anon_name", 0) : 0;
}

static bool btf_has_tp(struct btf *vmlinux, const char *tp)
{
	char name[128];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return vmlinux && btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF) > 0;
}

static bool tracefs_has(const struct features *f, const char *event)
{
	char path[256];

	if (!f->tracefs)
		return false;
	snprintf(path, sizeof(path), "%s/events/%s/id", f->tracefs_path, event);
	return access(path, R_OK) == 0;
}

static bool find_tracefs(struct features *f)
{
	static const char *paths[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char ev[128];
	size_t i;

	for (i = 0; i < 2; i++) {
		snprintf(ev, sizeof(ev), "%s/events", paths[i]);
		if (access(ev, F_OK) == 0) {
			snprintf(f->tracefs_path, sizeof(f->tracefs_path), "%s", paths[i]);
			return true;
		}
	}
	return false;
}

/* "always", "madvise" or "never" (and "inherit" for the per-size files) in a THP setting. */
static int thp_setting(const char *buf, int inherit)
{
	if (strstr(buf, "[always]"))
		return THP_ALWAYS;
	if (strstr(buf, "[madvise]"))
		return THP_MADVISE;
	if (strstr(buf, "[inherit]"))
		return inherit;
	return THP_NEVER;
}

/* What an anonymous fault may map: the strongest setting over every THP size.  Since 6.8
 * each size (16 KiB .. 2 MiB) has its own switch, "inherit" taking the top-level one; a
 * fault then maps a folio of an enabled size (e.g. 16 pages for 64 KiB "always") and the
 * engine must scan the faulting page's PMD, not just the page. */
static void probe_thp(struct features *f)
{
	char buf[256];
	int i, top = THP_NEVER, best = THP_NEVER;
	bool sized = false;

	if (procfs_read_file("/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof(buf)) > 0)
		top = thp_setting(buf, THP_NEVER);
	for (i = 3; i < 12; i++) {
		char path[128];
		int v;

		snprintf(path, sizeof(path),
			 "/sys/kernel/mm/transparent_hugepage/hugepages-%dkB/enabled", 1 << i);
		if (procfs_read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		sized = true;
		v = thp_setting(buf, top);
		if (v != THP_NEVER)
			f->thp_sizes_kb_mask |= 1ULL << i;
		if (v > best)
			best = v;
	}
	f->thp = sized ? (enum thp_mode)best : (enum thp_mode)top;
	f->fault_around_bytes = 65536;
	if (procfs_read_file("/sys/kernel/debug/fault_around_bytes", buf, sizeof(buf)) > 0)
		f->fault_around_bytes = strtoull(buf, NULL, 0) ?: PAGE_SIZE_4K;
}

static void probe_uffd(struct features *f)
{
	struct uffd_caps *c = &f->uffd_ways;

	if (f->disabled & DIS_UFFD) {
		f->uffd_errno = ENOSYS;		/* as on a kernel without CONFIG_USERFAULTFD */
		return;
	}
	uffd_caps_probe(c, f->disabled & DIS_UFFD_SYSCALL, f->disabled & DIS_UFFD_DEV);
	f->uffd = c->syscall || c->dev;
	f->uffd_features = c->features;
	/* both switched off: like a kernel without userfaultfd; else the syscall's reason */
	f->uffd_errno = f->uffd ? 0 : c->syscall_errno ? c->syscall_errno :
			c->dev_errno ? c->dev_errno : ENOSYS;
}

/* Chooses each hook's attach point from what was probed.  `tracefs_ok` says whether classic
 * tracepoints may be used (mounted, or mountable and allowed). */
static void choose_hooks(struct features *f, struct btf *vmlinux, bool tracefs_ok)
{
	bool btf_ok = f->tp_btf && !(f->disabled & DIS_TP_BTF);
	bool tp_ok = tracefs_ok && !(f->disabled & DIS_TRACEFS);
	bool fentry_ok = f->fentry && !(f->disabled & DIS_FENTRY);
	bool kprobe_ok = f->kprobes && !(f->disabled & DIS_KPROBE);
	enum attach *h = f->hook;

	/* Before mounting, assume the classic events exist when their BTF class does. */
#define TP_EXISTS(ev) (tp_ok && (f->tracefs ? tracefs_has(f, ev) : true))

	if (btf_ok && btf_has_tp(vmlinux, "page_fault_user"))
		h[HOOK_FAULT] = AT_TP_BTF;
	else if (TP_EXISTS("exceptions/page_fault_user"))
		h[HOOK_FAULT] = AT_TP;
	else if (fentry_ok)
		h[HOOK_FAULT] = AT_FENTRY;
	else if (kprobe_ok)
		h[HOOK_FAULT] = AT_KPROBE;
	else
		h[HOOK_FAULT] = AT_NONE;

	if (f->disabled & DIS_KERNEL_FAULTS)
		h[HOOK_KFAULT] = AT_NONE;
	else if (h[HOOK_FAULT] == AT_FENTRY || h[HOOK_FAULT] == AT_KPROBE)
		h[HOOK_KFAULT] = AT_COVERED;
	else if (btf_ok && btf_has_tp(vmlinux, "page_fault_kernel"))
		h[HOOK_KFAULT] = AT_TP_BTF;
	else if (TP_EXISTS("exceptions/page_fault_kernel"))
		h[HOOK_KFAULT] = AT_TP;
	else
		h[HOOK_KFAULT] = AT_NONE;

	/* Per-syscall tracepoints first: only mm syscalls pay.  The raw hooks run a program on
	 * every syscall of every process. */
	f->btf_raw_syscalls = btf_ok && btf_has_tp(vmlinux, "sys_exit");
	if (!(f->disabled & DIS_SYSCALL_TP) && TP_EXISTS("syscalls/sys_exit_mmap"))
		h[HOOK_SYSCALLS] = AT_TP_PER_SYSCALL;
	else if (f->btf_raw_syscalls)
		h[HOOK_SYSCALLS] = AT_TP_BTF_RAW_SYSCALLS;
	else if (TP_EXISTS("raw_syscalls/sys_exit"))
		h[HOOK_SYSCALLS] = AT_TP_RAW_SYSCALLS;
	else
		h[HOOK_SYSCALLS] = AT_NONE;

	h[HOOK_FORK] = btf_ok && btf_has_tp(vmlinux, "sched_process_fork") ? AT_TP_BTF :
		       TP_EXISTS("sched/sched_process_fork") ? AT_TP : AT_NONE;
	h[HOOK_EXEC] = btf_ok && btf_has_tp(vmlinux, "sched_process_exec") ? AT_TP_BTF :
		       TP_EXISTS("sched/sched_process_exec") ? AT_TP : AT_NONE;
	h[HOOK_EXIT] = btf_ok && btf_has_tp(vmlinux, "sched_process_exit") ? AT_TP_BTF :
		       TP_EXISTS("sched/sched_process_exit") ? AT_TP : AT_NONE;

	if (f->disabled & DIS_RSS)
		h[HOOK_RSS] = AT_NONE;
	else if (btf_ok && btf_has_tp(vmlinux, "rss_stat"))
		h[HOOK_RSS] = AT_TP_BTF;
	else if (TP_EXISTS("kmem/rss_stat"))
		h[HOOK_RSS] = AT_TP;
	else
		h[HOOK_RSS] = AT_NONE;

	/* Only as tp_btf: the classic event's detach would wait for an RCU grace period, and
	 * where it is missing the syscall hooks say the same (and more). */
	if (!(f->disabled & DIS_MMAP_LOCK) && btf_ok && btf_has_tp(vmlinux, "mmap_lock_released"))
		h[HOOK_LAYOUT] = AT_TP_BTF_MMAP_LOCK;
	else
		h[HOOK_LAYOUT] = AT_NONE;
	/* The page cache (doc/pagecache.md): the walk is driven from tp_btf/task_rename, the
	 * per-file counts come from the filemap tracepoints; both only as tp_btf. */
	f->fcache_walk = !(f->disabled & DIS_FCACHE_BPF) && btf_ok &&
			 btf_has_tp(vmlinux, "task_rename");
	f->filemap_tp = !(f->disabled & DIS_FCACHE_BPF) && btf_ok &&
			btf_has_tp(vmlinux, "mm_filemap_add_to_page_cache") &&
			btf_has_tp(vmlinux, "mm_filemap_delete_from_page_cache");
	f->dirty_tp = f->filemap_tp && !(f->disabled & DIS_DIRTY_TP) &&
		      btf_has_tp(vmlinux, "writeback_dirty_folio");
	/* Only the exceptions tracepoints' user-mode faults can use a ring per CPU: the
	 * handle_mm_fault hooks are not on a store-ordered architecture (bpf/faults.bpf.c). */
	f->fault_rings = !(f->disabled & DIS_FAULT_RINGS) &&
			 (h[HOOK_FAULT] == AT_TP_BTF || h[HOOK_FAULT] == AT_TP);
#undef TP_EXISTS
}

/* cachestat(2) (6.5+) on an fd of our own: ENOSYS where the kernel lacks it. */
static bool cachestat_supported(void)
{
	struct cstat c;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = cachestat_read(fd, 0, 0, &c) == 0;
	close(fd);
	return ok;
}

static bool needs_tracefs(const struct features *f)
{
	int i;

	for (i = 0; i < HOOK_COUNT; i++)
		if (f->hook[i] == AT_TP || f->hook[i] == AT_TP_PER_SYSCALL ||
		    f->hook[i] == AT_TP_RAW_SYSCALLS)
			return true;
	return false;
}

int kfeatures_probe(struct features *f, char *why, size_t whylen)
{
	struct btf *vmlinux = NULL;
	bool mountable;

	f->root = geteuid() == 0;
	f->btf = !(f->disabled & DIS_BTF) && access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	f->pagemap_scan = pagemap_scan_supported();
	f->procmap_query = procmap_query_supported();
	f->cachestat = cachestat_supported();
	f->kpagecount = !(f->disabled & DIS_KPAGECOUNT) && kpage_probe() == 0;
	probe_thp(f);
	probe_uffd(f);
	seccomp_probe(f);

	libbpf_log_quiet(true);
	f->ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	/* This parse is the one the BPF objects loaded at start use too (kbtf.h); the
	 * btf__free() below keeps it until engine_start() is done. */
	kbtf_hold();
	if (f->btf) {
		vmlinux = btf__load_vmlinux_btf();
		if (!vmlinux)
			vmlinux = NULL;
	}
	f->tp_btf = probe_tracing_prog(vmlinux, BPF_TRACE_RAW_TP, "btf_trace_page_fault_user",
				       BTF_KIND_TYPEDEF) ||
		    probe_tracing_prog(vmlinux, BPF_TRACE_RAW_TP, "btf_trace_sched_process_exec",
				       BTF_KIND_TYPEDEF);
	f->fentry = !(f->disabled & DIS_FENTRY) &&
		    probe_tracing_prog(vmlinux, BPF_TRACE_FENTRY, "handle_mm_fault", BTF_KIND_FUNC);
	/* The iterator's context type (5.8+) and bpf_map_lookup_percpu_elem (5.19+, its rss
	 * sums measure the per-CPU offsets with it), or the skeleton would not load; without
	 * them /proc is read per process. */
	f->task_iter = !(f->disabled & DIS_TASK_ITER) && vmlinux &&
		       btf__find_by_name_kind(vmlinux, "bpf_iter__task", BTF_KIND_STRUCT) > 0 &&
		       libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT,
					       BPF_FUNC_map_lookup_percpu_elem, NULL) == 1;
	f->vma_iter = f->task_iter && !(f->disabled & DIS_VMA_PASS) &&
		      btf__find_by_name_kind(vmlinux, "bpf_iter__task_vma", BTF_KIND_STRUCT) > 0;
	f->vma_anon_name_off = vma_anon_name_off(vmlinux);
	libbpf_log_quiet(false);
	f->kprobes = access("/sys/bus/event_source/devices/kprobe/type", R_OK) == 0;

	f->tracefs = !(f->disabled & DIS_TRACEFS) && find_tracefs(f);
	mountable = !f->tracefs && !(f->disabled & DIS_TRACEFS) && f->root;
	choose_hooks(f, vmlinux, f->tracefs || mountable);
	if (!f->tracefs && mountable && needs_tracefs(f)) {
		/* Classic tracepoints are looked up by id under tracefs; it is not mounted at
		 * boot on every system.  Mounting it changes nothing else. */
		if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0) {
			f->tracefs = f->tracefs_mounted_by_us = true;
			snprintf(f->tracefs_path, sizeof(f->tracefs_path), "/sys/kernel/tracing");
			log_info("mounted tracefs at /sys/kernel/tracing");
		} else {
			log_info("could not mount tracefs: %s", strerror(errno));
		}
		choose_hooks(f, vmlinux, f->tracefs);
	} else if (f->tracefs) {
		choose_hooks(f, vmlinux, true);
	}
	btf__free(vmlinux);

	if (!f->root) {
		snprintf(why, whylen, "mevitop needs root (CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE) "
			 "to load BPF programs and read other processes' pagemap: run it with sudo");
		return -EPERM;
	}
	if (!in_root_pidns()) {
		snprintf(why, whylen, "mevitop runs in the root pid namespace only: its BPF "
			 "programs see the kernel's pids, not this namespace's (run it on the host, "
			 "or in a container that shares the host's, e.g. docker run --pid=host)");
		return -ENOTSUP;
	}
	if (!f->btf) {
		snprintf(why, whylen, "this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): "
			 "mevitop's CO-RE programs need CONFIG_DEBUG_INFO_BTF=y");
		return -ENOTSUP;
	}
	if (!f->ringbuf) {
		snprintf(why, whylen, "this kernel has no BPF ring buffer (Linux 5.8+ needed)");
		return -ENOTSUP;
	}
	if (f->hook[HOOK_FAULT] == AT_NONE) {
		snprintf(why, whylen, "no page-fault hook is available: need tp_btf or the "
			 "exceptions tracepoints (x86), or fentry/kprobes on handle_mm_fault");
		return -ENOTSUP;
	}
	if (f->hook[HOOK_SYSCALLS] == AT_NONE) {
		snprintf(why, whylen, "no syscall hook is available (syscall tracepoints, "
			 "raw_syscalls via tp_btf or tracefs)");
		return -ENOTSUP;
	}
	if (f->hook[HOOK_FORK] == AT_NONE || f->hook[HOOK_EXEC] == AT_NONE ||
	    f->hook[HOOK_EXIT] == AT_NONE) {
		snprintf(why, whylen, "no process lifecycle hook is available (sched tracepoints)");
		return -ENOTSUP;
	}
	return 0;
}

static const char *yes(bool b)
{
	return b ? "yes" : "no";
}

/* One way of giving targets a userfaultfd: yes, no (why), or switched off. */
static void uffd_way_print(const char *name, bool ok, int err, const char *scope)
{
	if (ok)
		printf("  %-28s yes%s\n", name, scope);
	else if (!err)
		printf("  %-28s no (disabled by switch)\n", name);
	else
		printf("  %-28s no (%s)\n", name, strerror(err));
}

void kfeatures_print(const struct features *f, bool json)
{
	static const char *thp[] = { "never", "madvise", "always" };
	static const char *sc_how[] = {
		[SC_SUSPEND] = "suspend filters while held (PTRACE_O_SUSPEND_SECCOMP)",
		[SC_PROVE] = "prove each injected call allowed (PTRACE_SECCOMP_GET_FILTER)",
		[SC_REFUSE] = "refuse processes with a filter",
	};
	char sc_why[128];
	enum seccomp_path sc = seccomp_probe_path(f, sc_why, sizeof(sc_why));
	int i;

	if (json) {
		printf("{\"root\": %s, \"btf\": %s, \"ringbuf\": %s, \"tp_btf\": %s, "
		       "\"tracefs\": %s, \"tracefs_mounted_by_mevitop\": %s, \"kprobes\": %s, "
		       "\"fentry\": %s, \"pagemap_scan\": %s, \"procmap_query\": %s, "
		       "\"task_iter\": %s, \"userfaultfd\": %s, \"userfaultfd_syscall\": %s, "
		       "\"userfaultfd_dev\": %s, \"userfaultfd_wp\": %s, "
		       "\"userfaultfd_features\": \"0x%llx\", \"exact_seccomp\": \"%s\", "
		       "\"thp\": \"%s\", \"cachestat\": %s, \"filemap_tracepoints\": %s, "
		       "\"dirtied_tracepoint\": %s, \"fault_rings\": %s, "
		       "\"page_cache_walk\": %s, \"kpagecount\": %s, "
		       "\"fault_around_bytes\": %llu, \"disabled\": \"0x%x\", \"hooks\": {",
		       f->root ? "true" : "false", f->btf ? "true" : "false",
		       f->ringbuf ? "true" : "false", f->tp_btf ? "true" : "false",
		       f->tracefs ? "true" : "false",
		       f->tracefs_mounted_by_us ? "true" : "false", f->kprobes ? "true" : "false",
		       f->fentry ? "true" : "false", f->pagemap_scan ? "true" : "false",
		       f->procmap_query ? "true" : "false", f->task_iter ? "true" : "false",
		       f->uffd ? "true" : "false",
		       f->uffd_ways.syscall ? "true" : "false", f->uffd_ways.dev ? "true" : "false",
		       f->uffd_ways.wp ? "true" : "false", (unsigned long long)f->uffd_features,
		       seccomp_probe_path_name(sc), thp[f->thp], f->cachestat ? "true" : "false",
		       f->filemap_tp ? "true" : "false", f->dirty_tp ? "true" : "false",
		       f->fault_rings ? "true" : "false", f->fcache_walk ? "true" : "false",
		       f->kpagecount ? "true" : "false",
		       (unsigned long long)f->fault_around_bytes,
		       f->disabled);
		for (i = 0; i < HOOK_COUNT; i++)
			printf("%s\"%s\": \"%s\"", i ? ", " : "", hook_name(i),
			       kfeatures_attach_name(f->hook[i]));
		printf("}}\n");
		return;
	}
	printf("kernel features\n");
	printf("  %-28s %s\n", "root", yes(f->root));
	printf("  %-28s %s\n", "BTF (/sys/kernel/btf/vmlinux)", yes(f->btf));
	printf("  %-28s %s\n", "BPF ring buffer", yes(f->ringbuf));
	printf("  %-28s %s%s\n", "tp_btf", yes(f->tp_btf),
	       f->disabled & DIS_TP_BTF ? " (disabled by switch)" : "");
	printf("  %-28s %s%s%s\n", "tracefs", f->tracefs ? f->tracefs_path : "no",
	       f->tracefs_mounted_by_us ? " (mounted by mevitop)" : "",
	       f->disabled & DIS_TRACEFS ? " (disabled by switch)" : "");
	printf("  %-28s %s%s\n", "kprobes", yes(f->kprobes),
	       f->disabled & DIS_KPROBE ? " (disabled by switch)" : "");
	printf("  %-28s %s%s\n", "fentry", yes(f->fentry),
	       f->disabled & DIS_FENTRY ? " (disabled by switch)" : "");
	printf("  %-28s %s%s\n", "PAGEMAP_SCAN", yes(f->pagemap_scan),
	       f->disabled & DIS_PAGEMAP_SCAN ? " (disabled by switch: pread fallback)" : "");
	printf("  %-28s %s%s\n", "PROCMAP_QUERY", yes(f->procmap_query),
	       f->disabled & DIS_PROCMAP_QUERY ? " (disabled by switch: text of /proc/PID/maps)" : "");
	printf("  %-28s %s%s\n", "task iterator", yes(f->task_iter),
	       f->disabled & DIS_TASK_ITER ? " (disabled by switch: /proc/PID/stat per process)" : "");
	if (f->uffd)
		printf("  %-28s yes (features 0x%llx)\n", "userfaultfd",
		       (unsigned long long)f->uffd_features);
	else
		printf("  %-28s no (%s)\n", "userfaultfd", strerror(f->uffd_errno));
	uffd_way_print("userfaultfd() in targets", f->uffd_ways.syscall,
		       f->uffd_ways.syscall_errno, " (root or CAP_SYS_PTRACE targets)");
	uffd_way_print("/dev/userfaultfd handoff", f->uffd_ways.dev, f->uffd_ways.dev_errno,
		       " (targets of any user)");
	printf("  %-28s %s\n", "exact mode creates uffd by", uffd_caps_paths(&f->uffd_ways));
	printf("  %-28s %s%s%s%s\n", "seccomp (exact mode)", sc_how[sc], sc_why[0] ? " (suspension: " : "",
	       sc_why, sc_why[0] ? ")" : "");
	printf("  %-28s %s", "transparent huge pages", thp[f->thp]);
	for (i = 3; i < 12; i++)
		if (f->thp_sizes_kb_mask & (1ULL << i))
			printf(" %dK", 1 << i);
	printf("\n");
	printf("  %-28s %llu\n", "fault_around_bytes", (unsigned long long)f->fault_around_bytes);
	printf("  %-28s %s\n", "cachestat(2)", yes(f->cachestat));
	printf("  %-28s %s%s\n", "filemap tracepoints", yes(f->filemap_tp),
	       f->disabled & DIS_FCACHE_BPF ? " (disabled by switch)" : "");
	printf("  %-28s %s%s\n", "dirtied pages tracepoint", yes(f->dirty_tp),
	       f->disabled & (DIS_DIRTY_TP | DIS_FCACHE_BPF) ? " (disabled by switch)" : "");
	printf("  %-28s %s%s\n", "per-CPU fault rings (trace)", yes(f->fault_rings),
	       f->disabled & DIS_FAULT_RINGS ? " (disabled by switch: the events ring)" : "");
	printf("  %-28s %s\n", "page cache files from",
	       f->fcache_walk ? "a BPF walk of every superblock's inodes (tp_btf/task_rename)" :
	       "/proc/PID/fd and maps (no walk: files nobody holds are missing)");
	printf("  %-28s %s%s\n", "PFNs, kpagecount (--sharing)", yes(f->kpagecount),
	       f->disabled & DIS_KPAGECOUNT ? " (disabled by switch)" : "");
	printf("hooks\n");
	for (i = 0; i < HOOK_COUNT; i++)
		printf("  %-28s %s\n", hook_name(i), kfeatures_attach_name(f->hook[i]));
}
