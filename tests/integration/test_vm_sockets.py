"""Ranks on a node of 2 sockets x 8 cores, read from a real kernel's /proc.

This machine has 2 CPUs, so the test boots a guest that has 16: QEMU (TCG, so
no /dev/kvm is needed) with -smp 16,sockets=2,cores=8, Debian's own kernel
(scripts/bootstrap unpacks it into .deps/vm) and an initramfs made here of
busybox, libparwidth.so, hwloc, libgomp and tests/programs/rank_share. Inside
it, 4 ranks of each launcher's variables (torchrun, Open MPI, MPICH, Slurm)
run side by side under the preload, and each writes what the guest's /proc
says of all its threads while they are alive. The checks:

- each rank's share (its report's budget.cpus) lies inside one socket, the
  shares are disjoint and together cover the node;
- every thread of the rank, the main thread (the OpenMP master) included, is
  inside the share; sched_getaffinity(0) is the share; a forked child is too;
- bare, the same program spans all 16 CPUs (the guest is not narrowed by
  something else);
- two busy processes that no launcher describes divide the node through the
  node registry: one socket each, every thread of each inside its share.
"""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from test_core import BIN, LIB, ROOT, cpu_list

QEMU = shutil.which("qemu-system-x86_64")
BUSYBOX = Path("/bin/busybox")
KERNEL = ROOT / ".deps" / "vm" / "vmlinuz"
RANKS = 4
SOCKETS, CORES = 2, 8

# name -> the variables a launcher gives rank r of RANKS on this node
LAUNCHERS = {
    "torchrun": lambda r: {"LOCAL_RANK": r, "LOCAL_WORLD_SIZE": RANKS},
    "openmpi": lambda r: {"OMPI_COMM_WORLD_LOCAL_RANK": r, "OMPI_COMM_WORLD_LOCAL_SIZE": RANKS},
    "mpich": lambda r: {"MPI_LOCALRANKID": r, "MPI_LOCALNRANKS": RANKS},
    "slurm": lambda r: {"SLURM_LOCALID": r, "SLURM_NODEID": 0,
                        "SLURM_STEP_TASKS_PER_NODE": RANKS, "SLURM_STEP_ID": 0,
                        "SLURM_JOB_ID": 7},
}


def _missing():
    if not QEMU:
        return "qemu-system-x86_64 not installed (scripts/bootstrap installs qemu-system-x86)"
    if not BUSYBOX.exists() or "statically linked" not in subprocess.run(
            ["file", "-L", str(BUSYBOX)], capture_output=True, text=True).stdout:
        return "no static /bin/busybox (scripts/bootstrap installs busybox-static)"
    if not KERNEL.exists():
        return f"{KERNEL} missing (scripts/bootstrap unpacks Debian's kernel there)"
    if not (BIN / "rank_share").exists():
        return "tests/programs/rank_share not built"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))


def _libraries(path):
    """The shared objects that path loads, as ldd resolves them here."""
    out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.search(r"(/\S+)\s+\(0x", line)
        if m:
            libs.append(Path(m.group(1)))
    return libs


def _put(root, src, dest=None):
    """Copies src into the guest tree at its own absolute path (or dest)."""
    dest = root / (dest or str(src)).lstrip("/")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(os.path.realpath(src), dest)
    return dest


def _init_script():
    lines = [
        "#!/bin/busybox sh",
        "/bin/busybox --install -s /bin",
        "mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev",
        "mkdir -p /dev/shm; mount -t tmpfs tmp /tmp; mount -t tmpfs shm /dev/shm",
        'echo "PWVM nproc $(nproc)"',
        "for c in /sys/devices/system/cpu/cpu[0-9]*; do",
        '  echo "PWVM cpu ${c##*cpu} $(cat $c/topology/physical_package_id)"',
        "done",
        "/opt/pw/rank_share /tmp/bare.txt",
    ]
    for name, variables in LAUNCHERS.items():
        for r in range(RANKS):
            env = " ".join(f"{k}={v}" for k, v in variables(r).items())
            lines.append(f"env LD_PRELOAD=/opt/pw/libparwidth.so PARWIDTH_MONITOR_MS=50 "
                         f"PARWIDTH_REPORT=/tmp/{name}-{r}.json {env} "
                         f"/opt/pw/rank_share /tmp/{name}-{r}.txt &")
        lines.append("wait")
    # Two processes that no launcher describes, busy side by side: the node registry divides
    # the node between them. Each writes what it sees once its share has settled, and stays
    # busy until both have written.
    for m in range(2):
        lines.append(f"env LD_PRELOAD=/opt/pw/libparwidth.so PARWIDTH_MONITOR_MS=50 "
                     f"PARWIDTH_REPORT=/tmp/member-{m}.json "
                     f"/opt/pw/rank_share /tmp/member-{m}.txt /tmp/release &")
    lines += [
        "while [ ! -f /tmp/member-0.txt ] || [ ! -f /tmp/member-1.txt ]; do sleep 1; done",
        "touch /tmp/release",
        "wait",
        "for f in /tmp/*.txt /tmp/*.json; do",
        '  echo "PWVM-FILE ${f##*/}"; cat "$f"; echo; echo "PWVM-EOF"',
        "done",
        'echo "PWVM done"',
        "poweroff -f",
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def guest(tmp_path_factory):
    """Boots the 2 x 8 guest once; returns (cpu -> socket, file name -> text)."""
    work = tmp_path_factory.mktemp("vm")
    root = work / "root"
    (root / "bin").mkdir(parents=True)
    for d in ("proc", "sys", "dev", "tmp"):
        (root / d).mkdir()
    _put(root, BUSYBOX, "/bin/busybox")
    _put(root, BIN / "rank_share", "/opt/pw/rank_share")
    lib = _put(root, LIB, "/opt/pw/libparwidth.so")
    subprocess.run(["strip", "--strip-debug", str(lib)], check=True)  # code unchanged, 1/20 the size
    hwloc = Path("/usr/lib/x86_64-linux-gnu/libhwloc.so.15")
    objects = [BIN / "rank_share", LIB] + ([hwloc] if hwloc.exists() else [])
    for obj in objects:
        for dep in _libraries(obj):
            _put(root, dep)
    if hwloc.exists():
        _put(root, hwloc)
    (root / "init").write_text(_init_script())
    (root / "init").chmod(0o755)
    image = work / "init.cpio"
    files = subprocess.run(["find", "."], cwd=root, capture_output=True, check=True).stdout
    with open(image, "wb") as f:
        subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root, input=files, stdout=f,
                       check=True)
    cmd = [QEMU, "-accel", "tcg,thread=multi", "-cpu", "qemu64", "-m", "1024",
           "-smp", f"{SOCKETS * CORES},sockets={SOCKETS},cores={CORES},threads=1",
           "-kernel", str(KERNEL), "-initrd", str(image),
           "-append", "console=ttyS0 quiet panic=-1", "-nographic", "-no-reboot",
           "-nodefaults", "-serial", "stdio"]
    p = subprocess.run(cmd, capture_output=True, timeout=900, stdin=subprocess.DEVNULL)
    console = p.stdout.decode("utf-8", "replace").replace("\r", "")
    (work / "console.txt").write_text(console)
    assert "PWVM done" in console, f"the guest did not finish (rc {p.returncode}):\n{console[-3000:]}"
    sockets, files, current = {}, {}, None
    for line in console.splitlines():
        if current is not None:
            if line == "PWVM-EOF":
                current = None
            else:
                files[current] += line + "\n"
        elif line.startswith("PWVM-FILE "):
            current = line.split()[1]
            files[current] = ""
        elif line.startswith("PWVM cpu "):
            _, _, cpu, pkg = line.split()
            sockets[int(cpu)] = int(pkg)
    return sockets, files


def _rank(text):
    """What rank_share wrote: main affinity, tid -> CPUs, the child's CPUs, team size."""
    out = {"tasks": {}}
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word == "task":
            tid, cpus = rest.split()
            out["tasks"][int(tid)] = cpu_list(cpus)
        elif word in ("affinity", "child"):
            out[word] = cpu_list(rest)
        elif word == "team":
            out[word] = int(rest)
    return out


def test_guest_has_two_sockets_of_eight(guest):
    sockets, files = guest
    assert len(sockets) == SOCKETS * CORES
    assert sorted(sockets.values()) == [s for s in range(SOCKETS) for _ in range(CORES)]
    bare = _rank(files["bare.txt"])
    everything = frozenset(sockets)
    assert bare["affinity"] == everything
    assert all(cpus == everything for cpus in bare["tasks"].values())
    assert bare["team"] == SOCKETS * CORES  # libgomp's default team: every CPU


@pytest.mark.parametrize("launcher", list(LAUNCHERS))
def test_each_rank_lives_inside_its_share_on_one_socket(guest, launcher):
    sockets, files = guest
    shares = []
    for r in range(RANKS):
        report = json.loads(files[f"{launcher}-{r}.json"])
        budget = report["budget"]
        assert (budget["local_rank"], budget["local_size"]) == (r, RANKS), budget["notes"]
        share = frozenset(budget["cpus"])
        assert share and len({sockets[c] for c in share}) == 1, (r, sorted(share))
        seen = _rank(files[f"{launcher}-{r}.txt"])
        assert seen["affinity"] == share  # os.sched_getaffinity(0) is the share
        assert seen["child"] <= share  # a forked child stays inside it
        main = report["pid"]
        assert main in seen["tasks"]
        for tid, cpus in seen["tasks"].items():
            assert cpus <= share, (r, tid, sorted(cpus), sorted(share))
        assert len(seen["tasks"]) >= 3  # main, helper, the OpenMP workers or the monitor
        assert 1 <= seen["team"] <= len(share)
        shares.append(share)
    assert sum(len(s) for s in shares) == len(frozenset().union(*shares))  # disjoint
    assert frozenset().union(*shares) == frozenset(sockets)  # the ranks divide the node


def test_unrelated_busy_processes_divide_the_node_by_socket(guest):
    sockets, files = guest
    shares = []
    for m in range(2):
        seen = _rank(files[f"member-{m}.txt"])
        share = seen["affinity"]  # the share in force once it had settled
        assert len(share) == CORES and len({sockets[c] for c in share}) == 1, sorted(share)
        for tid, cpus in seen["tasks"].items():
            assert cpus <= share, (m, tid, sorted(cpus), sorted(share))
        assert seen["child"] <= share
        assert 1 <= seen["team"] <= len(share)
        report = json.loads(files[f"member-{m}.json"])
        notes = [f["value"] for f in report["frameworks"] if f["name"] == "membership"]
        assert notes and notes[0] == "joined", report["frameworks"]
        shares.append(share)
    assert not shares[0] & shares[1]
