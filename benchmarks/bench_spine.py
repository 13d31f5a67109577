"""Steady-state latency of the spine's three models: poptorch vs eager PyTorch, side by side.

Runs eager (torch with 2 threads) and the compiled model interleaved in one process, after
warm-up, and reports the median and spread of each, the ratio eager/poptorch (> 1: poptorch
is faster), compile time and the max abs error against eager.

    python benchmarks/bench_spine.py [--repeats N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

import poptorch


def mlp() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 10))


def cnn() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10))


def encoder() -> torch.nn.Module:
    return torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True)


MODELS = {
    "mlp": (mlp, lambda b: torch.randn(b, 256)),
    "cnn": (cnn, lambda b: torch.randn(b, 3, 32, 32)),
    "encoder": (encoder, lambda b: torch.randn(b, 64, 256)),
}


def timed(fn, x) -> float:
    start = time.perf_counter()
    fn(x)
    return time.perf_counter() - start


def bench(name: str, batch: int, repeats: int) -> dict:
    make_model, make_input = MODELS[name]
    torch.manual_seed(0)
    model = make_model().eval()
    x = make_input(batch)
    start = time.perf_counter()
    compiled = poptorch.inferenceModel(model)
    out = compiled(x)
    compile_s = time.perf_counter() - start
    with torch.inference_mode():
        ref = model(x)
        for _ in range(5):
            model(x)
            compiled(x)
        eager_t, ipu_t = [], []
        for _ in range(repeats):  # interleaved, so both see the same machine state
            eager_t.append(timed(model, x))
            ipu_t.append(timed(compiled, x))
    eager_med, ipu_med = statistics.median(eager_t), statistics.median(ipu_t)
    return {
        "model": name,
        "batch": batch,
        "compile_s": compile_s,
        "eager_ms": eager_med * 1e3,
        "eager_spread_ms": (max(eager_t) - min(eager_t)) * 1e3,
        "poptorch_ms": ipu_med * 1e3,
        "poptorch_spread_ms": (max(ipu_t) - min(ipu_t)) * 1e3,
        "speedup_vs_eager": eager_med / ipu_med,
        "max_abs_err": (out - ref).abs().max().item(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    torch.set_num_threads(2)
    rows = [bench(n, b, args.repeats) for n in MODELS for b in (1, 8)]
    print(f"{'model':8} {'batch':>5} {'compile s':>9} {'eager ms':>9} {'poptorch ms':>11} "
          f"{'eager/poptorch':>14} {'max abs err':>11}")
    for r in rows:
        print(f"{r['model']:8} {r['batch']:5d} {r['compile_s']:9.2f} {r['eager_ms']:9.3f} "
              f"{r['poptorch_ms']:11.3f} {r['speedup_vs_eager']:14.2f} {r['max_abs_err']:11.2e}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
