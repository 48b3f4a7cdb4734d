/* tests/programs/closed_stdout.c: a program that runs with stdin and stdout
   closed (as under `cmd <&- >&-`) and relies on writes to stdout failing. It
   closes fds 0 and 1, starts a thread (a governed process activates there), then writes to fd 1.

     closed_stdout      exit 0: the write failed with EBADF, as it does bare;
                        exit 1: it succeeded (fd 1 was someone else's file) */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

static void* idle(void* p) {
  return p;
}

int main(void) {
  close(0);
  close(1);
  pthread_t t;
  if (pthread_create(&t, NULL, idle, NULL) != 0) return 2;
  pthread_join(t, NULL);
  static const char text[] = "this must not land in anybody's file\n";
  if (write(1, text, sizeof text - 1) < 0 && errno == EBADF) return 0;
  return 1;
}
