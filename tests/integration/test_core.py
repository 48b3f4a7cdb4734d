"""Integration tests: libparwidth.so preloaded into real programs.

What a user would notice, read from the kernel (/proc/self/task/*/status of the
program itself, printed while its threads are alive) and from the report:
threads pinned where the report says, OpenMP teams capped, explicit user
settings kept, observe/off modes, the launcher, and that the preload is safe
to put under anything (exceptions, fork/exec, posix_spawn, garbage options,
unreadable topology or cgroup files, the exported symbol table).

The build directory is $PW_BUILD (default "build", relative to the repository
root). Run: python -m pytest tests/integration
"""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("PW_BUILD", "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
LIB = BUILD / "lib" / "libparwidth.so"
BIN = BUILD / "bin"
OMP_LIB = BUILD / "lib" / "libomp_teams_lib.so"
OMP_LIB_CLANG = BUILD / "lib" / "libomp_teams_lib_clang.so"

if not LIB.exists():
    raise RuntimeError(f"{LIB} not found: build first (cmake --build {BUILD}) or set PW_BUILD")

FULL = frozenset(os.sched_getaffinity(0))  # what every child inherits
WARNING = "parwidth: warning:"


# ---------------------------------------------------------------- helpers


def cpu_list(text):
    """'0-2,5' -> {0, 1, 2, 5}"""
    out = set()
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return frozenset(out)


def clean_env(**extra):
    """The caller's environment without any parwidth/OpenMP setting, plus extra."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PARWIDTH_", "OMP_", "KMP_", "GOMP_")) and k != "LD_PRELOAD"
    }
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(cmd, preload=True, timeout=120, **options):
    """Runs cmd (a list), optionally under the preload with PARWIDTH_<k>=v options
    (OMP_*, KMP_*, PAPI_* and LIBPFM_* are passed as they are)."""
    extra = {}
    for k, v in options.items():
        extra[k if k.startswith(("OMP_", "KMP_", "PAPI_", "LIBPFM_")) else "PARWIDTH_" + k] = v
    if preload:
        extra["LD_PRELOAD"] = str(LIB)
    return subprocess.run(
        [str(c) for c in cmd],
        env=clean_env(**extra),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def load(path):
    with open(path) as f:
        return json.load(f)


def warnings_of(proc):
    return [line for line in proc.stderr.splitlines() if line.startswith(WARNING)]


def require(path):
    if not Path(path).exists():
        pytest.skip(f"{path} not built")
    return path


# The OpenMP probe built three ways: the runtime linked in (libgomp), clang with
# LLVM libomp (__kmpc_fork_call), and libgomp reachable only from a library
# that a non-OpenMP program dlopen()s RTLD_LOCAL.
VARIANTS = {
    "libgomp": (lambda: [BIN / "omp_teams"], "omp_teams", "libgomp.so"),
    "libomp": (lambda: [require(BIN / "omp_teams_clang")], "omp_teams_clang", "libomp.so"),
    "dlopen": (
        lambda: [BIN / "dlopen_omp", require(OMP_LIB)],
        "libomp_teams_lib.so",
        "libgomp.so",
    ),
    # LLVM libomp only reachable from an RTLD_LOCAL library, loaded after
    # parwidth activated: its own binding must still be kept off.
    "dlopen-libomp": (
        lambda: [BIN / "dlopen_omp", require(OMP_LIB_CLANG)],
        "libomp_teams_lib_clang.so",
        "libomp.so",
    ),
}


def omp_run(variant, *args, preload=True, **options):
    cmd = VARIANTS[variant][0]() + list(args)
    p = run(cmd, preload=preload, **options)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout), p


def all_teams(out):
    teams = list(out["main"]["teams"])
    for w in out["workers"]:
        teams += w["teams"]
    return teams


def all_max_threads(out):
    return [out["main"]["max_threads"]] + [w["max_threads"] for w in out["workers"]]


def tasks_by_tid(tasks):
    return {int(t["tid"]): t for t in tasks}


def check_pinned_as_reported(report, tasks, pid):
    """Every thread the report lists is alive in the program's /proc dump and
    runs where the report says; nothing else (but the main thread and
    parwidth's own monitor thread) runs in the process; the main thread keeps
    the whole CPU set."""
    by_tid = tasks_by_tid(tasks)
    assert cpu_list(by_tid[pid]["cpus"]) == FULL, "the main thread's affinity was narrowed"
    created = {t for t, task in by_tid.items() if t != pid and task["comm"] != "parwidth-mon"}
    reported = {t["tid"] for t in report["threads"]}
    assert reported == created, "report threads != the program's threads in /proc"
    assert len(report["threads"]) == len(created)
    core_sets = report["plan"]["core_sets"]
    for t in report["threads"]:
        cpus = cpu_list(by_tid[t["tid"]]["cpus"])
        assert t["creator"], t
        if t["pinned"]:
            assert t["cpu"] is not None
            assert cpus == {t["cpu"]}, (t, by_tid[t["tid"]])
            assert t["cpu"] in core_sets[t["pool"]]
        else:
            assert cpus == FULL, (t, by_tid[t["tid"]])


@pytest.fixture(scope="module", autouse=True)
def two_cpus():
    if len(FULL) < 2:
        pytest.skip("these tests need at least 2 allowed CPUs")


# ------------------------------------------- pinning, creators, team caps


@pytest.mark.parametrize("pools", [None, 2])
def test_naive_engine_pinned_as_reported(tmp_path, pools):
    report, inspect = tmp_path / "r.json", tmp_path / "i.json"
    opts = {"REPORT": report}
    if pools:
        opts["POOLS"] = pools
    p = run([BIN / "naive_engine", "--iterations", 2, "--size", 48, "--inspect", inspect], **opts)
    assert p.returncode == 0, p.stderr
    assert warnings_of(p) == []
    r, i = load(report), load(inspect)
    assert r["mode"] == "govern" and r["governed"] is True
    assert r["pid"] == i["pid"] and r["program"] == "naive_engine"
    plan = r["plan"]
    if pools:
        assert plan["pools"] == pools
    assert plan["threads"] == max(1, len(FULL) // plan["pools"])
    check_pinned_as_reported(r, i["tasks"], i["pid"])
    assert all(t["pinned"] for t in r["threads"])
    workers = [t for t in r["threads"] if t["creator"].startswith("std::thread")]
    gomp = [t for t in r["threads"] if t["creator"].startswith("libgomp.so")]
    assert len(workers) == len(i["teams"])  # one per logical CPU: naive_engine's default
    assert all(re.fullmatch(r"std::thread \(libstdc\+\+\.so[.\d]*\) from naive_engine",
                            t["creator"]) for t in workers), workers
    assert len(workers) + len(gomp) == len(r["threads"]), r["threads"]
    # Each worker's team: at most the plan's threads, one extra libgomp thread per member.
    assert all(t == plan["threads"] for t in i["teams"]), i["teams"]
    assert len(gomp) == len(workers) * (plan["threads"] - 1)
    # Pool members spread: pools' workers land on distinct cores where there are enough.
    if len(r["threads"]) <= len(FULL):
        assert len({t["cpu"] for t in r["threads"]}) == len(r["threads"])
    assert r["openmp"]["team_cap"] == plan["threads"]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_openmp_teams_capped(tmp_path, variant):
    bare, _ = omp_run(variant, "--clause", 2, preload=False)
    n = len(FULL)
    assert set(all_teams(bare)) == {n} and set(all_max_threads(bare)) == {n}

    report = tmp_path / "r.json"
    out, p = omp_run(variant, "--clause", 2, POOLS=2, REPORT=report)
    assert warnings_of(p) == []
    r = load(report)
    assert r["governed"] is True
    assert (r["plan"]["pools"], r["plan"]["threads"]) == (2, max(1, n // 2))
    cap = r["plan"]["threads"]
    assert set(all_teams(out)) == {cap}, out
    assert set(all_max_threads(out)) == {cap}, out
    # An explicit num_threads clause is the programmer's: left alone.
    assert out["main"]["clause_team"] == 2 and {w["clause_team"] for w in out["workers"]} == {2}
    fw = [f for f in r["frameworks"] if f["name"] == "openmp"]
    assert len(fw) == 1 and fw[0]["applied"] is True and fw[0]["value"] == str(cap)
    assert r["openmp"]["team_cap"] == cap


@pytest.mark.parametrize(
    "variant",
    [
        "libgomp",
        # libomp binds every thread to the CPU set of the first thread that
        # initialises it (a pinned one): the preload turns that binding off.
        "libomp",
        "dlopen",
        "dlopen-libomp",
    ],
)
@pytest.mark.parametrize("pools", [None, 2])
def test_openmp_threads_pinned_as_reported(tmp_path, variant, pools):
    report = tmp_path / "r.json"
    opts = {"REPORT": report}
    if pools:
        opts["POOLS"] = pools
    out, _ = omp_run(variant, **opts)
    r = load(report)
    check_pinned_as_reported(r, out["tasks"], out["pid"])
    assert r["threads"] and all(t["pinned"] for t in r["threads"])


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_thread_listed_with_its_creator(tmp_path, variant):
    """Default plan (one pool of all cores): teams > 1, so the OpenMP runtime
    creates threads too; each is attributed to the library that asked."""
    report = tmp_path / "r.json"
    out, _ = omp_run(variant, "--threads", 3, REPORT=report)
    r = load(report)
    _, program, runtime = VARIANTS[variant]
    by_creator = {}
    for t in r["threads"]:
        by_creator.setdefault(t["creator"], []).append(t["tid"])
    mine = by_creator.pop(program, [])
    assert sorted(mine) == sorted(w["tid"] for w in out["workers"]), r["threads"]
    assert by_creator, "the OpenMP runtime's threads are missing from the report"
    for creator in by_creator:
        assert creator.startswith(runtime), creator
    # Every task in the program (but main and parwidth's monitor) is in the report.
    listed = {t["tid"] for t in r["threads"]}
    others = {int(t["tid"]) for t in out["tasks"] if t["comm"] != "parwidth-mon"} - {out["pid"]}
    assert others == listed


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_user_omp_num_threads_kept_unless_override(tmp_path, variant):
    report = tmp_path / "r.json"
    out, _ = omp_run(variant, POOLS=2, OMP_NUM_THREADS=2, REPORT=report)
    assert set(all_teams(out)) == {2} and set(all_max_threads(out)) == {2}
    fw = [f for f in load(report)["frameworks"] if f["name"] == "openmp"]
    assert len(fw) == 1 and fw[0]["applied"] is False
    assert fw[0]["setting"] == "OMP_NUM_THREADS" and fw[0]["value"] == "2" and fw[0]["why"]

    out, _ = omp_run(variant, POOLS=2, OMP_NUM_THREADS=2, OVERRIDE=1, REPORT=report)
    cap = max(1, len(FULL) // 2)
    assert set(all_teams(out)) == {cap} and set(all_max_threads(out)) == {cap}
    fw = [f for f in load(report)["frameworks"] if f["name"] == "openmp"]
    assert len(fw) == 1 and fw[0]["applied"] is True


# ------------------------------------------------------------------ modes


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_observe_changes_nothing_but_reports_the_plan(tmp_path, variant):
    report = tmp_path / "r.json"
    out, p = omp_run(variant, MODE="observe", POOLS=2, REPORT=report)
    assert warnings_of(p) == []
    n = len(FULL)
    assert set(all_teams(out)) == {n} and set(all_max_threads(out)) == {n}
    assert all(cpu_list(t["cpus"]) == FULL for t in out["tasks"]), out["tasks"]
    r = load(report)
    assert r["mode"] == "observe" and r["governed"] is False
    assert r["plan"]["pools"] == 2 and r["plan"]["core_sets"]
    assert r["threads"] and not any(t["pinned"] for t in r["threads"])
    assert all(t["cpu"] is None for t in r["threads"])
    assert r["openmp"]["team_cap"] == 0
    assert all(f["applied"] is False for f in r["frameworks"])


def test_observe_naive_engine(tmp_path):
    report, inspect = tmp_path / "r.json", tmp_path / "i.json"
    p = run([BIN / "naive_engine", "--iterations", 2, "--size", 48, "--inspect", inspect],
            MODE="observe", REPORT=report)
    assert p.returncode == 0, p.stderr
    i, r = load(inspect), load(report)
    assert all(cpu_list(t["cpus"]) == FULL for t in i["tasks"])
    assert set(i["teams"]) == {len(FULL)}
    assert r["mode"] == "observe" and r["plan"] is not None
    program_tasks = {t["tid"] for t in i["tasks"] if t["comm"] != "parwidth-mon"}
    assert {t["tid"] for t in r["threads"]} == program_tasks - {i["pid"]}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_mode_off_writes_nothing_and_changes_nothing(tmp_path, variant):
    report = tmp_path / "r.json"
    out, p = omp_run(variant, MODE="off", POOLS=2, REPORT=report, VERBOSE=3)
    assert p.stderr == ""
    assert not report.exists() and list(tmp_path.iterdir()) == []
    n = len(FULL)
    assert set(all_teams(out)) == {n}
    assert all(cpu_list(t["cpus"]) == FULL for t in out["tasks"])


# --------------------------------------------------------------- launcher


def parwidth(*args, **kw):
    return subprocess.run([str(BIN / "parwidth"), *map(str, args)], env=clean_env(**kw),
                          capture_output=True, text=True, timeout=120)


def comparable(r):
    return {
        "mode": r["mode"],
        "governed": r["governed"],
        "budget": r["budget"],
        "plan": r["plan"],
        # time_ms is when each note was made (Unix ms): the two runs differ in it.
        "frameworks": [{k: v for k, v in f.items() if k != "time_ms"} for f in r["frameworks"]],
        "openmp": r["openmp"],
        "threads": sorted((t["creator"], t["pool"], t["pinned"]) for t in r["threads"]),
        "warnings": r["warnings"],
    }


def test_parwidth_run_equals_preload(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    p = parwidth("run", "--pools", 2, "--report", a, "--", BIN / "omp_teams")
    assert p.returncode == 0, p.stderr
    via_run = json.loads(p.stdout)
    via_env, _ = omp_run("libgomp", POOLS=2, REPORT=b)
    ra, rb = load(a), load(b)
    assert comparable(ra) == comparable(rb)
    for out, r in ((via_run, ra), (via_env, rb)):
        check_pinned_as_reported(r, out["tasks"], out["pid"])
    strip = lambda o: (all_teams(o), all_max_threads(o),  # noqa: E731
                       sorted(t["cpus"] for t in o["tasks"]))
    assert strip(via_run) == strip(via_env)


def test_parwidth_run_exit_codes(tmp_path):
    assert parwidth("run", "--", "sh", "-c", "exit 7").returncode == 7
    assert parwidth("run", "--pools", 2, "sh", "-c", "exit 9").returncode == 9
    p = parwidth("run", "--", str(tmp_path / "no-such-program"))
    assert p.returncode == 127 and p.stderr
    h = parwidth("run", "--help")
    assert h.returncode == 0 and "usage" in h.stdout
    for bad in (["--bogus", "--", "true"], ["--pools", "banana", "--", "true"], ["--pools"],
                ["--pools", 2]):
        p = parwidth("run", *bad)
        assert p.returncode == 2, (bad, p.stderr)
        assert p.stderr, bad


def test_parwidth_run_passes_the_environment(tmp_path):
    p = parwidth("run", "--pools", 3, "--", "sh", "-c", 'echo "$PARWIDTH_POOLS $LD_PRELOAD"')
    assert p.returncode == 0
    pools, preload = p.stdout.split()
    assert pools == "3" and Path(preload).resolve() == LIB.resolve()


# ----------------------------------------------------------------- safety


def same_with_and_without(cmd, tmp_path, **opts):
    bare = run(cmd, preload=False)
    pre = run(cmd, REPORT=tmp_path / "r.%p.json", **opts)
    assert (pre.stdout, pre.stderr, pre.returncode) == (bare.stdout, bare.stderr,
                                                        bare.returncode)
    return bare, pre


def test_exceptions_in_threads(tmp_path):
    bare, _ = same_with_and_without([BIN / "throw_threads"], tmp_path)
    assert bare.returncode == 0 and "total 1206" in bare.stdout
    reports = [load(f) for f in tmp_path.glob("r.*.json")]
    assert len(reports) == 1 and len(reports[0]["threads"]) == 6
    assert all(t["pinned"] for t in reports[0]["threads"])


def test_fork_and_exec(tmp_path):
    bare, _ = same_with_and_without([BIN / "fork_exec"], tmp_path)
    assert bare.returncode == 4
    assert bare.stdout.splitlines() == [
        "parent threads: 29",
        "hello from exec",
        "echo child: exit 0",
        "self child: exit 5",
        "threaded child: 29",
        "threaded child: exit 6",
        "plain child: exit 9",
        "parent threads again: 29",
    ]


def test_posix_spawn_child_has_the_whole_cpu_set(tmp_path):
    bare, pre = same_with_and_without([BIN / "spawn"], tmp_path)
    assert bare.returncode == 0
    assert 'posix_spawn sh: "from sh" exit 3' in bare.stdout
    line = re.search(r'posix_spawnp grep: "Cpus_allowed_list:\s*([\d,-]+)" exit 0', pre.stdout)
    assert line and cpu_list(line.group(1)) == FULL, pre.stdout
    # The spawning thread itself was pinned to one core: the test means something.
    spawner = [load(f) for f in tmp_path.glob("r.*.json") if load(f)["program"] == "spawn"]
    assert len(spawner) == 1 and spawner[0]["governed"]
    assert [t["pinned"] for t in spawner[0]["threads"]] == [True]


def test_posix_spawn_child_of_a_confined_rank_inherits_its_share(tmp_path):
    """A rank lives inside its share (rank 1 of 2: the second half of the cores), and so
    does what it starts with posix_spawn, before the child plans anything itself."""
    if len(FULL) < 2:
        pytest.skip("needs 2 allowed CPUs")
    p = run([BIN / "spawn"], REPORT=tmp_path / "r.%p.json", LOCAL_RANK=1, LOCAL_SIZE=2,
            NODE_DIR=tmp_path / "node")
    assert p.returncode == 0, p.stderr
    rank = [load(f) for f in tmp_path.glob("r.*.json") if load(f)["program"] == "spawn"]
    assert len(rank) == 1
    share = set(rank[0]["budget"]["cpus"])
    assert share and share < FULL, rank[0]["budget"]
    line = re.search(r'posix_spawnp grep: "Cpus_allowed_list:\s*([\d,-]+)" exit 0', p.stdout)
    assert line and cpu_list(line.group(1)) == share, p.stdout


def test_forked_child_reports_on_its_own(tmp_path):
    report = tmp_path / "r.json"
    proc = subprocess.run([str(BIN / "fork_exec")], env=clean_env(
        LD_PRELOAD=LIB, PARWIDTH_REPORT=report), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 4, proc.stderr
    parent = load(report)
    assert parent["program"] == "fork_exec" and parent["governed"] is True
    assert len(parent["threads"]) == 6  # 3 before the forks, 3 after
    assert all(t["creator"] == "fork_exec" for t in parent["threads"])
    children = [load(f) for f in tmp_path.glob("r.json.*")]
    threaded = [c for c in children if c["threads"]]
    assert len(threaded) == 1, children
    child = threaded[0]
    assert child["pid"] != parent["pid"] and child["governed"] is True
    assert len(child["threads"]) == 3
    assert not {t["tid"] for t in child["threads"]} & {t["tid"] for t in parent["threads"]}
    # Nothing left behind half-written.
    assert not list(tmp_path.glob("*.tmp*"))

    # With %p every process names its own report.
    pattern = tmp_path / "p" / "r.%p.json"
    pattern.parent.mkdir()
    proc = subprocess.Popen([str(BIN / "fork_exec")], env=clean_env(
        LD_PRELOAD=LIB, PARWIDTH_REPORT=pattern), stdout=subprocess.PIPE, text=True)
    proc.communicate(timeout=120)
    assert proc.returncode == 4
    reports = {load(f)["pid"]: load(f) for f in pattern.parent.glob("r.*.json")}
    assert len(reports[proc.pid]["threads"]) == 6
    assert sum(1 for r in reports.values() if len(r["threads"]) == 3) == 1



@pytest.mark.skipif(len(FULL) < 2, reason="needs at least 2 CPUs")
def test_pool_threads_step_aside_while_a_child_runs(tmp_path):
    """A team pinned one thread per core, and a forked child busy on the same
    cores (a DataLoader's worker): while it runs the team's threads may use
    the pool's cores, one core each again once it is gone; the forked child's
    own threads are pinned to the pool's cores from the start."""
    report = tmp_path / "r.json"
    # PAPI off: with counters that count the children the monitor may also lower the
    # team's cap, and a team of one has no worker thread to look at.
    p = run([BIN / "children_pins"], REPORT=report, NODE="off", PAPI="off")
    assert p.returncode == 0, p.stdout + p.stderr
    r = load(report)
    want = min(len(cores) for cores in r["plan"]["core_sets"])
    if want < 2:
        pytest.skip(f"the plan's pools have one core each here ({r['plan']['core_sets']})")
    lines = p.stdout.splitlines()
    assert f"while the child runs: narrowest worker {want}" in lines, (lines, r["plan_timeline"])
    assert "after the child: widest worker 1" in lines, (lines, r["plan_timeline"])
    child = [ln for ln in lines if ln.startswith("child thread cpus ")]
    assert child and int(child[0].split()[-1]) > 1, lines
    causes = [e["cause"] for e in r["plan_timeline"]]
    began = [e for e in r["plan_timeline"] if e["cause"].startswith("children: 1 child")]
    ended = [e for e in r["plan_timeline"] if e["cause"].startswith("children: none")]
    assert len(began) == 1 and len(ended) == 1, causes
    assert "re-pinned to their pools' cores" in began[0]["applied"][0], began
    assert "re-pinned one per core" in ended[0]["applied"][0], ended
    assert r["in_force"]["changes"]["children"] == 2 and r["in_force"]["pin"] == "core"


# ------------------------------------------------------ garbage in, fail open


@pytest.mark.parametrize("bad", [{"POOLS": "banana"}, {"MODE": "sideways"},
                                 {"PIN": "everywhere"}, {"VERBOSE": "99"},
                                 {"POOLS": "banana", "MODE": "sideways"}])
def test_garbage_options_warn_once_each(tmp_path, bad):
    report = tmp_path / "r.json"
    p = run([BIN / "omp_teams", "--exit", 5], REPORT=report, **bad)
    assert p.returncode == 5
    json.loads(p.stdout)
    warns = warnings_of(p)
    assert len(warns) == len(bad), p.stderr
    for name in bad:
        assert sum(f"PARWIDTH_{name}" in w for w in warns) == 1
    r = load(report)
    assert r["governed"] is True and len(r["warnings"]) == len(bad)


def garbage_cgroup(tmp_path):
    cg = tmp_path / "cg"
    cg.mkdir()
    (cg / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (cg / "cpu.max").write_text("lots of cpus please\n")
    return cg


@pytest.mark.parametrize("case", ["topology", "cgroup"])
def test_unreadable_topology_or_cgroup_runs_ungoverned(tmp_path, case):
    report = tmp_path / "r.json"
    opt = ({"TOPOLOGY": "/nonexistent.xml"} if case == "topology"
           else {"CGROUP": garbage_cgroup(tmp_path)})
    # A report from an earlier run: this run's report (saying why it ran
    # ungoverned) must replace it, not leave it looking current.
    report.write_text('{"stale": true}\n')
    p = run([BIN / "omp_teams", "--exit", 3], REPORT=report, POOLS=2, **opt)
    assert p.returncode == 3
    assert len(warnings_of(p)) == 1, p.stderr
    out = json.loads(p.stdout)
    assert all(cpu_list(t["cpus"]) == FULL for t in out["tasks"])
    assert set(all_teams(out)) == {len(FULL)}
    r = load(report)
    assert r["governed"] is False and r["ungoverned_because"]
    assert not any(t["pinned"] for t in r["threads"])


# ---------------------------------------------------------------- symbols


def exported_names():
    text = (ROOT / "hooks" / "exports.map").read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    glob = text.split("global:")[1].split("local:")[0]
    return {n.strip() for n in glob.split(";") if n.strip()}


@pytest.mark.skipif(shutil.which("nm") is None, reason="binutils not installed")
def test_exports_only_the_hooks():
    nm = subprocess.run(["nm", "-D", "--defined-only", str(LIB)], capture_output=True,
                        text=True, check=True)
    names = {line.split()[-1].split("@")[0] for line in nm.stdout.splitlines() if line.strip()}
    allowed = exported_names()
    assert names - allowed == set()
    assert {"pthread_create", "GOMP_parallel", "__kmpc_fork_call"} <= names


@pytest.mark.skipif(shutil.which("readelf") is None, reason="binutils not installed")
def test_no_heavy_or_unwinder_dependencies():
    d = subprocess.run(["readelf", "-d", str(LIB)], capture_output=True, text=True, check=True)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", d.stdout)
    assert needed, d.stdout
    for lib in needed:
        assert not lib.startswith(("libstdc++", "libunwind", "libhwloc", "libpapi", "libgcc_s")), lib


def test_two_libgomp_copies_each_caller_stays_in_the_runtime_the_loader_chose():
    """torch's libgomp.so.1 in the global scope, XGBoost's own libgomp-<hash>.so.1
    beside it: the loader binds XGBoost's OpenMP calls to torch's copy (the global
    scope comes first). parwidth's hooks sent its regions to XGBoost's own copy
    while its thread numbers still came from torch's: every thread was thread 0
    (XGBoost then indexed past its per-thread buffers and the process aborted with
    a double free). Each region must run in the copy the caller's other OpenMP
    calls use."""
    prog = BIN / "omp_two_copies"
    if not prog.exists():
        pytest.skip("omp_two_copies not built (no patchelf: scripts/bootstrap)")
    args = [prog, BUILD / "lib" / "libomp_teams_lib.so", BUILD / "lib" / "libomp_copy_lib.so"]
    bare = run(args, preload=False)
    assert (bare.returncode, bare.stdout) == (0, "team 2 ids 1 2\n"), bare.stderr
    gov = run(args, INTRA=2)
    assert (gov.returncode, gov.stdout) == (0, bare.stdout), gov.stderr
