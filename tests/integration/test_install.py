"""Installing parwidth the three ways its users do: a wheel into a fresh venv,
the Debian package with apt-get, and the Lmod module as a site default.

Each install is used as a user would use it, with no path into the source or
build tree: `parwidth run`, `LD_PRELOAD=$(parwidth --print-lib)`, `python -m
parwidth`, `parwidth topo`, `man parwidth`, `module load parwidth`. What is
checked is what the user sees: the report of a governed program, where its
threads ran, the library's dependencies and exports, and that removing the
install leaves nothing behind.

The wheel is built with .venv/build (made by scripts/bootstrap:
scikit-build-core and build) with --no-isolation, in build/wheel-test/ (reused
between runs: only the first one compiles everything). The .deb is built by CPack from $PW_BUILD and installed as root
under /tmp/apt.lock, and removed again whatever happens.
"""
import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from test_core import BIN, BUILD, FULL, LIB, ROOT, clean_env, exported_names
from test_multiproc import LMOD_INIT

BUILD_PY = ROOT / ".venv" / "build" / "bin" / "python"
SYSTEM_PY = "/usr/bin/python3"
LOADER_AND_LIBC = {"libc.so.6", "ld-linux-x86-64.so.2"}

# A stand-in for train.py: two threads, each says which CPUs it may run on.
TRAIN = """\
import json, os, sys, threading
seen = {}
def work(i):
    s = sum(range(200000))
    seen[threading.get_native_id()] = sorted(os.sched_getaffinity(0))
ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
[t.start() for t in ts]
[t.join() for t in ts]
json.dump({"threads": seen}, sys.stdout)
"""


@contextlib.contextmanager
def locked(name):
    """Serialises builds that share a directory (the wheel's build tree, CPack's staging)."""
    path = ROOT / "build" / f".{name}.lock"
    path.parent.mkdir(exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def sh(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 600)
    return subprocess.run(cmd, **kw)


def ok(p):
    assert p.returncode == 0, f"{p.args}: rc {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


def needed(path):
    d = ok(sh(["readelf", "-d", str(path)])).stdout
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", d))


def exports(path):
    nm = ok(sh(["nm", "-D", "--defined-only", str(path)])).stdout
    return {line.split()[-1].split("@")[0] for line in nm.splitlines() if line.strip()}


def check_library_guarantees(lib):
    """NEEDED = libc and the loader only; exported symbols = hooks only."""
    assert needed(lib) <= LOADER_AND_LIBC, needed(lib)
    names = exports(lib)
    assert names <= exported_names(), names - exported_names()
    assert {"pthread_create", "GOMP_parallel", "__kmpc_fork_call"} <= names


def check_governed(proc, report_path):
    """The program's own output is intact, and the report says each of its
    threads was pinned to the one CPU that the thread itself saw."""
    assert proc.returncode == 0, proc.stderr
    seen = {int(t): cpus for t, cpus in json.loads(proc.stdout)["threads"].items()}
    assert len(seen) == 2
    report = json.loads(Path(report_path).read_text())
    assert report["mode"] == "govern" and report["governed"] is True
    by_tid = {t["tid"]: t for t in report["threads"]}
    for tid, cpus in seen.items():
        assert tid in by_tid, (tid, report["threads"])
        t = by_tid[tid]
        if len(FULL) > 1:
            assert t["pinned"] and cpus == [t["cpu"]], (t, cpus)
        assert set(cpus) <= FULL
    return report


def files_under(d):
    return {p.relative_to(d) for p in Path(d).rglob("*") if not p.is_dir()}


# ---------------------------------------------------------------- wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    if not BUILD_PY.exists() or sh([str(BUILD_PY), "-c", "import scikit_build_core, build"]).returncode:
        pytest.fail(f"{BUILD_PY} lacks scikit-build-core/build: run scripts/bootstrap")
    out = tmp_path_factory.mktemp("dist")
    with locked("wheel"):
        # A build tree of its own, only ever configured from .venv/build: a
        # `pip install .` (isolated, another scikit-build-core environment) in
        # the default build/wheel/ would make every later build start over.
        ok(sh([str(BUILD_PY), "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out),
               f"-Cbuild-dir={ROOT / 'build' / 'wheel-test'}", str(ROOT)], timeout=1800))
    wheels = list(out.glob("parwidth-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    """A fresh venv somewhere with no source or build tree, the wheel installed
    by pip; yields (venv dir, its files before the install)."""
    d = tmp_path_factory.mktemp("fresh") / "venv"
    ok(sh([SYSTEM_PY, "-m", "venv", str(d)]))
    before = files_under(d)
    ok(sh([str(d / "bin" / "pip"), "install", "--no-index", "--no-deps",
           "--disable-pip-version-check", str(wheel)]))
    return d, before


def venv_env(d, **extra):
    env = clean_env(**extra)
    env["PATH"] = f"{d}/bin:/usr/bin:/bin"
    env["VIRTUAL_ENV"] = str(d)
    for k in ("PW_BUILD", "PYTHONPATH", "PARWIDTH_LIB"):
        env.pop(k, None)
    return env


def test_wheel_holds_the_command_and_the_preload(wheel):
    names = ok(sh(["unzip", "-Z1", str(wheel)])).stdout.split() if shutil.which("unzip") else None
    if names is None:
        import zipfile
        names = zipfile.ZipFile(wheel).namelist()
    assert "parwidth/bin/parwidth" in names and "parwidth/lib/libparwidth.so" in names
    assert "parwidth/__main__.py" in names
    # Nothing of the build: no tests, examples, static libraries or headers.
    assert not [n for n in names if n.endswith((".a", ".h")) or "engine" in n], names
    assert wheel.name.endswith("-py3-none-linux_x86_64.whl"), wheel.name


def test_wheel_library_keeps_its_guarantees(venv):
    d, _ = venv
    lib = next(d.glob("lib/python3*/site-packages/parwidth/lib/libparwidth.so"))
    check_library_guarantees(lib)
    # The command carries its C++ runtime too: it runs wherever glibc does.
    cmd = lib.parent.parent / "bin" / "parwidth"
    assert not [n for n in needed(cmd) if n.startswith(("libstdc++", "libgcc_s"))], needed(cmd)


def test_print_lib_points_into_the_venv(venv, tmp_path):
    d, _ = venv
    p = ok(sh(["parwidth", "--print-lib"], env=venv_env(d), cwd=tmp_path))
    lib = Path(p.stdout.strip())
    assert lib.is_absolute() and lib.name == "libparwidth.so" and lib.exists()
    assert d.resolve() in lib.parents, lib
    same = ok(sh(["python", "-m", "parwidth", "--print-lib"], env=venv_env(d), cwd=tmp_path))
    assert same.stdout == p.stdout


def test_parwidth_run_from_the_venv(venv, tmp_path):
    d, _ = venv
    (tmp_path / "train.py").write_text(TRAIN)
    p = sh(["parwidth", "run", "--report", "report.json", "--", "python", "train.py"],
           env=venv_env(d), cwd=tmp_path, timeout=120)
    report = check_governed(p, tmp_path / "report.json")
    assert Path(report["program"]).name.startswith("python")


def test_python_m_parwidth_run(venv, tmp_path):
    d, _ = venv
    (tmp_path / "train.py").write_text(TRAIN)
    p = sh(["python", "-m", "parwidth", "run", "--report", "report.json", "--", "python",
            "train.py"], env=venv_env(d), cwd=tmp_path, timeout=120)
    check_governed(p, tmp_path / "report.json")


def test_ld_preload_print_lib(venv, tmp_path):
    d, _ = venv
    (tmp_path / "train.py").write_text(TRAIN)
    p = sh(["bash", "-c", "LD_PRELOAD=$(parwidth --print-lib) PARWIDTH_REPORT=report.json "
                          "python train.py"], env=venv_env(d), cwd=tmp_path, timeout=120)
    check_governed(p, tmp_path / "report.json")


def test_run_exit_code_is_the_programs(venv, tmp_path):
    d, _ = venv
    p = sh(["parwidth", "run", "--", "python", "-c", "import sys; sys.exit(7)"],
           env=venv_env(d), cwd=tmp_path)
    assert p.returncode == 7, p.stderr


def test_uninstall_leaves_nothing_behind(venv, tmp_path):
    d, before = venv
    ok(sh([str(d / "bin" / "pip"), "uninstall", "-y", "--disable-pip-version-check", "parwidth"]))
    after = files_under(d)
    assert after - before == set(), sorted(map(str, after - before))
    assert not (d / "bin" / "parwidth").exists()
    assert sh(["python", "-m", "parwidth", "--print-lib"], env=venv_env(d),
              cwd=tmp_path).returncode != 0


# ---------------------------------------------------------------- one layout rule


def test_build_tree_and_cmake_install_find_their_library(tmp_path):
    p = ok(sh([str(BIN / "parwidth"), "--print-lib"], env=clean_env()))
    assert Path(p.stdout.strip()) == LIB.resolve()
    ok(sh(["cmake", "--install", str(BUILD), "--prefix", str(tmp_path / "opt"), "--component",
           "runtime"]))
    p = ok(sh([str(tmp_path / "opt" / "bin" / "parwidth"), "--print-lib"], env=clean_env()))
    assert Path(p.stdout.strip()) == tmp_path / "opt" / "lib" / "libparwidth.so"
    # A symlink to the command (a user's ~/bin) still finds the real layout.
    (tmp_path / "mybin").mkdir()
    (tmp_path / "mybin" / "parwidth").symlink_to(tmp_path / "opt" / "bin" / "parwidth")
    p = ok(sh([str(tmp_path / "mybin" / "parwidth"), "--print-lib"], env=clean_env()))
    assert Path(p.stdout.strip()) == tmp_path / "opt" / "lib" / "libparwidth.so"
    # Without the library there, a clear error and no path to preload.
    (tmp_path / "opt" / "lib" / "libparwidth.so").unlink()
    p = sh([str(tmp_path / "opt" / "bin" / "parwidth"), "--print-lib"], env=clean_env())
    assert p.returncode == 1 and p.stdout == "" and "libparwidth.so" in p.stderr


def test_topo_says_which_optional_libraries_were_found():
    p = ok(sh([str(BIN / "parwidth"), "topo"], env=clean_env()))
    line = next(l for l in p.stdout.splitlines() if l.startswith("libraries:"))
    d = json.loads(ok(sh([str(BIN / "parwidth"), "topo", "--json"], env=clean_env())).stdout)
    found = [l["name"] for l in d["libraries"] if l["found"]]
    assert {l["name"] for l in d["libraries"]} == {"hwloc", "PAPI"}
    # scripts/bootstrap installs both; the line names them as found.
    assert found == ["hwloc", "PAPI"], d["libraries"]
    assert line == "libraries: found hwloc, PAPI; not found none"
    for l in d["libraries"]:
        assert Path(l["path"]).exists()


# ---------------------------------------------------------------- site default (Lmod)


def lmod_login(modulepath, *after, **extra):
    """A login shell's environment with Lmod and the site's profile script."""
    if not LMOD_INIT.exists():
        pytest.fail(f"{LMOD_INIT} missing: run scripts/bootstrap")
    script = (f"source {LMOD_INIT} >/dev/null 2>&1; export MODULEPATH={modulepath}; "
              f"source {ROOT / 'packaging' / 'site' / 'z01-parwidth.sh'}; "
              f"{' '.join(after) or 'true'} && env -0")
    env = clean_env(**extra)
    for k in ("MODULEPATH", "LOADEDMODULES", "_LMFILES_", "__Init_Default_Modules",
              "LMOD_SYSTEM_DEFAULT_MODULES"):
        env.pop(k, None)
    env["HOME"] = extra.get("HOME", env.get("HOME", "/root"))
    p = sh(["bash", "-c", script], env=env, text=False, timeout=60)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    return dict(i.decode().partition("=")[::2] for i in p.stdout.split(b"\0") if b"=" in i)


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    d = tmp_path_factory.mktemp("site")
    ok(sh(["cmake", "--install", str(BUILD), "--prefix", str(d)]))
    return d


def test_site_default_loads_the_module_at_login(prefix, tmp_path):
    env = lmod_login(prefix / "share" / "modulefiles", HOME=str(tmp_path))
    assert env["LD_PRELOAD"].split(":")[0] == str(prefix / "lib" / "libparwidth.so")
    assert "parwidth" in env["LOADEDMODULES"].split(":")
    assert env["PARWIDTH_INCLUDE"] == "python*:torchrun"
    # A governed job, then the same job turned off for once.
    (tmp_path / "train.py").write_text(TRAIN)
    job = {k: v for k, v in env.items() if not k.startswith("BASH_FUNC")}
    p = sh([SYSTEM_PY, "train.py"], cwd=tmp_path,
           env={**job, "PARWIDTH_REPORT": "on.json"}, timeout=120)
    check_governed(p, tmp_path / "on.json")
    p = sh([SYSTEM_PY, "train.py"], cwd=tmp_path,
           env={**job, "PARWIDTH_REPORT": "off.json", "PARWIDTH_MODE": "off"}, timeout=120)
    assert p.returncode == 0 and not (tmp_path / "off.json").exists()
    # A threaded program the site did not include is left alone; the same
    # program, included, is governed.
    engine = [str(BIN / "naive_engine"), "--workers", "2", "--iterations", "2", "--size", "64"]
    p = sh(engine, cwd=tmp_path, env={**job, "PARWIDTH_REPORT": "engine.json"})
    assert p.returncode == 0 and not (tmp_path / "engine.json").exists(), p.stderr
    p = sh(engine, cwd=tmp_path, env={**job, "PARWIDTH_REPORT": "engine.json",
                                      "PARWIDTH_INCLUDE": "naive_engine"})
    assert p.returncode == 0 and (tmp_path / "engine.json").exists(), p.stderr


def test_site_default_respects_the_users_choices(prefix, tmp_path):
    # A user's INCLUDE wins over the site's; `module unload` removes the preload.
    env = lmod_login(prefix / "share" / "modulefiles", "module unload parwidth",
                     HOME=str(tmp_path), PARWIDTH_INCLUDE="myprog")
    assert env["PARWIDTH_INCLUDE"] == "myprog"
    assert "libparwidth.so" not in env.get("LD_PRELOAD", "")


# ---------------------------------------------------------------- Debian package

DEB_FILES = ["/usr/bin/parwidth", "/usr/lib/libparwidth.so", "/usr/share/modulefiles/parwidth.lua",
             "/usr/share/modulefiles/parwidth", "/usr/share/man/man1/parwidth.1"]


def apt(*args):
    return sh(["flock", "/tmp/apt.lock", "apt-get", "-y", "-q", *args],
              env={**clean_env(), "DEBIAN_FRONTEND": "noninteractive"}, timeout=300)


def installed():
    p = sh(["dpkg-query", "-W", "-f=${Status}", "parwidth"])
    return p.returncode == 0 and p.stdout == "install ok installed"


def remove():
    p = apt("purge", "parwidth")
    assert not installed(), p.stdout + p.stderr


@pytest.fixture(scope="module")
def deb():
    if shutil.which("cpack") is None or shutil.which("dpkg-deb") is None:
        pytest.fail("cpack or dpkg-deb missing: run scripts/bootstrap")
    with locked("cpack"):
        for old in (BUILD / "packages").glob("parwidth_*.deb"):
            old.unlink()
        ok(sh(["cpack", "-G", "DEB", "--config", str(BUILD / "CPackConfig.cmake")], cwd=BUILD))
    debs = list((BUILD / "packages").glob("parwidth_*.deb"))
    assert len(debs) == 1, debs
    return debs[0]


def test_deb_contents_and_dependencies(deb):
    listing = ok(sh(["dpkg-deb", "-c", str(deb)])).stdout
    paths = {line.split()[-1].lstrip(".") for line in listing.splitlines()}
    for f in DEB_FILES:
        assert f in paths, f
    commands = re.findall(r"^  ([a-z]+) ", ok(sh([str(BIN / "parwidth"), "--help"])).stdout, re.M)
    assert commands and all(f"/usr/share/man/man1/parwidth-{c}.1" in paths for c in commands)
    assert not [p for p in paths if "/build" in p or "/work/" in p]
    # Recommends: exactly the Debian packages `parwidth topo` names.
    topo = json.loads(ok(sh([str(BIN / "parwidth"), "topo", "--json"])).stdout)
    rec = ok(sh(["dpkg-deb", "-f", str(deb), "Recommends"])).stdout
    assert {r.strip() for r in rec.split(",")} == {l["package"] for l in topo["libraries"]}
    dep = ok(sh(["dpkg-deb", "-f", str(deb), "Depends"])).stdout
    assert dep.startswith("libc6"), dep
    assert not re.search(r"libstdc\+\+|libgcc|hwloc|papi|unwind", dep), dep


@pytest.mark.skipif(os.geteuid() != 0, reason="installing a .deb needs root")
def test_deb_install_use_and_remove(deb, tmp_path):
    if installed():
        remove()  # a run that was killed before its own cleanup
    try:
        p = apt("install", "--no-install-recommends", str(deb.resolve()))
        assert p.returncode == 0 and installed(), p.stdout[-2000:] + p.stderr[-2000:]
        env = {**clean_env(), "PATH": "/usr/bin:/bin", "LC_ALL": "C", "MANWIDTH": "100"}
        assert ok(sh(["parwidth", "--print-lib"], env=env)).stdout == "/usr/lib/libparwidth.so\n"
        check_library_guarantees("/usr/lib/libparwidth.so")
        topo = ok(sh(["parwidth", "topo"], env=env)).stdout
        assert "libraries: found hwloc, PAPI; not found none" in topo, topo
        # The man pages say what --help says.
        page = ok(sh(["man", "-P", "cat", "parwidth"], env=env)).stdout
        assert "NAME" in page and "parwidth - a thread governor" in page, page
        run_page = ok(sh(["man", "-P", "cat", "parwidth-run"], env=env)).stdout
        # Its own summary, not the next command's (the generator once took the next line's).
        assert "parwidth-run - run CMD with libparwidth.so preloaded" in run_page, run_page
        run_help = ok(sh(["parwidth", "run", "--help"], env=env)).stdout
        for flag in re.findall(r"^  (--[a-z-]+|PARWIDTH_[A-Z_]+)", run_help, re.M):
            assert flag in run_page, flag
        # The module, with Lmod, from the package's modulefiles; a governed job.
        (tmp_path / "train.py").write_text(TRAIN)
        script = (f"source {LMOD_INIT} >/dev/null 2>&1; module use /usr/share/modulefiles && "
                  f"module load parwidth && echo LD_PRELOAD=$LD_PRELOAD && "
                  f"PARWIDTH_REPORT=report.json {SYSTEM_PY} train.py")
        env_m = {k: v for k, v in clean_env().items() if k not in ("MODULEPATH", "LOADEDMODULES")}
        p = sh(["bash", "-c", script], env=env_m, cwd=tmp_path, timeout=120)
        assert p.returncode == 0, p.stderr
        first, _, rest = p.stdout.partition("\n")
        assert first == "LD_PRELOAD=/usr/lib/libparwidth.so", first
        p.stdout = rest
        check_governed(p, tmp_path / "report.json")
    finally:
        remove()
    for f in DEB_FILES:
        assert not Path(f).exists(), f
