"""OpenMP conformance under the preload: small programs of our own
(tests/programs/omp_conformance, README.md there) over ICVs, nesting,
num_threads, dynamic, proc_bind/places, affinity display, tasks and
cancellation, each built with gcc (libgomp) and clang (LLVM libomp).

Each program prints the same thing, says the same on stderr and exits the
same way bare and under the preload with default options. With
PARWIDTH_OVERRIDE=1 only the documented difference is allowed: lines whose
key starts with "n." (thread counts the program or OMP_NUM_THREADS asked
for) may be lowered, never raised.

Also the report's side of items 16-19 of issue 14 (the ICV a worker inherits,
libomp's binding when the program reads affinity, the user's
OMP_PROC_BIND=false).

The programs are compiled once per session into a temporary directory.
Run: python -m pytest tests/integration/test_omp_conformance.py
"""
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from test_core import LIB, ROOT, clean_env, load

SRC = ROOT / "tests" / "programs" / "omp_conformance"
PROGRAMS = sorted(p.stem for p in SRC.glob("*.c"))
COMPILERS = {
    # name: (compiler, flags selecting the runtime)
    "gomp": ("gcc", ["-fopenmp"]),
    "llvm": ("clang", ["-fopenmp=libomp"]),
}
TIMEOUT = 60


def env_of(name):
    """The program's own environment line ("// env: K=V ...")."""
    m = re.search(r"^// env: (.*)$", (SRC / f"{name}.c").read_text(), re.M)
    return dict(kv.split("=", 1) for kv in m.group(1).split()) if m else {}


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """{(program, runtime): path}, compiled once; a missing compiler skips its runtime."""
    out = tmp_path_factory.mktemp("omp_conformance")
    jobs = []
    for rt, (cc, flags) in COMPILERS.items():
        if shutil.which(cc) is None:
            continue
        for name in PROGRAMS:
            cmd = [cc, "-O1", "-Wall", "-Wextra", "-Werror", *flags, "-o",
                   str(out / f"{name}.{rt}"), str(SRC / f"{name}.c"), "-lpthread"]
            jobs.append(((name, rt), cmd))

    def compile_one(job):
        key, cmd = job
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        return key, p

    binaries = {}
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        for key, p in pool.map(compile_one, jobs):
            assert p.returncode == 0, f"{key}: {p.stderr}"
            binaries[key] = out / f"{key[0]}.{key[1]}"
    return binaries


@pytest.fixture(scope="session")
def node_dir(tmp_path_factory):
    """Registries of our own: other governed processes on this machine (other
    test runs, the other programs of this file) must not divide the node
    with these programs."""
    d = tmp_path_factory.mktemp("node")
    d.chmod(0o700)
    return d


def run(binary, name, node_dir, preload, **options):
    extra = env_of(name)
    if preload:
        # A registry per run: runs made side by side must not share the node.
        mine = node_dir / "-".join([binary.name, *sorted(options)])
        mine.mkdir(mode=0o700, exist_ok=True)
        extra["LD_PRELOAD"] = str(LIB)
        extra["PARWIDTH_NODE_DIR"] = str(mine)
        extra.update({"PARWIDTH_" + k: str(v) for k, v in options.items()})
    p = subprocess.run([str(binary)], env=clean_env(**extra), capture_output=True, text=True,
                       timeout=TIMEOUT)
    return p.returncode, p.stdout, p.stderr


def binary_of(built, name, rt):
    b = built.get((name, rt))
    if b is None:
        pytest.skip(f"no {COMPILERS[rt][0]} to build the {rt} variant")
    return b


VARIANTS = {"bare": (False, {}), "governed": (True, {}), "override": (True, {"OVERRIDE": 1})}


@pytest.fixture(scope="session")
def results(built, node_dir):
    """{(program, runtime, variant): (exit code, stdout, stderr)} for every
    program, run a few at a time."""
    keys = [(name, rt, v) for (name, rt) in built for v in VARIANTS]

    def one(key):
        name, rt, v = key
        preload, options = VARIANTS[v]
        return key, run(built[(name, rt)], name, node_dir, preload, **options)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(one, keys))


def result(results, built, name, rt, variant):
    binary_of(built, name, rt)
    return results[(name, rt, variant)]


def numbers(line):
    return [int(x) for x in re.findall(r"-?\d+", line.split(":", 1)[1])]


@pytest.mark.parametrize("rt", list(COMPILERS))
@pytest.mark.parametrize("name", PROGRAMS)
def test_same_bare_and_governed(results, built, name, rt):
    bare = result(results, built, name, rt, "bare")
    assert bare[1], f"{name} printed nothing"
    assert result(results, built, name, rt, "governed") == bare


@pytest.mark.parametrize("rt", list(COMPILERS))
@pytest.mark.parametrize("name", PROGRAMS)
def test_override_only_lowers_counts(results, built, name, rt):
    code, out, err = result(results, built, name, rt, "bare")
    ocode, oout, oerr = result(results, built, name, rt, "override")
    assert (ocode, oerr) == (code, err)
    lines, olines = out.splitlines(), oout.splitlines()
    assert [line.split(":")[0] for line in olines] == [line.split(":")[0] for line in lines]
    for line, oline in zip(lines, olines):
        if line == oline:
            continue
        assert line.startswith("n."), f"only n. lines may differ: {line!r} -> {oline!r}"
        mine, theirs = numbers(oline), numbers(line)
        assert mine and all(1 <= v <= max(theirs) for v in mine), (line, oline)


def test_programs_are_deterministic_bare(built, node_dir, results):
    """The comparison means something only if a bare run repeats itself: a
    second bare run of every program prints the same."""
    for (name, rt), b in built.items():
        assert run(b, name, node_dir, preload=False) == results[(name, rt, "bare")], (name, rt)


# ------------------------------------------------------- the report's side


def test_inherited_icv_is_not_the_cap(built, node_dir):
    """Item 16: the workers of a team whose master set 3 report 3, and the
    report still says the cap is the plan's (the master was the user's)."""
    out = run(binary_of(built, "icv_inherit_worker_max", "gomp"), "icv_inherit_worker_max",
              node_dir, preload=True)[1]
    assert out == "n.max_per_thread: 3 3 3\n"


@pytest.mark.parametrize("rt", list(COMPILERS))
def test_user_proc_bind_false_leaves_runtime_threads_alone(built, node_dir, tmp_path, rt):
    """Item 19: with OMP_PROC_BIND=false no OpenMP runtime thread is pinned,
    and the report says whose binding that is."""
    report = tmp_path / "r.json"
    b = binary_of(built, "bind_false_cpus", rt)
    code, out, _ = run(b, "bind_false_cpus", node_dir, preload=True, REPORT=report)
    assert code == 0 and "thread_has_process_set: 1 1" in out
    r = load(report)
    runtime = [t for t in r["threads"] if t["creator"].startswith(("libgomp", "libomp"))]
    assert runtime and not any(t["pinned"] for t in runtime), r["threads"]
    assert all("binding" in t.get("pin_error", "") for t in runtime)
    kept = [f for f in r["frameworks"] if f["setting"] == "OMP_PROC_BIND"]
    assert kept and kept[0]["applied"] is False and kept[0]["value"] == "false"


def test_libomp_keeps_its_binding_when_the_program_reads_affinity(built, node_dir, tmp_path):
    """Item 17: a program that calls omp_display_affinity keeps libomp's own
    binding (no abort, places unchanged), and the report says why."""
    report = tmp_path / "r.json"
    b = binary_of(built, "aff_display_fields", "llvm")
    code, out, err = run(b, "aff_display_fields", node_dir, preload=True, REPORT=report)
    assert code == 0, err
    assert out.startswith("level=1 team=2")
    r = load(report)
    notes = [f for f in r["frameworks"] if f["name"] == "libomp"]
    assert len(notes) == 1 and notes[0]["applied"] is False
    assert "display_affinity" in notes[0]["why"]
    assert not any(t["pinned"] for t in r["threads"] if t["creator"].startswith("libomp"))


def test_libomp_initialised_early_prints_nothing(built, node_dir, tmp_path):
    """Item 18: libomp initialised by omp_get_num_procs() before the first
    region: the preload's setting is ignored by libomp without a word on the
    program's stderr."""
    b = binary_of(built, "task_procs_first", "llvm")
    code, out, err = run(b, "task_procs_first", node_dir, preload=True)
    assert (code, err) == (0, "")


@pytest.mark.parametrize("rt", list(COMPILERS))
def test_fork_child_heap_as_clean_as_bare(built, node_dir, rt):
    """A fork child that runs OpenMP again (pth_fork_child) under valgrind:
    the runtime's memory errors governed are those it has bare. libomp 14,
    its affinity turned off by kmp_set_defaults in the parent, overran a heap
    block in the child unless turned off again there; the child aborted in
    free() now and then, depending on what lay next to the block."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        pytest.skip("no valgrind (scripts/bootstrap installs it)")
    b = binary_of(built, "pth_fork_child", rt)
    vg = [valgrind, "-q", "--trace-children=yes", "--error-exitcode=97"]

    def errors(stderr):
        return sorted({line.split(" ", 1)[1] for line in stderr.splitlines()
                       if line.startswith("==") and " " in line and
                       ("unaddressable" in line or line.split(" ", 1)[1].startswith("Invalid"))})

    runs = {}
    for variant, preload in (("bare", False), ("governed", True)):
        extra = {}
        if preload:
            mine = node_dir / f"valgrind-{b.name}"
            mine.mkdir(mode=0o700, exist_ok=True)
            extra = {"LD_PRELOAD": str(LIB), "PARWIDTH_NODE_DIR": str(mine)}
        p = subprocess.run([*vg, str(b)], env=clean_env(**extra), capture_output=True,
                           text=True, timeout=300)
        runs[variant] = (p.returncode, p.stdout, errors(p.stderr))
    # A child with errors exits 97 (valgrind's code), which the parent prints.
    assert "child_status: 3" in runs["bare"][1], runs["bare"]
    assert runs["governed"] == runs["bare"]
