"""Processes whose demand comes in bursts (model servers) on a shared node
(issue 38): a bursty process keeps its share across the gaps its own history
says it comes back from, and a process that really stops still gives it back;
a server that gave its share back does not join again while it exits; and the
monitor's advice for a server tells its own threads (its event loop, its
request threads) from pools.

The bursty process is a real threaded C program that spins its threads while
busy and sleeps them while idle, beside another governed process, in one node
registry under a temporary PARWIDTH_NODE_DIR; the server is bench/serving's
FastAPI/uvicorn server with PyTorch (.venv/torch, fastapi and uvicorn from
scripts/bootstrap).
"""
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_core import BIN, FULL, LIB, ROOT, clean_env, load  # noqa: E402
from test_multiproc import poll, toggle  # noqa: E402,F401 (toggle: a fixture)

TORCH_PY = ROOT / ".venv" / "torch" / "bin" / "python"
SERVER = ROOT / "bench" / "serving" / "server.py"

needs_two_cpus = pytest.mark.skipif(len(FULL) < 2, reason="a node's division needs 2 CPUs")


def start(exe, reg, report, idle_ms, n=2):
    env = clean_env(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=reg, PARWIDTH_MONITOR_MS=50,
                    PARWIDTH_REPORT=report, PARWIDTH_NODE_IDLE_MS=idle_ms)
    p = subprocess.Popen([str(exe), str(n)], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def say(p, what):
    p.stdin.write(what + "\n")
    p.stdin.flush()


def listed(reg):
    return {int(f.split(".")[0]) for f in os.listdir(reg) if f.split(".")[0].isdigit()}


def membership(report):
    return [(f["value"], f["why"]) for f in report["frameworks"] if f["name"] == "membership"]


@needs_two_cpus
def test_a_bursty_process_keeps_its_share_across_gaps_within_its_learned_hysteresis(toggle,
                                                                                   tmp_path):
    """Idle time 0.5 s. B is busy throughout. A works in bursts: a first gap
    shorter than the idle time (kept), then gaps of 1.2 s: the first of them
    costs one leave and join, after which A has come back from a 1.2 s gap and
    keeps its share through the next ones. Then A stops for good and gives its
    share back once idle for twice its longest gap."""
    reg = tmp_path / "reg"
    b = start(toggle, reg, tmp_path / "b.json", 500)
    a = start(toggle, reg, tmp_path / "a.json", 500)
    kept_through = []
    try:
        poll(lambda: listed(reg) == {a.pid, b.pid}, what="A and B to join")
        time.sleep(0.6)
        say(a, "idle")
        time.sleep(0.25)  # shorter than the idle time
        say(a, "busy")
        time.sleep(0.6)
        say(a, "idle")
        # The first long gap: A leaves once (no gap this long seen yet) ...
        poll(lambda: a.pid not in listed(reg), what="A to leave in its first long gap")
        time.sleep(max(0.0, 1.2 - 0.5))
        say(a, "busy")
        poll(lambda: a.pid in listed(reg), what="A to come back")
        for _ in range(3):
            time.sleep(0.6)
            say(a, "idle")
            # ... and keeps its share through gaps as long as the one it came back from.
            end = time.monotonic() + 1.2
            stayed = True
            while time.monotonic() < end:
                stayed = stayed and a.pid in listed(reg)
                time.sleep(0.02)
            kept_through.append(stayed)
            say(a, "busy")
        time.sleep(0.6)
        # A stops: it gives its share back, and B takes every core.
        say(a, "idle")
        t_stop = time.monotonic()
        poll(lambda: listed(reg) == {b.pid}, timeout=30, what="A to leave once it has stopped")
        stopped_for = time.monotonic() - t_stop
    finally:
        for p in (a, b):
            p.stdin.close()
            assert p.wait(timeout=30) == 0
    assert kept_through == [True, True, True]
    notes = membership(load(tmp_path / "a.json"))
    assert [v for v, _ in notes] == ["joined", "left", "joined", "left"], notes
    assert "idle" in notes[1][1]
    # The last leave came from the learned hold: twice a gap of about 1.2 s, not the 0.5 s
    # idle time (measured on its samples; the poll above is only a bound from below).
    assert "gap" in notes[3][1], notes
    held = float(notes[3][1].split("held ")[1].split(" s")[0])
    assert 2.0 <= held <= 5.0, notes
    assert stopped_for >= 2.0, stopped_for


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def need_server():
    if not TORCH_PY.exists():
        pytest.skip(".venv/torch missing (scripts/bootstrap)")
    if subprocess.run([str(TORCH_PY), "-c", "import fastapi, uvicorn"],
                      capture_output=True).returncode != 0:
        pytest.skip(".venv/torch lacks fastapi/uvicorn (scripts/bootstrap)")


def start_server(tmp_path, report, prefix=(), **extra):
    port = free_port()
    env = clean_env(LD_PRELOAD=LIB, PARWIDTH_REPORT=report, PARWIDTH_MONITOR_MS=100, **extra)
    log = open(tmp_path / f"server-{port}.log", "w")
    p = subprocess.Popen(list(prefix) + [str(TORCH_PY), str(SERVER), "--framework", "torch",
                                         "--port", str(port)],
                         env=env, stdout=log, stderr=subprocess.STDOUT)

    def up():
        assert p.poll() is None, (tmp_path / f"server-{port}.log").read_text()[-3000:]
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5):
                return True
        except OSError:
            return False

    poll(up, timeout=240, what="the server to listen")
    return p, port


def get(port, timeout=120):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/infer", timeout=timeout) as r:
        return json.loads(r.read())


def stop_server(p):
    """SIGTERM, as a service manager stops a server: uvicorn shuts down, then
    raises the signal again at its default action (its status says so)."""
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=120) in (0, -signal.SIGTERM)


@needs_two_cpus
def test_an_idle_server_does_not_join_at_sigterm(toggle, tmp_path):
    """A model server takes its share while it serves, gives it back once idle,
    and is stopped with SIGTERM: its shutdown (uvicorn's, then the
    interpreter's) runs no work that needs a share, and its neighbour is not
    divided again for it."""
    need_server()
    reg = tmp_path / "reg"
    idle = 1000
    neighbour = start(toggle, reg, tmp_path / "n.json", idle)
    server, port = start_server(tmp_path, tmp_path / "s.json", PARWIDTH_NODE_DIR=reg,
                                PARWIDTH_NODE_IDLE_MS=idle)
    try:
        end = time.monotonic() + 3
        while time.monotonic() < end or server.pid not in listed(reg):
            get(port)
            assert time.monotonic() < end + 60, "the server never joined while serving"
        poll(lambda: listed(reg) == {neighbour.pid}, timeout=60,
             what="the idle server to give its share back")
        stop_server(server)
        time.sleep(0.5)  # a join at exit would be one of the neighbour's samples by now
    finally:
        if server.poll() is None:
            server.kill()
        neighbour.stdin.close()
        assert neighbour.wait(timeout=30) == 0
    server_report = load(tmp_path / "s.json")
    notes = membership(server_report)
    assert notes and notes[-1][0] == "left", notes
    assert [v for v, _ in notes].count("joined") == [v for v, _ in notes].count("left"), notes
    # After the server's last leave, the neighbour was divided once (it took every core
    # back), not again for a join at the server's exit.
    left_ms = [f["time_ms"] for f in server_report["frameworks"]
               if f["name"] == "membership" and f["value"] == "left"][-1]
    node = [f for f in load(tmp_path / "n.json")["frameworks"]
            if f["name"] == "node" and f["time_ms"] >= left_ms]
    assert len(node) <= 1, node


class Traffic:
    """Clients that each call /infer back to back on their port until stopped;
    errors are kept for the test to assert on."""

    def __init__(self, ports):
        self.stop = threading.Event()
        self.errors = []
        self.clients = [threading.Thread(target=self.run, args=(p,), daemon=True) for p in ports]
        for c in self.clients:
            c.start()

    def run(self, port):
        while not self.stop.is_set():
            try:
                get(port)
            except OSError as e:
                self.errors.append(e)
                return

    def end(self):
        self.stop.set()
        for c in self.clients:
            c.join(timeout=120)


def test_the_advice_for_a_server_names_its_event_loop_as_the_programs_own_thread(tmp_path):
    """A server confined to one CPU and asked for more than it can serve: its
    request threads (FastAPI's thread pool, each running the model) wait for
    the CPU. They and the event loop on its main thread are the program's own
    threads, not pools: the advice names them so, with what an operator can
    change, and does not ask for fewer pool threads."""
    need_server()
    cpu = sorted(FULL)[0]
    server, port = start_server(tmp_path, tmp_path / "s.json", prefix=["taskset", "-c", str(cpu)],
                                PARWIDTH_NODE_DIR=tmp_path / "reg")
    traffic = Traffic([port] * 6)
    try:
        time.sleep(6)
    finally:
        traffic.end()
        stop_server(server)
    assert not traffic.errors, traffic.errors
    monitor = load(tmp_path / "s.json")["monitor"]
    advice = [a["text"] for a in monitor["actions"] if a["kind"] == "advice"]
    assert advice, monitor["actions"]
    text = advice[0]
    assert f"thread {server.pid} (the main thread, an event loop)" in text, text
    assert "the program's own threads, not pools" in text, text
    assert "a request thread or a model's caller" in text, text
    assert "PARWIDTH_POOLS" not in text, text
    flagged = [a["text"] for a in monitor["actions"] if a["kind"] == "oversubscribed"]
    assert flagged and "the program's own threads" in flagged[0], flagged


def node_members(reg):
    out = subprocess.run([str(BIN / "parwidth"), "node", "--json", "--dir", str(reg)],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return {m["pid"]: m for m in json.loads(out.stdout)["members"]}


POLLER = r"""
import os, select, socket, sys, threading
def spin():
    while True:
        sum(range(10000))
for _ in range(2):
    threading.Thread(target=spin, daemon=True).start()
if sys.argv[1] == "listen":
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
r, w = os.pipe()
print("ready", flush=True)
while True:  # the main thread waits in select, as a DataLoader's waits for its workers
    select.select([r, sys.stdin], [], [], 0.05)
    if sys.stdin in select.select([sys.stdin], [], [], 0)[0]:
        break
"""


@needs_two_cpus
@pytest.mark.parametrize("listens", [False, True], ids=["batch", "listening"])
def test_a_process_serves_when_its_event_loop_waits_with_a_listening_socket(tmp_path, listens):
    """A process whose main thread waits in select between its busy threads'
    work is a batch job (a DataLoader's training loop waits so for its workers)
    unless it also holds a listening socket: the node registry says which."""
    reg = tmp_path / "reg"
    script = tmp_path / "poller.py"
    script.write_text(POLLER)
    env = clean_env(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=reg, PARWIDTH_MONITOR_MS=50)
    p = subprocess.Popen([sys.executable, str(script), "listen" if listens else "batch"], env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        member = poll(lambda: node_members(reg).get(p.pid), timeout=30, what="it to join")
        if listens:
            member = poll(lambda: node_members(reg)[p.pid]["serves"] and node_members(reg)[p.pid],
                          timeout=30, what="its entry to say it serves")
        else:
            time.sleep(2)  # forty samples with its main thread in select
            member = node_members(reg)[p.pid]
        assert member["serves"] == listens, member
    finally:
        p.stdin.close()
        assert p.wait(timeout=30) == 0


@needs_two_cpus
def test_servers_share_their_cores_by_time_and_a_batch_job_beside_them_is_split(toggle,
                                                                               tmp_path):
    """Two model servers under traffic, alone on the node: each is as wide as
    the node (its threads planned on every core), the cores shared by time
    rather than split. A batch job that keeps its cores busy joins: the three
    are divided as any three members, each server planned on a part of the
    node. The batch job stops: the servers share the node by time again."""
    need_server()
    reg = tmp_path / "reg"
    servers = [start_server(tmp_path, tmp_path / f"s{i}.json", PARWIDTH_NODE_DIR=reg)
               for i in range(2)]
    traffic = Traffic([port for _, port in servers for _ in range(2)])
    pids = {p.pid for p, _ in servers}
    batch = None
    try:

        def time_shared():
            m = node_members(reg)
            return m if set(m) == pids and all(
                x["serves"] and x["time_shared"] and sorted(x["share"]) == sorted(FULL)
                and x["plan"] == {"pools": 1, "intra": len(FULL)} for x in m.values()) else None

        poll(time_shared, timeout=120, what="both servers to share every core by time")
        batch = start(toggle, reg, tmp_path / "b.json", 3000)

        def split():
            m = node_members(reg)
            if set(m) != pids | {batch.pid} or any(x["time_shared"] for x in m.values()):
                return None
            # Each server planned on a part of the node: on 3 cores or more, disjoint
            # shares; on 2, three members share both cores with a core's worth or less each
            # (governor/node_share's overlap), one thread.
            if any(m[p]["plan"] is None or m[p]["plan"]["intra"] >= len(FULL) for p in pids):
                return None
            shares = [set(x["share"]) for x in m.values()]
            return m if len(FULL) < 3 or all(not (a & b) for i, a in enumerate(shares)
                                             for b in shares[i + 1:]) else None

        members = poll(split, timeout=60, what="the batch job and the servers to be split")
        assert not members[batch.pid]["serves"]
        batch.stdin.close()
        assert batch.wait(timeout=30) == 0
        batch = None
        poll(time_shared, timeout=60, what="the servers to share every core by time again")
    finally:
        traffic.end()
        if batch:
            batch.kill()
        for p, _ in servers:
            stop_server(p)
    assert not traffic.errors, traffic.errors
    for i in range(2):
        # Each time-shared plan: threads as wide as the node, its OpenMP teams within
        # what a split would give (their threads wait for each other at every region's end).
        shared = [e for e in load(tmp_path / f"s{i}.json")["plan_timeline"]
                  if "servers: shared by time" in e["cause"]]
        assert shared, load(tmp_path / f"s{i}.json")["plan_timeline"]
        for e in shared:
            assert sorted(e["cpus"]) == sorted(FULL) and e["threads"] == len(FULL), e
            assert 1 <= e["omp_cap"] <= (len(FULL) + 1) // 2, e


ORT_PY = ROOT / ".venv" / "ort" / "bin" / "python"
ORT_IDLE_SESSION = r"""
import json, sys, time
import numpy as np
import onnxruntime as ort
sys.path.insert(0, sys.argv[1])
from infer_ort import filled
sess = ort.InferenceSession(filled(sys.argv[2], sys.argv[3]), providers=["CPUExecutionProvider"])
inp = sess.get_inputs()[0]
x = np.zeros([1 if not isinstance(d, int) else d for d in inp.shape], np.float32)
for _ in range(3):
    sess.run(None, {inp.name: x})
print("ready", flush=True)
sys.stdin.readline()
resumed = time.time()
for _ in range(3):
    sess.run(None, {inp.name: x})
print(json.dumps({"resumed": resumed}), flush=True)
"""


@needs_two_cpus
def test_an_ort_session_is_rebuilt_between_runs_when_the_node_is_divided_while_it_idles(
        toggle, tmp_path):
    """An ONNX Runtime session made alone has the whole node's pools; a
    neighbour arrives while it serves nothing. It is made again for its share
    in that pause, with no run in flight, not by the next run that comes."""
    if not ORT_PY.exists():
        pytest.skip(".venv/ort missing (scripts/bootstrap)")
    reg = tmp_path / "reg"
    script = tmp_path / "idle_session.py"
    script.write_text(ORT_IDLE_SESSION)
    env = clean_env(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=reg, PARWIDTH_MONITOR_MS=50,
                    PARWIDTH_REPORT=tmp_path / "ort.json")
    p = subprocess.Popen([str(ORT_PY), str(script), str(ROOT / "examples"),
                          str(ROOT / "tests" / "fixtures" / "models" / "googlenet.onnx"),
                          str(tmp_path / "googlenet.onnx")],
                         env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    neighbour = None
    try:
        assert p.stdout.readline().strip() == "ready"
        neighbour = start(toggle, reg, tmp_path / "n.json", 3000)
        poll(lambda: listed(reg) == {p.pid, neighbour.pid}, what="both to be members")
        time.sleep(3)  # the rebuild is due a second after the session was made
        p.stdin.write("go\n")
        p.stdin.flush()
        resumed = json.loads(p.stdout.readline())["resumed"]
        p.stdin.close()
        assert p.wait(timeout=60) == 0
    finally:
        if p.poll() is None:
            p.kill()
        if neighbour:
            neighbour.stdin.close()
            neighbour.wait(timeout=30)
    rebuilt = [f for f in load(tmp_path / "ort.json")["frameworks"]
               if f["setting"] == "session rebuilt for the plan in force (Python)"]
    assert rebuilt and rebuilt[0]["applied"], rebuilt
    assert "between runs" in rebuilt[0]["why"] and "runs in flight: 0" in rebuilt[0]["why"], rebuilt
    assert rebuilt[0]["time_ms"] < resumed * 1000, (rebuilt, resumed)
    made, now = rebuilt[0]["value"].split(" -> ")
    assert "spin 0" in now, rebuilt
