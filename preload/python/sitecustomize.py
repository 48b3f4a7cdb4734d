# parwidth's Python startup hook: libparwidth.so puts this directory first on
# PYTHONPATH in Python processes it governs (runtime/lifecycle.cpp); Python then
# runs this file at start-up, as tracing auto-instrumentation does.
#
# It (1) takes its directory out of PYTHONPATH and sys.path again, so the
# program sees its own environment; (2) runs the sitecustomize this file
# shadows, if there is one; (3) only if libparwidth.so is loaded in this
# process: before each import (and after each ctypes.CDLL), lets parwidth cap
# the BLAS libraries that earlier imports loaded, tells it when the program
# first calls torch.compile (compiled code guards torch's thread count), and
# wraps ONNX Runtime's InferenceSession creation so that the session gets the
# plan (hooks/README.md says why ORT needs Python-level code). Without libparwidth.so it does nothing else. Any failure here leaves
# the program as it would have been.


def _parwidth_start():
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))

    def same(p):
        try:
            return os.path.abspath(p) == here
        except Exception:
            return False

    # (1) PYTHONPATH and sys.path as the program had them.
    parts = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if parts and same(parts[0]):
        rest = os.pathsep.join(parts[1:])
        if rest:
            os.environ["PYTHONPATH"] = rest
        else:
            del os.environ["PYTHONPATH"]
    sys.path[:] = [p for p in sys.path if not same(p)]

    # (2) The sitecustomize we shadow (Debian ships one), run as itself.
    try:
        import importlib.util

        this = sys.modules.get(__name__)
        del sys.modules[__name__]
        try:
            spec = importlib.util.find_spec("sitecustomize")
        finally:
            sys.modules[__name__] = this
        if spec is not None and spec.origin and not same(os.path.dirname(spec.origin)):
            mod = importlib.util.module_from_spec(spec)
            sys.modules[__name__] = mod
            spec.loader.exec_module(mod)
    except Exception:
        pass

    # (3) Only with libparwidth.so in this process.
    try:
        import ctypes

        api = ctypes.CDLL(None).parwidth_python
    except Exception:
        return
    api.restype = ctypes.c_int
    api.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t,
                    ctypes.c_char_p, ctypes.c_size_t]

    def call(op, args="", data=None):
        reply = ctypes.create_string_buffer(256)
        buf = None
        if data is not None:
            buf = ctypes.create_string_buffer(bytes(data), len(data))
        size = len(data) if data is not None else 0
        rc = api(op.encode(), args.encode(), buf, size, reply, len(reply))
        return rc, reply.value.decode()

    if call("selected")[0] != 0:
        return  # not governed (nothing is activated by asking)

    def generation():
        """The plan's generation: the library's return value, no reply buffer."""
        return api(b"generation", None, None, 0, None, 0)

    # At exit (Python's atexit runs this last: it is registered first), the
    # runtimes' own counts while the frameworks are still alive: torch's, and
    # each ONNX Runtime session's options as ORT holds them. The library reads
    # the OpenMP runtimes and BLAS pools at the same moment; the report's
    # in_force lists them all.
    import atexit
    import weakref

    # Each ONNX Runtime session's options as ORT holds them, read when it is made
    # (and made again); read again at exit while the session still exists.
    sessions = []  # [weakref to the session, its last options read]

    def in_force():
        lines = []
        torch = sys.modules.get("torch")
        if torch is not None:
            for setting, get in (("intra-op threads (torch.get_num_threads)",
                                  "get_num_threads"),
                                 ("inter-op threads (torch.get_num_interop_threads)",
                                  "get_num_interop_threads")):
                try:
                    lines.append("torch\ttorch %s\t%s\t%d" % (
                        torch.__version__, setting, getattr(torch, get)()))
                except Exception:
                    pass
        for i, (ref, last) in enumerate(sessions):
            sess = ref()
            if sess is not None:
                try:
                    last = session_options(sess)
                except Exception:
                    pass
            for name, value in last.items():
                lines.append("onnxruntime\tsession %d%s\t%s\t%d" % (
                    i, "" if sess is not None else " (ended; as last made)", name, value))
        try:
            call("in_force", "\n".join(lines))
        except Exception:
            pass

    atexit.register(in_force)

    def session_options(sess):
        o = sess._sess.session_options
        return {"intra_op_num_threads": o.intra_op_num_threads,
                "inter_op_num_threads": o.inter_op_num_threads}

    def session_made(sess):
        try:
            options = session_options(sess)
        except Exception:
            return
        for entry in sessions:
            if entry[0]() is sess:
                entry[1] = options
                return
        if len(sessions) < 64:
            sessions.append([weakref.ref(sess), options])

    # The interpreter's exit begins (before it joins the program's threads and
    # tears its modules down): from now on nothing this process runs is work
    # that needs a share of the node. threading's own exit hooks run first in
    # finalisation; atexit's where that private hook is missing.
    def exiting():
        try:
            api(b"exiting", None, None, 0, None, 0)
        except Exception:
            pass

    try:
        import threading

        threading._register_atexit(exiting)
    except Exception:
        try:
            import atexit

            atexit.register(exiting)
        except Exception:
            pass

    state = {"busy": False}
    ort_module = "onnxruntime.capi.onnxruntime_inference_collection"

    # Runs before every import: the library call alone (no reply buffer), as
    # the library returns at once when the loader added no object since its
    # last sweep (bench/preload_cost/python_imports.py measures it).
    def sweep(why, op=b"sweep"):
        if state["busy"]:
            return
        state["busy"] = True
        try:
            api(op, why.encode(), None, 0, None, 0)
        except Exception:
            pass
        finally:
            state["busy"] = False

    # The modules whose loader is wrapped: what runs once each has run.
    wrap_after = {ort_module: lambda m: _wrap_ort(m, call, generation, session_made),
                  "torch._dynamo": lambda m: _wrap_dynamo(m, sweep)}

    import importlib.abc

    class _BeforeImport(importlib.abc.MetaPathFinder):
        """Sweeps what earlier imports loaded, then lets the usual finders
        find the module (its loader untouched), except ORT's session module,
        whose loader also wraps InferenceSession once the module ran, and
        torch._dynamo, whose optimize (torch.compile's way in) it wraps."""

        def find_spec(self, fullname, path=None, target=None):
            if state["busy"]:
                return None
            sweep("before import " + fullname)
            after = wrap_after.get(fullname)
            if after is None:
                return None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                try:
                    spec = finder.find_spec(fullname, path, target)
                except Exception:
                    return None
                if spec is None:
                    continue
                loader = spec.loader
                if loader is None or not hasattr(loader, "exec_module"):
                    return spec
                original = loader.exec_module

                def exec_module(module, original=original, after=after):
                    original(module)
                    try:
                        after(module)
                    except Exception:
                        pass

                loader.exec_module = exec_module
                return spec
            return None

    sys.meta_path.insert(0, _BeforeImport())

    # A library loaded with ctypes.CDLL (MKL, BLIS by hand) is swept right after.
    try:
        init = ctypes.CDLL.__init__

        def _cdll_init(self, *a, **k):
            init(self, *a, **k)
            sweep("after ctypes.CDLL(%r)" % (a[0] if a else k.get("name"),))

        ctypes.CDLL.__init__ = _cdll_init
    except Exception:
        pass


def _wrap_dynamo(module, sweep):
    """torch.compile (and nn.Module.compile) compile through
    torch._dynamo.optimize: the first call tells parwidth that compiled code
    will guard torch's thread count, before any function is traced.
    Importing torch._dynamo is not enough (transformers imports it, and
    torch._inductor, without compiling anything)."""
    import functools

    original = getattr(module, "optimize", None)
    if not callable(original) or getattr(original, "_parwidth", False):
        return
    told = []

    @functools.wraps(original)
    def optimize(*a, **k):
        if not told:
            told.append(True)
            sweep("torch.compile", op=b"torch_compile")
        return original(*a, **k)

    optimize._parwidth = True
    module.optimize = optimize


def _wrap_ort(module, call, generation, session_made):
    """InferenceSession gets the plan: the options are set on the program's
    SessionOptions for the creation only (ORT copies them into the session)
    and put back afterwards. When the plan changes later (the node's division),
    the session is made again between two runs with the pools the plan in force
    gives it, the way ORT's own set_providers makes it again (the library
    decides when: governor/pool_rebuild.h)."""
    import os
    import threading
    import time
    import weakref

    cls = getattr(module, "InferenceSession", None)
    C = getattr(module, "C", None)
    if cls is None or C is None or getattr(cls, "_parwidth_wrapped", False):
        return
    original = cls._create_inference_session
    spin_keys = ("session.intra_op.allow_spinning", "session.inter_op.allow_spinning")
    keys = ("intra", "inter", "parallel", "spin")

    def threads():
        try:
            return len(os.listdir("/proc/self/task"))
        except OSError:
            return -1

    def create(self, *a, **k):
        opts = getattr(self, "_sess_options", None)
        created = opts is None
        try:
            if created:
                opts = C.SessionOptions()
            spin = -1
            try:
                spin = int(opts.get_session_config_entry(spin_keys[0]))
            except Exception:
                spin = -1
            parallel = opts.execution_mode == C.ExecutionMode.ORT_PARALLEL
            args = "intra=%d inter=%d parallel=%d spin=%d" % (
                opts.intra_op_num_threads, opts.inter_op_num_threads, int(parallel), spin)
            st = getattr(self, "_parwidth", None)
            if st is not None and st.get("forced") is not None:
                want = st["forced"]  # made again for the plan in force (check below)
            else:
                if getattr(self, "_model_path", None):
                    model = os.fsencode(self._model_path)
                    rc, reply = call("ort_session", args + " path=1", model)
                else:
                    rc, reply = call("ort_session", args + " path=0", self._model_bytes or b"")
                want = dict(kv.split("=") for kv in reply.split()) if rc == 0 and reply else {}
                want = {k: int(v) for k, v in want.items() if k in keys}
                now = time.monotonic()
                st = {"user": args, "a": a, "k": k, "lock": threading.Lock(), "bound": False,
                      "forced": None, "mu": threading.Lock(), "inflight": 0, "idle_since": now,
                      "paused": 0.0, "seen": None, "plan_t": now, "pending": False,
                      "rebuilds": 0}
            st["made"], st["gen"], st["t"] = want, generation(), time.monotonic()
            self._parwidth = st
        except Exception:
            return original(self, *a, **k)
        saved = (opts.intra_op_num_threads, opts.inter_op_num_threads, opts.execution_mode)
        if not any(v >= 0 for v in want.values()):
            return original(self, *a, **k)
        try:
            if want.get("intra", -1) >= 0:
                opts.intra_op_num_threads = want["intra"]
            if want.get("inter", -1) >= 0:
                opts.inter_op_num_threads = want["inter"]
            if want.get("parallel", -1) == 1:
                opts.execution_mode = C.ExecutionMode.ORT_PARALLEL
            if want.get("spin", -1) == 0:
                for key in spin_keys:
                    opts.add_session_config_entry(key, "0")
            if created:
                self._sess_options = opts
        except Exception:
            return original(self, *a, **k)
        before = threads()
        try:
            return original(self, *a, **k)
        finally:
            session_made(self)
            try:
                used = self._sess.session_options if getattr(self, "_sess", None) else None
                if used is not None:
                    call("ort_used", "intra_op_num_threads=%d inter_op_num_threads=%d "
                         "execution_mode=%s threads_started=%d" % (
                             used.intra_op_num_threads, used.inter_op_num_threads,
                             str(used.execution_mode).split(".")[-1], threads() - before))
            except Exception:
                pass
            # The program's own SessionOptions object, as it was.
            try:
                if not created:
                    opts.intra_op_num_threads, opts.inter_op_num_threads = saved[0], saved[1]
                    opts.execution_mode = saved[2]
                    if want.get("spin", -1) == 0:
                        for key in spin_keys:
                            opts.add_session_config_entry(key, "1" if spin != 0 else "0")
            except Exception:
                pass

    def rebuild(self, st, want):
        old = self._sess
        st["forced"] = want
        try:
            self._sess_options = getattr(self, "_sess_options_initial", None)
            create(self, *st["a"], **st["k"])
            st["rebuilds"] += 1
        except Exception:
            self._sess = old  # the session the program had, as it was
            try:
                self._sess_options = old.session_options
            except Exception:
                pass
        finally:
            st["forced"] = None

    def ask(st, gen, at_call, inflight, paused):
        """The library's verdict on the session for the plan of generation
        `gen` (governor/pool_rebuild.h decides), and the options it wants."""
        now = time.monotonic()
        if gen != st["seen"]:  # the first look at this plan
            st["seen"], st["plan_t"], st["paused"] = gen, now, 0.0
        made = st["made"]
        rc, reply = call("ort_replan", "%s %s since_ms=%d plan_ms=%d bound=%d at_call=%d "
                         "inflight=%d paused_ms=%d rebuilds=%d" % (
                             st["user"], " ".join("made_%s=%d" % (k, made.get(k, -1))
                                                  for k in keys),
                             int((now - st["t"]) * 1000), int((now - st["plan_t"]) * 1000),
                             int(st["bound"]), int(at_call), inflight, int(paused * 1000),
                             st["rebuilds"]))
        kv = dict(x.split("=") for x in reply.split()) if rc == 0 and reply else {}
        return kv.pop("verdict", "same"), {k: int(v) for k, v in kv.items() if k in keys}

    def settle(self, st, gen, verdict, want):
        """Acts on a verdict; True when nothing is left to do for this plan."""
        if verdict in ("hold", "defer"):
            st["pending"] = True
            return False
        st["pending"] = False
        st["gen"] = gen
        if verdict == "rebuild":
            rebuild(self, st, want)
        return True

    # One thread for every session of the process, started at the first run:
    # every 50 ms, a session whose plan changed (or whose rebuild is due) and
    # that has no run in flight is asked about from here, so that a rebuild
    # is made between runs, also when the plan changed while nothing called
    # it; runs that start meanwhile use the session as it was.
    watched = {"sessions": [], "thread": None, "lock": threading.Lock()}

    def watch_loop():
        while True:
            time.sleep(0.05)
            with watched["lock"]:
                live = [(r, st) for r, st in watched["sessions"] if r() is not None]
                watched["sessions"][:] = live
            for r, st in live:
                sess = r()
                if sess is None or st.get("forced") is not None:
                    continue
                try:
                    gen = generation()
                    if (gen == st["gen"] and not st["pending"]) or \
                            not st["lock"].acquire(blocking=False):
                        continue
                except Exception:
                    return
                try:
                    with st["mu"]:
                        inflight = st["inflight"]
                        pause = time.monotonic() - st["idle_since"]
                    if inflight == 0:
                        verdict, want = ask(st, gen, False, 0, pause)
                        settle(sess, st, gen, verdict, want)
                except Exception:
                    pass
                finally:
                    st["lock"].release()
                    sess = None

    def watch(self, st):
        with watched["lock"]:
            watched["sessions"].append((weakref.ref(self), st))
            t = watched["thread"]
            if t is None or not t.is_alive():
                try:
                    t = threading.Thread(target=watch_loop, name="parwidth-ort-rebuild",
                                         daemon=True)
                    t.start()
                    watched["thread"] = t
                except Exception:
                    pass

    def check(self):
        """At each run: if the plan changed since the session was made, ask
        whether it is made again (one library call when nothing changed)."""
        st = getattr(self, "_parwidth", None)
        if st is None or st.get("forced") is not None:
            return
        if not st.get("watched"):
            st["watched"] = True  # from its first run on (its creation starts no thread)
            watch(self, st)
        try:
            gen = generation()
            if (gen == st["gen"] and not st["pending"]) or not st["lock"].acquire(blocking=False):
                return
        except Exception:
            return
        try:
            with st["mu"]:
                inflight = st["inflight"]
                paused = st["paused"] if gen == st["seen"] else 0.0
                if inflight == 0:
                    paused = max(paused, time.monotonic() - st["idle_since"])
            verdict, want = ask(st, gen, True, inflight, paused)
            settle(self, st, gen, verdict, want)
        except Exception:
            pass
        finally:
            st["lock"].release()

    def begin(st):
        with st["mu"]:
            if st["inflight"] == 0:
                st["paused"] = max(st["paused"], time.monotonic() - st["idle_since"])
            st["inflight"] += 1

    def end(st):
        with st["mu"]:
            st["inflight"] -= 1
            if st["inflight"] == 0:
                st["idle_since"] = time.monotonic()

    def checked(name):
        method = getattr(cls, name, None)
        if method is None:
            return

        def run(self, *a, **k):
            check(self)
            st = getattr(self, "_parwidth", None)
            if st is None or "mu" not in st:
                return method(self, *a, **k)
            begin(st)
            try:
                return method(self, *a, **k)
            finally:
                end(st)

        run.__name__, run.__doc__ = method.__name__, method.__doc__
        setattr(cls, name, run)

    for name in ("run", "run_with_ort_values", "run_async", "run_with_iobinding",
                 "run_with_ortvaluevector"):
        checked(name)

    # An IOBinding holds the session it came from: such a session is never
    # made again (the report says so).
    io_binding = getattr(cls, "io_binding", None)
    if io_binding is not None:
        def bound(self, *a, **k):
            st = getattr(self, "_parwidth", None)
            if st is not None:
                st["bound"] = True
            return io_binding(self, *a, **k)

        bound.__name__, bound.__doc__ = io_binding.__name__, io_binding.__doc__
        cls.io_binding = bound

    cls._create_inference_session = create
    cls._parwidth_wrapped = True


try:
    _parwidth_start()
except Exception:
    pass
del _parwidth_start
