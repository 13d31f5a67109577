"""Executable caching (Options.enableExecutableCaching): a second process loads the
cached object code instead of compiling; damaged, stale or foreign entries are
detected and recompiled, never crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import assert_matches

import poptorch

PYTHON_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "python"))

SCRIPT = r"""
import json, sys, time
sys.path.insert(0, {python_dir!r})
import torch, poptorch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Hardswish(),
                            torch.nn.Linear(32, 4)).eval()
opts = poptorch.Options().enableExecutableCaching({cache!r}).deviceIterations(2)
pm = poptorch.inferenceModel(model, opts)
x = torch.arange(8 * 16, dtype=torch.float32).reshape(8, 16) / 100
start = time.perf_counter()
pm.compile(x)
seconds = time.perf_counter() - start
y = pm(x)
torch.save(y, {out!r})
print(json.dumps({{"origin": pm.executable.origin, "seconds": seconds,
                  "compile": sum(t for n, t in pm.executable.timings),
                  "dynamo_imported": "torch._dynamo" in sys.modules,
                  "eager_equal": bool(torch.allclose(y, model(x), atol=1e-5, rtol=1e-5))}}))
"""


def run_script(script: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_process(cache: Path, out: Path) -> dict:
    return run_script(SCRIPT.format(python_dir=PYTHON_DIR, cache=str(cache), out=str(out)))


def test_second_process_loads_the_cached_executable(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = run_process(cache, tmp_path / "a.pt")
    second = run_process(cache, tmp_path / "b.pt")
    assert first["origin"] == "compiled" and second["origin"] == "loaded"
    assert first["eager_equal"] and second["eager_equal"]
    assert torch.equal(torch.load(tmp_path / "a.pt"), torch.load(tmp_path / "b.pt"))
    assert len(list(cache.glob("*.poptorch-exec"))) == 1
    # Loading the object code is much faster than the pipeline and the JIT.
    assert second["compile"] * 5 < first["compile"]
    print(f"\ncache: compile {first['compile']:.3f} s, load {second['compile']:.4f} s")


def test_second_process_traces_with_the_kept_meta_results(tmp_path: Path) -> None:
    """The Meta results of the first trace are kept with the cache entries, so the
    second process calls no Meta kernel: the first Python one (hardswish has no C++
    shape function, csrc/MetaKernels.h) imports torch._dynamo."""
    cache = tmp_path / "cache"
    first = run_process(cache, tmp_path / "a.pt")
    memo = cache / "meta-results.bin"
    assert memo.stat().st_size > 0
    second = run_process(cache, tmp_path / "b.pt")
    assert first["dynamo_imported"] and not second["dynamo_imported"]
    assert second["eager_equal"]
    # A damaged memo is ignored (the trace asks the Meta kernels) and rewritten.
    flip_a_byte(memo)
    third = run_process(cache, tmp_path / "c.pt")
    assert third["origin"] == "loaded" and third["eager_equal"] and third["dynamo_imported"]
    fourth = run_process(cache, tmp_path / "d.pt")
    assert not fourth["dynamo_imported"]
    assert torch.equal(torch.load(tmp_path / "a.pt"), torch.load(tmp_path / "d.pt"))


def test_meta_results_of_another_build_are_not_read(tmp_path: Path) -> None:
    from poptorch import _C

    pm, _ = compile_with_cache(tmp_path)
    memo = str(tmp_path / "meta-results.bin")
    assert _C.meta_cache_load(memo, "another torch") == 0
    assert _C.meta_cache_load(memo, poptorch._tracing._compiler_id()) > 0
    assert _C.meta_cache_load(str(tmp_path / "missing.bin"), "any") == 0


def model_and_input(width: int = 8) -> tuple[torch.nn.Module, torch.Tensor]:
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(width, 6), torch.nn.ReLU()).eval()
    return model, torch.randn(4, width)


def compile_with_cache(cache: Path, width: int = 8) -> tuple[poptorch.PoplarExecutor, torch.Tensor]:
    model, x = model_and_input(width)
    pm = poptorch.inferenceModel(model, poptorch.Options().enableExecutableCaching(str(cache)))
    assert_matches(pm(x), model(x), atol=1e-6, rtol=1e-6)
    return pm, x


def entry(cache: Path) -> Path:
    (path,) = cache.glob("*.poptorch-exec")
    return path


def truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def garbage(p: Path) -> None:
    p.write_bytes(os.urandom(4096))


def flip_a_byte(p: Path) -> None:
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0xFF
    p.write_bytes(bytes(data))


def empty(p: Path) -> None:
    p.write_bytes(b"")


@pytest.mark.parametrize("damage,why", [
    (truncate, "truncated or malformed"),
    (garbage, "not a poptorch executable"),
    (flip_a_byte, "corrupted"),
    (empty, "not a poptorch executable"),
])
def test_damaged_entry_is_recompiled(tmp_path: Path, damage, why: str) -> None:
    pm, _ = compile_with_cache(tmp_path)
    assert pm.executable.origin == "compiled"
    damage(entry(tmp_path))
    again, _ = compile_with_cache(tmp_path)
    assert again.executable.origin.startswith("recompiled") and why in again.executable.origin
    # The entry was rewritten and loads again.
    third, _ = compile_with_cache(tmp_path)
    assert third.executable.origin == "loaded"


def test_foreign_entry_is_recompiled(tmp_path: Path) -> None:
    compile_with_cache(tmp_path / "a", width=8)
    compile_with_cache(tmp_path / "b", width=12)
    # Put model b's entry where model a's belongs.
    entry(tmp_path / "b").replace(entry(tmp_path / "a"))
    pm, _ = compile_with_cache(tmp_path / "a", width=8)
    assert "another model" in pm.executable.origin


def test_cache_key_covers_options_that_change_the_program(tmp_path: Path) -> None:
    model, x = model_and_input()
    for d in (1, 2):
        opts = poptorch.Options().enableExecutableCaching(str(tmp_path)).deviceIterations(d)
        pm = poptorch.inferenceModel(model, opts)
        assert_matches(pm(x), model(x), atol=1e-6, rtol=1e-6)
        assert pm.executable.origin == "compiled"
    assert len(list(tmp_path.glob("*.poptorch-exec"))) == 2


def test_unwritable_cache_dir_still_runs(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    model, x = model_and_input()
    pm = poptorch.inferenceModel(model, poptorch.Options().enableExecutableCaching(str(blocker)))
    assert_matches(pm(x), model(x), atol=1e-6, rtol=1e-6)


# ---------------------------------------------------------------------------
# compileAndExport / poptorch.load / loadExecutable

EXPORT = r"""
import json, sys, time
sys.path.insert(0, {python_dir!r})
import torch, poptorch
x = torch.arange(8 * 16, dtype=torch.float32).reshape(8, 16) / 100
start = time.perf_counter()
if {export!r}:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                                torch.nn.Linear(32, 4)).eval()
    model.register_buffer("calls", torch.zeros(()))
    pm = poptorch.inferenceModel(model, poptorch.Options().deviceIterations(2))
    pm.compileAndExport({path!r}, x)
else:
    pm = poptorch.load({path!r})
seconds = time.perf_counter() - start
y = pm(x)
torch.save(y, {out!r})
print(json.dumps({{"origin": pm.executable.origin, "seconds": seconds}}))
"""


def run_export(path: Path, out: Path, export: bool) -> dict:
    return run_script(EXPORT.format(python_dir=PYTHON_DIR, path=str(path), out=str(out),
                                    export=export))


def test_export_and_load_in_a_fresh_process(tmp_path: Path) -> None:
    path = tmp_path / "model.poptorch"
    first = run_export(path, tmp_path / "a.pt", export=True)
    second = run_export(path, tmp_path / "b.pt", export=False)
    assert second["origin"] == "loaded"
    assert torch.equal(torch.load(tmp_path / "a.pt"), torch.load(tmp_path / "b.pt"))
    print(f"\nexport {first['seconds']:.3f} s (trace + compile + write), "
          f"load {second['seconds']:.3f} s")


def test_load_executable_into_a_model_and_errors(tmp_path: Path) -> None:
    model, x = model_and_input()
    path = tmp_path / "m.poptorch"
    poptorch.inferenceModel(model).compileAndExport(path, x, export_model=False)
    pm = poptorch.inferenceModel(model)
    pm.loadExecutable(path)
    assert pm.isCompiled() and pm.executable.origin == "loaded"
    assert_matches(pm(x), model(x), atol=1e-6, rtol=1e-6)
    assert pm.compile_count == 0  # no tracing, no compiling
    with pytest.raises(ValueError, match="export_model=False"):
        poptorch.load(path)
    bad = tmp_path / "bad.poptorch"
    bad.write_bytes(b"garbage")
    with pytest.raises(ValueError, match="not a file written by compileAndExport"):
        poptorch.load(bad)
    with pytest.raises(ValueError, match="does not have"):
        poptorch.inferenceModel(torch.nn.Linear(3, 3).eval()).loadExecutable(path)
