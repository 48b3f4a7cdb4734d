/* hooks/kmpc_x86_64.S: __kmpc_fork_call / __kmpc_fork_teams are variadic, so a
   C hook cannot forward their arguments. These stubs save every argument
   register (and %al, the vector-register count of a variadic call), call the
   C pre-hook with the caller's return address, restore everything and jump to
   the original: the runtime sees exactly the call the program made. */
#if defined(__x86_64__)
  .text

.macro PW_KMPC_STUB name, prehook
  .globl \name
  .type \name, @function
\name:
  .cfi_startproc
  pushq %rbp
  .cfi_def_cfa_offset 16
  .cfi_offset %rbp, -16
  movq %rsp, %rbp
  .cfi_def_cfa_register %rbp
  pushq %rdi
  pushq %rsi
  pushq %rdx
  pushq %rcx
  pushq %r8
  pushq %r9
  pushq %rax
  subq $136, %rsp             /* 8 xmm registers + 8 bytes: keeps %rsp 16-aligned */
  movdqu %xmm0, 0(%rsp)
  movdqu %xmm1, 16(%rsp)
  movdqu %xmm2, 32(%rsp)
  movdqu %xmm3, 48(%rsp)
  movdqu %xmm4, 64(%rsp)
  movdqu %xmm5, 80(%rsp)
  movdqu %xmm6, 96(%rsp)
  movdqu %xmm7, 112(%rsp)
  movq 8(%rbp), %rdi          /* the caller's return address */
  call \prehook
  movq %rax, %r11
  movdqu 0(%rsp), %xmm0
  movdqu 16(%rsp), %xmm1
  movdqu 32(%rsp), %xmm2
  movdqu 48(%rsp), %xmm3
  movdqu 64(%rsp), %xmm4
  movdqu 80(%rsp), %xmm5
  movdqu 96(%rsp), %xmm6
  movdqu 112(%rsp), %xmm7
  addq $136, %rsp
  popq %rax
  popq %r9
  popq %r8
  popq %rcx
  popq %rdx
  popq %rsi
  popq %rdi
  popq %rbp
  .cfi_def_cfa %rsp, 8
  testq %r11, %r11
  jz 1f
  jmp *%r11
1:
  ud2                         /* no runtime defines it: the program could not have linked */
  .cfi_endproc
  .size \name, .-\name
.endm

  PW_KMPC_STUB __kmpc_fork_call, pw_kmpc_fork_call_prehook
  PW_KMPC_STUB __kmpc_fork_teams, pw_kmpc_fork_teams_prehook

  .section .note.GNU-stack,"",@progbits
#endif
