#!/usr/bin/env python3
"""bench/realworld's workloads: real libraries on synthetic data, one per run.

    python bench/realworld/workloads.py NAME [--json OUT] [--threads N]
                                             [--n-jobs N] [--barrier DIR --peers N]

Each workload builds its model and data from fixed seeds (no download:
transformers' BertModel from a BertConfig, HF_HUB_OFFLINE=1), runs one
warm-up where that is how the library is used, then times its work phase
(imports and model construction are not timed) and prints, or writes to
--json, one JSON object: seconds, result (the numbers bench/realworld/run
compares across configurations), the thread counts each library reported,
and the process's threads by name at the end of the work.

--threads N calls torch.set_num_threads(N) after the import (an expert's
one line); --n-jobs N is the scikit-learn grid search's n_jobs. With
--barrier DIR --peers N the work starts only once N processes have reached
it (the co-located pair starts its timed work together).
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def thread_names():
    """Threads of this process by name (/proc/self/task/*/comm): name -> count."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            name = Path(f"/proc/self/task/{tid}/comm").read_text().strip()
        except OSError:
            continue
        out[name] = out.get(name, 0) + 1
    return out


def torch_view():
    import torch
    return {"torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "torch_interop": torch.get_num_interop_threads()}


def blas_view():
    """What threadpoolctl sees: each loaded BLAS / OpenMP runtime and its count."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    return [{"api": i.get("internal_api"), "prefix": i.get("prefix"),
             "threads": i.get("num_threads"), "file": os.path.basename(i.get("filepath", ""))}
            for i in threadpool_info()]


# ------------------------------------------------------------------- workloads
# Each returns (setup, work): setup() builds everything untimed and returns
# state; work(state) is timed and returns the result dict.


def bert(a):
    """transformers' BERT-base (random weights), inference, batch 4 x 128 tokens."""
    import torch
    from transformers import BertConfig, BertModel

    def setup():
        torch.manual_seed(0)
        cfg = BertConfig()  # bert-base-uncased's shape: 12 layers, 768 wide, 12 heads
        model = BertModel(cfg).eval()
        g = torch.Generator().manual_seed(1)
        ids = torch.randint(0, cfg.vocab_size, (4, 128), generator=g)
        mask = torch.ones_like(ids)
        with torch.inference_mode():
            model(input_ids=ids, attention_mask=mask)  # warm-up: allocator, pools
        return model, ids, mask

    def work(state):
        model, ids, mask = state
        sums = []
        with torch.inference_mode():
            for _ in range(a.steps or 5):
                h = model(input_ids=ids, attention_mask=mask).last_hidden_state.double()
                # LayerNorm's outputs sum to about 0: sums of magnitudes do not cancel.
                sums.append([float(h.abs().sum()), float(h.square().sum())])
        return {"sums": sums}
    return setup, work


def turns(a, libs=("xgboost", "lightgbm", "torch")):
    """XGBoost training, LightGBM training and a torch MLP's training steps,
    taking turns in one process (a tabular model search in one notebook that
    imports torch first), four times (twice made a 2.7 s work phase whose
    medians moved by 5% from run to run)."""
    import numpy as np
    import torch
    import lightgbm
    if "xgboost" in libs:
        import xgboost

    def setup():
        rng = np.random.default_rng(0)
        x = rng.standard_normal((20000, 40)).astype(np.float32)
        w = rng.standard_normal(40).astype(np.float32)
        y = (x @ w + 0.5 * np.sin(3 * x[:, 0]) + 0.1 * rng.standard_normal(20000) > 0)
        y = y.astype(np.float32)
        torch.manual_seed(0)
        mlp = torch.nn.Sequential(torch.nn.Linear(40, 512), torch.nn.ReLU(),
                                  torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                  torch.nn.Linear(512, 1))
        return x, y, mlp

    def work(state):
        x, y, mlp = state
        out = {"lgb": [], "mlp": []}
        opt = torch.optim.SGD(mlp.parameters(), lr=0.05)
        xt, yt = torch.from_numpy(x), torch.from_numpy(y)[:, None]
        for _ in range(a.steps or 4):
            if "xgboost" in libs:
                booster = xgboost.train({"tree_method": "hist", "max_depth": 6, "eta": 0.1,
                                         "objective": "binary:logistic", "seed": 0},
                                        xgboost.DMatrix(x, label=y), num_boost_round=40)
                p = booster.predict(xgboost.DMatrix(x)).astype(np.float64)
                out.setdefault("xgb", []).append(float(p.sum()))
            gbm = lightgbm.train({"objective": "binary", "num_leaves": 63, "learning_rate": 0.1,
                                  "verbose": -1, "seed": 0},
                                 lightgbm.Dataset(x, label=y), num_boost_round=40)
            out["lgb"].append(float(gbm.predict(x).astype(np.float64).sum()))
            for i in range(0, 20000, 500):
                opt.zero_grad()
                loss = torch.nn.functional.binary_cross_entropy_with_logits(
                    mlp(xt[i:i + 500]), yt[i:i + 500])
                loss.backward()
                opt.step()
            out["mlp"].append(loss.item())
        return out
    return setup, work


def lgb_mlp(a):
    """LightGBM training and a torch MLP's training steps taking turns (the
    turns workload without XGBoost)."""
    return turns(a, libs=("lightgbm", "torch"))


def gridsearch(a):
    """scikit-learn GridSearchCV with n_jobs=-1 (loky worker processes) over a
    HistGradientBoostingClassifier (OpenMP inside each fit), 150 iterations a
    fit: at 60 the 4 s search was mostly its two workers' start-up (imports),
    which n_jobs=1 skips and no thread setting changes; a search this short is
    nobody's reason for n_jobs."""
    import numpy as np
    from sklearn.datasets import make_classification
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import GridSearchCV

    def setup():
        return make_classification(n_samples=12000, n_features=40, n_informative=20,
                                   random_state=0)

    def work(state):
        x, y = state
        search = GridSearchCV(
            HistGradientBoostingClassifier(max_iter=150, early_stopping=False, random_state=0),
            {"learning_rate": [0.05, 0.1, 0.2], "max_leaf_nodes": [15, 31]}, cv=3,
            n_jobs=a.n_jobs)
        search.fit(x, y)
        return {"best": search.best_params_,
                "scores": [float(s) for s in np.asarray(search.cv_results_["mean_test_score"])]}
    return setup, work


class Images:
    """Images and labels from a fixed seed per index, with a crop and a flip
    done in the worker (the same data in any worker, any order of workers)."""

    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import torch
        g = torch.Generator().manual_seed(1000 + i)
        img = torch.randn(3, self.size + 8, self.size + 8, generator=g)
        dx, dy = (int(v) for v in torch.randint(0, 9, (2,), generator=g))
        img = img[:, dy:dy + self.size, dx:dx + self.size]
        if int(torch.randint(0, 2, (1,), generator=g)):
            img = img.flip(2)
        img = (img - img.mean()) / (img.std() + 1e-6)
        return img, int(torch.randint(0, 10, (1,), generator=g))


def dataloader(a):
    """torchvision ResNet-18 training on 64x64 images from a DataLoader with 2
    worker processes: three epochs of 8 steps, each from the same initial
    weights (so that the timed phase is long enough to measure and each
    epoch's losses can be compared with another run's at the stated
    tolerance; training on from one epoch to the next lets float rounding
    grow: 5e-2 apart after 24 steps at 1 against 2 threads)."""
    import copy
    import torch
    import torchvision

    def setup():
        torch.manual_seed(0)
        model = torchvision.models.resnet18(num_classes=10)
        loader = torch.utils.data.DataLoader(Images(32 * (a.steps or 8), 64), batch_size=32,
                                             num_workers=2, shuffle=False)
        return model, copy.deepcopy(model.state_dict()), loader

    def work(state):
        model, initial, loader = state
        losses = []
        model.train()
        for _ in range(3):  # each epoch starts its two worker processes again
            model.load_state_dict(initial)
            opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            for x, y in loader:
                opt.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                losses.append(loss.item())
        return {"losses": losses}
    return setup, work


def preproc(a):
    """numpy preprocessing (normalise, a whitening product on numpy's BLAS)
    then torch inference (torchvision ResNet-18), batch after batch."""
    import numpy as np
    import torch
    import torchvision

    def setup():
        rng = np.random.default_rng(0)
        raw = rng.integers(0, 256, (a.steps or 48, 8, 3, 96, 96), dtype=np.uint8)
        q, _ = np.linalg.qr(rng.standard_normal((288, 288)))
        torch.manual_seed(0)
        model = torchvision.models.resnet18().eval()
        with torch.inference_mode():
            model(torch.zeros(8, 3, 96, 96))
        return raw, q, model

    def work(state):
        raw, q, model = state
        sums = []
        for batch in raw:
            x = batch.astype(np.float64) / 255.0
            x = (x - x.mean(axis=(0, 2, 3), keepdims=True)) / x.std(axis=(0, 2, 3), keepdims=True)
            x = (x.transpose(0, 2, 1, 3).reshape(8 * 96, 288) @ q).reshape(8, 96, 3, 96)
            x = np.ascontiguousarray(x.transpose(0, 2, 1, 3), dtype=np.float32)
            with torch.inference_mode():
                y = model(torch.from_numpy(x))
            sums.append(float(y.double().sum()))
        return {"sums": sums}
    return setup, work


WORKLOADS = {"bert": bert, "turns": turns, "lgb_mlp": lgb_mlp, "gridsearch": gridsearch,
             "dataloader": dataloader, "preproc": preproc}


def barrier(path, peers):
    """Waits until `peers` processes have each created a file in path."""
    d = Path(path)
    d.mkdir(parents=True, exist_ok=True)
    (d / str(os.getpid())).touch()
    while len(list(d.iterdir())) < peers:
        time.sleep(0.005)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("name", choices=sorted(WORKLOADS))
    ap.add_argument("--json", help="write the result here instead of stdout")
    ap.add_argument("--threads", type=int, help="torch.set_num_threads(N) after the import")
    ap.add_argument("--n-jobs", type=int, default=-1, help="the grid search's n_jobs")
    ap.add_argument("--steps", type=int, default=0, help="work size (0: the workload's own)")
    ap.add_argument("--barrier", help="start the timed work with --peers processes")
    ap.add_argument("--peers", type=int, default=1)
    a = ap.parse_args()
    setup, work = WORKLOADS[a.name](a)
    if a.threads:
        import torch
        torch.set_num_threads(a.threads)
    state = setup()
    if a.barrier:
        barrier(a.barrier, a.peers)
    t0 = time.monotonic()  # CLOCK_MONOTONIC: bench/realworld/sample keeps its samples in [t0, t1]
    t = time.perf_counter()
    result = work(state)
    seconds = time.perf_counter() - t
    out = {"workload": a.name, "seconds": seconds, "t0": t0, "t1": time.monotonic(),
           "result": result,
           "threads": thread_names(), "blas": blas_view(), "pid": os.getpid()}
    if "torch" in sys.modules:
        out.update(torch_view())
    text = json.dumps(out)
    if a.json:
        Path(a.json).write_text(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
