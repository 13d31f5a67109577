"""The crash-isolated worker processes (``multiprocessing`` spawn, reused across models):
``_worker_main`` makes a program and checks it in the worker; ``_Pool`` runs the requests of task
coroutines (a model, then its minimization) on its ``_Worker`` processes and turns a worker that
dies or stops answering into a ``crash`` or ``timeout`` result, replacing the worker.
"""

from __future__ import annotations

import collections
import itertools
import multiprocessing
import os
import re
import resource
import signal
import sys
import time
from collections.abc import Callable, Generator, Iterator
from multiprocessing.connection import Connection, wait
from typing import Any

from .builder import generate, realize
from .checks import _describe_error, run_program
from .spec import Program, Result

STARTUP_TIMEOUT_S = 180.0
# A worker whose peak RSS passes this is replaced: compiled programs and caches only grow.
WORKER_RSS_LIMIT_MB = 3072


def _worker_main(conn: Connection, settings: dict[str, Any], log_path: str) -> None:
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.environ.update(settings["env"])
    import faulthandler
    import gc
    import warnings

    # a fatal signal prints the Python stack into the log, whose tail becomes the crash's detail
    faulthandler.enable()
    warnings.simplefilter("ignore")
    import torch

    # jobs workers share the machine's cores: each computes and compiles on one thread
    torch.set_num_threads(1)
    import poptorch

    poptorch._C.check_meta_kernels(settings["check_meta"])
    conn.send(("ready",))
    done = 0
    while True:
        task = conn.recv()
        if task is None:
            return
        task_id, request = task
        # the log holds only this task's output, so that what a crash printed is all it has
        sys.stdout.flush()
        sys.stderr.flush()
        os.ftruncate(log_fd, 0)
        started = time.monotonic()
        conn.send(("phase", task_id, "generate"))
        try:
            program = generate(*request[1:]) if request[0] == "model" else realize(*request[1:])
        except Exception as err:
            conn.send(("result", task_id, "fuzzer_error", f"generator: {_describe_error(err)}", 0.0, 0))
            continue
        conn.send(("program", task_id, program))
        try:
            outcome, detail = run_program(program, lambda p, t=task_id: conn.send(("phase", t, p)))
        except Exception as err:
            outcome, detail = "fuzzer_error", f"check: {_describe_error(err)}"
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        conn.send(("result", task_id, outcome, detail, time.monotonic() - started, rss))
        done += 1
        if done % 50 == 0:
            gc.collect()  # compiled programs kept alive by reference cycles


def _signal_name(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


Request = tuple[Any, ...]
Task = Generator[Request, Result, None]


class _Worker:
    def __init__(self, ctx: Any, settings: dict[str, Any], log_path: str) -> None:
        self.log_path = log_path
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, settings, log_path), daemon=True)
        self.proc.start()
        child.close()
        self.ready = False
        self.task: Task | None = None
        self.task_id = -1
        self.program: Program | None = None
        self.phase = ""
        self.deadline: float | None = time.monotonic() + STARTUP_TIMEOUT_S

    def log_tail(self) -> str:
        """The line of the worker's output that says most about how it died."""
        try:
            with open(self.log_path, errors="replace") as f:
                lines = [line.strip() for line in f.read()[-20000:].splitlines() if line.strip()]
        except OSError:
            return ""
        pattern = re.compile(r"error|assert|fatal|abort|terminate|segmentation|signal", re.IGNORECASE)
        hits = [line for line in lines if pattern.search(line)]
        return (hits[0] if hits else lines[-1] if lines else "")[:240]

    def stop(self, kill: bool = False) -> int | None:
        if kill:
            self.proc.kill()
        else:
            try:
                self.conn.send(None)
            except OSError:
                pass
        self.proc.join(10)
        if self.proc.exitcode is None:
            self.proc.kill()
            self.proc.join()
        self.conn.close()
        return self.proc.exitcode


class _Pool:
    """Worker processes running the requests of task coroutines (a model, then its minimization)."""

    def __init__(self, jobs: int, settings: dict[str, Any], tmp: str, timeout_s: float) -> None:
        self.ctx = multiprocessing.get_context("spawn")
        self.settings, self.tmp, self.timeout_s = settings, tmp, timeout_s
        self.workers = [self._start(i) for i in range(jobs)]
        self.restarts = 0
        self._ids = itertools.count()

    def _start(self, i: int) -> _Worker:
        return _Worker(self.ctx, self.settings, os.path.join(self.tmp, f"worker{i}.log"))

    def close(self) -> None:
        for w in self.workers:
            w.stop()

    def run(self, tasks: Iterator[Task]) -> None:
        """Runs every task to its end; a task's requests run one at a time, on any worker."""
        waiting: collections.deque[tuple[Task, Request]] = collections.deque()
        more = True

        def advance(task: Task, value: Result | None) -> None:
            try:
                request = task.send(value) if value is not None else next(task)
            except StopIteration:
                return
            waiting.append((task, request))

        while True:
            for w in self.workers:
                if not w.ready or w.task is not None:
                    continue
                while not waiting and more:
                    task = next(tasks, None)
                    if task is None:
                        more = False
                    else:
                        advance(task, None)
                if not waiting:
                    break
                task, request = waiting.popleft()
                w.task, w.task_id, w.program, w.phase = task, next(self._ids), None, "sent"
                w.conn.send((w.task_id, request))
                w.deadline = time.monotonic() + self.timeout_s
            if not waiting and not more and all(w.task is None for w in self.workers):
                return
            deadlines = [w.deadline for w in self.workers if w.deadline is not None]
            wait_s = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            ready = wait([w.conn for w in self.workers], wait_s)
            for i, w in enumerate(list(self.workers)):
                if w.conn in ready:
                    self._receive(i, advance)
                elif w.deadline is not None and time.monotonic() > w.deadline:
                    self._replace(i, "timeout", advance)

    def _receive(self, i: int, advance: Callable[[Task, Result | None], None]) -> None:
        w = self.workers[i]
        try:
            while w.conn.poll():
                msg = w.conn.recv()
                if msg[0] == "ready":
                    w.ready, w.deadline = True, None
                elif msg[1] != w.task_id:
                    continue
                elif msg[0] == "phase":
                    w.phase = msg[2]
                elif msg[0] == "program":
                    w.program = msg[2]
                elif msg[0] == "result":
                    task, program = w.task, w.program
                    w.task, w.deadline = None, None
                    assert task is not None
                    advance(task, Result(msg[2], msg[3], program, msg[4]))
                    if msg[5] > WORKER_RSS_LIMIT_MB:
                        w.stop()
                        self.workers[i] = self._start(i)
                    return
        except (EOFError, OSError):
            self._replace(i, "crash", advance)

    def _replace(self, i: int, why: str, advance: Callable[[Task, Result | None], None]) -> None:
        w = self.workers[i]
        exitcode = w.stop(kill=why == "timeout")
        if not w.ready:
            raise RuntimeError(f"fuzz worker failed to start ({_signal_name(exitcode)}): {w.log_tail()}")
        self.restarts += 1
        self.workers[i] = self._start(i)
        if w.task is None:
            return
        if why == "timeout":
            result = Result("timeout", f"no result after {self.timeout_s:.0f} s ({w.phase})", w.program,
                            self.timeout_s)
        elif w.phase in ("generate", "eager"):
            # eager PyTorch (or the generator) died, not poptorch
            result = Result("eager_error" if w.phase == "eager" else "fuzzer_error",
                            f"{_signal_name(exitcode)} in {w.phase}: {w.log_tail()}", w.program)
        else:
            result = Result("crash", f"{_signal_name(exitcode)} ({w.phase}): {w.log_tail()}", w.program)
        advance(w.task, result)
