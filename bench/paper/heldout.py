#!/usr/bin/env python3
"""bench/paper/heldout: the plan on shapes that bench/paper/run.py does not run (other image
sizes and batches of the model families), with an empty cache (the built-in model) and with
this budget's calibration (calibrated here, once, into a new folder). One `parwidth sweep`
per case; prints, per case, the plan, the grid's best, the plan's cell over the best and
the plan's own runs over the best (median over the rounds), Intel's and TF's over the best,
and every grid cell's median.

    python3 bench/paper/heldout.py [--build build] [--repeat 3] [--out /tmp/parwidth-heldout]
                                   [--only "case,case"]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
METRIC = r"time per iteration: ([0-9.]+) ms"
# name: (model, engine args, PARWIDTH_INPUT_SHAPES)
CASES = {
    "googlenet 224": ("googlenet", ["--iterations", "3", "--batch", "1", "--image-size", "224"], "input=1x3x224x224"),
    "mobilenet_v2 224": ("mobilenet_v2", ["--iterations", "3", "--batch", "1", "--image-size", "224"],
                         "input=1x3x224x224"),
    "resnet50 64": ("resnet50", ["--iterations", "5", "--batch", "1", "--image-size", "64"], "input=1x3x64x64"),
    "squeezenet1_0 batch 4": ("squeezenet1_0", ["--iterations", "3", "--batch", "4", "--image-size", "112"],
                              "input=4x3x112x112"),
    "densenet121 64": ("densenet121", ["--iterations", "5", "--batch", "1", "--image-size", "64"], "input=1x3x64x64"),
    "wide_deep batch 64": ("wide_deep", ["--iterations", "20", "--batch", "64"], ""),
    "transformer_encoder batch 8": ("transformer_encoder", ["--iterations", "10", "--batch", "8"], ""),
    "shufflenet_v2_x1_0 batch 8": ("shufflenet_v2_x1_0", ["--iterations", "3", "--batch", "8"], ""),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default="/tmp/parwidth-heldout")
    ap.add_argument("--only", default="", help="comma-separated case names (default: all)")
    a = ap.parse_args()
    cases = {k: v for k, v in CASES.items() if not a.only or k in a.only.split(",")}
    if not cases:
        sys.exit("bench/paper/heldout: --only matches no case (cases: %s)" % ", ".join(CASES))
    build = Path(a.build) if Path(a.build).is_absolute() else ROOT / a.build
    pw, engine = build / "bin" / "parwidth", build / "bin" / "parwidth-engine"
    out = Path(a.out)
    if out.exists():
        shutil.rmtree(out)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PARWIDTH_", "OMP_", "KMP_"))}
    base.pop("LD_PRELOAD", None)
    for run in ("builtin", "calibrated"):
        cache = out / ("cache-" + run)
        cache.mkdir(parents=True, mode=0o700)
        env = dict(base, XDG_CACHE_HOME=str(cache))
        if run == "calibrated":
            subprocess.run([str(pw), "calibrate"], check=True, env=env, capture_output=True)
        for name, (model, args, shapes) in cases.items():
            genv = dict(env, PARWIDTH_INPUT_SHAPES=shapes) if shapes else env
            d = out / run / name.replace(" ", "_")
            d.parent.mkdir(parents=True, exist_ok=True)
            cmd = [str(pw), "sweep", "--repeat", str(a.repeat), "--json", "--metric", METRIC, "--out", str(d),
                   "--", str(engine), str(ROOT / "tests/fixtures/models" / (model + ".onnx")), *args]
            p = subprocess.run(cmd, capture_output=True, text=True, env=genv)
            if p.returncode != 0:
                sys.exit("bench/paper/heldout: sweep failed for %s:\n%s" % (name, p.stderr))
            s = json.loads(p.stdout)
            b = s["best"]
            cell = next((g for g in s["grid"]
                         if (g["pools"], g["intra"]) == (s["plan"]["pools"], s["plan"]["intra"])), s["plan"])

            def over_best(x):
                return statistics.median([u / v for u, v in zip(x["runs"], b["runs"])])
            source = json.loads((d / "plan-report.json").read_text())["plan"]["source"]
            print("%-10s %-28s plan %d x %d (%s), best %d x %d %.3f ms; plan's cell/best %.3f, plan run/best "
                  "%.3f, intel/best %.3f, TF/best %.3f | %s" % (
                      run, name, s["plan"]["pools"], s["plan"]["intra"], source, b["pools"], b["intra"],
                      b["median"], over_best(cell), over_best(s["plan"]), over_best(s["intel"]),
                      over_best(s["tf"]),
                      " ".join("%dx%d %.3f" % (g["pools"], g["intra"], g["median"]) for g in s["grid"])),
                  flush=True)


if __name__ == "__main__":
    main()
