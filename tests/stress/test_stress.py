"""The stress suite (issue 14): what a site-wide preload meets in the field,
at volume. Every program must end exactly as it does bare: status, output,
no hang.

PW_STRESS=full runs the sizes of the issue (200k threads, 2000 idle
threads, ...; several minutes); the default is the short form that
scripts/test runs.

Run: PW_BUILD=build python -m pytest tests/stress (PW_BUILD=build-tsan, a
PARWIDTH_TSAN=ON build: the same under ThreadSanitizer, as scripts/test runs it)
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from test_core import BIN, LIB, clean_env  # noqa: E402

FULL = os.environ.get("PW_STRESS") == "full"
# PW_BUILD=build-tsan: the library and the programs built with ThreadSanitizer
# (scripts/test runs the suite so too); a race report changes the exit status.
TSAN = b"libtsan" in subprocess.run(["readelf", "-d", str(LIB)], capture_output=True).stdout


def size(short, full):
    return full if FULL else short


def both(cmd, tmp_path, timeout=300, **options):
    """(bare, governed) CompletedProcess of cmd."""
    node = tmp_path / "node"
    node.mkdir(mode=0o700, exist_ok=True)
    cmd = [str(c) for c in cmd]
    bare = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True, timeout=timeout)
    env = clean_env(LD_PRELOAD=LIB, PARWIDTH_NODE_DIR=node,
                    **{"PARWIDTH_" + k: v for k, v in options.items()})
    gov = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    return bare, gov


def same(cmd, tmp_path, **options):
    bare, gov = both(cmd, tmp_path, **options)
    assert (gov.returncode, gov.stdout) == (bare.returncode, bare.stdout), gov.stderr[-2000:]
    return gov


def test_thread_churn(tmp_path):
    n = size(20000, 200000)
    same([BIN / "thread_churn", n], tmp_path, REPORT=tmp_path / "r.json")


@pytest.mark.skipif(TSAN, reason="ThreadSanitizer cannot start a thread in the child of a "
                    "multi-threaded fork, which fork_storm's children do bare too")
def test_fork_storm_from_many_threads(tmp_path):
    g = same([BIN / "fork_storm", size(4, 16), size(10, 50)], tmp_path)
    assert g.stdout.startswith("ok ")


def test_idle_threads(tmp_path):
    same([BIN / "idle_threads", size(500, 2000), size(500, 5000)], tmp_path)


def test_dlopen_dlclose_of_openmp_plugins(tmp_path):
    if TSAN:
        pytest.skip("the OpenMP plug-ins are built only without ThreadSanitizer: libgomp and "
                    "libomp are not instrumented, so TSan would not see their synchronisation")
    a, b = (BIN.parent / "lib" / f"libpw_sum_{x}.so" for x in "ab")
    if not a.exists():
        pytest.skip("no clang: libpw_sum_a.so not built")
    for _ in range(size(5, 50)):
        same([BIN / "dlclose_omp", a, b], tmp_path)


def test_exit_from_signal_handlers(tmp_path):
    for _ in range(size(10, 200)):
        bare, gov = both([BIN / "sig_exit"], tmp_path, timeout=30)
        assert gov.returncode == bare.returncode == 3


def test_raw_clone(tmp_path):
    for _ in range(size(5, 100)):
        same([BIN / "clone_exit"], tmp_path)


def test_closed_stdio(tmp_path):
    for _ in range(size(3, 50)):
        same([BIN / "closed_stdout"], tmp_path)
