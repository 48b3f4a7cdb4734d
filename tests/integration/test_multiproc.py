"""Many processes per node: launchers (torchrun, mpirun), the node registry for
processes no launcher describes, the modulefiles with real Lmod and real
environment-modules, and zero harm to ordinary programs under the module.

Where a process's share is smaller than its affinity, the whole process lives
inside the share: every thread /proc lists (the main thread and the monitor
included), os.sched_getaffinity(0), and its children.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_core import BIN, BUILD, FULL, LIB, ROOT, clean_env, cpu_list, load  # noqa: E402

TORCH_PY = ROOT / ".venv" / "torch" / "bin" / "python"
LMOD_INIT = Path("/usr/share/lmod/lmod/init/bash")
EM_INIT = ROOT / ".deps" / "environment-modules" / "init.bash"

SPIN_C = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static atomic_int stop;
static void* spin(void* arg) {
  volatile unsigned long x = 0;
  while (!atomic_load(&stop)) for (int i = 0; i < 100000; ++i) x += i;
  return arg;
}
int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3;
  pthread_t t[1024];
  for (int i = 0; i < n && i < 1024; ++i) pthread_create(&t[i], 0, spin, 0);
  printf("ready\n");
  fflush(stdout);
  char buf[16];
  while (read(0, buf, sizeof buf) > 0) {}
  atomic_store(&stop, 1);
  for (int i = 0; i < n && i < 1024; ++i) pthread_join(t[i], 0);
  return 0;
}
"""


# ---------------------------------------------------------------- helpers


def poll(cond, timeout=15.0, what="condition"):
    """Polls cond() until it returns a truthy value (no fixed sleeps)."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def task_cpus(pid):
    """tid -> allowed CPUs of every thread of pid (missing threads skipped)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                m = re.search(r"^Cpus_allowed_list:\s*(\S+)", f.read(), re.M)
        except (FileNotFoundError, ProcessLookupError):
            continue
        if m:
            out[int(tid)] = cpu_list(m.group(1))
    return out


def pinned_cpus(pid):
    """The union of the CPUs of pid's threads narrowed to one core each (the monitor too,
    once the process is confined to one core), and how many."""
    cpus, n = set(), 0
    for tid, allowed in task_cpus(pid).items():
        if tid != pid and len(allowed) == 1 and allowed != FULL:
            cpus |= allowed
            n += 1
    return frozenset(cpus), n


def all_cpus(pid):
    """The union of the CPUs of every thread of pid, the main thread included."""
    cpus = set()
    for allowed in task_cpus(pid).values():
        cpus |= allowed
    return frozenset(cpus)


def main_cpus(pid):
    return task_cpus(pid).get(pid)


@pytest.fixture(scope="module")
def spin(tmp_path_factory):
    d = tmp_path_factory.mktemp("spin")
    (d / "spin.c").write_text(SPIN_C)
    exe = d / "spin"
    subprocess.run(["gcc", "-O1", "-pthread", "-o", str(exe), str(d / "spin.c")], check=True)
    return exe


# One spinner per CPU (at least 3): a process alone on the node then has a pinned thread on
# every core, whatever the machine's size.
SPINNERS = max(3, len(FULL))


def start_spin(spin, node_dir, report, n=SPINNERS, **extra):
    env = clean_env(
        LD_PRELOAD=LIB,
        PARWIDTH_NODE_DIR=node_dir,
        PARWIDTH_MONITOR_MS=50,
        PARWIDTH_REPORT=report,
        **extra,
    )
    p = subprocess.Popen(
        [str(spin), str(n)], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert p.stdout.readline().strip() == "ready"
    return p


def finish(p):
    p.stdin.close()
    assert p.wait(timeout=30) == 0


needs_two_cpus = pytest.mark.skipif(len(FULL) < 2, reason="needs at least 2 CPUs")


# ---------------------------------------------------------------- node registry


@needs_two_cpus
def test_second_process_shrinks_first_and_first_grows_back(spin, tmp_path):
    reg = tmp_path / "reg"
    a = start_spin(spin, reg, tmp_path / "a.json")
    try:
        # Alone, A takes every core.
        poll(lambda: pinned_cpus(a.pid)[0] == FULL and pinned_cpus(a.pid)[1] == SPINNERS,
             what="A pinned")
        b = start_spin(spin, reg, tmp_path / "b.json")
        try:
            # B joins once its threads run (one monitor period or so), then lives in its share.
            b_cpus = poll(lambda: pinned_cpus(b.pid)[1] >= 3 and all_cpus(b.pid) != FULL
                          and pinned_cpus(b.pid)[0] == all_cpus(b.pid) and all_cpus(b.pid),
                          what="B in its share")
            # A shrinks within a monitor period or so: polled, not timed.
            a_cpus = poll(
                lambda: (lambda c: c if c and not (c & b_cpus) else None)(pinned_cpus(a.pid)[0]),
                what="A to leave B's cores",
            )
            assert a_cpus | b_cpus <= FULL
            assert len(a_cpus) + len(b_cpus) == len(FULL)
            assert len(os.listdir(reg)) == 2
            # The whole process, main thread and monitor included, inside its share.
            poll(lambda: all_cpus(a.pid) == a_cpus and main_cpus(a.pid) == a_cpus,
                 what="A's main thread to follow its share")
            assert all_cpus(b.pid) == b_cpus and main_cpus(b.pid) == b_cpus
        finally:
            finish(b)
        # B left: A grows back to every core, its main thread too.
        poll(lambda: pinned_cpus(a.pid)[0] == FULL and main_cpus(a.pid) == FULL,
             what="A to grow back")
    finally:
        finish(a)
    assert os.listdir(reg) == []  # nobody leaves an entry behind
    ra, rb = load(tmp_path / "a.json"), load(tmp_path / "b.json")
    assert rb["budget"]["local_size"] == 2 and rb["budget"]["local_rank"] == 1
    assert any("node registry: member 2 of 2" in n for n in rb["budget"]["notes"])
    node_changes = [f for f in ra["frameworks"] if f["name"] == "node"]
    assert len(node_changes) >= 2  # shrank, then grew back
    assert "re-pinned" in node_changes[0]["why"]
    assert set(ra["budget"]["cpus"]) == set(FULL)  # its last share: everything
    for t in rb["threads"]:
        assert t["cpu"] in rb["budget"]["cpus"]


TOGGLE_C = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static atomic_int stop, busy = 1;
static void* work(void* arg) {
  volatile unsigned long x = 0;
  struct timespec nap = {0, 5000000};
  while (!atomic_load(&stop)) {
    if (atomic_load(&busy)) for (int i = 0; i < 100000; ++i) x += i;
    else nanosleep(&nap, 0);
  }
  return arg;
}
int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2;
  pthread_t t[64];
  for (int i = 0; i < n && i < 64; ++i) pthread_create(&t[i], 0, work, 0);
  printf("ready\n");
  fflush(stdout);
  char line[64];
  while (fgets(line, sizeof line, stdin)) atomic_store(&busy, strncmp(line, "idle", 4) != 0);
  atomic_store(&stop, 1);
  for (int i = 0; i < n && i < 64; ++i) pthread_join(t[i], 0);
  return 0;
}
"""


@pytest.fixture(scope="module")
def toggle(tmp_path_factory):
    d = tmp_path_factory.mktemp("toggle")
    (d / "toggle.c").write_text(TOGGLE_C)
    exe = d / "toggle"
    subprocess.run(["gcc", "-O1", "-pthread", "-o", str(exe), str(d / "toggle.c")], check=True)
    return exe


# Threads that wait until stdin says "work" (a pool made at load and never used: OpenBLAS's
# when a helper imports numpy), beside a main thread that computes on its own all along.
LATENT_C = r"""
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go;
static atomic_int stop;
static void* pool(void* arg) {
  pthread_mutex_lock(&mu);
  while (!go) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  volatile unsigned long x = 0;
  while (!atomic_load(&stop)) for (int i = 0; i < 100000; ++i) x += i;
  return arg;
}
static void* reader(void* arg) {
  char line[64];
  while (fgets(line, sizeof line, stdin)) {
    if (strncmp(line, "work", 4) == 0) {
      pthread_mutex_lock(&mu);
      go = 1;
      pthread_cond_broadcast(&cv);
      pthread_mutex_unlock(&mu);
    }
  }
  atomic_store(&stop, 1);
  pthread_mutex_lock(&mu);
  go = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  return arg;
}
int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2;
  pthread_t t[64], r;
  for (int i = 0; i < n && i < 64; ++i) pthread_create(&t[i], 0, pool, 0);
  pthread_create(&r, 0, reader, 0);
  printf("ready\n");
  fflush(stdout);
  volatile unsigned long x = 0;
  while (!atomic_load(&stop)) for (int i = 0; i < 100000; ++i) x += i;
  for (int i = 0; i < n && i < 64; ++i) pthread_join(t[i], 0);
  pthread_join(r, 0);
  return 0;
}
"""


def test_threads_that_never_worked_do_not_make_a_member(tmp_path):
    """A process busy on its main thread alone, its other threads made and waiting (a pool
    that was never used), does not take a share of the node, however long it computes; the
    same process joins once those threads work."""
    exe = tmp_path / "latent"
    (tmp_path / "latent.c").write_text(LATENT_C)
    subprocess.run(["gcc", "-O1", "-pthread", "-o", str(exe), str(tmp_path / "latent.c")],
                   check=True)
    reg = tmp_path / "reg"
    p = start_spin(exe, reg, tmp_path / "r.json", n=2)
    try:
        # The main thread keeps a CPU busy (far above the 0.5 CPUs that count as demand)
        # for 40 monitor periods, read from the process's own CPU time, not from a clock.
        def cpu_s():
            with open(f"/proc/{p.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        poll(lambda: cpu_s() >= 40 * 0.05, timeout=60, what="2 s of the main thread's CPU time")
        assert os.listdir(reg) == [], os.listdir(reg)
        p.stdin.write("work\n")
        p.stdin.flush()
        poll(lambda: [f.split(".")[0] for f in os.listdir(reg)] == [str(p.pid)],
             what="the process to join once its threads work")
    finally:
        finish(p)
    notes = [(f["value"], f["why"]) for f in load(tmp_path / "r.json")["frameworks"]
             if f["name"] == "membership"]
    assert notes and notes[0][0] == "joined" and "parallel work" in notes[0][1], notes


@needs_two_cpus
def test_idle_member_gives_its_share_back_and_rejoins(toggle, tmp_path):
    """An idle threaded process beside a busy one: the busy one gets every core once the
    other has been idle for PARWIDTH_NODE_IDLE_MS, and they share again when it wakes."""
    reg = tmp_path / "reg"
    a = start_spin(toggle, reg, tmp_path / "a.json", n=2, PARWIDTH_NODE_IDLE_MS=300)
    b = start_spin(toggle, reg, tmp_path / "b.json", n=2, PARWIDTH_NODE_IDLE_MS=300)

    def shared():
        ca, cb = all_cpus(a.pid), all_cpus(b.pid)
        return len(os.listdir(reg)) == 2 and ca and cb and not (ca & cb)

    try:
        poll(shared, what="A and B to share the node")
        # `parwidth node` lists both, with the shares they computed themselves.
        def listed():
            out = subprocess.run([str(BIN / "parwidth"), "node", "--json", "--dir", str(reg)],
                                 capture_output=True, text=True, timeout=30)
            assert out.returncode == 0, out.stderr
            return {m["pid"]: m for m in json.loads(out.stdout)["members"]}

        # Each member's entry follows its plan in force: one pool (no graph) as wide as its
        # share, once it has re-planned for the share (a sample or so after joining).
        def planned():
            m = listed()
            return m if set(m) == {a.pid, b.pid} and all(
                x["plan"] == {"pools": 1, "intra": len(x["share"])} for x in m.values()) else None

        members = poll(planned, what="both members' entries to show the plan for their share")
        assert not set(members[a.pid]["share"]) & set(members[b.pid]["share"])
        assert members[a.pid]["threads"] >= 3 and members[a.pid]["program"] == "toggle"
        # The monitor runs in both: a verdict, not "unknown".
        assert all(isinstance(x["oversubscribed"], bool) for x in members.values()), members
        table = subprocess.run([str(BIN / "parwidth"), "node", "--dir", str(reg)],
                               capture_output=True, text=True, timeout=30).stdout
        assert f"{a.pid} " in table and f"{b.pid} " in table and "SHARE" in table
        header = next(line for line in table.splitlines() if line.startswith("PID"))
        assert "PLAN" in header and "OVERSUB" in header
        row = next(line for line in table.splitlines() if line.startswith(f"{a.pid} "))
        assert f" 1x{len(members[a.pid]['share'])} " in row, row
        a.stdin.write("idle\n")
        a.stdin.flush()
        poll(lambda: [f.split(".")[0] for f in os.listdir(reg)] == [str(b.pid)]
             and all_cpus(b.pid) == FULL and main_cpus(b.pid) == FULL,
             what="idle A to leave and busy B to take every core")
        a.stdin.write("busy\n")
        a.stdin.flush()
        poll(shared, what="A to re-join when busy again")
    finally:
        finish(a)
        finish(b)
    assert os.listdir(reg) == []
    ra = load(tmp_path / "a.json")
    notes = [(f["value"], f["why"]) for f in ra["frameworks"] if f["name"] == "membership"]
    assert [v for v, _ in notes][:3] == ["joined", "left", "joined"], notes
    assert "idle" in notes[1][1] and "s after" in notes[1][1]
    # B took every core within 2 of its monitor periods of A's leaving, counted in B's own
    # samples (not in seconds, which a loaded machine stretches): the re-division came at
    # sample N, and the last sample whose registry scan still listed A was M.
    rb = load(tmp_path / "b.json")
    grown = [f["why"] for f in rb["frameworks"] if f["name"] == "node"
             and cpu_list(f["value"]) == FULL and f" {a.pid} last listed" in f["why"]]
    assert grown, [f for f in rb["frameworks"] if f["name"] == "node"]
    m = re.search(rf"at member sample (\d+); gone: (?:.*, )?{a.pid} last listed at sample (\d+)",
                  grown[0])
    assert m, grown[0]
    assert 1 <= int(m.group(1)) - int(m.group(2)) <= 2, grown[0]


# A thread can take its core from the plan in force and start only after the node
# has been divided again (the scheduler's delay, on a loaded node): the move of the
# pinned threads does not list it yet. LATE_START_C, preloaded after libparwidth.so,
# makes that delay certain: every new thread waits LATE_START_MS before its start
# routine (parwidth's own start included) runs. The fault is the scheduler's, which
# cannot be made to produce it on demand.
LATE_START_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
struct go { void* (*fn)(void*); void* arg; };
static void* late(void* p) {
  struct go g = *(struct go*)p;
  free(p);
  const char* ms = getenv("LATE_START_MS");
  long n = ms ? atol(ms) : 0;
  struct timespec d = {n / 1000, (n % 1000) * 1000000};
  nanosleep(&d, 0);
  return g.fn(g.arg);
}
int pthread_create(pthread_t* t, const pthread_attr_t* a, void* (*fn)(void*), void* arg) {
  static int (*real)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  if (!real) real = dlvsym(RTLD_NEXT, "pthread_create", "GLIBC_2.34");
  if (!real) real = dlvsym(RTLD_NEXT, "pthread_create", "GLIBC_2.2.5");
  struct go* g = malloc(sizeof *g);
  if (!g) return real(t, a, fn, arg);
  g->fn = fn;
  g->arg = arg;
  int rc = real(t, a, late, g);
  if (rc) free(g);
  return rc;
}
"""

# Spins n threads, says "ready" once they run; at "go" starts m threads one by one
# (10 ms apart) that sleep until the end; then says "started".
TRICKLE_C = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static atomic_int stop, running;
static void* spin(void* arg) {
  volatile unsigned long x = 0;
  atomic_fetch_add(&running, 1);
  while (!atomic_load(&stop)) for (int i = 0; i < 100000; ++i) x += i;
  return arg;
}
static void* nap(void* arg) {
  struct timespec d = {0, 5000000};
  while (!atomic_load(&stop)) nanosleep(&d, 0);
  return arg;
}
int main(int argc, char** argv) {
  int n = atoi(argv[1]), m = atoi(argv[2]);
  pthread_t t[1024 + 64];
  for (int i = 0; i < n; ++i) pthread_create(&t[i], 0, spin, 0);
  while (atomic_load(&running) < n) usleep(1000);
  printf("ready\n");
  fflush(stdout);
  char line[16];
  if (!fgets(line, sizeof line, stdin)) return 1;
  struct timespec gap = {0, 10000000};
  for (int i = n; i < n + m; ++i) {
    pthread_create(&t[i], 0, nap, 0);
    nanosleep(&gap, 0);
  }
  printf("started\n");
  fflush(stdout);
  while (fgets(line, sizeof line, stdin)) {}
  atomic_store(&stop, 1);
  for (int i = 0; i < n + m; ++i) pthread_join(t[i], 0);
  return 0;
}
"""


@pytest.fixture(scope="module")
def late_start(tmp_path_factory):
    d = tmp_path_factory.mktemp("late")
    (d / "late_start.c").write_text(LATE_START_C)
    (d / "trickle.c").write_text(TRICKLE_C)
    # parwidth binds glibc's pthread_create by its version: the shim's carries the same one.
    (d / "late_start.map").write_text("GLIBC_2.34 { global: pthread_create; local: *; };\n")
    shim, trickle = d / "late_start.so", d / "trickle"
    subprocess.run(["gcc", "-O1", "-shared", "-fPIC", f"-Wl,--version-script={d}/late_start.map",
                    "-o", str(shim), str(d / "late_start.c"), "-ldl"], check=True)
    subprocess.run(["gcc", "-O1", "-pthread", "-o", str(trickle), str(d / "trickle.c")],
                   check=True)
    return shim, trickle


@needs_two_cpus
def test_thread_that_starts_after_the_node_is_divided_follows_the_new_share(spin, late_start,
                                                                            tmp_path):
    """Threads pinned from the old plan whose start was delayed past the division of the
    node (B joining) end up on A's new share, not on B's cores."""
    shim, trickle = late_start
    reg = tmp_path / "reg"
    env = clean_env(LD_PRELOAD=f"{LIB}:{shim}", LATE_START_MS=600, PARWIDTH_NODE_DIR=reg,
                    PARWIDTH_MONITOR_MS=50, PARWIDTH_REPORT=tmp_path / "a.json")
    a = subprocess.Popen([str(trickle), str(SPINNERS), "60"], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        assert a.stdout.readline().strip() == "ready"
        # Alone, A's spinners take every core.
        poll(lambda: pinned_cpus(a.pid)[0] == FULL, what="A pinned on every core")
        a.stdin.write("go\n")
        a.stdin.flush()
        # B joins while A's new threads are between their core and their start.
        b = start_spin(spin, reg, tmp_path / "b.json", n=2)
        try:
            b_cpus = poll(lambda: pinned_cpus(b.pid)[1] >= 2 and all_cpus(b.pid) != FULL
                          and all_cpus(b.pid), what="B in its share")
            assert a.stdout.readline().strip() == "started"
            a_cpus = frozenset(FULL - b_cpus)
            # Every thread of A, the late ones once they run, inside A's share.
            def strays():  # main, spinners, late ones (and the monitor) running, and outside
                tasks = task_cpus(a.pid)
                return len(tasks) >= 1 + SPINNERS + 60, {t: sorted(c) for t, c in tasks.items()
                                                  if not c <= a_cpus}

            try:
                poll(lambda: strays() == (True, {}), timeout=20,
                     what="every thread of A inside its share, late ones included")
            except AssertionError:
                pass
            assert strays() == (True, {}), (sorted(a_cpus), strays())
        finally:
            finish(b)
    finally:
        finish(a)
    ra = load(tmp_path / "a.json")
    node_changes = [f for f in ra["frameworks"] if f["name"] == "node"]
    assert node_changes and "re-pinned" in node_changes[0]["why"], ra["frameworks"]


@needs_two_cpus
def test_started_together_get_disjoint_cores(spin, tmp_path):
    reg = tmp_path / "reg"
    env = dict(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=reg, PARWIDTH_MONITOR_MS=50)
    procs = [
        subprocess.Popen(
            [str(spin), "2"], env=clean_env(**env), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True,
        )
        for _ in range(2)
    ]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready"

        def disjoint():
            a, b = (all_cpus(p.pid) for p in procs)
            return a and b and not (a & b)

        poll(disjoint, what="disjoint cores")
    finally:
        for p in procs:
            finish(p)
    assert os.listdir(reg) == []


@needs_two_cpus
def test_killed_member_is_reclaimed(spin, tmp_path):
    reg = tmp_path / "reg"
    a = start_spin(spin, reg, tmp_path / "a.json")
    try:
        b = start_spin(spin, reg, tmp_path / "b.json")
        poll(lambda: pinned_cpus(a.pid)[0] != FULL, what="A to shrink")
        b.kill()  # no destructor, no cleanup: its entry stays, its lock goes
        b.wait()
        poll(lambda: pinned_cpus(a.pid)[0] == FULL, what="A to reclaim B's cores")
        assert len(os.listdir(reg)) == 1
    finally:
        finish(a)


FORKING_PARENT = r"""
import os, sys, threading, time
def busy(seconds):
    end = time.time() + seconds
    while time.time() < end:
        pass
threading.Thread(target=busy, args=(0.05,)).start()   # the parent activates and joins
time.sleep(0.1)
pid = os.fork()
if pid == 0:                                          # a DataLoader-style worker
    t = threading.Thread(target=busy, args=(0.6,))
    t.start(); t.join()
    os._exit(0)
time.sleep(0.8)                                       # several monitor periods
os.waitpid(pid, 0)
print(sorted(os.sched_getaffinity(0)))
"""


def test_forked_child_plans_inside_its_parent_and_does_not_shrink_it(tmp_path):
    # A forked worker is part of its parent's job: it must not join the node
    # registry as a competitor and halve its own parent's cores.
    script = tmp_path / "parent.py"
    script.write_text(FORKING_PARENT)
    env = clean_env(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=tmp_path / "reg",
                    PARWIDTH_MONITOR_MS=20, PARWIDTH_REPORT=tmp_path / "r-%p.json")
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    reports = {r["pid"]: r for r in map(load, tmp_path.glob("r-*.json"))}
    parent = reports.pop(proc.pid)
    assert len(reports) == 1, "one report from the forked child"
    child = next(iter(reports.values()))
    # The parent kept every core while its child ran, and never re-divided.
    assert parent["budget"]["cpus"] == sorted(FULL)
    assert not [f for f in parent["frameworks"] if f["name"] == "node"], parent["frameworks"]
    # The child planned inside its parent's share and was governed.
    assert set(child["budget"]["cpus"]) <= set(parent["budget"]["cpus"])
    assert child["governed"] and child["threads"]


def test_node_off_and_launcher_ranks_do_not_join(spin, tmp_path):
    reg = tmp_path / "reg"
    a = start_spin(spin, reg, tmp_path / "a.json", PARWIDTH_NODE="off")
    b = start_spin(spin, reg, tmp_path / "b.json", LOCAL_RANK=0, LOCAL_WORLD_SIZE=1)
    try:
        assert not reg.exists() or os.listdir(reg) == []
    finally:
        finish(a)
        finish(b)


def test_unsafe_registry_dir_is_refused(spin, tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    a = start_spin(spin, link, tmp_path / "a.json")
    finish(a)
    assert os.listdir(real) == []
    r = load(tmp_path / "a.json")
    assert any("symbolic link" in w for w in r["warnings"])
    assert r["plan"]["core_sets"]  # still governed, with its whole budget


def test_registry_dir_made_by_hand_says_how_to_fix_it(spin, tmp_path):
    """The first thing a user tries with PARWIDTH_NODE_DIR: `mkdir` (mode 755 with
    the usual umask). It is refused (others could read who runs what), and the
    warning, the report and `parwidth node` say exactly what to do."""
    reg = tmp_path / "reg"
    reg.mkdir()
    reg.chmod(0o755)
    env = clean_env(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=reg, PARWIDTH_MONITOR_MS=50,
                    PARWIDTH_REPORT=tmp_path / "a.json")
    a = subprocess.run([str(spin), str(SPINNERS)], env=env, input="", capture_output=True,
                       text=True, timeout=60)
    assert a.returncode == 0, a.stderr
    fix = f"chmod 700 {reg}"
    assert fix in a.stderr, a.stderr
    r = load(tmp_path / "a.json")
    assert any(fix in w for w in r["warnings"]), r["warnings"]
    note = [f for f in r["frameworks"] if f["name"] == "node" and f["setting"] == "registry"]
    assert note and not note[0]["applied"] and fix in note[0]["why"], r["frameworks"]
    listing = subprocess.run([str(BIN / "parwidth"), "node", "--dir", str(reg)],
                             capture_output=True, text=True, timeout=30)
    assert listing.returncode == 1 and fix in listing.stderr, listing.stderr
    # Done as told, the next process joins.
    reg.chmod(0o700)
    b = start_spin(spin, reg, tmp_path / "b.json")
    finish(b)
    assert not any("node registry" in w for w in load(tmp_path / "b.json")["warnings"])


# ---------------------------------------------------------------- real launchers


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


DDP = r"""
import json, os, sys
import torch, torch.distributed as dist, torch.nn as nn
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 8)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    loss = model(torch.randn(32, 64)).pow(2).mean()
    loss.backward()
    opt.step()
dist.barrier()  # both ranks alive while each looks at its threads
def tasks():
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:  # a thread that was just joined can still be listed, and gone when opened
            with open(f"/proc/self/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("Cpus_allowed_list:"):
                        out[tid] = line.split()[1]
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out
r, w = os.pipe()
child = os.fork()
if child == 0:  # a worker forked by the rank, with a thread of its own
    import threading
    t = threading.Thread(target=lambda: sum(range(10**5)))
    t.start(); t.join()
    os.write(w, json.dumps({"pid": os.getpid(), "tasks": tasks(),
                            "affinity": sorted(os.sched_getaffinity(0))}).encode())
    os._exit(0)
os.close(w)
forked = json.loads(os.read(r, 1 << 20))
os.waitpid(child, 0)
json.dump({"pid": os.getpid(), "rank": rank, "loss": loss.item(), "tasks": tasks(),
           "affinity": sorted(os.sched_getaffinity(0)), "forked": forked},
          open(os.path.join(sys.argv[1], f"inspect-{rank}.json"), "w"))
dist.barrier()
dist.destroy_process_group()
"""


def inspect_tasks(inspect):
    """tid -> CPUs of every thread of an inspected process, the main thread included."""
    tasks = inspect["tasks"]
    if isinstance(tasks, list):  # naive_engine --inspect: [{tid, comm, cpus}]
        tasks = {t["tid"]: t["cpus"] for t in tasks}
    return {int(t): cpu_list(c) for t, c in tasks.items()}


def rank_threads(inspect):
    """CPUs of each thread narrowed below the whole machine."""
    return [c for c in inspect_tasks(inspect).values() if c != FULL]


def check_ranks(tmp_path, n=2):
    inspects = [json.loads((tmp_path / f"inspect-{r}.json").read_text()) for r in range(n)]
    reports = {load(p)["pid"]: load(p) for p in tmp_path.glob("r-*.json")}
    budgets = []
    for i in inspects:
        rep = reports[i["pid"]]
        budget = frozenset(rep["budget"]["cpus"])
        budgets.append(budget)
        tasks = inspect_tasks(i)
        assert len(tasks) > 1, i
        # Every thread, the main thread included, inside the rank's share.
        for tid, cpus in tasks.items():
            assert cpus <= budget, (tid, i["pid"], cpus, budget)
        assert tasks[i["pid"]] == budget  # the main thread spans the share
        if "affinity" in i:
            assert frozenset(i["affinity"]) == budget  # os.sched_getaffinity(0)
        if "forked" in i:  # a child forked by the rank stays inside it
            assert frozenset(i["forked"]["affinity"]) <= budget, (i["forked"], budget)
            for cpus in inspect_tasks(i["forked"]).values():
                assert cpus <= budget, (i["forked"], budget)
        for t in rep["threads"]:
            if t["cpu"] is not None:
                assert t["cpu"] in budget
    assert not (budgets[0] & budgets[1]), budgets
    return inspects, reports


@needs_two_cpus
@pytest.mark.skipif(not TORCH_PY.exists(), reason=".venv/torch missing (scripts/bootstrap)")
def test_torchrun_ddp_ranks_get_disjoint_cores(tmp_path):
    script = tmp_path / "ddp.py"
    script.write_text(DDP)
    env = clean_env(
        LD_PRELOAD=LIB,
        PARWIDTH_REPORT=tmp_path / "r-%p.json",
        PARWIDTH_NODE_DIR=tmp_path / "reg",
        GLOO_SOCKET_IFNAME="lo",
    )
    p = subprocess.run(
        [str(TORCH_PY), "-m", "torch.distributed.run", "--nproc_per_node=2",
         "--master_addr=127.0.0.1", f"--master_port={free_port()}",
         # Debian torch 1.13 on Python 3.11: Std.from_str("0") (the default) returns None
         # (IntFlag iteration skips NONE) and the agent crashes; "1" is a real member.
         "--redirects=1", "--tee=1", f"--log_dir={tmp_path}/logs", str(script), str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    inspects, reports = check_ranks(tmp_path)
    for i in inspects:
        rep = reports[i["pid"]]
        assert rep["budget"]["local_size"] == 2
        assert rep["budget"]["local_rank"] == i["rank"]
    # The launcher (torchrun's agent, a threaded Python process that the ranks' variables do
    # not describe) is governed too. Busy while it starts, it may join the node registry; once
    # its ranks run (children started by fork and exec, whose environment names a local
    # rank) it leaves as a launcher and does not come back.
    ranks = {i["pid"] for i in inspects}
    agents = [r for pid, r in reports.items()
              if pid not in ranks and r["budget"]["local_size"] == 1 and len(r["threads"]) > 1]
    assert agents, "the agent wrote no report"
    # (A kernel without CONFIG_PROC_CHILDREN cannot show fork+exec children: not checked there.)
    children_seen = Path(f"/proc/self/task/{os.getpid()}/children").exists()
    for r in agents:
        notes = [(f["value"], f["why"]) for f in r["frameworks"] if f["name"] == "membership"]
        if notes and children_seen:
            assert notes[-1][0] == "left" and "launches ranks" in notes[-1][1], notes
            assert [v for v, _ in notes].count("joined") <= 1, notes
    assert not (tmp_path / "reg").exists() or os.listdir(tmp_path / "reg") == []


def mpirun_cmd(tmp_path, *extra):
    if not shutil.which("mpirun"):
        pytest.skip("Open MPI missing (scripts/bootstrap)")
    engine = BIN / "naive_engine"
    inner = f'exec {engine} --workers 2 --iterations 3 --size 96 --inspect {tmp_path}/inspect-$OMPI_COMM_WORLD_RANK.json'
    return ["mpirun", "--allow-run-as-root", "--oversubscribe", *extra, "-np", "2",
            "-x", "LD_PRELOAD", "-x", "PARWIDTH_REPORT", "-x", "PARWIDTH_NODE_DIR",
            "bash", "-c", inner]


@needs_two_cpus
@pytest.mark.parametrize("binding", ["default", "none"])
def test_mpirun_ranks_get_disjoint_cores(tmp_path, binding):
    """Open MPI binds 2 ranks to a core each by default (they then keep their core:
    the node registry finds nothing to divide); with --bind-to none the local rank
    and size divide the node."""
    extra = ["--bind-to", "none"] if binding == "none" else []
    env = clean_env(
        LD_PRELOAD=LIB,
        PARWIDTH_REPORT=tmp_path / "r-%p.json",
        PARWIDTH_NODE_DIR=tmp_path / "reg",
        OMPI_MCA_btl="self,vader",
        OMPI_MCA_btl_tcp_if_include="lo",
        OMPI_MCA_oob_tcp_if_include="lo",
    )
    p = subprocess.run(mpirun_cmd(tmp_path, *extra), env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    inspects, reports = check_ranks(tmp_path)
    for i in inspects:
        rep = reports[i["pid"]]
        if binding == "none":
            assert rep["budget"]["local_size"] == 2
        assert all(t == 1 for t in i["teams"])  # one core each: OpenMP teams of one


# ---------------------------------------------------------------- modulefiles


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    d = tmp_path_factory.mktemp("prefix")
    subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(d)], check=True,
                   capture_output=True)
    assert (d / "lib" / "libparwidth.so").exists()
    assert (d / "bin" / "parwidth").exists()
    return d


TOOLS = {"lmod": LMOD_INIT, "environment-modules": EM_INIT}


def module_env(tool, prefix, *after):
    """The environment after `module use; module load parwidth` with the real tool."""
    init = TOOLS[tool]
    if not init.exists():
        pytest.skip(f"{init} missing (scripts/bootstrap)")
    script = (f"source {init} >/dev/null 2>&1; module use {prefix}/share/modulefiles && "
              f"module load parwidth && {' '.join(after) or 'true'} && env -0")
    env = clean_env()
    env.pop("MODULEPATH", None)
    env.pop("LOADEDMODULES", None)
    p = subprocess.run(["bash", "-c", script], env=env, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    out = {}
    for item in p.stdout.split(b"\0"):
        k, sep, v = item.decode().partition("=")
        if sep:
            out[k] = v
    return out


@pytest.mark.parametrize("tool", list(TOOLS))
def test_module_load_sets_preload_and_defaults(tool, prefix):
    env = module_env(tool, prefix)
    assert env["LD_PRELOAD"].split(":")[0] == str(prefix / "lib" / "libparwidth.so")
    assert env["PARWIDTH_ROOT"] == str(prefix)
    assert env["PARWIDTH_MODE"] == "govern"
    assert env["PARWIDTH_NODE"] == "on"
    assert env["PATH"].split(":")[0] == str(prefix / "bin")
    help_text = subprocess.run(
        ["bash", "-c", f"source {TOOLS[tool]} >/dev/null 2>&1; module use {prefix}/share/modulefiles;"
                       " module help parwidth 2>&1"],
        env=clean_env(), capture_output=True, text=True, timeout=60).stdout
    assert "PARWIDTH_INCLUDE" in help_text and "PARWIDTH_EXCLUDE" in help_text


@pytest.mark.parametrize("tool", list(TOOLS))
def test_module_exclude_leaves_program_alone(tool, prefix, tmp_path):
    env = module_env(tool, prefix)
    engine = BIN / "naive_engine"
    runs = {}
    for name, extra in [("bare", None), ("governed", {}),
                        ("excluded", {"PARWIDTH_EXCLUDE": "ls:naive_engine"})]:
        e = clean_env() if extra is None else {**env, **extra}
        e = {k: str(v) for k, v in e.items()}
        e["PARWIDTH_REPORT"] = str(tmp_path / f"{name}.json")
        e["PARWIDTH_NODE_DIR"] = str(tmp_path / "reg")
        inspect = tmp_path / f"{name}-inspect.json"
        p = subprocess.run([str(engine), "--workers", "2", "--iterations", "2", "--size", "64",
                            "--inspect", str(inspect)], env=e, capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 0, p.stderr
        runs[name] = json.loads(inspect.read_text())
    assert (tmp_path / "governed.json").exists()
    assert rank_threads(runs["governed"])
    assert not (tmp_path / "excluded.json").exists()  # no report
    assert rank_threads(runs["excluded"]) == []  # no pinning
    # no monitor thread: as many threads as without the module
    assert len(runs["excluded"]["tasks"]) == len(runs["bare"]["tasks"])
    assert len(runs["governed"]["tasks"]) > len(runs["bare"]["tasks"])


# ---------------------------------------------------------------- zero harm

MAKEFILE = "all:\n\t@echo building\n\t@printf '%s\\n' $(sort c b a)\n"
HELLO = '#include <iostream>\n#include <thread>\nint main(){int s=0;std::thread t([&]{for(int i=0;i<1000;++i)s+=i;});t.join();std::cout<<"sum "<<s<<"\\n";}\n'
SCRIPT = "#!/bin/sh\nfor i in 1 2 3; do echo line $i; done\nexit 4\n"
PYTHREADS = ("import threading\nr=[0]*4\ndef f(i): r[i]=sum(range(i*100000))\n"
             "ts=[threading.Thread(target=f,args=(i,)) for i in range(4)]\n"
             "[t.start() for t in ts]; [t.join() for t in ts]; print(r)")

ZERO_HARM = [
    "true", "false", "echo hello world", "printf '%s-%d\\n' a 1 b 2", "sh ./script.sh",
    "bash -c 'for i in $(seq 5); do echo $((i*i)); done'", "ls", "ls /nonexistent",
    "cat data.txt | head -3", "cat missing.txt", "wc -l big.txt", "sort big.txt | md5sum",
    "sort --parallel=2 -S 1M big.txt | sha256sum", "sort -n -r nums.txt | head -5",
    "uniq -c data.txt", "tail -2 data.txt", "cut -d, -f2 data.txt", "tr a-z A-Z < data.txt",
    "sed -e 's/a/X/g' data.txt", "awk -F, '{s+=$3} END {print s}' data.txt", "grep -c b data.txt",
    "find . -name '*.txt' | sort", "tar cf - data.txt nums.txt | tar tvf - | awk '{print $3, $6}'",
    "gzip -c big.txt | gunzip -c | md5sum", "xz -T2 -c nums.txt | xz -d | md5sum",
    "seq 100000 | paste -sd+ | bc", "/usr/bin/python3 -c 'print(sum(range(10**6)))'",
    f"/usr/bin/python3 -c '{PYTHREADS}'", "/usr/bin/python3 -c 'import os; print(len(os.sched_getaffinity(0)))'",
    "/usr/bin/python3 -c \"raise SystemExit('boom')\"", "perl -e 'print join(\",\", map {$_*2} 1..5), \"\\n\"'",
    "perl -e 'die \"perl died\\n\"'", "make -s -f Makefile", "g++ -O1 -pthread hello.cpp -o hello && ./hello",
    "gcc -c -x c - -o /dev/null <<< 'int f(void){return 1;}' && echo compiled",
    "git init -q repo && git -C repo add -A . 2>&1; cp data.txt repo/ && git -C repo add data.txt && "
    "git -C repo -c user.name=t -c user.email=t@x commit -q -m m && git -C repo log --format=%H%n%s",
    "nproc", "printenv HOME", "env -i PATH=/usr/bin sh -c 'echo $PATH'", "stat -c '%s %n' data.txt",
    "date -u -d @0 +%F", "base64 data.txt | head -2", "od -An -tx1 -N8 data.txt",
    "seq 20 | xargs -P2 -n5 echo | sort", "sh -c 'exit 3'", "timeout 5 sleep 0.01; echo $?",
    "md5sum data.txt nums.txt", "du -s --apparent-size --block-size=1 big.txt",
]


def prepare_zero_harm(d):
    d.mkdir()
    (d / "data.txt").write_text("".join(f"a{i},b{i % 7},{i}\n" for i in range(200)))
    (d / "nums.txt").write_text("".join(f"{(i * 7919) % 10007}\n" for i in range(5000)))
    (d / "big.txt").write_text("".join(f"{(i * 2654435761) % 1000003:07d} x\n" for i in range(300000)))
    (d / "Makefile").write_text(MAKEFILE)
    (d / "hello.cpp").write_text(HELLO)
    (d / "script.sh").write_text(SCRIPT)


def test_zero_harm_under_the_module(prefix, tmp_path):
    """Each command runs twice in fresh copies of one directory, without and with the
    module's environment (loaded by Lmod). Normalized: the copy's path (it differs by
    construction). stdout, stderr and exit codes must be identical."""
    assert len(ZERO_HARM) >= 30
    mod = module_env("lmod", prefix)
    assert "libparwidth.so" in mod["LD_PRELOAD"]
    base = tmp_path / "tpl"
    prepare_zero_harm(base)
    git_dates = dict(GIT_AUTHOR_DATE="2000-01-01T00:00:00Z", GIT_COMMITTER_DATE="2000-01-01T00:00:00Z",
                     HOME=str(tmp_path), GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
    plain_env = clean_env(**git_dates)
    mod_env = {**plain_env, **{k: v for k, v in mod.items() if k.startswith("PARWIDTH_") or k in ("LD_PRELOAD",)},
               "PARWIDTH_NODE_DIR": str(tmp_path / "reg")}
    diffs = []
    for i, cmd in enumerate(ZERO_HARM):
        results = []
        for label, env in (("plain", plain_env), ("module", mod_env)):
            work = tmp_path / f"w{i}-{label}"
            shutil.copytree(base, work)
            p = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, capture_output=True,
                               text=True, timeout=120)
            norm = lambda s: s.replace(str(work), "<DIR>")  # noqa: E731
            results.append((p.returncode, norm(p.stdout), norm(p.stderr)))
        if results[0] != results[1]:
            diffs.append((cmd, results))
    assert not diffs, diffs
    assert not (tmp_path / "reg").exists() or os.listdir(tmp_path / "reg") == []


RANK_RUNS_CHILD = r"""
import os, subprocess, sys, threading
t = threading.Thread(target=lambda: sum(range(10**5)))
t.start(); t.join()                                   # the rank activates: confined to its share
child = "import os, threading; t = threading.Thread(target=len, args=([],)); t.start(); t.join(); print(sorted(os.sched_getaffinity(0)))"
out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True)
print(sorted(os.sched_getaffinity(0)), out.stdout.strip())
"""


@needs_two_cpus
@pytest.mark.parametrize("rank", [0, 1])
def test_child_of_a_rank_keeps_the_ranks_share(tmp_path, rank):
    # A rank's own share is its whole process; a program it runs (fork+exec,
    # carrying the launcher's variables) plans inside that share instead of
    # dividing it again as if it were another rank.
    script = tmp_path / "rank.py"
    script.write_text(RANK_RUNS_CHILD)
    env = clean_env(LD_PRELOAD=LIB, LOCAL_RANK=rank, LOCAL_WORLD_SIZE=2,
                    PARWIDTH_REPORT=tmp_path / "r-%p.json", PARWIDTH_NODE_DIR=tmp_path / "reg")
    p = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    reports = {r["pid"]: r for r in map(load, tmp_path.glob("r-*.json"))}
    parent = reports.pop(next(pid for pid, r in reports.items()
                              if r["budget"]["local_size"] == 2))
    assert len(reports) == 1
    child = next(iter(reports.values()))
    share = parent["budget"]["cpus"]
    assert len(share) < len(FULL)
    mine, childs = p.stdout.strip().split("] [")
    assert f"{mine}]" == str(share)  # the rank's os.sched_getaffinity(0): its share
    assert f"[{childs}" == str(share)  # the child's, inherited
    assert child["budget"]["cpus"] == share and child["budget"]["local_size"] == 1


# ---------------------------------------------------------------- exec

# A registry member that, once it lives in its share, runs a busy worker the way
# a fork+exec launcher does: subprocess with an environment built from scratch
# (the preload kept, nothing else of ours). The worker must stay inside the
# member's share and not take a share of the node beside its own parent.
EXEC_LAUNCHER = r"""
import json, os, subprocess, sys, threading, time
full = set(map(int, sys.argv[2].split(",")))
stop = threading.Event()
def spin():
    while not stop.is_set():
        sum(range(2000))
threads = [threading.Thread(target=spin) for _ in range(2)]
for t in threads:
    t.start()
deadline = time.time() + 30
while set(os.sched_getaffinity(0)) == full and time.time() < deadline:
    time.sleep(0.02)
share = sorted(os.sched_getaffinity(0))
worker = ("import os, threading, time\n"
          "end = time.time() + 1.0\n"
          "def spin():\n"
          "    while time.time() < end: sum(range(2000))\n"
          "ts = [threading.Thread(target=spin) for _ in range(2)]\n"
          "[t.start() for t in ts]; [t.join() for t in ts]\n"
          "print(sorted(os.sched_getaffinity(0)))\n")
env = {"PATH": os.environ["PATH"], "LD_PRELOAD": os.environ["LD_PRELOAD"],
       "PARWIDTH_REPORT": sys.argv[1] + "/worker.json",
       "PARWIDTH_NODE_DIR": os.environ["PARWIDTH_NODE_DIR"], "PARWIDTH_MONITOR_MS": "50",
       "PARWIDTH_NODE_IDLE_MS": "300"}
out = subprocess.run([sys.executable, "-c", worker], env=env, capture_output=True, text=True,
                     check=True).stdout.strip()
stop.set()
for t in threads:
    t.join()
print(json.dumps({"share": share, "worker": json.loads(out)}))
"""


@needs_two_cpus
def test_worker_execd_with_a_cleaned_environment_stays_in_its_parents_share(spin, tmp_path):
    reg = tmp_path / "reg"
    script = tmp_path / "launcher.py"
    script.write_text(EXEC_LAUNCHER)
    b = start_spin(spin, reg, tmp_path / "b.json", n=2)
    try:
        env = clean_env(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=reg, PARWIDTH_MONITOR_MS=50,
                        PARWIDTH_REPORT=tmp_path / "a.json")
        p = subprocess.run([sys.executable, str(script), str(tmp_path),
                            ",".join(map(str, sorted(FULL)))],
                           env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr[-3000:]
    finally:
        finish(b)
    seen = json.loads(p.stdout)
    assert len(seen["share"]) < len(FULL), seen  # the launcher was confined beside B
    assert seen["worker"] == seen["share"]  # the worker's os.sched_getaffinity(0)
    w = load(tmp_path / "worker.json")
    assert w["budget"]["cpus"] == seen["share"] and w["budget"]["local_size"] == 1
    # It planned inside its parent's share and never took one of its own.
    assert not [f for f in w["frameworks"] if f["name"] == "membership"], w["frameworks"]
    assert any("inside its parent's share" in f["why"] for f in w["frameworks"]), w["frameworks"]
    for t in w["threads"]:
        assert t["cpu"] is None or t["cpu"] in seen["share"]


# A registry member that replaces its own image (os.execv) once it is confined.
# The new image must plan from the affinity the process was given, not from its
# share: once the other member leaves, it grows back to every core.
SELF_EXEC = r"""
import os, sys, threading, time
full = set(map(int, sys.argv[1].split(",")))
stop = threading.Event()
def spin():
    while not stop.is_set():
        sum(range(2000))
threads = [threading.Thread(target=spin) for _ in range(2)]
for t in threads:
    t.start()
def wait(cond):
    deadline = time.time() + 30
    while not cond() and time.time() < deadline:
        time.sleep(0.02)
    return sorted(os.sched_getaffinity(0))
if len(sys.argv) == 2:                        # first image: confined beside the other member
    print("first", wait(lambda: set(os.sched_getaffinity(0)) != full), flush=True)
    os.execv(sys.executable, [sys.executable, sys.argv[0], sys.argv[1], "second"])
print("second", wait(lambda: set(os.sched_getaffinity(0)) != full), flush=True)
sys.stdin.readline()                          # the other member has gone
print("alone", wait(lambda: set(os.sched_getaffinity(0)) == full), flush=True)
stop.set()
"""


@needs_two_cpus
def test_process_that_execs_itself_plans_from_its_affinity(spin, tmp_path):
    reg = tmp_path / "reg"
    script = tmp_path / "self_exec.py"
    script.write_text(SELF_EXEC)
    b = start_spin(spin, reg, tmp_path / "b.json", n=2)
    env = clean_env(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=reg, PARWIDTH_MONITOR_MS=50,
                    PARWIDTH_REPORT=tmp_path / "a.json")
    a = subprocess.Popen([sys.executable, str(script), ",".join(map(str, sorted(FULL)))],
                         env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        first = a.stdout.readline().split(" ", 1)
        second = a.stdout.readline().split(" ", 1)
    finally:
        finish(b)
    a.stdin.write("go\n")
    a.stdin.flush()
    alone = a.stdout.readline().split(" ", 1)
    a.stdin.close()
    assert a.wait(timeout=60) == 0
    assert first[0] == "first" and len(json.loads(first[1])) < len(FULL), first
    assert second[0] == "second" and len(json.loads(second[1])) < len(FULL), second
    assert alone[0] == "alone" and json.loads(alone[1]) == sorted(FULL), alone
    assert os.listdir(reg) == []
