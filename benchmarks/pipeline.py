"""PipelinedExecution: the overlapped schedule against the sequential one, side by side.

A 2-stage MLP (4 x Linear(1024, 1024) + ReLU, two layers per stage, blocks on
IPUs 0 and 1), deviceIterations 16, micro-batches of 1..8 rows. The two ways
of using both cores are compared: the sequential schedule with each matmul
split over the cores (what the compiler chooses: the matmuls are above
min-parallel-cost, kMinParallelCost in Pipeline.cpp), and the overlapped
schedule with each stage on one core (compiled with min-parallel-cost raised
above the matmuls' cost, POPTORCH_TILE_OPTIONS), where micro-batches of the
two stages run at once. Both executables are compiled from the same model and called in turn
(`--repeats` calls each); the medians, the speed-up and the process CPU time
over wall time of each schedule (about 1 for one busy thread, up to 2 when both
stages really run at once) are printed. The machine is shared: repeat.

    python benchmarks/pipeline.py [--repeats 30] [--batches 1,4,8] [--stages 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

import poptorch
from poptorch import _tracing


class MLP(torch.nn.Module):
    def __init__(self, stages: int, layers: int = 4, width: int = 1024) -> None:
        super().__init__()
        torch.manual_seed(0)
        per = layers // stages
        self.layers = torch.nn.ModuleList()
        for k in range(layers):
            layer = torch.nn.Linear(width, width)
            if k % per == 0:
                poptorch.BeginBlock(layer, f"stage{k // per}", ipu_id=k // per)
            self.layers.append(layer)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


def compiled(model: torch.nn.Module, x: torch.Tensor, iterations: int, pipelined: bool):
    opts = poptorch.Options().deviceIterations(iterations)
    _tracing._PIPELINE_OVERRIDE = None if pipelined else False
    saved = os.environ.get("POPTORCH_TILE_OPTIONS")
    if pipelined:  # every op on one core: the stages may overlap
        os.environ["POPTORCH_TILE_OPTIONS"] = f"min-parallel-cost={2**40}"
    try:
        executor = poptorch.inferenceModel(model, opts)
        executor(x)
    finally:
        _tracing._PIPELINE_OVERRIDE = None
        if saved is None:
            os.environ.pop("POPTORCH_TILE_OPTIONS", None)
        else:
            os.environ["POPTORCH_TILE_OPTIONS"] = saved
    schedule = dict(executor.executable.stages)["device-loop"]
    assert ('"overlapped"' in schedule) == pipelined, schedule
    return executor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--batches", default="1,4,8")
    parser.add_argument("--stages", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=16)
    args = parser.parse_args()
    model = MLP(args.stages).eval()
    print(f"{'batch':>5} {'sequential ms':>14} {'overlapped ms':>14} {'speed-up':>9} "
          f"{'cpu/wall':>9} {'cpu/wall':>9}")
    for batch in (int(b) for b in args.batches.split(",")):
        x = torch.randn(args.iterations * batch, 1024)
        seq = compiled(model, x, args.iterations, pipelined=False)
        ovl = compiled(model, x, args.iterations, pipelined=True)
        torch.testing.assert_close(ovl(x), seq(x))
        times: dict[str, list[float]] = {"seq": [], "ovl": []}
        cpu = {"seq": 0.0, "ovl": 0.0}
        for _ in range(args.repeats):
            for name, ex in (("seq", seq), ("ovl", ovl)):
                c, t = time.process_time(), time.perf_counter()
                ex(x)
                times[name].append(time.perf_counter() - t)
                cpu[name] += time.process_time() - c
        s, o = (statistics.median(times[k]) * 1e3 for k in ("seq", "ovl"))
        # CPU time over wall time: about 1 for one busy thread, up to 2 when
        # the stages really run at the same time on two cores.
        busy = {k: cpu[k] / sum(times[k]) for k in cpu}
        print(f"{batch:>5} {s:>14.3f} {o:>14.3f} {s / o:>8.2f}x "
              f"{busy['seq']:>9.2f} {busy['ovl']:>9.2f}", flush=True)


if __name__ == "__main__":
    main()
