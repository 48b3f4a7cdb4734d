/* tests/programs/stack_use.c: how much of its creator's stack a non-first
   pthread_create uses. A thread on a stack of our own, painted with a pattern,
   creates and joins three threads; the program prints how many bytes at the
   stack's top end were written (glibc's thread descriptor and TLS included,
   which are the same bare and under a preload).

     stack_use        prints "stack N" */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STACK_BYTES (256 * 1024)
#define PAINT 0xAB

static void* nothing(void* arg) {
  return arg;
}

static void* creator(void* arg) {
  for (int i = 0; i < 3; ++i) {
    pthread_t t;
    if (pthread_create(&t, NULL, nothing, NULL) == 0) pthread_join(t, NULL);
  }
  return arg;
}

int main(void) {
  unsigned char* stack = aligned_alloc(4096, STACK_BYTES);
  if (!stack) return 1;
  memset(stack, PAINT, STACK_BYTES);
  /* The process's first thread (a preload activates there): not the one measured. */
  pthread_t first;
  if (pthread_create(&first, NULL, nothing, NULL) != 0) return 1;
  pthread_join(first, NULL);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (pthread_attr_setstack(&attr, stack, STACK_BYTES) != 0) return 1;
  pthread_t t;
  if (pthread_create(&t, &attr, creator, NULL) != 0) return 1;
  pthread_join(t, NULL);
  size_t untouched = 0;
  while (untouched < STACK_BYTES && stack[untouched] == PAINT) ++untouched;
  printf("stack %zu\n", (size_t)STACK_BYTES - untouched);
  return 0;
}
