"""The side-by-side benchmark suite: poptorch vs eager PyTorch, torch.compile (Inductor),
ONNX Runtime and OpenVINO.

The models (``models.py``) are public architectures at full size: Hugging Face
``transformers`` classes built from their configs, ``torch.nn.TransformerEncoder`` and an
MLP. OpenVINO runs at f32 (``openvino``) and, on hosts where its CPU plugin defaults to
another precision (bf16 with AMX or AVX512-BF16), at that default (``openvino_default``).

``--dtype bfloat16`` runs the models converted with ``model.bfloat16()`` (bf16 inputs too):
eager, poptorch and any other torch backend run the bf16 model, and the ratios are against
eager bf16; OpenVINO (``openvino_bf16``) runs the f32 model with its bf16 precision hint,
its own reduced-precision mode.

For every model and batch size it measures, in this one process tree:

* compile cost per backend, each in a fresh subprocess (``--probe``): trace time,
  cold compile (empty caches), warm compile (the caches the cold run filled), and the peak
  resident memory the compile added;
* steady-state latency: every backend compiled in this process, then called in turn
  (interleaved, so all see the same machine state) after warm-up; median and spread;
* throughput (samples/s) and the max abs error against eager.

Results go to a JSON file and a PNG plot of the latency ratios (eager / backend: above 1 is
faster than eager).  ``make bench`` runs it with the default settings.

    python benchmarks/suite.py [--models mlp,bert] [--batches 1,8] [--repeats 20] [--quick]
                               [--backends eager,poptorch,inductor,onnxruntime,openvino]
                               [--dtype float32|bfloat16]
                               [--json results.json] [--plot ratios.png]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import MODELS, QUICK  # noqa: E402

import poptorch  # noqa: E402

THREADS = 2
BACKENDS = ("eager", "poptorch", "inductor", "onnxruntime", "openvino", "openvino_default")
BF16_BACKENDS = ("eager", "poptorch", "openvino_bf16")


class PeakRss:
    """The peak resident memory above the starting point while the block runs (sampled)."""

    def __enter__(self) -> PeakRss:
        self.start = self.peak = self._rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss_mb())

    @property
    def added_mb(self) -> float:
        return self.peak - self.start

    def _poll(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, self._rss_mb())

    @staticmethod
    def _rss_mb() -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def _build(name: str, batch: int, quick: bool,
           dtype: torch.dtype = torch.float32) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model, make_input = (QUICK if quick else MODELS)[name]()
    return _to(model.eval(), dtype), _to(make_input(batch), dtype)


def _to(x: Any, dtype: torch.dtype) -> Any:
    """`x` (a model or a tuple of inputs) with its floating-point tensors in `dtype`."""
    if isinstance(x, torch.nn.Module):
        return x.to(dtype)
    return tuple(t.to(dtype) if t.is_floating_point() else t for t in x)


# ------------------------------------------------------------------ backends
def compile_poptorch(model: torch.nn.Module, inputs: tuple, cache: str | None) -> tuple[Callable, dict]:
    opts = poptorch.Options()
    if cache:
        opts.enableExecutableCaching(cache)
    compiled = poptorch.inferenceModel(model, opts)
    start = time.perf_counter()
    compiled.compile(*inputs)  # trace + compile (or load from the cache)
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    poptorch.trace(model, *inputs)  # the capture alone, once the process is warm
    return compiled, {"trace_s": time.perf_counter() - start, "compile_s": compile_s}


def compile_inductor(model: torch.nn.Module, inputs: tuple, cache: str | None) -> tuple[Callable, dict]:
    if cache:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    torch._dynamo.reset()
    compiled = torch.compile(model)
    start = time.perf_counter()
    with torch.inference_mode():
        compiled(*inputs)  # torch.compile compiles on the first call
    return compiled, {"trace_s": float("nan"), "compile_s": time.perf_counter() - start}


def compile_onnxruntime(model: torch.nn.Module, inputs: tuple, cache: str | None) -> tuple[Callable, dict]:
    import onnxruntime as ort

    folder = cache or tempfile.mkdtemp(prefix="poptorch-bench-onnx-")
    path = os.path.join(folder, "model.onnx")
    start = time.perf_counter()
    if not os.path.exists(path):
        # nn.TransformerEncoder's inference fast path is one fused op
        # (aten::_transformer_encoder_layer_fwd) that the exporter cannot
        # express; without it the same layers export as their ops.
        fastpath = torch.backends.mha.get_fastpath_enabled()
        torch.backends.mha.set_fastpath_enabled(False)
        try:
            with torch.no_grad(), contextlib.redirect_stdout(sys.stderr):
                torch.onnx.export(model, inputs, path, dynamo=False,
                                  input_names=[f"in{i}" for i in range(len(inputs))])
        finally:
            torch.backends.mha.set_fastpath_enabled(fastpath)
    export_s = time.perf_counter() - start
    so = ort.SessionOptions()
    so.intra_op_num_threads = THREADS
    so.inter_op_num_threads = 1
    # ONNX Runtime's own pool spins after each run. Interleaved with the
    # other backends, whose threads are torch's, its spinning threads held
    # both cores during the next backend's call (ResNet-18 b1: eager 26.5 ->
    # 55.4 ms, poptorch 28.9 -> 36.0 ms, ONNX Runtime itself unaffected): the
    # ratios against eager measured that, not the backends. Without spinning
    # its threads block when idle (ResNet-18 b1 23.3 -> 21.7 ms).
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feeds = {f"in{i}": x.numpy() for i, x in enumerate(inputs)}

    def run(*_: Any) -> torch.Tensor:
        return torch.from_numpy(session.run(None, feeds)[0])

    return run, {"trace_s": export_s, "compile_s": time.perf_counter() - start - export_s}


def _openvino(precision: str | None) -> Callable[[torch.nn.Module, tuple, str | None],
                                                 tuple[Callable, dict]]:
    """OpenVINO's CPU plugin at 2 threads, one stream, latency mode. ``precision`` is its
    inference precision hint ("f32"), or None for the plugin's default on this host (bf16
    where the CPU has AMX or AVX512-BF16 and OpenVINO uses it, else f32)."""

    def compile_openvino(model: torch.nn.Module, inputs: tuple,
                         cache: str | None) -> tuple[Callable, dict]:
        import openvino as ov

        # OpenVINO's reduced precision is a hint on the f32 model.
        model = copy.deepcopy(model).float()
        inputs = _to(inputs, torch.float32)
        core = ov.Core()
        if cache:
            core.set_property({"CACHE_DIR": cache})
        start = time.perf_counter()
        with torch.no_grad(), contextlib.redirect_stdout(sys.stderr):
            converted = ov.convert_model(model, example_input=inputs)
        convert_s = time.perf_counter() - start
        config = {"INFERENCE_NUM_THREADS": THREADS, "NUM_STREAMS": 1,
                  "PERFORMANCE_HINT": "LATENCY"}
        if precision:
            config["INFERENCE_PRECISION_HINT"] = precision
        compiled = core.compile_model(converted, "CPU", config)
        request = compiled.create_infer_request()
        feeds = [x.numpy() for x in inputs]

        def run(*_: Any) -> torch.Tensor:
            request.infer(feeds)
            return torch.from_numpy(request.get_output_tensor(0).data.copy())

        info = {"trace_s": convert_s, "compile_s": time.perf_counter() - start - convert_s,
                "precision": compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()}
        return run, info

    return compile_openvino


COMPILERS = {"poptorch": compile_poptorch, "inductor": compile_inductor,
             "onnxruntime": compile_onnxruntime, "openvino": _openvino("f32"),
             "openvino_default": _openvino(None), "openvino_bf16": _openvino("bf16")}


def available(backend: str) -> bool:
    need = {"onnxruntime": ("onnxruntime", "onnx"), "openvino": ("openvino",),
            "openvino_default": ("openvino",), "openvino_bf16": ("openvino",)}.get(backend, ())
    return all(importlib.util.find_spec(m) is not None for m in need)


def openvino_default_precision() -> str | None:
    """The inference precision OpenVINO's CPU plugin uses on this host by default."""
    if not available("openvino"):
        return None
    import openvino as ov

    return ov.Core().get_property("CPU", "INFERENCE_PRECISION_HINT").get_type_name()


# ------------------------------------------------------------------ compile probes (subprocesses)
def probe(backend: str, name: str, batch: int, quick: bool, cache: str,
          dtype: torch.dtype) -> dict:
    """Runs in a fresh process: compile once, report times and the compile's peak memory."""
    torch.set_num_threads(THREADS)
    model, inputs = _build(name, batch, quick, dtype)
    with PeakRss() as rss:
        _, info = COMPILERS[backend](model, inputs, cache)
    info["peak_compile_mb"] = rss.added_mb
    return info


def run_probe(backend: str, name: str, batch: int, quick: bool, cache: str,
              dtype: torch.dtype) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--probe", backend, name, str(batch), cache,
           "--dtype", str(dtype).removeprefix("torch.")]
    if quick:
        cmd.append("--quick")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ steady state
def steady_state(fns: dict[str, Callable], inputs: tuple, repeats: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {k: [] for k in fns}
    with torch.inference_mode():
        for _ in range(3):
            for fn in fns.values():
                fn(*inputs)
        for _ in range(repeats):
            for key, fn in fns.items():  # interleaved: every backend sees the same machine state
                start = time.perf_counter()
                fn(*inputs)
                times[key].append(time.perf_counter() - start)
    return times


def bench(name: str, batch: int, backends: list[str], repeats: int, quick: bool,
          dtype: torch.dtype = torch.float32) -> dict:
    model, inputs = _build(name, batch, quick, dtype)
    with torch.inference_mode():
        reference = model(*inputs)
    row: dict[str, Any] = {"model": name, "batch": batch}
    fns: dict[str, Callable] = {"eager": model}
    with tempfile.TemporaryDirectory(prefix="poptorch-bench-") as tmp:
        for backend in backends:
            if backend == "eager":
                continue
            if not available(backend):
                row[backend] = {"error": "not installed"}
                continue
            cache = os.path.join(tmp, backend)
            os.makedirs(cache)
            cold = run_probe(backend, name, batch, quick, cache, dtype)
            warm = (run_probe(backend, name, batch, quick, cache, dtype)
                    if "error" not in cold else {})
            entry = {"trace_s": cold.get("trace_s"), "cold_compile_s": cold.get("compile_s"),
                     "warm_compile_s": warm.get("compile_s"),
                     "peak_compile_mb": cold.get("peak_compile_mb")}
            if "error" in cold:
                entry["error"] = cold["error"]
            else:
                try:
                    fn, _ = COMPILERS[backend](model, inputs, cache)
                    with torch.inference_mode():
                        out = fn(*inputs)
                    entry["max_abs_err"] = (out.float() - reference.float()).abs().max().item()
                    fns[backend] = fn
                except Exception as e:  # noqa: BLE001 - a failing peer is reported, not fatal
                    entry["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
            row[backend] = entry
        times = steady_state(fns, inputs, repeats)
    eager_med = statistics.median(times["eager"])
    for key, ts in times.items():
        med = statistics.median(ts)
        entry = row.setdefault(key, {})
        entry.update({"median_ms": med * 1e3, "spread_ms": (max(ts) - min(ts)) * 1e3,
                      "p10_ms": _quantile(ts, 0.1) * 1e3, "p90_ms": _quantile(ts, 0.9) * 1e3,
                      "throughput_per_s": batch / med, "speedup_vs_eager": eager_med / med})
    return row


def _quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


# ------------------------------------------------------------------ reporting
def print_table(rows: list[dict], backends: list[str]) -> None:
    print(f"\n{'model':19} {'batch':>5} {'backend':16} {'median ms':>10} {'spread ms':>10} "
          f"{'vs eager':>8} {'trace s':>8} {'cold s':>8} {'warm s':>8} {'peak MB':>8} {'max err':>9}")
    for r in rows:
        for b in backends:
            e = r.get(b)
            if not e:
                continue
            if "median_ms" not in e:
                print(f"{r['model']:19} {r['batch']:5d} {b:16} {e.get('error', 'failed')}")
                continue
            print(f"{r['model']:19} {r['batch']:5d} {b:16} {e['median_ms']:10.3f} "
                  f"{e['spread_ms']:10.3f} {e['speedup_vs_eager']:8.2f} "
                  f"{_fmt(e.get('trace_s'))} {_fmt(e.get('cold_compile_s'))} "
                  f"{_fmt(e.get('warm_compile_s'))} {_fmt(e.get('peak_compile_mb'), 0)} "
                  f"{_fmt(e.get('max_abs_err'), sci=True)}")
    for b in backends:
        ratios = [r[b]["speedup_vs_eager"] for r in rows if "speedup_vs_eager" in r.get(b, {})]
        if ratios and b != "eager":
            gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            print(f"{b}: geometric mean speed-up vs eager {gm:.2f} over {len(ratios)} runs, "
                  f"min {min(ratios):.2f}")
    # poptorch against each peer, on the rows where both ran
    for b in backends:
        if b in ("eager", "poptorch"):
            continue
        pairs = [(r["poptorch"]["median_ms"], r[b]["median_ms"]) for r in rows
                 if "median_ms" in r.get("poptorch", {}) and "median_ms" in r.get(b, {})]
        if pairs:
            gm = math.exp(sum(math.log(o / p) for p, o in pairs) / len(pairs))
            ahead = sum(p <= o for p, o in pairs)
            print(f"poptorch vs {b}: geometric mean {gm:.2f}x, at or ahead on {ahead} of "
                  f"{len(pairs)} runs")


def print_markdown(rows: list[dict], backends: list[str]) -> None:
    """The results as the Markdown table of docs/performance.md."""
    others = [b for b in backends if b != "eager"]
    print("\n| model | batch | eager ms | " + " | ".join(
        f"{b} ms (x eager) | {b} cold / warm s" for b in others) + " |")
    print("|---|---|---|" + "---|---|" * len(others))
    for r in rows:
        cells = [r["model"], str(r["batch"]), f"{r['eager']['median_ms']:.2f}"]
        for b in others:
            e = r.get(b, {})
            if "median_ms" not in e:
                cells += [e.get("error", "failed")[:60], "-"]
                continue
            cells.append(f"{e['median_ms']:.2f} ({e['speedup_vs_eager']:.2f}x)")
            cold, warm = e.get("cold_compile_s"), e.get("warm_compile_s")
            cells.append(f"{cold:.1f} / {warm:.1f}" if cold is not None and warm is not None
                         else "-")
        print("| " + " | ".join(cells) + " |")


def _fmt(v: float | None, digits: int = 2, sci: bool = False) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return f"{'-':>8}" if not sci else f"{'-':>9}"
    return f"{v:9.1e}" if sci else f"{v:8.{digits}f}"


def plot(rows: list[dict], backends: list[str], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['model']}\nb{r['batch']}" for r in rows]
    others = [b for b in backends if b != "eager"]
    width = 0.8 / max(1, len(others))
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(rows)), 4))
    for i, b in enumerate(others):
        ys = [r.get(b, {}).get("speedup_vs_eager", 0.0) for r in rows]
        ax.bar([x + i * width for x in range(len(rows))], ys, width, label=b)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([x + width * (len(others) - 1) / 2 for x in range(len(rows))], labels)
    ax.set_ylabel("speed-up vs eager PyTorch (median latency)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--backends", help=f"default: {','.join(BACKENDS)}; with --dtype "
                        f"bfloat16 {','.join(BF16_BACKENDS)}")
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32",
                        help="the models' precision (bfloat16: model.bfloat16())")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="scaled-down models (seconds)")
    parser.add_argument("--json", help="default: benchmarks/results.json "
                        "(results_bfloat16.json with --dtype bfloat16); '' for none")
    parser.add_argument("--plot", help="default: benchmarks/ratios.png "
                        "(ratios_bfloat16.png with --dtype bfloat16); '' for none")
    parser.add_argument("--probe", nargs=4, metavar=("BACKEND", "MODEL", "BATCH", "CACHE"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    dtype = getattr(torch, args.dtype)
    suffix = "" if dtype == torch.float32 else "_" + args.dtype
    if args.json is None:
        args.json = f"benchmarks/results{suffix}.json"
    if args.plot is None:
        args.plot = f"benchmarks/ratios{suffix}.png"
    if args.probe:
        backend, name, batch, cache = args.probe
        print(json.dumps(probe(backend, name, int(batch), args.quick, cache, dtype)))
        return
    torch.set_num_threads(THREADS)
    default_backends = BF16_BACKENDS if dtype == torch.bfloat16 else BACKENDS
    backends = ["eager", *[b for b in (args.backends or ",".join(default_backends)).split(",")
                           if b != "eager"]]
    default_precision = openvino_default_precision()
    if default_precision in (None, "f32") and "openvino_default" in backends:
        # the plugin's default is f32 here: the same measurement as "openvino"
        backends.remove("openvino_default")
    meta = {"torch": torch.__version__, "threads": THREADS, "quick": args.quick,
            "repeats": args.repeats, "cpu": _cpu_name(), "vector_extensions": _cpu_extensions(),
            "openvino_default_precision": default_precision, "dtype": args.dtype}
    print(f"host: {meta['cpu']} ({' '.join(meta['vector_extensions'])}), {THREADS} threads, "
          f"{args.dtype}", file=sys.stderr)
    rows = []
    for name in args.models.split(","):
        for batch in (int(b) for b in args.batches.split(",")):
            print(f"benchmarking {name} batch {batch} ...", file=sys.stderr, flush=True)
            start = time.perf_counter()
            rows.append(bench(name, batch, backends, args.repeats, args.quick, dtype))
            rows[-1]["bench_s"] = time.perf_counter() - start
            if args.json:  # after every row: an interrupted run keeps what it measured
                with open(args.json, "w") as f:
                    json.dump({"meta": meta, "rows": rows}, f, indent=2)
    print_table(rows, backends)
    print_markdown(rows, backends)
    if args.json:
        print(f"results: {args.json}")
    if args.plot and importlib.util.find_spec("matplotlib"):
        plot(rows, backends, args.plot)
        print(f"plot: {args.plot}")


def _cpu_extensions() -> list[str]:
    """The vector extensions of this CPU that matter to the code generators."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                return sorted(f for f in flags if f in {"avx2", "fma"} or
                              f.startswith(("avx512", "amx", "avx_vnni")))
    return []


def _cpu_name() -> str:
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


if __name__ == "__main__":
    main()
