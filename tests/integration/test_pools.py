"""Integration tests: the BLAS libraries' own thread pools (hooks/blas.cpp)
and Intel's OpenMP runtime (libiomp5).

tests/programs/blas_pools.py multiplies matrices through one BLAS library and
prints three views that must agree with the report's `pools` entry:
threadpoolctl's threadpool_info() (its own reading of each library's count),
the kernel's (threads in /proc that did work during the multiplications, and
threads alive only during them, for BLIS's per-call threads), and the sum of
the products (the same bits as a bare run with the same thread count).

The plan on these machines is one pool of every core, which is what each
library takes by default; PARWIDTH_INTRA=1 makes the cap visible. The
monitor is off: on a shared machine it may lower caps on its own.
Libraries come from .venv/ort (numpy's bundled OpenBLAS, mkl, intel-openmp),
.venv/torch (Debian's numpy on Debian's OpenBLAS) and Debian's libblis4.
"""
import json
import math
import os
import subprocess
from pathlib import Path

import pytest

from test_core import BIN, FULL, LIB, OMP_LIB_CLANG, ROOT, clean_env, load, require

PROBE = ROOT / "tests" / "programs" / "blas_pools.py"
ORT_PY = ROOT / ".venv" / "ort" / "bin" / "python"
TORCH_PY = ROOT / ".venv" / "torch" / "bin" / "python"
MKL = ROOT / ".venv" / "ort" / "lib" / "libmkl_rt.so.3"
IOMP = ROOT / ".venv" / "ort" / "lib" / "libiomp5.so"
BLIS = Path("/usr/lib/x86_64-linux-gnu/libblis.so.4")


@pytest.fixture(scope="module", autouse=True)
def two_cpus():
    if len(FULL) < 2:
        pytest.skip("these tests need at least 2 allowed CPUs")


def probe(tmp_path, python, *args, preload=True, name="r", **env):
    if not Path(python).exists():
        pytest.skip(f"{python} missing (scripts/bootstrap makes it)")
    extra = {k: str(v) for k, v in env.items()}
    report = tmp_path / f"{name}.json"
    if preload:
        extra.update(LD_PRELOAD=str(LIB), PARWIDTH_REPORT=str(report), PARWIDTH_MONITOR="off",
                     PARWIDTH_NODE_DIR=str(tmp_path / "node"))
    p = subprocess.run([str(python), str(PROBE), *map(str, args)], env=clean_env(**extra),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "OMP: Warning" not in p.stderr, p.stderr
    out = json.loads(p.stdout)
    return out, (load(report) if preload else None)


def pool(report, library):
    found = [p for p in report["pools"] if p["library"] == library]
    assert len(found) == 1, report["pools"]
    return found[0]


def tpc(out, api):
    found = [i for i in out["threadpoolctl"] if i["internal_api"] == api]
    assert len(found) == 1, out["threadpoolctl"]
    return found[0]


# (python, probe arguments, library, threadpoolctl's name, the env var that sizes it)
CASES = {
    "numpy-bundled-openblas": (ORT_PY, [], "openblas", "openblas", "OPENBLAS_NUM_THREADS"),
    "debian-openblas": (TORCH_PY, [], "openblas", "openblas", "OPENBLAS_NUM_THREADS"),
    "mkl-intel-libiomp5": (ORT_PY, ["--lib", "mkl", "--mkl", MKL], "mkl", "mkl", "MKL_NUM_THREADS"),
    "mkl-gnu-libgomp": (ORT_PY, ["--lib", "mkl", "--mkl", MKL], "mkl", "mkl", "MKL_NUM_THREADS"),
}
LAYER = {"mkl-intel-libiomp5": "INTEL", "mkl-gnu-libgomp": "GNU"}


def case_env(case, **env):
    if case in LAYER:
        env["MKL_THREADING_LAYER"] = LAYER[case]
    return env


@pytest.mark.parametrize("case", list(CASES))
def test_pool_capped_and_three_views_agree(tmp_path, case):
    python, args, library, api, _ = CASES[case]
    if library == "mkl" and not MKL.exists():
        pytest.skip("mkl not installed")
    n = len(FULL)
    bare, _ = probe(tmp_path, python, *args, preload=False, **case_env(case))
    assert tpc(bare, api)["num_threads"] == n and bare["busy"] == n
    out, report = probe(tmp_path, python, *args, **case_env(case, PARWIDTH_INTRA=1))
    p = pool(report, library)
    assert p["after"] == 1, p
    if library == "mkl":
        # MKL's count is at most the calling thread's OpenMP nthreads, which
        # parwidth's OpenMP cap set before MKL was asked: already 1.
        assert p["applied"] or p["before"] == 1, p
    else:
        assert p["before"] == n and p["applied"] is True and p["set_by"] == "parwidth", p
    assert tpc(out, api)["num_threads"] == p["after"]  # threadpoolctl agrees
    assert out["busy"] == 1, out  # /proc: one thread did the work
    # The same bits as a bare run with one thread; within float rounding of the bare default.
    one, _ = probe(tmp_path, python, *args, preload=False,
                   **case_env(case, **{CASES[case][4]: 1}))
    assert out["sum"] == one["sum"]
    assert math.isclose(out["sum"], bare["sum"], rel_tol=1e-12)
    # Every pool in the process is in the report, with its size as threadpoolctl reads it.
    for info in out["threadpoolctl"]:
        if info["internal_api"] == "openmp":
            continue
        mine = [q for q in report["pools"] if q["library"] == info["internal_api"]
                and q["object"].split(".so")[0] in info["file"] or
                q["object"] == info["file"]]
        assert mine and mine[-1]["after"] == info["num_threads"], (info, report["pools"])


@pytest.mark.parametrize("case", ["numpy-bundled-openblas", "mkl-intel-libiomp5"])
def test_explicit_setting_kept_replaced_with_override(tmp_path, case):
    python, args, library, api, var = CASES[case]
    if library == "mkl" and not MKL.exists():
        pytest.skip("mkl not installed")
    n = len(FULL)
    out, report = probe(tmp_path, python, *args, **case_env(case, PARWIDTH_INTRA=1, **{var: n}))
    p = pool(report, library)
    assert p["applied"] is False and p["after"] == n and f"{var}={n}" in p["set_by"], p
    assert tpc(out, api)["num_threads"] == n and out["busy"] == n
    out, report = probe(tmp_path, python, *args, name="o",
                        **case_env(case, PARWIDTH_INTRA=1, PARWIDTH_OVERRIDE=1, **{var: n}))
    p = pool(report, library)
    assert p["applied"] is True and p["after"] == 1 and f"{var}={n}" in p["why"], p
    assert tpc(out, api)["num_threads"] == 1 and out["busy"] == 1


def test_library_set_call_kept(tmp_path):
    """openblas_set_num_threads(2) by the program (Debian's OpenBLAS, reached
    through the global scope) is the user's: kept under a plan of 1."""
    out, report = probe(tmp_path, TORCH_PY, "--set", len(FULL), PARWIDTH_INTRA=1)
    entries = [p for p in report["pools"] if "openblas_set_num_threads" in p["why"]]
    assert entries and entries[-1]["applied"] is False, report["pools"]
    assert tpc(out, "openblas")["num_threads"] == len(FULL) and out["busy"] == len(FULL)


def test_blis(tmp_path):
    if not BLIS.exists():
        pytest.skip("libblis4 not installed")
    args = ["--lib", "blis", "--blis", BLIS]
    # BLIS without a count runs on one thread: already within the plan.
    out, report = probe(tmp_path, ORT_PY, *args)
    p = pool(report, "blis")
    assert (p["before"], p["after"], p["applied"]) == (1, 1, False), p
    assert tpc(out, "blis")["num_threads"] == 1 and out["started_per_call"] == 0
    # BLIS_NUM_THREADS=2 is the user's: kept (one extra thread per call in /proc) ...
    out, report = probe(tmp_path, ORT_PY, *args, name="k", BLIS_NUM_THREADS=2, PARWIDTH_INTRA=1)
    p = pool(report, "blis")
    assert (p["after"], p["applied"]) == (2, False), p
    assert tpc(out, "blis")["num_threads"] == 2 and out["started_per_call"] >= 1
    kept_sum = out["sum"]
    # ... and replaced with PARWIDTH_OVERRIDE=1.
    out, report = probe(tmp_path, ORT_PY, *args, name="o", BLIS_NUM_THREADS=2, PARWIDTH_INTRA=1,
                        PARWIDTH_OVERRIDE=1)
    p = pool(report, "blis")
    assert (p["after"], p["applied"]) == (1, True), p
    assert tpc(out, "blis")["num_threads"] == 1 and out["started_per_call"] == 0
    bare, _ = probe(tmp_path, ORT_PY, *args, preload=False)
    assert out["sum"] == bare["sum"] and math.isclose(kept_sum, bare["sum"], rel_tol=1e-12)


# ------------------------------------------------------- Intel's OpenMP (libiomp5)


def iomp_dir(tmp_path):
    """libomp.so.5 -> the wheel's libiomp5.so: the clang-built probes load
    Intel's runtime instead of LLVM's (same ABI; LD_LIBRARY_PATH beats RUNPATH)."""
    if not IOMP.exists():
        pytest.skip("intel-openmp not installed")
    d = tmp_path / "iomp"
    d.mkdir(exist_ok=True)
    link = d / "libomp.so.5"
    if not link.exists():
        link.symlink_to(IOMP)
    return d


def iomp_run(tmp_path, program, *args, preload=True, **options):
    extra = {"LD_LIBRARY_PATH": str(iomp_dir(tmp_path))}
    for k, v in options.items():
        extra[k if k.startswith(("OMP_", "KMP_")) else "PARWIDTH_" + k] = str(v)
    if preload:
        extra["LD_PRELOAD"] = str(LIB)
    p = subprocess.run([str(c) for c in [*program, *args]], env=clean_env(**extra),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "OMP: Warning" not in p.stderr, p.stderr
    return json.loads(p.stdout), p


IOMP_PROGRAMS = {
    "linked": lambda: [require(BIN / "omp_teams_clang")],
    "dlopen": lambda: [BIN / "dlopen_omp", require(OMP_LIB_CLANG)],
}


@pytest.mark.parametrize("variant", list(IOMP_PROGRAMS))
def test_iomp5_is_the_runtime_loaded(tmp_path, variant):
    iomp_run(tmp_path, IOMP_PROGRAMS[variant](), preload=False)
    binary = IOMP_PROGRAMS[variant]()[-1]
    ldd = subprocess.run(["ldd", str(binary)], capture_output=True,
                         text=True, env=clean_env(LD_LIBRARY_PATH=str(iomp_dir(tmp_path))))
    line = [l for l in ldd.stdout.splitlines() if "libomp.so.5" in l]
    assert line and str(iomp_dir(tmp_path)) in line[0], ldd.stdout
    assert Path(os.path.realpath(iomp_dir(tmp_path) / "libomp.so.5")).name == "libiomp5.so"


@pytest.mark.parametrize("variant", list(IOMP_PROGRAMS))
def test_iomp5_teams_capped(tmp_path, variant):
    from test_core import all_max_threads, all_teams

    n = len(FULL)
    bare, _ = iomp_run(tmp_path, IOMP_PROGRAMS[variant](), "--clause", 2, preload=False)
    assert set(all_teams(bare)) == {n}
    report = tmp_path / "r.json"
    out, _ = iomp_run(tmp_path, IOMP_PROGRAMS[variant](), "--clause", 2, POOLS=2, REPORT=report)
    r = load(report)
    cap = r["plan"]["threads"]
    assert (r["plan"]["pools"], cap) == (2, max(1, n // 2))
    assert set(all_teams(out)) == {cap} and set(all_max_threads(out)) == {cap}, out
    assert out["main"]["clause_team"] == 2  # an explicit num_threads clause is the programmer's
    # OMP_NUM_THREADS from the user: kept.
    out, _ = iomp_run(tmp_path, IOMP_PROGRAMS[variant](), POOLS=2, OMP_NUM_THREADS=n,
                      REPORT=tmp_path / "k.json")
    assert set(all_teams(out)) == {n}


@pytest.mark.parametrize("variant", list(IOMP_PROGRAMS))
@pytest.mark.parametrize("pools", [None, 2])
def test_iomp5_threads_pinned_as_reported(tmp_path, variant, pools):
    from test_core import check_pinned_as_reported

    report = tmp_path / "r.json"
    opts = {"REPORT": report}
    if pools:
        opts["POOLS"] = pools
    out, _ = iomp_run(tmp_path, IOMP_PROGRAMS[variant](), **opts)
    r = load(report)
    check_pinned_as_reported(r, out["tasks"], out["pid"])
    assert r["threads"] and all(t["pinned"] for t in r["threads"])
    # Intel's runtime binds like LLVM's unless told: its binding was turned off,
    # and the report names the runtime it told (found by its version text).
    assert any(f["name"] == "libiomp5" and f["setting"].startswith("KMP_AFFINITY")
               and f["applied"] for f in r["frameworks"]), r["frameworks"]


def test_iomp5_initialised_first_report_claims_no_lost_pin(tmp_path):
    """A task outside any region before the threads start initialises Intel's
    runtime before parwidth sees it: its own binding stands (it says so once on
    stderr, as for a late KMP_AFFINITY) and moves the program's threads that run
    regions. The report says so: no pin it claims is missing from /proc, and
    the runtime's entry is not applied."""
    from test_core import check_pinned_as_reported

    report = tmp_path / "r.json"
    extra = {"LD_LIBRARY_PATH": str(iomp_dir(tmp_path)), "LD_PRELOAD": str(LIB),
             "PARWIDTH_REPORT": str(report)}
    p = subprocess.run([str(require(BIN / "omp_teams_clang")), "--task-first"],
                       env=clean_env(**extra), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("OMP: Warning") <= 1, p.stderr
    out, r = json.loads(p.stdout), load(report)
    check_pinned_as_reported(r, out["tasks"], out["pid"])
    notes = [f for f in r["frameworks"] if f["setting"].startswith("KMP_AFFINITY")]
    assert notes and not any(f["applied"] for f in notes), notes
    assert all("moved" in t.get("pin_error", "") or "binding" in t.get("pin_error", "")
               for t in r["threads"] if not t["pinned"]), r["threads"]
