#!/usr/bin/env python3
"""bench/paper: the paper's experiment on this machine. Sweeps examples/engine over
pools x intra-op threads on generated graphs (examples/engine/gen) and on the model
families of tests/fixtures/models (torchvision CNNs, a Transformer encoder, a wide-and-deep
recommender; ONNX, weights stripped, filled with seeded random values), and writes
docs/paper-results.md.

    python3 bench/paper/run.py [--build build] [--repeat 5] [--out /tmp/paper] [--doc docs/paper-results.md]
                               [--only NAME,...] [--runs builtin,calibrated,measured]

Three runs, as the acceptance of the plans issue asks: `builtin` sweeps with an empty cache
(XDG_CACHE_HOME a new empty folder: the plan comes from the built-in machine model),
`calibrated` runs `parwidth calibrate` into another new folder, then sweeps with that one
(the plan comes from this machine's calibration), and `measured` (after `calibrated`, whose
sweeps then also `--save` their grid's best as the graph's measured plan) sweeps again with
that cache: the plan comes from the stored measurement. Each run prints, per graph, the
Spearman rank correlation between the plan's predicted time of every candidate (the
report's `plan.predicted`) and the candidates' measured medians, and a summary line: the
geometric mean and worst of plan/best, and the graphs on which the plan's median is
slower than both Intel's setting's and TensorFlow's default's. plan/best is read two ways:
the grid's own runs of the plan's configuration over the best's (the choice, measured as
the best was), and the plan's own runs, where the preload chose it in each process, over
the best's (the same choice plus the spread between two sets of processes).

Per graph: `parwidth sweep --repeat R --json --metric 'time per iteration: (ms)'` over the
default grid (pools 1..cores x intra 1..2 x cores with pools * intra <= 2 x cores, so
oversubscribed pairs too), parwidth's plan, Intel's recommended settings (inter-op =
sockets, intra-op = OpenMP threads = physical cores), TensorFlow's default through the
preload (inter = intra = logical CPUs) and the engine ungoverned (its defaults are
TensorFlow's too). Runs are interleaved by the sweep; each ratio X/best is taken per
repetition (run r of X over run r of the best configuration, which ran in the same round)
and shown as min / median / max.

The engine's session is planned from its graph with the input sizes it runs at
(PARWIDTH_INPUT_SHAPES, set for the image models from `FAMILIES`).

Beside the best: a lower bound from `parwidth-engine --profile` (each operator timed alone
at each team size 1..cores): max(work / cores, span), work = the operators' times at one
thread summed, span = the longest path with each operator at its fastest team size.
"""
import argparse
import json
import os
import re
import shutil
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


TITLES = {"builtin": "empty cache (built-in machine model)",
          "calibrated": "after `parwidth calibrate`",
          "measured": "with stored measurements (the calibrated run's `parwidth sweep --save`)"}
SHORT = {"builtin": "empty cache (built-in model)", "calibrated": "after `parwidth calibrate`",
         "measured": "with stored measurements"}


def cpu_times():
    """(stolen, total) jiffies of all CPUs from /proc/stat: the hypervisor's share of this guest's
    CPU time (zero on bare metal), which a sweep's configurations cannot see any other way."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (v[7] if len(v) > 7 else 0), sum(v[:8])


def tools(build_arg):
    """parwidth and the example engine in the build folder `build_arg` (relative: to the repo)."""
    build = Path(build_arg) if Path(build_arg).is_absolute() else ROOT / build_arg
    return build / "bin" / "parwidth", build / "bin" / "parwidth-engine"


def bare_env():
    """This environment without parwidth's, OpenMP's and Intel's settings, nor a preload."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PARWIDTH_", "OMP_", "KMP_"))}
    base.pop("LD_PRELOAD", None)
    return base


def ratios(x, best):
    r = [a / b for a, b in zip(x["runs"], best["runs"])]
    return min(r), statistics.median(r), max(r)


def ranks(v):
    """Ranks 1..n, ties sharing their mean rank."""
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    """Spearman's rank correlation (Pearson's on the ranks); None when either side is constant."""
    if len(a) < 2:
        return None
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return num / den if den else None


def predicted_vs_measured(s, report):
    """(rho, predicted ms per (pools, intra)): the plan's predicted time of each candidate
    against the grid's measured medians."""
    pred = {(c["pools"], c["intra"]): c["seconds"] * 1e3
            for c in report.get("plan", {}).get("predicted", [])}
    pairs = [(pred[(g["pools"], g["intra"])], g["median"]) for g in s["grid"]
             if (g["pools"], g["intra"]) in pred]
    return spearman([p for p, _ in pairs], [m for _, m in pairs]), pred


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


def sweep_graph(pw, engine, name, model, args, out, repeat, env, save=False):
    cmd = [str(pw), "sweep", "--repeat", str(repeat), "--json", "--metric", METRIC,
           "--out", str(out)] + (["--save"] if save else []) + ["--", str(engine), str(model), *args]
    print("bench/paper:", " ".join(cmd), file=sys.stderr, flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit("bench/paper: sweep failed for %s:\n%s" % (name, p.stderr))
    s = json.loads(p.stdout)
    try:
        report = json.loads((out / "plan-report.json").read_text())
    except (OSError, ValueError):
        report = {}
    return s, report


def plan_cell(s):
    """The grid's runs of the plan's configuration, or the plan's own runs where the grid has no
    such cell."""
    for g in s["grid"]:
        if (g["pools"], g["intra"]) == (s["plan"]["pools"], s["plan"]["intra"]):
            return g
    return s["plan"]


def summarise(title, sel, star):
    """One line per selection: geometric mean and worst plan/best, and where the plan lost to both."""
    gm = statistics.geometric_mean
    cb = [ratios(plan_cell(r["s"]), r["s"]["best"])[1] for r in sel]
    pb = [ratios(r["s"]["plan"], r["s"]["best"])[1] for r in sel]
    ib = [ratios(r["s"]["intel"], r["s"]["best"])[1] for r in sel]
    tb = [ratios(r["s"]["tf"], r["s"]["best"])[1] for r in sel]
    db = [ratios(r["s"]["default"], r["s"]["best"])[1] for r in sel]
    bb = [r["s"]["best"]["median"] / r["bound"]["bound"] for r in sel if r["bound"]["bound"] > 0]
    over = sum(1 for r in sel if star(r["s"]["best"]))
    return ("Geometric mean over %s of the median ratios: plan's cell/best %.3f, plan run/best "
            "%.3f, intel/best %.3f, TF/best %.3f, ungoverned/best %.3f, best/bound %.3f; worst plan's "
            "cell/best %.3f (%s), worst plan run/best %.3f (%s); the best configuration "
            "oversubscribes on %d of them.\n"
            % (title, gm(cb), gm(pb), gm(ib), gm(tb), gm(db), gm(bb) if bb else 0.0, max(cb),
               sel[cb.index(max(cb))]["name"], max(pb), sel[pb.index(max(pb))]["name"], over)), \
        (gm(cb), max(cb)), (gm(pb), max(pb))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default="/tmp/parwidth-paper")
    ap.add_argument("--doc", default=str(ROOT / "docs" / "paper-results.md"))
    ap.add_argument("--only", default="", help="comma-separated graph names (a quick check)")
    ap.add_argument("--runs", default="builtin,calibrated,measured",
                    help="builtin (empty cache), calibrated (after parwidth calibrate), measured "
                         "(the calibrated run's best, stored; needs calibrated)")
    a = ap.parse_args()
    order = ("builtin", "calibrated", "measured")
    runs = [r for r in order if r in a.runs.split(",")]
    if not runs or any(r not in order for r in a.runs.split(",") if r):
        sys.exit("bench/paper: --runs takes builtin, calibrated, measured (comma-separated)")
    if "measured" in runs and "calibrated" not in runs:
        sys.exit("bench/paper: --runs measured needs calibrated (its sweeps store the measurements)")
    pw, engine = tools(a.build)
    out = Path(a.out)
    gdir = out / "graphs"
    subprocess.run([sys.executable, str(ROOT / "examples/engine/gen/gen_graphs.py"), "--suite", str(gdir)],
                   check=True)
    fx = ROOT / "tests" / "fixtures" / "models"
    # name: (model, engine args, PARWIDTH_INPUT_SHAPES)
    cases = {name: (gdir / (name + ".json"), ["--iterations", "10"], "")
             for name in ["chain12", "inception2x3", "inception4x4", "towers2", "falsify3", "wide_deep4"]}
    # The model families at batch 1; image sizes (FAMILIES) keep the whole run near 30 min
    # on 2 cores. ShuffleNet and the encoder reshape to sizes fixed at export.
    for name, (hw, it) in FAMILIES.items():
        args = ["--iterations", str(it), "--batch", "1"] + (["--image-size", str(hw)] if hw else [])
        shapes = "input=1x3x%dx%d" % (hw, hw) if hw else ""
        cases[name + ".onnx"] = (fx / (name + ".onnx"), args, shapes)
    if a.only:
        cases = {k: v for k, v in cases.items() if k in a.only.split(",")}
    if not cases:
        sys.exit("bench/paper: --only matches no graph")

    base = bare_env()
    load_before = os.getloadavg()
    t_start = time.time()
    loads = []  # 1-min load average as each sweep starts: how busy the machine was throughout
    bounds = {}
    results = {}  # run -> list of per-graph dicts
    calib = ""
    for run in runs:
        cache = out / ("cache-" + ("calibrated" if run == "measured" else run))
        if run != "measured":
            if cache.exists():
                shutil.rmtree(cache)
            cache.mkdir(parents=True, mode=0o700)
        env = dict(base, XDG_CACHE_HOME=str(cache))
        if run == "calibrated":
            t0 = time.time()
            p = subprocess.run([str(pw), "calibrate"], capture_output=True, text=True, env=env)
            if p.returncode != 0:
                sys.exit("bench/paper: parwidth calibrate failed:\n%s" % p.stderr)
            shown = subprocess.run([str(pw), "calibrate", "--show"], capture_output=True, text=True,
                                   env=env).stdout
            calib = "`parwidth calibrate` took %.1f s; `parwidth calibrate --show`:\n\n%s" % (
                time.time() - t0, "\n".join("    " + l for l in shown.splitlines()))
        results[run] = []
        (out / run).mkdir(parents=True, exist_ok=True)
        for name, (model, args, shapes) in cases.items():
            loads.append(os.getloadavg()[0])
            genv = dict(env, PARWIDTH_INPUT_SHAPES=shapes) if shapes else env
            w = json.loads(subprocess.run([str(pw), "width", str(model), "--json"], capture_output=True,
                                          text=True, check=True, env=genv).stdout)
            before = cpu_times()
            s, report = sweep_graph(pw, engine, name, model, args, out / run / name, a.repeat, genv,
                                    save=run == "calibrated" and "measured" in runs)
            after = cpu_times()
            steal = 100.0 * (after[0] - before[0]) / max(1, after[1] - before[1])
            if name not in bounds:
                bounds[name] = profile_bound(engine, model, args, s["cores"], env)
            rho, pred = predicted_vs_measured(s, report)
            plan = report.get("plan", {})
            results[run].append({"name": name, "w": w, "s": s, "bound": bounds[name], "rho": rho, "steal": steal,
                                 "pred": pred, "source": plan.get("source", "?"),
                                 "detail": plan.get("source_detail", "")})
            print("bench/paper: %s %s: plan %d x %d (%s), rank correlation predicted/measured %s" % (
                run, name, s["plan"]["pools"], s["plan"]["intra"], plan.get("source", "?"),
                "%.2f" % rho if rho is not None else "-"), file=sys.stderr, flush=True)
    elapsed = time.time() - t_start
    load_after = os.getloadavg()

    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    # The tree measured, for the page's provenance (docs/developing.md): a tree with
    # uncommitted changes says so rather than naming a commit it is not.
    git = ["git", "-C", str(Path(__file__).resolve().parent)]
    commit = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    if commit != "unknown" and subprocess.run(git + ["diff", "--quiet", "HEAD"]).returncode != 0:
        commit += " with uncommitted changes"
    keep = ("Architecture", "CPU(s)", "On-line CPU(s) list", "Model name", "Thread(s) per core",
            "Core(s) per socket", "Socket(s)", "Hypervisor vendor", "L1d cache", "L2 cache", "L3 cache",
            "NUMA node(s)")
    machine = "\n".join("    " + l.strip() for l in lscpu.splitlines() if l.split(":")[0].strip() in keep)
    first = results[runs[0]]
    cores, sockets = first[0]["s"]["cores"], first[0]["s"]["sockets"]
    sizes = ", ".join("%s %s" % (n, ("%dx%d" % (hw, hw)) if hw else "as exported")
                      for n, (hw, _) in FAMILIES.items())
    command = "python3 bench/paper/run.py --build %s --repeat %d --runs %s%s" % (
        a.build, a.repeat, ",".join(runs), (" --only " + a.only) if a.only else "")

    lines = []
    lines.append("# The paper's experiment on this machine: plan vs exhaustive search\n")
    lines.append("Made by `%s` at commit %s (%.0f s). Every number here is measured by that run; "
                 "nothing is copied from elsewhere.\n" % (command, commit, elapsed))
    lines.append("## Machine\n\n" + machine + "\n")
    lines.append("Load average (1 min) before / after the run: %.2f / %.2f. On a 2-core machine "
                 "anything else running lands on the cores the configurations compete for; read "
                 "single rows with that in mind. As each sweep started: min %.2f, median %.2f, max %.2f.\n"
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
        "round, each round in an order of its own (the sweep's).\n"
        "- Runs: **builtin** sweeps with an empty cache (XDG_CACHE_HOME a new empty folder, so the "
        "plan comes from the built-in machine model), **calibrated** runs `parwidth calibrate` into "
        "another new folder first and sweeps with it (with `--save` when the measured run follows, "
        "storing each graph's grid best as its measured plan), **measured** sweeps again with that "
        "folder, so the plan is the stored measurement. The image models' sessions are planned at the "
        "input size they run at (PARWIDTH_INPUT_SHAPES=input=1x3xHxW).\n"
        "- plan = parwidth's plan from the session's graph (hooks/engine.cpp); intel = Intel's recommended "
        "settings, inter-op = sockets (%d), intra-op = OpenMP threads = physical cores (%d); TF = "
        "TensorFlow's default set through the preload, inter-op = intra-op = logical CPUs; ungoverned = "
        "the engine's own defaults (the same numbers, without the preload's pinning).\n"
        "- best = the grid configuration with the lowest median. X/best = run r of X over run r of best "
        "(same round), min / median / max over the %d rounds. Values < 1 mean X beat the grid's best "
        "median in that round (noise, or a configuration outside the grid).\n"
        "- plan's cell/best = the grid's runs of the plan's configuration over the best's: how good the "
        "plan's choice is, measured as the best was (the same rounds, the same number of processes); "
        "1.00 where the plan chose the best. plan run/best = the plan's own runs (the preload choosing "
        "the plan itself in each process) over the best's: the same choice plus the spread between two "
        "sets of processes of one configuration, which the summary gives as those runs over the plan's "
        "cell. The acceptance is read on the first and shown on both.\n"
        "- rho = Spearman's rank correlation between the plan's predicted time of each candidate (the "
        "report's `plan.predicted`) and that candidate's measured median.\n"
        "- steal %% = the share of all CPU time that the hypervisor gave to others while the graph's "
        "sweep ran (/proc/stat; 0 on bare metal). A sweep that met a neighbour's burst shows it here; "
        "its medians, and a `--save` it made, are that much less certain.\n"
        "- bound = max(work / cores, span) from `parwidth-engine MODEL ... --profile --profile-threads "
        "1..%d` (one inter-op worker, each operator timed alone, median of N iterations): work = every "
        "operator's time at one thread, summed; span = the longest path with each operator at its "
        "fastest team size. No schedule of these operators on %d cores can beat it (up to noise and "
        "cache effects between operators); best/bound says how much room a plan has left.\n"
        % (sizes, a.repeat, METRIC, cores, 2 * cores, 2 * cores, cores, sockets, cores, a.repeat,
           cores, cores))
    star = lambda c: "*" if c["pools"] * c["intra"] > cores else ""
    verdicts = []
    for run in runs:
        rows = results[run]
        lines.append("## Results: %s\n" % TITLES[run])
        if run == "calibrated" and calib:
            lines.append(calib + "\n")
        lines.append("| graph | H | L | W | max level width | plan (pools x intra) | plan source | best | "
                     "best median ms | bound ms | best/bound | plan's cell/best | plan run/best | "
                     "intel/best | TF/best | ungoverned/best | rho | steal % |")
        lines.append("|---|" * 1 + "---|" * 17)
        for r in rows:
            s, w, bd, b = r["s"], r["w"], r["bound"], r["s"]["best"]
            lines.append("| %s | %d | %d | %d | %d | %d x %d | %s | %d x %d%s | %.3f | %.3f | %.2f | %s | %s | "
                         "%s | %s | %s | %s | %.1f |" % (
                             r["name"], w["heavy"], w["layers"], w["avg_width"], w["max_level_width"],
                             s["plan"]["pools"], s["plan"]["intra"], r["source"], b["pools"], b["intra"],
                             star(b), b["median"], bd["bound"], b["median"] / bd["bound"] if bd["bound"] else 0.0,
                             fmt3(ratios(plan_cell(s), b)), fmt3(ratios(s["plan"], b)),
                             fmt3(ratios(s["intel"], b)), fmt3(ratios(s["tf"], b)),
                             fmt3(ratios(s["default"], b)), "%.2f" % r["rho"] if r["rho"] is not None else "-",
                             r["steal"]))
        lines.append("")
        lines.append("Medians (ms) of every configuration (* oversubscribed), the plan's predicted time "
                     "of each candidate in brackets (ms), and the profile's work and span (ms):\n")
        grid0 = rows[0]["s"]["grid"]
        lines.append("| graph | " + " | ".join("%d x %d%s" % (g["pools"], g["intra"], star(g)) for g in grid0)
                     + " | plan | intel | TF | ungoverned | work | span |")
        lines.append("|---|" + "---|" * (len(grid0) + 6))
        for r in rows:
            s, bd = r["s"], r["bound"]
            cells = []
            for g in s["grid"]:
                k = (g["pools"], g["intra"])
                cells.append("%.3f" % g["median"] + (" (%.3f)" % r["pred"][k] if k in r["pred"] else ""))
            lines.append("| %s | " % r["name"] + " | ".join(cells) +
                         " | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |" % (
                             s["plan"]["median"], s["intel"]["median"], s["tf"]["median"],
                             s["default"]["median"], bd["work"], bd["span"]))
        lines.append("")
        for title, sel in (("all %d graphs" % len(rows), rows),
                           ("the %d generated graphs" % sum(1 for r in rows if not r["name"].endswith(".onnx")),
                            [r for r in rows if not r["name"].endswith(".onnx")]),
                           ("the %d model families" % sum(1 for r in rows if r["name"].endswith(".onnx")),
                            [r for r in rows if r["name"].endswith(".onnx")])):
            if sel:
                lines.append(summarise(title, sel, star)[0])
        _, (gmean, worst), (run_gmean, run_worst) = summarise("all", rows, star)
        # How far the plan's own runs were from its configuration's cell: two sets of processes
        # of one configuration, so the spread between processes here.
        twins = [ratios(r["s"]["plan"], plan_cell(r["s"]))[1] for r in rows]
        # Lost: slower than both by its cell's median or by its own runs'.
        lost = [r["name"] for r in rows
                if any(x["median"] > r["s"]["intel"]["median"] and x["median"] > r["s"]["tf"]["median"]
                       for x in (plan_cell(r["s"]), r["s"]["plan"]))]
        rhos = [r["rho"] for r in rows if r["rho"] is not None]
        # With stored measurements the plan is the measured best: only its worst case has a
        # target (<= 1.03), beside never losing to both one-line settings.
        worst_target = 1.03 if run == "measured" else 1.08
        ok = (run == "measured" or gmean <= 1.03) and worst <= worst_target and not lost
        run_ok = (run == "measured" or run_gmean <= 1.03) and run_worst <= worst_target and not lost
        sources = sorted(set(r["source"] for r in rows))
        verdict = ("**%s:** plan's cell/best geometric mean %.3f%s, worst %.3f (target <= %.2f); plan "
                   "median slower than both Intel's and TF's: %s; rank correlation predicted/measured: "
                   "median %s over %d graphs; plan sources: %s. Acceptance %s. By the plan's own runs: "
                   "geometric mean %.3f, worst %.3f, acceptance %s; those runs over the plan's cell: "
                   "%.2f to %.2f (median per graph).\n"
                   % (SHORT[run], gmean, "" if run == "measured" else " (target <= 1.03)", worst,
                      worst_target,
                      ", ".join(lost) if lost else "none", "%.2f" % statistics.median(rhos) if rhos else "-",
                      len(rows), ", ".join(sources), "holds" if ok else "does NOT hold",
                      run_gmean, run_worst, "holds" if run_ok else "does NOT hold", min(twins),
                      max(twins)))
        lines.append(verdict)
        verdicts.append(verdict)
    lines.append("## Summary\n")
    lines.extend(verdicts)
    lines.append("Per-graph CSVs and heatmaps: `%s/<run>/<graph>/sweep.csv`, `heatmap.svg` (not committed).\n"
                 % out)
    Path(a.doc).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
