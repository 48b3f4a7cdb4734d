#!/usr/bin/env python3
"""bench/paper: the paper's experiment on this machine. Sweeps examples/engine over
pools x intra-op threads on generated graphs (examples/engine/gen) and on the model
families of tests/fixtures/models (torchvision CNNs, a Transformer encoder, a wide-and-deep
recommender; ONNX, weights stripped, filled with seeded random values), and writes
docs/paper-results.md.

    python3 bench/paper/run.py [--build build] [--repeat 5] [--out /tmp/paper] [--doc docs/paper-results.md]
                               [--only NAME,...]

Per graph: `parwidth sweep --repeat R --json --metric 'time per iteration: (ms)'` over the
default grid (pools 1..cores x intra 1..2 x cores with pools * intra <= 2 x cores, so
oversubscribed pairs too), parwidth's plan, Intel's recommended settings (inter-op =
sockets, intra-op = OpenMP threads = physical cores), TensorFlow's default through the
preload (inter = intra = logical CPUs) and the engine ungoverned (its defaults are
TensorFlow's too). Runs are interleaved by the sweep; each ratio X/best is taken per
repetition (run r of X over run r of the best configuration, which ran in the same round)
and shown as min / median / max.

Beside the best: a lower bound from `parwidth-engine --profile` (each operator timed alone
at each team size 1..cores): max(work / cores, span), work = the operators' times at one
thread summed, span = the longest path with each operator at its fastest team size.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
METRIC = r"time per iteration: ([0-9.]+) ms"
# name: (image size, 0 = the exported one; iterations per run)
FAMILIES = {
    "inception_v3": (149, 3),
    "googlenet": (112, 5),
    "densenet121": (112, 3),
    "mobilenet_v2": (112, 5),
    "shufflenet_v2_x1_0": (0, 5),
    "resnet50": (112, 3),
    "vgg16": (64, 3),
    "squeezenet1_0": (112, 5),
    "transformer_encoder": (0, 20),
    "wide_deep": (0, 20),
}


def ratios(x, best):
    r = [a / b for a, b in zip(x["runs"], best["runs"])]
    return min(r), statistics.median(r), max(r)


def fmt3(t):
    return "%.2f / %.2f / %.2f" % t


def profile_bound(engine, model, args, cores, env):
    """max(work / cores, span) in ms from the engine's per-operator profile."""
    teams = ",".join(str(t) for t in range(1, cores + 1))
    p = subprocess.run([str(engine), str(model), *args, "--profile", "--profile-threads", teams],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit("bench/paper: profile failed for %s:\n%s" % (model, p.stderr))
    ops = []
    for line in p.stdout.splitlines():
        m = re.match(r"profile: op (\d+) (\S+) preds (\S+) ms ((?:[0-9.]+ ?)+) name", line)
        if m:
            preds = [] if m.group(3) == "-" else [int(x) for x in m.group(3).split(",")]
            ops.append((preds, [float(x) for x in m.group(4).split()]))
    work = sum(t[0] for _, t in ops)
    finish = []
    for preds, t in ops:  # topological order
        finish.append(max([finish[q] for q in preds], default=0.0) + min(t))
    span = max(finish, default=0.0)
    return {"work": work, "span": span, "bound": max(work / cores, span)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default="/tmp/parwidth-paper")
    ap.add_argument("--doc", default=str(ROOT / "docs" / "paper-results.md"))
    ap.add_argument("--only", default="", help="comma-separated graph names (a quick check)")
    a = ap.parse_args()
    build = Path(a.build) if Path(a.build).is_absolute() else ROOT / a.build
    pw, engine = build / "bin" / "parwidth", build / "bin" / "parwidth-engine"
    out = Path(a.out)
    gdir = out / "graphs"
    subprocess.run([sys.executable, str(ROOT / "examples/engine/gen/gen_graphs.py"), "--suite", str(gdir)],
                   check=True)
    fx = ROOT / "tests" / "fixtures" / "models"
    # name: (model, engine args)
    cases = {name: (gdir / (name + ".json"), ["--iterations", "10"])
             for name in ["chain12", "inception2x3", "inception4x4", "towers2", "falsify3", "wide_deep4"]}
    # The model families at batch 1; image sizes (FAMILIES) keep the whole run near 30 min
    # on 2 cores. ShuffleNet and the encoder reshape to sizes fixed at export.
    for name, (hw, it) in FAMILIES.items():
        args = ["--iterations", str(it), "--batch", "1"] + (["--image-size", str(hw)] if hw else [])
        cases[name + ".onnx"] = (fx / (name + ".onnx"), args)
    if a.only:
        cases = {k: v for k, v in cases.items() if k in a.only.split(",")}

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARWIDTH_", "OMP_", "KMP_"))}
    env.pop("LD_PRELOAD", None)
    rows = []
    load_before = os.getloadavg()
    t_start = time.time()
    loads = []  # 1-min load average as each graph starts: how busy the machine was throughout
    for name, (model, args) in cases.items():
        loads.append(os.getloadavg()[0])
        w = json.loads(subprocess.run([str(pw), "width", str(model), "--json"], capture_output=True,
                                      text=True, check=True, env=env).stdout)
        cmd = [str(pw), "sweep", "--repeat", str(a.repeat), "--json", "--metric", METRIC,
               "--out", str(out / name), "--", str(engine), str(model), *args]
        print("bench/paper:", " ".join(cmd), file=sys.stderr, flush=True)
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            sys.exit("bench/paper: sweep failed for %s:\n%s" % (name, p.stderr))
        s = json.loads(p.stdout)
        b = profile_bound(engine, model, args, s["cores"], env)
        rows.append((name, w, s, b))
    elapsed = time.time() - t_start
    load_after = os.getloadavg()

    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    keep = ("Architecture", "CPU(s)", "On-line CPU(s) list", "Model name", "Thread(s) per core",
            "Core(s) per socket", "Socket(s)", "Hypervisor vendor", "L1d cache", "L2 cache", "L3 cache",
            "NUMA node(s)")
    machine = "\n".join("    " + l.strip() for l in lscpu.splitlines() if l.split(":")[0].strip() in keep)
    ver = subprocess.run([str(engine), "--help"], capture_output=True, text=True)
    cores, sockets = rows[0][2]["cores"], rows[0][2]["sockets"]
    sizes = ", ".join("%s %s" % (n, ("%dx%d" % (hw, hw)) if hw else "as exported")
                      for n, (hw, _) in FAMILIES.items())

    lines = []
    lines.append("# The paper's experiment on this machine: plan vs exhaustive search\n")
    lines.append("Made by `python3 bench/paper/run.py --build %s --repeat %d` (%.0f s). "
                 "Every number here is measured by that run; nothing is copied from elsewhere.\n"
                 % (a.build, a.repeat, elapsed))
    lines.append("## Machine\n\n" + machine + "\n")
    lines.append("Load average (1 min) before / after the run: %.2f / %.2f. On a 2-core machine "
                 "anything else running (here: other sessions' test suites) lands on the cores the "
                 "configurations compete for; read single rows with that in mind. As each graph "
                 "started: min %.2f, median %.2f, max %.2f.\n"
                 % (load_before[0], load_after[0], min(loads), statistics.median(loads), max(loads)))
    lines.append("Budget seen by parwidth: %d physical core(s) on %d socket(s). Engine: oneDNN 2.6.3 "
                 "(Debian libdnnl, OpenMP runtime), examples/engine.\n" % (cores, sockets))
    lines.append("## Method\n")
    lines.append(
        "- Graphs: six generated by `examples/engine/gen/gen_graphs.py --suite` (batch 1, 32x32 images, "
        "48 channels; wide-and-deep: batch 64, 4 tables of 20000x32, 8 ids each, MLP 512-256-128) and "
        "the model families of `tests/fixtures/gen/gen_onnx.py` at batch 1 (image sizes: %s), their "
        "stripped weights filled with seeded random values. VGG-16's pooling before the classifier is "
        "global there (1x1), so it runs at any size; the Transformer encoder is 2 layers, d_model 64, "
        "4 heads, 16 tokens; wide-and-deep is 4 tables of 1000x16 (8 ids each), 13 dense features, MLP "
        "256-128-1 and a wide linear.\n"
        "- Each graph: `parwidth sweep --repeat %d --metric '%s' -- parwidth-engine MODEL --iterations N` "
        "(N: 10 generated, 3-20 families, see `FAMILIES` in the script; one warm-up iteration; the metric "
        "is the median iteration of a run). Grid: pools 1..%d x intra 1..%d with pools * intra <= %d "
        "(2 x cores: pairs above %d cores oversubscribe, marked * below). Runs are interleaved round by "
        "round.\n"
        "- plan = parwidth's plan from the session's graph (hooks/engine.cpp); intel = Intel's recommended "
        "settings, inter-op = sockets (%d), intra-op = OpenMP threads = physical cores (%d); TF = "
        "TensorFlow's default set through the preload, inter-op = intra-op = logical CPUs; ungoverned = "
        "the engine's own defaults (the same numbers, without the preload's pinning).\n"
        "- best = the grid configuration with the lowest median. X/best = run r of X over run r of best "
        "(same round), min / median / max over the %d rounds. Values < 1 mean X beat the grid's best "
        "median in that round (noise, or a configuration outside the grid).\n"
        "- bound = max(work / cores, span) from `parwidth-engine MODEL ... --profile --profile-threads "
        "1..%d` (one inter-op worker, each operator timed alone, median of N iterations): work = every "
        "operator's time at one thread, summed; span = the longest path with each operator at its "
        "fastest team size. No schedule of these operators on %d cores can beat it (up to noise and "
        "cache effects between operators); best/bound says how much room a plan has left.\n"
        % (sizes, a.repeat, METRIC, cores, 2 * cores, 2 * cores, cores, sockets, cores, a.repeat,
           cores, cores))
    lines.append("## Results\n")
    lines.append("| graph | H | L | W | max level width | plan (pools x intra) | best | best median ms | "
                 "bound ms | best/bound | plan/best | intel/best | TF/best | ungoverned/best |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    star = lambda c: "*" if c["pools"] * c["intra"] > cores else ""
    for name, w, s, bd in rows:
        b = s["best"]
        lines.append("| %s | %d | %d | %d | %d | %d x %d | %d x %d%s | %.3f | %.3f | %.2f | %s | %s | %s | %s |" % (
            name, w["heavy"], w["layers"], w["avg_width"], w["max_level_width"],
            s["plan"]["pools"], s["plan"]["intra"], b["pools"], b["intra"], star(b), b["median"],
            bd["bound"], b["median"] / bd["bound"] if bd["bound"] else 0.0,
            fmt3(ratios(s["plan"], b)), fmt3(ratios(s["intel"], b)), fmt3(ratios(s["tf"], b)),
            fmt3(ratios(s["default"], b))))
    lines.append("")
    lines.append("Medians (ms) of every configuration (* oversubscribed), and the profile's work and span "
                 "(ms):\n")
    grid0 = rows[0][2]["grid"]
    lines.append("| graph | " + " | ".join("%d x %d%s" % (g["pools"], g["intra"], star(g)) for g in grid0)
                 + " | plan | intel | TF | ungoverned | work | span |")
    lines.append("|---|" + "---|" * (len(grid0) + 6))
    for name, w, s, bd in rows:
        lines.append("| %s | " % name + " | ".join("%.3f" % g["median"] for g in s["grid"]) +
                     " | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |" % (
                         s["plan"]["median"], s["intel"]["median"], s["tf"]["median"],
                         s["default"]["median"], bd["work"], bd["span"]))
    lines.append("")
    gm = lambda v: statistics.geometric_mean(v)
    for title, sel in (("all %d graphs" % len(rows), rows),
                       ("the %d generated graphs" % sum(1 for r in rows if not r[0].endswith(".onnx")),
                        [r for r in rows if not r[0].endswith(".onnx")]),
                       ("the %d model families" % sum(1 for r in rows if r[0].endswith(".onnx")),
                        [r for r in rows if r[0].endswith(".onnx")])):
        if not sel:
            continue
        pb = [ratios(s["plan"], s["best"])[1] for _, _, s, _ in sel]
        ib = [ratios(s["intel"], s["best"])[1] for _, _, s, _ in sel]
        tb = [ratios(s["tf"], s["best"])[1] for _, _, s, _ in sel]
        db = [ratios(s["default"], s["best"])[1] for _, _, s, _ in sel]
        bb = [s["best"]["median"] / bd["bound"] for _, _, s, bd in sel if bd["bound"] > 0]
        over = sum(1 for _, _, s, _ in sel if star(s["best"]))
        lines.append("Geometric mean over %s of the median ratios: plan/best %.3f, intel/best %.3f, "
                     "TF/best %.3f, ungoverned/best %.3f, best/bound %.3f; worst plan/best %.3f (%s); "
                     "the best configuration oversubscribes on %d of them.\n"
                     % (title, gm(pb), gm(ib), gm(tb), gm(db), gm(bb) if bb else 0.0, max(pb),
                        sel[pb.index(max(pb))][0], over))
    lines.append("Per-graph CSVs and heatmaps: `%s/<graph>/sweep.csv`, `heatmap.svg` (not committed).\n" % out)
    Path(a.doc).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
