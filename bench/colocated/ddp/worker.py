#!/usr/bin/env python3
"""bench/colocated/ddp/worker: one torchrun worker of a small DDP training job.

A torchvision model on synthetic data (a fixed seed per rank), gloo all-reduce,
--steps timed steps after one warm-up. Each rank writes its median step time,
torch's thread count and its threads' CPUs to DIR/rank-<rank>.json.
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist
import torchvision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--model", default="squeezenet1_1")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--size", type=int, default=112)
    ap.add_argument("--steps", type=int, default=5)
    a = ap.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(rank)
    model = torch.nn.parallel.DistributedDataParallel(
        getattr(torchvision.models, a.model)(num_classes=10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(a.batch, 3, a.size, a.size)
    y = torch.randint(0, 10, (a.batch,))
    times = []
    for step in range(a.steps + 1):
        t0 = time.perf_counter()
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        if step:  # the first step warms up
            times.append(time.perf_counter() - t0)
    cpus = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/status") as f:
                cpus[tid] = next(l.split()[1] for l in f if l.startswith("Cpus_allowed_list:"))
        except (OSError, StopIteration):
            pass
    with open(os.path.join(a.out, f"rank-{rank}.json"), "w") as f:
        json.dump({"rank": rank, "median_s": statistics.median(times),
                   "num_threads": torch.get_num_threads(),
                   "affinity": sorted(os.sched_getaffinity(0)), "tasks": cpus}, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
