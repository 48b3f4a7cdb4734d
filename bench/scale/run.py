#!/usr/bin/env python3
"""bench/scale: the paper bench's model families on a machine with more cores, sockets and SMT
than the 2-core one docs/paper-results.md was measured on. One command:

    python3 bench/scale/run.py [--build build] [--repeat 2] [--out /tmp/parwidth-scale]
                               [--only family,...] [--short]

For each family of bench/paper/run.py (FAMILIES, batch 1 at its image size), `parwidth sweep`
over a grid of pools x intra (pools 1, 2, 4, ... up to the cores and the sockets; intra 1, 2,
4, ... up to 2 x cores, plus one socket's cores; pools x intra <= 2 x cores), twice: with an
empty cache (the built-in model plans) and after `parwidth calibrate` (into another new cache).
On a machine of several sockets a cell whose intra fits one socket runs per socket (each pool
inside one socket), a larger one spans them: the grid holds both layouts. Where the cores have
SMT siblings, the calibrated run is swept again with PARWIDTH_SMT=1 (siblings as slots; the grid's
sizes are then PUs), at half the rounds.

Prints per family and run: the plan (and whether it spans sockets), the grid's best,
plan/best (the plan's own runs over the best's, median over the rounds), Intel/best (Intel's
recommended setting as `parwidth sweep` runs it: pools = sockets, intra = physical cores, the
same baseline as bench/paper) and the Spearman rank correlation of the model's predicted
time of every grid cell (the plan report's `plan.predicted`) against its measured median.
Then, per run, the geometric means of plan/best and Intel/best and the median correlation.

--short: three small families, a 5-cell grid and three rounds: under a minute on 2 cores (the
smoke step of scripts/test). Long form: see docs/scale.md.
"""
import argparse
import json
import math
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "paper"))
import run as paper  # noqa: E402  (bench/paper/run.py: FAMILIES, METRIC, spearman, tools, bare_env)

SHORT = ["wide_deep", "transformer_encoder", "squeezenet1_0"]


def powers(top):
    v, k = [], 1
    while k <= top:
        v.append(k)
        k *= 2
    return v


def machine(pw, env):
    """(cores, sockets, cores per socket, PUs per core) of this process's budget."""
    t = json.loads(subprocess.run([str(pw), "topo", "--json"], capture_output=True, text=True,
                                  check=True, env=env).stdout)
    b = t["budget"]
    cores, sockets = b["cores"], max(1, b["sockets"] if isinstance(b["sockets"], int) else len(b["sockets"]))
    pus = max(1, len(b["cpus"]) // max(1, cores))
    return cores, sockets, max(1, cores // sockets), pus


def grid(cores, sockets, spc, short):
    if short:
        return [1, 2], [1, 2, 4], 2 * cores if cores <= 2 else 4
    pools = sorted(set([p for p in powers(cores)] + [sockets]))
    intra = sorted(set(powers(2 * cores) + [spc, cores]))
    return pools, intra, 2 * cores


def geomean(v):
    v = [x for x in v if x and x > 0]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", default="/tmp/parwidth-scale")
    ap.add_argument("--only", default="")
    ap.add_argument("--short", action="store_true")
    a = ap.parse_args()
    pw, engine = paper.tools(a.build)
    out = Path(a.out)
    if out.exists():
        shutil.rmtree(out)
    base = paper.bare_env()
    families = SHORT if a.short else list(paper.FAMILIES)
    if a.only:
        families = [f for f in families if f in a.only.split(",")]
    if not families:
        sys.exit("bench/scale: --only matches no family (families: %s)" % ", ".join(paper.FAMILIES))
    repeat = 3 if a.short else a.repeat
    cores, sockets, spc, pus = machine(pw, base)
    pools, intra, within = grid(cores, sockets, spc, a.short)
    # (name, environment, rounds): the SMT pass at half the rounds keeps 16 cores near 10 min.
    runs = [("builtin", {}, repeat), ("calibrated", {}, repeat)]
    if pus > 1 and not a.short:
        runs.append(("calibrated+smt", {"PARWIDTH_SMT": "1"}, max(1, repeat // 2)))
    cells = sum(1 for p in pools for t in intra if p * t <= within) + 4  # + plan, intel, tf, default
    t0 = time.time()
    print("bench/scale: %d cores on %d socket(s), %d per socket, %d PU(s) per core; grid pools %s x "
          "intra %s, pools x intra <= %d; %d round(s)%s" % (
              cores, sockets, spc, pus, pools, intra, within, repeat,
              " (short form)" if a.short else ""), flush=True)
    print("bench/scale: %d engine runs (%d configurations x rounds x %d families x %d passes)" % (
        cells * sum(r for _, _, r in runs) * len(families), cells, len(families), len(runs)), flush=True)
    summary = {}
    for run, extra, rounds in runs:
        cache = out / ("cache-" + run.split("+")[0])
        env = dict(base, XDG_CACHE_HOME=str(cache), **extra)
        if not cache.exists():
            cache.mkdir(parents=True, mode=0o700)
            if run.startswith("calibrated"):
                c0 = time.time()
                subprocess.run([str(pw), "calibrate"], check=True, env=env, capture_output=True)
                print("bench/scale: parwidth calibrate took %.1f s" % (time.time() - c0), flush=True)
        rows = []
        for fam in families:
            hw, it = paper.FAMILIES[fam]
            args = ["--iterations", str(max(1, it // 2) if a.short else it), "--batch", "1"] + (
                ["--image-size", str(hw)] if hw else [])
            genv = dict(env, PARWIDTH_INPUT_SHAPES="input=1x3x%dx%d" % (hw, hw)) if hw else env
            d = out / run / fam
            d.parent.mkdir(parents=True, exist_ok=True)
            cmd = [str(pw), "sweep", "--repeat", str(rounds), "--json", "--metric", paper.METRIC,
                   "--pools", ",".join(map(str, pools)), "--intra", ",".join(map(str, intra)),
                   "--within", str(within), "--out", str(d), "--",
                   str(engine), str(ROOT / "tests/fixtures/models" / (fam + ".onnx")), *args]
            p = subprocess.run(cmd, capture_output=True, text=True, env=genv)
            if p.returncode != 0:
                sys.exit("bench/scale: sweep failed for %s (%s):\n%s" % (fam, run, p.stderr[-2000:]))
            s = json.loads(p.stdout)
            try:
                report = json.loads((d / "plan-report.json").read_text())
            except (OSError, ValueError):
                report = {}
            b = s["best"]
            rho, _ = paper.predicted_vs_measured(s, report)
            plan = report.get("plan", {})

            def over_best(x):
                return statistics.median([u / v for u, v in zip(x["runs"], b["runs"])])
            span = plan.get("spanning_pools", 0)
            why = next((n for n in plan.get("notes", []) if n.startswith(("per socket:", "spanning:"))), "")
            r = {"plan": over_best(s["plan"]), "intel": over_best(s["intel"]), "rho": rho}
            rows.append(r)
            print("%-15s %-20s plan %2d x %-2d (%s%s) best %2d x %-2d %8.3f ms  plan/best %.3f  intel/best "
                  "%.3f  rho %s" % (
                      run, fam, s["plan"]["pools"], s["plan"]["intra"], plan.get("source", "?"),
                      ", spans" if span else (", per socket" if sockets > 1 else ""),
                      b["pools"], b["intra"], b["median"], r["plan"], r["intel"],
                      "%.2f" % rho if rho is not None else "-"), flush=True)
            if why:
                print("%-15s %-20s   %s" % ("", "", why), flush=True)
        summary[run] = rows
    for run, rows in summary.items():
        rhos = [r["rho"] for r in rows if r["rho"] is not None]
        print("bench/scale summary %-15s geomean plan/best %.3f (worst %.3f), intel/best %.3f, median rho %s"
              % (run, geomean([r["plan"] for r in rows]), max(r["plan"] for r in rows),
                 geomean([r["intel"] for r in rows]),
                 "%.2f" % statistics.median(rhos) if rhos else "-"))
    print("bench/scale: %.0f s" % (time.time() - t0))


if __name__ == "__main__":
    main()
