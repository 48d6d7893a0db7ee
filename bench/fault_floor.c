// SPDX-License-Identifier: GPL-2.0
/*
 * The floor of any page-fault hook here: an empty BPF program (r0 = 0; exit) on
 * tp_btf/page_fault_user, the attach point trace mode uses.  Prints "ready" once attached
 * and holds the link until stdin closes (bench/fault_hook_cost.py).  Built from two
 * instructions rather than an object file: nothing here should cost more than the kernel's
 * tracepoint and the program call.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

int main(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP);
	int btf_id, fd, link;
	char buf[64];

	btf_id = libbpf_find_vmlinux_btf_id("page_fault_user", BPF_TRACE_RAW_TP);
	if (btf_id < 0) {
		fprintf(stderr, "fault_floor: no page_fault_user in the kernel's BTF: %s\n",
			strerror(-btf_id));
		return 1;
	}
	opts.attach_btf_id = btf_id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "empty_fault", "GPL", insns, 2, &opts);
	if (fd < 0) {
		fprintf(stderr, "fault_floor: load: %s\n", strerror(errno));
		return 1;
	}
	link = bpf_raw_tracepoint_open(NULL, fd);
	if (link < 0) {
		fprintf(stderr, "fault_floor: attach: %s\n", strerror(errno));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}
