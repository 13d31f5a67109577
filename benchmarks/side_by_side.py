"""Quick side-by-side timings for performance work: ops and models, poptorch against eager.

Each measurement compiles once, checks the result against eager, then calls poptorch and
eager in turn (`--repeats` single calls each) and reports the minimum (`--stat min`, the
default: the least disturbed call on a shared machine) or median, and the ratio.

    python benchmarks/side_by_side.py conv,dw,gemm,resnet50,mobilenet_q [--repeats 60]
        [--threads 1] [--timings] [--clock cpu]
        [--env "POPTORCH_TILE_OPTIONS=min-parallel-cost=-1 pack-rhs=false,min-parallel-cost=-1"]

``--env NAME=V1,V2,...`` compiles one poptorch program per value of the environment variable
(read by the compiler at compile time: ``POPTORCH_TILE_OPTIONS`` replaces the options of
poptorch-tile-and-vectorize) and times them all interleaved with eager, so that a compiler
setting is compared before/after in one run.

Ops: gemm (512³), gemm_wide (128x768 @ 768x16384: B rows 64 KB apart), conv (64->64 3x3
56x56), conv1x1 (64->256 56x56), convs2 (128->256 3x3 stride 2 28x28), dw (depthwise 144
3x3 56x56). Models: the names of benchmarks/models.py,
``_q`` for the QUICK variant, ``@8`` for batch 8.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import poptorch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import MODELS, QUICK  # noqa: E402

OPS = {
    "gemm": (lambda: (torch.randn(512, 512), torch.randn(512, 512)), lambda a, b: a @ b, 2.0 * 512**3),
    "gemm_wide": (lambda: (torch.randn(128, 768), torch.randn(768, 16384)), lambda a, b: a @ b,
                  2.0 * 128 * 768 * 16384),
    "conv": (lambda: (torch.randn(1, 64, 56, 56), torch.randn(64, 64, 3, 3)),
             lambda a, b: F.conv2d(a, b, padding=1), 2.0 * 64 * 56 * 56 * 64 * 9),
    "conv1x1": (lambda: (torch.randn(1, 64, 56, 56), torch.randn(256, 64, 1, 1)),
                lambda a, b: F.conv2d(a, b), 2.0 * 256 * 56 * 56 * 64),
    "convs2": (lambda: (torch.randn(1, 128, 28, 28), torch.randn(256, 128, 3, 3)),
               lambda a, b: F.conv2d(a, b, stride=2, padding=1), 2.0 * 256 * 14 * 14 * 128 * 9),
    "dw": (lambda: (torch.randn(1, 144, 56, 56), torch.randn(144, 1, 3, 3)),
           lambda a, b: F.conv2d(a, b, padding=1, groups=144), 2.0 * 144 * 56 * 56 * 9),
}


def timed(fns: dict, repeats: int, stat: str, clock=time.perf_counter) -> dict[str, float]:
    for fn in fns.values():
        fn()
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for key, fn in fns.items():
            start = clock()
            fn()
            samples[key].append(clock() - start)
    agg = min if stat == "min" else statistics.median
    return {k: agg(v) for k, v in samples.items()}


def compile_variants(env: str, build) -> dict:
    """{label: compiled callable}, one per value of ``NAME=V1,V2`` (or the default setting)."""
    if not env:
        return {"poptorch": build()}
    name, _, values = env.partition("=")
    old = os.environ.get(name)
    out = {}
    try:
        for v in values.split(","):
            os.environ[name] = v
            out[f"poptorch[{v}]"] = build()
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--stat", choices=("min", "median"), default="min")
    parser.add_argument("--timings", action="store_true", help="print each model's timing_report()")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="cpu: the calling thread's CPU time, robust to a loaded machine but "
                        "blind to other threads (use with --threads 1 and "
                        "POPTORCH_TILE_OPTIONS=min-parallel-cost=-1)")
    parser.add_argument("--env", default="", help="NAME=V1,V2: one poptorch program per value")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter
    torch.manual_seed(0)
    load = f"load {os.getloadavg()[0]:.1f}"
    with torch.no_grad():
        for what in args.what.split(","):
            if what in OPS:
                make, fn, flop = OPS[what]
                inputs = make()
                start = time.perf_counter()
                exes = compile_variants(args.env, lambda f=fn, x=inputs: poptorch.trace(f, *x).compile())
                compile_s = (time.perf_counter() - start) / len(exes)
                for exe in exes.values():
                    torch.testing.assert_close(exe(*inputs), fn(*inputs), rtol=1e-3, atol=1e-3)
                fns = {k: lambda e=e, x=inputs: e(*x) for k, e in exes.items()}
                fns["torch"] = lambda f=fn, x=inputs: f(*x)
                t = timed(fns, args.repeats, args.stat, clock)
                g = {k: flop / v / 1e9 for k, v in t.items()}
                mine = ", ".join(f"{k} {v:.1f} GFLOP/s ({v / g['torch']:.2f}x)" for k, v in g.items()
                                 if k != "torch")
                print(f"{what}: {mine}, torch {g['torch']:.1f} (compile {compile_s:.2f} s, {load})")
                continue
            name, _, batch = what.partition("@")
            quick = name.endswith("_q")
            model, make_input = (QUICK if quick else MODELS)[name.removesuffix("_q")]()
            model.eval()
            inputs = make_input(int(batch or 1))
            start = time.perf_counter()

            def build(m=model, x=inputs):
                c = poptorch.inferenceModel(m)
                c.compile(*x)
                return c

            compiled = compile_variants(args.env, build)
            compile_s = (time.perf_counter() - start) / len(compiled)
            for c in compiled.values():
                torch.testing.assert_close(c(*inputs), model(*inputs), rtol=1e-3, atol=1e-3)
            fns = {k: lambda c=c, x=inputs: c(*x) for k, c in compiled.items()}
            fns["eager"] = lambda m=model, x=inputs: m(*x)
            t = timed(fns, args.repeats, args.stat, clock)
            mine = ", ".join(f"{k} {v * 1e3:.2f} ms (eager/poptorch {t['eager'] / v:.2f})"
                             for k, v in t.items() if k != "eager")
            print(f"{what}: {mine}, eager {t['eager'] * 1e3:.2f} ms (compile {compile_s:.1f} s, {load})")
            if args.timings:
                for c in compiled.values():
                    print(c._executable.timing_report())


if __name__ == "__main__":
    main()
