"""Concurrency and lifetime: compiled models used from several threads, compiled
in a forked child, created and destroyed by the hundred, called ten thousand
times, and an interpreter that exits cleanly after all of it.

The process-wide checks (fork, memory, exit) run in a fresh interpreter each
(``run_script``) so that what the rest of the suite has loaded does not count.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from typing import Any

import pytest
import torch
from conftest import Fn
from lifetime_models import Keyword, mlp

import poptorch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cnn() -> torch.nn.Module:
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16),
                               torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                               torch.nn.Flatten()).eval()


def in_threads(n: int, work: Callable[[int], Any]) -> list[Any]:
    """Runs work(0..n-1) in n threads released together; re-raises the first error."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n
    failures: list[BaseException] = []

    def body(i: int) -> None:
        try:
            barrier.wait(timeout=60)
            results[i] = work(i)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            failures.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
        assert not t.is_alive(), "a thread did not finish in 300 s (deadlock?)"
    if failures:
        raise failures[0]
    return results


# --- threads ----------------------------------------------------------------


@pytest.mark.parametrize("path", ["fast", "checked"])
@pytest.mark.parametrize("batch", [4, 512])  # 512 rows: the program's loops run in parallel
def test_one_model_called_from_four_threads(path: str, batch: int) -> None:
    inner = mlp().eval()
    model = Keyword(inner) if path == "checked" else inner
    compiled = poptorch.inferenceModel(model)
    inputs = [[torch.randn(batch, 64) for _ in range(12)] for _ in range(4)]
    with torch.no_grad():
        expected = [[model(x=x) if path == "checked" else model(x) for x in xs] for xs in inputs]
    call = (lambda x: compiled(x=x)) if path == "checked" else compiled
    call(inputs[0][0])  # compiled once, before the threads

    def work(i: int) -> list[Any]:
        return [call(x) for x in inputs[i]]

    got = in_threads(4, work)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-4)
    assert compiled.compile_count == 1


def test_data_dependent_shapes_from_two_threads() -> None:
    # nonzero runs as a host kernel whose result shape is a guard of each call:
    # one thread keeps the traced shape, the other changes it every call (a
    # failed guard, then the variant for its shape). Each call sees its own
    # guard, whichever thread runs beside it.
    compiled = poptorch.inferenceModel(Fn(lambda x: torch.nonzero(x > 0) * 2))
    def positives(k: int) -> torch.Tensor:
        return (torch.arange(24.0).reshape(4, 6) < k).float() - 0.5
    compiled(positives(6))
    counts = [[6] * 16, [3, 9, 6, 12, 0, 24, 1, 6] * 2]

    def work(i: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        return [(compiled(positives(k)), torch.nonzero(positives(k) > 0) * 2) for k in counts[i]]

    for pairs in in_threads(2, work):
        for got, expected in pairs:
            torch.testing.assert_close(got, expected)


def test_two_models_compile_concurrently() -> None:
    # Each thread traces and compiles its own model (one of them reads a value
    # while tracing, which compiles and runs a program mid-trace), three times.
    def reads_a_value(x: torch.Tensor) -> torch.Tensor:
        return x * 2 if x.sum() > 0 else x - 1

    cases = [(mlp(32).eval(), torch.randn(8, 32)), (cnn(), torch.randn(2, 3, 16, 16)),
             (Fn(reads_a_value), torch.ones(4, 5))]
    with torch.no_grad():
        expected = [m(x) for m, x in cases]
    for rnd in range(3):
        pair = [cases[rnd % 3], cases[(rnd + 1) % 3]]
        got = in_threads(2, lambda i, pair=pair: poptorch.inferenceModel(pair[i][0])(pair[i][1]))
        for i, g in enumerate(got):
            torch.testing.assert_close(g, expected[(rnd + i) % 3], rtol=1e-4, atol=1e-4)


def test_eager_ipu_ops_in_another_thread_are_not_traced() -> None:
    # A thread using ipu tensors eagerly while another thread traces: its ops are
    # not captured into the other thread's program, and both results are right.
    stop = threading.Event()
    eager_results: list[torch.Tensor] = []

    def eager_loop() -> None:
        while not stop.is_set():
            a = torch.arange(6.0).to("ipu")
            eager_results.append((a * 3 + 1).cpu())

    worker = threading.Thread(target=eager_loop)
    worker.start()
    try:
        for width in (16, 24, 40):
            model = mlp(width).eval()
            x = torch.randn(3, width)
            with torch.no_grad():
                expected = model(x)
            compiled = poptorch.inferenceModel(model)
            torch.testing.assert_close(compiled(x), expected, rtol=1e-4, atol=1e-4)
            assert "arange" not in compiled.executable.graph.mlir
    finally:
        stop.set()
        worker.join(timeout=60)
    assert eager_results
    for r in eager_results:
        torch.testing.assert_close(r, torch.arange(6.0) * 3 + 1)


# --- processes --------------------------------------------------------------


def run_script(body: str, timeout: float = 300) -> str:
    """Runs ``body`` in a fresh interpreter; it must exit 0 with nothing on stderr
    (no abort, no "terminate called", no leaked-resource warning). Returns stdout."""
    script = "import os, sys, gc, torch, poptorch\n" + COMMON + textwrap.dedent(body)
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "tests"))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=REPO)
    assert proc.returncode == 0 and not proc.stderr.strip(), (
        f"exit status {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc.stdout


COMMON = """
from lifetime_models import Keyword, mlp

def rss_mib():
    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

def check(model, x):
    with torch.no_grad():
        expected = model(x)
    got = poptorch.inferenceModel(model)(x)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
"""


def test_forked_child_compiles_and_runs() -> None:
    out = run_script("""
    parent_model = poptorch.inferenceModel(mlp(64).eval())
    x = torch.randn(512, 64)  # parallel loops: the parent's thread team exists
    with torch.no_grad():
        expected = parent_model.model(x)
    torch.testing.assert_close(parent_model(x), expected, rtol=1e-4, atol=1e-4)
    # The child's model and its eager result are made here: in a child, torch's own
    # parallel ops wait for the parent's OpenMP threads (unless it sets one thread).
    child_model, child_x = mlp(48).eval(), torch.randn(512, 48)
    with torch.no_grad():
        child_expected = child_model(child_x)
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            got = poptorch.inferenceModel(child_model)(child_x)  # a new compile in the child
            torch.testing.assert_close(got, child_expected, rtol=1e-4, atol=1e-4)
            torch.testing.assert_close(parent_model(x), expected, rtol=1e-4, atol=1e-4)
            status = 0
        finally:
            sys.stdout.flush()
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, status
    torch.testing.assert_close(parent_model(x), expected, rtol=1e-4, atol=1e-4)
    print("ok")
    """, timeout=240)
    assert out.strip() == "ok"


def test_compiling_and_destroying_models_returns_memory() -> None:
    # 200 models of different sizes (no two programs alike), each compiled, run
    # and dropped: the process grows by at most 10 % after the first 10.
    out = run_script("""
    for i in range(200):
        check(mlp(8 + i).eval(), torch.randn(2, 8 + i))
        if i == 9:
            first = rss_mib()
    last = rss_mib()
    print(f"{first:.1f} {last:.1f}")
    """, timeout=600)
    first, last = map(float, out.split())
    assert last <= 1.1 * first, f"RSS after 10 models {first:.1f} MiB, after 200 {last:.1f} MiB"


@pytest.mark.parametrize("path", ["fast", "checked"])
def test_many_calls_leave_memory_flat(path: str) -> None:
    out = run_script(f"""
    path = {path!r}
    inner = mlp(32).eval()
    model = poptorch.inferenceModel(inner if path == "fast" else Keyword(inner).eval())
    x = torch.randn(4, 32)
    call = model if path == "fast" else (lambda x: model(x=x))
    for _ in range(1000):
        call(x)
    warm = rss_mib()
    for _ in range(10000):
        call(x)
    print(f"{{warm:.2f}} {{rss_mib():.2f}}")
    """)
    warm, last = map(float, out.split())
    assert last <= 1.01 * warm, f"RSS after 1000 calls {warm:.2f} MiB, after 11000 {last:.2f} MiB"


def test_interpreter_exit_is_clean_with_live_models_and_threads() -> None:
    # Exits while models are alive, after a thread compiled a model, and while a
    # daemon thread is inside a compiled call: the program is released only once
    # the call has left it, and the thread never runs Python again. (The daemon
    # keeps its outputs: torch itself aborts the process when a daemon thread
    # frees a tensor while the interpreter exits.)
    run_script("""
    import threading
    kept = poptorch.inferenceModel(mlp(32).eval())
    kept(torch.randn(2, 32))
    t = threading.Thread(target=lambda: check(mlp(24).eval(), torch.randn(2, 24)))
    t.start()
    t.join()
    busy = poptorch.inferenceModel(mlp(256).eval())
    x = torch.randn(2048, 256)
    busy(x)
    calling = threading.Event()
    outputs = []

    def forever():
        while True:
            calling.set()
            outputs.append(busy(x))

    threading.Thread(target=forever, daemon=True).start()
    calling.wait()
    """, timeout=240)
