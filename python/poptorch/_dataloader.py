"""poptorch.DataLoader and AsynchronousDataAccessor.

PopTorch's DataLoader hands out *combined* batches: ``batch_size`` samples per
micro-batch times ``deviceIterations x replicationFactor`` micro-batches, which
is exactly one call of a model compiled with the same options (see
``_batching``). ``Training.gradientAccumulation`` is not applied: inference
models do not accumulate (the option is reported as not applicable).

With ``inputReplicaGrouping`` a combined batch holds ``deviceIterations x
replicationFactor / input_group_size`` micro-batches. With several processes
(``Options.Distributed``) and ``auto_distributed_partitioning`` (the default),
process ``p`` of ``n`` reads the samples ``p, p + n, p + 2n, ...`` of a map-style
dataset, the same number in every process (the last ``len % n`` samples are
left out); an iterable dataset must partition itself.

``AsynchronousDataAccessor`` loads the next batches on a background thread
while the model runs; ``DataLoaderMode.Async`` and ``AsyncRebatched`` wrap the
loader in one when it is iterated.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import torch

from ._batching import Batching
from .enums import DataLoaderMode
from .errors import ArgumentError, ArgumentTypeError
from .options import Options


class DataLoader(torch.utils.data.DataLoader):
    """``poptorch.DataLoader(options, dataset, batch_size=1, ...)`` as in PopTorch."""

    def __init__(self, options: Options, dataset: torch.utils.data.Dataset, batch_size: int = 1,
                 shuffle: bool = False, num_workers: int = 0, drop_last: bool = True,
                 persistent_workers: bool | None = None, auto_distributed_partitioning: bool = True,
                 mode: DataLoaderMode = DataLoaderMode.Sync, async_options: dict | None = None,
                 rebatched_worker_size: int | None = None, **kwargs: Any) -> None:
        if not isinstance(options, Options):
            raise ArgumentTypeError("poptorch.DataLoader expects poptorch.Options as its first argument, "
                            f"got {type(options).__name__}")
        if not isinstance(mode, DataLoaderMode):
            raise ArgumentTypeError(
                f"poptorch.DataLoader: mode expects a poptorch.DataLoaderMode, got {mode!r}")
        if batch_size is None or batch_size < 1:
            raise ArgumentError(f"poptorch.DataLoader: batch_size must be an int >= 1, got {batch_size}")
        self._options = options
        self._mode = mode
        self._async_options = dict(async_options or {})
        self.batch_size_per_micro_batch = batch_size
        self.combined_batch_size = batch_size * Batching.from_options(options).factor
        if persistent_workers is None:
            persistent_workers = num_workers > 0
        del rebatched_worker_size  # workers hand out whole combined batches
        processes = options.Distributed.numProcesses
        if auto_distributed_partitioning and processes > 1 \
                and not isinstance(dataset, torch.utils.data.IterableDataset):
            pid = options.Distributed.processId
            share = len(dataset) // processes
            dataset = torch.utils.data.Subset(dataset, range(pid, share * processes, processes))
        super().__init__(dataset, batch_size=self.combined_batch_size, shuffle=shuffle,
                         num_workers=num_workers, drop_last=drop_last,
                         persistent_workers=persistent_workers, **kwargs)

    @property
    def options(self) -> Options:
        return self._options

    def __iter__(self) -> Iterator[Any]:
        if self._mode == DataLoaderMode.Sync:
            return super().__iter__()
        return iter(AsynchronousDataAccessor(_SyncView(self), **self._async_options))

    def terminate(self) -> None:
        """PopTorch API: nothing runs in the background between iterations."""


class _SyncView:
    """The DataLoader iterated synchronously (what the accessor's thread reads)."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader

    def __iter__(self) -> Iterator[Any]:
        return torch.utils.data.DataLoader.__iter__(self._loader)

    def __len__(self) -> int:
        return len(self._loader)


_END = object()


class AsynchronousDataAccessor:
    """Iterates ``dataset`` (a DataLoader or any iterable) on a background thread,
    keeping up to ``buffer_size`` batches ready."""

    def __init__(self, dataset: Any, buffer_size: int = 3, miss_sleep_time_in_ms: float = 0.1,
                 load_indefinitely: bool = True, early_preload: bool = False,
                 sharing_strategy: Any = None, rebatched_size: int | None = None) -> None:
        del miss_sleep_time_in_ms, sharing_strategy, rebatched_size  # thread-based: no polling
        if buffer_size < 1:
            raise ArgumentError(f"poptorch.AsynchronousDataAccessor: buffer_size must be >= 1, "
                             f"got {buffer_size}")
        self._dataset = dataset
        self._buffer_size = buffer_size
        self._load_indefinitely = load_indefinitely
        self._queue: queue.Queue | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        if early_preload:
            self._start()

    def __len__(self) -> int:
        return len(self._dataset)

    def _start(self) -> None:
        self._stop = threading.Event()  # one per epoch's thread
        self._queue = queue.Queue(maxsize=self._buffer_size)
        self._thread = threading.Thread(target=self._worker, args=(self._queue, self._stop),
                                        daemon=True)
        self._thread.start()

    def _worker(self, q: queue.Queue, stop: threading.Event) -> None:
        def put(item: Any) -> bool:
            while not stop.is_set():
                try:
                    q.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    continue
            return False

        try:
            for item in self._dataset:
                if not put(item):
                    return
            put(_END)
        except BaseException as e:  # noqa: BLE001 - handed to the consumer
            put(e)

    def __iter__(self) -> Iterator[Any]:
        if self._thread is None:
            self._start()
        assert self._queue is not None
        q = self._queue
        try:
            while True:
                item = q.get()
                if item is _END:
                    break
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self.terminate()  # an epoch left early leaves its thread behind otherwise
            if self._load_indefinitely:
                self._start()  # preload the next epoch while the model finishes this one
            else:
                self._queue = None

    def terminate(self) -> None:
        """Stops the background thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._thread = None

    def __del__(self) -> None:
        self._stop.set()
