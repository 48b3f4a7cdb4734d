#!/usr/bin/env python3
"""bench/serving/server: one model server, as a user writes one.

FastAPI on uvicorn (one worker), a synchronous endpoint (FastAPI runs it on
its thread pool, the idiom for a blocking model call) that runs the model on
one fixed input per request. Runs in the framework's own environment:

  torch  torchvision SqueezeNet 1.0, random weights (seed 0), eval, no_grad
         (.venv/torch)
  ort    GoogLeNet (tests/fixtures/models/googlenet.onnx, weights filled by
         examples/infer_ort.py), onnxruntime.InferenceSession as a program
         makes it (.venv/ort)

A few warm-up inferences run before the port opens, as servers do.
--threads N sets the framework's threads by hand (torch.set_num_threads(N),
ORT intra_op_num_threads = N); without it the framework's defaults stand.
--no-spin turns ORT's allow_spinning off (torch's libgomp reads
OMP_WAIT_POLICY from the environment the server is started with).
GET /infer runs one inference, GET /health answers once the server listens.
SIGTERM stops it the way uvicorn stops (graceful shutdown, then exit).

    .venv/torch/bin/python bench/serving/server.py --framework torch --port 8001
"""
import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def torch_model(threads):
    import torch
    import torchvision

    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = torchvision.models.squeezenet1_0(num_classes=1000).eval()
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))

    def infer():
        with torch.no_grad():
            return int(model(x).argmax())

    return infer


def ort_model(threads, tmp, spinning):
    sys.path.insert(0, str(ROOT / "examples"))
    from infer_ort import fixture_session  # the fixture's weights, fixed random values

    sess, feed = fixture_session("googlenet", threads, 1, tmp, spinning)

    def infer():
        return int(sess.run(None, feed)[0].argmax())

    return infer


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--framework", required=True, choices=["torch", "ort"])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--threads", type=int, default=0, help="the framework's threads, by hand")
    ap.add_argument("--no-spin", action="store_true", help="ORT's allow_spinning off")
    ap.add_argument("--warmup", type=int, default=3)
    a = ap.parse_args()

    import uvicorn
    from fastapi import FastAPI

    with tempfile.TemporaryDirectory() as tmp:
        infer = torch_model(a.threads) if a.framework == "torch" else ort_model(a.threads, tmp, not a.no_spin)
        for _ in range(a.warmup):
            infer()
        app = FastAPI()

        @app.get("/infer")
        def serve():
            return {"top": infer(), "pid": os.getpid()}

        @app.get("/health")
        def health():
            return {"ok": True}

        uvicorn.run(app, host="127.0.0.1", port=a.port, workers=1, log_level="warning",
                    access_log=False)


if __name__ == "__main__":
    main()
