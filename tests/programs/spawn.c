/* tests/programs/spawn.c: posix_spawn and posix_spawnp from a (possibly
   pinned) thread. Prints each child's exit status, and the child's own
   Cpus_allowed_list as the child reads it, which must be the whole
   process's set, not the spawning thread's core. */
#define _GNU_SOURCE
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

static int wait_child(pid_t pid) {
  int st = 0;
  if (waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Spawns argv, returns its exit status; its stdout goes into out. */
static int spawn_capture(int use_p, char* const argv[], char* out, size_t len) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  pid_t pid;
  int rc = use_p ? posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ)
                 : posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    snprintf(out, len, "spawn error %d", rc);
    return -1;
  }
  size_t off = 0;
  ssize_t n;
  while (off + 1 < len && (n = read(fds[0], out + off, len - 1 - off)) > 0) off += (size_t)n;
  out[off] = '\0';
  close(fds[0]);
  out[strcspn(out, "\n")] = '\0';
  return wait_child(pid);
}

static void* spawner(void* unused) {
  (void)unused;
  char out[512];
  char* sh[] = {"/bin/sh", "-c", "echo from sh; exit 3", NULL};
  int st = spawn_capture(0, sh, out, sizeof out);
  printf("posix_spawn sh: \"%s\" exit %d\n", out, st);
  char* grep[] = {"grep", "Cpus_allowed_list", "/proc/self/status", NULL};
  st = spawn_capture(1, grep, out, sizeof out);
  printf("posix_spawnp grep: \"%s\" exit %d\n", out, st);
  char* missing[] = {"/nonexistent/program", NULL};
  st = spawn_capture(0, missing, out, sizeof out);
  printf("posix_spawn missing: exit %d\n", st);
  return NULL;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  /* A first thread, so that the spawning thread is a pinned pool member. */
  pthread_t t;
  if (pthread_create(&t, NULL, spawner, NULL) != 0) return 1;
  pthread_join(t, NULL);
  return 0;
}
