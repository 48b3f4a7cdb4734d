"""tests/programs/plan_changes.py: a framework's program whose plan in force
changes while it runs (the Python counterpart of plan_changes.c): its node share
narrows (a neighbour joins; the test stops it) and widens again, then it
oversubscribes itself until parwidth's monitor changes the OpenMP cap. At the
end it prints, as one JSON line, what its framework itself says is in force.

    python plan_changes.py torch|ort|tf

stdout, one line each: "start <cpus>", "narrowed <cpus>" (for ORT once its session
was made again for the narrowed share), "widened <cpus>",
"capped", then the JSON; "timeout <phase>" and exit 3 if a phase waits 120 s.
Under parwidth only: the cap change is seen through parwidth's Python entry
(its plan generation)."""
import ctypes
import hashlib
import json
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def model(fw):
    """One step of fw's work, and a function that reads fw's own settings."""
    if fw == "torch":
        import torch

        x = torch.randn(128, 128)

        def step():
            with torch.no_grad():
                torch.tanh(x @ x).sum().item()

        return step, lambda: {"torch_threads": torch.get_num_threads(),
                              "torch_interop": torch.get_num_interop_threads()}
    if fw == "ort":
        import tempfile

        import numpy as np
        import onnxruntime as ort

        sys.path.insert(0, str(ROOT / "examples"))
        from infer_ort import filled

        tmp = tempfile.mkdtemp()
        path = filled(str(ROOT / "tests" / "fixtures" / "models" / "squeezenet1_0.onnx"),
                      str(Path(tmp) / "m.onnx"))
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        inp = sess.get_inputs()[0]
        shape = [1 if not isinstance(d, int) else d for d in inp.shape]
        x = np.zeros(shape, dtype=np.float32)

        def own():
            o = sess.get_session_options()
            return {"ort_intra": o.intra_op_num_threads, "ort_inter": o.inter_op_num_threads}

        return lambda: sess.run(None, {inp.name: x}), own
    import tensorflow as tf

    x = tf.random.uniform((128, 128))
    fn = tf.function(lambda t: tf.reduce_sum(tf.tanh(t @ t)))

    def compute_threads():
        n = 0
        for t in os.listdir("/proc/self/task"):
            try:
                n += Path(f"/proc/self/task/{t}/comm").read_text().strip() == "tf_Compute"
            except OSError:
                pass
        return {"tf_compute_threads": n}

    return lambda: fn(x).numpy(), compute_threads


def main():
    fw = sys.argv[1]
    step, own = model(fw)
    api = ctypes.CDLL(None).parwidth_python
    api.restype = ctypes.c_int

    def generation():
        return api(b"generation", None, None, 0, None, 0)

    def cpus():
        return len(os.sched_getaffinity(0))

    def until(phase, done):
        t0 = time.monotonic()
        while not done():
            step()
            if time.monotonic() - t0 > 120:
                print("timeout", phase, flush=True)
                os._exit(3)

    for _ in range(5):
        step()
    full = cpus()
    print("start", full, flush=True)
    start = own()
    until("narrowing", lambda: cpus() < full)
    if fw == "ort":
        # ORT sizes a session's pools once: parwidth makes it again, between two
        # runs, for the narrowed share (at most one rebuild a second).
        until("session rebuilt", lambda: own()["ort_intra"] < start["ort_intra"])
    print("narrowed", cpus(), flush=True)
    until("widening", lambda: cpus() >= full)
    print("widened", cpus(), flush=True)
    # Oversubscribed by its own threads: hashing a large buffer releases the GIL.
    before = generation()
    stop = threading.Event()
    blob = b"x" * (1 << 20)

    def busy():
        while not stop.is_set():
            hashlib.sha256(blob).digest()

    threads = [threading.Thread(target=busy, daemon=True) for _ in range(2 * full)]
    for t in threads:
        t.start()
    until("cap", lambda: generation() != before)
    stop.set()
    for t in threads:
        t.join()
    print("capped", flush=True)
    print(json.dumps(own()), flush=True)


if __name__ == "__main__":
    main()
