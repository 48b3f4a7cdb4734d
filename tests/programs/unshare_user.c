/* tests/programs/unshare_user.c: a program that used threads (they have all
   ended) enters a new user namespace, which the kernel allows only to a
   single-threaded process. Prints "unshare 0" or "unshare -1 <errno name>".

     unshare_user */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void* idle(void* p) {
  return p;
}

int main(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, idle, NULL) != 0) return 1;
  pthread_join(t, NULL);
  struct timespec pause = {0, 50 * 1000 * 1000};
  nanosleep(&pause, NULL);
  int rc = unshare(CLONE_NEWUSER);
  if (rc == 0)
    printf("unshare 0\n");
  else
    printf("unshare -1 %s\n", errno == EINVAL ? "EINVAL" : strerror(errno));
  /* Threads still work afterwards. */
  if (pthread_create(&t, NULL, idle, NULL) != 0) return 1;
  pthread_join(t, NULL);
  return 0;
}
