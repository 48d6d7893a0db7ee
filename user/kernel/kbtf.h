/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's BTF, parsed once per start-up (issue 24).  The feature probe and every BPF
 * object libbpf loads (the main skeleton, the page cache's) each parsed
 * /sys/kernel/btf/vmlinux on their own: ~15 ms and ~11 MiB of heap each here.  libbpf 1.1
 * takes no parsed BTF (bpf_object_open_opts has only btf_custom_path, a file it parses
 * again, and only for CO-RE: attach targets still come from its own parse), so kbtf.c
 * stands in front of libbpf's btf__load_vmlinux_btf() and btf__free(), which libbpf calls
 * through its PLT: between kbtf_hold() and kbtf_release() every caller gets the one parse,
 * and its frees are no-ops.
 */
#ifndef MEVITOP_KBTF_H
#define MEVITOP_KBTF_H

/* From now on, the kernel's BTF is parsed at most once, and kept. */
void kbtf_hold(void);
/* Frees the kept parse (the start's last BPF object is loaded); later loads parse again,
 * each their own.  Idempotent; any thread. */
void kbtf_release(void);

#endif
