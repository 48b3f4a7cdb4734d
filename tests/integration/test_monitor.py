"""The run-time monitor inside a governed process: it flags a program that
oversubscribes its budget and lowers the OpenMP cap for later regions, never
flags one that stays within it, leaves no thread behind when off, and works
from /proc alone when PAPI is unavailable.

Run: python -m pytest tests/integration (PW_BUILD = the build directory).
"""
import json
import subprocess

import pytest

from test_core import BIN, FULL, cpu_list, load, run

ENGINE = BIN / "naive_engine"
CORES = len(FULL)


def oversubscribing(tmp_path, **options):
    """Three workers per CPU, each running default-size OpenMP teams."""
    report = tmp_path / "r.json"
    p = run([ENGINE, "--workers", 3 * CORES, "--iterations", 40, "--size", 224], REPORT=report,
            **options)
    assert p.returncode == 0, p.stderr
    return load(report)


def test_oversubscription_is_flagged_within_a_second_and_the_cap_lowered(tmp_path):
    m = oversubscribing(tmp_path)["monitor"]
    assert m["oversubscribed"] is True
    kinds = [a["kind"] for a in m["actions"]]
    assert "oversubscribed" in kinds
    flagged = next(a for a in m["actions"] if a["kind"] == "oversubscribed")
    assert flagged["t"] <= 1.0, flagged
    lowered = [a for a in m["actions"] if a["kind"] == "lower_omp_cap"]
    assert lowered and lowered[0]["new_cap"] < lowered[0]["old_cap"]
    assert all(a["new_cap"] >= 1 for a in m["actions"])
    assert m["omp_cap"] >= 1
    # The numbers that triggered it are in the action.
    assert flagged["wait_ratio"] >= 0.25 and flagged["threads"] > CORES


def test_papi_unavailable_still_detects_from_proc(tmp_path):
    # PAPI asked for, but made unavailable through its own environment.
    m = oversubscribing(tmp_path, PAPI="on", PAPI_DISABLE_COMPONENTS="perf_event")["monitor"]
    assert m["backend"] == "proc"
    assert m["papi"] and "disabled by option" not in m["papi"]
    assert m["oversubscribed"] is True


def test_papi_is_off_by_default(tmp_path):
    m = oversubscribing(tmp_path)["monitor"]
    assert m["backend"] == "proc" and m["papi"] == "disabled by option"


def test_observe_mode_records_but_does_not_lower_the_cap(tmp_path):
    r = oversubscribing(tmp_path, MODE="observe")
    m = r["monitor"]
    assert m["oversubscribed"] is True
    assert r["openmp"]["team_cap"] == 0, "observe never caps OpenMP"


def test_within_budget_is_never_flagged(tmp_path):
    # One worker whose OpenMP team fills the budget exactly, 20 runs.
    for i in range(20):
        report = tmp_path / f"r{i}.json"
        p = run([ENGINE, "--workers", 1, "--iterations", 10, "--size", 160], REPORT=report)
        assert p.returncode == 0, p.stderr
        m = load(report)["monitor"]
        assert m["oversubscribed"] is False, json.dumps(m)
        assert not m["actions"]


@pytest.mark.parametrize("monitor", ["on", "off"])
def test_sampler_thread_exists_only_with_the_monitor_on(tmp_path, monitor):
    report, inspect = tmp_path / "r.json", tmp_path / "i.json"
    p = run([ENGINE, "--workers", 1, "--iterations", 2, "--inspect", inspect], REPORT=report,
            MONITOR=monitor)
    assert p.returncode == 0, p.stderr
    comms = [t["comm"] for t in load(inspect)["tasks"]]
    r = load(report)
    if monitor == "on":
        assert comms.count("parwidth-mon") == 1
        assert r["monitor"] is not None
    else:
        assert "parwidth-mon" not in comms
        assert r["monitor"] is None



STRAY_C = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Pinned by parwidth when it starts; then it widens its own mask to every CPU
   (as a library that rebinds its threads would), keeps working for a while,
   and prints its tid and the CPUs the kernel allows it at the end. */
static void* worker(void* arg) {
  (void)arg;
  cpu_set_t all;
  CPU_ZERO(&all);
  sched_getaffinity(getpid(), sizeof all, &all);
  sched_setaffinity(0, sizeof all, &all);
  for (int i = 0; i < 1000; ++i) {
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  }
  char line[256];
  FILE* f = fopen("/proc/thread-self/status", "r");
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "Cpus_allowed_list:", 18) == 0)
      printf("%ld %s", (long)gettid(), line + 18);
  if (f) fclose(f);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  return 0;
}
"""


@pytest.mark.skipif(CORES < 2, reason="needs at least 2 CPUs")
def test_a_thread_that_leaves_its_core_is_re_pinned(tmp_path):
    src, exe, report = tmp_path / "stray.c", tmp_path / "stray", tmp_path / "r.json"
    src.write_text(STRAY_C)
    subprocess.run(["gcc", "-O1", "-pthread", "-o", str(exe), str(src)], check=True)
    p = run([exe], REPORT=report, MONITOR_MS=20)
    assert p.returncode == 0, p.stderr
    tid, cpus = p.stdout.split(maxsplit=1)
    r = load(report)
    rec = next(t for t in r["threads"] if t["tid"] == int(tid))
    assert rec["pinned"] and rec["cpu"] is not None
    # The monitor saw it outside its core and put it back.
    assert any(a["kind"] == "repin_strays" for a in r["monitor"]["actions"]), r["monitor"]
    assert r["monitor"]["repinned"] >= 1
    assert cpu_list(cpus) == {rec["cpu"]}
