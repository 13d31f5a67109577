"""Micro-benchmarks: capture overhead per op, per-call host overhead, GEMM and convolution GFLOP/s.

Each measurement runs poptorch and its eager PyTorch counterpart interleaved in this one
process and reports medians and the ratio:

* capture: a chain of N small elementwise ops traced by ``poptorch.trace`` against the same
  ops run eagerly (and against ``torch.fx.symbolic_trace``), in microseconds per op;
* per-call overhead: a compiled ``Linear(4, 4)`` at batch 1 against eager;
* GEMM (512^3 by default, f32 and bfloat16) against ``torch.mm`` and convolution (64->64,
  3x3, 56x56) against ``F.conv2d``, in GFLOP/s, with this CPU's estimated f32 peak for scale.

The report and the JSON name the host (CPU model, LLVM's host CPU and features).

    python benchmarks/micro.py [--ops 1000] [--size 512] [--repeats 30] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

import poptorch

THREADS = 2


def per_call(fn: Callable[[], object], inner: int) -> float:
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - start) / inner


def interleaved(fns: dict[str, Callable[[], object]], repeats: int, inner: int) -> dict[str, float]:
    """Median seconds per call of each function, sampled in turn."""
    for fn in fns.values():
        fn()
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for key, fn in fns.items():
            samples[key].append(per_call(fn, inner))
    return {k: statistics.median(v) for k, v in samples.items()}


def chain(n: int) -> Callable[[torch.Tensor], torch.Tensor]:
    def fn(x: torch.Tensor) -> torch.Tensor:
        for i in range(n):
            x = x * 1.0001 if i % 2 else x + 0.5
        return x
    return fn


def capture(n_ops: int, repeats: int) -> dict:
    fn = chain(n_ops)
    x = torch.randn(16)
    poptorch.trace(fn, x)  # one-time imports and registrations
    t = interleaved({
        "eager": lambda: fn(x),
        "poptorch_trace": lambda: poptorch.trace(fn, x),
        "fx_trace": lambda: torch.fx.symbolic_trace(fn),
    }, max(3, repeats // 5), 1)
    per_op = {k: v / n_ops * 1e6 for k, v in t.items()}
    return {"ops": n_ops, "us_per_op": per_op,
            "capture_vs_eager": per_op["poptorch_trace"] / per_op["eager"]}


def call_overhead(repeats: int) -> dict:
    model = torch.nn.Linear(4, 4).eval()
    x = torch.randn(1, 4)
    compiled = poptorch.inferenceModel(model)
    compiled(x)
    with torch.inference_mode():
        t = interleaved({"eager": lambda: model(x), "poptorch": lambda: compiled(x)}, repeats, 200)
    return {"us_per_call": {k: v * 1e6 for k, v in t.items()},
            "poptorch_vs_eager": t["poptorch"] / t["eager"]}


def gemm(size: int, repeats: int, dtype: torch.dtype = torch.float32) -> dict:
    """A size^3 matmul; in bfloat16 it runs on AVX512-BF16 dot products where the host has
    them (poptorch and torch alike)."""
    a, b = torch.randn(size, size).to(dtype), torch.randn(size, size).to(dtype)
    exe = poptorch.trace(lambda x, y: x @ y, a, b).compile()
    tol = 1e-3 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(exe(a, b), torch.mm(a, b), rtol=tol, atol=tol * size ** 0.5)
    flop = 2.0 * size**3
    inner = max(1, int(2e8 // flop))
    t = interleaved({"poptorch": lambda: exe(a, b), "torch": lambda: torch.mm(a, b)}, repeats, inner)
    g = {k: flop / v / 1e9 for k, v in t.items()}
    return {"shape": [size] * 3, "dtype": str(dtype).removeprefix("torch."), "gflops": g,
            "poptorch_vs_torch": g["poptorch"] / g["torch"]}


def conv(repeats: int) -> dict:
    x, w = torch.randn(1, 64, 56, 56), torch.randn(64, 64, 3, 3)
    exe = poptorch.trace(lambda a, b: F.conv2d(a, b, padding=1), x, w).compile()
    torch.testing.assert_close(exe(x, w), F.conv2d(x, w, padding=1), rtol=1e-3, atol=1e-3)
    flop = 2.0 * 64 * 56 * 56 * 64 * 9
    t = interleaved({"poptorch": lambda: exe(x, w), "torch": lambda: F.conv2d(x, w, padding=1)},
                    repeats, 5)
    g = {k: flop / v / 1e9 for k, v in t.items()}
    return {"shape": "1x64x56x56 * 64x64x3x3", "gflops": g,
            "poptorch_vs_torch": g["poptorch"] / g["torch"]}


def host() -> dict:
    """The CPU's model name and LLVM's host CPU and features (what the code generator sees)."""
    name = "unknown"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        name = next((line.split(":", 1)[1].strip() for line in f
                     if line.startswith("model name")), name)
    return {"cpu": name, "llvm": poptorch._C.host_cpu(), "threads": THREADS}


def cpu_peak_gflops() -> float | None:
    """f32 FMA peak estimate: cores x GHz x lanes x 2 (FMA) x 2 (FMA pipes).

    The lanes are those of one FMA pipe: AMD before Zen 5 (family 26) runs AVX-512 on two
    256-bit pipes (Zen 4: 32 f32 FLOP per cycle per core, not 64). The clock is the one
    /proc/cpuinfo reports, the nominal one in a VM: boost clocks give more."""
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
    except OSError:
        return None
    mhz = [float(line.split(":")[1]) for line in info.splitlines() if line.startswith("cpu MHz")]
    family = next((int(line.split(":")[1]) for line in info.splitlines()
                   if line.startswith("cpu family")), 0)
    amd = "AuthenticAMD" in info
    lanes = 16 if " avx512f" in info and not (amd and family < 26) else \
        8 if " avx2" in info else 4
    cores = len(os.sched_getaffinity(0))
    return cores * (max(mhz) / 1e3 if mhz else 2.0) * lanes * 2 * 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=1000)
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    torch.set_num_threads(THREADS)
    torch.manual_seed(0)
    with torch.no_grad():
        res = {"capture": capture(args.ops, args.repeats), "call": call_overhead(args.repeats),
               "gemm": gemm(args.size, args.repeats),
               "gemm_bf16": gemm(args.size, args.repeats, torch.bfloat16),
               "conv": conv(args.repeats), "cpu_peak_gflops": cpu_peak_gflops(),
               "host": host()}
    print(f"host: {res['host']['cpu']}, {THREADS} threads")
    c, k = res["capture"], res["call"]
    print(f"capture, {c['ops']}-op chain: poptorch.trace {c['us_per_op']['poptorch_trace']:.2f} us/op, "
          f"eager {c['us_per_op']['eager']:.2f} us/op ({c['capture_vs_eager']:.1f}x eager), "
          f"torch.fx {c['us_per_op']['fx_trace']:.2f} us/op")
    print(f"per-call overhead, Linear(4,4) batch 1: poptorch {k['us_per_call']['poptorch']:.1f} us, "
          f"eager {k['us_per_call']['eager']:.1f} us ({k['poptorch_vs_eager']:.2f}x eager)")
    peak = res["cpu_peak_gflops"]
    for name in ("gemm", "gemm_bf16", "conv"):
        r = res[name]
        of_peak = (f", {r['gflops']['poptorch'] / peak:.0%} of the ~{peak:.0f} nominal-clock "
                   "f32 peak" if peak and name != "gemm_bf16" else "")
        print(f"{name} {r['shape']}: poptorch {r['gflops']['poptorch']:.1f} GFLOP/s, "
              f"torch {r['gflops']['torch']:.1f} ({r['poptorch_vs_torch']:.2f}x){of_peak}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
