// SPDX-License-Identifier: GPL-2.0
/*
 * arch_uffd_dev.c (x86-64) - the /dev/userfaultfd handoff chain's bytes (exact/arch.h says
 * what it does).  It keeps the page in %rbx and the new userfaultfd in %r12: the kernel
 * preserves both across `syscall` (it clobbers only rax, rcx and r11), and the thread's
 * own registers come back from its frame at the end.  It uses no stack: the borrowed
 * thread's stack may be a small one in the heap (a green thread's), not ours to write.
 * Page layout: struct msghdr at 0 (msg_control at 0x20, msg_controllen at 0x28), its cmsg
 * buffer at 0x40 (CMSG_SPACE(sizeof(int)) = 24 bytes, the fd at 0x50), sv[2] at 0x60.
 */
#include "exact/arch.h"

#include <string.h>
#include "lib/page.h"

/* The bytes below map and unmap one page: $0x1000 in `mov $0x1000,%esi`. */
_Static_assert(PAGE_SIZE_4K == 0x1000, "the chain's mmap/munmap length is one page");

#define SYSCALL		0x0f, 0x05
#define MOV_EAX(n)	0xb8, (n), 0x00, 0x00, 0x00		/* mov $n,%eax (n < 256) */
#define CLOSE_AT(off)	0x48, 0x63, 0x7b, (off), MOV_EAX(3), SYSCALL	/* close(*(int *)(rbx+off)) */

static const uint8_t head[] = {
	/* mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) */
	0x31, 0xff,				/* xor %edi,%edi */
	0xbe, 0x00, 0x10, 0x00, 0x00,		/* mov $0x1000,%esi */
	0xba, 0x03, 0x00, 0x00, 0x00,		/* mov $3,%edx */
	0x41, 0xba, 0x22, 0x00, 0x00, 0x00,	/* mov $0x22,%r10d */
	0x49, 0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff, /* mov $-1,%r8 */
	0x45, 0x31, 0xc9,			/* xor %r9d,%r9d */
	MOV_EAX(9), SYSCALL,
	0x48, 0x89, 0xc3,			/* mov %rax,%rbx */
	0x48, 0x85, 0xc0,			/* test %rax,%rax */
	0x0f, 0x88,				/* js restore (rel32 follows) */
};

static const uint8_t body[] = {
	/* the page is zero-filled: set msg_control, msg_controllen, fd = -1, sv = {-1, -1} */
	0x48, 0x8d, 0x43, 0x40,			/* lea 0x40(%rbx),%rax */
	0x48, 0x89, 0x43, 0x20,			/* mov %rax,0x20(%rbx) */
	0x48, 0xc7, 0x43, 0x28, 0x18, 0x00, 0x00, 0x00, /* movq $24,0x28(%rbx) */
	0xc7, 0x43, 0x50, 0xff, 0xff, 0xff, 0xff, /* movl $-1,0x50(%rbx) */
	0x48, 0xc7, 0x43, 0x60, 0xff, 0xff, 0xff, 0xff, /* movq $-1,0x60(%rbx) */
	/* socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, rbx + 0x60) */
	0xbf, 0x01, 0x00, 0x00, 0x00,		/* mov $1,%edi */
	0xbe, 0x02, 0x00, 0x08, 0x00,		/* mov $0x80002,%esi */
	0x31, 0xd2,				/* xor %edx,%edx */
	0x4c, 0x8d, 0x53, 0x60,			/* lea 0x60(%rbx),%r10 */
	MOV_EAX(53), SYSCALL,
	CLOSE_AT(0x60),				/* close(sv[0]) */
	/* recvmsg(sv[1], rbx, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) */
	0x48, 0x63, 0x7b, 0x64,			/* movslq 0x64(%rbx),%rdi */
	0x48, 0x89, 0xde,			/* mov %rbx,%rsi */
	0xba, 0x40, 0x00, 0x00, 0x40,		/* mov $0x40000040,%edx */
	MOV_EAX(47), SYSCALL,
	CLOSE_AT(0x64),				/* close(sv[1]) */
	/* ioctl(fd, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK) */
	0x48, 0x63, 0x7b, 0x50,			/* movslq 0x50(%rbx),%rdi */
	0xbe, 0x00, 0xaa, 0x00, 0x00,		/* mov $0xaa00,%esi */
	0xba, 0x00, 0x08, 0x08, 0x00,		/* mov $0x80800,%edx */
	MOV_EAX(16), SYSCALL,
	0x49, 0x89, 0xc4,			/* mov %rax,%r12 */
	0x4c, 0x89, 0xe7,			/* mov %r12,%rdi */
	MOV_EAX(3), SYSCALL,			/* close(uffd) */
	CLOSE_AT(0x50),				/* close(fd) */
	/* munmap(rbx, 4096) */
	0x48, 0x89, 0xdf,			/* mov %rbx,%rdi */
	0xbe, 0x00, 0x10, 0x00, 0x00,		/* mov $0x1000,%esi */
	MOV_EAX(11), SYSCALL,
	0xe9,					/* jmp restore (rel32 follows) */
};

size_t arch_uffd_dev_build(uint8_t *buf, size_t len, uint64_t code_addr, uint64_t restore_addr)
{
	size_t at = 0, n = sizeof(head) + 4 + sizeof(body) + 4;
	int32_t rel;

	if (len < n)
		return 0;
	memcpy(buf, head, sizeof(head));
	at = sizeof(head) + 4;
	rel = (int32_t)((int64_t)restore_addr - (int64_t)(code_addr + at));
	memcpy(buf + sizeof(head), &rel, sizeof(rel));
	memcpy(buf + at, body, sizeof(body));
	at += sizeof(body) + 4;
	rel = (int32_t)((int64_t)restore_addr - (int64_t)(code_addr + at));
	memcpy(buf + at - 4, &rel, sizeof(rel));
	return at;
}
