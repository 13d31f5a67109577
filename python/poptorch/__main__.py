"""``python -m poptorch``: the debugging command line (docs/debugging.md).

    python -m poptorch dump model.py:Net --input-shape 4,16 --out /tmp/dump
    python -m poptorch explain model.py:Net --input-shape 4,16
    python -m poptorch replay /tmp/dump/bundle.tar.gz
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from typing import Any

import torch


def _load(target: str) -> Any:
    """``file.py:name`` -> the model: a Module instance, a Module class (instantiated
    without arguments) or any callable."""
    path, sep, name = target.rpartition(":")
    if not sep or not path:
        raise SystemExit(f"poptorch: expected <file.py>:<callable>, got {target!r}")
    spec = importlib.util.spec_from_file_location("_poptorch_cli_model", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"poptorch: cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    obj = module
    for part in name.split("."):
        obj = getattr(obj, part)
    if isinstance(obj, type) and issubclass(obj, torch.nn.Module):
        obj = obj()
    if isinstance(obj, torch.nn.Module):
        obj.eval()
    return obj


def _inputs(shapes: list[str], dtypes: list[str], seed: int) -> list[torch.Tensor]:
    torch.manual_seed(seed)
    out = []
    for i, shape in enumerate(shapes):
        dims = [int(d) for d in shape.replace("x", ",").split(",") if d.strip()]
        dtype = getattr(torch, dtypes[i] if i < len(dtypes) else dtypes[-1] if dtypes else "float32")
        if dtype.is_floating_point:
            out.append(torch.randn(dims, dtype=dtype))
        elif dtype == torch.bool:
            out.append(torch.rand(dims) > 0.5)
        else:
            out.append(torch.randint(0, 10, dims, dtype=dtype))
    return out


def _dump(ns: argparse.Namespace) -> int:
    import poptorch
    from poptorch import _debug

    model = _load(ns.target)
    args = _inputs(ns.input_shape, ns.dtype, ns.seed)
    os.makedirs(ns.out, exist_ok=True)
    ledger = poptorch.explain(model, *args)
    with open(os.path.join(ns.out, "explain.txt"), "w") as f:
        f.write(str(ledger))
    if ledger.unsupported or ledger.error:
        print(ledger)
        print(f"poptorch: the model does not compile; the op ledger is in {ns.out}/explain.txt")
        return 1
    graph = poptorch.trace(model, *args)
    stages = os.path.join(ns.out, "stages")
    program = _debug.compile_program(graph, stages)
    executable = poptorch.Executable(graph, program)
    start = time.perf_counter()
    compiled = executable(*args)
    executable.first_run_seconds = time.perf_counter() - start
    files = _debug.write_dump(stages, executable)
    bundle = poptorch.write_bundle(model, *args, path=os.path.join(ns.out, "bundle.tar.gz"))
    golden = _debug.eager_results(model, graph, args, {})
    leaves = [x for x in torch.utils._pytree.tree_leaves(compiled) if isinstance(x, torch.Tensor)]
    ok = all(not _debug.compare(c, golden[r])
             for c, r in zip(leaves, graph.output_results, strict=True))
    print(f"poptorch: {graph.name}: {graph.num_ops} ops, {len(files)} files in {stages}")
    print(f"  op ledger:      {ns.out}/explain.txt   ({ledger.summary})")
    print(f"  stages:         {stages}/00-captured.mlir ... (replay: {stages}/replay.sh)")
    print(f"  graph:          {stages}/graph.dot" + (" and graph.svg" if "graph.svg" in files else ""))
    print(f"  timings:        {stages}/timings.txt")
    print(f"  replay bundle:  {bundle}  (python -m poptorch replay {bundle})")
    print(f"  outputs vs eager PyTorch: {'match' if ok else 'DIFFER'}")
    if not ok or ns.bisect:
        report = poptorch.bisect(model, *args, out_dir=os.path.join(ns.out, "golden"))
        print(f"  golden bisection: {report}")
    return 0 if ok else 1


def _explain(ns: argparse.Namespace) -> int:
    import poptorch

    ledger = poptorch.explain(_load(ns.target), *_inputs(ns.input_shape, ns.dtype, ns.seed))
    print(ledger, end="")
    return 1 if ledger.unsupported or ledger.error else 0


def _replay(ns: argparse.Namespace) -> int:
    from poptorch import _debug

    ok, _ = _debug.replay(ns.bundle)
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m poptorch", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (("dump", "trace, compile and run a model; write every stage, "
                             "the op ledger, the graph, timings and a replay bundle"),
                            ("explain", "the op ledger of a model, without compiling")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("target", help="<file.py>:<callable> (a Module class, instance or function)")
        p.add_argument("--input-shape", action="append", default=[], metavar="D0,D1,...",
                       help="one per tensor input (random normal values)")
        p.add_argument("--dtype", action="append", default=[], help="dtype per input (float32)")
        p.add_argument("--seed", type=int, default=0)
        if name == "dump":
            p.add_argument("--out", required=True, help="the output folder")
            p.add_argument("--bisect", action="store_true",
                           help="also run the golden bisection")
    p = sub.add_parser("replay", help="re-run a replay bundle and check its outputs")
    p.add_argument("bundle", help="a bundle archive or folder")
    ns = parser.parse_args(argv)
    return {"dump": _dump, "explain": _explain, "replay": _replay}[ns.command](ns)


if __name__ == "__main__":
    sys.exit(main())
