/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who maps a page: /proc/PID/pagemap's PFN entries and the physical page's map count and
 * flags from /proc/kpagecount and /proc/kpageflags (root only: without CAP_SYS_ADMIN the
 * kernel reports PFN 0).  PAGEMAP_SCAN returns no PFNs, so this reads the 64-bit entries.
 *
 * Costs (FACTS.md): a pagemap pread ~8-13 ns per page; one kpagecount/kpageflags pread
 * per run of nearby PFNs (kpage_lookup coalesces sorted PFNs whose gaps are short); the
 * kernel spends ~110-130 ns per kpagecount or kpageflags entry, ~700 ns a pread.
 */
#ifndef MEVITOP_KPAGE_H
#define MEVITOP_KPAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A pagemap entry (Documentation/admin-guide/mm/pagemap.rst). */
#define KPM_PRESENT	(1ULL << 63)
#define KPM_SWAPPED	(1ULL << 62)
#define KPM_FILE	(1ULL << 61)	/* file page or shared anonymous */
#define KPM_EXCLUSIVE	(1ULL << 56)	/* mapped by this page table entry alone */
#define KPM_PFN_MASK	((1ULL << 55) - 1)

static inline bool kpm_present(uint64_t e)
{
	return e & KPM_PRESENT;
}

static inline uint64_t kpm_pfn(uint64_t e)
{
	return e & KPM_PFN_MASK;
}

/* /proc/kpageflags bits used here (include/uapi/linux/kernel-page-flags.h). */
#define KPF_ANON_BIT	12
#define KPF_KSM_BIT	21
#define KPF_THP_BIT	22
#define KPF_ZERO_BIT	24	/* the zero page or the huge zero folio */

struct kpage {
	int count_fd;		/* /proc/kpagecount */
	int flags_fd;		/* /proc/kpageflags */
	uint64_t preads;	/* lookups' reads, for the cost figures */
};

/* Can this process read PFNs and map counts?  0, or -errno (-EPERM: not root, PFNs
 * hidden; -ENOENT: no /proc/kpagecount).  Probes once on a page of its own. */
int kpage_probe(void);

/* Opens both files; 0 or -errno.  kpage_close accepts a kpage never opened (fds -1). */
int kpage_open(struct kpage *k);
void kpage_close(struct kpage *k);

/* The raw pagemap entries of pages [start, start + n) into out[0..n) (fd: an open
 * /proc/PID/pagemap).  0, -ESRCH when the process is gone, or -errno. */
int kpage_read_entries(int pagemap_fd, uint64_t start, size_t n, uint64_t *out);

enum kpage_file { KPAGE_COUNT, KPAGE_FLAGS };

/* Map counts (KPAGE_COUNT) or flags of n PFNs sorted ascending (duplicates allowed) into
 * out[0..n).  Nearby PFNs are read in one pread.  0 or -errno. */
int kpage_lookup(struct kpage *k, enum kpage_file which, const uint64_t *pfns, size_t n,
		 uint64_t *out);

/* The PFNs this process (mevitop, the observer) maps from files and the vdso, ascending,
 * a PFN once per mapping of it (kpage_self.c says why).  kpage_self_read refills it; 0 or
 * -errno (then it is empty).  kpage_self_discount is a looked-up map count less mevitop's
 * own mappings of it, never below 1 for a page counted at all. */
struct kpage_self {
	uint64_t *pfns;
	size_t n, cap;
	uint64_t entries;	/* pagemap entries read, all refills: the cost */
};
int kpage_self_read(struct kpage_self *s);
uint64_t kpage_self_count(const struct kpage_self *s, uint64_t pfn);
/* counts[i] of pfns[i] (ascending, n of them) less this process's mappings of each. */
void kpage_self_discount(const struct kpage_self *s, const uint64_t *pfns, uint64_t *counts,
			 size_t n);
void kpage_self_free(struct kpage_self *s);

/* KSM: pages shared system-wide (/sys/kernel/mm/ksm/pages_sharing), ksmd's progress
 * (pages_scanned, else full_scans: it moves while ksmd runs), and pid's merged
 * pages (/proc/PID/ksm_merging_pages, 5.19+).  0 or -errno. */
int kpage_ksm_sharing(uint64_t *pages);
int kpage_ksm_scanned(uint64_t *pages);
int kpage_ksm_merging(pid_t pid, uint64_t *pages);

#endif
