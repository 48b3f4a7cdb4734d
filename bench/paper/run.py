#!/usr/bin/env python3
"""bench/paper: the paper's experiment on this machine. Sweeps examples/engine over
pools x intra-op threads on generated graphs (examples/engine/gen) and on the Inception v3
and GoogLeNet ONNX fixtures (weights stripped, filled with seeded random values), and
writes docs/paper-results.md.

    python3 bench/paper/run.py [--build build] [--repeat 5] [--out /tmp/paper] [--doc docs/paper-results.md]

Per graph: `parwidth sweep --repeat R --json --metric 'time per iteration: (ms)'` over the
default grid (every pools x intra with pools * intra <= cores), parwidth's plan, Intel's
recommended settings (inter-op = sockets, intra-op = OpenMP threads = physical cores) and
TensorFlow's naive defaults (the engine ungoverned: inter = intra = logical CPUs). Runs are
interleaved by the sweep; each ratio X/best is taken per repetition (run r of X over run r
of the best configuration, which ran in the same round) and shown as min / median / max.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
METRIC = r"time per iteration: ([0-9.]+) ms"


def ratios(x, best):
    r = [a / b for a, b in zip(x["runs"], best["runs"])]
    return min(r), statistics.median(r), max(r)


def fmt3(t):
    return "%.2f / %.2f / %.2f" % t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default="/tmp/parwidth-paper")
    ap.add_argument("--doc", default=str(ROOT / "docs" / "paper-results.md"))
    a = ap.parse_args()
    build = Path(a.build) if Path(a.build).is_absolute() else ROOT / a.build
    pw, engine = build / "bin" / "parwidth", build / "bin" / "parwidth-engine"
    out = Path(a.out)
    gdir = out / "graphs"
    subprocess.run([sys.executable, str(ROOT / "examples/engine/gen/gen_graphs.py"), "--suite", str(gdir)],
                   check=True)
    fx = ROOT / "tests" / "fixtures" / "models"
    # name: (model, engine args)
    cases = {name: (gdir / (name + ".json"), ["--iterations", "20"])
             for name in ["chain12", "inception2x3", "inception4x4", "towers2", "falsify3", "wide_deep4"]}
    cases["inception_v3.onnx"] = (fx / "inception_v3.onnx", ["--iterations", "5", "--batch", "1"])
    cases["googlenet.onnx"] = (fx / "googlenet.onnx", ["--iterations", "10", "--batch", "1"])

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARWIDTH_", "OMP_", "KMP_"))}
    env.pop("LD_PRELOAD", None)
    rows = []
    load_before = os.getloadavg()
    t_start = time.time()
    for name, (model, args) in cases.items():
        w = json.loads(subprocess.run([str(pw), "width", str(model), "--json"], capture_output=True,
                                      text=True, check=True, env=env).stdout)
        cmd = [str(pw), "sweep", "--repeat", str(a.repeat), "--json", "--metric", METRIC,
               "--out", str(out / name), "--", str(engine), str(model), *args]
        print("bench/paper:", " ".join(cmd), file=sys.stderr, flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            sys.exit("bench/paper: sweep failed for %s:\n%s" % (name, p.stderr))
        s = json.loads(p.stdout)
        rows.append((name, w, s))
    elapsed = time.time() - t_start
    load_after = os.getloadavg()

    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    keep = ("Architecture", "CPU(s)", "On-line CPU(s) list", "Model name", "Thread(s) per core",
            "Core(s) per socket", "Socket(s)", "Hypervisor vendor", "L1d cache", "L2 cache", "L3 cache",
            "NUMA node(s)")
    machine = "\n".join("    " + l.strip() for l in lscpu.splitlines() if l.split(":")[0].strip() in keep)
    ver = subprocess.run([str(engine), "--help"], capture_output=True, text=True)
    cores, sockets = rows[0][2]["cores"], rows[0][2]["sockets"]

    lines = []
    lines.append("# The paper's experiment on this machine: plan vs exhaustive search\n")
    lines.append("Made by `python3 bench/paper/run.py --build %s --repeat %d` (%.0f s). "
                 "Every number here is measured by that run; nothing is copied from elsewhere.\n"
                 % (a.build, a.repeat, elapsed))
    lines.append("## Machine\n\n" + machine + "\n")
    lines.append("Load average (1 min) before / after the run: %.2f / %.2f. On a 2-core machine "
                 "anything else running (here: other sessions' test suites) lands on the cores the "
                 "configurations compete for; read single rows with that in mind.\n"
                 % (load_before[0], load_after[0]))
    lines.append("Budget seen by parwidth: %d physical core(s) on %d socket(s). Engine: oneDNN 2.6.3 "
                 "(Debian libdnnl, OpenMP runtime), examples/engine.\n" % (cores, sockets))
    lines.append("## Method\n")
    lines.append(
        "- Graphs: six generated by `examples/engine/gen/gen_graphs.py --suite` (batch 1, 32x32 images, "
        "48 channels; wide-and-deep: batch 64, 4 tables of 20000x32, 8 ids each, MLP 512-256-128) and the "
        "Inception v3 (299x299) and GoogLeNet (224x224) ONNX fixtures at batch 1, their stripped weights "
        "filled with seeded random values.\n"
        "- Each graph: `parwidth sweep --repeat %d --metric '%s' -- parwidth-engine MODEL --iterations N` "
        "(N = 20 generated, 10 GoogLeNet, 5 Inception v3; one warm-up iteration; the metric is the median "
        "iteration of a run). Grid: every pools x intra with pools * intra <= %d cores. Runs are interleaved "
        "round by round.\n"
        "- plan = parwidth's plan from the session's graph (hooks/engine.cpp); intel = Intel's recommended "
        "settings, inter-op = sockets (%d), intra-op = OpenMP threads = physical cores (%d); TF default = "
        "the engine ungoverned, inter-op = intra-op = logical CPUs, TensorFlow's naive defaults.\n"
        "- best = the grid configuration with the lowest median. X/best = run r of X over run r of best "
        "(same round), min / median / max over the %d rounds. Values < 1 mean X beat the grid's best "
        "median in that round (noise, or a configuration outside the grid).\n"
        % (a.repeat, METRIC, cores, sockets, cores, a.repeat))
    lines.append("## Results\n")
    lines.append("| graph | H | L | W | max level width | plan (pools x intra) | best | best median ms | "
                 "plan/best | intel/best | TF default/best |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, w, s in rows:
        b = s["best"]
        lines.append("| %s | %d | %d | %d | %d | %d x %d | %d x %d | %.3f | %s | %s | %s |" % (
            name, w["heavy"], w["layers"], w["avg_width"], w["max_level_width"],
            s["plan"]["pools"], s["plan"]["intra"], b["pools"], b["intra"], b["median"],
            fmt3(ratios(s["plan"], b)), fmt3(ratios(s["intel"], b)), fmt3(ratios(s["default"], b))))
    lines.append("")
    lines.append("Medians (ms) of every configuration:\n")
    lines.append("| graph | " + " | ".join("%d x %d" % (g["pools"], g["intra"]) for g in rows[0][2]["grid"])
                 + " | plan | intel | TF default |")
    lines.append("|---|" + "---|" * (len(rows[0][2]["grid"]) + 3))
    for name, w, s in rows:
        lines.append("| %s | " % name + " | ".join("%.3f" % g["median"] for g in s["grid"]) +
                     " | %.3f | %.3f | %.3f |" % (s["plan"]["median"], s["intel"]["median"],
                                                   s["default"]["median"]))
    lines.append("")
    pb = [ratios(s["plan"], s["best"])[1] for _, _, s in rows]
    ib = [ratios(s["intel"], s["best"])[1] for _, _, s in rows]
    db = [ratios(s["default"], s["best"])[1] for _, _, s in rows]
    gm = lambda v: statistics.geometric_mean(v)
    lines.append("Geometric mean over the %d graphs of the median ratios: plan/best %.3f, intel/best %.3f, "
                 "TF default/best %.3f; worst plan/best %.3f (%s).\n"
                 % (len(rows), gm(pb), gm(ib), gm(db), max(pb), rows[pb.index(max(pb))][0]))
    lines.append("Per-graph CSVs and heatmaps: `%s/<graph>/sweep.csv`, `heatmap.svg` (not committed).\n" % out)
    Path(a.doc).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
