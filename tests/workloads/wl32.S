/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A 32-bit (i386) process for exact mode's refusal test, built without libc (-m32
 * -nostdlib: the 32-bit C library is not installed): prints "ready PID" and pauses forever.
 */
	.text
	.globl	_start
_start:
	movl	$20, %eax		/* getpid */
	int	$0x80
	movl	$buf_end, %edi		/* the digits, written backwards */
	movl	$10, %ecx
1:	xorl	%edx, %edx
	divl	%ecx
	addb	$'0', %dl
	decl	%edi
	movb	%dl, (%edi)
	testl	%eax, %eax
	jnz	1b
	subl	$6, %edi		/* "ready " before them */
	movl	$0x64616572, (%edi)	/* "read" */
	movw	$0x2079, 4(%edi)	/* "y " */
	movl	$4, %eax		/* write(1, edi, buf_end + 1 - edi) */
	movl	$1, %ebx
	movl	%edi, %ecx
	movl	$buf_end + 1, %edx
	subl	%edi, %edx
	int	$0x80
2:	movl	$29, %eax		/* pause */
	int	$0x80
	jmp	2b

	.data
buf:	.space	32
buf_end: .byte	'\n'
