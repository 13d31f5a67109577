"""The executable's life cycle, each step in a fresh process: cold compile, a compile that
loads from the executable cache, compileAndExport, and poptorch.load.

    python benchmarks/lifecycle.py [--models mlp,bert] [--batch 1] [--quick] [--json out.json]

For each model it reports (seconds, wall clock inside the child process, after imports):

* ``cold``: trace + compile with an empty executable cache;
* ``cached``: the same in a new process, loading the entry the cold run wrote (the
  trace still runs: the cache key is the traced module);
* ``export``: ``compileAndExport(path, *inputs)`` (trace + compile + write the file);
* ``load``: ``poptorch.load(path)`` and its first call, in a new process;

and checks that the cached and loaded programs give bit-identical outputs to the compiled
one. ``make bench`` runs it after the micro-benchmarks.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import MODELS, QUICK  # noqa: E402

import poptorch  # noqa: E402

STEPS = ("cold", "cached", "export", "load")


def _inputs(name: str, batch: int, quick: bool) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(0)
    model, make_input = (QUICK if quick else MODELS)[name]()
    return model.eval(), make_input(batch)


def step(kind: str, name: str, batch: int, quick: bool, folder: str) -> dict:
    """One step, in this (fresh) process; the output goes to a file for comparison."""
    torch.set_num_threads(2)
    model, inputs = _inputs(name, batch, quick)
    opts = poptorch.Options()
    start = time.perf_counter()
    if kind in ("cold", "cached"):
        opts.enableExecutableCaching(os.path.join(folder, "cache"))
        compiled = poptorch.inferenceModel(model, opts)
        compiled.compile(*inputs)
        origin = compiled.executable.origin
    elif kind == "export":
        compiled = poptorch.inferenceModel(model, opts)
        compiled.compileAndExport(os.path.join(folder, "model.poptorch"), *inputs)
        origin = "exported"
    else:
        compiled = poptorch.load(os.path.join(folder, "model.poptorch"))
        origin = "loaded"
    seconds = time.perf_counter() - start
    out = compiled(*inputs)
    if kind == "load":
        seconds = time.perf_counter() - start  # load + first call
    torch.save(out, os.path.join(folder, f"{kind}.pt"))
    return {"seconds": seconds, "origin": origin}


def run(name: str, batch: int, quick: bool) -> dict:
    result: dict = {"model": name, "batch": batch}
    with tempfile.TemporaryDirectory(prefix="poptorch-lifecycle-") as folder:
        for kind in STEPS:
            cmd = [sys.executable, os.path.abspath(__file__), "--step", kind, name, str(batch),
                   folder] + (["--quick"] if quick else [])
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
            if proc.returncode != 0:
                tail = proc.stderr.strip().splitlines()[-1:] or ["failed"]
                result[kind] = {"error": tail[0]}
                continue
            result[kind] = json.loads(proc.stdout.strip().splitlines()[-1])
        reference = torch.load(os.path.join(folder, "cold.pt"))
        for kind in ("cached", "load"):
            path = os.path.join(folder, f"{kind}.pt")
            if os.path.exists(path):
                same = torch.equal(torch.load(path), reference)
                result[kind]["identical"] = same
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="mlp,bert")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json")
    parser.add_argument("--step", nargs=4, metavar=("KIND", "MODEL", "BATCH", "FOLDER"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        kind, name, batch, folder = args.step
        print(json.dumps(step(kind, name, int(batch), args.quick, folder)))
        return
    rows = [run(name, args.batch, args.quick) for name in args.models.split(",")]
    print(f"{'model':10} {'cold s':>8} {'cached s':>9} {'cold/cached':>12} {'export s':>9} "
          f"{'load+call s':>12}  identical")
    for r in rows:
        def sec(kind: str, r: dict = r) -> float:
            return r[kind].get("seconds", float("nan"))
        same = all(r[k].get("identical", False) for k in ("cached", "load"))
        print(f"{r['model']:10} {sec('cold'):8.3f} {sec('cached'):9.3f} "
              f"{sec('cold') / sec('cached'):12.1f} {sec('export'):9.3f} {sec('load'):12.3f}  "
              f"{same} ({r['cached'].get('origin')})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
