"""Real Slurm on this machine: a one-node cluster from Debian's packages (munge,
slurmctld, slurmd) that the fixture configures for this host's CPUs, starts once
per test session and stops at the end. Ranks started by `srun -n 2`, bound by
Slurm (its default here, task/affinity) and with --cpu-bind=none, and a batch
script with the modulefile loaded: every thread of every rank inside the rank's
share, os.sched_getaffinity(0) equal to it, a child forked by a rank inside it,
shares disjoint; bound ranks keep the CPUs Slurm gave them.
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_core import FULL, LIB, clean_env, load  # noqa: E402
from test_multiproc import LMOD_INIT, check_ranks, free_port, prefix  # noqa: E402,F401

DAEMONS = ("munged", "slurmctld", "slurmd", "srun", "sbatch", "sinfo")

# A rank: threads that run (parwidth activates and plans), then a look at every
# thread of the process, its affinity and a forked child's, all while the
# threads still exist. The affinity Slurm gave it is read first, before any
# thread exists (parwidth has not activated yet).
RANK_PY = r"""
import json, os, sys, threading, time
start = sorted(os.sched_getaffinity(0))
stop = threading.Event()
def spin():
    while not stop.is_set():
        sum(range(2000))
threads = [threading.Thread(target=spin) for _ in range(2)]
for t in threads:
    t.start()
time.sleep(0.3)
def tasks():
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("Cpus_allowed_list:"):
                        out[tid] = line.split()[1]
        except FileNotFoundError:
            pass
    return out
r, w = os.pipe()
child = os.fork()
if child == 0:  # a worker forked by the rank, with a thread of its own
    t = threading.Thread(target=lambda: sum(range(10**5)))
    t.start(); t.join()
    os.write(w, json.dumps({"pid": os.getpid(), "tasks": tasks(),
                            "affinity": sorted(os.sched_getaffinity(0))}).encode())
    os._exit(0)
os.close(w)
forked = json.loads(os.read(r, 1 << 20))
os.waitpid(child, 0)
info = {"pid": os.getpid(), "rank": int(os.environ["SLURM_PROCID"]), "start": start,
        "tasks": tasks(), "affinity": sorted(os.sched_getaffinity(0)), "forked": forked,
        "preload": os.environ.get("LD_PRELOAD", ""), "slurm": {k: v for k, v in os.environ.items() if k.startswith("SLURM_")}}
stop.set()
for t in threads:
    t.join()
with open(os.path.join(sys.argv[1], f"inspect-{info['rank']}.json"), "w") as f:
    json.dump(info, f)
"""


def _slurm_conf(d, node, node_line, task_plugin, ports):
    return "\n".join([
        "ClusterName=parwidth-test",
        f"SlurmctldHost={node}(127.0.0.1)",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={d}/munge.socket",
        f"SlurmctldPort={ports[0]}",
        f"SlurmdPort={ports[1]}",
        f"StateSaveLocation={d}/state",
        f"SlurmdSpoolDir={d}/spool",
        f"SlurmctldPidFile={d}/slurmctld.pid",
        f"SlurmdPidFile={d}/slurmd.pid",
        f"SlurmctldLogFile={d}/slurmctld.log",
        f"SlurmdLogFile={d}/slurmd.log",
        # No cgroup plugins: they need systemd/cgroup delegation that containers lack.
        "ProctrackType=proctrack/linuxproc",
        f"TaskPlugin={task_plugin}",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "SchedulerType=sched/builtin",
        "JobCompType=jobcomp/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "MpiDefault=none",
        "ReturnToService=2",
        "SlurmdTimeout=300",
        f"{node_line} NodeAddr=127.0.0.1 State=UNKNOWN",
        f"PartitionName=test Nodes={node} Default=YES MaxTime=INFINITE State=UP",
        "",
    ])


def _stop(d):
    """Stops the daemons this fixture started (by their pid files), newest first."""
    for name in ("slurmd", "slurmctld", "munged"):
        pid_file = d / f"{name}.pid"
        try:
            pid = int(pid_file.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        try:
            os.kill(pid, 15)
        except ProcessLookupError:
            continue
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)


def _log_tail(d):
    out = []
    for name in ("munged.log", "slurmctld.log", "slurmd.log"):
        p = d / name
        if p.exists():
            out.append(f"--- {name}\n" + "\n".join(p.read_text(errors="replace").splitlines()[-8:]))
    return "\n".join(out)


def _start(d, task_plugin):
    """Starts munged, slurmctld and slurmd in d. Returns the environment that
    reaches the cluster, or (None, why)."""
    for sub in ("state", "spool"):
        (d / sub).mkdir(exist_ok=True)
    key = d / "munge.key"
    if not key.exists():
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
    d.chmod(0o711)  # munged refuses a socket in a directory others cannot traverse
    node = socket.gethostname().split(".")[0]
    hw = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, timeout=30).stdout
    m = re.search(r"^(NodeName=\S+ CPUs=\d+.*?ThreadsPerCore=\d+)", hw, re.M)
    if not m:
        return None, f"slurmd -C printed no node line: {hw!r}"
    node_line = re.sub(r"^NodeName=\S+", f"NodeName={node}", m.group(1))
    conf = d / "slurm.conf"
    conf.write_text(_slurm_conf(d, node, node_line, task_plugin, (free_port(), free_port())))
    env = clean_env(SLURM_CONF=conf)
    for k in list(env):
        if k.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_")) and k != "SLURM_CONF":
            del env[k]
    steps = [
        ["munged", "--force", f"--key-file={key}", f"--socket={d}/munge.socket",
         f"--pid-file={d}/munged.pid", f"--log-file={d}/munged.log", f"--seed-file={d}/munged.seed"],
        ["slurmctld", "-i"],
        ["slurmd", "-N", node],
    ]
    for cmd in steps:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            return None, f"{cmd[0]} exited {p.returncode}: {p.stderr.strip()}\n{_log_tail(d)}"
    deadline = time.monotonic() + 60
    state = ""
    while time.monotonic() < deadline:
        state = subprocess.run(["sinfo", "-h", "-N", "-o", "%t"], env=env, capture_output=True,
                               text=True, timeout=30).stdout.strip()
        if state == "idle":
            return env, ""
        time.sleep(0.2)
    return None, f"the node did not become idle (state {state!r})\n{_log_tail(d)}"


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """A one-node Slurm cluster for the whole test session."""
    missing = [b for b in DAEMONS if not shutil.which(b)]
    if missing:
        pytest.skip(f"Slurm missing: {', '.join(missing)} (scripts/bootstrap installs "
                    "slurmctld, slurmd, slurm-client and munge)")
    if os.geteuid() != 0:
        pytest.skip("slurmd must run as root to start job steps")
    why = []
    # task/affinity binds ranks as a real site does; task/none where it cannot run.
    for plugin in ("task/affinity", "task/none"):
        d = tmp_path_factory.mktemp("slurm")
        env, err = _start(d, plugin)
        if env is not None:
            break
        _stop(d)
        why.append(f"{plugin}: {err}")
    else:
        pytest.skip("the Slurm daemons cannot start on this machine:\n" + "\n".join(why))
    try:
        yield {"env": env, "dir": d, "task_plugin": plugin}
    finally:
        _stop(d)


def rank_env(slurm, tmp_path, **extra):
    return {**slurm["env"], "PARWIDTH_REPORT": str(tmp_path / "r-%p.json"),
            "PARWIDTH_NODE_DIR": str(tmp_path / "reg"), **{k: str(v) for k, v in extra.items()}}


def inspected(tmp_path, n=2):
    return [load(tmp_path / f"inspect-{r}.json") for r in range(n)]


needs_two_cpus = pytest.mark.skipif(len(FULL) < 2, reason="needs at least 2 CPUs")


@needs_two_cpus
@pytest.mark.parametrize("bind", ["default", "none"])
def test_srun_ranks_live_inside_disjoint_shares(slurm, tmp_path, bind):
    script = tmp_path / "rank.py"
    script.write_text(RANK_PY)
    extra = ["--cpu-bind=none"] if bind == "none" else []
    env = rank_env(slurm, tmp_path, LD_PRELOAD=LIB)
    p = subprocess.run(["srun", "-n", "2", "-N", "1", *extra, sys.executable, str(script),
                        str(tmp_path)], env=env, capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-3000:])
    inspects, reports = check_ranks(tmp_path)
    for i in inspects:
        rep = reports[i["pid"]]
        assert i["slurm"]["SLURM_LOCALID"] == str(i["rank"])
        bound = bind == "default" and slurm["task_plugin"] == "task/affinity"
        if bound:
            # Slurm bound each rank to its own core: that binding is the share, kept.
            assert len(i["start"]) < len(FULL), i["start"]
            assert rep["budget"]["cpus"] == i["start"]
            assert rep["budget"]["local_size"] == 1  # not divided again
        else:
            # Slurm left every CPU to each rank: the local rank and size from Slurm's
            # own variables divide them.
            assert i["start"] == sorted(FULL)
            assert rep["budget"]["local_size"] == 2
            assert rep["budget"]["local_rank"] == int(i["slurm"]["SLURM_LOCALID"])


@needs_two_cpus
@pytest.mark.parametrize("bind", ["none", "default"])
def test_sbatch_script_with_the_module_loaded(slurm, tmp_path, prefix, bind):
    if not LMOD_INIT.exists():
        pytest.skip(f"{LMOD_INIT} missing (scripts/bootstrap)")
    script = tmp_path / "rank.py"
    script.write_text(RANK_PY)
    batch = tmp_path / "job.sh"
    batch.write_text(
        "#!/bin/bash\n"
        f"source {LMOD_INIT} >/dev/null 2>&1\n"
        f"module use {prefix}/share/modulefiles\n"
        "module load parwidth\n"
        f"export PARWIDTH_REPORT={tmp_path}/r-%p.json PARWIDTH_NODE_DIR={tmp_path}/reg\n"
        f"srun {'--cpu-bind=none ' if bind == 'none' else ''}{sys.executable} {script} "
        f"{tmp_path}\n")
    env = {**slurm["env"]}
    p = subprocess.run(["sbatch", "--wait", "-n", "2", "-N", "1", f"--output={tmp_path}/job.out",
                        str(batch)], env=env, capture_output=True, text=True, timeout=240)
    out = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert p.returncode == 0, (p.stderr[-2000:], out[-3000:])
    inspects, reports = check_ranks(tmp_path)
    for i in inspects:
        rep = reports[i["pid"]]
        if bind == "default" and slurm["task_plugin"] == "task/affinity":
            # Slurm's own binding of each rank is its share, kept and not divided again.
            assert len(i["start"]) < len(FULL) and rep["budget"]["cpus"] == i["start"], i
            assert rep["budget"]["local_size"] == 1
        else:
            assert rep["budget"]["local_size"] == 2
        # The module's library, not the build tree's, is what governed the ranks.
        assert i["preload"].split(":")[0] == str(prefix / "lib" / "libparwidth.so")
