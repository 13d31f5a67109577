"""GFLOP/s of an f32 matmul through the whole poptorch stack vs torch.mm.

Traces `a @ b` on the ipu device, compiles it (JIT for the host CPU) and
times the compiled program and eager `torch.mm` (2 intra-op threads) side by
side in one run, alternating the two so that both see the same machine load.
Prints the median GFLOP/s of each, their ratio and the compile time.

    python benchmarks/gemm.py [--size 512] [--m M --k K --n N] [--repeats 50]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

import poptorch


def _seconds_per_call(fn: Callable[[], object], inner: int) -> float:
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - start) / inner


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512, help="M = K = N")
    parser.add_argument("--m", type=int)
    parser.add_argument("--k", type=int)
    parser.add_argument("--n", type=int)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    args = parser.parse_args()
    m = args.m or args.size
    k = args.k or args.size
    n = args.n or args.size

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    a = torch.randn(m, k)
    b = torch.randn(k, n)

    with torch.no_grad():
        start = time.perf_counter()
        exe = poptorch.trace(lambda x, y: x @ y, a, b).compile()
        compile_s = time.perf_counter() - start
        torch.testing.assert_close(exe(a, b), torch.mm(a, b), rtol=1e-3, atol=1e-3)

        flop = 2.0 * m * k * n
        inner = max(1, int(2e8 // flop))  # ~10 ms of work per sample at ~20 GFLOP/s
        for _ in range(3):  # warm-up: caches, thread pools, page faults
            exe(a, b)
            torch.mm(a, b)
        ours, eager = [], []
        for _ in range(args.repeats):
            ours.append(_seconds_per_call(lambda: exe(a, b), inner))
            eager.append(_seconds_per_call(lambda: torch.mm(a, b), inner))
        t_ours = statistics.median(ours)
        t_eager = statistics.median(eager)

    g_ours = flop / t_ours / 1e9
    g_eager = flop / t_eager / 1e9
    print(f"matmul {m}x{k}x{n} f32, torch threads={args.threads}")
    print(f"  poptorch  {t_ours * 1e3:9.3f} ms  {g_ours:8.1f} GFLOP/s")
    print(f"  torch.mm  {t_eager * 1e3:9.3f} ms  {g_eager:8.1f} GFLOP/s")
    print(f"  ratio poptorch/torch: {g_ours / g_eager:.2f}x throughput")
    timings = ", ".join(f"{name} {sec:.3f}s" for name, sec in exe.timings)
    print(f"  compile {compile_s:.2f}s ({timings})")


if __name__ == "__main__":
    main()
