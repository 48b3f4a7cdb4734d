"""bench/preload_cost/python_imports.py: what parwidth's Python startup hook
(preload/python/sitecustomize.py) costs per import. Before each import it asks
the library to sweep the BLAS pools (hooks/blas.cpp, which returns at once
when the loader has added no object since its last sweep).

Two measurements, side by side in one run, interleaved, min/median/max:

  per-import   inside one governed interpreter: N fresh one-line modules,
               imported alternately with the hook's finder on sys.meta_path
               and with it taken off (per import, in microseconds; the
               difference of the medians is the hook's cost), and the
               finder's own call, timed alone.
  end-to-end   `import <modules>` timed inside the interpreter, in fresh
               processes: bare (no preload), governed, and governed with the
               hook's finder taken off before the import.

  python bench/preload_cost/python_imports.py [--runs 5] [--modules 4000]
      [--import numpy,torch] [--lib build/lib/libparwidth.so]

Run it with the interpreter whose imports you want timed (e.g.
.venv/torch/bin/python for numpy and torch).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD_PER_IMPORT = r"""
import importlib, json, sys, time
n = int(sys.argv[1])
hook = [f for f in sys.meta_path if type(f).__name__ == "_BeforeImport"]
if not hook:
    print(json.dumps({"error": "the parwidth hook is not installed"})); sys.exit(0)
hook = hook[0]
importlib.import_module("pw_m_%d" % (n - 1))  # the directory's listing, cached
out = {"with": [], "without": []}
for i in range(0, n - 2, 2):
    pair = (("with", i), ("without", i + 1)) if (i // 2) % 2 == 0 else (
        ("without", i), ("with", i + 1))
    for arm, k in pair:
        if arm == "without":
            sys.meta_path.remove(hook)
        t = time.perf_counter()
        importlib.import_module("pw_m_%d" % k)
        dt = time.perf_counter() - t
        if arm == "without":
            sys.meta_path.insert(0, hook)
        out[arm].append(dt * 1e6)
t = time.perf_counter()
for _ in range(20000):
    hook.find_spec("pw_no_such_module")
out["find_spec_us"] = (time.perf_counter() - t) / 20000 * 1e6
print(json.dumps(out))
"""

CHILD_END_TO_END = r"""
import sys, time
if sys.argv[1] == "off":
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "_BeforeImport"]
t = time.perf_counter()
for m in sys.argv[2].split(","):
    __import__(m)
print(time.perf_counter() - t)
"""


def env(lib, governed, extra=None):
    e = {k: v for k, v in os.environ.items()
         if k != "LD_PRELOAD" and not k.startswith("PARWIDTH_")}
    if governed:
        e["LD_PRELOAD"] = str(lib)
    e.update(extra or {})
    return e


def summary(values):
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--modules", type=int, default=4000)
    ap.add_argument("--import", dest="imports", default="numpy,torch")
    ap.add_argument("--lib", default=str(Path(os.environ.get("PW_BUILD", ROOT / "build"))
                                         / "lib" / "libparwidth.so"))
    a = ap.parse_args()
    lib = Path(a.lib).resolve()
    load_before = os.getloadavg()
    result = {"python": sys.executable, "load_before": load_before}

    with tempfile.TemporaryDirectory() as d:
        for i in range(a.modules):
            Path(d, "pw_m_%d.py" % i).write_text("X = %d\n" % i)
        p = subprocess.run([sys.executable, "-c", CHILD_PER_IMPORT, str(a.modules)],
                           env=env(lib, True, {"PYTHONPATH": d, "PYTHONDONTWRITEBYTECODE": "1"}),
                           capture_output=True, text=True, timeout=600)
        per = json.loads(p.stdout)
        if "error" in per:
            sys.exit(per["error"] + "\n" + p.stderr)
        result["per_import_us"] = {k: summary(per[k]) for k in ("with", "without")}
        result["per_import_us"]["hook_cost_median"] = (
            statistics.median(per["with"]) - statistics.median(per["without"]))
        result["per_import_us"]["find_spec_alone"] = per["find_spec_us"]

    arms = {"bare": (False, "on"), "governed": (True, "on"), "governed, hook off": (True, "off")}
    times = {k: [] for k in arms}
    for r in range(a.runs):
        for name, (governed, hook) in arms.items():
            p = subprocess.run([sys.executable, "-c", CHILD_END_TO_END, hook, a.imports],
                               env=env(lib, governed), capture_output=True, text=True,
                               timeout=600)
            if p.returncode != 0:
                sys.exit(p.stderr)
            times[name].append(float(p.stdout.split()[-1]))
    count = subprocess.run([sys.executable, "-c", "import sys\nfor m in %r.split(','): "
                            "__import__(m)\nprint(len(sys.modules))" % a.imports],
                           env=env(lib, False), capture_output=True, text=True, timeout=600)
    modules = int(count.stdout.strip() or 0)
    result["end_to_end_s"] = {k: summary(v) for k, v in times.items()}
    result["imports"] = a.imports
    result["modules_after_import"] = modules
    result["load_after"] = os.getloadavg()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
