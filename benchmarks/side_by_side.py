"""Quick side-by-side timings for performance work: ops and models, poptorch against eager.

Each measurement compiles once, checks the result against eager, then calls poptorch and
eager in turn (`--repeats` single calls each) and reports the minimum (`--stat min`, the
default: the least disturbed call on a shared machine) or median, and the ratio.

    python benchmarks/side_by_side.py conv,dw,gemm,resnet18,mobilenet_q [--repeats 60]
        [--threads 1] [--timings]

Ops: gemm (512³), conv (64->64 3x3 56x56), conv1x1 (64->256 56x56), convs2 (128->256 3x3
stride 2 28x28), dw (depthwise 144 3x3 56x56). Models: the names of benchmarks/models.py,
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
    "conv": (lambda: (torch.randn(1, 64, 56, 56), torch.randn(64, 64, 3, 3)),
             lambda a, b: F.conv2d(a, b, padding=1), 2.0 * 64 * 56 * 56 * 64 * 9),
    "conv1x1": (lambda: (torch.randn(1, 64, 56, 56), torch.randn(256, 64, 1, 1)),
                lambda a, b: F.conv2d(a, b), 2.0 * 256 * 56 * 56 * 64),
    "convs2": (lambda: (torch.randn(1, 128, 28, 28), torch.randn(256, 128, 3, 3)),
               lambda a, b: F.conv2d(a, b, stride=2, padding=1), 2.0 * 256 * 14 * 14 * 128 * 9),
    "dw": (lambda: (torch.randn(1, 144, 56, 56), torch.randn(144, 1, 3, 3)),
           lambda a, b: F.conv2d(a, b, padding=1, groups=144), 2.0 * 144 * 56 * 56 * 9),
}


def timed(fns: dict, repeats: int, stat: str) -> dict[str, float]:
    for fn in fns.values():
        fn()
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for key, fn in fns.items():
            start = time.perf_counter()
            fn()
            samples[key].append(time.perf_counter() - start)
    agg = min if stat == "min" else statistics.median
    return {k: agg(v) for k, v in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--stat", choices=("min", "median"), default="min")
    parser.add_argument("--timings", action="store_true", help="print each model's timing_report()")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    load = f"load {os.getloadavg()[0]:.1f}"
    with torch.no_grad():
        for what in args.what.split(","):
            if what in OPS:
                make, fn, flop = OPS[what]
                inputs = make()
                start = time.perf_counter()
                exe = poptorch.trace(fn, *inputs).compile()
                compile_s = time.perf_counter() - start
                torch.testing.assert_close(exe(*inputs), fn(*inputs), rtol=1e-3, atol=1e-3)
                t = timed({"poptorch": lambda e=exe, x=inputs: e(*x), "torch": lambda f=fn, x=inputs: f(*x)},
                          args.repeats, args.stat)
                g = {k: flop / v / 1e9 for k, v in t.items()}
                print(f"{what}: poptorch {g['poptorch']:.1f} GFLOP/s, torch {g['torch']:.1f} "
                      f"({g['poptorch'] / g['torch']:.2f}x; compile {compile_s:.2f} s, {load})")
                continue
            name, _, batch = what.partition("@")
            quick = name.endswith("_q")
            model, make_input = (QUICK if quick else MODELS)[name.removesuffix("_q")]()
            model.eval()
            inputs = make_input(int(batch or 1))
            compiled = poptorch.inferenceModel(model)
            start = time.perf_counter()
            compiled.compile(*inputs)
            compile_s = time.perf_counter() - start
            torch.testing.assert_close(compiled(*inputs), model(*inputs), rtol=1e-3, atol=1e-3)
            t = timed({"poptorch": lambda c=compiled, x=inputs: c(*x),
                       "eager": lambda m=model, x=inputs: m(*x)},
                      args.repeats, args.stat)
            print(f"{what}: poptorch {t['poptorch'] * 1e3:.2f} ms, eager {t['eager'] * 1e3:.2f} ms "
                  f"(eager/poptorch {t['eager'] / t['poptorch']:.2f}; compile {compile_s:.1f} s, "
                  f"{load})")
            if args.timings:
                print(compiled._executable.timing_report())


if __name__ == "__main__":
    main()
